/*
 * heap_int.h - the shared heap's layout and word encodings, for the heap's .c files and
 * the tests (tests/check_heap.c); nothing here is exported from libshmam.
 * heap.c's file header states the design; this file says how it is laid out.
 *
 * A heap of `bytes` bytes at base (every offset below from base; the view's
 * geometry is computed from `bytes` alone, layout.c):
 *
 *   struct am_heap_hdr   magic, version, the byte count and every geometry
 *                        word (checked against the private view on attach),
 *                        then the shared hints and counters
 *   states[S]            one word per superblock (SB_* below)
 *   headers[S * 256]     one header word per 256-byte unit (H_* below): the
 *                        block that starts at unit u has its header at u
 *   fifo[c], c < 8       the free-block FIFO of class c (fifo.h), holding
 *                        unit numbers; 2^s messages with 2^s >= S * 256 >> c
 *                        (capped at 2^AM_FIFO_MAX_SHIFT: see quota)
 *   (pad to 4096)        view.meta: the first superblock
 *   superblocks[S]       64 KB each
 *
 * The S superblocks hold the data: unit u is at meta + u * 256, superblock
 * u >> 8.  Class c serves blocks of 256 << c bytes (256 B .. 32 KB); a block
 * of class c starts at a unit that is a multiple of 2^c in a superblock whose
 * state is SMALL(c) or DRAINING(c, who).  A large block is a run of superblocks whose
 * lowest is its head; its header is the head's first unit.
 */
#ifndef SHMAM_HEAP_INT_H
#define SHMAM_HEAP_INT_H

#include <stddef.h>
#include <stdint.h>

#include <atomic_ops.h>

#include "fifo.h"
#include "heap.h"

#if !defined(AO_HAVE_compare_and_swap_full) || !defined(AO_HAVE_load_acquire) ||           \
    !defined(AO_HAVE_store_release)
#error "the heap needs AO_compare_and_swap_full, AO_load_acquire and AO_store_release"
#endif
_Static_assert(sizeof(AO_t) == 8, "the heap's words are 64 bits");

#define AM_HEAP_MAGIC 0x3170616568616d73ull /* "smaheap1" */
#define AM_HEAP_VERSION 2   /* 2: superblocks DRAINING and UNCARVING, the uncarved count */
#define AM_HEAP_SB_SHIFT 16 /* 64 KB superblocks */
#define AM_HEAP_SB ((size_t)1 << AM_HEAP_SB_SHIFT)
#define AM_HEAP_UNIT_SHIFT 8 /* 256 B: the smallest class, one header each */
#define AM_HEAP_UNITS (1u << (AM_HEAP_SB_SHIFT - AM_HEAP_UNIT_SHIFT)) /* per sb */
#define AM_HEAP_SMALL_MAX ((size_t)1 << (AM_HEAP_UNIT_SHIFT + AM_HEAP_CLASSES - 1))
#define AM_HEAP_MAX_SB ((uint32_t)1 << 24) /* 2^40 bytes of superblocks */
#define AM_HEAP_MAX_BYTES ((size_t)1 << 40)
#define AM_HEAP_TRIES 100000 /* lost CASes before a call gives up: -EAGAIN */

_Static_assert(AM_HEAP_SMALL_MAX <= AM_HEAP_SB / 2, "a superblock holds two of each class");

/* ---- header words: state 2 bits, kind 4, who 22, generation 36 ----
 * FREE(kind, gen), ALLOCATED(kind, who, gen) or HELD(kind, who, gen); kind
 * is the class, or H_LARGE for the head of a run.  HELD is a small block
 * that who itself gives back (a carver's hand-out, a compactor's give-back):
 * its message is in the FIFO or about to be, and it may be claimed as a
 * FREE one.  Every change is one CAS that adds 1 to the generation, so a CAS
 * that expects a word read earlier fails if the block changed hands in
 * between (ABA). */
