/*
 * check_config.c - endpoint configuration and the checks every public call makes
 * before it touches a queue: options against the environment against defaults,
 * endpoint names, creation (exclusive, reclaiming a dead owner's segment), the
 * segment's size and the refusal of a segment that does not match this build
 * (and, racing with its creator, of one not yet initialised: -EAGAIN/-ENOENT,
 * never -EPROTO), mapping errors, error texts, argument checks of the send calls,
 * and a full sender table.
 *
 * Mostly single-process.  Tests that create endpoints loop over the claim
 * algorithms (am_claim_names[]) and/or the backends and name both in every
 * failure message.  Every endpoint name starts with a prefix unique to this run
 * and test (it holds both pids), every test destroys what it made and then checks
 * that nothing of its prefix is left in /dev/shm or among the System V segments;
 * main removes whatever a failed test left behind.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "endpoint.h"
#include "internal.h"
#include "options.h"
#include "testutil.h"

static int n_algs;

static const char *const env_names[] = {
    "SHMAM_CLAIM",       "SHMAM_SHM",      "SHMAM_PACKETS", "SHMAM_BULK",
    "SHMAM_MAX_SENDERS", "SHMAM_LONG_MAX", "SHMAM_QUEUE",   NULL};

static void setup(void)
{
    tu_test_init();
    for (const char *const *e = env_names; *e; e++)
        unsetenv(*e);
}

static am_ep_t *create_ok(const char *name, const struct am_ep_opts *o, const char *what)
{
    am_ep_t *ep = NULL;
    int rc = am_ep_create(name, o, &ep);
    ck_assert_msg(rc == 0 && ep, "%s: create %s: %s", what, name, am_strerror(rc));
    return ep;
}

static void destroy_ok(am_ep_t *ep, const char *what)
{
    int rc = am_ep_destroy(ep);
    ck_assert_msg(rc == 0, "%s: destroy: %s", what, am_strerror(rc));
}

/* ---- options, environment, defaults ---- */

static void resolve_ok(const struct am_ep_opts *o, struct am_config *c, const char *what)
{
    memset(c, 0xa5, sizeof *c);
    int rc = am__config_resolve(o, 0, c);
    ck_assert_msg(rc == 0, "%s: resolve: %s", what, am_strerror(rc));
}

static void expect_cfg(const struct am_config *c, int claim, int b, unsigned q, unsigned bb,
                       unsigned s, const char *what)
{
    ck_assert_msg(c->claim == (enum am_claim)claim && c->backend == (enum am_shm)b &&
                      c->packets == q && c->bulk_blocks == bb && c->max_senders == s,
                  "%s: got claim %d backend %d packets %u bulk %u senders %u, "
                  "want %d %d %u %u %u",
                  what, c->claim, c->backend, c->packets, c->bulk_blocks, c->max_senders,
                  claim, b, q, bb, s);
}

START_TEST(defaults)
{
    struct am_config c;
    struct am_ep_opts zero = {0};
    resolve_ok(NULL, &c, "NULL opts");
    expect_cfg(&c, AM_CLAIM_LOCKFREE, AM_SHM_POSIX, 128, 16, 64, "NULL opts");
    resolve_ok(&zero, &c, "zero opts");
    expect_cfg(&c, AM_CLAIM_LOCKFREE, AM_SHM_POSIX, 128, 16, 64, "zero opts");
    /* An empty variable means unset. */
    for (const char *const *e = env_names; *e; e++)
        setenv(*e, "", 1);
    resolve_ok(&zero, &c, "empty environment variables");
    expect_cfg(&c, AM_CLAIM_LOCKFREE, AM_SHM_POSIX, 128, 16, 64, "empty variables");
}
END_TEST

/* Every algorithm and backend from the environment, and from the options. */
START_TEST(from_env_and_opts)
{
    struct am_config c;
    char what[96];
    for (int a = 0; a < n_algs; a++)
        for (int b = 0; b < 2; b++) {
            snprintf(what, sizeof what, "env %s/%s", am_claim_names[a], tu_backend_name(b));
            setenv("SHMAM_CLAIM", am_claim_names[a], 1);
            setenv("SHMAM_SHM", tu_backend_name(b), 1);
            setenv("SHMAM_PACKETS", "64", 1);
            setenv("SHMAM_BULK", "4", 1);
            setenv("SHMAM_MAX_SENDERS", "7", 1);
            resolve_ok(NULL, &c, what);
            expect_cfg(&c, a, b, 64, 4, 7, what);
            for (const char *const *e = env_names; *e; e++)
                unsetenv(*e);
            snprintf(what, sizeof what, "opts %s/%s", am_claim_names[a],
                     tu_backend_name(b));
            struct am_ep_opts o = {
                am_claim_names[a], tu_backend_name(b), 2, 1, 1, 0, 0, NULL, 0};
            resolve_ok(&o, &c, what);
            expect_cfg(&c, a, b, 2, 1, 1, what);
        }
    /* The limits themselves are accepted. */
    struct am_ep_opts big = {
        NULL, NULL, AM_MAX_PACKETS, AM_MAX_BULK_BLOCKS, AM_MAX_SENDERS, 0, AM_MAX_LONG,
        NULL, 0};
    resolve_ok(&big, &c, "largest sizes");
    expect_cfg(&c, 0, 0, AM_MAX_PACKETS, AM_MAX_BULK_BLOCKS, AM_MAX_SENDERS, "largest");
    ck_assert_uint_eq(c.long_max, AM_MAX_LONG);
    /* long_max: default, environment, option. */
    resolve_ok(NULL, &c, "default long_max");
    ck_assert_uint_eq(c.long_max, 1u << 20);
    setenv("SHMAM_LONG_MAX", "4096", 1);
    resolve_ok(NULL, &c, "long_max from the environment");
    ck_assert_uint_eq(c.long_max, AM_MIN_LONG);
    struct am_ep_opts lm = {.long_max = 100000};
    resolve_ok(&lm, &c, "long_max given");
    ck_assert_uint_eq(c.long_max, 100000);
    unsetenv("SHMAM_LONG_MAX");
}
END_TEST

