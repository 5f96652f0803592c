/*
 * testutil.h - helpers shared by every multi-process test (pure libc and
 * libatomic_ops; no Check, so children may use them freely).
 *
 * A typical test allocates its shared state with tu_shared_alloc() before
 * forking (children inherit the mapping at the same address), puts a tu_gate in
 * it, and runs its workers with tu_run_procs(): each worker is a forked child,
 * pinned to a core, that waits at the gate so all start together, does its work
 * with tu_widen() between the steps of any claim or critical section, records
 * what it saw in shared memory and returns.  The parent then checks the totals
 * (with Check, in the parent only: a child reports failure by abort() or a
 * nonzero exit, never with ck_assert).  Iteration counts are multiplied by
 * tu_stress_factor() so `make stress` runs longer.
 */
#ifndef SHMAM_TESTUTIL_H
#define SHMAM_TESTUTIL_H

#include <atomic_ops.h>
#include <stddef.h>

/* Zeroed memory shared with children forked later (MAP_SHARED|MAP_ANONYMOUS),
 * page-aligned.  Aborts on failure. */
void *tu_shared_alloc(size_t size);

/* Unmaps what tu_shared_alloc(size) returned. */
void tu_shared_free(void *p, size_t size);

/* Binds the calling process to one CPU: the (cpu % n)-th of the n CPUs it may run
 * on now.  Returns 0 or -errno. */
int tu_pin(int cpu);

/* A reusable start gate (barrier) in shared memory for n processes: each call of
 * tu_gate_wait() returns once all n have called it, so they leave together.  The
 * wait spins, backing off to sched_yield(). */
struct tu_gate {
    AO_t n;          /* processes per round */
    AO_t count;      /* arrivals in this round */
    AO_t generation; /* rounds completed */
};
void tu_gate_init(struct tu_gate *g, unsigned n);
void tu_gate_wait(struct tu_gate *g);

/* Forks n children; child idx (0 .. n-1) pins itself with tu_pin(idx), runs
 * fn(idx, arg) and exits 0.  A child fails by exiting nonzero or by a signal
 * (abort()).  Waits for all; after timeout_s seconds kills the rest with SIGKILL.
 * Returns the number of children that failed or timed out, having printed
 * which to stderr. */
int tu_run_procs(int n, void (*fn)(int idx, void *arg), void *arg, int timeout_s);

/* SHMAM_STRESS from the environment as a positive int, else 1.  Multiply
 * iteration counts by it. */
int tu_stress_factor(void);

/* Widens a race window: depending on a hash of `seed_counter` (pass something that
 * changes every call, e.g. iteration * procs + idx), yields the processor (1 call
 * in 8), pauses the core for up to 63 pause instructions (1 in 4) or returns at
 * once. */
void tu_widen(unsigned seed_counter);

#endif
