/*
 * preload.c - libshmam-locks.so: an unmodified dynamically linked program
 * loaded with LD_PRELOAD=libshmam-locks.so SHMAM_LOCK=NAME gets its
 * pthread mutexes replaced by lock NAME of am_lock_table (lock.h), and
 * condition variables that work with them (man/shmam-locks.7).
 *
 * Settings (read once, at the first call): SHMAM_LOCK names the lock (unset,
 * empty or "glibc": glibc's own mutex, for a baseline; an unknown name ends
 * the program with a message); SHMAM_LOCK_WAIT=spin|yield|park the waiting
 * policy (lock.h); SHMAM_LOCK_PROCS the participants a lock's arrays are
 * sized for (default 32: more threads share queue nodes, and the FIFO locks
 * let at most that many wait at once, the rest waiting for room);
 * SHMAM_LOCK_STATS=1 per-lock statistics on stderr at exit.
 *
 * Where the state lives.  Every lock's state is at least AM_LOCK_ALIGN (128)
 * bytes and a pthread_mutex_t is 40, so a replaced mutex keeps its state in
 * a `struct pm` found by the mutex's address in a hash (buckets of lists,
 * pushed with a compare-and-swap under a private lock, read without one).
 * An entry is made at pthread_mutex_init, or at the first use of a mutex
 * that was initialised statically (PTHREAD_MUTEX_INITIALIZER and the
 * recursive and error-checking _NP ones: the type is read from glibc's
 * __kind), and is never freed: pthread_mutex_destroy resets it, and a new
 * mutex at the same address reuses it.
 *
 * What stays glibc's.  A priority inheriting or protecting mutex (glibc's
 * __kind says so; init passes every mutex to glibc first in any case) keeps
 * glibc's implementation in its own memory; the statistics mark it
 * "(glibc's)".
 *
 * Process-shared and robust mutexes.  Their lock's state must be where
 * every process that uses the mutex sees it, and no lock of am_lock_table
 * fits the mutex's 40 bytes, so init puts it in a mapping of its own,
 * MAP_SHARED and anonymous (a `struct pshm`), and writes the mapping's
 * address, tagged, into the mutex's robust-list links (glibc's __list, which
 * glibc never uses on a mutex that only this library locks).  The processes
 * that the initialising one forks afterwards inherit the mapping at the same
 * address, so they share the lock (the usual use: a mutex in shared memory,
 * then fork); a process that finds the tag but not the mapping (it mapped the
 * mutex's memory some other way) gets EINVAL from every call: there is no
 * name to find the state by.  Participants are threads: a thread's first use
 * of such a mutex takes it a slot (SHMAM_LOCK_PROCS of them, for the mutex's
 * life: then EAGAIN) and locks the slot's own glibc robust mutex for the rest
 * of its life, a lifeline: the lock's watch asks it (EOWNERDEAD: the slot's
 * thread died), so a waiter passes a dead holder's or waiter's turn as the
 * runtime's do.  Robust: the holder's slot is in the mapping while it holds
 * the lock and cleared before it unlocks, so the next holder that finds one
 * there took the lock over from a dead holder and returns EOWNERDEAD; until
 * pthread_mutex_consistent, an unlock makes the mutex ENOTRECOVERABLE, as
 * pthreads says.  (A holder that dies between its lock() and storing its
 * slot, a few instructions, passes unreported.)  trylock of a robust mutex
 * whose holder died takes it over (waiting behind live waiters, if any)
 * rather than saying EBUSY.  A process-shared mutex that is not robust
 * passes a dead holder over too, silently.
 *
 * Types.  PTHREAD_MUTEX_ERRORCHECK: relocking by the holder is EDEADLK (trylock
 * EBUSY), unlock by another thread EPERM; RECURSIVE: the holder relocks,
 * counted, and another thread's unlock is EPERM; NORMAL (and ADAPTIVE):
 * relocking deadlocks as glibc's does, and another thread's unlock releases
 * the lock as the holder would (its participant id is the holder's).
 * timedlock and clocklock poll trylock until the deadline, with growing
 * pauses (at most POLL_MAX_NS): a waiter that gave up in lock() would leave
 * an abandoned turn that only a later waiter passes, and until then the
 * free mutex would look busy to trylock.  So timed waiters are not FIFO.
 * Threads of one process do not die alone: lock() takes no watch.
 *
 * Condition variables.  shmam's own, in the pthread_cond_t's memory (it
 * fits): a 32-bit sequence number, a count of waiters and the clock.  wait()
 * reads the sequence, unlocks, sleeps on it with FUTEX_WAIT (shared futexes,
 * so process-shared condition variables work too) and relocks; signal and
 * broadcast bump it and wake one or all sleepers.  A waiter that read the
 * sequence before a signal cannot miss it: the futex compares.  Spurious
 * wake-ups happen, as POSIX allows.  A zeroed pthread_cond_t
 * (PTHREAD_COND_INITIALIZER) is a valid one on CLOCK_REALTIME.
 *
 * Our own calls.  mutex.c's lock and held.c call pthread_mutex_* on their own
 * mutexes; inside the library (the thread-local `inside`) every call goes to
 * glibc's (dlsym RTLD_NEXT).
 */
