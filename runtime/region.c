/*
 * region.c - one-copy long messages (GASNet's AMLong): a region of shared
 * memory that an endpoint's owner makes once (am_region_create) and peers
 * write into straight from their own buffers (am_request_long_at).
 *
 * What identifies a region.  Endpoint NAME's region is the segment named
 * NAME:r.  No endpoint name holds ':' (am__name_valid), so no endpoint can
 * take, or be taken for, a region, in either backend (a System V key is hashed
 * from the whole name, and its trailer holds the whole name: segment_sysv.c).  Its
 * data is at the start; its last page is its mark (layout.h, struct
 * am_region_mark): AM_REGION_MAGIC, the data's size, the endpoint's name, the
 * owner's pid, and a lifeline the owner's thread holds for the region's life,
 * as it holds the endpoint's.  The owner writes the mark and takes the
 * lifeline before it release-stores the magic, and, POSIX, before the name
 * shows the segment.  Whatever acts on a region first opens it by name and
 * checks the mark: a sender before it writes (map), a reclaimer before it
 * removes (am_region_create, am__region_unlink_stale, shmamstat --clean), and
 * it removes only a marked region whose lifeline is gone, or a System V one
 * never marked that nobody else has attached (its creator died making it).
 * Only the launcher, its guardian and an MPI rank's reaper remove a region
 * unjudged (am__job_names_unlink): they know its rank has gone.  So a job's
 * regions are JOB.RANK:r, swept with the job's names.
 *
 * The owner release-stores the data's size into its endpoint header
 * (`region_bytes`, page 0, which only the owner writes) once the region is
 * complete; a sender that finds that size non-zero (acquire, pairing with it)
 * maps NAME:r on its first one-copy send, checks the mark names the endpoint
 * and that size, makes the mark's page read-only in its mapping, and keeps the
 * size as its bound.  The receiver bounds every offset a packet names by its
 * own record, never by a peer's word.
 *
 * Ordering: the sender copies the data into the region before it claims its
 * packet, and the packet's release-store of READY (mpsc_send.c) pairs with the
 * receiver's acquire-load of it, so the handler sees the data.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "job.h"
#include "options.h"
#include "peers.h"
#include "region.h"
#include "send.h"
#include "senders.h"
#include "threads.h"

#define AM_MAX_REGION ((size_t)1 << 40)
#define REGION_SUFFIX ":r"

static size_t page(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

int am__region_name(const char *name, char *buf, size_t n)
{
    int len = snprintf(buf, n, "%s" REGION_SUFFIX, name);
    return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

int am__region_of(const char *seg_name, char *name, size_t n)
{
    size_t len = strlen(seg_name), sl = strlen(REGION_SUFFIX);
    if (len <= sl || len - sl >= n || strcmp(seg_name + len - sl, REGION_SUFFIX) != 0)
        return 0;
    memcpy(name, seg_name, len - sl);
    name[len - sl] = '\0';
    return am__name_valid(name);
}

/* The mark of segment s, or NULL if s cannot be a region (its size is no
 * whole number of pages past the data). */
static struct am_region_mark *mark_of(const struct am_segment *s)
{
    if (!s->base || s->size < page() || s->size % page() != 0)
        return NULL;
    return (struct am_region_mark *)(void *)((char *)s->base + s->size - page());
}

/* What s, opened under endpoint `name`'s region name, is: AM_REGION_GONE (a
 * region whose owner has gone, or System V debris: never marked, attached by
 * nobody else), AM_REGION_LIVE (its owner holds it, or is marking it), or
 * AM_REGION_FOREIGN (no region of `name`: never touched).  *pid: the owner's,
 * 0 if unmarked.  Any process, any time; a dead owner's state is final. */
int am__region_state(const struct am_segment *s, const char *name, unsigned *pid)
{
    const struct am_region_mark *m = mark_of(s);
    *pid = 0;
    if (!m)
        return AM_REGION_FOREIGN;
    AO_t magic = AO_load_acquire(&m->magic); /* pairs with mark() */
    if (magic == 0 && s->backend == AM_SHM_SYSV)
        return am__segment_users(s) <= 1 ? AM_REGION_GONE : AM_REGION_LIVE;
    if (magic != AM_REGION_MAGIC || strncmp(m->name, name, AM_NAME_MAX) != 0)
        return AM_REGION_FOREIGN;
    *pid = m->owner_pid;
    return am__lifeline_gone(&m->owner_life) ? AM_REGION_GONE : AM_REGION_LIVE;
}

/* Remove endpoint `name`'s region if it is one whose owner has gone.  Returns 1
 * if it did.  Like the endpoint's reclaim, it can race with a new owner making
 * the region between the look and the removal. */
static int reclaim(enum am_shm b, const char *name)
{
    char r[AM_NAME_MAX];
    struct am_segment seg;
    unsigned pid;
    if (am__region_name(name, r, sizeof r) < 0 || am__segment_open(b, r, &seg) < 0)
        return 0;
    int gone = am__region_state(&seg, name, &pid) == AM_REGION_GONE;
    am__segment_unmap(&seg);
    return gone && am__segment_unlink(b, r) == 0;
}

void am__region_unlink_stale(enum am_shm b, const char *name)
{
    reclaim(b, name);
}

int am__job_names_unlink(enum am_shm b, const char *name)
{
    char r[AM_NAME_MAX];
    int rc = am__segment_unlink(b, name);
    int rc2 = am__region_name(name, r, sizeof r) == 0 ? am__segment_unlink(b, r) : -ENOENT;
    rc = rc == -ENOENT ? 0 : rc;
    return rc < 0 ? rc : rc2 == -ENOENT ? 0 : rc2;
}

