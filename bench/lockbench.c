/*
 * lockbench.c - lock/unlock throughput and fairness of every lock in locks/,
 * side by side with Concurrency Kit's spin locks and a plain process-shared
 * pthread mutex, in forked processes.
 *
 *   build/bench/lockbench [--procs 1,2,4,8] [--threads 1,2,4] [--seconds S]
 *                         [--rounds R] [--quick]
 *                         [--locks NAME,...] [--header] [--verbose]
 *                         [--cs N] [--pause N] [--lines N] [--latency] [--recovery]
 *                         [--wait spin,yield,park]
 *   build/bench/lockbench --list-locks
 *
 * --list-locks prints the names of am_lock_table (lock_table.c), one a line,
 * and exits: scripts that loop over shmam's locks (scripts/locks_programs.py)
 * ask it rather than typing the list again.
 *
 * The locks (impl column):
 *   shmam:NAME
 *            every entry of am_lock_table[] (--list-locks), through its
 *            lock_ops (the robust mutex, and spins that back off and then
 *            yield: spin.h)
 *   ck:fas ck:ticket ck:mcs ck:clh ck:anderson
 *            Concurrency Kit's ck_spinlock_<algo>, header-only and inlined; their
 *            waits spin on a pause instruction and never yield
 *   pthread:mutex
 *            a PTHREAD_PROCESS_SHARED mutex of the default type, not robust
 *
 * Method.  For each P of --procs (default 1,2,4,8) and each lock, the parent maps
 * a fresh MAP_SHARED|MAP_ANONYMOUS region holding the lock, the counter it
 * guards, a start gate, a stop flag and one result line per participant, and forks P
 * processes; process i pins itself to the (i % n)-th CPU the parent may use.
 * When all have reached the gate the parent opens it, sleeps S seconds (default
 * 1, --quick 0.2) and raises the stop flag.  Each process loops until it sees the
 * flag: lock; counter = counter + 1 (a plain, non-atomic read-modify-write) and
 * CS_PAUSES pause instructions; unlock; NCS_PAUSES pauses of work outside the
 * lock.  Then it stores how many times it acquired the lock and exits.  Every
 * lock is called through the same kind of function pointer, so the call costs
 * the same for all.  Time is the parent's, from opening the gate to raising the
 * flag; the few acquisitions that complete after the flag (a waiter already in
 * line still gets its turn) are counted too.
 *
 * A process that spins without yielding still reaches the stop flag: the lock
 * holder it waits for runs again when the scheduler preempts the spinners, so
 * every measurement ends within about S seconds plus a few time slices.  With 4
 * or 8 processes on this 2-core machine, FIFO spin locks that never yield
 * (ck:ticket, ck:mcs, ck:clh, ck:anderson) convoy: each hand-off to a process
 * that is not running waits for a time slice.  That contrast with shmam's
 * yielding spins is part of the result, so it is reported as measured.
 *
 * Threads (--threads 1,2,4; default 1): each of the P processes runs T
 * threads, all taking the lock, so that P x T participants contend (at most
 * MAX_PROCS); participant t of process i has the lock id i T + t, its own
 * result line, queue nodes and histograms.  A process's threads share its
 * CPU (it pins itself before starting them).  Every figure is then per
 * participant: the fairness rows compare the acquisitions of all P x T
 * threads, the latency histograms merge theirs.  Rows of T > 1 name it in
 * impl ("shmam:mcs/t2", after the policy and the knobs); T = 1 adds
 * nothing, so its rows are as they were.  --recovery runs at T = 1 only.
 *
 * Checks: the counter must equal the sum of the per-participant counts (a lock that
 * let two processes in at once loses increments), every process must exit 0,
 * and all must finish within STUCK_S seconds of the stop flag.  A failure prints
 * "lockbench: FAILED ..." on stderr, the remaining locks are still measured, and
 * the exit status is 1.
 *
 * Rounds (--rounds R, default 3): for each P, every lock is measured once per
 * round, the locks in ABBA order (reversed in odd rounds), so that every lock
 * sees the machine in every state; each figure is the median over the rounds,
 * with the lowest and highest round as spread (bench/common/stat.h).
 *
 * Rows, in the common schema of shmam's benchmarks (header with --header):
 *   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 *   lockbench,IMPL,-,P,1,ACQUISITIONS,acq_per_s,V,1/s,LO-HI
 *   lockbench,IMPL,-,P,1,ACQUISITIONS,fairness_min_over_max,V,ratio,LO-HI
 *   lockbench,IMPL,-,P,1,ACQUISITIONS,fairness_cv,V,ratio,LO-HI
 *   (and with --latency: latency_p50 .. latency_p999, cs_p50 .. cs_p999, ns)
 * (ACQUISITIONS: of all rounds together).
 * acq_per_s is all processes' acquisitions per second; fairness_min_over_max is
 * the fewest acquisitions of one participant over the most (1 = even, 0 = some
 * process never got in); fairness_cv is the standard deviation of the
 * per-participant counts over their mean (0 = even; a participant is a
 * process, or with --threads a thread).
 *
 * Knobs (libslock's): --cs N pause instructions inside the critical section
 * (default CS_PAUSES), --pause N outside it (default NCS_PAUSES), --lines N
 * cache lines of a shared array written inside it (default 0).  A setting
 * other than the default is named in impl: "shmam:mcs/cs64/p16/l4".
 *
 * Fairness: besides min/max and the coefficient of variation, Jain's index
 * (sum x)^2 / (N sum x^2) of the N participants' acquisitions (1 = even, 1/N =
 * one participant got everything): row fairness_jain.
 *
 * Latency (--latency): every acquisition is timed, the monotonic clock read
 * before lock() and after it returns, and the clock's own cost (the median
 * of 1001 back-to-back reads in that process) taken off; the samples go to a
 * per-participant log-linear histogram (16 steps per power of two, so within
 * 6.25 %), merged per round.  Rows latency_p50, latency_p99, latency_p999 in
 * ns: the median over the rounds of each round's percentile.  The critical
 * section is timed too, from lock()'s return (the same clock read) to
 * unlock()'s return: the work inside and the release, clock cost taken off,
 * into a second histogram per participant: rows cs_p50, cs_p99, cs_p999 (ns),
 * what a waiter's turn waits for at each hand-off.  The three clock reads
 * (about 3 x 20 ns here) are in the acquisition loop, so acq_per_s of a
 * --latency run is lower than without it, for every lock alike.
 *
 * Waiting policies (--wait, default yield).  shmam's spin locks take the
 * policy in their ctx (lock.h, locks/wait.h): yield (spin with backoff, then
 * yield: the library's default, impl "shmam:ALG"), spin (never yield:
 * "shmam:ALG/spin", every shmam lock but the mutex) and park (spin, then
 * sleep on a futex: "shmam:ALG/park", the locks whose ops say parks:
 * ticket, mcs, clh); each policy listed is a lock of its own in the rounds.
 * shmam:mutex and pthread:mutex spin briefly in glibc and then park on a
 * futex; ck's locks spin only; neither takes a policy.
 *
 * Against ck (row acq_vs_ck): for each shmam lock at the default policy
 * whose algorithm ck has too (ticket, anderson, mcs, clh), its throughput
 * over ck's of the same round, the median of those per-round quotients
 * with the lowest and highest as spread (an in-run ratio).
 *
 * Recovery (--recovery, P >= 2): for each shmam lock, process 0 takes the
 * lock and stays in its critical section, the P - 1 others queue in lock()
 * (their watch asks a robust mutex each process holds for its life:
 * EOWNERDEAD from pthread_mutex_trylock is the kernel's word that it died,
 * as the runtime's lifelines are); after 20 ms the parent SIGKILLs process 0
 * and the row recovery_s is the time from just before the kill to the first
 * acquisition by a waiter (the monotonic clock is the same in every
 * process), median over the rounds (iters: the trials).  Row recovers: 1
 * for shmam's locks, 0 for ck's and pthread's, whose waiters wait for a dead
 * holder for ever (not run; iters: the acquisitions, as in the other rows).
 *
 * Pointers in shared memory.  ck's mcs, clh and anderson locks link waiters by
 * pointers: the lock word points at a node, nodes point at nodes, the anderson
 * lock points at its slot array.  Those pointers are valid in every process here
 * only because the region is mapped once by the parent and fork()ed children
 * inherit it at the same address.  shmam's segments are mapped by unrelated
 * processes at different addresses, where such a pointer means nothing; that is
 * why shmam's own locks name participants and slots by index (lock.h).  Note
 * also that ck's anderson slots are 8 bytes each, several to a cache line, where
 * shmam's have a line each.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic_ops.h>
#include <ck_spinlock.h>

#include "lock.h"
#include "spin.h"
#include "common/harness.h"
#include "common/measure.h"
#include "common/place.h"
#include "common/stat.h"

#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release) ||                   \
    !defined(AO_HAVE_fetch_and_add1)
#error "lockbench needs AO_load_acquire, AO_store_release and AO_fetch_and_add1"
#endif

#define LINE 128      /* one destructive line pair: nothing shared by accident */
#define MAX_PROCS 64  /* participants: processes x threads */
#define MAX_THREADS 8 /* per process */
#define MAX_LOCKS 32
#define MAX_ROUNDS 21
#define CS_PAUSES 4     /* work inside the critical section, besides the counter */
#define NCS_PAUSES 16   /* work between unlock and the next lock */
#define LOCK_BYTES 8192 /* room for any lock's state at the end of the region */
#define GATE_S 30.0     /* seconds for all processes to reach the gate */
#define MAX_LINES 64    /* --lines: cache lines the critical section may touch */
#define BUCKETS 640     /* latency histogram: 16 per power of two up to 2^42 ns */
#define VICTIM_MS 20    /* recovery: how long the waiters queue before the kill */
#define STUCK_S 30.0    /* seconds for all processes to finish after the flag */

