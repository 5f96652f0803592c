/*
 * check_fd.c - the descriptor of am_ep_fd is never deaf: whatever a sender's
 * descriptors or the owner's dumpable state, with edge-triggered epoll, and
 * for what the endpoint's own waits would do on a timer (kept call replies,
 * call deadlines, a server's death).  Real processes, real epoll.
 *
 *   sender_without_descriptors  a sender that has no free descriptor (it
 *                    cannot open the owner's pipe) and a healthy one send in
 *                    turns to an epoll-driven owner, armed before each send:
 *                    every send makes the descriptor readable (mpsc, lamport;
 *                    both backends)
 *   owner_not_dumpable  the same with an owner no sender may open through
 *                    /proc (not dumpable, both of a non-root uid)
 *   edge_triggered_drained  EPOLLET, the loop draining each readiness until
 *                    am_poll returns 0: bursts from another process, none
 *                    found only by a timeout
 *   kept_reply_placed  an epoll-driven server whose caller's reply queue is
 *                    full (the caller busy, not polling) keeps the call's
 *                    reply; the call ends with it once the caller drains,
 *                    though nothing else is sent to the server (owned and
 *                    shared)
 *   call_ends_by_descriptor  a client driven by its descriptor alone sees its
 *                    call end: by its deadline, and by its server's death
 *
 * Each round of a turn-by-turn test waits for the owner to have armed (its
 * am_poll returned 0, then it publishes the round) before the send, so the
 * send is the one that must signal; the owner's epoll_wait has FD_WAIT_MS,
 * far beyond any delivery on a busy machine.
 */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shmam.h"
#include "testutil.h"

enum { H_MSG = 1, H_FILL, H_ACK, H_CALL, H_QUIT };

#define FD_WAIT_MS 10000 /* an epoll_wait that sees nothing in this is deaf */
#define ROUNDS 12        /* turns per turn-by-turn test, times tu_stress_factor */
#define FILLS 16         /* the caller's reply queue: packets */
#define NOBODY 65534     /* the uid of owner_not_dumpable */

struct shared {
    char srv[128];      /* a name or an address */
    const char *queue;  /* the owner's queue kind */
    unsigned burst;     /* messages per round */
    unsigned rounds;    /* ROUNDS * tu_stress_factor() */
    int shared;         /* the server's endpoint is shared (am_ep_share) */
    AO_t turn;          /* the round the owner has armed for */
    AO_t count;         /* messages the owner handled */
    AO_t ready, called; /* the server's endpoint exists; the call ran */
    AO_t idle;          /* messages handled when the server last waited */
    AO_t done;          /* the test is over: helpers end */
    AO_t deaf;          /* the first round the descriptor missed, 0: none */
    struct tu_errors err;
};

static struct shared *sh;
static char what[160];

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
    sh->rounds = ROUNDS * (unsigned)tu_stress_factor();
    tu_pin(0);
}

static void count_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_fetch_and_add1(&sh->count);
}

static int readable(int epfd, int ms)
{
    struct epoll_event ev;
    return epoll_wait(epfd, &ev, 1, ms);
}

static int epoll_of(am_ep_t *ep, int et)
{
    int fd = am_ep_fd(ep), epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN | (et ? EPOLLET : 0)};
    if (fd < 0 || epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return -1;
    return epfd;
}

/* The owner's side of a turn-by-turn test: each round, drain, publish the
 * round, then wait on the descriptor only until the round's messages ran
 * (level-triggered: one am_poll per readiness; et: until it returns 0).
 * Records the first round whose wait saw nothing in FD_WAIT_MS (sh->deaf),
 * and ends the helpers. */
static void serve_rounds(am_ep_t *ep, int et)
{
    int epfd = epoll_of(ep, et);
    if (epfd < 0)
        tu_error(&sh->err, "am_ep_fd or epoll: %s", strerror(errno));
    for (unsigned r = 1; epfd >= 0 && r <= sh->rounds && !AO_load(&sh->deaf); r++) {
        while (am_poll(ep) > 0) /* armed once it returns 0 */
            ;
        AO_store_release(&sh->turn, r);
        while (AO_load_acquire(&sh->count) < r * sh->burst) {
            if (readable(epfd, FD_WAIT_MS) != 1) {
                AO_store(&sh->deaf, r);
                break;
            }
            if (et)
                while (am_poll(ep) > 0)
                    ;
            else
                am_poll(ep);
        }
    }
    AO_store_release(&sh->done, 1);
    if (epfd >= 0)
        close(epfd);
}

