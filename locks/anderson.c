/*
 * anderson.c - Anderson's array-based queue lock, the fourth lock of the paper's
 * section 3.1, whose tickets name their takers so that the turn of a dead
 * process can be passed on.
 *
 * Design.  A ticket word `next` (the next ticket packed with the taker of the
 * ticket before it, taker.h) and an array of n slots, each alone on its own
 * 64-byte line, n being max_procs rounded up to a power of two so that slot
 * t & (n - 1) stays consistent across the wrap of the 40-bit tickets.  lock()
 * takes ticket t (taker.h: record the previous ticket's taker, then
 * compare-and-swap `next`) and waits on slot t & (n - 1) only, so every waiter
 * spins on a line of its own; unlock() passes the lock to the next slot,
 * touching only that waiter's line.  FIFO, like the ticket lock, and it convoys
 * the same way when processes outnumber cores, hence the yielding spin (wait.h).
 * The records of who took which ticket (n of them, taker.h) follow the slots,
 * eight to a line, away from the lines waiters spin on.
 *
 * Each slot holds the number of the ticket allowed to enter through it (where the
 * paper's version holds a has-lock / must-wait flag): the holder of ticket t
 * stores t + 1 into slot (t + 1) & (n - 1), and the waiter with ticket t enters
 * when its slot reads t.  Initially every slot reads 0, which admits ticket 0
 * through slot 0 and no ticket through any other slot.  Nobody resets a slot, so a slot's
 * turn only grows (modulo 2^40) and never holds a stale "go".  A ticket is
 * handed out only while fewer than n are outstanding (taker.h, room: ticket t
 * waits until slot t - n + 1 admits t - n + 1), so a process beyond the n-th
 * waits before taking one; max_procs should be at least the number of
 * processes that may contend at once.  Between lock and unlock the holder's
 * ticket is kept in ctx->held (its slot holds it too, but a peer may write
 * the slot).
 *
 * Dead participants.  Invariant: slot t + 1 comes to admit t + 1 only by the live
 * holder of t (unlock) or, once t is admitted and t's taker is dead or gave up,
 * by a compare-and-swap from a waiter of the slot's older value to t + 1.  At
 * each watch tick a yielding waiter for ticket m (taken, or waiting for room to
 * take it) walks back from k = m - 1 while k's taker is dead and its slot does
 * not admit k yet (at most n steps; a live taker, or one it cannot identify,
 * stops the walk: it will pass on its own).  If the walk ends at an admitted
 * ticket k with a dead taker (it held the lock, or was admitted and never
 * came), the waiter passes the turns of k and of the dead tickets after it, one
 * slot at a time.  Several waiters may pass the same turn: the compare-and-swap
 * from an older value makes the passes idempotent, and a slot's turn never goes
 * back.  A waiter without a watch never passes a turn.  A waiter whose watch
 * gives up marks its ticket abandoned (taker.h) and passes its own turn if it
 * has been admitted; otherwise the waiters behind pass it once it is admitted.
 *
 * Garbage.  Ticket k - 1 was handed out only with room, so from then on some
 * slot admits k - n or a later ticket (turns only grow); and a live waiter's
 * slot never admits a ticket past its own.  A peer that writes `next` far
 * ahead of every slot, or a turn past a waiter's ticket, breaks that, and no
 * pass ever ends the wait (the tickets in between name nobody who could be
 * found dead).  So at each watch tick a waiter checks (impossible()) and
 * returns AM_LOCK_BROKEN, abandoning any ticket it took.
 *
 * Memory ordering.  unlock's AO_store_release of t + 1 into the next slot pairs
 * with the waiter's AO_load_acquire of that slot (lock) or with trylock's
 * AO_load_acquire; that orders one critical section before the next.  A pass
 * is a full compare-and-swap that pairs with the same acquire loads: the next
 * holder sees what the passer saw (every critical section up to the dead
 * ticket's), and nothing the dead holder wrote.  The ticket compare-and-swap
 * and the acquire loads of `next` before a look-up are for the records
 * (taker.h), not for the lock.  nslots is written once by init, before the lock
 * is shared; every index is masked with the count the caller gives in
 * ctx->procs (its own record of max_procs), so a peer that rewrites nslots
 * cannot move an index outside the lock; nslots is only a fallback for callers
 * without a record, and never a divisor.  locked() is a relaxed snapshot.
 */
#include <atomic_ops.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lock.h"
#include "taker.h"
#include "wait.h"
#include "watch.h"

#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "anderson lock needs AO_load_acquire and AO_store_release"
#endif

#define ANDERSON_LINE 64

struct anderson_slot {
    _Alignas(ANDERSON_LINE) AO_t turn; /* the ticket this slot admits next */
};

