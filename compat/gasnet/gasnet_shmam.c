/*
 * gasnet_shmam.c - the GASNet-EX core API (gasnetex.h) over shmam's public
 * API (include/shmam.h) alone: libgasnet-shmam.
 *
 * Job.  gex_Client_Init is am_init: rank r is shmam's rank r, mapped at
 * index r; the world team is the only team.  gex_Segment_Attach makes the
 * rank's one-copy region its segment (am_region_create), tells every rank
 * its address and size (a short message each), and maps every peer's
 * (am_region_map) once all have told theirs, so RMA is a memcpy.
 *
 * AMs.  Each GASNet AM is one shmam message to one of eight handlers of the
 * layer (its category: Short, Medium, Long in place, Long through the heap;
 * request or reply).  Its first argument packs the GASNet handler index and
 * the argument count; up to 7 GASNet arguments follow it in the packet
 * (AM_MAX_ARGS is 8), the rest (up to 9 more) ride at the head of the
 * payload, padded to 8 bytes so a Medium's buffer keeps its alignment:
 *   Short      0..7 args: a short message; 8..16: bulk, the extra args as data
 *   Medium     prefix + data up to AM_MAX_BULK: bulk, else a long message
 *              (the destination's heap): up to long_max - prefix bytes
 *   Long       0..7 args: am_request_long_at straight into the target's
 *              segment at dest - base (any address in it, zero bytes too);
 *              8..16: a long message holding [offset][extra args][data],
 *              which the target copies into its segment before the handler
 * A request that finds no room waits (polling) as shmam's sends do; with
 * GEX_FLAG_IMMEDIATE it tries once (am_request_try / am_reply_try) and
 * returns 1, nothing sent.  Every payload is copied before the call
 * returns, so local completion (lc_opt) is at once.  Requests and replies
 * stage payloads with a prefix in two buffers of their own: a request's
 * backoff may run handlers that reply, and replies never nest.
 *
 * Barriers are split-phase over AMs: each rank tells every other of its
 * notify (epoch parity), and the wait ends once P-1 have told this epoch's;
 * a rank cannot be two epochs ahead of another, since its next notify waits
 * for this wait.  Broadcast sends the root's bytes in chunks to each rank,
 * which keeps chunks that come before it posts its own call.
 *
 * One thread (GASNET_SEQ): every call is the rank's owner thread's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmam.h>

#include "gasnet.h"
#include "gasnet_coll.h"
#include "gasnetex.h"

enum { CAT_SHORT, CAT_MEDIUM, CAT_LONG, CAT_LONG_HEAP };
enum { H_AM = 1, H_EXIT = 9, H_SEG, H_BAR, H_BCAST };
#define PACKED_ARGS (AM_MAX_ARGS - 1) /* GASNet args in the packet, after the header */
#define MAX_GEX_ARGS 16
#define SRC_UNKNOWN GEX_RANK_INVALID

struct gex_shmam_client {
    const char *name;
    gex_Flags_t flags;
    void *cdata;
};
struct gex_shmam_ep {
    void *cdata;
};
struct gex_shmam_tm {
    void *cdata;
};
struct gex_shmam_segment {
    void *base;
    uintptr_t size;
    void *cdata;
};
struct gex_shmam_token {
    am_token_t *tok;
    gex_Rank_t src; /* SRC_UNKNOWN until asked (token_src) */
    const gex_AM_Entry_t *entry;
    int is_req, is_long;
};
/* A broadcast this rank posted (dst, n) or chunks that came before it. */
struct bcast {
    unsigned seq;
    int posted;
    char *dst;
    size_t n, got;
    struct bcast *next;
    size_t off, len; /* a stashed chunk: its place and size */
    char data[];
};
struct gex_shmam_event {
    int kind; /* 0: barrier; 1: broadcast */
    struct bcast *bc;
};
struct gex_shmam_srcdesc {
    int in_use, is_long;
    char *loan; /* a Medium's loan in the destination (am_*_prepare): the
                 * extra arguments' prefix, then addr; NULL: addr is a copy */
    gex_Rank_t rank;
    gex_Token_t token; /* a reply's */
    void *addr;
    size_t size;
    void *dest;
    gex_Event_t *lc;
    unsigned nargs;
};
struct peer_seg {
    uintptr_t base, size; /* in the owner's address space */
    char *local;          /* the same bytes here (am_region_map) */
};
struct stage {
    char *buf;
    size_t cap;
};

static struct {
    am_ep_t *ep;
    int init;
    gex_Rank_t rank, size;
    size_t long_max;
    struct gex_shmam_client client;
    struct gex_shmam_ep gep;
    struct gex_shmam_tm tm;
    struct gex_shmam_segment seg;
    gex_AM_Entry_t table[256];
    unsigned char used[256];
    struct peer_seg *peer;
    unsigned seg_known;
    int waitmode, verbose, idle_polls;
    unsigned bar_epoch, bar_arrived[2];
    int bar_pending, bar_named;
    unsigned bc_seq;
    struct bcast *bcasts;
    struct stage req_stage, rep_stage, np_stage;
    struct gex_shmam_srcdesc sd;
    gex_RankInfo_t *info;
    unsigned long dropped;
} G = {.verbose = 1};

/* The token's source rank, looked up once (most handlers never ask). */
static gex_Rank_t token_src(struct gex_shmam_token *t)
{
    if (t->src == SRC_UNKNOWN)
        t->src = (gex_Rank_t)am_token_source(t->tok);
    return t->src;
}

static int complain(int code, const char *what, int rc)
{
    if (G.verbose)
        fprintf(stderr, "gasnet-shmam[%u]: %s%s%s\n", (unsigned)G.rank, what,
                rc ? ": " : "", rc ? am_strerror(rc) : "");
    return code;
}
#define BAD(what) complain(GASNET_ERR_BAD_ARG, what, 0)

static void drop(const char *why)
{
    G.dropped++;
    complain(0, why, 0);
}

static size_t round8(size_t x)
{
    return (x + 7) & ~(size_t)7;
}
static unsigned extra_of(unsigned nargs)
{
    return nargs > PACKED_ARGS ? nargs - PACKED_ARGS : 0;
}
static size_t med_prefix(unsigned nargs)
{
    return round8(4 * (size_t)extra_of(nargs));
}
static size_t long_prefix(unsigned nargs)
{
    return extra_of(nargs) ? round8(8 + 4 * (size_t)extra_of(nargs)) : 0;
}
static size_t max_medium(unsigned nargs)
{
    return G.init && nargs <= MAX_GEX_ARGS ? G.long_max - med_prefix(nargs) : 0;
}
static size_t max_long(unsigned nargs)
{
    if (!G.init || nargs > MAX_GEX_ARGS)
        return 0;
    return extra_of(nargs) ? G.long_max - long_prefix(nargs) : (size_t)UINT32_MAX;
}

static char *stage_get(struct stage *s, size_t n)
{
    if (n > s->cap) {
        char *b = realloc(s->buf, n);
        if (!b)
            return NULL;
        s->buf = b;
        s->cap = n;
    }
    return s->buf;
}

/* Wait a little for a message (internal waits: barriers, broadcasts). */
static void idle(void)
{
    am_wait(G.ep, 10);
}

void gex_shmam_wait_step(void)
{
    if (!G.init)
        return;
    if (G.waitmode == GASNET_WAIT_BLOCK) {
        am_wait(G.ep, 1);
        return;
    }
    if (am_poll(G.ep) > 0)
        G.idle_polls = 0;
    else if (++G.idle_polls >= 100) { /* share a busy CPU with its peers */
        G.idle_polls = 0;
        sched_yield();
    }
}

struct am_ep *gex_shmam_endpoint(void)
{
    return G.ep;
}

