/* tinyring: a tiny test harness for the host tests.
 *
 *   TH_CHECK(cond, fmt, ...)   counts a pass, or prints the failure and counts it
 *   return th_report("suite"); at the end of main: prints "suite: N passed,
 *   M failed", appends it to $TR_RESULTS/<suite>.txt when set, returns 0/1.
 *   $TR_SUITE_TAG, when set, is put before the suite's name (a rerun of the
 *   same suite under sanitizers reports as "asan-<suite>").
 */
#ifndef TR_TEST_HARNESS_H
#define TR_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>

static int th_passed, th_failed;

#define TH_CHECK(cond, ...)                                                  \
    do {                                                                     \
        if (cond) {                                                          \
            th_passed++;                                                     \
        } else {                                                             \
            th_failed++;                                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
        }                                                                    \
    } while (0)

static int th_report(const char *suite)
{
    const char *dir = getenv("TR_RESULTS");
    const char *tag = getenv("TR_SUITE_TAG");   /* e.g. "asan-" for the sanitizer rerun */
    char name[128];
    snprintf(name, sizeof name, "%s%s", tag ? tag : "", suite);
    printf("%s: %d passed, %d failed\n", name, th_passed, th_failed);
    if (dir && *dir) {
        char path[512];
        FILE *f;
        snprintf(path, sizeof path, "%s/%s.txt", dir, name);
        f = fopen(path, "a");
        if (f) {
            fprintf(f, "%s %d %d\n", name, th_passed, th_failed);
            fclose(f);
        }
    }
    return th_failed ? 1 : 0;
}

#endif /* TR_TEST_HARNESS_H */
