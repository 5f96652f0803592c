/*
 * internal.h - the runtime's private types and helpers (am__ prefix).
 *
 * A process sees a segment through a `struct am_seg_view`: process-local pointers
 * computed once from the offsets in the segment header.  Its own endpoint is one
 * view; each mapped peer is another (or, for a process that maps itself, the same).
 */
#ifndef SHMAM_INTERNAL_H
#define SHMAM_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "call.h"
#include "channel.h"
#include "heap.h"
#include "layout.h"
#include "lifeline.h"
#include "lock.h"
#include "net.h"
#include "segment.h"
#include "shmam.h"

#define AM_INTERNAL_HANDLERS 2 /* the job barrier's */
#define AM_HANDLER_TOTAL (AM_MAX_HANDLERS + AM_INTERNAL_HANDLERS)
#define AM_H_BARRIER_ARRIVE (AM_MAX_HANDLERS + 0)
#define AM_H_BARRIER_RELEASE (AM_MAX_HANDLERS + 1)
#define AM_MAX_PEERS 65536u
#define AM_SOURCE_UNKNOWN (~0u) /* a sender whose endpoint can no longer be opened */

/* Resolved creation options (from struct am_ep_opts, environment, defaults). */
struct am_config {
    enum am_claim claim;
    enum am_queue_kind queue;
    enum am_shm backend;
    uint32_t packets, bulk_blocks, max_senders;
    uint32_t long_max;   /* the longest long message */
    uint32_t abandon_ms; /* longest a waiting owner sleeps on a stuck claim */
    int32_t send_timeout_ms; /* longest a send waits for room; -1: no limit */
};

/* Points where a test may stall or park a sender (am__claim_stall_hook). */
enum am_hook {
    AM_HOOK_CLAIMED,      /* slot claimed, tail not yet moved past it */
    AM_HOOK_BULK_CLAIMED, /* bulk block claimed, bulk tail not yet moved past it,
                           * packet not yet */
    AM_HOOK_LOCKED,       /* holding the queue's lock, nothing claimed yet */
    AM_HOOK_FILLING,      /* packet claimed, not yet filled */
    AM_HOOK_BULK_HALF,    /* half of the bulk data copied */
    AM_HOOK_REGISTERING,  /* sender entry taken (lifeline held, BUSY), not READY */
    AM_HOOK_CREATING,     /* endpoint segment made and laid out, not yet LIVE */
    AM_HOOK_LONG_STAGED,  /* long message's heap block allocated and filled,
                           * packet not yet claimed */
    AM_HOOK_CHAN_FILLED,  /* per-sender channel: packet written, item not yet
                           * enqueued */
    AM_HOOK_NET_SENT,     /* transport (net/): a message's header handed to MPI,
                           * the send not returned, long data apart not yet */
    AM_HOOK_NET_CLOSING,  /* transport: closing, counts exchanged, the messages
                           * sent to us not yet all taken */
    AM_HOOK_BACKOFF,      /* a send waiting for room, before a round's poll */
    AM_HOOK_COUNT
};

