/*
 * rtt.c - round-trip time of a short Active Message against a raw cache-line
 * ping-pong between the same two processes, in the same run.
 *
 *   shmamrun -n 2 --bind -a ALG build/bench/rtt [--iters N] [--warmup N]
 *                                               [--rounds R] [--header] [--verbose]
 *
 * Method.  Rank 0 measures two round trips, interleaved in R rounds (AM, then
 * raw, R times), so that both see the same machine state:
 *   AM   rank 0 sends a request with one argument (a sequence number) to rank 1,
 *        whose handler replies with the same argument; rank 0 busy-polls with
 *        am_poll until the reply has run.  Rank 1 busy-polls too (no am_wait).
 *   raw  two cache lines in a small POSIX segment of their own: rank 0
 *        release-stores a counter into the ping line and spins on an acquire
 *        load of the pong line until rank 1, spinning on the ping line, has
 *        echoed the counter back.  This is the floor any shared-memory message
 *        pays: one line to the other core and one line back.
 * Each round times N/R round trips of each kind after W warmup trips (W per
 * round and kind), reading CLOCK_MONOTONIC every BATCH (64) trips.  A round's
 * figure is the median of its batch means: on a machine busy with other work a
 * pinned rank is still preempted now and then, and one preemption (milliseconds,
 * while the partner spins) inflates a plain round mean many times over, whereas
 * it spoils only a batch or two.  On a quiet machine the two agree within a few
 * percent; --verbose prints both.  The row reports the median over the R rounds
 * and the AM spread (lowest..highest round), in microseconds.
 * am_vs_raw = AM median / raw median: how many raw round trips one AM round
 * trip costs.  The goal for `lockfree` is am_vs_raw <= 2: an AM round trip moves the same
 * two lines to and fro (the request packet, the reply packet) plus the claim and
 * the handler's work, so it should cost at most two raw round trips.
 *
 * Spinning: pause while waiting; if both ranks may share one CPU (not pinned
 * to distinct CPUs), yield after a short spin, and at once on a single CPU, so
 * that the waiter never burns the timeslice of the process it waits for.
 *
 * Checks: rank 1 counts requests and checks their sequence numbers; rank 0
 * counts replies and checks theirs; raw echoes must match.  Any mismatch exits
 * nonzero with a message.  Rank 0 prints three rows of the common schema
 *   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 * with metrics am_rtt and raw_rtt (us) and am_vs_raw (their ratio), each with
 * its spread over the rounds as LOW-HIGH (the header line first with
 * --header; --verbose adds every round's figures on stderr).
 *
 * The raw segment is named "/shmam-JOB.rtt"; rank 0 creates it, rank 1 opens it
 * after a barrier, and rank 0 unlinks it as soon as both have it mapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "shmam.h"
#include "common/measure.h"

#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "rtt needs AO_load_acquire and AO_store_release"
#endif

#define H_PING 1
#define H_PONG 2
#define MAX_ROUNDS 101

/* The raw ping-pong lines, each 64-byte aligned on its own 128-byte block (no
 * adjacent-line prefetch between them); then each rank's CPU, written before a
 * barrier, and rank 1's counts, written once at the end. */
struct raw {
    _Alignas(128) AO_t ping;   /* written by rank 0 only */
    _Alignas(128) AO_t pong;   /* written by rank 1 only */
    _Alignas(128) AO_t cpu[2]; /* each rank's CPU + 1 if pinned to one, else 0 */
    AO_t requests;             /* requests rank 1 handled */
    AO_t errors;               /* out-of-sequence requests rank 1 saw */
    AO_t bad;                  /* corrupt packets rank 1's endpoint dropped */
};

struct opts {
    long iters, warmup, rounds;
    int header, verbose;
};

static am_ep_t *ep;
static int rank;
static unsigned yield_after; /* empty spins before a yield */

/* Counters updated by the handlers; only the owning process touches them. */
static uint32_t next_request = 1; /* rank 1: sequence number expected next */
static unsigned long requests;    /* rank 1: requests handled */
static unsigned long errors;      /* out-of-sequence messages, both ranks */
static uint32_t last_reply;       /* rank 0: argument of the latest reply */
static unsigned long replies;     /* rank 0: replies handled */