int gasnet_AMPoll(void)
{
    if (!G.init)
        return GASNET_ERR_NOT_INIT;
    am_poll(G.ep);
    return GASNET_OK;
}

int gasnet_set_waitmode(int wait_mode)
{
    if (wait_mode != GASNET_WAIT_SPIN && wait_mode != GASNET_WAIT_BLOCK &&
        wait_mode != GASNET_WAIT_SPINBLOCK)
        return GASNET_ERR_BAD_ARG;
    G.waitmode = wait_mode == GASNET_WAIT_BLOCK ? GASNET_WAIT_BLOCK : GASNET_WAIT_SPIN;
    return GASNET_OK;
}

/* Run handler fn with nargs arguments: a Short's (token, args...) or a
 * Medium's or Long's (token, buf, nbytes, args...). */
static void call_short(gex_AM_Fn_t fn, gex_Token_t t, unsigned nargs, const gex_AM_Arg_t *a)
{
    switch (nargs) {
    case 0:
        ((void (*)(gex_Token_t))fn)(t);
        break;
    case 1:
        ((void (*)(gex_Token_t, gex_AM_Arg_t))fn)(t, a[0]);
        break;
    case 2:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, a[0], a[1]);
        break;
    case 3:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, a[0], a[1],
                                                                              a[2]);
        break;
    case 4:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(
            t, a[0], a[1], a[2], a[3]);
        break;
    case 5:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, a[0], a[1], a[2], a[3], a[4]);
        break;
    case 6:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, a[0], a[1], a[2], a[3], a[4], a[5]);
        break;
    case 7:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, a[0], a[1], a[2], a[3],
                                                                 a[4], a[5], a[6]);
        break;
    case 8:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(
            t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
        break;
    case 9:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                     a[8]);
        break;
    case 10:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                     a[8], a[9]);
        break;
    case 11:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, a[0], a[1], a[2], a[3], a[4], a[5],
                                                   a[6], a[7], a[8], a[9], a[10]);
        break;
    case 12:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(
            t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
        break;
    case 13:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(
            t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
            a[12]);
        break;
    case 14:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                     a[8], a[9], a[10], a[11], a[12], a[13]);
        break;
    case 15:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                     a[8], a[9], a[10], a[11], a[12], a[13], a[14]);
        break;
    case 16:
        ((void (*)(gex_Token_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, a[0], a[1], a[2], a[3], a[4], a[5],
                                                   a[6], a[7], a[8], a[9], a[10], a[11],
                                                   a[12], a[13], a[14], a[15]);
        break;
    }
}

static void call_medlong(gex_AM_Fn_t fn, gex_Token_t t, void *buf, size_t n, unsigned nargs,
                         const gex_AM_Arg_t *a)
{
    switch (nargs) {
    case 0:
        ((void (*)(gex_Token_t, void *, size_t))fn)(t, buf, n);
        break;
    case 1:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t))fn)(t, buf, n, a[0]);
        break;
    case 2:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, buf, n,
                                                                                a[0], a[1]);
        break;
    case 3:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1], a[2]);
        break;
    case 4:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1], a[2], a[3]);
        break;
    case 5:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1], a[2], a[3], a[4]);
        break;
    case 6:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1],
                                                                 a[2], a[3], a[4], a[5]);
        break;
    case 7:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(
            t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
        break;
    case 8:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                     a[7]);
        break;
    case 9:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                     a[7], a[8]);
        break;
    case 10:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1], a[2], a[3], a[4],
                                                   a[5], a[6], a[7], a[8], a[9]);
        break;
    case 11:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(
            t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
        break;
    case 12:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(
            t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
            a[11]);
        break;
    case 13:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                     a[7], a[8], a[9], a[10], a[11], a[12]);
        break;
    case 14:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                     a[7], a[8], a[9], a[10], a[11], a[12], a[13]);
        break;
    case 15:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t))fn)(t, buf, n, a[0], a[1], a[2], a[3], a[4],
                                                   a[5], a[6], a[7], a[8], a[9], a[10],
                                                   a[11], a[12], a[13], a[14]);
        break;
    case 16:
        ((void (*)(gex_Token_t, void *, size_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t,
                   gex_AM_Arg_t, gex_AM_Arg_t, gex_AM_Arg_t))fn)(
            t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
            a[11], a[12], a[13], a[14], a[15]);
        break;
    }
}

/* ---- sending ---- */

static unsigned shmam_id(int cat, int reply)
{
    return H_AM + (unsigned)cat + 4u * (unsigned)!!reply;
}

/* One shmam message, a request to dest or a reply through tok: 0 sent, 1 not
 * sent (imm and no room now), else a GASNET_ERR_* code. */
static int xmit(am_token_t *tok, unsigned dest, unsigned id, enum am_msg_kind kind,
                const void *data, size_t len, size_t off, const uint32_t *a, int na,
                int imm)
{
    int rc;
    if (imm)
        rc = tok ? am_reply_try(tok, kind, id, data, len, off, a, na)
                 : am_request_try(G.ep, dest, kind, id, data, len, off, a, na);
    else if (tok)
        rc = kind == AM_MSG_SHORT  ? am_reply(tok, id, a, na)
             : kind == AM_MSG_BULK ? am_reply_bulk(tok, id, data, len, a, na)
             : kind == AM_MSG_LONG ? am_reply_long(tok, id, data, len, a, na)
                                   : am_reply_long_at(tok, id, data, len, off, a, na);
    else
        rc = kind == AM_MSG_SHORT  ? am_request(G.ep, dest, id, a, na)
             : kind == AM_MSG_BULK ? am_request_bulk(G.ep, dest, id, data, len, a, na)
             : kind == AM_MSG_LONG
                 ? am_request_long(G.ep, dest, id, data, len, a, na)
                 : am_request_long_at(G.ep, dest, id, data, len, off, a, na);
    if (rc == -EAGAIN && imm)
        return 1;
    if (rc == -EMSGSIZE || rc == -EINVAL || rc == -ENXIO)
        return complain(GASNET_ERR_BAD_ARG, "AM refused", rc);
    return rc < 0 ? complain(GASNET_ERR_RESOURCE, "AM not sent", rc) : 0;
}

static int lc_real(gex_Event_t *lc)
{
    return lc && lc != GEX_EVENT_NOW && lc != GEX_EVENT_DEFER && lc != GEX_EVENT_GROUP;
}

/* The one send of every AM: category cat, to rank (a request) or through
 * token t (a reply), nargs GASNet arguments from ap. */
