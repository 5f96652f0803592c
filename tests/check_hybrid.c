/*
 * check_hybrid.c - libshmam-mpi end to end: programs written against shmam.h,
 * linked with the transport between nodes (net/), run under `mpiexec -n 4`
 * with SHMAM_NODE_SIZE = 2 (ranks 0 and 1 on one virtual node, 2 and 3 on the
 * other: shared memory inside a node, MPI between them).
 *
 *   delivery    tests/mpi_delivery, one job per subtest (fifo, bulk, long,
 *               long_at, replies, barrier, mixed): exit 0, its "ok N messages"
 *               line (every count is checked by the program itself), no FAILED
 *   nodes       mpi_delivery all as one node of 4 (SHMAM_NODE_SIZE = 4: shared
 *               memory only) and as four of 1 (MPI only)
 *   fft         hyb_fft, N = 16: plane wave and round trip verified, as
 *               check_fft checks fft; --corrupt gives FAILED and a nonzero exit
 *   con         hyb_con, comm (S = 6) with full verification and comp (S = 24)
 *               with sampled: the app line verified, and the same component
 *               count and label sum as con under shmamrun -n 4
 *   sample      hyb_sample, 4096 keys, plain and --batched: the app line verified
 *   kill        mpi_delivery hang (and hang_region, each rank with a region;
 *               and rank 3 parked at a chosen point: hang_init, in am_init
 *               with its segment made and named, not yet live, the others in
 *               am_init waiting for it; hang_send, in the transport's send of
 *               a long message, its header handed to MPI and its data not;
 *               hang_close, in the transport's close, counts exchanged):
 *               once all four ranks are up (or rank 3 is parked), rank 3 (the
 *               other node's) gets SIGKILL; mpiexec must end within 20 s with
 *               a nonzero status
 *
 * Every job gets a SHMAM_JOB_PREFIX of its own test ("hy" and the test
 * process's pid in 6 base-36 digits: the same length for every test, so no
 * test's prefix starts another's), and after each run (once its ranks'
 * reapers have had REAP_GRACE seconds to remove their names) neither shmamstat
 * PREFIX nor a look at both backends (tu_leftovers) may find a segment of it;
 * what is found is removed, so one failure does not fail the next run.
 * LeakSanitizer is off in the ranks (tu_env_no_leak_check): it would report
 * MPICH's own allocations.  mpiexec comes from PATH: without it every test
 * fails.  The programs are found next to this binary: B/tests/mpi_delivery,
 * B/apps/hyb_*, B/apps/con, B/bin/shmamrun and B/bin/shmamstat.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define RUN_TIMEOUT 60 /* seconds a job may take, times the stress factor */
#define KILL_GRACE 20  /* seconds mpiexec may take to end a job after a rank dies */
#define REAP_GRACE 5   /* seconds a job's names may outlive mpiexec */

static char delivery[PATH_MAX], shmamstat[PATH_MAX], shmamrun[PATH_MAX], hyb_fft[PATH_MAX],
    hyb_con[PATH_MAX], hyb_sample[PATH_MAX], con[PATH_MAX];

static const struct {
    char *path;
    const char *rel;
} programs[] = {
    {delivery, "tests/mpi_delivery"},
    {shmamstat, "bin/shmamstat"},
    {shmamrun, "bin/shmamrun"},
    {hyb_fft, "apps/hyb_fft"},
    {hyb_con, "apps/hyb_con"},
    {hyb_sample, "apps/hyb_sample"},
    {con, "apps/con"},
};

/* The subtests of mpi_delivery run one per job. */
static const char *const subtests[] = {"fifo",    "bulk",    "long", "long_at",
                                       "replies", "barrier", "mixed"};
#define NSUB (int)(sizeof subtests / sizeof subtests[0])

/* In main: where the programs are. */
static void find_programs(void)
{
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
        tu_program(programs[i].path, PATH_MAX, programs[i].rel);
}

/* Every program there, and mpiexec in PATH: else the test fails, naming it. */
static void need_programs(void)
{
    char buf[PATH_MAX];
    const char *path = getenv("PATH");
    int found = 0;

    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
        ck_assert_msg(access(programs[i].path, X_OK) == 0,
                      "%s is not built (make programs)", programs[i].path);
    for (const char *p = path; p && *p && !found;
         p += strcspn(p, ":") + (p[strcspn(p, ":")] != 0)) {
        snprintf(buf, sizeof buf, "%.*s/mpiexec", (int)strcspn(p, ":"), p);
        found = access(buf, X_OK) == 0;
    }
    ck_assert_msg(found, "mpiexec is not in PATH (%s): this suite needs MPICH",
                  path ? path : "");
}

