/*
 * gex_check.c - a GASNet-EX program that checks libgasnet-shmam, run by
 * tests/check_gasnet.c under shmamrun -n 2 and -n 3.  Written against
 * gasnetex.h alone.  Modes (argv[1]):
 *   am       every AM kind (Short, Medium, Long; request and its reply),
 *            every argument count 0..16, payloads at every limit's
 *            boundary (bulk/heap switch, gex_AM_Max*, the segment's end,
 *            zero bytes), negotiated payload (Prepare/Commit, _v2, Cancel):
 *            every byte and argument checked at both ends; rank r sends to
 *            r + 1 and serves r - 1
 *   imm      GEX_FLAG_IMMEDIATE into a target that does not poll: refused
 *            once its queue is full, and what went arrives once, in order;
 *            IMMEDIATE replies into a requester that does not poll: refused
 *            once its reply queue is full, the ones that went arrive
 *   rma      put/get (blocking, NB, NBI, Val) at every alignment 0..15 and
 *            many lengths into a target that does not poll
 *   barrier  rounds of gasnet_barrier, notify/wait and gex_Coll_BarrierNB
 *            ordering RMA puts, gex_Coll_BroadcastNB from every root, two at
 *            once (gex_Event_WaitAll), barrier_try under GASNET_WAIT_BLOCK,
 *            a named barrier refused, error names, handler-safe locks
 *   exit N   the last rank calls gasnet_exit(N) while the others wait
 * Each rank prints "rank R: MODE ok (N checks)" or "rank R: MODE FAIL ..."
 * and the job ends with gasnet_exit (0 if every check held on that rank).
 */
#include <gasnetex.h>
#include <gasnet_coll.h>
#include <gasnet_tools.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEG (4u << 20)
#define REQ_AREA 0u
#define REP_AREA (2u << 20)
#define FLAG_OFF (SEG - 64)
#define READY_OFF (SEG - 128) /* imm: the target polls no more */

static gex_TM_t tm;
static gex_Rank_t me, np, next, prev;
static char *seg;
static unsigned long checks, bad;
static const char *mode;

#define CHECK(c, ...)                                                                      \
    do {                                                                                   \
        checks++;                                                                          \
        if (!(c)) {                                                                        \
            if (bad++ < 10) {                                                              \
                printf("rank %u: %s FAIL: ", (unsigned)me, mode);                          \
                printf(__VA_ARGS__);                                                       \
                printf("\n");                                                              \
            }                                                                              \
        }                                                                                  \
    } while (0)

static gex_AM_Arg_t arg_of(unsigned seed, unsigned i)
{
    return (gex_AM_Arg_t)(0x9E3779B9u * (i + 1) + seed * 2654435761u);
}
static unsigned char byte_of(unsigned seed, size_t i)
{
    return (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}
static void fill(void *p, unsigned seed, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)p)[i] = byte_of(seed, i);
}
static int same(const void *p, unsigned seed, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i] != byte_of(seed, i))
            return 0;
    return 1;
}

/* ---- am ---- */

enum { K_SHORT, K_MEDIUM, K_LONG };
static volatile int replied;
static struct {
    int kind;
    unsigned nargs, seed;
    size_t n, dest_off;
} cur;
static char *src_buf, *rep_buf;
static gex_AM_Index_t hidx[2][3]; /* [reply][kind]: + nargs is the entry for that count */

#define REP_OFF(off) (REP_AREA + (off) % 4096)

/* Handlers are declared with 16 arguments and registered once per count
 * (gex_nargs), and read only that many (the count comes from the entry,
 * through gex_Token_Info): the x86-64 and AArch64 calling conventions let a
 * function read fewer arguments than declared without harm. */
#define ARGS16                                                                             \
    gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4,   \
        gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8,                \
        gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12,             \
        gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15
#define LIST16                                                                             \
    {                                                                                      \
        a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15               \
    }
#define R16(r)                                                                             \
    r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],       \
        r[13], r[14], r[15]

