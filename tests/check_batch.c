/*
 * check_batch.c - am_request_batch: a batch goes exactly as its messages sent
 * one by one would (each exactly once, intact, one sender's messages in the
 * order of its sends, batched or not), for every claim algorithm of the
 * shared queues and every per-sender channel kind (the loop index: the claim
 * algorithms over mpsc, then the channel kinds); a full queue; bad
 * arguments; a shared endpoint (sent one by one); a sender killed in the
 * middle of a batch.
 *
 * The streams: W writers, pinned and started together behind a gate, each
 * send a script of batches of 1, 2, 5, more than the queue's slots and the
 * chunk, mixed short, medium (up to AM_MAX_MEDIUM) and bulk messages,
 * interleaved with single am_request / am_request_bulk sends; their claims are
 * widened (the stall hook: tu_widen at the claim and fill points).  The
 * reader, a process of its own that sleeps in am_wait (so a batch that waits
 * without waking it first hangs), counts each writer's messages, checks their
 * order and every byte, yielding before it reads a medium message's data in
 * place (a slot freed before its handler has returned is overwritten by a
 * waiting writer meanwhile), and checks that no packet was reported bad.
 *
 * Killed mid-batch: a victim parks at its fourth fill of a batch of eight
 * short and medium messages (one run of claims: three published, the rest
 * claimed) and is SIGKILLed; or is killed at a
 * random moment while streaming batches.  Then a live writer streams; every
 * one of its messages must arrive, and what arrived of the victim's must be
 * its messages in order, each once and whole, never the one parked.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "send.h"
#include "testutil.h"

#define MAXW 4
#define H_MSG 5
#define Q 8
#define BLOCKS 4
#define MAXSEQ 4096

struct shared {
    struct tu_gate gate;
    char rx_name[AM_NAME_MAX + 1];
    const char *claim, *queue;
    int writers;           /* streaming writers */
    int victim;            /* writer index of a victim, -1: none */
    int inline_only;       /* the victim's messages short and medium only: its
                            * parked batch is one run of claims */
    unsigned expect[MAXW]; /* the reader stops once every live writer's are in */
    AO_t rx_ready, done, parked, stop;
    /* The reader's tallies. */
    unsigned long got[MAXW], dup[MAXW], order[MAXW], data_bad, args_bad;
    unsigned long bad_packets, abandoned;
    long last[MAXW];
    unsigned char seen[MAXW][MAXSEQ];
    struct tu_errors err;
};

static struct shared *S;

/* Message (w, seq)'s length: a mix of short, medium and bulk. */
static size_t len_of(unsigned w, unsigned seq)
{
    static const size_t special[] = {0, 1,  AM_MAX_MEDIUM, AM_MAX_MEDIUM + 1, AM_MAX_BULK,
                                     0, 64, 3000};
    uint32_t h = tu_mix32(w, seq);
    size_t len = seq % 4 == 0
                     ? special[(seq / 4 + w) % (sizeof special / sizeof special[0])]
                 : h % 3 == 0 ? 0
                 : h % 3 == 1 ? h % (AM_MAX_MEDIUM + 1)
                              : h % (AM_MAX_BULK + 1);
    return S->inline_only && (int)w == S->victim ? len % (AM_MAX_MEDIUM + 1) : len;
}

static uint32_t key_of(unsigned w, unsigned seq)
{
    return tu_mix32(w + 1000, seq);
}

static void msg_h(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    if (nargs != 3 || args[0] >= MAXW || args[1] >= MAXSEQ ||
        args[2] != key_of(args[0], args[1])) {
        S->args_bad++;
        return;
    }
    unsigned w = args[0], seq = args[1];
    if (len != len_of(w, seq))
        S->data_bad++;
    else if (len) {
        if (len <= AM_MAX_MEDIUM)
            tu_yield(); /* read in place: a slot freed early is written meanwhile */
        const unsigned char *d = data;
        for (size_t i = 0; i < len; i++)
            if (d[i] != tu_pattern_byte(key_of(w, seq), i)) {
                S->data_bad++;
                break;
            }
    }
    if (S->seen[w][seq]++)
        S->dup[w]++;
    if ((long)seq <= S->last[w])
        S->order[w]++;
    S->last[w] = seq;
    S->got[w]++;
}

