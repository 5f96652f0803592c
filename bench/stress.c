/*
 * stress.c - the many-to-one communication stress test of Lumetta & Culler,
 * section 4.2 and Table 2: W writers send integers to one reader, for every
 * claim algorithm (or per-sender queue kind) of --algs in one job, interleaved.
 *
 *   shmamrun -n W+1 [--bind] [-a ALG] build/bench/stress [--algs LIST]
 *       [--seconds T | --total N] [--rounds R] [--quick] [--header] [--verbose]
 *
 * Endpoints.  Ranks 1..W are the writers, rank 0 the reader.  Each algorithm
 * of --algs (comma-separated claim algorithms and queue kinds, all, channels,
 * as bench/common/am_algs.h says; default the job's own, shmamrun -a) has
 * its own endpoint on every rank (bench/common/am_algs.h); all traffic of an
 * algorithm's runs, its start gate included, goes through its endpoints.  The
 * job endpoint only opens and closes the job.
 *
 * A run.  The reader reads the clock (t0) and sends each writer a "go"
 * request carrying t0: no writer sends before the reader's clock has started.
 * A writer waits for it asleep (am_wait), so that writers between runs take
 * no CPU from the reader or from each other.  Writer w then sends integers, one short
 * request each with two arguments, its own sequence number s (0, 1, 2 ...) and the value (w
 * - 1) + W s (so the writers together send 0, 1, 2 ... in turn), as fast as am_request
 * returns (while the queue is full it backs off and polls inside the
 * runtime).  With --seconds T (default 1) it stops once T seconds have passed
 * since t0, reading the clock every 64 sends (so each writer sends at least
 * 64); with --total N it sends its share of N (N / W, one more for each of the
 * first N % W writers).  Then it sends an "end" request carrying its count and
 * the sum of its values, which per-sender order delivers after its last
 * integer.  The reader busy-polls with am_poll, as in the paper (not am_wait,
 * which would sleep); after 64 empty polls in a row it yields the processor,
 * because with W = 3 or 7 on a 2-core machine the writers it waits for may
 * need its CPU.  It polls until every writer has ended.  A run's time runs
 * from t0 to the last integer: the reader reads the clock every 64 productive
 * polls (and at every yield) and, once past t0 + T (or once all N have
 * arrived), after every poll; the run's end is the first clock read after the
 * poll that handled the last integer.
 *
 * Checks, per run: from each writer exactly the count its end message names,
 * every sequence number in order, none missing or repeated, each with the
 * value it names, and the sum of its values equal to the writer's own; with
 * --total, each writer's share and a total sum of N (N - 1) / 2; no message
 * from a rank that is not a writer, no corrupt packet dropped.  A failure
 * prints "stress: FAILED ..." on stderr and exits 1 (shmamrun then stops the
 * job).  A stall is a failure too: if the reader hears no message for STALL_S
 * (10) seconds while some writer has not ended, it prints "stress: STALL: ..."
 * with the algorithm and every writer's count and exits 1.  A slow lock convoy
 * is a result (a low rate); a lost message is a failure, found well within
 * any time limit a script puts on the job.
 *
 * Estimator (bench/common/stat.h).  One unmeasured warm-up run per algorithm
 * (T / 10 or N / 10), then R rounds (--rounds, default 3; --repeat is a
 * synonym), each with one run per algorithm in ABBA order (forward in even
 * rounds, reversed in odd ones).  A run's figure is its mean, time over
 * integers; a row's value is the median over the rounds, its spread the
 * lowest and highest round.  --quick: T = 0.05 s, R = 1.
 *
 * Rows (rank 0; the header line first with --header), in the common schema
 * of shmam's benchmarks, for each algorithm ALG:
 *   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 *   stress,ALG,SHM,W+1,PINNED,I,s_per_1e6,S,s,LO-HI           seconds per 10^6 integers
 *   stress,ALG,SHM,W+1,PINNED,I,msgs_per_s,M,msgs/s,LO-HI     integers per second
 *   stress,ALG,SHM,W+1,PINNED,I,run_seconds,D,s,LO-HI         a run's duration
 *   stress,ALG,SHM,W+1,PINNED,I,msgs_per_poll,P,ratio,LO-HI   integers per productive poll
 *   stress,ALG,SHM,W+1,PINNED,I,s_per_1e6_vs_lockfree,Q,ratio,LO-HI
 * The last only for ALG other than lockfree when lockfree is measured too: per
 * round, ALG's s_per_1e6 over lockfree's of the same round, then median and
 * spread.  I, the iterations, is the integers delivered in ALG's median run
 * (by s_per_1e6; of two middle runs the lower): N with --total.  s_per_1e6 is
 * the unit of the paper's Table 2 (seconds for 10^6 integers).  msgs_per_poll
 * is the paper's "gap reduction", which lets the lock-free claim speed up
 * with more writers.  PINNED is 1 when the reader is bound to one CPU
 * (shmamrun --bind binds every rank or none); on this 2-core machine W = 3 and
 * 7 share cores either way, the multiprogrammed regime in which the paper sees
 * spin locks fall behind.  --verbose prints every run on stderr.
 */
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmam.h"
#include "common/am_algs.h"
#include "common/am_harness.h"
#include "common/measure.h"
#include "common/stat.h"

