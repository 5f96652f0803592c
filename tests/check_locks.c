/*
 * check_locks.c - every lock of am_lock_table: the verbs' semantics in one process,
 * mutual exclusion among 4 and 8 processes on however many cores there are
 * (oversubscribed on purpose), trylock against a holder in another process, the
 * mutex's recovery from a holder killed with SIGKILL, and every lock's recovery
 * from dead participants through a lock_watch: a holder killed in its critical
 * section, a waiter killed in lock() before its turn, both at once; for the
 * queue locks, a waiter killed right after taking its ticket and an MCS or
 * Hemlock holder killed while handing off (parked by am__lock_hook); a stopped
 * holder that must keep the lock; a waiter told to give up; more waiters than
 * max_procs that keep giving up and coming back.  The waiting policies: mutual
 * exclusion under each, a parked waiter that sleeps and is woken by unlock,
 * and parked waiters that pass a dead holder and waiter.
 *
 * Each multi-process test puts a `struct shared` and the lock in one
 * MAP_SHARED|MAP_ANONYMOUS region, forks pinned workers with tu_run_procs(), lets
 * them start together at a gate, and checks in the parent what they recorded.
 * The critical section is a non-atomic read-modify-write of a plain counter with
 * tu_widen() between the read and the write, plus an occupancy counter that must
 * read 0 on entry, so a broken lock loses updates or is caught inside twice.
 * Every failure message starts with the lock's name.  SHMAM_STRESS multiplies
 * the iteration counts; SHMAM_VERBOSE=1 prints the time each run took.
 *
 * The recovery tests fork their participants one by one (tu_spawn) with fixed
 * ids and roles, so that the parent can stop and kill them at chosen points.
 * Their watch's dead() answers from dead[], which the parent sets only once
 * waitpid() has reported the death (a stand-in for the runtime's lifeline), and
 * records in asked[] that the participant is waiting in lock() (the watch is
 * asked only after the waiter has taken its place and yielded).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "qnode.h"
#include "spin.h"
#include "testutil.h"
#include "wait.h"

#if !defined(AO_HAVE_fetch_and_add1_full) || !defined(AO_HAVE_fetch_and_sub1_full)
#error "check_locks needs AO_fetch_and_add1_full and AO_fetch_and_sub1_full"
#endif

#define PROC_TIMEOUT_S 20   /* per tu_run_procs, times the stress factor */
#define TCASE_TIMEOUT_S 600 /* churn beside a CPU hog at load 8: 90 s seen */
#define IDS 8               /* participant ids the recovery tests' watch knows */
#define WAIT_S 10.0         /* for a participant to reach a point, or to end */
#define RECOVER_S 5.0       /* from a death to every survivor being through */
#define GIVE_UP_S 2.0       /* from the give-up flag to lock() returning */
#define STOPPED_MS 1000     /* how long the stopped holder stays stopped */

/* What the workers share, followed (at HDR bytes) by the lock's state. */
struct shared {
    struct tu_gate gate;
    unsigned lock_idx;      /* into am_lock_table; read-only */
    long iters;             /* per worker; read-only */
    AO_t inside;            /* workers inside the critical section now */
    AO_t violations;        /* entries that found someone inside, or locked() false */
    AO_t held;              /* trylock/robust tests: the holder holds the lock */
    AO_t releasing;         /* trylock test: the holder is about to unlock */
    AO_t finished;          /* trylock test: trylockers done trying against the holder */
    AO_t wins;              /* trylock test: trylock successes against the holder */
    AO_t early;             /* trylock test: lock() successes against the holder */
    AO_t acquired;          /* trylock/robust tests: successes after the release */
    int recover_by_trylock; /* robust test: how the next process takes over */
    long counter;           /* plain; only touched under the lock */
    AO_t dead[IDS];         /* recovery: set by the parent after waitpid (the watch) */
    AO_t asked[IDS];        /* recovery: id's watch was asked: it waits in lock() */
    AO_t stop[IDS];         /* recovery: id's watch says give up */
    AO_t holds[IDS];        /* recovery: id holds the lock and waits for release[id] */
    AO_t release[IDS];      /* recovery: id may leave its critical section */
    AO_t entered;           /* recovery: critical sections entered */
    AO_t gave_up;           /* recovery: lock() calls that returned AM_LOCK_GAVE_UP */
    AO_t done;              /* churn: critical sections done (the parent's watchdog) */
    AO_t parked[IDS];       /* queue locks: id is parked at its lock hook */
    unsigned wait;          /* every participant's waiting policy (AM_LOCK_WAIT_*) */
    AO_t round;             /* park test: the round the holder holds the lock in */
    AO_t noted[IDS];        /* queue locks: id has taken its ticket (its lock hook) */
    AO_t rank[IDS];         /* recovery: id entered as the rank[id]-th (from 0) */
};

#define HDR ((sizeof(struct shared) + AM_LOCK_ALIGN - 1) / AM_LOCK_ALIGN * AM_LOCK_ALIGN)

static const struct am_lock_ops *ops_of(const struct shared *s)
{
    return am_lock_table[s->lock_idx];
}

static unsigned lock_index(const struct am_lock_ops *ops)
{
    unsigned i = 0;

    while (am_lock_table[i] != ops)
        i++;
    return i;
}

static void *lock_of(struct shared *s)
{
    return (char *)s + HDR;
}

static size_t shared_size(unsigned lock_idx, unsigned procs)
{
    return HDR + am_lock_table[lock_idx]->size(procs);
}

/* A zeroed region with the lock initialised for `procs` participants. */
static struct shared *shared_new(unsigned lock_idx, unsigned procs, long iters)
{
    const struct am_lock_ops *ops = am_lock_table[lock_idx];
    struct shared *s = tu_shared_alloc(shared_size(lock_idx, procs));
    int r;

    s->lock_idx = lock_idx;
    s->iters = iters;
    tu_gate_init(&s->gate, procs);
    r = ops->init(lock_of(s), procs);
    ck_assert_msg(r == 0, "%s: init(%u) returned %d", ops->name, procs, r);
    return s;
}

