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

struct am_segment {
    void *base;
    size_t size;
    enum am_shm backend;
};

/* "posix" / "sysv" to enum; -EINVAL for anything else. */
int am__shm_parse(const char *s, enum am_shm *out);
const char *am__shm_name(enum am_shm b);

/* System V key of a name (never IPC_PRIVATE). */
key_t am__segment_key(const char *name);

/* Create a zero-filled segment of `size` bytes, mapped read-write.
 * -EEXIST if a segment of that name exists, other -errno on failure. */
int am__segment_create(enum am_shm b, const char *name, size_t size,
                       struct am_segment *s);

/* Map an existing segment whole (its size taken from the system).
 * -ENOENT if there is none. */
int am__segment_open(enum am_shm b, const char *name, struct am_segment *s);

/* Remove the name so nobody else can open it; existing mappings stay valid and
 * the memory goes away with the last of them.  -ENOENT if there is none. */
int am__segment_unlink(enum am_shm b, const char *name);

/* Unmap (detach) a mapped segment. */
void am__segment_unmap(struct am_segment *s);

#endif
