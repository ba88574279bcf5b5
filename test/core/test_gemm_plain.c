/* test_gemm_plain: the GEMM's plain-C tile (what Cortex-M4F and RV32 run)
 * against the reference, on the host: the file is compiled here with the
 * vector-register macros removed, so its #if takes the portable branch. */
#undef __AVX512F__
#undef __AVX__
#undef __SSE2__
#undef __ARM_NEON
#include "../../core/tr_kernel_gemm.c"
#include "harness.h"
#include <math.h>
#include <string.h>

int main(void)
{
    static const size_t shp[][3] = {{1, 1, 1}, {4, 8, 3}, {7, 37, 13}, {16, 784, 25},
                                    {32, 196, 400}, {5, 7, 0}, {9, 17, 2}};
    unsigned t;
    unsigned long seed = 12345;

#ifndef TR_NR
    TH_CHECK(0, "the plain branch was not selected");
#endif
    for (t = 0; t < sizeof shp / sizeof shp[0]; t++) {
        size_t m = shp[t][0], n = shp[t][1], k = shp[t][2], lda = k + 1, ldb = n + 2, ldc = n + 3, i;
        float *a = malloc((m * lda + 1) * 4), *b = malloc(((k ? k : 1) * ldb) * 4);
        float *c1 = malloc(m * ldc * 4), *c2 = malloc(m * ldc * 4);
        double worst = 0, scale = 1e-30;
        for (i = 0; i < m * lda; i++) a[i] = (float)((seed = seed * 1103515245u + 12345u) % 2001) / 1000.0f - 1.0f;
        for (i = 0; i < (k ? k : 1) * ldb; i++) b[i] = (float)((seed = seed * 1103515245u + 12345u) % 2001) / 1000.0f - 1.0f;
        for (i = 0; i < m * ldc; i++) c1[i] = c2[i] = (float)(i % 5);
        tr_gemm(c1, a, b, m, n, k, lda, ldb, ldc);
        tr_gemm_ref(c2, a, b, m, n, k, lda, ldb, ldc);
        for (i = 0; i < m * ldc; i++) if (fabs(c2[i]) > scale) scale = fabs(c2[i]);
        for (i = 0; i < m * ldc; i++) if (fabs(c1[i] - c2[i]) / scale > worst) worst = fabs(c1[i] - c2[i]) / scale;
        TH_CHECK(worst < 1e-5, "plain gemm %zux%zux%zu: worst %g", m, n, k, worst);
        for (i = 0; i < m * ldc; i++) { c1[i] = 1e30f; c2[i] = 0.0f; }
        for (i = 0; i < m * ldc; i++) if (i % ldc >= n) c1[i] = c2[i] = 3.0f;
        tr_gemm_set(c1, a, b, m, n, k, lda, ldb, ldc);
        tr_gemm_ref(c2, a, b, m, n, k, lda, ldb, ldc);
        worst = 0;
        for (i = 0; i < m * ldc; i++) if (fabs(c1[i] - c2[i]) / scale > worst) worst = fabs(c1[i] - c2[i]) / scale;
        TH_CHECK(worst < 1e-5, "plain gemm_set %zux%zux%zu: worst %g", m, n, k, worst);
        free(a); free(b); free(c1); free(c2);
    }
    return th_report("core_gemm_plain");
}
