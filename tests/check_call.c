/*
 * check_call.c - calls (am_call, am_call_start/test/wait/cancel): every call
 * ends, and a server never waits for one client; am_wait and signals; send
 * deadlines.  Real processes: a server, its callers, killed and stopped at
 * chosen points.  Each test runs for the queue kinds mpsc and bqueue (a
 * per-sender channel kind) on both backends.
 *
 *   server_killed        a caller asleep in am_call(-1) whose server is
 *                        SIGKILLed in the handler gets -EPIPE within
 *                        abandon_ms of the kill (plus KILL_SLACK_MS)
 *   no_such_handler      a call to a handler the server never set: -ENOENT,
 *                        and the server reports no corrupt packet
 *   reply_too_long       a reply longer than the caller's cap (500 bytes: a
 *                        cap that takes a room; check_call_inline has the
 *                        inline ones): -EMSGSIZE to the caller and from the
 *                        server's am_reply_long
 *   unreplied_ends_empty a handler that returns without replying: the call
 *                        ends with 0, no args, no bytes
 *   stopped_server       a call to a SIGSTOPped server ends with -ETIMEDOUT at
 *                        its deadline (not before; bounded generously)
 *   late_reply_dropped   a call cancelled while its handler runs: its reply,
 *                        when it comes, is dropped and counted, and the next
 *                        call gets its own reply
 *   call_limit_waits     a caller with reply room for 4 calls (packets 4) to a
 *                        stopped server: 4 start, the 5th waits for room and
 *                        ends at its deadline (-ETIMEDOUT)
 *   caller_killed_mid_call  an anonymous caller SIGKILLed (parked by a hook)
 *                        with its reply room reserved and its request not
 *                        sent, with a long request staged in the server's
 *                        heap, or with the request's packet claimed and not
 *                        filled: another caller's calls after it all come
 *                        back right, and the server ends holding no heap
 *                        block and no kept reply (reclaim asked, as a sender
 *                        finding the heap full does, for up to RECLAIM_S)
 *   server_killed_reply_written  a server SIGKILLed (parked by a hook) after
 *                        writing a call's reply into the caller's room and
 *                        before sending the reply: the caller, asleep in
 *                        am_call(-1), gets -EPIPE within abandon_ms (plus
 *                        KILL_SLACK_MS), its reply heap has no block live
 *                        (the room is given back), and a call to a new
 *                        server comes back right
 *   random_kills         KILL_REPS rounds each: a caller makes 1000 calls,
 *                        WINDOW outstanding, short to long, and the server
 *                        (or, beside another caller, the caller) is
 *                        SIGKILLed once a random call has ended.  Every call
 *                        ends exactly once, with its own reply or -EPIPE,
 *                        and none comes back after one got -EPIPE; a killed
 *                        caller's server serves the other caller on and
 *                        holds nothing after.  Most kills must land mid-run.
 *   wait_eintr           a signal whose handler runs while the caller sleeps
 *                        ends am_wait(-1), am_wait(30000) and am_call(-1) with
 *                        -EINTR, with and without SA_RESTART
 *   signal_wakes         SIGNAL_REPS rounds of a SIGALRM at a random instant
 *                        (some before the wait: raised at once; many in its
 *                        spin, widened to 40 ms) whose handler sets a flag
 *                        and calls am_ep_wake: a do-am_wait-while-!flag loop
 *                        and an am_call(-1) to a server that holds the call
 *                        each end (the call with -EINTR) within WAKE_BOUND_S
 *                        of the signal, with and without SA_RESTART
 *   send_deadline        a send to a stopped receiver's full queue returns
 *                        -ETIMEDOUT after send_timeout_ms, not before
 *   slow_client          client A fills its own reply queue with a second
 *                        server's plain replies, starts calls and stops
 *                        itself (SIGSTOP) with them outstanding; 8 other
 *                        clients' calls all complete meanwhile (the server
 *                        keeps A's replies instead of waiting for room); run
 *                        again, A starts the rest of its 1000 calls (as many
 *                        at a time as its room takes) and all end with their
 *                        replies.  Counts only: the p99 latency of the
 *                        8 clients with and without A stopped is printed under
 *                        SHMAM_VERBOSE.
 *
 * No test judges speed; time bounds have stated, generous slack.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

enum { H_ECHO = 1, H_PARK, H_SILENT, H_HOLD, H_PLAIN, H_NEVER_SET = 200 };

#define KILL_SLACK_MS 10000 /* scheduler slack for "within abandon_ms" */
#define ABANDON_MS 100
#define N_B 8   /* slow_client: the other clients */
#define K_B 100 /* slow_client: calls each, per phase */
#define A_CALLS 1000
#define A_PLAIN 256  /* more than A's reply queue holds */
#define A_HELD 48    /* calls A has outstanding when it stops: fewer than its room */
#define N_CALLS 1000 /* random_kills: calls a caller makes */
#define WINDOW 4     /* random_kills: calls it keeps outstanding */
#define CAP 10000    /* random_kills: reply bytes a call takes */
#define UNSET 1      /* random_kills: a call that has not ended */
#define RECLAIM_S 10 /* the longest wait for the server's heap reclaim */

static const char *const kinds[] = {"mpsc", "bqueue"};
static char what[128];

struct shared {
    char srv[AM_NAME_MAX], srv2[AM_NAME_MAX], cli[N_B + 1][AM_NAME_MAX];
    int kind, backend, mode;
    AO_t srv_ready, srv2_ready, parked, release, done, waiting, phase;
    AO_t cli_ready, b_done[2], a_started, a_progress, s2_go, s2_replied;
    int rc[4];
    int reply_rc;
    double t_kill, t_ret, took_ms;
    unsigned long srv_bad, late;
    unsigned long b_ok[2], a_ok;
    float lat[2][N_B][K_B]; /* slow_client: us per call */
    /* kills: the hook a victim parks at; the server's heap check; outcomes */
    int hook, heap_check, srv_owed;
    unsigned long srv_live, cli_live;
    AO_t progress, surv_ok, surv_bad;
    int out[N_CALLS];
    struct tu_errors err;
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
    sh->kind = i / 2;
    sh->backend = i % 2;
    snprintf(what, sizeof what, "%s/%s: %s", kinds[sh->kind], tu_backend_name(sh->backend),
             test);
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, sh->backend);
    tu_ep_name(sh->srv2, sizeof sh->srv2, "srv2", -1, sh->backend);
    for (int k = 0; k <= N_B; k++) {
        char role[16];
        snprintf(role, sizeof role, "cli%d", k);
        tu_ep_name(sh->cli[k], sizeof sh->cli[k], role, -1, sh->backend);
    }
}

