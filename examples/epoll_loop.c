/*
 * epoll_loop.c - one thread serves two endpoints and a timer from one epoll
 * loop, through am_ep_fd.
 *
 *   epoll_loop NAME              serve NAME.a and NAME.b: each answers "add"
 *                                requests (the sum of its arguments); a
 *                                timerfd prints the counts every second; a
 *                                request to handler QUIT ends the loop
 *   epoll_loop NAME client N     send N requests alternately to NAME.a and
 *                                NAME.b, check every answer, then send QUIT
 *
 * The loop's contract (shmam.h, Event loops): after am_poll returns 0 an
 * endpoint's descriptor becomes readable once a message arrives, so the
 * loop drains each readable endpoint until am_poll returns 0 and waits
 * again (required with EPOLLET: the descriptor is a level, and a poll that
 * ran messages makes no new edge).  The client is an ordinary shmam program.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "shmam.h"

enum { H_ADD = 1, H_SUM, H_QUIT };

static unsigned long served;
static int quit;

static void add_h(am_token_t *tok, const uint32_t *a, int n, void *d, size_t l)
{
    uint32_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += a[i];
    served++;
    am_reply(tok, H_SUM, &sum, 1);
}

static void quit_h(am_token_t *tok, const uint32_t *a, int n, void *d, size_t l)
{
    quit = 1;
}

static int die(const char *what, int rc)
{
    fprintf(stderr, "epoll_loop: %s: %s\n", what, am_strerror(rc));
    return 1;
}

static int serve(const char *name)
{
    am_ep_t *ep[2];
    char n[2][AM_MAX_NAME + 1];
    int epfd = epoll_create1(EPOLL_CLOEXEC), rc;
    for (int i = 0; i < 2; i++) {
        snprintf(n[i], sizeof n[i], "%s.%c", name, 'a' + i);
        if ((rc = am_ep_create(n[i], NULL, &ep[i])) < 0)
            return die(n[i], rc);
        am_set_handler(ep[i], H_ADD, add_h);
        am_set_handler(ep[i], H_QUIT, quit_h);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if ((rc = am_ep_fd(ep[i])) < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, rc, &ev) != 0)
            return die("am_ep_fd", rc < 0 ? rc : -errno);
        while (am_poll(ep[i]) > 0) /* arms the descriptor */
            ;
    }
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct itimerspec every = {{1, 0}, {1, 0}};
    struct epoll_event tev = {.events = EPOLLIN, .data.u32 = 2};
    timerfd_settime(tfd, 0, &every, NULL);
    epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &tev);
    printf("serving %s and %s\n", n[0], n[1]);
    fflush(stdout);
    while (!quit) {
        struct epoll_event evs[3];
        int k = epoll_wait(epfd, evs, 3, -1);
        for (int i = 0; i < k; i++) {
            uint32_t w = evs[i].data.u32;
            if (w == 2) {
                uint64_t ticks;
                if (read(tfd, &ticks, sizeof ticks) == sizeof ticks)
                    printf("tick: %lu requests served\n", served);
                continue;
            }
            while (am_poll(ep[w]) > 0) /* until it returns 0: armed again */
                ;
        }
    }
    printf("served %lu requests\n", served);
    close(tfd);
    close(epfd);
    for (int i = 0; i < 2; i++)
        am_ep_destroy(ep[i]);
    return 0;
}

static uint32_t got;
static int answered;

static void sum_h(am_token_t *tok, const uint32_t *a, int n, void *d, size_t l)
{
    got = n == 1 ? a[0] : ~0u;
    answered = 1;
}

static int client(const char *name, long count)
{
    char me[AM_MAX_NAME + 1], peer[AM_MAX_NAME + 1];
    am_ep_t *ep;
    int rc;
    snprintf(me, sizeof me, "%s.client%d", name, (int)getpid() % 100000);
    if ((rc = am_ep_create(me, NULL, &ep)) < 0)
        return die(me, rc);
    am_set_handler(ep, H_SUM, sum_h);
    for (int i = 0; i < 2; i++) {
        snprintf(peer, sizeof peer, "%s.%c", name, 'a' + i);
        if ((rc = am_ep_map(ep, (unsigned)i, peer)) < 0)
            return die(peer, rc);
    }
    for (long k = 0; k < count; k++) {
        uint32_t a[2] = {(uint32_t)k, 7};
        answered = 0;
        if ((rc = am_request(ep, (unsigned)(k % 2), H_ADD, a, 2)) < 0)
            return die("request", rc);
        while (!answered)
            if ((rc = am_wait(ep, -1)) < 0)
                return die("wait", rc);
        if (got != (uint32_t)k + 7)
            return fprintf(stderr, "epoll_loop: wrong sum for %ld\n", k), 1;
    }
    for (unsigned i = 0; i < 2; i++)
        am_request(ep, i, H_QUIT, NULL, 0);
    printf("%ld requests answered\n", count);
    am_ep_destroy(ep);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return serve(argv[1]);
    if (argc == 4 && strcmp(argv[2], "client") == 0)
        return client(argv[1], atol(argv[3]));
    fprintf(stderr, "usage: epoll_loop NAME [client N]\n");
    return 2;
}
