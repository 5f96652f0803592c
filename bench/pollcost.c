/*
 * pollcost.c - what a poll and an endpoint's memory cost against the number of
 * senders, for the shared many-to-one queues (mpsc) and every per-sender
 * channel kind.  Lumetta and Culler chose shared queues for memory
 * and polling cost ("polling each additional queue incurs a significant
 * fraction of total message overhead"); shmam's channels keep a summary bit
 * per sender with work, so that a poll looks only at channels that had
 * messages lately.  This measures what that leaves.
 *
 *   shmamrun -n 2 --bind build/bench/pollcost [--kinds LIST|all] [--senders LIST]
 *       [--mem-senders LIST] [--rounds R] [--quick] [--header] [--verbose]
 *
 * Endpoints.  Rank 0 receives, rank 1 sends.  For every kind K of --kinds (a
 * comma-separated list of am_queue_names, or all: mpsc, lamport, fastforward,
 * mcring, bqueue) and every count S of --senders (default 1,2,4,8,16,32,64,
 * each at most 64),
 * rank 0 creates a receiver "JOB.rC" (C the configuration's number) with queue
 * K, max_senders the largest S and long_max 4096 (the heaps are never touched
 * by a poll; small, the configurations' segments stay small); mpsc takes the
 * job's claim algorithm (shmamrun -a, default lockfree).  Rank 1 creates the
 * largest S sender endpoints "JOB.sJ" (small: nobody sends to them) and sender J
 * maps every receiver whose S exceeds J, at the receiver's number: a receiver
 * of S has exactly S registered senders.  Sender 0 is the active one.  Every
 * "JOB.*" name goes with the job (shmamrun).
 *
 * Method.  One unmeasured warm-up round at a tenth of the counts, then R
 * rounds (--rounds, default 5; --quick 3), each measuring every configuration
 * once, the configurations in ABBA order (bench/common/stat.h); a round's
 * figure is a mean, the row's value the median over the rounds, the spread
 * the lowest and highest round.  Per configuration, rank 0 measures:
 *   poll_idle_ns    nobody sending: after 256 untimed polls (more than the 64
 *                   empty visits after which a channel's summary bit is
 *                   cleared), N polls (--quick: N/4; default 8192, a multiple
 *                   of 1024, the period of the owner's rarest chores on idle
 *                   polls, so those count at their rate) inside one clock
 *                   pair, over N.
 *   poll_one_ns     one sender active: rank 1 sends P one-way requests
 *                   (default 2000, --quick 500) from sender 0, each after a
 *                   busy wait of 2 us so that a poll finds at most one; rank
 *                   0 times every poll: the mean of the polls that ran
 *                   exactly one message, less one clock read (calibrated at
 *                   start: the median of 1001 back-to-back pairs); if no poll
 *                   ran exactly one (a loaded machine), the time per message
 *                   of the polls that ran any, said on stderr.  The
 *                   handler only checks and counts.
 *   poll_recent_ns  every sender sent lately: rank 1 sends one request from
 *                   each of the S senders, rank 0 polls until all S have run,
 *                   then times 16 empty polls in one clock pair; B bursts
 *                   (default 64, --quick 16).  A channel's bit stays set for
 *                   64 empty visits after its last message, so each of those
 *                   polls looks at S empty channels; the shared queues look
 *                   at one head per queue, whatever S.
 * and, per round, the quotients poll_X_vs_mpsc_S (a kind against mpsc with
 * the same S, when mpsc is measured) and poll_X_vs_1_S (against the same kind
 * with S = 1, when 1 is measured), for X = idle, one, recent.
 *
 * Tables of senders, by rank 0 after the rounds: for every table size T of
 * --mem-senders (default 1,2,4,8,16,32,64,1024: 1024 is the largest
 * max_senders), an endpoint "JOB.mK" of every kind K with max_senders T, the
 * POSIX backend and the environment's options otherwise (defaults: 128
 * packets and 16 bulk blocks per shared queue, 64 packets and 4 bulk blocks
 * per channel, long_max 1 MiB, whose two heaps every kind has):
 *   seg_bytes_T            the size of its file /dev/shm/shmam-NAME
 *                          (allocated whole at creation)
 *   poll_idle_table_ns_T   its idle polls as poll_idle_ns, nobody registered,
 *                          R rounds after a warm-up, the kinds ABBA: what the
 *                          table itself costs an idle poll (the summary's
 *                          words, the owner's chores over its entries)
 *   poll_idle_table_vs_mpsc_T  per round, against mpsc's
 * then the endpoints of T are destroyed (at 1024, a third of a GB of /dev/shm).
 *
 * Control.  Rank 0 drives: it sends rank 1 a command over the job endpoints
 * (send P paced requests to receiver C; send a burst to C; stop) and waits
 * for the messages at C; rank 1 runs one command at a time, outside handlers.
 * Checks: every message names the receiver it arrives at, a paced stream's
 * sequence numbers come in order, a burst's senders are each heard once;
 * rank 1's count of messages sent equals rank 0's received; no corrupt packet
 * at any receiver; an idle or recent poll that runs a message is an error; 10
 * s without an awaited message is a stall.  Any of these exits 1 with
 * "pollcost: FAILED" on stderr.
 *
 * Rows (rank 0; the header line first with --header), for every kind K and S:
 *   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 *   pollcost,K,SHM,2,PIN,N*R,poll_idle_ns_S,V,ns,LO-HI
 *   pollcost,K,SHM,2,PIN,P*R,poll_one_ns_S,V,ns,LO-HI
 *   pollcost,K,SHM,2,PIN,16*B*R,poll_recent_ns_S,V,ns,LO-HI
 *   pollcost,K,SHM,2,PIN,...,poll_X_vs_mpsc_S,Q,ratio,LO-HI   (K not mpsc)
 *   pollcost,K,SHM,2,PIN,...,poll_X_vs_1_S,Q,ratio,LO-HI      (S not 1)
 *   pollcost,K,posix,2,PIN,1,seg_bytes_T,V,bytes,V-V          (--mem-senders)
 *   pollcost,K,posix,2,PIN,N*R,poll_idle_table_ns_T,V,ns,LO-HI
 *   pollcost,K,posix,2,PIN,N*R,poll_idle_table_vs_mpsc_T,Q,ratio,LO-HI
 * iters is the polls (messages, for poll_one) a figure stands on over all
 * rounds; PIN 1 when the two ranks are bound to two CPUs (--bind), without
 * which the times mean little.  --verbose prints every round on stderr.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shmam.h"
#include "common/am_harness.h"
#include "common/measure.h"
#include "common/stat.h"

enum { H_MSG = 1, H_CTL, H_HELLO, H_HELLO_BACK, H_DONE };
enum { OP_STREAM, OP_BURST, OP_STOP };
enum { M_IDLE, M_ONE, M_RECENT, M_N };
enum { MAX_KINDS = 8, MAX_S = 16, MAX_CONF = MAX_KINDS * MAX_S, MAX_ROUNDS = 51 };
enum { WARM = MAX_ROUNDS, SETTLE = 256, RECENT_POLLS = 16, GAP_NS = 2000 };
#define STALL_S 10.0
#define BURST_MAX 64    /* senders of a configuration: a burst's are bits of a word */
#define SENDER_MAX 1024 /* the largest max_senders (shmam.h) */