#include <atomic_ops.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "stats.h"

#define EXPORT __attribute__((visibility("default")))
#define BUCKETS 4096u
#define POLL_MAX_NS 200000L  /* a timed waiter's longest sleep between attempts */
#define KIND_GLIBC (32 | 64) /* PI, PP */
#define KIND_ROBUST 16
#define KIND_PSHARED 128
#define PSHM_MAGIC 0x73686d616d706d31ull /* "shmampm1", also the address's tag */
#define MY_SLOTS 16                      /* shared mutexes one thread may use */

/* The state of a process-shared or robust mutex, in a mapping of its own
 * (see the file header), followed by `procs` lifelines (glibc robust
 * process-shared mutexes), as many dead flags and the lock's state. */
struct pshm {
    AO_t magic;  /* PSHM_MAGIC once made */
    AO_t key;    /* the mutex's address */
    AO_t holder; /* the holder's slot + 1 while it holds the lock, else 0 */
    AO_t cons;   /* CONSISTENT, INCONSISTENT (after EOWNERDEAD), UNRECOVERABLE */
    AO_t slots;  /* slots handed out (fetch-and-add) */
};

enum { CONSISTENT, INCONSISTENT, UNRECOVERABLE };

/* One replaced (or glibc-kept) mutex. */
struct pm {
    pthread_mutex_t *key;
    struct pm *next;            /* bucket chain; never unlinked */
    int type;                   /* PTHREAD_MUTEX_*, glibc's __kind & 3 */
    int glibc;                  /* kept glibc's (see the file header) */
    AO_t owner;                 /* holder's thread id, 0 if free */
    unsigned count;             /* recursion depth, by the holder */
    unsigned self;              /* holder's participant id */
    unsigned long long held;    /* holder's ctx.held */
    unsigned long long since;   /* holder's acquisition time (stats) */
    struct pm_stats st;         /* written by the holder only */
    void *state;                /* the lock's, AM_LOCK_ALIGN-aligned */
    int shared;                 /* process-shared or robust: the lock is shm's */
    int robust;                 /* reports EOWNERDEAD */
    struct pshm *shm;           /* shared: its state; NULL if unusable here */
    struct am_lock_watch watch; /* shared: asks shm's lifelines */
};

static struct {
    int (*init)(pthread_mutex_t *, const pthread_mutexattr_t *);
    int (*lock)(pthread_mutex_t *);
    int (*trylock)(pthread_mutex_t *);
    int (*timedlock)(pthread_mutex_t *, const struct timespec *);
    int (*clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*unlock)(pthread_mutex_t *);
    int (*destroy)(pthread_mutex_t *);
    int (*consistent)(pthread_mutex_t *);
} real;

/* A timed lock's deadline. */
struct deadline {
    clockid_t clock;
    struct timespec at;
};

