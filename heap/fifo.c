/*
 * fifo.c - XMalloc's lock-free FIFO of free blocks (see fifo.h).
 */
#include <errno.h>
#include <stddef.h>

#include "fifo.h"

#if !defined(AO_HAVE_compare_and_swap_full) || !defined(AO_HAVE_load_acquire)
#error "the heap's FIFO needs AO_compare_and_swap_full and AO_load_acquire"
#endif

#define MAX_SHIFT 20

void (*am_fifo_stall_hook)(enum am_fifo_hook where);

static inline void hook(enum am_fifo_hook where)
{
    if (__builtin_expect(am_fifo_stall_hook != NULL, 0))
        am_fifo_stall_hook(where);
}

/* A message: sequence number high, payload low. */
static inline AO_t msg(uint32_t seq, uint32_t v)
{
    return (AO_t)seq << 32 | v;
}

static inline uint32_t seq_of(AO_t m)
{
    return (uint32_t)(m >> 32);
}

size_t am_fifo_size(unsigned s)
{
    return offsetof(struct am_fifo, slot) + ((size_t)1 << s) * sizeof(AO_t);
}

void am_fifo_init(struct am_fifo *f, unsigned s)
{
    uint32_t cap = 1u << s;
    /* Slot i holds a message a lap old (sequence i - cap), so the first
     * transfer into it finds an older message, as every later one does. */
    for (uint32_t i = 0; i < cap; i++)
        f->slot[i] = msg(i - cap, 0);
    AO_store(&f->shift, s);
    AO_store(&f->head, 0);
    AO_store_release(&f->tail, msg(UINT32_MAX, 0)); /* count = 0 */
}

/* The capacity from the private copy of the size word, 0 if out of range. */
static uint32_t capacity(struct am_fifo *f)
{
    AO_t s = AO_load(&f->shift);
    return s >= 1 && s <= MAX_SHIFT ? 1u << s : 0;
}

/* A consistent view: the head's sequence number, the tail message and the
 * count they give.  The head is read first: it only grows, so a later tail
 * never gives a count below the true one. */
struct snap {
    uint32_t h, n;
    AO_t t;
};

/* Reads a snapshot into *s; 0, or -1 if its count exceeds cap (the two were
 * read across other operations, or the words are corrupt: look again). */
static int look(struct am_fifo *f, uint32_t cap, struct snap *s)
{
    s->h = (uint32_t)AO_load_acquire(&f->head);
    s->t = AO_load_acquire(&f->tail);
    s->n = seq_of(s->t) - s->h + 1;
    return s->n <= cap ? 0 : -1;
}

/* One attempt to append *v: 1 if it did, 0 to look again, -ENOSPC if full. */
static int put_once(struct am_fifo *f, uint32_t cap, const struct snap *s, uint32_t *v)
{
    if (s->n == cap)
        return -ENOSPC;
    /* Move the tail message into its slot unless someone has: a slot behind it
     * in sequence is stale; one at or past it is done.  The CAS expects the
     * word read with t, so a transfer by another process in between makes it
     * fail (the test only skips a CAS bound to fail). */
    AO_t *slot = &f->slot[seq_of(s->t) & (cap - 1)];
    AO_t old = AO_load_acquire(slot);
    hook(AM_FIFO_PUT_READ);
    if ((int32_t)(seq_of(old) - seq_of(s->t)) < 0)
        AO_compare_and_swap_full(slot, old, s->t); /* failure: done by another */
    return AO_compare_and_swap_full(&f->tail, s->t, msg(seq_of(s->t) + 1, *v));
}

/* One attempt to take the head into *v: 1 if it did, 0 to look again,
 * -ENOENT if empty. */
static int get_once(struct am_fifo *f, uint32_t cap, const struct snap *s, uint32_t *v)
{
    if (s->n == 0)
        return -ENOENT;
    AO_t m = s->n == 1 ? s->t : AO_load_acquire(&f->slot[s->h & (cap - 1)]);
    if (seq_of(m) != s->h)
        return 0; /* the head moved on meanwhile, or the slot is garbage */
    hook(AM_FIFO_GET_READ);
    if (!AO_compare_and_swap_full(&f->head, s->h, (AO_t)(uint32_t)(s->h + 1)))
        return 0;
    *v = (uint32_t)m;
    return 1;
}

typedef int once_fn(struct am_fifo *f, uint32_t cap, const struct snap *s, uint32_t *v);

/* Tries `once` on fresh snapshots until it is done (0) or says why not (its
 * negative errno); -EAGAIN after AM_FIFO_TRIES tries, -EINVAL for a bad size. */
static int attempt(struct am_fifo *f, once_fn *once, uint32_t *v)
{
    uint32_t cap = capacity(f);
    struct snap s;

    if (!cap)
        return -EINVAL;
    for (long tries = 0; tries < AM_FIFO_TRIES; tries++) {
        int rc = look(f, cap, &s) == 0 ? once(f, cap, &s, v) : 0;
        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
    return -EAGAIN;
}

int am_fifo_put(struct am_fifo *f, uint32_t v)
{
    return attempt(f, put_once, &v);
}

int am_fifo_get(struct am_fifo *f, uint32_t *v)
{
    return attempt(f, get_once, v);
}

uint32_t am_fifo_count(struct am_fifo *f)
{
    uint32_t cap = capacity(f);
    struct snap s;
    return cap && look(f, cap, &s) == 0 ? s.n : 0;
}
