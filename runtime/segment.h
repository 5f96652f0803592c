/*
 * segment.h - one shared segment, System V or POSIX, behind one small interface.
 *
 * A segment is named by an endpoint name (validated by the caller).  POSIX
 * segments are /dev/shm/shmam-NAME; System V segments use a key hashed from the
 * name (the endpoint header records the name, and openers check it, so a key
 * collision is refused, never confused).  Segments are created with mode 0600.
 */
#ifndef SHMAM_SEGMENT_H
#define SHMAM_SEGMENT_H

#include <stddef.h>
#include <sys/types.h>

enum am_shm { AM_SHM_POSIX = 0, AM_SHM_SYSV = 1 };

/* A System V segment is AM_SYSV_TAG bytes longer than the size asked for: its
 * name is kept there, past what am_segment.size covers (segment_sysv.c). */
#define AM_SYSV_TAG 64u

struct am_segment {
    void *base;
    size_t size;
    enum am_shm backend;
    int fd;   /* POSIX, between create and publish: the unnamed file; an
               * anonymous segment's owner: its memfd, for life; else -1 */
    int id;   /* System V: the segment id */
    int anon; /* anonymous (made by am__segment_make_anon): no name */
};

/* "posix" / "sysv" to enum; -EINVAL for anything else. */
int am__shm_parse(const char *s, enum am_shm *out);
const char *am__shm_name(enum am_shm b);

/* System V key of a name (never IPC_PRIVATE). */
key_t am__segment_key(const char *name);

/* Make a zero-filled segment of `size` bytes, mapped read-write, its memory
 * allocated now (a full /dev/shm is -ENOSPC here, not a SIGBUS later).  A POSIX
 * segment has no name yet: am__segment_publish gives it one once it is
 * complete, so a name never shows a half-made segment.  A System V segment has
 * its key at once: -EEXIST if the name's segment exists, or a segment of ours
 * whose name has been wiped holds one of the name's keys (it may be this
 * name's; judged within seconds, never waited for without end).  Other -errno
 * on failure. */
int am__segment_make(enum am_shm b, const char *name, size_t size, struct am_segment *s);

/* am__segment_make and am__segment_publish in one: the named segment, or
 * -EEXIST if the name is taken. */
int am__segment_create(enum am_shm b, const char *name, size_t size, struct am_segment *s);

/* Give a created segment its name, atomically: -EEXIST if the name is taken.
 * System V: nothing to do. */
int am__segment_publish(struct am_segment *s, const char *name);

/* Undo a create that was not published (or whose System V key is ours): the
 * memory goes, no name is left. */
void am__segment_discard(struct am_segment *s, const char *name);

/* How many mappings of a System V segment there are, s counted once, or -1 if
 * unknown (POSIX).  (A peer's view splits its mapping in pieces with
 * mprotect, each counted: only 1, s alone, or more is meaningful.) */
int am__segment_users(const struct am_segment *s);

/* Map an existing segment whole (its size taken from the system).
 * -ENOENT if there is none, -EACCES if it is not ours (another user's, or open
 * to group or others; System V: or made by another user), -EPROTO if it is
 * empty (POSIX) or has lost its name (System V: a segment of ours in use at
 * the name's key whose name trailer was wiped).  A System V segment's name
 * trailer is mapped read-only when the size is a multiple of the page size. */
int am__segment_open(enum am_shm b, const char *name, struct am_segment *s);

/* Remove the name so nobody else can open it; existing mappings stay valid and
 * the memory goes away with the last of them.  -ENOENT if there is none.
 * System V: also removes debris at the name's keys, and, if there is no
 * segment of the name, a nameless one there that this process made (its own,
 * its trailer wiped). */
int am__segment_unlink(enum am_shm b, const char *name);

/* Call fn(name, arg) for every segment of ours in backend b that carries a
 * name (System V: not one marked for removal, which no name opens any more),
 * until fn returns non-zero (which is returned); names are not validated.
 * 0, or -errno if the backend cannot be listed. */
int am__segment_list(enum am_shm b, int (*fn)(const char *name, void *arg), void *arg);

