/*
 * check_hostile.c - a same-user peer that writes where it should not: what each
 * corruption may cost (at most garbled or delayed messages in queues it writes
 * to) and what it may never do (crash, hang or misroute another process).
 *
 *   header_flipped_during_attach  a vandal flips the receiver's `packets` between
 *                          8 and 65536 while a client maps it again and again:
 *                          every map fails or sees 8 packets (attach reads the
 *                          header once, into a private copy).
 *   moved_counters         per algorithm and counter: the request queue's tail
 *                          moved by +1000 or -1, its head by +1 or -1, its bulk
 *                          tail by +1000; then a client sends 60 messages, short
 *                          and bulk, which all arrive once and in order (the
 *                          owner keeps its heads private and puts impossible
 *                          tails back).
 *   anderson_slots         Anderson's slot count rewritten to 0 and to 2^40:
 *                          senders index the lock by their own count, and all
 *                          their messages arrive.
 *   tas_word_garbage       tas and ttas: the lock word left "held" by ids no
 *                          live sender has: senders take it over.
 *   mutex_garbage          the queue's pthread mutex overwritten: a send fails
 *                          with -EPROTO (one line on stderr), never aborts.
 *   mutex_rewritten_while_held  a peer rewrites the robust-list links and owner
 *                          of the queue's mutex while a sender holds it: the
 *                          sender puts them back before unlocking (counted)
 *                          instead of writing where they point.
 *   other_users_segment    a process of another user (nobody) puts a 0666 copy of
 *                          a real segment under a name: clients refuse it
 *                          (-EACCES), and nobody's files are never removed.
 *   sysv_segment_given_away  a process of one unprivileged user (nobody) makes
 *                          a System V endpoint and hands its segment to
 *                          another unprivileged user with IPC_SET (uid, mode
 *                          0600): that user's am_ep_map and am_ep_probe refuse
 *                          it (-EACCES: its creator, cuid, is not that user).
 *   sysv_trailer_zeroed    a raw writer (shmat of its own) zeroes the name
 *                          trailer of a live System V endpoint: a second
 *                          am_ep_create of the name ends (-EEXIST) within 20 s
 *                          instead of waiting for ever, a client's am_ep_map
 *                          ends with -EPROTO, and the owner's destroy still
 *                          removes its segment, after which the name can be
 *                          made again.
 *   small_dev_shm          in a private mount namespace with a 512 KB /dev/shm,
 *                          an endpoint too big for it fails at creation with
 *                          -ENOSPC (no SIGBUS later); a small one still works.
 *   bulk_state_garbage     both bulk blocks of the request queue put in states no
 *                          sender writes (a ready type; claimed by an id nobody
 *                          has): bulk sends wait, ask, and the owner repairs.
 *   chaos                  per algorithm: a vandal, mapped as a peer like any
 *                          client, writes random bytes through its mapping into
 *                          the live receiver's header and sender entries (every
 *                          such write must fault: those pages are read-only to
 *                          peers), tails, heads, packet and bulk states,
 *                          and for tas and ttas the lock words, while two
 *                          senders send and the owner polls.  Nobody dies of a
 *                          signal, everyone stops within 10 s of being told, the
 *                          damage is counted, and once the vandal is gone a
 *                          new client's 60 messages all arrive in order.  (The
 *                          FIFO locks' and the mutex's words are left alone:
 *                          garbage there can stall a queue, README's threat
 *                          model.)  At least 1 s each (10 s in make stress),
 *                          and on until the vandal has made CHAOS_WRITES
 *                          writes and CHAOS_RO_TRIES tries at read-only
 *                          pages and the owner has counted damage: a busy
 *                          machine makes it last longer, never fail (up to
 *                          CHAOS_BOUND_S).
 *
 * The vandal is this test process: it maps the victim's segment with
 * am__segment_open, as any same-user process could, and writes into it; in
 * chaos it is a peer writing through the mapping am_ep_map gave it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "lock.h"
#include "peers.h"
#include "testutil.h"

enum { H_MSG = 1 };
#define NMSG 60u

struct shared {
    struct tu_errors err;
    AO_t ready, stop, flip_stop, got, bad_order;
    unsigned long bad_packets, abandoned;
    /* chaos: the vandal's counts so far; the owner's damage count and its
     * calls of on_any and of am_poll so far (stores by each alone) */
    AO_t ro_tries, ro_faults, writes, damage, handled, polls;
    char rcv[AM_NAME_MAX];
    int alg;
    int seg_id, rc_map, rc_probe, rc_create; /* the System V cases' */
};
static struct shared *sh;
static char what[160];

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
}

static void teardown(void)
{
    tu_shared_free(sh, sizeof *sh);
}

/* args: seq, checksum of the data.  Counts messages that arrive in order. */
static void on_msg(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    uint32_t want = (uint32_t)AO_load(&sh->got);
    if (n != 2 || a[0] != want || (len && tu_fnv1a(d, len) != a[1]))
        AO_fetch_and_add1(&sh->bad_order);
    AO_store_release(&sh->got, want + 1);
}

/* Chaos senders' messages: only their arrival matters. */
static void on_any(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    AO_store(&sh->handled, AO_load(&sh->handled) + 1);
}

