/*
 * clumps.c - clusters of SMPs: shmam's round trip and one-way bandwidth
 * within a node and between nodes under the hybrid transport (libshmam-mpi),
 * beside the same pair through shared memory alone and MPI's own ping-pong
 * and bandwidth between the same processes, all in one run.
 *
 *   mpiexec -n 3 -bind-to user:0,1,1 build/bench/clumps [--iters N]
 *       [--warmup W] [--rounds R] [--sizes LIST] [--bytes B] [--max-msgs M]
 *       [--nap-us U] [--quick] [--timeout S] [--header] [--verbose]
 *
 * Layout.  Three ranks in nodes of two (SHMAM_NODE_SIZE, which this program
 * sets to 2 when it is unset and refuses otherwise): ranks 0 and 1 are node
 * 0, rank 2 node 1.  Bound as above, rank 0 has CPU 0 and ranks 1 and 2 share
 * CPU 1, so each measured pair (0-1 within the node, 0-2 across) has two
 * CPUs to itself while the third rank sleeps.  Rank 0 drives; ranks 1 and 2
 * serve.
 *
 * Paths ("kinds"), each from rank 0 to one partner:
 *   intra  rank 1 through the endpoint am_init made: shared memory, in a
 *          process whose polls also give the transport its turns;
 *   plain  rank 1 through named endpoints (am_ep_create, am_ep_map), which
 *          have no MPI path: the pair as under shmamrun, in the same processes;
 *   cross  rank 2 through the am_init endpoint: one MPI message per active
 *          message (a long one as a header and its data);
 *   mpi    rank 2, MPI's own: MPI_Send/MPI_Recv and MPI_Isend windows on a
 *          duplicate of MPI_COMM_WORLD (so that nothing here can match the
 *          transport's messages).
 * Round trip (rtt_<kind>): a request with one argument (4 bytes), whose
 * handler replies with it; rank 0 busy-polls until the reply has run.  MPI: a
 * 4-byte MPI_Send answered by the same 4 bytes (mpi_pingpong's rtt_4B).  Each
 * round runs W warm-up trips, then N/R timed ones, per kind.
 * Bandwidth (bw_<kind>_MBps_<n>, n = 64 B .. 4 MB), two streams for shmam
 * per path (intra, plain, cross) and osu_bw for MPI:
 *   copy    bench/bw.c's copy stream (am_request_bulk up to 8 KB,
 *           am_request_long above; the handler copies each message into a
 *           ring of 64 private buffers; a credit, a reply, every 16th message
 *           and the last, at most 64 messages beyond the last credit);
 *   longat  one copy (kinds longat_intra, longat_plain, longat_cross): every
 *           size with am_request_long_at into slot s mod S of the partner's
 *           region (am_region_create once per endpoint, before serving: 64
 *           slots of the largest size, at most 64 MB unless 4 slots need
 *           more, so S = 64 up to 1 MB and 16 at 4 MB); the data lands in
 *           place, as MPI's receive into a user buffer, and the handler
 *           checks it there without copying; the window is the S slots, a
 *           credit every S/4th message (16 of 64, as the copy stream), so a
 *           slot is written again only after its message's credit.  Across
 *           nodes the transport still copies data of up to 256 KB into its
 *           staging ring (up to 8 KB: its send slot) and data of up to 64 KB
 *           out of its receive buffer (net/mpi_send.c, mpi_recv.c): one copy
 *           for the application, not on the wire;
 *   mpi     bench/mpi/bw.c's osu_bw windows (64 MPI_Isend into 64 pre-posted
 *           MPI_Irecv, then a one-byte ack), receiving into the same 64
 *           buffers the copy stream copies into.
 * The same counts and buffers: count = B / n messages, between 64 and M.  A
 * stream's figure is its bytes over the time from the first send to the last
 * credit or ack, MB/s (10^6 B).  long_max: SHMAM_LONG_MAX if set (larger
 * sizes are then left out of the copy streams), else the largest size, at
 * least 1 MiB, set before am_init.
 *
 * Estimator (bench/common/stat.h).  One unmeasured warm-up round (every
 * stream at a tenth of its count, at least 64 messages, every byte checked;
 * W trips per round trip), then R rounds (default 5), in which every phase
 * starts with the same untimed part (the first stream after the other
 * partner had the shared CPU runs up to a fifth slower, its caches cold,
 * and which kind that is alternates with the ABBA order).  A round runs every
 * round trip kind, then every (size, kind) stream, sizes ascending and the
 * kinds of one size next to each other (stream_order), the whole list in
 * ABBA order (reversed in odd rounds).  A round's figure is its mean; a row
 * is the median over the rounds, its spread the lowest and highest round;
 * the ratios are per-round quotients (in-run): rtt_intra_vs_plain (what the
 * MPI path costs the shared-memory one), rtt_cross_vs_mpi,
 * bw_intra_vs_plain_<n>, bw_cross_vs_mpi_<n> (copy streams: one copy more
 * than osu_bw's), bw_longat_intra_vs_plain_<n> and bw_longat_cross_vs_mpi_<n>
 * (one-copy streams, like with like).
 *
 * Phases.  Before each phase rank 0 sends its partner a command on the
 * control communicator and waits for its "ready", so that no figure includes
 * a wake-up; the partner serves the phase (a known count of messages) and
 * goes back to waiting for a command.  A waiting partner tests for it with
 * MPI_Test and sleeps U us (--nap-us, default 1000) between tests, so the
 * rank outside the measured pair costs the CPU it shares with a measured
 * rank about 1000 short wake-ups a second.  (am_wait on an endpoint with a
 * transport polls and naps 50 us: 20,000 wake-ups a second; and commands
 * through MPI keep the endpoints' traffic exactly the measured messages.)
 *
 * Checks.  Every message from rank 0 to a partner, active message or MPI,
 * carries the next number of one sequence per partner (an argument; MPI: the
 * payload and the tag modulo 32760); the partner checks each, and on the
 * hybrid endpoint the token's source (0).  Replies and credits are checked
 * by rank 0 (their number; the source on the hybrid endpoint).  Stream
 * messages carry the sequence in their first and last 4 bytes, checked on
 * the receiver's copy (one-copy: in place, and the data must be at its slot
 * of the endpoint's region); in the warm-up round every byte is a pattern of
 * the sequence, checked as it arrived.  At the end each partner reports the
 * messages and bytes it took and its errors and dropped packets; rank 0
 * prints rows only if they match what it sent and are 0, else says FAILED
 * and exits 1 (MPI_Abort), as after 60 s without progress in a shmam wait
 * or --timeout seconds (600) in all.
 *
 * Rows: bench clumps, procs 3, pinned 1 when rank 0 has a CPU of its own and
 * ranks 1 and 2 are each bound to one CPU; impl the endpoint's claim algorithm
 * or queue kind for shmam's figures and ratios, mpich for MPI's:
 *   rtt_intra, rtt_plain, rtt_cross, rtt_mpi                        us
 *   rtt_intra_vs_plain, rtt_cross_vs_mpi                            ratio
 *   bw_intra_MBps_<n>, bw_plain_MBps_<n>, bw_cross_MBps_<n>,
 *   bw_mpi_MBps_<n>, bw_longat_intra_MBps_<n>,
 *   bw_longat_plain_MBps_<n>, bw_longat_cross_MBps_<n>              MB/s
 *   bw_intra_vs_plain_<n>, bw_cross_vs_mpi_<n>,
 *   bw_longat_intra_vs_plain_<n>, bw_longat_cross_vs_mpi_<n>        ratio
 * iters: round trips or messages of all measured rounds.
 */
