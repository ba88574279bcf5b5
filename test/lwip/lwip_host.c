/* tinyring test: what a NO_SYS lwIP application provides, for the host:
 * the millisecond clock and the assertion handler. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lwip/sys.h"

/* a process started again takes other local ports than the one before */
unsigned tr_lwip_rand(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned)getpid() * 2654435761u ^ (unsigned)ts.tv_nsec;
}

u32_t sys_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (u32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

void tr_lwip_platform_assert(const char *msg, const char *file, int line)
{
    fprintf(stderr, "lwIP assertion \"%s\" failed at %s:%d\n", msg, file, line);
    fflush(stderr);
    abort();
}
