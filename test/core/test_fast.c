/* test_fast: every fast kernel equals its plain reference within float
 * rounding: GEMM at odd and tile-multiple sizes, conv forward/backward at
 * the seed's shapes and at stride/padding variants, linear, and the whole
 * seed ConvNet (logits, loss, every gradient, BN running stats).
 * Tolerance: |fast - ref| <= atol + rtol*|ref| with rtol 1e-4 and atol 1e-5
 * times the largest |ref| of the tensor (sums of hundreds of terms are
 * reordered, so each element carries rounding relative to the tensor's
 * scale, not to its own possibly cancelled value). */
#include "harness.h"
#include "tc_util.h"

#ifndef TEST_SUITE
#define TEST_SUITE "core_fast"
#endif
#include <stdio.h>

static void same(const char *what, const float *fast, const float *ref, size_t n)
{
    double w = tc_worst(fast, ref, n, 1e-5 * tc_maxabs(ref, n) + 1e-30, 1e-4);
    TH_CHECK(w <= 1.0, "%s: fast vs reference worst %.3g of tolerance", what, w);
}

static void gemm_cases(void)
{
    static const size_t c[][3] = {   /* m, n, k */
        {1, 1, 1}, {4, 16, 8}, {7, 37, 13}, {16, 784, 25}, {32, 196, 400},
        {400, 32, 196}, {5, 15, 3}, {9, 33, 0}, {3, 17, 1},
    };
    unsigned i;
    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t m = c[i][0], n = c[i][1], k = c[i][2];
        size_t lda = k + 3, ldb = n + 5, ldc = n + 1;   /* strided views */
        float *a = tc_rand(m * lda, -1, 1), *b = tc_rand((k ? k : 1) * ldb, -1, 1);
        float *c1 = tc_rand(m * ldc, -1, 1), *c2 = tc_zeros(m * ldc);
        char what[64];
        memcpy(c2, c1, m * ldc * sizeof(float));
        tr_gemm(c1, a, b, m, n, k, lda, ldb, ldc);
        tr_gemm_ref(c2, a, b, m, n, k, lda, ldb, ldc);
        snprintf(what, sizeof what, "gemm %zux%zux%zu", m, n, k);
        same(what, c1, c2, m * ldc);   /* the padding columns must be untouched too */
        {   /* overwrite form: garbage in C must not leak into the result */
            size_t r, q;
            for (r = 0; r < m; r++)
                for (q = 0; q < n; q++) {
                    c1[r * ldc + q] = 1e30f;
                    c2[r * ldc + q] = 0.0f;
                }
            tr_gemm_set(c1, a, b, m, n, k, lda, ldb, ldc);
            tr_gemm_ref(c2, a, b, m, n, k, lda, ldb, ldc);
            same("  gemm_set", c1, c2, m * ldc);
        }
        free(a); free(b); free(c1); free(c2);
    }
}

