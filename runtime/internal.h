/*
 * internal.h - what every module of the runtime shares (am__ prefix): the
 * endpoint (struct am_ep) and its peers, the message token, the test hooks.
 * Each module's own calls are in the header beside it (view.h, options.h,
 * senders.h, send.h, mpsc.h, channel.h, polling.h, deliver.h, waiting.h,
 * pending.h, region.h, peers.h, endpoint.h, job.h, segment.h, lifeline.h, slip.h,
 * call.h, net.h, threads.h).
 */
#ifndef SHMAM_INTERNAL_H
#define SHMAM_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "channel.h"
#include "layout.h"
#include "segment.h"
#include "shmam.h"
#include "slip.h"
#include "threads.h"
#include "view.h"

#define AM_INTERNAL_HANDLERS 3 /* the job barrier's; a loan given back's */
#define AM_HANDLER_TOTAL (AM_MAX_HANDLERS + AM_INTERNAL_HANDLERS)
#define AM_H_BARRIER_ARRIVE (AM_MAX_HANDLERS + 0)
#define AM_H_BARRIER_RELEASE (AM_MAX_HANDLERS + 1)
#define AM_H_GIVEN_BACK (AM_MAX_HANDLERS + 2) /* runs nothing (loan.c) */
#define AM_MAX_PEERS 65536u
#define AM_SOURCE_UNKNOWN (~0u) /* a sender whose endpoint can no longer be opened */

/* Points where a test may stall or park a sender (am__claim_stall_hook). */
enum am_hook {
    AM_HOOK_CLAIMED,      /* slot claimed, tail not yet moved past it */
    AM_HOOK_BULK_CLAIMED, /* bulk block claimed, bulk tail not yet moved past it,
                           * packet not yet */
    AM_HOOK_LOCKED,       /* holding the queue's lock, nothing claimed yet */
    AM_HOOK_FILLING,      /* packet claimed, not yet filled */
    AM_HOOK_BULK_HALF,    /* half of the bulk (or medium) data copied */
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
    AM_HOOK_ANON_MADE,    /* anonymous endpoint's segment made, not yet sealed
                           * (System V: not yet marked for removal) */
    AM_HOOK_CALL_ROOMED,  /* a call's record and reply room taken, its request
                           * not yet sent (call.c) */
    AM_HOOK_CALL_WRITTEN, /* a server: a call's reply data written into the
                           * caller's room, the reply not yet sent (call.c) */
    AM_HOOK_LENT,         /* a loan's room taken (a bulk block claimed, a heap
                           * block allocated), nothing written yet (loan.c) */
    AM_HOOK_COUNT
};

/* Tests set this to widen the window between steps (a yield, a stall) or to
 * park a process at one of them (enum am_hook); defined in send.c. */
extern void (*am__claim_stall_hook)(enum am_hook where);
static inline void am__hook(enum am_hook where)
{
    if (__builtin_expect(am__claim_stall_hook != NULL, 0))
        am__claim_stall_hook(where);
}

/* A peer this endpoint may send to.  Who may hold one (or a view into it)
 * across a poll: see peers.h. */