static int am_send(gex_Token_t t, gex_Rank_t rank, int cat, gex_AM_Index_t h,
                   const void *src, size_t n, void *dst, gex_Event_t *lc, gex_Flags_t flags,
                   unsigned nargs, va_list ap)
{
    if (!G.init)
        return GASNET_ERR_NOT_INIT;
    if (nargs > MAX_GEX_ARGS)
        return BAD("an AM of more than 16 arguments");
    if (t && !t->is_req)
        return BAD("a reply from a reply handler");
    if (!t && rank >= G.size)
        return BAD("an AM to a rank outside the team");
    gex_AM_Arg_t args[MAX_GEX_ARGS];
    for (unsigned i = 0; i < nargs; i++)
        args[i] = va_arg(ap, gex_AM_Arg_t);
    unsigned inpk = nargs < PACKED_ARGS ? nargs : PACKED_ARGS, extra = nargs - inpk;
    uint32_t a[AM_MAX_ARGS];
    a[0] = (uint32_t)h | (uint32_t)nargs << 8;
    memcpy(a + 1, args, inpk * sizeof *args);
    int na = 1 + (int)inpk, imm = !!(flags & GEX_FLAG_IMMEDIATE);
    am_token_t *tok = t ? t->tok : NULL;
    struct stage *st = t ? &G.rep_stage : &G.req_stage;
    gex_Rank_t to = t ? (cat == CAT_LONG ? token_src(t) : 0) : rank;
    if (to >= G.size)
        return BAD("a reply to a sender outside the team");
    int rc;
    if (cat == CAT_SHORT) {
        rc = extra ? xmit(tok, to, shmam_id(CAT_SHORT, !!t), AM_MSG_BULK, args + inpk,
                          extra * sizeof *args, 0, a, na, imm)
                   : xmit(tok, to, shmam_id(CAT_SHORT, !!t), AM_MSG_SHORT, NULL, 0, 0, a,
                          na, imm);
    } else if (cat == CAT_MEDIUM) {
        size_t pre = med_prefix(nargs);
        if (n > max_medium(nargs))
            return BAD("a Medium over gex_AM_MaxRequestMedium");
        const void *data = src;
        if (pre) {
            char *b = stage_get(st, pre + n);
            if (!b)
                return complain(GASNET_ERR_RESOURCE, "no memory to stage a Medium", 0);
            memcpy(b, args + inpk, extra * sizeof *args);
            if (n)
                memcpy(b + pre, src, n);
            data = b;
        }
        rc = xmit(tok, to, shmam_id(CAT_MEDIUM, !!t),
                  pre + n <= AM_MAX_BULK ? AM_MSG_BULK : AM_MSG_LONG, data, pre + n, 0, a,
                  na, imm);
    } else {
        const struct peer_seg *p = &G.peer[to];
        uintptr_t d = (uintptr_t)dst, off = d - p->base;
        if (!p->size || d < p->base || off > p->size || n > p->size - off)
            return BAD("a Long outside the target's segment");
        if (!extra) {
            rc = xmit(tok, to, shmam_id(CAT_LONG, !!t), AM_MSG_LONG_AT, src, n, off, a, na,
                      imm);
        } else {
            size_t pre = long_prefix(nargs);
            if (n > max_long(nargs))
                return BAD("a Long over gex_AM_MaxRequestLong");
            char *b = stage_get(st, pre + n);
            if (!b)
                return complain(GASNET_ERR_RESOURCE, "no memory to stage a Long", 0);
            uint64_t o = off;
            memcpy(b, &o, sizeof o);
            memcpy(b + sizeof o, args + inpk, extra * sizeof *args);
            if (n)
                memcpy(b + pre, src, n);
            rc = xmit(tok, to, shmam_id(CAT_LONG_HEAP, !!t), AM_MSG_LONG, b, pre + n, 0, a,
                      na, imm);
        }
    }
    if (rc == 0 && lc_real(lc))
        *lc = GEX_EVENT_INVALID; /* copied: complete */
    return rc;
}

int gex_shmam_RequestShort(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                           gex_Flags_t flags, unsigned int numargs, ...)
{
    va_list ap;
    va_start(ap, numargs);
    int rc =
        am_send(NULL, rank, CAT_SHORT, handler, NULL, 0, NULL, NULL, flags, numargs, ap);
    va_end(ap);
    return rc;
}

int gex_shmam_ReplyShort(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags,
                         unsigned int numargs, ...)
{
    va_list ap;
    va_start(ap, numargs);
    int rc = token ? am_send(token, 0, CAT_SHORT, handler, NULL, 0, NULL, NULL, flags,
                             numargs, ap)
                   : BAD("a reply without a token");
    va_end(ap);
    return rc;
}

int gex_shmam_RequestMedium(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                            const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                            gex_Flags_t flags, unsigned int numargs, ...)
{
    va_list ap;
    va_start(ap, numargs);
    int rc = am_send(NULL, rank, CAT_MEDIUM, handler, source_addr, nbytes, NULL, lc_opt,
                     flags, numargs, ap);
    va_end(ap);
    return rc;
}

int gex_shmam_ReplyMedium(gex_Token_t token, gex_AM_Index_t handler,
                          const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                          gex_Flags_t flags, unsigned int numargs, ...)
{
    va_list ap;
    va_start(ap, numargs);
    int rc = token ? am_send(token, 0, CAT_MEDIUM, handler, source_addr, nbytes, NULL,
                             lc_opt, flags, numargs, ap)
                   : BAD("a reply without a token");
    va_end(ap);
    return rc;
}

int gex_shmam_RequestLong(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                          const void *source_addr, size_t nbytes, void *dest_addr,
                          gex_Event_t *lc_opt, gex_Flags_t flags, unsigned int numargs, ...)
{
    va_list ap;
    va_start(ap, numargs);
    int rc = am_send(NULL, rank, CAT_LONG, handler, source_addr, nbytes, dest_addr, lc_opt,
                     flags, numargs, ap);
    va_end(ap);
    return rc;
}

int gex_shmam_ReplyLong(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr,
                        size_t nbytes, void *dest_addr, gex_Event_t *lc_opt,
                        gex_Flags_t flags, unsigned int numargs, ...)
{
    va_list ap;
    va_start(ap, numargs);
    int rc = token ? am_send(token, 0, CAT_LONG, handler, source_addr, nbytes, dest_addr,
                             lc_opt, flags, numargs, ap)
                   : BAD("a reply without a token");
    va_end(ap);
    return rc;
}

/* ---- negotiated payload ----
 * A Medium with no client buffer and no IMMEDIATE is a loan of shmam's
 * (am_request_prepare / am_reply_prepare): the client writes its payload
 * straight into the destination's bulk block (or heap block), after the room
 * the extra arguments take, and the commit publishes it with no copy.  A
 * Long, an IMMEDIATE one, or one given a client buffer copies at commit. */

/* Lend the Medium of sd its room in the destination: 0, or the core's error. */
static int lend_medium(struct gex_shmam_srcdesc *sd, gex_Token_t token, gex_Rank_t rank)
{
    void *b;
    size_t pre = med_prefix(sd->nargs);
    int rc = token ? am_reply_prepare(token->tok, pre + sd->size, &b)
                   : am_request_prepare(G.ep, rank, pre + sd->size, &b);
    if (rc == 0)
        sd->loan = b, sd->addr = (char *)b + pre;
    return rc;
}

static gex_AM_SrcDesc_t prepare(gex_Token_t token, gex_Rank_t rank, int is_long,
                                const void *client_buf, size_t least, size_t most,
                                void *dest, gex_Event_t *lc, gex_Flags_t flags,
                                unsigned nargs)
{
    struct gex_shmam_srcdesc *sd = &G.sd;
    size_t max = is_long ? max_long(nargs) : max_medium(nargs);
    if (!G.init || sd->in_use || least > most || least > max || nargs > MAX_GEX_ARGS) {
        BAD(sd->in_use ? "a Prepare before the last one's Commit" : "a bad Prepare");
        return GEX_AM_SRCDESC_NO_OP;
    }
    size_t size = most < max ? most : max;
    void *addr = (void *)client_buf;
    if (!addr && !is_long && !(flags & GEX_FLAG_IMMEDIATE) &&
        (token ? token->is_req : rank < G.size)) {
        *sd = (struct gex_shmam_srcdesc){.in_use = 1,
                                         .rank = rank,
                                         .token = token,
                                         .size = size,
                                         .lc = lc,
                                         .nargs = nargs};
        if (lend_medium(sd, token, rank) == 0)
            return sd;
        sd->in_use = 0; /* no loan (a remote rank, no room): a copy */
    }
    if (!addr) { /* ours: not more than long_max unless least asks it */
        if (size > G.long_max)
            size = least > G.long_max ? least : G.long_max;
        if (!(addr = stage_get(&G.np_stage, size ? size : 1))) {
            complain(0, "no memory for a Prepare", 0);
            return GEX_AM_SRCDESC_NO_OP;
        }
    }
    *sd = (struct gex_shmam_srcdesc){.in_use = 1,
                                     .is_long = is_long,
                                     .rank = rank,
                                     .token = token,
                                     .addr = addr,
                                     .size = size,
                                     .dest = dest,
                                     .lc = lc,
                                     .nargs = nargs};
    return sd;
}

