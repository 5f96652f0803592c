/*
 * mpi_delivery.c - delivery between nodes through libshmam-mpi, tested through
 * shmam.h only.  Run as `mpiexec -n P mpi_delivery SUBTEST...` (P >= 2; the
 * suite uses P = 4 with SHMAM_NODE_SIZE = 2, so that ranks 0 and 1 share node
 * 0 and ranks 2 and 3 node 1, and also 4 and 1).  Every rank sends and
 * receives, and counts every message it handles against the number it must:
 *
 *   fifo     every rank sends N numbered short requests (3 to 8 arguments) to
 *            every other rank, interleaving destinations; each receiver checks
 *            the sequence per source (exactly once, in order), the arguments,
 *            and that the token names the sender
 *   bulk     patterned bulk requests of sizes 0 .. 8192, byte by byte, in order;
 *            8193 bytes is -EMSGSIZE, to every rank
 *   long     long requests of 0 (NULL data), 1, ..., up to the destination's
 *            long_max (1 MiB by default), byte by byte, in order; long_max + 1
 *            is -EMSGSIZE, to every rank
 *   long_at  one-copy long requests into each receiver's region at disjoint,
 *            unaligned offsets: the handler gets the bytes in place; the whole
 *            region is checked again after a barrier.  A write past the
 *            region's end is -EMSGSIZE to a rank of our node, and to another
 *            node's rank either that or (the sending node may not know its size)
 *            sent, dropped by the receiver and counted as a bad packet; its
 *            handler never runs
 *   replies  requests answered by short, bulk and long replies, each checked
 *            and counted once per request, in order per replier; a second
 *            reply is -EALREADY, a request from a handler and a reply from a
 *            reply handler -EDEADLK
 *   barrier  rounds of: a counter set to the round, a barrier, then every rank
 *            asks every other for its counter, which must be the round or the
 *            next (nobody left the barrier early, nobody passed the next one);
 *            one rank per round is late to the barrier
 *   mixed    every other rank streams interleaved short, bulk, long and
 *            one-copy long requests to rank 0 at once (with node size 2: one
 *            sender of its node, two of the other), which checks each
 *            sender's order across the kinds and every byte
 *   all      each of the above, in one job
 *   hang     every rank prints "mpi_delivery hang: rank R pid PID ready", then
 *            waits for messages forever: a test kills one rank
 *   hang_region  the same, each rank with a region (made before the barrier
 *            that precedes the line)
 *   hang_init  rank 3 parks in am_init with its endpoint's segment made and
 *            named but not yet live (AM_HOOK_CREATING), prints the same line
 *            and waits; the others wait in am_init to map it: a test kills it,
 *            and every rank's segment must then go (the reapers)
 *   hang_send  rank 3 sends rank 0 (another node with node size 2) a long
 *            message sent apart (256 KB) and parks in the transport's send
 *            with its header handed to MPI and its data not
 *            (AM_HOOK_NET_SENT); the others wait in a barrier
 *   hang_close  every rank sends each other rank one request, then closes;
 *            rank 3 parks in the transport's close with the counts
 *            exchanged (AM_HOOK_NET_CLOSING), the others close meanwhile
 *
 * Each subtest starts and ends with a barrier (its state is set before anyone
 * sends), and every rank reports its count to rank 0, which prints
 * "mpi_delivery SUBTEST: ok N messages" with the job's total.  A rank that sees
 * anything wrong prints "mpi_delivery SUBTEST: FAILED rank R: ..." and exits 1
 * (mpiexec then ends the job); one that waits 20 s without a message prints
 * what it still expects, by source, and does the same.  A handler of a
 * subtest that is not running counts as an error, so a late duplicate is seen
 * by the next subtest or at the end.  SHMAM_STRESS multiplies the counts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shmam.h"
#include "internal.h"
#include "testutil.h"

#define MAXP 64        /* ranks this test takes */
#define STUCK_S 20     /* seconds without a message before a waiting rank gives up */
#define AREA (1 << 20) /* bytes of each receiver's region per sender */

enum handler {
    H_FIFO = 1,
    H_BULK,
    H_LONG,
    H_LONG_AT,
    H_OOB,
    H_MARK,
    H_REQ,
    H_REP,
    H_QUERY,
    H_ANSWER,
    H_MIXED,
    H_REPORT,
    H_PARK, /* the parking modes' messages: taken, nothing checked */
};

/* The subtests, numbered as in the table `subtests` (main); 0: none runs. */
enum phase { P_NONE, P_FIFO, P_BULK, P_LONG, P_LONG_AT, P_REPLIES, P_BARRIER, P_MIXED };

static am_ep_t *ep;
static int me, np, scale = 1;
static int phase;         /* the running subtest */
static const char *label; /* its name, for messages */
static unsigned long nerr;
static char first_err[512];
static char *region; /* this rank's region, np * AREA bytes, once made */