/* The reader: owns the endpoint, sleeps in am_wait between messages, stops
 * once every live writer's messages are in and the parent says stop. */
static void reader(void *arg)
{
    struct am_ep_opts o = {S->claim, NULL, Q, BLOCKS, 0, 0, 0, S->queue, -1};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(S->rx_name, &o, &ep);
    if (rc == 0)
        rc = am_set_handler(ep, H_MSG, msg_h);
    if (rc < 0) {
        tu_error(&S->err, "reader: create: %s", am_strerror(rc));
        AO_store_release(&S->rx_ready, 1);
        return;
    }
    for (int w = 0; w < MAXW; w++)
        S->last[w] = -1;
    AO_store_release(&S->rx_ready, 1);
    double idle_since = tu_now_s();
    for (;;) {
        int n = am_wait(ep, 50);
        if (n < 0) {
            tu_error(&S->err, "reader: am_wait: %s", am_strerror(n));
            break;
        }
        int all = 1;
        for (int w = 0; w < S->writers; w++)
            if (w != S->victim && S->got[w] < S->expect[w])
                all = 0;
        if (n > 0)
            idle_since = tu_now_s();
        if (all && AO_load_acquire(&S->stop) && tu_now_s() - idle_since > 0.3)
            break;
        if (tu_now_s() - idle_since > 60) {
            tu_error(&S->err, "reader: nothing for 60 s");
            break;
        }
    }
    S->bad_packets = am_ep_bad_packets(ep);
    S->abandoned = am_ep_abandoned(ep);
    AO_store_release(&S->done, 1);
    am_ep_destroy(ep);
}

static void widen_hook(enum am_hook where)
{
    static unsigned k;
    if (where == AM_HOOK_CLAIMED || where == AM_HOOK_FILLING || where == AM_HOOK_LOCKED)
        tu_widen(k++ * 7 + (unsigned)getpid());
}

static am_ep_t *writer_ep(int w)
{
    char name[AM_NAME_MAX + 1];
    snprintf(name, sizeof name, "%.30sw%d", S->rx_name, w);
    struct am_ep_opts o = {S->claim, NULL, Q, BLOCKS, 0, 0, 0, S->queue, -1};
    am_ep_t *ep = NULL;
    /* a victim's is anonymous: nothing of it outlives its kill */
    int rc = am_ep_create(w == S->victim ? NULL : name, &o, &ep);
    if (rc == 0 && !tu_wait_flag(&S->rx_ready, 1, 30))
        rc = -ETIMEDOUT;
    if (rc == 0)
        rc = tu_map_when_there(ep, 0, S->rx_name, 30);
    if (rc < 0) {
        tu_error(&S->err, "writer %d: setup: %s", w, am_strerror(rc));
        am_ep_destroy(ep);
        return NULL;
    }
    return ep;
}

/* Messages [seq, seq + n) of writer w: as a batch (msgs, args and data in
 * the caller's arrays), or one by one if !batch.  0 or the error. */
static unsigned char databuf[AM_BATCH_CHUNK * 4][AM_MAX_BULK];
static int send_run(am_ep_t *ep, int w, unsigned seq, int n, int batch)
{
    static struct am_out out[AM_BATCH_CHUNK * 4];
    static uint32_t args[AM_BATCH_CHUNK * 4][3];
    for (int i = 0; i < n; i++) {
        unsigned s = seq + (unsigned)i;
        size_t len = len_of((unsigned)w, s);
        args[i][0] = (uint32_t)w, args[i][1] = s, args[i][2] = key_of((unsigned)w, s);
        tu_pattern(databuf[i], key_of((unsigned)w, s), len);
        out[i] = (struct am_out){H_MSG, args[i], 3, len ? databuf[i] : NULL, len};
        if (!batch) {
            int rc = len ? am_request_bulk(ep, 0, H_MSG, databuf[i], len, args[i], 3)
                         : am_request(ep, 0, H_MSG, args[i], 3);
            if (rc < 0)
                return rc;
        }
    }
    if (!batch)
        return 0;
    int rc = am_request_batch(ep, 0, out, n);
    return rc == n ? 0 : rc < 0 ? rc : -EIO;
}

