/*
 * am_algs.c - an endpoint per claim algorithm or queue kind in one job (see
 * am_algs.h).
 */
#include <stdio.h>
#include <string.h>

#include "am_algs.h"

#define SHARED_KIND "mpsc" /* the queue kind whose endpoints a claim names */

/* The index of s[0..len) in the NULL-terminated `names`, or -1. */
static int find(const char *const *names, const char *s, size_t len)
{
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == len && strncmp(names[i], s, len) == 0)
            return i;
    return -1;
}

int bm_algs_is_channel(const char *name)
{
    return strcmp(name, SHARED_KIND) != 0 && find(am_queue_names, name, strlen(name)) >= 0;
}

static int add(struct bm_algs *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->name[i], name) == 0) {
            fprintf(stderr, "algorithm %s named twice\n", name);
            return -1;
        }
    if (a->n == BM_MAX_ALGS) {
        fprintf(stderr, "more than %d algorithms\n", BM_MAX_ALGS);
        return -1;
    }
    a->name[a->n++] = name;
    return 0;
}

/* Adds every name of the NULL-terminated `names` but the shared kind's. */
static int add_every(struct bm_algs *a, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], SHARED_KIND) != 0 && add(a, names[i]) != 0)
            return -1;
    return 0;
}

/* Adds the item s[0..len) of a list: a word, a claim algorithm or a kind. */
static int add_item(struct bm_algs *a, const char *s, size_t len)
{
    int k;
    if (len == 3 && strncmp(s, "all", 3) == 0)
        return add_every(a, am_claim_names);
    if (len == 8 && strncmp(s, "channels", 8) == 0)
        return add_every(a, am_queue_names);
    if ((k = find(am_claim_names, s, len)) >= 0)
        return add(a, am_claim_names[k]);
    if ((k = find(am_queue_names, s, len)) >= 0 && bm_algs_is_channel(am_queue_names[k]))
        return add(a, am_queue_names[k]);
    fprintf(
        stderr,
        "unknown algorithm '%.*s': a claim algorithm (shmamrun --list-claims, its first "
        "column), a "
        "per-sender queue kind (--list-queues but " SHARED_KIND "), all or channels\n",
        (int)len, s);
    return -1;
}

int bm_algs_parse(const char *list, struct bm_algs *a)
{
    memset(a, 0, sizeof *a);
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        if (add_item(a, p, len) != 0)
            return -1;
        p += len;
        if (*p == '\0')
            return a->n ? 0 : -1;
    }
}

const char *bm_algs_name_of(const am_ep_t *ep)
{
    const char *q = am_ep_queue(ep);
    return q && bm_algs_is_channel(q) ? q : am_ep_claim(ep);
}

/* "JOB.RANK.ALG" from the job endpoint's name "JOB.RANK" of `rank`. */
static int alg_name(const char *job_ep, int rank, const char *alg, char *buf, size_t n)
{
    const char *dot = strrchr(job_ep, '.');
    int len =
        dot ? snprintf(buf, n, "%.*s.%d.%s", (int)(dot - job_ep), job_ep, rank, alg) : -1;
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

static int make_one(am_ep_t *job, struct bm_algs *a, int i, const struct bm_handler *h,
                    int nh)
{
    char name[AM_MAX_NAME + 1];
    int chan = bm_algs_is_channel(a->name[i]);
    struct am_ep_opts o = {.claim = chan ? NULL : a->name[i],
                           .queue = chan ? a->name[i] : SHARED_KIND};
    int rc;

    if (alg_name(am_ep_name(job), am_rank(), a->name[i], name, sizeof name) != 0) {
        fprintf(stderr, "endpoint name for %s too long\n", a->name[i]);
        return -1;
    }
    if ((rc = am_ep_create(name, &o, &a->ep[i])) < 0) {
        fprintf(stderr, "cannot create %s: %s\n", name, am_strerror(rc));
        return rc;
    }
    for (int k = 0; k < nh; k++)
        am_set_handler(a->ep[i], h[k].id, h[k].fn);
    return 0;
}

static int map_all(am_ep_t *job, struct bm_algs *a, int i)
{
    char name[AM_MAX_NAME + 1];

    for (int r = 0; r < am_nprocs(); r++) {
        int rc = alg_name(am_ep_name(job), r, a->name[i], name, sizeof name);
        if (rc == 0 && (rc = am_ep_map(a->ep[i], (unsigned)r, name)) < 0) {
            fprintf(stderr, "cannot map %s: %s\n", name, am_strerror(rc));
            return rc;
        }
    }
    return 0;
}

int bm_algs_open(am_ep_t *job, struct bm_algs *a, const struct bm_handler *h, int nh)
{
    int rc = 0;

    for (int i = 0; i < a->n && rc == 0; i++)
        rc = make_one(job, a, i, h, nh);
    if (rc == 0)
        rc = am_barrier(job); /* every rank's endpoints exist */
    for (int i = 0; i < a->n && rc == 0; i++)
        rc = map_all(job, a, i);
    if (rc == 0)
        rc = am_barrier(job); /* every rank has mapped every other */
    return rc;
}

void bm_algs_close(am_ep_t *job, struct bm_algs *a)
{
    am_barrier(job); /* nobody sends to an endpoint after this */
    for (int i = 0; i < a->n; i++)
        if (a->ep[i])
            am_ep_destroy(a->ep[i]);
    a->n = 0;
}
