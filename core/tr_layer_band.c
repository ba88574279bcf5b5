/* tinyring: Conv2d in bands of output positions, and one output plane at a
 * time, for the lean execution plan. Same bits as tr_conv2d_forward and
 * tr_conv2d_backward (docs/DESIGN.md, "The arithmetic every plan and target
 * computes"); the scratch holds one band instead of the whole image.
 *
 * A band is q consecutive output positions p0 .. p0+q-1 of one sample
 * (row-major, so it may start and end inside a row). With KK = IC*K*K:
 *   forward   col (KK, q) of the band, y[:, band] = b + w (OC, KK) * col
 *   dweight   colT (q', T) for a group of input channels (T of their taps)
 *             and q' positions, dw[:, taps] += dy[:, positions] * colT, the
 *             chunks of a group in ascending order (each weight's sum runs
 *             over the positions in order, stored as a float between them)
 *   dinput    dcol (KK, q) = w^T dy[:, band] (tr_gemm_at_set: w read as it
 *             is), added into dx tap by tap in ascending order, the bands
 *             from the last to the first: every input element gets its
 *             taps in ascending order, as col2im adds them.
 * Scratch: q * KK floats (tr_conv2d_band_floats).
 *
 * The plane kernels compute one output channel of one sample directly from
 * the sample's zero-padded input (IC, H+2P, W+2P): the plan that recomputes
 * a first convolution instead of storing it uses them. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_layer_kernels.h"

/* The kernel bodies per target, chosen by this one #if: the bands' row
 * copies and adds (BAND_COPY, BAND_COPY5, BAND_ADD), and the one-plane
 * kernels (pad_plane, PLANE_WHOLE, plane_row_s1, plane_dw_k5). GCC's
 * generic vectors where the target has vector registers, plain float
 * accumulators on a scalar FPU (tr_band_fpu.h) with the Cortex-M4F's VFP
 * assembly or the Cortex-M55's Helium blocks in front of them. Same
 * operations in the same order on every target. */
#if TR_HOST_VECTORS                                 /* AVX-512, AVX, SSE2, NEON */
#include "tr_band_cols.h"
#include "tr_band_vec.h"
#elif TR_VFP_ASM                                    /* Cortex-M4F */
#include "tr_band_vfp.h"
#include "tr_band_fpu.h"
#elif defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)   /* Cortex-M55 */
#include "tr_band_cols.h"
#include "tr_band_mve.h"
#include "tr_band_fpu.h"
#else                                               /* RV32, plain C */
#include "tr_band_cols.h"
#include "tr_band_plain.h"
#include "tr_band_fpu.h"
#endif

size_t tr_conv2d_band_floats(const struct tr_layer *l, size_t q)
{
    return q * ((size_t)l->in_c * l->d.kernel * l->d.kernel);
}

/* [lo, hi): the output columns kernel column kj reads inside the input
 * (tr_conv2d_valid_range; at stride 1 without its divisions) */
static void band_cols(unsigned *lo, unsigned *hi, unsigned kj, const struct tr_layer *l)
{
    long a, b;

    if (l->d.stride != 1) {
        tr_conv2d_valid_range(lo, hi, kj, l->d.stride, l->d.pad, l->in_w, l->out_w);
        return;
    }
    a = (long)l->d.pad - (long)kj;          /* ow >= P - kj */
    b = (long)l->in_w + a;                  /* ow <  W + P - kj */
    b = b <= 0 ? 0 : b > (long)l->out_w ? (long)l->out_w : b;
    a = a <= 0 ? 0 : a > b ? b : a;
    *lo = (unsigned)a;
    *hi = (unsigned)b;
}

