/*
 * ticket.c - ticket lock (Mellor-Crummey and Scott), the third lock of the
 * paper's section 3.1, whose tickets name their takers so that the turn of a
 * dead process can be passed on.
 *
 * Design.  Two counters on one cache line: `next`, the next ticket to hand out
 * packed with the taker of the ticket before it, and `owner`, the ticket now
 * served.  lock() takes a ticket (taker.h: record the previous ticket's taker,
 * then compare-and-swap `next`; the paper's plain fetch-and-add could not say
 * who took a ticket) and waits until `owner` shows it; unlock() advances
 * `owner`.  Service is strictly FIFO.  The lock is free exactly when
 * ticket(next) == owner.  Tickets count modulo 2^40 and are only compared for
 * equality here.  The records of who took which ticket (taker.h) follow in the
 * next block: n of them, n being max_procs rounded up to a power of two; a
 * ticket is handed out only while fewer than n are outstanding (taker.h, room),
 * so a process beyond the n-th waits before taking one.
 *
 * FIFO hand-off convoys when processes outnumber cores: the next ticket may belong
 * to a descheduled process, and everybody behind it waits for the scheduler.  The
 * spin therefore yields (spin.h) once spinning has clearly failed, under the
 * default policy; under AM_LOCK_WAIT_PARK a waiter sleeps on `owner` instead,
 * and whoever moves owner (unlock, a pass, a give-up) wakes the sleepers
 * (wait.h).
 *
 * Dead participants.  Invariant: owner moves from k to k + 1 only by the live
 * holder of ticket k (unlock), or, once k's taker is dead or gave up, by a
 * compare-and-swap of k to k + 1 from a waiter (a live holder is never called
 * dead, so the two never race).  At each watch tick a yielding waiter, with a
 * ticket or waiting for room, looks up the taker of ticket `owner` (taker.h)
 * and, while the watch calls it dead, passes the turn on.  This covers a holder
 * killed in its critical section, a waiter killed before its turn, and a
 * process killed between taking its ticket and anyone recording it.  Several
 * waiters may try the same pass: the compare-and-swap lets one through.  A
 * waiter without a watch never passes a turn.  A waiter whose watch gives up
 * marks its ticket abandoned (taker.h) and passes its own turn if it has come
 * already; otherwise the waiters behind pass it when it comes.
 *
 * Garbage.  Every ticket is handed out with room, so ticket(next) is never
 * more than n ahead of owner, and owner passes only tickets taken, so never
 * ticket(next); nor does owner pass a live waiter's ticket.  A peer that
 * writes either word can break that, and then no pass ever ends the wait (a
 * ticket far ahead of owner names nobody who could be found dead).  So at
 * each watch tick a waiter checks, reading the two words in the order under
 * which a legal state always reads legal (impossible()), and returns
 * AM_LOCK_BROKEN, abandoning any ticket it took, when they say what no run
 * of the lock can.
 *
 * Memory ordering.  The holder's AO_store_release of owner + 1 (unlock) pairs
 * with the AO_load_acquire of owner by the next ticket's waiter (lock) or by
 * trylock; that is what orders one critical section before the next.  A pass
 * is a full compare-and-swap: it pairs with the same acquire loads, so the next
 * holder sees what the passer saw (every critical section up to the dead
 * ticket's), and nothing the dead holder wrote.  The compare-and-swap that takes
 * a ticket, and the acquire loads of `next` before a look-up, are for the
 * records (taker.h), not for the lock.  Indices into the records are masked with
 * the count the caller gives in ctx->procs, never with the shared `mask` (a
 * fallback for callers without a record).  mask is written once by init, before the
 * lock is shared, and then only read.  locked() is a relaxed snapshot.
 */
#include <atomic_ops.h>
#include <string.h>

#include "lock.h"
#include "taker.h"
#include "wait.h"
#include "watch.h"

#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "ticket lock needs AO_load_acquire and AO_store_release"
#endif

