/*
 * check_wait.c - am_wait: sleeping until a message arrives, for every claim
 * algorithm on both backends.
 *
 *   wake          a process blocked in am_wait(ep, -1) is woken by a request,
 *                 a bulk request, or a reply from another process, and returns
 *                 the count (>= 1)
 *   timeout       am_wait(ep, T) with nothing to do returns 0 after at least T
 *                 ms (and not much more); with a message pending it returns at
 *                 once
 *   pingpong      20000 round trips in which both sides only ever call
 *                 am_wait(ep, -1), never am_poll, pinned to different cores and
 *                 both to the same core: a lost wake-up hangs it (each run has
 *                 its own deadline, so a hang names its combination)
 *   awake_sender  while the receiver spins on am_poll, 10000 sends leave its
 *                 futex word wake_seq untouched (the sender's fast path makes no
 *                 wake system call); one send to a receiver asleep in am_wait
 *                 moves it
 *
 * Helper processes are forked, pinned, die with the test process, and report
 * through a shared block; the test asserts on it, naming the algorithm and
 * backend in every failure message.  Endpoint names carry this run's and the
 * test's pid; each test checks that nothing of its names is left in /dev/shm or
 * among the System V segments, and main removes what a failed test left.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

enum { H_PING = 1, H_PONG, H_MSG, H_ASK, H_ANSWER };

static char run_tag[24]; /* "wt<main pid>." */
static long test_pid;
static int n_algs;
static cpu_set_t all_cpus; /* where this run may run; helpers pin within it */

/* ---- names and leftovers (as in check_config.c) ---- */

static const char *bname(int b)
{
    return am__shm_name((enum am_shm)b);
}

static void ep_name(char *buf, size_t n, const char *role, int alg, int b)
{
    snprintf(buf, n, "%s%ld-%s-%s-%c", run_tag, test_pid, role, am_claim_names[alg],
             bname(b)[0]);
}

static int leftovers(const char *pfx, int remove, char *first, size_t n)
{
    int found = 0;
    size_t pl = strlen(pfx);
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "shmam-", 6) == 0 && strncmp(e->d_name + 6, pfx, pl) == 0) {
            if (found++ == 0)
                snprintf(first, n, "/dev/shm/%.100s", e->d_name);
            if (remove)
                am__segment_unlink(AM_SHM_POSIX, e->d_name + 6);
        }
    if (d)
        closedir(d);
    struct shm_info info;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&info);
    for (int i = 0; i <= max; i++) {
        struct shmid_ds ds;
        int id = shmctl(i, SHM_STAT, &ds);
        if (id < 0 || ds.shm_perm.uid != geteuid() ||
            ds.shm_segsz < sizeof(struct am_seg_header))
            continue;
        const struct am_seg_header *h = shmat(id, NULL, SHM_RDONLY);
        if (h == (void *)-1)
            continue;
        if (h->magic == AM_MAGIC && strncmp(h->name, pfx, pl) == 0) {
            if (found++ == 0)
                snprintf(first, n, "System V id %d (%.48s)", id, h->name);
            if (remove)
                shmctl(id, IPC_RMID, NULL);
        }
        shmdt(h);
    }
    return found;
}

static char what[96]; /* "ALG/BACKEND: test", in every failure message */

static void assert_clean(void)
{
    char pfx[48], first[128] = "";
    snprintf(pfx, sizeof pfx, "%s%ld-", run_tag, test_pid);
    int n = leftovers(pfx, 0, first, sizeof first);
    ck_assert_msg(n == 0, "%s: %d segment(s) left behind, e.g. %s", what, n, first);
}

/* ---- shared state, helpers ---- */

struct shared {
    struct tu_gate gate;
    char a[AM_NAME_MAX], b[AM_NAME_MAX];
    int alg, backend, mode;
    unsigned n;
    AO_t ready, phase, done;
    AO_t count, pings, pongs; /* progress */
    int rc;
    double t_ret;
    int cpu_a, cpu_b; /* where the ping-pong ran */
    AO_t errors;
    char error[256];
};

static struct shared *sh;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void child_fail(const char *fmt, ...)
{
    if (AO_fetch_and_add1(&sh->errors) == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(sh->error, sizeof sh->error, fmt, ap);
        va_end(ap);
    }
}

static void setup(void)
{
    test_pid = (long)getpid();
    sh = tu_shared_alloc(sizeof *sh);
    tu_pin(0);
}

