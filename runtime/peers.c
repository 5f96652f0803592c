/*
 * peers.c - the endpoints this one may send to, by small index.
 *
 * Mapping a peer opens its segment (trying this endpoint's backend first, then
 * the other), checks its header, and registers this endpoint in the peer's
 * sender table.  A process that maps its own name sends through its own view.
 * Peers learned from incoming messages are added at the first free index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

/* Open and check the segment named `name`, in either backend. */
static int open_view(am_ep_t *ep, const char *name, struct am_seg_view *v)
{
    struct am_segment seg;
    int rc = am__segment_open(ep->backend, name, &seg);
    if (rc == -ENOENT)
        rc = am__segment_open(ep->backend == AM_SHM_POSIX ? AM_SHM_SYSV : AM_SHM_POSIX,
                              name, &seg);
    if (rc < 0)
        return rc;
    rc = am__view_attach(v, &seg, name);
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
    int rc = am__sender_register(p->view, ep->name, &p->sender_index);
    if (rc < 0 && p->view == &p->view_store)
        am__segment_unmap(&p->view_store.seg);
    return rc;
}

/* Leave a peer's sender table and unmap it. */
static void peer_close(struct am_peer *p)
{
    am__sender_release(p->view, p->sender_index);
    if (p->view == &p->view_store)
        am__segment_unmap(&p->view_store.seg);
    free(p);
}

/* Forget peer `index` (if any), e.g. because its owner went away. */
void am__peer_drop(am_ep_t *ep, unsigned index)
{
    struct am_peer *p = am__peer(ep, index);
    if (p) {
        peer_close(p);
        ep->peers[index] = NULL;
    }
}

/* Map `name` as peer `index`.  0 if done (or already so mapped), -EEXIST if the
 * index holds another live peer, -ENOENT / -EAGAIN if the peer does not exist /
 * is not ready yet, -EPROTO if its segment does not match, -ENOSPC if its table
 * is full.  An index whose endpoint has closed or died may be mapped again, to
 * the same name (a restarted peer) or another. */
int am__peer_add(am_ep_t *ep, unsigned index, const char *name)
{
    if (index >= AM_MAX_PEERS || !am__name_valid(name))
        return -EINVAL;
    struct am_peer *old = am__peer(ep, index);
    if (old && am__peer_alive(old->view))
        return strcmp(old->name, name) == 0 ? 0 : -EEXIST;
    am__peer_drop(ep, index);
    struct am_peer *p = calloc(1, sizeof *p);
    int rc = p ? grow(ep, index) : -ENOMEM;
    if (rc == 0)
        rc = peer_open(ep, p, name);
    if (rc < 0) {
        free(p);
        return rc;
    }
    ep->peers[index] = p;
    return 0;
}

/* Forget every peer: leave their sender tables, unmap them. */
void am__peers_close(am_ep_t *ep)
{
    for (unsigned i = 0; i < ep->peers_n; i++)
        if (ep->peers[i])
            peer_close(ep->peers[i]);
    free(ep->peers);
    ep->peers = NULL;
    ep->peers_n = 0;
}

int am_ep_map(am_ep_t *ep, unsigned index, const char *peer_name)
{
    if (!ep)
        return -EINVAL;
    return am__peer_add(ep, index, peer_name);
}