/* What this rank has handled from each source in the running subtest, what
 * it must, and the sequence number it expects next: requests, and replies. */
static unsigned long got[MAXP], want[MAXP], rgot[MAXP], rwant[MAXP];
static uint32_t next_seq[MAXP], rnext_seq[MAXP];
static unsigned long reports, report_sum; /* rank 0: counts the others reported */

/* ---- failures ---- */

static void vprint_failed(const char *fmt, va_list ap)
{
    printf("mpi_delivery %s: FAILED rank %d: ", label ? label : "init", me);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
}

/* A failure seen outside a handler: report it and end the job. */
static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_failed(fmt, ap);
    va_end(ap);
    exit(1);
}

/* A failure seen in a handler: counted, the first one's text kept; the
 * subtest fails at its end (the handler goes on, so counts stay meaningful). */
static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
    va_list ap;
    if (nerr++)
        return;
    va_start(ap, fmt);
    vsnprintf(first_err, sizeof first_err, fmt, ap);
    va_end(ap);
}

static void check_errors(void)
{
    if (nerr)
        die("%lu error(s), first: %s", nerr, first_err);
}

/* A send that must succeed. */
static void sent(int rc, const char *what, int dest)
{
    if (rc != 0)
        die("%s to rank %d: %s", what, dest, am_strerror(rc));
}

/* ---- payloads ---- */

/* The key of message seq from src to dst: names its payload. */
static uint32_t key_of(int src, int dst, uint32_t seq)
{
    return tu_mix32((uint32_t)(src * MAXP + dst), seq);
}

/* Byte i of pattern `key`. */
static uint8_t pat_byte(uint32_t key, size_t i)
{
    return (uint8_t)(tu_mix32(key, (uint32_t)(i / 4)) >> (8 * (i % 4)));
}

static void pat_fill(void *buf, uint32_t key, size_t len)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = pat_byte(key, i);
}

/* The first byte of p[0 .. len-1] not in pattern key, or len if none. */
static size_t pat_bad(const void *p, uint32_t key, size_t len)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i] != pat_byte(key, i))
            return i;
    return len;
}

/* Checks a payload: its length and every byte. */
static void check_payload(const char *what, int src, uint32_t seq, const void *data,
                          size_t len, size_t want_len, uint32_t key)
{
    if (len != want_len) {
        bad("%s %u from rank %d: %zu bytes, want %zu", what, seq, src, len, want_len);
        return;
    }
    if (len && !data) {
        bad("%s %u from rank %d: %zu bytes at NULL", what, seq, src, len);
        return;
    }
    size_t at = pat_bad(data, key, len);
    if (at < len)
        bad("%s %u from rank %d (%zu bytes): byte %zu is 0x%02x, want 0x%02x", what, seq,
            src, len, at, ((const uint8_t *)data)[at], pat_byte(key, at));
}

/* ---- ranks, nodes ---- */

/* Nodes are SHMAM_NODE_SIZE consecutive ranks (all ranks of this test run on
 * one machine), or one node if it is unset. */
static int node_of(int r)
{
    const char *s = getenv("SHMAM_NODE_SIZE");
    int k = s && *s ? atoi(s) : 0;
    return k > 0 ? r / k : 0;
}

static unsigned long sum(const unsigned long *a)
{
    unsigned long s = 0;
    for (int r = 0; r < np; r++)
        s += a[r];
    return s;
}

/* ---- progress ---- */

static int all_arrived(void)
{
    for (int r = 0; r < np; r++)
        if (got[r] < want[r] || rgot[r] < rwant[r])
            return 0;
    return 1;
}

/* Handles messages until every source's count has reached what it must, or
 * until STUCK_S seconds pass without a message (then fails, naming what is
 * missing). */
static void wait_all(const char *what)
{
    time_t last = time(NULL);
    while (!all_arrived()) {
        int rc = am_wait(ep, 100);
        if (rc < 0)
            die("am_wait: %s", am_strerror(rc));
        if (rc > 0)
            last = time(NULL);
        int stuck = nerr ? 2 : STUCK_S; /* with errors seen, a loss is likely */
        if (time(NULL) - last < stuck)
            continue;
        char missing[400] = "";
        size_t n = 0;
        for (int r = 0; r < np && n < sizeof missing - 64; r++)
            n += (size_t)snprintf(missing + n, sizeof missing - n,
                                  " rank %d: %lu/%lu requests, %lu/%lu replies;", r, got[r],
                                  want[r], rgot[r], rwant[r]);
        die("no message for %d s while waiting for %s:%s (%lu error(s) so far%s%s)", stuck,
            what, missing, nerr, nerr ? ", first: " : "", nerr ? first_err : "");
    }
}

static void barrier(void)
{
    int rc = am_barrier(ep);
    if (rc != 0)
        die("am_barrier: %s", am_strerror(rc));
}

