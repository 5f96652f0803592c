/*
 * check_bench.c - every benchmark program runs at a tiny size, exits 0, and
 * prints well-formed rows of the common schema
 *
 *   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 *
 * For each program (rtt, logp, loggp and its self-check, bw, stress with 1 and 3
 * writers, demo_many, lockbench, pollcost, mpi_pingpong, mpi_bw, mpi_stress,
 * mpi_loggp, rpcbench; and scripts/locks_programs.py, the locks inside
 * Debian's programs), with two claim algorithms where it
 * takes one (and a per-sender queue kind beside them in rtt and stress), the
 * test checks that every line is a header, a comment or a well-formed row (the
 * schema's one parser says so: scripts/report/rows.py check, whose split rows
 * it then reads); that bench, impl, procs and pinned are what the run was; that
 * iters is positive and, where the program was told a count, that count; that
 * the metric is one the program is known to print (and that the ones the
 * report needs are all there); that the value lies within its spread.
 * The programs themselves exit nonzero on a wrong count, which fails the test.
 *
 * The programs are found next to this binary: B/bench/X and B/bin/shmamrun for
 * the build directory B.  A program that is not built fails its test (make
 * check builds them all).  MPICH programs run under `mpiexec`.  Every printed
 * ratio must be the ratio of the printed figures: a median of per-round
 * quotients lies between the lowest round of one over the highest of the
 * other and the reverse, widened by the printed decimals.
 *
 * No speed and no physical relation between figures is judged here (a busy
 * machine moves them, and the tests assert behaviour only): LogP's relations
 * (g >= o_s, rtt >= o_s + o_r, the sweep's slope and intercept) and the
 * ladder's rise are [[consistency]] checks of scripts/report/paper.toml,
 * judged in the report and by `make bench-check`.  Each run is stopped by the
 * launcher after RUN_LIMIT_S seconds and killed after RUN_TIMEOUT_S: limits
 * for a hung program, many times a run's length on a quiet machine.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "shmam.h"
#include "testutil.h"

#define RUN_LIMIT_S "150" /* shmamrun --timeout */
#define RUN_TIMEOUT_S 180
#define MAX_ROWS 1024

static const char *const algs[] = {"lockfree", "ticket", "fastforward"};

/* One row as rows.py check --lohi prints it: the schema's fields, the
 * spread's two ends as the last two. */
#define FIELDS 11
struct row {
    char f[FIELDS][64];
};

/* What a run must have printed. */
struct expect {
    const char *bench;
    const char *impl;     /* space-separated impls; NULL: any (lockbench) */
    int procs;            /* 0: any */
    int pinned;           /* -1: any */
    long iters;           /* 0: any positive; else for the metrics in iters_of */
    const char *iters_of; /* space-separated metrics whose iters must equal `iters`;
                             NULL: every metric */
    const char *known;    /* space-separated metric names; "X#Y" matches X<digits>Y */
    const char *needed;   /* space-separated metrics that must appear */
};

static char launcher[PATH_MAX]; /* B/bin/shmamrun */

/* B/bench/name into prog (PATH_MAX bytes); fails the test if it is not built
 * (make check builds every program: a missing one is a broken build, never a
 * pass). */
static int built(char *prog, const char *name)
{
    char rel[64];

    snprintf(rel, sizeof rel, "bench/%s", name);
    ck_assert_msg(tu_program(prog, PATH_MAX, rel), "%s is not built (make programs)", name);
    return 1;
}

/* Does metric m match pattern p ("X#Y": X, one or more digits, Y)? */
static int metric_matches(const char *m, const char *p, size_t plen)
{
    const char *hash = memchr(p, '#', plen);
    if (!hash)
        return strlen(m) == plen && strncmp(m, p, plen) == 0;
    size_t pre = (size_t)(hash - p), post = plen - pre - 1;
    size_t len = strlen(m);
    if (len < pre + post + 1 || strncmp(m, p, pre) != 0 ||
        strncmp(m + len - post, hash + 1, post) != 0)
        return 0;
    for (size_t i = pre; i < len - post; i++)
        if (m[i] < '0' || m[i] > '9')
            return 0;
    return 1;
}

/* Is m in the space-separated list (of patterns)? */
static int in_list(const char *m, const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        if (n && metric_matches(m, p, n))
            return 1;
        p += n + (p[n] == ' ');
    }
    return 0;
}

/* Split one line into exactly FIELDS fields; 0 if it has another count. */
static int split_row(const char *line, struct row *r)
{
    int n = 0;
    const char *p = line;
    for (;;) {
        size_t len = strcspn(p, ",\n");
        if (n == FIELDS || len >= sizeof r->f[0])
            return 0;
        memcpy(r->f[n], p, len);
        r->f[n++][len] = '\0';
        if (p[len] != ',')
            return n == FIELDS;
        p += len + 1;
    }
}

/* The median of rounds lies between the lowest and the highest. */
static void check_spread(const struct row *r, double v, const char *what)
{
    double lo = strtod(r->f[9], NULL), hi = strtod(r->f[10], NULL);
    double eps = 1e-9 + 1e-3 * fabs(v); /* the printed decimals */
    ck_assert_msg(lo <= v + eps && v <= hi + eps,
                  "%s: %s: value %s outside its spread %s-%s", what, r->f[6], r->f[7],
                  r->f[9], r->f[10]);
}

/* Check one data row against e; `what` names the run in messages. */
static void check_row(const struct row *r, const struct expect *e, const char *what)
{
    ck_assert_msg(strcmp(r->f[0], e->bench) == 0, "%s: bench '%s', not '%s'", what, r->f[0],
                  e->bench);
    ck_assert_msg(!e->impl || in_list(r->f[1], e->impl), "%s: impl '%s', not of '%s'", what,
                  r->f[1], e->impl);
    ck_assert_msg(!e->procs || atoi(r->f[3]) == e->procs, "%s: procs '%s', not %d", what,
                  r->f[3], e->procs);
    ck_assert_msg(atoi(r->f[4]) <= 1 && (e->pinned < 0 || atoi(r->f[4]) == e->pinned),
                  "%s: pinned '%s', not %d", what, r->f[4], e->pinned);
    ck_assert_msg(atol(r->f[5]) > 0, "%s: iters '%s'", what, r->f[5]);
    if (e->iters && (!e->iters_of || in_list(r->f[6], e->iters_of)))
        ck_assert_msg(atol(r->f[5]) == e->iters, "%s: %s: iters %s, not the %ld asked for",
                      what, r->f[6], r->f[5], e->iters);
    ck_assert_msg(in_list(r->f[6], e->known), "%s: unknown metric '%s'", what, r->f[6]);
    check_spread(r, strtod(r->f[7], NULL), what);
}

static struct tu_output parsed; /* rows.py's split rows of a run */

/* r's output through the schema's one parser, scripts/report/rows.py check
 * --lohi, into parsed: fails the test on any line that is not a header, a
 * comment or a well-formed row. */
static void parse_rows(const struct tu_output *r, const char *what)
{
    char rows_py[PATH_MAX], tmp[] = "/tmp/check_bench.XXXXXX";
    ck_assert_msg(tu_program(rows_py, sizeof rows_py, "../scripts/report/rows.py"),
                  "scripts/report/rows.py is not beside the build directory");
    int fd = mkstemp(tmp);
    ck_assert_msg(fd >= 0 && write(fd, r->out, r->len) == (ssize_t)r->len, "%s: %s", tmp,
                  strerror(errno));
    close(fd);
    const char *argv[] = {"/usr/bin/python3", rows_py, "check", "--lohi", tmp, NULL};
    tu_run_capture(argv, NULL, TU_ERR_APART, 60, &parsed);
    unlink(tmp);
    ck_assert_msg(parsed.status == 0, "%s: rows.py check:\n%s", what, parsed.err);
}

/* parsed's rows into rows[] (up to MAX_ROWS), each checked against e, or
 * against alt if it is of alt's bench (alt may be NULL); returns how many. */
static int split_parsed(const struct expect *e, const struct expect *alt, const char *what,
                        struct row *rows)
{
    int n = 0;
    for (const char *line = parsed.out; *line;) {
        size_t len = strcspn(line, "\n");
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1),
                 line);
        line += len + (line[len] == '\n');
        ck_assert_msg(n < MAX_ROWS, "%s: more than %d rows", what, MAX_ROWS);
        ck_assert_msg(split_row(buf, &rows[n]), "%s: rows.py printed '%s'", what, buf);
        check_row(&rows[n], alt && strcmp(rows[n].f[0], alt->bench) == 0 ? alt : e, what);
        n++;
    }
    return n;
}

