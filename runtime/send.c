/*
 * send.c - the front door of sending, shared by every transport: check a
 * message, stage a long message's data, back off (and poll) while the
 * destination is full, fill a packet, wake the receiver; then the public
 * send calls.  Each transport's sender half does the rest: mpsc_send.c the
 * shared queue's claims, chan_send.c a per-sender channel's ring, net/
 * mpi_send.c a message to another node.  poll.c is the receiving front door.
 *
 * Long messages.  A long message's data goes first into a block of the
 * destination queue's heap (heap/heap.h), allocated with our claimant id, then
 * a packet is claimed as for a short message and published READY with flag
 * AM_PKT_LONG naming the block; the receiver frees the block after the
 * handler.  Allocating before claiming keeps the copy off the queue (a sender
 * holding a block never holds up a packet slot) and, like bulk-before-packet,
 * never makes a packet's holder wait for memory.  A one-copy long message is
 * copied into the destination's region (region.c), then claimed the same
 * way, flagged AM_PKT_LONG_AT.  Per-sender order is the packets' order.
 *
 * Backing off.  While a claim cannot complete (queue full, lock busy, slot not
 * yet freed for our lap) the sender backs off exponentially and polls its own
 * endpoint: a request polls both queues, which breaks the deadlock of endpoints sending to
 * each other with full queues; a reply polls only the reply queue, since reply
 * handlers never send.  Once spinning has clearly failed the backoff yields the
 * processor.  Every round checks that the destination still lives (two plain
 * loads: its state and its owner's lifeline), so a send to a receiver that died
 * fails with -EPIPE, the first one after the death as well as one already
 * waiting; a bulk sender waiting on a block that a dead sender holds asks the
 * receiver to free it.  The poll may learn that the receiver has gone and
 * give its index to a new sender: the send holds its peer (peers.c), which
 * stays mapped but marked dropped, and the round ends the send with -EPIPE.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "call.h"
#include "internal.h"
#include "mpsc.h"
#include "net.h"
#include "peers.h"
#include "polling.h"
#include "region.h"
#include "send.h"
#include "senders.h"
#include "spin.h"
#include "waiting.h"

/* The test hook (internal.h): NULL outside tests. */
void (*am__claim_stall_hook)(enum am_hook where);

_Thread_local struct am_send_limit am__send_limit;

/* A sender found a peer's segment unusable: say so once per process, naming the
 * endpoint, and fail the send.  Returns -EPROTO. */
int am__report_broken(const struct am_seg_view *v, const char *why)
{
    static int said;
    if (!said && (said = 1))
        fprintf(stderr, "shmam: endpoint %.*s: %s; sends to it fail with -EPROTO\n",
                (int)AM_NAME_MAX, v->hdr->name, why);
    return -EPROTO;
}

#define AM_ORPHAN_EVERY 64 /* yields between looks for a dead sender's bulk block */

/* Poll ep as a send blocked on queue qid may (am_wait with a transport too,
 * as AM_REQUEST): a request both queues (and messages held during am_init),
 * a reply only the reply queue; and, with a transport, ask it too whenever
 * that poll found nothing and did not just ask it (net_tick 0), so a wait on
 * it makes progress every round.  Messages run. */
int am__blocked_poll(am_ep_t *ep, enum am_qid qid)
{
    int n = qid == AM_REQUEST ? am__poll(ep) : am__drain(ep, AM_REPLY);
    if (n == 0 && ep->net && (qid == AM_REPLY || ep->net_tick != 0))
        n = am__net_poll(ep, qid == AM_REPLY);
    return n;
}

/* Has the send in progress waited as long as its limit lets it?  0, -EAGAIN
 * (it may not wait at all), -ETIMEDOUT.  The clock is read only by a send that
 * has a limit and waits: the fast path never. */