struct ticket_lock {
    _Alignas(AM_LOCK_ALIGN) AO_t next;  /* (next ticket, taker of the one before + 1) */
    AO_t owner;                         /* ticket now holding or next to hold the lock */
    AO_t mask;                          /* records - 1; read-only after init */
    AO_t sleepers;                      /* waiters parked on owner (wait.h) */
    _Alignas(AM_LOCK_ALIGN) AO_t who[]; /* mask + 1 records (taker.h) */
};

_Static_assert(offsetof(struct ticket_lock, who) == AM_LOCK_ALIGN,
               "records follow a block");
_Static_assert(offsetof(struct ticket_lock, owner) < 64, "both counters on one line");

/* Shared state for max_procs participants (0 is treated as 1), a multiple of
 * AM_LOCK_ALIGN. */
static size_t ticket_lock_size(unsigned max_procs)
{
    size_t bytes = sizeof(struct ticket_lock) + taker_count(max_procs) * sizeof(AO_t);

    return (bytes + AM_LOCK_ALIGN - 1) / AM_LOCK_ALIGN * AM_LOCK_ALIGN;
}

/* By one process, before any other uses the lock.  Always returns 0. */
static int ticket_lock_init(void *l, unsigned max_procs)
{
    struct ticket_lock *t = l;

    memset(t, 0, ticket_lock_size(max_procs));
    t->mask = taker_count(max_procs) - 1;
    taker_init(t->who, t->mask);
    return 0;
}

/* The records' mask: from the caller's own max_procs when it gives one, so that
 * no index into the lock ever comes from shared memory. */
static AO_t mask_of(const struct ticket_lock *t, const struct am_lock_ctx *c)
{
    return c->procs ? taker_count(c->procs) - 1 : t->mask;
}

/* 1 if ticket k may be taken: ticket k - n is over (taker.h, room). */
static int room_for(struct ticket_lock *t, AO_t k, AO_t mask)
{
    return tk_sub(k, AO_load(&t->owner)) <= mask;
}

/* By a yielding waiter with a watch: while the ticket being served is known to
 * be dead or abandoned, moves owner past it (full barrier), unless someone did
 * already.  At most n tickets are outstanding, so at most n passes. */
static void pass_dead(struct ticket_lock *t, const struct am_lock_ctx *c)
{
    AO_t mask = mask_of(t, c);

    for (AO_t i = 0; i <= mask; i++) {
        AO_t k = AO_load_acquire(&t->owner), nx = AO_load_acquire(&t->next);

        if (!taker_dead(t->who, mask, nx, k, c))
            return;
        if (AO_compare_and_swap_full(&t->owner, k, tk_add(k, 1)))
            wait_wake(c, &t->owner, &t->sleepers);
    }
}

/* 1 if the counters say what no run of the lock can (see the file header):
 * owner more than n tickets behind ticket(next), read after next (owner only
 * grows, and was at least ticket(next) - n when that next was stored: the
 * acquire of next pairs with the full CAS that stored it, after its taker's
 * room check); owner ahead of ticket(next), read before next (the acquire of
 * owner pairs with the release or CAS that moved it, which came after the
 * ticket it passed was taken); or, for a waiter holding ticket *mine, owner
 * past it. */
static int impossible(struct ticket_lock *t, AO_t mask, const AO_t *mine)
{
    AO_t nx = tk_ticket(AO_load_acquire(&t->next)), owner = AO_load_acquire(&t->owner);
    return tk_older(owner, tk_sub(nx, mask + 1)) ||
           tk_older(tk_ticket(AO_load(&t->next)), owner) ||
           (mine && tk_older(*mine, owner));
}

/* At a waiter's watch tick (mine: its ticket, or NULL while it waits for room
 * to take one): AM_LOCK_BROKEN if the lock is garbage; else passes dead turns
 * on, then AM_LOCK_GAVE_UP if the watch says give up, or 0 to wait on. */
