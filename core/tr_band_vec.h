/* tinyring: the one-plane conv kernels on vector hosts (AVX-512, AVX, SSE2,
 * NEON): GCC's generic vectors, which the compiler maps to the target's
 * registers (8 floats, and the whole-plane tiles the registers' width).
 * Same operations in the same order as tr_band_fpu.h's: each lane is one
 * output (or one tap) of its own.
 * Included by tr_layer_band.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_BAND_VEC_H
#define TR_BAND_VEC_H

typedef float tr_v8 __attribute__((vector_size(32)));
/* an unaligned load (a macro: a function returning a vector wider than the
 * target's registers would change the ABI on SSE-only builds) */
#define V8_LOAD(v, p) __builtin_memcpy(&(v), (p), sizeof(tr_v8))

/* one row of outputs, stride 1, in chunks of 32: four vectors of 8
 * accumulators, independent chains over the taps (one chain would wait for
 * the add latency at every tap); the lanes past the row's end compute on
 * the next row (or the padding's slack) and are not stored */
static void plane_row_s1(float *y, const float *xrow, const float *w_oc, float b,
                         unsigned OW, unsigned IC, unsigned K, size_t plane, size_t Wp)
{
    unsigned ow, ic, ki, kj, j;

    for (ow = 0; ow < OW; ow += 32) {
        const unsigned rem = OW - ow < 32 ? OW - ow : 32;
        tr_v8 a0 = {b, b, b, b, b, b, b, b}, a1 = a0, a2 = a0, a3 = a0;
        float out[32];
        for (ic = 0; ic < IC; ic++)
            for (ki = 0; ki < K; ki++) {
                const float *xr = xrow + ic * plane + ki * Wp + ow;
                const float *wr = w_oc + ((size_t)ic * K + ki) * K;
                for (kj = 0; kj < K; kj++) {
                    const float wv = wr[kj];
                    tr_v8 x0, x1, x2, x3;
                    V8_LOAD(x0, xr + kj);
                    a0 += wv * x0;
                    if (rem > 8) {
                        V8_LOAD(x1, xr + kj + 8);
                        a1 += wv * x1;
                    }
                    if (rem > 16) {
                        V8_LOAD(x2, xr + kj + 16);
                        a2 += wv * x2;
                    }
                    if (rem > 24) {
                        V8_LOAD(x3, xr + kj + 24);
                        a3 += wv * x3;
                    }
                }
            }
        __builtin_memcpy(out, &a0, sizeof a0);
        __builtin_memcpy(out + 8, &a1, sizeof a1);
        __builtin_memcpy(out + 16, &a2, sizeof a2);
        __builtin_memcpy(out + 24, &a3, sizeof a3);
        for (j = 0; j < rem; j++)
            y[ow + j] = out[j];
    }
}

/* Whole planes, stride 1: tiles of PR output rows x PN vectors of PV
 * outputs, PR*PN accumulators in registers (16 where the target has 32
 * vector registers, 8 where it has 16). A tap's weight is loaded once
 * for the tile, and each output still starts at b and adds its taps in
 * order (ic, ki, kj). */
#if defined(__AVX512F__)
#define TR_PV 16
#define TR_PR 8
#define TR_PN 2
#elif defined(__AVX__)
#define TR_PV 8
#define TR_PR 2
#define TR_PN 4
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define TR_PV 4
#define TR_PR 4
#define TR_PN 4
#else
#define TR_PV 4
#define TR_PR 2
#define TR_PN 4
#endif
typedef float tr_pv __attribute__((vector_size(TR_PV * 4)));
#define TR_PLANE_TILES 1   /* (test_lean_plain.c checks which file was taken) */

static inline __attribute__((always_inline)) void
plane_tile(float *y, const float *xrow, const float *w_oc, float b, unsigned OW, unsigned IC,
           unsigned K, size_t plane, size_t Wp, const int r, const int nv)
{
    const tr_pv zero = {0};
    tr_pv acc[TR_PR][TR_PN];
    unsigned ic, ki, kj;
    int t, v;

    for (t = 0; t < r; t++)
        for (v = 0; v < nv; v++)
            acc[t][v] = b - zero;               /* b - (+0) is b, -0 included */
    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++) {
            const float *xr = xrow + ic * plane + ki * Wp;
            const float *wr = w_oc + ((size_t)ic * K + ki) * K;
            for (kj = 0; kj < K; kj++) {
                const float wv = wr[kj];
                for (t = 0; t < r; t++)
                    for (v = 0; v < nv; v++) {
                        tr_pv x;
                        __builtin_memcpy(&x, xr + t * Wp + kj + v * TR_PV, sizeof x);
                        acc[t][v] += wv * x;
                    }
            }
        }
    for (t = 0; t < r; t++)
        for (v = 0; v < nv; v++) {
            const unsigned o = (unsigned)v * TR_PV;
            if (o + TR_PV <= OW) {
                __builtin_memcpy(y + (size_t)t * OW + o, &acc[t][v], sizeof acc[t][v]);
            } else {
                unsigned e;
                for (e = 0; o + e < OW; e++)
                    y[(size_t)t * OW + o + e] = acc[t][v][e];
            }
        }
}

/* 1 if tiles can make the whole plane: a row fits PN vectors, whose reads
 * past the row stay inside the padded input and its 8 floats of slack */
static int plane_tiles(unsigned OW, unsigned K, size_t Wp)
{
    const unsigned nv = (OW + TR_PV - 1) / TR_PV;
    return nv <= TR_PN && nv * TR_PV + K - 2 <= Wp + 7;
}

