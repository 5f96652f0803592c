/*
 * check_con.c - the CON application (apps/con.c) end to end, at tiny sizes, under
 * the launcher with --timeout 60.
 *
 *   runs             comm (3-D, S = 6) and comp (2-D, S = 24) with P = 1, 2, 4
 *                    ranks, claim algorithms lockfree and ttas: exit status 0,
 *                    a final line of the common schema ending in "verified";
 *                    also once with --verify sample (the mode large runs use)
 *   corrupt          --corrupt (one label raised by one before verification):
 *                    full verification (a sequential union-find) names exactly
 *                    that node, label and the right one; sampled verification
 *                    names it twice, once by the per-node checks (labels across
 *                    an edge differ) and once by the breadth-first search of
 *                    the sampled nodes' components; both give "FAILED" and a
 *                    nonzero exit
 *   independent_of_p the same global lattice (24 x 6 x 6, and 96 x 24) split
 *                    over 1, 2 and 4 ranks (--length 24/P, 96/P) has the same
 *                    component count and label sum
 *   mpich            the MPICH port (B/apps/mpi_con under mpiexec -n 2): verified,
 *                    the same invariants as the shmam version, --corrupt seen
 *
 * The launcher and the programs are found next to this test binary:
 * B/bin/shmamrun, B/apps/con and B/apps/mpi_con for the build directory B,
 * whatever the current directory; mpiexec and timeout from PATH.  The
 * claim algorithm is named in every failure message.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char launcher[PATH_MAX], con[PATH_MAX], mpi_con[PATH_MAX];
static const char *const algs[] = {"lockfree", "ttas"};
#define NALGS 2

static void find_programs(void)
{
    tu_program(launcher, sizeof launcher, "bin/shmamrun");
    tu_program(con, sizeof con, "apps/con");
    tu_program(mpi_con, sizeof mpi_con, "apps/mpi_con");
}

/* Runs `shmamrun -n procs --timeout 60 -a alg con args...` (args NULL-terminated),
 * or with alg "mpich" `timeout 60 mpiexec -n procs mpi_con args...`, without
 * leak checking (tu_env_no_leak_check) for either. */
static void run_con(struct tu_output *r, const char *alg, int procs,
                    const char *const *args)
{
    char n[16];
    const char *shm[32] = {launcher, "-n", n, "--timeout", "60", "-a", alg, con};
    const char *mpi[32] = {"timeout", "-k", "5", "60", "mpiexec", "-n", n, mpi_con};
    const char **argv = strcmp(alg, "mpich") ? shm : mpi;
    const char *env[] = {tu_env_no_leak_check(), NULL};
    int argc = 8;

    snprintf(n, sizeof n, "%d", procs);
    for (; *args && argc < 31; args++)
        argv[argc++] = *args;
    argv[argc] = NULL;
    tu_run_capture(argv, env, TU_ERR_MERGED, 0, r);
}

/* The final "app,con,..." line's fields after "app,con,": input, impl, shm,
 * procs and verdict; 0 if there is no such line. */
static int app_line(const struct tu_output *r, char *input, char *impl, int *procs,
                    char *verdict)
{
    const char *p = strstr(r->out, "app,con,");
    char shm[16];
    double sec;

    return p && sscanf(p, "app,con,%31[^,],%15[^,],%15[^,],%d,%lf,%15[a-zA-Z]", input, impl,
                       shm, procs, &sec, verdict) == 6;
}

struct run_case {
    const char *input, *side;
    int procs;
    const char *verify;
};

static const struct run_case run_cases[] = {
    {"comm", "6", 1, "full"},   {"comm", "6", 2, "full"},   {"comm", "6", 4, "full"},
    {"comp", "24", 1, "full"},  {"comp", "24", 2, "full"},  {"comp", "24", 4, "full"},
    {"comm", "6", 4, "sample"}, {"comp", "24", 4, "sample"}};
#define NRUNS (int)(sizeof run_cases / sizeof run_cases[0])

