/*
 * call.c - calls (RPC over requests): a request whose reply goes into the caller's
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
 * its own call and no other, whichever index of ours its server is mapped
 * at (two indexes of one endpoint: same_endpoint).  A cancelled or timed-out
 * call keeps its record and room until then: its reply is dropped and counted
 * (am_ep_late_replies).  So that a hung server cannot take the room calls to
 * others need, the rooms of one destination's awaiting calls cost at most
 * `bound` (half the heap; each rounded up to a power of two) beyond its first
 * (held[], charged at launch, given back once no reply can come).
 *
 * The server.  A call arrives as a request whose token has the call's id and
 * room.  am_reply* of it writes the data straight into the room (checked from
 * a private copy of its head, and against the heap's own record of the block:
 * am_heap_data), then sends a short reply (AM_CALL_REPLY: the id, the length,
 * the args; its handler field an error number or 0).  A reply longer than the
 * room, or to a call without one, is -EMSGSIZE to both.  A handler that does
 * not reply gets an empty one sent for it; a call to a handler not set, an
 * -ENOENT.  Every reply goes to the caller it answers only: the peer whose
 * serial (peers.c) the handler's source had when it replied, or a kept
 * handle's when it was kept; room and packet both refuse another peer at its
 * index (-EPIPE).  A server never waits for one client: a call's reply is placed
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
 *
 * Calls from any thread (a shared endpoint, threads.h).  calls_mu guards
 * struct am_calls and every record's fields (the owner's endpoint takes no
 * lock: am__mt_lock).  Records never move (rec[] points into chunks that
 * live as long as the endpoint), so a pointer to one stays valid across
 * waits; what it holds is re-read under the lock, and its id says whether it
 * is still the same call.  A record goes through these states:
 *   free         id 0;
 *   taken        id set, rc -EAGAIN: its starter's alone while it finds the
 *                room (counted in `live`, the limit's count);
 *   outstanding  rc -EINPROGRESS, awaiting: the reply may come from the
 *                moment the request is published, so this is set before
 *                the send, and whichever thread polls takes it into the
 *                record; `sending` meanwhile keeps the room and the record
 *                (others may end the call, never free what the send uses);
 *   ended        rc its end, the user's (`user`) until collected, awaiting
 *                while a late reply may still come.
 * A call may end on any thread (its reply taken by another thread's poll,
 * its deadline or its server's death seen by another's check) while its
 * waiter sleeps: whoever ends a call wakes the endpoint's sleepers (calls_
 * unlock), and a wait checks its own call after announcing itself asleep
 * and before sleeping (wait.c), so either it sees the end or the ender sees
 * it asleep (the fences of wake_waiters and sleep_once).
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
    int rc;             /* -EAGAIN taken, -EINPROGRESS outstanding, then its end */
    unsigned gone;      /* am__calls_check: the destination was seen dead (its mark) */
    uint8_t user;       /* the id is the user's: its end not yet collected */
    uint8_t awaiting;   /* a reply may still come: the room stays reserved */
    uint8_t sending;    /* its starter is sending the request: room and record stay */
    uint64_t held;      /* its room's cost in its destination's held[] while awaiting */
    unsigned waiters;   /* threads in am_call_wait for it (kept across calls) */
    const void *waiter; /* the one (am__self) if it is one; NULL: unknown */
};

#define AM_CALL_SLOT_BITS 16 /* an id's record: its low bits */
#define AM_CALL_RECS_MAX (1u << AM_CALL_SLOT_BITS)

struct am_calls {
    struct am_call_rec **rec; /* n of them, doubled while all are taken */
    unsigned n, n0;           /* n0: the first chunk's; chunk k starts at n0 << k */
    unsigned limit;           /* most calls taken or outstanding */
    unsigned live;            /* rc -EAGAIN or -EINPROGRESS */
    unsigned awaiting;
    unsigned next;   /* where the search for a free record starts */
    uint64_t seq;    /* the next id's sequence number */
    unsigned checks; /* am__calls_check runs so far: their marks */
    unsigned starts; /* threads waiting in am_call_start for a record or room */
    int kick;        /* a call ended under the lock: wake the sleepers */
    AO_t ended;      /* calls ended so far; read without the lock */
    AO_t late;       /* late replies dropped; read without the lock */
    uint64_t *held;  /* by destination: the cost of its awaiting calls' rooms */
    unsigned held_n; /* grown as calls to higher indexes need room */
    uint64_t bound;  /* the most one destination's rooms may cost: half the heap */
};