static void shared_free(struct shared *s, unsigned procs)
{
    tu_shared_free(s, shared_size(s->lock_idx, procs));
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void verbose(const char *name, const char *what, int procs, long iters, double t)
{
    const char *v = getenv("SHMAM_VERBOSE");

    if (v && *v && strcmp(v, "0") != 0)
        printf("check_locks: %-8s %-9s %d procs x %ld: %.3f s\n", name, what, procs, iters,
               t);
}

/* Spins (yielding in the end) until s->round reaches r. */
static void await_round(struct shared *s, AO_t r)
{
    struct spin sp = SPIN_INIT;

    while (AO_load_acquire(&s->round) < r)
        spin_wait(&sp);
}

/* Spins (yielding in the end) until *flag is nonzero. */
static void await(AO_t *flag)
{
    struct spin sp = SPIN_INIT;

    while (!AO_load_acquire(flag))
        spin_wait(&sp);
}

/* ---- (a) the verbs in one process ---------------------------------------- */

START_TEST(test_table)
{
    static const char *const names[] = {"tas", "ttas", "ticket",  "anderson", "mutex",
                                        "mcs", "clh",  "hemlock", "hapax",    NULL};
    int i;

    for (i = 0; names[i]; i++) {
        ck_assert_msg(am_lock_table[i] != NULL, "%s: missing from am_lock_table", names[i]);
        ck_assert_msg(strcmp(am_lock_table[i]->name, names[i]) == 0,
                      "%s: am_lock_table[%d] is %s", names[i], i, am_lock_table[i]->name);
        ck_assert_msg(am_lock_find(names[i]) == am_lock_table[i], "%s: am_lock_find",
                      names[i]);
    }
    ck_assert_msg(am_lock_table[i] == NULL,
                  "am_lock_table: not NULL-terminated after hapax");
    ck_assert_msg(am_lock_find("nope") == NULL, "am_lock_find(\"nope\") found something");
}
END_TEST

START_TEST(test_anderson_needs_procs)
{
    const struct am_lock_ops *ops = am_lock_find("anderson");
    size_t size = ops->size(0);
    void *l = tu_shared_alloc(size);

    ck_assert_msg(size >= ops->size(1), "anderson: size(0) %zu < size(1)", size);
    ck_assert_msg(ops->init(l, 0) == -EINVAL, "anderson: init with max_procs 0 accepted");
    tu_shared_free(l, size);
}
END_TEST

/* lock, trylock, unlock and locked in one process, 3 participants; enough rounds
 * to wrap the Anderson lock's slots several times. */
START_TEST(test_semantics)
{
    const struct am_lock_ops *ops = am_lock_table[_i];
    struct shared *s = shared_new((unsigned)_i, 3, 0);
    struct am_lock_ctx a = {.self = 0}, b = {.self = 1};
    void *l = lock_of(s);

    ck_assert_msg(ops->size(3) % AM_LOCK_ALIGN == 0, "%s: size %zu not a multiple of %d",
                  ops->name, ops->size(3), AM_LOCK_ALIGN);
    ck_assert_msg(!ops->locked(l), "%s: locked() after init", ops->name);
    for (int round = 0; round < 20; round++) {
        ck_assert_msg(ops->trylock(l, &a) == 1, "%s: trylock on a free lock, round %d",
                      ops->name, round);
        ck_assert_msg(ops->locked(l), "%s: !locked() after trylock", ops->name);
        ck_assert_msg(ops->trylock(l, &b) == 0, "%s: trylock on a held lock", ops->name);
        ops->unlock(l, &a);
        ck_assert_msg(!ops->locked(l), "%s: locked() after unlock", ops->name);
        ck_assert_msg(ops->lock(l, &b) == 0, "%s: lock() on a free lock failed", ops->name);
        ck_assert_msg(ops->locked(l), "%s: !locked() after lock", ops->name);
        ck_assert_msg(ops->trylock(l, &a) == 0, "%s: trylock while held", ops->name);
        ops->unlock(l, &b);
        ck_assert_msg(!ops->locked(l), "%s: locked() after unlock, round %d", ops->name,
                      round);
    }
    shared_free(s, 3);
}
END_TEST

/* ---- (b) mutual exclusion across processes -------------------------------- */

/* Entering the critical section: nobody else may be inside, and the lock must
 * say it is held. */
static void enter(struct shared *s)
{
    if (AO_fetch_and_add1_full(&s->inside) != 0 || !ops_of(s)->locked(lock_of(s)))
        AO_fetch_and_add1_full(&s->violations);
}

static void leave(struct shared *s)
{
    AO_fetch_and_sub1_full(&s->inside);
}

static void critical_section(struct shared *s, int idx, long i)
{
    long v;

    enter(s);
    v = s->counter;
    tu_widen((unsigned)(i * 8 + idx));
    s->counter = v + 1;
    leave(s);
}

/* The watch of the tests: participant `self` of the lock in `s`. */
struct watcher {
    struct shared *s;
    unsigned self;
};

/* dead(): what the parent set in dead[]; an id no participant has is a lock bug. */
static int watched_dead(const void *arg, unsigned who)
{
    const struct watcher *w = arg;

    AO_store_release(&w->s->asked[w->self], 1);
    if (who >= IDS)
        abort();
    return AO_load_acquire(&w->s->dead[who]) != 0;
}

/* give_up(): what the parent set in stop[self]. */
static int watched_give_up(const void *arg)
{
    const struct watcher *w = arg;

    AO_store_release(&w->s->asked[w->self], 1);
    return AO_load_acquire(&w->s->stop[w->self]) != 0;
}

/* Every fourth acquisition goes through trylock, retried with backoff.  A lock()
 * that does not return 0 (nobody dies or gives up here) fails the process. */
static void acquire(struct shared *s, struct am_lock_ctx *c, long i)
{
    const struct am_lock_ops *ops = ops_of(s);
    struct spin sp = SPIN_INIT;

    if (i % 4 != 3) {
        if (ops->lock(lock_of(s), c) != 0)
            abort();
        return;
    }
    while (!ops->trylock(lock_of(s), c))
        spin_wait(&sp);
}

/* Odd workers wait with a watch that never reports a death, so the code that
 * looks for dead participants runs under contention and must pass no turn. */
static void exclusion_worker(int idx, void *arg)
{
    struct shared *s = arg;
    struct watcher w = {s, (unsigned)idx};
    const struct am_lock_watch watch = {watched_dead, watched_give_up, &w};
    struct am_lock_ctx c = {
        .self = (unsigned)idx, .watch = idx % 2 ? &watch : NULL, .wait = s->wait};

    tu_gate_wait(&s->gate);
    for (long i = 0; i < s->iters; i++) {
        acquire(s, &c, i);
        critical_section(s, idx, i);
        ops_of(s)->unlock(lock_of(s), &c);
    }
}

static void exclusion(unsigned lock_idx, int procs, long iters, unsigned wait)
{
    const char *name = am_lock_table[lock_idx]->name;
    struct shared *s = shared_new(lock_idx, (unsigned)procs, iters * tu_stress_factor());
    double t = now_s();

    s->wait = wait;
    int failed =
        tu_run_procs(procs, exclusion_worker, s, PROC_TIMEOUT_S * tu_stress_factor());

    verbose(name, "exclusion", procs, s->iters, now_s() - t);
    ck_assert_msg(failed == 0, "%s (wait %u): %d of %d processes failed or hung", name,
                  wait, failed, procs);
    ck_assert_msg(s->violations == 0,
                  "%s (wait %u): %lu entries found the critical section occupied", name,
                  wait, (unsigned long)s->violations);
    ck_assert_msg(s->counter == procs * s->iters,
                  "%s (wait %u): counter %ld, expected %ld (%d x %ld)", name, wait,
                  s->counter, procs * s->iters, procs, s->iters);
    shared_free(s, (unsigned)procs);
}

START_TEST(test_exclusion_4)
{
    exclusion((unsigned)_i, 4, 200000, AM_LOCK_WAIT_YIELD);
}
END_TEST

START_TEST(test_exclusion_8)
{
    exclusion((unsigned)_i, 8, 100000, AM_LOCK_WAIT_YIELD);
}
END_TEST

/* Every lock under the other two policies (_i: lock * 2 + policy - 1),
 * oversubscribed: spinning FIFO locks convoy, so fewer iterations. */
START_TEST(test_exclusion_waits)
{
    exclusion((unsigned)_i / 2, 4, 10000, AM_LOCK_WAIT_SPIN + (unsigned)_i % 2);
}
END_TEST

/* ---- (c) trylock against a holder in another process ---------------------- */

enum { HOLDER, WAITER, TRYLOCKERS = 2, TRY_PROCS = 2 + TRYLOCKERS, TRIES = 3000 };

static void holder(struct shared *s, struct am_lock_ctx *c)
{
    struct timespec ten_ms = {0, 10000000};

    ops_of(s)->lock(lock_of(s), c);
    AO_store_release(&s->held, 1);
    while (AO_load_acquire(&s->finished) < TRYLOCKERS)
        sched_yield();
    nanosleep(&ten_ms, NULL); /* let the waiter queue up in lock() */
    AO_store_release(&s->releasing, 1);
    ops_of(s)->unlock(lock_of(s), c);
}

static void waiter(struct shared *s, struct am_lock_ctx *c)
{
    await(&s->held);
    ops_of(s)->lock(lock_of(s), c);
    if (!AO_load(&s->releasing))
        AO_fetch_and_add1_full(&s->early);
    ops_of(s)->unlock(lock_of(s), c);
}

static void trylocker(struct shared *s, struct am_lock_ctx *c, int idx)
{
    struct spin sp = SPIN_INIT;

    await(&s->held);
    for (unsigned k = 0; k < TRIES; k++) {
        if (ops_of(s)->trylock(lock_of(s), c)) {
            if (!AO_load(&s->releasing))
                AO_fetch_and_add1_full(&s->wins);
            ops_of(s)->unlock(lock_of(s), c);
        }
        tu_widen(k * TRY_PROCS + (unsigned)idx);
    }
    AO_fetch_and_add1_full(&s->finished);
    await(&s->releasing);
    while (!ops_of(s)->trylock(lock_of(s), c))
        spin_wait(&sp);
    AO_fetch_and_add1_full(&s->acquired);
    ops_of(s)->unlock(lock_of(s), c);
}

static void trylock_worker(int idx, void *arg)
{
    struct am_lock_ctx c = {.self = (unsigned)idx};

    if (idx == HOLDER)
        holder(arg, &c);
    else if (idx == WAITER)
        waiter(arg, &c);
    else
        trylocker(arg, &c, idx);
}

START_TEST(test_trylock_held)
{
    const char *name = am_lock_table[_i]->name;
    struct shared *s = shared_new((unsigned)_i, TRY_PROCS, 0);
    int failed = tu_run_procs(TRY_PROCS, trylock_worker, s, PROC_TIMEOUT_S);

    ck_assert_msg(failed == 0, "%s: %d of %d processes failed or hung", name, failed,
                  TRY_PROCS);
    ck_assert_msg(s->wins == 0,
                  "%s: trylock succeeded %lu times while another process held "
                  "the lock",
                  name, (unsigned long)s->wins);
    ck_assert_msg(s->early == 0, "%s: lock() returned while another process held the lock",
                  name);
    ck_assert_msg(s->acquired == TRYLOCKERS,
                  "%s: %lu of %d trylockers got the released lock", name,
                  (unsigned long)s->acquired, TRYLOCKERS);
    shared_free(s, TRY_PROCS);
}
END_TEST

/* ---- (d) the mutex survives a holder killed with SIGKILL ------------------ */

/* Forks a process that takes the lock, says so, and waits to be killed. */
static pid_t start_doomed_holder(struct shared *s)
{
    pid_t pid;

    AO_store(&s->held, 0);
    pid = fork();
    if (pid == 0) {
        struct am_lock_ctx c = {.self = 0};

        ops_of(s)->lock(lock_of(s), &c);
        AO_store_release(&s->held, 1);
        for (;;)
            pause();
    }
    ck_assert_msg(pid > 0, "mutex: fork: %s", strerror(errno));
    return pid;
}

static void kill_holder(struct shared *s)
{
    pid_t pid = start_doomed_holder(s);
    double deadline = now_s() + PROC_TIMEOUT_S;
    int st;

    while (!AO_load_acquire(&s->held) && now_s() < deadline)
        sched_yield();
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    ck_assert_msg(s->held, "mutex: the holder never took the lock");
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "mutex: holder not killed");
}

