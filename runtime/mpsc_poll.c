/*
 * mpsc_poll.c - delivery: the receiver's half of the shared (many-to-one)
 * queue (mpsc_send.c holds the sender's; chan_poll.c the owner's half of
 * per-sender channels, deliver.c what both do with a message, poll.c the poll
 * calls of every kind).
 *
 * Only the endpoint's owner polls, and never from inside a handler (the handler
 * still holds its packet).  It keeps its heads in private memory (a peer that
 * moves the shared copy changes nothing).  For the packet at head (slot head % Q, lap head
 * / Q) it acquire-loads the state; on READY or READY_BULK it advances head, validates a
 * private copy of the packet, runs the handler, then release-stores the bulk block and the
 * packet FREE for the next lap.  One poll drains every ready packet of both queues (the
 * paper's gap reduction).
 *
 * Dead senders.  A head slot CLAIMED for its lap names its claimant.  A poll
 * that finds the head on a claim an earlier poll found there already asks
 * whether that claimant has died (senders.c: two plain loads of its entry, the
 * lifeline set by the kernel), so the skip comes at the first poll after the
 * death, however far apart polls are: a polling owner's next, a sleeping one's
 * at its next wake-up (wait.c caps the sleep at abandon_ms / 4 while a head is
 * stuck).  No count of polls stands between the death and the skip.  A poll
 * that finds a claim for the first time does not ask (it is usually being
 * filled), and one that finds no claim pays nothing.  Once the claimant has
 * died, the claim is skipped: the tail is moved past it if its claimant
 * died before doing so, the slot is freed for the next lap and the skip is
 * counted as an abandoned claim.  A slow or stopped sender is alive and is
 * waited for, however long.  Bulk blocks that dead claimants held without a
 * queued packet using them are freed then too, and whenever a waiting sender
 * asks (header word `orphans`): only the receiver may free them, since only it
 * knows which blocks queued packets still use.
 *
 * Medium messages.  A READY packet flagged AM_PKT_MEDIUM carries its data in
 * its slot's payload area (layout.h): the handler reads it in place, and the
 * slot's release of FREE after the handler gives the area back too.  Its
 * length is checked on the private copy (at most AM_MEDIUM_BYTES); a dead
 * claimant's half-written area is skipped with its claim.
 *
 * Long messages.  A READY packet flagged AM_PKT_LONG names a block of the
 * queue's heap that its claimant allocated (the heap's header says so; the
 * receiver checks before the handler and frees the block after it); one
 * flagged AM_PKT_LONG_AT names bytes of our region, bounded by our own record
 * of its size.  Blocks that dead senders allocated and never published are
 * taken back when such a claim is skipped, or when a sender finding the heap
 * full asks (header word `reclaim`).
 *
 * Nothing read from shared memory is trusted: a packet whose handler id, argument
 * count, claimant, bulk block, heap block, region bounds or length is wrong is
 * counted, reported once on
 * stderr and freed; a head slot whose state no sender could have written is
 * counted and reset to FREE for its lap; a tail or bulk tail that a peer moved
 * somewhere impossible is put back (checked every AM_TAIL_CHECK idle polls).  The receiver
 * never indexes memory with an unchecked value.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "call.h"
#include "deliver.h"
#include "internal.h"
#include "mpsc.h"
#include "options.h"
#include "senders.h"

/* The payload of the copy `m` of the packet in slot i of queue q, in state s:
 * a medium message's payload area (the slot's, freed with it), a bulk block
 * (to free even if the message is bad: *bulk), or a long message's
 * (deliver.c); NULL or why it is bad.  Lengths are the copy's. */
