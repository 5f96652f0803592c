/* echo_client.c - an anonymous endpoint that calls echo_server's handler 1
 * once, with a deadline of one second.
 * Run it as: echo_client [NAME [TEXT]]   (default "echo" "hello") */
#include <shmam.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "echo";
    const char *text = argc > 2 ? argv[2] : "hello";
    am_ep_t *ep;
    int rc = am_ep_create(NULL, NULL, &ep); /* anonymous: nothing left behind */
    if (rc < 0 || (rc = am_ep_map(ep, 0, name)) < 0)
        return fprintf(stderr, "echo_client: %s: %s\n", name, am_strerror(rc)), 1;
    char out[64];
    uint32_t args[2] = {6, 7};
    struct am_result res = {.data = out, .cap = sizeof out};
    rc = am_call(ep, 0, 1, args, 2, text, strlen(text), &res, 1000); /* 1 s deadline */
    if (rc < 0) /* -ETIMEDOUT, -EPIPE (the server died), -ENOENT (no handler 1)... */
        fprintf(stderr, "echo_client: call: %s\n", am_strerror(rc));
    else
        printf("echo_client: %.*s, args %u %u\n", (int)res.len, out, res.args[0], res.args[1]);
    am_ep_destroy(ep);
    return rc < 0;
}
