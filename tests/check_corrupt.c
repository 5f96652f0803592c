/*
 * check_corrupt.c - corrupt packets in a live queue are data, not crashes: the
 * receiver counts each one, reports the first once on stderr, frees it, and
 * goes on delivering every valid message exactly once and in order.
 *
 * Three processes per test, for every claim algorithm on both backends:
 *   receiver  owns the endpoint (8 packets, 2 bulk blocks, 8 senders), polls,
 *             with its stderr sent to a file the parent reads afterwards;
 *   sender    sends numbered valid messages, short and bulk, with the API;
 *   injector  maps the receiver like any sender, then claims packets in its
 *             request queue with the runtime's own claim (am__claim_try), fills
 *             them with bad values and release-stores READY or READY_BULK: a
 *             handler id out of range or unregistered, 9 or 255 arguments, a
 *             source beyond the sender table or unregistered, a bulk ticket
 *             naming a block not claimed for it (one of them claiming a
 *             block it then names no packet for: the live injector's claim,
 *             which the receiver must free, or every bulk send would wait
 *             for it), a bulk length of 9000 or 0xFFFFFFFF, a medium
 *             (inline) length of AM_MEDIUM_BYTES + 1 or 0xFFFFFFFF.  It
 *             counts its bulk claims in its entry as a real sender does.  Each
 *             injected packet names a registered handler (H_INJ) except for
 *             the one field that makes it bad, so a check the receiver
 *             misses shows up as a delivery to H_INJ.
 * Phase 1: sender and injector run together.  Phase 2, with the queue quiet: the
 * injector writes impossible state words (wrong laps) straight into the head
 * slot, one at a time, and waits until the receiver has reset each.  Phase 3:
 * both run together again, to show that the queue still works.  The injector
 * ends each phase with a valid marker message, which, coming after its packets
 * in its own FIFO order, tells the receiver that all of them have been seen.
 * The run is bounded by its progress, not its length: it fails once the
 * receiver has counted nothing new (valid, marker or bad) for STALL_S seconds
 * (beside a CPU-bound process it may take many times its usual second).
 * SHMAM_VERBOSE=1 prints each run's time and message counts.
 *
 *   anderson_ticket_garbage  both backends: a FIFO lock's words rewritten to
 *                  a state no run of the lock reaches (ticket: next 2^20
 *                  tickets ahead of owner, owner ahead of next; anderson:
 *                  next ahead of every slot, slot 0 admitting a ticket past
 *                  its waiter's; mcs: next ahead of served; clh: served
 *                  ahead of next): a sender's request must fail with -EPROTO
 *                  (in milliseconds; the test waits up to 30 s) while the
 *                  receiver lives and polls (it waited for ever before; the
 *                  test kills it then).
 *   lifeline_links_overwritten  both backends, lockfree and mutex: a raw
 *                  writer maps the receiver's segment itself (not through
 *                  shmam, so the header and entry pages are writable to it)
 *                  and writes non-canonical pointers into the robust-list
 *                  links of every lifeline in it (the owner's and each sender
 *                  entry's) whenever a sender, holding its entry, asks; two
 *                  senders create an endpoint, map the receiver (and then a
 *                  second endpoint of its process, so the entry is let go
 *                  while a newer lifeline is held), send, ask, and destroy,
 *                  20 rounds each (one round at a time: the
 *                  writer must not race the few instructions between the
 *                  mend and glibc's unlock, which README says stay open);
 *                  the receiver polls and finally destroys its endpoint.  No
 *                  process may die of a signal (glibc followed the links on
 *                  unlock: SIGSEGV), every message arrives, and every round's
 *                  release was mended, and the receiver's
 *                  (am_lock_mutex_mended).
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "mpsc.h"
#include "peers.h"
#include "testutil.h"

#define H_VALID 5
#define H_VALIDB 6
#define H_MARK 8
#define H_INJ 20
#define H_UNREG 77 /* in range, never registered */
#define MAX_SENDERS 8
#define STALL_S 20 /* a run whose receiver counts nothing new this long hangs */

enum role { RECV, SEND, INJ, NROLES };
static const char *const role_names[] = {"receiver", "sender", "injector"};

/* The ways a packet is made bad. */
enum kind {
    HANDLER_300,
    HANDLER_65535,
    HANDLER_UNREG,
    HANDLER_INTERNAL,
    NARGS_9,
    NARGS_255,
    SOURCE_MAX,
    SOURCE_65535,
    SOURCE_FREE,
    BULK_UNCLAIMED,
    BULK_TICKET_HUGE,
    BULK_LEN_9000,
    BULK_LEN_MAX,
    BULK_CLAIMED_ELSEWHERE,
    MEDIUM_LEN_OVER,
    MEDIUM_LEN_MAX,
    NKINDS
};

/* Impossible head states, as (lap offset, type); lap - 1 only when lap > 0. */
static const struct {
    int dlap;
    enum am_type type;
} impossible[] = {
    {1, AM_READY}, {3, AM_READY_BULK}, {1, AM_FREE}, {2, AM_CLAIMED}, {-1, AM_READY},
};
#define NIMPOSSIBLE (sizeof impossible / sizeof impossible[0])

