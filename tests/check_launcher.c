/*
 * check_launcher.c - shmamrun end to end: exit status propagation, stopping the
 * job when a rank fails or the launcher is signalled or times out, option
 * checking, the exported environment, --bind, and above all that no segment of
 * a job survives it, in either backend, even when the launcher itself is
 * SIGKILLed (its guardian process removes them) or the whole job is, process
 * group and all (the guardian is in a group of its own), one-copy regions
 * included, and that no process of the job (rank or guardian) outlives a
 * launcher that ends normally.
 *
 * The launcher and the helper rank programs (prog_rank.c, prog_linger.c) are
 * found next to this test binary: B/bin/shmamrun and B/tests/prog_rank for the
 * build directory B (build, build-asan, ...), whatever the current directory.
 * Each launcher runs in a process group of its own (tu_start with a time limit),
 * which its ranks share.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "job.h"
#include "region.h"
#include "testutil.h"

#define RUN_LIMIT_S 20        /* a launcher still running then is killed, group and all */
#define CRASH_RUNS 20         /* launcher kills per backend, times tu_stress_factor() */
#define CRASH_MAX_DELAY_MS 40 /* the least kill window, see launcher_killed */
#define CRASH_NPROCS 4
#define CRASH_NPROCS_S "4"
#define CRASH_CLEAN_S 10.0       /* how long the guardian may take to sweep */
#define LINGER_FOREVER "3600000" /* ms: ranks that outlive any kill window */

static char launcher[PATH_MAX], helper[PATH_MAX], linger[PATH_MAX];

/* What a finished launcher left: its status and everything it and its ranks
 * printed (stdout and stderr together), and what the ranks said about
 * themselves. */
struct run {
    struct tu_output o;
    char job[AM_JOB_NAME_MAX + 1]; /* %24s below */
    int ready;                     /* ranks that printed their ready line */
    long pid[16];                  /* by rank */
};

static void find_programs(void)
{
    tu_program(launcher, sizeof launcher, "bin/shmamrun");
    tu_program(helper, sizeof helper, "tests/prog_rank");
    tu_program(linger, sizeof linger, "tests/prog_linger");
}

/* Fill job, ready and pid from the ready lines seen so far. */
static void parse_ready(struct run *r)
{
    int rank;
    long pid;

    r->ready = 0;
    for (const char *p = r->o.out; (p = strstr(p, "rank ")); p++)
        if (sscanf(p, "rank %d pid %ld job %24s ready", &rank, &pid, r->job) == 3 &&
            rank >= 0 && rank < 16) {
            r->pid[rank] = pid;
            r->ready++;
        }
}

/* Read until n ranks are ready (or the output ends). */
static void await_ready(struct run *r, int n)
{
    while (parse_ready(r), r->ready < n)
        if (tu_read_some(&r->o) <= 0)
            break;
}

/* Run the launcher (argv[0]) with `env` (as tu_start's) to its end. */
static void run(const char *const *argv, const char *const *env, struct run *r)
{
    memset(r, 0, sizeof *r);
    tu_run_capture(argv, env, TU_ERR_MERGED, RUN_LIMIT_S, &r->o);
    parse_ready(r);
}

/* Rank r's names: k = 0 its endpoint "JOB.R", k = 1 the extra segment
 * "JOB.R.extra" prog_rank makes beside it. */
static void rank_name(const char *job, int r, int k, char *buf, size_t n)
{
    ck_assert(am__job_ep_name(job, r, buf, n) == 0);
    if (k)
        strncat(buf, ".extra", n - strlen(buf) - 1);
}

/* Whether any segment of the job exists in backend b (POSIX: any file of the
 * job's prefix; System V: the key of any of its ranks' names). */
static int job_segments(const char *job, int nprocs, enum am_shm b)
{
    char name[AM_MAX_NAME + 1], prefix[64];
    int found = 0;

    if (b == AM_SHM_SYSV) {
        for (int rank = 0; rank < nprocs; rank++)
            for (int k = 0; k < 2; k++) {
                rank_name(job, rank, k, name, sizeof name);
                found += shmget(am__segment_key(name), 0, 0) >= 0;
            }
        return found;
    }
    DIR *d = opendir("/dev/shm");
    ck_assert(d != NULL);
    snprintf(prefix, sizeof prefix, "shmam-%s.", job);
    for (struct dirent *e; (e = readdir(d));)
        found += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return found;
}

