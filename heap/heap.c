/*
 * heap.c - a lock-free heap in shared memory after XMalloc (Huang et al.
 * 2011), adapted to processes that may die: allocation and free of small
 * blocks; the layout is heap_int.h's, carving carve.c's, runs large.c's,
 * compaction compact.c's, reclaim reclaim.c's.
 *
 * Design.  The heap is cut into 64 KB superblocks.  Small blocks come in eight
 * power-of-two classes, 256 B to 32 KB: a class takes a whole superblock from
 * the free space at once (a CAS on the superblock's state word) and cuts it
 * into blocks, 256 of 256 B down to 2 of 32 KB, which then serve that class
 * until compaction gives the superblock back (below).  64 KB: the largest
 * class fits twice, the smallest 256 times, so a superblock's header words
 * (one per 256 B) cost 3 % and a class's worst internal waste in its last
 * superblock is one superblock; larger superblocks would strand more memory
 * in a class between compactions, smaller ones would make 32 KB blocks a run
 * of their own.  Free blocks of each class wait in that class's lock-free
 * FIFO (fifo.h, XMalloc's buffer: sequence numbers against ABA), which is
 * sized to hold every block the class may carve (its quota), so it is never
 * full.  Blocks larger than 32 KB are runs of whole superblocks from the top
 * down, while classes carve from the bottom up, so the two meet only when the
 * heap is full and runs freed leave holes runs can reuse (large.c).  A freed
 * run goes back to the free space at once.
 *
 * Compaction (compact.c).  A superblock whose blocks are all FREE is idle.
 * An allocation whose class FIFO is empty and that finds no FREE superblock
 * gives back idle superblocks of another class and tries once more; a run
 * takes the topmost window of superblocks each FREE or idle and gives back
 * the idle ones in it first.  Runs look past FREE space for idle superblocks
 * so that they tile the heap from the top: with first fit over FREE space
 * alone, an idle superblock left at the top splits the heap into holes no
 * run fits, and am_heap_bytes_for(len, count)'s promise (count blocks of len
 * at once whenever nothing else is allocated, whatever came before) fails.
 * Blocks leave a FIFO only from its head, so a compactor takes the class's
 * blocks as an allocator does, keeps those of the superblocks it marked
 * DRAINING and gives the others back at once; a superblock it holds whole
 * goes UNCARVING, then FREE.  Compaction costs nothing until memory runs out
 * and then one pass over the class's FIFO per batch of up to 8 superblocks.
 * Not chosen: giving a superblock back eagerly when a free makes it idle.
 * Its blocks' messages sit anywhere in the FIFO, so the free could not take
 * them out, only mark the superblock for the next allocators of the class to
 * collect, and a class nobody allocates any more (the case that matters) has
 * no next allocators; and a per-superblock live count would cost an extra
 * contended RMW on every allocation and free, and goes wrong for good when a
 * process dies between its header CAS and its count update.
 *
 * Allocation coalescing: one superblock claim (one CAS) serves a whole
 * superblock of requests: the carver keeps the first block and hands the
 * others to the FIFO, where the next requests find them without touching the
 * free space (the paper's point, across time instead of across a warp).  The
 * carver also writes the superblock's header words with plain stores behind
 * one release store of its state, instead of a CAS each, and a run of n
 * superblocks is one request to the free space: one downward scan, n CASes,
 * one header.  What is not coalesced: each small request still takes one
 * FIFO message, and frees go one by one.
 *
 * Every block has a header word (heap_int.h): FREE, ALLOCATED or HELD, its
 * kind (class or run), the allocator `who` while allocated, and a generation
 * that every change increments.  The header is the truth; the FIFO only says
 * where to look.  Allocation: peek the head message of the class's FIFO
 * (block x, sequence number q), read x's header, check q is still the head,
 * CAS the header FREE (or HELD) -> ALLOCATED(who), then pop q (CAS the FIFO
 * head from q to q+1).  Whoever meets a head message whose block is
 * ALLOCATED pops it for the claimer (the claimer may be stalled or dead
 * there).  Free: one CAS of the header ALLOCATED(who) -> FREE, so a double
 * free or a wrong who fails (-EINVAL) and changes nothing, then a FIFO put.
 * A give-back (am__heap_give: a carver's hand-out, a compactor's) is a free by who
 * itself that says so: CAS ALLOCATED(who) -> HELD(who), put, CAS HELD -> FREE
 * unless a claimer took the block (HELD may be claimed as FREE is).
 *
 * Superblock states (heap_int.h): FREE, CARVING(c, who), SMALL(c), CLAIM and
 * RUN for runs, DRAINING(c, who) (SMALL(c) marked by compactor who; it serves
 * class c as SMALL does), UNCARVING(c, who) (every block held by who; it
 * serves nobody).  A superblock's life: FREE -> CARVING -> SMALL ->
 * (DRAINING -> SMALL)* -> DRAINING -> UNCARVING -> FREE, or FREE -> CLAIM ->
 * RUN -> FREE; UNCARVING can also fall back to SMALL (a double free, below).
 *
 * Invariants (between calls; a call in progress is at one of the hooks):
 *   I1 a FREE small block has exactly one message in its class's FIFO, or is
 *      between its free's header CAS and its put; a HELD block has one, or
 *      none while its giver is between its CAS and its put;
 *   I2 an ALLOCATED small block has no message, except the one its allocator
 *      claimed it from, between the header CAS and the pop; that message is
 *      then the FIFO's head (it was when claimed, and only a pop moves it);
 *   I3 a message names a block of its class (unit aligned to the class, in a
 *      superblock that serves the class: SMALL or DRAINING of it): I1 and I2
 *      make it the block's one;
 *   I4 only compactor who moves DRAINING(c, who) on (to UNCARVING, or back
 *      to SMALL), or reclaim once who is dead (back to SMALL);
 *   I5 an UNCARVING(c, who) superblock's blocks are all ALLOCATED(c, who)
 *      with the generations who's claims gave them, or (its headers reset)
 *      FREE: none has a message (I2, its claims popped them), so no claim
 *      reaches them, and no free can change them once their headers are
 *      bumped (ordering, below); only who moves it on (to FREE, or back to
 *      SMALL), or reclaim once who is dead (to FREE).
 * The claim keeps I1-I2: the header read is taken while q is still the head
 * (re-checked after it), so x was FREE for the message q; the CAS then
 * succeeds only if no one changed the header since, that is only if x is
 * still FREE for q, and I1 says q is its only message.  Without the re-check
 * a claimer that read (q, x) long ago could take x freed again under a later
 * message, which would outlive the claim and name x twice later.  I5 is what
 * makes a FREE superblock safe to carve again: no message of its old class
 * outlives it.  A double free of a block the compactor holds under the same
 * who (the application's bug, as any double free after reuse) either comes
 * before the bump and makes the compactor give the superblock back to its
 * class (SMALL), or after it and fails (check_heap double_free_while_
 * compacting).
 *
 * Processes that die.  Allocation records who in the same CAS that allocates,
 * so a dead allocator's blocks are found by their headers and freed by
 * am_heap_reclaim; one that died between its header CAS and its pop left its
 * message at the head, and the next peek (or reclaim, before freeing the
 * block) pops it (I2).  A carver or run claimer that died half-way left a
 * superblock CARVING(who) or CLAIM(who): reclaim releases those of dead who.
 * A compactor holds blocks ALLOCATED under its own who, so a dead one's are
 * freed as any; reclaim puts its DRAINING superblocks back to SMALL and its
 * UNCARVING ones to FREE (I5: nobody else could reach their blocks).  A giver
 * (carver, compactor) that died with a block HELD(who) put its message or
 * did not: nobody else puts that block, and no claim removes its message
 * without changing the header, so reclaim scans the FIFO for it
 * (am_fifo_holds), then makes the header FREE by CAS and puts a message only
 * if there was none.  Not covered: a process that dies inside am_heap_free,
 * between the header CAS and the put (or a run's release), loses that block
 * (check_heap killed_in_free shows the one block lost), and so does a
 * reclaim that dies between its header CAS and its put; in shmam the freer
 * and the reclaimer are the heap's owner, whose death ends the heap.
 * Telling such a block from one a live freer is about to put would need the
 * freer's identity in the header, which am_heap_free does not have.  Nor
 * is a double free that races a compaction whole: its block's message names
 * a superblock UNCARVING for a moment, and a claimer that meets it then
 * drops it (the block is lost), as does a compactor that dies before it
 * gives that superblock back to its class.
 *
 * Trust.  Every unit, superblock index, class and run length read from shared
 * memory is checked against the private view (heap.h) before it is used: a
 * message naming no block of its class is popped and dropped, a header of the
 * wrong kind is not claimed, and every loop is bounded (AM_HEAP_TRIES lost
 * CASes, one pass over the superblocks per scan, compaction's batches of 8
 * and drains of at most a FIFO's count), so a corrupt heap makes calls fail
 * (-EAGAIN, -EINVAL, NULL, -ENOMEM) and never touch memory outside it or
 * spin for ever.
 *
 * Memory ordering (every CAS is AO_compare_and_swap_full, a full barrier):
 *   - free's header CAS, then its put's CAS, pair with a claimer's acquire
 *     loads of the FIFO (peek) and then of the header: a message seen means
 *     its block's FREE header is seen; the same for a give-back's HELD;
 *   - the claimer's header CAS orders its later writes to the data after the
 *     header CAS of the free that preceded it, which follows the freer's last
 *     reads of the data (a receiver's handler);
 *   - carve.c: headers written with plain stores, then the superblock's state
 *     SMALL with a release store, pairing with the acquire load of the state
 *     that checks every message (I3) before its header is read;
 *   - the re-check of the head is an acquire load after the header's acquire
 *     load, so it cannot be satisfied earlier than the header was read;
 *   - compact.c: a free reads the header, then the state (acquire loads, in
 *     that order); if the state still served the class, the header was read
 *     before the CAS to UNCARVING and so before the bump CAS that follows
 *     it, and the free's CAS expects a generation the bump outdated;
 *   - compact.c: headers reset with plain stores, then the state FREE with a
 *     release store, pairing with the CAS (full) by which a carver or a run
 *     claimer takes the FREE superblock before it reads those headers; the
 *     data's last readers precede their frees' CASes, which precede the
 *     compactor's claims, so a block's next owner writes after them.
 */