START_TEST(opts_override_env)
{
    struct am_config c;
    setenv("SHMAM_CLAIM", "ticket", 1);
    setenv("SHMAM_SHM", "sysv", 1);
    setenv("SHMAM_PACKETS", "256", 1);
    setenv("SHMAM_BULK", "8", 1);
    setenv("SHMAM_MAX_SENDERS", "5", 1);
    struct am_ep_opts all = {"anderson", "posix", 32, 2, 9, 0, 0, NULL, 0};
    resolve_ok(&all, &c, "all fields given");
    expect_cfg(&c, AM_CLAIM_ANDERSON, AM_SHM_POSIX, 32, 2, 9, "all fields given");
    /* Field by field: what is given wins, the rest comes from the environment. */
    struct am_ep_opts some = {"mutex", NULL, 0, 32, 0, 0, 0, NULL, 0};
    resolve_ok(&some, &c, "some fields given");
    expect_cfg(&c, AM_CLAIM_MUTEX, AM_SHM_SYSV, 256, 32, 5, "some fields given");
    struct am_ep_opts others = {NULL, "posix", 4, 0, 3, 0, 0, NULL, 0};
    resolve_ok(&others, &c, "other fields given");
    expect_cfg(&c, AM_CLAIM_TICKET, AM_SHM_POSIX, 4, 8, 3, "other fields given");
    /* A good option does not excuse a bad variable of another field... */
    setenv("SHMAM_BULK", "3", 1);
    ck_assert_int_eq(am__config_resolve(&others, 0, &c), -EINVAL);
    /* ...but one it overrides is never looked at. */
    ck_assert_int_eq(am__config_resolve(&some, 0, &c), 0);
    setenv("SHMAM_CLAIM", "bogus", 1);
    ck_assert_int_eq(am__config_resolve(&some, 0, &c), 0);
    ck_assert_int_eq(c.claim, AM_CLAIM_MUTEX);
}
END_TEST

START_TEST(bad_values)
{
    struct am_config c;
    static const struct {
        const char *env, *value;
    } bad_env[] = {
        {"SHMAM_CLAIM", "bogus"},
        {"SHMAM_CLAIM", "LOCKFREE"},
        {"SHMAM_CLAIM", "tas "},
        {"SHMAM_CLAIM", "lock"},
        {"SHMAM_SHM", "shm"},
        {"SHMAM_SHM", "SYSV"},
        {"SHMAM_SHM", "posix2"},
        {"SHMAM_PACKETS", "3"},
        {"SHMAM_PACKETS", "1"},
        {"SHMAM_PACKETS", "0"},
        {"SHMAM_PACKETS", "100"},
        {"SHMAM_PACKETS", "131072"},
        {"SHMAM_PACKETS", "12abc"},
        {"SHMAM_PACKETS", "abc"},
        {"SHMAM_PACKETS", "-1"},
        {"SHMAM_PACKETS", "0x40"},
        {"SHMAM_PACKETS", "64 "},
        {"SHMAM_PACKETS", "99999999999999999999999"},
        {"SHMAM_BULK", "0"},
        {"SHMAM_BULK", "3"},
        {"SHMAM_BULK", "8192"},
        {"SHMAM_BULK", "x"},
        {"SHMAM_MAX_SENDERS", "0"},
        {"SHMAM_MAX_SENDERS", "1025"},
        {"SHMAM_MAX_SENDERS", "-5"},
        {"SHMAM_MAX_SENDERS", "ten"},
        {"SHMAM_LONG_MAX", "4095"},
        {"SHMAM_LONG_MAX", "1073741825"},
        {"SHMAM_LONG_MAX", "1M"},
        {"SHMAM_LONG_MAX", "0"},
        {"SHMAM_SEND_TIMEOUT_MS", "0"},
        {"SHMAM_SEND_TIMEOUT_MS", "-2"},
        {"SHMAM_SEND_TIMEOUT_MS", "5s"},
    };
    for (size_t i = 0; i < sizeof bad_env / sizeof bad_env[0]; i++) {
        setenv(bad_env[i].env, bad_env[i].value, 1);
        int rc = am__config_resolve(NULL, 0, &c);
        ck_assert_msg(rc == -EINVAL, "%s='%s' gave %d, want -EINVAL", bad_env[i].env,
                      bad_env[i].value, rc);
        /* am_ep_create refuses it too, and makes nothing. */
        am_ep_t *ep = NULL;
        char name[64];
        tu_ep_name(name, sizeof name, "bad", -1, 0);
        rc = am_ep_create(name, NULL, &ep);
        ck_assert_msg(rc == -EINVAL && !ep, "create with %s='%s' gave %d", bad_env[i].env,
                      bad_env[i].value, rc);
        unsetenv(bad_env[i].env);
    }
    static const struct am_ep_opts bad_opts[] = {
        {"bogus", NULL, 0, 0, 0, 0, 0, NULL, 0},
        {"", NULL, 0, 0, 0, 0, 0, NULL, 0},
        {"Mutex", NULL, 0, 0, 0, 0, 0, NULL, 0},
        {NULL, "", 0, 0, 0, 0, 0, NULL, 0},
        {NULL, "sys v", 0, 0, 0, 0, 0, NULL, 0},
        {NULL, NULL, 1, 0, 0, 0, 0, NULL, 0},
        {NULL, NULL, 3, 0, 0, 0, 0, NULL, 0},
        {NULL, NULL, 96, 0, 0, 0, 0, NULL, 0},
        {NULL, NULL, 131072, 0, 0, 0, 0, NULL, 0},
        {NULL, NULL, 0xffffffffu, 0, 0, 0, 0, NULL, 0},
        {NULL, NULL, 0, 3, 0, 0, 0, NULL, 0},
        {NULL, NULL, 0, 8192, 0, 0, 0, NULL, 0},
        {NULL, NULL, 0, 6, 0, 0, 0, NULL, 0},
        {NULL, NULL, 0, 0, 1025, 0, 0, NULL, 0},
        {NULL, NULL, 0, 0, 0x80000000u, 0, 0, NULL, 0},
        {NULL, NULL, 0, 0, 0, 0, 0, NULL, -2},
    };
    for (size_t i = 0; i < sizeof bad_opts / sizeof bad_opts[0]; i++) {
        const struct am_ep_opts *o = &bad_opts[i];
        int rc = am__config_resolve(o, 0, &c);
        ck_assert_msg(rc == -EINVAL, "opts {%s, %s, %u, %u, %u} gave %d, want -EINVAL",
                      o->claim ? o->claim : "NULL", o->shm ? o->shm : "NULL", o->packets,
                      o->bulk_blocks, o->max_senders, rc);
    }
    /* Not powers of two is fine for max_senders only. */
    struct am_ep_opts odd = {NULL, NULL, 0, 0, 3, 0, 0, NULL, 0};
    resolve_ok(&odd, &c, "max_senders 3");
    tu_assert_clean("bad values");
}
END_TEST

/* ---- names, creation ---- */

static int delivered;
static uint32_t last_args[AM_MAX_ARGS];
static size_t last_len;
static unsigned char last_byte;

static void count_h(am_token_t *t, const uint32_t *args, int nargs, void *data, size_t len)
{
    delivered++;
    memcpy(last_args, args, (size_t)nargs * sizeof *args);
    last_len = len;
    last_byte = len ? ((unsigned char *)data)[len - 1] : 0;
}