static const char *payload(am_ep_t *ep, struct am_queue_view *q, uint32_t i,
                           const struct am_packet *m, AO_t s, struct am_payload *pl,
                           struct am_bulk_state **bulk)
{
    *pl = (struct am_payload){0};
    *bulk = NULL;
    if (AM_STATE_TYPE(s) != AM_READY_BULK && m->flags == AM_PKT_MEDIUM)
        return am__payload_medium(q->medium, i, m, pl);
    if (AM_STATE_TYPE(s) != AM_READY_BULK)
        return am__payload_long(ep, &q->heap, m, AM_STATE_WHO(s), pl);
    struct am_bulk_state *b = &q->bulk_state[m->bulk_ticket & (q->bulk_n - 1)];
    if (AO_load(&b->state) !=
        AM_STATE(am_lap(m->bulk_ticket, q->bulk_n), AM_STATE_WHO(s), AM_CLAIMED))
        return "bulk block not claimed for this message";
    *bulk = b;
    if (m->bulk_len > AM_BULK_BYTES)
        return "bulk length over 8192";
    pl->data = q->bulk + (m->bulk_ticket & (q->bulk_n - 1)) * AM_BULK_BYTES;
    pl->len = m->bulk_len;
    pl->bulk = 1;
    return NULL;
}

/* Run the message in packet `p` (state `s`) and free it for the next lap,
 * its payload area with it. */
static void deliver(am_ep_t *ep, enum am_qid qid, struct am_packet *p, AO_t s)
{
    struct am_queue_view *q = &ep->own.q[qid];
    struct am_packet m;
    struct am_payload pl;
    struct am_bulk_state *bulk;
    memcpy(&m, p, sizeof m);
    const char *why = payload(ep, q, (uint32_t)(p - q->packets), &m, s, &pl, &bulk);
    am__run(ep, qid, &m, AM_STATE_WHO(s), &pl, why);
    /* Both pair with the next sender's claim (CAS, or acquire under the
     * lock): our reads of this message happen before its writes of the next
     * one.  (am__run gave back a heap block the same way.) */
    if (bulk)
        AO_store_release(&bulk->state,
                         AM_STATE(am_lap(m.bulk_ticket, q->bulk_n) + 1, 0, AM_FREE));
    AO_store_release(&p->state, AM_STATE(AM_STATE_LAP(s) + 1, 0, AM_FREE));
}

/* A bulk block in a state no sender writes (a ready type, FREE naming a
 * claimant, a claim of an impossible lap): put it back to FREE for the next ticket at that
 * block after the bulk tail. */
static void reset_block(am_ep_t *ep, struct am_queue_view *q, uint32_t b, AO_t s)
{
    uint64_t t = AO_load(&q->send->bulk_tail);
    uint64_t k = t + ((b - t) & (q->bulk_n - 1));
    if (AO_compare_and_swap_full(&q->bulk_state[b].state, s,
                                 AM_STATE(am_lap(k, q->bulk_n), 0, AM_FREE)))
        am__report_bad(ep, "impossible bulk block state");
}

/* Free the bulk blocks of queue qid that dead claimants hold and that no queued
 * packet uses (a sender that died between claiming its block and publishing),
 * and reset blocks in impossible states (claims of laps that cannot be).
 * Owner only, outside handlers.  A dead claimant changes nothing any more, so
 * what this reads of its claims is stable. */
static void free_orphans(am_ep_t *ep, enum am_qid qid)
{
    struct am_queue_view *q = &ep->own.q[qid];
    unsigned char used[AM_MAX_BULK_BLOCKS] = {0};
    for (uint32_t i = 0; i < q->packets_n; i++)
        if (AM_STATE_TYPE(AO_load_acquire(&q->packets[i].state)) == AM_READY_BULK)
            used[q->packets[i].bulk_ticket & (q->bulk_n - 1)] = 1;
    uint64_t bt = AO_load(&q->send->bulk_tail);
    for (uint32_t b = 0; b < q->bulk_n; b++) {
        AO_t s = AO_load(&q->bulk_state[b].state);
        unsigned type = AM_STATE_TYPE(s);
        if (type >= AM_READY || (type == AM_FREE && AM_STATE_WHO(s) != 0) ||
            (type == AM_CLAIMED && !used[b] && !am_block_claim_lap_ok(s, bt, b, q->bulk_n)))
            reset_block(ep, q, b, s);
        else if (type == AM_CLAIMED && !used[b] &&
                 am__who_dead(&ep->own, AM_STATE_WHO(s)) &&
                 AO_compare_and_swap_full(&q->bulk_state[b].state, s,
                                          AM_STATE(AM_STATE_LAP(s) + 1, 0, AM_FREE)))
            ep->abandoned++, AO_fetch_and_add1(&ep->own.hdr->abandoned);
    }
}

