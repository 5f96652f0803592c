/*
 * deliver.c - what both receivers' halves (mpsc_poll.c for the shared queues,
 * chan_poll.c for per-sender channels) do with a message once they hold a
 * private copy of its packet and have found its bulk data: check what else it
 * names (a long message's heap block or region bytes, its handler, argument
 * count and sender), run its handler or hold it during am_init, count it, and
 * give a heap block back.  Nothing here reads shared memory twice: every
 * address derives from the private copy and our own records.
 */
#include <errno.h>
#include <stdio.h>

#include "deliver.h"
#include "internal.h"
#include "pending.h"
#include "senders.h"

_Thread_local unsigned am__handlers_running;
_Thread_local struct am_token *am__tok_cur;
_Thread_local uint64_t am__tok_next;

void am__report_bad(am_ep_t *ep, const char *why)
{
    AO_fetch_and_add1(&ep->own.hdr->bad_packets);
    if (ep->bad_packets++ == 0)
        fprintf(stderr,
                "shmam: endpoint %s: dropped a corrupt packet (%s); "
                "further ones are only counted\n",
                ep->name, why);
}

int am__drained(am_ep_t *ep, int n)
{
    if (n) {
        AO_store(&ep->own.hdr->delivered, ep->delivered);
        AO_store(&ep->own.hdr->delivered_bulk, ep->delivered_bulk);
    }
    return n;
}

/* A READY packet's data when it is not bulk: none, a block of heap h that
 * claimant `who` allocated (AM_PKT_LONG), or bytes of our region bounded by
 * our own record of its size (AM_PKT_LONG_AT).  NULL or why it is bad. */
const char *am__payload_long(am_ep_t *ep, struct am_heap_view *h, const struct am_packet *m,
                             unsigned who, struct am_payload *pl)
{
    *pl = (struct am_payload){0};
    pl->heap = h;
    if (m->flags == AM_PKT_LONG) {
        if (!(pl->data = am_heap_data(h, m->bulk_ticket, m->bulk_len, who)))
            return "long message's heap block not allocated for it";
        pl->block = 1;
        pl->len = m->bulk_len;
    } else if (m->flags == AM_PKT_LONG_AT) {
        if (!ep->region.base || m->bulk_ticket > ep->region_bytes ||
            m->bulk_len > ep->region_bytes - m->bulk_ticket)
            return "long message outside the region"; /* or no region (fuzz: NULL + 0) */
        pl->data = (char *)ep->region.base + m->bulk_ticket;
        pl->len = m->bulk_len;
    } else if (m->flags != 0)
        return "unknown packet flags";
    return NULL;
}

const char *am__payload_medium(unsigned char *areas, uint32_t k, const struct am_packet *m,
                               struct am_payload *pl)
{
    *pl = (struct am_payload){0};
    if (m->bulk_len > AM_MEDIUM_BYTES)
        return "medium length over its slot's area";
    pl->data = areas + (size_t)k * AM_MEDIUM_BYTES;
    pl->len = m->bulk_len;
    pl->bulk = 1; /* a bulk message at the API: counted as one */
    pl->medium = 1;
    return NULL;
}

static const char no_handler[] = "no such handler";

static void run_source(am_ep_t *ep, enum am_qid qid, const struct am_packet *m,
                       unsigned source, unsigned long serial, const struct am_payload *pl,
                       const char *why);

/* The copy m's argument count and handler: NULL or why it is bad. */
static const char *check(am_ep_t *ep, const struct am_packet *m)
{
    if (m->nargs > AM_MAX_ARGS)
        return "more than 8 arguments";
    if (m->handler >= AM_HANDLER_TOTAL ||
        (!ep->handlers[m->handler] && !(ep->holding && m->handler < AM_MAX_HANDLERS)))
        return no_handler;
    return NULL;
}

void am__run(am_ep_t *ep, enum am_qid qid, const struct am_packet *m, unsigned who,
             const struct am_payload *pl, const char *why)
{
    unsigned source = AM_SOURCE_UNKNOWN;
    unsigned long serial = 0;
    am__mt_lock(&ep->mt, &ep->mt.peers_mu); /* learning may change peers[] */
    if (!why && am__source_index(ep, who, &source) < 0)
        why = "unknown source";
    if (qid == AM_REQUEST && source < ep->peers_n && ep->peers[source])
        serial = ep->peers[source]->serial; /* who a reply must reach */
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    run_source(ep, qid, m, source, serial, pl, why);
    /* Pairs with the next allocation of the block (heap.h): our reads of the
     * message happen before its next writer's. */
    if (pl->block && am_heap_free(pl->heap, m->bulk_ticket, who) != 0)
        am__report_bad(ep, "long message's heap block freed by another");
}

void am__run_from(am_ep_t *ep, enum am_qid qid, const struct am_packet *m, unsigned source,
                  const struct am_payload *pl, const char *why)
{
    run_source(ep, qid, m, source, 0, pl, why);
}

/* am__run_from, with the sender's peer serial (0: unknown) in the token. */
static void run_source(am_ep_t *ep, enum am_qid qid, const struct am_packet *m,
                       unsigned source, unsigned long serial, const struct am_payload *pl,
                       const char *why)
{
    am_token_t tok = {.ep = ep, .source = source, .serial = serial, .qid = (uint8_t)qid};
    if (__builtin_expect(m->call != 0, 0)) {
        if (qid == AM_REPLY) { /* a call's reply: to its struct am_result */
            if (!why && ((pl->data && !pl->medium) || m->nargs > AM_MAX_ARGS))
                why = "call reply with a payload not inline or too many arguments";
            if (why)
                am__report_bad(ep, why); /* a medium one's length was checked */
            else
                ep->delivered++, am__call_reply_in(ep, m, source, pl->data);
            return;
        }
        tok.call = m->call, tok.room = m->room;
    }
    if (!why)
        why = check(ep, m);
    if (!why)
        ep->delivered++, ep->delivered_bulk += pl->bulk;
    if (why == no_handler && tok.call)
        am__call_error(&tok, -ENOENT); /* the caller hears, we say nothing */
    else if (why)
        am__report_bad(ep, why);
    else if (!ep->handlers[m->handler]) {
        if (am__pending_hold(ep, &tok, m, pl->data, pl->len) < 0)
            am__report_bad(ep, "no memory to hold a message during am_init");
    } else
        am__call_handler(ep, ep->handlers[m->handler], &tok, m->args, m->nargs, pl->data,
                         pl->len);
}
