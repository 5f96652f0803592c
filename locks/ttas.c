/*
 * ttas.c - test-and-test-and-set spin lock, the second lock of the paper's
 * section 3.1.
 *
 * Design.  The same single AO_TS_t byte as tas.c, alone in a LOCK_ALIGN block.
 * A waiter first reads the byte until it looks clear (the line stays shared in
 * every waiter's cache, so a held lock costs no coherence traffic) and only then
 * tries the test-and-set.  Losing that race, or seeing the lock held, backs off
 * (spin.h) and in the end yields the processor.  When the lock is released every
 * reader misses at once and they race for the test-and-set; no fairness.
 *
 * Memory ordering.  The test-and-set that finds the byte clear (lock, trylock) is
 * an acquire; it pairs with the release in AO_CLEAR of the previous holder's
 * unlock.  The reads in the waiting loop are relaxed: they only decide when to
 * try, and order nothing.  locked() is such a relaxed read.
 */
#include <atomic_ops.h>
#include <string.h>

#include "spin.h"
#include "ttas.h"

#if !defined(AO_HAVE_test_and_set_acquire) || !defined(AO_HAVE_CLEAR)
#error "ttas lock needs AO_test_and_set_acquire and AO_CLEAR"
#endif
#ifndef AO_HAVE_char_load
#error "ttas lock needs AO_char_load to read the test-and-set byte"
#endif

struct ttas_lock {
    _Alignas(LOCK_ALIGN) AO_TS_t flag; /* AO_TS_CLEAR when free */
};

_Static_assert(sizeof(struct ttas_lock) == LOCK_ALIGN, "ttas lock owns one block");
_Static_assert(sizeof(AO_TS_t) == sizeof(unsigned char),
               "the test step reads the test-and-set byte with AO_char_load");

/* Relaxed read of the lock byte: 1 if it looks held. */
static int looks_held(struct ttas_lock *t)
{
    return AO_char_load((const volatile unsigned char *)&t->flag) != AO_TS_CLEAR;
}

size_t ttas_lock_size(unsigned max_procs)
{
    return sizeof(struct ttas_lock);
}

/* By one process, before any other uses the lock.  Always returns 0. */
int ttas_lock_init(void *l, unsigned max_procs)
{
    struct ttas_lock *t = l;

    memset(t, 0, sizeof(*t));
    t->flag = AO_TS_INITIALIZER;
    return 0;
}

/* Any process; returns holding the lock, with acquire ordering. */
void ttas_lock_lock(void *l, struct lock_ctx *c)
{
    struct ttas_lock *t = l;
    struct spin s = SPIN_INIT;

    for (;;) {
        while (looks_held(t))
            spin_wait(&s);
        if (AO_test_and_set_acquire(&t->flag) == AO_TS_CLEAR)
            return;
        spin_wait(&s);
    }
}

/* Any process; one attempt.  Returns 1 holding the lock (acquire), 0 if busy.
 * The test step keeps a busy lock's line shared. */
int ttas_lock_trylock(void *l, struct lock_ctx *c)
{
    struct ttas_lock *t = l;

    if (looks_held(t))
        return 0;
    return AO_test_and_set_acquire(&t->flag) == AO_TS_CLEAR;
}

/* By the holder only; release ordering. */
void ttas_lock_unlock(void *l, struct lock_ctx *c)
{
    struct ttas_lock *t = l;

    AO_CLEAR(&t->flag);
}

/* Any process; a relaxed snapshot: 1 if some process held the lock just now. */
int ttas_lock_locked(void *l)
{
    return looks_held(l);
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
