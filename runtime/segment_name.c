/*
 * segment_name.c - what segments are called: the backends' names ("posix",
 * "sysv") and anonymous segments' addresses, "@p<pid>.f<fd>.<nonce>" (POSIX)
 * and "@s<id>.<nonce>" (System V), which only this file writes and reads.
 */
#include "segment.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "segment_backend.h"

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

/* 64 bits that a later segment at the same pid, fd or id will not repeat. */
uint64_t am__segment_nonce(void)
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
int am__segment_addr_format(char *addr, size_t n, const struct am_segment *s, uint64_t x)
{
    int len = s->backend == AM_SHM_SYSV
                  ? snprintf(addr, n, "@s%d.%016llx", s->id, (unsigned long long)x)
                  : snprintf(addr, n, "@p%d.f%d.%016llx", (int)getpid(), s->fd,
                             (unsigned long long)x);
    return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

/* The parts of an address: its backend, the pid (POSIX) and the fd or id;
 * -EINVAL unless addr is exactly what addr_format writes for them. */
int am__segment_addr_parse(const char *addr, enum am_shm *b, int *pid, int *num)
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
    return am__segment_addr_parse(s, &b, &pid, &num) == 0;
}
