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
 *   removed_not_listed   System V: a segment marked for removal (IPC_RMID)
 *                        but still attached is listed while its owner lives
 *                        (as a job's endpoints are once their names are
 *                        removed: "named": false), and not once its owner
 *                        closed it or died, though a peer has it attached.
 *   lists_running_job    a job of two ranks under shmamrun, parked after
 *                        am_init removed their names: shmamstat, --json and
 *                        --watch list each rank once, live, with its job, its
 *                        rank and its pid; nothing of the job once it ended.
 *                        As this user, and (when run as root) as nobody.
 *   usage                --help: usage on stdout, exit 0; a bad option or
 *                        --yes without --clean: usage on stderr, exit 2.
 *   clean_keeps_live_region  regions (NAME:r) are listed and judged by their
 *                        owner: --clean --yes removes a dead owner's and keeps
 *                        a live one's, its endpoint's name there or not.
 *
 * Every run is given this test's name prefix (or the job's), so endpoints of
 * other programs on the machine are neither listed nor removed.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "job.h"
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

/* An endpoint whose owner (a child) was killed; with `by` (not NULL) mapped
 * by it as peer idx before the kill.  Returns the child's pid. */
static pid_t dead_ep_mapped(const char *name, int b, am_ep_t *by, unsigned idx)
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
    ck_assert_msg(!by || am_ep_map(by, idx, name) == 0, "%s: map %s", what, name);
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    close(fd[0]);
    close(fd[1]);
    return p;
}

static pid_t dead_ep(const char *name, int b)
{
    return dead_ep_mapped(name, b, NULL, 0);
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

static struct tu_output js_closed;

/* How many times `s` occurs in text. */
static int count_of(const char *text, const char *s)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, s)); p++)
        n++;
    return n;
}

/* live: an endpoint with its name; gone: one whose segment is marked for
 * removal, its owner (this process) alive; closed: marked, then destroyed by
 * its owner, still attached by live's peer mapping; dead: marked, its owner
 * killed, still attached so.  Listed: live and gone, once each; not: closed
 * and dead, in the text or the JSON. */
START_TEST(removed_not_listed)
{
    char live[64], gone[64], closed[64], dead[64], key[96];
    snprintf(what, sizeof what, "sysv: shmamstat and removed segments");
    tu_test_prefix(prefix, sizeof prefix);
    tu_ep_name(live, sizeof live, "live", -1, 1);
    tu_ep_name(gone, sizeof gone, "removed", -1, 1);
    tu_ep_name(closed, sizeof closed, "closed", -1, 1);
    tu_ep_name(dead, sizeof dead, "dead", -1, 1);
    am_ep_t *ep = live_ep(live, 1), *rm = live_ep(gone, 1), *cl = live_ep(closed, 1);
    ck_assert_msg(am_ep_map(ep, 1, closed) == 0, "%s: map %s", what, closed);
    dead_ep_mapped(dead, 1, ep, 2);
    for (const char *n = gone; n; n = n == gone ? closed : n == closed ? dead : NULL)
        ck_assert_msg(am__segment_unlink(AM_SHM_SYSV, n) == 0, "%s: IPC_RMID %s", what, n);
    am_ep_destroy(cl);
    int rc = stat_run(&out, NULL, NULL);
    struct tu_output *js = &js_closed;
    int rc_json = stat_run(js, "--json", NULL);
    am_ep_destroy(rm);
    am_ep_destroy(ep);
    ck_assert_msg(rc == 0 && rc_json == 0, "%s: exit %d: %s", what, out.status, out.err);
    ck_assert_msg(strstr(out.out, live) && strstr(out.out, gone) &&
                      !strstr(out.out, closed) && !strstr(out.out, dead),
                  "%s: want live and removed only:\n%s", what, out.out);
    snprintf(key, sizeof key, "{\"name\": \"%s\"", gone);
    const char *g = strstr(js->out, key);
    ck_assert_msg(g && count_of(js->out, key) == 1 && !strstr(js->out, closed) &&
                      !strstr(js->out, dead),
                  "%s: --json:\n%s", what, js->out);
    ck_assert_msg(has(g, "\"named\": false") && has(g, "\"state\": \"live\""),
                  "%s: the removed one: %.300s", what, g);
    tu_assert_clean(what);
}
END_TEST

/* POSIX: an endpoint of this process whose name is removed, a descriptor of
 * its file held here and by a forked child: listed once, live and without a
 * name; once its owner closed it, not listed, though both still hold it. */