/* The receiver: a small endpoint (8 packets, 2 bulk blocks) that polls. */
static void receiver(void *arg)
{
    struct am_ep_opts o = {.claim = am_claim_names[sh->alg],
                           .shm = "posix",
                           .packets = 8,
                           .bulk_blocks = 2,
                           .max_senders = 4};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(sh->rcv, &o, &ep);
    if (rc < 0) {
        tu_error(&sh->err, "receiver: create: %s", am_strerror(rc));
        _exit(2);
    }
    am_set_handler(ep, H_MSG, on_msg);
    am_set_handler(ep, H_MSG + 1, on_any);
    AO_store_release(&sh->ready, 1);
    for (AO_t i = 1; !AO_load_acquire(&sh->stop); i++) {
        am_poll(ep);
        AO_store(&sh->polls, i);
        if (i % 64 == 0)
            AO_store(&sh->damage, am_ep_bad_packets(ep) + am_ep_abandoned(ep));
    }
    sh->bad_packets = am_ep_bad_packets(ep);
    sh->abandoned = am_ep_abandoned(ep);
    am_ep_destroy(ep);
}

static pid_t start_receiver(int alg, const char *role)
{
    sh->alg = alg;
    tu_ep_name(sh->rcv, sizeof sh->rcv, role, alg, 0);
    pid_t p = tu_spawn(receiver, NULL, 1);
    tu_assert_flag(&sh->ready, 1, 10, "the receiver", what, &sh->err);
    return p;
}