struct counts {
    long idle, stream, bursts;
};

struct list {
    int n;
    unsigned v[MAX_S];
};

static am_ep_t *ep; /* the job's endpoint: control */
static int rank, pinned, header, verbose;
static unsigned yield_after = 256; /* the spin policy, once hello has run */
static long rounds = 5;
static const char *kind[MAX_KINDS];
static int nkinds;
static struct list senders = {7, {1, 2, 4, 8, 16, 32, 64}};
static struct list mem_senders = {8, {1, 2, 4, 8, 16, 32, 64, 1024}};
static unsigned smax;          /* the largest of senders */
static am_ep_t *rx[MAX_CONF];  /* rank 0: configuration c's receiver */
static am_ep_t *tx[BURST_MAX]; /* rank 1: the senders */
static double clk;             /* one clock read, ns */
static double fig[MAX_CONF][MAX_ROUNDS + 1][M_N];
static const char *const metric_name[M_N] = {"poll_idle", "poll_one", "poll_recent"};

/* Rank 0's tally of what the receivers ran; rank 1's command and count. */
static int cur;              /* the configuration being measured */
static unsigned long got;    /* messages run in the current phase */
static unsigned long total;  /* and in all */
static uint32_t expect;      /* a stream's next sequence number */
static uint64_t burst_seen;  /* a burst's senders heard, a bit each */
static int bursting;         /* the current phase is a burst */
static unsigned long errors; /* messages out of place, or run by an empty poll */
static uint32_t cmd[3];      /* rank 1: op, configuration, count */
static int cmd_due, done_due, peer_cpu = -2;
static unsigned long sent, peer_sent;

