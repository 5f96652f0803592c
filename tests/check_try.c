/*
 * check_try.c - sends that never wait (am_request_try, am_reply_try).
 *
 * A sender fills a receiver's queue that nobody polls, one kind of message
 * at a time, until the try says -EAGAIN; then the receiver polls and must
 * get exactly what the tries said they sent, in order, and nothing of the
 * refused ones.  A try never polls: the sender's own handlers never run
 * inside it.  A reply tried into a caller's full reply queue is -EAGAIN and
 * leaves the token unreplied (it can still be kept).  Every claim algorithm
 * on both backends; under SHMAM_QUEUE the per-sender kinds.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

enum { H_MSG = 3, H_ASK = 4, H_ANSWER = 5, MAX_TRIES = 100000, LEN = 300 };

static unsigned got, next_seq, bad;
static unsigned answered, refused;
static am_kept_t *kept[MAX_TRIES];

/* Each message carries its sequence number in args[0] and, with data, in every
 * byte (seq & 0xff). */
static void msg_h(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    const unsigned char *d = data;
    if (nargs != 1 || args[0] != next_seq)
        bad++;
    for (size_t i = 0; i < len; i++)
        if (d[i] != (unsigned char)args[0])
            bad++;
    next_seq++;
    got++;
}

/* The server's handler: answer with a try; a refused answer is kept. */
static void ask_h(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    uint32_t seq = args[0];
    int rc = am_reply_try(tok, AM_MSG_SHORT, H_ANSWER, NULL, 0, 0, &seq, 1);
    if (rc == 0) {
        answered++;
        return;
    }
    if (rc != -EAGAIN || am_token_keep(tok, &kept[refused]) != 0)
        bad++;
    refused++;
}

static void setup(void)
{
    tu_test_init();
    got = next_seq = bad = answered = refused = 0;
}

static am_ep_t *make(const char *role, struct tu_combo c, unsigned handler, am_handler_t fn)
{
    char name[64];
    tu_ep_name(name, sizeof name, role, c.alg, c.backend);
    struct am_ep_opts o = {c.alg_name, c.backend_name, 16, 0, 0, 0, 0, NULL, 0};
    am_ep_t *ep = NULL;
    ck_assert_msg(am_ep_create(name, &o, &ep) == 0, "%s: create %s", c.alg_name, role);
    ck_assert_int_eq(am_set_handler(ep, handler, fn), 0);
    return ep;
}

/* Fill rx's queue from tx with tries of `kind` until -EAGAIN; returns how many
 * were sent.  rx must not have run one meanwhile. */
static unsigned fill(am_ep_t *tx, enum am_msg_kind kind, void *region, const char *what)
{
    static unsigned char data[LEN];
    unsigned sent = 0;
    int rc;
    for (;; sent++) {
        uint32_t seq = next_seq + sent;
        memset(data, (unsigned char)seq, sizeof data);
        size_t len = kind == AM_MSG_SHORT ? 0 : sizeof data;
        size_t off = kind == AM_MSG_LONG_AT ? (size_t)(sent % 64) * LEN : 0;
        rc = am_request_try(tx, 0, kind, H_MSG, data, len, off, &seq, 1);
        if (rc != 0 || sent == MAX_TRIES)
            break;
    }
    ck_assert_msg(rc == -EAGAIN, "%s: a try into a full queue gave %d (%s)", what, rc,
                  am_strerror(rc));
    ck_assert_msg(sent > 0, "%s: no try went through into an empty queue", what);
    ck_assert_msg(got == 0, "%s: a message ran inside a try", what);
    (void)region;
    return sent;
}