/* Check every row of r's output; returns the number of data rows, and puts
 * them in rows[] (up to MAX_ROWS). */
static int check_output(const struct tu_output *r, const struct expect *e, const char *what,
                        struct row *rows)
{
    ck_assert_msg(r->status == 0, "%s: exit status %d\nstderr:\n%s", what, r->status,
                  r->err);
    parse_rows(r, what);
    int n = split_parsed(e, NULL, what, rows);
    ck_assert_msg(n > 0, "%s: no rows\nstderr:\n%s", what, r->err);
    return n;
}

/* Every metric of e->needed appears among the rows. */
static void check_needed(const struct row *rows, int n, const struct expect *e,
                         const char *what)
{
    char need[1024];
    ck_assert_msg(strlen(e->needed) < sizeof need, "%s: needed list too long", what);
    snprintf(need, sizeof need, "%s", e->needed);
    for (char *save, *m = strtok_r(need, " ", &save); m; m = strtok_r(NULL, " ", &save)) {
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            found = strcmp(rows[i].f[6], m) == 0;
        ck_assert_msg(found, "%s: no row of metric %s", what, m);
    }
}

/* The row of impl and metric m, or NULL. */
static const struct row *row_of(const struct row *rows, int n, const char *impl,
                                const char *m)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].f[1], impl) == 0 && strcmp(rows[i].f[6], m) == 0)
            return &rows[i];
    return NULL;
}

/* Half a unit of the last decimal printed in s ("0.123": 0.0005). */
static double half_ulp(const char *s)
{
    const char *dot = strchr(s, '.');
    return dot ? 0.5 * pow(10, -(double)strspn(dot + 1, "0123456789")) : 0.5;
}

/* Its value and spread (rows.py: lo = hi = value for an empty spread), the
 * spread widened by what the printing may have rounded off. */
static double fig(const struct row *r, double *lo, double *hi)
{
    double u =
        half_ulp(r->f[10]); /* both ends are printed alike (the value, if no spread) */
    *lo = strtod(r->f[9], NULL) - u, *hi = strtod(r->f[10], NULL) + u;
    return strtod(r->f[7], NULL);
}

static struct tu_output out; /* static: large; each test runs in its own process */
static struct row rows[MAX_ROWS];

/* Run argv (stderr apart, killed after RUN_TIMEOUT_S seconds), check its output
 * against e, return the number of rows. */
static int run_and_check(const char *const *argv, const struct expect *e, const char *what)
{
    tu_run_capture(argv, NULL, TU_ERR_APART, RUN_TIMEOUT_S, &out);
    int n = check_output(&out, e, what, rows);
    check_needed(rows, n, e, what);
    return n;
}

/* rtt of two claim algorithms and a per-sender queue kind in one job: the raw
 * ping-pong once, each one's round trip and ratio to it, and the in-run ratios
 * of ticket and fastforward to lockfree; each per-round ratio lies within the
 * bounds the figures' spreads allow. */
START_TEST(test_rtt)
{
    char prog[PATH_MAX];
    const char *what = "rtt --algs lockfree,ticket,fastforward";
    if (!built(prog, "rtt"))
        return;
    const char *argv[] = {launcher,   "-n",        "2",
                          "--bind",   "--timeout", RUN_LIMIT_S,
                          prog,       "--algs",    "lockfree,ticket,fastforward",
                          "--iters",  "2000",      "--warmup",
                          "100",      "--rounds",  "4",
                          "--header", NULL};
    struct expect e = {.bench = "rtt",
                       .impl = "raw lockfree ticket fastforward",
                       .procs = 2,
                       .pinned = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0,
                       .iters = 2000,
                       .iters_of = NULL,
                       .known = "am_rtt raw_rtt raw_freed_rtt raw_freed_vs_raw am_vs_raw "
                                "am_rtt_vs_lockfree",
                       .needed = "am_rtt raw_rtt raw_freed_rtt raw_freed_vs_raw am_vs_raw "
                                 "am_rtt_vs_lockfree"};
    int n = run_and_check(argv, &e, what);
    ck_assert_msg(n == 11, "%s: %d rows, not 11", what, n);
    const struct row *raw = row_of(rows, n, "raw", "raw_rtt"),
                     *freed = row_of(rows, n, "raw", "raw_freed_rtt"),
                     *fq = row_of(rows, n, "raw", "raw_freed_vs_raw");
    ck_assert_msg(raw && freed && fq, "%s: no raw, raw_freed or raw_freed_vs_raw row",
                  what);
    double rlo, rhi, alo, ahi, qlo, qhi;
    fig(raw, &rlo, &rhi);
    fig(freed, &alo, &ahi);
    double fx = fig(fq, &qlo, &qhi);
    ck_assert_msg(
        rlo > 0 && fx >= 0.99 * alo / rhi && fx <= 1.01 * ahi / rlo,
        "%s: raw_freed_vs_raw %.3f outside [%.3f, %.3f] that raw_freed_rtt %s and "
        "raw_rtt %s allow",
        what, fx, alo / rhi, ahi / rlo, freed->f[9], raw->f[9]);
    for (int k = 0; k < 3; k++) {
        const char *alg = algs[k];
        const struct row *am = row_of(rows, n, alg, "am_rtt"),
                         *q = row_of(rows, n, alg, "am_vs_raw");
        ck_assert_msg(am && q, "%s: %s lacks am_rtt or am_vs_raw", what, alg);
        fig(am, &alo, &ahi);
        double x = fig(q, &qlo, &qhi);
        ck_assert_msg(rlo > 0 && x >= 0.99 * alo / rhi && x <= 1.01 * ahi / rlo,
                      "%s: %s: am_vs_raw %.3f outside [%.3f, %.3f] that am_rtt %s and "
                      "raw_rtt %s allow",
                      what, alg, x, alo / rhi, ahi / rlo, am->f[9], raw->f[9]);
    }
    ck_assert_msg(row_of(rows, n, "lockfree", "am_rtt_vs_lockfree") == NULL,
                  "%s: lockfree compared with itself", what);
}
END_TEST

/* rtt --ladder: the raw_paced floor, each echo kind with its ratio to raw and
 * the cost of its turnaround alone, and am_self per algorithm; every message
 * of the echo kinds was checked (a torn or misnumbered one exits nonzero).
 * The ratios lie within what their figures' spreads allow.  (That more
 * turnaround steps cost more is a consistency check of paper.toml, not a
 * test.) */
START_TEST(test_rtt_ladder)
{
    char prog[PATH_MAX];
    const char *what = "rtt --algs onecas --ladder 0,64";
    if (!built(prog, "rtt"))
        return;
    const char *argv[] = {launcher,    "-n",      "2",        "--bind",   "--timeout",
                          RUN_LIMIT_S, prog,      "--algs",   "onecas",   "--ladder",
                          "0,64",      "--iters", "2000",     "--warmup", "100",
                          "--rounds",  "4",       "--header", NULL};
    struct expect e = {.bench = "rtt",
                       .impl = "raw onecas",
                       .procs = 2,
                       .pinned = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0,
                       .iters = 2000,
                       .iters_of = NULL,
                       .known = "am_rtt raw_rtt raw_freed_rtt raw_freed_vs_raw am_vs_raw "
                                "raw_paced_rtt raw_paced_vs_raw echo_rtt_# echo_vs_raw_# "
                                "turn_ns_# am_self_rtt",
                       .needed = "raw_paced_rtt raw_paced_vs_raw echo_rtt_0 echo_vs_raw_0 "
                                 "turn_ns_0 echo_rtt_64 echo_vs_raw_64 turn_ns_64 "
                                 "am_self_rtt"};
    int n = run_and_check(argv, &e, what);
    ck_assert_msg(n == 14, "%s: %d rows, not 14", what, n);
    const struct row *raw = row_of(rows, n, "raw", "raw_rtt");
    double rlo, rhi, lo, hi, qlo, qhi;
    ck_assert_msg(raw, "%s: no raw_rtt row", what);
    fig(raw, &rlo, &rhi);
    const char *pairs[][2] = {{"raw_paced_rtt", "raw_paced_vs_raw"},
                              {"echo_rtt_0", "echo_vs_raw_0"},
                              {"echo_rtt_64", "echo_vs_raw_64"}};
    for (int k = 0; k < 3; k++) {
        const struct row *t = row_of(rows, n, "raw", pairs[k][0]),
                         *q = row_of(rows, n, "raw", pairs[k][1]);
        fig(t, &lo, &hi);
        double x = fig(q, &qlo, &qhi);
        ck_assert_msg(rlo > 0 && lo > 0 && x >= 0.99 * lo / rhi && x <= 1.01 * hi / rlo,
                      "%s: %s %.3f outside [%.3f, %.3f] that %s %s and raw_rtt %s allow",
                      what, pairs[k][1], x, lo / rhi, hi / rlo, pairs[k][0], t->f[9],
                      raw->f[9]);
    }
    ck_assert_msg(fig(row_of(rows, n, "onecas", "am_self_rtt"), &lo, &hi) > 0,
                  "%s: am_self_rtt not positive", what);
}
END_TEST

