/*
 * logp.c - LogP (os, or, g, L), round trip and bulk bandwidth of two endpoints,
 * Culler-style, as in Table 1 of Lumetta & Culler (1998).
 *
 *   shmamrun -n 2 --bind -a ALG build/bench/logp [--iters N] [--rounds R] [--quick]
 *       [--inject-send-ns D] [--inject-recv-ns D] [--selfcheck] [--header]
 *
 * Rank 0 requests; rank 1 busy-polls (am_poll) and replies to each request with
 * one short reply.  Clock: CLOCK_MONOTONIC.  R rounds (default 5, after a warmup
 * round at a tenth of the counts) each run every phase below, so all metrics see
 * the same machine state.  A round's figure is a median, because a pinned rank
 * of this shared machine is still preempted for milliseconds now and then, which
 * ruins a mean but only a sample or two of a median; a row gives the median over
 * the rounds and, as spread, the lowest-highest round.  N = --iters (20000).
 *   os   rank 0 times a burst of M = 8 requests (never stalls: a queue holds 128)
 *        and divides by M; it drains the replies after the timed region.  Median
 *        over N/R/M bursts.
 *   or   timed on rank 1: rank 0 sends N/R/2 one-way requests, each after a busy
 *        4 us + 2 x inject-recv so that a poll finds one; rank 1 times every
 *        am_poll, and or = median(polls that ran exactly one of them) - median(its
 *        last 4096 empty polls); the clock's cost cancels.  (The poll-timing
 *        method; the send-then-delay sweep is not done.)  Unpinned, rank 0 yields
 *        after each wait in case rank 1 shares its CPU.  Repeated (up to 5 times)
 *        if preemptions left at most a tenth of the polls with one message.
 *   g    a stream of N/2 requests, one am_poll after each send (replies drained as
 *        they come; a full queue blocks the send): the whole stream's time per
 *        message after its first quarter (queue filling up).  The requester
 *        pays a reply per request, so g >= os + or when overheads dominate, and
 *        less where one poll runs several replies; compare with os_plus_or.
 *   rtt  N/R round trips, rank 0 polling until the reply has run; median of
 *        32-trip batch means.  L = rtt/2 - os - or per round, not clamped
 *        (negative: the overheads overlap, as in the paper).
 *   bulk for n = 64 B ... 8 KB, a stream of N/R/4 am_request_bulk of n bytes, as g;
 *        the handler checks the sequence number stamped in the first and last
 *        word, copies the data to a private buffer (where an application keeps
 *        it) and replies.  t(n) timed as g; least squares t = a + G n over the
 *        sizes; bulk_invG_MBps = 1/G, bulk_peak_MBps = 8192 / t(8192).
 *   memcpy  the receiver's copy alone: N/R/8 times per size, rank 1 answers a
 *        request with a bulk reply of n bytes, i.e. writes an 8 KB block of rank
 *        0's reply queue; rank 0's handler times one memcpy of it (lines another
 *        core has just written) into the same private buffer, less one clock read.
 *        bulk_vs_memcpy = bulk_peak_MBps / memcpy_MBps_8192.
 * --inject-send-ns D busy-waits D ns before every am_request of os, g and rtt
 * (inside the timed region: part of the send); --inject-recv-ns D in rank 1's
 * handlers.  The wait loop's own overshoot is measured at start and taken off.
 * --selfcheck runs, per round, os and or with D = 0 and with D = 2000 and prints
 * the growth (median over rounds of the per-round difference); PASS within 10 %.
 *
 * Checks: requests that want a reply carry one sequence number, checked by rank 1
 * and again in the reply by rank 0; one-way requests carry another; bulk data
 * and copies are checked by their stamps; rank 1 sends its counts at the end.
 * Any mismatch, corrupt packet, or 10 s without an awaited reply exits nonzero.
 * Rows: bench,impl,shm,procs,pinned,iters,metric,value,unit,spread.
 */
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shmam.h"
#include "common/measure.h"

