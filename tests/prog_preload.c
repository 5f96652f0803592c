/*
 * prog_preload.c - a pthread mutex and condition variable conformance
 * program, plain POSIX threads and nothing of shmam's (argv[1]: the
 * iterations of the loops, default 20000): check_preload runs it
 * under libshmam-locks.so with every lock and waiting policy (and without
 * it), and it must pass the same.  The first failed check prints "FAIL
 * what" and exits 1; else the program prints "ok N" (checks passed).
 *
 * Checks: mutual exclusion of 4 threads on a statically initialised mutex
 * (a non-atomic counter with a widened window); trylock against a holder in
 * another thread (EBUSY) and on a free mutex; timedlock timing out against
 * a holder (ETIMEDOUT) and succeeding on a free mutex with a past deadline;
 * an error-checking mutex (EDEADLK on relock, EBUSY on trylock by the
 * holder, EPERM on unlock by a non-owner and on an unlocked one); a
 * recursive one, also statically initialised (relock, counted unlocks,
 * EPERM for a non-owner); a bounded buffer between 2 producers and 2
 * consumers with signal; broadcast waking every waiter; timedwait timing
 * out with the mutex held again; and a process-shared robust mutex in
 * shared memory: two processes excluding each other on it (a counter in the
 * shared memory), its holder SIGKILLed: EOWNERDEAD, then
 * pthread_mutex_consistent, then a plain lock; again: trylock says
 * EOWNERDEAD, and an unlock without consistent leaves it ENOTRECOVERABLE.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define SLOTS 8

static long ITERS = 20000, ITEMS = 20000; /* argv[1], if given, sets both */
static int checks;
static pid_t child; /* the robust test's holder, killed on a failure */

/* The first failed check ends the program (a broken lock could hang what
 * follows). */
static void check(int ok, const char *what)
{
    checks++;
    if (!ok) {
        printf("FAIL %s\n", what);
        fflush(stdout);
        if (child > 0)
            kill(child, SIGKILL);
        exit(1);
    }
}

static struct timespec in_ms(clockid_t clock, long ms)
{
    struct timespec t;

    clock_gettime(clock, &t);
    t.tv_nsec += ms % 1000 * 1000000L;
    t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

/* ---- exclusion ---- */

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long counter, inside;
static int overlap;

static void *counting(void *arg)
{
    for (long i = 0; i < ITERS; i++) {
        pthread_mutex_lock(&counter_lock);
        if (inside++ != 0)
            overlap = 1;
        long v = counter;
        if (i % 64 == 0)
            sched_yield(); /* widen the window */
        counter = v + 1;
        inside--;
        pthread_mutex_unlock(&counter_lock);
    }
    return arg;
}

static void exclusion(void)
{
    pthread_t t[THREADS];

    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, counting, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    check(counter == THREADS * ITERS && !overlap, "exclusion: updates lost or overlapped");
}

/* ---- another thread's attempt ---- */

struct attempt {
    pthread_mutex_t *m;
    int how; /* 0 trylock, 1 timedlock 50 ms, 2 unlock */
    int rc;
};

static void *attempting(void *arg)
{
    struct attempt *a = arg;
    struct timespec t = in_ms(CLOCK_REALTIME, 50);

    a->rc = a->how == 0   ? pthread_mutex_trylock(a->m)
            : a->how == 1 ? pthread_mutex_timedlock(a->m, &t)
                          : pthread_mutex_unlock(a->m);
    if (a->rc == 0 && a->how != 2)
        pthread_mutex_unlock(a->m);
    return NULL;
}

/* What another thread's attempt `how` on m returns. */
static int other(pthread_mutex_t *m, int how)
{
    struct attempt a = {m, how, -1};
    pthread_t t;

    pthread_create(&t, NULL, attempting, &a);
    pthread_join(t, NULL);
    return a.rc;
}

static void try_and_time(void)
{
    pthread_mutex_t m;
    struct timespec past = {0, 0};

    pthread_mutex_init(&m, NULL);
    pthread_mutex_lock(&m);
    check(other(&m, 0) == EBUSY, "trylock of a held mutex is not EBUSY");
    check(other(&m, 1) == ETIMEDOUT, "timedlock of a held mutex is not ETIMEDOUT");
    pthread_mutex_unlock(&m);
    check(other(&m, 0) == 0, "trylock of a free mutex failed");
    check(pthread_mutex_timedlock(&m, &past) == 0, "timedlock of a free mutex failed");
    pthread_mutex_unlock(&m);
    check(pthread_mutex_destroy(&m) == 0, "destroy of a free mutex failed");
}

/* ---- types ---- */

static void typed(pthread_mutex_t *m, int type)
{
    pthread_mutexattr_t a;

    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, type);
    pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
}

