/*
 * large.c - blocks larger than the largest class: runs of whole superblocks
 * taken straight from the free space (heap.c's file header has the design).
 *
 * Claim of n superblocks: scan down from the top for n consecutive ones each
 * FREE or idle (a class's with every block free; jumping over allocated runs
 * by their recorded head); if some are idle, give them back first
 * (compact.c; if one cannot be, go on below it); then CAS each, top first,
 * FREE -> CLAIM(head, who); on a lost CAS release the part claimed (CAS back
 * to FREE) and go on below the conflict.  Taking the topmost such window,
 * rather than the topmost FREE one, keeps runs tiled from the top, so that
 * idle class superblocks never split the heap into holes no run fits (heap.c
 * has why).  Claimed: the head's
 * header word CAS to ALLOCATED(LARGE, who), which is the allocation (who is
 * recorded by the same step), then every state RUN(head, n) with release
 * stores, head last.  Small classes carve from the bottom: the two meet only
 * when the heap is nearly full, and a run that ends leaves a hole at the top
 * that the next run of its size or smaller fits.
 *
 * Free: the header CAS ALLOCATED(who) -> FREE (double free and wrong who fail
 * there), then each superblock of the run back to FREE by CAS of the state
 * read, from the top down, the head last: until the head is FREE no other run
 * can have this head.  The run's extent is its recorded length, not the
 * states that name its head: a claimer that found these superblocks free
 * before this run took them may hold CLAIM(head, its who) just above the run,
 * stalled after its first CAS, and must keep it (a release that took it was
 * caught by check_heap's owner map: two runs on one superblock).  A run freed
 * before it was published (reclaim of a dead claimer) extends over the
 * states CLAIM(head, its who) or RUN(head, ...).
 *
 * Dead claimers: reclaim frees a run whose header is ALLOCATED by a dead who
 * (published or not: am__heap_large_free accepts CLAIM states of its head), and
 * releases CLAIM(dead who) superblocks of a run whose header it never got.
 */
#include <errno.h>

#include "heap_int.h"

/* Lowers the carving hint to sb: freed space at the bottom is found first. */
void am__heap_lower_hint(struct am_heap_view *h, uint32_t sb)
{
    AO_t *low = &hdr_of(h)->low;
    AO_t k = AO_load(low);
    if (sb < k)
        AO_compare_and_swap_full(low, k, sb); /* a hint: a lost race costs a scan */
}

/* Is state s part of the run with this head, allocated by who: published, or
 * still claimed by who?  A CLAIM of the same head by another claimer is not:
 * one that found these superblocks free before this run took them may have
 * claimed the top of its window above the run and be stalled there. */
static int of_run(AO_t s, uint32_t head, unsigned who)
{
    return sb_head(s) == head &&
           (sb_kind(s) == SB_RUN || (sb_kind(s) == SB_CLAIM && sb_who(s) == who));
}

/* One past the run's last superblock: its recorded length if published, else
 * (a dead claimer's run, freed by reclaim) as far as its states go. */
static uint32_t run_end(const struct am_heap_view *h, uint32_t head, unsigned who)
{
    AO_t s = AO_load(state_at(h, head));
    if (sb_kind(s) == SB_RUN && sb_head(s) == head && sb_len(s) >= 1 &&
        sb_len(s) <= h->superblocks - head)
        return head + sb_len(s);
    uint32_t end = head;
    while (end < h->superblocks && of_run(AO_load(state_at(h, end)), head, who))
        end++;
    return end;
}

/* Looks for n superblocks in a row at or below top, each FREE or idle (a
 * class's, all its blocks free: compact.c): 1, *head and in *idle whether
 * some are idle; or 0. */
static int find(const struct am_heap_view *h, int64_t top, uint32_t n, uint32_t *head,
                int *idle)
{
    uint32_t row = 0, idles = 0;
    unsigned c;
    for (int64_t k = top; k >= 0; k--) {
        AO_t s = AO_load(state_at(h, (uint32_t)k));
        if (s == SB_FREE || am__heap_idle(h, (uint32_t)k, AM_HEAP_CLASSES, &c)) {
            idles += s != SB_FREE;
            if (++row == n) {
                *head = (uint32_t)k;
                *idle = idles > 0;
                return 1;
            }
            continue;
        }
        row = idles = 0;
        if (sb_kind(s) == SB_RUN && sb_head(s) < (uint64_t)k)
            k = sb_head(s); /* skip the rest of that run */
    }
    return 0;
}