/* Requests to rank 1, then the replies and the result message to rank 0. */
enum { H_HELLO = 1, H_PING, H_OR, H_CTL, H_BULK, H_FILL, H_PONG, H_FILLED, H_RESULT };
enum { CTL_OR_BEGIN, CTL_OR_END, CTL_STOP };
enum { BURST = 8, BATCH = 32, NSIZES = 8, MAX_ROUNDS = 51, NEMPTY = 4096 };
/* Metrics in the order of the rows; bulk_t_<n> and memcpy_MBps_<n> per size. */
enum { M_OS, M_OR, M_G, M_RTT, M_L, M_OSOR, M_BT, M_BG = M_BT + NSIZES, M_BPEAK };
enum { M_BINVG = M_BPEAK + 1, M_MC, M_RATIO = M_MC + NSIZES, M_N };

struct counts {
    long os_bursts, or_n, g_len, rtt_n, bulk_n, cp_n;
};
struct metric {
    char name[32];
    const char *unit;
    int prec;
    long iters;
    double v[MAX_ROUNDS + 1]; /* one per round, then the warmup round's */
};

static am_ep_t *ep;
static int rank, my_cpu = -1, peer_cpu = -1, pinned; /* CPUs: -1 if not pinned to one */
static long iters = 20000, rounds = 5, inj_send, inj_recv;
static int header, selfcheck_mode;
static unsigned yield_after;
static long busy_over;  /* busy_ns's own overshoot, in ns */
static double *scratch; /* samples of one phase */
static char src[AM_MAX_BULK], dst[AM_MAX_BULK];
static const size_t sizes[NSIZES] = {64, 128, 256, 512, 1024, 2048, 4096, 8192};
static unsigned long errors; /* messages out of sequence, on either rank */
/* Rank 0: replied requests sent, replies run, one-way H_OR sent, H_RESULTs. */
static uint32_t sent, replies, oneway, result[4], results;
static unsigned long cp_n, cp_bad;
/* Rank 1: requests run; the or phase's timed polls. */
static uint32_t req_seen, or_seen;
static int timing, result_due, stop;
static long or_inject, n0, n1, one_max;
static double *empty, *one;

static void die(const char *what, int err)
{
    fprintf(stderr, "logp: rank %d: %s%s%s\n", rank, what, err ? ": " : "",
            err ? am_strerror(err) : "");
    exit(1);
}

static void check(int rc, const char *what)
{
    if (rc < 0)
        die(what, rc);
}

static inline int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void busy_ns(long d)
{
    if (d > 0)
        for (int64_t end = now_ns() + d - busy_over; now_ns() < end;)
            ;
}

static double median(double *v, long n)
{
    if (n <= 0)
        die("median of no samples", 0);
    return bm_median(v, n);
}

/* The cost of one clock read (ns); sets busy_ns's overshoot beyond the request. */
static double calibrate(void)
{
    for (int i = 0; i < 1001; i++) {
        int64_t t0 = now_ns();
        scratch[i] = (double)(now_ns() - t0);
    }
    double clk = median(scratch, 1001);
    for (int i = 0; i < 201; i++) {
        int64_t t0 = now_ns();
        busy_ns(2000);
        scratch[i] = (double)(now_ns() - t0) - clk - 2000;
    }
    busy_over = lround(median(scratch, 201));
    return clk;
}

