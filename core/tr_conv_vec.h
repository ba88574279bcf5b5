/* tinyring: conv's paths on vector hosts (AVX-512, AVX, SSE2, NEON): the
 * shifted planes of a stride-1 "same" convolution, and its input gradient
 * without dcol (dx_direct).
 * Included by tr_layer_conv.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_CONV_VEC_H
#define TR_CONV_VEC_H

static size_t flat_lead(const struct tr_layer *l)
{
    return (size_t)l->d.pad * l->in_w + l->d.pad;
}

/* once per call: the zeros around the group's flat inputs (the samples'
 * planes then only copy their inputs in between) */
static void shifted_begin(float *z, const struct tr_layer *l)
{
    const size_t n = group_channels(l) * flat_len(l);
    float *f = z + rows_at(l);
    size_t q;

    for (q = 0; q < n; q++)
        f[q] = 0.0f;
}

/* z from x for the input channels [ic0, ic1): each channel's inputs into
 * its flat copy, then each plane a vector at a time, loaded from the copy
 * at q + kj and masked by where column q%W + kj - P lies in the row (the
 * columns of the vector's lanes, col, step on by TR_VL modulo W) */
static void shifted_planes(float *restrict z, const float *restrict x, size_t ic0, size_t ic1,
                           const struct tr_layer *l)
{
    const size_t hw = (size_t)l->in_h * l->in_w, K = l->d.kernel, ls = plane_stride(l);
    const size_t fl = flat_len(l);
    const int32_t W = (int32_t)l->in_w, P = (int32_t)l->d.pad, step = TR_VL % W;
    float *restrict xf = z + rows_at(l);
    tr_vil col0;
    size_t c, q, kj;
    int j;

    for (j = 0; j < TR_VL; j++)
        col0[j] = j % W;
    for (c = 0; c < ic1 - ic0; c++)
        __builtin_memcpy(xf + c * fl + flat_lead(l), x + (ic0 + c) * hw, hw * sizeof *x);
    for (c = 0; c < ic1 - ic0; c++) {
        const float *f = xf + c * fl;
        float *zc = z + c * K * ls;
        tr_vil col = col0;
        for (q = 0; q < ls; q += TR_VL) {
            for (kj = 0; kj < K; kj++) {
                const tr_vil t = col + ((int32_t)kj - P);
                tr_vil v;
                __builtin_memcpy(&v, f + q + kj, sizeof v);
                v &= (t >= 0) & (t < W);
                __builtin_memcpy(zc + kj * ls + q, &v, sizeof v);
            }
            col += step;
            col -= (col >= W) & W;
        }
    }
}

/* ---- the input gradient of a shifted convolution, without dcol ---------
 * Each element of dx is what col2im makes of dcol = w^T dy: a sum over its
 * taps (ki, kj) ascending, from +0, of the tap's dcol value, itself a sum
 * over the output channels ascending, from +0, of w times dy read at the
 * element's position minus the tap's shift (ki-P)*W + kj-P. A tile of
 * input channels x positions (the positions are the vector lanes) makes a
 * tap's dcol values t in registers, from the first product on (+0 plus a
 * product is the product but for the sign of a zero product, and the
 * element's sum is never -0: +0 plus either zero is +0, so t's zero sign
 * is lost in it either way), then adds them to the elements' sums through
 * the tap's mask: all ones where the position reads an output inside the
 * image, else 0 (col2im adds nothing there, and +0 added to a sum that is
 * never -0 is no change, even where w is not finite and t is NaN). The
 * sums wait in memory between the taps; dcol is never stored. dy is read
 * from a copy whose rows have zeros around them, so the reads past a
 * row's ends stay in the copy. Two samples go side by side in the copy's
 * rows (TR_DX_NS), so the positions fill whole vectors better (the seed's
 * conv2: 392 in 25 vectors, not 196 in 13); the masks see each position
 * in its own sample, so no element reads the other sample's dy. */
