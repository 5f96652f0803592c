/*
 * check_loggp.c - the LogGP section's LogGOPSim export is a command line
 * LogGOPSim's option parser takes, and the report's LogGOPSim-compatible
 * model reproduces the measured round trip with it.
 *
 * The report's checker (scripts/report/loggp.py check ROWS) prints, per impl
 * of the rows, "check IMPL RATIO MODEL_US MEASURED_US LogGOPSim -f X.bin -L ..
 * -o .. -g .. -G .. -O .. -S ..": the model's 1-byte round trip (a GOAL
 * ping-pong simulated by scripts/report/loggopsim.py with that line's
 * options) over the measured PRTT(1,0,1).  This suite reads the line as the
 * simulator's parser (gengetopt's, for its "int" options) does: each option
 * once, its argument one whole integer (strtol, base 0, nothing after it),
 * within int; and, as the simulator needs, none negative (its clock is
 * unsigned) and S above 0 (S = 0 makes every message a rendezvous).  The
 * ratio must be within 10 % of 1, for a shared-memory impl and for MPICH:
 * on synthetic rows that follow LogGP (one with o_s + o_r above RTT/2, where
 * L must be clamped) and on the rows of one tiny run of bench/loggp and
 * bench/mpi_loggp (the model against that same run's round trip: no figure
 * of speed is judged).  And the benchmarks' round estimator
 * (bench/common/loggp.c, linked in) leaves out, says and counts a round
 * that is more than LG_OFF_FACTOR off the others.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/loggp.h"
#include "testutil.h"

#define RUN_TIMEOUT_S 180
#define MODEL_TOL 0.10 /* the model's round trip within a tenth of the measured one */

static char launcher[PATH_MAX];
static struct tu_output out; /* a program's output */

/* What the checker said of one impl. */
struct verdict {
    char impl[64];
    double ratio;
    long opt[6]; /* L o g G O S */
};
static const char opt_names[] = "LogGOS";

/* One argument of an "int" option as gengetopt parses it: 1 and *v if it is
 * one whole integer within int. */
static int int_option(const char *a, long *v)
{
    char *end;
    errno = 0;
    *v = strtol(a, &end, 0);
    return *a && *end == '\0' && errno == 0 && *v >= INT_MIN && *v <= INT_MAX;
}

/* The LogGOPSim command line cmd ("LogGOPSim -f F -L n ..."): every option
 * of opt_names once with an integer LogGOPSim takes, and -f once; fails the
 * test naming what otherwise. */
static void parse_command(const char *cmd, struct verdict *v, const char *what)
{
    char buf[512], *save, *tok;
    int seen[6] = {0}, file = 0;
    snprintf(buf, sizeof buf, "%s", cmd);
    tok = strtok_r(buf, " ", &save);
    ck_assert_msg(tok && strcmp(tok, "LogGOPSim") == 0, "%s: '%s' is no LogGOPSim line",
                  what, cmd);
    while ((tok = strtok_r(NULL, " ", &save))) {
        char *arg = strtok_r(NULL, " ", &save);
        ck_assert_msg(tok[0] == '-' && tok[1] && !tok[2] && arg, "%s: '%s': option '%s'",
                      what, cmd, tok);
        if (tok[1] == 'f') {
            file++;
            continue;
        }
        const char *k = strchr(opt_names, tok[1]);
        ck_assert_msg(k, "%s: '%s': unknown option %s", what, cmd, tok);
        int i = (int)(k - opt_names);
        ck_assert_msg(int_option(arg, &v->opt[i]), "%s: '%s': %s %s: invalid numeric value",
                      what, cmd, tok, arg);
        ck_assert_msg(v->opt[i] >= 0, "%s: '%s': %s is negative", what, cmd, tok);
        seen[i]++;
    }
    for (int i = 0; i < 6; i++)
        ck_assert_msg(seen[i] == 1, "%s: '%s': -%c given %d times", what, cmd, opt_names[i],
                      seen[i]);
    ck_assert_msg(file == 1, "%s: '%s': no schedule file (-f)", what, cmd);
    ck_assert_msg(v->opt[5] > 0, "%s: '%s': S is 0", what, cmd);
}

