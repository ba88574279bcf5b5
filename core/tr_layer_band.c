/* tinyring: Conv2d in bands of output positions, and one output plane at a
 * time, for the lean execution plan. Same bits as tr_conv2d_forward and
 * tr_conv2d_backward (docs/DESIGN.md, "The arithmetic every plan and target
 * computes"); the scratch holds one band instead of the whole image.
 *
 * A band is q consecutive output positions p0 .. p0+q-1 of one sample
 * (row-major, so it may start and end inside a row). With KK = IC*K*K:
 *   forward   col (KK, q) of the band, y[:, band] = b + w (OC, KK) * col
 *   dweight   colT (q, KK) of the band, dw (OC, KK) += dy[:, band] * colT,
 *             bands in ascending order (each weight's sum runs over the
 *             positions in order, stored as a float between bands)
 *   dinput    dyT (q, OC), dcolT (q, KK) = dyT * w, then added into dx
 *             position by position from the band's last to its first, the
 *             bands from the last to the first: every input element gets
 *             its taps in ascending order, as col2im adds them.
 * Scratch: q * (KK + OC) floats (tr_conv2d_band_floats).
 *
 * The plane kernels compute one output channel of one sample directly from
 * the sample's zero-padded input (IC, H+2P, W+2P): the plan that recomputes
 * a first convolution instead of storing it uses them. */
#include "tr_layer_kernels.h"

size_t tr_conv2d_band_floats(const struct tr_layer *l, size_t q)
{
    return q * ((size_t)l->in_c * l->d.kernel * l->d.kernel + l->out_c);
}

/* col (KK, q): tap t's row holds the input value each band position reads,
 * +0 in the padding. Positions are walked one output-row segment at a time. */
static void band_col(float *col, const float *x, const struct tr_layer *l, size_t p0, size_t q)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w, OW = l->out_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    unsigned ic, ki, kj, wlo, whi;

    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++)
            for (kj = 0; kj < K; kj++) {
                float *row = col + (((size_t)ic * K + ki) * K + kj) * q;
                size_t j = 0, p = p0;
                tr_conv2d_valid_range(&wlo, &whi, kj, S, P, W, OW);
                while (j < q) {
                    const unsigned oh = (unsigned)(p / OW), ow0 = (unsigned)(p % OW);
                    const unsigned seg = (unsigned)(q - j < OW - ow0 ? q - j : OW - ow0);
                    const long ih = (long)oh * S + ki - (long)P;
                    unsigned ow;
                    if (ih < 0 || ih >= (long)H) {
                        for (ow = 0; ow < seg; ow++)
                            row[j + ow] = 0.0f;
                    } else {
                        const float *xr = x + ((size_t)ic * H + (size_t)ih) * W;
                        for (ow = ow0; ow < ow0 + seg; ow++)
                            row[j + ow - ow0] = ow >= wlo && ow < whi
                                                    ? xr[(size_t)ow * S + kj - P] : 0.0f;
                    }
                    j += seg;
                    p += seg;
                }
            }
}

/* colT (q, KK): each band position's patch, taps (ic, ki, kj) in order */
static void band_colT(float *colT, const float *x, const struct tr_layer *l, size_t p0,
                      size_t q)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w, OW = l->out_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    const size_t KK = (size_t)IC * K * K;
    size_t j;
    unsigned ic, ki, kj;

    for (j = 0; j < q; j++) {
        const unsigned oh = (unsigned)((p0 + j) / OW), ow = (unsigned)((p0 + j) % OW);
        const long iw0 = (long)ow * S - (long)P;
        float *r = colT + j * KK;
        for (ic = 0; ic < IC; ic++)
            for (ki = 0; ki < K; ki++, r += K) {
                const long ih = (long)oh * S + ki - (long)P;
                const float *xr;
                if (ih < 0 || ih >= (long)H) {
                    for (kj = 0; kj < K; kj++)
                        r[kj] = 0.0f;
                    continue;
                }
                xr = x + ((size_t)ic * H + (size_t)ih) * W;
                if (iw0 >= 0 && iw0 + (long)K <= (long)W) {
                    for (kj = 0; kj < K; kj++)
                        r[kj] = xr[iw0 + (long)kj];
                } else {
                    for (kj = 0; kj < K; kj++) {
                        const long iw = iw0 + (long)kj;
                        r[kj] = iw >= 0 && iw < (long)W ? xr[iw] : 0.0f;
                    }
                }
            }
    }
}

/* dx (IC, H, W) += dcolT (q, KK) over the taps that read inside the input,
 * positions from the band's last to its first */
