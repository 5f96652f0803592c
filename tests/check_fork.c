/*
 * check_fork.c - ownership is the process and the thread: a fork() child
 * (no exec) owns none of its parent's endpoints.  Real fork(), real
 * processes.  Each test runs with the parent's endpoint owned and shared
 * (am_ep_share), on both backends.
 *
 *   child_polls_takes_nothing  a child of the server polls (am_poll,
 *                        am_wait) the server's endpoint while a client
 *                        sends FORK_MSGS requests, all the while the
 *                        server polls too: every poll of the child is
 *                        -EPERM and runs nothing; the server gets every
 *                        message once, in order, and no corrupt packet
 *   child_calls_refused  every call on the parent's endpoint from the
 *                        child (poll, wait, send, call and its test, wait
 *                        and cancel, map, remap, fd, share, region,
 *                        set_handler, a kept reply's handle, destroy) is
 *                        -EPERM; the parent then uses the same endpoint
 *                        (its kept reply, its calls, destroy) as before
 *   child_destroys_or_exits  a child that calls am_ep_destroy on the
 *                        server's endpoint and exits, one that just exits
 *                        (exit: atexit runs), one that _exits: the server's
 *                        name is still live (am_ep_probe 1), a client mapped
 *                        before the fork calls on, and a new client maps it
 *                        and calls
 *   child_of_handler     a handler that forks: the child's am_reply and
 *                        am_token_keep on the handler's token are -EINVAL,
 *                        and the caller gets the parent's reply only
 *   child_job_calls_refused  a child of a job's rank (am_init, a job of
 *                        one): its am_barrier and am_finalize are -EPERM;
 *                        the rank's own then work
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

enum { H_MSG = 1, H_ECHO, H_KEEP, H_DONE, H_FORK };

#define FORK_MSGS 4000
#define N_REFUSED 18

static char what[128];

struct shared {
    char srv[64];
    int backend, shared_mode, action;
    AO_t child_polling, sender_done, child_done, go, cli_ready, cli_phase;
    AO_t child_polls, child_ran, child_not_eperm;
    int child_first_rc;
    int refused[N_REFUSED];
    int cli_rc[2];
    uint32_t cli_arg[2];
    int child_reply_rc, child_keep_rc;
    struct tu_errors err;
};
static struct shared *sh;
static am_ep_t *srv; /* the test process's endpoint: the parent's */
static unsigned long received, out_of_order;
static am_kept_t *kept;

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
    tu_pin(0);
    received = out_of_order = 0;
    kept = NULL;
}

static void msg_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    if (n != 1 || a[0] != received)
        out_of_order++;
    received++;
}

static void echo_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_reply(t, H_ECHO, a, n);
}

static void keep_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    if (am_token_keep(t, &kept) != 0)
        kept = NULL;
}

static void done_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    received++;
}

/* A handler that forks: its child tries the token, then _exits; the
 * parent replies once the child is gone. */
static void fork_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        uint32_t x = 2;
        am_kept_t *k;
        sh->child_reply_rc = am_reply(t, H_ECHO, &x, 1);
        sh->child_keep_rc = am_token_keep(t, &k);
        _exit(0);
    }
    int st;
    if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        tu_error(&sh->err, "the handler's child did not exit 0");
    uint32_t x = 1;
    am_reply(t, H_ECHO, &x, 1);
}

/* The server: the test process's endpoint, owned or shared. */
static void combo(int i, const char *test)
{
    sh->backend = i % 2;
    sh->shared_mode = i / 2 % 2;
    snprintf(what, sizeof what, "%s/%s: %s", sh->shared_mode ? "shared" : "owned",
             tu_backend_name(sh->backend), test);
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, sh->backend);
    struct am_ep_opts o = {.shm = tu_backend_name(sh->backend), .abandon_ms = 100};
    ck_assert_int_eq(am_ep_create(sh->srv, &o, &srv), 0);
    am_set_handler(srv, H_MSG, msg_h);
    am_set_handler(srv, H_ECHO, echo_h);
    am_set_handler(srv, H_KEEP, keep_h);
    am_set_handler(srv, H_DONE, done_h);
    am_set_handler(srv, H_FORK, fork_h);
    if (sh->shared_mode)
        ck_assert_int_eq(am_ep_share(srv), 0);
}

