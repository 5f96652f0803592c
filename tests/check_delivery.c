/*
 * check_delivery.c - many writers, one reader: every message is delivered
 * exactly once, one sender's messages in the order it sent them, and bulk data
 * arrives intact, for every claim algorithm on both segment backends; the
 * bulk mix holds medium messages (up to AM_MAX_MEDIUM, inline in their slot:
 * 1 byte and AM_MAX_MEDIUM among them), bulk ones (AM_MAX_MEDIUM + 1 the
 * first) and long ones.
 *
 * Each test forks one reader (child 0) and W writer processes, pinned across the
 * cores and started together behind a gate.  Writers send messages whose
 * arguments name the writer, its sequence number and a check word, for a fixed
 * time but at least a minimum count (so that slow algorithms on an
 * oversubscribed machine get as long as fast ones, not as many messages; both
 * scale with SHMAM_STRESS), then publish how many they sent; the reader
 * counts them in a bitmap per writer and checks every argument, the order and,
 * for bulk, every byte.  The writers' claims are widened with the stall hook
 * (am__claim_stall_hook): yields and pauses, and in the FIFO test also short
 * sleeps, between taking a ticket and claiming its slot, on queues of 4 or 8
 * packets so that laps wrap all the time.  The FIFO test is the regression guard
 * for the lap tag of mpsc_send.c: without the lap a stalled sender's slot can be
 * taken a lap later and messages overtake each other.
 *
 * Children report through a shared block (never through Check); the parent
 * asserts on it, naming the algorithm and backend in every message.  Endpoint
 * names carry this run's pid, the test and the combination, and the parent
 * removes anything a crashed child left behind (and fails the test for it).
 * SHMAM_VERBOSE=1 prints each run's time and message count.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

#define MAXW 8
#define H_SHORT 7
#define H_BULK 9
/* A run of processes may go RUN_LIMIT_S without a delivery (the reader gives
 * up 5 s before), a test TEST_LIMIT_S in all (times the stress factor):
 * beside a CPU-bound process 7 writers through a fair lock deliver about 25
 * messages a second (seen: 604 of 614 in 26 s, then the old fixed limit). */
#define RUN_LIMIT_S 30
#define TEST_LIMIT_S 300

/* The shape of one test. */
struct shape {
    const char *tag;
    int writers;
    unsigned min, n; /* messages per writer: at least min, at most n ... */
    double secs;     /* ... and after min only while this time lasts */
    unsigned packets, bulk_blocks;
    int bulk;     /* mix bulk messages in */
    int stall;    /* 0: tu_widen in the claim, 1: also sleeps (FIFO test) */
    int use_wait; /* reader sleeps in am_wait instead of spinning on am_poll */
};

struct shared {
    struct tu_gate gate;
    struct shape sh;
    unsigned n, min;
    double secs;
    const char *alg, *shm;
    char reader[AM_NAME_MAX], writer[MAXW][AM_NAME_MAX];
    double stall_s; /* the reader gives up after this long without a message */
    AO_t progress;  /* the reader's deliveries, published for the parent's watchdog */
    AO_t writers_done;
    unsigned long sent[MAXW]; /* by writer w, valid once writers_done == W */
    /* First failure of each process (0: reader, 1 + w: writer w). */
    int rc[MAXW + 1];
    char what[MAXW + 1][80];
    /* The reader's tallies. */
    unsigned long distinct, delivered, count[MAXW], dup[MAXW], viol[MAXW];
    unsigned long bad_args, bad_data, bad_src, bad_packets, hdr_bad_packets;
    long last[MAXW];    /* last sequence number seen per writer, -1: none */
    unsigned src[MAXW]; /* the reader's peer index for writer w, + 1 */
    int have_first;     /* first order violation: */
    long first_w, first_prev, first_got;
    char first_bad[120]; /* first bad argument or byte */
    int timed_out;
    unsigned char seen[]; /* W * n bits */
};

static struct shared *S; /* in every child: the block above */

/* Bulk message (w, seq): its length (its bytes: tu_pattern(key of (w, seq))):
 * medium (up to AM_MAX_MEDIUM, in the slot), bulk, and past AM_MAX_BULK a
 * long one (MIX_LONG, through the heap), so that one sender's stream mixes
 * every kind. */
