/*
 * ttas.c - test-and-test-and-set spin lock, the second lock of the paper's
 * section 3.1.
 *
 * Design.  The same single AO_t word as tas.c, alone in a AM_LOCK_ALIGN block: 0
 * when free, else the holder's id plus one.  A waiter first reads the word until
 * it looks free (the line stays shared in every waiter's cache, so a held lock
 * costs no coherence traffic) and only then tries the compare-and-swap of 0 to
 * its own id plus one.  Losing that race, or seeing the lock held, backs off
 * (spin.h) and in the end yields the processor.  When the lock is released every
 * reader misses at once and they race for the compare-and-swap; no fairness.
 *
 * Dead holders.  Invariant: a nonzero word names the process that holds the lock.
 * A yielding waiter with a watch that reads holder h and hears from the watch
 * that participant h - 1 is dead replaces h by its own id with one
 * compare-and-swap, so exactly one of the waiters that saw the same dead holder
 * takes the lock over, and a lock that changed hands meanwhile is left alone.
 * A slow or stopped holder is never called dead, so it keeps the lock.
 *
 * Memory ordering.  The compare-and-swap that takes a free lock (lock, trylock)
 * is an acquire; it pairs with the AO_store_release of 0 in the previous holder's
 * unlock.  A take-over's compare-and-swap is an acquire as well: the dead
 * holder's compare-and-swap continued the release sequence of the unlock before
 * it, so the critical sections up to the dead one's are ordered before the new
 * holder's, and nothing the dead holder wrote is (it never released).  The
 * reads in the waiting loop are relaxed: they only decide when to try, and order
 * nothing.  locked() is such a relaxed read.
 */
#include <atomic_ops.h>
#include <string.h>

#include "lock.h"
#include "word.h"

#define TEST_FIRST 1 /* read before the compare-and-swap */

static size_t ttas_lock_size(unsigned max_procs)
{
    return sizeof(struct word_lock);
}

/* By one process, before any other uses the lock.  Always returns 0. */
static int ttas_lock_init(void *l, unsigned max_procs)
{
    memset(l, 0, sizeof(struct word_lock));
    return 0;
}

/* Any process.  Returns 0 holding the lock (acquire), having taken it over from
 * a dead holder if need be, or AM_LOCK_GAVE_UP without it if the watch said so. */
static int ttas_lock_lock(void *l, struct am_lock_ctx *c)
{
    return word_lock(l, c, TEST_FIRST);
}

/* Any process; one attempt, never a take-over.  Returns 1 holding the lock
 * (acquire), 0 if busy. */
static int ttas_lock_trylock(void *l, struct am_lock_ctx *c)
{
    return word_try(l, c, TEST_FIRST);
}

/* By the holder only; release ordering. */
static void ttas_lock_unlock(void *l, struct am_lock_ctx *c)
{
    word_unlock(l);
}

/* Any process; a relaxed snapshot: 1 if some process held the lock just now. */
static int ttas_lock_locked(void *l)
{
    struct word_lock *t = l;

    return AO_load(&t->word) != 0;
}

const struct am_lock_ops am_lock_ttas = {
    .name = "ttas",
    .size = ttas_lock_size,
    .init = ttas_lock_init,
    .lock = ttas_lock_lock,
    .trylock = ttas_lock_trylock,
    .unlock = ttas_lock_unlock,
    .locked = ttas_lock_locked,
};