/* The region shared by the parent and its P children, one per measurement.
 * Node arrays are used only by the ck locks that need them. */
struct region {
    _Alignas(LINE) AO_t ready; /* children at the gate (fetch-and-add) */
    _Alignas(LINE) AO_t go;    /* parent opens the gate (release) */
    _Alignas(LINE) AO_t stop;  /* parent ends the run (release) */
    _Alignas(LINE) volatile unsigned long counter; /* guarded by the lock */
    struct {
        _Alignas(LINE) AO_t count; /* participant i's acquisitions, stored at exit */
    } proc[MAX_PROCS];
    struct {
        _Alignas(LINE) struct ck_spinlock_mcs node;
    } mcs[MAX_PROCS];
    struct {
        _Alignas(LINE) struct ck_spinlock_clh node;
    } clh[MAX_PROCS + 1]; /* one per participant and the initial "unowned" node */
    _Alignas(LINE) ck_spinlock_anderson_thread_t slots[MAX_PROCS];
    _Alignas(LINE) unsigned char lock[LOCK_BYTES]; /* the lock under test */
    struct {
        _Alignas(LINE) volatile unsigned long w; /* --lines: written under the lock */
    } touch[MAX_LINES];
    struct {
        _Alignas(LINE) unsigned long n[BUCKETS]; /* --latency: process i's histogram */
    } lat[MAX_PROCS];
    struct {
        _Alignas(LINE) unsigned long n[BUCKETS]; /* --latency: its critical sections' */
    } cs[MAX_PROCS];
    struct {
        _Alignas(LINE) pthread_mutex_t life; /* recovery: held by process i for life */
        AO_t dead;                           /* recovery: someone saw EOWNERDEAD */
        AO_t acquired_ns;                    /* recovery: its acquisition's time */
    } rec[MAX_PROCS];
    _Alignas(LINE) AO_t held;   /* recovery: the victim holds the lock */
    _Alignas(LINE) AO_t queued; /* recovery: waiters about to call lock() */
};

