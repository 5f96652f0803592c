/*
 * heapbench.c - allocation+free throughput of shmam's shared heap (heap/heap.h,
 * after XMalloc) against Boost.Interprocess's managed_shared_memory over a
 * segment of the same size, 1 to 8 processes, and the fragmentation each
 * leaves.
 *
 *   build/bench/heapbench [--procs 1,2,4,8] [--ops N] [--rounds R] [--window W]
 *                         [--mbytes M] [--seed S] [--shift S] [--quick]
 *                         [--boost PATH] [--no-boost] [--header]
 *
 * Method.  For each P of --procs and each round, both heaps are measured, in
 * ABBA order (shmam, boost in even rounds, boost, shmam in odd ones), each on
 * a fresh POSIX shared memory segment of M MB (default 32; its name unlinked as
 * soon as it is mapped, so nothing outlives a crash), after one unmeasured
 * warm-up of each.  P processes are forked, process i pinned to the (i % n)-th
 * CPU this program may use (round robin), and each runs the workload of
 * bench/common/heapmix.h: fill a window of W blocks (default 64), then at the
 * parent's gate do N operations (default 100000, --quick 20000), each freeing
 * a block of its window at random (after checking its tag) and allocating a
 * new one of a log-uniform length of 64 B .. 16 KB, tagged in its first 8
 * bytes; with --shift S the sizes in use move on every S operations
 * (heapmix.h), so that classes fall idle and the heap must give their
 * superblocks back.  shmam's processes attach the heap and allocate with
 * who = i + 1, and retry an -ENOMEM for up to a second (yielding): while
 * another process compacts, it can be transient (heap.h), as for shmam's
 * senders, which back off and poll;
 * Boost's run in build/bench/heap_boost (bench/heap_boost.cpp, started by
 * this program each time, the same workload over managed_shared_memory with
 * its default best-fit allocator and process-shared mutex).  A round's figure
 * is all processes' operations over the time from the first process's start
 * to the last one's end; a row's value is the median of R rounds (default 5,
 * --quick 3), its spread the lowest and highest round (bench/common/stat.h).
 * The processes keep their windows when they end: what the heap then has
 * reserved against what is live is the fragmentation left.
 *
 * Rows (bench,impl,shm,procs,pinned,iters,metric,value,unit,spread):
 *   heapbench,IMPL,posix,P,1,OPS,heap_ops_per_s,V,1/s,LO-HI
 *       alloc+free pairs per second, all P processes (OPS: of all rounds)
 *   heapbench,shmam,posix,P,1,OPS,shmam_vs_boost,V,ratio,LO-HI
 *       the per-round quotient of the two (in-run, same segment size)
 *   heapbench,IMPL,posix,P,1,OPS,frag_reserved_over_live,V,ratio,LO-HI
 *       bytes taken from the segment's free space (shmam: superblocks carved
 *       for a class or in runs; Boost: size - get_free_memory(), its own
 *       bookkeeping included) over the bytes the windows asked for
 *   heapbench,IMPL,posix,P,1,OPS,reserved_KB,V,KB,LO-HI  and  live_KB
 *   heapbench,shmam,posix,P,1,OPS,uncarved,V,count,LO-HI
 *       class superblocks shmam's heap gave back to free space in a round
 *       (compaction: only when memory ran short)
 *   heapbench,shmam,posix,P,1,OPS,enomem_retries,V,count,LO-HI
 *       -ENOMEMs retried in a round, all processes
 *   heapbench,shmam,posix,P,1,0,meta_KB,V,KB,
 *       shmam's fixed metadata (header words, FIFOs): the segment's bytes
 *       outside the heap's capacity
 * Any failed allocation, wrong tag, or process that fails or hangs prints
 * "heapbench: FAILED ..." on stderr and the exit status is 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "heap.h"
#include "common/place.h"
#include "common/heapmix.h"
#include "common/harness.h"
#include "common/measure.h"
#include "common/stat.h"

#define LINE 128
#define MAX_ROUNDS 21
#define MAX_P 8
#define STUCK_S 120.0 /* a measurement that takes longer failed */

struct opts {
    unsigned procs[MAX_P];
    int nprocs, rounds, header;
    long ops;
    unsigned window;
    size_t bytes;
    uint64_t seed, shift; /* shift: the mix moves on every so many ops (0: never) */
    const char *boost;    /* the heap_boost program, or NULL: shmam alone */
};

