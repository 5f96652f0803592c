/*
 * layout.h - the shared-memory ABI of a shmam endpoint segment.
 *
 * Every process that maps a segment reads these structures, so they hold only
 * fixed-width fields and offsets (a segment maps at a different address in each
 * process: never a pointer).  A change to any of them bumps AM_LAYOUT_VERSION.
 *
 *   segment (P = the page size, recorded in the header)
 *     struct am_seg_header      page 0: identity, sizes, offsets, claim algorithm,
 *                               state, the owner's lifeline, statistics
 *     struct am_sender          pages 1..S: sender entry i alone on page 1 + i:
 *                               its lifeline, generation and name
 *     struct am_seg_shared      wake word, repair requests
 *     request queue, reply queue, each:
 *       struct am_queue_send    128-byte block written by senders: tails
 *       lock state              (locked algorithms only) lock_ops.size(S) bytes
 *       struct am_queue_recv    128-byte block written by the owner: heads
 *       struct am_packet[Q]     one cache line each
 *       medium data[Q]          AM_MEDIUM_BYTES each, cache-line aligned: slot
 *                               i's payload area, owned by slot i's claim
 *       AO_t bulk_state[B]      one cache line each
 *       bulk data[B]            AM_BULK_BYTES each, cache-line aligned
 *       heap                    long messages' blocks (heap/heap.h), sized so
 *                               that two of long_max bytes fit at once; none
 *                               for an anonymous endpoint's request queue
 *   With a per-sender queue kind (lamport, fastforward, mcring, bqueue) there
 *   are no shared queues; instead, after the shared block (channel.h):
 *     struct am_chan_summary[2] per queue: a bit per sender with work
 *     channels, S x 2 of chan_bytes each: sender i's request channel, then
 *                               its reply channel; each an SPSC ring of Q
 *                               packet-wide slots (spsc/spsc.h), struct
 *                               am_chan_ctl, B bulk blocks, Q medium areas
 *                               (ring slot i's payload area)
 *     heap, heap                as above: long messages' data stays in the
 *                               endpoint's heaps, their packets go through
 *                               the channels
 *
 * Slot states and laps.  Tails and heads are free-running 64-bit counters: ticket
 * t names slot t % N in lap t / N.  A slot's state word is (lap << 24) | (who << 2)
 * | type: a free slot says which lap it is free for, so a claim for ticket t
 * succeeds only when the slot reads AM_STATE(t / N, 0, AM_FREE); without the lap a
 * sender that stalls between reading the tail and claiming its slot could take a
 * slot one lap later and per-sender FIFO order would break.  A claimed, ready or
 * bulk-claimed slot names its claimant (`who`, see below), written by the same
 * atomic step that claimed it, so the receiver always knows whose claim it waits
 * on and can skip it once that sender is dead.  Laps are kept modulo 2^40.
 *
 * Who writes where.  Pages 0..S are written only by the thread whose lifeline is
 * on them: page 0 by the owner, page 1 + i by the sender holding entry i.  Every
 * process maps them read-only but for its own (view.c), so a peer that
 * scribbles through its mapping faults instead of overwriting a held robust
 * mutex, whose links glibc follows and writes through on unlock (a peer that
 * could rewrite them could make us write anywhere), and cannot make a live
 * sender look dead, a dead one alive, or rename one.  Everything from
 * shared_off on is written by senders and owner alike, and trusted by nobody.
 *
 * Medium messages.  A bulk message of at most AM_MEDIUM_BYTES travels in the
 * queue itself: its packet is READY with flag AM_PKT_MEDIUM and bulk_len its
 * length, and its data lies in the payload area of the packet's own slot
 * (medium[t % Q] beside packets[t % Q]).  The area has the slot's lifetime:
 * the claim that takes the slot takes the area, the claimant writes it before
 * its release of READY, the receiver reads it in place and frees it with the
 * slot.  So a medium message has no bulk block, no bulk state, no bulk claim
 * and nothing to give back, and every rule of the slot (lap, claimant, a dead
 * claim skipped) is the area's too.  The packet array keeps one line per slot,
 * so short messages' stride is unchanged.  AM_MEDIUM_BYTES is 448, seven
 * lines: the sizes where the bulk handshake costs most next to the copy (64 B
 * to a few hundred; at 1 KB the copy already dominates) fit, a packet and its
 * area are eight lines, and the areas cost Q x 448 bytes per queue (56 KB at
 * the default Q = 128, under half of the bulk blocks' 128 KB).
 *
 * Claimant ids.  who = ((generation mod 2^11) << 10 | sender index) + 1, never 0.
 * A sender entry's generation goes up each time the entry changes hands, so a
 * claim, a packet or a lock held by a departed sender is never credited to the
 * next process in the same entry.
 */