#include <errno.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shmam.h"
#include "common/am_algs.h"
#include "common/am_harness.h"
#include "common/measure.h"
#include "common/stat.h"

enum { H_PING = 1, H_PONG, H_DATA, H_CREDIT };
enum { F_VERIFY = 1, F_CREDIT = 2, F_INPLACE = 4 }; /* a stream message's flags (args[1]) */
enum { APP_SLOTS = 64, WINDOW = 64, CREDIT_EVERY = 16, MIN_MSGS = 64 };
#define REGION_CAP ((size_t)64 << 20) /* a region's bytes, unless 4 slots need more */
enum { MAX_SIZES = 16, MAX_ROUNDS = 51, MAX_PHASES = 128 };
enum { OP_RTT, OP_BW, OP_END };                            /* commands */
enum { TAG_CMD = 32760, TAG_READY, TAG_ACK, TAG_SUMMARY }; /* data tags stay below */

enum kind { K_INTRA, K_PLAIN, K_CROSS, K_MPI, K_AT_INTRA, K_AT_PLAIN, K_AT_CROSS, NKINDS };

/* A path, and for shmam's streams how they send: the copy stream (bulk, then
 * long) or the one-copy stream (long_at into the partner's region). */
static const struct {
    const char *name; /* rtt_<name>, bw_<name>_MBps_<n> */
    int partner;      /* the rank rank 0 talks to */
    int path;         /* K_INTRA, K_PLAIN, K_CROSS or K_MPI: the endpoint, or MPI */
    int at;           /* streams only, with am_request_long_at */
} kinds[NKINDS] = {{"intra", 1, K_INTRA, 0},        {"plain", 1, K_PLAIN, 0},
                   {"cross", 2, K_CROSS, 0},        {"mpi", 2, K_MPI, 0},
                   {"longat_intra", 1, K_INTRA, 1}, {"longat_plain", 1, K_PLAIN, 1},
                   {"longat_cross", 2, K_CROSS, 1}};

/* The streams of one size, in this order: a partner's kinds together, and
 * each pair of a ratio next to each other (the whole list runs ABBA). */
static const int stream_order[NKINDS] = {K_INTRA, K_PLAIN, K_AT_PLAIN, K_AT_INTRA,
                                         K_CROSS, K_MPI,   K_AT_CROSS};

/* A phase of a round: a round trip kind (size -1) or a stream (size index). */
struct phase {
    int kind, size;
};

/* A command, rank 0 to a partner: op, kind, bytes, messages, flags. */
enum { C_OP, C_KIND, C_BYTES, C_COUNT, C_FLAGS, NCMD };

/* Each partner's totals, sent to rank 0 at the end. */
enum { T_MSGS, T_BYTES, T_SEQ, T_STAMP, T_DATA, T_SOURCE, T_PLACE, T_PACKETS, NTOT };

