/*
 * check_threads.c - an endpoint used by several threads (am_ep_share), its
 * file descriptor (am_ep_fd, am_ep_wake) and kept replies, as real threads
 * against real processes.
 *
 *   threads_send_in_order   4 threads of one process send N requests each
 *                           (short, bulk and long mixed) through one shared
 *                           endpoint with 4-packet queues to a receiver
 *                           process: every message arrives exactly once and
 *                           each thread's in the order sent; mpsc under three
 *                           claims and every per-sender kind
 *   serving_threads_once    2 threads in am_wait on one shared endpoint serve
 *                           2 sender processes: every message runs exactly
 *                           once, and no serving thread sees a sender's
 *                           message after a later one of the same sender
 *   kept_reply_other_thread a handler keeps its reply; another thread answers
 *                           through the handle (the client gets it; a client
 *                           in am_call gets it as its call's result, not the
 *                           empty reply of a handler that did not reply), a
 *                           second use is -EALREADY; a caller killed before
 *                           the answer makes it -EPIPE
 *   epoll_across_processes  the descriptor of am_ep_fd, in epoll: readable
 *                           before the first am_poll, not readable after an
 *                           empty one, readable once another process sends
 *                           and still after a poll that ran its message, not
 *                           readable again once am_poll has returned 0;
 *                           rounds with the send racing the arming
 *   wake_ends_wait          am_ep_wake from another thread ends an
 *                           am_wait(-1), shared or owned, and makes the
 *                           descriptor readable
 *   misuse_errors           other threads on an owned endpoint (-EPERM), a
 *                           token after its handler or on another thread
 *                           (-EINVAL), destroy while a thread waits (-EBUSY),
 *                           keep twice or reply after keep (-EALREADY)
 *   stale_token_refused     a handler's token kept past its return and used
 *                           in the next handler run, at the same stack depth
 *                           (where the live token now lies): am_reply,
 *                           am_token_keep -EINVAL, am_token_source UINT_MAX,
 *                           am_token_ep NULL, while the live token works;
 *                           owned and shared
 *   calls_from_threads      CALL_THREADS threads make K calls each through
 *                           one shared client endpoint (room for 8 calls at
 *                           a time) to a server process: blocking, and
 *                           started and then tested or waited, several
 *                           outstanding per thread; every reply carries its
 *                           request's args and data and reaches its own call
 *                           (counted, none crossed); every 16th call goes to
 *                           a handler parked until its caller has timed out:
 *                           -ETIMEDOUT, and its late reply is counted by
 *                           am_ep_late_replies, given to no other call; mpsc
 *                           and per-sender kinds
 *
 * Threads are pinned to the two CPUs in turn and start behind a barrier;
 * helper processes are forked, pinned, die with the test process and report
 * through a shared block.  No test judges speed.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "testutil.h"

enum { H_MSG = 1, H_ASK, H_ANSWER, H_STOP, H_ECHO, H_PARK };

#define SEND_THREADS 4
#define SERVERS 2
#define SENDER_PROCS 2
#define MAX_N 20000
#define CALL_THREADS 4
#define MAX_K 1000 /* calls per thread */

static char what[128];

/* The queue kind and claim of a loop index. */
struct kind {
    const char *queue, *claim;
};
static const struct kind kinds[] = {
    {"mpsc", "lockfree"},    {"mpsc", "onecas"},          {"mpsc", "ticket"},
    {"lamport", "lockfree"}, {"fastforward", "lockfree"}, {"mcring", "lockfree"},
    {"bqueue", "lockfree"},
};
#define N_KINDS ((int)(sizeof kinds / sizeof kinds[0]))

struct shared {
    struct tu_gate gate;
    char rx[64], tx[64];
    struct kind k;
    unsigned n; /* messages per sender (thread or process) */
    AO_t ready, done, go, count;
    AO_t next[SEND_THREADS * SENDER_PROCS]; /* receiver: next seq expected */
    AO_t bad;                               /* out of order or garbled */
    uint8_t seen[SENDER_PROCS][MAX_N];      /* serving: runs per message */
    AO_t timed_out[CALL_THREADS][MAX_K];    /* calls: the caller's -ETIMEDOUT came */
    AO_t served;                            /* calls: requests the server ran */
    struct tu_errors err;
};
static struct shared *sh;

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
}

static struct am_ep_opts opts_of(const struct kind *k, unsigned packets)
{
    struct am_ep_opts o = {
        .claim = k->claim, .shm = "posix", .packets = packets, .queue = k->queue};
    return o;
}

static void pin_thread(int cpu)
{
    cpu_set_t all, one;
    CPU_ZERO(&one);
    if (sched_getaffinity(0, sizeof all, &all) != 0 || CPU_COUNT(&all) == 0)
        return;
    for (int c = 0, k = cpu % CPU_COUNT(&all); c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all) && k-- == 0) {
            CPU_SET(c, &one);
            break;
        }
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

/* A name for this test's endpoint of `role`, loop index i. */
static void ep_name(char *buf, const char *role, int i)
{
    char r[16];
    snprintf(r, sizeof r, "%s%d", role, i);
    tu_ep_name(buf, 64, r, -1, 0);
}

static am_ep_t *create_or_die(const char *name, const struct am_ep_opts *o)
{
    am_ep_t *ep;
    int rc = am_ep_create(name, o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "create %s: %s", name, am_strerror(rc));
        _exit(2);
    }
    return ep;
}

static void start_threads(pthread_t *t, int n, void *(*fn)(void *))
{
    for (intptr_t i = 0; i < n; i++)
        ck_assert_msg(pthread_create(&t[i], NULL, fn, (void *)i) == 0, "%s: thread", what);
}

