/*
 * logp.c - LogP parameters (o_s, o_r, g, L), round trip and bulk bandwidth of
 * two endpoints, by the method of Culler et al., "Assessing Fast Network
 * Interfaces" (IEEE Micro 1996), for Table 1 and section 4.1 of Lumetta &
 * Culler (1998): every claim algorithm (or per-sender queue kind) of --algs
 * in one job, interleaved.
 *
 *   shmamrun -n 2 --bind [-a ALG] build/bench/logp [--algs LIST] [--iters N]
 *       [--rounds R] [--quick] [--inject-send-ns D] [--inject-recv-ns D]
 *       [--selfcheck] [--header] [--verbose]
 *
 * Rank 0 requests; rank 1 busy-polls and runs the handlers, which reply to
 * every request but the one-way ones.  The method (each metric's phase, the
 * sweep's fit, the self-check), its checks and its rows: bench/README.md,
 * "logp".
 */
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "shmam.h"
#include "common/am_algs.h"
#include "common/am_harness.h"
#include "common/measure.h"
#include "common/stat.h"

/* Requests to rank 1, then the replies and the result message to rank 0. */
enum { H_HELLO = 1, H_PING, H_ONEWAY, H_CTL, H_BULK, H_FILL, H_PONG, H_FILLED, H_RESULT };
enum { CTL_OR_BEGIN, CTL_OR_END, CTL_USE, CTL_STOP, CTL_RAW };
enum { BURST = 8, BATCH = 32, NSIZES = 8, ND = 7, MAX_ROUNDS = 51, MOVE_TRIPS = 16 };
/* Metrics in the order of the rows; a run of them per size and per delay. */
enum { M_OS, M_OR, M_G, M_GOW, M_RTT, M_L, M_OSOR, M_SWI, M_ORS, M_LS, M_SWS, M_SWT };
enum { M_BT = M_SWT + ND, M_BG = M_BT + NSIZES, M_BPEAK, M_BINVG, M_MC };
enum { M_CF = M_MC + NSIZES, M_MEM = M_CF + NSIZES, M_RATIO, M_GRAW, M_GVR, M_N };
#define WARM MAX_ROUNDS /* the warm-up round's column of fig */

struct counts {
    long os_bursts, or_n, g_len, rtt_n, sweep_n, bulk_n, cp_n, mc_n;
};
struct metric {
    char name[40];
    const char *unit;
    int prec;
    long iters;
};

static am_ep_t *ep;         /* the job's endpoint: barriers only */
static struct bm_algs algs; /* an endpoint per algorithm measured */
static am_ep_t *cur;        /* the endpoint in use, algorithm cur_alg, on both ranks */
static int cur_alg;
static int rank, my_cpu = -1, peer_cpu = -1, pinned; /* CPUs: -1 if not pinned to one */
static long iters = 20000, rounds = 5, inj_send, inj_recv;
static int header, selfcheck_mode, verbose;
static const char *alg_list;
static unsigned yield_after;
static long busy_over;   /* busy_ns's own overshoot, in ns */
static int64_t spent_ns; /* the injected waits (busy_ns) since the last reset: */
static long spent_n;     /* their time actually spent, and how many */
static double clk;       /* the cost of one clock read, in ns */
static _Alignas(64) char src[AM_MAX_BULK], dst[AM_MAX_BULK];
static _Alignas(64) char mc_src[AM_MAX_BULK], mc_dst[AM_MAX_BULK];
#define MEM_BYTES (64L << 20) /* each of two buffers, far beyond the caches */
static char *mem_src, *mem_dst;
static const size_t sizes[NSIZES] = {64, 128, 256, 512, 1024, 2048, 4096, 8192};
static const long delays[ND] = {0, 250, 500, 1000, 2000, 4000, 8000}; /* ns */
static struct metric def[M_N];
static double fig[BM_MAX_ALGS][MAX_ROUNDS + 1][M_N]; /* [algorithm][round][metric] */
static unsigned long errors; /* messages out of sequence, on either rank */
/* Rank 0: replied requests sent, replies run, one-way requests sent, H_RESULTs;
 * the copy_fresh phase's copies, their time and bad stamps; the reply
 * handler's injected delay (selfcheck). */
static uint32_t sent, replies, oneway, result[5], results;
static long cp_n, pong_inject;
static int64_t cp_ns;
static unsigned long cp_bad;
/* Rank 1: requests run, one-way requests run; the or phase's timed polls. */
static uint32_t req_seen, ow_seen;
static int timing, result_due, stop;
static long or_inject, n0, n1;
static int64_t sum0, sum1;

/* The raw floor of g_oneway (bench/README.md, logp): a ring of RAW_SLOTS
 * slots of one cache line each, in a segment of the job (bm_raw_segment),
 * carrying 8-byte messages one way.  A slot's seq is its flag: 0 empty, else
 * the sequence number of the message in it (message s in slot s % RAW_SLOTS),
 * whose 8 bytes are `word`.  The same lines per message as a shared queue's
 * packet: the sender writes the slot, the receiver reads it and writes it
 * empty. */
