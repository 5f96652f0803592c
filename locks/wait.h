/*
 * wait.h - how a waiter of the spin locks waits: the policies of lock.h
 * (ctx->wait), one round per failed look at the lock, and when to consult
 * the caller's watch.
 *
 * Policies.  Every policy first spins with spin.h's backoff (pauses
 * growing to SPIN_CAP).  Once spinning has clearly failed (the cap reached
 * SPIN_YIELD_AFTER times):
 *   AM_LOCK_WAIT_YIELD  (the default, 0) every round yields the processor
 *                       (spin_wait(), exactly as before policies existed);
 *   AM_LOCK_WAIT_SPIN   every round pauses SPIN_CAP times and never yields
 *                       (the policy of ck's and libslock's locks);
 *   AM_LOCK_WAIT_PARK   a waiter that waits for one word to change (the
 *                       FIFO locks' own turn: ticket's owner, an mcs
 *                       waiter's node, a clh or hemlock waiter's
 *                       predecessor's node, a hemlock holder's own node
 *                       while it waits for the grant's taking) sleeps
 *                       on it with FUTEX_WAIT for at most WAIT_PARK_NS; a
 *                       wait without such a word yields.
 *
 * Parking.  A sleeper adds itself to the word's `sleepers` count (full
 * barrier), reads the word again and sleeps only if it is unchanged; a
 * waker stores the word, then (wait_wake) issues a full barrier and wakes
 * every sleeper if the count is nonzero.  The two barriers order each
 * side's write before its read (Dekker): either the sleeper sees the new
 * word, or the waker sees the sleeper counted, and FUTEX_WAIT's own compare
 * catches a store between the re-read and the sleep.  The futex is the low
 * 32 bits of the word: should the word move to a value with the same low
 * half (a mark 2^32 tickets on), the sleeper misses the wake and wakes at
 * WAIT_PARK_NS.  Only a waker whose own ctx says AM_LOCK_WAIT_PARK wakes
 * anyone, so the default policy's unlock reads nothing shared for it (one
 * test of its private ctx); the participants of a lock should share one
 * policy: a sleeper whose waker does not park wakes at WAIT_PARK_NS.  The
 * count lives in shared memory: garbage there costs futex calls, nothing
 * else.  The futexes are shared (not FUTEX_PRIVATE): waiters and wakers are
 * different processes.
 *
 * Watch.  A waiter consults its watch (lock.h) every AM_LOCK_WATCH_EVERY
 * rounds after spinning has failed (yielded or capped rounds), and after
 * every park: a parked waiter whose waker died wakes at WAIT_PARK_NS and
 * finds it dead.  An acquisition that gets the lock while still spinning
 * never calls the watch.
 */
#ifndef SHMAM_WAIT_H
#define SHMAM_WAIT_H

#include <atomic_ops.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "spin.h"

#if !defined(AO_HAVE_fetch_and_add1_full) || !defined(AO_HAVE_fetch_and_sub1) ||           \
    !defined(AO_HAVE_nop_full)
#error "parking needs AO_fetch_and_add1_full, AO_fetch_and_sub1 and AO_nop_full"
#endif

#define WAIT_PARK_NS 1000000L /* longest sleep of a parked waiter */

struct wait {
    struct spin s;
    unsigned policy; /* the ctx's AM_LOCK_WAIT_* */
    unsigned rounds; /* weight of the failed rounds since the last watch tick */
};

/* A waiter's state for ctx c, before its first round. */
static inline struct wait wait_start(const struct am_lock_ctx *c)
{
    return (struct wait){SPIN_INIT, c->wait, 0};
}

/* After a round of weight `w` (0: it only paused): 1 if the waiter with
 * ctx c should consult its watch now. */
static inline int wait_tally(struct wait *w, const struct am_lock_ctx *c, unsigned weight)
{
    if (!c->watch || !weight)
        return 0;
    w->rounds += weight;
    if (w->rounds < AM_LOCK_WATCH_EVERY)
        return 0;
    w->rounds = 0;
    return 1;
}

/* 1 once spinning has clearly failed (spin.h). */
static inline int wait_failed(const struct wait *w)
{
    return w->s.capped >= SPIN_YIELD_AFTER;
}

/* One round of a waiter after a failed look at the lock: backs off, spins
 * or yields as the policy says.  Returns 1 if the watch is due. */
static inline int wait_round(struct wait *w, const struct am_lock_ctx *c)
{
    if (w->policy == AM_LOCK_WAIT_SPIN && wait_failed(w)) {
        for (unsigned i = 0; i < SPIN_CAP; i++)
            spin_cpu_relax();
        return wait_tally(w, c, 1);
    }
    return wait_tally(w, c, (unsigned)spin_wait(&w->s));
}

/* The 32-bit half of *word that changes with its low bits (the futex). */
static inline uint32_t *wait_futex(volatile AO_t *word)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (uint32_t *)(void *)word;
#else
    return (uint32_t *)(void *)word + 1;
#endif
}

/* Tests only: parks this process ended by a wake (not the timeout). */
extern unsigned long am__lock_parks_woken;

/* Sleeps on *word while it still reads `seen`, at most WAIT_PARK_NS (see
 * the file header). */
static inline void wait_park(volatile AO_t *word, AO_t seen, volatile AO_t *sleepers)
{
    struct timespec ts = {0, WAIT_PARK_NS};

    AO_fetch_and_add1_full(sleepers); /* pairs with wait_wake's AO_nop_full */
    if (AO_load(word) == seen &&
        syscall(SYS_futex, wait_futex(word), FUTEX_WAIT, (uint32_t)seen, &ts, NULL, 0) == 0)
        am__lock_parks_woken++;
    AO_fetch_and_sub1(sleepers);
}

/* One round of a waiter for *word to move from `seen` (just read): under
 * AM_LOCK_WAIT_PARK, once spinning has failed, parks on it; else as
 * wait_round.  Returns 1 if the watch is due. */
static inline int wait_on(struct wait *w, const struct am_lock_ctx *c, volatile AO_t *word,
                          AO_t seen, volatile AO_t *sleepers)
{
    if (w->policy != AM_LOCK_WAIT_PARK || !wait_failed(w))
        return wait_round(w, c);
    wait_park(word, seen, sleepers);
    return wait_tally(w, c, AM_LOCK_WATCH_EVERY);
}

/* By a process that just changed *word (a release store or a full CAS)
 * with ctx c: under AM_LOCK_WAIT_PARK wakes every waiter parked on it;
 * under the other policies does nothing (reads only c). */
static inline void wait_wake(const struct am_lock_ctx *c, volatile AO_t *word,
                             volatile AO_t *sleepers)
{
    if (__builtin_expect(c->wait != AM_LOCK_WAIT_PARK, 1))
        return;
    AO_nop_full(); /* the store before the read of sleepers: pairs with wait_park */
    if (AO_load(sleepers))
        syscall(SYS_futex, wait_futex(word), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

#endif