struct shared {
    struct tu_gate gate;
    const char *alg, *shm;
    char name[NROLES][AM_NAME_MAX];
    int errfd; /* the receiver's stderr: an unlinked temporary file */
    unsigned n1, n2, rounds;
    AO_t progress;                 /* the receiver's count of messages seen, valid or bad */
    AO_t phase1_seen, phase2_seen; /* set by the receiver */
    int rc[NROLES];
    char what[NROLES][120];
    /* The receiver's tallies. */
    unsigned long valid, viol, bad_valid, inj_delivered, markers, bad_marker;
    unsigned long bad_packets, hdr_bad_packets;
    long expect; /* next valid sequence number */
    long first_want, first_got;
    int timed_out;
    /* The injector's. */
    unsigned long injected, states_written;
};

static struct shared *S;
static int me;

/* Valid bulk message seq: its length (its bytes: tu_pattern(seq)). */
static size_t len_of(unsigned seq)
{
    static const size_t special[] = {8192, 0, 1, 8191, 4097};
    return seq % 4 == 0 ? special[(seq / 4) % 5] : tu_mix32(seq, 1) % (AM_MAX_BULK + 1);
}

static void note(int rc, const char *what)
{
    if (rc < 0 && S->rc[me] == 0) {
        S->rc[me] = rc;
        snprintf(S->what[me], sizeof S->what[me], "%s", what);
    }
}

static void give_up(const char *what)
{
    if (S->rc[me] == 0) {
        S->rc[me] = -EPROTO;
        snprintf(S->what[me], sizeof S->what[me], "%s", what);
    }
}

/* Has the receiver counted nothing new for STALL_S - 2 seconds, as this
 * process has watched?  A process that waits asks, and gives up then, so
 * that it says why before tu_run_procs_moving kills it. */
static int stalled(void)
{
    static AO_t seen;
    static double since;
    AO_t p = AO_load(&S->progress);
    double now = tu_now_s();
    if (since == 0 || p != seen) {
        seen = p, since = now;
        return 0;
    }
    return now - since > STALL_S - 2;
}

/* Wait (yielding) until *flag is set; 0, or -1 once stalled. */
static int await(volatile AO_t *flag)
{
    while (!AO_load_acquire(flag)) /* pairs with the receiver's release */
        if (stalled())
            return -1;
        else
            tu_yield();
    return 0;
}

/* ---- receiver ---- */

static void valid_seq(unsigned seq)
{
    if ((long)seq != S->expect && S->viol++ == 0) {
        S->first_want = S->expect;
        S->first_got = seq;
    }
    S->expect = (long)seq + 1;
    S->valid++;
}

static void on_valid(am_token_t *tok, const uint32_t *a, int nargs, void *data, size_t len)
{
    if (nargs != 2 || a[1] != tu_mix32(a[0], 0) || data || len)
        S->bad_valid++;
    else
        valid_seq(a[0]);
}

static void on_validb(am_token_t *tok, const uint32_t *a, int nargs, void *data, size_t len)
{
    const uint8_t *p = data;
    int ok =
        nargs == 3 && a[1] == tu_mix32(a[0], 0) && len == a[2] && len == len_of(a[0]) && p;
    for (size_t i = 0; ok && i < len; i++)
        ok = p[i] == tu_pattern_byte(a[0], i);
    if (!ok)
        S->bad_valid++;
    else
        valid_seq(a[0]);
}

static void on_mark(am_token_t *tok, const uint32_t *a, int nargs, void *data, size_t len)
{
    if (nargs != 1 || a[0] != S->markers + 1)
        S->bad_marker++;
    S->markers++;
}

static void on_inj(am_token_t *tok, const uint32_t *a, int nargs, void *data, size_t len)
{
    S->inj_delivered++; /* an injected packet got through the checks */
}

static void receiver(void)
{
    struct am_ep_opts o = {.claim = S->alg,
                           .shm = S->shm,
                           .packets = 8,
                           .bulk_blocks = 2,
                           .max_senders = MAX_SENDERS};
    am_ep_t *ep = NULL;
    if (dup2(S->errfd, 2) < 0)
        note(-errno, "redirecting stderr");
    int rc = am_ep_create(S->name[RECV], &o, &ep);
    note(rc, "am_ep_create");
    if (ep) {
        am_set_handler(ep, H_VALID, on_valid);
        am_set_handler(ep, H_VALIDB, on_validb);
        am_set_handler(ep, H_MARK, on_mark);
        am_set_handler(ep, H_INJ, on_inj);
    }
    tu_gate_wait(&S->gate); /* 1: every endpoint exists */
    tu_gate_wait(&S->gate); /* 2: go */
    while (ep) {
        int n = am_poll(ep);
        if (n < 0) {
            note(n, "am_poll");
            break;
        }
        if (!AO_load(&S->phase1_seen) && S->valid >= S->n1 && S->markers >= 1)
            AO_store_release(&S->phase1_seen, 1);
        if (!AO_load(&S->phase2_seen) && S->markers >= 2)
            AO_store_release(&S->phase2_seen, 1);
        if (S->valid >= S->n1 + S->n2 && S->markers >= 3)
            break;
        if (n != 0 ||
            am_ep_bad_packets(ep) + S->valid + S->markers != AO_load(&S->progress))
            AO_store(&S->progress, am_ep_bad_packets(ep) + S->valid + S->markers);
        else if (stalled()) {
            S->timed_out = 1;
            break;
        } else
            tu_yield();
    }
    if (ep) {
        S->bad_packets = am_ep_bad_packets(ep);
        S->hdr_bad_packets = AO_load(&ep->own.hdr->bad_packets);
    }
    tu_gate_wait(&S->gate); /* 3: done */
    if (ep)
        note(am_ep_destroy(ep), "am_ep_destroy");
}