/* ---- 4 threads send through one endpoint ------------------------------- */

/* Receiver: args (sender, seq, check); data, if any, the pattern of check. */
static void order_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    (void)t;
    if (n != 3 || a[0] >= SEND_THREADS * SENDER_PROCS || (l && tu_fnv1a(d, l) != a[2]) ||
        AO_load(&sh->next[a[0]]) != a[1]) {
        if (AO_fetch_and_add1(&sh->bad) == 0)
            tu_error(
                &sh->err, "sender %u: message %u arrived, expected %lu (n %d, len %zu)",
                n == 3 ? a[0] : 0, n == 3 ? a[1] : 0,
                n == 3 ? (unsigned long)AO_load(&sh->next[a[0] % SEND_THREADS]) : 0, n, l);
    } else
        AO_store(&sh->next[a[0]], a[1] + 1);
    AO_fetch_and_add1(&sh->count);
}

#define STALL_S 20 /* no message for this long: lost (or stuck) */

/* Serve ep (NULL: others do) until `total` messages have run or none has
 * for STALL_S seconds. */
static void count_until(am_ep_t *ep, unsigned total)
{
    AO_t seen = 0;
    double last = tu_now_s();
    while (AO_load(&sh->count) < total && tu_now_s() - last < STALL_S) {
        if (ep ? am_wait(ep, 100) < 0 : (tu_sleep_ms(5), 0))
            break;
        if (AO_load(&sh->count) != seen)
            seen = AO_load(&sh->count), last = tu_now_s();
    }
}

static void order_receiver(void *arg)
{
    (void)arg;
    struct am_ep_opts o = opts_of(&sh->k, 4);
    am_ep_t *ep = create_or_die(sh->rx, &o);
    am_set_handler(ep, H_MSG, order_h);
    AO_store_release(&sh->ready, 1);
    count_until(ep, SEND_THREADS * sh->n);
    AO_store_release(&sh->done, 1);
    while (!AO_load_acquire(&sh->go)) /* until the senders have gone */
        am_wait(ep, 10);
    am_ep_destroy(ep);
}

static am_ep_t *tx_ep;
static pthread_barrier_t bar;

/* Sender thread i: message k is short, bulk every 5th, long every 11th. */
static void *order_sender(void *arg)
{
    unsigned i = (unsigned)(intptr_t)arg;
    static char buf[SEND_THREADS][12000];
    pin_thread((int)i);
    pthread_barrier_wait(&bar);
    for (unsigned k = 0; k < sh->n; k++) {
        size_t len = k % 11 == 3 ? 9000 + k % 3000 : k % 5 == 1 ? 1 + k % 8000 : 0;
        tu_pattern(buf[i], i * 7919 + k, len);
        uint32_t a[3] = {i, k, len ? tu_fnv1a(buf[i], len) : 0};
        int rc = len > AM_MAX_BULK ? am_request_long(tx_ep, 0, H_MSG, buf[i], len, a, 3)
                 : len             ? am_request_bulk(tx_ep, 0, H_MSG, buf[i], len, a, 3)
                                   : am_request(tx_ep, 0, H_MSG, a, 3);
        if (rc != 0) {
            tu_error(&sh->err, "thread %u send %u: %s", i, k, am_strerror(rc));
            break;
        }
        tu_widen(k * SEND_THREADS + i);
    }
    return NULL;
}

START_TEST(threads_send_in_order)
{
    sh->k = kinds[_i];
    sh->n = 4000 * (unsigned)tu_stress_factor();
    if (sh->n > MAX_N)
        sh->n = MAX_N;
    snprintf(what, sizeof what, "%s/%s: %d threads send", sh->k.queue, sh->k.claim,
             SEND_THREADS);
    ep_name(sh->rx, "rx", _i);
    ep_name(sh->tx, "tx", _i);
    pid_t p = tu_spawn(order_receiver, NULL, 0);
    ck_assert_msg(p > 0, "%s: fork", what);
    tu_assert_flag(&sh->ready, 1, 20, "the receiver", what, &sh->err);
    struct am_ep_opts o = opts_of(&sh->k, 4);
    ck_assert_int_eq(am_ep_create(sh->tx, &o, &tx_ep), 0);
    ck_assert_int_eq(am_ep_map(tx_ep, 0, sh->rx), 0);
    ck_assert_int_eq(am_ep_share(tx_ep), 0);
    pthread_t t[SEND_THREADS];
    pthread_barrier_init(&bar, NULL, SEND_THREADS);
    start_threads(t, SEND_THREADS, order_sender);
    while (!AO_load_acquire(&sh->done)) /* all arrived, or they stalled */
        tu_sleep_ms(5);
    AO_store_release(&sh->go, 1); /* the receiver goes: stuck sends end (-EPIPE) */
    for (int i = 0; i < SEND_THREADS; i++)
        pthread_join(t[i], NULL);
    tu_assert_exit0(tu_reap(p, 30), "receiver", what, &sh->err);
    ck_assert_int_eq(am_ep_destroy(tx_ep), 0);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(AO_load(&sh->count) == SEND_THREADS * sh->n, "%s: %lu of %u arrived",
                  what, (unsigned long)AO_load(&sh->count), SEND_THREADS * sh->n);
    for (int i = 0; i < SEND_THREADS; i++)
        ck_assert_msg(AO_load(&sh->next[i]) == sh->n, "%s: thread %d: %lu of %u in order",
                      what, i, (unsigned long)AO_load(&sh->next[i]), sh->n);
    tu_assert_clean(what);
}
END_TEST

