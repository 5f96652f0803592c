/*
 * check_chan.c - per-sender channels (runtime/channel.h): every queue kind of
 * am_queue_names but mpsc (lamport, fastforward, mcring, bqueue), with real
 * processes; the kind and backend (alternating) in every failure message.
 *
 * Tcases: stream, stopped, cycle, killed, hostile, summary (run one with
 * CK_RUN_CASE).  The test process owns the receiving endpoint (pinned to the
 * first CPU) unless said otherwise; writers are forked helpers pinned across
 * the CPUs.  Messages are numbered per writer and, by number, short, bulk
 * (0 .. 8192 bytes, a quarter of them medium: 0 .. AM_MAX_MEDIUM, in the
 * ring slot's payload area) or long (0 .. 16 KB, through the receiver's heap); every
 * argument and byte is checked, and each writer's messages must arrive once
 * and in order.  The writer is told by the message's source (the name of the
 * endpoint its claimant id resolves to), so a garbled argument cannot pass
 * for another writer's message.
 *
 *   stream_stalled    3 writers, gated, 4000 messages each into channels of 2
 *                     and of 4 packets and 1 bulk block (rings wrap and fill
 *                     all the time), the reader in am_poll or am_wait; the
 *                     writers stall (yields, pauses, now and
 *                     then a sleep of up to 0.2 ms) at AM_HOOK_FILLING,
 *                     BULK_HALF, LONG_STAGED, CHAN_FILLED and the ring's
 *                     AM_SPSC_PUT, the reader at AM_SPSC_GET and FREE and in
 *                     its handler, before it checks the bytes.
 *   medium_in_place   a writer streams 200 medium messages (their data in
 *                     the ring slot's payload area) into a channel of 2
 *                     packets; the reader's handler sleeps 1 ms before it
 *                     reads the data in place: every byte is the message's
 *                     (the slot is given back only after the handler).
 *   stopped_writer    channels of 64 packets (B-Queue and MCRingBuffer
 *                     batches of 16): a writer stops itself (SIGSTOP) after 37
 *                     messages (two batches and 5), then inside message 43
 *                     at CHAN_FILLED (its packet written into its slot, not
 *                     committed), then inside message 55 at AM_SPSC_PUT (not
 *                     yet published), bulk messages both, for 0.3 s each:
 *                     exactly 37, 43, 55 of its messages arrive while it is
 *                     stopped, two live writers (short and bulk messages) go
 *                     on meanwhile (10 messages each within 5.3 s), and after
 *                     SIGCONT the rest arrive in order.
 *   stopped_long_holder  the same with the writer stopped holding a long
 *                     message's staged heap block: the live writers, one of
 *                     them sending long messages too, go on (10 messages each
 *                     within 2 s).  (Two live writers both streaming long
 *                     messages through channels of 64 packets are not fair to
 *                     each other: one can keep the heap full, and the other
 *                     was seen to get 7 messages through in 2.3 s against
 *                     65006, under ASan and a load of 7.)
 *   cycle             2 (lamport, mcring) or 3 (fastforward, bqueue)
 *                     endpoints with channels of 2 packets, 1 bulk block and
 *                     the smallest heaps send short, bulk and long requests
 *                     round robin, each answered in kind; nobody polls but the
 *                     senders' backoff until all is sent.  Every request and
 *                     reply counted, in order; each process must have found a
 *                     channel full; a deadlock shows as processes killed after
 *                     20 s.
 *   parked_killed     a writer parked in its sixth message, a long one, at
 *                     CHAN_FILLED, LONG_STAGED or AM_SPSC_PUT, or a medium
 *                     one half copied into its slot's payload area
 *                     (BULK_HALF), and SIGKILLed while a live writer
 *                     streams, in a table of 2 senders: exactly its first 5
 *                     messages arrive, whole; its staged block is taken back
 *                     (am_ep_abandoned 1, heaps empty; 0 for the medium one);
 *                     and a new client gets its entry and sends 30.
 *   killed_unannounced  a writer publishes four messages (short, bulk, long,
 *                     short) while the owner does not poll, its summary bit is
 *                     cleared (as if it died between its last commit and its
 *                     notify, the owner having cleared the bit), and it is
 *                     SIGKILLed: the recycling of its channels delivers all
 *                     four, whole, and nothing is abandoned.
 *   come_and_go       a table of 2 senders, one a live writer streaming
 *                     throughout; 10 clients one after another take the other
 *                     entry: every third sends 40 messages and leaves, the
 *                     rest are SIGKILLed 2-20 ms into their stream (stalling a
 *                     millisecond now and then with a long message staged or
 *                     a packet written): each registered, a killed one's
 *                     messages that arrived are its first ones, whole (its
 *                     completed sends, or one more), the live writer's all
 *                     arrive, and the heaps end empty.
 *   scribbled         a vandal process writes random and plausible words into
 *                     one sender's channels (ring header, indices, slots and
 *                     their packets, bulk count, bulk data) and sets summary
 *                     bits anywhere, for 1 s, while an honest sender streams
 *                     into its own channel: every poll returns within 0.5 s,
 *                     the damage is counted (bad packets) or costs the victim
 *                     messages, every honest message arrives in order, and once
 *                     the victim is gone (killed, its entry recycled) a new
 *                     client's 30 do.
 *   summary_cleared   a peer clears the summary after an honest sender's last
 *                     message: it still arrives, within 2 s.
 *   forged            single process, through the internal producer end
 *                     (reserve, packet, commit): packets with a handler out of
 *                     range or unregistered, 9 arguments, unknown flags, a long
 *                     block never allocated or another sender's, a one-copy
 *                     long without a region, a bulk ticket out of range, 9000
 *                     bulk bytes, a medium (inline) length past the slot's
 *                     area, an item of another lap, claimant or type:
 *                     each counted once, no handler runs, and good messages
 *                     after them arrive; a long message whose item or flags
 *                     are garbled leaves no block allocated (after a reclaim
 *                     asked for, for the flags); every summary bit forged
 *                     costs nothing and the owner's go clear once idle.
 *   summary_bits      64 senders registered (in a table of 100), one active:
 *                     its messages arrive, no other bit is ever set, its bit
 *                     is cleared once the channel is idle, set again by its
 *                     next message, and an owner asleep in am_wait is woken by
 *                     it (well before the timeout).
 *
 *   summary_race      message by message, each sent just when a spinning
 *                     owner clears the idle channel's bit or an owner in
 *                     am_wait goes to sleep: each arrives within 30 s (a lost
 *                     wake-up costs the owner's 60 s sleep, a stranded one
 *                     never comes; a woken owner, however loaded, is not 30 s
 *                     late).
 *
 * Runtime bugs found (each test failed before the runtime was mended):
 *   stopped_long_holder  a heap sized for two long_max blocks of up to 32 KB was
 *                     one 64 KB superblock, which serves one size class at a
 *                     time: a stopped sender's staged block held up every other
 *                     sender's long messages of other sizes (778dede).
 *   summary_cleared   nothing looked at a channel whose bit a peer had cleared
 *                     (778dede).
 *   forged            a channel packet dropped for a garbled item kept the
 *                     long message's heap block allocated while its sender
 *                     lived (09fdc81).
 * A known limit (channel.h), asserted as such:
 *   scribbled, forged  a live sender's long message that a peer garbled (its
 *                     flags cleared: it runs as a short one; its slot skipped:
 *                     it is lost) leaves its heap block allocated until the
 *                     sender leaves: nothing the owner can trust says the
 *                     block is not still to be published.  A vandal on one
 *                     sender's channels can so fill the heap every sender
 *                     shares (5-12 blocks of the victim live, no free space,
 *                     in about a second).  forged asserts that exactly that
 *                     block stays, and nothing else; scribbled's victim sends
 *                     no long messages, so the honest sender's long ones must
 *                     all go through.
 *
 * Each fails against a deliberately broken runtime (checked when written, on a
 * copy of the tree):
 *   bulk block given back before the handler ran  stream_stalled (4 packets:
 *                                                 bytes differ)
 *   commit before the packet is written           stream_stalled
 *   notify without the wake-up                    summary_bits (am_wait 4 s)
 *   recycling without draining                    killed_unannounced (0 of 4)
 *   recycling taking blocks back before draining  killed_unannounced (the
 *                                                 long one lost)
 *   recycling without taking blocks back          parked_killed, come_and_go
 *   lay_out keeping the owner's position          parked_killed, come_and_go
 *   lay_out keeping the bulk count                parked_killed, come_and_go
 *   registration not waiting for chan_ready       parked_killed, come_and_go
 *   a dead sender's entry never recycled          parked_killed, come_and_go
 *                                                 (-EUSERS)
 *   no range check of a bulk ticket               forged
 *   no claimant check of the item                 forged
 *   summary bits past the table not masked        scribbled, forged (abort)
 *   mcring without the flush after commit         stopped_writer,
 *                                                 stopped_long_holder
 *   bqueue without backtracking                   stopped_writer
 *   backoff that does not poll                    cycle (deadlock)
 *   a heap of one superblock; no rescan           stopped_long_holder;
 *                                                 summary_cleared (above)
 * and not these, whose windows are a few instructions with no hook inside:
 * the slot given back before the packet is copied out, a bit cleared without
 * the last look, notify without its fence.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "peers.h"
#include "spin.h"
#include "testutil.h"
#include "waiting.h"

enum { H_MSG = 1, H_REQ, H_REP, H_OTHER };
#define MAXW 16            /* writer ids in one test */
#define SMALL_LONG 16384u  /* the receivers' long_max: heaps of two such */
#define NCLIENTS 10        /* come_and_go, times the stress factor at most MAXW - 1 */
#define STOP_TOTAL 100     /* stopped_writer: the stopped writer's messages */
#define PARK_SEQ 5         /* parked_killed: the message it parks in (a long one) */
#define NEW_CLIENT_MSGS 30 /* parked_killed: the new client's messages */

struct shared {
    struct tu_gate gate;
    struct tu_errors err;
    int kind, b;
    char rcv[AM_NAME_MAX];
    char snd[MAXW][AM_NAME_MAX];
    unsigned n;      /* messages per stream writer */
    unsigned gap_cs; /* summary_race: the longest gap between messages, 10 ns units */
    double secs;     /* the vandal's time */
    AO_t go, stop, quit, parked, done;
    AO_t started[MAXW], finished[MAXW];
    AO_t sent[MAXW];      /* sends that returned 0, per writer */
    AO_t index[MAXW];     /* the writer's entry in the receiver's table, + 1 */
    int hook, spsc_hook;  /* parked writer: where (-1: not there) */
    unsigned long writes; /* the vandal's */
    unsigned no_long;     /* writers (bits) that send no long message */
};

static struct shared *sh;
static char what[200];
static unsigned rx_long_max = SMALL_LONG; /* the receiver's, for the lengths */

/* The owner's tallies (the test process's own memory). */
static struct {
    unsigned next[MAXW], got[MAXW], errors[MAXW];
    unsigned stray; /* messages of no writer */
    int widen;      /* stall in the handler before checking */
    char first[200];
} rx;

static void setup(void)
{
    tu_test_init();
    tu_pin(0);
    sh = tu_shared_alloc(sizeof *sh);
    sh->hook = sh->spsc_hook = -1;
    memset(&rx, 0, sizeof rx);
}

static void teardown(void)
{
    am__claim_stall_hook = NULL;
    am_spsc_stall_hook = NULL;
    tu_shared_free(sh, sizeof *sh);
}

/* ---- kinds, names, endpoints ------------------------------------------------ */

