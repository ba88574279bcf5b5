/* tinyring: BatchNorm's lanes16 sums on vector hosts (AVX-512, AVX,
 * SSE2, NEON): the 16 lanes as TR_V16 host vectors, lane j in vector
 * j / TR_VL (tr_layer_kernels.h).
 * Included by tr_layer_bn.c alone, from its one #if that chooses how the
 * lanes16 sums hold their 16 lanes per target; not a header of its own. */
#ifndef TR_BN_VEC_H
#define TR_BN_VEC_H

/* the 16 lanes at p, as TR_V16 vectors */
#define V16_LOAD(v, p)                                                        \
    do {                                                                      \
        int k_;                                                               \
        for (k_ = 0; k_ < TR_V16; k_++)                                       \
            TR_VLOAD((v)[k_], (p) + k_ * TR_VL);                              \
    } while (0)
/* s += the 16 lanes of acc, in order */
#define V16_REDUCE(s, acc)                                                    \
    do {                                                                      \
        int k_, j_;                                                           \
        for (k_ = 0; k_ < TR_V16; k_++)                                       \
            for (j_ = 0; j_ < TR_VL; j_++)                                    \
                (s) += (acc)[k_][j_];                                         \
    } while (0)

float tr_sum_lanes16(const float *restrict x, size_t n)
{
    tr_vfl acc[TR_V16] = {{0}};
    float s = 0.0f;
    size_t i, body = n - n % TR_LANES;
    int k;

    for (i = 0; i < body; i += TR_LANES) {
        tr_vfl v[TR_V16];
        V16_LOAD(v, x + i);
        for (k = 0; k < TR_V16; k++)
            acc[k] += v[k];
    }
    for (i = body; i < n; i++)
        s += x[i];
    V16_REDUCE(s, acc);
    return s;
}

float tr_bn2d_plane_sqdev(const float *restrict x, size_t n, float mean)
{
    tr_vfl acc[TR_V16] = {{0}};
    float s = 0.0f;
    size_t i, body = n - n % TR_LANES;
    int k;

    for (i = 0; i < body; i += TR_LANES) {
        tr_vfl d[TR_V16];
        V16_LOAD(d, x + i);
        for (k = 0; k < TR_V16; k++) {
            d[k] -= mean;
            acc[k] += d[k] * d[k];
        }
    }
    for (i = body; i < n; i++) {
        float d = x[i] - mean;
        s += d * d;
    }
    V16_REDUCE(s, acc);
    return s;
}

void tr_bn2d_plane_dsums(float *sb, float *sg, const float *restrict dy,
                         const float *restrict x, size_t n, float mean, float invstd)
{
    tr_vfl ab[TR_V16] = {{0}}, ag[TR_V16] = {{0}};
    float b = 0.0f, g = 0.0f;
    size_t i, body = n - n % TR_LANES;
    int k;

    for (i = 0; i < body; i += TR_LANES) {
        tr_vfl d[TR_V16], v[TR_V16];
        V16_LOAD(d, dy + i);
        V16_LOAD(v, x + i);
        for (k = 0; k < TR_V16; k++) {
            ab[k] += d[k];
            ag[k] += d[k] * ((v[k] - mean) * invstd);
        }
    }
    for (i = body; i < n; i++) {
        b += dy[i];
        g += dy[i] * ((x[i] - mean) * invstd);
    }
    V16_REDUCE(b, ab);
    V16_REDUCE(g, ag);
    *sb = b;
    *sg = g;
}

#endif /* TR_BN_VEC_H */