/* ---- sender ---- */

static unsigned hook_calls;

static void widen_hook(enum am_hook where)
{
    tu_widen(hook_calls++ * NROLES + (unsigned)me);
}

static int send_valid(am_ep_t *ep, unsigned seq)
{
    static uint8_t buf[AM_MAX_BULK];
    if (seq % 3 != 2) {
        uint32_t a[2] = {seq, tu_mix32(seq, 0)};
        return am_request(ep, 0, H_VALID, a, 2);
    }
    size_t len = len_of(seq);
    tu_pattern(buf, seq, len);
    uint32_t a[3] = {seq, tu_mix32(seq, 0), (uint32_t)len};
    return am_request_bulk(ep, 0, H_VALIDB, buf, len, a, 3);
}

static void send_range(am_ep_t *ep, unsigned from, unsigned to)
{
    am__claim_stall_hook = widen_hook;
    for (unsigned seq = from; seq < to; seq++) {
        int rc = send_valid(ep, seq);
        if (rc < 0) {
            note(rc, "am_request");
            break;
        }
    }
    am__claim_stall_hook = NULL;
}

static void sender(am_ep_t *ep)
{
    send_range(ep, 0, S->n1);
    if (await(&S->phase2_seen) < 0)
        give_up("gave up waiting for phase 2 to end");
    else
        send_range(ep, S->n1, S->n1 + S->n2);
}

/* ---- injector ---- */

/* Claim a packet (and a bulk block if `bulk`) like any sender: counting a
 * bulk claim in its entry (ended by inject once published), asking for the
 * bulk blocks' repair while it waits for one (its own idle claims too, when
 * no other sender waits); 0 or -1. */
static int claim(struct am_peer *peer, struct am_claim_state *c, int bulk)
{
    struct am_seg_view *v = peer->view;
    am__claim_begin(c, bulk, peer->who);
    while (am__claim_try_counted(v, &v->q[AM_REQUEST], c,
                                 am__sender(v, peer->sender_index)) <= 0) {
        if (stalled()) {
            give_up("gave up claiming a packet");
            return -1;
        }
        if (bulk)
            am__claim_orphans_ask(v, AM_REQUEST);
        tu_yield();
    }
    return 0;
}