#define MIX_LONG 12000u
static size_t bulk_len(unsigned w, unsigned seq)
{
    static const size_t special[] = {8192,
                                     0,
                                     1,
                                     8191,
                                     63,
                                     64,
                                     65,
                                     4097,
                                     7,
                                     8000,
                                     4096,
                                     AM_MAX_MEDIUM,
                                     AM_MAX_MEDIUM + 1,
                                     MIX_LONG};
    if (seq % 3 == 0)
        return special[(seq / 3 + w) % (sizeof special / sizeof special[0])];
    if ((seq / 3) % 2)
        return tu_mix32(w, seq) % (AM_MAX_MEDIUM + 1);
    return tu_mix32(w, seq) % (AM_MAX_BULK + 1);
}

static int is_bulk(unsigned seq)
{
    return seq % 3 != 1; /* two in three; the rest short */
}

/* Record the first failure of process `who` (0 reader, 1 + w writer w). */
static void note(int who, int rc, const char *what)
{
    if (rc < 0 && S->rc[who] == 0) {
        S->rc[who] = rc;
        snprintf(S->what[who], sizeof S->what[who], "%s", what);
    }
}

static void bad(unsigned long *counter, const char *fmt, unsigned a, unsigned b)
{
    if ((*counter)++ == 0 && S->first_bad[0] == '\0')
        snprintf(S->first_bad, sizeof S->first_bad, fmt, a, b);
}

/* The reader's bookkeeping for message (w, seq) from peer index `src`. */
static void record(unsigned w, unsigned seq, unsigned src)
{
    size_t bit = (size_t)w * S->n + seq;
    S->delivered++;
    if (S->src[w] == 0)
        S->src[w] = src + 1;
    else if (S->src[w] != src + 1)
        bad(&S->bad_src, "writer %u came from two peer indices (%u)", w, src);
    if (S->seen[bit / 8] & (1u << (bit % 8))) {
        S->dup[w]++;
        return;
    }
    S->seen[bit / 8] |= (unsigned char)(1u << (bit % 8));
    S->count[w]++;
    S->distinct++;
    if ((long)seq <= S->last[w]) {
        if (S->viol[w]++ == 0 && !S->have_first) {
            S->have_first = 1;
            S->first_w = w;
            S->first_prev = S->last[w];
            S->first_got = seq;
        }
    }
    S->last[w] = seq;
}

static void on_short(am_token_t *tok, const uint32_t *a, int nargs, void *data, size_t len)
{
    if (nargs != 3 || data || len) {
        bad(&S->bad_args, "short message with %u args, %u bytes", (unsigned)nargs,
            (unsigned)len);
        return;
    }
    if (a[0] >= (unsigned)S->sh.writers || a[1] >= S->n || a[2] != tu_mix32(a[0], a[1])) {
        bad(&S->bad_args, "short message (%u, %u) has bad arguments", a[0], a[1]);
        return;
    }
    record(a[0], a[1], am_token_source(tok));
}

static void on_bulk(am_token_t *tok, const uint32_t *a, int nargs, void *data, size_t len)
{
    if (nargs != 5 || a[0] >= (unsigned)S->sh.writers || a[1] >= S->n ||
        a[4] != tu_mix32(a[0], a[1])) {
        bad(&S->bad_args, "bulk message (%u, %u) has bad arguments", nargs > 0 ? a[0] : 0,
            nargs > 1 ? a[1] : 0);
        return;
    }
    unsigned w = a[0], seq = a[1];
    const uint8_t *p = data;
    if (len != a[2] || len != bulk_len(w, seq) || !p)
        bad(&S->bad_data, "bulk message %u has length %u", seq, (unsigned)len);
    else if (tu_fnv1a(p, len) != a[3])
        bad(&S->bad_data, "bulk message %u of writer %u: checksum differs", seq, w);
    else
        for (size_t i = 0; i < len; i++)
            if (p[i] != tu_pattern_byte(a[4], i)) {
                bad(&S->bad_data, "bulk message %u: byte %u differs", seq, (unsigned)i);
                break;
            }
    record(w, seq, am_token_source(tok));
}

/* Stall hooks for the writers' claims (see the file header). */
static unsigned hook_calls, hook_seed;

static void widen_hook(enum am_hook where)
{
    tu_widen(hook_calls++ * 16u + hook_seed);
}

