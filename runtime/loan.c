/*
 * loan.c - the copy-free send (GASNet-EX's negotiated payload, iceoryx2's
 * loan): am_request_prepare / am_reply_prepare lend the caller room in the
 * destination to write a message's data into, and the commit publishes it.
 *
 * Where the room is: up to AM_MAX_BULK bytes, the destination queue's next
 * bulk block (shared queue: claimed alone, the packet claimed at commit, so
 * a loan never holds up the queue for other senders; per-sender channel:
 * the channel's next block, taken at prepare, see below); more, a block of
 * its heap, as
 * a long message's.  A loan of up to AM_MAX_MEDIUM bytes takes a bulk block
 * too, though a send of that size travels in its slot (layout.h): lending
 * the slot's payload area would claim the shared queue's slot at prepare,
 * holding up the queue until commit, and a channel's next slot is taken by
 * any send the caller makes between prepare and commit.  A loan that cannot
 * be in place is a private buffer that the commit sends as bulk or long with
 * one copy: a shared endpoint's (its threads share the peers' queues), a
 * remote rank's, a call's reply.
 *
 * One loan per thread at a time (`loan`, thread-local: a fork child's copy
 * is of endpoints it does not own, which am__ep_use refuses).  While it
 * lasts the peer is held (ep->peer_holds: a poll meanwhile may learn that
 * it died and drop it, never unmap it, so the room stays writable) and, for
 * a bulk block of the shared queue, counted as a bulk claim in flight (the
 * receiver never frees it as idle).  Commit and cancel end the hold.  A
 * sender that dies holding a loan leaves what a send dying at that point
 * leaves: a claimed block of a dead claimant, or a heap block of a dead
 * sender, both taken back by the receiver (mpsc_poll.c, chan_poll.c, heap/).
 *
 * A channel's blocks go in ticket order, and the owner gives them back by
 * count, so a channel loan takes its block's ticket t at prepare (the
 * producer's count moves past it): bulk sends of this thread on that
 * channel before the commit take the blocks after it, not the lent one.
 * A commit with no bulk send since puts the count back and sends in place
 * (ticket t); after k such sends the owner has passed over ticket t (it
 * catches up at t + 1, chan_poll.c's bulk_payload) and the commit copies
 * the data into the block of ticket t + 1 + k, which for k < B (the
 * channel's blocks) was not reused meanwhile (the block of t is the next
 * one taken at t + B: k = B - 1 sends in place).  The send that would take
 * ticket t + B, the lent block, is refused (-EBUSY, peer->lent: chan_send.c),
 * and so, in a shared queue, is a bulk send that would wait for the block
 * the loan holds as a claim (mpsc_send.c): only the loan's commit or cancel
 * can free it, so waiting would be for ever.  A channel of one block cannot
 * lend it so (every send would be refused): its loans are a private buffer
 * that the commit copies into the block.
 */
#include <errno.h>
#include <stdlib.h>

#include "channel.h"
#include "internal.h"
#include "loan.h"
#include "mpsc.h"
#include "net.h"
#include "peers.h"
#include "send.h"
#include "senders.h"
#include "threads.h"

struct am_loan {
    am_ep_t *ep;          /* NULL: no loan on this thread */
    struct am_peer *peer; /* held; NULL: a private buffer */
    am_token_t *tok;      /* a reply's token, else NULL */
    unsigned dest;
    enum am_qid qid;
    enum am_kind kind; /* AM_BULK or AM_LONG */
    void *buf;
    size_t cap;
    uint64_t ticket; /* bulk: the queue's or channel's bulk ticket; long: heap offset */
    void *copy;      /* a private buffer of a loan with a peer (freed at its end) */
};
static _Thread_local struct am_loan loan;

static enum am_kind kind_of(size_t len)
{
    return len <= AM_MAX_BULK ? AM_BULK : AM_LONG;
}

/* A private buffer for a loan that cannot be in place. */
static int lend_copy(size_t len, void **buf)
{
    if (!(loan.buf = malloc(len ? len : 1)))
        return -ENOMEM;
    *buf = loan.buf;
    return 0;
}