/* A handler of subtest `ph` checks that it is running. */
static int in_phase(int ph, const char *what, am_token_t *tok)
{
    if (phase == ph)
        return 1;
    bad("%s from rank %u outside its subtest", what, am_token_source(tok));
    return 0;
}

/* The source of a message, checked against the rank its arguments name. */
static int source(am_token_t *tok, const uint32_t *args, int nargs, const char *what)
{
    unsigned src = am_token_source(tok);
    if (src >= (unsigned)np || (int)src == me || nargs < 2 || args[1] != src) {
        bad("%s: token source %u, arguments name %d (%d arguments)", what, src,
            nargs >= 2 ? (int)args[1] : -1, nargs);
        return -1;
    }
    return (int)src;
}

/* Message seq from src is the next one expected (next[src]); moves on. */
static void in_order(uint32_t *next, int src, uint32_t seq, const char *what)
{
    if (seq != next[src])
        bad("%s from rank %d: number %u, want %u (lost, repeated or reordered)", what, src,
            seq, next[src]);
    next[src] = seq + 1;
}

/* ---- reports: counts to rank 0 ---- */

static void h_report(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                     size_t len)
{
    if (me != 0 || nargs != 3 || (int)args[0] != phase) {
        bad("report from rank %u: %d arguments, phase %u (running %d)",
            am_token_source(tok), nargs, nargs ? args[0] : 0, phase);
        return;
    }
    report_sum += (unsigned long)args[1] | (unsigned long)args[2] << 32;
    reports++;
}

/* The job's total of `mine` over all ranks, at rank 0 (0 elsewhere). */
static unsigned long gather(unsigned long mine)
{
    if (me != 0) {
        uint32_t a[3] = {(uint32_t)phase, (uint32_t)mine, (uint32_t)(mine >> 32)};
        sent(am_request(ep, 0, H_REPORT, a, 3), "report", 0);
        return 0;
    }
    time_t start = time(NULL);
    while (reports < (unsigned long)np - 1) {
        int rc = am_wait(ep, 100);
        if (rc < 0)
            die("am_wait: %s", am_strerror(rc));
        if (time(NULL) - start > STUCK_S)
            die("%lu of %d reports after %d s", reports, np - 1, STUCK_S);
    }
    return report_sum + mine;
}

/* ---- fifo ---- */

static void h_fifo(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    int src = source(tok, args, nargs, "fifo");
    if (!in_phase(P_FIFO, "fifo", tok) || src < 0)
        return;
    uint32_t seq = args[0];
    in_order(next_seq, src, seq, "fifo");
    if (nargs != 3 + (int)(seq % 6))
        bad("fifo %u from rank %d: %d arguments, want %u", seq, src, nargs, 3 + seq % 6);
    for (int i = 2; i < nargs; i++)
        if (args[i] != tu_mix32(key_of(src, me, seq), (uint32_t)i))
            bad("fifo %u from rank %d: argument %d is %08x", seq, src, i, args[i]);
    got[src]++;
}

static unsigned long run_fifo(void)
{
    uint32_t n = 2000 * (uint32_t)scale;
    for (int r = 0; r < np; r++)
        want[r] = r == me ? 0 : n;
    barrier();
    for (uint32_t seq = 0; seq < n; seq++)
        for (int d = 0; d < np; d++) {
            uint32_t a[AM_MAX_ARGS] = {seq, (uint32_t)me};
            for (int i = 2; i < AM_MAX_ARGS; i++)
                a[i] = tu_mix32(key_of(me, d, seq), (uint32_t)i);
            if (d != me)
                sent(am_request(ep, (unsigned)d, H_FIFO, a, 3 + (int)(seq % 6)), "fifo", d);
        }
    wait_all("fifo requests");
    return sum(got);
}

/* ---- bulk ---- */

static const size_t bulk_sizes[] = {0,    1,    2,    3,    5,    64,  1000,
                                    4095, 4096, 4097, 8000, 8191, 8192};
#define NBULK (sizeof bulk_sizes / sizeof bulk_sizes[0])

static void h_bulk(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    int src = source(tok, args, nargs, "bulk");
    if (!in_phase(P_BULK, "bulk", tok) || src < 0)
        return;
    uint32_t seq = args[0];
    in_order(next_seq, src, seq, "bulk");
    check_payload("bulk", src, seq, data, len, bulk_sizes[seq % NBULK],
                  key_of(src, me, seq));
    got[src]++;
}

