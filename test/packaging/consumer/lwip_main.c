/* test/packaging consumer: tinyring::lwip linked against the consumer's own
 * lwIP. The port must have been compiled with the consumer's lwIP options
 * (its receive-ring size is 2 x TCP_WND as this file sees it), and its state
 * must come up on a two-rank table. (lwip-config/lwipopts.h is the project's:
 * tinyring's options with another TCP_WND.) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "lwip/init.h"
#include "lwip/opt.h"
#include "tinyring.h"
#include "tr_lwip.h"

#ifndef CONSUMER_LWIPOPTS_H
#error "port/lwip/lwipopts.h shadows the project's own lwipopts.h"
#endif

unsigned tr_lwip_rand(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (unsigned)t.tv_nsec;
}

u32_t sys_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (u32_t)(t.tv_sec * 1000u + t.tv_nsec / 1000000);
}

void tr_lwip_platform_assert(const char *msg, const char *file, int line)
{
    fprintf(stderr, "lwIP assert: %s (%s:%d)\n", msg, file, line);
    abort();
}

static void drive(void *arg, uint32_t wait_ms)
{
    (void)arg;
    (void)wait_ms;
}

int main(void)
{
    static const struct tr_lwip_addr table[2] = {
        { { 127, 0, 0, 1 }, 29500 }, { { 127, 0, 0, 1 }, 29501 } };
    static uint8_t rx[2 * TCP_WND];
    static struct tr_lwip lw;
    static struct tr_transport tp;
    struct tr_lwip_config c = { 0, 2, table, 42, 0, 0, drive, NULL, rx, sizeof rx };
    int e;

    lwip_init();
    if (tr_lwip_rx_size() != sizeof rx) {
        fprintf(stderr, "port built with another TCP_WND: rx size %zu, expected %zu\n",
                tr_lwip_rx_size(), sizeof rx);
        return 1;
    }
    if ((e = tr_lwip_init(&lw, &c)) < 0) {
        fprintf(stderr, "tr_lwip_init: %s\n", tr_strerror(e));
        return 1;
    }
    tr_lwip_transport(&lw, &tp);
    printf("lwip port: rx %zu bytes, state up\n", tr_lwip_rx_size());
    return 0;
}
