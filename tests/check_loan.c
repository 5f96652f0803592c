/*
 * check_loan.c - copy-free sends (am_request_prepare / commit / cancel and
 * the reply forms).
 *
 * In one process, with real segments: a sender lends room in a receiver,
 * writes into it and commits; the receiver's handler must find every byte
 * and argument, at every size around the bulk and long limits, in the order
 * of sends and commits.  A loan outstanding never holds up another sender's
 * messages; a cancelled one loses its room to nobody (the sends after it go
 * on past the bulk blocks many times over); the misuse errors change
 * nothing.  Every claim algorithm on both backends; under SHMAM_QUEUE the
 * per-sender kinds.  Bulk sends of the loan's thread between prepare and
 * commit never take the lent room (bulk_sends_during_loan, every kind).
 * Crashes between prepare and commit: check_crash's parked_sender_killed
 * (stage "a loan's bulk block claimed") and check_kills (random kills,
 * victims parked with loans out, every kind).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

enum { H_MSG = 3, H_ASK = 4, H_ANSWER = 5, H_LEND = 6, H_REFUSE = 7, MAXLOG = 64 };

static struct {
    unsigned n, bad;
    uint32_t seq[MAXLOG];
    size_t len[MAXLOG];
} rx;
static int reply_rc;
static unsigned copies; /* bulk data copied by a send (its AM_HOOK_BULK_HALF) */

static void count_copies(enum am_hook where)
{
    copies += where == AM_HOOK_BULK_HALF;
}

static unsigned char pat(uint32_t seq, size_t i)
{
    return (unsigned char)(seq * 31u + i * 7u + (i >> 8));
}

/* args: seq, len; every byte pat(seq, i). */
static void msg_h(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    const unsigned char *d = data;
    if (nargs != 2 || args[1] != len || (len && !d))
        rx.bad++;
    for (size_t i = 0; nargs == 2 && i < len; i++)
        if (d[i] != pat(args[0], i)) {
            rx.bad++;
            break;
        }
    if (rx.n < MAXLOG)
        rx.seq[rx.n] = nargs ? args[0] : ~0u, rx.len[rx.n] = len;
    rx.n++;
}

static int loan_send(am_ep_t *ep, unsigned dest, uint32_t seq, size_t cap, size_t len)
{
    void *buf;
    int rc = am_request_prepare(ep, dest, cap, &buf);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < len; i++)
        ((unsigned char *)buf)[i] = pat(seq, i);
    uint32_t a[2] = {seq, (uint32_t)len};
    return am_request_commit(ep, H_MSG, len, a, 2);
}

static void setup(void)
{
    tu_test_init();
    memset(&rx, 0, sizeof rx);
    copies = 0;
}

static am_ep_t *make(const char *role, struct tu_combo c)
{
    char name[64];
    tu_ep_name(name, sizeof name, role, c.alg, c.backend);
    struct am_ep_opts o = {c.alg_name, c.backend_name, 16, 2, 0, 0, 0, NULL, 0};
    am_ep_t *ep = NULL;
    ck_assert_msg(am_ep_create(name, &o, &ep) == 0, "%s: create %s", c.alg_name, role);
    ck_assert_int_eq(am_set_handler(ep, H_MSG, msg_h), 0);
    return ep;
}

static void drain(am_ep_t *ep)
{
    while (am_poll(ep) > 0)
        ;
}

