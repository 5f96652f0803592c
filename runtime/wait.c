/*
 * wait.c - sleeping until a message arrives, without spinning a core.
 *
 * The wake word is a futex in the segment header (shared, not private: senders
 * are other processes).  The receiver acquire-loads wake_seq, adds 1 to sleeping,
 * fences (full) and polls once more; only if that poll found nothing does it
 * futex-wait on wake_seq.  A sender stores READY, fences (full), and only if it
 * sees sleeping != 0 bumps wake_seq and wakes (send.c).  (sleeping counts the
 * threads asleep: a shared endpoint's serving threads may all be.)  In C11 terms this is
 * Dekker's pattern with two seq_cst fences: of the receiver's sleeping store and
 * the sender's READY store, each side's later load sees the other's store, or
 * both do; so either the receiver's last poll sees the packet or the sender sees
 * the sleeper.  The load of wake_seq is an acquire so that it cannot be
 * satisfied after the sleeping store becomes visible (load->store reordering, as
 * ARM and POWER allow): otherwise the receiver could read a wake_seq already
 * bumped for it and sleep through the wake-up.  No wake-up is lost, and a sender
 * makes no system call while the receiver is awake.
 *
 * am_ep_wake (any thread of the owner's process, or a signal handler) ends
 * every wakeable wait of its endpoint in progress (am_wait, am_call_wait,
 * am_call), or if there is none the next one: wakes are kept, as a byte in
 * a self-pipe is.  wake_gen counts the wakes; wake_seen is wake_gen as the
 * last wait that took a wake saw it.  A wait reads wake_seen when it starts
 * (its mark) and ends once wake_gen differs from it, checked every 8 polls
 * of its spin and before each sleep; whatever ended it, it then stores
 * wake_gen into wake_seen if that differs from its mark (it takes the
 * wakes).  So a signal handler that sets a flag and then calls am_ep_wake
 * ends the wait wherever it runs, before the wait, in its spin or in its
 * sleep; and a taken wake was given before the wait returned, so the
 * caller's test of the flag after it sees the flag.  am_ep_wake bumps
 * wake_gen before wake_seq, so a wake-up after the sleeper's load of
 * wake_seq ends its futex wait, and one before is seen by its check of
 * wake_gen.  am_ep_wake is async-signal-safe: native lock-free atomics, the
 * futex wake-up and write(2), no lock, no allocation, errno kept.
 *
 * A queue whose head waits on a claim (mpsc_poll.c) may wait on a dead sender, who
 * will never wake us: then the sleep lasts at most abandon_ms / 4, and the poll
 * after it asks whether the claimant has died (every poll of a stuck head
 * does), so the dead claim is skipped within abandon_ms / 4 of the death plus
 * the scheduler's delay.
 *
 * A shared endpoint's waits keep spin_ns as it is (threads.h: it is one
 * word for all of them), and take the drain lock to read the heads.
 *
 * Waiting at the speed of polling.  A futex sleep and wake-up cost tens of
 * microseconds on a VM, a poll tens of nanoseconds: a wait first polls for
 * up to spin_ns (yielding the processor now and then, so a peer sharing our
 * CPU runs), and only then sleeps.  spin_ns adapts to how long recent waits
 * took: a wait that a longer spin would have caught (it ended within
 * AM_SPIN_MAX_NS) doubles it, one that did not halves it, down to
 * AM_SPIN_MIN_NS; so a ping-pong partner is caught spinning while an idle
 * waiter spins once per call and then sleeps.
 *
 * Slices.  Every sleep has a finite timeout, at most AM_SLICE_MS: a signal
 * whose handler runs then ends a futex wait with EINTR only when it has a
 * timeout (without one the kernel restarts it under SA_RESTART), and the wait
 * returns -EINTR.  While calls are outstanding (call.c) a slice lasts at most
 * abandon_ms and until the next call's deadline, and after it every
 * destination's lifeline and every deadline are checked, so a call to a
 * server that died ends within abandon_ms while its caller sleeps.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "call.h"
#include "internal.h"
#include "mpsc.h"
#include "net.h"
#include "polling.h"
#include "rendezvous.h"
#include "send.h"
#include "waiting.h"

#if !defined(AO_HAVE_int_fetch_and_add1) || !defined(AO_HAVE_int_load_acquire) ||          \
    !defined(AO_HAVE_fetch_and_add_release) || defined(AO_USE_PTHREAD_DEFS)
#error                                                                                     \
    "shmam needs native AO_int_fetch_and_add1, AO_int_load_acquire, AO_fetch_and_add_release"
#endif

#define AM_WAIT_SPINS 64 /* net_wait: polls before yielding */
#define AM_SPIN_MIN_NS 1000
#define AM_SPIN_MAX_NS 100000
#define AM_SPIN_START_NS 20000
#define AM_SPIN_YIELD 128 /* polls between yields while spinning */
#define AM_SLICE_MS 60000 /* the longest single sleep */