/* The script: batches of these sizes, each followed by one single send. */
static const int script[] = {1, 2, 5, Q + 3, AM_BATCH_CHUNK + 7, 3, 16, 1, 2 * Q, 7};
#define SCRIPT_N (int)(sizeof script / sizeof script[0])

static unsigned script_total(int rounds)
{
    unsigned t = 0;
    for (int i = 0; i < SCRIPT_N; i++)
        t += (unsigned)script[i] + 1;
    return t * (unsigned)rounds;
}

static void writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    am_ep_t *ep = writer_ep(w);
    if (!ep)
        return;
    am__claim_stall_hook = widen_hook;
    tu_gate_wait(&S->gate);
    unsigned seq = 0;
    int rc = 0;
    while (rc == 0 && seq < S->expect[w])
        for (int i = 0; i < SCRIPT_N && rc == 0; i++) {
            if ((rc = send_run(ep, w, seq, script[i], 1)) < 0)
                break;
            seq += (unsigned)script[i];
            rc = send_run(ep, w, seq++, 1, 0);
        }
    am__claim_stall_hook = NULL;
    if (rc < 0)
        tu_error(&S->err, "writer %d: message %u: %s", w, seq, am_strerror(rc));
    tu_wait_flag(&S->done, 1, 120);
    am_ep_destroy(ep);
}

static void setup(void)
{
    tu_test_init();
    S = tu_shared_alloc(sizeof *S);
    memset(S, 0, sizeof *S);
    S->victim = -1;
}

static void teardown(void)
{
    tu_shared_free(S, sizeof *S);
}

/* Loop index i: claim algorithm i over mpsc, then the channel kinds. */
static const char *config(int i, char *what, size_t n)
{
    int algs = tu_n_algs();
    S->claim = i < algs ? am_claim_names[i] : "lockfree";
    S->queue = i < algs ? "mpsc" : am_queue_names[1 + i - algs];
    snprintf(what, n, "%s/%s", S->claim, S->queue);
    char role[16];
    snprintf(role, sizeof role, "b%d", i);
    tu_ep_name(S->rx_name, sizeof S->rx_name, role, -1, 0);
    return what;
}

static int n_configs(void)
{
    int k = 0;
    while (am_queue_names[k])
        k++;
    return tu_n_algs() + k - 1;
}

static void assert_tallies(const char *what)
{
    tu_assert_no_errors(what, &S->err);
    for (int w = 0; w < S->writers; w++) {
        if (w == S->victim)
            continue;
        ck_assert_msg(S->got[w] == S->expect[w] && S->dup[w] == 0 && S->order[w] == 0,
                      "%s: writer %d: %lu of %u arrived, %lu twice, %lu out of order", what,
                      w, S->got[w], S->expect[w], S->dup[w], S->order[w]);
    }
    ck_assert_msg(S->data_bad == 0 && S->args_bad == 0 && S->bad_packets == 0,
                  "%s: %lu garbled, %lu bad args, %lu packets reported bad", what,
                  S->data_bad, S->args_bad, S->bad_packets);
}

/* Every claim and kind: W writers streaming the script at once. */
START_TEST(streams)
{
    char what[64];
    config(_i, what, sizeof what);
    S->writers = 3;
    for (int w = 0; w < S->writers; w++)
        S->expect[w] = script_total(8);
    tu_gate_init(&S->gate, (unsigned)S->writers);
    pid_t r = tu_spawn(reader, NULL, 0), wp[MAXW];
    for (int w = 0; w < S->writers; w++)
        wp[w] = tu_spawn(writer, (void *)(intptr_t)w, w + 1);
    AO_store_release(&S->stop, 1); /* the reader stops once it has them all */
    for (int w = 0; w < S->writers; w++)
        tu_assert_exit0(tu_reap(wp[w], 240), "writer", what, &S->err);
    tu_assert_exit0(tu_reap(r, 60), "reader", what, &S->err);
    assert_tallies(what);
    tu_assert_clean(what);
}
END_TEST