static int tick(struct ticket_lock *t, const struct am_lock_ctx *c, const AO_t *mine)
{
    if (impossible(t, mask_of(t, c), mine))
        return AM_LOCK_BROKEN;
    pass_dead(t, c);
    return watch_give_up(c) ? AM_LOCK_GAVE_UP : 0;
}

/* Takes a ticket for c into *mine (full barrier) once there is room for it.
 * Returns 0, or tick()'s AM_LOCK_GAVE_UP or AM_LOCK_BROKEN, holding no
 * ticket. */
static int take(struct ticket_lock *t, const struct am_lock_ctx *c, AO_t *mine)
{
    struct wait w = wait_start(c);
    int rc;

    for (;;) {
        AO_t nx = AO_load_acquire(&t->next);

        if (room_for(t, tk_ticket(nx), mask_of(t, c)) &&
            taker_claim(&t->next, t->who, mask_of(t, c), c->self, nx)) {
            *mine = tk_ticket(nx);
            return 0;
        }
        if (wait_round(&w, c) && (rc = tick(t, c, NULL)) != 0)
            return rc;
    }
}

/* By the taker of ticket `mine` that stops waiting (tick()'s result rc):
 * abandons the ticket, and passes its turn if it came meanwhile.  Returns
 * rc. */
static int give_up(struct ticket_lock *t, const struct am_lock_ctx *c, AO_t mine, int rc)
{
    taker_abandon(t->who, mask_of(t, c), mine);
    if (AO_compare_and_swap_full(&t->owner, mine, tk_add(mine, 1)))
        wait_wake(c, &t->owner, &t->sleepers);
    return rc;
}

/* Any process.  Returns 0 holding the lock (acquire), FIFO; AM_LOCK_GAVE_UP
 * without it if the watch said so, AM_LOCK_BROKEN if the lock is garbage.
 * Passes dead participants' turns on. */
static int ticket_lock_lock(void *l, struct am_lock_ctx *c)
{
    struct ticket_lock *t = l;
    struct wait w = wait_start(c);
    AO_t mine, seen;
    int rc;

    if ((rc = take(t, c, &mine)) != 0)
        return rc;
    while ((seen = AO_load_acquire(&t->owner)) != mine)
        if (wait_on(&w, c, &t->owner, seen, &t->sleepers) && (rc = tick(t, c, &mine)) != 0)
            return give_up(t, c, mine, rc);
    return 0;
}

/* Any process; one attempt.  Takes a ticket only if it would be served at once,
 * so it never queues.  Returns 1 holding the lock (acquire), 0 if busy. */
static int ticket_lock_trylock(void *l, struct am_lock_ctx *c)
{
    struct ticket_lock *t = l;
    AO_t served = AO_load_acquire(&t->owner), nx = AO_load(&t->next);

    if (tk_ticket(nx) != served)
        return 0;
    return taker_claim(&t->next, t->who, mask_of(t, c), c->self, nx);
}

/* By the holder only (nobody else writes owner meanwhile); release ordering.
 * Wakes parked waiters under AM_LOCK_WAIT_PARK. */
static void ticket_lock_unlock(void *l, struct am_lock_ctx *c)
{
    struct ticket_lock *t = l;

    AO_store_release(&t->owner, tk_add(AO_load(&t->owner), 1));
    wait_wake(c, &t->owner, &t->sleepers);
}

/* Any process; a relaxed snapshot: 1 if some process held the lock (or a dead
 * or abandoned ticket was being served) just now. */
static int ticket_lock_locked(void *l)
{
    struct ticket_lock *t = l;
    AO_t served = AO_load(&t->owner);

    return tk_ticket(AO_load(&t->next)) != served;
}

const struct am_lock_ops am_lock_ticket = {
    .name = "ticket",
    .size = ticket_lock_size,
    .init = ticket_lock_init,
    .lock = ticket_lock_lock,
    .trylock = ticket_lock_trylock,
    .unlock = ticket_lock_unlock,
    .locked = ticket_lock_locked,
    .parks = 1,
};