/* Runs the checker on rows (len bytes) into v[] (at most max); their count. */
static int check_rows(const char *rows, size_t len, struct verdict *v, int max,
                      const char *what)
{
    char py[PATH_MAX], tmp[] = "/tmp/check_loggp.XXXXXX";
    ck_assert_msg(tu_program(py, sizeof py, "../scripts/report/loggp.py"),
                  "scripts/report/loggp.py is not beside the build directory");
    int fd = mkstemp(tmp);
    ck_assert_msg(fd >= 0 && write(fd, rows, len) == (ssize_t)len, "%s: %s", tmp,
                  strerror(errno));
    close(fd);
    const char *argv[] = {"/usr/bin/python3", py, "check", tmp, NULL};
    tu_run_capture(argv, NULL, TU_ERR_APART, 60, &out);
    unlink(tmp);
    ck_assert_msg(out.status == 0, "%s: loggp.py check: status %d\n%s", what, out.status,
                  out.err);
    int n = 0;
    for (char *save, *line = strtok_r(out.out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        int at = 0;
        double model, measured;
        ck_assert_msg(n < max, "%s: more impls than %d", what, max);
        ck_assert_msg(sscanf(line, "check %63s %lf %lf %lf %n", v[n].impl, &v[n].ratio,
                             &model, &measured, &at) == 4 &&
                          at > 0,
                      "%s: checker printed '%s'", what, line);
        parse_command(line + at, &v[n], what);
        n++;
    }
    return n;
}

/* v[0..n-1] has impl, and its ratio is within MODEL_TOL of 1. */
static void within(const struct verdict *v, int n, const char *impl, const char *what)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].impl, impl) == 0) {
            ck_assert_msg(fabs(v[i].ratio - 1) <= MODEL_TOL,
                          "%s: %s: the model's round trip is %.3f x the measured one", what,
                          impl, v[i].ratio);
            return;
        }
    ck_abort_msg("%s: no export for %s", what, impl);
}

/* Rows of an impl whose figures follow LogGP (µs): L, o_s, o_r, g(0) and G
 * per byte, both ways s bytes; limits as the bench prints them. */
static size_t synthetic(char *b, size_t n, const char *bench, const char *impl, double L,
                        double os, double orr, double g0, double G, int shm)
{
    static const long sizes[] = {0, 1, 2, 4, 8, 64, 512, 4096, 8192, 8193, 65536};
    size_t k = 0;
#define ROW(m, v, u)                                                                       \
    k += (size_t)snprintf(b + k, n - k, "%s,%s,-,2,1,100,%s,%.6f,%s,%.6f-%.6f\n", bench,   \
                          impl, m, (double)(v), u, (double)(v), (double)(v))
    ROW("prtt_n", 8, "msgs");
    if (shm) {
        ROW("limit_bulk", 8192, "bytes");
        ROW("limit_long", 1048576, "bytes");
    }
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double s = (double)sizes[i], o1 = os + s * G / 2, o2 = orr + s * G;
        double rtt = 2 * (o1 + o2 + L + s * G / 4), g = g0 + s * G;
        const double f[] = {
            rtt,   rtt / 2 + o1 + o2, rtt + 7 * g, rtt + 7 * (rtt + o1), g, o1, o1, o2,
            o2 / 2};
        const char *m[] = {"rtt", "rtt0",    "prttn", "prttd",  "g",
                           "os",  "os_prtt", "or",    "or_poll"};
        for (int j = 0; j < 9; j++) {
            char name[32];
            snprintf(name, sizeof name, "%s_%ld", m[j], sizes[i]);
            ROW(name, f[j], "us");
        }
    }
#undef ROW
    return k;
}

/* Synthetic rows: shared memory with o_s + o_r above RTT/2 (L clamped to
 * 0), shared memory with a positive L, and MPICH with no limit known. */
START_TEST(test_loggopsim_synthetic)
{
    static char rows[64 * 1024];
    struct verdict v[8];
    const char *what = "synthetic LogGP rows";
    size_t k = synthetic(rows, sizeof rows, "loggp", "lockfree", -0.01, 0.08, 0.08, 0.11,
                         0.00004, 1);
    k += synthetic(rows + k, sizeof rows - k, "loggp", "ticket", 0.02, 0.09, 0.07, 0.14,
                   0.00005, 1);
    k += synthetic(rows + k, sizeof rows - k, "mpi_loggp", "mpich", 0.015, 0.09, 0.09, 0.12,
                   0.00011, 0);
    int n = check_rows(rows, k, v, 8, what);
    ck_assert_msg(n == 3, "%s: %d exports, not 3", what, n);
    within(v, n, "lockfree", what);
    within(v, n, "ticket", what);
    within(v, n, "mpich", what);
    ck_assert_msg(v[0].opt[0] == 0,
                  "%s: lockfree's L (negative by its figures) is %ld, not 0", what,
                  v[0].opt[0]);
    ck_assert_msg(v[0].opt[5] == 1048576, "%s: lockfree's S is %ld, not long_max", what,
                  v[0].opt[5]);
}
END_TEST

/* One tiny run of loggp (lockfree) and of mpi_loggp, their rows together
 * through the checker: each model against its own run's round trip. */