/* One measurement's figures (boost: no uncarved, no retries). */
struct result {
    double ops_per_s, reserved, live, uncarved, retries;
};

/* Shared by the parent and the children of one shmam measurement. */
struct ctl {
    _Alignas(LINE) AO_t ready;
    _Alignas(LINE) AO_t go;
    struct {
        _Alignas(LINE) double t0, t1;
        AO_t live, failed, retries;
    } proc[HM_MAX_PROCS];
};

/* A fresh shared segment of `bytes`, its name already gone; NULL on failure. */
static void *segment(size_t bytes)
{
    char name[64];
    static unsigned count;
    snprintf(name, sizeof name, "/heapbench-%d-%u", (int)getpid(), count++);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return NULL;
    shm_unlink(name);
    void *p = ftruncate(fd, (off_t)bytes) == 0
                  ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

/* ---- shmam: the child ---- */

struct window {
    uint64_t off[HM_MAX_WINDOW], tag[HM_MAX_WINDOW];
    size_t len[HM_MAX_WINDOW];
};

/* Allocates slot i of w with a fresh length and tags it, retrying -ENOMEM
 * for up to a second (*retries counts them); 0 or -1. */
static int take(struct am_heap_view *h, struct window *w, unsigned i, unsigned p,
                uint64_t op, uint64_t *x, const struct opts *o, AO_t *retries)
{
    double give_up = 0;
    int rc;
    w->len[i] = hm_len_at(x, op, o->shift);
    w->tag[i] = hm_tag(p, op);
    while ((rc = am_heap_alloc(h, w->len[i], p + 1, &w->off[i])) == -ENOMEM) {
        if (give_up == 0)
            give_up = bm_now_s() + 1;
        else if (bm_now_s() > give_up)
            break;
        ++*retries;
        sched_yield();
    }
    if (rc != 0)
        return -1;
    memcpy(h->base + w->off[i], &w->tag[i], 8);
    return 0;
}

/* Checks and frees slot i of w; 0 or -1. */
static int give(struct am_heap_view *h, struct window *w, unsigned i, unsigned p)
{
    uint64_t t;
    memcpy(&t, h->base + w->off[i], 8);
    return t == w->tag[i] && am_heap_free(h, w->off[i], p + 1) == 0 ? 0 : -1;
}

static void wait_go(struct ctl *c)
{
    AO_fetch_and_add1_full(&c->ready);
    while (!AO_load_acquire(&c->go)) /* pairs with the parent's release */
        sched_yield();
}

static int shmam_run(struct ctl *c, void *seg, const struct opts *o, unsigned p)
{
    static struct window w;
    struct am_heap_view h;
    uint64_t x = hm_seed(o->seed, p), live = 0;

    AO_t *retries = &c->proc[p].retries;
    int ok = am_heap_attach(&h, seg, o->bytes) == 0;
    for (unsigned i = 0; ok && i < o->window; i++)
        ok = take(&h, &w, i, p, i, &x, o, retries) == 0;
    wait_go(c); /* failed or not: the parent waits for all */
    if (!ok)
        return -1;
    c->proc[p].t0 = bm_now_s();
    for (long op = 0; op < o->ops; op++) {
        unsigned i = hm_slot(&x, o->window);
        if (give(&h, &w, i, p) != 0 ||
            take(&h, &w, i, p, (uint64_t)op + o->window, &x, o, retries) != 0)
            return -1;
    }
    c->proc[p].t1 = bm_now_s();
    for (unsigned i = 0; i < o->window; i++)
        live += w.len[i];
    c->proc[p].live = live;
    return 0;
}

/* ---- shmam: the parent ---- */

/* Forks the P children, opens the gate when all are at it, reaps them. */
static int run_children(struct ctl *c, void *seg, const struct opts *o, unsigned procs)
{
    pid_t pid[HM_MAX_PROCS];
    fflush(NULL);
    for (unsigned p = 0; p < procs; p++) {
        if ((pid[p] = fork()) == 0) {
            bm_pin_nth(p);
            _exit(shmam_run(c, seg, o, p) == 0 ? 0 : 3);
        }
        if (pid[p] < 0)
            return -1;
    }
    double end = bm_now_s() + STUCK_S;
    while (AO_load_acquire(&c->ready) < procs && bm_now_s() < end)
        usleep(100);
    AO_store_release(&c->go, 1);
    return bm_reap(pid, procs, STUCK_S) == 0 ? 0 : -1;
}

static int measure_shmam(const struct opts *o, unsigned procs, struct result *r)
{
    struct ctl *c =
        mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    void *seg = segment(o->bytes);
    struct am_heap_view h;
    struct am_heap_stats st;
    int rc = -1;

    if (c != MAP_FAILED && seg && am_heap_init(seg, o->bytes) == 0 &&
        am_heap_attach(&h, seg, o->bytes) == 0 && run_children(c, seg, o, procs) == 0) {
        double t0 = c->proc[0].t0, t1 = c->proc[0].t1, live = 0, retries = 0;
        for (unsigned p = 0; p < procs; p++) {
            t0 = c->proc[p].t0 < t0 ? c->proc[p].t0 : t0;
            t1 = c->proc[p].t1 > t1 ? c->proc[p].t1 : t1;
            live += (double)c->proc[p].live;
            retries += (double)c->proc[p].retries;
        }
        am_heap_stats(&h, &st);
        r->ops_per_s = (double)o->ops * procs / (t1 - t0);
        r->reserved = (double)st.reserved;
        r->live = live;
        r->uncarved = (double)st.uncarved;
        r->retries = retries;
        rc = 0;
    }
    if (seg)
        munmap(seg, o->bytes);
    if (c != MAP_FAILED)
        munmap(c, sizeof *c);
    return rc;
}

/* ---- Boost, in its own program ---- */

static int measure_boost(const struct opts *o, unsigned procs, struct result *r)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "'%s' --procs %u --ops %ld --window %u --bytes %zu --seed %llu --shift %llu",
             o->boost, procs, o->ops, o->window, o->bytes, (unsigned long long)o->seed,
             (unsigned long long)o->shift);
    fflush(NULL);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    int got = fscanf(f, "%lf %lf %lf", &r->ops_per_s, &r->reserved, &r->live);
    r->uncarved = r->retries = 0;
    int st = pclose(f);
    return got == 3 && st == 0 ? 0 : -1;
}