static am_ep_t *make_local(const char *role, const char *claim, const char *queue,
                           int timeout_ms)
{
    char name[64];
    tu_ep_name(name, sizeof name, role, -1, 0);
    struct am_ep_opts o = {claim, NULL, Q, BLOCKS, 0, 0, 0, queue, timeout_ms};
    am_ep_t *ep = NULL;
    ck_assert_msg(am_ep_create(name, &o, &ep) == 0, "%s/%s: create %s", claim, queue, role);
    ck_assert_int_eq(am_set_handler(ep, H_MSG, msg_h), 0);
    return ep;
}

/* A queue nobody polls: a batch longer than it sends a prefix and says how
 * many (the wait ends at send_timeout_ms), which then arrive, in order; a
 * batch into the full queue sends nothing (-ETIMEDOUT); once drained, the
 * rest goes. */
START_TEST(full_queue)
{
    char what[64];
    config(_i, what, sizeof what);
    am_ep_t *rx = make_local("rx", S->claim, S->queue, -1);
    am_ep_t *tx = make_local("tx", S->claim, S->queue, 100);
    ck_assert_int_eq(am_ep_map(tx, 0, am_ep_name(rx)), 0);
    for (int w = 0; w < MAXW; w++)
        S->last[w] = -1;
    struct am_out out[3 * Q];
    uint32_t args[3 * Q][3];
    for (unsigned i = 0; i < 3 * Q; i++) {
        args[i][0] = 1, args[i][1] = i, args[i][2] = key_of(1, i);
        size_t len = len_of(1, i);
        tu_pattern(databuf[i], key_of(1, i), len);
        out[i] = (struct am_out){H_MSG, args[i], 3, len ? databuf[i] : NULL, len};
    }
    int sent = am_request_batch(tx, 0, out, 3 * Q);
    ck_assert_msg(sent > 0 && sent < 3 * Q, "%s: a batch of %d into a queue of %d sent %d",
                  what, 3 * Q, Q, sent);
    ck_assert_msg(am_request_batch(tx, 0, out + sent, 3 * Q - sent) == -ETIMEDOUT,
                  "%s: a batch into the full queue", what);
    while (am_poll(rx) > 0)
        ;
    ck_assert_msg(S->got[1] == (unsigned long)sent && S->order[1] == 0 && S->data_bad == 0,
                  "%s: %d sent, %lu arrived, %lu out of order, %lu garbled", what, sent,
                  S->got[1], S->order[1], S->data_bad);
    /* A bulk send that timed out holding its block (lockfree, onecas claim
     * it before the packet) leaves an idle claim that the receiver frees on
     * its idle polls: poll on. */
    int left = 3 * Q - sent;
    for (int tries = 0; left > 0 && tries < 200; tries++) {
        int rc = am_request_batch(tx, 0, out + (3 * Q - left), left);
        ck_assert_msg(rc > 0 || rc == -ETIMEDOUT, "%s: the rest: %d", what, rc);
        left -= rc > 0 ? rc : 0;
        for (int k = 0; k < 1000; k++)
            am_poll(rx);
    }
    ck_assert_msg(S->got[1] == 3 * Q && S->order[1] == 0 && S->dup[1] == 0 &&
                      S->data_bad == 0 && S->args_bad == 0,
                  "%s: %lu of %d arrived, %lu out of order, %lu twice", what, S->got[1],
                  3 * Q, S->order[1], S->dup[1]);
    ck_assert_int_eq(am_ep_destroy(tx), 0);
    ck_assert_int_eq(am_ep_destroy(rx), 0);
    tu_assert_clean(what);
}
END_TEST

