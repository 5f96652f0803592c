/*
 * endpoint.c - creating and destroying an endpoint, and its handler table.
 *
 * The owner creates the segment, lays it out (view.c), takes the owner's
 * lifeline (lifeline.h), release-stores LIVE, and only then gives the segment
 * its name (POSIX; a System V segment is named from the start and judged by its
 * state), so a process attaching sees a complete endpoint or none.  An
 * anonymous endpoint (am_ep_create(NULL, ...)) has no name: its segment's
 * address (segment.h) stands for one, in its header, in the sender entries
 * it takes and for am_ep_name; peers reach it only by that address, and
 * nothing of it outlives the processes that have it mapped.  A name that
 * is taken by a segment whose owner is gone (closed, dead, or a half-made System
 * V segment nobody has attached) is reclaimed.  Destroy release-stores CLOSED
 * first, so senders stop with -EPIPE instead of waiting on a queue nobody
 * drains, then leaves every peer, removes the name, lets go of the lifeline and
 * unmaps.
 *
 * Handles.  A destroyed am_ep_t is poisoned (magic AM_EP_DEAD) and kept on a
 * free list for the next am_ep_create, so a second destroy, or any call on a
 * destroyed endpoint, finds the poison and returns -EINVAL instead of touching
 * freed memory, at the cost of one load already on the call's path.  (Once the
 * handle is reused by a new endpoint it names that endpoint.)
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "deliver.h"
#include "endpoint.h"
#include "internal.h"
#include "job.h"
#include "loan.h"
#include "net.h"
#include "options.h"
#include "peers.h"
#include "pending.h"
#include "region.h"
#include "rendezvous.h"
#include "waiting.h"

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static am_ep_t *spare; /* destroyed handles, linked through their peers field */

static am_ep_t *ep_alloc(void)
{
    pthread_mutex_lock(&spare_lock);
    am_ep_t *ep = spare;
    if (ep)
        spare = (am_ep_t *)(void *)ep->peers;
    pthread_mutex_unlock(&spare_lock);
    if (!ep)
        return calloc(1, sizeof *ep);
    memset(ep, 0, sizeof *ep);
    return ep;
}

static void ep_free(am_ep_t *ep)
{
    ep->magic = AM_EP_DEAD;
    pthread_mutex_lock(&spare_lock);
    ep->peers = (struct am_peer **)(void *)spare;
    spare = ep;
    pthread_mutex_unlock(&spare_lock);
}

/* Is this mapped segment one whose owner is gone?  Only ever asked of our own
 * user's segments (segment.c refuses others). */
int am__ep_stale(const struct am_segment *seg)
{
    const struct am_seg_header *h = seg->base;
    AO_t st =
        seg->size >= sizeof *h && h->magic == AM_MAGIC ? AO_load(&h->state) : AM_SEG_INIT;
    if (st == AM_SEG_CLOSED)
        return 1;
    if (st == AM_SEG_LIVE)
        return am__lifeline_gone(&h->owner_life);
    /* Half made: POSIX names show only complete segments, so this is debris;
     * a System V creator at work has it attached besides us. */
    return seg->backend == AM_SHM_POSIX || am__segment_users(seg) <= 1;
}

/* Remove the segment of this name if its owner is gone, and its region if
 * that region's mark says so too (region.c).  Returns 1 if it did. */
static int reclaim_stale(enum am_shm b, const char *name)
{
    struct am_segment seg;
    int rc = am__segment_open(b, name, &seg), gone = rc == -EPROTO;
    if (rc == 0) {
        gone = am__ep_stale(&seg);
        am__segment_unmap(&seg);
    }
    if (!gone || am__segment_unlink(b, name) != 0)
        return 0;
    am__region_unlink_stale(b, name);
    return 1;
}

/* Lay out a fresh segment, view it as its owner, take its lifeline, go LIVE,
 * then give it its name. */