/* A sender's side: the rounds r with r % 2 == parity (parity 2: all), once
 * the owner has armed for each. */
static void send_rounds(am_ep_t *ep, unsigned parity)
{
    for (uint32_t r = 1; r <= sh->rounds; r++) {
        if (parity != 2 && r % 2 != parity)
            continue;
        while (AO_load_acquire(&sh->turn) < r && !AO_load_acquire(&sh->done))
            tu_sleep_ms(1);
        if (AO_load_acquire(&sh->done))
            return;
        for (unsigned k = 0; k < sh->burst; k++) {
            int rc = am_request(ep, 0, H_MSG, &r, 1);
            if (rc < 0)
                tu_error(&sh->err, "round %u: request: %s", r, am_strerror(rc));
        }
    }
}

/* A helper that maps the owner and sends its rounds; starved: with every
 * descriptor it may have taken (it cannot open the owner's pipe). */
static void sender(unsigned parity, int starved)
{
    am_ep_t *ep;
    int rc = am_ep_create(NULL, NULL, &ep);
    if (rc == 0)
        rc = tu_map_when_there(ep, 0, sh->srv, 20);
    if (rc < 0) {
        tu_error(&sh->err, "sender: %s", am_strerror(rc));
        return;
    }
    struct rlimit rl = {64, 64};
    if (starved && setrlimit(RLIMIT_NOFILE, &rl) != 0)
        tu_error(&sh->err, "setrlimit: %s", strerror(errno));
    while (starved && dup(0) >= 0)
        ;
    if (starved && errno != EMFILE)
        tu_error(&sh->err, "dup until EMFILE: %s", strerror(errno));
    send_rounds(ep, parity);
    while (!AO_load_acquire(&sh->done))
        tu_sleep_ms(1);
    am_ep_destroy(ep);
}

static void starved_sender(void *arg)
{
    sender(1, 1);
}

static void healthy_sender(void *arg)
{
    sender(0, 0);
}

static const char *const kinds[] = {"mpsc", "lamport"};

START_TEST(sender_without_descriptors)
{
    int backend = _i / 2;
    sh->queue = kinds[_i % 2];
    sh->burst = 1;
    snprintf(what, sizeof what, "%s/%s: a sender with no free descriptor", sh->queue,
             tu_backend_name(backend));
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, backend);
    struct am_ep_opts o = {.queue = sh->queue, .shm = tu_backend_name(backend)};
    am_ep_t *ep;
    ck_assert_int_eq(am_ep_create(sh->srv, &o, &ep), 0);
    am_set_handler(ep, H_MSG, count_h);
    pid_t a = tu_spawn(starved_sender, NULL, 1), b = tu_spawn(healthy_sender, NULL, 1);
    ck_assert_msg(a > 0 && b > 0, "%s: fork", what);
    serve_rounds(ep, 0);
    tu_assert_exit0(tu_reap(a, 30), "starved sender", what, &sh->err);
    tu_assert_exit0(tu_reap(b, 30), "healthy sender", what, &sh->err);
    unsigned deaf = (unsigned)AO_load(&sh->deaf);
    ck_assert_msg(deaf == 0, "%s: round %u (the %s sender's): not readable %d ms after it",
                  what, deaf, deaf % 2 ? "starved" : "healthy", FD_WAIT_MS);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- an owner no sender may open through /proc ---- */

/* Root may open any /proc entry: as root, both sides become NOBODY; a
 * non-root user's processes keep its uid (it cannot open another
 * non-dumpable process's files either). */
static void become_nobody(int dumpable)
{
    if (geteuid() == 0 &&
        (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
         setresuid(NOBODY, NOBODY, NOBODY) != 0))
        tu_error(&sh->err, "becoming uid %d: %s", NOBODY, strerror(errno));
    prctl(PR_SET_DUMPABLE, dumpable); /* a uid change made it 0 */
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* and cleared this */
}

static void undumpable_owner(void *arg)
{
    become_nobody(0);
    am_ep_t *ep;
    int rc = am_ep_create(sh->srv, NULL, &ep);
    if (rc < 0) {
        tu_error(&sh->err, "owner: %s", am_strerror(rc));
        AO_store_release(&sh->done, 1);
        return;
    }
    am_set_handler(ep, H_MSG, count_h);
    serve_rounds(ep, 0);
    am_ep_destroy(ep);
}

