/* tinyring: conv's AVX-512 pieces: the output gradient's bias sums inside
 * its transpose, and the weight gradient of a one-channel convolution in
 * registers (dw1).
 * Included by tr_layer_conv.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_CONV_AVX512_H
#define TR_CONV_AVX512_H

typedef float tr_cv16 __attribute__((vector_size(64)));

/* The output gradient's transpose dyt (p, OC) and the bias gradient db
 * (each row's tr_sum_lanes16, added to db) from one read of dy (OC, p).
 * With AVX-512 and whole blocks of 8 rows, each block's 16-column steps
 * below the rows' last p % 16 columns are added to the rows' 16 lane sums
 * in registers as they are transposed, in the order tr_sum_lanes16 adds
 * them (so db has its bits); the 8 rows' sums are 8 chains side by side,
 * where the separate sums waited on one chain per row. Elsewhere the
 * backward takes the sums, then the transpose (a shared form of the two
 * moved the Cortex-M4F's count by 32,000 instructions a sample). */
static void transpose_sums(float *restrict t, float *restrict db, const float *restrict a,
                           size_t rows, size_t cols)
{
    const size_t body = cols - cols % 16;
    size_t r0, c0, r, c;
    int j;

    if (rows % 8 != 0) {
        for (r = 0; r < rows; r++)
            db[r] += tr_sum_lanes16(a + r * cols, cols);
        transpose(t, a, rows, cols);
        return;
    }
    for (r0 = 0; r0 < rows; r0 += 8) {
        const float *ab = a + r0 * cols;
        tr_cv16 acc[8];
        for (j = 0; j < 8; j++)
            acc[j] = (tr_cv16){0};
        for (c0 = 0; c0 < body; c0 += 16) {
            for (j = 0; j < 8; j++) {
                tr_cv16 v;
                __builtin_memcpy(&v, ab + j * cols + c0, sizeof v);
                acc[j] += v;
            }
            transpose8(t + c0 * rows + r0, ab + c0, rows, cols);
            transpose8(t + (c0 + 8) * rows + r0, ab + c0 + 8, rows, cols);
        }
        for (; c0 + 8 <= cols; c0 += 8)
            transpose8(t + c0 * rows + r0, ab + c0, rows, cols);
        for (c = c0; c < cols; c++)
            for (r = 0; r < 8; r++)
                t[c * rows + r0 + r] = ab[r * cols + c];
        for (r = 0; r < 8; r++) {
            float sum = 0.0f;
            for (c = body; c < cols; c++)
                sum += ab[r * cols + c];
            for (j = 0; j < 16; j++)
                sum += acc[r][j];
            db[r0 + r] += sum;
        }
    }
}

/* the backward's first step per sample: dyt and db's sums, in one read */
#define DY_SUMS_TRANSPOSE(dyt, db, dyi, OC, p, oc) transpose_sums(dyt, db, dyi, OC, p)

/* The weight gradient of a convolution with one input channel (the
 * first): its K*K taps x 16 output channels are K*K vector sums, which
 * stay in registers over the whole sample. Tap (ki, kj) at position
 * (oh, ow) reads the input padded with P zeros around it, at rows dw1_ld
 * apart: (oh+ki)*ld + ow+kj. So no planes are made, and a position's
 * K*K products are one load of dy^T's row and K*K multiplies by the
 * inputs, each read in place. The sums are tr_gemm_grid_a's, in its order:
 * from dw^T, over the positions ascending. */
static size_t dw1_ld(const struct tr_layer *l)
{
    return ((size_t)l->in_w + 2 * l->d.pad + 15) / 16 * 16;
}

static int dw1(const struct tr_layer *l)
{
    const size_t K = l->d.kernel;
    return shifted(l) && l->in_c == 1 && (K == 3 || K == 5) && l->out_c % 16 == 0 &&
           ((size_t)l->in_h + 2 * l->d.pad) * dw1_ld(l) <= rows_at(l);
}

/* xp: one sample's channel with P zeros around it, rows dw1_ld apart */
static void dw1_pad(float *restrict xp, const float *restrict x, const struct tr_layer *l)
{
    const size_t H = l->in_h, W = l->in_w, P = l->d.pad, ld = dw1_ld(l);
    size_t r, q;

    for (q = 0; q < (H + 2 * P) * ld; q++)
        xp[q] = 0.0f;
    for (r = 0; r < H; r++)
        __builtin_memcpy(xp + (r + P) * ld + P, x + r * W, W * sizeof *x);
}

/* dwt (K*K, OC) += the products of the 16 output channels from dwt's
 * column 0 and dyt's (p, OC); K a constant where it is inlined */
static inline __attribute__((always_inline)) void
dw1_tile(float *restrict dwt, const float *restrict xp, const float *restrict dyt,
         const struct tr_layer *l, const int K)
{
    const size_t OC = l->out_c, OH = l->out_h, OW = l->out_w, ld = dw1_ld(l);
    tr_cv16 acc[25];
    size_t oh, ow;
    int ki, kj;

    for (ki = 0; ki < K * K; ki++)
        __builtin_memcpy(&acc[ki], dwt + ki * OC, sizeof acc[ki]);
    for (oh = 0; oh < OH; oh++) {
        const float *r[5], *b = dyt + oh * OW * OC;
        for (ki = 0; ki < K; ki++)
            r[ki] = xp + (oh + ki) * ld;
        for (ow = 0; ow < OW; ow++, b += OC) {
            tr_cv16 bv;
            __builtin_memcpy(&bv, b, sizeof bv);
            for (ki = 0; ki < K; ki++) {
                /* each input read where it is used: GCC would carry the
                 * next position's shared inputs in registers, and spill */
                __asm__("" : "+r"(r[ki]));
                for (kj = 0; kj < K; kj++)
                    acc[ki * K + kj] += r[ki][kj] * bv;
                r[ki]++;
            }
        }
    }
    for (ki = 0; ki < K * K; ki++)
        __builtin_memcpy(dwt + ki * OC, &acc[ki], sizeof acc[ki]);
}

static void dw1_sample(float *dwt, const float *xp, const float *dyt, const struct tr_layer *l)
{
    size_t oc;

    for (oc = 0; oc < l->out_c; oc += 16) {
        if (l->d.kernel == 5)
            dw1_tile(dwt + oc, xp, dyt + oc, l, 5);
        else
            dw1_tile(dwt + oc, xp, dyt + oc, l, 3);
    }
}

#endif /* TR_CONV_AVX512_H */
