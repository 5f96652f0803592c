/*
 * check_region.c - what a one-copy region is, and that nothing takes one for
 * an endpoint or an endpoint for one (region.c), both backends.  Endpoint X's
 * region is X:r; before, it was X.r, which is also an endpoint's name.
 *
 *   endpoint_named_like_region  with X's region live, endpoint "X.r" can be
 *                      made and used, and a client's one-copy message to X
 *                      lands in X's region, not over X.r's header; "X:r" is
 *                      no endpoint name (create, map, probe: -EINVAL)
 *   region_create_spares_endpoint  X's am_region_create leaves a live
 *                      endpoint "X.r" as it was
 *   recreate_spares_other_names  re-creating X over its dead owner's name
 *                      leaves a live endpoint "X.r"
 *   recreate_removes_dead_region  ... and removes the dead owner's region, so
 *                      the new X makes one
 *   region_create_spares_live_region  a region whose owner lives is never
 *                      removed, even with its endpoint's name gone (as in a
 *                      job, after am_init): another X's am_region_create is
 *                      -EEXIST, and succeeds once that owner is dead
 *   map_checks_mark    a segment under X:r that is not X's region (no mark)
 *                      is never written: the one-copy send is -EPROTO, and
 *                      am_region_map is -EPROTO, mapping nothing
 *   region_map_loads_stores  am_region_map gives X's region, the same
 *                      bytes X sees: a store through it is seen by X's
 *                      handler of a later message, and X's stores by us
 *   region_map_other_user  ... X:r open to group or others, or (as root)
 *                      another user's: -EACCES
 *   region_map_dead_owner  ... once X's owner died (SIGKILL): -EPIPE, also
 *                      for a peer whose region was mapped before the death
 *
 * The owners that die are children killed with SIGKILL; everything else is
 * in the test process.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "region.h"
#include "testutil.h"

#define REGION (1u << 16)
#define DATA 4096u
#define H_AT 1
#define H_SHORT 2

static char what[96];

static struct {
    void *base;      /* where the data must land */
    unsigned at, ok; /* one-copy messages arrived, of them right */
    unsigned shorts;
} got;

static struct shared {
    AO_t ready;
    struct tu_errors err;
} * sh;

static void on_at(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    static unsigned char want[DATA];
    tu_pattern(want, 7, DATA);
    got.at++;
    got.ok += d == got.base && len == DATA && memcmp(d, want, DATA) == 0;
}

static void on_short(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    got.shorts++;
}

static am_ep_t *ep_of(const char *name, int b)
{
    struct am_ep_opts o = {.shm = tu_backend_name(b)};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(name, &o, &ep);
    ck_assert_msg(rc == 0, "%s: create %s: %s", what, name, am_strerror(rc));
    am_set_handler(ep, H_AT, on_at);
    am_set_handler(ep, H_SHORT, on_short);
    return ep;
}

/* Name "<test prefix>ROLE-B" plus `suffix`. */
static void name_of(char *buf, size_t n, const char *role, int b, const char *suffix)
{
    tu_ep_name(buf, n, role, -1, b);
    strncat(buf, suffix, n - strlen(buf) - 1);
}

/* Poll ep until *count reaches want (10 s at most). */
static void poll_until(am_ep_t *ep, const unsigned *count, unsigned want)
{
    double end = tu_now_s() + 10;
    while (*count < want && tu_now_s() < end)
        am_poll(ep);
}

/* A one-copy message from c (peer idx) lands at the start of x's region. */
static void at_arrives(am_ep_t *c, unsigned idx, am_ep_t *x, void *base, const char *why)
{
    static unsigned char buf[DATA];
    tu_pattern(buf, 7, DATA);
    got.base = base;
    unsigned want = got.at + 1;
    int rc = am_request_long_at(c, idx, H_AT, buf, DATA, 0, NULL, 0);
    ck_assert_msg(rc == 0, "%s: %s: one-copy send: %s", what, why, am_strerror(rc));
    poll_until(x, &got.at, want);
    ck_assert_msg(got.at == want && got.ok == want,
                  "%s: %s: %u of %u one-copy messages arrived, %u right", what, why, got.at,
                  want, got.ok);
}