static void nobody_sender(void *arg)
{
    become_nobody(1);
    sender(2, 0);
}

START_TEST(owner_not_dumpable)
{
    sh->burst = 1;
    snprintf(what, sizeof what, "an owner that is not dumpable");
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, 0);
    pid_t o = tu_spawn(undumpable_owner, NULL, 0), s = tu_spawn(nobody_sender, NULL, 1);
    ck_assert_msg(o > 0 && s > 0, "%s: fork", what);
    tu_assert_exit0(tu_reap(o, 60), "owner", what, &sh->err);
    tu_assert_exit0(tu_reap(s, 30), "sender", what, &sh->err);
    unsigned deaf = (unsigned)AO_load(&sh->deaf);
    ck_assert_msg(deaf == 0, "%s: round %u: not readable %d ms after the send", what, deaf,
                  FD_WAIT_MS);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- edge-triggered ---- */

static void burst_sender(void *arg)
{
    sender(2, 0);
}

START_TEST(edge_triggered_drained)
{
    sh->burst = 1 + (unsigned)_i * 7; /* one message a round, or bursts of 8 */
    snprintf(what, sizeof what, "EPOLLET, %u a round", sh->burst);
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, 0);
    am_ep_t *ep;
    ck_assert_int_eq(am_ep_create(sh->srv, NULL, &ep), 0);
    am_set_handler(ep, H_MSG, count_h);
    pid_t p = tu_spawn(burst_sender, NULL, 1);
    ck_assert_msg(p > 0, "%s: fork", what);
    serve_rounds(ep, 1);
    tu_assert_exit0(tu_reap(p, 30), "sender", what, &sh->err);
    unsigned deaf = (unsigned)AO_load(&sh->deaf);
    ck_assert_msg(deaf == 0, "%s: round %u: no edge in %d ms", what, deaf, FD_WAIT_MS);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- time: kept replies, deadlines, a server's death ---- */

static int quit;

static void fill_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    int rc = am_reply(t, H_ACK, a, n);
    if (rc < 0)
        tu_error(&sh->err, "fill's reply: %s", am_strerror(rc));
    AO_fetch_and_add1(&sh->count);
}

static void call_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    uint32_t r = n == 1 ? a[0] + 1 : 0;
    int rc = am_reply(t, 0, &r, 1);
    if (rc < 0)
        tu_error(&sh->err, "the call's reply: %s", am_strerror(rc));
    AO_store_release(&sh->called, 1);
    AO_fetch_and_add1(&sh->count);
}

static void quit_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    quit = 1;
}

/* A server driven by its descriptor alone, one am_poll per readiness;
 * publishes how many messages it had handled each time it waits. */
static void epoll_server(void *arg)
{
    am_ep_t *ep;
    int rc = am_ep_create(sh->srv, NULL, &ep);
    if (rc == 0 && sh->shared)
        rc = am_ep_share(ep);
    int epfd = rc == 0 ? epoll_of(ep, 0) : -1;
    if (epfd < 0) {
        tu_error(&sh->err, "server: %s", am_strerror(rc));
        return;
    }
    am_set_handler(ep, H_FILL, fill_h);
    am_set_handler(ep, H_CALL, call_h);
    am_set_handler(ep, H_QUIT, quit_h);
    AO_store_release(&sh->ready, 1);
    while (!quit) {
        AO_store_release(&sh->idle, AO_load(&sh->count));
        if (readable(epfd, 30000) != 1) {
            tu_error(&sh->err, "server: nothing in 30 s");
            break;
        }
        am_poll(ep);
    }
    close(epfd);
    am_ep_destroy(ep);
}

static void ack_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
}

