/*
 * robust.c - processes sharing one robust process-shared pthread mutex, its
 * holder SIGKILLed: the others get EOWNERDEAD, make it consistent and go on.
 *
 *   build/bench/robust [--procs P] [--trials T] [--hold-ms MS] [--impl NAME]
 *                      [--header]
 *
 * A multi-process program as users write it with plain pthreads, for the
 * report's "real programs" section (scripts/locks_programs.py runs it bare and
 * under libshmam-locks.so with every SHMAM_LOCK: the preload makes a robust
 * process-shared mutex that lock, locks/preload/preload.c, and the same
 * recovery must happen under each as under glibc's).
 *
 * Method, per trial.  The parent maps a fresh MAP_SHARED|MAP_ANONYMOUS region
 * with a PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST mutex, the counter it
 * guards and one slot per process, and forks P processes (default 4, not
 * pinned).  Each loops: lock; counter = counter + 1 and its own slot + 1 (a
 * plain read-modify-write); unlock.  After MS ms (default 20) the parent
 * raises the hold flag: the next time process 0 has the lock it says so and
 * sleeps in its critical section (without incrementing); the parent reads
 * the clock and SIGKILLs it.  A waiter's pthread_mutex_lock then returns
 * EOWNERDEAD (the kernel's robust list): it notes the time, calls
 * pthread_mutex_consistent and goes on.  MS ms later, once every survivor
 * has had the lock again (bounded: WAIT_S), the parent raises the stop flag
 * and reaps the P - 1 survivors.
 *
 * Checks: exactly one EOWNERDEAD per trial, every survivor exits 0 and
 * acquires the lock again after the recovery, the counter equals the sum of
 * the slots (no increment lost, none made twice); a failure prints
 * "robust: FAILED ..." and exits 1.
 *
 * Rows (common schema; iters: the trials; impl: glibc, or the NAME of --impl,
 * which says how the program was run, e.g. preload/mcs):
 *   robust,glibc,-,P,0,T,recovery_s,V,s,LO-HI   from just before the kill to
 *       the EOWNERDEAD return: median over the trials, lowest-highest spread
 *   robust,glibc,-,P,0,T,recovered,V,ratio,     the trials that recovered and
 *       went on, over the trials (1: all)
 *   robust,glibc,-,P,0,T,acq_per_s,V,1/s,LO-HI  the survivors' acquisitions
 *       per second after the recovery
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "common/harness.h"
#include "common/measure.h"
#include "common/stat.h"

#define MAX_PROCS 64
#define MAX_TRIALS 1000
#define WAIT_S 10.0 /* for the holder to hold, the waiters to recover */

static const char usage_text[] =
    "usage: robust [--procs P] [--trials T] [--hold-ms MS] [--impl NAME] [--header]\n";

/* The shared region of one trial.  The flags are AO_t, stored with release
 * and read with acquire (the pairs are named at each end); counter and slot[]
 * are written under the mutex only. */
struct shared {
    pthread_mutex_t mutex;
    AO_t go, hold, holding, stop;
    AO_t dead;         /* EOWNERDEAD returns seen */
    AO_t recovered_ns; /* when the first came back (0: not yet) */
    unsigned long long counter;
    unsigned long long slot[MAX_PROCS];
    AO_t after[MAX_PROCS]; /* acquisitions after the recovery (the parent reads them) */
};

/* Process i's loop until the stop flag (exit status: 0). */
static void child(struct shared *s, unsigned i)
{
    while (!AO_load_acquire(&s->go)) /* pairs with the parent's release of go */
        ;
    while (!AO_load_acquire(&s->stop)) { /* pairs with the parent's release of stop */
        int rc = pthread_mutex_lock(&s->mutex);
        if (rc == EOWNERDEAD) {
            AO_store_release(&s->recovered_ns, (AO_t)bm_now_ns()); /* read by the parent */
            AO_fetch_and_add1(&s->dead);
            if (pthread_mutex_consistent(&s->mutex) != 0)
                _exit(3);
        } else if (rc != 0)
            _exit(2);
        if (i == 0 && AO_load_acquire(&s->hold)) { /* pairs with the parent's release */
            AO_store_release(&s->holding, 1);      /* read by the parent before the kill */
            for (;;)
                pause();
        }
        s->counter++;
        s->slot[i]++;
        if (AO_load(&s->recovered_ns)) /* written under the mutex by its process only */
            AO_store(&s->after[i], AO_load(&s->after[i]) + 1);
        pthread_mutex_unlock(&s->mutex);
    }
    _exit(0);
}