static void conv_cases(void)
{
    static const unsigned c[][8] = {   /* n, ic, h, w, oc, k, s, p */
        {3, 1, 28, 28, 16, 5, 1, 2}, {2, 16, 14, 14, 32, 5, 1, 2}, {1, 3, 11, 9, 5, 3, 2, 1},
        {4, 2, 10, 13, 7, 4, 3, 0}, {2, 5, 6, 6, 3, 1, 1, 0}, {1, 2, 5, 5, 3, 3, 1, 4}, {2, 3, 7, 12, 5, 3, 1, 1},
        /* "same" convolutions whose rows end inside a vector, fill it, or are shorter
         * than the kernel */
        {2, 3, 9, 17, 4, 3, 1, 1}, {1, 2, 4, 16, 3, 5, 1, 2}, {1, 2, 3, 3, 2, 7, 1, 3},
        {2, 1, 5, 40, 2, 3, 1, 1},
        /* one input channel, 16 output channels a vector (3x3, two vectors; input
         * rows padded past 32) */
        {2, 1, 12, 20, 32, 3, 1, 1}, {2, 1, 6, 40, 16, 5, 1, 2},
        /* dy's transpose with the bias sums: fewer than 16 positions; 28, a block
         * of 8 past the last 16 */
        {1, 2, 3, 3, 8, 3, 1, 1}, {2, 3, 4, 7, 24, 3, 1, 1},
    };
    unsigned i;
    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct tr_layer l = tc_layer(TR_LAYER_CONV2D, c[i][1], c[i][2], c[i][3], c[i][4],
                                     c[i][5], c[i][6], c[i][7]);
        unsigned n = c[i][0];
        size_t nx = n * tc_in(&l), ny = n * tc_out(&l);
        size_t nw = (size_t)l.out_c * l.in_c * l.d.kernel * l.d.kernel;
        float *x = tc_rand(nx, -1, 1), *w = tc_rand(nw + l.out_c, -0.3f, 0.3f);
        float *dy = tc_rand(ny, -1, 1), *s = tc_zeros(tr_conv2d_scratch_floats(&l));
        float *y1 = tc_zeros(ny), *y2 = tc_zeros(ny), *dx1 = tc_zeros(nx), *dx2 = tc_zeros(nx);
        float *dw1 = tc_zeros(nw + l.out_c), *dw2 = tc_zeros(nw + l.out_c);
        char what[96];
        snprintf(what, sizeof what, "conv n%u %ux%ux%u->%u k%u s%u p%u", n, l.in_c, l.in_h,
                 l.in_w, l.out_c, l.d.kernel, l.d.stride, l.d.pad);
        tr_conv2d_forward(y1, x, w, w + nw, &l, n, s);
        tr_conv2d_forward_ref(y2, x, w, w + nw, &l, n);
        same(what, y1, y2, ny);
        tr_conv2d_backward(dx1, dw1, dw1 + nw, dy, x, w, &l, n, s);
        tr_conv2d_backward_ref(dx2, dw2, dw2 + nw, dy, x, w, &l, n);
        same("  dx", dx1, dx2, nx);
        same("  dw", dw1, dw2, nw);
        same("  db", dw1 + nw, dw2 + nw, l.out_c);
        /* dx NULL: weight gradients still the same */
        tr_conv2d_backward(NULL, dw1, dw1 + nw, dy, x, w, &l, n, s);
        same("  dw without dx", dw1, dw2, nw + l.out_c);
        free(x); free(w); free(dy); free(s); free(y1); free(y2); free(dx1); free(dx2);
        free(dw1); free(dw2);
    }
}

static void linear_cases(void)
{
    static const unsigned c[][3] = {{1, 1568, 10}, {5, 15, 3}, {3, 33, 7}};
    unsigned i;
    for (i = 0; i < 3; i++) {
        struct tr_layer l = tc_layer(TR_LAYER_LINEAR, c[i][1], 1, 1, c[i][2], 0, 0, 0);
        unsigned n = c[i][0];
        float *x = tc_rand(n * tc_in(&l), -1, 1), *w = tc_rand(tc_in(&l) * l.out_c, -1, 1);
        float *b = tc_rand(l.out_c, -1, 1), *y1 = tc_zeros(n * l.out_c), *y2 = tc_zeros(n * l.out_c);
        tr_linear_forward(y1, x, w, b, &l, n);
        tr_linear_forward_ref(y2, x, w, b, &l, n);
        same("linear forward", y1, y2, n * l.out_c);
        free(x); free(w); free(b); free(y1); free(y2);
    }
}

static float quiet_nan(void)
{
    union { uint32_t u; float f; } b;
    b.u = 0x7fc00123u;
    return b.f;
}

/* The input gradient's order, written out: each dx element is +0 plus,
 * for its taps (ki, kj) ascending that read an output inside the image,
 * the tap's dcol value (+0 plus w * dy over the output channels
 * ascending), which is what tr_gemm_set and col2im compute on every
 * target. The fast kernel must give these bits: at the seed's conv2, at
 * channel counts that leave part of a tile, and with -0, an infinite and
 * a NaN weight (dx is NaN around them, the same NaNs). */
