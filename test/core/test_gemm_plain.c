/* test_gemm_plain: each branch of the GEMM (core/tr_kernel_gemm.c, compiled
 * into this test), both forms (tr_gemm: A (M, K); tr_gemm_at: A stored
 * transposed (K, M)), against the reference, bitwise: every element must have
 * the same bits (the layer contract: the same float operations in the same
 * order). Built several times (test/core/core_tests.mk):
 *   - by default (test_gemm_plain): the vector-register macros removed, so
 *     the #if takes the scalar-FPU branch that Cortex-M4F and RV32 run (and
 *     the Cortex-M55's fallback);
 *   - with TEST_GEMM_VECTOR (test_gemm_isa_*): the vector-extension branch
 *     with the host's flags, and again without AVX-512 and without AVX: 16,
 *     8 and 4 lanes, as far as this host has them.
 * The grid forms (tr_gemm_at_grid, tr_gemm_grid_a) against the reference
 * on their rows gathered into plain matrices.
 * Shapes: the seed net's and the narrow net's, every row count up to two
 * row blocks, column counts around 4, 1 and 2 vectors, k 0 and 1, strided
 * views; the overwrite form must not read C and must leave the gaps between
 * rows alone. Built with -ffp-contract=off, like core. */
#if !defined(TEST_GEMM_VECTOR)
#include "tc_plain.h"
#endif
#include "../../core/tr_kernel_gemm.c"
#include "harness.h"
#include <string.h>

#ifndef TEST_SUITE
#define TEST_SUITE "core_gemm_plain"
#endif
#if defined(TR_GEMM_VEC) && TR_VW == 16
#define BRANCH "vector extension (16 lanes)"
#elif defined(TR_GEMM_VEC) && TR_VW == 8
#define BRANCH "vector extension (8 lanes)"
#elif defined(TR_GEMM_VEC)
#define BRANCH "vector extension (4 lanes)"
#elif defined(TR_GEMM_MVE)
#define BRANCH "helium"
#else
#define BRANCH "scalar FPU"
#endif

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

static void check(size_t m, size_t n, size_t k)
{
    size_t lda = k + 1, ldb = n + 2, ldc = n + 3, i;
    float *a = malloc((m * lda + 1) * 4), *b = malloc(((k ? k : 1) * ldb) * 4);
    float *c1 = malloc(m * ldc * 4), *c2 = malloc(m * ldc * 4);

    for (i = 0; i < m * lda; i++) a[i] = rnd();
    for (i = 0; i < (k ? k : 1) * ldb; i++) b[i] = rnd();
    for (i = 0; i < m * ldc; i++) c1[i] = c2[i] = rnd();
    tr_gemm(c1, a, b, m, n, k, lda, ldb, ldc);
    tr_gemm_ref(c2, a, b, m, n, k, lda, ldb, ldc);
    TH_CHECK(same_bits(c1, c2, m * ldc), BRANCH " gemm %zux%zux%zu: bits differ from the reference", m, n, k);
    for (i = 0; i < m * ldc; i++) { c1[i] = 1e30f; c2[i] = 0.0f; }
    for (i = 0; i < m * ldc; i++) if (i % ldc >= n) c1[i] = c2[i] = 3.0f;
    tr_gemm_set(c1, a, b, m, n, k, lda, ldb, ldc);
    tr_gemm_ref(c2, a, b, m, n, k, lda, ldb, ldc);
    TH_CHECK(same_bits(c1, c2, m * ldc), BRANCH " gemm_set %zux%zux%zu: bits differ from the reference", m, n, k);
    free(a); free(b); free(c1); free(c2);
}

/* the same for tr_gemm_at: A stored (K, M) with row stride lda >= m */
static void check_at(size_t m, size_t n, size_t k)
{
    size_t lda = m + 1, ldb = n + 2, ldc = n + 3, i;
    float *a = malloc(((k ? k : 1) * lda) * 4), *b = malloc(((k ? k : 1) * ldb) * 4);
    float *c1 = malloc(m * ldc * 4), *c2 = malloc(m * ldc * 4);

    for (i = 0; i < (k ? k : 1) * lda; i++) a[i] = rnd();
    for (i = 0; i < (k ? k : 1) * ldb; i++) b[i] = rnd();
    for (i = 0; i < m * ldc; i++) c1[i] = c2[i] = rnd();
    tr_gemm_at(c1, a, b, m, n, k, lda, ldb, ldc);
    tr_gemm_at_ref(c2, a, b, m, n, k, lda, ldb, ldc);
    TH_CHECK(same_bits(c1, c2, m * ldc), BRANCH " gemm_at %zux%zux%zu: bits differ from the reference", m, n, k);
    for (i = 0; i < m * ldc; i++) { c1[i] = 1e30f; c2[i] = 0.0f; }
    for (i = 0; i < m * ldc; i++) if (i % ldc >= n) c1[i] = c2[i] = 3.0f;
    tr_gemm_at_set(c1, a, b, m, n, k, lda, ldb, ldc);
    tr_gemm_at_ref(c2, a, b, m, n, k, lda, ldb, ldc);
    TH_CHECK(same_bits(c1, c2, m * ldc), BRANCH " gemm_at_set %zux%zux%zu: bits differ from the reference", m, n, k);
    free(a); free(b); free(c1); free(c2);
}

/* the grid forms (tr_gemm_at_grid: B's rows on a grid, A stored (K, M);
 * tr_gemm_grid_a: A's rows on a grid) against tr_gemm_at_ref / tr_gemm_ref
 * on the rows gathered into a plain matrix. Grid (n1, n2) = (3, 2) with
 * strides that make rows overlap, as the conv's shifted planes do. */
