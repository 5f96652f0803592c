/*
 * loggp.c - LogGP parameters at every message size, by Hoefler's PRTT
 * method (netgauge's loggp pattern), for every claim algorithm and queue kind
 * of --algs in one job, interleaved; per-message timestamps for the
 * distributions of the round trip and of o_s; the signature sweep (o_s, o_r
 * and the time per message against the wait between sends, at one size).
 *
 *   shmamrun -n 2 --bind [-a ALG] build/bench/loggp [--algs LIST] [--iters N]
 *       [--rounds R] [--max-size B] [--sig-size B] [--quick]
 *       [--inject-send-ns D] [--inject-recv-ns D] [--selfcheck] [--header]
 *
 * A message of s bytes goes by the protocol the runtime has for s: a short
 * request (s = 0), am_request_bulk (to AM_MAX_BULK), am_request_long (to the
 * destination's long_max) or am_request_long_at into rank 1's region (above).
 * Rank 1's handler checks the message and copies its data out (what MPI_Recv
 * does), and replies to the last of each burst with s bytes (netgauge's
 * reply; rank 0's handler copies them out), or with none (the labelled 0-byte
 * variant).  Per size, round and algorithm (loggp.h), each PRTT the median of
 * its bursts: PRTT(1, 0, s) (and with the 0-byte reply), PRTT(n, 0, s), then
 * PRTT(n, d, s) with d = PRTT(1, 0, s) as netgauge runs it (rank 1 polling;
 * it times each poll: the second method of o_r, a poll that ran one message,
 * not the last, less an empty poll), then PRTT(n, d, s) again with rank 1
 * not polling: it waits (until lg_recv_at, no poll) before each message but
 * a burst's first and times the am_poll that runs it (o_r, netgauge's
 * wait-then-receive), while rank 0 times each send alone (o_s, the median over
 * the sends).  The fits (L, G, the protocol switches) and the LogGOPSim
 * export are the report's (scripts/report/loggp.py).  Method, rows and
 * checks: bench/README.md, "loggp".
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmam.h"
#include "common/am_algs.h"
#include "common/am_harness.h"
#include "common/loggp.h"
#include "common/measure.h"
#include "common/stat.h"

/* Requests to rank 1, then the reply and the result message to rank 0. */
enum { H_HELLO = 1, H_MSG, H_CTL, H_ACK, H_RESULT };
enum { CTL_USE, CTL_OR_BEGIN, CTL_WAIT_BEGIN, CTL_OR_END, CTL_INJECT, CTL_STOP };
/* What a message asks of rank 1: no reply, a 0-byte one, one of its size. */
enum { REPLY_NONE, REPLY_ZERO, REPLY_SIZE };
/* Figures of the signature sweep per delay (per size: loggp.h's LG_*). */
enum { W_T, W_OS, W_OR, W_WAIT, W_N };
#define WARM LG_MAX_ROUNDS /* the warm-up round's index */
#define SELF_D 2000        /* the self-check's injected wait, ns, if none is given */

static am_ep_t *ep;         /* the job's endpoint: barriers only */
static struct bm_algs algs; /* an endpoint per algorithm measured */
static am_ep_t *cur;        /* the endpoint in use, on both ranks */
static int rank, my_cpu = -1, peer_cpu = -1, pinned;
static unsigned yield_after = 256;
static long iters = 10000, rounds = 5, inj_send, inj_recv, max_size = 4L << 20, sig_size;
static int header, selfcheck_mode;
static const char *alg_list;
static double clk;     /* one clock read, ns */
static long busy_over; /* busy_ns's own overshoot, ns */
static size_t long_max, sizes[LG_MAX_SIZES];
static int nsizes;
static char *src,
    *dst; /* max_size bytes each: rank 0 sends from src, rank 1 copies to dst */