/* [lo, hi): kernel column kj's valid columns (band_cols) within [ow0, end) */
static void seg_cols(unsigned *lo, unsigned *hi, unsigned kj, const struct tr_layer *l,
                     unsigned ow0, unsigned end)
{
    unsigned wlo, whi;

    band_cols(&wlo, &whi, kj, l);
    *lo = wlo < ow0 ? ow0 : wlo > end ? end : wlo;
    *hi = whi < *lo ? *lo : whi > end ? end : whi;
}

/* Columns j .. j+end-ow0-1 of col (KK, q): output row oh from column ow0
 * to end, each tap's input value, +0 in the padding; a tap row's valid
 * columns are copied whole. Kernel column by kernel column, so its valid
 * columns are worked out once for all input channels and kernel rows. */
static void band_col_row(float *col, size_t q, size_t j, const float *x,
                         const struct tr_layer *l, unsigned oh, unsigned ow0, unsigned end)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    unsigned ic, ki, kj, ow, lo, hi;

    for (kj = 0; kj < K; kj++) {
        seg_cols(&lo, &hi, kj, l, ow0, end);
        for (ic = 0; ic < IC; ic++)
            for (ki = 0; ki < K; ki++) {
                const long ih = (long)oh * S + ki - (long)P;
                float *r = col + (((size_t)ic * K + ki) * K + kj) * q + j;
                const float *xr;
                if (ih < 0 || ih >= (long)H) {                 /* a padding row */
                    for (ow = 0; ow < end - ow0; ow++)
                        r[ow] = 0.0f;
                    continue;
                }
                xr = x + ((size_t)ic * H + (size_t)ih) * W;
                for (ow = ow0; ow < lo; ow++)
                    r[ow - ow0] = 0.0f;
                if (S == 1) {
                    const float *xs = xr + kj - P;          /* ow + kj >= P from lo on */
                    BAND_COPY(r, xs, lo, hi, ow0, ow);
                } else {
                    for (ow = lo; ow < hi; ow++)
                        r[ow - ow0] = xr[(size_t)ow * S + kj - P];
                }
                for (ow = hi; ow < end; ow++)
                    r[ow - ow0] = 0.0f;
            }
    }
}

/* col (KK, q): tap t's row holds the input value each band position reads.
 * A band is a few output-row segments (the first from where p0 is, the
 * others from column 0 of the next row), each made for every tap in turn. */
static void band_col(float *col, const float *x, const struct tr_layer *l, size_t p0, size_t q)
{
    const unsigned OW = l->out_w;
    unsigned oh = (unsigned)(p0 / OW), ow0 = (unsigned)(p0 % OW);
    size_t j;

    for (j = 0; j < q; oh++, ow0 = 0) {
        const unsigned seg = (unsigned)(q - j < OW - ow0 ? q - j : OW - ow0);
        band_col_row(col, q, j, x, l, oh, ow0, ow0 + seg);
        j += seg;
    }
}

/* colT (q, T): the patches of positions p0 .. p0+q-1 restricted to the
 * input channels [ic0, ic1), taps (ic, ki, kj) in order (T = (ic1-ic0)*K*K).
 * Which of a position's kernel rows lie inside the input ([klo, khi)),
 * and whether all its kernel columns do, is worked out once per position. */