/* One wait step: pause, and every `yield_after` empty steps give the CPU away. */
static void relax(unsigned *spins)
{
    if (++*spins >= yield_after) {
        *spins = 0;
        sched_yield();
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int poll_once(void)
{
    int n = am_poll(ep);
    check(n, "am_poll");
    return n;
}

/* Bulk data carries its sequence number in its first and last word. */
static void stamp(char *p, size_t n, uint32_t seq)
{
    memcpy(p, &seq, 4);
    memcpy(p + n - 4, &seq, 4);
}

static int stamped(const char *p, size_t n, uint32_t seq)
{
    uint32_t w0, w1;
    if (n < 8)
        return 0;
    memcpy(&w0, p, 4);
    memcpy(&w1, p + n - 4, 4);
    return w0 == seq && w1 == seq;
}

/* ---- rank 1, the responder ---- */

/* A request that wants a reply, (seq) or (seq, arg): check its sequence number. */
static void take(const uint32_t *a, int nargs, int want)
{
    if (nargs != want || a[0] != req_seen + 1)
        errors++;
    req_seen++;
}

static void on_hello(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    take(a, nargs, 2);
    peer_cpu = (int)a[1] - 1;
    uint32_t r[2] = {a[0], (uint32_t)(my_cpu + 1)};
    check(am_reply(t, H_PONG, r, 2), "am_reply");
}

static void on_ping(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    take(a, nargs, 1);
    busy_ns(inj_recv);
    check(am_reply(t, H_PONG, a, 1), "am_reply");
}

static void on_or(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 1 || a[0] != or_seen + 1)
        errors++;
    or_seen++;
    busy_ns(or_inject);
}

/* One-way control: (CTL_OR_BEGIN, inject-recv), (CTL_OR_END, 0), (CTL_STOP, 0). */
static void on_ctl(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 2)
        errors++;
    else if (a[0] == CTL_OR_BEGIN)
        timing = 1, n0 = n1 = 0, or_inject = a[1];
    else if (a[0] == CTL_OR_END)
        timing = 0, result_due = 1;
    else
        stop = 1;
}

static void on_bulk(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    take(a, nargs, 2);
    if (len != a[1] || !stamped(d, len, a[0]))
        errors++;
    memcpy(dst, d, len);
    busy_ns(inj_recv);
    check(am_reply(t, H_PONG, a, 1), "am_reply");
}

static void on_fill(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    take(a, nargs, 2);
    size_t n = a[1] >= 8 && a[1] <= AM_MAX_BULK ? a[1] : 8;
    stamp(src, n, a[0]);
    check(am_reply_bulk(t, H_FILLED, src, n, a, 1), "am_reply_bulk");
}

/* One timed poll of the or phase: keep the last NEMPTY empty polls and the
 * polls that ran exactly one H_OR. */
static void timed_poll(unsigned *spins)
{
    uint32_t before = or_seen;
    int64_t t0 = now_ns();
    int n = poll_once();
    double dt = (double)(now_ns() - t0);
    if (n == 0) {
        empty[n0++ % NEMPTY] = dt;
        relax(spins);
    } else if (n == 1 && or_seen == before + 1 && n1 < one_max)
        one[n1++] = dt;
}

/* To rank 0: (16 x median one-message poll, 16 x median empty poll, H_OR run,
 * one-message polls or 0 if no empty one). */
static void send_or_result(void)
{
    double m1 = n1 ? median(one, n1) : 0;
    double m0 = n0 ? median(empty, n0 < NEMPTY ? n0 : NEMPTY) : 0;
    uint32_t r[4] = {(uint32_t)fmin(m1 * 16, 4e9), (uint32_t)fmin(m0 * 16, 4e9), or_seen,
                     n0 ? (uint32_t)n1 : 0};
    check(am_request(ep, 0, H_RESULT, r, 4), "am_request");
}

/* Serve until told to stop, then send rank 0 the counts. */
static void serve(void)
{
    for (unsigned spins = 0; !stop;) {
        if (timing)
            timed_poll(&spins);
        else if (poll_once() == 0)
            relax(&spins);
        if (result_due) {
            result_due = 0;
            send_or_result();
        }
    }
    uint32_t r[4] = {req_seen, or_seen, (uint32_t)errors, (uint32_t)am_ep_bad_packets(ep)};
    check(am_request(ep, 0, H_RESULT, r, 4), "am_request");
}

/* ---- rank 0, the requester ---- */

static void on_pong(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs < 1 || a[0] != replies + 1)
        errors++;
    replies++;
    if (nargs == 2)
        peer_cpu = (int)a[1] - 1;
}

