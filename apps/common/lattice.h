/*
 * lattice.h - CON's kernels that need no communication, shared by the shmam
 * version (apps/con.c) and the MPICH version (apps/mpi/con.c): the random
 * lattice graph and its edge hash, one rank's part of it (generation, local
 * union-find, the cross edges), the hooks of a round, and the sequential halves
 * of verification.  The graph and the answer are described in apps/con.c.
 *
 * Nothing here communicates: the callers fetch remote labels in their own way
 * and hand them in.  Messages go to stderr prefixed with part->prog (and the
 * rank); out of memory ends the process with exit status 1.  Labels are 32-bit:
 * the caller keeps n_global below UINT32_MAX.
 */
#ifndef APPS_COMMON_LATTICE_H
#define APPS_COMMON_LATTICE_H

#include <stddef.h>
#include <stdint.h>

#define LATTICE_IN_X 0x08                    /* edge bit: the -x edge from the left block */
#define LATTICE_FULL_VERIFY_MAX (1ull << 22) /* above this many nodes, "auto" samples */
#define LATTICE_SAMPLES 128                  /* nodes checked by a search when sampling */

/* The global lattice: P blocks of len x side x side (3-D) or len x side (2-D)
 * nodes stacked along the first axis; global id = linear index, first axis
 * slowest.  The +d edge of node g has the id g*dims + d. */
struct lattice {
    int dims;           /* 3 (comm) or 2 (comp) */
    uint64_t side, len; /* block: len along the first axis, side along the rest */
    uint64_t extent[3]; /* global extent per axis */
    uint64_t stride[3]; /* id distance of a step along each axis */
    uint64_t n_local;   /* nodes per rank */
    uint64_t n_global;  /* nodes in all */
    uint64_t threshold; /* an edge is present iff hash < threshold */
    int always;         /* p >= 1 */
    uint64_t seed;
};

/* What one rank holds.  label is the caller's (shared memory or an MPI
 * window); the other arrays are allocated here and freed by lattice_free. */
struct lattice_part {
    const char *prog; /* program name, the prefix of every message */
    int rank, nprocs;
    uint64_t base;   /* global id of local node 0 */
    uint8_t *edges;  /* edge bits per local node: bit d = +d edge, LATTICE_IN_X */
    uint32_t *rep;   /* local index of the node's local representative */
    uint32_t *label; /* this rank's n_local labels */
    uint32_t *out;   /* last-plane nodes with an edge to rank + 1 */
    size_t nout;
    uint32_t *in; /* first-plane nodes with an edge from rank - 1 */
    size_t nin;
    uint32_t *roots; /* distinct reps of out and in nodes, sorted */
    size_t nroots;
};

/* What verification found: errors is 0 iff every check passed; components
 * and label_sum must not depend on P; how says what was checked. */
struct lattice_verdict {
    uint64_t errors, components, label_sum;
    const char *how;
};

/* The command line of both versions. */
struct lattice_options {
    const char *input;         /* "comm" or "comp" */
    int dims, verify, corrupt; /* verify: 0 auto, 1 full, 2 sample */
    uint64_t side, len, seed;
    double p;
};

/* Parses --input, --side, --p, --seed, --length, --verify and --corrupt into o,
 * with the defaults of the input filled in.  getopt_long complains on stderr
 * as opterr says (the caller sets it).  Returns 0, or -1 on a bad command line. */
int lattice_parse(int argc, char **argv, struct lattice_options *o);

/* The lattice of o split over nprocs ranks. */
void lattice_init(struct lattice *lat, const struct lattice_options *o, int nprocs);

/* Prints the lattice and the memory per process, each line prefixed "prog: ". */
void lattice_print_header(const char *prog, const struct lattice_options *o,
                          const struct lattice *lat, int nprocs);

/* Whether verification is full (else sampled): --verify full, or auto and at
 * most LATTICE_FULL_VERIFY_MAX nodes. */
