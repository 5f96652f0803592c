/*
 * clh.c - the CLH queue lock (Craig; Landin and Hagersten, 1993-94) across
 * processes, passing the turns of participants that died or gave up.
 *
 * Design.  Each waiter spins on its predecessor's node, and a holder releases
 * by writing its own node only: unlock() is one store, and it never needs to
 * know its successor.  The queue, the nodes and the passing of dead
 * participants' turns are qnode.h's.  The differences from the 1993 lock:
 * the tail is a ticket word whose compare-and-swap names the predecessor
 * (CLH's swap), nodes stay with their participant instead of migrating to
 * the successor (a node's mark is the latest ticket released through it, so
 * an old release is never taken for a new one), and a waiter can tell whether
 * its predecessor died through the records of who took which ticket
 * (taker.h).
 *
 * lock() takes ticket k (qnode_take) behind predecessor p (k - 1's taker):
 * TAKER_RELEASED (only for ticket 0) means the lock is free; otherwise it
 * waits until p's mark reaches k - 1.  unlock() by the holder of k stores k
 * into its own mark.  A waiter that gives up marks its ticket gone and, if
 * its predecessor had released meanwhile, releases its own ticket (growing
 * its mark, since a walker may have passed it meanwhile: qnode.h).
 *
 * Memory ordering.  The holder's AO_store_release of its mark pairs with the
 * successor's AO_load_acquire of the same mark (lock) or trylock's; passes as
 * in qnode.h.  locked() is a relaxed snapshot.
 */
#include <atomic_ops.h>

#include "lock.h"
#include "qnode.h"

#define CLH 1 /* qnode.h's clh flag */

static size_t clh_lock_size(unsigned max_procs)
{
    return qnode_size(max_procs);
}

/* By one process, before any other uses the lock.  Always returns 0. */
static int clh_lock_init(void *l, unsigned max_procs)
{
    return qnode_init(l, max_procs);
}

/* By a waiter for ticket mine behind pred that stops waiting with rc: marks
 * mine gone and, if pred released meanwhile, releases mine.  Returns rc. */
static int give_up(struct qnode_lock *q, const struct am_lock_ctx *c, unsigned pred,
                   AO_t mine, int rc)
{
    AO_t mask = qnode_mask(q, c);

    qnode_gone_mark(q, mask, mine);
    if (qnode_released(q, mask, pred, mine)) {
        qnode_grow(qnode_mark(q, mask, c->self + 1), mine);
        qnode_wake(c, qnode_node(q, mask, c->self + 1));
    }
    return rc;
}

/* Any process.  Returns 0 holding the lock (acquire), FIFO; AM_LOCK_GAVE_UP
 * without it if the watch said so, AM_LOCK_BROKEN if the lock is garbage.
 * Passes dead participants' turns on. */
static int clh_lock_lock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    unsigned pred;
    AO_t mine;
    int rc;

    if ((rc = qnode_take(q, c, CLH, &mine, &pred)) != 0)
        return rc;
    if (pred != TAKER_RELEASED &&
        (rc = qnode_wait(q, c, CLH, qnode_node(q, qnode_mask(q, c), pred), tk_sub(mine, 1),
                         mine)) != 0)
        return give_up(q, c, pred, mine, rc);
    qnode_hold(q, c, mine);
    return 0;
}

/* Any process; one attempt: takes the next ticket only if its predecessor has
 * released, so it never queues.  Returns 1 holding the lock (acquire), 0 if
 * busy. */
static int clh_lock_trylock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    unsigned pred;
    AO_t mine;

    if (!qnode_try_released(q, c, &mine, &pred))
        return 0;
    qnode_hold(q, c, mine);
    return 1;
}

/* By the holder only, with the ctx its lock or trylock filled; release
 * ordering; wakes a parked successor under AM_LOCK_WAIT_PARK.  The ticket
 * comes from the ctx, never from shared memory. */
static void clh_lock_unlock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    struct qnode *own = qnode_node(q, qnode_mask(q, c), c->self + 1);

    AO_store_release(&own->mark, (AO_t)c->held);
    qnode_wake(c, own);
}

/* Any process; a relaxed snapshot: 1 if the last ticket taken was not
 * released just now.  A diagnostic: it trusts the shared node count. */
static int clh_lock_locked(void *l)
{
    return qnode_held_behind(l);
}

const struct am_lock_ops am_lock_clh = {
    .name = "clh",
    .size = clh_lock_size,
    .init = clh_lock_init,
    .lock = clh_lock_lock,
    .trylock = clh_lock_trylock,
    .unlock = clh_lock_unlock,
    .locked = clh_lock_locked,
    .parks = 1,
};
