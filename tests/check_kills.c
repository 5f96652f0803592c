/*
 * check_kills.c - senders SIGKILLed at random instants inside medium records
 * and inside loans, for every claim algorithm and every per-sender channel
 * kind.  Real processes, pinned: the receiver is the test process, each
 * victim and each follower a child of it.
 *
 *   medium_random_kills  a victim streams medium messages of 1..AM_MAX_MEDIUM
 *                        bytes (each carrying its sender, its number, its
 *                        length and a checksum of its bytes) and is SIGKILLed
 *                        after a random 1..8 ms.  Its copy is made slow (the
 *                        hook spins at the claim, half way through the copy
 *                        and, on a channel, between the write and the
 *                        enqueue) so that kills land inside records; a
 *                        round's kill counts as inside one when the victim
 *                        had claimed or reserved its slot and its send had
 *                        not returned.  The receiver must get exactly the
 *                        messages whose send returned (and perhaps the one in
 *                        flight), once each, in order, none torn; then a
 *                        follower takes the victim's place (a table of one
 *                        sender: its very entry, on a channel its very
 *                        channel) and pushes three queues' worth through.
 *   loan_random_kills    the same with a victim that loops prepare, write,
 *                        commit (medium, bulk and long sizes), slowed between
 *                        prepare and commit: a kill with the loan out (not
 *                        yet committing) delivers nothing of it, and the
 *                        follower's loans pass the bulk blocks and the heap
 *                        several times over (the receiver took the dead
 *                        loan's block back).
 *   loan_parked_killed   victims parked by a hook with a loan out (two long
 *                        ones of long_max, then one per bulk block) and
 *                        SIGKILLed: nothing of theirs arrives, and the
 *                        follower's loans pass the heap and the blocks
 *                        several times over.
 * Each random case repeats until at least one kill landed where it aims (in a
 * record, in a loan), up to a bound, and fails if none did.  SHMAM_STRESS
 * multiplies the rounds.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

enum { H_MSG = 1 };
#define PACKETS 16u
#define BULKS 4u
#define LONG_MAX_B (128u << 10) /* AM_HEAP_FLOOR: the heap holds two */
#define FOLLOW (3 * PACKETS)    /* a follower's messages: three queues' worth */
#define ROUNDS 3                /* kills per case, times SHMAM_STRESS */
#define MAX_ROUNDS (8 * ROUNDS)

/* Where the victim was when it died: what its hook and loop last stored. */
enum stage {
    ST_IDLE,      /* between sends */
    ST_SENDING,   /* in a send, no slot yet */
    ST_CLAIMED,   /* slot claimed (or channel slot reserved), not yet filled */
    ST_HALF,      /* half of the data copied */
    ST_FILLED,    /* channel: written, not yet enqueued */
    ST_LENT,      /* a loan out, nothing written */
    ST_WRITING,   /* a loan out, half written */
    ST_COMMITTING /* in am_request_commit */
};

struct shared {
    struct tu_errors err;
    AO_t started, sent_ok, stage, done, parked;
    int alg, queue, loan;
    size_t park_len; /* parked_victim's loan */
    unsigned id;     /* the child's sender id */
    char rcv[AM_NAME_MAX];
};
static struct shared *sh;

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
}

static void teardown(void)
{
    tu_shared_free(sh, sizeof *sh);
}

/* Case i: claim algorithm i on the shared queue, then each channel kind. */
static int n_cases(void)
{
    return tu_n_algs() + AM_QUEUE_COUNT - 1;
}

static void case_of(int i, int *alg, int *queue)
{
    *alg = i < tu_n_algs() ? i : 0;
    *queue = i < tu_n_algs() ? AM_QUEUE_MPSC : i - tu_n_algs() + 1;
}

/* Message seq of sender id: its length (medium only, or loans of every
 * kind's sizes) and its data's pattern key. */
static size_t msg_len(unsigned id, unsigned seq, int loan)
{
    uint32_t h = tu_mix32(id, seq);
    if (!loan)
        return 1 + h % AM_MAX_MEDIUM;
    switch (seq % 3) {
    case 0:
        return 1 + h % AM_MAX_MEDIUM;
    case 1:
        return AM_MAX_MEDIUM + 1 + h % (AM_MAX_BULK - AM_MAX_MEDIUM);
    default:
        return AM_MAX_BULK + 1 + h % 32000;
    }
}

/* ---- the receiver: every message checked, in order per sender ---- */