START_TEST(test_loggopsim_measured)
{
    static char rows[2 * TU_OUT_MAX];
    struct verdict v[8];
    char prog[PATH_MAX], mprog[PATH_MAX];
    const char *what = "loggp and mpi_loggp, --quick --max-size 4096";
    ck_assert_msg(tu_program(prog, sizeof prog, "bench/loggp"), "loggp is not built");
    ck_assert_msg(tu_program(mprog, sizeof mprog, "bench/mpi_loggp"),
                  "mpi_loggp is not built");
    const char *argv[] = {launcher,   "-n",     "2",          "--bind",  "--timeout", "150",
                          prog,       "--algs", "lockfree",   "--quick", "--iters",   "600",
                          "--rounds", "3",      "--max-size", "4096",    NULL};
    tu_run_capture(argv, NULL, TU_ERR_APART, RUN_TIMEOUT_S, &out);
    ck_assert_msg(out.status == 0, "%s: loggp: status %d\n%s", what, out.status, out.err);
    size_t k = out.len;
    memcpy(rows, out.out, k);
    const char *margv[] = {"mpiexec", "-n",       "2", mprog,        "--quick", "--iters",
                           "600",     "--rounds", "3", "--max-size", "4096",    NULL};
    const char *env[] = {tu_env_no_leak_check(), NULL};
    tu_run_capture(margv, env, TU_ERR_APART, RUN_TIMEOUT_S, &out);
    ck_assert_msg(out.status == 0, "%s: mpi_loggp: status %d\n%s", what, out.status,
                  out.err);
    memcpy(rows + k, out.out, out.len);
    k += out.len;
    int n = check_rows(rows, k, v, 8, what);
    ck_assert_msg(n == 2, "%s: %d exports, not 2", what, n);
    within(v, n, "lockfree", what);
    within(v, n, "mpich", what);
}
END_TEST

/* Five rounds of one size, figures as lg_drop_rounds reads them. */
static double rounds_fig[5][LG_NFIG];

static void fill_rounds(void)
{
    for (int k = 0; k < 5; k++)
        for (int j = 0; j < LG_NFIG; j++)
            rounds_fig[k][j] = 1.0 + 0.01 * k + j;
}

/* The benchmarks' estimator (bench/common/loggp.c): a round with a PRTT more
 * than LG_OFF_FACTOR off the rounds' median is left out of every figure of
 * its size, said in a comment line and counted; the median of the rest is
 * the row; with no majority of rounds left, none is left out. */
START_TEST(test_round_off_left_out)
{
    char said[4096] = "";
    FILE *f = fmemopen(said, sizeof said, "w");
    unsigned char keep[5];
    fill_rounds();
    rounds_fig[3][LG_PD] *= 5; /* round 3 preempted in PRTT(n, d, s) */
    memset(keep, 1, sizeof keep);
    int n = lg_drop_rounds(f, "lockfree", 64, rounds_fig[0], 5, LG_NFIG, keep);
    fflush(f);
    ck_assert_msg(n == 1 && !keep[3] && keep[0] && keep[1] && keep[2] && keep[4],
                  "a round 5x off: %d left out (keep %d%d%d%d%d)", n, keep[0], keep[1],
                  keep[2], keep[3], keep[4]);
    ck_assert_msg(strstr(said, "# loggp: lockfree, 64 B: round 3 left out") == said,
                  "not said in a comment: '%s'", said);
    struct bm_stat g = lg_of_rounds(&rounds_fig[0][LG_G], 5, LG_NFIG, keep);
    ck_assert_msg(g.n == 4 && fabs(g.hi - (1.04 + LG_G)) < 1e-9 &&
                      fabs(g.lo - (1.0 + LG_G)) < 1e-9,
                  "the row stands on %d rounds, %g .. %g", g.n, g.lo, g.hi);
    /* 1.5x off is within the factor: nothing left out */
    fill_rounds();
    rounds_fig[1][LG_RTT] *= 1.5;
    memset(keep, 1, sizeof keep);
    ck_assert_msg(lg_drop_rounds(f, "lockfree", 64, rounds_fig[0], 5, LG_NFIG, keep) == 0,
                  "a round 1.5x off was left out");
    /* three of five rounds off, each in another PRTT: no majority, none out */
    fill_rounds();
    rounds_fig[0][LG_RTT] *= 5, rounds_fig[1][LG_PN] *= 5, rounds_fig[2][LG_RTT0] /= 5;
    memset(keep, 1, sizeof keep);
    ck_assert_msg(lg_drop_rounds(f, "lockfree", 64, rounds_fig[0], 5, LG_NFIG, keep) == 0 &&
                      keep[0] && keep[1] && keep[2],
                  "rounds left out with no majority of the rest");
    fclose(f);
}
END_TEST

static Suite *loggp_suite(void)
{
    Suite *s = suite_create("loggp");
    TCase *tc = tcase_create("loggopsim");
    tcase_set_timeout(tc, 2 * RUN_TIMEOUT_S + 60);
    tcase_add_test(tc, test_loggopsim_synthetic);
    tcase_add_test(tc, test_loggopsim_measured);
    suite_add_tcase(s, tc);
    TCase *rc = tcase_create("rounds");
    tcase_add_test(rc, test_round_off_left_out);
    suite_add_tcase(s, rc);
    return s;
}

int main(void)
{
    tu_program(launcher, sizeof launcher, "bin/shmamrun");
    tu_run_init("lg");
    return tu_run_suite(loggp_suite(), "check_loggp");
}
