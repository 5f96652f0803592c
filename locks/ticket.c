/*
 * ticket.c - ticket lock (Mellor-Crummey and Scott), the third lock of the
 * paper's section 3.1.
 *
 * Design.  Two free-running 64-bit counters: `next`, the next ticket to hand out,
 * and `owner`, the ticket now served.  lock() takes a ticket with one native
 * fetch-and-add (AO_fetch_and_add1, a `lock xadd` on x86, not a CAS loop: the
 * paper's CAS-built fetch-and-add could starve) and waits until `owner` shows it;
 * unlock() advances `owner`.  Service is strictly FIFO.  Both counters share one
 * cache line, the layout the paper measured.  The lock is free exactly when
 * next == owner; counters are only compared for equality, so wrap-around is
 * harmless (and a 64-bit counter does not wrap in practice).
 *
 * FIFO hand-off convoys when processes outnumber cores: the next ticket may belong
 * to a descheduled process, and everybody behind it waits for the scheduler.  The
 * spin therefore yields (spin.h) once spinning has clearly failed.
 *
 * Memory ordering.  The holder's AO_store_release of owner + 1 (unlock) pairs with
 * the AO_load_acquire of owner by the next ticket's waiter (lock) or by trylock;
 * that is what orders one critical section before the next.  Taking a ticket
 * needs no ordering of its own (it only reserves a place in line), so lock() uses
 * the unordered fetch-and-add, and trylock's CAS on `next` is unordered too: its
 * acquire is the owner load before it.  locked() is a relaxed snapshot.
 */
#include <atomic_ops.h>
#include <string.h>

#include "spin.h"
#include "ticket.h"

#if !defined(AO_HAVE_fetch_and_add1) || !defined(AO_HAVE_compare_and_swap)
#error "ticket lock needs a native AO_fetch_and_add1 and AO_compare_and_swap"
#endif
#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "ticket lock needs AO_load_acquire and AO_store_release"
#endif

struct ticket_lock {
    _Alignas(LOCK_ALIGN) AO_t next; /* next ticket to hand out */
    AO_t owner;                     /* ticket now holding or next to hold the lock */
};

_Static_assert(sizeof(struct ticket_lock) == LOCK_ALIGN, "ticket lock owns one block");
_Static_assert(offsetof(struct ticket_lock, owner) < 64, "both counters on one line");

size_t ticket_lock_size(unsigned max_procs)
{
    return sizeof(struct ticket_lock);
}

/* By one process, before any other uses the lock.  Always returns 0. */
int ticket_lock_init(void *l, unsigned max_procs)
{
    memset(l, 0, sizeof(struct ticket_lock));
    return 0;
}

/* Any process; returns holding the lock, with acquire ordering.  FIFO. */
void ticket_lock_lock(void *l, struct lock_ctx *c)
{
    struct ticket_lock *t = l;
    struct spin s = SPIN_INIT;
    AO_t mine = AO_fetch_and_add1(&t->next);

    while (AO_load_acquire(&t->owner) != mine)
        spin_wait(&s);
}

/* Any process; one attempt.  Takes a ticket only if it would be served at once,
 * so it never queues.  Returns 1 holding the lock (acquire), 0 if busy. */
int ticket_lock_trylock(void *l, struct lock_ctx *c)
{
    struct ticket_lock *t = l;
    AO_t served = AO_load_acquire(&t->owner);

    return AO_compare_and_swap(&t->next, served, served + 1);
}

/* By the holder only (nobody else writes owner meanwhile); release ordering. */
void ticket_lock_unlock(void *l, struct lock_ctx *c)
{
    struct ticket_lock *t = l;

    AO_store_release(&t->owner, AO_load(&t->owner) + 1);
}

/* Any process; a relaxed snapshot: 1 if some process held the lock just now.
 * owner is read first, so owner <= next holds between the two reads. */
int ticket_lock_locked(void *l)
{
    struct ticket_lock *t = l;
    AO_t served = AO_load(&t->owner);

    return AO_load(&t->next) != served;
}

const struct lock_ops ticket_lock_ops = {
    .name = "ticket",
    .size = ticket_lock_size,
    .init = ticket_lock_init,
    .lock = ticket_lock_lock,
    .trylock = ticket_lock_trylock,
    .unlock = ticket_lock_unlock,
    .locked = ticket_lock_locked,
};
