/*
 * fastforward.c - FastForward (Giacomoni, Moseley and Vachharajani, PPoPP 2008,
 * Figure 4; tech report 2007, Figure 5): a ring with no shared index.
 *
 * Design.  The ring is its slots (struct am_spsc_marked_ring).  A slot's content
 * says whether it is empty (0) or full (item + 1).  The producer's position and
 * the consumer's are private to each: the producer writes the slot at its
 * position if it is empty, the consumer takes the slot at its position if it is
 * full and empties it.  So the ends share nothing but the slots themselves,
 * and while the ring is neither full nor empty they touch different lines.
 *
 * Changes from the paper.  The paper's items are pointers and its empty mark is
 * NULL; shmam's are 64-bit words and may be 0 (an offset, an index), so a full
 * slot holds item + 1 and UINT64_MAX cannot be sent (spsc.h).  A cache-line AM
 * packet would carry its own full mark instead (its type word, as in shmam's
 * shared queues); this ring carries one word, which is what the issue's
 * benchmark measures.  Nothing in the ring can tell a corrupted slot from an
 * item: garbage in a slot is a garbage item (and a zero where an item was is
 * an item lost), which spsc.h allows; there is no index to check.
 *
 * Temporal slipping (section 3.4, Figure 6), the consumer's option
 * AM_SPSC_SLIP: on its first item and every 64th after, the consumer measures
 * how far the producer is ahead by probing the slot a line further, then two,
 * up to GOOD lines (full means the producer has passed it); if that is less
 * than DANGER it waits, one pause per item missing, and measures again, until
 * the producer is GOOD ahead or the distance stops growing (the paper's escape
 * for gaps in the stream, which also bounds the wait).  The paper's DANGER and
 * GOOD, 2 and 6 lines of 8 items, are scaled down on rings of fewer than 128
 * slots.  The paper measures the distance from both ends' indices, which this
 * ring does not share; the probe reads slots the producer is writing, the
 * same coherence cost, paid every 64 items.
 *
 * Memory ordering.  The producer's AO_store_release of a full slot pairs with
 * the consumer's AO_load_acquire of it: what the producer wrote before the item
 * (a payload it names) is visible to the consumer that finds it.  The
 * consumer's AO_store_release of 0 pairs with the producer's AO_load_acquire of
 * the slot: the producer refills a slot only after the consumer has read it
 * (the paper's Lemma 1, which coherence of the one slot gives), and, what the
 * paper's pointers did not need, everything the consumer did before giving the
 * slot back (reading a payload the item named, which the runtime's channels
 * reuse: channel.h) happens before the producer's writes after it finds the
 * slot empty.  On x86 both are plain moves, as relaxed ones are.  The slip
 * probes are relaxed loads: a probe only estimates.
 */
#include <errno.h>

#include "ring.h"

#define SLOTS offsetof(struct am_spsc_marked_ring, slot)
#define SLIP_EVERY 64 /* items between two slip checks */

/* The zero-copy verbs, defined below, inlined into enqueue and dequeue. */
static int fastforward_reserve(struct am_spsc_end *p, AO_t **slot);
static int fastforward_commit(struct am_spsc_end *p, uint64_t item);
static int fastforward_peek(struct am_spsc_end *c, uint64_t *item, const AO_t **slot);
static int fastforward_release(struct am_spsc_end *c);

static size_t fastforward_size(unsigned shift)
{
    return am__spsc_size(SLOTS, shift, 1);
}

static int fastforward_init(void *ring, unsigned shift)
{
    return am__spsc_init(ring, SLOTS, AM_SPSC_FASTFORWARD, shift, 1);
}

/* e->held counts the consumer's items, for the slip checks. */
static int fastforward_open(struct am_spsc_end *e, void *ring, unsigned shift,
                            unsigned flags)
{
    return am__spsc_open(e, ring, SLOTS, AM_SPSC_FASTFORWARD, shift, flags, AM_SPSC_SLIP);
}

/* Producer only: reserve and commit in one step.  0, -EAGAIN full, -EINVAL,
 * -EPROTO. */
static int fastforward_enqueue(struct am_spsc_end *p, uint64_t item)
{
    AO_t *slot;
    if (item > AM_SPSC_ITEM_MAX)
        return -EINVAL;
    int rc = fastforward_reserve(p, &slot);
    return rc ? rc : fastforward_commit(p, item);
}

/* Producer only: up to n items, each published by its own slot.  How many, or
 * -errno. */
