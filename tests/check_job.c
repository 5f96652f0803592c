/*
 * check_job.c - jobs of real processes under shmamrun using am_init: messages
 * around a ring for every algorithm and backend, exit status, and that no
 * segment, /dev/shm file or System V id of a job survives it, even when a rank
 * is killed with SIGKILL before or after am_init.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>

#include "job.h"
#include "segment.h"
#include "shmam.h"
#include "testutil.h"

static const char *const backends[] = {"posix", "sysv"};
#define NPROCS 4

struct job_run {
    struct tu_output o; /* what the launcher and the ranks printed */
    int status;         /* launcher's exit code, or -1 if a signal ended it */
    char job[64];       /* job name from rank 0's line, or "" */
};

/* Run `shmamrun -n NPROCS -a alg --shm shm --bind prog_job args...`, both found
 * in the build directory of this test (tu_program), with SHMAM_JOB_PREFIX=j
 * unless env sets another: the job is named "j<launcher pid>-..." whatever the
 * environment of the test, so the leftover checks look for the right names. */
static void run_job(const char *alg, const char *shm, const char *const *args,
                    const char *const *env, struct job_run *r)
{
    const char *envs[8] = {"SHMAM_JOB_PREFIX=j"};
    for (int i = 0; env && env[i] && i < 6; i++)
        envs[i + 1] = env[i];
    char launcher[PATH_MAX], prog[PATH_MAX];
    tu_program(launcher, sizeof launcher, "bin/shmamrun");
    tu_program(prog, sizeof prog, "tests/prog_job");
    const char *argv[16] = {launcher, "-n",     "4",         "-a", alg, "--shm",
                            shm,      "--bind", "--timeout", "60", prog};
    int n = 11;
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    tu_run_capture(argv, envs, TU_ERR_MERGED, 0, &r->o);
    r->status = r->o.signal ? -1 : r->o.status;
    const char *j = strstr(r->o.out, "job ");
    r->job[0] = '\0';
    if (j)
        sscanf(j, "job %63s", r->job);
}

/* Segments of the job still reachable by name, in either backend. */
static int leftovers(const char *job)
{
    int left = 0;
    for (int rank = 0; rank < NPROCS; rank++) {
        char name[64], path[128];
        am__job_ep_name(job, rank, name, sizeof name);
        snprintf(path, sizeof path, "/dev/shm/shmam-%s", name);
        left += access(path, F_OK) == 0;
        left += shmget(am__segment_key(name), 0, 0) >= 0;
    }
    return left;
}

static int count(const char *out, const char *needle)
{
    int n = 0;
    for (const char *p = out; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

START_TEST(ring_every_algorithm)
{
    const char *shm = backends[_i % 2], *alg = am_claim_names[_i / 2];
    const char *args[] = {"ring", "3000", NULL};
    struct job_run r;
    run_job(alg, shm, args, NULL, &r);
    ck_assert_msg(r.status == 0, "%s/%s: launcher exit %d, output:\n%s", alg, shm, r.status,
                  r.o.out);
    ck_assert_msg(count(r.o.out, " ok\n") == NPROCS, "%s/%s: not every rank ok:\n%s", alg,
                  shm, r.o.out);
    ck_assert_msg(r.job[0] && leftovers(r.job) == 0, "%s/%s: segments left by job %s", alg,
                  shm, r.job);
}
END_TEST

START_TEST(killed_rank_leaves_nothing)
{
    const char *shm = backends[_i % 2];
    const char *modes[] = {"kill-init", "kill-early"};
    const char *args[] = {modes[_i / 2], "2", NULL};
    struct job_run r;
    run_job("lockfree", shm, args, NULL, &r);
    ck_assert_msg(r.status == 137, "%s/%s: launcher exit %d, want 137", modes[_i / 2], shm,
                  r.status);
    /* kill-early: rank 0 may not get to print its job line before it is
     * stopped, so look for every name of the launcher's jobs ("j<its pid>-":
     * run_job sets the prefix j, shmamrun.c adds the pid), both backends,
     * whether or not the line came. */
    char prefix[32], first[160] = "";
    snprintf(prefix, sizeof prefix, "j%d-", (int)r.o.pid);
    int left = tu_leftovers(prefix, 0, first, sizeof first);
    int named = r.job[0] ? leftovers(r.job) : 0;
    char again[160];
    tu_leftovers(prefix, 1, again, sizeof again); /* so that a failure leaves none */
    ck_assert_msg(left == 0, "%s/%s: %d segments of job %s* left, e.g. %s", modes[_i / 2],
                  shm, left, prefix, first);
    ck_assert_msg(!r.job[0] || (strncmp(r.job, prefix, strlen(prefix)) == 0 && named == 0),
                  "%s/%s: job %s (want %s...): %d segments left", modes[_i / 2], shm, r.job,
                  prefix, named);
}
END_TEST

START_TEST(exit_status_propagates)
{
    const char *args[] = {"exit", "1", "5", NULL};
    struct job_run r;
    run_job("ticket", backends[_i], args, NULL, &r);
    ck_assert_msg(r.status == 5, "%s: launcher exit %d, want 5", backends[_i], r.status);
    ck_assert_msg(r.job[0] && leftovers(r.job) == 0, "%s: segments left", backends[_i]);
}
END_TEST

/* SHMAM_JOB_PREFIX names the job (so a script finds exactly its own
 * segments); a bad one is refused before anything starts. */
START_TEST(job_prefix)
{
    const char *args[] = {"ring", "100", NULL};
    const char *good[] = {"SHMAM_JOB_PREFIX=zq7", NULL},
               *bad[] = {"SHMAM_JOB_PREFIX=Zq!", NULL};
    char want[32];
    struct job_run r;
    run_job("lockfree", "posix", args, good, &r);
    snprintf(want, sizeof want, "zq7%d-", (int)r.o.pid);
    ck_assert_msg(r.status == 0 && strncmp(r.job, want, strlen(want)) == 0,
                  "prefix: exit %d, job '%s', want %s...:\n%s", r.status, r.job, want,
                  r.o.out);
    ck_assert_msg(leftovers(r.job) == 0, "prefix: segments left by job %s", r.job);
    run_job("lockfree", "posix", args, bad, &r);
    ck_assert_msg(r.status == 2 && strstr(r.o.out, "SHMAM_JOB_PREFIX") && !r.job[0],
                  "bad prefix: exit %d:\n%s", r.status, r.o.out);
}
END_TEST

static Suite *job_suite(void)
{
    Suite *s = suite_create("job");
    TCase *tc = tcase_create("job");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, ring_every_algorithm, 0, 2 * 6);
    tcase_add_loop_test(tc, killed_rank_leaves_nothing, 0, 4);
    tcase_add_loop_test(tc, exit_status_propagates, 0, 2);
    tcase_add_test(tc, job_prefix);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("jb");
    return tu_run_suite(job_suite(), "check_job");
}