/* ---- 2 threads serve one endpoint -------------------------------------- */

static am_ep_t *srv_ep;
static _Thread_local int last_seen[SENDER_PROCS];

/* Serving: count each (sender, seq) and check that this thread sees each
 * sender's messages in increasing order; a little work widens the overlap. */
static void serve_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    (void)t, (void)d, (void)l;
    if (n != 2 || a[0] >= SENDER_PROCS || a[1] >= sh->n) {
        tu_error(&sh->err, "garbled message (n %d)", n);
        return;
    }
    if ((int)a[1] <= last_seen[a[0]] && AO_fetch_and_add1(&sh->bad) == 0)
        tu_error(&sh->err, "a thread saw sender %u's %u after its %d", a[0], a[1],
                 last_seen[a[0]]);
    last_seen[a[0]] = (int)a[1];
    __atomic_fetch_add(&sh->seen[a[0]][a[1]], 1, __ATOMIC_RELAXED);
    tu_widen(a[1] * 2 + a[0]);
    AO_fetch_and_add1(&sh->count);
}

static void *server_thread(void *arg)
{
    pin_thread((int)(intptr_t)arg);
    for (int i = 0; i < SENDER_PROCS; i++)
        last_seen[i] = -1;
    pthread_barrier_wait(&bar);
    while (!AO_load_acquire(&sh->done)) {
        int rc = am_wait(srv_ep, 100);
        if (rc < 0) {
            tu_error(&sh->err, "am_wait: %s", am_strerror(rc));
            break;
        }
    }
    return NULL;
}

static void serve_sender(void *arg)
{
    unsigned who = (unsigned)(uintptr_t)arg;
    char name[80];
    static char buf[600];
    snprintf(name, sizeof name, "%s%u", sh->tx, who);
    struct am_ep_opts o = opts_of(&sh->k, 8);
    am_ep_t *ep = create_or_die(name, &o);
    if (tu_map_when_there(ep, 0, sh->rx, 20) != 0) {
        tu_error(&sh->err, "sender %u: map", who);
        _exit(2);
    }
    tu_gate_wait(&sh->gate);
    for (unsigned k = 0; k < sh->n; k++) {
        uint32_t a[2] = {who, k};
        int rc = k % 3 == 1 ? am_request_bulk(ep, 0, H_MSG, buf, 1 + k % 600, a, 2)
                            : am_request(ep, 0, H_MSG, a, 2);
        if (rc != 0) {
            tu_error(&sh->err, "sender %u send %u: %s", who, k, am_strerror(rc));
            _exit(2);
        }
    }
    while (!AO_load_acquire(&sh->done))
        am_wait(ep, 10);
    am_ep_destroy(ep);
}

START_TEST(serving_threads_once)
{
    sh->k = kinds[_i];
    sh->n = 5000 * (unsigned)tu_stress_factor();
    if (sh->n > MAX_N)
        sh->n = MAX_N;
    snprintf(what, sizeof what, "%s/%s: %d serving threads", sh->k.queue, sh->k.claim,
             SERVERS);
    ep_name(sh->rx, "srv", _i);
    ep_name(sh->tx, "cl", _i);
    struct am_ep_opts o = opts_of(&sh->k, 8);
    ck_assert_int_eq(am_ep_create(sh->rx, &o, &srv_ep), 0);
    ck_assert_int_eq(am_set_handler(srv_ep, H_MSG, serve_h), 0);
    ck_assert_int_eq(am_ep_share(srv_ep), 0);
    tu_gate_init(&sh->gate, SENDER_PROCS);
    pid_t p[SENDER_PROCS];
    for (int i = 0; i < SENDER_PROCS; i++)
        ck_assert_msg((p[i] = tu_spawn(serve_sender, (void *)(uintptr_t)i, i)) > 0, "fork");
    pthread_t t[SERVERS];
    pthread_barrier_init(&bar, NULL, SERVERS);
    start_threads(t, SERVERS, server_thread);
    count_until(NULL, SENDER_PROCS * sh->n);
    AO_store_release(&sh->done, 1);
    am_ep_wake(srv_ep);
    for (int i = 0; i < SERVERS; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(am_ep_destroy(srv_ep), 0); /* stuck sends end (-EPIPE) */
    for (int i = 0; i < SENDER_PROCS; i++)
        tu_assert_exit0(tu_reap(p[i], 30), "sender", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    for (int s = 0; s < SENDER_PROCS; s++)
        for (unsigned k = 0; k < sh->n; k++)
            ck_assert_msg(sh->seen[s][k] == 1, "%s: sender %d's message %u ran %u times",
                          what, s, k, sh->seen[s][k]);
    tu_assert_clean(what);
}
END_TEST

/* ---- kept replies ------------------------------------------------------ */

static am_kept_t *kept;
static AO_t kept_ready;

static void keep_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    (void)a, (void)n, (void)d, (void)l;
    int rc = am_token_keep(t, &kept);
    if (rc != 0)
        tu_error(&sh->err, "keep: %s", am_strerror(rc));
    if (am_reply(t, H_ANSWER, NULL, 0) != -EALREADY)
        tu_error(&sh->err, "a reply after keeping was not -EALREADY");
    AO_store_release(&kept_ready, 1);
}

static void answer_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    (void)t;
    static char want[3000];
    tu_pattern(want, 5, sizeof want);
    if (n == 1 && a[0] == 42 && l == sizeof want && memcmp(d, want, l) == 0)
        AO_store_release(&sh->count, 1);
    else
        tu_error(&sh->err, "client: wrong answer (n %d, len %zu)", n, l);
}

