/*
 * check_call_inline.c - a call's small reply travels inline, in its reply's
 * packet (a medium one), and a call whose cap is at most AM_MEDIUM_BYTES
 * takes no room in the caller's reply heap.  Real processes: the test is the
 * caller, a forked server answers.  Each test runs for the queue kinds mpsc
 * and bqueue (a per-sender channel kind) on both backends; forged_inline
 * for every claim algorithm of the shared queue.
 *
 *   sizes_and_caps       replies of 0, 1, 447, 448 and 449 bytes to calls of
 *                        cap 0, 448 and 449 (and 4000, 448 bytes to cap 5000,
 *                        2000 to cap 1000): a
 *                        reply within the cap ends the call with its bytes
 *                        and args, a longer one is -EMSGSIZE to the caller
 *                        and to the server's am_reply_long; a call's
 *                        request of 448 bytes arrives in its slot (mpsc)
 *   no_room_taken        while a call of cap 448 (and one of cap 0) is
 *                        outstanding, the caller's reply heap has no block
 *                        live; while one of cap 449 is, it has one (the
 *                        observation works); both end with their bytes
 *   kept_inline_in_order  the caller's reply queue full of plain replies, the
 *                        server keeps the inline replies of four calls
 *                        (counted in its list); once the caller drains, they
 *                        come in the order the calls were made (mpsc: read
 *                        in the caller's ring, medium packets of the calls'
 *                        ids and lengths) with their own bytes
 *   late_inline_counted  a call of cap 448 cancelled while its handler runs:
 *                        its 300-byte inline reply is dropped and counted in
 *                        am_ep_late_replies, the next call gets its own
 *                        reply, and no room was ever taken
 *   forged_inline        the server, inside a call's handler, forges into
 *                        the caller's reply queue a medium reply longer than
 *                        448 bytes with the call's id, a medium reply naming
 *                        an unknown call, and a long (heap block) reply with
 *                        the call's id: each is counted bad, none ends the
 *                        call, and the call then ends with its genuine reply
 *   over_cap_refused     a medium reply of 100 bytes forged with the id of a
 *                        call of cap 16: the call ends with -EMSGSIZE, and
 *                        not a byte of its buffer past the cap is written
 *
 * A caller replaced at its index never gets the old caller's inline reply:
 * check_call_identity's kept_reply_caller_replaced (a kept handle's inline
 * reply) and owed_reply_caller_replaced (an inline reply kept while the
 * queue was full); their calls' caps are 64 bytes.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call_records.h"
#include "internal.h"
#include "mpsc.h"
#include "peers.h"
#include "testutil.h"

enum { H_ECHO_N = 1, H_HOLD, H_FILL, H_FORGE, H_BACK, H_OVER };

#define N_KEPT 4   /* kept_inline_in_order: calls whose replies are kept */
#define N_FILL 8   /* kept_inline_in_order: the caller's reply queue */
#define MAX_SEQ 64 /* replies the server records */

static const char *const kinds[] = {"mpsc", "bqueue"};
static char what[160];

struct shared {
    char srv[AM_NAME_MAX], cli[AM_NAME_MAX];
    int kind, backend, claim;
    AO_t srv_ready, done, parked, release, kept_max, owed_left, backs, ring_read;
    int reply_rc[MAX_SEQ];
    AO_t reply_seen[MAX_SEQ]; /* reply_rc[seq] stored */
    int forge_rc;
    AO_t req_seen;  /* sizes_and_caps: a call's request of 448 bytes came */
    int req_medium; /* ... its data in our request queue's payload areas */
    struct tu_errors err;
};
static struct shared *sh;
static am_ep_t *srv_ep; /* the server's, in its process */

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
    sh->claim = 0;
    snprintf(what, sizeof what, "%s/%s: %s", kinds[sh->kind], tu_backend_name(sh->backend),
             test);
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, sh->backend);
    tu_ep_name(sh->cli, sizeof sh->cli, "cli", -1, sh->backend);
}

