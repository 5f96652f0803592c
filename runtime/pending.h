/*
 * pending.h - messages that arrive during am_init, before the user's
 * handlers (pending.c).  hold: the owner, from delivery; a copy, 0 or
 * -ENOMEM.  run: the owner, from its first poll after am_init; runs them in
 * arrival order, returns how many.  free: at am_ep_destroy.
 */
#ifndef SHMAM_PENDING_H
#define SHMAM_PENDING_H

#include <stddef.h>

#include "layout.h"
#include "shmam.h"

struct am_pending;
int am__pending_hold(am_ep_t *ep, const am_token_t *tok, const struct am_packet *m,
                     const void *data, size_t len);
int am__pending_run(am_ep_t *ep);
void am__pending_free(am_ep_t *ep);

#endif
