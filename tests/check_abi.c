/*
 * check_abi.c - the shared library as a user links it (B/lib/libshmam.so.1):
 *
 *   exports_only_the_api  nm -D lists exactly the am_ names include/shmam.h
 *                         declares (every function and am_claim_names), and
 *                         nothing of the runtime's internals (am__) or the lock
 *                         library (am_lock_).
 *   soname                readelf -d names libshmam.so.1 as its soname.
 *   runs                  prog_dyn, linked against it, sends itself 3 messages
 *                         and delivers them with the shared library mapped.
 *   opts_layout           struct am_ep_opts, which users fill and the library
 *                         reads, keeps every field where a program built
 *                         against an older header put it (LP64): fields are
 *                         only ever added at the end.
 *
 * Run from the repository root (run-tests.sh does), where include/shmam.h is.
 */
#include <check.h>
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MAX_NAMES 128

static struct tu_output out;

/* The names sorted, as one space-separated string (for messages and compare). */
static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void joined(char **v, int n, char *buf, size_t len)
{
    qsort(v, (size_t)n, sizeof *v, by_str);
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        if (i == 0 || strcmp(v[i], v[i - 1]) != 0)
            snprintf(buf + strlen(buf), len - strlen(buf), "%s ", v[i]);
}

/* The am_ names include/shmam.h declares: an identifier am_[a-z_]* followed by
 * '(' or '[' (a function, or the name array), wherever it is written. */
static int declared(char **v)
{
    FILE *f = fopen("include/shmam.h", "r");
    ck_assert_msg(f != NULL, "include/shmam.h: run from the repository root");
    static char text[64 * 1024];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    int n = 0;
    for (const char *p = text; (p = strstr(p, "am_")) != NULL && n < MAX_NAMES;) {
        const char *q = p + 3;
        int starts = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        while (islower((unsigned char)*q) || *q == '_')
            q++;
        const char *r = q;
        while (*r == ' ')
            r++;
        if (starts && !isalnum((unsigned char)*q) && (*r == '(' || *r == '['))
            v[n++] = strndup(p, (size_t)(q - p));
        p = q;
    }
    return n;
}

/* The names the shared library defines for the dynamic linker. */
static int exported(char **v)
{
    char lib[PATH_MAX];
    ck_assert_msg(tu_program(lib, sizeof lib, "lib/libshmam.so.1"), "no %s", lib);
    const char *argv[] = {"nm", "-D", "--defined-only", lib, NULL};
    ck_assert_msg(tu_run_capture(argv, NULL, TU_ERR_APART, 30, &out) == 0, "nm: %s",
                  out.err);
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(out.out, "\n", &save); line && n < MAX_NAMES;
         line = strtok_r(NULL, "\n", &save)) {
        char addr[64], type[8], name[256];
        if (sscanf(line, "%63s %7s %255s", addr, type, name) == 3)
            v[n++] = strdup(name);
    }
    return n;
}

START_TEST(exports_only_the_api)
{
    char *want[MAX_NAMES], *have[MAX_NAMES];
    static char w[8192], h[8192];
    int nw = declared(want), nh = exported(have);
    ck_assert_msg(nw >= 20, "only %d names found in shmam.h", nw);
    joined(want, nw, w, sizeof w);
    joined(have, nh, h, sizeof h);
    for (int i = 0; i < nw; i++)
        free(want[i]);
    for (int i = 0; i < nh; i++)
        free(have[i]);
    ck_assert_msg(strcmp(w, h) == 0, "exported:\n  %s\ndeclared:\n  %s", h, w);
    ck_assert_msg(!strstr(h, "am__") && !strstr(h, "am_lock_"), "internals exported: %s",
                  h);
}
END_TEST

START_TEST(soname)
{
    char lib[PATH_MAX];
    tu_program(lib, sizeof lib, "lib/libshmam.so.1");
    const char *argv[] = {"readelf", "-d", lib, NULL};
    ck_assert_msg(tu_run_capture(argv, NULL, TU_ERR_APART, 30, &out) == 0, "readelf");
    ck_assert_msg(strstr(out.out, "Library soname: [libshmam.so.1]"), "soname:\n%s",
                  out.out);
}
END_TEST

START_TEST(runs)
{
    char prog[PATH_MAX], name[64];
    ck_assert_msg(tu_program(prog, sizeof prog, "tests/prog_dyn"), "no %s", prog);
    tu_ep_name(name, sizeof name, "dyn", -1, 0);
    const char *argv[] = {prog, name, NULL};
    int rc = tu_run_capture(argv, NULL, TU_ERR_MERGED, 30, &out);
    ck_assert_msg(rc == 0 && strstr(out.out, "delivered 3 from libshmam.so.1"),
                  "prog_dyn: exit %d: %s", rc, out.out);
    tu_assert_clean("prog_dyn");
}
END_TEST

START_TEST(opts_layout)
{
    static const struct {
        const char *field;
        size_t off, at;
    } f[] = {
#define AT(name, at) {#name, offsetof(struct am_ep_opts, name), at}
        AT(claim, 0),        AT(shm, 8),          AT(packets, 16),
        AT(bulk_blocks, 20), AT(max_senders, 24), AT(abandon_ms, 28),
        AT(long_max, 32),    AT(queue, 40),       AT(send_timeout_ms, 48),
#undef AT
    };
    if (sizeof(void *) != 8)
        return; /* the offsets below are LP64's */
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        ck_assert_msg(f[i].off == f[i].at, "am_ep_opts.%s at %zu, was at %zu", f[i].field,
                      f[i].off, f[i].at);
    ck_assert_msg(sizeof(struct am_ep_opts) == 56, "am_ep_opts is %zu bytes, was 56",
                  sizeof(struct am_ep_opts));
}
END_TEST

static Suite *abi_suite(void)
{
    Suite *s = suite_create("abi");
    TCase *tc = tcase_create("shared library");
    tcase_add_checked_fixture(tc, tu_test_init, NULL);
    tcase_add_test(tc, exports_only_the_api);
    tcase_add_test(tc, soname);
    tcase_add_test(tc, runs);
    tcase_add_test(tc, opts_layout);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("ab");
    return tu_run_suite(abi_suite(), "check_abi");
}
