/*
 * rendezvous.h - services for other users through a Unix socket
 * (rendezvous.c; its header says the design).  An endpoint's `rdv` is NULL
 * unless it listens (am_ep_listen), is a caller's door (made by a listener
 * for one caller) or has connected to a listener (am_ep_connect):
 *   poll     a listener's part of its poll: its doors' messages, and now and
 *            then (or when its thread knocks) callers arriving or gone;
 *            0 for the other kinds.  The owner's thread, from poll_all.
 *   arm,     wait.c's sleep with doors: arm announces the sleep in every
 *   sleep,   door (the Dekker half of wait.c, per door) before the recheck
 *   disarm   poll; sleep waits on the endpoint's futex word and every armed
 *            door's at once (futex_waitv), 0 or -EINTR; disarm withdraws.
 *   open     map a peer's segment: a door maps only its caller's memfd, a
 *            connected client the doors it was given, anything else as
 *            am__ep_open does.
 *   listening  ep listens (am_ep_share: -ENOTSUP).
 *   close    at am_ep_destroy, before the endpoint closes: its doors, socket,
 *            thread; a client's sockets and doors' descriptors.
 */
#ifndef SHMAM_RENDEZVOUS_H
#define SHMAM_RENDEZVOUS_H

#include "internal.h"

int am__rdv_poll(am_ep_t *ep);
void am__rdv_arm(am_ep_t *ep);
int am__rdv_sleep(am_ep_t *ep, unsigned seq, int64_t ms);
void am__rdv_disarm(am_ep_t *ep);
int am__rdv_open(am_ep_t *ep, const char *name, struct am_segment *seg);
void am__rdv_close(am_ep_t *ep);
int am__rdv_listening(const am_ep_t *ep); /* am_ep_share refuses a listener */

#endif
