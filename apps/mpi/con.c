/*
 * con.c (mpi_con) - the MPICH baseline of apps/con.c: the same connected
 * components of the same random lattice graphs, the same phases and
 * verification, with the label array in an MPI window and the fine-grained
 * remote reads and writes as MPI one-sided operations.
 *
 *   mpiexec -n P build/apps/mpi_con --input comm|comp [--side S] [--p PROB]
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
 *   sc_get32 + sc_sync        MPI_Get of one MPI_UINT32_T + MPI_Win_flush_all
 *   sc_store32 (a hook)       MPI_Accumulate(MPI_MIN) of one word: concurrent
 *                             hooks to one root are well defined in MPI only as
 *                             accumulates, so here the smallest candidate wins
 *                             (in the shmam version the last one does)
 *   sc_all_store_sync         MPI_Win_flush_all + barrier
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
 * Verification: full (rank 0 gathers all labels with MPI_Gather and compares with
 * a sequential union-find of the regenerated graph) up to FULL_VERIFY_MAX global
 * nodes, else sampled (per-node checks on every rank and SAMPLES nodes against a
 * breadth-first search of their components), as in apps/con.c.  Rank 0 prints
 * the phase times (max over ranks), the invariants (component count, label sum)
 * and `app,con,<input>,mpich,-,<P>,<seconds>,<verified|FAILED>`, seconds covering
 * the local and global phases.  The exit status is 0 only if verified; the
 * hidden --corrupt changes one label on the last rank before verification.
 */
#include <getopt.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IN_X 0x08                    /* edge bit: the -x edge from the block to the left */
#define FULL_VERIFY_MAX (1ull << 22) /* above this many global nodes, "auto" samples */
#define SAMPLES 128

static MPI_Win win;
static int my_rank;

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

/* What one rank holds. */
struct part {
    int rank, nprocs;
    uint64_t base;   /* global id of local node 0 */
    uint8_t *edges;  /* edge bits per local node: bit d = +d edge, IN_X */
    uint32_t *rep;   /* local index of the node's local representative */
    uint32_t *label; /* this rank's part of the window */
    uint32_t *out;   /* last-plane nodes with an edge to rank + 1 */
    size_t nout;
    uint32_t *in; /* first-plane nodes with an edge from rank - 1 */
    size_t nin;
    uint32_t *roots; /* distinct reps of out and in nodes */
    size_t nroots;
};

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

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Whether the +d edge of global node g is present (its far end must exist). */
static int present(const struct lattice *lat, uint64_t g, int d)
{
    return lat->always ||
           mix64((g * (uint64_t)lat->dims + (uint64_t)d) ^ lat->seed) < lat->threshold;
}

/* Coordinate of global node g along axis d. */
static uint64_t coord(const struct lattice *lat, uint64_t g, int d)
{
    return d == 0 ? g / lat->stride[0] : g / lat->stride[d] % lat->extent[d];
}

static void lattice_init(struct lattice *lat, int dims, uint64_t side, uint64_t len,
                         double p, uint64_t seed, int nprocs)
{
    lat->dims = dims;
    lat->side = side;
    lat->len = len;
    lat->extent[0] = len * (uint64_t)nprocs;
    lat->extent[1] = lat->extent[2] = side;
    lat->stride[dims - 1] = 1;
    for (int d = dims - 2; d >= 0; d--)
        lat->stride[d] = lat->stride[d + 1] * side;
    lat->n_local = len * lat->stride[0];
    lat->n_global = lat->n_local * (uint64_t)nprocs;
    lat->always = p >= 1.0;
    lat->threshold = p <= 0.0 ? 0 : lat->always ? UINT64_MAX : (uint64_t)(p * 0x1p64);
    lat->seed = mix64(seed ^ 0x636f6e00ull);
}

