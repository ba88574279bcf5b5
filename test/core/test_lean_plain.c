/* test_lean_plain: the plain-C branches (what the Cortex-M4F and RV32 run)
 * of the one-plane convolution kernels, of tr_gemm_at and of BatchNorm's
 * lanes16 sums give the bits of the fast kernels, of the reference loop and
 * of the lanes16 definition written out here, on the host:
 * core/tr_layer_band.c, core/tr_kernel_gemm.c and core/tr_layer_bn.c are
 * compiled here with the vector-register macros removed, so their #if
 * takes the portable branch. */
#ifndef TEST_LEAN_VECTOR      /* as test_lean_isa_<isa>: the vector branch, built for <isa> */
#include "tc_plain.h"
#endif
#ifndef TEST_SUITE
#define TEST_SUITE "core_lean_plain"
#endif
#include "../../core/tr_layer_band.c"
#include "../../core/tr_kernel_gemm.c"
#include "../../core/tr_layer_bn.c"
#include "harness.h"
#include "tc_util.h"
#include <stdio.h>

static void plane_case(const unsigned c[8])
{
    struct tr_layer l = tc_layer(TR_LAYER_CONV2D, c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
    const unsigned n = c[0];
    const size_t nx = n * tc_in(&l), ny = n * tc_out(&l), P = (size_t)l.out_h * l.out_w;
    const size_t nw = (size_t)l.out_c * l.in_c * l.d.kernel * l.d.kernel, kk = nw / l.out_c;
    float *x = tc_rand(nx, -1, 1), *w = tc_rand(nw + l.out_c, -0.3f, 0.3f), *dy = tc_rand(ny, -1, 1);
    float *s = tc_zeros(tr_conv2d_scratch_floats(&l)), *y = tc_zeros(ny);
    float *dw = tc_zeros(nw + l.out_c), *dwp = tc_zeros(nw + l.out_c);
    float *xpad = tc_zeros(tr_conv2d_pad_floats(&l)), *plane = tc_zeros(P);
    unsigned i, oc, ok = 1;

    tr_conv2d_forward(y, x, w, w + nw, &l, n, s);
    tr_conv2d_backward(NULL, dw, dw + nw, dy, x, w, &l, n, s);
    for (oc = 0; oc < l.out_c; oc++)
        for (i = 0; i < n; i++) {
            const float *g = dy + ((size_t)i * l.out_c + oc) * P;
            tr_conv2d_pad(xpad, x + i * tc_in(&l), &l);
            tr_conv2d_plane(plane, xpad, w + oc * kk, w[nw + oc], &l);
            ok &= memcmp(plane, y + ((size_t)i * l.out_c + oc) * P, P * 4) == 0;
            tr_conv2d_plane_dw(dwp + oc * kk, xpad, g, &l);
        }
    TH_CHECK(ok, "plain plane conv %ux%ux%u k%u s%u p%u: forward", l.in_c, l.in_h, l.in_w,
             l.d.kernel, l.d.stride, l.d.pad);
    TH_CHECK(memcmp(dw, dwp, nw * 4) == 0, "plain plane conv %ux%ux%u k%u s%u p%u: dw",
             l.in_c, l.in_h, l.in_w, l.d.kernel, l.d.stride, l.d.pad);
    free(x); free(w); free(dy); free(s); free(y); free(dw); free(dwp); free(xpad); free(plane);
}

static void gemm_at_case(size_t m, size_t n, size_t k, int set)
{
    const size_t lda = m + 2, ldb = n + 3, ldc = n + 1;
    float *a = tc_rand((k ? k : 1) * lda, -1, 1), *b = tc_rand((k ? k : 1) * ldb, -1, 1);
    float *c1 = tc_rand(m * ldc, -1, 1), *c2 = tc_zeros(m * ldc);
    size_t i, j;
    memcpy(c2, c1, m * ldc * 4);
    if (set) {
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) {
                c1[i * ldc + j] = 1e30f;
                c2[i * ldc + j] = 0.0f;
            }
        tr_gemm_at_set(c1, a, b, m, n, k, lda, ldb, ldc);
    } else {
        tr_gemm_at(c1, a, b, m, n, k, lda, ldb, ldc);
    }
    tr_gemm_at_ref(c2, a, b, m, n, k, lda, ldb, ldc);
    TH_CHECK(memcmp(c1, c2, m * ldc * 4) == 0, "plain gemm_at%s %zux%zux%zu", set ? "_set" : "",
             m, n, k);
    free(a); free(b); free(c1); free(c2);
}