/* Mark fresh segment s as ep's region of `bytes` bytes, holding its lifeline. */
static int mark(am_ep_t *ep, struct am_segment *s, size_t bytes)
{
    struct am_region_mark *m = mark_of(s);
    int rc = am__lifeline_init(&m->owner_life);
    if (rc == 0)
        rc = am__lifeline_take(&m->owner_life);
    if (rc < 0)
        return rc;
    m->bytes = bytes;
    m->owner_pid = (uint32_t)getpid();
    snprintf(m->name, sizeof m->name, "%s", ep->name);
    AO_store_release(&m->magic, AM_REGION_MAGIC); /* pairs with am__region_state */
    return 0;
}

/* Make, mark and name the region: as endpoint.c makes an endpoint, reclaiming
 * the name if a region whose owner has gone holds it. */
static int make(am_ep_t *ep, const char *r, size_t bytes, struct am_segment *s)
{
    size_t size = (bytes + page() - 1) / page() * page() + page();
    int rc = am__segment_make(ep->backend, r, size, s);
    if (rc == -EEXIST && reclaim(ep->backend, ep->name))
        rc = am__segment_make(ep->backend, r, size, s);
    if (rc < 0)
        return rc;
    rc = mark(ep, s, bytes);
    if (rc == 0 && (rc = am__segment_publish(s, r)) == -EEXIST &&
        reclaim(ep->backend, ep->name))
        rc = am__segment_publish(s, r);
    if (rc < 0) {
        am__lifeline_release(&mark_of(s)->owner_life);
        am__segment_discard(s, r);
    }
    return rc;
}

int am_region_create(am_ep_t *ep, size_t bytes, void **base)
{
    char r[AM_NAME_MAX];
    if (!am__ep_ok(ep) || !base || bytes == 0 || bytes > AM_MAX_REGION ||
        ep->name[0] == '@') /* anonymous: a region would need a name */
        return -EINVAL;
    if (ep->mt.owner != am__self())
        return -EPERM;
    if (am__in_handler(ep))
        return -EDEADLK;
    if (ep->region.base)
        return -EEXIST;
    int rc = am__region_name(ep->name, r, sizeof r);
    if (rc == 0)
        rc = make(ep, r, bytes, &ep->region);
    if (rc < 0) {
        ep->region.base = NULL;
        return rc;
    }
    ep->region_bytes = bytes;
    AO_store_release(&ep->own.hdr->region_bytes, bytes); /* pairs with map() */
    *base = ep->region.base;
    return 0;
}

/* The owner's region goes with its endpoint: name, lifeline and mapping. */
void am__region_destroy(am_ep_t *ep)
{
    char r[AM_NAME_MAX];
    if (!ep->region.base)
        return;
    if (am__region_name(ep->name, r, sizeof r) == 0)
        am__segment_unlink(ep->backend, r);
    am__lifeline_release(&mark_of(&ep->region)->owner_life); /* before the unmap */
    am__segment_unmap(&ep->region);
    ep->region.base = NULL;
    ep->region_bytes = 0;
}

/* Is s the region `bytes` long that endpoint `name` made?  Reads the mark
 * once (a private copy: the owner wrote it complete before storing the size we
 * acquired, and nobody else may write it). */
static int is_region_of(const struct am_segment *s, const char *name, size_t bytes)
{
    const struct am_region_mark *m = mark_of(s);
    if (!m)
        return 0;
    struct am_region_mark c;
    memcpy(&c, m, offsetof(struct am_region_mark, owner_life));
    return c.magic == AM_REGION_MAGIC && c.bytes == bytes && bytes <= s->size - page() &&
           strncmp(c.name, name, AM_NAME_MAX) == 0;
}

/* Map peer's region, once: 0, -ENXIO if it has none, -EPROTO if what its
 * name shows is not the region its owner said (or nothing while it says there
 * is one). */
static int map(struct am_peer *peer)
{
    char r[AM_NAME_MAX];
    AO_t bytes = AO_load_acquire(&peer->view->hdr->region_bytes);
    if (bytes == 0)
        return -ENXIO;
    int rc = am__region_name(peer->name, r, sizeof r);
    if (rc == 0)
        rc = am__segment_open(peer->view->seg.backend, r, &peer->region);
    if (rc == 0 && (!is_region_of(&peer->region, peer->name, bytes) ||
                    mprotect(mark_of(&peer->region), page(), PROT_READ) != 0)) {
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

/* Is peer's region still its owner's?  The mark's lifeline (held by the
 * owner's thread for the region's life) and the endpoint's own. */
static int region_owner_alive(const struct am_peer *peer)
{
    return am__peer_alive(peer->view) &&
           !am__lifeline_gone(&mark_of(&peer->region)->owner_life);
}

/* am_region_map: the peer's region as mapped for one-copy sends (map()
 * checks the segment's owner, uid and mode as every open does, then its
 * mark), refused once its owner has gone.  Under peers_mu (a shared
 * endpoint's threads map once), not in a handler. */
int am_region_map(am_ep_t *ep, unsigned dest, void **base, size_t *len)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (!base || !len)
        return -EINVAL;
    if (am__in_handler(ep))
        return -EDEADLK;
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    struct am_peer *peer = am__peer(ep, dest);
    if (!peer)
        rc = -EINVAL;
    else if (peer->dropped)
        rc = -EPIPE;
    else if (!peer->region_bytes)
        rc = map(peer);
    if (rc == 0 && !region_owner_alive(peer))
        rc = -EPIPE;
    if (rc == 0) {
        *base = peer->region.base;
        *len = peer->region_bytes;
    }
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    return rc;
}