int lattice_verify_full(const struct lattice_options *o, const struct lattice *lat);

/* The input's name in the app line, comm-S or comp-S (comm-S-L when the
 * block's length differs from its side), into buf[0..size). */
void lattice_input_name(const struct lattice_options *o, char *buf, size_t size);

/* Prints the verdict: the invariants, then what was checked and the outcome,
 * each line prefixed "prog: ". */
void lattice_print_verdict(const char *prog, const struct lattice_verdict *v);

/* Whether global node g is one of pt's nodes. */
int lattice_is_local(const struct lattice *lat, const struct lattice_part *pt, uint64_t g);

/* Sorts a[0..n) and drops repeats; returns the new length. */
size_t lattice_sort_unique(uint32_t *a, size_t n);

/* The generate phase: pt->edges for pt's block, from the hash alone. */
void lattice_generate(const struct lattice *lat, struct lattice_part *pt);

/* The local phase: union-find over the edges inside the block (pt->rep[i] =
 * smallest local index of i's local component), label[i] = global id of
 * rep[i]; then the cross-edge endpoints pt->out, pt->in and their distinct
 * reps pt->roots.  Writes only pt's own labels. */
void lattice_local(const struct lattice *lat, struct lattice_part *pt);

/* The hooks of one round, given far[k] = the label across pt->out[k]: for each
 * distinct larger root of an edge whose two roots differ, the pair (larger <<
 * 32 | smallest partner), sorted, into pairs[0..return) (room for pt->nout).
 * Reads only pt's own labels. */
size_t lattice_hooks(const struct lattice_part *pt, const uint32_t *far, uint64_t *pairs);

/* Every node takes its rep's label (the end of the global phase). */
void lattice_resolve(const struct lattice *lat, struct lattice_part *pt);

/* Full verification, on one rank: all[g] (every label) against a sequential
 * union-find of the regenerated graph; fills v but for v->how. */
void lattice_check_all(const struct lattice *lat, const struct lattice_part *pt,
                       const uint32_t *all, struct lattice_verdict *v);

/* Sampled verification, the local half on every rank: labels agree across
 * every edge inside the block, none exceeds its node's id, and each local one
 * names a root.  Counts roots and sums labels into v; the distinct remote
 * labels go to remote[0..*nremote) (room for n_local), for the caller to read
 * their labels.  Returns the number of violations. */
uint64_t lattice_check_part(const struct lattice *lat, const struct lattice_part *pt,
                            struct lattice_verdict *v, uint32_t *remote, size_t *nremote);

/* Sampled verification, the remote half: got[k] = the label of remote[k] for
 * k < n (each must name itself), then got[n + k] = the label across
 * pt->out[k] (each must equal its near end's).  err is the violations found
 * so far (only the first few are reported).  Returns the new violations. */
uint64_t lattice_check_fetched(const struct lattice_part *pt, const uint32_t *remote,
                               size_t n, const uint32_t *got, uint64_t err);

/* Sampled verification, on one rank: LATTICE_SAMPLES deterministic nodes,
 * sorted and distinct, into s[0..return), and want[k] = the smallest id in
 * s[k]'s component by a breadth-first search of the regenerated graph. */
size_t lattice_sample(const struct lattice *lat, const struct lattice_part *pt, uint32_t *s,
                      uint32_t *want);

/* The mismatches between got[k] (the label of s[k]) and want[k], k < n. */
uint64_t lattice_check_samples(const struct lattice_part *pt, const uint32_t *s,
                               const uint32_t *got, const uint32_t *want, size_t n);

/* What a full (full != 0) or sampled verification checks, for the verdict. */
const char *lattice_how(int full);

/* For the tests: changes one of pt's labels, at a node with an inner edge if
 * there is one, so that every kind of verification must notice. */
void lattice_corrupt(const struct lattice *lat, struct lattice_part *pt);

/* Frees what lattice_generate and lattice_local allocated. */
void lattice_free(struct lattice_part *pt);

#endif
