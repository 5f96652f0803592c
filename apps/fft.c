/*
 * fft.c - 3-D FFT of N^3 complex doubles over the Split-C-like layer, after the
 * Split-C FFT of section 4.3 of Lumetta & Culler (1998): a regular application
 * whose communication is one all-to-all, bulk, scheduled as one-to-one phases.
 *
 *   shmamrun -n P [-a ALG] build/apps/fft [--n N] [--inverse-check]
 *            [--input planewave|random] [--k K1,K2,K3] [--seed S]
 *            [--sync phase|end] [--xfer store|put]
 *
 * The cube is a[x][y][z] (z fastest).  Rank r owns the x-slab of M = N/P planes
 * x = r*M .. r*M+M-1 (N must be a multiple of P).  The forward transform:
 *   1. local 2-D FFTs over (y, z) of each of its planes (FFTW, in place);
 *   2. the transpose: P-1 one-to-one phases; in phase k rank r bulk-stores into
 *      rank d = (r+k) mod P the block it owns of d's future y-slab (M planes of
 *      M*N contiguous elements each), into d's receive array R[x][yl][z]; phase 0
 *      is the local block, a memcpy.  After each phase (--sync phase, default)
 *      or only after the last (--sync end) sc_all_store_sync makes every store
 *      land; --xfer put uses acknowledged puts and sc_sync instead;
 *   3. a local rearrangement R[x][yl][z] -> B[yl][z][x] (a blocked transpose of
 *      an N x M*N matrix), so the last dimension is contiguous;
 *   4. local 1-D FFTs along x.
 * The result is y-slab distributed: rank s holds B[yl][z][kx] =
 * X(kx, s*M+yl, z).  The inverse (--inverse-check) runs the same steps backward
 * (1-D, rearrangement, transpose into the x-slab array, 2-D) and scales by 1/N^3.
 *
 * Verification (rank 0 reports; every error is a max over ranks):
 *   planewave  input exp(2 pi i (k1 x + k2 y + k3 z)/N) must give N^3 at
 *              (k1,k2,k3), i.e. on rank k2/M at B[k2%M][k3][k1], and 0 elsewhere:
 *              max |X - expected| / N^3 < 1e-9;
 *   random     seeded pseudo-random input, independent of P.  Forward only:
 *              Parseval (sum |X|^2 = N^3 sum |x|^2) and two coefficients summed
 *              directly must agree within 1e-9 (relative to their bound);
 *              --inverse-check: max |x' - x| / max |x| < 1e-10.
 * The default input is planewave, or random with --inverse-check.  The hidden
 * --corrupt option perturbs one element before the last check (to test that
 * failures are seen).
 *
 * Output: phase times (max over ranks), then one line in the schema shared by
 * all apps, `app,fft,<N>cubed,<claim>,<shm>,<P>,<seconds>,<verified|FAILED>`,
 * where seconds is the transform time (forward, plus inverse if checked), from
 * a barrier to a barrier, without initialisation or verification.  The exit
 * status is 0 only if verified.
 */
#include <complex.h>
#include <fftw3.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splitc/splitc.h"

typedef double complex cplx;

enum { T_INIT, T_FFT2, T_COMM, T_REARR, T_FFT1, T_VERIFY, T_COUNT };
static const char *const phase_name[T_COUNT] = {"init",      "fft2d", "transpose",
                                                "rearrange", "fft1d", "verify"};

struct opts {
    long n;
    int inverse, random, corrupt, sync_end, put, have_k;
    long k[3];
    unsigned long long seed;
};

/* Everything one rank holds.  a and r are spread arrays (remote ranks store
 * into them during the transposes); b and x0 are private. */
struct fft {
    int n, p, me, m;       /* N, processes, rank, planes per rank M = N/P */
    size_t slab;           /* M*N*N elements per rank in every array */
    unsigned reg_a, reg_r; /* region ids of a and r */
    cplx *a;               /* x-slab a[xl][y][z] */
    cplx *r;               /* received blocks r[x][yl][z] */
    cplx *b;               /* y-slab b[yl][z][x] */
    cplx *x0;              /* copy of the input (random or --inverse-check) */
    fftw_plan fwd2, bwd2, fwd1, bwd1;
    double t[T_COUNT]; /* seconds spent per phase */
};