static void stop_receiver(pid_t p)
{
    AO_store_release(&sh->stop, 1);
    tu_assert_exit0(tu_reap(p, 10), "receiver", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
}

/* The vandal's own mapping of the receiver's segment. */
static struct am_seg_header *vandalise(struct am_segment *seg)
{
    int rc = am__segment_open(AM_SHM_POSIX, sh->rcv, seg);
    ck_assert_msg(rc == 0, "%s: the vandal cannot open the segment: %s", what,
                  am_strerror(rc));
    return seg->base;
}

/* A client sends NMSG messages (every third bulk), each must be taken in. */
static void send_all(const char *role)
{
    char name[AM_NAME_MAX];
    static uint8_t buf[3000];
    tu_ep_name(name, sizeof name, role, sh->alg, 0);
    struct am_ep_opts o = {.shm = "posix"};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(name, &o, &ep);
    ck_assert_msg(rc == 0, "%s: client create: %s", what, am_strerror(rc));
    rc = am_ep_map(ep, 0, sh->rcv);
    ck_assert_msg(rc == 0, "%s: client map: %s", what, am_strerror(rc));
    for (uint32_t i = 0; i < NMSG && rc == 0; i++) {
        size_t len = i % 3 == 0 ? 1 + i * 37 % sizeof buf : 0;
        tu_pattern(buf, i, len);
        uint32_t a[2] = {i, len ? tu_fnv1a(buf, len) : 0};
        rc = len ? am_request_bulk(ep, 0, H_MSG, buf, len, a, 2)
                 : am_request(ep, 0, H_MSG, a, 2);
    }
    ck_assert_msg(rc == 0, "%s: send: %s", what, am_strerror(rc));
    ck_assert_msg(tu_wait_flag(&sh->got, NMSG, 10), "%s: %lu of %u messages arrived", what,
                  (unsigned long)AO_load(&sh->got), NMSG);
    am_ep_destroy(ep);
}

/* ---- header_flipped_during_attach ---- */

static void flipper(void *arg)
{
    struct am_segment seg;
    if (am__segment_open(AM_SHM_POSIX, sh->rcv, &seg) < 0)
        _exit(2);
    volatile uint32_t *packets = &((struct am_seg_header *)seg.base)->packets;
    for (unsigned i = 0; !AO_load(&sh->flip_stop); i++)
        *packets = i % 2 ? 65536 : 8;
    *packets = 8;
}

START_TEST(header_flipped_during_attach)
{
    snprintf(what, sizeof what, "lockfree/posix: header flipped during attach");
    pid_t r = start_receiver(AM_CLAIM_LOCKFREE, "rcv");
    pid_t f = tu_spawn(flipper, NULL, 0);
    char name[AM_NAME_MAX];
    tu_ep_name(name, sizeof name, "cli", 0, 0);
    struct am_ep_opts o = {.shm = "posix"};
    am_ep_t *ep = NULL;
    ck_assert_msg(am_ep_create(name, &o, &ep) == 0, "%s: create", what);
    int mapped = 0, refused = 0;
    for (int i = 0; i < 300; i++) {
        int rc = am_ep_map(ep, 0, sh->rcv);
        ck_assert_msg(rc == 0 || rc == -EPROTO, "%s: map gave %s", what, am_strerror(rc));
        if (rc == 0) {
            struct am_peer *p = am__peer(ep, 0);
            ck_assert_msg(p->view->q[AM_REQUEST].packets_n == 8,
                          "%s: a mapping sees %u packets", what,
                          p->view->q[AM_REQUEST].packets_n);
            mapped++;
            am__peer_drop(ep, 0);
        } else
            refused++;
    }
    AO_store_release(&sh->flip_stop, 1);
    tu_assert_exit0(tu_reap(f, 10), "flipper", what, &sh->err);
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    send_all("cli2"); /* and the receiver still works */
    if (getenv("SHMAM_VERBOSE"))
        printf("%s: %d maps, %d refused\n", what, mapped, refused);
    stop_receiver(r);
    tu_assert_clean(what);
}
END_TEST

/* ---- moved_counters ---- */

enum { TAIL_PLUS, TAIL_MINUS, HEAD_PLUS, HEAD_MINUS, BULK_TAIL_PLUS, NMOVES };
static const char *const move_names[NMOVES] = {"tail +1000", "tail -1", "head +1",
                                               "head -1", "bulk tail +1000"};

static void move_counter(struct am_seg_header *h, int move)
{
    char *b = (char *)h;
    struct am_queue_send *s = (struct am_queue_send *)(b + h->send_off[AM_REQUEST]);
    struct am_queue_recv *r = (struct am_queue_recv *)(b + h->recv_off[AM_REQUEST]);
    volatile AO_t *const word[NMOVES] = {&s->tail, &s->tail, &r->head, &r->head,
                                         &s->bulk_tail};
    static const AO_t delta[NMOVES] = {1000, (AO_t)-1, 1, (AO_t)-1, 1000};
    AO_store(word[move], AO_load(word[move]) + delta[move]);
}

START_TEST(moved_counters)
{
    int alg = _i / NMOVES, move = _i % NMOVES;
    snprintf(what, sizeof what, "%s/posix: %s", am_claim_names[alg], move_names[move]);
    pid_t r = start_receiver(alg, "rcv");
    struct am_segment seg;
    move_counter(vandalise(&seg), move);
    send_all("cli");
    ck_assert_msg(AO_load(&sh->bad_order) == 0, "%s: %lu messages out of order or garbled",
                  what, (unsigned long)AO_load(&sh->bad_order));
    am__segment_unmap(&seg);
    stop_receiver(r);
    /* onecas's tail is a hint that may lag (mpsc_send.c): one behind is no damage. */
    int tail = move == TAIL_PLUS || move == BULK_TAIL_PLUS ||
               (move == TAIL_MINUS && alg != AM_CLAIM_ONECAS);
    ck_assert_msg(!tail || sh->bad_packets >= 1, "%s: the repair was not counted", what);
    tu_assert_clean(what);
}
END_TEST

/* ---- anderson_slots ---- */

START_TEST(anderson_slots)
{
    uint64_t bad = _i ? (uint64_t)1 << 40 : 0;
    snprintf(what, sizeof what, "anderson/posix: slot count %llu", (unsigned long long)bad);
    pid_t r = start_receiver(AM_CLAIM_ANDERSON, "rcv");
    struct am_segment seg;
    struct am_seg_header *h = vandalise(&seg);
    *(volatile uint64_t *)((char *)h + h->lock_off[AM_REQUEST]) = bad; /* nslots */
    send_all("cli");
    am__segment_unmap(&seg);
    stop_receiver(r);
    tu_assert_clean(what);
}
END_TEST

/* The request queue's lock, as the vandal sees it. */
static char *lock_of(struct am_seg_header *h)
{
    return (char *)h + h->lock_off[AM_REQUEST];
}

/* ---- tas_word_garbage ---- */

START_TEST(tas_word_garbage)
{
    int alg = _i / 2 ? AM_CLAIM_TTAS : AM_CLAIM_TAS;
    AO_t word = _i % 2 ? 0xdeadbeefu : 1; /* an id out of any table; id 0 */
    snprintf(what, sizeof what, "%s/posix: lock word %#lx", am_claim_names[alg],
             (unsigned long)word);
    pid_t r = start_receiver(alg, "rcv");
    struct am_segment seg;
    AO_store((volatile AO_t *)(void *)lock_of(vandalise(&seg)), word);
    send_all("cli");
    am__segment_unmap(&seg);
    stop_receiver(r);
    tu_assert_clean(what);
}
END_TEST

/* ---- mutex_garbage ---- */

START_TEST(mutex_garbage)
{
    snprintf(what, sizeof what, "mutex/posix: mutex bytes %s", _i ? "0xa5" : "random");
    pid_t r = start_receiver(AM_CLAIM_MUTEX, "rcv");
    struct am_segment seg;
    char *m = lock_of(vandalise(&seg));
    for (size_t i = 0; i < sizeof(pthread_mutex_t); i++)
        m[i] = _i ? (char)0xa5 : (char)tu_mix32(7, (uint32_t)i);
    char name[AM_NAME_MAX];
    tu_ep_name(name, sizeof name, "cli", AM_CLAIM_MUTEX, 0);
    struct am_ep_opts o = {.shm = "posix"};
    am_ep_t *ep = NULL;
    ck_assert_msg(am_ep_create(name, &o, &ep) == 0 && am_ep_map(ep, 0, sh->rcv) == 0,
                  "%s: client", what);
    uint32_t a[2] = {0, 0};
    int rc = am_request(ep, 0, H_MSG, a, 2);
    ck_assert_msg(rc == -EPROTO, "%s: send gave %s, want -EPROTO", what, am_strerror(rc));
    am_ep_destroy(ep);
    am__segment_unmap(&seg);
    stop_receiver(r);
    tu_assert_clean(what);
}
END_TEST

/* ---- mutex_rewritten_while_held ---- */

/* The vandal's mapping of the receiver's request lock, armed by the test: at
 * the sender's AM_HOOK_LOCKED it rewrites the held mutex's robust-list links
 * and owner, as a peer could, once. */
static pthread_mutex_t *held_target;

static void rewrite_held(enum am_hook where)
{
    if (where != AM_HOOK_LOCKED || !held_target)
        return;
    memset(&held_target->__data.__list, 0x41, sizeof held_target->__data.__list);
    held_target->__data.__owner = 12345;
    held_target = NULL;
}

START_TEST(mutex_rewritten_while_held)
{
    snprintf(what, sizeof what, "mutex/posix: links of the held mutex rewritten");
    char rname[AM_NAME_MAX], sname[AM_NAME_MAX];
    tu_ep_name(rname, sizeof rname, "rcv", AM_CLAIM_MUTEX, 0);
    tu_ep_name(sname, sizeof sname, "cli", AM_CLAIM_MUTEX, 0);
    struct am_ep_opts o = {.claim = "mutex", .shm = "posix"};
    am_ep_t *rcv = NULL, *cli = NULL;
    ck_assert_msg(am_ep_create(rname, &o, &rcv) == 0 &&
                      am_ep_create(sname, &o, &cli) == 0 && am_ep_map(cli, 0, rname) == 0,
                  "%s: endpoints", what);
    am_set_handler(rcv, H_MSG, on_msg);
    struct am_segment seg;
    int rc = am__segment_open(AM_SHM_POSIX, rname, &seg);
    ck_assert_msg(rc == 0, "%s: open: %s", what, am_strerror(rc));
    struct am_seg_header *h = seg.base;
    unsigned long mended = am_lock_mutex_mended();
    held_target = (pthread_mutex_t *)lock_of(h);
    am__claim_stall_hook = rewrite_held;
    for (uint32_t i = 0; i < 3; i++) { /* the first is rewritten; the rest find it sane */
        uint32_t a[2] = {i, 0};
        rc = am_request(cli, 0, H_MSG, a, 2);
        ck_assert_msg(rc == 0, "%s: send %u: %s", what, i, am_strerror(rc));
    }
    am__claim_stall_hook = NULL;
    ck_assert_msg(held_target == NULL, "%s: the hook never ran", what);
    ck_assert_msg(am_lock_mutex_mended() == mended + 1, "%s: %lu rewrites mended, want 1",
                  what, am_lock_mutex_mended() - mended);
    while (AO_load(&sh->got) < 3 && am_poll(rcv) >= 0)
        ;
    ck_assert_msg(AO_load(&sh->bad_order) == 0, "%s: messages out of order", what);
    am__segment_unmap(&seg);
    ck_assert_msg(am_ep_destroy(cli) == 0 && am_ep_destroy(rcv) == 0, "%s: destroy", what);
    tu_assert_clean(what);
}
END_TEST

/* ---- bulk_state_garbage ---- */

START_TEST(bulk_state_garbage)
{
    int alg = _i;
    snprintf(what, sizeof what, "%s/posix: bulk block states garbage", am_claim_names[alg]);
    pid_t r = start_receiver(alg, "rcv");
    struct am_segment seg;
    struct am_seg_header *h = vandalise(&seg);
    struct am_bulk_state *b =
        (struct am_bulk_state *)((char *)h + h->bulk_state_off[AM_REQUEST]);
    AO_store(&b[0].state, AM_STATE(3, 77, AM_READY_BULK));
    AO_store(&b[1].state, AM_STATE(0, AM_WHO(3, 1000), AM_CLAIMED));
    send_all("cli");
    am__segment_unmap(&seg);
    stop_receiver(r);
    tu_assert_clean(what);
}
END_TEST

/* ---- other_users_segment ---- */

/* In a child that became nobody: a 0666 copy of `image` as POSIX segment `name`.
 * Exit 0 done, 3 if it could not become nobody. */
static int impostor(const char *name, const void *image, size_t size)
{
    if (setgid(65534) != 0 || setuid(65534) != 0)
        return 3;
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/shmam-%s", name);
    int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0666);
    if (fd < 0 || fchmod(fd, 0666) != 0 || write(fd, image, size) != (ssize_t)size)
        return 2;
    close(fd);
    return 0;
}

