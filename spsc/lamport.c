/*
 * lamport.c - Lamport's single-producer/single-consumer queue (1983; Figure 3
 * of the FastForward paper, Figure 1 of B-Queue's), the baseline of the other
 * kinds.
 *
 * Design.  Two shared indices, each on a line pair of its own
 * (struct am_spsc_indexed_ring): head, the items the producer has published,
 * and tail, the items the consumer has given back.  Every enqueue reads tail
 * and every dequeue reads head, so the two lines move between the caches on
 * every operation while both ends are busy: that is the cost the other kinds
 * avoid.  Each end keeps its own index privately (pos) and only stores it, so a
 * peer that overwrites an index misleads the other end, never its owner.
 *
 * Changes from the paper.  The indices are free-running counts of items, not
 * positions modulo the size: the ring is full at head - tail = 2^shift and
 * empty at head = tail, so all 2^shift slots hold items (the paper keeps one
 * slot empty to tell full from empty).  Every index read from the ring is
 * checked: head - tail above the size can only be a peer's garbage (-EPROTO).
 * enqueue_batch writes up to n slots and publishes them with one store of
 * head.
 *
 * Memory ordering.  Producer: plain stores of the slots, then
 * AO_store_release(head), which pairs with the consumer's AO_load_acquire(head):
 * the slots below head are written before the consumer reads them.  Consumer:
 * plain loads of the slots, then AO_store_release(tail), which pairs with the
 * producer's AO_load_acquire(tail): the consumer's loads of the slots below
 * tail are done before the producer overwrites them.
 */
#include <errno.h>

#include "ring.h"

#define SLOTS offsetof(struct am_spsc_indexed_ring, slot)

/* The zero-copy verbs, defined below, inlined into enqueue and dequeue. */
static int lamport_reserve(struct am_spsc_end *p, AO_t **slot);
static int lamport_commit(struct am_spsc_end *p, uint64_t item);
static int lamport_peek(struct am_spsc_end *c, uint64_t *item, const AO_t **slot);
static int lamport_release(struct am_spsc_end *c);

static size_t lamport_size(unsigned shift)
{
    return am__spsc_size(SLOTS, shift, 1);
}

static int lamport_init(void *ring, unsigned shift)
{
    return am__spsc_init(ring, SLOTS, AM_SPSC_LAMPORT, shift, 1);
}

static int lamport_open(struct am_spsc_end *e, void *ring, unsigned shift, unsigned flags)
{
    struct am_spsc_indexed_ring *r = ring;
    int rc = am__spsc_open(e, ring, SLOTS, AM_SPSC_LAMPORT, shift, flags, 0);
    if (rc == 0) {
        int producer = (flags & AM_SPSC_PRODUCER) != 0;
        e->mine = producer ? &r->head : &r->tail;
        e->theirs = producer ? &r->tail : &r->head;
    }
    return rc;
}

/* Producer: free slots, from a fresh load of tail; -EPROTO if tail is not
 * within the size behind this end's head. */
static int64_t room(struct am_spsc_end *p)
{
    /* Acquire: pairs with the consumer's release store of tail. */
    uint64_t used = p->pos - AO_load_acquire(p->theirs);
    return used <= p->mask + 1 ? (int64_t)(p->mask + 1 - used) : -EPROTO;
}

/* Producer only: reserve and commit in one step.  0, -EAGAIN full, -EINVAL,
 * -EPROTO. */
static int lamport_enqueue(struct am_spsc_end *p, uint64_t item)
{
    AO_t *slot;
    if (item > AM_SPSC_ITEM_MAX)
        return -EINVAL;
    int rc = lamport_reserve(p, &slot);
    return rc ? rc : lamport_commit(p, item);
}

/* Producer only: up to n items, one store of head.  How many, or -errno. */
static int lamport_enqueue_batch(struct am_spsc_end *p, const uint64_t *items, unsigned n)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    for (unsigned i = 0; i < n; i++)
        if (items[i] > AM_SPSC_ITEM_MAX)
            return -EINVAL;
    int64_t space = room(p);
    if (n == 0 || space <= 0)
        return n == 0 ? -EINVAL : space == 0 ? -EAGAIN : (int)space;
    unsigned k = (uint64_t)space < n ? (unsigned)space : n;
    for (unsigned i = 0; i < k; i++)
        *am__spsc_at(p, p->pos + i) = items[i];
    am__spsc_hook(AM_SPSC_PUT);
    p->pos += k;
    AO_store_release(p->mine, p->pos); /* pairs as in enqueue */
    return (int)k;
}

/* Producer only: every enqueue published its item already.  0. */
static int lamport_flush(struct am_spsc_end *p)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    return 0;
}

/* Consumer only: peek and release in one step.  0 with the oldest item,
 * -EAGAIN empty, -EPROTO. */
static int lamport_dequeue(struct am_spsc_end *c, uint64_t *item)
{
    const AO_t *slot;
    int rc = lamport_peek(c, item, &slot);
    if (rc == 0)
        lamport_release(c);
    return rc;
}

/* Producer only: the slot at head if there is room.  0, -EAGAIN, -EPROTO. */
AM__SPSC_VERB int lamport_reserve(struct am_spsc_end *p, AO_t **slot)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    int64_t space = room(p);
    if (space <= 0)
        return space == 0 ? -EAGAIN : (int)space;
    *slot = am__spsc_at(p, p->pos);
    return 0;
}

/* Producer only, after reserve: the item, then head (release, as enqueue).
 * 0, -EINVAL. */
AM__SPSC_VERB int lamport_commit(struct am_spsc_end *p, uint64_t item)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    if (item > AM_SPSC_ITEM_MAX)
        return -EINVAL;
    *am__spsc_at(p, p->pos) = item;
    am__spsc_hook(AM_SPSC_PUT);
    AO_store_release(p->mine, ++p->pos);
    return 0;
}

/* Consumer only.  0 with the oldest item and its slot, -EAGAIN, -EPROTO. */
AM__SPSC_VERB int lamport_peek(struct am_spsc_end *c, uint64_t *item, const AO_t **slot)
{
    AM__SPSC_IS(c, AM_SPSC_CONSUMER);
    uint64_t ready = AO_load_acquire(c->theirs) - c->pos; /* as dequeue */
    if (ready == 0 || ready > c->mask + 1)
        return ready == 0 ? -EAGAIN : -EPROTO;
    am__spsc_hook(AM_SPSC_GET);
    *slot = am__spsc_at(c, c->pos);
    *item = **slot;
    return 0;
}

/* Consumer only, after peek: tail past the slot (release, as dequeue).  0. */
AM__SPSC_VERB int lamport_release(struct am_spsc_end *c)
{
    AM__SPSC_IS(c, AM_SPSC_CONSUMER);
    am__spsc_hook(AM_SPSC_FREE);
    AO_store_release(c->mine, ++c->pos);
    return 0;
}

const struct am_spsc_ops am_spsc_lamport = {
    .name = "lamport",
    .kind = AM_SPSC_LAMPORT,
    .options = 0,
    .holds = 0,
    .size = lamport_size,
    .init = lamport_init,
    .open = lamport_open,
    .enqueue = lamport_enqueue,
    .enqueue_batch = lamport_enqueue_batch,
    .flush = lamport_flush,
    .dequeue = lamport_dequeue,
    .reserve = lamport_reserve,
    .commit = lamport_commit,
    .peek = lamport_peek,
    .release = lamport_release,
    .slots = SLOTS,
};