static am_ep_t *client_ep(void)
{
    struct am_ep_opts o = {.shm = tu_backend_name(sh->backend), .abandon_ms = 100};
    am_ep_t *ep;
    int rc = am_ep_create(NULL, &o, &ep);
    if (rc == 0 && (rc = tu_map_when_there(ep, 0, sh->srv, 20)) != 0)
        am_ep_destroy(ep);
    if (rc != 0) {
        tu_error(&sh->err, "client: %s", am_strerror(rc));
        _exit(2);
    }
    return ep;
}

static pid_t spawn(void (*fn)(void *), int cpu)
{
    pid_t p = tu_spawn(fn, NULL, cpu);
    ck_assert_msg(p > 0, "%s: fork", what);
    return p;
}

/* Serve (the parent) until *flag >= v, at most 60 s. */
static void serve_until(volatile AO_t *flag, AO_t v)
{
    double end = tu_now_s() + 60;
    while (AO_load_acquire(flag) < v && tu_now_s() < end)
        ck_assert_int_ge(am_wait(srv, 10), 0);
}

static void finish(void)
{
    ck_assert_int_eq(am_ep_destroy(srv), 0);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}

/* ---- a child that polls ------------------------------------------------- */

static void note_child_rc(int rc)
{
    if (AO_fetch_and_add1(&sh->child_polls) == 0)
        sh->child_first_rc = rc;
    if (rc != -EPERM)
        AO_fetch_and_add1(&sh->child_not_eperm);
    if (rc > 0)
        AO_fetch_and_add(&sh->child_ran, (AO_t)rc);
}

static void child_poller(void *arg)
{
    note_child_rc(am_poll(srv));
    AO_store_release(&sh->child_polling, 1);
    while (!AO_load_acquire(&sh->sender_done))
        note_child_rc(am_poll(srv)), note_child_rc(am_wait(srv, 0));
    for (int i = 0; i < 1000; i++)
        note_child_rc(am_poll(srv));
}

static void sender(void *arg)
{
    am_ep_t *ep = client_ep();
    tu_wait_flag(&sh->child_polling, 1, 20);
    for (uint32_t i = 0; i < FORK_MSGS; i++) {
        int rc = am_request(ep, 0, H_MSG, &i, 1);
        if (rc != 0) {
            tu_error(&sh->err, "request %u: %s", i, am_err_name(rc));
            break;
        }
    }
    AO_store_release(&sh->sender_done, 1);
    am_ep_destroy(ep);
}

START_TEST(child_polls_takes_nothing)
{
    combo(_i, "a child polls the parent's endpoint");
    pid_t child = spawn(child_poller, 1);
    pid_t snd = spawn(sender, 1);
    double end = tu_now_s() + 60;
    while (received < FORK_MSGS && tu_now_s() < end && !AO_load(&sh->err.n))
        ck_assert_int_ge(am_wait(srv, 10), 0);
    tu_assert_exit0(tu_reap(snd, 30), "sender", what, &sh->err);
    tu_assert_exit0(tu_reap(child, 30), "child", what, &sh->err);
    ck_assert_msg(sh->child_polls > 1000, "%s: the child polled %lu times", what,
                  (unsigned long)sh->child_polls);
    ck_assert_msg(sh->child_not_eperm == 0 && sh->child_ran == 0,
                  "%s: %lu of the child's %lu polls were not -EPERM (first: %s), "
                  "they ran %lu messages",
                  what, (unsigned long)sh->child_not_eperm, (unsigned long)sh->child_polls,
                  am_err_name(sh->child_first_rc), (unsigned long)sh->child_ran);
    ck_assert_msg(received == FORK_MSGS && out_of_order == 0,
                  "%s: the parent ran %lu of %d messages (%lu out of order)", what,
                  received, FORK_MSGS, out_of_order);
    ck_assert_msg(am_ep_bad_packets(srv) == 0, "%s: %lu corrupt packets", what,
                  am_ep_bad_packets(srv));
    finish();
}
END_TEST

/* ---- every call of the child refused ----------------------------------- */

static const char *const refused_names[N_REFUSED] = {
    "am_poll",       "am_wait",      "am_request",   "am_request_bulk",  "am_call",
    "am_call_start", "am_call_test", "am_call_wait", "am_call_cancel",   "am_ep_map",
    "am_ep_remap",   "am_ep_fd",     "am_ep_share",  "am_region_create", "am_set_handler",
    "am_reply_kept", "am_ep_wake",   "am_ep_destroy"};