/* A call's reply the caller's queue had no room for, kept for later. */
struct am_owed {
    struct am_owed *next;
    unsigned dest;
    unsigned long serial; /* the caller's peer serial: only it gets the reply */
    struct am_msg m;
    uint32_t args[AM_MAX_ARGS];
};

/* calls_mu: a shared endpoint's struct am_calls (the file header). */
static void calls_lock(am_ep_t *ep)
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

static void calls_unlock(am_ep_t *ep)
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

static struct am_calls *calls_of(am_ep_t *ep)
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
    return calls_of(ep) ? 0 : -ENOMEM;
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

/* ---- records (under calls_mu) ----------------------------------------- */

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

/* What a room of `bytes` may take of the heap: its size rounded up to a
 * power of two (a class block's, at most). */
static uint64_t room_cost(uint64_t bytes)
{
    uint64_t c = 64;
    while (c < bytes)
        c *= 2;
    return c;
}

/* Charge record r's room of `bytes` to its destination: when got_room
 * allocates it (in the same hold of calls_mu as held_over's test, so two
 * threads cannot both pass the bound), or at rec_launch for a room a record
 * had cached; taken back once no reply can come (held_uncharge).  Under
 * calls_mu. */
static void held_charge(struct am_calls *c, struct am_call_rec *r, uint64_t bytes)
{
    if (r->held || r->dest >= c->held_n)
        return; /* charged already, or no count (memory was short) */
    r->held = room_cost(bytes);
    c->held[r->dest] += r->held;
}

static void held_uncharge(struct am_calls *c, struct am_call_rec *r)
{
    if (r->held)
        c->held[r->dest] -= r->held, r->held = 0;
}

/* Would a room of `bytes` more for a call to dest cost that destination
 * more than the bound (half the heap), beyond its first room?  So calls to a
 * hung server, timed out or not, never take the room that calls to other
 * servers need.  Makes dest's count if it has none (0 if memory is short). */
static int held_over(struct am_calls *c, unsigned dest, uint64_t bytes)
{
    if (dest >= c->held_n) {
        unsigned n = c->held_n ? c->held_n : 8;
        while (n <= dest)
            n *= 2;
        uint64_t *h = realloc(c->held, n * sizeof *h);
        if (!h)
            return 0;
        memset(h + c->held_n, 0, (n - c->held_n) * sizeof *h);
        c->held = h, c->held_n = n;
    }
    return c->held[dest] && c->held[dest] + room_cost(bytes) > c->bound;
}

/* A record neither the user, a reply nor its starter needs any more is free
 * again. */
static void rec_settle(struct am_call_rec *r)
{
    if (!r->user && !r->awaiting && !r->sending) {
        r->id = 0;
        r->res = NULL;
    }
}

/* End outstanding call r with rc (its result; the record stays the user's);
 * wake its waiters at unlock unless this thread is the only one. */
static void rec_end(struct am_calls *c, struct am_call_rec *r, int rc)
{
    r->rc = rc;
    c->live--;
    AO_store(&c->ended, c->ended + 1);
    if ((r->waiters && r->waiter != am__self()) || c->starts)
        c->kick = 1;
}

/* No reply to r can come any more: give its room back (its starter does,
 * while it sends). */
static void rec_unawait(am_ep_t *ep, struct am_calls *c, struct am_call_rec *r, int keep)
{
    r->awaiting = 0;
    c->awaiting--;
    held_uncharge(c, r);
    if (!r->sending)
        room_release(ep, r, keep);
    rec_settle(r);
    if (c->starts) /* a record or room came free */
        c->kick = 1;
}

