/*
 * channel.h - per-sender channels: the queue kinds lamport, fastforward, mcring
 * and bqueue (issue 9).  chan_send.c holds the producer's half, chan_poll.c
 * the owner's; the rings are spsc/'s.
 *
 * Lumetta and Culler chose many-to-one queues for memory and polling cost;
 * with a per-sender kind every registered sender (entry i of the owner's
 * table) has its own request channel and its own reply channel in the
 * owner's segment, written by that sender alone and read by the owner alone:
 *
 *   ring      an SPSC ring of 2^shift = Q slots (the endpoint's `packets`),
 *             whose items are message positions 0, 1, 2, ...
 *   ctl       struct am_chan_ctl: bulk blocks given back (owner-written)
 *   packets   2Q packets: message position p's packet is p % 2Q
 *   bulk      B bulk blocks (the endpoint's `bulk_blocks`), used in ticket
 *             order: ticket t is block t % B
 * Long messages' data stays in the endpoint's per-queue heaps (heap/, shared
 * by all senders: one of 2 x long_max per channel would be 2 x S heaps); their
 * packets go through the channels.
 *
 * Why items name packets and not hold them.  spsc/'s rings carry 64-bit
 * items, as their papers' benchmarks do; an AM packet is a cache line.  The
 * producer writes packet p % 2Q, then enqueues item p.  It may write packet p
 * once its enqueue of p - 1 succeeded: that took a slot the owner gave back
 * after dequeuing item p - 1 - Q, and the owner dequeues an item only after it
 * has finished with the message before it (p - 2 - Q >= p - 2Q), so packet p's
 * last user is done.  The give-back is a release and the producer's room check
 * an acquire in every kind (spsc.h), so the owner's reads of the old packet
 * happen before the producer's writes of the new.  A full ring therefore never
 * makes the producer wait to write, only to enqueue.  Bulk blocks are given
 * back by count (ctl->bulk_freed, release; the producer's acquire load).
 *
 * Send (chan_send.c): stage a long message in the heap (send.c); wait for a
 * bulk block if bulk; write packet p (state AM_STATE(lap of p in 2Q, who,
 * READY or READY_BULK), fields as the shared queues'); enqueue p and flush
 * (mcring holds items back otherwise), backing off and polling while the ring
 * is full; then a full fence, set our bit in the queue's summary if it is
 * clear, and wake the owner if it sleeps.
 *
 * Poll (chan_poll.c): for each set bit of a queue's summary, dequeue up to Q
 * items of that channel and deliver each: the item must be the position the
 * owner expects next and the packet's state the one that position's producer
 * writes, naming the entry's claimant; a bulk ticket must lie in [next, next +
 * B); everything else as the shared queues check it (deliver.c).  A channel
 * empty for AM_CHAN_IDLE polls has its bit cleared, then (after a full fence)
 * is looked at once more.  Fences pair: the producer's publish / fence / load
 * of the bit, against the owner's clear / fence / dequeue; and, as for the
 * shared queues, the producer's fence before loading `sleeping` with am_wait's.
 * A poll with many registered senders and one active costs a load per 64
 * senders more than with one.
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
 * Hostile memory.  A peer may scribble on any ring, packet, bulk block, ctl or
 * summary.  The owner reads each packet once, into a private copy, and derives
 * every address from its own counts; a ring's corruption shows as -EPROTO or a
 * wrong item (counted and dropped, as a corrupt packet); a summary bit set for
 * nothing costs a look.  The channel of a sender whose ring was scribbled on
 * may lose or stall that sender's messages, never another's.
 */
#ifndef SHMAM_CHANNEL_H
#define SHMAM_CHANNEL_H

#include <stdint.h>

#include "layout.h"
#include "spsc.h"

#define AM_CHAN_IDLE 64 /* empty polls of a channel before its summary bit goes */

/* One channel as pointers into a mapping. */
struct am_chan_view {
    void *ring;
    struct am_chan_ctl *ctl;
    struct am_packet *packets; /* 2Q */
    unsigned char *bulk;       /* B blocks */
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
    uint64_t next[2];      /* the position of the next item */
    uint64_t bulk_next[2]; /* the bulk ticket the next bulk message should carry */
    unsigned idle[2];      /* polls that found the channel empty */
    unsigned gen;          /* the generation the channels are laid out for */
};

#endif
