/*
 * am_harness.h - the shmam side of the harness (harness.h is the plain one):
 * starting a benchmark's job, failing on a runtime error, the spin policy,
 * one wait step, polls that fail on a stall, and the bad-packet count.
 *
 * The spin policy is part of the instrument: how a waiter spins moves the
 * round trip it measures (bench/README.md, the ladder).  A waiter pauses
 * (one pause instruction per look: spin_cpu_relax) and gives its CPU away
 * after `yield_after` empty looks: at once when it may share one CPU with
 * the process it waits for (it would burn that process's timeslice), after
 * 2^14 when both are pinned to CPUs of their own, else after 256.
 */
#ifndef SHMAM_BENCH_AM_HARNESS_H
#define SHMAM_BENCH_AM_HARNESS_H

#include <sched.h>
#include <stdint.h>

#include "shmam.h"
#include "spin.h"
#include "common/am_algs.h"
#include "common/harness.h"

/* am_init for benchmark `prog` (failures are named for it and its rank);
 * the job's endpoint. */
am_ep_t *bm_am_init(const char *prog, int *argc, char ***argv);

/* Fails with what, and the runtime's text for err if err != 0. */
__attribute__((noreturn)) void bm_die(const char *what, int err);

/* Fails (bm_die) if rc < 0. */
static inline void bm_check(int rc, const char *what)
{
    if (rc < 0)
        bm_die(what, rc);
}

/* am_poll, failing on an error. */
static inline int bm_poll(am_ep_t *e)
{
    int n = am_poll(e);
    bm_check(n, "am_poll");
    return n;
}

/* The policy for a waiter on CPU a and its partner on CPU b (-1: not
 * pinned to one), the same on both sides. */
unsigned bm_yield_after(int cpu_a, int cpu_b);

/* Are a and b pinned to two distinct CPUs (the rows' `pinned`)? */
static inline int bm_pinned_apart(int cpu_a, int cpu_b)
{
    return cpu_a >= 0 && cpu_b >= 0 && cpu_a != cpu_b;
}

/* One empty look of a wait: pause, and every yield_after of them give the
 * CPU away.  1 if it yielded. */
static inline int bm_relax(unsigned *spins, unsigned yield_after)
{
    if (++*spins >= yield_after) {
        *spins = 0;
        sched_yield();
        return 1;
    }
    spin_cpu_relax();
    return 0;
}

/* A wait that fails when nothing moves for BM_STALL_NS: a lost message, not
 * a busy machine.  The clock is read only when the wait yields. */
#define BM_STALL_NS 60000000000LL
struct bm_wait {
    unsigned yield_after, spins;
    int64_t since; /* the first yield since the wait last moved; 0: none */
    const char *what;
};
#define BM_WAIT(yield_after, what)                                                         \
    (struct bm_wait)                                                                       \
    {                                                                                      \
        (yield_after), 0, 0, (what)                                                        \
    }

/* Fails with "STALL: ..." if w has stalled since its first yield. */
void bm_wait_stalled(struct bm_wait *w);

/* One empty look of wait w. */
static inline void bm_wait_step(struct bm_wait *w)
{
    if (bm_relax(&w->spins, w->yield_after))
        bm_wait_stalled(w);
}

/* The wait moved: its stall clock starts again. */
static inline void bm_wait_moved(struct bm_wait *w)
{
    w->spins = 0, w->since = 0;
}

/* One poll of e as a step of wait w; the poll's count. */
static inline int bm_wait_poll(struct bm_wait *w, am_ep_t *e)
{
    int n = bm_poll(e);
    if (n == 0)
        bm_wait_step(w);
    else
        bm_wait_moved(w);
    return n;
}

/* Polls e until *count (raised by handlers) reaches want. */
void bm_await(am_ep_t *e, unsigned yield_after, const unsigned long *count,
              unsigned long want, const char *what);

/* Collective over a job of two (job: its endpoint): the raw segment
 * "/shmam-JOB.<what>" of len bytes, zeroed, created by rank 0 and opened by
 * rank 1 between barriers, and unlinked by rank 0 once both have it mapped,
 * so that its name never outlives this call.  Its mapping (len bytes). */
void *bm_raw_segment(am_ep_t *job, const char *what, size_t len);

/* The largest long message of a run of sizes[0..n-1]: SHMAM_LONG_MAX if
 * set, else the largest size (at least the runtime's 1 MiB), which is then
 * put into the environment for am_init. */
size_t bm_long_max(const size_t *sizes, int n);

/* Corrupt packets dropped by the endpoints of a (and by job, if not NULL). */
unsigned long bm_bad_packets(const am_ep_t *job, const struct bm_algs *a);

#endif
