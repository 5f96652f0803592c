/*
 * stats.c - the heap seen whole: a snapshot for tools and benchmarks
 * (am_heap_stats), and an audit of its invariants for tests (heap_int.h).
 * Both read every word with plain loads and check it against the view: a
 * corrupt heap gives odd figures, never a read outside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_int.h"

/* Live blocks of a SMALL(c) superblock into st. */
static void small_live(const struct am_heap_view *h, uint32_t sb, unsigned c,
                       struct am_heap_stats *st)
{
    uint64_t u0 = (uint64_t)sb * AM_HEAP_UNITS;
    for (uint64_t u = u0; u < u0 + AM_HEAP_UNITS; u += 1u << c) {
        AO_t w = AO_load(header_at(h, u));
        if (hw_state(w) == H_ALLOC && hw_kind(w) == c) {
            st->live += class_bytes(c);
            st->blocks_live++;
        }
    }
}

/* A run's head counts the run as one live block if its header is ALLOCATED. */
static void run_live(const struct am_heap_view *h, uint32_t sb, AO_t s,
                     struct am_heap_stats *st)
{
    AO_t w = AO_load(header_at(h, (uint64_t)sb * AM_HEAP_UNITS));
    uint32_t n = sb_len(s);
    if (sb_head(s) == sb && hw_state(w) == H_ALLOC && hw_kind(w) == H_LARGE &&
        n <= h->superblocks - sb) {
        st->live += (size_t)n << AM_HEAP_SB_SHIFT;
        st->blocks_live++;
    }
}

void am_heap_stats(const struct am_heap_view *h, struct am_heap_stats *st)
{
    memset(st, 0, sizeof *st);
    st->capacity = (size_t)h->superblocks << AM_HEAP_SB_SHIFT;
    for (uint32_t sb = 0; sb < h->superblocks; sb++) {
        AO_t s = AO_load(state_at(h, sb));
        if (s == SB_FREE) {
            st->free_space += AM_HEAP_SB;
            continue;
        }
        st->reserved += AM_HEAP_SB;
        if (sb_kind(s) == SB_SMALL || sb_kind(s) == SB_DRAINING)
            small_live(h, sb, sb_class(s), st);
        else if (sb_kind(s) == SB_RUN)
            run_live(h, sb, s, st);
    }
    st->uncarved = (unsigned long)AO_load(&hdr_of(h)->uncarved);
}

/* ---- the audit ---- */

/* Counts a fault; the first one's text goes to a->why. */
static void fault(struct am__heap_audit *a, unsigned long *count, const char *what,
                  unsigned long long x)
{
    if (!a->why[0])
        snprintf(a->why, sizeof a->why, "%s (%llu)", what, x);
    ++*count;
}

/* Marks every message of class c's FIFO in seen (one byte per unit). */
static void messages(const struct am_heap_view *h, unsigned c, unsigned char *seen,
                     struct am__heap_audit *a)
{
    struct am_fifo *f = fifo_of(h, c);
    uint32_t cap = 1u << h->fifo_shift[c], head = (uint32_t)AO_load(&f->head);
    uint32_t n = am_fifo_count(f, h->fifo_shift[c]);
    AO_t t = AO_load(&f->tail);

    for (uint32_t i = 0; i < n; i++) {
        uint32_t q = head + i;
        AO_t m = i + 1 == n ? t : AO_load(&f->slot[q & (cap - 1)]);
        uint32_t u = (uint32_t)m;
        a->fifo_msgs++;
        if ((uint32_t)(m >> 32) != q || u >= units_of(h) || seen[u]++ ||
            !hw_claimable(AO_load(header_at(h, u))) ||
            hw_kind(AO_load(header_at(h, u))) != c || (u & ((1u << c) - 1)) ||
            AO_load(state_at(h, u / AM_HEAP_UNITS)) != sb_small(c))
            fault(a, &a->extra,
                  "a message names a block twice, one not FREE or not of its class, unit",
                  u);
    }
}

/* Every block of a SMALL(c) superblock: FREE ones must have been seen. */
static void blocks(const struct am_heap_view *h, uint32_t sb, unsigned c,
                   const unsigned char *seen, struct am__heap_audit *a)
{
    uint64_t u0 = (uint64_t)sb * AM_HEAP_UNITS;
    for (uint64_t u = u0; u < u0 + AM_HEAP_UNITS; u += 1u << c) {
        AO_t w = AO_load(header_at(h, u));
        if (hw_kind(w) != c || hw_state(w) == H_NONE) {
            fault(a, &a->half, "a header of the wrong class, unit", u);
        } else if (hw_state(w) == H_ALLOC) {
            a->live_blocks++;
        } else if (hw_state(w) == H_HELD) {
            fault(a, &a->half, "a block HELD: a give-back unfinished, unit", u);
        } else {
            a->free_blocks++;
            if (!seen[u])
                fault(a, &a->orphans, "a FREE block without a message, unit", u);
        }
    }
}

/* A superblock that is neither FREE nor SMALL. */
static void other(const struct am_heap_view *h, uint32_t sb, AO_t s,
                  struct am__heap_audit *a)
{
    if (sb_kind(s) != SB_RUN) {
        fault(a, &a->half, "a superblock half claimed or corrupt", sb);
        return;
    }
    if (sb_head(s) > sb) {
        fault(a, &a->half, "a run whose head is above it, superblock", sb);
        return;
    }
    AO_t w = AO_load(header_at(h, (uint64_t)sb_head(s) * AM_HEAP_UNITS));
    if (hw_state(w) != H_ALLOC || hw_kind(w) != H_LARGE)
        fault(a, &a->half, "a run without an ALLOCATED head, superblock", sb);
    else if (sb_head(s) == sb)
        a->live_blocks++;
}

unsigned long am__heap_audit(const struct am_heap_view *h, struct am__heap_audit *a)
{
    unsigned char *seen = calloc(units_of(h), 1);

    memset(a, 0, sizeof *a);
    if (!seen)
        abort();
    for (unsigned c = 0; c < AM_HEAP_CLASSES; c++)
        messages(h, c, seen, a);
    for (uint32_t sb = 0; sb < h->superblocks; sb++) {
        AO_t s = AO_load(state_at(h, sb));
        if (sb_kind(s) == SB_SMALL)
            blocks(h, sb, sb_class(s), seen, a);
        else if (s != SB_FREE)
            other(h, sb, s, a);
    }
    free(seen);
    return a->orphans + a->extra + a->half;
}