static void combo(int i, const char *test)
{
    sh->alg = i / 2;
    sh->backend = i % 2;
    snprintf(what, sizeof what, "%s/%s: %s", am_claim_names[sh->alg], bname(sh->backend),
             test);
}

static struct am_ep_opts opts(void)
{
    struct am_ep_opts o = {am_claim_names[sh->alg], bname(sh->backend), 0, 0, 0};
    return o;
}

/* Create endpoint `name` in a helper; exits the helper on failure. */
static am_ep_t *child_create(const char *name)
{
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(name, &o, &ep);
    if (rc != 0) {
        child_fail("create %s: %s", name, am_strerror(rc));
        _exit(2);
    }
    return ep;
}

/* Map `name` as index 0, waiting for it to exist. */
static int map_when_there(am_ep_t *ep, const char *name)
{
    int rc;
    double end = now_s() + 10;
    while (((rc = am_ep_map(ep, 0, name)) == -ENOENT || rc == -EAGAIN) && now_s() < end)
        sleep_ms(1);
    return rc;
}

static pid_t spawn(void (*fn)(void), int cpu)
{
    pid_t parent = getpid();
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(97);
        sched_setaffinity(0, sizeof all_cpus, &all_cpus); /* the test process is pinned */
        tu_pin(cpu);
        fn();
        _exit(0);
    }
    ck_assert_msg(p > 0, "%s: fork", what);
    return p;
}

/* Wait up to `secs` for p; kills it when late.  Its wait status, or -1. */
static int reap(pid_t p, double secs)
{
    double end = now_s() + secs;
    int st;
    while (now_s() < end) {
        pid_t r = waitpid(p, &st, WNOHANG);
        if (r == p)
            return st;
        if (r < 0)
            return -2;
        sleep_ms(1);
    }
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
    return -1;
}

static void assert_exit0(int st, const char *who)
{
    ck_assert_msg(st >= 0, "%s: %s %s (%s)", what, who, st == -1 ? "hung: killed" : "lost",
                  sh->errors ? sh->error : "no error recorded");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s ended with %s %d (%s)",
                  what, who, WIFEXITED(st) ? "exit" : "signal",
                  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
                  sh->errors ? sh->error : "no error recorded");
}

static void assert_no_child_errors(void)
{
    ck_assert_msg(AO_load(&sh->errors) == 0, "%s: %lu error(s) in helpers, first: %s", what,
                  (unsigned long)AO_load(&sh->errors), sh->error);
}

static void wait_flag(volatile AO_t *f, AO_t v, double secs, const char *why)
{
    double end = now_s() + secs;
    while (AO_load_acquire(f) < v && now_s() < end)
        sleep_ms(1);
    ck_assert_msg(AO_load_acquire(f) >= v, "%s: timed out waiting for %s (%s)", what, why,
                  sh->errors ? sh->error : "no helper error");
}

/* The header of the segment mapped as index 0: its wake line. */
static struct am_seg_header *peer_hdr(am_ep_t *ep)
{
    struct am_peer *p = am__peer(ep, 0);
    ck_assert_msg(p != NULL, "%s: no peer 0", what);
    return p->view->hdr;
}

/* Wait until the process owning `h` is asleep in am_wait, and a little more so
 * that it is really in the kernel. */
static void wait_asleep(const struct am_seg_header *h)
{
    double end = now_s() + 10;
    while (!AO_int_load(&h->sleeping) && now_s() < end)
        sleep_ms(1);
    ck_assert_msg(AO_int_load(&h->sleeping), "%s: the receiver never went to sleep (%s)",
                  what, sh->errors ? sh->error : "no helper error");
    sleep_ms(30);
}

static void count_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_fetch_and_add1(&sh->count);
}

/* ---- (a) a sleeper is woken ---- */

enum { WAKE_REQUEST, WAKE_BULK, WAKE_REPLY, WAKE_MODES };
static const char *const wake_names[] = {"request", "bulk request", "reply"};

static void answer_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    int rc = am_reply(t, H_ANSWER, a, n);
    ck_assert_msg(rc == 0, "%s: reply: %s", what, am_strerror(rc));
}

/* Sleeps in am_wait(ep, -1) once; for WAKE_REPLY after sending a request whose
 * reply will wake it. */