static const char *const logp_known =
    "os or g g_oneway rtt L os_plus_or os_plus_or_sweep or_sweep L_sweep sweep_slope "
    "sweep_t_# bulk_t_# bulk_G bulk_peak_MBps bulk_invG_MBps memcpy_MBps_# memcpy_mem_MBps "
    "copy_fresh_MBps_# bulk_vs_memcpy g_raw g_oneway_vs_raw os_vs_lockfree g_vs_lockfree "
    "rtt_vs_lockfree bulk_peak_MBps_vs_lockfree";
static const char *const logp_needed =
    "os or g g_oneway rtt L os_plus_or_sweep or_sweep L_sweep sweep_slope sweep_t_0 "
    "bulk_t_8192 bulk_peak_MBps memcpy_MBps_8192 memcpy_mem_MBps copy_fresh_MBps_8192 "
    "bulk_vs_memcpy g_raw g_oneway_vs_raw os_vs_lockfree g_vs_lockfree rtt_vs_lockfree "
    "bulk_peak_MBps_vs_lockfree";

/* Is the per-round ratio `ratio` of impl within what the spreads of a (of
 * impl_a) over b (of impl_b) allow? */
static void ratio_within(int n, const char *impl, const char *ratio, const char *ia,
                         const char *a, const char *ib, const char *b, const char *what)
{
    double alo, ahi, blo, bhi, qlo, qhi;
    const struct row *ra = row_of(rows, n, ia, a), *rb = row_of(rows, n, ib, b),
                     *rq = row_of(rows, n, impl, ratio);
    ck_assert_msg(ra && rb && rq, "%s: %s: %s, %s or %s missing", what, impl, a, b, ratio);
    fig(ra, &alo, &ahi);
    fig(rb, &blo, &bhi);
    double q = fig(rq, &qlo, &qhi);
    ck_assert_msg(blo > 0 && q >= 0.99 * alo / bhi && q <= 1.01 * ahi / blo,
                  "%s: %s: %s %.3f outside [%.3f, %.3f] that %s %s and %s %s allow", what,
                  impl, ratio, q, alo / bhi, ahi / blo, a, ra->f[9], b, rb->f[9]);
}

/* logp of lockfree and ticket in one job: every figure of each, and every
 * ratio lies within what the spreads of the figures it divides allow.
 * (LogP's relations between the figures are consistency checks of
 * paper.toml, judged by make bench-check and the report, not here.) */
START_TEST(test_logp)
{
    char prog[PATH_MAX];
    const char *what = "logp --quick --algs lockfree,ticket";
    if (!built(prog, "logp"))
        return;
    const char *argv[] = {launcher,          "-n",        "2",        "--bind",
                          "--timeout",       RUN_LIMIT_S, prog,       "--algs",
                          "lockfree,ticket", "--quick",   "--iters",  "3000",
                          "--rounds",        "3",         "--header", NULL};
    struct expect e = {.bench = "logp",
                       .impl = "lockfree ticket",
                       .procs = 2,
                       .pinned = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0,
                       .iters = 3000,
                       .iters_of = "rtt",
                       .known = logp_known,
                       .needed = logp_needed};
    int n = run_and_check(argv, &e, what);
    for (int k = 0; k < 2; k++) {
        ratio_within(n, algs[k], "bulk_vs_memcpy", algs[k], "bulk_peak_MBps", algs[k],
                     "memcpy_mem_MBps", what);
        ratio_within(n, algs[k], "g_oneway_vs_raw", algs[k], "g_oneway", algs[k], "g_raw",
                     what);
    }
    ratio_within(n, "ticket", "rtt_vs_lockfree", "ticket", "rtt", "lockfree", "rtt", what);
    ratio_within(n, "ticket", "os_vs_lockfree", "ticket", "os", "lockfree", "os", what);
    ratio_within(n, "ticket", "g_vs_lockfree", "ticket", "g", "lockfree", "g", what);
    ratio_within(n, "ticket", "bulk_peak_MBps_vs_lockfree", "ticket", "bulk_peak_MBps",
                 "lockfree", "bulk_peak_MBps", what);
    ck_assert_msg(row_of(rows, n, "lockfree", "rtt_vs_lockfree") == NULL,
                  "%s: lockfree compared with itself", what);
}
END_TEST

/* What loggp and mpi_loggp print per size (S: bytes), per quantile of the
 * round trip and of o_s, and once. */
static const char *const loggp_known =
    "limit_bulk limit_long limit_eager prtt_n sig_size rtt_# rtt0_# prttn_# prttd_# g_# "
    "os_# "
    "os_prtt_# or_# or_poll_# rounds_dropped or_late sig_t_# sig_os_# sig_or_# sig_wait_# "
    "rtt_p# rtt_max os_p# os_max";
static const char *const loggp_quantiles[] = {"p01", "p05", "p10", "p25",  "p50", "p75",
                                              "p90", "p95", "p99", "p999", "max"};

/* The quantiles of one impl's round trip or o_s (what: "rtt" or "os") rise
 * with the fraction, and each lies within its spread over the rounds. */
static void quantiles_rise(int n, const char *impl, const char *what, const char *run)
{
    double prev = -INFINITY, lo, hi;
    for (size_t q = 0; q < sizeof loggp_quantiles / sizeof loggp_quantiles[0]; q++) {
        char m[32];
        snprintf(m, sizeof m, "%s_%s", what, loggp_quantiles[q]);
        const struct row *r = row_of(rows, n, impl, m);
        ck_assert_msg(r != NULL, "%s: %s: %s missing", run, impl, m);
        double v = fig(r, &lo, &hi);
        ck_assert_msg(v >= prev, "%s: %s: %s %.4f below the quantile before it (%.4f)", run,
                      impl, m, v, prev);
        prev = v;
    }
}

/* The rows of a size: rtt_S and the others, iters the messages a phase sent
 * of S bytes in all rounds (per up to 8 KB, per x 8192 / S above). */
static void size_iters(int n, const char *impl, long size, long want, const char *run)
{
    char m[32];
    snprintf(m, sizeof m, "rtt_%ld", size);
    const struct row *r = row_of(rows, n, impl, m);
    ck_assert_msg(r != NULL, "%s: %s: %s missing", run, impl, m);
    ck_assert_msg(atol(r->f[5]) == want, "%s: %s: %s stands on %s messages, not %ld", run,
                  impl, m, r->f[5], want);
}

/* loggp of lockfree and fastforward up to 64 KB: every size's figures, on
 * both sides of the bulk limit it prints, each standing on the messages it
 * was told; the quantiles rise; the limits are the runtime's. */
START_TEST(test_loggp)
{
    char prog[PATH_MAX];
    const char *what = "loggp --quick --algs lockfree,fastforward --max-size 65536";
    if (!built(prog, "loggp"))
        return;
    const char *argv[] = {launcher,  "-n",         "2",
                          "--bind",  "--timeout",  RUN_LIMIT_S,
                          prog,      "--algs",     "lockfree,fastforward",
                          "--quick", "--max-size", "65536",
                          "--iters", "1200",       "--rounds",
                          "3",       "--header",   NULL};
    struct expect e = {.bench = "loggp",
                       .impl = "lockfree fastforward",
                       .procs = 2,
                       .pinned = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0,
                       .iters = 1200,
                       .iters_of = "rtt_0 g_0 os_0 rtt_8192 rtt_p50 os_p50 sig_t_0",
                       .known = loggp_known,
                       .needed = "limit_bulk limit_long prtt_n sig_size rtt_0 g_0 os_0 "
                                 "os_prtt_0 rtt_8192 rtt_8193 g_8193 os_65536 rtt_p50 "
                                 "rtt_p999 rtt_max os_p99 os_max sig_t_0 sig_wait_4000"};
    int n = run_and_check(argv, &e, what);
    double lo, hi;
    for (int k = 0; k < 2; k++) {
        const char *a = k ? "fastforward" : "lockfree";
        quantiles_rise(n, a, "rtt", what);
        quantiles_rise(n, a, "os", what);
        size_iters(n, a, 8193, 3 * (400 * 8192 / 8193), what);
        size_iters(n, a, 65536, 3 * (400 * 8192 / 65536), what);
        ck_assert_msg(fig(row_of(rows, n, a, "limit_bulk"), &lo, &hi) == AM_MAX_BULK,
                      "%s: %s: limit_bulk is not AM_MAX_BULK", what, a);
        ck_assert_msg(fig(row_of(rows, n, a, "limit_long"), &lo, &hi) == 1048576,
                      "%s: %s: limit_long is not the default long_max", what, a);
    }
}
END_TEST