/* The record of the user's id, or NULL (unknown, or its end collected). */
static struct am_call_rec *rec_find(struct am_calls *c, am_call_t id)
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
static struct am_call_rec *rec_take(struct am_calls *c, unsigned dest,
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

/* Free the rooms free records keep (the heap ran short). */
static void rooms_uncache(am_ep_t *ep, struct am_calls *c)
{
    for (unsigned i = 0; i < c->n; i++)
        if (c->rec[i]->id == 0)
            room_release(ep, c->rec[i], 0);
}

/* The state of the user's call id in record r: its rc (-EINPROGRESS while
 * outstanding), or -EINVAL once another thread collected it. */
static int rec_state(am_ep_t *ep, struct am_call_rec *r, am_call_t id)
{
    calls_lock(ep);
    int rc = r->id == id && r->user ? r->rc : -EINVAL;
    calls_unlock(ep);
    return rc;
}

/* ---- the caller ------------------------------------------------------- */

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
    calls_lock(ep);
    for (unsigned i = 0; i < c->n; i++) {
        struct am_call_rec *r = c->rec[i];
        if (r->awaiting && !dest_alive(ep, r->dest))
            r->gone = mark, dead = 1;
    }
    calls_unlock(ep);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    return dead;
}

int am__calls_check(am_ep_t *ep)
{
    struct am_calls *c = ep->calls;
    if (!c)
        return 0;
    calls_lock(ep);
    unsigned mark = c->awaiting ? (c->checks += 2) | 1 : 0; /* odd: never 0 */
    calls_unlock(ep);
    if (!mark)
        return 0;
    if (mark_gone(ep, c, mark))
        am__poll(ep); /* what it published before it died */
    calls_lock(ep);
    unsigned long ended = c->ended;
    int64_t now = am__now_ns();
    for (unsigned i = 0; i < c->n; i++) {
        struct am_call_rec *r = c->rec[i];
        int gone = r->awaiting && r->gone == mark; /* seen dead before our poll */
        if (gone && r->rc == -EINPROGRESS)
            rec_end(c, r, -EPIPE);
        else if (r->awaiting && r->rc == -EINPROGRESS && now >= r->deadline)
            rec_end(c, r, -ETIMEDOUT);
        if (gone)
            rec_unawait(ep, c, r, 0);
        if (r->gone == mark)
            r->gone = 0;
    }
    int n = (int)(c->ended - ended);
    calls_unlock(ep);
    return n;
}