static void sleeper(void)
{
    am_ep_t *ep = child_create(sh->b);
    am_set_handler(ep, H_MSG, count_h);
    am_set_handler(ep, H_ANSWER, count_h);
    if (sh->mode == WAKE_REPLY) {
        uint32_t x = 5;
        int rc = map_when_there(ep, sh->a);
        if (rc == 0)
            rc = am_request(ep, 0, H_ASK, &x, 1);
        if (rc != 0)
            child_fail("sleeper: map/request: %s", am_strerror(rc));
    }
    AO_store_release(&sh->ready, 1);
    sh->rc = am_wait(ep, -1);
    sh->t_ret = now_s();
    /* The waker destroys only after we return: its message is in. */
    int rc = am_ep_destroy(ep);
    if (rc != 0)
        child_fail("sleeper: destroy: %s", am_strerror(rc));
}

START_TEST(wake)
{
    int mode = _i % WAKE_MODES;
    combo(_i / WAKE_MODES, "wake");
    snprintf(what + strlen(what), sizeof what - strlen(what), " by a %s", wake_names[mode]);
    sh->mode = mode;
    ep_name(sh->a, sizeof sh->a, "waker", sh->alg, sh->backend);
    ep_name(sh->b, sizeof sh->b, "sleeper", sh->alg, sh->backend);
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(sh->a, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create: %s", what, am_strerror(rc));
    am_set_handler(ep, H_ASK, answer_h);
    pid_t p = spawn(sleeper, 1);
    wait_flag(&sh->ready, 1, 10, "the sleeper");
    rc = am_ep_map(ep, 0, sh->b);
    ck_assert_msg(rc == 0, "%s: map: %s", what, am_strerror(rc));
    wait_asleep(peer_hdr(ep));
    double t0 = now_s();
    static const char data[3000];
    uint32_t x = 9;
    if (mode == WAKE_REQUEST)
        rc = am_request(ep, 0, H_MSG, &x, 1);
    else if (mode == WAKE_BULK)
        rc = am_request_bulk(ep, 0, H_MSG, data, sizeof data, &x, 1);
    else
        rc = am_poll(ep) == 1 ? 0 : -EIO; /* runs answer_h: the reply wakes it */
    ck_assert_msg(rc == 0, "%s: send: %s", what, am_strerror(rc));
    assert_exit0(reap(p, 10), "sleeper");
    ck_assert_msg(sh->rc >= 1, "%s: am_wait(-1) returned %d", what, sh->rc);
    ck_assert_msg(AO_load(&sh->count) == 1, "%s: %lu messages handled, want 1", what,
                  (unsigned long)AO_load(&sh->count));
    ck_assert_msg(sh->t_ret >= t0 && sh->t_ret - t0 < 2.0,
                  "%s: woke %.3f s after the message", what, sh->t_ret - t0);
    assert_no_child_errors();
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    assert_clean();
}
END_TEST

/* ---- (b) timeouts ---- */

START_TEST(timeout)
{
    combo(_i, "timeout");
    char name[AM_NAME_MAX];
    ep_name(name, sizeof name, "t", sh->alg, sh->backend);
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(name, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create: %s", what, am_strerror(rc));
    static const int ms[] = {100, 1, 0, 30};
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
        double t0 = now_s();
        rc = am_wait(ep, ms[k]);
        double dt = (now_s() - t0) * 1000;
        ck_assert_msg(rc == 0, "%s: am_wait(%d) with nothing gave %d", what, ms[k], rc);
        /* Lower bound exact (less a clock tick's rounding), upper bound generous: a
         * 2-vCPU machine shared with other tests. */
        ck_assert_msg(dt >= ms[k] - 0.001 * (ms[k] > 0),
                      "%s: am_wait(%d) returned after %.3f ms", what, ms[k], dt);
        ck_assert_msg(dt < ms[k] + 1000, "%s: am_wait(%d) returned after %.1f ms", what,
                      ms[k], dt);
    }
    /* Something pending: at once, whatever the timeout. */
    ck_assert_msg(am_ep_map(ep, 0, name) == 0, "%s: map self", what);
    am_set_handler(ep, H_MSG, count_h);
    for (int k = 0; k < 3; k++) {
        static const int tm[] = {-1, 0, 10000};
        ck_assert_msg(am_request(ep, 0, H_MSG, NULL, 0) == 0, "%s: send self", what);
        double t0 = now_s();
        rc = am_wait(ep, tm[k]);
        double dt = now_s() - t0;
        ck_assert_msg(rc == 1 && dt < 0.5,
                      "%s: am_wait(%d) with a message: %d after %.3f s", what, tm[k], rc,
                      dt);
    }
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    assert_clean();
}
END_TEST

/* ---- (c) ping-pong on am_wait only ---- */

static void pong_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_t want = AO_load(&sh->pongs);
    if (n != 1 || a[0] != want)
        child_fail("pinger: pong %u, want %lu", n ? a[0] : 0, (unsigned long)want);
    AO_store_release(&sh->pongs, want + 1);
}

