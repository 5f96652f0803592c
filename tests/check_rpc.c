/*
 * check_rpc.c - requests answered by replies, between processes, for every claim
 * algorithm on both backends.
 *
 *   replies          a server process replies from its request handlers with
 *                    computed values: short replies with 0..8 arguments, bulk
 *                    replies up to 8192 bytes (to short and to bulk requests);
 *                    the client checks every argument and byte, the order, and
 *                    counts replies exactly
 *   misuse           a second reply in one handler is -EALREADY, a request or
 *                    wait or destroy from a handler -EDEADLK, a reply from a
 *                    reply handler -EDEADLK; failed replies do not count as one;
 *                    every message is counted at both ends: the one reply to
 *                    each request arrives with its contents, nothing refused
 *                    arrives anywhere, and both endpoints still answer after
 *                    the refused calls (an echo round trip)
 *   standalone_*     separately exec'ed processes (this binary run again with
 *                    --server / --client): clients map the server by name only;
 *                    the server never maps anyone, replies to what it learns from
 *                    each message (am_token_source), and later sends requests of
 *                    its own to those indices; several clients at once, also
 *                    clients on the other backend than the server's
 *   client_restart   a client that leaves and comes back under the same name
 *                    gets replies again (the server maps it anew)
 *   goodbye          a receiver with one sender entry: messages sent just
 *                    before their sender destroys its endpoint are delivered,
 *                    in order, with their contents, to an unknown source
 *                    (a reply is -EPIPE); the entry is CLOSED and its lifeline
 *                    let go while the sender still lives, a send on the
 *                    destroyed handle is refused, and the entry is taken again
 *                    by the next sender, to whom no earlier sender's message
 *                    is credited
 *   dead_peer        sends to a server that destroyed its endpoint, exited
 *                    without destroying it, or was SIGKILLed while the client is
 *                    blocked on its full queue (2 packets, 1 bulk block) end with
 *                    -EPIPE within seconds, never hang
 *
 * The test process is the client where it can be (its handlers use Check); other
 * processes report through a shared block, and the test asserts on it, naming
 * the algorithm and backend in every failure message.  Forked helpers die with
 * the test process (PR_SET_PDEATHSIG).  Endpoint names carry this run's and the
 * test's pid; each test checks that nothing of its names is left in /dev/shm or
 * among the System V segments, and main removes what a failed test left.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "peers.h"
#include "testutil.h"

/* Handler ids.  Requests to the server: */
enum {
    H_ECHO = 10,
    H_BULK_ECHO,
    H_BULK_GEN,
    H_STOP,
    H_MISUSE,
    H_MISUSE_BULK,
    H_NOREPLY,
    H_BYE
};
/* Replies to the client, and the stand-alone programs' messages: */
enum { H_R_ECHO = 20, H_R_BULK_ECHO, H_R_BULK_GEN, H_R_MISUSE, H_R_BYE };
enum { H_REQ = 30, H_PUSH, H_DONE, H_NOP, H_R_REQ, H_R_PUSH, H_R_DONE };

static char self_exe[512];

static char what[96]; /* "ALG/BACKEND: test", in every failure message */

/* ---- shared state, helpers ---- */

struct shared {
    AO_t ready, go, stop;
    struct tu_errors err; /* what the helper processes saw */
    int misuse[12];       /* results of the server's misuse handlers */
    AO_t noreply;         /* H_NOREPLY requests the server ran */
    AO_t stray;           /* H_R_MISUSE replies the server got (all refused) */
    unsigned long srv_delivered, srv_bad; /* the server's counts at its end */
    AO_t sent, calling;                   /* dead_peer: the blocked client's progress */
    int client_rc;
    double t_ret; /* when the blocked send returned */
};

static struct shared *sh;

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
    tu_pin(0);
}

/* Fork a helper pinned to `cpu` that dies with the test process. */
static pid_t spawn(void (*fn)(void *), void *arg, int cpu)
{
    pid_t p = tu_spawn(fn, arg, cpu);
    ck_assert_msg(p > 0, "%s: fork", what);
    return p;
}

static am_ep_t *create_ok(const char *name, const struct am_ep_opts *o)
{
    am_ep_t *ep = NULL;
    int rc = am_ep_create(name, o, &ep);
    ck_assert_msg(rc == 0, "%s: create %s: %s", what, name, am_strerror(rc));
    return ep;
}

/* ---- payloads ---- */

/* The server's answer to one echo argument. */
static uint32_t echo_arg(uint32_t a, int i, int nargs)
{
    return a * 3u + (uint32_t)i + (uint32_t)nargs * 1000u;
}

/* The length of bulk message number `seq`: the edges first, then anything. */
static size_t bulk_len(uint32_t seq)
{
    static const size_t edge[] = {0,    1,    2,    3,    7,    8,    63,   64,  65,
                                  1000, 4095, 4096, 4097, 8000, 8191, 8192, 8192};
    if (seq < sizeof edge / sizeof edge[0])
        return edge[seq];
    return tu_mix32(seq, 77) % (AM_MAX_BULK + 1);
}

/* ---- the forked server ---- */

struct srv_cfg {
    char name[AM_NAME_MAX];
    int alg, b;
    unsigned packets, bulk_blocks;
};

static volatile int srv_stop;
static am_ep_t *srv_ep;

static void srv_echo(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    uint32_t out[AM_MAX_ARGS];
    for (int i = 0; i < nargs; i++)
        out[i] = echo_arg(args[i], i, nargs);
    int rc = am_reply(t, H_R_ECHO, out, nargs);
    if (rc != 0)
        tu_error(&sh->err, "server: echo reply (%d args): %s", nargs, am_strerror(rc));
}

/* args: seq, len, checksum of the data.  Replies the data reversed, xor 0xa5. */
static void srv_bulk_echo(am_token_t *t, const uint32_t *args, int nargs, void *d,
                          size_t len)
{
    static unsigned char out[AM_MAX_BULK];
    const unsigned char *in = d;
    if (nargs != 3 || args[1] != len || tu_fnv1a(in, len) != args[2]) {
        tu_error(&sh->err, "server: bulk request %u: %zu bytes, checksum %s",
                 nargs ? args[0] : 0, len,
                 nargs == 3 && tu_fnv1a(in, len) == args[2] ? "ok" : "wrong");
        return;
    }
    for (size_t i = 0; i < len; i++)
        out[i] = in[len - 1 - i] ^ 0xa5;
    uint32_t r[3] = {args[0], (uint32_t)len, tu_fnv1a(out, len)};
    int rc = am_reply_bulk(t, H_R_BULK_ECHO, out, len, r, 3);
    if (rc != 0)
        tu_error(&sh->err, "server: bulk echo reply: %s", am_strerror(rc));
}

/* args: seq, len.  Replies tu_pattern(seq ^ 0x5555) of len bytes. */
static void srv_bulk_gen(am_token_t *t, const uint32_t *args, int nargs, void *d,
                         size_t len)
{
    static unsigned char out[AM_MAX_BULK];
    if (nargs != 2 || args[1] > AM_MAX_BULK) {
        tu_error(&sh->err, "server: bad bulk-gen request");
        return;
    }
    tu_pattern(out, args[0] ^ 0x5555u, args[1]);
    int rc = am_reply_bulk(t, H_R_BULK_GEN, out, args[1], args, 2);
    if (rc != 0)
        tu_error(&sh->err, "server: bulk gen reply: %s", am_strerror(rc));
}

static void srv_stop_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    srv_stop = 1;
}

