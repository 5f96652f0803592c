/*
 * call.c - calls (issue 26): a request whose reply goes into the caller's
 * struct am_result, and that always ends, in exactly one way: its reply came
 * (0); the server's runtime sent an error back (-ENOENT: no such handler,
 * -EMSGSIZE: the reply did not fit); the server died or closed (-EPIPE); the
 * deadline passed (-ETIMEDOUT); the caller cancelled it (-ECANCELED) or a
 * signal did, in am_call (-EINTR).
 *
 * The caller.  A call takes a record (private: struct am_call_rec) and, if
 * its result takes data, a room: a block of the caller's OWN reply heap of
 * AM_CALL_ROOM_HEAD + cap bytes, allocated with AM_OWN_WHO, whose head says
 * which call it is for and how much it takes (struct am_call_room, layout.h).
 * The request's packet carries the call's id on the wire (its low 32 bits) and
 * the room's offset.  At most `limit` calls are outstanding, the packets the
 * caller's reply queue (or one reply channel) holds, so their replies have
 * room there; am_call_start waits, polling, for a record and for heap room.
 * Ids are (sequence << 16) | record: unique for the endpoint's life; a
 * record, and with it the id's low bits, is reused only once no reply to its
 * call can come (it came, or the server died or closed), so a reply matches
 * its own call and no other.  A cancelled or timed-out call keeps its record
 * and room until then: its reply is dropped and counted (am_ep_late_replies).
 *
 * The server.  A call arrives as a request whose token has the call's id and
 * room.  am_reply* of it writes the data straight into the room (checked from
 * a private copy of its head, and against the heap's own record of the block:
 * am_heap_data), then sends a short reply (AM_CALL_REPLY: the id, the length,
 * the args; its handler field an error number or 0).  A reply longer than the
 * room, or to a call without one, is -EMSGSIZE to both.  A handler that does
 * not reply gets an empty one sent for it; a call to a handler not set, an
 * -ENOENT.  A server never waits for one client: a call's reply is placed
 * without waiting (AM_SEND_NOWAIT), and if the caller's queue has no room
 * now (it holds other traffic: only calls have room kept) the reply is kept
 * (struct am_owed: a packet's worth, the data is in the room already) and
 * tried again on later polls; at most one per call received.
 *
 * Every call ends.  The caller's waits (wait.c) sleep at most abandon_ms at a
 * time while calls are outstanding, and then ask each destination's lifeline
 * (am__peer_alive: never a pid) and each deadline (am__calls_check).  A
 * destination seen dead is polled for once more before its calls end, so a
 * reply it published before it died is still taken.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "deliver.h"
#include "internal.h"
#include "net.h"
#include "peers.h"
#include "polling.h"
#include "send.h"
#include "senders.h"
#include "waiting.h"

/* Rooms of at most this many data bytes stay with their record for the next
 * call: no allocation per call for small replies. */
#define AM_CALL_CACHE 256

struct am_call_rec {
    am_call_t id;          /* 0: free */
    struct am_result *res; /* the user's, until the call ends */
    int64_t deadline;      /* ns on the monotonic clock; INT64_MAX: none */
    uint64_t block;        /* its room in our reply heap; 0: none */
    uint32_t cap;          /* data bytes the room takes */
    unsigned dest;
    int rc;           /* -EINPROGRESS while outstanding, then how it ended */
    uint8_t user;     /* the id is the user's: its end not yet collected */
    uint8_t awaiting; /* a reply may still come: the room stays reserved */
    uint8_t gone;     /* am__calls_check: the destination was seen dead */
};

#define AM_CALL_SLOT_BITS 16 /* an id's record: its low bits */
#define AM_CALL_RECS_MAX (1u << AM_CALL_SLOT_BITS)

struct am_calls {
    struct am_call_rec *rec; /* n of them, grown while all are taken */
    unsigned n;
    unsigned limit; /* most calls outstanding */
    unsigned live;  /* rc == -EINPROGRESS */
    unsigned awaiting;
    unsigned next; /* where the search for a free record starts */
    uint64_t seq;  /* the next id's sequence number */
    unsigned long ended, late;
};