/* After the holder died: take the lock (with trylock if recover_by_trylock, else
 * with lock), use it, and check it still works normally afterwards. */
static void recover_worker(int idx, void *arg)
{
    struct shared *s = arg;
    struct am_lock_ctx c = {.self = 1};
    void *l = lock_of(s);

    if (!s->recover_by_trylock)
        ops_of(s)->lock(l, &c);
    else if (!ops_of(s)->trylock(l, &c))
        _exit(2); /* trylock must take over a dead holder's lock at once */
    s->counter++;
    ops_of(s)->unlock(l, &c);
    ops_of(s)->lock(l, &c);
    if (ops_of(s)->trylock(l, &c))
        _exit(3);
    ops_of(s)->unlock(l, &c);
    AO_fetch_and_add1_full(&s->acquired);
}

START_TEST(test_mutex_owner_dies)
{
    const struct am_lock_ops *ops = am_lock_find("mutex");
    struct shared *s = shared_new(lock_index(ops), 2, 0);
    int failed;

    for (int how = 0; how < 2; how++) { /* 0: recover with lock, 1: with trylock */
        kill_holder(s);
        s->recover_by_trylock = how;
        failed = tu_run_procs(1, recover_worker, s, PROC_TIMEOUT_S);
        ck_assert_msg(failed == 0, "mutex: could not recover a dead holder's lock with %s",
                      how ? "trylock" : "lock");
    }
    ck_assert_msg(s->acquired == 2 && s->counter == 2,
                  "mutex: recovered %lu times, counter %ld", (unsigned long)s->acquired,
                  s->counter);
    ck_assert_msg(!ops->locked(lock_of(s)), "mutex: still locked after recovery");
    shared_free(s, 2);
}
END_TEST

