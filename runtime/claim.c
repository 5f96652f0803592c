/*
 * claim.c - how a sender claims a packet (and for bulk, a bulk block) in a
 * many-to-one queue.  This file and poll.c hold the whole protocol.
 *
 * The protocol (Lumetta & Culler, section 3, with lap-tagged slots):
 *   sender:   claim slot (FREE for lap L -> CLAIMED), fill it, release-store READY
 *   receiver: acquire-load READY at head, head++, run the handler,
 *             release-store FREE for lap L+1
 * Tails are free-running tickets; ticket t is slot t % N of lap t / N.
 *
 * lockfree (Figure 3): take ticket t by CAS on the tail (t -> t+1), then CAS the
 *   slot from AM_STATE(t/N, FREE) to AM_STATE(t/N, CLAIMED).  A ticket once
 *   taken is this sender's alone: nobody else can claim slot t % N for lap
 *   t / N, so a stalled sender never loses its slot to one a lap ahead, and one
 *   sender's messages keep their order.  Before its CAS on the tail a sender
 *   tests that slot t % N is already free for lap t / N (as test-and-test-and-set
 *   tests before it sets); if not, the queue is full and it backs off holding no
 *   ticket.  So no sender ever holds a ticket for a slot the receiver has not yet
 *   freed, and the slot CAS that follows cannot fail: when the queue is full,
 *   senders do not line up behind a descheduled ticket holder (a convoy, the
 *   ticket lock's weakness).  Bulk claims take a bulk block the same way first,
 *   then a packet (section 3.2): a sender holding the head packet never waits
 *   for a bulk block.
 * locked (Figure 2, any lock of locks/): under the queue's lock, if the tail's
 *   slot (and for bulk, the bulk tail's block) is FREE for its lap, mark it
 *   CLAIMED and advance the tail; otherwise unlock and let the caller back off.
 *   As in the lock-free claim, a sender first tests without the lock whether
 *   the queue is full, and if so backs off without queueing for the lock.
 *
 * Ordering: the claim CAS (full barrier) or the lock's acquire orders the
 * sender's reads of FREE before its writes of the packet; it pairs with the
 * receiver's release-store of FREE in poll.c, which follows its last read of
 * the packet and bulk data.
 *
 * am__claim_try() advances one claim as far as it can without waiting and says
 * whether it is complete; callers loop on it with backoff (send.c).  Any number
 * of senders may run it concurrently on one queue; `self` is the caller's index
 * in the segment's sender table, passed to the lock as its participant index.
 */
#include "internal.h"

#ifndef AO_HAVE_compare_and_swap_full
#error "shmam needs AO_compare_and_swap_full"
#endif
#ifndef AO_HAVE_fetch_compare_and_swap_full
#error "shmam needs AO_fetch_compare_and_swap_full"
#endif

/* Tests set this to widen the window between claim steps (a yield, a stall). */
void (*am__claim_stall_hook)(void);

static inline void stall_point(void)
{
    if (__builtin_expect(am__claim_stall_hook != NULL, 0))
        am__claim_stall_hook();
}

enum stage { TAKE_BULK, CLAIM_BULK, TAKE_PACKET, CLAIM_PACKET, DONE };

void am__claim_begin(struct am_claim_state *c, int want_bulk)
{
    c->want_bulk = want_bulk;
    c->stage = want_bulk ? TAKE_BULK : TAKE_PACKET;
}

/* State word of slot t % n in an array of one-line slots (packets, bulk states:
 * both keep their state word first in a 64-byte line). */
static volatile AO_t *slot_state(void *slots, uint64_t t, uint32_t n)
{
    return (volatile AO_t *)((char *)slots + (t & (n - 1)) * AM_LINE);
}

/* Paper, Figure 3, first loop, with a test first: ticket t by CAS from t to t+1,
 * taken only while slot t % n is free for lap t / n.  Returns 0 (no ticket)
 * when the queue is full.  The acquire pairs with the receiver's release-store
 * of FREE (poll.c), ordering its reads of the old message before our writes. */
static int take_ticket(volatile AO_t *tail, void *slots, uint32_t n, uint64_t *ticket)
{
    AO_t t = AO_load(tail), seen;
    for (;;) {
        AO_t s = AO_load_acquire(slot_state(slots, t, n));
        if (s != AM_STATE(t / n, AM_FREE)) {
            if (AM_STATE_LAP(s) != t / n)
                return 0; /* not yet freed for this lap: the queue is full */
            if ((seen = AO_load(tail)) == t)
                return 0; /* a state no sender wrote: let the receiver repair it */
            t = seen; /* slot t already taken: the tail moved on */
            continue;
        }
        if ((seen = AO_fetch_compare_and_swap_full(tail, t, t + 1)) == t)
            break;
        t = seen;
    }
    *ticket = t;
    return 1;
}