static void stall_hook(enum am_hook where)
{
    tu_stall(tu_mix32(hook_seed, hook_calls++));
}

static int send_one(am_ep_t *ep, unsigned w, unsigned seq, uint8_t *buf)
{
    uint32_t key = tu_mix32(w, seq);
    if (!S->sh.bulk || !is_bulk(seq)) {
        uint32_t a[3] = {w, seq, key};
        return am_request(ep, 0, H_SHORT, a, 3);
    }
    size_t len = bulk_len(w, seq);
    tu_pattern(buf, key, len);
    uint32_t a[5] = {w, seq, (uint32_t)len, tu_fnv1a(buf, len), key};
    if (len > AM_MAX_BULK)
        return am_request_long(ep, 0, H_BULK, buf, len, a, 5);
    return am_request_bulk(ep, 0, H_BULK, buf, len, a, 5);
}

static void writer(unsigned w)
{
    struct am_ep_opts o = {.claim = S->alg, .shm = S->shm, .packets = 2, .bulk_blocks = 1};
    static uint8_t buf[MIX_LONG];
    am_ep_t *ep = NULL;
    int rc = am_ep_create(S->writer[w], &o, &ep);
    note(1 + w, rc, "am_ep_create");
    tu_gate_wait(&S->gate); /* 1: every endpoint exists */
    if (ep && (rc = am_ep_map(ep, 0, S->reader)) < 0) {
        note(1 + w, rc, "am_ep_map of the reader");
        am_ep_destroy(ep);
        ep = NULL;
    }
    tu_gate_wait(&S->gate); /* 2: start together */
    hook_seed = w;
    am__claim_stall_hook = S->sh.stall ? stall_hook : widen_hook;
    double stop = tu_now_s() + S->secs;
    unsigned seq;
    for (seq = 0; ep && seq < S->n && (seq < S->min || tu_now_s() < stop); seq++)
        if ((rc = send_one(ep, w, seq, buf)) < 0) {
            note(1 + w, rc, "am_request");
            break;
        }
    am__claim_stall_hook = NULL;
    S->sent[w] = seq; /* published by the fetch-and-add below */
    AO_fetch_and_add1_full(&S->writers_done);
    tu_gate_wait(&S->gate); /* 3: the reader is done */
    if (ep)
        note(1 + w, am_ep_destroy(ep), "am_ep_destroy");
}

/* Poll (or wait) until every writer has finished and all its messages are in
 * (or, after they finished, a poll finds nothing: the rest is lost).  A spinning
 * reader yields when a poll finds nothing: on two cores it shares one with
 * writers, and without the yield a writer that yields in its claim waits for
 * the reader's whole time slice. */
static void read_all(am_ep_t *ep)
{
    for (double last = tu_now_s();;) {
        int all_sent = AO_load_acquire(&S->writers_done) == (AO_t)S->sh.writers;
        int n = S->sh.use_wait ? am_wait(ep, 20) : am_poll(ep);
        if (n < 0) {
            note(0, n, S->sh.use_wait ? "am_wait" : "am_poll");
            return;
        }
        if (all_sent && n == 0)
            return; /* every send had returned: nothing more will come */
        if (n == 0)
            sched_yield();
        else
            last = tu_now_s(), AO_store_release(&S->progress, S->delivered);
        if (tu_now_s() - last > S->stall_s) {
            S->timed_out = 1;
            return;
        }
    }
}

static void reader(void)
{
    struct am_ep_opts o = {.claim = S->alg,
                           .shm = S->shm,
                           .packets = S->sh.packets,
                           .bulk_blocks = S->sh.bulk_blocks,
                           .max_senders = 16};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(S->reader, &o, &ep);
    note(0, rc, "am_ep_create");
    if (ep) {
        note(0, am_set_handler(ep, H_SHORT, on_short), "am_set_handler");
        note(0, am_set_handler(ep, H_BULK, on_bulk), "am_set_handler");
    }
    tu_gate_wait(&S->gate); /* 1 */
    tu_gate_wait(&S->gate); /* 2 */
    if (ep) {
        read_all(ep);
        S->bad_packets = am_ep_bad_packets(ep);
        S->hdr_bad_packets = AO_load(&ep->own.hdr->bad_packets);
        /* Writers still blocked on a full queue get -EPIPE and come to the gate. */
        note(0, am_ep_destroy(ep), "am_ep_destroy");
    }
    tu_gate_wait(&S->gate); /* 3 */
}

