/*
 * check_deadlock.c - no deadlock when every queue is full: P processes with
 * tiny queues (2 packets, 1 bulk block per queue) and the smallest heaps (long
 * messages of at most 4096 bytes) all send requests, short, bulk and long, to
 * every other process round robin, and every request is answered with a reply
 * of its kind (bulk with bulk, long with long).  Nobody calls am_poll while
 * sending: the only thing that drains the queues is the senders' own backoff
 * (which polls the sender's endpoint, section 3.2 of the paper) until every
 * process has sent; then each polls until all its replies are in, and they
 * finish together through a counter in shared memory.
 *
 * Every claim algorithm on both backends, P = 4 and briefly P = 8 on two cores.
 * Processes are pinned across the cores, start behind a gate, and widen their
 * claims with the stall hook.  Each checks every argument, the order of each
 * sender's requests and each replier's replies, and the bulk bytes; the parent
 * checks that every process received exactly the requests sent to it and the
 * replies to its own requests.  A deadlock shows as processes that do not
 * finish: they are killed after RUN_LIMIT_S seconds (before Check's timeout)
 * and the test fails naming where each one was.
 * Each process must have found queues full (its sends' backoff rounds,
 * counted by send.c), or the test proves nothing.
 * SHMAM_VERBOSE=1 prints each run's time and message counts.
 */
#include <check.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "peers.h"
#include "testutil.h"

#define MAXP 8
#define H_REQ 11
#define H_REQB 12
#define H_REP 13
#define H_REPB 14
#define H_REQL 15
#define H_REPL 16
#define RUN_LIMIT_S                                                                        \
    60 /* per run of processes, times the stress factor: a                                 \
        * deadlock, not a loaded machine (20 s was hit at                                  \
        * load 12), runs into it */

enum phase { SETUP, SENDING, DRAINING, FINISHING, DONE };
static const char *const phase_names[] = {"setting up", "sending", "awaiting replies",
                                          "awaiting the others", "done"};

struct shape {
    const char *tag;
    int procs;
    unsigned min; /* requests per process: at least min, then while secs last */
    double secs;
};

struct shared {
    struct tu_gate gate;
    struct shape sh;
    unsigned min;
    double secs, deadline;
    const char *alg, *shm;
    char name[MAXP][AM_NAME_MAX];
    AO_t finished; /* processes that have all their replies */
    /* Per process p (each writes only its own row). */
    int rc[MAXP];
    char what[MAXP][80];
    int phase[MAXP];
    unsigned long progress[MAXP];   /* requests sent so far */
    unsigned long sent[MAXP][MAXP]; /* requests p sent to q */
    unsigned long req[MAXP][MAXP];  /* requests p received from q */
    unsigned long rep[MAXP][MAXP];  /* replies p received from q */
    unsigned long bad[MAXP];        /* bad arguments, order or data seen by p */
    char first_bad[MAXP][120];
    int gave_up[MAXP];
    unsigned long backoffs[MAXP]; /* rounds each process's sends waited for room */
};

static struct shared *S;
static int me;

/* Message kinds, as the handlers take them. */
enum kind { SHORT, BULK, LONG };

/* Message (from, to, seq, reply?): its key and bulk length (its bytes:
 * tu_pattern(key)); long messages: long_len. */
static uint32_t key_of(unsigned from, unsigned to, unsigned seq, int reply)
{
    return tu_mix32(from * MAXP + to + (reply ? 0x1000u : 0), seq);
}

static size_t len_of(uint32_t key, int reply)
{
    static const size_t special[] = {8192, 0, 1, 8191, 4097};
    if (key % 5 == 0)
        return special[(key >> 8) % 5];
    return reply ? (key >> 4) % 300 : (key >> 4) % (AM_MAX_BULK + 1);
}

static size_t long_len(uint32_t key)
{
    return key % 7 == 0 ? AM_MIN_LONG : (key >> 3) % (AM_MIN_LONG + 1);
}

static void note(int rc, const char *what)
{
    if (rc < 0 && S->rc[me] == 0) {
        S->rc[me] = rc;
        snprintf(S->what[me], sizeof S->what[me], "%s", what);
    }
}

static void bad(const char *fmt, unsigned a, unsigned b, unsigned c)
{
    if (S->bad[me]++ == 0)
        snprintf(S->first_bad[me], sizeof S->first_bad[me], fmt, a, b, c);
}

