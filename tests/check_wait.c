/*
 * check_wait.c - am_wait: sleeping until a message arrives, for every claim
 * algorithm on both backends.
 *
 *   wake          a process blocked in am_wait(ep, -1) (in the futex system
 *                 call) is woken by a request, a bulk request, or a reply
 *                 from another process, whose sender made the wake-up call,
 *                 and returns the count (>= 1)
 *   timeout       am_wait(ep, T) with nothing to do returns 0 after at least T
 *                 ms (and not orders of magnitude more); with a message
 *                 pending it returns without waiting for its timeout
 *   pingpong      20000 round trips in which both sides only ever call
 *                 am_wait(ep, -1), never am_poll, pinned to different cores and
 *                 both to the same core: a lost wake-up hangs it (a run that
 *                 stops making round trips for PINGPONG_STALL_S fails, naming
 *                 its combination); the endpoints' futex words show the sides
 *                 did sleep and wake (each side pauses 300 us before every
 *                 64th answer, longer than a wait polls before sleeping)
 *   awake_sender  while the receiver spins on am_poll (it never calls am_wait
 *                 before it has counted all), 10000 sends leave its futex word
 *                 wake_seq untouched (the sender's fast path makes no wake
 *                 system call); one send to a receiver asleep in am_wait moves
 *                 it
 *
 * No test judges speed: a wake-up that comes late on a busy machine is not a
 * lost one.  A lost wake-up leaves the sleeper in the kernel for ever, which
 * the bounds here (tens of seconds, for what takes microseconds) tell apart.
 *
 * Helper processes are forked, pinned, die with the test process, and report
 * through a shared block; the test asserts on it, naming the algorithm and
 * backend in every failure message.  Endpoint names carry this run's and the
 * test's pid; each test checks that nothing of its names is left in /dev/shm or
 * among the System V segments, and main removes what a failed test left.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "peers.h"
#include "testutil.h"

enum { H_PING = 1, H_PONG, H_MSG, H_ASK, H_ANSWER };

static cpu_set_t all_cpus; /* where this run may run */
static char what[96];      /* "ALG/BACKEND: test", in every failure message */

/* ---- shared state, helpers ---- */

struct shared {
    struct tu_gate gate;
    char a[AM_NAME_MAX], b[AM_NAME_MAX];
    int alg, backend, mode;
    unsigned n;
    AO_t ready, phase, done;
    AO_t count, pings, pongs; /* progress */
    int rc;
    int cpu_a, cpu_b;          /* where the ping-pong ran */
    unsigned woken_a, woken_b; /* wake-ups each side's endpoint got (wake_seq) */
    struct tu_errors err;      /* what the helper processes saw */
};

static struct shared *sh;

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
    tu_pin(0);
}

static void combo(int i, const char *test)
{
    sh->alg = i / 2;
    sh->backend = i % 2;
    snprintf(what, sizeof what, "%s/%s: %s", am_claim_names[sh->alg],
             tu_backend_name(sh->backend), test);
}

static struct am_ep_opts opts(void)
{
    struct am_ep_opts o = {
        am_claim_names[sh->alg], tu_backend_name(sh->backend), 0, 0, 0, 0, 0, NULL, 0};
    return o;
}

/* Create endpoint `name` in a helper; exits the helper on failure. */
static am_ep_t *child_create(const char *name)
{
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(name, &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "create %s: %s", name, am_strerror(rc));
        _exit(2);
    }
    return ep;
}

/* Fork a helper pinned to `cpu` that dies with the test process. */
static pid_t spawn(void (*fn)(void *), int cpu)
{
    pid_t p = tu_spawn(fn, NULL, cpu);
    ck_assert_msg(p > 0, "%s: fork", what);
    return p;
}

/* The header of the segment mapped as index 0: its wake line. */
static struct am_seg_shared *peer_shared(am_ep_t *ep)
{
    struct am_peer *p = am__peer(ep, 0);
    ck_assert_msg(p != NULL, "%s: no peer 0", what);
    return p->view->shared;
}

#define ASLEEP_S 30 /* the longest wait for a helper to go to sleep */

/* Wait until process p, owner of `h`, is asleep in am_wait: it announced it
 * (`sleeping`) and then blocked in the futex (it does nothing else meanwhile),
 * so it stays there until a sender sees `sleeping` and wakes it.  Returns 1
 * once so, or 0 if /proc cannot tell: then it waits 30 ms more, and the
 * caller may not count on the sender's wake-up call (the sleeper's last poll
 * may find the message first). */
