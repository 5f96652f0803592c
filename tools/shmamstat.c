/*
 * shmamstat - the shmam endpoints of this user on this machine, both backends:
 * name, owner pid and whether it is alive, claim algorithm, queue depth (head
 * and tail of each queue), live registered senders, and the counters the
 * owner and its senders keep in the segment; and their one-copy regions
 * (NAME:r, claim column "region"), with their owner's pid and state.  In the
 * habit of ipcs and aeron-stat.
 *
 * Besides the names in /dev/shm and the System V keys, it lists the live
 * endpoints that have no name: a job's ranks (am_init removes their names),
 * an endpoint whose name was removed under it, anonymous ones (segment.h's
 * am__segment_list_unnamed: a descriptor a process holds, a marked System V
 * segment still attached).  One without a name is listed only while its owner
 * lives: one closed or dead has no name to clean, and a peer's mapping is
 * all that keeps it.  A row found both ways in one pass (its name removed
 * between the two looks) is listed once.  A name "JOB.RANK" shows its job
 * and rank (am__job_of).  A live endpoint's owner that listens on a
 * rendezvous socket (am_ep_listen) gets a line "SOCKET PATH pid PID callers
 * N" after the table (text only): its socket as /proc/net/unix names it
 * ("@name" for an abstract one) and the callers connected now; each
 * caller's door is a row of its own (an anonymous endpoint of one sender,
 * owned by the server).
 *
 *   shmamstat [--json] [--watch[=SECS]] [PREFIX...]   list (every SECS seconds)
 *   shmamstat --clean [--yes] [PREFIX...]             remove endpoints whose
 *                                          owner is gone (a dry run unless --yes)
 * PREFIX...: only the endpoints whose names start with one of them.
 *
 * Reading a segment changes nothing in it: the header is copied once and
 * judged on the copy (am__view_attach), the rest read with plain loads, so a
 * row is a snapshot, consistent only per field.  Other users' segments are
 * never opened.  --clean removes what am_ep_create would reclaim: a name whose
 * owner closed it or died (am__ep_stale), and a region whose mark says its
 * endpoint's owner has gone (am__region_state: never one of a live endpoint,
 * whether or not the endpoint's name is still there, nor a segment not marked
 * as a region); like am_ep_create's reclaim, it can race with a new owner
 * creating the same name between the look and the removal.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "endpoint.h"
#include "internal.h"
#include "job.h"
#include "options.h"
#include "region.h"
#include "senders.h"

#define EXIT_USAGE 2

/* One endpoint as read. */
struct row {
    char name[AM_NAME_MAX];
    enum am_shm backend;
    const char *state; /* live, dead (owner gone), closed, starting, unreadable */
    const char *claim;
    unsigned pid, senders;
    int gone;  /* its owner closed it or died: what --clean removes */
    int named; /* found by its name (else it has none, and its owner lives) */
    int rank;  /* the rank its name shows, or -1 (then job is "") */
    char job[AM_JOB_NAME_MAX + 1];
    uint64_t head[2], tail[2];
    unsigned long delivered, bulk, backoffs, abandoned, bad;
};

struct opts {
    int json, clean, yes;
    double watch;  /* seconds between refreshes; 0: once */
    char **prefix; /* only names starting with one of these; NULL: all */
};

/* The senders alive in v's table, and the backoffs all its entries counted. */
static void read_senders(const struct am_seg_view *v, struct row *r)
{
    for (unsigned i = 0; i < v->max_senders; i++) {
        const struct am_sender *e = am__sender(v, i);
        AO_t st = AO_load(&e->state);
        r->backoffs += AO_load(&e->backoffs);
        r->senders += AM_SENDER_ST(st) == AM_SENDER_READY && !am__lifeline_gone(&e->life);
    }
}