static const struct am_lock_ops *ops; /* NULL: glibc's for every mutex */
static unsigned wait_policy, procs = 32;
static int stats_on;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static AO_t ready;
static AO_TS_t table_lock = AO_TS_INITIALIZER; /* inserting into the hash */
static struct pm *volatile bucket[BUCKETS];
static AO_t thread_ids;

static __thread int inside; /* a call from inside the library goes to glibc */
static __thread unsigned my_id, my_tid;
static pid_t my_pid; /* this process's, reset in a fork's child */
static __thread struct {
    const struct pshm *p;
    pid_t pid; /* the slot is this thread's only in the process that took it */
    unsigned slot;
} my_slots[MY_SLOTS];

/* glibc's lock, trylock, timedlock or clocklock of m, as d and trying say. */
static int glibc_lock(pthread_mutex_t *m, const struct deadline *d, int trying)
{
    if (trying)
        return real.trylock(m);
    if (!d)
        return real.lock(m);
    if (d->clock == CLOCK_REALTIME || !real.clocklock)
        return real.timedlock(m, &d->at);
    return real.clocklock(m, d->clock, &d->at);
}

static void die(const char *what, const char *name)
{
    fprintf(stderr, "libshmam-locks: %s: %s\n", what, name);
    _exit(2);
}

/* fork: the child must not inherit the table's lock taken by another
 * thread of the parent (pthread_atfork, registered in setup). */
static void table_take(void)
{
    while (AO_test_and_set_acquire(&table_lock) == AO_TS_SET)
        sched_yield();
}

static void table_drop(void)
{
    AO_CLEAR(&table_lock);
}

/* The child of a fork: a new process and thread (the parent's slots are
 * not its own: it holds none of their lifelines). */
static void forked(void)
{
    table_drop();
    my_pid = getpid();
    my_tid = 0;
}

static void setup(void)
{
    const char *name = getenv("SHMAM_LOCK"), *w = getenv("SHMAM_LOCK_WAIT");
    const char *p = getenv("SHMAM_LOCK_PROCS"), *s = getenv("SHMAM_LOCK_STATS");

    inside++;
    real.init = dlsym(RTLD_NEXT, "pthread_mutex_init");
    real.lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real.trylock = dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real.timedlock = dlsym(RTLD_NEXT, "pthread_mutex_timedlock");
    real.clocklock = dlsym(RTLD_NEXT, "pthread_mutex_clocklock");
    real.unlock = dlsym(RTLD_NEXT, "pthread_mutex_unlock");
    real.destroy = dlsym(RTLD_NEXT, "pthread_mutex_destroy");
    real.consistent = dlsym(RTLD_NEXT, "pthread_mutex_consistent");
    if (!real.init || !real.lock || !real.trylock || !real.timedlock || !real.unlock ||
        !real.destroy || !real.consistent)
        die("glibc's pthread_mutex functions not found", "dlsym");
    if (name && *name && strcmp(name, "glibc") != 0 && !(ops = am_lock_find(name)))
        die("SHMAM_LOCK names no lock (see shmam-locks(7))", name);
    if (w && *w) {
        static const char *const waits[] = {"yield", "spin", "park"};
        unsigned i = 0;
        while (i < AM_LOCK_WAITS && strcmp(w, waits[i]) != 0)
            i++;
        if (i == AM_LOCK_WAITS)
            die("SHMAM_LOCK_WAIT is not spin, yield or park", w);
        wait_policy = i;
    }
    if (p && *p) {
        long n = strtol(p, NULL, 10);
        if (n < 1 || n > 4096)
            die("SHMAM_LOCK_PROCS is not 1 .. 4096", p);
        procs = (unsigned)n;
    }
    stats_on = s && *s && strcmp(s, "0") != 0;
    my_pid = getpid();
    pthread_atfork(table_take, table_drop, forked);
    if (stats_on)
        pm_stats_start(ops ? ops->name : "glibc", w && *w ? w : "yield");
    AO_store_release(&ready, 1);
    inside--;
}

