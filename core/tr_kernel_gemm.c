/* tinyring: single-precision GEMM, C += A * B, row-major, for the conv
 * kernels.
 *
 * tr_gemm_ref is the plain triple loop, and the definition of the result:
 * every fast path performs, per element of C, the same float operations in
 * the same order (c = c + a[i][p] * b[p][j] for p ascending, one rounding
 * per multiply and per add), so its bits equal the reference's on every
 * target. Only the tiling over i and j differs.
 *
 * tr_gemm register-tiles C: a block of MR rows x NR columns lives in
 * accumulators for the whole K loop, each step adding one A value per row
 * times one contiguous NR-wide row of B. One microkernel family per target,
 * chosen by the single #if below:
 *   - vector registers (AVX-512, AVX, SSE, NEON): GCC's generic vector
 *     extension, 8 rows x 2 vectors;
 *   - a scalar FPU with 32 single registers (Cortex-M4F, RISC-V F): 6 rows
 *     x 4 columns in 24 named scalar accumulators;
 *   - Helium (M-profile vector extension with floats, Cortex-M55): 6 rows x
 *     one 4-lane vector in 6 of the 8 Q registers. MVE computes with the
 *     standard FPSCR value, which flushes subnormal inputs and results to
 *     zero; a tile whose operations raised the input-denormal or underflow
 *     flag is computed again by the scalar tile (IEEE), so the bits stay
 *     those of every other target.
 * Edges take smaller tiles; what is left goes through the reference loop.
 * tr_gemm_set is the same with C overwritten (C = A * B): the accumulators
 * start at +0, so C need not be cleared first.
 *
 * tr_gemm_at and tr_gemm_at_set are the same GEMM with A stored transposed
 * (K, M), for the lean plan's convolution input gradient (w^T dy with w as
 * it is): c[i][j] = c[i][j] + a[0][i]*b[0][j] + ... + a[k-1][i]*b[k-1][j].
 * Every tile takes the A layout as a compile-time parameter: row-major A is
 * walked by one pointer per row, transposed A by one pointer per k step
 * whose row values are consecutive.
 */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_layer_kernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define TR_GEMM_MVE 1      /* Helium tiles; the scalar tiles as their fallback */
#include <arm_mve.h>
#elif TR_HOST_VECTORS
#define TR_GEMM_VEC 1      /* generic vector extension tiles */
#elif TR_VFP_ASM
#define TR_GEMM_SCALAR 1   /* scalar FPU tiles, 4 to 6 rows in VFP assembly */
#else
#define TR_GEMM_SCALAR 1   /* scalar FPU tiles */
#endif

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

void tr_gemm_at_ref(float *c, const float *a, const float *b, size_t m, size_t n,
                    size_t k, size_t lda, size_t ldb, size_t ldc)
{
    size_t i, j, p;

    for (p = 0; p < k; p++)
        for (i = 0; i < m; i++) {
            const float av = a[p * lda + i];
            for (j = 0; j < n; j++)
                c[i * ldc + j] += av * b[p * ldb + j];
        }
}

/* where row r of a grid operand starts, from its base */
static size_t grid_off(const struct tr_gemm_grid *g, size_t r)
{
    const size_t q = r / g->n2;
    return (q / g->n1) * g->s0 + (q % g->n1) * g->s1 + (r % g->n2) * g->s2;
}

void tr_gemm_at_grid_ref(float *c, const float *a, const float *b,
                        const struct tr_gemm_grid *g, size_t m, size_t n, size_t k,
                        size_t lda, size_t ldc)
{
    size_t i, j, p;

    for (i = 0; i < m; i++)
        for (p = 0; p < k; p++) {
            const float av = a[p * lda + i], *bp = b + grid_off(g, p);
            for (j = 0; j < n; j++)
                c[i * ldc + j] += av * bp[j];
        }
}

void tr_gemm_grid_a_ref(float *c, const float *a, const struct tr_gemm_grid *g,
                        const float *b, size_t m, size_t n, size_t k, size_t ldb, size_t ldc)
{
    size_t i, j, p;

    for (i = 0; i < m; i++) {
        const float *ai = a + grid_off(g, i);
        for (p = 0; p < k; p++) {
            const float av = ai[p];
            for (j = 0; j < n; j++)
                c[i * ldc + j] += av * b[p * ldb + j];
        }
    }
}

/* edges: the reference loop (of A's layout at), after zeroing C when it is
 * overwritten */
static void gemm_tail(float *c, const float *a, const float *b, size_t m, size_t n,
                      size_t k, size_t lda, size_t ldb, size_t ldc, int acc, int at)
{
    size_t i, j;

    if (!acc)
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++)
                c[i * ldc + j] = 0.0f;
    if (at)
        tr_gemm_at_ref(c, a, b, m, n, k, lda, ldb, ldc);
    else
        tr_gemm_ref(c, a, b, m, n, k, lda, ldb, ldc);
}

/* where row i of a tile starts in A: row-major A (M, K), or A^T (K, M) */
#define A_ROW(a, i, lda, at) ((at) ? (a) + (i) : (a) + (i) * (lda))

#if defined(TR_GEMM_VEC)
#include "tr_gemm_vec.h"
#else
#include "tr_gemm_scalar.h"
#endif

void tr_gemm(float *c, const float *a, const float *b, size_t m, size_t n,
             size_t k, size_t lda, size_t ldb, size_t ldc)
{
    gemm(c, a, b, m, n, k, lda, ldb, ldc, 1);
}

void tr_gemm_set(float *c, const float *a, const float *b, size_t m, size_t n,
                 size_t k, size_t lda, size_t ldb, size_t ldc)
{
    gemm(c, a, b, m, n, k, lda, ldb, ldc, 0);
}

void tr_gemm_at(float *c, const float *a, const float *b, size_t m, size_t n,
                size_t k, size_t lda, size_t ldb, size_t ldc)
{
    gemm_at(c, a, b, m, n, k, lda, ldb, ldc, 1);
}

void tr_gemm_at_set(float *c, const float *a, const float *b, size_t m, size_t n,
                    size_t k, size_t lda, size_t ldb, size_t ldc)
{
    gemm_at(c, a, b, m, n, k, lda, ldb, ldc, 0);
}
