/*
 * check_fft.c - the 3-D FFT application end to end, at N = 16: under shmamrun
 * for P = 1, 2, 4 with the lockfree and tas claims, a plane wave (forward
 * transform against the known spike) and a round trip (--inverse-check), each
 * must exit 0 and print its schema line with "verified"; the same under
 * mpiexec -n 2 for the MPI port.  That a failure would be seen is tested too:
 * the hidden --corrupt option perturbs one element before the last check, and
 * the run must print FAILED and exit nonzero.  A size P does not divide is
 * refused.
 *
 * The programs are found next to this binary: B/bin/shmamrun, B/apps/fft and
 * B/apps/mpi_fft for the build directory B; mpiexec from PATH.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char launcher[PATH_MAX], fft[PATH_MAX], mpi_fft[PATH_MAX];

static const char *const algs[] = {"lockfree", "tas"};
static const int procs[] = {1, 2, 4};

static void find_programs(void)
{
    tu_program(launcher, sizeof launcher, "bin/shmamrun");
    tu_program(fft, sizeof fft, "apps/fft");
    tu_program(mpi_fft, sizeof mpi_fft, "apps/mpi_fft");
}

/* fft under shmamrun with claim `alg` on p ranks, N = 16, with up to three
 * extra options (the first NULL ends them). */
static void run_fft(const char *alg, int p, const char *opt1, const char *opt2,
                    const char *opt3, struct tu_output *r)
{
    char np[16];

    snprintf(np, sizeof np, "%d", p);
    const char *argv[] = {launcher, "--timeout", "60", "-n", np,   "-a", alg,
                          fft,      "--n",       "16", opt1, opt2, opt3, NULL};
    tu_run_capture(argv, NULL, TU_ERR_MERGED, 0, r);
}

static void assert_verified(const struct tu_output *r, const char *alg, int p,
                            const char *what)
{
    char line[128];

    snprintf(line, sizeof line, "app,fft,16cubed,%s,", alg);
    ck_assert_msg(r->status == 0, "%s, P=%d, %s: exit %d, not 0:\n%s", alg, p, what,
                  r->status, r->out);
    ck_assert_msg(strstr(r->out, line) && strstr(r->out, ",verified\n"),
                  "%s, P=%d, %s: no \"%s...,verified\" line:\n%s", alg, p, what, line,
                  r->out);
    ck_assert_msg(!strstr(r->out, "FAILED"), "%s, P=%d, %s: FAILED in:\n%s", alg, p, what,
                  r->out);
}

static void assert_failed(const struct tu_output *r, const char *alg, int p,
                          const char *what)
{
    ck_assert_msg(r->status != 0, "%s, P=%d, %s: corrupted run exited 0:\n%s", alg, p, what,
                  r->out);
    ck_assert_msg(strstr(r->out, ",FAILED\n") && !strstr(r->out, ",verified"),
                  "%s, P=%d, %s: corrupted run not reported FAILED:\n%s", alg, p, what,
                  r->out);
}

/* Loop index i -> algorithm i % 2, P = procs[i / 2 % 3]. */
START_TEST(test_planewave)
{
    const char *alg = algs[_i % 2];
    int p = procs[_i / 2 % 3];
    struct tu_output r;

    run_fft(alg, p, "--input", "planewave", NULL, &r);
    assert_verified(&r, alg, p, "plane wave");
}
END_TEST

START_TEST(test_inverse)
{
    const char *alg = algs[_i % 2];
    int p = procs[_i / 2 % 3];
    struct tu_output r;

    run_fft(alg, p, "--inverse-check", NULL, NULL, &r);
    assert_verified(&r, alg, p, "inverse check");
}
END_TEST

/* Loop index i -> algorithm i % 2; P = 2; plane wave (i < 2) or round trip. */
START_TEST(test_corrupt_detected)
{
    const char *alg = algs[_i % 2];
    struct tu_output r;

    if (_i < 2)
        run_fft(alg, 2, "--input", "planewave", "--corrupt", &r);
    else
        run_fft(alg, 2, "--inverse-check", "--corrupt", NULL, &r);
    assert_failed(&r, alg, 2, _i < 2 ? "plane wave --corrupt" : "inverse check --corrupt");
}
END_TEST

START_TEST(test_refuses_uneven)
{
    struct tu_output r;

    run_fft("lockfree", 3, NULL, NULL, NULL, &r);
    ck_assert_msg(r.status != 0 && strstr(r.out, "not a multiple of P = 3"),
                  "lockfree, P=3, N=16: not refused (exit %d):\n%s", r.status, r.out);
}
END_TEST

/* mpi_fft under mpiexec -n 2, without leak checking (tu_env_no_leak_check). */
static void run_mpi(const char *opt1, const char *opt2, struct tu_output *r)
{
    const char *argv[] = {"mpiexec", "-n", "2", mpi_fft, "--n", "16", opt1, opt2, NULL};
    const char *env[] = {tu_env_no_leak_check(), NULL};

    tu_run_capture(argv, env, TU_ERR_MERGED, 0, r);
}

START_TEST(test_mpi)
{
    struct tu_output r;

    run_mpi(NULL, NULL, &r);
    ck_assert_msg(r.status == 0 && strstr(r.out, "app,fft,16cubed,mpich,-,2,") &&
                      strstr(r.out, ",verified\n"),
                  "mpich, P=2, plane wave: exit %d:\n%s", r.status, r.out);
    run_mpi("--inverse-check", NULL, &r);
    ck_assert_msg(r.status == 0 && strstr(r.out, ",verified\n"),
                  "mpich, P=2, inverse check: exit %d:\n%s", r.status, r.out);
    run_mpi("--inverse-check", "--corrupt", &r);
    assert_failed(&r, "mpich", 2, "inverse check --corrupt");
}
END_TEST

static Suite *fft_suite(void)
{
    Suite *s = suite_create("fft");
    TCase *tc = tcase_create("shmam");
    tcase_set_timeout(tc, 90);
    tcase_add_loop_test(tc, test_planewave, 0, 6);
    tcase_add_loop_test(tc, test_inverse, 0, 6);
    tcase_add_loop_test(tc, test_corrupt_detected, 0, 4);
    tcase_add_test(tc, test_refuses_uneven);
    suite_add_tcase(s, tc);
    TCase *mpi = tcase_create("mpi");
    tcase_set_timeout(mpi, 90);
    tcase_add_test(mpi, test_mpi);
    suite_add_tcase(s, mpi);
    return s;
}

int main(void)
{
    find_programs();
    tu_run_init("ff");
    return tu_run_suite(fft_suite(), "check_fft");
}