/* The per-sender kinds: am_queue_names after "mpsc", the one list of them. */
static int n_kinds(void)
{
    int n = 0;
    while (am_queue_names[n + 1])
        n++;
    return n;
}

static const char *kind_name(int k)
{
    return am_queue_names[1 + k];
}

/* Start a test of kind k on backend b: names and the description. */
static void begin(int k, int b, const char *test)
{
    sh->kind = k;
    sh->b = b;
    snprintf(what, sizeof what, "%s/%s %s", kind_name(k), tu_backend_name(b), test);
    char role[16];
    snprintf(role, sizeof role, "r%.2s", kind_name(k));
    tu_ep_name(sh->rcv, sizeof sh->rcv, role, -1, b);
    for (unsigned w = 0; w < MAXW; w++) {
        snprintf(role, sizeof role, "w%u%.2s", w, kind_name(k));
        tu_ep_name(sh->snd[w], sizeof sh->snd[w], role, -1, b);
    }
}

static am_ep_t *receiver(unsigned packets, unsigned bulk, unsigned senders,
                         unsigned long_max)
{
    struct am_ep_opts o = {.shm = tu_backend_name(sh->b),
                           .queue = kind_name(sh->kind),
                           .packets = packets,
                           .bulk_blocks = bulk,
                           .max_senders = senders,
                           .long_max = long_max};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(sh->rcv, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create %s: %s", what, sh->rcv, am_strerror(rc));
    ck_assert_msg(strcmp(am_ep_queue(ep), kind_name(sh->kind)) == 0, "%s: queue kind %s",
                  what, am_ep_queue(ep));
    rx_long_max = long_max;
    return ep;
}

/* Writer w's endpoint (small channels of the test's kind), the receiver
 * mapped as peer 0; its entry there published in sh->index[w].  Exits the
 * helper on failure. */
static am_ep_t *writer_ep(unsigned w)
{
    struct am_ep_opts o = {.shm = tu_backend_name(sh->b),
                           .queue = kind_name(sh->kind),
                           .packets = 2,
                           .bulk_blocks = 1,
                           .max_senders = 4,
                           .long_max = AM_MIN_LONG};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(sh->snd[w], &o, &ep);
    if (rc == 0 && (rc = tu_map_when_there(ep, 0, sh->rcv, 10)) < 0)
        am_ep_destroy(ep);
    if (rc < 0) {
        tu_error(&sh->err, "writer %u: create/map: %s", w, am_strerror(rc));
        _exit(2);
    }
    AO_store_release(&sh->index[w], am__peer(ep, 0)->sender_index + 1);
    return ep;
}

/* Blocks live in queue qid's heap of ep (a snapshot). */
static unsigned long heap_live(am_ep_t *ep, enum am_qid qid)
{
    struct am_heap_stats st;
    am_heap_stats(&ep->own.q[qid].heap, &st);
    return st.blocks_live;
}

/* ---- messages ----------------------------------------------------------------- */

/* Message seq of writer w: short (seq % 3 == 0), bulk (1) or long (2), or
 * for a writer of sh->no_long short and bulk in turn; its key (its bytes are
 * tu_pattern(key)) and length. */
enum { SHORT, BULK, LONG };
static int msg_kind(unsigned w, unsigned seq)
{
    return (sh->no_long >> w) & 1 ? (int)(seq % 2) : (int)(seq % 3);
}

static uint32_t msg_key(unsigned w, unsigned seq)
{
    return tu_mix32(w * 7919u + 13u, seq);
}

static size_t msg_len(unsigned w, unsigned seq, unsigned long_max)
{
    /* Bulk messages: medium ones (in their slot) at both ends and past them. */
    static const size_t special[] = {
        8192, 0, 1, 8191, 4097, 64, AM_MAX_MEDIUM, AM_MAX_MEDIUM + 1};
    uint32_t h = tu_mix32(msg_key(w, seq), 5);
    switch (msg_kind(w, seq)) {
    case SHORT:
        return 0;
    case BULK:
        return h % 4 == 0   ? special[(h >> 4) % 8]
               : h % 4 == 1 ? (h >> 4) % (AM_MAX_MEDIUM + 1)
                            : h % (AM_MAX_BULK + 1);
    default:
        return h % 5 == 0 ? long_max : h % 7 == 0 ? 0 : h % (long_max + 1);
    }
}

static int send_msg(am_ep_t *ep, unsigned dest, unsigned w, unsigned seq, unsigned long_max)
{
    static unsigned char buf[SMALL_LONG];
    size_t len = msg_len(w, seq, long_max);
    uint32_t key = msg_key(w, seq);
    uint32_t a[4] = {w, seq, key, (uint32_t)len};
    tu_pattern(buf, key, len);
    switch (msg_kind(w, seq)) {
    case SHORT:
        return am_request(ep, dest, H_MSG, a, 4);
    case BULK:
        return am_request_bulk(ep, dest, H_MSG, buf, len, a, 4);
    default:
        return am_request_long(ep, dest, H_MSG, buf, len, a, 4);
    }
}

static void rx_bad(unsigned w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rx_bad(unsigned w, const char *fmt, ...)
{
    rx.errors[w]++;
    if (rx.first[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rx.first, sizeof rx.first, fmt, ap);
    va_end(ap);
}

/* The writer a message came from: by its source's name while the sender's
 * endpoint can be mapped, else (a sender that has died) by its first
 * argument; MAXW if neither names one. */
static unsigned writer_of(am_token_t *t, const uint32_t *a, int n)
{
    unsigned src = am_token_source(t);
    struct am_peer *p = src == AM_SOURCE_UNKNOWN ? NULL : am__peer(am_token_ep(t), src);
    if (p) {
        for (unsigned w = 0; w < MAXW; w++)
            if (strcmp(p->name, sh->snd[w]) == 0)
                return w;
        return MAXW;
    }
    return n == 4 && a[0] < MAXW ? a[0] : MAXW;
}

static void stall(void);

static void on_msg(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    static unsigned char want[SMALL_LONG];
    unsigned w = writer_of(t, a, n);
    if (w >= MAXW) {
        rx.stray++;
        return;
    }
    if (rx.widen) /* the handler holds the bulk block or heap block meanwhile */
        stall();
    unsigned seq = n == 4 ? a[1] : rx.next[w];
    size_t wl = msg_len(w, seq, rx_long_max);
    if (n != 4 || a[0] != w)
        rx_bad(w, "writer %u: a message with %d args, the first %u", w, n, n ? a[0] : 0);
    else if (a[2] != msg_key(w, seq) || a[3] != wl || len != wl || (len && !d))
        rx_bad(w, "writer %u: message %u: key %#x, %zu bytes (want %zu)", w, seq, a[2], len,
               wl);
    else if (len) {
        tu_pattern(want, a[2], len);
        if (memcmp(d, want, len) != 0)
            rx_bad(w, "writer %u: message %u: its %zu bytes differ", w, seq, len);
    }
    if (seq != rx.next[w])
        rx_bad(w, "writer %u: message %u where %u was due", w, seq, rx.next[w]);
    rx.next[w] = seq + 1;
    rx.got[w]++;
}

/* ---- the owner's loops -------------------------------------------------------- */

/* Poll (am_wait for 2 ms with use_wait, else am_poll, yielding when idle)
 * until every writer w < nw has delivered want[w], or secs pass; with
 * `moving`, secs pass without a message arriving (a stall, not a slow
 * machine: a loaded one stretches a stream of stalled writers many times). */
static int poll_loop(am_ep_t *ep, const unsigned *want, int nw, double secs, int use_wait,
                     int moving)
{
    double end = tu_now_s() + secs;
    for (;;) {
        int done = 1;
        for (int w = 0; w < nw; w++)
            done &= rx.got[w] >= want[w];
        if (done)
            return 1;
        if (tu_now_s() > end)
            return 0;
        int n = use_wait ? am_wait(ep, 2) : am_poll(ep);
        if (n < 0)
            return 0;
        if (n == 0 && !use_wait)
            sched_yield();
        if (n > 0 && moving)
            end = tu_now_s() + secs;
    }
}

/* Every message of want[] within secs: where the time itself is checked (a
 * writer held up). */
static int poll_until(am_ep_t *ep, const unsigned *want, int nw, double secs, int use_wait)
{
    return poll_loop(ep, want, nw, secs, use_wait, 0);
}

/* Every message of want[], none of them more than secs after the last: where
 * they must all arrive, however long a busy machine makes it. */
static int poll_all(am_ep_t *ep, const unsigned *want, int nw, double secs, int use_wait)
{
    return poll_loop(ep, want, nw, secs, use_wait, 1);
}

static void poll_for(am_ep_t *ep, double secs)
{
    double end = tu_now_s() + secs;
    while (tu_now_s() < end)
        am_wait(ep, 1);
}

/* Poll until *f >= v or secs pass; 1 if it is. */
static int poll_flag(am_ep_t *ep, volatile AO_t *f, AO_t v, double secs)
{
    double end = tu_now_s() + secs;
    while (AO_load_acquire(f) < v)
        if (tu_now_s() > end)
            return 0;
        else
            am_wait(ep, 1);
    return 1;
}

/* Tell the writers to quit and reap them: each must exit 0, none reported an
 * error. */
static void reap_all(const pid_t *p, int np)
{
    AO_store_release(&sh->stop, 1);
    AO_store_release(&sh->quit, 1);
    for (int i = 0; i < np; i++)
        tu_assert_exit0(tu_reap(p[i], 20), "writer", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
}

/* Writer w's messages all arrived (want), once, whole, in order. */
static void assert_writer(unsigned w, unsigned want)
{
    ck_assert_msg(rx.errors[w] == 0,
                  "%s: writer %u: %u messages garbled or out of order; %s", what, w,
                  rx.errors[w], rx.first);
    ck_assert_msg(rx.got[w] == want, "%s: writer %u: %u of %u messages arrived", what, w,
                  rx.got[w], want);
}

/* Nothing bad, and no heap block left live. */
static void assert_clean_owner(am_ep_t *ep)
{
    ck_assert_msg(rx.stray == 0 && am_ep_bad_packets(ep) == 0,
                  "%s: %u messages of no writer, %lu bad packets", what, rx.stray,
                  am_ep_bad_packets(ep));
    ck_assert_msg(heap_live(ep, AM_REQUEST) == 0 && heap_live(ep, AM_REPLY) == 0,
                  "%s: heap blocks left live: %lu request, %lu reply", what,
                  heap_live(ep, AM_REQUEST), heap_live(ep, AM_REPLY));
}

static void finish(am_ep_t *ep)
{
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    tu_assert_clean(what);
}

/* Ask the owner to recycle departed senders' channels (as a registrant would)
 * and poll enough idle rounds for it to do so. */
static void recycle_now(am_ep_t *ep)
{
    AO_store(&ep->own.shared->recycle, 1);
    for (int i = 0; i < 64; i++)
        am_poll(ep);
}

/* ---- stalls --------------------------------------------------------------------- */

static unsigned stall_calls, stall_seed;

/* Widen a window (tu_stall). */
static void stall(void)
{
    tu_stall(tu_mix32(stall_seed, stall_calls++));
}

static void writer_hook(enum am_hook where)
{
    if (where == AM_HOOK_FILLING || where == AM_HOOK_BULK_HALF ||
        where == AM_HOOK_LONG_STAGED || where == AM_HOOK_CHAN_FILLED)
        stall();
}

static void writer_spsc_hook(enum am_spsc_hook where)
{
    if (where == AM_SPSC_PUT)
        stall();
}

static void reader_spsc_hook(enum am_spsc_hook where)
{
    if (where == AM_SPSC_GET || where == AM_SPSC_FREE)
        stall();
}

/* ---- stream_stalled ------------------------------------------------------------- */

#define NW 3

static void stream_writer(void *arg)
{
    unsigned w = (unsigned)(uintptr_t)arg;
    am_ep_t *ep = writer_ep(w);
    stall_seed = w + 1;
    am__claim_stall_hook = writer_hook;
    am_spsc_stall_hook = writer_spsc_hook;
    tu_gate_wait(&sh->gate);
    for (unsigned seq = 0; seq < sh->n; seq++) {
        int rc = send_msg(ep, 0, w, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "writer %u: message %u: %s", w, seq, am_strerror(rc));
            break;
        }
        AO_store(&sh->sent[w], seq + 1);
    }
    am__claim_stall_hook = NULL;
    am_spsc_stall_hook = NULL;
    AO_fetch_and_add1_full(&sh->done);
    tu_wait_flag(&sh->quit, 1, 60);
    am_ep_destroy(ep);
}

START_TEST(stream_stalled)
{
    int k = _i / 2, b = (k + _i) % 2, use_wait = (k + _i) % 2;
    unsigned q = _i % 2 ? 4 : 2; /* 2: the writer waits for its ring more than
                                  * for its one bulk block; 4: more often the
                                  * other way round */
    begin(k, b, "stream_stalled");
    snprintf(what + strlen(what), sizeof what - strlen(what),
             " (%u packets, 1 bulk block, %s)", q, use_wait ? "am_wait" : "am_poll");
    am_ep_t *ep = receiver(q, 1, 4, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_msg);
    sh->n = 4000 * (unsigned)tu_stress_factor();
    tu_gate_init(&sh->gate, NW + 1);
    pid_t p[NW];
    for (int w = 0; w < NW; w++)
        p[w] = tu_spawn(stream_writer, (void *)(uintptr_t)w, w + 1);
    stall_seed = 99;
    am_spsc_stall_hook = reader_spsc_hook;
    rx.widen = 1;
    tu_gate_wait(&sh->gate);
    const unsigned want[NW] = {sh->n, sh->n, sh->n};
    double t0 = tu_now_s();
    int ok = poll_all(ep, want, NW, 20, use_wait);
    am_spsc_stall_hook = NULL;
    rx.widen = 0;
    if (getenv("SHMAM_VERBOSE"))
        printf("%s: %.2f s\n", what, tu_now_s() - t0);
    ck_assert_msg(ok, "%s: %u, %u, %u of %u messages arrived, then none for 20 s (%s)",
                  what, rx.got[0], rx.got[1], rx.got[2], sh->n,
                  tu_first_error(&sh->err, "no writer error"));
    reap_all(p, NW);
    for (unsigned w = 0; w < NW; w++)
        assert_writer(w, sh->n);
    assert_clean_owner(ep);
    ck_assert_msg(am_ep_abandoned(ep) == 0, "%s: %lu abandoned", what, am_ep_abandoned(ep));
    finish(ep);
}
END_TEST

/* ---- medium_in_place ------------------------------------------------------------ */

#define MEDIUM_N 200 /* medium_in_place's messages */

/* Its message seq: a medium one, AM_MAX_MEDIUM bytes or 1 .. AM_MAX_MEDIUM. */
static size_t medium_len(unsigned seq)
{
    return seq % 2 ? AM_MAX_MEDIUM : 1 + seq % AM_MAX_MEDIUM;
}

static void medium_writer(void *arg)
{
    static unsigned char buf[AM_MAX_MEDIUM];
    am_ep_t *ep = writer_ep(0);
    tu_gate_wait(&sh->gate);
    for (unsigned seq = 0; seq < MEDIUM_N; seq++) {
        size_t len = medium_len(seq);
        uint32_t key = msg_key(0, seq), a[4] = {0, seq, key, (uint32_t)len};
        tu_pattern(buf, key, len);
        int rc = am_request_bulk(ep, 0, H_OTHER, buf, len, a, 4);
        if (rc < 0) {
            tu_error(&sh->err, "writer: message %u: %s", seq, am_strerror(rc));
            break;
        }
    }
    tu_wait_flag(&sh->quit, 1, 60);
    am_ep_destroy(ep);
}

/* Sleeps before it reads the data in place: the writer, on the other CPU
 * with its ring full, would meanwhile refill a slot given back too early. */
static void on_medium(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    unsigned char want[AM_MAX_MEDIUM];
    usleep(1000);
    unsigned seq = n == 4 ? a[1] : ~0u;
    if (n != 4 || seq != rx.next[0] || len != medium_len(seq) || a[3] != len || !d)
        rx_bad(0, "message %u (want %u) of %zu bytes", seq, rx.next[0], len);
    else {
        tu_pattern(want, a[2], len);
        if (memcmp(d, want, len) != 0)
            rx_bad(0, "message %u: its %zu bytes changed while its handler ran", seq, len);
    }
    rx.next[0] = seq + 1;
    rx.got[0]++;
}

START_TEST(medium_in_place)
{
    begin(_i / 2, _i % 2, "medium_in_place");
    am_ep_t *ep = receiver(2, 1, 4, SMALL_LONG);
    am_set_handler(ep, H_OTHER, on_medium);
    tu_gate_init(&sh->gate, 2);
    pid_t p = tu_spawn(medium_writer, NULL, 1);
    tu_gate_wait(&sh->gate);
    const unsigned want[1] = {MEDIUM_N};
    ck_assert_msg(poll_all(ep, want, 1, 20, 0),
                  "%s: %u of %u messages arrived, then none for 20 s (%s)", what, rx.got[0],
                  MEDIUM_N, tu_first_error(&sh->err, "no writer error"));
    reap_all(&p, 1);
    assert_writer(0, MEDIUM_N);
    assert_clean_owner(ep);
    finish(ep);
}
END_TEST

/* ---- stopped_writer -------------------------------------------------------------- */

/* Where the writer stops: after 37 messages (two batches of 16 and 5 of a
 * third), in message 43 at CHAN_FILLED and in message 55 at AM_SPSC_PUT
 * (bulk messages: a bulk block of its own channel held, no heap block; see
 * stopped_long_holder for that). */
static const unsigned stop_at[3] = {37, 43, 55};
static int stop_armed;

static void stop_hook(enum am_hook where)
{
    if ((stop_armed == 1 && where == AM_HOOK_CHAN_FILLED) ||
        (stop_armed == 3 && where == AM_HOOK_LONG_STAGED)) {
        stop_armed = 0;
        raise(SIGSTOP);
    }
}

static void stop_spsc_hook(enum am_spsc_hook where)
{
    if (stop_armed == 2 && where == AM_SPSC_PUT) {
        stop_armed = 0;
        raise(SIGSTOP);
    }
}

static void stopping_writer(void *arg)
{
    am_ep_t *ep = writer_ep(0);
    am__claim_stall_hook = stop_hook;
    am_spsc_stall_hook = stop_spsc_hook;
    tu_wait_flag(&sh->go, 1, 30);
    for (unsigned seq = 0; seq < STOP_TOTAL; seq++) {
        if (seq == stop_at[0])
            raise(SIGSTOP);
        stop_armed = seq == stop_at[1] ? 1 : seq == stop_at[2] ? 2 : 0;
        int rc = send_msg(ep, 0, 0, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "stopped writer: message %u: %s", seq, am_strerror(rc));
            break;
        }
        AO_store(&sh->sent[0], seq + 1);
    }
    am__claim_stall_hook = NULL;
    am_spsc_stall_hook = NULL;
    tu_wait_flag(&sh->quit, 1, 60);
    am_ep_destroy(ep);
}

/* Writer w streams until told to stop, then publishes how many it sent. */
static void live_writer(void *arg)
{
    unsigned w = (unsigned)(uintptr_t)arg;
    am_ep_t *ep = writer_ep(w);
    tu_wait_flag(&sh->go, 1, 30);
    unsigned seq;
    for (seq = 0; !AO_load_acquire(&sh->stop); seq++) {
        int rc = send_msg(ep, 0, w, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "live writer %u: message %u: %s", w, seq, am_strerror(rc));
            break;
        }
        AO_store(&sh->sent[w], seq + 1);
    }
    AO_fetch_and_add1_full(&sh->done);
    tu_wait_flag(&sh->quit, 1, 60);
    am_ep_destroy(ep);
}

/* Poll until process p has stopped (SIGSTOP), or secs pass. */
static int wait_stopped(am_ep_t *ep, pid_t p, double secs)
{
    double end = tu_now_s() + secs;
    int st;
    while (tu_now_s() < end) {
        pid_t r = waitpid(p, &st, WNOHANG | WUNTRACED);
        if (r == p && WIFSTOPPED(st))
            return 1;
        if (r == p)
            return 0; /* it ended */
        am_wait(ep, 1);
    }
    return 0;
}

/* Stop the live writers 1 .. nl and poll until all they sent has arrived. */
static void drain_live(am_ep_t *ep, unsigned nl, AO_t done_before)
{
    AO_store_release(&sh->stop, 1);
    ck_assert_msg(poll_flag(ep, &sh->done, done_before + nl, 20),
                  "%s: the live writers did not stop (%s)", what,
                  tu_first_error(&sh->err, "no error"));
    unsigned want[MAXW] = {0};
    for (unsigned w = 1; w <= nl; w++)
        want[w] = (unsigned)AO_load(&sh->sent[w]);
    ck_assert_msg(poll_all(ep, want, (int)nl + 1, 20, 1),
                  "%s: live writer 1: %u of %u arrived", what, rx.got[1], want[1]);
}

START_TEST(stopped_writer)
{
    int k = _i, b = (_i + 1) % 2;
    begin(k, b, "stopped_writer");
    /* The live writers send no long messages: with channels of 64 packets a
     * writer streaming long ones can keep the shared heap full by itself, and
     * the other one's long messages then wait their turn for seconds (seen
     * under make check's load, and under ASan).  This test is about the
     * channels; stopped_long_holder is about the heap. */
    sh->no_long = 1u << 1 | 1u << 2;
    am_ep_t *ep = receiver(64, 4, 4, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_msg);
    pid_t p[3];
    p[0] = tu_spawn(stopping_writer, NULL, 1);
    for (unsigned w = 1; w < 3; w++)
        p[w] = tu_spawn(live_writer, (void *)(uintptr_t)w, (int)w - 1);
    AO_store_release(&sh->go, 1);
    static const char *const where[3] = {"between sends", "at CHAN_FILLED",
                                         "at AM_SPSC_PUT"};
    for (int s = 0; s < 3; s++) {
        ck_assert_msg(wait_stopped(ep, p[0], 20), "%s: the writer did not stop %s (%s)",
                      what, where[s], tu_first_error(&sh->err, "no error"));
        const unsigned more[3] = {0, rx.got[1] + 10, rx.got[2] + 10};
        poll_for(ep, 0.3);
        int going = poll_until(ep, more, 3, 5.0, 1); /* at once unless a loaded machine */
        ck_assert_msg(rx.got[0] == stop_at[s],
                      "%s: stopped %s after %u messages: %u arrived while it was stopped",
                      what, where[s], stop_at[s], rx.got[0]);
        ck_assert_msg(going,
                      "%s: stopped %s: the live writers were held up (%u and %u "
                      "messages in 5.3 s)",
                      what, where[s], rx.got[1] + 10 - more[1], rx.got[2] + 10 - more[2]);
        kill(p[0], SIGCONT);
    }
    const unsigned want[1] = {STOP_TOTAL};
    ck_assert_msg(poll_all(ep, want, 1, 20, 1), "%s: after SIGCONT %u of %u arrived (%s)",
                  what, rx.got[0], STOP_TOTAL, tu_first_error(&sh->err, "no error"));
    drain_live(ep, 2, 0);
    reap_all(p, 3);
    assert_writer(0, STOP_TOTAL);
    for (unsigned w = 1; w < 3; w++)
        assert_writer(w, (unsigned)AO_load(&sh->sent[w]));
    assert_clean_owner(ep);
    finish(ep);
}
END_TEST

/* Writer 0: 30 messages; in message PARK_SEQ (a long one) it stops itself
 * with the message's heap block staged. */
static void long_holder(void *arg)
{
    am_ep_t *ep = writer_ep(0);
    am__claim_stall_hook = stop_hook;
    tu_wait_flag(&sh->go, 1, 30);
    for (unsigned seq = 0; seq < 30; seq++) {
        stop_armed = seq == PARK_SEQ ? 3 : 0;
        int rc = send_msg(ep, 0, 0, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "stopped writer: message %u: %s", seq, am_strerror(rc));
            break;
        }
    }
    am__claim_stall_hook = NULL;
    tu_wait_flag(&sh->quit, 1, 60);
    am_ep_destroy(ep);
}