#define TR_DX_NS 2       /* samples side by side */
#if TR_VL == 16
#define TR_DX_VW 16      /* lanes, and the tile: R channels x V vectors */
#define TR_DX_R 8        /* R*V sums t in 24 of the 32 registers */
#define TR_DX_V 3
#elif defined(__AVX512F__)   /* 256-bit vectors, 32 registers (TR_VEC256) */
#define TR_DX_VW 8
#define TR_DX_R 8
#define TR_DX_V 3
#elif defined(__AVX__)
#define TR_DX_VW 8       /* 16 registers: 12 sums t, 2 of dy, a weight and a */
#define TR_DX_R 6        /* product (4 x 3 leaves no room for the product and */
#define TR_DX_V 2        /* GCC reads dy from the stack) */
#else
#define TR_DX_VW 4
#define TR_DX_R 4
#define TR_DX_V 2
#endif
typedef float tr_dxv __attribute__((vector_size(TR_DX_VW * 4)));
typedef int32_t tr_dxi __attribute__((vector_size(TR_DX_VW * 4)));

/* the positions of TR_DX_NS samples' dx rounded up to whole vectors (the
 * last vector's lanes past them are computed and not stored) */
static size_t dx_cols(const struct tr_layer *l)
{
    return (TR_DX_NS * (size_t)l->in_h * l->in_w + TR_DX_VW - 1) / TR_DX_VW * TR_DX_VW;
}

/* dy's copy: rows of dy_row floats, position 0 at dy_lo (the largest shift
 * back, P*(W+1), rounded up to 16), zeros before and after */
static size_t dy_lo(const struct tr_layer *l)
{
    return ((size_t)l->d.pad * (l->in_w + 1) + 15) / 16 * 16;
}

static size_t dy_row(const struct tr_layer *l)
{
    return 2 * dy_lo(l) + dx_cols(l) + 16;
}

/* where the taps' masks (K*K, dx_cols) start, after dy's copy */
static size_t dx_masks_at(const struct tr_layer *l)
{
    return l->out_c * dy_row(l);
}

/* where the sums (IC, dx_cols) start, after the masks */
static size_t dx_sums_at(const struct tr_layer *l)
{
    return dx_masks_at(l) + (size_t)l->d.kernel * l->d.kernel * dx_cols(l);
}

/* floats dy's copy, the masks and the sums take in col's space after the
 * planes and rows (0: no room; col2im runs) */
static size_t dx_floats(const struct tr_layer *l)
{
    const size_t K = l->d.kernel, p = (size_t)l->out_h * l->out_w;
    const size_t need = dx_sums_at(l) + l->in_c * dx_cols(l);
    return dx_at(l) + 16 + need <= (size_t)l->in_c * K * K * p ? need : 0;
}

/* the masks: tap (ki, kj) at position q (e = q mod H*W in its sample)
 * reads output (e/W - ki + P, e%W - kj + P) of the same sample; all ones
 * where that is inside the output */
static void dx_masks(int32_t *restrict mk, const struct tr_layer *l)
{
    const long K = l->d.kernel, P = l->d.pad, W = l->in_w, H = l->in_h;
    const size_t pc = dx_cols(l);
    long ki, kj;
    size_t q;

    for (ki = 0; ki < K; ki++)
        for (kj = 0; kj < K; kj++)
            for (q = 0; q < pc; q++) {
                const long e = (long)(q % (size_t)(H * W));
                const long oh = e / W - ki + P, ow = e % W - kj + P;
                const int in = q < TR_DX_NS * (size_t)(H * W) && oh >= 0 && oh < H && ow >= 0 &&
                               ow < W;
                mk[((size_t)ki * K + kj) * pc + q] = in ? -1 : 0;
            }
}

/* the input channels of the block from ic0: at most TR_DX_R, the blocks
 * as even as the channel count allows (16 in blocks of 6: 6, 5, 5), so
 * each is a tile of R or R - 1 rows */
static size_t dx_block(const struct tr_layer *l, size_t ic0)
{
    const size_t left = l->in_c - ic0;
    return left / ((left + TR_DX_R - 1) / TR_DX_R);
}