static int fastforward_enqueue_batch(struct am_spsc_end *p, const uint64_t *items,
                                     unsigned n)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    for (unsigned i = 0; i < n; i++)
        if (items[i] > AM_SPSC_ITEM_MAX)
            return -EINVAL;
    unsigned k = 0;
    while (k < n && fastforward_enqueue(p, items[k]) == 0)
        k++;
    return n == 0 ? -EINVAL : k ? (int)k : -EAGAIN;
}

/* Producer only: every enqueue published its item already.  0. */
static int fastforward_flush(struct am_spsc_end *p)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    return 0;
}

/* How far the producer is ahead of the consumer, in multiples of step up to
 * good: slot pos + d + step - 1 full means every slot before it is. */
static uint64_t ahead(const struct am_spsc_end *c, uint64_t step, uint64_t good)
{
    uint64_t d = 0;
    while (d + step <= good && AO_load(am__spsc_at(c, c->pos + d + step - 1)) != 0)
        d += step;
    return d;
}

/* The paper's adjust_slip (Figure 6), bounded: waits while the producer is
 * less than DANGER ahead and the distance still grows. */
__attribute__((noinline, cold)) static void slip(const struct am_spsc_end *c)
{
    uint64_t slots = c->mask + 1;
    uint64_t step = slots >= 128 ? 8 : slots >= 16 ? slots / 16 : 1;
    uint64_t good = 6 * step < slots ? 6 * step : slots - 1, danger = 2 * step;
    uint64_t dist = ahead(c, step, good), old;

    if (dist >= danger)
        return;
    do {
        old = dist;
        am__spsc_pause((unsigned)(good + 1 - dist));
        dist = ahead(c, step, good);
    } while (dist < good && old < dist);
}

/* Consumer only: peek and release in one step.  0 with the oldest item,
 * -EAGAIN empty, -EPROTO. */
static int fastforward_dequeue(struct am_spsc_end *c, uint64_t *item)
{
    const AO_t *slot;
    int rc = fastforward_peek(c, item, &slot);
    if (rc == 0)
        fastforward_release(c);
    return rc;
}

/* Producer only: the slot at pos, if the consumer has emptied it.  0,
 * -EAGAIN. */
AM__SPSC_VERB int fastforward_reserve(struct am_spsc_end *p, AO_t **slot)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    AO_t *s = am__spsc_at(p, p->pos);
    if (AO_load_acquire(s) != 0) /* pairs with the consumer's give-back */
        return -EAGAIN;
    *slot = s;
    return 0;
}

/* Producer only, after reserve: one release store publishes the item and the
 * slot's other words.  0, -EINVAL. */
AM__SPSC_VERB int fastforward_commit(struct am_spsc_end *p, uint64_t item)
{
    AM__SPSC_IS(p, AM_SPSC_PRODUCER);
    if (item > AM_SPSC_ITEM_MAX)
        return -EINVAL;
    am__spsc_hook(AM_SPSC_PUT);
    AO_store_release(am__spsc_at(p, p->pos), item + 1); /* pairs with peek's acquire */
    p->pos++;
    return 0;
}

/* Consumer only.  0 with the oldest item and its slot, -EAGAIN empty. */
AM__SPSC_VERB int fastforward_peek(struct am_spsc_end *c, uint64_t *item, const AO_t **slot)
{
    AM__SPSC_IS(c, AM_SPSC_CONSUMER);
    AO_t *s = am__spsc_at(c, c->pos);
    AO_t v = AO_load_acquire(s); /* pairs with commit's release */
    if (v == 0)
        return -EAGAIN;
    am__spsc_hook(AM_SPSC_GET);
    *item = v - 1;
    *slot = s;
    return 0;
}

/* Consumer only, after peek: empties the slot.  0. */
AM__SPSC_VERB int fastforward_release(struct am_spsc_end *c)
{
    AM__SPSC_IS(c, AM_SPSC_CONSUMER);
    am__spsc_hook(AM_SPSC_FREE);
    AO_store_release(am__spsc_at(c, c->pos), 0); /* pairs with reserve's acquire */
    c->pos++;
    if ((c->flags & AM_SPSC_SLIP) && c->held++ % SLIP_EVERY == 0)
        slip(c);
    return 0;
}

const struct am_spsc_ops am_spsc_fastforward = {
    .name = "fastforward",
    .kind = AM_SPSC_FASTFORWARD,
    .options = AM_SPSC_SLIP,
    .holds = 0,
    .size = fastforward_size,
    .init = fastforward_init,
    .open = fastforward_open,
    .enqueue = fastforward_enqueue,
    .enqueue_batch = fastforward_enqueue_batch,
    .flush = fastforward_flush,
    .dequeue = fastforward_dequeue,
    .reserve = fastforward_reserve,
    .commit = fastforward_commit,
    .peek = fastforward_peek,
    .release = fastforward_release,
    .slots = SLOTS,
};
