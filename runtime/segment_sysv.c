/*
 * segment_sysv.c - the System V backend of segment.h: segments under keys
 * hashed from their names, each naming itself in a trailer (System V names,
 * below), made, found, listed and removed without ever taking another name's
 * or user's; anonymous IPC_PRIVATE segments, and the sweep of their debris;
 * and the segments marked for removal that are still attached.
 */
#include "segment.h"

#include <atomic_ops.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

#include "segment_backend.h"

#if !defined(AO_HAVE_char_load_acquire) || !defined(AO_HAVE_char_store_release)
#error "segment.c needs AO_char_load_acquire and AO_char_store_release"
#endif

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

/* am__segment_ours() of a System V segment: its owner, its creator and its mode. */
static int sysv_ours(const struct shmid_ds *ds)
{
    const struct ipc_perm *p = &ds->shm_perm;
    return am__segment_ours(p->uid, p->cuid, p->mode);
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
int am__segment_sysv_create(const char *name, size_t size, struct am_segment *s)
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

int am__segment_sysv_open(const char *name, struct am_segment *s)
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
int am__segment_sysv_unlink(const char *name)
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

/* System V: every segment of ours whose trailer names it, but none marked for
 * removal (nothing opens it by name any more: sysv_removed). */
int am__segment_sysv_list(int (*fn)(const char *name, void *arg), void *arg)
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

/* Anonymous segments (segment.h): IPC_PRIVATE (no key), attached, then at once
 * marked for removal: it has no key from then on, and vanishes with its last
 * detach.  The only window is the two system calls between its shmget and its mark:
 * see sysv_sweep_anon. */

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

int am__segment_sysv_make_anon(size_t size, struct am_segment *s)
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

/* am__segment_seal of an anonymous System V segment: marked for removal,
 * then its trailer names its address. */
int am__segment_sysv_seal(struct am_segment *s, const char *addr)
{
    if (shmctl(s->id, IPC_RMID, NULL) != 0)
        return -errno;
    trailer_write((char *)s->base + s->size, addr);
    return trailer_protect(s);
}

/* Segment id `id`, if it is an anonymous one of ours whose trailer holds
 * addr (a private copy judged: a peer may change it meanwhile). */
int am__segment_sysv_open_anon(int id, const char *addr, struct am_segment *s)
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

/* Segments without a name (segment.h): the table's segments of ours marked for
 * removal, by their trailer (a marked segment has lost its key, IPC_PRIVATE since,
 * as an anonymous one has: both open as am__segment_sysv_open_anon opens one). */

/* System V: every segment of ours marked for removal (still attached, or the
 * kernel would have removed it) whose trailer holds a name or an address. */
int am__segment_sysv_list_unnamed(int (*fn)(const struct am_unnamed *u, void *arg),
                                  void *arg)
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
