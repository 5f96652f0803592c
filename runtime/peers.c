/*
 * peers.c - the endpoints this one may send to, by small index.
 *
 * Mapping a peer opens its segment (trying this endpoint's backend first, then
 * the other; an anonymous endpoint's by its address), checks its header, refuses it unless
 * its owner is alive, and registers this endpoint in the peer's sender table.  A process
 * that maps its own name sends through its own view.
 *
 * Peers learned from incoming messages (a server's clients) take the lowest free
 * index.  A learned peer whose endpoint has closed or whose owner died gives its
 * index up to the next one learned, so a long-lived server keeps as many peers
 * mapped as it has live clients, not as many as it ever had; cached sources
 * naming that index are forgotten with it (poll.c), so no message of an old
 * client is credited to a new one.  Peers the user mapped keep their index.
 *
 * Dropping a peer while a call holds it.  A peer is dropped during a poll
 * (learning a sender: am__peer_learn, from am__source_index) or by am_ep_map,
 * which handlers may not call.  A send holds its peer, and views into it,
 * across the polls of its backoff, and a handler run by such a poll may send
 * again (a reply), so the peer must outlive the poll: while any send is in
 * progress on the endpoint (ep->peer_holds > 0), a dropped peer leaves
 * peers[] at once (its index is free for the next one learned) but stays
 * mapped, marked `dropped`, on the endpoint's list, and is closed when the
 * outermost send ends (am__peers_unhold), or at am_ep_destroy.  A send that
 * finds its peer dropped fails with -EPIPE (send.c, am__backoff).
 *
 * A shared endpoint (threads.h) opens and closes its peers on its keeper
 * thread, which holds their lifelines in the peers' sender tables.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "internal.h"
#include "endpoint.h"
#include "options.h"
#include "peers.h"
#include "region.h"
#include "rendezvous.h"
#include "senders.h"

struct am_peer *am__peer(am_ep_t *ep, unsigned index)
{
    return index < ep->peers_n ? ep->peers[index] : NULL;
}

static int grow(am_ep_t *ep, unsigned index)
{
    if (index < ep->peers_n)
        return 0;
    unsigned n = ep->peers_n ? ep->peers_n : 8;
    while (n <= index)
        n *= 2;
    struct am_peer **p = realloc(ep->peers, n * sizeof *p);
    if (!p)
        return -ENOMEM;
    memset(p + ep->peers_n, 0, (n - ep->peers_n) * sizeof *p);
    ep->peers = p;
    ep->peers_n = n;
    return 0;
}

/* Open and check the segment named `name`, in either backend, or at address
 * `name`. */
static int open_view(am_ep_t *ep, const char *name, struct am_seg_view *v)
{
    struct am_segment seg;
    int rc = ep->rdv ? am__rdv_open(ep, name, &seg) : am__ep_open(ep->backend, name, &seg);
    if (rc < 0)
        return rc;
    rc = am__view_attach(v, &seg, name);
    if (rc == 0 && !am__peer_alive(v))
        rc = -EPIPE;
    if (rc < 0)
        am__segment_unmap(&seg);
    return rc;
}

static int peer_open(am_ep_t *ep, struct am_peer *p, const char *name)
{
    strncpy(p->name, name, AM_NAME_MAX - 1);
    p->view = &p->view_store;
    if (strcmp(name, ep->name) == 0)
        p->view = &ep->own;
    else {
        int rc = open_view(ep, name, p->view);
        if (rc < 0)
            return rc;
    }
    int rc = am__sender_register(p->view, ep->name, &p->sender_index, &p->who);
    if (rc == 0 && p->view->queue != AM_QUEUE_MPSC && (rc = am__chan_open_tx(p)) < 0)
        am__sender_release(p->view, p->sender_index);
    if (rc < 0 && p->view == &p->view_store)
        am__segment_unmap(&p->view_store.seg);
    return rc;
}

/* Leave a peer's sender table and unmap it. */
static void peer_close_here(struct am_peer *p)
{
    am__sender_release(p->view, p->sender_index);
    am__region_close(p);
    am__fd_peer_close(p);
    pthread_mutex_destroy(&p->tx_mu[AM_REQUEST]);
    pthread_mutex_destroy(&p->tx_mu[AM_REPLY]);
    if (p->view == &p->view_store)
        am__segment_unmap(&p->view_store.seg);
    free(p);
}

