/*
 * lattice.c - CON's kernels without communication (see lattice.h).
 *
 * The graph is a function of the global lattice alone: an edge is present iff
 * a hash of its id and the seed is below a threshold, so any rank can
 * regenerate any part of it, and the same lattice split over any number of
 * ranks has the same components.  Union-find always links the larger root
 * under the smaller (parent[x] <= x), so the root of a set is its smallest
 * member and a pass in index order makes every parent final.
 */
#include "common/lattice.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *checked(const struct lattice_part *pt, void *p)
{
    if (!p) {
        fprintf(stderr, "%s: rank %d: out of memory\n", pt->prog, pt->rank);
        exit(1);
    }
    return p;
}

static void *xmalloc(const struct lattice_part *pt, size_t n)
{
    return checked(pt, malloc(n ? n : 1));
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

static int arg_u64(const char *s, uint64_t *v)
{
    char *end;

    *v = strtoull(s, &end, 10);
    return *s == '\0' || *s == '-' || *end != '\0' ? -1 : 0;
}

/* One option of lattice_parse; -1 if its argument is bad. */
static int apply(struct lattice_options *o, int c, const char *arg)
{
    char *end;

    switch (c) {
    case 'i':
        o->input = arg;
        return 0;
    case 's':
        return arg_u64(arg, &o->side) < 0 || o->side == 0 ? -1 : 0;
    case 'p':
        o->p = strtod(arg, &end);
        return *end || !(o->p >= 0 && o->p <= 1) ? -1 : 0;
    case 'x':
        return arg_u64(arg, &o->seed);
    case 'l':
        return arg_u64(arg, &o->len) < 0 || o->len == 0 ? -1 : 0;
    case 'v':
        o->verify = !strcmp(arg, "full") ? 1 : !strcmp(arg, "sample") ? 2 : 0;
        return !o->verify && strcmp(arg, "auto") ? -1 : 0;
    case 'c':
        o->corrupt = 1;
        return 0;
    }
    return -1;
}

int lattice_parse(int argc, char **argv, struct lattice_options *o)
{
    static const struct option opts[] = {{"input", 1, 0, 'i'},   {"side", 1, 0, 's'},
                                         {"p", 1, 0, 'p'},       {"seed", 1, 0, 'x'},
                                         {"length", 1, 0, 'l'},  {"verify", 1, 0, 'v'},
                                         {"corrupt", 0, 0, 'c'}, {0, 0, 0, 0}};
    int c;

    memset(o, 0, sizeof *o);
    o->input = "comm";
    o->p = -1;
    o->seed = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
        if (apply(o, c, optarg) < 0)
            return -1;
    if (optind != argc)
        return -1;
    int comm = !strcmp(o->input, "comm");
    if (!comm && strcmp(o->input, "comp"))
        return -1;
    o->dims = comm ? 3 : 2;
    o->side = o->side ? o->side : comm ? 80 : 800;
    o->len = o->len ? o->len : o->side;
    o->p = o->p >= 0 ? o->p : comm ? 0.25 : 0.40;
    return o->side > 1u << 16 || o->len > 1u << 20 ? -1 : 0;
}

void lattice_init(struct lattice *lat, const struct lattice_options *o, int nprocs)
{
    int dims = o->dims;

    lat->dims = dims;
    lat->side = o->side;
    lat->len = o->len;
    lat->extent[0] = o->len * (uint64_t)nprocs;
    lat->extent[1] = lat->extent[2] = o->side;
    lat->stride[dims - 1] = 1;
    for (int d = dims - 2; d >= 0; d--)
        lat->stride[d] = lat->stride[d + 1] * o->side;
    lat->n_local = o->len * lat->stride[0];
    lat->n_global = lat->n_local * (uint64_t)nprocs;
    lat->always = o->p >= 1.0;
    lat->threshold = o->p <= 0.0 ? 0 : lat->always ? UINT64_MAX : (uint64_t)(o->p * 0x1p64);
    lat->seed = mix64(o->seed ^ 0x636f6e00ull);
}

void lattice_print_header(const char *prog, const struct lattice_options *o,
                          const struct lattice *lat, int nprocs)
{
    unsigned long long x = lat->extent[0], side = o->side;

    printf("%s: %s: ", prog, o->input);
    if (o->dims == 3)
        printf("3-D lattice %llux%llux%llu", x, side, side);
    else
        printf("2-D lattice %llux%llu", x, side);
    printf(", %d procs x %llu nodes, p %.2f, seed %llu\n", nprocs,
           (unsigned long long)lat->n_local, o->p, (unsigned long long)o->seed);
    printf("%s: memory per process %.1f MB (1 B edges + 4 B rep + 4 B label per node)\n",
           prog, (double)lat->n_local * 9 / 1e6);
}

int lattice_verify_full(const struct lattice_options *o, const struct lattice *lat)
{
    return o->verify == 1 || (o->verify == 0 && lat->n_global <= LATTICE_FULL_VERIFY_MAX);
}

void lattice_input_name(const struct lattice_options *o, char *buf, size_t size)
{
    snprintf(buf, size, o->len == o->side ? "%s-%llu" : "%s-%llu-%llu", o->input,
             (unsigned long long)o->side, (unsigned long long)o->len);
}

void lattice_print_verdict(const char *prog, const struct lattice_verdict *v)
{
    printf("%s: components %llu, label sum %llu\n", prog, (unsigned long long)v->components,
           (unsigned long long)v->label_sum);
    printf("%s: verification %s: %s\n", prog, v->how,
           v->errors ? "FAILED" : "all checks passed");
}

int lattice_is_local(const struct lattice *lat, const struct lattice_part *pt, uint64_t g)
{
    return g - pt->base < lat->n_local; /* unsigned: also false below base */
}

size_t lattice_sort_unique(uint32_t *a, size_t n)
{
    size_t m = 0;

    qsort(a, n, sizeof *a, cmp_u32);
    for (size_t i = 0; i < n; i++)
        if (m == 0 || a[m - 1] != a[i])
            a[m++] = a[i];
    return m;
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
            b |= LATTICE_IN_X;
        e[i] = b;
    }
}