/* Put one bad packet of kind k into the receiver's request queue. */
static int inject(struct am_peer *peer, enum kind k, unsigned salt)
{
    struct am_seg_view *v = peer->view;
    struct am_queue_view *q = &v->q[AM_REQUEST];
    struct am_claim_state c;
    if (claim(peer, &c,
              k == BULK_LEN_9000 || k == BULK_LEN_MAX || k == BULK_CLAIMED_ELSEWHERE) < 0)
        return -1;
    struct am_packet *p = &q->packets[c.ticket & (q->packets_n - 1)];
    enum am_type type = AM_READY;
    unsigned who = c.who; /* the source, as the state word names it */
    p->bulk_ticket = 0;
    p->handler = H_INJ;
    p->nargs = 2;
    p->flags = 0;
    p->call = 0;
    p->room = 0;
    p->bulk_len = 0;
    p->args[0] = 0xbad;
    p->args[1] = k;
    switch (k) {
    case HANDLER_300:
        p->handler = 300;
        break;
    case HANDLER_65535:
        p->handler = 65535;
        break;
    case HANDLER_UNREG:
        p->handler = H_UNREG;
        break;
    case HANDLER_INTERNAL: /* just past the internal handlers: the first id none has */
        p->handler = AM_HANDLER_TOTAL;
        break; /* unused */
    case NARGS_9:
        p->nargs = 9;
        break;
    case NARGS_255:
        p->nargs = 255;
        break;
    case SOURCE_MAX:
        who = AM_WHO(v->max_senders, 0);
        break;
    case SOURCE_65535:
        who = (1u << AM_WHO_BITS) - 1u;
        break;
    case SOURCE_FREE:
        who = AM_WHO(v->max_senders - 1, 0);
        if (AO_load(&am__sender(v, v->max_senders - 1)->state) != AM_SENDER_FREE)
            give_up("the last sender entry is not free");
        break;
    case BULK_UNCLAIMED: /* a block of a lap long to come */
        type = AM_READY_BULK;
        p->bulk_ticket = AO_load(&q->send->bulk_tail) + (uint64_t)q->bulk_n * (1000 + salt);
        p->bulk_len = 100;
        break;
    case BULK_TICKET_HUGE:
        type = AM_READY_BULK;
        p->bulk_ticket = ~(uint64_t)0 - salt;
        p->bulk_len = 100;
        break;
    case BULK_LEN_9000:
    case BULK_LEN_MAX: /* a block properly claimed: the receiver must free it */
        type = AM_READY_BULK;
        p->bulk_ticket = c.bulk_ticket;
        p->bulk_len = k == BULK_LEN_9000 ? 9000 : 0xffffffffu;
        break;
    case BULK_CLAIMED_ELSEWHERE: /* its block claimed, and a packet naming the next */
        type = AM_READY_BULK;
        p->bulk_ticket = c.bulk_ticket + 1;
        p->bulk_len = 100;
        break;
    case MEDIUM_LEN_OVER: /* inline in its slot, longer than the slot's area */
    case MEDIUM_LEN_MAX:
        p->flags = AM_PKT_MEDIUM;
        p->bulk_len = k == MEDIUM_LEN_OVER ? AM_MEDIUM_BYTES + 1 : 0xffffffffu;
        break;
    case NKINDS:
        break;
    }
    /* Pairs with the receiver's acquire-load of the state, as mpsc_send.c's publish. */
    AO_store_release(&p->state, AM_STATE(am_lap(c.ticket, q->packets_n), who, type));
    if (c.want_bulk)
        am__claim_bulk_ended(am__sender(v, peer->sender_index));
    S->injected++;
    return 0;
}

static int inject_rounds(struct am_peer *peer)
{
    am__claim_stall_hook = widen_hook;
    for (unsigned r = 0; r < S->rounds; r++)
        for (int k = 0; k < NKINDS; k++) {
            if (inject(peer, (enum kind)k, r) < 0) {
                am__claim_stall_hook = NULL;
                return -1;
            }
            tu_widen((r * NKINDS + (unsigned)k) * NROLES + (unsigned)me);
        }
    am__claim_stall_hook = NULL;
    return 0;
}

/* With the queue quiet, write impossible states into the head slot, each once
 * the receiver has reset the one before. */
static int write_states(struct am_peer *peer)
{
    struct am_queue_view *q = &peer->view->q[AM_REQUEST];
    for (size_t i = 0; i < NIMPOSSIBLE; i++) {
        uint64_t head = AO_load(&q->recv->head);
        struct am_packet *p = &q->packets[head & (q->packets_n - 1)];
        AO_t lap = am_lap(head, q->packets_n), free_state = AM_STATE(lap, 0, AM_FREE);
        if (AO_load_acquire(&p->state) != free_state) {
            give_up("head slot of a quiet queue is not free");
            return -1;
        }
        int dlap = impossible[i].dlap < 0 && lap == 0 ? 5 : impossible[i].dlap;
        AO_store_release(&p->state,
                         AM_STATE((AO_t)((long)lap + dlap), 0, impossible[i].type));
        S->states_written++;
        while (AO_load_acquire(&p->state) != free_state ||
               AO_load(&q->recv->head) != head) {
            if (stalled()) {
                give_up("receiver never reset an impossible head state");
                return -1;
            }
            tu_yield();
        }
    }
    return 0;
}

static int mark(am_ep_t *ep, uint32_t k)
{
    int rc = am_request(ep, 0, H_MARK, &k, 1);
    note(rc, "am_request of a marker");
    return rc;
}

static void injector(am_ep_t *ep)
{
    struct am_peer *peer = am__peer(ep, 0);
    if (inject_rounds(peer) < 0 || mark(ep, 1) < 0)
        return;
    if (await(&S->phase1_seen) < 0) {
        give_up("gave up waiting for phase 1 to end");
        return;
    }
    if (write_states(peer) < 0 || mark(ep, 2) < 0)
        return;
    if (inject_rounds(peer) == 0)
        mark(ep, 3);
}

static void child(int idx, void *arg)
{
    struct am_ep_opts o = {.claim = S->alg, .shm = S->shm, .packets = 2, .bulk_blocks = 1};
    am_ep_t *ep = NULL;
    int rc;
    me = idx;
    if (me == RECV) {
        receiver();
        return;
    }
    note(rc = am_ep_create(S->name[me], &o, &ep), "am_ep_create");
    tu_gate_wait(&S->gate); /* 1 */
    if (ep && (rc = am_ep_map(ep, 0, S->name[RECV])) < 0) {
        note(rc, "am_ep_map of the receiver");
        am_ep_destroy(ep);
        ep = NULL;
    }
    tu_gate_wait(&S->gate); /* 2 */
    if (ep)
        (me == SEND ? sender : injector)(ep);
    tu_gate_wait(&S->gate); /* 3 */
    if (ep)
        note(am_ep_destroy(ep), "am_ep_destroy");
}

