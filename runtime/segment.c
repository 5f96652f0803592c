/*
 * segment.c - create, open, unlink and unmap one shared segment, POSIX or System V.
 *
 * POSIX segments are files /dev/shm/shmam-NAME.  They are made unnamed
 * (open(O_TMPFILE) in /dev/shm), sized and allocated (posix_fallocate), filled
 * by the caller, and only then linked under their name (linkat, which fails if
 * the name exists: exclusive creation).  So a name always shows a complete
 * segment, and a creator killed half way leaves nothing at all.  System V
 * segments live under the key am__segment_key(NAME), a 32-bit FNV-1a hash of the
 * name (or one of the next keys, when another name holds it: see "System V
 * names" below), made with shmget(IPC_CREAT|IPC_EXCL) and attached with shmat;
 * they are visible from creation, and an opener judges a half-made one by
 * whether anybody has it attached (am__segment_users).  Both are created with mode 0600 and
 * are zero-filled by the kernel; opening refuses a segment of another user or one open to
 * group or others.
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
 * serialises creation (linkat, IPC_EXCL), so exactly one of several concurrent
 * creators of a name succeeds and the others get -EEXIST.
 */
#include "segment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SHM_PATH_MAX 256    /* NAME_MAX of /dev/shm plus the leading slash */
#define SHM_DIR "/dev/shm"  /* where glibc's shm_open keeps its files */
#define SHM_PREFIX "shmam-" /* file name prefix of a POSIX segment */

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

static int posix_create(const char *name, size_t size, struct am_segment *s)
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
static int posix_publish(struct am_segment *s, const char *name)
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

/* Ours alone: owned by this user, no access for group or others. */
static int ours(uid_t uid, mode_t mode)
{
    return uid == geteuid() && (mode & 077) == 0;
}

/* Files appear complete (posix_publish): an empty one is not a segment. */
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
    else if (!ours(st.st_uid, st.st_mode))
        rc = -EACCES;
    else if (st.st_size == 0)
        rc = -EPROTO;
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

/* System V names.  A key is a 32-bit hash of the name, so two names can share
 * one.  Every System V segment therefore carries its full name in a trailer of
 * SYSV_TAG bytes past the size its creator asked for, and a name's segment is
 * the one, among its key and the SYSV_PROBES - 1 keys after it, whose trailer
 * names it.  Creation takes the first free key of the name; open and unlink
 * act only on the segment that names itself so, and only if it is ours: a
 * segment of another name or user is never opened or removed. */
#define SYSV_TAG 64u
#define SYSV_PROBES 8

static key_t probe_key(const char *name, int i)
{
    key_t k = (key_t)((uint32_t)am__segment_key(name) + (uint32_t)i);
    return k == IPC_PRIVATE ? (key_t)1 : k;
}

/* Attach id read-write into s; the trailer is not part of s->size. */
static int sysv_attach(int id, size_t segsz, struct am_segment *s)
{
    if (segsz < SYSV_TAG)
        return -EPROTO;
    void *p = shmat(id, NULL, 0);

    if (p == (void *)-1)
        return -errno;
    *s = (struct am_segment){
        .base = p, .size = segsz - SYSV_TAG, .backend = AM_SHM_SYSV, .fd = -1, .id = id};
    return 0;
}

/* The owner may remove the segment between our shmget and shmat: the id then
 * fails with EIDRM or EINVAL, which means the same as finding no segment. */
static int sysv_gone(int rc)
{
    return rc == -EIDRM || rc == -EINVAL ? -ENOENT : rc;
}

/* Is the process that created a segment gone?  Only asked of an unnamed,
 * unattached segment (no lifeline exists yet then).  A zombie is gone (a rank
 * killed with its launcher waits to be reaped by init while the launcher's
 * guardian sweeps).  A reused pid reads as alive: the debris then waits for the
 * next sweep, never the reverse. */
static int creator_gone(const struct shmid_ds *ds)
{
    char path[32], buf[256];
    if (kill(ds->shm_cpid, 0) != 0 && errno == ESRCH)
        return 1;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)ds->shm_cpid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *state = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold ')' */
    return state && (state[2] == 'Z' || state[2] == 'X');
}

/* What the segment under key k is to us: 1 ours and named `name` (its id and
 * size in *id, *segsz), 0 anything else there (another name, another user,
 * none), SYSV_MAKING ours, unnamed, its creator alive (being made: its name is
 * not written yet), -1 debris (ours, unnamed, attached by nobody, and its
 * creator gone, killed before naming it, or made over SYSV_UNATTACHED_S
 * seconds ago: a creator's pid reused by another process reads
 * as alive, and would hold a concurrent creator of the name for ever; a
 * creator stopped that long between shmget and its attach loses its segment,
 * and its attach fails).  Reads the trailer through a read-only attach. */
