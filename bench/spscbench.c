/*
 * spscbench.c - the single-producer/single-consumer rings of spsc/
 * between two pinned processes, 8-byte items, beside Boost.Lockfree's
 * spsc_queue and Concurrency Kit's ck_ring in SPSC mode, all in the same run.
 *
 *   build/bench/spscbench [--items N] [--rtts M] [--slots S] [--rounds R] [--quick]
 *                         [--kinds NAME,...] [--boost PATH] [--no-boost] [--header]
 *
 * The rings (impl column):
 *   lamport fastforward mcring bqueue
 *            every entry of am_spsc_table[], through its am_spsc_ops (the
 *            library's functions, called through the table's pointers)
 *   fastforward_slip
 *            fastforward with the consumer's temporal slipping (AM_SPSC_SLIP);
 *            one such row per option a kind of the table takes
 *   ck       ck_ring_enqueue_spsc/ck_ring_dequeue_spsc on a ck_ring of S slots
 *            (it holds S - 1 items); header-only, inlined into this program
 *   boost    boost::lockfree::spsc_queue<uint64_t> of capacity S, in
 *            build/bench/spsc_boost (bench/spsc_boost.cpp, g++), which this
 *            program starts for each of its measurements; inlined there
 *
 * Method.  Each measurement maps a fresh MAP_SHARED|MAP_ANONYMOUS region
 * holding a start gate, the results and two rings of S slots (default 1024),
 * initialises them and forks two processes, pinned to the first and second
 * CPU this program may use (fork after mapping is fine here: a standalone
 * benchmark, not a shmam job; Boost's program does the same).  Each opens its
 * end of the rings in its own memory, and when both are at the gate the
 * parent opens it.
 *   stream  process 0 enqueues the items 0 .. N-1 (default 10^8, --quick 10^7)
 *           into one ring, retrying at once while it is full, and flushes at
 *           the end (mcring); process 1 dequeues them, retrying at once while
 *           it is empty, and checks that item i is i.  The figure is process
 *           1's time from the gate to the last item over N: ns_per_item.
 *   rtt     process 0 enqueues i into ring A (and flushes: an mcring item
 *           waits for its batch otherwise) and waits for i back from ring B;
 *           process 1 echoes; M times (default 10^6, --quick 10^5).  The
 *           figure is process 0's time over M: rtt_ns.
 * Every kind is measured once per round, stream first for all kinds then rtt
 * for all, each time in ABBA order (reversed in odd rounds), after one
 * unmeasured warm-up round of a tenth of the counts; rounds: R (default 5,
 * --quick 3).  A row's value is the median over the rounds, its spread the
 * lowest and highest round (bench/common/stat.h); the ratios to Boost are the
 * per-round quotients of each kind's figure over Boost's in the same round
 * (below 1: faster than Boost).
 *
 * Rows (bench,impl,shm,procs,pinned,iters,metric,value,unit,spread; iters of
 * all rounds together):
 *   spscbench,IMPL,-,2,1,N*R,ns_per_item,V,ns,LO-HI
 *   spscbench,IMPL,-,2,1,M*R,rtt_ns,V,ns,LO-HI
 *   spscbench,IMPL,-,2,1,N*R,IMPL_vs_boost,V,ratio,LO-HI       (stream)
 *   spscbench,IMPL,-,2,1,M*R,IMPL_rtt_vs_boost,V,ratio,LO-HI
 * A wrong item, a process that fails or hangs (STUCK_S), or a Boost run that
 * fails prints "spscbench: FAILED ..." on stderr; the other kinds are still
 * measured, and the exit status is 1.
 *
 * What is and is not compared.  shmam's rings are called through function
 * pointers into the library, as the runtime will call them; ck and Boost are
 * inlined into their loops, as their users call them.  Lamport, ck and Boost
 * read the other end's index on every operation; fastforward and bqueue share
 * only the slots; mcring reads the other's index once per batch (a quarter of
 * the ring, at most 256).  Retrying at once, without a pause, is the same for
 * every kind.  This machine is a 2-vCPU virtual machine whose other tenants'
 * load shows in the spreads.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic_ops.h>
#include <ck_ring.h>

#include "spsc.h"
#include "common/place.h"
#include "common/harness.h"
#include "common/measure.h"
#include "common/stat.h"

#define LINE 128
#define MAX_ROUNDS 21
#define MAX_KINDS 16
#define STUCK_S 300.0 /* a measurement that takes longer failed */

struct opts {
    long items, rtts;
    unsigned shift;
    int rounds, header;
    char kinds[256]; /* NAME,... or "" for all */
    const char *boost;
};

