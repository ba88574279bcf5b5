/* test_lean_kernels: the lean plan's kernels give the fast kernels' bits.
 * tr_gemm_at against its reference loop; banded convolution (any band size, odd shapes, strides, paddings, dx in
 * place over x or absent) against tr_conv2d_forward/backward; the one-plane
 * convolution and weight gradient against the same; the one-plane pool
 * backward (in place for 2x2 windows) against tr_maxpool2d_[relu_]backward,
 * the fused BN pool planes (and the lean backward's kept windows: argmax
 * bytes, then dx routed from them alone) against BN's plane map and the
 * pool kernels on data full of ties. Every comparison is bitwise (memcmp). */
#include "harness.h"
#ifndef TEST_SUITE
#define TEST_SUITE "core_lean_kernels"
#endif
#include "tc_util.h"
#include <stdio.h>

static int bits_equal(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof(float)) == 0;
}

/* positive and negative zeros and repeats, so sign-of-zero slips show */
static float *rand_ties(size_t n)
{
    float *p = tc_rand(n, -1, 1);
    size_t i;
    for (i = 0; i < n; i++) {
        if (i % 7 == 3) p[i] = 0.0f;
        if (i % 11 == 5) p[i] = -0.0f;
        if (i % 13 == 1 && i) p[i] = p[i - 1];
    }
    return p;
}

/* tr_gemm_at (C += A^T B, A stored (K, M)) and its _set form against the
 * reference loop, bitwise, at tile-multiple and odd sizes with strided views */
static void gemm_at_cases(void)
{
    static const size_t c[][3] = {   /* m, n, k */
        {1, 1, 1}, {6, 8, 5}, {400, 8, 32}, {400, 16, 32}, {7, 37, 13}, {25, 12, 3},
        {13, 5, 9}, {9, 33, 0}, {3, 17, 1}, {12, 4, 7},
    };
    unsigned i;
    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        const size_t m = c[i][0], n = c[i][1], k = c[i][2];
        const size_t lda = m + 3, ldb = n + 5, ldc = n + 1;
        float *a = rand_ties((k ? k : 1) * lda), *b = rand_ties((k ? k : 1) * ldb);
        float *c1 = tc_rand(m * ldc, -1, 1), *c2 = tc_zeros(m * ldc);
        size_t r, q;
        memcpy(c2, c1, m * ldc * 4);
        tr_gemm_at(c1, a, b, m, n, k, lda, ldb, ldc);
        tr_gemm_at_ref(c2, a, b, m, n, k, lda, ldb, ldc);
        TH_CHECK(bits_equal(c1, c2, m * ldc), "gemm_at %zux%zux%zu", m, n, k);
        for (r = 0; r < m; r++)
            for (q = 0; q < n; q++) {
                c1[r * ldc + q] = 1e30f;   /* garbage the set form must not read */
                c2[r * ldc + q] = 0.0f;
            }
        tr_gemm_at_set(c1, a, b, m, n, k, lda, ldb, ldc);
        tr_gemm_at_ref(c2, a, b, m, n, k, lda, ldb, ldc);
        TH_CHECK(bits_equal(c1, c2, m * ldc), "gemm_at_set %zux%zux%zu", m, n, k);
        free(a); free(b); free(c1); free(c2);
    }
}

