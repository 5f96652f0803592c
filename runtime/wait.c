/*
 * wait.c - sleeping until a message arrives, without spinning a core.
 *
 * The wake word is a futex in the segment header (shared, not private: senders
 * are other processes).  The receiver acquire-loads wake_seq, stores sleeping = 1,
 * fences (full) and polls once more; only if that poll found nothing does it
 * futex-wait on wake_seq.  A sender stores READY, fences (full), and only if it
 * sees sleeping = 1 bumps wake_seq and wakes (send.c).  In C11 terms this is
 * Dekker's pattern with two seq_cst fences: of the receiver's sleeping store and
 * the sender's READY store, each side's later load sees the other's store, or
 * both do; so either the receiver's last poll sees the packet or the sender sees
 * the sleeper.  The load of wake_seq is an acquire so that it cannot be
 * satisfied after the sleeping store becomes visible (load->store reordering, as
 * ARM and POWER allow): otherwise the receiver could read a wake_seq already
 * bumped for it and sleep through the wake-up.  No wake-up is lost, and a sender
 * makes no system call while the receiver is awake.
 *
 * A queue whose head waits on a claim (mpsc_poll.c) may wait on a dead sender, who
 * will never wake us: then the sleep lasts at most abandon_ms / 4, and the poll
 * after it asks whether the claimant has died (every poll of a stuck head
 * does), so the dead claim is skipped within abandon_ms / 4 of the death plus
 * the scheduler's delay.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "mpsc.h"
#include "net.h"
#include "polling.h"
#include "send.h"
#include "waiting.h"

#if !defined(AO_HAVE_int_fetch_and_add1) || !defined(AO_HAVE_int_load_acquire)
#error "shmam needs AO_int_fetch_and_add1 and AO_int_load_acquire"
#endif

#define AM_WAIT_SPINS 64 /* polls before going to sleep */

void am__wake(struct am_seg_shared *s)
{
    AO_int_fetch_and_add1(&s->wake_seq);
    syscall(SYS_futex, &s->wake_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* The monotonic clock in ms, rounded down, or up for a deadline: with a deadline
 * rounded up and "now" rounded down, a wait never ends before its timeout. */
static int64_t now_ms(int round_up)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + (ts.tv_nsec + (round_up ? 999999 : 0)) / 1000000;
}

/* Sleep until wake_seq moves past `seq` or `ms` pass (ms < 0: no limit). */
static void sleep_on(struct am_seg_shared *h, unsigned seq, int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    syscall(SYS_futex, &h->wake_seq, FUTEX_WAIT, seq, ms < 0 ? NULL : &ts, NULL, 0);
}

/* One announce-recheck-sleep round; returns messages handled by the recheck. */
static int sleep_once(am_ep_t *ep, int64_t ms)
{
    struct am_seg_shared *h = ep->own.shared;
    unsigned seq = AO_int_load_acquire(&h->wake_seq); /* before the store below */
    AO_int_store(&h->sleeping, 1);
    AO_nop_full(); /* pairs with the fence in send.c's wake_if_asleep */
    int n = am__poll(ep);
    int64_t cap = ep->abandon_ms / 4 + 1;
    if (n == 0 && am__stuck(ep) && (ms < 0 || ms > cap))
        ms = cap;
    if (n == 0 && AO_load(&ep->own.hdr->state) == AM_SEG_LIVE)
        sleep_on(h, seq, ms);
    AO_int_store(&h->sleeping, 0);
    return n;
}

/* am_wait with a transport between nodes: MPI cannot wake the futex, so poll
 * everything (am__net_poll each time), yielding the CPU between empty polls
 * after AM_WAIT_SPINS of them and napping AM_NET_NAP_US after 64 times as
 * many (ranks may outnumber CPUs, and a rank waiting in a barrier must not
 * starve the ones it waits for). */
static int net_wait(am_ep_t *ep, int timeout_ms)
{
    int64_t deadline = now_ms(1) + timeout_ms;
    struct timespec nap = {0, AM_NET_NAP_US * 1000};
    for (unsigned i = 0;; i++) {
        int n = am__blocked_poll(ep, AM_REQUEST);
        if (n)
            return n;
        if (timeout_ms >= 0 && (i & 63) == 0 && now_ms(0) >= deadline)
            return 0;
        if (i >= 64 * AM_WAIT_SPINS)
            nanosleep(&nap, NULL);
        else if (i >= AM_WAIT_SPINS)
            sched_yield();
    }
}

int am_wait(am_ep_t *ep, int timeout_ms)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    if (ep->in_handler)
        return -EDEADLK;
    if (ep->net)
        return net_wait(ep, timeout_ms);
    int64_t deadline = now_ms(1) + timeout_ms;
    for (int i = 0; i < AM_WAIT_SPINS; i++) {
        int n = am__poll(ep);
        if (n)
            return n;
    }
    for (;;) {
        int64_t left = timeout_ms < 0 ? -1 : deadline - now_ms(0);
        if (timeout_ms >= 0 && left <= 0)
            return am__poll(ep);
        int n = sleep_once(ep, left);
        if (n == 0)
            n = am__poll(ep);
        if (n)
            return n;
    }
}
