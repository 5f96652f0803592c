/*
 * chan_poll.c - the owner's half of per-sender channels (channel.h), top to
 * bottom: lay an entry's channels out for its next sender, deliver what a
 * channel holds, poll the channels the summary names, and lay out again the
 * channels of senders that have left or died.  chan_send.c holds the
 * producer's half; deliver.c what both kinds do with a message.
 *
 * Only the owner runs this, never inside a handler (the reply channels may be
 * drained from a request handler's reply that waits for room, as for the
 * shared queues: those are other ends).  Its positions and bulk tickets are
 * private (struct am_chan_rx); what it reads of a channel is checked against
 * them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deliver.h"
#include "internal.h"

static unsigned shift_of(const struct am_seg_view *v)
{
    return (unsigned)__builtin_ctz(v->q[0].packets_n);
}

/* Lay entry i's two channels out afresh for its sender of generation gen
 * and open our ends; then tell registrants.  The release pairs with a
 * registrant's acquire of chan_ready (senders.c): it finds the rings laid
 * out.  Owner only, while no producer uses them (before LIVE, or once the
 * entry's last sender has left or died).  0, or -EPROTO if a ring would not
 * open (it always does: the layout checked the sizes). */
static int lay_out(am_ep_t *ep, unsigned i, unsigned gen)
{
    struct am_seg_view *v = &ep->own;
    struct am_chan_rx *rx = &ep->chans[i];
    for (int q = 0; q < 2; q++) {
        struct am_chan_view c;
        am__chan_at(v, i, (enum am_qid)q, &c);
        if (am_spsc_init_wide(v->ring, c.ring, shift_of(v)) != 0 ||
            v->ring->open(&rx->end[q], c.ring, shift_of(v),
                          AM_SPSC_CONSUMER | AM_SPSC_WIDE) != 0)
            return -EPROTO;
        AO_store(&c.ctl->bulk_freed, 0);
        rx->next[q] = rx->bulk_next[q] = 0;
        rx->idle[q] = 0;
    }
    rx->gen = gen & AM_GEN_MASK;
    AO_short_store_release(&v->hdr->chan_ready[i], (unsigned short)rx->gen);
    return 0;
}

int am__chans_open(am_ep_t *ep)
{
    if (ep->own.queue == AM_QUEUE_MPSC)
        return 0;
    if (!(ep->chans = calloc(ep->own.max_senders, sizeof *ep->chans)))
        return -ENOMEM;
    int rc = 0;
    for (unsigned i = 0; i < ep->own.max_senders && rc == 0; i++)
        rc = lay_out(ep, i, 1); /* an entry's first sender is of generation 1 */
    return rc;
}

void am__chans_free(am_ep_t *ep)
{
    free(ep->chans);
    ep->chans = NULL;
}

/* A bulk message's block: its ticket must be one the producer may hold,
 * [bulk_next, bulk_next + B) (it is bulk_next unless a packet was lost to a
 * peer's scribbling; then we catch up, so the give-back count stays true). */
static const char *bulk_payload(am_ep_t *ep, struct am_chan_rx *rx, enum am_qid qid,
                                const struct am_chan_view *c, const struct am_packet *m,
                                struct am_payload *pl)
{
    uint32_t b = ep->own.q[qid].bulk_n;
    *pl = (struct am_payload){0};
    if (m->bulk_ticket - rx->bulk_next[qid] >= b)
        return "bulk ticket out of order";
    rx->bulk_next[qid] = m->bulk_ticket + 1;
    pl->bulk = 1;
    if (m->bulk_len > AM_BULK_BYTES)
        return "bulk length over 8192";
    pl->data = c->bulk + (m->bulk_ticket & (b - 1)) * AM_BULK_BYTES;
    pl->len = m->bulk_len;
    return NULL;
}

/* Deliver m, the copy of the packet in ring slot k of channel c, entry i's
 * of queue qid, that gave it with `item`: the item must be the state its
 * producer writes for our next position (that position's lap in Q slots,
 * its claimant id, a ready type). */
static void deliver(am_ep_t *ep, unsigned i, enum am_qid qid, const struct am_chan_view *c,
                    uint64_t item, uint32_t k, const struct am_packet *m)
{
    struct am_chan_rx *rx = &ep->chans[i];
    struct am_payload pl = {0};
    uint64_t pos = rx->next[qid]++;
    unsigned who = AM_WHO(i, rx->gen);
    int item_ok = AM_STATE_LAP(item) == am_lap(pos, ep->own.q[qid].packets_n) &&
                  AM_STATE_WHO(item) == who && AM_STATE_TYPE(item) >= AM_READY;
    const char *why = item_ok ? NULL : "channel item out of order";
    if (item_ok && AM_STATE_TYPE(item) == AM_READY_BULK)
        why = bulk_payload(ep, rx, qid, c, m, &pl);
    else if (item_ok && m->flags == AM_PKT_MEDIUM)
        why = am__payload_medium(c->medium, k, m, &pl);
    else {
        /* Even under a garbled item: a heap block the packet names that this
         * sender allocated is this message's, dropped or not, and is freed. */
        const char *bad = am__payload_long(ep, &ep->own.q[qid].heap, m, who, &pl);
        why = why ? why : bad;
    }
    am__run(ep, qid, m, who, &pl, why);
}