/* ---- rounds and rows ---- */

typedef int measure_fn(const struct opts *o, unsigned procs, struct result *r);

static const struct kind {
    const char *name;
    measure_fn *measure;
} kinds[] = {{"shmam", measure_shmam}, {"boost", measure_boost}};

struct figures {
    double ops[2][MAX_ROUNDS], frag[2][MAX_ROUNDS], reserved[2][MAX_ROUNDS],
        live[2][MAX_ROUNDS], uncarved[MAX_ROUNDS], retries[MAX_ROUNDS]; /* shmam's */
};

/* Round r (-1: the warm-up) of both kinds in ABBA order; 0 or -1. */
static int round_of(const struct opts *o, unsigned procs, int r, int nk, struct figures *f)
{
    for (int k = 0; k < nk; k++) {
        int i = bm_abba(r < 0 ? 0 : r, k, nk);
        struct result res;
        if (kinds[i].measure(o, procs, &res) != 0) {
            fprintf(stderr, "heapbench: FAILED: %s with %u processes, round %d\n",
                    kinds[i].name, procs, r);
            return -1;
        }
        if (r >= 0) {
            f->ops[i][r] = res.ops_per_s;
            f->frag[i][r] = res.live > 0 ? res.reserved / res.live : 0;
            f->reserved[i][r] = res.reserved / 1024;
            f->live[i][r] = res.live / 1024;
            if (i == 0) {
                f->uncarved[r] = res.uncarved;
                f->retries[r] = res.retries;
            }
        }
    }
    return 0;
}

static void print_rows(const struct opts *o, unsigned procs, int nk,
                       const struct figures *f)
{
    struct bm_row row = {stdout, "heapbench", "posix", (int)procs, 1};
    long iters = o->ops * (long)procs * o->rounds;
    for (int i = 0; i < nk; i++) {
        bm_print(&row, kinds[i].name, iters, "heap_ops_per_s",
                 bm_stat_of(f->ops[i], o->rounds), "1/s", 0);
        bm_print(&row, kinds[i].name, iters, "frag_reserved_over_live",
                 bm_stat_of(f->frag[i], o->rounds), "ratio", 3);
        bm_print(&row, kinds[i].name, iters, "reserved_KB",
                 bm_stat_of(f->reserved[i], o->rounds), "KB", 0);
        bm_print(&row, kinds[i].name, iters, "live_KB", bm_stat_of(f->live[i], o->rounds),
                 "KB", 0);
    }
    bm_print(&row, "shmam", iters, "uncarved", bm_stat_of(f->uncarved, o->rounds), "count",
             0);
    bm_print(&row, "shmam", iters, "enomem_retries", bm_stat_of(f->retries, o->rounds),
             "count", 0);
    if (nk == 2)
        bm_print(&row, "shmam", iters, "shmam_vs_boost",
                 bm_stat_ratio(f->ops[0], f->ops[1], o->rounds), "ratio", 3);
    fflush(stdout);
}

