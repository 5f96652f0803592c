/*
 * check_reconnect.c - a client of a server that dies and restarts: the
 * index keeps saying -EPIPE until am_ep_remap reaches a live server again,
 * and a shared client's peers are let go by the threads that took them.
 * Real processes, real SIGKILL; both backends.
 *
 *   shared_client_destroy_after_death  a client maps the server and shares
 *                        its endpoint, in either order; a worker thread
 *                        calls, the server is SIGKILLed, the worker's call
 *                        is -EPIPE, it re-maps the index (am_ep_map and
 *                        am_ep_remap: -EPIPE or -ENOENT; or, with a new
 *                        server up, 0 and a call that comes back) and
 *                        calls again (-EPIPE while the server is gone);
 *                        then the owner destroys the endpoint: 0, no crash
 *                        (the worker's re-map dropped a peer whose lifeline
 *                        the owner holds); clean under ASan too
 *   restart_under_load   CALLERS callers (an owned client, and three threads
 *                        of a shared one that mapped before sharing: its
 *                        owner, whose remaps drop the peer its workers may
 *                        hold, and two workers) call
 *                        the server in a loop; it is SIGKILLed and started
 *                        again RESTARTS times.  Each caller handles -EPIPE
 *                        by am_ep_remap until it returns 0, calling between
 *                        tries; every call ends (0 with its own reply, or
 *                        -EPIPE), every failed remap is -EPIPE, -ENOENT or
 *                        -EAGAIN, nothing is ever -EINVAL, every caller sees
 *                        each death, and calls succeed again after each
 *                        restart
 *
 * No test judges speed; every wait is bounded in seconds.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

enum { H_ECHO = 1 };

#define CALLERS 4  /* restart_under_load: client A's thread, client B's three */
#define RESTARTS 2 /* servers killed and started again */
#define OK_EACH 50 /* calls each caller completes per server life */
#define CALL_MS 30000

static char what[128];

struct shared {
    char srv[64];
    int backend, order;
    AO_t srv_ready, srv_gen, cli_ready, killed, restarted, done, finished;
    int rc[8];
    /* restart_under_load, per caller */
    AO_t ok[CALLERS][RESTARTS + 1]; /* calls come back, per server life */
    AO_t gone_seen[CALLERS];        /* server lives seen to end (-EPIPE) */
    AO_t einval, bad;
    int bad_rc;
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
    sh->backend = i % 2;
    snprintf(what, sizeof what, "%s: %s", tu_backend_name(sh->backend), test);
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, sh->backend);
}

static struct am_ep_opts opts(void)
{
    return (struct am_ep_opts){.shm = tu_backend_name(sh->backend), .abandon_ms = 100};
}

/* ---- the server: echo, until killed ------------------------------------ */

static void echo_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_reply(t, H_ECHO, a, n);
}

static void server(void *arg)
{
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(sh->srv, &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "server create: %s", am_strerror(rc));
        _exit(2);
    }
    am_set_handler(ep, H_ECHO, echo_h);
    AO_fetch_and_add_release(&sh->srv_ready, 1);
    for (;;)
        am_wait(ep, 50);
}

/* Start a server (the n-th: sh->srv_ready reaches n) on CPU 0. */
static pid_t start_server(AO_t n)
{
    pid_t p = tu_spawn(server, NULL, 0);
    ck_assert_msg(p > 0, "%s: fork", what);
    tu_assert_flag(&sh->srv_ready, n, 20, "the server to start", what, &sh->err);
    return p;
}

static void kill_server(pid_t p)
{
    kill(p, SIGKILL);
    tu_reap(p, 10);
}

/* End: the clients have exited; remove the killed servers' segment. */
static void finish(void)
{
    char first[128];
    tu_leftovers(sh->srv, 1, first, sizeof first);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}

static int call(am_ep_t *ep, uint32_t x)
{
    struct am_result res = {0};
    int rc = am_call(ep, 0, H_ECHO, &x, 1, NULL, 0, &res, CALL_MS);
    if (rc == 0 && (res.nargs != 1 || res.args[0] != x))
        return tu_error(&sh->err, "call %u came back with %u", x, res.args[0]), -EPROTO;
    return rc;
}

static int gone(int rc)
{
    return rc == -EPIPE || rc == -ENOENT;
}

/* ---- a shared client's destroy after its server's death ---------------- */

enum { MAP_THEN_SHARE, SHARE_THEN_MAP, REMAP_REACHES_NEW, N_ORDERS };
static const char *const order_names[] = {"map then share", "share then map",
                                          "map then share, new server"};