/* Misuse inside a request handler; results go to sh->misuse[0..7]. */
static void srv_misuse(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    static const uint32_t nine[9];
    am_ep_t *ep = am_token_ep(t);
    unsigned src = am_token_source(t);
    sh->misuse[0] = am_reply(t, AM_MAX_HANDLERS, NULL, 0);
    sh->misuse[1] = am_reply(t, H_R_MISUSE, nine, 9);
    sh->misuse[2] = am_reply(t, H_R_MISUSE, a, n); /* the one reply */
    sh->misuse[3] = am_reply(t, H_R_MISUSE, a, n);
    sh->misuse[4] = am_reply_bulk(t, H_R_MISUSE, "abcd", 4, NULL, 0);
    sh->misuse[5] = am_request(ep, src, H_NOREPLY, NULL, 0);
    sh->misuse[6] = am_request_bulk(ep, src, H_NOREPLY, "abcd", 4, NULL, 0);
    sh->misuse[7] =
        am_wait(ep, 0) * 10 + (am_ep_destroy(ep) == -EDEADLK) + 2 * (ep == srv_ep);
    sh->misuse[11] = am_poll(ep); /* would free this handler's packet early */
}

/* Bulk reply first, then a short one: the second is refused. */
static void srv_misuse_bulk(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    sh->misuse[8] = am_reply_bulk(t, H_R_MISUSE, "abcd", 4, a, n);
    sh->misuse[9] = am_reply(t, H_R_MISUSE, a, n);
    sh->misuse[10] = am_reply_bulk(t, H_R_MISUSE, "abcd", 4, a, n);
}

static void srv_noreply(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_fetch_and_add1(&sh->noreply);
}

/* A reply the client's reply handler tried (refused): must never arrive. */
static void srv_stray(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_fetch_and_add1(&sh->stray);
}

static void server(void *arg)
{
    const struct srv_cfg *c = arg;
    struct am_ep_opts o = {am_claim_names[c->alg],
                           tu_backend_name(c->b),
                           c->packets,
                           c->bulk_blocks,
                           0,
                           0,
                           0,
                           NULL,
                           0};
    int rc = am_ep_create(c->name, &o, &srv_ep);
    if (rc != 0) {
        tu_error(&sh->err, "server: create %s: %s", c->name, am_strerror(rc));
        _exit(2);
    }
    am_set_handler(srv_ep, H_ECHO, srv_echo);
    am_set_handler(srv_ep, H_BULK_ECHO, srv_bulk_echo);
    am_set_handler(srv_ep, H_BULK_GEN, srv_bulk_gen);
    am_set_handler(srv_ep, H_STOP, srv_stop_h);
    am_set_handler(srv_ep, H_MISUSE, srv_misuse);
    am_set_handler(srv_ep, H_MISUSE_BULK, srv_misuse_bulk);
    am_set_handler(srv_ep, H_NOREPLY, srv_noreply);
    am_set_handler(srv_ep, H_R_MISUSE, srv_stray);
    AO_store_release(&sh->ready, 1);
    while (!srv_stop && !AO_load(&sh->stop)) {
        rc = am_wait(srv_ep, 100);
        if (rc < 0) {
            tu_error(&sh->err, "server: am_wait: %s", am_strerror(rc));
            break;
        }
    }
    sh->srv_delivered = srv_ep->delivered;
    sh->srv_bad = am_ep_bad_packets(srv_ep);
    rc = am_ep_destroy(srv_ep);
    if (rc != 0)
        tu_error(&sh->err, "server: destroy: %s", am_strerror(rc));
}

/* Start the server of combination (alg, b) and map it as index 0 of a new
 * client endpoint. */
static pid_t start_server(struct srv_cfg *c, int alg, int b, am_ep_t **cli)
{
    char cn[AM_NAME_MAX];
    c->alg = alg;
    c->b = b;
    tu_ep_name(c->name, sizeof c->name, "srv", alg, b);
    tu_ep_name(cn, sizeof cn, "cli", alg, b);
    pid_t p = spawn(server, c, 1);
    tu_assert_flag(&sh->ready, 1, 10, "the server", what, &sh->err);
    struct am_ep_opts o = {am_claim_names[alg], tu_backend_name(b), 0, 0, 0, 0, 0, NULL, 0};
    *cli = create_ok(cn, &o);
    int rc = am_ep_map(*cli, 0, c->name);
    ck_assert_msg(rc == 0, "%s: map server: %s", what, am_strerror(rc));
    return p;
}