START_TEST(stopped_long_holder)
{
    int k = _i, b = _i % 2;
    begin(k, b, "stopped_long_holder");
    sh->no_long = 1u << 1; /* writer 2 alone wants heap room beside the stopped one */
    am_ep_t *ep = receiver(64, 4, 4, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_msg);
    pid_t p[3];
    p[0] = tu_spawn(long_holder, NULL, 1);
    for (unsigned w = 1; w < 3; w++)
        p[w] = tu_spawn(live_writer, (void *)(uintptr_t)w, (int)w - 1);
    AO_store_release(&sh->go, 1);
    ck_assert_msg(wait_stopped(ep, p[0], 20), "%s: the writer did not stop (%s)", what,
                  tu_first_error(&sh->err, "no error"));
    poll_for(ep, 0.1);
    const unsigned more[3] = {0, rx.got[1] + 10, rx.got[2] + 10};
    int held_up = !poll_until(ep, more, 3, 2.0, 1);
    struct am_heap_stats st;
    am_heap_stats(&ep->own.q[AM_REQUEST].heap, &st);
    kill(p[0], SIGCONT);
    ck_assert_msg(!held_up,
                  "%s: a writer stopped with a long message staged held the live writers "
                  "up: %u and %u messages in 2 s (request heap: %zu bytes, %zu reserved, "
                  "%zu free space, %lu blocks live)",
                  what, rx.got[1] + 10 - more[1], rx.got[2] + 10 - more[2], st.capacity,
                  st.reserved, st.free_space, st.blocks_live);
    const unsigned want[1] = {30};
    ck_assert_msg(poll_all(ep, want, 1, 20, 1), "%s: after SIGCONT %u of 30 arrived", what,
                  rx.got[0]);
    drain_live(ep, 2, 0);
    reap_all(p, 3);
    assert_writer(0, 30);
    assert_clean_owner(ep);
    finish(ep);
}
END_TEST