/* loggp --selfcheck on lockfree: every row of the sizes it checks (one or
 * two per protocol), how much each injected wait took and how much each
 * figure grew. */
START_TEST(test_loggp_selfcheck)
{
    char prog[PATH_MAX];
    const char *what = "loggp --selfcheck --quick --algs lockfree --max-size 65536";
    if (!built(prog, "loggp"))
        return;
    const char *argv[] = {launcher,    "-n",         "2",      "--bind",   "--timeout",
                          RUN_LIMIT_S, prog,         "--algs", "lockfree", "--selfcheck",
                          "--quick",   "--max-size", "65536",  "--header", NULL};
    struct expect e = {.bench = "loggp_selfcheck",
                       .impl = "lockfree",
                       .procs = 2,
                       .pinned = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0,
                       .iters = 1500,
                       .iters_of = "os_grow_0 or_grow_0 send_spent_64",
                       .known = "os_grow_# or_grow_# rtt_grow_# send_spent_# recv_spent_# "
                                "send_injected recv_injected",
                       .needed = "os_grow_0 or_grow_0 rtt_grow_0 send_spent_0 recv_spent_0 "
                                 "os_grow_64 os_grow_8192 or_grow_8193 send_spent_65536 "
                                 "send_injected recv_injected"};
    run_and_check(argv, &e, what);
}
END_TEST

/* mpi_loggp up to 64 KB: the same rows as loggp's (no sweep), the same
 * counts, rising quantiles. */
START_TEST(test_mpi_loggp)
{
    char prog[PATH_MAX];
    const char *what = "mpi_loggp --quick --max-size 65536";
    if (!built(prog, "mpi_loggp"))
        return;
    const char *argv[] = {"mpiexec",    "-n",       "2",       prog,   "--quick",
                          "--max-size", "65536",    "--iters", "1200", "--rounds",
                          "3",          "--header", NULL};
    struct expect e = {.bench = "mpi_loggp",
                       .impl = "mpich",
                       .procs = 2,
                       .pinned = -1,
                       .iters = 1200,
                       .iters_of = "rtt_0 g_0 os_0 rtt_8192 rtt_p50 os_p50",
                       .known = loggp_known,
                       .needed = "prtt_n sig_size rtt_0 g_0 os_0 os_prtt_0 or_0 rtt_8192 "
                                 "rtt_65536 rtt_p50 rtt_max os_max"};
    int n = run_and_check(argv, &e, what);
    quantiles_rise(n, "mpich", "rtt", what);
    quantiles_rise(n, "mpich", "os", what);
    size_iters(n, "mpich", 65536, 3 * (400 * 8192 / 65536), what);
}
END_TEST

/* Messages per stream that bw and mpi_bw send of n bytes with --bytes B
 * --max-msgs M: B / n, at least 64 and at most M. */
static long bw_count(long n, long bytes, long max_msgs)
{
    long c = bytes / n < max_msgs ? bytes / n : max_msgs;
    return c > 64 ? c : 64;
}

/* The size a bw or mpi_bw metric ends with ("..._8192"). */
static long size_of(const char *metric)
{
    const char *u = strrchr(metric, '_');
    return u ? atol(u + 1) : 0;
}

#define BW_SIZES "64,8192,65536"
#define BW_BYTES 1048576L
#define BW_MAX 2000L
#define BW_ROUNDS 3L

/* bw at three sizes, 64 B and 8 KB (bulk) and 64 KB (above bulk): every
 * stream's row and ratio is there (bulk up to 8 KB, long and long_at at every
 * size) with the messages of all rounds as iters, each ratio lies within what
 * its figures' spreads allow; the program itself has checked that rank 1 took
 * every message and byte rank 0 sent, in order, and verified each warm-up
 * message by a checksum it computed.  A second run spoils a byte of one
 * message per verified stream (--corrupt 5) and must fail: the checksums are
 * really compared. */
START_TEST(test_bw)
{
    char prog[PATH_MAX], bytes[24], max[24], rounds[8];
    const char *what = "bw --sizes " BW_SIZES;
    if (!built(prog, "bw"))
        return;
    snprintf(bytes, sizeof bytes, "%ld", BW_BYTES);
    snprintf(max, sizeof max, "%ld", BW_MAX);
    snprintf(rounds, sizeof rounds, "%ld", BW_ROUNDS);
    const char *argv[] = {launcher,    "-n",      "2",        "--bind",     "--timeout",
                          RUN_LIMIT_S, "-a",      "lockfree", prog,         "--sizes",
                          BW_SIZES,    "--bytes", bytes,      "--max-msgs", max,
                          "--rounds",  rounds,    "--header", NULL,         NULL,
                          NULL};
    struct expect e = {.bench = "bw",
                       .impl = "raw lockfree",
                       .procs = 2,
                       .pinned = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0,
                       .iters = 0,
                       .iters_of = NULL,
                       .known = "raw_flood_MBps_# raw_copy_MBps_# bw_flood_MBps_# "
                                "bw_copy_MBps_# flood_vs_raw_# copy_vs_raw_# "
                                "long_flood_MBps_# long_copy_MBps_# longat_flood_MBps_# "
                                "longat_copy_MBps_# long_flood_vs_raw_# long_copy_vs_raw_# "
                                "longat_flood_vs_raw_# longat_copy_vs_raw_# "
                                "loan_flood_MBps_# loan_copy_MBps_# loan_flood_vs_raw_# "
                                "loan_copy_vs_raw_# bw_batch_MBps_# batch_vs_raw_#",
                       .needed =
                           "raw_flood_MBps_64 raw_copy_MBps_64 bw_flood_MBps_64 "
                           "bw_copy_MBps_64 flood_vs_raw_64 copy_vs_raw_64 "
                           "raw_flood_MBps_8192 raw_copy_MBps_8192 bw_flood_MBps_8192 "
                           "bw_copy_MBps_8192 flood_vs_raw_8192 copy_vs_raw_8192 "
                           "loan_flood_MBps_8192 loan_copy_vs_raw_64 "
                           "bw_batch_MBps_64 batch_vs_raw_64 bw_batch_MBps_8192 "
                           "raw_flood_MBps_65536 raw_copy_MBps_65536 "
                           "long_copy_MBps_64 longat_copy_MBps_64 "
                           "long_flood_MBps_65536 long_copy_MBps_65536 "
                           "longat_flood_MBps_65536 longat_copy_MBps_65536 "
                           "long_copy_vs_raw_65536 longat_copy_vs_raw_65536"};
    int n = run_and_check(argv, &e, what);
    for (int i = 0; i < n; i++) {
        long z = size_of(rows[i].f[6]);
        ck_assert_msg(z == 64 || z == 8192 || z == 65536, "%s: %s: a size not asked for",
                      what, rows[i].f[6]);
        const char *m = rows[i].f[6];
        ck_assert_msg(z <= 8192 || (strncmp(m, "bw_", 3) && strncmp(m, "flood_", 6) &&
                                    strncmp(m, "copy_", 5) && strncmp(m, "batch_", 6)),
                      "%s: %s: a bulk stream above 8 KB", what, rows[i].f[6]);
        ck_assert_msg(atol(rows[i].f[5]) == bw_count(z, BW_BYTES, BW_MAX) * BW_ROUNDS,
                      "%s: %s: iters %s, not %ld x %ld rounds", what, rows[i].f[6],
                      rows[i].f[5], bw_count(z, BW_BYTES, BW_MAX), BW_ROUNDS);
    }
    ratio_within(n, "lockfree", "flood_vs_raw_8192", "lockfree", "bw_flood_MBps_8192",
                 "raw", "raw_flood_MBps_8192", what);
    ratio_within(n, "lockfree", "copy_vs_raw_64", "lockfree", "bw_copy_MBps_64", "raw",
                 "raw_copy_MBps_64", what);
    ratio_within(n, "lockfree", "batch_vs_raw_64", "lockfree", "bw_batch_MBps_64", "raw",
                 "raw_flood_MBps_64", what);
    ratio_within(n, "lockfree", "longat_copy_vs_raw_65536", "lockfree",
                 "longat_copy_MBps_65536", "raw", "raw_copy_MBps_65536", what);

    argv[17] = "--corrupt", argv[18] = "5";
    tu_run_capture(argv, NULL, TU_ERR_APART, RUN_TIMEOUT_S, &out);
    ck_assert_msg(out.status != 0 && strstr(out.err, "FAILED") &&
                      strstr(out.err, "bad checksums") && !strstr(out.out, "MBps"),
                  "bw --corrupt 5: spoiled messages went unnoticed (exit %d)\nstderr:\n%s",
                  out.status, out.err);
}
END_TEST