static void band_colT(float *colT, const float *x, const struct tr_layer *l, size_t p0,
                      size_t q, unsigned ic0, unsigned ic1)
{
    const unsigned H = l->in_h, W = l->in_w, OW = l->out_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    const size_t T = (size_t)(ic1 - ic0) * K * K;
    unsigned oh = (unsigned)(p0 / OW), ow = (unsigned)(p0 % OW);   /* position p0 + j */
    unsigned ic, ki, kj;
    size_t j;

    for (j = 0; j < q; j++) {
        const long iw0 = (long)ow * S - (long)P, ih0 = (long)oh * S - (long)P;
        const unsigned klo = ih0 < 0 ? (unsigned)-ih0 : 0u;
        const long rows = (long)H - ih0;                /* kernel rows above the bottom */
        const unsigned khi = rows <= 0 ? 0u : rows < (long)K ? (unsigned)rows : K;
        const int inner = iw0 >= 0 && iw0 + (long)K <= (long)W;
        float *r = colT + j * T;
        for (ic = ic0; ic < ic1; ic++) {
            const float *xc = x + (size_t)ic * H * W;
            for (ki = 0; ki < K; ki++, r += K) {
                const float *xr, *xk;
                if (ki < klo || ki >= khi) {
                    for (kj = 0; kj < K; kj++)
                        r[kj] = 0.0f;
                    continue;
                }
                xr = xc + (size_t)(ih0 + (long)ki) * W;
                if (!inner) {
                    for (kj = 0; kj < K; kj++) {
                        const long iw = iw0 + (long)kj;
                        r[kj] = iw >= 0 && iw < (long)W ? xr[iw] : 0.0f;
                    }
                    continue;
                }
                xk = xr + iw0;
                if (K == 5) {
                    BAND_COPY5(r, xk);
                } else {
                    for (kj = 0; kj < K; kj++)
                        r[kj] = xk[kj];
                }
            }
        }
        if (++ow == OW) {
            ow = 0;
            oh++;
        }
    }
}

/* The weight gradient of one sample: dw (OC, KK) += dy (OC, P) * colT.
 * The patches are built for a group of input channels at a time (4, whose
 * taps are a multiple of 4 columns: whole GEMM tiles), over as many
 * positions as the scratch holds, so each GEMM call runs a long k loop per
 * tile of dw. Every weight's sum still runs over the positions in order:
 * its group's chunks are taken in ascending order. */
static void band_dw(float *dw, const float *dyi, const float *xi, const struct tr_layer *l,
                    float *scratch, size_t room)
{
    const unsigned IC = l->in_c, K = l->d.kernel;
    const size_t KK = (size_t)IC * K * K, P = (size_t)l->out_h * l->out_w;
    const unsigned g = IC < 4 ? IC : 4;
    unsigned ic0;

    for (ic0 = 0; ic0 < IC; ic0 += g) {
        const unsigned ic1 = ic0 + g < IC ? ic0 + g : IC;
        const size_t T = (size_t)(ic1 - ic0) * K * K;
        const size_t qmax = room / T, chunks = (P + qmax - 1) / qmax;
        const size_t q = (P + chunks - 1) / chunks;   /* chunks as even as possible */
        size_t p0;
        for (p0 = 0; p0 < P; p0 += q) {
            const size_t qq = P - p0 < q ? P - p0 : q;
            band_colT(scratch, xi, l, p0, qq, ic0, ic1);
            tr_gemm(dw + (size_t)ic0 * K * K, dyi + p0, scratch, l->out_c, T, qq, P, T, KK);
        }
    }
}

/* dx (IC, H, W) += the columns j .. j+end-ow0-1 of dcol (KK, q): output
 * row oh from column ow0 to end, each tap where it reads inside the input.
 * Kernel column by kernel column (their valid columns worked out once):
 * within one output row an input element gets one kernel row's taps, so
 * it still gets them in ascending order. */
static void band_col2im_row(float *dx, const float *dcol, size_t q, size_t j,
                            const struct tr_layer *l, unsigned oh, unsigned ow0, unsigned end)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    unsigned ic, ki, kj, ow, lo, hi;

    for (kj = 0; kj < K; kj++) {
        seg_cols(&lo, &hi, kj, l, ow0, end);
        for (ic = 0; ic < IC; ic++)
            for (ki = 0; ki < K; ki++) {
                const long ih = (long)oh * S + ki - (long)P;
                const float *r = dcol + (((size_t)ic * K + ki) * K + kj) * q + j;
                float *xr;
                if (ih < 0 || ih >= (long)H)
                    continue;
                xr = dx + ((size_t)ic * H + (size_t)ih) * W;
                if (S == 1) {
                    float *xs = xr + kj - P;                /* ow + kj >= P from lo on */
                    BAND_ADD(xs, r, lo, hi, ow0, ow);
                } else {
                    for (ow = lo; ow < hi; ow++)
                        xr[(size_t)ow * S + kj - P] += r[ow - ow0];
                }
            }
    }
}