static unsigned long run_bulk(void)
{
    uint32_t n = (uint32_t)(NBULK * 20 * scale);
    static uint8_t buf[AM_MAX_BULK + 1];
    for (int r = 0; r < np; r++)
        want[r] = r == me ? 0 : n;
    barrier();
    for (int d = 0; d < np; d++) {
        uint32_t a[2] = {0, (uint32_t)me};
        int rc = d == me
                     ? -EMSGSIZE
                     : am_request_bulk(ep, (unsigned)d, H_BULK, buf, AM_MAX_BULK + 1, a, 2);
        if (rc != -EMSGSIZE)
            die("a bulk request of %d bytes to rank %d: %s, want EMSGSIZE", AM_MAX_BULK + 1,
                d, am_err_name(rc));
    }
    for (uint32_t seq = 0; seq < n; seq++)
        for (int d = 0; d < np; d++) {
            uint32_t a[2] = {seq, (uint32_t)me};
            if (d == me)
                continue;
            pat_fill(buf, key_of(me, d, seq), bulk_sizes[seq % NBULK]);
            sent(am_request_bulk(ep, (unsigned)d, H_BULK, buf, bulk_sizes[seq % NBULK], a,
                                 2),
                 "bulk", d);
        }
    wait_all("bulk requests");
    return sum(got);
}

/* ---- long ---- */

/* Sizes of long messages; SIZE_MAX stands for the destination's long_max. */
static const size_t long_sizes[] = {0, 1, 4096, 8193, 65536, 300001, SIZE_MAX};
#define NLONG (sizeof long_sizes / sizeof long_sizes[0])

static size_t long_size(uint32_t seq)
{
    size_t s = long_sizes[seq % NLONG], max = am_ep_long_max(ep);
    return s > max ? max : s; /* the same long_max on every rank: one environment */
}

static void h_long(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    int src = source(tok, args, nargs, "long");
    if (!in_phase(P_LONG, "long", tok) || src < 0)
        return;
    uint32_t seq = args[0];
    in_order(next_seq, src, seq, "long");
    check_payload("long", src, seq, data, len, long_size(seq), key_of(src, me, seq));
    got[src]++;
}

static unsigned long run_long(void)
{
    uint32_t n = (uint32_t)(NLONG * 2 * scale);
    size_t max = am_ep_long_max(ep);
    uint8_t *buf = calloc(max + 1, 1);
    if (!buf)
        die("out of memory");
    for (int r = 0; r < np; r++)
        want[r] = r == me ? 0 : n;
    barrier();
    for (int d = 0; d < np; d++) {
        uint32_t a[2] = {0, (uint32_t)me};
        int rc = d == me ? -EMSGSIZE
                         : am_request_long(ep, (unsigned)d, H_LONG, buf, max + 1, a, 2);
        if (rc != -EMSGSIZE)
            die("a long request of long_max + 1 = %zu bytes to rank %d: %s, want EMSGSIZE",
                max + 1, d, am_err_name(rc));
    }
    for (uint32_t seq = 0; seq < n; seq++)
        for (int d = 0; d < np; d++) {
            uint32_t a[2] = {seq, (uint32_t)me};
            size_t len = long_size(seq);
            if (d == me)
                continue;
            pat_fill(buf, key_of(me, d, seq), len);
            sent(am_request_long(ep, (unsigned)d, H_LONG, len ? buf : NULL, len, a, 2),
                 "long", d);
        }
    wait_all("long requests");
    free(buf);
    return sum(got);
}

/* ---- long_at ---- */

static const size_t at_sizes[] = {0, 1, 7, 4096, 8192, 8193, 65536, 262145};
#define NAT (sizeof at_sizes / sizeof at_sizes[0])
static const uint32_t at_n = 2 * NAT; /* per sender (not scaled: they fill AREA) */

/* Made once, before the barrier that starts the first subtest using it. */
static void ensure_region(void)
{
    void *base;
    if (region)
        return;
    int rc = am_region_create(ep, (size_t)np * AREA, &base);
    if (rc != 0)
        die("am_region_create(%zu bytes): %s", (size_t)np * AREA, am_strerror(rc));
    region = base;
}

/* Where long_at message seq of each sender goes in its area: sizes laid one
 * after the other with a byte between, so most offsets are unaligned. */
static size_t at_offset(uint32_t seq)
{
    size_t off = 0;
    for (uint32_t i = 0; i < seq; i++)
        off += at_sizes[i % NAT] + 1;
    return off;
}

static void h_long_at(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                      size_t len)
{
    int src = source(tok, args, nargs, "long_at");
    if (!in_phase(P_LONG_AT, "long_at", tok) || src < 0)
        return;
    uint32_t seq = args[0];
    in_order(next_seq, src, seq, "long_at");
    if (seq >= at_n) {
        bad("long_at %u from rank %d: only %u are sent", seq, src, at_n);
        return;
    }
    char *at = region + (size_t)src * AREA + at_offset(seq);
    if (len && data != at)
        bad("long_at %u from rank %d: data at region + %td, want region + %td", seq, src,
            (char *)data - region, at - region);
    check_payload("long_at", src, seq, data, len, at_sizes[seq % NAT],
                  key_of(src, me, seq));
    got[src]++;
}

