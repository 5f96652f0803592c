/*
 * chan_send.c - the producer's half of a per-sender channel (channel.h), top
 * to bottom: open our ends after registering, wait for a bulk block if the
 * message needs one and for the ring's next slot (backing off while the ring
 * is full), write the packet into the slot (a medium message's data into the
 * slot's payload area), commit it, then mark our channel in the summary and
 * wake the owner if it sleeps.  chan_poll.c holds the owner's half.
 *
 * Only the sender holding the entry writes its channels' producer side, so
 * nothing here is claimed: the ring's commit is the publication (a release,
 * paired with the owner's acquire in peek; mcring's flush for the items it
 * holds back).  Every word read from the owner (a ring's index or slots, the
 * bulk give-back count) is judged against our own counts.
 */
#include <errno.h>

#include "internal.h"
#include "send.h"
#include "spin.h"
#include "waiting.h"

static unsigned shift_of(const struct am_seg_view *v)
{
    return (unsigned)__builtin_ctz(v->q[0].packets_n);
}

/* Registration gave us entry peer->sender_index, whose channels the owner laid
 * out for our generation before release-storing chan_ready (senders.c
 * acquire-loaded it): open our ends.  0 or -EPROTO (a ring not of the kind
 * and size the header says). */
int am__chan_open_tx(struct am_peer *peer)
{
    struct am_seg_view *v = peer->view;
    for (int q = 0; q < 2; q++) {
        struct am_chan_view c;
        struct am_chan_tx *tx = &peer->tx[q];
        am__chan_at(v, peer->sender_index, (enum am_qid)q, &c);
        *tx = (struct am_chan_tx){0};
        if (v->ring->open(&tx->end, c.ring, shift_of(v), AM_SPSC_PRODUCER | AM_SPSC_WIDE) !=
            0)
            return am__report_broken(v, "a channel's ring is not what its header says");
        tx->open = 1;
    }
    return 0;
}

/* Is bulk block tx->bulk_next free?  The owner gives blocks back in ticket
 * order by count; a count past what we have sent was written by somebody
 * else: -EPROTO.  The block of a loan of ours in place (lent: its ticket
 * + 1) is not, though the owner has passed over its ticket: -EBUSY, as only
 * the loan's commit or cancel can end it (loan.c).  The acquire pairs with
 * the owner's release after its handler read the block's last message. */
static int bulk_free(struct am_seg_view *v, struct am_chan_tx *tx, uint64_t lent,
                     struct am_chan_view *c)
{
    uint32_t b = v->q[0].bulk_n;
    if (__builtin_expect(lent != 0, 0) && tx->bulk_next - (lent - 1) >= b)
        return -EBUSY;
    if (tx->bulk_next - tx->bulk_freed < b)
        return 1;
    uint64_t freed = AO_load_acquire(&c->ctl->bulk_freed);
    if (freed > tx->bulk_next)
        return am__report_broken(v, "a channel's bulk count was overwritten");
    tx->bulk_freed = freed;
    return tx->bulk_next - freed < b;
}

/* Wait for a bulk block; 0, -EPIPE, -EPROTO, -EBUSY (bulk_free). */
static int wait_bulk(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                     struct am_chan_view *c, unsigned *rounds)
{
    struct spin sp = SPIN_INIT;
    unsigned yields = 0;
    int rc;
    while ((rc = bulk_free(peer->view, &peer->tx[qid], peer->lent[qid], c)) == 0) {
        if ((rc = am__backoff(ep, peer, qid, NULL, &sp, &yields)) < 0)
            return rc;
        ++*rounds;
    }
    return rc < 0 ? rc : 0;
}

/* The ring's next slot, backing off while the ring is full: 0 (*p the
 * packet in it), -EPIPE, -EPROTO. */
static int reserve(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, struct am_packet **p,
                   unsigned *rounds)
{
    struct am_seg_view *v = peer->view;
    struct spin sp = SPIN_INIT;
    unsigned yields = 0;
    AO_t *slot;
    int rc;
    while ((rc = v->ring->reserve(&peer->tx[qid].end, &slot)) == -EAGAIN) {
        if ((rc = am__backoff(ep, peer, qid, NULL, &sp, &yields)) < 0)
            return rc;
        ++*rounds;
    }
    *p = (struct am_packet *)slot;
    return rc == 0 ? 0 : am__report_broken(v, "a channel's ring was overwritten");
}

/* Our channel has work: set our bit in the queue's summary if the owner has
 * cleared it, and wake the owner if it sleeps.  The fence orders the
 * enqueue's store before both loads; it pairs with the owner's fence between
 * clearing a bit and looking at the channel once more (chan_poll.c), and with
 * am_wait's between storing `sleeping` and polling: either the owner sees our
 * item, or we see its cleared bit (and set it) or its sleep (and wake it, or
 * signal its descriptor: send.c's am__wake_sleepers). */