_Static_assert(AM_LOCK_ALIGN <= LINE, "the lock area is AM_LOCK_ALIGN-aligned");
_Static_assert(sizeof(ck_spinlock_anderson_t) <= LOCK_BYTES &&
                   sizeof(pthread_mutex_t) <= LOCK_BYTES,
               "every lock fits the lock area");

/* One participant's (thread's) handle on the lock; private to it. */
struct self {
    unsigned i;                          /* participant: process * threads + thread */
    const struct am_lock_ops *ops;       /* shmam locks */
    struct am_lock_ctx ctx;              /* shmam locks */
    struct ck_spinlock_clh *clh;         /* ck:clh: the node this process enqueues */
    ck_spinlock_anderson_thread_t *slot; /* ck:anderson: the slot it holds */
};

struct bench_lock {
    char base[32];                 /* what --locks names */
    char name[64];                 /* impl: base, the policy and the knobs if not the
                                    * defaults */
    const struct am_lock_ops *ops; /* for shmam:*, else NULL */
    unsigned wait;                 /* shmam:*: the ctx's AM_LOCK_WAIT_* */
    int (*init)(struct region *r, const struct am_lock_ops *ops, unsigned procs);
    void (*lock)(struct region *r, struct self *me);
    void (*unlock)(struct region *r, struct self *me);
};

/* shmam's locks, through am_lock_table's operations. */
static int shmam_init(struct region *r, const struct am_lock_ops *ops, unsigned procs)
{
    if (ops->size(procs) > LOCK_BYTES)
        return -ENOMEM;
    return ops->init(r->lock, procs);
}

static void shmam_lock(struct region *r, struct self *me)
{
    if (me->ops->lock(r->lock, &me->ctx) != 0) /* no watch: it never gives up */
        abort();
}

static void shmam_unlock(struct region *r, struct self *me)
{
    me->ops->unlock(r->lock, &me->ctx);
}

/* ck:fas, an exchange (fetch-and-store) lock that spins on reads. */
static int fas_init(struct region *r, const struct am_lock_ops *ops, unsigned procs)
{
    ck_spinlock_fas_init((ck_spinlock_fas_t *)(void *)r->lock);
    return 0;
}

static void fas_lock(struct region *r, struct self *me)
{
    ck_spinlock_fas_lock((ck_spinlock_fas_t *)(void *)r->lock);
}

static void fas_unlock(struct region *r, struct self *me)
{
    ck_spinlock_fas_unlock((ck_spinlock_fas_t *)(void *)r->lock);
}

/* ck:ticket, both halves in one 64-bit word. */
static int ticket_init(struct region *r, const struct am_lock_ops *ops, unsigned procs)
{
    ck_spinlock_ticket_init((ck_spinlock_ticket_t *)(void *)r->lock);
    return 0;
}

static void ticket_lock(struct region *r, struct self *me)
{
    ck_spinlock_ticket_lock((ck_spinlock_ticket_t *)(void *)r->lock);
}

static void ticket_unlock(struct region *r, struct self *me)
{
    ck_spinlock_ticket_unlock((ck_spinlock_ticket_t *)(void *)r->lock);
}

/* ck:mcs: the lock word points at the last waiter's node; process i enqueues
 * node mcs[i] (a pointer into the region: see the file header). */
static int mcs_init(struct region *r, const struct am_lock_ops *ops, unsigned procs)
{
    ck_spinlock_mcs_init((ck_spinlock_mcs_t *)(void *)r->lock);
    return 0;
}

static void mcs_lock(struct region *r, struct self *me)
{
    ck_spinlock_mcs_lock((ck_spinlock_mcs_t *)(void *)r->lock, &r->mcs[me->i].node);
}

static void mcs_unlock(struct region *r, struct self *me)
{
    ck_spinlock_mcs_unlock((ck_spinlock_mcs_t *)(void *)r->lock, &r->mcs[me->i].node);
}

/* ck:clh: the lock word points at the last enqueued node; unlock hands this
 * process its predecessor's node for next time, so me->clh wanders among the
 * P + 1 nodes. */
static int clh_init(struct region *r, const struct am_lock_ops *ops, unsigned procs)
{
    ck_spinlock_clh_init((ck_spinlock_clh_t **)(void *)r->lock, &r->clh[procs].node);
    return 0;
}

static void clh_lock(struct region *r, struct self *me)
{
    if (!me->clh)
        me->clh = &r->clh[me->i].node;
    ck_spinlock_clh_lock((ck_spinlock_clh_t **)(void *)r->lock, me->clh);
}

static void clh_unlock(struct region *r, struct self *me)
{
    ck_spinlock_clh_unlock(&me->clh);
}

/* ck:anderson: a power-of-two number of slots, at least one per participant. */
static int anderson_init(struct region *r, const struct am_lock_ops *ops, unsigned procs)
{
    unsigned n = 1;
    while (n < procs)
        n <<= 1;
    ck_spinlock_anderson_init((ck_spinlock_anderson_t *)(void *)r->lock, r->slots, n);
    return 0;
}

static void anderson_lock(struct region *r, struct self *me)
{
    ck_spinlock_anderson_lock((ck_spinlock_anderson_t *)(void *)r->lock, &me->slot);
}

static void anderson_unlock(struct region *r, struct self *me)
{
    ck_spinlock_anderson_unlock((ck_spinlock_anderson_t *)(void *)r->lock, me->slot);
}

/* pthread:mutex, process-shared, default type, not robust. */
static int pmutex_init(struct region *r, const struct am_lock_ops *ops, unsigned procs)
{
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);
    if (rc == 0)
        rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == 0)
        rc = pthread_mutex_init((pthread_mutex_t *)(void *)r->lock, &a);
    pthread_mutexattr_destroy(&a);
    return -rc;
}

