/*
 * check_long.c - long messages (am_request_long / am_reply_long, through the
 * receiver's shared heap) and one-copy long messages (am_region_create,
 * am_request_long_at / am_reply_long_at).
 *
 *   sizes            every claim algorithm: a long request of each size from 0
 *                    to long_max to the endpoint itself, answered by a long reply
 *                    of another pattern; every byte checked; long_max + 1 is
 *                    -EMSGSIZE at once; the default long_max is 1 MiB
 *   fifo_mixed       every claim algorithm (backends alternating): 3 writers,
 *                    pinned and gated, each send short, bulk and long messages
 *                    (0 .. 96 KB, heap of two 64 KB blocks' worth) interleaved,
 *                    with widened claims; the reader counts every message once,
 *                    per writer in order, every byte checked
 *   heap_full        a reader that does not poll for 300 ms: a writer's eight
 *                    long_max messages back off (none fails) and all arrive
 *   staged_killed    two senders parked with a long_max block each staged
 *                    (AM_HOOK_LONG_STAGED: the heap full) and SIGKILLed; a live
 *                    sender's long_max messages then all arrive (the receiver
 *                    takes the dead ones' blocks back when asked) and the heap
 *                    ends with no block live
 *   killed_at_random two senders of long messages SIGKILLed at random moments
 *                    (10 rounds) beside a live one: the live one's messages all
 *                    arrive in order, and the heap ends with no block live
 *   region           one-copy: -ENXIO before the region exists; data lands at
 *                    the offset, the handler sees it there; -EMSGSIZE past the
 *                    end; -EEXIST for a second region; NAME:r goes at destroy
 *   long_at_4gib     a one-copy request and a reply of 2^32 + 100 bytes into a
 *                    region that holds them (System V: sparse, no page
 *                    touched; the data is PROT_NONE, so a send that reads it
 *                    crashes) are -EMSGSIZE, not sent cut to their low 32 bits
 *   corrupt          packets naming an unallocated heap block, bytes past the
 *                    region, or unknown flags are dropped and counted, and
 *                    a good long message still arrives after them
 *   misuse           a request from a handler is -EDEADLK; a second long reply
 *                    -EALREADY; NULL data with a length -EINVAL; zero bytes with
 *                    NULL data arrive as len 0
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap_int.h"
#include "internal.h"
#include "mpsc.h"
#include "peers.h"
#include "send.h"
#include "senders.h"
#include "testutil.h"

#define H_LONG 3
#define H_REPLY 4
#define H_MIX 5
#define H_AT 6
#define SMALL_LONG 65536u /* long_max of the stress tests: the heap holds 2 */
#define NW 3

static char what[160];

static void setup(void)
{
    tu_test_init();
}

static struct am_ep_opts opts_of(int alg, int b, unsigned long_max)
{
    return (struct am_ep_opts){
        .claim = am_claim_names[alg], .shm = tu_backend_name(b), .long_max = long_max};
}

static am_ep_t *create_ok(const char *name, const struct am_ep_opts *o)
{
    am_ep_t *ep = NULL;
    int rc = am_ep_create(name, o, &ep);
    ck_assert_msg(rc == 0, "%s: create %s: %s", what, name, am_strerror(rc));
    return ep;
}

/* Blocks live in queue qid's heap of ep (a snapshot). */
static unsigned long heap_live(am_ep_t *ep, enum am_qid qid)
{
    struct am_heap_stats st;
    am_heap_stats(&ep->own.q[qid].heap, &st);
    return st.blocks_live;
}

#define RECLAIM_S 10 /* the longest wait for the heap's reclaim */

/* The first live block of queue qid's heap, for a failure message: its
 * header's state, allocator and whether that allocator is dead; "" if none. */