START_TEST(kept_reply_placed)
{
    sh->shared = _i;
    snprintf(what, sizeof what, "a kept reply of an epoll-driven %s server",
             _i ? "shared" : "owned");
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, 0);
    pid_t p = tu_spawn(epoll_server, NULL, 1);
    ck_assert_msg(p > 0, "%s: fork", what);
    struct am_ep_opts o = {.packets = FILLS};
    am_ep_t *ep;
    ck_assert_int_eq(am_ep_create(NULL, &o, &ep), 0);
    am_set_handler(ep, H_ACK, ack_h);
    ck_assert_int_eq(tu_map_when_there(ep, 0, sh->srv, 20), 0);
    for (uint32_t k = 0; k < FILLS; k++) /* their replies fill our reply queue */
        ck_assert_int_eq(am_request(ep, 0, H_FILL, &k, 1), 0);
    uint32_t x = 41;
    struct am_result res = {0};
    am_call_t id;
    ck_assert_int_eq(am_call_start(ep, 0, H_CALL, &x, 1, NULL, 0, &res, 10000, &id), 0);
    /* The server kept the reply (no room) and went back to epoll_wait. */
    tu_assert_flag(&sh->idle, FILLS + 1, 20, "the server to wait after the call", what,
                   &sh->err);
    int rc = am_call_wait(ep, id, -1);
    ck_assert_msg(rc == 0, "%s: the call ended with %s", what, am_strerror(rc));
    ck_assert_msg(res.nargs == 1 && res.args[0] == 42, "%s: not its reply", what);
    ck_assert_int_eq(am_request(ep, 0, H_QUIT, NULL, 0), 0);
    tu_assert_exit0(tu_reap(p, 30), "server", what, &sh->err);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

static void keep_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_kept_t *k;
    if (am_token_keep(t, &k) != 0)
        tu_error(&sh->err, "keep");
    AO_store_release(&sh->called, 1);
}

/* A server that takes the call and never answers; anonymous (its address in
 * sh->srv), so that its death leaves no name. */
static void silent_server(void *arg)
{
    am_ep_t *ep;
    int rc = am_ep_create(NULL, NULL, &ep);
    if (rc < 0) {
        tu_error(&sh->err, "server: %s", am_strerror(rc));
        AO_store_release(&sh->ready, 1);
        return;
    }
    am_set_handler(ep, H_CALL, keep_h);
    snprintf(sh->srv, sizeof sh->srv, "%s", am_ep_name(ep));
    AO_store_release(&sh->ready, 1);
    while (!AO_load_acquire(&sh->done))
        am_wait(ep, 100);
    am_ep_destroy(ep);
}

START_TEST(call_ends_by_descriptor)
{
    int killed = _i;
    snprintf(what, sizeof what, "an fd-driven call, %s",
             killed ? "server killed" : "deadline");
    pid_t p = tu_spawn(silent_server, NULL, 1);
    ck_assert_msg(p > 0, "%s: fork", what);
    tu_assert_flag(&sh->ready, 1, 20, "the server's endpoint", what, &sh->err);
    am_ep_t *ep;
    ck_assert_int_eq(am_ep_create(NULL, NULL, &ep), 0);
    ck_assert_int_eq(am_ep_map(ep, 0, sh->srv), 0);
    int epfd = epoll_of(ep, 0);
    ck_assert_msg(epfd >= 0, "%s: am_ep_fd", what);
    struct am_result res = {0};
    am_call_t id;
    ck_assert_int_eq(
        am_call_start(ep, 0, H_CALL, NULL, 0, NULL, 0, &res, killed ? -1 : 300, &id), 0);
    if (killed) {
        tu_assert_flag(&sh->called, 1, 20, "the server to take the call", what, &sh->err);
        kill(p, SIGKILL);
    }
    int rc;
    do {
        ck_assert_msg(readable(epfd, FD_WAIT_MS) == 1,
                      "%s: the call's end did not make the descriptor readable in %d ms",
                      what, FD_WAIT_MS);
        am_poll(ep);
    } while ((rc = am_call_test(ep, id)) == -EINPROGRESS);
    ck_assert_msg(rc == (killed ? -EPIPE : -ETIMEDOUT), "%s: the call ended with %s", what,
                  am_strerror(rc));
    AO_store_release(&sh->done, 1);
    int st = tu_reap(p, 30);
    if (!killed)
        tu_assert_exit0(st, "server", what, &sh->err);
    close(epfd);
    ck_assert_int_eq(am_ep_destroy(ep), 0);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

static Suite *fd_suite(void)
{
    Suite *s = suite_create("fd");
    TCase *tc = tu_tcase(s, "senders", 180);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, sender_without_descriptors, 0, 4);
    tcase_add_test(tc, owner_not_dumpable);
    tc = tu_tcase(s, "edge", 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, edge_triggered_drained, 0, 2);
    tc = tu_tcase(s, "time", 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, kept_reply_placed, 0, 2);
    tcase_add_loop_test(tc, call_ends_by_descriptor, 0, 2);
    return s;
}

int main(void)
{
    tu_run_init("fd");
    return tu_run_suite(fd_suite(), "check_fd");
}
