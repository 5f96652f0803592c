/*
 * stress.c - the many-to-one communication stress test of Lumetta & Culler,
 * section 4.2 and Table 2: W writers send a total of N integers to one reader.
 *
 *   shmamrun -n W+1 [--bind] -a ALG build/bench/stress [--total N] [--quick]
 *                                     [--repeat R] [--header] [--verbose]
 *
 * Method.  Ranks 1..W are the writers, rank 0 the reader.  The N integers
 * 0 .. N-1 (default N = 1,000,000; --quick 20,000) are split into W contiguous
 * runs, N / W each and one more for each of the first N % W writers.  Writer w
 * sends its run in order, one short request per integer carrying two arguments:
 * its own sequence number (0, 1, 2 ...) and the integer.  The reader busy-polls
 * with am_poll, as in the paper (not am_wait, which would sleep); after 64 empty
 * polls in a row it yields the processor, because with W = 3 or 7 on a 2-core
 * machine the writers it waits for may need its CPU.  The writers simply call
 * am_request as fast as it returns; while the queue is full it backs off and
 * polls inside the runtime.
 *
 * Time runs on the reader from leaving a barrier (the start gate: no writer
 * sends before the reader has released it from that barrier) to handling the
 * N-th integer.  After its share each writer sends one "done" message (no
 * arguments), which per-sender order delivers after its last integer: the
 * reader also stops polling once every writer is done, so a lost integer fails
 * the run at once instead of leaving the reader waiting.  A second barrier
 * then closes the run; since each writer's barrier message follows its
 * integers in the same queue, every message of the run has been handled when
 * it returns, and only then are the counts checked:
 *   - exactly N integers arrived, and from each writer exactly its share;
 *   - each writer's sequence numbers arrived exactly in order, none missing or
 *     repeated, and each carried the integer its sequence number names;
 *   - the integers sum to N (N - 1) / 2, and no corrupt packet was dropped.
 * Any failure (or no progress for STALL_S seconds) prints "stress: FAILED ..."
 * on stderr and exits 1; shmamrun then fails the job.
 *
 * --repeat R runs the test R times in one job (a barrier between runs) and
 * reports the median, with the lowest and highest run as the spread.
 *
 * Rows (rank 0; the header line first with --header), in the common schema of
 * shmam's benchmarks:
 *   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 *   stress,ALG,SHM,W+1,PINNED,N,seconds,S,s,LO-HI
 *   stress,ALG,SHM,W+1,PINNED,N,msgs_per_s,N/S,msgs/s,LO-HI
 *   stress,ALG,SHM,W+1,PINNED,N,msgs_per_poll,M,ratio,LO-HI
 *   stress,ALG,SHM,W+1,PINNED,N,writers,W,count,
 * PINNED is 1 when the reader is bound to one CPU (shmamrun --bind binds every
 * rank or none); on this 2-core machine W = 3 and 7 share cores either way,
 * the multiprogrammed regime in which the paper sees spin locks fall behind.
 * msgs_per_poll is the mean number of integers one productive am_poll handled:
 * the paper's "gap reduction", which lets the lock-free claim speed up with
 * more writers.  The spread is empty for a single run.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shmam.h"
#include "common/measure.h"

#define H_INT 1
#define H_DONE 2
#define MAX_WRITERS 1023
#define MAX_REPEAT 101
#define YIELD_AFTER 64 /* empty polls before the reader yields its CPU */
#define STALL_S 60.0   /* seconds without a message before the reader gives up */

struct opts {
    unsigned long total;
    int repeat, header, verbose;
};

/* The reader's tally of one run; only the reader touches it (in handlers). */
struct tally {
    unsigned long got, polls, misordered, wrong_value, wrong_source, done;
    unsigned long long sum;
    uint32_t next[MAX_WRITERS + 1]; /* next sequence number expected per writer */
};

static struct tally tally;
static int rank, writers;
static unsigned long total;

static void die(const char *what, int err)
{
    fprintf(stderr, "stress: rank %d: %s%s%s\n", rank, what, err ? ": " : "",
            err ? am_strerror(err) : "");
    exit(1);
}

/* Writer w's share of the N integers: how many, and the first one. */
static unsigned long share(int w)
{
    unsigned long q = total / (unsigned long)writers, r = total % (unsigned long)writers;
    return q + ((unsigned long)(w - 1) < r);
}