/* One wait step of the policy (am_harness.h); 1 if it yielded. */
static int relax(unsigned *spins)
{
    return bm_relax(spins, yield_after);
}

static inline double now_ns(void)
{
    return (double)bm_now_ns();
}

static int conf_kind(int c)
{
    return c / senders.n;
}

static unsigned conf_senders(int c)
{
    return senders.v[c % senders.n];
}

static int kind_index(const char *k)
{
    for (int i = 0; i < nkinds; i++)
        if (strcmp(kind[i], k) == 0)
            return i;
    return -1;
}

/* ---- handlers ---- */

/* A receiver's message: (configuration, sequence number or sender). */
static void on_msg(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    got++, total++;
    if (nargs != 2 || a[0] != (uint32_t)cur) {
        errors++;
        return;
    }
    if (!bursting) {
        errors += a[1] != expect;
        expect = a[1] + 1;
    } else if (a[1] >= BURST_MAX || (burst_seen >> a[1] & 1)) {
        errors++;
    } else {
        burst_seen |= (uint64_t)1 << a[1];
    }
}

/* Rank 1: a command, run by serve() outside the handler. */
static void on_ctl(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    if (nargs != 3 || cmd_due)
        bm_die("a command while one was due, or a malformed one", 0);
    memcpy(cmd, a, sizeof cmd);
    cmd_due = 1;
}

/* Rank 1 learns rank 0's CPU and answers with its own. */
static void on_hello(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    peer_cpu = nargs == 1 ? (int)a[0] - 1 : -1;
    uint32_t mine = (uint32_t)(bm_pinned_cpu() + 1);
    bm_check(am_reply(t, H_HELLO_BACK, &mine, 1), "am_reply");
}

static void on_hello_back(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    peer_cpu = nargs == 1 ? (int)a[0] - 1 : -1;
}

/* Rank 0: rank 1's count of messages sent, at the end. */
static void on_done(am_token_t *t, const uint32_t *a, int nargs, void *d, size_t len)
{
    peer_sent = nargs == 2 ? (unsigned long)a[0] | (unsigned long)a[1] << 32 : ~0ul;
    done_due = 1;
}

/* ---- rank 1, the senders ---- */

static void send_one(unsigned j, int c, uint32_t arg)
{
    uint32_t a[2] = {(uint32_t)c, arg};
    bm_check(am_request(tx[j], (unsigned)c, H_MSG, a, 2), "am_request");
    sent++;
}

/* n requests from sender 0 to receiver c, each after a wait of GAP_NS
 * (busy when pinned, else a yield). */
static void stream(int c, uint32_t n)
{
    static uint32_t seq;
    for (uint32_t i = 0; i < n; i++) {
        double end = now_ns() + GAP_NS;
        if (!pinned)
            sched_yield();
        while (pinned && now_ns() < end)
            ;
        send_one(0, c, seq++);
    }
}

static void burst(int c)
{
    for (unsigned j = 0; j < conf_senders(c); j++)
        send_one(j, c, j);
}

/* Run rank 0's commands until it says stop; then report what was sent. */
static void serve(void)
{
    for (unsigned spins = 0;;) {
        if (!cmd_due) {
            if (pinned ? am_poll(ep) == 0 : am_wait(ep, 100) == 0)
                relax(&spins);
            continue;
        }
        cmd_due = 0;
        if (cmd[0] == OP_STOP)
            break;
        if (cmd[1] >= (uint32_t)(nkinds * senders.n))
            bm_die("a command for no configuration", 0);
        if (cmd[0] == OP_STREAM)
            stream((int)cmd[1], cmd[2]);
        else
            burst((int)cmd[1]);
    }
    uint32_t a[2] = {(uint32_t)sent, (uint32_t)(sent >> 32)};
    bm_check(am_request(ep, 0, H_DONE, a, 2), "am_request (done)");
}

