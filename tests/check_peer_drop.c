/*
 * check_peer_drop.c - a peer that a poll drops while a send still holds it.
 * Real processes, real SIGKILL; a test hook parks the sending server at the
 * chosen point.
 *
 *   blocked_send_receiver_replaced  every claim algorithm on both backends,
 *              and every per-sender channel kind on both: a server S streams
 *              requests (short, bulk or long) to a client D that never polls,
 *              until a send blocks; parked there (AM_HOOK_BACKOFF, before its
 *              backoff's poll), S SIGKILLs and reaps D, and a new client N
 *              (another name, or D's own name: a restarted D) sends S a
 *              request.  The blocked send's next poll learns N at D's old
 *              index: the send must return -EPIPE, and N must receive
 *              nothing of the old stream (it gets only S's later "done").
 *   handler_calls_refused  am_ep_map, am_set_handler and am_ep_create inside a
 *              handler return -EDEADLK and change nothing: the index stays
 *              unmapped, the handler unset, the name unmade.
 *
 * Children report through `struct shared` and tu_error; only the test
 * process asserts.  Every failure message names the algorithm or kind, the
 * backend, the message kind and how N is named.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

enum { H_HELLO = 1, H_STREAM, H_DONE, H_UNSET };
enum { ROLE_D = 1, ROLE_N = 2 };
enum msg_kind { MSG_SHORT, MSG_BULK, MSG_LONG, MSG_KINDS };
static const char *const msg_names[] = {"short", "bulk", "long"};

#define PACKETS 8 /* D's queues (or channels): they fill after a few sends */
#define BULK_BLOCKS 2
#define LONG_MAX AM_HEAP_FLOOR /* D's heap then holds two long messages */
#define MAX_STREAM 10000u      /* sends before a blocked one, at most */

struct shared {
    struct tu_errors err;
    AO_t d_ready, n_hello, n_done;
    unsigned n_stream; /* stream messages N received */
    char s[AM_NAME_MAX], d[AM_NAME_MAX], n[AM_NAME_MAX];
    char claim[32], shm[8], queue[32];
};

static struct shared *sh;
static char what[200];

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
}

static void teardown(void)
{
    tu_shared_free(sh, sizeof *sh);
}

/* ---- cases: claim algorithms (mpsc), then per-sender kinds ---------------- */

static int n_kinds(void) /* the per-sender kinds: am_queue_names after "mpsc" */
{
    int n = 0;
    while (am_queue_names[n + 1])
        n++;
    return n;
}

static int n_cases(void)
{
    return 2 * (tu_n_algs() + n_kinds());
}

/* Case i: backend i % 2; the claim algorithm i / 2 with mpsc, then each kind
 * (claim unused). */
static void case_opts(int i)
{
    int j = i / 2;
    int kind = j < tu_n_algs() ? 0 : 1 + j - tu_n_algs();
    snprintf(sh->claim, sizeof sh->claim, "%s", am_claim_names[kind ? 0 : j]);
    snprintf(sh->shm, sizeof sh->shm, "%s", tu_backend_name(i % 2));
    snprintf(sh->queue, sizeof sh->queue, "%s", am_queue_names[kind]);
}

static struct am_ep_opts opts(void)
{
    return (struct am_ep_opts){.claim = sh->claim,
                               .shm = sh->shm,
                               .queue = sh->queue,
                               .packets = PACKETS,
                               .bulk_blocks = BULK_BLOCKS,
                               .long_max = LONG_MAX};
}

/* ---- the clients ----------------------------------------------------------- */

/* A client's endpoint `name` with S mapped at index 0, having said hello
 * (role); NULL after a tu_error. */
static am_ep_t *client(const char *name, uint32_t role)
{
    struct am_ep_opts o = opts();
    am_ep_t *ep = NULL;
    int rc = am_ep_create(name, &o, &ep);
    if (rc == 0 && (rc = tu_map_when_there(ep, 0, sh->s, 10)) == 0)
        rc = am_request(ep, 0, H_HELLO, &role, 1);
    if (rc < 0) {
        tu_error(&sh->err, "client %u (%s): %s", role, name, am_strerror(rc));
        return NULL;
    }
    return ep;
}

/* D: says hello, then never polls, so S's sends to it fill its queue. */
static void d_main(void *arg)
{
    if (!client(sh->d, ROLE_D))
        _exit(1);
    AO_store_release(&sh->d_ready, 1);
    for (;;)
        pause();
}

static void n_stream(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    sh->n_stream++;
}

static void n_done(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    AO_store_release(&sh->n_done, 1);
}

/* N: forked while S is parked in its blocked send; says hello, then counts
 * what S sends until S's "done". */
