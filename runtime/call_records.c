/*
 * call_records.c - the records of calls and their ids: struct am_calls, made
 * on the first call, and each call's struct am_call_rec through its states
 * (free, taken, outstanding, ended: call.c's file header), all under calls_mu,
 * which this file takes and releases (waking the endpoint's sleepers when a
 * call ended meanwhile).
 */
#include <errno.h>
#include <stdlib.h>

#include "call.h"
#include "call_records.h"
#include "internal.h"
#include "waiting.h"

/* calls_mu: a shared endpoint's struct am_calls (the file header). */
void am__calls_lock(am_ep_t *ep)
{
    am__mt_lock(&ep->mt, &ep->mt.calls_mu);
}

/* Wake every thread asleep on ep: one of them may wait for a call another
 * thread just ended.  The fence orders that end (stored under the lock just
 * released) before the load of `sleeping`; it pairs with sleep_once's
 * (wait.c), which orders a waiter's announce before its check of its call. */
static void wake_waiters(am_ep_t *ep)
{
    AO_nop_full();
    if (AO_int_load(&ep->own.shared->sleeping) & ~AM_SLEEP_ARMED)
        am__wake(ep->own.shared);
}

void am__calls_unlock(am_ep_t *ep)
{
    struct am_calls *c = ep->calls;
    int kick = ep->mt.shared && c && c->kick;
    if (kick)
        c->kick = 0;
    am__mt_unlock(&ep->mt, &ep->mt.calls_mu);
    if (kick)
        wake_waiters(ep);
}

/* Records [from, to) in a new chunk; 0 or -ENOMEM. */
static int chunk_add(struct am_calls *c, unsigned from, unsigned to)
{
    struct am_call_rec *chunk = calloc(to - from, sizeof *chunk);
    if (!chunk)
        return -ENOMEM;
    for (unsigned i = from; i < to; i++)
        c->rec[i] = &chunk[i - from];
    return 0;
}

struct am_calls *am__calls_of(am_ep_t *ep)
{
    if (ep->calls)
        return ep->calls;
    struct am_calls *c = calloc(1, sizeof *c);
    unsigned q = ep->own.q[AM_REPLY].packets_n;
    if (c && (!(c->rec = calloc(q, sizeof *c->rec)) || chunk_add(c, 0, q) < 0)) {
        free(c->rec);
        free(c);
        c = NULL;
    }
    struct am_heap_stats st;
    am_heap_stats(&ep->own.q[AM_REPLY].heap, &st);
    if (c)
        c->n = c->n0 = q, c->limit = q < AM_CALL_RECS_MAX ? q : AM_CALL_RECS_MAX,
        c->seq = 1, c->bound = st.capacity / 2;
    return ep->calls = c;
}

int am__calls_init(am_ep_t *ep)
{
    return am__calls_of(ep) ? 0 : -ENOMEM;
}

void am__calls_free(am_ep_t *ep)
{
    while (ep->owed) {
        struct am_owed *o = ep->owed;
        ep->owed = o->next;
        free(o);
    }
    struct am_calls *c = ep->calls;
    if (c) {
        for (unsigned at = 0; at < c->n; at = at ? 2 * at : c->n0)
            free(c->rec[at]); /* a chunk's first record */
        free(c->rec);
        free(c->held);
    }
    free(c);
    ep->calls = NULL;
}

unsigned long am__calls_ended(const am_ep_t *ep)
{
    return ep->calls ? AO_load(&ep->calls->ended) : 0;
}

/* A record neither the user, a reply nor its starter needs any more is free
 * again. */
void am__call_rec_settle(struct am_call_rec *r)
{
    if (!r->user && !r->awaiting && !r->sending) {
        r->id = 0;
        r->res = NULL;
    }
}

/* End outstanding call r with rc (its result; the record stays the user's);
 * wake its waiters at unlock unless this thread is the only one. */