/* Check a message's arguments (from, seq, key [, len]) and bulk data against
 * what `from` must have sent as its next message on this channel (`count`
 * messages so far); returns the sequence number, or -1 if it is bad. */
static long check_msg(am_token_t *tok, const uint32_t *a, int nargs, const void *data,
                      size_t len, enum kind kind, int reply, unsigned long count)
{
    unsigned from = am_token_source(tok);
    if (nargs != (kind != SHORT ? 4 : 3) || from >= (unsigned)S->sh.procs || a[0] != from) {
        bad("message from peer %u with %u args, first %u", from, (unsigned)nargs, a[0]);
        return -1;
    }
    unsigned seq = a[1];
    uint32_t key = key_of(from, (unsigned)me, seq, reply);
    if (seq != count || a[2] != key) {
        bad("from %u: message %u where %u was due, or bad key", from, seq, (unsigned)count);
        return -1;
    }
    if (kind != SHORT) {
        uint8_t want[AM_MAX_BULK];
        size_t n = kind == BULK ? len_of(key, reply) : long_len(key);
        tu_pattern(want, key, n);
        if (len != n || a[3] != n || (n && !data) || (n && memcmp(data, want, n) != 0)) {
            bad("from %u: bulk or long message %u: %u bytes wrong", from, seq,
                (unsigned)len);
            return -1;
        }
    } else if (data || len) {
        bad("from %u: short message %u with %u bytes", from, seq, (unsigned)len);
        return -1;
    }
    return seq;
}

static void on_request(am_token_t *tok, const uint32_t *a, int nargs, void *data,
                       size_t len, enum kind kind)
{
    unsigned from = am_token_source(tok);
    long seq =
        check_msg(tok, a, nargs, data, len, kind, 0, from < MAXP ? S->req[me][from] : 0);
    if (seq < 0)
        return;
    S->req[me][from]++;
    uint32_t key = key_of((unsigned)me, from, (unsigned)seq, 1);
    uint32_t r[4] = {(uint32_t)me, (uint32_t)seq, key, 0};
    int rc;
    if (kind != SHORT) {
        static uint8_t buf[AM_MAX_BULK];
        size_t n = kind == BULK ? len_of(key, 1) : long_len(key);
        tu_pattern(buf, key, n);
        r[3] = (uint32_t)n;
        rc = kind == BULK ? am_reply_bulk(tok, H_REPB, buf, n, r, 4)
                          : am_reply_long(tok, H_REPL, buf, n, r, 4);
    } else
        rc = am_reply(tok, H_REP, r, 3);
    note(rc, kind == BULK ? "am_reply_bulk" : kind == LONG ? "am_reply_long" : "am_reply");
}

static void on_reply(am_token_t *tok, const uint32_t *a, int nargs, void *data, size_t len,
                     enum kind kind)
{
    unsigned from = am_token_source(tok);
    if (check_msg(tok, a, nargs, data, len, kind, 1, from < MAXP ? S->rep[me][from] : 0) >=
        0)
        S->rep[me][from]++;
}

static void on_req(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    on_request(t, a, n, d, l, SHORT);
}

static void on_reqb(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    on_request(t, a, n, d, l, BULK);
}

static void on_reql(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    on_request(t, a, n, d, l, LONG);
}

static void on_rep(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    on_reply(t, a, n, d, l, SHORT);
}

static void on_repb(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    on_reply(t, a, n, d, l, BULK);
}

static void on_repl(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    on_reply(t, a, n, d, l, LONG);
}

static unsigned hook_calls;

static void widen_hook(enum am_hook where)
{
    tu_widen(hook_calls++ * MAXP + (unsigned)me);
}

/* Request number k of this process: to the k-th other process round robin,
 * every third one bulk or (every sixth) long. */