/* Every size around the limits, bulk and long, committed whole or shorter. */
START_TEST(sizes_intact)
{
    struct tu_combo c = tu_combo_of(_i);
    am_ep_t *rx_ep = make("rx", c), *tx = make("tx", c);
    ck_assert_int_eq(am_ep_map(tx, 0, am_ep_name(rx_ep)), 0);
    static const size_t caps[] = {
        0,     1,      63, 64, 65, 1000, AM_MAX_BULK - 1, AM_MAX_BULK, AM_MAX_BULK + 1,
        65536, 1 << 20};
    uint32_t seq = 0;
    am__claim_stall_hook = count_copies;
    for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++)
        for (int shorter = 0; shorter < 2; shorter++) {
            size_t len = shorter && caps[k] ? caps[k] / 2 : caps[k];
            int rc = loan_send(tx, 0, seq, caps[k], len);
            ck_assert_msg(rc == 0, "%s: loan of %zu (%zu sent): %s", c.alg_name, caps[k],
                          len, am_strerror(rc));
            drain(rx_ep);
            ck_assert_msg(rx.n == seq + 1 && rx.bad == 0 && rx.len[seq % MAXLOG] == len,
                          "%s: loan of %zu, %zu sent: %u arrived, %u bad", c.alg_name,
                          caps[k], len, rx.n, rx.bad);
            seq++;
        }
    am__claim_stall_hook = NULL;
    ck_assert_msg(copies == 0, "%s: %u loans were copied, not written in place", c.alg_name,
                  copies);
    void *buf;
    ck_assert_int_eq(am_request_prepare(tx, 0, (1 << 20) + 1, &buf), -EMSGSIZE);
    ck_assert_int_eq(am_ep_destroy(tx), 0);
    ck_assert_int_eq(am_ep_destroy(rx_ep), 0);
    tu_assert_clean(c.alg_name);
}
END_TEST

/* Order is that of sends and commits: a short message sent while a loan is
 * out arrives before it; another sender's messages go through meanwhile. */
START_TEST(order_and_no_hold)
{
    struct tu_combo c = tu_combo_of(_i);
    am_ep_t *rx_ep = make("rx", c), *a = make("a", c), *b = make("b", c);
    ck_assert_int_eq(am_ep_map(a, 0, am_ep_name(rx_ep)), 0);
    ck_assert_int_eq(am_ep_map(b, 0, am_ep_name(rx_ep)), 0);
    void *buf;
    ck_assert_int_eq(am_request_prepare(a, 0, 100, &buf), 0);
    for (size_t i = 0; i < 100; i++)
        ((unsigned char *)buf)[i] = pat(1, i);
    uint32_t s0[2] = {0, 0};
    ck_assert_int_eq(am_request(a, 0, H_MSG, s0, 2), 0);
    for (uint32_t i = 0; i < 20; i++) { /* more than the queue holds: b is not held up */
        uint32_t sb[2] = {100 + i, 0};
        ck_assert_int_eq(am_request(b, 0, H_MSG, sb, 2), 0);
        drain(rx_ep);
    }
    ck_assert_msg(rx.n == 21 && rx.seq[0] == 0 && rx.bad == 0,
                  "%s: %u arrived while the loan was out (want 21, a's short first)",
                  c.alg_name, rx.n);
    uint32_t s1[2] = {1, 100};
    ck_assert_int_eq(am_request_commit(a, H_MSG, 100, s1, 2), 0);
    drain(rx_ep);
    ck_assert_msg(rx.n == 22 && rx.seq[21] == 1 && rx.len[21] == 100 && rx.bad == 0,
                  "%s: the committed loan", c.alg_name);
    ck_assert_int_eq(am_ep_destroy(a), 0);
    ck_assert_int_eq(am_ep_destroy(b), 0);
    ck_assert_int_eq(am_ep_destroy(rx_ep), 0);
    tu_assert_clean(c.alg_name);
}
END_TEST

/* Cancelled loans, bulk and long, lose their room to nobody: sends through
 * an endpoint mapped to itself (its waits poll it) pass the bulk blocks and
 * the heap many times after them. */
