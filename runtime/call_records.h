/*
 * call_records.h - what the files of calls share (call.c, call_records.c,
 * call_rooms.c, call_reply.c, call_wait.c): the records of calls, the
 * replies kept for callers, a start's waits, and the calls they make of each
 * other.  Other modules use call.h.  call.c's file header states the design;
 * calls_mu guards everything here (threads.h).
 */
#ifndef SHMAM_CALL_RECORDS_H
#define SHMAM_CALL_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "internal.h"
#include "send.h"
#include "waiting.h"

struct am_call_rec {
    am_call_t id;          /* 0: free */
    struct am_result *res; /* the user's, until the call ends */
    int64_t deadline;      /* ns on the monotonic clock; INT64_MAX: none */
    uint64_t block;        /* its room in our reply heap (kept, small, across
                            * calls: call_rooms.c); 0: none */
    uint32_t cap;          /* data bytes the room takes */
    uint32_t want;         /* data bytes this call's result takes (its cap) */
    uint8_t roomed;        /* this call uses the room (want > AM_MEDIUM_BYTES) */
    unsigned dest;
    int rc;             /* -EAGAIN taken, -EINPROGRESS outstanding, then its end */
    unsigned gone;      /* am__calls_check: the destination was seen dead (its mark) */
    uint8_t user;       /* the id is the user's: its end not yet collected */
    uint8_t awaiting;   /* a reply may still come: the room stays reserved */
    uint8_t sending;    /* its starter is sending the request: room and record stay */
    uint64_t held;      /* its room's cost in its destination's held[] while awaiting */
    unsigned waiters;   /* threads in am_call_wait for it (kept across calls) */
    const void *waiter; /* the one (am__self) if it is one; NULL: unknown */
};

#define AM_CALL_SLOT_BITS 16 /* an id's record: its low bits */
#define AM_CALL_RECS_MAX (1u << AM_CALL_SLOT_BITS)

struct am_calls {
    struct am_call_rec **rec; /* n of them, doubled while all are taken */
    unsigned n, n0;           /* n0: the first chunk's; chunk k starts at n0 << k */
    unsigned limit;           /* most calls taken or outstanding */
    unsigned live;            /* rc -EAGAIN or -EINPROGRESS */
    unsigned awaiting;
    unsigned next;   /* where the search for a free record starts */
    uint64_t seq;    /* the next id's sequence number */
    unsigned checks; /* am__calls_check runs so far: their marks */
    unsigned starts; /* threads waiting in am_call_start for a record or room */
    int kick;        /* a call ended under the lock: wake the sleepers */
    AO_t ended;      /* calls ended so far; read without the lock */
    AO_t late;       /* late replies dropped; read without the lock */
    uint64_t *held;  /* by destination: the cost of its awaiting calls' rooms */
    unsigned held_n; /* grown as calls to higher indexes need room */
    uint64_t bound;  /* the most one destination's rooms may cost: half the heap */
};

/* A call's reply the caller's queue had no room for, kept for later: its
 * packet's worth, and an inline reply's data (m.kind AM_MEDIUM: m.len bytes,
 * at most AM_MEDIUM_BYTES, in data[]; a room's reply has its data in the
 * room already). */
struct am_owed {
    struct am_owed *next;
    unsigned dest;
    unsigned long serial; /* the caller's peer serial: only it gets the reply */
    struct am_msg m;
    uint32_t args[AM_MAX_ARGS];
    unsigned char data[];
};

/* Waits of am_call_start: for a record, then for room in our reply heap. */
struct am_call_starting {
    struct am_calls *c;
    struct am_call_rec *r;
    size_t want; /* room bytes */
    unsigned dest;
    struct am_result *res;
    int64_t deadline;
    int now; /* am_call_try: never wait (-EAGAIN instead) */
};

/* call_records.c: calls_mu (am__calls_lock, am__calls_unlock: the unlock
 * wakes the endpoint's sleepers if a call ended meanwhile); a shared
 * endpoint's call in progress counted (am__calls_enter, am__calls_leave);
 * ep's struct am_calls, made on the first call (NULL: no memory); and the
 * records' steps, under calls_mu: settle (free again once nobody needs it),
 * end (an outstanding call's result), unawait (no reply can come: its room
 * goes back), find (the record of a user's id), take (a free record for a
 * call to dest, within the limit), state (a user's call's rc, taking the
 * lock itself). */
void am__calls_lock(am_ep_t *ep);
void am__calls_unlock(am_ep_t *ep);
int am__calls_enter(am_ep_t *ep);
void am__calls_leave(am_ep_t *ep, int shared);
struct am_calls *am__calls_of(am_ep_t *ep);
void am__call_rec_settle(struct am_call_rec *r);
void am__call_rec_end(struct am_calls *c, struct am_call_rec *r, int rc);
void am__call_rec_unawait(am_ep_t *ep, struct am_calls *c, struct am_call_rec *r, int keep);
struct am_call_rec *am__call_rec_find(struct am_calls *c, am_call_t id);
struct am_call_rec *am__call_rec_take(struct am_calls *c, unsigned dest,
                                      struct am_result *res, int64_t deadline);
int am__call_rec_state(am_ep_t *ep, struct am_call_rec *r, am_call_t id);

/* call_rooms.c: our reply heap, where the rooms are; a room given back (or
 * kept, small, for the next call: keep); a room's cost charged to its
 * destination and taken back; a taken record's call made to take cap bytes,
 * inline (cap <= AM_MEDIUM_BYTES: no room) or in a room (0, -EAGAIN for
 * am_call_try, -ETIMEDOUT, -EINTR, -EPROTO); the most a room takes. */
struct am_heap_view *am__call_heap(am_ep_t *ep);
void am__call_room_release(am_ep_t *ep, struct am_call_rec *r, int keep);
void am__call_held_charge(struct am_calls *c, struct am_call_rec *r, uint64_t bytes);
void am__call_held_uncharge(struct am_calls *c, struct am_call_rec *r);
int am__call_room_get(am_ep_t *ep, struct am_call_starting *s, size_t cap);
size_t am__call_cap_max(am_ep_t *ep);

/* call.c: a start's wait until got (a record, a room), counted in c->starts
 * so that whoever frees one wakes it; am__wait_for's result. */
int am__call_start_wait(am_ep_t *ep, struct am_calls *c, struct am_call_starting *s,
                        am_wait_done_fn got);

#endif
