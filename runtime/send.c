/*
 * send.c - the sender's half of the protocol, top to bottom: claim a packet
 * (and for bulk, a bulk block) in a many-to-one queue, fill it, publish it
 * READY, wake the receiver if it sleeps; then the public send calls.  poll.c
 * holds the receiver's half, senders.c the table that says who is sending and
 * who is alive.
 *
 * The protocol (Lumetta & Culler, section 3, with lap-tagged slots that name
 * their claimant):
 *   sender:   claim slot (FREE for lap L -> CLAIMED by me), fill it,
 *             release-store READY
 *   receiver: acquire-load READY at head, head++, run the handler,
 *             release-store FREE for lap L+1
 * Tails are free-running tickets; ticket t is slot t % N of lap t / N.
 *
 * lockfree (Figure 3, steps swapped): read the tail t, CAS slot t % N from
 *   AM_STATE(t/N, 0, FREE) to AM_STATE(t/N, me, CLAIMED), then CAS the tail from
 *   t to t+1.  The slot CAS is the claim, and it records the claimant in the
 *   same atomic step, so there is never a taken ticket whose taker is unknown: a
 *   sender that dies at any instruction leaves either nothing or a slot that
 *   names it.  The tail is a hint that trails the claims by at most one: a sender
 *   that finds the tail's slot already claimed for the tail's lap moves the tail
 *   on (helping a claimant that stalled or died before its tail CAS), so slots
 *   are claimed in ticket order.  A slot CAS succeeds only for the lap the sender
 *   read with the tail, so a sender stalled since reading it can never take a
 *   slot a lap later, and one sender's messages keep their order.  A slot not
 *   yet freed for the tail's lap means the queue is full: the sender backs off
 *   holding nothing.  Bulk claims take a bulk block the same way first, then a
 *   packet (section 3.2): a sender holding the head packet never waits for a
 *   bulk block.
 * onecas (one atomic read-modify-write per short message): the slot CAS of
 *   lockfree, from AM_STATE(lap, 0, FREE) to AM_STATE(lap, me, CLAIMED), is the
 *   whole claim; the tail is then a hint that the claimant plain-stores past
 *   its slot.  A store may move the hint back (a claimant stalled between its
 *   CAS and its store), never past an unclaimed slot, so every hint is at most
 *   the real tail, the lowest ticket whose slot is free for its lap.  A sender
 *   starts from the highest of the shared hint and its own (its last ticket +
 *   1, if at most a lap ahead), steps past slots taken for their lap, jumps
 *   to the receiver's head past a slot of a later lap (its hint is older than
 *   a lap), and claims the first slot free for its lap; so it never passes a
 *   free slot, claims stay
 *   in ticket order, and the lap tag keeps a stalled sender from a slot a lap
 *   later, as in lockfree.  A slot of an earlier lap: the queue is full.
 *   Bulk blocks are claimed as in lockfree.
 * locked (Figure 2, any lock of locks/): under the queue's lock, move the tail
 *   past any slot claimed for its lap (a holder that died between claiming and
 *   moving the tail), then, if the tail's slot (and for bulk, the bulk tail's
 *   block) is FREE for its lap, mark it CLAIMED by me and advance the tail;
 *   otherwise unlock and let the caller back off.  A sender first tests without
 *   the lock whether the queue is full, and if so backs off without queueing for
 *   the lock.  Locks record their holder, so a waiter takes over the lock of a
 *   holder that died (locks/lock.h); the repair above is all a take-over needs.
 *
 * Long messages.  A long message's data goes first into a block of the
 * destination queue's heap (heap/heap.h), allocated with our claimant id, then
 * a packet is claimed as for a short message and published READY with flag
 * AM_PKT_LONG naming the block; the receiver frees the block after the
 * handler.  Allocating before claiming keeps the copy off the queue (a sender
 * holding a block never holds up a packet slot) and, like bulk-before-packet,
 * never makes a packet's holder wait for memory.  A one-copy long message is
 * copied into the destination's region (region.c), then claimed the same
 * way, flagged AM_PKT_LONG_AT.  Per-sender order is the packets' order.
 *
 * Dead claimants.  A claim whose sender died is skipped by the receiver
 * (poll.c), which moves the tail past it first if nobody did.  A bulk block
 * claimed by a sender that died before publishing its packet is freed by the
 * receiver when asked (am__claim_orphans_ask, from a sender waiting for it); a
 * heap block likewise (reclaim_ask, from a sender finding the heap full).
 *
 * Ordering: the claim CAS (full barrier) or the lock's acquire orders the
 * sender's reads of FREE before its writes of the packet; it pairs with the
 * receiver's release-store of FREE in poll.c, which follows its last read of
 * the packet and bulk data.
 *
 * Claiming step by step.  am__claim_try() advances one claim as far as it can
 * without waiting and says whether it is complete (1), not yet (0), or
 * impossible (-EPIPE: the lock waiter gave up because the receiver died;
 * -EPROTO: the lock is garbage); am__send loops on it.  Any number of senders
 * may run it concurrently on one queue.
 *
 * Backing off.  While a claim cannot complete (queue full, lock busy, slot not
 * yet freed for our lap) the sender backs off exponentially and polls its own
 * endpoint: a request polls both queues, which breaks the deadlock of endpoints sending to
 * each other with full queues; a reply polls only the reply queue, since reply
 * handlers never send.  Once spinning has clearly failed the backoff yields the
 * processor.  Every round checks that the destination still lives (two plain
 * loads: its state and its owner's lifeline), so a send to a receiver that died
 * fails with -EPIPE, the first one after the death as well as one already
 * waiting; a bulk sender waiting on a block that a dead sender holds asks the
 * receiver to free it.  The poll may learn that the receiver has gone and
 * give its index to a new sender: the send holds its peer (peers.c), which
 * stays mapped but marked dropped, and the round ends the send with -EPIPE.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "internal.h"
#include "spin.h"

#ifndef AO_HAVE_compare_and_swap_full
#error "shmam needs AO_compare_and_swap_full"
#endif

/* Tests set this to widen the window between claim steps (a yield, a stall) or
 * to park a sender at one of them (enum am_hook); am__hook() calls it. */