START_TEST(cancel_gives_back)
{
    struct tu_combo c = tu_combo_of(_i);
    am_ep_t *ep = make("self", c);
    ck_assert_int_eq(am_ep_map(ep, 0, am_ep_name(ep)), 0);
    static const size_t caps[] = {500, 300000};
    uint32_t seq = 0;
    for (int k = 0; k < 2; k++)
        for (int round = 0; round < 10; round++) {
            void *buf;
            ck_assert_int_eq(am_request_prepare(ep, 0, caps[k], &buf), 0);
            memset(buf, 0xee, caps[k]);
            ck_assert_int_eq(am_request_cancel(ep), 0);
            ck_assert_int_eq(am_request_cancel(ep), -EINVAL);
            for (int i = 0; i < 6; i++) {
                ck_assert_msg(loan_send(ep, 0, seq++, caps[k], caps[k]) == 0,
                              "%s: send after a cancel", c.alg_name);
                drain(ep);
            }
        }
    ck_assert_msg(rx.n == seq && rx.bad == 0, "%s: %u of %u arrived, %u bad", c.alg_name,
                  rx.n, seq, rx.bad);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_clean(c.alg_name);
}
END_TEST

/* Bulk sends between a loan's prepare and its commit, by the same thread to
 * the same destination: the loan holds a block (a shared queue's as a
 * claim; on a per-sender channel the channel's, in ticket order with the
 * sends' blocks).  Every kind, 0 .. B + 2 sends in between (B blocks): the
 * first B - 1 take the other blocks; a send that would need the lent block
 * is refused with -EBUSY (waiting for it would be for ever), so every send
 * that returned 0 and the loan arrive intact, in the order of sends and
 * commit, and the commit always succeeds.  A channel of one block lends a
 * private buffer, which takes any number of sends. */
START_TEST(bulk_sends_during_loan)
{
    int q = _i / 2;
    const char *kind = am_queue_names[q];
    unsigned B = _i % 2 ? 1 : 4; /* one block: a channel's loan is a private buffer */
    am_ep_t *ep[2];
    for (int k = 0; k < 2; k++) {
        char name[64];
        tu_ep_name(name, sizeof name, k ? "tx" : "rx", 0, 0);
        struct am_ep_opts o = {NULL, "posix", 16,   B,   0,
                               0,    0,       kind, 2000}; /* a wrong wait ends */
        ck_assert_msg(am_ep_create(name, &o, &ep[k]) == 0, "%s: create", kind);
        ck_assert_int_eq(am_set_handler(ep[k], H_MSG, msg_h), 0);
    }
    ck_assert_int_eq(am_ep_map(ep[1], 0, am_ep_name(ep[0])), 0);
    static unsigned char data[AM_MAX_BULK];
    uint32_t seq = 0;
    unsigned want = 0, refused = 0;
    int private_buffer = q != AM_QUEUE_MPSC && B == 1;
    for (unsigned between = 0; between <= B + 2; between++)
        for (int cap_i = 0; cap_i < 3; cap_i++) {
            static const size_t caps[] = {300, 1000, AM_MAX_BULK};
            size_t cap = caps[cap_i];
            uint32_t lseq = seq++;
            void *buf;
            ck_assert_int_eq(am_request_prepare(ep[1], 0, cap, &buf), 0);
            for (size_t i = 0; i < cap; i++)
                ((unsigned char *)buf)[i] = pat(lseq, i);
            unsigned first = rx.n, went = 0;
            for (unsigned j = 0; j < between; j++) {
                size_t len = 449 + (j * 1237 + cap) % (AM_MAX_BULK - 449);
                uint32_t a[2] = {seq, (uint32_t)len};
                for (size_t i = 0; i < len; i++)
                    data[i] = pat(seq, i);
                int want_rc = private_buffer || j + 1 < B ? 0 : -EBUSY;
                int rc = am_request_bulk(ep[1], 0, H_MSG, data, len, a, 2);
                ck_assert_msg(
                    rc == want_rc,
                    "%s, %u blocks: bulk send %u during a loan of %zu: %s (want %s)", kind,
                    B, j, cap, am_strerror(rc), am_strerror(want_rc));
                if (rc == 0)
                    seq++, went++;
                else
                    refused++;
                drain(ep[0]);
            }
            uint32_t a[2] = {lseq, (uint32_t)cap};
            int rc = am_request_commit(ep[1], H_MSG, cap, a, 2);
            drain(ep[0]);
            want += went + 1;
            ck_assert_msg(rc == 0,
                          "%s, %u blocks: commit of a loan of %zu after %u bulk sends: %s",
                          kind, B, cap, went, am_strerror(rc));
            ck_assert_msg(rx.bad == 0 && rx.n == want,
                          "%s: a loan of %zu with %u bulk sends between prepare and "
                          "commit: %u bad payloads, %u of %u arrived",
                          kind, cap, went, rx.bad, rx.n, want);
            for (unsigned j = 0; j < went && first + j < MAXLOG; j++)
                ck_assert_msg(rx.seq[first + j] == lseq + 1 + j, "%s: order", kind);
            if (first + went < MAXLOG)
                ck_assert_msg(rx.seq[first + went] == lseq && rx.len[first + went] == cap,
                              "%s: the loan (%u sends between) arrived out of order", kind,
                              went);
            if (rx.n > MAXLOG - 16) /* keep the log's window on the next round */
                rx.n = want = 0;
        }
    ck_assert_msg(private_buffer ? refused == 0 : refused > 0,
                  "%s, %u blocks: %u sends refused", kind, B, refused);
    for (int k = 1; k >= 0; k--)
        ck_assert_int_eq(am_ep_destroy(ep[k]), 0);
    tu_assert_clean(kind);
}
END_TEST

