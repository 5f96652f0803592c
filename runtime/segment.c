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
 * names" in segment_sysv.c), made with shmget(IPC_CREAT|IPC_EXCL) and attached with shmat;
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
 *
 * The parts.  segment.c (this file) is the interface of segment.h, choosing
 * the backend, and the rule of ownership both backends apply
 * (am__segment_ours); segment_posix.c is the POSIX backend, segment_sysv.c
 * the System V one (its names: keys and trailers), segment_name.c what
 * segments are called (the backends' names, anonymous segments' addresses).
 * segment_backend.h declares what they give each other.
 */
#include "segment.h"

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "segment_backend.h"

/* Ours alone: owned and made by this user, no access for group or others.
 * The creator counts because an owner does not tell who made a segment: the
 * maker of a System V segment may hand it to any uid (IPC_SET), which cannot
 * change shm_perm.cuid.  A file's owner is its maker (only root can give a
 * file away). */
int am__segment_ours(uid_t owner, uid_t creator, mode_t mode)
{
    uid_t me = geteuid();
    return owner == me && creator == me && (mode & 077) == 0;
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
        return am__segment_posix_create(name, size, s);
    if (b == AM_SHM_SYSV)
        return am__segment_sysv_create(name, size, s);
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
        return am__segment_posix_open(name, s);
    if (b == AM_SHM_SYSV)
        return am__segment_sysv_open(name, s);
    return -EINVAL;
}

/* Contract: 0 once the name shows the segment; -EEXIST if the name is taken.
 * POSIX only does anything. */
int am__segment_publish(struct am_segment *s, const char *name)
{
    return s->backend == AM_SHM_POSIX && !s->anon ? am__segment_posix_publish(s, name) : 0;
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

/* Contract: -ENOENT if there is nothing of that name; safe to call for a segment
 * someone else is using (their mappings stay valid). */
int am__segment_unlink(enum am_shm b, const char *name)
{
    if (b == AM_SHM_POSIX)
        return am__segment_posix_unlink(name);
    if (b == AM_SHM_SYSV)
        return am__segment_sysv_unlink(name);
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

int am__segment_list(enum am_shm b, int (*fn)(const char *name, void *arg), void *arg)
{
    return b == AM_SHM_POSIX ? am__segment_posix_list(fn, arg)
                             : am__segment_sysv_list(fn, arg);
}

/* Contract: -EINVAL for size 0 or an unknown backend, -ENOSPC, other -errno;
 * nothing is left on failure.  The caller seals the segment next. */
int am__segment_make_anon(enum am_shm b, size_t size, struct am_segment *s, char *addr,
                          size_t n)
{
    int rc = size == 0           ? -EINVAL
             : b == AM_SHM_POSIX ? am__segment_posix_make_anon(size, s)
             : b == AM_SHM_SYSV  ? am__segment_sysv_make_anon(size, s)
                                 : -EINVAL;
    if (rc != 0)
        return rc;
    s->anon = 1;
    if ((rc = am__segment_addr_format(addr, n, s, am__segment_nonce())) != 0)
        am__segment_discard(s, addr);
    return rc;
}

/* Contract: the owner, once, right after make_anon; 0 or -errno (the caller
 * then discards the segment). */
int am__segment_seal(struct am_segment *s, const char *addr)
{
    if (s->backend == AM_SHM_POSIX)
        return am__segment_posix_seal(s);
    return am__segment_sysv_seal(s, addr);
}

/* Contract: as segment.h says; the caller still checks the header, and that
 * it names addr. */
int am__segment_open_addr(const char *addr, struct am_segment *s)
{
    enum am_shm b;
    int pid = 0, num;
    if (am__segment_addr_parse(addr, &b, &pid, &num) != 0)
        return -EINVAL;
    return b == AM_SHM_POSIX ? am__segment_posix_open_anon(pid, num, s)
                             : am__segment_sysv_open_anon(num, addr, s);
}

int am__segment_list_unnamed(enum am_shm b,
                             int (*fn)(const struct am_unnamed *u, void *arg), void *arg)
{
    return b == AM_SHM_POSIX ? am__segment_posix_list_unnamed(fn, arg)
                             : am__segment_sysv_list_unnamed(fn, arg);
}

/* Contract: as segment.h says; the caller still checks the header. */
int am__segment_open_unnamed(const struct am_unnamed *u, struct am_segment *s)
{
    if (u->backend == AM_SHM_POSIX)
        return am__segment_posix_open_unnamed(u, s);
    return u->backend == AM_SHM_SYSV ? am__segment_sysv_open_anon(u->id, u->name, s)
                                     : -EINVAL;
}