/* Is bulk block b used by a packet in queue q (READY_BULK naming it)? */
static int block_used(const struct am_queue_view *q, uint32_t b)
{
    for (uint32_t i = 0; i < q->packets_n; i++)
        if (AM_STATE_TYPE(AO_load_acquire(&q->packets[i].state)) == AM_READY_BULK &&
            (q->packets[i].bulk_ticket & (q->bulk_n - 1)) == b)
            return 1;
    return 0;
}

/* The block at the bulk tail, claimed by a live sender that has no bulk claim
 * in flight (senders.c) and used by no queued packet: nobody will publish or
 * free it, and every bulk sender waits for it (a peer overwrote its state or
 * the bulk ticket of its packet, which was then dropped; or its sender gave
 * up holding it).  Free it.  Order: the state is read (acquire) before the
 * claimant's counts, and the claim it shows began (full barrier) before its
 * CAS, so the counts say idle only once that claim ended: published (release)
 * before, so its packet is among those scanned after, or given up.  begun is
 * read again after the state's second look: a claim begun meanwhile moves it. */
static void free_idle_claim(am_ep_t *ep, struct am_queue_view *q)
{
    uint32_t b = (uint32_t)AO_load(&q->send->bulk_tail) & (q->bulk_n - 1);
    AO_t s = AO_load_acquire(&q->bulk_state[b].state), begun;
    unsigned who = AM_STATE_WHO(s);
    if (AM_STATE_TYPE(s) != AM_CLAIMED || !am__who_bulk_idle(&ep->own, who, &begun) ||
        block_used(q, b) || AO_load_acquire(&q->bulk_state[b].state) != s ||
        am__who_bulk_began(&ep->own, who, begun))
        return;
    if (AO_compare_and_swap_full(&q->bulk_state[b].state, s,
                                 AM_STATE(AM_STATE_LAP(s) + 1, 0, AM_FREE)))
        am__report_bad(ep, "bulk block held by a sender with no claim in flight");
}

/* am_heap_reclaim's questions about queue qid's heap: has a claimant died,
 * and does a queued packet still use a block? */
struct reclaim_ctx {
    am_ep_t *ep;
    struct am_queue_view *q;
};

static int reclaim_dead(void *ctx, unsigned who)
{
    /* Our own calls' rooms (call.c) are ours to give back. */
    return who != AM_OWN_WHO && am__who_dead(&((struct reclaim_ctx *)ctx)->ep->own, who);
}

static int reclaim_in_use(void *ctx, uint64_t off)
{
    struct am_queue_view *q = ((struct reclaim_ctx *)ctx)->q;
    for (uint32_t i = 0; i < q->packets_n; i++)
        if (AM_STATE_TYPE(AO_load_acquire(&q->packets[i].state)) == AM_READY &&
            q->packets[i].flags == AM_PKT_LONG && q->packets[i].bulk_ticket == off)
            return 1;
    return 0;
}

/* Free the heap blocks of queue qid that dead senders allocated and that no
 * queued packet uses (a sender that died between allocating and publishing).
 * Owner only, outside handlers (a handler's block is in use): a dead sender
 * publishes nothing more, so what this reads of its packets is stable. */
static void reclaim_heap(am_ep_t *ep, enum am_qid qid)
{
    struct reclaim_ctx ctx = {ep, &ep->own.q[qid]};
    unsigned n = am_heap_reclaim(&ctx.q->heap, reclaim_dead, reclaim_in_use, &ctx);
    ep->abandoned += n;
    AO_fetch_and_add(&ep->own.hdr->abandoned, n);
}

