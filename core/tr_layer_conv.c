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

#if TR_CONV_SHIFTED
typedef float tr_cv16 __attribute__((vector_size(64)));

static size_t flat_lead(const struct tr_layer *l)
{
    return (size_t)l->d.pad * l->in_w + l->d.pad;
}

/* once per call: the zeros around the group's flat inputs (the samples'
 * planes then only copy their inputs in between) */
static void shifted_begin(float *z, const struct tr_layer *l)
{
    const size_t n = group_channels(l) * flat_len(l);
    float *f = z + rows_at(l);
    size_t q;

    for (q = 0; q < n; q++)
        f[q] = 0.0f;
}

/* z from x for the input channels [ic0, ic1): each channel's inputs into
 * its flat copy, then each plane a vector at a time, loaded from the copy
 * at q + kj and masked by where column q%W + kj - P lies in the row (the
 * columns of the vector's lanes, col, step on by TR_VL modulo W) */
static void shifted_planes(float *restrict z, const float *restrict x, size_t ic0, size_t ic1,
                           const struct tr_layer *l)
{
    const size_t hw = (size_t)l->in_h * l->in_w, K = l->d.kernel, ls = plane_stride(l);
    const size_t fl = flat_len(l);
    const int32_t W = (int32_t)l->in_w, P = (int32_t)l->d.pad, step = TR_VL % W;
    float *restrict xf = z + rows_at(l);
    tr_vil col0;
    size_t c, q, kj;
    int j;

    for (j = 0; j < TR_VL; j++)
        col0[j] = j % W;
    for (c = 0; c < ic1 - ic0; c++)
        __builtin_memcpy(xf + c * fl + flat_lead(l), x + (ic0 + c) * hw, hw * sizeof *x);
    for (c = 0; c < ic1 - ic0; c++) {
        const float *f = xf + c * fl;
        float *zc = z + c * K * ls;
        tr_vil col = col0;
        for (q = 0; q < ls; q += TR_VL) {
            for (kj = 0; kj < K; kj++) {
                const tr_vil t = col + ((int32_t)kj - P);
                tr_vil v;
                __builtin_memcpy(&v, f + q + kj, sizeof v);
                v &= (t >= 0) & (t < W);
                __builtin_memcpy(zc + kj * ls + q, &v, sizeof v);
            }
            col += step;
            col -= (col >= W) & W;
        }
    }
}
#else
static void shifted_begin(float *z, const struct tr_layer *l)
{
    (void)z, (void)l;
}

static void shifted_planes(float *z, const float *x, size_t ic0, size_t ic1,
                           const struct tr_layer *l)
{
    (void)z, (void)x, (void)ic0, (void)ic1, (void)l;
}
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
#if TR_VFP_ASM
                        tr_vfp_add(xs, r + wlo, whi - wlo);
#else
                        for (ow = wlo; ow < whi; ow++)
                            xs[ow - wlo] += r[ow];
#endif
                    } else {
                        for (ow = wlo; ow < whi; ow++)
                            xr[(size_t)ow * S + kj - P] += r[ow];
                    }
                }
            }
        }
}

/* one full 8 x 8 block: column c of a's block is row c of t's. One #if
 * chooses how: with AVX, eight row loads, the in-register transpose
 * (unpack, shuffle, 128-bit lane permute) and eight row stores; else
 * written whole (8 independent loads, one contiguous run of stores). */
#if defined(__GNUC__) && defined(__AVX__)
#include <immintrin.h>