static void band_case(const unsigned c[8])
{
    struct tr_layer l = tc_layer(TR_LAYER_CONV2D, c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
    const unsigned n = c[0];
    const size_t nx = n * tc_in(&l), ny = n * tc_out(&l), P = (size_t)l.out_h * l.out_w;
    const size_t nw = (size_t)l.out_c * l.in_c * l.d.kernel * l.d.kernel;
    const size_t qs[] = {1, 3, 7, 8, 16, P - 1, P, P + 5};
    float *x = rand_ties(nx), *w = tc_rand(nw + l.out_c, -0.3f, 0.3f), *dy = rand_ties(ny);
    float *s = tc_zeros(tr_conv2d_scratch_floats(&l));
    float *y1 = tc_zeros(ny), *dx1 = tc_zeros(nx), *dw1 = tc_zeros(nw + l.out_c);
    float *y2 = tc_zeros(ny), *dx2 = tc_zeros(nx), *dw2 = tc_zeros(nw + l.out_c);
    unsigned qi;
    char what[96];

    snprintf(what, sizeof what, "conv n%u %ux%ux%u->%u k%u s%u p%u", n, l.in_c, l.in_h,
             l.in_w, l.out_c, l.d.kernel, l.d.stride, l.d.pad);
    w[nw] = -0.0f;   /* a -0 bias: the padding products must still be added */
    tr_conv2d_forward(y1, x, w, w + nw, &l, n, s);
    tr_conv2d_backward(dx1, dw1, dw1 + nw, dy, x, w, &l, n, s);
    for (qi = 0; qi < sizeof qs / sizeof qs[0]; qi++) {
        const size_t q = qs[qi] ? qs[qi] : 1;
        float *bs = tc_zeros(tr_conv2d_band_floats(&l, q)), *xin = tc_zeros(nx);
        memset(y2, 0xff, ny * 4);
        tr_conv2d_forward_band(y2, x, w, w + nw, &l, n, bs, q);
        TH_CHECK(bits_equal(y1, y2, ny), "%s band %zu: forward", what, q);
        memset(dx2, 0xff, nx * 4);
        tr_conv2d_backward_band(dx2, dw2, dw2 + nw, dy, x, w, &l, n, bs, q);
        TH_CHECK(bits_equal(dx1, dx2, nx), "%s band %zu: dx", what, q);
        TH_CHECK(bits_equal(dw1, dw2, nw + l.out_c), "%s band %zu: dw, db", what, q);
        memcpy(xin, x, nx * 4);   /* dx written over x */
        tr_conv2d_backward_band(xin, dw2, dw2 + nw, dy, xin, w, &l, n, bs, q);
        TH_CHECK(bits_equal(dx1, xin, nx) && bits_equal(dw1, dw2, nw + l.out_c),
                 "%s band %zu: dx in place over x", what, q);
        tr_conv2d_backward_band(NULL, dw2, dw2 + nw, dy, x, w, &l, n, bs, q);
        TH_CHECK(bits_equal(dw1, dw2, nw + l.out_c), "%s band %zu: dw without dx", what, q);
        free(bs);
        free(xin);
    }
    {   /* one plane at a time from the padded sample */
        float *xpad = tc_zeros(tr_conv2d_pad_floats(&l)), *plane = tc_zeros(P);
        float *dwp = tc_zeros(nw + l.out_c);
        unsigned i, oc, ok = 1, okw;
        size_t kk = nw / l.out_c;
        tr_conv2d_backward(NULL, dw1, dw1 + nw, dy, x, w, &l, n, s);
        for (oc = 0; oc < l.out_c; oc++) {
            for (i = 0; i < n; i++) {
                const float *g = dy + ((size_t)i * l.out_c + oc) * P;
                tr_conv2d_pad(xpad, x + i * tc_in(&l), &l);
                tr_conv2d_plane(plane, xpad, w + oc * kk, w[nw + oc], &l);
                ok &= bits_equal(plane, y1 + ((size_t)i * l.out_c + oc) * P, P);
                tr_conv2d_plane_dw(dwp + oc * kk, xpad, g, &l);
                dwp[nw + oc] += tr_sum_lanes16(g, P);
            }
        }
        okw = bits_equal(dw1, dwp, nw + l.out_c);
        TH_CHECK(ok, "%s: one plane at a time, forward", what);
        TH_CHECK(okw, "%s: one plane at a time, dw and db", what);
        free(xpad); free(plane); free(dwp);
    }
    free(x); free(w); free(dy); free(s); free(y1); free(dx1); free(dw1);
    free(y2); free(dx2); free(dw2);
}

/* the fused BN [ReLU] pool planes against tr_bn2d_plane_apply and the pool
 * kernels, bitwise, on one plane x (a map that makes -0, +0 ties and keeps
 * the NaN planted in x) */
static void bn_pool_plane_check(const float *x, const float *dy, const struct tr_layer *l,
                                int relu)
{
    const size_t hw = (size_t)l->in_h * l->in_w, ohw = (size_t)l->out_h * l->out_w;
    const struct tr_bn_plane bn = {0.25f, 1.5f, -0.75f, -0.0f, relu};   /* -0: ties of -0 and +0 */
    float *xs = tc_zeros(hw), *t = tc_zeros(hw), *y1 = tc_zeros(ohw), *y2 = tc_zeros(ohw);
    float *d1 = tc_zeros(hw), *d2 = tc_zeros(hw), *t2 = tc_zeros(hw);
    struct tr_layer one = *l;
    union { uint32_t u; float f; } nan;
    size_t j;

    nan.u = 0x7fc00321u;
    one.in_c = one.out_c = 1;
    for (j = 0; j < hw; j++)
        xs[j] = j % 29 == 3 ? nan.f : x[j] == 0.0f ? 0.25f : x[j];   /* 0.25: a -0 after BN */
    tr_bn2d_plane_apply(t, xs, hw, bn.mean, bn.invstd, bn.g, bn.b, relu);
    tr_maxpool2d_forward(y1, t, &one, 1);
    tr_maxpool2d_bn_forward_plane(y2, xs, &bn, &one, t2);
    tr_maxpool2d_backward_plane(d1, dy, t, y1, &one, relu);
    memset(d2, 0xff, hw * 4);
    tr_maxpool2d_bn_backward_plane(d2, dy, xs, y1, &bn, &one, t2);
    TH_CHECK(bits_equal(y1, y2, ohw) && bits_equal(d1, d2, hw),
             "BN pool plane %ux%u k%u s%u relu %d", l->in_h, l->in_w, l->d.kernel, l->d.stride,
             relu);
    if (tr_maxpool2d_in_place(l)) {     /* the argmax form: the same bits */
        uint8_t *arg = malloc(ohw + 1);
        memset(y2, 0xff, ohw * 4);
        memset(d2, 0xff, hw * 4);
        tr_maxpool2d_bn_forward_plane_arg(y2, arg, xs, &bn, &one, t2);
        tr_maxpool2d_backward_plane_arg(d2, dy, arg, y2, &one, relu);
        TH_CHECK(bits_equal(y1, y2, ohw) && bits_equal(d1, d2, hw),
                 "BN pool plane argmax %ux%u relu %d", l->in_h, l->in_w, relu);
        /* the lean backward's kept windows: the first pass's dx and max,
         * then the second pass's dx from the bytes alone (and without y) */
        memset(y2, 0xff, ohw * 4);
        memset(d2, 0xff, hw * 4);
        tr_maxpool2d_bn_plane_keep(d2, y2, arg, xs, dy, &bn, &one);
        TH_CHECK(bits_equal(y1, y2, ohw) && bits_equal(d1, d2, hw),
                 "kept windows, first pass %ux%u relu %d", l->in_h, l->in_w, relu);
        memset(d2, 0xff, hw * 4);
        tr_maxpool2d_plane_route(d2, dy, arg, &one);
        TH_CHECK(bits_equal(d1, d2, hw), "kept windows, second pass %ux%u relu %d", l->in_h,
                 l->in_w, relu);
        memset(d2, 0xff, hw * 4);
        tr_maxpool2d_bn_plane_keep(d2, NULL, arg, xs, dy, &bn, &one);
        TH_CHECK(bits_equal(d1, d2, hw), "kept windows without y %ux%u relu %d", l->in_h,
                 l->in_w, relu);
        free(arg);
    }
    free(xs); free(t); free(y1); free(y2); free(d1); free(d2); free(t2);
}

static void pool_plane_case(unsigned c, unsigned h, unsigned w, unsigned k, unsigned s)
{
    struct tr_layer l = tc_layer(TR_LAYER_MAXPOOL2D, c, h, w, 0, k, s, 0);
    const size_t nx = tc_in(&l), ny = tc_out(&l), hw = (size_t)h * w;
    const size_t ohw = (size_t)l.out_h * l.out_w;
    float *x = rand_ties(nx), *dy = rand_ties(ny), *y = tc_zeros(ny);
    float *d1 = tc_zeros(nx), *d2 = tc_zeros(nx), *t = tc_zeros(hw);
    int relu, ok;
    unsigned ch;

    tr_relu_inplace(x, nx);              /* a ReLU's output: ties at +0 */
    tr_maxpool2d_forward(y, x, &l, 1);
    for (relu = 0; relu < 2; relu++) {
        if (relu)
            tr_maxpool2d_relu_backward(d1, dy, x, y, &l, 1);
        else
            tr_maxpool2d_backward(d1, dy, x, y, &l, 1);
        ok = 1;
        for (ch = 0; ch < c; ch++) {
            const float *xp = x + ch * hw, *yp = y + ch * ohw, *dyp = dy + ch * ohw;
            memset(d2 + ch * hw, 0xff, hw * 4);
            tr_maxpool2d_backward_plane(d2 + ch * hw, dyp, xp, yp, &l, relu);
            if (tr_maxpool2d_in_place(&l)) {
                memcpy(t, xp, hw * 4);
                tr_maxpool2d_backward_plane(t, dyp, t, yp, &l, relu);
                ok &= bits_equal(t, d1 + ch * hw, hw);
            }
        }
        TH_CHECK(ok && bits_equal(d1, d2, nx), "pool plane %ux%u k%u s%u relu %d", h, w, k, s,
                 relu);
        bn_pool_plane_check(x, dy, &l, relu);
    }
    free(x); free(dy); free(y); free(d1); free(d2); free(t);
}

int main(void)
{
    static const unsigned cc[][8] = {   /* n, ic, h, w, oc, k, s, p */
        {2, 1, 28, 28, 16, 5, 1, 2}, {2, 16, 14, 14, 32, 5, 1, 2}, {1, 3, 11, 9, 5, 3, 2, 1},
        {3, 2, 10, 13, 7, 4, 3, 0}, {2, 5, 6, 6, 3, 1, 1, 0}, {1, 2, 5, 5, 3, 3, 1, 4}, {2, 3, 7, 12, 5, 3, 1, 1},
        {2, 3, 7, 5, 4, 2, 2, 1}, {1, 4, 9, 9, 9, 7, 1, 3}, {1, 1, 3, 8, 2, 3, 1, 0},
    };
    unsigned i;

    tr_rng_seed(&tc_rng, 77, 5);
    gemm_at_cases();
    for (i = 0; i < sizeof cc / sizeof cc[0]; i++)
        band_case(cc[i]);
    pool_plane_case(3, 28, 28, 2, 2);
    pool_plane_case(2, 7, 9, 2, 2);
    pool_plane_case(2, 14, 14, 2, 2);    /* rows of 7 and 8 windows: two rows a chunk */
    pool_plane_case(1, 16, 16, 2, 2);
    pool_plane_case(1, 13, 15, 2, 2);
    pool_plane_case(2, 5, 70, 2, 2);     /* 35 windows a row: 16, 16, 3 */
    pool_plane_case(2, 9, 8, 3, 2);
    pool_plane_case(1, 10, 11, 3, 3);
    pool_plane_case(2, 6, 7, 2, 1);
    return th_report(TEST_SUITE);
}
