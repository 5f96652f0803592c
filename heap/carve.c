/*
 * carve.c - a class takes a superblock from the free space (heap.c's file
 * header has the design).
 *
 * Steps, each a point where the carver may die:
 *   1. quota: only for classes whose FIFO cannot hold a block of every
 *      superblock (heaps of more than 256 MB): a counter of the superblocks
 *      the class took, raised by CAS below its quota, so the FIFO is never
 *      full.  A carver that dies between 1 and 3 costs the class one slot of
 *      quota, not memory.
 *   2. claim: the lowest FREE superblock, from the `low` hint up, then from
 *      the bottom (one pass), CAS FREE -> CARVING(class, who);
 *   3. every block's header ALLOCATED(who) with plain (relaxed atomic) stores:
 *      the superblock is the carver's alone, though compaction's idle checks
 *      and stale frees may read them; then the state SMALL(class) with a
 *      release store;
 *   4. the first block is the carver's; each other one is given back
 *      (am__heap_give: header CAS to HELD(who), FIFO put, CAS to FREE).
 * Reclaim turns a dead carver's CARVING superblock back to FREE (nobody saw
 * its blocks), frees its blocks still ALLOCATED after step 3 and finishes
 * the one it left HELD.  Compaction (compact.c) may give the superblock back
 * to the free space once all its blocks are free again.
 */
#include <errno.h>

#include "heap_int.h"

static int counted(const struct am_heap_view *h, unsigned c)
{
    return h->quota[c] < h->superblocks;
}

/* Step 1: 1 if class c may take one more superblock. */
static int reserve(struct am_heap_view *h, unsigned c)
{
    AO_t *n = &hdr_of(h)->carved[c];
    if (!counted(h, c))
        return 1;
    for (long tries = 0; tries < AM_HEAP_TRIES; tries++) {
        AO_t k = AO_load(n);
        if (k >= h->quota[c])
            return 0;
        if (AO_compare_and_swap_full(n, k, k + 1))
            return 1;
    }
    return 0;
}

void am__heap_unreserve(struct am_heap_view *h, unsigned c)
{
    AO_t *n = &hdr_of(h)->carved[c];
    for (long tries = 0; counted(h, c) && tries < AM_HEAP_TRIES; tries++) {
        AO_t k = AO_load(n);
        if (k == 0 || AO_compare_and_swap_full(n, k, k - 1))
            return;
    }
}

/* Step 2: claims a FREE superblock for (c, who) into *sb; 1, or 0 if none. */
static int claim_low(struct am_heap_view *h, unsigned c, unsigned who, uint32_t *sb)
{
    uint32_t n = h->superblocks, start = (uint32_t)AO_load(&hdr_of(h)->low);
    if (start >= n)
        start = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = start + i < n ? start + i : start + i - n;
        AO_t *st = state_at(h, s);
        if (AO_load(st) == SB_FREE &&
            AO_compare_and_swap_full(st, SB_FREE, sb_carving(c, who))) {
            AO_store(&hdr_of(h)->low, s + 1); /* a hint: races only cost a scan */
            *sb = s;
            return 1;
        }
    }
    return 0;
}

/* Step 3: every block of the superblock ALLOCATED(who), then SMALL(c). */
static void mark(struct am_heap_view *h, uint32_t sb, unsigned c, unsigned who)
{
    uint64_t u0 = (uint64_t)sb * AM_HEAP_UNITS;
    for (uint64_t u = u0; u < u0 + AM_HEAP_UNITS; u += 1u << c) {
        AO_t *hp = header_at(h, u), w = AO_load(hp);
        AO_store(hp, hw_make(H_ALLOC, c, who, hw_gen(w) + 1)); /* atomic: peeks may read */
    }
    AO_store_release(state_at(h, sb), sb_small(c)); /* pairs with small_ok's acquire */
}

/* Step 4: gives blocks 1 .. of the superblock to the class's FIFO. */
static int hand_out(struct am_heap_view *h, uint32_t sb, unsigned c, unsigned who)
{
    uint64_t u0 = (uint64_t)sb * AM_HEAP_UNITS;
    int rc = 0;
    for (uint64_t u = u0 + (1u << c); u < u0 + AM_HEAP_UNITS; u += 1u << c) {
        if (u == u0 + AM_HEAP_UNITS / 2)
            am__heap_hook(AM_HEAP_CARVED);
        AO_t w = AO_load(header_at(h, u));
        if (hw_state(w) == H_ALLOC && hw_who(w) == who && hw_kind(w) == c &&
            am__heap_give(h, u, w) != 0)
            rc = -EAGAIN; /* the FIFO refused it: corrupt */
    }
    return rc;
}

int am__heap_carve(struct am_heap_view *h, unsigned c, unsigned who, uint64_t *off)
{
    uint32_t sb;

    if (!reserve(h, c))
        return -ENOSPC; /* compaction cannot help: the class holds its quota */
    if (!claim_low(h, c, who, &sb)) {
        am__heap_unreserve(h, c);
        return -ENOMEM;
    }
    am__heap_hook(AM_HEAP_CARVING);
    mark(h, sb, c, who);
    if (hand_out(h, sb, c, who) != 0)
        return -EAGAIN; /* the first block stays ALLOCATED(who): reclaim frees it */
    *off = unit_off(h, (uint64_t)sb * AM_HEAP_UNITS);
    return 0;
}
