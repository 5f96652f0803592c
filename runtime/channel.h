/*
 * channel.h - per-sender channels: the queue kinds lamport, fastforward, mcring
 * and bqueue.  chan_send.c holds the producer's half, chan_poll.c
 * the owner's; the rings are spsc/'s.
 *
 * Lumetta and Culler chose many-to-one queues for memory and polling cost;
 * with a per-sender kind every registered sender (entry i of the owner's
 * table) has its own request channel and its own reply channel in the
 * owner's segment, written by that sender alone and read by the owner alone:
 *
 *   ring      an SPSC ring of 2^shift = Q wide slots (the endpoint's
 *             `packets`; spsc.h): each slot is one cache-line packet whose
 *             word 0 (the packet's state word) is the ring's mark or item
 *   ctl       struct am_chan_ctl: bulk blocks given back (owner-written)
 *   bulk      B bulk blocks (the endpoint's `bulk_blocks`), used in ticket
 *             order: ticket t is block t % B
 *   medium    Q payload areas of AM_MEDIUM_BYTES, area k ring slot k's: a
 *             medium message's data (layout.h), written before the slot's
 *             commit, read in place, given back with the slot
 * Long messages' data stays in the endpoint's per-queue heaps (heap/, shared
 * by all senders: one of 2 x long_max per channel would be 2 x S heaps); their
 * packets go through the channels.
 *
 * What changed from the papers.  Their rings carry one word per slot (a
 * pointer; FastForward and B-Queue mark an empty slot NULL); an AM packet is a
 * cache line, and a word naming a packet elsewhere would make every message
 * move two lines between the cores instead of one.  So a channel's ring has
 * wide slots: the packet lives in the slot, word 0 is what the ring's
 * algorithm puts there (FastForward's and B-Queue's mark, item + 1, never 0 for
 * a message; Lamport's and MCRingBuffer's item under their indices), and the
 * item is the state word the shared queues would write, AM_STATE(lap of the
 * position in Q, who, READY or READY_BULK).  The producer reserves the slot,
 * fills words 1..7 and commits the item (one release); the owner peeks,
 * copies the packet out, releases the slot (one release: its copy happens
 * before the producer's next writes there), then runs the handler on its
 * copy.  A medium message's slot is released after its handler, which reads
 * the data in the slot's payload area in place: no block, no count, nothing
 * given back but the slot.  Bulk blocks are given back by count
 * (ctl->bulk_freed, release; the producer's acquire load).
 *
 * Send (chan_send.c): stage a long message in the heap (send.c); wait for a
 * bulk block if bulk; reserve the ring's next slot, backing off and polling
 * while the ring is full; write the packet (fields as the shared queues');
 * commit, and flush (mcring holds items back otherwise); then a full fence,
 * set our bit in the queue's summary if it is clear, and wake the owner if it
 * sleeps.
 *
 * Poll (chan_poll.c): for each set bit of a queue's summary, take up to Q
 * packets from that channel and deliver each: the item must be the state its
 * producer writes for the position the owner expects next, naming the entry's
 * claimant; a bulk ticket must lie in [next, next + B); everything else as
 * the shared queues check it (deliver.c).  A channel empty for AM_CHAN_IDLE
 * polls has its bit cleared, then (after a full fence) is looked at once more.
 * Fences pair: the producer's commit / fence / load of the bit, against the
 * owner's clear / fence / peek; and, as for the shared queues, the producer's
 * fence before loading `sleeping` with am_wait's.  A poll with many
 * registered senders and one active costs a load per 64 senders more than
 * with one.
 *
 * Senders come and go.  A sender's positions are private to its ends, so a
 * channel is not handed from one sender to the next as it is: the owner lays
 * it out afresh.  chan_ready[i] in the owner's page (peers cannot forge it)
 * names the generation for which entry i's channels are fresh; a registrant
 * takes entry i only if its next generation is that one (senders.c).  When the
 * entry's sender has left (CLOSED) or died (its lifeline gone), the owner
 * drains what it published (a dead producer's channel is simply drained and
 * dropped: what it enqueued is whole, what it did not was never sent), frees
 * the heap blocks it staged, lays the channels out again and release-stores
 * chan_ready[i] = the next generation.  It looks every AM_TAIL_CHECK idle
 * polls, and when a registrant that found no fresh entry asks (`recycle`).
 *
 * The summary is a hint: on idle polls the owner also looks at the channels
 * one by one, round robin, whatever their bits say (a peer that cleared a
 * bit must not strand a message whose sender now waits for its reply).
 *
 * Hostile memory.  A peer may scribble on any ring, packet, bulk block, ctl or
 * summary.  The owner reads each packet once, into a private copy, and derives
 * every address from its own counts; a ring's corruption shows as -EPROTO or a
 * wrong item (counted and dropped, as a corrupt packet); a summary bit set for
 * nothing costs a look.  The channel of a sender whose ring was scribbled on
 * may lose or stall that sender's messages, never another's, with one limit:
 * a long message of a live sender that a peer garbled (its flags cleared, or
 * its slot made to look empty) keeps its heap block allocated until that
 * sender leaves or dies, since nothing the owner can trust says the block is
 * not still to be published; a vandal can so fill the heap all senders share
 * and hold up their long messages (the shared queues have the same limit).
 * Mending it would take the block's position in the channel recorded where
 * the vandal cannot write (the sender's own page), or the sender freeing,
 * once its slot comes round again, a block the owner passed by.
 */