/* lanes16 as docs/DESIGN.md defines it: lane j adds f(16m+j) in order,
 * then the tail in order, then the lanes in order */
static float lanes16_def(const float *dy, const float *x, size_t n, float mean, float invstd,
                         int what)
{
    float acc[16] = {0}, s = 0.0f;
    size_t i, body = n - n % 16;
    for (i = 0; i < n; i++) {
        float v = what == 0 ? x[i] : what == 1 ? (x[i] - mean) * (x[i] - mean)
                : what == 2 ? dy[i] : dy[i] * ((x[i] - mean) * invstd);
        if (i < body)
            acc[i % 16] += v;
        else
            s += v;
    }
    for (i = 0; i < 16; i++)
        s += acc[i];
    return s;
}

static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void bn_lanes_case(size_t n)
{
    float *x = tc_rand(n, -2, 3), *dy = tc_rand(n, -1, 1), sb, sg;
    const float mean = 0.37f, invstd = 1.9f;
    tr_bn2d_plane_dsums(&sb, &sg, dy, x, n, mean, invstd);
    TH_CHECK(same_bits(tr_sum_lanes16(x, n), lanes16_def(dy, x, n, mean, invstd, 0)) &&
             same_bits(tr_bn2d_plane_sqdev(x, n, mean), lanes16_def(dy, x, n, mean, invstd, 1)) &&
             same_bits(sb, lanes16_def(dy, x, n, mean, invstd, 2)) &&
             same_bits(sg, lanes16_def(dy, x, n, mean, invstd, 3)),
             "plain BN lanes16 sums of %zu values", n);
    free(x); free(dy);
}

int main(void)
{
    static const unsigned cc[][8] = {   /* n, ic, h, w, oc, k, s, p */
        {2, 1, 28, 28, 16, 5, 1, 2}, {1, 3, 11, 9, 5, 3, 2, 1}, {2, 2, 13, 19, 3, 5, 1, 0},
        {1, 2, 6, 7, 2, 3, 1, 1},
        /* whole-plane tiles: rows left over (14 = 8 + 4 + 1 + 1), one vector a
         * row, rows wider than the tile, reads that would pass the slack */
        {1, 2, 14, 14, 3, 5, 1, 2}, {1, 1, 20, 30, 2, 3, 1, 1}, {1, 1, 5, 40, 2, 3, 1, 1},
        {1, 1, 9, 17, 2, 3, 1, 1}, {1, 3, 3, 3, 2, 3, 1, 1},
    };
    unsigned i;

#if defined(TEST_LEAN_VECTOR) && !TR_PLANE_TILES
    TH_CHECK(0, "the vector branch was not selected");
#elif !defined(TEST_LEAN_VECTOR) && defined(__SSE2__)
    TH_CHECK(0, "the plain branch was not selected");
#endif
    tr_rng_seed(&tc_rng, 5, 55);
    for (i = 0; i < sizeof cc / sizeof cc[0]; i++)
        plane_case(cc[i]);
    bn_lanes_case(784);
    bn_lanes_case(196);
    bn_lanes_case(49);
    bn_lanes_case(7);
    bn_lanes_case(0);
    for (i = 0; i < 2; i++) {
        gemm_at_case(400, 8, 32, (int)i);
        gemm_at_case(7, 13, 5, (int)i);
        gemm_at_case(25, 4, 9, (int)i);
        gemm_at_case(1, 3, 2, (int)i);
    }
    return th_report(TEST_SUITE);
}