static int limit_passed(struct am_send_limit *l)
{
    if (l->mode == AM_SEND_NOWAIT)
        return -EAGAIN;
    int64_t now = am__now_ns();
    if (l->mode == AM_SEND_MS && l->deadline == 0) {
        l->deadline = now + (int64_t)l->ms * 1000000;
        return 0;
    }
    return now >= l->deadline ? -ETIMEDOUT : 0;
}

/* One round of waiting for room in peer's queue qid (or its heap), inside a
 * peer hold, so the poll may drop the peer but not free it (peers.c).  A
 * peer dropped is one whose owner has gone, and its index may already name
 * another endpoint: the send ends with -EPIPE, never goes on to that one.
 * Once spinning has clearly failed, every AM_ORPHAN_EVERY yields, `ask` (if
 * any) asks the receiver to take back what dead senders hold. */
int am__backoff(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                void (*ask)(struct am_seg_view *, enum am_qid), struct spin *sp,
                unsigned *yields)
{
    int rc = am__send_limit.mode == AM_SEND_FOREVER ? 0 : limit_passed(&am__send_limit);
    if (rc < 0)
        return rc;
    am__hook(AM_HOOK_BACKOFF);
    am__blocked_poll(ep, qid);
    if (peer->dropped || !am__peer_alive(peer->view))
        return -EPIPE;
    if (spin_wait(sp) && ask && ++*yields % AM_ORPHAN_EVERY == 0)
        ask(peer->view, qid);
    return 0;
}

/* A sender finding dest's heap full: ask the receiver to free the blocks dead
 * senders hold (mpsc_poll.c, chan_poll.c), and wake it. */
static void reclaim_ask(struct am_seg_view *v, enum am_qid qid)
{
    AO_store(&v->shared->reclaim[qid], 1);
    am__wake(v->shared);
}

/* Add a send's backoff rounds to our entry's count in the peer's segment, for
 * tools: one store (to our own entry page) per send that waited, not one per
 * round, which cost the many-to-one test 13% of its throughput. */
void am__count_backoffs(struct am_peer *peer, unsigned rounds)
{
    AO_t n = AO_fetch_and_add(&peer->backoffs, rounds) + rounds; /* both queues' sends */
    AO_store(&am__sender(peer->view, peer->sender_index)->backoffs, n);
}

/* Fill a claimed packet (and its bulk block or payload area) for the
 * receiver.  Only the sender that completed the packet's claim may call it,
 * once.  A long message's data is in place already (staged in the heap, or
 * written into the region). */
void am__packet_fill(struct am_packet *p, const struct am_msg *m, unsigned char *area,
                     uint64_t bulk_ticket)
{
    static const uint8_t flags[] = {[AM_LONG] = AM_PKT_LONG,
                                    [AM_LONG_AT] = AM_PKT_LONG_AT,
                                    [AM_CALL_REPLY] = 0,
                                    [AM_MEDIUM] = AM_PKT_MEDIUM};
    am__hook(AM_HOOK_FILLING);
    p->handler = (uint16_t)m->handler;
    p->nargs = (uint8_t)m->nargs;
    p->flags = flags[m->kind];
    p->bulk_len = (uint32_t)m->len;
    p->bulk_ticket = m->off;
    p->call = m->call; /* every packet: a slot keeps what its last lap wrote */
    p->room = m->room;
    if (m->nargs)
        memcpy(p->args, m->args, (size_t)m->nargs * sizeof *m->args);
    if (m->kind == AM_BULK || m->kind == AM_MEDIUM) {
        const unsigned char *d = m->data;
        if (m->kind == AM_BULK)
            p->bulk_ticket = bulk_ticket;
        if (d == area)
            return; /* a loan's: written in place */
        memcpy(area, d, m->len / 2);
        am__hook(AM_HOOK_BULK_HALF);
        memcpy(area + m->len / 2, d + m->len / 2, m->len - m->len / 2);
    }
}
/* Wake the receiver if it sleeps in am_wait or has armed its descriptor.
 * The full barrier orders our READY store before the load of `sleeping`;
 * am_wait (and am_poll arming, evfd.c) changes `sleeping` and fences before
 * its last poll, so either it sees our packet or we see it asleep. */
