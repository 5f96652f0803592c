/*
 * gex_testam.c - a testam-like AM benchmark on the GASNet-EX layer, and the
 * same traffic on shmam's native calls in the same job: ping-pong (request,
 * reply, repeat) and flood (a window of requests, each replied) of Short,
 * Medium and Long across sizes, between rank pairs (0,1), (2,3), ...; an odd
 * rank out idles in the barriers.  Each row runs REPS pairs of blocks, the
 * layer's and native, back to back in ABBA order, and prints
 *   testam,PATTERN,KIND,BYTES,ITERS,layer_us,X,native_us,Y,ratio,R
 * X and Y the medians of the blocks (microseconds per round trip for
 * ping-pong, per message for flood), R the median of the pairs' ratios
 * layer / native (each pair ran back to back, so drifts of a busy machine
 * cancel more than between medians); from
 * the sender; every reply is counted and its size checked, and a count that
 * is off prints FAIL and exits non-zero.  --quick: few iterations (tests);
 * a last argument PATTERN,KIND,BYTES runs that row alone.
 */
#include <gasnetex.h>
#include <gasnet_tools.h>
#include <shmam.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEG (2u << 20)
#define REPS 8
enum { K_SHORT, K_MEDIUM, K_LONG };
static const char *const kind_name[] = {"short", "medium", "long"};
/* native shmam handler ids, apart from the layer's 1..12 */
enum { N_REQ = 100, N_REP = 110 };

static gex_TM_t tm;
static gex_Rank_t me, np, peer;
static char *seg, *peer_seg, *buf;
static am_ep_t *ep;
static volatile unsigned long replies;
static unsigned long bad;
static size_t cur_n;

/* ---- the layer ---- */
static void g_req_short(gex_Token_t t)
{
    gex_AM_ReplyShort0(t, 201, 0);
}
static void g_rep(gex_Token_t t)
{
    replies++;
}
static void g_req_medium(gex_Token_t t, void *b, size_t n)
{
    gex_AM_ReplyMedium0(t, 203, b, n, GEX_EVENT_NOW, 0);
}
static void g_req_long(gex_Token_t t, void *b, size_t n)
{
    gex_AM_ReplyLong0(t, 203, b, n, peer_seg, GEX_EVENT_NOW, 0);
}
static void g_rep_data(gex_Token_t t, void *b, size_t n)
{
    bad += n != cur_n;
    replies++;
}

/* ---- native shmam ---- */
static void n_req(am_token_t *t, const uint32_t *a, int na, void *d, size_t len)
{
    int kind = (int)a[0];
    if (kind == K_SHORT)
        am_reply(t, N_REP, a, 1);
    else if (kind == K_MEDIUM)
        len <= AM_MAX_BULK ? am_reply_bulk(t, N_REP, d, len, a, 1)
                           : am_reply_long(t, N_REP, d, len, a, 1);
    else
        am_reply_long_at(t, N_REP, d, len, 0, a, 1);
}
static void n_rep(am_token_t *t, const uint32_t *a, int na, void *d, size_t len)
{
    bad += len != cur_n && a[0] != K_SHORT;
    replies++;
}

static void wait_replies(unsigned long want)
{
    if (want)
        GASNET_BLOCKUNTIL(replies >= want);
}

static void send_layer(int kind, size_t n)
{
    if (kind == K_SHORT)
        gex_AM_RequestShort0(tm, peer, 200, 0);
    else if (kind == K_MEDIUM)
        gex_AM_RequestMedium0(tm, peer, 202, buf, n, GEX_EVENT_NOW, 0);
    else
        gex_AM_RequestLong0(tm, peer, 204, buf, n, peer_seg, GEX_EVENT_NOW, 0);
}

static void send_native(int kind, size_t n)
{
    uint32_t a = (uint32_t)kind;
    if (kind == K_SHORT)
        am_request(ep, peer, N_REQ, &a, 1);
    else if (kind == K_MEDIUM)
        n <= AM_MAX_BULK ? am_request_bulk(ep, peer, N_REQ, buf, n, &a, 1)
                         : am_request_long(ep, peer, N_REQ, buf, n, &a, 1);
    else
        am_request_long_at(ep, peer, N_REQ, buf, n, 0, &a, 1);
}

