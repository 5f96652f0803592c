/*
 * mcs.c - the MCS queue lock (Mellor-Crummey and Scott, 1991) across
 * processes, passing the turns of participants that died or gave up.
 *
 * Design.  Each participant spins on its own node, and a holder hands the
 * lock to its successor alone, by writing the successor's node: one remote
 * write per hand-off, and no line that every waiter reads.  The queue, the
 * nodes and the passing of dead participants' turns are qnode.h's.  The
 * differences from the 1991 lock: the tail is a ticket word whose
 * compare-and-swap names the predecessor and links behind it in one step
 * (no window between swapping the tail and linking), and the holder finds
 * its successor through the records of who took which ticket (taker.h)
 * instead of a `next` pointer its successor writes into its node.
 *
 * lock() takes ticket k (qnode_take).  If `next` named k - 1's taker as
 * TAKER_RELEASED (the lock was free), the caller holds the lock at once;
 * otherwise it waits until its own node's mark reaches k.  unlock() by the
 * holder of k: if nobody took k + 1 yet, a compare-and-swap of `next` from
 * (k + 1, holder) to (k + 1, TAKER_RELEASED) frees the lock (the next taker
 * finds RELEASED); else it stores k + 1 into the mark of k + 1's taker, found
 * in `next` or in its record.  The successor may be dead or have given up:
 * the lock is then handed to it all the same, and the waiters behind pass it
 * (qnode.h).  A waiter that gives up marks its ticket gone and, if its mark
 * shows it admitted, hands the lock on as unlock() would (growing the mark,
 * since a walker may have passed it meanwhile: qnode.h).
 *
 * Memory ordering.  The holder's AO_store_release of the successor's mark
 * pairs with the successor's AO_load_acquire of its mark (lock), and the full
 * compare-and-swap that leaves `next` RELEASED with the full compare-and-swap
 * of the next taker (lock, trylock); passes as in qnode.h.  locked() is a
 * relaxed snapshot.
 */
#include <atomic_ops.h>

#include "lock.h"
#include "qnode.h"

#define MCS 0 /* qnode.h's clh flag */

/* Times unlock() retries freeing the lock when `next` keeps moving without a
 * ticket being taken (only a peer writing garbage does that). */
#define FREE_TRIES 8

static size_t mcs_lock_size(unsigned max_procs)
{
    return qnode_size(max_procs);
}

/* By one process, before any other uses the lock.  Always returns 0. */
static int mcs_lock_init(void *l, unsigned max_procs)
{
    return qnode_init(l, max_procs);
}

/* By the holder of ticket k, or by a waiter that gave k up once admitted
 * (`late`: grow the mark instead of storing it), with its ctx c: frees the
 * lock if nobody took k + 1, else admits k + 1's taker (and wakes it if
 * parked).  Release ordering. */
static void hand_off(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mask, AO_t k,
                     int late)
{
    AO_t k1 = tk_add(k, 1);

    for (int i = 0; i < FREE_TRIES; i++) {
        AO_t nx = AO_load_acquire(&q->next);
        unsigned id;

        if (tk_ticket(nx) == k1) {
            if (AO_compare_and_swap_full(&q->next, nx, tk_pack(k1, TAKER_RELEASED)))
                return;
            continue;
        }
        id = taker_of(qnode_who(q, mask), mask, nx, k1);
        if (id == TAKER_NONE || id == TAKER_UNKNOWN || id == TAKER_RELEASED)
            return; /* garbage: k1's waiter finds it at a tick */
        if (__builtin_expect(am__lock_hook != NULL, 0))
            am__lock_hook(AM_LOCK_HOOK_HANDING);
        if (late)
            qnode_grow(qnode_mark(q, mask, id), k1);
        else
            AO_store_release(qnode_mark(q, mask, id), k1);
        qnode_wake(c, qnode_node(q, mask, id));
        return;
    }
}

/* By a waiter for ticket mine that stops waiting with rc: marks mine gone
 * and, if it was admitted meanwhile, hands the lock on.  Returns rc. */
static int give_up(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mine, int rc)
{
    AO_t mask = qnode_mask(q, c);

    qnode_gone_mark(q, mask, mine);
    if (!tk_older(AO_load_acquire(qnode_mark(q, mask, c->self + 1)), mine))
        hand_off(q, c, mask, mine, 1);
    return rc;
}

/* Any process.  Returns 0 holding the lock (acquire), FIFO; AM_LOCK_GAVE_UP
 * without it if the watch said so, AM_LOCK_BROKEN if the lock is garbage.
 * Passes dead participants' turns on. */
static int mcs_lock_lock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    unsigned pred;
    AO_t mine;
    int rc;

    if ((rc = qnode_take(q, c, MCS, &mine, &pred)) != 0)
        return rc;
    if (pred != TAKER_RELEASED &&
        (rc = qnode_wait(q, c, MCS, qnode_node(q, qnode_mask(q, c), c->self + 1), mine,
                         mine)) != 0)
        return give_up(q, c, mine, rc);
    qnode_hold(q, c, mine);
    return 0;
}

/* Any process; one attempt: takes the next ticket only if the lock is free
 * (`next` names RELEASED), so it never queues.  Returns 1 holding the lock
 * (acquire), 0 if busy. */
static int mcs_lock_trylock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;
    AO_t nx = AO_load_acquire(&q->next);
    unsigned pred;

    if (tk_id(nx) != TAKER_RELEASED || !qnode_claim(q, c, qnode_mask(q, c), nx, &pred))
        return 0;
    qnode_hold(q, c, tk_ticket(nx));
    return 1;
}

/* By the holder only, with the ctx its lock or trylock filled; release
 * ordering.  The ticket comes from the ctx, never from shared memory. */
static void mcs_lock_unlock(void *l, struct am_lock_ctx *c)
{
    struct qnode_lock *q = l;

    hand_off(q, c, qnode_mask(q, c), (AO_t)c->held, 0);
}

/* Any process; a relaxed snapshot: 1 unless the lock was free just now. */
static int mcs_lock_locked(void *l)
{
    struct qnode_lock *q = l;

    return tk_id(AO_load(&q->next)) != TAKER_RELEASED;
}

const struct am_lock_ops am_lock_mcs = {
    .name = "mcs",
    .size = mcs_lock_size,
    .init = mcs_lock_init,
    .lock = mcs_lock_lock,
    .trylock = mcs_lock_trylock,
    .unlock = mcs_lock_unlock,
    .locked = mcs_lock_locked,
    .parks = 1,
};