void am__wake_if_asleep(struct am_peer *peer)
{
    AO_nop_full();
    unsigned s = AO_int_load(&peer->view->shared->sleeping);
    if (__builtin_expect(s != 0, 0))
        am__wake_sleepers(peer, s);
}

/* The receiver of peer sleeps (`sleeping` read as s, nonzero): the first
 * sender to find it armed disarms it and signals its descriptor (evfd.c:
 * one byte per arming); sleepers in am_wait are woken by the futex. */
void am__wake_sleepers(struct am_peer *peer, unsigned s)
{
    struct am_seg_shared *h = peer->view->shared;
    while (s & AM_SLEEP_ARMED) {
        if (AO_int_compare_and_swap_full(&h->sleeping, s, s & ~AM_SLEEP_ARMED)) {
            am__fd_signal(peer);
            break;
        }
        s = AO_int_load(&h->sleeping);
    }
    if (s & ~AM_SLEEP_ARMED)
        am__wake(h);
}

/* Arguments a send may take to peer view v: -EINVAL, -EMSGSIZE or 0. */
int am__check_msg(const struct am_msg *m, size_t long_max)
{
    if (m->handler >= AM_HANDLER_TOTAL || m->nargs < 0 || (m->nargs > 0 && !m->args) ||
        (m->len > 0 && !m->data && m->kind != AM_CALL_REPLY))
        return -EINVAL;
    size_t max = m->kind == AM_BULK      ? AM_BULK_BYTES
                 : m->kind == AM_MEDIUM  ? AM_MEDIUM_BYTES
                 : m->kind == AM_LONG    ? long_max
                 : m->kind == AM_LONG_AT ? AM_PACKET_LEN_MAX
                                         : 0;
    if (m->kind == AM_CALL_REPLY)
        max = AM_PACKET_LEN_MAX; /* its data is in the caller's room (call.c) */
    return m->nargs > AM_MAX_ARGS || m->len > max ? -EMSGSIZE : 0;
}

/* A long message's data, copied into a block of the destination queue's heap
 * allocated with our claimant id, before the packet is claimed (so the copy
 * never holds up the queue).  While the heap is full, back off and poll as for
 * a full queue; now and then ask the receiver to take back blocks that dead
 * senders hold.  0 (m->off names the block), or -EPIPE, -EMSGSIZE, -EPROTO. */
int am__heap_room(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, size_t len,
                  uint64_t *off, void **block)
{
    struct am_seg_view *v = peer->view;
    struct spin sp = SPIN_INIT;
    unsigned yields = 0;
    int rc;
    while ((rc = am_heap_alloc(&v->q[qid].heap, len, peer->who, off)) == -ENOMEM)
        if ((rc = am__backoff(ep, peer, qid, reclaim_ask, &sp, &yields)) < 0)
            return rc;
    if (rc == -EMSGSIZE)
        return rc;
    if (rc < 0 || !(*block = am_heap_data(&v->q[qid].heap, *off, len, peer->who)))
        return am__report_broken(v, "its heap is corrupt");
    return 0;
}

static int stage_long(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, struct am_msg *m)
{
    void *block;
    int rc = am__heap_room(ep, peer, qid, m->len, &m->off, &block);
    if (rc < 0)
        return rc;
    if (m->len)
        memcpy(block, m->data, m->len);
    am__hook(AM_HOOK_LONG_STAGED);
    return 0;
}

/* A bulk message that fits a slot's payload area goes as a medium one: in
 * its slot, no bulk block (layout.h).  Every send's choice, batched or not. */
static void in_slot_if_fits(struct am_msg *m)
{
    if (m->kind == AM_BULK && m->len <= AM_MEDIUM_BYTES)
        m->kind = AM_MEDIUM;
}

