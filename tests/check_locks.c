/*
 * check_locks.c - every lock of lock_table: the verbs' semantics in one process,
 * mutual exclusion among 4 and 8 processes on however many cores there are
 * (oversubscribed on purpose), trylock against a holder in another process, and
 * the mutex's recovery from a holder killed with SIGKILL.
 *
 * Each multi-process test puts a `struct shared` and the lock in one
 * MAP_SHARED|MAP_ANONYMOUS region, forks pinned workers with tu_run_procs(), lets
 * them start together at a gate, and checks in the parent what they recorded.
 * The critical section is a non-atomic read-modify-write of a plain counter with
 * tu_widen() between the read and the write, plus an occupancy counter that must
 * read 0 on entry, so a broken lock loses updates or is caught inside twice.
 * Every failure message starts with the lock's name.  SHMAM_STRESS multiplies
 * the iteration counts; SHMAM_VERBOSE=1 prints the time each run took.
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
#include "spin.h"
#include "testutil.h"

#if !defined(AO_HAVE_fetch_and_add1_full) || !defined(AO_HAVE_fetch_and_sub1_full)
#error "check_locks needs AO_fetch_and_add1_full and AO_fetch_and_sub1_full"
#endif

#define PROC_TIMEOUT_S 20 /* per tu_run_procs, times the stress factor */
#define TCASE_TIMEOUT_S 60

/* What the workers share, followed (at HDR bytes) by the lock's state. */
struct shared {
    struct tu_gate gate;
    unsigned lock_idx;      /* into lock_table; read-only */
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
};

#define HDR ((sizeof(struct shared) + LOCK_ALIGN - 1) / LOCK_ALIGN * LOCK_ALIGN)

static const struct lock_ops *ops_of(const struct shared *s)
{
    return lock_table[s->lock_idx];
}

static unsigned lock_index(const struct lock_ops *ops)
{
    unsigned i = 0;

    while (lock_table[i] != ops)
        i++;
    return i;
}

static void *lock_of(struct shared *s)
{
    return (char *)s + HDR;
}

static size_t shared_size(unsigned lock_idx, unsigned procs)
{
    return HDR + lock_table[lock_idx]->size(procs);
}

/* A zeroed region with the lock initialised for `procs` participants. */
static struct shared *shared_new(unsigned lock_idx, unsigned procs, long iters)
{
    const struct lock_ops *ops = lock_table[lock_idx];
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
    static const char *const names[] = {"tas", "ttas", "ticket", "anderson", "mutex", NULL};
    int i;

    for (i = 0; names[i]; i++) {
        ck_assert_msg(lock_table[i] != NULL, "%s: missing from lock_table", names[i]);
        ck_assert_msg(strcmp(lock_table[i]->name, names[i]) == 0,
                      "%s: lock_table[%d] is %s", names[i], i, lock_table[i]->name);
        ck_assert_msg(lock_find(names[i]) == lock_table[i], "%s: lock_find", names[i]);
    }
    ck_assert_msg(lock_table[i] == NULL, "lock_table: not NULL-terminated after mutex");
    ck_assert_msg(lock_find("nope") == NULL, "lock_find(\"nope\") found something");
}
END_TEST