static am_ep_t *create(const char *name, unsigned packets, int send_timeout_ms)
{
    struct am_ep_opts o = {.shm = tu_backend_name(sh->backend),
                           .queue = kinds[sh->kind],
                           .packets = packets,
                           .abandon_ms = ABANDON_MS,
                           .send_timeout_ms = send_timeout_ms};
    am_ep_t *ep;
    int rc = am_ep_create(name, &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "create %s: %s", name, am_strerror(rc));
        _exit(2);
    }
    return ep;
}

static void map(am_ep_t *ep, unsigned idx, const char *name)
{
    int rc = tu_map_when_there(ep, idx, name, 20);
    if (rc != 0) {
        tu_error(&sh->err, "map %s: %s", name, am_strerror(rc));
        _exit(2);
    }
}

static pid_t spawn(void (*fn)(void *), int cpu)
{
    pid_t p = tu_spawn(fn, NULL, cpu);
    ck_assert_msg(p > 0, "%s: fork", what);
    return p;
}

/* ---- the server ---- */

static void echo_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    int rc = am_reply_long(t, 0, d, l, a, n);
    if (rc != 0)
        sh->reply_rc = rc;
}

static void park_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_store_release(&sh->parked, 1);
    for (;;)
        pause(); /* until killed */
}

static void silent_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
}

/* Reply only once the test says so (the caller has cancelled meanwhile). */
static void hold_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_store_release(&sh->parked, 1);
    tu_wait_flag(&sh->release, 1, 60);
    uint32_t r = a[0] + 1000;
    am_reply(t, 0, &r, 1);
}

static void plain_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_reply(t, H_PLAIN, a, n); /* blocks while its caller's queue is full */
    AO_fetch_and_add1(&sh->s2_replied);
}

/* Blocks live in queue qid's heap of ep (a snapshot). */
static unsigned long heap_live(am_ep_t *ep, enum am_qid qid)
{
    struct am_heap_stats st;
    am_heap_stats(&ep->own.q[qid].heap, &st);
    return st.blocks_live;
}

/* The server's leftovers once its callers are done (sh->heap_check): blocks
 * live in its heaps, after asking for the reclaim (as a sender finding the
 * heap full does) and polling for up to RECLAIM_S, and replies it keeps for
 * callers (ep->owed). */
static void heap_check(am_ep_t *ep)
{
    double end = tu_now_s() + RECLAIM_S;
    unsigned long live;
    while ((live = heap_live(ep, AM_REQUEST) + heap_live(ep, AM_REPLY)) != 0 &&
           tu_now_s() < end) {
        AO_store(&ep->own.shared->reclaim[AM_REQUEST], 1);
        AO_store(&ep->own.shared->reclaim[AM_REPLY], 1);
        for (int i = 0; i < 50; i++)
            am_poll(ep);
        tu_sleep_ms(1);
    }
    sh->srv_live = live;
    sh->srv_owed = ep->owed != NULL;
}

/* A victim's test hook: park (until killed) at sh->hook, once armed. */
static int victim_armed;
static void park_hook(enum am_hook where)
{
    if (!victim_armed || (int)where != sh->hook)
        return;
    victim_armed = 0;
    AO_store_release(&sh->parked, 1);
    for (;;)
        pause();
}

static void serve(am_ep_t *ep, volatile AO_t *ready)
{
    AO_store_release(ready, 1);
    while (!AO_load(&sh->done))
        am_wait(ep, 50);
    sh->srv_bad = am_ep_bad_packets(ep);
    if (sh->heap_check)
        heap_check(ep);
}

static void server(void *arg)
{
    am_ep_t *ep = create(sh->srv, 0, 0);
    am_set_handler(ep, H_ECHO, echo_h);
    am_set_handler(ep, H_PARK, park_h);
    am_set_handler(ep, H_SILENT, silent_h);
    am_set_handler(ep, H_HOLD, hold_h);
    if (sh->hook == AM_HOOK_CALL_WRITTEN) /* the victim is the server */
        am__claim_stall_hook = park_hook, victim_armed = 1;
    serve(ep, &sh->srv_ready);
    int rc = am_ep_destroy(ep);
    if (rc != 0)
        tu_error(&sh->err, "the server's am_ep_destroy: %s", am_err_name(rc));
}

/* A second server (server_written_killed: the next one the caller calls). */
static void echo_server2(void *arg)
{
    am_ep_t *ep = create(sh->srv2, 0, 0);
    am_set_handler(ep, H_ECHO, echo_h);
    serve(ep, &sh->srv2_ready);
    am_ep_destroy(ep);
}

/* Server 2 (slow_client): takes A's plain requests into a queue that holds
 * them all, and answers them only once told to. */
static void server2(void *arg)
{
    am_ep_t *ep = create(sh->srv2, 2 * A_PLAIN, 0);
    am_set_handler(ep, H_PLAIN, plain_h);
    AO_store_release(&sh->srv2_ready, 1);
    tu_wait_flag(&sh->s2_go, 1, 120);
    serve(ep, &sh->srv2_ready);
    am_ep_destroy(ep);
}

/* Start the server on CPU 0 and wait until it is ready. */
static pid_t start_server(void)
{
    pid_t p = spawn(server, 0);
    tu_assert_flag(&sh->srv_ready, 1, 20, "the server to start", what, &sh->err);
    return p;
}