static am_ep_t *ep;    /* the job's endpoint (am_init): intra and cross */
static am_ep_t *plain; /* ranks 0 and 1: named endpoints without MPI */
static MPI_Comm ctl;   /* commands, MPI's own figures, totals */
static int rank, pinned, header, verbose;
static long iters = 100000, warmup = 1000, rounds = 5, nap_us = 1000, timeout_s = 600;
static long bytes_per = 32L << 20, max_msgs = 20000;
static size_t sizes[MAX_SIZES] = {64,    256,   1024,   4096,    8192,
                                  16384, 65536, 262144, 1048576, 4194304};
static int nsizes = 10;
static size_t long_max;
static unsigned yield_after[3] = {256, 256, 256}; /* per partner */
static char *app;                                 /* this rank's 64 buffers */
static size_t region_bytes;                       /* of every region (at_region_size) */
static char *ep_region, *plain_region;            /* partners: their endpoints' regions */
static struct phase plan[MAX_PHASES];
static int nplan;
static double fig[MAX_ROUNDS][MAX_PHASES]; /* us or MB/s per round and phase */

/* Rank 0: per partner, the last sequence number sent, messages and bytes
 * sent; replies handled and the latest credit (of the phase's partner). */
static int cur; /* the phase's partner */
static uint32_t seq[3], credited;
static unsigned long sent_msgs[3], sent_bytes[3], replies;
/* Partners: the next sequence number, what was taken, what was wrong. */
static uint32_t expect = 1;
static unsigned long rx_msgs, rx_bytes, bad_seq, bad_stamp, bad_data, bad_source, bad_place;

/* A failure takes the whole job down (bm_on_fail). */
static void abort_job(void)
{
    int started = 0;
    MPI_Initialized(&started);
    if (started)
        MPI_Abort(MPI_COMM_WORLD, 1);
}

static size_t round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static char *app_slot(uint32_t s, size_t n)
{
    return app + (size_t)(s % APP_SLOTS) * round64(n);
}

/* The one-copy ring of messages of n bytes in a partner's region: 64 slots
 * (the application's ring, the MPI receiver's 64 buffers), fewer where 64
 * would pass region_bytes (4 MB: 16).  It is also the stream's window. */
static uint32_t at_slots(size_t n)
{
    size_t k = region_bytes / round64(n);
    return k < APP_SLOTS ? (uint32_t)k : APP_SLOTS;
}

/* Where one-copy message s of n bytes goes in the region. */
static size_t at_off(uint32_t s, size_t n)
{
    return (size_t)(s % at_slots(n)) * round64(n);
}

static int seq_tag(uint32_t s)
{
    return (int)(s & 0x7fff) % TAG_CMD;
}

/* Byte b of message s in the warm-up's full pattern (bench/mpi/bw.c's). */
static unsigned char pattern(uint32_t s, size_t b)
{
    return (unsigned char)((s * 0x9e3779b9u) >> (b % 4 * 8)) ^ (unsigned char)(b * 131);
}

/* Sender: the sequence number in the first and last 4 bytes, and with full
 * the pattern between them. */
static void stamp(char *p, size_t n, uint32_t s, int full)
{
    for (size_t b = 4; full && b + 4 < n; b++)
        p[b] = (char)pattern(s, b);
    bm_stamp(p, n, s);
}

static int patterned(const char *p, size_t n, uint32_t s)
{
    for (size_t b = 4; b + 4 < n; b++)
        if ((unsigned char)p[b] != pattern(s, b))
            return 0;
    return 1;
}

/* ---- partners (ranks 1 and 2) ---- */

/* Partner: message s has arrived (any path); is it the next one? */
static void arrived(uint32_t s, size_t len)
{
    bad_seq += s != expect;
    expect = s + 1;
    rx_msgs++;
    rx_bytes += len;
}

/* A message on the job's endpoint must come from rank 0, a reply to rank 0
 * from the phase's partner. */
static void check_source(am_token_t *t, unsigned want)
{
    if (am_token_ep(t) == ep && am_token_source(t) != want) {
        if (rank != 0)
            bad_source++;
        else
            bm_die("a reply from the wrong rank", 0);
    }
}

static void on_ping(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    check_source(t, 0);
    arrived(nargs == 1 ? a[0] : 0, 4);
    bm_check(am_reply(t, H_PONG, a, nargs), "am_reply");
}

/* (seq, flags): the data is copied out into the ring and its copy's stamps
 * checked; with F_INPLACE (a one-copy stream) it must be in its slot of the
 * endpoint's region, and its stamps are checked there, no copy made; with
 * F_VERIFY every byte as it arrived. */
static void on_data(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    check_source(t, 0);
    if (nargs != 2 || len < 8) {
        bad_seq++;
        return;
    }
    arrived(a[0], len);
    if (a[1] & F_VERIFY)
        bad_data += !patterned(d, len, a[0]);
    if (a[1] & F_INPLACE) {
        char *region = am_token_ep(t) == plain ? plain_region : ep_region;
        bad_place += !region || (char *)d != region + at_off(a[0], len);
        bad_stamp += !bm_stamped(d, len, a[0]);
    } else {
        char *to = app_slot(a[0], len);
        memcpy(to, d, len);
        bad_stamp += !bm_stamped(to, len, a[0]);
    }
    if (a[1] & F_CREDIT)
        bm_check(am_reply(t, H_CREDIT, a, 1), "am_reply");
}