static int wait_asleep(const struct am_seg_shared *h, pid_t p)
{
    double end = tu_now_s() + ASLEEP_S;
    int known = 1;
    while (tu_now_s() < end &&
           !(AO_int_load(&h->sleeping) && (known = tu_in_futex(p)) != 0 &&
             AO_int_load(&h->sleeping)))
        tu_sleep_ms(1);
    ck_assert_msg(AO_int_load(&h->sleeping) && known != 0,
                  "%s: the receiver never went to sleep in %d s (%s)", what, ASLEEP_S,
                  tu_first_error(&sh->err, "no helper error"));
    if (known < 0)
        tu_sleep_ms(30);
    return known > 0;
}

static void count_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_fetch_and_add1(&sh->count);
}

/* ---- (a) a sleeper is woken ---- */

enum { WAKE_REQUEST, WAKE_BULK, WAKE_REPLY, WAKE_MODES };
static const char *const wake_names[] = {"request", "bulk request", "reply"};

static void answer_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    int rc = am_reply(t, H_ANSWER, a, n);
    ck_assert_msg(rc == 0, "%s: reply: %s", what, am_strerror(rc));
}

/* Sleeps in am_wait(ep, -1) once; for WAKE_REPLY after sending a request whose
 * reply will wake it. */
static void sleeper(void *arg)
{
    am_ep_t *ep = child_create(sh->b);
    am_set_handler(ep, H_MSG, count_h);
    am_set_handler(ep, H_ANSWER, count_h);
    if (sh->mode == WAKE_REPLY) {
        uint32_t x = 5;
        int rc = tu_map_when_there(ep, 0, sh->a, 10);
        if (rc == 0)
            rc = am_request(ep, 0, H_ASK, &x, 1);
        if (rc != 0)
            tu_error(&sh->err, "sleeper: map/request: %s", am_strerror(rc));
    }
    AO_store_release(&sh->ready, 1);
    sh->rc = am_wait(ep, -1);
    /* The waker destroys only after we return: its message is in. */
    int rc = am_ep_destroy(ep);
    if (rc != 0)
        tu_error(&sh->err, "sleeper: destroy: %s", am_strerror(rc));
}

#define WOKEN_S 30 /* a sleeper not woken after this long never will be */

