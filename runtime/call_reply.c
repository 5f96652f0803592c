/*
 * call_reply.c - the reply paths of calls.  The caller's: a reply queue's
 * packet that names a call is matched to it by its id (whichever index of
 * ours its server is mapped at), fills its result (from the packet's payload
 * area, or from the call's room), or is counted late.  The server's: a
 * handler's am_reply* of a call sends data of at most AM_MEDIUM_BYTES inline
 * in the reply's packet (a medium one), or writes longer data straight into
 * the caller's room; then places the reply without waiting, or keeps it
 * (struct am_owed, an inline reply's data with it) and places it on later
 * polls; the runtime's own
 * replies (no such handler, no reply) go the same way.  The design is in
 * call.c's file header.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "call_records.h"
#include "deliver.h"
#include "internal.h"
#include "peers.h"
#include "send.h"
#include "senders.h"

/* A reply's status: 0, or the error the server's runtime sent. */
static int status_of(uint16_t s)
{
    return s == 0 ? 0 : s == ENOENT ? -ENOENT : s == EMSGSIZE ? -EMSGSIZE : -EPROTO;
}

/* Fill r's result from reply m: its args, and its data, inline (the medium
 * packet's payload area) or from r's room.  Lengths are the private copy's,
 * checked against the call's own cap. */
static int fill(am_ep_t *ep, struct am_call_rec *r, const struct am_packet *m,
                const unsigned char *inl)
{
    int rc = status_of(m->handler);
    if (rc == 0 && m->bulk_len > r->want)
        rc = -EMSGSIZE;
    const unsigned char *d = inl;
    if (rc == 0 && m->bulk_len && !d) {
        d = r->roomed ? am_heap_data(am__call_heap(ep), r->block,
                                     AM_CALL_ROOM_HEAD + m->bulk_len, AM_OWN_WHO)
                      : NULL;
        if (!d)
            rc = -EPROTO; /* a room's reply to a call without one */
        else
            d += AM_CALL_ROOM_HEAD;
    }
    if (rc < 0)
        return rc;
    struct am_result *res = r->res;
    if (m->bulk_len)
        memcpy(res->data, d, m->bulk_len);
    res->len = m->bulk_len;
    res->nargs = m->nargs;
    memcpy(res->args, m->args, (size_t)m->nargs * sizeof *m->args);
    return 0;
}

/* Match reply m (its inline data: inl), counted as from index `as`, to its
 * call (under calls_mu): 0; -EXDEV if the call it names went to another
 * index (*dest); -EPROTO if no call of ours awaits it. */
static int reply_match(am_ep_t *ep, struct am_calls *c, const struct am_packet *m,
                       const unsigned char *inl, unsigned as, unsigned *dest)
{
    uint32_t i = m->call & (AM_CALL_RECS_MAX - 1);
    struct am_call_rec *r = c && i < c->n ? c->rec[i] : NULL;
    if (!r || !r->awaiting || (uint32_t)r->id != m->call)
        return -EPROTO;
    if (r->dest != as)
        return *dest = r->dest, -EXDEV;
    if (r->rc == -EINPROGRESS)
        am__call_rec_end(c, r, fill(ep, r, m, inl));
    else
        AO_store(&c->late, c->late + 1); /* cancelled or timed out: dropped, counted */
    am__call_rec_unawait(ep, c, r, 1);
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

static int reply_match_locked(am_ep_t *ep, const struct am_packet *m,
                              const unsigned char *inl, unsigned as, unsigned *dest)
{
    struct am_calls *c = ep->calls;
    if (c)
        am__calls_lock(ep);
    int rc = reply_match(ep, c, m, inl, as, dest);
    if (c)
        am__calls_unlock(ep);
    return rc;
}

/* A reply is its call's, matched by the call's id, whichever index of ours
 * its server is mapped at: one that came from another index than the call
 * went to is taken if both are the same endpoint (peers_mu, then calls_mu:
 * the lock order). */
void am__call_reply_in(am_ep_t *ep, const struct am_packet *m, unsigned source,
                       const void *data)
{
    unsigned dest = source;
    int rc = reply_match_locked(ep, m, data, source, &dest);
    if (rc == -EXDEV) {
        am__mt_lock(&ep->mt, &ep->mt.peers_mu);
        int same = same_endpoint(ep, source, dest);
        am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
        rc = same ? reply_match_locked(ep, m, data, dest, &dest) : -EPROTO;
    }
    if (rc < 0)
        am__report_bad(ep, "a reply to no call of ours");
}

unsigned long am_ep_late_replies(const am_ep_t *ep)
{
    return am__ep_ok(ep) && ep->calls ? AO_load(&ep->calls->late) : 0;
}

/* The most reply data tok's call takes inline: the cap its request carries
 * (AM_CALL_INLINE: it has no room), or, for a call with a room, all an
 * inline reply holds (call.c gives rooms only to larger caps; the caller
 * checks a reply against its own record of its cap anyway); 0: cap 0. */
static size_t inline_cap(const am_token_t *tok)
{
    if (!(tok->room & AM_CALL_INLINE))
        return tok->room ? AM_MEDIUM_BYTES : 0;
    uint32_t cap = tok->room & ~AM_CALL_INLINE;
    return cap < AM_MEDIUM_BYTES ? cap : AM_MEDIUM_BYTES;
}

/* Write a reply's len bytes of data into the room named by tok in the
 * caller's view v: 0 or -EMSGSIZE (no room, or too small).  The room's head
 * is read once, into a private copy. */
static int room_fill(struct am_seg_view *v, const am_token_t *tok, const void *data,
                     size_t len)
{
    struct am_heap_view *h = &v->q[AM_REPLY].heap;
    uint64_t off = (uint64_t)tok->room * 64;
    const struct am_call_room *head =
        tok->room && !(tok->room & AM_CALL_INLINE)
            ? am_heap_data(h, off, AM_CALL_ROOM_HEAD, AM_OWN_WHO)
            : NULL;
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
    int shared = am__calls_enter(ep);
    int rc = am__send_held(ep, dest, serial, AM_REPLY, m);
    am__calls_leave(ep, shared);
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
    size_t inl = m->kind == AM_MEDIUM ? m->len : 0; /* <= AM_MEDIUM_BYTES */
    struct am_owed *o = malloc(sizeof *o + inl), **end = &ep->owed;
    if (!o)
        return 0; /* the caller's deadline ends the call */
    o->next = NULL, o->dest = tok->source, o->serial = serial, o->m = *m;
    memcpy(o->args, m->args, (size_t)m->nargs * sizeof *m->args);
    o->m.args = o->args;
    if (inl)
        memcpy(o->data, m->data, inl);
    o->m.data = inl ? o->data : NULL;
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
    int inl = len <= inline_cap(tok); /* travels in the reply's packet */
    int rc = inl ? 0 : room_write(tok, serial, m->data, len);
    if (rc == -EPIPE)
        return rc;
    am__hook(AM_HOOK_CALL_WRITTEN);
    tok->replied = 1;
    struct am_msg r = reply_msg(tok, rc, m->args, rc ? 0 : m->nargs, rc ? 0 : len);
    if (rc == 0 && inl && len)
        r.kind = AM_MEDIUM, r.data = m->data; /* in its slot's payload area */
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