/* Send m to `peer`'s queue qid, within a peer hold (see am__send). */
static int send_to(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, struct am_msg *m)
{
    struct am_seg_view *v = peer->view;
    int rc = am__check_msg(m, v->long_max);
    if (rc < 0)
        return rc;
    if (!am__peer_alive(v))
        return -EPIPE;
    in_slot_if_fits(m);
    if (m->kind == AM_LONG && (rc = stage_long(ep, peer, qid, m)) < 0)
        return rc;
    if (m->kind == AM_LONG_AT && (rc = am__region_write(peer, m)) < 0)
        return rc;
    rc = v->queue == AM_QUEUE_MPSC ? am__mpsc_send(ep, peer, qid, m)
                                   : am__chan_send(ep, peer, qid, m);
    if (rc < 0 && m->kind == AM_LONG)
        am_heap_free(&v->q[qid].heap, m->off, peer->who);
    return rc;
}

/* A shared endpoint's first one-copy send to a peer maps its region under
 * peers_mu, so that two threads never map it at once (region.c maps on
 * first use); every later send finds it mapped (the mutex orders it). */
static int region_map_once(am_ep_t *ep, struct am_peer *peer)
{
    struct am_msg none = {.kind = AM_LONG_AT};
    pthread_mutex_lock(&ep->mt.peers_mu);
    int rc = am__region_write(peer, &none);
    pthread_mutex_unlock(&ep->mt.peers_mu);
    return rc;
}

/* Take a peer queue's send lock (shared endpoints): a send that may not
 * wait (a call's reply, placed from inside a poll that holds drain_mu:
 * call.c) only tries, -EAGAIN if another thread sends there (its reply is
 * kept and tried again), so no thread holding drain_mu waits for tx_mu. */
static int tx_lock(const struct am_mt *mt, pthread_mutex_t *mu)
{
    if (!mt->shared)
        return 0;
    if (am__send_limit.mode != AM_SEND_NOWAIT)
        return pthread_mutex_lock(mu), 0;
    return pthread_mutex_trylock(mu) == 0 ? 0 : -EAGAIN;
}

int am__peer_of(am_ep_t *ep, unsigned dest, unsigned long serial, struct am_peer **peer)
{
    *peer = am__peer(ep, dest);
    return !*peer ? (dest == AM_SOURCE_UNKNOWN || serial ? -EPIPE : -EINVAL)
           : serial && (*peer)->serial != serial ? -EPIPE
                                                 : 0;
}

/* am__send with the locks a shared endpoint takes (threads.h; no-ops while
 * owned): hold the peer under peers_mu, then send under its queue's tx_mu.
 * serial: 0, or the serial the peer at dest must have (a kept reply's
 * caller: a new peer at its index is not it), else -EPIPE. */
int am__send_held(am_ep_t *ep, unsigned dest, unsigned long serial, enum am_qid qid,
                  struct am_msg *m)
{
    struct am_mt *mt = &ep->mt;
    if (ep->net && am__net_remote(ep->net, dest))
        return ep->net->ops->send(ep, dest, qid, m); /* owned only (am_ep_share) */
    am__mt_lock(mt, &mt->peers_mu);
    struct am_peer *peer;
    int rc = am__peer_of(ep, dest, serial, &peer);
    if (rc == 0)
        ep->peer_holds++;
    am__mt_unlock(mt, &mt->peers_mu);
    if (rc < 0)
        return rc;
    if (mt->shared && m->kind == AM_LONG_AT)
        rc = region_map_once(ep, peer);
    if (rc == 0 && tx_lock(mt, &peer->tx_mu[qid]) < 0)
        rc = -EAGAIN;
    else if (rc == 0) {
        rc = send_to(ep, peer, qid, m);
        am__mt_unlock(mt, &peer->tx_mu[qid]);
    }
    am__mt_lock(mt, &mt->peers_mu);
    am__peers_unhold(ep);
    am__mt_unlock(mt, &mt->peers_mu);
    return rc;
}

/* Send message m to peer `dest`'s queue `qid`.  The owner's fast path; a
 * shared endpoint's sends take am__send_held's locks.  The send holds its
 * peer across the polls of its backoff: a peer hold (peers.c). */