START_TEST(other_users_segment)
{
    snprintf(what, sizeof what, "posix: another user's 0666 segment");
    if (geteuid() != 0) {
        printf("%s: skipped: needs root to act as nobody\n", what);
        return;
    }
    char real[AM_NAME_MAX], fake[AM_NAME_MAX], path[128];
    tu_ep_name(real, sizeof real, "real", 0, 0);
    tu_ep_name(fake, sizeof fake, "fake", 0, 0);
    struct am_ep_opts o = {.shm = "posix"};
    am_ep_t *ep = NULL, *cli = NULL;
    ck_assert_msg(am_ep_create(real, &o, &ep) == 0, "%s: create", what);
    pid_t p = fork();
    if (p == 0)
        _exit(impostor(fake, ep->own.seg.base, ep->own.seg.size));
    int st;
    waitpid(p, &st, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: impostor status %d", what,
                  st);
    ck_assert_msg(am_ep_create(fake, &o, &cli) == -EEXIST, "%s: create over it", what);
    ck_assert_msg(am_ep_map(ep, 0, fake) == -EACCES, "%s: a client mapped it", what);
    ck_assert_msg(am_ep_probe(fake) == -EACCES, "%s: probe", what);
    snprintf(path, sizeof path, "/dev/shm/shmam-%s", fake);
    struct stat sb;
    ck_assert_msg(stat(path, &sb) == 0, "%s: the impostor's file was removed", what);
    unlink(path);
    am_ep_destroy(ep);
    tu_assert_clean(what);
}
END_TEST

