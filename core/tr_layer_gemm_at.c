/* tinyring: C += A^T * B, the GEMM form whose A is stored transposed, for
 * the lean plan's convolution input gradient dcol (IC*K*K, q) = w^T dy: the
 * weights w (OC, IC*K*K) are read as they are, no transposed copy.
 *
 * A is (K, M) row-major with row stride lda, B (K, N; ldb), C (M, N; ldc):
 *   c[i][j] = c[i][j] + a[0][i]*b[0][j] + a[1][i]*b[1][j] + ... + a[k-1][i]*b[k-1][j]
 * one rounding per multiply and per add, p ascending: tr_gemm's contract
 * with A's indices swapped. tr_gemm_at_set starts every element at +0.
 *
 * tr_gemm_at_ref is the plain loop and the definition. The fast form tiles
 * C in 6 rows of accumulators that live in registers over the whole k loop
 * (each k step reads 6 consecutive A values and one B row piece), chosen by
 * the one #if below: GCC's generic vectors of 8 floats where the target has
 * vector registers, 4 named scalars per row on a scalar FPU (Cortex-M4F,
 * RV32, the M55's scalar FPU). Columns left over go through the reference
 * loop. Per-target microkernels may replace the tiles; the bits are fixed. */
#include "tr_layer_kernels.h"

/* The tiles are inlined at every call, where mr is a constant: unused rows
 * then vanish instead of being tested in the k loop. GCC's first scheduling
 * pass would hoist loads so far that 24 accumulators no longer fit in the
 * M4F's 32 single registers (two spill to the stack inside the k loop), so
 * the tiles and the strip that inlines them are compiled without it, as
 * tr_kernel_gemm.c's. */
#if defined(__GNUC__) && !defined(__clang__)
#define TR_AT_TILE static inline __attribute__((always_inline, optimize("no-schedule-insns")))
#define TR_AT_STRIP static __attribute__((optimize("no-schedule-insns")))
#elif defined(__GNUC__)
#define TR_AT_TILE static inline __attribute__((always_inline))
#define TR_AT_STRIP static
#else
#define TR_AT_TILE static inline
#define TR_AT_STRIP static
#endif

void tr_gemm_at_ref(float *c, const float *a, const float *b, size_t m, size_t n, size_t k,
                    size_t lda, size_t ldb, size_t ldc)
{
    size_t i, j, p;

    for (p = 0; p < k; p++)
        for (i = 0; i < m; i++) {
            const float av = a[p * lda + i];
            for (j = 0; j < n; j++)
                c[i * ldc + j] += av * b[p * ldb + j];
        }
}

/* the columns left of a tile: the reference loop, after zeroing C for set */
static void at_tail(float *c, const float *a, const float *b, size_t m, size_t n, size_t k,
                    size_t lda, size_t ldb, size_t ldc, int acc)
{
    size_t i, j;

    if (!acc)
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++)
                c[i * ldc + j] = 0.0f;
    tr_gemm_at_ref(c, a, b, m, n, k, lda, ldb, ldc);
}

#if defined(__GNUC__) && (defined(__AVX__) || defined(__SSE2__) || defined(__ARM_NEON))
#define TR_AT_NR 8
typedef float tr_at_v __attribute__((vector_size(32)));
/* an unaligned load (a macro: a function returning a vector wider than the
 * target's registers would change the ABI on SSE-only builds) */
#define AT_LOAD(v, p) __builtin_memcpy(&(v), (p), sizeof(tr_at_v))

