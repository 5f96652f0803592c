/*
 * watch.h - when and how a waiting lock consults its caller's lock_watch
 * (lock.h), shared by the spin locks.
 *
 * A waiter asks its questions only after spinning has failed: every
 * AM_LOCK_WATCH_EVERY rounds in which spin_wait() yielded the processor.  So an
 * acquisition that gets the lock while still spinning never calls the watch, and
 * one that waits long asks about once per AM_LOCK_WATCH_EVERY scheduler slices.  A
 * missing watch, or a missing function in it, answers "alive" and "keep waiting".
 */
#ifndef SHMAM_WATCH_H
#define SHMAM_WATCH_H

#include "lock.h"

/* After one spin_wait() that returned `yielded`: 1 if the waiter with ctx c
 * should consult its watch now.  *yields counts the yielding rounds so far. */
static inline int watch_due(const struct am_lock_ctx *c, int yielded, unsigned *yields)
{
    if (!c->watch || !yielded)
        return 0;
    return ++*yields % AM_LOCK_WATCH_EVERY == 0;
}

/* 1 if the watch says participant `who` has died (final: it stays dead). */
static inline int watch_dead(const struct am_lock_ctx *c, unsigned who)
{
    const struct am_lock_watch *w = c->watch;

    return w && w->dead && w->dead(w->arg, who);
}

/* 1 if the watch asks the waiter to stop waiting. */
static inline int watch_give_up(const struct am_lock_ctx *c)
{
    const struct am_lock_watch *w = c->watch;

    return w && w->give_up && w->give_up(w->arg);
}

#endif
