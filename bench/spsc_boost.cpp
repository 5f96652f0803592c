/*
 * spsc_boost.cpp - spscbench's baseline: Boost.Lockfree's spsc_queue of 64-bit
 * items (header-only, inlined), measured exactly as spscbench measures
 * shmam's rings and ck_ring: two forked processes pinned to the first two CPUs
 * this program may use, a gate, the same loops.  spscbench starts it once per
 * measurement, in its ABBA order (bench/spscbench.c has the method).
 *
 *   build/bench/spsc_boost --mode stream|rtt --items N --slots S
 *
 * stream: the producer pushes items 0 .. N-1, retrying while the queue is
 * full; the consumer pops them, retrying while it is empty, and checks each.
 * rtt: process 0 pushes i into one queue and waits for i back from the other,
 * N times; process 1 echoes.  Prints one number, nanoseconds per item (stream,
 * the consumer's clock from the gate to the last item) or per round trip
 * (rtt, process 0's clock), and exits nonzero if an item is wrong or a
 * process fails.
 *
 * Each queue (runtime-sized, capacity S) and its buffer are placed in a
 * MAP_SHARED|MAP_ANONYMOUS mapping made before the fork: the buffer through an
 * allocator that hands out that mapping, so the pointer the queue keeps to it
 * is valid in both children, which inherit the mapping at the same address.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <new>

#include "common/place.h"

#include <boost/lockfree/spsc_queue.hpp>

/* The shared mapping's free part, for the queues' buffers (set before they
 * are made, in the parent). */
static char *arena_next, *arena_end;

template <class T> struct arena_alloc {
    using value_type = T;
    arena_alloc() = default;
    template <class U> arena_alloc(const arena_alloc<U> &)
    {
    }
    T *allocate(size_t n)
    {
        size_t bytes = (n * sizeof(T) + 127) / 128 * 128;
        if (arena_next + bytes > arena_end)
            throw std::bad_alloc();
        T *p = reinterpret_cast<T *>(arena_next);
        arena_next += bytes;
        return p;
    }
    void deallocate(T *, size_t)
    {
    }
    bool operator==(const arena_alloc &) const
    {
        return true;
    }
    bool operator!=(const arena_alloc &) const
    {
        return false;
    }
};

typedef boost::lockfree::spsc_queue<uint64_t,
                                    boost::lockfree::allocator<arena_alloc<uint64_t>>>
    queue;

struct ctl {
    alignas(128) std::atomic<unsigned> ready;
    alignas(128) std::atomic<unsigned> go;
    alignas(128) double ns;
    std::atomic<unsigned long> errors;
    alignas(128) unsigned char q[2][sizeof(queue) + 128];
};

static void gate(ctl *c)
{
    c->ready.fetch_add(1);
    while (!c->go.load(std::memory_order_acquire))
        sched_yield();
}

static void stream(ctl *c, queue *q, int idx, long n)
{
    gate(c);
    if (idx == 0) {
        for (long i = 0; i < n; i++)
            while (!q->push((uint64_t)i))
                ;
        return;
    }
    double t0 = bm_mono_s();
    unsigned long bad = 0;
    uint64_t v;
    for (long i = 0; i < n; i++) {
        while (!q->pop(v))
            ;
        bad += v != (uint64_t)i;
    }
    c->ns = (bm_mono_s() - t0) * 1e9 / (double)n;
    c->errors += bad;
}

static void rtt(ctl *c, queue *ping, queue *pong, int idx, long n)
{
    unsigned long bad = 0;
    uint64_t v;
    gate(c);
    double t0 = bm_mono_s();
    for (long i = 0; i < n; i++) {
        if (idx == 0) {
            while (!ping->push((uint64_t)i))
                ;
            while (!pong->pop(v))
                ;
        } else {
            while (!ping->pop(v))
                ;
            while (!pong->push(v))
                ;
        }
        bad += v != (uint64_t)i;
    }
    if (idx == 0)
        c->ns = (bm_mono_s() - t0) * 1e9 / (double)n;
    c->errors += bad;
}

static void usage()
{
    fprintf(stderr, "usage: spsc_boost --mode stream|rtt --items N --slots S\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *mode = "stream";
    long n = 1000000, slots = 1024;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (strcmp(argv[i], "--mode") == 0)
            mode = argv[++i];
        else if (strcmp(argv[i], "--items") == 0)
            n = atol(argv[++i]);
        else if (strcmp(argv[i], "--slots") == 0)
            slots = atol(argv[++i]);
        else
            usage();
    }
    int is_rtt = strcmp(mode, "rtt") == 0;
    if ((!is_rtt && strcmp(mode, "stream") != 0) || n < 1 || slots < 2 || slots > 1L << 24)
        usage();
    size_t bytes = sizeof(ctl) + 2 * ((size_t)slots + 1 + 32) * sizeof(uint64_t);
    void *map =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return 1;
    ctl *c = new (map) ctl();
    arena_next = (char *)map + (sizeof(ctl) + 127) / 128 * 128;
    arena_end = (char *)map + bytes;
    queue *q[2];
    for (int i = 0; i < 2; i++) {
        void *at = (void *)(((uintptr_t)c->q[i] + 127) / 128 * 128);
        q[i] = new (at) queue((size_t)slots);
    }
    fflush(NULL);
    pid_t pid[2];
    for (int i = 0; i < 2; i++) {
        if ((pid[i] = fork()) == 0) {
            bm_pin_nth((unsigned)i);
            if (is_rtt)
                rtt(c, q[0], q[1], i, n);
            else
                stream(c, q[0], i, n);
            _exit(0);
        }
        if (pid[i] < 0)
            return 1;
    }
    while (c->ready.load() < 2)
        usleep(100);
    c->go.store(1, std::memory_order_release);
    int failed = 0, st;
    for (int i = 0; i < 2; i++) {
        waitpid(pid[i], &st, 0);
        failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    if (failed || c->errors) {
        fprintf(stderr, "spsc_boost: %d processes failed, %lu items wrong\n", failed,
                c->errors.load());
        return 1;
    }
    printf("%.3f\n", c->ns);
    return 0;
}