/* A client: ask once, then (if it lives) wait for the answer. */
static void kept_client(void *arg)
{
    (void)arg;
    struct am_ep_opts o = opts_of(&sh->k, 0);
    am_ep_t *ep = create_or_die(sh->tx, &o);
    am_set_handler(ep, H_ANSWER, answer_h);
    if (tu_map_when_there(ep, 0, sh->rx, 20) != 0 ||
        am_request(ep, 0, H_ASK, NULL, 0) != 0) {
        tu_error(&sh->err, "client: ask");
        _exit(2);
    }
    AO_store_release(&sh->ready, 1);
    double end = tu_now_s() + 60;
    while (!AO_load_acquire(&sh->count) && tu_now_s() < end)
        am_wait(ep, 50);
    AO_store_release(&sh->done, 1);
    am_ep_destroy(ep);
}

/* A client that calls (am_call) instead: the kept reply must end the call
 * with its data, not the empty reply a handler that returns without
 * replying gets. */
static void call_client(void *arg)
{
    (void)arg;
    struct am_ep_opts o = opts_of(&sh->k, 0);
    am_ep_t *ep = create_or_die(sh->tx, &o);
    static char got[4096], want[3000];
    struct am_result res = {.data = got, .cap = sizeof got};
    tu_pattern(want, 5, sizeof want);
    if (tu_map_when_there(ep, 0, sh->rx, 20) != 0) {
        tu_error(&sh->err, "client: map");
        _exit(2);
    }
    AO_store_release(&sh->ready, 1);
    int rc = am_call(ep, 0, H_ASK, NULL, 0, NULL, 0, &res, 60000);
    if (rc != 0 || res.nargs != 1 || res.args[0] != 42 || res.len != sizeof want ||
        memcmp(got, want, sizeof want) != 0)
        tu_error(&sh->err, "client: am_call gave %s, %d args, %zu bytes", am_err_name(rc),
                 res.nargs, res.len);
    else
        AO_store_release(&sh->count, 1);
    AO_store_release(&sh->done, 1);
    am_ep_destroy(ep);
}

/* The other thread: answer through the handle, then try again. */
static void *answer_thread(void *arg)
{
    int *rc = arg;
    static char data[3000];
    uint32_t a = 42;
    tu_pattern(data, 5, sizeof data);
    rc[0] = am_reply_kept(kept, H_ANSWER, data, sizeof data, &a, 1);
    rc[1] = am_reply_kept(kept, H_ANSWER, data, sizeof data, &a, 1);
    return NULL;
}

/* Serve until the handler has kept the reply. */
static void serve_until_kept(void)
{
    double end = tu_now_s() + 60;
    while (!AO_load_acquire(&kept_ready) && tu_now_s() < end)
        am_wait(srv_ep, 50);
    ck_assert_msg(AO_load(&kept_ready), "%s: the request never came", what);
}

START_TEST(kept_reply_other_thread)
{
    int dead = _i % 3 == 1, call = _i % 3 == 2;
    sh->k = kinds[_i / 3];
    snprintf(what, sizeof what, "%s/%s: kept reply, caller %s", sh->k.queue, sh->k.claim,
             dead   ? "killed"
             : call ? "calling"
                    : "alive");
    ep_name(sh->rx, "srv", _i);
    ep_name(sh->tx, "cli", _i);
    struct am_ep_opts o = opts_of(&sh->k, 0);
    ck_assert_int_eq(am_ep_create(sh->rx, &o, &srv_ep), 0);
    am_set_handler(srv_ep, H_ASK, keep_h);
    ck_assert_int_eq(am_ep_share(srv_ep), 0);
    pid_t p = tu_spawn(call ? call_client : kept_client, NULL, 1);
    ck_assert_msg(p > 0, "%s: fork", what);
    serve_until_kept();
    if (dead) {
        kill(p, SIGKILL);
        tu_reap(p, 10);
        am_ep_t *gone; /* its name is reclaimed by the next creator */
        ck_assert_int_eq(am_ep_create(sh->tx, &o, &gone), 0);
        ck_assert_int_eq(am_ep_destroy(gone), 0);
    }
    int rc[2];
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, answer_thread, rc), 0);
    while (!dead && !AO_load_acquire(&sh->done))
        am_wait(srv_ep, 10); /* the answer's backoff may need us to poll */
    pthread_join(t, NULL);
    ck_assert_msg(rc[0] == (dead ? -EPIPE : 0), "%s: the kept reply gave %s", what,
                  am_err_name(rc[0]));
    ck_assert_msg(rc[1] == -EALREADY, "%s: a second use gave %s", what, am_err_name(rc[1]));
    if (!dead) {
        tu_assert_exit0(tu_reap(p, 30), "client", what, &sh->err);
        ck_assert_msg(AO_load(&sh->count) == 1, "%s: the client got no answer", what);
    }
    ck_assert_int_eq(am_ep_destroy(srv_ep), 0);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- the descriptor in epoll, across processes -------------------------- */

#define EPOLL_ROUNDS 200

/* Send one message per round once told (go == round), racing the arming. */
static void epoll_sender(void *arg)
{
    (void)arg;
    struct am_ep_opts o = opts_of(&sh->k, 0);
    am_ep_t *ep = create_or_die(sh->tx, &o);
    if (tu_map_when_there(ep, 0, sh->rx, 20) != 0) {
        tu_error(&sh->err, "sender: map");
        _exit(2);
    }
    for (unsigned r = 1; r <= EPOLL_ROUNDS; r++) {
        while (AO_load_acquire(&sh->go) < r)
            tu_yield();
        tu_widen(r);
        uint32_t a = r;
        if (am_request(ep, 0, H_MSG, &a, 1) != 0) {
            tu_error(&sh->err, "sender: send %u", r);
            _exit(2);
        }
    }
    while (!AO_load_acquire(&sh->done))
        tu_sleep_ms(1);
    am_ep_destroy(ep);
}