void am__call_rec_end(struct am_calls *c, struct am_call_rec *r, int rc)
{
    r->rc = rc;
    c->live--;
    AO_store(&c->ended, c->ended + 1);
    if ((r->waiters && r->waiter != am__self()) || c->starts)
        c->kick = 1;
}

/* No reply to r can come any more: give its room back (its starter does,
 * while it sends). */
void am__call_rec_unawait(am_ep_t *ep, struct am_calls *c, struct am_call_rec *r, int keep)
{
    r->awaiting = 0;
    c->awaiting--;
    am__call_held_uncharge(c, r);
    if (!r->sending)
        am__call_room_release(ep, r, keep);
    am__call_rec_settle(r);
    if (c->starts) /* a record or room came free */
        c->kick = 1;
}

/* The record of the user's id, or NULL (unknown, or its end collected). */
struct am_call_rec *am__call_rec_find(struct am_calls *c, am_call_t id)
{
    if (!c || id == 0)
        return NULL;
    uint64_t i = id & (AM_CALL_RECS_MAX - 1);
    struct am_call_rec *r = i < c->n ? c->rec[i] : NULL;
    return r && r->id == id && r->user && !r->sending ? r : NULL;
}

/* Twice the records (ended calls not yet collected hold theirs): 0 or
 * -ENOMEM.  The new ones are a chunk of their own: none moves. */
static int rec_grow(struct am_calls *c)
{
    unsigned n = 2 * c->n;
    struct am_call_rec **p = n <= AM_CALL_RECS_MAX ? realloc(c->rec, n * sizeof *p) : NULL;
    if (!p)
        return -ENOMEM;
    c->rec = p;
    if (chunk_add(c, c->n, n) < 0)
        return -ENOMEM;
    c->next = c->n;
    c->n = n;
    return 0;
}

/* A fresh id for record i: nonzero on the wire (its low 32 bits). */
static am_call_t id_for(struct am_calls *c, unsigned i)
{
    am_call_t id;
    do
        id = (c->seq++ << AM_CALL_SLOT_BITS) | i;
    while ((uint32_t)id == 0);
    return id;
}

/* Take a free record for a call to dest (state taken), if fewer than
 * `limit` calls are taken or outstanding; else NULL. */
struct am_call_rec *am__call_rec_take(struct am_calls *c, unsigned dest,
                                      struct am_result *res, int64_t deadline)
{
    if (c->live >= c->limit)
        return NULL;
    unsigned k = 0, i = 0, n = c->n;
    for (; k < n; k++)
        if (c->rec[i = (c->next + k) % n]->id == 0)
            break;
    if (k == n && rec_grow(c) < 0)
        return NULL;
    if (k == n)
        i = c->next; /* the first new one */
    c->next = i + 1;
    struct am_call_rec *r = c->rec[i];
    *r = (struct am_call_rec){.id = id_for(c, i),
                              .res = res,
                              .deadline = deadline,
                              .block = r->block,
                              .cap = r->cap,
                              .dest = dest,
                              .rc = -EAGAIN,
                              .waiters = r->waiters,
                              .waiter = r->waiter};
    c->live++;
    return r;
}

/* The state of the user's call id in record r: its rc (-EINPROGRESS while
 * outstanding), or -EINVAL once another thread collected it. */
int am__call_rec_state(am_ep_t *ep, struct am_call_rec *r, am_call_t id)
{
    am__calls_lock(ep);
    int rc = r->id == id && r->user ? r->rc : -EINVAL;
    am__calls_unlock(ep);
    return rc;
}

/* Count a shared endpoint's call in progress (am_ep_destroy's -EBUSY). */
int am__calls_enter(am_ep_t *ep)
{
    int shared = ep->mt.shared;
    if (shared)
        am__mt_enter(ep);
    return shared;
}

void am__calls_leave(am_ep_t *ep, int shared)
{
    if (shared)
        am__mt_leave(ep);
}