/* End a test: stop the server, reap everyone, check nothing is left. */
static void finish(pid_t srv, pid_t cli)
{
    if (cli > 0)
        tu_assert_exit0(tu_reap(cli, 60), "caller", what, &sh->err);
    AO_store_release(&sh->done, 1);
    if (srv > 0)
        tu_assert_exit0(tu_reap(srv, 30), "server", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}

/* A caller: its endpoint with the server mapped at 0 (packets: its queues'). */
static am_ep_t *caller(unsigned packets)
{
    am_ep_t *ep = create(sh->cli[0], packets, 0);
    map(ep, 0, sh->srv);
    AO_store_release(&sh->cli_ready, 1);
    return ep;
}

/* ---- every call ends ---- */

static void kill_caller(void *arg)
{
    am_ep_t *ep = caller(0);
    struct am_result res = {0};
    uint32_t x = 1;
    AO_store_release(&sh->waiting, 1);
    sh->rc[0] = am_call(ep, 0, H_PARK, &x, 1, NULL, 0, &res, -1);
    sh->t_ret = tu_now_s();
    am_ep_destroy(ep);
}

/* Once caller cli sleeps (in the futex, or /proc cannot tell: after a
 * while), SIGKILL server srv, noting when in sh->t_kill, and reap it. */
static void kill_when_asleep(pid_t srv, pid_t cli)
{
    for (int i = 0; i < 20000 && tu_in_futex(cli) == 0; i++)
        tu_sleep_ms(1);
    if (tu_in_futex(cli) < 0)
        tu_sleep_ms(300);
    sh->t_kill = tu_now_s();
    kill(srv, SIGKILL);
    tu_reap(srv, 10);
}

START_TEST(server_killed)
{
    combo(_i, "caller asleep when its server is killed");
    pid_t srv = start_server();
    pid_t cli = spawn(kill_caller, 1);
    tu_assert_flag(&sh->parked, 1, 20, "the handler to park", what, &sh->err);
    kill_when_asleep(srv, cli);
    tu_assert_exit0(tu_reap(cli, 60), "caller", what, &sh->err);
    double ms = (sh->t_ret - sh->t_kill) * 1000;
    ck_assert_msg(sh->rc[0] == -EPIPE, "%s: am_call returned %s, want -EPIPE", what,
                  am_err_name(sh->rc[0]));
    ck_assert_msg(ms < ABANDON_MS + KILL_SLACK_MS, "%s: -EPIPE %.0f ms after the kill",
                  what, ms);
    if (getenv("SHMAM_VERBOSE"))
        printf("call: %s: -EPIPE %.1f ms after the kill (abandon_ms %d)\n", what, ms,
               ABANDON_MS);
    char first[128];
    tu_leftovers(sh->srv, 1, first, sizeof first); /* the killed server's segment */
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* Caller modes: one call each, its result into sh->rc[0]. */
enum { M_NOSUCH, M_TOO_LONG, M_SILENT, M_STOPPED };

static void one_caller(void *arg)
{
    am_ep_t *ep = caller(0);
    char buf[1024], data[600];
    memset(data, 7, sizeof data);
    struct am_result res = {buf, 500, 99, {0}, 99};
    uint32_t x = 5;
    tu_wait_flag(&sh->phase, 1, 60);
    double t0 = tu_now_s();
    switch (sh->mode) {
    case M_NOSUCH:
        sh->rc[0] = am_call(ep, 0, H_NEVER_SET, &x, 1, NULL, 0, &res, 20000);
        break;
    case M_TOO_LONG:
        sh->rc[0] = am_call(ep, 0, H_ECHO, &x, 1, data, sizeof data, &res, 20000);
        break;
    case M_SILENT:
        sh->rc[0] = am_call(ep, 0, H_SILENT, &x, 1, data, 8, &res, 20000);
        sh->rc[1] = (int)res.len, sh->rc[2] = res.nargs;
        break;
    case M_STOPPED:
        sh->rc[0] = am_call(ep, 0, H_ECHO, &x, 1, data, 8, &res, 500);
        break;
    }
    sh->took_ms = (tu_now_s() - t0) * 1000;
    am_ep_destroy(ep);
}

static void run_one(int mode)
{
    sh->mode = mode;
    pid_t srv = start_server();
    pid_t cli = spawn(one_caller, 1);
    tu_assert_flag(&sh->cli_ready, 1, 20, "the caller to start", what, &sh->err);
    if (mode == M_STOPPED)
        kill(srv, SIGSTOP);
    AO_store_release(&sh->phase, 1);
    tu_assert_exit0(tu_reap(cli, 60), "caller", what, &sh->err);
    if (mode == M_STOPPED)
        kill(srv, SIGCONT);
    finish(srv, -1);
}

START_TEST(no_such_handler)
{
    combo(_i, "a call to a handler never set");
    run_one(M_NOSUCH);
    ck_assert_msg(sh->rc[0] == -ENOENT, "%s: am_call returned %s, want -ENOENT", what,
                  am_err_name(sh->rc[0]));
    ck_assert_msg(sh->srv_bad == 0, "%s: the server counted %lu corrupt packets", what,
                  sh->srv_bad);
}
END_TEST

START_TEST(reply_too_long)
{
    combo(_i, "a reply longer than the caller's cap");
    run_one(M_TOO_LONG);
    ck_assert_msg(sh->rc[0] == -EMSGSIZE, "%s: am_call returned %s, want -EMSGSIZE", what,
                  am_err_name(sh->rc[0]));
    ck_assert_msg(sh->reply_rc == -EMSGSIZE,
                  "%s: the server's am_reply_long returned %s, want -EMSGSIZE", what,
                  am_err_name(sh->reply_rc));
}
END_TEST

START_TEST(unreplied_ends_empty)
{
    combo(_i, "a handler that does not reply");
    run_one(M_SILENT);
    ck_assert_msg(sh->rc[0] == 0 && sh->rc[1] == 0 && sh->rc[2] == 0,
                  "%s: am_call returned %s, %d bytes, %d args; want 0, 0, 0", what,
                  am_err_name(sh->rc[0]), sh->rc[1], sh->rc[2]);
}
END_TEST

START_TEST(stopped_server)
{
    combo(_i, "a call to a stopped server");
    run_one(M_STOPPED);
    ck_assert_msg(sh->rc[0] == -ETIMEDOUT, "%s: am_call returned %s, want -ETIMEDOUT", what,
                  am_err_name(sh->rc[0]));
    ck_assert_msg(sh->took_ms >= 500 && sh->took_ms < 500 + KILL_SLACK_MS,
                  "%s: -ETIMEDOUT after %.0f ms, deadline 500", what, sh->took_ms);
}
END_TEST

static void late_caller(void *arg)
{
    am_ep_t *ep = caller(0);
    struct am_result r1 = {0}, r2 = {0};
    uint32_t x1 = 7, x2 = 8;
    am_call_t id;
    sh->rc[0] = am_call_start(ep, 0, H_HOLD, &x1, 1, NULL, 0, &r1, 60000, &id);
    tu_wait_flag(&sh->parked, 1, 60);
    sh->rc[1] = am_call_cancel(ep, id);
    AO_store_release(&sh->release, 1);
    sh->rc[2] = am_call(ep, 0, H_ECHO, &x2, 1, NULL, 0, &r2, 20000);
    if (sh->rc[2] == 0 && (r2.nargs != 1 || r2.args[0] != 8))
        tu_error(&sh->err, "the second call got args %d: %u, want 1: 8", r2.nargs,
                 r2.args[0]);
    for (int i = 0; i < 2000 && am_ep_late_replies(ep) == 0; i++)
        am_wait(ep, 10);
    sh->late = am_ep_late_replies(ep);
    sh->rc[3] = am_call_test(ep, id);
    am_ep_destroy(ep);
}

START_TEST(late_reply_dropped)
{
    combo(_i, "a reply to a cancelled call");
    pid_t srv = start_server();
    pid_t cli = spawn(late_caller, 1);
    finish(srv, cli);
    ck_assert_msg(sh->rc[0] == 0 && sh->rc[1] == -ECANCELED && sh->rc[2] == 0,
                  "%s: start %s, cancel %s (want ECANCELED), next call %s", what,
                  am_err_name(sh->rc[0]), am_err_name(sh->rc[1]), am_err_name(sh->rc[2]));
    ck_assert_msg(sh->late == 1, "%s: %lu late replies counted, want 1", what, sh->late);
    ck_assert_msg(sh->rc[3] == -EINVAL, "%s: the cancelled id was not forgotten: %s", what,
                  am_err_name(sh->rc[3]));
}
END_TEST

static void limit_caller(void *arg)
{
    am_ep_t *ep = caller(4);
    struct am_result res[5] = {{0}};
    am_call_t id[5];
    uint32_t x = 1;
    tu_wait_flag(&sh->phase, 1, 60);
    for (int i = 0; i < 4; i++)
        if (am_call_start(ep, 0, H_ECHO, &x, 1, NULL, 0, &res[i], 60000, &id[i]) != 0)
            tu_error(&sh->err, "call %d did not start", i);
    double t0 = tu_now_s();
    sh->rc[0] = am_call_start(ep, 0, H_ECHO, &x, 1, NULL, 0, &res[4], 300, &id[4]);
    sh->took_ms = (tu_now_s() - t0) * 1000;
    for (int i = 0; i < 4; i++)
        am_call_cancel(ep, id[i]);
    am_ep_destroy(ep);
}

START_TEST(call_limit_waits)
{
    combo(_i, "a fifth call with room for four");
    pid_t srv = start_server();
    pid_t cli = spawn(limit_caller, 1);
    tu_assert_flag(&sh->cli_ready, 1, 20, "the caller to start", what, &sh->err);
    kill(srv, SIGSTOP);
    AO_store_release(&sh->phase, 1);
    tu_assert_exit0(tu_reap(cli, 60), "caller", what, &sh->err);
    kill(srv, SIGCONT);
    finish(srv, -1);
    ck_assert_msg(sh->rc[0] == -ETIMEDOUT && sh->took_ms >= 300,
                  "%s: the fifth am_call_start returned %s after %.0f ms, want -ETIMEDOUT "
                  "after 300",
                  what, am_err_name(sh->rc[0]), sh->took_ms);
}
END_TEST

/* ---- kills at chosen points ---- */

/* An anonymous caller (nothing of it can outlive it) with the server at 0. */
static am_ep_t *anon_caller(void)
{
    struct am_ep_opts o = {.shm = tu_backend_name(sh->backend),
                           .queue = kinds[sh->kind],
                           .abandon_ms = ABANDON_MS};
    am_ep_t *ep;
    int rc = am_ep_create(NULL, &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "create an anonymous caller: %s", am_strerror(rc));
        _exit(2);
    }
    map(ep, 0, sh->srv);
    return ep;
}

/* Call echo with call i's pattern of len bytes; 1 if it came back right. */
static int echo_ok(am_ep_t *ep, unsigned dest, uint32_t i, size_t len, int timeout_ms,
                   int *rc)
{
    static char data[CAP], back[CAP];
    tu_pattern(data, i, len);
    struct am_result res = {back, sizeof back, 0, {0}, 0};
    *rc = am_call(ep, dest, H_ECHO, &i, 1, data, len, &res, timeout_ms);
    return *rc == 0 && res.nargs == 1 && res.args[0] == i && res.len == len &&
           memcmp(back, data, len) == 0;
}

/* Calls echo (bulk and long requests and replies) until phase 2, then
 * SURVIVOR_AFTER more; counts those that came back right and the rest. */
#define SURVIVOR_AFTER 100
static void survivor(void *arg)
{
    am_ep_t *ep = caller(0);
    int rc;
    for (uint32_t k = 0, after = 0; after < SURVIVOR_AFTER; k++) {
        after += AO_load_acquire(&sh->phase) >= 2;
        if (echo_ok(ep, 0, k, k % 2 ? 3000 : 9000, 20000, &rc))
            AO_fetch_and_add1(&sh->surv_ok);
        else if (AO_fetch_and_add1(&sh->surv_bad) == 0)
            tu_error(&sh->err, "survivor: call %u ended with %s", k, am_err_name(rc));
    }
    am_ep_destroy(ep);
}

/* Parked at sh->hook in its one call (a long request, a room of 1024 bytes),
 * until killed. */
static void parked_caller(void *arg)
{
    am_ep_t *ep = anon_caller();
    am__claim_stall_hook = park_hook;
    victim_armed = 1;
    int rc;
    echo_ok(ep, 0, 1, 9000, 20000, &rc);
    tu_error(&sh->err, "the caller did not park: its call ended with %s", am_err_name(rc));
}

/* After a caller died in a call: the survivor's calls after the death all
 * came back right, the server holds nothing for anyone (heap, kept
 * replies), and nothing of the test is left. */
static void assert_server_went_on(pid_t srv, pid_t surv)
{
    AO_store_release(&sh->phase, 2);
    tu_assert_exit0(tu_reap(surv, 120), "survivor", what, &sh->err);
    sh->heap_check = 1;
    finish(srv, -1);
    ck_assert_msg(sh->surv_bad == 0 && sh->surv_ok >= SURVIVOR_AFTER,
                  "%s: the other caller's calls: %lu right, %lu not", what,
                  (unsigned long)sh->surv_ok, (unsigned long)sh->surv_bad);
    ck_assert_msg(sh->srv_live == 0 && !sh->srv_owed,
                  "%s: the server holds %lu heap blocks and %s replies after %d s", what,
                  sh->srv_live, sh->srv_owed ? "kept" : "no", RECLAIM_S);
}

static const int caller_points[] = {AM_HOOK_CALL_ROOMED, AM_HOOK_LONG_STAGED,
                                    AM_HOOK_FILLING};
static const char *const caller_point_names[] = {"room reserved, request not sent",
                                                 "request staged in the server's heap",
                                                 "request's packet claimed, not filled"};

START_TEST(caller_killed_mid_call)
{
    int pt = _i % 3;
    combo(_i / 3, "a caller killed with its call half made: ");
    strncat(what, caller_point_names[pt], sizeof what - strlen(what) - 1);
    sh->hook = caller_points[pt];
    pid_t srv = start_server();
    pid_t surv = spawn(survivor, 1);
    pid_t vic = spawn(parked_caller, 1);
    tu_assert_flag(&sh->parked, 1, 20, "the caller to park", what, &sh->err);
    kill(vic, SIGKILL);
    tu_reap(vic, 10);
    assert_server_went_on(srv, surv);
}
END_TEST

/* A call asleep when its server dies with the reply's data in the room but
 * the reply not sent: -EPIPE, the room given back, and a call to a new
 * server works. */
static void written_caller(void *arg)
{
    am_ep_t *ep = caller(0);
    int rc;
    AO_store_release(&sh->waiting, 1);
    if (echo_ok(ep, 0, 1, 1000, -1, &rc))
        tu_error(&sh->err, "the call came back from a server parked before its reply");
    sh->rc[0] = rc;
    sh->t_ret = tu_now_s();
    sh->cli_live = heap_live(ep, AM_REPLY);
    tu_wait_flag(&sh->srv2_ready, 1, 60);
    map(ep, 1, sh->srv2);
    if (!echo_ok(ep, 1, 2, 1000, 20000, &rc))
        tu_error(&sh->err, "the call to the next server: %s", am_err_name(rc));
    am_ep_destroy(ep);
}

START_TEST(server_killed_reply_written)
{
    combo(_i, "a server killed with the reply written into the room, not sent");
    sh->hook = AM_HOOK_CALL_WRITTEN;
    pid_t srv = start_server();
    pid_t cli = spawn(written_caller, 1);
    tu_assert_flag(&sh->parked, 1, 20, "the server to park", what, &sh->err);
    kill_when_asleep(srv, cli);
    pid_t srv2 = spawn(echo_server2, 0);
    tu_assert_exit0(tu_reap(cli, 60), "caller", what, &sh->err);
    char first[128];
    tu_leftovers(sh->srv, 1, first, sizeof first); /* the killed server's segment */
    finish(srv2, -1);
    double ms = (sh->t_ret - sh->t_kill) * 1000;
    ck_assert_msg(sh->rc[0] == -EPIPE && ms < ABANDON_MS + KILL_SLACK_MS,
                  "%s: am_call returned %s %.0f ms after the kill, want -EPIPE", what,
                  am_err_name(sh->rc[0]), ms);
    ck_assert_msg(sh->cli_live == 0, "%s: %lu blocks of the caller's reply heap live after",
                  what, sh->cli_live);
}
END_TEST

/* ---- kills at random points ---- */

/* Calls i = 0 .. N_CALLS-1 of echo, WINDOW outstanding, ended in order; each
 * end is recorded once in sh->out[i] (if `record`) and counted in
 * sh->progress.  Request and reply sizes: short, small, bulk, long. */
static const size_t call_sizes[] = {0, 64, 3000, 9000};
struct slot {
    am_call_t id;
    uint32_t i;
    int live;
    struct am_result res;
    char data[CAP], back[CAP];
};

static void call_ended_once(struct slot *s, int rc, int record)
{
    size_t len = call_sizes[s->i % 4];
    if (rc == 0 && (s->res.nargs != 1 || s->res.args[0] != s->i || s->res.len != len ||
                    memcmp(s->back, s->data, len) != 0))
        tu_error(&sh->err, "call %u: a reply not its own", s->i);
    if (record && sh->out[s->i] != UNSET)
        tu_error(&sh->err, "call %u ended twice (%s, then %s)", s->i,
                 am_err_name(sh->out[s->i]), am_err_name(rc));
    if (record)
        sh->out[s->i] = rc;
    s->live = 0;
    AO_fetch_and_add_release(&sh->progress, 1);
}

static void call_slot_end(am_ep_t *ep, struct slot *s, int record)
{
    int rc = am_call_wait(ep, s->id, -1); /* bounded by the call's deadline */
    call_ended_once(s, rc, record);
    if (am_call_test(ep, s->id) != -EINVAL)
        tu_error(&sh->err, "call %u: its id outlived its end", s->i);
}

static void calls_run(am_ep_t *ep, int record)
{
    static struct slot slots[WINDOW];
    for (uint32_t i = 0; i < N_CALLS + WINDOW; i++) {
        struct slot *s = &slots[i % WINDOW];
        if (s->live)
            call_slot_end(ep, s, record);
        if (i >= N_CALLS)
            continue;
        size_t len = call_sizes[i % 4];
        s->i = i;
        tu_pattern(s->data, i, len);
        s->res = (struct am_result){s->back, CAP, 0, {0}, 0};
        int rc = am_call_start(ep, 0, H_ECHO, &i, 1, s->data, len, &s->res, 30000, &s->id);
        s->live = 1;
        if (rc < 0)
            call_ended_once(s, rc, record); /* never started: ended now */
    }
}

static void random_caller(void *arg)
{
    am_ep_t *ep = arg ? anon_caller() : caller(0);
    calls_run(ep, !arg);
    am_ep_destroy(ep);
}

#define KILL_REPS 6

/* One round: the server killed once call `target` has ended. */
static int server_killed_at(int target)
{
    pid_t srv = start_server();
    pid_t cli = spawn(random_caller, 1);
    tu_assert_flag(&sh->progress, (AO_t)target, 120, "the calls to run", what, &sh->err);
    kill(srv, SIGKILL);
    tu_reap(srv, 10);
    tu_assert_exit0(tu_reap(cli, 120), "caller", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    int ok = 0, first_pipe = -1;
    for (int i = 0; i < N_CALLS; i++) {
        int rc = sh->out[i];
        ck_assert_msg(rc == 0 || rc == -EPIPE, "%s: call %d ended with %s", what, i,
                      rc == UNSET ? "nothing" : am_err_name(rc));
        ck_assert_msg(rc == -EPIPE || first_pipe < 0,
                      "%s: call %d came back after call %d's -EPIPE", what, i, first_pipe);
        ok += rc == 0;
        if (rc == -EPIPE && first_pipe < 0)
            first_pipe = i;
    }
    char first[128];
    tu_leftovers(sh->srv, 1, first, sizeof first); /* the killed server's segment */
    tu_assert_clean(what);
    return ok > 0 && ok < N_CALLS;
}

/* One round: a caller killed once its call `target` has ended, beside
 * another, whose calls all come back. */
static int caller_killed_at(int target)
{
    pid_t srv = start_server();
    pid_t surv = spawn(survivor, 1);
    pid_t vic = tu_spawn(random_caller, (void *)1, target % 2);
    ck_assert_msg(vic > 0, "%s: fork", what);
    tu_assert_flag(&sh->progress, (AO_t)target, 120, "the calls to run", what, &sh->err);
    kill(vic, SIGKILL);
    tu_reap(vic, 10);
    int mid = AO_load(&sh->progress) < N_CALLS;
    assert_server_went_on(srv, surv);
    tu_assert_clean(what);
    return mid;
}

START_TEST(random_kills)
{
    int victim_is_server = _i % 2;
    combo(_i / 2, victim_is_server ? "servers killed at random points of 1000 calls"
                                   : "callers killed at random points of 1000 calls");
    uint32_t seed = (uint32_t)getpid() ^ (uint32_t)(tu_now_s() * 1e6);
    int mid = 0;
    for (int rep = 0; rep < KILL_REPS; rep++) {
        int target = 1 + (int)(tu_mix32(seed, (uint32_t)rep) % (N_CALLS * 9 / 10));
        AO_store(&sh->srv_ready, 0), AO_store(&sh->done, 0), AO_store(&sh->cli_ready, 0);
        AO_store(&sh->phase, 0), AO_store(&sh->progress, 0);
        AO_store(&sh->surv_ok, 0), AO_store(&sh->surv_bad, 0);
        sh->heap_check = 0;
        for (int i = 0; i < N_CALLS; i++)
            sh->out[i] = UNSET;
        mid += victim_is_server ? server_killed_at(target) : caller_killed_at(target);
    }
    /* The kill landed in the middle of the calls (some ended, some not) in
     * most rounds, or the test did not test the race. */
    ck_assert_msg(2 * mid >= KILL_REPS, "%s: only %d of %d kills landed mid-run (seed %u)",
                  what, mid, KILL_REPS, seed);
}
END_TEST

/* ---- signals ---- */

static void on_signal(int sig)
{
}

static void eintr_caller(void *arg)
{
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = sh->mode ? SA_RESTART : 0};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    am_ep_t *ep = caller(0);
    struct am_result res = {0};
    uint32_t x = 1;
    AO_store_release(&sh->waiting, 1);
    sh->rc[0] = am_wait(ep, -1);
    AO_store_release(&sh->waiting, 2);
    sh->rc[1] = am_wait(ep, 30000);
    AO_store_release(&sh->waiting, 3);
    sh->rc[2] = am_call(ep, 0, H_HOLD, &x, 1, NULL, 0, &res, -1);
    AO_store_release(&sh->release, 1); /* the server's handler may go on */
    am_ep_destroy(ep);
}

/* Signal process p once it is asleep (or, if /proc cannot tell, soon). */
static void signal_asleep(pid_t p, AO_t step)
{
    tu_assert_flag(&sh->waiting, step, 20, "the caller to wait", what, &sh->err);
    for (int i = 0; i < 20000 && tu_in_futex(p) == 0; i++)
        tu_sleep_ms(1);
    tu_sleep_ms(tu_in_futex(p) < 0 ? 300 : 20);
    kill(p, SIGUSR1);
}

START_TEST(wait_eintr)
{
    combo(_i / 2, "a signal during am_wait and am_call");
    sh->mode = _i % 2;
    strncat(what, sh->mode ? " (SA_RESTART)" : "", sizeof what - strlen(what) - 1);
    pid_t srv = start_server();
    pid_t cli = spawn(eintr_caller, 1);
    for (AO_t step = 1; step <= 3; step++)
        signal_asleep(cli, step);
    finish(srv, cli);
    ck_assert_msg(sh->rc[0] == -EINTR && sh->rc[1] == -EINTR && sh->rc[2] == -EINTR,
                  "%s: am_wait(-1) %s, am_wait(30000) %s, am_call(-1) %s; want EINTR", what,
                  am_err_name(sh->rc[0]), am_err_name(sh->rc[1]), am_err_name(sh->rc[2]));
}
END_TEST

/* A SIGALRM at a random instant, whose handler sets a flag and calls
 * am_ep_wake (the self-pipe way), ends a wait wherever it lands: before the
 * wait, in its spin (made SPIN_WIDE_NS long) or in its sleep. */
#define SIGNAL_REPS 25
#define SPIN_WIDE_NS 40000000 /* 40 ms */
#define ALARM_MAX_US 70000    /* alarms land in [0, 70 ms) */
#define WAKE_BOUND_S 2.0      /* a wait ends this soon after its signal */
static am_ep_t *alarm_ep;
static volatile sig_atomic_t alarmed;
static double t_alarm;

static void on_alarm(int sig)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe, as is am_ep_wake */
    t_alarm = ts.tv_sec + ts.tv_nsec * 1e-9;
    alarmed = 1;
    am_ep_wake(alarm_ep);
}