/* Endpoint e (peer idx of c) is live and a short message reaches it. */
static void short_arrives(am_ep_t *c, unsigned idx, am_ep_t *e, const char *name,
                          const char *why)
{
    ck_assert_msg(am_ep_probe(name) == 1, "%s: %s: %s is not there", what, why, name);
    unsigned want = got.shorts + 1;
    int rc = am_request(c, idx, H_SHORT, NULL, 0);
    ck_assert_msg(rc == 0, "%s: %s: send to %s: %s", what, why, name, am_strerror(rc));
    poll_until(e, &got.shorts, want);
    ck_assert_msg(got.shorts == want, "%s: %s: nothing reached %s", what, why, name);
}

static void setup(void)
{
    tu_test_init();
    memset(&got, 0, sizeof got);
    sh = tu_shared_alloc(sizeof *sh);
}

static void teardown(void)
{
    tu_shared_free(sh, sizeof *sh);
}

/* ---- an owner in a child, killed by the test ---- */

struct owner {
    const char *name;
    int b, region;
};

static void owner_run(void *arg)
{
    const struct owner *o = arg;
    struct am_ep_opts opts = {.shm = tu_backend_name(o->b)};
    am_ep_t *ep = NULL;
    void *base;
    int rc = am_ep_create(o->name, &opts, &ep);
    if (rc == 0 && o->region)
        rc = am_region_create(ep, REGION, &base);
    if (rc < 0)
        tu_error(&sh->err, "owner of %s: %s", o->name, am_strerror(rc));
    AO_store_release(&sh->ready, 1);
    pause();
}

/* A child that makes endpoint `name` (and a region if `region`) and lives
 * until killed.  Returns its pid once it has made them. */
static pid_t owner_start(const char *name, int b, int region)
{
    static struct owner o;
    o = (struct owner){name, b, region};
    AO_store(&sh->ready, 0);
    pid_t p = tu_spawn(owner_run, &o, 0);
    tu_assert_flag(&sh->ready, 1, 20, "the owner", what, &sh->err);
    tu_assert_no_errors(what, &sh->err);
    return p;
}

static void owner_kill(pid_t p)
{
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
}

/* ---- the tests ---- */

START_TEST(endpoint_named_like_region)
{
    int b = _i;
    char x[64], xr[64], xc[64], c_name[64];
    snprintf(what, sizeof what, "%s: endpoint named like a region", tu_backend_name(b));
    name_of(x, sizeof x, "x", b, "");
    name_of(xr, sizeof xr, "x", b, ".r");
    name_of(xc, sizeof xc, "x", b, ":r");
    name_of(c_name, sizeof c_name, "c", b, "");
    am_ep_t *ex = ep_of(x, b), *c = ep_of(c_name, b), *bad = NULL;
    void *base;
    ck_assert_int_eq(am_region_create(ex, REGION, &base), 0);
    am_ep_t *er = ep_of(xr, b);
    struct am_ep_opts o = {.shm = tu_backend_name(b)};
    ck_assert_int_eq(am_ep_create(xc, &o, &bad), -EINVAL);
    ck_assert_int_eq(am_ep_map(c, 2, xc), -EINVAL);
    ck_assert_int_eq(am_ep_probe(xc), -EINVAL);
    ck_assert_int_eq(am_ep_map(c, 0, x), 0);
    ck_assert_int_eq(am_ep_map(c, 1, xr), 0);
    at_arrives(c, 0, ex, base, "to X after X.r was made");
    short_arrives(c, 1, er, xr, "X.r after a one-copy send to X");
    am_ep_destroy(c);
    am_ep_destroy(er);
    am_ep_destroy(ex);
    tu_assert_clean(what);
}
END_TEST