#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "logp needs AO_load_acquire and AO_store_release"
#endif
enum { RAW_SLOTS = 128 }; /* an endpoint queue's default depth */
struct raw_slot {
    _Alignas(64) AO_t seq;
    uint64_t word;
};
static struct raw_slot *raw;        /* RAW_SLOTS slots, both ranks */
static uint32_t raw_sent, raw_seen; /* rank 0's last sent, rank 1's last taken */
static long raw_due;                /* rank 1: messages of the raw phase to take */

/* An injected busy wait of d ns; its time spent, from before its first clock
 * read to after its last (one read, clk, more than their difference), is
 * added to spent_ns: the selfcheck compares what comes back with it. */
static void busy_ns(long d)
{
    if (d <= 0)
        return;
    int64_t t0 = bm_now_ns(), t;
    for (int64_t end = t0 + d - busy_over; (t = bm_now_ns()) < end;)
        ;
    spent_ns += t - t0 + llround(clk), spent_n++;
}

/* The sweep's wait: until d ns after its first clock read.  Returns the time
 * from its first read to its last (0, and no read, for d <= 0). */
static int64_t delay_ns(long d)
{
    if (d <= 0)
        return 0;
    int64_t t0 = bm_now_ns(), t;
    while ((t = bm_now_ns()) - t0 < d)
        ;
    return t - t0;
}

/* Sets clk, the cost of one clock read (ns), and busy_ns's overshoot. */
static void calibrate(void)
{
    static double v[201];
    clk = bm_clock_cost_ns();
    for (int i = 0; i < 201; i++) {
        int64_t t0 = bm_now_ns();
        busy_ns(2000);
        v[i] = (double)(bm_now_ns() - t0) - clk - 2000;
    }
    busy_over = lround(bm_median(v, 201));
    spent_ns = 0, spent_n = 0;
}

/* One wait step of the policy (am_harness.h). */
static void relax(unsigned *spins)
{
    bm_relax(spins, yield_after);
}

static int poll_once(void)
{
    return bm_poll(cur);
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
    bm_check(am_reply(t, H_PONG, r, 2), "am_reply");
}

static void on_ping(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    take(a, nargs, 1);
    busy_ns(inj_recv);
    bm_check(am_reply(t, H_PONG, a, 1), "am_reply");
}

static void on_oneway(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 1 || a[0] != ow_seen + 1)
        errors++;
    ow_seen++;
    busy_ns(or_inject);
}

/* One-way control: (CTL_OR_BEGIN, inject), (CTL_OR_END, 0), (CTL_USE, algorithm),
 * (CTL_STOP, 0).  CTL_USE comes last on the old endpoint: serve() polls the new
 * one from its next poll on. */
static void on_ctl(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 2)
        errors++;
    else if (a[0] == CTL_OR_BEGIN)
        timing = 1, n0 = n1 = 0, sum0 = sum1 = 0, or_inject = a[1], spent_ns = 0,
        spent_n = 0;
    else if (a[0] == CTL_OR_END)
        timing = 0, result_due = 1, or_inject = inj_recv;
    else if (a[0] == CTL_USE && a[1] < (uint32_t)algs.n)
        cur_alg = (int)a[1], cur = algs.ep[a[1]];
    else if (a[0] == CTL_STOP)
        stop = 1;
    else if (a[0] == CTL_RAW)
        raw_due = a[1];
    else
        errors++;
}

static void on_bulk(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    take(a, nargs, 2);
    if (len != a[1] || !bm_stamped(d, len, a[0]))
        errors++;
    memcpy(dst, d, len);
    busy_ns(inj_recv);
    bm_check(am_reply(t, H_PONG, a, 1), "am_reply");
}

static void on_fill(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    take(a, nargs, 2);
    size_t n = a[1] >= 8 && a[1] <= AM_MAX_BULK ? a[1] : 8;
    bm_stamp(src, n, a[0]);
    bm_check(am_reply_bulk(t, H_FILLED, src, n, a, 1), "am_reply_bulk");
}

/* One timed poll of the or phase: sums and counts of the empty polls and of
 * the polls that ran exactly one one-way request. */
static void timed_poll(unsigned *spins)
{
    uint32_t before = ow_seen;
    int64_t t0 = bm_now_ns();
    int n = poll_once();
    int64_t dt = bm_now_ns() - t0;
    if (n == 0) {
        sum0 += dt, n0++;
        relax(spins);
    } else if (n == 1 && ow_seen == before + 1)
        sum1 += dt, n1++;
}

/* To rank 0: (16 x mean one-message poll, 16 x mean empty poll, one-way
 * requests run, one-message polls or 0 if no empty one, 16 x mean injected
 * wait), in ns. */
static void send_or_result(void)
{
    double m1 = n1 ? (double)sum1 / n1 : 0, m0 = n0 ? (double)sum0 / n0 : 0;
    double inj = spent_n ? (double)spent_ns / (double)spent_n : 0;
    uint32_t r[5] = {(uint32_t)fmin(m1 * 16, 4e9), (uint32_t)fmin(m0 * 16, 4e9), ow_seen,
                     n0 ? (uint32_t)n1 : 0, (uint32_t)fmin(inj * 16, 4e9)};
    bm_check(am_request(cur, 0, H_RESULT, r, 5), "am_request");
}

