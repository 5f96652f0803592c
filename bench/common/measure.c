/*
 * measure.c - clocks, medians, pinning and --help for the benchmarks (see
 * measure.h).
 */
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure.h"

double bm_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double bm_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int bm_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bm_median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, bm_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bm_stamp(char *p, size_t n, uint32_t s)
{
    memcpy(p, &s, 4);
    memcpy(p + n - 4, &s, 4);
}

int bm_stamped(const char *p, size_t n, uint32_t s)
{
    uint32_t a, b;
    if (n < 8)
        return 0;
    memcpy(&a, p, 4);
    memcpy(&b, p + n - 4, 4);
    return a == s && b == s;
}

int bm_pinned_cpu(void)
{
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) != 0 || CPU_COUNT(&s) != 1)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &s))
            return c;
    return -1;
}

int bm_asks_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

const char *bm_program_beside(const char *name)
{
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
    if (n <= 0 || strlen(name) > 60)
        return NULL;
    path[n] = 0;
    char *slash = strrchr(path, '/');
    strcpy(slash ? slash + 1 : path, name);
    return access(path, X_OK) == 0 ? path : NULL;
}

int bm_reap(const pid_t *pid, unsigned n, double stuck_s)
{
    double end = bm_now_s() + stuck_s;
    int failed = 0, st = 0;
    for (unsigned i = 0; i < n; i++) {
        while (waitpid(pid[i], &st, WNOHANG) == 0) {
            if (bm_now_s() > end) {
                kill(pid[i], SIGKILL);
                waitpid(pid[i], &st, 0);
                break;
            }
            usleep(1000);
        }
        failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    return failed;
}

int bm_baseline_flag(int argc, char **argv, int *i, const char **path)
{
    if (strcmp(argv[*i], "--boost") == 0 && *i + 1 < argc) {
        *path = argv[++*i];
        return 1;
    }
    if (strcmp(argv[*i], "--no-boost") == 0) {
        *path = NULL;
        return 1;
    }
    return 0;
}

int bm_arg_long(const char *s, long min, long *v)
{
    char *end;
    if (!s)
        return -1;
    *v = strtol(s, &end, 10);
    return end == s || *end || *v < min ? -1 : 0;
}

int bm_parse_sizes(const char *s, size_t *sizes, int max)
{
    int n = 0;
    for (const char *p = s ? s : ""; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 8 || v > (1L << 30) || n == max ||
            (n && (size_t)v <= sizes[n - 1]) || (*end && *end != ','))
            return -1;
        sizes[n++] = (size_t)v;
        p = *end ? end + 1 : end;
    }
    return n ? n : -1;
}

int bm_parse_counts(const char *s, unsigned *v, int max, unsigned lo, unsigned hi)
{
    int n = 0;
    for (const char *p = s ? s : ""; *p;) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < (long)lo || x > (long)hi || n == max || (*end && *end != ','))
            return -1;
        v[n++] = (unsigned)x;
        p = *end ? end + 1 : end;
    }
    return n ? n : -1;
}

long bm_opt_long(const char *s, long min, void (*bad)(void))
{
    return bm_opt_range(s, min, LONG_MAX, bad);
}

long bm_opt_range(const char *s, long lo, long hi, void (*bad)(void))
{
    long v = 0;
    if (bm_arg_long(s, lo, &v) < 0 || v > hi)
        bad();
    return v;
}

int bm_opt_sizes(const char *s, size_t *sizes, int max, void (*bad)(void))
{
    int n = bm_parse_sizes(s, sizes, max);
    if (n < 0)
        bad();
    return n;
}