START_TEST(names)
{
    static const char *const bad[] = {
        "",
        "a/b",
        "/x",
        "../x",
        "a b",
        " a",
        "a\tb",
        "a*b",
        "a:b",
        "@x",
        "caf\xc3\xa9",
        "a\nb",
        "x/../y",
        "12345678901234567890123456789012345678901", /* 41 */
    };
    am_ep_t *ep = NULL;
    char what[80];
    int rc = am_ep_create(NULL, NULL, &ep); /* anonymous: its name is no name */
    ck_assert_msg(rc == 0 && am_ep_name(ep)[0] == '@' && !am__name_valid(am_ep_name(ep)),
                  "create NULL name gave %d", rc);
    destroy_ok(ep, "anonymous");
    for (int b = 0; b < 2; b++) {
        struct am_ep_opts o = {NULL, tu_backend_name(b), 0, 0, 0, 0, 0, NULL, 0};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            ck_assert_msg(!am__name_valid(bad[i]), "name '%s' valid", bad[i]);
            ep = NULL;
            rc = am_ep_create(bad[i], &o, &ep);
            ck_assert_msg(rc == -EINVAL && !ep, "%s: create '%s' gave %d",
                          tu_backend_name(b), bad[i], rc);
        }
        /* Exactly 40 characters of every allowed kind is fine. */
        char name[64];
        tu_ep_name(name, sizeof name, "n", -1, b);
        size_t n = strlen(name);
        ck_assert_msg(n < 30, "test name %s too long", name);
        memcpy(name + n, "._-aZ09_._-aZ09_._-aZ09_._-aZ09_._-aZ09", 40 - n);
        name[40] = '\0';
        snprintf(what, sizeof what, "%s: 40-character name", tu_backend_name(b));
        ep = create_ok(name, &o, what);
        ck_assert_str_eq(am_ep_name(ep), name);
        destroy_ok(ep, what);
        ck_assert_msg(am_ep_create(name, &o, NULL) == -EINVAL, "%s: NULL out",
                      tu_backend_name(b));
    }
    tu_assert_clean("names");
}
END_TEST

START_TEST(double_create)
{
    int b = _i;
    char name[64], what[64];
    snprintf(what, sizeof what, "%s: double create", tu_backend_name(b));
    tu_ep_name(name, sizeof name, "dup", -1, b);
    struct am_ep_opts o = {NULL, tu_backend_name(b), 0, 0, 0, 0, 0, NULL, 0};
    am_ep_t *ep = create_ok(name, &o, what), *ep2 = NULL;
    int rc = am_ep_create(name, &o, &ep2);
    ck_assert_msg(rc == -EEXIST && !ep2, "%s: second create gave %d", what, rc);
    /* Another process may not take it either, while the owner lives. */
    pid_t p = fork();
    if (p == 0) {
        am_ep_t *e3 = NULL;
        _exit(am_ep_create(name, &o, &e3) == -EEXIST ? 0 : 1);
    }
    int st;
    ck_assert_msg(p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "%s: a second process could create a live name", what);
    /* The first endpoint is untouched: it still takes a message from itself. */
    ck_assert_msg(am_ep_map(ep, 0, name) == 0, "%s: map self", what);
    ck_assert_msg(am_set_handler(ep, 1, count_h) == 0 &&
                      am_request(ep, 0, 1, NULL, 0) == 0 && am_poll(ep) == 1 &&
                      delivered == 1,
                  "%s: the live endpoint stopped working", what);
    destroy_ok(ep, what);
    /* Once destroyed, the name is free again. */
    ep = create_ok(name, &o, what);
    destroy_ok(ep, what);
    tu_assert_clean(what);
}
END_TEST

/* A child creates an endpoint and dies without destroying it; the name can be
 * created again, in the same backend, by someone else. */
START_TEST(reclaim_stale)
{
    int b = _i;
    char name[64], what[64];
    snprintf(what, sizeof what, "%s: stale segment", tu_backend_name(b));
    tu_ep_name(name, sizeof name, "stale", -1, b);
    struct am_ep_opts o = {NULL, tu_backend_name(b), 0, 0, 0, 0, 0, NULL, 0};
    for (int round = 0; round < 2; round++) {
        pid_t p = fork();
        if (p == 0) {
            am_ep_t *ep;
            _exit(am_ep_create(name, &o, &ep) == 0 ? 0 : 1);
        }
        int st;
        ck_assert_msg(p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
                          WEXITSTATUS(st) == 0,
                      "%s: child could not create %s", what, name);
        struct am_segment seg;
        int rc = am__segment_open((enum am_shm)b, name, &seg);
        ck_assert_msg(rc == 0, "%s: the dead child's segment is not there (%d)", what, rc);
        am__segment_unmap(&seg);
        /* Round 1: mapping a dead owner's endpoint is refused, and the stale
         * segment is reclaimed even while some process still has it mapped. */
        am_ep_t *peer = NULL;
        struct am_segment held = {0};
        if (round == 1) {
            char pn[64];
            tu_ep_name(pn, sizeof pn, "peer", -1, b);
            peer = create_ok(pn, &o, what);
            rc = am_ep_map(peer, 0, name);
            ck_assert_msg(rc == -EPIPE, "%s: map the stale endpoint gave %s, want -EPIPE",
                          what, am_strerror(rc));
            rc = am__segment_open((enum am_shm)b, name, &held);
            ck_assert_msg(rc == 0, "%s: hold the stale segment (%d)", what, rc);
        }
        am_ep_t *ep = create_ok(name, &o, what);
        ck_assert_msg(am_ep_map(ep, 0, name) == 0, "%s: map self after reclaim", what);
        ck_assert_msg(am_request(ep, 0, 0, NULL, 0) == 0, "%s: send self after reclaim",
                      what);
        destroy_ok(ep, what);
        if (peer)
            destroy_ok(peer, what);
        am__segment_unmap(&held);
    }
    tu_assert_clean(what);
}
END_TEST

/* ---- the segment ---- */