static void stop_server(am_ep_t *cli, pid_t p)
{
    int rc = am_request(cli, 0, H_STOP, NULL, 0);
    ck_assert_msg(rc == 0, "%s: stop request: %s", what, am_strerror(rc));
    tu_assert_exit0(tu_reap(p, 10), "server", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
}

/* ---- (a) replies ---- */

static uint32_t echo_got, bulk_echo_got, bulk_gen_got;

static void cli_echo(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    uint32_t seq = echo_got++;
    int k = (int)(seq % (AM_MAX_ARGS + 1));
    ck_assert_msg(nargs == k && len == 0 && !d, "%s: echo reply %u: %d args, want %d", what,
                  seq, nargs, k);
    for (int i = 0; i < nargs; i++)
        ck_assert_msg(args[i] == echo_arg(tu_mix32(seq, (uint32_t)i), i, k),
                      "%s: echo reply %u (%d args): arg %d is %#x, want %#x", what, seq, k,
                      i, args[i], echo_arg(tu_mix32(seq, (uint32_t)i), i, k));
}

static void cli_bulk_echo(am_token_t *t, const uint32_t *args, int nargs, void *d,
                          size_t len)
{
    static unsigned char in[AM_MAX_BULK], want[AM_MAX_BULK];
    uint32_t seq = bulk_echo_got++;
    size_t n = bulk_len(seq);
    ck_assert_msg(
        nargs == 3 && args[0] == seq && args[1] == n && len == n,
        "%s: bulk echo reply %u: %d args, seq %u, %zu bytes; want seq %u, %zu bytes", what,
        seq, nargs, nargs ? args[0] : 0, len, seq, n);
    tu_pattern(in, seq, n);
    for (size_t i = 0; i < n; i++)
        want[i] = in[n - 1 - i] ^ 0xa5;
    ck_assert_msg(tu_fnv1a(d, len) == args[2] && (n == 0 || memcmp(d, want, n) == 0),
                  "%s: bulk echo reply %u (%zu bytes): data differ", what, seq, n);
}

static void cli_bulk_gen(am_token_t *t, const uint32_t *args, int nargs, void *d,
                         size_t len)
{
    static unsigned char want[AM_MAX_BULK];
    uint32_t seq = bulk_gen_got++;
    size_t n = bulk_len(seq);
    ck_assert_msg(nargs == 2 && args[0] == seq && args[1] == n && len == n,
                  "%s: bulk reply %u: %zu bytes, want %zu", what, seq, len, n);
    tu_pattern(want, seq ^ 0x5555u, n);
    ck_assert_msg(n == 0 || memcmp(d, want, n) == 0,
                  "%s: bulk reply %u (%zu bytes) differs", what, seq, n);
}

static void wait_replies(am_ep_t *ep, const uint32_t *got, uint32_t want, const char *kind)
{
    double end = tu_now_s() + 15;
    while (*got < want && tu_now_s() < end) {
        int rc = am_wait(ep, 50);
        ck_assert_msg(rc >= 0, "%s: am_wait: %s", what, am_strerror(rc));
    }
    ck_assert_msg(*got == want, "%s: %u of %u %s replies (%s)", what, *got, want, kind,
                  tu_first_error(&sh->err, "no server error"));
}

START_TEST(replies)
{
    int a = _i / 2, b = _i % 2;
    snprintf(what, sizeof what, "%s/%s: replies", am_claim_names[a], tu_backend_name(b));
    struct srv_cfg c = {.packets = 0};
    am_ep_t *ep;
    pid_t p = start_server(&c, a, b, &ep);
    am_set_handler(ep, H_R_ECHO, cli_echo);
    am_set_handler(ep, H_R_BULK_ECHO, cli_bulk_echo);
    am_set_handler(ep, H_R_BULK_GEN, cli_bulk_gen);
    static unsigned char buf[AM_MAX_BULK];
    const uint32_t n = 3000u * (uint32_t)tu_stress_factor();
    uint32_t echo_sent = 0, bulk_sent = 0, gen_sent = 0;
    for (uint32_t j = 0; j < n; j++) {
        int rc;
        if (j % 3 == 0) { /* short request, 0..8 args, answered likewise */
            uint32_t args[AM_MAX_ARGS], seq = echo_sent++;
            int k = (int)(seq % (AM_MAX_ARGS + 1));
            for (int i = 0; i < k; i++)
                args[i] = tu_mix32(seq, (uint32_t)i);
            rc = am_request(ep, 0, H_ECHO, args, k);
        } else if (j % 3 == 1) { /* bulk request, bulk reply */
            uint32_t seq = bulk_sent++;
            size_t len = bulk_len(seq);
            tu_pattern(buf, seq, len);
            uint32_t args[3] = {seq, (uint32_t)len, tu_fnv1a(buf, len)};
            rc = am_request_bulk(ep, 0, H_BULK_ECHO, buf, len, args, 3);
        } else { /* short request, bulk reply */
            uint32_t seq = gen_sent++;
            uint32_t args[2] = {seq, (uint32_t)bulk_len(seq)};
            rc = am_request(ep, 0, H_BULK_GEN, args, 2);
        }
        ck_assert_msg(rc == 0, "%s: request %u: %s", what, j, am_strerror(rc));
    }
    wait_replies(ep, &echo_got, echo_sent, "echo");
    wait_replies(ep, &bulk_echo_got, bulk_sent, "bulk echo");
    wait_replies(ep, &bulk_gen_got, gen_sent, "bulk");
    stop_server(ep, p);
    /* Exactly as many replies as requests: nothing more arrives. */
    am_poll(ep);
    ck_assert_msg(echo_got == echo_sent && bulk_echo_got == bulk_sent &&
                      bulk_gen_got == gen_sent,
                  "%s: replies %u/%u/%u for requests %u/%u/%u", what, echo_got,
                  bulk_echo_got, bulk_gen_got, echo_sent, bulk_sent, gen_sent);
    ck_assert_msg(am_ep_bad_packets(ep) == 0, "%s: %lu bad packets", what,
                  am_ep_bad_packets(ep));
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    tu_assert_clean(what);
}
END_TEST

/* ---- (b) misuse from handlers ---- */

/* What the client got: the replies to its two misuse requests (nargs, first
 * argument, bulk length and bytes), requests the server's handler tried to
 * send (refused: none may arrive), and the echo after the misuse. */
static struct {
    int replies, nargs[3], noreply, echoes;
    uint32_t arg0[3], echo;
    size_t len[3];
    char data[3][8];
} mu;
static int cli_res[6];

static void cli_misuse(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    am_ep_t *ep = am_token_ep(t);
    int k = mu.replies++;
    if (k < 3) {
        mu.nargs[k] = nargs;
        mu.arg0[k] = nargs > 0 ? args[0] : 0;
        mu.len[k] = len;
        if (len)
            memcpy(mu.data[k], d, len < sizeof mu.data[k] ? len : sizeof mu.data[k]);
    }
    if (k == 0) {
        cli_res[0] = am_reply(t, H_R_MISUSE, NULL, 0);
        cli_res[1] = am_reply_bulk(t, H_R_MISUSE, "abcd", 4, NULL, 0);
        cli_res[2] = am_request(ep, 0, H_NOREPLY, NULL, 0);
        cli_res[3] = am_request_bulk(ep, 0, H_NOREPLY, "abcd", 4, NULL, 0);
        cli_res[4] = am_wait(ep, 0);
        cli_res[5] = am_ep_destroy(ep);
    }
}

static void cli_misuse_noreply(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    mu.noreply++;
}

static void cli_misuse_echo(am_token_t *t, const uint32_t *args, int nargs, void *d,
                            size_t len)
{
    mu.echoes++;
    mu.echo = nargs == 1 ? args[0] : ~0u;
}

/* am_wait on ep until *count reaches want or 10 s pass. */
static void wait_count(am_ep_t *ep, const int *count, int want)
{
    double end = tu_now_s() + 10;
    while (*count < want && tu_now_s() < end)
        am_wait(ep, 50);
}

START_TEST(misuse)
{
    int a = _i / 2, b = _i % 2;
    snprintf(what, sizeof what, "%s/%s: misuse", am_claim_names[a], tu_backend_name(b));
    struct srv_cfg c = {.packets = 0};
    am_ep_t *ep;
    pid_t p = start_server(&c, a, b, &ep);
    am_set_handler(ep, H_R_MISUSE, cli_misuse);
    am_set_handler(ep, H_NOREPLY, cli_misuse_noreply);
    am_set_handler(ep, H_R_ECHO, cli_misuse_echo);
    uint32_t x = 42, y = 43, z = 7;
    ck_assert_msg(am_request(ep, 0, H_MISUSE, &x, 1) == 0, "%s: request", what);
    ck_assert_msg(am_request(ep, 0, H_MISUSE_BULK, &y, 1) == 0, "%s: request", what);
    wait_count(ep, &mu.replies, 2);
    /* Both endpoints still work after the refused calls (destroy, poll and
     * wait in handlers): a round trip after them.  A second reply to either
     * request would have been queued before the echo's, so it is here by now. */
    int rc = am_request(ep, 0, H_ECHO, &z, 1);
    ck_assert_msg(rc == 0, "%s: echo request after the misuse: %s", what, am_strerror(rc));
    wait_count(ep, &mu.echoes, 1);
    ck_assert_msg(mu.echoes == 1 && mu.echo == echo_arg(z, 0, 1),
                  "%s: %d echo replies after the misuse, value %#x, want 1 of %#x (%s)",
                  what, mu.echoes, mu.echo, echo_arg(z, 0, 1),
                  tu_first_error(&sh->err, "no server error"));
    ck_assert_msg(mu.replies == 2, "%s: %d replies to 2 misuse requests (%s)", what,
                  mu.replies, tu_first_error(&sh->err, ""));
    /* The one reply each: H_MISUSE's short one, H_MISUSE_BULK's bulk one. */
    ck_assert_msg(mu.nargs[0] == 1 && mu.arg0[0] == x && mu.len[0] == 0,
                  "%s: reply to the request: %d args, first %u, %zu bytes; want 1, %u, 0",
                  what, mu.nargs[0], mu.arg0[0], mu.len[0], x);
    ck_assert_msg(mu.nargs[1] == 1 && mu.arg0[1] == y && mu.len[1] == 4 &&
                      memcmp(mu.data[1], "abcd", 4) == 0,
                  "%s: reply to the bulk request: %d args, first %u, %zu bytes '%.4s'; "
                  "want 1, %u, 4 'abcd'",
                  what, mu.nargs[1], mu.arg0[1], mu.len[1], mu.data[1], y);
    stop_server(ep, p);
    static const struct {
        int want;
        const char *why;
    } s[] = {
        {-EINVAL, "reply to handler 256"},
        {-EMSGSIZE, "reply with 9 args"},
        {0, "first valid reply (after failed ones)"},
        {-EALREADY, "second reply"},
        {-EALREADY, "bulk reply after a reply"},
        {-EDEADLK, "request from a request handler"},
        {-EDEADLK, "bulk request from a request handler"},
        {-EDEADLK * 10 + 1 + 2, "am_wait, am_ep_destroy, am_token_ep in a handler"},
        {0, "bulk reply first"},
        {-EALREADY, "reply after a bulk reply"},
        {-EALREADY, "second bulk reply"},
        {-EDEADLK, "am_poll in a handler"},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        ck_assert_msg(sh->misuse[i] == s[i].want, "%s: server: %s gave %d, want %d", what,
                      s[i].why, sh->misuse[i], s[i].want);
    static const char *const cw[] = {"reply",        "bulk reply", "request",
                                     "bulk request", "am_wait",    "am_ep_destroy"};
    for (int i = 0; i < 6; i++)
        ck_assert_msg(cli_res[i] == -EDEADLK, "%s: %s from a reply handler gave %d (%s)",
                      what, cw[i], cli_res[i], am_strerror(cli_res[i]));
    /* Every message counted at both ends: nothing refused arrived. */
    am_poll(ep);
    ck_assert_msg(AO_load(&sh->noreply) == 0 && AO_load(&sh->stray) == 0,
                  "%s: the server got %lu refused requests and %lu refused replies", what,
                  (unsigned long)AO_load(&sh->noreply), (unsigned long)AO_load(&sh->stray));
    ck_assert_msg(sh->srv_delivered == 4 && sh->srv_bad == 0,
                  "%s: the server ran %lu messages (%lu bad) for 4 requests (2 misuse, "
                  "echo, stop)",
                  what, sh->srv_delivered, sh->srv_bad);
    ck_assert_msg(mu.noreply == 0,
                  "%s: the client got %d of the requests refused to the "
                  "server's handler",
                  what, mu.noreply);
    ck_assert_msg(ep->delivered == 3 && am_ep_bad_packets(ep) == 0,
                  "%s: the client ran %lu messages (%lu bad) for 3 replies", what,
                  ep->delivered, am_ep_bad_packets(ep));
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    /* NULL and destroyed handles are errors, not crashes. */
    ck_assert_msg(am_ep_destroy(ep) == -EINVAL, "%s: second destroy", what);
    ck_assert_msg(am_poll(ep) == -EINVAL && am_wait(ep, 0) == -EINVAL &&
                      am_request(ep, 0, 1, NULL, 0) == -EINVAL &&
                      am_ep_map(ep, 1, "x") == -EINVAL && am_ep_name(ep) == NULL,
                  "%s: calls on a destroyed endpoint", what);
    ck_assert_msg(am_token_source(NULL) == ~0u && am_token_ep(NULL) == NULL &&
                      am_reply(NULL, 1, NULL, 0) == -EINVAL && am_poll(NULL) == -EINVAL &&
                      am_ep_destroy(NULL) == -EINVAL,
                  "%s: calls with NULL handles", what);
    tu_assert_clean(what);
}
END_TEST

/* ---- (c) stand-alone processes, exec'ed ---- */

#define SA_MAX_CLIENTS 8

static int prog_fail(const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "check_rpc %s: ", who);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 3;
}

/* The stand-alone server: --server NAME ALG BACKEND NCLIENTS NREQ NPUSH */
static struct {
    unsigned nclients, nreq, npush;
    unsigned index[SA_MAX_CLIENTS]; /* + 1; 0: not seen yet */
    unsigned next[SA_MAX_CLIENTS], pushed_back[SA_MAX_CLIENTS];
    unsigned total, total_back, acks;
    struct tu_errors err; /* what went wrong (first) */
} S;

/* args: client id, seq, x.  Replies x * 3 + cid to whoever sent it. */
static void sa_req(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    unsigned src = am_token_source(t), cid = nargs == 3 ? args[0] : ~0u;
    if (cid >= S.nclients || args[1] != S.next[cid]) {
        tu_error(&S.err, "request from client %u: seq %u, want %u", cid,
                 nargs == 3 ? args[1] : 0, cid < S.nclients ? S.next[cid] : 0);
        return;
    }
    S.next[cid]++;
    if (S.index[cid] == 0) {
        for (unsigned c = 0; c < S.nclients; c++)
            if (S.index[c] == src + 1)
                tu_error(&S.err, "clients %u and %u have the same index %u", c, cid, src);
        S.index[cid] = src + 1;
    } else if (S.index[cid] != src + 1) {
        tu_error(&S.err, "client %u came as index %u, then %u", cid, S.index[cid] - 1, src);
    }
    uint32_t r[3] = {cid, args[1], args[2] * 3 + cid};
    int rc = am_reply(t, H_R_REQ, r, 3);
    if (rc != 0)
        tu_error(&S.err, "reply to client %u: %s", cid, am_strerror(rc));
    S.total++;
}

/* args: cid, p, value + cid + 1 */
static void sa_push_back(am_token_t *t, const uint32_t *args, int nargs, void *d,
                         size_t len)
{
    unsigned cid = nargs == 3 ? args[0] : ~0u;
    if (cid >= S.nclients || args[1] != S.pushed_back[cid] ||
        args[2] != tu_mix32(cid, args[1]) + cid + 1 ||
        am_token_source(t) + 1 != S.index[cid])
        tu_error(&S.err, "bad push reply from client %u", cid);
    else
        S.pushed_back[cid]++;
    S.total_back++;
}

static void sa_ack(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    S.acks++;
}

static void sa_nop(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
}

static int sa_wait_until(am_ep_t *ep, const unsigned *count, unsigned want, const char *who)
{
    double end = tu_now_s() + 25;
    while (*count < want && !S.err.n && tu_now_s() < end) {
        int rc = am_wait(ep, 100);
        if (rc < 0)
            return prog_fail(who, "am_wait: %s", am_strerror(rc));
    }
    if (S.err.n)
        return prog_fail(who, "%s", S.err.first);
    if (*count < want)
        return prog_fail(who, "timed out: %u of %u", *count, want);
    return 0;
}

static int prog_server(char **argv)
{
    const char *name = argv[2];
    struct am_ep_opts o = {argv[3], argv[4], 0, 0, 0, 0, 0, NULL, 0};
    S.nclients = (unsigned)atoi(argv[5]);
    S.nreq = (unsigned)atoi(argv[6]);
    S.npush = (unsigned)atoi(argv[7]);
    if (S.nclients > SA_MAX_CLIENTS)
        return prog_fail("server", "too many clients");
    am_ep_t *ep;
    int rc = am_ep_create(name, &o, &ep);
    if (rc != 0)
        return prog_fail("server", "create %s: %s", name, am_strerror(rc));
    am_set_handler(ep, H_REQ, sa_req);
    am_set_handler(ep, H_R_PUSH, sa_push_back);
    am_set_handler(ep, H_R_DONE, sa_ack);
    am_set_handler(ep, H_NOP, sa_nop);
    rc = sa_wait_until(ep, &S.total, S.nclients * S.nreq, "server (requests)");
    /* Now requests of our own, to the indices the clients came as. */
    for (unsigned p = 0; rc == 0 && p < S.npush; p++)
        for (unsigned c = 0; rc == 0 && c < S.nclients; c++) {
            uint32_t args[3] = {c, p, tu_mix32(c, p)};
            int r = am_request(ep, S.index[c] - 1, H_PUSH, args, 3);
            if (r != 0)
                rc = prog_fail("server", "push to client %u: %s", c, am_strerror(r));
        }
    if (rc == 0)
        rc = sa_wait_until(ep, &S.total_back, S.nclients * S.npush, "server (pushes)");
    for (unsigned c = 0; rc == 0 && c < S.nclients; c++) {
        int r = am_request(ep, S.index[c] - 1, H_DONE, NULL, 0);
        if (r != 0)
            rc = prog_fail("server", "done to client %u: %s", c, am_strerror(r));
    }
    /* Destroy only once every client has its last message: a message still in a
     * queue when its sender destroys its endpoint is dropped (see client). */
    if (rc == 0)
        rc = sa_wait_until(ep, &S.acks, S.nclients, "server (acks)");
    int d = am_ep_destroy(ep);
    if (rc == 0 && d != 0)
        rc = prog_fail("server", "destroy: %s", am_strerror(d));
    return rc;
}

/* The stand-alone client: --client SERVER NAME ALG BACKEND CID NREQ NPUSH */
static struct {
    unsigned cid, replies, pushes, done;
    struct tu_errors err; /* what went wrong (first) */
} C;

static void sa_reply(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    unsigned seq = C.replies++;
    uint32_t x = tu_mix32(C.cid + 100, seq);
    if (nargs != 3 || args[0] != C.cid || args[1] != seq || args[2] != x * 3 + C.cid ||
        am_token_source(t) != 0)
        tu_error(&C.err, "reply %u: got cid %u seq %u value %#x from %u", seq, args[0],
                 args[1], args[2], am_token_source(t));
}

static void sa_push(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    unsigned p = C.pushes++;
    if (nargs != 3 || args[0] != C.cid || args[1] != p || args[2] != tu_mix32(C.cid, p) ||
        am_token_source(t) != 0) {
        tu_error(&C.err, "push %u: got cid %u p %u from index %u", p, args[0], args[1],
                 am_token_source(t));
        return;
    }
    uint32_t r[3] = {C.cid, p, args[2] + C.cid + 1};
    int rc = am_reply(t, H_R_PUSH, r, 3);
    if (rc != 0)
        tu_error(&C.err, "push reply: %s", am_strerror(rc));
}

static void sa_done(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    C.done++;
    int rc = am_reply(t, H_R_DONE, NULL, 0);
    if (rc != 0)
        tu_error(&C.err, "done reply: %s", am_strerror(rc));
}

static int prog_client(char **argv)
{
    const char *server = argv[2], *name = argv[3];
    struct am_ep_opts o = {argv[4], argv[5], 0, 0, 0, 0, 0, NULL, 0};
    C.cid = (unsigned)atoi(argv[6]);
    unsigned nreq = (unsigned)atoi(argv[7]), npush = (unsigned)atoi(argv[8]);
    char who[32];
    snprintf(who, sizeof who, "client %u", C.cid);
    am_ep_t *ep;
    int rc = am_ep_create(name, &o, &ep);
    if (rc != 0)
        return prog_fail(who, "create %s: %s", name, am_strerror(rc));
    am_set_handler(ep, H_R_REQ, sa_reply);
    am_set_handler(ep, H_PUSH, sa_push);
    am_set_handler(ep, H_DONE, sa_done);
    /* The server may not be there yet: it is started at the same time. */
    rc = tu_map_when_there(ep, 0, server, 10);
    if (rc != 0) {
        am_ep_destroy(ep);
        return prog_fail(who, "map %s: %s", server, am_strerror(rc));
    }
    for (unsigned s = 0; rc == 0 && s < nreq; s++) {
        uint32_t args[3] = {C.cid, s, tu_mix32(C.cid + 100, s)};
        int r = am_request(ep, 0, H_REQ, args, 3);
        if (r != 0)
            rc = prog_fail(who, "request %u: %s", s, am_strerror(r));
    }
    double end = tu_now_s() + 25;
    while (rc == 0 && !C.err.n && (C.replies < nreq || !C.done) && tu_now_s() < end) {
        int r = am_wait(ep, 100);
        if (r < 0)
            rc = prog_fail(who, "am_wait: %s", am_strerror(r));
    }
    if (rc == 0 && C.err.n)
        rc = prog_fail(who, "%s", C.err.first);
    if (rc == 0 && (C.replies != nreq || C.pushes != npush || C.done != 1))
        rc = prog_fail(who, "%u of %u replies, %u of %u pushes, done %u", C.replies, nreq,
                       C.pushes, npush, C.done);
    /* Our acknowledgement must reach the server before our endpoint goes (its
     * sender entry goes with it), so wait for the server to close first: then
     * sends fail with -EPIPE. */
    end = tu_now_s() + 10;
    int r = 0;
    while (rc == 0 && (r = am_request(ep, 0, H_NOP, NULL, 0)) == 0 && tu_now_s() < end) {
        am_poll(ep);
        tu_sleep_ms(2);
    }
    if (rc == 0 && r != -EPIPE)
        rc = prog_fail(who, "server did not close: %s", am_strerror(r));
    int d = am_ep_destroy(ep);
    if (rc == 0 && d != 0)
        rc = prog_fail(who, "destroy: %s", am_strerror(d));
    return rc;
}

static void exec_args(void *args)
{
    execv(self_exe, args);
    _exit(96);
}

/* Fork, pin, and exec this binary with `args`. */
static pid_t exec_self(char *const args[], int cpu)
{
    return spawn(exec_args, (void *)args, cpu);
}

static void standalone(int a, int b, int nclients, const char *label)
{
    char srv[AM_NAME_MAX], cli[SA_MAX_CLIENTS][AM_NAME_MAX];
    char nc[16], cid[SA_MAX_CLIENTS][16];
    char nreq[16], npush[16];
    char *alg = (char *)am_claim_names[a];
    snprintf(what, sizeof what, "%s/%s: %s", alg, tu_backend_name(b), label);
    tu_ep_name(srv, sizeof srv, "srv", a, b);
    snprintf(nc, sizeof nc, "%d", nclients);
    snprintf(nreq, sizeof nreq, "%d", 1500 * tu_stress_factor());
    snprintf(npush, sizeof npush, "%d", 300 * tu_stress_factor());
    pid_t pids[SA_MAX_CLIENTS + 1];
    /* Clients first: they wait for the server by name. */
    for (int c = 0; c < nclients; c++) {
        char role[16];
        snprintf(role, sizeof role, "c%d", c);
        /* Every other client lives on the other backend. */
        int cb = (b + c) % 2;
        tu_ep_name(cli[c], sizeof cli[c], role, a, cb);
        snprintf(cid[c], sizeof cid[c], "%d", c);
        char *cbn = (char *)tu_backend_name(cb);
        char *args[] = {self_exe, "--client", srv,  cli[c], alg,
                        cbn,      cid[c],     nreq, npush,  NULL};
        pids[c + 1] = exec_self(args, c);
    }
    char *bn = (char *)tu_backend_name(b);
    char *args[] = {self_exe, "--server", srv, alg, bn, nc, nreq, npush, NULL};
    pids[0] = exec_self(args, 1);
    for (int i = 0; i <= nclients; i++) {
        char who[24] = "server";
        if (i)
            snprintf(who, sizeof who, "client %d", i - 1);
        tu_assert_exit0(tu_reap(pids[i], 30), who, what, &sh->err);
    }
    tu_assert_clean(what);
}

START_TEST(standalone_pair)
{
    standalone(_i / 2, _i % 2, 1, "stand-alone pair");
}
END_TEST

START_TEST(standalone_three)
{
    standalone(_i / 2, _i % 2, 2, "stand-alone, 2 clients");
}
END_TEST

START_TEST(standalone_many)
{
    standalone(_i / 2, _i % 2, 4, "stand-alone, 4 clients");
}
END_TEST

/* ---- a client that comes back under the same name ----
 *
 * Three rounds of a client that maps the server, asks once and destroys its
 * endpoint, each under the same name: the server's mapping of the last round's
 * client (CLOSED) is dropped and the name mapped anew (peers.c, am__peer_learn),
 * so each round's request gets exactly one reply. */

struct restart_arg {
    char srv[AM_NAME_MAX], cli[AM_NAME_MAX];
    int alg, b;
};

static int restart_got;

static void restart_reply(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t l)
{
    restart_got += nargs == 1 && args[0] == echo_arg(7, 0, 1);
}

static void restart_client(void *arg)
{
    const struct restart_arg *r = arg;
    struct am_ep_opts o = {
        am_claim_names[r->alg], tu_backend_name(r->b), 0, 0, 0, 0, 0, NULL, 0};
    am_ep_t *ep;
    int rc = am_ep_create(r->cli, &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "client: create: %s", am_strerror(rc));
        _exit(2);
    }
    am_set_handler(ep, H_R_ECHO, restart_reply);
    uint32_t x = 7;
    if ((rc = am_ep_map(ep, 0, r->srv)) != 0 ||
        (rc = am_request(ep, 0, H_ECHO, &x, 1)) != 0)
        tu_error(&sh->err, "client pid %d: map/request: %s", (int)getpid(),
                 am_strerror(rc));
    double end = tu_now_s() + 3;
    while (rc == 0 && restart_got == 0 && tu_now_s() < end)
        am_wait(ep, 20);
    if (rc == 0 && restart_got != 1)
        tu_error(&sh->err, "client pid %d: %d replies to 1 request (%s)", (int)getpid(),
                 restart_got, tu_first_error(&sh->err, "no server error"));
    am_ep_destroy(ep);
}