gex_AM_SrcDesc_t gex_AM_PrepareRequestMedium(gex_TM_t tm, gex_Rank_t rank,
                                             const void *client_buf, size_t least_payload,
                                             size_t most_payload, gex_Event_t *lc_opt,
                                             gex_Flags_t flags, unsigned int numargs)
{
    return prepare(NULL, rank, 0, client_buf, least_payload, most_payload, NULL, lc_opt,
                   flags, numargs);
}

gex_AM_SrcDesc_t gex_AM_PrepareReplyMedium(gex_Token_t token, const void *client_buf,
                                           size_t least_payload, size_t most_payload,
                                           gex_Event_t *lc_opt, gex_Flags_t flags,
                                           unsigned int numargs)
{
    return prepare(token, 0, 0, client_buf, least_payload, most_payload, NULL, lc_opt,
                   flags, numargs);
}

gex_AM_SrcDesc_t gex_AM_PrepareRequestLong(gex_TM_t tm, gex_Rank_t rank,
                                           const void *client_buf, size_t least_payload,
                                           size_t most_payload, void *dest_addr,
                                           gex_Event_t *lc_opt, gex_Flags_t flags,
                                           unsigned int numargs)
{
    return prepare(NULL, rank, 1, client_buf, least_payload, most_payload, dest_addr,
                   lc_opt, flags, numargs);
}

gex_AM_SrcDesc_t gex_AM_PrepareReplyLong(gex_Token_t token, const void *client_buf,
                                         size_t least_payload, size_t most_payload,
                                         void *dest_addr, gex_Event_t *lc_opt,
                                         gex_Flags_t flags, unsigned int numargs)
{
    return prepare(token, 0, 1, client_buf, least_payload, most_payload, dest_addr, lc_opt,
                   flags, numargs);
}

void *gex_AM_SrcDescAddr(gex_AM_SrcDesc_t sd)
{
    return sd ? sd->addr : NULL;
}

size_t gex_AM_SrcDescSize(gex_AM_SrcDesc_t sd)
{
    return sd ? sd->size : 0;
}

/* A loan's commit: the header word and the packed arguments in the packet,
 * the extra ones in the prefix before the payload. */
static int commit_loan(struct gex_shmam_srcdesc *sd, gex_AM_Index_t h, size_t n,
                       unsigned nargs, va_list ap)
{
    gex_AM_Arg_t args[MAX_GEX_ARGS];
    for (unsigned i = 0; i < nargs; i++)
        args[i] = va_arg(ap, gex_AM_Arg_t);
    unsigned inpk = nargs < PACKED_ARGS ? nargs : PACKED_ARGS;
    uint32_t a[AM_MAX_ARGS];
    a[0] = (uint32_t)h | (uint32_t)nargs << 8;
    memcpy(a + 1, args, inpk * sizeof *args);
    memcpy(sd->loan, args + inpk, (nargs - inpk) * sizeof *args);
    size_t len = med_prefix(nargs) + n;
    unsigned id = shmam_id(CAT_MEDIUM, !!sd->token);
    int rc = sd->token ? am_reply_commit(sd->token->tok, id, len, a, 1 + (int)inpk)
                       : am_request_commit(G.ep, id, len, a, 1 + (int)inpk);
    if (rc == 0 && lc_real(sd->lc))
        *sd->lc = GEX_EVENT_INVALID;
    return rc < 0 ? complain(GASNET_ERR_RESOURCE, "AM not sent", rc) : 0;
}

int gex_shmam_Commit(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes,
                     void *dest_addr, gex_Flags_t flags, unsigned int numargs, ...)
{
    if (!sd || !sd->in_use || numargs != sd->nargs || nbytes > sd->size)
        return BAD("a Commit that does not match its Prepare");
    if (sd->is_long && sd->dest && dest_addr != sd->dest)
        return BAD("a Commit to another dest_addr than its Prepare's");
    va_list ap;
    va_start(ap, numargs);
    if (sd->loan) {
        int rc = commit_loan(sd, handler, nbytes, numargs, ap);
        va_end(ap);
        sd->in_use = 0;
        return rc;
    }
    int rc = am_send(sd->token, sd->rank, sd->is_long ? CAT_LONG : CAT_MEDIUM, handler,
                     sd->addr, nbytes, dest_addr, sd->lc, flags, numargs, ap);
    va_end(ap);
    if (rc != 1) /* sent, or failed: the descriptor is spent; 1 keeps it */
        sd->in_use = 0;
    return rc;
}

static int cancel(gex_AM_SrcDesc_t sd)
{
    if (!sd || !sd->in_use)
        return BAD("a Cancel without a Prepare");
    sd->in_use = 0;
    if (sd->loan)
        sd->token ? am_reply_cancel(sd->token->tok) : am_request_cancel(G.ep);
    return GASNET_OK;
}

int gex_AM_CancelRequestMedium(gex_AM_SrcDesc_t sd, gex_Flags_t flags)
{
    return cancel(sd);
}
int gex_AM_CancelReplyMedium(gex_AM_SrcDesc_t sd, gex_Flags_t flags)
{
    return cancel(sd);
}
int gex_AM_CancelRequestLong(gex_AM_SrcDesc_t sd, gex_Flags_t flags)
{
    return cancel(sd);
}
int gex_AM_CancelReplyLong(gex_AM_SrcDesc_t sd, gex_Flags_t flags)
{
    return cancel(sd);
}

/* ---- receiving ---- */

/* A GASNet AM of category cat arrived (shmam handler of the layer): check
 * its header against what the packet holds, gather its arguments, run it. */
static void on_am(am_token_t *t, const uint32_t *a, int n, void *d, size_t len, int cat,
                  int reply)
{
    if (n < 1) {
        drop("an AM without its header dropped");
        return;
    }
    unsigned h = a[0] & 0xFF, nargs = a[0] >> 8;
    unsigned inpk = nargs < PACKED_ARGS ? nargs : PACKED_ARGS, extra = nargs - inpk;
    if (nargs > MAX_GEX_ARGS || (unsigned)n != 1 + inpk) {
        drop("an AM with a bad header dropped");
        return;
    }
    if (!G.used[h]) {
        drop("an AM to a handler never registered dropped");
        return;
    }
    const gex_AM_Entry_t *e = &G.table[h];
    gex_AM_Arg_t args[MAX_GEX_ARGS];
    for (unsigned i = 0; i < inpk; i++)
        args[i] = (gex_AM_Arg_t)a[1 + i];
    struct gex_shmam_token tk = {t, SRC_UNKNOWN, e, !reply, cat >= CAT_LONG};
    char *p = d;
    if (cat == CAT_SHORT) {
        if (len != extra * sizeof *args) {
            drop("a Short with a bad payload dropped");
            return;
        }
        if (len)
            memcpy(args + inpk, p, len);
        call_short(e->gex_fnptr, &tk, nargs, args);
        return;
    }
    if (cat == CAT_MEDIUM) {
        size_t pre = med_prefix(nargs);
        if (len < pre) {
            drop("a Medium with a short payload dropped");
            return;
        }
        if (extra)
            memcpy(args + inpk, p, extra * sizeof *args);
        call_medlong(e->gex_fnptr, &tk, p + pre, len - pre, nargs, args);
        return;
    }
    if (cat == CAT_LONG) {
        call_medlong(e->gex_fnptr, &tk, d, len, nargs, args);
        return;
    }
    size_t pre = long_prefix(nargs);
    uint64_t off;
    if (!extra || len < pre) {
        drop("a Long with a short payload dropped");
        return;
    }
    memcpy(&off, p, sizeof off);
    memcpy(args + inpk, p + sizeof off, extra * sizeof *args);
    size_t nb = len - pre;
    if (off > G.seg.size || nb > G.seg.size - off) {
        drop("a Long outside this rank's segment dropped");
        return;
    }
    char *at = (char *)G.seg.base + off;
    if (nb)
        memcpy(at, p + pre, nb);
    call_medlong(e->gex_fnptr, &tk, at, nb, nargs, args);
}

