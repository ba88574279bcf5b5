/* tinyring: the one-plane conv kernels with Helium (the M-profile vector
 * extension with floats, Cortex-M55), in front of tr_band_fpu.h's blocks,
 * their fallback.
 * Included by tr_layer_band.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_BAND_MVE_H
#define TR_BAND_MVE_H

#include <arm_mve.h>

/* tr_band_fpu.h's blocks, the fallback of these */
static void plane_blk8_fpu(float *y, const float *xrow, const float *w_oc, float b,
                           unsigned IC, unsigned K, size_t plane, size_t Wp);
static void plane_blk4_fpu(float *y, const float *xrow, const float *w_oc, float b,
                           unsigned IC, unsigned K, size_t plane, size_t Wp);
static void plane_dw_k5_fpu(float *dwc, const float *xp, const float *g, unsigned OH,
                            unsigned OW, size_t Wp);

/* plane_blk8_fpu's and plane_row_s1's first steps: none (no assembly, no
 * blocks of 12) */
#define PLANE_BLK8_FIRST(y, xrow, w_oc, b, IC, K, plane, Wp)
#define PLANE_ROW_BLK12(y, xrow, w_oc, b, OW, IC, K, plane, Wp, ow)

/* plane_dw_row5 in turns of 4 (Helium's fallback: fewer instructions there) */
#define DW_TURNS8

/* ---- Helium: tr_band_fpu.h's blocks with 4-lane vectors, each lane one output
 * (or one tap) adding the same products in the same order; a block that met
 * a subnormal is computed again by the scalar one (tr_mve_flushed). */
/* nv vectors (1 or 2) of outputs: a tap's weight times the inputs it meets */
static inline __attribute__((always_inline)) int
plane_blk_mve(float *y, const float *xrow, const float *w_oc, float b, unsigned IC, unsigned K,
              size_t plane, size_t Wp, const int nv)
{
    const unsigned fpscr = tr_mve_begin();
    float32x4_t a0 = vdupq_n_f32(b), a1 = a0;
    unsigned ic, ki, kj;

    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++) {
            const float *xr = xrow + ic * plane + ki * Wp;
            const float *wr = w_oc + ((size_t)ic * K + ki) * K;
#pragma GCC unroll 5
            for (kj = 0; kj < K; kj++) {
                const float wv = wr[kj];
                a0 = vaddq_f32(a0, vmulq_n_f32(vld1q_f32(xr + kj), wv));
                if (nv > 1)
                    a1 = vaddq_f32(a1, vmulq_n_f32(vld1q_f32(xr + kj + 4), wv));
            }
        }
    if (tr_mve_flushed(fpscr))
        return 1;
    vst1q_f32(y, a0);
    if (nv > 1)
        vst1q_f32(y + 4, a1);
    return 0;
}

static void plane_blk8(float *y, const float *xrow, const float *w_oc, float b, unsigned IC,
                       unsigned K, size_t plane, size_t Wp)
{
    if (K == 5 ? plane_blk_mve(y, xrow, w_oc, b, IC, 5, plane, Wp, 2)
               : plane_blk_mve(y, xrow, w_oc, b, IC, K, plane, Wp, 2))
        plane_blk8_fpu(y, xrow, w_oc, b, IC, K, plane, Wp);
}

static void plane_blk4(float *y, const float *xrow, const float *w_oc, float b, unsigned IC,
                       unsigned K, size_t plane, size_t Wp)
{
    if (K == 5 ? plane_blk_mve(y, xrow, w_oc, b, IC, 5, plane, Wp, 1)
               : plane_blk_mve(y, xrow, w_oc, b, IC, K, plane, Wp, 1))
        plane_blk4_fpu(y, xrow, w_oc, b, IC, K, plane, Wp);
}

/* the 25 taps of a 5x5 stride-1 weight gradient: a kernel row's taps 0-3
 * in one vector, its tap 4 on the scalar FPU; all five rows per position */
#define DW_ROW(r)                                                             \
    a##r = vaddq_f32(a##r, vmulq_n_f32(vld1q_f32(xo + r * Wp), gv));         \
    t##r += xo[r * Wp + 4] * gv;

static void plane_dw_k5(float *dwc, const float *xp, const float *g, unsigned OH, unsigned OW,
                        size_t Wp)
{
    const unsigned fpscr = tr_mve_begin();
    float32x4_t a0 = vld1q_f32(dwc), a1 = vld1q_f32(dwc + 5), a2 = vld1q_f32(dwc + 10);
    float32x4_t a3 = vld1q_f32(dwc + 15), a4 = vld1q_f32(dwc + 20);
    float t0 = dwc[4], t1 = dwc[9], t2 = dwc[14], t3 = dwc[19], t4 = dwc[24];
    unsigned oh, ow;

    for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++) {
            const float gv = g[(size_t)oh * OW + ow], *xo = xp + (size_t)oh * Wp + ow;
            DW_ROW(0) DW_ROW(1) DW_ROW(2) DW_ROW(3) DW_ROW(4)
        }
    if (tr_mve_flushed(fpscr)) {
        plane_dw_k5_fpu(dwc, xp, g, OH, OW, Wp);
        return;
    }
    vst1q_f32(dwc, a0);
    dwc[4] = t0;
    vst1q_f32(dwc + 5, a1);
    dwc[9] = t1;
    vst1q_f32(dwc + 10, a2);
    dwc[14] = t2;
    vst1q_f32(dwc + 15, a3);
    dwc[19] = t3;
    vst1q_f32(dwc + 20, a4);
    dwc[24] = t4;
}
#undef DW_ROW

#endif /* TR_BAND_MVE_H */