static void h_oob(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    bad("a one-copy long request past the region's end from rank %u was delivered "
        "(%zu bytes at region + %td)",
        am_token_source(tok), len, data ? (char *)data - region : -1);
}

/* After the out-of-bounds write from src: args[2] is 1 if it was sent (so the
 * receiver must have counted it, once every marker is in). */
static unsigned long oob_sent;
static void h_mark(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    int src = source(tok, args, nargs, "marker");
    if (!in_phase(P_LONG_AT, "marker", tok) || src < 0 || nargs != 3)
        return;
    oob_sent += args[2];
    got[src]++;
}

/* Every byte every sender wrote into this rank's region is still there. */
static void check_region(uint32_t n)
{
    for (int src = 0; src < np; src++)
        for (uint32_t seq = 0; src != me && seq < n; seq++) {
            const char *at = region + (size_t)src * AREA + at_offset(seq);
            check_payload("long_at (region after the barrier)", src, seq, at,
                          at_sizes[seq % NAT], at_sizes[seq % NAT], key_of(src, me, seq));
        }
}

/* A write past the end of each other rank's region: refused at once by a rank
 * of our node, and by another node's either so or by the receiver, whom a
 * marker then tells. */
static void send_out_of_bounds(void)
{
    static uint8_t junk[16];
    size_t off = (size_t)np * AREA - 8;
    for (int d = 0; d < np; d++) {
        uint32_t a[3] = {0, (uint32_t)me, 0};
        if (d == me)
            continue;
        int rc = am_request_long_at(ep, (unsigned)d, H_OOB, junk, sizeof junk, off, a, 2);
        if (rc != -EMSGSIZE && (node_of(d) == node_of(me) || rc != 0))
            die("16 bytes at %zu into rank %d's region of %zu (rank %d of node %d): %s, "
                "want "
                "EMSGSIZE%s",
                off, d, (size_t)np * AREA, d, node_of(d), am_err_name(rc),
                node_of(d) == node_of(me) ? "" : " or 0");
        a[2] = rc == 0;
        sent(am_request(ep, (unsigned)d, H_MARK, a, 3), "marker", d);
    }
}

static unsigned long run_long_at(void)
{
    uint32_t n = at_n;
    size_t max = 0;
    ensure_region();
    for (size_t i = 0; i < NAT; i++)
        max = at_sizes[i] > max ? at_sizes[i] : max;
    uint8_t *buf = malloc(max);
    if (!buf)
        die("out of memory");
    for (int r = 0; r < np; r++)
        want[r] = r == me ? 0 : n;
    barrier();
    for (uint32_t seq = 0; seq < n; seq++)
        for (int d = 0; d < np; d++) {
            uint32_t a[2] = {seq, (uint32_t)me};
            size_t len = at_sizes[seq % NAT];
            if (d == me)
                continue;
            pat_fill(buf, key_of(me, d, seq), len);
            sent(am_request_long_at(ep, (unsigned)d, H_LONG_AT, buf, len,
                                    (size_t)me * AREA + at_offset(seq), a, 2),
                 "long_at", d);
        }
    wait_all("one-copy long requests");
    /* Before the barrier: once past it, others send their writes past the end. */
    unsigned long bad_before = am_ep_bad_packets(ep);
    barrier();
    check_region(n);
    for (int r = 0; r < np; r++)
        want[r] = r == me ? 0 : n + 1; /* and a marker */
    send_out_of_bounds();
    wait_all("markers");
    if (am_ep_bad_packets(ep) - bad_before != oob_sent)
        die("%lu write(s) past the region's end were sent here, and %lu bad packet(s) "
            "counted",
            oob_sent, am_ep_bad_packets(ep) - bad_before);
    free(buf);
    return sum(got);
}

/* ---- replies ---- */

/* Reply kinds by sequence number: short, bulk, long; payload sizes. */
static size_t reply_len(uint32_t seq)
{
    return seq % 3 == 0 ? 0 : seq % 3 == 1 ? 1 + seq * 37 % AM_MAX_BULK : seq * 211 % 40000;
}

static void h_req(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    static uint8_t buf[40000];
    int src = source(tok, args, nargs, "request");
    if (!in_phase(P_REPLIES, "request", tok) || src < 0 || nargs != 2)
        return;
    uint32_t seq = args[0], a[3] = {seq, (uint32_t)me, tu_mix32(key_of(src, me, seq), 1)};
    size_t n = reply_len(seq);
    in_order(next_seq, src, seq, "request");
    got[src]++;
    pat_fill(buf, key_of(me, src, seq), n);
    int rc = seq % 3 == 0   ? am_reply(tok, H_REP, a, 3)
             : seq % 3 == 1 ? am_reply_bulk(tok, H_REP, buf, n, a, 3)
                            : am_reply_long(tok, H_REP, buf, n, a, 3);
    if (rc != 0)
        bad("reply %u to rank %d: %s", seq, src, am_strerror(rc));
    rc = seq % 2 ? am_reply(tok, H_REP, a, 3) : am_reply_long(tok, H_REP, buf, n, a, 3);
    if (rc != -EALREADY)
        bad("a second reply to request %u of rank %d: %s, want EALREADY", seq, src,
            am_err_name(rc));
    rc = am_request(ep, (unsigned)src, H_REQ, a, 2);
    if (rc != -EDEADLK)
        bad("a request from a request handler: %s, want EDEADLK", am_err_name(rc));
}