/* ---- cycle ------------------------------------------------------------------------ */

#define MAXP 3
#define CYCLE_LIMIT_S 20

struct cycle {
    struct tu_gate gate;
    unsigned procs, min;
    double secs, deadline;
    AO_t finished;
    int phase[MAXP];                /* 0 setup, 1 sending, 2 replies, 3 others, 4 done */
    unsigned long progress[MAXP];   /* requests sent so far */
    unsigned long sent[MAXP][MAXP]; /* requests p sent to q */
    unsigned long req[MAXP][MAXP];  /* requests p received from q */
    unsigned long rep[MAXP][MAXP];  /* replies p received from q */
    unsigned long bad[MAXP], backoffs[MAXP];
    int rc[MAXP];
    char first_bad[MAXP][120];
};
static struct cycle *cy;
static int me;

/* Request or reply seq from p to q: its key and length. */
static uint32_t cyc_key(unsigned p, unsigned q, unsigned seq, int reply)
{
    return msg_key(p * MAXP + q + (reply ? 100u : 0u), seq);
}

static size_t cyc_len(uint32_t key, unsigned seq)
{
    return seq % 3 == 0   ? 0
           : seq % 3 == 1 ? key % (key & 16 ? AM_MAX_MEDIUM + 1 : AM_MAX_BULK + 1)
                          : key % (AM_MIN_LONG + 1);
}

static void cyc_bad(const char *fmt, unsigned a, unsigned b)
{
    if (cy->bad[me]++ == 0)
        snprintf(cy->first_bad[me], sizeof cy->first_bad[me], fmt, a, b);
}

/* Is (a, n, d, len) message seq from `from` as it must be?  args: from, seq, key. */
static int cyc_ok(const uint32_t *a, int n, const void *d, size_t len, unsigned from,
                  unsigned long count, int reply)
{
    static unsigned char want[AM_MAX_BULK];
    if (n != 3 || from >= cy->procs || a[0] != from || a[1] != count) {
        cyc_bad("a message from %u out of order or with bad arguments (seq %u)", from,
                n > 1 ? a[1] : 0);
        return 0;
    }
    uint32_t key = cyc_key(from, (unsigned)me, a[1], reply);
    size_t wl = cyc_len(key, a[1]);
    tu_pattern(want, key, wl);
    if (a[2] != key || len != wl || (len && memcmp(d, want, len) != 0)) {
        cyc_bad("from %u: message %u garbled", from, a[1]);
        return 0;
    }
    return 1;
}

/* Send (as a request, or as the reply through tok) message seq from me to q. */
static int cyc_send(am_ep_t *ep, am_token_t *tok, unsigned q, unsigned seq)
{
    /* Two buffers: a request's backoff polls, and a request handler then
     * replies while the request's data is still to be copied. */
    static unsigned char bufs[2][AM_MAX_BULK];
    int reply = tok != NULL;
    unsigned char *buf = bufs[reply];
    uint32_t key = cyc_key((unsigned)me, q, seq, reply);
    size_t len = cyc_len(key, seq);
    uint32_t a[3] = {(uint32_t)me, seq, key};
    unsigned h = reply ? H_REP : H_REQ;
    tu_pattern(buf, key, len);
    if (seq % 3 == 0)
        return reply ? am_reply(tok, h, a, 3) : am_request(ep, q, h, a, 3);
    if (seq % 3 == 1)
        return reply ? am_reply_bulk(tok, h, buf, len, a, 3)
                     : am_request_bulk(ep, q, h, buf, len, a, 3);
    return reply ? am_reply_long(tok, h, buf, len, a, 3)
                 : am_request_long(ep, q, h, buf, len, a, 3);
}

static void cyc_on_req(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    unsigned from = am_token_source(t);
    if (!cyc_ok(a, n, d, len, from, from < MAXP ? cy->req[me][from] : 0, 0))
        return;
    cy->req[me][from]++;
    int rc = cyc_send(NULL, t, from, a[1]);
    if (rc < 0 && cy->rc[me] == 0)
        cy->rc[me] = rc;
}

static void cyc_on_rep(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    unsigned from = am_token_source(t);
    if (cyc_ok(a, n, d, len, from, from < MAXP ? cy->rep[me][from] : 0, 1))
        cy->rep[me][from]++;
}

static void yield_hook(enum am_hook where)
{
    tu_widen(stall_calls++ * MAXP + (unsigned)me);
}

static void yield_spsc_hook(enum am_spsc_hook where)
{
    tu_widen(stall_calls++ * MAXP + (unsigned)me + 7u);
}

static unsigned long row_sum(const unsigned long *v)
{
    unsigned long s = 0;
    for (unsigned i = 0; i < cy->procs; i++)
        s += v[i];
    return s;
}

/* Poll until all replies are in (which == 0) or all processes finished. */
static int cyc_poll(am_ep_t *ep, int which)
{
    for (;;) {
        if (which == 0 ? row_sum(cy->rep[me]) == row_sum(cy->sent[me])
                       : AO_load_acquire(&cy->finished) == cy->procs)
            return 0;
        int n = am_poll(ep);
        if (n < 0 || tu_now_s() > cy->deadline)
            return -1;
        if (n == 0)
            sched_yield();
    }
}

static void cyc_exchange(am_ep_t *ep)
{
    cy->phase[me] = 1;
    am__claim_stall_hook = yield_hook;
    am_spsc_stall_hook = yield_spsc_hook;
    double stop = tu_now_s() + cy->secs;
    for (unsigned long k = 0; k < cy->min || tu_now_s() < stop; k++) {
        unsigned q = ((unsigned)me + 1 + (unsigned)(k % (cy->procs - 1))) % cy->procs;
        int rc = cyc_send(ep, NULL, q, (unsigned)cy->sent[me][q]);
        if (rc < 0) {
            cy->rc[me] = rc;
            break;
        }
        cy->sent[me][q]++;
        cy->progress[me] = k + 1;
    }
    am__claim_stall_hook = NULL;
    am_spsc_stall_hook = NULL;
    for (unsigned q = 0; q < cy->procs; q++)
        if (q != (unsigned)me)
            cy->backoffs[me] += am__peer(ep, q)->backoffs;
    cy->phase[me] = 2;
    if (cyc_poll(ep, 0) < 0)
        return;
    cy->phase[me] = 3;
    AO_fetch_and_add1_full(&cy->finished);
    if (cyc_poll(ep, 1) < 0)
        return;
    cy->phase[me] = 4;
}

static void cyc_proc(int idx, void *arg)
{
    struct am_ep_opts o = {.shm = tu_backend_name(sh->b),
                           .queue = kind_name(sh->kind),
                           .packets = 2,
                           .bulk_blocks = 1,
                           .max_senders = 4,
                           .long_max = AM_MIN_LONG};
    am_ep_t *ep = NULL;
    me = idx;
    int rc = am_ep_create(sh->snd[me], &o, &ep);
    if (ep) {
        am_set_handler(ep, H_REQ, cyc_on_req);
        am_set_handler(ep, H_REP, cyc_on_rep);
    }
    tu_gate_wait(&cy->gate); /* 1: every endpoint exists */
    for (unsigned q = 0; ep && rc == 0 && q < cy->procs; q++)
        if (q != (unsigned)me)
            rc = am_ep_map(ep, q, sh->snd[q]);
    if (rc < 0)
        cy->rc[me] = rc;
    tu_gate_wait(&cy->gate); /* 2: go */
    if (ep && rc == 0)
        cyc_exchange(ep);
    tu_gate_wait(&cy->gate); /* 3: nobody sends any more */
    if (ep)
        am_ep_destroy(ep);
}