/* ---- sysv_segment_given_away ---- */

enum { NOBODY = 65534, VICTIM = 65533 }; /* two unprivileged uids */

/* Drop to uid (and the same gid); 0 or -errno. */
static int become(uid_t uid)
{
    return setgid(uid) == 0 && setuid(uid) == 0 ? 0 : -errno;
}

/* As nobody: a live System V endpoint sh->rcv whose segment is then handed to
 * VICTIM, mode 0600; its id in sh->seg_id.  Lives until told to stop (it is
 * not killed with the test: a change of uid clears PR_SET_PDEATHSIG). */
static void giver(void *arg)
{
    struct am_ep_opts o = {.shm = "sysv"};
    am_ep_t *ep = NULL;
    struct shmid_ds ds;
    int rc = become(NOBODY);
    if (rc == 0)
        rc = am_ep_create(sh->rcv, &o, &ep);
    if (rc < 0) {
        tu_error(&sh->err, "giver: become nobody or create: %s", am_strerror(rc));
        AO_store_release(&sh->ready, 2);
        _exit(2);
    }
    sh->seg_id = ep->own.seg.id;
    if (shmctl(sh->seg_id, IPC_STAT, &ds) == 0) {
        ds.shm_perm.uid = VICTIM;
        ds.shm_perm.mode = 0600;
        rc = shmctl(sh->seg_id, IPC_SET, &ds);
    }
    if (rc < 0)
        tu_error(&sh->err, "giver: IPC_SET: %s", strerror(errno));
    AO_store_release(&sh->ready, 1);
    tu_wait_flag(&sh->stop, 1, 30);
    am_ep_destroy(ep);
}

/* As VICTIM, with an endpoint of its own: map and probe the given segment's
 * name, into sh->rc_map, sh->rc_probe. */
static void taker(void *arg)
{
    char name[AM_NAME_MAX];
    struct am_ep_opts o = {.shm = "sysv"};
    am_ep_t *ep = NULL;
    tu_ep_name(name, sizeof name, "victim", -1, 1);
    int rc = become(VICTIM);
    if (rc == 0)
        rc = am_ep_create(name, &o, &ep);
    if (rc < 0) {
        tu_error(&sh->err, "victim: become %d or create: %s", VICTIM, am_strerror(rc));
        _exit(2);
    }
    sh->rc_map = am_ep_map(ep, 0, sh->rcv);
    sh->rc_probe = am_ep_probe(sh->rcv);
    am_ep_destroy(ep);
}

