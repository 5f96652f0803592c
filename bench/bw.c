/*
 * bw.c - one-way bandwidth between two ranks, 64 B to 4 MB: shmam's message
 * streams, each beside a raw floor measured in the same run between the same
 * two processes.
 *
 *   shmamrun -n 2 --bind [-a ALG] build/bench/bw [--sizes LIST] [--bytes B]
 *       [--max-msgs M] [--rounds R] [--quick] [--corrupt K] [--header] [--verbose]
 *
 * Rank 0 sends, rank 1 receives.  Every stream moves `count` messages of n
 * bytes one way; count = B / n (--bytes, default 32 MB), at least 64 and at
 * most M (--max-msgs, default 20000), so that a small size's phase lasts a
 * few milliseconds and a large one's moves at least 64 messages.  The kinds
 * (the table kinds[]), each in two modes:
 *   flood  the receiver takes every message and does not touch its data (the
 *          "flood" of AM test suites);
 *   copy   the receiver copies every message out into a private buffer, where
 *          an application keeps it (what MPI_Recv does).
 * Transports:
 *   raw    the floor: a ring of RAW_SLOTS (16) slots in a POSIX segment of the
 *          job shared by the two ranks, each slot 8 KB (n <= 8 KB; the slots
 *          are 8 KB apart, like bulk blocks) or n bytes (larger sizes).  Each
 *          slot has a flag word on a cache line of its own.  The sender waits
 *          for the slot's flag to be 0 (acquire), memcpys the message in and
 *          release-stores the flag (the message's sequence number); the
 *          receiver acquire-loads the flag, copies the data out (copy mode),
 *          and release-stores 0.  No other flow control: the ring is the
 *          window.
 *   bulk   am_request_bulk (n <= 8 KB) to a handler that checks the sequence
 *          number and, in copy mode, memcpys the data out.  Flow control as a
 *          stream: the receiver's handler replies with a credit (am_reply) to
 *          every CREDIT_EVERY-th (16th) message and to a phase's last one; the
 *          sender keeps at most WINDOW (64) messages beyond the last credit,
 *          polling its endpoint (the credits' handler) while it waits.  The
 *          queue's own 16 bulk blocks bound it sooner: a full queue makes
 *          am_request_bulk back off and poll.  No message is answered one by
 *          one.
 *   batch  the bulk stream's messages gathered BATCH (16) at a time, each
 *          from its own application slot, and sent by one am_request_batch
 *          (n <= 8 KB; flood mode only): the per-call work shared, the data
 *          still copied message by message; handler and credits as bulk.
 *   loan   am_request_prepare (n <= 8 KB), then the sender writes all n bytes
 *          of message i (from its application slot, the bytes bulk sends)
 *          into the bulk block lent, then am_request_commit: the copy-free
 *          send's cost with a producer that writes every byte in place (the
 *          runtime copies nothing); handler and credits as bulk.
 *   long   am_request_long, copied into a block of the receiver's shared heap
 *          (which holds two messages of long_max bytes), to the same handler,
 *          credited as bulk; a full heap makes the send back off and poll.
 *          long_max: SHMAM_LONG_MAX if set (larger sizes are then left out
 *          of the long streams), else the largest size (at least the default,
 *          1 MiB), set in the environment before am_init.
 *   long_at  am_request_long_at (one copy): message i is written straight
 *          into slot i mod RAW_SLOTS (16) of rank 1's region (am_region_create,
 *          16 slots of the largest size rounded up to 64, the raw ring's
 *          depth), then the handler runs with a pointer to it.  The sender
 *          must not overwrite a slot before its message has been taken, so
 *          the window is the region's 16 slots, a credit every 4th message.
 * The application's buffers are the same for every kind: the sender sends
 * from, and the receiver copies into, a private ring of APP_SLOTS (64) slots
 * of n bytes (rounded up to 64), message i using slot i mod 64 (the buffers
 * of MPICH's window of 64 receives in mpi_bw).  Every message carries its
 * sequence number in its first and last 4 bytes.
 *
 * Estimator (bench/common/stat.h).  One unmeasured warm-up round (a tenth of
 * the counts, at least 64 messages), then R rounds (--rounds, default 5).  A
 * round runs every (size, kind, mode), sizes ascending and, within a size, the
 * kinds in table order, the whole list in ABBA order (reversed in odd rounds),
 * so the raw floor and the stream of one size run next to each other.  A
 * stream's figure in a round is its mean: bytes over the time from rank 0's
 * first send until the receiver has taken the last message (the last credit
 * is back; raw: the last slot's flag is 0 again).  MB = 10^6 bytes.  A row is
 * the median over the rounds, spread the lowest and highest round.
 *
 * Rows (bench bw; impl the claim algorithm, "raw" for the floor; iters the
 * messages of all measured rounds):
 *   raw_flood_MBps_<n>, raw_copy_MBps_<n>   the floors
 *   bw_flood_MBps_<n>, bw_copy_MBps_<n>     bulk streams, n <= 8192
 *   bw_batch_MBps_<n>                       the bulk flood sent BATCH (16) at a
 *                                           time with am_request_batch
 *   loan_flood_MBps_<n>, loan_copy_MBps_<n> loans (copy-free), n <= 8192
 *   long_flood_MBps_<n>, long_copy_MBps_<n>, longat_flood_MBps_<n>,
 *   longat_copy_MBps_<n>                    long streams, heap and one-copy
 *   flood_vs_raw_<n>, copy_vs_raw_<n>,      per round, stream over the floor
 *   long_flood_vs_raw_<n>, ...              of its mode, median and spread of
 *                                           the quotients
 *
 * Checks.  The warm-up round verifies every byte: the sender sends a checksum
 * of each message (an argument; raw: the slot's header) and the receiver
 * recomputes it over the data as it arrived (flood mode too: the warm-up is
 * not timed).  In measured rounds the receiver checks each message's sequence
 * number (argument or flag) and, in copy mode, the stamps of its copy.  At
 * the end rank 1 reports the messages and bytes it took, sequence, stamp and
 * checksum errors and bad packets; rank 0 prints rows only if they agree with
 * what it sent and are 0, else says FAILED and exits 1, as after 60 s without
 * progress (a lost message).  --corrupt K (for tests) spoils a byte of message
 * K (0-based) of every verified stream after its checksum was taken: the run
 * must then fail.
 *
 * long_at's flood leaves the data in the receiver's region, memory it chose
 * (a spread array, say): that is its one-copy delivery.  Its copy stream
 * copies it out once more, as every copy stream does, so that the copy
 * figures compare the same work.
 *
 * The raw segment is "/shmam-JOB.bw"; rank 0 creates it and unlinks it as
 * soon as both ranks have it mapped.  Rank 1's region is its endpoint's
 * (JOB.1:r) and goes with it; the launcher sweeps every JOB.* name anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "shmam.h"
#include "common/am_algs.h"
#include "common/am_harness.h"
#include "common/measure.h"
#include "common/stat.h"

#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "bw needs AO_load_acquire and AO_store_release"
#endif

enum { H_DATA = 1, H_CREDIT };
enum { F_COPY = 1, F_VERIFY = 2, F_CREDIT = 4 }; /* a message's flags (args[1]) */
enum { RAW_SLOTS = 16, APP_SLOTS = 64, WINDOW = 64, CREDIT_EVERY = 16 };
enum { AT_WINDOW = RAW_SLOTS, AT_CREDIT_EVERY = AT_WINDOW / 4 }; /* long_at's */
enum { MIN_MSGS = 64, MAX_SIZES = 16, MAX_ROUNDS = 51, MAX_PHASES = 256 };
#define RAW_MIN_SLOT 8192 /* the raw ring's slot spacing for n <= 8 KB */