struct am_peer {
    struct am_seg_view view_store;
    struct am_seg_view *view;   /* &view_store, or the endpoint's own view for self */
    unsigned sender_index;      /* our entry in the peer's sender table */
    unsigned who;               /* our claimant id there: AM_WHO(index, generation) */
    int learned;                /* mapped because it sent to us, not by am_ep_map */
    volatile AO_t backoffs;     /* rounds our sends to it waited (see send.c) */
    uint64_t tail_hint[2];      /* onecas: per queue, our last ticket + 1 (mpsc_send.c) */
    unsigned long streaming[2]; /* per queue: our ep->delivered at our last send
                                 * there (mpsc_send.c, prefetch_ahead) */
    struct am_segment region;   /* its one-copy region, mapped on first use */
    size_t region_bytes;        /* its size as read then: our bound; 0: unmapped */
    struct am_chan_tx tx[2];    /* per-sender kinds: our channels' ends there */
    uint64_t lent[2];           /* per queue: the bulk ticket + 1 of the block a
                                 * loan in place holds there (loan.c), else 0;
                                 * the owner thread's (a shared endpoint's loans
                                 * are private buffers) */
    int dropped;                /* forgotten by its endpoint, not yet closed */
    int kept_by_keeper;         /* opened on the keeper thread (threads.h) */
    unsigned long serial;       /* unique per endpoint: which peer a kept reply's
                                 * caller was (kept.c) */
    pthread_mutex_t tx_mu[2];   /* shared endpoints: per queue, its sends (threads.h) */
    volatile AO_t wake_fd;      /* its owner's pipe, opened for am_ep_fd's
                                 * signal: fd + 1, 0 not yet (evfd.c) */
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
    unsigned source;        /* local peer index of the sender */
    unsigned long serial;   /* a request's: that peer's serial at delivery, so a
                             * reply goes to it only (send.c, call.c, kept.c); 0
                             * unknown (a remote rank's) */
    uint8_t qid;            /* queue the message came in on */
    uint8_t replied;        /* replied, or kept for a later reply (kept.c) */
    uint8_t lent;           /* a reply's loan is out (loan.c) */
    uint32_t call, room;    /* a call's request: its packet's call and room (call.c) */
    uintptr_t handle;       /* what its handler got as its am_token_t * (threads.h) */
    struct am_token *outer; /* the handler frame this one runs inside, on this
                             * thread (threads.h) */
};

/* How long the send in progress on this thread may wait for room (send.c,
 * am__backoff): for ever, `ms` from its first wait, until `deadline` (ns on
 * the monotonic clock), or not at all (-EAGAIN: call.c keeps the reply).
 * Per thread, saved and restored around each public send, so the sends a
 * handler makes inside another's backoff, and the sends of a shared
 * endpoint's threads, each have their own. */
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
    struct am_slip slip[2];                  /* per queue: its stream (slip.c) */
    AO_t sends;                              /* messages we sent: a hint (slip.h) */
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
    struct am_owed *owed;     /* call replies not yet placed (call.c), oldest first;
                               * a shared endpoint's under mt.calls_mu */
    unsigned owed_tick;       /* polls since they were last tried */
    int send_timeout_ms;      /* option: a blocked send's limit; -1: none */
    int64_t spin_ns;          /* wait.c: how long a wait polls before it sleeps */
    struct am_mt mt;          /* threads: owner, shared mode, locks, fd (threads.h) */
    struct am_rdv *rdv;       /* listening, a caller's door, or connected
                               * (rendezvous.h); else NULL */
};

extern _Thread_local struct am_send_limit am__send_limit
    __attribute__((tls_model("initial-exec")));

/* A live endpoint handle (not NULL, not destroyed): one load, inline because
 * every call on the fast path makes it. */
static inline int am__ep_ok(const am_ep_t *ep)
{
    return ep && ep->magic == AM_EP_MAGIC;
}

/* A live endpoint that this thread may call on: 0, -EINVAL or -EPERM. */
static inline int am__ep_use(const am_ep_t *ep)
{
    return am__ep_ok(ep) ? am__ep_thread(&ep->mt) : -EINVAL;
}

/* Is this thread inside a handler of ep?  (threads.h: a counter while ep is
 * owned, a walk of this thread's handler frames once it is shared.) */
static inline int am__in_handler(const am_ep_t *ep)
{
    return __builtin_expect(ep->mt.shared, 0) ? am__in_handler_shared(ep)
                                              : ep->in_handler != 0;
}

/* The token of the handler running now on this thread that got handle h,
 * or NULL (h is another thread's, or its handler has returned). */
static inline am_token_t *am__tok_find(const am_token_t *h)
{
    for (am_token_t *t = am__tok_cur; t; t = t->outer)
        if (t->handle == (uintptr_t)h)
            return t;
    return NULL;
}

#endif