/* Releases superblocks [from, to] claimed as CLAIM(head, who), top first. */
static void unclaim(struct am_heap_view *h, uint32_t from, uint32_t to, uint32_t head,
                    unsigned who)
{
    for (int64_t k = to; k >= (int64_t)from; k--)
        AO_compare_and_swap_full(state_at(h, (uint32_t)k), sb_claim(head, who), SB_FREE);
}

/* Claims [head, head + n) top first: 1, or 0 and *stop the superblock whose
 * CAS was lost (the part above it is released). */
static int claim_run(struct am_heap_view *h, uint32_t head, uint32_t n, unsigned who,
                     uint32_t *stop)
{
    for (int64_t k = (int64_t)head + n - 1; k >= head; k--) {
        if (!AO_compare_and_swap_full(state_at(h, (uint32_t)k), SB_FREE,
                                      sb_claim(head, who))) {
            unclaim(h, (uint32_t)k + 1, head + n - 1, head, who);
            *stop = (uint32_t)k;
            return 0;
        }
        if (k == (int64_t)head + n - 1)
            am__heap_hook(AM_HEAP_RUN_PART);
    }
    return 1;
}

/* Allocates the claimed run: its header, then its states. */
static void stamp(struct am_heap_view *h, uint32_t head, uint32_t n, unsigned who)
{
    AO_t *hp = header_at(h, (uint64_t)head * AM_HEAP_UNITS);
    for (int tries = 0; tries < 8; tries++) { /* ours: only corruption races it */
        AO_t w = AO_load(hp);
        if (AO_compare_and_swap_full(hp, w, hw_make(H_ALLOC, H_LARGE, who, hw_gen(w) + 1)))
            break;
    }
    am__heap_hook(AM_HEAP_RUN_HEADER);
    for (int64_t k = (int64_t)head + n - 1; k >= head; k--)
        AO_store_release(state_at(h, (uint32_t)k), sb_run(head, n));
}

int am__heap_large_alloc(struct am_heap_view *h, size_t len, unsigned who, uint64_t *off)
{
    uint32_t n = runs_of(len), head, stop;
    int64_t top = (int64_t)h->superblocks - 1;

    for (long tries = 0; tries < AM_HEAP_TRIES; tries++) {
        int idle;
        if (!find(h, top, n, &head, &idle))
            return -ENOMEM;
        int64_t stuck = idle ? am__heap_compact_window(h, head, n, who) : -1;
        if (stuck >= 0) {
            top = stuck - 1; /* a block of it was taken meanwhile: look below */
            continue;
        }
        if (claim_run(h, head, n, who, &stop)) {
            stamp(h, head, n, who);
            *off = unit_off(h, (uint64_t)head * AM_HEAP_UNITS);
            return 0;
        }
        top = (int64_t)stop - 1;
    }
    return -EAGAIN;
}

/* Returns the run [head, ...) of who to the free space, top first, head last. */
static void release(struct am_heap_view *h, uint32_t head, unsigned who)
{
    for (int64_t k = (int64_t)run_end(h, head, who) - 1; k >= head; k--) {
        AO_t *st = state_at(h, (uint32_t)k), s = AO_load(st);
        if (of_run(s, head, who))
            AO_compare_and_swap_full(st, s, SB_FREE);
    }
    am__heap_lower_hint(h, head);
}

int am__heap_large_free(struct am_heap_view *h, uint32_t head, AO_t w)
{
    if (!AO_compare_and_swap_full(header_at(h, (uint64_t)head * AM_HEAP_UNITS), w,
                                  hw_next(w, H_FREE, 0)))
        return -EINVAL;
    am__heap_hook(AM_HEAP_FREEING);
    release(h, head, hw_who(w));
    return 0;
}

void am__heap_release_claim(struct am_heap_view *h, uint32_t sb, AO_t s)
{
    if (AO_compare_and_swap_full(state_at(h, sb), s, SB_FREE))
        am__heap_lower_hint(h, sb);
}