static void check_grid(size_t m, size_t n, size_t k)
{
    const struct tr_gemm_grid g = {3, 2, 3 * n + 7, n / 2 + 1, 2 * n + 5};
    const size_t rows = k > m ? k : m, lda = m + 1, ldc = n + 3;
    const size_t span = (rows / 6 + 1) * g.s0 + 3 * g.s1 + 2 * g.s2 + n + k + 8;
    float *src = malloc(span * 4), *plain = malloc((rows * n + 1) * 4), *plain_a = malloc((m * k + 1) * 4);
    float *at = malloc((k * lda + 1) * 4), *b = malloc((k * n + 1) * 4);
    float *c1 = malloc(m * ldc * 4), *c2 = malloc(m * ldc * 4), *bias = malloc(m * 4);
    size_t i, j, p;

    for (i = 0; i < span; i++) src[i] = rnd();
    for (i = 0; i < k * lda; i++) at[i] = rnd();
    for (i = 0; i < k * n; i++) b[i] = rnd();
    for (p = 0; p < k; p++)        /* B's row p gathered */
        for (j = 0; j < n; j++)
            plain[p * n + j] = src[grid_off(&g, p) + j];
    for (i = 0; i < m * ldc; i++) c1[i] = c2[i] = rnd();
    tr_gemm_at_grid(c1, at, src, &g, m, n, k, lda, ldc, NULL);
    tr_gemm_at_ref(c2, at, plain, m, n, k, lda, n, ldc);
    TH_CHECK(same_bits(c1, c2, m * ldc), BRANCH " gemm_at_grid %zux%zux%zu: bits differ from the reference", m, n, k);
    for (i = 0; i < m; i++)        /* from a bias: -0 among them */
        bias[i] = i % 3 ? rnd() : -0.0f;
    for (i = 0; i < m * ldc; i++) { c1[i] = 1e30f; c2[i] = 3.0f; }
    for (i = 0; i < m * ldc; i++) if (i % ldc >= n) c1[i] = 3.0f; else c2[i] = bias[i / ldc];
    tr_gemm_at_grid(c1, at, src, &g, m, n, k, lda, ldc, bias);
    tr_gemm_at_ref(c2, at, plain, m, n, k, lda, n, ldc);
    TH_CHECK(same_bits(c1, c2, m * ldc), BRANCH " gemm_at_grid bias %zux%zux%zu: bits differ from the reference", m, n, k);
    for (i = 0; i < m; i++)        /* A's row i gathered */
        for (p = 0; p < k; p++)
            plain_a[i * k + p] = src[grid_off(&g, i) + p];
    for (i = 0; i < m * ldc; i++) c1[i] = c2[i] = rnd();
    tr_gemm_grid_a(c1, src, &g, b, m, n, k, n, ldc);
    tr_gemm_ref(c2, plain_a, b, m, n, k, k, n, ldc);
    TH_CHECK(same_bits(c1, c2, m * ldc), BRANCH " gemm_grid_a %zux%zux%zu: bits differ from the reference", m, n, k);
    free(src); free(plain); free(plain_a); free(at); free(b); free(c1); free(c2); free(bias);
}

int main(void)
{
    static const size_t shp[][3] = {
        /* seed net at batch 1: conv1 fwd, conv2 fwd, conv1 dw, conv2 dw, conv2 dcol */
        {16, 784, 25}, {32, 196, 400}, {25, 16, 784}, {400, 32, 196}, {400, 196, 32},
        /* narrow 4/8 net */
        {4, 784, 25}, {8, 196, 100}, {25, 4, 784}, {100, 8, 196}, {100, 196, 8},
        /* k 0 and 1 */
        {13, 8, 0}, {6, 4, 1}, {9, 17, 1}};
    static const size_t cols[] = {1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 31, 32, 33, 36, 47, 48, 52, 64, 68};
    unsigned t, m, j;

    for (t = 0; t < sizeof shp / sizeof shp[0]; t++)
        check(shp[t][0], shp[t][1], shp[t][2]);
    for (m = 1; m <= 17; m++)
        for (j = 0; j < sizeof cols / sizeof cols[0]; j++) {
            check(m, cols[j], 2 + m % 5);
            check_at(m, cols[j], 2 + m % 5);
        }
    /* the grid forms: the seed's conv shapes (more than one table chunk of
     * 256 rows), every row count to 17, columns around the vectors */
    check_grid(32, 196, 400);
    check_grid(400, 32, 196);
    check_grid(16, 784, 25);
    check_grid(300, 16, 9);
    for (m = 1; m <= 17; m++)
        for (j = 0; j < sizeof cols / sizeof cols[0]; j++)
            check_grid(m, cols[j], 1 + m % 7);
    /* rows past two vectors of them (the last columns with rows as lanes,
     * the rows left after them in the narrower tiles) */
    for (m = 32; m <= 70; m += 19)
        for (j = 0; j < sizeof cols / sizeof cols[0]; j++)
            check_grid(m, cols[j], 3 + m % 5);
    /* A stored (K, M), row counts between and past whole vectors, with
     * every kind of last columns; and the conv2 input gradient's channel
     * (25 rows of dcol, 196 positions, 32 output channels) */
    for (m = 18; m <= 60; m += 7)
        for (j = 0; j < sizeof cols / sizeof cols[0]; j++) {
            check_at(m, cols[j], 2 + m % 5);
            check_grid(m, cols[j], 1 + m % 7);
        }
    check_at(25, 196, 32);
    /* the lean plan's input gradients: dcol (IC*K*K, band) = w^T dy */
    check_at(400, 8, 32);
    check_at(25, 8, 16);
    check_at(100, 8, 8);
    check_at(13, 5, 0);
    printf("%s: the %s branch\n", TEST_SUITE, BRANCH);
    return th_report(TEST_SUITE);
}
