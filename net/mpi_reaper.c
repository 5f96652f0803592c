/*
 * mpi_reaper.c - no segment outlives an MPI job, however it ends.
 *
 * Under shmamrun the launcher removes a job's names when it ends; mpiexec
 * knows nothing of them.  A rank removes its endpoint's name itself after
 * am_init's barrier, but a rank killed before that, or one with a region
 * (NAME:r, which peers open by name on first use, so it keeps its name for
 * the endpoint's life), would leave them behind.  So before MPI_Init (a fork
 * after it would be a fork of MPI's state), each rank of an MPI job forks a
 * reaper: a process in a session of its own (mpiexec's signals to the rank's
 * process group do not reach it) that holds only the read end of a pipe whose
 * write end the rank keeps until it dies.  The rank writes its endpoint's
 * name once it knows it; the reaper waits for end of file, which the kernel
 * gives when the rank has gone by any means (never while it lives: no pid is
 * trusted), then unlinks that name and its region's in both backends, as
 * the launcher does (am__job_names_unlink), and exits.  It does nothing else and holds no
 * other file, so mpiexec does not wait for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "mpi_net.h"

static int keep_fd = -1; /* the write end, held until we die */

/* The reaper: read the rank's name, then wait for end of file. */
static _Noreturn void reap(int rd)
{
    char name[AM_NAME_MAX + 1];
    size_t got = 0;
    for (;;) {
        char c;
        ssize_t k = read(rd, &c, 1);
        if (k == 0)
            break; /* the rank has gone */
        if (k < 0 && errno != EINTR)
            _exit(1); /* cannot tell: leave everything */
        if (k > 0 && got < sizeof name - 1)
            name[got++] = c;
    }
    name[got] = '\0';
    char *nl = strchr(name, '\n');
    if (!nl)
        _exit(0); /* it went before naming anything */
    *nl = '\0';
    for (int b = 0; b < 2; b++)
        am__job_names_unlink((enum am_shm)b, name);
    _exit(0);
}

int am__mpi_reaper_start(void)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd[0]);
        close(fd[1]);
        return -e;
    }
    if (pid == 0) {
        setsid();
        int null = open("/dev/null", O_RDWR);
        for (int i = 0; i < 3; i++)
            dup2(null, i);
        for (int i = 3; i < 1024; i++)
            if (i != fd[0])
                close(i);
        reap(fd[0]);
    }
    close(fd[0]);
    keep_fd = fd[1];
    return 0;
}

void am__mpi_reaper_name(const char *job, int rank)
{
    char line[AM_NAME_MAX + 1];
    if (keep_fd < 0 || am__job_ep_name(job, rank, line, AM_NAME_MAX) < 0)
        return;
    size_t n = strlen(line);
    line[n++] = '\n';
    ssize_t k = write(keep_fd, line, n);
    (void)k; /* a reaper that has gone cannot be helped */
}