/* Partner: the next command, waiting in MPI_Test and naps of nap_us. */
static void await_cmd(long *c)
{
    MPI_Request rq;
    int done = 0;
    struct timespec nap = {nap_us / 1000000, nap_us % 1000000 * 1000};
    MPI_Irecv(c, NCMD, MPI_LONG, 0, TAG_CMD, ctl, &rq);
    for (;;) {
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&nap, NULL);
    }
}

/* Partner: echo n 4-byte MPI messages. */
static void mpi_echo(long n)
{
    for (long i = 0; i < n; i++) {
        uint32_t in = 0;
        MPI_Status st;
        int got;
        MPI_Recv(&in, 1, MPI_UINT32_T, 0, MPI_ANY_TAG, ctl, &st);
        MPI_Get_count(&st, MPI_BYTE, &got);
        bad_seq += st.MPI_TAG != seq_tag(expect) || got != 4;
        arrived(in, 4);
        MPI_Send(&in, 1, MPI_UINT32_T, 0, st.MPI_TAG, ctl);
    }
}

/* Partner: count messages of n bytes in osu_bw's windows of 64, each
 * window's messages checked, then acknowledged. */
static void mpi_sink(size_t n, long count, int full)
{
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];
    for (long w = 0; w < count / WINDOW; w++) {
        for (int j = 0; j < WINDOW; j++)
            MPI_Irecv(app + (size_t)j * round64(n), (int)n, MPI_BYTE, 0, MPI_ANY_TAG, ctl,
                      &req[j]);
        MPI_Waitall(WINDOW, req, st);
        for (int j = 0; j < WINDOW; j++) {
            const char *p = app + (size_t)j * round64(n);
            int got;
            MPI_Get_count(&st[j], MPI_BYTE, &got);
            uint32_t s = expect;
            bad_seq += st[j].MPI_TAG != seq_tag(s) || (size_t)got != n;
            bad_stamp += !bm_stamped(p, n, s);
            bad_data += full && !patterned(p, n, s);
            arrived(s, n);
        }
        char ack = 0;
        MPI_Send(&ack, 1, MPI_CHAR, 0, TAG_ACK, ctl);
    }
}

static am_ep_t *ep_of(int kind)
{
    return kinds[kind].path == K_PLAIN ? plain : ep;
}

/* Partner: serve commands until the end, then send rank 0 the totals. */
static void serve(void)
{
    unsigned long due = 0;
    for (;;) {
        long c[NCMD];
        await_cmd(c);
        if (c[C_OP] == OP_END)
            break;
        MPI_Send(c, 1, MPI_LONG, 0, TAG_READY, ctl);
        if (c[C_KIND] == K_MPI && c[C_OP] == OP_RTT)
            mpi_echo(c[C_COUNT]);
        else if (c[C_KIND] == K_MPI)
            mpi_sink((size_t)c[C_BYTES], c[C_COUNT], (int)c[C_FLAGS]);
        else
            bm_await(ep_of((int)c[C_KIND]), yield_after[rank], &rx_msgs,
                     due + (unsigned long)c[C_COUNT], "waiting for a message");
        due = rx_msgs;
    }
    unsigned long bad = am_ep_bad_packets(ep) + (plain ? am_ep_bad_packets(plain) : 0);
    unsigned long t[NTOT] = {rx_msgs,  rx_bytes,   bad_seq,   bad_stamp,
                             bad_data, bad_source, bad_place, bad};
    MPI_Send(t, NTOT, MPI_UNSIGNED_LONG, 0, TAG_SUMMARY, ctl);
}

/* ---- rank 0, the driver ---- */

static void on_pong(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    check_source(t, (unsigned)cur);
    if (nargs != 1 || a[0] != seq[cur])
        bm_die("a reply out of sequence", 0);
    replies++;
}

static void on_credit(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    check_source(t, (unsigned)cur);
    if (nargs != 1 || (uint32_t)(a[0] - credited) > (uint32_t)(seq[cur] - credited))
        bm_die("a credit for a message never sent", 0);
    credited = a[0];
}

/* The partner of kind k, told what to do; returns when it is ready. */
static void command(int op, int k, size_t n, long count, int flags)
{
    long c[NCMD] = {op, k, (long)n, count, flags};
    cur = kinds[k].partner;
    MPI_Send(c, NCMD, MPI_LONG, cur, TAG_CMD, ctl);
    MPI_Recv(c, 1, MPI_LONG, cur, TAG_READY, ctl, MPI_STATUS_IGNORE);
}

/* n AM round trips to partner cur through e; the mean in us. */
static double am_trips(am_ep_t *e, long n)
{
    double t0 = bm_now_us();
    for (long i = 0; i < n; i++) {
        uint32_t s = ++seq[cur];
        bm_check(am_request(e, (unsigned)cur, H_PING, &s, 1), "am_request");
        bm_await(e, yield_after[cur], &replies, replies + 1, "waiting for a reply");
    }
    sent_msgs[cur] += (unsigned long)n, sent_bytes[cur] += 4 * (unsigned long)n;
    return n > 0 ? (bm_now_us() - t0) / (double)n : 0;
}