/* Everything about a live or dead-owner endpoint through its view. */
static void read_view(const struct am_seg_view *v, struct row *r)
{
    const struct am_seg_header *h = v->hdr;
    r->state = am__peer_alive(v) ? "live" : "dead";
    /* With per-sender channels the claim algorithm is unused: the column
     * names the queue kind, and there are no shared heads and tails. */
    r->claim =
        v->queue == AM_QUEUE_MPSC ? am_claim_names[v->claim] : am_queue_names[v->queue];
    r->pid = h->owner_pid;
    for (int q = 0; q < 2 && v->queue == AM_QUEUE_MPSC; q++) {
        r->head[q] = AO_load(&v->q[q].recv->head);
        r->tail[q] = AO_load(&v->q[q].send->tail);
    }
    r->delivered = AO_load(&h->delivered);
    r->bulk = AO_load(&h->delivered_bulk);
    r->abandoned = AO_load(&h->abandoned);
    r->bad = AO_load(&h->bad_packets);
    read_senders(v, r);
}

/* Region seg of endpoint `ep` into r: its state is its owner's (its mark's
 * lifeline, region.c), whatever the endpoint's name shows. */
static void read_region(const struct am_segment *seg, const char *ep, struct row *r)
{
    int st = am__region_state(seg, ep, &r->pid);
    r->claim = "region";
    r->gone = st == AM_REGION_GONE;
    r->state = st == AM_REGION_FOREIGN ? "unreadable"
               : r->gone               ? "dead"
               : r->pid                ? "live"
                                       : "starting";
}

/* Read segment `name` of backend b into r: an endpoint, or the region of
 * endpoint ep if ep is not NULL. */
static void read_row(enum am_shm b, const char *name, const char *ep, struct row *r)
{
    struct am_segment seg;
    struct am_seg_view v;
    *r = (struct row){.backend = b, .state = "unreadable", .claim = "-", .named = 1};
    snprintf(r->name, sizeof r->name, "%s", name);
    r->rank = am__job_of(name, r->job, sizeof r->job);
    if (am__segment_open(b, name, &seg) != 0)
        return;
    if (ep) {
        read_region(&seg, ep, r);
        am__segment_unmap(&seg);
        return;
    }
    r->gone = am__ep_stale(&seg);
    int rc = am__view_attach(&v, &seg, name);
    if (rc == 0)
        read_view(&v, r);
    else
        r->state = rc == -EPIPE ? "closed" : rc == -EAGAIN ? "starting" : "unreadable";
    am__segment_unmap(&seg);
}

/* The rows found, both backends. */
struct table {
    struct row *rows;
    size_t n, cap;
};

struct visit {
    struct table *t;
    enum am_shm backend;
    char **prefix;
};

/* Does `name` start with one of the prefixes (or are there none)? */
static int wanted(const char *name, char **prefix)
{
    if (!prefix || !*prefix)
        return 1;
    for (; *prefix; prefix++)
        if (strncmp(name, *prefix, strlen(*prefix)) == 0)
            return 1;
    return 0;
}

/* A fresh row at the end of t, or NULL if there is no memory. */
static struct row *new_row(struct table *t)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        struct row *rows = realloc(t->rows, cap * sizeof *rows);
        if (!rows)
            return NULL;
        t->rows = rows, t->cap = cap;
    }
    return &t->rows[t->n++];
}

static int add_row(const char *name, void *arg)
{
    struct visit *vis = arg;
    char ep[AM_NAME_MAX];
    int region = am__region_of(name, ep, sizeof ep);
    if ((!region && !am__name_valid(name)) || !wanted(name, vis->prefix))
        return 0;
    struct row *r = new_row(vis->t);
    if (!r)
        return -ENOMEM;
    read_row(vis->backend, name, region ? ep : NULL, r);
    return 0;
}

/* The name segment seg of u should have, into name: the one it had, or for
 * a memfd the address its header holds (a private copy; "" if none). */
