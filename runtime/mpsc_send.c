/*
 * mpsc_send.c - the sender's half of the shared (many-to-one) queue, top to
 * bottom: claim a packet (and for bulk, a bulk block), fill it, publish it
 * READY.  mpsc_poll.c holds the receiver's half, send.c the front door every
 * transport shares (checks, long-message staging, backoff, waking, the send
 * calls), senders.c the table that says who is sending and who is alive.
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
 *   bulk block.  A medium message (layout.h) is claimed as a short one: its
 *   payload area belongs to the slot, so the slot's claim is the area's.
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
 * Batches (am_request_batch, send.c).  A run of a batch's short and medium
 * messages is claimed together, never waiting while it holds a claim:
 * lockfree takes slot after slot with its per-slot CAS and tail CAS; onecas
 * CASes the first free slot as above, then each next slot while it is FREE
 * for its own lap (the same lap tag: a stalled sender never takes a slot a
 * lap later), and stores the tail hint once, past the last; a lock holder
 * marks the tail's slot and the free ones after it CLAIMED and moves the
 * tail once.  The run stops at the first slot not free, so claims stay in
 * ticket order and the batch's messages take its tickets in order; what was
 * claimed is published, in that order, before the next run is claimed, and
 * the receiver is woken before any claim that waits.  A bulk message with a
 * block is claimed alone, as am__mpsc_send claims it.  A sender dying in a
 * run leaves claims that name it, skipped as any dead claim is; one dying
 * under the lock before its tail move leaves claimed slots behind the tail,
 * which the next holder passes.
 *
 * Dead claimants.  A claim whose sender died is skipped by the receiver
 * (mpsc_poll.c), which moves the tail past it first if nobody did.  A bulk block
 * claimed by a sender that died before publishing its packet is freed by the
 * receiver when asked (am__claim_orphans_ask, from a sender waiting for it); a
 * heap block likewise (reclaim_ask, from a sender finding the heap full).
 * Idle claims.  A live sender's bulk claim that no packet will ever use (its
 * packet was dropped as corrupt, a peer overwrote the block's state, or its
 * send gave up holding it) is freed the same way: each sender counts in its
 * own entry the bulk claims it began and ended (am__claim_try_counted), so
 * the receiver tells a claim in flight from one that is not.
 *
 * Ordering: the claim CAS (full barrier) or the lock's acquire orders the
 * sender's reads of FREE before its writes of the packet; it pairs with the
 * receiver's release-store of FREE in mpsc_poll.c, which follows its last read of
 * the packet and bulk data.
 *
 * Claiming step by step.  am__claim_try() advances one claim as far as it can
 * without waiting and says whether it is complete (1), not yet (0), or
 * impossible (-EPIPE: the lock waiter gave up because the receiver died;
 * -EPROTO: the lock is garbage); am__send loops on it.  Any number of senders
 * may run it concurrently on one queue.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "internal.h"
#include "mpsc.h"
#include "send.h"
#include "senders.h"
#include "spin.h"
#include "waiting.h"

#ifndef AO_HAVE_compare_and_swap_full
#error "shmam needs AO_compare_and_swap_full"
#endif

enum stage { CLAIM_BULK, CLAIM_PACKET, DONE };

void am__claim_begin(struct am_claim_state *c, int want_bulk, unsigned who)
{
    c->want_bulk = want_bulk;
    c->bulk_only = 0;
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
        c->stage = c->bulk_only ? DONE : CLAIM_PACKET;
        if (c->bulk_only)
            return 1;
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

/* A batch's run (onecas, and the lock holder's): claim slot t too if it is
 * free for t's lap, one CAS, the lap tag as in every claim: slots after our
 * last claim are taken in ticket order, never one a lap later.  The acquire
 * pairs with the receiver's release-store of FREE. */
static int claim_next(struct am_queue_view *q, uint64_t t, unsigned who)
{
    volatile AO_t *st = slot_state(q->packets, t, q->packets_n);
    AO_t lap = am_lap(t, q->packets_n), s = AO_load_acquire(st);
    return s == AM_STATE(lap, 0, AM_FREE) &&
           AO_compare_and_swap_full(st, s, AM_STATE(lap, who, AM_CLAIMED));
}