START_TEST(client_restart)
{
    int a = _i / 2, b = _i % 2;
    snprintf(what, sizeof what, "%s/%s: client restart", am_claim_names[a],
             tu_backend_name(b));
    struct srv_cfg c = {.alg = a, .b = b};
    struct restart_arg r = {.alg = a, .b = b};
    tu_ep_name(c.name, sizeof c.name, "srv", a, b);
    tu_ep_name(r.srv, sizeof r.srv, "srv", a, b);
    tu_ep_name(r.cli, sizeof r.cli, "cli", a, b);
    pid_t p = spawn(server, &c, 1);
    tu_assert_flag(&sh->ready, 1, 10, "the server", what, &sh->err);
    for (int round = 0; round < 3; round++) {
        pid_t q = spawn(restart_client, &r, 0);
        char who[32];
        snprintf(who, sizeof who, "client, round %d", round);
        tu_assert_exit0(tu_reap(q, 10), who, what, &sh->err);
        ck_assert_msg(AO_load(&sh->err.n) == 0, "%s: round %d: %s", what, round,
                      sh->err.first);
    }
    AO_store(&sh->stop, 1);
    tu_assert_exit0(tu_reap(p, 10), "server", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- a sender that says goodbye ----
 *
 * The receiver (the test process) has one sender entry (max_senders 1), so
 * every sender takes the entry the last one left.  Sender 0 sends three
 * messages and destroys its endpoint; the receiver polls them.  Sender 1 does
 * the same, but before the receiver polls, sender 2 maps the receiver (taking
 * the entry again, while senders 0 and 1 still live) and asks three requests.
 * Senders 0 and 1 stay alive until the end, so only their goodbye, not their
 * death, can free the entry. */

enum { BYE_SENDERS = 3, BYE_MSGS = 3 };

struct goodbye_arg {
    char rcv[AM_NAME_MAX], snd[BYE_SENDERS][AM_NAME_MAX];
    int alg, b;
};

/* In shared memory: what each sender did. */
struct goodbye_shared {
    AO_t done[BYE_SENDERS];      /* sent, destroyed (sender 2: had its replies) */
    AO_t go;                     /* senders 0 and 1 may exit */
    AO_t mapped;                 /* sender 2 has mapped the receiver */
    unsigned entry[BYE_SENDERS]; /* its entry in the receiver's table */
    int after[BYE_SENDERS];      /* a send on the destroyed handle (want -EINVAL) */
    int replies, wrong;          /* sender 2: replies received in order, and not */
};
static struct goodbye_shared *gs;

/* What the receiver saw of each sender's messages. */
static struct {
    int got[BYE_SENDERS]; /* in order, with the right contents */
    int wrong;            /* messages out of order or with wrong contents */
    unsigned source[BYE_SENDERS][BYE_MSGS];
    int reply_rc[BYE_SENDERS][BYE_MSGS];
} gb;

/* Message `seq` of sender `id`: args {id, seq}, then for seq 1 a bulk "bye<id>",
 * for seq 2 a third argument. */
static int bye_send(am_ep_t *ep, uint32_t id, uint32_t seq)
{
    uint32_t args[3] = {id, seq, 0xb1e00u + id};
    char data[8];
    snprintf(data, sizeof data, "bye%u", id);
    if (seq == 1)
        return am_request_bulk(ep, 0, H_BYE, data, 4, args, 2);
    return am_request(ep, 0, H_BYE, args, seq == 2 ? 3 : 2);
}

static void bye_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    uint32_t id = n >= 2 ? a[0] : ~0u, seq = n >= 2 ? a[1] : ~0u;
    char want[8];
    if (id >= BYE_SENDERS || seq != (uint32_t)gb.got[id]) {
        gb.wrong++;
        return;
    }
    snprintf(want, sizeof want, "bye%u", id);
    int ok = seq == 1 ? n == 2 && len == 4 && memcmp(d, want, 4) == 0
                      : len == 0 && n == (seq == 2 ? 3 : 2) &&
                            (seq != 2 || a[2] == 0xb1e00u + id);
    if (!ok) {
        gb.wrong++;
        return;
    }
    gb.source[id][seq] = am_token_source(t);
    gb.reply_rc[id][seq] = am_reply(t, H_R_BYE, a, 2);
    gb.got[id]++;
}

static am_ep_t *gb_ep; /* the receiver */

/* Sender 2's replies: its own {2, seq}, in order. */
static void bye_reply_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    if (n == 2 && a[0] == 2 && a[1] == (uint32_t)gs->replies)
        gs->replies++;
    else
        gs->wrong++;
}

