/*
 * ring.c - the header, the opening of an end and the batch size that every
 * kind in spsc/ shares (ring.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

void (*am_spsc_stall_hook)(enum am_spsc_hook where);

void am__spsc_stall(enum am_spsc_hook where)
{
    void (*hook)(enum am_spsc_hook) = am_spsc_stall_hook;
    if (hook)
        hook(where);
}

unsigned am_spsc_batch(unsigned shift)
{
    unsigned quarter = shift >= 2 ? 1u << (shift - 2) : 1u;
    return quarter < 256 ? quarter : 256;
}

size_t am__spsc_size(size_t slots, unsigned shift, unsigned words)
{
    if (shift < AM_SPSC_MIN_SHIFT || shift > AM_SPSC_MAX_SHIFT)
        return 0;
    size_t bytes = slots + ((size_t)words << shift) * sizeof(AO_t);
    return (bytes + AM_SPSC_LINE - 1) / AM_SPSC_LINE * AM_SPSC_LINE;
}

int am__spsc_init(void *ring, size_t slots, enum am_spsc_kind kind, unsigned shift,
                  unsigned words)
{
    size_t bytes = am__spsc_size(slots, shift, words);
    struct am_spsc_hdr *h = ring;

    if (!bytes || (uintptr_t)ring % AM_SPSC_LINE)
        return -EINVAL;
    memset(ring, 0, bytes);
    h->version = AM_SPSC_VERSION;
    h->kind = kind;
    h->shift = shift;
    h->words = words;
    /* Release: pairs with the acquire load of the magic in am__spsc_open, so an
     * end that finds the magic finds the header and the zeroed slots too. */
    AO_store_release(&h->magic, AM_SPSC_MAGIC);
    return 0;
}

int am__spsc_open(struct am_spsc_end *e, void *ring, size_t slots, enum am_spsc_kind kind,
                  unsigned shift, unsigned flags, unsigned options)
{
    const struct am_spsc_hdr *h = ring;
    unsigned end = flags & (AM_SPSC_PRODUCER | AM_SPSC_CONSUMER);

    unsigned words = flags & AM_SPSC_WIDE ? AM_SPSC_WIDE_WORDS : 1;
    if (!am__spsc_size(slots, shift, words) || (uintptr_t)ring % AM_SPSC_LINE ||
        (end != AM_SPSC_PRODUCER && end != AM_SPSC_CONSUMER) ||
        (flags & ~(end | options | AM_SPSC_WIDE)))
        return -EINVAL;
    /* Acquire: pairs with the release store of the magic in am__spsc_init. */
    if (AO_load_acquire(&h->magic) != AM_SPSC_MAGIC || h->version != AM_SPSC_VERSION ||
        h->kind != (uint32_t)kind || h->shift != shift || h->words != words)
        return -EPROTO;
    memset(e, 0, sizeof *e);
    e->slot = (AO_t *)((char *)ring + slots);
    e->mask = ((uint64_t)1 << shift) - 1;
    e->batch = am_spsc_batch(shift);
    e->flags = flags;
    e->wshift = words == 1 ? 0 : (unsigned)__builtin_ctz(words);
    return 0;
}

size_t am_spsc_size_wide(const struct am_spsc_ops *k, unsigned shift)
{
    return am__spsc_size(k->slots, shift, AM_SPSC_WIDE_WORDS);
}

int am_spsc_init_wide(const struct am_spsc_ops *k, void *ring, unsigned shift)
{
    return am__spsc_init(ring, k->slots, (enum am_spsc_kind)k->kind, shift,
                         AM_SPSC_WIDE_WORDS);
}

_Noreturn void am__spsc_misuse(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: spsc: %s\n", file, line, what);
    abort();
}