/* Segments of ours that have lost their names but are still in use, as a
 * job's ranks' are after am_init, or are anonymous (below).  POSIX: a file of
 * ours unlinked from /dev/shm ("shmam-NAME") or an anonymous memfd, that a
 * process of ours holds open, found as /proc/<pid>/fd/<n> (open to a process
 * of the same user while the holder is dumpable: a segment that is only
 * mapped, no descriptor held, is not found; a rank holds one,
 * am__segment_hold); System V: a segment of ours marked for removal and still
 * attached, whose name trailer holds a name or an address.  Each segment once,
 * however many processes hold it.  Nothing here says whether its owner lives:
 * the caller judges the header.
 *
 * list_unnamed: fn(u, arg) for each, until fn returns non-zero (returned);
 * u->name is the name the segment had, its address (System V), or "" (a
 * memfd: its header holds its address).  0, or -errno if /proc or the System
 * V table cannot be read.  open_unnamed: map u's segment whole, read-write,
 * as am__segment_open does: -ENOENT if it is not the one listed any more (its
 * descriptor closed or reused, its id reused), -EACCES, -EPROTO as there.
 * hold: a read-only, close-on-exec descriptor of POSIX segment s, opened by
 * its name (which must still be s's), for its owner to keep once the name has
 * gone; -EINVAL for System V, whose table lists a marked segment itself. */
struct am_unnamed {
    enum am_shm backend;
    char name[AM_SYSV_TAG];
    char path[48]; /* POSIX: /proc/<pid>/fd/<n> */
    dev_t dev;     /* POSIX: the file, as listed */
    ino_t ino;
    int id; /* System V: the segment id */
};
int am__segment_list_unnamed(enum am_shm b,
                             int (*fn)(const struct am_unnamed *u, void *arg), void *arg);
int am__segment_open_unnamed(const struct am_unnamed *u, struct am_segment *s);
int am__segment_hold(const struct am_segment *s, const char *name);

/* Unmap (detach) a mapped segment; close its file descriptor if it has one
 * (an anonymous segment's owner). */
void am__segment_unmap(struct am_segment *s);

/* Anonymous segments: no name in /dev/shm or System V key, so nothing of one
 * survives the last process that has it, however that process ends.  Its
 * address, "@p<pid>.f<fd>.<nonce>" (POSIX: a memfd its owner keeps open, that
 * a peer of the same user opens as /proc/<pid>/fd/<fd>) or "@s<id>.<nonce>"
 * (System V: an IPC_PRIVATE segment marked for removal, which Linux still lets
 * peers attach by id), is no valid name (it starts with '@'), and its nonce,
 * 64 random bits, tells this segment from a later one at a reused pid, fd or
 * id: the System V trailer records the address, and the endpoint header does
 * for both (am__view_attach compares them).
 *
 * make_anon: a zero-filled segment of `size` bytes, mapped read-write, not
 * yet sealed; its address into addr (n >= AM_ADDR_MAX).  seal: the owner, at
 * once: System V: mark it for removal, then write its address into the
 * trailer (a creator killed between its make and its seal leaves a blank
 * segment attached by nobody, which the next make_anon of any process of
 * this user removes once its creator has gone); POSIX: forbid every change of
 * its size (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL: no peer can truncate it
 * under a mapping).  0 or -errno; -ENOSPC if the memory is not there.
 * open_addr: map the segment at `addr` whole: -EINVAL if addr is no address,
 * -ENOENT if nothing of ours with that address is there (gone, a reused pid,
 * fd or id, no shmam segment), -EACCES if it is another user's (or open to
 * others; POSIX: or its process's files are closed to us), -EPROTO if it is
 * not sealed.  addr_valid: 1 if s is an address's syntax. */
#define AM_ADDR_MAX 48 /* an address and its NUL: fits an endpoint name's field */
int am__segment_make_anon(enum am_shm b, size_t size, struct am_segment *s, char *addr,
                          size_t n);
int am__segment_seal(struct am_segment *s, const char *addr);
int am__segment_open_addr(const char *addr, struct am_segment *s);
int am__addr_valid(const char *s);

#endif
