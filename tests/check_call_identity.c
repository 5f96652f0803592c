/*
 * check_call_identity.c - a call's reply goes to the caller it answers and to
 * no other, and is matched by the call's identity; a wake before a call
 * keeps it unsent; a hung server takes no room other servers' calls need.
 * Real processes, real SIGKILL and SIGSTOP.  Each test runs on both backends.
 *
 *   kept_reply_caller_replaced  a server keeps a call's token; the caller is
 *                        SIGKILLed; a new client (anonymous, or named as the
 *                        dead one) takes its sender index and makes its first
 *                        call, which the server keeps too: am_reply_kept of
 *                        the dead caller's handle (args, 6 bytes: inline, as
 *                        the calls' caps are 64) is -EPIPE, and the new
 *                        client's call ends with its own reply (args, bytes)
 *   owed_reply_caller_replaced  a call's reply kept by the server (the
 *                        caller's reply queue full of plain replies) while
 *                        the caller is SIGKILLed and a new client takes its
 *                        index and makes its first call: the new client gets
 *                        its own reply, never the dead caller's
 *   handler_reply_caller_replaced  a shared server's handler (call or
 *                        plain request) holds its token while its caller is
 *                        SIGKILLed and, on the other serving thread, a new
 *                        client takes the caller's index and asks too: the
 *                        held handler's reply is -EPIPE, and the new client
 *                        gets its own reply and no other
 *   reply_via_other_index  a call to a server mapped at a second index
 *                        (one server at two indexes; a restarted server
 *                        mapped at a fresh index) ends with its reply, no
 *                        corrupt packet counted; the dead index stays the
 *                        dead server's (-EPIPE), not re-pointed at the new
 *   wake_then_call_unsent  am_ep_wake, then am_call on a non-owner thread of
 *                        a shared endpoint: -EINTR, and the server's handler
 *                        never ran for it (counted; the next call runs once)
 *   hung_server_starves_none  calls with a 16 KiB cap to a SIGSTOPped server
 *                        time out, eight of them; then calls with that cap
 *                        to a healthy server all end with their replies
 *   try_never_waits      am_call_try to a SIGSTOPped server whose request
 *                        queue is full: -EAGAIN at once (long before the
 *                        call's deadline), nothing sent (the server's count
 *                        after it runs again is the plain requests'); once
 *                        it drained, am_call_try starts the call, which ends
 *                        with its reply
 *   far_index_refused    a call to an index no endpoint can have (65536,
 *                        2^31, UINT_MAX - 1) is -EINVAL at once, with a cap
 *                        (a room to count per destination) and without
 *
 * No test judges speed; time bounds are seconds.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

enum { H_KEEP = 1, H_ECHO, H_COUNT, H_PLAIN, H_PLAIN_BACK };

#define CAP 16384 /* hung_server_starves_none: the reply cap (Python's) */
#define HUNG_CALLS 8
#define OK_CALLS 8
#define OWED_PLAIN 8 /* owed_reply_caller_replaced: the caller's reply queue */

static char what[128];

struct shared {
    char srv[AM_NAME_MAX], srv2[AM_NAME_MAX], cli[AM_NAME_MAX];
    int backend, anon;
    AO_t srv_ready, srv2_ready, done, count, cli_ready, plain_back;
    int rc;
    uint32_t got_arg;
    size_t got_len;
    char got[64];
    struct tu_errors err;
};
static struct shared *sh;

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
    tu_pin(0);
}

static void names(int backend, const char *test)
{
    sh->backend = backend;
    snprintf(what, sizeof what, "%s: %s", tu_backend_name(backend), test);
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, backend);
    tu_ep_name(sh->srv2, sizeof sh->srv2, "srv2", -1, backend);
    tu_ep_name(sh->cli, sizeof sh->cli, "cli", -1, backend);
}

static am_ep_t *create(const char *name, unsigned packets)
{
    struct am_ep_opts o = {
        .shm = tu_backend_name(sh->backend), .packets = packets, .abandon_ms = 100};
    am_ep_t *ep;
    int rc = am_ep_create(name, &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "create %s: %s", name ? name : "(anonymous)", am_strerror(rc));
        _exit(2);
    }
    return ep;
}