static void child(int idx, void *arg)
{
    if (idx == 0)
        reader();
    else
        writer((unsigned)idx - 1);
}

/* The run's prefix, then TAG-ALG-SHM-ROLE, and the writer's number if w >= 0
 * (with role "" and w < 0: the prefix of every name of a run of a test). */
static void name_of(char *buf, const char *tag, const char *alg, const char *shm,
                    const char *role, int w)
{
    if (w < 0)
        tu_name(buf, AM_NAME_MAX, "%s-%s-%s-%s", tag, alg, shm, role);
    else
        tu_name(buf, AM_NAME_MAX, "%s-%s-%s-%s%d", tag, alg, shm, role, w);
}

static void run(const struct shape *sh, int combo)
{
    struct tu_combo c = tu_combo_of(combo);
    const char *alg = c.alg_name, *shm = c.backend_name, *t = sh->tag;
    char pfx[AM_NAME_MAX], first[128] = "";
    unsigned n = sh->n * (unsigned)tu_stress_factor(), W = (unsigned)sh->writers;
    unsigned long total = 0;
    size_t size = sizeof(struct shared) + ((size_t)W * n + 7) / 8;
    S = tu_shared_alloc(size);
    S->sh = *sh;
    S->n = n;
    S->min = sh->min * (unsigned)tu_stress_factor();
    S->secs = sh->secs * tu_stress_factor();
    S->alg = alg;
    S->shm = shm;
    for (unsigned w = 0; w < W; w++) {
        S->last[w] = -1;
        name_of(S->writer[w], t, alg, shm, "w", (int)w);
    }
    name_of(S->reader, t, alg, shm, "r", -1);
    tu_gate_init(&S->gate, W + 1);
    double t0 = tu_now_s();
    S->stall_s = (RUN_LIMIT_S - 5) * tu_stress_factor();
    int failed = tu_run_procs_moving((int)W + 1, child, NULL, &S->progress,
                                     RUN_LIMIT_S * tu_stress_factor());
    double secs = tu_now_s() - t0;
    if (getenv("SHMAM_VERBOSE"))
        fprintf(stderr, "%s/%s %s: %.2f s, %lu delivered\n", alg, shm, t, secs,
                S->delivered);
    name_of(pfx, t, alg, shm, "", -1);
    int left = tu_leftovers(pfx, 1, first, sizeof first);

    ck_assert_msg(failed == 0, "%s/%s %s: %d of %u processes crashed or hung (%.1f s)", alg,
                  shm, t, failed, W + 1, secs);
    for (unsigned w = 0; w < W; w++)
        total += S->sent[w];
    ck_assert_msg(!S->timed_out,
                  "%s/%s %s: reader gave up after %.0f s (the last %d without a "
                  "message) with %lu of %lu messages (%lu bad packets)",
                  alg, shm, t, secs, (RUN_LIMIT_S - 5) * tu_stress_factor(), S->distinct,
                  total, S->bad_packets);
    for (unsigned i = 0; i <= W; i++)
        ck_assert_msg(S->rc[i] == 0, "%s/%s %s: %s %u: %s: %s", alg, shm, t,
                      i ? "writer" : "reader", i ? i - 1 : 0, S->what[i],
                      am_strerror(S->rc[i]));
    ck_assert_msg(S->bad_args == 0 && S->bad_data == 0 && S->bad_src == 0,
                  "%s/%s %s: %lu bad arguments, %lu bad data, %lu bad sources; first: %s",
                  alg, shm, t, S->bad_args, S->bad_data, S->bad_src, S->first_bad);
    for (unsigned w = 0; w < W; w++) {
        ck_assert_msg(S->sent[w] >= S->min, "%s/%s %s: writer %u sent only %lu", alg, shm,
                      t, w, S->sent[w]);
        ck_assert_msg(S->dup[w] == 0, "%s/%s %s: writer %u: %lu duplicates", alg, shm, t, w,
                      S->dup[w]);
        ck_assert_msg(S->count[w] == S->sent[w],
                      "%s/%s %s: writer %u: %lu of %lu delivered (%lu lost)", alg, shm, t,
                      w, S->count[w], S->sent[w], S->sent[w] - S->count[w]);
    }
    unsigned long viol = 0;
    for (unsigned w = 0; w < W; w++)
        viol += S->viol[w];
    ck_assert_msg(viol == 0,
                  "%s/%s %s: %lu per-sender order violations; first: writer %ld's message "
                  "%ld arrived after its %ld",
                  alg, shm, t, viol, S->first_w, S->first_got, S->first_prev);
    ck_assert_msg(S->delivered == total, "%s/%s %s: %lu deliveries for %lu messages", alg,
                  shm, t, S->delivered, total);
    ck_assert_msg(S->bad_packets == 0 && S->hdr_bad_packets == 0,
                  "%s/%s %s: %lu bad packets (header says %lu)", alg, shm, t,
                  S->bad_packets, S->hdr_bad_packets);
    ck_assert_msg(left == 0, "%s/%s %s: %d endpoint segment(s) left behind, e.g. %s", alg,
                  shm, t, left, first);
    tu_shared_free(S, size);
}

