/*
 * fft_local.h - the 3-D FFT's local work, shared by the shmam version
 * (apps/fft.c) and the MPICH version (apps/mpi/fft.c): the options both take,
 * the plane-wave and random inputs, the plane (2-D) and pencil (1-D) FFTW
 * transforms, the local rearrangement between the transposes, and the checks
 * (spike location, Parseval and direct coefficients, round trip).  The
 * decomposition is described in apps/fft.c: rank r owns the x-slab a[xl][y][z]
 * of M = N/P planes; after the forward transform it owns the y-slab
 * b[yl][z][kx] = X(kx, r*M+yl, z).
 *
 * Only the transpose communicates, and it is the callers'.  The checks need
 * all-reductions and every kernel is timed: the caller lends its clock and
 * reductions through struct fft_ops, so this code uses no communication layer
 * of its own.  A function that calls ops->sum or ops->max is collective: every
 * rank calls it, in the same order.
 */
#ifndef APPS_COMMON_FFT_LOCAL_H
#define APPS_COMMON_FFT_LOCAL_H

#include <complex.h>
#include <fftw3.h>
#include <stddef.h>

typedef double complex cplx;

/* The phases whose time is accumulated in fft_local.t[], and their names. */
enum fft_phase {
    FFT_INIT,
    FFT_2D,
    FFT_COMM,
    FFT_REARRANGE,
    FFT_1D,
    FFT_VERIFY,
    FFT_PHASES
};
extern const char *const fft_phase_name[FFT_PHASES];

/* The options both versions take. */
struct fft_options {
    long n;                  /* --n N: the cube's side */
    int inverse;             /* --inverse-check */
    int random;              /* --input random (default with --inverse-check) */
    int corrupt;             /* hidden --corrupt: perturb one element */
    long k[3];               /* --k K1,K2,K3: the plane wave's vector, mod N */
    unsigned long long seed; /* --seed S: of the random input */
    const char *input;       /* --input as given, until fft_options_finish */
    int have_k;
};

/* The clock and all-reductions of the caller's communication layer. */
struct fft_ops {
    double (*now)(void);     /* seconds */
    double (*sum)(double x); /* collective: the sum of every rank's x */
    double (*max)(double x); /* collective: the largest x */
};

/* Everything one rank holds.  The caller sets ops, prog, p and me, then
 * fft_local_size sets n, m and slab; the caller provides a and r (each slab
 * elements; remote ranks may write them); fft_local_setup provides the rest. */
struct fft_local {
    const struct fft_ops *ops;
    const char *prog; /* program name, the prefix of what rank 0 prints */
    int n, p, me, m;  /* N, processes, rank, planes per rank M = N/P */
    size_t slab;      /* M*N*N elements per rank in every array */
    cplx *a;          /* x-slab a[xl][y][z] */
    cplx *r;          /* received blocks r[x][yl][z] */
    cplx *b;          /* y-slab b[yl][z][x] */
    cplx *x0;         /* copy of the input (random or --inverse-check), else NULL */
    fftw_plan fwd2, bwd2, fwd1, bwd1;
    double t[FFT_PHASES]; /* seconds spent per phase */
};

/* The defaults: N = 64, seed 12345, a plane wave. */
void fft_options_init(struct fft_options *o);

/* Applies one shared option, getopt_long's value c ('n' --n, 'i'
 * --inverse-check, 'I' --input, 'k' --k, 's' --seed, 'c' --corrupt) with its
 * argument arg.  Returns 0, or -1 if c is not one of them or arg is bad. */
int fft_option(struct fft_options *o, int c, const char *arg);

/* After the last option: checks --input, chooses the input and the default
 * wave vector, reduces k mod N.  Returns 0, or -1 if --input is bad. */
int fft_options_finish(struct fft_options *o);

/* Sets n, m = N/P and slab for the cube side n (f->p and f->me already set).
 * Returns 0, or -1 if P does not divide N, after rank 0 said so on stderr. */
int fft_local_size(struct fft_local *f, long n);

/* Allocates b and (if the options need it) x0, plans the four transforms,
 * writes the input into a and x0.  Returns NULL, or what failed ("out of
 * memory", "FFTW could not plan"); the caller reports it. */
const char *fft_local_setup(struct fft_local *f, const struct fft_options *o);

/* Destroys the plans and frees b and x0 (not a and r: the caller's). */
void fft_local_free(struct fft_local *f);

/* The 2-D FFTs over (y, z) of every plane of a, in place; backward ones scale
 * by 1/N^3, completing the inverse.  Timed as FFT_2D. */
void fft_planes(struct fft_local *f, int forward);

/* The 1-D FFTs along x of every pencil of b, in place.  Timed as FFT_1D. */
void fft_pencils(struct fft_local *f, int forward);

/* Forward: r[x][yl z] -> b[yl z][x]; backward: b -> r.  Timed as
 * FFT_REARRANGE. */
void fft_rearrange(struct fft_local *f, int forward);

/* The checks after the forward transform (collective): with the hidden
 * --corrupt (and no round trip to come) perturbs b first; then a plane wave
 * must give the spike N^3 at k, a random input must satisfy Parseval and two
 * direct coefficients (none when the round trip will check it).  Rank 0
 * prints the error.  Timed as FFT_VERIFY; returns 1 if passed. */
int fft_verify_forward(struct fft_local *f, const struct fft_options *o);

/* The check after the inverse (collective): a must equal the input within
 * 1e-10 of its largest element, after the perturbation of --corrupt.  Rank 0
 * prints the error.  Timed as FFT_VERIFY; returns 1 if passed. */
int fft_verify_inverse(struct fft_local *f, const struct fft_options *o);

/* Rank 0 prints every phase's time, the maximum over ranks (collective). */
void fft_print_phases(const struct fft_local *f);

#endif
