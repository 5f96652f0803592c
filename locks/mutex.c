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
 * stop returns within about WATCH_NS.  The mutex sits in memory other processes
 * can write: if its kind is no longer the one init made, or pthread returns
 * any error other than EBUSY, ETIMEDOUT and EOWNERDEAD, lock() returns
 * AM_LOCK_BROKEN instead of aborting the caller.  (Garbage that names a thread
 * that does not exist as the holder still waits: glibc cannot tell it from a
 * live holder.)
 *
 * glibc's links.  A held robust mutex is on its holder's robust list, and glibc
 * keeps the list's links inside the mutex: on unlock it writes through them.
 * Since any sender can write this mutex, the holder records it when it locks
 * and puts back what glibc's unlock reads before unlocking (held.c, shared
 * with the runtime's lifelines), counting a change (am_lock_mutex_mended).
 * That shrinks a peer's chance to redirect the holder's writes to the few
 * instructions of glibc's unlock; it cannot close it (README, threat model):
 * with untrusted peers, prefer a spin lock.
 *
 * Memory ordering.  pthread_mutex_lock/timedlock/trylock acquire and
 * pthread_mutex_unlock releases (POSIX 4.12, memory synchronization); the
 * kernel's hand-over after a holder died orders nothing the dead holder wrote.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "lock.h"
#include "watch.h"

/* Longest sleep of a waiter with a watch between two give_up() questions. */
#define WATCH_NS 10000000L

struct mutex_lock {
    _Alignas(AM_LOCK_ALIGN) pthread_mutex_t m;
};

_Static_assert(sizeof(struct mutex_lock) % AM_LOCK_ALIGN == 0, "mutex owns whole blocks");

/* After `r` from lock, timedlock or trylock: 1 if now held (taking over a dead
 * holder's lock), 0 if busy or timed out, AM_LOCK_BROKEN if the mutex is unusable
 * (its shared bytes were overwritten: an error for the caller, not an abort). */
static int took(struct mutex_lock *x, int r)
{
    if (r == EOWNERDEAD)
        r = pthread_mutex_consistent(&x->m) == 0 ? 0 : ENOTRECOVERABLE;
    if (r == EBUSY || r == ETIMEDOUT)
        return 0;
    if (r != 0)
        return AM_LOCK_BROKEN;
    am_lock_mutex_keep(&x->m);
    return 1;
}

/* Is the mutex still of the kind init made (robust, process-shared)?  A peer
 * may have rewritten it; glibc would then treat it as another kind of mutex
 * (one that never reports a dead owner, or one that tries lock elision and
 * dies of SIGILL: the fuzzer found that).  Compared against a mutex made here
 * the same way, once; the kind is read once, into a local. */
static pthread_once_t kind_once = PTHREAD_ONCE_INIT;
static int robust_kind;

static void learn_kind(void)
{
    pthread_mutex_t t;
    am_lock_mutex_robust_init(&t);
    robust_kind = t.__data.__kind;
    pthread_mutex_destroy(&t);
}

int am_lock_mutex_robust_ok(const pthread_mutex_t *m)
{
    pthread_once(&kind_once, learn_kind);
    int k = ((const volatile pthread_mutex_t *)m)->__data.__kind;
    return k == robust_kind;
}

static size_t mutex_lock_size(unsigned max_procs)
{
    return sizeof(struct mutex_lock);
}

int am_lock_mutex_robust_init(pthread_mutex_t *m)
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
static int mutex_lock_init(void *l, unsigned max_procs)
{
    struct mutex_lock *x = l;

    memset(x, 0, sizeof(*x));
    return am_lock_mutex_robust_init(&x->m);
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
 * a holder that died if need be, or AM_LOCK_GAVE_UP without it if the watch said
 * so. */
static int mutex_lock_lock(void *l, struct am_lock_ctx *c)
{
    struct mutex_lock *x = l;
    struct timespec until;
    int r;

    if (!am_lock_mutex_robust_ok(&x->m))
        return AM_LOCK_BROKEN;
    if (!c->watch)
        return took(x, pthread_mutex_lock(&x->m)) == 1 ? 0 : AM_LOCK_BROKEN;
    for (;;) {
        until = soon();
        if ((r = took(x, pthread_mutex_timedlock(&x->m, &until))) != 0)
            return r == 1 ? 0 : AM_LOCK_BROKEN;
        if (watch_give_up(c))
            return AM_LOCK_GAVE_UP;
    }
}

/* Any process; one attempt.  Returns 1 holding the lock (acquire), 0 if busy. */
static int mutex_lock_trylock(void *l, struct am_lock_ctx *c)
{
    struct mutex_lock *x = l;

    return am_lock_mutex_robust_ok(&x->m) && took(x, pthread_mutex_trylock(&x->m)) == 1;
}

/* By the holder only; release ordering.  An error (the mutex was overwritten
 * while we held it) is ignored: the next locker finds it broken. */
static void mutex_lock_unlock(void *l, struct am_lock_ctx *c)
{
    struct mutex_lock *x = l;

    am_lock_mutex_mend(&x->m);
    pthread_mutex_unlock(&x->m);
}

/* Any process that does not hold the lock; a snapshot: 1 if some process held it
 * just now.  POSIX offers no read of a mutex's state, so this takes and drops it
 * with trylock (taking over a dead holder's lock on the way). */
static int mutex_lock_locked(void *l)
{
    if (!mutex_lock_trylock(l, NULL))
        return 1;
    mutex_lock_unlock(l, NULL);
    return 0;
}

const struct am_lock_ops am_lock_mutex = {
    .name = "mutex",
    .size = mutex_lock_size,
    .init = mutex_lock_init,
    .lock = mutex_lock_lock,
    .trylock = mutex_lock_trylock,
    .unlock = mutex_lock_unlock,
    .locked = mutex_lock_locked,
};