void (*am__claim_stall_hook)(enum am_hook where);

enum stage { CLAIM_BULK, CLAIM_PACKET, DONE };

void am__claim_begin(struct am_claim_state *c, int want_bulk, unsigned who)
{
    c->want_bulk = want_bulk;
    c->who = who;
    c->hint = 0;
    c->stage = want_bulk ? CLAIM_BULK : CLAIM_PACKET;
}

/* State word of slot t % n in an array of one-line slots (packets, bulk states:
 * both keep their state word first in a 64-byte line). */
static volatile AO_t *slot_state(void *slots, uint64_t t, uint32_t n)
{
    return (volatile AO_t *)((char *)slots + (t & (n - 1)) * AM_LINE);
}

/* Is state s, of the slot of ticket t, claimed (or ready) for t's lap?  Then
 * ticket t is taken and the tail may move past it. */
static int taken(AO_t s, uint64_t t, uint32_t n)
{
    return AM_STATE_LAP(s) == am_lap(t, n) && AM_STATE_TYPE(s) != AM_FREE;
}

/* Lock-free: claim the slot at the tail for its lap, recording `who`, then move
 * the tail on (`hook` names the point between, for tests).  Returns 0 (holding
 * nothing) when the queue is full.  The acquire of the state pairs with the
 * receiver's release-store of FREE. */