#include <errno.h>

#include "heap_int.h"

void (*am_heap_stall_hook)(enum am_heap_hook where);

/* The class that serves len bytes (len <= AM_HEAP_SMALL_MAX). */
static unsigned class_of(size_t len)
{
    unsigned c = 0;
    while (class_bytes(c) < len)
        c++;
    return c;
}

/* Is unit u the start of a block of class c now (in range, aligned, in a
 * superblock that serves c: SMALL(c) or DRAINING(c, anyone))?  The acquire
 * pairs with carve's release of SMALL. */
static int small_ok(const struct am_heap_view *h, unsigned c, uint64_t u)
{
    if (u >= units_of(h) || (u & ((1u << c) - 1)))
        return 0;
    return sb_serves(AO_load_acquire(state_at(h, (uint32_t)(u / AM_HEAP_UNITS))), c);
}

int am__heap_claim(struct am_heap_view *h, unsigned c, unsigned who, uint32_t q, uint32_t x,
                   AO_t *got)
{
    struct am_fifo *f = fifo_of(h, c);
    if (!small_ok(h, c, x)) {
        am_fifo_pop(f, q); /* garbage: drop it */
        return 0;
    }
    am__heap_hook(AM_HEAP_PEEKED);
    AO_t *hp = header_at(h, x), w = AO_load_acquire(hp);
    if (!am_fifo_at_head(f, q))
        return 0; /* w may be x's state under a later message */
    if (!hw_claimable(w) || hw_kind(w) != c) {
        am_fifo_pop(f, q); /* claimed by a stalled or dead peer (I2), or corrupt */
        return 0;
    }
    am__heap_hook(AM_HEAP_CHECKED);
    *got = hw_next(w, H_ALLOC, who);
    if (!AO_compare_and_swap_full(hp, w, *got))
        return 0;
    am__heap_hook(AM_HEAP_CLAIMED);
    am_fifo_pop(f, q); /* failing means a peer popped it for us */
    return 1;
}

