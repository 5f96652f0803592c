/*
 * polling.h - the front door of receiving (poll.c; not poll.h, which would
 * hide the system's <poll.h>), shared by every transport; the owner only,
 * never inside a handler, never blocks.  drain: one queue of either kind,
 * returns messages delivered.  poll: both queues and held messages, the
 * transport between nodes on its schedule (am__net_poll, net.h), plus
 * repairs on idle polls.
 */
#ifndef SHMAM_POLLING_H
#define SHMAM_POLLING_H

#include "layout.h"
#include "shmam.h"

int am__drain(am_ep_t *ep, enum am_qid qid);
int am__poll(am_ep_t *ep);

#endif