static void errorcheck(void)
{
    pthread_mutex_t m;

    typed(&m, PTHREAD_MUTEX_ERRORCHECK);
    check(pthread_mutex_unlock(&m) == EPERM,
          "errorcheck: unlock of a free mutex not EPERM");
    check(pthread_mutex_lock(&m) == 0, "errorcheck: lock failed");
    check(pthread_mutex_lock(&m) == EDEADLK, "errorcheck: relock not EDEADLK");
    check(pthread_mutex_trylock(&m) == EBUSY, "errorcheck: trylock by holder not EBUSY");
    check(other(&m, 2) == EPERM, "errorcheck: unlock by a non-owner not EPERM");
    check(other(&m, 0) == EBUSY, "errorcheck: lost to a non-owner's unlock");
    check(pthread_mutex_unlock(&m) == 0, "errorcheck: unlock by the holder failed");
    pthread_mutex_destroy(&m);
}

static pthread_mutex_t rec_static = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static void recursive(pthread_mutex_t *m, const char *what)
{
    char msg[96];

    check(pthread_mutex_lock(m) == 0 && pthread_mutex_lock(m) == 0 &&
              pthread_mutex_trylock(m) == 0,
          what);
    snprintf(msg, sizeof msg, "%s: unlock by a non-owner not EPERM", what);
    check(other(m, 2) == EPERM, msg);
    pthread_mutex_unlock(m);
    pthread_mutex_unlock(m);
    snprintf(msg, sizeof msg, "%s: free before the last unlock", what);
    check(other(m, 0) == EBUSY, msg);
    pthread_mutex_unlock(m);
    snprintf(msg, sizeof msg, "%s: not free after the last unlock", what);
    check(other(m, 0) == 0, msg);
}

static void recursion(void)
{
    pthread_mutex_t m;

    typed(&m, PTHREAD_MUTEX_RECURSIVE);
    recursive(&m, "recursive");
    pthread_mutex_destroy(&m);
    recursive(&rec_static, "recursive (static)");
}

/* ---- condition variables ---- */

static struct {
    pthread_mutex_t m;
    pthread_cond_t not_full, not_empty;
    long slot[SLOTS], head, tail, sum;
} buf = {PTHREAD_MUTEX_INITIALIZER,
         PTHREAD_COND_INITIALIZER,
         PTHREAD_COND_INITIALIZER,
         {0},
         0,
         0,
         0};

static void *producing(void *arg)
{
    for (long i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&buf.m);
        while (buf.tail - buf.head == SLOTS)
            pthread_cond_wait(&buf.not_full, &buf.m);
        buf.slot[buf.tail++ % SLOTS] = i;
        pthread_cond_signal(&buf.not_empty);
        pthread_mutex_unlock(&buf.m);
    }
    return arg;
}

static void *consuming(void *arg)
{
    for (long i = 0; i < ITEMS; i++) {
        pthread_mutex_lock(&buf.m);
        while (buf.tail == buf.head)
            pthread_cond_wait(&buf.not_empty, &buf.m);
        buf.sum += buf.slot[buf.head++ % SLOTS];
        pthread_cond_signal(&buf.not_full);
        pthread_mutex_unlock(&buf.m);
    }
    return arg;
}

static void bounded_buffer(void)
{
    pthread_t t[4];

    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, i < 2 ? producing : consuming, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    check(buf.sum == 2 * (ITEMS * (ITEMS + 1) / 2), "cond signal: items lost or doubled");
}

static struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    int go, waiting, woken;
} bc = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

static void *broadcast_waiter(void *arg)
{
    pthread_mutex_lock(&bc.m);
    bc.waiting++;
    while (!bc.go)
        pthread_cond_wait(&bc.c, &bc.m);
    bc.woken++;
    pthread_mutex_unlock(&bc.m);
    return arg;
}