enum { H_NONE = 0, H_FREE = 1, H_ALLOC = 2, H_HELD = 3 };
#define H_LARGE 15u

static inline AO_t hw_make(unsigned state, unsigned kind, unsigned who, uint64_t gen)
{
    return (AO_t)state | (AO_t)kind << 2 | (AO_t)who << 6 | (AO_t)gen << 28;
}
static inline unsigned hw_state(AO_t w)
{
    return (unsigned)(w & 3);
}
static inline unsigned hw_kind(AO_t w)
{
    return (unsigned)(w >> 2 & 15);
}
static inline unsigned hw_who(AO_t w)
{
    return (unsigned)(w >> 6 & AM_HEAP_WHO_MAX);
}
static inline uint64_t hw_gen(AO_t w)
{
    return (uint64_t)(w >> 28);
}
/* May a claimer take the block whose header is w (FREE or HELD)? */
static inline int hw_claimable(AO_t w)
{
    return hw_state(w) == H_FREE || hw_state(w) == H_HELD;
}
/* The same block, next generation, in another state. */
static inline AO_t hw_next(AO_t w, unsigned state, unsigned who)
{
    return hw_make(state, hw_kind(w), who, hw_gen(w) + 1);
}

/* ---- superblock states: kind 3 bits, then per kind ----
 *   FREE                    in free space
 *   CARVING(class, who)     claimed by who for a class, headers being written
 *   SMALL(class)            carved into blocks of that class
 *   CLAIM(head, who)        claimed by who for the run whose head is `head`
 *   RUN(head, n)            part of the allocated run [head, head + n)
 *   DRAINING(class, who)    SMALL(class) that compactor who collects the
 *                           blocks of; it serves the class as SMALL does
 *   UNCARVING(class, who)   every block held by compactor who, going back to
 *                           FREE; nobody else may claim or free its blocks  */
enum {
    SB_NONE = 0,
    SB_FREE,
    SB_CARVING,
    SB_SMALL,
    SB_CLAIM,
    SB_RUN,
    SB_DRAINING,
    SB_UNCARVING
};
_Static_assert(SB_UNCARVING < 8, "a state's kind is 3 bits");

static inline unsigned sb_kind(AO_t s)
{
    return (unsigned)(s & 7);
}
static inline unsigned sb_class(AO_t s)
{
    return (unsigned)(s >> 3 & 7);
}
static inline uint32_t sb_head(AO_t s)
{
    return (uint32_t)(s >> 3 & 0xffffff);
}
static inline unsigned sb_who(AO_t s)
{
    return (unsigned)(s >> 27 & AM_HEAP_WHO_MAX);
}
static inline uint32_t sb_len(AO_t s)
{
    return (uint32_t)(s >> 27 & 0x1ffffff);
}
static inline AO_t sb_carving(unsigned c, unsigned who)
{
    return SB_CARVING | (AO_t)c << 3 | (AO_t)who << 27;
}
static inline AO_t sb_small(unsigned c)
{
    return SB_SMALL | (AO_t)c << 3;
}
static inline AO_t sb_draining(unsigned c, unsigned who)
{
    return SB_DRAINING | (AO_t)c << 3 | (AO_t)who << 27;
}
static inline AO_t sb_uncarving(unsigned c, unsigned who)
{
    return SB_UNCARVING | (AO_t)c << 3 | (AO_t)who << 27;
}
/* Does state s serve class c: may its blocks be claimed and freed? */
static inline int sb_serves(AO_t s, unsigned c)
{
    return s == sb_small(c) || (sb_kind(s) == SB_DRAINING && sb_class(s) == c);
}
static inline AO_t sb_claim(uint32_t head, unsigned who)
{
    return SB_CLAIM | (AO_t)head << 3 | (AO_t)who << 27;
}
static inline AO_t sb_run(uint32_t head, uint32_t n)
{
    return SB_RUN | (AO_t)head << 3 | (AO_t)n << 27;
}