/* Remove whatever the launcher left of the job in backend b (so that a failing
 * test leaks nothing either) and say how much that was. */
static int remove_leftovers(const char *job, int nprocs, enum am_shm b)
{
    char name[AM_MAX_NAME + 1];
    int found = job_segments(job, nprocs, b);

    for (int rank = 0; rank < nprocs; rank++)
        for (int k = 0; k < 2; k++) {
            rank_name(job, rank, k, name, sizeof name);
            am__segment_unlink(b, name);
        }
    return found;
}

/* The job ran all its ranks (they had their segments), and now nothing of it is
 * left: no segment in either backend, no rank alive, and no process at all in
 * the launcher's process group (the launcher reaps its guardian). */
static void assert_clean(const struct run *r, int nprocs, const char *bn)
{
    int posix = remove_leftovers(r->job, nprocs, AM_SHM_POSIX);
    int sysv = remove_leftovers(r->job, nprocs, AM_SHM_SYSV);
    ck_assert_msg(r->ready == nprocs && r->job[0], "%s: %d of %d ranks ready:\n%s", bn,
                  r->ready, nprocs, r->o.out);
    ck_assert_msg(posix == 0 && sysv == 0,
                  "%s: job %s left %d posix and %d sysv segments behind", bn, r->job, posix,
                  sysv);
    for (int rank = 0; rank < nprocs; rank++)
        ck_assert_msg(kill((pid_t)r->pid[rank], 0) != 0 && errno == ESRCH,
                      "%s: rank %d (pid %ld) still alive", bn, rank, r->pid[rank]);
    ck_assert_msg(kill(-r->o.pid, 0) != 0 && errno == ESRCH,
                  "%s: a process of launcher %ld's group (its guardian?) outlived it", bn,
                  (long)r->o.pid);
}

static void assert_status(const struct run *r, int want, const char *bn)
{
    ck_assert_msg(r->o.status == want, "%s: launcher exited %d, not %d:\n%s", bn,
                  r->o.status, want, r->o.out);
}

static void assert_says(const struct run *r, const char *text, const char *bn)
{
    ck_assert_msg(strstr(r->o.out, text) != NULL, "%s: no \"%s\" in:\n%s", bn, text,
                  r->o.out);
}

#define BACKEND(i) am__shm_name((enum am_shm)(i))

START_TEST(all_ok)
{
    const char *bn = BACKEND(_i);
    const char *argv[] = {launcher, "-n", "3", "--shm", bn, helper, "ok", NULL};
    struct run r;
    unsigned launcher_pid, rnd;
    char tail;

    run(argv, NULL, &r);
    assert_status(&r, 0, bn);
    assert_clean(&r, 3, bn);
    ck_assert_msg(sscanf(r.job, "j%u-%8x%c", &launcher_pid, &rnd, &tail) == 2 &&
                      strlen(r.job) <= AM_JOB_NAME_MAX,
                  "%s: odd job name %s", bn, r.job);
}
END_TEST

START_TEST(exit_status)
{
    const char *bn = BACKEND(_i);
    const char *argv[] = {launcher, "-n", "3", "--shm", bn, helper, "exit", "1", "3", NULL};
    struct run r;

    run(argv, NULL, &r);
    assert_status(&r, 3, bn);
    assert_says(&r, "shmamrun: rank 1 exited with status 3", bn);
    assert_clean(&r, 3, bn);
}
END_TEST

START_TEST(killed_rank)
{
    const char *bn = BACKEND(_i);
    const char *argv[] = {launcher, "-n", "3", "--shm", bn, helper, "kill", "2", NULL};
    struct run r;

    run(argv, NULL, &r);
    assert_status(&r, 137, bn);
    assert_says(&r, "shmamrun: rank 2 killed by signal 9", bn);
    assert_clean(&r, 3, bn);
}
END_TEST