static void pmutex_lock(struct region *r, struct self *me)
{
    int rc = pthread_mutex_lock((pthread_mutex_t *)(void *)r->lock);
    if (rc != 0) {
        fprintf(stderr, "lockbench: pthread_mutex_lock: %s\n", strerror(rc));
        _exit(3);
    }
}

static void pmutex_unlock(struct region *r, struct self *me)
{
    pthread_mutex_unlock((pthread_mutex_t *)(void *)r->lock);
}

static struct bench_lock locks[MAX_LOCKS];
static int nlocks;

/* --wait's policies, by AM_LOCK_WAIT_* (names: wait_names). */
static const char *const wait_names[AM_LOCK_WAITS] = {"yield", "spin", "park"};
static int waits[AM_LOCK_WAITS] = {1, 0, 0};

/* The knobs (see the file header), and whether to time every acquisition. */
static unsigned cs_pauses = CS_PAUSES, ncs_pauses = NCS_PAUSES, cs_lines;
static int timed;

static void add_lock(const char *name, const struct am_lock_ops *ops, unsigned wait,
                     int (*init)(struct region *, const struct am_lock_ops *, unsigned),
                     void (*lock)(struct region *, struct self *),
                     void (*unlock)(struct region *, struct self *))
{
    struct bench_lock *b = &locks[nlocks++];
    char policy[16] = "";
    *b = (struct bench_lock){
        .ops = ops, .wait = wait, .init = init, .lock = lock, .unlock = unlock};
    snprintf(b->base, sizeof b->base, "%s", name);
    if (wait != AM_LOCK_WAIT_YIELD)
        snprintf(policy, sizeof policy, "/%s", wait_names[wait]);
    if (cs_pauses == CS_PAUSES && ncs_pauses == NCS_PAUSES && cs_lines == 0)
        snprintf(b->name, sizeof b->name, "%s%s", name, policy);
    else
        snprintf(b->name, sizeof b->name, "%s%s/cs%u/p%u/l%u", name, policy, cs_pauses,
                 ncs_pauses, cs_lines);
}

/* Does shmam lock ops wait under policy w (rather than ignore it)? */
static int honours(const struct am_lock_ops *ops, unsigned w)
{
    return w == AM_LOCK_WAIT_YIELD || (w == AM_LOCK_WAIT_SPIN && ops != &am_lock_mutex) ||
           (w == AM_LOCK_WAIT_PARK && ops->parks);
}

static void make_table(void)
{
    char name[32];
    for (unsigned w = 0; w < AM_LOCK_WAITS; w++)
        for (const struct am_lock_ops *const *o = am_lock_table;
             waits[w] && *o && nlocks < MAX_LOCKS - 6; o++) {
            snprintf(name, sizeof name, "shmam:%s", (*o)->name);
            if (honours(*o, w))
                add_lock(name, *o, w, shmam_init, shmam_lock, shmam_unlock);
        }
    add_lock("ck:fas", NULL, 0, fas_init, fas_lock, fas_unlock);
    add_lock("ck:ticket", NULL, 0, ticket_init, ticket_lock, ticket_unlock);
    add_lock("ck:mcs", NULL, 0, mcs_init, mcs_lock, mcs_unlock);
    add_lock("ck:clh", NULL, 0, clh_init, clh_lock, clh_unlock);
    add_lock("ck:anderson", NULL, 0, anderson_init, anderson_lock, anderson_unlock);
    add_lock("pthread:mutex", NULL, 0, pmutex_init, pmutex_lock, pmutex_unlock);
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static inline void pauses(unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        spin_cpu_relax();
}

/* The histogram bucket of v ns: v itself below 16, else 16 steps per power
 * of two; and back, the middle of bucket k. */
static unsigned bucket_of(unsigned long v)
{
    if (v < 16)
        return (unsigned)v;
    unsigned p = 63u - (unsigned)__builtin_clzl(v);
    unsigned k = (p - 3) * 16 + (unsigned)((v >> (p - 4)) & 15);
    return k < BUCKETS ? k : BUCKETS - 1;
}

static double bucket_ns(unsigned k)
{
    if (k < 16)
        return k;
    unsigned p = k / 16 + 3;
    double lo = (double)((16ul + k % 16) << (p - 4));
    return lo + (double)(1ul << (p - 4)) / 2;
}

/* The critical section: the guarded counter, cs_lines lines, cs_pauses. */
static inline void critical(struct region *r)
{
    r->counter = r->counter + 1;
    for (unsigned l = 0; l < cs_lines; l++)
        r->touch[l].w = r->touch[l].w + 1;
    pauses(cs_pauses);
}

/* A participant of a measurement: lock `b` in region r, as id i. */
struct worker {
    struct region *r;
    const struct bench_lock *b;
    unsigned i;
};

/* Participant w->i: wait at the gate, then lock, count, unlock until the
 * stop flag.  The acquire loads of go and stop pair with the parent's release
 * stores; the count is read by the parent after waitpid. */
static void *work(void *arg)
{
    const struct worker *w = arg;
    struct region *r = w->r;
    const struct bench_lock *b = w->b;
    unsigned i = w->i;
    struct self me = {.i = i, .ops = b->ops, .ctx = {.self = i, .wait = b->wait}};
    unsigned long cost = timed ? (unsigned long)bm_clock_cost_ns() : 0, *hist = r->lat[i].n,
                  *cs = r->cs[i].n;
    AO_fetch_and_add1(&r->ready);
    while (!AO_load_acquire(&r->go))
        sched_yield();
    unsigned long n = 0;
    while (!AO_load_acquire(&r->stop)) {
        if (timed) {
            unsigned long t0 = (unsigned long)bm_now_ns();
            b->lock(r, &me);
            unsigned long t1 = (unsigned long)bm_now_ns(), d = t1 - t0;
            hist[bucket_of(d > cost ? d - cost : 0)]++;
            critical(r);
            b->unlock(r, &me);
            d = (unsigned long)bm_now_ns() - t1;
            cs[bucket_of(d > cost ? d - cost : 0)]++;
        } else {
            b->lock(r, &me);
            critical(r);
            b->unlock(r, &me);
        }
        n++;
        pauses(ncs_pauses);
    }
    AO_store(&r->proc[i].count, n);
    return NULL;
}

/* Process i: pins itself, runs participants i * threads .. + threads - 1,
 * one in itself and the others in threads, and exits once all are done. */
static void child(struct region *r, const struct bench_lock *b, unsigned i,
                  unsigned threads)
{
    struct worker w[MAX_PROCS];
    pthread_t th[MAX_PROCS];

    if (bm_pin_nth(i) != 0) {
        fprintf(stderr, "lockbench: %s: process %u cannot pin itself: %s\n", b->name, i,
                strerror(errno));
        _exit(3);
    }
    for (unsigned t = 0; t < threads; t++)
        w[t] = (struct worker){r, b, i * threads + t};
    for (unsigned t = 1; t < threads; t++)
        if (pthread_create(&th[t], NULL, work, &w[t]) != 0) {
            fprintf(stderr, "lockbench: %s: process %u cannot start a thread\n", b->name,
                    i);
            _exit(3);
        }
    work(&w[0]);
    for (unsigned t = 1; t < threads; t++)
        pthread_join(th[t], NULL);
    _exit(0);
}

/* Parent: wait (1 ms naps) until every child has exited or `deadline` passes;
 * returns how many are left, and ORs into *bad whether any exited abnormally. */
static unsigned reap(pid_t *pid, unsigned procs, double deadline, int *bad)
{
    unsigned left = procs;
    for (unsigned k = 0; k < procs; k++)
        left -= pid[k] == 0;
    while (left > 0 && bm_now_s() < deadline) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p <= 0) {
            nap(0.001);
            continue;
        }
        for (unsigned k = 0; k < procs; k++)
            if (pid[k] == p) {
                pid[k] = 0;
                left--;
                *bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
            }
    }
    return left;
}

