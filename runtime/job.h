/*
 * job.h - the contract between the launcher (shmamrun) and am_init.
 *
 * shmamrun starts P copies of a program with these variables in their
 * environment.  A job name is short (at most AM_JOB_NAME_MAX characters of
 * [A-Za-z0-9._-]; the launcher makes "j<launcher pid>-<8 hex digits>"), so that
 * the endpoint name "JOB.RANK" of every rank fits in an endpoint name (1..40
 * characters).  Rank r's endpoint segment is named am__job_ep_name(job, r); the
 * launcher unlinks those names and their regions' (am__job_names_unlink), and
 * every other name under "JOB.", in both backends, when the job ends, so every
 * segment a job creates must be named so.
 */
#ifndef SHMAM_JOB_H
#define SHMAM_JOB_H

#include <stddef.h>

#include "segment.h"
#include "shmam.h"

/* Set by the launcher for every rank. */
#define SHMAM_JOB "SHMAM_JOB"       /* job name */
#define SHMAM_RANK "SHMAM_RANK"     /* 0 .. NPROCS-1 */
#define SHMAM_NPROCS "SHMAM_NPROCS" /* number of ranks */

/* Endpoint options, read by am_ep_create when its caller leaves them 0/NULL.
 * The launcher exports a command-line option over the inherited value and
 * refuses bad values before starting anything; an empty value means unset. */
#define SHMAM_CLAIM "SHMAM_CLAIM"             /* one of am_claim_names */
#define SHMAM_SHM "SHMAM_SHM"                 /* posix|sysv */
#define SHMAM_PACKETS "SHMAM_PACKETS"         /* packets per queue, power of two */
#define SHMAM_BULK "SHMAM_BULK"               /* bulk blocks per queue, power of two */
#define SHMAM_MAX_SENDERS "SHMAM_MAX_SENDERS" /* senders per endpoint */
#define SHMAM_LONG_MAX "SHMAM_LONG_MAX"       /* the longest long message, bytes */
#define SHMAM_QUEUE "SHMAM_QUEUE"             /* one of am_queue_names */

/* Read by the launcher: every job name it makes starts with this, 1 to
 * AM_JOB_PREFIX_MAX characters of [a-z0-9] (default "j"), so that a script
 * can find exactly the segments of its own jobs (scripts/report.sh). */
#define SHMAM_JOB_PREFIX "SHMAM_JOB_PREFIX"
#define AM_JOB_PREFIX_MAX 8

/* Under mpiexec with libshmam-mpi (net/mpi_job.c): cut each machine's ranks
 * into virtual nodes of this many consecutive ranks (unset: one node per
 * machine).  Job names there start with SHMAM_JOB_PREFIX too, default "m". */
#define SHMAM_NODE_SIZE "SHMAM_NODE_SIZE"

#define AM_JOB_NAME_MAX 24 /* leaves room for ".RANK" within AM_MAX_NAME */

/* Write "JOB.RANK" into buf (n bytes).  Returns 0, -EINVAL for a negative rank
 * or a job name that is empty, too long or has a character outside
 * [A-Za-z0-9._-], -ENAMETOOLONG if the result does not fit buf. */
int am__job_ep_name(const char *job, int rank, char *buf, size_t n);

/* The job and rank endpoint `name` shows, if it is a rank's as
 * am__job_ep_name names one ("JOB.RANK", JOB without a '.': shmamrun's and
 * MPI's job names have none): the rank, and JOB into job (n bytes); else -1.
 * A name alone: an endpoint a program names so is taken for a rank. */
int am__job_of(const char *name, char *job, size_t n);

/* Remove endpoint `name`'s name and its region's (region.c) in backend b,
 * whatever state they are in: for whoever knows their owner has gone (the
 * launcher and its guardian once the ranks have, an MPI rank's reaper once its
 * rank has).  Returns 0 or the first error other than -ENOENT. */
int am__job_names_unlink(enum am_shm b, const char *name);

/* job.c: the barrier's internal handlers, set on every endpoint. */
void am__barrier_handlers(am_ep_t *ep);

#endif