START_TEST(layout_size)
{
    struct am_config c;
    resolve_ok(NULL, &c, "defaults");
    size_t dflt = am__layout_size(&c), page = (size_t)sysconf(_SC_PAGESIZE);
    /* The paper's endpoint has no lifelines: one page each for the owner's and
     * every sender's (layout.h), which only their holder may write. */
    size_t lives = (1 + c.max_senders) * page;
    /* Nor has it long messages: a heap per queue that holds two of long_max;
     * nor medium ones: a payload area per slot (layout.h). */
    size_t heaps = 2 * am_heap_bytes_for(c.long_max, 2);
    size_t medium = 2 * (size_t)c.packets * AM_MEDIUM_BYTES;
    size_t queues = dflt - lives - heaps - medium;
    printf("config: default segment (lockfree, Q=128, B=16, S=64): %zu bytes (%.1f kB), "
           "%.1f kB of it the header and lifeline pages, %.1f kB the two heaps, %.1f kB "
           "the slots' payload areas\n",
           dflt, dflt / 1000.0, lives / 1000.0, heaps / 1000.0, medium / 1000.0);
    ck_assert_msg(heaps >= 4 * c.long_max && heaps <= 5 * c.long_max,
                  "heaps of %zu bytes for two messages of %u per queue", heaps, c.long_max);
    ck_assert_msg(queues >= 256 * 1024 && queues <= 320 * 1024,
                  "default queues %zu bytes, want near the paper's 290 kB", queues);
    ck_assert_msg(dflt % 4096 == 0, "segment size %zu not whole pages", dflt);
    for (int a = 0; a < n_algs; a++) {
        c.claim = (enum am_claim)a;
        size_t s = am__layout_size(&c);
        printf("config: %-8s default segment %zu bytes\n", am_claim_names[a], s);
        ck_assert_msg(s >= dflt && s <= dflt + 64 * 1024, "%s: segment %zu bytes",
                      am_claim_names[a], s);
    }
    /* Sizes grow with every parameter. */
    resolve_ok(NULL, &c, "defaults");
    struct am_config d = c;
    d.packets *= 2;
    ck_assert(am__layout_size(&d) > dflt);
    d = c;
    d.bulk_blocks *= 2;
    ck_assert(am__layout_size(&d) >= dflt + 2 * 16 * AM_BULK_BYTES);
    d = c;
    d.max_senders *= 4;
    ck_assert(am__layout_size(&d) > dflt);
}
END_TEST

/* Queue kinds: mpsc by default; each kind from SHMAM_QUEUE and from the
 * option (which wins); channel kinds default to 64 packets and 4 bulk blocks
 * per channel; bad names refused (an empty variable is unset).  A channel
 * segment holds per sender its two channels and nothing of the shared queues:
 * it grows by exactly 2 x chan_bytes (plus a page for the entry) per sender,
 * and an endpoint says its kind. */
START_TEST(queue_kinds)
{
    struct am_config c;
    resolve_ok(NULL, &c, "default queue");
    ck_assert_int_eq(c.queue, AM_QUEUE_MPSC);
    for (int k = 0; k < AM_QUEUE_COUNT; k++) {
        setenv("SHMAM_QUEUE", am_queue_names[k], 1);
        resolve_ok(NULL, &c, am_queue_names[k]);
        ck_assert_msg(c.queue == (enum am_queue_kind)k, "SHMAM_QUEUE=%s gave kind %d",
                      am_queue_names[k], c.queue);
        ck_assert_msg(k == AM_QUEUE_MPSC ? c.packets == 128 && c.bulk_blocks == 16
                                         : c.packets == 64 && c.bulk_blocks == 4,
                      "%s: default sizes %u packets, %u bulk blocks", am_queue_names[k],
                      c.packets, c.bulk_blocks);
        struct am_ep_opts o = {.queue = am_queue_names[(k + 1) % AM_QUEUE_COUNT]};
        resolve_ok(&o, &c, "queue option over the environment");
        ck_assert_int_eq(c.queue, (k + 1) % AM_QUEUE_COUNT);
    }
    static const char *const bad[] = {"MPSC",    "ff",   " bqueue",
                                      "bqueue ", "spsc", "lamport2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("SHMAM_QUEUE", bad[i], 1);
        ck_assert_msg(am__config_resolve(NULL, 0, &c) == -EINVAL,
                      "SHMAM_QUEUE='%s' accepted", bad[i]);
        struct am_ep_opts o = {.queue = bad[i]};
        unsetenv("SHMAM_QUEUE");
        ck_assert_msg(am__config_resolve(&o, 0, &c) == -EINVAL, "queue '%s' accepted",
                      bad[i]);
    }
    setenv("SHMAM_QUEUE", "", 1);
    resolve_ok(NULL, &c, "empty SHMAM_QUEUE");
    ck_assert_int_eq(c.queue, AM_QUEUE_MPSC);
    unsetenv("SHMAM_QUEUE");
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int k = 1; k < AM_QUEUE_COUNT; k++) {
        struct am_ep_opts o = {.queue = am_queue_names[k], .max_senders = 4};
        resolve_ok(&o, &c, am_queue_names[k]);
        struct am_seg_header h;
        size_t s4 = am__layout_size(&c);
        c.max_senders = 5;
        size_t s5 = am__layout_size(&c);
        am_ep_t *ep = NULL;
        char name[64];
        tu_ep_name(name, sizeof name, am_queue_names[k], -1, 0);
        ck_assert_int_eq(am_ep_create(name, &o, &ep), 0);
        memcpy(&h, ep->own.hdr, sizeof h);
        printf("config: %s, 4 senders: %zu bytes, %llu per channel\n", am_queue_names[k],
               s4, (unsigned long long)h.chan_bytes);
        ck_assert_msg(
            strcmp(am_ep_queue(ep), am_queue_names[k]) == 0 && h.queue == (uint32_t)k &&
                h.send_off[0] == 0 && h.packets_off[1] == 0 && h.chan_off > 0 &&
                h.chan_bytes >= 64 * sizeof(struct am_packet) + 4 * AM_BULK_BYTES,
            "%s: endpoint says %s; header queue %u, shared queue at %llu, "
            "channels at %llu of %llu bytes",
            am_queue_names[k], am_ep_queue(ep), h.queue, (unsigned long long)h.send_off[0],
            (unsigned long long)h.chan_off, (unsigned long long)h.chan_bytes);
        size_t grow = s5 - s4, want = 2 * h.chan_bytes + page;
        ck_assert_msg(
            grow + page > want && grow < want + page, /* the heaps start on a page */
            "%s: a sender more adds %zu bytes, want 2 channels of %llu and a page",
            am_queue_names[k], grow, (unsigned long long)h.chan_bytes);
        ck_assert_int_eq(am_ep_destroy(ep), 0);
    }
    tu_assert_clean("queue kinds");
}
END_TEST