/* [algorithm][round][size][LG_*] and [algorithm][round][delay][W_*]. */
static double (*fig)[LG_MAX_ROUNDS + 1][LG_MAX_SIZES][LG_NFIG];
static double sig[BM_MAX_ALGS][LG_MAX_ROUNDS + 1][LG_ND][W_N];
/* Per-message samples (ns) at sig_size: [algorithm][round * count + i]. */
static double *rtt_smp[BM_MAX_ALGS], *os_smp[BM_MAX_ALGS];
static long rtt_m, os_m;                      /* samples per round of each */
static double *scratch, *scratch2, *scratch3; /* bursts, a copy, sends' times */
static unsigned long errors;
/* Rank 0: messages sent, acks wanted and run, results. */
static unsigned long sent, acks_due, acks, results;
static size_t ack_len; /* the bytes the next ack carries */
/* Per algorithm, rank 1's waited receives: those that found no message yet; all. */
static unsigned long late[BM_MAX_ALGS], waited_n[BM_MAX_ALGS];
static int cur_a; /* the index of cur */
static uint32_t result[5];
static int64_t spent_ns; /* injected waits' time actually spent, and how many */
static long spent_n;
/* Rank 1: messages run, polls timed (o_r), state. */
static unsigned long seen;
static int timing, result_due, stop, replied, greeted, burst_k;
static long n0, n1, period, or_n, or_late;
static int64_t burst_t1; /* when the burst's first message ran */
static double *or_smp;   /* the waited receives' times, ns */
static int64_t sum0, sum1, rspent_ns;
static long rspent_n;

/* A busy wait of d ns inside a timed region; its time spent into spent_ns. */
static void busy_ns(long d, int64_t *spent, long *count)
{
    if (d <= 0)
        return;
    int64_t t0 = bm_now_ns(), t;
    for (int64_t end = t0 + d - busy_over; (t = bm_now_ns()) < end;)
        ;
    *spent += t - t0 + llround(clk), ++*count;
}

/* A wait of d ns after t0 (a clock read just taken); the time from t0 to its
 * last read. */
static int64_t wait_from(int64_t t0, long d)
{
    int64_t t = t0;
    while (d > 0 && (t = bm_now_ns()) - t0 < d)
        ;
    return t - t0;
}

static void calibrate(void)
{
    static double v[201];
    int64_t s = 0;
    long n = 0;
    clk = bm_clock_cost_ns();
    for (int i = 0; i < 201; i++) {
        int64_t t0 = bm_now_ns();
        busy_ns(2000, &s, &n);
        v[i] = (double)(bm_now_ns() - t0) - clk - 2000;
    }
    busy_over = lround(bm_median(v, 201));
}

/* ---- rank 1 ---- */

static void on_hello(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    peer_cpu = nargs == 1 ? (int)a[0] - 1 : -1;
    greeted = 1;
    uint32_t r[2] = {0, (uint32_t)(my_cpu + 1)};
    bm_check(am_reply(t, H_ACK, r, 2), "am_reply");
}

/* (seq, length, reply?): check it, copy the data out, reply if asked. */
static void on_msg(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 3 || a[0] != seen + 1 || a[1] != len ||
        (len >= 8 && !bm_stamped(d, len, a[0])))
        errors++;
    seen++;
    busy_ns(inj_recv, &rspent_ns, &rspent_n);
    if (len)
        memcpy(dst, d, len);
    if (a[2] == REPLY_NONE)
        return;
    replied = 1;
    int rc;
    if (len == 0 || a[2] == REPLY_ZERO)
        rc = am_reply(t, H_ACK, a, 1);
    else if (len <= AM_MAX_BULK)
        rc = am_reply_bulk(t, H_ACK, dst, len, a, 1);
    else if (len <= long_max)
        rc = am_reply_long(t, H_ACK, dst, len, a, 1);
    else
        rc = am_reply_long_at(t, H_ACK, dst, len, 0, a, 1);
    bm_check(rc, "a reply");
}

/* (CTL_OR_BEGIN, 0), (CTL_WAIT_BEGIN, wait in ns), (CTL_OR_END, 0),
 * (CTL_INJECT, ns in the handler), (CTL_USE, algorithm), (CTL_STOP, 0). */
static void on_ctl(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 2)
        errors++;
    else if (a[0] == CTL_OR_BEGIN || a[0] == CTL_WAIT_BEGIN)
        timing = a[0] == CTL_OR_BEGIN ? 1 : 2, period = a[1], n0 = n1 = 0, sum0 = sum1 = 0,
        rspent_ns = 0, rspent_n = 0, or_n = or_late = 0, burst_k = 0;
    else if (a[0] == CTL_OR_END)
        result_due = 1;
    else if (a[0] == CTL_INJECT)
        inj_recv = a[1];
    else if (a[0] == CTL_USE && a[1] < (uint32_t)algs.n)
        cur = algs.ep[a[1]];
    else if (a[0] == CTL_STOP)
        stop = 1;
    else
        errors++;
}

