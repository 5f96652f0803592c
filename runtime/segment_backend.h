/*
 * segment_backend.h - what the files of segments give each other: segment.c,
 * the interface of segment.h, calls each backend's half of a call
 * (segment_posix.c, segment_sysv.c: their contracts are segment.h's for that
 * backend) and the addresses of segment_name.c; both backends judge
 * ownership by am__segment_ours.  Other modules use segment.h.
 */
#ifndef SHMAM_SEGMENT_BACKEND_H
#define SHMAM_SEGMENT_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "segment.h"

/* Ours alone: owned and made by this user, no access for group or others. */
int am__segment_ours(uid_t owner, uid_t creator, mode_t mode);

/* POSIX (segment_posix.c). */
int am__segment_posix_create(const char *name, size_t size, struct am_segment *s);
int am__segment_posix_publish(struct am_segment *s, const char *name);
int am__segment_posix_open(const char *name, struct am_segment *s);
int am__segment_posix_unlink(const char *name);
int am__segment_posix_list(int (*fn)(const char *name, void *arg), void *arg);
int am__segment_posix_make_anon(size_t size, struct am_segment *s);
int am__segment_posix_seal(struct am_segment *s);
int am__segment_posix_open_anon(int pid, int num, struct am_segment *s);
int am__segment_posix_list_unnamed(int (*fn)(const struct am_unnamed *u, void *arg),
                                   void *arg);
int am__segment_posix_open_unnamed(const struct am_unnamed *u, struct am_segment *s);

/* System V (segment_sysv.c). */
int am__segment_sysv_create(const char *name, size_t size, struct am_segment *s);
int am__segment_sysv_open(const char *name, struct am_segment *s);
int am__segment_sysv_unlink(const char *name);
int am__segment_sysv_list(int (*fn)(const char *name, void *arg), void *arg);
int am__segment_sysv_make_anon(size_t size, struct am_segment *s);
int am__segment_sysv_seal(struct am_segment *s, const char *addr);
int am__segment_sysv_open_anon(int id, const char *addr, struct am_segment *s);
int am__segment_sysv_list_unnamed(int (*fn)(const struct am_unnamed *u, void *arg),
                                  void *arg);

/* Addresses (segment_name.c): 64 bits no later segment at the same pid, fd
 * or id repeats; an address from a segment and a nonce (-ENAMETOOLONG if it
 * does not fit n); its parts again (-EINVAL unless exactly what
 * am__segment_addr_format writes). */
uint64_t am__segment_nonce(void);
int am__segment_addr_format(char *addr, size_t n, const struct am_segment *s, uint64_t x);
int am__segment_addr_parse(const char *addr, enum am_shm *b, int *pid, int *num);

#endif