/* Edge bits of the nx planes starting at plane x0 of the global lattice. */
static void gen_slab(const struct lattice *lat, uint64_t x0, uint64_t nx, uint8_t *e)
{
    uint64_t plane = lat->stride[0];

    for (uint64_t i = 0; i < nx * plane; i++) {
        uint64_t g = x0 * plane + i;
        uint8_t b = 0;
        for (int d = 0; d < lat->dims; d++)
            if (coord(lat, g, d) + 1 < lat->extent[d] && present(lat, g, d))
                b |= (uint8_t)(1u << d);
        if (i < plane && x0 > 0 && present(lat, g - plane, 0))
            b |= IN_X;
        e[i] = b;
    }
}

/* Union-find with path halving; parent[x] <= x always holds, so the root of a
 * set is its smallest member. */
static uint32_t find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void unite(uint32_t *parent, uint32_t a, uint32_t b)
{
    uint32_t ra = find(parent, a), rb = find(parent, b);

    if (ra < rb)
        parent[rb] = ra;
    else if (rb < ra)
        parent[ra] = rb;
}

/* Components of a slab of nx planes over its inner edges: on return parent[i]
 * is the smallest index of i's component (slab-local indices). */
static void slab_components(const struct lattice *lat, uint64_t nx, const uint8_t *e,
                            uint32_t *parent)
{
    uint64_t n = nx * lat->stride[0], inner = n - lat->stride[0];

    for (uint64_t i = 0; i < n; i++)
        parent[i] = (uint32_t)i;
    for (uint64_t i = 0; i < n; i++)
        for (int d = 0; d < lat->dims; d++)
            if ((e[i] >> d & 1) && (d > 0 || i < inner))
                unite(parent, (uint32_t)i, (uint32_t)(i + lat->stride[d]));
    for (uint64_t i = 0; i < n; i++) /* parent[i] <= i: already final */
        parent[i] = parent[parent[i]];
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts a[0..n) and drops repeats; returns the new length. */
static size_t sort_unique(uint32_t *a, size_t n)
{
    size_t m = 0;

    qsort(a, n, sizeof *a, cmp_u32);
    for (size_t i = 0; i < n; i++)
        if (m == 0 || a[m - 1] != a[i])
            a[m++] = a[i];
    return m;
}

/* ---- breadth-first search, for sampled verification ---- */

static void mark(uint64_t *seen, uint64_t g)
{
    seen[g / 64] |= 1ull << (g % 64);
}

static int marked(const uint64_t *seen, uint64_t g)
{
    return seen[g / 64] >> (g % 64) & 1;
}

/* A growing queue of node ids for the breadth-first search. */
struct queue {
    uint32_t *q;
    size_t head, tail, cap;
};

static void visit(struct queue *q, uint64_t *seen, uint64_t g)
{
    if (marked(seen, g))
        return;
    mark(seen, g);
    if (q->tail == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 4096;
        q->q = realloc(q->q, q->cap * sizeof *q->q);
        if (!q->q)
            die("out of memory");
    }
    q->q[q->tail++] = (uint32_t)g;
}

/* Every node of g's component, in the regenerated graph, into q->q[0..tail). */
static void search(const struct lattice *lat, struct queue *q, uint64_t *seen, uint64_t g)
{
    q->head = q->tail = 0;
    visit(q, seen, g);
    while (q->head < q->tail) {
        uint64_t x = q->q[q->head++];
        for (int d = 0; d < lat->dims; d++) {
            uint64_t c = coord(lat, x, d), s = lat->stride[d];
            if (c + 1 < lat->extent[d] && present(lat, x, d))
                visit(q, seen, x + s);
            if (c > 0 && present(lat, x - s, d))
                visit(q, seen, x - s);
        }
    }
}

/* Rank 0: want[k] = the smallest id in the component of s[k], for the sorted,
 * distinct nodes s[0..n); each component is searched once. */
static void sample_components(const struct lattice *lat, const uint32_t *s, size_t n,
                              uint32_t *want)
{
    uint64_t *seen = calloc(lat->n_global / 64 + 1, sizeof *seen);
    struct queue q = {0};

    if (!seen)
        die("out of memory");
    for (size_t k = 0; k < n; k++) {
        if (marked(seen, s[k]))
            continue;
        search(lat, &q, seen, s[k]);
        uint32_t min = UINT32_MAX;
        for (size_t i = 0; i < q.tail; i++)
            min = q.q[i] < min ? q.q[i] : min;
        for (size_t i = 0; i < q.tail; i++) {
            uint32_t *hit = bsearch(&q.q[i], s, n, sizeof *s, cmp_u32);
            if (hit)
                want[hit - s] = min;
        }
    }
    free(seen);
    free(q.q);
}

/* ---- one-sided access to the label window ---- */

/* Start reading global node g's label into *dst (valid after flush()). */
static void get32(const struct lattice *lat, uint32_t *dst, uint64_t g)
{
    uint64_t owner = g / lat->n_local;
    MPI_Get(dst, 1, MPI_UINT32_T, (int)owner, (MPI_Aint)(g - owner * lat->n_local), 1,
            MPI_UINT32_T, win);
}

/* Every one-sided operation this rank started has completed at its target. */
static void flush(void)
{
    MPI_Win_flush_all(win);
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

static int is_local(const struct lattice *lat, const struct part *pt, uint64_t g)
{
    return g - pt->base < lat->n_local; /* unsigned: also false below base */
}

/* ---- generate and local phases ---- */

static void generate(const struct lattice *lat, struct part *pt)
{
    pt->edges = xmalloc(lat->n_local);
    gen_slab(lat, (uint64_t)pt->rank * lat->len, lat->len, pt->edges);
}

static void local_phase(const struct lattice *lat, struct part *pt)
{
    pt->rep = xmalloc(lat->n_local * sizeof *pt->rep);
    slab_components(lat, lat->len, pt->edges, pt->rep);
    for (uint64_t i = 0; i < lat->n_local; i++)
        pt->label[i] = (uint32_t)(pt->base + pt->rep[i]);
}

/* The cross-edge endpoints and their distinct reps. */
static void find_boundary(const struct lattice *lat, struct part *pt)
{
    uint64_t plane = lat->stride[0], last = lat->n_local - plane;

    pt->out = xmalloc(plane * sizeof *pt->out);
    pt->in = xmalloc(plane * sizeof *pt->in);
    pt->nout = pt->nin = 0;
    for (uint64_t k = 0; k < plane; k++) {
        if (pt->rank + 1 < pt->nprocs && (pt->edges[last + k] & 1))
            pt->out[pt->nout++] = (uint32_t)(last + k);
        if (pt->edges[k] & IN_X)
            pt->in[pt->nin++] = (uint32_t)k;
    }
    pt->roots = xmalloc((pt->nout + pt->nin) * sizeof *pt->roots);
    for (size_t k = 0; k < pt->nout; k++)
        pt->roots[k] = pt->rep[pt->out[k]];
    for (size_t k = 0; k < pt->nin; k++)
        pt->roots[pt->nout + k] = pt->rep[pt->in[k]];
    pt->nroots = sort_unique(pt->roots, pt->nout + pt->nin);
}

/* ---- global phase ---- */

/* The hooks of this rank's cross edges, given the labels of their far ends:
 * (larger root << 32 | smaller root) where they differ, sorted.  Only local
 * loads: call it before anyone may accumulate into this rank's words. */
static size_t find_hooks(struct part *pt, const uint32_t *far, uint64_t *pairs)
{
    size_t n = 0;

    for (size_t k = 0; k < pt->nout; k++) {
        uint32_t a = pt->label[pt->rep[pt->out[k]]], b = far[k];
        if (a != b)
            pairs[n++] = a > b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    }
    qsort(pairs, n, sizeof *pairs, cmp_u64);
    return n;
}

/* For each distinct larger root of pairs[0..n), an atomic minimum of its
 * smallest partner into its word (also when it is local).  vals must stay
 * untouched until the next flush.  Returns the number of hooks. */
static uint64_t send_hooks(const struct lattice *lat, struct part *pt,
                           const uint64_t *pairs, size_t n, uint32_t *vals,
                           struct stats *st)
{
    uint64_t hooks = 0;

    for (size_t k = 0; k < n; k++) {
        if (k > 0 && pairs[k] >> 32 == pairs[k - 1] >> 32)
            continue;
        uint64_t hi = pairs[k] >> 32, owner = hi / lat->n_local;
        vals[hooks] = (uint32_t)pairs[k];
        MPI_Accumulate(&vals[hooks++], 1, MPI_UINT32_T, (int)owner,
                       (MPI_Aint)(hi - owner * lat->n_local), 1, MPI_UINT32_T, MPI_MIN,
                       win);
        st->stores += owner != (uint64_t)pt->rank;
    }
    return hooks;
}

/* One pointer-jumping step over this rank's boundary reps: read label[label[R]]
 * for every R not pointing at itself, barrier, write.  Returns how many labels
 * changed. */
static uint64_t jump_step(const struct lattice *lat, struct part *pt, uint32_t *tmp,
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
        st->gets += !is_local(lat, pt, l);
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

static void global_phase(const struct lattice *lat, struct part *pt, struct stats *st)
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
        size_t n = find_hooks(pt, far, pairs);
        barrier(); /* every read of this round precedes every write */
        uint64_t hooks = send_hooks(lat, pt, pairs, n, vals, st);
        st->hooks += hooks;
        flush();
        barrier();
        if (sum_u64(hooks) == 0)
            break;
        do
            st->jumps++;
        while (sum_u64(jump_step(lat, pt, tmp, idx, st)) > 0);
    }
    for (uint64_t i = 0; i < lat->n_local; i++) /* rep[i] <= i is already final */
        pt->label[i] = pt->label[pt->rep[i]];
    MPI_Win_sync(win);
    free(far);
    free(vals);
    free(pairs);
    free(tmp);
    free(idx);
}

/* ---- verification ---- */

struct verdict {
    uint64_t errors, components, label_sum;
    const char *how;
};

/* Rank 0: compare every label with a sequential union-find of the whole graph. */
static void verify_full(const struct lattice *lat, const struct part *pt, struct verdict *v)
{
    uint32_t *all = pt->rank == 0 ? xmalloc(lat->n_global * sizeof *all) : NULL;

    MPI_Gather(pt->label, (int)lat->n_local, MPI_UINT32_T, all, (int)lat->n_local,
               MPI_UINT32_T, 0, MPI_COMM_WORLD);
    if (pt->rank != 0)
        return;
    uint8_t *e = xmalloc(lat->n_global);
    uint32_t *want = xmalloc(lat->n_global * sizeof *want);
    gen_slab(lat, 0, lat->extent[0], e);
    slab_components(lat, lat->extent[0], e, want);
    for (uint64_t g = 0; g < lat->n_global; g++) {
        v->components += want[g] == g;
        v->label_sum += want[g];
        if (all[g] != want[g] && v->errors++ < 5)
            fprintf(stderr, "mpi_con: node %llu: label %u, want %u\n",
                    (unsigned long long)g, all[g], want[g]);
    }
    free(all);
    free(e);
    free(want);
}

static uint64_t report_bad(uint64_t errors, uint64_t g, uint32_t have, uint64_t want,
                           const char *what)
{
    if (errors < 5)
        fprintf(stderr, "mpi_con: rank %d: node %llu: label %u, %s %llu\n", my_rank,
                (unsigned long long)g, have, what, (unsigned long long)want);
    return 1;
}

/* Every rank: the remote labels in remote[0..n) name roots, and labels agree
 * across this rank's cross edges.  Returns the number of violations. */
static uint64_t check_remote(const struct lattice *lat, const struct part *pt,
                             const uint32_t *remote, size_t n, uint64_t err)
{
    uint64_t bad = 0;
    uint32_t *got = xmalloc((n + pt->nout) * sizeof *got);

    for (size_t k = 0; k < n; k++)
        get32(lat, &got[k], remote[k]);
    for (size_t k = 0; k < pt->nout; k++)
        get32(lat, &got[n + k], pt->base + pt->out[k] + lat->stride[0]);
    flush();
    for (size_t k = 0; k < n; k++)
        if (got[k] != remote[k])
            bad += report_bad(err + bad, remote[k], remote[k], got[k], "(a label) has");
    for (size_t k = 0; k < pt->nout; k++)
        if (got[n + k] != pt->label[pt->out[k]])
            bad += report_bad(err + bad, pt->base + pt->out[k], pt->label[pt->out[k]],
                              got[n + k], "neighbour across the boundary has");
    free(got);
    return bad;
}

/* Every rank: labels agree across every edge, none exceeds its node's id, and
 * each names a root.  Returns the number of violations; counts roots and sums
 * labels into v. */
static uint64_t check_local(const struct lattice *lat, const struct part *pt,
                            struct verdict *v)
{
    uint64_t err = 0, inner = lat->n_local - lat->stride[0];
    uint32_t *remote = xmalloc(lat->n_local * sizeof *remote);
    size_t nrem = 0;

    for (uint64_t i = 0; i < lat->n_local; i++) {
        uint32_t l = pt->label[i];
        uint64_t g = pt->base + i;
        for (int d = 0; d < lat->dims; d++)
            if ((pt->edges[i] >> d & 1) && (d > 0 || i < inner) &&
                pt->label[i + lat->stride[d]] != l)
                err +=
                    report_bad(err, g, l, pt->label[i + lat->stride[d]], "neighbour has");
        v->components += l == g;
        v->label_sum += l;
        if (l > g)
            err += report_bad(err, g, l, g, "above its id");
        else if (is_local(lat, pt, l) && pt->label[l - pt->base] != l)
            err += report_bad(err, g, l, pt->label[l - pt->base], "not a root: it has");
        else if (!is_local(lat, pt, l))
            remote[nrem++] = l;
    }
    nrem = sort_unique(remote, nrem);
    err += check_remote(lat, pt, remote, nrem, err);
    free(remote);
    return err;
}

/* Rank 0: the labels of SAMPLES deterministic nodes against a search of their
 * components.  Returns the number of mismatches. */
static uint64_t check_samples(const struct lattice *lat)
{
    uint32_t s[SAMPLES], want[SAMPLES], got[SAMPLES];
    uint64_t bad = 0;

    for (size_t k = 0; k < SAMPLES; k++)
        s[k] = (uint32_t)(mix64(lat->seed + 0x5a4d504cull * (k + 1)) % lat->n_global);
    size_t n = sort_unique(s, SAMPLES);
    sample_components(lat, s, n, want);
    for (size_t k = 0; k < n; k++)
        get32(lat, &got[k], s[k]);
    flush();
    for (size_t k = 0; k < n; k++)
        if (got[k] != want[k])
            bad += report_bad(bad, s[k], got[k], want[k], "its component's smallest id is");
    return bad;
}

static void verify(const struct lattice *lat, const struct part *pt, int full,
                   struct verdict *v)
{
    uint64_t w[3] = {0, 0, 0};

    memset(v, 0, sizeof *v);
    if (full) {
        verify_full(lat, pt, v);
        w[0] = v->errors, w[1] = v->components, w[2] = v->label_sum;
        MPI_Bcast(w, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        v->how =
            "full: every label equals a sequential union-find of the regenerated graph";
    } else {
        uint64_t err = check_local(lat, pt, v);
        if (pt->rank == 0)
            err += check_samples(lat);
        w[0] = sum_u64(err), w[1] = sum_u64(v->components), w[2] = sum_u64(v->label_sum);
        static char how[192];
        snprintf(how, sizeof how,
                 "sample: on every node, labels agree across every edge and each label "
                 "is a root no larger than its node's id; %d sampled nodes equal a "
                 "breadth-first search of their components",
                 SAMPLES);
        v->how = how;
    }
    v->errors = w[0], v->components = w[1], v->label_sum = w[2];
}

/* For the tests: change one label on this rank, at a node with an inner edge if
 * there is one, so that every kind of verification must notice. */
static void corrupt(const struct lattice *lat, struct part *pt)
{
    uint64_t i, inner = lat->n_local - lat->stride[0];

    for (i = 0; i < lat->n_local; i++)
        if ((pt->edges[i] & ~1 & ((1 << lat->dims) - 1)) ||
            ((pt->edges[i] & 1) && i < inner))
            break;
    pt->label[i < lat->n_local ? i : 0]++;
}

/* ---- options and main ---- */

struct options {
    const char *input;
    int dims, verify, corrupt; /* verify: 0 auto, 1 full, 2 sample */
    uint64_t side, len, seed;
    double p;
};

static void usage(void)
{
    if (my_rank == 0)
        fprintf(stderr, "usage: mpiexec -n P mpi_con --input comm|comp [--side S] "
                        "[--p PROB] [--seed X] [--length L] [--verify auto|full|sample]\n");
    exit(2);
}

static uint64_t arg_u64(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '\0' || *s == '-' || *end != '\0')
        usage();
    return v;
}

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option opts[] = {{"input", 1, 0, 'i'},   {"side", 1, 0, 's'},
                                         {"p", 1, 0, 'p'},       {"seed", 1, 0, 'x'},
                                         {"length", 1, 0, 'l'},  {"verify", 1, 0, 'v'},
                                         {"corrupt", 0, 0, 'c'}, {0, 0, 0, 0}};
    char *end;
    int c;

    memset(o, 0, sizeof *o);
    o->input = "comm";
    o->p = -1;
    o->seed = 1;
    opterr = my_rank == 0; /* one complaint, not one per rank */
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
        switch (c) {
        case 'i':
            o->input = optarg;
            break;
        case 's':
            if ((o->side = arg_u64(optarg)) == 0)
                usage();
            break;
        case 'p':
            o->p = strtod(optarg, &end);
            if (*end || !(o->p >= 0 && o->p <= 1))
                usage();
            break;
        case 'x':
            o->seed = arg_u64(optarg);
            break;
        case 'l':
            if ((o->len = arg_u64(optarg)) == 0)
                usage();
            break;
        case 'v':
            o->verify = !strcmp(optarg, "full") ? 1 : !strcmp(optarg, "sample") ? 2 : 0;
            if (!o->verify && strcmp(optarg, "auto"))
                usage();
            break;
        case 'c':
            o->corrupt = 1;
            break;
        default:
            usage();
        }
    if (optind != argc)
        usage();
    int comm = !strcmp(o->input, "comm");
    if (!comm && strcmp(o->input, "comp"))
        usage();
    o->dims = comm ? 3 : 2;
    o->side = o->side ? o->side : comm ? 80 : 800;
    o->len = o->len ? o->len : o->side;
    o->p = o->p >= 0 ? o->p : comm ? 0.25 : 0.40;
}