/* Parent: SIGKILL and reap every child still listed in pid[]. */
static void kill_all(pid_t *pid, unsigned procs)
{
    for (unsigned k = 0; k < procs; k++)
        if (pid[k] > 0) {
            kill(pid[k], SIGKILL);
            waitpid(pid[k], NULL, 0);
            pid[k] = 0;
        }
}

struct result {
    unsigned long total, min, max, counter;
    double seconds, cv, jain;
    double p50, p99, p999;    /* --latency, ns */
    double cs50, cs99, cs999; /* --latency: the critical section, ns */
};

/* The ns at fraction q of the acquisitions in the merged histogram h. */
static double percentile(const unsigned long *h, unsigned long total, double q)
{
    unsigned long want = (unsigned long)(q * (double)total), seen = 0;
    for (unsigned k = 0; k < BUCKETS; k++)
        if ((seen += h[k]) > want)
            return bucket_ns(k);
    return bucket_ns(BUCKETS - 1);
}

/* The percentiles p50, p99, p99.9 into q[] of one histogram per participant
 * (the k-th's at hist + k * stride), merged. */
static void merged(const unsigned long *hist, size_t stride, unsigned procs, double *q)
{
    static unsigned long h[BUCKETS];
    unsigned long total = 0;
    memset(h, 0, sizeof h);
    for (unsigned k = 0; k < procs; k++)
        for (unsigned j = 0; j < BUCKETS; j++) {
            h[j] += hist[k * stride + j];
            total += hist[k * stride + j];
        }
    q[0] = percentile(h, total, 0.5);
    q[1] = percentile(h, total, 0.99);
    q[2] = percentile(h, total, 0.999);
}

/* The latency percentiles of a run, acquisitions and critical sections. */
static void latencies(const struct region *r, unsigned procs, struct result *res)
{
    double q[3];
    merged(r->lat[0].n, sizeof r->lat[0] / sizeof(unsigned long), procs, q);
    res->p50 = q[0], res->p99 = q[1], res->p999 = q[2];
    merged(r->cs[0].n, sizeof r->cs[0] / sizeof(unsigned long), procs, q);
    res->cs50 = q[0], res->cs99 = q[1], res->cs999 = q[2];
}

static void tally(const struct region *r, unsigned procs, struct result *res)
{
    double sum = 0, sq = 0;
    res->min = ~0ul;
    res->max = res->total = 0;
    for (unsigned k = 0; k < procs; k++) {
        unsigned long c = AO_load(&r->proc[k].count);
        res->total += c;
        res->min = c < res->min ? c : res->min;
        res->max = c > res->max ? c : res->max;
        sum += (double)c;
        sq += (double)c * (double)c;
    }
    double mean = sum / procs, var = sq / procs - mean * mean;
    res->cv = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
    res->jain = sq > 0 ? sum * sum / (procs * sq) : 0;
    res->counter = r->counter;
    if (timed)
        latencies(r, procs, res);
}

/* One measurement of lock `b` with `procs` processes of `threads` threads
 * for `secs` seconds.  Returns 0, or -1 after saying on stderr what failed. */