#ifndef SHMAM_LAYOUT_H
#define SHMAM_LAYOUT_H

#include <atomic_ops.h>
#include <stddef.h>
#include <stdint.h>

#include "lifeline.h"
#include "shmam.h"

#define AM_MAGIC UINT64_C(0x4d414d48535f4d41) /* "AM_SHMAM" */
/* 12: hemlock's claim; a loan given back (AM_H_GIVEN_BACK); 13: hapax's claim,
 * and medium messages in the slots' payload areas (medium_off, AM_PKT_MEDIUM);
 * 14: a call's cap in its request's room field (AM_CALL_INLINE), and its
 * small replies inline, as medium packets */
#define AM_LAYOUT_VERSION 14u
#define AM_LINE 64u   /* cache line: one packet, one bulk state */
#define AM_BLOCK 128u /* sender/receiver blocks: adjacent-line prefetch */
#define AM_BULK_BYTES ((unsigned)AM_MAX_BULK)     /* one bulk block */
#define AM_MEDIUM_BYTES ((unsigned)AM_MAX_MEDIUM) /* one slot's payload area */
#define AM_NAME_MAX 48u /* endpoint name (AM_MAX_NAME), its NUL, padding */
#define AM_MAX_PACKETS 65536u
#define AM_MAX_BULK_BLOCKS 4096u
#define AM_MAX_SENDERS 1024u

/* Packet and bulk-block types, the low two bits of a state word. */
enum am_type { AM_FREE = 0, AM_CLAIMED = 1, AM_READY = 2, AM_READY_BULK = 3 };
#define AM_WHO_BITS 22u
#define AM_LAP_SHIFT (AM_WHO_BITS + 2u)
#define AM_LAP_MASK ((AO_t)-1 >> AM_LAP_SHIFT)
#define AM_STATE(lap, who, type)                                                           \
    (((AO_t)(lap) << AM_LAP_SHIFT) | ((AO_t)(who) << 2) | (AO_t)(type))
#define AM_STATE_TYPE(s) ((unsigned)((s)&3u))
#define AM_STATE_WHO(s) ((unsigned)(((s) >> 2) & ((1u << AM_WHO_BITS) - 1u)))
#define AM_STATE_LAP(s) ((AO_t)(s) >> AM_LAP_SHIFT)

/* The lap of ticket t in a ring of n slots (a power of two, as every ring is),
 * as a state word holds it.  A shift, not a division: pollers compute it on
 * every look at a queue. */
static inline AO_t am_lap(uint64_t t, uint32_t n)
{
    return (AO_t)(t >> __builtin_ctz(n)) & AM_LAP_MASK;
}

/* May bulk block b (of n) hold a claim of state s's lap, the bulk tail being
 * bt?  Block b's last ticket below bt is k; a claim is of k's lap (claimed
 * earlier, still in use) or of the next (k + n: claimed since bt was read, or
 * at the tail, not yet moved past).  Any other lap a peer wrote.  Both halves
 * ask: a waiting sender before asking for repair, the owner before repairing. */
static inline int am_block_claim_lap_ok(AO_t s, uint64_t bt, uint32_t b, uint32_t n)
{
    uint64_t k = bt - n + ((b - bt) & (n - 1));
    AO_t lap = AM_STATE_LAP(s);
    return lap == am_lap(k, n) || lap == ((am_lap(k, n) + 1) & AM_LAP_MASK);
}

