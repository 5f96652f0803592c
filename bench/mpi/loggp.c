/*
 * loggp.c - the MPICH baseline of bench/loggp.c: LogGP parameters at every
 * message size by Hoefler's PRTT method, with MPI_Send and MPI_Recv.
 *
 *   mpiexec -n 2 -bind-to core build/bench/mpi_loggp [--iters N] [--rounds R]
 *           [--max-size B] [--quick] [--timeout S] [--header]
 *
 * Per size s (0, powers of two to --max-size, and both sides of the eager
 * limit if UCX_RNDV_THRESH sets one: common/loggp.h), round and after an
 * unmeasured warm-up round, rank 0 measures PRTT(1, 0, s), PRTT(n, 0, s) and
 * PRTT(n, d, s) with d = PRTT(1, 0, s): n MPI_Send of s bytes, rank 1
 * MPI_Recv of each into its own buffer and a 0-byte MPI_Send after the last,
 * which rank 0 MPI_Recvs.  In PRTT(n, d, s) rank 0 times each MPI_Send alone
 * (o_s) and rank 1, once MPI_Iprobe says the message is there, times each
 * MPI_Recv but the last (o_r, netgauge's receiver; rank 1 returns their
 * mean).  The rows are bench/loggp.c's: rtt_S, g_S, os_S, os_prtt_S, or_S,
 * the quantiles of the round trip and of o_s at 0 bytes (rtt_p50, ...,
 * os_max), prtt_n, sig_size and limit_eager (when known).  No signature
 * sweep.  Estimator: each round's mean, the median over rounds, spread the
 * lowest and highest round (common/stat.h).
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
enum { S_RTT, S_G, S_OS, S_OSP, S_OR, S_N };

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
static double fig[LG_MAX_ROUNDS + 1][LG_MAX_SIZES][S_N];
static double *rtt_smp, *os_smp;
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

static void ack(int to)
{
    MPI_Send(NULL, 0, MPI_BYTE, to, T_ACK, MPI_COMM_WORLD);
}

static void await_ack(void)
{
    MPI_Recv(NULL, 0, MPI_BYTE, 1, T_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

struct prtt {
    double t, os, wait;
};

/* Rank 0: `bursts` x PRTT(n, d, s), as bench/loggp.c's prtt(). */
static struct prtt prtt(int n, long d, size_t s, long bursts, int timed, double *rtt_out,
                        double *os_out)
{
    int64_t sum = 0, os = 0, waited = 0;
    for (long b = 0; b < bursts; b++) {
        int64_t t0 = bm_now_ns();
        for (int i = 0; i < n; i++) {
            int64_t ta = timed ? bm_now_ns() : 0;
            send_msg(s);
            if (timed) {
                int64_t tb = bm_now_ns(), t = tb;
                os += tb - ta;
                if (os_out)
                    os_out[b * n + i] = (double)(tb - ta) - clk;
                while (i < n - 1 && (t = bm_now_ns()) - tb < d)
                    ;
                waited += t - tb;
            }
        }
        await_ack();
        int64_t dt = bm_now_ns() - t0;
        sum += dt;
        if (rtt_out)
            rtt_out[b] = (double)dt - clk;
    }
    double m = (double)bursts;
    struct prtt r = {(double)sum / m - clk, timed ? (double)os / (m * n) - clk : 0,
                     n > 1 ? (double)waited / (m * (n - 1)) : 0};
    return r;
}

/* Rank 1: the receiving side of `bursts` x PRTT(n, *, s); if timed, the
 * mean MPI_Recv (ns) of messages already there, the last of each burst left
 * out. */
static double serve_prtt(int n, size_t s, long bursts, int timed)
{
    int64_t sum = 0;
    long cnt = 0;
    for (long b = 0; b < bursts; b++) {
        for (int i = 0; i < n; i++) {
            if (timed) {
                int flag = 0;
                while (!flag)
                    MPI_Iprobe(0, (int)((seq + 1) % SEQ_MOD), MPI_COMM_WORLD, &flag,
                               MPI_STATUS_IGNORE);
            }
            int64_t t0 = bm_now_ns();
            recv_msg(s);
            if (timed && i < n - 1)
                sum += bm_now_ns() - t0, cnt++;
        }
        ack(0);
    }
    return cnt ? (double)sum / (double)cnt - clk : NAN;
}

/* Round k's figures of size index i (counts of a round of `per`), on both
 * ranks; samples at 0 bytes in measured rounds. */
static void cell(int k, int i, long per)
{
    size_t s = sizes[i];
    long m = lg_count(s, per, 4), bursts = m / LG_N > 2 ? m / LG_N : 2;
    int keep = s == 0 && k != LG_MAX_ROUNDS;
    double or_ns;
    if (rank == 1) {
        serve_prtt(1, s, m, 0);
        serve_prtt(LG_N, s, bursts, 0);
        or_ns = serve_prtt(LG_N, s, bursts, 1);
        MPI_Send(&or_ns, 1, MPI_DOUBLE, 0, T_RES, MPI_COMM_WORLD);
        return;
    }
    double *f = fig[k][i];
    struct prtt p1 = prtt(1, 0, s, m, 0, keep ? rtt_smp + k * rtt_m : NULL, NULL);
    struct prtt pn = prtt(LG_N, 0, s, bursts, 0, NULL, NULL);
    struct prtt pd =
        prtt(LG_N, lround(p1.t), s, bursts, 1, NULL, keep ? os_smp + k * os_m : NULL);
    MPI_Recv(&or_ns, 1, MPI_DOUBLE, 1, T_RES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    f[S_RTT] = p1.t / 1e3;
    f[S_G] = (pn.t - p1.t) / (LG_N - 1) / 1e3;
    f[S_OS] = pd.os / 1e3;
    f[S_OSP] = ((pd.t - p1.t) / (LG_N - 1) - pd.wait - 2 * clk) / 1e3;
    f[S_OR] = or_ns / 1e3;
}

static void one(const struct bm_row *row, const char *metric, double v, const char *unit)
{
    struct bm_stat s = {v, v, v, 1};
    bm_print(row, "mpich", 1, metric, s, unit, 0);
}

static void report(int pinned, long per)
{
    static const char *sname[S_N] = {"rtt", "g", "os", "os_prtt", "or"};
    struct bm_row row = {stdout, "mpi_loggp", "-", 2, pinned};
    char name[48];
    if (header)
        bm_print_header(stdout);
    if (eager)
        one(&row, "limit_eager", (double)eager, "bytes");
    one(&row, "prtt_n", LG_N, "msgs");
    one(&row, "sig_size", 0, "bytes");
    for (int i = 0; i < nsizes; i++)
        for (int q = 0; q < S_N; q++) {
            double v[LG_MAX_ROUNDS];
            int n = 0;
            for (int k = 0; k < rounds; k++)
                if (!isnan(fig[k][i][q]))
                    v[n++] = fig[k][i][q];
            snprintf(name, sizeof name, "%s_%zu", sname[q], sizes[i]);
            bm_print(&row, "mpich", lg_count(sizes[i], per, 4) * rounds, name,
                     bm_stat_of(v, n), "us", 4);
        }
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
    if (!buf || !rtt_smp || !os_smp)
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