static void die(const char *what, int err)
{
    fprintf(stderr, "rtt: rank %d: %s%s%s\n", rank, what, err ? ": " : "",
            err ? am_strerror(err) : "");
    exit(1);
}

static void on_ping(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                    size_t len)
{
    if (nargs != 1 || args[0] != next_request)
        errors++;
    next_request = nargs == 1 ? args[0] + 1 : next_request + 1;
    requests++;
    int rc = am_reply(tok, H_PONG, args, nargs);
    if (rc < 0)
        die("am_reply", rc);
}

static void on_pong(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                    size_t len)
{
    if (nargs != 1 || args[0] != last_reply + 1)
        errors++;
    last_reply = nargs == 1 ? args[0] : last_reply + 1;
    replies++;
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
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int poll_once(void)
{
    int n = am_poll(ep);
    if (n < 0)
        die("am_poll", n);
    return n;
}

/* Timing of one run of round trips: the overall mean, and the median over
 * batches of BATCH trips, which a preemption in the middle hardly moves. */
#define BATCH 64
struct timing {
    double mean, batch_median;
};
struct marks {
    double t0, last;
    double *batch; /* room for n / BATCH means */
    long n;
};
static double *batch_buf;

static void marks_start(struct marks *m)
{
    *m = (struct marks){.batch = batch_buf};
    m->t0 = m->last = bm_now_us();
}

static inline void marks_step(struct marks *m, long i)
{
    if ((i + 1) % BATCH == 0) {
        double t = bm_now_us();
        m->batch[m->n++] = (t - m->last) / BATCH;
        m->last = t;
    }
}

static struct timing marks_end(struct marks *m, long n)
{
    double mean = n > 0 ? (bm_now_us() - m->t0) / (double)n : 0.0;
    return (struct timing){mean, m->n ? bm_median(m->batch, (int)m->n) : mean};
}

/* Rank 0: `n` AM round trips. */
static struct timing am_trips(long n)
{
    struct marks m;
    marks_start(&m);
    for (long i = 0; i < n; i++) {
        uint32_t seq = last_reply + 1;
        unsigned long want = replies + 1;
        int rc = am_request(ep, 1, H_PING, &seq, 1);
        if (rc < 0)
            die("am_request", rc);
        for (unsigned spins = 0; replies < want;)
            if (poll_once() == 0)
                relax(&spins);
        marks_step(&m, i);
    }
    return marks_end(&m, n);
}

/* Rank 1: serve requests until `total` have been handled. */
static void am_serve(unsigned long total)
{
    for (unsigned spins = 0; requests < total;)
        if (poll_once() == 0)
            relax(&spins);
}

/* Rank 0: `n` raw round trips continuing from counter *c; the release store
 * pairs with rank 1's acquire load of ping, and rank 1's release store of pong
 * with our acquire load of it. */
static struct timing raw_trips(struct raw *r, long n, AO_t *c)
{
    struct marks m;
    marks_start(&m);
    for (long i = 0; i < n; i++) {
        AO_t v = ++*c;
        AO_store_release(&r->ping, v);
        unsigned spins = 0;
        AO_t got;
        while ((got = AO_load_acquire(&r->pong)) != v) {
            if (got > v)
                die("raw ping-pong echoed a value never sent", 0);
            relax(&spins);
        }
        marks_step(&m, i);
    }
    return marks_end(&m, n);
}

/* Rank 1: echo `n` raw pings continuing from counter *c (see raw_trips). */
static void raw_serve(struct raw *r, long n, AO_t *c)
{
    for (long i = 0; i < n; i++) {
        AO_t v = ++*c;
        unsigned spins = 0;
        AO_t got;
        while ((got = AO_load_acquire(&r->ping)) != v) {
            if (got > v)
                die("raw ping-pong skipped a value", 0);
            relax(&spins);
        }
        AO_store_release(&r->pong, v);
    }
}

/* The CPU this process is pinned to, or -1 if it may run on several. */
/* Create (rank 0) or open (rank 1) the raw segment, unlinking it once both
 * have it mapped, so that its name never outlives this function. */
static struct raw *raw_map(void)
{
    char name[80];
    const char *job = getenv("SHMAM_JOB");
    snprintf(name, sizeof name, "/shmam-%s.rtt", job ? job : "nojob");
    int fd = -1;
    if (rank == 0) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, sizeof(struct raw)) != 0)
            die("cannot create the raw segment", -errno);
    }
    int rc = am_barrier(ep);
    if (rc < 0)
        die("am_barrier", rc);
    if (rank == 1 && (fd = shm_open(name, O_RDWR, 0)) < 0)
        die("cannot open the raw segment", -errno);
    void *p = mmap(NULL, sizeof(struct raw), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        die("cannot map the raw segment", -errno);
    close(fd);
    if ((rc = am_barrier(ep)) < 0)
        die("am_barrier", rc);
    if (rank == 0 && shm_unlink(name) != 0)
        die("cannot unlink the raw segment", -errno);
    return p;
}

