/*
 * call_rooms.c - the rooms of calls' replies: blocks of the caller's own reply
 * heap (AM_OWN_WHO), one per call whose result takes more data than travels
 * inline (AM_MEDIUM_BYTES: a smaller cap takes none), kept with its record
 * for the next call when small; the bound on what one destination's
 * rooms may cost (held[]: half the heap beyond the first room); and
 * am_call_start's wait for a room.  Under calls_mu where it says so (call.c's
 * file header).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "call_records.h"
#include "internal.h"
#include "waiting.h"

/* Rooms of at most this many data bytes stay with their record for the next
 * call: no allocation per call for replies of modest caps (a cap of at most
 * AM_MEDIUM_BYTES takes no room at all; a call that takes none leaves the
 * record's kept room unused). */
#define AM_CALL_CACHE 1024

struct am_heap_view *am__call_heap(am_ep_t *ep)
{
    return &ep->own.q[AM_REPLY].heap;
}

/* Give a record's room back, or keep a small one for the next call. */
void am__call_room_release(am_ep_t *ep, struct am_call_rec *r, int keep)
{
    if (r->block && !(keep && r->cap <= AM_CALL_CACHE)) {
        am_heap_free(am__call_heap(ep), r->block, AM_OWN_WHO);
        r->block = 0, r->cap = 0;
    }
}

/* What a room of `bytes` may take of the heap: its size rounded up to a
 * power of two (a class block's, at most). */
static uint64_t room_cost(uint64_t bytes)
{
    uint64_t c = 64;
    while (c < bytes)
        c *= 2;
    return c;
}

/* Charge record r's room of `bytes` to its destination: when got_room
 * allocates it (in the same hold of calls_mu as held_over's test, so two
 * threads cannot both pass the bound), or at rec_launch for a room a record
 * had cached; taken back once no reply can come (am__call_held_uncharge).  Under
 * calls_mu. */
void am__call_held_charge(struct am_calls *c, struct am_call_rec *r, uint64_t bytes)
{
    if (r->held || r->dest >= c->held_n)
        return; /* charged already, or no count (memory was short) */
    r->held = room_cost(bytes);
    c->held[r->dest] += r->held;
}

void am__call_held_uncharge(struct am_calls *c, struct am_call_rec *r)
{
    if (r->held)
        c->held[r->dest] -= r->held, r->held = 0;
}

/* Would a room of `bytes` more for a call to dest cost that destination
 * more than the bound (half the heap), beyond its first room?  So calls to a
 * hung server, timed out or not, never take the room that calls to other
 * servers need.  Makes dest's count if it has none (0 if memory is short). */
static int held_over(struct am_calls *c, unsigned dest, uint64_t bytes)
{
    if (dest >= c->held_n) {
        unsigned n = c->held_n ? c->held_n : 8;
        while (n <= dest)
            n *= 2;
        uint64_t *h = realloc(c->held, n * sizeof *h);
        if (!h)
            return 0;
        memset(h + c->held_n, 0, (n - c->held_n) * sizeof *h);
        c->held = h, c->held_n = n;
    }
    return c->held[dest] && c->held[dest] + room_cost(bytes) > c->bound;
}

/* Free the rooms free records keep (the heap ran short). */
static void rooms_uncache(am_ep_t *ep, struct am_calls *c)
{
    for (unsigned i = 0; i < c->n; i++)
        if (c->rec[i]->id == 0)
            am__call_room_release(ep, c->rec[i], 0);
}

/* A block of `want` bytes in our reply heap for record r (taken: its
 * starter's), freeing what free records cache if the heap runs short. */
static int got_room(am_ep_t *ep, int n, void *ctx)
{
    struct am_call_starting *s = ctx;
    uint64_t off;
    am__calls_lock(ep);
    int over = held_over(s->c, s->dest, s->want);
    if (!over)
        am__call_held_charge(s->c, s->r, s->want); /* taken back below if no room */
    am__calls_unlock(ep);
    if (over)
        return 0; /* until a call to dest ends with no reply to come */
    int rc = am_heap_alloc(am__call_heap(ep), s->want, AM_OWN_WHO, &off);
    if (rc == -ENOMEM) {
        am__calls_lock(ep);
        rooms_uncache(ep, s->c);
        am__calls_unlock(ep);
        rc = am_heap_alloc(am__call_heap(ep), s->want, AM_OWN_WHO, &off);
    }
    if (rc == -ENOMEM) {
        am__calls_lock(ep);
        am__call_held_uncharge(s->c, s->r);
        am__calls_unlock(ep);
        return 0;
    }
    if (rc == 0 && (off % 64 != 0 || off / 64 >= AM_CALL_INLINE)) {
        am_heap_free(am__call_heap(ep), off, AM_OWN_WHO);
        rc = -EPROTO; /* a room the packet's field cannot name */
    }
    am__calls_lock(ep);
    s->r->block = rc == 0 ? off : 0;
    if (rc != 0)
        am__call_held_uncharge(s->c, s->r);
    am__calls_unlock(ep);
    return rc == 0 ? 1 : rc;
}

/* Make taken record r's call take cap bytes of data: inline, with no room,
 * if cap <= AM_MEDIUM_BYTES (a room the record keeps stays kept, unused);
 * else in its room, keeping the one it has if large enough.  0, -ETIMEDOUT,
 * -EINTR, -EPROTO. */
int am__call_room_get(am_ep_t *ep, struct am_call_starting *s, size_t cap)
{
    struct am_call_rec *r = s->r;
    am__calls_lock(ep);
    r->want = (uint32_t)cap;
    r->roomed = cap > AM_MEDIUM_BYTES;
    int fits = !r->roomed || (r->block && r->cap >= cap);
    if (!fits)
        am__call_room_release(ep, r, 0);
    am__calls_unlock(ep);
    if (fits)
        return 0;
    s->want = AM_CALL_ROOM_HEAD + cap;
    int rc = got_room(ep, 0, s);
    if (rc == 0)
        rc = s->now ? -EAGAIN : am__call_start_wait(ep, s->c, s, got_room);
    if (rc == 1) {
        am__calls_lock(ep);
        r->cap = (uint32_t)cap;
        am__calls_unlock(ep);
    }
    return rc == 1 ? 0 : rc == 0 ? -ETIMEDOUT : rc;
}

/* The most reply data a room of ours takes: long_max, or what the heap serves. */
size_t am__call_cap_max(am_ep_t *ep)
{
    size_t most = am_heap_max_alloc(am__call_heap(ep)) - AM_CALL_ROOM_HEAD;
    return ep->own.long_max < most ? ep->own.long_max : most;
}
