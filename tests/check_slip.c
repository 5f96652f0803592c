/*
 * check_slip.c - a receiver slips behind one-way streams and nothing else
 * (runtime/slip.c): it waits, amid a one-way stream, for a run of
 * messages rather than polling the line its sender is writing; a message that
 * comes alone is delivered by the first poll that starts after its send
 * returned, and that poll never waits; a stream the receiver answers (round
 * trips, a server's replies, a requester's replies between its requests)
 * never waits either.  Behaviour only: the waits are counted (struct
 * am_slip), never timed.
 *
 * A channel gives its bulk blocks back in runs (chan_poll.c), never holding
 * one past the poll that delivered its message.
 *
 * Two processes pinned to the two CPUs, the receiver a helper, the sender
 * the test process, every claim algorithm and backend (tu_combos) and, under
 * make check's reruns (SHMAM_QUEUE), every per-sender channel kind.  Every
 * message carries its sequence number and is checked in order, exactly once.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "spin.h"
#include "testutil.h"

enum { H_MSG = 1, H_ASK, H_ANSWER, H_BULK };

#define STREAM 20000  /* messages of a one-way stream */
#define PACE 4        /* pauses after each: the receiver keeps up, one by one */
#define LONE 40       /* lone messages, each after a pause */
#define LONE_GAP_MS 2 /* the pause: thousands of empty polls */
#define ASKED 20000   /* requests of an answered stream */
#define WINDOW 32     /* requests in flight at most */
#define TRIES 5       /* one-way streams until one has made the receiver wait */
#define STALL_S 30

static char what[96];

struct shared {
    char a[AM_NAME_MAX], b[AM_NAME_MAX];
    int alg, backend;
    AO_t ready, done;
    AO_t sent;        /* messages the sender's calls have returned from */
    AO_t received;    /* in order, checked */
    AO_t rx_waits;    /* the receiver's waits so far, all queues */
    AO_t lone;        /* the lone phase has begun */
    AO_t late_polls;  /* lone phase: polls that started after a send and missed it */
    AO_t waits_alone; /* the receiver's waits in the lone phase */
    struct tu_errors err;
};

static struct shared *sh;
static unsigned long answers; /* the sender's, by its H_ANSWER handler */

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
    tu_pin(0);
}

static struct am_ep_opts opts(void)
{
    struct am_ep_opts o = {
        am_claim_names[sh->alg], tu_backend_name(sh->backend), 0, 0, 0, 0, 0, NULL, 0};
    return o;
}

static unsigned long waits_of(const am_ep_t *ep)
{
    return ep->slip[AM_REQUEST].waits + ep->slip[AM_REPLY].waits;
}

static void on_msg(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    unsigned long got = AO_load(&sh->received);
    if (nargs != 1 || a[0] != (uint32_t)got)
        tu_error(&sh->err, "message %u arrived as number %lu", nargs ? a[0] : ~0u, got);
    AO_store(&sh->received, got + 1);
}

static void on_ask(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    on_msg(t, a, nargs, d, len);
    int rc = am_reply(t, H_ANSWER, a, 1);
    if (rc != 0)
        tu_error(&sh->err, "reply: %s", am_strerror(rc));
}

static void on_answer(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    answers++;
}

/* The receiver's loop: poll until the sender is done and everything it sent
 * has arrived.  In the lone phase a poll that starts after a send returned
 * must deliver that message; those that did not are counted. */
static void receive(am_ep_t *ep)
{
    double t0 = tu_now_s();
    unsigned long before = 0;
    int lone = 0;
    for (;;) {
        AO_t sent = AO_load_acquire(&sh->sent); /* pairs with send_one's release */
        if (!lone && AO_load(&sh->lone))
            lone = 1, before = waits_of(ep);
        int n = am_poll(ep);
        if (lone && n == 0 && AO_load(&sh->received) < sent)
            AO_store(&sh->late_polls, AO_load(&sh->late_polls) + 1);
        if (waits_of(ep) != AO_load(&sh->rx_waits))
            AO_store(&sh->rx_waits, waits_of(ep));
        if (AO_load(&sh->done) && AO_load(&sh->received) == sent)
            break;
        if (tu_now_s() - t0 > STALL_S) {
            tu_error(&sh->err, "stalled at %lu of %lu",
                     (unsigned long)AO_load(&sh->received), (unsigned long)sent);
            break;
        }
    }
    if (lone)
        AO_store(&sh->waits_alone, waits_of(ep) - before);
}

static void receiver(void *arg)
{
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(sh->b, &o, &ep);
    if (rc != 0) {
        tu_error(&sh->err, "create %s: %s", sh->b, am_strerror(rc));
        _exit(2);
    }
    am_set_handler(ep, H_MSG, on_msg);
    am_set_handler(ep, H_ASK, on_ask);
    AO_store(&sh->ready, 1);
    receive(ep);
    am_ep_destroy(ep);
    _exit(0);
}