int64_t am__calls_slice(am_ep_t *ep, int64_t now, int64_t ms)
{
    struct am_calls *c = ep->calls;
    if (!c)
        return ms;
    calls_lock(ep);
    if (!c->live) {
        calls_unlock(ep);
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
    calls_unlock(ep);
    return ms;
}

void am__calls_peer_gone(am_ep_t *ep, unsigned index)
{
    struct am_calls *c = ep->calls;
    if (!c && !ep->owed)
        return;
    calls_lock(ep);
    for (unsigned i = 0; c && i < c->n; i++) {
        struct am_call_rec *r = c->rec[i];
        if (r->awaiting && r->dest == index) {
            if (r->rc == -EINPROGRESS)
                rec_end(c, r, -EPIPE);
            rec_unawait(ep, c, r, 0);
        }
    }
    for (struct am_owed **o = &ep->owed; *o;)
        if ((*o)->dest == index) {
            struct am_owed *gone = *o;
            *o = gone->next;
            free(gone);
        } else
            o = &(*o)->next;
    calls_unlock(ep);
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

/* Match reply m, counted as from index `as`, to its call (under calls_mu):
 * 0; -EXDEV if the call it names went to another index (*dest); -EPROTO if
 * no call of ours awaits it. */
static int reply_match(am_ep_t *ep, struct am_calls *c, const struct am_packet *m,
                       unsigned as, unsigned *dest)
{
    uint32_t i = m->call & (AM_CALL_RECS_MAX - 1);
    struct am_call_rec *r = c && i < c->n ? c->rec[i] : NULL;
    if (!r || !r->awaiting || (uint32_t)r->id != m->call)
        return -EPROTO;
    if (r->dest != as)
        return *dest = r->dest, -EXDEV;
    if (r->rc == -EINPROGRESS)
        rec_end(c, r, fill(ep, r, m));
    else
        AO_store(&c->late, c->late + 1); /* cancelled or timed out: dropped, counted */
    rec_unawait(ep, c, r, 1);
    return 0;
}

/* Are peers a and b one endpoint, mapped at two indexes (its name in both,
 * both alive: a live endpoint's name is its own)?  Under peers_mu. */
static int same_endpoint(am_ep_t *ep, unsigned a, unsigned b)
{
    struct am_peer *pa = am__peer(ep, a), *pb = am__peer(ep, b);
    return pa && pb && !pa->dropped && !pb->dropped && strcmp(pa->name, pb->name) == 0 &&
           am__peer_alive(pa->view) && am__peer_alive(pb->view);
}

static int reply_match_locked(am_ep_t *ep, const struct am_packet *m, unsigned as,
                              unsigned *dest)
{
    struct am_calls *c = ep->calls;
    if (c)
        calls_lock(ep);
    int rc = reply_match(ep, c, m, as, dest);
    if (c)
        calls_unlock(ep);
    return rc;
}

/* A reply is its call's, matched by the call's id, whichever index of ours
 * its server is mapped at: one that came from another index than the call
 * went to is taken if both are the same endpoint (peers_mu, then calls_mu:
 * the lock order). */
void am__call_reply_in(am_ep_t *ep, const struct am_packet *m, unsigned source)
{
    unsigned dest = source;
    int rc = reply_match_locked(ep, m, source, &dest);
    if (rc == -EXDEV) {
        am__mt_lock(&ep->mt, &ep->mt.peers_mu);
        int same = same_endpoint(ep, source, dest);
        am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
        rc = same ? reply_match_locked(ep, m, dest, &dest) : -EPROTO;
    }
    if (rc < 0)
        am__report_bad(ep, "a reply to no call of ours");
}

/* Waits of am_call_start: for a record, then for room in our reply heap. */
struct start_ctx {
    struct am_calls *c;
    struct am_call_rec *r;
    size_t want; /* room bytes */
    unsigned dest;
    struct am_result *res;
    int64_t deadline;
    int now; /* am_call_try: never wait (-EAGAIN instead) */
};

static int got_record(am_ep_t *ep, int n, void *ctx)
{
    struct start_ctx *s = ctx;
    calls_lock(ep);
    s->r = rec_take(s->c, s->dest, s->res, s->deadline);
    calls_unlock(ep);
    return s->r != NULL;
}

/* A block of `want` bytes in our reply heap for record r (taken: its
 * starter's), freeing what free records cache if the heap runs short. */
static int got_room(am_ep_t *ep, int n, void *ctx)
{
    struct start_ctx *s = ctx;
    uint64_t off;
    calls_lock(ep);
    int over = held_over(s->c, s->dest, s->want);
    if (!over)
        held_charge(s->c, s->r, s->want); /* taken back below if no room */
    calls_unlock(ep);
    if (over)
        return 0; /* until a call to dest ends with no reply to come */
    int rc = am_heap_alloc(reply_heap(ep), s->want, AM_OWN_WHO, &off);
    if (rc == -ENOMEM) {
        calls_lock(ep);
        rooms_uncache(ep, s->c);
        calls_unlock(ep);
        rc = am_heap_alloc(reply_heap(ep), s->want, AM_OWN_WHO, &off);
    }
    if (rc == -ENOMEM) {
        calls_lock(ep);
        held_uncharge(s->c, s->r);
        calls_unlock(ep);
        return 0;
    }
    if (rc == 0 && (off % 64 != 0 || off / 64 > UINT32_MAX)) {
        am_heap_free(reply_heap(ep), off, AM_OWN_WHO);
        rc = -EPROTO; /* a room the packet's field cannot name */
    }
    calls_lock(ep);
    s->r->block = rc == 0 ? off : 0;
    if (rc != 0)
        held_uncharge(s->c, s->r);
    calls_unlock(ep);
    return rc == 0 ? 1 : rc;
}

/* am__wait_for(got), counted in c->starts: whoever frees a record or room
 * meanwhile wakes us. */
static int start_wait(am_ep_t *ep, struct am_calls *c, struct start_ctx *s,
                      am_wait_done_fn got)
{
    calls_lock(ep);
    c->starts++;
    calls_unlock(ep);
    int rc = am__wait_for(ep, s->deadline, got, s);
    calls_lock(ep);
    c->starts--;
    calls_unlock(ep);
    return rc;
}

/* Make taken record r's room take cap bytes of data: keep the one it has if
 * large enough.  0, -ETIMEDOUT, -EINTR, -EPROTO. */
static int room_get(am_ep_t *ep, struct start_ctx *s, size_t cap)
{
    struct am_call_rec *r = s->r;
    calls_lock(ep);
    int fits = r->block && r->cap >= cap;
    if (!fits)
        room_release(ep, r, 0);
    calls_unlock(ep);
    if (fits || cap == 0)
        return 0;
    s->want = AM_CALL_ROOM_HEAD + cap;
    int rc = got_room(ep, 0, s);
    if (rc == 0)
        rc = s->now ? -EAGAIN : start_wait(ep, s->c, s, got_room);
    if (rc == 1) {
        calls_lock(ep);
        r->cap = (uint32_t)cap;
        calls_unlock(ep);
    }
    return rc == 1 ? 0 : rc == 0 ? -ETIMEDOUT : rc;
}

/* The most reply data a room of ours takes: long_max, or what the heap serves. */
static size_t cap_max(am_ep_t *ep)
{
    size_t most = am_heap_max_alloc(reply_heap(ep)) - AM_CALL_ROOM_HEAD;
    return ep->own.long_max < most ? ep->own.long_max : most;
}

/* What the request of a call names: a private copy of its record's fields,
 * made under the lock (the send reads no record). */
struct call_wire {
    uint32_t call;
    uint64_t block;
    uint32_t cap;
    unsigned dest;
    int64_t deadline;
    int now; /* am_call_try's: the send never waits for room (-EAGAIN) */
};

/* Send the request of call w: the kind its length takes. */
static int send_request(am_ep_t *ep, const struct call_wire *w, unsigned handler,
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
                       w->call,
                       (uint32_t)(w->block / 64),
                       0};
    if (w->block) {
        struct am_call_room *head =
            am_heap_data(reply_heap(ep), w->block, AM_CALL_ROOM_HEAD, AM_OWN_WHO);
        head->call = m.call; /* published by the request's release */
        head->cap = w->cap;
    }
    struct am_send_limit outer = am__send_limit;
    am__send_limit =
        w->now ? (struct am_send_limit){AM_SEND_NOWAIT, 0, 0}
               : (struct am_send_limit){w->deadline == INT64_MAX ? AM_SEND_FOREVER
                                                                 : AM_SEND_DEADLINE,
                                        0, w->deadline};
    int rc = am__send(ep, w->dest, AM_REQUEST, &m);
    am__send_limit = outer;
    return rc;
}

/* Taken record r becomes outstanding, sending (its reply may come as soon as
 * the request is published, on any thread); its wire fields. */
static struct call_wire rec_launch(am_ep_t *ep, struct am_calls *c, struct am_call_rec *r)
{
    calls_lock(ep);
    r->rc = -EINPROGRESS, r->user = 1, r->awaiting = 1, r->sending = 1;
    c->awaiting++;
    if (r->block)
        held_charge(c, r, AM_CALL_ROOM_HEAD + r->cap);
    struct call_wire w = {(uint32_t)r->id, r->block, r->cap, r->dest, r->deadline, 0};
    calls_unlock(ep);
    return w;
}

/* r's request went (sent: 0) or not (an error): end its sending.  A request
 * never sent gets no reply: its record is free again. */
static void rec_sent(am_ep_t *ep, struct am_calls *c, struct am_call_rec *r, int sent)
{
    calls_lock(ep);
    r->sending = 0;
    if (sent < 0) {
        if (r->rc == -EINPROGRESS || r->rc == -EAGAIN)
            c->live--; /* never outstanding: not counted as ended */
        if (r->awaiting)
            r->awaiting = 0, c->awaiting--, held_uncharge(c, r);
        r->user = 0;
    }
    if (!r->awaiting)
        room_release(ep, r, 1); /* deferred while sending (rec_unawait) */
    rec_settle(r);
    calls_unlock(ep);
}

static int call_start(am_ep_t *ep, struct am_calls *c, struct start_ctx *s,
                      unsigned handler, const uint32_t *args, int nargs, const void *data,
                      size_t len, am_call_t *id)
{
    int rc = got_record(ep, 0, s) ? 1 : s->now ? -EAGAIN : start_wait(ep, c, s, got_record);
    if (rc != 1)
        return rc == 0 ? -ETIMEDOUT : rc;
    struct am_result *res = s->res;
    size_t cap = res->cap < cap_max(ep) ? res->cap : cap_max(ep);
    res->len = 0, res->nargs = 0;
    if ((rc = room_get(ep, s, cap)) < 0) {
        rec_sent(ep, c, s->r, rc);
        return rc;
    }
    am__hook(AM_HOOK_CALL_ROOMED);
    struct call_wire w = rec_launch(ep, c, s->r);
    w.now = s->now;
    rc = send_request(ep, &w, handler, args, nargs, data, len);
    rec_sent(ep, c, s->r, rc);
    if (rc == 0)
        *id = s->r->id; /* the user's from now: no other thread frees it */
    return rc;
}

/* Count a shared endpoint's call in progress (am_ep_destroy's -EBUSY). */
static int calls_enter(am_ep_t *ep)
{
    int shared = ep->mt.shared;
    if (shared)
        am__mt_enter(ep);
    return shared;
}

static void calls_leave(am_ep_t *ep, int shared)
{
    if (shared)
        am__mt_leave(ep);
}

/* am_call_start and am_call_try: `now` says never wait. */
static int start(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                 int nargs, const void *data, size_t len, struct am_result *res,
                 int timeout_ms, am_call_t *id, int now)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (!res || !id || handler >= AM_MAX_HANDLERS || dest >= AM_MAX_PEERS ||
        (len && !data) || (res->cap && !res->data))
        return -EINVAL; /* dest: no index is higher (held_over's table) */
    if (am__in_handler(ep))
        return -EDEADLK;
    if (ep->net && am__net_remote(ep->net, dest))
        return -EOPNOTSUPP;            /* calls go to endpoints of this node */
    struct am_calls *c = calls_of(ep); /* a shared endpoint's is made (am_ep_share) */
    if (!c)
        return -ENOMEM;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : am__now_ns() + timeout_ms * 1000000LL;
    struct start_ctx s = {c, NULL, 0, dest, res, deadline, now};
    int shared = calls_enter(ep);
    rc = call_start(ep, c, &s, handler, args, nargs, data, len, id);
    calls_leave(ep, shared);
    return rc;
}

