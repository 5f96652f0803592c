/*
 * call_wait.c - the waits of calls and how every call ends: am_call_test,
 * am_call_wait, am_call_cancel and am_call; a call's end collected once; the
 * checks that end calls whose server died or closed, or whose deadline
 * passed (am__calls_check, from the endpoint's waits, which sleep at most
 * am__calls_slice while calls are outstanding); and the calls of a peer
 * being dropped.  The design is in call.c's file header.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "call.h"
#include "call_records.h"
#include "internal.h"
#include "peers.h"
#include "polling.h"
#include "senders.h"
#include "waiting.h"

/* Is the destination of a call there (mapped, not dropped, its owner
 * alive)?  Under peers_mu when shared. */
static int dest_alive(am_ep_t *ep, unsigned dest)
{
    struct am_peer *p = am__peer(ep, dest);
    return p && !p->dropped && am__peer_alive(p->view);
}

/* Mark with `mark` every awaited call whose destination is dead: 1 if any. */
static int mark_gone(am_ep_t *ep, struct am_calls *c, unsigned mark)
{
    int dead = 0;
    am__mt_lock(&ep->mt, &ep->mt.peers_mu); /* then calls_mu: the lock order */
    am__calls_lock(ep);
    for (unsigned i = 0; i < c->n; i++) {
        struct am_call_rec *r = c->rec[i];
        if (r->awaiting && !dest_alive(ep, r->dest))
            r->gone = mark, dead = 1;
    }
    am__calls_unlock(ep);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    return dead;
}

int am__calls_check(am_ep_t *ep)
{
    struct am_calls *c = ep->calls;
    if (!c)
        return 0;
    am__calls_lock(ep);
    unsigned mark = c->awaiting ? (c->checks += 2) | 1 : 0; /* odd: never 0 */
    am__calls_unlock(ep);
    if (!mark)
        return 0;
    if (mark_gone(ep, c, mark))
        am__poll(ep); /* what it published before it died */
    am__calls_lock(ep);
    unsigned long ended = c->ended;
    int64_t now = am__now_ns();
    for (unsigned i = 0; i < c->n; i++) {
        struct am_call_rec *r = c->rec[i];
        int gone = r->awaiting && r->gone == mark; /* seen dead before our poll */
        if (gone && r->rc == -EINPROGRESS)
            am__call_rec_end(c, r, -EPIPE);
        else if (r->awaiting && r->rc == -EINPROGRESS && now >= r->deadline)
            am__call_rec_end(c, r, -ETIMEDOUT);
        if (gone)
            am__call_rec_unawait(ep, c, r, 0);
        if (r->gone == mark)
            r->gone = 0;
    }
    int n = (int)(c->ended - ended);
    am__calls_unlock(ep);
    return n;
}

int64_t am__calls_slice(am_ep_t *ep, int64_t now, int64_t ms)
{
    struct am_calls *c = ep->calls;
    if (!c)
        return ms;
    am__calls_lock(ep);
    if (!c->live) {
        am__calls_unlock(ep);
        return ms;
    }
    if (ms > ep->abandon_ms)
        ms = ep->abandon_ms;
    for (unsigned i = 0; i < c->n; i++) {
        const struct am_call_rec *r = c->rec[i];
        if (r->rc == -EINPROGRESS && r->awaiting && r->deadline != INT64_MAX) {
            int64_t left = (r->deadline - now + 999999) / 1000000;
            if (left < ms)
                ms = left < 0 ? 0 : left;
        }
    }
    am__calls_unlock(ep);
    return ms;
}

void am__calls_peer_gone(am_ep_t *ep, unsigned index)
{
    struct am_calls *c = ep->calls;
    if (!c && !ep->owed)
        return;
    am__calls_lock(ep);
    for (unsigned i = 0; c && i < c->n; i++) {
        struct am_call_rec *r = c->rec[i];
        if (r->awaiting && r->dest == index) {
            if (r->rc == -EINPROGRESS)
                am__call_rec_end(c, r, -EPIPE);
            am__call_rec_unawait(ep, c, r, 0);
        }
    }
    for (struct am_owed **o = &ep->owed; *o;)
        if ((*o)->dest == index) {
            struct am_owed *gone = *o;
            *o = gone->next;
            free(gone);
        } else
            o = &(*o)->next;
    am__calls_unlock(ep);
}

/* Collect the end of the user's call id in r: its result, and the id is the
 * user's no more.  -EINPROGRESS if it has not ended, -EINVAL if another
 * thread collected it. */
static int collect(am_ep_t *ep, struct am_call_rec *r, am_call_t id)
{
    am__calls_lock(ep);
    int rc = r->id == id && r->user ? r->rc : -EINVAL;
    if (rc != -EINVAL && rc != -EINPROGRESS) {
        r->user = 0;
        am__call_rec_settle(r);
    }
    am__calls_unlock(ep);
    return rc;
}

/* The record of the user's call id on ep, for a call that may poll (`polls`:
 * not from inside a handler) or not: 0, -EINVAL (a bad endpoint, or an id
 * not outstanding nor uncollected), -EPERM, -EDEADLK. */
