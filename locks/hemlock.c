/*
 * hemlock.c - Hemlock (Dice and Kogan, 2021: "Hemlock: Compact and Scalable
 * Mutual Exclusion") across processes, passing the turns of participants
 * that died or gave up.
 *
 * Design.  Hemlock keeps one word per thread, its Grant, and a tail.  lock()
 * swaps the tail with itself; with a predecessor it spins on the
 * predecessor's Grant until it names this lock, then clears it.  unlock()
 * frees the lock with a compare-and-swap of the tail from itself to null if
 * nobody queued; else it stores the lock into its own Grant and waits until
 * its successor has cleared it.  No node moves and nothing passes from lock()
 * to unlock(), unlike CLH (nodes migrate) and MCS (the holder's node).
 *
 * Across processes (qnode.h has the queue, the nodes and the passes): the
 * tail is `next`, whose compare-and-swap names the predecessor (Hemlock's
 * swap); participant self's Grant is its node, alone on its line.  A grant
 * names the ticket released, not the lock (each lock has its own nodes), in
 * `mark`, which only grows, so a waiter that looks late, or walks back over
 * dead turns, still reads "released" (as clh.c's).  The successor's clearing
 * is a second word on the same line, `ack`, grown to the ticket whose grant
 * it took: the same line goes holder -> successor -> holder as Hemlock's one
 * word does.  The clearing is Hemlock's hand-shake, never needed for
 * exclusion (the mark says everything), so the holder's wait for it ends,
 * at a watch tick, as soon as anything makes it pointless: the successor is
 * dead or gone, or was admitted, the watch says give up, or the words are
 * garbage.  Without a watch only a dead successor keeps it waiting, for
 * ever, as Hemlock's holder would (a gone one is seen in shared memory).
 *
 * lock() takes ticket k (qnode_take) behind predecessor p: TAKER_RELEASED
 * means the lock is free (the holder of k - 1 found nobody behind it and set
 * it so, or k is the first); else it waits until p's mark reaches k - 1, then
 * grows p's ack to k - 1.  unlock() by the holder of k: if nobody took k + 1,
 * a compare-and-swap of `next` from (k + 1, holder) to (k + 1,
 * TAKER_RELEASED) frees the lock; else it stores k into its own mark and
 * waits until its ack reaches k.  A waiter that gives up marks its ticket
 * gone and, if its predecessor had released meanwhile, takes the grant and
 * releases its own ticket as unlock() does (growing the mark, without waiting
 * for the hand-shake).
 *
 * Memory ordering.  The holder's AO_store_release of its mark pairs with the
 * successor's AO_load_acquire of it (qnode_wait) or trylock's; the full
 * compare-and-swap that leaves `next` RELEASED with the next taker's; passes
 * as in qnode.h.  The ack orders nothing (the holder's critical section is
 * over before it grants): its full compare-and-swap only ends the wait.
 * locked() is a relaxed snapshot.
 */
#include <atomic_ops.h>

#include "lock.h"
#include "qnode.h"

#define CLH 1 /* qnode.h's clh flag: waiters wait on their predecessor's node */

/* Times unlock() retries freeing the lock when `next` keeps moving without a
 * ticket being taken (only a peer writing garbage does that). */
#define FREE_TRIES 8

static size_t hemlock_lock_size(unsigned max_procs)
{
    return qnode_size(max_procs);
}

/* By one process, before any other uses the lock.  Always returns 0. */
static int hemlock_lock_init(void *l, unsigned max_procs)
{
    struct qnode_lock *q = l;

    qnode_init(q, max_procs);
    for (AO_t i = 0; i <= q->mask; i++)
        q->node[i].ack = tk_sub(0, 1);
    return 0;
}

/* By the new holder of ticket mine, or a waiter giving it up, behind pred:
 * clears pred's grant of mine - 1 if it granted it (a pass over a dead
 * predecessor took none), and wakes pred if it parks on it. */
static void take_grant(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mask,
                       unsigned pred, AO_t mine)
{
    struct qnode *p;

    if (pred == TAKER_RELEASED || !qnode_released(q, mask, pred, mine))
        return;
    p = qnode_node(q, mask, pred);
    qnode_grow(&p->ack, tk_sub(mine, 1));
    wait_wake(c, &p->ack, &p->sleepers);
}

/* At a watch tick of the holder of k waiting for its grant to be taken: 1
 * if waiting on is pointless (see the file header). */
static int ack_moot(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mask, AO_t k)
{
    AO_t k1 = tk_add(k, 1), nx = AO_load_acquire(&q->next);
    unsigned id = taker_of(qnode_who(q, mask), mask, nx, k1);

    if (qnode_impossible(q, mask, k1, 0, NULL) || watch_give_up(c))
        return 1;
    if (tk_older(k, AO_load_acquire(&q->served)) ||
        AO_load(qnode_mark(q, mask, c->self + 1)) != k)
        return 1; /* k + 1 admitted or passed, or the node moved on */
    if (id == TAKER_NONE || id == TAKER_UNKNOWN || id == TAKER_RELEASED)
        return 1;
    return qnode_dead(q, c, mask, k1, id);
}

