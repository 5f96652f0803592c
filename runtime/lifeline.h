/*
 * lifeline.h - a word in shared memory that says, with a plain load, whether the
 * thread holding it is still alive; the kernel, not a guess, decides.
 *
 * A lifeline is a process-shared robust pthread mutex that its holder locks once
 * and keeps locked for as long as it lives (for an endpoint owner: until
 * am_ep_destroy; for a registered sender: until it leaves the table).  glibc puts
 * a held robust mutex on the thread's robust list; when the thread dies, however
 * it dies (SIGKILL, exit, exec), the kernel walks that list and sets
 * FUTEX_OWNER_DIED in the futex word.  A peer reads the word with one plain load:
 * the holder's thread id means alive, FUTEX_OWNER_DIED or no id means gone.  A
 * reused pid cannot fool it, and a stopped or slow holder stays alive.
 *
 * The thread that holds a lifeline must be the one that releases it: an endpoint
 * (and the peers it maps) belongs to the thread that created it, and looks dead
 * to its peers once that thread has exited.
 */
#ifndef SHMAM_LIFELINE_H
#define SHMAM_LIFELINE_H

#include <atomic_ops.h>
#include <linux/futex.h>
#include <pthread.h>

struct am_lifeline {
    pthread_mutex_t m;
};

_Static_assert(sizeof(struct am_lifeline) <= 48, "a lifeline and a word fit a line");

/* Make a fresh lifeline, held by nobody.  By one process, before it is shared.
 * 0 or -errno. */
int am__lifeline_init(struct am_lifeline *l);

/* Take a lifeline nobody alive holds, for this thread's life: 0, or -EBUSY if a
 * live thread holds it.  Takes over one whose holder died.  Any process may try
 * concurrently; exactly one wins. */
int am__lifeline_take(struct am_lifeline *l);

/* Let go of a lifeline this thread holds (a graceful departure). */
void am__lifeline_release(struct am_lifeline *l);

/* 1 if nobody alive holds it (its holder died or let go), 0 if somebody does.
 * One plain load of the futex word (the first int of a glibc mutex, lifeline.c
 * checks): the holder's thread id, with FUTEX_OWNER_DIED set by the kernel
 * when the holder died; 0 when free.  Any process, any time.  Final for a dead
 * holder.  Inline: senders ask on every send and every backoff round. */
static inline int am__lifeline_gone(const struct am_lifeline *l)
{
    unsigned w = (unsigned)AO_int_load((const volatile unsigned *)(const void *)&l->m);
    return (w & FUTEX_OWNER_DIED) != 0 || (w & FUTEX_TID_MASK) == 0;
}

#endif