/* The reply to H_FILL: time one memcpy of the block rank 1 has just written. */
static void on_filled(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    on_pong(t, a, nargs, d, len);
    int64_t t0 = now_ns();
    memcpy(dst, d, len);
    scratch[cp_n++] = (double)(now_ns() - t0);
    cp_bad += nargs != 1 || !stamped(dst, len, a[0]);
}

static void on_result(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 4)
        die("bad result message", 0);
    memcpy(result, a, sizeof result);
    results++;
}

/* Poll until *count reaches want; die after 10 s without it. */
static void await(const uint32_t *count, uint32_t want)
{
    int64_t deadline = now_ns() + 10000000000;
    for (unsigned spins = 0; *count != want;)
        if (poll_once() == 0) {
            relax(&spins);
            if (spins == 0 && now_ns() > deadline)
                die("no reply for 10 s: a message was lost", 0);
        }
}

static void drain(void)
{
    await(&replies, sent);
}

/* A request that wants a reply: (seq) if arg < 0, else (seq, arg); bulk if n. */
static void request(unsigned h, long arg, size_t n)
{
    uint32_t a[2] = {++sent, (uint32_t)arg};
    if (n) {
        stamp(src, n, a[0]);
        check(am_request_bulk(ep, 1, h, src, n, a, 2), "am_request_bulk");
    } else
        check(am_request(ep, 1, h, a, arg < 0 ? 1 : 2), "am_request");
}

static void ping(long inj)
{
    busy_ns(inj);
    request(H_PING, -1, 0);
}

static void control(uint32_t what, uint32_t arg)
{
    uint32_t a[2] = {what, arg};
    check(am_request(ep, 1, H_CTL, a, 2), "am_request");
}

/* Per-step time of `count` steps: each a request of n bulk bytes (a ping if n
 * is 0), then a poll if `stream`, else a wait for its reply.  A round trip is
 * the median of batch means (robust to a descheduled batch).  A stream is timed
 * whole, from the end of its first quarter (the queue filling up) until every
 * reply is in: medians of short batches would favour the batches in which the
 * sender ran ahead into free queue space and so overstate the rate. */
static double batches(long count, size_t n, int stream)
{
    long nb = 0, warm = stream ? count / 4 : 0;
    int64_t start = now_ns();
    for (int64_t last = start, i = 0; i < count; i++) {
        if (n)
            request(H_BULK, (long)n, n);
        else
            ping(inj_send);
        if (stream)
            poll_once();
        else
            drain();
        if (i + 1 == warm)
            start = now_ns();
        if (!stream && (i + 1) % BATCH == 0) {
            int64_t t = now_ns();
            scratch[nb++] = (double)(t - last) / 1e3 / BATCH;
            last = t;
        }
    }
    drain();
    if (stream)
        return (double)(now_ns() - start) / 1e3 / (double)(count - warm);
    return median(scratch, nb);
}

static double phase_os(long bursts, long inj)
{
    for (long k = 0; k < bursts; k++) {
        int64_t t0 = now_ns();
        for (int i = 0; i < BURST; i++)
            ping(inj);
        scratch[k] = (double)(now_ns() - t0) / 1e3 / BURST;
        drain();
    }
    return median(scratch, bursts);
}

static double phase_or(long n, long inj)
{
    for (int tries = 0; tries < 5; tries++) {
        control(CTL_OR_BEGIN, (uint32_t)inj);
        for (long i = 0; i < n; i++) {
            busy_ns(4000 + 2 * inj);
            if (!pinned) /* rank 1 may be waiting for our CPU */
                sched_yield();
            uint32_t seq = ++oneway;
            check(am_request(ep, 1, H_OR, &seq, 1), "am_request");
        }
        control(CTL_OR_END, 0);
        await(&results, results + 1);
        if (result[2] != oneway)
            die("rank 1 did not run every one-way request exactly once", 0);
        if (result[3] > (uint32_t)n / 10)
            return ((double)result[0] - (double)result[1]) / 16e3;
    }
    die("too few polls ran exactly one message, five times", 0);
    return 0;
}