static int rec_of(am_ep_t *ep, am_call_t id, int polls, struct am_call_rec **r)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (polls && am__in_handler(ep))
        return -EDEADLK;
    am__calls_lock(ep);
    *r = am__call_rec_find(ep->calls, id);
    am__calls_unlock(ep);
    return *r ? 0 : -EINVAL;
}

/* One look at the user's call id in r without sleeping: its destination's
 * lifeline (before the poll: a reply it sent before dying is taken), a poll,
 * its deadline. */
static void look(am_ep_t *ep, struct am_call_rec *r, am_call_t id)
{
    struct am_calls *c = ep->calls;
    am__calls_lock(ep);
    unsigned dest = r->dest;
    am__calls_unlock(ep);
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    int alive = dest_alive(ep, dest);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    am__poll(ep);
    am__calls_lock(ep);
    if (r->id == id && r->rc == -EINPROGRESS && !alive) {
        am__call_rec_end(c, r, -EPIPE);
        am__call_rec_unawait(ep, c, r, 0);
    } else if (r->id == id && r->rc == -EINPROGRESS && r->deadline != INT64_MAX &&
               am__now_ns() >= r->deadline)
        am__call_rec_end(c, r, -ETIMEDOUT);
    am__calls_unlock(ep);
}

int am_call_test(am_ep_t *ep, am_call_t id)
{
    struct am_call_rec *r;
    int rc = rec_of(ep, id, 1, &r);
    if (rc)
        return rc;
    int shared = am__calls_enter(ep);
    if (am__call_rec_state(ep, r, id) == -EINPROGRESS)
        look(ep, r, id);
    rc = collect(ep, r, id);
    am__calls_leave(ep, shared);
    return rc;
}

/* am_call_wait's condition: the call has ended (or was collected). */
struct ended_ctx {
    struct am_call_rec *r;
    am_call_t id;
};

static int call_ended(am_ep_t *ep, int n, void *ctx)
{
    struct ended_ctx *e = ctx;
    return am__call_rec_state(ep, e->r, e->id) != -EINPROGRESS;
}

/* This thread starts (d 1) or stops (d -1) waiting for r's call: whoever
 * else ends it meanwhile wakes us (am__call_rec_end). */
static void waiting(am_ep_t *ep, struct am_call_rec *r, int d)
{
    am__calls_lock(ep);
    r->waiters += (unsigned)d;
    r->waiter = d > 0 && r->waiters == 1 ? am__self() : NULL;
    am__calls_unlock(ep);
}

static int call_wait(am_ep_t *ep, struct am_call_rec *r, am_call_t id, int timeout_ms)
{
    if (am__call_rec_state(ep, r, id) != -EINPROGRESS)
        return collect(ep, r, id);
    int64_t until = timeout_ms < 0 ? INT64_MAX : am__now_ns() + timeout_ms * 1000000LL;
    struct ended_ctx e = {r, id};
    waiting(ep, r, 1);
    int rc = am__wait_wakeable(ep, until, call_ended, &e);
    waiting(ep, r, -1);
    if (rc == 0 && am__call_rec_state(ep, r, id) == -EINPROGRESS)
        look(ep, r, id);
    if (rc < 0 && am__call_rec_state(ep, r, id) == -EINPROGRESS)
        return rc; /* -EINTR (a signal, am_ep_wake): the call goes on */
    return collect(ep, r, id);
}

int am_call_wait(am_ep_t *ep, am_call_t id, int timeout_ms)
{
    struct am_call_rec *r;
    int rc = rec_of(ep, id, 1, &r);
    if (rc)
        return rc;
    int shared = am__calls_enter(ep);
    rc = call_wait(ep, r, id, timeout_ms);
    am__calls_leave(ep, shared);
    return rc;
}

int am_call_cancel(am_ep_t *ep, am_call_t id)
{
    struct am_call_rec *r;
    int rc = rec_of(ep, id, 0, &r);
    if (rc)
        return rc;
    am__calls_lock(ep);
    if (r->id == id && r->rc == -EINPROGRESS)
        am__call_rec_end(ep->calls, r, -ECANCELED);
    am__calls_unlock(ep);
    return collect(ep, r, id);
}

int am_call(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args, int nargs,
            const void *data, size_t len, struct am_result *res, int timeout_ms)
{
    am_call_t id;
    if (am__ep_use(ep) == 0 && !am__in_handler(ep) && am__wake_take(ep))
        return -EINTR; /* a wake kept for the next wait (any thread's once
                        * shared): this one, never sent */
    int rc = am_call_start(ep, dest, handler, args, nargs, data, len, res, timeout_ms, &id);
    if (rc < 0)
        return rc;
    while ((rc = am_call_wait(ep, id, -1)) == -EINPROGRESS)
        ;
    if (rc != -EINTR)
        return rc;
    rc = am_call_cancel(ep, id); /* its end, if it came with the signal */
    return rc == -ECANCELED ? -EINTR : rc;
}