/* Ranks that ignore SIGTERM are SIGKILLed after the grace period (about 1 s). */
START_TEST(stubborn_ranks)
{
    const char *bn = BACKEND(_i);
    const char *argv[] = {launcher, "-n",       "3", "--shm", bn,
                          helper,   "stubborn", "0", "5",     NULL};
    struct run r;
    double t0 = tu_now_s();

    run(argv, NULL, &r);
    double dt = tu_now_s() - t0;
    assert_status(&r, 5, bn);
    assert_clean(&r, 3, bn);
    /* At least the grace period.  That the stubborn ranks were killed at all
     * the status says: the launcher would be waiting for them still, until
     * run() kills it at RUN_LIMIT_S. */
    ck_assert_msg(dt > 0.8, "%s: stopping took %.2f s, less than the grace period", bn, dt);
}
END_TEST

/* Signal the launcher once every rank is ready; the segments existed then. */
static void signalled(int loop, int sig)
{
    const char *bn = BACKEND(loop);
    const char *argv[] = {launcher, "-n", "2", "--shm", bn, helper, "pause", NULL};
    struct run r;
    char want[64];

    memset(&r, 0, sizeof r);
    pid_t pid = tu_start(argv, NULL, TU_ERR_MERGED, RUN_LIMIT_S, &r.o);
    await_ready(&r, 2);
    ck_assert_msg(job_segments(r.job, 2, (enum am_shm)loop) == 4, /* 2 ranks x 2 names */
                  "%s: segments of running job %s not found", bn, r.job);
    kill(pid, sig);
    tu_finish(&r.o);
    parse_ready(&r);
    assert_status(&r, 128 + sig, bn);
    snprintf(want, sizeof want, "shmamrun: got signal %d", sig);
    assert_says(&r, want, bn);
    assert_clean(&r, 2, bn);
}

START_TEST(sigterm_forwarded)
{
    signalled(_i, SIGTERM);
}
END_TEST

START_TEST(sigint_forwarded)
{
    signalled(_i, SIGINT);
}
END_TEST

START_TEST(sighup_forwarded)
{
    signalled(_i, SIGHUP);
}
END_TEST

START_TEST(timeout)
{
    const char *bn = BACKEND(_i);
    const char *argv[] = {launcher,    "-n",  "2",    "--shm", bn,
                          "--timeout", "0.5", helper, "pause", NULL};
    struct run r;

    run(argv, NULL, &r);
    assert_status(&r, 124, bn);
    assert_says(&r, "shmamrun: timeout", bn);
    assert_clean(&r, 2, bn);
}
END_TEST

/* Poll (every 5 ms, up to CRASH_CLEAN_S) until no segment of a name starting
 * with prefix is left; then remove what is, so that a failure leaks nothing.
 * Returns how many there were, the first described in first[0 .. n-1]. */
static int await_clean(const char *prefix, char *first, size_t n)
{
    double until = tu_now_s() + CRASH_CLEAN_S;

    while (tu_leftovers(prefix, 0, first, n) > 0 && tu_now_s() < until)
        tu_sleep_ms(5);
    return tu_leftovers(prefix, 1, first, n);
}

/* How many lines "rank R word" prog_linger's ranks printed into out. */
static int count_lines(const char *out, const char *word)
{
    char line[32];
    int n = 0;

    for (int rank = 0; rank < CRASH_NPROCS; rank++) {
        snprintf(line, sizeof line, "rank %d %s\n", rank, word);
        n += strstr(out, line) != NULL;
    }
    return n;
}

/* Run one prog_linger job to its normal end and return how long (ms) its ranks
 * took to get past am_init; the job must exit 0 and leave nothing: no segment,
 * no process of its group (ranks, guardian). */
static int time_init(int loop)
{
    const char *bn = BACKEND(loop);
    const char *argv[] = {launcher, "-n", CRASH_NPROCS_S, "--shm", bn, linger, "10", NULL};
    static struct tu_output o; /* too big for the stack */
    char prefix[32], first[160] = "";
    double t0 = tu_now_s(), dt = 0;

    pid_t pid = tu_start(argv, NULL, TU_ERR_MERGED, RUN_LIMIT_S, &o);
    while (count_lines(o.out, "init") < CRASH_NPROCS && tu_read_some(&o) > 0)
        dt = tu_now_s() - t0;
    tu_finish(&o);
    snprintf(prefix, sizeof prefix, "j%ld-", (long)pid);
    ck_assert_msg(o.status == 0, "%s: normal job exited %d:\n%s", bn, o.status, o.out);
    ck_assert_msg(tu_leftovers(prefix, 1, first, sizeof first) == 0,
                  "%s: normal job left %s", bn, first);
    ck_assert_msg(kill(-pid, 0) != 0 && errno == ESRCH,
                  "%s: a process of launcher %ld's group (its guardian?) outlived it", bn,
                  (long)pid);
    return (int)(dt * 1000);
}