/* Arm a one-shot SIGALRM `us` from now (0: at once, before the wait). */
static void alarm_in(long us)
{
    alarmed = 0;
    struct itimerval it = {{0, 0}, {us / 1000000, us % 1000000}};
    if (us == 0)
        raise(SIGALRM);
    else
        setitimer(ITIMER_REAL, &it, NULL);
}

/* The wait that began at t0 has ended: how long after its signal (the worst
 * into *worst), and did the signal land in its spin (1)? */
static int record_end(int rep, int which, double t0, double *worst)
{
    double late = tu_now_s() - t_alarm;
    if (!alarmed) {
        tu_error(&sh->err, "round %d: wait %d returned without its signal", rep, which);
        return 0;
    }
    if (late > *worst)
        *worst = late;
    return t_alarm > t0 && t_alarm < t0 + SPIN_WIDE_NS * 1e-9;
}

static void alarm_caller(void *arg)
{
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = sh->mode ? SA_RESTART : 0};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    am_ep_t *ep = alarm_ep = caller(0);
    uint32_t seed = (uint32_t)getpid(), x = 1;
    double worst = 0;
    int in_spin = 0;
    for (int rep = 0; rep < SIGNAL_REPS; rep++) {
        long us = tu_mix32(seed, (uint32_t)rep) % ALARM_MAX_US;
        alarm_in(rep % 8 == 0 ? 0 : us);
        ep->spin_ns = SPIN_WIDE_NS; /* widen the spin: many alarms land in it */
        double t0 = tu_now_s();
        do /* the self-pipe loop: the flag after each wait, never before */
            if (am_wait(ep, -1) < 0 && !alarmed)
                tu_error(&sh->err, "round %d: am_wait failed", rep);
        while (!alarmed);
        in_spin += record_end(rep, 0, t0, &worst);
        alarm_in(rep % 8 == 1 ? 0 : us);
        ep->spin_ns = SPIN_WIDE_NS;
        struct am_result res = {0};
        t0 = tu_now_s();
        int rc = am_call(ep, 0, H_HOLD, &x, 1, NULL, 0, &res, -1);
        if (rc != -EINTR)
            tu_error(&sh->err, "round %d: am_call returned %s, want -EINTR", rep,
                     am_err_name(rc));
        in_spin += record_end(rep, 1, t0, &worst);
    }
    sh->took_ms = worst * 1000;
    sh->rc[0] = in_spin;
    AO_store_release(&sh->release, 1); /* the server's handlers may go on */
    int rc = am_ep_destroy(ep);
    if (rc != 0)
        tu_error(&sh->err, "am_ep_destroy: %s", am_err_name(rc));
}

