/* tinyring: single-precision GEMM, C += A * B, row-major, for the conv
 * kernels. A plain triple loop as reference; the fast one register-tiles
 * TR_GEMM_MR x TR_GEMM_NR blocks of C kept in local accumulators across the
 * whole K loop, with a contiguous NR-wide inner loop that compilers turn into
 * vector multiply-adds. Portable C99, no intrinsics. */
#include "tr_layer_kernels.h"

void tr_gemm_ref(float *c, const float *a, const float *b, size_t m, size_t n,
                 size_t k, size_t lda, size_t ldb, size_t ldc)
{
    size_t i, j, p;

    for (i = 0; i < m; i++)
        for (p = 0; p < k; p++) {
            const float av = a[i * lda + p];
            for (j = 0; j < n; j++)
                c[i * ldc + j] += av * b[p * ldb + j];
        }
}

#define TR_GEMM_MR 4
#define TR_GEMM_NR 16

/* C (MR, NR) += A (MR, k) * B (k, NR). */
static void gemm_tile(float *restrict c, const float *restrict a,
                      const float *restrict b, size_t k, size_t lda,
                      size_t ldb, size_t ldc)
{
    float acc[TR_GEMM_MR][TR_GEMM_NR];
    size_t i, j, p;

    for (i = 0; i < TR_GEMM_MR; i++)
        for (j = 0; j < TR_GEMM_NR; j++)
            acc[i][j] = c[i * ldc + j];
    for (p = 0; p < k; p++) {
        const float *bp = b + p * ldb;
        for (i = 0; i < TR_GEMM_MR; i++) {
            const float av = a[i * lda + p];
            for (j = 0; j < TR_GEMM_NR; j++)
                acc[i][j] += av * bp[j];
        }
    }
    for (i = 0; i < TR_GEMM_MR; i++)
        for (j = 0; j < TR_GEMM_NR; j++)
            c[i * ldc + j] = acc[i][j];
}

/* C (1, NR) += A (1, k) * B (k, NR): the rows left over below MR. */
static void gemm_row(float *restrict c, const float *restrict a,
                     const float *restrict b, size_t k, size_t ldb)
{
    float acc[TR_GEMM_NR];
    size_t j, p;

    for (j = 0; j < TR_GEMM_NR; j++)
        acc[j] = c[j];
    for (p = 0; p < k; p++) {
        const float av = a[p];
        const float *bp = b + p * ldb;
        for (j = 0; j < TR_GEMM_NR; j++)
            acc[j] += av * bp[j];
    }
    for (j = 0; j < TR_GEMM_NR; j++)
        c[j] = acc[j];
}

void tr_gemm(float *c, const float *a, const float *b, size_t m, size_t n,
             size_t k, size_t lda, size_t ldb, size_t ldc)
{
    const size_t nb = n - n % TR_GEMM_NR, mb = m - m % TR_GEMM_MR;
    size_t i, j;

    /* Column panels outermost: B (k, NR) stays in L1 while every row block
     * of A streams past it. */
    for (j = 0; j < nb; j += TR_GEMM_NR) {
        for (i = 0; i < mb; i += TR_GEMM_MR)
            gemm_tile(c + i * ldc + j, a + i * lda, b + j, k, lda, ldb, ldc);
        for (; i < m; i++)
            gemm_row(c + i * ldc + j, a + i * lda, b + j, k, ldb);
    }
    if (nb < n)
        tr_gemm_ref(c + nb, a, b + nb, m, n - nb, k, lda, ldb, ldc);
}
