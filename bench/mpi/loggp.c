/*
 * loggp.c - the MPICH baseline of bench/loggp.c: LogGP parameters at every
 * message size by Hoefler's PRTT method, with MPI_Send and MPI_Recv.
 *
 *   mpiexec -n 2 -bind-to core build/bench/mpi_loggp [--iters N] [--rounds R]
 *           [--max-size B] [--quick] [--timeout S] [--header]
 *
 * Per size s (0, powers of two to --max-size, and both sides of the eager
 * limit if UCX_RNDV_THRESH sets one: common/loggp.h), round and after an
 * unmeasured warm-up round, rank 0 measures PRTT(1, 0, s) (and with a 0-byte
 * reply), PRTT(n, 0, s) and PRTT(n, d, s) with d = PRTT(1, 0, s), each the
 * median of its bursts: n MPI_Send of s bytes, rank 1 MPI_Recv of each into
 * its own buffer and an MPI_Send of s bytes after the last (netgauge's
 * reply), which rank 0 MPI_Recvs.  In PRTT(n, d, s) as netgauge runs it rank
 * 1 spins in MPI_Iprobe and times each MPI_Recv of a message it saw there
 * (o_r's second method, or_poll); then PRTT(n, d, s) once more with rank 1
 * not in the library: before each message but a burst's first it waits
 * until lg_recv_at (clock reads only) and times the MPI_Recv (o_r, netgauge's
 * wait-then-receive, the median), while rank 0 times each MPI_Send alone
 * (o_s, the median).  The rows are bench/loggp.c's (common/loggp.h's
 * lg_fig_name per size, rounds_dropped), the quantiles of the round trip and
 * of o_s at 0 bytes (rtt_p50, ..., os_max), prtt_n, sig_size and limit_eager
 * (when known).  No signature sweep.  Estimator: the median over the rounds
 * kept (lg_drop_rounds), spread the lowest and highest of them.
 *
 * Checks: every message's tag is its sequence number modulo 2^15, its length
 * is checked, and messages of 8 bytes or more carry the sequence number in
 * their first and last words; at the end rank 1's totals are compared with
 * rank 0's.  A mismatch fails the job.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/loggp.h"
#include "common/measure.h"
#include "common/stat.h"
#include "mpi/usage.h"

enum { T_ACK = 32767, T_RES = 32766, T_TOTALS = 32765, SEQ_MOD = 32000 };

static const char usage_text[] =
    "usage: mpiexec -n 2 -bind-to core mpi_loggp [--iters N] [--rounds R] [--max-size B]\n"
    "       [--quick] [--timeout S] [--header]\n";

static int rank, header;
static long iters = 10000, rounds = 5, max_size = 4L << 20, timeout_s = 600;
static size_t sizes[LG_MAX_SIZES], eager;
static int nsizes;
static char *buf;
static double clk;
static unsigned long seq, msgs, bytes; /* messages and bytes sent (rank 0), received (1) */
static double fig[LG_MAX_ROUNDS + 1][LG_MAX_SIZES][LG_NFIG];
static double *rtt_smp, *os_smp, *trip, *copy, *sends; /* samples; scratch */
static long rtt_m, os_m;

static void send_msg(size_t s)
{
    seq++;
    if (s >= 8)
        bm_stamp(buf, s, (uint32_t)seq);
    MPI_Send(buf, (int)s, MPI_BYTE, 1, (int)(seq % SEQ_MOD), MPI_COMM_WORLD);
    msgs++, bytes += s;
}

static void recv_msg(size_t s)
{
    MPI_Status st;
    int n;
    seq++;
    MPI_Recv(buf, (int)s, MPI_BYTE, 0, (int)(seq % SEQ_MOD), MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &n);
    if ((size_t)n != s || (s >= 8 && !bm_stamped(buf, s, (uint32_t)seq)))
        bm_fail("message %lu: %d bytes or its stamps wrong (want %zu)", seq, n, s);
    msgs++, bytes += s;
}

/* Rank 1's reply to the last message of a burst: `s` bytes. */
static void reply(size_t s)
{
    MPI_Send(buf, (int)s, MPI_BYTE, 0, T_ACK, MPI_COMM_WORLD);
}

