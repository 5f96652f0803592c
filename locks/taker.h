/*
 * taker.h - tickets that name their taker, for the FIFO locks (ticket.c,
 * anderson.c): how a ticket and a participant id share one word, how the taker
 * of every ticket is recorded, and how a waiter finds it to tell whether the
 * ticket ahead of it belongs to a dead process.
 *
 * Words.  A 64-bit AO_t holds (ticket << AM_LOCK_ID_BITS) | id, where id is the
 * participant's self + 1 and 0 (TAKER_NONE) names nobody.  Tickets are the
 * remaining 40 bits and count modulo 2^40; "older" compares them modulo 2^40.
 *
 * Handing out tickets.  The lock's `next` word holds the NEXT ticket k and the
 * taker p of ticket k - 1.  A taker first records p in who[(k - 1) & mask] (one
 * AO_t per record; n = mask + 1 records, a power of two at least max_procs), and
 * only then moves `next` from (k, p) to (k + 1, self + 1) with a
 * compare-and-swap (taker_claim); if `next` moved meanwhile it starts again.  So
 * every ticket's taker can be found (taker_of): ticket(next) - 1's in `next`
 * itself, every earlier one's in who[], recorded before `next` moved past it.
 * Anyone who reads `next` may record its taker, so a taker that died between
 * taking its ticket and the next ticket being taken is recorded all the same.
 *
 * Records.  A record holds (ticket, id) and is replaced only by a record of a
 * newer ticket (with a compare-and-swap against the older value read), so a
 * helper that stalled after reading an old `next` can never overwrite a newer
 * record.  The one exception goes the other way: a waiter that gives up marks
 * its own ticket abandoned, (ticket, TAKER_NONE), over its own record or an
 * older one; nobody writes a live id over it since it is not older.  Record i
 * starts as ticket i - n, taken by nobody: older than any real ticket that uses
 * it, and ticket -1 (the one before the first) reads as nobody's.
 *
 * Room.  Record slot k & mask serves tickets k - n, k, k + n ...: recording
 * k's taker (or k's abandonment, which may come before) overwrites the record of
 * ticket k - n.  So each lock lets ticket k be taken only once ticket k - n is
 * over, i.e. k - n + 1 is being served (room_for() in ticket.c and anderson.c):
 * at most n tickets are ever outstanding, and the taker of every one of them can
 * be found.  Without that bound waiters that give up and come back (each leaving
 * an abandoned ticket) could overwrite the records of tickets not yet served,
 * whose turns nobody could then pass.  A process waiting for room holds no
 * ticket: it may give up without leaving one.
 *
 * Memory ordering.  The compare-and-swap that moves `next` is full: its release
 * publishes the record written just before it, and its acquire (or a later
 * AO_load_acquire of `next`) makes every record of an earlier ticket visible
 * (each earlier move of `next` came after the record of the ticket it passed).
 * So a waiter that has read `next` with acquire after ticket k was taken reads
 * k's record or a newer one.  Records themselves are read and written without
 * ordering: they carry only the id, and nothing is published through them.
 */
#ifndef SHMAM_TAKER_H
#define SHMAM_TAKER_H

#include <atomic_ops.h>

#include "lock.h"
#include "watch.h"

#if !defined(AO_HAVE_compare_and_swap) || !defined(AO_HAVE_compare_and_swap_full)
#error "ticket recording needs AO_compare_and_swap and AO_compare_and_swap_full"
#endif

_Static_assert(sizeof(AO_t) == 8, "a ticket and an id share one 64-bit AO_t");

#define TAKER_NONE 0u       /* the id of nobody: an abandoned ticket, ticket -1 */
#define TAKER_UNKNOWN (~0u) /* not an id: taker_of() could not tell */
#define TICKET_BITS (64 - AM_LOCK_ID_BITS)

/* Ticket arithmetic modulo 2^TICKET_BITS. */
static inline AO_t tk_add(AO_t t, AO_t d)
{
    return (t + d) & (((AO_t)1 << TICKET_BITS) - 1);
}

static inline AO_t tk_sub(AO_t t, AO_t d)
{
    return tk_add(t, ((AO_t)1 << TICKET_BITS) - d);
}

