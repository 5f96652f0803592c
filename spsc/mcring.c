/*
 * mcring.c - MCRingBuffer (Lee, Bu and Chandranmenon, IPDPS 2010; Figure 4 of
 * the B-Queue paper): Lamport's two shared indices, each end working from a
 * cached copy of the other's and publishing its own once per batch.
 *
 * Design.  The shared words are Lamport's (struct am_spsc_indexed_ring): head,
 * the producer's published count (the paper's `write`), and tail, the
 * consumer's (`read`), each on a line pair of its own ("cache-line
 * protection").  An end's private state is the paper's local variables:
 *   producer  pos = nextWrite, limit = localRead + size (it may write up to
 *             there without looking), held = wBatch (items written since its
 *             last publication of head)
 *   consumer  pos = nextRead, limit = localWrite (it may read up to there
 *             without looking), held = rBatch (items read since its last
 *             publication of tail)
 * An end reads the other's index only when its cached bound is used up, and
 * stores its own every `batch` items (am_spsc_batch: a quarter of the ring, at
 * most 256), so while both are busy the index lines move once per batch, not
 * once per item.
 *
 * Changes from the paper.  Free-running counts as in lamport.c (every slot
 * usable).  Batching holds items back: an item is visible only when its batch
 * is published, which the paper's producer does only when the batch fills,
 * and B-Queue's section 2.5 shows how that deadlocks a producer that stops
 * mid-batch to wait for its consumer.  Here (1) flush publishes what enqueue
 * held back, and a caller must flush before it waits for anything the consumer
 * might only send after seeing those items (the runtime: before it polls or
 * blocks); (2) an enqueue that finds the ring full publishes first, so a full
 * ring never hides items; (3) a dequeue that finds the ring empty publishes the
 * consumer's reads, so a consumer that has emptied the ring has given back
 * every slot (a consumer that stops polling mid-batch still holds up to a
 * batch of freed slots back from the producer).
 * enqueue_batch writes up to n items and publishes them at once.  Indices read
 * from the ring are checked as in lamport.c (-EPROTO).
 *
 * Memory ordering.  As lamport.c, once per batch: the producer's
 * AO_store_release(head) pairs with the consumer's AO_load_acquire(head) (the
 * slots below head are written), the consumer's AO_store_release(tail) with the
 * producer's AO_load_acquire(tail) (the consumer has read the slots below tail).
 * Slots are plain loads and stores inside those bounds.
 */
#include <errno.h>

#include "ring.h"

#define SLOTS offsetof(struct am_spsc_indexed_ring, slot)

/* The zero-copy verbs, defined below, inlined into enqueue and dequeue. */
static int mcring_reserve(struct am_spsc_end *p, AO_t **slot);
static int mcring_commit(struct am_spsc_end *p, uint64_t item);
static int mcring_peek(struct am_spsc_end *c, uint64_t *item, const AO_t **slot);
static int mcring_release(struct am_spsc_end *c);

static size_t mcring_size(unsigned shift)
{
    return am__spsc_size(SLOTS, shift, 1);
}

static int mcring_init(void *ring, unsigned shift)
{
    return am__spsc_init(ring, SLOTS, AM_SPSC_MCRING, shift, 1);
}

static int mcring_open(struct am_spsc_end *e, void *ring, unsigned shift, unsigned flags)
{
    struct am_spsc_indexed_ring *r = ring;
    int rc = am__spsc_open(e, ring, SLOTS, AM_SPSC_MCRING, shift, flags, 0);
    if (rc == 0) {
        int producer = (flags & AM_SPSC_PRODUCER) != 0;
        e->mine = producer ? &r->head : &r->tail;
        e->theirs = producer ? &r->tail : &r->head;
        e->limit = producer ? e->mask + 1 : 0; /* tail 0 cached; head 0 cached */
    }
    return rc;
}

/* Either end: stores its position as its index and starts a new batch. */
static void publish(struct am_spsc_end *e, enum am_spsc_hook where)
{
    am__spsc_hook(where);
    /* Release: the producer's pairs with the consumer's acquire load of head,
     * the consumer's with the producer's acquire load of tail. */
    AO_store_release(e->mine, e->pos);
    e->held = 0;
}

/* Producer, its cached room used up: loads tail and sets limit.  0 if there
 * is room now; -EAGAIN full, having published what it held; -EPROTO if tail is
 * not within the size behind this end. */
static int refill(struct am_spsc_end *p)
{
    /* Acquire: pairs with the consumer's release store of tail. */
    uint64_t tail = AO_load_acquire(p->theirs), used = p->pos - tail;
    if (used > p->mask + 1)
        return -EPROTO;
    if (used == p->mask + 1) {
        if (p->held)
            publish(p, AM_SPSC_PUT);
        return -EAGAIN;
    }
    p->limit = tail + p->mask + 1;
    return 0;
}