/* Second step: slot (or bulk block) t % n from FREE to CLAIMED for lap t / n. */
static int claim_slot(void *slots, uint64_t t, uint32_t n)
{
    AO_t lap = t / n;
    return AO_compare_and_swap_full(slot_state(slots, t, n), AM_STATE(lap, AM_FREE),
                                    AM_STATE(lap, AM_CLAIMED));
}

static int try_lockfree(struct am_queue_view *q, struct am_claim_state *c)
{
    switch (c->stage) {
    case TAKE_BULK:
        if (!take_ticket(&q->send->bulk_tail, q->bulk_state, q->bulk_n, &c->bulk_ticket))
            return 0;
        c->stage = CLAIM_BULK;
        stall_point();
        /* fall through */
    case CLAIM_BULK:
        if (!claim_slot(q->bulk_state, c->bulk_ticket, q->bulk_n))
            return 0;
        c->stage = TAKE_PACKET;
        /* fall through */
    case TAKE_PACKET:
        if (!take_ticket(&q->send->tail, q->packets, q->packets_n, &c->ticket))
            return 0;
        c->stage = CLAIM_PACKET;
        stall_point();
        /* fall through */
    case CLAIM_PACKET:
        if (!claim_slot(q->packets, c->ticket, q->packets_n))
            return 0;
        c->stage = DONE;
    }
    return 1;
}

/* Is the tail's slot of a queue free for its lap?  Called under the lock.  The
 * acquire pairs with the receiver's release-store of FREE (poll.c): its reads of
 * the old message happen before our writes of the new one. */
static int slot_free(volatile AO_t *state, uint64_t t, uint32_t n)
{
    return AO_load_acquire(state) == AM_STATE(t / n, AM_FREE);
}

/* Has the receiver freed the tail's slot for its lap yet?  Read without the lock,
 * a hint only (the lock holder decides): a slot of an earlier lap means the queue
 * is full, and then waiting for the lock would only queue us behind other
 * senders that will find it full too (with FIFO locks and more processes than
 * cores, a convoy).  A slot already taken for this lap means the tail moved on. */
static int queue_full(volatile AO_t *tail, void *slots, uint32_t n)
{
    uint64_t t = AO_load(tail);
    return AM_STATE_LAP(AO_load(slot_state(slots, t, n))) != t / n;
}

/* Figure 2: one attempt under the lock.  The lock's acquire/release order the
 * tail accesses between senders; slot states are written with plain stores
 * because only the lock holder may turn a FREE slot CLAIMED, and the receiver
 * never writes a FREE slot. */
static int try_locked(struct am_seg_view *v, struct am_queue_view *q,
                      struct am_claim_state *c, unsigned self)
{
    struct lock_ctx ctx = {.self = self};
    struct am_queue_send *s = q->send;
    int ok;
    if (queue_full(&s->tail, q->packets, q->packets_n) ||
        (c->want_bulk && queue_full(&s->bulk_tail, q->bulk_state, q->bulk_n)))
        return 0;
    v->lock->lock(q->lock, &ctx);
    uint64_t t = AO_load(&s->tail), bt = AO_load(&s->bulk_tail);
    volatile AO_t *ps = slot_state(q->packets, t, q->packets_n);
    volatile AO_t *bs = slot_state(q->bulk_state, bt, q->bulk_n);
    stall_point();
    ok = slot_free(ps, t, q->packets_n) && (!c->want_bulk || slot_free(bs, bt, q->bulk_n));
    if (ok) {
        AO_store(ps, AM_STATE(t / q->packets_n, AM_CLAIMED));
        AO_store(&s->tail, t + 1);
        if (c->want_bulk) {
            AO_store(bs, AM_STATE(bt / q->bulk_n, AM_CLAIMED));
            AO_store(&s->bulk_tail, bt + 1);
        }
        c->ticket = t;
        c->bulk_ticket = bt;
        c->stage = DONE;
    }
    v->lock->unlock(q->lock, &ctx);
    return ok;
}

int am__claim_try(struct am_seg_view *v, struct am_queue_view *q,
                  struct am_claim_state *c, unsigned self)
{
    if (v->claim == AM_CLAIM_LOCKFREE)
        return try_lockfree(q, c);
    return try_locked(v, q, c, self);
}