/* Bad arguments: nothing sent, the error of the first bad message. */
START_TEST(bad_args)
{
    am_ep_t *rx = make_local("rx", "lockfree", "mpsc", -1);
    ck_assert_int_eq(am_ep_map(rx, 0, am_ep_name(rx)), 0);
    uint32_t a[9] = {0, 0, 0};
    struct am_out ok = {H_MSG, a, 3, NULL, 0};
    struct am_out bad[][3] = {
        {ok, {300, a, 3, NULL, 0}, ok},
        {ok, {H_MSG, a, 9, NULL, 0}, ok},
        {ok, {H_MSG, NULL, 3, NULL, 0}, ok},
        {ok, {H_MSG, a, 3, NULL, 5}, ok},
        {ok, {H_MSG, a, 3, databuf[0], AM_MAX_BULK + 1}, ok},
    };
    const int want[] = {-EINVAL, -EMSGSIZE, -EINVAL, -EINVAL, -EMSGSIZE};
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(am_request_batch(rx, 0, bad[i], 3) == want[i],
                      "bad message %u in the middle", i);
    ck_assert_int_eq(am_request_batch(rx, 0, &ok, 0), -EINVAL);
    ck_assert_int_eq(am_request_batch(rx, 0, &ok, -1), -EINVAL);
    ck_assert_int_eq(am_request_batch(rx, 0, NULL, 1), -EINVAL);
    ck_assert_int_eq(am_request_batch(NULL, 0, &ok, 1), -EINVAL);
    ck_assert_int_eq(am_request_batch(rx, 7, &ok, 1), -EINVAL); /* never mapped */
    ck_assert_msg(am_poll(rx) == 0 && S->args_bad == 0,
                  "a refused batch sent something: %lu", S->args_bad);
    ck_assert_int_eq(am_ep_destroy(rx), 0);
    tu_assert_clean("bad_args");
}
END_TEST

/* A shared endpoint sends a batch one by one: the same result, the same
 * order, every kind. */
START_TEST(shared_endpoint)
{
    char what[64];
    config(_i, what, sizeof what);
    am_ep_t *rx = make_local("rx", S->claim, S->queue, -1);
    am_ep_t *tx = make_local("tx", S->claim, S->queue, 100);
    ck_assert_int_eq(am_ep_map(tx, 0, am_ep_name(rx)), 0);
    ck_assert_int_eq(am_ep_share(tx), 0);
    for (int w = 0; w < MAXW; w++)
        S->last[w] = -1;
    struct am_out out[Q / 2];
    uint32_t args[Q / 2][3];
    for (unsigned i = 0; i < Q / 2; i++) {
        args[i][0] = 2, args[i][1] = i, args[i][2] = key_of(2, i);
        size_t len = len_of(2, i);
        tu_pattern(databuf[i], key_of(2, i), len);
        out[i] = (struct am_out){H_MSG, args[i], 3, len ? databuf[i] : NULL, len};
    }
    ck_assert_msg(am_request_batch(tx, 0, out, Q / 2) == Q / 2, "%s: shared batch", what);
    while (am_poll(rx) > 0)
        ;
    ck_assert_msg(S->got[2] == Q / 2 && S->order[2] == 0 && S->data_bad == 0,
                  "%s: %lu of %d arrived, %lu out of order, %lu garbled", what, S->got[2],
                  Q / 2, S->order[2], S->data_bad);
    ck_assert_int_eq(am_ep_destroy(tx), 0);
    ck_assert_int_eq(am_ep_destroy(rx), 0);
    tu_assert_clean(what);
}
END_TEST

/* ---- killed in the middle of a batch ------------------------------------- */

static int fills;

/* The victim parks at its fourth fill: three messages of its batch
 * published, the fourth claimed (and for the shared queues the rest too). */
static void park_hook(enum am_hook where)
{
    if (where != AM_HOOK_FILLING || ++fills < 4)
        return;
    AO_store_release(&S->parked, 1);
    for (;;)
        pause();
}

