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
/* ---- vector-extension tile ---------------------------------------------
 *
 * A tile of up to TR_VMR rows x nv vectors of C lives in named vector
 * accumulators; each k step loads nv vectors of the B row and, per row, one
 * A value (a post-increment walk along the row: one pointer register per
 * row, no index arithmetic) broadcast against them. With AVX-512 the 8 x 2
 * tile is 16 of the 32 registers, and a k step is 2 loads, 8 broadcasts, 16
 * multiplies and 16 adds: the multiplies and adds fill both vector ports.
 * tr_gemm_at_grid (the convolutions' forward, B's rows unaligned) takes
 * 8 x 3 there: 24 registers, 11 loads for 48 multiplies and adds instead
 * of 10 for 32. With 16 registers (AVX, SSE) the tile is 6 x 2; AVX-512
 * with 256-bit vectors (TR_VEC256) keeps the 32 registers' 8 x 2 and 8 x 3. Columns
 * below a vector take a 4-lane tile, below 4 the reference loop. Row
 * blocks are as even as the row count allows (25 rows: 6, 6, 6, 7), so no
 * block is left with too few independent accumulators to hide the add
 * latency. */
#if TR_VL == 16
#define TR_VW 16
#define TR_VMR 8
#elif TR_VL == 8 && defined(__AVX512F__)   /* 256-bit tiles, 32 registers (TR_VEC256) */
#define TR_VW 8
#define TR_VMR 8
#elif TR_VL == 8
#define TR_VW 8
#define TR_VMR 6
#else
#define TR_VW 4
#define TR_VMR 6
#endif
typedef float tr_vf __attribute__((vector_size(TR_VW * 4)));
typedef float tr_vf4 __attribute__((vector_size(16)));
#define TR_TILE static inline __attribute__((always_inline))

/* the A row pointers of a tile of mr rows (the unused ones repeat the
 * last), for row-major A; ap walks transposed A one k step (lda) at a time */
#define VA_ROWS()                                                             \
    const float *a0 = a, *a1 = a0 + (mr > 1 ? lda : 0), *a2 = a1 + (mr > 2 ? lda : 0); \
    const float *a3 = a2 + (mr > 3 ? lda : 0), *a4 = a3 + (mr > 4 ? lda : 0);   \
    const float *a5 = a4 + (mr > 5 ? lda : 0), *a6 = a5 + (mr > 6 ? lda : 0);   \
    const float *a7 = a6 + (mr > 7 ? lda : 0), *ap = a
/* row i's accumulators xi0, xi1, xi2 (nv of them) start at C's values
 * (unaligned) or +0 */