static void notify(struct am_peer *peer, enum am_qid qid, unsigned i)
{
    struct am_seg_view *v = peer->view;
    volatile AO_t *w = &v->summary[qid].bits[i / 64];
    AO_t bit = (AO_t)1 << (i % 64);
    AO_nop_full();
    if (!(AO_load(w) & bit))
        AO_or_full(w, bit);
    unsigned s = AO_int_load(&v->shared->sleeping);
    if (s)
        am__wake_sleepers(peer, s);
}

/* Write m into our channel of queue qid at peer (c its view) and commit it,
 * not yet flushed or notified: 1, or 0 when `wait` is 0 and it would have to
 * wait (for the ring's next slot or a bulk block: nothing taken), or -EPIPE,
 * -EPROTO and the errors of a wait.  A long message's data is staged already
 * (send.c). */
static int put(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, struct am_chan_view *c,
               const struct am_msg *m, int wait, unsigned *rounds)
{
    struct am_seg_view *v = peer->view;
    struct am_chan_tx *tx = &peer->tx[qid];
    struct am_packet *p;
    AO_t *slot;
    uint32_t b = v->q[qid].bulk_n;
    int rc;
    if (m->kind == AM_BULK && wait && (rc = wait_bulk(ep, peer, qid, c, rounds)) < 0)
        return rc;
    if (m->kind == AM_BULK && !wait && (rc = bulk_free(v, tx, peer->lent[qid], c)) <= 0)
        return rc;
    if (!wait && (rc = v->ring->reserve(&tx->end, &slot)) != 0)
        return rc == -EAGAIN ? 0 : am__report_broken(v, "a channel's ring was overwritten");
    if (!wait)
        p = (struct am_packet *)slot;
    else if ((rc = reserve(ep, peer, qid, &p, rounds)) < 0)
        return rc;
    /* Words 1.. of the slot are ours until commit, and so is its payload
     * area (a medium message's data); word 0 is the ring's. */
    unsigned char *area = m->kind == AM_MEDIUM
                              ? c->medium + (size_t)(p - c->packets) * AM_MEDIUM_BYTES
                              : c->bulk + (tx->bulk_next & (b - 1)) * AM_BULK_BYTES;
    am__packet_fill(p, m, area, tx->bulk_next);
    am__hook(AM_HOOK_CHAN_FILLED);
    v->ring->commit(&tx->end, AM_STATE(am_lap(tx->end.pos, v->q[qid].packets_n), peer->who,
                                       m->kind == AM_BULK ? AM_READY_BULK : AM_READY));
    tx->bulk_next += m->kind == AM_BULK;
    am__slip_sent(&ep->sends);
    return 1;
}

/* What we committed is visible (mcring holds items back until a flush), our
 * summary bit is set and the owner awake. */
static void publish(struct am_peer *peer, enum am_qid qid)
{
    if (peer->view->ring->holds)
        peer->view->ring->flush(&peer->tx[qid].end);
    notify(peer, qid, peer->sender_index);
}

/* Send m through our channel of queue qid at peer (channel.h): 0, -EPIPE,
 * -EPROTO.  A long message's data is staged already (send.c). */
int am__chan_send(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, struct am_msg *m)
{
    struct am_chan_view c;
    unsigned rounds = 0;
    if (!peer->tx[qid].open)
        return -EPROTO;
    am__chan_at(peer->view, peer->sender_index, qid, &c);
    int rc = put(ep, peer, qid, &c, m, 1, &rounds);
    if (rc < 0)
        return rc;
    publish(peer, qid);
    if (rounds)
        am__count_backoffs(peer, rounds);
    return 0;
}

/* A batch (send.h): runs of messages written while the ring has room (and
 * bulk blocks are free), each run then flushed and notified once; the first
 * message of a run may wait, after the run before it was published, so the
 * batch never waits on the owner for items it holds back. */
int am__chan_send_batch(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                        const struct am_msg *m, int n, int *sent)
{
    struct am_chan_view c;
    unsigned rounds = 0;
    int rc = 0;
    *sent = 0;
    if (!peer->tx[qid].open)
        return -EPROTO;
    am__chan_at(peer->view, peer->sender_index, qid, &c);
    while (*sent < n) {
        if ((rc = put(ep, peer, qid, &c, &m[*sent], 1, &rounds)) < 0)
            break;
        ++*sent;
        while (*sent < n && (rc = put(ep, peer, qid, &c, &m[*sent], 0, &rounds)) == 1)
            ++*sent;
        publish(peer, qid);
        if (rc < 0)
            break;
        rc = 0;
    }
    if (rounds)
        am__count_backoffs(peer, rounds);
    return rc < 0 ? rc : 0;
}

int am__chan_lend(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, void **buf)
{
    struct am_seg_view *v = peer->view;
    struct am_chan_tx *tx = &peer->tx[qid];
    struct am_chan_view c;
    unsigned rounds = 0;
    if (!tx->open)
        return -EPROTO;
    am__chan_at(v, peer->sender_index, qid, &c);
    int rc = wait_bulk(ep, peer, qid, &c, &rounds);
    if (rc < 0)
        return rc;
    *buf = c.bulk + (tx->bulk_next & (v->q[qid].bulk_n - 1)) * AM_BULK_BYTES;
    return 0;
}