static am_ep_t *create(const char *name, unsigned packets)
{
    struct am_ep_opts o = {.shm = tu_backend_name(sh->backend),
                           .queue = kinds[sh->kind],
                           .claim = am_claim_names[sh->claim],
                           .packets = packets,
                           .abandon_ms = 100};
    am_ep_t *ep;
    int rc = am_ep_create(name, &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "create %s: %s", name, am_strerror(rc));
        _exit(2);
    }
    return ep;
}

/* ---- the server ---- */

/* Reply a[0] bytes of pattern a[1] with args a[1], a[0]; its rc into
 * reply_rc[a[1]]. */
static void reply_n(am_token_t *t, const uint32_t *a)
{
    static char buf[8192];
    tu_pattern(buf, a[1], a[0]);
    int rc = am_reply_long(t, 0, buf, a[0], a, 2);
    if (a[1] < MAX_SEQ) {
        sh->reply_rc[a[1]] = rc;
        AO_store_release(&sh->reply_seen[a[1]], 1); /* pairs with sized_call's wait */
    }
}

static unsigned owed_count(am_ep_t *ep)
{
    unsigned n = 0;
    for (struct am_owed *o = ep->owed; o; o = o->next)
        n++;
    return n;
}

static void echo_n_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    struct am_queue_view *q = &srv_ep->own.q[AM_REQUEST];
    if (l == AM_MEDIUM_BYTES && q->medium) {
        unsigned char *p = d;
        sh->req_medium =
            p >= q->medium && p < q->medium + (size_t)q->packets_n * AM_MEDIUM_BYTES;
        AO_store_release(&sh->req_seen, 1);
    }
    reply_n(t, a);
    unsigned k = owed_count(srv_ep);
    if (k > AO_load(&sh->kept_max))
        AO_store(&sh->kept_max, k);
}

static void hold_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_store_release(&sh->parked, 1);
    tu_wait_flag(&sh->release, 1, 60);
    reply_n(t, a);
}

static void fill_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    if (am_reply_try(t, AM_MSG_SHORT, H_BACK, NULL, 0, 0, a, n) != 0)
        tu_error(&sh->err, "a plain reply did not fit the caller's queue");
}

/* Claim a packet of the caller's reply queue (the shared queue) as the
 * server's sender entry there; NULL if it never came. */
static struct am_packet *claim_reply(struct am_peer *peer, struct am_claim_state *c)
{
    struct am_seg_view *v = peer->view;
    am__claim_begin(c, 0, peer->who);
    double end = tu_now_s() + 10;
    while (am__claim_try_counted(v, &v->q[AM_REPLY], c,
                                 am__sender(v, peer->sender_index)) <= 0)
        if (tu_now_s() > end)
            return NULL;
    struct am_queue_view *q = &v->q[AM_REPLY];
    return &q->packets[c->ticket & (q->packets_n - 1)];
}

/* Forge reply k (0: medium, too long, the call's id; 1: medium, an unknown
 * call; 2: a long reply's heap block, the call's id; 3: medium, 100 bytes,
 * the call's id) to the call of tok. */
static int forge(am_token_t *t, int k)
{
    am_token_t *tok = am__tok_find(t);
    struct am_peer *peer = am__peer(srv_ep, tok->source);
    struct am_claim_state c;
    struct am_packet *p = peer ? claim_reply(peer, &c) : NULL;
    if (!p)
        return -1;
    struct am_queue_view *q = &peer->view->q[AM_REPLY];
    p->handler = 0;
    p->nargs = 1;
    p->args[0] = 0xbad;
    p->room = 0;
    p->bulk_ticket = 0;
    p->call = k == 1 ? tok->call ^ 0x40000000u : tok->call;
    p->flags = AM_PKT_MEDIUM;
    p->bulk_len = k == 0 ? AM_MEDIUM_BYTES + 1 : k == 3 ? 100 : 16;
    if (k == 2) {
        uint64_t off;
        if (am_heap_alloc(&q->heap, 16, peer->who, &off) != 0)
            return -1;
        p->flags = AM_PKT_LONG;
        p->bulk_ticket = off;
    }
    memset(q->medium + (c.ticket & (q->packets_n - 1)) * AM_MEDIUM_BYTES, 0x5a,
           AM_MEDIUM_BYTES);
    /* Pairs with the caller's acquire-load of the state (mpsc_poll.c), as
     * am__publish's release. */
    AO_store_release(&p->state, AM_STATE(am_lap(c.ticket, q->packets_n), c.who, AM_READY));
    return 0;
}