/* Start the receiver and map it as peer 0 of a new sender endpoint. */
static am_ep_t *start(int i, const char *test, pid_t *pid)
{
    struct tu_combo c = tu_combo_of(i);
    sh->alg = c.alg;
    sh->backend = c.backend;
    answers = 0;
    snprintf(what, sizeof what, "%s/%s: %s", c.alg_name, c.backend_name, test);
    tu_ep_name(sh->a, sizeof sh->a, "tx", sh->alg, sh->backend);
    tu_ep_name(sh->b, sizeof sh->b, "rx", sh->alg, sh->backend);
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(sh->a, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create: %s", what, am_strerror(rc));
    am_set_handler(ep, H_ANSWER, on_answer);
    *pid = tu_spawn(receiver, NULL, 1);
    ck_assert_msg(*pid > 0, "%s: fork", what);
    tu_assert_flag(&sh->ready, 1, 10, "the receiver", what, &sh->err);
    ck_assert_msg(tu_map_when_there(ep, 0, sh->b, 10) == 0, "%s: map", what);
    return ep;
}

/* A request numbered by what was sent, then say it was sent. */
static void send_one(am_ep_t *ep, int handler)
{
    uint32_t seq = (uint32_t)AO_load(&sh->sent);
    int rc = am_request(ep, 0, handler, &seq, 1);
    ck_assert_msg(rc == 0, "%s: send %u: %s", what, seq, am_strerror(rc));
    AO_store_release(&sh->sent, seq + 1); /* pairs with the receiver's acquire */
}

/* Until the receiver has everything sent (polling ep, for answers). */
static void await_received(am_ep_t *ep)
{
    double t0 = tu_now_s();
    while (AO_load(&sh->received) != AO_load(&sh->sent)) {
        am_poll(ep);
        ck_assert_msg(tu_now_s() - t0 < STALL_S, "%s: stalled at %lu of %lu", what,
                      (unsigned long)sh->received, (unsigned long)sh->sent);
    }
}

static void finish(am_ep_t *ep, pid_t pid)
{
    AO_store(&sh->done, 1);
    int st = tu_reap(pid, STALL_S + 10);
    ck_assert_msg(st != -1, "%s: the receiver did not finish", what);
    tu_assert_exit0(st, "receiver", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(sh->received == sh->sent, "%s: %lu of %lu arrived", what,
                  (unsigned long)sh->received, (unsigned long)sh->sent);
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    tu_assert_clean(what);
}

/* A one-way stream paced a little slower than the receiver, which so finds
 * one message per look (the lockstep slip.c ends), makes the receiver wait
 * for runs (bounded repetition: a machine busy enough to preempt either
 * process every few messages leaves no stream to slip behind); then messages sent alone,
 * each after thousands of empty polls, never make it wait, and each is delivered by the
 * first poll that starts after its send returned. */
START_TEST(oneway_stream_slips_lone_message_does_not)
{
    pid_t pid;
    am_ep_t *ep = start(_i, "a one-way stream, then lone messages", &pid);
    for (int t = 0; t < TRIES && AO_load(&sh->rx_waits) == 0; t++) {
        for (int k = 0; k < STREAM; k++) {
            send_one(ep, H_MSG);
            for (int p = 0; p < PACE; p++)
                spin_cpu_relax();
        }
        await_received(ep);
    }
    ck_assert_msg(AO_load(&sh->rx_waits) > 0,
                  "%s: %d streams of %d one-way messages and the receiver never waited "
                  "for a run",
                  what, TRIES, STREAM);
    AO_store(&sh->lone, 1);
    for (int k = 0; k < LONE; k++) {
        tu_sleep_ms(LONE_GAP_MS);
        send_one(ep, H_MSG);
    }
    await_received(ep);
    finish(ep, pid);
    ck_assert_msg(sh->waits_alone == 0,
                  "%s: lone messages made the receiver wait %lu times", what,
                  (unsigned long)sh->waits_alone);
    ck_assert_msg(sh->late_polls == 0,
                  "%s: %lu polls started after a lone message was sent and missed it", what,
                  (unsigned long)sh->late_polls);
}
END_TEST

/* A stream of requests, each answered, up to WINDOW in flight, the sender
 * polling for answers between its requests: neither side ever waits. */
START_TEST(answered_stream_never_waits)
{
    pid_t pid;
    am_ep_t *ep = start(_i, "an answered stream", &pid);
    for (int k = 0; k < ASKED; k++) {
        double t0 = tu_now_s();
        while (AO_load(&sh->sent) - answers >= WINDOW) {
            am_poll(ep);
            ck_assert_msg(tu_now_s() - t0 < STALL_S, "%s: no answer", what);
        }
        send_one(ep, H_ASK);
        am_poll(ep);
    }
    /* (The last answers, polled for with nothing more to send, are a
     * one-way stream: a wait there would be right.) */
    unsigned long w = waits_of(ep);
    await_received(ep);
    while (answers < AO_load(&sh->sent))
        am_poll(ep);
    ck_assert_msg(w == 0, "%s: the sender waited %lu times for answers", what, w);
    finish(ep, pid);
    ck_assert_msg(sh->rx_waits == 0, "%s: the answering receiver waited %lu times", what,
                  (unsigned long)sh->rx_waits);
}
END_TEST

/* Bulk give-back: the sum over queue qid's channels of ep of the blocks
 * given back (struct am_chan_ctl), as the producers read it. */
static AO_t given_back(am_ep_t *ep, enum am_qid qid)
{
    AO_t sum = 0;
    for (unsigned i = 0; i < ep->own.max_senders; i++) {
        struct am_chan_view c;
        am__chan_at(&ep->own, i, qid, &c);
        sum += AO_load_acquire(&c.ctl->bulk_freed);
    }
    return sum;
}

#define RUN_BULK 16 /* bulk blocks of the channel below */
static am_ep_t *bulk_rx;
static AO_t seen_back[RUN_BULK];
static unsigned bulk_in;

/* Records the blocks given back as each message of a run is handled. */
static void on_bulk(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (bulk_in < RUN_BULK)
        seen_back[bulk_in] = given_back(bulk_rx, AM_REQUEST);
    bulk_in++;
}

/* One process, every per-sender kind: a run of RUN_BULK / 2 - 1 bulk
 * messages queued, then one poll delivers them all without giving a block
 * back between them (a producer waiting for a block finds the run free at
 * once), and all of them by the time it returns; a lone bulk message's block
 * goes back in the poll that delivers it. */
START_TEST(channel_bulk_given_back_in_runs)
{
    const char *kind = am_queue_names[1 + _i];
    char rx[AM_NAME_MAX], tx[AM_NAME_MAX];
    static char data[AM_MAX_BULK];
    const unsigned n = RUN_BULK / 2 - 1;
    snprintf(what, sizeof what, "%s: bulk blocks given back in runs", kind);
    tu_ep_name(rx, sizeof rx, "brx", 0, 0);
    tu_ep_name(tx, sizeof tx, "btx", 0, 0);
    struct am_ep_opts ro = {.queue = kind, .bulk_blocks = RUN_BULK}, so = {0};
    am_ep_t *snd;
    ck_assert_msg(am_ep_create(rx, &ro, &bulk_rx) == 0, "%s: create", what);
    ck_assert_msg(am_ep_create(tx, &so, &snd) == 0, "%s: create", what);
    am_set_handler(bulk_rx, H_BULK, on_bulk);
    ck_assert_msg(tu_map_when_there(snd, 0, rx, 10) == 0, "%s: map", what);
    bulk_in = 0;
    for (uint32_t k = 0; k < n; k++)
        ck_assert_msg(am_request_bulk(snd, 0, H_BULK, data, sizeof data, &k, 1) == 0,
                      "%s: send %u", what, k);
    int got = am_poll(bulk_rx);
    ck_assert_msg(got == (int)n && bulk_in == n, "%s: one poll delivered %d of %u", what,
                  got, n);
    for (unsigned k = 0; k < n; k++)
        ck_assert_msg(seen_back[k] == 0,
                      "%s: %lu blocks given back as message %u of a run of %u ran", what,
                      (unsigned long)seen_back[k], k, n);
    ck_assert_msg(given_back(bulk_rx, AM_REQUEST) == n,
                  "%s: %lu of %u blocks given back when the poll returned", what,
                  (unsigned long)given_back(bulk_rx, AM_REQUEST), n);
    uint32_t lone = n;
    ck_assert_msg(am_request_bulk(snd, 0, H_BULK, data, sizeof data, &lone, 1) == 0,
                  "%s: send the lone one", what);
    ck_assert_msg(am_poll(bulk_rx) == 1, "%s: the lone message not delivered", what);
    ck_assert_msg(given_back(bulk_rx, AM_REQUEST) == n + 1,
                  "%s: the lone message's block not given back by its poll", what);
    ck_assert_msg(am_ep_destroy(snd) == 0 && am_ep_destroy(bulk_rx) == 0, "%s: destroy",
                  what);
    tu_assert_clean(what);
}
END_TEST

/* The per-sender kinds: am_queue_names after "mpsc". */
static int chan_kinds(void)
{
    int n = 0;
    while (am_queue_names[n + 1])
        n++;
    return n;
}

static Suite *slip_suite(void)
{
    Suite *s = suite_create("slip");
    TCase *tc = tu_tcase(s, "slip", 600);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, oneway_stream_slips_lone_message_does_not, 0, tu_combos());
    tcase_add_loop_test(tc, answered_stream_never_waits, 0, tu_combos());
    TCase *runs = tu_tcase(s, "bulk_runs", 60);
    tcase_add_checked_fixture(runs, tu_test_init, NULL);
    tcase_add_loop_test(runs, channel_bulk_given_back_in_runs, 0, chan_kinds());
    return s;
}

int main(void)
{
    tu_run_init("sl");
    return tu_run_suite(slip_suite(), "check_slip");
}