START_TEST(sysv_segment_given_away)
{
    snprintf(what, sizeof what, "sysv: a segment nobody made, given to uid %d", VICTIM);
    if (geteuid() != 0) {
        printf("%s: skipped: needs root to act as two users\n", what);
        return;
    }
    tu_ep_name(sh->rcv, sizeof sh->rcv, "given", -1, 1);
    sh->seg_id = -1;
    pid_t g = tu_spawn(giver, NULL, 0);
    tu_assert_flag(&sh->ready, 1, 10, "the giver", what, &sh->err);
    int st = tu_reap(tu_spawn(taker, NULL, 1), 20);
    AO_store_release(&sh->stop, 1);
    int gst = tu_reap(g, 20);
    if (sh->seg_id >= 0)
        shmctl(sh->seg_id, IPC_RMID, NULL); /* nobody's destroy cannot: not its uid */
    tu_assert_exit0(st, "victim", what, &sh->err);
    tu_assert_exit0(gst, "giver", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(sh->rc_map == -EACCES, "%s: the victim's map gave %s", what,
                  am_strerror(sh->rc_map));
    ck_assert_msg(sh->rc_probe == -EACCES, "%s: the victim's probe gave %s", what,
                  am_strerror(sh->rc_probe));
}
END_TEST

/* ---- sysv_trailer_zeroed ---- */

/* A live System V endpoint sh->rcv (its id in sh->seg_id), polling until told
 * to stop, then destroyed. */
static void sysv_owner(void *arg)
{
    struct am_ep_opts o = {.shm = "sysv"};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(sh->rcv, &o, &ep);
    if (rc < 0) {
        tu_error(&sh->err, "owner: create: %s", am_strerror(rc));
        _exit(2);
    }
    sh->seg_id = ep->own.seg.id;
    AO_store_release(&sh->ready, 1);
    while (!AO_load_acquire(&sh->stop))
        am_poll(ep);
    rc = am_ep_destroy(ep);
    if (rc < 0)
        tu_error(&sh->err, "owner: destroy: %s", am_strerror(rc));
}

/* A second creator of the owner's name: its result in sh->rc_create. */
static void second_creator(void *arg)
{
    struct am_ep_opts o = {.shm = "sysv"};
    am_ep_t *ep = NULL;
    sh->rc_create = am_ep_create(sh->rcv, &o, &ep);
    if (sh->rc_create == 0)
        am_ep_destroy(ep);
}

/* Zero the trailer of System V segment id through a mapping of our own. */
static void zero_trailer(int id)
{
    struct shmid_ds ds;
    ck_assert_msg(shmctl(id, IPC_STAT, &ds) == 0, "%s: IPC_STAT", what);
    char *p = shmat(id, NULL, 0);
    ck_assert_msg(p != (void *)-1, "%s: the raw writer cannot attach", what);
    memset(p + ds.shm_segsz - AM_SYSV_TAG, 0, AM_SYSV_TAG);
    shmdt(p);
}

START_TEST(sysv_trailer_zeroed)
{
    snprintf(what, sizeof what, "sysv: a live endpoint's name trailer zeroed");
    tu_ep_name(sh->rcv, sizeof sh->rcv, "owner", -1, 1);
    pid_t owner = tu_spawn(sysv_owner, NULL, 1);
    tu_assert_flag(&sh->ready, 1, 10, "the owner", what, &sh->err);
    zero_trailer(sh->seg_id);

    sh->rc_create = 1;
    double t0 = tu_now_s();
    int st = tu_reap(tu_spawn(second_creator, NULL, 0), 20);
    double t_create = tu_now_s() - t0;
    ck_assert_msg(st != -1, "%s: a second create of the name still waits after 20 s", what);
    tu_assert_exit0(st, "second creator", what, &sh->err);
    ck_assert_msg(sh->rc_create == -EEXIST, "%s: a second create gave %s", what,
                  am_strerror(sh->rc_create));

    char cname[AM_NAME_MAX];
    struct am_ep_opts o = {.shm = "sysv"};
    am_ep_t *cli = NULL, *again = NULL;
    tu_ep_name(cname, sizeof cname, "client", -1, 1);
    ck_assert_msg(am_ep_create(cname, &o, &cli) == 0, "%s: client create", what);
    t0 = tu_now_s();
    int rc = tu_map_when_there(cli, 0, sh->rcv, 10);
    printf("%s: a second create ended in %.2f s, a client's map in %.2f s\n", what,
           t_create, tu_now_s() - t0);
    ck_assert_msg(rc == -EPROTO, "%s: a client's map gave %s", what, am_strerror(rc));
    am_ep_destroy(cli);

    AO_store_release(&sh->stop, 1);
    tu_assert_exit0(tu_reap(owner, 10), "owner", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    ck_assert_msg(shmctl(sh->seg_id, IPC_STAT, &(struct shmid_ds){0}) != 0,
                  "%s: the owner's destroy left its segment", what);
    rc = am_ep_create(sh->rcv, &o, &again);
    ck_assert_msg(rc == 0, "%s: the name after its owner: %s", what, am_strerror(rc));
    am_ep_destroy(again);
    tu_assert_clean(what);
}
END_TEST

/* ---- small_dev_shm ---- */

/* In a child: a private mount namespace with a 1.5 MB tmpfs on /dev/shm, then
 * a 7 MB endpoint (must fail, -ENOSPC) and one of 16 senders and the smallest
 * heaps (four superblocks each: AM_HEAP_FLOOR), 1.0 MB (must work).  Exit 0
 * passed, 1 failed, 3 not permitted here. */
static int small_shm(const char *name)
{
    if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
        mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=1536k"))
        return 3;
    struct am_ep_opts big = {.shm = "posix", .bulk_blocks = 128},
                      small = {.shm = "posix", .max_senders = 16, .long_max = 4096};
    am_ep_t *ep = NULL;
    if (am_ep_create(name, &big, &ep) != -ENOSPC)
        return 1;
    if (am_ep_create(name, &small, &ep) != 0)
        return 1;
    return am_ep_destroy(ep) == 0 ? 0 : 1;
}

START_TEST(small_dev_shm)
{
    snprintf(what, sizeof what, "posix: a 1.5 MB /dev/shm");
    char name[AM_NAME_MAX];
    tu_ep_name(name, sizeof name, "big", 0, 0);
    pid_t p = fork();
    if (p == 0)
        _exit(small_shm(name));
    int st;
    waitpid(p, &st, 0);
    ck_assert_msg(WIFEXITED(st), "%s: the child died: status %d", what, st);
    if (WEXITSTATUS(st) == 3) {
        printf("%s: skipped: no private mount namespace here\n", what);
        return;
    }
    ck_assert_msg(WEXITSTATUS(st) == 0,
                  "%s: a too big endpoint was not -ENOSPC, or a "
                  "small one failed",
                  what);
}
END_TEST

/* ---- chaos ---- */

/* Sends until told to stop; errors are allowed (a garbled queue may refuse or
 * lose messages), crashes and endless waits are not. */
static void chaos_sender(void *arg)
{
    char name[AM_NAME_MAX];
    tu_ep_name(name, sizeof name, arg, sh->alg, 0);
    struct am_ep_opts o = {.shm = "posix"};
    am_ep_t *ep = NULL;
    static uint8_t buf[2000];
    if (am_ep_create(name, &o, &ep) < 0 || am_ep_map(ep, 0, sh->rcv) < 0)
        _exit(2);
    for (uint32_t i = 0; !AO_load_acquire(&sh->flip_stop); i++) {
        uint32_t a[2] = {i, 0};
        if (i % 4 == 0)
            am_request_bulk(ep, 0, H_MSG + 1, buf, 1 + i % sizeof buf, a, 2);
        else
            am_request(ep, 0, H_MSG + 1, a, 2);
    }
    am_ep_destroy(ep);
}

static sigjmp_buf vandal_jmp;

static void vandal_fault(int sig)
{
    siglongjmp(vandal_jmp, 1);
}

/* Write byte x at b[off]; 1 if it faulted. */
static int scribble(unsigned char *b, size_t off, unsigned char x)
{
    if (sigsetjmp(vandal_jmp, 1))
        return 1;
    ((volatile unsigned char *)b)[off] = x;
    return 0;
}

/* The areas the vandal aims at, as (offset, length) in its view of the
 * receiver: the read-only pages (header, sender entries) but its own entry's
 * (two runs), then both queues' tails, heads, packets and bulk states, and for
 * tas and ttas the lock words. */
struct target {
    size_t off, len;
    int ro;
};
static int chaos_targets(const struct am_seg_view *v, unsigned me, struct target t[16])
{
    const unsigned char *b = v->seg.base;
#define OFF(p) ((size_t)((const unsigned char *)(p)-b))
    int k = 0;
    size_t mine = OFF(am__sender(v, me));
    t[k++] = (struct target){0, mine, 1};
    t[k++] = (struct target){mine + v->page, OFF(v->shared) - mine - v->page, 1};
    for (int q = 0; q < 2; q++) {
        const struct am_queue_view *qv = &v->q[q];
        t[k++] = (struct target){OFF(qv->send), 16, 0};
        t[k++] = (struct target){OFF(qv->recv), 8, 0};
        t[k++] = (struct target){OFF(qv->packets), qv->packets_n * sizeof *qv->packets, 0};
        t[k++] =
            (struct target){OFF(qv->bulk_state), qv->bulk_n * sizeof *qv->bulk_state, 0};
        if (v->claim == AM_CLAIM_TAS || v->claim == AM_CLAIM_TTAS)
            t[k++] = (struct target){OFF(qv->lock), sizeof(AO_t), 0};
    }
#undef OFF
    return k;
}

/* A peer gone bad: random bytes at random places of the targets, through the
 * mapping am_ep_map gave it. */
static void vandal(void *arg)
{
    char name[AM_NAME_MAX];
    tu_ep_name(name, sizeof name, "vd", sh->alg, 0);
    struct am_ep_opts o = {.shm = "posix"};
    am_ep_t *ep = NULL;
    if (am_ep_create(name, &o, &ep) < 0 || am_ep_map(ep, 0, sh->rcv) < 0)
        _exit(2);
    struct am_peer *p = am__peer(ep, 0);
    struct target t[16];
    int n = chaos_targets(p->view, p->sender_index, t);
    struct sigaction sa = {.sa_handler = vandal_fault, .sa_flags = SA_NODEFER};
    sigaction(SIGSEGV, &sa, NULL);
    AO_t tries = 0, faults = 0, writes = 0;
    for (uint32_t i = 0; !AO_load_acquire(&sh->flip_stop); i++) {
        uint32_t r = tu_mix32(i, (uint32_t)getpid()), k = r % (uint32_t)n;
        if (t[k].len == 0)
            continue;
        int fault = scribble(p->view->seg.base, t[k].off + tu_mix32(r, 1) % t[k].len,
                             (unsigned char)tu_mix32(r, 2));
        tries += (AO_t)t[k].ro, faults += (AO_t)fault, writes += (AO_t)!fault;
        AO_store(&sh->ro_tries, tries);
        AO_store(&sh->ro_faults, faults);
        AO_store(&sh->writes, writes);
        if (i % 64 == 0)
            tu_sleep_ms(1);
    }
    sa.sa_handler = SIG_DFL;
    sigaction(SIGSEGV, &sa, NULL);
    am_ep_destroy(ep);
}

/* The receiver's queues as a raw mapping shows them, for a failure message:
 * per queue the tail, bulk tail, the first 8 slot states and 2 block states,
 * then the first 4 sender entries' states. */
static const char *describe_queues(void)
{
    static char buf[900];
    struct am_segment seg;
    if (am__segment_open(AM_SHM_POSIX, sh->rcv, &seg) < 0)
        return "(gone)";
    const struct am_seg_header *h = seg.base;
    const char *b = seg.base;
    size_t n = 0;
    for (int q = 0; q < 2; q++) {
        const struct am_queue_send *snd = (const void *)(b + h->send_off[q]);
        const struct am_packet *pk = (const void *)(b + h->packets_off[q]);
        const struct am_bulk_state *bs = (const void *)(b + h->bulk_state_off[q]);
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              "\nqueue %d: tail %lx bulk tail %lx; slots", q,
                              (unsigned long)snd->tail, (unsigned long)snd->bulk_tail);
        for (int i = 0; i < 8; i++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, " %lx",
                                  (unsigned long)pk[i].state);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "; blocks %lx %lx",
                              (unsigned long)bs[0].state, (unsigned long)bs[1].state);
    }
    n += (size_t)snprintf(buf + n, sizeof buf - n, "\nsenders");
    for (unsigned i = 0; i < 4; i++) {
        const struct am_sender *e = (const void *)(b + h->senders_off + i * h->page_size);
        n += (size_t)snprintf(buf + n, sizeof buf - n, " %lx", (unsigned long)e->state);
    }
    am__segment_unmap(&seg);
    return buf;
}