/* wk from w (OC, IC, K, K): per block of input channels (dx_block), its
 * weights (K*K, OC, block): a tile's weights together, the block's
 * channels of a tap and output channel side by side */
static void dx_weights(float *restrict wk, const float *restrict w, const struct tr_layer *l)
{
    const size_t KK = (size_t)l->d.kernel * l->d.kernel, OC = l->out_c, IC = l->in_c;
    size_t ic0, t, oc, i;

    for (ic0 = 0; ic0 < IC; ic0 += dx_block(l, ic0)) {
        const size_t rb = dx_block(l, ic0);
        float *wb = wk + ic0 * KK * OC;
        for (t = 0; t < KK; t++)
            for (oc = 0; oc < OC; oc++)
                for (i = 0; i < rb; i++)
                    wb[(t * OC + oc) * rb + i] = w[(oc * IC + ic0 + i) * KK + t];
    }
}

/* dy's rows of samples s = 0 .. ns-1 (dy + s*OC*p) into the copy, side by
 * side (its zeros were written once; a slot left out keeps what it had,
 * which the masks keep from the other slot's elements) */
static void dx_copy_dy(float *restrict dyp, const float *restrict dy, size_t ns,
                       const struct tr_layer *l)
{
    const size_t p = (size_t)l->out_h * l->out_w, L = dy_row(l), lo = dy_lo(l);
    size_t oc, t;

    for (t = 0; t < ns; t++)
        for (oc = 0; oc < l->out_c; oc++)
            __builtin_memcpy(dyp + oc * L + lo + t * p, dy + (t * l->out_c + oc) * p,
                             p * sizeof *dyp);
}

/* the sums of r input channels at the v vectors of positions from q0 (r,
 * v constants where it is inlined) in sums (rows of dx_cols), the
 * weights from wb with the block's stride rs. The taps' t live in
 * registers; the sums over the taps in memory, added once per tap. */
static inline __attribute__((always_inline)) void
dx_tile(float *restrict sums, const float *restrict wb, size_t rs, const float *restrict dyp,
        const int32_t *restrict mk, size_t q0, const int r, const int v,
        const struct tr_layer *l)
{
    const size_t K = l->d.kernel, P = l->d.pad, W = l->in_w, OC = l->out_c;
    const size_t L = dy_row(l), pc = dx_cols(l);
    tr_dxv t[TR_DX_R][TR_DX_V], d[TR_DX_V], a;
    size_t ki, kj, oc;
    int i, j;

    for (i = 0; i < r; i++)
        for (j = 0; j < v; j++)
            __builtin_memset(sums + i * pc + q0 + j * TR_DX_VW, 0, sizeof a);
    for (ki = 0; ki < K; ki++)
        for (kj = 0; kj < K; kj++) {
            /* output channel 0's dy at position q0 minus the tap's shift */
            const float *src = dyp + dy_lo(l) + q0 + P * W + P - ki * W - kj;
            const float *wt = wb + (ki * K + kj) * OC * rs;
            const int32_t *m = mk + (ki * K + kj) * pc + q0;
            for (j = 0; j < v; j++)
                __builtin_memcpy(&d[j], src + j * TR_DX_VW, sizeof d[j]);
            for (i = 0; i < r; i++)
                for (j = 0; j < v; j++)
                    t[i][j] = wt[i] * d[j];
            for (oc = 1; oc < OC; oc++) {
                const float *s = src + oc * L, *wo = wt + oc * rs;
                for (j = 0; j < v; j++) {
                    __builtin_memcpy(&d[j], s + j * TR_DX_VW, sizeof d[j]);
                    TR_IN_REGISTER(d[j]);       /* one load, not one per channel */
                }
                for (i = 0; i < r; i++)
                    for (j = 0; j < v; j++)
                        t[i][j] += wo[i] * d[j];
            }
            for (i = 0; i < r; i++)
                for (j = 0; j < v; j++) {
                    float *o = sums + i * pc + q0 + j * TR_DX_VW;
                    tr_dxi mj;
                    __builtin_memcpy(&mj, m + j * TR_DX_VW, sizeof mj);
                    __builtin_memcpy(&a, o, sizeof a);
                    a += (tr_dxv)((tr_dxi)t[i][j] & mj);
                    __builtin_memcpy(o, &a, sizeof a);
                }
        }
}

