/*
 * rtt.c - round-trip time of a short Active Message of every claim algorithm
 * and queue kind of --algs, against a raw cache-line ping-pong between the
 * same two processes, interleaved in one run.
 *
 *   shmamrun -n 2 --bind -a ALG build/bench/rtt [--algs LIST] [--iters N]
 *       [--warmup N] [--rounds R] [--ladder K,...] [--header] [--verbose]
 *
 * The method, its kinds (raw, raw_freed, and with --ladder raw_paced, echo_K,
 * turn_ns_K, am_self), its checks and its rows: bench/README.md, "rtt".
 * Rank 0 measures, rank 1 serves; both wait by the harness's spin policy
 * (common/am_harness.h).
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
#include "common/am_algs.h"
#include "common/am_harness.h"
#include "common/measure.h"
#include "common/stat.h"

#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "rtt needs AO_load_acquire and AO_store_release"
#endif

#define H_PING 1
#define H_PONG 2
#define H_SELF_PING 3
#define H_SELF_PONG 4
#define MAX_ROUNDS 101

/* The raw ping-pong lines, each 64-byte aligned on its own 128-byte block (no
 * adjacent-line prefetch between them); then each rank's CPU, written before a
 * barrier, and rank 1's counts, written once at the end. */
/* One line of the freed rings: a value, then the line's rest, as a packet. */
struct raw_line {
    _Alignas(64) AO_t v;
    char rest[56];
};
#define RAW_RING 128 /* lines per freed ring: a queue's default packets */

/* One line of the echo rings: a state word (lap << 2 | FREE 0, CLAIMED 1,
 * READY 2) and seven words of message, each the message's number. */
struct echo_line {
    _Alignas(64) AO_t state;
    AO_t w[7];
};
#define ECHO_STATE(lap, type) ((AO_t)(lap) << 2 | (type))

struct raw {
    _Alignas(128) AO_t ping; /* written by rank 0 only */
    _Alignas(128) AO_t pong; /* written by rank 1 only */
    /* raw_freed: request and reply rings of adjacent lines, each written by
     * its sender and then by its receiver (0: freed), as packet slots are. */
    _Alignas(128) struct raw_line ring[2][RAW_RING];
    /* echo_K: request and reply rings (state word first, as packets), each
     * rank's other-queue head line (read, never written) and a wake word. */
    _Alignas(128) struct echo_line echo[2][RAW_RING];
    _Alignas(128) struct echo_line other[2][2];
    _Alignas(128) AO_t sleeping;
    _Alignas(128) AO_t cpu[2]; /* each rank's CPU + 1 if pinned to one, else 0 */
    AO_t requests;             /* requests rank 1 handled */
    AO_t errors;               /* out-of-sequence requests rank 1 saw */
    AO_t bad;                  /* corrupt packets rank 1's endpoint dropped */
};

#define MAX_LADDER 8

struct opts {
    long iters, warmup, rounds;
    long ladder[MAX_LADDER]; /* --ladder: turnaround steps per echo kind */
    int n_ladder;
    int header, verbose;
    const char *algs;
};

static am_ep_t *ep;         /* the job's endpoint: barriers */
static struct bm_algs algs; /* an endpoint per algorithm measured */
static int rank;
static unsigned yield_after; /* empty spins before a yield */

/* Counters updated by the handlers; only the owning process touches them. */
static uint32_t next_request = 1; /* rank 1: sequence number expected next */
static unsigned long requests;    /* rank 1: requests handled */
static unsigned long errors;      /* out-of-sequence messages, both ranks */
static uint32_t last_reply;       /* rank 0: argument of the latest reply */
static unsigned long replies;     /* rank 0: replies handled */

static void on_ping(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                    size_t len)
{
    if (nargs != 1 || args[0] != next_request)
        errors++;
    next_request = nargs == 1 ? args[0] + 1 : next_request + 1;
    requests++;
    bm_check(am_reply(tok, H_PONG, args, nargs), "am_reply");
}

static void on_pong(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                    size_t len)
{
    if (nargs != 1 || args[0] != last_reply + 1)
        errors++;
    last_reply = nargs == 1 ? args[0] : last_reply + 1;
    replies++;
}

/* One wait step of the policy (am_harness.h). */
static void relax(unsigned *spins)
{
    bm_relax(spins, yield_after);
}