static unsigned long first(int w)
{
    unsigned long q = total / (unsigned long)writers, r = total % (unsigned long)writers;
    unsigned long before = (unsigned long)(w - 1);
    return before * q + (before < r ? before : r);
}

/* One integer (seq, value) from rank `source`. */
static void on_int(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    unsigned src = am_token_source(tok);
    tally.got++;
    if (nargs != 2 || src < 1 || src > (unsigned)writers) {
        tally.wrong_source++;
        return;
    }
    if (args[0] != tally.next[src])
        tally.misordered++;
    if (args[1] != (uint32_t)(first((int)src) + args[0]))
        tally.wrong_value++;
    tally.next[src] = args[0] + 1;
    tally.sum += args[1];
}

/* A writer has sent its whole share (this message follows it in the queue). */
static void on_done(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                    size_t len)
{
    tally.done++;
}

/* Reader: poll until all N integers of this run have been handled, or every
 * writer has said it is done (then some are missing: verify() says so);
 * returns the seconds since t0.  Gives up loudly if nothing arrives for
 * STALL_S seconds. */
static double receive(am_ep_t *ep, double t0)
{
    unsigned empty = 0;
    unsigned long seen = 0;
    double last = t0;
    while (tally.got < total && tally.done < (unsigned long)writers) {
        int n = am_poll(ep);
        if (n < 0)
            die("am_poll", n);
        if (n > 0) {
            tally.polls++;
            empty = 0;
            continue;
        }
        if (++empty < YIELD_AFTER)
            continue;
        empty = 0;
        sched_yield();
        double t = bm_now_s();
        if (tally.got != seen) {
            seen = tally.got;
            last = t;
        } else if (t - last > STALL_S) {
            fprintf(stderr,
                    "stress: FAILED (%s): stalled for %.0f s after %lu of %lu "
                    "integers\n",
                    am_ep_claim(ep), STALL_S, tally.got, total);
            exit(1);
        }
    }
    return bm_now_s() - t0;
}

/* Writer: send this rank's share, in order. */
static void send_share(am_ep_t *ep)
{
    unsigned long n = share(rank), base = first(rank);
    for (unsigned long i = 0; i < n; i++) {
        uint32_t a[2] = {(uint32_t)i, (uint32_t)(base + i)};
        int rc = am_request(ep, 0, H_INT, a, 2);
        if (rc < 0)
            die("am_request", rc);
    }
    int rc = am_request(ep, 0, H_DONE, NULL, 0);
    if (rc < 0)
        die("am_request", rc);
}

/* Reader, after the closing barrier: did the run deliver exactly what was sent? */
static int verify(am_ep_t *ep, int run)
{
    unsigned long long n = total, want_sum = n % 2 ? n * ((n - 1) / 2) : n / 2 * (n - 1);
    unsigned long short_writers = 0, bad = am_ep_bad_packets(ep);
    for (int w = 1; w <= writers; w++)
        short_writers += tally.next[w] != (uint32_t)share(w);
    int ok = tally.got == total && tally.done == (unsigned long)writers &&
             !tally.misordered && !tally.wrong_value && !tally.wrong_source &&
             !short_writers && tally.sum == want_sum && !bad;
    if (!ok)
        fprintf(stderr,
                "stress: FAILED (%s, %d writers, run %d): %lu integers of %lu, %lu out "
                "of order, %lu with a wrong value, %lu from a wrong source, %lu writers "
                "not exactly complete, %lu of %d writers done, sum %llu (want %llu), "
                "%lu bad packets\n",
                am_ep_claim(ep), writers, run, tally.got, total, tally.misordered,
                tally.wrong_value, tally.wrong_source, short_writers, tally.done, writers,
                tally.sum, want_sum, bad);
    return ok;
}

/* Median, lowest and highest of v[0..n-1] (sorts v). */
static void stats(double *v, int n, double *med, double *lo, double *hi)
{
    *med = bm_median(v, n);
    *lo = v[0];
    *hi = v[n - 1];
}

/* Is this process bound to a single CPU? */
static int pinned(void)
{
    return bm_pinned_cpu() >= 0;
}

static void row(const char *pre, const char *metric, const char *fmt, double v,
                const char *unit, double lo, double hi, int spread)
{
    char val[64], sp[132] = "";
    snprintf(val, sizeof val, fmt, v);
    if (spread) {
        char a[64], b[64];
        snprintf(a, sizeof a, fmt, lo);
        snprintf(b, sizeof b, fmt, hi);
        snprintf(sp, sizeof sp, "%s-%s", a, b);
    }
    printf("%s,%s,%s,%s,%s\n", pre, metric, val, unit, sp);
}