START_TEST(signal_wakes)
{
    combo(_i / 2, "a signal handler's am_ep_wake ends am_wait and am_call");
    sh->mode = _i % 2;
    strncat(what, sh->mode ? " (SA_RESTART)" : "", sizeof what - strlen(what) - 1);
    pid_t srv = start_server();
    pid_t cli = spawn(alarm_caller, 1);
    finish(srv, cli);
    ck_assert_msg(sh->took_ms < WAKE_BOUND_S * 1000,
                  "%s: a wait ended %.0f ms after its signal", what, sh->took_ms);
    ck_assert_msg(sh->rc[0] > 0, "%s: no signal of %d landed in a spin", what,
                  2 * SIGNAL_REPS);
    if (getenv("SHMAM_VERBOSE"))
        printf("call: %s: %d of %d signals in a spin, the latest end %.1f ms after its "
               "signal\n",
               what, sh->rc[0], 2 * SIGNAL_REPS, sh->took_ms);
}
END_TEST

/* ---- send deadlines ---- */

static void receiver(void *arg)
{
    am_ep_t *ep = create(sh->srv, 2, 0);
    AO_store_release(&sh->srv_ready, 1);
    tu_wait_flag(&sh->done, 1, 120); /* never polls */
    am_ep_destroy(ep);
}

