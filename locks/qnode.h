/*
 * qnode.h - what the queue locks (mcs.c, clh.c, hemlock.c, hapax.c) share:
 * tickets that name their takers (taker.h) as the queue, one node per
 * participant to spin on, and the passing of dead participants' turns.
 *
 * The queue.  `next` is the queue's tail: it holds the next ticket k packed
 * with the taker of ticket k - 1, so the compare-and-swap that takes ticket k
 * (taker_claim) returns the predecessor, as the swap of MCS's and CLH's tail
 * does, and links the new ticket behind it in the same atomic step: there is
 * no window between joining the queue and linking to the predecessor for a
 * process to die in.  The successor of any ticket is found through the
 * records of taker.h.  Participants are named by id (self + 1), never by an
 * address: the lock sits at a different address in each process.
 *
 * Nodes.  Participant self owns node self & mask (n = mask + 1 nodes, n being
 * max_procs rounded up to a power of two), alone on a 64-byte line, in the
 * lock's state in the shared segment (never in a process's private memory).
 * A node holds one word, `mark`, a ticket that only grows (modulo 2^40):
 *   mcs  the latest ticket admitted through this node: the holder of k stores
 *        k + 1 into the mark of k + 1's taker, which spins on its own node;
 *   clh  the latest ticket released through this node: the holder of k stores
 *        k into its own mark, and k + 1's taker spins on that node (hemlock
 *        too, which also keeps `ack`, the latest grant its successor took:
 *        hemlock.c);
 *   hapax  no mark: the holder of k stores k into the lock's `depart`, and
 *        node i's `ack` is the slot where a waiter shows the ticket it waits
 *        for (tickets i, i + n, ...: hapax.c).
 * Marks only grow because holders come one after another: a node's later
 * ticket is admitted (or released) only after every earlier one is over.
 * Passes that may come late (a waiter that gives up, below) grow a mark with
 * a compare-and-swap (qnode_grow) and never lower it.  Two participants whose
 * ids share a node stay correct: each compares the mark with its own ticket.
 *
 * The latest holder.  `served` holds the ticket of the latest holder, stored
 * by the holder itself once admitted (qnode_hold), so every ticket older than
 * served is over (hapax's `depart`, the latest ticket released, trails it:
 * by one, or by more once dead turns were passed).  Room: ticket k is taken only while k -
 * served <= n (so the record of k - n - 1, which taking k overwrites, is of a ticket over,
 * taker.h), hence at most n + 1 tickets are outstanding.
 *
 * Dead and gone participants.  A waiter that gives up marks its ticket k
 * gone (gone[k mod 2n] = k: a word per ticket, 2n of them, more than the
 * n + 1 outstanding, so participants that share a node do not share the mark,
 * nor do two outstanding tickets) and, if it has been admitted
 * already, passes its turn on itself.  At each watch tick a yielding waiter
 * for ticket m walks back from m - 1 (qnode_passable): a ticket older than
 * served, or released (mcs: with no successor then, TAKER_RELEASED; clh: its
 * taker's mark reached it; hapax: `depart` did), ends the walk with "pass"; a taker alive
 * and not gone ends it with "wait"; a dead or gone one is stepped over (mcs: unless it was
 * admitted already: then "pass").  On "pass" every ticket between the one over and m is a
 * dead or gone participant's that will never be released, so the waiter holds the lock. The
 * watch never calls a live process dead, so a slow or stopped holder keeps the lock, and
 * two live waiters never both pass: each stops at the other.  A waiter still waiting for
 * room walks the same way from the ticket it would take and, on "pass", moves served up to
 * the last ticket taken, making room (every ticket before is dead or gone).
 * Without a watch nothing is passed.
 *
 * Old words.  Tickets compare modulo 2^40 within half the range, and a node
 * or gone mark may sit unused for longer than that.  So before taking ticket
 * k a taker moves its own mark and k's gone mark, if either lags k by
 * QNODE_FAR or more, to k - n - 1 (older than any outstanding ticket) with a
 * compare-and-swap from the old value (qnode_fresh).  A mark in use by an
 * outstanding ticket is never that far behind, so this never erases one.
 *
 * Garbage.  As in ticket.c: served more than n + 1 behind ticket(next) or
 * ahead of it, served past a live waiter's ticket, or (mcs) a waiter's own
 * mark past its ticket is a state no run reaches, and no pass would end the
 * wait: a waiter's tick returns AM_LOCK_BROKEN.  (hapax's `depart` needs no
 * such check: garbage there admits waiters early or is overwritten by the
 * next departure; it never ends a wait that should go on.)  Every index is masked with
 * the caller's own max_procs (ctx->procs; the shared `mask` only for callers
 * without one), so garbage never moves an access outside the lock.
 *
 * Parking.  Under AM_LOCK_WAIT_PARK a waiter sleeps on the mark it waits
 * for (wait.h), counted in that node's `sleepers`, and whoever moves a mark
 * others wait on (mcs: a hand-off into the successor's node; clh: a release
 * of the holder's own) wakes them.  A waiter passing dead turns moves no
 * mark: the parked waiters behind a dead one wake at their timeout, tick and
 * pass as a yielding waiter does.
 *
 * Memory ordering.  Admission: mcs's AO_store_release of the successor's
 * mark, clh's of the holder's own, or the full compare-and-swap of `next`
 * that leaves it RELEASED, pairs with the waiter's AO_load_acquire of the mark
 * (or the full compare-and-swap that takes the next ticket).  A pass reads
 * marks, served and `next` with acquire, so the new holder sees every
 * critical section up to the last released one, and nothing a dead holder
 * wrote.  served is stored with release after the ticket was taken; read
 * with acquire before `next` in the garbage check.
 */