static void ensure(void)
{
    if (__builtin_expect(!AO_load_acquire(&ready), 0))
        pthread_once(&once, setup);
}

static unsigned tid(void)
{
    if (!my_tid)
        my_tid = (unsigned)syscall(SYS_gettid);
    return my_tid;
}

/* This thread's participant id (0 .. AM_LOCK_MAX_SELF). */
static unsigned self_id(void)
{
    if (!my_id)
        my_id = (unsigned)(AO_fetch_and_add1(&thread_ids) % (AM_LOCK_MAX_SELF + 1)) + 1;
    return my_id - 1;
}

static unsigned hash(const void *m)
{
    uintptr_t a = (uintptr_t)m >> 3;

    return (unsigned)((a ^ (a >> 12) ^ (a >> 24)) % BUCKETS);
}

static struct pm *find(pthread_mutex_t *m)
{
    struct pm *e = (struct pm *)AO_load_acquire((volatile AO_t *)&bucket[hash(m)]);

    while (e && e->key != m)
        e = e->next;
    return e;
}

/* ---- process-shared and robust mutexes (see the file header) ---- */

/* The parts of a pshm for this process's procs (never from the mapping). */
static pthread_mutex_t *shm_life(struct pshm *p, unsigned i)
{
    return (pthread_mutex_t *)(void *)((char *)p + AM_LOCK_ALIGN) + i;
}

static volatile AO_t *shm_dead(struct pshm *p, unsigned i)
{
    return (volatile AO_t *)(void *)shm_life(p, procs) + i;
}

static size_t shm_lock_offset(void)
{
    size_t end = AM_LOCK_ALIGN + procs * (sizeof(pthread_mutex_t) + sizeof(AO_t));

    return (end + AM_LOCK_ALIGN - 1) / AM_LOCK_ALIGN * AM_LOCK_ALIGN;
}

static void *shm_lock(struct pshm *p)
{
    return (char *)p + shm_lock_offset();
}

static size_t shm_size(void)
{
    return shm_lock_offset() + ops->size(procs);
}

/* The watch's dead(): slot `who`'s lifeline says its thread died (final:
 * recorded in the dead flags; the lifeline is left unrecoverable). */
static int shm_dead_slot(const void *arg, unsigned who)
{
    struct pshm *p = (struct pshm *)arg;
    int rc;

    if (who >= procs)
        return 1; /* no slot's: only garbage names it */
    if (AO_load(shm_dead(p, who)))
        return 1;
    inside++;
    if ((rc = real.trylock(shm_life(p, who))) == 0 || rc == EOWNERDEAD)
        real.unlock(shm_life(p, who)); /* 0: the slot is not taken yet */
    inside--;
    if (rc != EOWNERDEAD && rc != ENOTRECOVERABLE)
        return 0;
    AO_store(shm_dead(p, who), 1);
    return 1;
}

/* By init of mutex m: a new mapping with the lock, published in m.  NULL if
 * out of memory. */