static void usage(void)
{
    fprintf(stderr, "usage: shmamrun -n P [-a ALG] fft [--n N] [--inverse-check] "
                    "[--input planewave|random] [--k K1,K2,K3] [--seed S] "
                    "[--sync phase|end] [--xfer store|put]\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {{"n", required_argument, NULL, 'n'},
                                       {"inverse-check", no_argument, NULL, 'i'},
                                       {"input", required_argument, NULL, 'I'},
                                       {"k", required_argument, NULL, 'k'},
                                       {"seed", required_argument, NULL, 's'},
                                       {"sync", required_argument, NULL, 'S'},
                                       {"xfer", required_argument, NULL, 'x'},
                                       {"corrupt", no_argument, NULL, 'c'},
                                       {NULL, 0, NULL, 0}};
    const char *input = NULL;
    char *end;
    int c;

    *o = (struct opts){.n = 64, .seed = 12345};
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'n':
            o->n = strtol(optarg, &end, 10);
            if (*end || o->n < 1 || o->n > 2048)
                return -1;
            break;
        case 'i':
            o->inverse = 1;
            break;
        case 'I':
            input = optarg;
            break;
        case 'k':
            if (sscanf(optarg, "%ld,%ld,%ld", &o->k[0], &o->k[1], &o->k[2]) != 3)
                return -1;
            o->have_k = 1;
            break;
        case 's':
            o->seed = strtoull(optarg, NULL, 0);
            break;
        case 'S':
            if (strcmp(optarg, "phase") && strcmp(optarg, "end"))
                return -1;
            o->sync_end = !strcmp(optarg, "end");
            break;
        case 'x':
            if (strcmp(optarg, "store") && strcmp(optarg, "put"))
                return -1;
            o->put = !strcmp(optarg, "put");
            break;
        case 'c':
            o->corrupt = 1;
            break;
        default:
            return -1;
        }
    }
    if (optind != argc || (input && strcmp(input, "planewave") && strcmp(input, "random")))
        return -1;
    o->random = input ? !strcmp(input, "random") : o->inverse;
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
static void fill_input(const struct fft *f, const struct opts *o, cplx *v)
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

/* Where plane c of the block of rank q's y-range starts in an x-slab a, and
 * where the block rank q sends for its plane c lands in a receive array r. */
static size_t slab_chunk(const struct fft *f, int q, int c)
{
    return ((size_t)c * f->n + (size_t)q * f->m) * f->n;
}

static size_t recv_chunk(const struct fft *f, int q, int c)
{
    return ((size_t)q * f->m + c) * f->m * f->n;
}

/* The transpose, forward (a -> every rank's r) or inverse (r -> every rank's
 * a), as P-1 one-to-one phases of bulk transfers plus the local block.
 * Collective.  On return every rank's destination array holds all its blocks. */
static void exchange(struct fft *f, const struct opts *o, int forward)
{
    const size_t chunk = (size_t)f->m * f->n, bytes = chunk * sizeof(cplx);
    const cplx *src = forward ? f->a : f->r;
    cplx *mine = forward ? f->r : f->a;
    unsigned region = forward ? f->reg_r : f->reg_a;
    double t0 = sc_now();

    sc_barrier(); /* nobody still reads a destination array */
    for (int k = 0; k < f->p; k++) {
        int d = (f->me + k) % f->p;
        for (int c = 0; c < f->m; c++) {
            size_t s = forward ? slab_chunk(f, d, c) : recv_chunk(f, d, c);
            size_t to = forward ? recv_chunk(f, f->me, c) : slab_chunk(f, f->me, c);
            if (k == 0)
                memcpy(mine + to, src + s, bytes);
            else if (o->put)
                sc_bulk_put(sc_gptr(d, region, to * sizeof(cplx)), src + s, bytes);
            else
                sc_bulk_store(sc_gptr(d, region, to * sizeof(cplx)), src + s, bytes);
        }
        if (k > 0 && !o->sync_end && o->put)
            sc_sync();
        else if (k > 0 && !o->sync_end)
            sc_all_store_sync();
    }
    if (o->put) {
        sc_sync();    /* my puts have landed ... */
        sc_barrier(); /* ... and so have everyone's */
    } else if (o->sync_end) {
        sc_all_store_sync();
    }
    f->t[T_COMM] += sc_now() - t0;
}

static void timed_fft(struct fft *f, fftw_plan plan, int phase)
{
    double t0 = sc_now();

    fftw_execute(plan);
    f->t[phase] += sc_now() - t0;
}

static void rearrange(struct fft *f, int forward)
{
    size_t rows = (size_t)f->n, cols = (size_t)f->m * f->n;
    double t0 = sc_now();

    if (forward)
        transpose_local(f->b, f->r, rows, cols); /* r[x][yl z] -> b[yl z][x] */
    else
        transpose_local(f->r, f->b, cols, rows);
    f->t[T_REARR] += sc_now() - t0;
}

/* Forward: a (x-slabs, input) -> b (y-slabs, spectrum).  Collective; returns
 * the wall time between the enclosing barriers. */