/* Give entry i's bulk blocks of queue qid back, up to the last one taken.
 * The release pairs with the producer's acquire in chan_send.c's bulk_free:
 * our handlers' reads of the blocks happen before its next writes. */
static void give_back(am_ep_t *ep, unsigned i, enum am_qid qid)
{
    struct am_chan_view c;
    am__chan_at(&ep->own, i, qid, &c);
    AO_store_release(&c.ctl->bulk_freed, ep->chans[i].bulk_next[qid]);
}

/* Deliver what entry i's channel of queue qid holds, a ring's worth at most
 * (a sender that keeps up cannot keep us from the others); how many.  Each
 * packet is copied out of its slot and the slot given back before the
 * handler runs (the release orders our copy before the producer's next
 * writes); the copy is read once.  A medium message's slot is given back
 * after its handler instead, which reads the data in the slot's payload
 * area in place (the release then orders those reads before the producer's
 * next writes there): as the shared queues free a slot.  Bulk blocks go back
 * in runs (B-Queue's batches): once half the channel's blocks have been
 * taken since the last give-back, and at the end of the pass, so that a
 * producer waiting for a block finds a run of them free at once instead of
 * reading the count line as we write it message by message; none is held
 * past the pass, so a lone message's block goes back before the poll
 * returns, as before. */
static int drain_one(am_ep_t *ep, unsigned i, enum am_qid qid)
{
    struct am_spsc_end *end = &ep->chans[i].end[qid];
    const struct am_spsc_ops *ring = ep->own.ring;
    uint32_t budget = ep->own.q[qid].packets_n, run = ep->own.q[qid].bulk_n / 2;
    uint64_t given = ep->chans[i].bulk_next[qid];
    uint64_t item;
    const AO_t *slot;
    struct am_chan_view c;
    int n = 0, rc = 0;
    if (ep->chans[i].busy[qid])
        return 0;
    am__chan_at(&ep->own, i, qid, &c);
    ep->chans[i].busy[qid] = (unsigned char)ep->mt.shared;
    while (n < (int)budget && (rc = ring->peek(end, &item, &slot)) == 0) {
        struct am_packet m;
        memcpy(&m, slot, sizeof m);
        uint32_t k = (uint32_t)((const struct am_packet *)slot - c.packets);
        int in_slot = m.flags == AM_PKT_MEDIUM; /* its data is read in place */
        if (!in_slot)
            ring->release(end);
        deliver(ep, i, qid, &c, item, k, &m);
        if (in_slot)
            ring->release(end);
        n++;
        if (ep->chans[i].bulk_next[qid] - given >= (run ? run : 1))
            give_back(ep, i, qid), given = ep->chans[i].bulk_next[qid];
    }
    if (ep->chans[i].bulk_next[qid] != given)
        give_back(ep, i, qid);
    ep->chans[i].busy[qid] = 0;
    if (rc == -EPROTO)
        am__report_bad(ep, "a channel's ring was overwritten");
    return n;
}

/* Channel i of queue qid, whose bit in summary word w is set: drain it.  Once
 * it has been empty for AM_CHAN_IDLE visits, clear its bit, fence, and look
 * once more (channel.h): a producer that saw the bit still set before we
 * cleared it published before our look; one that publishes after sees it
 * clear and sets it.  What the last look finds keeps the bit set. */
static int visit(am_ep_t *ep, unsigned i, enum am_qid qid, volatile AO_t *w)
{
    struct am_chan_rx *rx = &ep->chans[i];
    if (rx->busy[qid])
        return 0; /* another thread drains it (threads.c) */
    int n = drain_one(ep, i, qid);
    if (n || ++rx->idle[qid] < AM_CHAN_IDLE) {
        rx->idle[qid] = n ? 0 : rx->idle[qid];
        return n;
    }
    rx->idle[qid] = 0;
    AO_and_full(w, ~((AO_t)1 << (i % 64)));
    AO_nop_full();
    if ((n = drain_one(ep, i, qid)) > 0)
        AO_or_full(w, (AO_t)1 << (i % 64));
    return n;
}

