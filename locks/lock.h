/*
 * lock.h - the verbs every process-shared lock in locks/ provides, and the table
 * of operations that lets the runtime, tests and benchmarks loop over all of them.
 *
 * A lock lives in memory shared between processes (a segment mapped at a different
 * address in each of them), so its state holds no pointers: participants are named
 * by a small index `self` (0 .. max_procs-1) chosen by the caller, unique among the
 * processes that may contend for this lock at once.  No lock here needs it yet
 * (the Anderson lock derives its slot from a ticket and keeps it in `slot`); it is
 * there for queue locks that name a node per participant (MCS, CLH).  max_procs
 * sizes the Anderson lock's array of slots and is ignored by the others.
 *
 * The state starts at a LOCK_ALIGN-aligned address (the caller's duty), and its
 * size is a multiple of LOCK_ALIGN, so nothing placed after it shares its lines.
 * The lock must be initialised once, by one process, before any other uses it.
 *
 * Every lock gives acquire ordering on lock/trylock success and release ordering
 * on unlock: stores made inside the critical section are visible to the next holder.
 * Every spin falls back to sched_yield() once spinning has clearly failed (see
 * spin.h), so that more processes than cores still make progress.
 *
 * Verbs (the same for each algorithm ALG in tas, ttas, ticket, anderson, mutex):
 *   size_t ALG_lock_size(unsigned max_procs)          bytes of shared state
 *   int    ALG_lock_init(void *l, unsigned max_procs)  0 or -errno; by one process
 *   void   ALG_lock_lock(void *l, struct lock_ctx *c)
 *   int    ALG_lock_trylock(void *l, struct lock_ctx *c)  1 acquired, 0 busy
 *   void   ALG_lock_unlock(void *l, struct lock_ctx *c)
 *   int    ALG_lock_locked(void *l)                    1 if held now (a snapshot)
 */
#ifndef SHMAM_LOCK_H
#define SHMAM_LOCK_H

#include <stddef.h>

/* Per-acquisition context, private to the calling process. */
struct lock_ctx {
    unsigned self; /* participant index, < max_procs given at init */
    unsigned slot; /* algorithm's private note between lock and unlock (Anderson) */
};

struct lock_ops {
    const char *name;
    size_t (*size)(unsigned max_procs);
    int (*init)(void *l, unsigned max_procs);
    void (*lock)(void *l, struct lock_ctx *c);
    int (*trylock)(void *l, struct lock_ctx *c);
    void (*unlock)(void *l, struct lock_ctx *c);
    int (*locked)(void *l);
};

/* Every lock shmam knows, in a fixed order; NULL-terminated. */
extern const struct lock_ops *const lock_table[];

/* The lock named `name`, or NULL. */
const struct lock_ops *lock_find(const char *name);

/* Alignment every lock's shared state must be placed at (one destructive line pair). */
#define LOCK_ALIGN 128

#endif