static void count_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    (void)t, (void)a, (void)n, (void)d, (void)l;
    AO_fetch_and_add1(&sh->count);
}

static int readable(int epfd, int ms)
{
    struct epoll_event ev;
    return epoll_wait(epfd, &ev, 1, ms);
}

START_TEST(epoll_across_processes)
{
    sh->k = kinds[_i];
    snprintf(what, sizeof what, "%s/%s: epoll", sh->k.queue, sh->k.claim);
    ep_name(sh->rx, "rx", _i);
    ep_name(sh->tx, "tx", _i);
    struct am_ep_opts o = opts_of(&sh->k, 0);
    am_ep_t *ep;
    ck_assert_int_eq(am_ep_create(sh->rx, &o, &ep), 0);
    am_set_handler(ep, H_MSG, count_h);
    int fd = am_ep_fd(ep), epfd = epoll_create1(0);
    ck_assert_msg(fd >= 0, "%s: am_ep_fd: %s", what, am_strerror(fd));
    ck_assert_int_eq(am_ep_fd(ep), fd);
    struct epoll_event ev = {.events = EPOLLIN};
    ck_assert_int_eq(epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev), 0);
    ck_assert_msg(readable(epfd, 0) == 1, "%s: not readable before the first am_poll",
                  what);
    pid_t p = tu_spawn(epoll_sender, NULL, 1);
    ck_assert_msg(p > 0, "%s: fork", what);
    unsigned late = 0;
    for (unsigned r = 1; r <= EPOLL_ROUNDS; r++) {
        while (am_poll(ep) > 0) /* armed once it returns 0 */
            ;
        if (AO_load(&sh->count) == r - 1)
            ck_assert_msg(readable(epfd, 0) == 0,
                          "%s: round %u: readable with nothing sent", what, r);
        AO_store_release(&sh->go, r);
        while (AO_load(&sh->count) < r) {
            ck_assert_msg(readable(epfd, 20000) == 1,
                          "%s: round %u: not readable 20 s after the send", what, r);
            if (am_poll(ep) > 0) /* a loop may poll once per readiness */
                ck_assert_msg(readable(epfd, 0) == 1,
                              "%s: round %u: not readable after a poll that ran one", what,
                              r);
        }
        while (am_poll(ep) > 0)
            ;
        /* Drained: readable only if a byte came late (rare), then never again. */
        if (readable(epfd, 0) != 0) {
            late++;
            ck_assert_int_eq(am_poll(ep), 0);
            ck_assert_msg(readable(epfd, 0) == 0, "%s: round %u: still readable", what, r);
        }
    }
    ck_assert_msg(late < EPOLL_ROUNDS / 2, "%s: readable after draining in %u rounds", what,
                  late);
    AO_store_release(&sh->done, 1);
    tu_assert_exit0(tu_reap(p, 30), "sender", what, &sh->err);
    close(epfd);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- am_ep_wake ---------------------------------------------------------- */

static void *waiter(void *arg)
{
    int *rc = arg;
    AO_store_release(&sh->ready, 1);
    *rc = am_wait(srv_ep, -1);
    AO_store_release(&sh->done, 1);
    return NULL;
}

static void *waker(void *arg)
{
    (void)arg;
    tu_assert_flag(&sh->ready, 1, 10, "the waiter", what, &sh->err);
    tu_sleep_ms(50); /* into its futex wait, most likely */
    am_ep_wake(srv_ep);
    return NULL;
}

START_TEST(wake_ends_wait)
{
    int shared = _i;
    snprintf(what, sizeof what, "am_ep_wake, %s endpoint", shared ? "shared" : "owned");
    ep_name(sh->rx, "w", _i);
    ck_assert_int_eq(am_ep_create(sh->rx, NULL, &srv_ep), 0);
    int fd = am_ep_fd(srv_ep), rc = 1;
    ck_assert_int_eq(am_poll(srv_ep), 0); /* arms the descriptor */
    int epfd = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    ck_assert_int_eq(epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev), 0);
    pthread_t t;
    if (shared) { /* another thread waits, this one wakes */
        ck_assert_int_eq(am_ep_share(srv_ep), 0);
        ck_assert_int_eq(pthread_create(&t, NULL, waiter, &rc), 0);
        waker(NULL);
    } else { /* the owner waits, another thread wakes */
        ck_assert_int_eq(pthread_create(&t, NULL, waker, NULL), 0);
        waiter(&rc);
    }
    pthread_join(t, NULL);
    ck_assert_msg(rc == 0, "%s: am_wait gave %d", what, rc);
    ck_assert_msg(readable(epfd, 10000) == 1, "%s: the descriptor is not readable", what);
    ck_assert_int_eq(am_poll(srv_ep), 0);
    ck_assert_msg(readable(epfd, 0) == 0, "%s: still readable after am_poll", what);
    close(epfd);
    ck_assert_int_eq(am_ep_destroy(srv_ep), 0);
    tu_assert_clean(what);
}
END_TEST

/* ---- misuse ------------------------------------------------------------- */

static am_token_t *saved;
static int other_rc[4];