enum transport { T_RAW, T_BULK, T_BATCH, T_LOAN, T_LONG, T_LONGAT };
enum { BATCH = 16 }; /* messages per am_request_batch in the batch stream */

/* The kinds of stream, in the order they run within a size. */
static const struct kind {
    const char *metric; /* "<metric>_MBps_<n>" */
    const char *ratio;  /* "<ratio>_vs_raw_<n>", NULL for the floors */
    enum transport t;
    int copy;
    size_t max_len;
} kinds[] = {
    {"raw_flood", NULL, T_RAW, 0, SIZE_MAX},
    {"bw_flood", "flood", T_BULK, 0, AM_MAX_BULK},
    {"bw_batch", "batch", T_BATCH, 0, AM_MAX_BULK},
    {"loan_flood", "loan_flood", T_LOAN, 0, AM_MAX_BULK},
    {"long_flood", "long_flood", T_LONG, 0, SIZE_MAX},
    {"longat_flood", "longat_flood", T_LONGAT, 0, SIZE_MAX},
    {"bw_copy", "copy", T_BULK, 1, AM_MAX_BULK},
    {"loan_copy", "loan_copy", T_LOAN, 1, AM_MAX_BULK},
    {"long_copy", "long_copy", T_LONG, 1, SIZE_MAX},
    {"longat_copy", "longat_copy", T_LONGAT, 1, SIZE_MAX},
    {"raw_copy", NULL, T_RAW, 1, SIZE_MAX},
};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))

