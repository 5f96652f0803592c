/*
 * send.c - requests and replies: claim a packet (claim.c), fill it, publish it.
 *
 * While a claim cannot complete (queue full, lock busy, slot not yet freed for
 * our lap) the sender backs off exponentially and polls its own endpoint: a
 * request polls both queues, which breaks the deadlock of endpoints sending to
 * each other with full queues; a reply polls only the reply queue, since reply
 * handlers never send.  Once spinning has clearly failed the backoff yields the
 * processor, and every AM_ALIVE_EVERY yields checks that the destination is
 * still alive (-EPIPE if not).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "internal.h"
#include "spin.h"

/* Is the owner of a peer segment still there to drain it? */
int am__peer_alive(const struct am_seg_view *v)
{
    const struct am_seg_header *h = v->hdr;
    if (AO_load(&h->state) != AM_SEG_LIVE)
        return 0;
    return kill((pid_t)h->owner_pid, 0) == 0 || errno != ESRCH;
}

#define AM_ALIVE_EVERY 64 /* yields between checks that the destination lives */

static int backoff(am_ep_t *ep, const struct am_seg_view *dest, enum am_qid qid,
                   struct spin *sp, unsigned *yields)
{
    if (qid == AM_REQUEST)
        am_poll(ep);
    else
        am__drain(ep, AM_REPLY);
    if (spin_wait(sp) && ++*yields % AM_ALIVE_EVERY == 0 && !am__peer_alive(dest))
        return -EPIPE;
    return 0;
}

/* Fill a claimed packet (and bulk block) and hand it to the receiver.  Only the
 * sender that completed claim `c` may call it, once. */
void am__publish(struct am_queue_view *q, const struct am_claim_state *c,
                    unsigned source, unsigned handler, const void *data, size_t len,
                    const uint32_t *args, int nargs)
{
    struct am_packet *p = &q->packets[c->ticket & (q->packets_n - 1)];
    p->handler = (uint16_t)handler;
    p->nargs = (uint8_t)nargs;
    p->flags = 0;
    p->source = (uint16_t)source;
    p->bulk_len = (uint32_t)len;
    if (nargs)
        memcpy(p->args, args, (size_t)nargs * sizeof *args);
    if (c->want_bulk) {
        p->bulk_ticket = c->bulk_ticket;
        memcpy(q->bulk + (c->bulk_ticket & (q->bulk_n - 1)) * AM_BULK_BYTES, data, len);
    }
    /* Pairs with the receiver's acquire-load of the state in poll.c: everything
     * written above is visible once READY is. */
    AO_store_release(&p->state, AM_STATE(c->ticket / q->packets_n,
                                         c->want_bulk ? AM_READY_BULK : AM_READY));
}

/* Wake the receiver if it sleeps in am_wait.  The full barrier orders our READY
 * store before the load of `sleeping`; am_wait stores `sleeping` and fences
 * before its last poll, so either it sees our packet or we see it asleep. */
static void wake_if_asleep(struct am_seg_header *h)
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
 * Called by the endpoint's owning process only (endpoints are not thread-safe). */
int am__send(am_ep_t *ep, unsigned dest, enum am_qid qid, unsigned handler,
             const void *data, size_t len, const uint32_t *args, int nargs)
{
    int rc = check_args(handler, data, len, args, nargs);
    struct am_peer *peer = am__peer(ep, dest);
    if (rc < 0 || !peer)
        return rc < 0 ? rc : dest == AM_SOURCE_UNKNOWN ? -EPIPE : -EINVAL;
    struct am_seg_view *v = peer->view;
    if (AO_load(&v->hdr->state) != AM_SEG_LIVE)
        return -EPIPE;
    struct am_queue_view *q = &v->q[qid];
    struct am_claim_state c;
    struct spin sp = SPIN_INIT;
    unsigned yields = 0;
    am__claim_begin(&c, data != NULL);
    while (!am__claim_try(v, q, &c, peer->sender_index))
        if ((rc = backoff(ep, v, qid, &sp, &yields)) < 0)
            return rc;
    am__publish(q, &c, peer->sender_index, handler, data, len, args, nargs);
    wake_if_asleep(v->hdr);
    return 0;
}

int am_request(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
               int nargs)
{
    if (!ep || handler >= AM_MAX_HANDLERS)
        return -EINVAL;
    if (ep->in_handler)
        return -EDEADLK;
    return am__send(ep, dest, AM_REQUEST, handler, NULL, 0, args, nargs);
}

int am_request_bulk(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs)
{
    if (!ep || handler >= AM_MAX_HANDLERS || !data)
        return -EINVAL;
    if (ep->in_handler)
        return -EDEADLK;
    return am__send(ep, dest, AM_REQUEST, handler, data, len, args, nargs);
}

static int reply_check(am_token_t *tok, unsigned handler)
{
    if (!tok || handler >= AM_MAX_HANDLERS)
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
    return tok->source;
}

am_ep_t *am_token_ep(const am_token_t *tok)
{
    return tok->ep;
}