static const char *first_live(am_ep_t *ep, enum am_qid qid)
{
    static char buf[160];
    const struct am_heap_view *h = &ep->own.q[qid].heap;
    buf[0] = '\0';
    for (uint32_t sb = 0; sb < h->superblocks && !buf[0]; sb++) {
        AO_t s = AO_load(state_at(h, sb));
        unsigned step = sb_kind(s) == SB_RUN ? AM_HEAP_UNITS : 1u << sb_class(s);
        if (sb_kind(s) != SB_SMALL && sb_kind(s) != SB_DRAINING && sb_kind(s) != SB_RUN)
            continue;
        for (uint64_t u = 0; u < AM_HEAP_UNITS && !buf[0]; u += step) {
            AO_t w = AO_load(header_at(h, (uint64_t)sb * AM_HEAP_UNITS + u));
            if (hw_state(w) == H_ALLOC)
                snprintf(buf, sizeof buf,
                         "superblock %u (state %#lx) unit %lu: allocated by %#x, %s", sb,
                         (unsigned long)s, (unsigned long)u, hw_who(w),
                         am__who_dead(&ep->own, hw_who(w)) ? "dead" : "alive");
        }
    }
    return buf;
}

/* Asks for the heap's reclaim, as a sender finding it full does, and polls
 * until no block of queue qid's heap is live, for up to RECLAIM_S: the owner
 * takes a dead sender's blocks back on an idle poll, once the claims queued
 * in front of them are skipped.  Returns the blocks still live. */
static unsigned long reclaimed(am_ep_t *ep, enum am_qid qid)
{
    double end = tu_now_s() + RECLAIM_S;
    unsigned long live;
    while ((live = heap_live(ep, qid)) != 0 && tu_now_s() < end) {
        AO_store(&ep->own.shared->reclaim[qid], 1);
        for (int i = 0; i < 50; i++)
            am_poll(ep);
        tu_sleep_ms(1);
    }
    return live;
}

/* ---- sizes ---- */

static struct {
    size_t want_len, got_len;
    uint32_t key;
    int ok, replies, reply_rc;
} rt;

static void on_long(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    static unsigned char out[AM_DEFAULT_LONG];
    rt.got_len = len;
    rt.ok = n == 2 && len == a[1] && (len == 0 || tu_fnv1a(d, len) == a[0]);
    tu_pattern(out, rt.key + 1, len);
    rt.reply_rc = am_reply_long(t, H_REPLY, out, len, a, n);
}

static void on_reply(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    static unsigned char out[AM_DEFAULT_LONG];
    tu_pattern(out, rt.key + 1, len);
    rt.replies += len == rt.want_len && (len == 0 || memcmp(d, out, len) == 0);
}

static void round_trip(am_ep_t *ep, size_t len)
{
    static unsigned char buf[AM_DEFAULT_LONG];
    rt.key = (uint32_t)len * 7919u;
    rt.want_len = len;
    rt.replies = 0;
    tu_pattern(buf, rt.key, len);
    uint32_t a[2] = {len ? tu_fnv1a(buf, len) : 0, (uint32_t)len};
    int rc = am_request_long(ep, 0, H_LONG, len ? buf : NULL, len, a, 2);
    ck_assert_msg(rc == 0, "%s: long request of %zu bytes: %s", what, len, am_strerror(rc));
    for (int i = 0; i < 100 && rt.replies == 0; i++)
        am_poll(ep);
    ck_assert_msg(rt.ok && rt.reply_rc == 0 && rt.replies == 1,
                  "%s: %zu bytes: request %s (got %zu), reply rc %d, replies %d", what, len,
                  rt.ok ? "intact" : "garbled", rt.got_len, rt.reply_rc, rt.replies);
}

START_TEST(sizes)
{
    static const size_t lens[] = {0, 1, 63, 64, 8192, 8193, 100000, AM_DEFAULT_LONG};
    char name[AM_NAME_MAX];
    snprintf(what, sizeof what, "sizes %s", am_claim_names[_i]);
    tu_ep_name(name, sizeof name, "self", _i, 0);
    struct am_ep_opts o = opts_of(_i, 0, 0);
    am_ep_t *ep = create_ok(name, &o);
    ck_assert_int_eq(am_ep_map(ep, 0, name), 0);
    am_set_handler(ep, H_LONG, on_long);
    am_set_handler(ep, H_REPLY, on_reply);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        round_trip(ep, lens[i]);
    static unsigned char big[AM_DEFAULT_LONG + 1];
    int rc = am_request_long(ep, 0, H_LONG, big, sizeof big, NULL, 0);
    ck_assert_msg(rc == -EMSGSIZE, "%s: long_max + 1 bytes: %s", what, am_err_name(rc));
    ck_assert_msg(am_ep_bad_packets(ep) == 0 && heap_live(ep, AM_REQUEST) == 0 &&
                      heap_live(ep, AM_REPLY) == 0,
                  "%s: %lu bad packets, blocks left live", what, am_ep_bad_packets(ep));
    ck_assert_int_eq(am_ep_destroy(ep), 0);
}
END_TEST