/* The segment the system made is exactly the computed size, in both backends. */
START_TEST(segment_size)
{
    int a = _i / 2, b = _i % 2;
    char name[64], what[64];
    snprintf(what, sizeof what, "%s/%s: segment size", am_claim_names[a],
             tu_backend_name(b));
    tu_ep_name(name, sizeof name, "size", a, b);
    struct am_ep_opts o = {am_claim_names[a], tu_backend_name(b), 0, 0, 0, 0, 0, NULL, 0};
    struct am_config c;
    resolve_ok(&o, &c, what);
    am_ep_t *ep = create_ok(name, &o, what);
    ck_assert_str_eq(am_ep_claim(ep), am_claim_names[a]);
    struct am_segment seg;
    int rc = am__segment_open((enum am_shm)b, name, &seg);
    ck_assert_msg(rc == 0, "%s: open: %s", what, am_strerror(rc));
    ck_assert_msg(seg.size == am__layout_size(&c), "%s: %zu bytes, computed %zu", what,
                  seg.size, am__layout_size(&c));
    const struct am_seg_header *h = seg.base;
    ck_assert_msg(h->magic == AM_MAGIC && h->version == AM_LAYOUT_VERSION &&
                      h->claim == (uint32_t)a && h->packets == 128 &&
                      h->bulk_blocks == 16 && h->max_senders == 64 &&
                      h->owner_pid == (uint32_t)getpid() && h->segment_size == seg.size &&
                      strcmp(h->name, name) == 0 && AO_load(&h->state) == AM_SEG_LIVE,
                  "%s: header does not describe the endpoint", what);
    am__segment_unmap(&seg);
    /* The other backend has nothing of that name. */
    rc = am__segment_open((enum am_shm) !b, name, &seg);
    ck_assert_msg(rc == -ENOENT, "%s: other backend open gave %d", what, rc);
    destroy_ok(ep, what);
    rc = am__segment_open((enum am_shm)b, name, &seg);
    ck_assert_msg(rc == -ENOENT, "%s: open after destroy gave %d", what, rc);
    tu_assert_clean(what);
}
END_TEST

/* am__view_attach refuses a segment that is not the endpoint it expects.  The
 * header of a real endpoint is corrupted one field at a time through a raw
 * mapping (an attached view maps the header read-only), checked, and restored;
 * the endpoint is then destroyed. */
START_TEST(attach_refuses)
{
    int a = _i / 2, b = _i % 2;
    char name[64], pname[64], what[64];
    snprintf(what, sizeof what, "%s/%s: attach", am_claim_names[a], tu_backend_name(b));
    tu_ep_name(name, sizeof name, "victim", a, b);
    tu_ep_name(pname, sizeof pname, "peer", a, b);
    struct am_ep_opts o = {am_claim_names[a], tu_backend_name(b), 0, 0, 0, 0, 0, NULL, 0};
    am_ep_t *victim = create_ok(name, &o, what), *peer = create_ok(pname, &o, what);
    struct am_segment seg, raw;
    struct am_seg_view v;
    int rc = am__segment_open((enum am_shm)b, name, &seg);
    ck_assert_msg(rc == 0, "%s: open: %s", what, am_strerror(rc));
    rc = am__segment_open((enum am_shm)b, name, &raw);
    ck_assert_msg(rc == 0, "%s: open: %s", what, am_strerror(rc));
    struct am_seg_header *h = raw.base, saved = *h;
    rc = am__view_attach(&v, &seg, name);
    ck_assert_msg(rc == 0, "%s: intact segment refused: %s", what, am_strerror(rc));
    ck_assert_msg(v.hdr == seg.base && v.q[1].packets_n == 128 && v.q[0].bulk_n == 16 &&
                      v.max_senders == 64 && (v.lock != NULL) == am__claim_locked(a),
                  "%s: view does not match the header", what);
    ck_assert_msg(am__view_attach(&v, &seg, pname) == -EPROTO, "%s: wrong name accepted",
                  what);
    struct am_segment small = seg;
    small.size = seg.size - 4096;
    ck_assert_msg(am__view_attach(&v, &small, name) == -EPROTO,
                  "%s: segment shorter than its header says accepted", what);
    for (int k = 0;; k++) {
        const char *field;
        *h = saved;
        switch (k) {
        case 0:
            field = "magic";
            h->magic ^= 1;
            break;
        case 1:
            field = "version";
            h->version = AM_LAYOUT_VERSION + 1;
            break;
        case 2:
            field = "claim";
            h->claim = AM_CLAIM_COUNT;
            break;
        case 3:
            field = "claim (another)";
            h->claim = (uint32_t)((a + 1) % n_algs);
            break;
        case 4:
            field = "packets (3)";
            h->packets = 3;
            break;
        case 5:
            field = "packets (256)";
            h->packets = 256;
            break;
        case 6:
            field = "packets (0)";
            h->packets = 0;
            break;
        case 7:
            field = "bulk_blocks (8)";
            h->bulk_blocks = 8;
            break;
        case 8:
            field = "bulk_blocks (0)";
            h->bulk_blocks = 0;
            break;
        case 9:
            field = "max_senders (65)";
            h->max_senders = 65;
            break;
        case 10:
            field = "max_senders (0)";
            h->max_senders = 0;
            break;
        case 11:
            field = "segment_size";
            h->segment_size += 4096;
            break;
        case 12:
            field = "senders_off";
            h->senders_off += 64;
            break;
        case 13:
            field = "send_off[1]";
            h->send_off[1] += 128;
            break;
        case 14:
            field = "recv_off[0]";
            h->recv_off[0] -= 128;
            break;
        case 15:
            field = "lock_off[0]";
            h->lock_off[0] = am__claim_locked((enum am_claim)a) ? 0 : 1024;
            break;
        case 16:
            field = "packets_off[1]";
            h->packets_off[1] = 0;
            break;
        case 17:
            field = "bulk_state_off[0]";
            h->bulk_state_off[0] += 64;
            break;
        case 18:
            field = "bulk_off[1]";
            h->bulk_off[1] = seg.size * 2;
            break;
        case 19:
            field = "name";
            h->name[0] ^= 0x20;
            break;
        case 20:
            field = "name (unterminated)";
            memset(h->name, 'x', AM_NAME_MAX);
            break;
        case 21:
            field = "page_size";
            h->page_size *= 2;
            break;
        case 22:
            field = "shared_off";
            h->shared_off -= 4096;
            break;
        case 23:
            field = "queue (no such kind)";
            h->queue = AM_QUEUE_COUNT;
            break;
        case 24:
            field = "queue (fastforward: no channels laid out)";
            h->queue = AM_QUEUE_FASTFORWARD;
            break;
        default:
            field = NULL;
        }
        if (!field)
            break;
        /* A claim change that keeps the layout (lock sizes agree) is not detectable
         * by the layout check; everything else must be refused. */
        struct am_config cc;
        resolve_ok(&o, &cc, what);
        size_t s1 = am__layout_size(&cc);
        cc.claim = (enum am_claim)((a + 1) % n_algs);
        if (k == 3 && am__layout_size(&cc) == s1)
            continue;
        rc = am__view_attach(&v, &seg, name);
        ck_assert_msg(rc == -EPROTO, "%s: corrupt %s gave %d, want -EPROTO", what, field,
                      rc);
        rc = am_ep_map(peer, 0, name);
        ck_assert_msg(rc == -EPROTO, "%s: am_ep_map with corrupt %s gave %d", what, field,
                      rc);
    }
    *h = saved;
    AO_store(&h->state, AM_SEG_INIT);
    ck_assert_msg(am__view_attach(&v, &seg, name) == -EAGAIN, "%s: INIT not -EAGAIN", what);
    AO_store(&h->state, AM_SEG_CLOSED);
    ck_assert_msg(am__view_attach(&v, &seg, name) == -EPIPE, "%s: CLOSED not -EPIPE", what);
    ck_assert_msg(am_ep_map(peer, 0, name) == -EPIPE, "%s: map CLOSED not -EPIPE", what);
    *h = saved;
    rc = am_ep_map(peer, 0, name);
    ck_assert_msg(rc == 0, "%s: restored segment refused: %s", what, am_strerror(rc));
    am__segment_unmap(&seg);
    am__segment_unmap(&raw);
    destroy_ok(peer, what);
    destroy_ok(victim, what);
    tu_assert_clean(what);
}
END_TEST

