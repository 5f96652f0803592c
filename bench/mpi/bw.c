/*
 * bw.c - the MPICH baseline of bench/bw.c: one-way streaming bandwidth
 * between two ranks, 64 B to 4 MB, in the manner of OSU's osu_bw.
 *
 *   mpiexec -n 2 -bind-to core build/bench/mpi_bw [--sizes LIST] [--bytes B]
 *           [--max-msgs M] [--rounds R] [--quick] [--timeout S] [--header]
 *           [--verbose]
 *
 * Method (osu_bw's).  For a size n, rank 0 sends windows of WIN (64)
 * MPI_Isend of n bytes and MPI_Waitalls them; rank 1 pre-posts the window's
 * 64 MPI_Irecv, MPI_Waitalls them and answers with a one-byte ack, which rank
 * 0 receives before its next window.  A size's figure in a round is its bytes
 * over the time from the first MPI_Isend to the last ack, MB/s (10^6 bytes).
 * Windows per size and round: count / 64 (at least one), count = B / n
 * (--bytes, default 32 MB) between 64 and M (--max-msgs, default 20000)
 * messages: bench/bw.c's counts, so both move the same bytes.  The
 * application's buffers are bench/bw.c's too: each rank a ring of 64 slots of
 * n bytes (rounded up to 64), message j of a window in slot j, the receive
 * slots distinct as MPI requires.
 *
 * Estimator (bench/common/stat.h).  One unmeasured warm-up round (a tenth of
 * the windows, at least one), then R rounds (--rounds, default 5), the sizes
 * in ABBA order (reversed in odd rounds); a row is the median over the rounds,
 * its spread the lowest and highest round.
 *
 * Checks.  Every message carries its sequence number in its tag (modulo
 * 2^15) and in its first and last 4 bytes; rank 1 checks source, tag, length
 * and both stamps of every message; in the warm-up round every byte is
 * patterned and checked.  At the end rank 1 reports the messages and bytes it
 * received, which must equal rank 0's.  A failed check prints FAILED and
 * aborts the job; SIGALRM after --timeout seconds (600) ends a hung run.
 *
 * Rows: mpi_bw,mpich,-,2,PINNED,ITERS,mpi_bw_MBps_<n>,VALUE,MB/s,LO-HI (iters:
 * the messages of all measured rounds).
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/measure.h"
#include "common/stat.h"
#include "mpi/usage.h"

#define WIN 64 /* messages per window, and slots of each rank's ring */
#define MIN_MSGS 64
#define MAX_SIZES 16
#define MAX_ROUNDS 101
#define TAG_ACK 32767
#define TAG_SUMMARY 32766

struct opts {
    long bytes, max_msgs, rounds, timeout;
    int header, verbose;
    size_t sizes[MAX_SIZES];
    int nsizes;
};

static int rank;
static uint32_t seq;        /* rank 0: messages sent; rank 1: received */
static unsigned long bytes; /* payload bytes sent / received */

static size_t round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static int seq_tag(uint32_t s)
{
    return (int)(s & 0x7fff) % TAG_SUMMARY;
}

/* Byte b of message s in the warm-up's full pattern. */
static unsigned char pattern(uint32_t s, size_t b)
{
    return (unsigned char)((s * 0x9e3779b9u) >> (b % 4 * 8)) ^ (unsigned char)(b * 131);
}

static void stamp(unsigned char *p, size_t n, uint32_t s)
{
    memcpy(p, &s, 4);
    memcpy(p + n - 4, &s, 4);
}

/* Rank 0: one window of WIN messages of n bytes (patterned in full if full). */
static void send_window(unsigned char *buf, size_t n, int full)
{
    MPI_Request req[WIN];
    MPI_Status st[WIN];
    for (int j = 0; j < WIN; j++) {
        uint32_t s = seq++;
        unsigned char *p = buf + (size_t)j * round64(n);
        if (full)
            for (size_t b = 4; b + 4 < n; b++)
                p[b] = pattern(s, b);
        stamp(p, n, s);
        MPI_Isend(p, (int)n, MPI_BYTE, 1, seq_tag(s), MPI_COMM_WORLD, &req[j]);
    }
    MPI_Waitall(WIN, req, st);
    bytes += (unsigned long)WIN * n;
}