#define H_INT 1
#define H_END 2
#define H_GO 3
#define MAX_WRITERS 1023
#define MAX_ROUNDS 101
#define YIELD_AFTER 64 /* empty polls before the reader yields its CPU */
#define CLOCK_EVERY 64 /* sends (writer) or productive polls (reader) per clock read */
#define STALL_S 10.0   /* seconds without a message before the reader gives up */

struct opts {
    double seconds;      /* a run's duration; 0 with --total */
    unsigned long total; /* --total N, else 0 */
    int rounds, header, verbose;
    const char *algs;
};

/* What one run asks for, and a name for it in messages. */
struct runspec {
    double seconds;      /* 0: count mode */
    unsigned long total; /* count mode: integers in all */
    char label[32];      /* "warm-up" or "round K" */
};

/* One measured run, as the reader saw it. */
struct run {
    double elapsed; /* s, t0 to the last integer */
    unsigned long got, polls;
};

/* The reader's tally of one run; only the reader touches it (in handlers). */
struct tally {
    unsigned long msgs, got, misordered, wrong_value, wrong_source, ends;
    struct {
        uint32_t next, count; /* next sequence number expected; count its end names */
        int ended;
        unsigned long got;
        uint64_t sum, claimed; /* of the values that arrived; the writer's own */
    } w[MAX_WRITERS + 1];
};

static struct tally tally;
static am_ep_t *ep;         /* the job's endpoint: opens and closes the job */
static struct bm_algs algs; /* an endpoint per algorithm measured */
static int rank, writers;
static int go;       /* writer: the go of the next run has arrived */
static double go_t0; /* writer: the reader's t0 it carried */

/* The value writer w sends with sequence number s: the writers take turns
 * through 0, 1, 2 ... (modulo 2^32). */
static uint32_t value(unsigned w, uint32_t s)
{
    return (uint32_t)(w - 1) + (uint32_t)writers * s;
}

/* Writer w's share of n integers in count mode. */
static unsigned long share(int w, unsigned long n)
{
    unsigned long q = n / (unsigned long)writers, r = n % (unsigned long)writers;
    return q + ((unsigned long)(w - 1) < r);
}

/* Reader: one integer (seq, value) from a writer. */
static void on_int(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    unsigned src = am_token_source(tok);
    tally.msgs++;
    tally.got++;
    if (nargs != 2 || src < 1 || src > (unsigned)writers) {
        tally.wrong_source++;
        return;
    }
    if (args[0] != tally.w[src].next || tally.w[src].ended)
        tally.misordered++;
    if (args[1] != value(src, args[0]))
        tally.wrong_value++;
    tally.w[src].next = args[0] + 1;
    tally.w[src].got++;
    tally.w[src].sum += args[1];
}

/* Reader: a writer has sent its last integer; args: its count, the sum of its
 * values (low and high word). */
static void on_end(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    unsigned src = am_token_source(tok);
    tally.msgs++;
    if (nargs != 3 || src < 1 || src > (unsigned)writers || tally.w[src].ended) {
        tally.wrong_source++;
        return;
    }
    tally.w[src].ended = 1;
    tally.w[src].count = args[0];
    tally.w[src].claimed = (uint64_t)args[2] << 32 | args[1];
    tally.ends++;
}

