/*
 * check_stat.c - shmamstat, the endpoint lister, run as a user runs it
 * (B/bin/shmamstat) over real endpoints of this test, both backends:
 *
 *   lists_live_and_dead  an endpoint of this process that has delivered 5
 *                        messages to itself (one bulk) and one whose owner was
 *                        killed: both listed (text and --json) with their
 *                        backend, owner pid, claim algorithm, state (live,
 *                        dead), live senders and delivery counters.
 *   clean                --clean names only the dead one and removes nothing;
 *                        --clean --yes removes it and leaves the live one.
 *   removed_not_listed   System V: an endpoint whose segment is marked for
 *                        removal (IPC_RMID) but still attached, as a job's
 *                        endpoints are once their names are removed, is not
 *                        listed; a live one beside it is.
 *   usage                --help: usage on stdout, exit 0; a bad option or
 *                        --yes without --clean: usage on stderr, exit 2.
 *   clean_keeps_live_region  regions (NAME:r) are listed and judged by their
 *                        owner: --clean --yes removes a dead owner's and keeps
 *                        a live one's, its endpoint's name there or not.
 *
 * Every run is given this test's name prefix, so endpoints of other programs
 * on the machine are neither listed nor removed.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "region.h"
#include "testutil.h"

static char what[96], prefix[64];

/* shmamstat with up to 4 arguments, then this test's prefix; into o. */
static int stat_run(struct tu_output *o, const char *a1, const char *a2)
{
    char prog[PATH_MAX];
    ck_assert_msg(tu_program(prog, sizeof prog, "bin/shmamstat"), "no %s", prog);
    const char *argv[6] = {prog};
    int n = 1;
    if (a1)
        argv[n++] = a1;
    if (a2)
        argv[n++] = a2;
    argv[n++] = prefix;
    return tu_run_capture(argv, NULL, TU_ERR_APART, 30, o);
}

static struct tu_output out;

static void on_msg(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
}