/* ---- streams of mixed kinds from several writers ---- */

struct shared {
    struct tu_gate gate;
    struct tu_errors err;
    char rcv[AM_NAME_MAX], snd[NW][AM_NAME_MAX];
    int alg, b;
    unsigned n;    /* messages per writer */
    unsigned hook; /* parked senders: enum am_hook to park at, else ~0 */
    AO_t parked, stop, done;
    unsigned long_max;
    int only_long; /* writers send long messages only */
};
static struct shared *sh;

static int mix_kind(unsigned seq)
{
    return sh->only_long ? 2 : (int)(seq % 3);
}

/* Message seq of writer w: its kind (0 short, 1 bulk, 2 long: seq % 3, or
 * long only when sh->only_long), and its length. */
static int mix_kind(unsigned seq);
static size_t mix_len(unsigned w, unsigned seq, unsigned long_max)
{
    uint32_t h = tu_mix32(w, seq);
    int k = mix_kind(seq);
    return k == 1 ? h % (AM_MAX_BULK + 1) : k == 2 ? long_max - h % (long_max / 2) : 0;
}

static int send_mix(am_ep_t *ep, unsigned w, unsigned seq, unsigned long_max)
{
    static unsigned char buf[2 * AM_DEFAULT_LONG];
    size_t len = mix_len(w, seq, long_max);
    uint32_t key = tu_mix32(w + 100, seq);
    uint32_t a[3] = {w, seq, key};
    tu_pattern(buf, key, len);
    if (mix_kind(seq) == 0)
        return am_request(ep, 0, H_MIX, a, 3);
    if (mix_kind(seq) == 1)
        return am_request_bulk(ep, 0, H_MIX, buf, len, a, 3);
    return am_request_long(ep, 0, H_MIX, buf, len, a, 3);
}

static struct {
    unsigned got[NW + 1];
    unsigned errors[NW + 1]; /* by writer */
    char first[120];
} rx;

static void on_mix(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    static unsigned char want[2 * AM_DEFAULT_LONG];
    unsigned w = n == 3 && a[0] <= NW ? a[0] : NW;
    size_t wl = mix_len(w, a[1], sh->long_max);
    tu_pattern(want, a[2], wl);
    int ok = w < NW && a[1] == rx.got[w] && len == wl && a[2] == tu_mix32(w + 100, a[1]) &&
             (len == 0 || memcmp(d, want, len) == 0);
    if (!ok && rx.errors[w]++ == 0)
        snprintf(rx.first, sizeof rx.first,
                 "writer %u: message %u (expected %u), %zu bytes", a[0], a[1],
                 w < NW ? rx.got[w] : 0, len);
    rx.got[w]++;
}

static void widen_hook(enum am_hook where)
{
    static unsigned k;
    tu_widen(k++ * 7 + (unsigned)where);
}

static am_ep_t *sender_ep(unsigned w)
{
    am_ep_t *ep = NULL;
    struct am_ep_opts o = opts_of(sh->alg, sh->b, 0);
    int rc = am_ep_create(sh->snd[w], &o, &ep);
    if (rc == 0)
        rc = tu_map_when_there(ep, 0, sh->rcv, 20);
    if (rc < 0) {
        tu_error(&sh->err, "writer %u: %s", w, am_strerror(rc));
        exit(1);
    }
    return ep;
}

/* Writer w (arg): sends sh->n mixed messages, or, with sh->hook armed for a
 * parked writer, stages one long_max long message and parks at the hook. */