int am_call_start(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                  int nargs, const void *data, size_t len, struct am_result *res,
                  int timeout_ms, am_call_t *id)
{
    return start(ep, dest, handler, args, nargs, data, len, res, timeout_ms, id, 0);
}

int am_call_try(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                int nargs, const void *data, size_t len, struct am_result *res,
                int timeout_ms, am_call_t *id)
{
    return start(ep, dest, handler, args, nargs, data, len, res, timeout_ms, id, 1);
}

/* Collect the end of the user's call id in r: its result, and the id is the
 * user's no more.  -EINPROGRESS if it has not ended, -EINVAL if another
 * thread collected it. */
static int collect(am_ep_t *ep, struct am_call_rec *r, am_call_t id)
{
    calls_lock(ep);
    int rc = r->id == id && r->user ? r->rc : -EINVAL;
    if (rc != -EINVAL && rc != -EINPROGRESS) {
        r->user = 0;
        rec_settle(r);
    }
    calls_unlock(ep);
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
    calls_lock(ep);
    *r = rec_find(ep->calls, id);
    calls_unlock(ep);
    return *r ? 0 : -EINVAL;
}

/* One look at the user's call id in r without sleeping: its destination's
 * lifeline (before the poll: a reply it sent before dying is taken), a poll,
 * its deadline. */