/* Room in peer's queue qid, within a peer hold and the send limit. */
static int lend_room(am_ep_t *ep, struct am_peer *peer, void **buf)
{
    struct am_seg_view *v = peer->view;
    struct am_msg m = {.kind = loan.kind, .data = "", .len = loan.cap};
    int rc = am__check_msg(&m, v->long_max);
    if (rc == 0 && !am__peer_alive(v))
        rc = -EPIPE;
    if (rc < 0)
        return rc;
    if (loan.kind == AM_LONG)
        return am__heap_room(ep, peer, loan.qid, loan.cap, &loan.ticket, buf);
    if (v->queue != AM_QUEUE_MPSC && v->q[loan.qid].bulk_n < 2)
        return (rc = lend_copy(loan.cap, buf)) < 0 ? rc : (loan.copy = *buf, 0);
    if (v->queue == AM_QUEUE_MPSC)
        rc = am__mpsc_lend(ep, peer, loan.qid, &loan.ticket, buf);
    else if ((rc = am__chan_lend(ep, peer, loan.qid, buf)) == 0)
        loan.ticket = peer->tx[loan.qid].bulk_next++; /* ours: see the header */
    if (rc == 0)
        peer->lent[loan.qid] = loan.ticket + 1; /* sends refuse its block */
    return rc;
}

/* A channel loan's block, for its commit or its cancel: the count back at
 * ticket t if no bulk send took a block since (the commit then sends in
 * place), else the owner passes over t (the header). */
static void chan_take_back(struct am_peer *p)
{
    struct am_chan_tx *tx = &p->tx[loan.qid];
    if (tx->bulk_next == loan.ticket + 1)
        tx->bulk_next = loan.ticket;
}

/* Lend room for len bytes to dest's queue qid (serial: the peer there must
 * be that one, 0: any); ep is usable by this thread, outside handlers for a
 * request. */
static int lend(am_ep_t *ep, unsigned dest, unsigned long serial, enum am_qid qid,
                size_t len, void **buf)
{
    if (loan.ep)
        return -EBUSY;
    loan = (struct am_loan){ep, NULL, NULL, dest, qid, kind_of(len), NULL, len, 0, NULL};
    int local = !ep->mt.shared && !(ep->net && am__net_remote(ep->net, dest));
    struct am_peer *peer = NULL;
    int rc = local ? am__peer_of(ep, dest, serial, &peer) : lend_copy(len, buf);
    if (rc == 0 && peer) {
        struct am_send_limit outer = am__send_limit;
        am__send_limit = am__limit_of(ep, &(struct am_msg){0});
        ep->peer_holds++;
        rc = lend_room(ep, peer, buf);
        am__send_limit = outer;
        if (rc < 0)
            am__peers_unhold(ep);
        else
            loan.peer = peer, loan.buf = *buf;
    }
    if (rc < 0) {
        loan.ep = NULL;
        return rc;
    }
    am__hook(AM_HOOK_LENT);
    return 0;
}

void am__loan_given_back(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                         size_t len)
{
}

/* Give the room back (a loan in place whose message will not be sent).  A
 * heap block is freed; a channel's block was never taken; a shared queue's
 * bulk block goes back as it came, in ticket order: a message of no data
 * to AM_H_GIVEN_BACK names it (claiming a packet, so this may wait as a
 * send does; if that fails the claim is left idle, which the receiver
 * frees once a sender waits for it). */
static void give_back(void)
{
    struct am_peer *p = loan.peer;
    if (!p || p->dropped)
        return;
    if (loan.kind == AM_LONG) {
        am_heap_free(&p->view->q[loan.qid].heap, loan.ticket, p->who);
    } else if (p->view->queue == AM_QUEUE_MPSC) {
        struct am_msg m = {AM_BULK, AM_H_GIVEN_BACK, NULL, 0, loan.buf, 0, 0, 0, 0, 0};
        struct am_send_limit outer = am__send_limit;
        am__send_limit = am__limit_of(loan.ep, &m);
        am__mpsc_lend_commit(loan.ep, p, loan.qid, loan.ticket, &m);
        am__send_limit = outer;
    } else if (!loan.copy) {
        chan_take_back(p);
    }
}

/* End the loan; its peer hold too. */
static void loan_end(void)
{
    if (loan.peer) {
        loan.peer->lent[loan.qid] = 0; /* held: still ours to write */
        am__peers_unhold(loan.ep);
    } else
        free(loan.buf);
    free(loan.copy);
    loan.ep = NULL;
    loan.copy = NULL;
}

/* The loan's message m, in place: to its peer, within the send limit. */
static int send_in_place(struct am_msg *m)
{
    struct am_peer *p = loan.peer;
    struct am_seg_view *v = p->view;
    p->lent[loan.qid] = 0; /* the message may go into its own block (the header) */
    if (p->dropped || !am__peer_alive(v))
        return -EPIPE; /* its room goes with it */
    struct am_send_limit outer = am__send_limit;
    am__send_limit = am__limit_of(loan.ep, m);
    int rc;
    if (m->kind == AM_BULK && v->queue == AM_QUEUE_MPSC) {
        rc = am__mpsc_lend_commit(loan.ep, p, loan.qid, loan.ticket, m);
    } else {
        if (m->kind == AM_BULK && !loan.copy)
            chan_take_back(p);
        m->off = loan.ticket;
        rc = v->queue == AM_QUEUE_MPSC ? am__mpsc_send(loan.ep, p, loan.qid, m)
                                       : am__chan_send(loan.ep, p, loan.qid, m);
        if (rc < 0 && m->kind == AM_LONG)
            give_back();
    }
    am__send_limit = outer;
    return rc;
}

