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
#include <unistd.h>

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

/* Segments left by the launcher's jobs, of either backend: every name that
 * starts with "<prefix><launcher pid>-" (run_job sets the prefix, shmamrun.c
 * adds the pid).  By prefix, not by rank 0's job line: when a rank ends early
 * the launcher stops the others, maybe before rank 0 printed it.  Removes what
 * it finds, so that a failure leaves nothing; the first is described in
 * first[0 .. n-1]. */
static int job_leftovers(const struct job_run *r, const char *prefix, char *first, size_t n)
{
    char names[40], again[160];
    snprintf(names, sizeof names, "%s%d-", prefix, (int)r->o.pid);
    int left = tu_leftovers(names, 0, first, n);
    tu_leftovers(names, 1, again, sizeof again);
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
    char first[160] = "";
    ck_assert_msg(r.job[0] && job_leftovers(&r, "j", first, sizeof first) == 0,
                  "%s/%s: segments left by job %s, e.g. %s", alg, shm, r.job, first);
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
    char first[160] = "";
    int left = job_leftovers(&r, "j", first, sizeof first);
    ck_assert_msg(left == 0, "%s/%s: %d segments of job j%d-* left, e.g. %s", modes[_i / 2],
                  shm, left, (int)r.o.pid, first);
}
END_TEST

START_TEST(exit_status_propagates)
{
    const char *args[] = {"exit", "1", "5", NULL};
    struct job_run r;
    run_job("ticket", backends[_i], args, NULL, &r);
    ck_assert_msg(r.status == 5, "%s: launcher exit %d, want 5", backends[_i], r.status);
    char first[160] = "";
    int left = job_leftovers(&r, "j", first, sizeof first);
    ck_assert_msg(left == 0, "%s: %d segments of job j%d-* left, e.g. %s", backends[_i],
                  left, (int)r.o.pid, first);
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
    char first[160] = "";
    ck_assert_msg(job_leftovers(&r, "zq7", first, sizeof first) == 0,
                  "prefix: segments left by job %s, e.g. %s", r.job, first);
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