/* a tile of r channels, v vectors: one call per constant pair */
static void dx_tile_rv(float *sums, const float *wb, size_t rs, const float *dyp,
                       const int32_t *mk, size_t q0, int r, int v, const struct tr_layer *l)
{
    const size_t pc = dx_cols(l);
#define TR_DX_CASE(R, V)                                                      \
    if (r == (R) && v == (V)) {                                               \
        dx_tile(sums, wb, rs, dyp, mk, q0, R, V, l);                          \
        return;                                                               \
    }
    TR_DX_CASE(TR_DX_R, TR_DX_V)
    TR_DX_CASE(TR_DX_R, TR_DX_V - 1)
    TR_DX_CASE(TR_DX_R - 1, TR_DX_V)
    TR_DX_CASE(TR_DX_R - 1, TR_DX_V - 1)
    TR_DX_CASE(1, TR_DX_V)
    TR_DX_CASE(1, TR_DX_V - 1)
#undef TR_DX_CASE
    if (r > 1) {            /* other channel counts: one at a time */
        for (; r > 0; r--, sums += pc, wb++)
            dx_tile_rv(sums, wb, rs, dyp, mk, q0, 1, v, l);
        return;
    }
    for (; v > 0; v--, q0 += TR_DX_VW)      /* other vector counts */
        dx_tile(sums, wb, rs, dyp, mk, q0, 1, 1, l);
}

/* dx (ns samples of IC, H, W) from dy's copy, through sums (IC, dx_cols):
 * tiles of R channels x V vectors, the vectors of a channel block split
 * as evenly as V allows (25 vectors: 2, 2, then 3s) */
static void dx_direct(float *dx, size_t ns, float *sums, const float *wk, const float *dyp,
                      const int32_t *mk, const struct tr_layer *l)
{
    const size_t hw = (size_t)l->in_h * l->in_w, IC = l->in_c, pc = dx_cols(l);
    const size_t KK = (size_t)l->d.kernel * l->d.kernel, OC = l->out_c;
    const size_t nv = pc / TR_DX_VW, tiles = (nv + TR_DX_V - 1) / TR_DX_V;
    size_t ic0, ic, t, v0;

    for (ic0 = 0; ic0 < IC; ic0 += dx_block(l, ic0)) {
        const size_t rb = dx_block(l, ic0);
        for (t = 0, v0 = 0; t < tiles; t++) {
            const size_t v = (nv - v0) / (tiles - t);
            dx_tile_rv(sums + ic0 * pc, wk + ic0 * KK * OC, rb, dyp, mk, v0 * TR_DX_VW,
                       (int)rb, (int)v, l);
            v0 += v;
        }
    }
    for (t = 0; t < ns; t++)
        for (ic = 0; ic < IC; ic++)
            __builtin_memcpy(dx + (t * IC + ic) * hw, sums + ic * pc + t * hw, hw * sizeof *dx);
}

/* once per call: w as wk, and in space (col's, after the planes and rows)
 * the zeros of dy's copy and the taps' masks */
static void dx_begin(float *wk, float *space, const float *w, const struct tr_layer *l)
{
    size_t q;

    dx_weights(wk, w, l);
    for (q = 0; q < dx_masks_at(l); q++)
        space[q] = 0.0f;
    dx_masks((int32_t *)(void *)(space + dx_masks_at(l)), l);
}

/* dx (ns <= TR_DX_NS samples of IC, H, W) from their dy: into the copy,
 * then the tiles */
static void dx_samples(float *dx, size_t ns, const float *wk, float *space, const float *dy,
                       const struct tr_layer *l)
{
    dx_copy_dy(space, dy, ns, l);
    dx_direct(dx, ns, space + dx_sums_at(l), wk, space,
              (const int32_t *)(const void *)(space + dx_masks_at(l)), l);
}

#endif /* TR_CONV_VEC_H */