static int claim_lockfree(volatile AO_t *tail, void *slots, uint32_t n, unsigned who,
                          enum am_hook hook, uint64_t *ticket)
{
    for (;;) {
        AO_t t = AO_load(tail);
        volatile AO_t *st = slot_state(slots, t, n);
        AO_t s = AO_load_acquire(st), lap = am_lap(t, n);
        if (s == AM_STATE(lap, 0, AM_FREE)) {
            if (!AO_compare_and_swap_full(st, s, AM_STATE(lap, who, AM_CLAIMED)))
                continue;
            am__hook(hook);
            AO_compare_and_swap(tail, t, t + 1);
            *ticket = t;
            return 1;
        }
        if (taken(s, t, n))
            AO_compare_and_swap(tail, t, t + 1); /* help a stalled or dead claimant */
        else if (AO_load(tail) == t)
            return 0; /* not yet freed for this lap: the queue is full */
    }
}

static int try_lockfree(struct am_queue_view *q, struct am_claim_state *c)
{
    switch (c->stage) {
    case CLAIM_BULK:
        if (!claim_lockfree(&q->send->bulk_tail, q->bulk_state, q->bulk_n, c->who,
                            AM_HOOK_BULK_CLAIMED, &c->bulk_ticket))
            return 0;
        c->stage = CLAIM_PACKET;
        /* fall through */
    case CLAIM_PACKET:
        if (!claim_lockfree(&q->send->tail, q->packets, q->packets_n, c->who,
                            AM_HOOK_CLAIMED, &c->ticket))
            return 0;
        c->stage = DONE;
    }
    return 1;
}

/* Is lap a after lap b (modulo the lap field)? */
static int lap_after(AO_t a, AO_t b)
{
    AO_t d = (a - b) & AM_LAP_MASK;
    return d != 0 && d <= AM_LAP_MASK / 2;
}

/* onecas: claim the first slot free for its lap from the highest hint, one CAS
 * (see the header).  Returns 0 (holding nothing) when the queue is full, or
 * after 2Q + 2 looks, which no honest queue needs (at most Q slots are taken
 * past a hint, and as many past the head): values a peer wrote into the tail,
 * the head or the states are repaired by the receiver (poll.c) while we back
 * off.  *hint moves only to our own claim + 1 and is used only within a lap
 * past the shared tail, so no such value stays with us.
 * The acquire of the state pairs with the receiver's release-store of FREE;
 * the receiver's head, read only when our hint is a lap old, is at most the
 * real tail too. */
static int claim_onecas(struct am_queue_view *q, unsigned who, uint64_t *hint,
                        uint64_t *ticket)
{
    uint32_t n = q->packets_n;
    uint64_t t = AO_load(&q->send->tail);
    if ((int64_t)(*hint - t) > 0 && *hint - t <= n)
        t = *hint; /* farther ahead, it is not ours: a peer wrote the tail */
    for (uint32_t look = 0; look < 2 * n + 2; look++) {
        volatile AO_t *st = slot_state(q->packets, t, n);
        AO_t s = AO_load_acquire(st), lap = am_lap(t, n);
        if (s == AM_STATE(lap, 0, AM_FREE)) {
            if (!AO_compare_and_swap_full(st, s, AM_STATE(lap, who, AM_CLAIMED)))
                continue;
            am__hook(AM_HOOK_CLAIMED);
            AO_store(&q->send->tail, t + 1);
            *ticket = t;
            *hint = t + 1;
            return 1;
        }
        if (AM_STATE_LAP(s) == lap && AM_STATE_TYPE(s) != AM_FREE)
            t++; /* taken */
        else if (lap_after(AM_STATE_LAP(s), lap)) {
            uint64_t h = AO_load(&q->recv->head); /* delivered: we are behind */
            t = (int64_t)(h - t) > 0 ? h : t + 1;
        } else
            return 0; /* not yet freed for this lap: full */
    }
    return 0;
}

static int try_onecas(struct am_queue_view *q, struct am_claim_state *c)
{
    if (c->stage == CLAIM_BULK) {
        if (!claim_lockfree(&q->send->bulk_tail, q->bulk_state, q->bulk_n, c->who,
                            AM_HOOK_BULK_CLAIMED, &c->bulk_ticket))
            return 0;
        c->stage = CLAIM_PACKET;
    }
    if (!claim_onecas(q, c->who, &c->hint, &c->ticket))
        return 0;
    c->stage = DONE;
    return 1;
}