/* ---- rank 0, the receiver ---- */

static void command(uint32_t op, int c, uint32_t n)
{
    uint32_t a[3] = {op, (uint32_t)c, n};
    bm_check(am_request(ep, 1, H_CTL, a, 3), "am_request (command)");
}

static int poll_conf(int c)
{
    return bm_poll(rx[c]);
}

static void stall(int c, unsigned long want)
{
    fprintf(stderr, "pollcost: FAILED: stall at %s with %u senders: %lu of %lu messages\n",
            kind[conf_kind(c)], conf_senders(c), got, want);
    exit(1);
}

/* Polls receiver c until `got` reaches want; a stall after STALL_S. */
static void await_msgs(int c, unsigned long want)
{
    double since = bm_now_s();
    for (unsigned spins = 0; got < want;) {
        if (poll_conf(c) > 0) {
            since = bm_now_s(), spins = 0;
            continue;
        }
        if (relax(&spins) && bm_now_s() - since > STALL_S)
            stall(c, want);
    }
}

/* n empty polls of endpoint e in one clock pair; ns per poll.  Any message
 * run is an error (nobody sends now). */
static double timed_empty(am_ep_t *e, long n)
{
    int ran = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        ran += bm_poll(e);
    double t = now_ns() - t0 - clk;
    errors += ran;
    return t / (double)n;
}

static double idle_polls(am_ep_t *e, long n)
{
    timed_empty(e, SETTLE);
    return timed_empty(e, n);
}

/* A stream of n paced requests from sender 0, every poll timed: the mean of
 * the polls that ran exactly one message.  If none did (a loaded machine: the
 * receiver descheduled while the messages piled up), the mean time per
 * message of the polls that ran any (unpinned, if those were all awaited
 * untimed: of the whole stream), which the round's spread then shows: a
 * round always has a positive figure, so every row is printed.  Unpinned,
 * the rest is awaited untimed (with yields): the figure would mean little. */
static double one_polls(int c, long n)
{
    double sum = 0, since = now_ns(), start = since, sum_any = 0;
    long ones = 0, msgs_any = 0;
    got = 0, bursting = 0;
    command(OP_STREAM, c, (uint32_t)n);
    while (got < (unsigned long)n) {
        unsigned long before = got;
        double t0 = now_ns();
        int k = poll_conf(c);
        double t1 = now_ns();
        if (k == 1 && got == before + 1)
            sum += t1 - t0, ones++;
        if (k > 0)
            since = t1, sum_any += t1 - t0 - clk, msgs_any += (long)(got - before);
        else if (!pinned)
            await_msgs(c, (unsigned long)n);
        else if (t1 - since > STALL_S * 1e9)
            stall(c, (unsigned long)n);
    }
    if (ones)
        return sum / (double)ones - clk;
    fprintf(stderr,
            "pollcost: configuration %d: no poll ran exactly one message; this "
            "round's poll_one is a time per message of the stream\n",
            c);
    return msgs_any ? sum_any / (double)msgs_any : (now_ns() - start) / (double)n;
}

/* b bursts of one request from each sender; after each, RECENT_POLLS empty
 * polls in one clock pair. */
static double recent_polls(int c, long b)
{
    double sum = 0;
    for (long i = 0; i < b; i++) {
        got = 0, bursting = 1, burst_seen = 0;
        command(OP_BURST, c, 0);
        await_msgs(c, conf_senders(c));
        sum += timed_empty(rx[c], RECENT_POLLS);
    }
    bursting = 0;
    return sum / (double)b;
}

static void measure(int c, const struct counts *n, double *f)
{
    cur = c;
    f[M_IDLE] = idle_polls(rx[c], n->idle);
    f[M_ONE] = one_polls(c, n->stream);
    f[M_RECENT] = recent_polls(c, n->bursts);
    if (verbose)
        fprintf(stderr, "pollcost: %s, %u senders: idle %.1f, one %.1f, recent %.1f ns\n",
                kind[conf_kind(c)], conf_senders(c), f[M_IDLE], f[M_ONE], f[M_RECENT]);
}

static void run_round(int k, const struct counts *n)
{
    int nc = nkinds * senders.n;
    for (int j = 0; j < nc; j++) {
        int c = bm_abba(k, j, nc);
        measure(c, n, fig[c][k]);
    }
}