START_TEST(unnamed_listed_once)
{
    char name[64], key[96];
    int go[2];
    snprintf(what, sizeof what, "posix: shmamstat and a file held twice");
    tu_test_prefix(prefix, sizeof prefix);
    tu_ep_name(name, sizeof name, "held", -1, 0);
    am_ep_t *ep = live_ep(name, 0);
    int fd = am__segment_hold(&ep->own.seg, name);
    ck_assert_msg(fd >= 0, "%s: hold: %s", what, am_strerror(fd));
    ck_assert(am__segment_unlink(AM_SHM_POSIX, name) == 0 && pipe(go) == 0);
    pid_t child = fork();
    if (child == 0) { /* holds fd (inherited) until the pipe closes */
        char c;
        close(go[1]);
        _exit(read(go[0], &c, 1) == 0 ? 0 : 1);
    }
    close(go[0]);
    int rc = stat_run(&out, "--json", NULL);
    snprintf(key, sizeof key, "{\"name\": \"%s\"", name);
    const char *o = strstr(out.out, key);
    int once = count_of(out.out, key) == 1 && o && has(o, "\"named\": false") &&
               has(o, "\"state\": \"live\"");
    am_ep_destroy(ep);
    int rc_closed = stat_run(&js_closed, "--json", NULL);
    close(go[1]);
    waitpid(child, NULL, 0);
    close(fd);
    ck_assert_msg(rc == 0 && once, "%s: not listed once, live:\n%s", what, out.out);
    ck_assert_msg(rc_closed == 0 && !strstr(js_closed.out, name),
                  "%s: listed once closed:\n%s", what, js_closed.out);
    tu_assert_clean(what);
}
END_TEST

/* ---- a running job, its ranks' names removed by am_init ---- */

#define JOB_LIMIT_S 60 /* a launcher still running then is killed, group and all */
#define JOB_NPROCS 2

/* The job name prog_job's rank 0 printed ("job JOB\n") into job: 1, or 0 if
 * it has not yet. */
static int job_said(const char *o, char job[AM_JOB_NAME_MAX + 1])
{
    const char *p = strstr(o, "job ");
    return p && strchr(p, '\n') && sscanf(p, "job %24s", job) == 1;
}

/* Whether every rank's name has gone from backend b (am_init removes them
 * once all have mapped each other), waiting up to secs seconds. */
static int names_gone(const char *job, int b, double secs)
{
    for (double end = tu_now_s() + secs;; tu_sleep_ms(5)) {
        int left = 0;
        for (int r = 0; r < JOB_NPROCS; r++) {
            char name[AM_NAME_MAX];
            struct am_segment s;
            ck_assert(am__job_ep_name(job, r, name, sizeof name) == 0);
            if (am__segment_open((enum am_shm)b, name, &s) == 0) {
                am__segment_unmap(&s);
                left++;
            }
        }
        if (left == 0 || tu_now_s() > end)
            return left == 0;
    }
}

/* Is process pid rank r of a job (SHMAM_RANK=r in its environment)? */
static int is_rank(long pid, int r)
{
    char path[64], env[8192], want[32];
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(env, 1, sizeof env - 1, f) : 0;
    if (f)
        fclose(f);
    int len = snprintf(want, sizeof want, "SHMAM_RANK=%d", r);
    for (size_t i = 0; i + (size_t)len <= n; i += strnlen(env + i, n - i) + 1)
        if (memcmp(env + i, want, (size_t)len + 1) == 0)
            return 1;
    return 0;
}

/* Each rank's row in the JSON of out: once, live, named false, its backend,
 * job and rank, and a pid that is that rank's. */
static void assert_ranks_json(const char *job, int b)
{
    for (int r = 0; r < JOB_NPROCS; r++) {
        char name[AM_NAME_MAX], key[96], f[96];
        ck_assert(am__job_ep_name(job, r, name, sizeof name) == 0);
        snprintf(key, sizeof key, "{\"name\": \"%s\"", name);
        const char *o = json_of(name), *pid = strstr(o, "\"pid\": ");
        ck_assert_msg(count_of(out.out, key) == 1, "%s: %s listed twice:\n%s", what, name,
                      out.out);
        snprintf(f, sizeof f, "\"job\": \"%s\", \"rank\": %d,", job, r);
        ck_assert_msg(has(o, f) && has(o, "\"named\": false") &&
                          has(o, "\"state\": \"live\""),
                      "%s: rank %d: %.400s", what, r, o);
        snprintf(f, sizeof f, "\"shm\": \"%s\"", tu_backend_name(b));
        ck_assert_msg(has(o, f), "%s: rank %d's backend: %.300s", what, r, o);
        long p = pid ? atol(pid + 7) : 0;
        ck_assert_msg(p > 0 && is_rank(p, r), "%s: rank %d's pid %ld is no rank %d", what,
                      r, p, r);
    }
}