/* One queue of a mapped segment, as pointers into this process's mapping. */
struct am_queue_view {
    struct am_queue_send *send;
    struct am_queue_recv *recv;
    void *lock; /* NULL for lockfree */
    struct am_packet *packets;
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

/* A peer this endpoint may send to.  Who may hold one (or a view into it)
 * across a poll: see peers.c's section below. */
struct am_peer {
    struct am_seg_view view_store;
    struct am_seg_view *view;   /* &view_store, or the endpoint's own view for self */
    unsigned sender_index;      /* our entry in the peer's sender table */
    unsigned who;               /* our claimant id there: AM_WHO(index, generation) */
    int learned;                /* mapped because it sent to us, not by am_ep_map */
    unsigned long backoffs;     /* rounds our sends to it waited (see send.c) */
    uint64_t tail_hint[2];      /* onecas: per queue, our last ticket + 1 (mpsc_send.c) */
    unsigned long streaming[2]; /* per queue: our ep->delivered at our last send
                                 * there (mpsc_send.c, prefetch_ahead) */
    struct am_segment region;   /* its one-copy region, mapped on first use */
    size_t region_bytes;        /* its size as read then: our bound; 0: unmapped */
    struct am_chan_tx tx[2];    /* per-sender kinds: our channels' ends there */
    int dropped;                /* forgotten by its endpoint, not yet closed */
    struct am_peer *next_drop;  /* on the endpoint's list of dropped peers */
    char name[AM_NAME_MAX];
};

/* Which local peer index a sender entry of our own table resolved to. */
struct am_source {
    unsigned who; /* the claimant id resolved; 0: unresolved */
    unsigned index;
};

/* The claim the head of one of our queues last waited on: stuck now while
 * ticket == head + 1 (mpsc_poll.c). */
struct am_stuck {
    uint64_t ticket; /* that head ticket + 1; 0: none yet */
};

#define AM_EP_MAGIC 0x616d6570u /* "amep": a live am_ep_t */
#define AM_EP_DEAD 0x64656164u  /* "dead": poisoned by am_ep_destroy */

struct am_token {
    am_ep_t *ep;
    unsigned source; /* local peer index of the sender */
    uint8_t qid;     /* queue the message came in on */
    uint8_t replied;
    uint32_t call, room; /* a call's request: its packet's call and room (call.c) */
};

/* How long the send in progress on an endpoint may wait for room (send.c,
 * am__backoff): for ever, `ms` from its first wait, until `deadline` (ns on
 * the monotonic clock), or not at all (-EAGAIN: call.c keeps the reply). */
enum am_send_mode { AM_SEND_FOREVER = 0, AM_SEND_MS, AM_SEND_DEADLINE, AM_SEND_NOWAIT };
struct am_send_limit {
    enum am_send_mode mode;
    int ms;
    int64_t deadline; /* AM_SEND_MS: set at the first wait */
};

struct am_ep {
    unsigned magic; /* AM_EP_MAGIC while the endpoint exists */
    struct am_seg_view own;
    char name[AM_NAME_MAX];
    enum am_shm backend;
    int unlinked; /* own name already removed */
    am_handler_t handlers[AM_HANDLER_TOTAL];
    struct am_peer **peers;    /* by index; NULL where unmapped */
    unsigned peers_n;          /* length of peers[] */
    unsigned peer_holds;       /* depth of calls holding peers across polls */
    struct am_peer *drops;     /* peers dropped meanwhile, closed when that ends */
    struct am_source *sources; /* by sender index in own table */
    unsigned in_handler;       /* depth of handler calls now running */
    unsigned long bad_packets;
    unsigned long abandoned;                 /* dead senders' claims skipped */
    unsigned long delivered, delivered_bulk; /* messages, of them bulk: copied
                                              * into the header for tools after a drain */
    struct am_stuck stuck[2];                /* per queue */
    uint64_t head[2];                        /* per queue: the next ticket to deliver; the
                                              * shared recv->head is only a copy, for show */
    unsigned idle_polls;                     /* polls that found nothing, for tail checks */
    uint32_t abandon_ms;
    unsigned barrier_arrived; /* job barrier: arrivals seen (rank 0) */
    unsigned barrier_epoch;   /* job barrier: releases seen */
    int holding;              /* in am_init: hold messages for user handlers */
    struct am_segment region; /* am_region_create's NAME:r; base NULL: none */
    size_t region_bytes;      /* our own record of its size, the receiver's bound */
    struct am_pending *pending, *pending_last; /* held messages, oldest first */
    struct am_chan_rx *chans; /* per-sender kinds: by sender index; else NULL */
    unsigned rescan;          /* per-sender kinds: the next channel to look at
                               * regardless of the summary (chan_poll.c) */
    struct am_net *net;       /* under mpiexec: ranks of other nodes (net.h); else NULL */
    unsigned net_tick;        /* polls since the transport was last asked (net.c) */
    unsigned net_every;       /* ask it every this many polls */
    unsigned net_hot;         /* polls left that ask every time */
    struct am_calls *calls;   /* calls made (call.c); NULL until the first */
    struct am_owed *owed;     /* call replies not yet placed (call.c), oldest first */
    unsigned owed_tick;       /* polls since they were last tried */
    int send_timeout_ms;      /* option: a blocked send's limit; -1: none */
    struct am_send_limit send_limit; /* the send in progress (send.c) */
    int64_t spin_ns;          /* wait.c: how long a wait polls before it sleeps */
};

/* options.c */
int am__config_resolve(const struct am_ep_opts *opts, struct am_config *cfg);
int am__name_valid(const char *name);
int am__claim_parse(const char *s, enum am_claim *out);
int am__queue_parse(const char *s, enum am_queue_kind *out);
const struct am_lock_ops *am__claim_lock(enum am_claim c);
int am__claim_locked(enum am_claim c);      /* a lock decides (not lockfree, onecas) */
int am__claim_tail_trails(enum am_claim c); /* the tail may lie behind the head (onecas) */

/* view.c: layout of a segment and views onto it */
size_t am__layout_size(const struct am_config *cfg);
int am__layout_write(void *base, const struct am_config *cfg, const char *name);
int am__ep_unlink(am_ep_t *ep);
int am__ep_stale(const struct am_segment *seg); /* endpoint.c: its owner is gone */
int am__view_own(struct am_seg_view *v, const struct am_segment *seg);
int am__view_attach(struct am_seg_view *v, const struct am_segment *seg, const char *name);
/* Make the page of sender entry `index` writable in this view (to take its
 * lifeline and hold the entry) or read-only again.  0 or -errno. */
int am__view_entry_writable(struct am_seg_view *v, unsigned index, int writable);

/* senders.c: who is at the other end.
 *   register  any process, concurrently: takes an entry for this thread (its
 *             lifeline, held for life), never blocks; 0 or -ENOSPC.
 *   release   the registered thread, after its last send to v.
 *   who_dead  any process: has claimant `who` died or left?  Never 1 for a live
 *             sender; final.  Plain loads of pages only their holders write.
 *   peer_alive  any process: is v's owner there (LIVE and its lifeline held)?
 *   source_index  the owner, delivering: claimant -> local peer index (maps the
 *             sender on first contact); -1 for an id no entry ever had. */
int am__sender_register(struct am_seg_view *v, const char *name, unsigned *index,
                        unsigned *who);
void am__sender_release(struct am_seg_view *v, unsigned index);
int am__who_dead(const struct am_seg_view *v, unsigned who);
/* Inline: every send and every backoff round asks it (out of line, the call
 * cost the many-to-one test 15% of its throughput). */
static inline int am__peer_alive(const struct am_seg_view *v)
{
    return AO_load(&v->hdr->state) == AM_SEG_LIVE &&
           !am__lifeline_gone(&v->hdr->owner_life);
}
int am__source_index(am_ep_t *ep, unsigned sender, unsigned *index);

/* mpsc_send.c, send.c: the sender's half.  The claim one step at a time (see its header):
 * begin, then try until 1 (claimed; never blocks: 0 means back off and try
 * again; -EPIPE, -EPROTO), any number of senders at once.  orphans_ask: any
 * sender waiting for a bulk block.  publish: the sender that completed the
 * claim, once (release-stores READY).  am__send: the owner of ep, blocks while
 * the queue (or for a long message the heap) is full, polling ep; the errors
 * of am_request.  report_broken: a sender that found a peer's segment
 * unusable; -EPROTO, one line on stderr. */
enum am_kind { AM_SHORT, AM_BULK, AM_LONG, AM_LONG_AT, AM_CALL_REPLY };
struct am_msg {
    enum am_kind kind;
    unsigned handler;
    const uint32_t *args;
    int nargs;
    const void *data; /* bulk and long: the payload */
    size_t len;
    uint64_t off; /* AM_LONG: its heap block once staged; AM_LONG_AT: the
                   * offset in the destination's region */
    uint32_t call, room; /* the packet's call fields (layout.h); AM_CALL_REPLY:
                          * a call's reply, len bytes already in its room */
};
struct am_claim_state {
    uint64_t ticket, bulk_ticket;
    uint64_t hint; /* onecas: where the sender's last claim left the tail */
    unsigned who;  /* the claimant's id in the destination segment */
    int want_bulk;
    int stage;
};
void am__claim_begin(struct am_claim_state *c, int want_bulk, unsigned who);
int am__claim_try(struct am_seg_view *v, struct am_queue_view *q, struct am_claim_state *c);
void am__claim_orphans_ask(struct am_seg_view *v, enum am_qid qid);
extern void (*am__claim_stall_hook)(enum am_hook where);
static inline void am__hook(enum am_hook where)
{
    if (__builtin_expect(am__claim_stall_hook != NULL, 0))
        am__claim_stall_hook(where);
}

void am__publish(struct am_queue_view *q, const struct am_claim_state *c,
                 const struct am_msg *m);
/* mpsc_send: am__send's sender half for a shared queue (claim, publish, wake),
 * once send.c has checked m and staged its long data; 0, -EPIPE or -EPROTO. */
int am__mpsc_send(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                  const struct am_msg *m);
/* Both kinds' senders.  packet_fill: a claimed packet's fields from m, and a
 * bulk message's data into `bulk` (its ticket in the packet); not the state.
 * blocked_poll: polls ep as a send blocked on queue qid may (both queues for
 * a request, the reply queue for a reply; the transport when that found
 * nothing), for the transports' waits and am_wait's too; messages run.
 * backoff: one round of waiting for room in peer's queue qid, polling ep,
 * inside a peer hold (peers.c); 0, or -EPIPE once the peer has gone or the
 * poll dropped it, -ETIMEDOUT once ep->send_limit has passed, -EAGAIN at
 * once (before polling) for a send that may not wait; `ask` (if any) now and
 * then once spinning has failed.
 * count_backoffs: rounds a send waited, for tools.
 * wake_if_asleep: after a publish, a full fence, then wake dest's owner if it
 * sleeps in am_wait. */
struct spin;
void am__packet_fill(struct am_packet *p, const struct am_msg *m, unsigned char *bulk,
                     uint64_t bulk_ticket);
int am__blocked_poll(am_ep_t *ep, enum am_qid qid);
int am__backoff(am_ep_t *ep, struct am_peer *peer, enum am_qid qid,
                void (*ask)(struct am_seg_view *, enum am_qid), struct spin *sp,
                unsigned *yields);
void am__count_backoffs(struct am_peer *peer, unsigned rounds);
void am__wake_if_asleep(struct am_seg_shared *h);
int am__send(am_ep_t *ep, unsigned dest, enum am_qid qid, struct am_msg *m);
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
int am__report_broken(const struct am_seg_view *v, const char *why);

/* poll.c, mpsc_poll.c: the receiver's half; the owner only, never inside a handler, never
 * blocks.  drain: one queue, returns messages delivered (acquire).  poll: both
 * queues and held messages, plus repairs on idle polls.  stuck: is a head
 * waiting on a claim (am_wait then sleeps briefly).  report_bad: count a
 * corrupt packet, say so once.  wait.c: wake (any sender) bumps the futex
 * word and wakes a sleeping owner. */
int am__drain(am_ep_t *ep, enum am_qid qid);
int am__mpsc_drain(am_ep_t *ep, enum am_qid qid);
/* mpsc_chores: the shared queues' repairs on idle polls (asked-for bulk and
 * heap blocks; the shared tails when `due`); delivers nothing, returns 0. */
int am__mpsc_chores(am_ep_t *ep, int due);
int am__poll(am_ep_t *ep);
int am__stuck(const am_ep_t *ep);
void am__report_bad(am_ep_t *ep, const char *why);
void am__wake(struct am_seg_shared *s);

/* deliver.c: both receivers' halves, once they hold a private copy m of a
 * packet from claimant `who`.  payload_long: the data of a packet that is not
 * bulk (none, a block of heap h, or bytes of our region); NULL or why it is
 * bad.  run: check the rest, run the handler (or hold the message during
 * am_init), count it or report why it is bad (why: the caller's verdict so
 * far), and give back its heap block, if it has one. */
struct am_payload {
    void *data;
    size_t len;
    int bulk;  /* data is a bulk block (counted as bulk) */
    int block; /* data is a heap block of `heap`, to give back */
    struct am_heap_view *heap;
};
const char *am__payload_long(am_ep_t *ep, struct am_heap_view *h, const struct am_packet *m,
                             unsigned who, struct am_payload *pl);
void am__run(am_ep_t *ep, enum am_qid qid, const struct am_packet *m, unsigned who,
             const struct am_payload *pl, const char *why);
/* run_from: the same for a message whose sender is known: local peer index
 * `source` (a remote rank, net/), and whose data is not a heap block. */
void am__run_from(am_ep_t *ep, enum am_qid qid, const struct am_packet *m, unsigned source,
                  const struct am_payload *pl, const char *why);
/* After a drain that delivered n messages: copy the counters for tools (two
 * stores to the owner's own header line, not per message); returns n. */
int am__drained(am_ep_t *ep, int n);
/* Handlers running now on this thread, of any endpoint: am_ep_create, which
 * has no endpoint to ask (ep->in_handler), refuses to run inside one.
 * Initial-exec: two plain increments per message, even in libshmam.so. */
extern _Thread_local unsigned am__handlers_running
    __attribute__((tls_model("initial-exec")));
/* Run handler h of ep for the message of tok (deliver.c, pending.c): the one
 * place handlers are called, so both counts of running handlers hold. */
static inline void am__call_handler(am_ep_t *ep, am_handler_t h, am_token_t *tok,
                                    const uint32_t *args, int nargs, void *data, size_t len)
{
    ep->in_handler++;
    am__handlers_running++;
    h(tok, args, nargs, data, len);
    am__handlers_running--;
    ep->in_handler--;
    if (__builtin_expect(tok->call != 0, 0) && !tok->replied)
        am__call_unreplied(tok); /* every call ends: an empty reply */
}

/* chan_send.c: the producer's half of a per-sender channel (channel.h).
 * open: after registering in peer's table, our ends of our two channels
 * there; 0 or -EPROTO.  send: as am__send, m's long data already staged. */
int am__chan_open_tx(struct am_peer *peer);
int am__chan_send(am_ep_t *ep, struct am_peer *peer, enum am_qid qid, struct am_msg *m);

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

/* A live endpoint handle (not NULL, not destroyed): one load, inline because
 * every call on the fast path makes it. */
static inline int am__ep_ok(const am_ep_t *ep)
{
    return ep && ep->magic == AM_EP_MAGIC;
}

/* job.c: the barrier's internal handlers, set on every endpoint */
void am__barrier_handlers(am_ep_t *ep);

/* pending.c: messages that arrive during am_init, before the user's handlers.
 * hold: the owner, from delivery; a copy, 0 or -ENOMEM.  run: the owner, from
 * its first poll after am_init; runs them in arrival order, returns how many.
 * free: at am_ep_destroy. */
struct am_pending;
int am__pending_hold(am_ep_t *ep, const am_token_t *tok, const struct am_packet *m,
                     const void *data, size_t len);
int am__pending_run(am_ep_t *ep);
void am__pending_free(am_ep_t *ep);

/* region.c: one-copy long messages.  write: the sender, before claiming its
 * packet; maps the destination's region on first use and copies m's data in
 * at m->off, bounds-checked by the size it read then; 0, -ENXIO (no region),
 * -EMSGSIZE (does not fit), -EPROTO.  close: unmap a peer's region.
 * destroy: the owner's region goes with its endpoint.  unlink_stale: a
 * creator reclaiming a dead owner's name removes its region too, if its mark
 * says its owner has gone.  name: endpoint `name`'s region name "NAME:r" into
 * buf; of: 1 if seg_name is a region's name, its endpoint's into name.
 * state: what a segment opened under endpoint `name`'s region name is (the
 * region.c header says how it is judged). */
int am__region_write(struct am_peer *peer, const struct am_msg *m);
void am__region_close(struct am_peer *peer);
void am__region_destroy(am_ep_t *ep);
void am__region_unlink_stale(enum am_shm b, const char *name);
int am__region_name(const char *name, char *buf, size_t n);
int am__region_of(const char *seg_name, char *name, size_t n);
enum { AM_REGION_FOREIGN = -1, AM_REGION_LIVE = 0, AM_REGION_GONE = 1 };
int am__region_state(const struct am_segment *s, const char *name, unsigned *pid);

/* peers.c: the endpoints ep may send to, by index; the owner only.
 *   peer      the peer at an index, or NULL.
 *   learn     the index of a sender (mapping it, in a free index or one whose
 *             peer has gone); add: map a name at an index; drop: forget one.
 *   close     every peer, at am_ep_destroy.
 * Which calls may drop a peer: am__peer_drop, so am__peer_add and
 * am__peer_learn; hence am__source_index, so every delivery and every poll
 * (am__poll, am__drain, am__blocked_poll, am__backoff, am_poll, am_wait, the
 * transports' waits), and am_ep_map (refused in handlers).
 * Who may hold a struct am_peer, or a view or pointer into it, across them:
 * only a call between ep->peer_holds++ and am__peers_unhold (am__send, for
 * the send and the handlers its backoff runs).  A peer dropped then is only
 * unlinked from peers[] and marked `dropped`; the holder checks `dropped`
 * after every poll and gives up with -EPIPE, and the outermost unhold closes
 * it.  Anyone else looks a peer up again by index after a poll (job.c); the
 * MPI transport's sends (net/) hold no peer, only state of their own by rank. */
struct am_peer *am__peer(am_ep_t *ep, unsigned index);
unsigned am__peer_learn(am_ep_t *ep, const char *name);
int am__peer_add(am_ep_t *ep, unsigned index, const char *name);
void am__peers_close(am_ep_t *ep);
void am__peer_drop(am_ep_t *ep, unsigned index);
void am__peers_close_dropped(am_ep_t *ep);
/* End a peer hold; the outermost closes the peers dropped meanwhile.  Inline:
 * every send ends one. */
static inline void am__peers_unhold(am_ep_t *ep)
{
    if (--ep->peer_holds == 0 && __builtin_expect(ep->drops != NULL, 0))
        am__peers_close_dropped(ep);
}

#endif