static void broadcast(void)
{
    pthread_t t[THREADS];
    int all = 0;

    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, broadcast_waiter, NULL);
    while (!all) {
        pthread_mutex_lock(&bc.m);
        all = bc.waiting == THREADS;
        pthread_mutex_unlock(&bc.m);
        sched_yield();
    }
    pthread_mutex_lock(&bc.m);
    bc.go = 1;
    pthread_cond_broadcast(&bc.c);
    pthread_mutex_unlock(&bc.m);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    check(bc.woken == THREADS, "cond broadcast: not every waiter woke");
}

static void timed_wait(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c;
    pthread_condattr_t a;
    struct timespec t;

    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&c, &a);
    pthread_mutex_lock(&m);
    t = in_ms(CLOCK_MONOTONIC, 30);
    int rc = pthread_cond_timedwait(&c, &m, &t);
    check(rc == ETIMEDOUT, "cond timedwait (monotonic) did not time out");
    check(other(&m, 0) == EBUSY, "cond timedwait returned without the mutex");
    pthread_mutex_unlock(&m);
    pthread_cond_destroy(&c);
    pthread_cond_init(&c, NULL);
    pthread_mutex_lock(&m);
    t = in_ms(CLOCK_REALTIME, 30);
    check(pthread_cond_timedwait(&c, &m, &t) == ETIMEDOUT,
          "cond timedwait (realtime) did not time out");
    pthread_mutex_unlock(&m);
}

/* ---- a process-shared robust mutex, its holder killed ---- */

struct pshared {
    pthread_mutex_t m;
    volatile int held;
    volatile long counter, inside;
    volatile int overlap;
};

/* Forks a child that locks s->m, says so, and stays until killed. */
static pid_t holder(struct pshared *s)
{
    pid_t p = fork();

    if (p == 0) {
        alarm(60); /* never outlive a parent that failed */
        pthread_mutex_lock(&s->m);
        s->held = 1;
        for (;;)
            pause();
    }
    child = p;
    while (!s->held)
        usleep(1000);
    return p;
}

static void kill_holder(struct pshared *s, pid_t p)
{
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    child = 0;
    s->held = 0;
}

/* ITERS increments of the shared counter under s->m, in this process. */
static void count_shared(struct pshared *s)
{
    for (long i = 0; i < ITERS; i++) {
        pthread_mutex_lock(&s->m);
        if (s->inside++ != 0)
            s->overlap = 1;
        long v = s->counter;
        if (i % 64 == 0)
            sched_yield(); /* widen the window */
        s->counter = v + 1;
        s->inside--;
        pthread_mutex_unlock(&s->m);
    }
}

static void robust_pshared(void)
{
    struct pshared *s =
        mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_mutexattr_t a;
    pid_t p;
    int st;

    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    check(pthread_mutex_init(&s->m, &a) == 0, "robust: init failed");
    if ((p = fork()) == 0) {
        alarm(60);
        count_shared(s);
        _exit(0);
    }
    child = p;
    count_shared(s);
    check(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "robust: the other counting process failed");
    child = 0;
    check(!s->overlap && s->counter == 2 * ITERS,
          "robust: two processes inside at once, or increments lost");
    p = holder(s);
    check(pthread_mutex_trylock(&s->m) == EBUSY, "robust: a live holder's mutex not EBUSY");
    kill_holder(s, p);
    check(pthread_mutex_lock(&s->m) == EOWNERDEAD, "robust: no EOWNERDEAD after the kill");
    check(pthread_mutex_consistent(&s->m) == 0, "robust: consistent failed");
    check(pthread_mutex_unlock(&s->m) == 0, "robust: unlock failed");
    check(pthread_mutex_lock(&s->m) == 0, "robust: lock after consistent failed");
    pthread_mutex_unlock(&s->m);
    p = holder(s);
    kill_holder(s, p);
    check(pthread_mutex_trylock(&s->m) == EOWNERDEAD,
          "robust: trylock gave no EOWNERDEAD after the kill");
    check(pthread_mutex_unlock(&s->m) == 0, "robust: unlock while inconsistent failed");
    check(pthread_mutex_lock(&s->m) == ENOTRECOVERABLE,
          "robust: not ENOTRECOVERABLE after an unlock without consistent");
    pthread_mutex_destroy(&s->m);
    munmap(s, sizeof *s);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (ITERS = ITEMS = atol(argv[1])) < 1)
        return 2;
    exclusion();
    try_and_time();
    errorcheck();
    recursion();
    bounded_buffer();
    broadcast();
    timed_wait();
    robust_pshared();
    printf("ok %d\n", checks);
    return 0;
}