/* This test's job prefix: "hy" and getpid() in 6 base-36 digits. */
static const char *job_prefix(void)
{
    static char buf[9];
    unsigned long v = (unsigned long)getpid();

    memcpy(buf, "hy", 2);
    for (int i = 7; i >= 2; i--, v /= 36)
        buf[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
    buf[8] = '\0';
    return buf;
}

/* No segment of this test's jobs is left: shmamstat PREFIX lists none (and
 * succeeds), and neither backend holds one.  A rank's reaper (net/) removes
 * its names once the rank has gone, which may be a moment after mpiexec has
 * exited: names may take up to REAP_GRACE seconds to go.  Removes what is
 * left then. */
static void assert_no_segments(const char *what)
{
    const char *argv[] = {shmamstat, job_prefix(), NULL};
    static struct tu_output st; /* too big for the stack */
    char first[128] = "";
    char pfx[16];
    double end = tu_now_s() + REAP_GRACE;

    snprintf(pfx, sizeof pfx, "%s", job_prefix());
    while (tu_leftovers(pfx, 0, first, sizeof first) > 0 && tu_now_s() < end)
        tu_sleep_ms(10);
    tu_run_capture(argv, NULL, TU_ERR_MERGED, 10, &st);
    int left = tu_leftovers(pfx, 1, first, sizeof first);
    ck_assert_msg(st.status == 0, "%s: shmamstat %s exited %d:\n%s", what, pfx, st.status,
                  st.out);
    ck_assert_msg(
        left == 0 && strstr(st.out, "(no shmam endpoints)"),
        "%s: %d segment(s) of the job left (now removed), e.g. %s; shmamstat %s:\n%s", what,
        left, left ? first : "none in /dev/shm or System V", pfx, st.out);
}

/* The environment of a job: SHMAM_NODE_SIZE=k, this test's prefix, the
 * default claim algorithm, no leak checks. */
static void job_env(const char **env, char *node, size_t nn, char *prefix, size_t pn, int k)
{
    snprintf(node, nn, "SHMAM_NODE_SIZE=%d", k);
    snprintf(prefix, pn, "SHMAM_JOB_PREFIX=%s", job_prefix());
    env[0] = node;
    env[1] = prefix;
    env[2] = "SHMAM_CLAIM=lockfree";
    env[3] = tu_env_no_leak_check();
    env[4] = NULL;
}

/* Runs `mpiexec -n 4 prog args...` (args NULL-terminated) as nodes of k
 * ranks, to its end or RUN_TIMEOUT, then checks nothing of it is left. */
static void run_hyb(struct tu_output *r, int k, const char *prog, const char *const *args)
{
    const char *argv[24] = {"mpiexec", "-n", "4", prog};
    const char *env[5];
    char node[32], prefix[32], what[256];
    int argc = 4;

    need_programs();
    size_t n = (size_t)snprintf(what, sizeof what, "%s", strrchr(prog, '/') + 1);
    for (; *args && argc < 23 && n < sizeof what - 32; args++) {
        argv[argc++] = *args;
        n += (size_t)snprintf(what + n, sizeof what - n, " %s", *args);
    }
    argv[argc] = NULL;
    snprintf(what + n, sizeof what - n, " (node size %d)", k);
    job_env(env, node, sizeof node, prefix, sizeof prefix, k);
    tu_run_capture(argv, env, TU_ERR_MERGED, RUN_TIMEOUT * tu_stress_factor(), r);
    ck_assert_msg(r->status != -1, "%s: still running after %d s, killed:\n%s", what,
                  RUN_TIMEOUT * tu_stress_factor(), r->out);
    assert_no_segments(what);
}

/* mpi_delivery's line for subtest `sub` is "ok N messages" with N > 0. */
static void assert_delivered(const struct tu_output *r, const char *sub, int k)
{
    char want[64];
    unsigned long n = 0;

    snprintf(want, sizeof want, "mpi_delivery %s: ok ", sub);
    const char *line = strstr(r->out, want);
    ck_assert_msg(line && sscanf(line + strlen(want), "%lu messages", &n) == 1 && n > 0,
                  "mpi_delivery %s, node size %d: no \"%s N messages\" line (exit %d):\n%s",
                  sub, k, want, r->status, r->out);
    ck_assert_msg(r->status == 0 && !strstr(r->out, "FAILED"),
                  "mpi_delivery %s, node size %d: exit %d:\n%s", sub, k, r->status, r->out);
}

START_TEST(delivery_subtest)
{
    const char *args[] = {subtests[_i], NULL};
    static struct tu_output r;

    run_hyb(&r, 2, delivery, args);
    assert_delivered(&r, subtests[_i], 2);
}
END_TEST

/* Loop index 0: one node of 4; 1: four nodes of 1. */
START_TEST(nodes)
{
    const char *args[] = {"all", NULL};
    int k = _i ? 1 : 4;
    static struct tu_output r;

    run_hyb(&r, k, delivery, args);
    for (int i = 0; i < NSUB; i++)
        assert_delivered(&r, subtests[i], k);
}
END_TEST

/* Loop index 0: plane wave; 1: round trip; 2: round trip with --corrupt. */
START_TEST(fft)
{
    static const char *const cases[][4] = {
        {"--n", "16", "--input", "planewave"},
        {"--n", "16", "--inverse-check", NULL},
        {"--n", "16", "--inverse-check", "--corrupt"},
    };
    const char *args[5] = {cases[_i][0], cases[_i][1], cases[_i][2], cases[_i][3], NULL};
    static struct tu_output r;

    run_hyb(&r, 2, hyb_fft, args);
    if (_i == 2) {
        ck_assert_msg(
            r.status != 0 && strstr(r.out, ",FAILED\n") && !strstr(r.out, ",verified"),
            "hyb_fft --inverse-check --corrupt: exit %d, not reported FAILED:\n%s",
            r.status, r.out);
        return;
    }
    ck_assert_msg(
        r.status == 0 && strstr(r.out, "app,fft,16cubed,lockfree,posix,4,") &&
            strstr(r.out, ",verified\n") && !strstr(r.out, "FAILED"),
        "hyb_fft %s: exit %d, no \"app,fft,16cubed,lockfree,posix,4,...,verified\" "
        "line:\n%s",
        args[2], r.status, r.out);
}
END_TEST

/* con's invariants "con: components C, label sum S" in out; 0 if missing. */
static int con_invariants(const char *out, unsigned long long *comp,
                          unsigned long long *sum)
{
    const char *p = strstr(out, "con: components ");
    return p && sscanf(p, "con: components %llu, label sum %llu", comp, sum) == 2;
}

/* Loop index 0: comm, S = 6, full verification; 1: comp, S = 24, sampled. */
START_TEST(con_runs)
{
    const char *input = _i ? "comp" : "comm", *side = _i ? "24" : "6";
    const char *verify = _i ? "sample" : "full";
    const char *args[] = {"--input", input, "--side", side, "--verify", verify, NULL};
    const char *shm[] = {shmamrun, "-n",       "4",        "--timeout", "60",
                         "-a",     "lockfree", con,        "--input",   input,
                         "--side", side,       "--verify", verify,      NULL};
    const char *env[] = {tu_env_no_leak_check(), NULL};
    char line[64];
    unsigned long long comp, sum, scomp, ssum;
    static struct tu_output r, s;

    run_hyb(&r, 2, hyb_con, args);
    snprintf(line, sizeof line, "app,con,%s-%s,lockfree,posix,4,", input, side);
    const char *app = strstr(r.out, line);
    ck_assert_msg(r.status == 0 && app && strstr(app, ",verified\n") &&
                      !strstr(r.out, "FAILED"),
                  "hyb_con %s (%s): exit %d, no \"%s...,verified\" line:\n%s", input,
                  verify, r.status, line, r.out);
    ck_assert_msg(con_invariants(r.out, &comp, &sum), "hyb_con %s: no invariants:\n%s",
                  input, r.out);
    tu_run_capture(shm, env, TU_ERR_MERGED, RUN_TIMEOUT, &s);
    ck_assert_msg(s.status == 0 && con_invariants(s.out, &scomp, &ssum),
                  "con %s under shmamrun -n 4: exit %d:\n%s", input, s.status, s.out);
    ck_assert_msg(
        comp == scomp && sum == ssum,
        "hyb_con %s: %llu components, label sum %llu; con under shmamrun: %llu, %llu",
        input, comp, sum, scomp, ssum);
}
END_TEST

/* Loop index 0: plain; 1: --batched (keys as long messages). */
START_TEST(sample_runs)
{
    const char *args[] = {"--keys", "4096", "--seed", "7", _i ? "--batched" : NULL, NULL};
    char line[64];
    double secs;
    char verdict[16] = "";
    static struct tu_output r;

    run_hyb(&r, 2, hyb_sample, args);
    snprintf(line, sizeof line, "app,%s,4096keys,lockfree,posix,4,",
             _i ? "sample_batched" : "sample");
    const char *app = strstr(r.out, line);
    ck_assert_msg(
        app && sscanf(app + strlen(line), "%lf,%15[a-zA-Z]", &secs, verdict) == 2 &&
            r.status == 0 && !strcmp(verdict, "verified"),
        "hyb_sample%s: exit %d, verdict %s; want a \"%s<seconds>,verified\" "
        "line:\n%s",
        _i ? " --batched" : "", r.status, verdict[0] ? verdict : "(none)", line, r.out);
}
END_TEST

/* The pid rank `rank` printed in its "mpi_delivery MODE: rank R pid PID
 * ready" line, or 0. */
static pid_t ready_pid(const char *out, const char *mode, int rank)
{
    char want[64];
    long pid = 0;

    snprintf(want, sizeof want, "mpi_delivery %s: rank %d pid ", mode, rank);
    const char *p = strstr(out, want);
    return p && sscanf(p + strlen(want), "%ld ready", &pid) == 1 ? (pid_t)pid : 0;
}

/* Loop index 0: hang; 1: hang_region; from 2 on, only rank 3 says it is
 * ready, parked at a chosen point: 2 hang_init (in am_init with its segment
 * made and named, the others waiting there to map it), 3 hang_send (in the
 * transport's send of a long message, header handed to MPI, data not), 4
 * hang_close (in the transport's close, counts exchanged). */
#define KILL_MODES 5
START_TEST(kill_rank)
{
    static const char *const modes[KILL_MODES] = {"hang", "hang_region", "hang_init",
                                                  "hang_send", "hang_close"};
    const char *mode = modes[_i];
    int first = _i >= 2 ? 3 : 0;
    const char *argv[] = {"mpiexec", "-n", "4", delivery, mode, NULL};
    const char *env[5];
    char node[32], prefix[32], what[64];
    pid_t pid[4] = {0};
    static struct tu_output r;

    need_programs();
    job_env(env, node, sizeof node, prefix, sizeof prefix, 2);
    tu_start(argv, env, TU_ERR_MERGED, RUN_TIMEOUT * tu_stress_factor(), &r);
    int up = first;
    while (up < 4 && tu_read_some(&r) > 0)
        for (up = first; up < 4 && (pid[up] = ready_pid(r.out, mode, up)) > 0; up++)
            ;
    if (up < 4)
        tu_finish(&r);
    ck_assert_msg(up == 4, "mpi_delivery %s: ranks %d..3 not all ready (exit %d):\n%s",
                  mode, first, r.status, r.out);
    ck_assert_msg(kill(pid[3], SIGKILL) == 0, "kill rank 3 (pid %d): %s", (int)pid[3],
                  strerror(errno));
    double killed = tu_now_s();
    r.deadline = killed + KILL_GRACE;
    tu_finish(&r);
    double took = tu_now_s() - killed;
    ck_assert_msg(r.status != -1,
                  "mpi_delivery %s: mpiexec still running %d s after rank 3 "
                  "(pid %d) was killed:\n%s",
                  mode, KILL_GRACE, (int)pid[3], r.out);
    ck_assert_msg(r.status != 0,
                  "mpi_delivery %s: mpiexec exited 0 after rank 3 was "
                  "killed:\n%s",
                  mode, r.out);
    snprintf(what, sizeof what, "mpi_delivery %s, rank 3 killed (%.1f s to end)", mode,
             took);
    assert_no_segments(what);
}
END_TEST

static Suite *hybrid_suite(void)
{
    Suite *s = suite_create("hybrid");
    TCase *tc = tu_tcase(s, "delivery", 2 * RUN_TIMEOUT);
    tcase_add_loop_test(tc, delivery_subtest, 0, NSUB);
    tcase_add_loop_test(tc, nodes, 0, 2);
    tc = tu_tcase(s, "apps", 3 * RUN_TIMEOUT);
    tcase_add_loop_test(tc, fft, 0, 3);
    tcase_add_loop_test(tc, con_runs, 0, 2);
    tcase_add_loop_test(tc, sample_runs, 0, 2);
    tc = tu_tcase(s, "kill", 2 * RUN_TIMEOUT);
    tcase_add_loop_test(tc, kill_rank, 0, KILL_MODES);
    return s;
}

int main(void)
{
    find_programs();
    tu_run_init("hy");
    return tu_run_suite(hybrid_suite(), "check_hybrid");
}