/* One job whose launcher is SIGKILLed delay_ms after it started: before any
 * rank, during am_init or after it.  Its ranks linger for an hour, so that the
 * kill lands while the job runs however late this process wakes; they die
 * with the launcher, and its guardian must remove every name of the job. */
static void kill_launcher(int loop, int delay_ms)
{
    const char *bn = BACKEND(loop);
    const char *argv[] = {launcher, "-n",   CRASH_NPROCS_S, "--shm",
                          bn,       linger, LINGER_FOREVER, NULL};
    static struct tu_output o;
    char prefix[32], first[160] = "";

    pid_t pid = tu_start(argv, NULL, TU_ERR_MERGED, RUN_LIMIT_S, &o);
    tu_sleep_ms(delay_ms);
    kill(pid, SIGKILL); /* the launcher only, not its group */
    tu_finish(&o);      /* to the end of its output: ranks and guardian are gone */
    snprintf(prefix, sizeof prefix, "j%ld-", (long)pid);
    int left = await_clean(prefix, first, sizeof first);
    ck_assert_msg(left == 0,
                  "%s: launcher killed after %d ms (%d ranks started, %d past am_init) "
                  "left %d segment(s) of %s*, e.g. %s:\n%s",
                  bn, delay_ms, count_lines(o.out, "start"), count_lines(o.out, "init"),
                  left, prefix, first, o.out);
    ck_assert_msg(o.status == 128 + SIGKILL,
                  "%s: launcher killed after %d ms: status %d:\n%s", bn, delay_ms, o.status,
                  o.out);
}

/* Kill delays are uniform in 0 .. 1.5 times the time a job takes to get past
 * am_init on this machine (at least CRASH_MAX_DELAY_MS), so that kills land
 * before any rank started, during am_init and after it. */
START_TEST(launcher_killed)
{
    unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL);
    int runs = CRASH_RUNS * tu_stress_factor(), window = time_init(_i) * 3 / 2;

    if (window < CRASH_MAX_DELAY_MS)
        window = CRASH_MAX_DELAY_MS;
    for (int i = 0; i < runs; i++)
        kill_launcher(_i, (int)(rand_r(&seed) % (unsigned)(window + 1)));
}
END_TEST

/* The endpoint names "JOB.RANK" of the ranks below n that printed "rank R
 * regions JOB.RANK" (prog_linger region) into names; how many have. */
static int region_ranks(const char *out, char names[][AM_NAME_MAX], int n)
{
    int got = 0, rank;
    char name[AM_NAME_MAX];
    for (const char *p = out; (p = strstr(p, "rank ")); p++)
        if (sscanf(p, "rank %d regions %40s", &rank, name) == 2 && rank >= 0 && rank < n)
            snprintf(names[rank], AM_NAME_MAX, "%s", name);
    for (int r = 0; r < n; r++)
        got += names[r][0] != 0;
    return got;
}

/* How many names of the job's ranks (endpoint "JOB.R", its extra "JOB.R.x",
 * and their regions) backend b still has; with `remove`, removes them. */
static int rank_names_left(char names[][AM_NAME_MAX], int n, enum am_shm b, int remove)
{
    int left = 0;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < 2; k++) {
            char ep[AM_NAME_MAX + 4], reg[AM_NAME_MAX + 8];
            struct am_segment s;
            snprintf(ep, sizeof ep, "%s%s", names[r], k ? ".x" : "");
            ck_assert(am__region_name(ep, reg, sizeof reg) == 0);
            for (const char *nm = ep; nm; nm = nm == ep ? reg : NULL)
                if (am__segment_open(b, nm, &s) == 0) {
                    am__segment_unmap(&s);
                    left++;
                }
            if (remove)
                am__job_names_unlink(b, ep);
        }
    return left;
}

/* A job of two ranks with regions (prog_linger region: each rank's endpoint
 * and its extra one make one after am_init) is SIGKILLed whole, as
 * `kill -KILL -PGID` does: launcher, guardian and ranks.  Within CRASH_CLEAN_S
 * no name of the job may be left in its backend, regions included. */