/* ---- endpoints ---- */

/* "JOB.<tag><i>" from the job endpoint's name "JOB.RANK". */
static void name_of(char *buf, size_t n, char tag, unsigned i)
{
    const char *job = am_ep_name(ep), *dot = strrchr(job, '.');
    int len = snprintf(buf, n, "%.*s.%c%u", (int)(dot ? dot - job : 0), job, tag, i);
    if (!dot || len < 0 || (size_t)len >= n)
        bm_die("endpoint name too long", 0);
}

static void open_receivers(void)
{
    char name[AM_MAX_NAME + 1];
    for (int c = 0; c < nkinds * senders.n; c++) {
        struct am_ep_opts o = {
            .queue = kind[conf_kind(c)], .max_senders = smax, .long_max = 4096};
        name_of(name, sizeof name, 'r', (unsigned)c);
        bm_check(am_ep_create(name, &o, &rx[c]), "cannot create a receiver");
        bm_check(am_set_handler(rx[c], H_MSG, on_msg), "am_set_handler");
    }
}

/* Rank 1: sender j maps every receiver with more than j senders. */
static void open_senders(void)
{
    char name[AM_MAX_NAME + 1];
    struct am_ep_opts o = {.queue = "mpsc",
                           .packets = 2,
                           .bulk_blocks = 1,
                           .max_senders = 1,
                           .long_max = 4096};
    for (unsigned j = 0; j < smax; j++) {
        name_of(name, sizeof name, 's', j);
        bm_check(am_ep_create(name, &o, &tx[j]), "cannot create a sender");
        for (int c = 0; c < nkinds * senders.n; c++) {
            if (conf_senders(c) <= j)
                continue;
            name_of(name, sizeof name, 'r', (unsigned)c);
            bm_check(am_ep_map(tx[j], (unsigned)c, name), "cannot map a receiver");
        }
    }
}

static void close_all(void)
{
    for (unsigned j = 0; rank == 1 && j < smax; j++)
        am_ep_destroy(tx[j]);
    bm_check(am_barrier(ep), "am_barrier"); /* no sender left */
    for (int c = 0; rank == 0 && c < nkinds * senders.n; c++)
        am_ep_destroy(rx[c]);
}

/* Both ranks learn both CPUs (a request and its reply). */
static void hello(void)
{
    int mine = bm_pinned_cpu();
    if (rank == 0) {
        uint32_t a = (uint32_t)(mine + 1);
        bm_check(am_request(ep, 1, H_HELLO, &a, 1), "am_request (hello)");
    }
    for (unsigned spins = 0; peer_cpu == -2;)
        if (am_poll(ep) == 0)
            relax(&spins);
    pinned = bm_pinned_apart(mine, peer_cpu);
    yield_after = bm_yield_after(mine, peer_cpu);
}

/* ---- tables of senders: memory and idle polls ---- */

/* A fresh endpoint "JOB.m<i>" of kind k with max_senders s in *m; its bytes:
 * the size of its POSIX segment's file, /dev/shm/shmam-NAME (segment.c). */
static double weigh(const char *k, unsigned s, unsigned i, am_ep_t **m)
{
    char name[AM_MAX_NAME + 1], path[128];
    struct am_ep_opts o = {.queue = k, .shm = "posix", .max_senders = s};
    struct stat st;
    name_of(name, sizeof name, 'm', i);
    bm_check(am_ep_create(name, &o, m), "cannot create an endpoint to weigh");
    snprintf(path, sizeof path, "/dev/shm/shmam-%s", name);
    bm_check(stat(path, &st) == 0 ? 0 : -errno, "cannot stat the endpoint's segment");
    return (double)st.st_size;
}

/* For table size s: an endpoint of every kind, its bytes, and its idle polls
 * (nobody registered) in R rounds after a warm-up, the kinds ABBA; the rows;
 * then the endpoints go. */