START_TEST(cycle)
{
    static const char *const phases[] = {"setting up", "sending", "awaiting replies",
                                         "awaiting the others", "done"};
    int k = _i, b = _i % 2;
    begin(k, b, "cycle");
    cy = tu_shared_alloc(sizeof *cy);
    cy->procs = 2 + (unsigned)k % 2;
    snprintf(what + strlen(what), sizeof what - strlen(what), " of %u", cy->procs);
    cy->min = 200 * (unsigned)tu_stress_factor();
    cy->secs = 0.4 * tu_stress_factor();
    tu_gate_init(&cy->gate, cy->procs);
    double t0 = tu_now_s();
    cy->deadline = t0 + (CYCLE_LIMIT_S - 3) * tu_stress_factor();
    int failed =
        tu_run_procs((int)cy->procs, cyc_proc, NULL, CYCLE_LIMIT_S * tu_stress_factor());
    char where[MAXP * 400] = "";
    int stuck = 0;
    for (unsigned p = 0; p < cy->procs; p++) {
        stuck += cy->phase[p] != 4;
        snprintf(where + strlen(where), sizeof where - strlen(where),
                 " %u %s (%lu sent%s%s%s%s);", p, phases[cy->phase[p]], cy->progress[p],
                 cy->rc[p] ? ", " : "", cy->rc[p] ? am_strerror(cy->rc[p]) : "",
                 cy->bad[p] ? ", first bad: " : "", cy->first_bad[p]);
    }
    for (unsigned p = 0; p < cy->procs; p++) /* requests sent, received, replies */
        for (unsigned q = 0; q < cy->procs; q++)
            if (p != q)
                snprintf(where + strlen(where), sizeof where - strlen(where),
                         " %u->%u %lu/%lu/%lu;", p, q, cy->sent[p][q], cy->req[q][p],
                         cy->rep[p][q]);
    if (getenv("SHMAM_VERBOSE"))
        printf("%s: %.2f s:%s\n", what, tu_now_s() - t0, where);
    ck_assert_msg(failed == 0 && stuck == 0,
                  "%s: %d processes killed or crashed, %d unfinished after %.1f s "
                  "(deadlock?):%s",
                  what, failed, stuck, tu_now_s() - t0, where);
    for (unsigned p = 0; p < cy->procs; p++) {
        ck_assert_msg(cy->rc[p] == 0, "%s: process %u: %s", what, p,
                      am_strerror(cy->rc[p]));
        ck_assert_msg(cy->bad[p] == 0, "%s: process %u saw %lu bad messages; first: %s",
                      what, p, cy->bad[p], cy->first_bad[p]);
        ck_assert_msg(cy->progress[p] >= cy->min, "%s: process %u sent only %lu", what, p,
                      cy->progress[p]);
        ck_assert_msg(cy->backoffs[p] > 0, "%s: process %u never found a channel full",
                      what, p);
        for (unsigned q = 0; q < cy->procs; q++) {
            ck_assert_msg(cy->req[q][p] == cy->sent[p][q],
                          "%s: %u sent %lu requests to %u, which received %lu", what, p,
                          cy->sent[p][q], q, cy->req[q][p]);
            ck_assert_msg(cy->rep[p][q] == cy->sent[p][q],
                          "%s: %u sent %lu requests to %u and got %lu replies", what, p,
                          cy->sent[p][q], q, cy->rep[p][q]);
        }
    }
    tu_shared_free(cy, sizeof *cy);
    tu_assert_clean(what);
}
END_TEST

/* ---- parked_killed ------------------------------------------------------------------ */

enum { PARK_FILLED, PARK_STAGED, PARK_PUT, PARK_MEDIUM, NPARKS };
static const char *const park_names[NPARKS] = {
    "CHAN_FILLED (packet written, not enqueued)", "LONG_STAGED (block staged, no packet)",
    "AM_SPSC_PUT (enqueue not yet published)",
    "BULK_HALF of a medium message (half its data in the slot's area)"};
static int park_armed;

static void park_now(void)
{
    park_armed = 0;
    AO_store_release(&sh->parked, 1);
    for (;;)
        pause();
}

static void park_hook(enum am_hook where)
{
    if (park_armed && (int)where == sh->hook)
        park_now();
}

static void park_spsc_hook(enum am_spsc_hook where)
{
    if (park_armed && (int)where == sh->spsc_hook)
        park_now();
}

/* Writer 0: PARK_SEQ messages, then parks in the next (a long one; a medium
 * one, AM_MAX_MEDIUM bytes, for PARK_MEDIUM: arg). */
static void parked_writer(void *arg)
{
    static unsigned char buf[AM_MAX_MEDIUM];
    am_ep_t *ep = writer_ep(0);
    for (unsigned seq = 0; seq <= PARK_SEQ; seq++) {
        if (seq == PARK_SEQ) {
            am__claim_stall_hook = park_hook;
            am_spsc_stall_hook = park_spsc_hook;
            park_armed = 1;
        }
        uint32_t a[4] = {0, seq, msg_key(0, seq), AM_MAX_MEDIUM};
        int rc = seq == PARK_SEQ && arg
                     ? am_request_bulk(ep, 0, H_MSG, buf, AM_MAX_MEDIUM, a, 4)
                     : send_msg(ep, 0, 0, seq, SMALL_LONG);
        if (rc < 0 || seq == PARK_SEQ) {
            tu_error(&sh->err, "parked writer: message %u: %s (not parked)", seq,
                     am_strerror(rc));
            _exit(3);
        }
        AO_store(&sh->sent[0], seq + 1);
    }
}

/* Writer w: sh->n messages (or NEW_CLIENT_MSGS for w == 2), then waits. */
static void counted_writer(void *arg)
{
    unsigned w = (unsigned)(uintptr_t)arg;
    am_ep_t *ep = writer_ep(w);
    unsigned n = w == 2 ? NEW_CLIENT_MSGS : sh->n;
    AO_store_release(&sh->started[w], 1);
    for (unsigned seq = 0; seq < n; seq++) {
        int rc = send_msg(ep, 0, w, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "writer %u: message %u: %s", w, seq, am_strerror(rc));
            break;
        }
        AO_store(&sh->sent[w], seq + 1);
    }
    tu_wait_flag(&sh->quit, 1, 60);
    am_ep_destroy(ep);
}

START_TEST(parked_killed)
{
    int k = _i / NPARKS, stage = _i % NPARKS, b = (k + stage) % 2;
    begin(k, b, "parked_killed");
    snprintf(what + strlen(what), sizeof what - strlen(what), " at %s", park_names[stage]);
    sh->hook = stage == PARK_FILLED   ? AM_HOOK_CHAN_FILLED
               : stage == PARK_STAGED ? AM_HOOK_LONG_STAGED
               : stage == PARK_MEDIUM ? AM_HOOK_BULK_HALF
                                      : -1;
    sh->spsc_hook = stage == PARK_PUT ? AM_SPSC_PUT : -1;
    sh->n = 150 * (unsigned)tu_stress_factor();
    am_ep_t *ep = receiver(4, 1, 2, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_msg);
    pid_t v = tu_spawn(parked_writer, (void *)(uintptr_t)(stage == PARK_MEDIUM), 1);
    pid_t p[2];
    p[0] = tu_spawn(counted_writer, (void *)(uintptr_t)1, 0);
    ck_assert_msg(poll_flag(ep, &sh->parked, 1, 20), "%s: the writer never parked (%s)",
                  what, tu_first_error(&sh->err, "no error"));
    const unsigned before[1] = {PARK_SEQ};
    ck_assert_msg(poll_all(ep, before, 1, 10, 1), "%s: %u of the parked writer's first %u",
                  what, rx.got[0], PARK_SEQ);
    poll_for(ep, 0.05);
    ck_assert_msg(rx.got[0] == PARK_SEQ && am_ep_abandoned(ep) == 0,
                  "%s: while parked: %u of its messages, %lu abandoned", what, rx.got[0],
                  am_ep_abandoned(ep));
    kill(v, SIGKILL);
    waitpid(v, NULL, 0);
    am__segment_unlink((enum am_shm)b, sh->snd[0]); /* it never will */
    p[1] =
        tu_spawn(counted_writer, (void *)(uintptr_t)2, 1); /* needs the dead one's entry */
    const unsigned want[3] = {PARK_SEQ, sh->n, NEW_CLIENT_MSGS};
    ck_assert_msg(poll_all(ep, want, 3, 30, 1),
                  "%s: %u of %u live, %u of %u from the new client (%s)", what, rx.got[1],
                  sh->n, rx.got[2], NEW_CLIENT_MSGS, tu_first_error(&sh->err, "no error"));
    poll_for(ep, 0.05);
    reap_all(p, 2);
    assert_writer(0, PARK_SEQ);
    assert_writer(1, sh->n);
    assert_writer(2, NEW_CLIENT_MSGS);
    recycle_now(ep);
    assert_clean_owner(ep);
    unsigned long staged = stage != PARK_MEDIUM; /* a medium message stages nothing */
    ck_assert_msg(am_ep_abandoned(ep) == staged,
                  "%s: %lu blocks taken back from the dead writer, want %lu (its staged "
                  "long message)",
                  what, am_ep_abandoned(ep), staged);
    finish(ep);
}
END_TEST

/* ---- killed_unannounced -------------------------------------------------------- */

/* Writer 0: four messages (short, bulk, long, short) while the owner does
 * not poll, then waits to be killed. */
static void unannounced_writer(void *arg)
{
    am_ep_t *ep = writer_ep(0);
    for (unsigned seq = 0; seq < 4; seq++) {
        int rc = send_msg(ep, 0, 0, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "writer: message %u: %s", seq, am_strerror(rc));
            _exit(3);
        }
    }
    AO_store_release(&sh->parked, 1);
    for (;;)
        pause();
}

START_TEST(killed_unannounced)
{
    int k = _i, b = (_i + 1) % 2;
    begin(k, b, "killed_unannounced");
    am_ep_t *ep = receiver(8, 2, 2, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_msg);
    pid_t v = tu_spawn(unannounced_writer, NULL, 1);
    ck_assert_msg(tu_wait_flag(&sh->parked, 1, 20), "%s: the writer did not send (%s)",
                  what, tu_first_error(&sh->err, "no error"));
    /* As if it had died between its last commit and its notify, after the
     * owner had cleared its bit: only the recycling finds its messages. */
    unsigned i = (unsigned)AO_load(&sh->index[0]) - 1;
    AO_and_full(&ep->own.summary[AM_REQUEST].bits[i / 64], ~((AO_t)1 << (i % 64)));
    kill(v, SIGKILL);
    waitpid(v, NULL, 0);
    am__segment_unlink((enum am_shm)b, sh->snd[0]);
    recycle_now(ep);
    poll_for(ep, 0.05);
    ck_assert_msg(rx.got[0] == 4,
                  "%s: %u of the 4 messages a killed writer had published arrived when its "
                  "channels were recycled",
                  what, rx.got[0]);
    assert_writer(0, 4);
    assert_clean_owner(ep);
    ck_assert_msg(am_ep_abandoned(ep) == 0, "%s: %lu abandoned (its blocks were published)",
                  what, am_ep_abandoned(ep));
    finish(ep);
}
END_TEST

/* ---- come_and_go ------------------------------------------------------------------- */

static int graceful(unsigned c)
{
    return c % 3 == 0;
}

/* A doomed client stalls a millisecond now and then with a long message
 * staged or a packet written, so that kills often land there. */
static void doomed_hook(enum am_hook where)
{
    if ((where == AM_HOOK_LONG_STAGED || where == AM_HOOK_CHAN_FILLED) &&
        tu_mix32(stall_seed, stall_calls++) % 4 == 0)
        tu_sleep_ms(1);
}

static void client(void *arg)
{
    unsigned c = (unsigned)(uintptr_t)arg;
    am_ep_t *ep = writer_ep(c);
    unsigned n = graceful(c) ? 40 : ~0u;
    stall_seed = c;
    am__claim_stall_hook = graceful(c) ? NULL : doomed_hook;
    AO_store_release(&sh->started[c], 1);
    for (unsigned seq = 0; seq < n; seq++) {
        int rc = send_msg(ep, 0, c, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "client %u: message %u: %s", c, seq, am_strerror(rc));
            break;
        }
        AO_store(&sh->sent[c], seq + 1);
    }
    am__claim_stall_hook = NULL;
    am_ep_destroy(ep);
    AO_store_release(&sh->finished[c], 1);
}