/* Take `count` messages from the raw ring (outside any handler: rank 0 floods
 * it after its CTL_RAW).  The acquire of a slot's flag pairs with rank 0's
 * release of it (raw_stream): the word is there.  The release of 0 follows
 * our read and pairs with rank 0's acquire before it writes the slot again. */
static void raw_serve(long count)
{
    for (long i = 0; i < count; i++) {
        uint32_t s = raw_seen + 1;
        struct raw_slot *sl = &raw[s % RAW_SLOTS];
        struct bm_wait w = BM_WAIT(yield_after, "waiting for a raw slot");
        AO_t got;
        while ((got = AO_load_acquire(&sl->seq)) == 0)
            bm_wait_step(&w);
        if (got != s || sl->word != s)
            errors++;
        raw_seen = s;
        AO_store_release(&sl->seq, 0);
    }
}

/* Serve the endpoint in use until told to stop, then send rank 0 the counts. */
static void serve(void)
{
    for (unsigned spins = 0; !stop;) {
        if (raw_due) {
            long n = raw_due;
            raw_due = 0;
            raw_serve(n);
        }
        if (timing)
            timed_poll(&spins);
        else if (poll_once() == 0)
            relax(&spins);
        if (result_due) {
            result_due = 0;
            send_or_result();
        }
    }
    uint32_t r[5] = {req_seen, ow_seen, (uint32_t)errors,
                     (uint32_t)bm_bad_packets(ep, &algs), 0};
    bm_check(am_request(cur, 0, H_RESULT, r, 5), "am_request");
}

/* ---- rank 0, the requester ---- */

static void on_pong(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs < 1 || a[0] != replies + 1)
        errors++;
    replies++;
    if (nargs == 2)
        peer_cpu = (int)a[1] - 1;
    busy_ns(pong_inject);
}

/* The reply to H_FILL: time one memcpy of the block rank 1 has just written. */
static void on_filled(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    on_pong(t, a, nargs, d, len);
    int64_t t0 = bm_now_ns();
    memcpy(dst, d, len);
    cp_ns += bm_now_ns() - t0;
    cp_n++;
    cp_bad += nargs != 1 || !bm_stamped(dst, len, a[0]);
}

static void on_result(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 5)
        bm_die("bad result message", 0);
    memcpy(result, a, sizeof result);
    results++;
}

/* Poll until *count reaches want; die after 10 s without it.  The clock is read
 * only when a wait has gone on long enough to yield. */
static void await(const uint32_t *count, uint32_t want)
{
    int64_t deadline = 0;
    for (unsigned spins = 0; *count != want;)
        if (poll_once() == 0) {
            relax(&spins);
            if (spins != 0)
                continue;
            if (!deadline)
                deadline = bm_now_ns() + 10000000000;
            else if (bm_now_ns() > deadline)
                bm_die("no reply for 10 s: a message was lost", 0);
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
        bm_stamp(src, n, a[0]);
        bm_check(am_request_bulk(cur, 1, h, src, n, a, 2), "am_request_bulk");
    } else
        bm_check(am_request(cur, 1, h, a, arg < 0 ? 1 : 2), "am_request");
}

static void ping(long inj)
{
    busy_ns(inj);
    request(H_PING, -1, 0);
}

static void control(uint32_t what, uint32_t arg)
{
    uint32_t a[2] = {what, arg};
    bm_check(am_request(cur, 1, H_CTL, a, 2), "am_request");
}

/* Move both ranks to algorithm a's endpoints.  Every reply is in first; the
 * control message goes on the old endpoint after everything else sent there,
 * so rank 1 moves once it has run all of it.  Then a few untimed round trips
 * warm the new endpoint's queues. */
static void use(int a)
{
    if (a == cur_alg)
        return;
    drain();
    control(CTL_USE, (uint32_t)a);
    cur_alg = a, cur = algs.ep[a];
    for (int i = 0; i < MOVE_TRIPS; i++) {
        ping(0);
        drain();
    }
}

static double phase_os(long bursts, long inj)
{
    int64_t sum = 0;
    for (long k = 0; k < bursts; k++) {
        int64_t t0 = bm_now_ns();
        for (int i = 0; i < BURST; i++)
            ping(inj);
        sum += bm_now_ns() - t0;
        drain();
    }
    return ((double)sum - (double)bursts * clk) / 1e3 / (double)(bursts * BURST);
}

/* The or phase: tried again while at most a tenth of the messages were found
 * one per poll, up to OR_TRIES; then the try with the most such polls is the
 * figure (said on stderr: a loaded machine, its spread shows it), or, if none
 * had any, up to OR_TRIES_MAX until one has: a row is never dropped for
 * noise. */
#define OR_TRIES 5
#define OR_TRIES_MAX 50