/* The head ticket `head` of queue qid is claimed (state s) but not ready.  Is
 * its claimant dead?  Asked from the second poll that finds the same claim on,
 * every time: a plain look at the claimant's entry (am__who_dead), final once
 * it says dead and never saying so of a live sender. */
static int claimant_dead(am_ep_t *ep, enum am_qid qid, uint64_t head, AO_t s)
{
    struct am_stuck *st = &ep->stuck[qid];
    if (st->ticket != head + 1) {
        st->ticket = head + 1;
        return 0;
    }
    return am__who_dead(&ep->own, AM_STATE_WHO(s));
}

/* Skip the dead claim at `head`: move the tail past it if its claimant did not
 * (mpsc_send.c), then free the slot for the next lap, as delivery would.  The CAS
 * on the tail comes first, so no sender finds the slot freed for a lap the tail
 * has not reached. */
static void skip(am_ep_t *ep, enum am_qid qid, struct am_packet *p, uint64_t head, AO_t s)
{
    struct am_queue_view *q = &ep->own.q[qid];
    AO_compare_and_swap_full(&q->send->tail, head, head + 1);
    ep->head[qid] = head + 1;
    AO_store(&q->recv->head, head + 1);
    AO_store_release(&p->state, AM_STATE(AM_STATE_LAP(s) + 1, 0, AM_FREE));
    ep->abandoned++;
    AO_fetch_and_add1(&ep->own.hdr->abandoned);
    free_orphans(ep, qid);
    reclaim_heap(ep, qid);
}

/* On a shared endpoint, is state s (of a slot at or past the head, for lap
 * `lap`) a message of the lap before that another thread took and is still
 * handling?  Its slot is freed when its handler returns (threads.c). */
static int in_flight(const am_ep_t *ep, AO_t s, AO_t lap)
{
    return ep->mt.shared && AM_STATE_TYPE(s) >= AM_READY &&
           ((AM_STATE_LAP(s) + 1) & AM_LAP_MASK) == lap;
}

/* A head slot may legally be FREE or CLAIMED for the head's lap (or in
 * flight); any other value was written by a broken or hostile peer.  Put it
 * back to FREE for the lap. */
static void repair(am_ep_t *ep, struct am_packet *p, AO_t s, AO_t lap)
{
    if ((AM_STATE_LAP(s) == lap && AM_STATE_TYPE(s) <= AM_CLAIMED) || in_flight(ep, s, lap))
        return;
    if (AO_compare_and_swap_full(&p->state, s, AM_STATE(lap, 0, AM_FREE)))
        am__report_bad(ep, "impossible packet state");
}

/* Deliver the messages ready from the head of one of our shared queues on;
 * returns how many. */
static int drain_ready(am_ep_t *ep, int qid)
{
    struct am_queue_view *q = &ep->own.q[qid];
    int n = 0;
    for (;;) {
        uint64_t head = ep->head[qid];
        struct am_packet *p = &q->packets[head & (q->packets_n - 1)];
        AO_t lap = am_lap(head, q->packets_n);
        AO_t s = AO_load_acquire(&p->state); /* pairs with am__publish() */
        if (AM_STATE_LAP(s) == lap && AM_STATE_TYPE(s) >= AM_READY) {
            ep->head[qid] = head + 1;
            AO_store(&q->recv->head, head + 1); /* onecas senders a lap behind read it */
            deliver(ep, qid, p, s);
            n++;
        } else if (AM_STATE_LAP(s) == lap && AM_STATE_TYPE(s) == AM_CLAIMED) {
            if (!claimant_dead(ep, qid, head, s))
                return n;
            skip(ep, qid, p, head, s);
        } else {
            repair(ep, p, s, lap);
            return n;
        }
    }
}

/* Deliver every ready message of one of our shared queues, slipping behind
 * a one-way stream (slip.c); returns how many. */
