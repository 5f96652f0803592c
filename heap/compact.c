/*
 * compact.c - class superblocks whose blocks are all free go back to the free
 * space when an allocation finds none (heap.c's file header has the design,
 * the invariants and the orderings).
 *
 * Steps, each a point where the compactor may die:
 *   1. choose: superblocks SMALL(c), c not the class wanted, whose block
 *      headers are all FREE now (read once: a hint).  For a class: up to
 *      BATCH of them, all of the first such class found from the top down.
 *      For a run of n: the topmost n superblocks in a row each FREE or such,
 *      BATCH at a time.
 *   2. mark each: CAS SMALL(c) -> DRAINING(c, who).  DRAINING serves the
 *      class as SMALL does; it only keeps other compactors away, so that two
 *      never split one superblock's blocks between them and both fail.
 *   3. drain class c's FIFO as an allocator does (heap.c's claim: header CAS
 *      FREE -> ALLOCATED(c, who), then pop), at most as many blocks as the
 *      FIFO held when it began, until it holds every block of its marked
 *      superblocks of c.  A block of a marked superblock is kept (the low
 *      bits of the generation its claim wrote are noted), any other is given
 *      back at once, to the FIFO's tail (am__heap_give: HELD(who), put, FREE).
 *   4. uncarve each marked superblock all of whose blocks it holds: CAS
 *      DRAINING -> UNCARVING(c, who); CAS each header from the word its claim
 *      wrote to the next generation; then every header FREE (relaxed stores)
 *      and the state FREE (release).  If a header is not the word its claim
 *      wrote (a double free that read the block before the state changed
 *      took it), the superblock goes back to SMALL(c) and step 5 follows.
 *   5. give back every other marked superblock: DRAINING -> SMALL(c) by CAS,
 *      then each block it holds given back (am__heap_give).
 * A compactor that dies holding blocks left them ALLOCATED(who): reclaim
 * frees them, finishes the one it may have left HELD(who), puts
 * DRAINING(c, who) back to SMALL(c) and finishes UNCARVING(c, who) as FREE
 * (nobody else can reach those blocks).
 *
 * Cost: nothing until an allocation finds no free superblock; then a scan of
 * the superblock states (and of the headers of SMALL ones up to their first
 * block not FREE) and, per batch, one drain of each class's FIFO.  Private
 * memory: the batch's record, about 9 KB on the caller's stack.
 *
 * Every loop is bounded (BATCH superblocks, one pass over the superblocks per
 * scan, a drain of at most the FIFO's count within AM_HEAP_TRIES attempts),
 * every unit it touches is computed from a superblock index it scanned, and
 * every message it follows is checked by claim, so a corrupt heap makes it
 * give back nothing, never touch memory outside the heap or spin.
 */
#include "heap_int.h"

#define BATCH 8 /* superblocks marked per drain */

/* A marked superblock: which of its blocks the compactor holds, and the low
 * 32 bits of the generation each header got from its claim. */
struct cand {
    uint32_t sb;
    unsigned c, held;
    uint64_t mask[AM_HEAP_UNITS / 64];
    uint32_t gen[AM_HEAP_UNITS];
};

struct compaction {
    struct am_heap_view *h;
    unsigned who, n;
    struct cand cand[BATCH];
};

static unsigned blocks(unsigned c)
{
    return AM_HEAP_UNITS >> c;
}

static AO_t *block_header(const struct am_heap_view *h, const struct cand *d, unsigned i)
{
    return header_at(h, (uint64_t)d->sb * AM_HEAP_UNITS + ((uint64_t)i << d->c));
}

int am__heap_idle(const struct am_heap_view *h, uint32_t sb, unsigned skip, unsigned *c)
{
    AO_t s = AO_load(state_at(h, sb));
    if (s != sb_small(sb_class(s)) || sb_class(s) == skip)
        return 0;
    *c = sb_class(s);
    uint64_t u0 = (uint64_t)sb * AM_HEAP_UNITS;
    for (uint64_t u = u0; u < u0 + AM_HEAP_UNITS; u += 1u << *c) {
        AO_t w = AO_load(header_at(h, u));
        if (hw_state(w) != H_FREE || hw_kind(w) != *c)
            return 0;
    }
    return 1;
}