static void *other_thread_calls(void *arg)
{
    (void)arg;
    uint32_t a = 1;
    other_rc[0] = am_request(srv_ep, 0, H_MSG, &a, 1);
    other_rc[1] = am_poll(srv_ep);
    other_rc[2] = am_wait(srv_ep, 0);
    other_rc[3] = am_ep_destroy(srv_ep);
    return NULL;
}

static void *use_saved_token(void *arg)
{
    *(int *)arg = am_reply(saved, H_ANSWER, NULL, 0);
    return NULL;
}

static void save_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    (void)a, (void)n, (void)d, (void)l;
    int rc = 0;
    pthread_t th;
    saved = t;
    pthread_create(&th, NULL, use_saved_token, &rc);
    pthread_join(th, NULL);
    if (rc != -EINVAL)
        tu_error(&sh->err, "a token on another thread gave %d", rc);
    am_kept_t *k;
    if (am_token_keep(t, &k) != 0 || am_token_keep(t, &k) != -EALREADY)
        tu_error(&sh->err, "keeping twice");
}

START_TEST(misuse_errors)
{
    snprintf(what, sizeof what, "misuse");
    tu_ep_name(sh->rx, sizeof sh->rx, "m", 0, 0);
    ck_assert_int_eq(am_ep_create(sh->rx, NULL, &srv_ep), 0);
    ck_assert_int_eq(am_ep_map(srv_ep, 0, sh->rx), 0);
    am_set_handler(srv_ep, H_MSG, save_h);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, other_thread_calls, NULL), 0);
    pthread_join(t, NULL);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(other_rc[i] == -EPERM, "%s: call %d from another thread gave %s",
                      what, i, am_err_name(other_rc[i]));
    uint32_t a = 1;
    ck_assert_int_eq(am_request(srv_ep, 0, H_MSG, &a, 1), 0);
    ck_assert_int_eq(am_poll(srv_ep), 1);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_int_eq(am_reply(saved, H_ANSWER, NULL, 0), -EINVAL); /* after its handler */
    /* Destroy while another thread waits: -EBUSY, then fine once it has left. */
    ck_assert_int_eq(am_ep_share(srv_ep), 0);
    int rc = 1;
    ck_assert_int_eq(pthread_create(&t, NULL, waiter, &rc), 0);
    tu_assert_flag(&sh->ready, 1, 10, "the waiter", what, &sh->err);
    tu_sleep_ms(20);
    ck_assert_int_eq(am_ep_destroy(srv_ep), -EBUSY);
    am_ep_wake(srv_ep);
    pthread_join(t, NULL);
    ck_assert_int_eq(am_ep_destroy(srv_ep), 0); /* releases the kept handle */
    tu_assert_clean(what);
}
END_TEST

/* ---- a stale token ------------------------------------------------------ */

#define STALE_ROUNDS 20

static am_token_t *stale;
static int stale_bad, stale_runs;
static AO_t answers;

static void answer_count_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    (void)t, (void)a, (void)n, (void)d, (void)l;
    AO_fetch_and_add1(&answers);
}

/* The first run keeps its token; the second uses it (stale: its handler has
 * returned, and this run's token lies where it lay), then its own. */
static void stale_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    (void)a, (void)n, (void)d, (void)l;
    if (!stale) {
        stale = t;
        return;
    }
    am_kept_t *k;
    int rc[4] = {am_reply(stale, H_ANSWER, NULL, 0), am_token_keep(stale, &k),
                 am_token_source(stale) == UINT_MAX ? -EINVAL : 0,
                 am_token_ep(stale) == NULL ? -EINVAL : 0};
    for (int i = 0; i < 4; i++)
        if (rc[i] != -EINVAL && stale_bad++ == 0)
            tu_error(&sh->err, "a stale token's use %d gave %s", i, am_err_name(rc[i]));
    if (am_reply(t, H_ANSWER, NULL, 0) != 0 && stale_bad++ == 0)
        tu_error(&sh->err, "the live token's reply failed");
    stale = NULL;
    stale_runs++;
}

START_TEST(stale_token_refused)
{
    int shared = _i;
    snprintf(what, sizeof what, "stale token, %s endpoint", shared ? "shared" : "owned");
    tu_ep_name(sh->rx, sizeof sh->rx, "st", _i, 0);
    am_ep_t *ep;
    ck_assert_int_eq(am_ep_create(sh->rx, NULL, &ep), 0);
    ck_assert_int_eq(am_ep_map(ep, 0, sh->rx), 0);
    am_set_handler(ep, H_MSG, stale_h);
    am_set_handler(ep, H_ANSWER, answer_count_h);
    if (shared)
        ck_assert_int_eq(am_ep_share(ep), 0);
    stale = NULL, stale_bad = 0, stale_runs = 0;
    AO_store(&answers, 0);
    for (int r = 0; r < STALE_ROUNDS; r++)
        for (int j = 0; j < 2; j++) { /* one run per poll, from one place */
            ck_assert_int_eq(am_request(ep, 0, H_MSG, NULL, 0), 0);
            ck_assert_int_ge(am_poll(ep), 1); /* and the last answer */
        }
    while (am_poll(ep) > 0) /* the answers */
        ;
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(stale_runs == STALE_ROUNDS && stale_bad == 0, "%s: %d runs, %d bad", what,
                  stale_runs, stale_bad);
    ck_assert_msg(AO_load(&answers) == STALE_ROUNDS, "%s: %lu answers for %d live replies",
                  what, (unsigned long)AO_load(&answers), STALE_ROUNDS);
    tu_assert_clean(what);
}
END_TEST

/* ---- calls from any thread of a shared endpoint -------------------------- */

