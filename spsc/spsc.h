/*
 * spsc.h - single-producer/single-consumer rings over shared memory,
 * usable on their own: four algorithms with one vocabulary, and the table of
 * them, so that the runtime, tests and benchmarks loop over all of them or
 * pick one by name.
 *
 *   lamport      Lamport's queue: a shared head (written by the producer) and
 *                tail (written by the consumer), each read by the other end on
 *                every operation.
 *   fastforward  FastForward (Giacomoni et al., PPoPP 2008): no shared index;
 *                a slot is empty or full by its own content; temporal slipping
 *                as an option of the consumer (AM_SPSC_SLIP).
 *   mcring       MCRingBuffer (Lee et al., IPDPS 2010): shared indices, each
 *                end works from a cached copy of the other's and publishes its
 *                own once per batch (enqueue holds items back until then:
 *                flush).
 *   bqueue       B-Queue (Wang et al.): slots marked as in FastForward, the
 *                producer claims a batch of empty slots by probing its last one,
 *                the consumer finds a batch of full ones by self-adaptive
 *                backtracking, so a producer that stops mid-batch still has
 *                every item it enqueued taken.
 * Each file's header says what it changed from its paper and why.
 *
 * The ring and its two ends.  A ring is 2^shift slots of one 64-bit item each,
 * in memory that both processes map (at different addresses: the ring holds
 * offsets and counts, never pointers), laid out below; am_spsc_ops.size gives
 * its bytes.  One process initialises it before any other uses it.  Then the
 * producer and the consumer each open their own end (struct am_spsc_end), in
 * their own private memory: an end holds the position of its next item and
 * whatever its algorithm keeps private or cached, and the size as the caller
 * gave it.  Indices are free-running 64-bit counts of items (they never wrap in
 * practice); the slot of position i is i & mask, the mask from the caller's own
 * shift, never from a word in the ring.
 *
 * Items are 64-bit words from 0 to AM_SPSC_ITEM_MAX (2^64 - 2): every kind
 * refuses UINT64_MAX with -EINVAL.  FastForward and B-Queue mark a slot empty
 * by the value 0 (the papers' NULL); their 8-byte items may be 0, so a full
 * slot holds item + 1, and the one value whose successor is 0 cannot be
 * carried.  The others could carry it; they refuse it too so that a caller can
 * change kinds without changing what it sends.
 *
 * Hostile memory.  The peer may write garbage anywhere in the ring.  An end
 * reads every shared word once per decision and bounds it by its private
 * mask: a corrupted ring makes calls return -EPROTO (lamport, mcring: an index
 * further than the ring's size from this end's; bqueue: an empty slot inside a
 * batch the producer filled; open: a header that does not match) or garbage
 * items, never touch memory outside the ring, and never loop: no call of any
 * kind has an unbounded loop (B-Queue's backtracking halves at most log2 of
 * its batch times; FastForward's slip wait ends when the distance stops
 * growing).  An end's private state is out of the peer's reach.
 *
 * Memory ordering.  An item enqueued is visible to the consumer, with
 * everything the producer wrote before it (a release store of the item's slot
 * or of the index that covers it, paired with the consumer's acquire load of
 * the same word); a slot is reused only after the consumer has read it (a
 * release store of the consumer's index or of the emptied slot, paired with
 * the producer's acquire load of it; FastForward relies on coherence of the
 * one slot both touch).  Each file states its pairs.
 *
 * Verbs (every kind KIND: static in KIND.c, reached through am_spsc_KIND):
 *   size_t KIND_size(unsigned shift)    bytes of the ring (a multiple of
 *                                       AM_SPSC_LINE), 0 if shift is out of range
 *   int KIND_init(void *ring, unsigned shift)
 *                                       lays out an empty ring: 0, -EINVAL (shift
 *                                       out of range, ring not AM_SPSC_LINE-
 *                                       aligned); by one process, before any
 *                                       other uses the ring
 *   int KIND_open(struct am_spsc_end *e, void *ring, unsigned shift, unsigned flags)
 *                                       one end, flags AM_SPSC_PRODUCER or
 *                                       AM_SPSC_CONSUMER plus the kind's options:
 *                                       0, -EINVAL (bad argument, an option the
 *                                       kind lacks), -EPROTO (the ring's header
 *                                       is not this kind's of this size)
 *   int KIND_enqueue(struct am_spsc_end *p, uint64_t item)
 *                                       producer: 0, -EAGAIN full, -EINVAL
 *                                       (item > AM_SPSC_ITEM_MAX), -EPROTO
 *   int KIND_enqueue_batch(struct am_spsc_end *p, const uint64_t *items, unsigned n)
 *                                       producer: up to n items in order, all of
 *                                       them visible on return; how many (> 0),
 *                                       -EAGAIN if none fit, -EINVAL (n = 0 or an
 *                                       item > AM_SPSC_ITEM_MAX: none enqueued),
 *                                       -EPROTO
 *   int KIND_flush(struct am_spsc_end *p)
 *                                       producer: makes every item enqueued so far
 *                                       visible (mcring holds up to a batch back;
 *                                       the others publish each item at once): 0
 *   int KIND_dequeue(struct am_spsc_end *c, uint64_t *item)
 *                                       consumer: 0 with the oldest item, -EAGAIN
 *                                       empty, -EPROTO
 * The zero-copy verbs, for wide rings (a payload in the slot) and narrow alike:
 *   int KIND_reserve(struct am_spsc_end *p, AO_t **slot)
 *                                       producer: the next slot, if it is free,
 *                                       whose words 1.. the caller then fills
 *                                       (never word 0); 0, -EAGAIN full,
 *                                       -EPROTO; again before commit: the same
 *   int KIND_commit(struct am_spsc_end *p, uint64_t item)
 *                                       producer, after a successful reserve:
 *                                       publishes the slot with item in word 0
 *                                       (as enqueue: mcring may hold it until
 *                                       flush); 0, -EINVAL (item too big)
 *   int KIND_peek(struct am_spsc_end *c, uint64_t *item, const AO_t **slot)
 *                                       consumer: the oldest item and its slot,
 *                                       not yet given back, so the slot's words
 *                                       stay readable; 0, -EAGAIN, -EPROTO;
 *                                       again before release: the same
 *   int KIND_release(struct am_spsc_end *c)
 *                                       consumer, after a successful peek: gives
 *                                       the slot back (mcring: once per batch,
 *                                       or when it finds the ring empty); 0
 * enqueue is reserve then commit, dequeue peek then release, in one step.
 * Only the producer calls the producer verbs and only the consumer the
 * consumer's, each from one thread at a time; the two ends run concurrently.
 * A verb called on the wrong end aborts (a programming error).
 */
