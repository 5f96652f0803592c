/*
 * con.c - CON: connected components of a random lattice graph, after the Split-C
 * application of the same name (the paper's section 4.3, runs CON/comm and
 * CON/comp of Tables 3 and 4).
 *
 *   shmamrun -n P [-a ALG] build/apps/con [--input comm|comp] [--side S] [--p PROB]
 *            [--seed X] [--length L] [--verify auto|full|sample]
 *
 * The graph.  comm is a 3-D lattice, comp a 2-D one.  Each rank owns a block of
 * L x S x S (3-D) or L x S (2-D) nodes, L = S unless --length says otherwise; the
 * blocks are stacked along the first axis, so the global lattice is P*L x S x S
 * (or P*L x S) with open boundaries.  A node's global id is its linear index,
 * first axis slowest: rank r owns the contiguous ids [r*n, (r+1)*n), n = nodes
 * per rank.  Every lattice edge (g, g + stride[d]) has the id g*D + d and is
 * present with probability p, decided by a hash of that id and the seed alone:
 * the graph is a function of the global lattice, not of how it is split (the
 * same lattice split over 1, 2 or 4 ranks gives the same components).
 *
 * The answer.  label[g] = the smallest global id in g's component, kept in a
 * spread array of 32-bit words (sc_region_alloc), one per node.
 *
 * The algorithm, in bulk-synchronous phases separated by barriers:
 *   generate  each rank hashes the edges of its block (one byte of edge bits per
 *             node, including the edges that cross to the neighbouring blocks);
 *   local     union-find over the edges inside the block, always linking the
 *             larger root under the smaller, so every local component's root
 *             (its representative, rep) is its smallest node; label[v] = id of
 *             rep(v);
 *   global    rounds over the cross edges (u on rank r, w on rank r+1) with
 *             fine-grained one-word remote operations on the label array:
 *               - each rank copies label[rep(w)] into label[w] for the nodes w
 *                 its left neighbour will read; barrier;
 *               - rank r reads label[w] of every cross edge (sc_get32), sc_sync,
 *                 barrier (every read of the round is done before any write);
 *               - hooking: where the two roots differ, the larger root adopts
 *                 the smaller one's label (sc_store32 to the root's word, or a
 *                 local write), sc_all_store_sync; an all-reduce of the number
 *                 of hooks ends the loop when no label changed;
 *               - pointer jumping over the reps that touch a cross edge
 *                 (label[R] = label[label[R]], sc_get32 where remote) until an
 *                 all-reduce says no label changed in a whole step.
 *             Invariants: a label never exceeds its node's id, and a label that
 *             differs from its node's id names a node of the same component
 *             with a smaller id, so the labels form a forest whose roots are
 *             the smallest ids of what they have joined.  Every hook writes,
 *             to a node that was a root when the round began, a smaller such
 *             root of the same component.  So hooks may race (several to one
 *             root: only the last lands, and a lost one is made again next
 *             round; a store may land before its owner computes its own hooks)
 *             without breaking the invariants, and each round that hooks at
 *             all removes at least one root, so the loop ends.  Finally every
 *             node takes its rep's label;
 *   verify    full: rank 0 gathers every label (bulk gets), regenerates the
 *             whole graph from the hash and compares with a sequential
 *             union-find; sample (default above LATTICE_FULL_VERIFY_MAX nodes):
 *             every rank checks that labels agree across each of its edges
 *             (cross edges by remote reads), that no label exceeds its node's
 *             id and that every label is a root (label[label[g]] == label[g]);
 *             rank 0 then checks LATTICE_SAMPLES deterministic nodes against a
 *             breadth-first search of their components in the regenerated
 *             graph (the per-node checks leave one error possible, two
 *             components sharing a label; the samples look for it).  Both
 *             print the component count and the label sum, invariants that
 *             must not depend on P.
 *
 * Rank 0 prints the lattice, the phase times (maxima over ranks), the global
 * phase's operation counts, the invariants, and finally one line
 *   app,con,<input>,<claim>,<shm>,<procs>,<seconds>,verified|FAILED
 * (input: comm-S or comp-S, comm-S-L when --length differs from --side)
 * where seconds cover the local and global phases, from a barrier to a barrier:
 * the algorithm, not making its input (generate) nor checking its answer
 * (verify), as the other applications time theirs.  The exit status is nonzero
 * when verification fails.  The hidden option --corrupt changes one label on the
 * last rank before verification, for the tests.
 *
 * What needs no communication (the graph, the local phase, the hooks of a
 * round, the sequential halves of verification) is in apps/common/lattice.c,
 * shared with the MPICH version apps/mpi/con.c; this file holds the
 * communication over the Split-C-like layer.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmdline.h"
#include "common/lattice.h"
#include "splitc/splitc.h"

/* The region of the label array: label[g] is word g - r*n_local of rank r's part. */
static unsigned region;