/* (a) exactly once: 3 and 7 writers (oversubscribed), and a reader in am_wait. */
#define SHAPE(tag_, w_, min_, n_, secs_, q_, b_, bulk_, stall_, wait_)                     \
    {                                                                                      \
        .tag = tag_, .writers = w_, .min = min_, .n = n_, .secs = secs_, .packets = q_,    \
        .bulk_blocks = b_, .bulk = bulk_, .stall = stall_, .use_wait = wait_               \
    }
/*                                        tag  W  min       n secs    Q   B  bulk stall wait
 */
static const struct shape once3 = SHAPE("once3", 3, 500, 100000, 0.5, 128, 16, 0, 0, 0);
static const struct shape once7 = SHAPE("once7", 7, 300, 100000, 0.5, 16, 16, 0, 0, 0);
static const struct shape oncew = SHAPE("oncew", 3, 500, 100000, 0.5, 8, 16, 0, 0, 1);
/* (b) per-sender FIFO, queues of 4 and 8 packets, stalls between claim steps;
 * fifo8 with short, medium, bulk and long messages mixed. */
static const struct shape fifo4 = SHAPE("fifo4", 7, 300, 100000, 0.5, 4, 16, 0, 1, 0);
static const struct shape fifo8 = SHAPE("fifo8", 3, 500, 100000, 0.5, 8, 16, 1, 1, 0);
/* (c) bulk of every length 0..8192 (medium ones in the slot) and long ones,
 * mixed with short messages, 2 bulk blocks. */
static const struct shape bulk = SHAPE("bulk", 3, 200, 100000, 0.5, 8, 2, 1, 0, 0);
static const struct shape bulkw = SHAPE("bulkw", 7, 100, 100000, 0.5, 4, 2, 1, 1, 1);

START_TEST(exactly_once_3)
{
    run(&once3, _i);
}
END_TEST

START_TEST(exactly_once_7)
{
    run(&once7, _i);
}
END_TEST

START_TEST(exactly_once_wait)
{
    run(&oncew, _i);
}
END_TEST

START_TEST(fifo_q4)
{
    run(&fifo4, _i);
}
END_TEST

START_TEST(fifo_q8)
{
    run(&fifo8, _i);
}
END_TEST

START_TEST(bulk_integrity)
{
    run(&bulk, _i);
}
END_TEST

START_TEST(bulk_integrity_wait)
{
    run(&bulkw, _i);
}
END_TEST

static Suite *delivery_suite(void)
{
    Suite *s = suite_create("delivery");
    struct {
        const char *name;
        const TTest *test;
    } tcs[] = {
        {"exactly once, 3 writers", exactly_once_3},
        {"exactly once, 7 writers", exactly_once_7},
        {"exactly once, am_wait", exactly_once_wait},
        {"fifo, 4 packets", fifo_q4},
        {"fifo, 8 packets", fifo_q8},
        {"bulk integrity", bulk_integrity},
        {"bulk integrity, am_wait", bulk_integrity_wait},
    };
    for (size_t i = 0; i < sizeof tcs / sizeof tcs[0]; i++) {
        TCase *tc = tcase_create(tcs[i].name);
        tcase_set_timeout(tc, TEST_LIMIT_S);
        tcase_add_loop_test(tc, tcs[i].test, 0, tu_combos());
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    tu_run_init("dv");
    return tu_run_suite(delivery_suite(), "check_delivery");
}
