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
 */
#include "tr_layer_kernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define TR_GEMM_MVE 1      /* Helium tiles; the scalar tiles as their fallback */
#include <arm_mve.h>
#elif defined(__GNUC__) && (defined(__AVX512F__) || defined(__AVX__) || \
                            defined(__ARM_NEON) || defined(__SSE2__))
#define TR_GEMM_VEC 1      /* generic vector extension tiles */
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

/* edges: the reference loop, after zeroing C when it is overwritten */
static void gemm_tail(float *c, const float *a, const float *b, size_t m, size_t n,
                      size_t k, size_t lda, size_t ldb, size_t ldc, int acc)
{
    size_t i, j;

    if (!acc)
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++)
                c[i * ldc + j] = 0.0f;
    tr_gemm_ref(c, a, b, m, n, k, lda, ldb, ldc);
}

#if defined(TR_GEMM_VEC)
/* ---- vector-extension tile ------------------------------------------- */
#if defined(__AVX512F__)
#define TR_VW 16
#elif defined(__AVX__)
#define TR_VW 8
#else
#define TR_VW 4
#endif
typedef float tr_vf __attribute__((vector_size(TR_VW * 4)));
#define TR_MR 8

static tr_vf vload(const float *p)
{
    tr_vf v;
    __builtin_memcpy(&v, p, sizeof v);   /* unaligned load */
    return v;
}

static void vstore(float *p, tr_vf v)
{
    __builtin_memcpy(p, &v, sizeof v);
}

/* the accumulator's start: C's value (C += A*B) or zero (C = A*B) */
static tr_vf vinit(const float *p, int acc)
{
    tr_vf z = {0};
    return acc ? vload(p) : z;
}

/* C (MR, 2 vectors) += A (MR, k) * B (k, 2 vectors) */
static void tile_mr_2v(float *restrict c, const float *restrict a, const float *restrict b,
                       size_t k, size_t lda, size_t ldb, size_t ldc, int acc)
{
    tr_vf c00 = vinit(c + 0 * ldc, acc), c01 = vinit(c + 0 * ldc + TR_VW, acc);
    tr_vf c10 = vinit(c + 1 * ldc, acc), c11 = vinit(c + 1 * ldc + TR_VW, acc);
    tr_vf c20 = vinit(c + 2 * ldc, acc), c21 = vinit(c + 2 * ldc + TR_VW, acc);
    tr_vf c30 = vinit(c + 3 * ldc, acc), c31 = vinit(c + 3 * ldc + TR_VW, acc);
    tr_vf c40 = vinit(c + 4 * ldc, acc), c41 = vinit(c + 4 * ldc + TR_VW, acc);
    tr_vf c50 = vinit(c + 5 * ldc, acc), c51 = vinit(c + 5 * ldc + TR_VW, acc);
    tr_vf c60 = vinit(c + 6 * ldc, acc), c61 = vinit(c + 6 * ldc + TR_VW, acc);
    tr_vf c70 = vinit(c + 7 * ldc, acc), c71 = vinit(c + 7 * ldc + TR_VW, acc);
    size_t p;

    for (p = 0; p < k; p++) {
        const tr_vf b0 = vload(b + p * ldb), b1 = vload(b + p * ldb + TR_VW);
        const float *ap = a + p;
        float av;
        av = ap[0 * lda]; c00 += av * b0; c01 += av * b1;
        av = ap[1 * lda]; c10 += av * b0; c11 += av * b1;
        av = ap[2 * lda]; c20 += av * b0; c21 += av * b1;
        av = ap[3 * lda]; c30 += av * b0; c31 += av * b1;
        av = ap[4 * lda]; c40 += av * b0; c41 += av * b1;
        av = ap[5 * lda]; c50 += av * b0; c51 += av * b1;
        av = ap[6 * lda]; c60 += av * b0; c61 += av * b1;
        av = ap[7 * lda]; c70 += av * b0; c71 += av * b1;
    }
    vstore(c + 0 * ldc, c00); vstore(c + 0 * ldc + TR_VW, c01);
    vstore(c + 1 * ldc, c10); vstore(c + 1 * ldc + TR_VW, c11);
    vstore(c + 2 * ldc, c20); vstore(c + 2 * ldc + TR_VW, c21);
    vstore(c + 3 * ldc, c30); vstore(c + 3 * ldc + TR_VW, c31);
    vstore(c + 4 * ldc, c40); vstore(c + 4 * ldc + TR_VW, c41);
    vstore(c + 5 * ldc, c50); vstore(c + 5 * ldc + TR_VW, c51);
    vstore(c + 6 * ldc, c60); vstore(c + 6 * ldc + TR_VW, c61);
    vstore(c + 7 * ldc, c70); vstore(c + 7 * ldc + TR_VW, c71);
}