/* By the holder of k once it granted k: waits until its successor took the
 * grant, or that is moot (at a watch tick; without a watch, at every round
 * once spinning failed: a successor that gave up is seen without one). */
static void await_ack(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mask, AO_t k)
{
    struct qnode *own = qnode_node(q, mask, c->self + 1);
    struct wait w = wait_start(c);
    AO_t seen;

    while (tk_older(seen = AO_load(&own->ack), k)) {
        int due = wait_on(&w, c, &own->ack, seen, &own->sleepers);

        if ((due || (!c->watch && wait_failed(&w))) && ack_moot(q, c, mask, k))
            return;
    }
}

/* By the holder of ticket k, or by a waiter that gave k up once its
 * predecessor released (`late`: grow the mark instead of storing it, and do
 * not wait for the hand-shake), with its ctx c: frees the lock if nobody
 * took k + 1, else grants k through its own node.  Release ordering. */
static void hand_off(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mask, AO_t k,
                     int late)
{
    struct qnode *own = qnode_node(q, mask, c->self + 1);
    AO_t k1 = tk_add(k, 1);

    for (int i = 0; i < FREE_TRIES; i++) {
        AO_t nx = AO_load_acquire(&q->next);

        if (tk_ticket(nx) != k1)
            break;
        if (AO_compare_and_swap_full(&q->next, nx, tk_pack(k1, TAKER_RELEASED)))
            return;
    }
    if (__builtin_expect(am__lock_hook != NULL, 0))
        am__lock_hook(AM_LOCK_HOOK_HANDING);
    if (late)
        qnode_grow(&own->mark, k);
    else
        AO_store_release(&own->mark, k);
    qnode_wake(c, own);
    if (!late)
        await_ack(q, c, mask, k);
}

/* By a waiter for ticket mine behind pred that stops waiting with rc: marks
 * mine gone and, if pred released meanwhile, takes the grant and releases
 * mine.  Returns rc. */
static int give_up(struct qnode_lock *q, const struct am_lock_ctx *c, unsigned pred,
                   AO_t mine, int rc)
{
    AO_t mask = qnode_mask(q, c);

    qnode_gone_mark(q, mask, mine);
    if (qnode_released(q, mask, pred, mine)) {
        take_grant(q, c, mask, pred, mine);
        hand_off(q, c, mask, mine, 1);
    }
    return rc;
}

/* By the new holder of ticket mine: records it (qnode_hold) and moves its
 * own ack out of the way should it be too old to compare (qnode.h, old
 * words). */
static void hold(struct qnode_lock *q, struct am_lock_ctx *c, AO_t mask, AO_t mine)
{
    qnode_fresh(&qnode_node(q, mask, c->self + 1)->ack, mine, mask);
    qnode_hold(q, c, mine);
}

/* Any process.  Returns 0 holding the lock (acquire), FIFO; AM_LOCK_GAVE_UP
 * without it if the watch said so, AM_LOCK_BROKEN if the lock is garbage.
 * Passes dead participants' turns on. */
static int hemlock_lock_lock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    AO_t mask = qnode_mask(q, c), mine;
    unsigned pred;
    int rc;

    if ((rc = qnode_take(q, c, CLH, &mine, &pred)) != 0)
        return rc;
    if (pred != TAKER_RELEASED) {
        rc = qnode_wait(q, c, CLH, qnode_node(q, mask, pred), tk_sub(mine, 1), mine);
        if (rc != 0)
            return give_up(q, c, pred, mine, rc);
        take_grant(q, c, mask, pred, mine);
    }
    hold(q, c, mask, mine);
    return 0;
}

/* Any process; one attempt: takes the next ticket only if its predecessor
 * has released (or `next` names RELEASED), so it never queues.  Returns 1
 * holding the lock (acquire), 0 if busy. */
static int hemlock_lock_trylock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    AO_t mask = qnode_mask(q, c), mine;
    unsigned pred;

    if (!qnode_try_released(q, c, &mine, &pred))
        return 0;
    take_grant(q, c, mask, pred, mine);
    hold(q, c, mask, mine);
    return 1;
}

/* By the holder only, with the ctx its lock or trylock filled; release
 * ordering; returns once its successor took the grant (see the file
 * header).  The ticket comes from the ctx, never from shared memory. */
static void hemlock_lock_unlock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;

    hand_off(q, c, qnode_mask(q, c), (AO_t)c->held, 0);
}

/* Any process; a relaxed snapshot: 1 if the last ticket taken was not
 * released just now.  A diagnostic: it trusts the shared node count. */
static int hemlock_lock_locked(void *l)
{
    return qnode_held_behind(l);
}

const struct am_lock_ops am_lock_hemlock = {
    .name = "hemlock",
    .size = hemlock_lock_size,
    .init = hemlock_lock_init,
    .lock = hemlock_lock_lock,
    .trylock = hemlock_lock_trylock,
    .unlock = hemlock_lock_unlock,
    .locked = hemlock_lock_locked,
    .parks = 1,
};
