/*
 * job_name.c - endpoint names of a job's ranks (see job.h).  Pure functions: no
 * shared memory, no state.
 */
#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A job name is 1..AM_JOB_NAME_MAX characters of [A-Za-z0-9._-]. */
static int job_name_ok(const char *job)
{
    size_t len = strlen(job);

    return len > 0 && len <= AM_JOB_NAME_MAX &&
           strspn(job, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                       "0123456789._-") == len;
}

int am__job_ep_name(const char *job, int rank, char *buf, size_t n)
{
    if (!job || rank < 0 || !job_name_ok(job))
        return -EINVAL;
    int len = snprintf(buf, n, "%s.%d", job, rank);
    if (len < 0 || (size_t)len >= n)
        return -ENAMETOOLONG;
    return 0;
}

int am__job_of(const char *name, char *job, size_t n)
{
    const char *dot = strchr(name, '.');
    size_t len = dot ? (size_t)(dot - name) : 0;
    const char *r = dot ? dot + 1 : "";
    size_t digits = strspn(r, "0123456789");
    if (len == 0 || len > AM_JOB_NAME_MAX || len >= n || digits == 0 || digits > 9 ||
        r[digits] != '\0' || (r[0] == '0' && digits > 1))
        return -1;
    memcpy(job, name, len);
    job[len] = '\0';
    return job_name_ok(job) ? atoi(r) : -1;
}