/* One timed poll: empty ones and those that ran one message without a reply. */
static void timed_poll(unsigned *spins)
{
    unsigned long before = seen;
    replied = 0;
    int64_t t0 = bm_now_ns();
    int n = bm_poll(cur);
    int64_t dt = bm_now_ns() - t0;
    if (n == 0) {
        sum0 += dt, n0++;
        bm_relax(spins, yield_after);
    } else if (n == 1 && seen == before + 1 && !replied)
        sum1 += dt, n1++;
}

/* o_r by waiting, then receiving (netgauge's): a burst's first message is
 * polled for; before each later one rank 1 waits with no poll until
 * lg_recv_at() (the sender's period rank 0 gave), then times the am_poll
 * that runs it.  A poll that finds nothing yet counts as
 * late (its message is then polled for, untimed); one that runs two is not a
 * sample. */
static void waited_poll(unsigned *spins)
{
    unsigned long before = seen;
    replied = 0;
    if (burst_k == 0) {
        if (bm_poll(cur) == 0)
            bm_relax(spins, yield_after);
        else if (seen > before && !replied)
            burst_t1 = bm_now_ns(), burst_k = 1;
        return;
    }
    for (int64_t at = lg_recv_at(burst_t1, burst_k, period); bm_now_ns() < at;)
        ;
    int64_t t0 = bm_now_ns();
    int n = bm_poll(cur);
    int64_t dt = bm_now_ns() - t0;
    if (n == 1 && seen == before + 1 && or_n < iters)
        or_smp[or_n++] = (double)dt - clk;
    else if (n == 0)
        for (or_late++; seen == before && timing;)
            if (bm_poll(cur) == 0)
                bm_relax(spins, yield_after);
    burst_k = replied ? 0 : burst_k + 1;
}

/* To rank 0: 16 x o_r (ns: the median waited receive, or the mean
 * one-message poll less the mean empty one), its samples, the late receives,
 * 16 x the mean injected wait (ns), the messages run. */
static void send_result(void)
{
    double m1 = n1 ? (double)sum1 / n1 : 0, m0 = n0 ? (double)sum0 / n0 : 0;
    double w = rspent_n ? (double)rspent_ns / rspent_n : 0;
    long k = timing == 2 ? or_n : n1;
    double o = timing == 2 ? lg_median(or_smp, or_n) : m1 - m0;
    uint32_t r[5] = {(uint32_t)fmax(0, fmin(o * 16, 4e9)), (uint32_t)k, (uint32_t)or_late,
                     (uint32_t)fmin(w * 16, 4e9), (uint32_t)seen};
    bm_check(am_request(cur, 0, H_RESULT, r, 5), "am_request");
}

static void serve(void)
{
    for (unsigned spins = 0; !stop;) {
        if (timing == 2)
            waited_poll(&spins);
        else if (timing)
            timed_poll(&spins);
        else if (bm_poll(cur) == 0)
            bm_relax(&spins, yield_after);
        if (result_due)
            result_due = 0, send_result(), timing = 0;
    }
    uint32_t r[5] = {(uint32_t)seen, (uint32_t)errors, (uint32_t)bm_bad_packets(ep, &algs),
                     0, 0};
    bm_check(am_request(cur, 0, H_RESULT, r, 5), "am_request");
}

/* ---- rank 0 ---- */

static void on_ack(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs < 1 || (nargs == 1 && (a[0] != (uint32_t)sent || len != ack_len)))
        errors++;
    if (len)
        memcpy(dst, d, len);
    if (nargs == 2)
        peer_cpu = (int)a[1] - 1;
    acks++;
}

static void on_result(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 5)
        bm_die("bad result message", 0);
    memcpy(result, a, sizeof result);
    results++;
}

static void await_acks(void)
{
    bm_await(cur, yield_after, &acks, acks_due, "an ack from rank 1");
}

static void control(uint32_t what, uint32_t arg)
{
    uint32_t a[2] = {what, arg};
    bm_check(am_request(cur, 1, H_CTL, a, 2), "am_request");
}

/* Message i of a burst, s bytes, by the protocol for s; the last one of a
 * burst asks for a reply (REPLY_*).  long_at writes burst slot i of rank 1's
 * region. */