/* One block: iters ping-pongs, or iters messages in windows; us per op. */
static double block(int native, int flood, int kind, size_t n, unsigned long iters)
{
    const unsigned long window = 64;
    replies = 0;
    cur_n = n;
    gasnett_tick_t t0 = gasnett_ticks_now();
    for (unsigned long i = 0; i < iters;) {
        unsigned long k = flood ? (iters - i < window ? iters - i : window) : 1;
        for (unsigned long j = 0; j < k; j++)
            native ? send_native(kind, n) : send_layer(kind, n);
        i += k;
        wait_replies(i);
    }
    double us = (double)gasnett_ticks_to_ns(gasnett_ticks_now() - t0) / 1e3 / (double)iters;
    if (replies != iters) {
        printf("testam FAIL: %lu replies of %lu\n", replies, iters);
        bad++;
    }
    return us;
}

/* The median of REPS values (sorts them). */
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v)
{
    qsort(v, REPS, sizeof *v, cmp);
    return (v[REPS / 2 - 1] + v[REPS / 2]) / 2;
}

static const char *only; /* "PATTERN,KIND,BYTES": that row alone */

static void row(int flood, int kind, size_t n, unsigned long iters)
{
    char name[64];
    snprintf(name, sizeof name, "%s,%s,%zu", flood ? "flood" : "pingpong", kind_name[kind],
             n);
    if (only && strcmp(only, name) != 0)
        return;
    double t[2][REPS], ratio[REPS];
    int sender = me % 2 == 0 && peer < np;
    cur_n = n;
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    for (int rep = 0; rep < REPS; rep++) /* ABBA: layer first, then native first */
        for (int step = 0; step < 2; step++) {
            int native = step ^ (rep & 1);
            if (sender)
                t[native][rep] = block(native, flood, kind, n, iters);
            gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
        }
    if (!sender)
        return;
    for (int rep = 0; rep < REPS; rep++)
        ratio[rep] = t[0][rep] / t[1][rep]; /* each pair ran back to back */
    printf("testam,%s,%s,%zu,%lu,layer_us,%.3f,native_us,%.3f,ratio,%.3f\n",
           flood ? "flood" : "pingpong", kind_name[kind], n, iters, median(t[0]),
           median(t[1]), median(ratio));
}

int main(int argc, char **argv)
{
    gex_Client_t client;
    gex_EP_t gep;
    gex_Segment_t segment;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (gex_Client_Init(&client, &gep, &tm, "GEX_TESTAM", &argc, &argv, 0) != GASNET_OK)
        return 2;
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    only = argc > 1 + quick ? argv[1 + quick] : NULL;
    unsigned long iters = quick ? 200 : 10000;
    me = gex_TM_QueryRank(tm);
    np = gex_TM_QuerySize(tm);
    peer = np == 1 ? me : me ^ 1; /* alone: to itself (the layer's CPU cost, no peer) */
    gex_Segment_Attach(&segment, tm, SEG);
    seg = gex_Segment_QueryAddr(segment);
    if (peer < np)
        gex_Segment_QueryBound(tm, peer, (void **)&peer_seg, NULL, NULL);
    buf = calloc(1, SEG);
    gex_AM_Entry_t h[] = {
        {200, (gex_AM_Fn_t)g_req_short, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL,
         "rs"},
        {201, (gex_AM_Fn_t)g_rep, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 0, NULL, "ps"},
        {202, (gex_AM_Fn_t)g_req_medium, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 0, NULL,
         "rm"},
        {203, (gex_AM_Fn_t)g_rep_data, GEX_FLAG_AM_MEDLONG | GEX_FLAG_AM_REPLY, 0, NULL,
         "pd"},
        {204, (gex_AM_Fn_t)g_req_long, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REQUEST, 0, NULL,
         "rl"},
    };
    gex_EP_RegisterHandlers(gep, h, sizeof h / sizeof h[0]);
    ep = gex_shmam_endpoint();
    am_set_handler(ep, N_REQ, n_req);
    am_set_handler(ep, N_REP, n_rep);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    static const size_t sizes[] = {8, 512, 4096, 8192, 65536};
    for (int flood = 0; flood < 2; flood++) {
        row(flood, K_SHORT, 0, iters);
        for (int kind = K_MEDIUM; kind <= K_LONG; kind++)
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
                row(flood, kind, sizes[i], sizes[i] > 8192 ? iters / 4 : iters);
    }
    if (bad)
        printf("rank %u: testam FAIL (%lu bad)\n", (unsigned)me, bad);
    else if (me == 0)
        printf("testam done\n");
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_exit(bad ? 1 : 0);
}
