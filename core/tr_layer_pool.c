/* tinyring: MaxPool2d (window k, stride s, no padding, floor mode). */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_layer_kernels.h"
#include "tr_util.h"

/* y (n, C, OH, OW) = max over each k x k window of x (n, C, H, W). The first
 * maximum in row-major window order wins, like PyTorch (val > max). */
/* pool2_row_forward, pool2_row_inplace and the fused BN planes: below
 * (one #if chooses them) */
static void pool2_row_forward(float *restrict y, const float *restrict x0,
                              const float *restrict x1, unsigned ow_n);
static void pool2_row_inplace(float *restrict t0, float *restrict t1,
                              const float *restrict y, const float *restrict dy,
                              unsigned ow_n, int relu);

void tr_maxpool2d_forward(float *restrict y, const float *restrict x,
                          const struct tr_layer *l, unsigned n)
{
    const unsigned k = l->d.kernel, s = l->d.stride;
    const unsigned H = l->in_h, W = l->in_w, OH = l->out_h, OW = l->out_w;
    const size_t planes = (size_t)n * l->in_c;
    size_t p;
    unsigned oh, ow, i, j;

    if (k == 2 && s == 2) {
        for (p = 0; p < planes; p++)
            for (oh = 0; oh < OH; oh++)
                pool2_row_forward(y + (p * OH + oh) * OW, x + (p * H + 2u * oh) * W,
                                  x + (p * H + 2u * oh + 1u) * W, OW);
        return;
    }
    for (p = 0; p < planes; p++) {
        const float *xp = x + p * H * W;
        float *yp = y + p * OH * OW;
        for (oh = 0; oh < OH; oh++) {
            for (ow = 0; ow < OW; ow++) {
                const float *win = xp + (size_t)oh * s * W + (size_t)ow * s;
                float m = win[0];
                for (i = 0; i < k; i++)
                    for (j = 0; j < k; j++)
                        if (win[i * W + j] > m)
                            m = win[i * W + j];
                yp[oh * OW + ow] = m;
            }
        }
    }
}

/* the inputs of plane dx (H, W) no 2x2 stride-2 window covers (a last
 * odd column or row): +0 */
static inline void pool2_edges(float *dx, const struct tr_layer *l)
{
    const unsigned H = l->in_h, W = l->in_w, OH = l->out_h, OW = l->out_w;
    unsigned oh, w;

    for (oh = 0; W > 2u * OW && oh < OH; oh++)
        for (w = 2u * OW; w < W; w++)
            dx[2u * oh * W + w] = dx[(2u * oh + 1u) * W + w] = 0.0f;
    for (w = 2u * OH * W; w < H * W; w++)
        dx[w] = 0.0f;
}

/* One output row of a 2x2 stride-2 window: input rows x0, x1 get dy or +0.
 * The first of the four (row-major) equal to the max wins. It is found with
 * integer compares of the bits (the max is a copy of the first element
 * attaining it, and every element before that one compares less) turned
 * into all-ones/all-zeros masks over dy's bits: straight-line integer code,
 * no data-dependent branches, vectorisable. Separate restrict rows so the
 * compiler needs no aliasing checks. */
static void pool2_row(float *restrict d0, float *restrict d1, const float *restrict x0,
                      const float *restrict x1, const float *restrict y,
                      const float *restrict dy, unsigned ow_n, int relu)
{
    unsigned ow;

    for (ow = 0; ow < ow_n; ow++) {
        /* with relu: the ReLU before the pool passes dy only where max > 0 */
        const uint32_t gate = relu ? 0u - (uint32_t)(y[ow] > 0.0f) : ~0u;
        const uint32_t m = tr_float_bits(y[ow]), g = tr_float_bits(dy[ow]) & gate;
        const uint32_t a = 0u - (uint32_t)(tr_float_bits(x0[2 * ow]) == m);
        const uint32_t b = (0u - (uint32_t)(tr_float_bits(x0[2 * ow + 1]) == m)) & ~a;
        const uint32_t c = (0u - (uint32_t)(tr_float_bits(x1[2 * ow]) == m)) & ~(a | b);
        const uint32_t e = ~(a | b | c);
        d0[2 * ow] = tr_bits_float(g & a);
        d0[2 * ow + 1] = tr_bits_float(g & b);
        d1[2 * ow] = tr_bits_float(g & c);
        d1[2 * ow + 1] = tr_bits_float(g & e);
    }
}

/* 2x2 windows, stride 2: each input written once; a last odd row or
 * column (outside every window) gets 0. */
static void pool2_backward(float *restrict dx, const float *restrict dy,
                           const float *restrict x, const float *restrict y,
                           const struct tr_layer *l, unsigned n, int relu)
{
    const unsigned H = l->in_h, W = l->in_w, OH = l->out_h, OW = l->out_w;
    const size_t planes = (size_t)n * l->in_c;
    size_t p;
    unsigned oh;

    for (p = 0; p < planes; p++) {
        const float *xp = x + p * H * W;
        float *dxp = dx + p * H * W;
        for (oh = 0; oh < OH; oh++) {
            float *d0 = dxp + 2u * oh * W, *d1 = d0 + W;
            pool2_row(d0, d1, xp + 2u * oh * W, xp + (2u * oh + 1u) * W,
                      y + (p * OH + oh) * OW, dy + (p * OH + oh) * OW, OW, relu);
        }
        pool2_edges(dxp, l);
    }
}

/* dx (n, C, H, W) = dy routed to each window's argmax, found again as the
 * first element equal to y. Overlapping windows (s < k) accumulate. */