static int send_request(am_ep_t *ep, unsigned long k)
{
    static uint8_t buf[AM_MAX_BULK];
    unsigned P = (unsigned)S->sh.procs;
    unsigned to = ((unsigned)me + 1 + (unsigned)(k % (P - 1))) % P;
    unsigned seq = (unsigned)S->sent[me][to];
    uint32_t key = key_of((unsigned)me, to, seq, 0);
    uint32_t a[4] = {(uint32_t)me, seq, key, 0};
    int rc;
    if (k % 3 == 2) {
        size_t n = k % 6 == 5 ? long_len(key) : len_of(key, 0);
        tu_pattern(buf, key, n);
        a[3] = (uint32_t)n;
        rc = k % 6 == 5 ? am_request_long(ep, to, H_REQL, buf, n, a, 4)
                        : am_request_bulk(ep, to, H_REQB, buf, n, a, 4);
    } else
        rc = am_request(ep, to, H_REQ, a, 3);
    if (rc == 0)
        S->sent[me][to]++;
    return rc;
}

static unsigned long sum(const unsigned long *v)
{
    unsigned long s = 0;
    for (int i = 0; i < S->sh.procs; i++)
        s += v[i];
    return s;
}

/* Poll until cond() holds; 0, or -1 once the deadline has passed. */
static int poll_until(am_ep_t *ep, int (*cond)(void))
{
    while (!cond()) {
        int n = am_poll(ep);
        if (n < 0) {
            note(n, "am_poll");
            return -1;
        }
        if (tu_now_s() > S->deadline) {
            S->gave_up[me] = 1;
            return -1;
        }
        if (n == 0)
            sched_yield();
    }
    return 0;
}

static int all_replied(void)
{
    return sum(S->rep[me]) == sum(S->sent[me]);
}

static int all_finished(void)
{
    return AO_load_acquire(&S->finished) == (AO_t)S->sh.procs;
}

static void exchange(am_ep_t *ep)
{
    S->phase[me] = SENDING;
    am__claim_stall_hook = widen_hook;
    double stop = tu_now_s() + S->secs;
    for (unsigned long k = 0; k < S->min || tu_now_s() < stop; k++) {
        int rc = send_request(ep, k);
        if (rc < 0) {
            note(rc, "am_request");
            break;
        }
        S->progress[me] = k + 1;
    }
    am__claim_stall_hook = NULL;
    for (int q = 0; q < S->sh.procs; q++) /* did the queues fill up? (send.c counts) */
        if (q != me)
            S->backoffs[me] += am__peer(ep, (unsigned)q)->backoffs;
    S->phase[me] = DRAINING;
    if (poll_until(ep, all_replied) < 0)
        return;
    S->phase[me] = FINISHING;
    AO_fetch_and_add1_full(&S->finished); /* pairs with all_finished's acquire */
    if (poll_until(ep, all_finished) < 0)
        return;
    S->phase[me] = DONE;
}

static void proc(int idx, void *arg)
{
    struct am_ep_opts o = {.claim = S->alg,
                           .shm = S->shm,
                           .packets = 2,
                           .bulk_blocks = 1,
                           .long_max = AM_MIN_LONG};
    am_ep_t *ep = NULL;
    me = idx;
    int rc = am_ep_create(S->name[me], &o, &ep);
    note(rc, "am_ep_create");
    if (ep) {
        am_set_handler(ep, H_REQ, on_req);
        am_set_handler(ep, H_REQB, on_reqb);
        am_set_handler(ep, H_REP, on_rep);
        am_set_handler(ep, H_REPB, on_repb);
        am_set_handler(ep, H_REQL, on_reql);
        am_set_handler(ep, H_REPL, on_repl);
    }
    tu_gate_wait(&S->gate); /* 1: every endpoint exists */
    for (int q = 0; ep && q < S->sh.procs; q++)
        if (q != me && (rc = am_ep_map(ep, (unsigned)q, S->name[q])) < 0) {
            note(rc, "am_ep_map");
            am_ep_destroy(ep);
            ep = NULL;
        }
    tu_gate_wait(&S->gate); /* 2: everybody has mapped everybody: go */
    if (ep)
        exchange(ep);
    tu_gate_wait(&S->gate); /* 3: nobody sends any more */
    if (ep)
        note(am_ep_destroy(ep), "am_ep_destroy");
}

