/*
 * fft_local.c - the 3-D FFT's local work (see fft_local.h).
 *
 * The input is a function of the global index alone (a seeded hash, or the
 * plane wave's integer phase), so it does not depend on P nor on the version.
 * The checks compare in relative terms and count NaN as the worst error, so a
 * broken result can never pass by producing NaN.
 */
#include "common/fft_local.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const fft_phase_name[FFT_PHASES] = {"init",      "fft2d", "transpose",
                                                "rearrange", "fft1d", "verify"};

void fft_options_init(struct fft_options *o)
{
    *o = (struct fft_options){.n = 64, .seed = 12345};
}

int fft_option(struct fft_options *o, int c, const char *arg)
{
    char *end;

    switch (c) {
    case 'n':
        o->n = strtol(arg, &end, 10);
        return *end || o->n < 1 || o->n > 2048 ? -1 : 0;
    case 'i':
        o->inverse = 1;
        return 0;
    case 'I':
        o->input = arg;
        return 0;
    case 'k':
        o->have_k = 1;
        return sscanf(arg, "%ld,%ld,%ld", &o->k[0], &o->k[1], &o->k[2]) != 3 ? -1 : 0;
    case 's':
        o->seed = strtoull(arg, NULL, 0);
        return 0;
    case 'c':
        o->corrupt = 1;
        return 0;
    }
    return -1;
}

int fft_options_finish(struct fft_options *o)
{
    if (o->input && strcmp(o->input, "planewave") && strcmp(o->input, "random"))
        return -1;
    o->random = o->input ? !strcmp(o->input, "random") : o->inverse;
    /* Default wave vector: off the axes, landing away from rank 0 after the
     * transpose whenever P > 1. */
    if (!o->have_k) {
        o->k[0] = 1;
        o->k[1] = o->n * 5 / 8 + 1;
        o->k[2] = o->n - 3;
    }
    for (int i = 0; i < 3; i++)
        o->k[i] = ((o->k[i] % o->n) + o->n) % o->n;
    return 0;
}

/* splitmix64: a seeded value per global index, so the input does not depend
 * on P. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double unit(uint64_t h)
{
    return (double)(h >> 11) * 0x1.0p-52 - 1.0; /* [-1, 1) */
}

/* exp(2 pi i m / N) from the integer phase m, reduced mod N first so large
 * products lose no accuracy. */
static cplx twiddle(long long m, int n)
{
    double th = 2.0 * M_PI * (double)(((m % n) + n) % n) / n;
    return cos(th) + I * sin(th);
}

/* The input values of this rank's x-slab, into v. */
static void fill_input(const struct fft_local *f, const struct fft_options *o, cplx *v)
{
    size_t nn = (size_t)f->n * f->n;

    for (size_t i = 0; i < f->slab; i++) {
        long long x = (long long)f->me * f->m + (long long)(i / nn);
        long long y = (long long)(i / f->n % f->n), z = (long long)(i % f->n);
        if (o->random) {
            uint64_t g = (uint64_t)x * nn + i % nn;
            uint64_t h = mix(o->seed ^ (2 * g)), h2 = mix(o->seed ^ (2 * g + 1));
            v[i] = unit(h) + I * unit(h2);
        } else {
            v[i] = twiddle(o->k[0] * x + o->k[1] * y + o->k[2] * z, f->n);
        }
    }
}

int fft_local_size(struct fft_local *f, long n)
{
    if (n % f->p) {
        if (f->me == 0)
            fprintf(stderr,
                    "%s: N = %ld is not a multiple of P = %d: every rank must own N/P "
                    "whole planes\n",
                    f->prog, n, f->p);
        return -1;
    }
    f->n = (int)n;
    f->m = f->n / f->p;
    f->slab = (size_t)f->m * f->n * f->n;
    return 0;
}

