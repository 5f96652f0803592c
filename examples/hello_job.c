/* hello_job.c - rank 0 asks rank 1 to square 7.  Run: shmamrun -n 2 hello_job */
#include <shmam.h>
#include <stdio.h>

static volatile int done;

static void square(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    uint32_t r = a[0] * a[0];
    am_reply(t, 1, &r, 1); /* at most one reply, to the sender */
}

static void answer(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    printf("rank %d: 7 squared is %u\n", am_rank(), a[0]);
    done = 1;
}

int main(int argc, char **argv)
{
    am_ep_t *ep;
    if (am_init(&argc, &argv, &ep) < 0) /* rank r's endpoint, every rank mapped */
        return 1;
    am_set_handler(ep, 0, square);
    am_set_handler(ep, 1, answer);
    if (am_rank() == 0) {
        uint32_t x = 7;
        am_request(ep, 1 % am_nprocs(), 0, &x, 1);
        while (!done)
            am_wait(ep, -1); /* sleeps until a message is handled */
    }
    return am_finalize(ep) < 0; /* a barrier, then the endpoint goes */
}