static void run(const struct shape *sh, int combo)
{
    struct tu_combo c = tu_combo_of(combo);
    const char *alg = c.alg_name, *shm = c.backend_name, *t = sh->tag;
    char pfx[AM_NAME_MAX], first[128] = "";
    int P = sh->procs, stress = tu_stress_factor();
    S = tu_shared_alloc(sizeof *S);
    S->sh = *sh;
    S->min = sh->min * (unsigned)stress;
    S->secs = sh->secs * stress;
    S->alg = alg;
    S->shm = shm;
    for (int p = 0; p < P; p++)
        tu_name(S->name[p], AM_NAME_MAX, "%s-%s-%s-%d", t, alg, shm, p);
    tu_gate_init(&S->gate, (unsigned)P);
    double t0 = tu_now_s();
    S->deadline = t0 + (RUN_LIMIT_S - 3) * stress;
    int failed = tu_run_procs(P, proc, NULL, RUN_LIMIT_S * stress);
    double secs = tu_now_s() - t0;
    tu_name(pfx, sizeof pfx, "%s-%s-%s-", t, alg, shm);
    int left = tu_leftovers(pfx, 1, first, sizeof first);
    if (getenv("SHMAM_VERBOSE"))
        fprintf(stderr, "%s/%s %s: %.2f s, %lu requests\n", alg, shm, t, secs,
                sum(S->progress));

    char where[MAXP * 160] = "";
    int stuck = 0;
    for (int p = 0; p < P; p++) {
        stuck += S->phase[p] != DONE;
        snprintf(where + strlen(where), sizeof where - strlen(where),
                 " %d %s (%lu sent%s%s%s%s);", p, phase_names[S->phase[p]], S->progress[p],
                 S->rc[p] ? ", " : "", S->rc[p] ? S->what[p] : "", S->rc[p] ? ": " : "",
                 S->rc[p] ? am_strerror(S->rc[p]) : "");
    }
    ck_assert_msg(failed == 0 && stuck == 0,
                  "%s/%s %s: %d processes killed or crashed, %d unfinished after %.1f s "
                  "(deadlock?):%s",
                  alg, shm, t, failed, stuck, secs, where);
    for (int p = 0; p < P; p++) {
        ck_assert_msg(S->rc[p] == 0, "%s/%s %s: process %d: %s: %s", alg, shm, t, p,
                      S->what[p], am_strerror(S->rc[p]));
        ck_assert_msg(S->bad[p] == 0,
                      "%s/%s %s: process %d saw %lu bad messages; first: %s", alg, shm, t,
                      p, S->bad[p], S->first_bad[p]);
        ck_assert_msg(S->progress[p] >= S->min, "%s/%s %s: process %d sent only %lu", alg,
                      shm, t, p, S->progress[p]);
        /* The premise: every process met full queues and drained its own
         * through its backoff, not a test that never filled them. */
        ck_assert_msg(S->backoffs[p] > 0, "%s/%s %s: process %d never found a queue full",
                      alg, shm, t, p);
    }
    for (int p = 0; p < P; p++)
        for (int q = 0; q < P; q++) {
            ck_assert_msg(S->req[q][p] == S->sent[p][q],
                          "%s/%s %s: %d sent %lu requests to %d, which received %lu", alg,
                          shm, t, p, S->sent[p][q], q, S->req[q][p]);
            ck_assert_msg(S->rep[p][q] == S->sent[p][q],
                          "%s/%s %s: %d sent %lu requests to %d and got %lu replies", alg,
                          shm, t, p, S->sent[p][q], q, S->rep[p][q]);
        }
    ck_assert_msg(left == 0, "%s/%s %s: %d endpoint segment(s) left behind, e.g. %s", alg,
                  shm, t, left, first);
    tu_shared_free(S, sizeof *S);
}

static const struct shape four = {"p4", 4, 300, 1.0};
static const struct shape eight = {"p8", 8, 100, 0.4};

START_TEST(cyclic_full_queues_4)
{
    run(&four, _i);
}
END_TEST

START_TEST(cyclic_full_queues_8)
{
    run(&eight, _i);
}
END_TEST

static Suite *deadlock_suite(void)
{
    Suite *s = suite_create("deadlock");
    TCase *tc = tcase_create("4 processes");
    tcase_set_timeout(tc, RUN_LIMIT_S + 10);
    tcase_add_loop_test(tc, cyclic_full_queues_4, 0, tu_combos());
    suite_add_tcase(s, tc);
    tc = tcase_create("8 processes");
    tcase_set_timeout(tc, RUN_LIMIT_S + 10);
    tcase_add_loop_test(tc, cyclic_full_queues_8, 0, tu_combos());
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("dl");
    return tu_run_suite(deadlock_suite(), "check_deadlock");
}
