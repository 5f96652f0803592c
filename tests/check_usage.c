/*
 * check_usage.c - every program answers --help with its usage on stdout and
 * exit 0, and a bad option with its usage on stderr and exit 2.
 *
 * For each program of the build (the launcher and shmamstat, the benchmarks,
 * the applications and their MPICH versions, clumps over libshmam-mpi), run
 * directly, without shmamrun or mpiexec: `--help` must exit 0 having printed
 * "usage" on stdout and nothing on stderr (it is answered before am_init or
 * MPI_Init, so it needs no job);
 * `--no-such-option` must exit 2 having printed "usage" on stderr, the same
 * usage text as --help, and nothing on stdout.
 *
 * The programs are found next to this binary: B/bin/X, B/bench/X and B/apps/X
 * for the build directory B, named as the Makefile names them.  An MPICH
 * program that is not built (no mpicc) is skipped with a message; any other
 * missing program fails.  Each run is killed after RUN_TIMEOUT_S seconds.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

#define RUN_TIMEOUT_S 30

/* Every program, as B/<rel>; mpi: built with mpicc, may be missing. */
static const struct {
    const char *rel;
    int mpi;
} programs[] = {
    {"bin/shmamrun", 0},
    {"bin/shmamstat", 0},
    {"bench/rtt", 0},
    {"bench/logp", 0},
    {"bench/bw", 0},
    {"bench/stress", 0},
    {"bench/demo_many", 0},
    {"bench/lockbench", 0},
    {"bench/heapbench", 0},
    {"bench/spscbench", 0},
    {"bench/pollcost", 0},
    {"bench/mpi_pingpong", 1},
    {"bench/mpi_bw", 1},
    {"bench/mpi_stress", 1},
    {"bench/clumps", 1},
    {"apps/con", 0},
    {"apps/fft", 0},
    {"apps/sample", 0},
    {"apps/splitc_selftest", 0},
    {"apps/mpi_con", 1},
    {"apps/mpi_fft", 1},
    {"apps/mpi_sample", 1},
    {"apps/mpi_repro_onesided", 1},
};
#define N_PROGRAMS ((int)(sizeof programs / sizeof programs[0]))

static struct tu_output help, bad; /* static: large; each test runs in its own process */

/* Runs `prog opt` into o, stderr apart, without leak checking (MPICH's own
 * allocations in a sanitizer build). */
static void run(const char *prog, const char *opt, struct tu_output *o)
{
    const char *argv[] = {prog, opt, NULL};
    const char *env[] = {tu_env_no_leak_check(), NULL};
    tu_run_capture(argv, env, TU_ERR_APART, RUN_TIMEOUT_S, o);
}

START_TEST(test_usage)
{
    char prog[PATH_MAX];
    const char *rel = programs[_i].rel;
    if (!tu_program(prog, sizeof prog, rel)) {
        ck_assert_msg(programs[_i].mpi, "%s: not built (make programs)", rel);
        printf("check_usage: SKIP: %s is not built (no mpicc?)\n", rel);
        fflush(stdout);
        return;
    }

    run(prog, "--help", &help);
    ck_assert_msg(help.status == 0, "%s --help: exit status %d, want 0; stderr: %s", rel,
                  help.status, help.err);
    ck_assert_msg(strstr(help.out, "usage"), "%s --help: no usage on stdout: \"%s\"", rel,
                  help.out);
    ck_assert_msg(help.err_len == 0, "%s --help: printed on stderr: %s", rel, help.err);

    run(prog, "--no-such-option", &bad);
    ck_assert_msg(bad.status == 2,
                  "%s --no-such-option: exit status %d, want 2; stderr: %s", rel,
                  bad.status, bad.err);
    ck_assert_msg(strstr(bad.err, "usage"),
                  "%s --no-such-option: no usage on stderr: \"%s\"", rel, bad.err);
    ck_assert_msg(strstr(bad.err, help.out),
                  "%s --no-such-option: stderr \"%s\" lacks the usage of --help \"%s\"",
                  rel, bad.err, help.out);
    ck_assert_msg(bad.len == 0, "%s --no-such-option: printed on stdout: %s", rel, bad.out);
}
END_TEST

static Suite *usage_suite(void)
{
    Suite *s = suite_create("usage");
    TCase *tc = tcase_create("usage");
    tcase_set_timeout(tc, 2 * RUN_TIMEOUT_S + 10);
    tcase_add_loop_test(tc, test_usage, 0, N_PROGRAMS);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("us");
    return tu_run_suite(usage_suite(), "check_usage");
}