/* The floor a kind is divided by: the raw kind of its mode. */
static int floor_of(int k)
{
    for (int j = 0; j < NKINDS; j++)
        if (kinds[j].t == T_RAW && kinds[j].copy == kinds[k].copy)
            return j;
    return -1;
}

/* One raw slot's header, on a cache line of its own: `seq` is the flag (0
 * empty, else the sequence number of the message in the slot); len, flags and
 * sum are written before seq is released and read after it is acquired. */
struct slot {
    _Alignas(64) AO_t seq;
    uint64_t len, flags, sum;
};

/* The raw segment: both ranks' CPUs, rank 1's totals (written before the final
 * barrier, read after it), the slot headers; the ring follows at RING_OFF. */
struct shared {
    _Alignas(128) AO_t cpu[2]; /* CPU + 1 if pinned to one, else 0 */
    AO_t msgs, bytes, bad_seq, bad_stamp, bad_sum, bad_packets;
    _Alignas(128) struct slot slot[RAW_SLOTS];
};
#define RING_OFF (((sizeof(struct shared) + 4095) / 4096) * 4096)

struct phase {
    int size, kind; /* indices into sizes[] and kinds[] */
};

static am_ep_t *ep;
static int rank, pinned, header, verbose;
static long rounds = 5, bytes_per = 32L << 20, max_msgs = 20000, corrupt = -1;
static size_t sizes[MAX_SIZES] = {64,    256,   1024,   4096,    8192,
                                  16384, 65536, 262144, 1048576, 4194304};
static int nsizes = 10;
static unsigned yield_after = 256;
static struct shared *sh;
static char *ring;        /* the raw ring, RAW_SLOTS slots of raw_stride */
static size_t raw_stride; /* for the largest size */
static char *app;         /* this rank's APP_SLOTS buffers (source or copy) */
static size_t app_stride; /* for the largest size */
static size_t long_max;   /* the largest long message (T_LONG) */
static struct phase plan[MAX_PHASES];
static int nplan;
static double fig[MAX_ROUNDS][MAX_PHASES]; /* MB/s per round and phase */

/* Rank 0: messages and bytes sent, credits received (the latest credited
 * sequence number).  Rank 1: what it took and what was wrong. */