static int measure(const struct bench_lock *b, unsigned procs, unsigned threads,
                   double secs, int verbose, struct result *res)
{
    unsigned n = procs * threads; /* participants */
    struct region *r =
        mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED) {
        fprintf(stderr, "lockbench: FAILED (%s): mmap: %s\n", b->name, strerror(errno));
        return -1;
    }
    int rc = b->init(r, b->ops, n), bad = 0;
    pid_t pid[MAX_PROCS] = {0};
    unsigned started = 0;
    fflush(NULL);
    for (; rc == 0 && started < procs; started++) {
        pid[started] = fork();
        if (pid[started] < 0)
            rc = -errno;
        else if (pid[started] == 0)
            child(r, b, started, threads);
    }
    double t0 = bm_now_s(), give_up = t0 + GATE_S;
    while (rc == 0 && AO_load(&r->ready) < n && bm_now_s() < give_up)
        nap(0.001);
    if (rc == 0 && AO_load(&r->ready) < n)
        rc = -ETIMEDOUT;
    if (rc == 0) {
        t0 = bm_now_s();
        AO_store_release(&r->go, 1); /* pairs with the children's acquire loads */
        nap(secs);
        AO_store_release(&r->stop, 1);
        res->seconds = bm_now_s() - t0;
    } else {
        AO_store_release(&r->go, 1);
        AO_store_release(&r->stop, 1);
    }
    unsigned stuck = reap(pid, started, bm_now_s() + STUCK_S, &bad);
    kill_all(pid, started);
    if (rc == 0 && !stuck && !bad)
        tally(r, n, res);
    if (verbose && rc == 0 && !stuck && !bad) {
        fprintf(stderr, "lockbench: %s, %u procs x %u threads:", b->name, procs, threads);
        for (unsigned k = 0; k < n; k++)
            fprintf(stderr, " %lu", (unsigned long)AO_load(&r->proc[k].count));
        fprintf(stderr, "\n");
    }
    munmap(r, sizeof *r);
    if (rc < 0)
        fprintf(stderr, "lockbench: FAILED (%s, %u procs): could not start: %s\n", b->name,
                procs, strerror(-rc));
    else if (stuck || bad)
        fprintf(stderr,
                "lockbench: FAILED (%s, %u procs): %u processes still running "
                "%.0f s after the stop flag (killed), %s\n",
                b->name, procs, stuck, STUCK_S,
                bad ? "some exited abnormally" : "none exited abnormally");
    else if (res->counter != res->total)
        fprintf(stderr,
                "lockbench: FAILED (%s, %u procs): mutual exclusion broken: the "
                "guarded counter is %lu but the processes counted %lu "
                "acquisitions\n",
                b->name, procs, res->counter, res->total);
    else
        return 0;
    return -1;
}

/* The rounds' figures of one lock at one process count. */
struct figures {
    double acq[MAX_ROUNDS], fair[MAX_ROUNDS], cv[MAX_ROUNDS], jain[MAX_ROUNDS];
    double p50[MAX_ROUNDS], p99[MAX_ROUNDS], p999[MAX_ROUNDS];
    double cs50[MAX_ROUNDS], cs99[MAX_ROUNDS], cs999[MAX_ROUNDS];
    double recovery[MAX_ROUNDS]; /* --recovery, s */
    unsigned long total[MAX_ROUNDS];
    int n, nrec;
};

static void record(struct figures *f, const struct result *res)
{
    f->acq[f->n] = (double)res->total / res->seconds;
    f->fair[f->n] = res->max ? (double)res->min / (double)res->max : 0.0;
    f->cv[f->n] = res->cv;
    f->jain[f->n] = res->jain;
    f->p50[f->n] = res->p50;
    f->p99[f->n] = res->p99;
    f->p999[f->n] = res->p999;
    f->cs50[f->n] = res->cs50;
    f->cs99[f->n] = res->cs99;
    f->cs999[f->n] = res->cs999;
    f->total[f->n++] = res->total;
}

/* The rows of one lock, process and thread count: median over the rounds, spread
 * lowest-highest; iters is the acquisitions of all its rounds.  ck: the
 * figures of ck's lock of the same algorithm, measured in the same rounds
 * (NULL: none). */
static void report(const struct bench_lock *b, unsigned procs, unsigned threads,
                   const struct figures *f, const struct figures *ck)
{
    struct bm_row row = {stdout, "lockbench", "-", (int)procs, 1};
    char impl[80];
    if (threads > 1)
        snprintf(impl, sizeof impl, "%s/t%u", b->name, threads);
    else
        snprintf(impl, sizeof impl, "%s", b->name);
    unsigned long total = 0;
    for (int i = 0; i < f->n; i++)
        total += f->total[i];
    bm_print(&row, impl, (long)total, "acq_per_s", bm_stat_of(f->acq, f->n), "1/s", 0);
    if (ck && ck->n == f->n)
        bm_print(&row, impl, (long)total, "acq_vs_ck", bm_stat_ratio(f->acq, ck->acq, f->n),
                 "ratio", 3);
    bm_print(&row, impl, (long)total, "fairness_min_over_max", bm_stat_of(f->fair, f->n),
             "ratio", 3);
    bm_print(&row, impl, (long)total, "fairness_cv", bm_stat_of(f->cv, f->n), "ratio", 3);
    bm_print(&row, impl, (long)total, "fairness_jain", bm_stat_of(f->jain, f->n), "ratio",
             3);
    if (timed) {
        bm_print(&row, impl, (long)total, "latency_p50", bm_stat_of(f->p50, f->n), "ns", 0);
        bm_print(&row, impl, (long)total, "latency_p99", bm_stat_of(f->p99, f->n), "ns", 0);
        bm_print(&row, impl, (long)total, "latency_p999", bm_stat_of(f->p999, f->n), "ns",
                 0);
        bm_print(&row, impl, (long)total, "cs_p50", bm_stat_of(f->cs50, f->n), "ns", 0);
        bm_print(&row, impl, (long)total, "cs_p99", bm_stat_of(f->cs99, f->n), "ns", 0);
        bm_print(&row, impl, (long)total, "cs_p999", bm_stat_of(f->cs999, f->n), "ns", 0);
    }
    fflush(stdout);
}

/* ---- recovery: a holder SIGKILLed, the time to the next acquisition ---- */

/* The watch's dead(): process `who`'s life mutex says EOWNERDEAD (final:
 * recorded in dead, since the caller now owns the mutex). */