/* Rank 0: `n` AM round trips through endpoint e; the mean in us. */
static double am_trips(am_ep_t *e, long n)
{
    double t0 = bm_now_us();
    for (long i = 0; i < n; i++) {
        uint32_t seq = last_reply + 1;
        unsigned long want = replies + 1;
        bm_check(am_request(e, 1, H_PING, &seq, 1), "am_request");
        for (unsigned spins = 0; replies < want;)
            if (bm_poll(e) == 0)
                relax(&spins);
    }
    return n > 0 ? (bm_now_us() - t0) / (double)n : 0.0;
}

/* Rank 1: serve requests on e until `total` have been handled in all. */
static void am_serve(am_ep_t *e, unsigned long total)
{
    for (unsigned spins = 0; requests < total;)
        if (bm_poll(e) == 0)
            relax(&spins);
}

/* Two pauses per spin step instead of relax()'s one (raw_paced). */
static void relax_paced(unsigned *spins)
{
    spin_cpu_relax();
    relax(spins);
}

/* Rank 0: `n` raw round trips continuing from counter *c; the mean in us.  The
 * release store pairs with rank 1's acquire load of ping, and rank 1's release
 * store of pong with our acquire load of it.  paced: both ranks spin with
 * relax_paced (raw_paced), else with relax (raw). */
static double raw_trips(struct raw *r, long n, AO_t *c, int paced)
{
    double t0 = bm_now_us();
    for (long i = 0; i < n; i++) {
        AO_t v = ++*c;
        AO_store_release(&r->ping, v);
        unsigned spins = 0;
        AO_t got;
        while ((got = AO_load_acquire(&r->pong)) != v) {
            if (got > v)
                bm_die("raw ping-pong echoed a value never sent", 0);
            if (paced)
                relax_paced(&spins);
            else
                relax(&spins);
        }
    }
    return n > 0 ? (bm_now_us() - t0) / (double)n : 0.0;
}

/* Rank 0: `n` raw_freed round trips from counter *c; the mean in us.  Each
 * ping goes into the next line of ring 0, which rank 1 freed a lap ago; we
 * free each pong's line of ring 1 once we have it. */
static double freed_trips(struct raw *r, long n, AO_t *c)
{
    double t0 = bm_now_us();
    for (long i = 0; i < n; i++) {
        AO_t v = ++*c;
        struct raw_line *out = &r->ring[0][v % RAW_RING], *in = &r->ring[1][v % RAW_RING];
        AO_store_release(&out->v, v);
        unsigned spins = 0;
        AO_t got;
        while ((got = AO_load_acquire(&in->v)) != v) {
            if (got > v)
                bm_die("raw_freed echoed a value never sent", 0);
            relax(&spins);
        }
        AO_store_release(&in->v, 0);
    }
    return n > 0 ? (bm_now_us() - t0) / (double)n : 0.0;
}

/* Rank 1: echo `n` raw_freed pings from counter *c, freeing each ping's line
 * after the echo (see freed_trips). */
static void freed_serve(struct raw *r, long n, AO_t *c)
{
    for (long i = 0; i < n; i++) {
        AO_t v = ++*c;
        struct raw_line *in = &r->ring[0][v % RAW_RING], *out = &r->ring[1][v % RAW_RING];
        unsigned spins = 0;
        AO_t got;
        while ((got = AO_load_acquire(&in->v)) != v) {
            if (got > v)
                bm_die("raw_freed skipped a value", 0);
            relax(&spins);
        }
        AO_store_release(&out->v, v);
        AO_store_release(&in->v, 0);
    }
}

/* Rank 1: echo `n` raw pings continuing from counter *c (see raw_trips). */
static void raw_serve(struct raw *r, long n, AO_t *c, int paced)
{
    for (long i = 0; i < n; i++) {
        AO_t v = ++*c;
        unsigned spins = 0;
        AO_t got;
        while ((got = AO_load_acquire(&r->ping)) != v) {
            if (got > v)
                bm_die("raw ping-pong skipped a value", 0);
            if (paced)
                relax_paced(&spins);
            else
                relax(&spins);
        }
        AO_store_release(&r->pong, v);
    }
}

/* ---- the ladder (--ladder) ----------------------------------------------- */