static struct pshm *shm_create(pthread_mutex_t *m)
{
    struct pshm *p =
        mmap(NULL, shm_size(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int rc = 0;

    if (p == MAP_FAILED)
        return NULL;
    inside++;
    for (unsigned i = 0; i < procs && rc == 0; i++)
        rc = am_lock_mutex_robust_init(shm_life(p, i));
    if (rc == 0)
        rc = ops->init(shm_lock(p), procs);
    inside--;
    if (rc != 0) {
        munmap(p, shm_size());
        return NULL;
    }
    p->magic = PSHM_MAGIC;
    p->key = (AO_t)(uintptr_t)m;
    AO_nop_full(); /* the state before its address: pairs with shm_attach's */
    m->__data.__list.__next = (void *)p;
    m->__data.__list.__prev = (void *)((uintptr_t)p ^ PSHM_MAGIC);
    return p;
}

/* At the first use of mutex m in a process that has no entry for it: its
 * mapping if this library made one and this process has it (*ours 1, the
 * result non-NULL), NULL with *ours 1 if it made one this process lacks,
 * NULL with *ours 0 if m is glibc's. */
static struct pshm *shm_attach(pthread_mutex_t *m, int *ours)
{
    struct pshm *p = (struct pshm *)m->__data.__list.__next;
    long page = sysconf(_SC_PAGESIZE);
    unsigned char vec[1];

    AO_nop_full(); /* pairs with shm_create's */
    *ours = (uintptr_t)m->__data.__list.__prev == ((uintptr_t)p ^ PSHM_MAGIC);
    if (!*ours || mincore((void *)((uintptr_t)p & ~(uintptr_t)(page - 1)), 1, vec) != 0 ||
        p->magic != PSHM_MAGIC || p->key != (AO_t)(uintptr_t)m)
        return NULL;
    return p;
}

/* This thread's slot in p into *slot, taken (and its lifeline locked) at
 * its first use: 0, or EAGAIN when p's or this thread's slots are used up. */
static int shm_slot(struct pshm *p, unsigned *slot)
{
    int spare = -1;

    for (int i = 0; i < MY_SLOTS; i++) {
        if (my_slots[i].p == p && my_slots[i].pid == my_pid) {
            *slot = my_slots[i].slot;
            return 0;
        }
        if (spare < 0 && (!my_slots[i].p || my_slots[i].pid != my_pid))
            spare = i;
    }
    AO_t s = spare < 0 ? procs : AO_fetch_and_add1(&p->slots);
    if (s >= procs)
        return EAGAIN;
    inside++;
    int rc = real.lock(shm_life(p, (unsigned)s)); /* held for the thread's life */
    inside--;
    if (rc != 0)
        return EAGAIN;
    my_slots[spare].p = p;
    my_slots[spare].pid = my_pid;
    my_slots[spare].slot = *slot = (unsigned)s;
    return 0;
}

/* By the new holder (slot `self`) of shared entry e: 0, EOWNERDEAD (robust,
 * the holder before it died holding it) or ENOTRECOVERABLE (the caller
 * unlocks).  The full barrier orders the slot's store before the critical
 * section: a holder that dies inside it has its slot seen. */
static int shm_acquired(struct pm *e, unsigned self)
{
    struct pshm *p = e->shm;
    AO_t dead_holder = AO_load_acquire(&p->holder);

    if (e->robust && AO_load(&p->cons) == UNRECOVERABLE)
        return ENOTRECOVERABLE;
    AO_store_full(&p->holder, self + 1);
    if (!e->robust || !dead_holder)
        return 0;
    AO_store(&p->cons, INCONSISTENT);
    return EOWNERDEAD;
}

/* By the holder of shared entry e about to unlock: clears its slot (release:
 * the next holder's acquire-load in shm_acquired), and an inconsistent
 * robust mutex becomes unrecoverable. */
static void shm_releasing(struct pm *e)
{
    struct pshm *p = e->shm;

    if (e->robust && AO_load(&p->cons) == INCONSISTENT)
        AO_store(&p->cons, UNRECOVERABLE);
    AO_store_release(&p->holder, 0);
}

/* 1 if shared entry e is robust and its holder's thread died. */
static int shm_holder_dead(struct pm *e)
{
    AO_t h = AO_load_acquire(&e->shm->holder);

    return e->robust && h && shm_dead_slot(e->shm, (unsigned)(h - 1));
}

/* A fresh state for entry e of mutex m, as glibc's __kind describes m; a
 * shared one's made (fresh: by init) or found. */
static void reset(struct pm *e, pthread_mutex_t *m, int fresh)
{
    int kind = m->__data.__kind, ours = 1;

    e->type = kind & 3;
    e->glibc = !ops || (kind & KIND_GLIBC) != 0;
    e->shared = !e->glibc && (kind & (KIND_ROBUST | KIND_PSHARED)) != 0;
    e->robust = (kind & KIND_ROBUST) != 0;
    AO_store(&e->owner, 0);
    e->count = 0;
    if (e->shared) {
        e->shm = fresh ? shm_create(m) : shm_attach(m, &ours);
        e->glibc = !ours; /* made where this library was not loaded */
        e->shared = ours;
        e->watch = (struct am_lock_watch){shm_dead_slot, NULL, e->shm};
    } else if (!e->glibc) {
        inside++;
        ops->init(e->state, procs);
        inside--;
    }
    e->st.kept = e->glibc;
}

/* The entry of mutex m, made if need be (and reset if `fresh`); NULL if out
 * of memory. */
static struct pm *entry(pthread_mutex_t *m, int fresh)
{
    struct pm *e = find(m);
    volatile struct pm **b;

    if (e && !fresh)
        return e;
    table_take();
    if (!(e = find(m))) {
        size_t size = ops ? ops->size(procs) : 0;
        e = calloc(1, sizeof *e);
        if (e && size && !(e->state = aligned_alloc(AM_LOCK_ALIGN, size))) {
            free(e);
            e = NULL;
        }
        if (e) {
            e->key = m;
            reset(e, m, fresh);
            b = (volatile struct pm **)&bucket[hash(m)];
            e->next = (struct pm *)*b;
            pm_stats_register(&e->st, m);
            AO_store_release((volatile AO_t *)b, (AO_t)e);
        }
    } else if (fresh) {
        reset(e, m, 1);
    }
    table_drop();
    return e;
}

/* 1 once deadline d has passed. */
static int past(const struct deadline *d)
{
    struct timespec now;

    clock_gettime(d->clock, &now);
    return now.tv_sec > d->at.tv_sec ||
           (now.tv_sec == d->at.tv_sec && now.tv_nsec >= d->at.tv_nsec);
}

/* A timed waiter's pause after `round` failed attempts: spins, then yields,
 * then sleeps up to POLL_MAX_NS. */
static void poll_pause(unsigned round)
{
    if (round < 64) {
        sched_yield();
        return;
    }
    struct timespec t = {0, round < 1024 ? 10000L * (round / 64) : POLL_MAX_NS};
    nanosleep(&t, NULL);
}

/* The lock's state of entry e. */
static void *state_of(struct pm *e)
{
    return e->shared ? shm_lock(e->shm) : e->state;
}

/* Takes entry e's lock for this thread (trying: only if it is free, or,
 * robust, its holder died): 0, or EBUSY (trying), ETIMEDOUT past d (whose
 * wait polls trylock: see the file header), EINVAL if the lock is broken;
 * shared: EOWNERDEAD (held), EAGAIN, ENOTRECOVERABLE. */
static int take(struct pm *e, const struct deadline *d, int trying)
{
    struct am_lock_ctx c = {.self = self_id(), .procs = procs, .wait = wait_policy};
    unsigned long long t0 = stats_on ? pm_now_ns() : 0;
    void *l = state_of(e);
    unsigned rounds = 0;
    int rc, contended = 0;

    if (e->shared) {
        if ((rc = shm_slot(e->shm, &c.self)) != 0)
            return rc;
        c.watch = &e->watch;
    }
    inside++;
    if ((stats_on || d || trying) && ops->trylock(l, &c) == 1) {
        rc = 0;
    } else if (trying && !(e->shared && shm_holder_dead(e))) {
        rc = EBUSY;
    } else if (!d || trying) {
        contended = 1;
        rc = ops->lock(l, &c) == 0 ? 0 : EINVAL;
    } else {
        contended = 1;
        while ((rc = ops->trylock(l, &c) == 1 ? 0 : past(d) ? ETIMEDOUT : -1) < 0) {
            if (e->shared && shm_holder_dead(e)) {
                rc = ops->lock(l, &c) == 0 ? 0 : EINVAL;
                break;
            }
            poll_pause(rounds++);
        }
    }
    inside--;
    if (rc != 0)
        return rc;
    if (e->shared && (rc = shm_acquired(e, c.self)) == ENOTRECOVERABLE) {
        inside++;
        ops->unlock(l, &c);
        inside--;
        return rc;
    }
    e->held = c.held;
    e->self = c.self;
    if (stats_on)
        pm_stats_acquired(&e->st, &e->since, t0, contended);
    return rc;
}

/* Releases entry e's lock as its holder would. */
static void give(struct pm *e)
{
    struct am_lock_ctx c = {.self = e->self,
                            .procs = procs,
                            .held = e->held,
                            .watch = e->shared ? &e->watch : NULL,
                            .wait = wait_policy};

    if (stats_on)
        pm_stats_released(&e->st, e->since);
    if (e->shared)
        shm_releasing(e);
    inside++;
    ops->unlock(state_of(e), &c);
    inside--;
}

/* The type's answer to a lock or trylock by the holder, or -1 (not the
 * holder, or a NORMAL mutex: go on and wait). */
static int relock(struct pm *e, int trying)
{
    if (e->type == PTHREAD_MUTEX_NORMAL || e->type == 3 || AO_load(&e->owner) != tid())
        return -1;
    if (e->type == PTHREAD_MUTEX_RECURSIVE) {
        if (e->count == UINT_MAX)
            return EAGAIN;
        e->count++;
        return 0;
    }
    return trying ? EBUSY : EDEADLK;
}

/* After a glibc call on a kept mutex: its statistics. */
static int kept(struct pm *e, int rc, unsigned long long t0, int contended)
{
    if (stats_on && (rc == 0 || rc == EOWNERDEAD) && e)
        pm_stats_acquired(&e->st, &e->since, t0, contended);
    return rc;
}

static int lock_until(pthread_mutex_t *m, const struct deadline *d, int trying)
{
    struct pm *e;
    int rc;

    ensure();
    if (inside || (!ops && !stats_on) || !(e = entry(m, 0)))
        return glibc_lock(m, d, trying);
    if (e->glibc) {
        unsigned long long t0 = stats_on ? pm_now_ns() : 0;
        if (trying)
            return kept(e, real.trylock(m), t0, 0);
        if (stats_on && (rc = real.trylock(m)) != EBUSY)
            return kept(e, rc, t0, 0);
        return kept(e, glibc_lock(m, d, 0), t0, 1);
    }
    if (e->shared && !e->shm)
        return EINVAL; /* a shared mutex whose state this process lacks */
    if ((rc = relock(e, trying)) >= 0)
        return rc;
    if ((rc = take(e, d, trying)) != 0 && rc != EOWNERDEAD)
        return rc;
    AO_store(&e->owner, tid());
    e->count = 1;
    return rc;
}

EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    int rc;

    ensure();
    if ((rc = real.init(m, a)) != 0 || inside || (!ops && !stats_on))
        return rc;
    struct pm *e = entry(m, 1);
    return e && (!e->shared || e->shm) ? 0 : ENOMEM;
}

EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    return lock_until(m, NULL, 0);
}

EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
    return lock_until(m, NULL, 1);
}

static int timed(pthread_mutex_t *m, clockid_t clock, const struct timespec *at)
{
    struct deadline d = {clock, *at};

    if (at->tv_nsec < 0 || at->tv_nsec >= 1000000000L)
        return EINVAL;
    return lock_until(m, &d, 0);
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *at)
{
    return timed(m, CLOCK_REALTIME, at);
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
                                   const struct timespec *at)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return timed(m, clock, at);
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
    struct pm *e;

    ensure();
    if (inside || !(e = find(m)) || e->glibc) {
        if (!inside && e && stats_on)
            pm_stats_released(&e->st, e->since);
        return real.unlock(m);
    }
    if (e->shared && !e->shm)
        return EINVAL;
    if (e->type != PTHREAD_MUTEX_NORMAL && e->type != 3) {
        if (AO_load(&e->owner) != tid())
            return EPERM;
        if (e->type == PTHREAD_MUTEX_RECURSIVE && --e->count > 0)
            return 0;
    }
    AO_store(&e->owner, 0);
    give(e);
    return 0;
}

EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
    struct pm *e;

    ensure();
    if (inside || !(e = find(m)) || e->glibc)
        return real.destroy(m);
    if (e->shared && !e->shm)
        return EINVAL;
    inside++;
    int busy = AO_load(&e->owner) != 0 || ops->locked(state_of(e));
    inside--;
    return busy ? EBUSY : real.destroy(m);
}

