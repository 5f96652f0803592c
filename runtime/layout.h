/*
 * layout.h - the shared-memory ABI of a shmam endpoint segment.
 *
 * Every process that maps a segment reads these structures, so they hold only
 * fixed-width fields and offsets (a segment maps at a different address in each
 * process: never a pointer).  A change to any of them bumps AM_LAYOUT_VERSION.
 *
 *   segment
 *     struct am_seg_header      identity, sizes, claim algorithm, owner, wake word
 *     struct am_sender[S]       who may send here: one registered name per sender
 *     request queue, reply queue, each:
 *       struct am_queue_send    128-byte block written by senders: tails, lock
 *       lock state              (locked algorithms only) lock_ops.size(S) bytes
 *       struct am_queue_recv    128-byte block written by the owner: heads
 *       struct am_packet[Q]     one cache line each
 *       AO_t bulk_state[B]      one cache line each
 *       bulk data[B]            AM_BULK_BYTES each, cache-line aligned
 *
 * Slot states and laps.  Tails and heads are free-running 64-bit counters: ticket
 * t names slot t % N in lap t / N.  A slot's state word is (lap << 2) | type, and
 * a free slot says which lap it is free for, so a claim for ticket t succeeds only
 * when the slot reads AM_STATE(t / N, AM_FREE).  Without the lap a sender that
 * stalls between taking its ticket and claiming its slot could lose the slot to a
 * sender one lap later and per-sender FIFO order would break.
 */
#ifndef SHMAM_LAYOUT_H
#define SHMAM_LAYOUT_H

#include <atomic_ops.h>
#include <stddef.h>
#include <stdint.h>

#include "shmam.h"

#define AM_MAGIC UINT64_C(0x4d414d48535f4d41) /* "AM_SHMAM" */
#define AM_LAYOUT_VERSION 1u
#define AM_LINE 64u              /* cache line: one packet, one bulk state */
#define AM_BLOCK 128u            /* sender/receiver blocks: adjacent-line prefetch */
#define AM_BULK_BYTES ((unsigned)AM_MAX_BULK) /* one bulk block */
#define AM_NAME_MAX 48u          /* endpoint name, with its NUL */
#define AM_MAX_PACKETS 65536u
#define AM_MAX_BULK_BLOCKS 4096u
#define AM_MAX_SENDERS 1024u

/* Packet and bulk-block types, the low two bits of a state word. */
enum am_type { AM_FREE = 0, AM_CLAIMED = 1, AM_READY = 2, AM_READY_BULK = 3 };
#define AM_STATE(lap, type) (((AO_t)(lap) << 2) | (AO_t)(type))
#define AM_STATE_TYPE(s) ((unsigned)((s) & 3u))
#define AM_STATE_LAP(s) ((s) >> 2)

/* Claim algorithms as stored in the header (names in claim.c). */
enum am_claim {
    AM_CLAIM_LOCKFREE = 0,
    AM_CLAIM_TAS,
    AM_CLAIM_TTAS,
    AM_CLAIM_TICKET,
    AM_CLAIM_ANDERSON,
    AM_CLAIM_MUTEX,
    AM_CLAIM_COUNT
};

/* Segment life: the owner sets LIVE once initialised, CLOSED before unmapping. */
enum am_seg_state { AM_SEG_INIT = 0, AM_SEG_LIVE = 1, AM_SEG_CLOSED = 2 };

struct am_seg_header {
    uint64_t magic;
    uint32_t version;
    uint32_t claim;        /* enum am_claim */
    uint32_t packets;      /* Q, power of two */
    uint32_t bulk_blocks;  /* B, power of two */
    uint32_t max_senders;  /* S */
    uint32_t owner_pid;
    uint64_t segment_size;
    uint64_t senders_off;  /* offsets from the segment start */
    uint64_t send_off[2];  /* AM_REQUEST, AM_REPLY: struct am_queue_send */
    uint64_t recv_off[2];  /* struct am_queue_recv */
    uint64_t lock_off[2];  /* 0 for lockfree */
    uint64_t packets_off[2];
    uint64_t bulk_state_off[2];
    uint64_t bulk_off[2];
    char name[AM_NAME_MAX];
    AO_t state;            /* enum am_seg_state; release-stored by the owner */
    AO_t bad_packets;      /* corrupt packets seen by the owner (statistics) */
    /* Wake-up for am_wait, on its own line (32-bit: futex words). */
    _Alignas(AM_LINE) unsigned int sleeping; /* owner is (about to be) asleep */
    unsigned int wake_seq;                   /* futex word, bumped by senders */
};

/* One registered sender.  A sender claims a free entry with CAS (FREE->BUSY),
 * writes its name and pid, then release-stores READY; its index is the `source`
 * of every packet it puts here.  CLOSED: the sender has gone, but its packets
 * may still be queued, so its name stays readable until the entry is reused. */
enum am_sender_state {
    AM_SENDER_FREE = 0,
    AM_SENDER_BUSY = 1,
    AM_SENDER_READY = 2,
    AM_SENDER_CLOSED = 3
};
struct am_sender {
    AO_t state;
    uint32_t pid;
    uint32_t pad;
    char name[AM_NAME_MAX];
};

enum am_qid { AM_REQUEST = 0, AM_REPLY = 1 };

struct am_queue_send {
    _Alignas(AM_BLOCK) AO_t tail; /* next packet ticket */
    AO_t bulk_tail;               /* next bulk ticket */
};

struct am_queue_recv {
    _Alignas(AM_BLOCK) AO_t head; /* next packet ticket to deliver; owner only */
};

struct am_packet {
    _Alignas(AM_LINE) AO_t state; /* AM_STATE(lap, type) */
    uint64_t bulk_ticket;  /* READY_BULK: bulk ticket (block t % B, lap t / B) */
    uint16_t handler;      /* handler id */
    uint8_t nargs;         /* 0 .. AM_MAX_ARGS */
    uint8_t flags;         /* reserved, 0 */
    uint16_t source;       /* sender index in this segment's am_sender table */
    uint16_t pad;
    uint32_t bulk_len;     /* 0 .. AM_BULK_BYTES */
    uint32_t args[AM_MAX_ARGS];
};

/* A bulk block's state word is AM_STATE(lap, AM_FREE or AM_CLAIMED). */
struct am_bulk_state {
    AO_t state;
    char pad[AM_LINE - sizeof(AO_t)];
};

_Static_assert(sizeof(AO_t) == 8, "shmam needs 64-bit AO_t for free-running tickets");
_Static_assert(sizeof(struct am_packet) == AM_LINE, "a packet is one cache line");
_Static_assert(sizeof(struct am_bulk_state) == AM_LINE, "bulk state is one line");
_Static_assert(sizeof(struct am_sender) == 64, "sender entry is one line");
_Static_assert(sizeof(struct am_queue_send) == AM_BLOCK, "sender block");
_Static_assert(sizeof(struct am_queue_recv) == AM_BLOCK, "receiver block");
_Static_assert(offsetof(struct am_seg_header, sleeping) % AM_LINE == 0, "wake line");
_Static_assert(offsetof(struct am_packet, state) == 0, "state first");
_Static_assert(AM_BULK_BYTES % AM_LINE == 0, "bulk blocks stay line-aligned");

#endif