static void report(am_ep_t *ep, const struct opts *o, double *secs, double *per_poll)
{
    int n = o->repeat, sp = n > 1;
    double rate[MAX_REPEAT], med, lo, hi;
    for (int i = 0; i < n; i++)
        rate[i] = (double)total / secs[i];
    const char *shm = getenv("SHMAM_SHM");
    char pre[160];
    snprintf(pre, sizeof pre, "stress,%s,%s,%d,%d,%lu", am_ep_claim(ep),
             shm && *shm ? shm : "posix", writers + 1, pinned(), total);
    if (o->header)
        printf("# bench,impl,shm,procs,pinned,iters,metric,value,unit,spread\n");
    stats(secs, n, &med, &lo, &hi);
    row(pre, "seconds", "%.4f", med, "s", lo, hi, sp);
    stats(rate, n, &med, &lo, &hi);
    row(pre, "msgs_per_s", "%.0f", med, "msgs/s", lo, hi, sp);
    stats(per_poll, n, &med, &lo, &hi);
    row(pre, "msgs_per_poll", "%.2f", med, "ratio", lo, hi, sp);
    printf("%s,writers,%d,count,\n", pre, writers);
    fflush(stdout);
}

/* Prints the usage to f and exits with status: stdout and 0 for --help,
 * stderr and 2 for a bad command line. */
static void usage(FILE *f, int status)
{
    fprintf(f, "usage: shmamrun -n W+1 [--bind] [-a ALG] stress [--total N] [--quick] "
               "[--repeat R] [--header] [--verbose]\n");
    exit(status);
}

static long arg_long(const char *s, const char *opt, long min, long max)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || *end || v < min || v > max) {
        fprintf(stderr, "stress: %s needs an integer in %ld..%ld\n", opt, min, max);
        exit(2);
    }
    return v;
}

static struct opts parse(int argc, char **argv)
{
    struct opts o = {.total = 1000000, .repeat = 1};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--total") == 0)
            o.total = (unsigned long)arg_long(argv[++i], "--total", 1, UINT32_MAX);
        else if (strcmp(argv[i], "--quick") == 0)
            o.total = 20000;
        else if (strcmp(argv[i], "--repeat") == 0)
            o.repeat = (int)arg_long(argv[++i], "--repeat", 1, MAX_REPEAT);
        else if (strcmp(argv[i], "--header") == 0)
            o.header = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            o.verbose = 1;
        else
            usage(stderr, 2);
    }
    return o;
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    am_ep_t *ep;
    int rc = am_init(&argc, &argv, &ep);
    if (rc < 0)
        die("am_init", rc);
    rank = am_rank();
    struct opts o = parse(argc, argv);
    writers = am_nprocs() - 1;
    total = o.total;
    if (writers < 1 || writers > MAX_WRITERS)
        die("run me with 2 or more ranks (shmamrun -n W+1)", 0);
    if ((rc = am_set_handler(ep, H_INT, on_int)) < 0 ||
        (rc = am_set_handler(ep, H_DONE, on_done)) < 0)
        die("am_set_handler", rc);

    double secs[MAX_REPEAT], per_poll[MAX_REPEAT];
    int ok = 1;
    for (int k = 0; k < o.repeat && ok; k++) {
        memset(&tally, 0, sizeof tally);
        if ((rc = am_barrier(ep)) < 0)
            die("am_barrier", rc);
        if (rank == 0)
            secs[k] = receive(ep, bm_now_s());
        else
            send_share(ep);
        if ((rc = am_barrier(ep)) < 0)
            die("am_barrier", rc);
        if (rank == 0) {
            ok = verify(ep, k);
            per_poll[k] = tally.polls ? (double)total / (double)tally.polls : 0.0;
            if (o.verbose)
                fprintf(stderr, "stress: %s, %d writers, run %d: %.4f s, %.2f per poll\n",
                        am_ep_claim(ep), writers, k, secs[k], per_poll[k]);
        }
    }
    if (rank == 0 && ok)
        report(ep, &o, secs, per_poll);
    /* A failed reader exits without the closing barrier; shmamrun stops the rest. */
    if (!ok)
        return 1;
    if ((rc = am_finalize(ep)) < 0)
        die("am_finalize", rc);
    return 0;
}