static void ping_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    AO_t want = AO_load(&sh->pings);
    if (n != 1 || a[0] != want)
        child_fail("ponger: ping %u, want %lu", n ? a[0] : 0, (unsigned long)want);
    AO_store_release(&sh->pings, want + 1);
    int rc = am_reply(t, H_PONG, a, n);
    if (rc != 0)
        child_fail("ponger: reply %lu: %s", (unsigned long)want, am_strerror(rc));
}

static void pinger(void)
{
    am_ep_t *ep = child_create(sh->a);
    am_set_handler(ep, H_PONG, pong_h);
    int rc = map_when_there(ep, sh->b);
    if (rc != 0) {
        child_fail("pinger: map: %s", am_strerror(rc));
        _exit(2);
    }
    tu_gate_wait(&sh->gate);
    sh->cpu_a = sched_getcpu();
    for (uint32_t i = 0; i < sh->n && !sh->errors; i++) {
        rc = am_request(ep, 0, H_PING, &i, 1);
        if (rc != 0) {
            child_fail("pinger: ping %u: %s", i, am_strerror(rc));
            break;
        }
        while (AO_load(&sh->pongs) <= i && !sh->errors)
            if ((rc = am_wait(ep, -1)) < 0) {
                child_fail("pinger: am_wait: %s", am_strerror(rc));
                break;
            }
    }
    AO_store_release(&sh->done, 1);
    am_ep_destroy(ep);
}

static void ponger(void)
{
    am_ep_t *ep = child_create(sh->b);
    am_set_handler(ep, H_PING, ping_h);
    tu_gate_wait(&sh->gate);
    sh->cpu_b = sched_getcpu();
    while (AO_load(&sh->pings) < sh->n && !sh->errors) {
        int rc = am_wait(ep, -1);
        if (rc < 0) {
            child_fail("ponger: am_wait: %s", am_strerror(rc));
            break;
        }
    }
    /* Our last pong must be handled before our endpoint (and our sender entry in
     * the pinger's table) goes away. */
    double end = now_s() + 20;
    while (!AO_load_acquire(&sh->done) && now_s() < end)
        sleep_ms(1);
    am_ep_destroy(ep);
}

START_TEST(pingpong)
{
    int same = _i % 2;
    combo(_i / 2, same ? "ping-pong, both on one core" : "ping-pong, across cores");
    ep_name(sh->a, sizeof sh->a, "ping", sh->alg, sh->backend);
    ep_name(sh->b, sizeof sh->b, "pong", sh->alg, sh->backend);
    sh->n = 20000u * (unsigned)tu_stress_factor();
    tu_gate_init(&sh->gate, 2);
    double t0 = now_s();
    pid_t pb = spawn(ponger, 1), pa = spawn(pinger, same ? 1 : 0);
    int sa = reap(pa, 20.0 * tu_stress_factor()), sb = reap(pb, 5);
    double dt = now_s() - t0;
    ck_assert_msg(sa >= 0 && sb >= 0,
                  "%s: hung (lost wake-up?) after %lu pings, %lu pongs of %u (%s)", what,
                  (unsigned long)AO_load(&sh->pings), (unsigned long)AO_load(&sh->pongs),
                  sh->n, sh->errors ? sh->error : "no error");
    assert_exit0(sa, "pinger");
    assert_exit0(sb, "ponger");
    assert_no_child_errors();
    ck_assert_msg(AO_load(&sh->pongs) == sh->n, "%s: %lu of %u round trips", what,
                  (unsigned long)AO_load(&sh->pongs), sh->n);
    ck_assert_msg(same ? sh->cpu_a == sh->cpu_b
                       : sh->cpu_a != sh->cpu_b || CPU_COUNT(&all_cpus) < 2,
                  "%s: ran on CPUs %d and %d", what, sh->cpu_a, sh->cpu_b);
    printf("wait: %-8s %-5s %-6s %u round trips on am_wait only: %.2f s (%.1f us each)\n",
           am_claim_names[sh->alg], bname(sh->backend), same ? "same" : "across", sh->n, dt,
           dt * 1e6 / sh->n);
    assert_clean();
}
END_TEST

