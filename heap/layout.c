/*
 * layout.c - the heap's geometry (heap_int.h), derived from its byte count
 * alone; laying out an empty heap; attaching to one.
 *
 * For S superblocks the metadata takes the header (a few lines), S state
 * words, 256 S header words (2 KB per 64 KB superblock: 3.1 %) and the eight
 * FIFOs (one message per block each class could ever hold, 510 per
 * superblock, each FIFO rounded up to a power of two: 4 to 8 KB per
 * superblock, 6 to 12 %).  The metadata grows with S, so the S a byte count
 * allows is the largest whose metadata and superblocks fit: found by
 * bisection, the same in every process for the same byte count.
 */
#include <errno.h>
#include <string.h>

#include "heap_int.h"

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) & ~(a - 1);
}

/* log2 of the FIFO of class c for s superblocks: room for every block the
 * class can hold, at most 2^AM_FIFO_MAX_SHIFT (then the quota limits it). */
static unsigned fifo_shift_for(uint32_t s, unsigned c)
{
    uint64_t need = (uint64_t)s * (AM_HEAP_UNITS >> c);
    unsigned shift = 1;
    while (shift < AM_FIFO_MAX_SHIFT && ((uint64_t)1 << shift) < need)
        shift++;
    return shift;
}

/* Lays out the tables of s superblocks into h; returns the bytes they span
 * with the superblocks. */
static size_t lay_out(uint32_t s, struct am_heap_view *h)
{
    size_t at = align_up(sizeof(struct am_heap_hdr), 64);

    h->superblocks = s;
    h->states = at;
    at += align_up((size_t)s * sizeof(AO_t), 64);
    h->headers = at;
    at += (size_t)s * AM_HEAP_UNITS * sizeof(AO_t);
    for (unsigned c = 0; c < AM_HEAP_CLASSES; c++) {
        unsigned shift = fifo_shift_for(s, c);
        uint32_t quota = (uint32_t)(((uint64_t)1 << shift) / (AM_HEAP_UNITS >> c));
        h->fifo[c] = at;
        h->fifo_shift[c] = shift;
        h->quota[c] = quota < s ? quota : s;
        at += align_up(am_fifo_size(shift), 64);
    }
    h->meta = align_up(at, 4096);
    return h->meta + ((size_t)s << AM_HEAP_SB_SHIFT);
}

/* The geometry of a heap of `bytes` bytes into h (base untouched): 0, or
 * -EINVAL if no heap has that size. */
static int geometry(size_t bytes, struct am_heap_view *h)
{
    uint32_t lo = 0, hi;

    if (bytes > AM_HEAP_MAX_BYTES)
        return -EINVAL;
    hi = (uint32_t)(bytes >> AM_HEAP_SB_SHIFT); /* <= 2^24 */
    while (lo < hi) {                           /* the largest s <= hi that fits */
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (lay_out(mid, h) <= bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == 0)
        return -EINVAL;
    lay_out(lo, h);
    h->bytes = bytes;
    h->sb_shift = AM_HEAP_SB_SHIFT;
    h->classes = AM_HEAP_CLASSES;
    h->limit = (size_t)lo << AM_HEAP_SB_SHIFT;
    return 0;
}

/* Superblocks the request needs in an empty heap, 0 if none can hold it. */
static uint64_t superblocks_for(size_t len, unsigned count)
{
    if (count == 0)
        count = 1;
    if (len <= AM_HEAP_SMALL_MAX) {
        unsigned c = 0;
        while (class_bytes(c) < len)
            c++;
        uint64_t per = AM_HEAP_UNITS >> c, need = (count + per - 1) / per;
        return need * per <= ((uint64_t)1 << AM_FIFO_MAX_SHIFT) ? need : 0;
    }
    if (len > AM_HEAP_MAX_BYTES)
        return 0;
    return ((len + AM_HEAP_SB - 1) >> AM_HEAP_SB_SHIFT) * (uint64_t)count;
}

size_t am_heap_bytes_for(size_t len, unsigned count)
{
    uint64_t s = superblocks_for(len, count);
    struct am_heap_view h;

    if (s == 0 || s > AM_HEAP_MAX_SB)
        return 0;
    size_t bytes = lay_out((uint32_t)s, &h);
    return bytes <= AM_HEAP_MAX_BYTES ? bytes : 0;
}

/* The geometry words as the shared header records them. */
static void geometry_words(const struct am_heap_view *h, AO_t *w)
{
    AO_t g[] = {AM_HEAP_MAGIC, AM_HEAP_VERSION, h->bytes,  h->superblocks, h->sb_shift,
                h->classes,    h->meta,         h->states, h->headers};
    memcpy(w, g, sizeof g);
    for (unsigned c = 0; c < AM_HEAP_CLASSES; c++) {
        w[9 + c] = h->fifo[c];
        w[9 + AM_HEAP_CLASSES + c] = h->fifo_shift[c];
    }
}

#define GEOMETRY_WORDS (9 + 2 * AM_HEAP_CLASSES)
_Static_assert(offsetof(struct am_heap_hdr, fifo_shift) ==
                   (GEOMETRY_WORDS - AM_HEAP_CLASSES) * sizeof(AO_t),
               "the geometry words lead the header, in geometry_words' order");

int am_heap_init(void *base, size_t bytes)
{
    struct am_heap_view h;
    AO_t w[GEOMETRY_WORDS];

    if (((uintptr_t)base & 63) || geometry(bytes, &h) != 0)
        return -EINVAL;
    h.base = base;
    memset(base, 0, h.headers); /* header, hints, counters, states */
    for (uint32_t s = 0; s < h.superblocks; s++)
        *state_at(&h, s) = SB_FREE;
    for (uint64_t u = 0; u < units_of(&h); u++)
        *header_at(&h, u) = hw_make(H_FREE, 0, 0, 0);
    for (unsigned c = 0; c < AM_HEAP_CLASSES; c++)
        am_fifo_init(fifo_of(&h, c), h.fifo_shift[c]);
    geometry_words(&h, w);
    AO_t *hw = (AO_t *)base;
    for (int i = GEOMETRY_WORDS - 1; i > 0; i--)
        hw[i] = w[i];
    AO_store_release(&hw[0], w[0]); /* pairs with attach's acquire of the magic */
    return 0;
}

int am_heap_attach(struct am_heap_view *h, void *base, size_t bytes)
{
    AO_t w[GEOMETRY_WORDS];
    const AO_t *hw = base;

    memset(h, 0, sizeof *h);
    if (((uintptr_t)base & 63) || geometry(bytes, h) != 0)
        return -EINVAL;
    h->base = base;
    geometry_words(h, w);
    if (AO_load_acquire(&hw[0]) != w[0])
        return -EPROTO;
    for (int i = 1; i < GEOMETRY_WORDS; i++)
        if (AO_load(&hw[i]) != w[i])
            return -EPROTO;
    return 0;
}

size_t am_heap_max_alloc(const struct am_heap_view *h)
{
    return h->limit;
}