#ifndef SHMAM_QNODE_H
#define SHMAM_QNODE_H

#include <atomic_ops.h>
#include <string.h>

#include "lock.h"
#include "taker.h"
#include "wait.h"
#include "watch.h"

#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release) ||                   \
    !defined(AO_HAVE_nop_full)
#error "the queue locks need AO_load_acquire, AO_store_release and AO_nop_full"
#endif

#define QNODE_LINE 64
#define QNODE_FAR ((AO_t)1 << (TICKET_BITS - 2)) /* a word this far behind is stale */

/* The id `next` names as the taker of a ticket released with nobody after it
 * (mcs), and of ticket -1 (both): admitted at once. */
#define TAKER_RELEASED ((1u << AM_LOCK_ID_BITS) - 1u)

_Static_assert(AM_LOCK_MAX_SELF + 1u < TAKER_RELEASED, "no participant's id is RELEASED");

struct qnode {
    _Alignas(QNODE_LINE) AO_t mark; /* mcs: latest ticket admitted; clh, hemlock:
                                     * released */
    AO_t sleepers;                  /* waiters parked on mark or ack (wait.h) */
    AO_t ack;                       /* hemlock: latest ticket whose grant its
                                     * successor took; hapax: a waiter's
                                     * slot (hapax.c) */
};

struct qnode_lock {
    _Alignas(AM_LOCK_ALIGN) AO_t next; /* (next ticket, taker of the one before) */
    AO_t served;                       /* the latest holder's ticket */
    AO_t mask;                         /* nodes - 1; read-only after init */
    AO_t depart;                       /* hapax: the latest ticket released */
    _Alignas(AM_LOCK_ALIGN) struct qnode node[]; /* mask + 1, then mask + 1 records
                                                  * (taker.h), then 2 (mask + 1) gone
                                                  * marks */
};

_Static_assert(sizeof(struct qnode) == QNODE_LINE, "one line per node");
_Static_assert(offsetof(struct qnode_lock, node) == AM_LOCK_ALIGN, "nodes follow a block");

/* A waiter's tick found every ticket before its own over or passable. */
#define QNODE_PASS 1

/* The `clh` flag of the calls below: 0 for mcs (a waiter's turn shows in
 * its own mark), 1 for clh and hemlock (in its predecessor's mark), or
 * QNODE_HAPAX (in the lock's `depart`). */