static void table_rows(const struct bm_row *row, unsigned s, long polls)
{
    am_ep_t *m[MAX_KINDS];
    double t[MAX_KINDS][MAX_ROUNDS];
    char name[40];
    int mp = kind_index("mpsc");
    for (int k = 0; k < nkinds; k++) {
        double v = weigh(kind[k], s, (unsigned)k, &m[k]);
        snprintf(name, sizeof name, "seg_bytes_%u", s);
        bm_print(row, kind[k], 1, name, (struct bm_stat){v, v, v, 1}, "bytes", 0);
    }
    for (int k = 0; k < nkinds; k++)
        idle_polls(m[k], polls / 10 + 1024); /* the warm-up */
    for (int r = 0; r < rounds; r++)
        for (int j = 0; j < nkinds; j++) {
            int k = bm_abba(r, j, nkinds);
            t[k][r] = idle_polls(m[k], polls);
        }
    for (int k = 0; k < nkinds; k++) {
        snprintf(name, sizeof name, "poll_idle_table_ns_%u", s);
        bm_print(row, kind[k], polls * rounds, name, bm_stat_of(t[k], (int)rounds), "ns",
                 1);
        snprintf(name, sizeof name, "poll_idle_table_vs_mpsc_%u", s);
        if (mp >= 0 && mp != k)
            bm_print(row, kind[k], polls * rounds, name,
                     bm_stat_ratio(t[k], t[mp], (int)rounds), "ratio", 3);
    }
    for (int k = 0; k < nkinds; k++)
        am_ep_destroy(m[k]);
}

/* ---- rows ---- */

static int conf_of(int k, int si)
{
    return k * senders.n + si;
}

static int index_of(const struct list *l, unsigned v)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == v)
            return i;
    return -1;
}

/* The figures of metric m of configuration c over the rounds (every round
 * has one); with b >= 0, per-round quotients by configuration b's. */
static struct bm_stat stat_of(int c, int b, int m)
{
    double v[MAX_ROUNDS], w[MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < rounds; r++)
        v[n] = fig[c][r][m], w[n++] = b >= 0 ? fig[b][r][m] : 1;
    return b >= 0 ? bm_stat_ratio(v, w, n) : bm_stat_of(v, n);
}

static void conf_rows(const struct bm_row *row, int k, int si, const struct counts *n)
{
    long iters[M_N] = {n->idle * rounds, n->stream * rounds,
                       RECENT_POLLS * n->bursts * rounds};
    int c = conf_of(k, si), mp = kind_index("mpsc"), one = index_of(&senders, 1);
    unsigned s = senders.v[si];
    char name[64];
    for (int m = 0; m < M_N; m++) {
        snprintf(name, sizeof name, "%s_ns_%u", metric_name[m], s);
        bm_print(row, kind[k], iters[m], name, stat_of(c, -1, m), "ns", 1);
        if (mp >= 0 && mp != k) {
            snprintf(name, sizeof name, "%s_vs_mpsc_%u", metric_name[m], s);
            bm_print(row, kind[k], iters[m], name, stat_of(c, conf_of(mp, si), m), "ratio",
                     3);
        }
        if (one >= 0 && one != si) {
            snprintf(name, sizeof name, "%s_vs_1_%u", metric_name[m], s);
            bm_print(row, kind[k], iters[m], name, stat_of(c, conf_of(k, one), m), "ratio",
                     3);
        }
    }
}

static void report(const struct counts *n)
{
    const char *shm = getenv("SHMAM_SHM");
    struct bm_row row = {stdout, "pollcost", shm && *shm ? shm : "posix", 2, pinned};
    if (header)
        bm_print_header(stdout);
    for (int k = 0; k < nkinds; k++)
        for (int si = 0; si < senders.n; si++)
            conf_rows(&row, k, si, n);
    row.shm = "posix";
    for (int i = 0; i < mem_senders.n; i++)
        table_rows(&row, mem_senders.v[i], n->idle);
    fflush(stdout);
}

static int final_check(void)
{
    unsigned long bad = 0;
    command(OP_STOP, 0, 0);
    for (unsigned spins = 0; !done_due;)
        if (am_poll(ep) == 0)
            relax(&spins);
    for (int c = 0; c < nkinds * senders.n; c++)
        bad += am_ep_bad_packets(rx[c]);
    if (peer_sent == total && !errors && !bad)
        return 0;
    fprintf(stderr,
            "pollcost: FAILED: rank 1 sent %lu, rank 0 ran %lu; %lu messages out of place "
            "(or run by an idle poll); %lu bad packets\n",
            peer_sent, total, errors, bad);
    return 1;
}