static void look(am_ep_t *ep, struct am_call_rec *r, am_call_t id)
{
    struct am_calls *c = ep->calls;
    calls_lock(ep);
    unsigned dest = r->dest;
    calls_unlock(ep);
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    int alive = dest_alive(ep, dest);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    am__poll(ep);
    calls_lock(ep);
    if (r->id == id && r->rc == -EINPROGRESS && !alive) {
        rec_end(c, r, -EPIPE);
        rec_unawait(ep, c, r, 0);
    } else if (r->id == id && r->rc == -EINPROGRESS && r->deadline != INT64_MAX &&
               am__now_ns() >= r->deadline)
        rec_end(c, r, -ETIMEDOUT);
    calls_unlock(ep);
}

int am_call_test(am_ep_t *ep, am_call_t id)
{
    struct am_call_rec *r;
    int rc = rec_of(ep, id, 1, &r);
    if (rc)
        return rc;
    int shared = calls_enter(ep);
    if (rec_state(ep, r, id) == -EINPROGRESS)
        look(ep, r, id);
    rc = collect(ep, r, id);
    calls_leave(ep, shared);
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
    return rec_state(ep, e->r, e->id) != -EINPROGRESS;
}

/* This thread starts (d 1) or stops (d -1) waiting for r's call: whoever
 * else ends it meanwhile wakes us (rec_end). */