#define QNODE_HAPAX 2

/* Shared state for max_procs participants (0 is treated as 1), a multiple of
 * AM_LOCK_ALIGN. */
static inline size_t qnode_size(unsigned max_procs)
{
    size_t n = taker_count(max_procs);
    size_t bytes =
        sizeof(struct qnode_lock) + n * (sizeof(struct qnode) + 3 * sizeof(AO_t));

    return (bytes + AM_LOCK_ALIGN - 1) / AM_LOCK_ALIGN * AM_LOCK_ALIGN;
}

/* The nodes' mask: from the caller's own max_procs when it gives one (c may be
 * NULL: init, locked()), so that no index into the lock comes from shared
 * memory. */
static inline AO_t qnode_mask(const struct qnode_lock *q, const struct am_lock_ctx *c)
{
    return c && c->procs ? taker_count(c->procs) - 1 : q->mask;
}

/* The records of who took which ticket (taker.h), after the nodes. */
static inline volatile AO_t *qnode_who(struct qnode_lock *q, AO_t mask)
{
    return (volatile AO_t *)(void *)&q->node[mask + 1];
}

/* Ticket k's gone mark: k once its taker gave it up. */
static inline volatile AO_t *qnode_gone(struct qnode_lock *q, AO_t mask, AO_t k)
{
    return qnode_who(q, mask) + mask + 1 + (k & (2 * mask + 1));
}

/* The node of the participant with id `id` (self + 1), and its mark. */
static inline struct qnode *qnode_node(struct qnode_lock *q, AO_t mask, unsigned id)
{
    return &q->node[(id - 1u) & mask];
}

static inline volatile AO_t *qnode_mark(struct qnode_lock *q, AO_t mask, unsigned id)
{
    return &qnode_node(q, mask, id)->mark;
}

/* By whoever just moved node n's mark, with ctx c: wakes the waiters parked
 * on it (wait_wake: nothing unless c parks). */
static inline void qnode_wake(const struct am_lock_ctx *c, struct qnode *n)
{
    wait_wake(c, &n->mark, &n->sleepers);
}

/* By one process, before any other uses the lock.  Always returns 0. */
static inline int qnode_init(struct qnode_lock *q, unsigned max_procs)
{
    AO_t n = taker_count(max_procs), old = tk_sub(0, 1);

    memset(q, 0, qnode_size(max_procs));
    q->mask = n - 1;
    q->next = tk_pack(0, TAKER_RELEASED);
    q->depart = old;
    taker_init(qnode_who(q, q->mask), q->mask);
    for (AO_t i = 0; i < n; i++)
        q->node[i].mark = old;
    for (AO_t i = 0; i < 2 * n; i++)
        *qnode_gone(q, q->mask, i) = tk_sub(i, 2 * n);
    return 0;
}

/* 1 if ticket k may be taken: k - served <= n (see the file header, room). */
static inline int qnode_room(struct qnode_lock *q, AO_t k, AO_t mask)
{
    return tk_sub(k, AO_load(&q->served)) <= mask + 1;
}

/* Any process: grows *w to ticket k unless it holds k or a newer one (full
 * barrier when it writes). */
static inline void qnode_grow(volatile AO_t *w, AO_t k)
{
    AO_t old = AO_load(w);

    while (tk_older(old, k) && !AO_compare_and_swap_full(w, old, k))
        old = AO_load(w);
}

/* By a taker about to try ticket k: *w, if QNODE_FAR or more behind k, moves
 * to k - n - 1 (see the file header, old words). */
static inline void qnode_fresh(volatile AO_t *w, AO_t k, AO_t mask)
{
    AO_t v = AO_load(w);

    if (tk_sub(k, v) >= QNODE_FAR)
        AO_compare_and_swap(w, v, tk_sub(k, mask + 2));
}

/* One attempt to take ticket k = ticket(nx), nx just read from `next` with
 * acquire: 1 if it is c's now (full barrier; *pred: the taker of k - 1), 0 if
 * there is no room or `next` moved. */