/* Prints the usage to f and exits with status: stdout and 0 for --help,
 * stderr and 2 for a bad command line. */
static void usage(FILE *f, int status)
{
    fprintf(f, "usage: shmamrun -n 2 [--bind] [-a ALG] rtt [--iters N] [--warmup N] "
               "[--rounds R] [--header] [--verbose]\n");
    exit(status);
}

static long arg_long(const char *s, const char *opt, long min)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || *end || v < min) {
        fprintf(stderr, "rtt: %s needs an integer >= %ld\n", opt, min);
        exit(2);
    }
    return v;
}

static struct opts parse(int argc, char **argv)
{
    struct opts o = {.iters = 100000, .warmup = 1000, .rounds = 5};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0)
            o.iters = arg_long(argv[++i], "--iters", 1);
        else if (strcmp(argv[i], "--warmup") == 0)
            o.warmup = arg_long(argv[++i], "--warmup", 0);
        else if (strcmp(argv[i], "--rounds") == 0)
            o.rounds = arg_long(argv[++i], "--rounds", 1);
        else if (strcmp(argv[i], "--header") == 0)
            o.header = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            o.verbose = 1;
        else
            usage(stderr, 2);
    }
    if (o.rounds > MAX_ROUNDS || o.iters < o.rounds) {
        fprintf(stderr, "rtt: need 1 <= rounds <= %d and rounds <= iters\n", MAX_ROUNDS);
        exit(2);
    }
    return o;
}

/* Verbose: every round's plain mean and batch median on stderr. */
static void report_rounds(int rounds, const struct timing *am, const struct timing *raw)
{
    double am_m[MAX_ROUNDS], raw_m[MAX_ROUNDS];
    for (int i = 0; i < rounds; i++) {
        fprintf(stderr,
                "rtt: round %d: am %.3f us (plain mean %.3f), raw %.3f us (plain mean "
                "%.3f)\n",
                i, am[i].batch_median, am[i].mean, raw[i].batch_median, raw[i].mean);
        am_m[i] = am[i].mean;
        raw_m[i] = raw[i].mean;
    }
    double a = bm_median(am_m, rounds), r = bm_median(raw_m, rounds);
    fprintf(stderr,
            "rtt: medians of the plain round means: am %.3f us, raw %.3f us, "
            "ratio %.2f\n",
            a, r, a / r);
}

/* One row of the common schema; `spread` is the lowest and highest round. */
static void row(const struct opts *o, int pinned, const char *metric, double value,
                const char *unit, double lo, double hi, const char *fmt)
{
    const char *shm = getenv("SHMAM_SHM");
    char v[32], l[32], h[32];
    snprintf(v, sizeof v, fmt, value);
    snprintf(l, sizeof l, fmt, lo);
    snprintf(h, sizeof h, fmt, hi);
    printf("rtt,%s,%s,%d,%d,%ld,%s,%s,%s,%s-%s\n", am_ep_claim(ep),
           shm && *shm ? shm : "posix", am_nprocs(), pinned,
           o->iters / o->rounds * o->rounds, metric, v, unit, l, h);
}

