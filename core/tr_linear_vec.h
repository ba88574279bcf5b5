/* tinyring: the linear layer on vector hosts (AVX-512, AVX, SSE2,
 * NEON): the forward's blocks of samples x outputs in host vectors, the
 * backward as the GEMM's vector tiles.
 * Included by tr_layer_linear.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_LINEAR_VEC_H
#define TR_LINEAR_VEC_H

/* a 16-lane sum is TR_V16 host vectors (tr_layer_kernels.h): with AVX-512
 * 4 x 5 sums are 20 of the 32 registers; 2 x 2 are 8 of AVX's 16 (and 8
 * of NEON's 32 in 4-lane vectors, 16 with the loads); SSE's 16 registers
 * take 1 x 2 */
#if TR_VL == 16
#define TR_LIN_SB 4
#define TR_LIN_OB 5
#elif TR_VL == 8 || defined(__aarch64__)
#define TR_LIN_SB 2
#define TR_LIN_OB 2
#else
#define TR_LIN_SB 1
#define TR_LIN_OB 2
#endif

/* y[i0 + s][o0 + t] for s < sb, t < ob (constants where it is inlined) */
static inline __attribute__((always_inline)) void
lin_block(float *restrict y, const float *restrict x, const float *restrict w,
          const float *restrict b, size_t in, size_t out, size_t i0, size_t o0, const int sb,
          const int ob)
{
    const size_t body = in - in % TR_LIN_LANES;
    tr_vfl acc[TR_LIN_SB][TR_LIN_OB][TR_V16];
    float r[TR_LIN_SB][TR_LIN_OB];
    size_t k;
    int s, t, j, v;

    for (s = 0; s < sb; s++)
        for (t = 0; t < ob; t++) {
            for (v = 0; v < TR_V16; v++)
                acc[s][t][v] = (tr_vfl){0};
            r[s][t] = 0.0f;
        }
    for (k = 0; k < body; k += TR_LIN_LANES)
        for (v = 0; v < TR_V16; v++) {
            tr_vfl xv[TR_LIN_SB];
            for (s = 0; s < sb; s++)
                TR_VLOAD(xv[s], x + (i0 + s) * in + k + v * TR_VL);
            for (t = 0; t < ob; t++) {
                tr_vfl wv;
                TR_VLOAD(wv, w + (o0 + t) * in + k + v * TR_VL);
                for (s = 0; s < sb; s++)
                    acc[s][t][v] += xv[s] * wv;
            }
        }
    for (k = body; k < in; k++)
        for (s = 0; s < sb; s++)
            for (t = 0; t < ob; t++)
                r[s][t] += x[(i0 + s) * in + k] * w[(o0 + t) * in + k];
    for (j = 0; j < TR_LIN_LANES; j++)
        for (s = 0; s < sb; s++)
            for (t = 0; t < ob; t++)
                r[s][t] += acc[s][t][j / TR_VL][j % TR_VL];
    for (s = 0; s < sb; s++)
        for (t = 0; t < ob; t++)
            y[(i0 + s) * out + o0 + t] = r[s][t] + b[o0 + t];
}

/* the samples [i0, i0 + sb) (sb a constant where it is inlined), their
 * outputs a block at a time */
static inline __attribute__((always_inline)) void
lin_samples(float *y, const float *x, const float *w, const float *b, size_t in, size_t out,
            size_t i0, const int sb)
{
    size_t o0 = 0;

    for (; o0 + TR_LIN_OB <= out; o0 += TR_LIN_OB)
        lin_block(y, x, w, b, in, out, i0, o0, sb, TR_LIN_OB);
    for (; o0 < out; o0++)
        lin_block(y, x, w, b, in, out, i0, o0, sb, 1);
}

void tr_linear_forward(float *restrict y, const float *restrict x,
                       const float *restrict w, const float *restrict b,
                       const struct tr_layer *l, unsigned n)
{
    const size_t in = (size_t)l->in_c * l->in_h * l->in_w, out = l->out_c;
    size_t i = 0;

    for (; i + TR_LIN_SB <= n; i += TR_LIN_SB)
        lin_samples(y, x, w, b, in, out, i, TR_LIN_SB);
    for (; i < n; i++)
        lin_samples(y, x, w, b, in, out, i, 1);
}

/* backward: dw = dy^T x and dx = dy w as the GEMM's vector tiles */
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

#endif /* TR_LINEAR_VEC_H */
