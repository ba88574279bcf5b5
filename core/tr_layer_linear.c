/* tinyring: Linear, y = x w^T + b. */
#include "tr_config.h"   /* first: limits and the float guard */
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

/* Fast: the dot product in 16 independent partial sums (lane j adds the
 * products k = 16m + j in order), then the tail and the lanes in order onto
 * +0, then the bias: the same bits on every target. Where the GEMM has
 * vector tiles, host vectors hold the lanes and a block of TR_LIN_SB
 * samples x TR_LIN_OB outputs runs side by side (each input vector loaded
 * once for the block's outputs, w's rows once for its samples; one dot
 * product alone waited on its own chain); elsewhere TR_L16's named
 * accumulators, which a compiler may vectorise without reassociating. */

/* dw[o][:] = sum_i dy[i][o] x[i][:], db[o] = sum_i dy[i][o],
 * dx[i][:] = sum_o dy[i][o] w[o][:]: all axpy over contiguous rows, which is
 * both the plain form and the vectorisable one. Where the GEMM has vector
 * tiles the two sums are its GEMMs, the same products in the same
 * order: dw = dy^T x (tr_gemm_at_set, dy read as A stored transposed) and
 * dx = dy w (tr_gemm_set), each row of dw in registers over the whole batch
 * instead of read and written once per sample.
 * The kernel bodies per target, chosen by this one #if: tr_linear_vec.h
 * where the target has vector registers, tr_linear_plain.h elsewhere. */
#define TR_LIN_LANES 16
#if TR_HOST_VECTORS                                 /* AVX-512, AVX, SSE2, NEON */
#include "tr_linear_vec.h"
#else                                               /* M4F, M55, RV32, plain C */
#include "tr_linear_plain.h"
#endif