/* ---- parent ---- */

/* Lines of open file `fd` that mention "corrupt"; the first such line in `first`.
 * Any other line (a sanitizer's report, say) is copied to our stderr. */
static int corrupt_lines(int fd, char *first, size_t n)
{
    char line[512];
    int count = 0;
    FILE *f = lseek(fd, 0, SEEK_SET) == 0 ? fdopen(dup(fd), "r") : NULL;
    first[0] = '\0';
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strstr(line, "corrupt"))
            fprintf(stderr, "receiver: %s", line);
        else if (count++ == 0)
            snprintf(first, n, "%s", line);
    fclose(f);
    return count;
}

START_TEST(corrupt_packets)
{
    struct tu_combo c = tu_combo_of(_i);
    const char *alg = c.alg_name, *shm = c.backend_name;
    char pfx[AM_NAME_MAX], first_left[128] = "";
    int stress = tu_stress_factor();
    S = tu_shared_alloc(sizeof *S);
    S->alg = alg;
    S->shm = shm;
    S->n1 = 30000 * (unsigned)stress;
    S->n2 = 10000 * (unsigned)stress;
    S->rounds = 300 * (unsigned)stress;
    for (int r = 0; r < NROLES; r++)
        tu_name(S->name[r], AM_NAME_MAX, "%s-%s-%.4s", alg, shm, role_names[r]);
    char path[] = "/tmp/shmam-corrupt-XXXXXX";
    S->errfd = mkstemp(path);
    ck_assert_msg(S->errfd >= 0, "%s/%s: mkstemp: %s", alg, shm, strerror(errno));
    unlink(path);
    tu_gate_init(&S->gate, NROLES);
    double t0 = tu_now_s();
    int failed = tu_run_procs_moving(NROLES, child, NULL, &S->progress, STALL_S);
    double secs = tu_now_s() - t0;
    tu_name(pfx, sizeof pfx, "%s-%s-", alg, shm);
    int left = tu_leftovers(pfx, 1, first_left, sizeof first_left);
    char first[512];
    int lines = corrupt_lines(S->errfd, first, sizeof first);
    close(S->errfd);
    unsigned long want_bad = S->injected + S->states_written;
    /* and each BULK_CLAIMED_ELSEWHERE block, freed (and counted) once a bulk
     * send waits for it: the last one may never be waited for */
    unsigned long idle_blocks = 2 * S->rounds;
    if (getenv("SHMAM_VERBOSE"))
        fprintf(stderr, "%s/%s: %.2f s, %lu valid, %lu bad; %s", alg, shm, secs, S->valid,
                S->bad_packets, first);

    ck_assert_msg(failed == 0,
                  "%s/%s: %d processes crashed or hung (%.1f s): %lu of %u valid, %lu "
                  "markers, %lu injected, %lu states, receiver %s",
                  alg, shm, failed, secs, S->valid, S->n1 + S->n2, S->markers, S->injected,
                  S->states_written, S->timed_out ? "gave up" : "did not give up");
    ck_assert_msg(!S->timed_out,
                  "%s/%s: receiver gave up after %.0f s: %lu of %u valid, %lu markers", alg,
                  shm, secs, S->valid, S->n1 + S->n2, S->markers);
    for (int r = 0; r < NROLES; r++)
        ck_assert_msg(S->rc[r] == 0, "%s/%s: %s: %s: %s", alg, shm, role_names[r],
                      S->what[r], am_strerror(S->rc[r]));
    ck_assert_msg(S->inj_delivered == 0, "%s/%s: %lu corrupt packets were delivered", alg,
                  shm, S->inj_delivered);
    ck_assert_msg(S->bad_valid == 0, "%s/%s: %lu valid messages arrived damaged", alg, shm,
                  S->bad_valid);
    ck_assert_msg(S->viol == 0,
                  "%s/%s: %lu valid messages out of order; first: %ld for %ld", alg, shm,
                  S->viol, S->first_got, S->first_want);
    ck_assert_msg(S->valid == S->n1 + S->n2, "%s/%s: %lu valid messages for %u sent", alg,
                  shm, S->valid, S->n1 + S->n2);
    ck_assert_msg(S->markers == 3 && S->bad_marker == 0, "%s/%s: %lu markers, %lu bad", alg,
                  shm, S->markers, S->bad_marker);
    ck_assert_msg(S->injected == 2 * S->rounds * NKINDS && S->states_written == NIMPOSSIBLE,
                  "%s/%s: injected %lu packets and %lu states", alg, shm, S->injected,
                  S->states_written);
    ck_assert_msg(
        S->bad_packets >= want_bad && S->bad_packets <= want_bad + idle_blocks &&
            S->hdr_bad_packets == S->bad_packets,
        "%s/%s: am_ep_bad_packets %lu, header %lu, for %lu injected and up to %lu "
        "idle blocks",
        alg, shm, S->bad_packets, S->hdr_bad_packets, want_bad, idle_blocks);
    ck_assert_msg(lines == 1, "%s/%s: %d corrupt-packet reports on stderr (first: %s)", alg,
                  shm, lines, first);
    ck_assert_msg(left == 0, "%s/%s: %d endpoint segment(s) left behind, e.g. %s", alg, shm,
                  left, first_left);
    tu_shared_free(S, sizeof *S);
}
END_TEST