/* n MPI round trips of 4 bytes to partner cur; the mean in us. */
static double mpi_trips(long n)
{
    double t0 = bm_now_us();
    for (long i = 0; i < n; i++) {
        uint32_t s = ++seq[cur], in = 0;
        MPI_Status st;
        int got;
        MPI_Send(&s, 1, MPI_UINT32_T, cur, seq_tag(s), ctl);
        MPI_Recv(&in, 1, MPI_UINT32_T, cur, MPI_ANY_TAG, ctl, &st);
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (in != s || got != 4 || st.MPI_TAG != seq_tag(s))
            bm_die("an MPI echo out of sequence", 0);
    }
    sent_msgs[cur] += (unsigned long)n, sent_bytes[cur] += 4 * (unsigned long)n;
    return n > 0 ? (bm_now_us() - t0) / (double)n : 0;
}

/* A round trip phase of kind k: w warm-up trips, then n timed; us. */
static double rtt_phase(int k, long w, long n)
{
    command(OP_RTT, k, 4, w + n, 0);
    if (k == K_MPI) {
        mpi_trips(w);
        return mpi_trips(n);
    }
    am_trips(ep_of(k), w);
    return am_trips(ep_of(k), n);
}

/* Poll e until at most `ahead` messages are beyond the last credit. */
static void await_credit(am_ep_t *e, uint32_t ahead)
{
    struct bm_wait w = BM_WAIT(yield_after[cur], "waiting for a credit");
    while ((uint32_t)(seq[cur] - credited) > ahead)
        bm_wait_poll(&w, e);
}

/* Send message a[0] of n bytes at p through e: one-copy (at) into its slot
 * of the partner's region, else bulk to 8 KB and long above. */
static void am_send(am_ep_t *e, int at, const char *p, size_t n, const uint32_t *a)
{
    unsigned to = (unsigned)cur;
    if (at)
        bm_check(am_request_long_at(e, to, H_DATA, p, n, at_off(a[0], n), a, 2),
                 "am_request_long_at");
    else if (n <= AM_MAX_BULK)
        bm_check(am_request_bulk(e, to, H_DATA, p, n, a, 2), "am_request_bulk");
    else
        bm_check(am_request_long(e, to, H_DATA, p, n, a, 2), "am_request_long");
}

/* A stream of count messages of n bytes through e (at: one-copy);
 * MB/s from the first send until the last credit is back.  The window is 64
 * messages beyond the last credit, a credit every 16th; a one-copy stream's
 * is its ring of S = at_slots(n) region slots, a credit every S/4th, so that
 * message s overwrites the slot of message s - S only once that is credited
 * (its handler has run). */
static double am_stream(am_ep_t *e, int at, size_t n, long count, int full)
{
    if (count == 0)
        return 0;
    uint32_t window = at ? at_slots(n) : WINDOW;
    long every = at ? window / 4 : CREDIT_EVERY;
    credited = seq[cur]; /* every earlier message has been taken */
    int64_t t0 = bm_now_ns();
    for (long i = 0; i < count; i++) {
        await_credit(e, window - 1);
        uint32_t s = ++seq[cur];
        char *p = app_slot(s, n);
        stamp(p, n, s, full);
        int last = i + 1 == count || (i + 1) % every == 0;
        uint32_t a[2] = {s, (full ? F_VERIFY : 0) | (last ? F_CREDIT : 0) |
                                (at ? F_INPLACE : 0)};
        am_send(e, at, p, n, a);
    }
    await_credit(e, 0);
    sent_msgs[cur] += (unsigned long)count, sent_bytes[cur] += (unsigned long)count * n;
    return (double)n * (double)count / ((double)(bm_now_ns() - t0) / 1e3);
}

/* osu_bw: count / 64 windows of 64 MPI_Isend of n bytes, each acknowledged;
 * MB/s from the first send to the last ack. */
static double mpi_stream(size_t n, long count, int full)
{
    if (count == 0)
        return 0;
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];
    int64_t t0 = bm_now_ns();
    for (long w = 0; w < count / WINDOW; w++) {
        for (int j = 0; j < WINDOW; j++) {
            uint32_t s = ++seq[cur];
            char *p = app + (size_t)j * round64(n);
            stamp(p, n, s, full);
            MPI_Isend(p, (int)n, MPI_BYTE, cur, seq_tag(s), ctl, &req[j]);
        }
        MPI_Waitall(WINDOW, req, st);
        char ack;
        MPI_Recv(&ack, 1, MPI_CHAR, cur, TAG_ACK, ctl, MPI_STATUS_IGNORE);
    }
    sent_msgs[cur] += (unsigned long)count, sent_bytes[cur] += (unsigned long)count * n;
    return (double)n * (double)count / ((double)(bm_now_ns() - t0) / 1e3);
}

/* MPI's count: whole windows of 64, at least one. */
static long windows_of(int k, long c)
{
    return k == K_MPI ? (c / WINDOW > 0 ? c / WINDOW : 1) * WINDOW : c;
}

