/*
 * bqueue.c - B-Queue (Wang, Zhang, Tang and Hua; Figures 7 and 10): FastForward's
 * marked slots with batched production and consumption, and self-adaptive
 * backtracking so that a producer that stops mid-batch never leaves the
 * consumer waiting.
 *
 * Design.  The ring is its slots, marked as in fastforward.c (0 empty,
 * item + 1 full); each end's position is private.  An end's state:
 *   producer  pos = head, limit = batch_head: the slots from pos up to limit
 *             are known empty
 *   consumer  pos = tail, limit = batch_tail: the slots from pos up to limit
 *             are known full; held = batch_history
 * The producer, at the end of its known-empty slots, probes the last slot of
 * the next batch (am_spsc_batch: a quarter of the ring, at most 256): the
 * consumer empties slots in order, so that slot empty means every slot before
 * it is, and the producer then fills the batch without looking at the
 * consumer.  Otherwise it reports full (the paper's Q04-Q05): up to a batch
 * of free slots are left unused then, rather than filled one by one on lines
 * the consumer is reading.  The consumer, at the end of its known-full slots,
 * backtracks (Figure 10): it probes the slot batch_history further; if that
 * is empty it halves the distance and probes again, down to the next slot
 * alone; the first full one found ends a batch of full slots (the producer
 * fills in order), whose length becomes the new history, and each
 * backtracking starts one line (8 items) longer than the last found, up to
 * the batch.  A producer that stops after k items of a batch leaves them
 * found within log2(batch) probes: that is the paper's answer to the deadlock
 * of batching (section 3.2), and it needs no flush.
 *
 * Changes from the paper.  Items as fastforward.c (item + 1).  The producer
 * probes the batch's last slot, pos + batch - 1, where the paper probes one
 * beyond it; both prove the batch empty, this one also lets the ring fill
 * every slot.  The paper's backtracking spins TICKS (2,000 cycles in its
 * example) between probes to give the producer time; here it pauses once
 * (BACKTRACK_PAUSES; a pause is about 24 ns on this machine's AMD EPYC),
 * since a poll of an empty channel must stay cheap (the runtime polls many)
 * and the wait is latency: spscbench's round trip took 0.53 us with one pause
 * and 1.3 us with 16, while its stream was about 5 ns per item with 0 to 16.  The consumer
 * checks the mark of every slot it takes inside a found batch, though the producer filled
 * them all: an empty one can only be a peer's garbage (-EPROTO), never an item invented.
 * History starts at the batch.
 *
 * Memory ordering.  The producer's AO_store_release of a full slot pairs with
 * the consumer's AO_load_acquire of the slot that ends a batch: the producer
 * filled the earlier slots of the batch before it, so the consumer's relaxed
 * loads of them find them full.  The consumer's AO_store_release of 0 pairs
 * with the producer's AO_load_acquire of the probed slot: the consumer read
 * every slot before it before emptying it, so the producer's batch overwrites
 * only slots already read (B-Queue infers from one slot about others, so
 * unlike FastForward it needs this pair, not only coherence).
 */
#include <errno.h>

#include "ring.h"

#define SLOTS offsetof(struct am_spsc_marked_ring, slot)
#define LINE_ITEMS 8       /* the paper's INCREMENT: a 64-byte line of items */
#define BACKTRACK_PAUSES 1 /* between probes, the paper's TICKS */

/* The zero-copy verbs, defined below, inlined into enqueue and dequeue. */
static int bqueue_reserve(struct am_spsc_end *p, AO_t **slot);
static int bqueue_commit(struct am_spsc_end *p, uint64_t item);
static int bqueue_peek(struct am_spsc_end *c, uint64_t *item, const AO_t **slot);
static int bqueue_release(struct am_spsc_end *c);

static size_t bqueue_size(unsigned shift)
{
    return am__spsc_size(SLOTS, shift, 1);
}

static int bqueue_init(void *ring, unsigned shift)
{
    return am__spsc_init(ring, SLOTS, AM_SPSC_BQUEUE, shift, 1);
}

static int bqueue_open(struct am_spsc_end *e, void *ring, unsigned shift, unsigned flags)
{
    int rc = am__spsc_open(e, ring, SLOTS, AM_SPSC_BQUEUE, shift, flags, 0);
    if (rc == 0)
        e->held = e->batch; /* the consumer's history */
    return rc;
}

/* Producer only: reserve and commit in one step.  0, -EAGAIN full, -EINVAL,
 * -EPROTO. */
static int bqueue_enqueue(struct am_spsc_end *p, uint64_t item)
{
    AO_t *slot;
    if (item > AM_SPSC_ITEM_MAX)
        return -EINVAL;
    int rc = bqueue_reserve(p, &slot);
    return rc ? rc : bqueue_commit(p, item);
}