/* Writer: the reader's start gate; args: t0 in ns (low and high word). */
static void on_go(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    if (nargs == 2 && am_token_source(tok) == 0) {
        go_t0 = (double)((uint64_t)args[1] << 32 | args[0]) / 1e9;
        go = 1;
    }
}

/* Reader, when no message came for STALL_S seconds: say who has sent what. */
static void stall(am_ep_t *e, const struct runspec *rs)
{
    fprintf(stderr,
            "stress: STALL: %s, %d writers, %s: no message for %.0f s after %lu integers, "
            "%lu of %d writers ended; integers per writer:",
            bm_algs_name_of(e), writers, rs->label, STALL_S, tally.got, tally.ends,
            writers);
    for (int w = 1; w <= writers; w++)
        fprintf(stderr, "%s %d: %lu%s", w > 1 ? "," : "", w, tally.w[w].got,
                tally.w[w].ended ? " ended" : " NOT ENDED");
    fprintf(stderr, "\n");
    exit(1);
}

/* Reader: start a run on e (t0, then a go to every writer) and poll until
 * every writer has ended; returns the seconds from t0 to the last integer
 * (the first clock read after the poll that handled it, at the latest the one
 * after the loop: the poll that ran the last end message).  Gives up loudly if
 * nothing arrives for STALL_S seconds. */
static double receive(am_ep_t *e, const struct runspec *rs, unsigned long *polls)
{
    double t0 = bm_now_s(), last = t0, quiet_since = t0;
    double deadline = rs->seconds > 0 ? t0 + rs->seconds : HUGE_VAL;
    unsigned long want = rs->seconds > 0 ? ULONG_MAX : rs->total, seen = 0, heard = 0;
    uint64_t ns = (uint64_t)(t0 * 1e9);
    uint32_t a[2] = {(uint32_t)ns, (uint32_t)(ns >> 32)};
    unsigned empty = 0, busy = 0;
    int tail = 0;

    for (int w = 1; w <= writers; w++) {
        bm_check(am_request(e, (unsigned)w, H_GO, a, 2), "am_request (go)");
    }
    while (tally.ends < (unsigned long)writers) {
        int n = am_poll(e);
        if (n < 0)
            bm_die("am_poll", n);
        if (n > 0) {
            ++*polls;
            empty = 0;
            if (!tail && tally.got != want && ++busy % CLOCK_EVERY)
                continue;
        } else if (++empty < YIELD_AFTER) {
            continue;
        } else {
            empty = 0;
            sched_yield();
        }
        double t = bm_now_s();
        tail = tail || t >= deadline;
        if (tally.got != seen) {
            seen = tally.got;
            last = t;
        }
        if (tally.msgs != heard) {
            heard = tally.msgs;
            quiet_since = t;
        } else if (t - quiet_since > STALL_S) {
            stall(e, rs);
        }
    }
    if (tally.got != seen) /* integers handled since the last clock read */
        last = bm_now_s();
    return last - t0;
}

/* Writer: wait for the go on e (sleeping), send integers until T has passed since the
 * reader's t0 (or this rank's share of N), then the end message. */
static void send_run(am_ep_t *e, const struct runspec *rs)
{
    while (!go) { /* asleep: an idle writer takes no CPU from a run */
        int n = am_wait(e, 1000);
        if (n < 0)
            bm_die("am_wait", n);
    }
    go = 0; /* the next go comes only after the reader has our end message */
    double deadline = go_t0 + rs->seconds;
    unsigned long max = rs->seconds > 0 ? UINT32_MAX : share(rank, rs->total), s;
    uint64_t sum = 0;
    for (s = 0; s < max; s++) {
        if (rs->seconds > 0 && s > 0 && s % CLOCK_EVERY == 0 && bm_now_s() >= deadline)
            break;
        uint32_t a[2] = {(uint32_t)s, value((unsigned)rank, (uint32_t)s)};
        bm_check(am_request(e, 0, H_INT, a, 2), "am_request");
        sum += a[1];
    }
    uint32_t end[3] = {(uint32_t)s, (uint32_t)sum, (uint32_t)(sum >> 32)};
    bm_check(am_request(e, 0, H_END, end, 3), "am_request (end)");
}

