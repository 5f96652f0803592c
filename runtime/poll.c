/*
 * poll.c - delivery: the receiver's half of the protocol (see claim.c).
 *
 * Only the endpoint's owner polls.  For the packet at head (slot head % Q, lap
 * head / Q) it acquire-loads the state; on READY or READY_BULK it advances head,
 * validates a private copy of the packet, runs the handler, then release-stores
 * the bulk block and the packet FREE for the next lap.  One poll drains every
 * ready packet of both queues (the paper's gap reduction).
 *
 * Nothing read from shared memory is trusted: a packet whose handler id, argument
 * count, source, bulk block or length is wrong is counted, reported once on
 * stderr and freed; a head slot whose state no sender could have written is
 * counted and reset to FREE for its lap.  The receiver never indexes memory with
 * an unchecked value.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

void am__report_bad(am_ep_t *ep, const char *why)
{
    AO_fetch_and_add1(&ep->own.hdr->bad_packets);
    if (ep->bad_packets++ == 0)
        fprintf(stderr, "shmam: endpoint %s: dropped a corrupt packet (%s); "
                        "further ones are only counted\n", ep->name, why);
}

/* Resolve sender entry `sender` of our table to a local peer index, mapping the
 * sender as a new peer on first contact.  The acquire pairs with the release of
 * READY in senders.c.  -1 if the entry is not a registered sender. */
int am__source_index(am_ep_t *ep, unsigned sender, unsigned *index)
{
    const struct am_sender *e = &ep->own.senders[sender];
    AO_t st = AO_load_acquire(&e->state);
    if (st != AM_SENDER_READY && st != AM_SENDER_CLOSED)
        return -1;
    struct am_source *s = &ep->sources[sender];
    if (s->pid == e->pid && s->pid != 0) {
        *index = s->index;
        return 0;
    }
    char name[AM_NAME_MAX];
    memcpy(name, e->name, sizeof name);
    name[AM_NAME_MAX - 1] = '\0';
    unsigned i;
    for (i = 0; i < ep->peers_n; i++)
        if (ep->peers[i] && strcmp(ep->peers[i]->name, name) == 0)
            break;
    /* A peer of that name owned by another process has restarted: map it anew,
     * at the same index. */
    if (i < ep->peers_n && ep->peers[i]->view->hdr->owner_pid != e->pid)
        am__peer_drop(ep, i);
    if (i == ep->peers_n || !ep->peers[i])
        i = am__peer_add(ep, i, name) == 0 ? i : AM_SOURCE_UNKNOWN;
    *s = (struct am_source){.pid = e->pid, .index = i};
    *index = i;
    return 0;
}

/* Validate the copy `m` of a packet in state `s` of queue `q`; returns NULL or
 * why it is bad.  Sets *bulk to the block to free (NULL if none is ours). */
static const char *check(am_ep_t *ep, struct am_queue_view *q, const struct am_packet *m,
                         AO_t s, unsigned *source, struct am_bulk_state **bulk)
{
    *bulk = NULL;
    if (AM_STATE_TYPE(s) == AM_READY_BULK) {
        struct am_bulk_state *b = &q->bulk_state[m->bulk_ticket & (q->bulk_n - 1)];
        if (AO_load(&b->state) != AM_STATE(m->bulk_ticket / q->bulk_n, AM_CLAIMED))
            return "bulk block not claimed for this message";
        *bulk = b;
        if (m->bulk_len > AM_BULK_BYTES)
            return "bulk length over 8192";
    }
    if (m->nargs > AM_MAX_ARGS)
        return "more than 8 arguments";
    if (m->handler >= AM_HANDLER_TOTAL ||
        (!ep->handlers[m->handler] && !(ep->holding && m->handler < AM_MAX_HANDLERS)))
        return "no such handler";
    if (m->source >= ep->own.max_senders || am__source_index(ep, m->source, source) < 0)
        return "unknown source";
    return NULL;
}

/* Run the message in packet `p` (state `s`) and free it for the next lap. */
static void deliver(am_ep_t *ep, enum am_qid qid, struct am_packet *p, AO_t s)
{
    struct am_queue_view *q = &ep->own.q[qid];
    struct am_packet m;
    struct am_bulk_state *bulk;
    memcpy(&m, p, sizeof m);
    am_token_t tok = {.ep = ep, .qid = (uint8_t)qid};
    const char *why = check(ep, q, &m, s, &tok.source, &bulk);
    void *data = bulk ? q->bulk + (m.bulk_ticket & (q->bulk_n - 1)) * AM_BULK_BYTES : NULL;
    size_t len = bulk ? m.bulk_len : 0;
    if (why)
        am__report_bad(ep, why);
    else if (!ep->handlers[m.handler]) {
        if (am__pending_hold(ep, &tok, &m, data, len) < 0)
            am__report_bad(ep, "no memory to hold a message during am_init");
    }
    else {
        ep->in_handler++;
        ep->handlers[m.handler](&tok, m.args, m.nargs, data, len);
        ep->in_handler--;
    }
    /* Both pair with the next sender's claim (CAS, or acquire under the lock):
     * our reads of this message happen before its writes of the next one. */
    if (bulk)
        AO_store_release(&bulk->state, AM_STATE(m.bulk_ticket / q->bulk_n + 1, AM_FREE));
    AO_store_release(&p->state, AM_STATE(AM_STATE_LAP(s) + 1, AM_FREE));
}

/* A head slot may legally be FREE or CLAIMED for the head's lap; any other value
 * was written by a broken or hostile peer.  Put it back to FREE for the lap, so
 * the sender holding that ticket can still claim it. */
static void repair(am_ep_t *ep, struct am_packet *p, AO_t s, AO_t lap)
{
    if (AM_STATE_LAP(s) == lap && AM_STATE_TYPE(s) <= AM_CLAIMED)
        return;
    if (AO_compare_and_swap_full(&p->state, s, AM_STATE(lap, AM_FREE)))
        am__report_bad(ep, "impossible packet state");
}

/* Deliver every ready message of one of our queues; returns how many. */
int am__drain(am_ep_t *ep, enum am_qid qid)
{
    struct am_queue_view *q = &ep->own.q[qid];
    int n = 0;
    for (;;) {
        uint64_t head = AO_load(&q->recv->head);
        struct am_packet *p = &q->packets[head & (q->packets_n - 1)];
        AO_t lap = head / q->packets_n;
        AO_t s = AO_load_acquire(&p->state); /* pairs with am__publish() */
        if (AM_STATE_LAP(s) != lap || AM_STATE_TYPE(s) < AM_READY) {
            repair(ep, p, s, lap);
            return n;
        }
        AO_store(&q->recv->head, head + 1);
        deliver(ep, qid, p, s);
        n++;
    }
}

int am_poll(am_ep_t *ep)
{
    if (!ep)
        return -EINVAL;
    int held = ep->pending && !ep->holding ? am__pending_run(ep) : 0;
    return held + am__drain(ep, AM_REPLY) + am__drain(ep, AM_REQUEST);
}