/* K steps of private work, each depending on the last (the turnaround). */
static void turn(long k)
{
    volatile AO_t x = 0;
    for (long i = 0; i < k; i++)
        x = x + (AO_t)i;
}

/* The sender's half of echo: message v, ticket t, into ring `ring`.  Waits
 * for the slot to be free for t's lap, claims it with a CAS, fills it and
 * release-stores READY (pairs with echo_take's acquire), then fences and
 * reads the wake word, which nobody sets. */
static void echo_put(struct raw *r, int ring, AO_t t, AO_t v)
{
    struct echo_line *l = &r->echo[ring][t % RAW_RING];
    AO_t lap = t / RAW_RING;
    unsigned spins = 0;
    while (AO_load_acquire(&l->state) != ECHO_STATE(lap, 0) ||
           !AO_compare_and_swap_full(&l->state, ECHO_STATE(lap, 0), ECHO_STATE(lap, 1)))
        relax(&spins);
    for (int i = 0; i < 7; i++)
        l->w[i] = v;
    AO_store_release(&l->state, ECHO_STATE(lap, 2));
    AO_nop_full();
    if (AO_load(&r->sleeping))
        bm_die("echo: the wake word was set", 0);
}

/* The receiver's half: waits for ticket t of ring `ring` to be READY, reading
 * the other queue's head line first as am_poll does; copies the line and
 * returns the message's number (-1 if the copy is torn). */
static AO_t echo_take(struct raw *r, int ring, AO_t t)
{
    struct echo_line *l = &r->echo[ring][t % RAW_RING], copy;
    const volatile AO_t *other = &r->other[rank][0].state;
    AO_t ready = ECHO_STATE(t / RAW_RING, 2);
    unsigned spins = 0;
    for (;;) {
        (void)*other;
        if (AO_load_acquire(&l->state) == ready)
            break;
        relax(&spins);
    }
    memcpy(&copy, (const void *)l, sizeof copy);
    for (int i = 1; i < 7; i++)
        if (copy.w[i] != copy.w[0])
            return (AO_t)-1;
    return copy.w[0];
}

/* Free ticket t of ring `ring` for the next lap (pairs with echo_put's CAS). */
static void echo_free(struct raw *r, int ring, AO_t t)
{
    AO_store_release(&r->echo[ring][t % RAW_RING].state, ECHO_STATE(t / RAW_RING + 1, 0));
}

/* Rank 0: `n` echo round trips with turnaround k from ticket *c; the mean in
 * us.  Ring 0 carries requests, ring 1 replies; ticket and number agree. */
static double echo_trips(struct raw *r, long n, long k, AO_t *c)
{
    double t0 = bm_now_us();
    for (long i = 0; i < n; i++) {
        AO_t t = (*c)++;
        echo_put(r, 0, t, t);
        if (echo_take(r, 1, t) != t)
            bm_die("echo: a reply carried another number", 0);
        turn(k);
        echo_free(r, 1, t);
    }
    return n > 0 ? (bm_now_us() - t0) / (double)n : 0.0;
}

static void echo_serve(struct raw *r, long n, long k, AO_t *c)
{
    for (long i = 0; i < n; i++) {
        AO_t t = (*c)++;
        if (echo_take(r, 0, t) != t)
            bm_die("echo: a request carried another number", 0);
        turn(k);
        echo_put(r, 1, t, t);
        echo_free(r, 0, t);
    }
}

/* What k turnaround steps cost alone, in ns (rank 0, one clock pair). */
static double turn_ns(long k)
{
    long reps = 200000 / (k + 1) + 100;
    double t0 = bm_now_us();
    for (long i = 0; i < reps; i++)
        turn(k);
    return (bm_now_us() - t0) * 1e3 / (double)reps;
}

/* Rank 0: `n` round trips to itself through endpoint e (am_self_rtt); the
 * mean in us.  Its own handlers, H_SELF_PING and H_SELF_PONG. */
static unsigned long self_replies;

static void on_self_ping(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                         size_t len)
{
    bm_check(am_reply(tok, H_SELF_PONG, args, nargs), "am_reply to itself");
}

static void on_self_pong(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                         size_t len)
{
    if (nargs != 1 || args[0] != (uint32_t)self_replies)
        errors++;
    self_replies++;
}

