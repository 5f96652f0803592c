/*
 * stat.c - median and spread of rounds, ABBA order, rows (see stat.h).
 */
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "stat.h"

struct bm_stat bm_stat_of(const double *v, int n)
{
    struct bm_stat s = {0, 0, 0, 0};
    if (n <= 0)
        return s;
    double *c = malloc((size_t)n * sizeof *c);
    if (!c)
        return s;
    memcpy(c, v, (size_t)n * sizeof *c);
    s.median = bm_median(c, n); /* sorts c */
    s.lo = c[0];
    s.hi = c[n - 1];
    s.n = n;
    free(c);
    return s;
}

struct bm_stat bm_stat_ratio(const double *a, const double *b, int n)
{
    double *q = malloc((size_t)(n > 0 ? n : 1) * sizeof *q);
    struct bm_stat s = {0, 0, 0, 0};
    if (!q)
        return s;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (b[i] != 0)
            q[m++] = a[i] / b[i];
    s = bm_stat_of(q, m);
    free(q);
    return s;
}

int bm_abba(int r, int k, int n)
{
    return r % 2 ? n - 1 - k : k;
}

void bm_print(const struct bm_row *r, const char *impl, long iters, const char *metric,
              struct bm_stat s, const char *unit, int prec)
{
    if (s.n == 0)
        return;
    fprintf(r->out, "%s,%s,%s,%d,%d,%ld,%s,%.*f,%s,%.*f-%.*f\n", r->bench, impl, r->shm,
            r->procs, r->pinned, iters, metric, prec, s.median, unit, prec, s.lo, prec,
            s.hi);
}

void bm_print_header(FILE *out)
{
    fprintf(out, "bench,impl,shm,procs,pinned,iters,metric,value,unit,spread\n");
}