static void forge_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    for (int k = 0; k < 3; k++)
        if (forge(t, k) < 0)
            sh->forge_rc = -1;
    reply_n(t, a);
}

/* Forge an inline reply over the call's cap; return without replying (the
 * empty reply sent for it comes late). */
static void over_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    if (forge(t, 3) < 0)
        sh->forge_rc = -1;
}

static void server(void *arg)
{
    am_ep_t *ep = srv_ep = create(sh->srv, 0);
    am_set_handler(ep, H_ECHO_N, echo_n_h);
    am_set_handler(ep, H_HOLD, hold_h);
    am_set_handler(ep, H_FILL, fill_h);
    am_set_handler(ep, H_FORGE, forge_h);
    am_set_handler(ep, H_OVER, over_h);
    AO_store_release(&sh->srv_ready, 1);
    while (!AO_load_acquire(&sh->done)) {
        am_wait(ep, 5);
        AO_store(&sh->owed_left, owed_count(ep));
    }
    am_ep_destroy(ep);
}

/* ---- the caller (the test's process) ---- */

static pid_t start_server(void)
{
    pid_t p = tu_spawn(server, NULL, 1);
    ck_assert_msg(p > 0, "%s: fork", what);
    tu_assert_flag(&sh->srv_ready, 1, 20, "the server to start", what, &sh->err);
    return p;
}

static am_ep_t *caller(unsigned packets)
{
    am_ep_t *ep = create(sh->cli, packets);
    int rc = tu_map_when_there(ep, 0, sh->srv, 20);
    ck_assert_msg(rc == 0, "%s: map the server: %s", what, am_strerror(rc));
    return ep;
}

