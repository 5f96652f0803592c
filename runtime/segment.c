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
 * are zero-filled by the kernel; opening refuses a segment of another user (System
 * V: owned or made by another: shm_perm.uid, shm_perm.cuid) or one open to group
 * or others.
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

#include <atomic_ops.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if !defined(AO_HAVE_char_load_acquire) || !defined(AO_HAVE_char_store_release)
#error "segment.c needs AO_char_load_acquire and AO_char_store_release"
#endif

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

/* Ours alone: owned and made by this user, no access for group or others.
 * The creator counts because an owner does not tell who made a segment: the
 * maker of a System V segment may hand it to any uid (IPC_SET), which cannot
 * change shm_perm.cuid.  A file's owner is its maker (only root can give a
 * file away). */
static int ours(uid_t owner, uid_t creator, mode_t mode)
{
    uid_t me = geteuid();
    return owner == me && creator == me && (mode & 077) == 0;
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
    else if (!ours(st.st_uid, st.st_uid, st.st_mode))
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
 * act only on the segment that names itself so, and only if it is ours (and
 * unlink on unnamed ones that nobody will name: debris, or a nameless one this
 * process made): a segment of another name or user is never opened or
 * removed.
 *
 * The trailer lies in memory that every process attached may write.  Each
 * mapping made here maps it read-only when it has a page of its own (a size of
 * whole pages, as every endpoint's), so a peer's stray write faults there; a
 * process that attaches the segment by itself can still write it.  So the
 * trailer is judged from a private copy, a segment whose trailer is not a name
 * is judged by the kernel's record instead (sysv_unnamed), and no wait on a
 * trailer outlasts SYSV_WAIT_S: a segment in use whose name is gone is neither
 * opened (-EPROTO) nor created over (-EEXIST). */
#define SYSV_TAG AM_SYSV_TAG
#define SYSV_PROBES 8

static key_t probe_key(const char *name, int i)
{
    key_t k = (key_t)((uint32_t)am__segment_key(name) + (uint32_t)i);
    return k == IPC_PRIVATE ? (key_t)1 : k;
}

/* ours() of a System V segment: its owner, its creator and its mode. */
static int sysv_ours(const struct shmid_ds *ds)
{
    const struct ipc_perm *p = &ds->shm_perm;
    return ours(p->uid, p->cuid, p->mode);
}

/* Marked for removal (SHM_DEST): the segment has lost its key (an id found by
 * key just before was removed since) and lives on only until its last detach,
 * which is the same as none. */
static int sysv_removed(const struct shmid_ds *ds)
{
    return (ds->shm_perm.mode & SHM_DEST) != 0;
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

/* Name a fresh segment: the trailer's bytes after the first, then the first
 * with a release store (pairs with trailer_read's acquire load), so a reader
 * sees no name or all of it, never a part of it that names another. */
static void trailer_write(char *tag, const char *name)
{
    strncpy(tag + 1, name + 1, SYSV_TAG - 1);
    AO_char_store_release((volatile unsigned char *)tag, (unsigned char)name[0]);
}

/* Copy the trailer at tag into name (a peer may change it meanwhile): 1 if it
 * holds a name (a NUL within it, and nothing after), 0 if its first byte is
 * zero (not named yet, or wiped), -1 if it holds anything else. */
static int trailer_read(const char *tag, char name[SYSV_TAG])
{
    name[0] = (char)AO_char_load_acquire((const volatile unsigned char *)tag);
    if (name[0] == '\0')
        return 0;
    memcpy(name + 1, tag + 1, SYSV_TAG - 1);
    size_t len = strnlen(name, SYSV_TAG), i = len;
    while (i < SYSV_TAG && name[i] == '\0')
        i++;
    return len < SYSV_TAG && i == SYSV_TAG ? 1 : -1;
}

/* Does the trailer of s have a page of its own (s->size a multiple of the
 * page size, as every endpoint's is)?  Then every mapping made here maps it
 * read-only: a piece of its own, which the kernel counts as one more
 * attachment (shm_nattch counts every piece mprotect splits a mapping in). */
static int trailer_own_page(const struct am_segment *s)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 && s->size % (size_t)page == 0;
}

/* Map the trailer of s read-only in this process if it has a page of its own.
 * 0, or -errno (mprotect). */
static int trailer_protect(const struct am_segment *s)
{
    if (!trailer_own_page(s) ||
        mprotect((char *)s->base + s->size, SYSV_TAG, PROT_READ) == 0)
        return 0;
    return -errno;
}

/* Is the process that created a segment gone?  Asked of an unnamed segment
 * that nobody has attached (no lifeline exists yet then).  A zombie is gone (a
 * rank killed with its launcher waits to be reaped by init while the
 * launcher's guardian sweeps).  A reused pid reads as alive: the segment then
 * counts as being made until made_long_ago, never the reverse. */
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

/* A creator names its segment right after attaching it, so a segment made
 * over SYSV_MAKING_S seconds ago (shm_ctime, set by the kernel at shmget and
 * by IPC_SET) is no longer being made.  A creator stopped that long before
 * its attach loses its segment (it is debris: its attach fails); one stopped
 * that long between its attach and naming it keeps the key, nameless. */
#define SYSV_MAKING_S 2
static int made_long_ago(const struct shmid_ds *ds)
{
    return time(NULL) - ds->shm_ctime > SYSV_MAKING_S;
}

/* What the segment under key k is to a process looking for a name. */
enum sysv_kind {
    SYSV_NONE,     /* nothing, or another name's segment */
    SYSV_NAMED,    /* ours, and named so */
    SYSV_FOREIGN,  /* named so, but not ours: another user's, or open to others */
    SYSV_MAKING,   /* ours, unnamed, and maybe being made: its name may appear */
    SYSV_NAMELESS, /* ours, unnamed, not being made, and attached by somebody */
    SYSV_DEBRIS,   /* ours, unnamed, not being made, and attached by nobody */
};

/* An unnamed segment of ours.  `blank`: its trailer's first byte is zero, as
 * the kernel made it, so it may be being made: while it is young and its
 * creator, the only one who names it, is alive (between shmget and naming
 * it).  Otherwise (a blank grown old, a creator gone, a trailer holding no
 * name) nobody will name it: debris if nobody has it attached, nameless if
 * somebody has (a live owner whose trailer a raw writer wiped, a creator
 * stalled between attach and naming; or a probe like ours or shmamstat's,
 * attached to debris for a moment: sysv_settle).  An attach alone does not
 * make a young blank "being made": a probe's would keep a dead creator's
 * debris from being unlinked. */
static enum sysv_kind sysv_unnamed(const struct shmid_ds *ds, int blank)
{
    if (blank && !made_long_ago(ds) && !creator_gone(ds))
        return SYSV_MAKING;
    return ds->shm_nattch == 0 ? SYSV_DEBRIS : SYSV_NAMELESS;
}

/* The segment under key k, for `name`: its id in *id, the kernel's record of
 * it in *ds.  Reads the trailer through a read-only attach of its own. */
static enum sysv_kind sysv_whose(key_t k, const char *name, int *id, struct shmid_ds *ds)
{
    char tag[SYSV_TAG];
    if ((*id = shmget(k, 0, 0)) < 0 || shmctl(*id, IPC_STAT, ds) != 0 || sysv_removed(ds) ||
        ds->shm_segsz < SYSV_TAG)
        return SYSV_NONE;
    const char *p = shmat(*id, NULL, SHM_RDONLY);
    if (p == (const void *)-1)
        return SYSV_NONE;
    int named = trailer_read(p + ds->shm_segsz - SYSV_TAG, tag);
    shmdt(p);
    if (named > 0)
        return strcmp(tag, name) != 0 ? SYSV_NONE
               : sysv_ours(ds)        ? SYSV_NAMED
                                      : SYSV_FOREIGN;
    return sysv_ours(ds) ? sysv_unnamed(ds, named == 0) : SYSV_NONE;
}

/* Bounds, in seconds of the judge's own clock, on asking sysv_whose again:
 * SYSV_WAIT_S for a segment being made (made_long_ago ends that wait sooner,
 * unless a peer keeps the kernel's record young with IPC_SET, or the wall
 * clock steps back), SYSV_SETTLE_S for one that stands nameless (a probe's
 * attach lasts microseconds; a descheduled one's, longer). */
#define SYSV_WAIT_S 10.0
#define SYSV_SETTLE_S 1.0

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* sysv_whose, asked again while its answer may change by itself: while the
 * segment is being made (only if `wait_making`: else SYSV_MAKING at once), up
 * to SYSV_WAIT_S, after which it counts as nameless; while it stands
 * nameless, up to SYSV_SETTLE_S.  Naps grow from 10 us to 1 ms. */
static enum sysv_kind sysv_settle(key_t k, const char *name, int wait_making, int *id,
                                  struct shmid_ds *ds)
{
    double start = mono_s(), nameless = -1; /* since when it stands nameless */
    long nap_ns = 10000;
    for (;;) {
        enum sysv_kind w = sysv_whose(k, name, id, ds);
        double now = mono_s();
        if (w == SYSV_MAKING && !wait_making)
            return w;
        if (w == SYSV_MAKING && now - start > SYSV_WAIT_S)
            return SYSV_NAMELESS;
        if (w == SYSV_NAMELESS && nameless < 0)
            nameless = now;
        if (w == SYSV_NAMELESS && now - nameless > SYSV_SETTLE_S)
            return w;
        if (w != SYSV_MAKING && w != SYSV_NAMELESS)
            return w;
        nanosleep(&(struct timespec){0, nap_ns}, NULL);
        nap_ns = nap_ns < 1000000 ? nap_ns * 2 : nap_ns;
    }
}

/* The id of the segment named `name` (the kernel's record of it in *ds), else
 * why there is none: -EACCES if a key holds a segment of that name that is not
 * ours, else -EPROTO if one holds a nameless segment of ours, else -ENOENT (a
 * segment still being made is not there yet). */
static int sysv_find(const char *name, struct shmid_ds *ds)
{
    int id, rc = -ENOENT;
    for (int i = 0; i < SYSV_PROBES; i++) {
        enum sysv_kind w = sysv_settle(probe_key(name, i), name, 0, &id, ds);
        if (w == SYSV_NAMED)
            return id;
        if (w == SYSV_FOREIGN)
            rc = -EACCES;
        else if (w == SYSV_NAMELESS && rc == -ENOENT)
            rc = -EPROTO;
    }
    return rc;
}

/* The id of a nameless segment at `name`'s keys that this process made, or
 * -ENOENT: an owner unlinking its own endpoint after a raw writer wiped its
 * trailer.  (Only a creator of a name makes segments at its keys.) */
static int sysv_made_here(const char *name)
{
    struct shmid_ds ds;
    int id;
    for (int i = 0; i < SYSV_PROBES; i++)
        if (sysv_whose(probe_key(name, i), name, &id, &ds) == SYSV_NAMELESS &&
            ds.shm_cpid == getpid())
            return id;
    return -ENOENT;
}

/* Remove the debris at the keys `name` may use: segments of ours that nobody
 * has attached, that carry no name and that nobody will name, such as those
 * of a creator killed between shmget and naming its segment.  A creator still
 * at work is alive, so a concurrent creator never takes its segment for
 * debris.  Returns how many it removed. */
static int sysv_clear_debris(const char *name)
{
    struct shmid_ds ds;
    int id, n = 0;
    for (int i = 0; i < SYSV_PROBES; i++)
        if (sysv_whose(probe_key(name, i), name, &id, &ds) == SYSV_DEBRIS &&
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
    if (rc == 0) {
        trailer_write((char *)s->base + size, name);
        if ((rc = trailer_protect(s)) != 0)
            am__segment_unmap(s);
    }
    if (rc != 0)
        shmctl(id, IPC_RMID, NULL);
    return rc;
}

/* The taken key k, to a creator of `name`: SYSV_NAMED if it holds `name`'s
 * segment; SYSV_DEBRIS if it held debris, now removed (make it again);
 * SYSV_NAMELESS if it holds a nameless segment of ours, which may be this very
 * name's, its owner alive (the name is then not made at another key: two
 * segments would claim it, and either owner's unlink could remove the
 * other's); anything else: try the next key.  A segment still being made (a
 * concurrent creator, its name not yet written) is waited for, up to
 * SYSV_WAIT_S: it may be a creator of this very name, and a slow creator is
 * not a dead one (under ASan and load, one was seen to take over 10 ms, and a
 * short wait then let a second creator of the same name win at the next key:
 * check_segment racing_create). */
static enum sysv_kind sysv_named(key_t k, const char *name)
{
    struct shmid_ds ds;
    int id;
    enum sysv_kind whose = sysv_settle(k, name, 1, &id, &ds);
    if (whose == SYSV_DEBRIS)
        shmctl(id, IPC_RMID, NULL);
    return whose;
}

/* -EEXIST if a segment of this name exists, or a nameless one of ours holds
 * one of its keys; -EADDRINUSE if every key the name may use holds another
 * name's segment. */
static int sysv_create(const char *name, size_t size, struct am_segment *s)
{
    if (name[0] == '\0')
        return -EINVAL;
    if (strlen(name) >= SYSV_TAG)
        return -ENAMETOOLONG;
    sysv_clear_debris(name);
    for (int i = 0; i < SYSV_PROBES; i++) {
        key_t k = probe_key(name, i);
        enum sysv_kind whose;
        int rc;
        do /* again while the key held debris, now removed */
            if ((rc = sysv_make(k, name, size, s)) != -EEXIST)
                return rc;
        while ((whose = sysv_named(k, name)) == SYSV_DEBRIS);
        if (whose == SYSV_NAMED || whose == SYSV_NAMELESS)
            return -EEXIST;
    }
    return -EADDRINUSE;
}

static int sysv_open(const char *name, struct am_segment *s)
{
    struct shmid_ds ds;
    int id = sysv_find(name, &ds);

    if (id < 0)
        return id;
    int rc = sysv_gone(sysv_attach(id, ds.shm_segsz, s));
    if (rc == 0 && (rc = trailer_protect(s)) != 0)
        am__segment_unmap(s);
    return rc;
}

/* Removes the segment named `name` (or, if a nameless one holds its key, that
 * one if this process made it) and any debris at its keys (so that a
 * launcher's sweep also clears a rank killed while creating).  -ENOENT if
 * there was nothing of ours to remove. */
static int sysv_unlink(const char *name)
{
    struct shmid_ds ds;
    int id = sysv_find(name, &ds);
    if (id == -EPROTO)
        id = sysv_made_here(name);
    int cleared = sysv_clear_debris(name);
    if (id < 0)
        return cleared ? 0 : -ENOENT;
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
    return s->backend == AM_SHM_POSIX && !s->anon ? posix_publish(s, name) : 0;
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

/* Contract: System V: the number of attachments now, s's counted once (its
 * trailer's piece is not: trailer_own_page), or -1 if the segment is gone;
 * POSIX: -1. */
int am__segment_users(const struct am_segment *s)
{
    struct shmid_ds ds;

    if (s->backend != AM_SHM_SYSV || shmctl(s->id, IPC_STAT, &ds) != 0)
        return -1;
    return (int)ds.shm_nattch - trailer_own_page(s);
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
 * is dangling in this process only.  An anonymous owner's memfd is closed
 * here: peers reach the segment no more (nor does anything else). */
void am__segment_unmap(struct am_segment *s)
{
    if (s->anon && s->fd >= 0)
        close(s->fd);
    if (s->anon)
        s->fd = -1;
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

/* System V: every segment of ours whose trailer names it, but none marked for
 * removal (nothing opens it by name any more: sysv_removed). */
static int sysv_list(int (*fn)(const char *name, void *arg), void *arg)
{
    struct shm_info info;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&info), rc = 0;
    for (int i = 0; rc == 0 && i <= max; i++) {
        struct shmid_ds ds;
        char name[SYSV_TAG];
        int id = shmctl(i, SHM_STAT, &ds);
        if (id < 0 || !sysv_ours(&ds) || sysv_removed(&ds) || ds.shm_segsz < SYSV_TAG)
            continue;
        const char *p = shmat(id, NULL, SHM_RDONLY);
        if (p == (const void *)-1)
            continue;
        int named = trailer_read(p + ds.shm_segsz - SYSV_TAG, name);
        shmdt(p);
        if (named > 0)
            rc = fn(name, arg);
    }
    return rc;
}

int am__segment_list(enum am_shm b, int (*fn)(const char *name, void *arg), void *arg)
{
    return b == AM_SHM_POSIX ? posix_list(fn, arg) : sysv_list(fn, arg);
}

/* ---- anonymous segments (segment.h) ----
 *
 * POSIX: a memfd named ANON_MEMFD, sized, allocated and mapped as a named
 * segment's file is, then sealed against any change of size; its owner keeps
 * the descriptor open (close-on-exec) until am__segment_unmap, and a peer
 * opens it through /proc/<pid>/fd/<fd>, which the kernel allows a process
 * that may read the owner's state (same user, the owner dumpable; Yama
 * restricts only attaching).  Nothing of it is in /dev/shm at any time, and
 * its memory goes with the last descriptor and mapping: at the owner's exit
 * or exec, or the last peer's unmap.
 *
 * System V: IPC_PRIVATE (no key), attached, then at once marked for removal:
 * it has no key from then on, and vanishes with its last detach.  The only
 * window is the two system calls between its shmget and its mark: see
 * sysv_sweep_anon. */
#define ANON_MEMFD "shmam"
#define ANON_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* 64 bits that a later segment at the same pid, fd or id will not repeat. */
static uint64_t nonce(void)
{
    uint64_t n;
    if (getrandom(&n, sizeof n, GRND_NONBLOCK) == (ssize_t)sizeof n)
        return n;
    struct timespec t; /* no entropy yet (early boot): time and pid */
    clock_gettime(CLOCK_MONOTONIC, &t);
    return ((uint64_t)t.tv_sec << 32 ^ (uint64_t)t.tv_nsec) * 0x9e3779b97f4a7c15u ^
           (uint64_t)getpid();
}

/* An address, from its parts: -ENAMETOOLONG if it does not fit n. */
static int addr_format(char *addr, size_t n, const struct am_segment *s, uint64_t x)
{
    int len = s->backend == AM_SHM_SYSV
                  ? snprintf(addr, n, "@s%d.%016llx", s->id, (unsigned long long)x)
                  : snprintf(addr, n, "@p%d.f%d.%016llx", (int)getpid(), s->fd,
                             (unsigned long long)x);
    return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

/* The parts of an address: its backend, the pid (POSIX) and the fd or id;
 * -EINVAL unless addr is exactly what addr_format writes for them. */
static int addr_parse(const char *addr, enum am_shm *b, int *pid, int *num)
{
    char again[AM_ADDR_MAX];
    unsigned long long x;
    int len = -1;
    if (!addr || strnlen(addr, AM_ADDR_MAX) >= AM_ADDR_MAX)
        return -EINVAL;
    if (sscanf(addr, "@s%d.%16llx%n", num, &x, &len) == 2 && len >= 0 && *num >= 0)
        len = snprintf(again, sizeof again, "@s%d.%016llx", *num, x), *b = AM_SHM_SYSV;
    else if (sscanf(addr, "@p%d.f%d.%16llx%n", pid, num, &x, &len) == 3 && len >= 0 &&
             *pid > 0 && *num >= 0)
        len = snprintf(again, sizeof again, "@p%d.f%d.%016llx", *pid, *num, x),
        *b = AM_SHM_POSIX;
    else
        return -EINVAL;
    return len > 0 && strcmp(again, addr) == 0 ? 0 : -EINVAL;
}

int am__addr_valid(const char *s)
{
    enum am_shm b;
    int pid, num;
    return addr_parse(s, &b, &pid, &num) == 0;
}

static int posix_make_anon(size_t size, struct am_segment *s)
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

/* A killed creator's anonymous System V segment: made (key IPC_PRIVATE, a
 * size of whole pages and a trailer, as every endpoint's), never marked for
 * removal, its trailer blank (seal marks before it writes), and its creator
 * gone.  Nobody can reach it: its address was never given out.  Marked for
 * removal by every make_anon of this user, so such debris lasts until the
 * next anonymous System V endpoint is made.  It is marked even while
 * attached: only a probe can be (another sweep, shmamstat, any program that
 * reads every segment), and a probe's moment must not let debris outlive
 * this sweep; the segment then vanishes with the probe's detach.  (A creator
 * pid reused since reads as alive: that debris waits for the next.) */
static void sysv_sweep_anon(void)
{
    struct shm_info info;
    long page = sysconf(_SC_PAGESIZE);
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&info);
    for (int i = 0; i <= max && page > 0; i++) {
        struct shmid_ds ds;
        char tag[SYSV_TAG];
        int id = shmctl(i, SHM_STAT, &ds);
        if (id < 0 || ds.shm_perm.__key != IPC_PRIVATE || !sysv_ours(&ds) ||
            sysv_removed(&ds) || ds.shm_segsz % (size_t)page != SYSV_TAG ||
            !creator_gone(&ds))
            continue;
        const char *p = shmat(id, NULL, SHM_RDONLY);
        if (p == (const void *)-1)
            continue;
        int named = trailer_read(p + ds.shm_segsz - SYSV_TAG, tag);
        shmdt(p);
        if (named == 0)
            shmctl(id, IPC_RMID, NULL);
    }
}

static int sysv_make_anon(size_t size, struct am_segment *s)
{
    sysv_sweep_anon();
    int id = shmget(IPC_PRIVATE, size + SYSV_TAG, IPC_CREAT | 0600);
    if (id < 0)
        return -errno;
    int rc = sysv_attach(id, size + SYSV_TAG, s);
    if (rc != 0)
        shmctl(id, IPC_RMID, NULL);
    return rc;
}

/* Contract: -EINVAL for size 0 or an unknown backend, -ENOSPC, other -errno;
 * nothing is left on failure.  The caller seals the segment next. */
int am__segment_make_anon(enum am_shm b, size_t size, struct am_segment *s, char *addr,
                          size_t n)
{
    int rc = size == 0           ? -EINVAL
             : b == AM_SHM_POSIX ? posix_make_anon(size, s)
             : b == AM_SHM_SYSV  ? sysv_make_anon(size, s)
                                 : -EINVAL;
    if (rc != 0)
        return rc;
    s->anon = 1;
    if ((rc = addr_format(addr, n, s, nonce())) != 0)
        am__segment_discard(s, addr);
    return rc;
}

/* Contract: the owner, once, right after make_anon; 0 or -errno (the caller
 * then discards the segment). */
int am__segment_seal(struct am_segment *s, const char *addr)
{
    if (s->backend == AM_SHM_POSIX)
        return fcntl(s->fd, F_ADD_SEALS, ANON_SEALS) == 0 ? 0 : -errno;
    if (shmctl(s->id, IPC_RMID, NULL) != 0)
        return -errno;
    trailer_write((char *)s->base + s->size, addr);
    return trailer_protect(s);
}

/* Map an open anonymous memfd: ours, sealed, not empty. */
static int posix_map_anon(int fd, struct am_segment *s)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    if (fstat(fd, &st) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode) || !ours(st.st_uid, st.st_uid, st.st_mode))
        return -EACCES;
    if (seals < 0 || (seals & ANON_SEALS) != ANON_SEALS || st.st_size == 0)
        return -EPROTO;
    return map_fd(fd, (size_t)st.st_size, s);
}

/* /proc/<pid>/fd/<fd>, if it is a memfd of ours named so. */
static int posix_open_anon(int pid, int num, struct am_segment *s)
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

/* Segment id `id`, if it is an anonymous one of ours whose trailer holds
 * addr (a private copy judged: a peer may change it meanwhile). */
static int sysv_open_anon(int id, const char *addr, struct am_segment *s)
{
    struct shmid_ds ds;
    char tag[SYSV_TAG];
    if (shmctl(id, IPC_STAT, &ds) != 0)
        return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
    if (!sysv_ours(&ds))
        return -EACCES;
    if (ds.shm_perm.__key != IPC_PRIVATE)
        return -ENOENT;
    int rc = sysv_gone(sysv_attach(id, ds.shm_segsz, s));
    if (rc != 0)
        return rc;
    if (trailer_read((const char *)s->base + s->size, tag) <= 0 || strcmp(tag, addr) != 0)
        rc = -ENOENT;
    else
        rc = trailer_protect(s);
    if (rc != 0)
        am__segment_unmap(s);
    return rc;
}

/* Contract: as segment.h says; the caller still checks the header, and that
 * it names addr. */
int am__segment_open_addr(const char *addr, struct am_segment *s)
{
    enum am_shm b;
    int pid = 0, num;
    if (addr_parse(addr, &b, &pid, &num) != 0)
        return -EINVAL;
    return b == AM_SHM_POSIX ? posix_open_anon(pid, num, s) : sysv_open_anon(num, addr, s);
}

/* ---- segments without a name (segment.h) ----
 *
 * POSIX: the descriptors of every process we may read, whose link is a file of
 * ours that lost its name ("/dev/shm/shmam-NAME (deleted)", no link left) or
 * an anonymous memfd; the same file held twice (a fork child's copy of its
 * parent's descriptor) is listed once, by device and inode.  System V: the
 * table's segments of ours marked for removal, by their trailer (a marked
 * segment has lost its key, IPC_PRIVATE since, as an anonymous one has: both
 * open as sysv_open_anon opens one). */
#define DELETED " (deleted)"

/* The name a held file's link shows: 1, and its old name into name, for
 * "/dev/shm/shmam-NAME (deleted)"; 1 and "" for an anonymous memfd; else 0. */
static int held_name(const char *link, char name[SYSV_TAG])
{
    static const char file[] = SHM_DIR "/" SHM_PREFIX;
    size_t n = strlen(link), d = strlen(DELETED), f = sizeof file - 1;
    name[0] = '\0';
    if (strcmp(link, "/memfd:" ANON_MEMFD DELETED) == 0)
        return 1;
    if (n <= f + d || strncmp(link, file, f) != 0 || strcmp(link + n - d, DELETED) != 0 ||
        n - f - d >= SYSV_TAG)
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
        st.st_nlink != 0 || !ours(st.st_uid, st.st_uid, st.st_mode))
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

static int posix_list_unnamed(int (*fn)(const struct am_unnamed *u, void *arg), void *arg)
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

/* System V: every segment of ours marked for removal (still attached, or the
 * kernel would have removed it) whose trailer holds a name or an address. */
static int sysv_list_unnamed(int (*fn)(const struct am_unnamed *u, void *arg), void *arg)
{
    struct shm_info info;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&info), rc = 0;
    for (int i = 0; rc == 0 && i <= max; i++) {
        struct shmid_ds ds;
        struct am_unnamed u = {.backend = AM_SHM_SYSV};
        int id = shmctl(i, SHM_STAT, &ds);
        if (id < 0 || !sysv_ours(&ds) || !sysv_removed(&ds) || ds.shm_segsz < SYSV_TAG)
            continue;
        const char *p = shmat(id, NULL, SHM_RDONLY);
        if (p == (const void *)-1)
            continue;
        int named = trailer_read(p + ds.shm_segsz - SYSV_TAG, u.name);
        shmdt(p);
        u.id = id;
        if (named > 0)
            rc = fn(&u, arg);
    }
    return rc;
}

int am__segment_list_unnamed(enum am_shm b,
                             int (*fn)(const struct am_unnamed *u, void *arg), void *arg)
{
    return b == AM_SHM_POSIX ? posix_list_unnamed(fn, arg) : sysv_list_unnamed(fn, arg);
}

/* The file u lists, if the descriptor still holds it: a memfd as an anonymous
 * segment's (sealed), a file that lost its name as a named one's. */
static int posix_open_unnamed(const struct am_unnamed *u, struct am_segment *s)
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
    else if (!ours(st.st_uid, st.st_uid, st.st_mode))
        rc = -EACCES;
    else
        rc = st.st_size == 0 ? -EPROTO : map_fd(fd, (size_t)st.st_size, s);
    close(fd);
    return rc;
}

/* Contract: as segment.h says; the caller still checks the header. */
int am__segment_open_unnamed(const struct am_unnamed *u, struct am_segment *s)
{
    if (u->backend == AM_SHM_POSIX)
        return posix_open_unnamed(u, s);
    return u->backend == AM_SHM_SYSV ? sysv_open_anon(u->id, u->name, s) : -EINVAL;
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