int am__send(am_ep_t *ep, unsigned dest, enum am_qid qid, struct am_msg *m)
{
    if (__builtin_expect(ep->mt.shared, 0)) {
        am__mt_enter(ep);
        int rc = am__send_held(ep, dest, 0, qid, m);
        am__mt_leave(ep);
        return rc;
    }
    if (__builtin_expect(ep->net != NULL, 0) && am__net_remote(ep->net, dest))
        return ep->net->ops->send(ep, dest, qid, m);
    struct am_peer *peer = am__peer(ep, dest);
    if (!peer)
        return dest == AM_SOURCE_UNKNOWN ? -EPIPE : -EINVAL;
    ep->peer_holds++;
    int rc = send_to(ep, peer, qid, m);
    am__peers_unhold(ep);
    return rc;
}

/* A public send: m to dest's queue qid, waiting for room at most the
 * endpoint's send_timeout_ms (a send run by a handler inside another's
 * backoff has its own limit; the outer one's is kept meanwhile). */
struct am_send_limit am__limit_of(const am_ep_t *ep, const struct am_msg *m)
{
    if (m->now)
        return (struct am_send_limit){AM_SEND_NOWAIT, 0, 0};
    return (struct am_send_limit){ep->send_timeout_ms < 0 ? AM_SEND_FOREVER : AM_SEND_MS,
                                  ep->send_timeout_ms, 0};
}

static int send_limited(am_ep_t *ep, unsigned dest, enum am_qid qid, struct am_msg *m)
{
    struct am_send_limit outer = am__send_limit;
    am__send_limit = am__limit_of(ep, m);
    int rc = am__send(ep, dest, qid, m);
    am__send_limit = outer;
    return rc;
}

/* A plain reply under the send limit (as send_limited) to the peer of that
 * serial only: a new peer at its index is not it (-EPIPE). */
static int reply_held(am_ep_t *ep, unsigned dest, unsigned long serial, struct am_msg *m)
{
    struct am_send_limit outer = am__send_limit;
    am__send_limit = am__limit_of(ep, m);
    int rc = am__send_held(ep, dest, serial, AM_REPLY, m);
    am__send_limit = outer;
    return rc;
}

/* A handler's plain reply to its sender at delivery (the token's serial);
 * serial 0 (a remote rank's): to the index. */
static int reply_to(am_token_t *tok, struct am_msg *m)
{
    am_ep_t *ep = tok->ep;
    if (!tok->serial)
        return send_limited(ep, tok->source, AM_REPLY, m);
    int shared = ep->mt.shared;
    if (shared)
        am__mt_enter(ep);
    int rc = reply_held(ep, tok->source, tok->serial, m);
    if (shared)
        am__mt_leave(ep);
    return rc;
}

/* The request calls: from the owner (any thread once shared), outside
 * handlers. */
/* A request's handler and data, as its caller gave them: 0 or -EINVAL. */
static int request_ok(const struct am_msg *m)
{
    return m->handler >= AM_MAX_HANDLERS || (m->kind != AM_SHORT && !m->data && m->len)
               ? -EINVAL
               : 0;
}

static int request(am_ep_t *ep, unsigned dest, struct am_msg *m)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if ((rc = request_ok(m)) < 0)
        return rc;
    if (am__in_handler(ep))
        return -EDEADLK;
    return send_limited(ep, dest, AM_REQUEST, m);
}

int am_request(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
               int nargs)
{
    struct am_msg m = {AM_SHORT, handler, args, nargs, NULL, 0, 0, 0, 0, 0};
    return request(ep, dest, &m);
}

int am_request_bulk(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_BULK, handler, args, nargs, data, len, 0, 0, 0, 0};
    return data ? request(ep, dest, &m) : -EINVAL;
}

int am_request_long(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_LONG, handler, args, nargs, data, len, 0, 0, 0, 0};
    return request(ep, dest, &m);
}

int am_request_long_at(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                       size_t len, size_t offset, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_LONG_AT, handler, args, nargs, data, len, offset, 0, 0, 0};
    return request(ep, dest, &m);
}