static void deadline_sender(void *arg)
{
    am_ep_t *ep = create(sh->cli[0], 0, 300);
    map(ep, 0, sh->srv);
    int rc = 0, sent = 0;
    double t0 = 0;
    while (rc == 0 && sent < 1000) {
        t0 = tu_now_s();
        if ((rc = am_request(ep, 0, H_ECHO, NULL, 0)) == 0)
            sent++;
    }
    sh->took_ms = (tu_now_s() - t0) * 1000;
    sh->rc[0] = rc;
    sh->rc[1] = sent;
    am_ep_destroy(ep);
}

START_TEST(send_deadline)
{
    combo(_i, "a send to a stopped receiver's full queue");
    pid_t rcv = spawn(receiver, 0);
    tu_assert_flag(&sh->srv_ready, 1, 20, "the receiver to start", what, &sh->err);
    kill(rcv, SIGSTOP);
    pid_t snd = spawn(deadline_sender, 1);
    tu_assert_exit0(tu_reap(snd, 60), "sender", what, &sh->err);
    kill(rcv, SIGCONT);
    finish(rcv, -1);
    ck_assert_msg(sh->rc[0] == -ETIMEDOUT && sh->took_ms >= 300 &&
                      sh->took_ms < 300 + KILL_SLACK_MS,
                  "%s: after %d sends, %s after %.0f ms; want -ETIMEDOUT after 300 ms",
                  what, sh->rc[1], am_err_name(sh->rc[0]), sh->took_ms);
}
END_TEST