/* Step 2: 1 if sb is now DRAINING(c, who) and a candidate. */
static int mark(struct compaction *k, uint32_t sb, unsigned c)
{
    struct cand *d = &k->cand[k->n];
    if (!AO_compare_and_swap_full(state_at(k->h, sb), sb_small(c), sb_draining(c, k->who)))
        return 0;
    d->sb = sb;
    d->c = c;
    d->held = 0;
    for (unsigned i = 0; i < AM_HEAP_UNITS / 64; i++)
        d->mask[i] = 0;
    k->n++;
    return 1;
}

static struct cand *cand_of(struct compaction *k, uint32_t sb)
{
    for (unsigned i = 0; i < k->n; i++)
        if (k->cand[i].sb == sb)
            return &k->cand[i];
    return NULL;
}

/* Does some candidate of class c still lack blocks? */
static int missing(const struct compaction *k, unsigned c)
{
    for (unsigned i = 0; i < k->n; i++)
        if (k->cand[i].c == c && k->cand[i].held < blocks(c))
            return 1;
    return 0;
}

/* Notes block x (header word w, just claimed) as held in d; 0 if it is not
 * d's to hold (another class, or held already: a corrupt FIFO). */
static int keep(struct cand *d, unsigned c, uint32_t x, AO_t w)
{
    unsigned i = (x % AM_HEAP_UNITS) >> c;
    if (d->c != c || (d->mask[i / 64] >> (i % 64) & 1))
        return 0;
    d->mask[i / 64] |= (uint64_t)1 << (i % 64);
    d->gen[i] = (uint32_t)hw_gen(w);
    d->held++;
    return 1;
}

/* Is w the header word the compactor's claim (or bump) gave block i of d? */
static int mine(const struct compaction *k, const struct cand *d, unsigned i, AO_t w)
{
    return (d->mask[i / 64] >> (i % 64) & 1) && hw_state(w) == H_ALLOC &&
           hw_kind(w) == d->c && hw_who(w) == k->who && (uint32_t)hw_gen(w) == d->gen[i];
}

/* Step 3: takes class c's free blocks until every candidate of c is whole,
 * or the FIFO's messages at the start have all been seen. */
static void drain(struct compaction *k, unsigned c)
{
    struct am_heap_view *h = k->h;
    struct am_fifo *f = fifo_of(h, c);
    uint32_t left = am_fifo_count(f, h->fifo_shift[c]);

    for (long tries = 0; left > 0 && missing(k, c) && tries < AM_HEAP_TRIES; tries++) {
        uint32_t q, x;
        AO_t w;
        if (am_fifo_peek(f, h->fifo_shift[c], &q, &x) != 0)
            return; /* empty, or corrupt */
        if (!am__heap_claim(h, c, k->who, q, x, &w))
            continue;
        left--;
        am__heap_hook(AM_HEAP_TAKEN);
        struct cand *d = cand_of(k, x / AM_HEAP_UNITS);
        if (!d || !keep(d, c, x, w))
            am__heap_give(h, x, w); /* not wanted: back to the tail at once */
    }
}

/* Step 4: 1 if d is FREE now.  0 if it could not be (not whole, or a header
 * changed under it): d is then SMALL or DRAINING, and its blocks still held
 * are for give_back. */