/* Under the lock: move the tail past slots claimed for its lap (by a holder that
 * died before moving it), then say whether the tail's slot is free for its lap.
 * The receiver may move the tail past a dead claim too, hence the CAS.  The
 * acquire pairs with the receiver's release-store of FREE (poll.c). */
static int tail_free(volatile AO_t *tail, void *slots, uint32_t n, uint64_t *t)
{
    for (;;) {
        *t = AO_load(tail);
        AO_t s = AO_load_acquire(slot_state(slots, *t, n));
        if (s == AM_STATE(am_lap(*t, n), 0, AM_FREE))
            return 1;
        if (!taken(s, *t, n))
            return 0;
        AO_compare_and_swap(tail, *t, *t + 1);
    }
}

/* Has the receiver freed the tail's slot for its lap yet?  Read without the lock,
 * a hint only (the lock holder decides): a slot of an earlier lap means the queue
 * is full, and then waiting for the lock would only queue us behind other
 * senders that will find it full too (with FIFO locks and more processes than
 * cores, a convoy). */
static int queue_full(volatile AO_t *tail, void *slots, uint32_t n)
{
    uint64_t t = AO_load(tail);
    return AM_STATE_LAP(AO_load(slot_state(slots, t, n))) != am_lap(t, n);
}

/* Mark slot t claimed by `who` and move the tail past it; under the lock.
 * `hook` names the point between, for tests: a holder dying there leaves a
 * claimed slot behind the tail, which the next holder's tail_free passes. */
static void claim_under_lock(volatile AO_t *tail, void *slots, uint32_t n, uint64_t t,
                             unsigned who, enum am_hook hook)
{
    AO_store(slot_state(slots, t, n), AM_STATE(am_lap(t, n), who, AM_CLAIMED));
    am__hook(hook);
    AO_store(tail, t + 1);
}

/* A sender found a peer's segment unusable: say so once per process, naming the
 * endpoint, and fail the send.  Returns -EPROTO. */
int am__report_broken(const struct am_seg_view *v, const char *why)
{
    static int said;
    if (!said && (said = 1))
        fprintf(stderr, "shmam: endpoint %.*s: %s; sends to it fail with -EPROTO\n",
                (int)AM_NAME_MAX, v->hdr->name, why);
    return -EPROTO;
}

/* What a lock waiter may ask (lock.h): is a claimant dead, is the receiver? */
static int watch_dead(const void *v, unsigned who)
{
    return am__who_dead(v, who);
}

static int watch_give_up(const void *v)
{
    return !am__peer_alive(v);
}

/* Figure 2: one attempt under the lock.  The lock's acquire/release order the
 * tail accesses between senders; slot states are written with plain stores
 * because only the lock holder may turn a FREE slot CLAIMED, and the receiver
 * never writes a FREE slot. */
static int try_locked(struct am_seg_view *v, struct am_queue_view *q,
                      struct am_claim_state *c)
{
    const struct am_lock_watch watch = {watch_dead, watch_give_up, v};
    struct am_lock_ctx ctx = {.self = c->who, .procs = v->max_senders, .watch = &watch};
    struct am_queue_send *s = q->send;
    uint64_t t, bt = 0;
    if (queue_full(&s->tail, q->packets, q->packets_n) ||
        (c->want_bulk && queue_full(&s->bulk_tail, q->bulk_state, q->bulk_n)))
        return 0;
    int rc = v->lock->lock(q->lock, &ctx);
    if (rc == AM_LOCK_GAVE_UP)
        return -EPIPE;
    if (rc == AM_LOCK_BROKEN)
        return am__report_broken(v, "its queue's lock was overwritten");
    am__hook(AM_HOOK_LOCKED);
    int ok = (!c->want_bulk || tail_free(&s->bulk_tail, q->bulk_state, q->bulk_n, &bt)) &&
             tail_free(&s->tail, q->packets, q->packets_n, &t);
    if (ok && c->want_bulk) {
        claim_under_lock(&s->bulk_tail, q->bulk_state, q->bulk_n, bt, c->who,
                         AM_HOOK_BULK_CLAIMED);
        c->bulk_ticket = bt;
    }
    if (ok) {
        claim_under_lock(&s->tail, q->packets, q->packets_n, t, c->who, AM_HOOK_CLAIMED);
        c->ticket = t;
        c->stage = DONE;
    }
    v->lock->unlock(q->lock, &ctx);
    return ok;
}