static void send_msg(size_t s, int i, int reply)
{
    uint32_t a[3] = {(uint32_t)++sent, (uint32_t)s, (uint32_t)reply};
    acks_due += reply != REPLY_NONE;
    if (reply != REPLY_NONE)
        ack_len = reply == REPLY_SIZE ? s : 0;
    if (s >= 8)
        bm_stamp(src, s, a[0]);
    int rc;
    if (s == 0)
        rc = am_request(cur, 1, H_MSG, a, 3);
    else if (s <= AM_MAX_BULK)
        rc = am_request_bulk(cur, 1, H_MSG, src, s, a, 3);
    else if (s <= long_max)
        rc = am_request_long(cur, 1, H_MSG, src, s, a, 3);
    else
        rc = am_request_long_at(cur, 1, H_MSG, src, s, (size_t)i * ((s + 63) & ~(size_t)63),
                                a, 3);
    bm_check(rc, "a send");
}

/* What one run of PRTT(n, d, s) gives: the median burst, the median timed
 * send, the mean wait, ns. */
struct prtt {
    double t, os, wait;
};

/* The median of v[0..n-1], v left as it was (samples kept in order). */
static double median_of(const double *v, long n)
{
    memcpy(scratch2, v, (size_t)n * sizeof *v);
    return lg_median(scratch2, n);
}

/* `bursts` x PRTT(n, d, s), the last message of each asking for a reply of
 * `reply` (REPLY_ZERO or REPLY_SIZE); each burst's time into rtt_out if not
 * NULL; if os_out, each send timed alone into it.  --inject-send-ns waits
 * inside the timed send. */
static struct prtt prtt(int n, long d, size_t s, int reply, long bursts, double *rtt_out,
                        double *os_out)
{
    int64_t waited = 0;
    double *trip = rtt_out ? rtt_out : scratch;
    for (long b = 0; b < bursts; b++) {
        int64_t t0 = bm_now_ns();
        for (int i = 0; i < n; i++) {
            int64_t ta = os_out ? bm_now_ns() : 0;
            busy_ns(inj_send, &spent_ns, &spent_n);
            send_msg(s, i, i == n - 1 ? reply : REPLY_NONE);
            int64_t tb = bm_now_ns();
            if (os_out)
                os_out[b * n + i] = (double)(tb - ta) - clk;
            if (i < n - 1)
                waited += wait_from(tb, d);
        }
        await_acks();
        trip[b] = (double)(bm_now_ns() - t0) - clk;
    }
    struct prtt r = {median_of(trip, bursts), os_out ? median_of(os_out, bursts * n) : NAN,
                     n > 1 ? (double)waited / ((double)bursts * (n - 1)) : 0};
    return r;
}

/* PRTT(n, d, s) with rank 1 timing its receives: polling and timing each
 * poll (period 0), or waiting before each by the sender's period (ns,
 * lg_recv_at), each send timed into os (n x bursts); *or_ns its o_r (ns). */
static struct prtt prtt_or(int n, long d, size_t s, long bursts, long period_ns, double *os,
                           double *or_ns)
{
    int waits = period_ns > 0;
    control(waits ? CTL_WAIT_BEGIN : CTL_OR_BEGIN, (uint32_t)period_ns);
    struct prtt p = prtt(n, d, s, REPLY_SIZE, bursts, NULL, os);
    control(CTL_OR_END, 0);
    bm_await(cur, yield_after, &results, results + 1, "rank 1's o_r");
    *or_ns = result[1] ? result[0] / 16.0 : NAN;
    if (waits)
        late[cur_a] += result[2], waited_n[cur_a] += result[1] + result[2];
    return p;
}

/* Move both ranks to algorithm a's endpoints (after every ack), then warm
 * them with a few untimed round trips. */
static void use(int a)
{
    if (cur == algs.ep[a])
        return;
    await_acks();
    control(CTL_USE, (uint32_t)a);
    cur = algs.ep[a], cur_a = a;
    prtt(1, 0, 0, REPLY_SIZE, 16, NULL, NULL);
}

/* Round k's figures of size index i for algorithm a (the counts of a round
 * of `per` operations), us.  Samples at sig_size in measured rounds. */