static int life_dead(const void *arg, unsigned who)
{
    struct region *r = (struct region *)arg;
    if (who >= MAX_PROCS)
        return 1;
    if (AO_load_acquire(&r->rec[who].dead))
        return 1;
    int rc = pthread_mutex_trylock(&r->rec[who].life);
    if (rc == EOWNERDEAD) {
        AO_store_release(&r->rec[who].dead, 1);
        return 1;
    }
    if (rc == 0)
        pthread_mutex_unlock(&r->rec[who].life); /* not taken yet: alive */
    return 0;
}

/* Parent: the life mutexes, robust and process-shared.  0 or -errno. */
static int life_init(struct region *r, unsigned procs)
{
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);
    if (rc == 0)
        rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == 0)
        rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    for (unsigned k = 0; rc == 0 && k < procs; k++)
        rc = pthread_mutex_init(&r->rec[k].life, &a);
    pthread_mutexattr_destroy(&a);
    return -rc;
}

/* Recovery process i: holds its life mutex; 0 takes the lock and stays, the
 * others queue behind it and record when they get in. */
static void rec_child(struct region *r, const struct bench_lock *b, unsigned i)
{
    const struct am_lock_watch watch = {life_dead, NULL, r};
    struct self me = {
        .i = i, .ops = b->ops, .ctx = {.self = i, .watch = &watch, .wait = b->wait}};
    if (bm_pin_nth(i) != 0 || pthread_mutex_lock(&r->rec[i].life) != 0)
        _exit(3);
    if (i == 0) {
        b->lock(r, &me);
        AO_store_release(&r->held, 1);
        for (;;)
            pause();
    }
    while (!AO_load_acquire(&r->held))
        sched_yield();
    AO_fetch_and_add1(&r->queued);
    b->lock(r, &me);
    AO_store(&r->rec[i].acquired_ns, (unsigned long)bm_now_ns());
    b->unlock(r, &me);
    _exit(0);
}

/* One recovery trial of shmam lock b with `procs` processes: the seconds
 * from the kill to the first waiter's acquisition into *secs.  0, or -1
 * after saying on stderr what failed. */
static int recover_once(const struct bench_lock *b, unsigned procs, double *secs)
{
    struct region *r =
        mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return -1;
    int rc = b->init(r, b->ops, procs), bad = 0;
    if (rc == 0)
        rc = life_init(r, procs);
    pid_t pid[MAX_PROCS] = {0};
    unsigned started = 0;
    fflush(NULL);
    for (; rc == 0 && started < procs; started++) {
        pid[started] = fork();
        if (pid[started] < 0)
            rc = -errno;
        else if (pid[started] == 0)
            rec_child(r, b, started);
    }
    double give_up = bm_now_s() + GATE_S;
    while (rc == 0 && AO_load(&r->queued) < procs - 1 && bm_now_s() < give_up)
        nap(0.001);
    unsigned long t_kill = 0;
    if (rc == 0 && AO_load(&r->queued) == procs - 1) {
        nap(VICTIM_MS / 1000.0); /* the waiters are in lock() by now */
        t_kill = (unsigned long)bm_now_ns();
        kill(pid[0], SIGKILL);
    } else if (rc == 0)
        rc = -ETIMEDOUT;
    unsigned stuck = reap(pid + 1, started ? started - 1 : 0, bm_now_s() + STUCK_S, &bad);
    kill_all(pid, started);
    unsigned long first = 0;
    for (unsigned k = 1; k < procs; k++) {
        unsigned long t = AO_load(&r->rec[k].acquired_ns);
        if (t && (!first || t < first))
            first = t;
    }
    munmap(r, sizeof *r);
    if (rc < 0 || stuck || bad || !first || first < t_kill) {
        fprintf(stderr, "lockbench: FAILED (%s, %u procs): recovery: %s\n", b->name, procs,
                rc < 0  ? strerror(-rc)
                : stuck ? "waiters stuck (killed)"
                        : "no acquisition");
        return -1;
    }
    *secs = (double)(first - t_kill) * 1e-9;
    return 0;
}

/* The recovery rows of lock b (see the file header). */
static void report_recovery(const struct bench_lock *b, unsigned procs,
                            const struct figures *f)
{
    struct bm_row row = {stdout, "lockbench", "-", (int)procs, 1};
    struct bm_stat yes = {b->ops ? 1.0 : 0.0, b->ops ? 1.0 : 0.0, b->ops ? 1.0 : 0.0, 1};
    long total = 0;
    for (int i = 0; i < f->n; i++)
        total += (long)f->total[i];
    bm_print(&row, b->name, total, "recovers", yes, "bool", 0); /* a property of the lock */
    bm_print(&row, b->name, f->nrec, "recovery_s", bm_stat_of(f->recovery, f->nrec), "s",
             6);
    fflush(stdout);
}

struct opts {
    unsigned procs[MAX_PROCS], threads[MAX_PROCS];
    int nprocs, nthreads, rounds, header, verbose, recovery;
    double seconds;
    char *only; /* comma-separated lock names, or NULL for all */
};

/* Prints the usage to f and exits with status: stdout and 0 for --help,
 * stderr and 2 for a bad command line. */
static void usage(FILE *f, int status)
{
    fprintf(
        f,
        "usage: lockbench [--procs 1,2,4,8] [--threads 1,2,4] [--seconds S] [--rounds R] "
        "[--quick] [--locks NAME,...] [--header] [--verbose]\n"
        "                 [--cs N] [--pause N] [--lines N] [--latency] [--recovery]\n"
        "                 [--wait spin,yield,park]\n"
        "       lockbench --list-locks\n");
    exit(status);
}

/* A knob's value from s, 0 .. max. */
static unsigned knob(const char *s, long max)
{
    long v;
    if (bm_arg_long(s, 0, &v) != 0 || v > max)
        usage(stderr, 2);
    return (unsigned)v;
}

/* --wait's comma-separated policies into waits[]. */
static void parse_waits(const char *list)
{
    memset(waits, 0, sizeof waits);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        size_t n = strcspn(p, ",");
        unsigned w = 0;
        while (w < AM_LOCK_WAITS &&
               (strlen(wait_names[w]) != n || strncmp(p, wait_names[w], n) != 0))
            w++;
        if (w == AM_LOCK_WAITS)
            usage(stderr, 2);
        waits[w] = 1;
    }
}

