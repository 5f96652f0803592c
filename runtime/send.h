/*
 * send.h - the front door of sending (send.c), shared by every transport.
 *
 * A message as the send calls pass it on.  am__send: the owner of ep, blocks
 * while the queue (or for a long message the heap) is full, polling ep; the
 * errors of am_request.  packet_fill: a claimed packet's fields from m, and a
 * bulk message's data into `area`, its bulk block (bulk_ticket's, named in the
 * packet), or a medium message's into its slot's payload area; not the
 * state.
 * blocked_poll: polls ep as a send blocked on queue qid may (both queues for
 * a request, the reply queue for a reply; the transport when that found
 * nothing), for the transports' waits and am_wait's too; messages run.
 * backoff: one round of waiting for room in peer's queue qid, polling ep,
 * inside a peer hold (peers.c); 0, or -EPIPE once the peer has gone or the
 * poll dropped it, -ETIMEDOUT once ep->send_limit has passed, -EAGAIN at
 * once (before polling) for a send that may not wait; `ask` (if any) now and
 * then once spinning has failed.
 * count_backoffs: rounds a send waited, for tools.  wake_if_asleep: after a
 * publish, a full fence, then wake peer's owner if it sleeps in am_wait or
 * armed its descriptor (pairs with am_wait's fence, wait.c; am_poll's,
 * evfd.c); wake_sleepers its slow path.  report_broken: a sender that found
 * a peer's segment unusable; -EPROTO, one line on stderr.
 */
#ifndef SHMAM_SEND_H
#define SHMAM_SEND_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* AM_MEDIUM: a bulk message of at most AM_MEDIUM_BYTES, sent in its packet's
 * slot (layout.h); am__send makes every such AM_BULK one, so callers never
 * name it (a loan's commit keeps its bulk block: loan.c). */
enum am_kind { AM_SHORT, AM_BULK, AM_LONG, AM_LONG_AT, AM_CALL_REPLY, AM_MEDIUM };
struct am_msg {
    enum am_kind kind;
    unsigned handler;
    const uint32_t *args;
    int nargs;
    const void *data; /* bulk and long: the payload */
    size_t len;
    uint64_t off;        /* AM_LONG: its heap block once staged; AM_LONG_AT: the
                          * offset in the destination's region */
    uint32_t call, room; /* the packet's call fields (layout.h); AM_CALL_REPLY:
                          * a call's reply, len bytes already in its room */
    int now;             /* am_request_try, am_reply_try: never wait (-EAGAIN) */
};

struct spin;
int am__send(am_ep_t *ep, unsigned dest, enum am_qid qid, struct am_msg *m);
void am__packet_fill(struct am_packet *p, const struct am_msg *m, unsigned char *area,
                     uint64_t bulk_ticket);
int am__blocked_poll(am_ep_t *ep, enum am_qid qid);
int am__backoff(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                void (*ask)(struct am_seg_view *, enum am_qid), struct spin *sp,
                unsigned *yields);
void am__count_backoffs(struct am_peer *peer, unsigned rounds);
void am__wake_if_asleep(struct am_peer *peer);
void am__wake_sleepers(struct am_peer *peer, unsigned sleeping);
/* send_held: am__send with a shared endpoint's locks (threads.h), and, for
 * a kept reply, the serial its peer must have (else -EPIPE; 0: any).
 * reply_kept: a kept handle's reply (kept.c). */
/* peer_of: the peer at dest, if it is the one of that serial (0: any): 0,
 * -EINVAL (none mapped there), -EPIPE (gone, or another peer now). */
int am__peer_of(am_ep_t *ep, unsigned dest, unsigned long serial, struct am_peer **peer);
int am__send_held(am_ep_t *ep, unsigned dest, unsigned long serial, enum am_qid qid,
                  struct am_msg *m);
int am__reply_kept(am_token_t *tok, unsigned long serial, struct am_msg *m);
/* check_msg: m's fields against the limits, long_max the destination's: 0,
 * -EINVAL or -EMSGSIZE (the errors of am_request_*).  Every length must fit
 * the field that carries it, a packet's bulk_len (and the transport's wire
 * len): a long message's bound long_max does, a one-copy message has no other
 * bound than AM_PACKET_LEN_MAX. */
#define AM_PACKET_LEN_MAX ((size_t)UINT32_MAX)
_Static_assert(sizeof(((struct am_packet *)0)->bulk_len) == sizeof(uint32_t),
               "AM_PACKET_LEN_MAX is what a packet's bulk_len holds");
_Static_assert(AM_MAX_LONG <= AM_PACKET_LEN_MAX && AM_BULK_BYTES <= AM_PACKET_LEN_MAX,
               "every long_max and a bulk length fit a packet's bulk_len");
int am__check_msg(const struct am_msg *m, size_t long_max);
/* heap_room: a block of len bytes in peer's queue qid's heap, ours (peer->who),
 * backing off while the heap is full as a long send does: 0 (*off, *block),
 * or the errors of a send.  limit_of: how long a public send of m from ep
 * may wait (its send_timeout_ms; not at all for a try). */
int am__heap_room(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, size_t len,
                  uint64_t *off, void **block);
struct am_send_limit am__limit_of(const am_ep_t *ep, const struct am_msg *m);
int am__report_broken(const struct am_seg_view *v, const char *why);
/* Batches (am_request_batch): a transport's batch send takes up to
 * AM_BATCH_CHUNK messages m[0 .. n-1], checked, none long (medium ones made
 * AM_MEDIUM), and sends them in order as n sends would, sharing what it can
 * (mpsc_send.c: runs of slots per claim; chan_send.c: one flush and one
 * notify per run); it waits while the queue is full, having published and
 * woken the receiver for what it holds.  *sent: how many went (a prefix);
 * returns 0, or the error that stopped it (those of a send).  Within a peer
 * hold, the owner's (not a shared endpoint's). */
#define AM_BATCH_CHUNK 32
int am__mpsc_send_batch(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                        const struct am_msg *m, int n, int *sent);
int am__chan_send_batch(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                        const struct am_msg *m, int n, int *sent);

#endif