/* A System V segment is visible from the moment it is created, before its
 * header is written: an opener racing with the creator must be told -ENOENT or
 * -EAGAIN (try again), never -EPROTO.  A POSIX name shows only a complete
 * segment.  A child creates and destroys the endpoint over and over, pausing
 * half a millisecond in each creation before the segment goes LIVE (the
 * AM_HOOK_CREATING hook), while this process opens and attaches it as fast as
 * it can: System V must then have answered -EAGAIN (the window was hit), POSIX
 * never. */
static volatile AO_t *creating_seen; /* set by the opener at its first -EAGAIN */
static int creating_hold;            /* System V: hold the first window until then */

static void creating_pause(enum am_hook where)
{
    if (where != AM_HOOK_CREATING)
        return;
    /* The first window is held open until the opener has seen it (or 30 s
     * pass): on a busy machine the opener may not run inside a 0.5 ms pause
     * at all, and the test is about what it is told, not about being fast. */
    for (double end = tu_now_s() + 30;
         creating_hold && !AO_load(creating_seen) && tu_now_s() < end && getppid() != 1;)
        sched_yield();
    creating_hold = 0;
    usleep(500);
}

START_TEST(attach_while_creating)
{
    int a = _i / 2, b = _i % 2;
    char name[64], what[64];
    snprintf(what, sizeof what, "%s/%s: attach during creation", am_claim_names[a],
             tu_backend_name(b));
    tu_ep_name(name, sizeof name, "race", a, b);
    struct am_ep_opts o = {am_claim_names[a], tu_backend_name(b), 0, 0, 0, 0, 0, NULL, 0};
    const int rounds = 300 * tu_stress_factor();
    volatile AO_t *turn = tu_shared_alloc(4096); /* child's round; parent's; seen */
    creating_seen = &turn[2];
    creating_hold = b == AM_SHM_SYSV;
    pid_t p = fork();
    if (p == 0) {
        am__claim_stall_hook = creating_pause;
        for (int r = 1; r <= rounds; r++) {
            am_ep_t *ep;
            if (am_ep_create(name, &o, &ep) != 0)
                _exit(1);
            turn[0] = (AO_t)r; /* created */
            while (AO_load(&turn[1]) < (AO_t)r && getppid() != 1)
                sched_yield();
            am_ep_destroy(ep);
        }
        _exit(0);
    }
    int counts[6] = {0}, other = 0, other_rc = 0;
    for (int r = 1; r <= rounds; r++) {
        int rc;
        for (;;) {
            struct am_segment seg;
            struct am_seg_view v;
            rc = am__segment_open((enum am_shm)b, name, &seg);
            if (rc == 0) {
                rc = am__view_attach(&v, &seg, name);
                am__segment_unmap(&seg);
            }
            /* -EPIPE: last round's endpoint, closed and not yet unlinked. */
            int k = rc == 0         ? 0
                    : rc == -ENOENT ? 1
                    : rc == -EAGAIN ? 2
                    : rc == -EPIPE  ? 3
                    : rc == -EPROTO ? 4
                                    : 5;
            counts[k]++;
            if (k == 2)
                AO_store(&turn[2], 1);
            if (k == 5 && other++ == 0)
                other_rc = rc;
            if (rc == 0 && AO_load(&turn[0]) == (AO_t)r)
                break;
            if (k >= 4 && counts[4] + other > 1000)
                break;
        }
        AO_store(&turn[1], (AO_t)r);
        if (rc != 0)
            break;
    }
    AO_store(&turn[1], (AO_t)rounds);
    int st;
    ck_assert_msg(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "%s: creator failed", what);
    tu_shared_free((void *)turn, 4096);
    printf("config: %s: ok %d, -ENOENT %d, -EAGAIN %d, -EPIPE %d\n", what, counts[0],
           counts[1], counts[2], counts[3]);
    ck_assert_msg(counts[4] == 0, "%s: -EPROTO %d times while the creator was at work",
                  what, counts[4]);
    ck_assert_msg(other == 0, "%s: %d unexpected results, e.g. %d (%s)", what, other,
                  other_rc, am_strerror(other_rc));
    ck_assert_msg(b == AM_SHM_SYSV ? counts[2] > 0 : counts[2] == 0,
                  "%s: -EAGAIN %d times: %s", what, counts[2],
                  b == AM_SHM_SYSV ? "the half-made window was never hit"
                                   : "a POSIX name showed a half-made segment");
    tu_assert_clean(what);
}
END_TEST

/* ---- mapping, errors, argument checks ---- */

/* map_errors: messages counted per receiving endpoint (its handle's address
 * in arg[0] of each message: which endpoint the sender meant). */
static am_ep_t *map_eps[2];
static int map_got[2], map_wrong;

static void map_count(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    int k = am_token_ep(t) == map_eps[1];
    map_got[k]++;
    map_wrong += n != 1 || a[0] != (uint32_t)k;
}