static uint32_t seq, credited;
static unsigned long sent_msgs, sent_bytes;
static uint32_t expect = 1; /* rank 1: the next sequence number */
static unsigned long rx_msgs, rx_bytes, bad_seq, bad_stamp, bad_sum;
static unsigned long due; /* rank 1: messages sent by the end of this phase */

static size_t round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Slot i of a ring of APP_SLOTS buffers for messages of n bytes. */
static char *app_slot(uint32_t i, size_t n)
{
    return app + (size_t)(i % APP_SLOTS) * round64(n);
}

static char *raw_slot(uint32_t i, size_t n)
{
    return ring + (size_t)(i % RAW_SLOTS) * (n > RAW_MIN_SLOT ? n : RAW_MIN_SLOT);
}

/* A checksum of n bytes: FNV-1a over 8-byte words, then the tail bytes. */
static uint64_t checksum(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h;
}

/* ---- rank 1, the receiver ---- */

/* Take message s of len bytes at d with flags f (and checksum sum): count it,
 * check its sequence number, copy it out in copy mode, verify it when asked. */
static void take(uint32_t s, uint32_t f, uint64_t sum, const char *d, size_t len)
{
    if (s != expect)
        bad_seq++;
    expect = s + 1;
    rx_msgs++;
    rx_bytes += len;
    if (f & F_COPY) {
        char *to = app_slot(s, len);
        memcpy(to, d, len);
        bad_stamp += len >= 8 && !bm_stamped(to, len, s);
    }
    if (f & F_VERIFY)
        bad_sum += (uint32_t)checksum(d, len) != (uint32_t)sum; /* AM carries 32 bits */
}

/* (seq, flags, checksum's low 32 bits) */
static void on_data(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 3) {
        bad_seq++;
        return;
    }
    take(a[0], a[1], a[2], d, len);
    if (a[1] & F_CREDIT)
        bm_check(am_reply(t, H_CREDIT, a, 1), "am_reply");
}

/* Serve AM messages until `total` have been taken in all. */
static void am_serve(unsigned long total)
{
    bm_await(ep, yield_after, &rx_msgs, total, "waiting for a message");
}

/* Take `count` messages of n bytes from the raw ring.  The acquire load of a
 * slot's flag pairs with the sender's release store of it (raw_send): the data,
 * len, flags and sum written before are visible.  The release store of 0
 * follows our last read of the slot and pairs with the sender's acquire load
 * before it writes the slot again. */
static void raw_serve(long count)
{
    for (long i = 0; i < count; i++) {
        uint32_t s = expect;
        struct slot *sl = &sh->slot[s % RAW_SLOTS];
        struct bm_wait w = BM_WAIT(yield_after, "waiting for a raw slot");
        AO_t got;
        while ((got = AO_load_acquire(&sl->seq)) == 0)
            bm_wait_step(&w);
        size_t len = sl->len;
        if (got != s || len > raw_stride)
            bm_die("a raw slot holds a message out of sequence", 0);
        take(s, (uint32_t)sl->flags, sl->sum, raw_slot(s, len), len);
        AO_store_release(&sl->seq, 0);
    }
}

/* ---- rank 0, the sender ---- */

static void on_credit(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 1 || (uint32_t)(a[0] - credited) > (uint32_t)(seq - credited))
        bm_die("a credit for a message never sent", 0);
    credited = a[0];
}

/* Poll until at most `ahead` messages are beyond the last credit. */
static void await_credit(uint32_t ahead)
{
    struct bm_wait w = BM_WAIT(yield_after, "waiting for a credit");
    while ((uint32_t)(seq - credited) > ahead)
        bm_wait_poll(&w, ep);
}

/* Message i of a stream: stamp its buffer; with F_VERIFY take its checksum
 * and, if it is the one --corrupt names, spoil a byte after that (undone by
 * unspoil() once it is sent).  Returns the buffer. */
