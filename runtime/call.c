/*
 * call.c - calls (RPC over requests): a request whose reply goes into the caller's
 * struct am_result, and that always ends, in exactly one way: its reply came
 * (0); the server's runtime sent an error back (-ENOENT: no such handler,
 * -EMSGSIZE: the reply did not fit); the server died or closed (-EPIPE); the
 * deadline passed (-ETIMEDOUT); the caller cancelled it (-ECANCELED) or a
 * signal did, in am_call (-EINTR).
 *
 * The caller.  A call takes a record (private: struct am_call_rec) and, if
 * its result takes more data than travels inline (res->cap > AM_MEDIUM_BYTES),
 * a room: a block of the caller's OWN reply heap of AM_CALL_ROOM_HEAD + cap
 * bytes, allocated with AM_OWN_WHO, whose head says which call it is for and
 * how much it takes (struct am_call_room, layout.h).  A call whose cap is at
 * most AM_MEDIUM_BYTES takes no room at all (no heap allocation, no `held`
 * charge): its request carries the cap itself (room = AM_CALL_INLINE | cap).
 * The request's packet carries the call's id on the wire (its low 32 bits) and
 * the room's offset or the cap; its data, like any request's, travels in the
 * packet's slot if it is at most AM_MEDIUM_BYTES (send.c).  At most `limit`
 * calls are outstanding, the packets the
 * caller's reply queue (or one reply channel) holds, so their replies have
 * room there; am_call_start waits, polling, for a record and for heap room.
 * Ids are (sequence << 16) | record: unique for the endpoint's life; a
 * record, and with it the id's low bits, is reused only once no reply to its
 * call can come (it came, or the server died or closed), so a reply matches
 * its own call and no other, whichever index of ours its server is mapped
 * at (two indexes of one endpoint: same_endpoint).  A cancelled or timed-out
 * call keeps its record and room until then: its reply is dropped and counted
 * (am_ep_late_replies).  So that a hung server cannot take the room calls to
 * others need, the rooms of one destination's awaiting calls cost at most
 * `bound` (half the heap; each rounded up to a power of two) beyond its first
 * (held[], charged at launch, given back once no reply can come).  A reply
 * is checked against the call's own record of its cap (`want`), never
 * against what the packet or the room's head says.
 *
 * The server.  A call arrives as a request whose token has the call's id and
 * room (or inline cap).  am_reply* of it with at most AM_MEDIUM_BYTES of data
 * sends the data inline: the reply is a medium packet (AM_CALL_REPLY made
 * AM_MEDIUM: the id, the length, the args, its handler field an error number
 * or 0; the data in its slot's payload area), whether the call has a room or
 * not: a room is only for a cap larger than that, and a small reply to such a
 * call goes inline too, which costs the server no write into the caller's
 * heap and the caller no read of it (the room stays unused).  Longer data the
 * server writes straight into the room (checked from a private copy of its
 * head, and against the heap's own record of the block: am_heap_data), then
 * sends a short reply of the same fields.  A reply longer than the call's cap
 * (the inline cap, or the room's), or one with data to a call without a room
 * or cap, is -EMSGSIZE to both.  A handler that does
 * not reply gets an empty one sent for it; a call to a handler not set, an
 * -ENOENT.  Every reply goes to the caller it answers only: the peer whose
 * serial (peers.c) the handler's source had when it replied, or a kept
 * handle's when it was kept; room and packet both refuse another peer at its
 * index (-EPIPE).  A server never waits for one client: a call's reply is placed
 * without waiting (AM_SEND_NOWAIT), and if the caller's queue has no room
 * now (it holds other traffic: only calls have room kept) the reply is kept
 * (struct am_owed: a packet's worth, and an inline reply's data, at most
 * AM_MEDIUM_BYTES; a room's data is in the room already) and tried again on
 * later polls, in order; at most one per call received.
 *
 * Every call ends.  The caller's waits (wait.c) sleep at most abandon_ms at a
 * time while calls are outstanding, and then ask each destination's lifeline
 * (am__peer_alive: never a pid) and each deadline (am__calls_check).  A
 * destination seen dead is polled for once more before its calls end, so a
 * reply it published before it died is still taken.
 *
 * Calls from any thread (a shared endpoint, threads.h).  calls_mu guards
 * struct am_calls and every record's fields (the owner's endpoint takes no
 * lock: am__mt_lock).  Records never move (rec[] points into chunks that
 * live as long as the endpoint), so a pointer to one stays valid across
 * waits; what it holds is re-read under the lock, and its id says whether it
 * is still the same call.  A record goes through these states:
 *   free         id 0;
 *   taken        id set, rc -EAGAIN: its starter's alone while it finds the
 *                room (counted in `live`, the limit's count);
 *   outstanding  rc -EINPROGRESS, awaiting: the reply may come from the
 *                moment the request is published, so this is set before
 *                the send, and whichever thread polls takes it into the
 *                record; `sending` meanwhile keeps the room and the record
 *                (others may end the call, never free what the send uses);
 *   ended        rc its end, the user's (`user`) until collected, awaiting
 *                while a late reply may still come.
 * A call may end on any thread (its reply taken by another thread's poll,
 * its deadline or its server's death seen by another's check) while its
 * waiter sleeps: whoever ends a call wakes the endpoint's sleepers (calls_
 * unlock), and a wait checks its own call after announcing itself asleep
 * and before sleeping (wait.c), so either it sees the end or the ender sees
 * it asleep (the fences of wake_waiters and sleep_once).
 *
 * The parts.  call.c (this file) starts calls: am_call_start, am_call_try.
 * call_records.c keeps the records and their ids (struct am_calls, calls_mu);
 * call_rooms.c the rooms of replies in our reply heap and their bound per
 * destination; call_reply.c the reply paths, a reply taken into its call on
 * the caller's side and a call's reply written and placed (or kept) on the
 * server's; call_wait.c the waits and every end: am_call_test, am_call_wait,
 * am_call_cancel, am_call, deadlines and dead servers.  call_records.h
 * declares what they share.
 */