#ifndef SHMAM_CHANNEL_H
#define SHMAM_CHANNEL_H

#include <stdint.h>

#include "layout.h"
#include "shmam.h"
#include "spsc.h"

#define AM_CHAN_IDLE 64 /* empty polls of a channel before its summary bit goes */

/* One channel as pointers into a mapping. */
struct am_chan_view {
    void *ring;
    struct am_packet *packets; /* the ring's Q slots */
    struct am_chan_ctl *ctl;
    unsigned char *bulk;   /* B blocks */
    unsigned char *medium; /* Q payload areas: ring slot i's at i * AM_MEDIUM_BYTES */
};

/* The producer's end of one channel, in the sender's private memory (struct
 * am_peer): the ring's end, the next bulk ticket, and the give-back count as
 * last read. */
struct am_chan_tx {
    struct am_spsc_end end;
    uint64_t bulk_next;
    uint64_t bulk_freed;
    int open;
};

/* The owner's view of entry i's two channels, private (am_ep.chans[i]). */
struct am_chan_rx {
    struct am_spsc_end end[2];
    uint64_t next[2];      /* the position of the next packet */
    uint64_t bulk_next[2]; /* the bulk ticket the next bulk message should carry */
    unsigned idle[2];      /* polls that found the channel empty */
    unsigned char busy[2]; /* shared endpoints: a thread is draining it (its
                            * handlers run unlocked; chan_poll.c) */
    unsigned gen;          /* the generation the channels are laid out for */
};

struct am_peer;
struct am_msg;

/* chan_send.c: the producer's half.  open: after registering in peer's table,
 * our ends of our two channels there; 0 or -EPROTO.  send: as am__send, m's
 * long data already staged. */
int am__chan_open_tx(struct am_peer *peer);
int am__chan_send(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, struct am_msg *m);
/* A loan (loan.c): the channel's next bulk block once it is free, backing off
 * meanwhile (*buf its data); nothing is taken until am__chan_send sends a
 * bulk message whose data is that block, so a loan given up needs nothing.
 * 0, -EPIPE, -EPROTO, -ETIMEDOUT, -EAGAIN. */
int am__chan_lend(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, void **buf);

/* chan_poll.c: the owner's half.  open: at creation, before LIVE, every
 * entry's channels laid out for its first sender; 0 or -ENOMEM.  drain: every
 * channel of queue qid with its summary bit set; messages delivered.  chores:
 * on idle polls, a look at one more channel, and channels of departed
 * senders drained and laid out again (every AM_TAIL_CHECK, or when asked);
 * messages delivered.  free: at destroy. */
int am__chans_open(am_ep_t *ep);
int am__chan_drain(am_ep_t *ep, enum am_qid qid);
int am__chan_chores(am_ep_t *ep, int unasked);
void am__chans_free(am_ep_t *ep);

#endif
