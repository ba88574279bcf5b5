/* tinyring: Conv2d (square kernel K, stride S, zero padding P).
 *
 * Reference: direct loops over every output and kernel tap.
 * Fast: per sample, im2col the input into col (IC*K*K, OH*OW) and run GEMMs
 *   forward   y (OC, P)      = w (OC, IC*K*K) * col            + b
 *   dweight   dw^T (ICKK,OC) += col (ICKK, P) * dy^T (P, OC)
 *   dinput    dcol (ICKK, P) = w^T (ICKK, OC) * dy (OC, P), then col2im
 * where P = OH*OW. Every GEMM has a contiguous inner dimension.
 * Where the target has vector registers, a stride-1 "same" convolution
 * builds no col: the col rows of the K taps (ic, ki, kj) with the same
 * (ic, kj) are one array of shifted input rows read at offsets ki*W (the
 * shifted planes, K times smaller than col), and the forward and weight
 * gradient GEMMs read their rows from it on a grid (tr_gemm_at_grid with
 * w^T, tr_gemm_grid_a): the same products in the same order, so the same bits.
 * The planes are made for a group of input channels at a time, each group's
 * GEMM right after (group_channels). Its input gradient makes no dcol
 * either: each tap's dcol values are summed into dx in registers
 * (dx_direct), in col2im's order. With AVX-512, a convolution with one
 * input channel makes no planes for its weight gradient: the K*K sums stay
 * in registers and read the padded input in place (dw1_sample). */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_layer_kernels.h"

/* the shifted planes where the GEMM has vector tiles (tr_kernel_gemm.c) */
#define TR_CONV_SHIFTED TR_HOST_VECTORS
/* im2col and col2im of a stride-1 "same" convolution as one long select
 * through a column mask per kj (shifted_copy, shifted_add): where vectors
 * make that a few operations per 16 floats. On a scalar FPU, im2col copies
 * the same span without a mask (tr_copy_floats) and then zeroes each row's
 * few wrapped columns, and col2im adds each output row's valid columns:
 * per element a load and a store (or an add), not the mask's compare and
 * select. */
#define TR_CONV_MASKS TR_CONV_SHIFTED

void tr_conv2d_forward_ref(float *y, const float *x, const float *w, const float *b,
                           const struct tr_layer *l, unsigned n)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w;
    const unsigned OC = l->out_c, OH = l->out_h, OW = l->out_w;
    const unsigned K = l->d.kernel, S = l->d.stride;
    const long P = l->d.pad;
    unsigned i, oc, ic, oh, ow, ki, kj;

    for (i = 0; i < n; i++)
        for (oc = 0; oc < OC; oc++)
            for (oh = 0; oh < OH; oh++)
                for (ow = 0; ow < OW; ow++) {
                    float s = 0.0f;
                    for (ic = 0; ic < IC; ic++)
                        for (ki = 0; ki < K; ki++) {
                            long ih = (long)(oh * S + ki) - P;
                            if (ih < 0 || ih >= (long)H)
                                continue;
                            for (kj = 0; kj < K; kj++) {
                                long iw = (long)(ow * S + kj) - P;
                                if (iw < 0 || iw >= (long)W)
                                    continue;
                                s += x[(((size_t)i * IC + ic) * H + (size_t)ih) * W + (size_t)iw] *
                                     w[(((size_t)oc * IC + ic) * K + ki) * K + kj];
                            }
                        }
                    y[(((size_t)i * OC + oc) * OH + oh) * OW + ow] = s + b[oc];
                }
}