static void n_main(void *arg)
{
    am__claim_stall_hook = NULL; /* S's, inherited */
    am_ep_t *ep = client(sh->n, ROLE_N);
    if (!ep)
        _exit(1);
    am_set_handler(ep, H_STREAM, n_stream);
    am_set_handler(ep, H_DONE, n_done);
    AO_store_release(&sh->n_hello, 1);
    double end = tu_now_s() + 20;
    while (!AO_load_acquire(&sh->n_done) && tu_now_s() < end)
        am_wait(ep, 10);
    if (!AO_load(&sh->n_done))
        tu_error(&sh->err, "N: no done from S in 20 s");
    am_ep_destroy(ep);
}

/* ---- the server ------------------------------------------------------------ */

static struct {
    unsigned idx[3];  /* by role: the index S learned it at */
    int seen[3];      /* by role: its hello ran */
    int sending;      /* inside the blocked send */
    int n_while_sent; /* N's hello ran inside the blocked send */
    int armed;        /* the hook's next backoff is the one to park */
    pid_t d, n;
} srv;

static void s_hello(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    uint32_t role = n == 1 && a[0] <= ROLE_N ? a[0] : 0;
    srv.idx[role] = am_token_source(t);
    srv.seen[role] = 1;
    srv.n_while_sent |= role == ROLE_N && srv.sending;
}

/* S parked at its blocked send's first backoff: D dies (and is reaped, so
 * its death is visible), N starts and says hello; then the send goes on. */
static void replace_d(enum am_hook where)
{
    if (where != AM_HOOK_BACKOFF || !srv.armed)
        return;
    srv.armed = 0;
    kill(srv.d, SIGKILL);
    tu_reap(srv.d, 10);
    srv.n = tu_spawn(n_main, NULL, 1);
    if (!tu_wait_flag(&sh->n_hello, 1, 10))
        tu_error(&sh->err, "N's hello not sent in 10 s");
}

/* One message of the stream to D (index idx), of kind k. */
static int stream_send(am_ep_t *ep, unsigned idx, enum msg_kind k, uint32_t seq)
{
    static unsigned char buf[LONG_MAX];
    if (k == MSG_BULK)
        return am_request_bulk(ep, idx, H_STREAM, buf, AM_MAX_BULK, &seq, 1);
    if (k == MSG_LONG)
        return am_request_long(ep, idx, H_STREAM, buf, LONG_MAX, &seq, 1);
    return am_request(ep, idx, H_STREAM, &seq, 1);
}

/* Poll ep until `flag` is set, up to 10 s. */
static int poll_until(am_ep_t *ep, const int *flag)
{
    double end = tu_now_s() + 10;
    while (!*flag && tu_now_s() < end)
        am_wait(ep, 10);
    return *flag;
}

