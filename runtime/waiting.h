/*
 * waiting.h - sleeping and waking (wait.c; not wait.h, which would hide the
 * system's <wait.h>).  wake: any sender, after its publish (send.c's
 * wake_if_asleep): bumps the futex word and wakes a sleeping owner.
 */
#ifndef SHMAM_WAITING_H
#define SHMAM_WAITING_H

#include <stdint.h>

#include "layout.h"
#include "shmam.h"

void am__wake(struct am_seg_shared *s);

/* wait.c: the waiting every blocking call shares.  done(ep, n, ctx) after
 * each poll (n messages it ran): nonzero ends the wait with that value.
 * am__wait_for polls (spinning adaptively), then sleeps in slices, until
 * done, the deadline (ns on the monotonic clock; INT64_MAX: none; then a
 * last poll, and 0), or a signal (-EINTR).  now_ns: that clock. */
typedef int (*am_wait_done_fn)(am_ep_t *ep, int n, void *ctx);
int am__wait_for(am_ep_t *ep, int64_t deadline, am_wait_done_fn done, void *ctx);

/* am__wait_for that am_ep_wake ends too (as it ends am_wait: a wake that no
 * wait has taken yet, maybe one from before it started), with -EINTR unless
 * done first.  am__wake_take: take such a wake without waiting; 1 if there
 * was one. */
int am__wait_wakeable(am_ep_t *ep, int64_t deadline, am_wait_done_fn done, void *ctx);
int am__wake_take(am_ep_t *ep);
int64_t am__now_ns(void);

#endif