/* Claimant ids (see the file header). */
#define AM_GEN_BITS 11u
#define AM_GEN_MASK ((1u << AM_GEN_BITS) - 1u)
#define AM_WHO(index, gen)                                                                 \
    (((((unsigned)(gen)&AM_GEN_MASK) << 10) | (unsigned)(index)) + 1u)
#define AM_WHO_INDEX(who) (((who)-1u) & 1023u)
#define AM_WHO_GEN(who) (((who)-1u) >> 10)

/* Claim algorithms as stored in the header; their names, in this order, are
 * am_claim_names (options.c), the one list of them. */
enum am_claim {
    AM_CLAIM_LOCKFREE = 0,
    AM_CLAIM_TAS,
    AM_CLAIM_TTAS,
    AM_CLAIM_TICKET,
    AM_CLAIM_ANDERSON,
    AM_CLAIM_MUTEX,
    AM_CLAIM_ONECAS,
    AM_CLAIM_MCS,
    AM_CLAIM_CLH,
    AM_CLAIM_HEMLOCK,
    AM_CLAIM_HAPAX,
    AM_CLAIM_COUNT
};

/* Queue kinds as stored in the header: the shared many-to-one queues, or a
 * channel per sender made of one of spsc/'s rings.  Their names, in this
 * order, are am_queue_names (options.c), the one list of them; an SPSC kind's
 * name is its ring's name in am_spsc_table. */
enum am_queue_kind {
    AM_QUEUE_MPSC = 0,
    AM_QUEUE_LAMPORT,
    AM_QUEUE_FASTFORWARD,
    AM_QUEUE_MCRING,
    AM_QUEUE_BQUEUE,
    AM_QUEUE_COUNT
};

/* Header flags.  AM_SEG_ANON: an anonymous endpoint (segment.h), a client's:
 * its name is its address, and its request queue has no heap (heap_off and
 * heap_bytes of AM_REQUEST are 0), so it takes no long requests.
 * AM_SEG_DOOR, only with AM_SEG_ANON: a listener's door for one caller
 * (rendezvous.c), anonymous but with a request heap as a named endpoint's. */
#define AM_SEG_ANON 1u
#define AM_SEG_DOOR 2u

/* Segment life: the owner sets LIVE once initialised, CLOSED before unmapping. */
enum am_seg_state { AM_SEG_INIT = 0, AM_SEG_LIVE = 1, AM_SEG_CLOSED = 2 };