/* ---- anderson_ticket_garbage ---- */

#define GARBAGE_BOUND_S 30 /* the send's bound; it returns in milliseconds */

/* Words of a FIFO lock, where ticket.c, anderson.c and qnode.h keep them
 * (their private layouts: ticket's next at 0 and owner at 8; anderson's next
 * at 64 and slot i's turn at 128 + 64 i; mcs's, clh's, hemlock's and hapax's
 * next at 0 and served at 8), and garbage for each.  A ticket word is
 * (ticket << 24 | taker id); 0xabcdef names no sender. */
static const struct {
    enum am_claim alg;
    size_t off;
    AO_t word;
    const char *what;
} garbage[] = {
    {AM_CLAIM_TICKET, 0, (AO_t)1 << 44 | 0xabcdef,
     "ticket: next 2^20 tickets ahead of owner"},
    {AM_CLAIM_TICKET, 8, (AO_t)1 << 20, "ticket: owner 2^20 tickets ahead of next"},
    {AM_CLAIM_ANDERSON, 64, (AO_t)1 << 44 | 0xabcdef,
     "anderson: next 2^20 tickets ahead of every slot"},
    {AM_CLAIM_ANDERSON, 128, (AO_t)1 << 26,
     "anderson: slot 0 admits 2^26, past its waiter's 0"},
    {AM_CLAIM_MCS, 0, (AO_t)1 << 44 | 0xabcdef, "mcs: next 2^20 tickets ahead of served"},
    {AM_CLAIM_CLH, 8, (AO_t)1 << 20, "clh: served 2^20 tickets ahead of next"},
    {AM_CLAIM_HEMLOCK, 0, (AO_t)1 << 44 | 0xabcdef,
     "hemlock: next 2^20 tickets ahead of served"},
    {AM_CLAIM_HEMLOCK, 8, (AO_t)1 << 20, "hemlock: served 2^20 tickets ahead of next"},
    {AM_CLAIM_HAPAX, 0, (AO_t)1 << 44 | 0xabcdef,
     "hapax: next 2^20 tickets ahead of served"},
    {AM_CLAIM_HAPAX, 8, (AO_t)1 << 20, "hapax: served 2^20 tickets ahead of next"},
};
#define NGARBAGE (sizeof garbage / sizeof garbage[0])

struct garbage_shared {
    char rcv[AM_NAME_MAX], snd[AM_NAME_MAX];
    const char *shm;
    AO_t done; /* the sender's request returned */
    int rc, map_rc;
};
static struct garbage_shared *G;

/* Sends one request to the receiver (index 0) and says what it returned. */
static void garbage_sender(void *arg)
{
    struct am_ep_opts o = {.shm = G->shm};
    am_ep_t *ep = NULL;
    G->map_rc = am_ep_create(G->snd, &o, &ep);
    if (G->map_rc == 0 && (G->map_rc = tu_map_when_there(ep, 0, G->rcv, 10)) == 0) {
        uint32_t a[2] = {0, 0};
        G->rc = am_request(ep, 0, H_VALID, a, 2);
    }
    AO_store_release(&G->done, 1);
    if (ep)
        am_ep_destroy(ep);
}

START_TEST(anderson_ticket_garbage)
{
    unsigned g = (unsigned)_i / 2;
    const char *shm = tu_backend_name(_i % 2);
    char what[160], pfx[AM_NAME_MAX], first_left[128] = "";
    snprintf(what, sizeof what, "%s/%s", garbage[g].what, shm);
    G = tu_shared_alloc(sizeof *G);
    G->shm = shm;
    tu_name(G->rcv, AM_NAME_MAX, "g%u-%s-rcv", g, shm);
    tu_name(G->snd, AM_NAME_MAX, "g%u-%s-snd", g, shm);
    struct am_ep_opts o = {.claim = am_claim_names[garbage[g].alg], .shm = shm};
    am_ep_t *ep = NULL;
    ck_assert_msg(am_ep_create(G->rcv, &o, &ep) == 0, "%s: receiver", what);
    char *lock = ep->own.q[AM_REQUEST].lock; /* a peer can write it as well */
    AO_store((volatile AO_t *)(void *)(lock + garbage[g].off), garbage[g].word);
    pid_t p = tu_spawn(garbage_sender, NULL, 1);
    double t0 = tu_now_s();
    while (!AO_load_acquire(&G->done) && tu_now_s() < t0 + GARBAGE_BOUND_S)
        am_wait(ep, 5); /* the receiver lives and polls all along */
    double secs = tu_now_s() - t0;
    int done = (int)AO_load_acquire(&G->done);
    if (!done) {
        kill(p, SIGKILL);
        am__segment_unlink((enum am_shm)(_i % 2), G->snd);
    }
    int st = tu_reap(p, 10);
    am_ep_destroy(ep);
    tu_name(pfx, sizeof pfx, "g%u-%s-", g, shm);
    int left = tu_leftovers(pfx, 1, first_left, sizeof first_left);
    ck_assert_msg(done, "%s: the request had not returned after %.1f s, the receiver alive",
                  what, secs);
    ck_assert_msg(G->map_rc == 0 && G->rc == -EPROTO && st == 0,
                  "%s: map %s, request %s (want -EPROTO), sender exit status %d", what,
                  am_strerror(G->map_rc), am_strerror(G->rc), st);
    ck_assert_msg(left == 0, "%s: %d segment(s) left behind, e.g. %s", what, left,
                  first_left);
    tu_shared_free(G, sizeof *G);
}
END_TEST