/* Waits until flag[0..n-1] are all set, at most WAIT_S seconds; 0 or -1. */
static int await(AO_t *flag, unsigned n)
{
    double end = bm_now_s() + WAIT_S;
    for (unsigned i = 0; i < n; i++)
        while (!AO_load_acquire(&flag[i])) /* pairs with the child's release */
            if (bm_now_s() > end)
                return -1;
            else
                usleep(100);
    return 0;
}

/* One trial; 0 with its recovery time and the survivors' rate after it, or
 * -1 after saying what failed. */
static int trial(unsigned procs, unsigned hold_ms, double *rec_s, double *rate)
{
    struct shared *s =
        mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_mutexattr_t a;
    pid_t pid[MAX_PROCS];
    int bad = 0;

    if (s == MAP_FAILED)
        bm_fail("mmap: %s", strerror(errno));
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (pthread_mutex_init(&s->mutex, &a) != 0)
        bm_fail("pthread_mutex_init");
    pthread_mutexattr_destroy(&a);
    for (unsigned i = 0; i < procs; i++)
        if ((pid[i] = fork()) == 0)
            child(s, i);
        else if (pid[i] < 0)
            bm_fail("fork: %s", strerror(errno));
    AO_store_release(&s->go, 1); /* pairs with the children's acquire of go */
    usleep(hold_ms * 1000);
    AO_store_release(&s->hold, 1); /* pairs with process 0's acquire of hold */
    if (await(&s->holding, 1) != 0) {
        fprintf(stderr, "robust: FAILED: process 0 never held the lock\n");
        bad = 1;
    }
    int64_t t0 = bm_now_ns();
    kill(pid[0], SIGKILL);
    waitpid(pid[0], NULL, 0);
    if (!bad && await(&s->recovered_ns, 1) != 0) {
        fprintf(stderr, "robust: FAILED: no waiter got EOWNERDEAD\n");
        bad = 1;
    }
    int64_t t1 = bm_now_ns();
    usleep(hold_ms * 1000);
    if (!bad && await(s->after + 1, procs - 1) != 0) {
        fprintf(stderr, "robust: FAILED: a survivor did not go on within %.0f s\n", WAIT_S);
        bad = 1;
    }
    AO_store_release(&s->stop, 1); /* pairs with the children's acquire of stop */
    int64_t t2 = bm_now_ns();
    if (bm_reap(pid + 1, procs - 1, WAIT_S) != 0) {
        fprintf(stderr, "robust: FAILED: a survivor did not exit 0\n");
        bad = 1;
    }
    unsigned long long sum = 0, after = 0;
    for (unsigned i = 0; i < procs; i++) {
        sum += s->slot[i];
        after += AO_load(&s->after[i]);
    }
    if (!bad && (AO_load(&s->dead) != 1 || s->counter != sum)) {
        fprintf(stderr,
                "robust: FAILED: %lu EOWNERDEAD (not 1), counter %llu, slots %llu\n",
                (unsigned long)AO_load(&s->dead), s->counter, sum);
        bad = 1;
    }
    *rec_s = (double)((int64_t)AO_load(&s->recovered_ns) - t0) * 1e-9;
    *rate = (double)after / ((double)(t2 - t1) * 1e-9);
    munmap(s, sizeof *s);
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    long procs = 4, trials = 5, hold_ms = 20;
    int header = 0;
    const char *impl = "glibc";
    static double rec[MAX_TRIALS], rate[MAX_TRIALS];

    bm_program("robust", usage_text, argc, argv);
    bm_setup("robust", -1);
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--procs") == 0 && next)
            procs = bm_opt_range(argv[++i], 2, MAX_PROCS, bm_bad_line);
        else if (strcmp(argv[i], "--trials") == 0 && next)
            trials = bm_opt_range(argv[++i], 1, MAX_TRIALS, bm_bad_line);
        else if (strcmp(argv[i], "--hold-ms") == 0 && next)
            hold_ms = bm_opt_range(argv[++i], 1, 10000, bm_bad_line);
        else if (strcmp(argv[i], "--impl") == 0 && next)
            impl = argv[++i];
        else if (!bm_common_flag(argv[i], &header, NULL))
            bm_bad_line();
    }
    int ok = 0;
    for (long t = 0; t < trials; t++)
        if (trial((unsigned)procs, (unsigned)hold_ms, &rec[ok], &rate[ok]) == 0)
            ok++;
    struct bm_row row = {.out = stdout, .bench = "robust", .shm = "-", .procs = (int)procs};
    if (header)
        bm_print_header(stdout);
    bm_print(&row, impl, trials, "recovery_s", bm_stat_of(rec, ok), "s", 6);
    double share = (double)ok / (double)trials;
    bm_print(&row, impl, trials, "recovered", bm_stat_of(&share, 1), "ratio", 3);
    bm_print(&row, impl, trials, "acq_per_s", bm_stat_of(rate, ok), "1/s", 0);
    return ok == trials ? 0 : 1;
}