void tr_conv2d_backward_ref(float *dx, float *dw, float *db, const float *dy,
                            const float *x, const float *w,
                            const struct tr_layer *l, unsigned n)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w;
    const unsigned OC = l->out_c, OH = l->out_h, OW = l->out_w;
    const unsigned K = l->d.kernel, S = l->d.stride;
    const long P = l->d.pad;
    const size_t nw = (size_t)OC * IC * K * K;
    size_t q;
    unsigned i, oc, ic, oh, ow, ki, kj;

    for (q = 0; q < nw; q++)
        dw[q] = 0.0f;
    for (oc = 0; oc < OC; oc++)
        db[oc] = 0.0f;
    if (dx)
        for (q = 0; q < (size_t)n * IC * H * W; q++)
            dx[q] = 0.0f;
    for (i = 0; i < n; i++)
        for (oc = 0; oc < OC; oc++)
            for (oh = 0; oh < OH; oh++)
                for (ow = 0; ow < OW; ow++) {
                    const float g = dy[(((size_t)i * OC + oc) * OH + oh) * OW + ow];
                    db[oc] += g;
                    for (ic = 0; ic < IC; ic++)
                        for (ki = 0; ki < K; ki++) {
                            long ih = (long)(oh * S + ki) - P;
                            if (ih < 0 || ih >= (long)H)
                                continue;
                            for (kj = 0; kj < K; kj++) {
                                long iw = (long)(ow * S + kj) - P;
                                size_t xi, wi;
                                if (iw < 0 || iw >= (long)W)
                                    continue;
                                xi = (((size_t)i * IC + ic) * H + (size_t)ih) * W + (size_t)iw;
                                wi = (((size_t)oc * IC + ic) * K + ki) * K + kj;
                                dw[wi] += g * x[xi];
                                if (dx)
                                    dx[xi] += g * w[wi];
                            }
                        }
                }
}

size_t tr_conv2d_scratch_floats(const struct tr_layer *l)
{
    const size_t kk = (size_t)l->in_c * l->d.kernel * l->d.kernel;
    const size_t p = (size_t)l->out_h * l->out_w;
    return kk * p + p * l->out_c + 2u * kk * l->out_c + (size_t)l->d.kernel * p;
}

/* Stride 1 with OW == W (the "same" convolutions of the seed): the valid
 * part of a col row is the input plane read at a constant offset
 * (ki-P)*W + (kj-P), except the |kj-P| columns per row that the offset wraps
 * into the neighbouring row. So each row is one long contiguous select
 * through a 0/1 column mask of that kj (vectorises, no per-row loops), with
 * zeros before and after the valid rows [hlo, hhi). */
static int same_stride1(const struct tr_layer *l)
{
    return l->d.stride == 1 && l->out_w == l->in_w;
}

/* The shifted planes z (IC, K, plane_stride) of one sample x (IC, H, W) of
 * a stride-1 "same" convolution: plane (ic, kj) holds at q = r*W + w the
 * input x[ic][r-P][w+kj-P], +0 outside the input, so col row (ic, ki, kj)
 * at position p is z[ic][kj][p + ki*W]. A plane is (OH+K-1)*W long
 * (shifted_len), stored at a stride of whole vectors (plane_stride), from
 * a 64-byte boundary (shifted_base): every store of its builder is one
 * whole cache line. */
static size_t shifted_len(const struct tr_layer *l)
{
    return ((size_t)l->out_h + l->d.kernel - 1) * l->in_w;
}

static size_t plane_stride(const struct tr_layer *l)
{
    return (shifted_len(l) + 15) / 16 * 16;
}

static float *shifted_base(float *col)
{
    return (float *)(void *)(((uintptr_t)col + 63) & ~(uintptr_t)63);
}

/* the taps (ic, ki, kj) as rows of the shifted planes */
static void shifted_grid(struct tr_gemm_grid *g, const struct tr_layer *l)
{
    g->n1 = g->n2 = l->d.kernel;
    g->s0 = l->d.kernel * plane_stride(l);
    g->s1 = l->in_w;
    g->s2 = plane_stride(l);
}

/* The planes are made a group of input channels at a time, right before
 * the GEMMs read their rows: a group's planes stay in the L1 cache (the
 * whole sample's, 5 times its input, were written out to L2 and read back).
 * A group is as many channels as have planes in TR_CONV_GROUP_FLOATS. */
#define TR_CONV_GROUP_FLOATS 6144

static size_t group_channels(const struct tr_layer *l)
{
    const size_t per = (size_t)l->d.kernel * plane_stride(l), g = TR_CONV_GROUP_FLOATS / per;
    return g < 1 ? 1 : g > l->in_c ? l->in_c : g;
}

/* the end of the group that starts at input channel ic0 */
static size_t group_end(const struct tr_layer *l, size_t ic0)
{
    const size_t ic1 = ic0 + group_channels(l);
    return ic1 < l->in_c ? ic1 : l->in_c;
}

/* From shifted_base: a group's planes; then each of its input channels
 * flat (flat_len floats: flat_lead zeros, the H*W inputs, zeros to the
 * end), which plane (ic, kj) reads at q + kj; then, for the input
 * gradient, dy's copy, the taps' masks and the sums (dx_floats). */