/* A call's reply the caller's queue had no room for, kept for later. */
struct am_owed {
    struct am_owed *next;
    unsigned dest;
    struct am_msg m;
    uint32_t args[AM_MAX_ARGS];
};

static struct am_calls *calls_of(am_ep_t *ep)
{
    if (ep->calls)
        return ep->calls;
    struct am_calls *c = calloc(1, sizeof *c);
    unsigned q = ep->own.q[AM_REPLY].packets_n;
    if (c && !(c->rec = calloc(q, sizeof *c->rec))) {
        free(c);
        c = NULL;
    }
    if (c)
        c->n = q, c->limit = q < AM_CALL_RECS_MAX ? q : AM_CALL_RECS_MAX, c->seq = 1;
    return ep->calls = c;
}

void am__calls_free(am_ep_t *ep)
{
    while (ep->owed) {
        struct am_owed *o = ep->owed;
        ep->owed = o->next;
        free(o);
    }
    if (ep->calls)
        free(ep->calls->rec);
    free(ep->calls);
    ep->calls = NULL;
}

unsigned long am__calls_ended(const am_ep_t *ep)
{
    return ep->calls ? ep->calls->ended : 0;
}

/* ---- records ---------------------------------------------------------- */

static struct am_heap_view *reply_heap(am_ep_t *ep)
{
    return &ep->own.q[AM_REPLY].heap;
}

/* Give a record's room back, or keep a small one for the next call. */
static void room_release(am_ep_t *ep, struct am_call_rec *r, int keep)
{
    if (r->block && !(keep && r->cap <= AM_CALL_CACHE)) {
        am_heap_free(reply_heap(ep), r->block, AM_OWN_WHO);
        r->block = 0, r->cap = 0;
    }
}

/* A record neither the user nor a reply needs any more is free again. */
static void rec_settle(am_ep_t *ep, struct am_call_rec *r)
{
    if (!r->user && !r->awaiting) {
        r->id = 0;
        r->res = NULL;
    }
}

/* End outstanding call r with rc (its result; the record stays the user's). */
static void rec_end(struct am_calls *c, struct am_call_rec *r, int rc)
{
    r->rc = rc;
    c->live--;
    c->ended++;
}

/* No reply to r can come any more: give its room back. */
static void rec_unawait(am_ep_t *ep, struct am_calls *c, struct am_call_rec *r, int keep)
{
    r->awaiting = 0;
    c->awaiting--;
    room_release(ep, r, keep);
    rec_settle(ep, r);
}

/* The record of the user's id, or NULL (unknown, or its end collected). */
static struct am_call_rec *rec_find(am_ep_t *ep, am_call_t id)
{
    struct am_calls *c = ep->calls;
    if (!c || id == 0)
        return NULL;
    uint64_t i = id & (AM_CALL_RECS_MAX - 1);
    return i < c->n && c->rec[i].id == id && c->rec[i].user ? &c->rec[i] : NULL;
}

/* The record of the user's call id on ep, for a call that may poll (`polls`:
 * not from inside a handler) or not: 0, -EINVAL (a bad endpoint, or an id
 * not outstanding nor uncollected), -EDEADLK. */
static int rec_of(am_ep_t *ep, am_call_t id, int polls, struct am_call_rec **r)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    if (polls && ep->in_handler)
        return -EDEADLK;
    return (*r = rec_find(ep, id)) ? 0 : -EINVAL;
}

/* Twice the records (ended calls not yet collected hold theirs): 0 or
 * -ENOMEM.  Only am_call_start grows them, never during another's wait, so
 * no pointer to a record outlives it. */
static int rec_grow(struct am_calls *c)
{
    unsigned n = 2 * c->n;
    struct am_call_rec *r = n <= AM_CALL_RECS_MAX ? realloc(c->rec, n * sizeof *r) : NULL;
    if (!r)
        return -ENOMEM;
    memset(r + c->n, 0, (n - c->n) * sizeof *r);
    c->next = c->n;
    c->rec = r, c->n = n;
    return 0;
}

