/* tinyring: the one-plane conv kernels on a scalar FPU (Cortex-M4F, M55,
 * RV32, plain C): plain float accumulators, which the Cortex-M4F keeps in
 * its 32 single registers. The target's file, included before this one,
 * gives the hooks: PLANE_BLK8_FIRST (the 5x5 block of 8 in assembly),
 * DW_TURNS8 (the weight gradient's turns of 8 positions), PLANE_ROW_BLK12
 * (blocks of 12), and plane_blk8, plane_blk4 and plane_dw_k5 (these
 * blocks, or Helium's in front of them).
 * Included by tr_layer_band.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_BAND_FPU_H
#define TR_BAND_FPU_H

/* four floats stored as one aggregate: a store-multiple on Arm (C99 6.5:
 * an aggregate with float members may access floats) */
struct tr_f4 {
    float v[4];
};

/* n floats of d +0: four at a time, then the rest */
static void zero_floats(float *d, size_t n)
{
    static const struct tr_f4 zero4;
    size_t w;

    for (w = 0; w + 4 <= n; w += 4)
        *(struct tr_f4 *)(void *)(d + w) = zero4;
    for (; w < n; w++)
        d[w] = 0.0f;
}

/* one channel (H, W) into its padded plane */
static void pad_plane(float *restrict xp, const float *restrict xs, size_t H, size_t W,
                      size_t P)
{
    const size_t Wp = W + 2 * P;
    size_t h, w;

    zero_floats(xp, P * Wp + P);                  /* top rows, first row's left */
    for (h = 0; h < H; h++) {
        float *r = xp + (P + h) * Wp + P;
        tr_copy_floats(r, xs + h * W, W);
        for (w = 0; h + 1 < H && w < 2 * P; w++)  /* this row's right, the next's left */
            r[W + w] = 0.0f;
    }
    zero_floats(xp + (P + H - 1) * Wp + P + W, P + P * Wp);  /* last right, bottom rows */
}

/* Written out so the compiler keeps every accumulator in a register (a
 * loop over an array of them stays in memory at -O2 on the Cortex-M4F). */
/* 8 outputs of a 5-wide kernel row: its 12 inputs and 5 weights loaded once */
#define K5_ROW8(xr, wr)                                                          \
    do {                                                                         \
        const float x0 = xr[0], x1 = xr[1], x2 = xr[2], x3 = xr[3], x4 = xr[4];  \
        const float x5 = xr[5], x6 = xr[6], x7 = xr[7], x8 = xr[8], x9 = xr[9];  \
        const float x10 = xr[10], x11 = xr[11];                                  \
        float w = wr[0];                                                         \
        a0 += w * x0; a1 += w * x1; a2 += w * x2; a3 += w * x3;                  \
        a4 += w * x4; a5 += w * x5; a6 += w * x6; a7 += w * x7;                  \
        w = wr[1];                                                               \
        a0 += w * x1; a1 += w * x2; a2 += w * x3; a3 += w * x4;                  \
        a4 += w * x5; a5 += w * x6; a6 += w * x7; a7 += w * x8;                  \
        w = wr[2];                                                               \
        a0 += w * x2; a1 += w * x3; a2 += w * x4; a3 += w * x5;                  \
        a4 += w * x6; a5 += w * x7; a6 += w * x8; a7 += w * x9;                  \
        w = wr[3];                                                               \
        a0 += w * x3; a1 += w * x4; a2 += w * x5; a3 += w * x6;                  \
        a4 += w * x7; a5 += w * x8; a6 += w * x9; a7 += w * x10;                 \
        w = wr[4];                                                               \
        a0 += w * x4; a1 += w * x5; a2 += w * x6; a3 += w * x7;                  \
        a4 += w * x8; a5 += w * x9; a6 += w * x10; a7 += w * x11;                \
    } while (0)

/* the same for 4 outputs (8 inputs) */
#define K5_ROW4(xr, wr)                                                          \
    do {                                                                         \
        const float x0 = xr[0], x1 = xr[1], x2 = xr[2], x3 = xr[3], x4 = xr[4];  \
        const float x5 = xr[5], x6 = xr[6], x7 = xr[7];                          \
        float w = wr[0];                                                         \
        a0 += w * x0; a1 += w * x1; a2 += w * x2; a3 += w * x3;                  \
        w = wr[1];                                                               \
        a0 += w * x1; a1 += w * x2; a2 += w * x3; a3 += w * x4;                  \
        w = wr[2];                                                               \
        a0 += w * x2; a1 += w * x3; a2 += w * x4; a3 += w * x5;                  \
        w = wr[3];                                                               \
        a0 += w * x3; a1 += w * x4; a2 += w * x5; a3 += w * x6;                  \
        w = wr[4];                                                               \
        a0 += w * x4; a1 += w * x5; a2 += w * x6; a3 += w * x7;                  \
    } while (0)

