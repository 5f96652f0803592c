/*
 * shmamrun.h - what the launcher (shmamrun.c) and its guardian (guardian.c)
 * share: the running job, the clock, the removal of the job's names, and the
 * guardian's side of their conversation as the launcher calls it.
 */
#ifndef SHMAM_TOOLS_SHMAMRUN_H
#define SHMAM_TOOLS_SHMAMRUN_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "job.h"

/* The running job.  pid[r] is 0 once rank r is reaped (or was never started). */
struct job {
    char name[AM_JOB_NAME_MAX + 1];
    int nprocs, alive;
    pid_t *pid;
    int failed;         /* the exit status is decided */
    int status;         /* the launcher's exit status */
    int stopping;       /* the ranks have been asked to stop */
    int64_t kill_at;    /* when stopping: SIGKILL the rest at this time; 0 once done */
    int64_t timeout_at; /* --timeout deadline, 0 if none */
    pid_t guardian;     /* 0 once reaped */
    int guard_fd;       /* the launcher's end of the guardian's socket */
};

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t now_ns(void);
/* Unlink every segment and region named under the job, in both backends
 * (shmamrun.c, step 6); the guardian does the same if the launcher dies. */
void remove_segments(const struct job *job);

/* guardian.c.  start: fork the guardian before any rank (0, or -1 with errno
 * set); mask is the signal mask to restore in it.  guard_rank: hand it a
 * pidfd of rank pid p, not yet reaped.  dismiss: the job's names are gone:
 * tell it so and reap it. */
int start_guardian(struct job *job, const sigset_t *mask);
void guard_rank(const struct job *job, pid_t p);
void dismiss_guardian(struct job *job);

#endif