/* stress with W writers (W = 1, 3 for _i = 0, 1), lockfree, ticket and
 * fastforward (a per-sender queue kind) in one job, runs of T = 0.05 s: each
 * figure is consistent with the others (rate and time per 10^6 from the same
 * median run; no run shorter than its duration), and ticket's in-run ratio
 * lies within what the two spreads allow. */
START_TEST(test_stress)
{
    char prog[PATH_MAX], what[128], procs[8];
    int w = _i ? 3 : 1;
    if (!built(prog, "stress"))
        return;
    snprintf(what, sizeof what, "stress --seconds 0.05, %d writer(s)", w);
    snprintf(procs, sizeof procs, "%d", w + 1);
    const char *argv[] = {launcher,    "-n",        procs,
                          "--bind",    "--timeout", RUN_LIMIT_S,
                          prog,        "--algs",    "lockfree,ticket,fastforward",
                          "--seconds", "0.05",      "--rounds",
                          "3",         "--header",  NULL};
    struct expect e = {.bench = "stress",
                       .impl = "lockfree ticket fastforward",
                       .procs = w + 1,
                       .pinned = -1,
                       .iters = 0,
                       .iters_of = NULL,
                       .known = "s_per_1e6 msgs_per_s run_seconds msgs_per_poll "
                                "s_per_1e6_vs_lockfree",
                       .needed = "s_per_1e6 msgs_per_s run_seconds msgs_per_poll "
                                 "s_per_1e6_vs_lockfree"};
    int n = run_and_check(argv, &e, what);
    ck_assert_msg(n == 14, "%s: %d rows, not 14", what, n);
    double lo, hi, llo, lhi, tlo, thi, qlo, qhi;
    for (int k = 0; k < 3; k++) {
        const struct row *s1 = row_of(rows, n, algs[k], "s_per_1e6"),
                         *rate = row_of(rows, n, algs[k], "msgs_per_s"),
                         *dur = row_of(rows, n, algs[k], "run_seconds");
        ck_assert_msg(s1 && rate && dur, "%s: %s lacks a row", what, algs[k]);
        double x = fig(s1, &lo, &hi) * fig(rate, &lo, &hi);
        ck_assert_msg(fabs(x - 1e6) < 1e4, "%s: %s: s_per_1e6 x msgs_per_s = %.0f, not 1e6",
                      what, algs[k], x);
        fig(dur, &lo, &hi);
        ck_assert_msg(lo >= 0.9 * 0.05, "%s: %s: a run of %.4f s, shorter than 0.05 s",
                      what, algs[k], lo);
    }
    fig(row_of(rows, n, "lockfree", "s_per_1e6"), &llo, &lhi);
    fig(row_of(rows, n, "ticket", "s_per_1e6"), &tlo, &thi);
    const struct row *q = row_of(rows, n, "ticket", "s_per_1e6_vs_lockfree");
    double r = fig(q, &qlo, &qhi);
    ck_assert_msg(r >= 0.99 * tlo / lhi && r <= 1.01 * thi / llo,
                  "%s: ticket/lockfree %.3f outside [%.3f, %.3f] the spreads allow", what,
                  r, tlo / lhi, thi / llo);
    ck_assert_msg(row_of(rows, n, "lockfree", "s_per_1e6_vs_lockfree") == NULL,
                  "%s: lockfree compared with itself", what);
}
END_TEST

START_TEST(test_demo_many)
{
    char prog[PATH_MAX], what[128];
    const char *alg = algs[_i];
    if (!built(prog, "demo_many"))
        return;
    snprintf(what, sizeof what, "demo_many (%s)", alg);
    const char *argv[] = {launcher, "-n", "3",        "--timeout", RUN_LIMIT_S,
                          "-a",     alg,  prog,       "--msgs",    "1000",
                          "--bulk", "50", "--header", NULL};
    struct expect e = {.bench = "demo_many",
                       .impl = alg,
                       .procs = 3,
                       .pinned = -1,
                       .iters = 1000,
                       .iters_of = "short_seconds short_msgs_per_s",
                       .known = "short_seconds short_msgs_per_s bulk_seconds bulk_MBps",
                       .needed = "short_seconds short_msgs_per_s bulk_seconds bulk_MBps"};
    int n = run_and_check(argv, &e, what);
    ck_assert_msg(n == 4, "%s: %d rows, not 4", what, n);
    for (int i = 0; i < n; i++)
        if (strncmp(rows[i].f[6], "bulk_", 5) == 0)
            ck_assert_msg(atol(rows[i].f[5]) == 50, "%s: %s: iters %s, not 50", what,
                          rows[i].f[6], rows[i].f[5]);
}
END_TEST

/* lockbench: every (lock of am_lock_table, procs) has its four rows, and a
 * fifth (acq_vs_ck) if ck has its algorithm, with one acquisition count. */
START_TEST(test_lockbench)
{
    char prog[PATH_MAX];
    const char *what = "lockbench --quick --procs 1,2";
    if (!built(prog, "lockbench"))
        return;
    const char *argv[] = {prog,        "--quick", "--procs",  "1,2",
                          "--seconds", "0.05",    "--header", NULL};
    struct expect e = {.bench = "lockbench",
                       .impl = NULL,
                       .procs = 0,
                       .pinned = -1,
                       .iters = 0,
                       .iters_of = NULL,
                       .known = "acq_per_s acq_vs_ck fairness_min_over_max fairness_cv "
                                "fairness_jain",
                       .needed = "acq_per_s"};
    int n = run_and_check(argv, &e, what);
    for (int k = 0; am_lock_table[k]; k++)
        for (int p = 1; p <= 2; p++) {
            char ours[64], ck[64];
            int seen = 0;
            long iters = -1;
            snprintf(ours, sizeof ours, "shmam:%s", am_lock_table[k]->name);
            snprintf(ck, sizeof ck, "ck:%s", am_lock_table[k]->name);
            for (int i = 0; i < n; i++) {
                if (strcmp(rows[i].f[1], ours) || atoi(rows[i].f[3]) != p)
                    continue;
                seen++;
                ck_assert_msg(iters < 0 || atol(rows[i].f[5]) == iters,
                              "%s: %s, %d procs: iters differ between its rows", what, ours,
                              p);
                iters = atol(rows[i].f[5]);
            }
            int want = 4 + (row_of(rows, n, ck, "acq_per_s") != NULL); /* acq_vs_ck */
            ck_assert_msg(seen == want, "%s: %s with %d procs: %d rows, not %d", what, ours,
                          p, seen, want);
        }
    for (int i = 0; i < n; i++)
        ck_assert_msg(atoi(rows[i].f[3]) == 1 || atoi(rows[i].f[3]) == 2,
                      "%s: procs %s not asked for", what, rows[i].f[3]);
}
END_TEST

/* lockbench --threads 2 with 1 and 2 processes: every row names the
 * threads in impl (IMPL/t2), and --verbose's per-participant counts (on
 * stderr) are 2 per process and add up to the row's acquisitions, which
 * lockbench itself held against the guarded counter. */