/* Sender `id` (0 or 1): sends its three messages, destroys its endpoint, tries
 * one more send on the handle, and lives on until told. */
static void goodbye_sender(const struct goodbye_arg *g, int id)
{
    struct am_ep_opts o = {
        am_claim_names[g->alg], tu_backend_name(g->b), 0, 0, 0, 0, 0, NULL, 0};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(g->snd[id], &o, &ep);
    if (rc == 0 && (rc = am_ep_map(ep, 0, g->rcv)) == 0) {
        gs->entry[id] = am__peer(ep, 0)->sender_index;
        for (uint32_t seq = 0; seq < BYE_MSGS && rc == 0; seq++)
            rc = bye_send(ep, (uint32_t)id, seq);
    }
    if (rc != 0)
        tu_error(&sh->err, "sender %d: %s", id, am_strerror(rc));
    if ((rc = am_ep_destroy(ep)) != 0)
        tu_error(&sh->err, "sender %d: destroy: %s", id, am_strerror(rc));
    gs->after[id] = bye_send(ep, (uint32_t)id, 0);
    AO_store_release(&gs->done[id], 1);
    tu_wait_flag(&gs->go, 1, 30);
}

static void goodbye_sender0(void *arg)
{
    goodbye_sender(arg, 0);
}

static void goodbye_sender1(void *arg)
{
    goodbye_sender(arg, 1);
}

