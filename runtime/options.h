/*
 * options.h - an endpoint's creation options (options.c): resolved from
 * struct am_ep_opts, the environment and the defaults, and the table of claim
 * algorithms and queue kinds they name.
 */
#ifndef SHMAM_OPTIONS_H
#define SHMAM_OPTIONS_H

#include <stdint.h>

#include "layout.h"
#include "lock.h"
#include "segment.h"
#include "shmam.h"

/* Resolved creation options (from struct am_ep_opts, environment, defaults). */
struct am_config {
    enum am_claim claim;
    enum am_queue_kind queue;
    enum am_shm backend;
    uint32_t packets, bulk_blocks, max_senders;
    uint32_t long_max;       /* the longest long message */
    uint32_t abandon_ms;     /* longest a waiting owner sleeps on a stuck claim */
    int anon;                /* anonymous: a client's defaults, no request heap */
    int door;                /* anonymous, a listener's door: a request heap */
    int32_t send_timeout_ms; /* longest a send waits for room; -1: no limit */
};

/* opts, else the environment, else the defaults of an anonymous or a named
 * endpoint; 0 or -EINVAL. */
int am__config_resolve(const struct am_ep_opts *opts, int anon, struct am_config *cfg);
int am__name_valid(const char *name);
const struct am_lock_ops *am__claim_lock(enum am_claim c);
int am__claim_locked(enum am_claim c);      /* a lock decides (not lockfree, onecas) */
int am__claim_tail_trails(enum am_claim c); /* the tail may lie behind the head (onecas) */

#endif