START_TEST(test_lockbench_threads)
{
    char prog[PATH_MAX];
    const char *what = "lockbench --threads 2";
    if (!built(prog, "lockbench"))
        return;
    const char *argv[] = {prog,
                          "--procs",
                          "1,2",
                          "--threads",
                          "2",
                          "--seconds",
                          "0.05",
                          "--rounds",
                          "1",
                          "--locks",
                          "shmam:hapax,shmam:mcs,ck:mcs",
                          "--verbose",
                          "--header",
                          NULL};
    struct expect e = {.bench = "lockbench",
                       .pinned = -1,
                       .known = "acq_per_s acq_vs_ck fairness_min_over_max fairness_cv "
                                "fairness_jain",
                       .needed = "acq_per_s fairness_jain"};
    int n = run_and_check(argv, &e, what), lines = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(rows[i].f[1]);
        ck_assert_msg(len > 3 && strcmp(rows[i].f[1] + len - 3, "/t2") == 0,
                      "%s: impl %s does not name its threads", what, rows[i].f[1]);
    }
    for (char *l = out.err; (l = strstr(l, "lockbench: ")) != NULL; l++) {
        char name[64], impl[80];
        unsigned procs, threads, k = 0;
        unsigned long sum = 0, c;
        int used;
        if (sscanf(l, "lockbench: %63[^,], %u procs x %u threads:%n", name, &procs,
                   &threads, &used) != 3)
            continue;
        for (char *p = l + used; *p && *p != '\n'; k++) {
            char *end;
            c = strtoul(p, &end, 10);
            if (end == p)
                break;
            sum += c;
            p = end;
        }
        snprintf(impl, sizeof impl, "%s/t2", name);
        ck_assert_msg(threads == 2 && k == procs * 2,
                      "%s: %s, %u procs: %u counts for %u threads each", what, name, procs,
                      k, threads);
        const struct row *r = NULL;
        for (int i = 0; i < n && !r; i++)
            if (strcmp(rows[i].f[1], impl) == 0 && (unsigned)atoi(rows[i].f[3]) == procs)
                r = &rows[i];
        ck_assert_msg(r != NULL, "%s: no row of %s with %u procs", what, impl, procs);
        ck_assert_msg(
            atol(r->f[5]) == (long)sum,
            "%s: %s, %u procs: the threads' counts add up to %lu, the row says %s", what,
            name, procs, sum, r->f[5]);
        lines++;
    }
    ck_assert_msg(lines == 6, "%s: %d per-participant count lines, not 6 (3 locks x 2)",
                  what, lines);
}
END_TEST

/* The row of impl and metric m, failing the test if there is none. */
static const struct row *need_row(int n, const char *impl, const char *m, const char *what)
{
    const struct row *r = row_of(rows, n, impl, m);
    ck_assert_msg(r != NULL, "%s: %s: no row %s", what, impl, m);
    return r;
}

/* lockbench --latency --recovery with 2 processes, knobs set and two
 * waiting policies: shmam's queue locks have latency percentiles (of the
 * acquisition and of the critical section) in order
 * and recover from a killed holder (recovers 1, a positive recovery_s),
 * parking too; ck's MCS says it never does (recovers 0, no recovery_s);
 * the knobs and the policy other than the default are named in impl, and
 * only the default policy is set against ck (acq_vs_ck). */
START_TEST(test_lockbench_recovery)
{
    char prog[PATH_MAX];
    const char *what = "lockbench --latency --recovery";
    if (!built(prog, "lockbench"))
        return;
    const char *argv[] = {prog,
                          "--procs",
                          "2",
                          "--seconds",
                          "0.05",
                          "--rounds",
                          "1",
                          "--latency",
                          "--recovery",
                          "--lines",
                          "2",
                          "--locks",
                          "shmam:mcs,shmam:clh,ck:mcs",
                          "--wait",
                          "yield,park",
                          "--header",
                          NULL};
    struct expect e = {.bench = "lockbench",
                       .procs = 2,
                       .pinned = -1,
                       .known = "acq_per_s acq_vs_ck fairness_min_over_max fairness_cv "
                                "fairness_jain latency_p50 latency_p99 latency_p999 cs_p50 "
                                "cs_p99 cs_p999 recovers recovery_s",
                       .needed = "latency_p999 cs_p999 recovers recovery_s"};
    int n = run_and_check(argv, &e, what);
    static const char *const ours[] = {"shmam:mcs/cs4/p16/l2", "shmam:clh/cs4/p16/l2",
                                       "shmam:mcs/park/cs4/p16/l2",
                                       "shmam:clh/park/cs4/p16/l2"};
    for (int k = 0; k < 4; k++) {
        double p50 = atof(need_row(n, ours[k], "latency_p50", what)->f[7]);
        double p999 = atof(need_row(n, ours[k], "latency_p999", what)->f[7]);
        ck_assert_msg(p50 <= p999, "%s: %s: p50 %.0f above p99.9 %.0f", what, ours[k], p50,
                      p999);
        double c50 = atof(need_row(n, ours[k], "cs_p50", what)->f[7]);
        double c999 = atof(need_row(n, ours[k], "cs_p999", what)->f[7]);
        ck_assert_msg(c50 <= c999, "%s: %s: critical section p50 %.0f above p99.9 %.0f",
                      what, ours[k], c50, c999);
        ck_assert_msg(atoi(need_row(n, ours[k], "recovers", what)->f[7]) == 1 &&
                          atof(need_row(n, ours[k], "recovery_s", what)->f[7]) > 0,
                      "%s: %s: no recovery measured", what, ours[k]);
    }
    ck_assert_msg(atof(need_row(n, ours[0], "acq_vs_ck", what)->f[7]) > 0 &&
                      row_of(rows, n, ours[2], "acq_vs_ck") == NULL,
                  "%s: acq_vs_ck wrong: shmam:mcs without one, or its park variant with",
                  what);
    ck_assert_msg(atoi(need_row(n, "ck:mcs/cs4/p16/l2", "recovers", what)->f[7]) == 0,
                  "%s: ck:mcs said to recover", what);
    ck_assert_msg(row_of(rows, n, "ck:mcs/cs4/p16/l2", "recovery_s") == NULL,
                  "%s: ck:mcs has a recovery time", what);
}
END_TEST

#define PC_ROUNDS 2L

/* pollcost --quick with 1 and 4 senders, tables of 1, 4 and 64: every queue
 * kind of am_queue_names has every row (figures; ratios to mpsc for the
 * others; ratios to one sender for 4; bytes and idle polls per table), iters
 * the polls or messages of both rounds, every time positive, every ratio
 * within what its figures' spreads allow; an endpoint's segment grows with its table of
 * senders, and a per-sender kind's grows, and by more than the shared queues' (a channel
 * pair per sender beside the sender entry both have; theirs may stay).  No
 * time is judged. */
