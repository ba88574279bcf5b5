/* tinyring: the linear layer on scalar targets (Cortex-M4F, M55,
 * RV32, plain C): the forward's 16 named accumulators, the backward's
 * axpy rows.
 * Included by tr_layer_linear.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_LINEAR_PLAIN_H
#define TR_LINEAR_PLAIN_H

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

/* backward: the axpy rows in plain loops */
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

#endif /* TR_LINEAR_PLAIN_H */