static void map(am_ep_t *ep, unsigned idx, const char *name)
{
    int rc = tu_map_when_there(ep, idx, name, 20);
    if (rc != 0) {
        tu_error(&sh->err, "map %s at %u: %s", name, idx, am_strerror(rc));
        _exit(2);
    }
}

/* ---- servers (helper processes) ---- */

static void echo_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_reply_long(t, 0, d, l, a, n);
}

static void count_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_fetch_and_add1(&sh->count);
    am_reply(t, 0, a, n);
}

static void serve(am_ep_t *ep, volatile AO_t *ready)
{
    AO_store_release(ready, 1);
    while (!AO_load_acquire(&sh->done))
        am_wait(ep, 20);
    am_ep_destroy(ep);
}

static void server(void *arg)
{
    am_ep_t *ep = create(arg ? sh->srv2 : sh->srv, 0);
    am_set_handler(ep, H_ECHO, echo_h);
    am_set_handler(ep, H_COUNT, count_h);
    serve(ep, arg ? &sh->srv2_ready : &sh->srv_ready);
}

static pid_t start_server(int second)
{
    AO_store(second ? &sh->srv2_ready : &sh->srv_ready, 0);
    pid_t p = tu_spawn(server, second ? (void *)1 : NULL, 1);
    ck_assert_msg(p > 0, "%s: fork", what);
    tu_assert_flag(second ? &sh->srv2_ready : &sh->srv_ready, 1, 20, "a server to start",
                   what, &sh->err);
    return p;
}

static void stop_servers(pid_t a, pid_t b)
{
    AO_store_release(&sh->done, 1);
    if (a > 0)
        tu_assert_exit0(tu_reap(a, 30), "server", what, &sh->err);
    if (b > 0)
        tu_assert_exit0(tu_reap(b, 30), "second server", what, &sh->err);
}

/* ---- a kept reply whose caller was replaced ---- */

#define KEPT_MAX 4
static am_kept_t *kept[KEPT_MAX];
static unsigned kept_src[KEPT_MAX];
static AO_t kept_n;

static void keep_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    unsigned k = (unsigned)AO_load(&kept_n);
    if (k < KEPT_MAX && am_token_keep(t, &kept[k]) == 0) {
        kept_src[k] = am_token_source(t);
        AO_store(&kept_n, k + 1);
    }
}

/* A client (the dead one when `first`): one call, kept by the server. */
static void keeping_client(void *arg)
{
    int first = arg != NULL;
    am_ep_t *ep = create(sh->anon ? NULL : sh->cli, 0);
    map(ep, 0, sh->srv);
    char got[64] = {0};
    uint32_t x = first ? 1 : 2;
    struct am_result res = {.data = got, .cap = sizeof got};
    sh->rc = am_call(ep, 0, H_KEEP, &x, 1, NULL, 0, &res, 60000);
    sh->got_arg = res.nargs == 1 ? res.args[0] : 0;
    sh->got_len = res.len;
    memcpy(sh->got, got, sizeof got);
    am_ep_destroy(ep);
}

static void poll_until(am_ep_t *ep, volatile AO_t *n, AO_t v, const char *why)
{
    double end = tu_now_s() + 30;
    while (AO_load(n) < v && tu_now_s() < end)
        am_wait(ep, 10);
    ck_assert_msg(AO_load(n) >= v, "%s: %s never came", what, why);
}

/* The new client's call ended with its own reply (arg 222, "mine"), and the
 * test left nothing. */
static void assert_got_own_reply(void)
{
    ck_assert_msg(sh->rc == 0 && sh->got_arg == 222 && sh->got_len == 5 &&
                      strcmp(sh->got, "mine") == 0,
                  "%s: the new client's call got %s, arg %u, %zu bytes \"%.8s\"", what,
                  am_err_name(sh->rc), sh->got_arg, sh->got_len, sh->got);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}