int am__claim_try(struct am_seg_view *v, struct am_queue_view *q, struct am_claim_state *c)
{
    if (v->claim == AM_CLAIM_LOCKFREE)
        return try_lockfree(q, c);
    if (v->claim == AM_CLAIM_ONECAS)
        return try_onecas(q, c);
    return try_locked(v, q, c);
}

/* A sender waiting for a bulk block: if the block at the bulk tail is held by a
 * dead claimant, or its state is one no sender writes (a ready type, free for
 * another lap or naming a claimant, claimed for a lap other than the tail's or
 * the one before), ask the receiver to repair the bulk blocks (it alone may:
 * only it knows which ones a queued packet still uses) and wake it.  Any
 * sender, any time; costs a few loads. */
void am__claim_orphans_ask(struct am_seg_view *v, enum am_qid qid)
{
    struct am_queue_view *q = &v->q[qid];
    uint64_t bt = AO_load(&q->send->bulk_tail);
    AO_t s = AO_load(slot_state(q->bulk_state, bt, q->bulk_n));
    int lap_ok = am_block_claim_lap_ok(s, bt, (uint32_t)bt & (q->bulk_n - 1), q->bulk_n);
    if ((AM_STATE_TYPE(s) == AM_CLAIMED && lap_ok && !am__who_dead(v, AM_STATE_WHO(s))) ||
        s == AM_STATE(am_lap(bt, q->bulk_n), 0, AM_FREE))
        return;
    AO_store(&v->shared->orphans[qid], 1);
    am__wake(v->shared);
}

/* ---- fill, publish, wake; the send calls ---------------------------------- */

#define AM_ORPHAN_EVERY 64 /* yields between looks for a dead sender's bulk block */

/* Poll ep as a send blocked on queue qid may (am_wait with a transport too,
 * as AM_REQUEST): a request both queues (and messages held during am_init),
 * a reply only the reply queue; and, with a transport, ask it too whenever
 * that poll found nothing and did not just ask it (net_tick 0), so a wait on
 * it makes progress every round.  Messages run. */
int am__blocked_poll(am_ep_t *ep, enum am_qid qid)
{
    int n = qid == AM_REQUEST ? am__poll(ep) : am__drain(ep, AM_REPLY);
    if (n == 0 && ep->net && (qid == AM_REPLY || ep->net_tick != 0))
        n = am__net_poll(ep, qid == AM_REPLY);
    return n;
}

/* One round of waiting for room in peer's queue qid (or its heap), inside a
 * peer hold, so the poll may drop the peer but not free it (peers.c).  A
 * peer dropped is one whose owner has gone, and its index may already name
 * another endpoint: the send ends with -EPIPE, never goes on to that one.
 * Once spinning has clearly failed, every AM_ORPHAN_EVERY yields, `ask` (if
 * any) asks the receiver to take back what dead senders hold. */
int am__backoff(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                void (*ask)(struct am_seg_view *, enum am_qid), struct spin *sp,
                unsigned *yields)
{
    am__hook(AM_HOOK_BACKOFF);
    am__blocked_poll(ep, qid);
    if (peer->dropped || !am__peer_alive(peer->view))
        return -EPIPE;
    if (spin_wait(sp) && ask && ++*yields % AM_ORPHAN_EVERY == 0)
        ask(peer->view, qid);
    return 0;
}