/* Producer only: reserve and commit in one step.  0, -EAGAIN full, -EINVAL,
 * -EPROTO. */
static int mcring_enqueue(struct am_spsc_end *p, uint64_t item)
{
    AO_t *slot;
    if (item > AM_SPSC_ITEM_MAX)
        return -EINVAL;
    int rc = mcring_reserve(p, &slot);
    return rc ? rc : mcring_commit(p, item);
}

/* Producer only: up to n items, published on return.  How many, or -errno. */
static int mcring_enqueue_batch(struct am_spsc_end *p, const uint64_t *items, unsigned n)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    for (unsigned i = 0; i < n; i++)
        if (items[i] > AM_SPSC_ITEM_MAX)
            return -EINVAL;
    if (n == 0)
        return -EINVAL;
    if (p->limit - p->pos < n) { /* look for more room than the cached bound */
        int rc = refill(p);
        if (rc != 0)
            return rc;
    }
    uint64_t space = p->limit - p->pos;
    unsigned k = space < n ? (unsigned)space : n;
    for (unsigned i = 0; i < k; i++)
        *am__spsc_at(p, p->pos + i) = items[i];
    p->pos += k;
    publish(p, AM_SPSC_PUT);
    return (int)k;
}

/* Producer only: publishes the items enqueue held back.  0. */
static int mcring_flush(struct am_spsc_end *p)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    if (p->held)
        publish(p, AM_SPSC_PUT);
    return 0;
}

/* Consumer only: peek and release in one step.  0 with the oldest item,
 * -EAGAIN empty, -EPROTO. */
static int mcring_dequeue(struct am_spsc_end *c, uint64_t *item)
{
    const AO_t *slot;
    int rc = mcring_peek(c, item, &slot);
    if (rc == 0)
        mcring_release(c);
    return rc;
}

/* Producer only: the slot at pos if there is room.  0, -EAGAIN, -EPROTO. */
AM__SPSC_VERB int mcring_reserve(struct am_spsc_end *p, AO_t **slot)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    if (p->pos == p->limit) {
        int rc = refill(p);
        if (rc != 0)
            return rc;
    }
    *slot = am__spsc_at(p, p->pos);
    return 0;
}

/* Producer only, after reserve: as enqueue (held until a batch or flush).
 * 0, -EINVAL. */
AM__SPSC_VERB int mcring_commit(struct am_spsc_end *p, uint64_t item)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    if (item > AM_SPSC_ITEM_MAX)
        return -EINVAL;
    *am__spsc_at(p, p->pos) = item;
    p->pos++;
    if (++p->held >= p->batch)
        publish(p, AM_SPSC_PUT);
    return 0;
}

/* Consumer only.  0 with the oldest published item and its slot, -EAGAIN
 * (having published its reads), -EPROTO: as dequeue. */
AM__SPSC_VERB int mcring_peek(struct am_spsc_end *c, uint64_t *item, const AO_t **slot)
{
    AM__SPSC_IS(c, AM_SPSC_CONSUMER);
    if (c->pos == c->limit) {
        uint64_t head = AO_load_acquire(c->theirs), ready = head - c->pos;
        if (ready == 0 || ready > c->mask + 1) {
            if (ready == 0 && c->held)
                publish(c, AM_SPSC_FREE);
            return ready == 0 ? -EAGAIN : -EPROTO;
        }
        c->limit = head;
    }
    am__spsc_hook(AM_SPSC_GET);
    *slot = am__spsc_at(c, c->pos);
    *item = **slot;
    return 0;
}

/* Consumer only, after peek: the slot is given back with its batch.  0. */
AM__SPSC_VERB int mcring_release(struct am_spsc_end *c)
{
    AM__SPSC_IS(c, AM_SPSC_CONSUMER);
    c->pos++;
    if (++c->held >= c->batch)
        publish(c, AM_SPSC_FREE);
    return 0;
}

const struct am_spsc_ops am_spsc_mcring = {
    .name = "mcring",
    .kind = AM_SPSC_MCRING,
    .options = 0,
    .holds = 1,
    .size = mcring_size,
    .init = mcring_init,
    .open = mcring_open,
    .enqueue = mcring_enqueue,
    .enqueue_batch = mcring_enqueue_batch,
    .flush = mcring_flush,
    .dequeue = mcring_dequeue,
    .reserve = mcring_reserve,
    .commit = mcring_commit,
    .peek = mcring_peek,
    .release = mcring_release,
    .slots = SLOTS,
};