static double self_trips(am_ep_t *e, long n)
{
    double t0 = bm_now_us();
    for (long i = 0; i < n; i++) {
        uint32_t seq = (uint32_t)self_replies;
        unsigned long want = self_replies + 1;
        bm_check(am_request(e, 0, H_SELF_PING, &seq, 1), "am_request to itself");
        while (self_replies < want)
            bm_poll(e);
    }
    return n > 0 ? (bm_now_us() - t0) / (double)n : 0.0;
}

/* The raw segment, "/shmam-JOB.rtt" (bm_raw_segment). */
static struct raw *raw_map(void)
{
    return bm_raw_segment(ep, "rtt", sizeof(struct raw));
}

/* Prints the usage to f and exits with status: stdout and 0 for --help,
 * stderr and 2 for a bad command line. */
static void usage(FILE *f, int status)
{
    fprintf(f, "usage: shmamrun -n 2 [--bind] [-a ALG] rtt [--algs ALG,...|all|channels] "
               "[--iters N] "
               "[--warmup N] [--rounds R] [--ladder K,...] [--header] [--verbose]\n");
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

/* --ladder's list: turnaround steps, each 0 .. 100000, at most MAX_LADDER. */
static int parse_ladder(const char *s, long *k)
{
    int n = 0;
    char *end;
    while (s && n < MAX_LADDER) {
        k[n] = strtol(s, &end, 10);
        if (end == s || k[n] < 0 || k[n] > 100000 || (*end && *end != ','))
            break;
        n++;
        s = *end ? end + 1 : NULL;
    }
    if (!n || s) {
        fprintf(stderr,
                "rtt: --ladder needs up to %d step counts 0..100000, comma-separated\n",
                MAX_LADDER);
        exit(2);
    }
    return n;
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
        else if (strcmp(argv[i], "--ladder") == 0)
            o.n_ladder = parse_ladder(argv[++i], o.ladder);
        else if (strcmp(argv[i], "--algs") == 0 && i + 1 < argc)
            o.algs = argv[++i];
        else if (!bm_common_flag(argv[i], &o.header, &o.verbose))
            usage(stderr, 2);
    }
    if (o.rounds > MAX_ROUNDS || o.iters < o.rounds) {
        fprintf(stderr, "rtt: need 1 <= rounds <= %d and rounds <= iters\n", MAX_ROUNDS);
        exit(2);
    }
    return o;
}

/* Kinds measured in a round: the raw ping-pongs; with --ladder raw_paced,
 * echo_K per K and am_self per algorithm; then the algorithms' round trips. */
#define RAW 0
#define RAW_FREED 1
#define RAW_PACED 2
#define FIRST_ECHO 3
#define MAX_KINDS (FIRST_ECHO + MAX_LADDER + 2 * BM_MAX_ALGS)

static int first_self(const struct opts *o)
{
    return FIRST_ECHO + o->n_ladder;
}

static int first_alg(const struct opts *o)
{
    return o->n_ladder ? first_self(o) + algs.n : RAW_PACED;
}

/* Counters each kind continues from: raw lines, echo tickets, AM requests
 * served (rank 1). */
struct counters {
    AO_t raw, echo;
    unsigned long served;
};

/* One ladder kind (rank 0 measures: its mean; rank 1 serves: 0). */
static double ladder_kind(const struct opts *o, struct raw *r, int kind, long warmup,
                          long n, struct counters *c)
{
    long k = kind >= FIRST_ECHO ? o->ladder[kind - FIRST_ECHO] : 0;
    if (kind == RAW_PACED && rank == 0)
        return raw_trips(r, warmup, &c->raw, 1), raw_trips(r, n, &c->raw, 1);
    if (kind == RAW_PACED)
        return raw_serve(r, warmup + n, &c->raw, 1), 0.0;
    if (kind < first_self(o) && rank == 0)
        return echo_trips(r, warmup, k, &c->echo), echo_trips(r, n, k, &c->echo);
    if (kind < first_self(o))
        return echo_serve(r, warmup + n, k, &c->echo), 0.0;
    am_ep_t *e = algs.ep[kind - first_self(o)];
    return rank == 0 ? (self_trips(e, warmup), self_trips(e, n)) : 0.0;
}

