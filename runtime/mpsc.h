/*
 * mpsc.h - the shared (many-to-one) queue's two halves: mpsc_send.c the
 * sender's, mpsc_poll.c the receiver's.
 *
 * The claim one step at a time (see mpsc_send.c's header): begin, then try
 * until 1 (claimed; never blocks: 0 means back off and try again; -EPIPE,
 * -EPROTO), any number of senders at once.  try_counted: try, counting a
 * bulk claim in the sender's own entry `me` (begun; ended at once if it took
 * no block); bulk_ended: after publishing, or giving up, a bulk claim that
 * took its block.  Real sends count, or the receiver frees their blocks
 * (mpsc_send.c's header).  orphans_ask: any sender waiting for a bulk block.
 * publish: the sender that completed the claim, once (release-stores READY;
 * pairs with the receiver's acquire in mpsc_drain).  mpsc_send: am__send's
 * sender half for a shared queue (claim, publish, wake), once send.c has
 * checked m and staged its long data; 0, -EPIPE or -EPROTO.
 *
 * The receiver's half: the owner only, never inside a handler, never blocks.
 * mpsc_drain: one queue, returns messages delivered (acquire).  mpsc_chores:
 * the repairs on idle polls (asked-for bulk and heap blocks; the shared tails
 * when `due`); delivers nothing, returns 0.  stuck: is a head waiting on a
 * claim (am_wait then sleeps briefly).
 */
#ifndef SHMAM_MPSC_H
#define SHMAM_MPSC_H

#include <stdint.h>

#include "internal.h"
#include "send.h"

struct am_claim_state {
    uint64_t ticket, bulk_ticket;
    uint64_t hint; /* onecas: where the sender's last claim left the tail */
    unsigned who;  /* the claimant's id in the destination segment */
    int want_bulk;
    int bulk_only; /* a loan's claim: the bulk block alone (am__mpsc_lend) */
    int stage;
};
void am__claim_begin(struct am_claim_state *c, int want_bulk, unsigned who);
int am__claim_try(struct am_seg_view *v, struct am_queue_view *q, struct am_claim_state *c);
int am__claim_try_counted(struct am_seg_view *v, struct am_queue_view *q,
                          struct am_claim_state *c, struct am_sender *me);
void am__claim_bulk_ended(struct am_sender *me);
void am__claim_orphans_ask(struct am_seg_view *v, enum am_qid qid);
/* claim_some: a batch's run of up to k packets (no bulk blocks) by `who`,
 * without waiting; any number of senders at once.  How many, in ticket order
 * in ticket[] (each to be published once), 0 (holding nothing: the queue is
 * full), -EPIPE, -EPROTO.  *hint: onecas's, as am_claim_state's. */
int am__claim_some(struct am_seg_view *v, struct am_queue_view *q, unsigned who,
                   uint64_t *hint, int k, uint64_t *ticket);
void am__publish(struct am_queue_view *q, const struct am_claim_state *c,
                 const struct am_msg *m);
int am__mpsc_send(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                  const struct am_msg *m);

/* Loans (loan.c): lend claims a bulk block only, counted as a bulk claim in
 * flight until lend_commit publishes a packet naming it (claiming that packet
 * first, backing off while the queue is full) or lend_end gives it up (an
 * idle claim the receiver frees once a sender waits for it).  0, or the
 * errors of a send; lend_commit ends the count whatever it returns. */
int am__mpsc_lend(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, uint64_t *bulk_ticket,
                  void **buf);
int am__mpsc_lend_commit(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                         uint64_t bulk_ticket, const struct am_msg *m);
void am__mpsc_lend_end(struct am_peer *peer);

int am__mpsc_drain(am_ep_t *ep, enum am_qid qid);
int am__mpsc_chores(am_ep_t *ep, int due);
int am__stuck(const am_ep_t *ep);

#endif
