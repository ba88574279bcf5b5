/* tinyring: the GEMM's tiles on vector hosts (AVX-512, AVX, SSE2, NEON): GCC's
 * vector extension at the host's width.
 * Included by tr_kernel_gemm.c alone, from its one #if that chooses the
 * tiles per target; not a header of its own. */
#ifndef TR_GEMM_VEC_H
#define TR_GEMM_VEC_H

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

#endif /* TR_GEMM_VEC_H */
