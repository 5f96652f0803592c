/*
 * view.h - a process's view of a segment (view.c): process-local pointers
 * computed once from the offsets in the segment header.  Its own endpoint is
 * one view; each mapped peer is another (or, for a process that maps itself,
 * the same).  Also the segment's layout: its size and its first writing.
 */
#ifndef SHMAM_VIEW_H
#define SHMAM_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "heap.h"
#include "layout.h"
#include "lock.h"
#include "segment.h"

/* One queue of a mapped segment, as pointers into this process's mapping. */
struct am_queue_view {
    struct am_queue_send *send;
    struct am_queue_recv *recv;
    void *lock; /* NULL for lockfree */
    struct am_packet *packets;
    unsigned char *medium; /* slot i's payload area at medium + i * AM_MEDIUM_BYTES */
    struct am_bulk_state *bulk_state;
    unsigned char *bulk;
    uint32_t packets_n, bulk_n; /* Q and B, powers of two */
    struct am_heap_view heap;   /* long messages' blocks */
};

struct am_seg_view {
    struct am_segment seg;
    struct am_seg_header *hdr; /* read-only but in the owner's own view */
    unsigned char *senders;    /* sender entry i at senders + i * page */
    struct am_seg_shared *shared;
    struct am_queue_view q[2]; /* AM_REQUEST, AM_REPLY */
    enum am_claim claim;
    const struct am_lock_ops *lock; /* NULL for lockfree */
    uint32_t max_senders;
    uint32_t page;
    uint32_t long_max; /* the longest long message it takes */
    /* Per-sender kinds (channel.h); mpsc: queue AM_QUEUE_MPSC, the rest NULL/0. */
    enum am_queue_kind queue;
    const struct am_spsc_ops *ring;
    struct am_chan_summary *summary; /* [2] */
    unsigned char *chans;            /* channel (i, qid) at (2i + qid) * chan_bytes */
    uint64_t chan_bytes, chan_ring;  /* a channel's bytes, its ring's */
};

/* Sender entry i's channel of queue qid in view v (per-sender kinds). */
void am__chan_at(const struct am_seg_view *v, unsigned i, enum am_qid qid,
                 struct am_chan_view *c);

/* Sender entry i (i < max_senders), alone on its page. */
static inline struct am_sender *am__sender(const struct am_seg_view *v, unsigned i)
{
    return (struct am_sender *)(v->senders + (size_t)i * v->page);
}

/* Layout of a segment for cfg (options.h), and views onto one. */
struct am_config;
size_t am__layout_size(const struct am_config *cfg);
int am__layout_write(void *base, const struct am_config *cfg, const char *name);
int am__view_own(struct am_seg_view *v, const struct am_segment *seg);
int am__view_attach(struct am_seg_view *v, const struct am_segment *seg, const char *name);
/* Make the page of sender entry `index` writable in this view (to take its
 * lifeline and hold the entry) or read-only again.  0 or -errno. */
int am__view_entry_writable(struct am_seg_view *v, unsigned index, int writable);

#endif
