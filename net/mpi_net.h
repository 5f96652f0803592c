/*
 * mpi_net.h - libshmam-mpi's transport between nodes: active messages over MPI
 * (net.h says what the runtime asks of it).  mpi_job.c finds the job and its
 * nodes and sets the transport up and down; mpi_send.c is the sender's half,
 * mpi_recv.c the receiver's.
 *
 * Wire.  One active message is one MPI message on the transport's own
 * communicator (a duplicate of MPI_COMM_WORLD), tag AM_TAG_MSG + queue: a
 * struct am_wire, then for a payload of up to AM_NET_INLINE bytes (bulk, or a
 * long message that small) the payload itself.  A longer long message sends
 * its header so, with no payload, and its data as a second MPI message, tag
 * AM_TAG_DATA + queue; the receiver takes it when it handles the header, into
 * its buffer or (one-copy) its region.
 * Bytes sent: AM_WIRE_ARGS + 4 * nargs for a message without payload,
 * sizeof(struct am_wire) + len with one.
 *
 * Order.  MPI does not let two messages of one sender, tag and communicator
 * overtake each other, and the receiver keeps AM_NET_RX receives posted per
 * queue (any source) and handles them in the order it posted them; so one
 * sender's messages to one queue run in the order sent, and a long message's
 * data pairs with its header.
 *
 * Room.  Per queue, as for the shared queues, so that a reply never waits
 * on requests (a receiver inside a request handler takes replies only): a
 * sender keeps up to AM_NET_TX messages of each queue in flight
 * (mpi_send.c); every AM_NET_SYNC-th message to one destination's queue is
 * synchronous (MPI_Issend: done once the receiver has taken it), and the next
 * such one waits for the one before.  So a receiver that does not poll holds
 * up each sender after at most 2 * AM_NET_SYNC messages per queue, as a full
 * queue does; they back off, polling.
 *
 * Trust.  MPI delivers what was sent, from the rank it says; the fields are
 * still checked (a broken or foreign sender): argument count, kind, length
 * against what arrived and against our limits, handler, region bounds.  A bad
 * message is counted and reported once like a corrupt packet (am__report_bad).
 *
 * Failure: a rank that dies ends the job (MPI's model: the default error
 * handler, MPI_ERRORS_ARE_FATAL, and mpiexec stopping the rest).
 */
#ifndef SHMAM_NET_MPI_H
#define SHMAM_NET_MPI_H

#include <mpi.h>
#include <stdint.h>

#include "internal.h"
#include "net.h"
#include "send.h"

enum { AM_TAG_MSG = 0x5a0, AM_TAG_DATA = 0x5a2 }; /* + qid */

struct am_wire {
    uint16_t handler;
    uint8_t nargs;
    uint8_t kind; /* enum am_kind */
    uint32_t len; /* payload bytes (inline or following) */
    uint64_t off; /* AM_LONG_AT: the offset in the receiver's region */
    uint32_t args[AM_MAX_ARGS];
};
#define AM_WIRE_ARGS 16 /* offsetof(struct am_wire, args) */
#define AM_WIRE_MAX (sizeof(struct am_wire) + AM_MAX_BULK) /* in a send slot */
#define AM_NET_INLINE (64u << 10) /* payloads up to this travel with the header */
#define AM_RX_BYTES (sizeof(struct am_wire) + AM_NET_INLINE) /* a posted receive */
_Static_assert(sizeof(struct am_wire) == AM_WIRE_ARGS + 4 * AM_MAX_ARGS, "wire header");

#define AM_NET_RX 64    /* receives kept posted per queue */
#define AM_NET_TX 128   /* MPI sends in flight per queue, a power of two */
#define AM_NET_SYNC 128 /* every this many to one rank's queue, a synchronous one */
/* A message with a payload of up to AM_MAX_BULK bytes is written into its send
 * slot.  A longer long message is copied into the queue's staging ring
 * (AM_NET_STAGE_BYTES, made on first use) and sent from there, so the send
 * returns at once and long messages stream as short ones do: up to
 * AM_NET_INLINE bytes as one message with its header (it lands in a posted
 * receive, as osu_bw's do), up to AM_NET_STAGE_MAX as the header and then the
 * data.  Longer data is sent from the caller's buffer, and the send waits
 * until MPI is done with it. */
#define AM_NET_STAGE_MAX (256u << 10)
#define AM_NET_STAGE_BYTES (8u << 20)

/* One MPI send in flight (mpi_send.c): its request, its wire bytes, and for
 * staged data the end of its bytes in the staging ring. */
struct am_tx {
    MPI_Request req;
    uint64_t stage_to; /* staged data: ring position past it; else 0 */
    unsigned char buf[AM_WIRE_MAX];
};

/* A queue's sends in flight, a ring: numbers [done, next) are; and its
 * staging ring, bytes [stage_head, stage_tail) in use (free-running
 * positions, released in the order the sends complete). */
struct am_txq {
    struct am_tx *tx; /* [AM_NET_TX] */
    uint64_t done, next;
    unsigned char *stage; /* [AM_NET_STAGE_BYTES], or NULL until needed */
    uint64_t stage_head, stage_tail;
};

/* Receives posted for one queue (mpi_recv.c), oldest first from `next`. */
struct am_rx {
    MPI_Request req[AM_NET_RX];
    unsigned char *buf[AM_NET_RX];
    unsigned next;
};

struct am_mpi {
    struct am_net pub; /* first: the runtime's view (net.h) */
    MPI_Comm comm;
    unsigned me;
    uint8_t *remote;    /* [nranks] */
    uint32_t *long_max; /* [nranks]: each rank's endpoint option */
    uint64_t *sent[2];  /* per queue, [nranks]: messages sent to each */
    uint64_t *received; /* [nranks]: messages received from each */
    uint64_t *sync[2];  /* per queue, [nranks]: ring number of the last
                         * synchronous message to each, + 1 (0: none) */
    struct am_txq txq[2];
    struct am_rx rx[2];
    unsigned char *data; /* long messages' data, long_cap bytes */
    size_t data_cap;
    unsigned long backoffs; /* rounds sends waited for room */
    int closing;            /* mpi_recv.c: receive, count and drop (close) */
    int busy[2];            /* mpi_recv.c: a queue's oldest receive is being handled */
};

static inline struct am_mpi *am_mpi_of(am_ep_t *ep)
{
    return (struct am_mpi *)ep->net;
}

/* mpi_reaper.c: start, before MPI_Init: a process that removes this rank's
 * names once it has gone (0 or -errno); name: tell it them. */
int am__mpi_reaper_start(void);
void am__mpi_reaper_name(const char *job, int rank);

/* mpi_send.c */
int am__mpi_send(am_ep_t *ep, unsigned dest, enum am_qid qid, const struct am_msg *m);
int am__mpi_tx_reap(struct am_txq *q); /* requests completed; MPI_SUCCESS or not */

/* mpi_recv.c.  post: every queue's receives, at attach.  progress: net.h's.
 * drain: close's first half, collective: receive (unrun) every message sent
 * to us.  cancel: its second half, the receives still posted. */
int am__mpi_rx_post(struct am_mpi *n);
int am__mpi_progress(am_ep_t *ep, int replies_only);
void am__mpi_drain(am_ep_t *ep);
void am__mpi_rx_cancel(struct am_mpi *n);

#endif