START_TEST(runs)
{
    const struct run_case *c = &run_cases[_i % NRUNS];
    const char *alg = algs[_i / NRUNS];
    const char *args[] = {"--input",  c->input,  "--side", c->side,
                          "--verify", c->verify, NULL};
    char input[32], impl[16], verdict[16], want[32];
    int procs;
    struct tu_output r;

    run_con(&r, alg, c->procs, args);
    ck_assert_msg(r.status == 0, "%s: con %s P=%d (%s) exited %d:\n%s", alg, c->input,
                  c->procs, c->verify, r.status, r.out);
    ck_assert_msg(app_line(&r, input, impl, &procs, verdict), "%s: no app line:\n%s", alg,
                  r.out);
    snprintf(want, sizeof want, "%s-%s", c->input, c->side);
    ck_assert_msg(!strcmp(verdict, "verified") && !strcmp(impl, alg) &&
                      !strcmp(input, want) && procs == c->procs,
                  "%s: con %s P=%d: wrong app line:\n%s", alg, c->input, c->procs, r.out);
}
END_TEST

/* How many lines of out report a wrong label as "node N: label L, <how> W"
 * (con's verification, lattice.c), `how` being e.g. "want" or "neighbour has";
 * the first one's N, L and W go to *node, *label and *want. */
static int reports(const char *out, const char *how, unsigned long long *node,
                   unsigned *label, unsigned long long *want)
{
    char fmt[128];
    int n = 0;

    snprintf(fmt, sizeof fmt, "node %%llu: label %%u, %s %%llu", how);
    for (const char *p = out; (p = strstr(p, "node ")) != NULL; p++) {
        unsigned long long g, w;
        unsigned l;
        if (sscanf(p, fmt, &g, &l, &w) == 3 && n++ == 0)
            *node = g, *label = l, *want = w;
    }
    return n;
}

/* Whether some report of out is "node N: label L, <how> W". */
static int reported(const char *out, const char *how, unsigned long long node,
                    unsigned label, unsigned long long want)
{
    char line[160];

    snprintf(line, sizeof line, "node %llu: label %u, %s %llu\n", node, label, how, want);
    return strstr(out, line) != NULL;
}

/* Two lattices whose corrupted node (lattice_corrupt: the last rank's first
 * node with an inner edge) is among the nodes sampled verification searches
 * from: comp-4 has 32 nodes at P = 2, of which the 128 samples miss few; on
 * comm-6 (432 nodes) it is so for the default seed. */
START_TEST(corrupt)
{
    static const char *const inputs[][2] = {{"comm", "6"}, {"comp", "4"}};
    const char *alg = algs[_i % NALGS];
    const char *const *in = inputs[_i / NALGS];
    const char *full[] = {"--input",  in[0],  "--side",    in[1],
                          "--verify", "full", "--corrupt", NULL};
    const char *sample[] = {"--input",  in[0],    "--side",    in[1],
                            "--verify", "sample", "--corrupt", NULL};
    char input[32], impl[16], verdict[16];
    unsigned long long node = 0, want = 0;
    unsigned label = 0;
    int procs;
    static struct tu_output r; /* too big for the stack */

    /* Full: exactly the one label changed, found and named. */
    run_con(&r, alg, 2, full);
    ck_assert_msg(r.status != 0 && app_line(&r, input, impl, &procs, verdict) &&
                      !strcmp(verdict, "FAILED"),
                  "%s: con %s --corrupt (full): exit %d, no FAILED:\n%s", alg, in[0],
                  r.status, r.out);
    int n = reports(r.out, "want", &node, &label, &want);
    ck_assert_msg(
        n == 1 && label == want + 1,
        "%s: con %s --corrupt (full): %d wrong labels reported (first: node %llu, "
        "label %u for %llu); want the one raised by one:\n%s",
        alg, in[0], n, node, label, want, r.out);

    /* Sampled: the same node, by the per-node checks and by the search. */
    run_con(&r, alg, 2, sample);
    ck_assert_msg(r.status != 0 && app_line(&r, input, impl, &procs, verdict) &&
                      !strcmp(verdict, "FAILED"),
                  "%s: con %s --corrupt (sample): exit %d, no FAILED:\n%s", alg, in[0],
                  r.status, r.out);
    ck_assert_msg(reported(r.out, "neighbour has", node, label, want),
                  "%s: con %s --corrupt (sample): the per-node checks did not report node "
                  "%llu (label %u, its neighbour %llu):\n%s",
                  alg, in[0], node, label, want, r.out);
    ck_assert_msg(reported(r.out, "its component's smallest id is", node, label, want),
                  "%s: con %s --corrupt (sample): the breadth-first search did not report "
                  "node %llu (label %u, its component's smallest id %llu; is it among the "
                  "samples?):\n%s",
                  alg, in[0], node, label, want, r.out);
}
END_TEST

