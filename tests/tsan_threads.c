/*
 * tsan_threads.c - the shared-memory code run as threads, for ThreadSanitizer.
 *
 * TSan cannot see across processes, so `make tsan` builds this program with
 * -fsanitize=thread and runs the same code as pthreads over one
 * MAP_SHARED|MAP_ANONYMOUS region.  A missing acquire/release pair then shows as
 * a data race on the plain data the code protects, and TSan makes the program
 * exit nonzero (66) at the end.  The program also checks its own counts, prints
 * one line per case, and exits 1 if any case failed.
 *
 * Structure: `suites[]` lists one function per module; each runs its cases,
 * prints their lines and returns how many failed.  To cover another module, add
 * a function and a row to suites[].
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "lock.h"
#include "spin.h"

#define THREADS 4
#define LOCK_ITERS 20000

/* One region of shared memory, mapped as between processes. */
static void *region(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED) {
        perror("tsan_threads: mmap");
        exit(2);
    }
    return p;
}

/* Starts n threads running fn(&args[i]) and joins them; args has n entries of
 * `size` bytes. */
static void run_threads(int n, void *(*fn)(void *), void *args, size_t size)
{
    pthread_t t[n];

    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, fn, (char *)args + i * size) != 0) {
            perror("tsan_threads: pthread_create");
            exit(2);
        }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* ---- locks: a plain counter under each lock of lock_table ----------------- */

struct lock_region {
    long counter; /* plain: only the lock orders it */
    char pad[LOCK_ALIGN - sizeof(long)];
    char lock[]; /* at LOCK_ALIGN */
};

_Static_assert(offsetof(struct lock_region, lock) == LOCK_ALIGN, "lock state is aligned");

struct lock_thread {
    const struct lock_ops *ops;
    struct lock_region *r;
    unsigned self;
};

/* Every third acquisition goes through trylock, to check its ordering too. */
static void *lock_thread(void *arg)
{
    struct lock_thread *a = arg;
    struct lock_ctx c = {.self = a->self};

    for (long i = 0; i < LOCK_ITERS; i++) {
        struct spin s = SPIN_INIT;

        if (i % 3 != 2)
            a->ops->lock(a->r->lock, &c);
        else
            while (!a->ops->trylock(a->r->lock, &c))
                spin_wait(&s);
        a->r->counter++;
        a->ops->unlock(a->r->lock, &c);
    }
    return NULL;
}

/* One lock: 0 if the count came out right. */
static int run_lock(const struct lock_ops *ops)
{
    size_t size = sizeof(struct lock_region) + ops->size(THREADS);
    struct lock_region *r = region(size);
    struct lock_thread args[THREADS];
    int rc = ops->init(r->lock, THREADS);

    for (unsigned i = 0; i < THREADS; i++)
        args[i] = (struct lock_thread){ops, r, i};
    if (rc == 0)
        run_threads(THREADS, lock_thread, args, sizeof(args[0]));
    rc = rc != 0 || r->counter != (long)THREADS * LOCK_ITERS;
    printf("tsan_threads: lock %-8s %d threads: counter %ld of %ld: %s\n", ops->name,
           THREADS, r->counter, (long)THREADS * LOCK_ITERS, rc ? "FAIL" : "ok");
    munmap(r, size);
    return rc;
}

static int run_locks(void)
{
    int failed = 0;

    for (int i = 0; lock_table[i]; i++)
        failed += run_lock(lock_table[i]);
    return failed;
}

/* ---- the table of suites ------------------------------------------------- */

static const struct suite {
    const char *name;
    int (*run)(void); /* returns the number of failed cases */
} suites[] = {
    {"locks", run_locks},
    /* Further modules (queues, claims) go here. */
};

int main(void)
{
    int failed = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
        int f = suites[i].run();

        if (f)
            printf("tsan_threads: %s: %d case(s) failed\n", suites[i].name, f);
        failed += f;
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