/* ---- a server never waits for one client ---- */

/* Client A, stopped with calls outstanding and its reply queue full of other
 * traffic: plain requests to server 2, which answers them once A has sent
 * them all (and stops polling), until A's reply queue is full; then A_HELD
 * short calls (fewer than its room, to a queue with room: am_call_start does
 * not poll, which would make room in A's queue), then A stops
 * itself (outside any send: a sender stopped inside a claim would hold up a
 * shared queue, which is not what this tests).  Run again, it starts its
 * other calls, as many at a time as its room takes, and collects them all. */
static void plain_back_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
}

/* Until server 2's count of replies has stood still for 200 ms. */
static void wait_s2_stalled(void)
{
    AO_t seen = (AO_t)-1;
    for (int i = 0; i < 600 && AO_load(&sh->s2_replied) != seen; i++) {
        seen = AO_load(&sh->s2_replied);
        tu_sleep_ms(200);
    }
}

static void client_a(void *arg)
{
    am_ep_t *ep = create(sh->cli[N_B], 0, 0);
    am_set_handler(ep, H_PLAIN, plain_back_h);
    map(ep, 0, sh->srv);
    map(ep, 1, sh->srv2);
    static struct am_result res[A_CALLS];
    static char buf[A_CALLS][16];
    static am_call_t id[A_CALLS];
    tu_wait_flag(&sh->phase, 2, 120);
    for (uint32_t i = 0; i < A_PLAIN; i++)
        if (am_request(ep, 1, H_PLAIN, &i, 1) != 0)
            tu_error(&sh->err, "A: plain request %u failed", i);
    AO_store_release(&sh->s2_go, 1);
    wait_s2_stalled();
    for (uint32_t i = 0; i < A_CALLS; i++) {
        res[i] = (struct am_result){buf[i], sizeof buf[i], 0, {0}, 0};
        if (am_call_start(ep, 0, H_ECHO, &i, 1, NULL, 0, &res[i], 120000, &id[i]) != 0)
            tu_error(&sh->err, "A: call %u did not start", i);
        AO_store_release(&sh->a_progress, i + 1);
        if (i + 1 == A_HELD) {
            AO_store_release(&sh->a_started, 1);
            raise(SIGSTOP);
        }
    }
    unsigned long ok = 0;
    for (int i = 0; i < A_CALLS; i++)
        ok += am_call_wait(ep, id[i], 120000) == 0 && res[i].nargs == 1 &&
              res[i].args[0] == (uint32_t)i;
    sh->a_ok = ok;
    am_ep_destroy(ep);
}