static void dx_order_case(const unsigned c[7], int odd)
{
    struct tr_layer l = tc_layer(TR_LAYER_CONV2D, c[1], c[2], c[3], c[4], c[5], 1, c[6]);
    const unsigned n = c[0], IC = l.in_c, H = l.in_h, W = l.in_w, OC = l.out_c, K = l.d.kernel;
    const long P = l.d.pad;
    size_t nx = n * tc_in(&l), ny = n * tc_out(&l), nw = (size_t)OC * IC * K * K, q;
    float *x = tc_rand(nx, -1, 1), *w = tc_rand(nw + OC, -0.3f, 0.3f), *dy = tc_rand(ny, -1, 1);
    float *s = tc_zeros(tr_conv2d_scratch_floats(&l)), *dx = tc_zeros(nx), *dx2 = tc_zeros(nx);
    float *dw = tc_zeros(nw + OC);
    unsigned i, ic, ih, iw, ki, kj, oc;
    char what[96];

    if (odd) {
        w[1] = -0.0f;
        w[nw / 2] = 1.0f / 0.0f;
        w[nw - 3] = quiet_nan();
        for (q = 0; q < ny; q += 5)
            dy[q] = q % 2 ? 0.0f : -0.0f;
    }
    for (i = 0; i < n; i++)
        for (ic = 0; ic < IC; ic++)
            for (ih = 0; ih < H; ih++)
                for (iw = 0; iw < W; iw++) {
                    float acc = 0.0f;
                    for (ki = 0; ki < K; ki++)
                        for (kj = 0; kj < K; kj++) {
                            const long oh = (long)ih - (long)ki + P, ow = (long)iw - (long)kj + P;
                            float t = 0.0f;
                            if (oh < 0 || oh >= (long)H || ow < 0 || ow >= (long)W)
                                continue;
                            for (oc = 0; oc < OC; oc++)
                                t += w[((oc * IC + ic) * K + ki) * K + kj] *
                                     dy[((i * OC + oc) * H + (size_t)oh) * W + (size_t)ow];
                            acc += t;
                        }
                    dx2[((i * IC + ic) * H + ih) * W + iw] = acc;
                }
    tr_conv2d_backward(dx, dw, dw + nw, dy, x, w, &l, n, s);
    snprintf(what, sizeof what, "conv %ux%ux%u->%u k%u p%u%s", IC, H, W, OC, K, c[6],
             odd ? " (-0, inf, NaN)" : "");
    TH_CHECK(memcmp(dx, dx2, nx * sizeof *dx) == 0, "%s: dx has col2im's bits", what);
    free(x); free(w); free(dy); free(s); free(dx); free(dx2); free(dw);
}

static void dx_order_cases(void)
{
    /* n 3: two samples side by side, then one beside the slot the pair left
     * (infinite and NaN products there must not reach it) */
    static const unsigned c[][7] = {   /* n, ic, h, w, oc, k, p ("same", stride 1) */
        {3, 16, 14, 14, 32, 5, 2}, {3, 4, 14, 14, 8, 5, 2}, {1, 11, 9, 17, 5, 3, 1},
        {2, 3, 5, 40, 2, 3, 1}, {1, 9, 6, 6, 7, 5, 2}, {1, 2, 3, 3, 2, 7, 3},
    };
    unsigned i;
    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        dx_order_case(c[i], 0);
        dx_order_case(c[i], 1);
    }
}

/* The 2x2 stride-2 pool has its own straight-line kernels: compare them
 * bitwise with plain loops written here (first max in row-major order), on
 * ReLU-like data full of ties at 0, odd sizes included. */