/* 1 if ticket a was handed out before ticket b (modulo 2^TICKET_BITS). */
static inline int tk_older(AO_t a, AO_t b)
{
    AO_t ahead = tk_sub(b, a);

    return ahead != 0 && ahead < ((AO_t)1 << (TICKET_BITS - 1));
}

/* (ticket, id) in one word, and back. */
static inline AO_t tk_pack(AO_t ticket, unsigned id)
{
    return ticket << AM_LOCK_ID_BITS | (AO_t)id;
}

static inline AO_t tk_ticket(AO_t w)
{
    return w >> AM_LOCK_ID_BITS;
}

static inline unsigned tk_id(AO_t w)
{
    return (unsigned)(w & (((AO_t)1 << AM_LOCK_ID_BITS) - 1));
}

/* Records for max_procs participants: the least power of two >= max_procs,
 * at least 1, so that ticket & mask stays consistent across the wrap. */
static inline AO_t taker_count(unsigned max_procs)
{
    AO_t n = 1;

    while (n < max_procs)
        n <<= 1;
    return n;
}

/* By init only: the records of a lock with mask + 1 of them. */
static inline void taker_init(volatile AO_t *who, AO_t mask)
{
    for (AO_t i = 0; i <= mask; i++)
        who[i] = tk_pack(tk_sub(i, mask + 1), TAKER_NONE);
}

/* Any process: records that participant id - 1 took ticket k, unless k's record
 * slot already holds k or a newer ticket.  Unordered (see the file header). */
static inline void taker_record(volatile AO_t *who, AO_t mask, AO_t k, unsigned id)
{
    volatile AO_t *r = &who[k & mask];
    AO_t old;

    do {
        old = AO_load(r);
        if (!tk_older(tk_ticket(old), k))
            return;
    } while (!AO_compare_and_swap(r, old, tk_pack(k, id)));
}

/* By the taker of ticket k only, when it gives up waiting: marks k taken by
 * nobody, so that waiters pass its turn on as they would a dead taker's. */
static inline void taker_abandon(volatile AO_t *who, AO_t mask, AO_t k)
{
    volatile AO_t *r = &who[k & mask];
    AO_t old;

    do {
        old = AO_load(r);
        if (tk_older(k, tk_ticket(old)) || old == tk_pack(k, TAKER_NONE))
            return; /* done, or (misuse) a newer ticket's record */
    } while (!AO_compare_and_swap(r, old, tk_pack(k, TAKER_NONE)));
}

/* Any process: one attempt to take ticket k = ticket(nx) for participant self,
 * nx being the value just read from `next`.  Records the taker of k - 1 first.
 * Returns 1 if k is now self's (full barrier), 0 if `next` had moved. */
static inline int taker_claim(volatile AO_t *next, volatile AO_t *who, AO_t mask,
                              unsigned self, AO_t nx)
{
    AO_t k = tk_ticket(nx);

    taker_record(who, mask, tk_sub(k, 1), tk_id(nx));
    return AO_compare_and_swap_full(next, nx, tk_pack(tk_add(k, 1), self + 1));
}

/* The taker (id) of ticket k, nx having been read from `next` with acquire
 * after k was taken: from k's record if there is one yet (it may say
 * abandoned), else from nx if k is the last ticket taken.  TAKER_UNKNOWN
 * otherwise (k not taken yet). */
static inline unsigned taker_of(const volatile AO_t *who, AO_t mask, AO_t nx, AO_t k)
{
    AO_t r = AO_load(&who[k & mask]);

    if (tk_ticket(r) == k)
        return tk_id(r);
    if (tk_ticket(nx) == tk_add(k, 1))
        return tk_id(nx);
    return TAKER_UNKNOWN;
}

/* By a waiter with a watch, nx as for taker_of(): 1 if ticket k's taker is
 * known and either dead or gone (it gave up).  An unknown one counts as alive. */
static inline int taker_dead(const volatile AO_t *who, AO_t mask, AO_t nx, AO_t k,
                             const struct am_lock_ctx *c)
{
    unsigned id = taker_of(who, mask, nx, k);

    if (id == TAKER_UNKNOWN)
        return 0;
    return id == TAKER_NONE || watch_dead(c, id - 1);
}

#endif