START_TEST(kept_reply_caller_replaced)
{
    sh->anon = _i / 2;
    names(_i % 2, sh->anon ? "a kept call reply, anonymous caller replaced"
                           : "a kept call reply, named caller replaced");
    AO_store(&kept_n, 0);
    am_ep_t *srv = create(sh->srv, 0);
    am_set_handler(srv, H_KEEP, keep_h);
    pid_t a = tu_spawn(keeping_client, (void *)1, 1);
    poll_until(srv, &kept_n, 1, "the first caller's call");
    kill(a, SIGKILL);
    tu_reap(a, 10);
    pid_t b = tu_spawn(keeping_client, NULL, 1);
    poll_until(srv, &kept_n, 2, "the new client's call");
    ck_assert_msg(kept_src[0] == kept_src[1], "%s: the new client came at index %u, not %u",
                  what, kept_src[1], kept_src[0]);
    uint32_t stale = 111, mine = 222;
    int rc0 = am_reply_kept(kept[0], 0, "stale", 6, &stale, 1); /* inline */
    int rc1 = am_reply_kept(kept[1], 0, "mine", 5, &mine, 1);
    double end = tu_now_s() + 30;
    while (waitpid(b, NULL, WNOHANG) == 0 && tu_now_s() < end)
        am_wait(srv, 10);
    ck_assert_int_eq(am_ep_destroy(srv), 0);
    tu_reap(b, 10);
    ck_assert_msg(rc0 == -EPIPE, "%s: the dead caller's kept reply gave %s, want EPIPE",
                  what, am_err_name(rc0));
    ck_assert_msg(rc1 == 0, "%s: the new client's kept reply gave %s", what,
                  am_err_name(rc1));
    assert_got_own_reply();
}
END_TEST

/* ---- a reply owed to a caller that was replaced ---- */

static void plain_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_reply(t, H_PLAIN_BACK, a, n);
}

static void plain_back_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_fetch_and_add1(&sh->plain_back);
}

/* The caller to be replaced: OWED_PLAIN plain requests (their replies fill
 * its reply queue of OWED_PLAIN packets: it never polls), then a call whose
 * reply the server must keep; it waits to be killed. */
static void owed_victim(void *arg)
{
    am_ep_t *ep = create(sh->anon ? NULL : sh->cli, OWED_PLAIN);
    am_set_handler(ep, H_PLAIN_BACK, plain_back_h);
    map(ep, 0, sh->srv);
    uint32_t x = 1;
    for (int i = 0; i < OWED_PLAIN; i++)
        if (am_request(ep, 0, H_PLAIN, &x, 1) != 0)
            tu_error(&sh->err, "victim: request %d", i);
    static char got[64];
    static struct am_result res = {.data = got, .cap = sizeof got};
    am_call_t id;
    if (am_call_start(ep, 0, H_ECHO, &x, 1, "stale", 6, &res, 60000, &id) != 0)
        tu_error(&sh->err, "victim: call start");
    AO_store_release(&sh->cli_ready, 1);
    for (;;)
        pause(); /* until killed: it never polls */
}

static void owed_client(void *arg)
{
    am_ep_t *ep = create(sh->anon ? NULL : sh->cli, OWED_PLAIN);
    map(ep, 0, sh->srv);
    char got[64] = {0};
    uint32_t x = 222;
    struct am_result res = {.data = got, .cap = sizeof got};
    sh->rc = am_call(ep, 0, H_ECHO, &x, 1, "mine", 5, &res, 30000);
    sh->got_arg = res.nargs == 1 ? res.args[0] : 0;
    sh->got_len = res.len;
    memcpy(sh->got, got, sizeof got);
    am_ep_destroy(ep);
}

START_TEST(owed_reply_caller_replaced)
{
    sh->anon = _i / 2;
    names(_i % 2, sh->anon ? "an owed call reply, anonymous caller replaced"
                           : "an owed call reply, named caller replaced");
    am_ep_t *srv = create(sh->srv, 0);
    am_set_handler(srv, H_PLAIN, plain_h);
    am_set_handler(srv, H_ECHO, echo_h);
    pid_t a = tu_spawn(owed_victim, NULL, 1);
    tu_assert_flag(&sh->cli_ready, 1, 20, "the victim's call", what, &sh->err);
    double end = tu_now_s() + 30;
    while (srv->owed == NULL && tu_now_s() < end)
        am_poll(srv);
    ck_assert_msg(srv->owed != NULL, "%s: the victim's reply was never kept", what);
    kill(a, SIGKILL);
    tu_reap(a, 10);
    pid_t b = tu_spawn(owed_client, NULL, 1);
    while (waitpid(b, NULL, WNOHANG) == 0 && tu_now_s() < end + 30)
        am_wait(srv, 10);
    ck_assert_int_eq(am_ep_destroy(srv), 0);
    tu_reap(b, 10);
    assert_got_own_reply();
}
END_TEST