static double phase_or(long n, long inj)
{
    double best = 0;
    uint32_t best_ones = 0;
    for (int tries = 0; tries < OR_TRIES_MAX; tries++) {
        control(CTL_OR_BEGIN, (uint32_t)inj);
        for (long i = 0; i < n; i++) {
            busy_ns(4000 + 2 * inj);
            if (!pinned) /* rank 1 may be waiting for our CPU */
                sched_yield();
            uint32_t seq = ++oneway;
            bm_check(am_request(cur, 1, H_ONEWAY, &seq, 1), "am_request");
        }
        control(CTL_OR_END, 0);
        await(&results, results + 1);
        if (result[2] != oneway)
            bm_die("rank 1 did not run every one-way request exactly once", 0);
        double f = ((double)result[0] - (double)result[1]) / 16e3;
        if (result[3] > (uint32_t)n / 10)
            return f;
        if (result[3] > best_ones)
            best = f, best_ones = result[3];
        if (tries + 1 >= OR_TRIES && best_ones > 0) {
            fprintf(stderr,
                    "logp: o_r: at best %u of %ld messages found one per poll in %d "
                    "tries (a loaded machine?); the best try taken\n",
                    best_ones, n, tries + 1);
            return best;
        }
    }
    bm_die("no poll ran exactly one message, in every try", 0);
    return 0;
}

/* Per-message time (us) of a stream of `count` requests, bulk of n bytes if n,
 * else pings, an am_poll after each send: from the end of its first quarter
 * (the queue filling up) until every reply has run. */
static double stream(long count, size_t n)
{
    long warm = count / 4;
    int64_t start = bm_now_ns();
    for (long i = 0; i < count; i++) {
        if (n)
            request(H_BULK, (long)n, n);
        else
            ping(inj_send);
        poll_once();
        if (i + 1 == warm)
            start = bm_now_ns();
    }
    drain();
    return (double)(bm_now_ns() - start) / 1e3 / (double)(count - warm);
}

/* Per-message time (us) of a stream of `count` one-way requests, no polls
 * between them: from the end of its first quarter until a round trip sent
 * after the last is back. */
static double stream_oneway(long count)
{
    long warm = count / 4;
    int64_t start = bm_now_ns();
    for (long i = 0; i < count; i++) {
        busy_ns(inj_send);
        uint32_t seq = ++oneway;
        bm_check(am_request(cur, 1, H_ONEWAY, &seq, 1), "am_request");
        if (i + 1 == warm)
            start = bm_now_ns();
    }
    ping(0);
    drain();
    return (double)(bm_now_ns() - start) / 1e3 / (double)(count - warm);
}

/* Per-message time (us) of a flood of `count` 8-byte messages through the
 * raw ring (raw_serve for the pairing of the flags), timed as stream_oneway:
 * from the end of its first quarter until rank 1 has emptied the last slot. */
static double raw_stream(long count)
{
    long warm = count / 4;
    control(CTL_RAW, (uint32_t)count);
    int64_t start = bm_now_ns();
    for (long i = 0; i < count; i++) {
        uint32_t s = ++raw_sent;
        struct raw_slot *sl = &raw[s % RAW_SLOTS];
        struct bm_wait w = BM_WAIT(yield_after, "waiting for a free raw slot");
        while (AO_load_acquire(&sl->seq) != 0)
            bm_wait_step(&w);
        sl->word = s;
        AO_store_release(&sl->seq, s);
        if (i + 1 == warm)
            start = bm_now_ns();
    }
    struct bm_wait w = BM_WAIT(yield_after, "waiting for rank 1 to empty the raw ring");
    while (AO_load_acquire(&raw[raw_sent % RAW_SLOTS].seq) != 0)
        bm_wait_step(&w);
    return (double)(bm_now_ns() - start) / 1e3 / (double)(count - warm);
}

/* Mean round trip (us) of `count` pings, each waited for. */
static double trips(long count)
{
    int64_t start = bm_now_ns();
    for (long i = 0; i < count; i++) {
        ping(inj_send);
        drain();
    }
    return (double)(bm_now_ns() - start) / 1e3 / (double)count;
}

/* Least-squares slope of y over x[0..n-1]. */
static double slope_of(const double *x, const double *y, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++)
        sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/* Iterations at delay index j of a sweep of n: fewer at long delays, so that
 * every point takes about as long. */
static long sweep_iters(long n, int j)
{
    long m = n * 1000 / (1000 + delays[j]);
    return m > 8 ? m : 8;
}

/* Iterations of a whole sweep of n. */
static long sweep_total(long n)
{
    long sum = 0;
    for (int j = 0; j < ND; j++)
        sum += sweep_iters(n, j);
    return sum;
}

/* Culler's send-then-delay sweep (bench/README.md, logp): t(D) into f[M_SWT + j], the
 * slope-1 intercept and the free slope over the slope-1 part. */