#ifndef SHMAM_SPSC_H
#define SHMAM_SPSC_H

#include <stddef.h>
#include <stdint.h>

#include <atomic_ops.h>

#define AM_SPSC_ITEM_MAX (UINT64_MAX - 1)
#define AM_SPSC_MIN_SHIFT 1
#define AM_SPSC_MAX_SHIFT 24
#define AM_SPSC_LINE 128 /* what one end writes shares no line pair with the other's */
#define AM_SPSC_MAGIC 0x63737073616d6873ull /* "shmaspsc" */
#define AM_SPSC_VERSION 2
#define AM_SPSC_WIDE_WORDS 8 /* a wide slot: a 64-byte line, word 0 the item */

/* open flags: which end, and options */
#define AM_SPSC_PRODUCER 1u
#define AM_SPSC_CONSUMER 2u
#define AM_SPSC_SLIP 4u /* fastforward's consumer: keep the producer ahead */
#define AM_SPSC_WIDE 8u /* either end of a wide ring (am_spsc_init_wide) */

/* The kinds' ids in a ring's header (the ABI; am_spsc_table lists the kinds). */
enum am_spsc_kind {
    AM_SPSC_LAMPORT = 1,
    AM_SPSC_FASTFORWARD = 2,
    AM_SPSC_MCRING = 3,
    AM_SPSC_BQUEUE = 4,
};

/* ---- layouts in shared memory (fixed-width words, no pointers) ---- */

/* The first line of every ring, written by init (magic last, release) and
 * checked by open against the caller's kind and shift. */
struct am_spsc_hdr {
    AO_t magic;       /* AM_SPSC_MAGIC */
    uint32_t version; /* AM_SPSC_VERSION */
    uint32_t kind;    /* enum am_spsc_kind */
    uint32_t shift;   /* 2^shift slots */
    uint32_t words;   /* 64-bit words per slot: 1, or AM_SPSC_WIDE_WORDS */
};

/* lamport and mcring: an index per end on its own line pair, then the slots. */
struct am_spsc_indexed_ring {
    _Alignas(AM_SPSC_LINE) struct am_spsc_hdr hdr;
    _Alignas(AM_SPSC_LINE) AO_t head; /* items published by the producer */
    _Alignas(AM_SPSC_LINE) AO_t tail; /* items given back by the consumer */
    _Alignas(AM_SPSC_LINE) AO_t slot[];
};

/* fastforward and bqueue: the slots alone (0 empty, item + 1 full). */
struct am_spsc_marked_ring {
    _Alignas(AM_SPSC_LINE) struct am_spsc_hdr hdr;
    _Alignas(AM_SPSC_LINE) AO_t slot[];
};