START_TEST(test_pollcost)
{
    char prog[PATH_MAX], rounds[8], m[64], m2[64];
    const char *what = "pollcost --quick --senders 1,4";
    static const char *const x[] = {"poll_idle", "poll_one", "poll_recent"};
    const long iters[] = {2048 * PC_ROUNDS, 500 * PC_ROUNDS, 16 * 16 * PC_ROUNDS};
    if (!built(prog, "pollcost"))
        return;
    snprintf(rounds, sizeof rounds, "%ld", PC_ROUNDS);
    const char *argv[] = {launcher,        "-n",        "2",        "--bind",
                          "--timeout",     RUN_LIMIT_S, prog,       "--quick",
                          "--senders",     "1,4",       "--rounds", rounds,
                          "--mem-senders", "1,4,64",    "--header", NULL};
    struct expect e = {.bench = "pollcost",
                       .impl = NULL,
                       .procs = 2,
                       .pinned = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0,
                       .iters = 0,
                       .iters_of = NULL,
                       .known = "poll_idle_ns_# poll_one_ns_# poll_recent_ns_# "
                                "poll_idle_vs_mpsc_# poll_one_vs_mpsc_# "
                                "poll_recent_vs_mpsc_# poll_idle_vs_1_# poll_one_vs_1_# "
                                "poll_recent_vs_1_# seg_bytes_# poll_idle_table_ns_# "
                                "poll_idle_table_vs_mpsc_#",
                       .needed = "poll_idle_ns_1 poll_one_ns_4 poll_recent_ns_4 "
                                 "poll_one_vs_mpsc_4 poll_recent_vs_1_4 seg_bytes_64 "
                                 "poll_idle_table_ns_64"};
    int n = run_and_check(argv, &e, what), kinds = 0;
    for (; am_queue_names[kinds]; kinds++) {
        const char *k = am_queue_names[kinds];
        int chan = strcmp(k, "mpsc") != 0;
        for (int i = 0; i < 3; i++)
            for (int s = 1; s <= 4; s += 3) {
                snprintf(m, sizeof m, "%s_ns_%d", x[i], s);
                const struct row *r = need_row(n, k, m, what);
                ck_assert_msg(atol(r->f[5]) == iters[i] && strtod(r->f[7], NULL) > 0,
                              "%s: %s: %s: iters %s (not %ld) or value %s", what, k, m,
                              r->f[5], iters[i], r->f[7]);
                snprintf(m2, sizeof m2, "%s_vs_mpsc_%d", x[i], s);
                ck_assert_msg(!chan == !row_of(rows, n, k, m2), "%s: %s: %s %s", what, k,
                              m2, chan ? "missing" : "of mpsc itself");
                if (chan)
                    ratio_within(n, k, m2, k, m, "mpsc", m, what);
            }
        for (int i = 0; i < 3; i++) {
            snprintf(m, sizeof m, "%s_ns_4", x[i]);
            snprintf(m2, sizeof m2, "%s_ns_1", x[i]);
            char q[64];
            snprintf(q, sizeof q, "%s_vs_1_4", x[i]);
            ratio_within(n, k, q, k, m, k, m2, what);
            snprintf(q, sizeof q, "%s_vs_1_1", x[i]);
            ck_assert_msg(!row_of(rows, n, k, q), "%s: %s: %s", what, k, q);
        }
        for (int i = 0; i < 3; i++) {
            int s = i == 0 ? 1 : i == 1 ? 4 : 64;
            snprintf(m, sizeof m, "poll_idle_table_ns_%d", s);
            const struct row *r = need_row(n, k, m, what);
            ck_assert_msg(atol(r->f[5]) == iters[0] && strtod(r->f[7], NULL) > 0,
                          "%s: %s: %s: iters %s (not %ld) or value %s", what, k, m, r->f[5],
                          iters[0], r->f[7]);
            snprintf(m2, sizeof m2, "poll_idle_table_vs_mpsc_%d", s);
            ck_assert_msg(!chan == !row_of(rows, n, k, m2), "%s: %s: %s %s", what, k, m2,
                          chan ? "missing" : "of mpsc itself");
            if (chan)
                ratio_within(n, k, m2, k, m, "mpsc", m, what);
        }
        double b1 = strtod(need_row(n, k, "seg_bytes_1", what)->f[7], NULL);
        double b4 = strtod(need_row(n, k, "seg_bytes_4", what)->f[7], NULL);
        double b64 = strtod(need_row(n, k, "seg_bytes_64", what)->f[7], NULL);
        ck_assert_msg(b1 > 0 && b1 < b4 && b4 < b64,
                      "%s: %s: segment of %.0f, %.0f, %.0f bytes for 1, 4, 64 senders",
                      what, k, b1, b4, b64);
        if (chan) {
            double m1 = strtod(need_row(n, "mpsc", "seg_bytes_1", what)->f[7], NULL);
            double m64 = strtod(need_row(n, "mpsc", "seg_bytes_64", what)->f[7], NULL);
            ck_assert_msg(b64 - b1 > m64 - m1,
                          "%s: %s grows by %.0f bytes from 1 to 64 senders, mpsc by %.0f",
                          what, k, b64 - b1, m64 - m1);
        }
    }
    /* per kind: 3 x 2 figures, 3 ratios to one sender, 3 memory rows, 3 idle
     * polls of a table; for the per-sender kinds 3 x 2 + 3 ratios to mpsc */
    ck_assert_msg(n == kinds * 15 + (kinds - 1) * 9, "%s: %d rows, not %d", what, n,
                  kinds * 15 + (kinds - 1) * 9);
}
END_TEST

START_TEST(test_mpi_pingpong)
{
    char prog[PATH_MAX];
    const char *what = "mpi_pingpong --quick";
    if (!built(prog, "mpi_pingpong"))
        return;
    const char *argv[] = {"mpiexec", "-n",   "2",        prog, "--quick",
                          "--iters", "2000", "--header", NULL};
    struct expect e = {.bench = "mpi_pingpong",
                       .impl = "mpich",
                       .procs = 2,
                       .pinned = -1,
                       .iters = 2000,
                       .iters_of = "rtt_0B rtt_4B rtt_32B",
                       .known = "rtt_0B rtt_4B rtt_32B g_oneway_4B g_reply_4B bw_#_MBps",
                       .needed =
                           "rtt_0B rtt_4B rtt_32B g_oneway_4B g_reply_4B bw_8192_MBps"};
    run_and_check(argv, &e, what);
}
END_TEST

/* mpi_bw at 64 B and 64 KB: a row per size, iters the messages of whole
 * windows of 64 in all rounds. */
START_TEST(test_mpi_bw)
{
    char prog[PATH_MAX], bytes[24], max[24], rounds[8];
    const char *what = "mpi_bw --sizes 64,65536";
    if (!built(prog, "mpi_bw"))
        return;
    snprintf(bytes, sizeof bytes, "%ld", BW_BYTES);
    snprintf(max, sizeof max, "%ld", BW_MAX);
    snprintf(rounds, sizeof rounds, "%ld", BW_ROUNDS);
    const char *argv[] = {"mpiexec",  "-n",      "2",        prog,         "--sizes",
                          "64,65536", "--bytes", bytes,      "--max-msgs", max,
                          "--rounds", rounds,    "--header", NULL};
    struct expect e = {.bench = "mpi_bw",
                       .impl = "mpich",
                       .procs = 2,
                       .pinned = -1,
                       .iters = 0,
                       .iters_of = NULL,
                       .known = "mpi_bw_MBps_#",
                       .needed = "mpi_bw_MBps_64 mpi_bw_MBps_65536"};
    int n = run_and_check(argv, &e, what);
    ck_assert_msg(n == 2, "%s: %d rows, not 2", what, n);
    for (int i = 0; i < n; i++) {
        long c = bw_count(size_of(rows[i].f[6]), BW_BYTES, BW_MAX);
        long w = c / 64 > 0 ? c / 64 : 1;
        ck_assert_msg(atol(rows[i].f[5]) == w * 64 * BW_ROUNDS,
                      "%s: %s: iters %s, not %ld windows of 64 x %ld rounds", what,
                      rows[i].f[6], rows[i].f[5], w, BW_ROUNDS);
    }
}
END_TEST

/* mpi_stress with W = 1 and 3 writers, runs of 0.05 s: rate and time per
 * 10^6 from the same median run, no run shorter than its duration. */
START_TEST(test_mpi_stress)
{
    char prog[PATH_MAX], what[128], procs[8];
    int w = _i ? 3 : 1;
    if (!built(prog, "mpi_stress"))
        return;
    snprintf(what, sizeof what, "mpi_stress --seconds 0.05, %d writer(s)", w);
    snprintf(procs, sizeof procs, "%d", w + 1);
    const char *argv[] = {"mpiexec", "-n",       procs, prog,       "--seconds",
                          "0.05",    "--repeat", "3",   "--header", NULL};
    struct expect e = {.bench = "mpi_stress",
                       .impl = "mpich",
                       .procs = w + 1,
                       .pinned = -1,
                       .iters = 0,
                       .iters_of = NULL,
                       .known = "s_per_1e6 msgs_per_s run_seconds",
                       .needed = "s_per_1e6 msgs_per_s run_seconds"};
    int n = run_and_check(argv, &e, what);
    double lo, hi;
    double x = fig(row_of(rows, n, "mpich", "s_per_1e6"), &lo, &hi) *
               fig(row_of(rows, n, "mpich", "msgs_per_s"), &lo, &hi);
    ck_assert_msg(fabs(x - 1e6) < 1e4, "%s: s_per_1e6 x msgs_per_s = %.0f, not 1e6", what,
                  x);
    fig(row_of(rows, n, "mpich", "run_seconds"), &lo, &hi);
    ck_assert_msg(lo >= 0.9 * 0.05, "%s: a run of %.4f s, shorter than 0.05 s", what, lo);
}
END_TEST

/* rpcbench --quick: every transport's four figures with the counts asked
 * for, and every in-run ratio within what the spreads of the figures it
 * divides allow; the throughput's over the fastest alternative of each round
 * (sockets, pipe, ZeroMQ: never a floor) within what their spreads allow. */
static const char *const rpc_impls[] = {"call",           "call_poll", "unix_stream",
                                        "unix_seqpacket", "pipe",      "zmq_ipc",
                                        "eventfd_ring",   "spin_ring"};
static const char *const rpc_alts[] = {"unix_stream", "unix_seqpacket", "pipe", "zmq_ipc"};

static void rpc_over_best_alt(int n, const char *impl, const char *what)
{
    double alo, ahi, blo, bhi, qlo, qhi, maxlo = 0, maxhi = 0;
    fig(need_row(n, impl, "tput_32", what), &alo, &ahi);
    for (int k = 0; k < 4; k++) {
        fig(need_row(n, rpc_alts[k], "tput_32", what), &blo, &bhi);
        maxlo = blo > maxlo ? blo : maxlo, maxhi = bhi > maxhi ? bhi : maxhi;
    }
    double q = fig(need_row(n, impl, "tput_vs_best_alt", what), &qlo, &qhi);
    ck_assert_msg(maxlo > 0 && q >= 0.99 * alo / maxhi && q <= 1.01 * ahi / maxlo,
                  "%s: %s: tput_vs_best_alt %.3f outside [%.3f, %.3f] that the "
                  "alternatives' best allows",
                  what, impl, q, alo / maxhi, ahi / maxlo);
}