static inline int qnode_claim(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mask,
                              AO_t nx, unsigned *pred)
{
    AO_t k = tk_ticket(nx);

    if (!qnode_room(q, k, mask))
        return 0;
    qnode_fresh(qnode_mark(q, mask, c->self + 1), k, mask);
    qnode_fresh(qnode_gone(q, mask, k), k, mask);
    if (!taker_claim(&q->next, qnode_who(q, mask), mask, c->self, nx))
        return 0;
    *pred = tk_id(nx);
    return 1;
}

/* 1 if ticket k's taker `id` is dead or gave k up. */
static inline int qnode_dead(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t mask,
                             AO_t k, unsigned id)
{
    return AO_load(qnode_gone(q, mask, k)) == k || watch_dead(c, id - 1);
}

/* By a waiter with a watch, for its ticket m (taken, or to be taken once
 * there is room): 1 if the walk back from m - 1 (see the file header) finds
 * every ticket before m over or a dead or gone participant's, with acquire
 * ordering; 0 if some taker on the way lives or cannot be told. */
static inline int qnode_passable(struct qnode_lock *q, const struct am_lock_ctx *c,
                                 AO_t mask, AO_t m, int clh)
{
    AO_t nx = AO_load_acquire(&q->next), served = AO_load_acquire(&q->served), k = m;

    for (AO_t step = 0; step <= mask + 1; step++) {
        k = tk_sub(k, 1);
        if (tk_older(k, served))
            return 1;
        unsigned id = taker_of(qnode_who(q, mask), mask, nx, k);
        if (id == TAKER_RELEASED)
            return 1;
        if (id == TAKER_NONE || id == TAKER_UNKNOWN)
            return 0;
        AO_t mark = clh == QNODE_HAPAX ? AO_load_acquire(&q->depart)
                                       : AO_load_acquire(qnode_mark(q, mask, id));
        if (clh && !tk_older(mark, k))
            return 1; /* k released */
        if (!qnode_dead(q, c, mask, k, id))
            return 0;
        if (!clh && !tk_older(mark, k))
            return 1; /* k admitted, and its taker dead or gone */
    }
    return 0;
}

/* 1 if the lock is in a state no run of it reaches (see the file header), as
 * a waiter for ticket m finds it (`taken`: m is its; else it waits for room
 * to take m).  `own` is the waiter's own mark if a waiter's turn is shown
 * there (mcs), else NULL. */
static inline int qnode_impossible(struct qnode_lock *q, AO_t mask, AO_t m, int taken,
                                   const volatile AO_t *own)
{
    AO_t nx = tk_ticket(AO_load_acquire(&q->next)), served = AO_load_acquire(&q->served);

    if (tk_older(served, tk_sub(nx, mask + 2)) ||
        tk_older(tk_ticket(AO_load(&q->next)), served))
        return 1;
    return taken && (tk_older(m, served) || (own && tk_older(m, AO_load(own))));
}

/* At a watch tick of a waiter for ticket m (taken or not, as for
 * qnode_impossible): AM_LOCK_BROKEN if the lock is garbage; QNODE_PASS if the
 * waiter with ticket m may hold the lock now; else, having made room if every
 * ticket before m is passable, AM_LOCK_GAVE_UP if the watch says give up, or
 * 0 to wait on. */
static inline int qnode_tick(struct qnode_lock *q, const struct am_lock_ctx *c, AO_t m,
                             int taken, int clh)
{
    AO_t mask = qnode_mask(q, c), s;
    const volatile AO_t *own = taken && !clh ? qnode_mark(q, mask, c->self + 1) : NULL;

    if (qnode_impossible(q, mask, m, taken, own))
        return AM_LOCK_BROKEN;
    if (qnode_passable(q, c, mask, m, clh)) {
        if (taken)
            return QNODE_PASS;
        s = AO_load(&q->served);
        if (tk_older(s, tk_sub(m, 1)))
            AO_compare_and_swap_full(&q->served, s, tk_sub(m, 1));
    }
    return watch_give_up(c) ? AM_LOCK_GAVE_UP : 0;
}

