/*
 * tas.c - test-and-set spin lock, the first lock of the paper's section 3.1.
 *
 * Design.  The whole state is one AO_t word at the start of a AM_LOCK_ALIGN block
 * that nothing else shares: 0 when free, else the holder's id plus one.  lock()
 * repeats a compare-and-swap of 0 to its own id plus one until it succeeds,
 * backing off after each failure (spin.h) and, once spinning has clearly failed,
 * yielding the processor to a holder that may be descheduled.  Every attempt is a
 * read-modify-write, so waiters keep the line moving between caches while the
 * lock is held (ttas.c reads instead).  No fairness: a waiter can starve.
 *
 * Dead holders.  Invariant: a nonzero word names the process that holds the lock
 * (only the holder writes 0, only a waiter that found the word 0, or found its
 * holder dead, writes its own id).  A yielding waiter with a watch reads the
 * holder h and, if the watch calls participant h - 1 dead, replaces h by its own
 * id with one compare-and-swap: of several waiters that find the same dead holder
 * exactly one wins, and a lock that changed hands meanwhile is left alone.  The
 * watch never calls a live process dead, so a slow or stopped holder keeps the
 * lock.
 *
 * Memory ordering.  The compare-and-swap that takes a free lock (lock, trylock)
 * is an acquire; it pairs with the AO_store_release of 0 in the previous holder's
 * unlock, so each critical section happens before the next.  A take-over's
 * compare-and-swap is an acquire too: the dead holder's own compare-and-swap
 * continued the release sequence of the unlock before it, so the take-over sees
 * every critical section up to the dead one's, and nothing the dead holder wrote
 * (it never released).  locked() is a relaxed snapshot and orders nothing.
 */
#include <atomic_ops.h>
#include <string.h>

#include "lock.h"
#include "word.h"

#define TEST_FIRST 0 /* the compare-and-swap at once */

static size_t tas_lock_size(unsigned max_procs)
{
    return sizeof(struct word_lock);
}

/* By one process, before any other uses the lock.  Always returns 0. */
static int tas_lock_init(void *l, unsigned max_procs)
{
    memset(l, 0, sizeof(struct word_lock));
    return 0;
}

/* Any process.  Returns 0 holding the lock (acquire), having taken it over from
 * a dead holder if need be, or AM_LOCK_GAVE_UP without it if the watch said so. */
static int tas_lock_lock(void *l, struct am_lock_ctx *c)
{
    return word_lock(l, c, TEST_FIRST);
}

/* Any process; one attempt, never a take-over.  Returns 1 holding the lock
 * (acquire), 0 if busy. */
static int tas_lock_trylock(void *l, struct am_lock_ctx *c)
{
    return word_try(l, c, TEST_FIRST);
}

/* By the holder only; release ordering. */
static void tas_lock_unlock(void *l, struct am_lock_ctx *c)
{
    word_unlock(l);
}

/* Any process; a relaxed snapshot: 1 if some process held the lock just now. */
static int tas_lock_locked(void *l)
{
    struct word_lock *t = l;

    return AO_load(&t->word) != 0;
}

const struct am_lock_ops am_lock_tas = {
    .name = "tas",
    .size = tas_lock_size,
    .init = tas_lock_init,
    .lock = tas_lock_lock,
    .trylock = tas_lock_trylock,
    .unlock = tas_lock_unlock,
    .locked = tas_lock_locked,
};