START_TEST(killed_job_leaves_no_region)
{
    const char *bn = BACKEND(_i);
    const char *argv[] = {launcher, "-n",    "2",      "--shm", bn,
                          linger,   "60000", "region", NULL};
    static struct tu_output o;
    char names[2][AM_NAME_MAX] = {"", ""}, prefix[32], first[160] = "";
    enum am_shm b = (enum am_shm)_i;

    pid_t pid = tu_start(argv, NULL, TU_ERR_MERGED, RUN_LIMIT_S, &o);
    while (region_ranks(o.out, names, 2) < 2 && tu_read_some(&o) > 0)
        ;
    int made = region_ranks(o.out, names, 2);
    kill(-pid, SIGKILL); /* the launcher's process group */
    tu_finish(&o);
    snprintf(prefix, sizeof prefix, "j%ld-", (long)pid);
    ck_assert_msg(made == 2, "%s: %d of 2 ranks made their regions:\n%s", bn, made, o.out);
    double until = tu_now_s() + CRASH_CLEAN_S;
    int left;
    while ((left = rank_names_left(names, 2, b, 0) + tu_leftovers(prefix, 0, first, 160)) &&
           tu_now_s() < until)
        tu_sleep_ms(5);
    rank_names_left(names, 2, b, 1);
    tu_leftovers(prefix, 1, first, sizeof first);
    ck_assert_msg(left == 0, "%s: job %s killed whole left %d name(s), e.g. %s:\n%s", bn,
                  names[0], left, first, o.out);
}
END_TEST

/* Bad input: exit 2, a message naming the problem, and no rank started. */
static const struct bad_case {
    const char *args[4];
    const char *env;
    const char *says;
} bad_cases[] = {
    {{"--claim", "fastest"}, NULL, "bad --claim 'fastest'"},
    {{"-a", "MUTEX"}, NULL, "bad --claim 'MUTEX'"},
    {{"--shm", "mmap"}, NULL, "bad --shm 'mmap'"},
    {{"--packets", "100"}, NULL, "bad --packets '100'"},
    {{"--packets", "0"}, NULL, "bad --packets '0'"},
    {{"--packets", "1"}, NULL, "bad --packets '1'"},
    {{"--bulk", "-4"}, NULL, "bad --bulk '-4'"},
    {{"--bulk", "8192"}, NULL, "bad --bulk '8192'"},
    {{"--timeout", "soon"}, NULL, "bad --timeout 'soon'"},
    {{"--timeout", "-1"}, NULL, "bad --timeout '-1'"},
    {{"--frobnicate"}, NULL, "unrecognized option"},
    {{"--bind"}, "SHMAM_CLAIM=spin", "bad SHMAM_CLAIM='spin' in the environment"},
    {{"--bind"}, "SHMAM_SHM=POSIX", "bad SHMAM_SHM='POSIX' in the environment"},
    {{"--bind"}, "SHMAM_PACKETS=3", "bad SHMAM_PACKETS='3' in the environment"},
};

START_TEST(bad_options)
{
    const struct bad_case *c = &bad_cases[_i];
    const char *argv[12] = {launcher, "-n", "2"};
    const char *env[] = {c->env, NULL};
    struct run r;
    int k = 3;

    for (int a = 0; a < 4 && c->args[a]; a++)
        argv[k++] = c->args[a];
    argv[k++] = helper;
    argv[k] = NULL;
    run(argv, env, &r);
    assert_status(&r, 2, c->says);
    assert_says(&r, c->says, c->says);
    ck_assert_msg(r.ready == 0, "%s: ranks ran anyway", c->says);
}
END_TEST

START_TEST(bad_usage)
{
    const char *const cases[][6] = {
        {launcher, NULL},                         /* nothing */
        {launcher, "-n", "0", "true", NULL},      /* no ranks */
        {launcher, "-n", "two", "true", NULL},    /* not a number */
        {launcher, "-n", "100000", "true", NULL}, /* too many */
        {launcher, "-n", "2", NULL},              /* no program */
        {launcher, "true", NULL},                 /* no -n */
    };
    struct run r;

    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        run(cases[k], NULL, &r);
        ck_assert_msg(r.o.status == 2 && strstr(r.o.out, "shmamrun: ") &&
                          strstr(r.o.out, "--help"),
                      "usage case %zu: exit %d:\n%s", k, r.o.status, r.o.out);
    }
}
END_TEST

