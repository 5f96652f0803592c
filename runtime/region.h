/*
 * region.h - one-copy long messages (region.c).  write: the sender, before
 * claiming its packet; maps the destination's region on first use and copies
 * m's data in at m->off, bounds-checked by the size it read then; 0, -ENXIO
 * (no region), -EMSGSIZE (does not fit), -EPROTO.  close: unmap a peer's
 * region.  destroy: the owner's region goes with its endpoint.  unlink_stale:
 * a creator reclaiming a dead owner's name removes its region too, if its
 * mark says its owner has gone.  name: endpoint `name`'s region name "NAME:r"
 * into buf; of: 1 if seg_name is a region's name, its endpoint's into name.
 * state: what a segment opened under endpoint `name`'s region name is (the
 * region.c header says how it is judged).
 */
#ifndef SHMAM_REGION_H
#define SHMAM_REGION_H

#include <stddef.h>

#include "segment.h"
#include "shmam.h"

struct am_peer;
struct am_msg;
int am__region_write(struct am_peer *peer, const struct am_msg *m);
void am__region_close(struct am_peer *peer);
void am__region_destroy(am_ep_t *ep);
void am__region_unlink_stale(enum am_shm b, const char *name);
int am__region_name(const char *name, char *buf, size_t n);
int am__region_of(const char *seg_name, char *name, size_t n);
enum { AM_REGION_FOREIGN = -1, AM_REGION_LIVE = 0, AM_REGION_GONE = 1 };
int am__region_state(const struct am_segment *s, const char *name, unsigned *pid);

#endif