#define CHAOS_WRITES 2000  /* the vandal's writes that went through, at least */
#define CHAOS_RO_TRIES 100 /* and its tries at read-only pages */
#define CHAOS_BOUND_S 40   /* the longest a run of chaos waits for them */
#define QUIET_POLLS 4096   /* polls (4 checks of the tails), and */
#define QUIET_S                                                                            \
    0.2 /* seconds, of a quiet owner: nothing handled or                                   \
         * counted bad */

/* Let chaos go on for secs, and then until the vandal has made its writes
 * and tries and the owner has counted damage, or CHAOS_BOUND_S have passed
 * (on a busy machine the vandal may get little of the processor).  Returns
 * the seconds it took. */
static double run_chaos(double secs)
{
    double t0 = tu_now_s(), t;
    while ((t = tu_now_s() - t0) < CHAOS_BOUND_S &&
           (t < secs || AO_load(&sh->writes) < CHAOS_WRITES ||
            AO_load(&sh->ro_tries) < CHAOS_RO_TRIES || AO_load(&sh->damage) == 0))
        tu_sleep_ms(10);
    return t;
}

/* Once senders and vandal have gone: wait until the owner has run QUIET_POLLS
 * polls over QUIET_S seconds without handling a message or counting a bad
 * one (what they left is drained, their dead claims skipped), for up to
 * secs.  Returns 1 if it did. */