/* A block of class c from its FIFO, or a fresh superblock if it is empty. */
static int small_alloc(struct am_heap_view *h, unsigned c, unsigned who, uint64_t *off)
{
    for (long tries = 0; tries < AM_HEAP_TRIES; tries++) {
        uint32_t q, x;
        AO_t w;
        int rc = am_fifo_peek(fifo_of(h, c), h->fifo_shift[c], &q, &x);
        if (rc == -ENOENT)
            return am__heap_carve(h, c, who, off);
        if (rc != 0)
            return -EAGAIN;
        if (am__heap_claim(h, c, who, q, x, &w)) {
            *off = unit_off(h, x);
            return 0;
        }
    }
    return -EAGAIN;
}

/* A small class out of free space compacts and tries once more (a run
 * compacts the window it chose itself, large.c).  -ENOSPC (a class at its
 * quota) is an -ENOMEM that compaction cannot help. */
int am_heap_alloc(struct am_heap_view *h, size_t len, unsigned who, uint64_t *off)
{
    if (who == 0 || who > AM_HEAP_WHO_MAX)
        return -EINVAL;
    if (len > h->limit || h->limit == 0) /* limit 0: a zeroed view, no heap */
        return -EMSGSIZE;
    if (len > AM_HEAP_SMALL_MAX)
        return am__heap_large_alloc(h, len, who, off);
    unsigned c = class_of(len);
    int rc = small_alloc(h, c, who, off);
    if (rc == -ENOMEM && am__heap_compact_class(h, c, who))
        rc = small_alloc(h, c, who, off);
    return rc == -ENOSPC ? -ENOMEM : rc;
}