static void transpose8(float *restrict t, const float *restrict a, size_t rows, size_t cols)
{
    __m256 r[8], u[8], v[8];
    int j;

    for (j = 0; j < 8; j++)
        r[j] = _mm256_loadu_ps(a + j * cols);
    for (j = 0; j < 8; j += 2) {
        u[j] = _mm256_unpacklo_ps(r[j], r[j + 1]);
        u[j + 1] = _mm256_unpackhi_ps(r[j], r[j + 1]);
    }
    for (j = 0; j < 8; j += 4) {
        v[j] = _mm256_shuffle_ps(u[j], u[j + 2], _MM_SHUFFLE(1, 0, 1, 0));
        v[j + 1] = _mm256_shuffle_ps(u[j], u[j + 2], _MM_SHUFFLE(3, 2, 3, 2));
        v[j + 2] = _mm256_shuffle_ps(u[j + 1], u[j + 3], _MM_SHUFFLE(1, 0, 1, 0));
        v[j + 3] = _mm256_shuffle_ps(u[j + 1], u[j + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (j = 0; j < 4; j++) {
        _mm256_storeu_ps(t + j * rows, _mm256_permute2f128_ps(v[j], v[j + 4], 0x20));
        _mm256_storeu_ps(t + (j + 4) * rows, _mm256_permute2f128_ps(v[j], v[j + 4], 0x31));
    }
}
#else
static void transpose8(float *restrict t, const float *restrict a, size_t rows, size_t cols)
{
    size_t c;

    for (c = 0; c < 8; c++) {
        const float *ac = a + c;
        float *tc = t + c * rows;
        tc[0] = ac[0];
        tc[1] = ac[cols];
        tc[2] = ac[2 * cols];
        tc[3] = ac[3 * cols];
        tc[4] = ac[4 * cols];
        tc[5] = ac[5 * cols];
        tc[6] = ac[6 * cols];
        tc[7] = ac[7 * cols];
    }
}
#endif

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

/* The output gradient's transpose dyt (p, OC) and the bias gradient db
 * (each row's tr_sum_lanes16, added to db) from one read of dy (OC, p).
 * With AVX-512 and whole blocks of 8 rows, each block's 16-column steps
 * below the rows' last p % 16 columns are added to the rows' 16 lane sums
 * in registers as they are transposed, in the order tr_sum_lanes16 adds
 * them (so db has its bits); the 8 rows' sums are 8 chains side by side,
 * where the separate sums waited on one chain per row. Elsewhere the
 * backward takes the sums, then the transpose (a shared form of the two
 * moved the Cortex-M4F's count by 32,000 instructions a sample). */
#if defined(__GNUC__) && defined(__AVX512F__)
#define TR_CONV_DY_SUMS 1
static void transpose_sums(float *restrict t, float *restrict db, const float *restrict a,
                           size_t rows, size_t cols)
{
    const size_t body = cols - cols % 16;
    size_t r0, c0, r, c;
    int j;

    if (rows % 8 != 0) {
        for (r = 0; r < rows; r++)
            db[r] += tr_sum_lanes16(a + r * cols, cols);
        transpose(t, a, rows, cols);
        return;
    }
    for (r0 = 0; r0 < rows; r0 += 8) {
        const float *ab = a + r0 * cols;
        tr_cv16 acc[8];
        for (j = 0; j < 8; j++)
            acc[j] = (tr_cv16){0};
        for (c0 = 0; c0 < body; c0 += 16) {
            for (j = 0; j < 8; j++) {
                tr_cv16 v;
                __builtin_memcpy(&v, ab + j * cols + c0, sizeof v);
                acc[j] += v;
            }
            transpose8(t + c0 * rows + r0, ab + c0, rows, cols);
            transpose8(t + (c0 + 8) * rows + r0, ab + c0 + 8, rows, cols);
        }
        for (; c0 + 8 <= cols; c0 += 8)
            transpose8(t + c0 * rows + r0, ab + c0, rows, cols);
        for (c = c0; c < cols; c++)
            for (r = 0; r < 8; r++)
                t[c * rows + r0 + r] = ab[r * cols + c];
        for (r = 0; r < 8; r++) {
            float sum = 0.0f;
            for (c = body; c < cols; c++)
                sum += ab[r * cols + c];
            for (j = 0; j < 16; j++)
                sum += acc[r][j];
            db[r0 + r] += sum;
        }
    }
}
#else
#define TR_CONV_DY_SUMS 0
#endif

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

/* ---- the input gradient of a shifted convolution, without dcol ---------
 * Each element of dx is what col2im makes of dcol = w^T dy: a sum over its
 * taps (ki, kj) ascending, from +0, of the tap's dcol value, itself a sum
 * over the output channels ascending, from +0, of w times dy read at the
 * element's position minus the tap's shift (ki-P)*W + kj-P. A tile of
 * input channels x positions (the positions are the vector lanes) makes a
 * tap's dcol values t in registers, from the first product on (+0 plus a
 * product is the product but for the sign of a zero product, and the
 * element's sum is never -0: +0 plus either zero is +0, so t's zero sign
 * is lost in it either way), then adds them to the elements' sums through
 * the tap's mask: all ones where the position reads an output inside the
 * image, else 0 (col2im adds nothing there, and +0 added to a sum that is
 * never -0 is no change, even where w is not finite and t is NaN). The
 * sums wait in memory between the taps; dcol is never stored. dy is read
 * from a copy whose rows have zeros around them, so the reads past a
 * row's ends stay in the copy. Two samples go side by side in the copy's
 * rows (TR_DX_NS), so the positions fill whole vectors better (the seed's
 * conv2: 392 in 25 vectors, not 196 in 13); the masks see each position
 * in its own sample, so no element reads the other sample's dy. */
#if TR_CONV_SHIFTED
#define TR_DX_NS 2       /* samples side by side */
#if TR_VL == 16
#define TR_DX_VW 16      /* lanes, and the tile: R channels x V vectors */
#define TR_DX_R 8        /* R*V sums t in 24 of the 32 registers */
#define TR_DX_V 3
#elif defined(__AVX512F__)   /* 256-bit vectors, 32 registers (TR_VEC256) */
#define TR_DX_VW 8
#define TR_DX_R 8
#define TR_DX_V 3
#elif defined(__AVX__)
#define TR_DX_VW 8       /* 16 registers */
#define TR_DX_R 4
#define TR_DX_V 2
#else
#define TR_DX_VW 4
#define TR_DX_R 4
#define TR_DX_V 2
#endif
typedef float tr_dxv __attribute__((vector_size(TR_DX_VW * 4)));
typedef int32_t tr_dxi __attribute__((vector_size(TR_DX_VW * 4)));

/* the positions of TR_DX_NS samples' dx rounded up to whole vectors (the
 * last vector's lanes past them are computed and not stored) */
static size_t dx_cols(const struct tr_layer *l)
{
    return (TR_DX_NS * (size_t)l->in_h * l->in_w + TR_DX_VW - 1) / TR_DX_VW * TR_DX_VW;
}

/* dy's copy: rows of dy_row floats, position 0 at dy_lo (the largest shift
 * back, P*(W+1), rounded up to 16), zeros before and after */
static size_t dy_lo(const struct tr_layer *l)
{
    return ((size_t)l->d.pad * (l->in_w + 1) + 15) / 16 * 16;
}

static size_t dy_row(const struct tr_layer *l)
{
    return 2 * dy_lo(l) + dx_cols(l) + 16;
}

/* where the taps' masks (K*K, dx_cols) start, after dy's copy */
static size_t dx_masks_at(const struct tr_layer *l)
{
    return l->out_c * dy_row(l);
}

/* where the sums (IC, dx_cols) start, after the masks */
static size_t dx_sums_at(const struct tr_layer *l)
{
    return dx_masks_at(l) + (size_t)l->d.kernel * l->d.kernel * dx_cols(l);
}

/* floats dy's copy, the masks and the sums take in col's space after the
 * planes and rows (0: no room; col2im runs) */
static size_t dx_floats(const struct tr_layer *l)
{
    const size_t K = l->d.kernel, p = (size_t)l->out_h * l->out_w;
    const size_t need = dx_sums_at(l) + l->in_c * dx_cols(l);
    return dx_at(l) + 16 + need <= (size_t)l->in_c * K * K * p ? need : 0;
}

/* the masks: tap (ki, kj) at position q (e = q mod H*W in its sample)
 * reads output (e/W - ki + P, e%W - kj + P) of the same sample; all ones
 * where that is inside the output */
static void dx_masks(int32_t *restrict mk, const struct tr_layer *l)
{
    const long K = l->d.kernel, P = l->d.pad, W = l->in_w, H = l->in_h;
    const size_t pc = dx_cols(l);
    long ki, kj;
    size_t q;

    for (ki = 0; ki < K; ki++)
        for (kj = 0; kj < K; kj++)
            for (q = 0; q < pc; q++) {
                const long e = (long)(q % (size_t)(H * W));
                const long oh = e / W - ki + P, ow = e % W - kj + P;
                const int in = q < TR_DX_NS * (size_t)(H * W) && oh >= 0 && oh < H && ow >= 0 &&
                               ow < W;
                mk[((size_t)ki * K + kj) * pc + q] = in ? -1 : 0;
            }
}

/* the input channels of the block from ic0: TR_DX_R, or the rest */
static size_t dx_block(const struct tr_layer *l, size_t ic0)
{
    return l->in_c - ic0 < TR_DX_R ? l->in_c - ic0 : TR_DX_R;
}

/* wk from w (OC, IC, K, K): per block of input channels (dx_block), its
 * weights (K*K, OC, block): a tile's weights together, the block's
 * channels of a tap and output channel side by side */
static void dx_weights(float *restrict wk, const float *restrict w, const struct tr_layer *l)
{
    const size_t KK = (size_t)l->d.kernel * l->d.kernel, OC = l->out_c, IC = l->in_c;
    size_t ic0, t, oc, i;

    for (ic0 = 0; ic0 < IC; ic0 += TR_DX_R) {
        const size_t rb = dx_block(l, ic0);
        float *wb = wk + ic0 * KK * OC;
        for (t = 0; t < KK; t++)
            for (oc = 0; oc < OC; oc++)
                for (i = 0; i < rb; i++)
                    wb[(t * OC + oc) * rb + i] = w[(oc * IC + ic0 + i) * KK + t];
    }
}

/* dy's rows of samples s = 0 .. ns-1 (dy + s*OC*p) into the copy, side by
 * side (its zeros were written once; a slot left out keeps what it had,
 * which the masks keep from the other slot's elements) */
static void dx_copy_dy(float *restrict dyp, const float *restrict dy, size_t ns,
                       const struct tr_layer *l)
{
    const size_t p = (size_t)l->out_h * l->out_w, L = dy_row(l), lo = dy_lo(l);
    size_t oc, t;

    for (t = 0; t < ns; t++)
        for (oc = 0; oc < l->out_c; oc++)
            __builtin_memcpy(dyp + oc * L + lo + t * p, dy + (t * l->out_c + oc) * p,
                             p * sizeof *dyp);
}

/* the sums of r input channels at the v vectors of positions from q0 (r,
 * v constants where it is inlined) in sums (rows of dx_cols), the
 * weights from wb with the block's stride rs. The taps' t live in
 * registers; the sums over the taps in memory, added once per tap. */
static inline __attribute__((always_inline)) void
dx_tile(float *restrict sums, const float *restrict wb, size_t rs, const float *restrict dyp,
        const int32_t *restrict mk, size_t q0, const int r, const int v,
        const struct tr_layer *l)
{
    const size_t K = l->d.kernel, P = l->d.pad, W = l->in_w, OC = l->out_c;
    const size_t L = dy_row(l), pc = dx_cols(l);
    tr_dxv t[TR_DX_R][TR_DX_V], d[TR_DX_V], a;
    size_t ki, kj, oc;
    int i, j;

    for (i = 0; i < r; i++)
        for (j = 0; j < v; j++)
            __builtin_memset(sums + i * pc + q0 + j * TR_DX_VW, 0, sizeof a);
    for (ki = 0; ki < K; ki++)
        for (kj = 0; kj < K; kj++) {
            /* output channel 0's dy at position q0 minus the tap's shift */
            const float *src = dyp + dy_lo(l) + q0 + P * W + P - ki * W - kj;
            const float *wt = wb + (ki * K + kj) * OC * rs;
            const int32_t *m = mk + (ki * K + kj) * pc + q0;
            for (j = 0; j < v; j++)
                __builtin_memcpy(&d[j], src + j * TR_DX_VW, sizeof d[j]);
            for (i = 0; i < r; i++)
                for (j = 0; j < v; j++)
                    t[i][j] = wt[i] * d[j];
            for (oc = 1; oc < OC; oc++) {
                const float *s = src + oc * L, *wo = wt + oc * rs;
                for (j = 0; j < v; j++) {
                    __builtin_memcpy(&d[j], s + j * TR_DX_VW, sizeof d[j]);
                    TR_IN_REGISTER(d[j]);       /* one load, not one per channel */
                }
                for (i = 0; i < r; i++)
                    for (j = 0; j < v; j++)
                        t[i][j] += wo[i] * d[j];
            }
            for (i = 0; i < r; i++)
                for (j = 0; j < v; j++) {
                    float *o = sums + i * pc + q0 + j * TR_DX_VW;
                    tr_dxi mj;
                    __builtin_memcpy(&mj, m + j * TR_DX_VW, sizeof mj);
                    __builtin_memcpy(&a, o, sizeof a);
                    a += (tr_dxv)((tr_dxi)t[i][j] & mj);
                    __builtin_memcpy(o, &a, sizeof a);
                }
        }
}

/* a tile of r channels, v vectors: one call per constant pair */
static void dx_tile_rv(float *sums, const float *wb, size_t rs, const float *dyp,
                       const int32_t *mk, size_t q0, int r, int v, const struct tr_layer *l)
{
    const size_t pc = dx_cols(l);
#define TR_DX_CASE(R, V)                                                      \
    if (r == (R) && v == (V)) {                                               \
        dx_tile(sums, wb, rs, dyp, mk, q0, R, V, l);                          \
        return;                                                               \
    }
    TR_DX_CASE(TR_DX_R, TR_DX_V)
    TR_DX_CASE(TR_DX_R, TR_DX_V - 1)
    TR_DX_CASE(1, TR_DX_V)
    TR_DX_CASE(1, TR_DX_V - 1)
#undef TR_DX_CASE
    if (r > 1) {            /* other channel counts: one at a time */
        for (; r > 0; r--, sums += pc, wb++)
            dx_tile_rv(sums, wb, rs, dyp, mk, q0, 1, v, l);
        return;
    }
    for (; v > 0; v--, q0 += TR_DX_VW)      /* other vector counts */
        dx_tile(sums, wb, rs, dyp, mk, q0, 1, 1, l);
}

/* dx (ns samples of IC, H, W) from dy's copy, through sums (IC, dx_cols):
 * tiles of R channels x V vectors, the vectors of a channel block split
 * as evenly as V allows (25 vectors: 2, 2, then 3s) */
static void dx_direct(float *dx, size_t ns, float *sums, const float *wk, const float *dyp,
                      const int32_t *mk, const struct tr_layer *l)
{
    const size_t hw = (size_t)l->in_h * l->in_w, IC = l->in_c, pc = dx_cols(l);
    const size_t KK = (size_t)l->d.kernel * l->d.kernel, OC = l->out_c;
    const size_t nv = pc / TR_DX_VW, tiles = (nv + TR_DX_V - 1) / TR_DX_V;
    size_t ic0, ic, t, v0;

    for (ic0 = 0; ic0 < IC; ic0 += TR_DX_R) {
        const size_t rb = dx_block(l, ic0);
        for (t = 0, v0 = 0; t < tiles; t++) {
            const size_t v = (nv - v0) / (tiles - t);
            dx_tile_rv(sums + ic0 * pc, wk + ic0 * KK * OC, rb, dyp, mk, v0 * TR_DX_VW,
                       (int)rb, (int)v, l);
            v0 += v;
        }
    }
    for (t = 0; t < ns; t++)
        for (ic = 0; ic < IC; ic++)
            __builtin_memcpy(dx + (t * IC + ic) * hw, sums + ic * pc + t * hw, hw * sizeof *dx);
}

/* once per call: w as wk, and in space (col's, after the planes and rows)
 * the zeros of dy's copy and the taps' masks */
static void dx_begin(float *wk, float *space, const float *w, const struct tr_layer *l)
{
    size_t q;

    dx_weights(wk, w, l);
    for (q = 0; q < dx_masks_at(l); q++)
        space[q] = 0.0f;
    dx_masks((int32_t *)(void *)(space + dx_masks_at(l)), l);
}

/* dx (ns <= TR_DX_NS samples of IC, H, W) from their dy: into the copy,
 * then the tiles */
static void dx_samples(float *dx, size_t ns, const float *wk, float *space, const float *dy,
                       const struct tr_layer *l)
{
    dx_copy_dy(space, dy, ns, l);
    dx_direct(dx, ns, space + dx_sums_at(l), wk, space,
              (const int32_t *)(const void *)(space + dx_masks_at(l)), l);
}
#else
static size_t dx_floats(const struct tr_layer *l)
{
    (void)l;
    return 0;
}

static void dx_begin(float *wk, float *space, const float *w, const struct tr_layer *l)
{
    (void)wk, (void)space, (void)w, (void)l;
}

#define TR_DX_NS 1

static void dx_samples(float *dx, size_t ns, const float *wk, float *space, const float *dy,
                       const struct tr_layer *l)
{
    (void)dx, (void)ns, (void)wk, (void)space, (void)dy, (void)l;
}
#endif

/* The weight gradient of a convolution with one input channel (the
 * first): its K*K taps x 16 output channels are K*K vector sums, which
 * stay in registers over the whole sample. Tap (ki, kj) at position
 * (oh, ow) reads the input padded with P zeros around it, at rows dw1_ld
 * apart: (oh+ki)*ld + ow+kj. So no planes are made, and a position's
 * K*K products are one load of dy^T's row and K*K multiplies by the
 * inputs, each read in place. The sums are tr_gemm_grid_a's, in its order:
 * from dw^T, over the positions ascending. */
#if TR_CONV_SHIFTED && defined(__AVX512F__)     /* K*K <= 25 sums, 32 registers */
static size_t dw1_ld(const struct tr_layer *l)
{
    return ((size_t)l->in_w + 2 * l->d.pad + 15) / 16 * 16;
}

static int dw1(const struct tr_layer *l)
{
    const size_t K = l->d.kernel;
    return shifted(l) && l->in_c == 1 && (K == 3 || K == 5) && l->out_c % 16 == 0 &&
           ((size_t)l->in_h + 2 * l->d.pad) * dw1_ld(l) <= rows_at(l);
}

/* xp: one sample's channel with P zeros around it, rows dw1_ld apart */
static void dw1_pad(float *restrict xp, const float *restrict x, const struct tr_layer *l)
{
    const size_t H = l->in_h, W = l->in_w, P = l->d.pad, ld = dw1_ld(l);
    size_t r, q;

    for (q = 0; q < (H + 2 * P) * ld; q++)
        xp[q] = 0.0f;
    for (r = 0; r < H; r++)
        __builtin_memcpy(xp + (r + P) * ld + P, x + r * W, W * sizeof *x);
}

/* dwt (K*K, OC) += the products of the 16 output channels from dwt's
 * column 0 and dyt's (p, OC); K a constant where it is inlined */
static inline __attribute__((always_inline)) void
dw1_tile(float *restrict dwt, const float *restrict xp, const float *restrict dyt,
         const struct tr_layer *l, const int K)
{
    const size_t OC = l->out_c, OH = l->out_h, OW = l->out_w, ld = dw1_ld(l);
    tr_cv16 acc[25];
    size_t oh, ow;
    int ki, kj;

    for (ki = 0; ki < K * K; ki++)
        __builtin_memcpy(&acc[ki], dwt + ki * OC, sizeof acc[ki]);
    for (oh = 0; oh < OH; oh++) {
        const float *r[5], *b = dyt + oh * OW * OC;
        for (ki = 0; ki < K; ki++)
            r[ki] = xp + (oh + ki) * ld;
        for (ow = 0; ow < OW; ow++, b += OC) {
            tr_cv16 bv;
            __builtin_memcpy(&bv, b, sizeof bv);
            for (ki = 0; ki < K; ki++) {
                /* each input read where it is used: GCC would carry the
                 * next position's shared inputs in registers, and spill */
                __asm__("" : "+r"(r[ki]));
                for (kj = 0; kj < K; kj++)
                    acc[ki * K + kj] += r[ki][kj] * bv;
                r[ki]++;
            }
        }
    }
    for (ki = 0; ki < K * K; ki++)
        __builtin_memcpy(dwt + ki * OC, &acc[ki], sizeof acc[ki]);
}

static void dw1_sample(float *dwt, const float *xp, const float *dyt, const struct tr_layer *l)
{
    size_t oc;

    for (oc = 0; oc < l->out_c; oc += 16) {
        if (l->d.kernel == 5)
            dw1_tile(dwt + oc, xp, dyt + oc, l, 5);
        else
            dw1_tile(dwt + oc, xp, dyt + oc, l, 3);
    }
}
#else
static int dw1(const struct tr_layer *l)
{
    (void)l;
    return 0;
}

static void dw1_pad(float *xp, const float *x, const struct tr_layer *l)
{
    (void)xp, (void)x, (void)l;
}

static void dw1_sample(float *dwt, const float *xp, const float *dyt, const struct tr_layer *l)
{
    (void)dwt, (void)xp, (void)dyt, (void)l;
}
#endif

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
#if TR_CONV_DY_SUMS
        transpose_sums(dyt, db, dyi, OC, p);
#else
        for (oc = 0; oc < OC; oc++)
            db[oc] += tr_sum_lanes16(dyi + oc * p, p);
        transpose(dyt, dyi, OC, p);
#endif
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