/* A sender finding dest's heap full: ask the receiver to free the blocks dead
 * senders hold (poll.c), and wake it. */
static void reclaim_ask(struct am_seg_view *v, enum am_qid qid)
{
    AO_store(&v->shared->reclaim[qid], 1);
    am__wake(v->shared);
}

/* Add a send's backoff rounds to our entry's count in the peer's segment, for
 * tools: one store (to our own entry page) per send that waited, not one per
 * round, which cost the many-to-one test 13% of its throughput. */
void am__count_backoffs(struct am_peer *peer, unsigned rounds)
{
    peer->backoffs += rounds;
    AO_store(&am__sender(peer->view, peer->sender_index)->backoffs, peer->backoffs);
}

/* Fill a claimed packet (and bulk block) and hand it to the receiver.  Only the
 * sender that completed claim `c` may call it, once.  A long message's data
 * is in place already (staged in the heap, or written into the region). */
void am__packet_fill(struct am_packet *p, const struct am_msg *m, unsigned char *bulk,
                     uint64_t bulk_ticket)
{
    static const uint8_t flags[] = {[AM_LONG] = AM_PKT_LONG, [AM_LONG_AT] = AM_PKT_LONG_AT};
    am__hook(AM_HOOK_FILLING);
    p->handler = (uint16_t)m->handler;
    p->nargs = (uint8_t)m->nargs;
    p->flags = flags[m->kind];
    p->bulk_len = (uint32_t)m->len;
    p->bulk_ticket = m->off;
    if (m->nargs)
        memcpy(p->args, m->args, (size_t)m->nargs * sizeof *m->args);
    if (m->kind == AM_BULK) {
        const unsigned char *d = m->data;
        p->bulk_ticket = bulk_ticket;
        memcpy(bulk, d, m->len / 2);
        am__hook(AM_HOOK_BULK_HALF);
        memcpy(bulk + m->len / 2, d + m->len / 2, m->len - m->len / 2);
    }
}

void am__publish(struct am_queue_view *q, const struct am_claim_state *c,
                 const struct am_msg *m)
{
    struct am_packet *p = &q->packets[c->ticket & (q->packets_n - 1)];
    am__packet_fill(p, m, q->bulk + (c->bulk_ticket & (q->bulk_n - 1)) * AM_BULK_BYTES,
                    c->bulk_ticket);
    /* Pairs with the receiver's acquire-load of the state in poll.c: everything
     * written above (and a long message's data) is visible once READY is. */
    AO_store_release(&p->state, AM_STATE(am_lap(c->ticket, q->packets_n), c->who,
                                         m->kind == AM_BULK ? AM_READY_BULK : AM_READY));
}

/* Can this CPU prefetch a line for writing (PREFETCHW: CPUID 0x80000001
 * ECX bit 8, AMD's 3DNow! prefetch and Intel's PRFCHW alike)?  Asked once. */
static int can_prefetchw(void)
{
#if defined(__x86_64__) || defined(__i386__)
    static int known = -1;
    if (known < 0) {
        unsigned a, b, c = 0, d;
        known = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 8));
    }
    return known;
#else
    return 0;
#endif
}

/* A sender streaming into queue q (no message delivered to us since our last
 * send there) asks, after publishing ticket t, for the line of the slot it
 * will most likely claim two sends on, for writing.  The receiver freed that
 * slot a lap ago and holds its line; fetched now, the claim CAS finds it
 * ours instead of stalling for it (bench/README.md, the line table).  Two,
 * not one: slots t and t + 1 may share a 128-byte pair that the receiver is
 * reading.  Not for a round trip (a reply came in between): there the fetch
 * only contends with the receiver, and round trips measured slower.  A hint:
 * another sender may take the slot. */
static void prefetch_ahead(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                           const struct am_queue_view *q, uint64_t t)
{
    const void *line = &q->packets[(t + 2) & (q->packets_n - 1)];
    if (ep->delivered == peer->streaming[qid]) {
#if defined(__x86_64__) || defined(__i386__)
        if (can_prefetchw())
            __asm__ volatile("prefetchw %0" : : "m"(*(const char *)line));
        else
#endif
            __builtin_prefetch(line, 1);
    }
    peer->streaming[qid] = ep->delivered;
}