#define ON(name, cat, reply)                                                               \
    static void name(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)         \
    {                                                                                      \
        on_am(t, a, n, d, len, cat, reply);                                                \
    }
ON(on_short_req, CAT_SHORT, 0)
ON(on_medium_req, CAT_MEDIUM, 0)
ON(on_long_req, CAT_LONG, 0)
ON(on_longh_req, CAT_LONG_HEAP, 0)
ON(on_short_rep, CAT_SHORT, 1)
ON(on_medium_rep, CAT_MEDIUM, 1)
ON(on_long_rep, CAT_LONG, 1)
ON(on_longh_rep, CAT_LONG_HEAP, 1)

static void on_exit_msg(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    fflush(NULL);
    _exit(n >= 1 ? (int)(a[0] & 0xFF) : 1);
}

static void on_seg(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    unsigned src = am_token_source(t);
    if (n != 4 || src >= G.size) {
        drop("a bad segment notice dropped");
        return;
    }
    G.peer[src].base = (uintptr_t)((uint64_t)a[1] << 32 | a[0]);
    G.peer[src].size = (uintptr_t)((uint64_t)a[3] << 32 | a[2]);
    G.seg_known++;
}

static void on_bar(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    if (n == 1)
        G.bar_arrived[a[0] & 1]++;
}

static void on_bcast(am_token_t *t, const uint32_t *a, int n, void *d, size_t len);

/* ---- job, client, segment ---- */

int gex_Client_Init(gex_Client_t *client_p, gex_EP_t *ep_p, gex_TM_t *tm_p,
                    const char *clientName, int *argc, char ***argv, gex_Flags_t flags)
{
    if (G.init)
        return complain(GASNET_ERR_RESOURCE, "gex_Client_Init called twice", 0);
    int rc = am_init(argc, argv, &G.ep);
    if (rc < 0)
        return complain(GASNET_ERR_RESOURCE, "am_init", rc);
    G.rank = (gex_Rank_t)am_rank();
    G.size = (gex_Rank_t)am_nprocs();
    G.long_max = am_ep_long_max(G.ep);
    G.peer = calloc(G.size, sizeof *G.peer);
    gex_Rank_t *info = calloc(G.size, sizeof *info);
    if (!G.peer || !info)
        return complain(GASNET_ERR_RESOURCE, "no memory", 0);
    for (gex_Rank_t r = 0; r < G.size; r++)
        info[r] = r;
    G.info = (gex_RankInfo_t *)info;
    static const am_handler_t am[] = {on_short_req, on_medium_req, on_long_req,
                                      on_longh_req, on_short_rep,  on_medium_rep,
                                      on_long_rep,  on_longh_rep};
    for (unsigned i = 0; i < sizeof am / sizeof am[0]; i++)
        am_set_handler(G.ep, H_AM + i, am[i]);
    am_set_handler(G.ep, H_EXIT, on_exit_msg);
    am_set_handler(G.ep, H_SEG, on_seg);
    am_set_handler(G.ep, H_BAR, on_bar);
    am_set_handler(G.ep, H_BCAST, on_bcast);
    G.client = (struct gex_shmam_client){.name = clientName, .flags = flags};
    G.init = 1;
    if (client_p)
        *client_p = &G.client;
    if (ep_p)
        *ep_p = &G.gep;
    if (tm_p)
        *tm_p = &G.tm;
    return GASNET_OK;
}

void gasnet_QueryGexObjects(gex_Client_t *client_p, gex_EP_t *endpoint_p, gex_TM_t *tm_p,
                            gex_Segment_t *segment_p)
{
    if (client_p)
        *client_p = G.init ? &G.client : NULL;
    if (endpoint_p)
        *endpoint_p = G.init ? &G.gep : NULL;
    if (tm_p)
        *tm_p = G.init ? &G.tm : NULL;
    if (segment_p)
        *segment_p = G.seg.base ? &G.seg : NULL;
}

int gex_Segment_Attach(gex_Segment_t *segment_p, gex_TM_t tm, uintptr_t size)
{
    if (!G.init)
        return GASNET_ERR_NOT_INIT;
    if (G.seg.base)
        return complain(GASNET_ERR_RESOURCE, "a second gex_Segment_Attach", 0);
    if (size == 0)
        return BAD("a segment of 0 bytes");
    void *base;
    int rc = am_region_create(G.ep, size, &base);
    if (rc < 0)
        return complain(GASNET_ERR_RESOURCE, "am_region_create", rc);
    G.seg.base = base;
    G.seg.size = size;
    G.peer[G.rank] = (struct peer_seg){(uintptr_t)base, size, base};
    uint64_t b = (uintptr_t)base, s = size;
    uint32_t a[4] = {(uint32_t)b, (uint32_t)(b >> 32), (uint32_t)s, (uint32_t)(s >> 32)};
    for (gex_Rank_t r = 0; r < G.size; r++)
        if (r != G.rank && (rc = am_request(G.ep, r, H_SEG, a, 4)) < 0)
            return complain(GASNET_ERR_RESOURCE, "telling a peer of the segment", rc);
    while (G.seg_known < G.size - 1)
        idle();
    for (gex_Rank_t r = 0; r < G.size; r++) {
        size_t len;
        void *local;
        if (r == G.rank)
            continue;
        if ((rc = am_region_map(G.ep, r, &local, &len)) < 0)
            return complain(GASNET_ERR_RESOURCE, "am_region_map", rc);
        if (len != G.peer[r].size)
            return complain(GASNET_ERR_RESOURCE, "a peer's segment changed size", 0);
        G.peer[r].local = local;
    }
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    if (segment_p)
        *segment_p = &G.seg;
    return GASNET_OK;
}

gex_Client_t gex_Segment_QueryClient(gex_Segment_t seg)
{
    return &G.client;
}
gex_Flags_t gex_Segment_QueryFlags(gex_Segment_t seg)
{
    return 0;
}
void *gex_Segment_QueryAddr(gex_Segment_t seg)
{
    return seg ? seg->base : NULL;
}
uintptr_t gex_Segment_QuerySize(gex_Segment_t seg)
{
    return seg ? seg->size : 0;
}
void gex_Segment_SetCData(gex_Segment_t seg, const void *val)
{
    seg->cdata = (void *)val;
}
void *gex_Segment_QueryCData(gex_Segment_t seg)
{
    return seg->cdata;
}

int gex_Segment_QueryBound(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                           void **localaddr_p, uintptr_t *size_p)
{
    if (!G.init || rank >= G.size || !G.peer[rank].size)
        return GASNET_ERR_BAD_ARG;
    if (owneraddr_p)
        *owneraddr_p = (void *)G.peer[rank].base;
    if (localaddr_p)
        *localaddr_p = G.peer[rank].local;
    if (size_p)
        *size_p = G.peer[rank].size;
    return GASNET_OK;
}