static void pool_case(unsigned n, unsigned c, unsigned h, unsigned w)
{
    struct tr_layer l = tc_layer(TR_LAYER_MAXPOOL2D, c, h, w, 0, 2, 2, 0);
    size_t nx = n * tc_in(&l), ny = n * tc_out(&l), p;
    float *x = tc_rand(nx, -1, 1), *dy = tc_rand(ny, -1, 1);
    float *y = tc_zeros(ny), *dx = tc_zeros(nx), *y2 = tc_zeros(ny), *dx2 = tc_zeros(nx);
    unsigned oh, ow, i, j;
    char what[64];
    for (p = 0; p < nx; p++)
        if (x[p] < 0.3f) x[p] = p % 3 ? 0.0f : -0.0f;   /* ~65% zeros: many ties, +0 vs -0 */
    for (p = 0; p < nx; p += 37)
        x[p] = quiet_nan();                       /* NaN: the order of the compares shows */
    for (p = 0; p < nx; p++)
        dx2[p] = 0.0f;
    for (p = 0; p < (size_t)n * c; p++)
        for (oh = 0; oh < l.out_h; oh++)
            for (ow = 0; ow < l.out_w; ow++) {
                const float *win = x + p * h * w + (2 * oh) * w + 2 * ow;
                unsigned best = 0;
                for (i = 0; i < 2; i++)
                    for (j = 0; j < 2; j++)
                        if (win[i * w + j] > win[(best / 2) * w + best % 2])
                            best = i * 2 + j;
                y2[(p * l.out_h + oh) * l.out_w + ow] = win[(best / 2) * w + best % 2];
                dx2[p * h * w + (2 * oh + best / 2) * w + 2 * ow + best % 2] =
                    dy[(p * l.out_h + oh) * l.out_w + ow];
            }
    tr_maxpool2d_forward(y, x, &l, n);
    for (p = 0; p < nx; p++) dx[p] = 7.0f;     /* backward must overwrite all */
    tr_maxpool2d_backward(dx, dy, x, y, &l, n);
    snprintf(what, sizeof what, "pool2 n%u c%u %ux%u", n, c, h, w);
    TH_CHECK(memcmp(y, y2, ny * sizeof *y) == 0, "%s forward bitwise", what);
    TH_CHECK(memcmp(dx, dx2, nx * sizeof *dx) == 0, "%s backward bitwise", what);
    free(x); free(dy); free(y); free(dx); free(y2); free(dx2);
}

/* The fused BN+ReLU forward and pool+ReLU backward give the bits of the
 * separate kernels run one after the other. */
static void fused_cases(void)
{
    static const unsigned pc[][6] = {{3, 16, 28, 28, 2, 2}, {2, 3, 7, 9, 2, 2}, {2, 2, 9, 8, 3, 2}};
    struct tr_layer b = tc_layer(TR_LAYER_BATCHNORM2D, 5, 6, 7, 0, 0, 0, 0);
    size_t nb = 3 * tc_in(&b), i;
    float *x = tc_rand(nb, -1, 1), *gb = tc_rand(10, -1, 1);
    float *y1 = tc_zeros(nb), *y2 = tc_zeros(nb), s1[10], s2[10], r1[10], r2[10];
    unsigned t;
    for (i = 0; i < 10; i++) r1[i] = r2[i] = (float)i;
    tr_bn2d_forward_train(y1, s1, r1, x, gb, &b, 3);
    tr_relu_inplace(y1, nb);
    tr_bn2d_forward_train_relu(y2, s2, r2, x, gb, &b, 3);
    TH_CHECK(memcmp(y1, y2, nb * 4) == 0 && memcmp(s1, s2, 40) == 0 && memcmp(r1, r2, 40) == 0,
             "BN+ReLU train fused == separate, bitwise");
    tr_bn2d_forward_eval(y1, x, gb, r1, &b, 3);
    tr_relu_inplace(y1, nb);
    tr_bn2d_forward_eval_relu(y2, x, gb, r1, &b, 3);
    TH_CHECK(memcmp(y1, y2, nb * 4) == 0, "BN+ReLU eval fused == separate, bitwise");
    free(x); free(gb); free(y1); free(y2);
    for (t = 0; t < 3; t++) {
        struct tr_layer l = tc_layer(TR_LAYER_MAXPOOL2D, pc[t][1], pc[t][2], pc[t][3], 0,
                                     pc[t][4], pc[t][5], 0);
        unsigned n = pc[t][0];
        size_t nx = n * tc_in(&l), ny = n * tc_out(&l);
        float *px = tc_rand(nx, -1, 1), *dy = tc_rand(ny, -1, 1), *y = tc_zeros(ny);
        float *d1 = tc_zeros(nx), *d2 = tc_zeros(nx), *d3 = tc_zeros(nx);
        tr_relu_inplace(px, nx);                /* the pool's input is a ReLU's output */
        tr_maxpool2d_forward(y, px, &l, n);
        tr_maxpool2d_backward(d1, dy, px, y, &l, n);
        tr_relu_backward(d2, d1, px, nx);
        tr_maxpool2d_relu_backward(d3, dy, px, y, &l, n);
        TH_CHECK(memcmp(d2, d3, nx * 4) == 0, "pool k%u s%u + ReLU backward fused == separate",
                 l.d.kernel, l.d.stride);
        free(px); free(dy); free(y); free(d1); free(d2); free(d3);
    }
}