/* dx (IC, H, W) += dcol (KK, q), the adjoint of band_col. Each dx element
 * adds its taps in ascending order: one output row gives it one kernel row
 * ki (the kernel columns in order), and the row below gives it ki - S, so
 * the band's row segments go from the last to the first (as
 * tr_conv2d_backward_band takes the bands from the last to the first). */
static void band_col2im(float *dx, const float *dcol, const struct tr_layer *l, size_t p0,
                        size_t q)
{
    const unsigned OW = l->out_w;
    const size_t first = p0 / OW;
    size_t oh = (p0 + q - 1) / OW + 1;

    while (oh-- > first) {
        const size_t start = oh * OW > p0 ? oh * OW : p0;
        const size_t stop = (oh + 1) * OW < p0 + q ? (oh + 1) * OW : p0 + q;
        band_col2im_row(dx, dcol, q, start - p0, l, (unsigned)oh, (unsigned)(start - oh * OW),
                        (unsigned)(stop - oh * OW));
    }
}

void tr_conv2d_forward_band(float *y, const float *x, const float *w, const float *b,
                            const struct tr_layer *l, unsigned n, float *scratch, size_t q)
{
    const size_t KK = (size_t)l->in_c * l->d.kernel * l->d.kernel;
    const size_t P = (size_t)l->out_h * l->out_w, OC = l->out_c;
    const size_t xs = (size_t)l->in_c * l->in_h * l->in_w;
    size_t i, oc, j, p0;

    for (i = 0; i < n; i++) {
        float *yi = y + i * OC * P;
        for (p0 = 0; p0 < P; p0 += q) {
            const size_t qq = P - p0 < q ? P - p0 : q;
            band_col(scratch, x + i * xs, l, p0, qq);
            for (oc = 0; oc < OC; oc++)
                for (j = 0; j < qq; j++)
                    yi[oc * P + p0 + j] = b[oc];
            tr_gemm(yi + p0, w, scratch, OC, qq, KK, KK, qq, P);
        }
    }
}

void tr_conv2d_backward_band(float *dx, float *dw, float *db, const float *dy,
                             const float *x, const float *w,
                             const struct tr_layer *l, unsigned n, float *scratch, size_t q)
{
    const size_t KK = (size_t)l->in_c * l->d.kernel * l->d.kernel;
    const size_t P = (size_t)l->out_h * l->out_w, OC = l->out_c;
    const size_t xs = (size_t)l->in_c * l->in_h * l->in_w;
    const size_t last = (P - 1) / q * q;       /* first position of the last band */
    float *colT = scratch;                      /* (q, KK), then dcol (KK, q) */
    size_t i, oc, j, p0;

    for (j = 0; j < OC * KK; j++)
        dw[j] = 0.0f;
    for (oc = 0; oc < OC; oc++)
        db[oc] = 0.0f;
    for (i = 0; i < n; i++) {
        const float *dyi = dy + i * OC * P;
        for (oc = 0; oc < OC; oc++)
            db[oc] += tr_sum_lanes16(dyi + oc * P, P);
        band_dw(dw, dyi, x + i * xs, l, colT, q * KK);
        if (dx == NULL)
            continue;
        /* x of this sample is read: its dx may now take its place */
        for (j = 0; j < xs; j++)
            dx[i * xs + j] = 0.0f;
        for (p0 = last + q; p0 >= q;) {
            size_t qq;
            p0 -= q;
            qq = P - p0 < q ? P - p0 : q;
            tr_gemm_at_set(colT, w, dyi + p0, KK, qq, OC, KK, P, qq);
            band_col2im(dx + i * xs, colT, l, p0, qq);
        }
    }
}