static size_t flat_len(const struct tr_layer *l)
{
    return (plane_stride(l) + l->d.kernel - 1 + 15) / 16 * 16;
}

static size_t rows_at(const struct tr_layer *l)
{
    return group_channels(l) * l->d.kernel * plane_stride(l);
}

static size_t dx_at(const struct tr_layer *l)
{
    return rows_at(l) + group_channels(l) * flat_len(l);
}

/* 1: a stride-1 "same" convolution on a vector target whose planes and
 * rows fit in col's space */
static int shifted(const struct tr_layer *l)
{
    const size_t K = l->d.kernel, p = (size_t)l->out_h * l->out_w;
    return TR_CONV_SHIFTED && l->d.stride == 1 && l->out_w == l->in_w &&
           dx_at(l) + 16 <= K * K * l->in_c * p;
}

/* mask (K, OH*OW): 1 where output column ow reads inside the input for
 * kernel column kj, else 0 */
static void column_masks(float *restrict mask, const struct tr_layer *l)
{
    const unsigned K = l->d.kernel, OH = l->out_h, OW = l->out_w;
    unsigned kj, oh, ow, wlo, whi;

    for (kj = 0; kj < K; kj++) {
        tr_conv2d_valid_range(&wlo, &whi, kj, 1, l->d.pad, l->in_w, OW);
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++)
                mask[((size_t)kj * OH + oh) * OW + ow] = ow >= wlo && ow < whi ? 1.0f : 0.0f;
    }
}

/* [lo, hi): the positions of a col row whose plane index q + shift lies in
 * the plane (shift = ki*W + kj - P*(W+1)); empty when no row is valid */
static void row_span(size_t *lo, size_t *hi, unsigned hlo, unsigned hhi, unsigned wlo,
                     unsigned whi, size_t OW)
{
    *lo = hlo * OW + wlo;
    *hi = hhi > hlo && whi > wlo ? (hhi - 1) * OW + whi : *lo;
}

static void shifted_copy(float *restrict row, const float *restrict plane,
                         const float *restrict mask, unsigned ki, unsigned kj,
                         unsigned hlo, unsigned hhi, unsigned wlo, unsigned whi,
                         const struct tr_layer *l)
{
    const size_t W = l->in_w, OH = l->out_h, OW = l->out_w, P = l->d.pad;
    size_t lo, hi, q;

    row_span(&lo, &hi, hlo, hhi, wlo, whi, OW);
    for (q = 0; q < lo; q++)
        row[q] = 0.0f;
    if (hi > lo) {
        /* plane index of row[q] is q + ki*W + kj - P*(W+1) >= 0 for q >= lo */
        const float *src = plane + (lo + ki * W + kj - P * (W + 1));
        float *dst = row + lo;
        if (mask) {
            const float *mk = mask + lo;
            for (q = 0; q < hi - lo; q++)
                dst[q] = mk[q] != 0.0f ? src[q] : 0.0f;
        } else {            /* the span copied whole, then each row's wrapped columns zeroed */
            size_t oh, ow;
            tr_copy_floats(dst, src, hi - lo);
            for (oh = hlo; oh < hhi; oh++) {
                float *r = row + oh * OW;
                for (ow = 0; ow < wlo; ow++)
                    r[ow] = 0.0f;
                for (ow = whi; ow < OW; ow++)
                    r[ow] = 0.0f;
            }
        }
    }
    for (q = hi; q < OH * OW; q++)
        row[q] = 0.0f;
}

/* t (cols, rows) = a (rows, cols)^T (below; tr_conv_avx512.h's sums call it) */
static void transpose(float *restrict t, const float *restrict a, size_t rows, size_t cols);

/* The kernel bodies per target, chosen by this one #if: four pieces, each
 * in one of two forms.
 *   8 x 8 transpose block     tr_conv_avx.h (AVX registers) | tr_conv_plain.h
 *   dy's sums and dw1         tr_conv_avx512.h | tr_conv_sums.h (apart; no dw1)
 *   shifted planes, dx_direct tr_conv_vec.h | tr_conv_scalar.h (none)
 *   col2im's row adds         tr_conv_cols.h (C) | tr_conv_vfp.h (assembly)
 * Same operations in the same order on every target. */
