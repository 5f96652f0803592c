/*
 * send.c - requests and replies: claim a packet (claim.c), fill it, publish it.
 *
 * While a claim cannot complete (queue full, lock busy, slot not yet freed for
 * our lap) the sender backs off exponentially and polls its own endpoint: a
 * request polls both queues, which breaks the deadlock of endpoints sending to
 * each other with full queues; a reply polls only the reply queue, since reply
 * handlers never send.  Once spinning has clearly failed the backoff yields the
 * processor.  Every round checks that the destination still lives (two plain
 * loads: its state and its owner's lifeline), so a send to a receiver that died
 * fails with -EPIPE, the first one after the death as well as one already
 * waiting; a bulk sender waiting on a block that a dead sender holds asks the
 * receiver to free it.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "spin.h"

/* Is the owner of a peer segment still there to drain it?  Plain loads; any
 * process, any time. */
int am__peer_alive(const struct am_seg_view *v)
{
    return AO_load(&v->hdr->state) == AM_SEG_LIVE && !am__lifeline_gone(&v->hdr->owner_life);
}

#define AM_ORPHAN_EVERY 64 /* yields between looks for a dead sender's bulk block */

static int backoff(am_ep_t *ep, struct am_seg_view *dest, enum am_qid qid, int bulk,
                   struct spin *sp, unsigned *yields)
{
    if (qid == AM_REQUEST)
        am__poll(ep);
    else
        am__drain(ep, AM_REPLY);
    if (!am__peer_alive(dest))
        return -EPIPE;
    if (spin_wait(sp) && bulk && ++*yields % AM_ORPHAN_EVERY == 0)
        am__claim_orphans_ask(dest, qid);
    return 0;
}

/* Fill a claimed packet (and bulk block) and hand it to the receiver.  Only the
 * sender that completed claim `c` may call it, once. */
void am__publish(struct am_queue_view *q, const struct am_claim_state *c, unsigned handler,
                 const void *data, size_t len, const uint32_t *args, int nargs)
{
    struct am_packet *p = &q->packets[c->ticket & (q->packets_n - 1)];
    am__hook(AM_HOOK_FILLING);
    p->handler = (uint16_t)handler;
    p->nargs = (uint8_t)nargs;
    p->flags = 0;
    p->bulk_len = (uint32_t)len;
    if (nargs)
        memcpy(p->args, args, (size_t)nargs * sizeof *args);
    if (c->want_bulk) {
        unsigned char *b = q->bulk + (c->bulk_ticket & (q->bulk_n - 1)) * AM_BULK_BYTES;
        p->bulk_ticket = c->bulk_ticket;
        memcpy(b, data, len / 2);
        am__hook(AM_HOOK_BULK_HALF);
        memcpy(b + len / 2, (const unsigned char *)data + len / 2, len - len / 2);
    }
    /* Pairs with the receiver's acquire-load of the state in poll.c: everything
     * written above is visible once READY is. */
    AO_store_release(&p->state, AM_STATE(am_lap(c->ticket, q->packets_n), c->who,
                                         c->want_bulk ? AM_READY_BULK : AM_READY));
}

/* Wake the receiver if it sleeps in am_wait.  The full barrier orders our READY
 * store before the load of `sleeping`; am_wait stores `sleeping` and fences
 * before its last poll, so either it sees our packet or we see it asleep. */
static void wake_if_asleep(struct am_seg_shared *h)
{
    AO_nop_full();
    if (AO_int_load(&h->sleeping))
        am__wake(h);
}

static int check_args(unsigned handler, const void *data, size_t len,
                      const uint32_t *args, int nargs)
{
    if (handler >= AM_HANDLER_TOTAL || nargs < 0 || (nargs > 0 && !args) ||
        (len > 0 && !data))
        return -EINVAL;
    return nargs > AM_MAX_ARGS || len > AM_BULK_BYTES ? -EMSGSIZE : 0;
}

/* Send one message to peer `dest`'s queue `qid`; bulk if `data` is not NULL.
 * Called by the endpoint's owning thread only (endpoints are not thread-safe). */
int am__send(am_ep_t *ep, unsigned dest, enum am_qid qid, unsigned handler,
             const void *data, size_t len, const uint32_t *args, int nargs)
{
    int rc = check_args(handler, data, len, args, nargs);
    struct am_peer *peer = am__peer(ep, dest);
    if (rc < 0 || !peer)
        return rc < 0 ? rc : dest == AM_SOURCE_UNKNOWN ? -EPIPE : -EINVAL;
    struct am_seg_view *v = peer->view;
    if (!am__peer_alive(v))
        return -EPIPE;
    struct am_queue_view *q = &v->q[qid];
    struct am_claim_state c;
    struct spin sp = SPIN_INIT;
    unsigned yields = 0;
    am__claim_begin(&c, data != NULL, peer->who);
    while ((rc = am__claim_try(v, q, &c)) <= 0)
        if (rc < 0 || (rc = backoff(ep, v, qid, data != NULL, &sp, &yields)) < 0)
            return rc;
    am__publish(q, &c, handler, data, len, args, nargs);
    wake_if_asleep(v->shared);
    return 0;
}

int am_request(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
               int nargs)
{
    if (!am__ep_ok(ep) || handler >= AM_MAX_HANDLERS)
        return -EINVAL;
    if (ep->in_handler)
        return -EDEADLK;
    return am__send(ep, dest, AM_REQUEST, handler, NULL, 0, args, nargs);
}

int am_request_bulk(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs)
{
    if (!am__ep_ok(ep) || handler >= AM_MAX_HANDLERS || !data)
        return -EINVAL;
    if (ep->in_handler)
        return -EDEADLK;
    return am__send(ep, dest, AM_REQUEST, handler, data, len, args, nargs);
}

static int reply_check(am_token_t *tok, unsigned handler)
{
    if (!tok || !am__ep_ok(tok->ep) || handler >= AM_MAX_HANDLERS)
        return -EINVAL;
    if (tok->qid != AM_REQUEST)
        return -EDEADLK;
    return tok->replied ? -EALREADY : 0;
}

int am_reply(am_token_t *tok, unsigned handler, const uint32_t *args, int nargs)
{
    int rc = reply_check(tok, handler);
    if (rc == 0)
        rc = am__send(tok->ep, tok->source, AM_REPLY, handler, NULL, 0, args, nargs);
    if (rc == 0) /* not before: tok may be NULL */
        tok->replied = 1;
    return rc;
}

int am_reply_bulk(am_token_t *tok, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs)
{
    int rc = data ? reply_check(tok, handler) : -EINVAL;
    if (rc == 0)
        rc = am__send(tok->ep, tok->source, AM_REPLY, handler, data, len, args, nargs);
    if (rc == 0)
        tok->replied = 1;
    return rc;
}

unsigned am_token_source(const am_token_t *tok)
{
    return tok ? tok->source : AM_SOURCE_UNKNOWN;
}

am_ep_t *am_token_ep(const am_token_t *tok)
{
    return tok ? tok->ep : NULL;
}