/* Sender 2: maps the receiver (its one entry, left by sender 1), asks three
 * requests, waits for their replies and leaves. */
static void goodbye_asker(void *arg)
{
    const struct goodbye_arg *g = arg;
    struct am_ep_opts o = {
        am_claim_names[g->alg], tu_backend_name(g->b), 0, 0, 0, 0, 0, NULL, 0};
    am_ep_t *ep;
    int rc = am_ep_create(g->snd[2], &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "sender 2: create: %s", am_strerror(rc));
        _exit(2);
    }
    am_set_handler(ep, H_R_BYE, bye_reply_h);
    if ((rc = am_ep_map(ep, 0, g->rcv)) == 0) {
        gs->entry[2] = am__peer(ep, 0)->sender_index;
        AO_store_release(&gs->mapped, 1);
        for (uint32_t seq = 0; seq < BYE_MSGS && rc == 0; seq++)
            rc = bye_send(ep, 2, seq);
    }
    if (rc != 0)
        tu_error(&sh->err, "sender 2: map/send (senders 0 and 1 have left): %s",
                 am_strerror(rc));
    double end = tu_now_s() + 10;
    while (rc == 0 && gs->replies < BYE_MSGS && tu_now_s() < end)
        am_wait(ep, 20);
    am_poll(ep); /* a reply too many would be here by now */
    am_ep_destroy(ep);
    AO_store_release(&gs->done[2], 1);
}

/* Entry i of ep's own sender table, and the name in it. */
static AO_t entry_state(am_ep_t *ep, unsigned i, char *name)
{
    const struct am_sender *e = am__sender(&ep->own, i);
    memcpy(name, e->name, AM_NAME_MAX);
    name[AM_NAME_MAX - 1] = '\0';
    return AO_load_acquire(&e->state);
}

/* The entry sender `id` left: CLOSED, lifeline let go, its name; returns its
 * generation. */
