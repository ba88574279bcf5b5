/* tinyring: the one-plane conv kernels' plain-C pieces for a scalar FPU
 * without assembly of its own (RV32, and the plain-C build of any target),
 * in front of tr_band_fpu.h's blocks.
 * Included by tr_layer_band.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_BAND_PLAIN_H
#define TR_BAND_PLAIN_H

/* plane_blk8_fpu's first step: none (its C makes the 5x5 case) */
#define PLANE_BLK8_FIRST(y, xrow, w_oc, b, IC, K, plane, Wp)

/* 12 outputs of a 5x5 kernel on a scalar FPU: a kernel row's 16 inputs
 * and the 12 sums in registers (30 of the 32), each input loaded once per
 * kernel row where blocks of 8 load 12 for 8 outputs. Each output starts
 * at b and adds its taps in order (ic, ki, kj). */
/* one tap's weight w times the 12 inputs its outputs meet */
#define TAP12(w, p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11)            \
    {                                                                         \
        const float wv = (w);                                                 \
        a0 += wv * p0; a1 += wv * p1; a2 += wv * p2; a3 += wv * p3;           \
        a4 += wv * p4; a5 += wv * p5; a6 += wv * p6; a7 += wv * p7;           \
        a8 += wv * p8; a9 += wv * p9; a10 += wv * p10; a11 += wv * p11;       \
    }
static void plane_blk12_k5(float *y, const float *xrow, const float *w_oc, float b,
                           unsigned IC, size_t plane, size_t Wp)
{
    float a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    float a8 = b, a9 = b, a10 = b, a11 = b;
    unsigned ic, ki;

    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < 5; ki++) {
            const float *xr = xrow + ic * plane + ki * Wp;
            const float *wr = w_oc + ((size_t)ic * 5 + ki) * 5;
            const float x0 = xr[0], x1 = xr[1], x2 = xr[2], x3 = xr[3], x4 = xr[4];
            const float x5 = xr[5], x6 = xr[6], x7 = xr[7], x8 = xr[8], x9 = xr[9];
            const float x10 = xr[10], x11 = xr[11], x12 = xr[12], x13 = xr[13];
            const float x14 = xr[14], x15 = xr[15];
            TAP12(wr[0], x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11)
            TAP12(wr[1], x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12)
            TAP12(wr[2], x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13)
            TAP12(wr[3], x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14)
            TAP12(wr[4], x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15)
        }
    y[0] = a0; y[1] = a1; y[2] = a2; y[3] = a3; y[4] = a4; y[5] = a5;
    y[6] = a6; y[7] = a7; y[8] = a8; y[9] = a9; y[10] = a10; y[11] = a11;
}
#undef TAP12

/* plane_row_s1's first step: blocks of 12 outputs of a 5x5 kernel where
 * blocks of 8 would leave 4 (ow: the row's counter, from 0) */
#define PLANE_ROW_BLK12(y, xrow, w_oc, b, OW, IC, K, plane, Wp, ow)           \
    for (; (K) == 5 && ow + 12 <= (OW) && ((OW) - ow) % 8 != 0; ow += 12)     \
        plane_blk12_k5((y) + ow, (xrow) + ow, w_oc, b, IC, plane, Wp)

/* plane_dw_row5's turns of 8 positions in C: a0..a4, x0..x3, x, gr, ow and
 * OW are plane_dw_row5's, DW_POS is tr_band_fpu.h's */
#define DW_TURNS8                                                                      \
    for (; ow + 8 <= OW; ow += 8) {         /* 8 positions per turn */                 \
        const float x4 = x[ow + 4], x5 = x[ow + 5], x6 = x[ow + 6], x7 = x[ow + 7];    \
        const float x8 = x[ow + 8], x9 = x[ow + 9], x10 = x[ow + 10], x11 = x[ow + 11]; \
        DW_POS(gr[ow], x0, x1, x2, x3, x4)                                             \
        DW_POS(gr[ow + 1], x1, x2, x3, x4, x5)                                         \
        DW_POS(gr[ow + 2], x2, x3, x4, x5, x6)                                         \
        DW_POS(gr[ow + 3], x3, x4, x5, x6, x7)                                         \
        DW_POS(gr[ow + 4], x4, x5, x6, x7, x8)                                         \
        DW_POS(gr[ow + 5], x5, x6, x7, x8, x9)                                         \
        DW_POS(gr[ow + 6], x6, x7, x8, x9, x10)                                        \
        DW_POS(gr[ow + 7], x7, x8, x9, x10, x11)                                       \
        x0 = x8; x1 = x9; x2 = x10; x3 = x11;                                          \
    }

/* the blocks are tr_band_fpu.h's */
#define plane_blk8 plane_blk8_fpu
#define plane_blk4 plane_blk4_fpu
#define plane_dw_k5 plane_dw_k5_fpu

#endif /* TR_BAND_PLAIN_H */