/* Union-find with path halving; parent[x] <= x always holds. */
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

void lattice_generate(const struct lattice *lat, struct lattice_part *pt)
{
    pt->edges = xmalloc(pt, lat->n_local);
    gen_slab(lat, (uint64_t)pt->rank * lat->len, lat->len, pt->edges);
}

/* The cross-edge endpoints and their distinct reps. */
static void find_boundary(const struct lattice *lat, struct lattice_part *pt)
{
    uint64_t plane = lat->stride[0], last = lat->n_local - plane;

    pt->out = xmalloc(pt, plane * sizeof *pt->out);
    pt->in = xmalloc(pt, plane * sizeof *pt->in);
    pt->nout = pt->nin = 0;
    for (uint64_t k = 0; k < plane; k++) {
        if (pt->rank + 1 < pt->nprocs && (pt->edges[last + k] & 1))
            pt->out[pt->nout++] = (uint32_t)(last + k);
        if (pt->edges[k] & LATTICE_IN_X)
            pt->in[pt->nin++] = (uint32_t)k;
    }
    pt->roots = xmalloc(pt, (pt->nout + pt->nin) * sizeof *pt->roots);
    for (size_t k = 0; k < pt->nout; k++)
        pt->roots[k] = pt->rep[pt->out[k]];
    for (size_t k = 0; k < pt->nin; k++)
        pt->roots[pt->nout + k] = pt->rep[pt->in[k]];
    pt->nroots = lattice_sort_unique(pt->roots, pt->nout + pt->nin);
}

void lattice_local(const struct lattice *lat, struct lattice_part *pt)
{
    pt->rep = xmalloc(pt, lat->n_local * sizeof *pt->rep);
    slab_components(lat, lat->len, pt->edges, pt->rep);
    for (uint64_t i = 0; i < lat->n_local; i++)
        pt->label[i] = (uint32_t)(pt->base + pt->rep[i]);
    find_boundary(lat, pt);
}

size_t lattice_hooks(const struct lattice_part *pt, const uint32_t *far, uint64_t *pairs)
{
    size_t n = 0, m = 0;

    for (size_t k = 0; k < pt->nout; k++) {
        uint32_t a = pt->label[pt->rep[pt->out[k]]], b = far[k];
        if (a != b)
            pairs[n++] = a > b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    }
    qsort(pairs, n, sizeof *pairs, cmp_u64);
    for (size_t k = 0; k < n; k++) /* the first of each larger root has the smallest */
        if (m == 0 || pairs[k] >> 32 != pairs[m - 1] >> 32)
            pairs[m++] = pairs[k];
    return m;
}

void lattice_resolve(const struct lattice *lat, struct lattice_part *pt)
{
    for (uint64_t i = 0; i < lat->n_local; i++) /* rep[i] <= i is already final */
        pt->label[i] = pt->label[pt->rep[i]];
}

void lattice_check_all(const struct lattice *lat, const struct lattice_part *pt,
                       const uint32_t *all, struct lattice_verdict *v)
{
    uint8_t *e = xmalloc(pt, lat->n_global);
    uint32_t *want = xmalloc(pt, lat->n_global * sizeof *want);

    gen_slab(lat, 0, lat->extent[0], e);
    slab_components(lat, lat->extent[0], e, want);
    for (uint64_t g = 0; g < lat->n_global; g++) {
        v->components += want[g] == g;
        v->label_sum += want[g];
        if (all[g] != want[g] && v->errors++ < 5)
            fprintf(stderr, "%s: node %llu: label %u, want %u\n", pt->prog,
                    (unsigned long long)g, all[g], want[g]);
    }
    free(e);
    free(want);
}