#if defined(__GNUC__) && defined(__AVX512F__)      /* AVX-512 (512- or 256-bit tiles) */
#include "tr_conv_avx.h"
#include "tr_conv_avx512.h"
#include "tr_conv_vec.h"
#include "tr_conv_cols.h"
#elif defined(__GNUC__) && defined(__AVX__)        /* AVX, AVX2 */
#include "tr_conv_avx.h"
#include "tr_conv_sums.h"
#include "tr_conv_vec.h"
#include "tr_conv_cols.h"
#elif TR_CONV_SHIFTED                              /* SSE2, NEON */
#include "tr_conv_plain.h"
#include "tr_conv_sums.h"
#include "tr_conv_vec.h"
#include "tr_conv_cols.h"
#elif TR_VFP_ASM                                   /* Cortex-M4F */
#include "tr_conv_plain.h"
#include "tr_conv_sums.h"
#include "tr_conv_scalar.h"
#include "tr_conv_vfp.h"
#else                                              /* Cortex-M55, RV32, plain C */
#include "tr_conv_plain.h"
#include "tr_conv_sums.h"
#include "tr_conv_scalar.h"
#include "tr_conv_cols.h"
#endif


/* The adjoint of shifted_copy: one long masked add into the plane. */
static void shifted_add(float *restrict plane, const float *restrict row,
                        const float *restrict mask, unsigned ki, unsigned kj,
                        unsigned hlo, unsigned hhi, unsigned wlo, unsigned whi,
                        const struct tr_layer *l)
{
    const size_t W = l->in_w, OW = l->out_w, P = l->d.pad;
    size_t lo, hi, q;
    float *dst;
    const float *src, *mk;

    row_span(&lo, &hi, hlo, hhi, wlo, whi, OW);
    if (hi <= lo)
        return;
    dst = plane + (lo + ki * W + kj - P * (W + 1));
    src = row + lo;
    mk = mask + lo;
    for (q = 0; q < hi - lo; q++)
        dst[q] += mk[q] != 0.0f ? src[q] : 0.0f;
}

/* col (IC*K*K, OH*OW) from one sample x (IC, H, W); zeros in the padding. */
static void im2col(float *restrict col, const float *restrict x, const float *restrict masks,
                   const struct tr_layer *l)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w;
    const unsigned OH = l->out_h, OW = l->out_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    unsigned ic, ki, kj, oh, ow, hlo, hhi, wlo, whi;

    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++) {
            tr_conv2d_valid_range(&hlo, &hhi, ki, S, P, H, OH);
            for (kj = 0; kj < K; kj++) {
                float *row = col + (((size_t)ic * K + ki) * K + kj) * OH * OW;
                tr_conv2d_valid_range(&wlo, &whi, kj, S, P, W, OW);
                if (same_stride1(l)) {
                    shifted_copy(row, x + (size_t)ic * H * W,
                                 masks ? masks + (size_t)kj * OH * OW : NULL, ki, kj, hlo, hhi,
                                 wlo, whi, l);
                    continue;
                }
                for (oh = 0; oh < OH; oh++) {
                    float *r = row + (size_t)oh * OW;
                    if (oh < hlo || oh >= hhi) {
                        for (ow = 0; ow < OW; ow++)
                            r[ow] = 0.0f;
                        continue;
                    }
                    {
                        /* input row; column ow*S + kj - P is >= 0 for ow >= wlo */
                        const float *xr = x + ((size_t)ic * H + (oh * S + ki - P)) * W;
                        for (ow = 0; ow < wlo; ow++)
                            r[ow] = 0.0f;
                        if (S == 1) {
                            const float *xs = xr + (wlo + kj - P);
                            for (ow = wlo; ow < whi; ow++)
                                r[ow] = xs[ow - wlo];
                        } else {
                            for (ow = wlo; ow < whi; ow++)
                                r[ow] = xr[(size_t)ow * S + kj - P];
                        }
                        for (ow = whi; ow < OW; ow++)
                            r[ow] = 0.0f;
                    }
                }
            }
        }
}

/* dx (IC, H, W) = sum of col (IC*K*K, OH*OW) entries over the taps that read
 * each input (the adjoint of im2col). */