static void got(gex_Token_t t, int kind, void *buf, size_t n, const gex_AM_Arg_t *a)
{
    gex_Token_Info_t info;
    gex_TI_t ti = gex_Token_Info(t, &info, GEX_TI_ALL);
    unsigned nargs = info.gex_entry->gex_nargs;
    int is_req = info.gex_is_req;
    const char *what = is_req ? "request" : "reply";
    CHECK((ti & GEX_TI_ALL) == GEX_TI_ALL, "token info %x", (unsigned)ti);
    CHECK(info.gex_srcrank == (is_req ? prev : next), "%s from %u", what,
          (unsigned)info.gex_srcrank);
    CHECK((int)info.gex_is_long == (kind == K_LONG), "%s is_long %d", what,
          (int)info.gex_is_long);
    CHECK(nargs == cur.nargs, "%s entry of %u args, want %u", what, nargs, cur.nargs);
    unsigned seed = cur.seed + (is_req ? 0 : 1);
    int ok = 1;
    for (unsigned i = 0; i < nargs; i++)
        ok &= a[i] == arg_of(seed, i);
    CHECK(ok, "%s kind %d: its %u arguments wrong", what, kind, nargs);
    if (kind != K_SHORT) {
        CHECK(n == cur.n, "%s kind %d nargs %u: %zu bytes, want %zu", what, kind, nargs, n,
              cur.n);
        CHECK(n != cur.n || n == 0 || same(buf, seed, n),
              "%s kind %d nargs %u: %zu bytes wrong", what, kind, nargs, n);
    }
    if (kind == K_LONG)
        CHECK(buf == seg + (is_req ? cur.dest_off : REP_OFF(cur.dest_off)),
              "%s Long at +%td", what, (char *)buf - seg);
    if (kind == K_MEDIUM)
        CHECK(((uintptr_t)buf & 7) == 0, "Medium buffer not 8-byte aligned");
    if (!is_req) {
        replied = 1;
        return;
    }
    gex_AM_Arg_t r[16];
    for (unsigned i = 0; i < 16; i++)
        r[i] = arg_of(seed + 1, i);
    gex_AM_Index_t h = (gex_AM_Index_t)(hidx[1][kind] + nargs);
    fill(rep_buf, seed + 1, cur.n);
    void *pb;
    gex_Segment_QueryBound(tm, prev, &pb, NULL, NULL);
    int rc;
    if (kind == K_SHORT)
        rc = nargs == 16 ? gex_AM_ReplyShort(t, h, 0, R16(r))
                         : gex_shmam_ReplyShort(t, h, 0, nargs, R16(r));
    else if (kind == K_MEDIUM)
        rc = nargs == 2
                 ? gex_AM_ReplyMedium2(t, h, rep_buf, cur.n, GEX_EVENT_NOW, 0, r[0], r[1])
                 : gex_shmam_ReplyMedium(t, h, rep_buf, cur.n, GEX_EVENT_NOW, 0, nargs,
                                         R16(r));
    else
        rc = gex_shmam_ReplyLong(t, h, rep_buf, cur.n, (char *)pb + REP_OFF(cur.dest_off),
                                 GEX_EVENT_NOW, 0, nargs, R16(r));
    CHECK(rc == 0, "reply kind %d nargs %u returned %d", kind, nargs, rc);
}

static void h_short(gex_Token_t t, ARGS16)
{
    gex_AM_Arg_t a[16] = LIST16;
    got(t, K_SHORT, NULL, 0, a);
}
static void h_medium(gex_Token_t t, void *buf, size_t n, ARGS16)
{
    gex_AM_Arg_t a[16] = LIST16;
    got(t, K_MEDIUM, buf, n, a);
}
static void h_long(gex_Token_t t, void *buf, size_t n, ARGS16)
{
    gex_AM_Arg_t a[16] = LIST16;
    got(t, K_LONG, buf, n, a);
}

static gex_AM_Entry_t entries[2 * 3 * 17];

static void register_all(void)
{
    int k = 0;
    static const gex_Flags_t cat[3] = {GEX_FLAG_AM_SHORT, GEX_FLAG_AM_MEDIUM,
                                       GEX_FLAG_AM_LONG};
    static const gex_AM_Fn_t fn[3] = {(gex_AM_Fn_t)h_short, (gex_AM_Fn_t)h_medium,
                                      (gex_AM_Fn_t)h_long};
    for (int rep = 0; rep < 2; rep++)
        for (int kind = 0; kind < 3; kind++)
            for (unsigned n = 0; n <= 16; n++, k++) {
                gex_AM_Entry_t *e = &entries[k];
                /* the first of each run at a fixed index, the rest "don't care" */
                e->gex_index = n == 0 ? (gex_AM_Index_t)(128 + k) : 0;
                e->gex_fnptr = fn[kind];
                e->gex_flags = cat[kind] | (rep ? GEX_FLAG_AM_REPLY : GEX_FLAG_AM_REQUEST);
                e->gex_nargs = n;
                e->gex_name = "gex_check";
            }
    /* fixed indexes 128 + k for n == 0; zero entries get the highest free,
     * in table order: so register the fixed ones, then fix up the others */
    for (int i = 0; i < k; i++)
        if (entries[i].gex_index == 0)
            entries[i].gex_index = (gex_AM_Index_t)(128 + i);
    int rc = gex_EP_RegisterHandlers(gex_TM_QueryEP(tm), entries, (size_t)k);
    CHECK(rc == GASNET_OK, "register: %d", rc);
    for (int rep = 0; rep < 2; rep++)
        for (int kind = 0; kind < 3; kind++)
            hidx[rep][kind] = entries[(rep * 3 + kind) * 17].gex_index;
    gex_System_SetVerboseErrors(0);
    gex_AM_Entry_t dup = entries[0], any = {0,
                                            (gex_AM_Fn_t)h_short,
                                            GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST,
                                            0,
                                            NULL,
                                            "any"};
    CHECK(gex_EP_RegisterHandlers(gex_TM_QueryEP(tm), &dup, 1) == GASNET_ERR_BAD_ARG,
          "a taken index registered again");
    CHECK(gex_EP_RegisterHandlers(gex_TM_QueryEP(tm), &any, 1) == GASNET_OK &&
              any.gex_index == 255,
          "a don't-care entry got index %u, want 255", (unsigned)any.gex_index);
    gex_System_SetVerboseErrors(1);
}