struct anderson_lock {
    _Alignas(AM_LOCK_ALIGN) uint64_t nslots; /* a power of two; read-only after init */
    _Alignas(ANDERSON_LINE) AO_t next; /* (next ticket, taker of the one before + 1) */
    struct anderson_slot slot[];       /* nslots of them, then nslots records */
};

_Static_assert(sizeof(struct anderson_slot) == ANDERSON_LINE, "one line per slot");
_Static_assert(offsetof(struct anderson_lock, slot) == AM_LOCK_ALIGN,
               "slots follow a block");

/* Shared state for max_procs slots (0 is treated as 1), a multiple of AM_LOCK_ALIGN. */
static size_t anderson_lock_size(unsigned max_procs)
{
    size_t n = taker_count(max_procs);
    size_t bytes = sizeof(struct anderson_lock) + n * sizeof(struct anderson_slot);

    bytes += n * sizeof(AO_t);
    return (bytes + AM_LOCK_ALIGN - 1) / AM_LOCK_ALIGN * AM_LOCK_ALIGN;
}

/* The slots' mask: from the caller's own max_procs when it gives one (c may be
 * NULL: init, locked()), so that no index into the lock ever comes from shared
 * memory. */
static AO_t mask_of(const struct anderson_lock *a, const struct am_lock_ctx *c)
{
    return c && c->procs ? taker_count(c->procs) - 1 : a->nslots - 1;
}

/* The records of who took which ticket, after the slots. */
static AO_t *who_of(struct anderson_lock *a, const struct am_lock_ctx *c)
{
    return (AO_t *)(void *)&a->slot[mask_of(a, c) + 1];
}

/* By one process, before any other uses the lock.  Returns 0, or -EINVAL when
 * max_procs is 0. */
static int anderson_lock_init(void *l, unsigned max_procs)
{
    struct anderson_lock *a = l;

    if (max_procs == 0)
        return -EINVAL;
    memset(a, 0, anderson_lock_size(max_procs));
    a->nslots = taker_count(max_procs);
    taker_init(who_of(a, NULL), mask_of(a, NULL));
    return 0;
}

/* 1 if ticket k may be taken: ticket k - n is over, slot k - n + 1 admits
 * k - n + 1 or a later ticket (taker.h, room). */
static int room_for(struct anderson_lock *a, AO_t k, AO_t mask)
{
    AO_t after = tk_sub(tk_add(k, 1), mask + 1);

    return !tk_older(AO_load(&a->slot[after & mask].turn), after);
}

/* Any process: slot k + 1 admits k + 1 unless it does already.  Only for an
 * admitted ticket k that its taker will never release.  Full barrier. */
static void pass(struct anderson_lock *a, AO_t k, AO_t mask)
{
    AO_t k1 = tk_add(k, 1);
    volatile AO_t *turn = &a->slot[k1 & mask].turn;
    AO_t old = AO_load(turn);

    if (tk_older(old, k1))
        AO_compare_and_swap_full(turn, old, k1);
}

/* By a waiter with a watch and ticket `mine` (or waiting for room to take
 * ticket mine): the admitted ticket k before mine whose taker and whose
 * successors' takers up to mine are all dead, or mine if there is none (some
 * taker on the way lives, or is unknown). */
static AO_t dead_admitted(struct anderson_lock *a, AO_t mine, const struct am_lock_ctx *c)
{
    AO_t mask = mask_of(a, c), nx = AO_load_acquire(&a->next), k = mine;

    for (AO_t step = 0; step <= mask; step++) {
        k = tk_sub(k, 1);
        if (!taker_dead(who_of(a, c), mask, nx, k, c))
            return mine;
        if (AO_load(&a->slot[k & mask].turn) == k)
            return k;
    }
    return mine;
}

/* 1 if the lock is in a state no run of it reaches (see the file header), as
 * a waiter finds it: with ticket mine taken (`taken`), its slot admitting a
 * later ticket; waiting for room to take ticket mine, read from `next` with
 * acquire before this (which pairs with the full CAS that stored it, after
 * its taker's room check), no slot admitting mine - n or later. */
static int impossible(struct anderson_lock *a, AO_t mine, int taken, AO_t mask)
{
    if (taken)
        return tk_older(mine, AO_load(&a->slot[mine & mask].turn));
    for (AO_t i = 0; i <= mask; i++)
        if (!tk_older(AO_load(&a->slot[i].turn), tk_sub(mine, mask + 1)))
            return 0;
    return 1;
}

/* At a watch tick of a waiter for ticket mine (taken, or to be taken once
 * there is room): AM_LOCK_BROKEN if the lock is garbage; else passes on the
 * turns of the dead tickets right before it, starting with an admitted one,
 * then AM_LOCK_GAVE_UP if the watch says give up, or 0 to wait on. */
