/*
 * con.c (mpi_con) - the MPICH baseline of apps/con.c: the same connected
 * components of the same random lattice graphs, the same phases and
 * verification, with the label array in an MPI window and the fine-grained
 * remote reads and writes as MPI one-sided operations.
 *
 *   mpiexec -n P build/apps/mpi_con [--input comm|comp] [--side S] [--p PROB]
 *           [--seed X] [--length L] [--verify auto|full|sample]
 *
 * The graph (see apps/con.c): a 3-D (comm) or 2-D (comp) lattice of P blocks of
 * L x S x S (or L x S) nodes stacked along the first axis; global id = linear
 * index, first axis slowest; edge (g, g + stride[d]) present with probability p
 * by a hash of its id g*D + d and the seed, so the graph and its answer (label =
 * smallest id of the component) do not depend on P or on the implementation.
 *
 * The label array is allocated with MPI_Win_allocate; every rank holds a
 * passive-target epoch on all ranks (MPI_Win_lock_all) for the whole run.  The
 * layer's operations map to:
 *   sc_get32 + sc_sync        MPI_Get of one MPI_UINT32_T + MPI_Win_flush to
 *                             every rank this rank accessed since the last one
 *   sc_store32 (a hook)       MPI_Accumulate(MPI_MIN) of one word: concurrent
 *                             hooks to one root are well defined in MPI only as
 *                             accumulates, so here the smallest candidate wins
 *                             (in the shmam version the last one does)
 *   sc_all_store_sync         the same flushes + barrier
 *   barrier, all-reduce       MPI_Barrier, MPI_Allreduce (with MPI_Win_sync
 *                             around them, ordering local loads and stores with
 *                             the window as the unified memory model asks)
 * MPI forbids a local store concurrent with a remote get of the same word, which
 * the shmam version allows (its handlers run in the owner), so here a
 * pointer-jumping step reads everything first (gets, also of local words),
 * waits at a barrier, then writes.  Otherwise the global phase is that of
 * apps/con.c: rounds of reading the far label of every cross edge, hooking the
 * larger root under the smaller, and pointer jumping, until a round hooks
 * nothing.
 *
 * Two faults of MPICH 4.0.2 (ch4:ucx) shape this port; apps/mpi/repro_onesided.c
 * shows both.  MPI_Win_flush_all sometimes returns before this rank's gets have
 * completed (with 3 or more ranks: whole batches of far labels still unwritten,
 * read as garbage hooks, so CON failed its verification or MPI_Accumulate got a
 * rank out of range); a flush per accessed target has never been seen to.  And
 * MPI_MIN compares MPI_UINT32_T as signed (MPICH bug pmodels/mpich#6083), so labels must
 * stay below 2^31.
 *
 * Verification: full (rank 0 gathers all labels with MPI_Gather and compares with
 * a sequential union-find of the regenerated graph) up to LATTICE_FULL_VERIFY_MAX
 * nodes, else sampled (per-node checks on every rank and LATTICE_SAMPLES nodes
 * against a breadth-first search of their components), as in apps/con.c.  Rank 0 prints
 * the phase times (max over ranks), the invariants (component count, label sum)
 * and `app,con,<input>,mpich,-,<P>,<seconds>,<verified|FAILED>`, seconds covering
 * the local and global phases.  The exit status is 0 only if verified; the
 * hidden --corrupt changes one label on the last rank before verification.
 *
 * The graph, the local phase, the hooks of a round and the sequential halves of
 * verification are apps/common/lattice.c, the same code as the shmam version's.
 */
#include <getopt.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmdline.h"
#include "common/lattice.h"

static MPI_Win win;
static int my_rank, nprocs;
static unsigned char *accessed; /* [rank]: an operation to it since the last flush() */

struct stats {
    uint64_t rounds, jumps, gets, stores, hooks;
};

