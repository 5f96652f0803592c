/*
 * word.h - the holder word shared by the test-and-set locks (tas.c, ttas.c):
 * one AO_t alone in a AM_LOCK_ALIGN block, 0 when free, else the holder's id + 1.
 * The two locks differ only in how one attempt is made (tas: the
 * compare-and-swap at once; ttas: a read first, so a held lock's line stays
 * shared); the waiting, the take-over of a dead holder, unlock and locked() are
 * the same and live here once.  Design and memory ordering: tas.c and ttas.c.
 */
#ifndef SHMAM_WORD_H
#define SHMAM_WORD_H

#include <atomic_ops.h>

#include "lock.h"
#include "wait.h"
#include "watch.h"

#if !defined(AO_HAVE_compare_and_swap_acquire) || !defined(AO_HAVE_store_release)
#error "the word locks need AO_compare_and_swap_acquire and AO_store_release"
#endif

struct word_lock {
    _Alignas(AM_LOCK_ALIGN) AO_t word; /* 0 free, else the holder's id + 1 */
};

_Static_assert(sizeof(struct word_lock) == AM_LOCK_ALIGN, "a word lock owns one block");

/* The word that names participant `self` as the holder. */
static inline AO_t word_holder(const struct am_lock_ctx *c)
{
    return (AO_t)c->self + 1;
}

/* One attempt to take a free lock (acquire); with test_first, only if a read
 * finds it free.  1 holding the lock. */
static inline int word_try(struct word_lock *t, const struct am_lock_ctx *c, int test_first)
{
    if (test_first && AO_load(&t->word) != 0)
        return 0;
    return AO_compare_and_swap_acquire(&t->word, 0, word_holder(c));
}

/* By a waiter with a watch: if the holder is dead, takes the lock from it.  A
 * word that names the waiter itself is garbage a peer wrote (a waiter holds
 * nothing): taken over too.  Returns 1 holding the lock (acquire), 0 if the
 * holder lives or the lock moved. */
static inline int word_take_over(struct word_lock *t, const struct am_lock_ctx *c)
{
    AO_t h = AO_load(&t->word);

    if (h == 0 || (h != word_holder(c) && !watch_dead(c, (unsigned)(h - 1))))
        return 0;
    return AO_compare_and_swap_acquire(&t->word, h, word_holder(c));
}

/* Waits for the lock: 0 holding it (acquire), having taken it over from a dead
 * holder if need be, or AM_LOCK_GAVE_UP without it if the watch said so. */
static inline int word_lock(struct word_lock *t, struct am_lock_ctx *c, int test_first)
{
    struct wait w = wait_start(c);

    while (!word_try(t, c, test_first)) {
        if (!wait_round(&w, c))
            continue;
        if (word_take_over(t, c))
            return 0;
        if (watch_give_up(c))
            return AM_LOCK_GAVE_UP;
    }
    return 0;
}

/* By the holder only; release ordering. */
static inline void word_unlock(struct word_lock *t)
{
    AO_store_release(&t->word, 0);
}

#endif