/* Rank 1: receive one window as send_window sent it, checking every message. */
static void recv_window(unsigned char *buf, size_t n, int full)
{
    MPI_Request req[WIN];
    MPI_Status st[WIN];
    for (int j = 0; j < WIN; j++)
        MPI_Irecv(buf + (size_t)j * round64(n), (int)n, MPI_BYTE, 0, MPI_ANY_TAG,
                  MPI_COMM_WORLD, &req[j]);
    MPI_Waitall(WIN, req, st);
    for (int j = 0; j < WIN; j++) {
        uint32_t s = seq++, a, b;
        const unsigned char *p = buf + (size_t)j * round64(n);
        int got;
        MPI_Get_count(&st[j], MPI_BYTE, &got);
        if (st[j].MPI_SOURCE != 0 || st[j].MPI_TAG != seq_tag(s) || (size_t)got != n)
            bm_fail("message %u: source %d, tag %d, %d bytes", s, st[j].MPI_SOURCE,
                    st[j].MPI_TAG, got);
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        if (a != s || b != s)
            bm_fail("message %u carries stamps %u and %u", s, a, b);
        for (size_t k = 4; full && k + 4 < n; k++)
            if (p[k] != pattern(s, k))
                bm_fail("message %u has a wrong byte at %zu", s, k);
    }
    bytes += (unsigned long)WIN * n;
}

/* Both ranks: `windows` windows of n bytes, each acked; rank 0 returns MB/s. */
static double stream(size_t n, long windows, int full, unsigned char *buf)
{
    double t0 = bm_now_us();
    for (long w = 0; w < windows; w++) {
        char ack = 0;
        if (rank == 0) {
            MPI_Status st;
            send_window(buf, n, full);
            MPI_Recv(&ack, 1, MPI_CHAR, 1, TAG_ACK, MPI_COMM_WORLD, &st);
        } else {
            recv_window(buf, n, full);
            MPI_Send(&ack, 1, MPI_CHAR, 0, TAG_ACK, MPI_COMM_WORLD);
        }
    }
    return (double)windows * WIN * (double)n / (bm_now_us() - t0);
}

static long count_of(const struct opts *o, size_t n)
{
    long c = o->bytes / (long)n;
    c = c < o->max_msgs ? c : o->max_msgs;
    return c > MIN_MSGS ? c : MIN_MSGS;
}

static long windows_of(const struct opts *o, size_t n)
{
    long w = count_of(o, n) / WIN;
    return w > 0 ? w : 1;
}

static const char usage_text[] =
    "usage: mpiexec -n 2 -bind-to core mpi_bw [--sizes N,N,...] [--bytes B]\n"
    "           [--max-msgs M] [--rounds R] [--quick] [--timeout S] [--header]\n"
    "           [--verbose]\n"
    "  mpi_bw_MBps_<n>: osu_bw's windows of 64 MPI_Isend and a one-byte ack;\n"
    "  B / n messages per size and round (64 .. M), R rounds (default 5) after a\n"
    "  warm-up, sizes in ABBA order; value = median of the round means, spread =\n"
    "  lowest-highest round.  Defaults: sizes 64 B .. 4 MB, B = 32 MB, M = 20000;\n"
    "  --quick: B = 8 MB, M = 5000, R = 3.\n";

static void parse_sizes(struct opts *o, const char *s)
{
    if ((o->nsizes = bm_parse_sizes(s, o->sizes, MAX_SIZES)) < 0)
        mpi_bad_usage(
            "--sizes needs 1 to 16 ascending sizes of 8 B .. 1 GB, comma-separated");
}