/* Commit the loan of ep on this thread as message (handler, len, args): the
 * argument errors leave it lent; any other end ends it. */
static int commit(am_ep_t *ep, unsigned handler, size_t len, const uint32_t *args,
                  int nargs, int (*copy)(struct am_msg *m))
{
    if (loan.ep != ep || handler >= AM_MAX_HANDLERS || nargs < 0 || (nargs && !args))
        return -EINVAL;
    if (len > loan.cap || nargs > AM_MAX_ARGS)
        return -EMSGSIZE;
    struct am_msg m = {loan.kind, handler, args, nargs, loan.buf, len, 0, 0, 0, 0};
    int rc = loan.peer ? send_in_place(&m) : copy(&m);
    loan_end();
    return rc;
}

static int cancel(am_ep_t *ep)
{
    if (loan.ep != ep)
        return -EINVAL;
    give_back();
    loan_end();
    return 0;
}

void am__loan_drop(am_ep_t *ep)
{
    if (loan.ep == ep)
        cancel(ep);
}

void am__loan_unused(am_token_t *tok)
{
    tok->lent = 0;
    if (loan.tok == (am_token_t *)tok->handle)
        cancel(tok->ep);
}

/* ---- requests ---- */

static int request_copy(struct am_msg *m)
{
    return m->kind == AM_BULK ? am_request_bulk(loan.ep, loan.dest, m->handler, m->data,
                                                m->len, m->args, m->nargs)
                              : am_request_long(loan.ep, loan.dest, m->handler, m->data,
                                                m->len, m->args, m->nargs);
}

int am_request_prepare(am_ep_t *ep, unsigned dest, size_t len, void **buf)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (!buf)
        return -EINVAL;
    if (am__in_handler(ep))
        return -EDEADLK;
    return lend(ep, dest, 0, AM_REQUEST, len, buf);
}

int am_request_commit(am_ep_t *ep, unsigned handler, size_t len, const uint32_t *args,
                      int nargs)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (loan.tok)
        return -EINVAL; /* a reply's loan */
    return commit(ep, handler, len, args, nargs, request_copy);
}

int am_request_cancel(am_ep_t *ep)
{
    int rc = am__ep_use(ep);
    return rc < 0 ? rc : loan.tok ? -EINVAL : cancel(ep);
}

/* ---- replies: a request handler's, on its thread, while it runs ---- */

static int reply_copy(struct am_msg *m)
{
    return m->kind == AM_BULK
               ? am_reply_bulk(loan.tok, m->handler, m->data, m->len, m->args, m->nargs)
               : am_reply_long(loan.tok, m->handler, m->data, m->len, m->args, m->nargs);
}

int am_reply_prepare(am_token_t *handle, size_t len, void **buf)
{
    am_token_t *tok = am__tok_find(handle);
    if (!tok || !am__ep_ok(tok->ep) || !buf)
        return -EINVAL;
    if (tok->qid != AM_REQUEST)
        return -EDEADLK;
    if (tok->replied)
        return -EALREADY;
    am_ep_t *ep = tok->ep;
    int rc;
    if (tok->call || !tok->serial || ep->mt.shared) {
        if (loan.ep)
            return -EBUSY;
        loan = (struct am_loan){ep,           NULL, handle, tok->source, AM_REPLY,
                                kind_of(len), NULL, len,    0,           NULL};
        rc = lend_copy(len, buf);
        if (rc < 0)
            loan.ep = NULL;
    } else if ((rc = lend(ep, tok->source, tok->serial, AM_REPLY, len, buf)) == 0) {
        loan.tok = handle;
    }
    tok->lent = rc == 0;
    return rc;
}

int am_reply_commit(am_token_t *handle, unsigned handler, size_t len, const uint32_t *args,
                    int nargs)
{
    am_token_t *tok = am__tok_find(handle);
    if (!tok || loan.tok != handle)
        return -EINVAL;
    int rc = commit(tok->ep, handler, len, args, nargs, reply_copy);
    if (rc != -EINVAL && rc != -EMSGSIZE)
        tok->lent = 0;
    if (rc == 0)
        tok->replied = 1;
    return rc;
}

int am_reply_cancel(am_token_t *handle)
{
    am_token_t *tok = am__tok_find(handle);
    if (!tok || loan.tok != handle)
        return -EINVAL;
    tok->lent = 0;
    return cancel(tok->ep);
}