/* What is measured: a ring of the table (with consumer options), ck_ring, or
 * Boost's queue in its own program. */
struct kind {
    char name[32];
    const struct am_spsc_ops *ops; /* shmam's, else NULL */
    unsigned opt;
    int ck, boost;
};

/* The region of one measurement, shared by the parent and its two children. */
struct region {
    _Alignas(LINE) AO_t ready; /* children at the gate */
    _Alignas(LINE) AO_t go;    /* the parent opens it (release) */
    _Alignas(LINE) double ns;  /* the figure */
    AO_t errors;
    _Alignas(LINE) unsigned char ring[]; /* two rings of ring_bytes each */
};

/* One process's end of a ring. */
struct side {
    const struct kind *k;
    struct am_spsc_end e;
    ck_ring_t *ck;
    ck_ring_buffer_t *buf;
};

/* ---- the rings ---- */

/* Bytes for any kind's ring of 2^shift slots (line pairs). */
static size_t ring_bytes(unsigned shift)
{
    size_t most = sizeof(ck_ring_t) + (sizeof(ck_ring_buffer_t) << shift);
    for (int i = 0; am_spsc_table[i]; i++)
        if (am_spsc_table[i]->size(shift) > most)
            most = am_spsc_table[i]->size(shift);
    return (most + LINE - 1) / LINE * LINE;
}

static int ring_init(const struct kind *k, void *ring, unsigned shift)
{
    if (k->ck) {
        ck_ring_init(ring, 1u << shift);
        return 0;
    }
    return k->ops->init(ring, shift);
}

static int side_open(struct side *s, const struct kind *k, void *ring, unsigned shift,
                     int producer)
{
    s->k = k;
    if (k->ck) {
        s->ck = ring;
        s->buf = (ck_ring_buffer_t *)((char *)ring +
                                      (sizeof(ck_ring_t) + LINE - 1) / LINE * LINE);
        return 0;
    }
    s->ck = NULL;
    return k->ops->open(&s->e, ring, shift,
                        producer ? AM_SPSC_PRODUCER : AM_SPSC_CONSUMER | k->opt);
}

/* Enqueues v, retrying at once while full; flushes if asked. */
static inline void put(struct side *s, uint64_t v, int flush)
{
    if (s->ck) {
        while (!ck_ring_enqueue_spsc(s->ck, s->buf, (void *)(uintptr_t)v))
            ;
        return;
    }
    while (s->k->ops->enqueue(&s->e, v) != 0)
        ;
    if (flush)
        s->k->ops->flush(&s->e);
}

/* Dequeues one item, retrying at once while empty. */
static inline uint64_t get(struct side *s)
{
    void *p;
    uint64_t v;
    if (s->ck) {
        while (!ck_ring_dequeue_spsc(s->ck, s->buf, &p))
            ;
        return (uint64_t)(uintptr_t)p;
    }
    while (s->k->ops->dequeue(&s->e, &v) != 0)
        ;
    return v;
}

/* ---- the two processes ---- */

static void wait_go(struct region *r)
{
    AO_fetch_and_add1_full(&r->ready);
    while (!AO_load_acquire(&r->go)) /* pairs with the parent's release */
        sched_yield();
}

/* Process idx of a stream of n items through ring A. */
static void stream(struct region *r, struct side *a, int idx, long n)
{
    unsigned long bad = 0;
    wait_go(r);
    if (idx == 0) {
        for (long i = 0; i < n; i++)
            put(a, (uint64_t)i, 0);
        if (!a->ck)
            a->k->ops->flush(&a->e);
        return;
    }
    double t0 = bm_now_s();
    for (long i = 0; i < n; i++)
        bad += get(a) != (uint64_t)i;
    r->ns = (bm_now_s() - t0) * 1e9 / (double)n;
    AO_fetch_and_add_full(&r->errors, bad);
}

/* Process idx of n round trips: 0 sends on A and waits on B, 1 echoes. */
static void rtt(struct region *r, struct side *a, struct side *b, int idx, long n)
{
    unsigned long bad = 0;
    wait_go(r);
    double t0 = bm_now_s();
    for (long i = 0; i < n; i++) {
        if (idx == 0) {
            put(a, (uint64_t)i, 1);
            bad += get(b) != (uint64_t)i;
        } else {
            uint64_t v = get(a);
            bad += v != (uint64_t)i;
            put(b, v, 1);
        }
    }
    if (idx == 0)
        r->ns = (bm_now_s() - t0) * 1e9 / (double)n;
    AO_fetch_and_add_full(&r->errors, bad);
}

