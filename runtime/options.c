/*
 * options.c - endpoint options: claim algorithm and backend names, sizes, and the
 * environment variables that supply them when the caller does not.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "job.h"
#include "options.h"

#define AM_DEFAULT_PACKETS 128u
#define AM_DEFAULT_BULK 16u
#define AM_DEFAULT_CHAN_PACKETS 64u /* per-sender kinds: per channel */
#define AM_DEFAULT_CHAN_BULK 4u
#define AM_DEFAULT_SENDERS 64u
#define AM_DEFAULT_ABANDON_MS 100u
/* An anonymous endpoint's (a client's) defaults: room for the replies of 32
 * calls in flight, two bulk replies at once, eight servers replying, and a
 * 64 KB reply (its heap holds two).  220 KB of memory for mpsc, against a
 * named endpoint's 5.1 MB (check_client's anon_segment_size). */
#define AM_ANON_PACKETS 32u
#define AM_ANON_BULK 2u
#define AM_ANON_CHAN_BULK 1u
#define AM_ANON_SENDERS 8u
#define AM_ANON_LONG (64u << 10)
#define AM_MAX_ABANDON_MS 60000u

const char *const am_claim_names[] = {
    "lockfree", "tas", "ttas", "ticket",  "anderson", "mutex",
    "onecas",   "mcs", "clh",  "hemlock", "hapax",    NULL,
};
_Static_assert(sizeof(am_claim_names) / sizeof(am_claim_names[0]) == AM_CLAIM_COUNT + 1,
               "one name per claim algorithm");

static int claim_parse(const char *s, enum am_claim *out)
{
    for (int i = 0; i < AM_CLAIM_COUNT; i++)
        if (strcmp(s, am_claim_names[i]) == 0) {
            *out = (enum am_claim)i;
            return 0;
        }
    return -EINVAL;
}

const char *const am_queue_names[] = {
    "mpsc", "lamport", "fastforward", "mcring", "bqueue", NULL,
};
_Static_assert(sizeof(am_queue_names) / sizeof(am_queue_names[0]) == AM_QUEUE_COUNT + 1,
               "one name per queue kind");

static int queue_parse(const char *s, enum am_queue_kind *out)
{
    for (int i = 0; i < AM_QUEUE_COUNT; i++)
        if (strcmp(s, am_queue_names[i]) == 0) {
            *out = (enum am_queue_kind)i;
            return 0;
        }
    return -EINVAL;
}

/* What the queue code asks of each claim algorithm, in enum order (the
 * names, the public list, are am_claim_names above):
 *   locked      a lock of locks/ (its name's) decides who claims
 *   tail_trails the queue tail is a hint its claimants store, which may lie
 *               behind the receiver's head (onecas); else it is at most one
 *               behind the claims and never behind the head */
static const struct {
    unsigned char locked, tail_trails;
} claim_kinds[] = {
    [AM_CLAIM_LOCKFREE] = {0, 0}, [AM_CLAIM_TAS] = {1, 0},      [AM_CLAIM_TTAS] = {1, 0},
    [AM_CLAIM_TICKET] = {1, 0},   [AM_CLAIM_ANDERSON] = {1, 0}, [AM_CLAIM_MUTEX] = {1, 0},
    [AM_CLAIM_ONECAS] = {0, 1},   [AM_CLAIM_MCS] = {1, 0},      [AM_CLAIM_CLH] = {1, 0},
    [AM_CLAIM_HEMLOCK] = {1, 0},  [AM_CLAIM_HAPAX] = {1, 0},
};
_Static_assert(sizeof(claim_kinds) / sizeof(claim_kinds[0]) == AM_CLAIM_COUNT,
               "one entry per claim algorithm");

int am__claim_locked(enum am_claim c)
{
    return claim_kinds[c].locked;
}

int am__claim_tail_trails(enum am_claim c)
{
    return claim_kinds[c].tail_trails;
}

/* The lock behind a locked claim algorithm; NULL for the lock-free ones. */
const struct am_lock_ops *am__claim_lock(enum am_claim c)
{
    return am__claim_locked(c) ? am_lock_find(am_claim_names[c]) : NULL;
}

/* 1..AM_MAX_NAME characters of [A-Za-z0-9._-]; no other character, so that
 * names with one (a region's NAME:r, region.c) never name an endpoint. */
int am__name_valid(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > AM_MAX_NAME)
        return 0;
    return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789._-") == n;
}

static const char *pick(const char *given, const char *env, const char *dflt)
{
    if (given)
        return given;
    const char *e = getenv(env);
    return e && *e ? e : dflt;
}