static void report(const struct opts *o, const struct timing *am, const struct timing *raw,
                   int pinned)
{
    int n = (int)o->rounds;
    double am_r[MAX_ROUNDS], raw_r[MAX_ROUNDS], ratio_r[MAX_ROUNDS];
    if (o->verbose)
        report_rounds(n, am, raw);
    for (int i = 0; i < n; i++) {
        am_r[i] = am[i].batch_median;
        raw_r[i] = raw[i].batch_median;
        ratio_r[i] = am_r[i] / raw_r[i];
    }
    /* bm_median() sorts, so each array's ends are its spread afterwards. */
    double am_med = bm_median(am_r, n), raw_med = bm_median(raw_r, n);
    bm_median(ratio_r, n);
    if (o->header)
        printf("# bench,impl,shm,procs,pinned,iters,metric,value,unit,spread\n");
    row(o, pinned, "am_rtt", am_med, "us", am_r[0], am_r[n - 1], "%.3f");
    row(o, pinned, "raw_rtt", raw_med, "us", raw_r[0], raw_r[n - 1], "%.3f");
    row(o, pinned, "am_vs_raw", am_med / raw_med, "ratio", ratio_r[0], ratio_r[n - 1],
        "%.2f");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    int rc = am_init(&argc, &argv, &ep);
    if (rc < 0)
        die("am_init", rc);
    rank = am_rank();
    struct opts o = parse(argc, argv);
    if (am_nprocs() != 2)
        die("run me with exactly two ranks (shmamrun -n 2)", 0);
    if ((rc = am_set_handler(ep, H_PING, on_ping)) < 0 ||
        (rc = am_set_handler(ep, H_PONG, on_pong)) < 0)
        die("am_set_handler", rc);

    struct raw *r = raw_map();
    /* Each rank publishes its CPU; after the barrier (whose messages order it)
     * both read both and decide alike how to spin. */
    AO_store(&r->cpu[rank], (AO_t)(bm_pinned_cpu() + 1));
    if ((rc = am_barrier(ep)) < 0)
        die("am_barrier", rc);
    int cpu0 = (int)AO_load(&r->cpu[0]) - 1, cpu1 = (int)AO_load(&r->cpu[1]) - 1;
    int pinned = cpu0 >= 0 && cpu1 >= 0 && cpu0 != cpu1;
    int shared = sysconf(_SC_NPROCESSORS_ONLN) <= 1 || (cpu0 >= 0 && cpu0 == cpu1);
    yield_after = shared ? 1 : pinned ? 1u << 14 : 256;

    long per_round = o.iters / o.rounds;
    struct timing am[MAX_ROUNDS], raw[MAX_ROUNDS];
    batch_buf = malloc(((size_t)(per_round > o.warmup ? per_round : o.warmup) / BATCH + 1) *
                       sizeof *batch_buf);
    if (!batch_buf)
        die("out of memory", 0);
    AO_t counter = 0;
    unsigned long total = 0;
    for (long k = 0; k < o.rounds; k++) {
        if (rank == 0) {
            am_trips(o.warmup);
            am[k] = am_trips(per_round);
            raw_trips(r, o.warmup, &counter);
            raw[k] = raw_trips(r, per_round, &counter);
        } else {
            total += (unsigned long)(o.warmup + per_round);
            am_serve(total);
            raw_serve(r, o.warmup + per_round, &counter);
        }
    }

    if (rank == 1) {
        AO_store(&r->requests, requests); /* read by rank 0 after the barrier */
        AO_store(&r->errors, errors);
        AO_store(&r->bad, am_ep_bad_packets(ep));
    }
    if ((rc = am_barrier(ep)) < 0)
        die("am_barrier", rc);
    int fail = 0;
    if (rank == 0) {
        unsigned long sent = (unsigned long)((o.warmup + per_round) * o.rounds);
        unsigned long got_req = AO_load(&r->requests);
        unsigned long req_err = AO_load(&r->errors);
        unsigned long bad = am_ep_bad_packets(ep) + AO_load(&r->bad);
        if (replies != sent || got_req != sent || errors || req_err || bad) {
            fprintf(stderr,
                    "rtt: FAILED (%s): sent %lu requests, rank 1 handled %lu (%lu out of "
                    "sequence), %lu replies came back (%lu out of sequence), %lu bad "
                    "packets\n",
                    am_ep_claim(ep), sent, got_req, req_err, replies, errors, bad);
            fail = 1;
        } else {
            report(&o, am, raw, pinned);
        }
    }
    munmap(r, sizeof *r);
    free(batch_buf);
    if ((rc = am_finalize(ep)) < 0)
        die("am_finalize", rc);
    return fail;
}