static void finish(am_ep_t *ep, pid_t srv)
{
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    AO_store_release(&sh->done, 1);
    tu_assert_exit0(tu_reap(srv, 30), "server", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}

static unsigned long reply_heap_live(am_ep_t *ep)
{
    struct am_heap_stats st;
    am_heap_stats(&ep->own.q[AM_REPLY].heap, &st);
    return st.blocks_live;
}

/* res (of buf) holds reply seq of len bytes: its pattern and args. */
static int reply_is(const struct am_result *res, uint32_t seq, size_t len)
{
    char want[8192];
    tu_pattern(want, seq, len);
    return res->len == len && res->nargs == 2 && res->args[0] == len &&
           res->args[1] == seq && memcmp(res->data, want, len) == 0;
}

/* One call of cap `cap` for a reply of len bytes (sequence seq). */
static void sized_call(am_ep_t *ep, size_t cap, uint32_t len, uint32_t seq)
{
    static char buf[8192];
    struct am_result res = {buf, cap, 0, {0}, 0};
    uint32_t a[2] = {len, seq};
    int rc = am_call(ep, 0, H_ECHO_N, a, 2, NULL, 0, &res, 20000);
    int want = len <= cap ? 0 : -EMSGSIZE;
    tu_assert_flag(&sh->reply_seen[seq], 1, 20, "the server's am_reply_long", what,
                   &sh->err);
    ck_assert_msg(rc == want, "%s: cap %zu, reply %u: am_call gave %s, want %s", what, cap,
                  len, am_err_name(rc), am_err_name(want));
    ck_assert_msg(sh->reply_rc[seq] == want, "%s: cap %zu, reply %u: am_reply_long gave %s",
                  what, cap, len, am_err_name(sh->reply_rc[seq]));
    ck_assert_msg(rc != 0 || reply_is(&res, seq, len),
                  "%s: cap %zu, reply %u: not its own bytes (%zu back)", what, cap, len,
                  res.len);
}

START_TEST(sizes_and_caps)
{
    combo(_i, "replies around 448 bytes to caps around it");
    pid_t srv = start_server();
    am_ep_t *ep = caller(0);
    static const size_t caps[] = {0, AM_MEDIUM_BYTES, AM_MEDIUM_BYTES + 1};
    static const uint32_t lens[] = {0, 1, AM_MEDIUM_BYTES - 1, AM_MEDIUM_BYTES,
                                    AM_MEDIUM_BYTES + 1};
    uint32_t seq = 1;
    for (int c = 0; c < 3; c++)
        for (int l = 0; l < 5; l++)
            sized_call(ep, caps[c], lens[l], seq++);
    sized_call(ep, 5000, 4000, seq++);
    sized_call(ep, 5000, AM_MEDIUM_BYTES, seq++);
    sized_call(ep, 1000, 2000, seq++);
    if (sh->kind == 0) { /* a call's request of 448 bytes travels in its slot too */
        static char req[AM_MEDIUM_BYTES];
        static char back[16];
        struct am_result res = {back, sizeof back, 0, {0}, 0};
        uint32_t a[2] = {0, seq++};
        ck_assert_int_eq(am_call(ep, 0, H_ECHO_N, a, 2, req, sizeof req, &res, 20000), 0);
        ck_assert_msg(AO_load_acquire(&sh->req_seen) && sh->req_medium,
                      "%s: a call's request of 448 bytes was not a medium message", what);
    }
    ck_assert_msg(am_ep_bad_packets(ep) == 0, "%s: %lu corrupt packets", what,
                  am_ep_bad_packets(ep));
    finish(ep, srv);
}
END_TEST

/* A held call of cap `cap`: the caller's reply heap's live blocks while it
 * is outstanding; it ends with its len bytes. */
static unsigned long held_call(am_ep_t *ep, size_t cap, uint32_t len, uint32_t seq)
{
    static char buf[8192];
    struct am_result res = {buf, cap, 0, {0}, 0};
    uint32_t a[2] = {len, seq};
    am_call_t id;
    AO_store(&sh->parked, 0);
    AO_store(&sh->release, 0);
    unsigned long before = reply_heap_live(ep);
    int rc = am_call_start(ep, 0, H_HOLD, a, 2, NULL, 0, &res, 20000, &id);
    ck_assert_msg(rc == 0, "%s: start: %s", what, am_err_name(rc));
    tu_assert_flag(&sh->parked, 1, 20, "the handler to hold the call", what, &sh->err);
    unsigned long live = reply_heap_live(ep) - before;
    AO_store_release(&sh->release, 1);
    rc = am_call_wait(ep, id, 20000);
    ck_assert_msg(rc == 0 && reply_is(&res, seq, len), "%s: cap %zu: %s, %zu bytes", what,
                  cap, am_err_name(rc), res.len);
    return live;
}

START_TEST(no_room_taken)
{
    combo(_i, "a call of cap 448 takes no room");
    pid_t srv = start_server();
    am_ep_t *ep = caller(0);
    unsigned long small = held_call(ep, AM_MEDIUM_BYTES, AM_MEDIUM_BYTES, 1);
    unsigned long none = held_call(ep, 0, 0, 2);
    unsigned long big = held_call(ep, AM_MEDIUM_BYTES + 1, 100, 3);
    ck_assert_msg(small == 0 && none == 0,
                  "%s: a call of cap 448 took %lu blocks of the reply heap, of cap 0 %lu",
                  what, small, none);
    ck_assert_msg(big == 1, "%s: a call of cap 449 took %lu blocks, want its room", what,
                  big);
    finish(ep, srv);
}
END_TEST

static void back_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l);
static am_call_t kept_id[N_KEPT];
static const uint32_t kept_len[N_KEPT] = {AM_MEDIUM_BYTES, 1, 300, AM_MEDIUM_BYTES - 1};
static int ring_ok = -1; /* mpsc: the kept replies as read in our ring */
static am_ep_t *cli_ep;

/* The caller's plain replies' handler: at the last one (its queue's other
 * slots free), wait until the server placed every kept reply, and read them
 * in our ring (mpsc): tickets N_FILL .., the calls' order. */