gex_Event_t gex_EP_QueryBoundSegmentNB(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                                       void **localaddr_p, uintptr_t *size_p,
                                       gex_Flags_t flags)
{
    return gex_Segment_QueryBound(tm, rank, owneraddr_p, localaddr_p, size_p) == GASNET_OK
               ? GEX_EVENT_INVALID
               : GEX_EVENT_NO_OP;
}

int gex_EP_PublishBoundSegment(gex_TM_t tm, gex_EP_t *eps, size_t num_eps,
                               gex_Flags_t flags)
{
    return GASNET_OK; /* gex_Segment_Attach published it */
}

int gex_EP_RegisterHandlers(gex_EP_t ep, gex_AM_Entry_t *table, size_t numentries)
{
    const gex_Flags_t cats = GEX_FLAG_AM_SHORT | GEX_FLAG_AM_MEDLONG;
    for (int pass = 0; pass < 2; pass++) /* fixed indexes first, then the "don't care" */
        for (size_t i = 0; i < numentries; i++) {
            gex_AM_Entry_t *e = &table[i];
            if ((e->gex_index == 0) != (pass == 1))
                continue;
            if (!e->gex_fnptr || !(e->gex_flags & cats) ||
                !(e->gex_flags & GEX_FLAG_AM_REQREP) || e->gex_nargs > MAX_GEX_ARGS)
                return BAD("a handler entry with bad flags, arguments or function");
            unsigned idx = e->gex_index;
            if (pass == 1)
                for (idx = 255; idx >= GEX_AM_INDEX_BASE && G.used[idx]; idx--)
                    ;
            if (idx < GEX_AM_INDEX_BASE || G.used[idx])
                return BAD("a handler index taken or below GEX_AM_INDEX_BASE");
            e->gex_index = (gex_AM_Index_t)idx;
            G.table[idx] = *e;
            G.used[idx] = 1;
        }
    return GASNET_OK;
}

gex_TI_t gex_Token_Info(gex_Token_t token, gex_Token_Info_t *info, gex_TI_t mask)
{
    if (!token || !info)
        return 0;
    info->gex_srcrank = token_src(token);
    info->gex_ep = &G.gep;
    info->gex_entry = token->entry;
    info->gex_is_req = token->is_req;
    info->gex_is_long = token->is_long;
    return GEX_TI_ALL;
}

/* ---- queries ---- */

gex_Rank_t gex_System_QueryJobRank(void)
{
    return G.rank;
}
gex_Rank_t gex_System_QueryJobSize(void)
{
    return G.size;
}
int gex_System_GetVerboseErrors(void)
{
    return G.verbose;
}
void gex_System_SetVerboseErrors(int enable)
{
    G.verbose = enable;
}
void gex_System_QueryNbrhdInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                               gex_Rank_t *my_info_index_p)
{
    if (info_p)
        *info_p = G.info;
    if (info_count_p)
        *info_count_p = G.size;
    if (my_info_index_p)
        *my_info_index_p = G.rank;
}
void gex_System_QueryHostInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                              gex_Rank_t *my_info_index_p)
{
    gex_System_QueryNbrhdInfo(info_p, info_count_p, my_info_index_p);
}
void gex_System_QueryMyPosition(gex_Rank_t *nbrhd_set_size, gex_Rank_t *nbrhd_set_rank,
                                gex_Rank_t *host_set_size, gex_Rank_t *host_set_rank)
{
    if (nbrhd_set_size)
        *nbrhd_set_size = 1;
    if (nbrhd_set_rank)
        *nbrhd_set_rank = 0;
    if (host_set_size)
        *host_set_size = 1;
    if (host_set_rank)
        *host_set_rank = 0;
}
gex_Flags_t gex_Client_QueryFlags(gex_Client_t client)
{
    return client->flags;
}
const char *gex_Client_QueryName(gex_Client_t client)
{
    return client->name;
}
void gex_Client_SetCData(gex_Client_t client, const void *val)
{
    client->cdata = (void *)val;
}
void *gex_Client_QueryCData(gex_Client_t client)
{
    return client->cdata;
}
gex_Client_t gex_TM_QueryClient(gex_TM_t tm)
{
    return &G.client;
}
gex_EP_t gex_TM_QueryEP(gex_TM_t tm)
{
    return &G.gep;
}
gex_Flags_t gex_TM_QueryFlags(gex_TM_t tm)
{
    return 0;
}
gex_Rank_t gex_TM_QueryRank(gex_TM_t tm)
{
    return G.rank;
}
gex_Rank_t gex_TM_QuerySize(gex_TM_t tm)
{
    return G.size;
}
void gex_TM_SetCData(gex_TM_t tm, const void *val)
{
    tm->cdata = (void *)val;
}
void *gex_TM_QueryCData(gex_TM_t tm)
{
    return tm->cdata;
}
gex_Rank_t gex_TM_TranslateRankToJobrank(gex_TM_t tm, gex_Rank_t rank)
{
    return rank;
}
gex_Rank_t gex_TM_TranslateJobrankToRank(gex_TM_t tm, gex_Rank_t jobrank)
{
    return jobrank < G.size ? jobrank : GEX_RANK_INVALID;
}
gex_Client_t gex_EP_QueryClient(gex_EP_t ep)
{
    return &G.client;
}
gex_Flags_t gex_EP_QueryFlags(gex_EP_t ep)
{
    return 0;
}
gex_Segment_t gex_EP_QuerySegment(gex_EP_t ep)
{
    return G.seg.base ? &G.seg : GEX_SEGMENT_INVALID;
}
gex_EP_Index_t gex_EP_QueryIndex(gex_EP_t ep)
{
    return 0;
}
void gex_EP_SetCData(gex_EP_t ep, const void *val)
{
    ep->cdata = (void *)val;
}
void *gex_EP_QueryCData(gex_EP_t ep)
{
    return ep->cdata;
}

unsigned int gex_AM_MaxArgs(void)
{
    return MAX_GEX_ARGS;
}
size_t gex_AM_MaxRequestLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                             gex_Flags_t flags, unsigned int numargs)
{
    return max_long(numargs);
}
size_t gex_AM_MaxReplyLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                           gex_Flags_t flags, unsigned int numargs)
{
    return max_long(numargs);
}
size_t gex_AM_MaxRequestMedium(gex_TM_t tm, gex_Rank_t other_rank,
                               const gex_Event_t *lc_opt, gex_Flags_t flags,
                               unsigned int numargs)
{
    return max_medium(numargs);
}
size_t gex_AM_MaxReplyMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                             gex_Flags_t flags, unsigned int numargs)
{
    return max_medium(numargs);
}
size_t gex_Token_MaxReplyLong(gex_Token_t token, const gex_Event_t *lc_opt,
                              gex_Flags_t flags, unsigned int numargs)
{
    return max_long(numargs);
}
size_t gex_Token_MaxReplyMedium(gex_Token_t token, const gex_Event_t *lc_opt,
                                gex_Flags_t flags, unsigned int numargs)
{
    return max_medium(numargs);
}
size_t gex_AM_LUBRequestLong(void)
{
    return max_long(MAX_GEX_ARGS);
}
size_t gex_AM_LUBReplyLong(void)
{
    return max_long(MAX_GEX_ARGS);
}
size_t gex_AM_LUBRequestMedium(void)
{
    return max_medium(MAX_GEX_ARGS);
}
size_t gex_AM_LUBReplyMedium(void)
{
    return max_medium(MAX_GEX_ARGS);
}

/* ---- RMA: copies through the mapped segments ---- */

/* Where rank's bytes [addr, addr + n) are mapped here, or NULL if they are
 * not all in its segment. */