static int measure_all(const struct opts *o, unsigned procs)
{
    static struct figures f;
    int nk = o->boost ? 2 : 1;
    for (int r = -1; r < o->rounds; r++)
        if (round_of(o, procs, r, nk, &f) != 0)
            return 1;
    print_rows(o, procs, nk, &f);
    return 0;
}

/* The heap's fixed metadata: the segment's bytes outside its capacity. */
static void print_meta(const struct opts *o)
{
    void *seg = segment(o->bytes);
    struct am_heap_view h;
    struct am_heap_stats st;
    struct bm_row row = {stdout, "heapbench", "posix", 0, 0};
    if (!seg || am_heap_init(seg, o->bytes) != 0 || am_heap_attach(&h, seg, o->bytes) != 0)
        return;
    am_heap_stats(&h, &st);
    double kb = (double)(o->bytes - st.capacity) / 1024;
    bm_print(&row, "shmam", 0, "meta_KB", bm_stat_of(&kb, 1), "KB", 0);
    munmap(seg, o->bytes);
}

/* ---- command line ---- */

static void usage(FILE *f, int status)
{
    fprintf(f, "usage: heapbench [--procs 1,2,4,8] [--ops N] [--rounds R] [--window W] "
               "[--mbytes M] [--seed S] [--shift S] [--quick] [--boost PATH] [--no-boost] "
               "[--header]\n");
    exit(status);
}

/* A bad command line (bm_opt_range). */
static void bad_line(void)
{
    usage(stderr, 2);
}

/* build/bench/heap_boost beside this program, or NULL if it is not there. */
static struct opts parse(int argc, char **argv)
{
    struct opts o = {{1, 2, 4, 8}, 4,         5,     0, 100000,
                     64,           32u << 20, 12345, 0, bm_program_beside("heap_boost")};
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--procs") == 0 && next) {
            if ((o.nprocs = bm_parse_counts(argv[++i], o.procs, MAX_P, 1, HM_MAX_PROCS)) <
                0)
                usage(stderr, 2);
        } else if (strcmp(argv[i], "--ops") == 0 && next)
            o.ops = bm_opt_range(argv[++i], 1, 1L << 40, bad_line);
        else if (strcmp(argv[i], "--rounds") == 0 && next)
            o.rounds = (int)bm_opt_range(argv[++i], 1, MAX_ROUNDS, bad_line);
        else if (strcmp(argv[i], "--window") == 0 && next)
            o.window = (unsigned)bm_opt_range(argv[++i], 1, HM_MAX_WINDOW, bad_line);
        else if (strcmp(argv[i], "--mbytes") == 0 && next)
            o.bytes = (size_t)bm_opt_range(argv[++i], 1, 1 << 16, bad_line) << 20;
        else if (strcmp(argv[i], "--seed") == 0 && next)
            o.seed = (uint64_t)bm_opt_range(argv[++i], 0, 1L << 62, bad_line);
        else if (strcmp(argv[i], "--shift") == 0 && next)
            o.shift = (uint64_t)bm_opt_range(argv[++i], 0, 1L << 40, bad_line);
        else if (strcmp(argv[i], "--quick") == 0)
            o.ops = 20000, o.rounds = 3;
        else if (!bm_baseline_flag(argc, argv, &i, &o.boost) &&
                 !bm_common_flag(argv[i], &o.header, NULL))
            usage(stderr, 2);
    }
    return o;
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    struct opts o = parse(argc, argv);
    if (!o.boost)
        fprintf(stderr,
                "heapbench: no heap_boost (build it, or --boost PATH): shmam alone\n");
    if (o.header)
        bm_print_header(stdout);
    print_meta(&o);
    int failed = 0;
    for (int p = 0; p < o.nprocs; p++)
        failed |= measure_all(&o, o.procs[p]);
    return failed;
}