START_TEST(region_create_spares_endpoint)
{
    int b = _i;
    char x[64], xr[64], c_name[64];
    snprintf(what, sizeof what, "%s: region create spares endpoint", tu_backend_name(b));
    name_of(x, sizeof x, "x", b, "");
    name_of(xr, sizeof xr, "x", b, ".r");
    name_of(c_name, sizeof c_name, "c", b, "");
    am_ep_t *er = ep_of(xr, b), *ex = ep_of(x, b), *c = ep_of(c_name, b);
    void *base;
    int rc = am_region_create(ex, REGION, &base);
    ck_assert_msg(rc == 0, "%s: region: %s", what, am_strerror(rc));
    ck_assert_int_eq(am_ep_map(c, 1, xr), 0);
    short_arrives(c, 1, er, xr, "X.r after X made its region");
    ck_assert_int_eq(am_ep_map(c, 0, x), 0);
    at_arrives(c, 0, ex, base, "to X");
    am_ep_destroy(c);
    am_ep_destroy(ex);
    am_ep_destroy(er);
    tu_assert_clean(what);
}
END_TEST

START_TEST(recreate_spares_other_names)
{
    int b = _i;
    char x[64], xr[64], c_name[64];
    snprintf(what, sizeof what, "%s: recreate spares other names", tu_backend_name(b));
    name_of(x, sizeof x, "x", b, "");
    name_of(xr, sizeof xr, "x", b, ".r");
    name_of(c_name, sizeof c_name, "c", b, "");
    am_ep_t *er = ep_of(xr, b), *c = ep_of(c_name, b);
    owner_kill(owner_start(x, b, 0));
    ck_assert_msg(am_ep_probe(x) == 0, "%s: X's owner is not dead", what);
    am_ep_t *ex = ep_of(x, b); /* reclaims the dead owner's name */
    ck_assert_int_eq(am_ep_map(c, 1, xr), 0);
    short_arrives(c, 1, er, xr, "X.r after X was re-created");
    am_ep_destroy(ex);
    am_ep_destroy(c);
    am_ep_destroy(er);
    tu_assert_clean(what);
}
END_TEST

START_TEST(recreate_removes_dead_region)
{
    int b = _i;
    char x[64], r[64], c_name[64];
    struct am_segment seg;
    snprintf(what, sizeof what, "%s: recreate removes a dead region", tu_backend_name(b));
    name_of(x, sizeof x, "x", b, "");
    name_of(c_name, sizeof c_name, "c", b, "");
    ck_assert_int_eq(am__region_name(x, r, sizeof r), 0);
    owner_kill(owner_start(x, b, 1));
    ck_assert_msg(am__segment_open(b, r, &seg) == 0, "%s: no dead region to test", what);
    am__segment_unmap(&seg);
    am_ep_t *ex = ep_of(x, b), *c = ep_of(c_name, b);
    ck_assert_msg(am__segment_open(b, r, &seg) == -ENOENT,
                  "%s: the dead owner's region is still there", what);
    void *base;
    int rc = am_region_create(ex, REGION, &base);
    ck_assert_msg(rc == 0, "%s: region: %s", what, am_strerror(rc));
    ck_assert_int_eq(am_ep_map(c, 0, x), 0);
    at_arrives(c, 0, ex, base, "to the new X");
    am_ep_destroy(c);
    am_ep_destroy(ex);
    tu_assert_clean(what);
}
END_TEST

START_TEST(region_create_spares_live_region)
{
    int b = _i;
    char x[64], r[64];
    struct am_segment seg;
    unsigned pid;
    snprintf(what, sizeof what, "%s: region create spares a live region",
             tu_backend_name(b));
    name_of(x, sizeof x, "x", b, "");
    ck_assert_int_eq(am__region_name(x, r, sizeof r), 0);
    pid_t p = owner_start(x, b, 1);
    ck_assert_int_eq(am__segment_unlink(b, x), 0); /* as am_init does */
    am_ep_t *ex = ep_of(x, b);
    void *base;
    int rc = am_region_create(ex, REGION, &base);
    ck_assert_msg(rc == -EEXIST, "%s: region over a live one: %s", what, am_err_name(rc));
    ck_assert_msg(am__segment_open(b, r, &seg) == 0, "%s: the live region is gone", what);
    rc = am__region_state(&seg, x, &pid);
    am__segment_unmap(&seg);
    ck_assert_msg(rc == AM_REGION_LIVE && pid == (unsigned)p,
                  "%s: the live region reads %d, pid %u, not live, %d", what, rc, pid,
                  (int)p);
    owner_kill(p);
    rc = am_region_create(ex, REGION, &base);
    ck_assert_msg(rc == 0, "%s: region over a dead one: %s", what, am_strerror(rc));
    am_ep_destroy(ex);
    tu_assert_clean(what);
}
END_TEST