/* Reader, after a run: did it deliver exactly what each writer says it sent? */
static int verify(am_ep_t *e, const struct runspec *rs)
{
    unsigned long off = 0, bad = am_ep_bad_packets(e), counted = 0;
    uint64_t sum = 0, n = rs->total, want_sum = n % 2 ? n * ((n - 1) / 2) : n / 2 * (n - 1);
    for (int w = 1; w <= writers; w++) {
        counted += tally.w[w].count;
        sum += tally.w[w].sum;
        off += tally.w[w].got != tally.w[w].count || tally.w[w].next != tally.w[w].count ||
               tally.w[w].sum != tally.w[w].claimed ||
               (rs->seconds == 0 && tally.w[w].count != share(w, rs->total));
    }
    int counts_ok = rs->seconds > 0 || (tally.got == rs->total && sum == want_sum);
    if (counts_ok && tally.got == counted && !off && !tally.misordered &&
        !tally.wrong_value && !tally.wrong_source && !bad)
        return 1;
    fprintf(stderr,
            "stress: FAILED (%s, %d writers, %s): %lu integers (the writers sent %lu), "
            "%lu out of order, %lu with a wrong value, %lu from a wrong source or a "
            "second end, %lu writers whose count or sum is not what they sent",
            bm_algs_name_of(e), writers, rs->label, tally.got, counted, tally.misordered,
            tally.wrong_value, tally.wrong_source, off);
    if (rs->seconds == 0)
        fprintf(stderr, " or not their share, sum %llu (want %llu)",
                (unsigned long long)sum, (unsigned long long)want_sum);
    fprintf(stderr, ", %lu bad packets\n", bad);
    return 0;
}

/* One run of algorithm i, both sides; the reader's figures in *r. */
static void one_run(int i, const struct runspec *rs, const struct opts *o, struct run *r)
{
    am_ep_t *e = algs.ep[i];
    if (rank != 0) {
        send_run(e, rs);
        return;
    }
    memset(&tally, 0, sizeof tally);
    unsigned long polls = 0;
    double s = receive(e, rs, &polls);
    if (!verify(e, rs))
        exit(1); /* without the closing barrier: shmamrun stops the rest */
    *r = (struct run){s, tally.got, polls};
    if (o->verbose)
        fprintf(stderr,
                "stress: %s, %d writers, %s: %lu integers in %.4f s, %.4f s per 1e6, "
                "%.2f per poll\n",
                algs.name[i], writers, rs->label, tally.got, s, s / (double)tally.got * 1e6,
                (double)tally.got / (double)polls);
}

/* The index of the run whose figure is the median of v[0..n-1] (of two middle
 * ones the lower). */
static int median_run(const double *v, int n)
{
    int below[MAX_ROUNDS];
    for (int k = 0; k < n; k++) {
        below[k] = 0;
        for (int j = 0; j < n; j++)
            below[k] += v[j] < v[k] || (v[j] == v[k] && j < k);
    }
    for (int k = 0; k < n; k++)
        if (below[k] == (n - 1) / 2)
            return k;
    return 0;
}

/* The rows (rank 0): res[alg][round]. */
static void report(const struct opts *o, struct run res[][MAX_ROUNDS])
{
    int n = o->rounds, lf = -1;
    static double spm[BM_MAX_ALGS][MAX_ROUNDS];
    double rate[MAX_ROUNDS], secs[MAX_ROUNDS], per_poll[MAX_ROUNDS];
    const char *shm = getenv("SHMAM_SHM");
    struct bm_row row = {stdout, "stress", shm && *shm ? shm : "posix", writers + 1,
                         bm_pinned_cpu() >= 0};

    for (int i = 0; i < algs.n; i++) {
        for (int k = 0; k < n; k++)
            spm[i][k] = res[i][k].elapsed / (double)res[i][k].got * 1e6;
        if (strcmp(algs.name[i], "lockfree") == 0)
            lf = i;
    }
    if (o->header)
        bm_print_header(stdout);
    for (int i = 0; i < algs.n; i++) {
        const char *a = algs.name[i];
        long iters = (long)res[i][median_run(spm[i], n)].got;
        for (int k = 0; k < n; k++) {
            struct run *r = &res[i][k];
            secs[k] = r->elapsed;
            rate[k] = r->elapsed > 0 ? (double)r->got / r->elapsed : 0.0;
            per_poll[k] = r->polls ? (double)r->got / (double)r->polls : 0.0;
        }
        bm_print(&row, a, iters, "s_per_1e6", bm_stat_of(spm[i], n), "s", 4);
        bm_print(&row, a, iters, "msgs_per_s", bm_stat_of(rate, n), "msgs/s", 0);
        bm_print(&row, a, iters, "run_seconds", bm_stat_of(secs, n), "s", 4);
        bm_print(&row, a, iters, "msgs_per_poll", bm_stat_of(per_poll, n), "ratio", 2);
        if (lf >= 0 && i != lf)
            bm_print(&row, a, iters, "s_per_1e6_vs_lockfree",
                     bm_stat_ratio(spm[i], spm[lf], n), "ratio", 3);
    }
    fflush(stdout);
}