static struct {
    unsigned vid, fid;   /* this round's victim's and follower's ids */
    unsigned vgot, fgot; /* their messages so far (each the next in order) */
    unsigned errors;     /* torn, out of order, unknown */
    char first[160];     /* the first error */
} rx;

static void rx_error(const char *fmt, unsigned id, unsigned seq, size_t len)
{
    if (rx.errors++ == 0)
        snprintf(rx.first, sizeof rx.first, fmt, id, seq, len);
}

/* args: sender id, seq, length, FNV-1a of the data; the data is the
 * pattern of (id, seq). */
static void on_msg(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    if (n != 4) {
        rx_error("a message of %u args (seq %u, %zu bytes)", (unsigned)n, 0, len);
        return;
    }
    unsigned id = a[0], seq = a[1];
    unsigned *got = id == rx.vid ? &rx.vgot : id == rx.fid ? &rx.fgot : NULL;
    if (!got) {
        rx_error("a message of unknown sender %u (seq %u, %zu bytes)", id, seq, len);
        return;
    }
    if (seq != *got) {
        rx_error("sender %u: message %u out of order (%zu bytes)", id, seq, len);
        *got = seq + 1;
        return;
    }
    (*got)++;
    int bad = a[2] != len || len != msg_len(id, seq, sh->loan) || tu_fnv1a(d, len) != a[3];
    const unsigned char *p = d;
    uint32_t key = tu_mix32(id, seq);
    for (size_t i = 0; !bad && i < len; i++)
        bad = p[i] != tu_pattern_byte(key, i);
    if (bad)
        rx_error("sender %u: message %u torn (%zu bytes)", id, seq, len);
}

/* ---- the children ---- */

static am_ep_t *child_ep(void)
{
    am_ep_t *ep = NULL;
    struct am_ep_opts o = {.shm = "posix"};
    int rc = am_ep_create(NULL, &o, &ep); /* anonymous: a SIGKILL leaves no name */
    const char *step = "create";
    if (rc == 0 && (step = "map", rc = tu_map_when_there(ep, 0, sh->rcv, 10)) < 0)
        am_ep_destroy(ep);
    if (rc < 0) {
        tu_error(&sh->err, "sender %u: %s (receiver %s): %s", sh->id, step, sh->rcv,
                 am_strerror(rc));
        _exit(2);
    }
    return ep;
}

static unsigned spin_seed;

/* Spin up to `max` pauses, by a hash: the slow copy that widens the window. */
static void slow(unsigned max)
{
    unsigned k = tu_mix32(++spin_seed, (unsigned)getpid()) % max;
    for (volatile unsigned i = 0; i < k; i++)
        ;
}

/* The victim's hook: says how far its send got, and dawdles there. */
static void stage_hook(enum am_hook where)
{
    enum stage s = where == AM_HOOK_FILLING       ? ST_CLAIMED
                   : where == AM_HOOK_BULK_HALF   ? ST_HALF
                   : where == AM_HOOK_CHAN_FILLED ? ST_FILLED
                                                  : ST_IDLE;
    if (s == ST_IDLE || AO_load(&sh->stage) >= ST_LENT)
        return;
    AO_store(&sh->stage, s);
    slow(20000);
}

static int send_one(am_ep_t *ep, unsigned id, unsigned seq, int loan, int victim)
{
    static unsigned char buf[AM_MAX_BULK + 32000 + 1];
    size_t len = msg_len(id, seq, loan);
    uint32_t key = tu_mix32(id, seq);
    if (!loan) {
        tu_pattern(buf, key, len);
        uint32_t a[4] = {id, seq, (uint32_t)len, tu_fnv1a(buf, len)};
        if (victim)
            AO_store(&sh->stage, ST_SENDING);
        return am_request_bulk(ep, 0, H_MSG, buf, len, a, 4);
    }
    void *room;
    int rc = am_request_prepare(ep, 0, len, &room);
    if (rc < 0)
        return rc;
    if (victim)
        AO_store(&sh->stage, ST_LENT), slow(20000);
    tu_pattern(room, key, len / 2);
    if (victim)
        AO_store(&sh->stage, ST_WRITING), slow(20000);
    tu_pattern(buf, key, len);
    memcpy((unsigned char *)room + len / 2, buf + len / 2, len - len / 2);
    uint32_t a[4] = {id, seq, (uint32_t)len, tu_fnv1a(buf, len)};
    if (victim)
        AO_store(&sh->stage, ST_COMMITTING);
    return am_request_commit(ep, H_MSG, len, a, 4);
}

