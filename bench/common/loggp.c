/*
 * loggp.c - sizes, counts and quantiles of the LogGP benchmarks (loggp.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/loggp.h"
#include "common/measure.h"

const long lg_delays[LG_ND] = {0, 250, 500, 1000, 2000, 4000};
const double lg_q[LG_NQ] = {0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99, 0.999, 1};
const char *const lg_fig_name[LG_NFIG] = {"rtt", "rtt0",    "prttn", "prttd",  "g",
                                          "os",  "os_prtt", "or",    "or_poll"};
const char *const lg_q_name[LG_NQ] = {"p01", "p05", "p10", "p25",  "p50", "p75",
                                      "p90", "p95", "p99", "p999", "max"};

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

int lg_sizes(size_t max, const size_t *lim, int nlim, size_t *s)
{
    int n = 0;
    s[n++] = 0;
    for (size_t z = 1; z <= max && n < LG_MAX_SIZES; z *= 2)
        s[n++] = z;
    for (int i = 0; i < nlim; i++)
        for (size_t z = lim[i]; z <= lim[i] + 1; z++)
            if (z <= max && n < LG_MAX_SIZES)
                s[n++] = z;
    qsort(s, (size_t)n, sizeof *s, cmp_size);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || s[i] != s[m - 1])
            s[m++] = s[i];
    return m;
}

long lg_count(size_t s, long per, long least)
{
    long c = s <= 8192 ? per : (long)((double)per * 8192.0 / (double)s);
    return c > least ? c : least;
}

/* The nearest-rank q-quantile of sorted v[0..n-1]: the ceil(q n)-th smallest. */
static double nearest_rank(const double *v, long n, double q)
{
    long k = (long)ceil(q * (double)n);
    return v[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

struct bm_stat lg_quantile(double *v, int rounds, long m, double q)
{
    struct bm_stat s = {0, 0, 0, 0};
    long all = (long)rounds * m;
    double *c = all > 0 ? malloc((size_t)all * sizeof *c) : NULL;
    if (!c)
        return s;
    for (int r = 0; r < rounds; r++) {
        qsort(v + r * m, (size_t)m, sizeof *v, bm_cmp_double);
        double x = nearest_rank(v + r * m, m, q);
        s.lo = r == 0 || x < s.lo ? x : s.lo;
        s.hi = r == 0 || x > s.hi ? x : s.hi;
    }
    memcpy(c, v, (size_t)all * sizeof *c);
    qsort(c, (size_t)all, sizeof *c, bm_cmp_double);
    s.median = nearest_rank(c, all, q);
    s.n = rounds;
    free(c);
    return s;
}

int64_t lg_recv_at(int64_t t1, int k, long p)
{
    return t1 + (int64_t)k * p + p / LG_WAIT_EXTRA;
}

double lg_median(double *v, long n)
{
    return n > 0 ? bm_median(v, n) : NAN;
}

int lg_mark_off(const double *v, int n, size_t stride, unsigned char *keep)
{
    double c[LG_MAX_ROUNDS + 1];
    int m = 0, off = 0;
    for (int k = 0; k < n && m <= LG_MAX_ROUNDS; k++)
        if (!isnan(v[(size_t)k * stride]))
            c[m++] = v[(size_t)k * stride];
    double med = lg_median(c, m);
    if (!(med > 0))
        return 0;
    for (int k = 0; k < n; k++) {
        double x = v[(size_t)k * stride];
        if (keep[k] && !isnan(x) && (x > LG_OFF_FACTOR * med || x * LG_OFF_FACTOR < med))
            keep[k] = 0, off++;
    }
    return off;
}

int lg_drop_rounds(FILE *out, const char *impl, size_t size, const double *f, int rounds,
                   size_t stride, unsigned char *keep)
{
    unsigned char was[LG_MAX_ROUNDS + 1];
    memcpy(was, keep, (size_t)rounds);
    for (int j = 0; j < LG_NPRTT; j++)
        lg_mark_off(f + j, rounds, stride, keep);
    int n = 0, kept = 0;
    for (int k = 0; k < rounds; k++)
        kept += keep[k];
    if (2 * kept <= rounds) { /* the "others" are no majority: judge none */
        fprintf(out, "# loggp: %s, %zu B: rounds too far apart to leave any out\n", impl,
                size);
        memcpy(keep, was, (size_t)rounds);
        return 0;
    }
    for (int k = 0; k < rounds; k++)
        if (was[k] && !keep[k]) {
            const double *r = f + (size_t)k * stride;
            fprintf(out,
                    "# loggp: %s, %zu B: round %d left out (a PRTT %.1fx off the rounds' "
                    "median): rtt %.4f rtt0 %.4f prttn %.4f prttd %.4f us\n",
                    impl, size, k, LG_OFF_FACTOR, r[LG_RTT], r[LG_RTT0], r[LG_PN],
                    r[LG_PD]);
            n++;
        }
    return n;
}

struct bm_stat lg_of_rounds(const double *f, int rounds, size_t stride,
                            const unsigned char *keep)
{
    double v[LG_MAX_ROUNDS + 1];
    int n = 0;
    for (int k = 0; k < rounds; k++)
        if (keep[k] && !isnan(f[(size_t)k * stride]))
            v[n++] = f[(size_t)k * stride];
    return bm_stat_of(v, n);
}