/* One round: every kind, in ABBA order; t[kind] its mean (rank 0). */
static void round_trips(const struct opts *o, struct raw *r, int k, long warmup, long n,
                        struct counters *c, double *t)
{
    int kinds = first_alg(o) + algs.n;
    for (int j = 0; j < kinds; j++) {
        int kind = bm_abba(k, j, kinds);
        am_ep_t *e = kind < first_alg(o) ? NULL : algs.ep[kind - first_alg(o)];
        if (kind >= RAW_PACED && !e)
            t[kind] = ladder_kind(o, r, kind, warmup, n, c);
        else if (rank == 0 && kind == RAW) {
            raw_trips(r, warmup, &c->raw, 0);
            t[kind] = raw_trips(r, n, &c->raw, 0);
        } else if (rank == 0 && kind == RAW_FREED) {
            freed_trips(r, warmup, &c->raw);
            t[kind] = freed_trips(r, n, &c->raw);
        } else if (rank == 0) {
            am_trips(e, warmup);
            t[kind] = am_trips(e, n);
        } else if (kind == RAW) {
            raw_serve(r, warmup + n, &c->raw, 0);
        } else if (kind == RAW_FREED) {
            freed_serve(r, warmup + n, &c->raw);
        } else {
            c->served += (unsigned long)(warmup + n);
            am_serve(e, c->served);
        }
    }
}

/* The rows (rank 0): t[round][kind] are the round means. */
/* The ladder's rows (rank 0), after the algorithms'. */
static void report_ladder(const struct opts *o, const struct bm_row *row, long iters,
                          double t[][MAX_KINDS])
{
    int n = (int)o->rounds;
    double raw[MAX_ROUNDS], v[MAX_ROUNDS];
    char metric[48];
    for (int k = 0; k < n; k++)
        raw[k] = t[k][RAW], v[k] = t[k][RAW_PACED];
    bm_print(row, "raw", iters, "raw_paced_rtt", bm_stat_of(v, n), "us", 3);
    bm_print(row, "raw", iters, "raw_paced_vs_raw", bm_stat_ratio(v, raw, n), "ratio", 3);
    for (int j = 0; j < o->n_ladder; j++) {
        for (int k = 0; k < n; k++)
            v[k] = t[k][FIRST_ECHO + j];
        snprintf(metric, sizeof metric, "echo_rtt_%ld", o->ladder[j]);
        bm_print(row, "raw", iters, metric, bm_stat_of(v, n), "us", 3);
        snprintf(metric, sizeof metric, "echo_vs_raw_%ld", o->ladder[j]);
        bm_print(row, "raw", iters, metric, bm_stat_ratio(v, raw, n), "ratio", 3);
        for (int k = 0; k < n; k++)
            v[k] = turn_ns(o->ladder[j]);
        snprintf(metric, sizeof metric, "turn_ns_%ld", o->ladder[j]);
        bm_print(row, "raw", iters, metric, bm_stat_of(v, n), "ns", 1);
    }
    for (int i = 0; i < algs.n; i++) {
        for (int k = 0; k < n; k++)
            v[k] = t[k][first_self(o) + i];
        bm_print(row, algs.name[i], iters, "am_self_rtt", bm_stat_of(v, n), "us", 3);
    }
}