static char *prepare(long i, size_t n, uint32_t f, uint64_t *sum)
{
    char *p = app_slot(seq, n);
    bm_stamp(p, n, seq);
    *sum = 0;
    if (f & F_VERIFY) {
        *sum = checksum(p, n);
        if (i == corrupt)
            p[n / 2] ^= 0x40;
    }
    return p;
}

static void unspoil(long i, char *p, size_t n, uint32_t f)
{
    if ((f & F_VERIFY) && i == corrupt)
        p[n / 2] ^= 0x40;
}

/* Send message p of n bytes with arguments a through transport t. */
static void am_send(enum transport t, const char *p, size_t n, const uint32_t *a)
{
    if (t == T_BULK)
        bm_check(am_request_bulk(ep, 1, H_DATA, p, n, a, 3), "am_request_bulk");
    else if (t == T_LONG)
        bm_check(am_request_long(ep, 1, H_DATA, p, n, a, 3), "am_request_long");
    else
        bm_check(
            am_request_long_at(ep, 1, H_DATA, p, n, (a[0] % RAW_SLOTS) * round64(n), a, 3),
            "am_request_long_at");
}

/* Message seq as a loan: all n bytes written into the lent block (from the
 * application's slot, as a producer writing its message in place writes
 * every byte; the bulk stream's runtime copies the same bytes), then
 * committed. */
static void loan_send(long i, size_t n, uint32_t f, uint32_t credit)
{
    void *p;
    uint64_t sum;
    const char *src = prepare(i, n, f, &sum);
    bm_check(am_request_prepare(ep, 1, n, &p), "am_request_prepare");
    memcpy(p, src, n);
    unspoil(i, (char *)src, n, f);
    uint32_t a[3] = {seq, f | credit, (uint32_t)sum};
    bm_check(am_request_commit(ep, H_DATA, n, a, 3), "am_request_commit");
}

/* The batch stream: messages gathered BATCH at a time (each from its own
 * application slot, stamped as bulk's are), then sent with one
 * am_request_batch; `flush` sends what is gathered. */
static struct am_out batch[BATCH];
static uint32_t batch_args[BATCH][3];
static int batched;

static void batch_add(long i, size_t n, uint32_t f, uint32_t credit, int flush)
{
    uint64_t sum;
    char *p = prepare(i, n, f, &sum);
    uint32_t *a = batch_args[batched];
    a[0] = seq, a[1] = f | credit, a[2] = (uint32_t)sum;
    batch[batched++] = (struct am_out){H_DATA, a, 3, p, n};
    if (batched < BATCH && !flush)
        return;
    int sent = am_request_batch(ep, 1, batch, batched);
    if (sent != batched)
        bm_check(sent < 0 ? sent : -EIO, "am_request_batch");
    for (int k = 0; k < batched; k++)
        unspoil(i - batched + 1 + k, (char *)batch[k].data, n, f);
    batched = 0;
}

/* A stream of `count` AM messages of n bytes through transport t; flags f
 * (F_COPY, F_VERIFY) for every message.  Returns MB/s from the first send until
 * the last message's credit is back.  long_at's window is its region's slots:
 * message s may overwrite slot s mod RAW_SLOTS once s - RAW_SLOTS is credited. */
static double am_stream(enum transport t, size_t n, long count, uint32_t f)
{
    uint32_t window = t == T_LONGAT ? AT_WINDOW : WINDOW;
    long every = t == T_LONGAT ? AT_CREDIT_EVERY : CREDIT_EVERY;
    credited = seq; /* every message before this stream has been taken */
    int64_t t0 = bm_now_ns();
    for (long i = 0; i < count; i++) {
        await_credit(t == T_BATCH ? window - BATCH : window - 1);
        uint64_t sum = 0;
        ++seq;
        int last = i + 1 == count || (i + 1) % every == 0;
        if (t == T_LOAN) {
            loan_send(i, n, f, last ? F_CREDIT : 0);
            continue;
        }
        if (t == T_BATCH) {
            batch_add(i, n, f, last ? F_CREDIT : 0, i + 1 == count);
            continue;
        }
        char *p = prepare(i, n, f, &sum);
        uint32_t a[3] = {seq, f | (last ? F_CREDIT : 0), (uint32_t)sum};
        am_send(t, p, n, a);
        unspoil(i, p, n, f);
    }
    await_credit(0);
    sent_msgs += (unsigned long)count, sent_bytes += (unsigned long)count * n;
    return (double)n * (double)count / ((double)(bm_now_ns() - t0) / 1e3);
}