START_TEST(come_and_go)
{
    int k = _i, b = (_i + 1) % 2;
    unsigned nc = NCLIENTS * (unsigned)tu_stress_factor();
    nc = nc < MAXW - 1 ? nc : MAXW - 1;
    begin(k, b, "come_and_go");
    am_ep_t *ep = receiver(4, 1, 2, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_msg);
    pid_t live = tu_spawn(live_writer, (void *)(uintptr_t)0, 1);
    AO_store_release(&sh->go, 1);
    srand((unsigned)getpid());
    for (unsigned c = 1; c <= nc; c++) {
        pid_t p = tu_spawn(client, (void *)(uintptr_t)c, (int)c % 2);
        ck_assert_msg(poll_flag(ep, &sh->started[c], 1, 10),
                      "%s: client %u never registered (%s)", what, c,
                      tu_first_error(&sh->err, "no error"));
        if (graceful(c)) {
            ck_assert_msg(poll_flag(ep, &sh->finished[c], 1, 20),
                          "%s: client %u stuck (%s)", what, c,
                          tu_first_error(&sh->err, "no error"));
            tu_assert_exit0(tu_reap(p, 10), "client", what, &sh->err);
            continue;
        }
        poll_for(ep, (2 + rand() % 19) / 1000.0);
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
        am__segment_unlink((enum am_shm)b, sh->snd[c]);
    }
    AO_store_release(&sh->stop, 1);
    ck_assert_msg(poll_flag(ep, &sh->done, 1, 20), "%s: the live writer did not stop",
                  what);
    const unsigned want[1] = {(unsigned)AO_load(&sh->sent[0])};
    ck_assert_msg(poll_all(ep, want, 1, 20, 1), "%s: live writer: %u of %u arrived", what,
                  rx.got[0], want[0]);
    recycle_now(ep); /* the last killed client's channels: drained, its blocks back */
    reap_all(&live, 1);
    assert_writer(0, want[0]);
    for (unsigned c = 1; c <= nc; c++) {
        unsigned s = (unsigned)AO_load(&sh->sent[c]);
        ck_assert_msg(rx.errors[c] == 0,
                      "%s: client %u: %u messages garbled or out of order; %s", what, c,
                      rx.errors[c], rx.first);
        if (graceful(c))
            assert_writer(c, 40);
        else
            ck_assert_msg(rx.got[c] == s || rx.got[c] == s + 1,
                          "%s: killed client %u completed %u sends, %u arrived", what, c, s,
                          rx.got[c]);
    }
    assert_clean_owner(ep);
    if (getenv("SHMAM_VERBOSE"))
        printf("%s: %lu blocks taken back, live writer %u messages\n", what,
               am_ep_abandoned(ep), want[0]);
    finish(ep);
}
END_TEST

/* ---- scribbled ------------------------------------------------------------------------
 */

/* Writer 1, the victim: streams until told to stop; its errors are the
 * vandal's doing and allowed (it may also be left waiting on its broken
 * channel: it is killed at the end). */
static void victim_writer(void *arg)
{
    am_ep_t *ep = writer_ep(1);
    tu_wait_flag(&sh->go, 1, 30);
    for (unsigned seq = 0; !AO_load_acquire(&sh->stop); seq++)
        if (send_msg(ep, 0, 1, seq, SMALL_LONG) == 0) /* no long ones: sh->no_long */
            AO_store(&sh->sent[1], seq + 1);
    for (;;)
        pause();
}

/* Writer 0, honest: streams until the vandal is done. */
static void honest_writer(void *arg)
{
    am_ep_t *ep = writer_ep(0);
    tu_wait_flag(&sh->go, 1, 30);
    unsigned seq;
    for (seq = 0; !AO_load_acquire(&sh->parked); seq++) {
        int rc = send_msg(ep, 0, 0, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "honest writer: message %u: %s", seq, am_strerror(rc));
            break;
        }
        AO_store(&sh->sent[0], seq + 1);
        if (seq % 8 == 7)
            usleep(200);
    }
    AO_fetch_and_add1_full(&sh->done);
    tu_wait_flag(&sh->quit, 1, 60);
    am_ep_destroy(ep);
}

/* A word the vandal writes: random, small, or near a plausible value. */
static AO_t garbage(uint32_t r, AO_t near)
{
    switch (r % 4) {
    case 0:
        return ((AO_t)tu_mix32(r, 1) << 32) | tu_mix32(r, 2);
    case 1:
        return tu_mix32(r, 3) % 80;
    default:
        return near + tu_mix32(r, 4) % 9 - 4;
    }
}

/* One write into the victim's channels (entry `victim`) or a summary word,
 * through the vandal's own mapping. */
static void scribble_one(const struct am_seg_view *v, unsigned victim, uint32_t r)
{
    struct am_chan_view c;
    enum am_qid q = (enum am_qid)(tu_mix32(r, 9) % 2);
    uint32_t slots = v->q[q].packets_n;
    am__chan_at(v, victim, q, &c);
    switch (r % 8) {
    case 0:
    case 1: { /* the ring: header, indices, slots (packets) */
        size_t words = v->chan_ring / sizeof(AO_t);
        AO_t *w = (AO_t *)c.ring + tu_mix32(r, 5) % words;
        AO_store(w, garbage(r >> 3, AO_load(w)));
        break;
    }
    case 2: /* the bulk give-back count */
        AO_store(&c.ctl->bulk_freed, garbage(r >> 3, AO_load(&c.ctl->bulk_freed)));
        break;
    case 3:
    case 4: { /* a word of a slot's packet: the ring's item, or another */
        struct am_packet *p = &c.packets[tu_mix32(r, 6) % slots];
        AO_t *w = (AO_t *)p + tu_mix32(r, 7) % (sizeof *p / sizeof(AO_t));
        AO_store(w, garbage(r >> 3, AO_load(w)));
        break;
    }
    case 5: /* bulk data */
        c.bulk[tu_mix32(r, 8) % ((size_t)v->q[q].bulk_n * AM_BULK_BYTES)] ^=
            (unsigned char)r;
        break;
    default: /* a summary bit set, anywhere: costs a look */
        AO_or_full(&v->summary[q].bits[tu_mix32(r, 10) % (AM_MAX_SENDERS / 64)],
                   (AO_t)1 << (tu_mix32(r, 11) % 64));
        break;
    }
}

static void vandal(void *arg)
{
    struct am_segment seg;
    struct am_seg_view v;
    int rc = am__segment_open((enum am_shm)sh->b, sh->rcv, &seg);
    if (rc == 0 && (rc = am__view_attach(&v, &seg, sh->rcv)) < 0)
        am__segment_unmap(&seg);
    if (rc < 0) {
        tu_error(&sh->err, "vandal: %s", am_strerror(rc));
        AO_store_release(&sh->parked, 1);
        _exit(2);
    }
    unsigned victim = (unsigned)AO_load_acquire(&sh->index[1]) - 1;
    double end = tu_now_s() + sh->secs;
    unsigned long writes = 0;
    for (uint32_t i = 0; tu_now_s() < end; i++) {
        scribble_one(&v, victim, tu_mix32(i, (uint32_t)getpid()));
        writes++;
        if (i % 4 == 3)
            usleep(100);
    }
    sh->writes = writes;
    AO_store_release(&sh->parked, 1); /* the vandal is done */
    am__segment_unmap(&seg);
}

START_TEST(scribbled)
{
    int k = _i, b = _i % 2;
    begin(k, b, "scribbled");
    sh->secs = 1.0 * tu_stress_factor();
    sh->no_long = 1u << 1; /* the victim: short and bulk (the file header's limit) */
    am_ep_t *ep = receiver(4, 2, 3, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_msg);
    pid_t h = tu_spawn(honest_writer, NULL, 0), v = tu_spawn(victim_writer, NULL, 1);
    ck_assert_msg(poll_flag(ep, &sh->index[0], 1, 10) &&
                      poll_flag(ep, &sh->index[1], 1, 10),
                  "%s: writers (%s)", what, tu_first_error(&sh->err, "no error"));
    AO_store_release(&sh->go, 1);
    poll_for(ep, 0.05);
    pid_t vd = tu_spawn(vandal, NULL, 1);
    double worst = 0, end = tu_now_s() + sh->secs + 5;
    while (!(AO_load_acquire(&sh->done) && rx.got[0] >= AO_load(&sh->sent[0])) &&
           tu_now_s() < end) {
        double t0 = tu_now_s();
        int n = am_poll(ep);
        double dt = tu_now_s() - t0;
        worst = dt > worst ? dt : worst;
        if (n == 0)
            sched_yield();
    }
    tu_assert_exit0(tu_reap(vd, 10), "vandal", what, &sh->err);
    unsigned honest = (unsigned)AO_load(&sh->sent[0]);
    printf(
        "%s: the vandal wrote %lu words; %lu bad packets; the victim sent %lu, %u arrived; "
        "slowest poll %.1f ms\n",
        what, sh->writes, am_ep_bad_packets(ep), (unsigned long)AO_load(&sh->sent[1]),
        rx.got[1], worst * 1e3);
    struct am_heap_stats st;
    am_heap_stats(&ep->own.q[AM_REQUEST].heap, &st);
    ck_assert_msg(AO_load(&sh->done) == 1,
                  "%s: the honest writer did not finish (%s): it sent %lu, %u arrived; "
                  "request heap: %zu bytes, %zu free space, %lu blocks live",
                  what, tu_first_error(&sh->err, "no error"),
                  (unsigned long)AO_load(&sh->sent[0]), rx.got[0], st.capacity,
                  st.free_space, st.blocks_live);
    ck_assert_msg(worst < 0.5, "%s: a poll took %.3f s", what, worst);
    assert_writer(0, honest);
    ck_assert_msg(honest > 50, "%s: the honest writer sent only %u", what, honest);
    ck_assert_msg(am_ep_bad_packets(ep) > 0 || rx.errors[1] > 0 ||
                      rx.got[1] < AO_load(&sh->sent[1]),
                  "%s: no damage was counted or lost", what);
    kill(v, SIGKILL);
    waitpid(v, NULL, 0);
    am__segment_unlink((enum am_shm)b, sh->snd[1]);
    AO_store_release(&sh->stop, 1);
    recycle_now(ep); /* the victim's broken channels laid out afresh */
    pid_t p[2] = {h, tu_spawn(counted_writer, (void *)(uintptr_t)2, 1)};
    const unsigned want[3] = {honest, 0, NEW_CLIENT_MSGS};
    rx.errors[2] = rx.got[2] = rx.next[2] = 0; /* the victim's last, garbled, went before */
    ck_assert_msg(poll_all(ep, want, 3, 20, 1), "%s: afterwards %u of %u arrived (%s)",
                  what, rx.got[2], NEW_CLIENT_MSGS, tu_first_error(&sh->err, "no error"));
    reap_all(p, 2);
    assert_writer(2, NEW_CLIENT_MSGS);
    finish(ep);
}
END_TEST

/* ---- summary_cleared -------------------------------------------------------------- */

/* Writer 0: three messages (short, bulk, long: they fit its channels), then
 * waits for the owner to have them. */
static void three_writer(void *arg)
{
    am_ep_t *ep = writer_ep(0);
    for (unsigned seq = 0; seq < 3; seq++) {
        int rc = send_msg(ep, 0, 0, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "writer: message %u: %s", seq, am_strerror(rc));
            break;
        }
    }
    AO_store_release(&sh->done, 1);
    tu_wait_flag(&sh->quit, 1, 60);
    am_ep_destroy(ep);
}

