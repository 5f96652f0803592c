/*
 * demo_many.c - many-to-one delivery: every rank but 0 sends to rank 0, which
 * counts and checks everything it receives.
 *
 *   shmamrun -n P [-a ALG] build/bench/demo_many [--msgs K] [--bulk N] [--header]
 *
 * Short round: ranks 1..P-1 each send K requests carrying (sender rank, sequence
 * number) as fast as am_request lets them (it backs off and polls while rank 0's
 * queue is full).  Rank 0 busy-polls until it has handled (P-1)*K messages and
 * checks that each came from the rank it names and that each sender's sequence
 * numbers arrive in order 0, 1, 2 ... with none missing or repeated.  Time runs
 * on rank 0 from leaving the start barrier to handling the last message.
 * Bulk round: each sender sends N bulk requests of AM_MAX_BULK (8 KB) bytes of
 * pseudo-random data, with (sender, sequence, FNV-1a checksum) as arguments;
 * rank 0 recomputes the checksum of the data it sees and checks order as above.
 *
 * Rank 0 prints four rows of the common schema (the header first with --header)
 *   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 * with bench "demo_many", iters the messages per sender of the round (K or N)
 * and metrics short_seconds, short_msgs_per_s, bulk_seconds and bulk_MBps
 * (no spread: each round runs once).  It prints them only when every check of
 * both rounds passed; otherwise rank 0 says what failed on stderr and exits 1.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shmam.h"
#include "common/am_algs.h"
#include "common/am_harness.h"
#include "common/measure.h"

#define H_SHORT 1
#define H_BULK 2
#define MAX_PROCS 1024

struct tally {
    unsigned long got, misordered, wrong_source, bad_checksum, bad_size;
    uint32_t next[MAX_PROCS]; /* next sequence number expected per sender */
};

static struct tally shorts, bulks; /* rank 0's counts, by round */
static int rank;