/* ---- replies ---- */

/* The server lends room in the caller's reply queue, writes, commits. */
static void lend_h(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    void *buf;
    size_t n = args[1];
    reply_rc = am_reply_prepare(tok, n, &buf);
    if (reply_rc < 0)
        return;
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)buf)[i] = pat(args[0], i);
    uint32_t a[2] = {args[0], (uint32_t)n};
    reply_rc = am_request_prepare(am_token_ep(tok), 0, 1, &buf) == -EDEADLK
                   ? am_reply_commit(tok, H_MSG, n, a, 2)
                   : -1000;
    if (reply_rc == 0)
        reply_rc = am_reply_commit(tok, H_MSG, n, a, 2) == -EINVAL ? 0 : -1001;
}

/* It lends and returns without committing: given back, the request unreplied. */
static void refuse_h(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                     size_t len)
{
    void *buf;
    reply_rc = am_reply_prepare(tok, 200, &buf);
}

START_TEST(reply_loans)
{
    struct tu_combo c = tu_combo_of(_i);
    am_ep_t *srv = make("srv", c), *cl = make("cl", c);
    am_set_handler(srv, H_LEND, lend_h);
    am_set_handler(srv, H_REFUSE, refuse_h);
    ck_assert_int_eq(am_ep_map(cl, 0, am_ep_name(srv)), 0);
    static const uint32_t lens[] = {0, 77, AM_MAX_BULK, AM_MAX_BULK + 1, 40000};
    for (uint32_t k = 0; k < 5; k++) {
        uint32_t a[2] = {k, lens[k]};
        ck_assert_int_eq(am_request(cl, 0, H_LEND, a, 2), 0);
        reply_rc = -1;
        drain(srv);
        ck_assert_msg(reply_rc == 0, "%s: reply loan of %u: %d", c.alg_name, lens[k],
                      reply_rc);
        drain(cl);
        ck_assert_msg(rx.n == k + 1 && rx.len[k] == lens[k] && rx.bad == 0,
                      "%s: reply loan of %u arrived %u, bad %u", c.alg_name, lens[k], rx.n,
                      rx.bad);
    }
    ck_assert_int_eq(am_ep_destroy(cl), 0);
    ck_assert_int_eq(am_ep_destroy(srv), 0);
    /* Uncommitted reply loans, more than the reply queue's blocks, to an
     * endpoint mapped to itself (its waits poll the reply queue, which frees
     * the blocks given back once a sender waits for them). */
    am_ep_t *self = make("self", c);
    am_set_handler(self, H_REFUSE, refuse_h);
    ck_assert_int_eq(am_ep_map(self, 0, am_ep_name(self)), 0);
    rx.n = 0;
    for (int i = 0; i < 8; i++) {
        uint32_t a[2] = {0, 0};
        ck_assert_int_eq(am_request(self, 0, H_REFUSE, a, 2), 0);
        reply_rc = -1;
        drain(self);
        ck_assert_msg(reply_rc == 0, "%s: a loan after an uncommitted one: %d", c.alg_name,
                      reply_rc);
    }
    ck_assert_msg(rx.n == 0, "%s: an uncommitted reply loan was sent", c.alg_name);
    ck_assert_int_eq(am_ep_destroy(self), 0);
    tu_assert_clean(c.alg_name);
}
END_TEST

