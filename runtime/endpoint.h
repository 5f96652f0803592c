/*
 * endpoint.h - what endpoint.c offers the rest of the runtime.  unlink:
 * remove ep's own name (once; 0 or -errno).  stale: has the owner of the
 * endpoint segment seg gone (its name may be reclaimed)?  open: map the
 * segment of endpoint `name`, an address, or a name in backend `first`, else
 * in the other (the errors of am__segment_open and am__segment_open_addr).
 */
#ifndef SHMAM_ENDPOINT_H
#define SHMAM_ENDPOINT_H

#include "segment.h"
#include "shmam.h"

int am__ep_unlink(am_ep_t *ep);
/* A listener's door (rendezvous.c): am_ep_create(NULL, opts, out) with a
 * request heap, so its caller's long requests fit as a named endpoint's. */
int am__ep_create_door(const struct am_ep_opts *opts, am_ep_t **out);
int am__ep_stale(const struct am_segment *seg);
int am__ep_open(enum am_shm first, const char *name, struct am_segment *seg);

#endif