static void back_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    if (AO_fetch_and_add1(&sh->backs) + 1 != N_FILL)
        return;
    double end = tu_now_s() + 20;
    while ((AO_load(&sh->kept_max) < N_KEPT || AO_load(&sh->owed_left) != 0) &&
           tu_now_s() < end)
        tu_sleep_ms(1);
    if (sh->kind != 0)
        return;
    struct am_queue_view *q = &cli_ep->own.q[AM_REPLY];
    ring_ok = 1;
    for (int k = 0; k < N_KEPT; k++) {
        struct am_packet *p = &q->packets[(N_FILL + k) & (q->packets_n - 1)];
        AO_t s = AO_load_acquire(&p->state); /* pairs with the server's publish */
        if (AM_STATE_TYPE(s) != AM_READY || p->call != (uint32_t)kept_id[k] ||
            p->flags != AM_PKT_MEDIUM || p->bulk_len != kept_len[k])
            ring_ok = 0;
    }
}

START_TEST(kept_inline_in_order)
{
    combo(_i, "inline replies kept while the caller's queue is full");
    pid_t srv = start_server();
    am_ep_t *ep = cli_ep = caller(N_FILL);
    am_set_handler(ep, H_BACK, back_h);
    static char buf[N_KEPT][AM_MEDIUM_BYTES];
    struct am_result res[N_KEPT];
    uint32_t x = 7;
    for (int i = 0; i < N_FILL; i++)
        ck_assert_int_eq(am_request(ep, 0, H_FILL, &x, 1), 0);
    for (int k = 0; k < N_KEPT; k++) {
        res[k] = (struct am_result){buf[k], AM_MEDIUM_BYTES, 0, {0}, 0};
        uint32_t a[2] = {kept_len[k], (uint32_t)k + 10};
        int rc = am_call_start(ep, 0, H_ECHO_N, a, 2, NULL, 0, &res[k], 30000, &kept_id[k]);
        ck_assert_msg(rc == 0, "%s: call %d: %s", what, k, am_err_name(rc));
    }
    tu_assert_flag(&sh->kept_max, N_KEPT, 20, "the server to keep every inline reply", what,
                   &sh->err);
    for (int k = 0; k < N_KEPT; k++) {
        int rc = am_call_wait(ep, kept_id[k], 30000);
        ck_assert_msg(rc == 0 && reply_is(&res[k], (uint32_t)k + 10, kept_len[k]),
                      "%s: kept call %d: %s, %zu bytes, not its own", what, k,
                      am_err_name(rc), res[k].len);
    }
    ck_assert_msg(AO_load(&sh->backs) == N_FILL, "%s: %lu plain replies", what,
                  (unsigned long)AO_load(&sh->backs));
    ck_assert_msg(sh->kind != 0 || ring_ok == 1,
                  "%s: the kept replies were not medium packets in the calls' order", what);
    finish(ep, srv);
}
END_TEST

START_TEST(late_inline_counted)
{
    combo(_i, "an inline reply to a cancelled call");
    pid_t srv = start_server();
    am_ep_t *ep = caller(0);
    static char b1[AM_MEDIUM_BYTES], b2[AM_MEDIUM_BYTES];
    struct am_result r1 = {b1, sizeof b1, 0, {0}, 0}, r2 = {b2, sizeof b2, 0, {0}, 0};
    uint32_t a1[2] = {300, 1}, a2[2] = {20, 2};
    am_call_t id;
    ck_assert_int_eq(am_call_start(ep, 0, H_HOLD, a1, 2, NULL, 0, &r1, 60000, &id), 0);
    tu_assert_flag(&sh->parked, 1, 20, "the handler to hold the call", what, &sh->err);
    ck_assert_int_eq(am_call_cancel(ep, id), -ECANCELED);
    AO_store_release(&sh->release, 1);
    int rc = am_call(ep, 0, H_ECHO_N, a2, 2, NULL, 0, &r2, 20000);
    ck_assert_msg(rc == 0 && reply_is(&r2, 2, 20), "%s: the next call: %s, %zu bytes", what,
                  am_err_name(rc), r2.len);
    for (int i = 0; i < 2000 && am_ep_late_replies(ep) == 0; i++)
        am_wait(ep, 10);
    ck_assert_msg(am_ep_late_replies(ep) == 1, "%s: %lu late replies, want 1", what,
                  am_ep_late_replies(ep));
    ck_assert_msg(r1.len == 0, "%s: the cancelled call's result got %zu bytes", what,
                  r1.len);
    ck_assert_msg(reply_heap_live(ep) == 0, "%s: %lu rooms taken", what,
                  reply_heap_live(ep));
    finish(ep, srv);
}
END_TEST