static void col2im(float *restrict dx, const float *restrict col, const float *restrict masks,
                   const struct tr_layer *l)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w;
    const unsigned OH = l->out_h, OW = l->out_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    unsigned ic, ki, kj, oh, ow, hlo, hhi, wlo, whi;
    size_t q;

    for (q = 0; q < (size_t)IC * H * W; q++)
        dx[q] = 0.0f;
    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++) {
            tr_conv2d_valid_range(&hlo, &hhi, ki, S, P, H, OH);
            for (kj = 0; kj < K; kj++) {
                const float *row = col + (((size_t)ic * K + ki) * K + kj) * OH * OW;
                tr_conv2d_valid_range(&wlo, &whi, kj, S, P, W, OW);
                if (masks) {
                    shifted_add(dx + (size_t)ic * H * W, row, masks + (size_t)kj * OH * OW,
                                ki, kj, hlo, hhi, wlo, whi, l);
                    continue;
                }
                for (oh = hlo; oh < hhi; oh++) {
                    const float *r = row + (size_t)oh * OW;
                    float *xr = dx + ((size_t)ic * H + (oh * S + ki - P)) * W;
                    if (S == 1) {
                        float *xs = xr + (wlo + kj - P);
                        COL2IM_ADD(xs, r, wlo, whi, ow);
                    } else {
                        for (ow = wlo; ow < whi; ow++)
                            xr[(size_t)ow * S + kj - P] += r[ow];
                    }
                }
            }
        }
}


/* t (cols, rows) = a (rows, cols)^T, in 8 x 8 blocks so both sides stay in
 * a few cache lines */
static void transpose(float *restrict t, const float *restrict a, size_t rows, size_t cols)
{
    size_t r0, c0, r, c;

    for (r0 = 0; r0 < rows; r0 += 8)
        for (c0 = 0; c0 < cols; c0 += 8) {
            const size_t r1 = r0 + 8 < rows ? r0 + 8 : rows;
            const size_t c1 = c0 + 8 < cols ? c0 + 8 : cols;
            if (r1 - r0 == 8 && c1 - c0 == 8) {
                transpose8(t + c0 * rows + r0, a + r0 * cols + c0, rows, cols);
                continue;
            }
            for (c = c0; c < c1; c++)
                for (r = r0; r < r1; r++)
                    t[c * rows + r] = a[r * cols + c];
        }
}


/* Ask for n floats from p to come into the L2 cache while the GEMMs of
 * the sample before run (the next sample's input: a batch's activations
 * are megabytes, and the shifted planes waited for them); not into L1,
 * where it would push out the GEMMs' planes and weights. The output
 * gradient is left to the hardware's stream prefetch: its first reader,
 * the bias sums, reads it front to back, and asking for all of conv1's
 * 50 KB at once stalled the core on the misses in flight (the step was
 * 1.4% faster without it, median of 10 alternated pairs). */
static void prefetch(const float *p, size_t n)
{
    size_t j;

    for (j = 0; TR_CONV_SHIFTED && j < n; j += 16)
        __builtin_prefetch(p + j, 0, 1);
}

/* y = b + w * col, col read from the shifted planes z (in col's space) a
 * group of input channels at a time (each group's GEMM adds to y), w^T in
 * wt */
static void forward_shifted(float *y, const float *x, const float *w, const float *b,
                            const struct tr_layer *l, unsigned n, float *z, float *wt)
{
    const size_t kk = (size_t)l->in_c * l->d.kernel * l->d.kernel;
    const size_t p = (size_t)l->out_h * l->out_w, OC = l->out_c;
    const size_t xs = (size_t)l->in_c * l->in_h * l->in_w, ys = OC * p;
    const size_t KK = (size_t)l->d.kernel * l->d.kernel;
    struct tr_gemm_grid g;
    size_t i, ic0, ic1;

    shifted_grid(&g, l);
    transpose(wt, w, OC, kk);
    shifted_begin(z, l);
    for (i = 0; i < n; i++) {
        float *yi = y + i * ys;
        if (i + 1 < n)
            prefetch(x + (i + 1) * xs, xs);
        for (ic0 = 0; ic0 < l->in_c; ic0 = ic1) {
            ic1 = group_end(l, ic0);
            shifted_planes(z, x + i * xs, ic0, ic1, l);
            tr_gemm_at_grid(yi, wt + ic0 * KK * OC, z, &g, OC, p, (ic1 - ic0) * KK, OC, p,
                            ic0 == 0 ? b : NULL);      /* from the bias, then adding */
        }
    }
}