#define CALL_CAP 4096
#define CALL_BATCH 3 /* calls a thread keeps outstanding at most */
#define PARK_EVERY 16
#define PARK_MS 100
#define CALL_MS 60000 /* an ordinary call's deadline: never reached */

/* Call k of thread i: args {i, k, key}, len bytes of pattern key; its reply
 * echoes the args and the first reply_len bytes. */
static uint32_t call_key(unsigned i, unsigned k)
{
    return i * 100003u + k;
}

static size_t call_len(unsigned k)
{
    static const size_t base[5] = {0, 1, 100, 9000, 2000},
                        span[5] = {1, 64, 900, 500, 1000};
    return base[k % 5] + k % span[k % 5];
}

static size_t reply_len(size_t len)
{
    return len < CALL_CAP / 2 ? len : CALL_CAP / 2;
}

static void echo_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_fetch_and_add1(&sh->served);
    int rc =
        l ? am_reply_long(t, H_ECHO, d, reply_len(l), a, n) : am_reply(t, H_ECHO, a, n);
    if (rc != 0)
        tu_error(&sh->err, "server: reply: %s", am_strerror(rc));
}

/* Hold the reply until its caller has timed out (60 s at most): it comes
 * late, for sure. */
static void park_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    if (n != 3 || a[0] >= CALL_THREADS || a[1] >= MAX_K) {
        tu_error(&sh->err, "server: garbled park call (n %d)", n);
        return;
    }
    tu_wait_flag(&sh->timed_out[a[0]][a[1]], 1, 60);
    echo_h(t, a, n, d, l);
}

static void call_server(void *arg)
{
    (void)arg;
    struct am_ep_opts o = opts_of(&sh->k, 0);
    am_ep_t *ep = create_or_die(sh->rx, &o);
    am_set_handler(ep, H_ECHO, echo_h);
    am_set_handler(ep, H_PARK, park_h);
    AO_store_release(&sh->ready, 1);
    while (!AO_load_acquire(&sh->done))
        am_wait(ep, 50);
    am_ep_destroy(ep);
}

struct call_slot {
    am_call_t id;
    unsigned k;
    struct am_result res;
    char buf[CALL_CAP];
};

struct caller {
    unsigned long ok, bad, parks, parks_sent;
    struct call_slot slot[CALL_BATCH];
    unsigned head, n; /* outstanding: slot[head], ... n of them */
    char data[9600];
};
static struct caller callers[CALL_THREADS];
static am_ep_t *cl_ep;

/* Did call k of thread i end with its own reply? */
static void check_reply(struct caller *c, unsigned i, unsigned k, int rc,
                        const struct am_result *res)
{
    uint32_t key = call_key(i, k);
    size_t want = reply_len(call_len(k)), j = 0;
    int args_ok = rc == 0 && res->nargs == 3 && res->args[0] == i && res->args[1] == k &&
                  res->args[2] == key && res->len == want;
    while (args_ok && j < want &&
           ((unsigned char *)res->data)[j] == tu_pattern_byte(key, j))
        j++;
    if (args_ok && j == want) {
        c->ok++;
        return;
    }
    if (c->bad++ == 0)
        tu_error(
            &sh->err,
            "thread %u call %u: %s, %d args (%u %u), %zu bytes of %zu, byte %zu differs", i,
            k, am_err_name(rc), res->nargs, res->nargs > 1 ? res->args[0] : 0,
            res->nargs > 1 ? res->args[1] : 0, res->len, want, j);
}

/* Fill the request of call k into c->data; its args into a. */
static size_t request_of(struct caller *c, unsigned i, unsigned k, uint32_t a[3])
{
    size_t len = call_len(k);
    a[0] = i, a[1] = k, a[2] = call_key(i, k);
    tu_pattern(c->data, a[2], len);
    return len;
}

/* End the oldest outstanding call: tested until it ends, or waited for. */
static void finish_oldest(struct caller *c, unsigned i)
{
    struct call_slot *s = &c->slot[c->head];
    double end = tu_now_s() + CALL_MS / 1000.0;
    int rc;
    if (s->k % 2)
        while ((rc = am_call_test(cl_ep, s->id)) == -EINPROGRESS && tu_now_s() < end)
            tu_yield();
    else
        while ((rc = am_call_wait(cl_ep, s->id, 1000)) == -EINPROGRESS && tu_now_s() < end)
            ;
    check_reply(c, i, s->k, rc, &s->res);
    c->head = (c->head + 1) % CALL_BATCH;
    c->n--;
}

static void started_call(struct caller *c, unsigned i, unsigned k)
{
    if (c->n == CALL_BATCH)
        finish_oldest(c, i);
    struct call_slot *s = &c->slot[(c->head + c->n) % CALL_BATCH];
    uint32_t a[3];
    size_t len = request_of(c, i, k, a);
    s->k = k;
    s->res = (struct am_result){.data = s->buf, .cap = CALL_CAP};
    int rc = am_call_start(cl_ep, 0, H_ECHO, a, 3, c->data, len, &s->res, CALL_MS, &s->id);
    if (rc != 0)
        check_reply(c, i, k, rc, &s->res);
    else
        c->n++;
}

static void blocking_call(struct caller *c, unsigned i, unsigned k)
{
    uint32_t a[3];
    size_t len = request_of(c, i, k, a);
    static _Thread_local char buf[CALL_CAP];
    struct am_result res = {.data = buf, .cap = CALL_CAP};
    check_reply(c, i, k, am_call(cl_ep, 0, H_ECHO, a, 3, c->data, len, &res, CALL_MS),
                &res);
}