int am__mpsc_drain(am_ep_t *ep, enum am_qid qid)
{
    return am__drained(ep, am__slip_drain(ep, qid, drain_ready));
}

/* Is the head of one of our queues waiting on a claim, as the last poll found
 * it?  (am_wait then sleeps only briefly: a dead claimant will never wake it.)
 * Derived from the heads, so delivery never has to clear anything. */
int am__stuck(const am_ep_t *ep)
{
    return ep->stuck[AM_REQUEST].ticket == ep->head[AM_REQUEST] + 1 ||
           ep->stuck[AM_REPLY].ticket == ep->head[AM_REPLY] + 1;
}

/* Is tail t of a queue of n packets a hint behind head, as the claim
 * algorithms whose tail trails may leave it (onecas, mpsc_send.c), by less than
 * half the laps a state can tell apart? */
static int hint_behind(const am_ep_t *ep, uint64_t t, uint64_t head, uint32_t n)
{
    return am__claim_tail_trails(ep->own.claim) && (int64_t)(head - t) > 0 &&
           head - t < ((uint64_t)(AM_LAP_MASK / 2) << __builtin_ctz(n));
}

/* Is any slot after the head's, up to a lap on, taken for its lap? */
static int taken_after(const struct am_queue_view *q, uint64_t head)
{
    for (uint64_t k = head + 1; k != head + q->packets_n; k++) {
        AO_t s = AO_load(&q->packets[k & (q->packets_n - 1)].state);
        if (AM_STATE_LAP(s) == am_lap(k, q->packets_n) && AM_STATE_TYPE(s) != AM_FREE)
            return 1;
    }
    return 0;
}

/* The packet tail always lies in [head, head + Q] (claims need a slot freed
 * for their lap, and the tail trails the claims by at most one), or for
 * onecas anywhere at most one lap-field's half behind head.  One elsewhere
 * was written by a broken or hostile peer: put it back to head; senders then
 * move it past the slots already claimed (mpsc_send.c), so nothing is lost that
 * was claimed.  Owner only; the CAS leaves a tail that moved meanwhile alone.
 * The shared copy of the head, which onecas senders read, is put right too. */
static void repair_tail(am_ep_t *ep, enum am_qid qid, struct am_queue_view *q)
{
    uint64_t head = ep->head[qid], t = AO_load(&q->send->tail);
    AO_store(&q->recv->head, head);
    if (t - head > q->packets_n && !hint_behind(ep, t, head, q->packets_n)) {
        if (AO_compare_and_swap_full(&q->send->tail, t, head))
            am__report_bad(ep, "impossible queue tail");
        return;
    }
    /* Slots are claimed in ticket order, so a head slot still free for its
     * lap with a later slot taken was jumped over by a sender a peer misled
     * (a tail or head moved forward): nobody will ever fill it.  Skip it; the
     * CAS leaves it to a sender that claims it meanwhile. */
    struct am_packet *p = &q->packets[head & (q->packets_n - 1)];
    AO_t free_now = AM_STATE(am_lap(head, q->packets_n), 0, AM_FREE);
    if (AO_load_acquire(&p->state) == free_now && taken_after(q, head) &&
        AO_compare_and_swap_full(&p->state, free_now,
                                 AM_STATE(am_lap(head, q->packets_n) + 1, 0, AM_FREE))) {
        ep->head[qid] = head + 1;
        AO_store(&q->recv->head, head + 1);
        am__report_bad(ep, "a slot the tail jumped over");
    }
}

/* The slots senders may claim next, tickets [tail, head + Q), each hold FREE
 * for its ticket's lap with no claimant, or a claim of that lap that names one
 * (the tail moved on meanwhile).  The head is ours and does not move here, so
 * a slot's ticket, hence its lap, is fixed.  Any other value a peer wrote, and
 * a sender would wait for that slot for ever: put it back to FREE.  The CAS
 * leaves a slot a sender claimed meanwhile alone. */