static void pool_backward(float *restrict dx, const float *restrict dy,
                          const float *restrict x, const float *restrict y,
                          const struct tr_layer *l, unsigned n, int relu)
{
    const unsigned k = l->d.kernel, s = l->d.stride;
    const unsigned H = l->in_h, W = l->in_w, OH = l->out_h, OW = l->out_w;
    const size_t planes = (size_t)n * l->in_c;
    size_t p, q;
    unsigned oh, ow, i, j;

    if (k == 2 && s == 2) {   /* the seed's pool: every input written once */
        pool2_backward(dx, dy, x, y, l, n, relu);
        return;
    }
    for (q = 0; q < planes * H * W; q++)
        dx[q] = 0.0f;
    for (p = 0; p < planes; p++) {
        const float *xp = x + p * H * W;
        float *dxp = dx + p * H * W;
        const float *yp = y + p * OH * OW, *dyp = dy + p * OH * OW;
        for (oh = 0; oh < OH; oh++) {
            for (ow = 0; ow < OW; ow++) {
                size_t base = (size_t)oh * s * W + (size_t)ow * s;
                float m = yp[oh * OW + ow];
                int found = 0;
                for (i = 0; i < k && !found; i++)
                    for (j = 0; j < k && !found; j++)
                        if (xp[base + i * W + j] == m) {
                            if (!relu || m > 0.0f)
                                dxp[base + i * W + j] += dyp[oh * OW + ow];
                            found = 1;
                        }
            }
        }
    }
}

void tr_maxpool2d_backward(float *dx, const float *dy, const float *x, const float *y,
                           const struct tr_layer *l, unsigned n)
{
    pool_backward(dx, dy, x, y, l, n, 0);
}

void tr_maxpool2d_relu_backward(float *dx, const float *dy, const float *x, const float *y,
                                const struct tr_layer *l, unsigned n)
{
    pool_backward(dx, dy, x, y, l, n, 1);
}

int tr_maxpool2d_in_place(const struct tr_layer *l)
{
    return l->d.kernel == 2 && l->d.stride == 2;
}

    /* with vector rows: the even rows, then the odd ones, so a row's stores
     * are not followed by loads right next to them (its masked stores may
     * reach into the next row pair, whose loads would then wait for them) */

/* the fused BN planes as their parts: apply into t, then the pool */
static void bn_forward_plane_parts(float *y, const float *x, const struct tr_bn_plane *bn,
                                   const struct tr_layer *l, float *t)
{
    struct tr_layer one = *l;

    one.in_c = one.out_c = 1;
    tr_bn2d_plane_apply(t, x, (size_t)l->in_h * l->in_w, bn->mean, bn->invstd, bn->g, bn->b,
                        bn->relu);
    tr_maxpool2d_forward(y, t, &one, 1);
}

static void bn_backward_plane_parts(float *dx, const float *dy, const float *x,
                                    const float *y, const struct tr_bn_plane *bn,
                                    const struct tr_layer *l, float *t)
{
    tr_bn2d_plane_apply(t, x, (size_t)l->in_h * l->in_w, bn->mean, bn->invstd, bn->g, bn->b,
                        bn->relu);
    tr_maxpool2d_backward_plane(dx, dy, t, y, l, bn->relu);
}

/* ---- the lean plan's kept windows (2x2 stride 2) ----------------------
 * The first pass makes each window's BN values from x (16 windows at a
 * time with AVX-512, chunk_keep; one at a time, bn_window_max, else), keeps
 * its argmax (TR_POOL_SHUT where the ReLU's gate is shut: the max is
 * not > 0) and writes dx: dy at the argmax, +0 elsewhere, the bits of
 * tr_maxpool2d_bn_backward_plane. The second pass routes dy again from the
 * bytes alone. */

/* ---- the 2x2 stride-2 rows: one #if chooses their implementation ------
 * (tr_pool_avx512.h; else the plain rows, tr_pool_rows.h, with the vector
 * hosts' planes, tr_pool_vec.h, or the scalar targets', tr_pool_plain.h).
 * AVX-512: 16 windows at a time. A row pair's inputs are loaded whole
 * (masked loads: nothing past the 2*ow_n inputs of each row is read),
 * split into each window's four elements by permutes, and compared in
 * the same order as the plain form (the same selections, so the same
 * bits); the backward's gradients are interleaved back and stored by
 * masked stores (in place: nothing past the row's windows is written).
 * GCC leaves the plain rows (7 or 14 windows for the seed) scalar. */
#if defined(__GNUC__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include "tr_pool_avx512.h"
#elif TR_HOST_VECTORS
#include "tr_pool_rows.h"
#include "tr_pool_vec.h"
#else
#include "tr_pool_rows.h"
#include "tr_pool_plain.h"
#endif

void tr_maxpool2d_backward_plane(float *dx, const float *dy, const float *x, const float *y,
                                 const struct tr_layer *l, int relu)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    struct tr_layer one = *l;
    unsigned r, oh;

    if (!tr_maxpool2d_in_place(l) || dx != x) {
        one.in_c = one.out_c = 1;
        pool_backward(dx, dy, x, y, &one, 1, relu);
        return;
    }
    for (r = 0; r < POOL2_PASSES; r++)
        for (oh = r; oh < OH; oh += POOL2_PASSES) {
            float *t0 = dx + 2u * oh * W, *t1 = t0 + W;
            pool2_row_inplace(t0, t1, y + (size_t)oh * OW, dy + (size_t)oh * OW, OW, relu);
        }
    pool2_edges(dx, l);
}
