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
 *
 * The local work (inputs, FFTW plans and transforms, rearrangement, checks) is
 * apps/common/fft_local.c, the same code as the shmam version's.
 */
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmdline.h"
#include "common/fft_local.h"

struct opts {
    struct fft_options fo; /* those the shmam version shares */
    int alltoall;          /* --alltoall */
};

/* One rank's block in an x-slab: M runs of M*N elements, stride N*N. */
static MPI_Datatype blk;

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

static const struct fft_ops ops = {MPI_Wtime, sum_all, max_all};

/* The usage, to f: stdout for --help, stderr for a bad command line. */
static void usage(FILE *f)
{
    fprintf(f, "usage: mpiexec -n P mpi_fft [--n N] [--inverse-check] "
               "[--input planewave|random] [--k K1,K2,K3] [--seed S] [--alltoall]\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        {"n", required_argument, NULL, 'n'},     {"inverse-check", no_argument, NULL, 'i'},
        {"input", required_argument, NULL, 'I'}, {"k", required_argument, NULL, 'k'},
        {"seed", required_argument, NULL, 's'},  {"alltoall", no_argument, NULL, 'A'},
        {"corrupt", no_argument, NULL, 'c'},     {NULL, 0, NULL, 0}};
    int c;

    *o = (struct opts){0};
    fft_options_init(&o->fo);
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (c == 'A')
            o->alltoall = 1;
        else if (fft_option(&o->fo, c, optarg) < 0)
            return -1;
    }
    return optind != argc ? -1 : fft_options_finish(&o->fo);
}

/* The transpose, forward (every a -> every r) or inverse (r -> a).  Rank q's
 * block starts at a + q*M*N (type blk) in an x-slab and at r + q*M*M*N
 * (contiguous) in a receive array.  Collective. */
static void exchange(struct fft_local *f, const struct opts *o, int forward)
{
    const int cnt = f->m * f->m * f->n;
    const size_t row = (size_t)f->m * f->n;
    double t0 = MPI_Wtime();

    if (o->alltoall) {
        if (forward)
            MPI_Alltoall(f->a, 1, blk, f->r, cnt, MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
        else
            MPI_Alltoall(f->r, cnt, MPI_C_DOUBLE_COMPLEX, f->a, 1, blk, MPI_COMM_WORLD);
        f->t[FFT_COMM] += MPI_Wtime() - t0;
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
            MPI_Sendrecv(slab_d, 1, blk, d, k, recv_s, cnt, MPI_C_DOUBLE_COMPLEX, s, k,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Sendrecv(recv_d, cnt, MPI_C_DOUBLE_COMPLEX, d, k, slab_s, 1, blk, s, k,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    f->t[FFT_COMM] += MPI_Wtime() - t0;
}

/* Forward: a -> b; the wall time between the enclosing barriers. */
static double forward(struct fft_local *f, const struct opts *o)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    fft_planes(f, 1);
    exchange(f, o, 1);
    fft_rearrange(f, 1);
    fft_pencils(f, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

/* Inverse: b -> a, scaled by 1/N^3. */
static double inverse(struct fft_local *f, const struct opts *o)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    fft_pencils(f, 0);
    fft_rearrange(f, 0);
    exchange(f, o, 0);
    fft_planes(f, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static void setup(struct fft_local *f, const struct opts *o)
{
    int n = f->n;
    MPI_Datatype vec;
    double t0 = MPI_Wtime();

    f->a = fftw_malloc(f->slab * sizeof(cplx));
    f->r = fftw_malloc(f->slab * sizeof(cplx));
    const char *err = !f->a || !f->r ? "out of memory" : fft_local_setup(f, &o->fo);
    if (err) {
        fprintf(stderr, "mpi_fft: rank %d: %s for N = %d\n", f->me, err, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(f->r, 0, f->slab * sizeof(cplx)); /* fault pages in before timing */
    /* A rank's block of an x-slab, with the extent of one M*N run so that block
     * q of MPI_Alltoall starts q runs in. */
    MPI_Type_vector(f->m, f->m * n, n * n, MPI_C_DOUBLE_COMPLEX, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)f->m * n * sizeof(cplx), &blk);
    MPI_Type_commit(&blk);
    MPI_Type_free(&vec);
    f->t[FFT_INIT] = MPI_Wtime() - t0;
}

static void teardown(struct fft_local *f)
{
    fft_local_free(f);
    MPI_Type_free(&blk);
    fftw_free(f->a);
    fftw_free(f->r);
}

/* Runs the transform(s) and their checks; 1 if every check passed. */
static int run(struct fft_local *f, const struct opts *o, double *secs)
{
    *secs = forward(f, o);
    int ok = fft_verify_forward(f, &o->fo);
    if (!o->fo.inverse)
        return ok;
    *secs += inverse(f, o);
    ok &= fft_verify_inverse(f, &o->fo);
    return ok;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct fft_local f = {.ops = &ops, .prog = "mpi_fft"};
    double secs;

    if (cmdline_asks_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &f.me);
    MPI_Comm_size(MPI_COMM_WORLD, &f.p);
    opterr = f.me == 0;
    if (parse(argc, argv, &o) < 0) {
        if (f.me == 0)
            usage(stderr);
        MPI_Finalize();
        return 2;
    }
    if (fft_local_size(&f, o.fo.n) < 0) {
        MPI_Finalize();
        return 2;
    }
    if (f.me == 0)
        printf("mpi_fft: N=%d P=%d input=%s transpose=%s%s\n", f.n, f.p,
               o.fo.random ? "random" : "planewave", o.alltoall ? "alltoall" : "sendrecv",
               o.fo.inverse ? " inverse-check" : "");
    setup(&f, &o);
    int ok = run(&f, &o, &secs);

    fft_print_phases(&f);
    secs = max_all(secs);
    if (f.me == 0)
        printf("app,fft,%dcubed,mpich,-,%d,%.4f,%s\n", f.n, f.p, secs,
               ok ? "verified" : "FAILED");
    fflush(stdout);
    teardown(&f);
    MPI_Finalize();
    return ok ? 0 : 1;
}