/* Median time (us) of one memcpy of n bytes, less one clock read `clk` (ns). */
static double phase_memcpy(size_t n, long count, double clk)
{
    cp_n = 0;
    for (long i = 0; i < count; i++) {
        request(H_FILL, (long)n, 0);
        drain();
    }
    return (median(scratch, (long)cp_n) - clk) / 1e3;
}

/* Least-squares slope of t(n) over the sizes, in us per byte. */
static double fit_slope(const double *t)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < NSIZES; i++) {
        double x = (double)sizes[i];
        sx += x, sy += t[i], sxx += x * x, sxy += x * t[i];
    }
    return (NSIZES * sxy - sx * sy) / (NSIZES * sxx - sx * sx);
}

/* One round of every phase; its figures into column k of m. */
static void run_round(struct metric *m, const struct counts *c, int k, double clk)
{
    double t[NSIZES];
    m[M_OS].v[k] = phase_os(c->os_bursts, inj_send);
    m[M_OR].v[k] = phase_or(c->or_n, inj_recv);
    m[M_G].v[k] = batches(c->g_len, 0, 1);
    m[M_RTT].v[k] = batches(c->rtt_n, 0, 0);
    m[M_L].v[k] = m[M_RTT].v[k] / 2 - m[M_OS].v[k] - m[M_OR].v[k];
    m[M_OSOR].v[k] = m[M_OS].v[k] + m[M_OR].v[k];
    for (int i = 0; i < NSIZES; i++) {
        m[M_BT + i].v[k] = t[i] = batches(c->bulk_n, sizes[i], 1);
        m[M_MC + i].v[k] = (double)sizes[i] / phase_memcpy(sizes[i], c->cp_n, clk);
    }
    double g = fit_slope(t);
    m[M_BG].v[k] = g * 1e3;
    m[M_BINVG].v[k] = 1 / g;
    m[M_BPEAK].v[k] = 8192 / t[NSIZES - 1];
    m[M_RATIO].v[k] = m[M_BPEAK].v[k] / m[M_MC + NSIZES - 1].v[k];
}

static void set_metric(struct metric *m, const char *name, const char *unit, int prec,
                       long n)
{
    snprintf(m->name, sizeof m->name, "%s", name);
    m->unit = unit;
    m->prec = prec;
    m->iters = n * rounds;
}

static void name_metrics(struct metric *m, const struct counts *c)
{
    static const char *names[] = {"os", "or", "g", "rtt", "L", "os_plus_or"};
    long n[] = {c->os_bursts * BURST, c->or_n, c->g_len, c->rtt_n, c->rtt_n, c->or_n};
    char name[32];
    for (int i = 0; i <= M_OSOR; i++)
        set_metric(&m[i], names[i], "us", 3, n[i]);
    for (int i = 0; i < NSIZES; i++) {
        snprintf(name, sizeof name, "bulk_t_%zu", sizes[i]);
        set_metric(&m[M_BT + i], name, "us", 3, c->bulk_n);
        snprintf(name, sizeof name, "memcpy_MBps_%zu", sizes[i]);
        set_metric(&m[M_MC + i], name, "MB/s", 0, c->cp_n);
    }
    set_metric(&m[M_BG], "bulk_G", "ns/byte", 4, c->bulk_n * NSIZES);
    set_metric(&m[M_BPEAK], "bulk_peak_MBps", "MB/s", 0, c->bulk_n);
    set_metric(&m[M_BINVG], "bulk_invG_MBps", "MB/s", 0, c->bulk_n * NSIZES);
    set_metric(&m[M_RATIO], "bulk_vs_memcpy", "ratio", 3, c->bulk_n);
}

static void row(const char *bench, const char *name, long n, int prec, double val,
                const char *unit, const char *spread)
{
    const char *shm = getenv("SHMAM_SHM");
    printf("%s,%s,%s,%d,%d,%ld,%s,%.*f,%s,%s\n", bench, am_ep_claim(ep),
           shm && *shm ? shm : "posix", am_nprocs(), pinned, n, name, prec, val, unit,
           spread);
}