/* shmamstat --watch=0.2 --json: both ranks in each of two refreshes. */
static void assert_watch_lists(const char *job)
{
    char prog[PATH_MAX], n0[AM_NAME_MAX], n1[AM_NAME_MAX];
    ck_assert(tu_program(prog, sizeof prog, "bin/shmamstat"));
    ck_assert(am__job_ep_name(job, 0, n0, sizeof n0) == 0 &&
              am__job_ep_name(job, 1, n1, sizeof n1) == 0);
    const char *argv[] = {prog, "--watch=0.2", "--json", prefix, NULL};
    static struct tu_output w;
    pid_t pid = tu_start(argv, NULL, TU_ERR_APART, 30, &w);
    while ((count_of(w.out, n0) < 2 || count_of(w.out, n1) < 2) && tu_read_some(&w) > 0)
        ;
    kill(pid, SIGTERM);
    tu_finish(&w);
    ck_assert_msg(count_of(w.out, n0) >= 2 && count_of(w.out, n1) >= 2,
                  "%s: --watch did not list both ranks twice:\n%.2000s", what, w.out);
}

START_TEST(lists_running_job)
{
    int b = _i % 2, nobody = _i / 2;
    char launcher[PATH_MAX], prog[PATH_MAX], job[AM_JOB_NAME_MAX + 1] = "";
    snprintf(what, sizeof what, "%s%s: shmamstat beside a job", tu_backend_name(b),
             nobody ? " as nobody" : "");
    const char *fork_mode = getenv("CK_FORK");
    if (nobody && (geteuid() != 0 || (fork_mode && strcmp(fork_mode, "no") == 0))) {
        printf("%s: skipped: needs root, and a process of its own, to act as nobody\n",
               what);
        return;
    }
    ck_assert_msg(!nobody || (setgid(65534) == 0 && setuid(65534) == 0), "%s: setuid",
                  what);
    ck_assert(tu_program(launcher, sizeof launcher, "bin/shmamrun") &&
              tu_program(prog, sizeof prog, "tests/prog_job"));
    const char *argv[] = {launcher,           "-n", "2",    "--shm",
                          tu_backend_name(b), prog, "park", NULL};
    static struct tu_output o;
    pid_t pid = tu_start(argv, NULL, TU_ERR_MERGED, JOB_LIMIT_S, &o);
    while (!job_said(o.out, job) && tu_read_some(&o) > 0)
        ;
    ck_assert_msg(job[0], "%s: the job said no name:\n%s", what, o.out);
    ck_assert_msg(names_gone(job, b, 10), "%s: the ranks' names are still there", what);
    snprintf(prefix, sizeof prefix, "%s.", job);

    int rc = stat_run(&out, NULL, NULL);
    for (int r = 0; r < JOB_NPROCS; r++) {
        char name[AM_NAME_MAX];
        ck_assert(am__job_ep_name(job, r, name, sizeof name) == 0);
        const char *line = strstr(out.out, name), *nl = line ? strchr(line, '\n') : NULL;
        const char *st = line ? strstr(line, " live ") : NULL;
        ck_assert_msg(rc == 0 && st && st < nl, "%s: rank %d not listed live:\n%s", what, r,
                      out.out);
    }
    ck_assert_msg(stat_run(&out, "--json", NULL) == 0, "%s: --json exit %d", what,
                  out.status);
    assert_ranks_json(job, b);
    assert_watch_lists(job);

    kill(pid, SIGTERM); /* the launcher stops its ranks */
    tu_finish(&o);
    ck_assert_msg(stat_run(&out, "--json", NULL) == 0 && strcmp(out.out, "[]\n") == 0,
                  "%s: after the job:\n%s", what, out.out);
    ck_assert_msg(stat_run(&out, NULL, NULL) == 0 &&
                      strstr(out.out, "(no shmam endpoints)"),
                  "%s: after the job:\n%s", what, out.out);
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
    tcase_add_test(tc, unnamed_listed_once);
    tcase_add_loop_test(tc, lists_running_job, 0, 4);
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