#define VX_INIT(T, i)                                                         \
    T x##i##0 = {0}, x##i##1 = {0}, x##i##2 = {0};                            \
    if (mr > i && acc) {                                                      \
        __builtin_memcpy(&x##i##0, c + i * ldc, sizeof(T));                   \
        if (nv > 1)                                                           \
            __builtin_memcpy(&x##i##1, c + i * ldc + sizeof(T) / 4, sizeof(T)); \
        if (nv > 2)                                                           \
            __builtin_memcpy(&x##i##2, c + i * ldc + sizeof(T) / 2, sizeof(T)); \
    }
#define VX_STEP(i)                                                            \
    if (mr > i) {                                                             \
        const float av = at ? ap[i] : *a##i++;                                \
        x##i##0 += av * b0;                                                   \
        if (nv > 1)                                                           \
            x##i##1 += av * b1;                                               \
        if (nv > 2)                                                           \
            x##i##2 += av * b2;                                               \
    }
#define VX_STORE(T, i)                                                        \
    if (mr > i) {                                                             \
        __builtin_memcpy(c + i * ldc, &x##i##0, sizeof(T));                   \
        if (nv > 1)                                                           \
            __builtin_memcpy(c + i * ldc + sizeof(T) / 4, &x##i##1, sizeof(T)); \
        if (nv > 2)                                                           \
            __builtin_memcpy(c + i * ldc + sizeof(T) / 2, &x##i##2, sizeof(T)); \
    }
/* C (mr, nv vectors of type T) += A (mr, k) * B (k, nv vectors); mr, nv
 * and the A layout at are compile-time constants at every call */
#define VTILE_BODY(T, AROWS)                                                  \
    AROWS();                                                                  \
    size_t p;                                                                 \
    VX_INIT(T, 0) VX_INIT(T, 1) VX_INIT(T, 2) VX_INIT(T, 3)                   \
    VX_INIT(T, 4) VX_INIT(T, 5) VX_INIT(T, 6) VX_INIT(T, 7)                   \
    for (p = 0; p < k; p++) {                                                 \
        T b0, b1, b2;                                                         \
        __builtin_memcpy(&b0, b, sizeof(T));                                  \
        b1 = b2 = b0;                                                         \
        if (nv > 1)                                                           \
            __builtin_memcpy(&b1, b + sizeof(T) / 4, sizeof(T));              \
        if (nv > 2)                                                           \
            __builtin_memcpy(&b2, b + sizeof(T) / 2, sizeof(T));              \
        b += ldb;                                                             \
        VX_STEP(0) VX_STEP(1) VX_STEP(2) VX_STEP(3)                           \
        VX_STEP(4) VX_STEP(5) VX_STEP(6) VX_STEP(7)                           \
        if (at)                                                               \
            ap += lda;                                                        \
    }                                                                         \
    VX_STORE(T, 0) VX_STORE(T, 1) VX_STORE(T, 2) VX_STORE(T, 3)               \
    VX_STORE(T, 4) VX_STORE(T, 5) VX_STORE(T, 6) VX_STORE(T, 7)

TR_TILE void vtile(float *restrict c, const float *restrict a, const float *restrict b,
                   size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                   const int nv, const int at)
{
    VTILE_BODY(tr_vf, VA_ROWS)
}

#if TR_VW > 4        /* 4-lane tiles of the last columns beside wider ones */
TR_TILE void qtile(float *restrict c, const float *restrict a, const float *restrict b,
                   size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                   const int nv, const int at)
{
    VTILE_BODY(tr_vf4, VA_ROWS)
}
#endif

/* one function per tile kind and A layout, specialised for each row count
 * 1..TR_VMR */
#define TILE_ROWS_FN(name, tile, nv, at)                                      \
    static void name(float *c, const float *a, const float *b, size_t mr, size_t k, \
                     size_t lda, size_t ldb, size_t ldc, int acc)             \
    {                                                                         \
        switch (mr) {                                                         \
        case 8: tile(c, a, b, k, lda, ldb, ldc, acc, 8, nv, at); break;       \
        case 7: tile(c, a, b, k, lda, ldb, ldc, acc, 7, nv, at); break;       \
        case 6: tile(c, a, b, k, lda, ldb, ldc, acc, 6, nv, at); break;       \
        case 5: tile(c, a, b, k, lda, ldb, ldc, acc, 5, nv, at); break;       \
        case 4: tile(c, a, b, k, lda, ldb, ldc, acc, 4, nv, at); break;       \
        case 3: tile(c, a, b, k, lda, ldb, ldc, acc, 3, nv, at); break;       \
        case 2: tile(c, a, b, k, lda, ldb, ldc, acc, 2, nv, at); break;       \
        default: tile(c, a, b, k, lda, ldb, ldc, acc, 1, nv, at); break;      \
        }                                                                     \
    }
TILE_ROWS_FN(tile_2v, vtile, 2, 0)
TILE_ROWS_FN(tile_1v, vtile, 1, 0)
TILE_ROWS_FN(tile_2v_at, vtile, 2, 1)
TILE_ROWS_FN(tile_1v_at, vtile, 1, 1)
#if TR_VW > 4
TILE_ROWS_FN(tile_q, qtile, 1, 0)
TILE_ROWS_FN(tile_q_at, qtile, 1, 1)
#endif

/* the next row block of the left rows: at most TR_VMR, as even as possible */
static size_t block_rows(size_t left)
{
    return left / ((left + TR_VMR - 1) / TR_VMR);
}

/* the driver for A's layout at: column panels outermost (B (k, panel) is
 * reread by every row block while it is in the cache), row blocks inside */
#define GEMM_FN(name, at, t2v, t1v, tq)                                       \
    static void name(float *c, const float *a, const float *b, size_t m, size_t n, \
                     size_t k, size_t lda, size_t ldb, size_t ldc, int acc)   \
    {                                                                         \
        size_t i, j = 0, r;                                                   \
        for (; j + 2 * TR_VW <= n; j += 2 * TR_VW)                            \
            for (i = 0; i < m; i += r) {                                      \
                r = block_rows(m - i);                                        \
                t2v(c + i * ldc + j, A_ROW(a, i, lda, at), b + j, r, k, lda, ldb, ldc, acc); \
            }                                                                 \
        for (; j + TR_VW <= n; j += TR_VW)                                    \
            for (i = 0; i < m; i += r) {                                      \
                r = block_rows(m - i);                                        \
                t1v(c + i * ldc + j, A_ROW(a, i, lda, at), b + j, r, k, lda, ldb, ldc, acc); \
            }                                                                 \
        for (; TR_VW > 4 && j + 4 <= n; j += 4)                               \
            for (i = 0; i < m; i += r) {                                      \
                r = block_rows(m - i);                                        \
                tq(c + i * ldc + j, A_ROW(a, i, lda, at), b + j, r, k, lda, ldb, ldc, acc); \
            }                                                                 \
        if (j < n)                                                            \
            gemm_tail(c + j, a, b + j, m, n - j, k, lda, ldb, ldc, acc, at);  \
    }
#if TR_VW > 4
GEMM_FN(gemm, 0, tile_2v, tile_1v, tile_q)
GEMM_FN(gemm_at, 1, tile_2v_at, tile_1v_at, tile_q_at)
#else
GEMM_FN(gemm, 0, tile_2v, tile_1v, tile_1v)
GEMM_FN(gemm_at, 1, tile_2v_at, tile_1v_at, tile_1v_at)
#endif


/* ---- grid operands (tr_gemm_grid_a, tr_gemm_grid_b) ------------------
 * The same tiles with the rows of A, or of B, at offsets from a table
 * (TR_GRID_CHUNK rows at a time, on the stack): a k step costs what
 * tr_gemm's does (nested loops over the grid, 5 steps each for a 5x5
 * kernel, ran 15% slower; the offsets' divisions at every tile's start 8%).
 * B's rows in chunks split the k sum: C is stored between the chunks, which
 * run in order, so the bits are the same. */
#define TR_GRID_CHUNK 256
#define TR_GRID_B_PIECE 128

/* off[0..cnt) = the grid offsets of rows r0, r0+1, ... */
static void grid_table(size_t *off, const struct tr_gemm_grid *g, size_t r0, size_t cnt)
{
    size_t q = r0 / g->n2, w = r0 % g->n2, v = q % g->n1, u = q / g->n1, i;

    for (i = 0; i < cnt; i++) {
        off[i] = u * g->s0 + v * g->s1 + w * g->s2;
        if (++w == g->n2) {
            w = 0;
            if (++v == g->n1) {
                v = 0;
                u++;
            }
        }
    }
}

#define VA_TABLE()                                                            \
    const float *a0 = a + off[0], *a1 = a + off[mr > 1 ? 1 : 0];              \
    const float *a2 = a + off[mr > 2 ? 2 : 0], *a3 = a + off[mr > 3 ? 3 : 0]; \
    const float *a4 = a + off[mr > 4 ? 4 : 0], *a5 = a + off[mr > 5 ? 5 : 0]; \
    const float *a6 = a + off[mr > 6 ? 6 : 0], *a7 = a + off[mr > 7 ? 7 : 0], *ap = a

TR_TILE void vtile_ga(float *restrict c, const float *restrict a, const size_t *off,
                      const float *restrict b, size_t k, size_t ldb, size_t ldc,
                      const int mr, const int nv)
{
    const int acc = 1, at = 0;
    const size_t lda = 0;
    VTILE_BODY(tr_vf, VA_TABLE)
    (void)lda;
}

TR_TILE void qtile_ga(float *restrict c, const float *restrict a, const size_t *off,
                      const float *restrict b, size_t k, size_t ldb, size_t ldc,
                      const int mr, const int nv)
{
    const int acc = 1, at = 0;
    const size_t lda = 0;
    VTILE_BODY(tr_vf4, VA_TABLE)
    (void)lda;
}

/* B's row p at b + off[p], A stored transposed (K, M): one pointer walks
 * its rows, the tile's A values consecutive (with A row-major the 8 row
 * pointers no longer fit the registers beside the table) */
#define VX_INIT_BIAS(T, i)                                                    \
    VX_INIT(T, i)                                                             \
    if (mr > i && bias) {     /* b - (+0) is b, -0 included */                \
        x##i##0 = bias[i] - x##i##0;                                          \
        x##i##1 = bias[i] - x##i##1;                                          \
        x##i##2 = bias[i] - x##i##2;                                          \
    }
#define VTILE_GB_BODY(T)                                                      \
    VA_ROWS();                                                                \
    const int acc = bias == NULL, at = 1;                                     \
    size_t p;                                                                 \
    VX_INIT_BIAS(T, 0) VX_INIT_BIAS(T, 1) VX_INIT_BIAS(T, 2) VX_INIT_BIAS(T, 3) \
    VX_INIT_BIAS(T, 4) VX_INIT_BIAS(T, 5) VX_INIT_BIAS(T, 6) VX_INIT_BIAS(T, 7) \
    for (p = 0; p < k; p++) {                                                 \
        const float *bw = b + off[p];                                         \
        T b0, b1, b2;                                                         \
        __builtin_memcpy(&b0, bw, sizeof(T));                                 \
        b1 = b2 = b0;                                                         \
        if (nv > 1)                                                           \
            __builtin_memcpy(&b1, bw + sizeof(T) / 4, sizeof(T));             \
        if (nv > 2)                                                           \
            __builtin_memcpy(&b2, bw + sizeof(T) / 2, sizeof(T));             \
        VX_STEP(0) VX_STEP(1) VX_STEP(2) VX_STEP(3)                           \
        VX_STEP(4) VX_STEP(5) VX_STEP(6) VX_STEP(7)                           \
        ap += lda;                                                            \
    }                                                                         \
    VX_STORE(T, 0) VX_STORE(T, 1) VX_STORE(T, 2) VX_STORE(T, 3)               \
    VX_STORE(T, 4) VX_STORE(T, 5) VX_STORE(T, 6) VX_STORE(T, 7)

TR_TILE void vtile_gb(float *restrict c, const float *restrict a, const float *restrict b,
                      const size_t *off, size_t k, size_t lda, size_t ldc,
                      const float *bias, const int mr, const int nv)
{
    VTILE_GB_BODY(tr_vf)
}

TR_TILE void qtile_gb(float *restrict c, const float *restrict a, const float *restrict b,
                      const size_t *off, size_t k, size_t lda, size_t ldc,
                      const float *bias, const int mr, const int nv)
{
    VTILE_GB_BODY(tr_vf4)
}

/* one function per grid tile kind, specialised for each row count */
#define GRID_ROWS_FN(name, tile, nv, ...)                                     \
    static void name(size_t mr, __VA_ARGS__)                                  \
    {                                                                         \
        switch (mr) {                                                         \
        case 8: tile(GRID_ARGS, 8, nv); break;                                \
        case 7: tile(GRID_ARGS, 7, nv); break;                                \
        case 6: tile(GRID_ARGS, 6, nv); break;                                \
        case 5: tile(GRID_ARGS, 5, nv); break;                                \
        case 4: tile(GRID_ARGS, 4, nv); break;                                \
        case 3: tile(GRID_ARGS, 3, nv); break;                                \
        case 2: tile(GRID_ARGS, 2, nv); break;                                \
        default: tile(GRID_ARGS, 1, nv); break;                               \
        }                                                                     \
    }
#define GRID_ARGS c, a, off, b, k, ldb, ldc
#define GA_PARAMS float *c, const float *a, const size_t *off, const float *b, size_t k, \
                  size_t ldb, size_t ldc
GRID_ROWS_FN(tile_2v_ga, vtile_ga, 2, GA_PARAMS)
GRID_ROWS_FN(tile_1v_ga, vtile_ga, 1, GA_PARAMS)
GRID_ROWS_FN(tile_q_ga, qtile_ga, 1, GA_PARAMS)
#undef GRID_ARGS
#define GRID_ARGS c, a, b, off, k, lda, ldc, bias
#define GB_PARAMS float *c, const float *a, const float *b, const size_t *off, size_t k, \
                  size_t lda, size_t ldc, const float *bias
#if TR_VMR == 8
GRID_ROWS_FN(tile_3v_gb, vtile_gb, 3, GB_PARAMS)
#endif
GRID_ROWS_FN(tile_2v_gb, vtile_gb, 2, GB_PARAMS)
GRID_ROWS_FN(tile_1v_gb, vtile_gb, 1, GB_PARAMS)
GRID_ROWS_FN(tile_q_gb, qtile_gb, 1, GB_PARAMS)
#undef GRID_ARGS

/* rows [r0, r0+m) of A on the grid, their offsets in off */
static void gemm_ga_rows(float *c, const float *a, const size_t *off, const float *b,
                         size_t m, size_t n, size_t k, size_t ldb, size_t ldc)
{
    size_t i, j = 0, r;

    for (; j + 2 * TR_VW <= n; j += 2 * TR_VW)
        for (i = 0; i < m; i += r) {
            r = block_rows(m - i);
            tile_2v_ga(r, c + i * ldc + j, a, off + i, b + j, k, ldb, ldc);
        }
    for (; j + TR_VW <= n; j += TR_VW)
        for (i = 0; i < m; i += r) {
            r = block_rows(m - i);
            tile_1v_ga(r, c + i * ldc + j, a, off + i, b + j, k, ldb, ldc);
        }
    for (; j + 4 <= n; j += 4)
        for (i = 0; i < m; i += r) {
            r = block_rows(m - i);
            tile_q_ga(r, c + i * ldc + j, a, off + i, b + j, k, ldb, ldc);
        }
    for (i = 0; j < n && i < m; i++)       /* the last columns: the reference */
        tr_gemm_ref(c + i * ldc + j, a + off[i], b + j, 1, n - j, k, 0, ldb, ldc);
}

void tr_gemm_grid_a(float *c, const float *a, const struct tr_gemm_grid *g, const float *b,
                    size_t m, size_t n, size_t k, size_t ldb, size_t ldc)
{
    size_t off[TR_GRID_CHUNK], i, r;

    for (i = 0; i < m; i += r) {
        r = m - i < TR_GRID_CHUNK ? m - i : TR_GRID_CHUNK;
        grid_table(off, g, i, r);
        gemm_ga_rows(c + i * ldc, a, off, b, r, n, k, ldb, ldc);
    }
}

/* B's rows [p0, p0+k) on the grid, their offsets in off; C starts at
 * bias[i] in row i (bias NULL: at C) */
#if TR_VW > 4
/* The last columns j .. j+nc-1 (nc <= 4) of rows 0 .. 2*TR_VW-1, with the
 * rows as the vector lanes: A stored (K, M) holds a k step's row values
 * together, so a step is two vector loads of A and one B value per column
 * (a 4-lane tile per row block spends as many operations on 4 columns as a
 * full vector tile on 16). Row i of C starts at bias[i] or at C. */
#define CX_INIT(t)                                                            \
    tr_vf x##t##0 = {0}, x##t##1 = {0};                                       \
    if (nc > t) {                                                             \
        if (bias) {                                                           \
            __builtin_memcpy(&x##t##0, bias, sizeof(tr_vf));                  \
            __builtin_memcpy(&x##t##1, bias + TR_VW, sizeof(tr_vf));          \
        } else                                                                \
            for (i = 0; i < TR_VW; i++) {                                     \
                x##t##0[i] = c[i * ldc + t];                                  \
                x##t##1[i] = c[(i + TR_VW) * ldc + t];                        \
            }                                                                 \
    }
#define CX_STEP(t)                                                            \
    if (nc > t) {                                                             \
        const float bv = bw[t];                                               \
        x##t##0 += bv * a0;                                                   \
        x##t##1 += bv * a1;                                                   \
    }
#define CX_STORE(t)                                                           \
    if (nc > t)                                                               \
        for (i = 0; i < TR_VW; i++) {                                         \
            c[i * ldc + t] = x##t##0[i];                                      \
            c[(i + TR_VW) * ldc + t] = x##t##1[i];                            \
        }

TR_TILE void ctile_gb(float *restrict c, const float *restrict a, const float *restrict b,
                      const size_t *off, size_t k, size_t lda, size_t ldc, const float *bias,
                      const int nc)
{
    size_t p, i;
    CX_INIT(0) CX_INIT(1) CX_INIT(2) CX_INIT(3)
    for (p = 0; p < k; p++) {
        const float *bw = b + off[p];
        tr_vf a0, a1;
        __builtin_memcpy(&a0, a + p * lda, sizeof a0);
        __builtin_memcpy(&a1, a + p * lda + TR_VW, sizeof a1);
        TR_IN_REGISTER(a0);                     /* loaded once, not once per column */
        TR_IN_REGISTER(a1);
        CX_STEP(0) CX_STEP(1) CX_STEP(2) CX_STEP(3)
    }
    CX_STORE(0) CX_STORE(1) CX_STORE(2) CX_STORE(3)
}

static void tile_cols_gb(size_t nc, float *c, const float *a, const float *b, const size_t *off,
                         size_t k, size_t lda, size_t ldc, const float *bias)
{
    switch (nc) {
    case 4: ctile_gb(c, a, b, off, k, lda, ldc, bias, 4); break;
    case 3: ctile_gb(c, a, b, off, k, lda, ldc, bias, 3); break;
    case 2: ctile_gb(c, a, b, off, k, lda, ldc, bias, 2); break;
    default: ctile_gb(c, a, b, off, k, lda, ldc, bias, 1); break;
    }
}
#endif

static void gemm_gb_rows(float *c, const float *a, const float *b, const size_t *off,
                         size_t m, size_t n, size_t k, size_t lda, size_t ldc,
                         const float *bias)
{
    size_t i, j = 0, r, p, i0 = 0;

#if TR_VMR == 8     /* 8 x 3 vectors: 24 of the 32 registers */
    for (; j + 3 * TR_VW <= n; j += 3 * TR_VW)
        for (i = 0; i < m; i += r) {
            r = block_rows(m - i);
            tile_3v_gb(r, c + i * ldc + j, a + i, b + j, off, k, lda, ldc, bias ? bias + i : NULL);
        }
#endif
    for (; j + 2 * TR_VW <= n; j += 2 * TR_VW)
        for (i = 0; i < m; i += r) {
            r = block_rows(m - i);
            tile_2v_gb(r, c + i * ldc + j, a + i, b + j, off, k, lda, ldc, bias ? bias + i : NULL);
        }
    for (; j + TR_VW <= n; j += TR_VW)
        for (i = 0; i < m; i += r) {
            r = block_rows(m - i);
            tile_1v_gb(r, c + i * ldc + j, a + i, b + j, off, k, lda, ldc, bias ? bias + i : NULL);
        }
#if TR_VW > 4
    /* the last columns: rows as lanes where 2 vectors of rows are left */
    for (; j < n && i0 + 2 * TR_VW <= m; i0 += 2 * TR_VW)
        for (p = j; p < n; p += 4)
            tile_cols_gb(n - p < 4 ? n - p : 4, c + i0 * ldc + p, a + i0, b + p, off, k, lda, ldc,
                         bias ? bias + i0 : NULL);
#endif
    for (; j + 4 <= n; j += 4)             /* the other rows' */
        for (i = i0; i < m; i += r) {
            r = block_rows(m - i);
            tile_q_gb(r, c + i * ldc + j, a + i, b + j, off, k, lda, ldc, bias ? bias + i : NULL);
        }
    for (i = i0; j < n && i < m; i++) {    /* the last columns: the reference */
        for (p = j; bias && p < n; p++)
            c[i * ldc + p] = bias[i];
        for (p = 0; p < k; p++)
            tr_gemm_ref(c + i * ldc + j, a + p * lda + i, b + off[p] + j, 1, n - j, 1, 0, 0,
                        ldc);
    }
}

void tr_gemm_at_grid(float *c, const float *a, const float *b, const struct tr_gemm_grid *g,
                     size_t m, size_t n, size_t k, size_t lda, size_t ldc, const float *bias)
{
    size_t off[TR_GRID_CHUNK], p, r;

    /* B's rows in even pieces of at most TR_GRID_B_PIECE (conv2: 4 x 100):
     * a piece's B rows stay in L1 while every row block of C reads them */
    for (p = 0; p < k || (p == 0 && bias); p += r) {
        const size_t pieces = (k - p + TR_GRID_B_PIECE - 1) / TR_GRID_B_PIECE;
        r = pieces ? (k - p + pieces - 1) / pieces : 0;
        grid_table(off, g, p, r);
        gemm_gb_rows(c, a + p * lda, b, off, m, n, r, lda, ldc, p == 0 ? bias : NULL);
        if (r == 0)
            break;
    }
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
 * RISC-V has no post-increment, so its loop walks 2 k steps per turn (the A
 * loads use offsets and each row pointer steps once per turn).
 *
 * GCC's first scheduling pass hoists loads and multiplies so far ahead that
 * 30 live values no longer fit and accumulators spill to the stack in the
 * loop (65 instructions per k step on the M4F, 103 on RV32; on the M55 the
 * Helium tile spills a Q register), so the tiles are compiled without it. */
#define TR_MR 6
#define TR_NR 4
#if defined(__riscv)
#define TR_KU 2   /* k steps per loop turn */
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
        const float av = at ? ap[i] : *a##i++;                                \
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
        if (at)                                                               \
            ap += lda;                                                        \
    } while (0)

/* the A row pointers of a tile of mr rows (the unused ones repeat the
 * last), for row-major A; ap walks transposed A one k step (lda) at a time */
#define A_ROWS()                                                              \
    const float *a0 = a, *a1 = mr > 1 ? a0 + lda : a0, *a2 = mr > 2 ? a1 + lda : a1; \
    const float *a3 = mr > 3 ? a2 + lda : a2, *a4 = mr > 4 ? a3 + lda : a3;   \
    const float *a5 = mr > 5 ? a4 + lda : a4, *ap = a

/* C (mr, 4) += A (mr, k) * B (k, 4), mr <= 6 and A's layout at
 * compile-time constants at every call, so the unused rows vanish */
TR_TILE void tile(float *restrict c, const float *restrict a, const float *restrict b,
                  size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                  const int at)
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
#define VACC_INIT(i) \
    float32x4_t v##i = acc && mr > i ? vld1q_f32(c + i * ldc) : vdupq_n_f32(0.0f);
#define VROW_STEP(i) \
    if (mr > i) v##i = vaddq_f32(v##i, vmulq_n_f32(bv, at ? ap[i] : *a##i++));
#define VACC_STORE(i) \
    if (mr > i) vst1q_f32(c + i * ldc, v##i);

/* the same tile with MVE; returns 1, C untouched, when any operation met a
 * subnormal (tr_mve_flushed), else 0 */
TR_TILE int tile_mve(float *restrict c, const float *restrict a, const float *restrict b,
                     size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                     const int at)
{
    const unsigned fpscr = tr_mve_begin();
    A_ROWS();
    size_t p;
    VACC_INIT(0) VACC_INIT(1) VACC_INIT(2) VACC_INIT(3) VACC_INIT(4) VACC_INIT(5)

    for (p = 0; p < k; p++) {
        const float32x4_t bv = vld1q_f32(b);
        b += ldb;
        VROW_STEP(0) VROW_STEP(1) VROW_STEP(2) VROW_STEP(3) VROW_STEP(4) VROW_STEP(5)
        if (at)
            ap += lda;
    }
    if (tr_mve_flushed(fpscr))
        return 1;
    VACC_STORE(0) VACC_STORE(1) VACC_STORE(2) VACC_STORE(3) VACC_STORE(4) VACC_STORE(5)
    return 0;
}

/* a tile of mr rows: Helium, or the scalar FPU where Helium flushed */
TR_TILE void tile_rows(float *restrict c, const float *restrict a, const float *restrict b,
                       size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                       const int at)
{
    if (tile_mve(c, a, b, k, lda, ldb, ldc, acc, mr, at))
        tile(c, a, b, k, lda, ldb, ldc, acc, mr, at);
}
#else
/* a tile of mr rows: the scalar FPU */
TR_TILE void tile_rows(float *restrict c, const float *restrict a, const float *restrict b,
                       size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                       const int at)
{
    tile(c, a, b, k, lda, ldb, ldc, acc, mr, at);
}
#endif

#if TR_VFP_ASM
/* ---- tiles of 4, 5 and 6 rows x 4 columns in Arm VFP assembly (Thumb-2,
 * 32 single registers)
 *
 * The same operations as tile() in the same order, with what C cannot ask
 * of GCC: B rows, A values and C's rows moved by load-multiple (vldmia,
 * vstmia) and the k loop unrolled twice.
 *   - 4 and 5 rows take two k steps at once: the B rows k and k+1 in s0-s3
 *     and s4-s7, each row's A values for k and k+1 in one load (s8, s9),
 *     products in s10 and s11, accumulators from s12 (row r in s12+4r ..
 *     s15+4r). A row's pair of steps is 1 load, 8 multiplies and 8 adds, its
 *     accumulators taking step k before step k+1; 5 rows and the loop are 91
 *     instructions per 40 multiply-adds (2.275).
 *   - 6 rows leave no registers for a second B row: accumulators s8-s31,
 *     the B row s0-s3, the A value s4, products s5-s7; the step written
 *     twice per loop turn (VFP_LOOP_X2): 114 instructions per 48
 *     multiply-adds (2.375). Only a block of exactly 6 rows takes it.
 *   Each assembly string stays under the 4095 characters C99 promises (GCC
 *   and clang -pedantic check). */
#define VFP_ROW(ai, x0, x1, x2, x3)                                           \
    "vldmia %[" ai "]!, {s4}\n\t"                                             \
    "vmul.f32 s5, s4, s0\n\t"                                                 \
    "vmul.f32 s6, s4, s1\n\t"                                                 \
    "vadd.f32 " x0 ", " x0 ", s5\n\t"                                         \
    "vmul.f32 s7, s4, s2\n\t"                                                 \
    "vadd.f32 " x1 ", " x1 ", s6\n\t"                                         \
    "vmul.f32 s5, s4, s3\n\t"                                                 \
    "vadd.f32 " x2 ", " x2 ", s7\n\t"                                         \
    "vadd.f32 " x3 ", " x3 ", s5\n\t"
/* one row, steps k (A in s8, B in s0-s3) and k+1 (s9, s4-s7) */
#define VFP_PROW(ai, x0, x1, x2, x3)                                          \
    "vldmia %[" ai "]!, {s8-s9}\n\t"                                          \
    "vmul.f32 s10, s8, s0\n\t"                                                \
    "vmul.f32 s11, s8, s1\n\t"                                                \
    "vadd.f32 " x0 ", " x0 ", s10\n\t"                                        \
    "vmul.f32 s10, s8, s2\n\t"                                                \
    "vadd.f32 " x1 ", " x1 ", s11\n\t"                                        \
    "vmul.f32 s11, s8, s3\n\t"                                                \
    "vadd.f32 " x2 ", " x2 ", s10\n\t"                                        \
    "vmul.f32 s10, s9, s4\n\t"                                                \
    "vadd.f32 " x3 ", " x3 ", s11\n\t"                                        \
    "vmul.f32 s11, s9, s5\n\t"                                                \
    "vadd.f32 " x0 ", " x0 ", s10\n\t"                                        \
    "vmul.f32 s10, s9, s6\n\t"                                                \
    "vadd.f32 " x1 ", " x1 ", s11\n\t"                                        \
    "vmul.f32 s11, s9, s7\n\t"                                                \
    "vadd.f32 " x2 ", " x2 ", s10\n\t"                                        \
    "vadd.f32 " x3 ", " x3 ", s11\n\t"
/* one row, one step k (A in s8, B in s0-s3) */
#define VFP_SROW(ai, x0, x1, x2, x3)                                          \
    "vldmia %[" ai "]!, {s8}\n\t"                                             \
    "vmul.f32 s10, s8, s0\n\t"                                                \
    "vmul.f32 s11, s8, s1\n\t"                                                \
    "vadd.f32 " x0 ", " x0 ", s10\n\t"                                        \
    "vmul.f32 s10, s8, s2\n\t"                                                \
    "vadd.f32 " x1 ", " x1 ", s11\n\t"                                        \
    "vmul.f32 s11, s8, s3\n\t"                                                \
    "vadd.f32 " x2 ", " x2 ", s10\n\t"                                        \
    "vadd.f32 " x3 ", " x3 ", s11\n\t"
#define VFP_B "vldmia %[b], {s0-s3}\n\tadd %[b], %[b], %[ldb4]\n\t"
#define VFP_B2 VFP_B "vldmia %[b], {s4-s7}\n\tadd %[b], %[b], %[ldb4]\n\t"
#define VFP_ROWS6                                                             \
    VFP_ROW("a0", "s8", "s9", "s10", "s11")                                   \
    VFP_ROW("a1", "s12", "s13", "s14", "s15")                                 \
    VFP_ROW("a2", "s16", "s17", "s18", "s19")                                 \
    VFP_ROW("a3", "s20", "s21", "s22", "s23")                                 \
    VFP_ROW("a4", "s24", "s25", "s26", "s27")                                 \
    VFP_ROW("a5", "s28", "s29", "s30", "s31")
/* the rows r = 0..n-1 of the two-step tiles: accumulators s12+4r.. */
#define VFP_XROWS4(R)                                                         \
    R("a0", "s12", "s13", "s14", "s15")                                       \
    R("a1", "s16", "s17", "s18", "s19")                                       \
    R("a2", "s20", "s21", "s22", "s23")                                       \
    R("a3", "s24", "s25", "s26", "s27")
#define VFP_XROWS5(R) VFP_XROWS4(R) R("a4", "s28", "s29", "s30", "s31")
/* C's rows from or to the accumulators: t walks the rows, t2 holds ldc
 * bytes; the first row's registers, then the others' */
#define VFP_CFIRST(op, regs)                                                  \
    "ldr %[t], [%[args]]\n\t"                                                 \
    "ldr %[t2], [%[args], #4]\n\t"                                            \
    op " %[t], {" regs "}\n\t"
#define VFP_CNEXT(op, regs) "add %[t], %[t], %[t2]\n\t" op " %[t], {" regs "}\n\t"
#define VFP_C6(op)                                                            \
    VFP_CFIRST(op, "s8-s11") VFP_CNEXT(op, "s12-s15") VFP_CNEXT(op, "s16-s19") \
    VFP_CNEXT(op, "s20-s23") VFP_CNEXT(op, "s24-s27") VFP_CNEXT(op, "s28-s31")
#define VFP_CX4(op)                                                           \
    VFP_CFIRST(op, "s12-s15") VFP_CNEXT(op, "s16-s19") VFP_CNEXT(op, "s20-s23") \
    VFP_CNEXT(op, "s24-s27")
#define VFP_CX5(op) VFP_CX4(op) VFP_CNEXT(op, "s28-s31")

static const float tr_zero24[24];

/* C (rows, 4) += A (rows, k) * B (k, 4), or = with acc 0: the assembly
 * for C's rows (CROWS), the accumulator registers (ACCS) and the k loop
 * (LOOP, on t and k), around it the code that sets up its operands */
#define VFP_TILE(name, CROWS, ACCS, LOOP)                                     \
    static void name(float *c, const float *a, const float *b, size_t k,     \
                     size_t lda, size_t ldb, size_t ldc, int acc)            \
    {                                                                         \
        /* what the assembly reads from memory: C, its row stride in bytes, \
         * whether to start from C or from +0, and 24 zeros */               \
        const struct { float *c; size_t ldc4; int acc; const float *zero; } args = { \
            c, ldc * sizeof *c, acc, tr_zero24};                              \
        const float *a0 = a, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;  \
        const float *a4 = a3 + lda, *a5 = a4 + lda;                           \
        const size_t ldb4 = ldb * sizeof *b;                                  \
        size_t t, t2;                                                         \
        __asm__ volatile(                                                     \
            "ldr %[t], [%[args], #8]\n\t"                                     \
            "cmp %[t], #0\n\t"                                                \
            "beq 1f\n\t"                                                      \
            CROWS("vldmia")                                                   \
            "b 2f\n"                                                          \
            "1:\n\t"                                                          \
            "ldr %[t], [%[args], #12]\n\t"                                    \
            "vldmia %[t], {" ACCS "}\n"                                       \
            "2:\n\t"                                                          \
            LOOP                                                              \
            "5:\n\t"                                                          \
            CROWS("vstmia")                                                   \
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),     \
              [a4] "+r"(a4), [a5] "+r"(a5), [b] "+r"(b), [t] "=&r"(t),        \
              [t2] "=&r"(t2)                                                  \
            : [k] "r"(k), [ldb4] "r"(ldb4), [args] "r"(&args)                 \
            : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",     \
              "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18",  \
              "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27",  \
              "s28", "s29", "s30", "s31", "cc", "memory");                    \
    }
/* k loop: two steps per turn, then the odd one */
#define VFP_LOOP2(PAIR, SINGLE)                                               \
    "lsrs %[t], %[k], #1\n\t"                                                 \
    "beq 4f\n"                                                                \
    "3:\n\t"                                                                  \
    PAIR                                                                      \
    "subs %[t], %[t], #1\n\t"                                                 \
    "bne 3b\n"                                                                \
    "4:\n\t"                                                                  \
    "tst %[k], #1\n\t"                                                        \
    "beq 5f\n\t"                                                              \
    SINGLE
/* one step written twice per turn, (k + 1) / 2 turns: an odd k starts at
 * the second copy */
#define VFP_LOOP_X2(STEP)                                                     \
    "adds %[t], %[k], #1\n\t"                                                \
    "lsrs %[t], %[t], #1\n\t"                                                \
    "beq 5f\n\t"                                                             \
    "tst %[k], #1\n\t"                                                       \
    "bne 6f\n"                                                                \
    "3:\n\t"                                                                 \
    STEP                                                                      \
    "6:\n\t"                                                                 \
    STEP                                                                      \
    "subs %[t], %[t], #1\n\t"                                                \
    "bne 3b\n\t"
VFP_TILE(tile_vfp6, VFP_C6, "s8-s31", VFP_LOOP_X2(VFP_B VFP_ROWS6))
VFP_TILE(tile_vfp5, VFP_CX5, "s12-s31",
         VFP_LOOP2(VFP_B2 VFP_XROWS5(VFP_PROW), VFP_B VFP_XROWS5(VFP_SROW)))
VFP_TILE(tile_vfp4, VFP_CX4, "s12-s27",
         VFP_LOOP2(VFP_B2 VFP_XROWS4(VFP_PROW), VFP_B VFP_XROWS4(VFP_SROW)))

/* ---- the same for transposed A (K, M): a k step's values of the tile's
 * rows are consecutive, so one load-multiple takes them all: the B row
 * s0-s3, the A values s4-s8, products s9 and s10, accumulators from s12.
 * Two k steps per loop turn, the same registers loaded again for the
 * second (an odd k enters the first turn at its second step): 5 rows take
 * 90 instructions per 40 multiply-adds (2.25), 4 rows 74 per 32. */
#define VFP_TROW(av, x0, x1, x2, x3)                                          \
    "vmul.f32 s9, " av ", s0\n\t"                                             \
    "vmul.f32 s10, " av ", s1\n\t"                                            \
    "vadd.f32 " x0 ", " x0 ", s9\n\t"                                         \
    "vmul.f32 s9, " av ", s2\n\t"                                             \
    "vadd.f32 " x1 ", " x1 ", s10\n\t"                                        \
    "vmul.f32 s10, " av ", s3\n\t"                                            \
    "vadd.f32 " x2 ", " x2 ", s9\n\t"                                         \
    "vadd.f32 " x3 ", " x3 ", s10\n\t"
#define VFP_TSTEP4                                                            \
    VFP_B "vldmia %[ap], {s4-s7}\n\tadd %[ap], %[ap], %[lda4]\n\t"            \
    VFP_TROW("s4", "s12", "s13", "s14", "s15")                                \
    VFP_TROW("s5", "s16", "s17", "s18", "s19")                                \
    VFP_TROW("s6", "s20", "s21", "s22", "s23")                                \
    VFP_TROW("s7", "s24", "s25", "s26", "s27")
#define VFP_TSTEP5                                                            \
    VFP_B "vldmia %[ap], {s4-s8}\n\tadd %[ap], %[ap], %[lda4]\n\t"            \
    VFP_TROW("s4", "s12", "s13", "s14", "s15")                                \
    VFP_TROW("s5", "s16", "s17", "s18", "s19")                                \
    VFP_TROW("s6", "s20", "s21", "s22", "s23")                                \
    VFP_TROW("s7", "s24", "s25", "s26", "s27")                                \
    VFP_TROW("s8", "s28", "s29", "s30", "s31")
#define VFP_TILE_AT(name, CROWS, ACCS, STEP)                                  \
    static void name(float *c, const float *a, const float *b, size_t k,     \
                     size_t lda, size_t ldb, size_t ldc, int acc)            \
    {                                                                         \
        const struct { float *c; size_t ldc4; int acc; const float *zero; } args = { \
            c, ldc * sizeof *c, acc, tr_zero24};                              \
        const size_t ldb4 = ldb * sizeof *b, lda4 = lda * sizeof *a;          \
        size_t t, t2;                                                         \
        __asm__ volatile(                                                     \
            "ldr %[t], [%[args], #8]\n\t"                                     \
            "cmp %[t], #0\n\t"                                                \
            "beq 1f\n\t"                                                      \
            CROWS("vldmia")                                                   \
            "b 2f\n"                                                          \
            "1:\n\t"                                                          \
            "ldr %[t], [%[args], #12]\n\t"                                    \
            "vldmia %[t], {" ACCS "}\n"                                       \
            "2:\n\t"                                                          \
            VFP_LOOP_X2(STEP)                                                 \
            "5:\n\t"                                                          \
            CROWS("vstmia")                                                   \
            : [ap] "+r"(a), [b] "+r"(b), [t] "=&r"(t), [t2] "=&r"(t2)         \
            : [k] "r"(k), [ldb4] "r"(ldb4), [lda4] "r"(lda4), [args] "r"(&args) \
            : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",     \
              "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18",  \
              "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27",  \
              "s28", "s29", "s30", "s31", "cc", "memory");                    \
    }
VFP_TILE_AT(tile_vfp5_at, VFP_CX5, "s12-s31", VFP_TSTEP5)
VFP_TILE_AT(tile_vfp4_at, VFP_CX4, "s12-s27", VFP_TSTEP4)

/* rows per block: 5 (the fastest tiles), 6 only for exactly 6 */
#define TR_MR_BLOCK 5
/* a block of mr rows (1..6): 4 to 6 in assembly (4 and 5 for transposed
 * A), fewer in C */
static void tile_block(float *c, const float *a, const float *b, size_t mr, size_t k,
                       size_t lda, size_t ldb, size_t ldc, int acc)
{
    switch (mr) {
    case 6: tile_vfp6(c, a, b, k, lda, ldb, ldc, acc); break;
    case 5: tile_vfp5(c, a, b, k, lda, ldb, ldc, acc); break;
    case 4: tile_vfp4(c, a, b, k, lda, ldb, ldc, acc); break;
    case 3: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 3, 0); break;
    case 2: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 2, 0); break;
    default: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 1, 0); break;
    }
}

static void tile_block_at(float *c, const float *a, const float *b, size_t mr, size_t k,
                          size_t lda, size_t ldb, size_t ldc, int acc)
{
    switch (mr) {
    case 5: tile_vfp5_at(c, a, b, k, lda, ldb, ldc, acc); break;
    case 4: tile_vfp4_at(c, a, b, k, lda, ldb, ldc, acc); break;
    case 6: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 6, 1); break;
    case 3: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 3, 1); break;
    case 2: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 2, 1); break;
    default: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 1, 1); break;
    }
}
#else
#define TR_MR_BLOCK TR_MR
/* a block of mr rows (1..6), for each A layout */
#define TILE_BLOCK_FN(name, at)                                               \
    TR_TILE_FN void name(float *c, const float *a, const float *b, size_t mr, size_t k, \
                         size_t lda, size_t ldb, size_t ldc, int acc)         \
    {                                                                         \
        switch (mr) {                                                         \
        case 6: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 6, at); break;      \
        case 5: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 5, at); break;      \
        case 4: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 4, at); break;      \
        case 3: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 3, at); break;      \
        case 2: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 2, at); break;      \
        default: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 1, at); break;     \
        }                                                                     \
    }