static void unnamed_name(const struct am_unnamed *u, const struct am_segment *seg,
                         char name[AM_NAME_MAX])
{
    const struct am_seg_header *h = seg->base;
    name[0] = '\0';
    if (u->name[0] && strlen(u->name) < AM_NAME_MAX)
        memcpy(name, u->name, strlen(u->name) + 1);
    else if (!u->name[0] && seg->size >= sizeof *h)
        memcpy(name, h->name, AM_NAME_MAX);
    name[AM_NAME_MAX - 1] = '\0';
    if (!u->name[0] && !am__addr_valid(name))
        name[0] = '\0';
}

/* am__segment_list_unnamed callback: a row for u if it is a live endpoint,
 * wanted; nothing otherwise (a region, one closed or dead, another's). */
static int add_unnamed(const struct am_unnamed *u, void *arg)
{
    struct visit *vis = arg;
    struct am_segment seg;
    struct am_seg_view v;
    char name[AM_NAME_MAX];
    if ((u->name[0] && !wanted(u->name, vis->prefix)) || am__segment_open_unnamed(u, &seg))
        return 0;
    unnamed_name(u, &seg, name);
    int rc = 0;
    if (name[0] && wanted(name, vis->prefix) && am__view_attach(&v, &seg, name) == 0 &&
        am__peer_alive(&v)) {
        struct row *r = new_row(vis->t);
        if (r) {
            *r = (struct row){.backend = u->backend, .claim = "-"};
            snprintf(r->name, sizeof r->name, "%s", name);
            r->rank = am__job_of(name, r->job, sizeof r->job);
            read_view(&v, r);
        }
        rc = r ? 0 : -ENOMEM;
    }
    am__segment_unmap(&seg);
    return rc;
}

/* By name, then backend; of one name in one backend, a named row first. */
static int by_name(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c == 0)
        c = (int)x->backend - (int)y->backend;
    return c ? c : y->named - x->named;
}

/* Drop each unnamed row that a named one of the same endpoint (name,
 * backend, owner) precedes: it was found both ways in this pass, its name
 * removed between the two looks.  (One file or segment is listed once
 * without a name by am__segment_list_unnamed itself.) */
static void dedupe(struct table *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i], *prev = k ? &t->rows[k - 1] : NULL;
        if (prev && prev->named && !r->named && prev->backend == r->backend &&
            prev->pid == r->pid && strcmp(prev->name, r->name) == 0)
            continue;
        t->rows[k++] = *r;
    }
    t->n = k;
}

/* The rows of every name, both backends, and with `unnamed` of every live
 * endpoint without one. */
static int read_table(struct table *t, char **prefix, int unnamed)
{
    t->n = 0;
    for (int b = AM_SHM_POSIX; b <= AM_SHM_SYSV; b++) {
        struct visit vis = {t, (enum am_shm)b, prefix};
        int rc = am__segment_list((enum am_shm)b, add_row, &vis);
        if (rc == 0 && unnamed)
            rc = am__segment_list_unnamed((enum am_shm)b, add_unnamed, &vis);
        if (rc < 0)
            return rc;
    }
    if (t->n > 1) /* rows is NULL while empty */
        qsort(t->rows, t->n, sizeof *t->rows, by_name);
    dedupe(t);
    return 0;
}

/* ---- output --------------------------------------------------------------- */

static void print_text(const struct table *t)
{
    printf("%-24s %-5s %-10s %7s %5s %-8s %15s %15s %7s %10s %8s %8s %9s %5s\n", "NAME",
           "SHM", "STATE", "PID", "RANK", "CLAIM", "REQ HEAD/TAIL", "REP HEAD/TAIL",
           "SENDERS", "DELIVERED", "BULK", "BACKOFFS", "ABANDONED", "BAD");
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        char req[40], rep[40], rank[16] = "-";
        if (r->rank >= 0)
            snprintf(rank, sizeof rank, "%d", r->rank);
        snprintf(req, sizeof req, "%llu/%llu", (unsigned long long)r->head[0],
                 (unsigned long long)r->tail[0]);
        snprintf(rep, sizeof rep, "%llu/%llu", (unsigned long long)r->head[1],
                 (unsigned long long)r->tail[1]);
        printf("%-24s %-5s %-10s %7u %5s %-8s %15s %15s %7u %10lu %8lu %8lu %9lu %5lu\n",
               r->name, am__shm_name(r->backend), r->state, r->pid, rank, r->claim, req,
               rep, r->senders, r->delivered, r->bulk, r->backoffs, r->abandoned, r->bad);
    }
    if (t->n == 0)
        printf("(no shmam endpoints)\n");
}

