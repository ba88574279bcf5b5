/* tinyring: Linear, y = x w^T + b. */
#include "tr_layer_kernels.h"

/* Reference: one plain dot product per output. */
void tr_linear_forward_ref(float *y, const float *x, const float *w, const float *b,
                           const struct tr_layer *l, unsigned n)
{
    const size_t in = (size_t)l->in_c * l->in_h * l->in_w, out = l->out_c;
    size_t i, o, k;

    for (i = 0; i < n; i++)
        for (o = 0; o < out; o++) {
            float s = 0.0f;
            for (k = 0; k < in; k++)
                s += x[i * in + k] * w[o * in + k];
            y[i * out + o] = s + b[o];
        }
}

/* Fast: the dot product in 16 independent partial sums (TR_L16's named
 * accumulators), which a compiler may vectorise without reassociating
 * anything (strict FP), then a fixed-order reduction of the lanes. Same
 * bits on every target. */
#define TR_LIN_LANES 16
#define LIN_MAC(j) a##j += xi[k + j] * wo[k + j];
void tr_linear_forward(float *restrict y, const float *restrict x,
                       const float *restrict w, const float *restrict b,
                       const struct tr_layer *l, unsigned n)
{
    const size_t in = (size_t)l->in_c * l->in_h * l->in_w, out = l->out_c;
    const size_t body = in - in % TR_LIN_LANES;
    size_t i, o, k;

    for (i = 0; i < n; i++) {
        const float *xi = x + i * in;
        for (o = 0; o < out; o++) {
            const float *wo = w + o * in;
            float s = 0.0f;
            TR_L16(TR_ZERO)
            for (k = 0; k < body; k += TR_LIN_LANES) {
                TR_L16(LIN_MAC)
            }
            for (k = body; k < in; k++)
                s += xi[k] * wo[k];
            TR_L16(TR_RED)
            y[i * out + o] = s + b[o];
        }
    }
}
#undef LIN_MAC

/* dw[o][:] = sum_i dy[i][o] x[i][:], db[o] = sum_i dy[i][o],
 * dx[i][:] = sum_o dy[i][o] w[o][:]: all axpy over contiguous rows, which is
 * both the plain form and the vectorisable one. Where the GEMM has vector
 * tiles (one #if) the two sums are its GEMMs, the same products in the same
 * order: dw = dy^T x (tr_gemm_at_set, dy read as A stored transposed) and
 * dx = dy w (tr_gemm_set), each row of dw in registers over the whole batch
 * instead of read and written once per sample. */
#if defined(__GNUC__) && (defined(__AVX512F__) || defined(__AVX__) || \
                          defined(__ARM_NEON) || defined(__SSE2__))
void tr_linear_backward(float *restrict dx, float *restrict dw, float *restrict db,
                        const float *restrict dy, const float *restrict x,
                        const float *restrict w, const struct tr_layer *l, unsigned n)
{
    const size_t in = (size_t)l->in_c * l->in_h * l->in_w, out = l->out_c;
    size_t i, o;

    tr_gemm_at_set(dw, dy, x, out, in, n, out, in, in);
    for (o = 0; o < out; o++) {
        float s = 0.0f;
        for (i = 0; i < n; i++)
            s += dy[i * out + o];
        db[o] = s;
    }
    if (dx)
        tr_gemm_set(dx, dy, w, n, in, out, out, in, in);
}
#else
void tr_linear_backward(float *restrict dx, float *restrict dw, float *restrict db,
                        const float *restrict dy, const float *restrict x,
                        const float *restrict w, const struct tr_layer *l, unsigned n)
{
    const size_t in = (size_t)l->in_c * l->in_h * l->in_w, out = l->out_c;
    size_t i, o, k;

    for (o = 0; o < out; o++) {
        float *dwo = dw + o * in;
        float s = 0.0f;
        for (k = 0; k < in; k++)
            dwo[k] = 0.0f;
        for (i = 0; i < n; i++) {
            const float g = dy[i * out + o];
            const float *xi = x + i * in;
            s += g;
            for (k = 0; k < in; k++)
                dwo[k] += g * xi[k];
        }
        db[o] = s;
    }
    if (dx == NULL)
        return;
    for (i = 0; i < n; i++) {
        float *dxi = dx + i * in;
        for (k = 0; k < in; k++)
            dxi[k] = 0.0f;
        for (o = 0; o < out; o++) {
            const float g = dy[i * out + o];
            const float *wo = w + o * in;
            for (k = 0; k < in; k++)
                dxi[k] += g * wo[k];
        }
    }
}
#endif