START_TEST(wake)
{
    int mode = _i % WAKE_MODES;
    combo(_i / WAKE_MODES, "wake");
    snprintf(what + strlen(what), sizeof what - strlen(what), " by a %s", wake_names[mode]);
    sh->mode = mode;
    tu_ep_name(sh->a, sizeof sh->a, "waker", sh->alg, sh->backend);
    tu_ep_name(sh->b, sizeof sh->b, "sleeper", sh->alg, sh->backend);
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(sh->a, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create: %s", what, am_strerror(rc));
    am_set_handler(ep, H_ASK, answer_h);
    pid_t p = spawn(sleeper, 1);
    tu_assert_flag(&sh->ready, 1, 10, "the sleeper", what, &sh->err);
    rc = am_ep_map(ep, 0, sh->b);
    ck_assert_msg(rc == 0, "%s: map: %s", what, am_strerror(rc));
    struct am_seg_shared *h = peer_shared(ep);
    int asleep = wait_asleep(h, p);
    unsigned seq0 = AO_int_load(&h->wake_seq);
    static const char data[3000];
    uint32_t x = 9;
    if (mode == WAKE_REQUEST)
        rc = am_request(ep, 0, H_MSG, &x, 1);
    else if (mode == WAKE_BULK)
        rc = am_request_bulk(ep, 0, H_MSG, data, sizeof data, &x, 1);
    else
        rc = am_poll(ep) == 1 ? 0 : -EIO; /* runs answer_h: the reply wakes it */
    ck_assert_msg(rc == 0, "%s: send: %s", what, am_strerror(rc));
    ck_assert_msg(!asleep || AO_int_load(&h->wake_seq) != seq0,
                  "%s: no wake-up call for a receiver asleep in the futex", what);
    int st = tu_reap(p, WOKEN_S);
    ck_assert_msg(st != -1, "%s: still asleep %d s after the message (a lost wake-up)",
                  what, WOKEN_S);
    tu_assert_exit0(st, "sleeper", what, &sh->err);
    ck_assert_msg(sh->rc >= 1, "%s: am_wait(-1) returned %d", what, sh->rc);
    ck_assert_msg(AO_load(&sh->count) == 1, "%s: %lu messages handled, want 1", what,
                  (unsigned long)AO_load(&sh->count));
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    tu_assert_clean(what);
}
END_TEST

/* ---- (b) timeouts ---- */

#define LATE_MS 20000    /* am_wait(T) returns before T + this */
#define PENDING_MS 60000 /* a timeout that a pending message must not wait for */

START_TEST(timeout)
{
    combo(_i, "timeout");
    char name[AM_NAME_MAX];
    tu_ep_name(name, sizeof name, "t", sh->alg, sh->backend);
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(name, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create: %s", what, am_strerror(rc));
    static const int ms[] = {100, 1, 0, 30};
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
        double t0 = tu_now_s();
        rc = am_wait(ep, ms[k]);
        double dt = (tu_now_s() - t0) * 1000;
        ck_assert_msg(rc == 0, "%s: am_wait(%d) with nothing gave %d", what, ms[k], rc);
        /* Lower bound exact (less a clock tick's rounding).  The upper one only
         * tells a timeout read in the wrong unit (100 s for 100 ms) from a busy
         * machine's delay. */
        ck_assert_msg(dt >= ms[k] - 0.001 * (ms[k] > 0),
                      "%s: am_wait(%d) returned after %.3f ms", what, ms[k], dt);
        ck_assert_msg(dt < ms[k] + LATE_MS, "%s: am_wait(%d) returned after %.1f ms", what,
                      ms[k], dt);
    }
    /* Something pending: at once, whatever the timeout. */
    ck_assert_msg(am_ep_map(ep, 0, name) == 0, "%s: map self", what);
    am_set_handler(ep, H_MSG, count_h);
    for (int k = 0; k < 3; k++) {
        static const int tm[] = {-1, 0, PENDING_MS};
        ck_assert_msg(am_request(ep, 0, H_MSG, NULL, 0) == 0, "%s: send self", what);
        double t0 = tu_now_s();
        rc = am_wait(ep, tm[k]);
        double dt = (tu_now_s() - t0) * 1000;
        /* Without waiting for the timeout: half of it, slack enough for any
         * busy machine (-1 that waits hangs, caught by the tcase's timeout). */
        ck_assert_msg(rc == 1 && dt < PENDING_MS / 2,
                      "%s: am_wait(%d) with a message: %d after %.0f ms", what, tm[k], rc,
                      dt);
    }
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    tu_assert_clean(what);
}
END_TEST

/* ---- (c) ping-pong on am_wait only ---- */

/* A wait polls a while before it sleeps (wait.c, at most 100 us), and a
 * partner that answers at once is caught polling: so that both sides go to
 * sleep (and must be woken) now and then, each pauses longer than that before
 * every PAUSE_EVERY-th answer. */
#define PAUSE_EVERY 64
static void pause_side(void)
{
    struct timespec ts = {0, 300 * 1000};
    nanosleep(&ts, NULL);
}

static void pong_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_t want = AO_load(&sh->pongs);
    if (n != 1 || a[0] != want)
        tu_error(&sh->err, "pinger: pong %u, want %lu", n ? a[0] : 0, (unsigned long)want);
    AO_store_release(&sh->pongs, want + 1);
}

static void ping_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_t want = AO_load(&sh->pings);
    if (n != 1 || a[0] != want)
        tu_error(&sh->err, "ponger: ping %u, want %lu", n ? a[0] : 0, (unsigned long)want);
    AO_store_release(&sh->pings, want + 1);
    if (want % PAUSE_EVERY == 0)
        pause_side(); /* the pinger's wait outlasts its spin: it sleeps */
    int rc = am_reply(t, H_PONG, a, n);
    if (rc != 0)
        tu_error(&sh->err, "ponger: reply %lu: %s", (unsigned long)want, am_strerror(rc));
}