const char *fft_local_setup(struct fft_local *f, const struct fft_options *o)
{
    int n = f->n, dims[2] = {n, n}, len[1] = {n}, how1 = f->m * n;
    size_t bytes = f->slab * sizeof(cplx);

    f->b = fftw_malloc(bytes);
    f->x0 = o->random || o->inverse ? fftw_malloc(bytes) : NULL;
    if (!f->b || ((o->random || o->inverse) && !f->x0))
        return "out of memory";
    /* FFTW_ESTIMATE plans without touching the arrays. */
    fftw_complex *a = (fftw_complex *)f->a, *b = (fftw_complex *)f->b;
    f->fwd2 = fftw_plan_many_dft(2, dims, f->m, a, NULL, 1, n * n, a, NULL, 1, n * n,
                                 FFTW_FORWARD, FFTW_ESTIMATE);
    f->bwd2 = fftw_plan_many_dft(2, dims, f->m, a, NULL, 1, n * n, a, NULL, 1, n * n,
                                 FFTW_BACKWARD, FFTW_ESTIMATE);
    f->fwd1 = fftw_plan_many_dft(1, len, how1, b, NULL, 1, n, b, NULL, 1, n, FFTW_FORWARD,
                                 FFTW_ESTIMATE);
    f->bwd1 = fftw_plan_many_dft(1, len, how1, b, NULL, 1, n, b, NULL, 1, n, FFTW_BACKWARD,
                                 FFTW_ESTIMATE);
    if (!f->fwd2 || !f->bwd2 || !f->fwd1 || !f->bwd1)
        return "FFTW could not plan";
    memset(f->b, 0, bytes); /* fault its pages in before timing */
    fill_input(f, o, f->a);
    if (f->x0)
        memcpy(f->x0, f->a, bytes);
    return NULL;
}

void fft_local_free(struct fft_local *f)
{
    fftw_destroy_plan(f->fwd2);
    fftw_destroy_plan(f->bwd2);
    fftw_destroy_plan(f->fwd1);
    fftw_destroy_plan(f->bwd1);
    fftw_free(f->b);
    fftw_free(f->x0);
    fftw_cleanup();
}

void fft_planes(struct fft_local *f, int forward)
{
    double scale = 1.0 / ((double)f->n * f->n * f->n), t0 = f->ops->now();

    fftw_execute(forward ? f->fwd2 : f->bwd2);
    if (!forward)
        for (size_t i = 0; i < f->slab; i++)
            f->a[i] *= scale;
    f->t[FFT_2D] += f->ops->now() - t0;
}

void fft_pencils(struct fft_local *f, int forward)
{
    double t0 = f->ops->now();

    fftw_execute(forward ? f->fwd1 : f->bwd1);
    f->t[FFT_1D] += f->ops->now() - t0;
}

/* dst (cols x rows) = transpose of src (rows x cols), in cache-sized tiles. */
static void transpose_local(cplx *restrict dst, const cplx *restrict src, size_t rows,
                            size_t cols)
{
    enum { TILE = 32 };

    for (size_t i0 = 0; i0 < rows; i0 += TILE)
        for (size_t j0 = 0; j0 < cols; j0 += TILE) {
            size_t i1 = i0 + TILE < rows ? i0 + TILE : rows;
            size_t j1 = j0 + TILE < cols ? j0 + TILE : cols;
            for (size_t i = i0; i < i1; i++)
                for (size_t j = j0; j < j1; j++)
                    dst[j * rows + i] = src[i * cols + j];
        }
}

void fft_rearrange(struct fft_local *f, int forward)
{
    size_t rows = (size_t)f->n, cols = (size_t)f->m * f->n;
    double t0 = f->ops->now();

    if (forward)
        transpose_local(f->b, f->r, rows, cols); /* r[x][yl z] -> b[yl z][x] */
    else
        transpose_local(f->r, f->b, cols, rows);
    f->t[FFT_REARRANGE] += f->ops->now() - t0;
}

/* ---- checks ---- */

/* |v|^2, cheaper than cabs() in the checks' loops. */
static double norm2(cplx v)
{
    return creal(v) * creal(v) + cimag(v) * cimag(v);
}

/* The larger of two errors, where NaN counts as infinitely large (fmax would
 * drop it and pass a broken result). */
static double worse(double err, double e)
{
    return isnan(e) ? INFINITY : e > err ? e : err;
}

/* The perturbation --corrupt applies: one element on the last rank. */
static void corrupt(const struct fft_local *f, cplx *v, double size)
{
    if (f->me == f->p - 1)
        v[f->slab / 2 + 1] += size;
}

/* Which rank holds X(k) after the forward transform, and where in its b. */
static int spike_owner(const struct fft_local *f, const long k[3])
{
    return (int)(k[1] / f->m);
}

static size_t spike_index(const struct fft_local *f, const long k[3])
{
    return ((size_t)(k[1] % f->m) * f->n + k[2]) * f->n + k[0];
}