static uint64_t report_bad(const struct lattice_part *pt, uint64_t errors, uint64_t g,
                           uint32_t have, uint64_t want, const char *what)
{
    if (errors < 5)
        fprintf(stderr, "%s: rank %d: node %llu: label %u, %s %llu\n", pt->prog, pt->rank,
                (unsigned long long)g, have, what, (unsigned long long)want);
    return 1;
}

uint64_t lattice_check_part(const struct lattice *lat, const struct lattice_part *pt,
                            struct lattice_verdict *v, uint32_t *remote, size_t *nremote)
{
    uint64_t err = 0, inner = lat->n_local - lat->stride[0];
    size_t nrem = 0;

    for (uint64_t i = 0; i < lat->n_local; i++) {
        uint32_t l = pt->label[i];
        uint64_t g = pt->base + i;
        for (int d = 0; d < lat->dims; d++)
            if ((pt->edges[i] >> d & 1) && (d > 0 || i < inner) &&
                pt->label[i + lat->stride[d]] != l)
                err += report_bad(pt, err, g, l, pt->label[i + lat->stride[d]],
                                  "neighbour has");
        v->components += l == g;
        v->label_sum += l;
        if (l > g)
            err += report_bad(pt, err, g, l, g, "above its id");
        else if (lattice_is_local(lat, pt, l) && pt->label[l - pt->base] != l)
            err += report_bad(pt, err, g, l, pt->label[l - pt->base], "not a root: it has");
        else if (!lattice_is_local(lat, pt, l))
            remote[nrem++] = l;
    }
    *nremote = lattice_sort_unique(remote, nrem);
    return err;
}

uint64_t lattice_check_fetched(const struct lattice_part *pt, const uint32_t *remote,
                               size_t n, const uint32_t *got, uint64_t err)
{
    uint64_t bad = 0;

    for (size_t k = 0; k < n; k++)
        if (got[k] != remote[k])
            bad += report_bad(pt, err + bad, remote[k], remote[k], got[k], "(a label) has");
    for (size_t k = 0; k < pt->nout; k++)
        if (got[n + k] != pt->label[pt->out[k]])
            bad += report_bad(pt, err + bad, pt->base + pt->out[k], pt->label[pt->out[k]],
                              got[n + k], "neighbour across the boundary has");
    return bad;
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
    const struct lattice_part *pt; /* for the out-of-memory message */
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
        q->q = checked(q->pt, realloc(q->q, q->cap * sizeof *q->q));
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

/* want[k] = the smallest id in the component of s[k], for the sorted, distinct
 * nodes s[0..n); each component is searched once. */
static void sample_components(const struct lattice *lat, const struct lattice_part *pt,
                              const uint32_t *s, size_t n, uint32_t *want)
{
    uint64_t *seen = checked(pt, calloc(lat->n_global / 64 + 1, sizeof *seen));
    struct queue q = {.pt = pt};

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

size_t lattice_sample(const struct lattice *lat, const struct lattice_part *pt, uint32_t *s,
                      uint32_t *want)
{
    for (size_t k = 0; k < LATTICE_SAMPLES; k++)
        s[k] = (uint32_t)(mix64(lat->seed + 0x5a4d504cull * (k + 1)) % lat->n_global);
    size_t n = lattice_sort_unique(s, LATTICE_SAMPLES);
    sample_components(lat, pt, s, n, want);
    return n;
}

uint64_t lattice_check_samples(const struct lattice_part *pt, const uint32_t *s,
                               const uint32_t *got, const uint32_t *want, size_t n)
{
    uint64_t bad = 0;

    for (size_t k = 0; k < n; k++)
        if (got[k] != want[k])
            bad += report_bad(pt, bad, s[k], got[k], want[k],
                              "its component's smallest id is");
    return bad;
}

const char *lattice_how(int full)
{
    static char how[192];

    if (full)
        return "full: every label equals a sequential union-find of the regenerated graph";
    snprintf(how, sizeof how,
             "sample: on every node, labels agree across every edge and each label "
             "is a root no larger than its node's id; %d sampled nodes equal a "
             "breadth-first search of their components",
             LATTICE_SAMPLES);
    return how;
}

void lattice_corrupt(const struct lattice *lat, struct lattice_part *pt)
{
    uint64_t i, inner = lat->n_local - lat->stride[0];

    for (i = 0; i < lat->n_local; i++)
        if ((pt->edges[i] & ~1 & ((1 << lat->dims) - 1)) ||
            ((pt->edges[i] & 1) && i < inner))
            break;
    pt->label[i < lat->n_local ? i : 0]++;
}

void lattice_free(struct lattice_part *pt)
{
    free(pt->edges);
    free(pt->rep);
    free(pt->out);
    free(pt->in);
    free(pt->roots);
    pt->edges = NULL, pt->rep = NULL, pt->out = pt->in = pt->roots = NULL;
}
