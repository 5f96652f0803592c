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
 *
 * The local work (inputs, FFTW plans and transforms, rearrangement, checks) is
 * apps/common/fft_local.c, shared with the MPICH version apps/mpi/fft.c; this
 * file holds the transpose over the Split-C-like layer.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmdline.h"
#include "common/fft_local.h"
#include "splitc/splitc.h"

struct opts {
    struct fft_options fo; /* those the MPI version shares */
    int sync_end, put;     /* --sync end, --xfer put */
};

/* The region ids of a and r: remote ranks store into them during the
 * transposes.  b and x0 are private. */
static unsigned reg_a, reg_r;

static const struct fft_ops ops = {sc_now, sc_allreduce_sum_d, sc_allreduce_max_d};

/* The usage, to f: stdout for --help, stderr for a bad command line. */
static void usage(FILE *f)
{
    fprintf(f, "usage: shmamrun -n P [-a ALG] fft [--n N] [--inverse-check] "
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
    int c;

    *o = (struct opts){0};
    fft_options_init(&o->fo);
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
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
        default:
            if (fft_option(&o->fo, c, optarg) < 0)
                return -1;
        }
    }
    return optind != argc ? -1 : fft_options_finish(&o->fo);
}

/* Where plane c of the block of rank q's y-range starts in an x-slab a, and
 * where the block rank q sends for its plane c lands in a receive array r. */
static size_t slab_chunk(const struct fft_local *f, int q, int c)
{
    return ((size_t)c * f->n + (size_t)q * f->m) * f->n;
}

static size_t recv_chunk(const struct fft_local *f, int q, int c)
{
    return ((size_t)q * f->m + c) * f->m * f->n;
}

/* The transpose, forward (a -> every rank's r) or inverse (r -> every rank's
 * a), as P-1 one-to-one phases of bulk transfers plus the local block.
 * Collective.  On return every rank's destination array holds all its blocks. */
static void exchange(struct fft_local *f, const struct opts *o, int forward)
{
    const size_t chunk = (size_t)f->m * f->n, bytes = chunk * sizeof(cplx);
    const cplx *src = forward ? f->a : f->r;
    cplx *mine = forward ? f->r : f->a;
    unsigned region = forward ? reg_r : reg_a;
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
    f->t[FFT_COMM] += sc_now() - t0;
}

/* Forward: a (x-slabs, input) -> b (y-slabs, spectrum).  Collective; returns
 * the wall time between the enclosing barriers. */
static double forward(struct fft_local *f, const struct opts *o)
{
    sc_barrier();
    double t0 = sc_now();
    fft_planes(f, 1);
    exchange(f, o, 1);
    fft_rearrange(f, 1);
    fft_pencils(f, 1);
    sc_barrier();
    return sc_now() - t0;
}

/* Inverse: b -> a, scaled by 1/N^3.  Collective. */
static double inverse(struct fft_local *f, const struct opts *o)
{
    sc_barrier();
    double t0 = sc_now();
    fft_pencils(f, 0);
    fft_rearrange(f, 0);
    exchange(f, o, 0);
    fft_planes(f, 0);
    sc_barrier();
    return sc_now() - t0;
}

static void setup(struct fft_local *f, const struct opts *o)
{
    double t0 = sc_now();

    reg_a = sc_region_alloc(f->slab * sizeof(cplx), (void **)&f->a);
    reg_r = sc_region_alloc(f->slab * sizeof(cplx), (void **)&f->r);
    const char *err = fft_local_setup(f, &o->fo);
    if (err) {
        fprintf(stderr, "fft: rank %d: %s for N = %d\n", f->me, err, f->n);
        exit(1);
    }
    f->t[FFT_INIT] = sc_now() - t0;
}

/* Runs the transform(s) and their checks (collective); returns 1 if every
 * check passed, and the transform seconds in *secs. */
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
    struct fft_local f = {.ops = &ops, .prog = "fft"};
    double secs;

    if (cmdline_asks_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    sc_init(&argc, &argv);
    f.me = sc_rank();
    f.p = sc_nprocs();
    opterr = f.me == 0; /* one complaint, not P */
    if (parse(argc, argv, &o) < 0) {
        if (f.me == 0)
            usage(stderr);
        sc_finalize();
        return 2;
    }
    if (fft_local_size(&f, o.fo.n) < 0) {
        sc_finalize();
        return 2;
    }
    const char *shm = getenv("SHMAM_SHM") ? getenv("SHMAM_SHM") : "posix";
    if (f.me == 0)
        printf("fft: N=%d P=%d claim=%s shm=%s input=%s sync=%s xfer=%s%s\n", f.n, f.p,
               am_ep_claim(sc_ep()), shm, o.fo.random ? "random" : "planewave",
               o.sync_end ? "end" : "phase", o.put ? "put" : "store",
               o.fo.inverse ? " inverse-check" : "");
    setup(&f, &o);
    int ok = run(&f, &o, &secs);

    fft_print_phases(&f);
    secs = sc_allreduce_max_d(secs);
    double mb = (double)(f.p - 1) * f.m * f.m * f.n * sizeof(cplx) / 1e6;
    if (f.me == 0) {
        printf("fft: each rank sends %.2f MB per transpose\n", mb);
        printf("app,fft,%dcubed,%s,%s,%d,%.4f,%s\n", f.n, am_ep_claim(sc_ep()), shm, f.p,
               secs, ok ? "verified" : "FAILED");
    }
    fflush(stdout);
    fft_local_free(&f);
    sc_finalize();
    return ok ? 0 : 1;
}
