/*
 * reclaim.c - what dead allocators held goes back to the heap (heap.c's file
 * header has the design and what is not covered).
 *
 * One pass over the superblocks, each judged by its state:
 *   SMALL(c)           every block ALLOCATED(dead who) that nobody uses is
 *                      freed; if its allocator died between its header CAS
 *                      and its pop, the message is still the FIFO's head
 *                      (I2): it is popped first, or the block would have two;
 *                      a block HELD(dead who) is made FREE, with a message
 *                      put unless a scan of the FIFO finds the giver's;
 *   DRAINING(c, who)   the same (a dead compactor's blocks are ALLOCATED by
 *                      it), then back to SMALL(c) if who is dead;
 *   CARVING(c, dead)   back to FREE: the carver published none of its blocks;
 *   UNCARVING(c, dead) back to FREE: the compactor held every block;
 *   head of a run      (RUN or CLAIM whose head is itself) with its header
 *                      ALLOCATED(dead who), unused: freed as by am_heap_free;
 *   CLAIM(head, dead)  of a run whose header is not ALLOCATED(who): a claim
 *                      the claimer never finished, back to FREE.
 * Several processes may reclaim at once, and with live allocators: every
 * change is a CAS from the word just read, and words of live processes are
 * never the ones expected.
 */
#include <errno.h>

#include "heap_int.h"

struct reclaim {
    struct am_heap_view *h;
    int (*dead)(void *ctx, unsigned who);
    int (*in_use)(void *ctx, uint64_t off);
    void *ctx;
    unsigned freed;
};

/* Header word w (at unit u) is ALLOCATED by a dead who, its block unused. */
static int forsaken(struct reclaim *r, uint64_t u, AO_t w)
{
    return hw_state(w) == H_ALLOC && hw_who(w) != 0 && r->dead(r->ctx, hw_who(w)) &&
           !(r->in_use && r->in_use(r->ctx, unit_off(r->h, u)));
}

/* Pops the head message of class c if it names unit u (ALLOCATED: I2). */
static void unhead(struct am_heap_view *h, unsigned c, uint64_t u)
{
    uint32_t q, x;
    if (am_fifo_peek(fifo_of(h, c), h->fifo_shift[c], &q, &x) == 0 && x == u)
        am_fifo_pop(fifo_of(h, c), q);
}

/* A block HELD by a dead giver (w, at unit u of class c): its message was
 * put or never was.  Nobody else puts it and no claim removes the message
 * without changing the header, so a scan of the FIFO before the CAS to FREE
 * tells which (a put follows if none). */
static void unhold(struct reclaim *r, unsigned c, uint64_t u, AO_t w)
{
    struct am_fifo *f = fifo_of(r->h, c);
    int queued = am_fifo_holds(f, r->h->fifo_shift[c], (uint32_t)u);
    if (AO_compare_and_swap_full(header_at(r->h, u), w, hw_next(w, H_FREE, 0)) && !queued)
        am_fifo_put(f, r->h->fifo_shift[c], (uint32_t)u);
}

static void small_sb(struct reclaim *r, uint32_t sb, unsigned c)
{
    uint64_t u0 = (uint64_t)sb * AM_HEAP_UNITS;
    for (uint64_t u = u0; u < u0 + AM_HEAP_UNITS; u += 1u << c) {
        AO_t w = AO_load_acquire(header_at(r->h, u));
        if (hw_kind(w) != c)
            continue;
        if (hw_state(w) == H_HELD && hw_who(w) != 0 && r->dead(r->ctx, hw_who(w)))
            unhold(r, c, u, w);
        if (!forsaken(r, u, w))
            continue;
        unhead(r->h, c, u);
        if (am__heap_free_small(r->h, u, w) == 0)
            r->freed++;
    }
}

/* A superblock of a run: free the run if this is its head and its allocator
 * died; release the superblock if it is a dead claimer's unfinished claim. */
static void run_sb(struct reclaim *r, uint32_t sb, AO_t s)
{
    uint32_t head = sb_head(s);
    if (head >= r->h->superblocks)
        return;
    uint64_t u = (uint64_t)head * AM_HEAP_UNITS;
    AO_t w = AO_load_acquire(header_at(r->h, u));
    int owned = hw_state(w) == H_ALLOC && hw_kind(w) == H_LARGE;
    if (head == sb && owned && forsaken(r, u, w)) {
        if (am__heap_large_free(r->h, head, w) == 0)
            r->freed++;
    } else if (sb_kind(s) == SB_CLAIM && !(owned && hw_who(w) == sb_who(s)) &&
               sb_who(s) != 0 && r->dead(r->ctx, sb_who(s))) {
        am__heap_release_claim(r->h, sb, s);
    }
}

/* Is state s (CARVING, DRAINING, UNCARVING) a dead process's? */
static int dead_state(struct reclaim *r, AO_t s)
{
    return sb_who(s) != 0 && r->dead(r->ctx, sb_who(s));
}

static void superblock(struct reclaim *r, uint32_t sb)
{
    AO_t s = AO_load_acquire(state_at(r->h, sb));
    switch (sb_kind(s)) {
    case SB_SMALL:
        small_sb(r, sb, sb_class(s));
        break;
    case SB_DRAINING:
        small_sb(r, sb, sb_class(s));
        if (dead_state(r, s))
            AO_compare_and_swap_full(state_at(r->h, sb), s, sb_small(sb_class(s)));
        break;
    case SB_CARVING:
    case SB_UNCARVING:
        if (dead_state(r, s) && AO_compare_and_swap_full(state_at(r->h, sb), s, SB_FREE)) {
            am__heap_unreserve(r->h, sb_class(s));
            am__heap_lower_hint(r->h, sb);
            if (sb_kind(s) == SB_UNCARVING)
                AO_fetch_and_add1(&hdr_of(r->h)->uncarved);
        }
        break;
    case SB_RUN:
    case SB_CLAIM:
        run_sb(r, sb, s);
        break;
    }
}

unsigned am_heap_reclaim(struct am_heap_view *h, int (*dead)(void *ctx, unsigned who),
                         int (*in_use)(void *ctx, uint64_t off), void *ctx)
{
    struct reclaim r = {h, dead, in_use, ctx, 0};
    for (uint32_t sb = 0; sb < h->superblocks; sb++)
        superblock(&r, sb);
    return r.freed;
}