static void pinger(void *arg)
{
    am_ep_t *ep = child_create(sh->a);
    am_set_handler(ep, H_PONG, pong_h);
    int rc = tu_map_when_there(ep, 0, sh->b, 10);
    if (rc != 0) {
        tu_error(&sh->err, "pinger: map: %s", am_strerror(rc));
        _exit(2);
    }
    tu_gate_wait(&sh->gate);
    sh->cpu_a = sched_getcpu();
    for (uint32_t i = 0; i < sh->n && !AO_load(&sh->err.n); i++) {
        if (i % PAUSE_EVERY == PAUSE_EVERY / 2)
            pause_side(); /* the ponger's wait outlasts its spin: it sleeps */
        rc = am_request(ep, 0, H_PING, &i, 1);
        if (rc != 0) {
            tu_error(&sh->err, "pinger: ping %u: %s", i, am_strerror(rc));
            break;
        }
        while (AO_load(&sh->pongs) <= i && !AO_load(&sh->err.n))
            if ((rc = am_wait(ep, -1)) < 0) {
                tu_error(&sh->err, "pinger: am_wait: %s", am_strerror(rc));
                break;
            }
    }
    sh->woken_a = AO_int_load(&ep->own.shared->wake_seq);
    AO_store_release(&sh->done, 1);
    am_ep_destroy(ep);
}

static void ponger(void *arg)
{
    am_ep_t *ep = child_create(sh->b);
    am_set_handler(ep, H_PING, ping_h);
    tu_gate_wait(&sh->gate);
    sh->cpu_b = sched_getcpu();
    while (AO_load(&sh->pings) < sh->n && !AO_load(&sh->err.n)) {
        int rc = am_wait(ep, -1);
        if (rc < 0) {
            tu_error(&sh->err, "ponger: am_wait: %s", am_strerror(rc));
            break;
        }
    }
    /* Our last pong must be handled before our endpoint (and our sender entry in
     * the pinger's table) goes away. */
    tu_wait_flag(&sh->done, 1, 20);
    sh->woken_b = AO_int_load(&ep->own.shared->wake_seq);
    am_ep_destroy(ep);
}

#define PINGPONG_STALL_S 20 /* round trips stopped this long: a lost wake-up */

/* tu_run_procs' child 0 is the ponger, on CPU 1; child 1 the pinger, on CPU 1
 * too if *same, else CPU 0 (of the run's CPUs: setup pinned the test). */
static void pingpong_side(int idx, void *same)
{
    sched_setaffinity(0, sizeof all_cpus, &all_cpus);
    tu_pin(idx == 0 || *(int *)same ? 1 : 0);
    if (idx == 0)
        ponger(NULL);
    else
        pinger(NULL);
}

START_TEST(pingpong)
{
    int same = _i % 2;
    combo(_i / 2, same ? "ping-pong, both on one core" : "ping-pong, across cores");
    tu_ep_name(sh->a, sizeof sh->a, "ping", sh->alg, sh->backend);
    tu_ep_name(sh->b, sizeof sh->b, "pong", sh->alg, sh->backend);
    sh->n = 20000u * (unsigned)tu_stress_factor();
    tu_gate_init(&sh->gate, 2);
    double t0 = tu_now_s();
    int failed = tu_run_procs_moving(2, pingpong_side, &same, &sh->pongs, PINGPONG_STALL_S);
    double dt = tu_now_s() - t0;
    ck_assert_msg(failed == 0,
                  "%s: %d sides failed, or hung %d s (lost wake-up?), after %lu pings, "
                  "%lu pongs of %u (%s)",
                  what, failed, PINGPONG_STALL_S, (unsigned long)AO_load(&sh->pings),
                  (unsigned long)AO_load(&sh->pongs), sh->n,
                  tu_first_error(&sh->err, "no error"));
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(AO_load(&sh->pongs) == sh->n, "%s: %lu of %u round trips", what,
                  (unsigned long)AO_load(&sh->pongs), sh->n);
    ck_assert_msg(same ? sh->cpu_a == sh->cpu_b
                       : sh->cpu_a != sh->cpu_b || CPU_COUNT(&all_cpus) < 2,
                  "%s: ran on CPUs %d and %d", what, sh->cpu_a, sh->cpu_b);
    /* The point is sleeping: somebody slept in the futex and was woken (on one
     * core both sides must, or the other could never run). */
    ck_assert_msg(same ? sh->woken_a > 0 && sh->woken_b > 0 : sh->woken_a + sh->woken_b > 0,
                  "%s: nobody slept: %u and %u wake-ups", what, sh->woken_a, sh->woken_b);
    printf("wait: %-8s %-5s %-6s %u round trips on am_wait only: %.2f s (%.1f us each)\n",
           am_claim_names[sh->alg], tu_backend_name(sh->backend), same ? "same" : "across",
           sh->n, dt, dt * 1e6 / sh->n);
    tu_assert_clean(what);
}
END_TEST