/* A free record, if fewer than `limit` calls are outstanding; else NULL. */
static struct am_call_rec *rec_take(struct am_calls *c)
{
    if (c->live >= c->limit)
        return NULL;
    for (unsigned k = 0; k < c->n; k++) {
        unsigned i = (c->next + k) % c->n;
        if (c->rec[i].id == 0) {
            c->next = i + 1;
            return &c->rec[i];
        }
    }
    return rec_grow(c) == 0 ? &c->rec[c->next++] : NULL;
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

/* Free the rooms free records keep (the heap ran short). */
static void rooms_uncache(am_ep_t *ep, struct am_calls *c)
{
    for (unsigned i = 0; i < c->n; i++)
        if (c->rec[i].id == 0)
            room_release(ep, &c->rec[i], 0);
}

/* ---- the caller ------------------------------------------------------- */

/* Is the destination of a call there (mapped, not dropped, its owner alive)? */
static int dest_alive(am_ep_t *ep, unsigned dest)
{
    struct am_peer *p = am__peer(ep, dest);
    return p && !p->dropped && am__peer_alive(p->view);
}

int am__calls_check(am_ep_t *ep)
{
    struct am_calls *c = ep->calls;
    if (!c || !c->awaiting)
        return 0;
    int dead = 0;
    for (unsigned i = 0; i < c->n; i++)
        if (c->rec[i].awaiting && !dest_alive(ep, c->rec[i].dest))
            dead = c->rec[i].gone = 1;
    if (dead)
        am__poll(ep); /* what it published before it died */
    unsigned long ended = c->ended;
    int64_t now = am__now_ns();
    for (unsigned i = 0; i < c->n; i++) {
        struct am_call_rec *r = &c->rec[i];
        if (r->awaiting && r->gone && r->rc == -EINPROGRESS)
            rec_end(c, r, -EPIPE);
        else if (r->awaiting && r->rc == -EINPROGRESS && now >= r->deadline)
            rec_end(c, r, -ETIMEDOUT);
        if (r->awaiting && r->gone)
            rec_unawait(ep, c, r, 0);
        r->gone = 0;
    }
    return (int)(c->ended - ended);
}

int64_t am__calls_slice(const am_ep_t *ep, int64_t now, int64_t ms)
{
    const struct am_calls *c = ep->calls;
    if (!c || !c->live)
        return ms;
    if (ms > ep->abandon_ms)
        ms = ep->abandon_ms;
    for (unsigned i = 0; i < c->n; i++) {
        const struct am_call_rec *r = &c->rec[i];
        if (r->rc == -EINPROGRESS && r->awaiting && r->deadline != INT64_MAX) {
            int64_t left = (r->deadline - now + 999999) / 1000000;
            if (left < ms)
                ms = left < 0 ? 0 : left;
        }
    }
    return ms;
}

void am__calls_peer_gone(am_ep_t *ep, unsigned index)
{
    struct am_calls *c = ep->calls;
    for (unsigned i = 0; c && i < c->n; i++) {
        struct am_call_rec *r = &c->rec[i];
        if (r->awaiting && r->dest == index) {
            if (r->rc == -EINPROGRESS)
                rec_end(c, r, -EPIPE);
            rec_unawait(ep, c, r, 0);
        }
    }
    am__mt_lock(&ep->mt, &ep->mt.calls_mu);
    for (struct am_owed **o = &ep->owed; *o;)
        if ((*o)->dest == index) {
            struct am_owed *gone = *o;
            *o = gone->next;
            free(gone);
        } else
            o = &(*o)->next;
    am__mt_unlock(&ep->mt, &ep->mt.calls_mu);
}

/* A reply's status: 0, or the error the server's runtime sent. */
static int status_of(uint16_t s)
{
    return s == 0 ? 0 : s == ENOENT ? -ENOENT : s == EMSGSIZE ? -EMSGSIZE : -EPROTO;
}

/* Fill r's result from reply m: its args, and its data from r's room. */
static int fill(am_ep_t *ep, struct am_call_rec *r, const struct am_packet *m)
{
    int rc = status_of(m->handler);
    if (rc == 0 && m->bulk_len > r->cap)
        rc = -EMSGSIZE;
    const unsigned char *d = NULL;
    if (rc == 0 && m->bulk_len &&
        !(d = am_heap_data(reply_heap(ep), r->block, AM_CALL_ROOM_HEAD + m->bulk_len,
                           AM_OWN_WHO)))
        rc = -EPROTO;
    if (rc < 0)
        return rc;
    struct am_result *res = r->res;
    if (m->bulk_len)
        memcpy(res->data, d + AM_CALL_ROOM_HEAD, m->bulk_len);
    res->len = m->bulk_len;
    res->nargs = m->nargs;
    memcpy(res->args, m->args, (size_t)m->nargs * sizeof *m->args);
    return 0;
}

void am__call_reply_in(am_ep_t *ep, const struct am_packet *m, unsigned source)
{
    struct am_calls *c = ep->calls;
    uint32_t i = m->call & (AM_CALL_RECS_MAX - 1);
    struct am_call_rec *r = c && i < c->n ? &c->rec[i] : NULL;
    if (!r || !r->awaiting || (uint32_t)r->id != m->call || r->dest != source) {
        am__report_bad(ep, "a reply to no call of ours");
        return;
    }
    if (r->rc == -EINPROGRESS)
        rec_end(c, r, fill(ep, r, m));
    else
        c->late++; /* cancelled or timed out: dropped, counted */
    rec_unawait(ep, c, r, 1);
}

/* Waits of am_call_start: for a record, then for room in our reply heap. */
struct start_ctx {
    struct am_calls *c;
    struct am_call_rec *r;
    size_t want; /* room bytes */
};

static int got_record(am_ep_t *ep, int n, void *ctx)
{
    struct start_ctx *s = ctx;
    return (s->r = rec_take(s->c)) != NULL;
}

static int got_room(am_ep_t *ep, int n, void *ctx)
{
    struct start_ctx *s = ctx;
    uint64_t off;
    int rc = am_heap_alloc(reply_heap(ep), s->want, AM_OWN_WHO, &off);
    if (rc == -ENOMEM) {
        rooms_uncache(ep, s->c);
        rc = am_heap_alloc(reply_heap(ep), s->want, AM_OWN_WHO, &off);
    }
    if (rc == -ENOMEM)
        return 0;
    if (rc == 0 && (off % 64 != 0 || off / 64 > UINT32_MAX)) {
        am_heap_free(reply_heap(ep), off, AM_OWN_WHO);
        rc = -EPROTO; /* a room the packet's field cannot name */
    }
    s->r->block = rc == 0 ? off : 0;
    return rc == 0 ? 1 : rc;
}

/* Make r's room take cap bytes of data: keep the one it has if large enough.
 * 0, -ETIMEDOUT, -EINTR, -EPROTO. */
static int room_get(am_ep_t *ep, struct am_calls *c, struct am_call_rec *r, size_t cap,
                    int64_t deadline)
{
    if (r->block && r->cap >= cap)
        return 0;
    room_release(ep, r, 0);
    if (cap == 0)
        return 0;
    struct start_ctx s = {c, r, AM_CALL_ROOM_HEAD + cap};
    int rc = got_room(ep, 0, &s);
    if (rc == 0)
        rc = am__wait_for(ep, deadline, got_room, &s);
    if (rc == 1)
        r->cap = (uint32_t)cap;
    return rc == 1 ? 0 : rc == 0 ? -ETIMEDOUT : rc;
}

/* The most reply data a room of ours takes: long_max, or what the heap serves. */
static size_t cap_max(am_ep_t *ep)
{
    size_t most = am_heap_max_alloc(reply_heap(ep)) - AM_CALL_ROOM_HEAD;
    return ep->own.long_max < most ? ep->own.long_max : most;
}

/* Send the request of call r: the kind its length takes. */
static int send_request(am_ep_t *ep, struct am_call_rec *r, unsigned handler,
                        const uint32_t *args, int nargs, const void *data, size_t len)
{
    struct am_msg m = {len == 0               ? AM_SHORT
                       : len <= AM_BULK_BYTES ? AM_BULK
                                              : AM_LONG,
                       handler,
                       args,
                       nargs,
                       data,
                       len,
                       0,
                       (uint32_t)r->id,
                       (uint32_t)(r->block / 64)};
    if (r->block) {
        struct am_call_room *head =
            am_heap_data(reply_heap(ep), r->block, AM_CALL_ROOM_HEAD, AM_OWN_WHO);
        head->call = m.call; /* published by the request's release */
        head->cap = r->cap;
    }
    struct am_send_limit outer = am__send_limit;
    am__send_limit = (struct am_send_limit){
        r->deadline == INT64_MAX ? AM_SEND_FOREVER : AM_SEND_DEADLINE, 0, r->deadline};
    int rc = am__send(ep, r->dest, AM_REQUEST, &m);
    am__send_limit = outer;
    return rc;
}

int am_call_start(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                  int nargs, const void *data, size_t len, struct am_result *res,
                  int timeout_ms, am_call_t *id)
{
    if (!am__ep_ok(ep) || !res || !id || handler >= AM_MAX_HANDLERS || (len && !data) ||
        (res->cap && !res->data))
        return -EINVAL;
    if (ep->mt.owner != am__self())
        return -EPERM;
    if (ep->mt.shared)
        return -ENOTSUP; /* a shared endpoint's calls: not yet (threads.h) */
    if (ep->in_handler)
        return -EDEADLK;
    if (ep->net && am__net_remote(ep->net, dest))
        return -EOPNOTSUPP; /* calls go to endpoints of this node */
    struct am_calls *c = calls_of(ep);
    if (!c)
        return -ENOMEM;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : am__now_ns() + timeout_ms * 1000000LL;
    struct start_ctx s = {c, rec_take(c), 0};
    int rc = s.r ? 1 : am__wait_for(ep, deadline, got_record, &s);
    if (rc != 1)
        return rc == 0 ? -ETIMEDOUT : rc;
    struct am_call_rec *r = s.r;
    unsigned i = (unsigned)(r - c->rec);
    size_t cap = res->cap < cap_max(ep) ? res->cap : cap_max(ep);
    /* Taken (id set) but not yet outstanding, nor the user's, while its room
     * is found and its request sent: the waits meanwhile poll and check. */
    *r = (struct am_call_rec){id_for(c, i), res,     deadline, r->block, r->cap,
                              dest,         -EAGAIN, 0,        0,        0};
    if ((rc = room_get(ep, c, r, cap, deadline)) == 0) {
        am__hook(AM_HOOK_CALL_ROOMED);
        rc = send_request(ep, r, handler, args, nargs, data, len);
    }
    if (rc < 0) { /* never sent: no reply can come */
        room_release(ep, r, 1);
        r->id = 0;
        return rc;
    }
    r->rc = -EINPROGRESS, r->user = 1, r->awaiting = 1;
    c->live++, c->awaiting++;
    res->len = 0, res->nargs = 0;
    *id = r->id;
    return 0;
}

/* Collect the end of call r: its result, and the id is the user's no more. */
static int collect(am_ep_t *ep, struct am_call_rec *r)
{
    int rc = r->rc;
    r->user = 0;
    rec_settle(ep, r);
    return rc;
}

/* One look at outstanding call r without sleeping: its destination's
 * lifeline (before the poll: a reply it sent before dying is taken), a poll,
 * its deadline. */
static void look(am_ep_t *ep, struct am_call_rec *r)
{
    struct am_calls *c = ep->calls;
    int alive = dest_alive(ep, r->dest);
    am__poll(ep);
    if (r->rc != -EINPROGRESS)
        return;
    if (!alive) {
        rec_end(c, r, -EPIPE);
        rec_unawait(ep, c, r, 0);
    } else if (r->deadline != INT64_MAX && am__now_ns() >= r->deadline)
        rec_end(c, r, -ETIMEDOUT);
}

int am_call_test(am_ep_t *ep, am_call_t id)
{
    struct am_call_rec *r;
    int bad = rec_of(ep, id, 1, &r);
    if (bad)
        return bad;
    if (r->rc == -EINPROGRESS)
        look(ep, r);
    return r->rc == -EINPROGRESS ? -EINPROGRESS : collect(ep, r);
}

static int call_ended(am_ep_t *ep, int n, void *ctx)
{
    return ((struct am_call_rec *)ctx)->rc != -EINPROGRESS;
}

int am_call_wait(am_ep_t *ep, am_call_t id, int timeout_ms)
{
    struct am_call_rec *r;
    int bad = rec_of(ep, id, 1, &r);
    if (bad)
        return bad;
    if (r->rc == -EINPROGRESS) {
        int64_t until = timeout_ms < 0 ? INT64_MAX : am__now_ns() + timeout_ms * 1000000LL;
        int rc = am__wait_wakeable(ep, until, call_ended, r);
        if (rc == 0 && r->rc == -EINPROGRESS)
            look(ep, r);
        if (rc < 0 && r->rc == -EINPROGRESS)
            return rc; /* -EINTR (a signal, am_ep_wake): the call goes on */
    }
    return r->rc == -EINPROGRESS ? -EINPROGRESS : collect(ep, r);
}

int am_call_cancel(am_ep_t *ep, am_call_t id)
{
    struct am_call_rec *r;
    int bad = rec_of(ep, id, 0, &r);
    if (bad)
        return bad;
    if (r->rc == -EINPROGRESS)
        rec_end(ep->calls, r, -ECANCELED);
    return collect(ep, r);
}

int am_call(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args, int nargs,
            const void *data, size_t len, struct am_result *res, int timeout_ms)
{
    am_call_t id;
    if (am__ep_ok(ep) && ep->mt.owner == am__self() && !ep->in_handler && am__wake_take(ep))
        return -EINTR; /* a wake kept for the next wait: this one, never sent */
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

unsigned long am_ep_late_replies(const am_ep_t *ep)
{
    return am__ep_ok(ep) && ep->calls ? ep->calls->late : 0;
}

/* ---- the server ------------------------------------------------------- */

/* Write a reply's len bytes of data into the caller's room named by tok:
 * 0, -EMSGSIZE (no room, or too small), -EPIPE (the caller has gone).  The
 * room's head is read once, into a private copy. */
static int room_write(am_token_t *tok, const void *data, size_t len)
{
    struct am_peer *p = am__peer(tok->ep, tok->source);
    if (!p || p->dropped || !am__peer_alive(p->view))
        return -EPIPE;
    struct am_heap_view *h = &p->view->q[AM_REPLY].heap;
    uint64_t off = (uint64_t)tok->room * 64;
    const struct am_call_room *head =
        tok->room ? am_heap_data(h, off, AM_CALL_ROOM_HEAD, AM_OWN_WHO) : NULL;
    struct am_call_room r = {0};
    if (head)
        memcpy(&r, head, sizeof r);
    unsigned char *d = r.call == tok->call && len <= r.cap
                           ? am_heap_data(h, off, AM_CALL_ROOM_HEAD + len, AM_OWN_WHO)
                           : NULL;
    if (!d)
        return -EMSGSIZE;
    memcpy(d + AM_CALL_ROOM_HEAD, data, len);
    return 0;
}

/* Place a call's short reply in dest's reply queue without waiting: 0,
 * -EAGAIN (no room now), -EPIPE. */
static int place(am_ep_t *ep, unsigned dest, struct am_msg *m)
{
    struct am_send_limit outer = am__send_limit;
    am__send_limit = (struct am_send_limit){AM_SEND_NOWAIT, 0, 0};
    int rc = am__send(ep, dest, AM_REPLY, m);
    am__send_limit = outer;
    return rc;
}

/* Send tok's caller the reply m (AM_CALL_REPLY), now or, if there is no room
 * now, later (kept in ep->owed). */
static int owe(am_token_t *tok, struct am_msg *m)
{
    am_ep_t *ep = tok->ep;
    int rc = place(ep, tok->source, m);
    if (rc != -EAGAIN)
        return rc == -EPIPE ? -EPIPE : 0;
    struct am_owed *o = malloc(sizeof *o), **end = &ep->owed;
    if (!o)
        return 0; /* the caller's deadline ends the call */
    *o = (struct am_owed){NULL, tok->source, *m, {0}};
    memcpy(o->args, m->args, (size_t)m->nargs * sizeof *m->args);
    o->m.args = o->args;
    am__mt_lock(&ep->mt, &ep->mt.calls_mu);
    while (*end)
        end = &(*end)->next;
    *end = o;
    am__mt_unlock(&ep->mt, &ep->mt.calls_mu);
    return 0;
}

static struct am_msg reply_msg(const am_token_t *tok, int err, const uint32_t *args,
                               int nargs, size_t len)
{
    return (struct am_msg){
        AM_CALL_REPLY, (unsigned)-err, args, nargs, NULL, len, 0, tok->call, 0};
}

int am__call_reply(am_token_t *tok, const struct am_msg *m)
{
    if (m->nargs < 0 || (m->nargs && !m->args))
        return -EINVAL;
    if (m->nargs > AM_MAX_ARGS || m->len > AM_PACKET_LEN_MAX ||
        (m->kind == AM_BULK && m->len > AM_BULK_BYTES))
        return -EMSGSIZE;
    size_t len = m->kind == AM_SHORT ? 0 : m->len;
    int rc = len ? room_write(tok, m->data, len) : 0;
    if (rc == -EPIPE)
        return rc;
    am__hook(AM_HOOK_CALL_WRITTEN);
    tok->replied = 1;
    struct am_msg r = reply_msg(tok, rc, m->args, rc ? 0 : m->nargs, rc ? 0 : len);
    int sent = owe(tok, &r);
    return rc < 0 ? rc : sent;
}

void am__call_error(am_token_t *tok, int err)
{
    struct am_msg r = reply_msg(tok, err, NULL, 0, 0);
    tok->replied = 1;
    owe(tok, &r);
}

void am__call_unreplied(am_token_t *tok)
{
    am__call_error(tok, 0);
}

#define AM_OWED_EVERY 16 /* polls between tries of kept replies */

/* Place what list *head holds that fits; leave the rest, in order. */
static void place_list(am_ep_t *ep, struct am_owed **head)
{
    unsigned full = UINT32_MAX; /* a destination found full this round */
    for (struct am_owed **o = head; *o;) {
        struct am_owed *cur = *o;
        int rc = cur->dest == full ? -EAGAIN : place(ep, cur->dest, &cur->m);
        if (rc == -EAGAIN) {
            full = cur->dest;
            o = &cur->next;
            continue;
        }
        *o = cur->next; /* placed, or its caller has gone */
        free(cur);
    }
}

/* A shared endpoint's retry (threads.h): take the list under calls_mu,
 * place outside it (a send takes peers_mu, which am__calls_peer_gone holds
 * when it takes calls_mu), then put what is left back in front. */
static void retry_shared(am_ep_t *ep, int now)
{
    pthread_mutex_lock(&ep->mt.calls_mu);
    struct am_owed *mine = ep->owed, **end = &mine;
    int due = now || ++ep->owed_tick % AM_OWED_EVERY == 0;
    if (due)
        ep->owed = NULL;
    pthread_mutex_unlock(&ep->mt.calls_mu);
    if (!due || !mine)
        return;
    place_list(ep, &mine);
    pthread_mutex_lock(&ep->mt.calls_mu);
    while (*end)
        end = &(*end)->next;
    *end = ep->owed; /* kept meanwhile: after ours */
    ep->owed = mine;
    pthread_mutex_unlock(&ep->mt.calls_mu);
}

void am__call_retry(am_ep_t *ep, int now)
{
    if (ep->mt.shared) {
        retry_shared(ep, now);
        return;
    }
    if (!now && ++ep->owed_tick % AM_OWED_EVERY != 0)
        return;
    place_list(ep, &ep->owed);
}