void tr_conv2d_forward(float *y, const float *x, const float *w, const float *b,
                       const struct tr_layer *l, unsigned n, float *scratch)
{
    const size_t kk = (size_t)l->in_c * l->d.kernel * l->d.kernel;
    const size_t p = (size_t)l->out_h * l->out_w, OC = l->out_c;
    const size_t xs = (size_t)l->in_c * l->in_h * l->in_w, ys = OC * p;
    float *col = scratch;                      /* (kk, p) */
    float *masks = TR_CONV_MASKS && same_stride1(l) ? col + kk * p + p * OC + 2u * kk * OC : NULL;
    size_t i, oc, q;

    if (shifted(l)) {
        forward_shifted(y, x, w, b, l, n, shifted_base(scratch), col + kk * p + p * OC + kk * OC);
        return;
    }
    if (masks)
        column_masks(masks, l);
    for (i = 0; i < n; i++) {
        float *yi = y + i * ys;
        im2col(col, x + i * xs, masks, l);
        for (oc = 0; oc < OC; oc++)
            for (q = 0; q < p; q++)
                yi[oc * p + q] = b[oc];
        tr_gemm(yi, w, col, OC, p, kk, kk, p, p);
    }
}


void tr_conv2d_backward(float *dx, float *dw, float *db, const float *dy,
                        const float *x, const float *w,
                        const struct tr_layer *l, unsigned n, float *scratch)
{
    const size_t kk = (size_t)l->in_c * l->d.kernel * l->d.kernel;
    const size_t p = (size_t)l->out_h * l->out_w, OC = l->out_c;
    const size_t xs = (size_t)l->in_c * l->in_h * l->in_w, ys = OC * p;
    float *col = scratch;               /* (kk, p), then dcol */
    float *dyt = col + kk * p;          /* (p, OC) */
    float *dwt = dyt + p * OC;          /* (kk, OC) */
    float *wt = dwt + kk * OC;          /* (kk, OC) */
    float *masks = TR_CONV_MASKS && same_stride1(l) ? wt + kk * OC : NULL;   /* (K, p) */
    /* the planes from col's first 64-byte boundary; dy's copy, the taps'
     * masks and the sums after the planes and flat inputs; w as wk in
     * wt's space */
    const int planes = shifted(l), one = dw1(l), direct = dx && planes && dx_floats(l) > 0;
    float *z = shifted_base(col), *space = z + dx_at(l);
    struct tr_gemm_grid g;
    size_t i, oc, q;

    shifted_grid(&g, l);
    for (q = 0; q < kk * OC; q++)
        dwt[q] = 0.0f;
    if (masks)
        column_masks(masks, l);
    for (oc = 0; oc < OC; oc++)
        db[oc] = 0.0f;
    if (direct)
        dx_begin(wt, space, w, l);
    else if (dx)
        transpose(wt, w, OC, kk);
    for (i = 0; i < n; i++) {
        const float *dyi = dy + i * ys;
        DY_SUMS_TRANSPOSE(dyt, db, dyi, OC, p, oc);
        if (one) {
            dw1_pad(z, x + i * xs, l);
            dw1_sample(dwt, z, dyt, l);
        } else if (planes) {             /* col's rows from the shifted planes, by groups */
            const size_t KK = (size_t)l->d.kernel * l->d.kernel;
            size_t ic0, ic1;
            if (i + 1 < n)
                prefetch(x + (i + 1) * xs, xs);
            if (i == 0 || (dx && !direct))      /* else dcol wrote over the zeros */
                shifted_begin(z, l);
            for (ic0 = 0; ic0 < l->in_c; ic0 = ic1) {
                ic1 = group_end(l, ic0);
                shifted_planes(z, x + i * xs, ic0, ic1, l);
                tr_gemm_grid_a(dwt + ic0 * KK * OC, z, &g, dyt, (ic1 - ic0) * KK, OC, p, OC,
                               OC);
            }
        } else {
            im2col(col, x + i * xs, masks, l);
            tr_gemm(dwt, col, dyt, kk, OC, p, p, OC, OC);
        }
        if (direct) {           /* TR_DX_NS samples at a time, the last ones left */
            const size_t i0 = i - i % TR_DX_NS;
            if (i + 1 - i0 == TR_DX_NS || i + 1 == n)
                dx_samples(dx + i0 * xs, i + 1 - i0, wt, space, dy + i0 * ys, l);
        } else if (dx) {
            tr_gemm_set(col, wt, dyi, kk, p, OC, OC, p, p);
            col2im(dx + i * xs, col, masks, l);
        }
    }
    transpose(dw, dwt, kk, OC);
}
