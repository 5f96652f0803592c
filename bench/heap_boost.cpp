/*
 * heap_boost.cpp - heapbench's baseline: the workload of bench/common/heapmix.h
 * over Boost.Interprocess's managed_shared_memory (its default segment
 * manager: rbtree best-fit allocator, a process-shared mutex), in P forked
 * processes pinned round robin, exactly as heapbench runs shmam's heap.
 * heapbench starts it once per measurement (bench/heapbench.c has the method).
 *
 *   build/bench/heap_boost --procs P --ops N --window W --bytes B [--seed S]
 *                          [--shift S]
 *
 * Prints one line: "OPS_PER_S RESERVED LIVE" (alloc+free pairs per second of
 * all processes, from the first start to the last end; bytes taken from the
 * segment, size - get_free_memory(), at the end; bytes the windows asked
 * for).  Exits nonzero if an allocation fails, a tag is wrong, or a process
 * fails.  The segment's name is removed as soon as it is mapped.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include "common/place.h"

#include <boost/interprocess/managed_shared_memory.hpp>

#include <atomic_ops.h>

#include "common/heapmix.h"

namespace bip = boost::interprocess;

struct opts {
    unsigned procs = 1, window = 64;
    long ops = 100000;
    size_t bytes = 32u << 20;
    uint64_t seed = 12345, shift = 0;
};

/* Shared by the parent and the children (an anonymous shared mapping, not
 * the segment, so the segment holds only what is measured). */
struct ctl {
    alignas(128) AO_t ready;
    alignas(128) AO_t go;
    struct {
        alignas(128) double t0, t1;
        AO_t live;
    } proc[HM_MAX_PROCS];
};

struct window {
    void *p[HM_MAX_WINDOW];
    uint64_t tag[HM_MAX_WINDOW];
    size_t len[HM_MAX_WINDOW];
};

static bool take(bip::managed_shared_memory &seg, window &w, unsigned i, unsigned p,
                 uint64_t op, uint64_t *x, uint64_t shift)
{
    w.len[i] = hm_len_at(x, op, shift);
    w.tag[i] = hm_tag(p, op);
    w.p[i] = seg.allocate(w.len[i], std::nothrow);
    if (!w.p[i])
        return false;
    memcpy(w.p[i], &w.tag[i], 8);
    return true;
}

static bool give(bip::managed_shared_memory &seg, window &w, unsigned i)
{
    uint64_t t;
    memcpy(&t, w.p[i], 8);
    if (t != w.tag[i])
        return false;
    seg.deallocate(w.p[i]);
    return true;
}

static int run(bip::managed_shared_memory &seg, ctl *c, const opts &o, unsigned p)
{
    static window w;
    uint64_t x = hm_seed(o.seed, p), live = 0;
    bool ok = true;
    for (unsigned i = 0; ok && i < o.window; i++)
        ok = take(seg, w, i, p, i, &x, o.shift);
    AO_fetch_and_add1_full(&c->ready);
    while (!AO_load_acquire(&c->go)) // pairs with the parent's release
        sched_yield();
    c->proc[p].t0 = bm_mono_s();
    for (long op = 0; ok && op < o.ops; op++) {
        unsigned i = hm_slot(&x, o.window);
        ok = give(seg, w, i) && take(seg, w, i, p, (uint64_t)op + o.window, &x, o.shift);
    }
    c->proc[p].t1 = bm_mono_s();
    for (unsigned i = 0; i < o.window; i++)
        live += w.len[i];
    c->proc[p].live = live;
    return ok ? 0 : 3;
}

static bool parse(int argc, char **argv, opts &o)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], nullptr, 10);
        if (!strcmp(argv[i], "--procs") && v >= 1 && v <= HM_MAX_PROCS)
            o.procs = (unsigned)v;
        else if (!strcmp(argv[i], "--ops") && v >= 1)
            o.ops = v;
        else if (!strcmp(argv[i], "--window") && v >= 1 && v <= HM_MAX_WINDOW)
            o.window = (unsigned)v;
        else if (!strcmp(argv[i], "--bytes") && v >= 4096)
            o.bytes = (size_t)v;
        else if (!strcmp(argv[i], "--seed"))
            o.seed = (uint64_t)strtoull(argv[i + 1], nullptr, 10);
        else if (!strcmp(argv[i], "--shift") && v >= 0)
            o.shift = (uint64_t)v;
        else
            return false;
    }
    return argc % 2 == 1;
}

/* Forks the processes, opens the gate, reaps them; true if all did well. */
static bool run_all(bip::managed_shared_memory &seg, ctl *c, const opts &o)
{
    pid_t pid[HM_MAX_PROCS];
    fflush(nullptr);
    for (unsigned p = 0; p < o.procs; p++)
        if ((pid[p] = fork()) == 0) {
            bm_pin_nth(p);
            _exit(run(seg, c, o, p));
        }
    while (AO_load_acquire(&c->ready) < o.procs)
        usleep(100);
    AO_store_release(&c->go, 1);
    bool ok = true;
    for (unsigned p = 0; p < o.procs; p++) {
        int st;
        ok &= waitpid(pid[p], &st, 0) == pid[p] && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    return ok;
}

int main(int argc, char **argv)
{
    opts o;
    if (!parse(argc, argv, o)) {
        fprintf(stderr,
                "usage: heap_boost --procs P --ops N --window W --bytes B [--seed S] "
                "[--shift S]\n");
        return 2;
    }
    char name[64];
    snprintf(name, sizeof name, "heapbench-boost-%d", (int)getpid());
    bip::shared_memory_object::remove(name);
    bip::managed_shared_memory seg(bip::create_only, name, o.bytes);
    bip::shared_memory_object::remove(name); // the mapping stays
    void *m = mmap(nullptr, sizeof(ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (m == MAP_FAILED)
        return 1;
    ctl *c = new (m) ctl();
    if (!run_all(seg, c, o)) {
        fprintf(stderr, "heap_boost: FAILED: a process failed (allocation or tag)\n");
        return 1;
    }
    double t0 = c->proc[0].t0, t1 = c->proc[0].t1, live = 0;
    for (unsigned p = 0; p < o.procs; p++) {
        t0 = c->proc[p].t0 < t0 ? c->proc[p].t0 : t0;
        t1 = c->proc[p].t1 > t1 ? c->proc[p].t1 : t1;
        live += (double)c->proc[p].live;
    }
    printf("%.1f %zu %.0f\n", (double)o.ops * o.procs / (t1 - t0),
           seg.get_size() - seg.get_free_memory(), live);
    return 0;
}