static void client_b(int b)
{
    am_ep_t *ep = create(sh->cli[b], 0, 0);
    map(ep, 0, sh->srv);
    for (uint32_t k = 0; k < 10; k++) { /* first contact, first rooms: not timed */
        struct am_result res = {0};
        am_call(ep, 0, H_ECHO, &k, 1, NULL, 0, &res, 30000);
    }
    for (int ph = 0; ph < 2; ph++) {
        tu_wait_flag(&sh->phase, (AO_t)(ph == 0 ? 1 : 3), 120);
        unsigned long ok = 0;
        for (uint32_t k = 0; k < K_B; k++) {
            uint32_t args[2] = {(uint32_t)b, k}, data[2] = {k, ~k}, back[4];
            struct am_result res = {back, sizeof back, 0, {0}, 0};
            double t0 = tu_now_s();
            int rc = am_call(ep, 0, H_ECHO, args, 2, data, sizeof data, &res, 30000);
            sh->lat[ph][b][k] = (float)((tu_now_s() - t0) * 1e6);
            ok += rc == 0 && res.nargs == 2 && res.args[1] == k && res.len == sizeof data &&
                  back[0] == k && back[1] == ~k;
        }
        AO_fetch_and_add(&sh->b_ok[ph], ok);
        AO_fetch_and_add1(&sh->b_done[ph]);
    }
    am_ep_destroy(ep);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double p99(int ph)
{
    static float v[N_B * K_B];
    memcpy(v, sh->lat[ph], sizeof v);
    qsort(v, N_B * K_B, sizeof *v, cmp_float);
    return v[N_B * K_B * 99 / 100];
}

static pid_t b_pids[N_B];
static void b_main(void *arg)
{
    client_b((int)(intptr_t)arg);
}

START_TEST(slow_client)
{
    combo(_i, "a stopped client among 8");
    pid_t srv = start_server();
    pid_t srv2 = spawn(server2, 1);
    tu_assert_flag(&sh->srv2_ready, 1, 20, "server 2 to start", what, &sh->err);
    pid_t a = spawn(client_a, 1);
    for (int b = 0; b < N_B; b++) {
        b_pids[b] = tu_spawn(b_main, (void *)(intptr_t)b, b % 2);
        ck_assert_msg(b_pids[b] > 0, "%s: fork", what);
    }
    /* Phase 1: the 8 clients alone.  Phase 2: A calls, then stops itself.
     * Phase 3: the 8 clients again, A stopped. */
    AO_store_release(&sh->phase, 1);
    tu_assert_flag(&sh->b_done[0], N_B, 120, "the clients' first calls", what, &sh->err);
    AO_store_release(&sh->phase, 2);
    ck_assert_msg(tu_wait_flag(&sh->a_started, 1, 120), "%s: A stuck after %lu calls", what,
                  (unsigned long)AO_load(&sh->a_progress));
    int st;
    ck_assert_msg(waitpid(a, &st, WUNTRACED) == a && WIFSTOPPED(st), "%s: A did not stop",
                  what);
    /* Server 2 has filled A's queue and waits for room, spinning and yielding
     * (a plain reply waits): stopped, it takes no CPU from the 8 clients. */
    kill(srv2, SIGSTOP);
    tu_sleep_ms(200); /* the server answers what A sent before it stopped */
    AO_store_release(&sh->phase, 3);
    int all = tu_wait_flag(&sh->b_done[1], N_B, 120);
    kill(srv2, SIGCONT);
    kill(a, SIGCONT);
    ck_assert_msg(all, "%s: with A stopped, only %lu of %d clients finished (%lu calls ok)",
                  what, (unsigned long)AO_load(&sh->b_done[1]), N_B, sh->b_ok[1]);
    for (int b = 0; b < N_B; b++)
        tu_assert_exit0(tu_reap(b_pids[b], 60), "client", what, &sh->err);
    tu_assert_exit0(tu_reap(a, 120), "client A", what, &sh->err);
    AO_store_release(&sh->done, 1);
    tu_assert_exit0(tu_reap(srv2, 30), "server 2", what, &sh->err);
    finish(srv, -1);
    ck_assert_msg(sh->b_ok[0] == N_B * K_B && sh->b_ok[1] == N_B * K_B,
                  "%s: calls that came back right: %lu and %lu of %d", what, sh->b_ok[0],
                  sh->b_ok[1], N_B * K_B);
    ck_assert_msg(sh->a_ok == A_CALLS, "%s: A's calls ended right: %lu of %d", what,
                  sh->a_ok, A_CALLS);
    if (getenv("SHMAM_VERBOSE"))
        printf("call: %s: p99 of %d calls: %.1f us alone, %.1f us with A stopped (%.2fx)\n",
               what, N_B * K_B, p99(0), p99(1), p99(1) / p99(0));
}
END_TEST

static Suite *call_suite(void)
{
    Suite *s = suite_create("call");
    int n = 2 * 2; /* kinds x backends */
    TCase *tc = tu_tcase(s, "ends", 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, server_killed, 0, n);
    tcase_add_loop_test(tc, no_such_handler, 0, n);
    tcase_add_loop_test(tc, reply_too_long, 0, n);
    tcase_add_loop_test(tc, unreplied_ends_empty, 0, n);
    tcase_add_loop_test(tc, stopped_server, 0, n);
    tcase_add_loop_test(tc, late_reply_dropped, 0, n);
    tcase_add_loop_test(tc, call_limit_waits, 0, n);
    tc = tu_tcase(s, "kills", 600);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, caller_killed_mid_call, 0, 3 * n);
    tcase_add_loop_test(tc, server_killed_reply_written, 0, n);
    tcase_add_loop_test(tc, random_kills, 0, 2 * n);
    tc = tu_tcase(s, "signals", 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, wait_eintr, 0, 2 * n);
    tcase_add_loop_test(tc, signal_wakes, 0, 2 * n);
    tcase_add_loop_test(tc, send_deadline, 0, n);
    tc = tu_tcase(s, "slow_client", 600);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, slow_client, 0, n);
    return s;
}

int main(void)
{
    tu_run_init("cl");
    return tu_run_suite(call_suite(), "check_call");
}
