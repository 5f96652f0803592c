/*
 * segment_posix.c - the POSIX backend of segment.h: files /dev/shm/shmam-NAME,
 * made unnamed and linked under their name once complete (segment.c's file
 * header); anonymous memfds; the files of ours that processes hold open after
 * their names have gone (/proc/PID/fd); and the descriptor a job's rank holds
 * of its own segment.
 */
#include "segment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "segment_backend.h"

#define SHM_PATH_MAX 256    /* NAME_MAX of /dev/shm plus the leading slash */
#define SHM_DIR "/dev/shm"  /* where glibc's shm_open keeps its files */
#define SHM_PREFIX "shmam-" /* file name prefix of a POSIX segment */

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
    *s = (struct am_segment){.base = p, .size = size, .backend = AM_SHM_POSIX, .fd = -1};
    return 0;
}

/* Size, allocate and map a fresh unnamed file; fchmod makes the mode 0600
 * whatever the umask.  posix_fallocate returns its error instead of setting
 * errno. */
static int posix_fill(int fd, size_t size, struct am_segment *s)
{
    if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)size) != 0)
        return -errno;
    int rc = posix_fallocate(fd, 0, (off_t)size);
    if (rc != 0) {
        if (rc == ENOSPC)
            fprintf(stderr, "shmam: no room in " SHM_DIR " for a %zu-byte segment\n", size);
        return -rc;
    }
    return map_fd(fd, size, s);
}

int am__segment_posix_create(const char *name, size_t size, struct am_segment *s)
{
    char path[SHM_PATH_MAX];
    int rc = posix_path(name, path, sizeof path);

    if (rc != 0)
        return rc;
    int fd = open(SHM_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    rc = posix_fill(fd, size, s);
    if (rc != 0)
        close(fd);
    else
        s->fd = fd;
    return rc;
}

/* Link the unnamed file under its name; the kernel refuses an existing name. */
int am__segment_posix_publish(struct am_segment *s, const char *name)
{
    char path[SHM_PATH_MAX], file[SHM_PATH_MAX + sizeof SHM_DIR], fdpath[32];

    if (s->fd < 0)
        return 0;
    int rc = posix_path(name, path, sizeof path);
    if (rc != 0)
        return rc;
    snprintf(file, sizeof file, SHM_DIR "%s", path);
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", s->fd);
    if (linkat(AT_FDCWD, fdpath, AT_FDCWD, file, AT_SYMLINK_FOLLOW) != 0)
        return -errno;
    close(s->fd);
    s->fd = -1;
    return 0;
}

/* Files appear complete (am__segment_posix_publish): an empty one is not a segment. */
int am__segment_posix_open(const char *name, struct am_segment *s)
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
    else if (!am__segment_ours(st.st_uid, st.st_uid, st.st_mode))
        rc = -EACCES;
    else if (st.st_size == 0)
        rc = -EPROTO;
    else
        rc = map_fd(fd, (size_t)st.st_size, s);
    close(fd);
    return rc;
}

int am__segment_posix_unlink(const char *name)
{
    char path[SHM_PATH_MAX];
    int rc = posix_path(name, path, sizeof path);

    if (rc != 0)
        return rc;
    return shm_unlink(path) == 0 ? 0 : -errno;
}

/* POSIX: every /dev/shm/shmam-NAME file of ours (by name only: the caller
 * opens and judges each). */
int am__segment_posix_list(int (*fn)(const char *name, void *arg), void *arg)
{
    DIR *d = opendir(SHM_DIR);
    if (!d)
        return -errno;
    const struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, SHM_PREFIX, strlen(SHM_PREFIX)) == 0)
            rc = fn(e->d_name + strlen(SHM_PREFIX), arg);
    closedir(d);
    return rc;
}

/* Anonymous segments (segment.h): a memfd named ANON_MEMFD, sized, allocated and
 * mapped as a named segment's file is, then sealed against any change of size; its
 * owner keeps the descriptor open (close-on-exec) until am__segment_unmap, and a
 * peer opens it through /proc/<pid>/fd/<fd>, which the kernel allows a process that
 * may read the owner's state (same user, the owner dumpable; Yama restricts only
 * attaching).  Nothing of it is in /dev/shm at any time, and its memory goes with
 * the last descriptor and mapping: at the owner's exit or exec, or the last peer's
 * unmap. */
#define ANON_MEMFD "shmam"
#define ANON_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

int am__segment_posix_make_anon(size_t size, struct am_segment *s)
{
    int fd = memfd_create(ANON_MEMFD, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -errno;
    int rc = posix_fill(fd, size, s);
    if (rc != 0) {
        close(fd);
        return rc;
    }
    s->fd = fd;
    return 0;
}

/* am__segment_seal of an anonymous memfd: sealed against any change of size. */
int am__segment_posix_seal(struct am_segment *s)
{
    return fcntl(s->fd, F_ADD_SEALS, ANON_SEALS) == 0 ? 0 : -errno;
}

/* Map an open anonymous memfd: ours, sealed, not empty. */
static int posix_map_anon(int fd, struct am_segment *s)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    if (fstat(fd, &st) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode) || !am__segment_ours(st.st_uid, st.st_uid, st.st_mode))
        return -EACCES;
    if (seals < 0 || (seals & ANON_SEALS) != ANON_SEALS || st.st_size == 0)
        return -EPROTO;
    return map_fd(fd, (size_t)st.st_size, s);
}