/* Page 0: written by the owner only (peers map it read-only). */
struct am_seg_header {
    uint64_t magic;
    uint32_t version;
    uint32_t claim;       /* enum am_claim */
    uint32_t packets;     /* Q, power of two */
    uint32_t bulk_blocks; /* B, power of two */
    uint32_t max_senders; /* S */
    uint32_t owner_pid;   /* for tools (shmamstat); liveness is owner_life's */
    uint32_t page_size;   /* P: the layout's page; attachers must have the same */
    uint32_t long_max;    /* the longest long message, AM_MIN_LONG .. AM_MAX_LONG */
    uint32_t queue;       /* enum am_queue_kind */
    uint32_t flags;       /* 0, AM_SEG_ANON, or AM_SEG_ANON | AM_SEG_DOOR */
    uint64_t segment_size;
    uint64_t senders_off; /* offsets from the segment start: P; entry i at
                           * senders_off + i * P */
    uint64_t shared_off;  /* struct am_seg_shared, the first byte peers write */
    uint64_t send_off[2]; /* AM_REQUEST, AM_REPLY: struct am_queue_send */
    uint64_t recv_off[2]; /* struct am_queue_recv */
    uint64_t lock_off[2]; /* 0 for lockfree */
    uint64_t packets_off[2];
    uint64_t medium_off[2]; /* the slots' payload areas, AM_MEDIUM_BYTES each */
    uint64_t bulk_state_off[2];
    uint64_t bulk_off[2];
    uint64_t heap_off[2];   /* per queue: its heap (heap/heap.h), 64-byte aligned */
    uint64_t heap_bytes[2]; /* the heap's span: am_heap_bytes_for(max(long_max,
                             * AM_HEAP_FLOOR), 2); anonymous: the reply
                             * heap's am_heap_bytes_for(long_max, 2), the
                             * request queue's 0 */
    uint64_t summary_off;   /* per-sender kinds: struct am_chan_summary[2]; else 0 */
    uint64_t chan_off;      /* per-sender kinds: the first channel; else 0 */
    uint64_t chan_bytes;    /* per-sender kinds: one channel's bytes */
    char name[AM_NAME_MAX];
    /* Statistics, kept by the owner for tools (shmamstat): stored, never read
     * back (the private counters are the truth). */
    AO_t bad_packets;    /* corrupt packets seen */
    AO_t abandoned;      /* claims of dead senders skipped */
    AO_t delivered;      /* messages delivered (handlers run or held) */
    AO_t delivered_bulk; /* of them, bulk (medium ones too) */
    /* The owner's one-copy region (am_region_create): its size, release-stored
     * once the segment NAME.r is complete; 0 while there is none.  A sender
     * maps NAME.r on its first am_request_long_at and keeps the size it read
     * then as its bound. */
    AO_t region_bytes;
    /* am_ep_fd's pipe (evfd.c): its write end's descriptor number in the
     * owner's process (owner_pid) + 1, release-stored once wake_ino, its
     * inode, is written; 0 while there is none.  A sender opens
     * /proc/<owner_pid>/fd/<n> and keeps it only if it is a FIFO of that
     * inode. */
    AO_t wake_fd;
    uint64_t wake_ino;
    /* What every send reads first, on one line that changes only at open and
     * close: is the owner there? */
    _Alignas(AM_LINE) AO_t state;  /* enum am_seg_state; release-stored by the owner */
    struct am_lifeline owner_life; /* held by the owner's thread while it lives */
    /* Per-sender kinds: the generation for which sender entry i's channels
     * are freshly laid out and unused (channel.h); release-stored by the
     * owner, acquire-loaded by a registrant, which takes entry i only for
     * that generation. */
    _Alignas(AM_LINE) uint16_t chan_ready[AM_MAX_SENDERS];
};

/* The mark of a one-copy region (region.c): the last page of the segment
 * NAME:r, after the data, read-only to every peer.  Its owner writes it, takes
 * the lifeline, and release-stores the magic last. */
#define AM_REGION_MAGIC UINT64_C(0x4e4f494745524d41) /* "AMREGION" */
struct am_region_mark {
    AO_t magic;                    /* AM_REGION_MAGIC once complete */
    uint64_t bytes;                /* the data's size, at the segment's start */
    uint32_t owner_pid;            /* for tools */
    char name[AM_NAME_MAX];        /* its endpoint's name */
    struct am_lifeline owner_life; /* held by the endpoint owner's thread */
};

/* Written by senders and the owner. */
#define AM_SLEEP_ARMED (1u << 30) /* `sleeping`: am_ep_fd's descriptor armed */
/* `sleeping`, for the owner's relay thread (evfd.c), which futex-waits on it:
 * RELAY, a sender that disarmed but cannot write the pipe asks the relay to
 * write the byte; RETIME, the owner moved the relay's timer earlier. */
#define AM_SLEEP_RELAY (1u << 29)
#define AM_SLEEP_RETIME (1u << 28)
struct am_seg_shared {
    /* Wake-up for am_wait (32-bit: futex words).  sleeping: how many of the
     * owner's threads are (about to be) asleep in am_wait, plus
     * AM_SLEEP_ARMED while the owner waits on its descriptor, and the
     * relay's bits (evfd.c); only sleeping's low 28 bits count. */
    _Alignas(AM_BLOCK) unsigned int sleeping;
    unsigned int wake_seq; /* futex word, bumped by senders */
    AO_t orphans[2];       /* per queue: a sender asks the owner to repair the
                            * bulk blocks (dead claims, impossible states) */
    AO_t reclaim[2];       /* per queue: a sender finding the heap full asks the
                            * owner to free blocks that dead senders hold */
    AO_t recycle;          /* per-sender kinds: a registrant finding no entry with
                            * fresh channels asks the owner to lay out the channels
                            * of departed senders again (channel.h) */
};