static double forward(struct fft *f, const struct opts *o)
{
    sc_barrier();
    double t0 = sc_now();
    timed_fft(f, f->fwd2, T_FFT2);
    exchange(f, o, 1);
    rearrange(f, 1);
    timed_fft(f, f->fwd1, T_FFT1);
    sc_barrier();
    return sc_now() - t0;
}

/* Inverse: b -> a, scaled by 1/N^3.  Collective. */
static double inverse(struct fft *f, const struct opts *o)
{
    double scale = 1.0 / ((double)f->n * f->n * f->n);

    sc_barrier();
    double t0 = sc_now();
    timed_fft(f, f->bwd1, T_FFT1);
    rearrange(f, 0);
    exchange(f, o, 0);
    double t1 = sc_now();
    fftw_execute(f->bwd2);
    for (size_t i = 0; i < f->slab; i++)
        f->a[i] *= scale;
    f->t[T_FFT2] += sc_now() - t1;
    sc_barrier();
    return sc_now() - t0;
}

/* The perturbation --corrupt applies: one element on the last rank. */
static void corrupt(struct fft *f, cplx *v, double size)
{
    if (f->me == f->p - 1)
        v[f->slab / 2 + 1] += size;
}

/* Max over ranks of |X - plane-wave spectrum| / N^3. */
static double check_planewave(const struct fft *f, const struct opts *o)
{
    double n3 = (double)f->n * f->n * f->n, err = 0;
    int owner = (int)(o->k[1] / f->m);
    size_t spike = ((size_t)(o->k[1] % f->m) * f->n + o->k[2]) * f->n + o->k[0];

    for (size_t i = 0; i < f->slab; i++) {
        cplx want = f->me == owner && i == spike ? n3 : 0;
        err = worse(err, norm2(f->b[i] - want));
    }
    return sc_allreduce_max_d(sqrt(err) / n3);
}

/* X(k) of the input, summed directly (collective). */
static cplx direct_dft(const struct fft *f, const long k[3])
{
    size_t nn = (size_t)f->n * f->n;
    cplx s = 0;

    for (size_t i = 0; i < f->slab; i++) {
        long long x = (long long)f->me * f->m + (long long)(i / nn);
        long long y = (long long)(i / f->n % f->n), z = (long long)(i % f->n);
        s += f->x0[i] * twiddle(-(k[0] * x + k[1] * y + k[2] * z), f->n);
    }
    return sc_allreduce_sum_d(creal(s)) + I * sc_allreduce_sum_d(cimag(s));
}

/* Random input, forward only: Parseval and two coefficients against direct
 * sums; the larger relative error (collective). */
static double check_random(const struct fft *f, const struct opts *o)
{
    double n3 = (double)f->n * f->n * f->n, sx = 0, sX = 0, err = 0;
    const long pts[2][3] = {{0, 0, 0}, {o->k[0], o->k[1], o->k[2]}};

    for (size_t i = 0; i < f->slab; i++) {
        sx += creal(f->x0[i] * conj(f->x0[i]));
        sX += creal(f->b[i] * conj(f->b[i]));
    }
    sx = sc_allreduce_sum_d(sx);
    sX = sc_allreduce_sum_d(sX);
    double parseval = fabs(sX - n3 * sx) / (n3 * sx);
    for (int j = 0; j < 2; j++) {
        cplx want = direct_dft(f, pts[j]);
        int owner = (int)(pts[j][1] / f->m);
        size_t at = ((size_t)(pts[j][1] % f->m) * f->n + pts[j][2]) * f->n + pts[j][0];
        if (f->me == owner) /* |X(k)| <= sqrt(N^3 sum |x|^2) */
            err = worse(err, cabs(f->b[at] - want) / sqrt(n3 * sx));
    }
    return worse(sc_allreduce_max_d(err), parseval);
}

/* Max over ranks of |x' - x| / max |x| after the round trip. */
static double check_roundtrip(const struct fft *f)
{
    double err = 0, big = 0;

    for (size_t i = 0; i < f->slab; i++) {
        err = worse(err, norm2(f->a[i] - f->x0[i]));
        big = worse(big, norm2(f->x0[i]));
    }
    return sqrt(sc_allreduce_max_d(err) / sc_allreduce_max_d(big));
}