START_TEST(summary_cleared)
{
    int k = _i, b = (_i + 1) % 2;
    begin(k, b, "summary_cleared");
    am_ep_t *ep = receiver(4, 2, 3, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_msg);
    pid_t p = tu_spawn(three_writer, NULL, 1);
    ck_assert_msg(tu_wait_flag(&sh->done, 1, 10), "%s: the writer did not send (%s)", what,
                  tu_first_error(&sh->err, "no error"));
    unsigned i = (unsigned)AO_load(&sh->index[0]) - 1;
    ck_assert_msg(AO_load(&ep->own.summary[AM_REQUEST].bits[i / 64]) &
                      ((AO_t)1 << (i % 64)),
                  "%s: the writer's bit is not set after its sends", what);
    for (int q = 0; q < 2; q++) /* a peer clears every bit */
        for (unsigned w = 0; w < AM_MAX_SENDERS / 64; w++)
            AO_store(&ep->own.summary[q].bits[w], 0);
    const unsigned want[1] = {3};
    int ok = poll_until(ep, want, 1, 2.0, 1);
    AO_store_release(&sh->quit, 1);
    tu_assert_exit0(tu_reap(p, 10), "writer", what, &sh->err);
    ck_assert_msg(ok,
                  "%s: %u of the 3 messages sent before a peer cleared the summary "
                  "arrived within 2 s",
                  what, rx.got[0]);
    assert_writer(0, 3);
    assert_clean_owner(ep);
    finish(ep);
}
END_TEST

/* ---- forged ------------------------------------------------------------------------- */

static unsigned forged_runs;

static void on_other(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    forged_runs++;
}

/* Reserve the next slot of our request channel to ep (mapped as peer 0),
 * write pk's words 1.. into it and commit `item` (0: the state a producer
 * writes for that position), as chan_send.c does; set our summary bit. */
static void forge(am_ep_t *ep, const struct am_packet *pk, AO_t item, const char *why)
{
    struct am_peer *p = am__peer(ep, 0);
    struct am_seg_view *v = p->view;
    struct am_chan_tx *tx = &p->tx[AM_REQUEST];
    AO_t *slot;
    if (!item)
        item = AM_STATE(am_lap(tx->end.pos, v->q[AM_REQUEST].packets_n), p->who, AM_READY);
    int rc = v->ring->reserve(&tx->end, &slot);
    ck_assert_msg(rc == 0, "%s: reserve for the packet with %s: %s", what, why,
                  am_strerror(rc));
    memcpy(slot + 1, (const AO_t *)pk + 1, sizeof *pk - sizeof(AO_t));
    v->ring->commit(&tx->end, item);
    v->ring->flush(&tx->end);
    AO_or_full(&v->summary[AM_REQUEST].bits[p->sender_index / 64],
               (AO_t)1 << (p->sender_index % 64));
}

static void poll_n(am_ep_t *ep, int n)
{
    for (int i = 0; i < n; i++)
        am_poll(ep);
}

START_TEST(forged)
{
    int k = _i, b = _i % 2;
    begin(k, b, "forged");
    am_ep_t *ep = receiver(4, 2, 3, AM_MIN_LONG);
    am_set_handler(ep, H_OTHER, on_other);
    ck_assert_int_eq(am_ep_map(ep, 0, sh->rcv), 0); /* ourselves: an entry, our ends */
    struct am_peer *me_peer = am__peer(ep, 0);
    struct am_chan_tx *tx = &me_peer->tx[AM_REQUEST];
    const uint32_t Q = 4, B = 2;
    unsigned who = me_peer->who;
    /* Every summary bit forged, in both queues: a look each, nothing else. */
    for (int q = 0; q < 2; q++)
        for (unsigned w = 0; w < AM_MAX_SENDERS / 64; w++)
            AO_store(&ep->own.summary[q].bits[w], ~(AO_t)0);
    poll_n(ep, 3 * AM_CHAN_IDLE);
    ck_assert_msg(am_ep_bad_packets(ep) == 0 && forged_runs == 0,
                  "%s: forged summary bits: %lu bad packets, %u handlers ran", what,
                  am_ep_bad_packets(ep), forged_runs);
    for (int q = 0; q < 2; q++)
        ck_assert_msg((AO_load(&ep->own.summary[q].bits[0]) & 7u) == 0,
                      "%s: queue %d: bits %#lx still set after %d idle polls", what, q,
                      (unsigned long)AO_load(&ep->own.summary[q].bits[0]) & 7u,
                      3 * AM_CHAN_IDLE);
    /* Bad packets, one at a time: each counted once, no handler runs. */
    uint64_t other_block;
    unsigned other = AM_WHO(2, 1); /* a sender that may never allocate here */
    ck_assert_int_eq(am_heap_alloc(&ep->own.q[AM_REQUEST].heap, 64, other, &other_block),
                     0);
    enum {
        IT_OK,
        IT_NEXT_LAP,
        IT_PREV_LAP,
        IT_OTHER_WHO,
        IT_CLAIMED,
        IT_FREE,
        IT_BULK,
        IT_BULK_USED
    };
    struct {
        const char *why;
        struct am_packet pk;
        int item; /* the item: as a producer writes it (IT_OK), or how it is wrong */
    } bad[] = {
        {"handler 300", {.handler = 300}, IT_OK},
        {"handler unregistered", {.handler = 77}, IT_OK},
        {"9 arguments", {.handler = H_OTHER, .nargs = 9}, IT_OK},
        {"unknown flags", {.handler = H_OTHER, .flags = 7}, IT_OK},
        {"long block never allocated",
         {.handler = H_OTHER, .flags = AM_PKT_LONG, .bulk_ticket = 12345, .bulk_len = 64},
         IT_OK},
        {"long block of another sender",
         {.handler = H_OTHER,
          .flags = AM_PKT_LONG,
          .bulk_ticket = other_block,
          .bulk_len = 64},
         IT_OK},
        {"one-copy long without a region",
         {.handler = H_OTHER, .flags = AM_PKT_LONG_AT, .bulk_len = 1},
         IT_OK},
        {"bulk ticket out of range",
         {.handler = H_OTHER, .bulk_ticket = tx->bulk_next + B, .bulk_len = 10},
         IT_BULK},
        {"9000 bulk bytes", {.handler = H_OTHER, .bulk_len = 9000}, IT_BULK_USED},
        {"a medium length past its slot's area",
         {.handler = H_OTHER, .flags = AM_PKT_MEDIUM, .bulk_len = AM_MEDIUM_BYTES + 1},
         IT_OK},
        {"a medium length of 2^32 - 1",
         {.handler = H_OTHER, .flags = AM_PKT_MEDIUM, .bulk_len = 0xffffffffu},
         IT_OK},
        {"an item of the next lap", {.handler = H_OTHER}, IT_NEXT_LAP},
        {"an item of the lap before", {.handler = H_OTHER}, IT_PREV_LAP},
        {"an item of another claimant", {.handler = H_OTHER}, IT_OTHER_WHO},
        {"an item CLAIMED", {.handler = H_OTHER}, IT_CLAIMED},
        {"an item FREE", {.handler = H_OTHER}, IT_FREE},
    };
    const size_t nbad = sizeof bad / sizeof bad[0];
    for (size_t i = 0; i < nbad; i++) {
        struct am_packet pk = bad[i].pk;
        AO_t lap = am_lap(tx->end.pos, Q), item = 0;
        unsigned other_who = AM_WHO(AM_WHO_INDEX(who), AM_WHO_GEN(who) + 1);
        switch (bad[i].item) {
        case IT_NEXT_LAP:
            item = AM_STATE((lap + 1) & AM_LAP_MASK, who, AM_READY);
            break;
        case IT_PREV_LAP:
            item = AM_STATE((lap - 1) & AM_LAP_MASK, who, AM_READY);
            break;
        case IT_OTHER_WHO:
            item = AM_STATE(lap, other_who, AM_READY);
            break;
        case IT_CLAIMED:
            item = AM_STATE(lap, who, AM_CLAIMED);
            break;
        case IT_FREE:
            item = AM_STATE(lap, who, AM_FREE);
            break;
        case IT_BULK_USED:
            pk.bulk_ticket = tx->bulk_next;
            /* fall through */
        case IT_BULK:
            item = AM_STATE(lap, who, AM_READY_BULK);
            break;
        }
        unsigned long before = am_ep_bad_packets(ep);
        forge(ep, &pk, item, bad[i].why);
        tx->bulk_next += bad[i].item == IT_BULK_USED; /* the owner gives its block back */
        poll_n(ep, 4);
        ck_assert_msg(
            am_ep_bad_packets(ep) == before + 1 && forged_runs == 0,
            "%s: packet with %s: %lu bad packets counted (want 1), %u handlers ran", what,
            bad[i].why, am_ep_bad_packets(ep) - before, forged_runs);
    }
    ck_assert_int_eq(am_heap_free(&ep->own.q[AM_REQUEST].heap, other_block, other), 0);
    /* A long message whose item a peer garbled: dropped, and its block, which
     * its live sender staged and believes sent, given back by the owner (or
     * it stays allocated until the sender leaves: a few such and the heap
     * every sender shares is full). */
    uint64_t off;
    ck_assert_int_eq(am_heap_alloc(&ep->own.q[AM_REQUEST].heap, 100, who, &off), 0);
    struct am_packet lp = {
        .handler = H_OTHER, .flags = AM_PKT_LONG, .bulk_ticket = off, .bulk_len = 100};
    forge(ep, &lp, AM_STATE((am_lap(tx->end.pos, Q) + 1) & AM_LAP_MASK, who, AM_READY),
          "a long message with an item of the next lap");
    poll_n(ep, 4);
    ck_assert_msg(am_ep_bad_packets(ep) == nbad + 1 && forged_runs == 0,
                  "%s: a long message with a garbled item: %lu bad packets (want %zu), %u "
                  "handlers ran",
                  what, am_ep_bad_packets(ep), nbad + 1, forged_runs);
    ck_assert_msg(heap_live(ep, AM_REQUEST) == 0,
                  "%s: the block of a dropped long message (its item garbled) is still "
                  "allocated: %lu blocks live while its sender lives",
                  what, heap_live(ep, AM_REQUEST));
    /* A long message whose flags a peer garbled runs as a short one: nothing
     * in it says its block is to be given back, and its sender, alive, will
     * never free it: the known limit of the file header.  Exactly that block
     * stays allocated, also after a reclaim, and nothing else. */
    ck_assert_int_eq(am_heap_alloc(&ep->own.q[AM_REQUEST].heap, 100, who, &off), 0);
    lp.bulk_ticket = off;
    lp.flags = 0;
    forge(ep, &lp, 0, "a long message whose flags were cleared");
    poll_n(ep, 4);
    ck_assert_msg(forged_runs == 1, "%s: the garbled long message ran %u times", what,
                  forged_runs);
    AO_store(&ep->own.shared->reclaim[AM_REQUEST], 1);
    poll_n(ep, 4 * AM_CHAN_IDLE);
    ck_assert_msg(heap_live(ep, AM_REQUEST) == 1,
                  "%s: %lu heap blocks live after a long message whose flags a peer "
                  "cleared and a reclaim (want its 1: its sender lives)",
                  what, heap_live(ep, AM_REQUEST));
    /* Good messages after all that: short, bulk, long, in order. */
    am_set_handler(ep, H_MSG, on_msg);
    strcpy(sh->snd[0], sh->rcv); /* we are writer 0 */
    for (unsigned seq = 0; seq < 9; seq++) {
        int rc = send_msg(ep, 0, 0, seq, AM_MIN_LONG);
        ck_assert_msg(rc == 0, "%s: good message %u: %s", what, seq, am_strerror(rc));
        poll_n(ep, 2);
    }
    ck_assert_msg(rx.got[0] == 9 && rx.errors[0] == 0 && rx.next[0] == 9,
                  "%s: %u of 9 good messages after the bad ones, %u bad (%s)", what,
                  rx.got[0], rx.errors[0], rx.first);
    ck_assert_msg(am_ep_bad_packets(ep) == nbad + 1 && heap_live(ep, AM_REQUEST) == 1,
                  "%s: %lu bad packets at the end (want %zu), %lu heap blocks live (want "
                  "the garbled one's)",
                  what, am_ep_bad_packets(ep), nbad + 1, heap_live(ep, AM_REQUEST));
    finish(ep);
}
END_TEST