/* A live endpoint that sent itself 5 messages, one bulk, and delivered them. */
static am_ep_t *live_ep(const char *name, int b)
{
    struct am_ep_opts o = {.claim = "ticket", .shm = tu_backend_name(b)};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(name, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create: %s", what, am_strerror(rc));
    am_set_handler(ep, 1, on_msg);
    ck_assert_msg(am_ep_map(ep, 0, name) == 0, "%s: map itself", what);
    static const char data[100];
    for (int i = 0; i < 5; i++)
        ck_assert(i ? am_request(ep, 0, 1, NULL, 0) == 0
                    : am_request_bulk(ep, 0, 1, data, sizeof data, NULL, 0) == 0);
    int got = 0;
    while (got < 5)
        got += am_poll(ep);
    return ep;
}

/* An endpoint whose owner (a child) was killed.  Returns the child's pid. */
static pid_t dead_ep(const char *name, int b)
{
    int fd[2];
    ck_assert(pipe(fd) == 0);
    pid_t p = fork();
    if (p == 0) {
        struct am_ep_opts o = {.claim = "tas", .shm = tu_backend_name(b)};
        am_ep_t *ep = NULL;
        char c = am_ep_create(name, &o, &ep) == 0 ? 'y' : 'n';
        if (write(fd[1], &c, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char c = 0;
    ck_assert_msg(read(fd[0], &c, 1) == 1 && c == 'y', "%s: the child made no endpoint",
                  what);
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    close(fd[0]);
    close(fd[1]);
    return p;
}

/* The JSON object of endpoint `name` in out, or fail. */
static const char *json_of(const char *name)
{
    char key[96];
    snprintf(key, sizeof key, "{\"name\": \"%s\"", name);
    const char *o = strstr(out.out, key);
    ck_assert_msg(o != NULL, "%s: %s not in the JSON:\n%s", what, name, out.out);
    return o;
}

/* Does the JSON object at o (up to its closing brace) contain `field`? */
static int has(const char *o, const char *field)
{
    const char *end = strchr(o, '}');
    end = end ? strchr(end + 1, '}') : NULL; /* past the nested request/reply */
    end = end ? strchr(end + 1, '}') : NULL;
    const char *f = strstr(o, field);
    return f && (!end || f < end);
}

START_TEST(lists_live_and_dead)
{
    int b = _i;
    char live[64], dead[64], field[64];
    snprintf(what, sizeof what, "%s: shmamstat lists", tu_backend_name(b));
    tu_test_prefix(prefix, sizeof prefix);
    tu_ep_name(live, sizeof live, "live", -1, b);
    tu_ep_name(dead, sizeof dead, "dead", -1, b);
    am_ep_t *ep = live_ep(live, b);
    pid_t child = dead_ep(dead, b);

    ck_assert_msg(stat_run(&out, NULL, NULL) == 0, "%s: exit %d: %s", what, out.status,
                  out.err);
    ck_assert_msg(strstr(out.out, live) && strstr(out.out, dead), "%s: text:\n%s", what,
                  out.out);
    ck_assert_msg(stat_run(&out, "--json", NULL) == 0, "%s: --json exit %d", what,
                  out.status);
    const char *l = json_of(live), *d = json_of(dead);
    snprintf(field, sizeof field, "\"pid\": %d,", (int)getpid());
    ck_assert_msg(has(l, "\"state\": \"live\"") && has(l, field) &&
                      has(l, "\"claim\": \"ticket\"") && has(l, "\"senders\": 1,") &&
                      has(l, "\"delivered\": 5,") && has(l, "\"bulk\": 1,"),
                  "%s: live endpoint: %.400s", what, l);
    snprintf(field, sizeof field, "\"pid\": %d,", (int)child);
    ck_assert_msg(has(d, "\"state\": \"dead\"") && has(d, field) &&
                      has(d, "\"claim\": \"tas\"") && has(d, "\"delivered\": 0,"),
                  "%s: dead endpoint: %.400s", what, d);
    snprintf(field, sizeof field, "\"shm\": \"%s\"", tu_backend_name(b));
    ck_assert_msg(has(l, field) && has(d, field), "%s: backend", what);
    am_ep_destroy(ep);
    ck_assert_msg(am_ep_probe(dead) == 0, "%s: the dead one", what);
    am_ep_t *again = NULL; /* reclaims the dead name, then goes */
    struct am_ep_opts o = {.shm = tu_backend_name(b)};
    ck_assert(am_ep_create(dead, &o, &again) == 0 && am_ep_destroy(again) == 0);
    tu_assert_clean(what);
}
END_TEST

START_TEST(clean)
{
    int b = _i;
    char live[64], dead[64];
    snprintf(what, sizeof what, "%s: shmamstat --clean", tu_backend_name(b));
    tu_test_prefix(prefix, sizeof prefix);
    tu_ep_name(live, sizeof live, "live", -1, b);
    tu_ep_name(dead, sizeof dead, "dead", -1, b);
    am_ep_t *ep = live_ep(live, b);
    dead_ep(dead, b);

    ck_assert_msg(stat_run(&out, "--clean", NULL) == 0, "%s: exit %d", what, out.status);
    ck_assert_msg(strstr(out.out, "would remove") && strstr(out.out, dead) &&
                      !strstr(out.out, live),
                  "%s: dry run said:\n%s", what, out.out);
    ck_assert_msg(am_ep_probe(dead) == 0, "%s: a dry run removed the dead one", what);
    ck_assert_msg(stat_run(&out, "--clean", "--yes") == 0, "%s: exit %d", what, out.status);
    ck_assert_msg(strstr(out.out, "removed") && strstr(out.out, dead), "%s: said:\n%s",
                  what, out.out);
    ck_assert_msg(am_ep_probe(dead) == -ENOENT, "%s: the dead one is still there", what);
    ck_assert_msg(am_ep_probe(live) == 1, "%s: the live one was touched", what);
    am_ep_destroy(ep);
    tu_assert_clean(what);
}
END_TEST

START_TEST(removed_not_listed)
{
    char live[64], gone[64];
    snprintf(what, sizeof what, "sysv: shmamstat and a removed segment");
    tu_test_prefix(prefix, sizeof prefix);
    tu_ep_name(live, sizeof live, "live", -1, 1);
    tu_ep_name(gone, sizeof gone, "removed", -1, 1);
    am_ep_t *ep = live_ep(live, 1), *rm = live_ep(gone, 1);
    ck_assert_msg(am__segment_unlink(AM_SHM_SYSV, gone) == 0, "%s: IPC_RMID", what);
    int rc = stat_run(&out, NULL, NULL);
    am_ep_destroy(rm);
    am_ep_destroy(ep);
    ck_assert_msg(rc == 0, "%s: exit %d: %s", what, out.status, out.err);
    ck_assert_msg(strstr(out.out, live) && !strstr(out.out, gone),
                  "%s: the live one %s, the removed one %s:\n%s", what,
                  strstr(out.out, live) ? "listed" : "missing",
                  strstr(out.out, gone) ? "listed" : "not listed", out.out);
    tu_assert_clean(what);
}
END_TEST

START_TEST(usage)
{
    snprintf(what, sizeof what, "shmamstat usage");
    tu_test_prefix(prefix, sizeof prefix);
    ck_assert_msg(stat_run(&out, "--help", NULL) == 0 &&
                      strstr(out.out, "usage: shmamstat"),
                  "%s: --help: exit %d, said %s", what, out.status, out.out);
    static const char *const bad[][2] = {
        {"--bogus", NULL}, {"--yes", NULL}, {"--clean", "--json"}, {"--watch=0", NULL}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int rc = stat_run(&out, bad[k][0], bad[k][1]);
        ck_assert_msg(rc == 2 && strstr(out.err, "usage: shmamstat") && out.len == 0,
                      "%s: %s %s: exit %d, stderr %s", what, bad[k][0],
                      bad[k][1] ? bad[k][1] : "", rc, out.err);
    }
}
END_TEST

/* ---- regions: judged by their owner's lifeline, not by their endpoint's name ---- */

static unsigned at_got;

static void on_at(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    at_got++;
}

/* Endpoint `name` of backend b with a one-copy region: 0 or -errno. */
static int make_region_ep(const char *name, int b, am_ep_t **ep)
{
    struct am_ep_opts o = {.shm = tu_backend_name(b)};
    void *base;
    int rc = am_ep_create(name, &o, ep);
    return rc < 0 ? rc : am_region_create(*ep, 1 << 16, &base);
}

static am_ep_t *region_ep(const char *name, int b)
{
    am_ep_t *ep = NULL;
    int rc = make_region_ep(name, b, &ep);
    ck_assert_msg(rc == 0, "%s: %s and its region: %s", what, name, am_strerror(rc));
    am_set_handler(ep, 1, on_at);
    return ep;
}

/* A child makes endpoint `name` and its region, and is killed. */
static void dead_region_ep(const char *name, int b)
{
    int fd[2];
    ck_assert(pipe(fd) == 0);
    pid_t p = fork();
    if (p == 0) {
        am_ep_t *ep = NULL;
        char c = make_region_ep(name, b, &ep) == 0 ? 'y' : 'n';
        if (write(fd[1], &c, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char c = 0;
    ck_assert_msg(read(fd[0], &c, 1) == 1 && c == 'y', "%s: the child made no region",
                  what);
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    close(fd[0]);
    close(fd[1]);
}

/* A one-copy message from c (peer idx) reaches ep. */
static void at_reaches(am_ep_t *c, unsigned idx, am_ep_t *ep, const char *name)
{
    static const char data[100];
    unsigned want = at_got + 1;
    int rc = am_request_long_at(c, idx, 1, data, sizeof data, 0, NULL, 0);
    ck_assert_msg(rc == 0, "%s: one-copy send to %s: %s", what, name, am_strerror(rc));
    for (double end = tu_now_s() + 10; at_got < want && tu_now_s() < end;)
        am_poll(ep);
    ck_assert_msg(at_got == want, "%s: nothing reached %s's region", what, name);
}

/* x: a live endpoint with a region; y: the same, its endpoint's name removed
 * as am_init removes it; z: a dead one with a region.  --clean names z's and
 * leaves x's and y's; --clean --yes removes z's region, and one-copy messages
 * still reach x and y. */
START_TEST(clean_keeps_live_region)
{
    int b = _i;
    char x[64], y[64], z[64], c_name[64], xr[64], yr[64], zr[64];
    struct am_segment seg;
    snprintf(what, sizeof what, "%s: shmamstat --clean and regions", tu_backend_name(b));
    tu_test_prefix(prefix, sizeof prefix);
    tu_ep_name(x, sizeof x, "rx", -1, b);
    tu_ep_name(y, sizeof y, "ry", -1, b);
    tu_ep_name(z, sizeof z, "rz", -1, b);
    tu_ep_name(c_name, sizeof c_name, "rc", -1, b);
    ck_assert(am__region_name(x, xr, sizeof xr) == 0 &&
              am__region_name(y, yr, sizeof yr) == 0 &&
              am__region_name(z, zr, sizeof zr) == 0);
    am_ep_t *ex = region_ep(x, b), *ey = region_ep(y, b), *c = live_ep(c_name, b);
    ck_assert(am_ep_map(c, 1, x) == 0 && am_ep_map(c, 2, y) == 0);
    ck_assert_int_eq(am__segment_unlink(b, y), 0);
    dead_region_ep(z, b);

    ck_assert_msg(stat_run(&out, NULL, NULL) == 0 && strstr(out.out, xr) &&
                      strstr(out.out, zr),
                  "%s: the regions are not listed:\n%s", what, out.out);
    ck_assert_msg(stat_run(&out, "--clean", NULL) == 0, "%s: exit %d", what, out.status);
    ck_assert_msg(strstr(out.out, zr) && !strstr(out.out, xr) && !strstr(out.out, yr),
                  "%s: dry run said:\n%s", what, out.out);
    ck_assert_msg(stat_run(&out, "--clean", "--yes") == 0, "%s: exit %d", what, out.status);
    ck_assert_msg(am__segment_open(b, zr, &seg) == -ENOENT, "%s: the dead region is left",
                  what);
    at_reaches(c, 1, ex, x);
    at_reaches(c, 2, ey, y);
    am_ep_destroy(c);
    am_ep_destroy(ey);
    am_ep_destroy(ex);
    tu_assert_clean(what);
}
END_TEST

static Suite *stat_suite(void)
{
    Suite *s = suite_create("stat");
    TCase *tc = tcase_create("shmamstat");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, tu_test_init, NULL);
    tcase_add_loop_test(tc, lists_live_and_dead, 0, 2);
    tcase_add_loop_test(tc, clean, 0, 2);
    tcase_add_test(tc, removed_not_listed);
    tcase_add_test(tc, usage);
    tcase_add_loop_test(tc, clean_keeps_live_region, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("st");
    return tu_run_suite(stat_suite(), "check_stat");
}