/* The shared header at offset 0.  The geometry words are written once by
 * am_heap_init (magic last, release) and only compared afterwards. */
struct am_heap_hdr {
    AO_t magic, version, bytes, superblocks, sb_shift, classes, meta, states, headers;
    AO_t fifo[AM_HEAP_CLASSES], fifo_shift[AM_HEAP_CLASSES];
    _Alignas(64) AO_t low; /* hint: carving looks for free space here first */
    _Alignas(64) AO_t carved[AM_HEAP_CLASSES]; /* superblocks a class took (quota) */
    _Alignas(64) AO_t uncarved; /* superblocks compaction gave back (stats) */
};

/* ---- addresses, from the private view only ---- */

static inline struct am_heap_hdr *hdr_of(const struct am_heap_view *h)
{
    return (struct am_heap_hdr *)(void *)h->base;
}
static inline AO_t *state_at(const struct am_heap_view *h, uint32_t sb)
{
    return (AO_t *)(void *)(h->base + h->states) + sb;
}
static inline AO_t *header_at(const struct am_heap_view *h, uint64_t unit)
{
    return (AO_t *)(void *)(h->base + h->headers) + unit;
}
static inline struct am_fifo *fifo_of(const struct am_heap_view *h, unsigned c)
{
    return (struct am_fifo *)(void *)(h->base + h->fifo[c]);
}
static inline uint64_t units_of(const struct am_heap_view *h)
{
    return (uint64_t)h->superblocks * AM_HEAP_UNITS;
}
static inline uint64_t unit_off(const struct am_heap_view *h, uint64_t unit)
{
    return h->meta + (unit << AM_HEAP_UNIT_SHIFT);
}
static inline size_t class_bytes(unsigned c)
{
    return (size_t)1 << (AM_HEAP_UNIT_SHIFT + c);
}
/* Superblocks a run of len bytes spans. */
static inline uint32_t runs_of(size_t len)
{
    return (uint32_t)((len + AM_HEAP_SB - 1) >> AM_HEAP_SB_SHIFT);
}

/* ---- between the files ---- */

/* Points where a test may stall or kill a call (check_heap.c), in the order a
 * call meets them.  Stops inside the FIFO are fifo.h's hooks. */
enum am_heap_hook {
    AM_HEAP_PEEKED,     /* alloc: head message read, its block's header not yet */
    AM_HEAP_CHECKED,    /* alloc: header read, message still the head; before the CAS */
    AM_HEAP_CLAIMED,    /* alloc: header CAS done, message not yet popped */
    AM_HEAP_CARVING,    /* carve: superblock claimed, headers not yet written */
    AM_HEAP_CARVED,     /* carve: published, half its blocks handed to the FIFO */
    AM_HEAP_GIVING,     /* give-back (carve, compact): block HELD, not yet in its FIFO */
    AM_HEAP_GIVEN,      /* give-back: HELD and in its FIFO, not yet FREE */
    AM_HEAP_RUN_PART,   /* large: the run's top superblock claimed, the rest not */
    AM_HEAP_RUN_HEADER, /* large: run claimed and its header ALLOCATED, not published */
    AM_HEAP_TAKEN,      /* compact: a block taken from a FIFO, not yet kept or given back */
    AM_HEAP_DRAINED,    /* compact: superblocks DRAINING, blocks held, none uncarved yet */
    AM_HEAP_UNCARVING,  /* compact: a superblock UNCARVING, its headers not yet reset */
    AM_HEAP_FREE_READ,  /* free: header read and checked, before its CAS */
    AM_HEAP_FREEING,    /* free: header CAS done, block not yet in its FIFO or released */
    AM_HEAP_HOOKS
};
extern void (*am_heap_stall_hook)(enum am_heap_hook where);