static void report(const struct opts *o, double t[][MAX_KINDS], int pinned)
{
    int n = (int)o->rounds, lf = -1;
    double raw[MAX_ROUNDS], freed[MAX_ROUNDS], am[BM_MAX_ALGS][MAX_ROUNDS];
    const char *shm = getenv("SHMAM_SHM");
    struct bm_row row = {stdout, "rtt", shm && *shm ? shm : "posix", am_nprocs(), pinned};
    long iters = o->iters / o->rounds * o->rounds;

    for (int k = 0; k < n; k++) {
        raw[k] = t[k][RAW];
        freed[k] = t[k][RAW_FREED];
        for (int i = 0; i < algs.n; i++)
            am[i][k] = t[k][first_alg(o) + i];
        if (o->verbose) {
            fprintf(stderr, "rtt: round %d: raw %.3f us, raw_freed %.3f", k, raw[k],
                    freed[k]);
            for (int i = 0; i < algs.n; i++)
                fprintf(stderr, ", %s %.3f", algs.name[i], am[i][k]);
            fprintf(stderr, "\n");
        }
    }
    if (o->header)
        bm_print_header(stdout);
    bm_print(&row, "raw", iters, "raw_rtt", bm_stat_of(raw, n), "us", 3);
    bm_print(&row, "raw", iters, "raw_freed_rtt", bm_stat_of(freed, n), "us", 3);
    bm_print(&row, "raw", iters, "raw_freed_vs_raw", bm_stat_ratio(freed, raw, n), "ratio",
             3);
    for (int i = 0; i < algs.n; i++)
        if (strcmp(algs.name[i], "lockfree") == 0)
            lf = i;
    for (int i = 0; i < algs.n; i++) {
        bm_print(&row, algs.name[i], iters, "am_rtt", bm_stat_of(am[i], n), "us", 3);
        bm_print(&row, algs.name[i], iters, "am_vs_raw", bm_stat_ratio(am[i], raw, n),
                 "ratio", 3);
        if (lf >= 0 && i != lf)
            bm_print(&row, algs.name[i], iters, "am_rtt_vs_lockfree",
                     bm_stat_ratio(am[i], am[lf], n), "ratio", 3);
    }
    if (o->n_ladder)
        report_ladder(o, &row, iters, t);
    fflush(stdout);
}

/* Each rank publishes its CPU; after the barrier (whose messages order it)
 * both read both and decide alike how to spin.  Returns whether the two are
 * pinned to distinct CPUs. */
static int decide_spinning(struct raw *r)
{
    AO_store(&r->cpu[rank], (AO_t)(bm_pinned_cpu() + 1));
    bm_check(am_barrier(ep), "am_barrier");
    int cpu0 = (int)AO_load(&r->cpu[0]) - 1, cpu1 = (int)AO_load(&r->cpu[1]) - 1;
    yield_after = bm_yield_after(cpu0, cpu1);
    return bm_pinned_apart(cpu0, cpu1);
}

/* Rank 0 after the final barrier: every count and sequence right? */
static int verify(struct raw *r, unsigned long sent)
{
    unsigned long got_req = AO_load(&r->requests), req_err = AO_load(&r->errors);
    unsigned long bad = AO_load(&r->bad) + bm_bad_packets(NULL, &algs);
    if (replies == sent && got_req == sent && !errors && !req_err && !bad)
        return 0;
    fprintf(stderr,
            "rtt: FAILED: sent %lu requests, rank 1 handled %lu (%lu out of sequence), %lu "
            "replies came back (%lu out of sequence), %lu bad packets\n",
            sent, got_req, req_err, replies, errors, bad);
    return 1;
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    ep = bm_am_init("rtt", &argc, &argv);
    rank = am_rank();
    struct opts o = parse(argc, argv);
    if (am_nprocs() != 2)
        bm_die("run me with exactly two ranks (shmamrun -n 2)", 0);
    if (bm_algs_parse(o.algs ? o.algs : bm_algs_name_of(ep), &algs) != 0)
        exit(2);
    const struct bm_handler h[] = {{H_PING, on_ping},
                                   {H_PONG, on_pong},
                                   {H_SELF_PING, on_self_ping},
                                   {H_SELF_PONG, on_self_pong}};
    bm_check(bm_algs_open(ep, &algs, h, 4), "cannot make the endpoints per algorithm");

    struct raw *r = raw_map();
    int pinned = decide_spinning(r);
    long per_round = o.iters / o.rounds;
    static double t[MAX_ROUNDS][MAX_KINDS];
    struct counters c = {0};
    for (int k = 0; k < o.rounds; k++)
        round_trips(&o, r, k, o.warmup, per_round, &c, t[k]);

    if (rank == 1) {
        AO_store(&r->requests, requests); /* read by rank 0 after the barrier */
        AO_store(&r->errors, errors);
        AO_store(&r->bad, bm_bad_packets(NULL, &algs));
    }
    bm_check(am_barrier(ep), "am_barrier");
    int fail = 0;
    if (rank == 0) {
        fail = verify(r, (unsigned long)((o.warmup + per_round) * o.rounds * algs.n));
        if (!fail)
            report(&o, t, pinned);
    }
    munmap(r, sizeof *r);
    bm_algs_close(ep, &algs);
    bm_check(am_finalize(ep), "am_finalize");
    return fail;
}