START_TEST(map_checks_mark)
{
    int b = _i;
    char x[64], r[64], c_name[64];
    struct am_segment fake;
    snprintf(what, sizeof what, "%s: map checks the mark", tu_backend_name(b));
    name_of(x, sizeof x, "x", b, "");
    name_of(c_name, sizeof c_name, "c", b, "");
    ck_assert_int_eq(am__region_name(x, r, sizeof r), 0);
    am_ep_t *ex = ep_of(x, b), *c = ep_of(c_name, b);
    void *base;
    ck_assert_int_eq(am_region_create(ex, REGION, &base), 0);
    ck_assert_int_eq(am__segment_unlink(b, r), 0);
    size_t size = REGION + (size_t)sysconf(_SC_PAGESIZE);
    ck_assert_int_eq(am__segment_create(b, r, size, &fake), 0);
    tu_pattern(fake.base, 3, size);
    uint32_t sum = tu_fnv1a(fake.base, size);
    ck_assert_int_eq(am_ep_map(c, 0, x), 0);
    static unsigned char buf[DATA];
    int rc = am_request_long_at(c, 0, H_AT, buf, DATA, 0, NULL, 0);
    ck_assert_msg(rc == -EPROTO, "%s: a send into an unmarked segment: %s", what,
                  am_err_name(rc));
    ck_assert_msg(tu_fnv1a(fake.base, size) == sum, "%s: the unmarked segment was written",
                  what);
    void *m = NULL;
    size_t len;
    rc = am_region_map(c, 0, &m, &len);
    ck_assert_msg(rc == -EPROTO && m == NULL,
                  "%s: am_region_map of an unmarked segment: %s", what, am_err_name(rc));
    am__segment_unmap(&fake);
    am_ep_destroy(c);
    am_ep_destroy(ex); /* removes the name X:r: the fake segment goes */
    am__segment_unlink(b, r);
    tu_assert_clean(what);
}
END_TEST

/* X's region through am_region_map, or its error. */
static int region_map_of(am_ep_t *c, void **base, size_t *len)
{
    *base = NULL;
    *len = 0;
    return am_region_map(c, 0, base, len);
}

START_TEST(region_map_loads_stores)
{
    int b = _i;
    char x[64], c_name[64];
    snprintf(what, sizeof what, "%s: region map loads and stores", tu_backend_name(b));
    name_of(x, sizeof x, "x", b, "");
    name_of(c_name, sizeof c_name, "c", b, "");
    am_ep_t *ex = ep_of(x, b), *c = ep_of(c_name, b);
    void *base, *m, *m2;
    size_t len, len2;
    ck_assert_int_eq(am_ep_map(c, 0, x), 0);
    ck_assert_msg(region_map_of(c, &m, &len) == -ENXIO, "%s: a region before it was made",
                  what);
    ck_assert_int_eq(am_region_create(ex, REGION, &base), 0);
    int rc = region_map_of(c, &m, &len);
    ck_assert_msg(rc == 0 && len == REGION, "%s: map: %s, %zu bytes", what, am_err_name(rc),
                  len);
    ck_assert_msg(region_map_of(c, &m2, &len2) == 0 && m2 == m && len2 == len,
                  "%s: a second map gave another mapping", what);
    ck_assert_int_eq(am_region_map(c, 7, &m2, &len2), -EINVAL);
    tu_pattern(m, 7, DATA);
    short_arrives(c, 0, ex, x, "after a store through the map");
    static unsigned char want[DATA];
    tu_pattern(want, 7, DATA);
    ck_assert_msg(memcmp(base, want, DATA) == 0, "%s: X does not see the store", what);
    tu_pattern((char *)base + REGION - DATA, 9, DATA);
    tu_pattern(want, 9, DATA);
    ck_assert_msg(memcmp((char *)m + REGION - DATA, want, DATA) == 0,
                  "%s: the map does not see X's store", what);
    am_ep_destroy(c);
    am_ep_destroy(ex);
    tu_assert_clean(what);
}
END_TEST