/* ---- (d) no wake system call while the receiver is awake ---- */

static void spinner(void)
{
    am_ep_t *ep = child_create(sh->b);
    am_set_handler(ep, H_MSG, count_h);
    AO_store_release(&sh->ready, 1);
    double end = now_s() + 20;
    /* Phase 1: awake, polling only. */
    while (AO_load(&sh->count) < sh->n && now_s() < end)
        if (am_poll(ep) < 0)
            child_fail("spinner: am_poll failed");
    /* Phase 2: asleep until one more message. */
    while (AO_load(&sh->count) < sh->n + 1)
        if (am_wait(ep, -1) < 0)
            child_fail("spinner: am_wait failed");
    while (!AO_load_acquire(&sh->done) && now_s() < end)
        sleep_ms(1);
    am_ep_destroy(ep);
}

START_TEST(awake_sender)
{
    combo(_i, "no wake-up call to an awake receiver");
    ep_name(sh->a, sizeof sh->a, "sender", sh->alg, sh->backend);
    ep_name(sh->b, sizeof sh->b, "spinner", sh->alg, sh->backend);
    sh->n = 10000;
    struct am_ep_opts o = opts();
    am_ep_t *ep;
    int rc = am_ep_create(sh->a, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create: %s", what, am_strerror(rc));
    pid_t p = spawn(spinner, 1);
    wait_flag(&sh->ready, 1, 10, "the receiver");
    rc = am_ep_map(ep, 0, sh->b);
    ck_assert_msg(rc == 0, "%s: map: %s", what, am_strerror(rc));
    const struct am_seg_header *h = peer_hdr(ep);
    unsigned seq0 = AO_int_load(&h->wake_seq);
    for (uint32_t i = 0; i < sh->n; i++) {
        rc = am_request(ep, 0, H_MSG, &i, 1);
        ck_assert_msg(rc == 0, "%s: send %u: %s", what, i, am_strerror(rc));
    }
    wait_flag(&sh->count, sh->n, 10, "the receiver to count the burst");
    unsigned seq1 = AO_int_load(&h->wake_seq);
    ck_assert_msg(seq1 == seq0,
                  "%s: %u wake-up call(s) during %u sends to a receiver that never slept",
                  what, seq1 - seq0, sh->n);
    /* Now it sleeps: one send must wake it. */
    wait_asleep(h);
    unsigned seq2 = AO_int_load(&h->wake_seq);
    uint32_t x = sh->n;
    rc = am_request(ep, 0, H_MSG, &x, 1);
    ck_assert_msg(rc == 0, "%s: send to the sleeper: %s", what, am_strerror(rc));
    unsigned seq3 = AO_int_load(&h->wake_seq);
    ck_assert_msg(seq3 != seq2, "%s: a send to a sleeping receiver did not wake it", what);
    wait_flag(&sh->count, sh->n + 1, 10, "the sleeper to handle the message");
    AO_store_release(&sh->done, 1);
    assert_exit0(reap(p, 10), "receiver");
    assert_no_child_errors();
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    assert_clean();
}
END_TEST

static Suite *wait_suite(void)
{
    Suite *s = suite_create("wait");
    TCase *tc = tcase_create("wake-ups");
    tcase_set_timeout(tc, 30);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, wake, 0, 2 * n_algs * WAKE_MODES);
    tcase_add_loop_test(tc, timeout, 0, 2 * n_algs);
    tcase_add_loop_test(tc, awake_sender, 0, 2 * n_algs);
    suite_add_tcase(s, tc);

    tc = tcase_create("ping-pong");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, pingpong, 0, 2 * 2 * n_algs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    while (am_claim_names[n_algs])
        n_algs++;
    sched_getaffinity(0, sizeof all_cpus, &all_cpus);
    snprintf(run_tag, sizeof run_tag, "wt%ld.", (long)getpid());
    SRunner *sr = srunner_create(wait_suite());
    srunner_set_fork_status(sr, getenv("CK_FORK") ? srunner_fork_status(sr) : CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    char first[128];
    int left = leftovers(run_tag, 1, first, sizeof first);
    if (left)
        fprintf(stderr, "check_wait: removed %d leftover segment(s), e.g. %s\n", left,
                first);
    return failed == 0 && left == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