static int open_for_business(am_ep_t *ep, struct am_segment *seg,
                             const struct am_config *cfg, const char *name)
{
    struct am_seg_view *own = &ep->own;
    struct am_seg_header *h = seg->base;
    int rc = am__layout_write(seg->base, cfg, name);
    if (rc == 0)
        rc = am__view_own(own, seg);
    if (rc == 0)
        rc = am__chans_open(ep);
    if (rc == 0)
        rc = am__lifeline_take(&h->owner_life);
    if (rc < 0)
        return rc;
    am__hook(AM_HOOK_CREATING);
    AO_store_release(&h->state, AM_SEG_LIVE); /* pairs with am__view_attach */
    rc = am__segment_publish(seg, name);
    if (rc == -EEXIST && reclaim_stale(cfg->backend, name))
        rc = am__segment_publish(seg, name);
    if (rc < 0)
        am__lifeline_release(&h->owner_life);
    own->seg = *seg; /* published: no file descriptor left */
    return rc;
}

/* An anonymous endpoint: its segment made, sealed at once (segment.h), laid
 * out and opened under its address, which becomes its name; nothing to
 * publish, nothing ever to unlink. */
static int create_anon(am_ep_t *ep, const struct am_config *cfg)
{
    struct am_segment seg;
    int rc = am__segment_make_anon(cfg->backend, am__layout_size(cfg), &seg, ep->name,
                                   sizeof ep->name);
    if (rc < 0)
        return rc;
    am__hook(AM_HOOK_ANON_MADE);
    rc = am__segment_seal(&seg, ep->name);
    if (rc == 0)
        rc = open_for_business(ep, &seg, cfg, ep->name);
    if (rc < 0)
        am__segment_discard(&seg, ep->name);
    ep->unlinked = 1;
    return rc;
}

static int create_segment(am_ep_t *ep, const struct am_config *cfg)
{
    if (cfg->anon)
        return create_anon(ep, cfg);
    size_t size = am__layout_size(cfg);
    struct am_segment seg;
    int rc = am__segment_make(cfg->backend, ep->name, size, &seg);
    if (rc == -EEXIST && reclaim_stale(cfg->backend, ep->name))
        rc = am__segment_make(cfg->backend, ep->name, size, &seg);
    if (rc < 0)
        return rc;
    rc = open_for_business(ep, &seg, cfg, ep->name);
    if (rc < 0)
        am__segment_discard(&seg, ep->name);
    return rc;
}

/* am_ep_create, or (door) a listener's door for one caller: anonymous, with a
 * request heap (AM_SEG_DOOR). */
static int ep_create(const char *name, const struct am_ep_opts *opts, int door,
                     am_ep_t **out)
{
    struct am_config cfg;
    if (!out || (name && !am__name_valid(name)))
        return -EINVAL;
    if (am__handlers_running)
        return -EDEADLK;
    int rc = am__config_resolve(opts, name == NULL, &cfg);
    if (rc < 0)
        return rc;
    cfg.door = door && cfg.anon;
    am_ep_t *ep = ep_alloc();
    if (!ep)
        return -ENOMEM;
    if (name)
        strcpy(ep->name, name);
    ep->backend = cfg.backend;
    ep->abandon_ms = cfg.abandon_ms;
    ep->send_timeout_ms = cfg.send_timeout_ms;
    am__barrier_handlers(ep);
    ep->handlers[AM_H_GIVEN_BACK] = am__loan_given_back;
    if ((rc = am__mt_init(ep)) < 0) {
        ep_free(ep);
        return rc;
    }
    ep->sources = calloc(cfg.max_senders, sizeof *ep->sources);
    rc = ep->sources ? create_segment(ep, &cfg) : -ENOMEM;
    if (rc < 0) {
        am__chans_free(ep);
        free(ep->sources);
        am__mt_fini(ep);
        ep_free(ep);
        return rc;
    }
    ep->magic = AM_EP_MAGIC;
    *out = ep;
    return 0;
}

int am_ep_create(const char *name, const struct am_ep_opts *opts, am_ep_t **out)
{
    return ep_create(name, opts, 0, out);
}

int am__ep_create_door(const struct am_ep_opts *opts, am_ep_t **out)
{
    return ep_create(NULL, opts, 1, out);
}

/* Remove the endpoint's name now: peers that mapped it keep their mapping, and
 * no name is left behind even if every process is killed later. */
int am__ep_unlink(am_ep_t *ep)
{
    if (ep->unlinked)
        return 0;
    ep->unlinked = 1;
    return am__segment_unlink(ep->backend, ep->name);
}

