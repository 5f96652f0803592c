/*
 * ttas.c - test-and-test-and-set spin lock, the second lock of the paper's
 * section 3.1.
 *
 * Design.  The same single AO_t word as tas.c, alone in a LOCK_ALIGN block: 0
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

#include "spin.h"
#include "ttas.h"
#include "watch.h"

#if !defined(AO_HAVE_compare_and_swap_acquire) || !defined(AO_HAVE_store_release)
#error "ttas lock needs AO_compare_and_swap_acquire and AO_store_release"
#endif

struct ttas_lock {
    _Alignas(LOCK_ALIGN) AO_t word; /* 0 free, else the holder's id + 1 */
};

_Static_assert(sizeof(struct ttas_lock) == LOCK_ALIGN, "ttas lock owns one block");

/* The word that names participant `self` as the holder. */
static AO_t holder_word(const struct lock_ctx *c)
{
    return (AO_t)c->self + 1;
}

/* One attempt: the test, then the compare-and-swap.  1 holding the lock. */
static int try_once(struct ttas_lock *t, const struct lock_ctx *c)
{
    if (AO_load(&t->word) != 0)
        return 0;
    return AO_compare_and_swap_acquire(&t->word, 0, holder_word(c));
}

/* By a waiter with a watch: if the holder is dead, takes the lock from it.
 * Returns 1 holding the lock (acquire), 0 if the holder lives or the lock moved. */
static int take_over(struct ttas_lock *t, const struct lock_ctx *c)
{
    AO_t h = AO_load(&t->word);

    if (h == 0 || !watch_dead(c, (unsigned)(h - 1)))
        return 0;
    return AO_compare_and_swap_acquire(&t->word, h, holder_word(c));
}

size_t ttas_lock_size(unsigned max_procs)
{
    return sizeof(struct ttas_lock);
}

/* By one process, before any other uses the lock.  Always returns 0. */
int ttas_lock_init(void *l, unsigned max_procs)
{
    memset(l, 0, sizeof(struct ttas_lock));
    return 0;
}

/* Any process.  Returns 0 holding the lock (acquire), having taken it over from
 * a dead holder if need be, or LOCK_GAVE_UP without it if the watch said so. */
int ttas_lock_lock(void *l, struct lock_ctx *c)
{
    struct ttas_lock *t = l;
    struct spin s = SPIN_INIT;
    unsigned yields = 0;

    while (!try_once(t, c)) {
        if (!watch_due(c, spin_wait(&s), &yields))
            continue;
        if (take_over(t, c))
            return 0;
        if (watch_give_up(c))
            return LOCK_GAVE_UP;
    }
    return 0;
}

/* Any process; one attempt, never a take-over.  Returns 1 holding the lock
 * (acquire), 0 if busy.  The test step keeps a busy lock's line shared. */
int ttas_lock_trylock(void *l, struct lock_ctx *c)
{
    return try_once(l, c);
}

/* By the holder only; release ordering. */
void ttas_lock_unlock(void *l, struct lock_ctx *c)
{
    struct ttas_lock *t = l;

    AO_store_release(&t->word, 0);
}

/* Any process; a relaxed snapshot: 1 if some process held the lock just now. */
int ttas_lock_locked(void *l)
{
    struct ttas_lock *t = l;

    return AO_load(&t->word) != 0;
}

const struct lock_ops ttas_lock_ops = {
    .name = "ttas",
    .size = ttas_lock_size,
    .init = ttas_lock_init,
    .lock = ttas_lock_lock,
    .trylock = ttas_lock_trylock,
    .unlock = ttas_lock_unlock,
    .locked = ttas_lock_locked,
};