static void h_rep(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
    int src = source(tok, args, nargs, "reply");
    if (!in_phase(P_REPLIES, "reply", tok) || src < 0)
        return;
    uint32_t seq = args[0];
    in_order(rnext_seq, src, seq, "reply");
    if (nargs != 3 || args[2] != tu_mix32(key_of(me, src, seq), 1))
        bad("reply %u from rank %d: %d arguments, check word %08x", seq, src, nargs,
            nargs == 3 ? args[2] : 0);
    check_payload("reply", src, seq, seq % 3 ? data : NULL, len, reply_len(seq),
                  key_of(src, me, seq));
    int rc = am_reply(tok, H_REP, args, nargs);
    if (rc != -EDEADLK)
        bad("a reply from a reply handler: %s, want EDEADLK", am_err_name(rc));
    rgot[src]++;
}

static unsigned long run_replies(void)
{
    uint32_t n = 600 * (uint32_t)scale;
    for (int r = 0; r < np; r++)
        want[r] = rwant[r] = r == me ? 0 : n;
    barrier();
    for (uint32_t seq = 0; seq < n; seq++)
        for (int d = 0; d < np; d++) {
            uint32_t a[2] = {seq, (uint32_t)me};
            if (d != me)
                sent(am_request(ep, (unsigned)d, H_REQ, a, 2), "request", d);
        }
    wait_all("requests and replies");
    return sum(got) + sum(rgot);
}

/* ---- barrier ---- */

static uint32_t counter, round_no;

static void h_query(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                    size_t len)
{
    int src = source(tok, args, nargs, "query");
    if (!in_phase(P_BARRIER, "query", tok) || src < 0)
        return;
    uint32_t a[3] = {args[0], (uint32_t)me, counter};
    int rc = am_reply(tok, H_ANSWER, a, 3);
    if (rc != 0)
        bad("answer to rank %d: %s", src, am_strerror(rc));
    got[src]++;
}

static void h_answer(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                     size_t len)
{
    int src = source(tok, args, nargs, "answer");
    if (!in_phase(P_BARRIER, "answer", tok) || src < 0 || nargs != 3)
        return;
    if (args[0] != round_no)
        bad("answer from rank %d for round %u in round %u", src, args[0], round_no);
    else if (args[2] != round_no && args[2] != round_no + 1)
        bad("round %u: after the barrier rank %d's counter is %u, want %u or %u", round_no,
            src, args[2], round_no, round_no + 1);
    rgot[src]++;
}

static unsigned long run_barrier(void)
{
    uint32_t rounds = 30 * (uint32_t)scale;
    barrier();
    for (round_no = 1; round_no <= rounds; round_no++) {
        if ((uint32_t)me == round_no % (uint32_t)np) {
            struct timespec late = {0, 3000000};
            nanosleep(&late, NULL); /* the others wait at the barrier meanwhile */
        }
        counter = round_no;
        barrier();
        for (int d = 0; d < np; d++) {
            uint32_t a[2] = {round_no, (uint32_t)me};
            want[d] = rwant[d] = d == me ? 0 : round_no;
            if (d != me)
                sent(am_request(ep, (unsigned)d, H_QUERY, a, 2), "query", d);
        }
        wait_all("answers");
    }
    return sum(got) + sum(rgot);
}

/* ---- mixed ---- */

enum mixed_kind { M_SHORT, M_BULK, M_LONG, M_AT };

/* Message seq of sender src to rank 0: its kind, from a hash (half short), and
 * in *len its payload's length (one-copy ones shorter under SHMAM_STRESS, so
 * that a sender's all fit its area of the region). */
static enum mixed_kind mixed_kind(int src, uint32_t seq, size_t *len)
{
    uint32_t h = tu_mix32(key_of(src, 0, seq), 7);
    enum mixed_kind k = h % 8 < 4   ? M_SHORT
                        : h % 8 < 6 ? M_BULK
                        : h % 8 < 7 ? M_LONG
                                    : M_AT;
    *len = k == M_BULK   ? (h >> 8) % (AM_MAX_BULK + 1)
           : k == M_LONG ? (h >> 8) % 200000
           : k == M_AT   ? (h >> 8) % (4096 / (unsigned)scale + 1) /* fits AREA */
                         : 0;
    return k;
}