static void cell(int a, int k, int i, long per)
{
    size_t s = sizes[i];
    long m = lg_count(s, per, 4), bursts = m / LG_N > 2 ? m / LG_N : 2;
    int keep = s == (size_t)sig_size && k != WARM;
    double *f = fig[a][k][i], or_poll, or_ns;
    control(CTL_INJECT, (uint32_t)inj_recv);
    struct prtt p1 =
        prtt(1, 0, s, REPLY_SIZE, m, keep ? rtt_smp[a] + k * rtt_m : NULL, NULL);
    struct prtt p0 = prtt(1, 0, s, REPLY_ZERO, m, NULL, NULL);
    struct prtt pn = prtt(LG_N, 0, s, REPLY_SIZE, bursts, NULL, NULL);
    long d =
        lround(p1.t); /* netgauge's d, the median: a preempted trip does not stretch it */
    struct prtt pd = prtt_or(LG_N, d, s, bursts, 0, NULL, &or_poll);
    long p = lround((pd.t - p1.t) / (LG_N - 1)); /* the sender's period, d + o_s */
    struct prtt pw = prtt_or(LG_N, d, s, bursts, p > d ? p : d,
                             keep ? os_smp[a] + k * os_m : scratch3, &or_ns);
    f[LG_RTT] = p1.t / 1e3;
    f[LG_RTT0] = p0.t / 1e3;
    f[LG_PN] = pn.t / 1e3;
    f[LG_PD] = pd.t / 1e3;
    f[LG_G] = (pn.t - p1.t) / (LG_N - 1) / 1e3;
    f[LG_OS] = pw.os / 1e3;
    f[LG_OSP] = ((pd.t - p1.t) / (LG_N - 1) - (double)d) / 1e3;
    f[LG_OR] = or_ns / 1e3;
    f[LG_ORP] = or_poll / 1e3;
}

/* Round k's signature sweep at sig_size for algorithm a. */
static void sweep(int a, int k, long per)
{
    long bursts = lg_count((size_t)sig_size, per, 4 * LG_SIG_N) / LG_SIG_N;
    struct prtt p1 = prtt(1, 0, (size_t)sig_size, REPLY_SIZE, bursts * 4, NULL, NULL);
    control(CTL_INJECT, (uint32_t)inj_recv);
    for (int j = 0; j < LG_ND; j++) {
        double or_ns, *w = sig[a][k][j];
        struct prtt p =
            prtt_or(LG_SIG_N, lg_delays[j], (size_t)sig_size, bursts, 0, scratch3, &or_ns);
        w[W_T] = (p.t - p1.t) / (LG_SIG_N - 1) / 1e3;
        w[W_OS] = p.os / 1e3;
        w[W_OR] = or_ns / 1e3;
        w[W_WAIT] = p.wait / 1e3;
    }
}

/* Round k: every size, then the sweep, each for every algorithm in ABBA order. */
static void run_round(int k, long per)
{
    for (int i = 0; i < nsizes; i++)
        for (int j = 0; j < algs.n; j++) {
            int a = bm_abba(k, j, algs.n);
            use(a);
            cell(a, k, i, per);
        }
    for (int j = 0; j < algs.n; j++) {
        int a = bm_abba(k, j, algs.n);
        use(a);
        sweep(a, k, per);
    }
}

static struct bm_row row_of(const char *bench)
{
    const char *shm = getenv("SHMAM_SHM");
    struct bm_row r = {stdout, bench, shm && *shm ? shm : "posix", am_nprocs(), pinned};
    return r;
}

/* The median over rounds of sig[a][*][j][m], of the rounds that have one:
 * no row if none has. */
static struct bm_stat of_sweep(int a, int j, int m)
{
    unsigned char all[LG_MAX_ROUNDS + 1];
    memset(all, 1, sizeof all);
    return lg_of_rounds(&sig[a][0][j][m], (int)rounds, sizeof sig[a][0] / sizeof(double),
                        all);
}

/* The configured limits, then per algorithm every size's figures, the
 * sweep's and the quantiles at sig_size. */