static int park_armed;

static void park_hook(enum am_hook where)
{
    if (park_armed && where == AM_HOOK_LONG_STAGED) {
        park_armed = 0;
        AO_fetch_and_add1(&sh->parked);
        for (;;)
            pause();
    }
}

static void writer(void *arg)
{
    unsigned w = (unsigned)(uintptr_t)arg;
    am_ep_t *ep = sender_ep(w);
    am__claim_stall_hook = widen_hook;
    tu_gate_wait(&sh->gate);
    for (unsigned seq = 0; seq < sh->n; seq++) {
        int rc = send_mix(ep, w, seq, sh->long_max);
        if (rc < 0) {
            tu_error(&sh->err, "writer %u: message %u: %s", w, seq, am_strerror(rc));
            break;
        }
    }
    AO_fetch_and_add1(&sh->done);
    tu_wait_flag(&sh->stop, 1, 60);
    am_ep_destroy(ep);
}

static void parked_writer(void *arg)
{
    static unsigned char buf[SMALL_LONG];
    unsigned w = (unsigned)(uintptr_t)arg;
    am_ep_t *ep = sender_ep(w);
    am__claim_stall_hook = park_hook;
    park_armed = 1;
    uint32_t a[3] = {w, 0, 0};
    int rc = am_request_long(ep, 0, H_MIX, buf, SMALL_LONG, a, 3);
    tu_error(&sh->err, "parked writer %u went on: %s", w, am_strerror(rc));
}

static void init_shared(int alg, int b, unsigned long_max)
{
    memset(sh, 0, sizeof *sh);
    sh->alg = alg;
    sh->b = b;
    sh->long_max = long_max;
    tu_ep_name(sh->rcv, sizeof sh->rcv, "rcv", alg, b);
    for (int w = 0; w < NW; w++) {
        char role[8];
        snprintf(role, sizeof role, "w%d", w);
        tu_ep_name(sh->snd[w], sizeof sh->snd[w], role, alg, b);
    }
    memset(&rx, 0, sizeof rx);
}

/* The receiver for a stream test: small queues, the heap of two SMALL_LONG
 * messages, the mixed handler. */
static am_ep_t *stream_receiver(int alg, int b)
{
    sh = tu_shared_alloc(sizeof *sh);
    init_shared(alg, b, SMALL_LONG);
    struct am_ep_opts o = opts_of(alg, b, SMALL_LONG);
    o.packets = 8;
    o.bulk_blocks = 2;
    am_ep_t *ep = create_ok(sh->rcv, &o);
    am_set_handler(ep, H_MIX, on_mix);
    return ep;
}

/* Poll until writer w has delivered want[w] messages (w < nw) or secs pass. */
static int poll_until_counts(am_ep_t *ep, const unsigned *want, int nw, double secs)
{
    double end = tu_now_s() + secs;
    for (;;) {
        int done = 1;
        for (int w = 0; w < nw; w++)
            done &= rx.got[w] >= want[w];
        if (done || tu_now_s() > end)
            return done;
        am_wait(ep, 2);
    }
}

/* A killed writer's endpoint stays until someone reclaims its name: do so. */
static void reclaim_writer(unsigned w)
{
    am_ep_t *ep = NULL;
    struct am_ep_opts o = opts_of(sh->alg, sh->b, 0);
    int rc = am_ep_create(sh->snd[w], &o, &ep);
    ck_assert_msg(rc == 0, "%s: reclaim %s: %s", what, sh->snd[w], am_strerror(rc));
    am_ep_destroy(ep);
}