static uint32_t fnv1a(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* Data of bulk message `seq` of `sender`: xorshift32 words from a seed. */
static void fill(uint32_t *w, size_t words, uint32_t sender, uint32_t seq)
{
    uint32_t x = sender * 2654435761u ^ (seq + 1) * 40503u ^ 0x9e3779b9u;
    for (size_t i = 0; i < words; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        w[i] = x;
    }
}

/* Count one message of (sender, seq) arriving from rank `source`. */
static void count(struct tally *t, unsigned source, const uint32_t *args, int nargs)
{
    t->got++;
    if (nargs < 2 || args[0] != source || source >= MAX_PROCS) {
        t->wrong_source++;
        return;
    }
    if (args[1] != t->next[source])
        t->misordered++;
    t->next[source] = args[1] + 1;
}

static void on_short(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                     size_t len)
{
    count(&shorts, am_token_source(tok), args, nargs);
}

static void on_bulk(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                    size_t len)
{
    count(&bulks, am_token_source(tok), args, nargs);
    if (len != AM_MAX_BULK || nargs != 3)
        bulks.bad_size++;
    else if (fnv1a(data, len) != args[2])
        bulks.bad_checksum++;
}

/* Rank 0: poll until `t` has counted `want` messages; returns the seconds since
 * `t0`.  Yields after a short empty spin: senders may share our CPU. */
static double receive(am_ep_t *ep, const struct tally *t, unsigned long want, double t0)
{
    unsigned spins = 0;
    while (t->got < want) {
        int n = am_poll(ep);
        if (n < 0)
            bm_die("am_poll", n);
        if (n > 0)
            spins = 0;
        else if (++spins >= 64) {
            spins = 0;
            sched_yield();
        }
    }
    return bm_now_s() - t0;
}

static void send_shorts(am_ep_t *ep, long k)
{
    for (long i = 0; i < k; i++) {
        uint32_t a[2] = {(uint32_t)rank, (uint32_t)i};
        bm_check(am_request(ep, 0, H_SHORT, a, 2), "am_request");
    }
}

static void send_bulks(am_ep_t *ep, long n)
{
    static uint32_t buf[AM_MAX_BULK / sizeof(uint32_t)];
    for (long i = 0; i < n; i++) {
        fill(buf, AM_MAX_BULK / sizeof(uint32_t), (uint32_t)rank, (uint32_t)i);
        uint32_t a[3] = {(uint32_t)rank, (uint32_t)i,
                         fnv1a((const unsigned char *)buf, sizeof buf)};
        bm_check(am_request_bulk(ep, 0, H_BULK, buf, sizeof buf, a, 3), "am_request_bulk");
    }
}

/* Rank 0: did round `t` get exactly `per` messages from every sender, in order? */
static int verify(const char *round, const char *claim, const struct tally *t, long per,
                  int procs)
{
    int ok = t->got == (unsigned long)per * (unsigned long)(procs - 1) && !t->misordered &&
             !t->wrong_source && !t->bad_checksum && !t->bad_size;
    for (int r = 1; r < procs; r++)
        ok &= t->next[r] == (uint32_t)per;
    if (!ok)
        fprintf(stderr,
                "demo_many: FAILED (%s, %s round): %lu messages of %ld expected, %lu out "
                "of order, %lu with a wrong source, %lu bad checksums, %lu bad sizes\n",
                claim, round, t->got, per * (procs - 1), t->misordered, t->wrong_source,
                t->bad_checksum, t->bad_size);
    return ok;
}

/* Is this process bound to a single CPU (shmamrun --bind)? */
static int pinned(void)
{
    return bm_pinned_cpu() >= 0;
}

static void row(const char *claim, const char *shm, int procs, long iters,
                const char *metric, double value, const char *unit)
{
    printf("demo_many,%s,%s,%d,%d,%ld,%s,%.*f,%s,\n", claim, shm, procs, pinned(), iters,
           metric, value < 100 ? 6 : 1, value, unit);
}

/* Rank 0, once every check passed: the four rows of both rounds. */
static void report(const char *claim, const char *shm, int procs, int header, long k,
                   double t_short, long nbulk, double t_bulk)
{
    double ms = (double)k * (procs - 1), mb = (double)nbulk * (procs - 1) * AM_MAX_BULK;
    if (header)
        printf("# bench,impl,shm,procs,pinned,iters,metric,value,unit,spread\n");
    row(claim, shm, procs, k, "short_seconds", t_short, "s");
    row(claim, shm, procs, k, "short_msgs_per_s", t_short > 0 ? ms / t_short : 0, "msg/s");
    row(claim, shm, procs, nbulk, "bulk_seconds", t_bulk, "s");
    row(claim, shm, procs, nbulk, "bulk_MBps", t_bulk > 0 ? mb / t_bulk / 1e6 : 0, "MB/s");
}

/* Prints the usage to f and exits with status: stdout and 0 for --help,
 * stderr and 2 for a bad command line. */
static void usage(FILE *f, int status)
{
    fprintf(f, "usage: shmamrun -n P [-a ALG] demo_many [--msgs K] [--bulk N] "
               "[--header]\n");
    exit(status);
}

static long arg_long(const char *s, const char *opt)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : -1;
    if (!s || *end || v < 0) {
        fprintf(stderr, "demo_many: %s needs an integer >= 0\n", opt);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    am_ep_t *ep;
    long k = 100000, nbulk = 1000;
    int header = 0;
    ep = bm_am_init("demo_many", &argc, &argv);
    rank = am_rank();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--msgs") == 0)
            k = arg_long(argv[++i], "--msgs");
        else if (strcmp(argv[i], "--bulk") == 0)
            nbulk = arg_long(argv[++i], "--bulk");
        else if (!bm_common_flag(argv[i], &header, NULL))
            usage(stderr, 2);
    }
    int procs = am_nprocs();
    if (procs < 2 || procs > MAX_PROCS)
        bm_die("run me with 2 or more ranks (shmamrun -n 4)", 0);
    bm_check(am_set_handler(ep, H_SHORT, on_short), "am_set_handler");
    bm_check(am_set_handler(ep, H_BULK, on_bulk), "am_set_handler");
    const char *claim = bm_algs_name_of(ep), *shm = getenv("SHMAM_SHM");
    shm = shm && *shm ? shm : "posix";

    double t_short = 0, t_bulk = 0;
    bm_check(am_barrier(ep), "am_barrier");
    if (rank == 0)
        t_short =
            receive(ep, &shorts, (unsigned long)k * (unsigned long)(procs - 1), bm_now_s());
    else
        send_shorts(ep, k);
    bm_check(am_barrier(ep), "am_barrier");
    if (rank == 0)
        t_bulk = receive(ep, &bulks, (unsigned long)nbulk * (unsigned long)(procs - 1),
                         bm_now_s());
    else
        send_bulks(ep, nbulk);

    int ok = 1;
    if (rank == 0) {
        int short_ok = verify("short", claim, &shorts, k, procs);
        int bulk_ok = verify("bulk", claim, &bulks, nbulk, procs);
        unsigned long bad = am_ep_bad_packets(ep);
        if (bad)
            fprintf(stderr, "demo_many: FAILED (%s): %lu bad packets\n", claim, bad);
        ok = short_ok && bulk_ok && !bad;
        if (ok)
            report(claim, shm, procs, header, k, t_short, nbulk, t_bulk);
        fflush(stdout);
    }
    bm_check(am_finalize(ep), "am_finalize");
    return !ok;
}