static void report(long per)
{
    static const char *wname[W_N] = {"sig_t", "sig_os", "sig_or", "sig_wait"};
    struct bm_row row = row_of("loggp");
    struct bm_stat one = {0, 0, 0, 1};
    char name[48];
    for (int a = 0; a < algs.n; a++) {
        const char *al = algs.name[a];
        one.median = one.lo = one.hi = AM_MAX_BULK;
        bm_print(&row, al, 1, "limit_bulk", one, "bytes", 0);
        one.median = one.lo = one.hi = (double)long_max;
        bm_print(&row, al, 1, "limit_long", one, "bytes", 0);
        one.median = one.lo = one.hi = LG_N;
        bm_print(&row, al, 1, "prtt_n", one, "msgs", 0);
        one.median = one.lo = one.hi = (double)sig_size;
        bm_print(&row, al, 1, "sig_size", one, "bytes", 0);
        int dropped = 0;
        for (int i = 0; i < nsizes; i++) {
            long m = lg_count(sizes[i], per, 4) * rounds;
            size_t stride = sizeof fig[a][0] / sizeof(double);
            unsigned char keep[LG_MAX_ROUNDS + 1];
            memset(keep, 1, sizeof keep);
            dropped += lg_drop_rounds(stdout, al, sizes[i], fig[a][0][i], (int)rounds,
                                      stride, keep);
            for (int q = 0; q < LG_NFIG; q++) {
                snprintf(name, sizeof name, "%s_%zu", lg_fig_name[q], sizes[i]);
                bm_print(&row, al, m, name,
                         lg_of_rounds(&fig[a][0][i][q], (int)rounds, stride, keep), "us",
                         4);
            }
        }
        one.median = one.lo = one.hi = dropped;
        bm_print(&row, al, rounds * nsizes, "rounds_dropped", one, "rounds", 0);
        one.median = one.lo = one.hi =
            waited_n[a] ? 100.0 * (double)late[a] / (double)waited_n[a] : 0;
        bm_print(&row, al, (long)waited_n[a], "or_late", one, "%", 2);
        for (int j = 0; j < LG_ND; j++)
            for (int q = 0; q < W_N; q++) {
                snprintf(name, sizeof name, "%s_%ld", wname[q], lg_delays[j]);
                bm_print(&row, al, per * rounds, name, of_sweep(a, j, q), "us", 4);
            }
        for (int q = 0; q < LG_NQ; q++) {
            struct bm_stat r = lg_quantile(rtt_smp[a], (int)rounds, rtt_m, lg_q[q]);
            struct bm_stat o = lg_quantile(os_smp[a], (int)rounds, os_m, lg_q[q]);
            r.median /= 1e3, r.lo /= 1e3, r.hi /= 1e3, o.median /= 1e3, o.lo /= 1e3,
                o.hi /= 1e3;
            snprintf(name, sizeof name, "rtt_%s", lg_q_name[q]);
            bm_print(&row, al, rtt_m * rounds, name, r, "us", 4);
            snprintf(name, sizeof name, "os_%s", lg_q_name[q]);
            bm_print(&row, al, os_m * rounds, name, o, "us", 4);
        }
    }
}

/* The self-check's sizes: one or two per protocol (short 0; bulk 64 and
 * AM_MAX_BULK; long the size after it and 64 KB; long_at the size after
 * long_max), those of the run's sizes. */
static void keep_selfcheck_sizes(void)
{
    const size_t want[] = {0, 64, AM_MAX_BULK, AM_MAX_BULK + 1, 65536, long_max + 1};
    int n = 0;
    for (int i = 0; i < nsizes; i++)
        for (size_t w = 0; w < sizeof want / sizeof want[0]; w++)
            if (sizes[i] == want[w]) {
                sizes[n++] = sizes[i];
                break;
            }
    nsizes = n;
}

/* The self-check: per round, size and algorithm, the cell with no injected
 * wait and with D in the send and in rank 1's handler (in ABBA order): the
 * growth of o_s, o_r and the round trip, and the waits' time spent. */
enum { G_OS, G_OR, G_RTT, G_SEND, G_RECV, G_N };
static double grow[BM_MAX_ALGS][LG_MAX_SIZES][G_N][LG_MAX_ROUNDS];
static long d_asked[2]; /* the waits injected in the send and in the handler, ns */

static void selfcheck(long per)
{
    long d_send = inj_send ? inj_send : SELF_D, d_recv = inj_recv ? inj_recv : SELF_D;
    d_asked[0] = d_send, d_asked[1] = d_recv;
    for (int k = 0; k < rounds; k++)
        for (int i = 0; i < nsizes; i++)
            for (int j = 0; j < algs.n; j++) {
                int a = bm_abba(k, j, algs.n);
                double f[2][LG_NFIG], *g[G_N];
                for (int q = 0; q < G_N; q++)
                    g[q] = &grow[a][i][q][k];
                use(a);
                for (int h = 0; h < 2; h++) {
                    int on = h ^ (k % 2);
                    inj_send = on ? d_send : 0, inj_recv = on ? d_recv : 0;
                    spent_ns = 0, spent_n = 0;
                    cell(a, WARM, i, per);
                    memcpy(f[on], fig[a][WARM][i], sizeof f[on]);
                    if (on)
                        *g[G_SEND] = spent_n ? (double)spent_ns / spent_n : 0,
                        *g[G_RECV] = result[3] / 16.0;
                }
                *g[G_OS] = (f[1][LG_OS] - f[0][LG_OS]) * 1e3;
                *g[G_OR] = (f[1][LG_OR] - f[0][LG_OR]) * 1e3;
                *g[G_RTT] = (f[1][LG_RTT] - f[0][LG_RTT]) * 1e3;
            }
    inj_send = inj_recv = 0;
}

