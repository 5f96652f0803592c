/*
 * fifo.c - XMalloc's lock-free FIFO of free blocks (see fifo.h).
 */
#include <errno.h>
#include <stddef.h>

#include "fifo.h"

#if !defined(AO_HAVE_compare_and_swap_full) || !defined(AO_HAVE_load_acquire)
#error "the heap's FIFO needs AO_compare_and_swap_full and AO_load_acquire"
#endif

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

/* The capacity from the caller's s, 0 if s is out of range or the shared size
 * word disagrees with it. */
static uint32_t capacity(struct am_fifo *f, unsigned s)
{
    return s >= 1 && s <= AM_FIFO_MAX_SHIFT && AO_load(&f->shift) == s ? 1u << s : 0;
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

/* One attempt to append the payload (uint32_t)*m: 1 if it did, 0 to look
 * again, -ENOSPC if full. */
static int put_once(struct am_fifo *f, uint32_t cap, const struct snap *s, AO_t *m)
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
    return AO_compare_and_swap_full(&f->tail, s->t, msg(seq_of(s->t) + 1, (uint32_t)*m));
}

/* One look at the head message, into *m: 1 if there is one, 0 to look again,
 * -ENOENT if empty. */
static int peek_once(struct am_fifo *f, uint32_t cap, const struct snap *s, AO_t *m)
{
    if (s->n == 0)
        return -ENOENT;
    *m = s->n == 1 ? s->t : AO_load_acquire(&f->slot[s->h & (cap - 1)]);
    return seq_of(*m) == s->h; /* else the head moved on, or the slot is garbage */
}

/* One attempt to take the head message into *m: 1 if it did, 0 to look again,
 * -ENOENT if empty. */
static int get_once(struct am_fifo *f, uint32_t cap, const struct snap *s, AO_t *m)
{
    int rc = peek_once(f, cap, s, m);
    if (rc != 1)
        return rc;
    hook(AM_FIFO_GET_READ);
    return AO_compare_and_swap_full(&f->head, s->h, (AO_t)(uint32_t)(s->h + 1));
}

typedef int once_fn(struct am_fifo *f, uint32_t cap, const struct snap *s, AO_t *m);

/* Tries `once` on fresh snapshots until it is done (0) or says why not (its
 * negative errno); -EAGAIN after AM_FIFO_TRIES tries, -EINVAL for a bad size. */
static int attempt(struct am_fifo *f, unsigned shift, once_fn *once, AO_t *m)
{
    uint32_t cap = capacity(f, shift);
    struct snap s;

    if (!cap)
        return -EINVAL;
    for (long tries = 0; tries < AM_FIFO_TRIES; tries++) {
        int rc = look(f, cap, &s) == 0 ? once(f, cap, &s, m) : 0;
        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
    return -EAGAIN;
}

int am_fifo_put(struct am_fifo *f, unsigned s, uint32_t v)
{
    AO_t m = v;
    return attempt(f, s, put_once, &m);
}

int am_fifo_get(struct am_fifo *f, unsigned s, uint32_t *v)
{
    AO_t m;
    int rc = attempt(f, s, get_once, &m);
    if (rc == 0)
        *v = (uint32_t)m;
    return rc;
}

int am_fifo_peek(struct am_fifo *f, unsigned s, uint32_t *seq, uint32_t *v)
{
    AO_t m;
    int rc = attempt(f, s, peek_once, &m);
    if (rc == 0) {
        *seq = seq_of(m);
        *v = (uint32_t)m;
    }
    return rc;
}

int am_fifo_pop(struct am_fifo *f, uint32_t seq)
{
    return AO_compare_and_swap_full(&f->head, seq, (AO_t)(uint32_t)(seq + 1));
}

int am_fifo_at_head(struct am_fifo *f, uint32_t seq)
{
    return (uint32_t)AO_load_acquire(&f->head) == seq;
}

uint32_t am_fifo_count(struct am_fifo *f, unsigned shift)
{
    uint32_t cap = capacity(f, shift);
    struct snap s;
    return cap && look(f, cap, &s) == 0 ? s.n : 0;
}

/* One look for payload (uint32_t)*m between head and tail: 1 found, -ENOENT
 * not there.  A slot whose sequence number is not the one scanned was reused
 * after its message left: that message is gone, not the one looked for. */
static int holds_once(struct am_fifo *f, uint32_t cap, const struct snap *s, AO_t *m)
{
    uint32_t v = (uint32_t)*m;
    if (s->n > 0 && (uint32_t)s->t == v)
        return 1;
    for (uint32_t i = 0; i + 1 < s->n; i++) {
        AO_t x = AO_load_acquire(&f->slot[(s->h + i) & (cap - 1)]);
        if (seq_of(x) == s->h + i && (uint32_t)x == v)
            return 1;
    }
    return -ENOENT;
}

int am_fifo_holds(struct am_fifo *f, unsigned s, uint32_t v)
{
    AO_t m = v;
    return attempt(f, s, holds_once, &m) == 0;
}