#define SYSV_MAKING 2
#define SYSV_UNATTACHED_S 2
/* Was an unnamed segment, attached by nobody now, made over
 * SYSV_UNATTACHED_S ago?  (Its creator names it right after attaching, and
 * stays attached; probes like ours attach it for a moment, so the last
 * attach's time says nothing.) */
static int unattached_long(const struct shmid_ds *ds)
{
    return time(NULL) - ds->shm_ctime > SYSV_UNATTACHED_S;
}

static int sysv_whose(key_t k, const char *name, int *id, size_t *segsz)
{
    struct shmid_ds ds;
    if ((*id = shmget(k, 0, 0)) < 0 || shmctl(*id, IPC_STAT, &ds) != 0 ||
        !ours(ds.shm_perm.uid, ds.shm_perm.mode) || ds.shm_segsz < SYSV_TAG)
        return 0;
    const char *p = shmat(*id, NULL, SHM_RDONLY);
    if (p == (const void *)-1)
        return 0;
    const char *tag = p + ds.shm_segsz - SYSV_TAG;
    int r = strncmp(tag, name, SYSV_TAG) == 0 ? 1
            : tag[0] != 0                     ? 0
            : ds.shm_nattch == 0 && (creator_gone(&ds) || unattached_long(&ds))
                ? -1
                : SYSV_MAKING;
    shmdt(p);
    *segsz = ds.shm_segsz;
    return r;
}

/* The id of the segment named `name`, or -ENOENT. */
static int sysv_find(const char *name, size_t *segsz)
{
    int id;
    for (int i = 0; i < SYSV_PROBES; i++)
        if (sysv_whose(probe_key(name, i), name, &id, segsz) == 1)
            return id;
    return -ENOENT;
}

/* Remove the debris at the keys `name` may use: segments of ours that nobody
 * has attached and that carry no name, left by a creator killed between shmget
 * and naming the segment.  A creator still at work is alive, so a concurrent
 * creator never takes its segment for debris.  Returns how many it removed. */
static int sysv_clear_debris(const char *name)
{
    int id, n = 0;
    size_t sz;
    for (int i = 0; i < SYSV_PROBES; i++)
        if (sysv_whose(probe_key(name, i), name, &id, &sz) < 0 &&
            shmctl(id, IPC_RMID, NULL) == 0)
            n++;
    return n;
}

/* Make a segment under key k, named `name` in its trailer. */
static int sysv_make(key_t k, const char *name, size_t size, struct am_segment *s)
{
    int id = shmget(k, size + SYSV_TAG, IPC_CREAT | IPC_EXCL | 0600);

    if (id < 0)
        return -errno;
    int rc = sysv_attach(id, size + SYSV_TAG, s);
    if (rc != 0)
        shmctl(id, IPC_RMID, NULL);
    else
        strncpy((char *)s->base + size, name, SYSV_TAG);
    return rc;
}

/* The taken key k: 1 if it holds `name`'s segment, 0 another name's, -1 it
 * held debris, now removed (make it again).  A segment still being made (a
 * concurrent creator, its name not yet written) is waited for as long as its
 * creator lives: it may be a creator of this very name, and a slow creator is
 * not a dead one (under ASan and load, one was seen to take over 10 ms, and a
 * bounded wait then let a second creator of the same name win at the next
 * key: check_segment racing_create).  The wait ends when the name appears or
 * the segment turns out debris (sysv_whose).  Naps grow from 10 us to 1 ms. */
static int sysv_named(key_t k, const char *name)
{
    int id, whose;
    size_t sz;
    long nap_ns = 10000;
    while ((whose = sysv_whose(k, name, &id, &sz)) == SYSV_MAKING) {
        nanosleep(&(struct timespec){0, nap_ns}, NULL);
        nap_ns = nap_ns < 1000000 ? nap_ns * 2 : nap_ns;
    }
    if (whose < 0)
        shmctl(id, IPC_RMID, NULL);
    return whose;
}

/* -EEXIST if a segment of this name exists, -EADDRINUSE if every key the name
 * may use holds another name's segment. */
static int sysv_create(const char *name, size_t size, struct am_segment *s)
{
    if (strlen(name) >= SYSV_TAG)
        return -ENAMETOOLONG;
    sysv_clear_debris(name);
    for (int i = 0; i < SYSV_PROBES; i++) {
        key_t k = probe_key(name, i);
        int rc, whose;
        do /* again while the key held debris, now removed */
            if ((rc = sysv_make(k, name, size, s)) != -EEXIST)
                return rc;
        while ((whose = sysv_named(k, name)) < 0);
        if (whose == 1)
            return -EEXIST;
    }
    return -EADDRINUSE;
}