/* ---- (e) dead participants, stopped holders, giving up (lock_watch) ------- */

/* One process plays both parts: b's watch calls a (id 0) dead while a holds the
 * lock, so b's lock() must take over or pass a's turn; then a watch that gives
 * up must return AM_LOCK_GAVE_UP and leave the lock usable.  The mutex is left
 * out: the kernel knows its holder, and a same-thread relock is not a wait. */
START_TEST(test_dead_one_process)
{
    const struct am_lock_ops *ops = am_lock_table[_i];
    struct shared *s = shared_new((unsigned)_i, 3, 0);
    struct watcher wb = {s, 1};
    const struct am_lock_watch watch = {watched_dead, watched_give_up, &wb};
    struct am_lock_ctx a = {.self = 0}, b = {.self = 1, .watch = &watch};
    void *l = lock_of(s);

    if (strcmp(ops->name, "mutex") == 0)
        goto out;
    ck_assert_msg(ops->lock(l, &a) == 0, "%s: lock() on a free lock failed", ops->name);
    AO_store(&s->dead[0], 1);
    ck_assert_msg(ops->lock(l, &b) == 0, "%s: no take-over from a dead holder", ops->name);
    ck_assert_msg(ops->locked(l), "%s: !locked() after a take-over", ops->name);
    ops->unlock(l, &b);
    ck_assert_msg(!ops->locked(l), "%s: locked() after the new holder's unlock", ops->name);
    AO_store(&s->dead[0], 0); /* a new participant 0, alive */
    ck_assert_msg(ops->lock(l, &a) == 0, "%s: lock() after a take-over", ops->name);
    AO_store(&s->stop[1], 1);
    ck_assert_msg(ops->lock(l, &b) == AM_LOCK_GAVE_UP, "%s: no AM_LOCK_GAVE_UP", ops->name);
    ck_assert_msg(ops->locked(l), "%s: the holder lost the lock to a give-up", ops->name);
    ops->unlock(l, &a);
    AO_store(&s->stop[1], 0);
    ck_assert_msg(ops->lock(l, &b) == 0, "%s: lock() after a give-up", ops->name);
    ops->unlock(l, &b);
    ck_assert_msg(!ops->locked(l), "%s: locked() after a give-up and a lock", ops->name);
out:
    shared_free(s, 3);
}
END_TEST

/* What a participant of the recovery tests does once it holds the lock. */
enum role {
    PASS,    /* a short critical section, then unlock */
    HOLD,    /* say so in holds[id], stay inside until release[id] */
    GIVE_UP, /* must not get the lock: its lock() must return AM_LOCK_GAVE_UP */
};

/* A participant's exit codes (besides 0), for the parent's messages. */
enum { EXIT_RESULT = 4, EXIT_ENTERED = 5 };

struct member {
    struct shared *s;
    unsigned id;
    enum role role;
    int gated; /* waits at s->gate before lock() */
    int park;  /* 1 + the am_lock_hook point to park at for good, or 0 */
    int note;  /* 1: says in noted[id] that it took its ticket, and goes on */
    int blind; /* 1: waits without a watch */
};

/* The member parking at a lock hook, in its own process. */
static const struct member *parking;

/* am__lock_hook of a member with `park`: at its point, says so and stays;
 * of a member with `note`: says that it took its ticket. */
static void park_hook(enum am_lock_hook where)
{
    if (where == AM_LOCK_HOOK_ENQUEUED && parking->note)
        AO_store_release(&parking->s->noted[parking->id], 1);
    if ((int)where + 1 != parking->park)
        return;
    AO_store_release(&parking->s->parked[parking->id], 1);
    for (;;)
        pause();
}

/* A recovery participant, forked by tu_spawn(): lock() with the test watch,
 * then what its role says.  Fails by exiting nonzero, never by ck_assert. */
static void member_main(void *arg)
{
    const struct member *m = arg;
    struct shared *s = m->s;
    struct watcher w = {s, m->id};
    const struct am_lock_watch watch = {watched_dead, watched_give_up, &w};
    struct am_lock_ctx c = {
        .self = m->id, .watch = m->blind ? NULL : &watch, .wait = s->wait};
    int r;

    if (m->park || m->note) {
        parking = m;
        am__lock_hook = park_hook;
    }
    if (m->gated)
        tu_gate_wait(&s->gate);
    r = ops_of(s)->lock(lock_of(s), &c);
    if (r == AM_LOCK_GAVE_UP && m->role == GIVE_UP) {
        AO_fetch_and_add1_full(&s->gave_up);
        return;
    }
    if (r != 0)
        _exit(EXIT_RESULT);
    enter(s);
    AO_store(&s->rank[m->id], AO_fetch_and_add1_full(&s->entered));
    if (m->role == GIVE_UP)
        _exit(EXIT_ENTERED);
    AO_store_release(&s->holds[m->id], 1);
    while (m->role == HOLD && !AO_load_acquire(&s->release[m->id]))
        tu_sleep_ms(1);
    tu_widen(m->id);
    leave(s);
    ops_of(s)->unlock(lock_of(s), &c);
}

/* Forks participant m on `cpu`. */
static pid_t start(const char *name, const struct member *m, int cpu)
{
    pid_t pid = tu_spawn(member_main, (void *)m, cpu);

    ck_assert_msg(pid > 0, "%s: fork: %s", name, strerror(errno));
    return pid;
}

/* Fails the test unless *flag becomes nonzero within WAIT_S. */
static void expect_flag(const char *name, struct shared *s, AO_t *flag, const char *what,
                        unsigned id)
{
    ck_assert_msg(tu_wait_flag(flag, 1, WAIT_S),
                  "%s: participant %u never %s (%lu entered)", name, id, what,
                  (unsigned long)AO_load(&s->entered));
}