static void print_json(const struct table *t)
{
    printf("[");
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        char job[AM_JOB_NAME_MAX + 3] = "null", rank[16] = "null";
        if (r->rank >= 0) {
            snprintf(job, sizeof job, "\"%s\"", r->job);
            snprintf(rank, sizeof rank, "%d", r->rank);
        }
        printf("%s\n  {\"name\": \"%s\", \"shm\": \"%s\", \"job\": %s, \"rank\": %s, "
               "\"named\": %s, \"state\": \"%s\", \"pid\": %u, "
               "\"claim\": \"%s\", \"request\": {\"head\": %llu, \"tail\": %llu}, "
               "\"reply\": {\"head\": %llu, \"tail\": %llu}, \"senders\": %u, "
               "\"delivered\": %lu, \"bulk\": %lu, \"backoffs\": %lu, \"abandoned\": %lu, "
               "\"bad_packets\": %lu}",
               i ? "," : "", r->name, am__shm_name(r->backend), job, rank,
               r->named ? "true" : "false", r->state, r->pid, r->claim,
               (unsigned long long)r->head[0], (unsigned long long)r->tail[0],
               (unsigned long long)r->head[1], (unsigned long long)r->tail[1], r->senders,
               r->delivered, r->bulk, r->backoffs, r->abandoned, r->bad);
    }
    printf("%s]\n", t->n ? "\n" : "");
}

/* ---- rendezvous sockets ---------------------------------------------------- */

/* A Unix socket as /proc/net/unix lists it. */
struct usock {
    unsigned long inode;
    unsigned flags, type, st;
    char path[110];
};

/* /proc/net/unix: the SOCK_SEQPACKET sockets that have an address, into
 * *out (malloc'd); how many. */
static size_t read_usocks(struct usock **out)
{
    FILE *f = fopen("/proc/net/unix", "r");
    char line[512];
    size_t n = 0, cap = 0;
    *out = NULL;
    while (f && fgets(line, sizeof line, f)) {
        struct usock u = {0};
        if (sscanf(line, "%*s %*s %*s %x %x %x %lu %109s", &u.flags, &u.type, &u.st,
                   &u.inode, u.path) != 5 ||
            u.type != 5)
            continue;
        if (n == cap) {
            struct usock *p = realloc(*out, (cap = cap ? 2 * cap : 64) * sizeof *p);
            if (!p)
                break;
            *out = p;
        }
        (*out)[n++] = u;
    }
    if (f)
        fclose(f);
    return n;
}

/* Listening sockets held by pid (an endpoint's owner, am_ep_listen), each
 * with the callers connected to it (accepted sockets of the same address in
 * the same process): printed as SOCKET lines.  Another user's process
 * cannot be looked into: nothing is printed for it. */
static void print_listener(unsigned pid, const struct usock *us, size_t n)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%u/fd", pid);
    DIR *d = opendir(dir);
    const struct usock *mine[256];
    size_t k = 0;
    for (struct dirent *e; d && (e = readdir(d)) && k < 256;) {
        char path[320], link[64];
        unsigned long ino;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t m = readlink(path, link, sizeof link - 1);
        if (m <= 0 || (link[m] = 0, sscanf(link, "socket:[%lu]", &ino) != 1))
            continue;
        for (size_t i = 0; i < n; i++)
            if (us[i].inode == ino)
                mine[k++] = &us[i];
    }
    if (d)
        closedir(d);
    for (size_t i = 0; i < k; i++) {
        if (!(mine[i]->flags & 0x10000)) /* __SO_ACCEPTCON: listening */
            continue;
        unsigned callers = 0;
        for (size_t j = 0; j < k; j++)
            callers +=
                j != i && mine[j]->st == 3 && strcmp(mine[j]->path, mine[i]->path) == 0;
        printf("SOCKET %s pid %u callers %u\n", mine[i]->path, pid, callers);
    }
}