/* r rows (TR_PR, TR_PR / 2 or 1) of a plane that plane_tiles can make */
static void plane_rows(float *y, const float *xrow, const float *w_oc, float b, unsigned OW,
                       unsigned IC, unsigned K, size_t plane, size_t Wp, int r)
{
    const int nv = (int)((OW + TR_PV - 1) / TR_PV);
    unsigned o;
#define TR_PLANE_CASE(R, NV)                                                  \
    if (r == (R) && nv == (NV)) {                                             \
        plane_tile(y, xrow, w_oc, b, OW, IC, K, plane, Wp, R, NV);            \
        return;                                                               \
    }
    TR_PLANE_CASE(TR_PR, TR_PN)
    TR_PLANE_CASE(TR_PR, TR_PN - 1)
    TR_PLANE_CASE(TR_PR / 2, TR_PN)
    TR_PLANE_CASE(TR_PR / 2, TR_PN - 1)
    TR_PLANE_CASE(1, TR_PN)
    TR_PLANE_CASE(1, TR_PN - 1)
#undef TR_PLANE_CASE
    for (; r > 0; r--, y += OW, xrow += Wp)     /* narrower rows: a vector at a time */
        for (o = 0; o < OW; o += TR_PV)
            plane_tile(y + o, xrow + o, w_oc, b, OW - o, IC, K, plane, Wp, 1, 1);
}

/* a plane, stride 1, in tiles of TR_PR rows, then the rows left */
static void plane_s1_tiles(float *y, const float *xpad, const float *w_oc, float b,
                           unsigned OH, unsigned OW, unsigned IC, unsigned K, size_t plane,
                           size_t Wp)
{
    unsigned oh = 0;

    while (oh < OH) {
        const unsigned left = OH - oh;
        const int r = left >= TR_PR ? TR_PR : left >= TR_PR / 2 ? TR_PR / 2 : 1;
        plane_rows(y + (size_t)oh * OW, xpad + (size_t)oh * Wp, w_oc, b, OW, IC, K, plane, Wp,
                   r);
        oh += (unsigned)r;
    }
}

/* tr_conv2d_plane's first step: a stride-1 plane in tiles, where tiles can
 * make it (the plane made, it returns) */
#define PLANE_WHOLE(y, xpad, w_oc, b, OH, OW, IC, K, S, Hp, Wp)               \
    if ((S) == 1 && plane_tiles(OW, K, Wp)) {                                 \
        plane_s1_tiles(y, xpad, w_oc, b, OH, OW, IC, K, (Hp) * (Wp), Wp);     \
        return;                                                               \
    }

/* one channel (H, W) into its padded plane: the plane zeroed, then each
 * row copied in whole vectors (the last one ending at the row's end) */
static void pad_plane(float *restrict xp, const float *restrict xs, size_t H, size_t W,
                      size_t P)
{
    const size_t Wp = W + 2 * P, n = (H + 2 * P) * Wp;
    const tr_pv zero = {0};
    size_t q, h, w;

    for (q = 0; q + TR_PV <= n; q += TR_PV)
        __builtin_memcpy(xp + q, &zero, sizeof zero);
    for (; q < n; q++)
        xp[q] = 0.0f;
    for (h = 0; h < H; h++) {
        float *r = xp + (P + h) * Wp + P;
        const float *src = xs + h * W;
        tr_pv v;
        if (W < TR_PV) {
            for (w = 0; w < W; w++)
                r[w] = src[w];
            continue;
        }
        for (w = 0; w + TR_PV <= W; w += TR_PV) {
            __builtin_memcpy(&v, src + w, sizeof v);
            __builtin_memcpy(r + w, &v, sizeof v);
        }
        __builtin_memcpy(&v, src + W - TR_PV, sizeof v);
        __builtin_memcpy(r + W - TR_PV, &v, sizeof v);
    }
}

/* the 25 taps of a 5x5 stride-1 weight gradient: one vector per kernel row
 * (lanes 0..4 are its taps, 5..7 are discarded; the padded input has 8
 * floats of slack for them), each lane's sum over the positions in order */
static void plane_dw_k5(float *dwc, const float *xp, const float *g, unsigned OH, unsigned OW,
                        size_t Wp)
{
    tr_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0};
    unsigned oh, ow, t;

    for (t = 0; t < 5; t++) {
        a0[t] = dwc[t];
        a1[t] = dwc[5 + t];
        a2[t] = dwc[10 + t];
        a3[t] = dwc[15 + t];
        a4[t] = dwc[20 + t];
    }
    for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++) {
            const float gv = g[(size_t)oh * OW + ow];
            const float *x0 = xp + (size_t)oh * Wp + ow;
            tr_v8 x;
            V8_LOAD(x, x0);
            a0 += x * gv;
            V8_LOAD(x, x0 + Wp);
            a1 += x * gv;
            V8_LOAD(x, x0 + 2 * Wp);
            a2 += x * gv;
            V8_LOAD(x, x0 + 3 * Wp);
            a3 += x * gv;
            V8_LOAD(x, x0 + 4 * Wp);
            a4 += x * gv;
        }
    for (t = 0; t < 5; t++) {
        dwc[t] = a0[t];
        dwc[5 + t] = a1[t];
        dwc[10 + t] = a2[t];
        dwc[15 + t] = a3[t];
        dwc[20 + t] = a4[t];
    }
}

#endif /* TR_BAND_VEC_H */