/* A row per metric: median over the rounds, spread lowest-highest round. */
static void report(struct metric *m)
{
    for (int i = 0; i < M_N; i++) {
        char spread[64];
        double med = median(m[i].v, rounds); /* sorts v */
        snprintf(spread, sizeof spread, "%.*f-%.*f", m[i].prec, m[i].v[0], m[i].prec,
                 m[i].v[rounds - 1]);
        row("logp", m[i].name, m[i].iters, m[i].prec, med, m[i].unit, spread);
    }
}

/* Growth of os and or when D = 2000 ns are injected, against 0 in each round. */
static int selfcheck(const struct counts *c)
{
    const long d = 2000;
    double dos[MAX_ROUNDS], dor[MAX_ROUNDS];
    for (int k = 0; k < rounds; k++) {
        dos[k] = -phase_os(c->os_bursts, 0) + phase_os(c->os_bursts, d);
        dor[k] = -phase_or(c->or_n, 0) + phase_or(c->or_n, d);
    }
    double got[2] = {median(dos, rounds) * 1e3, median(dor, rounds) * 1e3};
    const char *name[2] = {"os_injected", "or_injected"};
    long n[2] = {rounds * c->os_bursts * BURST, rounds * c->or_n};
    int fail = 0;
    for (int i = 0; i < 2; i++) {
        int ok = fabs(got[i] - d) <= 0.1 * d;
        row("logp_selfcheck", name[i], n[i], 0, got[i], "ns", "2000");
        fprintf(stderr, "logp: selfcheck %s (%s): injected %ld ns, recovered %.0f ns: %s\n",
                name[i], am_ep_claim(ep), d, got[i], ok ? "PASS" : "FAIL");
        fail |= !ok;
    }
    return fail;
}

/* Stop rank 1 and compare its counts with ours; nonzero if anything is off. */
static int final_check(void)
{
    control(CTL_STOP, 0);
    await(&results, results + 1);
    unsigned long bad = am_ep_bad_packets(ep) + result[3];
    if (replies == sent && result[0] == sent && result[1] == oneway && !errors &&
        !result[2] && !cp_bad && !bad)
        return 0;
    fprintf(stderr,
            "logp: FAILED (%s): %u replied requests sent, rank 1 ran %u, %u replies "
            "ran; %u one-way sent, %u ran; %lu + %u out of sequence, %lu bad copies, "
            "%lu bad packets\n",
            am_ep_claim(ep), sent, result[0], replies, oneway, result[1], errors, result[2],
            cp_bad, bad);
    return 1;
}

/* Rank 0: a warmup round, the rounds (or the self-check), the final checks. */
static int requester(const struct counts *c, double clk)
{
    static struct metric m[M_N];
    struct counts warm = {c->os_bursts / 10 + 1,  c->or_n / 10 + 50,
                          c->g_len / 10 + BATCH,  c->rtt_n / 10 + BATCH,
                          c->bulk_n / 10 + BATCH, c->cp_n / 10 + 1};
    name_metrics(m, c);
    if (header)
        printf("# bench,impl,shm,procs,pinned,iters,metric,value,unit,spread\n");
    run_round(m, &warm, MAX_ROUNDS, clk);
    int fail = selfcheck_mode ? selfcheck(c) : 0;
    for (int k = 0; !selfcheck_mode && k < rounds; k++)
        run_round(m, c, k, clk);
    if (final_check())
        return 1;
    if (!selfcheck_mode)
        report(m);
    return fail;
}

/* Prints the usage to f and exits with status: stdout and 0 for --help,
 * stderr and 2 for a bad command line. */
static void usage(FILE *f, int status)
{
    fprintf(f, "usage: shmamrun -n 2 --bind -a ALG logp [--iters N] [--rounds R] "
               "[--quick] [--inject-send-ns D] [--inject-recv-ns D] [--selfcheck] "
               "[--header]\n");
    exit(status);
}

