/*
 * peers.h - the endpoints ep may send to, by index (peers.c); the owner only.
 *   peer      the peer at an index, or NULL.
 *   learn     the index of a sender (mapping it, in a free index or one whose
 *             peer has gone); drop: forget one.
 *   close     every peer, at am_ep_destroy.
 *   prune     drop every learned peer that has gone (closed or dead): on a
 *             newcomer's arrival (learn) and on idle polls (poll.c).
 * Which calls may drop a peer: am__peer_drop, so am__peer_learn and am_ep_map
 * (which maps a name at an index; refused in handlers); hence
 * am__source_index, so every delivery and every poll (am__poll, am__drain,
 * am__blocked_poll, am__backoff, am_poll, am_wait, the transports' waits).
 * Who may hold a struct am_peer, or a view or pointer into it, across them:
 * only a call between ep->peer_holds++ and am__peers_unhold (am__send, for
 * the send and the handlers its backoff runs).  A peer dropped then is only
 * unlinked from peers[] and marked `dropped`; the holder checks `dropped`
 * after every poll and gives up with -EPIPE, and the outermost unhold closes
 * it.  Anyone else looks a peer up again by index after a poll (job.c); the
 * MPI transport's sends (net/) hold no peer, only state of their own by rank.
 */
#ifndef SHMAM_PEERS_H
#define SHMAM_PEERS_H

#include "internal.h"

struct am_peer *am__peer(am_ep_t *ep, unsigned index);
unsigned am__peer_learn(am_ep_t *ep, const char *name);
void am__peers_close(am_ep_t *ep);
void am__peer_drop(am_ep_t *ep, unsigned index);
void am__peers_prune(am_ep_t *ep);
void am__peers_close_dropped(am_ep_t *ep);
/* End a peer hold; the outermost closes the peers dropped meanwhile.  Inline:
 * every send ends one. */
static inline void am__peers_unhold(am_ep_t *ep)
{
    if (--ep->peer_holds == 0 && __builtin_expect(ep->drops != NULL, 0))
        am__peers_close_dropped(ep);
}

#endif