static void sweep(long n_0, double *f)
{
    double x[ND], t[ND], waiting[ND]; /* waiting: share of replies already there */
    int from = ND;
    for (int j = 0; j < ND; j++) {
        int64_t waited = 0, start = bm_now_ns();
        long found = 0, n = sweep_iters(n_0, j);
        for (long i = 0; i < n; i++) {
            ping(inj_send);
            waited += delay_ns(delays[j]);
            if (poll_once() > 0 && replies == sent)
                found++;
            else
                drain();
        }
        f[M_SWT + j] = t[j] = (double)(bm_now_ns() - start) / 1e3 / (double)n;
        x[j] = delays[j] ? ((double)waited / (double)n + clk) / 1e3 : 0;
        waiting[j] = (double)found / (double)n;
    }
    while (from > 1 && waiting[from - 1] >= 0.95)
        from--;
    if (from > ND - 2)
        from = ND - 2;
    double a = 0;
    for (int j = from; j < ND; j++)
        a += t[j] - x[j];
    f[M_SWI] = a / (ND - from);
    f[M_SWS] = slope_of(x + from, t + from, ND - from);
    for (int j = 0; verbose && j < ND; j++)
        fprintf(stderr,
                "logp: %s sweep D %ld ns: t %.3f us, waited %.3f us, reply "
                "waiting %.1f %%%s\n",
                algs.name[cur_alg], delays[j], t[j], x[j], 100 * waiting[j],
                j == from ? " (fit from here)" : "");
}

/* This machine's copy rate (MB/s): `count` memcpy of n bytes between two
 * private buffers, one clock pair around them all.  The empty asm says memory
 * may be read, so no copy can be left out. */
static double copy_rate(size_t n, long count)
{
    int64_t start = bm_now_ns();
    for (long i = 0; i < count; i++) {
        memcpy(mc_dst, mc_src, n);
        __asm__ __volatile__("" ::: "memory");
    }
    return (double)n * (double)count / ((double)(bm_now_ns() - start) / 1e3);
}

/* The memory copy rate (MB/s), the paper's baseline: 8 KB memcpy chunks
 * marching through two MEM_BYTES buffers once, so that source and destination
 * come from memory, not from a cache. */
static double memory_rate(void)
{
    int64_t start = bm_now_ns();
    for (long off = 0; off < MEM_BYTES; off += AM_MAX_BULK) {
        memcpy(mem_dst + off, mem_src + off, AM_MAX_BULK);
        __asm__ __volatile__("" ::: "memory");
    }
    return (double)MEM_BYTES / ((double)(bm_now_ns() - start) / 1e3);
}

/* Copy rate (MB/s) of n bytes another core has just written: `count` times,
 * a request answered by a bulk reply whose handler times its memcpy. */
static double copy_fresh(size_t n, long count)
{
    cp_n = 0, cp_ns = 0;
    for (long i = 0; i < count; i++) {
        request(H_FILL, (long)n, 0);
        drain();
    }
    return (double)n / (((double)cp_ns / (double)cp_n - clk) / 1e3);
}

/* ---- the phases of a round, each for the algorithm in use ---- */

static void ph_os(double *f, const struct counts *c)
{
    f[M_OS] = phase_os(c->os_bursts, inj_send);
}

static void ph_or(double *f, const struct counts *c)
{
    f[M_OR] = phase_or(c->or_n, inj_recv);
}

static void ph_g(double *f, const struct counts *c)
{
    f[M_G] = stream(c->g_len, 0);
}

static void ph_g_oneway(double *f, const struct counts *c)
{
    f[M_GOW] = stream_oneway(c->g_len);
}

static void ph_g_raw(double *f, const struct counts *c)
{
    f[M_GRAW] = raw_stream(c->g_len);
}

static void ph_rtt(double *f, const struct counts *c)
{
    f[M_RTT] = trips(c->rtt_n);
}

static void ph_sweep(double *f, const struct counts *c)
{
    sweep(c->sweep_n, f);
}

static void ph_bulk(double *f, const struct counts *c)
{
    for (int i = 0; i < NSIZES; i++)
        f[M_BT + i] = stream(c->bulk_n, sizes[i]);
}

static void ph_memcpy(double *f, const struct counts *c)
{
    for (int i = 0; i < NSIZES; i++)
        f[M_MC + i] = copy_rate(sizes[i], c->mc_n * (long)(AM_MAX_BULK / sizes[i]));
    f[M_MEM] = memory_rate();
}

static void ph_copy_fresh(double *f, const struct counts *c)
{
    for (int i = 0; i < NSIZES; i++)
        f[M_CF + i] = copy_fresh(sizes[i], c->cp_n);
}

static void (*const phases[])(double *, const struct counts *) = {
    ph_os,  ph_or,    ph_g,    ph_g_oneway, ph_g_raw,
    ph_rtt, ph_sweep, ph_bulk, ph_memcpy,   ph_copy_fresh};
#define NPHASES ((int)(sizeof phases / sizeof phases[0]))

/* The figures of a round computed from the measured ones. */
static void derive(double *f)
{
    double x[NSIZES];
    f[M_L] = f[M_RTT] / 2 - f[M_OS] - f[M_OR];
    f[M_OSOR] = f[M_OS] + f[M_OR];
    f[M_ORS] = f[M_SWI] - f[M_OS];
    f[M_LS] = f[M_RTT] / 2 - f[M_OS] - f[M_ORS];
    for (int i = 0; i < NSIZES; i++)
        x[i] = (double)sizes[i];
    double g = slope_of(x, f + M_BT, NSIZES);
    f[M_BG] = g * 1e3;
    f[M_BINVG] = 1 / g;
    f[M_BPEAK] = 8192 / f[M_BT + NSIZES - 1];
    f[M_RATIO] = f[M_BPEAK] / f[M_MEM];
    f[M_GVR] = f[M_GOW] / f[M_GRAW];
}