static void model_case(unsigned batch, unsigned n)
{
    static uint8_t a1[16u << 20] TR_ARENA_ALIGNED, a2[16u << 20] TR_ARENA_ALIGNED;
    struct tr_model_desc d;
    struct tr_model f, r;
    float *x, lf, lr;
    uint8_t lab[16];
    unsigned i;
    int ok;

    tr_model_desc_convnet(&d, 16, 32, 10);
    ok = tr_model_init(&f, &d, batch, a1, sizeof a1) == 0 &&
         tr_model_init(&r, &d, batch, a2, sizeof a2) == 0;
    TH_CHECK(ok, "seed model init");
    if (!ok) return;
    tr_model_init_params(&f, 3);
    tr_model_init_params(&r, 3);
    r.kernels = TR_KERNELS_REF;
    x = tc_rand(n * 784, 0, 1);
    for (i = 0; i < n; i++) lab[i] = (uint8_t)(i % 10);
    tr_model_forward(&f, x, n, 1);
    tr_model_forward(&r, x, n, 1);
    same("seed net logits", tr_model_logits(&f), tr_model_logits(&r), n * 10);
    tr_model_loss(&f, lab, &lf, NULL);
    tr_model_loss(&r, lab, &lr, NULL);
    TH_CHECK(fabsf(lf - lr) <= 1e-5f * fabsf(lr), "loss %g vs %g", lf, lr);
    tr_model_backward(&f);
    tr_model_backward(&r);
    for (i = 0; i < f.n_layers; i++) {
        char what[48];
        if (!f.layer[i].p_len) continue;
        snprintf(what, sizeof what, "seed net grads of layer %u (n=%u)", i, n);
        same(what, f.grads + f.layer[i].p_off, r.grads + r.layer[i].p_off, f.layer[i].p_len);
    }
    same("seed net BN running stats", f.buffers, r.buffers, f.n_buffers);
    tr_model_forward(&f, x, n, 0);
    tr_model_forward(&r, x, n, 0);
    same("seed net eval logits", tr_model_logits(&f), tr_model_logits(&r), n * 10);
    free(x);
}

/* ReLU's backward against its definition (dy where y > 0, else +0),
 * bitwise, at every count to 37 (the vector loops' bodies and tails), with
 * y and dy holding -0, +0, NaN and infinities */
static void relu_backward_cases(void)
{
    static const uint32_t special[] = {0x80000000u, 0x00000000u, 0x7fc00001u, 0xffc00002u,
                                       0x7f800000u, 0xff800000u, 0x00000001u, 0x80000001u};
    float y[37], dy[37], dx[37], want[37];
    unsigned n, i;
    int ok = 1;

    for (n = 1; n <= 37; n++) {
        for (i = 0; i < n; i++) {
            const uint32_t a = special[(i * 3 + n) % 8], b = special[(i * 5 + 1) % 8];
            if (i % 3 == 0)
                memcpy(&y[i], &a, 4);
            else
                y[i] = tr_rng_uniform(&tc_rng, -1.0f, 1.0f);
            if (i % 4 == 1)
                memcpy(&dy[i], &b, 4);
            else
                dy[i] = tr_rng_uniform(&tc_rng, -1.0f, 1.0f);
            want[i] = y[i] > 0.0f ? dy[i] : 0.0f;
            dx[i] = -1.0f;
        }
        tr_relu_backward(dx, dy, y, n);
        ok &= memcmp(dx, want, n * 4) == 0;
    }
    TH_CHECK(ok, "ReLU backward == dy where y > 0 else +0, bitwise, counts 1..37");
}

int main(void)
{
    tr_rng_seed(&tc_rng, 99, 4);
    gemm_cases();
    conv_cases();
    dx_order_cases();
    linear_cases();
    pool_case(3, 16, 28, 28);
    pool_case(2, 3, 7, 9);
    pool_case(1, 2, 14, 14);
    pool_case(2, 5, 5, 34);
    pool_case(1, 3, 6, 70);
    fused_cases();
    relu_backward_cases();
    model_case(6, 6);
    model_case(8, 5);
    return th_report(TEST_SUITE);
}
