/*
 * watch.h - how a waiting lock asks its caller's lock_watch (lock.h) its
 * questions, shared by the spin locks; when it asks is wait.h's.  A missing
 * watch, or a missing function in it, answers "alive" and "keep waiting".
 */
#ifndef SHMAM_WATCH_H
#define SHMAM_WATCH_H

#include "lock.h"

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