START_TEST(help)
{
    const char *argv[] = {launcher, "--help", NULL};
    struct run r;

    run(argv, NULL, &r);
    assert_status(&r, 0, "help");
    assert_says(&r, "usage: shmamrun -n P", "help");
}
END_TEST

START_TEST(cannot_exec)
{
    const char *argv[] = {launcher, "-n", "2", "/nonexistent/program", NULL};
    struct run r;

    run(argv, NULL, &r);
    assert_status(&r, 127, "exec");
    assert_says(&r, "cannot run /nonexistent/program", "exec");
}
END_TEST

/* Command-line options override the environment; inherited values pass through;
 * the program's own options are not the launcher's. */
START_TEST(environment)
{
    const char *argv[] = {launcher, "-n",   "2",   "-a",      "ticket", "--packets",
                          "256",    helper, "env", "--claim", NULL};
    const char *env[] = {"SHMAM_CLAIM=tas", "SHMAM_BULK=4", "SHMAM_SHM=", NULL};
    struct run r;

    run(argv, env, &r);
    assert_status(&r, 0, "env");
    assert_says(&r, "rank 0 env claim=ticket shm=- packets=256 bulk=4", "env");
    assert_says(&r, "rank 1 env claim=ticket shm=- packets=256 bulk=4", "env");
    assert_clean(&r, 2, "env");
}
END_TEST

/* The (k % n)-th CPU this process may use, as the launcher counts them. */
static int nth_allowed_cpu(int k)
{
    cpu_set_t set;

    ck_assert(sched_getaffinity(0, sizeof set, &set) == 0);
    int want = k % CPU_COUNT(&set), cpu = -1;
    while (want >= 0)
        if (CPU_ISSET(++cpu, &set))
            want--;
    return cpu;
}

START_TEST(bind)
{
    const char *argv[] = {launcher, "-n", "3", "--bind", helper, "affinity", NULL};
    struct run r;
    char want[64];

    run(argv, NULL, &r);
    assert_status(&r, 0, "bind");
    for (int rank = 0; rank < 3; rank++) {
        snprintf(want, sizeof want, "rank %d cpus %d\n", rank, nth_allowed_cpu(rank));
        assert_says(&r, want, "bind");
    }
    assert_clean(&r, 3, "bind");
}
END_TEST

static Suite *launcher_suite(void)
{
    Suite *s = suite_create("launcher");
    TCase *jobs = tcase_create("jobs"), *opts = tcase_create("options");
    TCase *crash = tcase_create("crash");
    const int posix = AM_SHM_POSIX, both = AM_SHM_SYSV + 1;

    tcase_set_timeout(jobs, 30);
    tcase_add_loop_test(jobs, all_ok, posix, both);
    tcase_add_loop_test(jobs, exit_status, posix, both);
    tcase_add_loop_test(jobs, killed_rank, posix, both);
    tcase_add_loop_test(jobs, stubborn_ranks, posix, both);
    tcase_add_loop_test(jobs, sigterm_forwarded, posix, both);
    tcase_add_loop_test(jobs, sigint_forwarded, posix, both);
    tcase_add_loop_test(jobs, sighup_forwarded, posix, both);
    tcase_add_loop_test(jobs, timeout, posix, both);
    suite_add_tcase(s, jobs);
    tcase_set_timeout(crash, 120);
    tcase_add_loop_test(crash, launcher_killed, posix, both);
    tcase_add_loop_test(crash, killed_job_leaves_no_region, posix, both);
    suite_add_tcase(s, crash);
    tcase_set_timeout(opts, 30);
    tcase_add_loop_test(opts, bad_options, 0, sizeof bad_cases / sizeof bad_cases[0]);
    tcase_add_test(opts, bad_usage);
    tcase_add_test(opts, help);
    tcase_add_test(opts, cannot_exec);
    tcase_add_test(opts, environment);
    tcase_add_test(opts, bind);
    suite_add_tcase(s, opts);
    return s;
}

int main(void)
{
    find_programs();
    tu_run_init("ln");
    return tu_run_suite(launcher_suite(), "check_launcher");
}