START_TEST(map_errors)
{
    int b = _i;
    char name[64], other[64], missing[64], what[64];
    snprintf(what, sizeof what, "%s: map", tu_backend_name(b));
    tu_ep_name(name, sizeof name, "me", -1, b);
    tu_ep_name(other, sizeof other, "other", -1, b);
    tu_ep_name(missing, sizeof missing, "missing", -1, b);
    struct am_ep_opts o = {NULL, tu_backend_name(b), 0, 0, 0, 0, 0, NULL, 0};
    struct am_ep_opts o2 = {NULL, tu_backend_name(!b), 0, 0, 0, 0, 0, NULL, 0};
    am_ep_t *ep = create_ok(name, &o, what), *ot = create_ok(other, &o2, what);
    int rc = am_ep_map(ep, 0, missing);
    ck_assert_msg(rc == -ENOENT, "%s: missing peer gave %d", what, rc);
    ck_assert_msg(am_ep_map(ep, 0, "") == -EINVAL, "%s: empty name", what);
    ck_assert_msg(am_ep_map(ep, 0, "../x") == -EINVAL, "%s: bad name", what);
    ck_assert_msg(am_ep_map(ep, 0, NULL) == -EINVAL, "%s: NULL name", what);
    ck_assert_msg(am_ep_map(NULL, 0, other) == -EINVAL, "%s: NULL ep", what);
    ck_assert_msg(am_ep_map(ep, AM_MAX_PEERS, other) == -EINVAL, "%s: index too big", what);
    ck_assert_msg(am_ep_map(ep, ~0u, other) == -EINVAL, "%s: index ~0", what);
    /* A peer of the other backend is found too. */
    rc = am_ep_map(ep, 3, other);
    ck_assert_msg(rc == 0, "%s: map other-backend peer: %s", what, am_strerror(rc));
    ck_assert_msg(am_ep_map(ep, 3, other) == 0, "%s: same mapping again", what);
    ck_assert_msg(am_ep_map(ep, 3, name) == -EEXIST, "%s: index taken", what);
    ck_assert_msg(am_ep_map(ep, AM_MAX_PEERS - 1, name) == 0, "%s: largest index", what);
    /* Messages reach both, also through the largest index: each arrives at the
     * endpoint it was meant for, once. */
    map_eps[0] = ep, map_eps[1] = ot;
    map_got[0] = map_got[1] = map_wrong = 0;
    am_set_handler(ep, 1, map_count);
    am_set_handler(ot, 1, map_count);
    uint32_t to_ot = 1, to_me = 0;
    ck_assert_msg(am_request(ep, 3, 1, &to_ot, 1) == 0, "%s: send to 3", what);
    ck_assert_msg(am_request(ep, AM_MAX_PEERS - 1, 1, &to_me, 1) == 0, "%s: send big",
                  what);
    ck_assert_msg(am_request(ep, 4, 1, NULL, 0) == -EINVAL, "%s: unmapped 4", what);
    for (int i = 0; i < 1000 && map_got[0] + map_got[1] < 2; i++)
        am_poll(ep), am_poll(ot);
    ck_assert_msg(map_got[0] == 1 && map_got[1] == 1 && map_wrong == 0,
                  "%s: %d to itself, %d to the other backend's peer, %d misrouted", what,
                  map_got[0], map_got[1], map_wrong);
    destroy_ok(ot, what);
    destroy_ok(ep, what);
    tu_assert_clean(what);
}
END_TEST

START_TEST(error_texts)
{
    static const int codes[] = {-EINVAL, -ENOENT,  -EEXIST, -ENOSPC,   -EUSERS,
                                -EPIPE,  -EDEADLK, -EPROTO, -EMSGSIZE, -EALREADY};
    const size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        const char *s = am_strerror(codes[i]);
        ck_assert_msg(s && *s && strncmp(s, "Unknown error", 13) != 0,
                      "am_strerror(%d) gives no text", codes[i]);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(strcmp(s, am_strerror(codes[j])) != 0,
                          "am_strerror(%d) and (%d) are both '%s'", codes[i], codes[j], s);
    }
    ck_assert_msg(am_strerror(0) && *am_strerror(0), "am_strerror(0)");
    ck_assert_msg(am_strerror(-12345) && *am_strerror(-12345), "unknown code");
    /* Names for logs, from the same table. */
    ck_assert_str_eq(am_err_name(-EPIPE), "EPIPE");
    ck_assert_str_eq(am_err_name(-EACCES), "EACCES");
    ck_assert_str_eq(am_err_name(-EUSERS), "EUSERS");
    ck_assert_str_eq(am_err_name(0), "OK");
    ck_assert_str_eq(am_err_name(-12345), "E?");
}
END_TEST

START_TEST(request_args)
{
    int a = _i / 2, b = _i % 2;
    char name[64], what[64];
    snprintf(what, sizeof what, "%s/%s: arguments", am_claim_names[a], tu_backend_name(b));
    tu_ep_name(name, sizeof name, "args", a, b);
    struct am_ep_opts o = {am_claim_names[a], tu_backend_name(b), 0, 0, 0, 0, 0, NULL, 0};
    am_ep_t *ep = create_ok(name, &o, what);
    ck_assert_msg(am_ep_map(ep, 0, name) == 0, "%s: map self", what);
    ck_assert_msg(am_set_handler(ep, 7, count_h) == 0, "%s: set handler", what);
    ck_assert_msg(am_set_handler(ep, AM_MAX_HANDLERS, count_h) == -EINVAL,
                  "%s: handler 256", what);
    ck_assert_msg(am_set_handler(NULL, 7, count_h) == -EINVAL, "%s: NULL ep", what);
    static uint32_t args[AM_MAX_ARGS + 1] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    static unsigned char data[AM_MAX_BULK + 1];
    memset(data, 0x5a, sizeof data);
    static const struct {
        int nargs, handler, dest, bulk, null_args;
        size_t len;
        int want;
        const char *why;
    } cases[] = {
        {9, 7, 0, 0, 0, 0, -EMSGSIZE, "nargs 9"},
        {-1, 7, 0, 0, 0, 0, -EINVAL, "nargs -1"},
        {100, 7, 0, 0, 0, 0, -EMSGSIZE, "nargs 100"},
        {0, 256, 0, 0, 0, 0, -EINVAL, "handler 256"},
        {0, 257, 0, 0, 0, 0, -EINVAL, "handler 257 (internal)"},
        {0, 7, 1, 0, 0, 0, -EINVAL, "unmapped dest 1"},
        {0, 7, 100000, 0, 0, 0, -EINVAL, "unmapped dest 100000"},
        {2, 7, 0, 0, 1, 0, -EINVAL, "nargs 2, args NULL"},
        {0, 7, 0, 1, 0, AM_MAX_BULK + 1, -EMSGSIZE, "bulk len 8193"},
        {0, 7, 0, 1, 0, (size_t)1 << 40, -EMSGSIZE, "bulk len 2^40"},
        {9, 7, 0, 1, 0, 16, -EMSGSIZE, "bulk nargs 9"},
        {-1, 7, 0, 1, 0, 16, -EINVAL, "bulk nargs -1"},
        {0, 256, 0, 1, 0, 16, -EINVAL, "bulk handler 256"},
        {0, 7, 1, 1, 0, 16, -EINVAL, "bulk unmapped dest"},
        {0, 7, 0, 2, 0, 16, -EINVAL, "bulk data NULL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;
        const uint32_t *ap = cases[i].null_args ? NULL : args;
        if (cases[i].bulk)
            rc = am_request_bulk(ep, (unsigned)cases[i].dest, (unsigned)cases[i].handler,
                                 cases[i].bulk == 2 ? NULL : data, cases[i].len, ap,
                                 cases[i].nargs);
        else
            rc = am_request(ep, (unsigned)cases[i].dest, (unsigned)cases[i].handler, ap,
                            cases[i].nargs);
        ck_assert_msg(rc == cases[i].want, "%s: %s gave %d (%s), want %d", what,
                      cases[i].why, rc, am_strerror(rc), cases[i].want);
    }
    ck_assert_msg(am_request(NULL, 0, 7, NULL, 0) == -EINVAL, "%s: NULL ep", what);
    ck_assert_msg(am_reply(NULL, 7, NULL, 0) == -EINVAL, "%s: reply NULL token", what);
    ck_assert_msg(am_poll(NULL) == -EINVAL && am_wait(NULL, 0) == -EINVAL, "%s: NULL",
                  what);
    ck_assert_msg(am_poll(ep) == 0, "%s: a refused send was delivered", what);
    /* The limits themselves go through, intact. */
    ck_assert_msg(am_request(ep, 0, 7, args, AM_MAX_ARGS) == 0, "%s: 8 args", what);
    ck_assert_msg(am_poll(ep) == 1 && delivered == 1 && memcmp(last_args, args, 32) == 0,
                  "%s: 8 args not delivered intact", what);
    data[AM_MAX_BULK - 1] = 0xc3;
    ck_assert_msg(am_request_bulk(ep, 0, 7, data, AM_MAX_BULK, args, AM_MAX_ARGS) == 0,
                  "%s: 8192 bytes", what);
    ck_assert_msg(am_poll(ep) == 1 && delivered == 2 && last_len == AM_MAX_BULK &&
                      last_byte == 0xc3,
                  "%s: 8192 bytes not delivered intact", what);
    ck_assert_msg(am_request_bulk(ep, 0, 7, data, 0, NULL, 0) == 0, "%s: 0 bytes", what);
    ck_assert_msg(am_poll(ep) == 1 && delivered == 3 && last_len == 0, "%s: 0 bytes", what);
    /* A handler id with nothing registered is dropped and counted, not run. */
    ck_assert_msg(am_request(ep, 0, 8, NULL, 0) == 0, "%s: unregistered handler", what);
    fflush(stderr);
    int err = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2); /* the runtime reports the first bad packet: expected here */
    am_poll(ep);
    dup2(err, 2);
    close(err);
    close(null);
    ck_assert_msg(delivered == 3 && am_ep_bad_packets(ep) == 1,
                  "%s: unregistered handler: delivered %d, bad %lu", what, delivered,
                  am_ep_bad_packets(ep));
    destroy_ok(ep, what);
    ck_assert_msg(am_ep_destroy(NULL) == -EINVAL, "%s: destroy NULL", what);
    tu_assert_clean(what);
}
END_TEST