static char *rma_at(gex_Rank_t rank, const void *addr, size_t n)
{
    if (!G.init || rank >= G.size || !G.peer[rank].local)
        return NULL;
    const struct peer_seg *p = &G.peer[rank];
    uintptr_t a = (uintptr_t)addr, off = a - p->base;
    return a < p->base || off > p->size || n > p->size - off ? NULL : p->local + off;
}

int gex_RMA_PutBlocking(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                        size_t nbytes, gex_Flags_t flags)
{
    char *d = rma_at(rank, dest, nbytes);
    if (!d)
        return BAD("a put outside the rank's segment");
    if (nbytes)
        memcpy(d, src, nbytes);
    return GASNET_OK;
}

int gex_RMA_PutNBI(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src, size_t nbytes,
                   gex_Event_t *lc_opt, gex_Flags_t flags)
{
    return gex_RMA_PutBlocking(tm, rank, dest, src, nbytes, flags);
}

gex_Event_t gex_RMA_PutNB(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                          size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags)
{
    int rc = gex_RMA_PutBlocking(tm, rank, dest, src, nbytes, flags);
    if (rc == 0 && lc_real(lc_opt))
        *lc_opt = GEX_EVENT_INVALID;
    return GEX_EVENT_INVALID;
}

int gex_RMA_GetBlocking(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src, size_t nbytes,
                        gex_Flags_t flags)
{
    const char *s = rma_at(rank, src, nbytes);
    if (!s)
        return BAD("a get outside the rank's segment");
    if (nbytes)
        memcpy(dest, s, nbytes);
    return GASNET_OK;
}

int gex_RMA_GetNBI(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src, size_t nbytes,
                   gex_Flags_t flags)
{
    return gex_RMA_GetBlocking(tm, dest, rank, src, nbytes, flags);
}

gex_Event_t gex_RMA_GetNB(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                          size_t nbytes, gex_Flags_t flags)
{
    gex_RMA_GetBlocking(tm, dest, rank, src, nbytes, flags);
    return GEX_EVENT_INVALID;
}

/* A value of nbytes (1, 2, 4, 8) as the C type of that size holds it. */
gex_RMA_Value_t gex_RMA_GetBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *src,
                                       size_t nbytes, gex_Flags_t flags)
{
    const char *s = rma_at(rank, src, nbytes);
    uint8_t v1;
    uint16_t v2;
    uint32_t v4;
    uint64_t v8;
    if (!s || (nbytes != 1 && nbytes != 2 && nbytes != 4 && nbytes != 8))
        return BAD("a get of a value outside the segment or of a bad size"), 0;
    switch (nbytes) {
    case 1:
        return memcpy(&v1, s, 1), v1;
    case 2:
        return memcpy(&v2, s, 2), v2;
    case 4:
        return memcpy(&v4, s, 4), v4;
    default:
        return memcpy(&v8, s, 8), v8;
    }
}

int gex_RMA_PutBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *dest, gex_RMA_Value_t value,
                           size_t nbytes, gex_Flags_t flags)
{
    uint8_t v1 = (uint8_t)value;
    uint16_t v2 = (uint16_t)value;
    uint32_t v4 = (uint32_t)value;
    const void *src = nbytes == 1   ? (void *)&v1
                      : nbytes == 2 ? (void *)&v2
                      : nbytes == 4 ? (void *)&v4
                                    : (void *)&value;
    if (nbytes != 1 && nbytes != 2 && nbytes != 4 && nbytes != 8)
        return BAD("a put of a value of a bad size");
    return gex_RMA_PutBlocking(tm, rank, dest, src, nbytes, flags);
}

int gex_RMA_PutNBIVal(gex_TM_t tm, gex_Rank_t rank, void *dest, gex_RMA_Value_t value,
                      size_t nbytes, gex_Flags_t flags)
{
    return gex_RMA_PutBlockingVal(tm, rank, dest, value, nbytes, flags);
}

gex_Event_t gex_RMA_PutNBVal(gex_TM_t tm, gex_Rank_t rank, void *dest,
                             gex_RMA_Value_t value, size_t nbytes, gex_Flags_t flags)
{
    gex_RMA_PutBlockingVal(tm, rank, dest, value, nbytes, flags);
    return GEX_EVENT_INVALID;
}

/* ---- barriers ---- */

static int bar_notify(void)
{
    if (G.bar_pending)
        return BAD("a barrier notify before the last barrier's wait");
    uint32_t epoch = ++G.bar_epoch;
    for (gex_Rank_t r = 0; r < G.size; r++) {
        int rc = r == G.rank ? 0 : am_request(G.ep, r, H_BAR, &epoch, 1);
        if (rc < 0)
            return complain(GASNET_ERR_RESOURCE, "barrier notify", rc);
    }
    G.bar_pending = 1;
    return GASNET_OK;
}

/* Has every other rank notified this epoch?  Takes their notices once. */
static int bar_done(void)
{
    unsigned *arrived = &G.bar_arrived[G.bar_epoch & 1];
    if (G.bar_pending && *arrived >= G.size - 1) {
        *arrived -= G.size - 1;
        G.bar_pending = 0;
    }
    return !G.bar_pending;
}

void gasnet_barrier_notify(int id, int flags)
{
    if (!G.init)
        return;
    G.bar_named = !(flags & GASNET_BARRIERFLAG_ANONYMOUS);
    bar_notify();
}

int gasnet_barrier_wait(int id, int flags)
{
    if (!G.init)
        return GASNET_ERR_NOT_INIT;
    while (!bar_done())
        idle();
    return G.bar_named ? BAD("named barriers are not supported") : GASNET_OK;
}

int gasnet_barrier_try(int id, int flags)
{
    if (!G.init)
        return GASNET_ERR_NOT_INIT;
    am_poll(G.ep);
    if (!bar_done())
        return GASNET_ERR_NOT_READY;
    return G.bar_named ? BAD("named barriers are not supported") : GASNET_OK;
}

int gasnet_barrier(int id, int flags)
{
    gasnet_barrier_notify(id, flags);
    return gasnet_barrier_wait(id, flags);
}

static gex_Event_t new_event(int kind, struct bcast *bc)
{
    struct gex_shmam_event *e = malloc(sizeof *e);
    if (!e) {
        complain(0, "no memory for an event", 0);
        return GEX_EVENT_NO_OP;
    }
    e->kind = kind;
    e->bc = bc;
    return e;
}

gex_Event_t gex_Coll_BarrierNB(gex_TM_t tm, gex_Flags_t flags)
{
    if (!G.init || bar_notify() != GASNET_OK)
        return GEX_EVENT_NO_OP;
    G.bar_named = 0;
    return new_event(0, NULL);
}

/* ---- broadcast ---- */

static void bcast_put(struct bcast *op, size_t off, const void *data, size_t len)
{
    if (off > op->n || len > op->n - off) {
        drop("a broadcast chunk outside its buffer dropped");
        return;
    }
    memcpy(op->dst + off, data, len);
    op->got += len;
}

static void on_bcast(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    if (n != 3) {
        drop("a bad broadcast chunk dropped");
        return;
    }
    size_t off = (size_t)((uint64_t)a[2] << 32 | a[1]);
    for (struct bcast *op = G.bcasts; op; op = op->next)
        if (op->posted && op->seq == a[0]) {
            bcast_put(op, off, d, len);
            return;
        }
    struct bcast *c = malloc(sizeof *c + len); /* before its call: kept */
    if (!c) {
        drop("no memory to keep a broadcast chunk");
        return;
    }
    *c = (struct bcast){.seq = a[0], .off = off, .len = len, .next = G.bcasts};
    if (len)
        memcpy(c->data, d, len);
    G.bcasts = c;
}

