/*
 * hapax.c - the Hapax lock (Dice and Kogan, 2025: "Hapax Locks: Scalable
 * Value-Based Mutual Exclusion") across processes, passing the turns of
 * participants that died or gave up.
 *
 * Design.  Hapax names every acquisition by a value used once (a hapax),
 * not by a node.  lock() swaps its value into the lock's arrival word and
 * gets its predecessor's; the lock is its once the departure word shows the
 * predecessor's value, and unlock() stores its own value there.  So that
 * waiters do not all spin on the departure word, a waiter posts the value it
 * waits for into a slot of a table of visible waiters chosen by that value,
 * and spins on the slot; the holder, having stored its departure, looks at
 * the slot its own value chooses and, if a waiter posted that value there,
 * changes it.  The slot only wakes: the departure word decides.  Constant
 * space per lock, FIFO, nothing per thread that other threads touch.
 *
 * Across processes (qnode.h has the queue and the passes): the hapax is
 * the ticket (unique modulo 2^40), the arrival word is `next`, whose
 * compare-and-swap names the predecessor and its ticket, the departure word
 * is the lock's `depart`, and the table is the lock's own nodes: ticket k's
 * waiter posts k - 1 in the `ack` of node (k - 1) mod n.  Two live waiters
 * never share a slot: tickets k and k + n are outstanding at once only once
 * k was admitted (qnode.h, room).  A holder that dies between its departure
 * and the slot's change costs its successor nothing: a waiter whose spinning
 * failed reads `depart` at every round, with or without a watch.
 *
 * Why Hapax and not the reciprocating lock of the same authors (2025): that
 * lock admits the arrivals in segments, detached by the holder, last come
 * first within one, so a waiter's turn hangs on who arrived after it and
 * nothing names its predecessor; qnode.h's passes walk back over tickets to
 * the one released, which Hapax's FIFO order by ticket has and segments do
 * not.
 *
 * lock() takes ticket k (qnode_take) behind k - 1: the lock is free if its
 * taker is TAKER_RELEASED (ticket 0) or depart reached k - 1; else it posts
 * k - 1 in the slot and waits.  unlock() by the holder of k stores k into
 * depart, then changes its slot from k to k + 1 if a waiter posted k there.
 * A waiter that gives up marks its ticket gone and, if depart reached k - 1
 * meanwhile, departs itself (growing depart: a walker may have passed it).
 *
 * Memory ordering.  The holder's AO_store_release of depart pairs with the
 * waiter's AO_load_acquire of it (departed); a waiter's post and a holder's
 * departure are each followed by a full barrier before the other word is
 * read (Dekker: either the waiter sees the departure, or the holder sees the
 * post); the full compare-and-swap of the slot pairs with the waiter's
 * acquire load of it, so the departure it follows is visible too.  Passes as
 * in qnode.h.  locked() is a relaxed snapshot.
 */
#include <atomic_ops.h>

#include "lock.h"
#include "qnode.h"

static size_t hapax_lock_size(unsigned max_procs)
{
    return qnode_size(max_procs);
}

/* By one process, before any other uses the lock.  Always returns 0. */
static int hapax_lock_init(void *l, unsigned max_procs)
{
    return qnode_init(l, max_procs);
}

/* Any process: 1 if ticket k has departed (acquire: pairs with depart's
 * release-store in unlock, or a grow). */
static int departed(struct qnode_lock *q, AO_t k)
{
    return !tk_older(AO_load_acquire(&q->depart), k);
}

/* The slot where ticket k + 1's waiter posts k. */
static struct qnode *slot_of(struct qnode_lock *q, AO_t mask, AO_t k)
{
    return &q->node[k & mask];
}

/* By the waiter for ticket k + 1: posts k in its slot, then (full barrier,
 * pairs with tell's) returns 1 if k departed meanwhile. */
static int post(struct qnode_lock *q, struct qnode *s, AO_t k)
{
    AO_store(&s->ack, k);
    AO_nop_full();
    return departed(q, k);
}

/* By whoever just departed k (release), with its ctx c: after a full barrier
 * (pairs with post's), wakes k + 1's waiter if it posted k. */
static void tell(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mask, AO_t k)
{
    struct qnode *s = slot_of(q, mask, k);

    AO_nop_full();
    if (AO_load(&s->ack) == k && AO_compare_and_swap_full(&s->ack, k, tk_add(k, 1)))
        wait_wake(c, &s->ack, &s->sleepers);
}