/* /proc/<pid>/fd/<fd>, if it is a memfd of ours named so. */
int am__segment_posix_open_anon(int pid, int num, struct am_segment *s)
{
    char path[48], link[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, num);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n < 0)
        return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
    link[n] = '\0';
    if (strcmp(link, "/memfd:" ANON_MEMFD " (deleted)") != 0)
        return -ENOENT; /* the fd is something else now, or never was ours */
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
    int rc = posix_map_anon(fd, s);
    close(fd);
    return rc;
}

/* Segments without a name (segment.h): the descriptors of every process we may
 * read, whose link is a file of ours that lost its name ("/dev/shm/shmam-NAME
 * (deleted)", no link left) or an anonymous memfd; the same file held twice (a fork
 * child's copy of its parent's descriptor) is listed once, by device and inode. */
#define DELETED " (deleted)"

/* The name a held file's link shows: 1, and its old name into name, for
 * "/dev/shm/shmam-NAME (deleted)"; 1 and "" for an anonymous memfd; else 0. */
static int held_name(const char *link, char name[AM_SYSV_TAG])
{
    static const char file[] = SHM_DIR "/" SHM_PREFIX;
    size_t n = strlen(link), d = strlen(DELETED), f = sizeof file - 1;
    name[0] = '\0';
    if (strcmp(link, "/memfd:" ANON_MEMFD DELETED) == 0)
        return 1;
    if (n <= f + d || strncmp(link, file, f) != 0 || strcmp(link + n - d, DELETED) != 0 ||
        n - f - d >= AM_SYSV_TAG)
        return 0;
    memcpy(name, link + f, n - f - d);
    name[n - f - d] = '\0';
    return 1;
}

/* The files listed so far, by device and inode. */
struct seen {
    struct am_unnamed *v;
    size_t n, cap;
};

/* 1 if u's file is not in s yet (now it is), 0 if it is, -ENOMEM. */
static int seen_add(struct seen *s, const struct am_unnamed *u)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].dev == u->dev && s->v[i].ino == u->ino)
            return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct am_unnamed *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        s->v = v, s->cap = cap;
    }
    s->v[s->n++] = *u;
    return 1;
}

/* Descriptor entry `fd` of /proc/PID/fd (dir) into u: 1 if it holds a segment
 * of ours without a name, else 0. */
static int held_segment(const char *dir, const char *fd, struct am_unnamed *u)
{
    char link[SHM_PATH_MAX + sizeof SHM_DIR + sizeof DELETED];
    struct stat st;
    *u = (struct am_unnamed){.backend = AM_SHM_POSIX, .id = -1};
    snprintf(u->path, sizeof u->path, "%.24s/%.12s", dir, fd);
    ssize_t n = readlink(u->path, link, sizeof link - 1);
    if (n < 0)
        return 0;
    link[n] = '\0';
    if (!held_name(link, u->name) || stat(u->path, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_nlink != 0 || !am__segment_ours(st.st_uid, st.st_uid, st.st_mode))
        return 0;
    u->dev = st.st_dev, u->ino = st.st_ino;
    return 1;
}

/* The unnamed segments process `pid` (a /proc entry) holds open, new to s.
 * A process we may not read, or one gone meanwhile, holds none. */
static int posix_held(const char *pid, struct seen *s,
                      int (*fn)(const struct am_unnamed *u, void *arg), void *arg)
{
    char dir[32];
    snprintf(dir, sizeof dir, "/proc/%.12s/fd", pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    const struct dirent *e;
    struct am_unnamed u;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        int fresh =
            e->d_name[0] != '.' && held_segment(dir, e->d_name, &u) ? seen_add(s, &u) : 0;
        rc = fresh < 0 ? fresh : fresh ? fn(&u, arg) : 0;
    }
    closedir(d);
    return rc;
}

int am__segment_posix_list_unnamed(int (*fn)(const struct am_unnamed *u, void *arg),
                                   void *arg)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -errno;
    struct seen s = {0};
    const struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL)
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
            rc = posix_held(e->d_name, &s, fn, arg);
    closedir(d);
    free(s.v);
    return rc;
}

/* The file u lists, if the descriptor still holds it: a memfd as an anonymous
 * segment's (sealed), a file that lost its name as a named one's. */
int am__segment_posix_open_unnamed(const struct am_unnamed *u, struct am_segment *s)
{
    struct stat st;
    int fd = open(u->path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), rc;
    if (fd < 0)
        return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
    if (fstat(fd, &st) != 0)
        rc = -errno;
    else if (st.st_dev != u->dev || st.st_ino != u->ino)
        rc = -ENOENT; /* the descriptor was closed, its number reused */
    else if (u->name[0] == '\0')
        rc = posix_map_anon(fd, s);
    else if (!am__segment_ours(st.st_uid, st.st_uid, st.st_mode))
        rc = -EACCES;
    else
        rc = st.st_size == 0 ? -EPROTO : map_fd(fd, (size_t)st.st_size, s);
    close(fd);
    return rc;
}

/* Contract: as segment.h says: the descriptor, or -errno (-ENOENT if the name
 * holds no file of s's size). */
int am__segment_hold(const struct am_segment *s, const char *name)
{
    char path[SHM_PATH_MAX];
    struct stat st;
    if (s->backend != AM_SHM_POSIX || s->anon)
        return -EINVAL;
    int rc = posix_path(name, path, sizeof path);
    if (rc != 0)
        return rc;
    int fd = shm_open(path, O_RDONLY, 0); /* close-on-exec, as shm_open sets it */
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size == s->size)
        return fd;
    close(fd);
    return -ENOENT;
}