START_TEST(test_rpcbench)
{
    char prog[PATH_MAX];
    const char *what = "rpcbench --quick";
    if (!built(prog, "rpcbench"))
        return;
    const char *argv[] = {prog, "--quick", "--timeout", RUN_LIMIT_S, "--header", NULL};
    struct expect e = {.bench = "rpcbench",
                       .impl = "call call_poll unix_stream unix_seqpacket pipe zmq_ipc "
                               "eventfd_ring spin_ring",
                       .procs = 2,
                       .pinned = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0,
                       .iters = 900, /* --quick: 300 round trips, 3 rounds */
                       .iters_of = "rtt_8B",
                       .known = "rtt_8B tput_32 echo_4KB echo_64KB rtt_vs_unix_stream "
                                "echo_4KB_vs_unix_stream echo_64KB_vs_unix_stream "
                                "rtt_vs_eventfd_ring rtt_vs_call_poll rtt_vs_spin_ring "
                                "tput_vs_best_alt tput_vs_spin_ring",
                       .needed = "rtt_8B tput_32 echo_4KB echo_64KB"};
    int n = run_and_check(argv, &e, what);
    ck_assert_msg(n == 8 * 4 + 10, "%s: %d rows, not 42", what, n);
    static const struct {
        const char *metric;
        long iters;
    } figs[] = {{"rtt_8B", 900}, {"tput_32", 3600}, {"echo_4KB", 450}, {"echo_64KB", 111}};
    for (int k = 0; k < 8; k++)
        for (int t = 0; t < 4; t++)
            ck_assert_msg(atol(need_row(n, rpc_impls[k], figs[t].metric, what)->f[5]) ==
                              figs[t].iters,
                          "%s: %s %s: iters not %ld", what, rpc_impls[k], figs[t].metric,
                          figs[t].iters);
    ratio_within(n, "call", "rtt_vs_unix_stream", "call", "rtt_8B", "unix_stream", "rtt_8B",
                 what);
    ratio_within(n, "call", "echo_4KB_vs_unix_stream", "call", "echo_4KB", "unix_stream",
                 "echo_4KB", what);
    ratio_within(n, "call", "echo_64KB_vs_unix_stream", "call", "echo_64KB", "unix_stream",
                 "echo_64KB", what);
    ratio_within(n, "call", "rtt_vs_eventfd_ring", "call", "rtt_8B", "eventfd_ring",
                 "rtt_8B", what);
    ratio_within(n, "call", "rtt_vs_call_poll", "call", "rtt_8B", "call_poll", "rtt_8B",
                 what);
    ratio_within(n, "call_poll", "rtt_vs_spin_ring", "call_poll", "rtt_8B", "spin_ring",
                 "rtt_8B", what);
    ratio_within(n, "call", "tput_vs_spin_ring", "call", "tput_32", "spin_ring", "tput_32",
                 what);
    ratio_within(n, "call_poll", "tput_vs_spin_ring", "call_poll", "tput_32", "spin_ring",
                 "tput_32", what);
    rpc_over_best_alt(n, "call", what);
    rpc_over_best_alt(n, "call_poll", what);
}
END_TEST

/* scripts/locks_programs.py --scale tiny: sysbench and stress-ng under every
 * lock `lockbench --list-locks` names (through libshmam-locks.so) and bare,
 * then bench/robust bare and under the preload.  Every line is a header or a
 * well-formed row (rows.py check); each program has, for glibc and every
 * lock, a throughput (and for the locks an in-run ratio to glibc's) that lies
 * within its spread, and its count of operations; sysbench's acquisitions, as
 * the preload counted them, are at least its own count (it is lock-bound);
 * robust recovered in every run, with a positive recovery time.  Skipped in a
 * sanitizer build (an instrumented library cannot be preloaded into Debian's
 * programs).  No speed is judged. */
START_TEST(test_locks_programs)
{
    char lockbench[PATH_MAX], script[PATH_MAX], build[PATH_MAX];
    const char *what = "locks_programs.py --scale tiny";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return;
#endif
    if (!built(lockbench, "lockbench"))
        return;
    ck_assert_msg(tu_program(script, sizeof script, "../scripts/locks_programs.py"),
                  "scripts/locks_programs.py is not beside the build directory");
    snprintf(build, sizeof build, "%.*s",
             (int)(strlen(lockbench) - strlen("/bench/lockbench")), lockbench);
    const char *list_argv[] = {lockbench, "--list-locks", NULL};
    static struct tu_output list;
    tu_run_capture(list_argv, NULL, TU_ERR_APART, 30, &list);
    ck_assert_msg(list.status == 0 && list.len > 0, "lockbench --list-locks failed");
    const char *argv[] = {"/usr/bin/python3", script, "--build",  build,
                          "--scale",          "tiny", "--header", NULL};
    tu_run_capture(argv, NULL, TU_ERR_APART, RUN_TIMEOUT_S, &out);
    ck_assert_msg(out.status == 0, "%s: exit status %d\nstderr:\n%s", what, out.status,
                  out.err + (out.err_len > 4000 ? out.err_len - 4000 : 0));
    parse_rows(&out, what);
    struct expect prog = {.bench = "lockprog",
                          .pinned = 0,
                          .known = "ops_per_s vs_glibc ops acquisitions contended"};
    struct expect rob = {.bench = "robust",
                         .procs = 4,
                         .pinned = 0,
                         .known = "recovery_s recovered acq_per_s"};
    int n = split_parsed(&prog, &rob, what, rows);
    ck_assert_msg(n > 0, "%s: no rows", what);
    static const char *const progs[] = {"sysbench:mutex", "stress-ng:mutex"};
    char names[4096], impl[128];
    snprintf(names, sizeof names, "glibc\n%.4000s", list.out);
    for (char *save, *l = strtok_r(names, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        int glibc = strcmp(l, "glibc") == 0;
        for (int k = 0; k < 2; k++) {
            snprintf(impl, sizeof impl, "%s/%s", progs[k], l);
            need_row(n, impl, "ops_per_s", what);
            double ops = atof(need_row(n, impl, "ops", what)->f[7]);
            ck_assert_msg(glibc || need_row(n, impl, "vs_glibc", what), "%s", impl);
            if (k == 0)
                ck_assert_msg(atof(need_row(n, impl, "acquisitions", what)->f[7]) >= ops,
                              "%s: %s: fewer acquisitions than its %.0f operations", what,
                              impl, ops);
        }
        snprintf(impl, sizeof impl, glibc ? "glibc" : "preload/%s", l);
        const struct row *rec = row_of(rows, n, impl, "recovered");
        ck_assert_msg(rec && atof(rec->f[7]) == 1 &&
                          atof(need_row(n, impl, "recovery_s", what)->f[7]) > 0,
                      "%s: robust %s: did not recover", what, impl);
    }
}
END_TEST

static Suite *bench_suite(void)
{
    Suite *s = suite_create("bench");
    struct {
        const char *name;
        const TTest *test;
        int loops;
    } cases[] = {
        {"rtt", test_rtt, 1},
        {"rtt_ladder", test_rtt_ladder, 1},
        {"logp", test_logp, 1},
        {"loggp", test_loggp, 1},
        {"loggp_selfcheck", test_loggp_selfcheck, 1},
        {"bw", test_bw, 1},
        {"stress", test_stress, 2},
        {"demo_many", test_demo_many, 2},
        {"lockbench", test_lockbench, 1},
        {"lockbench_recovery", test_lockbench_recovery, 1},
        {"lockbench_threads", test_lockbench_threads, 1},
        {"pollcost", test_pollcost, 1},
        {"mpi_pingpong", test_mpi_pingpong, 1},
        {"mpi_bw", test_mpi_bw, 1},
        {"mpi_stress", test_mpi_stress, 2},
        {"mpi_loggp", test_mpi_loggp, 1},
        {"rpcbench", test_rpcbench, 1},
        {"locks_programs", test_locks_programs, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_set_timeout(tc, RUN_TIMEOUT_S + 20);
        tcase_add_loop_test(tc, cases[i].test, 0, cases[i].loops);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    tu_program(launcher, sizeof launcher, "bin/shmamrun");
    tu_run_init("bn");
    return tu_run_suite(bench_suite(), "check_bench");
}