void am__wake(struct am_seg_shared *s)
{
    AO_int_fetch_and_add1(&s->wake_seq);
    syscall(SYS_futex, &s->wake_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int64_t am__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleep until wake_seq moves past `seq` or `ms` (>= 0) pass; -EINTR if a
 * signal handler ran meanwhile. */
static int sleep_on(struct am_seg_shared *h, unsigned seq, int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    long rc = syscall(SYS_futex, &h->wake_seq, FUTEX_WAIT, seq, &ts, NULL, 0);
    return rc < 0 && errno == EINTR ? -EINTR : 0;
}

/* Has am_ep_wake been called since this wait's mark *gen (wake_seen as it
 * started)?  (gen NULL: a wait that am_ep_wake does not end.)  The acquire
 * pairs with am_ep_wake's release. */
static int woken(const am_ep_t *ep, const AO_t *gen)
{
    return gen && AO_load_acquire(&ep->mt.wake_gen) != *gen;
}

/* A wait's mark: the wakes it has not seen are those after it. */
static AO_t wake_mark(const am_ep_t *ep)
{
    return AO_load_acquire(&ep->mt.wake_seen);
}

/* A wakeable wait (mark *gen) returns: take the wakes it saw, if any (1),
 * whatever ended it; each came before the return, so the caller's look at
 * what its waker set sees that. */
static int wake_end(am_ep_t *ep, const AO_t *gen)
{
    if (!woken(ep, gen))
        return 0;
    AO_store(&ep->mt.wake_seen, AO_load_acquire(&ep->mt.wake_gen));
    return 1;
}

int am__wake_take(am_ep_t *ep)
{
    AO_t gen = wake_mark(ep);
    return wake_end(ep, &gen);
}

/* Is a head stuck on a claim (read under the drain lock if shared)? */
static int stuck(am_ep_t *ep)
{
    am__mt_lock(&ep->mt, &ep->mt.drain_mu);
    int s = am__stuck(ep);
    am__mt_unlock(&ep->mt, &ep->mt.drain_mu);
    return s;
}

/* Are call replies kept for callers with no room (call.c)? */
static int owed(am_ep_t *ep)
{
    am__mt_lock(&ep->mt, &ep->mt.calls_mu);
    int o = ep->owed != NULL;
    am__mt_unlock(&ep->mt, &ep->mt.calls_mu);
    return o;
}

/* One announce-recheck-sleep round of at most ms: done's verdict on the
 * recheck's poll (the sleep is skipped if it ends the wait), and *intr if a
 * signal ended the sleep.  done runs after the announce: a call that another
 * thread ended (call_records.c's wake_waiters) is seen by it, or its ender sees us. */
static int sleep_once(am_ep_t *ep, int64_t ms, int *intr, const AO_t *gen,
                      am_wait_done_fn done, void *ctx)
{
    struct am_seg_shared *h = ep->own.shared;
    unsigned seq = AO_int_load_acquire(&h->wake_seq); /* before the store below */
    AO_int_fetch_and_add1(&h->sleeping);
    if (__builtin_expect(ep->rdv != NULL, 0))
        am__rdv_arm(ep); /* a listener's doors, the same announce each */
    AO_nop_full();       /* pairs with the fences in send.c's wake_if_asleep and
                          * call_records.c's wake_waiters */
    int n = am__poll(ep), r = done(ep, n, ctx);
    int64_t cap = ep->abandon_ms / 4 + 1;
    if (n == 0 && !r && stuck(ep) && ms > cap)
        ms = cap;
    if (n == 0 && !r && AO_load(&ep->own.hdr->state) == AM_SEG_LIVE && !woken(ep, gen))
        *intr = (ep->rdv ? am__rdv_sleep(ep, seq, ms) : sleep_on(h, seq, ms)) == -EINTR;
    if (__builtin_expect(ep->rdv != NULL, 0))
        am__rdv_disarm(ep);
    AO_int_fetch_and_add(&h->sleeping, (unsigned)-1);
    return r;
}

/* Poll until done, spin_ns pass, the deadline, or a wake (gen: as for
 * woken); done's value or 0. */
static int spin(am_ep_t *ep, int64_t t0, int64_t deadline, am_wait_done_fn done, void *ctx,
                const AO_t *gen)
{
    int64_t spin_ns = ep->spin_ns ? ep->spin_ns : AM_SPIN_START_NS;
    int64_t until = t0 + spin_ns < deadline ? t0 + spin_ns : deadline;
    for (unsigned i = 1;; i++) {
        int r = done(ep, am__poll(ep), ctx);
        if (r)
            return r;
        if (i % 8 == 0 && (am__now_ns() >= until || woken(ep, gen)))
            return 0;
        if (i % AM_SPIN_YIELD == 0)
            sched_yield();
    }
}

/* A wait that took `took` ns ended (slept: after sleeping): adapt spin_ns. */
static void adapt(am_ep_t *ep, int64_t took, int slept)
{
    if (ep->mt.shared)
        return; /* one word for every serving thread: kept as it is */
    if (!slept && 2 * took > ep->spin_ns)
        ep->spin_ns = 2 * took < AM_SPIN_MAX_NS ? 2 * took : AM_SPIN_MAX_NS;
    else if (slept && took < AM_SPIN_MAX_NS)
        ep->spin_ns = 2 * ep->spin_ns < AM_SPIN_MAX_NS ? 2 * ep->spin_ns : AM_SPIN_MAX_NS;
    else if (slept)
        ep->spin_ns = ep->spin_ns / 2 > AM_SPIN_MIN_NS ? ep->spin_ns / 2 : AM_SPIN_MIN_NS;
}

/* The longest the next sleep may last, in ms (at least 0). */
static int64_t slice(am_ep_t *ep, int64_t now, int64_t deadline)
{
    int64_t ms = deadline == INT64_MAX ? AM_SLICE_MS : (deadline - now + 999999) / 1000000;
    if (ms > AM_SLICE_MS)
        ms = AM_SLICE_MS;
    if (__builtin_expect(ep->net != NULL, 0) && ms > 1)
        ms = 1; /* the transport cannot wake us */
    if (ms > AM_OWED_SLICE_MS && owed(ep))
        ms = AM_OWED_SLICE_MS; /* replies kept for callers with no room (call.c) */
    return am__calls_slice(ep, now, ms);
}

/* am__wait_for; gen: a wakeable wait's mark (wake_mark: am_ep_wake ends
 * it; its caller then takes the wake, wake_end), or NULL. */
static int wait_for(am_ep_t *ep, int64_t deadline, am_wait_done_fn done, void *ctx,
                    const AO_t *gen)
{
    if (!ep->spin_ns && !ep->mt.shared)
        ep->spin_ns = AM_SPIN_START_NS;
    int64_t t0 = am__now_ns();
    int r = spin(ep, t0, deadline, done, ctx, gen);
    if (r) {
        adapt(ep, am__now_ns() - t0, 0);
        return r;
    }
    for (;;) {
        int64_t now = am__now_ns();
        if (now >= deadline || woken(ep, gen))
            return done(ep, am__poll(ep), ctx);
        int intr = 0;
        r = sleep_once(ep, slice(ep, now, deadline), &intr, gen, done, ctx);
        if (!r && ep->calls && am__calls_check(ep))
            r = done(ep, 0, ctx);
        if (owed(ep))
            am__call_retry(ep, 1);
        if (!r)
            r = done(ep, am__poll(ep), ctx);
        if (r) {
            adapt(ep, am__now_ns() - t0, 1);
            return r;
        }
        if (intr)
            return -EINTR;
    }
}

int am__wait_for(am_ep_t *ep, int64_t deadline, am_wait_done_fn done, void *ctx)
{
    return wait_for(ep, deadline, done, ctx, NULL);
}

int am__wait_wakeable(am_ep_t *ep, int64_t deadline, am_wait_done_fn done, void *ctx)
{
    AO_t gen = wake_mark(ep);
    int r = wait_for(ep, deadline, done, ctx, &gen);
    return wake_end(ep, &gen) && r == 0 ? -EINTR : r;
}

/* am_wait with a transport between nodes: MPI cannot wake the futex, so poll
 * everything (am__net_poll each time), yielding the CPU between empty polls
 * after AM_WAIT_SPINS of them and napping AM_NET_NAP_US after 64 times as
 * many (ranks may outnumber CPUs, and a rank waiting in a barrier must not
 * starve the ones it waits for). */
static int net_wait(am_ep_t *ep, int timeout_ms, const AO_t *gen)
{
    int64_t deadline = am__now_ns() + (int64_t)timeout_ms * 1000000;
    struct timespec nap = {0, AM_NET_NAP_US * 1000};
    for (unsigned i = 0;; i++) {
        int n = am__blocked_poll(ep, AM_REQUEST);
        if (n)
            return n;
        if ((i & 63) == 0 && wake_end(ep, gen))
            return 0;
        if (timeout_ms >= 0 && (i & 63) == 0 && am__now_ns() >= deadline)
            return 0;
        if (i >= 64 * AM_WAIT_SPINS)
            nanosleep(&nap, NULL);
        else if (i >= AM_WAIT_SPINS)
            sched_yield();
    }
}

/* am_wait's condition: a message ran, or a call ended (call.c). */
struct any_ctx {
    unsigned long ended; /* am__calls_ended at the start */
};

static int any_event(am_ep_t *ep, int n, void *ctx)
{
    unsigned long e = am__calls_ended(ep) - ((struct any_ctx *)ctx)->ended;
    return n + (int)e;
}

int am_wait(am_ep_t *ep, int timeout_ms)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (am__in_handler(ep))
        return -EDEADLK;
    AO_t gen = wake_mark(ep);
    if (ep->net && !ep->calls)
        return net_wait(ep, timeout_ms, &gen);
    struct any_ctx ctx = {am__calls_ended(ep)};
    int64_t deadline =
        timeout_ms < 0 ? INT64_MAX : am__now_ns() + (int64_t)timeout_ms * 1000000;
    int n;
    if (__builtin_expect(!ep->mt.shared, 1)) {
        n = wait_for(ep, deadline, any_event, &ctx, &gen);
        wake_end(ep, &gen);
        return n;
    }
    am__mt_enter(ep);
    n = wait_for(ep, deadline, any_event, &ctx, &gen);
    wake_end(ep, &gen);
    am__mt_leave(ep);
    return n;
}

/* Wake every thread of ours waiting on ep: bump wake_gen (the waiters' exit
 * test), then the futex word, then write a byte to the descriptor if there
 * is one.  The release pairs with woken()'s acquire.  Async-signal-safe
 * (see the top of this file): keep it to atomics and system calls. */
int am_ep_wake(am_ep_t *ep)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    if (!ep->mt.owner)
        return -EPERM; /* a fork child's copy (threads.c): nobody's */
    int saved = errno; /* a signal handler's caller may be reading it */
    AO_fetch_and_add_release(&ep->mt.wake_gen, 1);
    AO_nop_full(); /* wake_gen before wake_seq (sleep_once) */
    am__wake(ep->own.shared);
    am__fd_kick(ep);
    errno = saved;
    return 0;
}