/* max_senders = 2: two mappers fit, a third gets -EUSERS until one leaves; the
 * entry of a sender that died is reclaimed when the table is full. */
START_TEST(senders_full)
{
    int a = _i / 2, b = _i % 2;
    char what[64], tn[64], mn[4][64];
    snprintf(what, sizeof what, "%s/%s: sender table", am_claim_names[a],
             tu_backend_name(b));
    tu_ep_name(tn, sizeof tn, "target", a, b);
    struct am_ep_opts o = {am_claim_names[a], tu_backend_name(b), 0, 0, 2, 0, 0, NULL, 0};
    am_ep_t *t = create_ok(tn, &o, what), *m[4];
    ck_assert_msg(am_set_handler(t, 1, count_h) == 0, "%s: set handler", what);
    for (int i = 0; i < 4; i++) {
        char role[16];
        snprintf(role, sizeof role, "m%d", i);
        tu_ep_name(mn[i], sizeof mn[i], role, a, b);
        m[i] = create_ok(mn[i], &o, what);
    }
    ck_assert_msg(am_ep_map(m[0], 0, tn) == 0, "%s: first mapper", what);
    ck_assert_msg(am_ep_map(m[1], 0, tn) == 0, "%s: second mapper", what);
    int rc = am_ep_map(m[2], 0, tn);
    ck_assert_msg(rc == -EUSERS, "%s: third mapper gave %d, want -EUSERS", what, rc);
    ck_assert_msg(am_request(m[2], 0, 1, NULL, 0) == -EINVAL, "%s: unmapped after -EUSERS",
                  what);
    ck_assert_msg(am_request(m[0], 0, 1, NULL, 0) == 0 &&
                      am_request(m[1], 0, 1, NULL, 0) == 0,
                  "%s: the two mappers cannot send", what);
    ck_assert_msg(am_poll(t) == 2, "%s: two messages not delivered", what);
    /* One leaves: the third fits. */
    destroy_ok(m[0], what);
    rc = am_ep_map(m[2], 0, tn);
    ck_assert_msg(rc == 0, "%s: map after a sender left: %s", what, am_strerror(rc));
    ck_assert_msg(am_request(m[2], 0, 1, NULL, 0) == 0 && am_poll(t) == 1,
                  "%s: message through the freed entry", what);
    /* m[1] leaves; a child takes its entry and dies without leaving the table. */
    destroy_ok(m[1], what);
    char cn[64];
    tu_ep_name(cn, sizeof cn, "child", a, b);
    pid_t p = fork();
    if (p == 0) {
        am_ep_t *c;
        if (am_ep_create(cn, &o, &c) != 0)
            _exit(1);
        int r = am_ep_map(c, 0, tn) == 0 ? 0 : 2;
        am__ep_unlink(c); /* no segment left behind; the sender entry is */
        _exit(r);
    }
    int st;
    ck_assert_msg(p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "%s: child could not map the target", what);
    rc = am_ep_map(m[3], 0, tn);
    ck_assert_msg(rc == 0, "%s: dead sender's entry not reclaimed: %s", what,
                  am_strerror(rc));
    ck_assert_msg(am_request(m[3], 0, 1, NULL, 0) == 0 && am_poll(t) == 1,
                  "%s: message through the reclaimed entry", what);
    destroy_ok(m[2], what);
    destroy_ok(m[3], what);
    destroy_ok(t, what);
    tu_assert_clean(what);
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("options");
    tcase_set_timeout(tc, 20);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, from_env_and_opts);
    tcase_add_test(tc, opts_override_env);
    tcase_add_test(tc, bad_values);
    tcase_add_test(tc, layout_size);
    tcase_add_test(tc, queue_kinds);
    tcase_add_test(tc, error_texts);
    suite_add_tcase(s, tc);

    tc = tcase_create("endpoints");
    tcase_set_timeout(tc, 20);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, names);
    tcase_add_loop_test(tc, double_create, 0, 2);
    tcase_add_loop_test(tc, reclaim_stale, 0, 2);
    tcase_add_loop_test(tc, segment_size, 0, tu_combos());
    tcase_add_loop_test(tc, attach_refuses, 0, tu_combos());
    tcase_add_loop_test(tc, attach_while_creating, 0, tu_combos());
    tcase_add_loop_test(tc, map_errors, 0, 2);
    tcase_add_loop_test(tc, request_args, 0, tu_combos());
    tcase_add_loop_test(tc, senders_full, 0, tu_combos());
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("cf");
    n_algs = tu_n_algs();
    return tu_run_suite(config_suite(), "check_config");
}
