/*
 * endpoint.c - creating and destroying an endpoint, and its handler table.
 *
 * The owner creates the segment, lays it out (view.c) and release-stores LIVE
 * last, so a process attaching sees a complete endpoint or none.  Destroy
 * release-stores CLOSED first, so senders stop with -EPIPE instead of waiting on
 * a queue nobody drains, then leaves every peer, removes the name and unmaps.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void barrier_arrive(am_token_t *t, const uint32_t *a, int n, void *d, size_t l);
static void barrier_release(am_token_t *t, const uint32_t *a, int n, void *d, size_t l);

/* A segment left by an owner that died (or closed without unlinking) is stale:
 * remove it so the name can be created again.  Returns 1 if it removed one. */
static int reclaim_stale(enum am_shm b, const char *name)
{
    struct am_segment seg;
    if (am__segment_open(b, name, &seg) < 0)
        return 0;
    const struct am_seg_header *h = seg.base;
    int stale = seg.size >= sizeof *h && h->magic == AM_MAGIC &&
                (AO_load(&h->state) == AM_SEG_CLOSED ||
                 (kill((pid_t)h->owner_pid, 0) != 0 && errno == ESRCH));
    am__segment_unmap(&seg);
    return stale && am__segment_unlink(b, name) == 0;
}

static int create_segment(am_ep_t *ep, const struct am_config *cfg)
{
    size_t size = am__layout_size(cfg);
    struct am_segment seg;
    int rc = am__segment_create(cfg->backend, ep->name, size, &seg);
    if (rc == -EEXIST && reclaim_stale(cfg->backend, ep->name))
        rc = am__segment_create(cfg->backend, ep->name, size, &seg);
    if (rc < 0)
        return rc;
    rc = am__layout_write(seg.base, cfg, ep->name);
    if (rc < 0) {
        am__segment_unmap(&seg);
        am__segment_unlink(cfg->backend, ep->name);
        return rc;
    }
    am__view_own(&ep->own, &seg);
    return 0;
}

int am_ep_create(const char *name, const struct am_ep_opts *opts, am_ep_t **out)
{
    struct am_config cfg;
    if (!out || !am__name_valid(name))
        return -EINVAL;
    int rc = am__config_resolve(opts, &cfg);
    if (rc < 0)
        return rc;
    am_ep_t *ep = calloc(1, sizeof *ep);
    if (!ep)
        return -ENOMEM;
    strcpy(ep->name, name);
    ep->backend = cfg.backend;
    ep->sources = calloc(cfg.max_senders, sizeof *ep->sources);
    rc = ep->sources ? create_segment(ep, &cfg) : -ENOMEM;
    if (rc < 0) {
        free(ep->sources);
        free(ep);
        return rc;
    }
    ep->handlers[AM_H_BARRIER_ARRIVE] = barrier_arrive;
    ep->handlers[AM_H_BARRIER_RELEASE] = barrier_release;
    AO_store_release(&ep->own.hdr->state, AM_SEG_LIVE); /* pairs with
                                                           am__view_attach */
    *out = ep;
    return 0;
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
    if (!ep)
        return -EINVAL;
    if (ep->in_handler)
        return -EDEADLK;
    AO_store_release(&ep->own.hdr->state, AM_SEG_CLOSED);
    am__wake(ep->own.hdr);
    am__peers_close(ep);
    am__pending_free(ep);
    int rc = am__ep_unlink(ep);
    am__segment_unmap(&ep->own.seg);
    free(ep->sources);
    free(ep);
    return rc == -ENOENT ? 0 : rc;
}

int am_set_handler(am_ep_t *ep, unsigned id, am_handler_t fn)
{
    if (!ep || id >= AM_MAX_HANDLERS)
        return -EINVAL;
    ep->handlers[id] = fn;
    return 0;
}

const char *am_ep_name(const am_ep_t *ep)
{
    return ep->name;
}

const char *am_ep_claim(const am_ep_t *ep)
{
    return am_claim_names[ep->own.claim];
}

unsigned long am_ep_bad_packets(const am_ep_t *ep)
{
    return ep->bad_packets;
}

/* Internal handlers of the job barrier (job.c counts what they record). */
static void barrier_arrive(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    t->ep->barrier_arrived++;
}

static void barrier_release(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    t->ep->barrier_epoch++;
}