/* onecas: claim the first slot free for its lap from the highest hint, one CAS
 * (see the header), and up to k - 1 more after it while they are free (a
 * batch's run: one tail store for all; ticket[] gets them, in order).
 * Returns how many, 0 (holding nothing) when the queue is full, or
 * after 2Q + 2 looks, which no honest queue needs (at most Q slots are taken
 * past a hint, and as many past the head): values a peer wrote into the tail,
 * the head or the states are repaired by the receiver (mpsc_poll.c) while we back
 * off.  *hint moves only to our own claim + 1 and is used only within a lap
 * past the shared tail, so no such value stays with us.
 * The acquire of the state pairs with the receiver's release-store of FREE;
 * the receiver's head, read only when our hint is a lap old, is at most the
 * real tail too. */
static int claim_onecas(struct am_queue_view *q, unsigned who, uint64_t *hint,
                        uint64_t *ticket, int k)
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
            int got = 1;
            ticket[0] = t;
            while (got < k && claim_next(q, t + got, who))
                ticket[got] = t + got, got++;
            am__hook(AM_HOOK_CLAIMED);
            AO_store(&q->send->tail, t + got); /* one move for the run */
            *hint = t + got;
            return got;
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
        c->stage = c->bulk_only ? DONE : CLAIM_PACKET;
        if (c->bulk_only)
            return 1;
    }
    if (!claim_onecas(q, c->who, &c->hint, &c->ticket, 1))
        return 0;
    c->stage = DONE;
    return 1;
}

/* Under the lock: move the tail past slots claimed for its lap (by a holder that
 * died before moving it), then say whether the tail's slot is free for its lap.
 * The receiver may move the tail past a dead claim too, hence the CAS.  The
 * acquire pairs with the receiver's release-store of FREE (mpsc_poll.c). */
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
static int lock_queue(struct am_seg_view *v, struct am_queue_view *q,
                      struct am_lock_ctx *ctx)
{
    int rc = v->lock->lock(q->lock, ctx);
    if (rc == AM_LOCK_GAVE_UP)
        return -EPIPE;
    if (rc == AM_LOCK_BROKEN)
        return am__report_broken(v, "its queue's lock was overwritten");
    am__hook(AM_HOOK_LOCKED);
    return 0;
}

static int try_locked(struct am_seg_view *v, struct am_queue_view *q,
                      struct am_claim_state *c)
{
    const struct am_lock_watch watch = {watch_dead, watch_give_up, v};
    struct am_lock_ctx ctx = {.self = c->who, .procs = v->max_senders, .watch = &watch};
    struct am_queue_send *s = q->send;
    uint64_t t = 0, bt = 0;
    if ((!c->bulk_only && queue_full(&s->tail, q->packets, q->packets_n)) ||
        (c->want_bulk && queue_full(&s->bulk_tail, q->bulk_state, q->bulk_n)))
        return 0;
    int rc = lock_queue(v, q, &ctx);
    if (rc < 0)
        return rc;
    int ok = (!c->want_bulk || tail_free(&s->bulk_tail, q->bulk_state, q->bulk_n, &bt)) &&
             (c->bulk_only || tail_free(&s->tail, q->packets, q->packets_n, &t));
    if (ok && c->want_bulk) {
        claim_under_lock(&s->bulk_tail, q->bulk_state, q->bulk_n, bt, c->who,
                         AM_HOOK_BULK_CLAIMED);
        c->bulk_ticket = bt;
        c->stage = c->bulk_only ? DONE : c->stage;
    }
    if (ok && !c->bulk_only) {
        claim_under_lock(&s->tail, q->packets, q->packets_n, t, c->who, AM_HOOK_CLAIMED);
        c->ticket = t;
        c->stage = DONE;
    }
    v->lock->unlock(q->lock, &ctx);
    return ok;
}

/* A batch's run under one lock hold: the tail's slot and up to k - 1 after
 * it while they are free for their laps, marked CLAIMED by `who` (plain
 * stores, as in try_locked), then one tail move past them all.  A holder
 * dying before that move leaves claimed slots behind the tail, which the next
 * holder's tail_free passes one by one.  How many (ticket[] gets them, in
 * order), 0 when the queue is full, or try_locked's errors. */