/* ---- a handler's reply whose caller was replaced while it ran ---- */

static am_ep_t *srv_ep;
static AO_t held_in, stale_go, stale_done, serving_stop;
static unsigned held_src[2];
static int stale_rc;

/* The first caller's handler waits until the test lets it reply (its caller
 * replaced meanwhile); the second's until that reply was tried. */
static void held_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    unsigned k = (unsigned)AO_fetch_and_add1(&held_in);
    held_src[k & 1] = am_token_source(t);
    uint32_t r = a[0] + 1000;
    if (k == 0) {
        tu_wait_flag(&stale_go, 1, 60);
        stale_rc = am_reply(t, H_PLAIN_BACK, &r, 1);
        AO_store_release(&stale_done, 1);
    } else {
        tu_wait_flag(&stale_done, 1, 60);
        am_reply(t, H_PLAIN_BACK, &r, 1);
    }
}

static void *serving(void *arg)
{
    while (!AO_load_acquire(&serving_stop))
        am_wait(srv_ep, 10);
    return NULL;
}

static uint32_t back_arg[4];
static void back_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    unsigned k = (unsigned)AO_fetch_and_add1(&sh->plain_back);
    if (k < 4 && n == 1)
        back_arg[k] = a[0];
}

/* A caller (the first one when arg, killed while its handler is held): one
 * call, or one plain request whose reply it waits for. */
static void held_client(void *arg)
{
    am_ep_t *ep = create(NULL, 0);
    am_set_handler(ep, H_PLAIN_BACK, back_h);
    map(ep, 0, sh->srv);
    uint32_t x = arg ? 1 : 2;
    if (sh->anon) { /* the plain variant */
        if (am_request(ep, 0, H_KEEP, &x, 1) != 0)
            tu_error(&sh->err, "client: request");
        double end = tu_now_s() + 30;
        while (AO_load(&sh->plain_back) == 0 && tu_now_s() < end)
            am_wait(ep, 10);
        for (int i = 0; i < 20; i++)
            am_wait(ep, 5); /* anything more that came */
        sh->rc = AO_load(&sh->plain_back) ? 0 : -ETIMEDOUT;
        sh->got_arg = back_arg[0];
        sh->got_len = AO_load(&sh->plain_back);
    } else {
        struct am_result res = {0};
        sh->rc = am_call(ep, 0, H_KEEP, &x, 1, NULL, 0, &res, 30000);
        sh->got_arg = res.nargs == 1 ? res.args[0] : 0;
        sh->got_len = 1;
    }
    am_ep_destroy(ep);
}