/* By the waiter for ticket mine, behind a live predecessor: waits until
 * mine - 1 departed.  Returns 0 once it has (or a tick found every ticket
 * before mine passable), or qnode_tick's AM_LOCK_GAVE_UP or AM_LOCK_BROKEN. */
static int await_turn(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mask,
                      AO_t mine)
{
    AO_t k = tk_sub(mine, 1);
    struct qnode *s = slot_of(q, mask, k);
    struct wait w = wait_start(c);
    int due, rc;

    if (post(q, s, k))
        return 0;
    for (;;) {
        AO_t seen = AO_load_acquire(&s->ack); /* pairs with tell's CAS */

        if (seen != k || wait_failed(&w)) {
            if (departed(q, k))
                return 0;
            if (seen != k && post(q, s, k)) /* someone else's post, or garbage */
                return 0;
        }
        due = seen != k ? wait_round(&w, c) : wait_on(&w, c, &s->ack, seen, &s->sleepers);
        if (due && (rc = qnode_tick(q, c, mine, 1, QNODE_HAPAX)) != 0)
            return rc == QNODE_PASS ? 0 : rc;
    }
}

/* By a waiter for ticket mine that stops waiting with rc: marks mine gone
 * and, if mine - 1 departed meanwhile, departs mine.  Returns rc. */
static int give_up(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mine, int rc)
{
    AO_t mask = qnode_mask(q, c);

    qnode_gone_mark(q, mask, mine);
    if (departed(q, tk_sub(mine, 1))) {
        qnode_grow(&q->depart, mine);
        tell(q, c, mask, mine);
    }
    return rc;
}

/* Any process.  Returns 0 holding the lock (acquire), FIFO; AM_LOCK_GAVE_UP
 * without it if the watch said so, AM_LOCK_BROKEN if the lock is garbage.
 * Passes dead participants' turns on. */
static int hapax_lock_lock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    unsigned pred;
    AO_t mine;
    int rc;

    if ((rc = qnode_take(q, c, QNODE_HAPAX, &mine, &pred)) != 0)
        return rc;
    if (pred != TAKER_RELEASED && !departed(q, tk_sub(mine, 1)) &&
        (rc = await_turn(q, c, qnode_mask(q, c), mine)) != 0)
        return give_up(q, c, mine, rc);
    qnode_hold(q, c, mine);
    return 0;
}

/* Any process; one attempt: takes the next ticket only if the one before it
 * departed, so it never queues.  Returns 1 holding the lock (acquire), 0 if
 * busy. */
static int hapax_lock_trylock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    AO_t nx = AO_load_acquire(&q->next), k = tk_ticket(nx);
    unsigned pred;

    if (tk_id(nx) != TAKER_RELEASED && !departed(q, tk_sub(k, 1)))
        return 0;
    if (!qnode_claim(q, c, qnode_mask(q, c), nx, &pred))
        return 0;
    qnode_hold(q, c, k);
    return 1;
}

/* By the holder only, with the ctx its lock or trylock filled; release
 * ordering; wakes its successor if it posted.  The ticket comes from the
 * ctx, never from shared memory. */
static void hapax_lock_unlock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    AO_t k = (AO_t)c->held, mask = qnode_mask(q, c);

    AO_store_release(&q->depart, k); /* pairs with departed's acquire */
    if (__builtin_expect(am__lock_hook != NULL, 0) &&
        tk_ticket(AO_load(&q->next)) != tk_add(k, 1))
        am__lock_hook(AM_LOCK_HOOK_HANDING);
    tell(q, c, mask, k);
}

/* Any process; a relaxed snapshot: 1 if the last ticket taken has not
 * departed. */
static int hapax_lock_locked(void *l)
{
    struct qnode_lock *q = l;

    return tk_older(AO_load(&q->depart), tk_sub(tk_ticket(AO_load(&q->next)), 1));
}

const struct am_lock_ops am_lock_hapax = {
    .name = "hapax",
    .size = hapax_lock_size,
    .init = hapax_lock_init,
    .lock = hapax_lock_lock,
    .trylock = hapax_lock_trylock,
    .unlock = hapax_lock_unlock,
    .locked = hapax_lock_locked,
    .parks = 1,
};
