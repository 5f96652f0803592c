/*
 * check_gasnet.c - the GASNet-EX layer (compat/gasnet/, libgasnet-shmam)
 * running GASNet-EX programs under shmamrun -n 2 and -n 3: the programs
 * check every byte and argument themselves (compat/gasnet/tests/gex_check.c
 * says what each mode covers) and print one "ok" line per rank.
 *
 *   am_every_kind_and_count  Short/Medium/Long requests and replies of 0..16
 *                      arguments, payloads at the bulk/heap switch, at
 *                      gex_AM_Max*, at the segment's end, zero bytes;
 *                      negotiated payload (Prepare, Commit, _v2, Cancel)
 *   am_to_self         the same, and RMA, in a job of one rank: every AM and
 *                      put to itself
 *   immediate_full_queue  GEX_FLAG_IMMEDIATE into a target that does not
 *                      poll is refused once its queue is full (every kind),
 *                      and what went arrives once, in order; so are
 *                      IMMEDIATE replies into a requester that does not poll
 *   rma_every_alignment  put/get (blocking, NB, NBI, Val) at alignments
 *                      0..15 into a target that does not poll; seen by the
 *                      target after a barrier
 *   barriers_and_broadcast  60 rounds of the three barriers ordering puts;
 *                      broadcasts of 0 .. 3 MiB from every root
 *   exit_ends_job      gasnet_exit(N) on one rank ends the job with N (0, 7)
 *   testam_runs        the testam-like benchmark, every kind and size, its
 *                      counts checked
 * Each runs with 2 and 3 ranks (the loop's index), and leaves no segment.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

static int nprocs_of(int i)
{
    return 2 + i % 2;
}

/* Run shmamrun -n np PROG args under SHMAM_JOB_PREFIX=g; its status. */
static int run(const char *prog, int np, const char *const *args, struct tu_output *o)
{
    char launcher[PATH_MAX], path[PATH_MAX], n[8];
    tu_program(launcher, sizeof launcher, "bin/shmamrun");
    tu_program(path, sizeof path, prog);
    snprintf(n, sizeof n, "%d", np);
    const char *argv[12] = {launcher, "-n", n, "--timeout", "200", path};
    int k = 6;
    for (int i = 0; args[i] && k < 11; i++)
        argv[k++] = args[i];
    const char *env[] = {"SHMAM_JOB_PREFIX=g", NULL};
    tu_run_capture(argv, env, TU_ERR_MERGED, 0, o);
    char names[40], first[160];
    snprintf(names, sizeof names, "g%d-", (int)o->pid);
    int left = tu_leftovers(names, 0, first, sizeof first) +
               tu_leftovers(names, 1, first, sizeof first);
    ck_assert_msg(left == 0, "%s: the job left %s", prog, first);
    return o->signal ? -1 : o->status;
}

static int count(const char *out, const char *needle)
{
    int n = 0;
    for (const char *p = out; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* gex_check MODE under np ranks: status 0, every rank's "MODE ok" line,
 * no FAIL. */
static void check_mode(const char *mode, int np)
{
    static struct tu_output o;
    const char *args[] = {mode, NULL};
    int st = run("gasnet/gex_check", np, args, &o);
    char ok[32];
    snprintf(ok, sizeof ok, ": %s ok (", mode);
    ck_assert_msg(st == 0 && count(o.out, ok) == np && !strstr(o.out, "FAIL"),
                  "gex_check %s -n %d: status %d, %d of %d ranks ok:\n%s", mode, np, st,
                  count(o.out, ok), np, o.out);
}

START_TEST(am_every_kind_and_count)
{
    check_mode("am", nprocs_of(_i));
}
END_TEST

START_TEST(am_to_self)
{
    check_mode("am", 1);
    check_mode("rma", 1);
}
END_TEST

START_TEST(immediate_full_queue)
{
    check_mode("imm", nprocs_of(_i));
}
END_TEST

START_TEST(rma_every_alignment)
{
    check_mode("rma", nprocs_of(_i));
}
END_TEST

START_TEST(barriers_and_broadcast)
{
    check_mode("barrier", nprocs_of(_i));
}
END_TEST

START_TEST(exit_ends_job)
{
    static struct tu_output o;
    int np = nprocs_of(_i), code = _i < 2 ? 0 : 7;
    char c[8];
    snprintf(c, sizeof c, "%d", code);
    const char *args[] = {"exit", c, NULL};
    int st = run("gasnet/gex_check", np, args, &o);
    ck_assert_msg(st == code && strstr(o.out, ": exit "),
                  "gasnet_exit(%d) under -n %d: the job ended with %d:\n%s", code, np, st,
                  o.out);
}
END_TEST

START_TEST(testam_runs)
{
    static struct tu_output o;
    int np = nprocs_of(_i);
    const char *args[] = {"--quick", NULL};
    int st = run("gasnet/gex_testam", np, args, &o);
    ck_assert_msg(st == 0 && strstr(o.out, "testam done") && !strstr(o.out, "FAIL"),
                  "gex_testam -n %d: status %d:\n%s", np, st, o.out);
}
END_TEST

static Suite *gasnet_suite(void)
{
    Suite *s = suite_create("gasnet");
    TCase *tc = tcase_create("gasnet");
    tcase_set_timeout(tc, 240);
    tcase_add_loop_test(tc, am_every_kind_and_count, 0, 2);
    tcase_add_test(tc, am_to_self);
    tcase_add_loop_test(tc, immediate_full_queue, 0, 2);
    tcase_add_loop_test(tc, rma_every_alignment, 0, 2);
    tcase_add_loop_test(tc, barriers_and_broadcast, 0, 2);
    tcase_add_loop_test(tc, exit_ends_job, 0, 4);
    tcase_add_loop_test(tc, testam_runs, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("gx");
    return tu_run_suite(gasnet_suite(), "check_gasnet");
}