/* Round k (WARM: the warm-up): every phase, each for every algorithm in ABBA
 * order; the figures into fig[algorithm][k]. */
static void run_round(int k, const struct counts *c)
{
    for (int p = 0; p < NPHASES; p++)
        for (int j = 0; j < algs.n; j++) {
            int a = bm_abba(k, j, algs.n);
            use(a);
            phases[p](fig[a][k], c);
        }
    for (int a = 0; a < algs.n; a++)
        derive(fig[a][k]);
}

static void set_metric(int i, const char *name, const char *unit, int prec, long n)
{
    snprintf(def[i].name, sizeof def[i].name, "%s", name);
    def[i].unit = unit;
    def[i].prec = prec;
    def[i].iters = n * rounds;
}

static void name_metrics(const struct counts *c)
{
    static const char *us[] = {"os",       "or",     "g",          "g_oneway",
                               "rtt",      "L",      "os_plus_or", "os_plus_or_sweep",
                               "or_sweep", "L_sweep"};
    long n[] = {c->os_bursts * BURST,
                c->or_n,
                c->g_len,
                c->g_len,
                c->rtt_n,
                c->rtt_n,
                c->or_n,
                sweep_total(c->sweep_n),
                sweep_total(c->sweep_n),
                sweep_total(c->sweep_n)};
    char name[40];
    for (int i = 0; i <= M_LS; i++)
        set_metric(i, us[i], "us", 3, n[i]);
    set_metric(M_SWS, "sweep_slope", "ratio", 3, sweep_total(c->sweep_n));
    for (int j = 0; j < ND; j++) {
        snprintf(name, sizeof name, "sweep_t_%ld", delays[j]);
        set_metric(M_SWT + j, name, "us", 3, sweep_iters(c->sweep_n, j));
    }
    for (int i = 0; i < NSIZES; i++) {
        snprintf(name, sizeof name, "bulk_t_%zu", sizes[i]);
        set_metric(M_BT + i, name, "us", 3, c->bulk_n);
        snprintf(name, sizeof name, "memcpy_MBps_%zu", sizes[i]);
        set_metric(M_MC + i, name, "MB/s", 0, c->mc_n * (long)(AM_MAX_BULK / sizes[i]));
        snprintf(name, sizeof name, "copy_fresh_MBps_%zu", sizes[i]);
        set_metric(M_CF + i, name, "MB/s", 0, c->cp_n);
    }
    set_metric(M_BG, "bulk_G", "ns/byte", 4, c->bulk_n * NSIZES);
    set_metric(M_BPEAK, "bulk_peak_MBps", "MB/s", 0, c->bulk_n);
    set_metric(M_BINVG, "bulk_invG_MBps", "MB/s", 0, c->bulk_n * NSIZES);
    set_metric(M_MEM, "memcpy_mem_MBps", "MB/s", 0, MEM_BYTES / AM_MAX_BULK);
    set_metric(M_RATIO, "bulk_vs_memcpy", "ratio", 3, c->bulk_n);
    set_metric(M_GRAW, "g_raw", "us", 4, c->g_len);
    set_metric(M_GVR, "g_oneway_vs_raw", "ratio", 3, c->g_len);
}

static struct bm_row row_of(const char *bench)
{
    const char *shm = getenv("SHMAM_SHM");
    struct bm_row r = {stdout, bench, shm && *shm ? shm : "posix", am_nprocs(), pinned};
    return r;
}

static int lockfree_index(void)
{
    for (int a = 0; a < algs.n; a++)
        if (strcmp(algs.name[a], "lockfree") == 0)
            return a;
    return -1;
}

/* A row per metric and algorithm (median over the rounds, spread lowest-highest
 * round), then the in-run ratios to lockfree. */
static void report(void)
{
    static const int vs[] = {M_OS, M_G, M_RTT, M_BPEAK};
    struct bm_row row = row_of("logp");
    double v[MAX_ROUNDS], w[MAX_ROUNDS];
    int n = (int)rounds, lf = lockfree_index();
    for (int a = 0; a < algs.n; a++) {
        for (int i = 0; i < M_N; i++) {
            for (int k = 0; k < n; k++)
                v[k] = fig[a][k][i];
            bm_print(&row, algs.name[a], def[i].iters, def[i].name, bm_stat_of(v, n),
                     def[i].unit, def[i].prec);
        }
        for (int q = 0; lf >= 0 && a != lf && q < (int)(sizeof vs / sizeof vs[0]); q++) {
            char name[64];
            int i = vs[q];
            for (int k = 0; k < n; k++)
                v[k] = fig[a][k][i], w[k] = fig[lf][k][i];
            snprintf(name, sizeof name, "%s_vs_lockfree", def[i].name);
            bm_print(&row, algs.name[a], def[i].iters, name, bm_stat_ratio(v, w, n),
                     "ratio", 3);
        }
    }
}