static int sysv_open(const char *name, struct am_segment *s)
{
    size_t segsz;
    int id = sysv_find(name, &segsz);

    if (id < 0)
        return id;
    return sysv_gone(sysv_attach(id, segsz, s));
}

/* Removes the segment named `name` and any debris at its keys (so that a
 * launcher's sweep also clears a rank killed while creating). */
static int sysv_unlink(const char *name)
{
    size_t segsz;
    int id = sysv_find(name, &segsz), cleared = sysv_clear_debris(name);

    if (id < 0)
        return cleared ? 0 : id;
    return shmctl(id, IPC_RMID, NULL) == 0 ? 0 : sysv_gone(-errno);
}

/* Contract: -EINVAL for size 0 or an unknown backend; -EEXIST if a System V key
 * is taken; -ENOSPC if /dev/shm is full; other -errno from the system.  POSIX:
 * the segment has no name until am__segment_publish.  Nothing is left behind on
 * failure. */
int am__segment_make(enum am_shm b, const char *name, size_t size, struct am_segment *s)
{
    if (size == 0)
        return -EINVAL;
    if (b == AM_SHM_POSIX)
        return posix_create(name, size, s);
    if (b == AM_SHM_SYSV)
        return sysv_create(name, size, s);
    return -EINVAL;
}

/* Contract: am__segment_make then am__segment_publish: -EEXIST if the name (or,
 * for System V, its key) is taken.  Nothing is left behind on failure. */
int am__segment_create(enum am_shm b, const char *name, size_t size, struct am_segment *s)
{
    int rc = am__segment_make(b, name, size, s);
    if (rc == 0 && (rc = am__segment_publish(s, name)) != 0)
        am__segment_discard(s, name);
    return rc;
}

/* Contract: maps the whole segment read-write; -ENOENT if there is none (or it
 * has been unlinked), -EPROTO if a POSIX file is empty, -EACCES if it belongs
 * to someone else or others may open it.  The caller must still check
 * the header: the size and the contents are whatever the creator made. */
int am__segment_open(enum am_shm b, const char *name, struct am_segment *s)
{
    if (b == AM_SHM_POSIX)
        return posix_open(name, s);
    if (b == AM_SHM_SYSV)
        return sysv_open(name, s);
    return -EINVAL;
}

/* Contract: 0 once the name shows the segment; -EEXIST if the name is taken.
 * POSIX only does anything. */
int am__segment_publish(struct am_segment *s, const char *name)
{
    return s->backend == AM_SHM_POSIX ? posix_publish(s, name) : 0;
}

/* Contract: after a create, before (or instead of) publishing: nothing is left,
 * neither memory nor name. */
void am__segment_discard(struct am_segment *s, const char *name)
{
    if (s->backend == AM_SHM_SYSV)
        shmctl(s->id, IPC_RMID, NULL);
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    am__segment_unmap(s);
}

/* Contract: System V: the number of attachments now (this process's included),
 * or -1 if the segment is gone; POSIX: -1. */
int am__segment_users(const struct am_segment *s)
{
    struct shmid_ds ds;

    if (s->backend != AM_SHM_SYSV || shmctl(s->id, IPC_STAT, &ds) != 0)
        return -1;
    return (int)ds.shm_nattch;
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

/* POSIX: every /dev/shm/shmam-NAME file of ours (by name only: the caller
 * opens and judges each). */
static int posix_list(int (*fn)(const char *name, void *arg), void *arg)
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

/* System V: every segment of ours whose trailer names it. */
static int sysv_list(int (*fn)(const char *name, void *arg), void *arg)
{
    struct shm_info info;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&info), rc = 0;
    for (int i = 0; rc == 0 && i <= max; i++) {
        struct shmid_ds ds;
        int id = shmctl(i, SHM_STAT, &ds);
        if (id < 0 || !ours(ds.shm_perm.uid, ds.shm_perm.mode) || ds.shm_segsz < SYSV_TAG)
            continue;
        const char *p = shmat(id, NULL, SHM_RDONLY);
        if (p == (const void *)-1)
            continue;
        char name[SYSV_TAG];
        memcpy(name, p + ds.shm_segsz - SYSV_TAG, sizeof name);
        shmdt(p);
        name[SYSV_TAG - 1] = '\0';
        if (name[0])
            rc = fn(name, arg);
    }
    return rc;
}

int am__segment_list(enum am_shm b, int (*fn)(const char *name, void *arg), void *arg)
{
    return b == AM_SHM_POSIX ? posix_list(fn, arg) : sysv_list(fn, arg);
}
