/*
 * anderson.c - Anderson's array-based queue lock, the fourth lock of the paper's
 * section 3.1.
 *
 * Design.  A free-running 64-bit ticket counter `next` and an array of
 * n = max_procs slots, each alone on its own 64-byte line.  lock() takes ticket t
 * with one fetch-and-add and waits on slot t % n only, so every waiter spins on a
 * line of its own; unlock() passes the lock to the next slot, touching only that
 * waiter's line.  FIFO, like the ticket lock, and it convoys the same way when
 * processes outnumber cores, hence the yielding spin (spin.h).
 *
 * Each slot holds the number of the ticket allowed to enter through it (where the
 * paper's version holds a has-lock / must-wait flag): the holder of ticket t
 * stores t + 1 into slot (t + 1) % n, and the waiter with ticket t enters when its
 * slot reads t.  Initially every slot reads 0, which admits ticket 0 through slot
 * 0 and no ticket through any other slot.  Nobody resets a slot, so a slot never
 * holds a stale "go"; and when more than n processes contend at once, tickets t
 * and t + n share slot t % n and still enter in order.  max_procs should be at
 * least the number of processes that may contend at once: that is a condition for
 * performance (one line per waiter), not for mutual exclusion.  Between lock and
 * unlock the holder's slot index is kept in ctx->slot; the ticket itself need not
 * be, since the holder's own slot still holds it.  A 64-bit counter does not wrap
 * in practice (584 years at 10^9 acquisitions per second); slot t % n would jump
 * at the wrap unless n were a power of two.
 *
 * Memory ordering.  unlock's AO_store_release of t + 1 into the next slot pairs
 * with the waiter's AO_load_acquire of that slot (lock) or with trylock's
 * AO_load_acquire; that orders one critical section before the next.  The ticket
 * fetch-and-add and trylock's CAS only reserve a place in line and are unordered.
 * max_procs is written once by init, before the lock is shared, and then only
 * read.  locked() is a relaxed snapshot.
 */
#include <atomic_ops.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "anderson.h"
#include "spin.h"

#if !defined(AO_HAVE_fetch_and_add1) || !defined(AO_HAVE_compare_and_swap)
#error "anderson lock needs a native AO_fetch_and_add1 and AO_compare_and_swap"
#endif
#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "anderson lock needs AO_load_acquire and AO_store_release"
#endif

#define ANDERSON_LINE 64

struct anderson_slot {
    _Alignas(ANDERSON_LINE) AO_t turn; /* the ticket this slot admits next */
};

struct anderson_lock {
    _Alignas(LOCK_ALIGN) uint64_t nslots; /* max_procs; read-only after init */
    _Alignas(ANDERSON_LINE) AO_t next;    /* next ticket; the line waiters FAA */
    struct anderson_slot slot[];          /* nslots of them */
};

_Static_assert(sizeof(struct anderson_slot) == ANDERSON_LINE, "one line per slot");
_Static_assert(offsetof(struct anderson_lock, slot) == LOCK_ALIGN, "slots follow a block");

/* Shared state for max_procs slots (0 is treated as 1), a multiple of LOCK_ALIGN. */
size_t anderson_lock_size(unsigned max_procs)
{
    size_t n = max_procs ? max_procs : 1;
    size_t bytes = sizeof(struct anderson_lock) + n * sizeof(struct anderson_slot);

    return (bytes + LOCK_ALIGN - 1) / LOCK_ALIGN * LOCK_ALIGN;
}

/* By one process, before any other uses the lock.  Returns 0, or -EINVAL when
 * max_procs is 0. */
int anderson_lock_init(void *l, unsigned max_procs)
{
    struct anderson_lock *a = l;

    if (max_procs == 0)
        return -EINVAL;
    memset(a, 0, anderson_lock_size(max_procs));
    a->nslots = max_procs;
    return 0;
}

/* Any process; returns holding the lock, with acquire ordering.  FIFO. */
void anderson_lock_lock(void *l, struct lock_ctx *c)
{
    struct anderson_lock *a = l;
    struct spin s = SPIN_INIT;
    AO_t mine = AO_fetch_and_add1(&a->next);
    unsigned i = (unsigned)(mine % a->nslots);

    while (AO_load_acquire(&a->slot[i].turn) != mine)
        spin_wait(&s);
    c->slot = i;
}

/* Any process; one attempt.  Takes ticket t = next only if its slot already admits
 * it, so it never queues: slot t % n reads t only once ticket t - 1 has been
 * released, and the CAS succeeds only if nobody has taken ticket t meanwhile.
 * Returns 1 holding the lock (acquire), 0 if busy. */
int anderson_lock_trylock(void *l, struct lock_ctx *c)
{
    struct anderson_lock *a = l;
    AO_t t = AO_load(&a->next);
    unsigned i = (unsigned)(t % a->nslots);

    if (AO_load_acquire(&a->slot[i].turn) != t)
        return 0;
    if (!AO_compare_and_swap(&a->next, t, t + 1))
        return 0;
    c->slot = i;
    return 1;
}

/* By the holder only, with the ctx its lock or trylock filled; release ordering.
 * The holder's slot still holds its ticket: only the holder of the ticket before
 * the slot's next one could overwrite it, and that ticket comes after ours. */
void anderson_lock_unlock(void *l, struct lock_ctx *c)
{
    struct anderson_lock *a = l;
    AO_t mine = AO_load(&a->slot[c->slot].turn);
    unsigned i = (unsigned)((c->slot + 1u) % a->nslots);

    AO_store_release(&a->slot[i].turn, mine + 1);
}

/* Any process; a relaxed snapshot: 1 if some process held the lock just now. */
int anderson_lock_locked(void *l)
{
    struct anderson_lock *a = l;
    AO_t t = AO_load(&a->next);

    return AO_load(&a->slot[t % a->nslots].turn) != t;
}

const struct lock_ops anderson_lock_ops = {
    .name = "anderson",
    .size = anderson_lock_size,
    .init = anderson_lock_init,
    .lock = anderson_lock_lock,
    .trylock = anderson_lock_trylock,
    .unlock = anderson_lock_unlock,
    .locked = anderson_lock_locked,
};