/* Prints the usage to f and exits with status: stdout and 0 for --help,
 * stderr and 2 for a bad command line. */
static void usage(FILE *f, int status)
{
    fprintf(f,
            "usage: shmamrun -n W+1 [--bind] [-a ALG] stress [--algs ALG,...|all|channels] "
            "[--seconds T | --total N] [--rounds R] [--quick] [--header] "
            "[--verbose]\n");
    exit(status);
}

static double arg_num(const char *s, const char *opt, double min, double max)
{
    char *end;
    double v = s ? strtod(s, &end) : 0;
    if (!s || end == s || *end || !(v >= min && v <= max)) {
        fprintf(stderr, "stress: %s needs a number in %g..%g\n", opt, min, max);
        exit(2);
    }
    return v;
}

static struct opts parse(int argc, char **argv)
{
    struct opts o = {.seconds = 1.0, .rounds = 3};
    double seconds = 0;
    int rounds = 0;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "--seconds") == 0)
            seconds = arg_num(argv[++i], opt, 0.001, 3600);
        else if (strcmp(opt, "--total") == 0)
            o.total = (unsigned long)arg_num(argv[++i], opt, 1, UINT32_MAX);
        else if (strcmp(opt, "--rounds") == 0 || strcmp(opt, "--repeat") == 0)
            rounds = (int)arg_num(argv[++i], opt, 1, MAX_ROUNDS);
        else if (strcmp(opt, "--algs") == 0 && argv[i + 1])
            o.algs = argv[++i];
        else if (strcmp(opt, "--quick") == 0)
            o.seconds = 0.05, o.rounds = 1;
        else if (!bm_common_flag(opt, &o.header, &o.verbose))
            usage(stderr, 2);
    }
    if (seconds > 0 && o.total) {
        fprintf(stderr, "stress: --seconds and --total exclude each other\n");
        exit(2);
    }
    if (seconds > 0)
        o.seconds = seconds;
    if (o.total)
        o.seconds = 0;
    if (rounds)
        o.rounds = rounds;
    return o;
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    ep = bm_am_init("stress", &argc, &argv);
    rank = am_rank();
    struct opts o = parse(argc, argv);
    writers = am_nprocs() - 1;
    if (writers < 1 || writers > MAX_WRITERS)
        bm_die("run me with 2 or more ranks (shmamrun -n W+1)", 0);
    if (bm_algs_parse(o.algs ? o.algs : bm_algs_name_of(ep), &algs) != 0)
        exit(2);
    const struct bm_handler h[] = {{H_INT, on_int}, {H_END, on_end}, {H_GO, on_go}};
    bm_check(bm_algs_open(ep, &algs, h, 3), "cannot make the endpoints per algorithm");

    static struct run res[BM_MAX_ALGS][MAX_ROUNDS];
    struct run scratch;
    struct runspec warm = {o.seconds / 10, o.total / 10, "warm-up"};
    if (warm.seconds == 0 && warm.total < (unsigned long)writers)
        warm.total = (unsigned long)writers;
    for (int i = 0; i < algs.n; i++)
        one_run(i, &warm, &o, &scratch);
    for (int k = 0; k < o.rounds; k++) {
        struct runspec rs = {o.seconds, o.total, ""};
        snprintf(rs.label, sizeof rs.label, "round %d", k);
        for (int j = 0; j < algs.n; j++) {
            int i = bm_abba(k, j, algs.n);
            one_run(i, &rs, &o, &res[i][k]);
        }
    }
    if (rank == 0)
        report(&o, res);
    bm_algs_close(ep, &algs);
    bm_check(am_finalize(ep), "am_finalize");
    return 0;
}