static void selfcheck_report(long per)
{
    static const char *gname[G_N] = {"os_grow", "or_grow", "rtt_grow", "send_spent",
                                     "recv_spent"};
    struct bm_row row = row_of("loggp_selfcheck");
    struct bm_stat asked = {0, 0, 0, 1};
    unsigned char all[LG_MAX_ROUNDS + 1]; /* a round without a figure (NaN) is left out */
    memset(all, 1, sizeof all);
    char name[48];
    for (int a = 0; a < algs.n; a++) {
        asked.median = asked.lo = asked.hi = (double)d_asked[0];
        bm_print(&row, algs.name[a], 1, "send_injected", asked, "ns", 0);
        asked.median = asked.lo = asked.hi = (double)d_asked[1];
        bm_print(&row, algs.name[a], 1, "recv_injected", asked, "ns", 0);
        for (int i = 0; i < nsizes; i++)
            for (int q = 0; q < G_N; q++) {
                snprintf(name, sizeof name, "%s_%zu", gname[q], sizes[i]);
                bm_print(&row, algs.name[a], lg_count(sizes[i], per, 4) * rounds, name,
                         lg_of_rounds(grow[a][i][q], (int)rounds, 1, all), "ns", 0);
            }
    }
}

/* Stop rank 1 and compare counts; nonzero if anything is off. */
static int final_check(void)
{
    await_acks();
    control(CTL_STOP, 0);
    bm_await(cur, yield_after, &results, results + 1, "rank 1's counts");
    unsigned long bad = bm_bad_packets(ep, &algs) + result[2];
    if (result[0] == (uint32_t)sent && acks == acks_due && !errors && !result[1] && !bad)
        return 0;
    fprintf(stderr,
            "loggp: FAILED: %lu messages sent, rank 1 ran %u; %lu acks of %lu; %lu + %u "
            "out of sequence or bad data, %lu bad packets\n",
            sent, result[0], acks, acks_due, errors, result[1], bad);
    return 1;
}

static int requester(void)
{
    long per = iters / rounds;
    rtt_m = lg_count((size_t)sig_size, per, 4);
    scratch = calloc((size_t)per + 4, sizeof(double));
    scratch2 = calloc((size_t)per + 4, sizeof(double));
    scratch3 = calloc((size_t)per + 4, sizeof(double));
    if (!scratch || !scratch2 || !scratch3)
        bm_die("out of memory for the samples", 0);
    if (selfcheck_mode)
        keep_selfcheck_sizes();
    os_m = (rtt_m / LG_N > 2 ? rtt_m / LG_N : 2) * LG_N; /* cell's bursts x n */
    for (int a = 0; a < algs.n; a++) {
        rtt_smp[a] = calloc((size_t)(rtt_m * rounds), sizeof(double));
        os_smp[a] = calloc((size_t)(os_m * rounds), sizeof(double));
        if (!rtt_smp[a] || !os_smp[a])
            bm_die("out of memory for the samples", 0);
    }
    run_round(WARM, per / 10 > 16 ? per / 10 : 16);
    if (selfcheck_mode)
        selfcheck(per);
    for (int k = 0; !selfcheck_mode && k < rounds; k++)
        run_round(k, per);
    if (final_check())
        return 1;
    if (header)
        bm_print_header(stdout);
    if (selfcheck_mode)
        selfcheck_report(per);
    else
        report(per);
    return 0;
}

static const char usage_text[] =
    "usage: shmamrun -n 2 --bind [-a ALG] loggp [--algs ALG,...|all|channels] [--iters N] "
    "[--rounds R]\n       [--max-size BYTES] [--sig-size BYTES] [--quick] "
    "[--inject-send-ns D] [--inject-recv-ns D]\n       [--selfcheck] [--header]\n";