/* ---- batches ---------------------------------------------------------------- */

/* Batch message o as the one-by-one sends would pass it on (am_request,
 * am_request_bulk), checked as they check it: 0, -EINVAL, -EMSGSIZE. */
static int out_msg(const struct am_out *o, struct am_msg *m)
{
    *m = (struct am_msg){o->len ? AM_BULK : AM_SHORT,
                         o->handler,
                         o->args,
                         o->nargs,
                         o->len ? o->data : NULL,
                         o->len,
                         0,
                         0,
                         0,
                         0};
    int rc = request_ok(m);
    return rc < 0 ? rc : am__check_msg(m, 0);
}

/* Send msgs[0 .. n-1], checked already, one by one (a shared endpoint, a
 * remote peer): how many went, or the first one's error. */
static int batch_one_by_one(am_ep_t *ep, unsigned dest, const struct am_out *msgs, int n)
{
    int i, rc = 0;
    for (i = 0; i < n && rc == 0; i++) {
        struct am_msg m;
        out_msg(&msgs[i], &m);
        if ((rc = send_limited(ep, dest, AM_REQUEST, &m)) < 0)
            break;
    }
    return i > 0 ? i : rc;
}

/* The owner's batch to a local peer, in chunks of AM_BATCH_CHUNK messages
 * handed to the transport's batch send: one peer hold and one liveness check
 * for all of them.  *sent: how many went; 0 or the error that ended it. */
static int batch_to(am_ep_t *ep, struct am_peer *peer, const struct am_out *msgs, int n,
                    int *sent)
{
    struct am_seg_view *v = peer->view;
    struct am_msg m[AM_BATCH_CHUNK];
    int rc = am__peer_alive(v) ? 0 : -EPIPE;
    *sent = 0;
    while (rc == 0 && *sent < n) {
        int k = n - *sent < AM_BATCH_CHUNK ? n - *sent : AM_BATCH_CHUNK, went = 0;
        for (int j = 0; j < k; j++) {
            out_msg(&msgs[*sent + j], &m[j]);
            in_slot_if_fits(&m[j]);
        }
        rc = v->queue == AM_QUEUE_MPSC
                 ? am__mpsc_send_batch(ep, peer, AM_REQUEST, m, k, &went)
                 : am__chan_send_batch(ep, peer, AM_REQUEST, m, k, &went);
        *sent += went;
    }
    return rc;
}

int am_request_batch(am_ep_t *ep, unsigned dest, const struct am_out *msgs, int n)
{
    int rc = am__ep_use(ep), sent = 0;
    if (rc < 0)
        return rc;
    if (!msgs || n <= 0)
        return -EINVAL;
    for (int i = 0; i < n; i++) {
        struct am_msg m;
        if ((rc = out_msg(&msgs[i], &m)) < 0)
            return rc; /* none sent */
    }
    if (am__in_handler(ep))
        return -EDEADLK;
    if (ep->mt.shared || (ep->net && am__net_remote(ep->net, dest)))
        return batch_one_by_one(ep, dest, msgs, n);
    struct am_peer *peer;
    if ((rc = am__peer_of(ep, dest, 0, &peer)) < 0)
        return rc;
    struct am_send_limit outer = am__send_limit;
    am__send_limit = am__limit_of(ep, &(struct am_msg){.now = 0});
    ep->peer_holds++;
    rc = batch_to(ep, peer, msgs, n, &sent);
    am__peers_unhold(ep);
    am__send_limit = outer;
    return sent > 0 ? sent : rc;
}

/* The reply calls: from a request handler, on its thread while it runs
 * (a token outside its handler's frame is -EINVAL: threads.h), once per
 * request. */