/* A call to the parked handler: -ETIMEDOUT, from its start (it waited for
 * a record and never went) or from its wait (it went: its reply comes late). */
static void park_call(struct caller *c, unsigned i, unsigned k)
{
    uint32_t a[3];
    request_of(c, i, k, a);
    struct am_result res = {0};
    am_call_t id;
    int rc = am_call_start(cl_ep, 0, H_PARK, a, 3, NULL, 0, &res, PARK_MS, &id);
    if (rc == 0) {
        c->parks_sent++;
        while ((rc = am_call_wait(cl_ep, id, -1)) == -EINPROGRESS)
            ;
    }
    AO_store_release(&sh->timed_out[i][k], 1);
    c->parks++;
    if (rc != -ETIMEDOUT && c->bad++ == 0)
        tu_error(&sh->err, "thread %u: parked call %u gave %s", i, k, am_err_name(rc));
}

static void *call_thread(void *arg)
{
    unsigned i = (unsigned)(intptr_t)arg;
    struct caller *c = &callers[i];
    pin_thread((int)i);
    pthread_barrier_wait(&bar);
    for (unsigned k = 0; k < sh->n; k++) {
        if (k % PARK_EVERY == PARK_EVERY - 1) {
            while (c->n)
                finish_oldest(c, i);
            park_call(c, i, k);
        } else if (k % 3 == 0)
            blocking_call(c, i, k);
        else
            started_call(c, i, k);
        tu_widen(k * CALL_THREADS + i);
    }
    while (c->n)
        finish_oldest(c, i);
    return NULL;
}

/* Poll the client until `want` late replies have come (60 s at most). */
static unsigned long late_replies(unsigned long want)
{
    double end = tu_now_s() + 60;
    while (am_ep_late_replies(cl_ep) < want && tu_now_s() < end)
        am_wait(cl_ep, 50);
    return am_ep_late_replies(cl_ep);
}

START_TEST(calls_from_threads)
{
    sh->k = kinds[_i];
    sh->n = 160 * (unsigned)tu_stress_factor();
    if (sh->n > MAX_K)
        sh->n = MAX_K;
    snprintf(what, sizeof what, "%s/%s: %d threads call", sh->k.queue, sh->k.claim,
             CALL_THREADS);
    ep_name(sh->rx, "csrv", _i);
    ep_name(sh->tx, "ccl", _i);
    pid_t p = tu_spawn(call_server, NULL, 1);
    ck_assert_msg(p > 0, "%s: fork", what);
    tu_assert_flag(&sh->ready, 1, 20, "the server", what, &sh->err);
    struct am_ep_opts o = opts_of(&sh->k, 8); /* room for 8 calls at a time */
    ck_assert_int_eq(am_ep_create(sh->tx, &o, &cl_ep), 0);
    ck_assert_int_eq(am_ep_map(cl_ep, 0, sh->rx), 0);
    ck_assert_int_eq(am_ep_share(cl_ep), 0);
    memset(callers, 0, sizeof callers);
    pthread_t t[CALL_THREADS];
    pthread_barrier_init(&bar, NULL, CALL_THREADS);
    start_threads(t, CALL_THREADS, call_thread);
    unsigned long ok = 0, bad = 0, parks = 0, sent = 0;
    for (int i = 0; i < CALL_THREADS; i++) {
        pthread_join(t[i], NULL);
        ok += callers[i].ok, bad += callers[i].bad;
        parks += callers[i].parks, sent += callers[i].parks_sent;
    }
    unsigned long late = late_replies(sent);
    ck_assert_int_eq(am_call_test(cl_ep, 12345), -EINVAL);
    AO_store_release(&sh->done, 1);
    tu_assert_exit0(tu_reap(p, 30), "server", what, &sh->err);
    ck_assert_int_eq(am_ep_destroy(cl_ep), 0);
    tu_assert_no_errors(what, &sh->err);
    unsigned long calls = CALL_THREADS * (unsigned long)sh->n;
    ck_assert_msg(bad == 0 && ok + parks == calls,
                  "%s: %lu of %lu calls got their own reply, %lu parked, %lu wrong", what,
                  ok, calls - parks, parks, bad);
    ck_assert_msg(late == sent, "%s: %lu late replies counted for %lu parked calls sent",
                  what, late, sent);
    ck_assert_msg(AO_load(&sh->served) == ok + sent, "%s: the server ran %lu of %lu", what,
                  (unsigned long)AO_load(&sh->served), ok + sent);
    if (getenv("SHMAM_VERBOSE"))
        printf("%s: %lu calls, %lu parked (%lu sent, %lu late replies)\n", what, calls,
               parks, sent, late);
    tu_assert_clean(what);
}
END_TEST

static Suite *threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tu_tcase(s, "send", 300);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, threads_send_in_order, 0, N_KINDS);
    tc = tu_tcase(s, "serve", 300);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, serving_threads_once, 0, N_KINDS);
    tc = tu_tcase(s, "kept", 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, kept_reply_other_thread, 0, 3 * N_KINDS);
    tc = tu_tcase(s, "fd", 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, epoll_across_processes, 0, N_KINDS);
    tcase_add_loop_test(tc, wake_ends_wait, 0, 2);
    tc = tu_tcase(s, "misuse", 60);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, misuse_errors);
    tcase_add_loop_test(tc, stale_token_refused, 0, 2);
    tc = tu_tcase(s, "calls", 300);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, calls_from_threads, 0, N_KINDS);
    return s;
}

int main(void)
{
    tu_run_init("th");
    return tu_run_suite(threads_suite(), "check_threads");
}