/* One measurement of kind k in this program: its ns per item or round trip
 * into *ns; 0, or -1 (a count off, a process failed). */
static int measure_here(const struct opts *o, const struct kind *k, int is_rtt, long n,
                        double *ns)
{
    size_t rb = ring_bytes(o->shift), bytes = sizeof(struct region) + 2 * rb;
    struct region *r =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return -1;
    int rc =
        ring_init(k, r->ring, o->shift) == 0 && ring_init(k, r->ring + rb, o->shift) == 0
            ? 0
            : -1;
    pid_t pid[2] = {-1, -1};
    fflush(NULL);
    for (int i = 0; rc == 0 && i < 2; i++) {
        if ((pid[i] = fork()) == 0) {
            struct side a, b;
            bm_pin_nth((unsigned)i);
            if (side_open(&a, k, r->ring, o->shift, i == 0) != 0 ||
                side_open(&b, k, r->ring + rb, o->shift, i == 1) != 0)
                _exit(3);
            if (is_rtt)
                rtt(r, &a, &b, i, n);
            else
                stream(r, &a, i, n);
            _exit(0);
        }
        rc = pid[i] < 0 ? -1 : 0;
    }
    if (rc == 0) {
        double end = bm_now_s() + STUCK_S;
        while (AO_load_acquire(&r->ready) < 2 && bm_now_s() < end)
            usleep(100);
        AO_store_release(&r->go, 1); /* pairs with the children's acquire */
        rc = bm_reap(pid, 2, STUCK_S) == 0 && AO_load(&r->errors) == 0 ? 0 : -1;
        *ns = r->ns;
    }
    munmap(r, bytes);
    return rc;
}

/* One measurement of Boost's queue, in its own program. */
static int measure_boost(const struct opts *o, int is_rtt, long n, double *ns)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' --mode %s --items %ld --slots %lu", o->boost,
             is_rtt ? "rtt" : "stream", n, 1ul << o->shift);
    fflush(NULL);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    int got = fscanf(f, "%lf", ns);
    int st = pclose(f);
    return got == 1 && st == 0 ? 0 : -1;
}

static void usage(FILE *f, int status);

/* ---- kinds, rounds and rows ---- */

/* Is `name` in the comma-separated list (all names if it is empty)? */
static int listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == 0))
            return 1;
    return !list[0];
}

/* The kinds to measure, from the table: each ring, then each with every
 * option it takes, ck, boost (if there is its program); those --kinds names,
 * every one of which must be a kind. */
static int kinds_of(const struct opts *o, struct kind *k)
{
    struct kind all[MAX_KINDS];
    int n = 0, m = 0;
    for (int i = 0; am_spsc_table[i] && n < MAX_KINDS - 3; i++) {
        all[n] = (struct kind){"", am_spsc_table[i], 0, 0, 0};
        snprintf(all[n].name, sizeof all[n].name, "%s", am_spsc_table[i]->name);
        n++;
        if (am_spsc_table[i]->options & AM_SPSC_SLIP) {
            all[n] = (struct kind){"", am_spsc_table[i], AM_SPSC_SLIP, 0, 0};
            snprintf(all[n].name, sizeof all[n].name, "%s_slip", am_spsc_table[i]->name);
            n++;
        }
    }
    all[n++] = (struct kind){"ck", NULL, 0, 1, 0};
    all[n++] = (struct kind){"boost", NULL, 0, 0, 1};
    for (const char *p = o->kinds; *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "") {
        size_t len = strcspn(p, ",");
        int known = 0;
        for (int i = 0; i < n; i++)
            known |= strlen(all[i].name) == len && strncmp(all[i].name, p, len) == 0;
        if (!known)
            usage(stderr, 2);
    }
    for (int i = 0; i < n; i++)
        if (listed(o->kinds, all[i].name) && (!all[i].boost || o->boost))
            k[m++] = all[i];
    return m;
}

struct figures {
    double ns[2][MAX_KINDS][MAX_ROUNDS]; /* [stream, rtt][kind][round] */
    int failed[MAX_KINDS];
};

/* Round r (-1: the warm-up, a tenth of the counts) of every kind, stream then
 * rtt, each in ABBA order. */