/* Streams until killed; sent_ok counts the sends that returned 0. */
static void victim(void *arg)
{
    am_ep_t *ep = child_ep();
    am__claim_stall_hook = stage_hook;
    AO_store_release(&sh->started, 1);
    for (unsigned seq = 0; seq < 1000000; seq++) {
        int rc = send_one(ep, sh->id, seq, sh->loan, 1);
        if (rc < 0) {
            tu_error(&sh->err, "victim %u: message %u: %s", sh->id, seq, am_strerror(rc));
            break;
        }
        AO_store_release(&sh->sent_ok, seq + 1);
        AO_store(&sh->stage, ST_IDLE);
    }
    for (;;)
        pause();
}

static void follower(void *arg)
{
    am_ep_t *ep = child_ep();
    for (unsigned seq = 0; seq < FOLLOW; seq++) {
        int rc = send_one(ep, sh->id, seq, sh->loan, 0);
        if (rc < 0) {
            tu_error(&sh->err, "follower %u: message %u: %s", sh->id, seq, am_strerror(rc));
            break;
        }
    }
    AO_store_release(&sh->done, 1);
    am_ep_destroy(ep);
}

/* Parks with a loan of sh->park_len bytes out (AM_HOOK_LENT), to be killed. */
static void park_lent(enum am_hook where)
{
    if (where != AM_HOOK_LENT)
        return;
    AO_store_release(&sh->parked, 1);
    for (;;)
        pause();
}

static void parked_victim(void *arg)
{
    am_ep_t *ep = child_ep();
    void *room;
    am__claim_stall_hook = park_lent;
    int rc = am_request_prepare(ep, 0, sh->park_len, &room);
    tu_error(&sh->err, "parked victim: prepare of %zu returned: %s", sh->park_len,
             am_strerror(rc));
    _exit(3);
}

/* ---- the tests ---- */

/* Poll until `*got` reaches want, or `stall` seconds pass with no message. */
static int poll_until(am_ep_t *ep, const unsigned *got, unsigned want, double stall)
{
    unsigned seen = *got;
    double end = tu_now_s() + stall;
    while (*got < want && tu_now_s() < end) {
        am_wait(ep, 5);
        if (*got != seen)
            seen = *got, end = tu_now_s() + stall;
    }
    return *got >= want;
}

/* Start the follower (sender id rx.fid) and wait for its FOLLOW messages. */
static void follow(am_ep_t *ep, const char *what)
{
    sh->id = rx.fid;
    rx.fgot = 0;
    pid_t f = tu_spawn(follower, NULL, 1);
    ck_assert_msg(f > 0, "%s: fork", what);
    int came = poll_until(ep, &rx.fgot, FOLLOW, 10);
    tu_reap(f, 10);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(rx.errors == 0, "%s: %s", what, rx.first);
    ck_assert_msg(came, "%s: %u of the follower's %u messages came", what, rx.fgot, FOLLOW);
}

/* The receiver of case (alg, queue): its endpoint, named in sh->rcv for the
 * senders to map. */