/* A stream of `count` messages of n bytes through the raw ring (see raw_serve
 * for the pairing of the flags).  Returns MB/s from the first copy until the
 * receiver has emptied the last slot. */
static double raw_stream(size_t n, long count, uint32_t f)
{
    int64_t t0 = bm_now_ns();
    for (long i = 0; i < count; i++) {
        uint64_t sum;
        ++seq;
        struct slot *sl = &sh->slot[seq % RAW_SLOTS];
        struct bm_wait w = BM_WAIT(yield_after, "waiting for a free raw slot");
        while (AO_load_acquire(&sl->seq) != 0)
            bm_wait_step(&w);
        char *p = prepare(i, n, f, &sum);
        memcpy(raw_slot(seq, n), p, n);
        unspoil(i, p, n, f);
        sl->len = n, sl->flags = f, sl->sum = sum;
        AO_store_release(&sl->seq, seq);
    }
    struct slot *last = &sh->slot[seq % RAW_SLOTS];
    struct bm_wait w =
        BM_WAIT(yield_after, "waiting for the receiver to empty the raw ring");
    while (AO_load_acquire(&last->seq) != 0)
        bm_wait_step(&w);
    sent_msgs += (unsigned long)count, sent_bytes += (unsigned long)count * n;
    return (double)n * (double)count / ((double)(bm_now_ns() - t0) / 1e3);
}

/* ---- both ranks ---- */

static long count_of(size_t n)
{
    long c = bytes_per / (long)n;
    c = c < max_msgs ? c : max_msgs;
    return c > MIN_MSGS ? c : MIN_MSGS;
}

/* Phase p of a round with `count` messages (warm: verified); rank 0 returns
 * its MB/s, rank 1 serves it and returns 0. */
static double run_phase(const struct phase *p, long count, int warm)
{
    const struct kind *k = &kinds[p->kind];
    size_t n = sizes[p->size];
    uint32_t f = (k->copy ? F_COPY : 0) | (warm ? F_VERIFY : 0);
    if (rank == 1) {
        /* one am_poll may take the next stream's first messages too */
        due += (unsigned long)count;
        if (k->t == T_RAW)
            raw_serve(count);
        else
            am_serve(due);
        return 0;
    }
    return k->t == T_RAW ? raw_stream(n, count, f) : am_stream(k->t, n, count, f);
}

/* Round r (-1: the warm-up) of every phase in ABBA order. */
static void run_round(int r)
{
    for (int j = 0; j < nplan; j++) {
        int i = bm_abba(r < 0 ? 0 : r, j, nplan);
        size_t n = sizes[plan[i].size];
        long c = count_of(n);
        double v =
            run_phase(&plan[i], r < 0 ? (c / 10 > MIN_MSGS ? c / 10 : MIN_MSGS) : c, r < 0);
        if (r >= 0)
            fig[r][i] = v;
    }
}

/* The (size, kind) pairs of a round: sizes ascending, kinds in table order. */
static void make_plan(void)
{
    for (int s = 0; s < nsizes; s++)
        for (int k = 0; k < NKINDS; k++)
            if (sizes[s] <= kinds[k].max_len && nplan < MAX_PHASES &&
                (kinds[k].t != T_LONG || sizes[s] <= long_max))
                plan[nplan++] = (struct phase){s, k};
}