/* ---- lifeline_links_overwritten ---- */

#define LL_ROUNDS 20 /* per sender */
#define LL_MSGS 10   /* per round */

struct ll_shared {
    struct tu_errors err;
    char rcv[AM_NAME_MAX], rcv2[AM_NAME_MAX], snd[2][AM_NAME_MAX];
    const char *shm, *claim;
    AO_t ready, stop_writer, stop_receiver, got, mended, rounds;
    AO_t turn;      /* a sender's round in progress: 0 none, else its id + 1 */
    AO_t ask, done; /* the writer's sweeps asked for and done */
};
static struct ll_shared *L;

static void ll_on_msg(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    AO_fetch_and_add1(&L->got);
}

static void ll_receiver(void *arg)
{
    struct am_ep_opts o = {.shm = L->shm, .claim = L->claim};
    am_ep_t *ep = NULL, *ep2 = NULL;
    int rc = am_ep_create(L->rcv, &o, &ep);
    if (rc == 0 && (rc = am_ep_create(L->rcv2, &o, &ep2)) < 0)
        am_ep_destroy(ep);
    if (rc < 0) {
        tu_error(&L->err, "receiver: create: %s", am_strerror(rc));
        _exit(2);
    }
    am_set_handler(ep, H_VALID, ll_on_msg);
    AO_store_release(&L->ready, 1);
    while (!AO_load_acquire(&L->stop_receiver))
        am_wait(ep, 5);
    unsigned long before = am_lock_mutex_mended();
    am_ep_destroy(ep); /* its lifeline's links were overwritten too; ep2's is newer */
    AO_fetch_and_add(&L->mended, am_lock_mutex_mended() - before);
    am_ep_destroy(ep2);
}

/* Writes a non-canonical pointer (a write through it faults) into both
 * links of lifeline l, as a process with its own mapping can. */
static void scribble(struct am_lifeline *l, uint32_t seed)
{
    volatile struct __pthread_mutex_s *d = &l->m.__data;
    d->__list.__prev = (void *)(0xdead000000000000ull | tu_mix32(seed, 1));
    d->__list.__next = (void *)(0xbeef000000000000ull | tu_mix32(seed, 2));
}

/* The raw writer: the receiver's segment mapped through its own file or id;
 * every lifeline's links overwritten whenever a sender asks. */
static void ll_writer(void *arg)
{
    struct am_segment seg;
    int rc = am__segment_open((enum am_shm)(strcmp(L->shm, "sysv") == 0), L->rcv, &seg);
    if (rc < 0) {
        tu_error(&L->err, "writer: open: %s", am_strerror(rc));
        _exit(2);
    }
    struct am_seg_header *h = seg.base;
    uint32_t senders = h->max_senders, page = h->page_size;
    uint64_t off = h->senders_off;
    while (!AO_load_acquire(&L->stop_writer)) {
        AO_t ask = AO_load_acquire(&L->ask);
        if (ask == AO_load(&L->done)) {
            usleep(100);
            continue;
        }
        scribble(&h->owner_life, (uint32_t)ask);
        for (uint32_t i = 0; i < senders; i++)
            scribble((struct am_lifeline *)((char *)seg.base + off + (uint64_t)i * page),
                     (uint32_t)ask + i);
        AO_store_release(&L->done, ask);
    }
    am__segment_unmap(&seg);
}

/* One round of sender id, alone (L->turn): create, map the receiver (taking
 * an entry's lifeline there) and then its second endpoint, send LL_MSGS, have
 * every lifeline's links in the receiver's segment overwritten, destroy
 * (letting the entry go while the newer one in the second is still held, so
 * its links are not what they were when it was taken). */
