/*
 * check_splitc.c - the Split-C layer (apps/splitc/) and SAMPLE, end to end, as
 * programs under the launcher with --timeout 60 (the layer lives in libsplitc,
 * which test binaries do not link, so its test is an application:
 * apps/splitc_selftest.c exercises every function and checks every value).
 *
 *   selftest        splitc_selftest with P = 1, 2, 4, claim algorithms lockfree
 *                   and ticket (POSIX segments), P = 4 lockfree over System V,
 *                   and P = 4 with long_max 4096 (every bulk range many long
 *                   messages): exit 0 and "verified"
 *   bad_gptr        a put one word past the end of a part aborts the job with
 *                   "bad global pointer" and a nonzero exit
 *   sample_batched  SAMPLE --batched (keys per destination as long messages), P =
 *                   4, lockfree, tas with long_max 4096; --corrupt is caught
 *   sample          SAMPLE, 4096 keys per rank, P = 2 and 4, lockfree and tas,
 *                   plus once with oversampling 1: exit 0 and a final line
 *                   "app,sample,4096keys,ALG,posix,P,<seconds>,verified"
 *   sample_corrupt  --corrupt (one key flipped after sorting) gives FAILED and a
 *                   nonzero exit, for shmam and for the MPI version
 *   mpi_sample      build/apps/mpi_sample under mpiexec -n 2: exit 0, verified
 *
 * Programs are found next to this test binary (B/bin, B/apps for the build
 * directory B).  The claim algorithm is named in every failure message.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char launcher[PATH_MAX], selftest_prog[PATH_MAX], sample_prog[PATH_MAX],
    mpi_sample_prog[PATH_MAX];

static void find_programs(void)
{
    tu_program(launcher, sizeof launcher, "bin/shmamrun");
    tu_program(selftest_prog, sizeof selftest_prog, "apps/splitc_selftest");
    tu_program(sample_prog, sizeof sample_prog, "apps/sample");
    tu_program(mpi_sample_prog, sizeof mpi_sample_prog, "apps/mpi_sample");
}

/* `shmamrun -n procs -a alg --shm shm --timeout 60 prog extra...`, with the
 * environment changed by env (tu_start's; may be NULL). */
static void run_job_env(struct tu_output *r, const char *prog, int procs, const char *alg,
                        const char *shm, const char *const *extra, const char *const *env)
{
    char n[16];
    const char *argv[24] = {launcher, "-n", n,           "-a", alg,
                            "--shm",  shm,  "--timeout", "60", prog};
    int argc = 10;
    snprintf(n, sizeof n, "%d", procs);
    while (extra && *extra && argc < 23)
        argv[argc++] = *extra++;
    argv[argc] = NULL;
    tu_run_capture(argv, env, TU_ERR_MERGED, 0, r);
}

static void run_job(struct tu_output *r, const char *prog, int procs, const char *alg,
                    const char *shm, const char *const *extra)
{
    run_job_env(r, prog, procs, alg, shm, extra, NULL);
}

/* The verdict of the final "app,sample,..." line, checking its other fields;
 * NULL if the line is missing or wrong. */
static const char *sample_line(const struct tu_output *r, const char *name,
                               const char *keys, const char *impl, const char *shm,
                               int procs)
{
    static char verdict[16];
    char want[128];
    snprintf(want, sizeof want, "app,%s,", name);
    const char *line = strstr(r->out, want);
    double seconds;
    snprintf(want, sizeof want, "app,%s,%skeys,%s,%s,%d,", name, keys, impl, shm, procs);
    if (!line || strncmp(line, want, strlen(want)) != 0 ||
        sscanf(line + strlen(want), "%lf,%15[a-zA-Z]", &seconds, verdict) != 2 ||
        seconds < 0)
        return NULL;
    return verdict;
}

static const char *sample_verdict(const struct tu_output *r, const char *keys,
                                  const char *impl, const char *shm, int procs)
{
    return sample_line(r, "sample", keys, impl, shm, procs);
}

static const char *const self_algs[] = {"lockfree", "ticket"};
static const int self_procs[] = {1, 2, 4};

START_TEST(selftest)
{
    /* Cases 0..5: P x alg over POSIX; case 6: P = 4 lockfree over System V;
     * case 7: P = 4 lockfree with the shortest long messages, so that every
     * bulk range is many messages. */
    const char *alg = _i < 6 ? self_algs[_i % 2] : "lockfree";
    const char *shm = _i == 6 ? "sysv" : "posix";
    int procs = _i < 6 ? self_procs[_i / 2] : 4;
    static const char *const short_long[] = {"SHMAM_LONG_MAX=4096", NULL};
    char want[96];
    struct tu_output r;
    run_job_env(&r, selftest_prog, procs, alg, shm, NULL, _i == 7 ? short_long : NULL);
    snprintf(want, sizeof want, "splitc_selftest: %d ranks, %s: verified\n", procs, alg);
    ck_assert_msg(r.status == 0 && strstr(r.out, want),
                  "%s/%s: splitc_selftest P=%d exited %d:\n%s", alg, shm, procs, r.status,
                  r.out);
}
END_TEST