_Static_assert(sizeof(AO_t) == 8, "an item fills one AO_t");
_Static_assert(sizeof(struct am_spsc_hdr) == 24, "the header's words");
_Static_assert(offsetof(struct am_spsc_indexed_ring, head) == AM_SPSC_LINE &&
                   offsetof(struct am_spsc_indexed_ring, tail) == 2 * AM_SPSC_LINE &&
                   offsetof(struct am_spsc_indexed_ring, slot) == 3 * AM_SPSC_LINE,
               "each index on a line pair of its own");
_Static_assert(offsetof(struct am_spsc_marked_ring, slot) == AM_SPSC_LINE,
               "slots after the header's line pair");

/* ---- an end, private to the process that uses it ---- */

struct am_spsc_end {
    AO_t *slot;      /* the ring's slots in this process's mapping */
    AO_t *mine;      /* lamport, mcring: the index this end publishes */
    AO_t *theirs;    /* lamport, mcring: the index the other end publishes */
    uint64_t mask;   /* slots - 1, from the caller's shift */
    uint64_t pos;    /* position of the next item this end moves */
    uint64_t limit;  /* the kind's bound on pos (see each kind's file) */
    uint64_t held;   /* the kind's counter (see each kind's file) */
    uint32_t batch;  /* the kind's batch for this size (mcring, bqueue) */
    uint32_t flags;  /* AM_SPSC_PRODUCER or AM_SPSC_CONSUMER, and options */
    uint32_t wshift; /* log2 of the words per slot: 0, or 3 for a wide ring */
    uint32_t pad;
};

/* ---- the kinds ---- */

struct am_spsc_ops {
    const char *name;
    uint32_t kind;    /* enum am_spsc_kind */
    uint32_t options; /* open flags it takes besides the end's */
    int holds;        /* 1: enqueue may hold items back until flush */
    size_t (*size)(unsigned shift);
    int (*init)(void *ring, unsigned shift);
    int (*open)(struct am_spsc_end *e, void *ring, unsigned shift, unsigned flags);
    int (*enqueue)(struct am_spsc_end *p, uint64_t item);
    int (*enqueue_batch)(struct am_spsc_end *p, const uint64_t *items, unsigned n);
    int (*flush)(struct am_spsc_end *p);
    int (*dequeue)(struct am_spsc_end *c, uint64_t *item);
    int (*reserve)(struct am_spsc_end *p, AO_t **slot);
    int (*commit)(struct am_spsc_end *p, uint64_t item);
    int (*peek)(struct am_spsc_end *c, uint64_t *item, const AO_t **slot);
    int (*release)(struct am_spsc_end *c);
    size_t slots; /* where the slots start in the ring, bytes (the layouts above) */
};

/* Wide rings: slots of AM_SPSC_WIDE_WORDS words (a cache line), word 0 the
 * item as in a narrow ring, words 1..7 the caller's, so that a message and
 * its mark travel in one line.  size_wide: bytes, 0 for a shift out of range;
 * init_wide: as KIND_init.  Both ends open with AM_SPSC_WIDE; a narrow ring
 * opened wide, or the other way, is -EPROTO.  Every verb works on either. */
size_t am_spsc_size_wide(const struct am_spsc_ops *k, unsigned shift);
int am_spsc_init_wide(const struct am_spsc_ops *k, void *ring, unsigned shift);

/* Every kind, in the order of the issue (lamport, fastforward, mcring,
 * bqueue), NULL-terminated; and the kind named `name`, or NULL. */
extern const struct am_spsc_ops am_spsc_lamport, am_spsc_fastforward, am_spsc_mcring,
    am_spsc_bqueue;
extern const struct am_spsc_ops *const am_spsc_table[];
const struct am_spsc_ops *am_spsc_find(const char *name);

/* The batch mcring and bqueue use on a ring of 2^shift slots: a quarter of the
 * ring, at most 256 items (B-Queue's best batch on rings of 1024-2048). */
unsigned am_spsc_batch(unsigned shift);

/* Points where a test may stall an end to widen its race windows:
 *   AM_SPSC_PUT   producer, between its room check (and, for the indexed
 *                 kinds, its slot writes) and the store that publishes items
 *   AM_SPSC_GET   consumer, between finding an item and reading its slot
 *   AM_SPSC_FREE  consumer, between reading an item and the store that gives
 *                 its slot back
 * NULL (the default) costs one predictable branch per operation. */
enum am_spsc_hook { AM_SPSC_PUT, AM_SPSC_GET, AM_SPSC_FREE };
extern void (*am_spsc_stall_hook)(enum am_spsc_hook where);

#endif