/* C (MR, 1 vector) += A (MR, k) * B (k, 1 vector) */
static void tile_mr_1v(float *restrict c, const float *restrict a, const float *restrict b,
                       size_t k, size_t lda, size_t ldb, size_t ldc, int acc)
{
    tr_vf c0 = vinit(c + 0 * ldc, acc), c1 = vinit(c + 1 * ldc, acc),
          c2 = vinit(c + 2 * ldc, acc), c3 = vinit(c + 3 * ldc, acc),
          c4 = vinit(c + 4 * ldc, acc), c5 = vinit(c + 5 * ldc, acc),
          c6 = vinit(c + 6 * ldc, acc), c7 = vinit(c + 7 * ldc, acc);
    size_t p;

    for (p = 0; p < k; p++) {
        const tr_vf b0 = vload(b + p * ldb);
        const float *ap = a + p;
        c0 += ap[0 * lda] * b0; c1 += ap[1 * lda] * b0;
        c2 += ap[2 * lda] * b0; c3 += ap[3 * lda] * b0;
        c4 += ap[4 * lda] * b0; c5 += ap[5 * lda] * b0;
        c6 += ap[6 * lda] * b0; c7 += ap[7 * lda] * b0;
    }
    vstore(c + 0 * ldc, c0); vstore(c + 1 * ldc, c1); vstore(c + 2 * ldc, c2);
    vstore(c + 3 * ldc, c3); vstore(c + 4 * ldc, c4); vstore(c + 5 * ldc, c5);
    vstore(c + 6 * ldc, c6); vstore(c + 7 * ldc, c7);
}

#if TR_VW > 4
/* C (MR, 4) += A (MR, k) * B (k, 4): column tails narrower than a vector */
typedef float tr_vf4 __attribute__((vector_size(16)));

static void tile_mr_q(float *restrict c, const float *restrict a, const float *restrict b,
                      size_t k, size_t lda, size_t ldb, size_t ldc, int accumulate)
{
    tr_vf4 acc[TR_MR], bv, z = {0};
    size_t i, p;

    for (i = 0; i < TR_MR; i++) {
        acc[i] = z;
        if (accumulate)
            __builtin_memcpy(&acc[i], c + i * ldc, sizeof bv);
    }
    for (p = 0; p < k; p++) {
        __builtin_memcpy(&bv, b + p * ldb, sizeof bv);
        for (i = 0; i < TR_MR; i++)
            acc[i] += a[i * lda + p] * bv;
    }
    for (i = 0; i < TR_MR; i++)
        __builtin_memcpy(c + i * ldc, &acc[i], sizeof bv);
}
#endif

/* C (1, nv vectors) += A (1, k) * B (k, nv vectors), nv = 1 or 2 */
static void tile_row(float *restrict c, const float *restrict a, const float *restrict b,
                     size_t k, size_t ldb, int nv, int acc)
{
    tr_vf c0 = vinit(c, acc), c1 = nv > 1 ? vinit(c + TR_VW, acc) : c0;
    size_t p;

    if (nv > 1) {
        for (p = 0; p < k; p++) {
            c0 += a[p] * vload(b + p * ldb);
            c1 += a[p] * vload(b + p * ldb + TR_VW);
        }
        vstore(c + TR_VW, c1);
    } else {
        for (p = 0; p < k; p++)
            c0 += a[p] * vload(b + p * ldb);
    }
    vstore(c, c0);
}

static void gemm(float *c, const float *a, const float *b, size_t m, size_t n,
                 size_t k, size_t lda, size_t ldb, size_t ldc, int acc)
{
    const size_t mb = m - m % TR_MR;
    size_t i, j = 0;

    /* Column panels outermost: B (k, NR) stays in L1 while every row block
     * of A streams past it. */
    for (; j + 2 * TR_VW <= n; j += 2 * TR_VW) {
        for (i = 0; i < mb; i += TR_MR)
            tile_mr_2v(c + i * ldc + j, a + i * lda, b + j, k, lda, ldb, ldc, acc);
        for (; i < m; i++)
            tile_row(c + i * ldc + j, a + i * lda, b + j, k, ldb, 2, acc);
    }
    for (; j + TR_VW <= n; j += TR_VW) {
        for (i = 0; i < mb; i += TR_MR)
            tile_mr_1v(c + i * ldc + j, a + i * lda, b + j, k, lda, ldb, ldc, acc);
        for (; i < m; i++)
            tile_row(c + i * ldc + j, a + i * lda, b + j, k, ldb, 1, acc);
    }
#if TR_VW > 4
    for (; j + 4 <= n; j += 4) {
        for (i = 0; i < mb; i += TR_MR)
            tile_mr_q(c + i * ldc + j, a + i * lda, b + j, k, lda, ldb, ldc, acc);
        if (mb < m)
            gemm_tail(c + mb * ldc + j, a + mb * lda, b + j, m - mb, 4, k, lda, ldb, ldc, acc);
    }
#endif
    if (j < n)
        gemm_tail(c + j, a, b + j, m, n - j, k, lda, ldb, ldc, acc);
}