/* Reaps participant id within secs; fails the test unless it exited 0. */
static void reap_ok(const char *name, pid_t pid, unsigned id, double secs)
{
    int st = tu_reap(pid, secs);

    ck_assert_msg(st != -1, "%s: participant %u hung (killed after %.0f s)", name, id,
                  secs);
    ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "%s: participant %u failed: %s %d (4: lock() result, 5: entered "
                  "after a give-up)",
                  name, id, WIFSIGNALED(st) ? "signal" : "exit",
                  WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* SIGKILLs participant id and reaps it; only then tells the watch it is dead.
 * A holder dies inside its critical section, so the parent ends that for it
 * just before the kill.  Returns the critical sections entered by then, before
 * the watch could know of the death. */
static AO_t kill_member(const char *name, pid_t pid, struct shared *s, unsigned id)
{
    AO_t entered;
    int st;

    if (AO_load(&s->holds[id]))
        leave(s);
    kill(pid, SIGKILL);
    st = tu_reap(pid, WAIT_S);
    ck_assert_msg(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
                  "%s: participant %u did not die of SIGKILL", name, id);
    entered = AO_load(&s->entered);
    AO_store_release(&s->dead[id], 1);
    return entered;
}

/* The holder (0) dies.  Nobody may enter before it is killed, nor before the
 * watch knows, except with the mutex, which the kernel hands on at the death. */
static void kill_holder_member(const char *name, pid_t pid, struct shared *s)
{
    AO_t before = AO_load(&s->entered), early;

    ck_assert_msg(before == 1, "%s: %lu entered while the holder held the lock", name,
                  (unsigned long)before - 1);
    early = kill_member(name, pid, s, 0);
    ck_assert_msg(early == 1 || strcmp(name, "mutex") == 0,
                  "%s: %lu entered before the holder's death was known", name,
                  (unsigned long)early - 1);
}

/* Stops participant id with SIGSTOP and waits until it is stopped. */
static void stop_member(const char *name, pid_t pid, unsigned id)
{
    int st;

    kill(pid, SIGSTOP);
    ck_assert_msg(waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st),
                  "%s: participant %u did not stop", name, id);
}

/* The recovery scenarios: 0 holds the lock; with KILL_WAITER 1 queues behind it;
 * then 2 and 3 (on different CPUs, through a gate) queue behind them.  The
 * parent kills what `kill_what` says, while all wait in lock(), releases the
 * holder if it lives, and expects 2 and 3 through, one at a time, in time. */
enum { KILL_HOLDER = 1, KILL_WAITER = 2 };

static void recovery(unsigned lock_idx, int kill_what, unsigned wait)
{
    const char *name = am_lock_table[lock_idx]->name;
    struct shared *s = shared_new(lock_idx, IDS, 0);
    struct member m[4];
    pid_t pid[4];
    double t;

    s->wait = wait;
    tu_gate_init(&s->gate, 2);
    for (unsigned i = 0; i < 4; i++)
        m[i] = (struct member){s, i, i == 0 ? HOLD : PASS, i >= 2, 0, 0, 0};
    pid[0] = start(name, &m[0], 0);
    expect_flag(name, s, &s->holds[0], "took the lock", 0);
    if (kill_what & KILL_WAITER) {
        pid[1] = start(name, &m[1], 1);
        expect_flag(name, s, &s->asked[1], "waited in lock()", 1);
    }
    pid[2] = start(name, &m[2], 0);
    pid[3] = start(name, &m[3], 1);
    expect_flag(name, s, &s->asked[2], "waited in lock()", 2);
    expect_flag(name, s, &s->asked[3], "waited in lock()", 3);
    if (kill_what & KILL_WAITER) {
        stop_member(name, pid[1], 1);
        (void)kill_member(name, pid[1], s, 1);
    }
    t = now_s();
    if (kill_what & KILL_HOLDER)
        kill_holder_member(name, pid[0], s);
    else
        AO_store_release(&s->release[0], 1);
    reap_ok(name, pid[2], 2, WAIT_S);
    reap_ok(name, pid[3], 3, WAIT_S);
    if (!(kill_what & KILL_HOLDER))
        reap_ok(name, pid[0], 0, WAIT_S);
    t = now_s() - t;
    verbose(name, "recovery", kill_what & KILL_WAITER ? 4 : 3, 1, t);
    ck_assert_msg(t < RECOVER_S, "%s: the survivors took %.1f s to get through", name, t);
    ck_assert_msg(s->violations == 0, "%s: %lu entries found the critical section occupied",
                  name, (unsigned long)s->violations);
    ck_assert_msg(s->entered == 3, "%s: %lu critical sections, expected 3", name,
                  (unsigned long)s->entered);
    ck_assert_msg(!ops_of(s)->locked(lock_of(s)), "%s: locked() after recovery", name);
    shared_free(s, IDS);
}

/* A holder killed in its critical section; two waiters get in in turn. */
START_TEST(test_holder_killed)
{
    recovery((unsigned)_i, KILL_HOLDER, AM_LOCK_WAIT_YIELD);
}
END_TEST

/* A waiter killed in lock() before its turn; its turn is passed on. */
START_TEST(test_waiter_killed)
{
    recovery((unsigned)_i, KILL_WAITER, AM_LOCK_WAIT_YIELD);
}
END_TEST

/* The holder and the waiter behind it both dead. */
START_TEST(test_holder_and_waiter_killed)
{
    recovery((unsigned)_i, KILL_HOLDER | KILL_WAITER, AM_LOCK_WAIT_YIELD);
}
END_TEST

/* The same with every participant parking (AM_LOCK_WAIT_PARK): parked
 * waiters wake at their timeout, find the dead and pass them. */
START_TEST(test_parked_pass_dead)
{
    recovery((unsigned)_i, KILL_HOLDER | KILL_WAITER, AM_LOCK_WAIT_PARK);
}
END_TEST

/* ---- a parked waiter sleeps, and unlock wakes it ------------------------- */

#define PARK_ROUNDS 50  /* rounds to catch the waiter inside FUTEX_WAIT at unlock */
#define PARK_LOOK_S 1.0 /* per round, to see the waiter asleep */