static int phase_of(int s, int k)
{
    for (int i = 0; i < nplan; i++)
        if (plan[i].size == s && plan[i].kind == k)
            return i;
    return -1;
}

/* Rank 0: a row per phase, then the per-round ratios to the floors. */
static void report(void)
{
    const char *shm = getenv("SHMAM_SHM");
    struct bm_row row = {stdout, "bw", shm && *shm ? shm : "posix", 2, pinned};
    int n = (int)rounds;
    double v[MAX_ROUNDS], w[MAX_ROUNDS];
    char name[64];
    if (header)
        bm_print_header(stdout);
    for (int i = 0; i < nplan; i++) {
        const struct kind *k = &kinds[plan[i].kind];
        size_t z = sizes[plan[i].size];
        for (int r = 0; r < n; r++)
            v[r] = fig[r][i];
        snprintf(name, sizeof name, "%s_MBps_%zu", k->metric, z);
        bm_print(&row, k->t == T_RAW ? "raw" : bm_algs_name_of(ep), count_of(z) * rounds,
                 name, bm_stat_of(v, n), "MB/s", 0);
        if (verbose)
            for (int r = 0; r < n; r++)
                fprintf(stderr, "bw: %s round %d: %.0f MB/s\n", name, r, v[r]);
    }
    for (int i = 0; i < nplan; i++) {
        const struct kind *k = &kinds[plan[i].kind];
        int fl = phase_of(plan[i].size, floor_of(plan[i].kind));
        size_t z = sizes[plan[i].size];
        if (!k->ratio || fl < 0)
            continue;
        for (int r = 0; r < n; r++)
            v[r] = fig[r][i], w[r] = fig[r][fl];
        snprintf(name, sizeof name, "%s_vs_raw_%zu", k->ratio, z);
        bm_print(&row, bm_algs_name_of(ep), count_of(z) * rounds, name,
                 bm_stat_ratio(v, w, n), "ratio", 3);
    }
    fflush(stdout);
}

/* Rank 0 after the final barrier: do rank 1's totals match ours? */
static int verify(void)
{
    unsigned long m = AO_load(&sh->msgs), b = AO_load(&sh->bytes);
    unsigned long e1 = AO_load(&sh->bad_seq), e2 = AO_load(&sh->bad_stamp);
    unsigned long e3 = AO_load(&sh->bad_sum), bad = AO_load(&sh->bad_packets);
    bad += am_ep_bad_packets(ep);
    if (m == sent_msgs && b == sent_bytes && !e1 && !e2 && !e3 && !bad)
        return 0;
    fprintf(stderr,
            "bw: FAILED: sent %lu messages (%lu bytes), rank 1 took %lu (%lu bytes); %lu "
            "out of sequence, %lu bad stamps, %lu bad checksums, %lu bad packets\n",
            sent_msgs, sent_bytes, m, b, e1, e2, e3, bad);
    return 1;
}

/* The raw segment: the shared part, then the ring (bm_raw_segment). */
static void map_shared(void)
{
    void *p = bm_raw_segment(ep, "bw", RING_OFF + RAW_SLOTS * raw_stride);
    sh = p;
    ring = (char *)p + RING_OFF;
}

/* Each rank publishes its CPU; after the barrier both decide alike how to
 * spin: yield at once on a shared CPU, rarely when pinned to two. */
static void decide_spinning(void)
{
    AO_store(&sh->cpu[rank], (AO_t)(bm_pinned_cpu() + 1));
    bm_check(am_barrier(ep), "am_barrier");
    int c0 = (int)AO_load(&sh->cpu[0]) - 1, c1 = (int)AO_load(&sh->cpu[1]) - 1;
    pinned = bm_pinned_apart(c0, c1);
    yield_after = bm_yield_after(c0, c1);
}