static void print_header(const struct options *o, const struct lattice *lat, int nprocs)
{
    double mb = (double)lat->n_local * 9 / 1e6;

    if (o->dims == 3)
        printf("mpi_con: %s: 3-D lattice %llux%llux%llu, %d procs x %llu nodes, p %.2f, "
               "seed %llu\n",
               o->input, (unsigned long long)lat->extent[0], (unsigned long long)o->side,
               (unsigned long long)o->side, nprocs, (unsigned long long)lat->n_local, o->p,
               (unsigned long long)o->seed);
    else
        printf("mpi_con: %s: 2-D lattice %llux%llu, %d procs x %llu nodes, p %.2f, seed "
               "%llu\n",
               o->input, (unsigned long long)lat->extent[0], (unsigned long long)o->side,
               nprocs, (unsigned long long)lat->n_local, o->p, (unsigned long long)o->seed);
    printf(
        "mpi_con: memory per process %.1f MB (1 B edges + 4 B rep + 4 B label per node)\n",
        mb);
}

int main(int argc, char **argv)
{
    struct options o;
    struct lattice lat;
    struct part pt = {0};
    struct stats st = {0};
    struct verdict v;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &pt.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &pt.nprocs);
    my_rank = pt.rank;
    parse(argc, argv, &o);
    if (o.side > 1u << 16 || o.len > 1u << 20)
        usage();
    lattice_init(&lat, o.dims, o.side, o.len, o.p, o.seed, pt.nprocs);
    if (lat.n_global >= UINT32_MAX || lat.n_local > INT32_MAX)
        die("more than 2^32 - 1 nodes: labels are 32-bit");
    pt.base = (uint64_t)pt.rank * lat.n_local;
    /* Window parts are padded to 64 bytes: MPICH 4.0.2 (ch4) puts a part whose
     * size is not a multiple of 16 bytes at another address than the one remote
     * operations use (a get of word 15 of rank 1's 25 words returns word 14). */
    MPI_Aint bytes = (MPI_Aint)((lat.n_local * sizeof *pt.label + 63) / 64 * 64);
    MPI_Win_allocate(bytes, sizeof *pt.label, MPI_INFO_NULL, MPI_COMM_WORLD, &pt.label,
                     &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    if (pt.rank == 0)
        print_header(&o, &lat, pt.nprocs);

    barrier();
    double t0 = MPI_Wtime();
    generate(&lat, &pt);
    barrier();
    double t1 = MPI_Wtime();
    local_phase(&lat, &pt);
    find_boundary(&lat, &pt);
    barrier();
    double t2 = MPI_Wtime();
    global_phase(&lat, &pt, &st);
    barrier();
    double t3 = MPI_Wtime();
    if (o.corrupt && pt.rank == pt.nprocs - 1)
        corrupt(&lat, &pt);
    barrier();
    int full = o.verify == 1 || (o.verify == 0 && lat.n_global <= FULL_VERIFY_MAX);
    verify(&lat, &pt, full, &v);
    double t4 = MPI_Wtime();

    double gen = max_d(t1 - t0), loc = max_d(t2 - t1), glob = max_d(t3 - t2);
    double ver = max_d(t4 - t3), total = max_d(t3 - t1);
    uint64_t gets = sum_u64(st.gets), stores = sum_u64(st.stores);
    uint64_t hooks = sum_u64(st.hooks), cross = sum_u64(pt.nout);
    if (pt.rank == 0) {
        char input[64];
        snprintf(input, sizeof input, o.len == o.side ? "%s-%llu" : "%s-%llu-%llu", o.input,
                 (unsigned long long)o.side, (unsigned long long)o.len);
        printf("mpi_con: generate %.3f s, local %.3f s, global %.3f s, verify %.3f s\n",
               gen, loc, glob, ver);
        printf(
            "mpi_con: global phase: %llu cross edges, %llu rounds, %llu jump steps, %llu "
            "remote gets, %llu remote accumulates, %llu hooks\n",
            (unsigned long long)cross, (unsigned long long)st.rounds,
            (unsigned long long)st.jumps, (unsigned long long)gets,
            (unsigned long long)stores, (unsigned long long)hooks);
        printf("mpi_con: components %llu, label sum %llu\n",
               (unsigned long long)v.components, (unsigned long long)v.label_sum);
        printf("mpi_con: verification %s: %s\n", v.how,
               v.errors ? "FAILED" : "all checks passed");
        printf("app,con,%s,mpich,-,%d,%.3f,%s\n", input, pt.nprocs, total,
               v.errors ? "FAILED" : "verified");
        fflush(stdout);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    free(pt.edges);
    free(pt.rep);
    free(pt.out);
    free(pt.in);
    free(pt.roots);
    return v.errors ? 1 : 0;
}