static void parse(int argc, char **argv)
{
    static const struct option opts[] = {{"iters", 1, NULL, 1},
                                         {"rounds", 1, NULL, 2},
                                         {"inject-send-ns", 1, NULL, 3},
                                         {"inject-recv-ns", 1, NULL, 4},
                                         {"max-size", 1, NULL, 5},
                                         {"sig-size", 1, NULL, 6},
                                         {"quick", 0, NULL, 7},
                                         {"algs", 1, NULL, 8},
                                         {"selfcheck", 0, &selfcheck_mode, 1},
                                         {"header", 0, &header, 1},
                                         {NULL, 0, NULL, 0}};
    long *val[] = {&iters, &rounds, &inj_send, &inj_recv, &max_size, &sig_size};
    const long min[] = {100, 1, 0, 0, 8, 0};
    for (int ch; (ch = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (ch >= 1 && ch <= 6)
            *val[ch - 1] = bm_opt_long(optarg, min[ch - 1], bm_bad_line);
        else if (ch == 7)
            iters = 1500, rounds = 3;
        else if (ch == 8)
            alg_list = optarg;
        else if (ch != 0)
            bm_bad_line();
    }
    if (optind < argc || rounds >= LG_MAX_ROUNDS || iters / rounds < 4 * LG_SIG_N ||
        max_size > (1L << 30) || sig_size > max_size) {
        fprintf(stderr,
                "loggp: need rounds < %d, iters >= %d x rounds, sig-size <= "
                "max-size <= 1 GiB\n",
                LG_MAX_ROUNDS, 4 * LG_SIG_N);
        exit(2);
    }
}

/* An endpoint per algorithm with every handler; if any size is above
 * long_max, a region for long_at on each rank: LG_N slots of the largest size
 * on rank 1, one (the reply) on rank 0. */
static void open_endpoints(void)
{
    static const struct bm_handler h[] = {{H_HELLO, on_hello},
                                          {H_MSG, on_msg},
                                          {H_CTL, on_ctl},
                                          {H_ACK, on_ack},
                                          {H_RESULT, on_result}};
    if (bm_algs_parse(alg_list ? alg_list : bm_algs_name_of(ep), &algs) != 0)
        exit(2);
    bm_check(bm_algs_open(ep, &algs, h, (int)(sizeof h / sizeof h[0])),
             "cannot make the endpoints per algorithm");
    cur = algs.ep[0];
    long_max = am_ep_long_max(cur);
    size_t lim[2] = {AM_MAX_BULK, long_max};
    nsizes = lg_sizes((size_t)max_size, lim, 2, sizes);
    size_t slot = ((size_t)max_size + 63) & ~(size_t)63;
    size_t bytes = rank == 1 ? LG_N * slot : slot;
    for (int a = 0; (size_t)max_size > long_max && a < algs.n; a++) {
        void *base;
        bm_check(am_region_create(algs.ep[a], bytes, &base), "am_region_create");
        memset(base, 0, bytes); /* every page mapped before timing */
    }
    bm_check(am_barrier(ep), "am_barrier");
}

/* Both ranks learn both CPUs and choose how to spin (am_harness.h). */
static void hello(void)
{
    my_cpu = bm_pinned_cpu();
    if (rank == 0) {
        uint32_t a = (uint32_t)(my_cpu + 1);
        acks_due++;
        bm_check(am_request(cur, 1, H_HELLO, &a, 1), "am_request");
        await_acks();
    } else
        while (!greeted && bm_poll(cur) == 0)
            bm_relax(&(unsigned){0}, yield_after);
    bm_check(am_barrier(ep), "am_barrier");
    pinned = bm_pinned_apart(my_cpu, peer_cpu);
    yield_after = bm_yield_after(my_cpu, peer_cpu);
}

int main(int argc, char **argv)
{
    bm_program("loggp", usage_text, argc, argv);
    ep = bm_am_init("loggp", &argc, &argv);
    rank = am_rank();
    parse(argc, argv);
    if (am_nprocs() != 2)
        bm_die("run me with exactly two ranks (shmamrun -n 2)", 0);
    open_endpoints();
    src = malloc((size_t)max_size), dst = malloc((size_t)max_size);
    fig = calloc(BM_MAX_ALGS, sizeof *fig);
    or_smp = calloc((size_t)iters, sizeof *or_smp);
    if (!src || !dst || !fig || !or_smp)
        bm_die("out of memory", 0);
    memset(src, 0x5a, (size_t)max_size);
    memset(dst, 0xa5, (size_t)max_size);
    calibrate();
    hello();
    int fail = rank == 0 ? requester() : (serve(), 0);
    fflush(stdout);
    bm_algs_close(ep, &algs);
    bm_check(am_finalize(ep), "am_finalize");
    return fail;
}