#define AT_INIT(i) \
    tr_at_v c##i = {0}; \
    if (mr > i && acc) AT_LOAD(c##i, c + i * ldc);
#define AT_STEP(i) \
    if (mr > i) c##i += ap[i] * bv;
#define AT_STORE(i) \
    if (mr > i) __builtin_memcpy(c + i * ldc, &c##i, sizeof c##i);

/* C (mr, 8) (+)= A^T (mr of A's columns, k) * B (k, 8); mr <= 6 a constant */
TR_AT_TILE void at_tile(float *restrict c, const float *restrict a, const float *restrict b,
                           size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr)
{
    size_t p;
    AT_INIT(0) AT_INIT(1) AT_INIT(2) AT_INIT(3) AT_INIT(4) AT_INIT(5)

    for (p = 0; p < k; p++) {
        const float *ap = a + p * lda;
        tr_at_v bv;
        AT_LOAD(bv, b + p * ldb);
        AT_STEP(0) AT_STEP(1) AT_STEP(2) AT_STEP(3) AT_STEP(4) AT_STEP(5)
    }
    AT_STORE(0) AT_STORE(1) AT_STORE(2) AT_STORE(3) AT_STORE(4) AT_STORE(5)
}
#else
#define TR_AT_NR 4

#define AT_INIT(i) \
    float c##i##0 = 0.0f, c##i##1 = 0.0f, c##i##2 = 0.0f, c##i##3 = 0.0f; \
    if (mr > i && acc) { \
        c##i##0 = c[i * ldc]; c##i##1 = c[i * ldc + 1]; \
        c##i##2 = c[i * ldc + 2]; c##i##3 = c[i * ldc + 3]; \
    }
#define AT_STEP(i) \
    if (mr > i) { \
        const float av = ap[i]; \
        c##i##0 += av * b0; c##i##1 += av * b1; c##i##2 += av * b2; c##i##3 += av * b3; \
    }
#define AT_STORE(i) \
    if (mr > i) { \
        c[i * ldc] = c##i##0; c[i * ldc + 1] = c##i##1; \
        c[i * ldc + 2] = c##i##2; c[i * ldc + 3] = c##i##3; \
    }

/* C (mr, 4) (+)= A^T (mr of A's columns, k) * B (k, 4) in 24 named
 * accumulators; mr <= 6 a constant at every call, so unused rows vanish */
TR_AT_TILE void at_tile(float *restrict c, const float *restrict a, const float *restrict b,
                           size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr)
{
    size_t p;
    AT_INIT(0) AT_INIT(1) AT_INIT(2) AT_INIT(3) AT_INIT(4) AT_INIT(5)

    for (p = 0; p < k; p++) {
        const float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
        const float *ap = a + p * lda;
        b += ldb;
        AT_STEP(0) AT_STEP(1) AT_STEP(2) AT_STEP(3) AT_STEP(4) AT_STEP(5)
    }
    AT_STORE(0) AT_STORE(1) AT_STORE(2) AT_STORE(3) AT_STORE(4) AT_STORE(5)
}
#endif

/* one column strip of TR_AT_NR: row tiles of 6, then 4, 2, 1 */
TR_AT_STRIP void at_strip(float *c, const float *a, const float *b, size_t m, size_t k, size_t lda,
                     size_t ldb, size_t ldc, int acc)
{
    size_t i = 0;

    for (; i + 6 <= m; i += 6)
        at_tile(c + i * ldc, a + i, b, k, lda, ldb, ldc, acc, 6);
    if (i + 4 <= m) {
        at_tile(c + i * ldc, a + i, b, k, lda, ldb, ldc, acc, 4);
        i += 4;
    }
    if (i + 2 <= m) {
        at_tile(c + i * ldc, a + i, b, k, lda, ldb, ldc, acc, 2);
        i += 2;
    }
    if (i < m)
        at_tile(c + i * ldc, a + i, b, k, lda, ldb, ldc, acc, 1);
}

static void gemm_at(float *c, const float *a, const float *b, size_t m, size_t n, size_t k,
                    size_t lda, size_t ldb, size_t ldc, int acc)
{
    const size_t nb = n - n % TR_AT_NR;
    size_t j;

    for (j = 0; j < nb; j += TR_AT_NR)
        at_strip(c + j, a, b + j, m, k, lda, ldb, ldc, acc);
    if (nb < n)
        at_tail(c + nb, a, b + nb, m, n - nb, k, lda, ldb, ldc, acc);
}

void tr_gemm_at(float *c, const float *a, const float *b, size_t m, size_t n, size_t k,
                size_t lda, size_t ldb, size_t ldc)
{
    gemm_at(c, a, b, m, n, k, lda, ldb, ldc, 1);
}

void tr_gemm_at_set(float *c, const float *a, const float *b, size_t m, size_t n, size_t k,
                    size_t lda, size_t ldb, size_t ldc)
{
    gemm_at(c, a, b, m, n, k, lda, ldb, ldc, 0);
}