/* the padded planes and 8 floats of slack a vector lane may read past them */
size_t tr_conv2d_pad_floats(const struct tr_layer *l)
{
    return (size_t)l->in_c * (l->in_h + 2u * l->d.pad) * (l->in_w + 2u * l->d.pad) + 8u;
}

void tr_conv2d_pad(float *xpad, const float *x, const struct tr_layer *l)
{
    const size_t H = l->in_h, W = l->in_w, P = l->d.pad;
    const size_t plane = (H + 2 * P) * (W + 2 * P);
    size_t ic, w;

    for (ic = 0; ic < l->in_c; ic++)
        pad_plane(xpad + ic * plane, x + ic * H * W, H, W, P);
    for (w = 0; w < 8; w++)                       /* the slack */
        xpad[l->in_c * plane + w] = 0.0f;
}

/* y (OH, OW) = b + w_oc (IC*K*K) taps over the padded input, each output
 * starting at b and adding its taps in order (ic, ki, kj) */
void tr_conv2d_plane(float *y, const float *xpad, const float *w_oc, float b,
                     const struct tr_layer *l)
{
    const unsigned IC = l->in_c, K = l->d.kernel, S = l->d.stride;
    const unsigned OH = l->out_h, OW = l->out_w;
    const size_t Hp = l->in_h + 2u * l->d.pad, Wp = l->in_w + 2u * l->d.pad;
    unsigned oh, ow, ic, ki, kj;

    PLANE_WHOLE(y, xpad, w_oc, b, OH, OW, IC, K, S, Hp, Wp);
    for (oh = 0; oh < OH; oh++) {
        float *yr = y + (size_t)oh * OW;
        const float *xrow = xpad + (size_t)oh * S * Wp;
        if (S == 1) {
            plane_row_s1(yr, xrow, w_oc, b, OW, IC, K, Hp * Wp, Wp);
            continue;
        }
        for (ow = 0; ow < OW; ow++) {
            float acc = b;
            for (ic = 0; ic < IC; ic++)
                for (ki = 0; ki < K; ki++) {
                    const float *xr = xrow + (ic * Hp + ki) * Wp + (size_t)ow * S;
                    const float *wr = w_oc + ((size_t)ic * K + ki) * K;
                    for (kj = 0; kj < K; kj++)
                        acc += wr[kj] * xr[kj];
                }
            yr[ow] = acc;
        }
    }
}

/* dw_oc (IC*K*K) += the taps' products with g (OH, OW), each tap's sum
 * running over the output positions in row-major order */
void tr_conv2d_plane_dw(float *dw_oc, const float *xpad, const float *g,
                        const struct tr_layer *l)
{
    const unsigned IC = l->in_c, K = l->d.kernel, S = l->d.stride;
    const unsigned OH = l->out_h, OW = l->out_w;
    const size_t Hp = l->in_h + 2u * l->d.pad, Wp = l->in_w + 2u * l->d.pad;
    unsigned oh, ow, ic, ki, kj;

    for (ic = 0; ic < IC; ic++) {
        const float *xp = xpad + ic * Hp * Wp;
        float *dwc = dw_oc + (size_t)ic * K * K;
        if (K == 5 && S == 1) {
            plane_dw_k5(dwc, xp, g, OH, OW, Wp);
            continue;
        }
        for (ki = 0; ki < K; ki++)
            for (kj = 0; kj < K; kj++) {
                float acc = dwc[ki * K + kj];
                for (oh = 0; oh < OH; oh++) {
                    const float *xr = xp + ((size_t)oh * S + ki) * Wp + kj;
                    const float *gr = g + (size_t)oh * OW;
                    for (ow = 0; ow < OW; ow++)
                        acc += xr[(size_t)ow * S] * gr[ow];
                }
                dwc[ki * K + kj] = acc;
            }
    }
}