START_TEST(forged_inline)
{
    sh->kind = 0; /* the shared queue: the forger claims its packets */
    sh->backend = _i % 2;
    sh->claim = _i / 2;
    snprintf(what, sizeof what, "mpsc/%s/%s: forged inline replies",
             am_claim_names[sh->claim], tu_backend_name(sh->backend));
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", sh->claim, sh->backend);
    tu_ep_name(sh->cli, sizeof sh->cli, "cli", sh->claim, sh->backend);
    pid_t srv = start_server();
    am_ep_t *ep = caller(0);
    static char buf[AM_MEDIUM_BYTES];
    struct am_result res = {buf, sizeof buf, 0, {0}, 0};
    uint32_t a[2] = {100, 5};
    int rc = am_call(ep, 0, H_FORGE, a, 2, NULL, 0, &res, 20000);
    ck_assert_msg(sh->forge_rc == 0, "%s: the forger could not claim", what);
    ck_assert_msg(rc == 0 && reply_is(&res, 5, 100),
                  "%s: the call ended with %s, %zu bytes, not its genuine reply", what,
                  am_err_name(rc), res.len);
    ck_assert_msg(am_ep_bad_packets(ep) == 3, "%s: %lu corrupt packets counted, want 3",
                  what, am_ep_bad_packets(ep));
    ck_assert_msg(am_ep_late_replies(ep) == 0, "%s: %lu late replies", what,
                  am_ep_late_replies(ep));
    ck_assert_msg(reply_heap_live(ep) == 0, "%s: the forged block was not given back (%lu)",
                  what, reply_heap_live(ep));
    finish(ep, srv);
}
END_TEST

START_TEST(over_cap_refused)
{
    combo(0, "");
    sh->backend = _i;
    snprintf(what, sizeof what, "mpsc/%s: a forged inline reply over the call's cap",
             tu_backend_name(sh->backend));
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, sh->backend);
    tu_ep_name(sh->cli, sizeof sh->cli, "cli", -1, sh->backend);
    pid_t srv = start_server();
    am_ep_t *ep = caller(0);
    static unsigned char buf[AM_MEDIUM_BYTES];
    memset(buf, 0xee, sizeof buf);
    struct am_result res = {buf, 16, 0, {0}, 0};
    uint32_t x = 1;
    int rc = am_call(ep, 0, H_OVER, &x, 1, NULL, 0, &res, 20000);
    ck_assert_msg(sh->forge_rc == 0, "%s: the forger could not claim", what);
    size_t written = 0;
    for (size_t i = 0; i < sizeof buf; i++)
        written += buf[i] != 0xee;
    ck_assert_msg(rc == -EMSGSIZE && res.len == 0 && written == 0,
                  "%s: the call ended with %s, %zu bytes, %zu of its buffer written", what,
                  am_err_name(rc), res.len, written);
    finish(ep, srv);
}
END_TEST

static Suite *inline_suite(void)
{
    Suite *s = suite_create("call_inline");
    int n = 2 * 2; /* kinds x backends */
    TCase *tc = tu_tcase(s, "inline", 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, sizes_and_caps, 0, n);
    tcase_add_loop_test(tc, no_room_taken, 0, n);
    tcase_add_loop_test(tc, kept_inline_in_order, 0, n);
    tcase_add_loop_test(tc, late_inline_counted, 0, n);
    tcase_add_loop_test(tc, forged_inline, 0, 2 * AM_CLAIM_COUNT);
    tcase_add_loop_test(tc, over_cap_refused, 0, 2);
    return s;
}

int main(void)
{
    tu_run_init("cv");
    return tu_run_suite(inline_suite(), "check_call_inline");
}
