/*
 * heap.h - a lock-free allocator over a shared mapping, after XMalloc (Huang
 * et al. 2011), usable on its own: any number of processes that map the same
 * bytes allocate and free blocks in it at once.  shmam keeps one per queue of
 * an endpoint for long messages: senders allocate in the
 * receiver's heap, the receiver frees after the handler ran.
 *
 * Contract (the implementation's file header states the design and its
 * invariants):
 *   - Offsets, never pointers: a block is named by its offset from the heap's
 *     base; its data starts 64-byte aligned.
 *   - Every process keeps a private view (struct am_heap_view) whose geometry
 *     is derived from the byte count the caller itself records, never from a
 *     word in the shared heap; every index or offset read from shared memory is
 *     bounds-checked against it before use.  A corrupted heap makes calls fail
 *     (-EAGAIN, -EINVAL, NULL) and never makes them touch memory outside it or
 *     spin for ever.
 *   - A block is allocated by an allocator id `who` (1 .. AM_HEAP_WHO_MAX),
 *     recorded in the block's header word by the same atomic step that
 *     allocates it, so a block held by a process that died is found again
 *     (am_heap_reclaim) and never leaked for good.
 *   - Any process may free any allocated block (in shmam: the receiver).
 */
#ifndef SHMAM_HEAP_H
#define SHMAM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#define AM_HEAP_WHO_MAX ((1u << 22) - 1u) /* shmam's claimant ids fit */
#define AM_HEAP_CLASSES 8                 /* small blocks of 256 B .. 32 KB */

/* A process's private view of one heap. */
struct am_heap_view {
    unsigned char *base; /* the mapping, as this process sees it */
    size_t bytes;        /* the caller's own record of the heap's size */
    /* geometry derived from `bytes` alone (the implementation's) */
    uint32_t superblocks, sb_shift, classes;
    size_t meta;  /* bytes of metadata before the first superblock */
    size_t limit; /* am_heap_max_alloc */
    size_t states, headers, fifo[AM_HEAP_CLASSES]; /* offsets of the tables */
    unsigned fifo_shift[AM_HEAP_CLASSES];          /* each FIFO holds 2^s */
    uint32_t quota[AM_HEAP_CLASSES];               /* most superblocks a class may carve */
};

/* Bytes a heap must span so that `count` blocks of `len` bytes (count >= 1)
 * can be held at once whenever no other block is allocated, whatever was
 * allocated and freed before (class superblocks left idle go back to free
 * space when needed); 0 if no heap can (more than 2^40 bytes, or more small
 * blocks of one size than a class may ever hold: 2^20). */
size_t am_heap_bytes_for(size_t len, unsigned count);

/* Lay out an empty heap over `bytes` bytes at base (64-byte aligned, zeroed
 * or not), before any other process uses it.  0, or -EINVAL if bytes is too
 * small (or too large: up to 2^40) for a heap. */
int am_heap_init(void *base, size_t bytes);

/* Make a private view of a heap laid out by am_heap_init(base', bytes) in
 * this process's mapping at base.  0, -EINVAL for a byte count no heap has,
 * -EPROTO if the shared header disagrees with `bytes` (not a heap, or one
 * overwritten). */
int am_heap_attach(struct am_heap_view *h, void *base, size_t bytes);

/* The largest len am_heap_alloc can ever serve in this heap. */
size_t am_heap_max_alloc(const struct am_heap_view *h);

/* Allocate a block of at least len bytes (len 0 is served) for allocator
 * `who`.  Any process, concurrently.  0 and *off; -ENOMEM if the heap cannot
 * serve it now, even after giving back to free space the superblocks of
 * other sizes whose blocks are all free (try again after frees: while other
 * processes allocate or compact too, -ENOMEM can be transient); -EMSGSIZE if
 * len > max_alloc (never); -EINVAL for who out of range; -EAGAIN if the heap
 * looked corrupt.  Compacting, it holds free blocks for a moment under `who`:
 * if it dies then, am_heap_reclaim frees them as any of who's blocks.  A
 * zeroed view, of no heap, serves nothing (-EMSGSIZE). */
int am_heap_alloc(struct am_heap_view *h, size_t len, unsigned who, uint64_t *off);

/* The data of the block at `off` if it is allocated now by `who` and holds at
 * least len bytes; else NULL.  A snapshot check, for a receiver about to hand
 * the data to a handler: the pointer it returns is inside the heap whatever
 * peers write afterwards. */
void *am_heap_data(const struct am_heap_view *h, uint64_t off, size_t len, unsigned who);

/* Free the block at off, allocated by `who`.  Any process.  0, or -EINVAL if
 * off names no block allocated by who (nothing changes); -EAGAIN if the heap
 * looked corrupt (the block's free list refused it: the block is lost). */
int am_heap_free(struct am_heap_view *h, uint64_t off, unsigned who);

/* Free every allocated block whose allocator dead(ctx, who) says has died and
 * that in_use(ctx, off) (NULL: none) says nobody still uses, and finish what
 * dead processes left half done (a superblock being carved, claimed for a
 * run or compacted, a block being given back).  Any process; the caller
 * makes sure no live process still uses such a block, and that a who it
 * calls dead is not alive.  Returns the number of blocks freed. */
unsigned am_heap_reclaim(struct am_heap_view *h, int (*dead)(void *ctx, unsigned who),
                         int (*in_use)(void *ctx, uint64_t off), void *ctx);

/* A snapshot for tools and benchmarks: bytes in blocks allocated now
 * (`live`, rounded up to their class), bytes carved into superblocks or large
 * runs (`reserved`), bytes in free space (`free_space`), the total data
 * bytes the heap spans (`capacity`), and how many class superblocks went
 * back to free space since am_heap_init (`uncarved`). */
struct am_heap_stats {
    size_t capacity, reserved, live, free_space;
    unsigned long blocks_live;
    unsigned long uncarved; /* class superblocks given back to free space, ever */
};
void am_heap_stats(const struct am_heap_view *h, struct am_heap_stats *st);

#endif
