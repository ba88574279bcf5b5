/* tinyring bench-core: the clock bench_core and peak_probe time with. */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* seconds on the clock BENCH_CLOCK names: "cpu", the process's CPU time
 * (all its threads; on a shared machine the time it was not running is
 * left out), else the monotonic wall clock */
static double bench_now(void)
{
    static int cpu = -1;
    struct timespec t;
    if (cpu < 0) {
        const char *c = getenv("BENCH_CLOCK");
        cpu = c && strcmp(c, "cpu") == 0;
    }
    clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif /* BENCH_CLOCK_H */