static void band_col2imT(float *dx, const float *dcolT, const struct tr_layer *l, size_t p0,
                         size_t q)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w, OW = l->out_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    const size_t KK = (size_t)IC * K * K;
    size_t j;
    unsigned ic, ki, kj;

    for (j = q; j-- > 0;) {
        const unsigned oh = (unsigned)((p0 + j) / OW), ow = (unsigned)((p0 + j) % OW);
        const long iw0 = (long)ow * S - (long)P;
        const float *r = dcolT + j * KK;
        for (ic = 0; ic < IC; ic++)
            for (ki = 0; ki < K; ki++, r += K) {
                const long ih = (long)oh * S + ki - (long)P;
                float *xr;
                if (ih < 0 || ih >= (long)H)
                    continue;
                xr = dx + ((size_t)ic * H + (size_t)ih) * W;
                if (iw0 >= 0 && iw0 + (long)K <= (long)W) {
                    for (kj = 0; kj < K; kj++)
                        xr[iw0 + (long)kj] += r[kj];
                } else {
                    for (kj = 0; kj < K; kj++) {
                        const long iw = iw0 + (long)kj;
                        if (iw >= 0 && iw < (long)W)
                            xr[iw] += r[kj];
                    }
                }
            }
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
    float *colT = scratch;                      /* (q, KK), then dcolT */
    float *dyT = scratch + q * KK;              /* (q, OC) */
    size_t i, oc, j, p0;

    for (j = 0; j < OC * KK; j++)
        dw[j] = 0.0f;
    for (oc = 0; oc < OC; oc++)
        db[oc] = 0.0f;
    for (i = 0; i < n; i++) {
        const float *dyi = dy + i * OC * P;
        for (oc = 0; oc < OC; oc++)
            db[oc] += tr_sum_lanes16(dyi + oc * P, P);
        for (p0 = 0; p0 < P; p0 += q) {
            const size_t qq = P - p0 < q ? P - p0 : q;
            band_colT(colT, x + i * xs, l, p0, qq);
            tr_gemm(dw, dyi + p0, colT, OC, KK, qq, P, KK, KK);
        }
        if (dx == NULL)
            continue;
        /* x of this sample is read: its dx may now take its place */
        for (j = 0; j < xs; j++)
            dx[i * xs + j] = 0.0f;
        for (p0 = last + q; p0 >= q;) {
            size_t qq;
            p0 -= q;
            qq = P - p0 < q ? P - p0 : q;
            for (j = 0; j < qq; j++)
                for (oc = 0; oc < OC; oc++)
                    dyT[j * OC + oc] = dyi[oc * P + p0 + j];
            tr_gemm_set(colT, dyT, w, qq, KK, OC, OC, KK, KK);
            band_col2imT(dx + i * xs, colT, l, p0, qq);
        }
    }
}

size_t tr_conv2d_pad_floats(const struct tr_layer *l)
{
    return (size_t)l->in_c * (l->in_h + 2u * l->d.pad) * (l->in_w + 2u * l->d.pad);
}

void tr_conv2d_pad(float *xpad, const float *x, const struct tr_layer *l)
{
    const size_t H = l->in_h, W = l->in_w, P = l->d.pad;
    const size_t Hp = H + 2 * P, Wp = W + 2 * P;
    size_t ic, h, w;

    for (ic = 0; ic < l->in_c; ic++) {
        float *xp = xpad + ic * Hp * Wp;
        const float *xs = x + ic * H * W;
        for (h = 0; h < Hp; h++)
            for (w = 0; w < Wp; w++)
                xp[h * Wp + w] = h >= P && h < P + H && w >= P && w < P + W
                                     ? xs[(h - P) * W + (w - P)] : 0.0f;
    }
}

#define TR_PLANE_BLK 8   /* output positions of a row kept in registers */

/* y (OH, OW) = b + w_oc (IC*K*K) taps over the padded input, each output
 * starting at b and adding its taps in order (ic, ki, kj) */
void tr_conv2d_plane(float *y, const float *xpad, const float *w_oc, float b,
                     const struct tr_layer *l)
{
    const unsigned IC = l->in_c, K = l->d.kernel, S = l->d.stride;
    const unsigned OH = l->out_h, OW = l->out_w;
    const size_t Hp = l->in_h + 2u * l->d.pad, Wp = l->in_w + 2u * l->d.pad;
    unsigned oh, ow, ic, ki, kj, j;

    for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow += TR_PLANE_BLK) {
            const unsigned nb = OW - ow < TR_PLANE_BLK ? OW - ow : TR_PLANE_BLK;
            float acc[TR_PLANE_BLK];
            for (j = 0; j < TR_PLANE_BLK; j++)
                acc[j] = b;
            for (ic = 0; ic < IC; ic++)
                for (ki = 0; ki < K; ki++) {
                    const float *xr = xpad + ((size_t)ic * Hp + (size_t)oh * S + ki) * Wp +
                                      (size_t)ow * S;
                    const float *wr = w_oc + ((size_t)ic * K + ki) * K;
                    for (kj = 0; kj < K; kj++) {
                        const float wv = wr[kj];
                        if (nb == TR_PLANE_BLK) {
                            for (j = 0; j < TR_PLANE_BLK; j++)
                                acc[j] += wv * xr[(size_t)j * S + kj];
                        } else {
                            for (j = 0; j < nb; j++)
                                acc[j] += wv * xr[(size_t)j * S + kj];
                        }
                    }
                }
            for (j = 0; j < nb; j++)
                y[(size_t)oh * OW + ow + j] = acc[j];
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
    unsigned oh, ow, ic, ki, kj0, j;

    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++)
            for (kj0 = 0; kj0 < K; kj0 += TR_PLANE_BLK) {
                const unsigned nb = K - kj0 < TR_PLANE_BLK ? K - kj0 : TR_PLANE_BLK;
                float *dwr = dw_oc + ((size_t)ic * K + ki) * K + kj0;
                float acc[TR_PLANE_BLK];
                for (j = 0; j < nb; j++)
                    acc[j] = dwr[j];
                for (oh = 0; oh < OH; oh++) {
                    const float *xr = xpad + ((size_t)ic * Hp + (size_t)oh * S + ki) * Wp + kj0;
                    const float *gr = g + (size_t)oh * OW;
                    for (ow = 0; ow < OW; ow++) {
                        const float gv = gr[ow];
                        const float *xo = xr + (size_t)ow * S;
                        for (j = 0; j < nb; j++)
                            acc[j] += xo[j] * gv;
                    }
                }
                for (j = 0; j < nb; j++)
                    dwr[j] = acc[j];
            }
}