#include <errno.h>
#include <stdint.h>

#include "call.h"
#include "call_records.h"
#include "internal.h"
#include "net.h"
#include "send.h"
#include "waiting.h"

static int got_record(am_ep_t *ep, int n, void *ctx)
{
    struct am_call_starting *s = ctx;
    am__calls_lock(ep);
    s->r = am__call_rec_take(s->c, s->dest, s->res, s->deadline);
    am__calls_unlock(ep);
    return s->r != NULL;
}

/* am__wait_for(got), counted in c->starts: whoever frees a record or room
 * meanwhile wakes us. */
int am__call_start_wait(am_ep_t *ep, struct am_calls *c, struct am_call_starting *s,
                        am_wait_done_fn got)
{
    am__calls_lock(ep);
    c->starts++;
    am__calls_unlock(ep);
    int rc = am__wait_for(ep, s->deadline, got, s);
    am__calls_lock(ep);
    c->starts--;
    am__calls_unlock(ep);
    return rc;
}

/* What the request of a call names: a private copy of its record's fields,
 * made under the lock (the send reads no record). */
struct call_wire {
    uint32_t call;
    uint64_t block; /* its room; 0: none, the cap travels in the packet */
    uint32_t cap;   /* the call's: what the server may reply */
    unsigned dest;
    int64_t deadline;
    int now; /* am_call_try's: the send never waits for room (-EAGAIN) */
};

/* Send the request of call w: the kind its length takes. */
static int send_request(am_ep_t *ep, const struct call_wire *w, unsigned handler,
                        const uint32_t *args, int nargs, const void *data, size_t len)
{
    struct am_msg m = {len == 0               ? AM_SHORT
                       : len <= AM_BULK_BYTES ? AM_BULK
                                              : AM_LONG,
                       handler,
                       args,
                       nargs,
                       data,
                       len,
                       0,
                       w->call,
                       w->block ? (uint32_t)(w->block / 64) : AM_CALL_INLINE | w->cap,
                       0};
    if (w->block) {
        struct am_call_room *head =
            am_heap_data(am__call_heap(ep), w->block, AM_CALL_ROOM_HEAD, AM_OWN_WHO);
        head->call = m.call; /* published by the request's release */
        head->cap = w->cap;
    }
    struct am_send_limit outer = am__send_limit;
    am__send_limit =
        w->now ? (struct am_send_limit){AM_SEND_NOWAIT, 0, 0}
               : (struct am_send_limit){w->deadline == INT64_MAX ? AM_SEND_FOREVER
                                                                 : AM_SEND_DEADLINE,
                                        0, w->deadline};
    int rc = am__send(ep, w->dest, AM_REQUEST, &m);
    am__send_limit = outer;
    return rc;
}

