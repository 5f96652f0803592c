/*
 * region.c - one-copy long messages (GASNet's AMLong): a region of shared
 * memory that an endpoint's owner makes once (am_region_create) and peers
 * write into straight from their own buffers (am_request_long_at).
 *
 * The region is its own segment, named NAME.r for endpoint NAME (so a job's
 * regions are JOB.RANK.r, which the launcher sweeps with the job's names),
 * mode 0600 like every segment.  The owner makes it complete, then
 * release-stores its size into its header (`region_bytes`, page 0, which only
 * the owner writes); a sender that finds that size non-zero (acquire, pairing
 * with it) maps NAME.r on its first one-copy send and keeps the size it read as
 * its bound, checking the segment is at least that large.  The receiver bounds
 * every offset a packet names by its own record, never by a peer's word.
 *
 * Ordering: the sender copies the data into the region before it claims its
 * packet, and the packet's release-store of READY (send.c) pairs with the
 * receiver's acquire-load of it, so the handler sees the data.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define AM_MAX_REGION ((size_t)1 << 40)

/* NAME.r into buf (AM_NAME_MAX bytes: a name is at most AM_MAX_NAME). */
static const char *region_name(char *buf, const char *name)
{
    snprintf(buf, AM_NAME_MAX, "%.*s.r", (int)AM_MAX_NAME, name);
    return buf;
}

int am_region_create(am_ep_t *ep, size_t bytes, void **base)
{
    char name[AM_NAME_MAX];
    if (!am__ep_ok(ep) || !base || bytes == 0 || bytes > AM_MAX_REGION)
        return -EINVAL;
    if (ep->in_handler)
        return -EDEADLK;
    if (ep->region.base)
        return -EEXIST;
    region_name(name, ep->name);
    int rc = am__segment_create(ep->backend, name, bytes, &ep->region);
    if (rc == -EEXIST && am__segment_unlink(ep->backend, name) == 0) /* a dead owner's */
        rc = am__segment_create(ep->backend, name, bytes, &ep->region);
    if (rc < 0) {
        ep->region.base = NULL;
        return rc;
    }
    ep->region_bytes = bytes;
    AO_store_release(&ep->own.hdr->region_bytes, bytes); /* pairs with map() */
    *base = ep->region.base;
    return 0;
}

/* The owner's region goes with its endpoint: name and mapping. */
void am__region_destroy(am_ep_t *ep)
{
    char name[AM_NAME_MAX];
    if (!ep->region.base)
        return;
    am__segment_unlink(ep->backend, region_name(name, ep->name));
    am__segment_unmap(&ep->region);
    ep->region.base = NULL;
    ep->region_bytes = 0;
}

/* A creator that reclaimed the name of an endpoint whose owner had gone removes
 * that owner's region too (nobody else owns NAME.r). */
void am__region_unlink_stale(enum am_shm b, const char *name)
{
    char r[AM_NAME_MAX];
    am__segment_unlink(b, region_name(r, name));
}

/* Map peer's region, once: 0, -ENXIO if it has none, -EPROTO if the segment
 * is smaller than its owner said (or not there while it says it is). */
static int map(struct am_peer *peer)
{
    char name[AM_NAME_MAX];
    AO_t bytes = AO_load_acquire(&peer->view->hdr->region_bytes);
    if (bytes == 0)
        return -ENXIO;
    int rc = am__segment_open(peer->view->seg.backend, region_name(name, peer->name),
                              &peer->region);
    if (rc == 0 && peer->region.size < bytes) {
        am__segment_unmap(&peer->region);
        rc = -EPROTO;
    }
    if (rc < 0) {
        peer->region.base = NULL;
        return rc == -ENOENT || rc == -EPROTO ? -EPROTO : rc;
    }
    peer->region_bytes = (size_t)bytes;
    return 0;
}

int am__region_write(struct am_peer *peer, const struct am_msg *m)
{
    int rc = peer->region_bytes ? 0 : map(peer);
    if (rc < 0)
        return rc;
    if (m->off > peer->region_bytes || m->len > peer->region_bytes - m->off)
        return -EMSGSIZE;
    if (m->len)
        memcpy((char *)peer->region.base + m->off, m->data, m->len);
    return 0;
}

void am__region_close(struct am_peer *peer)
{
    if (peer->region_bytes)
        am__segment_unmap(&peer->region);
    peer->region_bytes = 0;
}
