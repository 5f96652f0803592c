/*
 * tas.c - test-and-set spin lock, the first lock of the paper's section 3.1.
 *
 * Design.  The whole state is one AO_TS_t byte at the start of a LOCK_ALIGN block
 * that nothing else shares.  lock() repeats an atomic test-and-set until it finds
 * the byte clear, backing off after each failure (spin.h) and, once spinning has
 * clearly failed, yielding the processor to a holder that may be descheduled.
 * Every attempt is a read-modify-write, so waiters keep the line moving between
 * caches while the lock is held (ttas.c reads instead).  No fairness: a waiter
 * can starve.
 *
 * Memory ordering.  The test-and-set that finds the byte clear (lock, trylock) is
 * an acquire; it pairs with the release in AO_CLEAR of the previous holder's
 * unlock, so each critical section happens before the next.  locked() is a
 * relaxed snapshot and orders nothing.
 */
#include <atomic_ops.h>
#include <string.h>

#include "spin.h"
#include "tas.h"

#if !defined(AO_HAVE_test_and_set_acquire) || !defined(AO_HAVE_CLEAR)
#error "tas lock needs AO_test_and_set_acquire and AO_CLEAR"
#endif
#ifndef AO_HAVE_char_load
#error "tas lock needs AO_char_load to read the test-and-set byte"
#endif

struct tas_lock {
    _Alignas(LOCK_ALIGN) AO_TS_t flag; /* AO_TS_CLEAR when free */
};

_Static_assert(sizeof(struct tas_lock) == LOCK_ALIGN, "tas lock owns one block");
_Static_assert(sizeof(AO_TS_t) == sizeof(unsigned char),
               "locked() reads the test-and-set byte with AO_char_load");

size_t tas_lock_size(unsigned max_procs)
{
    return sizeof(struct tas_lock);
}

/* By one process, before any other uses the lock.  Always returns 0. */
int tas_lock_init(void *l, unsigned max_procs)
{
    struct tas_lock *t = l;

    memset(t, 0, sizeof(*t));
    t->flag = AO_TS_INITIALIZER;
    return 0;
}

/* Any process; returns holding the lock, with acquire ordering. */
void tas_lock_lock(void *l, struct lock_ctx *c)
{
    struct tas_lock *t = l;
    struct spin s = SPIN_INIT;

    while (AO_test_and_set_acquire(&t->flag) != AO_TS_CLEAR)
        spin_wait(&s);
}

/* Any process; one attempt.  Returns 1 holding the lock (acquire), 0 if busy. */
int tas_lock_trylock(void *l, struct lock_ctx *c)
{
    struct tas_lock *t = l;

    return AO_test_and_set_acquire(&t->flag) == AO_TS_CLEAR;
}

/* By the holder only; release ordering. */
void tas_lock_unlock(void *l, struct lock_ctx *c)
{
    struct tas_lock *t = l;

    AO_CLEAR(&t->flag);
}

/* Any process; a relaxed snapshot: 1 if some process held the lock just now. */
int tas_lock_locked(void *l)
{
    struct tas_lock *t = l;

    return AO_char_load((const volatile unsigned char *)&t->flag) != AO_TS_CLEAR;
}

const struct lock_ops tas_lock_ops = {
    .name = "tas",
    .size = tas_lock_size,
    .init = tas_lock_init,
    .lock = tas_lock_lock,
    .trylock = tas_lock_trylock,
    .unlock = tas_lock_unlock,
    .locked = tas_lock_locked,
};