static const char usage_text[] =
    "usage: shmamrun -n 2 --bind [-a ALG] bw [--sizes N,N,...] [--bytes B] "
    "[--max-msgs M] [--rounds R] [--quick] [--corrupt K] [--header] "
    "[--verbose]\n";

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--sizes") == 0 && v)
            nsizes = bm_opt_sizes(v, sizes, MAX_SIZES, bm_bad_line), i++;
        else if (strcmp(a, "--bytes") == 0)
            bytes_per = bm_opt_long(v, 1, bm_bad_line), i++;
        else if (strcmp(a, "--max-msgs") == 0)
            max_msgs = bm_opt_long(v, MIN_MSGS, bm_bad_line), i++;
        else if (strcmp(a, "--rounds") == 0)
            rounds = bm_opt_long(v, 1, bm_bad_line), i++;
        else if (strcmp(a, "--corrupt") == 0)
            corrupt = bm_opt_long(v, 0, bm_bad_line), i++;
        else if (strcmp(a, "--quick") == 0)
            bytes_per = 8L << 20, max_msgs = 5000, rounds = 3;
        else if (!bm_common_flag(a, &header, &verbose))
            bm_bad_line();
    }
    if (rounds >= MAX_ROUNDS)
        bm_bad_line();
}

/* long_max: SHMAM_LONG_MAX if set, else the largest size (at least 1 MiB,
 * the default) put in the environment for am_init. */
static void choose_long_max(void)
{
    long_max = bm_long_max(sizes, nsizes);
}

/* Rank 1's region for long_at: RAW_SLOTS slots of the largest size, every page
 * touched before timing. */
static void make_region(void)
{
    void *base;
    size_t len = RAW_SLOTS * round64(sizes[nsizes - 1]);
    bm_check(am_region_create(ep, len, &base), "am_region_create");
    memset(base, 0, len);
}

/* This rank's buffers: the raw ring's geometry, the application ring (rank 0
 * sends from it, rank 1 copies into it), every page touched before timing. */
static void buffers(void)
{
    size_t big = sizes[nsizes - 1];
    raw_stride = big > RAW_MIN_SLOT ? big : RAW_MIN_SLOT;
    app_stride = round64(big);
    app = aligned_alloc(4096, ((APP_SLOTS * app_stride + 4095) / 4096) * 4096);
    if (!app)
        bm_die("out of memory for the buffers", 0);
    for (size_t i = 0; i < APP_SLOTS * app_stride; i++)
        app[i] = (char)(i * 131 + (i >> 12));
}

int main(int argc, char **argv)
{
    bm_program("bw", usage_text, argc, argv);
    parse(argc, argv);
    choose_long_max();
    ep = bm_am_init("bw", &argc, &argv);
    rank = am_rank();
    if (am_nprocs() != 2)
        bm_die("run me with exactly two ranks (shmamrun -n 2)", 0);
    bm_check(am_set_handler(ep, H_DATA, on_data), "am_set_handler");
    bm_check(am_set_handler(ep, H_CREDIT, on_credit), "am_set_handler");
    buffers();
    if (rank == 1)
        make_region(); /* before the barriers of map_shared: rank 0 maps it */
    map_shared();
    decide_spinning();
    make_plan();
    for (int r = -1; r < rounds; r++)
        run_round(r);
    if (rank == 1) { /* read by rank 0 after the barrier */
        AO_store(&sh->msgs, rx_msgs), AO_store(&sh->bytes, rx_bytes);
        AO_store(&sh->bad_seq, bad_seq), AO_store(&sh->bad_stamp, bad_stamp);
        AO_store(&sh->bad_sum, bad_sum), AO_store(&sh->bad_packets, am_ep_bad_packets(ep));
    }
    bm_check(am_barrier(ep), "am_barrier");
    int fail = rank == 0 ? verify() : 0;
    if (rank == 0 && !fail)
        report();
    munmap(sh, RING_OFF + RAW_SLOTS * raw_stride);
    bm_check(am_finalize(ep), "am_finalize");
    return fail;
}