static unsigned assert_left(am_ep_t *ep, const struct goodbye_arg *g, int id)
{
    char name[AM_NAME_MAX];
    tu_assert_flag(&gs->done[id], 1, 10, "a sender to leave", what, &sh->err);
    ck_assert_msg(gs->entry[id] == 0, "%s: sender %d got entry %u of a 1-entry table", what,
                  id, gs->entry[id]);
    AO_t st = entry_state(ep, 0, name);
    ck_assert_msg(AM_SENDER_ST(st) == AM_SENDER_CLOSED &&
                      am__lifeline_gone(&am__sender(&ep->own, 0)->life) &&
                      strcmp(name, g->snd[id]) == 0,
                  "%s: after sender %d's goodbye (it still lives) its entry is in state "
                  "%u (want %d, CLOSED), lifeline %s, name '%s'",
                  what, id, AM_SENDER_ST(st), AM_SENDER_CLOSED,
                  am__lifeline_gone(&am__sender(&ep->own, 0)->life) ? "free" : "held",
                  name);
    ck_assert_msg(gs->after[id] == -EINVAL,
                  "%s: sender %d: a send after destroy gave %d (%s)", what, id,
                  gs->after[id], am_strerror(gs->after[id]));
    return AM_SENDER_GEN(st);
}

/* Sender id's messages all arrived, in order, from an unknown source (its
 * endpoint is gone), and the reply to each was refused with -EPIPE. */
static void assert_orphans(int id)
{
    ck_assert_msg(gb.got[id] == BYE_MSGS && gb.wrong == 0,
                  "%s: %d of sender %d's %d last messages delivered in order, %d wrong, "
                  "%lu dropped as bad",
                  what, gb.got[id], id, BYE_MSGS, gb.wrong, am_ep_bad_packets(gb_ep));
    for (int k = 0; k < BYE_MSGS; k++)
        ck_assert_msg(gb.source[id][k] == ~0u && gb.reply_rc[id][k] == -EPIPE,
                      "%s: sender %d's message %d (sent before its goodbye) credited to "
                      "index %u, reply %s; want unknown, EPIPE",
                      what, id, k, gb.source[id][k], am_err_name(gb.reply_rc[id][k]));
}
START_TEST(goodbye)
{
    struct goodbye_arg g = {.alg = _i / 2, .b = _i % 2};
    snprintf(what, sizeof what, "%s/%s: goodbye", am_claim_names[g.alg],
             tu_backend_name(g.b));
    gs = tu_shared_alloc(sizeof *gs);
    tu_ep_name(g.rcv, sizeof g.rcv, "rcv", g.alg, g.b);
    for (int k = 0; k < BYE_SENDERS; k++) {
        char role[8];
        snprintf(role, sizeof role, "snd%d", k);
        tu_ep_name(g.snd[k], sizeof g.snd[k], role, g.alg, g.b);
    }
    /* mpsc: a leaving sender's entry is taken at once, before its messages are
     * polled (with channels it waits for the owner to drain them: check_chan) */
    struct am_ep_opts o = {
        am_claim_names[g.alg], tu_backend_name(g.b), 0, 0, 1, 0, 0, "mpsc", 0};
    am_ep_t *ep = gb_ep = create_ok(g.rcv, &o);
    am_set_handler(ep, H_BYE, bye_h);

    /* Sender 0 leaves; then its messages are polled. */
    pid_t p0 = spawn(goodbye_sender0, &g, 1);
    unsigned gen0 = assert_left(ep, &g, 0);
    int n = am_poll(ep);
    ck_assert_msg(n == BYE_MSGS,
                  "%s: the poll after sender 0 left ran %d messages, want %d", what, n,
                  BYE_MSGS);
    assert_orphans(0);

    /* Sender 1 takes the entry and leaves; sender 2 takes it before sender 1's
     * messages are polled. */
    pid_t p1 = spawn(goodbye_sender1, &g, 1);
    unsigned gen1 = assert_left(ep, &g, 1);
    ck_assert_msg(gen1 == ((gen0 + 1) & AM_GEN_MASK),
                  "%s: sender 1 has the entry in generation %u, sender 0 had %u", what,
                  gen1, gen0);
    pid_t p2 = spawn(goodbye_asker, &g, 1);
    tu_assert_flag(&gs->mapped, 1, 10, "sender 2 to map the receiver", what, &sh->err);
    char name[AM_NAME_MAX];
    AO_t st = entry_state(ep, 0, name);
    ck_assert_msg(gs->entry[2] == 0 && AM_SENDER_ST(st) == AM_SENDER_READY &&
                      AM_SENDER_GEN(st) == ((gen1 + 1) & AM_GEN_MASK) &&
                      strcmp(name, g.snd[2]) == 0,
                  "%s: sender 2 mapped the receiver: its entry %u; entry 0 in state %u, "
                  "generation %u, name '%s'; want 0, %d, %u, %s",
                  what, gs->entry[2], AM_SENDER_ST(st), AM_SENDER_GEN(st), name,
                  AM_SENDER_READY, (gen1 + 1) & AM_GEN_MASK, g.snd[2]);
    double end = tu_now_s() + 10;
    while (gb.got[2] < BYE_MSGS && gb.wrong == 0 && tu_now_s() < end)
        am_wait(ep, 20);
    tu_assert_flag(&gs->done[2], 1, 10, "sender 2 to have its replies", what, &sh->err);
    am_poll(ep);
    assert_orphans(1);
    ck_assert_msg(gb.got[2] == BYE_MSGS, "%s: %d of sender 2's %d requests delivered (%s)",
                  what, gb.got[2], BYE_MSGS, tu_first_error(&sh->err, "no sender error"));
    for (int k = 0; k < BYE_MSGS; k++) {
        const struct am_peer *peer = am__peer(ep, gb.source[2][k]);
        ck_assert_msg(peer && strcmp(peer->name, g.snd[2]) == 0 && gb.reply_rc[2][k] == 0,
                      "%s: sender 2's request %d credited to index %u (%s), reply %s", what,
                      k, gb.source[2][k], peer ? peer->name : "no peer",
                      am_err_name(gb.reply_rc[2][k]));
    }
    ck_assert_msg(gs->replies == BYE_MSGS && gs->wrong == 0,
                  "%s: sender 2 got %d replies in order and %d others to %d requests", what,
                  gs->replies, gs->wrong, BYE_MSGS);
    st = entry_state(ep, 0, name);
    ck_assert_msg(AM_SENDER_ST(st) == AM_SENDER_CLOSED &&
                      AM_SENDER_GEN(st) == ((gen1 + 1) & AM_GEN_MASK) &&
                      strcmp(name, g.snd[2]) == 0,
                  "%s: after sender 2 left, entry 0: state %u, generation %u, name '%s'; "
                  "want %d, %u, %s",
                  what, AM_SENDER_ST(st), AM_SENDER_GEN(st), name, AM_SENDER_CLOSED,
                  (gen1 + 1) & AM_GEN_MASK, g.snd[2]);
    /* Every message counted: 3 of each sender, nothing else. */
    ck_assert_msg(ep->delivered == BYE_SENDERS * BYE_MSGS && am_ep_bad_packets(ep) == 0,
                  "%s: the receiver ran %lu messages (%lu bad), want %d", what,
                  ep->delivered, am_ep_bad_packets(ep), BYE_SENDERS * BYE_MSGS);

    AO_store_release(&gs->go, 1);
    tu_assert_exit0(tu_reap(p0, 10), "sender 0", what, &sh->err);
    tu_assert_exit0(tu_reap(p1, 10), "sender 1", what, &sh->err);
    tu_assert_exit0(tu_reap(p2, 10), "sender 2", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    tu_assert_clean(what);
    tu_shared_free(gs, sizeof *gs);
}
END_TEST

/* ---- (d) a peer that died ---- */

enum {
    DEAD_DESTROY_IDLE,
    DEAD_EXIT_IDLE,
    DEAD_DESTROY_BLOCKED,
    DEAD_KILL_BLOCKED,
    DEAD_MODES
};
static const char *const dead_names[] = {"destroyed", "exited without destroy",
                                         "destroyed while client blocked",
                                         "SIGKILLed while client blocked"};

struct dead_arg {
    char srv[AM_NAME_MAX], cli[AM_NAME_MAX];
    int alg, b, mode, bulk;
};

/* Creates a 2-packet, 1-bulk-block endpoint, never polls it, and when told
 * either destroys it or exits without. */
static void dead_server(void *arg)
{
    const struct dead_arg *d = arg;
    struct am_ep_opts o = {
        am_claim_names[d->alg], tu_backend_name(d->b), 2, 1, 0, 0, 0, NULL, 0};
    am_ep_t *ep;
    int rc = am_ep_create(d->srv, &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "server: create: %s", am_strerror(rc));
        _exit(2);
    }
    AO_store_release(&sh->ready, 1);
    tu_wait_flag(&sh->go, 1, 20);
    if (d->mode == DEAD_EXIT_IDLE)
        _exit(0);
    rc = am_ep_destroy(ep);
    if (rc != 0)
        tu_error(&sh->err, "server: destroy: %s", am_strerror(rc));
}