static int owner_quiet(double secs)
{
    double end = tu_now_s() + secs;
    AO_t seen = 0, polls = 0;
    double since = 0;
    for (int first = 1; tu_now_s() < end; first = 0, tu_sleep_ms(5)) {
        AO_t now = AO_load(&sh->handled) + AO_load(&sh->damage) + AO_load(&sh->got);
        if (first || now != seen) {
            seen = now, polls = AO_load(&sh->polls), since = tu_now_s();
            continue;
        }
        if (AO_load(&sh->polls) - polls >= QUIET_POLLS && tu_now_s() - since >= QUIET_S)
            return 1;
    }
    return 0;
}

START_TEST(chaos)
{
    int alg = _i;
    double secs = 1.0 * tu_stress_factor();
    snprintf(what, sizeof what, "%s/posix: chaos", am_claim_names[alg]);
    sh->alg = alg;
    tu_ep_name(sh->rcv, sizeof sh->rcv, "rcv", alg, 0);
    pid_t r = tu_spawn(receiver, NULL, 1);
    tu_assert_flag(&sh->ready, 1, 10, "the receiver", what, &sh->err);
    pid_t s1 = tu_spawn(chaos_sender, "s1", 0), s2 = tu_spawn(chaos_sender, "s2", 1);
    tu_sleep_ms(50);
    pid_t v = tu_spawn(vandal, NULL, 0);
    double ran = run_chaos(secs);
    AO_store_release(&sh->flip_stop, 1);
    const pid_t who[] = {v, s1, s2};
    const char *const names[] = {"vandal", "sender 1", "sender 2"};
    for (int i = 0; i < 3; i++) {
        int st = tu_reap(who[i], 10);
        ck_assert_msg(st >= 0, "%s: %s still running 10 s after the stop: %s", what,
                      names[i], describe_queues());
        ck_assert_msg(WIFEXITED(st), "%s: %s died of signal %d", what, names[i],
                      WTERMSIG(st));
        ck_assert_msg(WEXITSTATUS(st) == 0, "%s: %s exited %d", what, names[i],
                      WEXITSTATUS(st));
    }
    unsigned long tries = AO_load(&sh->ro_tries), faults = AO_load(&sh->ro_faults);
    printf("%s: in %.1f s the vandal wrote %lu bytes; %lu writes to read-only pages, "
           "%lu faulted\n",
           what, ran, (unsigned long)AO_load(&sh->writes), tries, faults);
    ck_assert_msg(tries > 0 && AO_load(&sh->writes) > 0,
                  "%s: in %.1f s the vandal wrote %lu bytes and tried %lu read-only ones",
                  what, ran, (unsigned long)AO_load(&sh->writes), tries);
    ck_assert_msg(faults == tries,
                  "%s: %lu of %lu writes to the header and lifeline pages went through",
                  what, tries - faults, tries);
    /* the owner drains what the vandal left; then count afresh */
    ck_assert_msg(owner_quiet(20), "%s: the owner still busy 20 s after the vandal left",
                  what);
    AO_store(&sh->got, 0);
    AO_store(&sh->bad_order, 0);
    send_all("cli"); /* the queue works again */
    ck_assert_msg(AO_load(&sh->bad_order) == 0,
                  "%s: %lu messages out of order or garbled "
                  "after the vandal left",
                  what, (unsigned long)AO_load(&sh->bad_order));
    AO_store_release(&sh->stop, 1);
    int st = tu_reap(r, 10);
    ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "%s: the receiver ended with status %d", what, st);
    ck_assert_msg(sh->bad_packets + sh->abandoned > 0, "%s: no damage was counted", what);
    tu_assert_clean(what);
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile");
    TCase *tc = tcase_create("vandal");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, header_flipped_during_attach);
    tcase_add_loop_test(tc, moved_counters, 0, tu_n_algs() * NMOVES);
    tcase_add_loop_test(tc, anderson_slots, 0, 2);
    tcase_add_loop_test(tc, tas_word_garbage, 0, 4);
    tcase_add_loop_test(tc, mutex_garbage, 0, 2);
    tcase_add_test(tc, mutex_rewritten_while_held);
    tcase_add_loop_test(tc, bulk_state_garbage, 0, tu_n_algs());
    tcase_add_test(tc, other_users_segment);
    tcase_add_test(tc, sysv_segment_given_away);
    tcase_add_test(tc, sysv_trailer_zeroed);
    tcase_add_test(tc, small_dev_shm);
    tcase_add_loop_test(tc, chaos, 0, tu_n_algs());
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("ho");
    return tu_run_suite(hostile_suite(), "check_hostile");
}