static void parse(int argc, char **argv)
{
    static const struct option opts[] = {
        {"iters", 1, NULL, 1},          {"rounds", 1, NULL, 2},
        {"inject-send-ns", 1, NULL, 3}, {"inject-recv-ns", 1, NULL, 4},
        {"quick", 0, NULL, 5},          {"selfcheck", 0, &selfcheck_mode, 1},
        {"header", 0, &header, 1},      {NULL, 0, NULL, 0}};
    long *val[] = {&iters, &rounds, &inj_send, &inj_recv}, min[] = {100, 1, 0, 0};
    for (int ch; (ch = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        char *end;
        if (ch >= 1 && ch <= 4) {
            *val[ch - 1] = strtol(optarg, &end, 10);
            if (*end || *val[ch - 1] < min[ch - 1])
                usage(stderr, 2);
        } else if (ch == 5)
            iters = 2000, rounds = 3;
        else if (ch != 0)
            usage(stderr, 2);
    }
    if (optind < argc || rounds >= MAX_ROUNDS || iters / rounds < 16 * BURST) {
        fprintf(stderr, "logp: need rounds < %d and iters >= %d x rounds\n", MAX_ROUNDS,
                16 * BURST);
        exit(2);
    }
}

static void set_handlers(void)
{
    static const am_handler_t h[] = {
        [H_HELLO] = on_hello, [H_PING] = on_ping,     [H_OR] = on_or,
        [H_CTL] = on_ctl,     [H_BULK] = on_bulk,     [H_FILL] = on_fill,
        [H_PONG] = on_pong,   [H_FILLED] = on_filled, [H_RESULT] = on_result};
    for (unsigned i = H_HELLO; i <= H_RESULT; i++)
        check(am_set_handler(ep, i, h[i]), "am_set_handler");
}

/* Both ranks learn both CPUs (a request and its reply) and choose how to spin:
 * yield at once on a shared CPU, rarely when pinned to two. */
static void hello(void)
{
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) == 0 && CPU_COUNT(&s) == 1)
        my_cpu = sched_getcpu();
    check(am_barrier(ep), "am_barrier");
    yield_after = 256;
    if (rank == 0) {
        request(H_HELLO, my_cpu + 1, 0);
        drain();
    } else
        await(&req_seen, 1);
    pinned = my_cpu >= 0 && peer_cpu >= 0 && my_cpu != peer_cpu;
    int shared = sysconf(_SC_NPROCESSORS_ONLN) <= 1 || (my_cpu >= 0 && my_cpu == peer_cpu);
    yield_after = shared ? 1 : pinned ? 1u << 14 : 256;
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    check(am_init(&argc, &argv, &ep), "am_init");
    rank = am_rank();
    parse(argc, argv);
    if (am_nprocs() != 2)
        die("run me with exactly two ranks (shmamrun -n 2)", 0);
    set_handlers();
    long per = iters / rounds;
    struct counts c = {.os_bursts = per / BURST, .or_n = per / 2, .rtt_n = per};
    c.g_len = iters / 2 > 8 * BATCH ? iters / 2 : 8 * BATCH;
    c.bulk_n = per / 4 > 8 * BATCH ? per / 4 : 8 * BATCH;
    c.cp_n = per / 8 > 16 ? per / 8 : 16;
    one_max = c.or_n + 64;
    scratch = malloc((size_t)(c.g_len + 1024) * sizeof *scratch);
    empty = malloc(NEMPTY * sizeof *empty);
    one = malloc((size_t)one_max * sizeof *one);
    if (!scratch || !empty || !one)
        die("out of memory", 0);
    memset(src, 0x5a, sizeof src);
    double clk = calibrate();
    hello();
    int fail = rank == 0 ? requester(&c, clk) : (serve(), 0);
    fflush(stdout);
    check(am_finalize(ep), "am_finalize");
    return fail;
}
