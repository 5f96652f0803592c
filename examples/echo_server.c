/* echo_server.c - a named endpoint that answers calls: handler 1 sends back
 * the arguments and the bytes it was given.  Ends on SIGTERM or SIGINT.
 * Run it as: echo_server [NAME]   (default "echo") */
#include <shmam.h>
#include <signal.h>
#include <stdio.h>

static am_ep_t *ep;
static volatile sig_atomic_t stop;

static void echo(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    am_reply_long(t, 0, d, len, a, n); /* the handler id is ignored for a call */
}

static void on_signal(int sig)
{
    stop = 1;
    am_ep_wake(ep); /* async-signal-safe: ends the am_wait below */
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "echo";
    int rc = am_ep_create(name, NULL, &ep);
    if (rc < 0)
        return fprintf(stderr, "echo_server: %s: %s\n", name, am_strerror(rc)), 1;
    am_set_handler(ep, 1, echo);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("echo_server: serving %s\n", name);
    fflush(stdout);
    while (!stop)
        am_wait(ep, -1); /* the server needs no am_ep_map: replies find the caller */
    return am_ep_destroy(ep) < 0;
}