static int try_locked_run(struct am_seg_view *v, struct am_queue_view *q, unsigned who,
                          int k, uint64_t *ticket)
{
    const struct am_lock_watch watch = {watch_dead, watch_give_up, v};
    struct am_lock_ctx ctx = {.self = who, .procs = v->max_senders, .watch = &watch};
    struct am_queue_send *s = q->send;
    uint32_t n = q->packets_n;
    uint64_t t;
    int got = 0;
    if (queue_full(&s->tail, q->packets, n))
        return 0;
    int rc = lock_queue(v, q, &ctx);
    if (rc < 0)
        return rc;
    if (tail_free(&s->tail, q->packets, n, &t)) {
        do {
            AO_store(slot_state(q->packets, t + got, n),
                     AM_STATE(am_lap(t + got, n), who, AM_CLAIMED));
            ticket[got] = t + got;
            got++;
        } while (got < k && AO_load_acquire(slot_state(q->packets, t + got, n)) ==
                                AM_STATE(am_lap(t + got, n), 0, AM_FREE));
        am__hook(AM_HOOK_CLAIMED);
        AO_store(&s->tail, t + got); /* one move for the run */
    }
    v->lock->unlock(q->lock, &ctx);
    return got;
}

/* A batch's run of up to k packets (no bulk blocks) without waiting: how
 * many were claimed (ticket[], in ticket order), 0 (holding nothing) when the
 * queue is full, or -EPIPE, -EPROTO.  lockfree claims slot by slot (each its
 * CAS and its tail CAS); onecas and the locks take the run in one go. */
