/*
 * check_preload.c - libshmam-locks.so (locks/preload/) inside unmodified
 * programs, with every lock of am_lock_table:
 *   conformance  tests/prog_preload (plain pthreads: exclusion, trylock,
 *                timedlock, error-checking and recursive types, condition
 *                variables, a process-shared robust mutex shared by two
 *                processes, its holder SIGKILLed: EOWNERDEAD from lock and
 *                trylock, consistent, ENOTRECOVERABLE) passes under the
 *                preload with every lock and waiting policy, and the
 *                preload was in use: its statistics (SHMAM_LOCK_STATS=1)
 *                name the lock, count at least the acquisitions the
 *                program made, and mark no mutex as kept glibc's (the
 *                process-shared robust one is the lock's too);
 *   xz           Debian's xz, compressing a fixed input with 2 threads in
 *                small blocks (its threads meet on a mutex and condition
 *                variables for every block), writes the same bytes under the
 *                preload with every lock as without it;
 *   refused      an unknown SHMAM_LOCK ends the program with a message.
 * Skipped in a sanitizer build: an instrumented shared library cannot be
 * preloaded into uninstrumented programs.  Every failure message starts
 * with the lock's name.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

#define RUN_S 120.0         /* one program run's bound */
#define ITERS 4000L         /* prog_preload's loops; with the spin policy SPIN_ITERS */
#define SPIN_ITERS 300L     /* FIFO locks that never yield convoy: a time slice a turn */
#define XZ_INPUT (3u << 20) /* bytes of xz's input */
#define TCASE_TIMEOUT_S 900

static const char *const waits[] = {"yield", "spin", "park"};

static int lock_count(void)
{
    int n = 0;

    while (am_lock_table[n])
        n++;
    return n;
}

/* The preload library's path in this build, or fails the test. */
static void preload_path(char *buf, size_t n)
{
    ck_assert_msg(tu_program(buf, n, "lib/libshmam-locks.so"),
                  "build/lib/libshmam-locks.so missing");
}

/* Runs argv with the preload (lock NULL: without it) and `wait`, stats on;
 * returns the output (malloc'ed; the caller frees). */
static struct tu_output *run(const char *const *argv, const char *lock, const char *wait)
{
    static char pre[PATH_MAX + 16], name[64], pol[64];
    char so[PATH_MAX];
    struct tu_output *o = malloc(sizeof *o);

    ck_assert(o != NULL);
    preload_path(so, sizeof so);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", so);
    snprintf(name, sizeof name, "SHMAM_LOCK=%s", lock ? lock : "");
    snprintf(pol, sizeof pol, "SHMAM_LOCK_WAIT=%s", wait);
    const char *env[] = {lock ? pre : "LD_PRELOAD", name, pol, "SHMAM_LOCK_STATS=1", NULL};
    tu_run_capture(argv, env, TU_ERR_APART, RUN_S, o);
    return o;
}

/* The acquisitions the preload's statistics report for the busiest mutex
 * (its first line), or -1 if there is no report for `lock`. */
static long busiest(const struct tu_output *o, const char *lock)
{
    char head[96];
    const char *p;

    snprintf(head, sizeof head, "shmam-locks: lock %s wait ", lock);
    if (!(p = strstr(o->err, head)) || !(p = strstr(p, "acquisitions ")))
        return -1;
    return strtol(p + strlen("acquisitions "), NULL, 10);
}

/* ---- conformance ---- */

START_TEST(conformance)
{
    const char *lock = am_lock_table[_i / 3]->name, *wait = waits[_i % 3];
    char prog[PATH_MAX];

    if (SANITIZED)
        return;
    ck_assert_msg(tu_program(prog, sizeof prog, "tests/prog_preload"),
                  "prog_preload missing");
    long iters = strcmp(wait, "spin") == 0 ? SPIN_ITERS : ITERS, acq;
    char arg[32];
    snprintf(arg, sizeof arg, "%ld", iters);
    const char *argv[] = {prog, arg, NULL};
    struct tu_output *o = run(argv, lock, wait);
    acq = busiest(o, lock);
    ck_assert_msg(o->status == 0, "%s/%s: prog_preload exit %d: %s%s", lock, wait,
                  o->status, o->out, o->err);
    ck_assert_msg(acq >= 4 * iters,
                  "%s/%s: busiest mutex %ld acquisitions (want >= %ld): %s", lock, wait,
                  acq, 4 * iters, o->err);
    ck_assert_msg(strstr(o->err, "(glibc's)") == NULL, "%s/%s: a mutex kept glibc's: %s",
                  lock, wait, o->err);
    free(o);
}
END_TEST