static void await_reply(size_t s)
{
    MPI_Recv(buf, (int)s, MPI_BYTE, 1, T_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* A busy wait of d ns (clock reads only: no MPI call). */
static void wait_ns(long d)
{
    for (int64_t t0 = bm_now_ns(); d > 0 && bm_now_ns() - t0 < d;)
        ;
}

/* The median of v[0..n-1], v left as it was. */
static double median_of(const double *v, long n)
{
    memcpy(copy, v, (size_t)n * sizeof *v);
    return lg_median(copy, n);
}

/* Rank 0: `bursts` x PRTT(n, d, s) with replies of r bytes, the median burst
 * (ns); each burst into rtt_out if not NULL; if os_out, each MPI_Send timed
 * alone into it, *os their median. */
static double prtt(int n, long d, size_t s, size_t r, long bursts, double *rtt_out,
                   double *os_out, double *os)
{
    double *t = rtt_out ? rtt_out : trip;
    for (long b = 0; b < bursts; b++) {
        int64_t t0 = bm_now_ns();
        for (int i = 0; i < n; i++) {
            int64_t ta = bm_now_ns();
            send_msg(s);
            if (os_out)
                os_out[b * n + i] = (double)(bm_now_ns() - ta) - clk;
            if (i < n - 1)
                wait_ns(d);
        }
        await_reply(r);
        t[b] = (double)(bm_now_ns() - t0) - clk;
    }
    if (os)
        *os = median_of(os_out, bursts * n);
    return median_of(t, bursts);
}

/* Rank 1: the receiving side of `bursts` x PRTT(n, *, s) with replies of r
 * bytes.  how: 0 plain MPI_Recv; 1 spin in MPI_Iprobe, then time the
 * MPI_Recv; 2 wait `w` ns, then time the MPI_Recv (a burst's first message
 * untimed).  The median timed MPI_Recv (ns), the last of each burst left
 * out; NaN if none was timed. */
static double serve_prtt(int n, size_t s, size_t r, long bursts, int how, long p)
{
    long cnt = 0;
    int64_t t1 = 0;
    for (long b = 0; b < bursts; b++) {
        for (int i = 0; i < n; i++) {
            int flag = how != 1;
            while (!flag)
                MPI_Iprobe(0, (int)((seq + 1) % SEQ_MOD), MPI_COMM_WORLD, &flag,
                           MPI_STATUS_IGNORE);
            for (int64_t at = lg_recv_at(t1, i, p); how == 2 && i > 0 && bm_now_ns() < at;)
                ;
            int64_t t0 = bm_now_ns();
            recv_msg(s);
            if (i == 0)
                t1 = bm_now_ns();
            if (how && i < n - 1 && (how == 1 || i > 0))
                trip[cnt++] = (double)(bm_now_ns() - t0) - clk;
        }
        reply(r);
    }
    return cnt ? lg_median(trip, cnt) : NAN;
}

/* Round k's figures of size index i (counts of a round of `per`), on both
 * ranks, us; samples at 0 bytes in measured rounds. */
static void cell(int k, int i, long per)
{
    size_t s = sizes[i];
    long m = lg_count(s, per, 4), bursts = m / LG_N > 2 ? m / LG_N : 2;
    int keep = s == 0 && k != LG_MAX_ROUNDS;
    double o[2], d[2], os;
    if (rank == 1) {
        serve_prtt(1, s, s, m, 0, 0);
        serve_prtt(1, s, 0, m, 0, 0);
        serve_prtt(LG_N, s, s, bursts, 0, 0);
        o[1] = serve_prtt(LG_N, s, s, bursts, 1, 0);
        MPI_Recv(d, 2, MPI_DOUBLE, 0, T_RES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        o[0] = serve_prtt(LG_N, s, s, bursts, 2, lround(d[1]));
        MPI_Send(o, 2, MPI_DOUBLE, 0, T_RES, MPI_COMM_WORLD);
        return;
    }
    double *f = fig[k][i];
    double p1 = prtt(1, 0, s, s, m, keep ? rtt_smp + k * rtt_m : NULL, NULL, NULL);
    double p0 = prtt(1, 0, s, 0, m, NULL, NULL, NULL);
    double pn = prtt(LG_N, 0, s, s, bursts, NULL, NULL, NULL);
    d[0] = (double)lround(p1); /* netgauge's d */
    double pd = prtt(LG_N, lround(d[0]), s, s, bursts, NULL, NULL, NULL);
    d[1] = fmax(d[0], (pd - p1) / (LG_N - 1)); /* the sender's period, d + o_s */
    MPI_Send(d, 2, MPI_DOUBLE, 1, T_RES, MPI_COMM_WORLD);
    prtt(LG_N, lround(d[0]), s, s, bursts, NULL, keep ? os_smp + k * os_m : sends, &os);
    MPI_Recv(o, 2, MPI_DOUBLE, 1, T_RES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    f[LG_RTT] = p1 / 1e3;
    f[LG_RTT0] = p0 / 1e3;
    f[LG_PN] = pn / 1e3;
    f[LG_PD] = pd / 1e3;
    f[LG_G] = (pn - p1) / (LG_N - 1) / 1e3;
    f[LG_OS] = os / 1e3;
    f[LG_OSP] = ((pd - p1) / (LG_N - 1) - d[0]) / 1e3;
    f[LG_OR] = o[0] / 1e3;
    f[LG_ORP] = o[1] / 1e3;
}

static void one(const struct bm_row *row, const char *metric, double v, const char *unit)
{
    struct bm_stat s = {v, v, v, 1};
    bm_print(row, "mpich", 1, metric, s, unit, 0);
}

static void report(int pinned, long per)
{
    struct bm_row row = {stdout, "mpi_loggp", "-", 2, pinned};
    char name[48];
    if (header)
        bm_print_header(stdout);
    if (eager)
        one(&row, "limit_eager", (double)eager, "bytes");
    one(&row, "prtt_n", LG_N, "msgs");
    one(&row, "sig_size", 0, "bytes");
    int dropped = 0;
    size_t stride = sizeof fig[0] / sizeof(double);
    for (int i = 0; i < nsizes; i++) {
        unsigned char keep[LG_MAX_ROUNDS + 1];
        memset(keep, 1, sizeof keep);
        dropped +=
            lg_drop_rounds(stdout, "mpich", sizes[i], fig[0][i], (int)rounds, stride, keep);
        for (int q = 0; q < LG_NFIG; q++) {
            snprintf(name, sizeof name, "%s_%zu", lg_fig_name[q], sizes[i]);
            bm_print(&row, "mpich", lg_count(sizes[i], per, 4) * rounds, name,
                     lg_of_rounds(&fig[0][i][q], (int)rounds, stride, keep), "us", 4);
        }
    }
    struct bm_stat dr = {dropped, dropped, dropped, 1};
    bm_print(&row, "mpich", rounds * nsizes, "rounds_dropped", dr, "rounds", 0);
    for (int q = 0; q < LG_NQ; q++) {
        struct bm_stat r = lg_quantile(rtt_smp, (int)rounds, rtt_m, lg_q[q]);
        struct bm_stat o = lg_quantile(os_smp, (int)rounds, os_m, lg_q[q]);
        r.median /= 1e3, r.lo /= 1e3, r.hi /= 1e3, o.median /= 1e3, o.lo /= 1e3,
            o.hi /= 1e3;
        snprintf(name, sizeof name, "rtt_%s", lg_q_name[q]);
        bm_print(&row, "mpich", rtt_m * rounds, name, r, "us", 4);
        snprintf(name, sizeof name, "os_%s", lg_q_name[q]);
        bm_print(&row, "mpich", os_m * rounds, name, o, "us", 4);
    }
    fflush(stdout);
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--iters") == 0)
            iters = mpi_arg_long(v, "--iters needs an integer >= 100", 100, 1L << 40), i++;
        else if (strcmp(a, "--rounds") == 0)
            rounds = mpi_arg_long(v, "--rounds needs 1 .. 50", 1, LG_MAX_ROUNDS - 1), i++;
        else if (strcmp(a, "--max-size") == 0)
            max_size = mpi_arg_long(v, "--max-size needs 8 .. 1 GiB", 8, 1L << 30), i++;
        else if (strcmp(a, "--timeout") == 0)
            timeout_s = mpi_arg_long(v, "--timeout needs an integer >= 0", 0, 1L << 30),
            i++;
        else if (strcmp(a, "--quick") == 0)
            iters = 1500, rounds = 3;
        else if (!bm_common_flag(a, &header, NULL))
            mpi_bad_usage("unknown option");
    }
    if (iters / rounds < 4 * LG_N)
        mpi_bad_usage("need iters >= 32 x rounds");
}

int main(int argc, char **argv)
{
    mpi_program("mpi_loggp", usage_text, argc, argv);
    int procs;
    rank = mpi_start(&argc, &argv, &procs);
    parse(argc, argv);
    bm_timeout((unsigned)timeout_s);
    int pinned = mpi_pinned_pair(procs);
    const char *thresh = getenv("UCX_RNDV_THRESH"); /* UCX's eager limit, if set */
    long e = 0;
    if (thresh && bm_arg_long(thresh, 1, &e) == 0)
        eager = (size_t)e;
    nsizes = lg_sizes((size_t)max_size, &eager, eager ? 1 : 0, sizes);
    long per = iters / rounds;
    rtt_m = lg_count(0, per, 4);
    os_m = (rtt_m / LG_N > 2 ? rtt_m / LG_N : 2) * LG_N;
    buf = malloc((size_t)max_size);
    rtt_smp = calloc((size_t)(rtt_m * rounds), sizeof(double));
    os_smp = calloc((size_t)(os_m * rounds), sizeof(double));
    trip = calloc((size_t)per + 4, sizeof(double));
    copy = calloc((size_t)per + 4, sizeof(double));
    sends = calloc((size_t)per + 4, sizeof(double));
    if (!buf || !rtt_smp || !os_smp || !trip || !copy || !sends)
        bm_fail("out of memory");
    memset(buf, 0x5a, (size_t)max_size);
    clk = bm_clock_cost_ns();
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < nsizes; i++)
        cell(LG_MAX_ROUNDS, i, per / 10 > 16 ? per / 10 : 16);
    for (int k = 0; k < rounds; k++)
        for (int i = 0; i < nsizes; i++)
            cell(k, i, per);
    mpi_check_totals(msgs, bytes, T_TOTALS);
    if (rank == 0)
        report(pinned, per);
    MPI_Finalize();
    return 0;
}