static void child_calls(void *arg)
{
    int *r = sh->refused;
    uint32_t x = 7;
    struct am_result res = {0};
    am_call_t id = 0;
    void *base;
    r[0] = am_poll(srv);
    r[1] = am_wait(srv, 0);
    r[2] = am_request(srv, 0, H_MSG, &x, 1);
    r[3] = am_request_bulk(srv, 0, H_MSG, &x, sizeof x, &x, 1);
    r[4] = am_call(srv, 0, H_ECHO, &x, 1, NULL, 0, &res, 1000);
    r[5] = am_call_start(srv, 0, H_ECHO, &x, 1, NULL, 0, &res, 1000, &id);
    r[6] = am_call_test(srv, 1);
    r[7] = am_call_wait(srv, 1, 0);
    r[8] = am_call_cancel(srv, 1);
    r[9] = am_ep_map(srv, 1, sh->srv);
    r[10] = am_ep_remap(srv, 0);
    r[11] = am_ep_fd(srv);
    r[12] = am_ep_share(srv);
    r[13] = am_region_create(srv, 4096, &base);
    r[14] = am_set_handler(srv, H_MSG, NULL);
    r[15] = am_reply_kept(kept, H_DONE, NULL, 0, &x, 1);
    r[16] = am_ep_wake(srv);
    r[17] = am_ep_destroy(srv);
}

START_TEST(child_calls_refused)
{
    combo(_i, "every call of a child refused");
    ck_assert_int_eq(am_ep_map(srv, 0, sh->srv), 0); /* itself */
    uint32_t x = 1;
    ck_assert_int_eq(am_request(srv, 0, H_KEEP, &x, 1), 0);
    while (!kept)
        ck_assert_int_ge(am_wait(srv, 10), 0);
    tu_assert_exit0(tu_reap(spawn(child_calls, 1), 30), "child", what, &sh->err);
    for (int i = 0; i < N_REFUSED; i++)
        ck_assert_msg(sh->refused[i] == -EPERM, "%s: the child's %s gave %s, want -EPERM",
                      what, refused_names[i], am_err_name(sh->refused[i]));
    /* The parent's endpoint is as it was. */
    ck_assert_int_eq(am_reply_kept(kept, H_DONE, NULL, 0, &x, 1), 0);
    while (received == 0)
        ck_assert_int_ge(am_wait(srv, 10), 0);
    struct am_result res = {0};
    x = 5;
    ck_assert_int_eq(am_call(srv, 0, H_ECHO, &x, 1, NULL, 0, &res, 20000), 0);
    ck_assert_int_eq(res.args[0], 5);
    ck_assert_int_eq(am_ep_probe(sh->srv), 1);
    finish();
}
END_TEST

/* ---- a child that destroys, or just exits ------------------------------ */

enum { A_DESTROY, A_EXIT, A__EXIT, N_ACTIONS };
static const char *const action_names[] = {"destroys", "exits", "_exits"};

static void child_leaves(void *arg)
{
    if (sh->action == A_DESTROY && (sh->cli_rc[0] = am_ep_destroy(srv)) != -EPERM)
        tu_error(&sh->err, "the child's am_ep_destroy gave %s", am_err_name(sh->cli_rc[0]));
    if (sh->action != A__EXIT)
        exit(0);
}

/* A client: call once when sh->cli_phase reaches its turn (phase 1: the
 * client mapped before the fork; 2: one that maps after). */
static void call_client(int k)
{
    am_ep_t *ep = client_ep();
    AO_fetch_and_add1(&sh->cli_ready);
    tu_wait_flag(&sh->cli_phase, (AO_t)k + 1, 60);
    struct am_result res = {0};
    uint32_t x = 10 + (uint32_t)k;
    sh->cli_rc[k] = am_call(ep, 0, H_ECHO, &x, 1, NULL, 0, &res, 20000);
    sh->cli_arg[k] = res.args[0];
    am_ep_destroy(ep);
    AO_fetch_and_add1(&sh->child_done);
}

static void early_client(void *arg)
{
    call_client(0);
}

static void late_client(void *arg)
{
    call_client(1);
}