static void plane_blk8_fpu(float *y, const float *xrow, const float *w_oc, float b,
                           unsigned IC, unsigned K, size_t plane, size_t Wp)
{
    float a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    unsigned ic, ki, kj;

    PLANE_BLK8_FIRST(y, xrow, w_oc, b, IC, K, plane, Wp);
    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++) {
            const float *xr = xrow + ic * plane + ki * Wp;
            const float *wr = w_oc + ((size_t)ic * K + ki) * K;
            if (K == 5) {
                K5_ROW8(xr, wr);
                continue;
            }
            for (kj = 0; kj < K; kj++) {
                const float wv = wr[kj], *xk = xr + kj;
                a0 += wv * xk[0]; a1 += wv * xk[1]; a2 += wv * xk[2]; a3 += wv * xk[3];
                a4 += wv * xk[4]; a5 += wv * xk[5]; a6 += wv * xk[6]; a7 += wv * xk[7];
            }
        }
    y[0] = a0; y[1] = a1; y[2] = a2; y[3] = a3;
    y[4] = a4; y[5] = a5; y[6] = a6; y[7] = a7;
}

static void plane_blk4_fpu(float *y, const float *xrow, const float *w_oc, float b,
                           unsigned IC, unsigned K, size_t plane, size_t Wp)
{
    float a0 = b, a1 = b, a2 = b, a3 = b;
    unsigned ic, ki, kj;

    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++) {
            const float *xr = xrow + ic * plane + ki * Wp;
            const float *wr = w_oc + ((size_t)ic * K + ki) * K;
            if (K == 5) {
                K5_ROW4(xr, wr);
                continue;
            }
            for (kj = 0; kj < K; kj++) {
                const float wv = wr[kj], *xk = xr + kj;
                a0 += wv * xk[0]; a1 += wv * xk[1]; a2 += wv * xk[2]; a3 += wv * xk[3];
            }
        }
    y[0] = a0; y[1] = a1; y[2] = a2; y[3] = a3;
}

/* one kernel row of a 5x5 stride-1 weight gradient: its 5 taps' sums in
 * registers over the positions in order, the input row slid along. DW_POS
 * adds one position's products: gradient gv times the inputs p .. t its
 * five taps meet. */
#define DW_POS(gv, p, q, r, s, t)                                             \
    a0 += p * (gv); a1 += q * (gv); a2 += r * (gv); a3 += s * (gv); a4 += t * (gv);
static void plane_dw_row5(float *dwr, const float *xr0, const float *g, unsigned OH,
                          unsigned OW, size_t Wp)
{
    float a0 = dwr[0], a1 = dwr[1], a2 = dwr[2], a3 = dwr[3], a4 = dwr[4];
    unsigned oh, ow;

    for (oh = 0; oh < OH; oh++) {
        const float *x = xr0 + (size_t)oh * Wp, *gr = g + (size_t)oh * OW;
        float x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
        ow = 0;
        DW_TURNS8;
        for (; ow + 4 <= OW; ow += 4) {         /* then 4 */
            const float g0 = gr[ow], g1 = gr[ow + 1], g2 = gr[ow + 2], g3 = gr[ow + 3];
            const float x4 = x[ow + 4], x5 = x[ow + 5], x6 = x[ow + 6], x7 = x[ow + 7];
            DW_POS(g0, x0, x1, x2, x3, x4)
            DW_POS(g1, x1, x2, x3, x4, x5)
            DW_POS(g2, x2, x3, x4, x5, x6)
            DW_POS(g3, x3, x4, x5, x6, x7)
            x0 = x4; x1 = x5; x2 = x6; x3 = x7;
        }
        for (; ow < OW; ow++) {                 /* then one */
            const float x4 = x[ow + 4];
            DW_POS(gr[ow], x0, x1, x2, x3, x4)
            x0 = x1; x1 = x2; x2 = x3; x3 = x4;
        }
    }
    dwr[0] = a0; dwr[1] = a1; dwr[2] = a2; dwr[3] = a3; dwr[4] = a4;
}
#undef DW_POS

static void plane_dw_k5_fpu(float *dwc, const float *xp, const float *g, unsigned OH,
                            unsigned OW, size_t Wp)
{
    unsigned ki;

    for (ki = 0; ki < 5; ki++)
        plane_dw_row5(dwc + 5 * ki, xp + ki * Wp, g, OH, OW, Wp);
}

/* one row of outputs, stride 1: blocks of 8, of 4, then single outputs */
static void plane_row_s1(float *y, const float *xrow, const float *w_oc, float b,
                         unsigned OW, unsigned IC, unsigned K, size_t plane, size_t Wp)
{
    unsigned ow = 0, ic, ki, kj;

    PLANE_ROW_BLK12(y, xrow, w_oc, b, OW, IC, K, plane, Wp, ow);
    for (; ow + 8 <= OW; ow += 8)
        plane_blk8(y + ow, xrow + ow, w_oc, b, IC, K, plane, Wp);
    for (; ow + 4 <= OW; ow += 4)
        plane_blk4(y + ow, xrow + ow, w_oc, b, IC, K, plane, Wp);
    for (; ow < OW; ow++) {
        float acc = b;
        for (ic = 0; ic < IC; ic++)
            for (ki = 0; ki < K; ki++) {
                const float *xr = xrow + ic * plane + ki * Wp + ow;
                const float *wr = w_oc + ((size_t)ic * K + ki) * K;
                for (kj = 0; kj < K; kj++)
                    acc += wr[kj] * xr[kj];
            }
        y[ow] = acc;
    }
}

/* tr_conv2d_plane's first step: none (no whole-plane tiles on a scalar FPU) */
#define TR_PLANE_TILES 0   /* (test_lean_plain.c checks which file was taken) */
#define PLANE_WHOLE(y, xpad, w_oc, b, OH, OW, IC, K, S, Hp, Wp)

#endif /* TR_BAND_FPU_H */