START_TEST(full_queue_eagain)
{
    struct tu_combo c = tu_combo_of(_i);
    am_ep_t *rx = make("rx", c, H_MSG, msg_h), *tx = make("tx", c, H_MSG, msg_h);
    void *region;
    ck_assert_int_eq(am_region_create(rx, 64 * LEN, &region), 0);
    ck_assert_int_eq(am_ep_map(tx, 0, am_ep_name(rx)), 0);
    static const enum am_msg_kind kinds[] = {AM_MSG_SHORT, AM_MSG_BULK, AM_MSG_LONG,
                                             AM_MSG_LONG_AT};
    static const char *names[] = {"short", "bulk", "long", "long_at"};
    for (unsigned k = 0; k < 4; k++) {
        char what[96];
        snprintf(what, sizeof what, "%s/%s %s", c.alg_name, c.backend_name, names[k]);
        unsigned sent = fill(tx, kinds[k], region, what);
        unsigned base = next_seq;
        while (am_poll(rx) > 0)
            ;
        ck_assert_msg(got == sent && next_seq == base + sent && bad == 0,
                      "%s: %u sent by tries, %u delivered, %u out of order or garbled",
                      what, sent, got, bad);
        uint32_t seq = next_seq;
        ck_assert_msg(am_request_try(tx, 0, kinds[k], H_MSG, "x", 0, 0, &seq, 1) == 0,
                      "%s: a try into the drained queue failed", what);
        ck_assert_msg(am_poll(rx) == 1 && bad == 0, "%s: the last try", what);
        got = 0;
    }
    ck_assert_int_eq(am_ep_destroy(tx), 0);
    ck_assert_int_eq(am_ep_destroy(rx), 0);
    tu_assert_clean(c.alg_name);
}
END_TEST

/* A server answering with tries into a client's reply queue that the client
 * does not poll: some answers go, then -EAGAIN (the token stays unreplied: it
 * can be kept); the client gets exactly the answers that went. */
START_TEST(reply_try_full)
{
    struct tu_combo c = tu_combo_of(_i);
    am_ep_t *srv = make("srv", c, H_ASK, ask_h), *cl = make("cl", c, H_ANSWER, msg_h);
    ck_assert_int_eq(am_ep_map(cl, 0, am_ep_name(srv)), 0);
    unsigned asked = 0;
    while (refused == 0 && asked < MAX_TRIES) {
        uint32_t seq = asked;
        int rc = am_request_try(cl, 0, AM_MSG_SHORT, H_ASK, NULL, 0, 0, &seq, 1);
        ck_assert_msg(rc == 0 || rc == -EAGAIN, "%s: ask gave %d", c.alg_name, rc);
        if (rc == 0)
            asked++;
        while (am_poll(srv) > 0)
            ;
    }
    ck_assert_msg(refused > 0 && bad == 0 && got == 0,
                  "%s: %u answered, %u refused, %u bad, %u ran early", c.alg_name, answered,
                  refused, bad, got);
    while (am_poll(cl) > 0)
        ;
    ck_assert_msg(got == answered && bad == 0, "%s: %u answers went, %u arrived, %u bad",
                  c.alg_name, answered, got, bad);
    ck_assert_int_eq(am_ep_destroy(srv), 0); /* releases the kept handles */
    ck_assert_int_eq(am_ep_destroy(cl), 0);
    tu_assert_clean(c.alg_name);
}
END_TEST

START_TEST(try_errors)
{
    struct tu_combo c = tu_combo_of(0);
    am_ep_t *rx = make("err", c, H_MSG, msg_h);
    ck_assert_int_eq(am_ep_map(rx, 0, am_ep_name(rx)), 0);
    uint32_t a = 0;
    ck_assert_int_eq(am_request_try(rx, 0, (enum am_msg_kind)4, H_MSG, NULL, 0, 0, &a, 1),
                     -EINVAL);
    ck_assert_int_eq(am_request_try(rx, 0, AM_MSG_BULK, H_MSG, NULL, 4, 0, &a, 1), -EINVAL);
    ck_assert_int_eq(
        am_request_try(rx, 0, AM_MSG_BULK, H_MSG, "x", AM_MAX_BULK + 1, 0, &a, 1),
        -EMSGSIZE);
    ck_assert_int_eq(am_request_try(rx, 0, AM_MSG_LONG_AT, H_MSG, "x", 1, 0, &a, 1),
                     -ENXIO);
    ck_assert_int_eq(am_request_try(NULL, 0, AM_MSG_SHORT, H_MSG, NULL, 0, 0, &a, 1),
                     -EINVAL);
    ck_assert_int_eq(am_reply_try(NULL, AM_MSG_SHORT, H_MSG, NULL, 0, 0, &a, 1), -EINVAL);
    ck_assert_int_eq(am_poll(rx), 0);
    ck_assert_int_eq(am_ep_destroy(rx), 0);
    tu_assert_clean("errors");
}
END_TEST

int main(void)
{
    tu_run_init("tr");
    Suite *s = suite_create("try");
    TCase *tc = tcase_create("try");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, full_queue_eagain, 0, tu_combos());
    tcase_add_loop_test(tc, reply_try_full, 0, tu_combos());
    tcase_add_test(tc, try_errors);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, "check_try");
}
