/*
 * call.h - calls (RPC over requests): a request whose reply goes into the caller's
 * struct am_result, and that always ends.  call.c holds both halves and
 * states the design; wait.c the waiting they share with am_wait.
 */
#ifndef SHMAM_CALL_H
#define SHMAM_CALL_H

#include <stdint.h>

#include "heap.h"
#include "shmam.h"

/* The allocator id of an endpoint's own blocks in its own reply heap (the
 * rooms of its calls' replies): never a claimant id (AM_WHO < 2^21), so no
 * repair takes them for a dead sender's. */
#define AM_OWN_WHO AM_HEAP_WHO_MAX

struct am_calls;
struct am_owed;
struct am_packet;

/* The caller's half: the owner's, or any thread's of a shared endpoint
 * (call.c's file header: calls_mu).
 *   reply_in   a reply queue's packet with a call id (deliver.c), and its
 *              inline data (a medium packet's payload area, bulk_len bytes
 *              checked against AM_MEDIUM_BYTES; NULL: none): match it to its
 *              call, fill the result, or count it late.
 *   check      liveness of every destination with calls (its lifeline) and
 *              every call's deadline; outside handlers (it may poll).
 *              Returns how many calls it ended.
 *   slice      the longest a wait may sleep now (ms, at most `ms`): while
 *              calls are outstanding, abandon_ms and the next deadline.
 *   ended      calls ended so far (a wait's progress).
 *   peer_gone  peer `index` is being dropped (peers.c): its calls end with
 *              -EPIPE, replies owed to it are forgotten.
 *   init       make the calls' state now (am_ep_share: before other threads
 *              use it); 0 or -ENOMEM.
 *   free       at am_ep_destroy. */
void am__call_reply_in(am_ep_t *ep, const struct am_packet *m, unsigned source,
                       const void *data);
int am__calls_check(am_ep_t *ep);
int64_t am__calls_slice(am_ep_t *ep, int64_t now_ns, int64_t ms);
unsigned long am__calls_ended(const am_ep_t *ep);
void am__calls_peer_gone(am_ep_t *ep, unsigned index);
int am__calls_init(am_ep_t *ep);
void am__calls_free(am_ep_t *ep);

/* The server's half, for a call's request (tok->call != 0).
 *   reply      the handler's am_reply*: data into the caller's room, the
 *              short reply placed now or kept; 0, -EMSGSIZE (longer than the
 *              room: the caller gets -EMSGSIZE too), -EPIPE.  Both go to the
 *              peer of `serial` only (a kept reply's caller; 0: the peer at
 *              the token's source now, inside its handler), never to a new
 *              one at its index (-EPIPE); so do error's and unreplied's.
 *   error      the runtime's own reply: err (-ENOENT) to the caller.
 *   unreplied  the handler returned without replying: an empty reply.
 *   retry      replies kept because the caller's queue had no room: place
 *              what fits (poll.c: every AM_OWED_EVERY polls; wait.c, `now`:
 *              after each sleep, which lasts at most AM_OWED_SLICE_MS while
 *              replies are kept); never blocks. */
struct am_msg;
int am__call_reply(am_token_t *tok, unsigned long serial, const struct am_msg *m);
void am__call_error(am_token_t *tok, int err);
void am__call_unreplied(am_token_t *tok);
void am__call_retry(am_ep_t *ep, int now);
#define AM_OWED_SLICE_MS 2

#endif