/* One scenario: stream of kind k, N named D's name (same) or another. */
static void replaced(int i, enum msg_kind k, int same)
{
    snprintf(what, sizeof what, "%s/%s/%s: %s stream, N %s", sh->queue, sh->claim, sh->shm,
             msg_names[k], same ? "restarts as D" : "under another name");
    unsigned scen = (unsigned)(k * 2 + same); /* names: one test process per case */
    char role[8];
    snprintf(role, sizeof role, "s%u", scen);
    tu_ep_name(sh->s, sizeof sh->s, role, -1, i % 2);
    snprintf(role, sizeof role, "d%u", scen);
    tu_ep_name(sh->d, sizeof sh->d, role, -1, i % 2);
    snprintf(role, sizeof role, "n%u", scen);
    tu_ep_name(sh->n, sizeof sh->n, role, -1, i % 2);
    if (same)
        memcpy(sh->n, sh->d, sizeof sh->n);
    AO_store(&sh->d_ready, 0);
    AO_store(&sh->n_hello, 0);
    AO_store(&sh->n_done, 0);
    sh->n_stream = 0;
    memset(&srv, 0, sizeof srv);

    struct am_ep_opts o = opts();
    am_ep_t *ep = NULL;
    int rc = am_ep_create(sh->s, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create S: %s", what, am_strerror(rc));
    am_set_handler(ep, H_HELLO, s_hello);
    srv.d = tu_spawn(d_main, NULL, 1);
    tu_assert_flag(&sh->d_ready, 1, 10, "D's hello", what, &sh->err);
    ck_assert_msg(poll_until(ep, &srv.seen[ROLE_D]), "%s: D's hello never ran", what);

    am__claim_stall_hook = replace_d;
    srv.armed = 1;
    srv.sending = 1;
    uint32_t sent = 0;
    while (!srv.seen[ROLE_N] && sent < MAX_STREAM &&
           (rc = stream_send(ep, srv.idx[ROLE_D], k, sent)) == 0)
        sent++;
    srv.sending = 0;
    am__claim_stall_hook = NULL;

    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(sent < MAX_STREAM, "%s: %u sends, none blocked", what, sent);
    ck_assert_msg(srv.n_while_sent && srv.idx[ROLE_N] == srv.idx[ROLE_D],
                  "%s: N's hello not learned at D's index %u inside the blocked send "
                  "(index %u, inside %d): the race did not run",
                  what, srv.idx[ROLE_D], srv.idx[ROLE_N], srv.n_while_sent);
    ck_assert_msg(rc == -EPIPE,
                  "%s: the send blocked on dead D gave %s after N took D's index, "
                  "want EPIPE",
                  what, am_err_name(rc));
    rc = am_request(ep, srv.idx[ROLE_N], H_DONE, NULL, 0);
    ck_assert_msg(rc == 0, "%s: done to N: %s", what, am_strerror(rc));
    tu_assert_exit0(tu_reap(srv.n, 30), "N", what, &sh->err);
    ck_assert_msg(sh->n_stream == 0, "%s: N received %u message(s) of D's stream", what,
                  sh->n_stream);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    for (int b = 0; b < 2 && !same; b++)
        am__segment_unlink((enum am_shm)b, sh->d); /* dead D's */
    tu_assert_clean(what);
}

START_TEST(blocked_send_receiver_replaced)
{
    case_opts(_i);
    for (int k = 0; k < MSG_KINDS; k++)
        for (int same = 0; same < 2; same++)
            replaced(_i, (enum msg_kind)k, same);
}
END_TEST

/* ---- handler_calls_refused -------------------------------------------------- */

static struct {
    int map, set, create, ran;
    am_ep_t *made;
    char other[AM_NAME_MAX], fresh[AM_NAME_MAX];
} mis;

static void unset(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    mis.ran++;
}

static void misuse(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    am_ep_t *ep = am_token_ep(t);
    mis.map = am_ep_map(ep, 5, mis.other);
    mis.set = am_set_handler(ep, H_UNSET, unset);
    mis.create = am_ep_create(mis.fresh, NULL, &mis.made);
}

START_TEST(handler_calls_refused)
{
    char self[AM_NAME_MAX];
    int b = _i;
    snprintf(what, sizeof what, "%s: calls inside a handler", tu_backend_name(b));
    struct am_ep_opts o = {.shm = tu_backend_name(b)};
    tu_ep_name(self, sizeof self, "self", -1, b);
    tu_ep_name(mis.other, sizeof mis.other, "other", -1, b);
    tu_ep_name(mis.fresh, sizeof mis.fresh, "fresh", -1, b);
    am_ep_t *ep = NULL, *other = NULL, *sentinel = (am_ep_t *)&mis;
    ck_assert_int_eq(am_ep_create(self, &o, &ep), 0);
    ck_assert_int_eq(am_ep_create(mis.other, &o, &other), 0);
    ck_assert_int_eq(am_ep_map(ep, 0, self), 0);
    am_set_handler(ep, H_HELLO, misuse);
    mis.made = sentinel;
    ck_assert_int_eq(am_request(ep, 0, H_HELLO, NULL, 0), 0);
    ck_assert_int_eq(am_poll(ep), 1);
    ck_assert_msg(mis.map == -EDEADLK && mis.set == -EDEADLK && mis.create == -EDEADLK,
                  "%s: am_ep_map %s, am_set_handler %s, am_ep_create %s; want EDEADLK",
                  what, am_err_name(mis.map), am_err_name(mis.set),
                  am_err_name(mis.create));
    /* Nothing changed: index 5 unmapped, H_UNSET unset, no endpoint made. */
    ck_assert_msg(am_request(ep, 5, H_HELLO, NULL, 0) == -EINVAL, "%s: index 5 mapped",
                  what);
    ck_assert_int_eq(am_request(ep, 0, H_UNSET, NULL, 0), 0);
    am_poll(ep);
    ck_assert_msg(mis.ran == 0 && am_ep_bad_packets(ep) == 1,
                  "%s: the handler set in a handler ran %d time(s)", what, mis.ran);
    ck_assert_msg(mis.made == sentinel && am_ep_probe(mis.fresh) == -ENOENT,
                  "%s: am_ep_create in a handler made %s", what, mis.fresh);
    /* The same calls outside a handler work. */
    ck_assert_int_eq(am_ep_map(ep, 5, mis.other), 0);
    ck_assert_int_eq(am_set_handler(ep, H_UNSET, unset), 0);
    ck_assert_int_eq(am_ep_destroy(other), 0);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_clean(what);
}
END_TEST

static Suite *peer_drop_suite(void)
{
    Suite *s = suite_create("peer_drop");
    TCase *tc = tu_tcase(s, "replaced", 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, blocked_send_receiver_replaced, 0, n_cases());
    tc = tu_tcase(s, "misuse", 30);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, handler_calls_refused, 0, 2);
    return s;
}

int main(void)
{
    tu_run_init("pd");
    return tu_run_suite(peer_drop_suite(), "check_peer_drop");
}