static inline void am__heap_hook(enum am_heap_hook where)
{
    if (__builtin_expect(am_heap_stall_hook != NULL, 0))
        am_heap_stall_hook(where);
}

/* heap.c: one attempt at the head message (q, x) of class c's FIFO, as an
 * allocator: 1 if block x is now ALLOCATED(c, who), its header word into *w;
 * 0 to look again (the message is popped if it names no claimable block). */
int am__heap_claim(struct am_heap_view *h, unsigned c, unsigned who, uint32_t q, uint32_t x,
                   AO_t *w);

/* carve.c: serve class c from a fresh superblock (coalescing: its other
 * blocks go to the FIFO).  0 and *off, -ENOMEM (no free superblock),
 * -ENOSPC (the class has its quota: compaction cannot help), -EAGAIN. */
int am__heap_carve(struct am_heap_view *h, unsigned c, unsigned who, uint64_t *off);

/* carve.c: gives back a class's quota slot taken for a superblock that was
 * never published (reclaim of a dead carver). */
void am__heap_unreserve(struct am_heap_view *h, unsigned c);

/* heap.c: frees small block `unit` of class c from ALLOCATED(who) (its header
 * word expected to be w): CAS, then FIFO put.  0, -EINVAL (not w any more),
 * -EAGAIN (the FIFO refused it: corrupt). */
int am__heap_free_small(struct am_heap_view *h, uint64_t unit, AO_t w);

/* compact.c: is superblock sb idle: SMALL(*c), *c not `skip`, every block
 * FREE now (a snapshot)? */
int am__heap_idle(const struct am_heap_view *h, uint32_t sb, unsigned skip, unsigned *c);

/* compact.c: gives back to the free space up to 8 idle superblocks of one
 * class other than `want`, as compactor who.  Returns how many. */
unsigned am__heap_compact_class(struct am_heap_view *h, unsigned want, unsigned who);

/* compact.c: gives back every idle superblock of [head, head + n), as
 * compactor who.  -1 if it did (the window is FREE unless others took some
 * since), else a superblock of the window it could not give back. */
int64_t am__heap_compact_window(struct am_heap_view *h, uint32_t head, uint32_t n,
                                unsigned who);

/* heap.c: gives back small block `unit`, ALLOCATED(who) with header word w,
 * for who itself (a carver, a compactor): HELD(who) by CAS, its FIFO put,
 * then FREE by CAS unless claimed meanwhile.  A death in between leaves it
 * HELD(who), which reclaim finishes.  0, -EINVAL (not w any more), -EAGAIN
 * (the FIFO refused it: corrupt). */
int am__heap_give(struct am_heap_view *h, uint64_t unit, AO_t w);

/* large.c: runs of superblocks. */
int am__heap_large_alloc(struct am_heap_view *h, size_t len, unsigned who, uint64_t *off);
int am__heap_large_free(struct am_heap_view *h, uint32_t head, AO_t w);
void am__heap_release_claim(struct am_heap_view *h, uint32_t sb, AO_t s);
void am__heap_lower_hint(struct am_heap_view *h, uint32_t sb);

/* stats.c: an audit for tests, of a heap nobody uses meanwhile: every FREE
 * small block has exactly one message in its FIFO and no other block has
 * one, each message names a block of its class in a SMALL superblock of it,
 * no superblock is half claimed, carved or uncarved (CARVING, CLAIM,
 * DRAINING, UNCARVING), every run has an ALLOCATED header.
 * Returns the number of faults found and says what the first was in why. */
struct am__heap_audit {
    unsigned long free_blocks, fifo_msgs, live_blocks;
    unsigned long orphans; /* FREE, no message: lost */
    unsigned long extra;   /* messages naming a non-FREE block, or twice one */
    unsigned long half;    /* superblocks in passing (CARVING...), runs without owner */
    char why[160];
};
unsigned long am__heap_audit(const struct am_heap_view *h, struct am__heap_audit *a);

#endif