TILE_BLOCK_FN(tile_block, 0)
TILE_BLOCK_FN(tile_block_at, 1)
#endif

/* the next row block of the left rows: as few blocks of at most
 * TR_MR_BLOCK rows as possible, as even as possible (32 rows: 6, 6, 5, 5,
 * 5, 5 with blocks of 6, 5, 5, 5, 5, 4, 4, 4 with blocks of 5); exactly 6
 * stay one block */
static size_t block_rows(size_t left)
{
    const size_t nb = (left + TR_MR_BLOCK - 1) / TR_MR_BLOCK;
    return left == TR_MR ? TR_MR : (left + nb - 1) / nb;
}

/* the driver for A's layout at: column strips outermost (the strip of B
 * (k, 4) is reread by every row block while it is still in the cache,
 * where there is one), row blocks inside */
#define GEMM_FN(name, at, block)                                              \
    static void name(float *c, const float *a, const float *b, size_t m, size_t n, \
                     size_t k, size_t lda, size_t ldb, size_t ldc, int acc)   \
    {                                                                         \
        const size_t nb = n - n % TR_NR;                                      \
        size_t i, j, r;                                                       \
        for (j = 0; j < nb; j += TR_NR)                                       \
            for (i = 0; i < m; i += r) {                                      \
                r = block_rows(m - i);                                        \
                block(c + i * ldc + j, A_ROW(a, i, lda, at), b + j, r, k, lda, ldb, ldc, acc); \
            }                                                                 \
        if (nb < n)                                                           \
            gemm_tail(c + nb, a, b + nb, m, n - nb, k, lda, ldb, ldc, acc, at); \
    }
GEMM_FN(gemm, 0, tile_block)
GEMM_FN(gemm_at, 1, tile_block_at)
#endif

#if !defined(TR_GEMM_VEC)
/* a scalar FPU's convolutions use im2col and tr_gemm (tr_layer_conv.c):
 * the grid forms are their reference loops there */
void tr_gemm_grid_a(float *c, const float *a, const struct tr_gemm_grid *g, const float *b,
                    size_t m, size_t n, size_t k, size_t ldb, size_t ldc)
{
    tr_gemm_grid_a_ref(c, a, g, b, m, n, k, ldb, ldc);
}

void tr_gemm_at_grid(float *c, const float *a, const float *b, const struct tr_gemm_grid *g,
                     size_t m, size_t n, size_t k, size_t lda, size_t ldc, const float *bias)
{
    size_t i, j;

    for (i = 0; bias && i < m; i++)
        for (j = 0; j < n; j++)
            c[i * ldc + j] = bias[i];
    tr_gemm_at_grid_ref(c, a, b, g, m, n, k, lda, ldc);
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