/* Takes a ticket for c into *mine and its predecessor's id into *pred (full
 * barrier) once there is room.  Returns 0, or qnode_tick's AM_LOCK_GAVE_UP
 * or AM_LOCK_BROKEN holding no ticket. */
static inline int qnode_take(struct qnode_lock *q, const struct am_lock_ctx *c, int clh,
                             AO_t *mine, unsigned *pred)
{
    struct wait w = wait_start(c);
    int rc;

    for (;;) {
        AO_t nx = AO_load_acquire(&q->next);

        if (qnode_claim(q, c, qnode_mask(q, c), nx, pred)) {
            *mine = tk_ticket(nx);
            if (__builtin_expect(am__lock_hook != NULL, 0))
                am__lock_hook(AM_LOCK_HOOK_ENQUEUED);
            return 0;
        }
        if (wait_round(&w, c) && (rc = qnode_tick(q, c, tk_ticket(nx), 0, clh)) < 0)
            return rc;
    }
}

/* Waits until node n's mark reaches ticket `until` (acquire), for the
 * waiter with ticket mine.  Returns 0 once it has (or a tick found every
 * ticket before mine passable), or qnode_tick's AM_LOCK_GAVE_UP or
 * AM_LOCK_BROKEN. */
static inline int qnode_wait(struct qnode_lock *q, const struct am_lock_ctx *c, int clh,
                             struct qnode *n, AO_t until, AO_t mine)
{
    struct wait w = wait_start(c);
    AO_t seen;
    int rc;

    while (tk_older(seen = AO_load_acquire(&n->mark), until))
        if (wait_on(&w, c, &n->mark, seen, &n->sleepers) &&
            (rc = qnode_tick(q, c, mine, 1, clh)) != 0)
            return rc == QNODE_PASS ? 0 : rc;
    return 0;
}

/* By a waiter for ticket mine that stops waiting: marks mine gone, then
 * (full barrier) says whether it was admitted meanwhile, in which case the
 * caller must pass its turn on. */
static inline void qnode_gone_mark(struct qnode_lock *q, AO_t mask, AO_t mine)
{
    AO_store(qnode_gone(q, mask, mine), mine);
    AO_nop_full();
}

/* clh, hemlock: 1 if the predecessor `pred` of ticket k released k - 1
 * (acquire). */
static inline int qnode_released(struct qnode_lock *q, AO_t mask, unsigned pred, AO_t k)
{
    return pred == TAKER_RELEASED ||
           !tk_older(AO_load_acquire(qnode_mark(q, mask, pred)), tk_sub(k, 1));
}

/* clh, hemlock: one attempt to take the next ticket only if its predecessor
 * has released: 1 if c took it (*mine; *pred its predecessor; full
 * barrier), 0 if the lock is busy or `next` moved. */
static inline int qnode_try_released(struct qnode_lock *q, const struct am_lock_ctx *c,
                                     AO_t *mine, unsigned *pred)
{
    AO_t mask = qnode_mask(q, c), nx = AO_load_acquire(&q->next);

    if (!qnode_released(q, mask, tk_id(nx), tk_ticket(nx)) ||
        !qnode_claim(q, c, mask, nx, pred))
        return 0;
    *mine = tk_ticket(nx);
    return 1;
}

/* clh, hemlock: any process; a relaxed snapshot: 1 if the last ticket taken
 * was not released just now.  A diagnostic: it trusts the shared node
 * count. */
static inline int qnode_held_behind(struct qnode_lock *q)
{
    AO_t nx = AO_load(&q->next);
    unsigned pred = tk_id(nx);

    return pred != TAKER_RELEASED &&
           tk_older(AO_load(qnode_mark(q, q->mask, pred)), tk_sub(tk_ticket(nx), 1));
}

/* By the new holder of ticket mine: records it (release; see the file header). */
static inline void qnode_hold(struct qnode_lock *q, struct am_lock_ctx *c, AO_t mine)
{
    AO_store_release(&q->served, mine);
    c->held = mine;
}

#endif