/* Messages of a stream of n bytes: B / n, between 64 and M (MPI: in whole
 * windows); in the warm-up round a tenth of that, at least 64. */
static long count_of(int k, size_t n, int warm)
{
    long c = bytes_per / (long)n;
    c = c < max_msgs ? c : max_msgs;
    c = c > MIN_MSGS ? c : MIN_MSGS;
    if (warm)
        c = c / 10 > MIN_MSGS ? c / 10 : MIN_MSGS;
    return windows_of(k, c);
}

static double stream(int k, size_t n, long count, int full)
{
    return k == K_MPI ? mpi_stream(n, count, full)
                      : am_stream(ep_of(k), kinds[k].at, n, count, full);
}

/* A stream phase of kind k: `warm` messages untimed (the warm-up round's
 * with every byte checked, if full), then `count` timed; MB/s (0 if none).
 * The untimed part matters: the first stream after the other partner has
 * had the shared CPU runs up to a fifth slower (cold caches), and which
 * kind comes first alternates with the ABBA order. */
static double bw_phase(int k, size_t n, long warm, long count, int full)
{
    command(OP_BW, k, n, warm + count, full);
    stream(k, n, warm, full);
    return count ? stream(k, n, count, 0) : 0;
}

/* Round r (-1: the warm-up, untimed: W trips per round trip kind, a tenth
 * of every stream, every byte checked).  Every phase of a measured round
 * starts with the same untimed part, unchecked. */
static void run_round(int r)
{
    long per = iters / rounds;
    for (int j = 0; j < nplan; j++) {
        int i = bm_abba(r < 0 ? 0 : r, j, nplan);
        const struct phase *p = &plan[i];
        size_t n = p->size < 0 ? 0 : sizes[p->size];
        long warm = p->size < 0 ? warmup : count_of(p->kind, n, 1);
        long count = r < 0 ? 0 : p->size < 0 ? per : count_of(p->kind, n, 0);
        double v = p->size < 0 ? rtt_phase(p->kind, warm, count)
                               : bw_phase(p->kind, n, warm, count, r < 0);
        if (r >= 0)
            fig[r][i] = v;
    }
}

/* Does kind k stream messages of n bytes?  shmam's copy streams up to
 * long_max; MPI's and the one-copy streams (bounded by the region) all. */
static int streams(int k, size_t n)
{
    return k == K_MPI || kinds[k].at || n <= AM_MAX_BULK || n <= long_max;
}

/* The phases of a round: the round trips (no one-copy kind), then per size
 * its streams in stream_order. */
static void make_plan(void)
{
    for (int k = 0; k < NKINDS; k++)
        if (!kinds[k].at)
            plan[nplan++] = (struct phase){k, -1};
    for (int s = 0; s < nsizes; s++)
        for (int j = 0; j < NKINDS; j++) {
            int k = stream_order[j];
            if (streams(k, sizes[s]) && nplan < MAX_PHASES)
                plan[nplan++] = (struct phase){k, s};
        }
}

static int phase_of(int k, int s)
{
    for (int i = 0; i < nplan; i++)
        if (plan[i].kind == k && plan[i].size == s)
            return i;
    return -1;
}

/* Rank 0: the END command to both partners; their totals checked against
 * what was sent.  0, or 1 having said why. */
static int verify(void)
{
    int fail = 0;
    for (int p = 1; p <= 2; p++) {
        long c[NCMD] = {OP_END};
        unsigned long t[NTOT];
        MPI_Send(c, NCMD, MPI_LONG, p, TAG_CMD, ctl);
        MPI_Recv(t, NTOT, MPI_UNSIGNED_LONG, p, TAG_SUMMARY, ctl, MPI_STATUS_IGNORE);
        if (t[T_MSGS] == sent_msgs[p] && t[T_BYTES] == sent_bytes[p] && !t[T_SEQ] &&
            !t[T_STAMP] && !t[T_DATA] && !t[T_SOURCE] && !t[T_PLACE] && !t[T_PACKETS])
            continue;
        fprintf(stderr,
                "clumps: FAILED: sent rank %d %lu messages (%lu bytes), it took %lu (%lu "
                "bytes); %lu out of sequence, %lu bad stamps, %lu bad data, %lu from the "
                "wrong source, %lu one-copy messages out of their region slot, %lu bad "
                "packets\n",
                p, sent_msgs[p], sent_bytes[p], t[T_MSGS], t[T_BYTES], t[T_SEQ], t[T_STAMP],
                t[T_DATA], t[T_SOURCE], t[T_PLACE], t[T_PACKETS]);
        fail = 1;
    }
    unsigned long bad = am_ep_bad_packets(ep) + am_ep_bad_packets(plain);
    if (bad) {
        fprintf(stderr, "clumps: FAILED: rank 0 dropped %lu bad packets\n", bad);
        fail = 1;
    }
    return fail;
}

/* ---- the rows ---- */

static void row_of(int i, double *v)
{
    for (int r = 0; r < rounds; r++)
        v[r] = fig[r][i];
}