static struct opts parse(int argc, char **argv)
{
    struct opts o = {.procs = {1, 2, 4, 8},
                     .nprocs = 4,
                     .threads = {1},
                     .nthreads = 1,
                     .seconds = 1.0,
                     .rounds = 3};
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--procs") == 0 && next) {
            if ((o.nprocs = bm_parse_counts(argv[++i], o.procs, MAX_PROCS, 1, MAX_PROCS)) <
                0)
                usage(stderr, 2);
        } else if (strcmp(argv[i], "--threads") == 0 && next) {
            if ((o.nthreads =
                     bm_parse_counts(argv[++i], o.threads, MAX_PROCS, 1, MAX_THREADS)) < 0)
                usage(stderr, 2);
        } else if (strcmp(argv[i], "--seconds") == 0 && next) {
            char *end;
            o.seconds = strtod(argv[++i], &end);
            if (*end || !(o.seconds > 0 && o.seconds <= 3600))
                usage(stderr, 2);
        } else if (strcmp(argv[i], "--rounds") == 0 && next) {
            char *end;
            o.rounds = (int)strtol(argv[++i], &end, 10);
            if (*end || o.rounds < 1 || o.rounds > MAX_ROUNDS)
                usage(stderr, 2);
        } else if (strcmp(argv[i], "--quick") == 0)
            o.seconds = 0.2;
        else if (strcmp(argv[i], "--locks") == 0 && next)
            o.only = argv[++i];
        else if (strcmp(argv[i], "--cs") == 0 && next)
            cs_pauses = knob(argv[++i], 1000000);
        else if (strcmp(argv[i], "--pause") == 0 && next)
            ncs_pauses = knob(argv[++i], 1000000);
        else if (strcmp(argv[i], "--lines") == 0 && next)
            cs_lines = knob(argv[++i], MAX_LINES);
        else if (strcmp(argv[i], "--latency") == 0)
            timed = 1;
        else if (strcmp(argv[i], "--recovery") == 0)
            o.recovery = 1;
        else if (strcmp(argv[i], "--wait") == 0 && next)
            parse_waits(argv[++i]);
        else if (!bm_common_flag(argv[i], &o.header, &o.verbose))
            usage(stderr, 2);
    }
    for (int p = 0; p < o.nprocs; p++)
        for (int t = 0; t < o.nthreads; t++)
            if (o.procs[p] * o.threads[t] > MAX_PROCS)
                usage(stderr, 2); /* more participants than the region has room for */
    return o;
}

/* Every chosen lock with `procs` processes of `threads` threads, o->rounds
 * rounds, the locks in ABBA order; a lock that fails a round is reported
 * failed and not printed.  Returns 1 if any failed. */
static int measure_all(const struct opts *o, unsigned procs, unsigned threads);

/* Is `name` in the comma-separated list (NULL: everything is)? */
static int selected(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return list == NULL;
}

/* The lock of ck with the algorithm of shmam lock k at the default policy
 * and knobs alike, or -1. */
static int counterpart(int k)
{
    char name[32];
    if (!locks[k].ops || locks[k].wait != AM_LOCK_WAIT_YIELD)
        return -1;
    snprintf(name, sizeof name, "ck:%s", locks[k].ops->name);
    for (int j = 0; j < nlocks; j++)
        if (strcmp(locks[j].base, name) == 0)
            return j;
    return -1;
}

static int measure_all(const struct opts *o, unsigned procs, unsigned threads)
{
    int rec = o->recovery && procs >= 2 && threads == 1;
    static struct figures f[MAX_LOCKS];
    int bad[MAX_LOCKS] = {0}, failed = 0;

    memset(f, 0, sizeof f);
    for (int r = 0; r < o->rounds; r++)
        for (int j = 0; j < nlocks; j++) {
            int k = bm_abba(r, j, nlocks);
            struct result res = {0};
            if (!selected(o->only, locks[k].base) || bad[k])
                continue;
            if (measure(&locks[k], procs, threads, o->seconds, o->verbose, &res) == 0)
                record(&f[k], &res);
            else
                bad[k] = failed = 1;
            double secs;
            if (!rec || !locks[k].ops || bad[k])
                continue;
            if (recover_once(&locks[k], procs, &secs) == 0)
                f[k].recovery[f[k].nrec++] = secs;
            else
                bad[k] = failed = 1;
        }
    for (int k = 0; k < nlocks; k++)
        if (selected(o->only, locks[k].base) && !bad[k]) {
            int c = counterpart(k);
            report(&locks[k], procs, threads, &f[k],
                   c >= 0 && !bad[c] && f[c].n ? &f[c] : NULL);
            if (rec)
                report_recovery(&locks[k], procs, &f[k]);
        }
    return failed;
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    if (argc == 2 && strcmp(argv[1], "--list-locks") == 0) {
        for (const struct am_lock_ops *const *t = am_lock_table; *t; t++)
            printf("%s\n", (*t)->name);
        return 0;
    }
    struct opts o = parse(argc, argv);
    make_table();
    int chosen = 0;
    for (int k = 0; k < nlocks; k++)
        chosen += selected(o.only, locks[k].base);
    if (chosen == 0) {
        fprintf(stderr, "lockbench: no lock named in --locks; known:");
        for (int k = 0; k < nlocks; k++)
            fprintf(stderr, " %s", locks[k].base);
        fprintf(stderr, "\n");
        return 2;
    }
    if (o.header)
        bm_print_header(stdout);
    int failed = 0;
    for (int t = 0; t < o.nthreads; t++)
        for (int p = 0; p < o.nprocs; p++)
            failed |= measure_all(&o, o.procs[p], o.threads[t]);
    return failed;
}