START_TEST(bad_gptr)
{
    const char *alg = self_algs[_i];
    const char *extra[] = {"--bad-gptr", NULL};
    struct tu_output r;
    run_job(&r, selftest_prog, 2, alg, "posix", extra);
    ck_assert_msg(r.status != 0 && strstr(r.out, "bad global pointer from rank 1"),
                  "%s: a put past the end of a part was not caught (exit %d):\n%s", alg,
                  r.status, r.out);
    ck_assert_msg(!strstr(r.out, "verified"), "%s: bad put, yet verified:\n%s", alg, r.out);
}
END_TEST

static const char *const sample_algs[] = {"lockfree", "tas"};

START_TEST(sample_runs)
{
    /* Cases 0..3: P = 2, 4 x lockfree, tas; case 4: P = 4, lockfree, oversampling 1. */
    const char *alg = _i < 4 ? sample_algs[_i % 2] : "lockfree";
    int procs = _i < 4 ? 2 << (_i / 2) : 4;
    const char *extra[] = {"--keys", "4096", "--seed", "7", _i < 4 ? NULL : "--oversample",
                           "1",      NULL};
    struct tu_output r;
    run_job(&r, sample_prog, procs, alg, "posix", extra);
    const char *v = sample_verdict(&r, "4096", alg, "posix", procs);
    ck_assert_msg(r.status == 0 && v && strcmp(v, "verified") == 0,
                  "%s: sample P=%d exited %d, verdict %s:\n%s", alg, procs, r.status,
                  v ? v : "(no app line)", r.out);
}
END_TEST

START_TEST(sample_corrupt)
{
    /* Case 0: shmam, lockfree; case 1: MPI. */
    const char *extra[] = {"--keys", "4096", "--corrupt", NULL};
    const char *mpi[] = {"mpiexec", "-n",   "2",         mpi_sample_prog,
                         "--keys",  "4096", "--corrupt", NULL};
    const char *alg = _i == 0 ? "lockfree" : "mpich";
    struct tu_output r;
    if (_i == 0)
        run_job(&r, sample_prog, 2, alg, "posix", extra);
    else
        tu_run_capture(mpi, NULL, TU_ERR_MERGED, 0, &r);
    const char *v = sample_verdict(&r, "4096", alg, _i == 0 ? "posix" : "-", 2);
    ck_assert_msg(r.status != 0 && v && strcmp(v, "FAILED") == 0,
                  "%s: sample --corrupt exited %d, verdict %s:\n%s", alg, r.status,
                  v ? v : "(no app line)", r.out);
}
END_TEST

START_TEST(sample_batched)
{
    /* Case 0: P = 4 lockfree; case 1: P = 4 tas with the shortest long
     * messages (16 per destination); case 2: --corrupt is caught. */
    const char *alg = _i == 1 ? "tas" : "lockfree";
    const char *keys = _i == 1 ? "65536" : "4096";
    const char *extra[] = {"--keys", keys, "--batched", _i == 2 ? "--corrupt" : NULL, NULL};
    static const char *const short_long[] = {"SHMAM_LONG_MAX=4096", NULL};
    struct tu_output r;
    run_job_env(&r, sample_prog, 4, alg, "posix", extra, _i == 1 ? short_long : NULL);
    const char *v = sample_line(&r, "sample_batched", keys, alg, "posix", 4);
    const char *want = _i == 2 ? "FAILED" : "verified";
    ck_assert_msg((r.status == 0) == (_i != 2) && v && strcmp(v, want) == 0,
                  "%s: sample --batched (case %d) exited %d, verdict %s:\n%s", alg, _i,
                  r.status, v ? v : "(no app line)", r.out);
}
END_TEST

START_TEST(mpi_sample_runs)
{
    const char *argv[] = {"mpiexec", "-n", "2", mpi_sample_prog, "--keys", "4096", NULL};
    struct tu_output r;
    tu_run_capture(argv, NULL, TU_ERR_MERGED, 0, &r);
    const char *v = sample_verdict(&r, "4096", "mpich", "-", 2);
    ck_assert_msg(r.status == 0 && v && strcmp(v, "verified") == 0,
                  "mpich: mpi_sample P=2 exited %d, verdict %s:\n%s", r.status,
                  v ? v : "(no app line)", r.out);
}
END_TEST

static Suite *splitc_suite(void)
{
    Suite *s = suite_create("splitc");
    TCase *tc = tcase_create("splitc");
    tcase_set_timeout(tc, 70);
    tcase_add_loop_test(tc, selftest, 0, 8);
    tcase_add_loop_test(tc, bad_gptr, 0, 2);
    tcase_add_loop_test(tc, sample_runs, 0, 5);
    tcase_add_loop_test(tc, sample_corrupt, 0, 2);
    tcase_add_loop_test(tc, sample_batched, 0, 3);
    tcase_add_test(tc, mpi_sample_runs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    find_programs();
    tu_run_init("sc");
    return tu_run_suite(splitc_suite(), "check_splitc");
}