/* Per-sender kinds (channel.h).  The summary: bit i of a queue's words is set
 * by sender i after it publishes, cleared by the owner once the channel has
 * stayed empty for a while; the owner polls only the channels whose bits are
 * set. */
struct am_chan_summary {
    _Alignas(AM_BLOCK) AO_t bits[AM_MAX_SENDERS / 64];
};

/* A channel's block written by the owner: bulk blocks given back, a count
 * (block t % B is free again for the producer's ticket t + B once
 * bulk_freed > t). */
struct am_chan_ctl {
    _Alignas(AM_BLOCK) AO_t bulk_freed;
};

/* One sender entry, alone on its page.  Whoever holds an entry's lifeline owns
 * the entry and is the only writer of its page: a sender takes the lifeline of
 * an entry nobody alive holds, stores BUSY with the next generation, writes its
 * name and pid, then release-stores READY; its claimant id AM_WHO(index,
 * generation) marks every claim it makes here.  CLOSED: the sender has left
 * (and let go of the lifeline), but its packets may still be queued, so its
 * name stays readable until the entry is reused.  state is (generation << 2) |
 * enum am_sender_state. */
enum am_sender_state {
    AM_SENDER_FREE = 0,
    AM_SENDER_BUSY = 1,
    AM_SENDER_READY = 2,
    AM_SENDER_CLOSED = 3
};
#define AM_SENDER(gen, st) (((AO_t)(gen) << 2) | (AO_t)(st))
#define AM_SENDER_ST(s) ((unsigned)((s)&3u))
#define AM_SENDER_GEN(s) ((unsigned)((s) >> 2) & AM_GEN_MASK)
struct am_sender {
    struct am_lifeline life;
    _Alignas(AM_LINE) AO_t state;
    uint32_t pid; /* for tools; liveness is the lifeline's, never a pid */
    uint32_t pad;
    char name[AM_NAME_MAX];
    AO_t backoffs; /* for tools: rounds this sender waited for room, a copy */
    /* Bulk claims this sender began (before the claim) and ended (after it
     * took no block, gave its block up, or published its packet); equal: no
     * bulk claim of its is in flight (mpsc_send.c, senders.c). */
    AO_t bulk_begun, bulk_ended;
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
    uint64_t bulk_ticket;         /* READY_BULK: bulk ticket (block t % B, lap t / B);
                                   * long: heap offset; long_at: region offset */
    uint16_t handler;             /* handler id */
    uint8_t nargs;                /* 0 .. AM_MAX_ARGS */
    uint8_t flags;                /* READY: 0, AM_PKT_LONG, AM_PKT_LONG_AT or
                                   * AM_PKT_MEDIUM */
    uint32_t call;                /* 0, or a call's id on the wire (below) */
    uint32_t bulk_len;            /* bulk: 0 .. AM_BULK_BYTES; medium: 0 ..
                                   * AM_MEDIUM_BYTES; long: 0 .. long_max;
                                   * a call's reply: its data's length */
    uint32_t args[AM_MAX_ARGS];
    uint32_t room; /* a call's request: its reply room, a block of the caller's
                    * reply heap, as offset / 64 (below AM_CALL_INLINE), or
                    * AM_CALL_INLINE | cap: no room, at most cap bytes
                    * (<= AM_MEDIUM_BYTES) of reply data, inline; 0: cap 0 */
};

/* Calls (call.c).  The sender is the claimant in the state word.  In a request
 * queue, call != 0 makes a packet a call: its reply goes to the caller's
 * struct am_result, not to a handler, and `room` says how much reply data it
 * takes.  A cap of at most AM_MEDIUM_BYTES is the field itself: AM_CALL_INLINE
 * | cap (bit 31: a room's offset / 64 never reaches it; the caller refuses a
 * room that would), and the call has no room.  A larger cap is a room: a
 * block of the caller's reply heap whose first AM_CALL_ROOM_HEAD bytes are the
 * caller's record (struct am_call_room: the call's id and cap).  In a reply
 * queue, call != 0 makes a packet that call's reply: handler holds 0 or an
 * error number (ENOENT, EMSGSIZE) the server's runtime sends back, and
 * bulk_len the length of the reply's data.  Data of at most AM_MEDIUM_BYTES
 * travels inline: the reply is a medium packet (AM_PKT_MEDIUM), its data in
 * its slot's payload area, whether or not the call has a room; longer data
 * the server wrote into the room, and the packet is a plain one (flags 0).
 * Any other payload on a reply is a corrupt packet. */