static int dead_send(am_ep_t *ep, int bulk)
{
    static const char data[AM_MAX_MEDIUM + 1]; /* a bulk block's, not inline */
    uint32_t x = 1;
    return bulk ? am_request_bulk(ep, 0, 5, data, sizeof data, &x, 1)
                : am_request(ep, 0, 5, &x, 1);
}

/* Sends until a send fails; records when and how. */
static void dead_client(void *arg)
{
    const struct dead_arg *d = arg;
    struct am_ep_opts o = {
        am_claim_names[d->alg], tu_backend_name(d->b), 0, 0, 0, 0, 0, NULL, 0};
    am_ep_t *ep;
    int rc = am_ep_create(d->cli, &o, &ep);
    if (rc == 0)
        rc = am_ep_map(ep, 0, d->srv);
    if (rc != 0) {
        tu_error(&sh->err, "client: create/map: %s", am_strerror(rc));
        _exit(2);
    }
    for (unsigned i = 0; i < 100; i++) {
        AO_store_release(&sh->calling, i + 1);
        rc = dead_send(ep, d->bulk);
        if (rc != 0)
            break;
        AO_store_release(&sh->sent, i + 1);
    }
    sh->t_ret = tu_now_s();
    sh->client_rc = rc == 0 ? 1 : rc;
    am_ep_destroy(ep);
}

START_TEST(dead_peer)
{
    int combo = _i / (2 * DEAD_MODES), mode = (_i / 2) % DEAD_MODES, bulk = _i % 2;
    struct dead_arg d = {.alg = combo / 2, .b = combo % 2, .mode = mode, .bulk = bulk};
    snprintf(what, sizeof what, "%s/%s: %s peer, %s sends", am_claim_names[d.alg],
             tu_backend_name(d.b), dead_names[mode], bulk ? "bulk" : "short");
    tu_ep_name(d.srv, sizeof d.srv, "srv", d.alg, d.b);
    tu_ep_name(d.cli, sizeof d.cli, "cli", d.alg, d.b);
    pid_t ps = spawn(dead_server, &d, 1);
    tu_assert_flag(&sh->ready, 1, 10, "the server", what, &sh->err);
    if (mode == DEAD_DESTROY_IDLE || mode == DEAD_EXIT_IDLE) {
        struct am_ep_opts o = {
            am_claim_names[d.alg], tu_backend_name(d.b), 0, 0, 0, 0, 0, NULL, 0};
        am_ep_t *ep = create_ok(d.cli, &o);
        int rc = am_ep_map(ep, 0, d.srv);
        ck_assert_msg(rc == 0, "%s: map: %s", what, am_strerror(rc));
        ck_assert_msg(dead_send(ep, bulk) == 0, "%s: first send", what);
        AO_store_release(&sh->go, 1);
        tu_assert_exit0(tu_reap(ps, 60), "server", what, &sh->err);
        double t0 = tu_now_s();
        int n = 0;
        while ((rc = dead_send(ep, bulk)) == 0 && ++n < 10)
            ;
        double dt = tu_now_s() - t0;
        ck_assert_msg(rc == -EPIPE, "%s: send gave %d (%s) after %d more, want -EPIPE",
                      what, rc, am_strerror(rc), n);
        /* Destroyed or dead (its lifeline says so): the first send fails. */
        ck_assert_msg(n == 0, "%s: %d sends succeeded before -EPIPE", what, n);
        ck_assert_msg(dt < 3.0, "%s: -EPIPE took %.3f s", what, dt);
        if (mode == DEAD_DESTROY_IDLE)
            ck_assert_msg(dead_send(ep, !bulk) == -EPIPE, "%s: the other kind of send",
                          what);
        if (mode == DEAD_EXIT_IDLE) {
            struct am_ep_opts o2 = {
                am_claim_names[d.alg], tu_backend_name(d.b), 2, 1, 0, 0, 0, NULL, 0};
            /* The name of a dead owner can be created again. */
            am_ep_t *again = create_ok(d.srv, &o2);
            ck_assert_msg(am_ep_destroy(again) == 0, "%s: destroy re-created", what);
        } else {
            ck_assert_msg(am_ep_map(ep, 1, d.srv) == -ENOENT, "%s: map a destroyed name",
                          what);
        }
        ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    } else {
        pid_t pc = spawn(dead_client, &d, 0);
        AO_t blocked_at = bulk ? 1 : 2; /* sends that fit: packets, bulk blocks */
        tu_assert_flag(&sh->calling, blocked_at + 1, 10, "the client to fill the queue",
                       what, &sh->err);
        tu_sleep_ms(50);
        ck_assert_msg(AO_load(&sh->sent) == blocked_at && sh->client_rc == 0,
                      "%s: client not blocked: %lu sent, rc %d", what,
                      (unsigned long)AO_load(&sh->sent), sh->client_rc);
        double t0;
        if (mode == DEAD_KILL_BLOCKED) {
            kill(ps, SIGKILL);
            int st;
            waitpid(ps, &st, 0); /* a zombie still counts as alive */
            t0 = tu_now_s();
        } else {
            t0 = tu_now_s();
            AO_store_release(&sh->go, 1);
            tu_assert_exit0(tu_reap(ps, 60), "server", what, &sh->err);
        }
        int st = tu_reap(pc, 60);
        ck_assert_msg(st >= 0, "%s: client still blocked 10 s after its peer died", what);
        tu_assert_exit0(st, "client", what, &sh->err);
        ck_assert_msg(sh->client_rc == -EPIPE,
                      "%s: blocked send returned %d (%s), want -EPIPE", what, sh->client_rc,
                      am_strerror(sh->client_rc));
        ck_assert_msg(sh->t_ret - t0 < 3.0, "%s: -EPIPE after %.3f s", what,
                      sh->t_ret - t0);
        if (mode == DEAD_KILL_BLOCKED)
            am__segment_unlink((enum am_shm)d.b, d.srv);
    }
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

static Suite *rpc_suite(void)
{
    Suite *s = suite_create("rpc");
    TCase *tc = tcase_create("replies");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, replies, 0, tu_combos());
    tcase_add_loop_test(tc, misuse, 0, tu_combos());
    suite_add_tcase(s, tc);

    tc = tcase_create("stand-alone");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, standalone_pair, 0, tu_combos());
    tcase_add_loop_test(tc, standalone_three, 0, tu_combos());
    tcase_add_loop_test(tc, standalone_many, 0, tu_combos());
    suite_add_tcase(s, tc);

    tc = tcase_create("peers leaving");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, client_restart, 0, tu_combos());
    tcase_add_loop_test(tc, goodbye, 0, tu_combos());
    suite_add_tcase(s, tc);

    tc = tcase_create("dead peer");
    tcase_set_timeout(tc, 150); /* the reaps below wait 60 s each at most */
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, dead_peer, 0, tu_combos() * 2 * DEAD_MODES);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 8 && strcmp(argv[1], "--server") == 0)
        return prog_server(argv);
    if (argc == 9 && strcmp(argv[1], "--client") == 0)
        return prog_client(argv);
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (n <= 0) {
        perror("check_rpc: /proc/self/exe");
        return EXIT_FAILURE;
    }
    self_exe[n] = '\0';
    tu_run_init("rp");
    return tu_run_suite(rpc_suite(), "check_rpc");
}