struct stats {
    uint64_t rounds, jumps, gets, stores, hooks;
};

static void die(const char *msg)
{
    fprintf(stderr, "con: rank %d: %s\n", sc_rank(), msg);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* Where global node g's label lives. */
static sc_gptr_t label_ptr(const struct lattice *lat, uint64_t g)
{
    uint64_t owner = g / lat->n_local;
    return sc_gptr((unsigned)owner, region, (g - owner * lat->n_local) * 4);
}

/* ---- global phase ---- */

/* Root `hi` adopts the smaller root `lo`: a one-word store, or a local write. */
static void hook(const struct lattice *lat, struct lattice_part *pt, uint64_t hi,
                 uint32_t lo, struct stats *st)
{
    if (lattice_is_local(lat, pt, hi)) {
        uint32_t *w = &pt->label[hi - pt->base];
        if (lo < *w)
            *w = lo;
        return;
    }
    sc_store32(label_ptr(lat, hi), lo);
    st->stores++;
}

/* One hooking step over this rank's cross edges, given the labels of their far
 * ends; returns the number of hooks made.  Several edges may hook one root: only
 * the smallest candidate is sent. */
static uint64_t hook_all(const struct lattice *lat, struct lattice_part *pt,
                         const uint32_t *far, uint64_t *pairs, struct stats *st)
{
    size_t n = lattice_hooks(pt, far, pairs);

    for (size_t k = 0; k < n; k++)
        hook(lat, pt, pairs[k] >> 32, (uint32_t)pairs[k], st);
    return n;
}

/* One pointer-jumping step over this rank's boundary reps; returns how many
 * labels changed.  Labels are only read by others meanwhile (no stores are in
 * flight), and any value read is an ancestor, so racing steps are safe. */
static uint64_t jump_step(const struct lattice *lat, struct lattice_part *pt, uint32_t *tmp,
                          uint32_t *idx, struct stats *st)
{
    uint64_t changed = 0;
    size_t nr = 0;

    for (size_t j = 0; j < pt->nroots; j++) {
        uint32_t r = pt->roots[j], l = pt->label[r];
        if (l == pt->base + r)
            continue;
        if (lattice_is_local(lat, pt, l)) {
            uint32_t t = pt->label[l - pt->base];
            changed += t != l;
            pt->label[r] = t;
        } else {
            idx[nr] = r;
            sc_get32(&tmp[nr++], label_ptr(lat, l));
        }
    }
    sc_sync();
    st->gets += nr;
    for (size_t k = 0; k < nr; k++) {
        changed += tmp[k] != pt->label[idx[k]];
        pt->label[idx[k]] = tmp[k];
    }
    return changed;
}

static void global_phase(const struct lattice *lat, struct lattice_part *pt,
                         struct stats *st)
{
    uint32_t *far = xmalloc(pt->nout * sizeof *far);
    uint64_t *pairs = xmalloc(pt->nout * sizeof *pairs);
    uint32_t *tmp = xmalloc(pt->nroots * sizeof *tmp);
    uint32_t *idx = xmalloc(pt->nroots * sizeof *idx);

    for (;;) {
        st->rounds++;
        for (size_t k = 0; k < pt->nin; k++) /* what rank - 1 will read */
            pt->label[pt->in[k]] = pt->label[pt->rep[pt->in[k]]];
        sc_barrier();
        for (size_t k = 0; k < pt->nout; k++)
            sc_get32(&far[k], label_ptr(lat, pt->base + pt->out[k] + lat->stride[0]));
        sc_sync();
        st->gets += pt->nout;
        sc_barrier(); /* every read of this round precedes every write */
        uint64_t hooks = hook_all(lat, pt, far, pairs, st);
        st->hooks += hooks;
        sc_all_store_sync();
        if (sc_allreduce_sum_u64(hooks) == 0)
            break;
        do
            st->jumps++;
        while (sc_allreduce_sum_u64(jump_step(lat, pt, tmp, idx, st)) > 0);
    }
    lattice_resolve(lat, pt);
    free(far);
    free(pairs);
    free(tmp);
    free(idx);
}

/* ---- verification ---- */

/* Rank 0: labels of all ranks, gathered with bulk gets. */
static uint32_t *gather_labels(const struct lattice *lat, const struct lattice_part *pt)
{
    uint32_t *all = xmalloc(lat->n_global * sizeof *all);

    memcpy(all, pt->label, lat->n_local * sizeof *all);
    for (int r = 1; r < pt->nprocs; r++)
        sc_bulk_get(all + (uint64_t)r * lat->n_local, sc_gptr((unsigned)r, region, 0),
                    lat->n_local * sizeof *all);
    sc_sync();
    return all;
}

/* Every rank: the remote labels in remote[0..n) name roots, and labels agree
 * across this rank's cross edges.  Returns the number of violations. */
static uint64_t check_remote(const struct lattice *lat, const struct lattice_part *pt,
                             const uint32_t *remote, size_t n, uint64_t err)
{
    uint32_t *got = xmalloc((n + pt->nout) * sizeof *got);

    for (size_t k = 0; k < n; k++)
        sc_get32(&got[k], label_ptr(lat, remote[k]));
    for (size_t k = 0; k < pt->nout; k++)
        sc_get32(&got[n + k], label_ptr(lat, pt->base + pt->out[k] + lat->stride[0]));
    sc_sync();
    uint64_t bad = lattice_check_fetched(pt, remote, n, got, err);
    free(got);
    return bad;
}

/* Rank 0: the labels of LATTICE_SAMPLES deterministic nodes against a search
 * of their components.  Returns the number of mismatches. */
static uint64_t check_samples(const struct lattice *lat, const struct lattice_part *pt)
{
    uint32_t s[LATTICE_SAMPLES], want[LATTICE_SAMPLES], got[LATTICE_SAMPLES];
    size_t n = lattice_sample(lat, pt, s, want);

    for (size_t k = 0; k < n; k++)
        if (lattice_is_local(lat, pt, s[k]))
            got[k] = pt->label[s[k] - pt->base];
        else
            sc_get32(&got[k], label_ptr(lat, s[k]));
    sc_sync();
    return lattice_check_samples(pt, s, got, want, n);
}

static void verify_sample(const struct lattice *lat, const struct lattice_part *pt,
                          struct lattice_verdict *v)
{
    uint32_t *remote = xmalloc(lat->n_local * sizeof *remote);
    size_t nrem;
    uint64_t err = lattice_check_part(lat, pt, v, remote, &nrem);

    err += check_remote(lat, pt, remote, nrem, err);
    free(remote);
    if (pt->rank == 0)
        err += check_samples(lat, pt);
    v->errors = sc_allreduce_sum_u64(err);
    v->components = sc_allreduce_sum_u64(v->components);
    v->label_sum = sc_allreduce_sum_u64(v->label_sum);
}

static void verify(const struct lattice *lat, const struct lattice_part *pt, int full,
                   struct lattice_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->how = lattice_how(full);
    if (!full) {
        verify_sample(lat, pt, v);
        return;
    }
    uint64_t w[3] = {0, 0, 0};
    if (pt->rank == 0) {
        uint32_t *all = gather_labels(lat, pt);
        lattice_check_all(lat, pt, all, v);
        free(all);
        w[0] = v->errors, w[1] = v->components, w[2] = v->label_sum;
    }
    sc_broadcast(w, sizeof w, 0); /* the others serve the gather meanwhile */
    v->errors = w[0], v->components = w[1], v->label_sum = w[2];
}

/* ---- main ---- */

/* The usage, to f: stdout for --help, stderr for a bad command line. */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: shmamrun -n P [-a ALG] con [--input comm|comp] [--side S] [--p PROB] "
            "[--seed X] [--length L] [--verify auto|full|sample]\n");
}