START_TEST(misuse)
{
    struct tu_combo c = tu_combo_of(0);
    am_ep_t *ep = make("mis", c);
    ck_assert_int_eq(am_ep_map(ep, 0, am_ep_name(ep)), 0);
    void *buf;
    uint32_t a[2] = {5, 10};
    ck_assert_int_eq(am_request_commit(ep, H_MSG, 0, NULL, 0), -EINVAL);
    ck_assert_int_eq(am_request_prepare(ep, 0, 10, NULL), -EINVAL);
    ck_assert_int_eq(am_request_prepare(ep, 7, 10, &buf), -EINVAL);
    ck_assert_int_eq(am_request_prepare(NULL, 0, 10, &buf), -EINVAL);
    ck_assert_int_eq(am_request_prepare(ep, 0, 10, &buf), 0);
    ck_assert_int_eq(am_request_prepare(ep, 0, 10, &buf), -EBUSY);
    for (size_t i = 0; i < 10; i++)
        ((unsigned char *)buf)[i] = pat(5, i);
    ck_assert_int_eq(am_request_commit(ep, H_MSG, 11, a, 2), -EMSGSIZE);
    ck_assert_int_eq(am_request_commit(ep, AM_MAX_HANDLERS, 10, a, 2), -EINVAL);
    ck_assert_int_eq(am_request_commit(ep, H_MSG, 10, a, AM_MAX_ARGS + 1), -EMSGSIZE);
    ck_assert_int_eq(am_poll(ep), 0); /* nothing sent by the refused commits */
    ck_assert_int_eq(am_request_commit(ep, H_MSG, 10, a, 2), 0);
    drain(ep);
    ck_assert_msg(rx.n == 1 && rx.bad == 0, "the loan after refused commits");
    ck_assert_int_eq(am_reply_prepare(NULL, 1, &buf), -EINVAL);
    ck_assert_int_eq(am_reply_commit(NULL, H_MSG, 0, NULL, 0), -EINVAL);
    ck_assert_int_eq(am_reply_cancel(NULL), -EINVAL);
    ck_assert_int_eq(am_request_prepare(ep, 0, 3000, &buf), 0); /* destroy gives it back */
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_clean("misuse");
}
END_TEST

int main(void)
{
    tu_run_init("ln");
    Suite *s = suite_create("loan");
    TCase *tc = tcase_create("loan");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, sizes_intact, 0, tu_combos());
    tcase_add_loop_test(tc, order_and_no_hold, 0, tu_combos());
    tcase_add_loop_test(tc, cancel_gives_back, 0, tu_combos());
    tcase_add_loop_test(tc, reply_loans, 0, tu_combos());
    tcase_add_loop_test(tc, bulk_sends_during_loan, 0, 2 * AM_QUEUE_COUNT);
    tcase_add_test(tc, misuse);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, "check_loan");
}
