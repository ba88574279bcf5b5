/* test_gemm_plain: the GEMM's scalar-FPU tiles (what Cortex-M4F and RV32 run,
 * and the Cortex-M55's fallback) against the reference, on the host: the file
 * is compiled here with the vector-register macros removed, so its #if takes
 * the scalar branch. Every element must have the same bits as the reference
 * (the layer contract: the same float operations in the same order), on the
 * seed net's shapes, the narrow net's, and odd sizes that exercise every row
 * remainder (m % 6) and column remainder (n % 4), with strided views. This
 * binary is built with -ffp-contract=off, like core. */
#undef __AVX512F__
#undef __AVX__
#undef __SSE2__
#undef __ARM_NEON
#include "../../core/tr_kernel_gemm.c"
#include "harness.h"
#include <string.h>

static unsigned long seed = 12345;

static float rnd(void)
{
    seed = seed * 1103515245u + 12345u;
    return (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
}

/* 1 if c1 and c2 hold the same bits in all n floats */
static int same_bits(const float *c1, const float *c2, size_t n)
{
    return memcmp(c1, c2, n * sizeof *c1) == 0;
}

int main(void)
{
    static const size_t shp[][3] = {
        /* seed net at batch 1: conv1 fwd, conv2 fwd, conv1 dw, conv2 dw, conv2 dcol */
        {16, 784, 25}, {32, 196, 400}, {25, 16, 784}, {400, 32, 196}, {400, 196, 32},
        /* narrow 4/8 net */
        {4, 784, 25}, {8, 196, 100}, {25, 4, 784}, {100, 8, 196}, {100, 196, 8},
        /* every m % 6 and n % 4, k 0 and 1 */
        {1, 1, 1}, {2, 5, 3}, {3, 6, 7}, {5, 7, 13}, {7, 37, 13}, {11, 9, 2}, {13, 8, 0},
        {6, 4, 1}, {9, 17, 2}};
    unsigned t;

#ifndef TR_NR
    TH_CHECK(0, "the scalar branch was not selected");
#endif
    for (t = 0; t < sizeof shp / sizeof shp[0]; t++) {
        size_t m = shp[t][0], n = shp[t][1], k = shp[t][2], lda = k + 1, ldb = n + 2, ldc = n + 3, i;
        float *a = malloc((m * lda + 1) * 4), *b = malloc(((k ? k : 1) * ldb) * 4);
        float *c1 = malloc(m * ldc * 4), *c2 = malloc(m * ldc * 4);
        for (i = 0; i < m * lda; i++) a[i] = rnd();
        for (i = 0; i < (k ? k : 1) * ldb; i++) b[i] = rnd();
        for (i = 0; i < m * ldc; i++) c1[i] = c2[i] = rnd();
        tr_gemm(c1, a, b, m, n, k, lda, ldb, ldc);
        tr_gemm_ref(c2, a, b, m, n, k, lda, ldb, ldc);
        TH_CHECK(same_bits(c1, c2, m * ldc), "scalar gemm %zux%zux%zu: bits differ from the reference", m, n, k);
        /* set: C's old values unread (NaN-free garbage), the gaps between rows untouched */
        for (i = 0; i < m * ldc; i++) { c1[i] = 1e30f; c2[i] = 0.0f; }
        for (i = 0; i < m * ldc; i++) if (i % ldc >= n) c1[i] = c2[i] = 3.0f;
        tr_gemm_set(c1, a, b, m, n, k, lda, ldb, ldc);
        tr_gemm_ref(c2, a, b, m, n, k, lda, ldb, ldc);
        TH_CHECK(same_bits(c1, c2, m * ldc), "scalar gemm_set %zux%zux%zu: bits differ from the reference", m, n, k);
        free(a); free(b); free(c1); free(c2);
    }
    return th_report("core_gemm_plain");
}