#define AM_CALL_INLINE (1u << 31)
#define AM_CALL_ROOM_HEAD 64u
struct am_call_room {
    uint32_t call; /* the call's id on the wire: the request's must match */
    uint32_t cap;  /* bytes of reply data the room takes, after the head */
};

/* A READY packet's flags: a long message whose data is a block of the queue's
 * heap allocated by the packet's claimant (bulk_ticket its offset, bulk_len its
 * length), one whose data the sender wrote into the owner's region, or a
 * medium message whose data is in its slot's payload area (bulk_len long). */
enum am_pkt_flag { AM_PKT_LONG = 1, AM_PKT_LONG_AT = 2, AM_PKT_MEDIUM = 4 };
#define AM_MIN_LONG 4096u
#define AM_MAX_LONG (1u << 30)
#define AM_DEFAULT_LONG (1u << 20)
/* A queue's heap holds two blocks of long_max at once, and is never smaller
 * than one sized so for AM_HEAP_FLOOR (four 64 KB superblocks): a heap of one
 * superblock serves one size class at a time, so one sender stopped with a
 * staged block would hold up every other sender's long messages of other
 * sizes (check_chan's stopped_long_holder). */
#define AM_HEAP_FLOOR (128u << 10)

/* A bulk block's state word is AM_STATE(lap, 0, AM_FREE) or
 * AM_STATE(lap, claimant, AM_CLAIMED). */
struct am_bulk_state {
    AO_t state;
    char pad[AM_LINE - sizeof(AO_t)];
};

_Static_assert(AM_NAME_MAX > AM_MAX_NAME, "a name and its NUL fit");
_Static_assert(sizeof(AO_t) == 8, "shmam needs 64-bit AO_t for free-running tickets");
_Static_assert(sizeof(struct am_packet) == AM_LINE, "a packet is one cache line");
_Static_assert(sizeof(struct am_bulk_state) == AM_LINE, "bulk state is one line");
_Static_assert(sizeof(struct am_sender) <= 3 * AM_LINE, "sender entry, three lines");
_Static_assert(sizeof(struct am_seg_header) <= 4096, "the header fits the smallest page");
_Static_assert(sizeof(struct am_region_mark) <= 4096, "a region's mark fits a page");
_Static_assert(sizeof(struct am_seg_shared) == AM_BLOCK, "shared block");
_Static_assert(sizeof(struct am_chan_summary) == AM_BLOCK, "a summary is a line pair");
_Static_assert(sizeof(struct am_chan_ctl) == AM_BLOCK, "a channel's owner block");
_Static_assert(offsetof(struct am_seg_header, owner_life) / AM_LINE ==
                   offsetof(struct am_seg_header, state) / AM_LINE,
               "state and the owner's lifeline share a line");
_Static_assert(AM_MAX_SENDERS <= 1024u, "sender index fits 10 bits of a claimant id");
_Static_assert(AM_WHO(1023u, AM_GEN_MASK) < (1u << AM_WHO_BITS), "claimant id fits");
_Static_assert(sizeof(struct am_queue_send) == AM_BLOCK, "sender block");
_Static_assert(sizeof(struct am_queue_recv) == AM_BLOCK, "receiver block");
_Static_assert(offsetof(struct am_packet, state) == 0, "state first");
_Static_assert(AM_BULK_BYTES % AM_LINE == 0, "bulk blocks stay line-aligned");
_Static_assert(AM_MEDIUM_BYTES % AM_LINE == 0, "payload areas stay line-aligned");
_Static_assert(AM_MEDIUM_BYTES >= 256u && AM_MEDIUM_BYTES < AM_BULK_BYTES,
               "a medium payload is a few hundred bytes, less than a bulk block");
_Static_assert(AM_MEDIUM_BYTES < AM_CALL_INLINE, "an inline cap fits the room field");

#endif