START_TEST(handler_reply_caller_replaced)
{
    sh->anon = _i / 2; /* here: the plain request variant */
    names(_i % 2, sh->anon ? "a held handler's plain reply, caller replaced"
                           : "a held handler's call reply, caller replaced");
    AO_store(&held_in, 0), AO_store(&stale_go, 0), AO_store(&stale_done, 0);
    AO_store(&serving_stop, 0);
    srv_ep = create(sh->srv, 0);
    am_set_handler(srv_ep, H_KEEP, held_h);
    ck_assert_int_eq(am_ep_share(srv_ep), 0);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, serving, NULL), 0);
    pid_t a = tu_spawn(held_client, (void *)1, 1);
    tu_assert_flag(&held_in, 1, 30, "the first caller's request", what, &sh->err);
    kill(a, SIGKILL);
    tu_reap(a, 10);
    pid_t b = tu_spawn(held_client, NULL, 1);
    tu_assert_flag(&held_in, 2, 30, "the new client's request", what, &sh->err);
    AO_store_release(&stale_go, 1);
    tu_reap(b, 60);
    AO_store_release(&serving_stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(am_ep_destroy(srv_ep), 0);
    ck_assert_msg(held_src[0] == held_src[1], "%s: the new client came at index %u, not %u",
                  what, held_src[1], held_src[0]);
    ck_assert_msg(stale_rc == -EPIPE, "%s: the replaced caller's reply gave %s, want EPIPE",
                  what, am_err_name(stale_rc));
    ck_assert_msg(sh->rc == 0 && sh->got_arg == 1002 && sh->got_len == 1,
                  "%s: the new client got %s, first arg %u, %zu replies", what,
                  am_err_name(sh->rc), sh->got_arg, sh->got_len);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- a reply through another index of its server ---- */

/* A call to dest that must come back with its own arg. */
static void call_ok(am_ep_t *ep, unsigned dest, uint32_t x)
{
    struct am_result res = {0};
    int rc = am_call(ep, dest, H_ECHO, &x, 1, NULL, 0, &res, 20000);
    ck_assert_msg(rc == 0 && res.nargs == 1 && res.args[0] == x,
                  "%s: the call to index %u gave %s (%d args)", what, dest, am_err_name(rc),
                  res.nargs);
}

START_TEST(reply_via_other_index)
{
    int restarted = _i / 2;
    names(_i % 2, restarted ? "a restarted server mapped at a fresh index"
                            : "one server mapped at two indexes");
    pid_t s = start_server(0);
    am_ep_t *ep = create(NULL, 0);
    map(ep, 0, sh->srv);
    call_ok(ep, 0, 5);
    if (restarted) {
        kill(s, SIGKILL);
        tu_reap(s, 10);
        s = start_server(0);
    }
    map(ep, 1, sh->srv);
    call_ok(ep, 1, 6);
    if (restarted) {
        struct am_result res = {0};
        uint32_t x = 7;
        int rc = am_call(ep, 0, H_ECHO, &x, 1, NULL, 0, &res, 20000);
        ck_assert_msg(rc == -EPIPE, "%s: a call to the dead index gave %s, want EPIPE",
                      what, am_err_name(rc));
    } else
        call_ok(ep, 0, 7);
    call_ok(ep, 1, 8);
    unsigned long bad = am_ep_bad_packets(ep);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    stop_servers(s, -1);
    ck_assert_msg(bad == 0, "%s: %lu corrupt packets counted", what, bad);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- a wake before a call on another thread ---- */

static am_ep_t *shared_ep;

static void *wake_then_call(void *arg)
{
    int *rc = arg;
    struct am_result res = {0};
    uint32_t x = 1;
    am_ep_wake(shared_ep);
    rc[0] = am_call(shared_ep, 0, H_COUNT, &x, 1, NULL, 0, &res, 20000);
    rc[1] = am_call(shared_ep, 0, H_COUNT, &x, 1, NULL, 0, &res, 20000);
    return NULL;
}

START_TEST(wake_then_call_unsent)
{
    names(_i, "am_ep_wake, then am_call on a non-owner thread");
    pid_t s = start_server(0);
    shared_ep = create(NULL, 0);
    map(shared_ep, 0, sh->srv);
    ck_assert_int_eq(am_ep_share(shared_ep), 0);
    int rc[2];
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, wake_then_call, rc), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(am_ep_destroy(shared_ep), 0);
    AO_t ran = AO_load(&sh->count);
    stop_servers(s, -1);
    ck_assert_msg(rc[0] == -EINTR && rc[1] == 0, "%s: the calls gave %s and %s", what,
                  am_err_name(rc[0]), am_err_name(rc[1]));
    ck_assert_msg(ran == 1, "%s: the handler ran %lu times for one call sent", what,
                  (unsigned long)ran);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- a hung server and a healthy one ---- */

START_TEST(hung_server_starves_none)
{
    names(_i, "calls to a healthy server beside a hung one");
    pid_t hung = start_server(0), ok = start_server(1);
    am_ep_t *ep = create(NULL, 0);
    map(ep, 0, sh->srv);
    map(ep, 1, sh->srv2);
    static char buf[CAP];
    kill(hung, SIGSTOP);
    for (int i = 0; i < HUNG_CALLS; i++) {
        struct am_result res = {.data = buf, .cap = CAP};
        uint32_t x = (uint32_t)i;
        int rc = am_call(ep, 0, H_ECHO, &x, 1, "x", 1, &res, 200);
        ck_assert_msg(rc == -ETIMEDOUT, "%s: call %d to the hung server gave %s", what, i,
                      am_err_name(rc));
    }
    for (int i = 0; i < OK_CALLS; i++) {
        struct am_result res = {.data = buf, .cap = CAP};
        uint32_t x = 100 + (uint32_t)i;
        int rc = am_call(ep, 1, H_ECHO, &x, 1, "ok", 3, &res, 20000);
        ck_assert_msg(rc == 0 && res.nargs == 1 && res.args[0] == x && res.len == 3,
                      "%s: call %d to the healthy server gave %s", what, i,
                      am_err_name(rc));
    }
    kill(hung, SIGCONT);
    for (int i = 0; i < 100 && am_ep_late_replies(ep) < HUNG_CALLS; i++)
        am_wait(ep, 20); /* the hung server's late replies: room back */
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    stop_servers(hung, ok);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- a call that never waits ---- */

START_TEST(try_never_waits)
{
    names(_i, "am_call_try to a stopped server's full queue");
    AO_store(&sh->count, 0);
    pid_t srv = start_server(0);
    struct am_ep_opts o = {.shm = tu_backend_name(sh->backend), .send_timeout_ms = 200};
    am_ep_t *ep;
    ck_assert_int_eq(am_ep_create(NULL, &o, &ep), 0);
    map(ep, 0, sh->srv);
    kill(srv, SIGSTOP);
    unsigned long sent = 0;
    uint32_t x = 5;
    int rc;
    while ((rc = am_request(ep, 0, H_COUNT, &x, 1)) == 0)
        sent++;
    ck_assert_msg(rc == -ETIMEDOUT && sent > 0, "%s: filling the queue gave %s after %lu",
                  what, am_err_name(rc), sent);
    struct am_result res = {0};
    am_call_t id = 0;
    double t0 = tu_now_s();
    rc = am_call_try(ep, 0, H_COUNT, &x, 1, NULL, 0, &res, 20000, &id);
    double took = tu_now_s() - t0;
    ck_assert_msg(rc == -EAGAIN && took < 10, "%s: am_call_try gave %s after %.1f s", what,
                  am_err_name(rc), took);
    kill(srv, SIGCONT);
    poll_until(ep, &sh->count, sent, "the plain requests' handlers");
    for (int i = 0; i < 50; i++)
        am_wait(ep, 10); /* their replies: the queue has room again */
    ck_assert_msg(AO_load(&sh->count) == sent, "%s: the server ran %lu, %lu were sent",
                  what, (unsigned long)AO_load(&sh->count), sent);
    rc = am_call_try(ep, 0, H_COUNT, &x, 1, NULL, 0, &res, 20000, &id);
    ck_assert_msg(rc == 0, "%s: am_call_try to a drained queue gave %s", what,
                  am_err_name(rc));
    rc = am_call_wait(ep, id, 20000);
    ck_assert_msg(rc == 0 && res.nargs == 1 && res.args[0] == x, "%s: the call ended %s",
                  what, am_err_name(rc));
    ck_assert_int_eq(AO_load(&sh->count), sent + 1);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    stop_servers(srv, 0);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- indexes past any peer table ---- */

START_TEST(far_index_refused)
{
    names(_i, "a call to an index past any peer table");
    am_ep_t *ep = create(NULL, 0);
    static const unsigned far[] = {AM_MAX_PEERS, 1u << 31, UINT_MAX - 1};
    static char buf[64];
    for (unsigned k = 0; k < sizeof far / sizeof far[0]; k++)
        for (int cap = 0; cap < 2; cap++) {
            struct am_result res = {.data = buf, .cap = cap ? sizeof buf : 0};
            am_call_t id;
            uint32_t x = 1;
            int rc = am_call_start(ep, far[k], H_ECHO, &x, 1, NULL, 0, &res, 1000, &id);
            ck_assert_msg(rc == -EINVAL, "%s: index %u (cap %zu) gave %s", what, far[k],
                          res.cap, am_err_name(rc));
        }
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_clean(what);
}
END_TEST

static Suite *identity_suite(void)
{
    Suite *s = suite_create("call_identity");
    TCase *tc = tu_tcase(s, "replies", 240);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, kept_reply_caller_replaced, 0, 4);
    tcase_add_loop_test(tc, owed_reply_caller_replaced, 0, 4);
    tcase_add_loop_test(tc, handler_reply_caller_replaced, 0, 4);
    tcase_add_loop_test(tc, reply_via_other_index, 0, 4);
    tc = tu_tcase(s, "calls", 240);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, wake_then_call_unsent, 0, 2);
    tcase_add_loop_test(tc, hung_server_starves_none, 0, 2);
    tcase_add_loop_test(tc, try_never_waits, 0, 2);
    tcase_add_loop_test(tc, far_index_refused, 0, 2);
    return s;
}

int main(void)
{
    tu_run_init("ci");
    return tu_run_suite(identity_suite(), "check_call_identity");
}