/* The rendezvous sockets of the live endpoints' owners, once per owner. */
static void print_sockets(const struct table *t)
{
    struct usock *us;
    size_t n = read_usocks(&us);
    for (size_t i = 0; n && i < t->n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= t->rows[j].pid == t->rows[i].pid;
        if (!seen && !t->rows[i].gone)
            print_listener(t->rows[i].pid, us, n);
    }
    free(us);
}

/* ---- clean ---------------------------------------------------------------- */

/* Remove (or with dry, name) each endpoint whose owner is gone.  Returns how
 * many. */
static int clean(const struct table *t, int dry)
{
    int n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        if (!r->gone || (!dry && am__segment_unlink(r->backend, r->name) != 0))
            continue;
        printf("%s %s (%s, owner %s)\n", dry ? "would remove" : "removed", r->name,
               am__shm_name(r->backend), r->state);
        n++;
    }
    if (dry && n)
        printf("(a dry run: add --yes to remove them)\n");
    return n;
}

/* ---- options -------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: shmamstat [--json] [--watch[=SECS]] [PREFIX...]\n"
            "       shmamstat --clean [--yes] [PREFIX...]\n"
            "List this user's shmam endpoints (POSIX and System V): owner, claim\n"
            "algorithm, queue heads and tails, live senders and counters; only those\n"
            "whose names start with a PREFIX, if any is given.  Live endpoints\n"
            "without a name (a running job's ranks, anonymous ones) are listed too.\n"
            "  -j, --json           one JSON array, for scripts\n"
            "  -w, --watch[=SECS]   refresh every SECS seconds (default 1) until ^C\n"
            "  -c, --clean          list endpoints and regions whose owner closed or died\n"
            "  -y, --yes            with --clean: remove them\n"
            "  -h, --help           print this help\n"
            "Exit status: 0, 1 if the segments could not be listed, 2 on bad usage.\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
    static const struct option longs[] = {
        {"json", no_argument, NULL, 'j'},  {"watch", optional_argument, NULL, 'w'},
        {"clean", no_argument, NULL, 'c'}, {"yes", no_argument, NULL, 'y'},
        {"help", no_argument, NULL, 'h'},  {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "jw::cyh", longs, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'j':
            o->json = 1;
            break;
        case 'c':
            o->clean = 1;
            break;
        case 'y':
            o->yes = 1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case 'w':
            o->watch = optarg ? strtod(optarg, &end) : 1.0;
            if (optarg && (*end || !(o->watch > 0)))
                c = '?';
            break;
        }
        if (c == '?' || c == ':') {
            usage(stderr);
            exit(EXIT_USAGE);
        }
    }
    if ((o->yes && !o->clean) || (o->clean && (o->json || o->watch))) {
        usage(stderr);
        exit(EXIT_USAGE);
    }
    o->prefix = argv + optind;
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    struct table t = {0};
    parse(argc, argv, &o);
    for (;;) {
        int rc = read_table(&t, o.prefix, !o.clean);
        if (rc < 0) {
            fprintf(stderr, "shmamstat: cannot list segments: %s\n", am_strerror(rc));
            return 1;
        }
        if (o.clean) {
            clean(&t, !o.yes);
            break;
        }
        if (o.watch > 0 && !o.json)
            printf("\033[H\033[2J");
        (o.json ? print_json : print_text)(&t);
        if (!o.json)
            print_sockets(&t);
        if (!(o.watch > 0))
            break;
        fflush(stdout);
        struct timespec ts = {(time_t)o.watch, (long)((o.watch - (time_t)o.watch) * 1e9)};
        nanosleep(&ts, NULL);
    }
    free(t.rows);
    return 0;
}