static void print_phase(const struct bm_row *row, const char *impl, int i)
{
    double v[MAX_ROUNDS];
    char name[64];
    const struct phase *p = &plan[i];
    int k = p->kind;
    const char *who = k == K_MPI ? "mpich" : impl;
    row_of(i, v);
    if (p->size < 0) {
        snprintf(name, sizeof name, "rtt_%s", kinds[k].name);
        bm_print(row, who, iters / rounds * rounds, name, bm_stat_of(v, (int)rounds), "us",
                 3);
    } else {
        size_t n = sizes[p->size];
        snprintf(name, sizeof name, "bw_%s_MBps_%zu", kinds[k].name, n);
        bm_print(row, who, count_of(k, n, 0) * rounds, name, bm_stat_of(v, (int)rounds),
                 "MB/s", 0);
    }
    if (verbose)
        for (int r = 0; r < rounds; r++)
            fprintf(stderr, "clumps: %s round %d: %.3f\n", name, r, v[r]);
}

/* The per-round quotient of kinds a and b at size s (-1: round trips), named
 * after a and b's path: bw_longat_intra_vs_plain_<n>. */
static void print_ratio(const struct bm_row *row, const char *impl, int a, int b, int s)
{
    int i = phase_of(a, s), j = phase_of(b, s);
    double v[MAX_ROUNDS], w[MAX_ROUNDS];
    char name[64];
    if (i < 0 || j < 0)
        return;
    row_of(i, v), row_of(j, w);
    if (s < 0)
        snprintf(name, sizeof name, "rtt_%s_vs_%s", kinds[a].name, kinds[b].name);
    else
        snprintf(name, sizeof name, "bw_%s_vs_%s_%zu", kinds[a].name,
                 kinds[kinds[b].path].name, sizes[s]);
    long n = s < 0 ? iters / rounds * rounds : count_of(a, sizes[s], 0) * rounds;
    bm_print(row, impl, n, name, bm_stat_ratio(v, w, (int)rounds), "ratio", 3);
}

static void report(void)
{
    const char *shm = getenv("SHMAM_SHM");
    const char *impl = bm_algs_name_of(ep);
    struct bm_row row = {stdout, "clumps", shm && *shm ? shm : "posix", 3, pinned};
    if (header)
        bm_print_header(stdout);
    for (int i = 0; i < nplan; i++)
        print_phase(&row, impl, i);
    for (int s = -1; s < nsizes; s++) {
        print_ratio(&row, impl, K_INTRA, K_PLAIN, s);
        print_ratio(&row, impl, K_CROSS, K_MPI, s);
        print_ratio(&row, impl, K_AT_INTRA, K_AT_PLAIN, s);
        print_ratio(&row, impl, K_AT_CROSS, K_MPI, s);
    }
    fflush(stdout);
}

/* ---- setup ---- */

static const char usage_text[] =
    "usage: mpiexec -n 3 -bind-to user:0,1,1 clumps [--iters N] [--warmup W] "
    "[--rounds R] [--sizes N,N,...] [--bytes B] [--max-msgs M] [--nap-us U] "
    "[--quick] [--timeout S] [--header] [--verbose]\n";

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--iters") == 0)
            iters = bm_opt_long(v, 1, bm_bad_line), i++;
        else if (strcmp(a, "--warmup") == 0)
            warmup = bm_opt_long(v, 0, bm_bad_line), i++;
        else if (strcmp(a, "--rounds") == 0)
            rounds = bm_opt_long(v, 1, bm_bad_line), i++;
        else if (strcmp(a, "--sizes") == 0)
            nsizes = bm_opt_sizes(v, sizes, MAX_SIZES, bm_bad_line), i++;
        else if (strcmp(a, "--bytes") == 0)
            bytes_per = bm_opt_long(v, 1, bm_bad_line), i++;
        else if (strcmp(a, "--max-msgs") == 0)
            max_msgs = bm_opt_long(v, MIN_MSGS, bm_bad_line), i++;
        else if (strcmp(a, "--nap-us") == 0)
            nap_us = bm_opt_long(v, 1, bm_bad_line), i++;
        else if (strcmp(a, "--timeout") == 0)
            timeout_s = bm_opt_long(v, 0, bm_bad_line), i++;
        else if (strcmp(a, "--quick") == 0)
            iters = 20000, warmup = 500, rounds = 3, bytes_per = 8L << 20, max_msgs = 5000;
        else if (!bm_common_flag(a, &header, &verbose))
            bm_bad_line();
    }
    if (rounds >= MAX_ROUNDS || iters < rounds)
        bm_bad_line();
}

/* The environment am_init reads: nodes of two, and long_max the largest
 * size (at least 1 MiB) unless SHMAM_LONG_MAX says otherwise. */
static void environment(void)
{
    const char *node = getenv("SHMAM_NODE_SIZE");
    if (node && *node && strcmp(node, "2") != 0) {
        fprintf(stderr, "clumps: SHMAM_NODE_SIZE must be 2 (or unset), not %s\n", node);
        exit(2);
    }
    setenv("SHMAM_NODE_SIZE", "2", 1);
    long_max = bm_long_max(sizes, nsizes);
}

/* Ranks 0 and 1: a named endpoint each, "<job endpoint's name>.p", rank 1's
 * mapped by rank 0 at index 1.  Collective over ctl. */