/* Time actually spent (us) per injected wait since spent_ns was reset. */
static double spent_us(void)
{
    return spent_n ? (double)spent_ns / (double)spent_n / 1e3 : 0;
}

/* Growth of os, or and the sweep's intercept when D = 2000 ns are injected
 * (os: before each send; or: in rank 1's one-way handler; sweep: in rank 0's
 * reply handler), against none in the same round.  PASS if it is within 10 %
 * of the time the injected waits actually took (their own clock reads): on a
 * VM a wait whose deadline falls in a pause of the virtual CPU lasts longer,
 * and the mean that every figure is counts that time as it counts any other.
 * The os phases take an eighth of the bursts: injected, a burst is almost all
 * timed, and a shorter phase is less often hit by a preemption. */
static int selfcheck(const struct counts *c)
{
    enum { D = 2000, NCHK = 3 };
    static const char *name[NCHK] = {"os_injected", "or_injected",
                                     "os_plus_or_sweep_injected"};
    static double grow[BM_MAX_ALGS][NCHK][MAX_ROUNDS], spent[BM_MAX_ALGS][NCHK][MAX_ROUNDS];
    double f0[M_N], f1[M_N];
    long bursts = c->os_bursts / 8 > 8 ? c->os_bursts / 8 : 8;
    for (int k = 0; k < rounds; k++)
        for (int j = 0; j < algs.n; j++) {
            int a = bm_abba(k, j, algs.n);
            use(a);
            spent_ns = 0, spent_n = 0;
            double os1 = phase_os(bursts, D);
            spent[a][0][k] = spent_us();
            grow[a][0][k] = os1 - phase_os(bursts, 0);
            double or1 = phase_or(c->or_n, D);
            spent[a][1][k] = result[4] / 16e3;
            grow[a][1][k] = or1 - phase_or(c->or_n, 0);
            sweep(c->sweep_n, f0);
            pong_inject = D, spent_ns = 0, spent_n = 0;
            sweep(c->sweep_n, f1);
            pong_inject = 0;
            spent[a][2][k] = spent_us();
            grow[a][2][k] = f1[M_SWI] - f0[M_SWI];
        }
    struct bm_row row = row_of("logp_selfcheck");
    long n[NCHK] = {rounds * bursts * BURST, rounds * c->or_n,
                    rounds * sweep_total(c->sweep_n)};
    int fail = 0;
    for (int a = 0; a < algs.n; a++)
        for (int i = 0; i < NCHK; i++) {
            char sname[64];
            for (int k = 0; k < rounds; k++)
                grow[a][i][k] *= 1e3, spent[a][i][k] *= 1e3; /* ns */
            struct bm_stat g = bm_stat_of(grow[a][i], (int)rounds);
            struct bm_stat w = bm_stat_of(spent[a][i], (int)rounds);
            int ok = fabs(g.median - w.median) <= 0.1 * w.median;
            snprintf(sname, sizeof sname, "%s_spent", name[i]);
            bm_print(&row, algs.name[a], n[i], name[i], g, "ns", 0);
            bm_print(&row, algs.name[a], n[i], sname, w, "ns", 0);
            fprintf(stderr,
                    "logp: selfcheck %s (%s): injected %d ns, spent %.0f ns, recovered "
                    "%.0f ns: %s\n",
                    name[i], algs.name[a], D, w.median, g.median, ok ? "PASS" : "FAIL");
            fail |= !ok;
        }
    return fail;
}

/* Stop rank 1 and compare its counts with ours; nonzero if anything is off. */
static int final_check(void)
{
    drain();
    control(CTL_STOP, 0);
    await(&results, results + 1);
    unsigned long bad = bm_bad_packets(ep, &algs) + result[3];
    if (replies == sent && result[0] == sent && result[1] == oneway && !errors &&
        !result[2] && !cp_bad && !bad)
        return 0;
    fprintf(stderr,
            "logp: FAILED: %u replied requests sent, rank 1 ran %u, %u replies ran; %u "
            "one-way sent, %u ran; %lu + %u out of sequence, %lu bad copies, %lu bad "
            "packets\n",
            sent, result[0], replies, oneway, result[1], errors, result[2], cp_bad, bad);
    return 1;
}

/* Rank 0: a warm-up round, the rounds (or the self-check), the final checks. */
static int requester(const struct counts *c)
{
    struct counts warm = {c->os_bursts / 10 + 1, c->or_n / 10 + 50,
                          c->g_len / 10 + BATCH, c->rtt_n / 10 + BATCH,
                          c->sweep_n / 10 + 8,   c->bulk_n / 10 + BATCH,
                          c->cp_n / 10 + 1,      c->mc_n / 10 + 1};
    name_metrics(c);
    run_round(WARM, &warm);
    int fail = selfcheck_mode ? selfcheck(c) : 0;
    for (int k = 0; !selfcheck_mode && k < rounds; k++)
        run_round(k, c);
    if (final_check())
        return 1;
    if (header)
        bm_print_header(stdout);
    if (!selfcheck_mode)
        report();
    return fail;
}

