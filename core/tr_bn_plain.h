/* tinyring: BatchNorm's lanes16 sums on scalar targets (Cortex-M4F,
 * M55, RV32, plain C): the 16 lanes as named float accumulators.
 * Included by tr_layer_bn.c alone, from its one #if that chooses how the
 * lanes16 sums hold their 16 lanes per target; not a header of its own. */
#ifndef TR_BN_PLAIN_H
#define TR_BN_PLAIN_H

/* the lanes as 16 named accumulators (TR_L16, tr_layer_kernels.h) */
#define TR_ADD(j) a##j += x[i + j];
#define TR_SQ(j) { const float d = x[i + j] - mean; a##j += d * d; }
#define TR_GX(j) a##j += dy[i + j] * ((x[i + j] - mean) * invstd);

float tr_sum_lanes16(const float *restrict x, size_t n)
{
    float s = 0.0f;
    size_t i, body = n - n % TR_LANES;
    TR_L16(TR_ZERO)

    for (i = 0; i < body; i += TR_LANES) {
        TR_L16(TR_ADD)
    }
    for (i = body; i < n; i++)
        s += x[i];
    TR_L16(TR_RED)
    return s;
}

float tr_bn2d_plane_sqdev(const float *restrict x, size_t n, float mean)
{
    float s = 0.0f;
    size_t i, body = n - n % TR_LANES;
    TR_L16(TR_ZERO)

    for (i = 0; i < body; i += TR_LANES) {
        TR_L16(TR_SQ)
    }
    for (i = body; i < n; i++) {
        float d = x[i] - mean;
        s += d * d;
    }
    TR_L16(TR_RED)
    return s;
}

/* the sums of dy and of dy*xhat in two passes of 16 lanes each (32
 * accumulators would not fit the registers); each sum's order is the same.
 * The sum of dy is tr_sum_lanes16's. */
static float dyxhat_lanes(const float *restrict dy, const float *restrict x, size_t n,
                          float mean, float invstd)
{
    float s = 0.0f;
    size_t i, body = n - n % TR_LANES;
    TR_L16(TR_ZERO)

    for (i = 0; i < body; i += TR_LANES) {
        TR_L16(TR_GX)
    }
    for (i = body; i < n; i++)
        s += dy[i] * ((x[i] - mean) * invstd);
    TR_L16(TR_RED)
    return s;
}

void tr_bn2d_plane_dsums(float *sb, float *sg, const float *restrict dy,
                         const float *restrict x, size_t n, float mean, float invstd)
{
    *sb = tr_sum_lanes16(dy, n);
    *sg = dyxhat_lanes(dy, x, n, mean, invstd);
}

#endif /* TR_BN_PLAIN_H */
