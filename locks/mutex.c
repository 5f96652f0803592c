/*
 * mutex.c - process-shared, robust POSIX mutex, the fifth lock of the paper's
 * section 3.1, behind the same verbs as the spin locks.
 *
 * Design.  A pthread_mutex_t initialised PTHREAD_PROCESS_SHARED (it works in a
 * segment mapped at different addresses: glibc keeps no address of the mutex in
 * the mutex for other processes to follow) and PTHREAD_MUTEX_ROBUST: a waiter
 * sleeps in the kernel (futex) instead of spinning, and when a holder dies the
 * kernel hands the lock on with EOWNERDEAD.  We then call
 * pthread_mutex_consistent() and carry on as the holder: the lock knows nothing
 * of what it guards, and the next holder must treat the guarded state as
 * possibly half written (lock.h).  The kernel records the holder itself, so the
 * watch's dead() is never asked; ctx->self is unused.
 *
 * Giving up.  Without a watch, lock() sleeps in pthread_mutex_lock() until it
 * holds the lock.  With one it sleeps in pthread_mutex_timedlock() for at most
 * WATCH_NS at a time and asks give_up() between the tries, so a waiter told to
 * stop returns within about WATCH_NS.  Errors other than EBUSY, ETIMEDOUT and
 * EOWNERDEAD can only come from misuse (unlocking a lock one does not hold, an
 * uninitialised lock) and abort with the file and line.
 *
 * Memory ordering.  pthread_mutex_lock/timedlock/trylock acquire and
 * pthread_mutex_unlock releases (POSIX 4.12, memory synchronization); the
 * kernel's hand-over after a holder died orders nothing the dead holder wrote.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mutex.h"
#include "watch.h"

/* Longest sleep of a waiter with a watch between two give_up() questions. */
#define WATCH_NS 10000000L

struct mutex_lock {
    _Alignas(LOCK_ALIGN) pthread_mutex_t m;
};

_Static_assert(sizeof(struct mutex_lock) % LOCK_ALIGN == 0, "mutex owns whole blocks");

/* Misuse of a mutex is a programming error: report where and stop. */
static void die(const char *what, int err, int line)
{
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, what, strerror(err));
    abort();
}

/* After `r` from lock, timedlock or trylock: 1 if now held (taking over a dead
 * holder's lock), 0 if busy or timed out. */
static int took(struct mutex_lock *x, int r, int line)
{
    if (r == EOWNERDEAD) {
        r = pthread_mutex_consistent(&x->m);
        if (r != 0)
            die("pthread_mutex_consistent", r, line);
        return 1;
    }
    if (r == EBUSY || r == ETIMEDOUT)
        return 0;
    if (r != 0)
        die("pthread_mutex_lock", r, line);
    return 1;
}

size_t mutex_lock_size(unsigned max_procs)
{
    return sizeof(struct mutex_lock);
}

int mutex_robust_init(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    int r = pthread_mutexattr_init(&a);

    memset(m, 0, sizeof(*m));
    if (r == 0)
        r = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (r == 0)
        r = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (r == 0)
        r = pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
    return -r;
}

/* By one process, before any other uses the lock.  0 or -errno. */
int mutex_lock_init(void *l, unsigned max_procs)
{
    struct mutex_lock *x = l;

    memset(x, 0, sizeof(*x));
    return mutex_robust_init(&x->m);
}

/* CLOCK_REALTIME (timedlock's clock) WATCH_NS from now. */
static struct timespec soon(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += WATCH_NS;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Any process.  Returns 0 holding the lock (acquire), having taken it over from
 * a holder that died if need be, or LOCK_GAVE_UP without it if the watch said
 * so. */
int mutex_lock_lock(void *l, struct lock_ctx *c)
{
    struct mutex_lock *x = l;
    struct timespec until;

    if (!c->watch) {
        took(x, pthread_mutex_lock(&x->m), __LINE__);
        return 0;
    }
    for (;;) {
        until = soon();
        if (took(x, pthread_mutex_timedlock(&x->m, &until), __LINE__))
            return 0;
        if (watch_give_up(c))
            return LOCK_GAVE_UP;
    }
}

/* Any process; one attempt.  Returns 1 holding the lock (acquire), 0 if busy. */
int mutex_lock_trylock(void *l, struct lock_ctx *c)
{
    struct mutex_lock *x = l;

    return took(x, pthread_mutex_trylock(&x->m), __LINE__);
}

/* By the holder only; release ordering. */
void mutex_lock_unlock(void *l, struct lock_ctx *c)
{
    struct mutex_lock *x = l;
    int r = pthread_mutex_unlock(&x->m);

    if (r != 0)
        die("pthread_mutex_unlock", r, __LINE__);
}

/* Any process that does not hold the lock; a snapshot: 1 if some process held it
 * just now.  POSIX offers no read of a mutex's state, so this takes and drops it
 * with trylock (taking over a dead holder's lock on the way). */
int mutex_lock_locked(void *l)
{
    struct mutex_lock *x = l;

    if (!took(x, pthread_mutex_trylock(&x->m), __LINE__))
        return 1;
    mutex_lock_unlock(l, NULL);
    return 0;
}

const struct lock_ops mutex_lock_ops = {
    .name = "mutex",
    .size = mutex_lock_size,
    .init = mutex_lock_init,
    .lock = mutex_lock_lock,
    .trylock = mutex_lock_trylock,
    .unlock = mutex_lock_unlock,
    .locked = mutex_lock_locked,
};
