/*
 * fft.c (mpi_fft) - the MPICH baseline of apps/fft.c: the same 3-D FFT of N^3
 * complex doubles, decomposition, phases and verification, with the transpose
 * over MPI instead of shmam bulk stores.
 *
 *   mpiexec -n P build/apps/mpi_fft [--n N] [--inverse-check]
 *           [--input planewave|random] [--k K1,K2,K3] [--seed S] [--alltoall]
 *
 * Rank r owns the x-slab a[xl][y][z] of M = N/P planes (N must be a multiple of
 * P).  Forward: local 2-D FFTs of each plane (FFTW), the transpose, a local
 * rearrangement r[x][yl][z] -> b[yl][z][x], local 1-D FFTs along x; rank s then
 * holds b[yl][z][kx] = X(kx, s*M+yl, z).  The inverse runs the steps backward
 * and scales by 1/N^3.
 *
 * The transpose mirrors the shmam version's P-1 one-to-one phases: in phase k
 * rank r exchanges (MPI_Sendrecv) with d = (r+k) mod P and s = (r-k) mod P the
 * block d owns of r's data, M planes of M*N contiguous elements described by
 * one strided datatype, so nothing is packed by hand; phase 0 is a local copy.
 * --alltoall does the whole transpose as one MPI_Alltoall with the same type.
 *
 * Verification and output are those of apps/fft.c: plane wave -> spike of N^3
 * at (k1,k2,k3) within 1e-9; random forward -> Parseval and two direct
 * coefficients within 1e-9; --inverse-check -> round trip within 1e-10; the
 * hidden --corrupt perturbs one element before the last check.  Rank 0 prints
 * phase times (max over ranks) and `app,fft,<N>cubed,mpich,-,<P>,<seconds>,
 * <verified|FAILED>`; the exit status is 0 only if verified.
 */
#include <complex.h>
#include <fftw3.h>
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

enum { T_INIT, T_FFT2, T_COMM, T_REARR, T_FFT1, T_VERIFY, T_COUNT };
static const char *const phase_name[T_COUNT] = {"init",      "fft2d", "transpose",
                                                "rearrange", "fft1d", "verify"};

struct opts {
    long n;
    int inverse, random, corrupt, alltoall, have_k;
    long k[3];
    unsigned long long seed;
};

struct fft {
    int n, p, me, m;  /* N, processes, rank, planes per rank M = N/P */
    size_t slab;      /* M*N*N elements per rank in every array */
    cplx *a, *r, *b;  /* x-slab a[xl][y][z], received r[x][yl][z], y-slab b[yl][z][x] */
    cplx *x0;         /* copy of the input (random or --inverse-check) */
    MPI_Datatype blk; /* one rank's block in an x-slab: M runs of M*N, stride N*N */
    fftw_plan fwd2, bwd2, fwd1, bwd1;
    double t[T_COUNT];
};

static void usage(void)
{
    fprintf(stderr, "usage: mpiexec -n P mpi_fft [--n N] [--inverse-check] "
                    "[--input planewave|random] [--k K1,K2,K3] [--seed S] [--alltoall]\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        {"n", required_argument, NULL, 'n'},     {"inverse-check", no_argument, NULL, 'i'},
        {"input", required_argument, NULL, 'I'}, {"k", required_argument, NULL, 'k'},
        {"seed", required_argument, NULL, 's'},  {"alltoall", no_argument, NULL, 'A'},
        {"corrupt", no_argument, NULL, 'c'},     {NULL, 0, NULL, 0}};
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
        case 'A':
            o->alltoall = 1;
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
    if (!o->have_k) { /* the shmam version's default wave vector */
        o->k[0] = 1;
        o->k[1] = o->n * 5 / 8 + 1;
        o->k[2] = o->n - 3;
    }
    for (int i = 0; i < 3; i++)
        o->k[i] = ((o->k[i] % o->n) + o->n) % o->n;
    return 0;
}

static double max_all(double x)
{
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return x;
}

static double sum_all(double x)
{
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return x;
}

/* splitmix64, as in apps/fft.c: the same input for every P. */
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

/* exp(2 pi i m / N), m reduced mod N first. */
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

/* The transpose, forward (every a -> every r) or inverse (r -> a).  Rank q's
 * block starts at a + q*M*N (type blk) in an x-slab and at r + q*M*M*N
 * (contiguous) in a receive array.  Collective. */