/* Process pid's state letter in /proc/pid/stat (S: asleep), or '?'. */
static char proc_state(pid_t pid)
{
    char path[64], buf[256], *p;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return '?';
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

/* The waiter (id 1, parking): each round, waits until the parent holds the
 * lock, lock()s behind it, and records in `acquired` how many of its parks
 * ended by a wake rather than the timeout. */
static void park_waiter(void *arg)
{
    struct shared *s = arg;
    struct am_lock_ctx c = {.self = 1, .wait = AM_LOCK_WAIT_PARK};

    for (AO_t r = 1; r <= PARK_ROUNDS; r++) {
        await_round(s, r);
        ops_of(s)->lock(lock_of(s), &c);
        AO_store(&s->acquired, am__lock_parks_woken);
        AO_store_release(&s->entered, r);
        ops_of(s)->unlock(lock_of(s), &c);
    }
}

/* Locks whose AM_LOCK_WAIT_PARK sleeps (ops->parks): the parent holds the
 * lock, looks for up to PARK_LOOK_S for the waiter asleep (state S: a
 * yielding waiter stays runnable), unlocks, and repeats (bounded) until a
 * park of the waiter ended by the wake of unlock, not by its timeout.  A
 * round whose look missed the sleep (a busy machine keeps a woken waiter
 * runnable for long) is only a round that cannot count. */
START_TEST(test_park_sleeps_and_is_woken)
{
    const struct am_lock_ops *ops = am_lock_table[_i];
    struct shared *s;
    struct am_lock_ctx c = {.self = 0, .wait = AM_LOCK_WAIT_PARK};
    pid_t pid;
    AO_t r;
    unsigned seen = 0; /* rounds that saw the waiter asleep before unlock */

    if (!ops->parks)
        return;
    s = shared_new((unsigned)_i, 2, 0);
    pid = tu_spawn(park_waiter, s, 1);
    ck_assert_msg(pid > 0, "%s: fork: %s", ops->name, strerror(errno));
    for (r = 1; r <= PARK_ROUNDS && !AO_load(&s->acquired); r++) {
        double deadline = now_s() + PARK_LOOK_S;

        ops->lock(lock_of(s), &c);
        AO_store_release(&s->round, r);
        while (proc_state(pid) != 'S' && now_s() < deadline)
            tu_sleep_ms(1);
        seen += proc_state(pid) == 'S';
        tu_sleep_ms(2); /* more than a park: it may have timed out and gone back */
        ops->unlock(lock_of(s), &c);
        ck_assert_msg(tu_wait_flag(&s->entered, r, WAIT_S),
                      "%s: round %lu: the waiter never got the released lock (state %c)",
                      ops->name, (unsigned long)r, proc_state(pid));
    }
    ck_assert_msg(AO_load(&s->acquired) > 0,
                  "%s: in %d rounds no park ended by unlock's wake (only timeouts); "
                  "%u rounds saw the waiter asleep, its state now %c",
                  ops->name, PARK_ROUNDS, seen, proc_state(pid));
    if (getenv("SHMAM_VERBOSE"))
        printf("%s: a park ended by unlock's wake in round %lu (%u saw it asleep)\n",
               ops->name, (unsigned long)(r - 1), seen);
    kill(pid, SIGKILL);
    tu_reap(pid, WAIT_S);
    shared_free(s, 2);
}
END_TEST

/* The queue locks' own points (am__lock_hook): a waiter killed right after
 * its ticket was taken, before it waited at all (where MCS's classic
 * version has swapped the tail but not yet linked behind its predecessor;
 * for Hemlock, the holder then waits in unlock() for a dead successor to
 * take its grant); an MCS or Hemlock holder killed in unlock() with its
 * successor found but not yet admitted.  0 holds; 1 takes its ticket behind 0 and parks (or
 * 0 parks in its own unlock); 2 and 3 queue behind; the parked one is killed and 2 and 3
 * must get through, one at a time, in time.  Locks without the point (the hook never fires
 * there) are skipped. */
static int has_point(const char *name, enum am_lock_hook where)
{
    return strcmp(name, "mcs") == 0 || strcmp(name, "hemlock") == 0 ||
           strcmp(name, "hapax") == 0 ||
           (strcmp(name, "clh") == 0 && where != AM_LOCK_HOOK_HANDING);
}

static void parked_killed(unsigned lock_idx, enum am_lock_hook where)
{
    const char *name = am_lock_table[lock_idx]->name;
    struct shared *s = shared_new(lock_idx, IDS, 0);
    unsigned victim = where == AM_LOCK_HOOK_HANDING ? 0 : 1;
    struct member m[4];
    pid_t pid[4];
    double t;

    if (!has_point(name, where))
        goto out;
    tu_gate_init(&s->gate, 2);
    for (unsigned i = 0; i < 4; i++)
        m[i] = (struct member){
            s, i, i == 0 ? HOLD : PASS, i >= 2, i == victim ? 1 + where : 0, 0, 0};
    pid[0] = start(name, &m[0], 0);
    expect_flag(name, s, &s->holds[0], "took the lock", 0);
    if (victim == 1) {
        pid[1] = start(name, &m[1], 1);
        expect_flag(name, s, &s->parked[1], "parked after taking its ticket", 1);
    }
    pid[2] = start(name, &m[2], 0);
    pid[3] = start(name, &m[3], 1);
    expect_flag(name, s, &s->asked[2], "waited in lock()", 2);
    expect_flag(name, s, &s->asked[3], "waited in lock()", 3);
    t = now_s();
    if (victim == 0) {
        AO_store_release(&s->release[0], 1);
        expect_flag(name, s, &s->parked[0], "parked in unlock()", 0);
        AO_store(&s->holds[0], 0); /* it has left its critical section */
    }
    (void)kill_member(name, pid[victim], s, victim);
    if (victim == 1) {
        AO_store_release(&s->release[0], 1);
        reap_ok(name, pid[0], 0, WAIT_S);
    }
    reap_ok(name, pid[2], 2, WAIT_S);
    reap_ok(name, pid[3], 3, WAIT_S);
    t = now_s() - t;
    verbose(name, "parked", 4, 1, t);
    ck_assert_msg(t < RECOVER_S, "%s: the survivors took %.1f s to get through", name, t);
    ck_assert_msg(s->violations == 0, "%s: %lu entries found the critical section occupied",
                  name, (unsigned long)s->violations);
    ck_assert_msg(s->entered == 3, "%s: %lu critical sections, expected 3", name,
                  (unsigned long)s->entered);
    ck_assert_msg(!ops_of(s)->locked(lock_of(s)), "%s: locked() after recovery", name);
out:
    shared_free(s, IDS);
}

/* A waiter killed right after taking its ticket, before waiting. */
START_TEST(test_killed_enqueued)
{
    parked_killed((unsigned)_i, AM_LOCK_HOOK_ENQUEUED);
}
END_TEST

/* An MCS or Hemlock holder killed in unlock(), its successor found but not
 * admitted. */
START_TEST(test_killed_handing_off)
{
    parked_killed((unsigned)_i, AM_LOCK_HOOK_HANDING);
}
END_TEST

/* The queue locks admit in the order tickets were taken: 0 holds, 1 .. 5
 * take their tickets one after another (each once the one before has,
 * seen through the lock hook), and enter in that order once 0 unlocks. */
enum { FIFO_WAITERS = 5 };

START_TEST(test_queue_fifo)
{
    const char *name = am_lock_table[_i]->name;
    struct shared *s = shared_new((unsigned)_i, IDS, 0);
    struct member m[FIFO_WAITERS + 1];
    pid_t pid[FIFO_WAITERS + 1];

    if (!has_point(name, AM_LOCK_HOOK_ENQUEUED))
        goto out;
    for (unsigned i = 0; i <= FIFO_WAITERS; i++)
        m[i] = (struct member){s, i, i == 0 ? HOLD : PASS, 0, 0, i > 0, 0};
    pid[0] = start(name, &m[0], 0);
    expect_flag(name, s, &s->holds[0], "took the lock", 0);
    for (unsigned i = 1; i <= FIFO_WAITERS; i++) {
        pid[i] = start(name, &m[i], (int)(i % 2));
        expect_flag(name, s, &s->noted[i], "took its ticket", i);
    }
    AO_store_release(&s->release[0], 1);
    for (unsigned i = 0; i <= FIFO_WAITERS; i++)
        reap_ok(name, pid[i], i, WAIT_S);
    ck_assert_msg(s->violations == 0 && s->entered == FIFO_WAITERS + 1,
                  "%s: %lu violations, %lu critical sections (expected %d)", name,
                  (unsigned long)s->violations, (unsigned long)s->entered,
                  FIFO_WAITERS + 1);
    for (unsigned i = 0; i <= FIFO_WAITERS; i++)
        ck_assert_msg(s->rank[i] == i, "%s: the taker of ticket %u entered as number %lu",
                      name, i, (unsigned long)s->rank[i]);
out:
    shared_free(s, IDS);
}
END_TEST

/* Hapax: a holder killed in unlock() after its departure, before it changed
 * its successor's slot, costs nothing even to a waiter without a watch: it
 * reads the departure once its spinning has failed. */
START_TEST(test_hapax_untold_waiter)
{
    const struct am_lock_ops *ops = am_lock_find("hapax");
    struct shared *s = shared_new(lock_index(ops), IDS, 0);
    struct member m[2] = {{s, 0, HOLD, 0, 1 + AM_LOCK_HOOK_HANDING, 0, 0},
                          {s, 1, PASS, 0, 0, 1, 1}};
    pid_t pid[2];

    pid[0] = start(ops->name, &m[0], 0);
    expect_flag(ops->name, s, &s->holds[0], "took the lock", 0);
    pid[1] = start(ops->name, &m[1], 1);
    expect_flag(ops->name, s, &s->noted[1], "took its ticket", 1);
    AO_store_release(&s->release[0], 1);
    expect_flag(ops->name, s, &s->parked[0], "parked in unlock()", 0);
    AO_store(&s->holds[0], 0); /* it has left its critical section */
    (void)kill_member(ops->name, pid[0], s, 0);
    reap_ok(ops->name, pid[1], 1, WAIT_S);
    ck_assert_msg(s->violations == 0 && s->entered == 2,
                  "hapax: %lu violations, %lu critical sections (expected 2)",
                  (unsigned long)s->violations, (unsigned long)s->entered);
    ck_assert_msg(!ops->locked(lock_of(s)), "hapax: locked() at the end");
    shared_free(s, IDS);
}
END_TEST

/* Hapax: a waiter's slot only wakes it; the departure word decides.  While
 * 0 holds and 1 waits, the parent scribbles over every slot (a peer writing
 * garbage, or another waiter's post); 1 must not enter before 0 unlocks,
 * and must enter after. */
enum { SCRIBBLES = 20000 };

START_TEST(test_hapax_slot_only_wakes)
{
    const struct am_lock_ops *ops = am_lock_find("hapax");
    struct shared *s = shared_new(lock_index(ops), 2, 0);
    struct qnode_lock *q = lock_of(s);
    struct member m[2] = {{s, 0, HOLD, 0, 0, 0, 0}, {s, 1, PASS, 0, 0, 1, 0}};
    pid_t pid[2];
    AO_t during;

    pid[0] = start(ops->name, &m[0], 0);
    expect_flag(ops->name, s, &s->holds[0], "took the lock", 0);
    pid[1] = start(ops->name, &m[1], 1);
    expect_flag(ops->name, s, &s->noted[1], "took its ticket", 1);
    for (AO_t i = 0; i < SCRIBBLES; i++) {
        AO_store(&q->node[i & q->mask].ack, i * 0x9e3779b97f4a7c15u);
        if (i % 64 == 0)
            tu_yield();
    }
    during = AO_load(&s->entered);
    AO_store_release(&s->release[0], 1);
    reap_ok(ops->name, pid[0], 0, WAIT_S);
    reap_ok(ops->name, pid[1], 1, WAIT_S);
    ck_assert_msg(during == 1, "hapax: a changed slot let %lu in beside the holder",
                  (unsigned long)during - 1);
    ck_assert_msg(s->violations == 0 && s->entered == 2,
                  "hapax: %lu violations, %lu critical sections (expected 2)",
                  (unsigned long)s->violations, (unsigned long)s->entered);
    shared_free(s, 2);
}
END_TEST

/* A holder stopped with SIGSTOP for STOPPED_MS is not dead: it keeps the lock,
 * nobody enters until it continues and unlocks. */
START_TEST(test_stopped_holder_kept)
{
    const char *name = am_lock_table[_i]->name;
    struct shared *s = shared_new((unsigned)_i, IDS, 0);
    struct member m[3];
    pid_t pid[3];
    AO_t during;
    int held;

    tu_gate_init(&s->gate, 2);
    for (unsigned i = 0; i < 3; i++)
        m[i] = (struct member){s, i, i == 0 ? HOLD : PASS, i >= 1, 0, 0, 0};
    pid[0] = start(name, &m[0], 0);
    expect_flag(name, s, &s->holds[0], "took the lock", 0);
    pid[1] = start(name, &m[1], 0);
    pid[2] = start(name, &m[2], 1);
    expect_flag(name, s, &s->asked[1], "waited in lock()", 1);
    expect_flag(name, s, &s->asked[2], "waited in lock()", 2);
    stop_member(name, pid[0], 0);
    tu_sleep_ms(STOPPED_MS);
    during = AO_load(&s->entered);
    held = ops_of(s)->locked(lock_of(s));
    AO_store_release(&s->release[0], 1);
    kill(pid[0], SIGCONT);
    for (unsigned i = 0; i < 3; i++)
        reap_ok(name, pid[i], i, WAIT_S);
    ck_assert_msg(during == 1, "%s: %lu entered while the holder was stopped", name,
                  (unsigned long)during - 1);
    ck_assert_msg(held, "%s: !locked() while the holder was stopped", name);
    ck_assert_msg(s->violations == 0 && s->entered == 3,
                  "%s: %lu violations, %lu critical sections (expected 3)", name,
                  (unsigned long)s->violations, (unsigned long)s->entered);
    shared_free(s, IDS);
}
END_TEST

/* A waiter told to give up returns AM_LOCK_GAVE_UP promptly and leaves the lock to
 * its holder; a later waiter gets it once the holder unlocks. */
START_TEST(test_give_up)
{
    const char *name = am_lock_table[_i]->name;
    struct shared *s = shared_new((unsigned)_i, IDS, 0);
    struct member m[3] = {
        {s, 0, HOLD, 0, 0, 0, 0}, {s, 1, GIVE_UP, 0, 0, 0, 0}, {s, 2, PASS, 0, 0, 0, 0}};
    pid_t pid[3];
    double t;

    pid[0] = start(name, &m[0], 0);
    expect_flag(name, s, &s->holds[0], "took the lock", 0);
    pid[1] = start(name, &m[1], 1);
    expect_flag(name, s, &s->asked[1], "waited in lock()", 1);
    t = now_s();
    AO_store_release(&s->stop[1], 1);
    reap_ok(name, pid[1], 1, WAIT_S);
    t = now_s() - t;
    ck_assert_msg(t < GIVE_UP_S, "%s: lock() took %.1f s to give up", name, t);
    ck_assert_msg(s->gave_up == 1, "%s: lock() did not return AM_LOCK_GAVE_UP", name);
    ck_assert_msg(ops_of(s)->locked(lock_of(s)), "%s: !locked() after a give-up", name);
    pid[2] = start(name, &m[2], 1);
    expect_flag(name, s, &s->asked[2], "waited in lock()", 2);
    AO_store_release(&s->release[0], 1);
    reap_ok(name, pid[0], 0, WAIT_S);
    reap_ok(name, pid[2], 2, WAIT_S);
    ck_assert_msg(s->violations == 0 && s->entered == 2,
                  "%s: %lu violations, %lu critical sections (expected 2)", name,
                  (unsigned long)s->violations, (unsigned long)s->entered);
    ck_assert_msg(!ops_of(s)->locked(lock_of(s)), "%s: locked() at the end", name);
    shared_free(s, IDS);
}
END_TEST

/* Every waiter's watch says give up at once, so lock() keeps returning
 * AM_LOCK_GAVE_UP (each time perhaps leaving an abandoned ticket) and the workers
 * keep coming back, more of them than max_procs; the holder yields while it
 * holds, so that waiters do reach their watch (tu_yield: beside a CPU-bound
 * process a yield costs a time slice, and preemption does the widening).  The lock must
 * still serve every acquisition once, one at a time. */
enum { CHURN_PROCS = 6, CHURN_MAX_PROCS = 3, CHURN_ITERS = 600, CHURN_YIELDS = 8 };

static void churn_worker(int idx, void *arg)
{
    struct shared *s = arg;
    struct watcher w = {s, (unsigned)idx};
    const struct am_lock_watch watch = {watched_dead, watched_give_up, &w};
    struct am_lock_ctx c = {.self = (unsigned)idx, .watch = &watch};
    int r;

    tu_gate_wait(&s->gate);
    for (long i = 0; i < s->iters; i++) {
        while ((r = ops_of(s)->lock(lock_of(s), &c)) == AM_LOCK_GAVE_UP)
            AO_fetch_and_add1_full(&s->gave_up);
        if (r != 0)
            _exit(EXIT_RESULT);
        critical_section(s, idx, i);
        for (int y = 0; y < CHURN_YIELDS; y++)
            tu_yield();
        ops_of(s)->unlock(lock_of(s), &c);
        AO_fetch_and_add1_full(&s->done);
    }
}

START_TEST(test_give_up_churn)
{
    const char *name = am_lock_table[_i]->name;
    struct shared *s = shared_new((unsigned)_i, CHURN_MAX_PROCS, CHURN_ITERS);
    double t = now_s();
    int failed;

    tu_gate_init(&s->gate, CHURN_PROCS);
    for (int i = 0; i < CHURN_PROCS; i++)
        AO_store(&s->stop[i], 1);
    /* a fair lock with more workers than CPUs hands over only as fast as the
     * next in line is scheduled: beside a busy CPU, minutes (seen: over 20 s,
     * the old fixed limit); a stall of PROC_TIMEOUT_S fails */
    failed = tu_run_procs_moving(CHURN_PROCS, churn_worker, s, &s->done, PROC_TIMEOUT_S);
    verbose(name, "churn", CHURN_PROCS, s->iters, now_s() - t);
    ck_assert_msg(failed == 0, "%s: %d of %d processes failed or hung", name, failed,
                  CHURN_PROCS);
    ck_assert_msg(s->violations == 0, "%s: %lu entries found the critical section occupied",
                  name, (unsigned long)s->violations);
    ck_assert_msg(s->counter == CHURN_PROCS * s->iters, "%s: counter %ld, expected %ld",
                  name, s->counter, CHURN_PROCS * s->iters);
    ck_assert_msg(!ops_of(s)->locked(lock_of(s)), "%s: locked() at the end", name);
    shared_free(s, CHURN_MAX_PROCS);
}
END_TEST

static int lock_count(void)
{
    int n = 0;

    while (am_lock_table[n])
        n++;
    return n;
}

static Suite *locks_suite(void)
{
    Suite *s = suite_create("locks");
    TCase *one = tcase_create("one process");
    TCase *many = tcase_create("processes");
    TCase *waits = tcase_create("policies");
    int n = lock_count();

    tcase_add_test(one, test_table);
    tcase_add_test(one, test_anderson_needs_procs);
    tcase_add_loop_test(one, test_semantics, 0, n);
    tcase_set_timeout(many, TCASE_TIMEOUT_S);
    tcase_add_loop_test(many, test_exclusion_4, 0, n);
    tcase_add_loop_test(many, test_exclusion_8, 0, n);
    tcase_add_loop_test(many, test_trylock_held, 0, n);
    tcase_add_test(many, test_mutex_owner_dies);
    tcase_add_loop_test(one, test_dead_one_process, 0, n);
    tcase_add_loop_test(many, test_holder_killed, 0, n);
    tcase_add_loop_test(many, test_waiter_killed, 0, n);
    tcase_add_loop_test(many, test_holder_and_waiter_killed, 0, n);
    tcase_add_loop_test(many, test_killed_enqueued, 0, n);
    tcase_add_loop_test(many, test_killed_handing_off, 0, n);
    tcase_add_loop_test(many, test_stopped_holder_kept, 0, n);
    tcase_add_loop_test(many, test_give_up, 0, n);
    tcase_add_loop_test(many, test_give_up_churn, 0, n);
    tcase_add_loop_test(many, test_queue_fifo, 0, n);
    tcase_add_test(many, test_hapax_untold_waiter);
    tcase_add_test(many, test_hapax_slot_only_wakes);
    suite_add_tcase(s, one);
    suite_add_tcase(s, many);
    tcase_set_timeout(waits, TCASE_TIMEOUT_S);
    tcase_add_loop_test(waits, test_exclusion_waits, 0, 2 * n);
    tcase_add_loop_test(waits, test_park_sleeps_and_is_woken, 0, n);
    tcase_add_loop_test(waits, test_parked_pass_dead, 0, n);
    suite_add_tcase(s, waits);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(locks_suite());
    int failed;

    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