static am_ep_t *make_receiver(int alg, int queue, const char *what)
{
    char name[64];
    tu_ep_name(name, sizeof name, "rx", alg, 0);
    struct am_ep_opts o = {
        am_claim_names[alg],   "posix", PACKETS, BULKS, 1, 20, LONG_MAX_B,
        am_queue_names[queue], -1};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(name, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create: %s", what, am_strerror(rc));
    ck_assert_int_eq(am_set_handler(ep, H_MSG, on_msg), 0);
    strcpy(sh->rcv, name);
    return ep;
}

/* Is a kill at stage s inside what this test aims at? */
static int aimed(enum stage s, int loan)
{
    return loan ? s == ST_LENT || s == ST_WRITING : s >= ST_CLAIMED && s <= ST_FILLED;
}

static void random_kills(int i, int loan)
{
    int alg, queue;
    case_of(i, &alg, &queue);
    char what[96];
    snprintf(what, sizeof what, "%s %s, %s", loan ? "loans" : "medium", am_claim_names[alg],
             am_queue_names[queue]);
    am_ep_t *ep = make_receiver(alg, queue, what);
    sh->loan = loan;
    tu_pin(0);
    int rounds = ROUNDS * tu_stress_factor(), hits = 0, r;
    unsigned kills_in_flight = 0;
    for (r = 0; r < MAX_ROUNDS * tu_stress_factor() && (r < rounds || hits == 0); r++) {
        rx.vid = 2 * (unsigned)r + 100, rx.fid = rx.vid + 1;
        rx.vgot = rx.fgot = 0;
        AO_store(&sh->started, 0), AO_store(&sh->sent_ok, 0), AO_store(&sh->stage, 0);
        AO_store(&sh->done, 0);
        sh->id = rx.vid;
        pid_t v = tu_spawn(victim, NULL, 1);
        ck_assert_msg(v > 0, "%s: fork", what);
        double t0 = tu_now_s();
        while (!AO_load_acquire(&sh->started) && tu_now_s() < t0 + 10)
            am_poll(ep);
        double end = tu_now_s() + (1 + tu_mix32((unsigned)r, (unsigned)getpid()) % 8) / 1e3;
        while (tu_now_s() < end)
            am_poll(ep);
        kill(v, SIGKILL);
        tu_reap(v, 10);
        enum stage s = (enum stage)AO_load(&sh->stage);
        unsigned ok = (unsigned)AO_load_acquire(&sh->sent_ok);
        hits += aimed(s, loan);
        kills_in_flight += s != ST_IDLE;
        follow(ep, what);
        /* The victim's: those whose send returned, and perhaps the one in
         * flight, unless it died with its loan out (not committing). */
        int may_one_more = s != ST_IDLE && !(loan && s < ST_COMMITTING);
        ck_assert_msg(rx.vgot == ok || (may_one_more && rx.vgot == ok + 1),
                      "%s, round %d: %u of the victim's messages came, %u sent "
                      "(killed at stage %d)",
                      what, r, rx.vgot, ok, (int)s);
    }
    ck_assert_msg(hits > 0, "%s: none of %d kills landed %s", what, r,
                  loan ? "with a loan out" : "inside a medium record");
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_clean(what);
    if (getenv("SHMAM_KILLS_VERBOSE"))
        fprintf(stderr, "%s: %d kills, %d aimed, %u in a send\n", what, r, hits,
                kills_in_flight);
}

/* Victims parked with a loan out (AM_HOOK_LENT) and SIGKILLed one after
 * another, each in the entry the last one left: two long loans of long_max
 * (the heap's room for two), then a bulk block's loan per bulk block.
 * Nothing of theirs arrives, and the follower's loans pass the heap and the
 * blocks several times: the receiver took the dead loans' room back. */
START_TEST(loan_parked_killed)
{
    int alg, queue;
    case_of(_i, &alg, &queue);
    char what[96];
    snprintf(what, sizeof what, "parked loans %s, %s", am_claim_names[alg],
             am_queue_names[queue]);
    am_ep_t *ep = make_receiver(alg, queue, what);
    sh->loan = 1;
    tu_pin(0);
    rx.vid = 7, rx.fid = 8;
    for (unsigned k = 0; k < 2 + BULKS; k++) {
        sh->park_len = k < 2 ? LONG_MAX_B : AM_MAX_BULK;
        AO_store(&sh->parked, 0);
        pid_t v = tu_spawn(parked_victim, NULL, 1);
        ck_assert_msg(v > 0, "%s: fork", what);
        double end = tu_now_s() + 20;
        while (!AO_load_acquire(&sh->parked) && tu_now_s() < end &&
               AO_load(&sh->err.n) == 0)
            am_wait(ep, 5);
        tu_assert_no_errors(what, &sh->err);
        ck_assert_msg(AO_load(&sh->parked), "%s: victim %u never lent", what, k);
        kill(v, SIGKILL);
        tu_reap(v, 10);
    }
    follow(ep, what);
    ck_assert_msg(rx.vgot == 0, "%s: %u messages of dead loans arrived", what, rx.vgot);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_clean(what);
}
END_TEST

START_TEST(medium_random_kills)
{
    random_kills(_i, 0);
}
END_TEST

START_TEST(loan_random_kills)
{
    random_kills(_i, 1);
}
END_TEST

int main(void)
{
    tu_run_init("kl");
    Suite *s = suite_create("kills");
    TCase *tc = tu_tcase(s, "kills", 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, medium_random_kills, 0, n_cases());
    tcase_add_loop_test(tc, loan_random_kills, 0, n_cases());
    tcase_add_loop_test(tc, loan_parked_killed, 0, n_cases());
    return tu_run_suite(s, "check_kills");
}