int am__claim_some(struct am_seg_view *v, struct am_queue_view *q, unsigned who,
                   uint64_t *hint, int k, uint64_t *ticket)
{
    int got = 0;
    if (v->claim == AM_CLAIM_ONECAS)
        return claim_onecas(q, who, hint, ticket, k);
    if (v->claim != AM_CLAIM_LOCKFREE)
        return try_locked_run(v, q, who, k, ticket);
    while (got < k && claim_lockfree(&q->send->tail, q->packets, q->packets_n, who,
                                     AM_HOOK_CLAIMED, &ticket[got]))
        got++;
    return got;
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
 * dead claimant or by a live one with no bulk claim in flight, or its state is
 * one no sender writes (a ready type, free for another lap or naming a
 * claimant, claimed for a lap other than the tail's or the one before), ask
 * the receiver to repair the bulk blocks (it alone may:
 * only it knows which ones a queued packet still uses) and wake it.  Any
 * sender, any time; costs a few loads. */
void am__claim_orphans_ask(struct am_seg_view *v, enum am_qid qid)
{
    struct am_queue_view *q = &v->q[qid];
    uint64_t bt = AO_load(&q->send->bulk_tail);
    AO_t s = AO_load(slot_state(q->bulk_state, bt, q->bulk_n));
    int lap_ok = am_block_claim_lap_ok(s, bt, (uint32_t)bt & (q->bulk_n - 1), q->bulk_n);
    AO_t begun;
    if ((AM_STATE_TYPE(s) == AM_CLAIMED && lap_ok && !am__who_dead(v, AM_STATE_WHO(s)) &&
         !am__who_bulk_idle(v, AM_STATE_WHO(s), &begun)) ||
        s == AM_STATE(am_lap(bt, q->bulk_n), 0, AM_FREE))
        return;
    AO_store(&v->shared->orphans[qid], 1);
    am__wake(v->shared);
}

void am__publish(struct am_queue_view *q, const struct am_claim_state *c,
                 const struct am_msg *m)
{
    uint32_t i = (uint32_t)(c->ticket & (q->packets_n - 1));
    struct am_packet *p = &q->packets[i];
    unsigned char *area =
        m->kind == AM_MEDIUM ? q->medium + (size_t)i * AM_MEDIUM_BYTES /* the slot's */
                             : q->bulk + (c->bulk_ticket & (q->bulk_n - 1)) * AM_BULK_BYTES;
    am__packet_fill(p, m, area, c->bulk_ticket);
    /* Pairs with the receiver's acquire-load of the state in mpsc_poll.c: everything
     * written above (a medium message's payload area too, and a long message's
     * data) is visible once READY is. */
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
    if (ep->mt.shared)
        return; /* ep->delivered is the serving threads' (threads.h) */
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

/* Begun before the claim (full barrier: before its CAS or store, for
 * am__who_bulk_began); ended at once if it took no block.  Threads of a
 * shared endpoint share the entry, hence the atomic adds. */
int am__claim_try_counted(struct am_seg_view *v, struct am_queue_view *q,
                          struct am_claim_state *c, struct am_sender *me)
{
    if (c->stage != CLAIM_BULK)
        return am__claim_try(v, q, c);
    AO_fetch_and_add1_full(&me->bulk_begun);
    int rc = am__claim_try(v, q, c);
    if (c->stage == CLAIM_BULK)
        am__claim_bulk_ended(me);
    return rc;
}

/* Release: after the publish or the give-up (am__who_bulk_idle's acquire). */
void am__claim_bulk_ended(struct am_sender *me)
{
    AO_fetch_and_add1_release(&me->bulk_ended);
}

/* Is the bulk block a claim waits for the one a loan of ours in place holds
 * (peer->lent: its ticket + 1)?  Only the loan's commit or cancel frees it:
 * waiting would be for ever. */
static int own_loan_blocks(const struct am_peer *peer, const struct am_queue_view *q,
                           enum am_qid qid)
{
    uint64_t lent = peer->lent[qid];
    return lent && AO_load(&q->send->bulk_tail) - (lent - 1) >= q->bulk_n;
}

/* Claim a packet (and bulk block) in v's queue, backing off while it is full;
 * -EBUSY if the block it needs is held by a loan of ours (own_loan_blocks).
 * A bulk claim that took its block is ended by am__mpsc_send once published,
 * or here if the send gives up holding it (the receiver may then free it). */
static int claim(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                 struct am_claim_state *c, int bulk, int bulk_only)
{
    struct am_seg_view *v = peer->view;
    struct am_sender *me = am__sender(v, peer->sender_index);
    struct spin sp = SPIN_INIT;
    unsigned yields = 0, rounds = 0;
    int rc;
    am__claim_begin(c, bulk, peer->who);
    c->bulk_only = bulk_only;
    c->hint = peer->tail_hint[qid];
    while ((rc = am__claim_try_counted(v, &v->q[qid], c, me)) <= 0) {
        if (rc == 0 && c->stage == CLAIM_BULK && own_loan_blocks(peer, &v->q[qid], qid))
            rc = -EBUSY;
        if (rc < 0 || (rc = am__backoff(ep, peer, qid, bulk ? am__claim_orphans_ask : NULL,
                                        &sp, &yields)) < 0) {
            if (bulk && c->stage != CLAIM_BULK) /* took its block, not the packet */
                am__claim_bulk_ended(me);
            return rc;
        }
        rounds++;
    }
    peer->tail_hint[qid] = c->hint;
    if (rounds)
        am__count_backoffs(peer, rounds);
    return 0;
}

/* Send m to peer's shared queue qid (send.c has checked it and staged a long
 * message's data): claim, publish, wake the receiver, prefetch the next slot. */
int am__mpsc_send(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                  const struct am_msg *m)
{
    struct am_seg_view *v = peer->view;
    struct am_claim_state c;
    int rc = claim(ep, peer, qid, &c, m->kind == AM_BULK, 0);
    if (rc < 0)
        return rc;
    am__publish(&v->q[qid], &c, m);
    if (m->kind == AM_BULK)
        am__claim_bulk_ended(am__sender(v, peer->sender_index));
    am__slip_sent(&ep->sends);
    am__wake_if_asleep(peer);
    prefetch_ahead(ep, peer, qid, &v->q[qid], c.ticket);
    return 0;
}

/* Claim a run of up to k packets in peer's queue qid, backing off while it
 * is full (holding nothing then; first waking the receiver if *unwoken, for
 * what the batch published before): how many, or the errors of a send. */
static int claim_run(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, int k,
                     uint64_t *ticket, int *unwoken)
{
    struct am_seg_view *v = peer->view;
    struct spin sp = SPIN_INIT;
    unsigned yields = 0, rounds = 0;
    uint64_t hint = peer->tail_hint[qid];
    int got;
    while ((got = am__claim_some(v, &v->q[qid], peer->who, &hint, k, ticket)) <= 0) {
        if (got == 0 && *unwoken)
            am__wake_if_asleep(peer), *unwoken = 0;
        if (got < 0 || (got = am__backoff(ep, peer, qid, NULL, &sp, &yields)) < 0)
            return got;
        rounds++;
    }
    peer->tail_hint[qid] = hint;
    if (rounds)
        am__count_backoffs(peer, rounds);
    return got;
}

/* A batch (send.h): runs of short and medium messages share a claim
 * (claim_run), each bulk message with a block is claimed as am__mpsc_send
 * claims it; everything claimed is published, in ticket order, before the
 * next claim, and the receiver woken once at the end, or before a claim that
 * may wait: so the batch never waits holding a claim (the receiver could not
 * pass it) and never leaves a sleeping receiver with its messages. */
int am__mpsc_send_batch(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                        const struct am_msg *m, int n, int *sent)
{
    struct am_seg_view *v = peer->view;
    struct am_queue_view *q = &v->q[qid];
    struct am_claim_state c = {.who = peer->who};
    uint64_t ticket[AM_BATCH_CHUNK];
    int rc = 0, unwoken = 0;
    *sent = 0;
    while (*sent < n) {
        const struct am_msg *mi = &m[*sent];
        int k = 0, got = 1;
        if (mi->kind == AM_BULK) {
            if (unwoken)
                am__wake_if_asleep(peer), unwoken = 0;
            if ((rc = claim(ep, peer, qid, &c, 1, 0)) < 0)
                break;
            am__publish(q, &c, mi);
            am__claim_bulk_ended(am__sender(v, peer->sender_index));
        } else {
            while (*sent + k < n && k < AM_BATCH_CHUNK && m[*sent + k].kind != AM_BULK)
                k++;
            if ((got = rc = claim_run(ep, peer, qid, k, ticket, &unwoken)) < 0)
                break;
            rc = 0;
            for (int j = 0; j < got; j++) {
                c.ticket = ticket[j];
                am__publish(q, &c, &mi[j]);
            }
            c.ticket = ticket[got - 1];
        }
        for (int j = 0; j < got; j++)
            am__slip_sent(&ep->sends);
        *sent += got;
        unwoken = 1;
    }
    if (unwoken)
        am__wake_if_asleep(peer);
    if (*sent)
        prefetch_ahead(ep, peer, qid, q, c.ticket);
    return rc;
}

/* A loan's bulk block: claimed alone (the packet is claimed at commit, so a
 * loan never holds up the queue), counted as a bulk claim in flight until the
 * commit publishes its packet or lend_end gives it up.  *buf: its data. */
int am__mpsc_lend(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, uint64_t *bulk_ticket,
                  void **buf)
{
    struct am_queue_view *q = &peer->view->q[qid];
    struct am_claim_state c;
    int rc = claim(ep, peer, qid, &c, 1, 1);
    if (rc < 0)
        return rc;
    *bulk_ticket = c.bulk_ticket;
    *buf = q->bulk + (c.bulk_ticket & (q->bulk_n - 1)) * AM_BULK_BYTES;
    return 0;
}

/* Publish the loan's bulk message m (its data in the block already): claim
 * a packet, backing off while the queue is full, name the block in it. */
int am__mpsc_lend_commit(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                         uint64_t bulk_ticket, const struct am_msg *m)
{
    struct am_seg_view *v = peer->view;
    struct am_claim_state c;
    int rc = claim(ep, peer, qid, &c, 0, 0);
    if (rc == 0) {
        c.bulk_ticket = bulk_ticket;
        am__publish(&v->q[qid], &c, m);
    }
    am__mpsc_lend_end(peer); /* after the publish: am__who_bulk_idle's acquire */
    if (rc < 0)
        return rc;
    am__slip_sent(&ep->sends);
    am__wake_if_asleep(peer);
    return 0;
}

void am__mpsc_lend_end(struct am_peer *peer)
{
    am__claim_bulk_ended(am__sender(peer->view, peer->sender_index));
}