/* One request to next, and its reply; the same test runs on every rank at
 * once (each serves prev), between barriers. */
static void am_test(int kind, unsigned nargs, size_t n, size_t dest_off)
{
    static unsigned seed = 1;
    cur.kind = kind;
    cur.nargs = nargs;
    cur.n = n;
    cur.dest_off = dest_off;
    cur.seed = seed += 2;
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gex_AM_Arg_t a[16];
    for (unsigned i = 0; i < 16; i++)
        a[i] = arg_of(cur.seed, i);
    fill(src_buf, cur.seed, n);
    void *nb;
    gex_Segment_QueryBound(tm, next, &nb, NULL, NULL);
    char *dest = (char *)nb + dest_off;
    gex_AM_Index_t h = (gex_AM_Index_t)(hidx[0][kind] + nargs);
    replied = 0;
    int rc;
    gex_Event_t lc = GEX_EVENT_NO_OP;
    if (kind == K_SHORT && nargs == 0)
        rc = gex_AM_RequestShort0(tm, next, h, 0);
    else if (kind == K_SHORT && nargs == 16)
        rc = gex_AM_RequestShort(tm, next, h, 0, R16(a));
    else if (kind == K_SHORT)
        rc = gex_shmam_RequestShort(tm, next, h, 0, nargs, R16(a));
    else if (kind == K_MEDIUM && nargs == 3)
        rc = gex_AM_RequestMedium3(tm, next, h, src_buf, n, GEX_EVENT_NOW, 0, a[0], a[1],
                                   a[2]);
    else if (kind == K_MEDIUM) {
        rc = gex_shmam_RequestMedium(tm, next, h, src_buf, n, &lc, 0, nargs, R16(a));
        CHECK(rc != 0 || lc == GEX_EVENT_INVALID, "Medium's lc event not complete");
    } else if (kind == K_LONG && nargs == 9)
        rc = gex_AM_RequestLong9(tm, next, h, src_buf, n, dest, GEX_EVENT_NOW, 0, a[0],
                                 a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
    else
        rc = gex_shmam_RequestLong(tm, next, h, src_buf, n, dest, GEX_EVENT_GROUP, 0, nargs,
                                   R16(a));
    CHECK(rc == 0, "request kind %d nargs %u n %zu returned %d", kind, nargs, n, rc);
    if (rc == 0)
        GASNET_BLOCKUNTIL(replied);
    gex_NBI_Wait(GEX_EC_AM, 0);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
}

/* Negotiated payload: a Medium prepared into our buffer and into the
 * layer's, a Long prepared with a dest, a _v2 commit, a cancel. */
static void np_test(void)
{
    static unsigned seed = 100001;
    size_t maxm = gex_AM_MaxRequestMedium(tm, next, NULL, 0, 4);
    for (int client = 0; client < 2; client++) {
        cur = (__typeof__(cur)){K_MEDIUM, 4, seed += 2, 777, 0};
        gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
        gex_AM_SrcDesc_t sd =
            gex_AM_PrepareRequestMedium(tm, next, client ? src_buf : NULL, 100, maxm * 2,
                                        client ? GEX_EVENT_NOW : NULL, 0, 4);
        CHECK(sd != GEX_AM_SRCDESC_NO_OP, "prepare refused");
        CHECK(gex_AM_SrcDescSize(sd) >= 100 && gex_AM_SrcDescSize(sd) <= maxm,
              "prepared %zu", gex_AM_SrcDescSize(sd));
        CHECK(!client || gex_AM_SrcDescAddr(sd) == src_buf, "client buffer not kept");
        fill(gex_AM_SrcDescAddr(sd), cur.seed, 777);
        replied = 0;
        gex_AM_Arg_t a[4] = {arg_of(cur.seed, 0), arg_of(cur.seed, 1), arg_of(cur.seed, 2),
                             arg_of(cur.seed, 3)};
        if (client)
            gex_AM_CommitRequestMedium4(sd, (gex_AM_Index_t)(hidx[0][K_MEDIUM] + 4), 777,
                                        a[0], a[1], a[2], a[3]);
        else
            CHECK(gex_AM_CommitRequestMedium_v2(sd, (gex_AM_Index_t)(hidx[0][K_MEDIUM] + 4),
                                                777, GEX_FLAG_IMMEDIATE, a[0], a[1], a[2],
                                                a[3]) == 0 ||
                      (gex_AM_CommitRequestMedium4_v2(
                           sd, (gex_AM_Index_t)(hidx[0][K_MEDIUM] + 4), 777, 0, a[0], a[1],
                           a[2], a[3]),
                       1),
                  "commit_v2");
        GASNET_BLOCKUNTIL(replied);
        gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    }
    /* A Medium prepared into the layer's room with arguments beyond the
     * packet's (the payload's prefix carries them). */
    cur = (__typeof__(cur)){K_MEDIUM, 12, seed += 2, 3000, 0};
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gex_AM_SrcDesc_t md =
        gex_AM_PrepareRequestMedium(tm, next, NULL, 3000, 3000, NULL, 0, 12);
    CHECK(md && gex_AM_SrcDescSize(md) == 3000, "medium prepare, 12 arguments");
    fill(gex_AM_SrcDescAddr(md), cur.seed, 3000);
    gex_AM_Arg_t ma[12];
    for (unsigned i = 0; i < 12; i++)
        ma[i] = arg_of(cur.seed, i);
    replied = 0;
    gex_AM_CommitRequestMedium12(md, (gex_AM_Index_t)(hidx[0][K_MEDIUM] + 12), 3000, ma[0],
                                 ma[1], ma[2], ma[3], ma[4], ma[5], ma[6], ma[7], ma[8],
                                 ma[9], ma[10], ma[11]);
    GASNET_BLOCKUNTIL(replied);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    cur = (__typeof__(cur)){K_LONG, 12, seed += 2, 5000, 12345};
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    void *nb;
    gex_Segment_QueryBound(tm, next, &nb, NULL, NULL);
    gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestLong(tm, next, NULL, 5000, 5000,
                                                    (char *)nb + 12345, NULL, 0, 12);
    CHECK(sd && gex_AM_SrcDescSize(sd) == 5000, "long prepare");
    fill(gex_AM_SrcDescAddr(sd), cur.seed, 5000);
    gex_AM_Arg_t a[16];
    for (unsigned i = 0; i < 16; i++)
        a[i] = arg_of(cur.seed, i);
    replied = 0;
    gex_AM_CommitRequestLong(sd, (gex_AM_Index_t)(hidx[0][K_LONG] + 12), 5000,
                             (char *)nb + 12345, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                             a[7], a[8], a[9], a[10], a[11]);
    GASNET_BLOCKUNTIL(replied);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    sd = gex_AM_PrepareRequestMedium(tm, next, NULL, 10, 10, NULL, 0, 0);
    CHECK(sd && gex_AM_CancelRequestMedium(sd, 0) == GASNET_OK, "cancel");
    sd = gex_AM_PrepareRequestMedium(tm, next, NULL, 10, 10, NULL, 0, 0);
    CHECK(sd != GEX_AM_SRCDESC_NO_OP, "a prepare after a cancel");
    gex_AM_CancelRequestMedium(sd, 0);
}

static void mode_am(void)
{
    register_all();
    src_buf = malloc(SEG);
    rep_buf = malloc(SEG);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    CHECK(gex_AM_MaxArgs() == 16, "MaxArgs");
    CHECK(gex_AM_LUBRequestMedium() >= 8192 && gex_AM_LUBReplyMedium() >= 8192,
          "LUB medium");
    for (unsigned nargs = 0; nargs <= 16; nargs++) {
        size_t pre = nargs > 7 ? ((nargs - 7) * 4 + 7) / 8 * 8 : 0;
        size_t maxm = gex_AM_MaxRequestMedium(tm, next, GEX_EVENT_NOW, 0, nargs);
        size_t maxl = gex_AM_MaxRequestLong(tm, next, GEX_EVENT_NOW, 0, nargs);
        CHECK(maxm >= 8192 && maxm >= gex_AM_LUBRequestMedium(), "MaxRequestMedium %zu",
              maxm);
        CHECK(maxl >= gex_AM_LUBRequestLong(), "MaxRequestLong %zu", maxl);
        CHECK(gex_AM_MaxReplyMedium(tm, next, NULL, 0, nargs) == maxm, "MaxReplyMedium");
        am_test(K_SHORT, nargs, 0, 0);
        size_t msizes[] = {0, 1, 7, 8192 - pre, 8192 - pre + 1, 65536, maxm};
        for (size_t i = 0; i < sizeof msizes / sizeof msizes[0]; i++)
            am_test(K_MEDIUM, nargs, msizes[i], 0);
        size_t lmax = maxl < (2u << 20) - 4096 ? maxl : 0;
        size_t lsizes[] = {0, 1, 8191, 8192, 8193, 100000, lmax};
        for (size_t i = 0; i < sizeof lsizes / sizeof lsizes[0]; i++)
            am_test(K_LONG, nargs, lsizes[i], (size_t)(nargs * 13 + i) % 64);
        /* the segment's last bytes, and zero bytes at its very end */
        am_test(K_LONG, nargs, 4096, SEG - 4096);
        am_test(K_LONG, nargs, 0, SEG);
    }
    /* bounds refused at the sender, nothing sent */
    void *nb;
    gex_Segment_QueryBound(tm, next, &nb, NULL, NULL);
    gex_System_SetVerboseErrors(0);
    CHECK(gex_AM_RequestLong0(tm, next, hidx[0][K_LONG], src_buf, 2, (char *)nb + SEG - 1,
                              GEX_EVENT_NOW, 0) == GASNET_ERR_BAD_ARG,
          "a Long past the segment's end accepted");
    size_t maxm0 = gex_AM_MaxRequestMedium(tm, next, GEX_EVENT_NOW, 0, 0);
    gex_System_SetVerboseErrors(0);
    CHECK(gex_AM_RequestMedium0(tm, next, hidx[0][K_MEDIUM], src_buf, maxm0 + 1,
                                GEX_EVENT_NOW, 0) == GASNET_ERR_BAD_ARG,
          "a Medium over the max accepted");
    gex_System_SetVerboseErrors(1);
    np_test();
}

/* ---- imm: a target that does not poll ---- */

static volatile unsigned imm_got, imm_order_bad, imm_total = ~0u;
static void h_imm(gex_Token_t t, gex_AM_Arg_t seq)
{
    imm_order_bad += (unsigned)seq != imm_got;
    imm_got++;
}
static void h_imm_medium(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t seq)
{
    h_imm(t, seq);
}
static void h_imm_end(gex_Token_t t, gex_AM_Arg_t total)
{
    imm_total = (unsigned)total;
}

/* Phase 2: replies with GEX_FLAG_IMMEDIATE into a requester that does not
 * poll: refused once its reply queue is full; the ones that went arrive. */
enum { IMM_REQS = 400 };
static volatile unsigned rq_handled, rq_replied, rq_refused, rp_got;
static void h_imm_req(gex_Token_t t, gex_AM_Arg_t seq)
{
    rq_handled++;
    int rc = gex_AM_ReplyShort1(t, 204, GEX_FLAG_IMMEDIATE, seq);
    CHECK(rc == 0 || rc == 1, "IMMEDIATE reply returned %d", rc);
    if (rc == 0)
        rq_replied++;
    else
        rq_refused++;
}
static void h_imm_rep(gex_Token_t t, gex_AM_Arg_t seq)
{
    rp_got++;
}

static void imm_replies(void)
{
    volatile uint64_t *flag = (volatile uint64_t *)(seg + FLAG_OFF);
    *flag = 0;
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    if (me == 0) { /* requests that never poll, then wait for rank 1's word */
        for (unsigned sent = 0; sent < IMM_REQS;)
            if (gex_AM_RequestShort1(tm, 1, 203, GEX_FLAG_IMMEDIATE, (gex_AM_Arg_t)sent) ==
                0)
                sent++;
            else
                gasnett_sched_yield();
        while (*flag == 0)
            gasnett_sched_yield();
        gasnett_local_rmb();
        unsigned went = (unsigned)(*flag - 1);
        GASNET_BLOCKUNTIL(rp_got >= went);
        CHECK(rp_got == went, "%u replies arrived, %u went", rp_got, went);
        CHECK(went < IMM_REQS, "no IMMEDIATE reply was refused (%u went)", went);
        printf("rank 0: imm: %u of %u IMMEDIATE replies went\n", went, IMM_REQS);
    } else if (me == 1) {
        GASNET_BLOCKUNTIL(rq_handled == IMM_REQS);
        CHECK(rq_replied + rq_refused == IMM_REQS, "replies %u + refused %u", rq_replied,
              rq_refused);
        void *nb;
        gex_Segment_QueryBound(tm, 0, &nb, NULL, NULL);
        uint64_t word = (uint64_t)rq_replied + 1;
        gex_RMA_PutBlocking(tm, 0, (char *)nb + FLAG_OFF, &word, sizeof word, 0);
    }
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
}

static void mode_imm(void)
{
    if (np < 2)
        return; /* needs a target that is not the sender */
    gex_AM_Entry_t e[] = {
        {200, (gex_AM_Fn_t)h_imm, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL, "imm"},
        {201, (gex_AM_Fn_t)h_imm_end, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL,
         "end"},
        {202, (gex_AM_Fn_t)h_imm_medium, GEX_FLAG_AM_MEDLONG | GEX_FLAG_AM_REQUEST, 1, NULL,
         "m"},
        {203, (gex_AM_Fn_t)h_imm_req, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL,
         "rq"},
        {204, (gex_AM_Fn_t)h_imm_rep, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 1, NULL, "rp"},
    };
    gex_EP_RegisterHandlers(gex_TM_QueryEP(tm), e, 5);
    volatile uint64_t *flag = (volatile uint64_t *)(seg + FLAG_OFF);
    volatile uint64_t *ready = (volatile uint64_t *)(seg + READY_OFF);
    *flag = 0, *ready = 0;
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    if (me == 1) {        /* the target: no poll until rank 0's put says so */
        uint64_t one = 1; /* and rank 0 floods only once we poll no more (the
                           * barrier's last polls may still drain the queue) */
        void *nb0;
        gex_Segment_QueryBound(tm, 0, &nb0, NULL, NULL);
        gex_RMA_PutBlocking(tm, 0, (char *)nb0 + READY_OFF, &one, sizeof one, 0);
        while (*flag == 0)
            gasnett_sched_yield();
        gasnett_local_rmb();
        GASNET_BLOCKUNTIL(imm_total != ~0u);
        CHECK(imm_got == imm_total, "%u of %u IMMEDIATE messages arrived", imm_got,
              imm_total);
        CHECK(imm_order_bad == 0, "%u out of order", imm_order_bad);
    } else if (me == 0) {
        static char buf[16384];
        void *nb;
        gex_Segment_QueryBound(tm, 1, &nb, NULL, NULL);
        unsigned sent = 0;
        int refused = 0;
        while (*ready == 0)
            gasnett_sched_yield();
        for (unsigned i = 0; i < 1000000 && !refused; i++) {
            int rc =
                gex_AM_RequestShort1(tm, 1, 200, GEX_FLAG_IMMEDIATE, (gex_AM_Arg_t)sent);
            CHECK(rc == 0 || rc == 1, "IMMEDIATE Short returned %d", rc);
            if (rc == 0)
                sent++;
            refused = rc == 1;
        }
        CHECK(refused, "IMMEDIATE never refused after %u sends", sent);
        /* the queue is full: every kind is refused, nothing sent */
        CHECK(gex_AM_RequestMedium1(tm, 1, 202, buf, 100, GEX_EVENT_NOW, GEX_FLAG_IMMEDIATE,
                                    (gex_AM_Arg_t)sent) == 1,
              "IMMEDIATE Medium into a full queue sent");
        CHECK(gex_AM_RequestMedium1(tm, 1, 202, buf, sizeof buf, GEX_EVENT_NOW,
                                    GEX_FLAG_IMMEDIATE, (gex_AM_Arg_t)sent) == 1,
              "IMMEDIATE heap Medium into a full queue sent");
        CHECK(gex_AM_RequestLong1(tm, 1, 202, buf, 64, (char *)nb + 4096, GEX_EVENT_NOW,
                                  GEX_FLAG_IMMEDIATE, (gex_AM_Arg_t)sent) == 1,
              "IMMEDIATE Long into a full queue sent");
        CHECK(gex_AM_RequestShort(tm, 1, 200, GEX_FLAG_IMMEDIATE, (gex_AM_Arg_t)sent) == 1,
              "IMMEDIATE Short into a full queue sent");
        uint64_t one = 1;
        CHECK(gex_RMA_PutBlocking(tm, 1, (char *)nb + FLAG_OFF, &one, sizeof one, 0) == 0,
              "put");
        gex_AM_RequestShort1(tm, 1, 201, 0, (gex_AM_Arg_t)sent); /* waits for room */
        printf("rank 0: imm: %u IMMEDIATE sends went before one was refused\n", sent);
    }
    imm_replies();
}

/* ---- rma: every alignment, target not polling ---- */

static void mode_rma(void)
{
    static const size_t lens[] = {0,  1,  2,  3,  4,  5,  7,  8,   9,
                                  15, 16, 17, 31, 63, 64, 65, 255, 4099};
    enum { NL = sizeof lens / sizeof lens[0], SLOT = 8192 };
    char *buf = malloc(SLOT), *back = malloc(SLOT);
    void *nb;
    gex_Segment_QueryBound(tm, next, &nb, NULL, NULL);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    unsigned slot = 0;
    for (unsigned al = 0; al < 16; al++)
        for (unsigned li = 0; li < NL; li++, slot++) {
            size_t off = (size_t)slot * SLOT + al, n = lens[li];
            unsigned seed = slot * 3 + me;
            fill(buf, seed, n);
            char *dst = (char *)nb + off;
            int how = slot % 3, rc = 0;
            if (how == 0)
                rc = gex_RMA_PutBlocking(tm, next, dst, buf, n, 0);
            else if (how == 1) {
                gex_Event_t lc;
                gex_Event_t ev = gex_RMA_PutNB(tm, next, dst, buf, n, &lc, 0);
                gex_Event_Wait(lc);
                gex_Event_Wait(ev);
            } else {
                gex_NBI_BeginAccessRegion(0);
                rc = gex_RMA_PutNBI(tm, next, dst, buf, n, GEX_EVENT_DEFER, 0);
                gex_Event_t ev = gex_NBI_EndAccessRegion(0);
                gex_Event_Wait(ev);
            }
            CHECK(rc == 0, "put of %zu at +%zu: %d", n, off, rc);
            memset(back, 0, n + 1);
            if (how == 0)
                rc = gex_RMA_GetBlocking(tm, back, next, dst, n, 0);
            else if (how == 1)
                gex_Event_Wait(gex_RMA_GetNB(tm, back, next, dst, n, 0));
            else {
                rc = gex_RMA_GetNBI(tm, back, next, dst, n, 0);
                gex_NBI_Wait(GEX_EC_GET, 0);
            }
            CHECK(rc == 0 && same(back, seed, n) && back[n] == 0,
                  "get of %zu at alignment %u differs", n, al);
        }
    /* values of every width */
    char *vdst = (char *)nb + (size_t)slot * SLOT;
    for (size_t w = 1; w <= 8; w *= 2) {
        gex_RMA_Value_t v = 0x0102030405060708ull >> (8 * (8 - w));
        CHECK(gex_RMA_PutBlockingVal(tm, next, vdst + w * 16 + 1, v, w, 0) == 0,
              "put val %zu", w);
        CHECK(gex_RMA_GetBlockingVal(tm, next, vdst + w * 16 + 1, w, 0) == v, "get val %zu",
              w);
    }
    gex_System_SetVerboseErrors(0);
    CHECK(gex_RMA_PutBlocking(tm, next, (char *)nb + SEG - 3, buf, 4, 0) ==
              GASNET_ERR_BAD_ARG,
          "a put past the segment's end accepted");
    gex_System_SetVerboseErrors(1);
    /* after a barrier, what prev put is in our segment */
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    slot = 0;
    for (unsigned al = 0; al < 16; al++)
        for (unsigned li = 0; li < NL; li++, slot++)
            CHECK(same(seg + (size_t)slot * SLOT + al, slot * 3 + prev, lens[li]),
                  "prev's put of %zu at alignment %u not seen after the barrier", lens[li],
                  al);
}

/* ---- barrier and broadcast ---- */

static void mode_barrier(void)
{
    void *bases[64];
    for (gex_Rank_t r = 0; r < np; r++)
        gex_Segment_QueryBound(tm, r, &bases[r], NULL, NULL);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    for (uint64_t round = 1; round <= 60; round++) {
        for (gex_Rank_t r = 0; r < np; r++)
            gex_RMA_PutBlocking(tm, r, (uint64_t *)bases[r] + me, &round, sizeof round, 0);
        if (round % 3 == 0)
            gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
        else if (round % 3 == 1) {
            gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
            CHECK(gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS) == GASNET_OK,
                  "wait");
        } else
            gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
        int ok = 1;
        for (gex_Rank_t r = 0; r < np; r++)
            ok &= ((volatile uint64_t *)seg)[r] == round;
        CHECK(ok, "round %u: a rank's put not seen after the barrier", (unsigned)round);
        /* nobody writes the next round before everyone checked this one */
        gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    }
    static const size_t sizes[] = {0, 1, 8192, 100000, 3u << 20};
    char *src = malloc(3u << 20), *dst = malloc(3u << 20);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (gex_Rank_t root = 0; root < np; root++) {
            unsigned seed = (unsigned)(i * 10 + root);
            fill(src, seed, sizes[i]);
            memset(dst, 0, sizes[i]);
            gex_Event_t ev = gex_Coll_BroadcastNB(tm, root, dst, src, sizes[i], 0);
            gex_Event_Wait(ev);
            CHECK(same(dst, seed, sizes[i]), "broadcast of %zu from %u", sizes[i],
                  (unsigned)root);
        }
    /* two broadcasts at once, from two roots, waited for together */
    char *dst2 = malloc(100000);
    gex_Rank_t r1 = np - 1;
    fill(src, 77, 100000);
    gex_Event_t evs[2] = {gex_Coll_BroadcastNB(tm, 0, dst, src, 100000, 0),
                          gex_Coll_BroadcastNB(tm, r1, dst2, src, 50000, 0)};
    gex_Event_WaitAll(evs, 2, 0);
    CHECK(evs[0] == GEX_EVENT_INVALID && evs[1] == GEX_EVENT_INVALID,
          "WaitAll left events");
    CHECK(same(dst, 77, 100000) && same(dst2, 77, 50000), "two broadcasts at once");
    /* sleeping waits, split-phase tries, a named barrier refused */
    CHECK(gasnet_set_waitmode(GASNET_WAIT_BLOCK) == GASNET_OK, "waitmode");
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    int rc;
    while ((rc = gasnet_barrier_try(0, GASNET_BARRIERFLAG_ANONYMOUS)) ==
           GASNET_ERR_NOT_READY)
        gex_shmam_wait_step();
    CHECK(rc == GASNET_OK, "barrier_try: %d", rc);
    gasnet_set_waitmode(GASNET_WAIT_SPIN);
    gex_System_SetVerboseErrors(0);
    CHECK(gasnet_barrier(5, 0) == GASNET_ERR_BAD_ARG, "a named barrier was not refused");
    gex_System_SetVerboseErrors(1);
    CHECK(!strcmp(gasnet_ErrorName(GASNET_ERR_NOT_READY), "GASNET_ERR_NOT_READY") &&
              strlen(gasnet_ErrorDesc(GASNET_ERR_BAD_ARG)) > 0,
          "error names");
    static gex_HSL_t hsl = GEX_HSL_INITIALIZER;
    gex_HSL_Lock(&hsl);
    CHECK(gex_HSL_Trylock(&hsl) != GASNET_OK, "an HSL taken twice");
    gex_HSL_Unlock(&hsl);
    CHECK(gex_HSL_Trylock(&hsl) == GASNET_OK, "a free HSL refused");
    gex_HSL_Unlock(&hsl);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
}