/* Taken record r becomes outstanding, sending (its reply may come as soon as
 * the request is published, on any thread); its wire fields. */
static struct call_wire rec_launch(am_ep_t *ep, struct am_calls *c, struct am_call_rec *r)
{
    am__calls_lock(ep);
    r->rc = -EINPROGRESS, r->user = 1, r->awaiting = 1, r->sending = 1;
    c->awaiting++;
    if (r->roomed)
        am__call_held_charge(c, r, AM_CALL_ROOM_HEAD + r->cap);
    struct call_wire w = {
        (uint32_t)r->id, r->roomed ? r->block : 0, r->want, r->dest, r->deadline, 0};
    am__calls_unlock(ep);
    return w;
}

/* r's request went (sent: 0) or not (an error): end its sending.  A request
 * never sent gets no reply: its record is free again. */
static void rec_sent(am_ep_t *ep, struct am_calls *c, struct am_call_rec *r, int sent)
{
    am__calls_lock(ep);
    r->sending = 0;
    if (sent < 0) {
        if (r->rc == -EINPROGRESS || r->rc == -EAGAIN)
            c->live--; /* never outstanding: not counted as ended */
        if (r->awaiting)
            r->awaiting = 0, c->awaiting--, am__call_held_uncharge(c, r);
        r->user = 0;
    }
    if (!r->awaiting)
        am__call_room_release(ep, r, 1); /* deferred while sending (am__call_rec_unawait) */
    am__call_rec_settle(r);
    am__calls_unlock(ep);
}

static int call_start(am_ep_t *ep, struct am_calls *c, struct am_call_starting *s,
                      unsigned handler, const uint32_t *args, int nargs, const void *data,
                      size_t len, am_call_t *id)
{
    int rc = got_record(ep, 0, s) ? 1
             : s->now             ? -EAGAIN
                                  : am__call_start_wait(ep, c, s, got_record);
    if (rc != 1)
        return rc == 0 ? -ETIMEDOUT : rc;
    struct am_result *res = s->res;
    size_t cap = res->cap < am__call_cap_max(ep) ? res->cap : am__call_cap_max(ep);
    res->len = 0, res->nargs = 0;
    if ((rc = am__call_room_get(ep, s, cap)) < 0) {
        rec_sent(ep, c, s->r, rc);
        return rc;
    }
    am__hook(AM_HOOK_CALL_ROOMED);
    struct call_wire w = rec_launch(ep, c, s->r);
    w.now = s->now;
    rc = send_request(ep, &w, handler, args, nargs, data, len);
    rec_sent(ep, c, s->r, rc);
    if (rc == 0)
        *id = s->r->id; /* the user's from now: no other thread frees it */
    return rc;
}

/* am_call_start and am_call_try: `now` says never wait. */
static int start(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                 int nargs, const void *data, size_t len, struct am_result *res,
                 int timeout_ms, am_call_t *id, int now)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (!res || !id || handler >= AM_MAX_HANDLERS || dest >= AM_MAX_PEERS ||
        (len && !data) || (res->cap && !res->data))
        return -EINVAL; /* dest: no index is higher (held_over's table) */
    if (am__in_handler(ep))
        return -EDEADLK;
    if (ep->net && am__net_remote(ep->net, dest))
        return -EOPNOTSUPP;                /* calls go to endpoints of this node */
    struct am_calls *c = am__calls_of(ep); /* a shared endpoint's is made (am_ep_share) */
    if (!c)
        return -ENOMEM;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : am__now_ns() + timeout_ms * 1000000LL;
    struct am_call_starting s = {c, NULL, 0, dest, res, deadline, now};
    int shared = am__calls_enter(ep);
    rc = call_start(ep, c, &s, handler, args, nargs, data, len, id);
    am__calls_leave(ep, shared);
    return rc;
}

int am_call_start(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                  int nargs, const void *data, size_t len, struct am_result *res,
                  int timeout_ms, am_call_t *id)
{
    return start(ep, dest, handler, args, nargs, data, len, res, timeout_ms, id, 0);
}

int am_call_try(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                int nargs, const void *data, size_t len, struct am_result *res,
                int timeout_ms, am_call_t *id)
{
    return start(ep, dest, handler, args, nargs, data, len, res, timeout_ms, id, 1);
}