static void repair_free_slots(am_ep_t *ep, enum am_qid qid, struct am_queue_view *q)
{
    uint64_t head = ep->head[qid], t = AO_load(&q->send->tail);
    if (hint_behind(ep, t, head, q->packets_n))
        t = head;
    if (t - head > q->packets_n)
        return; /* repair_tail's */
    for (; t != head + q->packets_n; t++) {
        struct am_packet *p = &q->packets[t & (q->packets_n - 1)];
        AO_t lap = am_lap(t, q->packets_n), s = AO_load(&p->state);
        if ((AM_STATE_LAP(s) == lap &&
             (AM_STATE_TYPE(s) == AM_FREE) == (AM_STATE_WHO(s) == 0)) ||
            in_flight(ep, s, lap))
            continue;
        if (AO_compare_and_swap_full(&p->state, s, AM_STATE(lap, 0, AM_FREE)))
            am__report_bad(ep, "impossible packet state");
    }
}

/* The bulk tail's block is FREE for the tail's lap, or claimed (full, or a
 * claimant has yet to move the tail).  FREE for another lap means a peer moved
 * the tail: put it back to the lowest ticket a FREE block is waiting for (every
 * ticket below the real tail has been claimed, so that is where it was). */
static void repair_bulk_tail(am_ep_t *ep, struct am_queue_view *q)
{
    uint64_t t = AO_load(&q->send->bulk_tail), low = UINT64_MAX;
    AO_t s = AO_load(&q->bulk_state[t & (q->bulk_n - 1)].state);
    if (AM_STATE_TYPE(s) != AM_FREE || AM_STATE_LAP(s) == am_lap(t, q->bulk_n))
        return;
    for (uint32_t b = 0; b < q->bulk_n; b++) {
        AO_t sb = AO_load(&q->bulk_state[b].state);
        uint64_t k = (uint64_t)AM_STATE_LAP(sb) * q->bulk_n + b;
        if (AM_STATE_TYPE(sb) == AM_FREE && k < low)
            low = k;
    }
    if (AO_compare_and_swap_full(&q->send->bulk_tail, t, low))
        am__report_bad(ep, "impossible bulk tail");
}

/* Repair the bulk blocks and bulk tails, and take back the heap blocks, that
 * a sender asked about; on idle polls. */
static void orphans_asked(am_ep_t *ep)
{
    struct am_seg_shared *sh = ep->own.shared;
    for (int qid = 0; qid < 2; qid++) {
        if (AO_load(&sh->orphans[qid])) {
            AO_store(&sh->orphans[qid], 0);
            free_orphans(ep, (enum am_qid)qid);
            free_idle_claim(ep, &ep->own.q[qid]);
            repair_bulk_tail(ep, &ep->own.q[qid]);
        }
        if (AO_load(&sh->reclaim[qid])) {
            AO_store(&sh->reclaim[qid], 0);
            reclaim_heap(ep, (enum am_qid)qid);
        }
    }
}

/* The shared tails of our queues are sane.  Called every AM_TAIL_CHECK idle
 * polls, not more often: the tails' line is the senders' busiest. */
static void check_tails(am_ep_t *ep)
{
    for (int qid = 0; qid < 2; qid++) {
        repair_tail(ep, (enum am_qid)qid, &ep->own.q[qid]);
        repair_free_slots(ep, (enum am_qid)qid, &ep->own.q[qid]);
        repair_bulk_tail(ep, &ep->own.q[qid]);
        reclaim_heap(ep, (enum am_qid)qid); /* unasked too: nothing held for good */
    }
}

/* The shared queues' repairs, every AM_IDLE_CHORES idle polls (poll.c): the
 * bulk blocks and heap blocks senders asked for, and when `due` (every
 * AM_TAIL_CHECK idle polls) the shared tails.  Delivers nothing: 0. */
int am__mpsc_chores(am_ep_t *ep, int due)
{
    orphans_asked(ep);
    if (due)
        check_tails(ep);
    return 0;
}