/* ---- command line ---- */

static void usage(FILE *f, int status)
{
    fprintf(f, "usage: shmamrun -n 2 --bind pollcost [--kinds KIND,...|all] "
               "[--senders S,...] [--mem-senders S,...] [--rounds R] [--quick] "
               "[--header] [--verbose]\n");
    exit(status);
}

/* A comma-separated list of counts in 1..max into l. */
static void parse_list(const char *s, struct list *l, unsigned max)
{
    l->n = 0;
    for (const char *p = s;; p++) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v < 1 || v > max || l->n == MAX_S || (*end && *end != ','))
            usage(stderr, 2);
        l->v[l->n++] = (unsigned)v;
        if (!*(p = end))
            return;
    }
}

static void parse_kinds(const char *s)
{
    if (strcmp(s, "all") == 0) {
        for (int i = 0; am_queue_names[i] && i < MAX_KINDS; i++)
            kind[nkinds++] = am_queue_names[i];
        return;
    }
    for (const char *p = s;; p++) {
        size_t len = strcspn(p, ",");
        int i = 0;
        while (am_queue_names[i] && (strlen(am_queue_names[i]) != len ||
                                     strncmp(am_queue_names[i], p, len) != 0))
            i++;
        if (!am_queue_names[i] || kind_index(am_queue_names[i]) >= 0 ||
            nkinds == MAX_KINDS) {
            fprintf(stderr,
                    "pollcost: unknown or repeated queue kind '%.*s' "
                    "(shmamrun --list-queues)\n",
                    (int)len, p);
            exit(2);
        }
        kind[nkinds++] = am_queue_names[i];
        if (!*(p += len))
            return;
    }
}

static struct counts parse(int argc, char **argv)
{
    struct counts n = {8192, 2000, 64};
    const char *kinds = "all";
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--kinds") == 0 && v)
            kinds = v, i++;
        else if (strcmp(o, "--senders") == 0 && v)
            parse_list(v, &senders, BURST_MAX), i++;
        else if (strcmp(o, "--mem-senders") == 0 && v)
            parse_list(v, &mem_senders, SENDER_MAX), i++;
        else if (strcmp(o, "--rounds") == 0 && v) {
            char *end;
            rounds = strtol(v, &end, 10), i++;
            if (*end)
                usage(stderr, 2);
        } else if (strcmp(o, "--quick") == 0)
            n = (struct counts){2048, 500, 16}, rounds = 3;
        else if (!bm_common_flag(o, &header, &verbose))
            usage(stderr, 2);
    }
    if (rounds < 1 || rounds >= MAX_ROUNDS)
        usage(stderr, 2);
    parse_kinds(kinds);
    for (int i = 0; i < senders.n; i++)
        smax = senders.v[i] > smax ? senders.v[i] : smax;
    return n;
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    struct counts n = parse(argc, argv); /* before the job: a bad line leaves no segment */
    ep = bm_am_init("pollcost", &argc, &argv);
    rank = am_rank();
    if (am_nprocs() != 2)
        bm_die("run me with exactly two ranks (shmamrun -n 2)", 0);
    bm_check(am_set_handler(ep, H_CTL, on_ctl), "am_set_handler");
    bm_check(am_set_handler(ep, H_HELLO, on_hello), "am_set_handler");
    bm_check(am_set_handler(ep, H_HELLO_BACK, on_hello_back), "am_set_handler");
    bm_check(am_set_handler(ep, H_DONE, on_done), "am_set_handler");
    clk = bm_clock_cost_ns();
    if (rank == 0)
        open_receivers();
    bm_check(am_barrier(ep), "am_barrier"); /* every receiver exists */
    if (rank == 1)
        open_senders();
    bm_check(am_barrier(ep), "am_barrier"); /* every sender is registered */
    hello();
    int fail = 0;
    if (rank == 0) {
        struct counts warm = {n.idle / 10 + 1024, n.stream / 10 + 8, n.bursts / 10 + 1};
        run_round(WARM, &warm);
        for (int k = 0; k < rounds; k++)
            run_round(k, &n);
        if (!(fail = final_check()))
            report(&n);
    } else {
        serve();
    }
    close_all();
    bm_check(am_finalize(ep), "am_finalize");
    return fail;
}