static int tick(struct anderson_lock *a, AO_t mine, int taken, const struct am_lock_ctx *c)
{
    if (impossible(a, mine, taken, mask_of(a, c)))
        return AM_LOCK_BROKEN;
    for (AO_t k = dead_admitted(a, mine, c); k != mine; k = tk_add(k, 1))
        pass(a, k, mask_of(a, c));
    return watch_give_up(c) ? AM_LOCK_GAVE_UP : 0;
}

/* Takes a ticket for c into *mine (full barrier) once there is room for it.
 * Returns 0, or tick()'s AM_LOCK_GAVE_UP or AM_LOCK_BROKEN, holding no
 * ticket. */
static int take(struct anderson_lock *a, const struct am_lock_ctx *c, AO_t *mine)
{
    struct wait w = wait_start(c);
    int rc;

    for (;;) {
        AO_t nx = AO_load_acquire(&a->next), k = tk_ticket(nx);

        if (room_for(a, k, mask_of(a, c)) &&
            taker_claim(&a->next, who_of(a, c), mask_of(a, c), c->self, nx)) {
            *mine = k;
            return 0;
        }
        if (wait_round(&w, c) && (rc = tick(a, k, 0, c)) != 0)
            return rc;
    }
}

/* By the taker of ticket `mine` that stops waiting (tick()'s result rc):
 * abandons the ticket, and passes its turn if it came meanwhile.  Returns
 * rc. */
static int give_up(struct anderson_lock *a, const struct am_lock_ctx *c, AO_t mine, int rc)
{
    AO_t mask = mask_of(a, c);

    taker_abandon(who_of(a, c), mask, mine);
    if (AO_load(&a->slot[mine & mask].turn) == mine)
        pass(a, mine, mask);
    return rc;
}

/* Any process.  Returns 0 holding the lock (acquire), FIFO; AM_LOCK_GAVE_UP
 * without it if the watch said so, AM_LOCK_BROKEN if the lock is garbage.
 * Passes dead participants' turns on. */
static int anderson_lock_lock(void *l, struct am_lock_ctx *c)
{
    struct anderson_lock *a = l;
    struct wait w = wait_start(c);
    unsigned i;
    AO_t mine;
    int rc;

    if ((rc = take(a, c, &mine)) != 0)
        return rc;
    i = (unsigned)(mine & mask_of(a, c));
    while (AO_load_acquire(&a->slot[i].turn) != mine)
        if (wait_round(&w, c) && (rc = tick(a, mine, 1, c)) != 0)
            return give_up(a, c, mine, rc);
    c->held = mine;
    return 0;
}

/* Any process; one attempt.  Takes ticket t = next only if its slot already admits
 * it, so it never queues: slot t admits t only once ticket t - 1 has been
 * released or passed, and the compare-and-swap succeeds only if nobody has taken
 * ticket t meanwhile.  Returns 1 holding the lock (acquire), 0 if busy. */
static int anderson_lock_trylock(void *l, struct am_lock_ctx *c)
{
    struct anderson_lock *a = l;
    AO_t nx = AO_load(&a->next), t = tk_ticket(nx);
    unsigned i = (unsigned)(t & mask_of(a, c));

    if (AO_load_acquire(&a->slot[i].turn) != t)
        return 0;
    if (!taker_claim(&a->next, who_of(a, c), mask_of(a, c), c->self, nx))
        return 0;
    c->held = t;
    return 1;
}

/* By the holder only, with the ctx its lock or trylock filled; release
 * ordering.  The ticket comes from the ctx, not from the holder's slot: a
 * peer's write there must not pass a wrong turn on. */
static void anderson_lock_unlock(void *l, struct am_lock_ctx *c)
{
    struct anderson_lock *a = l;
    AO_t next = tk_add((AO_t)c->held, 1);

    AO_store_release(&a->slot[next & mask_of(a, c)].turn, next);
}

/* Any process; a relaxed snapshot: 1 if some process held the lock (or a dead
 * or abandoned ticket was admitted) just now.  A diagnostic: it trusts the
 * shared slot count. */
static int anderson_lock_locked(void *l)
{
    struct anderson_lock *a = l;
    AO_t t = tk_ticket(AO_load(&a->next));

    return AO_load(&a->slot[t & mask_of(a, NULL)].turn) != t;
}

const struct am_lock_ops am_lock_anderson = {
    .name = "anderson",
    .size = anderson_lock_size,
    .init = anderson_lock_init,
    .lock = anderson_lock_lock,
    .trylock = anderson_lock_trylock,
    .unlock = anderson_lock_unlock,
    .locked = anderson_lock_locked,
};