static void victim(void *arg)
{
    int w = S->victim, random = (int)(intptr_t)arg;
    am_ep_t *ep = writer_ep(w);
    if (!ep)
        return;
    if (!random) {
        am__claim_stall_hook = park_hook;
        send_run(ep, w, 0, 8, 1);
        tu_error(&S->err, "victim: came back from its parked batch");
        return;
    }
    am__claim_stall_hook = widen_hook;
    AO_store_release(&S->parked, 1);
    for (unsigned seq = 0; seq + 16 < MAXSEQ; seq += 16)
        send_run(ep, w, seq, 16, 1);
    for (;;)
        pause(); /* never reached: the parent kills it first */
}

/* Where what arrived of the victim's is its messages in order, once each;
 * parked: exactly its first three for the shared queues (a channel's ring
 * may hold back, and lose, what it committed: mcring), never the fourth. */
static void assert_victim(const char *what, int parked)
{
    int v = S->victim;
    ck_assert_msg(S->dup[v] == 0 && S->order[v] == 0,
                  "%s: victim: %lu twice, %lu out of order", what, S->dup[v], S->order[v]);
    for (unsigned s = 0; s < S->got[v]; s++)
        ck_assert_msg(S->seen[v][s] == 1, "%s: victim's message %u missing before %lu",
                      what, s, S->got[v]);
    if (parked && !strcmp(S->queue, "mpsc"))
        ck_assert_msg(S->got[v] == 3 && S->abandoned >= 1,
                      "%s: victim parked after 3 published: %lu arrived, %lu skipped", what,
                      S->got[v], S->abandoned);
    if (parked)
        ck_assert_msg(S->got[v] <= 3, "%s: the parked message arrived", what);
}

static void killed(int i, int random, int reps)
{
    char what[64];
    config(i, what, sizeof what);
    for (int rep = 0; rep < reps; rep++) {
        memset(S, 0, sizeof *S);
        config(i, what, sizeof what);
        char r[16];
        snprintf(r, sizeof r, "k%d-%d", i, rep);
        tu_ep_name(S->rx_name, sizeof S->rx_name, r, -1, 0);
        S->writers = 2, S->victim = 1, S->inline_only = !random;
        S->expect[0] = script_total(1);
        tu_gate_init(&S->gate, 1);
        pid_t rd = tu_spawn(reader, NULL, 0),
              vp = tu_spawn(victim, (void *)(intptr_t)random, 1);
        tu_assert_flag(&S->parked, 1, 30, "the victim at its hook", what, &S->err);
        if (random)
            tu_sleep_ms(1 + (int)(tu_mix32((unsigned)rep, (unsigned)getpid()) % 30));
        kill(vp, SIGKILL);
        tu_reap(vp, 10);
        pid_t lw = tu_spawn(writer, (void *)(intptr_t)0, 1);
        AO_store_release(&S->stop, 1);
        tu_assert_exit0(tu_reap(lw, 120), "live writer", what, &S->err);
        tu_assert_exit0(tu_reap(rd, 60), "reader", what, &S->err);
        assert_tallies(what);
        assert_victim(what, !random);
    }
    tu_assert_clean(what);
}

START_TEST(killed_mid_batch)
{
    killed(_i, 0, 1);
}
END_TEST

START_TEST(killed_at_random)
{
    killed(_i, 1, 3);
}
END_TEST

int main(void)
{
    tu_run_init("ba");
    Suite *s = suite_create("batch");
    TCase *tc = tu_tcase(s, "streams", 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, streams, 0, n_configs());
    tc = tu_tcase(s, "edges", 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, full_queue, 0, n_configs());
    tcase_add_test(tc, bad_args);
    tcase_add_loop_test(tc, shared_endpoint, 0, n_configs());
    tc = tu_tcase(s, "killed", 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, killed_mid_batch, 0, n_configs());
    tcase_add_loop_test(tc, killed_at_random, 0, n_configs());
    return tu_run_suite(s, "check_batch");
}