static void *worker(void *arg)
{
    am_ep_t *ep = arg;
    sh->rc[0] = call(ep, 1);
    AO_store_release(&sh->cli_ready, 1);
    tu_wait_flag(&sh->killed, 1, 60);
    sh->rc[1] = call(ep, 2);
    if (sh->order == REMAP_REACHES_NEW) {
        tu_wait_flag(&sh->restarted, 1, 60);
        double end = tu_now_s() + 20;
        while ((gone(sh->rc[2] = am_ep_remap(ep, 0)) || sh->rc[2] == -EAGAIN) &&
               tu_now_s() < end)
            tu_sleep_ms(1);
        sh->rc[4] = call(ep, 3);
        return NULL;
    }
    sh->rc[2] = am_ep_map(ep, 0, sh->srv);
    sh->rc[3] = am_ep_remap(ep, 0);
    sh->rc[4] = call(ep, 4);
    return NULL;
}

static void shared_client(void *arg)
{
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(NULL, &o, &ep);
    if (rc == 0 && sh->order != SHARE_THEN_MAP)
        rc = tu_map_when_there(ep, 0, sh->srv, 20);
    if (rc == 0)
        rc = am_ep_share(ep);
    if (rc == 0 && sh->order == SHARE_THEN_MAP)
        rc = tu_map_when_there(ep, 0, sh->srv, 20);
    if (rc != 0) {
        tu_error(&sh->err, "client: %s", am_strerror(rc));
        _exit(2);
    }
    pthread_t t;
    pthread_create(&t, NULL, worker, ep);
    pthread_join(t, NULL);
    sh->rc[5] = am_ep_destroy(ep);
}