static int bcast_send(gex_Rank_t r, uint32_t seq, const char *src, size_t nbytes)
{
    size_t chunk = G.long_max / 2 > AM_MAX_BULK ? G.long_max / 2 : AM_MAX_BULK;
    for (size_t off = 0; off < nbytes; off += chunk) {
        size_t len = nbytes - off < chunk ? nbytes - off : chunk;
        uint32_t a[3] = {seq, (uint32_t)off, (uint32_t)((uint64_t)off >> 32)};
        int rc = len <= AM_MAX_BULK
                     ? am_request_bulk(G.ep, r, H_BCAST, src + off, len, a, 3)
                     : am_request_long(G.ep, r, H_BCAST, src + off, len, a, 3);
        if (rc < 0)
            return complain(GASNET_ERR_RESOURCE, "broadcast", rc);
    }
    return 0;
}

gex_Event_t gex_Coll_BroadcastNB(gex_TM_t tm, gex_Rank_t root, void *dst, const void *src,
                                 size_t nbytes, gex_Flags_t flags)
{
    if (!G.init || root >= G.size)
        return BAD("a broadcast from no rank"), GEX_EVENT_NO_OP;
    uint32_t seq = G.bc_seq++;
    if (G.rank == root) {
        if (dst != src && nbytes)
            memmove(dst, src, nbytes);
        for (gex_Rank_t r = 0; r < G.size; r++)
            if (r != root && bcast_send(r, seq, src, nbytes) != 0)
                return GEX_EVENT_NO_OP;
        return GEX_EVENT_INVALID;
    }
    struct bcast *op = malloc(sizeof *op);
    if (!op)
        return complain(0, "no memory for a broadcast", 0), GEX_EVENT_NO_OP;
    *op = (struct bcast){.seq = seq, .posted = 1, .dst = dst, .n = nbytes};
    for (struct bcast **pp = &G.bcasts; *pp;) { /* the chunks that came first */
        struct bcast *c = *pp;
        if (!c->posted && c->seq == seq) {
            bcast_put(op, c->off, c->data, c->len);
            *pp = c->next;
            free(c);
        } else
            pp = &c->next;
    }
    op->next = G.bcasts;
    G.bcasts = op;
    return new_event(1, op);
}

/* ---- events ---- */

static int event_done(struct gex_shmam_event *e)
{
    if (e->kind == 0)
        return bar_done();
    if (e->bc->got < e->bc->n)
        return 0;
    for (struct bcast **pp = &G.bcasts; *pp; pp = &(*pp)->next)
        if (*pp == e->bc) {
            *pp = e->bc->next;
            break;
        }
    free(e->bc);
    return 1;
}

/* Test polls once (no call of this layer makes progress otherwise). */
int gex_Event_Test(gex_Event_t event)
{
    if (event == GEX_EVENT_INVALID)
        return GASNET_OK;
    if (event == GEX_EVENT_NO_OP)
        return BAD("a test of GEX_EVENT_NO_OP");
    am_poll(G.ep);
    if (!event_done(event))
        return GASNET_ERR_NOT_READY;
    free(event);
    return GASNET_OK;
}

void gex_Event_Wait(gex_Event_t event)
{
    while (gex_Event_Test(event) == GASNET_ERR_NOT_READY)
        idle();
}

int gex_Event_TestSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags)
{
    int some = 0, live = 0;
    for (size_t i = 0; i < numevents; i++) {
        if (pevent[i] == GEX_EVENT_INVALID)
            continue;
        live = 1;
        if (gex_Event_Test(pevent[i]) == GASNET_OK) {
            pevent[i] = GEX_EVENT_INVALID;
            some = 1;
        }
    }
    return some || !live ? GASNET_OK : GASNET_ERR_NOT_READY;
}

void gex_Event_WaitSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags)
{
    while (gex_Event_TestSome(pevent, numevents, flags) == GASNET_ERR_NOT_READY)
        idle();
}

int gex_Event_TestAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags)
{
    int all = 1;
    for (size_t i = 0; i < numevents; i++) {
        if (pevent[i] != GEX_EVENT_INVALID && gex_Event_Test(pevent[i]) == GASNET_OK)
            pevent[i] = GEX_EVENT_INVALID;
        all &= pevent[i] == GEX_EVENT_INVALID;
    }
    return all ? GASNET_OK : GASNET_ERR_NOT_READY;
}

void gex_Event_WaitAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags)
{
    while (gex_Event_TestAll(pevent, numevents, flags) == GASNET_ERR_NOT_READY)
        idle();
}

gex_Event_t gex_Event_QueryLeaf(gex_Event_t root, gex_EC_t event_category)
{
    return GEX_EVENT_INVALID; /* leaf events (local completion) are complete at once */
}

/* Every RMA and AM completes before its call returns: nothing implicit is
 * ever outstanding. */
void gex_NBI_BeginAccessRegion(gex_Flags_t flags)
{
}
gex_Event_t gex_NBI_EndAccessRegion(gex_Flags_t flags)
{
    return GEX_EVENT_INVALID;
}
int gex_NBI_Test(gex_EC_t event_mask, gex_Flags_t flags)
{
    return GASNET_OK;
}
void gex_NBI_Wait(gex_EC_t event_mask, gex_Flags_t flags)
{
}

/* ---- exit, locks, errors ---- */

/* Ends the job with exitcode: every other rank is told (a try-send each,
 * so a full queue never holds the exit up) and exits with the same code
 * when it next polls; shmamrun also stops the job at a non-zero code.  From
 * a handler the try-sends are refused (-EDEADLK): then only shmamrun's stop
 * reaches the others, for a non-zero code. */
void gasnet_exit(int exitcode)
{
    uint32_t code = (uint32_t)exitcode & 0xFF;
    for (gex_Rank_t r = 0; G.init && r < G.size; r++)
        if (r != G.rank)
            (void)am_request_try(G.ep, r, AM_MSG_SHORT, H_EXIT, NULL, 0, 0, &code, 1);
    fflush(NULL);
    _exit((int)code);
}

void gex_HSL_Init(gex_HSL_t *hsl)
{
    pthread_mutex_init(&hsl->lock, NULL);
}
void gex_HSL_Destroy(gex_HSL_t *hsl)
{
    pthread_mutex_destroy(&hsl->lock);
}
void gex_HSL_Lock(gex_HSL_t *hsl)
{
    pthread_mutex_lock(&hsl->lock);
}
void gex_HSL_Unlock(gex_HSL_t *hsl)
{
    pthread_mutex_unlock(&hsl->lock);
}
int gex_HSL_Trylock(gex_HSL_t *hsl)
{
    return pthread_mutex_trylock(&hsl->lock) == 0 ? GASNET_OK : GASNET_ERR_NOT_READY;
}

static const struct {
    int code;
    const char *name, *desc;
} errors[] = {
    {GASNET_OK, "GASNET_OK", "no error"},
    {GASNET_ERR_NOT_INIT, "GASNET_ERR_NOT_INIT", "GASNet message layer not initialized"},
    {GASNET_ERR_RESOURCE, "GASNET_ERR_RESOURCE", "problem with requested resource"},
    {GASNET_ERR_BAD_ARG, "GASNET_ERR_BAD_ARG", "bad argument to GASNet call"},
    {GASNET_ERR_NOT_READY, "GASNET_ERR_NOT_READY", "non-blocking operation not complete"},
    {GASNET_ERR_BARRIER_MISMATCH, "GASNET_ERR_BARRIER_MISMATCH", "barrier id's mismatched"},
};

const char *gasnet_ErrorName(int errval)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == errval)
            return errors[i].name;
    return "*unknown*";
}

const char *gasnet_ErrorDesc(int errval)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == errval)
            return errors[i].desc;
    return "no description available";
}