int main(int argc, char **argv)
{
    struct lattice_options o;
    struct lattice lat;
    struct lattice_part pt = {.prog = "con"};
    struct stats st = {0};
    struct lattice_verdict v;

    if (cmdline_asks_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    sc_init(&argc, &argv);
    opterr = sc_rank() == 0; /* one complaint, not one per rank */
    if (lattice_parse(argc, argv, &o) < 0) {
        if (sc_rank() == 0)
            usage(stderr);
        exit(2);
    }
    pt.rank = sc_rank();
    pt.nprocs = sc_nprocs();
    lattice_init(&lat, &o, pt.nprocs);
    if (lat.n_global >= UINT32_MAX)
        die("more than 2^32 - 1 nodes: labels are 32-bit");
    pt.base = (uint64_t)pt.rank * lat.n_local;
    region = sc_region_alloc(lat.n_local * sizeof *pt.label, (void **)&pt.label);
    if (pt.rank == 0)
        lattice_print_header(pt.prog, &o, &lat, pt.nprocs);

    sc_barrier();
    double t0 = sc_now();
    lattice_generate(&lat, &pt);
    sc_barrier();
    double t1 = sc_now();
    lattice_local(&lat, &pt);
    sc_barrier();
    double t2 = sc_now();
    global_phase(&lat, &pt, &st);
    sc_barrier();
    double t3 = sc_now();
    if (o.corrupt && pt.rank == pt.nprocs - 1)
        lattice_corrupt(&lat, &pt);
    sc_barrier();
    verify(&lat, &pt, lattice_verify_full(&o, &lat), &v);
    double t4 = sc_now();

    double gen = sc_allreduce_max_d(t1 - t0), loc = sc_allreduce_max_d(t2 - t1);
    double glob = sc_allreduce_max_d(t3 - t2), ver = sc_allreduce_max_d(t4 - t3);
    double total = sc_allreduce_max_d(t3 - t1);
    uint64_t gets = sc_allreduce_sum_u64(st.gets), stores = sc_allreduce_sum_u64(st.stores);
    uint64_t hooks = sc_allreduce_sum_u64(st.hooks), cross = sc_allreduce_sum_u64(pt.nout);
    if (pt.rank == 0) {
        const char *shm = getenv("SHMAM_SHM");
        char input[64];
        lattice_input_name(&o, input, sizeof input);
        printf("con: generate %.3f s, local %.3f s, global %.3f s, verify %.3f s\n", gen,
               loc, glob, ver);
        printf("con: global phase: %llu cross edges, %llu rounds, %llu jump steps, %llu "
               "gets, %llu stores, %llu hooks\n",
               (unsigned long long)cross, (unsigned long long)st.rounds,
               (unsigned long long)st.jumps, (unsigned long long)gets,
               (unsigned long long)stores, (unsigned long long)hooks);
        lattice_print_verdict(pt.prog, &v);
        printf("app,con,%s,%s,%s,%d,%.3f,%s\n", input, am_ep_claim(sc_ep()),
               shm && *shm ? shm : "posix", pt.nprocs, total,
               v.errors ? "FAILED" : "verified");
        fflush(stdout);
    }
    sc_finalize();
    lattice_free(&pt);
    return v.errors ? 1 : 0;
}