static void close_on_keeper(void *p)
{
    peer_close_here(p);
}

/* Close a peer on the thread that holds its lifeline in the peer's table:
 * the keeper, or the owner (a peer it mapped before am_ep_share): one that
 * another thread drops waits on owner_drops for the owner (threads.h). */
static void peer_close(am_ep_t *ep, struct am_peer *p)
{
    if (p->kept_by_keeper)
        am__keeper_run(ep, close_on_keeper, p);
    else if (ep->mt.owner == am__self())
        peer_close_here(p);
    else {
        p->next_drop = ep->mt.owner_drops;
        ep->mt.owner_drops = p;
    }
}

/* Close the peers dropped while held (or just now, outside a hold), and on
 * the owner's thread the ones left for it. */
void am__peers_close_dropped(am_ep_t *ep)
{
    while (ep->drops) {
        struct am_peer *p = ep->drops;
        ep->drops = p->next_drop;
        peer_close(ep, p);
    }
    while (ep->mt.owner_drops && ep->mt.owner == am__self()) {
        struct am_peer *p = ep->mt.owner_drops;
        ep->mt.owner_drops = p->next_drop;
        peer_close_here(p);
    }
}

/* Forget peer `index` (if any), e.g. because its owner went away, and every
 * cached source that resolved to it.  Closed now, or, inside a peer hold,
 * marked dropped and closed once the hold ends. */
void am__peer_drop(am_ep_t *ep, unsigned index)
{
    struct am_peer *p = am__peer(ep, index);
    if (!p)
        return;
    ep->peers[index] = NULL;
    am__calls_peer_gone(ep, index); /* its calls end, replies owed to it go */
    for (unsigned i = 0; i < ep->own.max_senders; i++)
        if (ep->sources[i].who != 0 && ep->sources[i].index == index)
            ep->sources[i].who = 0;
    p->dropped = 1;
    p->next_drop = ep->drops;
    ep->drops = p;
    if (ep->peer_holds == 0)
        am__peers_close_dropped(ep);
}

struct open_req {
    am_ep_t *ep;
    struct am_peer *p;
    const char *name;
    int rc;
};

static void open_on_keeper(void *arg)
{
    struct open_req *o = arg;
    o->rc = peer_open(o->ep, o->p, o->name);
}

/* peer_open, on a shared endpoint's keeper thread (its lifeline in the
 * peer's table must outlive whichever thread maps or learns the peer). */
static int peer_open_kept(am_ep_t *ep, struct am_peer *p, const char *name)
{
    struct open_req o = {ep, p, name, 0};
    if (!ep->mt.shared)
        return peer_open(ep, p, name);
    p->kept_by_keeper = 1;
    am__keeper_run(ep, open_on_keeper, &o);
    return o.rc;
}

/* Map `name` (or an anonymous endpoint's address) as peer `index`.  0 if done
 * (or already so mapped), -EEXIST if the index holds another live peer,
 * -ENOENT / -EAGAIN if the peer does not exist / is not ready yet, -EPIPE if
 * its owner has gone, -EPROTO if its segment does not match, -EACCES if it is
 * another user's, -EUSERS if its table is full.  An index whose endpoint has
 * closed or died may be mapped again, to the same name (a restarted peer) or
 * another; the new peer is opened before the old is dropped, so an index
 * whose re-map fails keeps its gone peer (its sends and calls: -EPIPE, never
 * an unmapped index's -EINVAL). */
static int peer_add(am_ep_t *ep, unsigned index, const char *name)
{
    if (index >= AM_MAX_PEERS || (!am__name_valid(name) && !am__addr_valid(name)))
        return -EINVAL;
    struct am_peer *old = am__peer(ep, index);
    if (old && am__peer_alive(old->view))
        return strcmp(old->name, name) == 0 ? 0 : -EEXIST;
    struct am_peer *p = calloc(1, sizeof *p);
    int rc = p ? grow(ep, index) : -ENOMEM;
    if (rc == 0)
        rc = peer_open_kept(ep, p, name);
    if (rc < 0) {
        free(p);
        return rc;
    }
    am__peer_drop(ep, index);
    p->serial = ++ep->mt.peer_serial;
    pthread_mutex_init(&p->tx_mu[AM_REQUEST], NULL);
    pthread_mutex_init(&p->tx_mu[AM_REPLY], NULL);
    ep->peers[index] = p;
    return 0;
}