static void die(const char *msg)
{
    fprintf(stderr, "mpi_con: rank %d: %s\n", my_rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* ---- one-sided access to the label window ---- */

/* Start reading global node g's label into *dst (valid after flush()). */
static void get32(const struct lattice *lat, uint32_t *dst, uint64_t g)
{
    uint64_t owner = g / lat->n_local;
    MPI_Get(dst, 1, MPI_UINT32_T, (int)owner, (MPI_Aint)(g - owner * lat->n_local), 1,
            MPI_UINT32_T, win);
    accessed[owner] = 1;
}

/* Every one-sided operation this rank started has completed at its target.
 * One MPI_Win_flush per accessed rank, not MPI_Win_flush_all: MPICH 4.0.2's
 * MPI_Win_flush_all may return with gets still in flight (see the top). */
static void flush(void)
{
    for (int r = 0; r < nprocs; r++)
        if (accessed[r]) {
            MPI_Win_flush(r, win);
            accessed[r] = 0;
        }
}

/* A barrier that also orders this rank's loads and stores of its window part
 * with everyone's one-sided operations before and after it. */
static void barrier(void)
{
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
}

static uint64_t sum_u64(uint64_t x)
{
    uint64_t y;
    MPI_Allreduce(&x, &y, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return y;
}

static double max_d(double x)
{
    double y;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return y;
}

/* ---- global phase ---- */

/* For each hook in pairs[0..n) (lattice_hooks: one per distinct larger root),
 * an atomic minimum of its smaller root into the larger one's word (also when
 * it is local).  vals must stay untouched until the next flush. */
static void send_hooks(const struct lattice *lat, struct lattice_part *pt,
                       const uint64_t *pairs, size_t n, uint32_t *vals, struct stats *st)
{
    for (size_t k = 0; k < n; k++) {
        uint64_t hi = pairs[k] >> 32, owner = hi / lat->n_local;
        vals[k] = (uint32_t)pairs[k];
        MPI_Accumulate(&vals[k], 1, MPI_UINT32_T, (int)owner,
                       (MPI_Aint)(hi - owner * lat->n_local), 1, MPI_UINT32_T, MPI_MIN,
                       win);
        accessed[owner] = 1;
        st->stores += owner != (uint64_t)pt->rank;
    }
}

/* One pointer-jumping step over this rank's boundary reps: read label[label[R]]
 * for every R not pointing at itself, barrier, write.  Returns how many labels
 * changed. */
static uint64_t jump_step(const struct lattice *lat, struct lattice_part *pt, uint32_t *tmp,
                          uint32_t *idx, struct stats *st)
{
    uint64_t changed = 0;
    size_t nr = 0;

    for (size_t j = 0; j < pt->nroots; j++) {
        uint32_t r = pt->roots[j], l = pt->label[r];
        if (l == pt->base + r)
            continue;
        idx[nr] = r;
        get32(lat, &tmp[nr++], l);
        st->gets += !lattice_is_local(lat, pt, l);
    }
    flush();
    barrier(); /* every read of the step precedes every write */
    for (size_t k = 0; k < nr; k++) {
        changed += tmp[k] != pt->label[idx[k]];
        pt->label[idx[k]] = tmp[k];
    }
    MPI_Win_sync(win);
    return changed;
}

static void global_phase(const struct lattice *lat, struct lattice_part *pt,
                         struct stats *st)
{
    uint32_t *far = xmalloc(pt->nout * sizeof *far), *vals = xmalloc(pt->nout * 4);
    uint64_t *pairs = xmalloc(pt->nout * sizeof *pairs);
    uint32_t *tmp = xmalloc(pt->nroots * sizeof *tmp);
    uint32_t *idx = xmalloc(pt->nroots * sizeof *idx);

    for (;;) {
        st->rounds++;
        for (size_t k = 0; k < pt->nin; k++) /* what rank - 1 will read */
            pt->label[pt->in[k]] = pt->label[pt->rep[pt->in[k]]];
        barrier();
        for (size_t k = 0; k < pt->nout; k++)
            get32(lat, &far[k], pt->base + pt->out[k] + lat->stride[0]);
        flush();
        st->gets += pt->nout;
        /* Only local loads: before anyone may accumulate into this rank's words. */
        size_t hooks = lattice_hooks(pt, far, pairs);
        barrier(); /* every read of this round precedes every write */
        send_hooks(lat, pt, pairs, hooks, vals, st);
        st->hooks += hooks;
        flush();
        barrier();
        if (sum_u64(hooks) == 0)
            break;
        do
            st->jumps++;
        while (sum_u64(jump_step(lat, pt, tmp, idx, st)) > 0);
    }
    lattice_resolve(lat, pt);
    MPI_Win_sync(win);
    free(far);
    free(vals);
    free(pairs);
    free(tmp);
    free(idx);
}

/* ---- verification ---- */

/* Every rank: the remote labels in remote[0..n) name roots, and labels agree
 * across this rank's cross edges.  Returns the number of violations. */
static uint64_t check_remote(const struct lattice *lat, const struct lattice_part *pt,
                             const uint32_t *remote, size_t n, uint64_t err)
{
    uint32_t *got = xmalloc((n + pt->nout) * sizeof *got);

    for (size_t k = 0; k < n; k++)
        get32(lat, &got[k], remote[k]);
    for (size_t k = 0; k < pt->nout; k++)
        get32(lat, &got[n + k], pt->base + pt->out[k] + lat->stride[0]);
    flush();
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
        get32(lat, &got[k], s[k]);
    flush();
    return lattice_check_samples(pt, s, got, want, n);
}

/* Full: rank 0 gathers every label and checks them all.  Sampled: every rank
 * checks its part, rank 0 the samples.  Collective; the same v everywhere. */
static void verify(const struct lattice *lat, const struct lattice_part *pt, int full,
                   struct lattice_verdict *v)
{
    uint64_t w[3] = {0, 0, 0};

    memset(v, 0, sizeof *v);
    v->how = lattice_how(full);
    if (full) {
        uint32_t *all = pt->rank == 0 ? xmalloc(lat->n_global * sizeof *all) : NULL;
        MPI_Gather(pt->label, (int)lat->n_local, MPI_UINT32_T, all, (int)lat->n_local,
                   MPI_UINT32_T, 0, MPI_COMM_WORLD);
        if (pt->rank == 0)
            lattice_check_all(lat, pt, all, v);
        free(all);
        w[0] = v->errors, w[1] = v->components, w[2] = v->label_sum;
        MPI_Bcast(w, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    } else {
        uint32_t *remote = xmalloc(lat->n_local * sizeof *remote);
        size_t nrem;
        uint64_t err = lattice_check_part(lat, pt, v, remote, &nrem);
        err += check_remote(lat, pt, remote, nrem, err);
        free(remote);
        if (pt->rank == 0)
            err += check_samples(lat, pt);
        w[0] = sum_u64(err), w[1] = sum_u64(v->components), w[2] = sum_u64(v->label_sum);
    }
    v->errors = w[0], v->components = w[1], v->label_sum = w[2];
}

/* ---- main ---- */

/* The usage, to f: stdout for --help, stderr for a bad command line. */
static void usage(FILE *f)
{
    fprintf(f, "usage: mpiexec -n P mpi_con [--input comm|comp] [--side S] [--p PROB] "
               "[--seed X] [--length L] [--verify auto|full|sample]\n");
}

int main(int argc, char **argv)
{
    struct lattice_options o;
    struct lattice lat;
    struct lattice_part pt = {.prog = "mpi_con"};
    struct stats st = {0};
    struct lattice_verdict v;

    if (cmdline_asks_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &pt.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &pt.nprocs);
    my_rank = pt.rank, nprocs = pt.nprocs;
    opterr = my_rank == 0; /* one complaint, not one per rank */
    if (lattice_parse(argc, argv, &o) < 0) {
        if (my_rank == 0)
            usage(stderr);
        exit(2);
    }
    lattice_init(&lat, &o, pt.nprocs);
    if (lat.n_global > INT32_MAX)
        die("more than 2^31 - 1 nodes: MPICH's MPI_MIN would compare labels as signed");
    accessed = xmalloc((size_t)pt.nprocs);
    memset(accessed, 0, (size_t)pt.nprocs);
    pt.base = (uint64_t)pt.rank * lat.n_local;
    /* Window parts are padded to 64 bytes: MPICH 4.0.2 (ch4) puts a part whose
     * size is not a multiple of 16 bytes at another address than the one remote
     * operations use (a get of word 15 of rank 1's 25 words returns word 14). */
    MPI_Aint bytes = (MPI_Aint)((lat.n_local * sizeof *pt.label + 63) / 64 * 64);
    MPI_Win_allocate(bytes, sizeof *pt.label, MPI_INFO_NULL, MPI_COMM_WORLD, &pt.label,
                     &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    if (pt.rank == 0)
        lattice_print_header(pt.prog, &o, &lat, pt.nprocs);

    barrier();
    double t0 = MPI_Wtime();
    lattice_generate(&lat, &pt);
    barrier();
    double t1 = MPI_Wtime();
    lattice_local(&lat, &pt);
    barrier();
    double t2 = MPI_Wtime();
    global_phase(&lat, &pt, &st);
    barrier();
    double t3 = MPI_Wtime();
    if (o.corrupt && pt.rank == pt.nprocs - 1)
        lattice_corrupt(&lat, &pt);
    barrier();
    verify(&lat, &pt, lattice_verify_full(&o, &lat), &v);
    double t4 = MPI_Wtime();

    double gen = max_d(t1 - t0), loc = max_d(t2 - t1), glob = max_d(t3 - t2);
    double ver = max_d(t4 - t3), total = max_d(t3 - t1);
    uint64_t gets = sum_u64(st.gets), stores = sum_u64(st.stores);
    uint64_t hooks = sum_u64(st.hooks), cross = sum_u64(pt.nout);
    if (pt.rank == 0) {
        char input[64];
        lattice_input_name(&o, input, sizeof input);
        printf("mpi_con: generate %.3f s, local %.3f s, global %.3f s, verify %.3f s\n",
               gen, loc, glob, ver);
        printf(
            "mpi_con: global phase: %llu cross edges, %llu rounds, %llu jump steps, %llu "
            "remote gets, %llu remote accumulates, %llu hooks\n",
            (unsigned long long)cross, (unsigned long long)st.rounds,
            (unsigned long long)st.jumps, (unsigned long long)gets,
            (unsigned long long)stores, (unsigned long long)hooks);
        lattice_print_verdict(pt.prog, &v);
        printf("app,con,%s,mpich,-,%d,%.3f,%s\n", input, pt.nprocs, total,
               v.errors ? "FAILED" : "verified");
        fflush(stdout);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    lattice_free(&pt);
    free(accessed);
    return v.errors ? 1 : 0;
}