START_TEST(test_anderson_needs_procs)
{
    const struct lock_ops *ops = lock_find("anderson");
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
    const struct lock_ops *ops = lock_table[_i];
    struct shared *s = shared_new((unsigned)_i, 3, 0);
    struct lock_ctx a = {.self = 0}, b = {.self = 1};
    void *l = lock_of(s);

    ck_assert_msg(ops->size(3) % LOCK_ALIGN == 0, "%s: size %zu not a multiple of %d",
                  ops->name, ops->size(3), LOCK_ALIGN);
    ck_assert_msg(!ops->locked(l), "%s: locked() after init", ops->name);
    for (int round = 0; round < 20; round++) {
        ck_assert_msg(ops->trylock(l, &a) == 1, "%s: trylock on a free lock, round %d",
                      ops->name, round);
        ck_assert_msg(ops->locked(l), "%s: !locked() after trylock", ops->name);
        ck_assert_msg(ops->trylock(l, &b) == 0, "%s: trylock on a held lock", ops->name);
        ops->unlock(l, &a);
        ck_assert_msg(!ops->locked(l), "%s: locked() after unlock", ops->name);
        ops->lock(l, &b);
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

static void critical_section(struct shared *s, int idx, long i)
{
    long v;

    if (AO_fetch_and_add1_full(&s->inside) != 0 || !ops_of(s)->locked(lock_of(s)))
        AO_fetch_and_add1_full(&s->violations);
    v = s->counter;
    tu_widen((unsigned)(i * 8 + idx));
    s->counter = v + 1;
    AO_fetch_and_sub1_full(&s->inside);
}

/* Every fourth acquisition goes through trylock, retried with backoff. */
static void acquire(struct shared *s, struct lock_ctx *c, long i)
{
    const struct lock_ops *ops = ops_of(s);
    struct spin sp = SPIN_INIT;

    if (i % 4 != 3) {
        ops->lock(lock_of(s), c);
        return;
    }
    while (!ops->trylock(lock_of(s), c))
        spin_wait(&sp);
}

static void exclusion_worker(int idx, void *arg)
{
    struct shared *s = arg;
    struct lock_ctx c = {.self = (unsigned)idx};

    tu_gate_wait(&s->gate);
    for (long i = 0; i < s->iters; i++) {
        acquire(s, &c, i);
        critical_section(s, idx, i);
        ops_of(s)->unlock(lock_of(s), &c);
    }
}

static void exclusion(unsigned lock_idx, int procs, long iters)
{
    const char *name = lock_table[lock_idx]->name;
    struct shared *s = shared_new(lock_idx, (unsigned)procs, iters * tu_stress_factor());
    double t = now_s();
    int failed =
        tu_run_procs(procs, exclusion_worker, s, PROC_TIMEOUT_S * tu_stress_factor());

    verbose(name, "exclusion", procs, s->iters, now_s() - t);
    ck_assert_msg(failed == 0, "%s: %d of %d processes failed or hung", name, failed,
                  procs);
    ck_assert_msg(s->violations == 0, "%s: %lu entries found the critical section occupied",
                  name, (unsigned long)s->violations);
    ck_assert_msg(s->counter == procs * s->iters,
                  "%s: counter %ld, expected %ld (%d x %ld)", name, s->counter,
                  procs * s->iters, procs, s->iters);
    shared_free(s, (unsigned)procs);
}

START_TEST(test_exclusion_4)
{
    exclusion((unsigned)_i, 4, 200000);
}
END_TEST

START_TEST(test_exclusion_8)
{
    exclusion((unsigned)_i, 8, 100000);
}
END_TEST

/* ---- (c) trylock against a holder in another process ---------------------- */

enum { HOLDER, WAITER, TRYLOCKERS = 2, TRY_PROCS = 2 + TRYLOCKERS, TRIES = 3000 };

static void holder(struct shared *s, struct lock_ctx *c)
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

static void waiter(struct shared *s, struct lock_ctx *c)
{
    await(&s->held);
    ops_of(s)->lock(lock_of(s), c);
    if (!AO_load(&s->releasing))
        AO_fetch_and_add1_full(&s->early);
    ops_of(s)->unlock(lock_of(s), c);
}

static void trylocker(struct shared *s, struct lock_ctx *c, int idx)
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
    struct lock_ctx c = {.self = (unsigned)idx};

    if (idx == HOLDER)
        holder(arg, &c);
    else if (idx == WAITER)
        waiter(arg, &c);
    else
        trylocker(arg, &c, idx);
}

START_TEST(test_trylock_held)
{
    const char *name = lock_table[_i]->name;
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
        struct lock_ctx c = {.self = 0};

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
    struct lock_ctx c = {.self = 1};
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
    const struct lock_ops *ops = lock_find("mutex");
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

static int lock_count(void)
{
    int n = 0;

    while (lock_table[n])
        n++;
    return n;
}

static Suite *locks_suite(void)
{
    Suite *s = suite_create("locks");
    TCase *one = tcase_create("one process");
    TCase *many = tcase_create("processes");
    int n = lock_count();

    tcase_add_test(one, test_table);
    tcase_add_test(one, test_anderson_needs_procs);
    tcase_add_loop_test(one, test_semantics, 0, n);
    tcase_set_timeout(many, TCASE_TIMEOUT_S * tu_stress_factor());
    tcase_add_loop_test(many, test_exclusion_4, 0, n);
    tcase_add_loop_test(many, test_exclusion_8, 0, n);
    tcase_add_loop_test(many, test_trylock_held, 0, n);
    tcase_add_test(many, test_mutex_owner_dies);
    suite_add_tcase(s, one);
    suite_add_tcase(s, many);
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