/* Max over ranks of |X - plane-wave spectrum| / N^3. */
static double check_planewave(const struct fft_local *f, const long k[3])
{
    double n3 = (double)f->n * f->n * f->n, err = 0;
    int owner = spike_owner(f, k);
    size_t spike = spike_index(f, k);

    for (size_t i = 0; i < f->slab; i++) {
        cplx want = f->me == owner && i == spike ? n3 : 0;
        err = worse(err, norm2(f->b[i] - want));
    }
    return f->ops->max(sqrt(err) / n3);
}

/* X(k) of the input, summed directly (collective). */
static cplx direct_dft(const struct fft_local *f, const long k[3])
{
    size_t nn = (size_t)f->n * f->n;
    cplx s = 0;

    for (size_t i = 0; i < f->slab; i++) {
        long long x = (long long)f->me * f->m + (long long)(i / nn);
        long long y = (long long)(i / f->n % f->n), z = (long long)(i % f->n);
        s += f->x0[i] * twiddle(-(k[0] * x + k[1] * y + k[2] * z), f->n);
    }
    return f->ops->sum(creal(s)) + I * f->ops->sum(cimag(s));
}

/* Random input, forward only: Parseval and two coefficients against direct
 * sums; the larger relative error (collective). */
static double check_random(const struct fft_local *f, const long k[3])
{
    double n3 = (double)f->n * f->n * f->n, sx = 0, sX = 0, err = 0;
    const long pts[2][3] = {{0, 0, 0}, {k[0], k[1], k[2]}};

    for (size_t i = 0; i < f->slab; i++) {
        sx += creal(f->x0[i] * conj(f->x0[i]));
        sX += creal(f->b[i] * conj(f->b[i]));
    }
    sx = f->ops->sum(sx);
    sX = f->ops->sum(sX);
    double parseval = fabs(sX - n3 * sx) / (n3 * sx);
    for (int j = 0; j < 2; j++) {
        cplx want = direct_dft(f, pts[j]);
        if (f->me == spike_owner(f, pts[j])) /* |X(k)| <= sqrt(N^3 sum |x|^2) */
            err = worse(err, cabs(f->b[spike_index(f, pts[j])] - want) / sqrt(n3 * sx));
    }
    return worse(f->ops->max(err), parseval);
}

/* Max over ranks of |x' - x| / max |x| after the round trip. */
static double check_roundtrip(const struct fft_local *f)
{
    double err = 0, big = 0;

    for (size_t i = 0; i < f->slab; i++) {
        err = worse(err, norm2(f->a[i] - f->x0[i]));
        big = worse(big, norm2(f->x0[i]));
    }
    return sqrt(f->ops->max(err) / f->ops->max(big));
}

int fft_verify_forward(struct fft_local *f, const struct fft_options *o)
{
    double t0 = f->ops->now(), err;
    int ok = 1;

    if (o->corrupt && !o->inverse)
        corrupt(f, f->b, (double)f->n * f->n * f->n);
    if (!o->random) {
        err = check_planewave(f, o->k);
        ok = err < 1e-9;
        if (f->me == 0)
            printf("%s: planewave k=(%ld,%ld,%ld): max |X - spike| / N^3 = %.3g\n", f->prog,
                   o->k[0], o->k[1], o->k[2], err);
    } else if (!o->inverse) {
        err = check_random(f, o->k);
        ok = err < 1e-9;
        if (f->me == 0)
            printf("%s: random: Parseval and direct coefficients, rel error %.3g\n",
                   f->prog, err);
    }
    f->t[FFT_VERIFY] += f->ops->now() - t0;
    return ok;
}

int fft_verify_inverse(struct fft_local *f, const struct fft_options *o)
{
    double t0 = f->ops->now();

    if (o->corrupt)
        corrupt(f, f->a, 1.0);
    double err = check_roundtrip(f);
    if (f->me == 0)
        printf("%s: inverse check: max |x' - x| / max |x| = %.3g\n", f->prog, err);
    f->t[FFT_VERIFY] += f->ops->now() - t0;
    return err < 1e-10;
}

void fft_print_phases(const struct fft_local *f)
{
    for (int i = 0; i < FFT_PHASES; i++) {
        double t = f->ops->max(f->t[i]);
        if (f->me == 0)
            printf("%s: phase %-10s %9.4f s (max over ranks)\n", f->prog, fft_phase_name[i],
                   t);
    }
}
