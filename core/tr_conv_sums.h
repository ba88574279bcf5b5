/* tinyring: conv's output gradient sums and transpose apart, and no
 * one-channel weight gradient in registers: every target without AVX-512
 * (tr_conv_avx512.h has both).
 * Included by tr_layer_conv.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_CONV_SUMS_H
#define TR_CONV_SUMS_H

/* the backward's first step per sample: db's sums (tr_sum_lanes16 per
 * row), then dyt, the transpose (a shared form of the two moved the
 * Cortex-M4F's count by 32,000 instructions a sample); oc the caller's
 * counter */
#define DY_SUMS_TRANSPOSE(dyt, db, dyi, OC, p, oc)                            \
    do {                                                                      \
        for (oc = 0; oc < OC; oc++)                                           \
            db[oc] += tr_sum_lanes16(dyi + oc * p, p);                        \
        transpose(dyt, dyi, OC, p);                                           \
    } while (0)

/* no dw1 */
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

#endif /* TR_CONV_SUMS_H */
