/*
 * testutil.c - helpers for multi-process tests; see testutil.h.
 *
 * The gate is a sense-reversing barrier: the last arrival of a round resets the
 * count, then release-stores generation + 1; the others wait for the generation
 * to change with acquire loads, so what each process wrote before the gate is
 * visible to all after it.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"
#include "testutil.h"

#if !defined(AO_HAVE_fetch_and_add1_full) || !defined(AO_HAVE_load_acquire) ||             \
    !defined(AO_HAVE_store_release)
#error "testutil needs AO_fetch_and_add1_full, AO_load_acquire, AO_store_release"
#endif

void *tu_shared_alloc(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED) {
        perror("tu_shared_alloc: mmap");
        abort();
    }
    return p; /* anonymous mappings are zero-filled */
}

void tu_shared_free(void *p, size_t size)
{
    if (p)
        munmap(p, size);
}

int tu_pin(int cpu)
{
    cpu_set_t allowed, one;
    int k, n;

    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        return -errno;
    n = CPU_COUNT(&allowed);
    k = (cpu % n + n) % n;
    for (cpu = 0; k > 0 || !CPU_ISSET(cpu, &allowed); cpu++)
        if (CPU_ISSET(cpu, &allowed))
            k--;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
}

/* Before the processes that will use it start. */
void tu_gate_init(struct tu_gate *g, unsigned n)
{
    memset(g, 0, sizeof(*g));
    g->n = n;
}

/* By each of the n processes, once per round. */
void tu_gate_wait(struct tu_gate *g)
{
    AO_t gen = AO_load_acquire(&g->generation);
    struct spin s = SPIN_INIT;

    if (AO_fetch_and_add1_full(&g->count) + 1 == AO_load(&g->n)) {
        AO_store(&g->count, 0);
        AO_store_release(&g->generation, gen + 1);
        return;
    }
    while (AO_load_acquire(&g->generation) == gen)
        spin_wait(&s);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 1 (and a line on stderr) if child idx ended badly with wait status st. */
static int report(int idx, pid_t pid, int st)
{
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (WIFEXITED(st))
        fprintf(stderr, "tu_run_procs: child %d (pid %d) exited with %d\n", idx, (int)pid,
                WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        fprintf(stderr, "tu_run_procs: child %d (pid %d) killed by signal %d (%s)\n", idx,
                (int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
    return 1;
}

/* Kills and reaps every child still running; returns how many there were. */
static int kill_rest(pid_t *pid, int n, const char *why)
{
    int killed = 0, st;

    for (int i = 0; i < n; i++) {
        if (pid[i] <= 0)
            continue;
        kill(pid[i], SIGKILL);
        waitpid(pid[i], &st, 0);
        fprintf(stderr, "tu_run_procs: child %d (pid %d) killed: %s\n", i, (int)pid[i],
                why);
        pid[i] = 0;
        killed++;
    }
    return killed;
}

/* Reaps the n children in pid[] (entries <= 0 are done), polling every
 * millisecond until the deadline.  Returns how many failed. */
static int reap(pid_t *pid, int n, int timeout_s)
{
    double deadline = now_s() + timeout_s;
    int live = n, failed = 0, st;
    struct timespec ms = {0, 1000000};

    while (live > 0 && now_s() < deadline) {
        for (int i = 0; i < n; i++) {
            if (pid[i] <= 0 || waitpid(pid[i], &st, WNOHANG) != pid[i])
                continue;
            failed += report(i, pid[i], st);
            pid[i] = 0;
            live--;
        }
        if (live > 0)
            nanosleep(&ms, NULL);
    }
    return failed + kill_rest(pid, n, "timed out");
}

static void child(int idx, void (*fn)(int, void *), void *arg)
{
    int r = tu_pin(idx);

    if (r != 0)
        fprintf(stderr, "tu_run_procs: child %d: tu_pin: %s\n", idx, strerror(-r));
    fn(idx, arg);
    _exit(0);
}

int tu_run_procs(int n, void (*fn)(int idx, void *arg), void *arg, int timeout_s)
{
    pid_t *pid = calloc((size_t)n, sizeof(*pid));
    int failed;

    if (!pid)
        abort();
    fflush(NULL); /* or children would flush the parent's buffered output again */
    for (int i = 0; i < n; i++) {
        pid[i] = fork();
        if (pid[i] == 0)
            child(i, fn, arg);
        if (pid[i] < 0) {
            perror("tu_run_procs: fork");
            failed = kill_rest(pid, i, "fork failed") + n - i;
            free(pid);
            return failed;
        }
    }
    failed = reap(pid, n, timeout_s);
    free(pid);
    return failed;
}

int tu_stress_factor(void)
{
    const char *s = getenv("SHMAM_STRESS");
    int f = s ? atoi(s) : 1;

    return f > 0 ? f : 1;
}

void tu_widen(unsigned seed_counter)
{
    unsigned h = seed_counter * 2654435761u; /* Knuth's multiplicative hash */

    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    if ((h & 7u) == 0)
        sched_yield();
    else if ((h & 3u) == 1)
        for (unsigned i = (h >> 8) & 63u; i > 0; i--)
            spin_cpu_relax();
}