static void make_plain(void)
{
    char mine[AM_MAX_NAME + 1], all[3][AM_MAX_NAME + 1];
    snprintf(mine, sizeof mine, "%.*s.p", AM_MAX_NAME - 2, am_ep_name(ep));
    MPI_Allgather(mine, sizeof mine, MPI_CHAR, all, sizeof mine, MPI_CHAR, ctl);
    if (rank < 2) {
        bm_check(am_ep_create(mine, NULL, &plain), "am_ep_create (plain)");
        bm_check(am_set_handler(plain, H_PING, on_ping), "am_set_handler");
        bm_check(am_set_handler(plain, H_PONG, on_pong), "am_set_handler");
        bm_check(am_set_handler(plain, H_DATA, on_data), "am_set_handler");
        bm_check(am_set_handler(plain, H_CREDIT, on_credit), "am_set_handler");
        if (strcmp(am_ep_claim(plain), am_ep_claim(ep)) != 0 ||
            strcmp(am_ep_queue(plain), am_ep_queue(ep)) != 0)
            bm_die("the named endpoint's claim or queue differs from the job's", 0);
    }
    MPI_Barrier(ctl);
    if (rank == 0)
        bm_check(am_ep_map(plain, 1, all[1]), "am_ep_map (plain)");
    MPI_Barrier(ctl);
}

/* Every rank's CPU; pinned when rank 0's is its own and 1 and 2 are bound;
 * per partner, how long a wait spins before it yields (at once when the
 * pair shares a CPU). */
static void placement(void)
{
    int cpu = bm_pinned_cpu(), c[3];
    MPI_Allgather(&cpu, 1, MPI_INT, c, 1, MPI_INT, ctl);
    pinned = c[0] >= 0 && c[1] >= 0 && c[2] >= 0 && c[0] != c[1] && c[0] != c[2];
    for (int p = 1; p <= 2; p++) {
        yield_after[p] = bm_yield_after(c[0], c[p]);
    }
    if (rank == 0 && verbose)
        fprintf(stderr, "clumps: CPUs of ranks 0, 1, 2: %d %d %d (-1: unbound)\n", c[0],
                c[1], c[2]);
}

/* This rank's 64 buffers of the largest size, every page touched. */
static void buffers(void)
{
    size_t stride = round64(sizes[nsizes - 1]);
    app = aligned_alloc(4096, ((APP_SLOTS * stride + 4095) / 4096) * 4096);
    if (!app)
        bm_die("out of memory for the buffers", 0);
    for (size_t i = 0; i < APP_SLOTS * stride; i++)
        app[i] = (char)(i * 131 + (i >> 12));
}

/* Every rank: the regions' size, 64 slots of the largest size, at most
 * REGION_CAP unless 4 slots need more.  (256 MB for 4 MB would take seconds
 * of page faults per region on this VM; 16 slots in flight of 4 MB stream as
 * fast as 64 would.) */
static void at_region_size(void)
{
    size_t big = round64(sizes[nsizes - 1]);
    region_bytes = APP_SLOTS * big < REGION_CAP ? APP_SLOTS * big : REGION_CAP;
    region_bytes = region_bytes > 4 * big ? region_bytes : 4 * big;
}

/* Partners: a region on every endpoint that takes one-copy streams (rank 1:
 * the job's and the named one; rank 2: the job's), every page touched.  Made
 * before serving, so before rank 0's first one-copy send. */
static char *region_of(am_ep_t *e)
{
    void *base;
    bm_check(am_region_create(e, region_bytes, &base), "am_region_create");
    memset(base, 0, region_bytes);
    return base;
}

static void handlers(am_ep_t *e)
{
    bm_check(am_set_handler(e, H_PING, on_ping), "am_set_handler");
    bm_check(am_set_handler(e, H_PONG, on_pong), "am_set_handler");
    bm_check(am_set_handler(e, H_DATA, on_data), "am_set_handler");
    bm_check(am_set_handler(e, H_CREDIT, on_credit), "am_set_handler");
}

int main(int argc, char **argv)
{
    bm_program("clumps", usage_text, argc, argv);
    parse(argc, argv);
    environment();
    bm_on_fail(abort_job);
    ep = bm_am_init("clumps", &argc, &argv);
    rank = am_rank();
    if (am_nprocs() != 3)
        bm_die("run me with exactly three ranks (mpiexec -n 3)", 0);
    bm_timeout((unsigned)timeout_s);
    MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
    handlers(ep);
    make_plain();
    placement();
    buffers();
    at_region_size();
    if (rank != 0)
        ep_region = region_of(ep);
    if (rank == 1)
        plain_region = region_of(plain);
    int fail = 0;
    if (rank == 0) {
        make_plan();
        for (int r = -1; r < rounds; r++)
            run_round(r);
        if (!(fail = verify()))
            report();
    } else {
        serve();
    }
    MPI_Barrier(ctl); /* then the named endpoints go, even after a failed check */
    if (plain)
        bm_check(am_ep_destroy(plain), "am_ep_destroy (plain)");
    if (fail)
        bm_die("a check failed", 0);
    MPI_Comm_free(&ctl);
    bm_check(am_finalize(ep), "am_finalize");
    return 0;
}
