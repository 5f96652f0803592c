/*
 * internal.h - the Split-C layer's private state and helpers, shared by its .c
 * files (splitc.c, remote.c, bulk.c, collectives.c).  Applications include only
 * splitc.h, which describes the layer.
 *
 * Everything here belongs to the one process that owns the job's endpoint and
 * is touched by its main code and by its handlers, which run inside am_poll in
 * the same thread: no atomics are needed.  Waits re-read state after each poll,
 * an external call, so the compiler cannot cache it across one.
 */
#ifndef SPLITC_INTERNAL_H
#define SPLITC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "splitc.h"

/* The layer's handlers, ids SC_FIRST_HANDLER and up. */
enum {
    SC_H_PUT = SC_FIRST_HANDLER, /* req  region, off lo, off hi, v lo [, v hi] */
    SC_H_ACK,                    /* reply to a put or bulk put */
    SC_H_GET,                    /* req  region, off lo, off hi, addr lo, addr hi, bytes */
    SC_H_GET_REPLY,              /* reply addr lo, addr hi, v lo [, v hi] */
    SC_H_STORE,                  /* req  region, off lo, off hi, v lo [, v hi]; no reply */
    SC_H_BULK_PUT,               /* bulk req  region, off lo, off hi */
    SC_H_BULK_GET,               /* req  region, off lo, off hi, len, addr lo, addr hi */
    SC_H_BULK_GET_REPLY,         /* bulk reply addr lo, addr hi */
    SC_H_BULK_STORE,             /* bulk req  region, off lo, off hi; no reply */
    SC_H_STORE_COUNT,            /* req  stores lo, stores hi: sent to you this epoch */
    SC_H_BCAST_READY,            /* req  epoch parity: my buffer is ready */
    SC_H_BCAST_DATA,             /* bulk req  off lo, off hi */
    SC_H_REDUCE,                 /* req  v lo, v hi: my contribution, to rank 0 */
    SC_H_RESULT,                 /* req  v lo, v hi: the reduction's result */
    SC_H_END
};
_Static_assert(SC_H_END <= AM_MAX_HANDLERS, "splitc handler ids past 255");

struct sc_region {
    unsigned char *base;
    size_t size;
};

struct sc_state {
    am_ep_t *ep;
    int rank, nprocs;
    struct sc_region region[SC_MAX_REGIONS];
    unsigned regions; /* ids handed out so far, identical on every rank */

    uint64_t outstanding;     /* puts and gets started and not yet answered */
    uint64_t *stores_sent;    /* per destination rank, since the last store sync */
    uint64_t stores_received; /* stores handled here, since the last store sync */
    uint64_t stores_expected; /* announced by the counts arrived so far */
    int counts_arrived;       /* SC_H_STORE_COUNT messages this epoch */

    unsigned bcast_epoch;      /* broadcasts completed, identical on every rank */
    int bcast_ready[2];        /* by epoch parity: ranks ready for our data */
    unsigned char *bcast_dst;  /* where incoming broadcast data goes, or NULL */
    size_t bcast_n, bcast_got; /* its length and bytes arrived */

    uint64_t *reduce_vals; /* at rank 0: each rank's contribution */
    int reduce_arrived;    /* at rank 0: contributions this round */
    uint64_t result;       /* a reduction's result, once result_ready */
    int result_ready;
};

extern struct sc_state sc__;

/* Print "splitc: rank R: file:line: message" and abort: only for programming
 * errors (a bad global pointer) and fatal runtime failures (a dead peer). */
#define SC_DIE(...) sc__die(__FILE__, __LINE__, __VA_ARGS__)
void sc__die(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));

/* Die unless a runtime call succeeded (rc >= 0). */
#define SC_CHECK(rc, what) sc__check((rc), (what), __FILE__, __LINE__)
void sc__check(int rc, const char *what, const char *file, int line);

/* The local address of bytes [offset, offset + n) of our part of `region`; dies
 * if they are not all inside it.  `from` names the requesting rank for the
 * message (our own rank for a local access). */
void *sc__local(uint32_t region, uint64_t offset, size_t n, unsigned from);

/* Checks a global pointer's rank and region at the sender; dies if bad. */
void sc__check_gptr(sc_gptr_t g);

/* Poll until done(arg) is true: spin on am_poll a little, then sleep in am_wait
 * so that more processes than cores do not burn their time slices. */
void sc__wait(int (*done)(const void *arg), const void *arg);

/* Message arguments are 32-bit words. */
static inline uint32_t sc__lo(uint64_t v)
{
    return (uint32_t)v;
}

static inline uint32_t sc__hi(uint64_t v)
{
    return (uint32_t)(v >> 32);
}

static inline uint64_t sc__join(uint32_t lo, uint32_t hi)
{
    return (uint64_t)hi << 32 | lo;
}

/* Each concern registers its handlers on the endpoint at sc_init. */
void sc__remote_init(am_ep_t *ep);
void sc__bulk_init(am_ep_t *ep);
void sc__collectives_init(am_ep_t *ep);

#endif