int main(int argc, char **argv)
{
    gex_Client_t client;
    gex_EP_t ep;
    gex_Segment_t segment;
    mode = argc > 1 ? argv[1] : "am";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (gex_Client_Init(&client, &ep, &tm, "GEX_CHECK", &argc, &argv, 0) != GASNET_OK)
        return 2;
    me = gex_TM_QueryRank(tm);
    np = gex_TM_QuerySize(tm);
    next = (me + 1) % np;
    prev = (me + np - 1) % np;
    CHECK(me == gex_System_QueryJobRank() && np == gex_System_QueryJobSize(),
          "job rank/size");
    CHECK(gex_Segment_Attach(&segment, tm, SEG) == GASNET_OK, "attach");
    seg = gex_Segment_QueryAddr(segment);
    CHECK(gex_Segment_QuerySize(segment) == SEG, "segment size");
    for (gex_Rank_t r = 0; r < np; r++) {
        void *owner = NULL, *local = NULL;
        uintptr_t size = 0;
        gex_Event_t ev = gex_EP_QueryBoundSegmentNB(tm, r, &owner, &local, &size, 0);
        gex_Event_Wait(ev);
        CHECK(owner && local && size == SEG && (r != me || (owner == seg && local == seg)),
              "bound segment of %u", (unsigned)r);
    }
    if (!strcmp(mode, "am"))
        mode_am();
    else if (!strcmp(mode, "imm"))
        mode_imm();
    else if (!strcmp(mode, "rma"))
        mode_rma();
    else if (!strcmp(mode, "barrier"))
        mode_barrier();
    else if (!strcmp(mode, "exit")) {
        int code = argc > 2 ? atoi(argv[2]) : 0;
        gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
        if (me == np - 1) {
            printf("rank %u: exit %d\n", (unsigned)me, code);
            gasnet_exit(code);
        }
        GASNET_BLOCKUNTIL(0); /* until the exit comes */
    } else {
        printf("unknown mode %s\n", mode);
        gasnet_exit(2);
    }
    if (bad)
        printf("rank %u: %s FAIL (%lu of %lu checks)\n", (unsigned)me, mode, bad, checks);
    else
        printf("rank %u: %s ok (%lu checks)\n", (unsigned)me, mode, checks);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_exit(bad ? 1 : 0);
}