/* Producer only: up to n items, each visible when stored.  How many, or
 * -errno. */
static int bqueue_enqueue_batch(struct am_spsc_end *p, const uint64_t *items, unsigned n)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    for (unsigned i = 0; i < n; i++)
        if (items[i] > AM_SPSC_ITEM_MAX)
            return -EINVAL;
    unsigned k = 0;
    while (k < n && bqueue_enqueue(p, items[k]) == 0)
        k++;
    return n == 0 ? -EINVAL : k ? (int)k : -EAGAIN;
}

/* Producer only: every enqueue published its item already.  0. */
static int bqueue_flush(struct am_spsc_end *p)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    return 0;
}

/* Consumer: self-adaptive backtracking (Figure 10).  0 with a batch of full
 * slots from pos to limit, or -EAGAIN if the next slot is empty too.  At most
 * log2(batch) + 1 probes. */
static int backtrack(struct am_spsc_end *c)
{
    uint64_t size = c->held + LINE_ITEMS < c->batch ? c->held + LINE_ITEMS : c->batch;
    /* Acquire: pairs with the producer's release store of the probed slot. */
    while (AO_load_acquire(am__spsc_at(c, c->pos + size - 1)) == 0) {
        if (size == 1)
            return -EAGAIN;
        am__spsc_pause(BACKTRACK_PAUSES);
        size /= 2;
    }
    c->held = size;
    c->limit = c->pos + size;
    return 0;
}

/* Consumer only: peek and release in one step.  0 with the oldest item,
 * -EAGAIN empty, -EPROTO. */
static int bqueue_dequeue(struct am_spsc_end *c, uint64_t *item)
{
    const AO_t *slot;
    int rc = bqueue_peek(c, item, &slot);
    if (rc == 0)
        bqueue_release(c);
    return rc;
}

/* Producer only: the slot at pos, probing the next batch as enqueue does.
 * 0, -EAGAIN. */
AM__SPSC_VERB int bqueue_reserve(struct am_spsc_end *p, AO_t **slot)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    if (p->pos == p->limit) {
        if (AO_load_acquire(am__spsc_at(p, p->pos + p->batch - 1)) != 0)
            return -EAGAIN;
        p->limit = p->pos + p->batch;
    }
    *slot = am__spsc_at(p, p->pos);
    return 0;
}

/* Producer only, after reserve: the mark, by a release store.  0, -EINVAL. */
AM__SPSC_VERB int bqueue_commit(struct am_spsc_end *p, uint64_t item)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    if (item > AM_SPSC_ITEM_MAX)
        return -EINVAL;
    am__spsc_hook(AM_SPSC_PUT);
    AO_store_release(am__spsc_at(p, p->pos), item + 1);
    p->pos++;
    return 0;
}

/* Consumer only.  0 with the oldest item and its slot, -EAGAIN, -EPROTO: as
 * dequeue (the batch's acquire orders the slot's words too: the producer
 * wrote them before marking any slot after). */
AM__SPSC_VERB int bqueue_peek(struct am_spsc_end *c, uint64_t *item, const AO_t **slot)
{
    AM__SPSC_IS(c, AM_SPSC_CONSUMER);
    if (c->pos == c->limit && backtrack(c) != 0)
        return -EAGAIN;
    AO_t *s = am__spsc_at(c, c->pos);
    am__spsc_hook(AM_SPSC_GET);
    AO_t v = AO_load(s);
    if (v == 0)
        return -EPROTO;
    *item = v - 1;
    *slot = s;
    return 0;
}

/* Consumer only, after peek: empties the slot (release, as dequeue).  0. */
AM__SPSC_VERB int bqueue_release(struct am_spsc_end *c)
{
    AM__SPSC_IS(c, AM_SPSC_CONSUMER);
    am__spsc_hook(AM_SPSC_FREE);
    AO_store_release(am__spsc_at(c, c->pos), 0);
    c->pos++;
    return 0;
}

const struct am_spsc_ops am_spsc_bqueue = {
    .name = "bqueue",
    .kind = AM_SPSC_BQUEUE,
    .options = 0,
    .holds = 0,
    .size = bqueue_size,
    .init = bqueue_init,
    .open = bqueue_open,
    .enqueue = bqueue_enqueue,
    .enqueue_batch = bqueue_enqueue_batch,
    .flush = bqueue_flush,
    .dequeue = bqueue_dequeue,
    .reserve = bqueue_reserve,
    .commit = bqueue_commit,
    .peek = bqueue_peek,
    .release = bqueue_release,
    .slots = SLOTS,
};