/* Wake the receiver if it sleeps in am_wait.  The full barrier orders our READY
 * store before the load of `sleeping`; am_wait stores `sleeping` and fences
 * before its last poll, so either it sees our packet or we see it asleep. */
void am__wake_if_asleep(struct am_seg_shared *h)
{
    AO_nop_full();
    if (AO_int_load(&h->sleeping))
        am__wake(h);
}

/* Arguments a send may take to peer view v: -EINVAL, -EMSGSIZE or 0. */
int am__check_msg(const struct am_msg *m, size_t long_max)
{
    if (m->handler >= AM_HANDLER_TOTAL || m->nargs < 0 || (m->nargs > 0 && !m->args) ||
        (m->len > 0 && !m->data))
        return -EINVAL;
    size_t max = m->kind == AM_BULK      ? AM_BULK_BYTES
                 : m->kind == AM_LONG    ? long_max
                 : m->kind == AM_LONG_AT ? AM_PACKET_LEN_MAX
                                         : 0;
    return m->nargs > AM_MAX_ARGS || m->len > max ? -EMSGSIZE : 0;
}

/* A long message's data, copied into a block of the destination queue's heap
 * allocated with our claimant id, before the packet is claimed (so the copy
 * never holds up the queue).  While the heap is full, back off and poll as for
 * a full queue; now and then ask the receiver to take back blocks that dead
 * senders hold.  0 (m->off names the block), or -EPIPE, -EMSGSIZE, -EPROTO. */
static int stage_long(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, struct am_msg *m)
{
    struct am_seg_view *v = peer->view;
    struct spin sp = SPIN_INIT;
    unsigned yields = 0;
    int rc;
    void *block;
    while ((rc = am_heap_alloc(&v->q[qid].heap, m->len, peer->who, &m->off)) == -ENOMEM)
        if ((rc = am__backoff(ep, peer, qid, reclaim_ask, &sp, &yields)) < 0)
            return rc;
    if (rc == -EMSGSIZE)
        return rc;
    if (rc < 0 || !(block = am_heap_data(&v->q[qid].heap, m->off, m->len, peer->who)))
        return am__report_broken(v, "its heap is corrupt");
    if (m->len)
        memcpy(block, m->data, m->len);
    am__hook(AM_HOOK_LONG_STAGED);
    return 0;
}

/* Claim a packet (and bulk block) in v's queue, backing off while it is full. */
static int claim(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                 struct am_claim_state *c, int bulk)
{
    struct am_seg_view *v = peer->view;
    struct spin sp = SPIN_INIT;
    unsigned yields = 0, rounds = 0;
    int rc;
    am__claim_begin(c, bulk, peer->who);
    c->hint = peer->tail_hint[qid];
    while ((rc = am__claim_try(v, &v->q[qid], c)) <= 0) {
        if (rc < 0 || (rc = am__backoff(ep, peer, qid, bulk ? am__claim_orphans_ask : NULL,
                                        &sp, &yields)) < 0)
            return rc;
        rounds++;
    }
    peer->tail_hint[qid] = c->hint;
    if (rounds)
        am__count_backoffs(peer, rounds);
    return 0;
}