/* A power of two in [lo, hi] from `given`, else the environment, else `dflt`. */
static int pick_count(unsigned given, const char *env, unsigned dflt, unsigned lo,
                      unsigned hi, int pow2, uint32_t *out)
{
    unsigned long v = given;
    const char *e = getenv(env);
    if (v == 0 && e && *e) {
        char *end;
        errno = 0;
        v = strtoul(e, &end, 10);
        if (errno || *end || v == 0) /* "0" is no count (the launcher refuses it too) */
            return -EINVAL;
    }
    if (v == 0)
        v = dflt;
    if (v < lo || v > hi || (pow2 && (v & (v - 1))))
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

/* A send's limit in ms: `given` if not 0, else the environment's, else -1
 * (none); -1 or 1 .. INT32_MAX. */
static int pick_timeout(int given, const char *env, int32_t *out)
{
    long v = given;
    const char *e = getenv(env);
    if (v == 0 && e && *e) {
        char *end;
        errno = 0;
        v = strtol(e, &end, 10);
        if (errno || *end || v == 0 || v > INT32_MAX)
            return -EINVAL;
    }
    if (v == 0)
        v = -1;
    if (v < -1)
        return -EINVAL;
    *out = (int32_t)v;
    return 0;
}

/* The defaults of an endpoint of queue kind `chans` (per-sender) or not,
 * anonymous or named: packets, bulk blocks, senders, long_max. */
static void defaults(int anon, int chans, unsigned d[4])
{
    d[0] = anon ? AM_ANON_PACKETS : chans ? AM_DEFAULT_CHAN_PACKETS : AM_DEFAULT_PACKETS;
    d[1] = anon    ? (chans ? AM_ANON_CHAN_BULK : AM_ANON_BULK)
           : chans ? AM_DEFAULT_CHAN_BULK
                   : AM_DEFAULT_BULK;
    d[2] = anon ? AM_ANON_SENDERS : AM_DEFAULT_SENDERS;
    d[3] = anon ? AM_ANON_LONG : AM_DEFAULT_LONG;
}

int am__config_resolve(const struct am_ep_opts *o, int anon, struct am_config *cfg)
{
    static const struct am_ep_opts none;
    unsigned d[4];
    if (!o)
        o = &none;
    cfg->anon = anon;
    int rc = claim_parse(pick(o->claim, "SHMAM_CLAIM", "lockfree"), &cfg->claim);
    if (rc == 0)
        rc = queue_parse(pick(o->queue, SHMAM_QUEUE, "mpsc"), &cfg->queue);
    int chans = rc == 0 && cfg->queue != AM_QUEUE_MPSC;
    defaults(anon, chans, d);
    if (rc == 0)
        rc = am__shm_parse(pick(o->shm, "SHMAM_SHM", "posix"), &cfg->backend);
    if (rc == 0)
        rc = pick_count(o->packets, "SHMAM_PACKETS", d[0], 2, AM_MAX_PACKETS, 1,
                        &cfg->packets);
    if (rc == 0)
        rc = pick_count(o->bulk_blocks, "SHMAM_BULK", d[1], 1, AM_MAX_BULK_BLOCKS, 1,
                        &cfg->bulk_blocks);
    if (rc == 0)
        rc = pick_count(o->max_senders, "SHMAM_MAX_SENDERS", d[2], 1, AM_MAX_SENDERS, 0,
                        &cfg->max_senders);
    if (rc == 0)
        rc = pick_count(o->abandon_ms, "SHMAM_ABANDON_MS", AM_DEFAULT_ABANDON_MS, 1,
                        AM_MAX_ABANDON_MS, 0, &cfg->abandon_ms);
    if (rc == 0)
        rc = pick_count(o->long_max, "SHMAM_LONG_MAX", d[3], AM_MIN_LONG, AM_MAX_LONG, 0,
                        &cfg->long_max);
    if (rc == 0)
        rc = pick_timeout(o->send_timeout_ms, "SHMAM_SEND_TIMEOUT_MS",
                          &cfg->send_timeout_ms);
    return rc;
}

/* Every error shmam returns: its name and what it means here.  The one table
 * of them (am_strerror, am_err_name). */
static const struct am_error {
    int err;
    const char *name, *text;
} errors[] = {
    {0, "OK", "success"},
    {EINVAL, "EINVAL", "invalid argument (name, size, algorithm, index or count)"},
    {ENOENT, "ENOENT", "no such endpoint (for a call: no such handler at the server)"},
    {EEXIST, "EEXIST", "an endpoint of that name exists already"},
    {ENOSPC, "ENOSPC", "no room for the segment in /dev/shm (or shared memory)"},
    {EUSERS, "EUSERS", "the peer's sender table is full of live senders"},
    {EPIPE, "EPIPE", "the peer endpoint has closed or its owner died"},
    {EDEADLK, "EDEADLK", "not allowed from inside a handler (would deadlock)"},
    {EALREADY, "EALREADY", "this request has been replied to already"},
    {EPROTO, "EPROTO",
     "segment does not match this build (magic, version or sizes), or a "
     "peer broke it"},
    {EAGAIN, "EAGAIN", "endpoint not ready yet"},
    {ETIMEDOUT, "ETIMEDOUT", "timed out"},
    {ENOMEM, "ENOMEM", "out of memory"},
    {EACCES, "EACCES", "permission denied (another user's segment, or one open to others)"},
    {EMSGSIZE, "EMSGSIZE",
     "message too long (more than 8 arguments, 8192 bulk bytes, the destination's "
     "long_max, or past the end of its region)"},
    {ENXIO, "ENXIO", "the destination has no region for one-copy long messages"},
    {EPERM, "EPERM", "another thread's endpoint, not shared (am_ep_share)"},
    {EBUSY, "EBUSY",
     "in use: another thread is using the endpoint, or this thread has a loan out"},
    {ENOTSUP, "ENOTSUP", "not for an endpoint of a job spanning nodes"},
    {EINTR, "EINTR", "interrupted by a signal"},
    {EINPROGRESS, "EINPROGRESS", "the call has not ended yet"},
    {ECANCELED, "ECANCELED", "the call was cancelled"},
    {EOPNOTSUPP, "EOPNOTSUPP", "calls go only to endpoints of this node"},
    {ENODATA, "ENODATA",
     "no kernel credentials: the sender did not connect through a socket"},
};

static const struct am_error *error_of(int err)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].err == -err)
            return &errors[i];
    return NULL;
}

const char *am_strerror(int err)
{
    const struct am_error *e = error_of(err);
    return e ? e->text : strerror(-err);
}

const char *am_err_name(int err)
{
    const struct am_error *e = error_of(err);
    return e ? e->name : "E?";
}