/* Prints the usage to f and exits with status: stdout and 0 for --help,
 * stderr and 2 for a bad command line. */
static void usage(FILE *f, int status)
{
    fprintf(f, "usage: shmamrun -n 2 --bind [-a ALG] logp [--algs ALG,...|all|channels] "
               "[--iters N] "
               "[--rounds R] [--quick] [--inject-send-ns D] [--inject-recv-ns D] "
               "[--selfcheck] [--header] [--verbose]\n");
    exit(status);
}

static void parse(int argc, char **argv)
{
    static const struct option opts[] = {{"iters", 1, NULL, 1},
                                         {"rounds", 1, NULL, 2},
                                         {"inject-send-ns", 1, NULL, 3},
                                         {"inject-recv-ns", 1, NULL, 4},
                                         {"quick", 0, NULL, 5},
                                         {"algs", 1, NULL, 6},
                                         {"selfcheck", 0, &selfcheck_mode, 1},
                                         {"header", 0, &header, 1},
                                         {"verbose", 0, &verbose, 1},
                                         {NULL, 0, NULL, 0}};
    long *val[] = {&iters, &rounds, &inj_send, &inj_recv}, min[] = {100, 1, 0, 0};
    for (int ch; (ch = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        char *end;
        if (ch >= 1 && ch <= 4) {
            *val[ch - 1] = strtol(optarg, &end, 10);
            if (*end || *val[ch - 1] < min[ch - 1])
                usage(stderr, 2);
        } else if (ch == 5)
            iters = 2000, rounds = 3;
        else if (ch == 6)
            alg_list = optarg;
        else if (ch != 0)
            usage(stderr, 2);
    }
    if (optind < argc || rounds >= MAX_ROUNDS || iters / rounds < 16 * BURST) {
        fprintf(stderr, "logp: need rounds < %d and iters >= %d x rounds\n", MAX_ROUNDS,
                16 * BURST);
        exit(2);
    }
}

/* An endpoint per algorithm, every handler on each; the first is in use. */
static void open_endpoints(void)
{
    static const struct bm_handler h[] = {
        {H_HELLO, on_hello}, {H_PING, on_ping},     {H_ONEWAY, on_oneway},
        {H_CTL, on_ctl},     {H_BULK, on_bulk},     {H_FILL, on_fill},
        {H_PONG, on_pong},   {H_FILLED, on_filled}, {H_RESULT, on_result}};
    if (bm_algs_parse(alg_list ? alg_list : bm_algs_name_of(ep), &algs) != 0)
        exit(2);
    int rc = bm_algs_open(ep, &algs, h, (int)(sizeof h / sizeof h[0]));
    bm_check(rc, "cannot make the endpoints per algorithm");
    cur = algs.ep[0], cur_alg = 0;
}

/* Both ranks learn both CPUs (a request and its reply) and choose how to spin:
 * yield at once on a shared CPU, rarely when pinned to two. */
static void hello(void)
{
    my_cpu = bm_pinned_cpu();
    bm_check(am_barrier(ep), "am_barrier");
    yield_after = 256;
    if (rank == 0) {
        request(H_HELLO, my_cpu + 1, 0);
        drain();
    } else
        await(&req_seen, 1);
    pinned = bm_pinned_apart(my_cpu, peer_cpu);
    yield_after = bm_yield_after(my_cpu, peer_cpu);
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    ep = bm_am_init("logp", &argc, &argv);
    rank = am_rank();
    parse(argc, argv);
    if (am_nprocs() != 2)
        bm_die("run me with exactly two ranks (shmamrun -n 2)", 0);
    open_endpoints();
    raw = bm_raw_segment(ep, "logp", RAW_SLOTS * sizeof *raw);
    long per = iters / rounds;
    struct counts c = {.os_bursts = per / BURST,
                       .or_n = per / 4,
                       .g_len = per > 8 * BATCH ? per : 8 * BATCH,
                       .rtt_n = per,
                       .sweep_n = per / 2,
                       .bulk_n = per / 4 > 8 * BATCH ? per / 4 : 8 * BATCH,
                       .cp_n = per / 8 > 16 ? per / 8 : 16,
                       .mc_n = per / 8 > 16 ? per / 8 : 16};
    memset(src, 0x5a, sizeof src);
    memset(mc_src, 0xa5, sizeof mc_src);
    if (rank == 0) {
        mem_src = malloc(MEM_BYTES);
        mem_dst = malloc(MEM_BYTES);
        if (!mem_src || !mem_dst)
            bm_die("out of memory for the memory copy rate", 0);
        memset(mem_src, 0xa5, MEM_BYTES); /* every page mapped before timing */
        memset(mem_dst, 0x5a, MEM_BYTES);
    }
    or_inject = inj_recv;
    calibrate();
    hello();
    int fail = rank == 0 ? requester(&c) : (serve(), 0);
    fflush(stdout);
    munmap(raw, RAW_SLOTS * sizeof *raw);
    bm_algs_close(ep, &algs);
    bm_check(am_finalize(ep), "am_finalize");
    return fail;
}