/* Send m to `peer`'s queue qid, within a peer hold (see am__send). */
static int send_to(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, struct am_msg *m)
{
    struct am_seg_view *v = peer->view;
    int rc = am__check_msg(m, v->long_max);
    if (rc < 0)
        return rc;
    if (!am__peer_alive(v))
        return -EPIPE;
    if (m->kind == AM_LONG && (rc = stage_long(ep, peer, qid, m)) < 0)
        return rc;
    if (m->kind == AM_LONG_AT && (rc = am__region_write(peer, m)) < 0)
        return rc;
    struct am_claim_state c;
    if (v->queue != AM_QUEUE_MPSC)
        rc = am__chan_send(ep, peer, qid, m);
    else if ((rc = claim(ep, peer, qid, &c, m->kind == AM_BULK)) == 0) {
        am__publish(&v->q[qid], &c, m);
        am__wake_if_asleep(v->shared);
        prefetch_ahead(ep, peer, qid, &v->q[qid], c.ticket);
    }
    if (rc < 0 && m->kind == AM_LONG)
        am_heap_free(&v->q[qid].heap, m->off, peer->who);
    return rc;
}

/* Send message m to peer `dest`'s queue `qid`.  Called by the endpoint's
 * owning thread only (endpoints are not thread-safe).  The send holds its
 * peer across the polls of its backoff: a peer hold (peers.c). */
int am__send(am_ep_t *ep, unsigned dest, enum am_qid qid, struct am_msg *m)
{
    if (__builtin_expect(ep->net != NULL, 0) && am__net_remote(ep->net, dest))
        return ep->net->ops->send(ep, dest, qid, m);
    struct am_peer *peer = am__peer(ep, dest);
    if (!peer)
        return dest == AM_SOURCE_UNKNOWN ? -EPIPE : -EINVAL;
    ep->peer_holds++;
    int rc = send_to(ep, peer, qid, m);
    am__peers_unhold(ep);
    return rc;
}

/* The request calls: from the owner, outside handlers. */
static int request(am_ep_t *ep, unsigned dest, struct am_msg *m)
{
    if (!am__ep_ok(ep) || m->handler >= AM_MAX_HANDLERS ||
        (m->kind != AM_SHORT && !m->data && m->len))
        return -EINVAL;
    if (ep->in_handler)
        return -EDEADLK;
    return am__send(ep, dest, AM_REQUEST, m);
}

int am_request(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
               int nargs)
{
    struct am_msg m = {AM_SHORT, handler, args, nargs, NULL, 0, 0};
    return request(ep, dest, &m);
}

int am_request_bulk(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_BULK, handler, args, nargs, data, len, 0};
    return data ? request(ep, dest, &m) : -EINVAL;
}

int am_request_long(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_LONG, handler, args, nargs, data, len, 0};
    return request(ep, dest, &m);
}

int am_request_long_at(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                       size_t len, size_t offset, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_LONG_AT, handler, args, nargs, data, len, offset};
    return request(ep, dest, &m);
}

/* The reply calls: from a request handler, once per request. */
static int reply(am_token_t *tok, struct am_msg *m)
{
    if (!tok || !am__ep_ok(tok->ep) || m->handler >= AM_MAX_HANDLERS ||
        (m->kind != AM_SHORT && !m->data && m->len))
        return -EINVAL;
    if (tok->qid != AM_REQUEST)
        return -EDEADLK;
    if (tok->replied)
        return -EALREADY;
    int rc = am__send(tok->ep, tok->source, AM_REPLY, m);
    if (rc == 0)
        tok->replied = 1;
    return rc;
}

int am_reply(am_token_t *tok, unsigned handler, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_SHORT, handler, args, nargs, NULL, 0, 0};
    return reply(tok, &m);
}

int am_reply_bulk(am_token_t *tok, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_BULK, handler, args, nargs, data, len, 0};
    return data ? reply(tok, &m) : -EINVAL;
}

int am_reply_long(am_token_t *tok, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_LONG, handler, args, nargs, data, len, 0};
    return reply(tok, &m);
}

int am_reply_long_at(am_token_t *tok, unsigned handler, const void *data, size_t len,
                     size_t offset, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_LONG_AT, handler, args, nargs, data, len, offset};
    return reply(tok, &m);
}

unsigned am_token_source(const am_token_t *tok)
{
    return tok ? tok->source : AM_SOURCE_UNKNOWN;
}

am_ep_t *am_token_ep(const am_token_t *tok)
{
    return tok ? tok->ep : NULL;
}