int am__heap_free_small(struct am_heap_view *h, uint64_t unit, AO_t w)
{
    unsigned c = hw_kind(w);
    if (!AO_compare_and_swap_full(header_at(h, unit), w, hw_next(w, H_FREE, 0)))
        return -EINVAL;
    am__heap_hook(AM_HEAP_FREEING);
    return am_fifo_put(fifo_of(h, c), h->fifo_shift[c], (uint32_t)unit) == 0 ? 0 : -EAGAIN;
}

int am__heap_give(struct am_heap_view *h, uint64_t unit, AO_t w)
{
    unsigned c = hw_kind(w);
    AO_t *hp = header_at(h, unit), held = hw_next(w, H_HELD, hw_who(w));
    if (!AO_compare_and_swap_full(hp, w, held))
        return -EINVAL;
    am__heap_hook(AM_HEAP_GIVING);
    if (am_fifo_put(fifo_of(h, c), h->fifo_shift[c], (uint32_t)unit) != 0)
        return -EAGAIN;
    am__heap_hook(AM_HEAP_GIVEN);
    AO_compare_and_swap_full(hp, held, hw_next(held, H_FREE, 0)); /* fails: claimed */
    return 0;
}

/* The unit of the block at off (a multiple of 256 in the superblocks), or
 * UINT64_MAX. */
static uint64_t unit_at(const struct am_heap_view *h, uint64_t off)
{
    if (off < h->meta || ((off - h->meta) & ((1u << AM_HEAP_UNIT_SHIFT) - 1)))
        return UINT64_MAX;
    uint64_t u = (off - h->meta) >> AM_HEAP_UNIT_SHIFT;
    return u < units_of(h) ? u : UINT64_MAX;
}

/* The header word of the block at off if it is ALLOCATED(who) and a block
 * of its kind starts there now; 0 otherwise.  *unit gets its unit. */
static AO_t allocated(const struct am_heap_view *h, uint64_t off, unsigned who,
                      uint64_t *unit)
{
    uint64_t u = unit_at(h, off);
    if (u == UINT64_MAX)
        return 0;
    AO_t w = AO_load_acquire(header_at(h, u));
    if (hw_state(w) != H_ALLOC || hw_who(w) != who)
        return 0;
    *unit = u;
    if (hw_kind(w) < AM_HEAP_CLASSES)
        return small_ok(h, hw_kind(w), u) ? w : 0;
    AO_t s = AO_load_acquire(state_at(h, (uint32_t)(u / AM_HEAP_UNITS)));
    return hw_kind(w) == H_LARGE && u % AM_HEAP_UNITS == 0 && sb_kind(s) == SB_RUN &&
                   sb_head(s) == u / AM_HEAP_UNITS
               ? w
               : 0;
}

int am_heap_free(struct am_heap_view *h, uint64_t off, unsigned who)
{
    uint64_t u;
    AO_t w = who && who <= AM_HEAP_WHO_MAX ? allocated(h, off, who, &u) : 0;

    if (!w)
        return -EINVAL;
    am__heap_hook(AM_HEAP_FREE_READ);
    if (hw_kind(w) == H_LARGE)
        return am__heap_large_free(h, (uint32_t)(u / AM_HEAP_UNITS), w);
    return am__heap_free_small(h, u, w);
}

/* Bytes the block with header w at unit u spans, 0 if its run is corrupt. */
static size_t block_bytes(const struct am_heap_view *h, uint64_t u, AO_t w)
{
    if (hw_kind(w) < AM_HEAP_CLASSES)
        return class_bytes(hw_kind(w));
    uint32_t head = (uint32_t)(u / AM_HEAP_UNITS);
    uint32_t n = sb_len(AO_load_acquire(state_at(h, head)));
    return n >= 1 && n <= h->superblocks - head ? (size_t)n << AM_HEAP_SB_SHIFT : 0;
}

void *am_heap_data(const struct am_heap_view *h, uint64_t off, size_t len, unsigned who)
{
    uint64_t u;
    AO_t w = who && who <= AM_HEAP_WHO_MAX ? allocated(h, off, who, &u) : 0;

    if (!w || len > block_bytes(h, u, w))
        return NULL;
    return h->base + off; /* off + len <= meta + superblocks: inside the heap */
}