/* Where sender src's one-copy message seq goes: after its earlier ones. */
static size_t mixed_offset(int src, uint32_t seq)
{
    size_t off = 0, len;
    for (uint32_t i = 0; i < seq; i++)
        if (mixed_kind(src, i, &len) == M_AT)
            off += len;
    return (size_t)src * AREA + off;
}

static size_t mixed_next_off[MAXP]; /* the receiver's running mixed_offset */

static void h_mixed(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                    size_t len)
{
    static const char *const kinds[] = {"short", "bulk", "long", "one-copy long"};
    int src = source(tok, args, nargs, "mixed");
    if (!in_phase(P_MIXED, "mixed", tok) || src < 0 || nargs != 3)
        return;
    uint32_t seq = args[0];
    size_t want_len;
    enum mixed_kind k = mixed_kind(src, seq, &want_len);
    in_order(next_seq, src, seq, "mixed");
    if (args[2] != (uint32_t)k)
        bad("mixed %u from rank %d: a %s message, want %s", seq, src,
            args[2] < 4 ? kinds[args[2]] : "?", kinds[k]);
    else if (k == M_AT && want_len && data != region + mixed_next_off[src])
        bad("mixed %u from rank %d: one-copy data at region + %td, want + %zu", seq, src,
            (char *)data - region, mixed_next_off[src]);
    else
        check_payload(kinds[k], src, seq, k == M_SHORT ? NULL : data, len, want_len,
                      key_of(src, 0, seq));
    if (k == M_AT)
        mixed_next_off[src] += want_len;
    got[src]++;
}

static unsigned long run_mixed(void)
{
    uint32_t n = 1000 * (uint32_t)scale;
    uint8_t *buf = malloc(200000);
    if (!buf)
        die("out of memory");
    ensure_region();
    for (int src = 1; src < np; src++)
        if (mixed_offset(src, n) - (size_t)src * AREA > AREA)
            die("%u mixed messages of rank %d do not fit its area of the region", n, src);
    for (int r = 0; r < np; r++) {
        want[r] = me == 0 && r != 0 ? n : 0;
        mixed_next_off[r] = (size_t)r * AREA;
    }
    barrier();
    size_t off = mixed_offset(me, 0);
    for (uint32_t seq = 0; me != 0 && seq < n; seq++) {
        size_t len;
        enum mixed_kind k = mixed_kind(me, seq, &len);
        uint32_t a[3] = {seq, (uint32_t)me, (uint32_t)k};
        pat_fill(buf, key_of(me, 0, seq), len);
        int rc = k == M_SHORT  ? am_request(ep, 0, H_MIXED, a, 3)
                 : k == M_BULK ? am_request_bulk(ep, 0, H_MIXED, buf, len, a, 3)
                 : k == M_LONG ? am_request_long(ep, 0, H_MIXED, buf, len, a, 3)
                               : am_request_long_at(ep, 0, H_MIXED, buf, len, off, a, 3);
        sent(rc, "mixed", 0);
        off += k == M_AT ? len : 0;
    }
    wait_all("mixed requests");
    free(buf);
    return sum(got);
}

/* ---- hang ---- */

static _Noreturn void run_hang(int with_region)
{
    if (with_region)
        ensure_region();
    barrier();
    printf("mpi_delivery %s: rank %d pid %ld ready\n", label, me, (long)getpid());
    fflush(stdout);
    for (time_t end = time(NULL) + 300; time(NULL) < end;)
        if (am_wait(ep, 1000) < 0)
            break;
    die("still running after 300 s");
}

/* ---- main ---- */

struct subtest {
    const char *name;
    unsigned long (*run)(void);
};

static const struct subtest subtests[] = {
    [P_FIFO - 1] = {"fifo", run_fifo},          [P_BULK - 1] = {"bulk", run_bulk},
    [P_LONG - 1] = {"long", run_long},          [P_LONG_AT - 1] = {"long_at", run_long_at},
    [P_REPLIES - 1] = {"replies", run_replies}, [P_BARRIER - 1] = {"barrier", run_barrier},
    [P_MIXED - 1] = {"mixed", run_mixed},
};
#define NSUB (int)(sizeof subtests / sizeof subtests[0])

static void run_subtest(int i)
{
    memset(got, 0, sizeof got);
    memset(want, 0, sizeof want);
    memset(rgot, 0, sizeof rgot);
    memset(rwant, 0, sizeof rwant);
    memset(next_seq, 0, sizeof next_seq);
    memset(rnext_seq, 0, sizeof rnext_seq);
    reports = report_sum = oob_sent = 0;
    label = subtests[i].name;
    phase = i + 1;
    unsigned long mine = subtests[i].run(); /* begins with a barrier */
    check_errors();
    unsigned long total = gather(mine);
    barrier();
    phase = 0;
    if (me == 0)
        printf("mpi_delivery %s: ok %lu messages\n", label, total);
    fflush(stdout);
}