static int reply(am_token_t *handle, struct am_msg *m)
{
    am_token_t *tok = am__tok_find(handle);
    if (!tok || !am__ep_ok(tok->ep) || m->handler >= AM_MAX_HANDLERS ||
        (m->kind != AM_SHORT && !m->data && m->len))
        return -EINVAL;
    if (tok->qid != AM_REQUEST)
        return -EDEADLK;
    if (tok->replied)
        return -EALREADY;
    if (tok->call)
        return am__call_reply(tok, 0, m); /* into the caller's struct am_result */
    int rc = reply_to(tok, m);
    if (rc == 0)
        tok->replied = 1;
    return rc;
}

/* A reply through a kept handle's copy of its token (kept.c), to the peer of
 * that serial only; the handle is the caller's to mark used. */
int am__reply_kept(am_token_t *tok, unsigned long serial, struct am_msg *m)
{
    am__mt_enter(tok->ep);
    int rc;
    if (tok->call) {
        tok->replied = 0;                    /* the copy: kept, not yet replied */
        rc = am__call_reply(tok, serial, m); /* the caller of that serial only */
    } else {
        rc = reply_held(tok->ep, tok->source, serial, m);
    }
    am__mt_leave(tok->ep);
    return rc;
}

int am_reply(am_token_t *tok, unsigned handler, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_SHORT, handler, args, nargs, NULL, 0, 0, 0, 0, 0};
    return reply(tok, &m);
}

int am_reply_bulk(am_token_t *tok, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_BULK, handler, args, nargs, data, len, 0, 0, 0, 0};
    return data ? reply(tok, &m) : -EINVAL;
}

int am_reply_long(am_token_t *tok, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_LONG, handler, args, nargs, data, len, 0, 0, 0, 0};
    return reply(tok, &m);
}

int am_reply_long_at(am_token_t *tok, unsigned handler, const void *data, size_t len,
                     size_t offset, const uint32_t *args, int nargs)
{
    struct am_msg m = {AM_LONG_AT, handler, args, nargs, data, len, offset, 0, 0, 0};
    return reply(tok, &m);
}

/* The sends that never wait: a public kind to a message of ours. */
static int msg_of(enum am_msg_kind kind, unsigned handler, const void *data, size_t len,
                  size_t offset, const uint32_t *args, int nargs, struct am_msg *m)
{
    static const enum am_kind kinds[] = {[AM_MSG_SHORT] = AM_SHORT,
                                         [AM_MSG_BULK] = AM_BULK,
                                         [AM_MSG_LONG] = AM_LONG,
                                         [AM_MSG_LONG_AT] = AM_LONG_AT};
    if ((unsigned)kind >= sizeof kinds / sizeof kinds[0] || (kind == AM_MSG_BULK && !data))
        return -EINVAL;
    *m = (struct am_msg){kinds[kind],
                         handler,
                         args,
                         nargs,
                         kind == AM_MSG_SHORT ? NULL : data,
                         kind == AM_MSG_SHORT ? 0 : len,
                         kind == AM_MSG_LONG_AT ? offset : 0,
                         0,
                         0,
                         1};
    return 0;
}

int am_request_try(am_ep_t *ep, unsigned dest, enum am_msg_kind kind, unsigned handler,
                   const void *data, size_t len, size_t offset, const uint32_t *args,
                   int nargs)
{
    struct am_msg m;
    int rc = msg_of(kind, handler, data, len, offset, args, nargs, &m);
    return rc < 0 ? rc : request(ep, dest, &m);
}

int am_reply_try(am_token_t *tok, enum am_msg_kind kind, unsigned handler, const void *data,
                 size_t len, size_t offset, const uint32_t *args, int nargs)
{
    struct am_msg m;
    int rc = msg_of(kind, handler, data, len, offset, args, nargs, &m);
    return rc < 0 ? rc : reply(tok, &m);
}

unsigned am_token_source(const am_token_t *handle)
{
    const am_token_t *tok = am__tok_find(handle);
    return tok ? tok->source : AM_SOURCE_UNKNOWN;
}

am_ep_t *am_token_ep(const am_token_t *handle)
{
    const am_token_t *tok = am__tok_find(handle);
    return tok ? tok->ep : NULL;
}