static void waiting(am_ep_t *ep, struct am_call_rec *r, int d)
{
    calls_lock(ep);
    r->waiters += (unsigned)d;
    r->waiter = d > 0 && r->waiters == 1 ? am__self() : NULL;
    calls_unlock(ep);
}

static int call_wait(am_ep_t *ep, struct am_call_rec *r, am_call_t id, int timeout_ms)
{
    if (rec_state(ep, r, id) != -EINPROGRESS)
        return collect(ep, r, id);
    int64_t until = timeout_ms < 0 ? INT64_MAX : am__now_ns() + timeout_ms * 1000000LL;
    struct ended_ctx e = {r, id};
    waiting(ep, r, 1);
    int rc = am__wait_wakeable(ep, until, call_ended, &e);
    waiting(ep, r, -1);
    if (rc == 0 && rec_state(ep, r, id) == -EINPROGRESS)
        look(ep, r, id);
    if (rc < 0 && rec_state(ep, r, id) == -EINPROGRESS)
        return rc; /* -EINTR (a signal, am_ep_wake): the call goes on */
    return collect(ep, r, id);
}

int am_call_wait(am_ep_t *ep, am_call_t id, int timeout_ms)
{
    struct am_call_rec *r;
    int rc = rec_of(ep, id, 1, &r);
    if (rc)
        return rc;
    int shared = calls_enter(ep);
    rc = call_wait(ep, r, id, timeout_ms);
    calls_leave(ep, shared);
    return rc;
}