/* A robust mutex's holder after EOWNERDEAD: its state is mended. */
EXPORT int pthread_mutex_consistent(pthread_mutex_t *m)
{
    struct pm *e;

    ensure();
    if (inside || !(e = find(m)) || e->glibc)
        return real.consistent(m);
    if (!e->shared || !e->shm || !e->robust || AO_load(&e->owner) != tid() ||
        !AO_compare_and_swap(&e->shm->cons, INCONSISTENT, CONSISTENT))
        return EINVAL;
    return 0;
}

/* ---- condition variables ---- */

struct pc {
    uint32_t seq;     /* bumped by every signal and broadcast: the futex */
    uint32_t waiters; /* threads between reading seq and relocking */
    uint32_t clock;   /* 0 CLOCK_REALTIME, 1 CLOCK_MONOTONIC */
};
_Static_assert(sizeof(struct pc) <= sizeof(pthread_cond_t), "the cond fits");

static struct pc *pc_of(pthread_cond_t *c)
{
    return (struct pc *)(void *)c;
}

EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
    clockid_t clock = CLOCK_REALTIME;

    memset(c, 0, sizeof *c);
    if (a && pthread_condattr_getclock(a, &clock) == 0 && clock == CLOCK_MONOTONIC)
        pc_of(c)->clock = 1;
    return 0;
}

EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
    return 0;
}

static void wake(pthread_cond_t *c, int n)
{
    struct pc *p = pc_of(c);

    __atomic_fetch_add(&p->seq, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&p->waiters, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &p->seq, FUTEX_WAKE, n, NULL, NULL, 0);
}

EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
    wake(c, 1);
    return 0;
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
    wake(c, INT_MAX);
    return 0;
}

/* Unlocks m wholly (a recursive one's count kept in *count), sleeps on c's
 * sequence until a signal or `at` on `clock` (NULL: none), relocks m. */
static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                     const struct timespec *at)
{
    struct pc *p = pc_of(c);
    struct pm *e;
    unsigned count = 1;
    int rc = 0, r;

    ensure();
    if (at && (at->tv_nsec < 0 || at->tv_nsec >= 1000000000L))
        return EINVAL;
    e = find(m);
    if (e && !e->glibc && e->type != PTHREAD_MUTEX_NORMAL && e->type != 3) {
        if (AO_load(&e->owner) != tid())
            return EPERM;
        count = e->count;
        e->count = 1;
    }
    uint32_t seq = __atomic_load_n(&p->seq, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&p->waiters, 1, __ATOMIC_SEQ_CST);
    if ((r = pthread_mutex_unlock(m)) != 0) {
        __atomic_fetch_sub(&p->waiters, 1, __ATOMIC_SEQ_CST);
        return r;
    }
    int op = FUTEX_WAIT_BITSET | (clock == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
    if (syscall(SYS_futex, &p->seq, op, seq, at, NULL, FUTEX_BITSET_MATCH_ANY) != 0 &&
        errno == ETIMEDOUT)
        rc = ETIMEDOUT;
    __atomic_fetch_sub(&p->waiters, 1, __ATOMIC_SEQ_CST);
    if ((r = pthread_mutex_lock(m)) != 0)
        return r; /* EOWNERDEAD of a kept robust mutex */
    if (e && !e->glibc)
        e->count = count;
    return rc;
}

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    return cond_wait(c, m, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *at)
{
    return cond_wait(c, m, pc_of(c)->clock ? CLOCK_MONOTONIC : CLOCK_REALTIME, at);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                  const struct timespec *at)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return cond_wait(c, m, clock, at);
}