static void exchange(struct fft *f, const struct opts *o, int forward)
{
    const int cnt = f->m * f->m * f->n;
    const size_t row = (size_t)f->m * f->n;
    double t0 = MPI_Wtime();

    if (o->alltoall) {
        if (forward)
            MPI_Alltoall(f->a, 1, f->blk, f->r, cnt, MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
        else
            MPI_Alltoall(f->r, cnt, MPI_C_DOUBLE_COMPLEX, f->a, 1, f->blk, MPI_COMM_WORLD);
        f->t[T_COMM] += MPI_Wtime() - t0;
        return;
    }
    for (int k = 0; k < f->p; k++) {
        int d = (f->me + k) % f->p, s = (f->me - k + f->p) % f->p;
        cplx *slab_d = f->a + (size_t)d * row, *slab_s = f->a + (size_t)s * row;
        cplx *recv_d = f->r + (size_t)d * cnt, *recv_s = f->r + (size_t)s * cnt;
        if (k == 0) {
            for (size_t c = 0; c < (size_t)f->m; c++) {
                cplx *plane = slab_d + c * f->n * f->n, *run = recv_d + c * row;
                memcpy(forward ? run : plane, forward ? plane : run, row * sizeof(cplx));
            }
        } else if (forward) {
            MPI_Sendrecv(slab_d, 1, f->blk, d, k, recv_s, cnt, MPI_C_DOUBLE_COMPLEX, s, k,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Sendrecv(recv_d, cnt, MPI_C_DOUBLE_COMPLEX, d, k, slab_s, 1, f->blk, s, k,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    f->t[T_COMM] += MPI_Wtime() - t0;
}

static void timed_fft(struct fft *f, fftw_plan plan, int phase)
{
    double t0 = MPI_Wtime();

    fftw_execute(plan);
    f->t[phase] += MPI_Wtime() - t0;
}

static void rearrange(struct fft *f, int forward)
{
    size_t rows = (size_t)f->n, cols = (size_t)f->m * f->n;
    double t0 = MPI_Wtime();

    if (forward)
        transpose_local(f->b, f->r, rows, cols); /* r[x][yl z] -> b[yl z][x] */
    else
        transpose_local(f->r, f->b, cols, rows);
    f->t[T_REARR] += MPI_Wtime() - t0;
}

/* Forward: a -> b; the wall time between the enclosing barriers. */
static double forward(struct fft *f, const struct opts *o)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    timed_fft(f, f->fwd2, T_FFT2);
    exchange(f, o, 1);
    rearrange(f, 1);
    timed_fft(f, f->fwd1, T_FFT1);
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

/* Inverse: b -> a, scaled by 1/N^3. */
static double inverse(struct fft *f, const struct opts *o)
{
    double scale = 1.0 / ((double)f->n * f->n * f->n);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    timed_fft(f, f->bwd1, T_FFT1);
    rearrange(f, 0);
    exchange(f, o, 0);
    double t1 = MPI_Wtime();
    fftw_execute(f->bwd2);
    for (size_t i = 0; i < f->slab; i++)
        f->a[i] *= scale;
    f->t[T_FFT2] += MPI_Wtime() - t1;
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static void corrupt(struct fft *f, cplx *v, double size)
{
    if (f->me == f->p - 1)
        v[f->slab / 2 + 1] += size;
}

static double check_planewave(const struct fft *f, const struct opts *o)
{
    double n3 = (double)f->n * f->n * f->n, err = 0;
    int owner = (int)(o->k[1] / f->m);
    size_t spike = ((size_t)(o->k[1] % f->m) * f->n + o->k[2]) * f->n + o->k[0];

    for (size_t i = 0; i < f->slab; i++) {
        cplx want = f->me == owner && i == spike ? n3 : 0;
        err = worse(err, norm2(f->b[i] - want));
    }
    return max_all(sqrt(err) / n3);
}

static cplx direct_dft(const struct fft *f, const long k[3])
{
    size_t nn = (size_t)f->n * f->n;
    cplx s = 0;

    for (size_t i = 0; i < f->slab; i++) {
        long long x = (long long)f->me * f->m + (long long)(i / nn);
        long long y = (long long)(i / f->n % f->n), z = (long long)(i % f->n);
        s += f->x0[i] * twiddle(-(k[0] * x + k[1] * y + k[2] * z), f->n);
    }
    return sum_all(creal(s)) + I * sum_all(cimag(s));
}

static double check_random(const struct fft *f, const struct opts *o)
{
    double n3 = (double)f->n * f->n * f->n, sx = 0, sX = 0, err = 0;
    const long pts[2][3] = {{0, 0, 0}, {o->k[0], o->k[1], o->k[2]}};

    for (size_t i = 0; i < f->slab; i++) {
        sx += creal(f->x0[i] * conj(f->x0[i]));
        sX += creal(f->b[i] * conj(f->b[i]));
    }
    sx = sum_all(sx);
    sX = sum_all(sX);
    double parseval = fabs(sX - n3 * sx) / (n3 * sx);
    for (int j = 0; j < 2; j++) {
        cplx want = direct_dft(f, pts[j]);
        int owner = (int)(pts[j][1] / f->m);
        size_t at = ((size_t)(pts[j][1] % f->m) * f->n + pts[j][2]) * f->n + pts[j][0];
        if (f->me == owner)
            err = worse(err, cabs(f->b[at] - want) / sqrt(n3 * sx));
    }
    return worse(max_all(err), parseval);
}

static double check_roundtrip(const struct fft *f)
{
    double err = 0, big = 0;

    for (size_t i = 0; i < f->slab; i++) {
        err = worse(err, norm2(f->a[i] - f->x0[i]));
        big = worse(big, norm2(f->x0[i]));
    }
    return sqrt(max_all(err) / max_all(big));
}

static void setup(struct fft *f, const struct opts *o)
{
    int n = f->n, dims[2] = {n, n}, len[1] = {n}, how1 = f->m * n;
    size_t bytes;
    MPI_Datatype vec;
    double t0 = MPI_Wtime();

    f->slab = (size_t)f->m * n * n;
    bytes = f->slab * sizeof(cplx);
    f->a = fftw_malloc(bytes);
    f->r = fftw_malloc(bytes);
    f->b = fftw_malloc(bytes);
    f->x0 = o->random || o->inverse ? fftw_malloc(bytes) : NULL;
    if (!f->a || !f->r || !f->b || ((o->random || o->inverse) && !f->x0)) {
        fprintf(stderr, "mpi_fft: rank %d: out of memory for N = %d\n", f->me, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* A rank's block of an x-slab, with the extent of one M*N run so that block
     * q of MPI_Alltoall starts q runs in. */
    MPI_Type_vector(f->m, f->m * n, n * n, MPI_C_DOUBLE_COMPLEX, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)f->m * n * sizeof(cplx), &f->blk);
    MPI_Type_commit(&f->blk);
    MPI_Type_free(&vec);

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
        fprintf(stderr, "mpi_fft: rank %d: FFTW could not plan N = %d\n", f->me, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(f->b, 0, bytes); /* fault pages in before timing */
    memset(f->r, 0, bytes);
    fill_input(f, o, f->a);
    if (f->x0)
        memcpy(f->x0, f->a, bytes);
    f->t[T_INIT] = MPI_Wtime() - t0;
}

static void teardown(struct fft *f)
{
    fftw_destroy_plan(f->fwd2);
    fftw_destroy_plan(f->bwd2);
    fftw_destroy_plan(f->fwd1);
    fftw_destroy_plan(f->bwd1);
    fftw_cleanup();
    MPI_Type_free(&f->blk);
    fftw_free(f->a);
    fftw_free(f->r);
    fftw_free(f->b);
    fftw_free(f->x0);
}

/* Runs the transform(s) and their checks; 1 if every check passed. */
static int run(struct fft *f, const struct opts *o, double *secs)
{
    int ok = 1;
    double t0, err;

    *secs = forward(f, o);
    t0 = MPI_Wtime();
    if (o->corrupt && !o->inverse)
        corrupt(f, f->b, (double)f->n * f->n * f->n);
    if (!o->random) {
        err = check_planewave(f, o);
        ok &= err < 1e-9;
        if (f->me == 0)
            printf("mpi_fft: planewave k=(%ld,%ld,%ld): max |X - spike| / N^3 = %.3g\n",
                   o->k[0], o->k[1], o->k[2], err);
    } else if (!o->inverse) {
        err = check_random(f, o);
        ok &= err < 1e-9;
        if (f->me == 0)
            printf("mpi_fft: random: Parseval and direct coefficients, rel error %.3g\n",
                   err);
    }
    f->t[T_VERIFY] += MPI_Wtime() - t0;
    if (!o->inverse)
        return ok;

    *secs += inverse(f, o);
    t0 = MPI_Wtime();
    if (o->corrupt)
        corrupt(f, f->a, 1.0);
    err = check_roundtrip(f);
    ok &= err < 1e-10;
    if (f->me == 0)
        printf("mpi_fft: inverse check: max |x' - x| / max |x| = %.3g\n", err);
    f->t[T_VERIFY] += MPI_Wtime() - t0;
    return ok;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct fft f = {0};
    double secs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &f.me);
    MPI_Comm_size(MPI_COMM_WORLD, &f.p);
    opterr = f.me == 0;
    if (parse(argc, argv, &o) < 0) {
        if (f.me == 0)
            usage();
        MPI_Finalize();
        return 2;
    }
    if (o.n % f.p) {
        if (f.me == 0)
            fprintf(stderr,
                    "mpi_fft: N = %ld is not a multiple of P = %d: every rank must "
                    "own N/P whole planes\n",
                    o.n, f.p);
        MPI_Finalize();
        return 2;
    }
    f.n = (int)o.n;
    f.m = f.n / f.p;
    if (f.me == 0)
        printf("mpi_fft: N=%d P=%d input=%s transpose=%s%s\n", f.n, f.p,
               o.random ? "random" : "planewave", o.alltoall ? "alltoall" : "sendrecv",
               o.inverse ? " inverse-check" : "");
    setup(&f, &o);
    int ok = run(&f, &o, &secs);

    for (int i = 0; i < T_COUNT; i++) {
        double t = max_all(f.t[i]);
        if (f.me == 0)
            printf("mpi_fft: phase %-10s %9.4f s (max over ranks)\n", phase_name[i], t);
    }
    secs = max_all(secs);
    if (f.me == 0)
        printf("app,fft,%dcubed,mpich,-,%d,%.4f,%s\n", f.n, f.p, secs,
               ok ? "verified" : "FAILED");
    fflush(stdout);
    teardown(&f);
    MPI_Finalize();
    return ok ? 0 : 1;
}