START_TEST(child_destroys_or_exits)
{
    sh->action = _i / 4;
    char test[64];
    snprintf(test, sizeof test, "a child %s", action_names[sh->action]);
    combo(_i % 4, test);
    pid_t early = spawn(early_client, 1);
    serve_until(&sh->cli_ready, 1); /* it has mapped the server */
    pid_t child = spawn(child_leaves, 1);
    tu_assert_exit0(tu_reap(child, 30), "child", what, &sh->err);
    ck_assert_msg(am_ep_probe(sh->srv) == 1, "%s: probe of the server gave %d", what,
                  am_ep_probe(sh->srv));
    sh->cli_rc[0] = sh->cli_rc[1] = 1;
    AO_store_release(&sh->cli_phase, 1);
    serve_until(&sh->child_done, 1);
    pid_t late = spawn(late_client, 1);
    AO_store_release(&sh->cli_phase, 2);
    serve_until(&sh->child_done, 2);
    tu_assert_exit0(tu_reap(early, 30), "early client", what, &sh->err);
    tu_assert_exit0(tu_reap(late, 30), "late client", what, &sh->err);
    for (int k = 0; k < 2; k++)
        ck_assert_msg(sh->cli_rc[k] == 0 && sh->cli_arg[k] == 10 + (uint32_t)k,
                      "%s: the %s client's call gave %s (arg %u)", what,
                      k ? "new" : "earlier", am_err_name(sh->cli_rc[k]), sh->cli_arg[k]);
    finish();
}
END_TEST

/* ---- a handler's child ------------------------------------------------- */

static void fork_caller(void *arg)
{
    am_ep_t *ep = client_ep();
    struct am_result res = {0};
    uint32_t x = 0;
    sh->cli_rc[0] = am_call(ep, 0, H_FORK, &x, 1, NULL, 0, &res, 20000);
    sh->cli_arg[0] = res.args[0];
    x = 3;
    sh->cli_rc[1] = am_call(ep, 0, H_ECHO, &x, 1, NULL, 0, &res, 20000);
    sh->cli_arg[1] = res.args[0];
    am_ep_destroy(ep);
    AO_store_release(&sh->child_done, 1);
}

START_TEST(child_of_handler)
{
    combo(_i, "a handler's child uses its token");
    pid_t cli = spawn(fork_caller, 1);
    serve_until(&sh->child_done, 1);
    tu_assert_exit0(tu_reap(cli, 30), "caller", what, &sh->err);
    ck_assert_msg(sh->child_reply_rc == -EINVAL && sh->child_keep_rc == -EINVAL,
                  "%s: the child's am_reply gave %s, am_token_keep %s, want -EINVAL", what,
                  am_err_name(sh->child_reply_rc), am_err_name(sh->child_keep_rc));
    ck_assert_msg(sh->cli_rc[0] == 0 && sh->cli_arg[0] == 1,
                  "%s: the call gave %s with arg %u, want the parent's reply (1)", what,
                  am_err_name(sh->cli_rc[0]), sh->cli_arg[0]);
    ck_assert_msg(sh->cli_rc[1] == 0 && sh->cli_arg[1] == 3,
                  "%s: the next call gave %s with arg %u, want its own reply (3)", what,
                  am_err_name(sh->cli_rc[1]), sh->cli_arg[1]);
    finish();
}
END_TEST

/* ---- a rank's child ---------------------------------------------------- */

static void child_job(void *arg)
{
    sh->refused[0] = am_barrier(srv);
    sh->refused[1] = am_finalize(srv);
}

START_TEST(child_job_calls_refused)
{
    snprintf(what, sizeof what, "a child's am_barrier and am_finalize");
    char job[64];
    tu_test_prefix(job, sizeof job - 4);
    strcat(job, "job");
    setenv("SHMAM_JOB", job, 1);
    setenv("SHMAM_RANK", "0", 1);
    setenv("SHMAM_NPROCS", "1", 1);
    ck_assert_int_eq(am_init(NULL, NULL, &srv), 0);
    tu_assert_exit0(tu_reap(spawn(child_job, 1), 30), "child", what, &sh->err);
    ck_assert_msg(sh->refused[0] == -EPERM && sh->refused[1] == -EPERM,
                  "%s: the child's am_barrier gave %s, am_finalize %s, want -EPERM", what,
                  am_err_name(sh->refused[0]), am_err_name(sh->refused[1]));
    ck_assert_int_eq(am_barrier(srv), 0);
    ck_assert_int_eq(am_finalize(srv), 0);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

static Suite *fork_suite(void)
{
    Suite *s = suite_create("fork");
    TCase *tc = tu_tcase(s, "fork", 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, child_polls_takes_nothing, 0, 4);
    tcase_add_loop_test(tc, child_calls_refused, 0, 4);
    tcase_add_loop_test(tc, child_destroys_or_exits, 0, 4 * N_ACTIONS);
    tcase_add_loop_test(tc, child_of_handler, 0, 4);
    tcase_add_test(tc, child_job_calls_refused);
    return s;
}

int main(void)
{
    tu_run_init("fk");
    return tu_run_suite(fork_suite(), "check_fork");
}