/* One pass over the channels of queue qid that the summary names. */
static int drain_marked(am_ep_t *ep, int qid)
{
    struct am_chan_summary *sum = &ep->own.summary[qid];
    unsigned senders = ep->own.max_senders, words = (senders + 63) / 64;
    int n = 0;
    for (unsigned w = 0; w < words; w++) {
        AO_t bits = AO_load(&sum->bits[w]);
        if (w == words - 1 && senders % 64)
            bits &= ((AO_t)1 << (senders % 64)) - 1; /* a peer's bits past the table */
        for (; bits; bits &= bits - 1)
            n += visit(ep, w * 64 + (unsigned)__builtin_ctzl(bits), qid, &sum->bits[w]);
    }
    return n;
}

/* Passes over the marked channels, slipping behind a one-way stream as the
 * shared queues do (slip.c). */
int am__chan_drain(am_ep_t *ep, enum am_qid qid)
{
    return am__drained(ep, am__slip_drain(ep, qid, drain_marked));
}

/* ---- senders that have gone ------------------------------------------------ */

/* am_heap_reclaim's questions when entry i's sender has gone and its channels
 * are drained: the blocks it allocated are unpublished, so free them all. */
static int reclaim_who(void *ctx, unsigned who)
{
    return who == *(unsigned *)ctx;
}

static int reclaim_none(void *ctx, uint64_t off)
{
    return 0;
}

/* Has the sender for which entry i's channels are laid out left or died?
 * Plain loads of the entry's page, which only its holder writes; the acquire
 * pairs with the release of CLOSED (senders.c), after its last enqueue. */
static int departed(am_ep_t *ep, unsigned i)
{
    const struct am_sender *e = am__sender(&ep->own, i);
    AO_t st = AO_load_acquire(&e->state);
    if (AM_SENDER_GEN(st) != ep->chans[i].gen)
        return 0; /* not yet taken since we laid it out */
    unsigned s = AM_SENDER_ST(st);
    return s == AM_SENDER_CLOSED ||
           ((s == AM_SENDER_BUSY || s == AM_SENDER_READY) && am__lifeline_gone(&e->life));
}

/* Entry i's sender has gone: deliver what it published (a ring's worth is all
 * there can be: it publishes nothing more), free the heap blocks it staged and
 * never published, and lay the channels out for the next one. */
static int recycle(am_ep_t *ep, unsigned i)
{
    unsigned who = AM_WHO(i, ep->chans[i].gen);
    int delivered = 0;
    for (int q = 0; q < 2; q++) {
        delivered += drain_one(ep, i, (enum am_qid)q);
        unsigned n = am_heap_reclaim(&ep->own.q[q].heap, reclaim_who, reclaim_none, &who);
        ep->abandoned += n;
        AO_fetch_and_add(&ep->own.hdr->abandoned, n);
    }
    lay_out(ep, i, ep->chans[i].gen + 1);
    return delivered;
}

/* The summary is a hint that any peer may write: one that clears a bit would
 * strand what that channel holds until its sender publishes again (and a
 * sender waiting for a reply to it never does).  So on every round of idle
 * chores one more channel is looked at, round robin: one found with work gets
 * its bit back.  A channel is looked at within 2 S rounds (AM_IDLE_CHORES
 * idle polls each), and an idle poll pays a 32nd of a look at one channel
 * whatever the table's size. */
static int rescan_one(am_ep_t *ep)
{
    unsigned k = ep->rescan++ % (2 * ep->own.max_senders), i = k / 2;
    int n = drain_one(ep, i, (enum am_qid)(k % 2));
    if (n > 0)
        AO_or_full(&ep->own.summary[k % 2].bits[i / 64], (AO_t)1 << (i % 64));
    return n;
}

/* On idle polls (every AM_IDLE_CHORES): look at one more channel; when a
 * registrant or a sender finding the heap full has asked, or `unasked`
 * (every AM_TAIL_CHECK idle polls), recycle the channels of every entry
 * whose sender has gone.  Returns the messages this delivered: the poll
 * counts them (am_wait must not sleep on a message it has handled). */
int am__chan_chores(am_ep_t *ep, int unasked)
{
    struct am_seg_shared *sh = ep->own.shared;
    int n = rescan_one(ep);
    if (!unasked && !AO_load(&sh->recycle) && !AO_load(&sh->reclaim[0]) &&
        !AO_load(&sh->reclaim[1]))
        return am__drained(ep, n);
    AO_store(&sh->recycle, 0);
    AO_store(&sh->reclaim[0], 0);
    AO_store(&sh->reclaim[1], 0);
    for (unsigned i = 0; i < ep->own.max_senders; i++)
        if (!ep->chans[i].busy[0] && !ep->chans[i].busy[1] && departed(ep, i))
            n += recycle(ep, i);
    return am__drained(ep, n);
}