static void h_park(am_token_t *tok, const uint32_t *args, int nargs, void *data, size_t len)
{
}

static void set_handlers(void)
{
    static const am_handler_t h[] = {
        [H_FIFO] = h_fifo,       [H_BULK] = h_bulk,   [H_LONG] = h_long,
        [H_LONG_AT] = h_long_at, [H_OOB] = h_oob,     [H_MARK] = h_mark,
        [H_REQ] = h_req,         [H_REP] = h_rep,     [H_QUERY] = h_query,
        [H_ANSWER] = h_answer,   [H_MIXED] = h_mixed, [H_REPORT] = h_report,
        [H_PARK] = h_park,
    };
    for (unsigned i = 1; i < sizeof h / sizeof h[0]; i++)
        if (am_set_handler(ep, i, h[i]) != 0)
            die("am_set_handler(%u) failed", i);
}

static _Noreturn void usage(void)
{
    fprintf(stderr,
            "usage: mpiexec -n P mpi_delivery SUBTEST...  (P >= 2, at most %d)\n"
            "subtests:",
            MAXP);
    for (int i = 0; i < NSUB; i++)
        fprintf(stderr, " %s", subtests[i].name);
    fprintf(stderr, " all hang hang_region\n");
    exit(2);
}

/* The parking modes: where rank 3 parks, and the line it prints there. */
enum park { PARK_INIT, PARK_SEND, PARK_CLOSE, PARKS };
static const struct {
    const char *mode;
    enum am_hook where;
} parks[PARKS] = {
    [PARK_INIT] = {"hang_init", AM_HOOK_CREATING},
    [PARK_SEND] = {"hang_send", AM_HOOK_NET_SENT},
    [PARK_CLOSE] = {"hang_close", AM_HOOK_NET_CLOSING},
};
static int park_mode = -1; /* an enum park, or -1 */

/* Rank 3 parks at its mode's hook (the others pass). */
static void park(enum am_hook where)
{
    const char *r = getenv("PMI_RANK");
    if (park_mode < 0 || where != parks[park_mode].where || !r || atoi(r) != 3)
        return;
    printf("mpi_delivery %s: rank 3 pid %ld ready\n", parks[park_mode].mode,
           (long)getpid());
    fflush(stdout);
    for (;;)
        pause();
}

/* After am_init, what a parking mode does (hang_init never gets here):
 * hang_send: rank 3 sends and parks, the others wait in a barrier it never
 * joins; hang_close: everyone sends everyone one request and closes, rank 3
 * parking in its close, the others exiting 0 if their close can end. */
static _Noreturn void run_park(void)
{
    static char big[256 << 10];
    uint32_t a[2] = {0, 0};
    if (park_mode == PARK_SEND && me == 3)
        am_request_long(ep, 0, H_PARK, big, sizeof big, a, 2);
    else if (park_mode == PARK_CLOSE)
        for (int d = 0; d < np; d++)
            if (d != me)
                am_request(ep, (unsigned)d, H_PARK, a, 2);
    if (park_mode == PARK_SEND) { /* rank 3 never comes */
        am_barrier(ep);
        die("hang_send: rank %d got past a barrier without rank 3", me);
    }
    am_finalize(ep); /* rank 3 parks in it; the others may get through */
    exit(0);
}

int main(int argc, char **argv)
{
    const char *s = getenv("SHMAM_STRESS");
    for (int i = 0; argc > 1 && i < PARKS; i++)
        if (!strcmp(argv[1], parks[i].mode))
            park_mode = i, am__claim_stall_hook = park;
    int rc = am_init(&argc, &argv, &ep);
    if (rc != 0)
        die("am_init: %s", am_strerror(rc));
    me = am_rank();
    np = am_nprocs();
    scale = s && atoi(s) > 0 ? atoi(s) : 1;
    if (argc < 2 || np < 2 || np > MAXP)
        usage();
    set_handlers();
    if (park_mode >= 0)
        run_park();
    for (int a = 1; a < argc; a++) {
        int found = 0;
        if (!strcmp(argv[a], "hang") || !strcmp(argv[a], "hang_region")) {
            label = argv[a];
            run_hang(!strcmp(argv[a], "hang_region"));
        }
        for (int i = 0; i < NSUB; i++)
            if (!strcmp(argv[a], "all") || !strcmp(argv[a], subtests[i].name)) {
                run_subtest(i);
                found = 1;
            }
        if (!found)
            usage();
    }
    label = "end";
    barrier(); /* a message that came late to a subtest would show now */
    am_poll(ep);
    check_errors();
    rc = am_finalize(ep);
    if (rc != 0)
        die("am_finalize: %s", am_strerror(rc));
    return 0;
}