/* End a stream test: let the writers go, reap them, check counts and order. */
static void end_stream(am_ep_t *ep, const pid_t *p, int np, const unsigned *want, int nw)
{
    ck_assert_msg(poll_until_counts(ep, want, nw, 60),
                  "%s: messages missing (writer 0: %u of %u; %s)", what, rx.got[0], want[0],
                  tu_first_error(&sh->err, "no error"));
    AO_store_release(&sh->stop, 1);
    for (int i = 0; i < np; i++)
        tu_assert_exit0(tu_reap(p[i], 20), "writer", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    unsigned errors = 0;
    for (int w = 0; w < nw; w++)
        errors += rx.errors[w];
    ck_assert_msg(errors == 0 && am_ep_bad_packets(ep) == 0,
                  "%s: %u messages garbled or out of order (%s), %lu bad packets", what,
                  errors, rx.first, am_ep_bad_packets(ep));
    unsigned long live = reclaimed(ep, AM_REQUEST);
    ck_assert_msg(live == 0, "%s: %lu heap blocks left live %d s after the end, e.g. %s",
                  what, live, RECLAIM_S, first_live(ep, AM_REQUEST));
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_clean(what);
    tu_shared_free(sh, sizeof *sh);
}

START_TEST(fifo_mixed)
{
    snprintf(what, sizeof what, "fifo_mixed %s %s", am_claim_names[_i],
             tu_backend_name(_i % 2));
    am_ep_t *ep = stream_receiver(_i, _i % 2);
    sh->n = 300 * (unsigned)tu_stress_factor();
    tu_gate_init(&sh->gate, NW);
    pid_t p[NW];
    unsigned want[NW];
    for (int w = 0; w < NW; w++) {
        p[w] = tu_spawn(writer, (void *)(uintptr_t)w, w);
        want[w] = sh->n;
    }
    end_stream(ep, p, NW, want, NW);
}
END_TEST

START_TEST(heap_full)
{
    snprintf(what, sizeof what, "heap_full");
    am_ep_t *ep = stream_receiver(0, 0);
    sh->n = 8;
    sh->only_long = 1; /* of long_max / 2 .. long_max bytes: the heap holds 2 */
    tu_gate_init(&sh->gate, 1);
    pid_t p = tu_spawn(writer, (void *)(uintptr_t)0, 1);
    tu_sleep_ms(300); /* the heap fills; the writer backs off */
    unsigned want[1] = {sh->n};
    end_stream(ep, &p, 1, want, 1);
}
END_TEST

START_TEST(staged_killed)
{
    snprintf(what, sizeof what, "staged_killed");
    am_ep_t *ep = stream_receiver(0, 0);
    pid_t v[2];
    for (int i = 0; i < 2; i++)
        v[i] = tu_spawn(parked_writer, (void *)(uintptr_t)(i + 1), i);
    double end = tu_now_s() + 20;
    while (AO_load_acquire(&sh->parked) < 2 && tu_now_s() < end)
        am_wait(ep, 5);
    ck_assert_msg(AO_load(&sh->parked) == 2, "%s: %lu writers parked (%s)", what,
                  (unsigned long)AO_load(&sh->parked),
                  tu_first_error(&sh->err, "no error"));
    for (int i = 0; i < 2; i++) {
        kill(v[i], SIGKILL);
        tu_reap(v[i], 10);
        reclaim_writer((unsigned)i + 1);
    }
    sh->n = 30;
    tu_gate_init(&sh->gate, 1);
    pid_t p = tu_spawn(writer, (void *)(uintptr_t)0, 1);
    unsigned want[1] = {sh->n};
    end_stream(ep, &p, 1, want, 1);
}
END_TEST

/* A doomed writer stalls a millisecond holding each staged block, so that
 * most random kills find it holding one. */
static void stall_staged(enum am_hook where)
{
    if (where == AM_HOOK_LONG_STAGED)
        tu_sleep_ms(1);
    widen_hook(where);
}

/* A writer of long messages only, killed at a random moment by the parent. */
static void doomed_writer(void *arg)
{
    unsigned w = (unsigned)(uintptr_t)arg;
    am_ep_t *ep = sender_ep(w);
    am__claim_stall_hook = stall_staged;
    for (unsigned seq = 0;; seq++)
        if (send_mix(ep, w, seq, sh->long_max) < 0)
            break;
    for (;;)
        pause();
}

START_TEST(killed_at_random)
{
    snprintf(what, sizeof what, "killed_at_random");
    am_ep_t *ep = stream_receiver(0, 0);
    sh->only_long = 1;
    sh->n = 60 * (unsigned)tu_stress_factor();
    tu_gate_init(&sh->gate, 1);
    pid_t p = tu_spawn(writer, (void *)(uintptr_t)0, 0);
    for (int round = 0; round < 10; round++) {
        pid_t v[2];
        for (int i = 0; i < 2; i++)
            v[i] = tu_spawn(doomed_writer, (void *)(uintptr_t)(i + 1), i + 1);
        double until = tu_now_s() + 0.005 + (tu_mix32(round, 9) % 40) / 1000.0;
        while (tu_now_s() < until)
            am_wait(ep, 1);
        for (int i = 0; i < 2; i++) {
            kill(v[i], SIGKILL);
            tu_reap(v[i], 10);
        }
        rx.got[1] = rx.got[2] = 0; /* the dead writers' streams start again */
    }
    reclaim_writer(1);
    reclaim_writer(2);
    unsigned want[1] = {sh->n}; /* only writer 0's order counts: the dead
                                 * writers' streams are cut and begin again */
    end_stream(ep, &p, 1, want, 1);
}
END_TEST

/* ---- one-copy long messages into a region ---- */

#define REGION (1u << 20)
static const size_t at_off[] = {0, 4099, REGION - 100};
static const size_t at_len[] = {4096, 70000, 100};

static struct {
    void *base;
    unsigned got, bad;
} at;

static void on_at(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    static unsigned char want[70000];
    unsigned i = n == 1 ? a[0] : 0;
    tu_pattern(want, 500 + i, len);
    at.bad += i >= 3 || d != (char *)at.base + at_off[i] || len != at_len[i] ||
              memcmp(d, want, len) != 0;
    at.got++;
}

/* The client: -ENXIO before the region exists, then three one-copy sends,
 * and the sends that do not fit. */
static void at_client(void *arg)
{
    static unsigned char buf[70000];
    am_ep_t *ep = sender_ep(0);
    int rc = am_request_long_at(ep, 0, H_AT, buf, 10, 0, NULL, 0);
    if (rc != -ENXIO)
        tu_error(&sh->err, "before the region: %s, not ENXIO", am_err_name(rc));
    AO_store_release(&sh->done, 1);
    tu_wait_flag(&sh->parked, 1, 20); /* the region is there */
    for (uint32_t i = 0; i < 3; i++) {
        tu_pattern(buf, 500 + i, at_len[i]);
        if ((rc = am_request_long_at(ep, 0, H_AT, buf, at_len[i], at_off[i], &i, 1)) != 0)
            tu_error(&sh->err, "long_at %u: %s", i, am_strerror(rc));
    }
    if ((rc = am_request_long_at(ep, 0, H_AT, buf, 11, REGION - 10, NULL, 0)) != -EMSGSIZE)
        tu_error(&sh->err, "past the end: %s", am_err_name(rc));
    if ((rc = am_request_long_at(ep, 0, H_AT, buf, 0, REGION + 1, NULL, 0)) != -EMSGSIZE)
        tu_error(&sh->err, "offset past the end: %s", am_err_name(rc));
    tu_wait_flag(&sh->stop, 1, 60);
    am_ep_destroy(ep);
}

START_TEST(region)
{
    snprintf(what, sizeof what, "region");
    sh = tu_shared_alloc(sizeof *sh);
    init_shared(0, _i, SMALL_LONG);
    struct am_ep_opts o = opts_of(0, _i, 0);
    am_ep_t *ep = create_ok(sh->rcv, &o);
    am_set_handler(ep, H_AT, on_at);
    memset(&at, 0, sizeof at);
    pid_t p = tu_spawn(at_client, NULL, 1);
    tu_assert_flag(&sh->done, 1, 20, "the client's first send", what, &sh->err);
    ck_assert_int_eq(am_region_create(ep, REGION, &at.base), 0);
    void *again;
    ck_assert_int_eq(am_region_create(ep, REGION, &again), -EEXIST);
    AO_store_release(&sh->parked, 1);
    double end = tu_now_s() + 20;
    while (at.got < 3 && tu_now_s() < end)
        am_wait(ep, 5);
    AO_store_release(&sh->stop, 1);
    tu_assert_exit0(tu_reap(p, 20), "client", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(at.got == 3 && at.bad == 0, "%s: %u arrived, %u wrong", what, at.got,
                  at.bad);
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/shmam-%s:r", sh->rcv);
    struct stat stt;
    ck_assert_msg(_i != 0 || stat(path, &stt) == 0, "%s: no %s", what, path);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    ck_assert_msg(stat(path, &stt) != 0, "%s: %s left after destroy", what, path);
    tu_assert_clean(what);
    tu_shared_free(sh, sizeof *sh);
}
END_TEST

/* ---- long_at_4gib ---- */

#define HUGE_LEN ((1ull << 32) + 100) /* over what a packet's length holds */

static struct {
    const void *data;
    int reply_rc, requests, huge;
} big;

/* A short request: reply with the huge one-copy message; the huge one (if
 * it ever came) is only counted. */
static void on_big(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    if (n == 0) {
        big.huge++;
        return;
    }
    big.requests++;
    big.reply_rc = am_reply_long_at(t, H_AT, big.data, HUGE_LEN, 0, NULL, 0);
}

START_TEST(long_at_4gib)
{
    char name[AM_NAME_MAX];
    void *base;
    snprintf(what, sizeof what, "long_at of 2^32 + 100 bytes");
    tu_ep_name(name, sizeof name, "self", 0, 1);
    struct am_ep_opts o = opts_of(0, 1, 0);
    am_ep_t *ep = create_ok(name, &o);
    ck_assert_int_eq(am_ep_map(ep, 0, name), 0);
    ck_assert_int_eq(am_region_create(ep, HUGE_LEN + 4096, &base), 0);
    void *data =
        mmap(NULL, HUGE_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ck_assert_msg(data != MAP_FAILED, "%s: mmap: %s", what, strerror(errno));
    memset(&big, 0, sizeof big);
    big.data = data;
    am_set_handler(ep, H_AT, on_big);
    int rc = am_request_long_at(ep, 0, H_AT, data, HUGE_LEN, 0, NULL, 0);
    ck_assert_msg(rc == -EMSGSIZE, "%s: request gave %s, want EMSGSIZE", what,
                  am_err_name(rc));
    uint32_t one = 1;
    ck_assert_int_eq(am_request(ep, 0, H_AT, &one, 1), 0);
    for (int i = 0; i < 10; i++)
        am_poll(ep);
    ck_assert_msg(big.requests == 1 && big.reply_rc == -EMSGSIZE && big.huge == 0,
                  "%s: reply gave %s (want EMSGSIZE), %d huge message(s) delivered", what,
                  am_err_name(big.reply_rc), big.huge);
    munmap(data, HUGE_LEN);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_clean(what);
}
END_TEST

/* ---- corrupt long packets ---- */

static unsigned corrupt_runs;

static void on_any(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    corrupt_runs++;
}

/* Claim a packet in ep's own request queue (mapped as peer 0) and publish m. */
static void forge(am_ep_t *ep, struct am_msg *m)
{
    struct am_peer *peer = am__peer(ep, 0);
    struct am_claim_state c;
    am__claim_begin(&c, 0, peer->who);
    ck_assert_int_eq(am__claim_try(&ep->own, &ep->own.q[AM_REQUEST], &c), 1);
    am__publish(&ep->own.q[AM_REQUEST], &c, m);
}

START_TEST(corrupt)
{
    char name[AM_NAME_MAX];
    void *base;
    snprintf(what, sizeof what, "corrupt");
    tu_ep_name(name, sizeof name, "self", 0, 0);
    struct am_ep_opts o = opts_of(0, 0, 0);
    o.queue = "mpsc"; /* forges packets in the shared queue (check_chan: channels) */
    am_ep_t *ep = create_ok(name, &o);
    ck_assert_int_eq(am_ep_map(ep, 0, name), 0);
    ck_assert_int_eq(am_region_create(ep, 4096, &base), 0);
    am_set_handler(ep, H_LONG, on_any);
    struct am_msg bad[] = {
        {AM_LONG, H_LONG, NULL, 0, NULL, 64, 12345},      /* no such block */
        {AM_LONG, H_LONG, NULL, 0, NULL, 64, 1ull << 50}, /* outside the heap */
        {AM_LONG_AT, H_LONG, NULL, 0, NULL, 100, 4000},   /* past the region */
        {AM_LONG_AT, H_LONG, NULL, 0, NULL, 1, ~0ull},    /* offset past it */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        forge(ep, &bad[i]);
    struct am_msg flags = {AM_SHORT, H_LONG, NULL, 0, NULL, 0, 0};
    forge(ep, &flags);
    ep->own.q[AM_REQUEST].packets[(ep->head[AM_REQUEST] + 4) & 127].flags = 7;
    char data[100] = "intact";
    ck_assert_int_eq(am_request_long(ep, 0, H_LONG, data, sizeof data, NULL, 0), 0);
    corrupt_runs = 0;
    for (int i = 0; i < 10; i++)
        am_poll(ep);
    ck_assert_msg(corrupt_runs == 1 && am_ep_bad_packets(ep) == 5,
                  "%s: %u handlers ran (want 1), %lu bad packets (want 5)", what,
                  corrupt_runs, am_ep_bad_packets(ep));
    ck_assert_msg(heap_live(ep, AM_REQUEST) == 0, "%s: a block left live", what);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
}
END_TEST

/* ---- misuse ---- */

static struct {
    int req_rc, second_rc, null_rc, replies;
    size_t zero_len;
} mu;

static void mu_request(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    mu.req_rc = am_request_long(am_token_ep(t), 0, H_LONG, "x", 1, NULL, 0);
    mu.null_rc = am_reply_long(t, H_REPLY, NULL, 5, NULL, 0);
    am_reply_long(t, H_REPLY, NULL, 0, NULL, 0);
    mu.second_rc = am_reply_long(t, H_REPLY, "y", 1, NULL, 0);
}

static void mu_reply(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    mu.replies++;
    mu.zero_len = len;
}

START_TEST(misuse)
{
    char name[AM_NAME_MAX];
    snprintf(what, sizeof what, "misuse");
    tu_ep_name(name, sizeof name, "self", 0, 1);
    struct am_ep_opts o = opts_of(0, 1, 0);
    am_ep_t *ep = create_ok(name, &o);
    ck_assert_int_eq(am_ep_map(ep, 0, name), 0);
    am_set_handler(ep, H_LONG, mu_request);
    am_set_handler(ep, H_REPLY, mu_reply);
    ck_assert_int_eq(am_request_long(ep, 0, H_LONG, NULL, 5, NULL, 0), -EINVAL);
    ck_assert_int_eq(am_request_long(ep, 0, H_LONG, NULL, 0, NULL, 0), 0);
    mu.zero_len = 99;
    for (int i = 0; i < 10; i++)
        am_poll(ep);
    ck_assert_msg(
        mu.req_rc == -EDEADLK && mu.null_rc == -EINVAL && mu.second_rc == -EALREADY,
        "%s: request in handler %s, NULL data %s, second reply %s", what,
        am_err_name(mu.req_rc), am_err_name(mu.null_rc), am_err_name(mu.second_rc));
    ck_assert_msg(mu.replies == 1 && mu.zero_len == 0, "%s: %d replies, len %zu", what,
                  mu.replies, mu.zero_len);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
}
END_TEST

static Suite *long_suite(void)
{
    Suite *s = suite_create("long");
    TCase *tc = tcase_create("long");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, sizes, 0, tu_n_algs());
    tcase_add_loop_test(tc, fifo_mixed, 0, tu_n_algs());
    tcase_add_test(tc, heap_full);
    tcase_add_test(tc, staged_killed);
    tcase_add_test(tc, killed_at_random);
    tcase_add_loop_test(tc, region, 0, 2);
    tcase_add_test(tc, long_at_4gib);
    tcase_add_test(tc, corrupt);
    tcase_add_test(tc, misuse);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("lg");
    return tu_run_suite(long_suite(), "check_long");
}