/* ---- xz ---- */

static char dir[64];

/* A fixed input: words of a fixed pseudo-random sequence (compressible, but
 * not trivially). */
static void write_input(const char *path)
{
    FILE *f = fopen(path, "w");
    unsigned long long x = 88172645463325252ull;

    ck_assert_msg(f != NULL, "cannot write %s", path);
    for (unsigned n = 0; n < XZ_INPUT;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned len = 2 + (unsigned)(x % 7);
        for (unsigned i = 0; i < len; i++)
            fputc('a' + (int)((x >> (8 + 3 * i)) % 10), f);
        fputc(x % 13 ? ' ' : '\n', f);
        n += len + 1;
    }
    fclose(f);
}

/* The contents of path (malloc'ed) and their length in *len. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    char *b;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    b = malloc(*len + 1);
    if (b && fread(b, 1, *len, f) != *len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* Compresses dir/in into dir/in.SUFFIX.xz under lock (NULL: without the
 * preload); returns the output's bytes. */
static char *xz(const char *lock, const char *suffix, size_t *len)
{
    char in[128], sfx[64], out[160];

    snprintf(in, sizeof in, "%s/in", dir);
    snprintf(sfx, sizeof sfx, ".%s.xz", suffix);
    snprintf(out, sizeof out, "%s%s", in, sfx);
    const char *argv[] = {"xz", "-T2", "--block-size=65536", "-3", "-k", "-f", "-S", sfx,
                          in,   NULL};
    struct tu_output *o = run(argv, lock, "yield");
    ck_assert_msg(o->status == 0, "%s: xz exit %d: %s", suffix, o->status, o->err);
    ck_assert_msg(!lock || busiest(o, lock) > 0,
                  "%s: no statistics, preload not in use: %s", suffix, o->err);
    free(o);
    char *b = slurp(out, len);
    ck_assert_msg(b != NULL, "%s: no output %s", suffix, out);
    unlink(out);
    return b;
}

static void xz_setup(void)
{
    char in[128];

    snprintf(dir, sizeof dir, "/tmp/check_preload.XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(in, sizeof in, "%s/in", dir);
    write_input(in);
}

/* Removes the input and whatever output a failed test left. */
static void xz_teardown(void)
{
    char path[160];

    for (int i = -1; i < lock_count(); i++) {
        snprintf(path, sizeof path, "%s/in.%s.xz", dir,
                 i < 0 ? "glibc" : am_lock_table[i]->name);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/in", dir);
    unlink(path);
    rmdir(dir);
}

START_TEST(xz_same_output)
{
    const char *lock = am_lock_table[_i]->name;
    size_t n0, n;

    if (SANITIZED || access("/usr/bin/xz", X_OK) != 0)
        return;
    char *want = xz(NULL, "glibc", &n0);
    char *got = xz(lock, lock, &n);
    ck_assert_msg(n == n0 && memcmp(want, got, n) == 0,
                  "%s: xz wrote %zu bytes under the preload, %zu without, or other bytes",
                  lock, n, n0);
    free(want);
    free(got);
}
END_TEST

/* ---- refused ---- */

START_TEST(unknown_lock_refused)
{
    char prog[PATH_MAX];

    if (SANITIZED)
        return;
    ck_assert(tu_program(prog, sizeof prog, "tests/prog_preload"));
    const char *argv[] = {prog, NULL};
    struct tu_output *o = run(argv, "nope", "yield");
    ck_assert_msg(o->status == 2 && strstr(o->err, "SHMAM_LOCK names no lock") &&
                      !strstr(o->out, "ok "),
                  "nope: exit %d, stderr %s", o->status, o->err);
    free(o);
}
END_TEST

static Suite *preload_suite(void)
{
    Suite *s = suite_create("preload");
    TCase *conf = tcase_create("conformance");
    TCase *prog = tcase_create("programs");
    int n = lock_count();

    tcase_add_loop_test(conf, conformance, 0, 3 * n);
    tcase_add_test(conf, unknown_lock_refused);
    tcase_add_unchecked_fixture(prog, xz_setup, xz_teardown);
    tcase_add_loop_test(prog, xz_same_output, 0, n);
    tcase_set_timeout(conf, TCASE_TIMEOUT_S);
    tcase_set_timeout(prog, TCASE_TIMEOUT_S);
    suite_add_tcase(s, conf);
    suite_add_tcase(s, prog);
    return s;
}

int main(void)
{
    tu_run_init("pl");
    return tu_run_suite(preload_suite(), "check_preload");
}