#else
/* ---- scalar FPU tile: Cortex-M4F (FPv4-SP), RISC-V F, 32 float registers
 *
 * A tile of up to 6 rows x 4 columns of C lives in 24 scalar accumulators;
 * with the 4 values of a B row, one A value and one product that is 30 of
 * the 32 float registers. Each k step loads the B row (4 loads and one
 * pointer step), one value of each of the 6 A rows (on Arm a post-increment
 * load each), and does 24 multiplies and 24 adds: on the Cortex-M4F 61
 * instructions with the loop's compare and branch, 2.54 per multiply-add.
 * RISC-V has no post-increment, so its loop walks 4 k steps per turn (the A
 * loads use offsets and each row pointer steps once per turn).
 *
 * GCC's first scheduling pass hoists loads and multiplies so far ahead that
 * 30 live values no longer fit and accumulators spill to the stack in the
 * loop (65 instructions per k step on the M4F, 103 on RV32; on the M55 the
 * Helium tile spills a Q register), so the tiles are compiled without it. */
#define TR_MR 6
#define TR_NR 4
#if defined(__riscv)
#define TR_KU 4   /* k steps per loop turn */
#else
#define TR_KU 1
#endif
#if defined(__GNUC__) && !defined(__clang__)
#define TR_TILE static inline __attribute__((always_inline, optimize("no-schedule-insns")))
#define TR_TILE_FN static __attribute__((optimize("no-schedule-insns")))
#else
#define TR_TILE static inline
#define TR_TILE_FN static
#endif

/* row i of the tile: accumulators ci0..ci3 start at C's values or +0 */
#define ACC_INIT(i)                                                           \
    float c##i##0 = acc ? c[i * ldc + 0] : 0.0f, c##i##1 = acc ? c[i * ldc + 1] : 0.0f, \
          c##i##2 = acc ? c[i * ldc + 2] : 0.0f, c##i##3 = acc ? c[i * ldc + 3] : 0.0f;
/* one k step of row i: its A value times the B row b0..b3 */
#define ROW_STEP(i)                                                           \
    if (mr > i) {                                                             \
        const float av = *a##i++;                                             \
        c##i##0 += av * b0; c##i##1 += av * b1;                               \
        c##i##2 += av * b2; c##i##3 += av * b3;                               \
    }
#define ACC_STORE(i)                                                          \
    if (mr > i) {                                                             \
        c[i * ldc + 0] = c##i##0; c[i * ldc + 1] = c##i##1;                   \
        c[i * ldc + 2] = c##i##2; c[i * ldc + 3] = c##i##3;                   \
    }

/* one k step of the whole tile: B row p, then each row's A value */
#define K_STEP()                                                              \
    do {                                                                      \
        const float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];              \
        b += ldb;                                                             \
        ROW_STEP(0) ROW_STEP(1) ROW_STEP(2) ROW_STEP(3) ROW_STEP(4) ROW_STEP(5) \
    } while (0)

/* the A row pointers of a tile of mr rows (the unused ones repeat the last) */
#define A_ROWS()                                                              \
    const float *a0 = a, *a1 = mr > 1 ? a0 + lda : a0, *a2 = mr > 2 ? a1 + lda : a1; \
    const float *a3 = mr > 3 ? a2 + lda : a2, *a4 = mr > 4 ? a3 + lda : a3;   \
    const float *a5 = mr > 5 ? a4 + lda : a4

/* C (mr, 4) += A (mr, k) * B (k, 4), mr <= 6 a compile-time constant at
 * every call, so the unused rows vanish */
TR_TILE void tile(float *restrict c, const float *restrict a, const float *restrict b,
                  size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr)
{
    A_ROWS();
    size_t p, u;
    ACC_INIT(0) ACC_INIT(1) ACC_INIT(2) ACC_INIT(3) ACC_INIT(4) ACC_INIT(5)

    for (p = k / TR_KU; p > 0; p--) {
#if defined(__GNUC__)
#pragma GCC unroll 4
#endif
        for (u = 0; u < TR_KU; u++)
            K_STEP();
    }
    for (p = k % TR_KU; p > 0; p--)
        K_STEP();
    ACC_STORE(0) ACC_STORE(1) ACC_STORE(2) ACC_STORE(3) ACC_STORE(4) ACC_STORE(5)
}