START_TEST(region_map_other_user)
{
    int b = _i;
    char x[64], r[64], c_name[64];
    snprintf(what, sizeof what, "%s: region map refuses another user's",
             tu_backend_name(b));
    name_of(x, sizeof x, "x", b, "");
    name_of(c_name, sizeof c_name, "c", b, "");
    ck_assert_int_eq(am__region_name(x, r, sizeof r), 0);
    am_ep_t *ex = ep_of(x, b), *c1 = ep_of(c_name, b);
    void *base, *m;
    size_t len;
    ck_assert_int_eq(am_region_create(ex, REGION, &base), 0);
    ck_assert_int_eq(am_ep_map(c1, 0, x), 0);
    ck_assert_int_eq(tu_set_perm(b, r, 0660, geteuid()), 0);
    int rc = region_map_of(c1, &m, &len);
    ck_assert_msg(rc == -EACCES && m == NULL, "%s: a region of mode 0660: %s", what,
                  am_err_name(rc));
    if (geteuid() == 0) { /* giving it away needs root */
        ck_assert_int_eq(tu_set_perm(b, r, 0600, 65534), 0);
        rc = region_map_of(c1, &m, &len);
        ck_assert_msg(rc == -EACCES && m == NULL, "%s: uid 65534's region: %s", what,
                      am_err_name(rc));
    }
    ck_assert_int_eq(tu_set_perm(b, r, 0600, geteuid()), 0);
    rc = region_map_of(c1, &m, &len);
    ck_assert_msg(rc == 0, "%s: the region ours again: %s", what, am_err_name(rc));
    am_ep_destroy(c1);
    am_ep_destroy(ex);
    tu_assert_clean(what);
}
END_TEST

START_TEST(region_map_dead_owner)
{
    int b = _i;
    char x[64], c_name[64], d_name[64];
    snprintf(what, sizeof what, "%s: region map refuses a dead owner's",
             tu_backend_name(b));
    name_of(x, sizeof x, "x", b, "");
    name_of(c_name, sizeof c_name, "c", b, "");
    name_of(d_name, sizeof d_name, "d", b, "");
    am_ep_t *c = ep_of(c_name, b), *d = ep_of(d_name, b);
    pid_t p = owner_start(x, b, 1);
    void *m, *m2;
    size_t len;
    ck_assert_int_eq(am_ep_map(c, 0, x), 0);
    ck_assert_int_eq(am_ep_map(d, 0, x), 0);
    int rc = region_map_of(c, &m, &len); /* mapped before the death */
    ck_assert_msg(rc == 0, "%s: map of a live owner's: %s", what, am_err_name(rc));
    owner_kill(p);
    rc = region_map_of(c, &m2, &len);
    ck_assert_msg(rc == -EPIPE && m2 == NULL, "%s: again after its owner died: %s", what,
                  am_err_name(rc));
    rc = region_map_of(d, &m2, &len);
    ck_assert_msg(rc == -EPIPE && m2 == NULL, "%s: first map after its owner died: %s",
                  what, am_err_name(rc));
    am_ep_destroy(c);
    am_ep_destroy(d);
    char r[64];
    am__region_name(x, r, sizeof r);
    am__segment_unlink(b, r);
    am__segment_unlink(b, x);
    tu_assert_clean(what);
}
END_TEST

static Suite *region_suite(void)
{
    Suite *s = suite_create("region");
    TCase *tc = tcase_create("region");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, endpoint_named_like_region, 0, 2);
    tcase_add_loop_test(tc, region_create_spares_endpoint, 0, 2);
    tcase_add_loop_test(tc, recreate_spares_other_names, 0, 2);
    tcase_add_loop_test(tc, recreate_removes_dead_region, 0, 2);
    tcase_add_loop_test(tc, region_create_spares_live_region, 0, 2);
    tcase_add_loop_test(tc, map_checks_mark, 0, 2);
    tcase_add_loop_test(tc, region_map_loads_stores, 0, 2);
    tcase_add_loop_test(tc, region_map_other_user, 0, 2);
    tcase_add_loop_test(tc, region_map_dead_owner, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("rg");
    return tu_run_suite(region_suite(), "check_region");
}