static void setup(struct fft *f, const struct opts *o)
{
    int n = f->n, dims[2] = {n, n}, len[1] = {n}, how1 = f->m * n;
    double t0 = sc_now();

    f->slab = (size_t)f->m * n * n;
    f->reg_a = sc_region_alloc(f->slab * sizeof(cplx), (void **)&f->a);
    f->reg_r = sc_region_alloc(f->slab * sizeof(cplx), (void **)&f->r);
    f->b = fftw_malloc(f->slab * sizeof(cplx));
    f->x0 = o->random || o->inverse ? fftw_malloc(f->slab * sizeof(cplx)) : NULL;
    if (!f->b || ((o->random || o->inverse) && !f->x0)) {
        fprintf(stderr, "fft: rank %d: out of memory for N = %d\n", f->me, n);
        exit(1);
    }
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
    if (!f->fwd2 || !f->bwd2 || !f->fwd1 || !f->bwd1) {
        fprintf(stderr, "fft: rank %d: FFTW could not plan N = %d\n", f->me, n);
        exit(1);
    }
    memset(f->b, 0, f->slab * sizeof(cplx)); /* fault its pages in before timing */
    fill_input(f, o, f->a);
    if (f->x0)
        memcpy(f->x0, f->a, f->slab * sizeof(cplx));
    f->t[T_INIT] = sc_now() - t0;
}

static void teardown(struct fft *f)
{
    fftw_destroy_plan(f->fwd2);
    fftw_destroy_plan(f->bwd2);
    fftw_destroy_plan(f->fwd1);
    fftw_destroy_plan(f->bwd1);
    fftw_free(f->b);
    fftw_free(f->x0);
    fftw_cleanup();
}

/* Runs the transform(s) and their checks (collective); returns 1 if every
 * check passed, and the transform seconds in *secs. */
static int run(struct fft *f, const struct opts *o, double *secs)
{
    int ok = 1;
    double t0, err;

    *secs = forward(f, o);
    t0 = sc_now();
    if (o->corrupt && !o->inverse)
        corrupt(f, f->b, (double)f->n * f->n * f->n);
    if (!o->random) {
        err = check_planewave(f, o);
        ok &= err < 1e-9;
        if (f->me == 0)
            printf("fft: planewave k=(%ld,%ld,%ld): max |X - spike| / N^3 = %.3g\n",
                   o->k[0], o->k[1], o->k[2], err);
    } else if (!o->inverse) {
        err = check_random(f, o);
        ok &= err < 1e-9;
        if (f->me == 0)
            printf("fft: random: Parseval and direct coefficients, rel error %.3g\n", err);
    }
    f->t[T_VERIFY] += sc_now() - t0;
    if (!o->inverse)
        return ok;

    *secs += inverse(f, o);
    t0 = sc_now();
    if (o->corrupt)
        corrupt(f, f->a, 1.0);
    err = check_roundtrip(f);
    ok &= err < 1e-10;
    if (f->me == 0)
        printf("fft: inverse check: max |x' - x| / max |x| = %.3g\n", err);
    f->t[T_VERIFY] += sc_now() - t0;
    return ok;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct fft f = {0};
    double secs;

    sc_init(&argc, &argv);
    f.me = sc_rank();
    f.p = sc_nprocs();
    opterr = f.me == 0; /* one complaint, not P */
    if (parse(argc, argv, &o) < 0) {
        if (f.me == 0)
            usage();
        sc_finalize();
        return 2;
    }
    if (o.n % f.p) {
        if (f.me == 0)
            fprintf(stderr,
                    "fft: N = %ld is not a multiple of P = %d: every rank must "
                    "own N/P whole planes\n",
                    o.n, f.p);
        sc_finalize();
        return 2;
    }
    f.n = (int)o.n;
    f.m = f.n / f.p;
    const char *shm = getenv("SHMAM_SHM") ? getenv("SHMAM_SHM") : "posix";
    if (f.me == 0)
        printf("fft: N=%d P=%d claim=%s shm=%s input=%s sync=%s xfer=%s%s\n", f.n, f.p,
               am_ep_claim(sc_ep()), shm, o.random ? "random" : "planewave",
               o.sync_end ? "end" : "phase", o.put ? "put" : "store",
               o.inverse ? " inverse-check" : "");
    setup(&f, &o);
    int ok = run(&f, &o, &secs);

    for (int i = 0; i < T_COUNT; i++) {
        double t = sc_allreduce_max_d(f.t[i]);
        if (f.me == 0)
            printf("fft: phase %-10s %9.4f s (max over ranks)\n", phase_name[i], t);
    }
    secs = sc_allreduce_max_d(secs);
    double mb = (double)(f.p - 1) * f.m * f.m * f.n * sizeof(cplx) / 1e6;
    if (f.me == 0) {
        printf("fft: each rank sends %.2f MB per transpose\n", mb);
        printf("app,fft,%dcubed,%s,%s,%d,%.4f,%s\n", f.n, am_ep_claim(sc_ep()), shm, f.p,
               secs, ok ? "verified" : "FAILED");
    }
    fflush(stdout);
    teardown(&f);
    sc_finalize();
    return ok ? 0 : 1;
}