START_TEST(shared_client_destroy_after_death)
{
    sh->order = _i / 2;
    combo(_i, order_names[sh->order]);
    pid_t srv = start_server(1);
    pid_t cli = tu_spawn(shared_client, NULL, 1);
    tu_assert_flag(&sh->cli_ready, 1, 20, "the client's first call", what, &sh->err);
    kill_server(srv);
    AO_store_release(&sh->killed, 1);
    if (sh->order == REMAP_REACHES_NEW) {
        srv = start_server(2);
        AO_store_release(&sh->restarted, 1);
    }
    int st = tu_reap(cli, 60);
    ck_assert_msg(st == 0, "%s: the client ended with status %#x (%s)", what, st,
                  st > 0 && WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exit");
    int want_new = sh->order == REMAP_REACHES_NEW;
    ck_assert_msg(sh->rc[0] == 0 && sh->rc[1] == -EPIPE,
                  "%s: calls before and after the kill gave %s, %s", what,
                  am_err_name(sh->rc[0]), am_err_name(sh->rc[1]));
    ck_assert_msg(want_new ? sh->rc[2] == 0 : gone(sh->rc[2]) && gone(sh->rc[3]),
                  "%s: the worker's re-maps gave %s, %s", what, am_err_name(sh->rc[2]),
                  am_err_name(sh->rc[3]));
    ck_assert_msg(sh->rc[4] == (want_new ? 0 : -EPIPE), "%s: the call after it gave %s",
                  what, am_err_name(sh->rc[4]));
    ck_assert_msg(sh->rc[5] == 0, "%s: am_ep_destroy gave %s", what,
                  am_err_name(sh->rc[5]));
    if (want_new)
        kill_server(srv);
    finish();
}
END_TEST

/* ---- a server killed and restarted under load -------------------------- */

/* Record an end that is neither 0 nor the server's absence. */
static void bad_end(const char *where, int rc)
{
    if (rc == -EINVAL)
        AO_fetch_and_add1(&sh->einval);
    if (AO_fetch_and_add1(&sh->bad) == 0)
        sh->bad_rc = rc;
    tu_error(&sh->err, "%s gave %s", where, am_err_name(rc));
}

/* The server is gone: remap until it is back, calling between tries (each
 * call must say -EPIPE, or come back once another thread of the client has
 * remapped).  Returns 0 once remapped, -1 once told to stop. */
static int reconnect(am_ep_t *ep, int c)
{
    AO_fetch_and_add1(&sh->gone_seen[c]);
    for (;;) {
        int rc = am_ep_remap(ep, 0);
        if (rc == 0)
            return 0;
        if (rc != -EPIPE && rc != -ENOENT && rc != -EAGAIN)
            bad_end("am_ep_remap", rc);
        if ((rc = call(ep, 0)) == 0)
            return 0;
        if (rc != -EPIPE)
            bad_end("a call while the server is gone", rc);
        if (AO_load_acquire(&sh->done))
            return -1;
        tu_sleep_ms(1);
    }
}

/* Caller c: call in a loop, counting what came back per server life. */
static void caller_loop(am_ep_t *ep, int c)
{
    unsigned life = 0;
    for (uint32_t x = 1; !AO_load_acquire(&sh->done); x++) {
        int rc = call(ep, x);
        if (rc == 0)
            AO_fetch_and_add1(&sh->ok[c][life <= RESTARTS ? life : RESTARTS]);
        else if (rc != -EPIPE)
            bad_end("a call", rc);
        else if (reconnect(ep, c) == 0)
            life = (unsigned)AO_load_acquire(&sh->srv_gen);
        else
            break;
    }
}

static void owned_client(void *arg)
{
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(NULL, &o, &ep);
    if (rc == 0 && (rc = tu_map_when_there(ep, 0, sh->srv, 20)) != 0)
        am_ep_destroy(ep);
    if (rc != 0) {
        tu_error(&sh->err, "client A: %s", am_strerror(rc));
        _exit(2);
    }
    caller_loop(ep, 0);
    if ((rc = am_ep_destroy(ep)) != 0)
        bad_end("client A's am_ep_destroy", rc);
}

struct thread_arg {
    am_ep_t *ep;
    int c;
};

static void *caller_thread(void *arg)
{
    struct thread_arg *a = arg;
    caller_loop(a->ep, a->c);
    return NULL;
}

/* Client B: maps, then shares; its owner and two threads call. */
static void threaded_client(void *arg)
{
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(NULL, &o, &ep);
    if (rc == 0)
        rc = tu_map_when_there(ep, 0, sh->srv, 20);
    if (rc == 0)
        rc = am_ep_share(ep);
    if (rc != 0) {
        tu_error(&sh->err, "client B: %s", am_strerror(rc));
        _exit(2);
    }
    pthread_t t[2];
    struct thread_arg a[2] = {{ep, 2}, {ep, 3}};
    for (int k = 0; k < 2; k++)
        pthread_create(&t[k], NULL, caller_thread, &a[k]);
    caller_loop(ep, 1);
    for (int k = 0; k < 2; k++)
        pthread_join(t[k], NULL);
    if ((rc = am_ep_destroy(ep)) != 0)
        bad_end("client B's am_ep_destroy", rc);
}

/* Wait until every caller has OK_EACH calls back in server life `life`. */
static void wait_ok(unsigned life)
{
    for (int c = 0; c < CALLERS; c++) {
        char why[64];
        snprintf(why, sizeof why, "caller %d's calls in server life %u", c, life);
        tu_assert_flag(&sh->ok[c][life], OK_EACH, 60, why, what, &sh->err);
    }
}

START_TEST(restart_under_load)
{
    combo(_i, "a server killed and restarted under load");
    pid_t srv = start_server(1);
    pid_t a = tu_spawn(owned_client, NULL, 1), b = tu_spawn(threaded_client, NULL, 1);
    ck_assert_msg(a > 0 && b > 0, "%s: fork", what);
    wait_ok(0);
    for (unsigned life = 1; life <= RESTARTS; life++) {
        kill_server(srv);
        for (int c = 0; c < CALLERS; c++)
            tu_assert_flag(&sh->gone_seen[c], life, 60, "a caller to see the death", what,
                           &sh->err);
        AO_store_release(&sh->srv_gen, life); /* before the restart: callers
                                                 remapped from now on count here */
        srv = start_server(life + 1);
        wait_ok(life);
    }
    AO_store_release(&sh->done, 1);
    tu_assert_exit0(tu_reap(a, 60), "client A", what, &sh->err);
    tu_assert_exit0(tu_reap(b, 60), "client B", what, &sh->err);
    kill_server(srv);
    ck_assert_msg(sh->einval == 0 && sh->bad == 0,
                  "%s: %lu ends were -EINVAL, %lu neither 0 nor -EPIPE (first: %s)", what,
                  (unsigned long)sh->einval, (unsigned long)sh->bad,
                  am_err_name(sh->bad_rc));
    finish();
}
END_TEST

static Suite *reconnect_suite(void)
{
    Suite *s = suite_create("reconnect");
    TCase *tc = tu_tcase(s, "reconnect", 240);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, shared_client_destroy_after_death, 0, 2 * N_ORDERS);
    tcase_add_loop_test(tc, restart_under_load, 0, 2);
    return s;
}

int main(void)
{
    tu_run_init("rc");
    return tu_run_suite(reconnect_suite(), "check_reconnect");
}