#if defined(TR_GEMM_MVE)
/* ---- Helium tile: C (mr, 4) in one Q register per row -----------------
 *
 * Each k step loads the B row as one vector and, per row, multiplies it by
 * the row's A value (a general-purpose register, post-increment load) and
 * adds it to the row's accumulator: 1 + 6 + 12 vector and load instructions,
 * the B pointer step and the loop's LE, 21 instructions per 24
 * multiply-adds. 6 accumulators, B and the product fill the 8 Q registers. */
#define FPSCR_IDC (1u << 7)   /* an input was subnormal (flushed) */
#define FPSCR_UFC (1u << 3)   /* a result was tiny (flushed) */
#define VACC_INIT(i) \
    float32x4_t v##i = acc && mr > i ? vld1q_f32(c + i * ldc) : vdupq_n_f32(0.0f);
#define VROW_STEP(i) \
    if (mr > i) v##i = vaddq_f32(v##i, vmulq_n_f32(bv, *a##i++));
#define VACC_STORE(i) \
    if (mr > i) vst1q_f32(c + i * ldc, v##i);

/* the same tile with MVE; returns 1, C untouched, when any operation met a
 * subnormal (IDC or UFC raised), else 0. FPSCR's IDC and UFC are left as
 * they were found. */
TR_TILE int tile_mve(float *restrict c, const float *restrict a, const float *restrict b,
                     size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr)
{
    const unsigned fpscr = __builtin_arm_get_fpscr(), mask = FPSCR_IDC | FPSCR_UFC;
    unsigned flushed;
    A_ROWS();
    size_t p;
    VACC_INIT(0) VACC_INIT(1) VACC_INIT(2) VACC_INIT(3) VACC_INIT(4) VACC_INIT(5)

    __builtin_arm_set_fpscr(fpscr & ~mask);
    for (p = 0; p < k; p++) {
        const float32x4_t bv = vld1q_f32(b);
        b += ldb;
        VROW_STEP(0) VROW_STEP(1) VROW_STEP(2) VROW_STEP(3) VROW_STEP(4) VROW_STEP(5)
    }
    flushed = __builtin_arm_get_fpscr();
    __builtin_arm_set_fpscr((flushed & ~mask) | (fpscr & mask));
    if (flushed & mask)
        return 1;
    VACC_STORE(0) VACC_STORE(1) VACC_STORE(2) VACC_STORE(3) VACC_STORE(4) VACC_STORE(5)
    return 0;
}

/* a tile of mr rows: Helium, or the scalar FPU where Helium flushed */
TR_TILE void tile_rows(float *restrict c, const float *restrict a, const float *restrict b,
                       size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr)
{
    if (tile_mve(c, a, b, k, lda, ldb, ldc, acc, mr))
        tile(c, a, b, k, lda, ldb, ldc, acc, mr);
}
#else
/* a tile of mr rows: the scalar FPU */
TR_TILE void tile_rows(float *restrict c, const float *restrict a, const float *restrict b,
                       size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr)
{
    tile(c, a, b, k, lda, ldb, ldc, acc, mr);
}
#endif

TR_TILE_FN void tile6(float *c, const float *a, const float *b, size_t k,
                      size_t lda, size_t ldb, size_t ldc, int acc)
{
    tile_rows(c, a, b, k, lda, ldb, ldc, acc, 6);
}

/* the rows below a multiple of 6: 4, 2 and 1 row tiles */
TR_TILE_FN void tile_rest(float *c, const float *a, const float *b, size_t m, size_t k,
                          size_t lda, size_t ldb, size_t ldc, int acc)
{
    if (m >= 4) {
        tile_rows(c, a, b, k, lda, ldb, ldc, acc, 4);
        c += 4 * ldc;
        a += 4 * lda;
        m -= 4;
    }
    if (m >= 2) {
        tile_rows(c, a, b, k, lda, ldb, ldc, acc, 2);
        c += 2 * ldc;
        a += 2 * lda;
        m -= 2;
    }
    if (m)
        tile_rows(c, a, b, k, lda, ldb, ldc, acc, 1);
}

static void gemm(float *c, const float *a, const float *b, size_t m, size_t n,
                 size_t k, size_t lda, size_t ldb, size_t ldc, int acc)
{
    const size_t nb = n - n % TR_NR, mb = m - m % TR_MR;
    size_t i, j;

    /* column strips outermost: the strip of B (k, 4) is reread by every
     * row block while it is still in the cache, where there is one */
    for (j = 0; j < nb; j += TR_NR) {
        for (i = 0; i < mb; i += TR_MR)
            tile6(c + i * ldc + j, a + i * lda, b + j, k, lda, ldb, ldc, acc);
        if (mb < m)
            tile_rest(c + mb * ldc + j, a + mb * lda, b + j, m - mb, k, lda, ldb, ldc, acc);
    }
    if (nb < n)
        gemm_tail(c + nb, a, b + nb, m, n - nb, k, lda, ldb, ldc, acc);
}
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