/* ---- (d) no wake system call while the receiver is awake ---- */

/* Phase 1 ends only once all n messages have come, however long that takes
 * on a busy machine (it dies with the test process): a receiver that had
 * gone to sleep meanwhile would make every wake-up call below legitimate. */
static void spinner(void *arg)
{
    am_ep_t *ep = child_create(sh->b);
    am_set_handler(ep, H_MSG, count_h);
    AO_store_release(&sh->ready, 1);
    /* Phase 1: awake, polling only. */
    while (AO_load(&sh->count) < sh->n)
        if (am_poll(ep) < 0)
            tu_error(&sh->err, "spinner: am_poll failed");
    /* Phase 2: asleep until one more message. */
    while (AO_load(&sh->count) < sh->n + 1)
        if (am_wait(ep, -1) < 0)
            tu_error(&sh->err, "spinner: am_wait failed");
    tu_wait_flag(&sh->done, 1, 60);
    am_ep_destroy(ep);
}

START_TEST(awake_sender)
{
    combo(_i, "no wake-up call to an awake receiver");
    tu_ep_name(sh->a, sizeof sh->a, "sender", sh->alg, sh->backend);
    tu_ep_name(sh->b, sizeof sh->b, "spinner", sh->alg, sh->backend);
    sh->n = 10000;
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(sh->a, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create: %s", what, am_strerror(rc));
    pid_t p = spawn(spinner, 1);
    tu_assert_flag(&sh->ready, 1, 10, "the receiver", what, &sh->err);
    rc = am_ep_map(ep, 0, sh->b);
    ck_assert_msg(rc == 0, "%s: map: %s", what, am_strerror(rc));
    const struct am_seg_shared *h = peer_shared(ep);
    unsigned seq0 = AO_int_load(&h->wake_seq);
    for (uint32_t i = 0; i < sh->n; i++) {
        rc = am_request(ep, 0, H_MSG, &i, 1);
        ck_assert_msg(rc == 0, "%s: send %u: %s", what, i, am_strerror(rc));
    }
    tu_assert_flag(&sh->count, sh->n, WOKEN_S, "the receiver to count the burst", what,
                   &sh->err);
    unsigned seq1 = AO_int_load(&h->wake_seq);
    ck_assert_msg(seq1 == seq0,
                  "%s: %u wake-up call(s) during %u sends to a receiver that never slept",
                  what, seq1 - seq0, sh->n);
    /* Now it sleeps: one send must wake it. */
    int asleep = wait_asleep(h, p);
    unsigned seq2 = AO_int_load(&h->wake_seq);
    uint32_t x = sh->n;
    rc = am_request(ep, 0, H_MSG, &x, 1);
    ck_assert_msg(rc == 0, "%s: send to the sleeper: %s", what, am_strerror(rc));
    unsigned seq3 = AO_int_load(&h->wake_seq);
    ck_assert_msg(seq3 != seq2 || !asleep,
                  "%s: a send to a sleeping receiver did not wake it", what);
    tu_assert_flag(&sh->count, sh->n + 1, WOKEN_S, "the sleeper to handle the message",
                   what, &sh->err);
    AO_store_release(&sh->done, 1);
    tu_assert_exit0(tu_reap(p, 30), "receiver", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    tu_assert_clean(what);
}
END_TEST

static Suite *wait_suite(void)
{
    Suite *s = suite_create("wait");
    TCase *tc = tcase_create("wake-ups");
    tcase_set_timeout(tc, 180);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, wake, 0, tu_combos() * WAKE_MODES);
    tcase_add_loop_test(tc, timeout, 0, tu_combos());
    tcase_add_loop_test(tc, awake_sender, 0, tu_combos());
    suite_add_tcase(s, tc);

    tc = tcase_create("ping-pong");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, pingpong, 0, 2 * tu_combos());
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("wt");
    sched_getaffinity(0, sizeof all_cpus, &all_cpus);
    return tu_run_suite(wait_suite(), "check_wait");
}