int am_call_cancel(am_ep_t *ep, am_call_t id)
{
    struct am_call_rec *r;
    int rc = rec_of(ep, id, 0, &r);
    if (rc)
        return rc;
    calls_lock(ep);
    if (r->id == id && r->rc == -EINPROGRESS)
        rec_end(ep->calls, r, -ECANCELED);
    calls_unlock(ep);
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

unsigned long am_ep_late_replies(const am_ep_t *ep)
{
    return am__ep_ok(ep) && ep->calls ? AO_load(&ep->calls->late) : 0;
}

/* ---- the server ------------------------------------------------------- */

/* Write a reply's len bytes of data into the room named by tok in the
 * caller's view v: 0 or -EMSGSIZE (no room, or too small).  The room's head
 * is read once, into a private copy. */
static int room_fill(struct am_seg_view *v, const am_token_t *tok, const void *data,
                     size_t len)
{
    struct am_heap_view *h = &v->q[AM_REPLY].heap;
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

/* The serial of the peer at index `source` now (peers.c: unique in the
 * endpoint), the caller a handler answers; AM_NO_SERIAL if there is none,
 * which no peer has (a reply then finds none: -EPIPE). */
#define AM_NO_SERIAL (~0ul)
static unsigned long caller_serial(am_ep_t *ep, unsigned source)
{
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    struct am_peer *p = am__peer(ep, source);
    unsigned long serial = p && !p->dropped ? p->serial : AM_NO_SERIAL;
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    return serial;
}

/* room_fill into the caller of tok, the peer of that serial only (a new peer
 * at its index is not it), holding it meanwhile (a shared endpoint's other
 * threads may drop it: peers.h): 0, -EMSGSIZE, -EPIPE (the caller has
 * gone). */
static int room_write(am_token_t *tok, unsigned long serial, const void *data, size_t len)
{
    am_ep_t *ep = tok->ep;
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    struct am_peer *p = am__peer(ep, tok->source);
    int alive = p && !p->dropped && p->serial == serial && am__peer_alive(p->view);
    if (alive)
        ep->peer_holds++;
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    if (!alive)
        return -EPIPE;
    int rc = room_fill(p->view, tok, data, len);
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    am__peers_unhold(ep);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    return rc;
}

/* Place a call's short reply in dest's reply queue without waiting, if the
 * peer there is still the one of that serial: 0, -EAGAIN (no room now),
 * -EPIPE. */
static int place(am_ep_t *ep, unsigned dest, unsigned long serial, struct am_msg *m)
{
    struct am_send_limit outer = am__send_limit;
    am__send_limit = (struct am_send_limit){AM_SEND_NOWAIT, 0, 0};
    int shared = calls_enter(ep);
    int rc = am__send_held(ep, dest, serial, AM_REPLY, m);
    calls_leave(ep, shared);
    am__send_limit = outer;
    return rc;
}

/* Send tok's caller (the peer of that serial) the reply m (AM_CALL_REPLY),
 * now or, if there is no room now, later (kept in ep->owed). */
static int owe(am_token_t *tok, unsigned long serial, struct am_msg *m)
{
    am_ep_t *ep = tok->ep;
    int rc = place(ep, tok->source, serial, m);
    if (rc != -EAGAIN)
        return rc == -EPIPE ? -EPIPE : 0;
    struct am_owed *o = malloc(sizeof *o), **end = &ep->owed;
    if (!o)
        return 0; /* the caller's deadline ends the call */
    *o = (struct am_owed){NULL, tok->source, serial, *m, {0}};
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
        AM_CALL_REPLY, (unsigned)-err, args, nargs, NULL, len, 0, tok->call, 0, 0};
}

int am__call_reply(am_token_t *tok, unsigned long serial, const struct am_msg *m)
{
    if (m->nargs < 0 || (m->nargs && !m->args))
        return -EINVAL;
    if (m->nargs > AM_MAX_ARGS || m->len > AM_PACKET_LEN_MAX ||
        (m->kind == AM_BULK && m->len > AM_BULK_BYTES))
        return -EMSGSIZE;
    if (!serial) /* in its handler: its sender's at delivery, if known */
        serial = tok->serial ? tok->serial : caller_serial(tok->ep, tok->source);
    size_t len = m->kind == AM_SHORT ? 0 : m->len;
    int rc = len ? room_write(tok, serial, m->data, len) : 0;
    if (rc == -EPIPE)
        return rc;
    am__hook(AM_HOOK_CALL_WRITTEN);
    tok->replied = 1;
    struct am_msg r = reply_msg(tok, rc, m->args, rc ? 0 : m->nargs, rc ? 0 : len);
    int sent = owe(tok, serial, &r);
    return rc < 0 ? rc : sent;
}

void am__call_error(am_token_t *tok, int err)
{
    struct am_msg r = reply_msg(tok, err, NULL, 0, 0);
    tok->replied = 1;
    owe(tok, tok->serial ? tok->serial : caller_serial(tok->ep, tok->source), &r);
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
        int rc = cur->dest == full ? -EAGAIN : place(ep, cur->dest, cur->serial, &cur->m);
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