/* ---- summary_bits ------------------------------------------------------------------ */

#define NIDLE 64 /* registered senders, one of them active */
#define ACTIVE 40

static void many_senders(void *arg)
{
    static am_ep_t *eps[NIDLE];
    struct am_ep_opts o = {.shm = tu_backend_name(sh->b),
                           .queue = "mpsc",
                           .packets = 2,
                           .bulk_blocks = 1,
                           .max_senders = 2,
                           .long_max = AM_MIN_LONG};
    for (int i = 0; i < NIDLE; i++) {
        char role[16], name[AM_NAME_MAX];
        snprintf(role, sizeof role, "i%d", i);
        tu_ep_name(name, sizeof name, role, -1, sh->b);
        int rc = am_ep_create(name, &o, &eps[i]);
        if (rc == 0)
            rc = am_ep_map(eps[i], 0, sh->rcv);
        if (rc < 0) {
            tu_error(&sh->err, "sender %d: %s", i, am_strerror(rc));
            _exit(2);
        }
        if (i == ACTIVE)
            strcpy(sh->snd[0], name);
    }
    am_ep_t *ep = eps[ACTIVE];
    struct am_peer *peer = am__peer(ep, 0);
    AO_store_release(&sh->index[0], peer->sender_index + 1);
    unsigned seq = 0;
    for (AO_t round = 1; round <= 3; round++) {
        if (!tu_wait_flag(&sh->go, round, 20))
            break;
        if (round == 3) /* the owner sleeps in am_wait: wake it */
            for (double end = tu_now_s() + 5;
                 !AO_int_load(&peer->view->shared->sleeping) && tu_now_s() < end;)
                sched_yield();
        for (unsigned n = round == 1 ? 10 : 1; n > 0; n--, seq++) {
            int rc = send_msg(ep, 0, 0, seq, SMALL_LONG);
            if (rc < 0)
                tu_error(&sh->err, "active sender: message %u: %s", seq, am_strerror(rc));
        }
    }
    tu_wait_flag(&sh->quit, 1, 60);
    for (int i = 0; i < NIDLE; i++)
        am_ep_destroy(eps[i]);
}

/* The summary bits of the request queue, but entry i's. */
static AO_t others(am_ep_t *ep, unsigned i)
{
    AO_t any = 0;
    for (unsigned w = 0; w < AM_MAX_SENDERS / 64; w++)
        any |= AO_load(&ep->own.summary[AM_REQUEST].bits[w]) &
               ~(w == i / 64 ? (AO_t)1 << (i % 64) : 0);
    return any | AO_load(&ep->own.summary[AM_REPLY].bits[0]);
}

static int bit_of(am_ep_t *ep, unsigned i)
{
    return (AO_load(&ep->own.summary[AM_REQUEST].bits[i / 64]) >> (i % 64)) & 1;
}

START_TEST(summary_bits)
{
    int k = _i, b = (_i + 1) % 2;
    begin(k, b, "summary_bits");
    am_ep_t *ep = receiver(4, 1, 100, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_msg);
    pid_t p = tu_spawn(many_senders, NULL, 1);
    ck_assert_msg(poll_flag(ep, &sh->index[0], 1, 20),
                  "%s: %d senders did not register (%s)", what, NIDLE,
                  tu_first_error(&sh->err, "no error"));
    unsigned i = (unsigned)AO_load(&sh->index[0]) - 1;
    ck_assert_msg(others(ep, i) == 0 && !bit_of(ep, i), "%s: bits set before any send",
                  what);
    AO_store_release(&sh->go, 1);
    unsigned want[1] = {10};
    ck_assert_msg(poll_all(ep, want, 1, 10, 0), "%s: %u of 10 messages of the active one",
                  what, rx.got[0]);
    ck_assert_msg(others(ep, i) == 0, "%s: bits of idle senders set: %#lx", what,
                  (unsigned long)others(ep, i));
    poll_n(ep, 2 * AM_CHAN_IDLE + 2);
    ck_assert_msg(!bit_of(ep, i), "%s: entry %u's bit still set after %d idle polls", what,
                  i, 2 * AM_CHAN_IDLE + 2);
    AO_store_release(&sh->go, 2); /* one more message: sets the bit again */
    double end = tu_now_s() + 10;
    while (!bit_of(ep, i) && tu_now_s() < end)
        sched_yield();
    ck_assert_msg(bit_of(ep, i), "%s: a message after idleness did not set the bit", what);
    want[0] = 11;
    ck_assert_msg(poll_all(ep, want, 1, 10, 0), "%s: the message after idleness", what);
    poll_n(ep, 2 * AM_CHAN_IDLE + 2);
    ck_assert_msg(!bit_of(ep, i) && others(ep, i) == 0, "%s: bits set after idleness",
                  what);
    AO_store_release(&sh->go, 3); /* sent once we sleep */
    double t0 = tu_now_s();
    int n = am_wait(ep, 4000);
    double dt = tu_now_s() - t0;
    ck_assert_msg(n >= 1 && rx.got[0] == 12 && dt < 2.0,
                  "%s: am_wait returned %d after %.3f s with %u of 12 messages (a sleeping "
                  "owner not woken?)",
                  what, n, dt, rx.got[0]);
    AO_store_release(&sh->quit, 1);
    tu_assert_exit0(tu_reap(p, 20), "senders", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    assert_writer(0, 12);
    assert_clean_owner(ep);
    finish(ep);
}
END_TEST

/* ---- summary_race ------------------------------------------------------------------ */

/* Writer 0: message by message, each sent a random 0-12 us after the owner
 * had the one before (about when a spinning owner clears an idle channel's
 * bit, after 64 empty visits), or 0-200 us for an owner in am_wait (which
 * goes to sleep after spinning 1-100 us, adapted to the gaps), each awaited for 30 s at
 * most (the owner's am_wait sleeps up to 60 s: the bound tells a lost wake-up from a late
 * one however busy the machine). */
static void racing_writer(void *arg)
{
    am_ep_t *ep = writer_ep(0);
    tu_wait_flag(&sh->go, 1, 30);
    for (unsigned seq = 0; seq < sh->n; seq++) {
        int rc = send_msg(ep, 0, 0, seq, SMALL_LONG);
        if (rc < 0) {
            tu_error(&sh->err, "writer: message %u: %s", seq, am_strerror(rc));
            break;
        }
        double t0 = tu_now_s(), end = t0 + 30.0; /* a loaded machine's owner may wait */
        while (AO_load_acquire(&sh->done) < seq + 1 && tu_now_s() < end)
            spin_cpu_relax();
        double dt = tu_now_s() - t0;
        sh->secs = dt > sh->secs ? dt : sh->secs; /* the slowest, for SHMAM_VERBOSE */
        sh->writes += dt > 0.01;
        if (AO_load_acquire(&sh->done) < seq + 1) {
            tu_error(&sh->err,
                     "message %u not delivered 30 s after its send (stranded behind a "
                     "cleared summary bit, or the owner not woken?)",
                     seq);
            break;
        }
        double until = tu_now_s() + (tu_mix32(seq, 77) % sh->gap_cs) / 1e8;
        while (tu_now_s() < until)
            spin_cpu_relax();
    }
    AO_store_release(&sh->stop, 1);
    /* The owner may sleep (60 s) or be about to, past its look at stop: a
     * message ends its am_wait (a bare futex wake-up does not). */
    int rc = am_request(ep, 0, H_OTHER, NULL, 0);
    if (rc < 0)
        tu_error(&sh->err, "writer: the stop message: %s", am_strerror(rc));
    for (double end = tu_now_s() + 60; !AO_load_acquire(&sh->quit) && tu_now_s() < end;)
        tu_sleep_ms(1);
    am_ep_destroy(ep);
}

static void on_counted(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    on_msg(t, a, n, d, len);
    AO_store_release(&sh->done, rx.got[0]);
}

START_TEST(summary_race)
{
    int k = _i, b = _i % 2;
    begin(k, b, "summary_race");
    sh->n = (k % 2 ? 2000 : 20000) * (unsigned)tu_stress_factor(); /* a wake-up each */
    /* am_wait spins up to 100 us (adapting to the gaps) before it sleeps:
     * gaps up to 200 us land on both sides of its decision to sleep. */
    sh->gap_cs = k % 2 ? 20000 : 1200;
    sh->no_long = 1u << 0;
    am_ep_t *ep = receiver(4, 1, 4, SMALL_LONG);
    am_set_handler(ep, H_MSG, on_counted);
    am_set_handler(ep, H_OTHER, on_other); /* the stop message */
    pid_t p = tu_spawn(racing_writer, NULL, 1);
    AO_store_release(&sh->go, 1);
    double t0 = tu_now_s(), end = t0 + 30 * tu_stress_factor();
    while (!AO_load_acquire(&sh->stop) && tu_now_s() < end)
        if (k % 2) /* about to sleep when the message comes */
            am_wait(ep, 60000);
        else /* about to clear the channel's bit when it comes */
            am_poll(ep);
    unsigned got = rx.got[0];
    if (getenv("SHMAM_VERBOSE"))
        printf("%s: %u messages in %.2f s, the slowest in %.1f ms, %lu over 10 ms\n", what,
               got, tu_now_s() - t0, sh->secs * 1e3, sh->writes);
    poll_for(ep, 0.1); /* what came late, and how */
    AO_store_release(&sh->quit, 1);
    tu_assert_exit0(tu_reap(p, 20), "writer", what, &sh->err);
    unsigned i = (unsigned)AO_load(&sh->index[0]) - 1;
    ck_assert_msg(AO_load(&sh->err.n) == 0,
                  "%s: %s (the owner had %u messages then, %u after 0.1 s more; %lu bad "
                  "packets; the channel's bit %lu)",
                  what, tu_first_error(&sh->err, ""), got, rx.got[0], am_ep_bad_packets(ep),
                  (unsigned long)(AO_load(&ep->own.summary[AM_REQUEST].bits[0]) >> i) & 1);
    assert_writer(0, sh->n);
    assert_clean_owner(ep);
    finish(ep);
}
END_TEST

static Suite *chan_suite(void)
{
    Suite *s = suite_create("chan");
    int nk = n_kinds();
    struct {
        const char *name;
        int timeout;
        const TTest *tests[3];
        int loops[3];
    } cases[] = {
        {"stream", 300, {stream_stalled, medium_in_place}, {2, 2}},
        {"stopped", 60, {stopped_writer, stopped_long_holder}, {1, 1}},
        {"cycle", 60, {cycle}, {1}},
        {"killed", 90, {parked_killed, killed_unannounced, come_and_go}, {NPARKS, 1, 1}},
        {"hostile", 60, {scribbled, summary_cleared, forged}, {1, 1, 1}},
        {"summary", 90, {summary_bits, summary_race}, {1, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        TCase *tc = tu_tcase(s, cases[c].name, cases[c].timeout);
        tcase_add_checked_fixture(tc, setup, teardown);
        for (int t = 0; t < 3 && cases[c].tests[t]; t++)
            tcase_add_loop_test(tc, cases[c].tests[t], 0, nk * cases[c].loops[t]);
    }
    return s;
}

int main(void)
{
    tu_run_init("ch");
    return tu_run_suite(chan_suite(), "check_chan");
}
