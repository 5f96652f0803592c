/*
 * segment.c - create, open, unlink and unmap one shared segment, POSIX or System V.
 *
 * POSIX segments are files /dev/shm/shmam-NAME made with shm_open(O_CREAT|O_EXCL),
 * sized with ftruncate and mapped MAP_SHARED.  System V segments live under the key
 * am__segment_key(NAME), a 32-bit FNV-1a hash of the name, made with
 * shmget(IPC_CREAT|IPC_EXCL) and attached with shmat.  Both are created with mode
 * 0600 and are zero-filled by the kernel.
 *
 * Invariants:
 *   - A failed create leaves nothing behind: no file, no System V id, no mapping.
 *   - Every call returns 0 or a negative errno code; none of them aborts.
 *   - Unlinking only removes the name (POSIX) or marks the id for removal (System
 *     V); memory stays mapped in every process that has it until it unmaps.  On
 *     Linux a System V segment marked for removal loses its key, so later opens of
 *     the name fail with -ENOENT, as they do for POSIX.
 *
 * Every function here may be called concurrently from any process; the kernel
 * serialises creation (O_EXCL, IPC_EXCL), so exactly one of several concurrent
 * creators of a name succeeds and the others get -EEXIST.
 */
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHM_PATH_MAX 256 /* NAME_MAX of /dev/shm plus the leading slash */

int am__shm_parse(const char *s, enum am_shm *out)
{
    if (s && strcmp(s, "posix") == 0)
        *out = AM_SHM_POSIX;
    else if (s && strcmp(s, "sysv") == 0)
        *out = AM_SHM_SYSV;
    else
        return -EINVAL;
    return 0;
}

const char *am__shm_name(enum am_shm b)
{
    return b == AM_SHM_SYSV ? "sysv" : "posix";
}

/* FNV-1a, 32 bits.  IPC_PRIVATE (0) would create a fresh anonymous segment on
 * every call, so that one hash value is moved to 1. */
key_t am__segment_key(const char *name)
{
    uint32_t h = 2166136261u;

    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    key_t k = (key_t)h;
    return k == IPC_PRIVATE ? (key_t)1 : k;
}

/* "/shmam-NAME" into buf; -ENAMETOOLONG if it does not fit a file name. */
static int posix_path(const char *name, char *buf, size_t n)
{
    int len = snprintf(buf, n, "/shmam-%s", name);

    return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

/* Map `size` bytes of fd read-write and shared into s. */
static int map_fd(int fd, size_t size, struct am_segment *s)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    if (p == MAP_FAILED)
        return -errno;
    *s = (struct am_segment){.base = p, .size = size, .backend = AM_SHM_POSIX};
    return 0;
}

/* Size and map a freshly created file; fchmod makes the mode 0600 whatever the
 * umask.  On failure the caller removes the file. */
static int posix_fill(int fd, size_t size, struct am_segment *s)
{
    if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)size) != 0)
        return -errno;
    return map_fd(fd, size, s);
}

static int posix_create(const char *name, size_t size, struct am_segment *s)
{
    char path[SHM_PATH_MAX];
    int rc = posix_path(name, path, sizeof path);

    if (rc != 0)
        return rc;
    int fd = shm_open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return -errno;
    rc = posix_fill(fd, size, s);
    close(fd);
    if (rc != 0)
        shm_unlink(path);
    return rc;
}

/* A file of size 0 exists between its creator's shm_open and ftruncate: the
 * opener gets -EAGAIN and may retry. */
static int posix_open(const char *name, struct am_segment *s)
{
    char path[SHM_PATH_MAX];
    struct stat st;
    int rc = posix_path(name, path, sizeof path);

    if (rc != 0)
        return rc;
    int fd = shm_open(path, O_RDWR, 0);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0)
        rc = -errno;
    else if (st.st_size == 0)
        rc = -EAGAIN;
    else
        rc = map_fd(fd, (size_t)st.st_size, s);
    close(fd);
    return rc;
}

static int posix_unlink(const char *name)
{
    char path[SHM_PATH_MAX];
    int rc = posix_path(name, path, sizeof path);

    if (rc != 0)
        return rc;
    return shm_unlink(path) == 0 ? 0 : -errno;
}

/* Attach id read-write into s. */
static int sysv_attach(int id, size_t size, struct am_segment *s)
{
    void *p = shmat(id, NULL, 0);

    if (p == (void *)-1)
        return -errno;
    *s = (struct am_segment){.base = p, .size = size, .backend = AM_SHM_SYSV};
    return 0;
}

static int sysv_create(const char *name, size_t size, struct am_segment *s)
{
    int id = shmget(am__segment_key(name), size, IPC_CREAT | IPC_EXCL | 0600);

    if (id < 0)
        return -errno;
    int rc = sysv_attach(id, size, s);
    if (rc != 0)
        shmctl(id, IPC_RMID, NULL);
    return rc;
}

/* The owner may remove the segment between our shmget and shmat: the id then
 * fails with EIDRM or EINVAL, which means the same as finding no segment. */
static int sysv_gone(int rc)
{
    return rc == -EIDRM || rc == -EINVAL ? -ENOENT : rc;
}

static int sysv_open(const char *name, struct am_segment *s)
{
    struct shmid_ds ds;
    int id = shmget(am__segment_key(name), 0, 0);

    if (id < 0)
        return -errno;
    if (shmctl(id, IPC_STAT, &ds) != 0)
        return sysv_gone(-errno);
    return sysv_gone(sysv_attach(id, ds.shm_segsz, s));
}

static int sysv_unlink(const char *name)
{
    int id = shmget(am__segment_key(name), 0, 0);

    if (id < 0 || shmctl(id, IPC_RMID, NULL) != 0)
        return -errno;
    return 0;
}

/* Contract: -EINVAL for size 0 or an unknown backend; -EEXIST if the name (or,
 * for System V, its key) is taken; other -errno from the system.  Nothing is left
 * behind on failure. */
int am__segment_create(enum am_shm b, const char *name, size_t size, struct am_segment *s)
{
    if (size == 0)
        return -EINVAL;
    if (b == AM_SHM_POSIX)
        return posix_create(name, size, s);
    if (b == AM_SHM_SYSV)
        return sysv_create(name, size, s);
    return -EINVAL;
}

/* Contract: maps the whole segment read-write; -ENOENT if there is none (or it
 * has been unlinked), -EAGAIN if a POSIX segment is still being sized by its
 * creator, -EACCES if it belongs to someone else.  The caller must still check
 * the header: the size and the contents are whatever the creator made. */
int am__segment_open(enum am_shm b, const char *name, struct am_segment *s)
{
    if (b == AM_SHM_POSIX)
        return posix_open(name, s);
    if (b == AM_SHM_SYSV)
        return sysv_open(name, s);
    return -EINVAL;
}

/* Contract: -ENOENT if there is nothing of that name; safe to call for a segment
 * someone else is using (their mappings stay valid). */
int am__segment_unlink(enum am_shm b, const char *name)
{
    if (b == AM_SHM_POSIX)
        return posix_unlink(name);
    if (b == AM_SHM_SYSV)
        return sysv_unlink(name);
    return -EINVAL;
}

/* Contract: idempotent; after it s->base is NULL and any pointer into the segment
 * is dangling in this process only. */
void am__segment_unmap(struct am_segment *s)
{
    if (!s->base)
        return;
    if (s->backend == AM_SHM_SYSV)
        shmdt(s->base);
    else
        munmap(s->base, s->size);
    s->base = NULL;
    s->size = 0;
}