static int uncarve(struct compaction *k, struct cand *d)
{
    struct am_heap_view *h = k->h;
    AO_t *st = state_at(h, d->sb);
    unsigned n = blocks(d->c), i;

    if (d->held < n || !AO_compare_and_swap_full(st, sb_draining(d->c, k->who),
                                                 sb_uncarving(d->c, k->who)))
        return 0;
    /* No claim or free reads this superblock as serving c any more; a free
     * that read it before read a header word that the bump below outdates. */
    for (i = 0; i < n; i++) {
        if (i == n / 2)
            am__heap_hook(AM_HEAP_UNCARVING);
        AO_t *hp = block_header(h, d, i), w = AO_load(hp);
        if (!mine(k, d, i, w) ||
            !AO_compare_and_swap_full(hp, w, hw_next(w, H_ALLOC, k->who)))
            break;
        d->gen[i]++;
    }
    if (i < n) { /* block i was freed behind its back: keep the class */
        AO_compare_and_swap_full(st, sb_uncarving(d->c, k->who), sb_small(d->c));
        return 0;
    }
    for (i = 0; i < n; i++) { /* the superblock is the compactor's alone */
        AO_t *hp = block_header(h, d, i);
        AO_store(hp, hw_next(AO_load(hp), H_FREE, 0));
    }
    AO_store_release(st, SB_FREE); /* pairs with the acquire of carve's and runs' CAS */
    am__heap_unreserve(h, d->c);
    am__heap_lower_hint(h, d->sb);
    AO_fetch_and_add1(&hdr_of(h)->uncarved);
    return 1;
}

/* Step 5: d serves its class again and gets back every block still held. */
static void give_back(struct compaction *k, struct cand *d)
{
    struct am_heap_view *h = k->h;
    AO_compare_and_swap_full(state_at(h, d->sb), sb_draining(d->c, k->who), sb_small(d->c));
    for (unsigned i = 0; i < blocks(d->c); i++) {
        AO_t w = AO_load(block_header(h, d, i));
        if (mine(k, d, i, w))
            am__heap_give(h, (uint64_t)d->sb * AM_HEAP_UNITS + ((uint64_t)i << d->c), w);
    }
}

/* Steps 3-5 for the candidates marked; how many went FREE. */
static unsigned settle(struct compaction *k)
{
    unsigned classes = 0, done = 0;
    for (unsigned i = 0; i < k->n; i++)
        classes |= 1u << k->cand[i].c;
    for (unsigned c = 0; c < AM_HEAP_CLASSES; c++)
        if (classes >> c & 1)
            drain(k, c);
    am__heap_hook(AM_HEAP_DRAINED);
    for (unsigned i = 0; i < k->n; i++) {
        if (uncarve(k, &k->cand[i]))
            done++;
        else
            give_back(k, &k->cand[i]);
    }
    return done;
}

/* For class want: up to BATCH idle superblocks of one other class. */
unsigned am__heap_compact_class(struct am_heap_view *h, unsigned want, unsigned who)
{
    struct compaction k;
    unsigned c = AM_HEAP_CLASSES, got;

    k.h = h;
    k.who = who;
    k.n = 0;
    for (int64_t sb = (int64_t)h->superblocks - 1; sb >= 0 && k.n < BATCH; sb--)
        if (am__heap_idle(h, (uint32_t)sb, want, &got) &&
            (c == AM_HEAP_CLASSES || got == c) && mark(&k, (uint32_t)sb, got))
            c = got;
    return k.n ? settle(&k) : 0;
}

int64_t am__heap_compact_window(struct am_heap_view *h, uint32_t head, uint32_t n,
                                unsigned who)
{
    struct compaction k;
    uint32_t sb = head + n;
    unsigned c;

    k.h = h;
    k.who = who;
    while (sb > head) { /* from the top down, BATCH at a time */
        uint32_t top = sb - 1;
        int stuck = 0;
        for (k.n = 0; sb > head && k.n < BATCH && !stuck; sb--)
            if (AO_load(state_at(h, sb - 1)) != SB_FREE)
                stuck =
                    !am__heap_idle(h, sb - 1, AM_HEAP_CLASSES, &c) || !mark(&k, sb - 1, c);
        if (stuck)
            top = sb; /* the one that would not be marked */
        if ((k.n && settle(&k) < k.n) || stuck)
            return top;
    }
    return -1;
}
