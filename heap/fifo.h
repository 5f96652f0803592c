/*
 * fifo.h - the free-block buffer of the shared heap (after XMalloc,
 * Huang et al. 2011, section 5.2): a fixed-capacity lock-free FIFO of 32-bit
 * payloads (block offsets) that any number of processes enqueue to and dequeue
 * from at once, through a shared mapping.
 *
 * Layout (XMalloc Fig. 7): the sequence number of the head message, the whole
 * tail message, and an array of 2^s messages.  A message is one 64-bit word,
 * its sequence number (high half) and its payload (low half); the n-th message
 * ever enqueued has sequence number n (mod 2^32) and lives at index n mod 2^s.
 * Every update is one CAS of a whole word, and the sequence number in each
 * word tags it against ABA, as the lap tag does in shmam's queues.
 *
 * Invariants (between operations):
 *   count = tail.seq - head + 1 (mod 2^32), 0 <= count <= 2^s;
 *   messages head .. tail.seq - 1 are in the array, each at its index and
 *   carrying its own sequence number; the tail message is in `tail`.
 * Memory ordering: every CAS is AO_compare_and_swap_full; a dequeuer's acquire
 * loads of head, then tail, then a slot pair with the full barriers of the
 * enqueuer's transfer CAS (slot) before its tail CAS, so a tail past n means
 * message n is in its slot.
 *
 * Everything read from the shared words is checked before it is used (a peer
 * may write garbage): an inconsistent count or a slot of the wrong sequence
 * number makes the operation retry, and after AM_FIFO_TRIES retries it gives
 * up with -EAGAIN rather than spin for ever on a corrupted FIFO.  The size is
 * the caller's own record (every call takes s): the shared size word must
 * agree with it (-EINVAL if not), and only the caller's s bounds the indices,
 * so a peer that rewrites the size word cannot send a call outside the array.
 *
 * Peek and pop split a get in two for the heap (heap/heap.c), which claims a
 * block's header between reading the head message and removing it: pop
 * removes message seq only while it is still the head (one CAS of the head
 * from seq to seq + 1), so any process may pop a message another one peeked,
 * and exactly one pop of it succeeds.
 */
#ifndef SHMAM_HEAP_FIFO_H
#define SHMAM_HEAP_FIFO_H

#include <stdint.h>

#include <atomic_ops.h>

#define AM_FIFO_TRIES 1000000
#define AM_FIFO_MAX_SHIFT 20

struct am_fifo {
    _Alignas(64) AO_t head;  /* sequence number of the head message */
    _Alignas(64) AO_t tail;  /* the tail message */
    _Alignas(64) AO_t shift; /* s: the array holds 2^s messages; set by init */
    AO_t slot[];             /* 2^s messages */
};

/* Bytes an am_fifo of 2^s messages takes (1 <= s <= AM_FIFO_MAX_SHIFT). */
size_t am_fifo_size(unsigned s);

/* Lays out an empty FIFO of 2^s messages in f (am_fifo_size(s) bytes, zeroed or
 * not), before any other process uses it. */
void am_fifo_init(struct am_fifo *f, unsigned s);

/* Appends payload v to the FIFO of 2^s messages f.  Any process, concurrently.
 * 0, -ENOSPC if the FIFO is full, -EAGAIN if it looked inconsistent
 * AM_FIFO_TRIES times in a row (corrupted), -EINVAL if s is out of range or
 * the FIFO's size word is not s. */
int am_fifo_put(struct am_fifo *f, unsigned s, uint32_t v);

/* Removes the head payload into *v.  0, -ENOENT if the FIFO is empty, -EAGAIN
 * or -EINVAL as am_fifo_put. */
int am_fifo_get(struct am_fifo *f, unsigned s, uint32_t *v);

/* Reads the head message without removing it: its sequence number into *seq,
 * its payload into *v.  Returns as am_fifo_get.  The message may be removed by
 * anyone as soon as it is read: pair with am_fifo_at_head or am_fifo_pop. */
int am_fifo_peek(struct am_fifo *f, unsigned s, uint32_t *seq, uint32_t *v);

/* Removes message seq if it is the head now (a CAS of the head from seq to
 * seq + 1, full barrier): 1 if this call removed it, 0 if it was gone.  Only
 * for a seq that am_fifo_peek returned (the message then exists while the head
 * is seq, so the CAS never empties an empty FIFO). */
int am_fifo_pop(struct am_fifo *f, uint32_t seq);

/* 1 if message seq is the head now (an acquire load of the head, which orders
 * the caller's earlier acquire loads before it), else 0. */
int am_fifo_at_head(struct am_fifo *f, uint32_t seq);

/* 1 if a message with payload v is in the FIFO now, 0 if not (or the FIFO
 * looked inconsistent AM_FIFO_TRIES times, or its size word is not s).  A
 * scan from the head to the tail: meaningful only for a payload that nobody
 * can put meanwhile and whose message nobody can remove unseen (the heap's
 * reclaim: a dead process's block whose header any removal changes). */
int am_fifo_holds(struct am_fifo *f, unsigned s, uint32_t v);

/* Points where a test may stall an operation, to widen its race windows:
 * after reading the tail and the slot it transfers into, before the transfer
 * CAS (put); after reading the head message, before the head CAS (get). */
enum am_fifo_hook { AM_FIFO_PUT_READ, AM_FIFO_GET_READ };
extern void (*am_fifo_stall_hook)(enum am_fifo_hook where);

/* How many payloads it holds now (a snapshot; 0 for an inconsistent FIFO or
 * one whose size word is not s). */
uint32_t am_fifo_count(struct am_fifo *f, unsigned s);

#endif