/* The lowest index that is free, or held by a learned peer that has gone. */
static unsigned free_index(am_ep_t *ep)
{
    for (unsigned i = 0; i < ep->peers_n; i++) {
        struct am_peer *p = ep->peers[i];
        if (!p || (p->learned && !am__peer_alive(p->view)))
            return i;
    }
    return ep->peers_n;
}

/* Drop every learned peer whose endpoint has closed or whose owner died, so
 * a server maps its live clients only: a dead anonymous client's segment
 * then goes with the server's mapping (nothing else holds it), and a named
 * one's memory with its name.  Peers the user mapped keep their index.
 * Under peers_mu when shared. */
static void prune(am_ep_t *ep)
{
    for (unsigned i = 0; i < ep->peers_n; i++)
        if (ep->peers[i] && ep->peers[i]->learned && !am__peer_alive(ep->peers[i]->view))
            am__peer_drop(ep, i);
}

/* prune, from a poll's chores (which hold no peers_mu: take it). */
void am__peers_prune(am_ep_t *ep)
{
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    prune(ep);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
}

/* The local index of the sender named `name`, mapping it if it is not mapped
 * (or its mapping is of an endpoint since gone: a restarted process).
 * AM_SOURCE_UNKNOWN if it cannot be mapped (it has gone). */
unsigned am__peer_learn(am_ep_t *ep, const char *name)
{
    unsigned i = ep->peers_n; /* the first index holding name, if none lives */
    for (unsigned k = 0; k < ep->peers_n; k++)
        if (ep->peers[k] && strcmp(ep->peers[k]->name, name) == 0) {
            if (am__peer_alive(ep->peers[k]->view))
                return k; /* a live one: never re-point a dead index at it */
            if (i == ep->peers_n)
                i = k;
        }
    prune(ep); /* a newcomer: let the departed go first */
    if (i == ep->peers_n || !ep->peers[i])
        i = free_index(ep);
    int learned = i >= ep->peers_n || !ep->peers[i] || ep->peers[i]->learned;
    if (peer_add(ep, i, name) < 0)
        return AM_SOURCE_UNKNOWN;
    ep->peers[i]->learned = learned;
    return i;
}

/* Forget every peer: leave their sender tables, unmap them. */
void am__peers_close(am_ep_t *ep)
{
    am__peers_close_dropped(ep); /* the owner's: owner_drops too */
    for (unsigned i = 0; i < ep->peers_n; i++)
        if (ep->peers[i])
            peer_close(ep, ep->peers[i]);
    free(ep->peers);
    ep->peers = NULL;
    ep->peers_n = 0;
}

/* May this thread map on ep now?  0, or the error of am_ep_map and
 * am_ep_remap: -EINVAL, -EPERM, -EDEADLK (in a handler). */
static int map_allowed(am_ep_t *ep)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (am__in_handler(ep))
        return -EDEADLK;
    return 0;
}

int am_ep_map(am_ep_t *ep, unsigned index, const char *peer_name)
{
    int rc = map_allowed(ep);
    if (rc < 0)
        return rc;
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    rc = peer_add(ep, index, peer_name);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    return rc;
}

/* Map index again by the name it has: 0 once a live endpoint has it (at
 * once if the peer there is alive), else peer_add's error, the index
 * keeping its gone peer; -EINVAL for an index that holds none. */
static int peer_readd(am_ep_t *ep, unsigned index)
{
    struct am_peer *p = am__peer(ep, index);
    if (!p)
        return -EINVAL;
    char name[AM_NAME_MAX];
    int learned = p->learned;
    memcpy(name, p->name, sizeof name); /* p goes if the new one opens */
    int rc = peer_add(ep, index, name);
    if (rc == 0)
        ep->peers[index]->learned = learned;
    return rc;
}

int am_ep_remap(am_ep_t *ep, unsigned index)
{
    int rc = map_allowed(ep);
    if (rc < 0)
        return rc;
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    rc = peer_readd(ep, index);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    return rc;
}