/* Components and label sum of `input` with global first extent `total` split
 * over `procs` ranks. */
static void invariants(const char *alg, const char *input, const char *side, int total,
                       int procs, unsigned long long *comp, unsigned long long *sum)
{
    char len[16];
    const char *args[] = {"--input", input, "--side", side, "--length", len, NULL};
    struct tu_output r;

    snprintf(len, sizeof len, "%d", total / procs);
    run_con(&r, alg, procs, args);
    ck_assert_msg(r.status == 0, "%s: con %s P=%d exited %d:\n%s", alg, input, procs,
                  r.status, r.out);
    const char *p = strstr(r.out, "con: components ");
    ck_assert_msg(p && sscanf(p, "con: components %llu, label sum %llu", comp, sum) == 2,
                  "%s: con %s P=%d: no invariants:\n%s", alg, input, procs, r.out);
}

START_TEST(independent_of_p)
{
    const char *alg = algs[_i % NALGS], *input = _i / NALGS ? "comp" : "comm";
    const char *side = _i / NALGS ? "24" : "6";
    int total = _i / NALGS ? 96 : 24, nodes = _i / NALGS ? 96 * 24 : 24 * 6 * 6;
    unsigned long long comp1, sum1, comp, sum;

    invariants(alg, input, side, total, 1, &comp1, &sum1);
    ck_assert_msg(comp1 > 1 && comp1 < (unsigned long long)nodes,
                  "%s: con %s: %llu components is not an interesting graph", alg, input,
                  comp1);
    for (int procs = 2; procs <= 4; procs *= 2) {
        invariants(alg, input, side, total, procs, &comp, &sum);
        ck_assert_msg(comp == comp1 && sum == sum1,
                      "%s: con %s: P=%d gives %llu components, label sum %llu; P=1 gives "
                      "%llu, %llu",
                      alg, input, procs, comp, sum, comp1, sum1);
    }
}
END_TEST

/* The MPICH port: verified, the same invariants as the shmam version on the
 * same lattice, and --corrupt seen. */
START_TEST(mpich)
{
    const char *input = _i ? "comp" : "comm", *side = _i ? "24" : "6";
    const char *args[] = {"--input", input, "--side", side, NULL};
    const char *bad[] = {"--input", input, "--side", side, "--corrupt", NULL};
    unsigned long long comp, sum, mcomp, msum;
    char in[32], impl[16], verdict[16];
    int procs;
    struct tu_output r;

    run_con(&r, "mpich", 2, args);
    ck_assert_msg(r.status == 0 && app_line(&r, in, impl, &procs, verdict) &&
                      !strcmp(impl, "mpich") && !strcmp(verdict, "verified"),
                  "mpich: con %s P=2: exit %d:\n%s", input, r.status, r.out);
    const char *p = strstr(r.out, "con: components ");
    ck_assert_msg(p &&
                      sscanf(p, "con: components %llu, label sum %llu", &mcomp, &msum) == 2,
                  "mpich: con %s P=2: no invariants:\n%s", input, r.out);
    invariants("lockfree", input, side, 2 * atoi(side), 2, &comp, &sum);
    ck_assert_msg(mcomp == comp && msum == sum,
                  "mpich: con %s P=2: %llu components, label sum %llu; shmam: %llu, %llu",
                  input, mcomp, msum, comp, sum);
    run_con(&r, "mpich", 2, bad);
    ck_assert_msg(r.status != 0 && app_line(&r, in, impl, &procs, verdict) &&
                      !strcmp(verdict, "FAILED"),
                  "mpich: con %s P=2 --corrupt: exit %d:\n%s", input, r.status, r.out);
}
END_TEST

static Suite *con_suite(void)
{
    Suite *s = suite_create("con");
    TCase *tc = tcase_create("con");

    tcase_set_timeout(tc, 90);
    tcase_add_loop_test(tc, runs, 0, NRUNS * NALGS);
    tcase_add_loop_test(tc, corrupt, 0, NALGS * 2);
    tcase_add_loop_test(tc, independent_of_p, 0, NALGS * 2);
    suite_add_tcase(s, tc);
    TCase *mpi = tcase_create("mpi");
    tcase_set_timeout(mpi, 90);
    tcase_add_loop_test(mpi, mpich, 0, 2);
    suite_add_tcase(s, mpi);
    return s;
}

int main(void)
{
    find_programs();
    tu_run_init("cn");
    return tu_run_suite(con_suite(), "check_con");
}