static void round_of(const struct opts *o, const struct kind *k, int nk, int r,
                     struct figures *f)
{
    for (int is_rtt = 0; is_rtt < 2; is_rtt++) {
        long n = is_rtt ? o->rtts : o->items;
        n = r < 0 ? (n + 9) / 10 : n;
        for (int j = 0; j < nk; j++) {
            int i = bm_abba(r < 0 ? 0 : r, j, nk);
            double ns = 0;
            int rc = k[i].boost ? measure_boost(o, is_rtt, n, &ns)
                                : measure_here(o, &k[i], is_rtt, n, &ns);
            if (rc != 0) {
                fprintf(stderr, "spscbench: FAILED: %s %s, round %d\n", k[i].name,
                        is_rtt ? "rtt" : "stream", r);
                f->failed[i] = 1;
            }
            if (r >= 0)
                f->ns[is_rtt][i][r] = rc == 0 ? ns : 0;
        }
    }
}

static void print_rows(const struct opts *o, const struct kind *k, int nk,
                       const struct figures *f)
{
    struct bm_row row = {stdout, "spscbench", "-", 2, 1};
    const char *metric[2] = {"ns_per_item", "rtt_ns"};
    long iters[2] = {o->items * o->rounds, o->rtts * o->rounds};
    int boost = nk > 0 && k[nk - 1].boost ? nk - 1 : -1;
    char name[64];

    for (int m = 0; m < 2; m++)
        for (int i = 0; i < nk; i++)
            if (!f->failed[i])
                bm_print(&row, k[i].name, iters[m], metric[m],
                         bm_stat_of(f->ns[m][i], o->rounds), "ns", m ? 1 : 2);
    for (int m = 0; boost >= 0 && !f->failed[boost] && m < 2; m++)
        for (int i = 0; i < boost; i++) {
            if (f->failed[i])
                continue;
            snprintf(name, sizeof name, "%.31s%s_vs_boost", k[i].name, m ? "_rtt" : "");
            bm_print(&row, k[i].name, iters[m], name,
                     bm_stat_ratio(f->ns[m][i], f->ns[m][boost], o->rounds), "ratio", 3);
        }
    fflush(stdout);
}

/* ---- command line ---- */

static void usage(FILE *f, int status)
{
    fprintf(f,
            "usage: spscbench [--items N] [--rtts M] [--slots S] [--rounds R] [--quick]\n"
            "                 [--kinds NAME,...] [--boost PATH] [--no-boost] [--header]\n");
    exit(status);
}

/* A bad command line (bm_opt_range). */
static void bad_line(void)
{
    usage(stderr, 2);
}

/* build/bench/spsc_boost beside this program, or NULL if it is not there. */
static struct opts parse(int argc, char **argv)
{
    struct opts o = {100000000L, 1000000L, 10, 5, 0, "", bm_program_beside("spsc_boost")};
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--items") == 0 && next)
            o.items = bm_opt_range(argv[++i], 1, 1L << 40, bad_line);
        else if (strcmp(argv[i], "--rtts") == 0 && next)
            o.rtts = bm_opt_range(argv[++i], 1, 1L << 40, bad_line);
        else if (strcmp(argv[i], "--slots") == 0 && next) {
            long s = bm_opt_range(argv[++i], 2, 1L << AM_SPSC_MAX_SHIFT, bad_line);
            if (s & (s - 1))
                usage(stderr, 2);
            o.shift = (unsigned)__builtin_ctzl((unsigned long)s);
        } else if (strcmp(argv[i], "--rounds") == 0 && next)
            o.rounds = (int)bm_opt_range(argv[++i], 1, MAX_ROUNDS, bad_line);
        else if (strcmp(argv[i], "--quick") == 0)
            o.items = 10000000L, o.rtts = 100000L, o.rounds = 3;
        else if (strcmp(argv[i], "--kinds") == 0 && next && strlen(next) < sizeof o.kinds)
            strcpy(o.kinds, argv[++i]);
        else if (!bm_baseline_flag(argc, argv, &i, &o.boost) &&
                 !bm_common_flag(argv[i], &o.header, NULL))
            usage(stderr, 2);
    }
    return o;
}

int main(int argc, char **argv)
{
    static struct figures f;
    struct kind k[MAX_KINDS];

    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    struct opts o = parse(argc, argv);
    if (!o.boost)
        fprintf(stderr, "spscbench: no spsc_boost (build it, or --boost PATH): no Boost "
                        "baseline, no ratios\n");
    int nk = kinds_of(&o, k);
    if (nk == 0)
        usage(stderr, 2);
    if (o.header)
        bm_print_header(stdout);
    for (int r = -1; r < o.rounds; r++)
        round_of(&o, k, nk, r, &f);
    print_rows(&o, k, nk, &f);
    for (int i = 0; i < nk; i++)
        if (f.failed[i])
            return 1;
    return 0;
}