static int ll_round(unsigned id)
{
    struct am_ep_opts o = {.shm = L->shm};
    am_ep_t *ep = NULL;
    while (!AO_compare_and_swap_full(&L->turn, 0, id + 1))
        usleep(100);
    int rc = am_ep_create(L->snd[id], &o, &ep);
    if (rc == 0)
        rc = am_ep_map(ep, 0, L->rcv);
    if (rc == 0)
        rc = am_ep_map(ep, 1, L->rcv2);
    for (uint32_t i = 0; i < LL_MSGS && rc == 0; i++)
        rc = am_request(ep, 0, H_VALID, (uint32_t[]){id, i}, 2);
    AO_t ask = AO_fetch_and_add1_full(&L->ask) + 1;
    if (!tu_wait_flag(&L->done, ask, 10))
        tu_error(&L->err, "sender %u: the writer did not write", id);
    unsigned long before = am_lock_mutex_mended();
    if (ep)
        am_ep_destroy(ep);
    AO_fetch_and_add(&L->mended, am_lock_mutex_mended() - before);
    AO_fetch_and_add1(&L->rounds);
    AO_store_release(&L->turn, 0);
    return rc;
}

static void ll_sender(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    int rc = 0;
    for (int r = 0; r < LL_ROUNDS && rc == 0; r++)
        rc = ll_round(id);
    if (rc < 0)
        tu_error(&L->err, "sender %u: %s", id, am_strerror(rc));
}

START_TEST(lifeline_links_overwritten)
{
    const char *shm = tu_backend_name(_i % 2), *claim = _i / 2 ? "mutex" : "lockfree";
    char what[80], pfx[AM_NAME_MAX], first_left[128] = "";
    snprintf(what, sizeof what, "%s/%s", claim, shm);
    L = tu_shared_alloc(sizeof *L);
    L->shm = shm, L->claim = claim;
    tu_name(L->rcv, AM_NAME_MAX, "ll-%s-%s-rcv", claim, shm);
    tu_name(L->rcv2, AM_NAME_MAX, "ll-%s-%s-rcv2", claim, shm);
    for (int i = 0; i < 2; i++)
        tu_name(L->snd[i], AM_NAME_MAX, "ll-%s-%s-s%d", claim, shm, i);
    pid_t r = tu_spawn(ll_receiver, NULL, 0);
    tu_assert_flag(&L->ready, 1, 10, "the receiver", what, &L->err);
    pid_t w = tu_spawn(ll_writer, NULL, 1);
    pid_t s[2];
    for (int i = 0; i < 2; i++)
        s[i] = tu_spawn(ll_sender, (void *)(uintptr_t)i, i);
    int st[2];
    for (int i = 0; i < 2; i++)
        st[i] = tu_reap(s[i], 60);
    double end = tu_now_s() + 10;
    while (AO_load(&L->got) < LL_MSGS * AO_load(&L->rounds) && tu_now_s() < end)
        tu_sleep_ms(1);
    AO_store_release(&L->stop_writer, 1);
    int st_w = tu_reap(w, 10);
    AO_store_release(&L->stop_receiver, 1);
    int st_r = tu_reap(r, 10);
    tu_name(pfx, sizeof pfx, "ll-%s-%s-", claim, shm);
    int left = tu_leftovers(pfx, 1, first_left, sizeof first_left);
    if (getenv("SHMAM_VERBOSE"))
        fprintf(stderr, "%s: %lu rounds, %lu messages, %lu lifelines mended\n", what,
                (unsigned long)L->rounds, (unsigned long)L->got, (unsigned long)L->mended);
    for (int i = 0; i < 2; i++)
        tu_assert_exit0(st[i], "sender", what, &L->err);
    tu_assert_exit0(st_w, "writer", what, &L->err);
    tu_assert_exit0(st_r, "receiver", what, &L->err);
    tu_assert_no_errors(what, &L->err);
    ck_assert_msg(L->got == LL_MSGS * L->rounds, "%s: %lu of %lu messages arrived", what,
                  (unsigned long)L->got, (unsigned long)(LL_MSGS * L->rounds));
    ck_assert_msg(L->rounds == 2 * LL_ROUNDS && L->mended == L->rounds + 1,
                  "%s: %lu lifelines mended in %lu rounds; want one a round, and the "
                  "receiver's",
                  what, (unsigned long)L->mended, (unsigned long)L->rounds);
    ck_assert_msg(left == 0, "%s: %d segment(s) left behind, e.g. %s", what, left,
                  first_left);
    tu_shared_free(L, sizeof *L);
}
END_TEST

static Suite *corrupt_suite(void)
{
    Suite *s = suite_create("corrupt");
    TCase *tc = tcase_create("injected packets");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, corrupt_packets, 0, tu_combos());
    suite_add_tcase(s, tc);
    tc = tcase_create("lock words");
    tcase_set_timeout(tc, GARBAGE_BOUND_S + 20);
    tcase_add_loop_test(tc, anderson_ticket_garbage, 0, 2 * NGARBAGE);
    suite_add_tcase(s, tc);
    tc = tcase_create("lifelines");
    tcase_set_timeout(tc, 90);
    tcase_add_loop_test(tc, lifeline_links_overwritten, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("dc");
    return tu_run_suite(corrupt_suite(), "check_corrupt");
}