static struct opts parse(int argc, char **argv)
{
    struct opts o = {.bytes = 32L << 20, .max_msgs = 20000, .rounds = 5, .timeout = 600};
    static const size_t def[] = {64,    256,   1024,   4096,    8192,
                                 16384, 65536, 262144, 1048576, 4194304};
    o.nsizes = (int)(sizeof def / sizeof def[0]);
    memcpy(o.sizes, def, sizeof def);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--sizes") == 0)
            parse_sizes(&o, v), i++;
        else if (strcmp(a, "--bytes") == 0)
            o.bytes = mpi_arg_long(v, "--bytes needs an integer >= 1", 1, LONG_MAX), i++;
        else if (strcmp(a, "--max-msgs") == 0)
            o.max_msgs =
                mpi_arg_long(v, "--max-msgs needs an integer >= 64", MIN_MSGS, LONG_MAX),
            i++;
        else if (strcmp(a, "--rounds") == 0)
            o.rounds = mpi_arg_long(v, "--rounds needs an integer >= 1", 1, LONG_MAX), i++;
        else if (strcmp(a, "--timeout") == 0)
            o.timeout = mpi_arg_long(v, "--timeout needs an integer >= 0", 0, LONG_MAX),
            i++;
        else if (strcmp(a, "--quick") == 0)
            o.bytes = 8L << 20, o.max_msgs = 5000, o.rounds = 3;
        else if (!bm_common_flag(a, &o.header, &o.verbose))
            mpi_bad_usage("unknown option");
    }
    if (o.rounds > MAX_ROUNDS)
        mpi_bad_usage("need rounds <= 101");
    return o;
}

static void report(const struct opts *o, int pinned, double res[][MAX_ROUNDS])
{
    struct bm_row row = {stdout, "mpi_bw", "-", 2, pinned};
    if (o->header)
        bm_print_header(stdout);
    for (int i = 0; i < o->nsizes; i++) {
        char name[40];
        snprintf(name, sizeof name, "mpi_bw_MBps_%zu", o->sizes[i]);
        if (o->verbose)
            for (long r = 0; r < o->rounds; r++)
                fprintf(stderr, "mpi_bw: %s round %ld: %.0f\n", name, r, res[i][r]);
        bm_print(&row, "mpich", windows_of(o, o->sizes[i]) * WIN * o->rounds, name,
                 bm_stat_of(res[i], (int)o->rounds), "MB/s", 0);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    mpi_program("mpi_bw", usage_text, argc, argv);
    int procs;
    rank = mpi_start(&argc, &argv, &procs);
    struct opts o = parse(argc, argv);
    bm_timeout((unsigned)o.timeout);

    int pinned = mpi_pinned_pair(procs);
    size_t stride = round64(o.sizes[o.nsizes - 1]);
    unsigned char *buf = aligned_alloc(4096, ((WIN * stride + 4095) / 4096) * 4096);
    static double res[MAX_SIZES][MAX_ROUNDS];
    if (!buf)
        bm_fail("out of memory");
    for (size_t i = 0; i < WIN * stride; i++) /* every page mapped before timing */
        buf[i] = (unsigned char)(i * 131 + (i >> 12));

    /* Round -1 is the warm-up; then the sizes of round r in ABBA order. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (long r = -1; r < o.rounds; r++)
        for (int j = 0; j < o.nsizes; j++) {
            int i = bm_abba((int)(r < 0 ? 0 : r), j, o.nsizes);
            long w = windows_of(&o, o.sizes[i]);
            double v =
                stream(o.sizes[i], r < 0 ? (w / 10 > 0 ? w / 10 : 1) : w, r < 0, buf);
            if (r >= 0)
                res[i][r] = v;
        }

    mpi_check_totals(seq, bytes, TAG_SUMMARY); /* every message and byte */
    if (rank == 0) {
        report(&o, pinned, res);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