int am_ep_destroy(am_ep_t *ep)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    if (ep->mt.owner != am__self())
        return -EPERM; /* the owner's thread holds its lifeline */
    if (am__in_handler(ep))
        return -EDEADLK;
    if (ep->mt.shared && AO_load(&ep->mt.inside))
        return -EBUSY; /* another thread sends, polls or waits on it */
    am__loan_drop(ep);
    am__rdv_close(ep); /* its doors, socket and thread; a client's links */
    int rc_net = ep->net ? ep->net->ops->close(ep) : 0; /* collective (net.h) */
    ep->net = NULL;
    AO_store_release(&ep->own.hdr->state, AM_SEG_CLOSED);
    am__wake(ep->own.shared);
    am__peers_close(ep);
    am__pending_free(ep);
    am__calls_free(ep);
    am__region_destroy(ep);
    int rc = am__ep_unlink(ep);
    am__lifeline_release(&ep->own.hdr->owner_life); /* before the unmap: glibc
                                                       lists it while held */
    am__segment_unmap(&ep->own.seg);
    am__chans_free(ep);
    free(ep->sources);
    am__mt_fini(ep);
    ep_free(ep);
    return rc_net < 0 ? rc_net : rc == -ENOENT ? 0 : rc;
}

/* The segment of an address, or of a name in backend `first`, else in the
 * other; as am__segment_open / am__segment_open_addr. */
int am__ep_open(enum am_shm first, const char *name, struct am_segment *seg)
{
    if (name[0] == '@')
        return am__segment_open_addr(name, seg);
    int rc = am__segment_open(first, name, seg);
    enum am_shm other = first == AM_SHM_POSIX ? AM_SHM_SYSV : AM_SHM_POSIX;
    return rc == -ENOENT ? am__segment_open(other, name, seg) : rc;
}

/* Does the header of seg name `name`?  (At an address: a later endpoint at
 * a reused pid, fd or id does not.)  One private copy of the name. */
static int names(const struct am_segment *seg, const char *name)
{
    char copy[AM_NAME_MAX];
    const struct am_seg_header *h = seg->base;
    if (seg->size < sizeof *h)
        return 0;
    memcpy(copy, h->name, sizeof copy);
    return strncmp(copy, name, sizeof copy) == 0;
}

int am_ep_probe(const char *name)
{
    if (!am__name_valid(name) && !am__addr_valid(name))
        return -EINVAL;
    struct am_segment seg;
    int rc = am__ep_open(AM_SHM_POSIX, name, &seg);
    if (rc < 0)
        return rc == -EPROTO ? 0 : rc;
    if (name[0] == '@' && !names(&seg, name))
        rc = -ENOENT;
    else
        rc = !am__ep_stale(&seg);
    am__segment_unmap(&seg);
    return rc;
}

int am_set_handler(am_ep_t *ep, unsigned id, am_handler_t fn)
{
    if (!am__ep_ok(ep) || id >= AM_MAX_HANDLERS)
        return -EINVAL;
    if (ep->mt.owner != am__self())
        return -EPERM; /* serving threads read the table unlocked */
    if (am__in_handler(ep))
        return -EDEADLK;
    ep->handlers[id] = fn;
    return 0;
}

const char *am_ep_name(const am_ep_t *ep)
{
    return am__ep_ok(ep) ? ep->name : NULL;
}

const char *am_ep_claim(const am_ep_t *ep)
{
    return am__ep_ok(ep) ? am_claim_names[ep->own.claim] : NULL;
}

const char *am_ep_queue(const am_ep_t *ep)
{
    return am__ep_ok(ep) ? am_queue_names[ep->own.queue] : NULL;
}

unsigned long am_ep_bad_packets(const am_ep_t *ep)
{
    return am__ep_ok(ep) ? ep->bad_packets : 0;
}

unsigned long am_ep_abandoned(const am_ep_t *ep)
{
    return am__ep_ok(ep) ? ep->abandoned : 0;
}

size_t am_ep_long_max(const am_ep_t *ep)
{
    return am__ep_ok(ep) ? ep->own.long_max : 0;
}
