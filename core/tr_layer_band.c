/* tinyring: Conv2d in bands of output positions, and one output plane at a
 * time, for the lean execution plan. Same bits as tr_conv2d_forward and
 * tr_conv2d_backward (docs/DESIGN.md, "The arithmetic every plan and target
 * computes"); the scratch holds one band instead of the whole image.
 *
 * A band is q consecutive output positions p0 .. p0+q-1 of one sample
 * (row-major, so it may start and end inside a row). With KK = IC*K*K:
 *   forward   col (KK, q) of the band, y[:, band] = b + w (OC, KK) * col
 *   dweight   colT (q', T) for a group of input channels (T of their taps)
 *             and q' positions, dw[:, taps] += dy[:, positions] * colT, the
 *             chunks of a group in ascending order (each weight's sum runs
 *             over the positions in order, stored as a float between them)
 *   dinput    dcol (KK, q) = w^T dy[:, band] (tr_gemm_at_set: w read as it
 *             is), added into dx tap by tap in ascending order, the bands
 *             from the last to the first: every input element gets its
 *             taps in ascending order, as col2im adds them.
 * Scratch: q * KK floats (tr_conv2d_band_floats).
 *
 * The plane kernels compute one output channel of one sample directly from
 * the sample's zero-padded input (IC, H+2P, W+2P): the plan that recomputes
 * a first convolution instead of storing it uses them. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_layer_kernels.h"

size_t tr_conv2d_band_floats(const struct tr_layer *l, size_t q)
{
    return q * ((size_t)l->in_c * l->d.kernel * l->d.kernel);
}

/* [lo, hi): the output columns kernel column kj reads inside the input
 * (tr_conv2d_valid_range; at stride 1 without its divisions) */
static void band_cols(unsigned *lo, unsigned *hi, unsigned kj, const struct tr_layer *l)
{
    long a, b;

    if (l->d.stride != 1) {
        tr_conv2d_valid_range(lo, hi, kj, l->d.stride, l->d.pad, l->in_w, l->out_w);
        return;
    }
    a = (long)l->d.pad - (long)kj;          /* ow >= P - kj */
    b = (long)l->in_w + a;                  /* ow <  W + P - kj */
    b = b <= 0 ? 0 : b > (long)l->out_w ? (long)l->out_w : b;
    a = a <= 0 ? 0 : a > b ? b : a;
    *lo = (unsigned)a;
    *hi = (unsigned)b;
}

/* [lo, hi): kernel column kj's valid columns (band_cols) within [ow0, end) */
static void seg_cols(unsigned *lo, unsigned *hi, unsigned kj, const struct tr_layer *l,
                     unsigned ow0, unsigned end)
{
    unsigned wlo, whi;

    band_cols(&wlo, &whi, kj, l);
    *lo = wlo < ow0 ? ow0 : wlo > end ? end : wlo;
    *hi = whi < *lo ? *lo : whi > end ? end : whi;
}

/* Columns j .. j+end-ow0-1 of col (KK, q): output row oh from column ow0
 * to end, each tap's input value, +0 in the padding; a tap row's valid
 * columns are copied whole. Kernel column by kernel column, so its valid
 * columns are worked out once for all input channels and kernel rows. */
static void band_col_row(float *col, size_t q, size_t j, const float *x,
                         const struct tr_layer *l, unsigned oh, unsigned ow0, unsigned end)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    unsigned ic, ki, kj, ow, lo, hi;

    for (kj = 0; kj < K; kj++) {
        seg_cols(&lo, &hi, kj, l, ow0, end);
        for (ic = 0; ic < IC; ic++)
            for (ki = 0; ki < K; ki++) {
                const long ih = (long)oh * S + ki - (long)P;
                float *r = col + (((size_t)ic * K + ki) * K + kj) * q + j;
                const float *xr;
                if (ih < 0 || ih >= (long)H) {                 /* a padding row */
                    for (ow = 0; ow < end - ow0; ow++)
                        r[ow] = 0.0f;
                    continue;
                }
                xr = x + ((size_t)ic * H + (size_t)ih) * W;
                for (ow = ow0; ow < lo; ow++)
                    r[ow - ow0] = 0.0f;
                if (S == 1) {
                    const float *xs = xr + kj - P;          /* ow + kj >= P from lo on */
#if TR_VFP_ASM
                    tr_copy_floats(r + (lo - ow0), xs + lo, hi - lo);
#else
                    for (ow = lo; ow < hi; ow++)
                        r[ow - ow0] = xs[ow];
#endif
                } else {
                    for (ow = lo; ow < hi; ow++)
                        r[ow - ow0] = xr[(size_t)ow * S + kj - P];
                }
                for (ow = hi; ow < end; ow++)
                    r[ow - ow0] = 0.0f;
            }
    }
}

/* col (KK, q): tap t's row holds the input value each band position reads.
 * A band is a few output-row segments (the first from where p0 is, the
 * others from column 0 of the next row), each made for every tap in turn. */
static void band_col(float *col, const float *x, const struct tr_layer *l, size_t p0, size_t q)
{
    const unsigned OW = l->out_w;
    unsigned oh = (unsigned)(p0 / OW), ow0 = (unsigned)(p0 % OW);
    size_t j;

    for (j = 0; j < q; oh++, ow0 = 0) {
        const unsigned seg = (unsigned)(q - j < OW - ow0 ? q - j : OW - ow0);
        band_col_row(col, q, j, x, l, oh, ow0, ow0 + seg);
        j += seg;
    }
}

/* colT (q, T): the patches of positions p0 .. p0+q-1 restricted to the
 * input channels [ic0, ic1), taps (ic, ki, kj) in order (T = (ic1-ic0)*K*K).
 * Which of a position's kernel rows lie inside the input ([klo, khi)),
 * and whether all its kernel columns do, is worked out once per position. */
static void band_colT(float *colT, const float *x, const struct tr_layer *l, size_t p0,
                      size_t q, unsigned ic0, unsigned ic1)
{
    const unsigned H = l->in_h, W = l->in_w, OW = l->out_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    const size_t T = (size_t)(ic1 - ic0) * K * K;
    unsigned oh = (unsigned)(p0 / OW), ow = (unsigned)(p0 % OW);   /* position p0 + j */
    unsigned ic, ki, kj;
    size_t j;

    for (j = 0; j < q; j++) {
        const long iw0 = (long)ow * S - (long)P, ih0 = (long)oh * S - (long)P;
        const unsigned klo = ih0 < 0 ? (unsigned)-ih0 : 0u;
        const long rows = (long)H - ih0;                /* kernel rows above the bottom */
        const unsigned khi = rows <= 0 ? 0u : rows < (long)K ? (unsigned)rows : K;
        const int inner = iw0 >= 0 && iw0 + (long)K <= (long)W;
        float *r = colT + j * T;
        for (ic = ic0; ic < ic1; ic++) {
            const float *xc = x + (size_t)ic * H * W;
            for (ki = 0; ki < K; ki++, r += K) {
                const float *xr, *xk;
                if (ki < klo || ki >= khi) {
                    for (kj = 0; kj < K; kj++)
                        r[kj] = 0.0f;
                    continue;
                }
                xr = xc + (size_t)(ih0 + (long)ki) * W;
                if (!inner) {
                    for (kj = 0; kj < K; kj++) {
                        const long iw = iw0 + (long)kj;
                        r[kj] = iw >= 0 && iw < (long)W ? xr[iw] : 0.0f;
                    }
                    continue;
                }
                xk = xr + iw0;
                if (K == 5) {
#if TR_VFP_ASM          /* one load-multiple, one store-multiple */
                    __asm__ volatile("vldmia %[x], {s0-s4}\n\tvstmia %[r], {s0-s4}\n\t"
                                     :
                                     : [x] "r"(xk), [r] "r"(r)
                                     : "s0", "s1", "s2", "s3", "s4", "memory");
#else
                    r[0] = xk[0]; r[1] = xk[1]; r[2] = xk[2]; r[3] = xk[3]; r[4] = xk[4];
#endif
                } else {
                    for (kj = 0; kj < K; kj++)
                        r[kj] = xk[kj];
                }
            }
        }
        if (++ow == OW) {
            ow = 0;
            oh++;
        }
    }
}

/* The weight gradient of one sample: dw (OC, KK) += dy (OC, P) * colT.
 * The patches are built for a group of input channels at a time (4, whose
 * taps are a multiple of 4 columns: whole GEMM tiles), over as many
 * positions as the scratch holds, so each GEMM call runs a long k loop per
 * tile of dw. Every weight's sum still runs over the positions in order:
 * its group's chunks are taken in ascending order. */
static void band_dw(float *dw, const float *dyi, const float *xi, const struct tr_layer *l,
                    float *scratch, size_t room)
{
    const unsigned IC = l->in_c, K = l->d.kernel;
    const size_t KK = (size_t)IC * K * K, P = (size_t)l->out_h * l->out_w;
    const unsigned g = IC < 4 ? IC : 4;
    unsigned ic0;

    for (ic0 = 0; ic0 < IC; ic0 += g) {
        const unsigned ic1 = ic0 + g < IC ? ic0 + g : IC;
        const size_t T = (size_t)(ic1 - ic0) * K * K;
        const size_t qmax = room / T, chunks = (P + qmax - 1) / qmax;
        const size_t q = (P + chunks - 1) / chunks;   /* chunks as even as possible */
        size_t p0;
        for (p0 = 0; p0 < P; p0 += q) {
            const size_t qq = P - p0 < q ? P - p0 : q;
            band_colT(scratch, xi, l, p0, qq, ic0, ic1);
            tr_gemm(dw + (size_t)ic0 * K * K, dyi + p0, scratch, l->out_c, T, qq, P, T, KK);
        }
    }
}

/* dx (IC, H, W) += the columns j .. j+end-ow0-1 of dcol (KK, q): output
 * row oh from column ow0 to end, each tap where it reads inside the input.
 * Kernel column by kernel column (their valid columns worked out once):
 * within one output row an input element gets one kernel row's taps, so
 * it still gets them in ascending order. */
static void band_col2im_row(float *dx, const float *dcol, size_t q, size_t j,
                            const struct tr_layer *l, unsigned oh, unsigned ow0, unsigned end)
{
    const unsigned IC = l->in_c, H = l->in_h, W = l->in_w;
    const unsigned K = l->d.kernel, S = l->d.stride, P = l->d.pad;
    unsigned ic, ki, kj, ow, lo, hi;

    for (kj = 0; kj < K; kj++) {
        seg_cols(&lo, &hi, kj, l, ow0, end);
        for (ic = 0; ic < IC; ic++)
            for (ki = 0; ki < K; ki++) {
                const long ih = (long)oh * S + ki - (long)P;
                const float *r = dcol + (((size_t)ic * K + ki) * K + kj) * q + j;
                float *xr;
                if (ih < 0 || ih >= (long)H)
                    continue;
                xr = dx + ((size_t)ic * H + (size_t)ih) * W;
                if (S == 1) {
                    float *xs = xr + kj - P;                /* ow + kj >= P from lo on */
#if TR_VFP_ASM
                    tr_vfp_add(xs + lo, r + (lo - ow0), hi - lo);
#else
                    for (ow = lo; ow < hi; ow++)
                        xs[ow] += r[ow - ow0];
#endif
                } else {
                    for (ow = lo; ow < hi; ow++)
                        xr[(size_t)ow * S + kj - P] += r[ow - ow0];
                }
            }
    }
}

/* dx (IC, H, W) += dcol (KK, q), the adjoint of band_col. Each dx element
 * adds its taps in ascending order: one output row gives it one kernel row
 * ki (the kernel columns in order), and the row below gives it ki - S, so
 * the band's row segments go from the last to the first (as
 * tr_conv2d_backward_band takes the bands from the last to the first). */
static void band_col2im(float *dx, const float *dcol, const struct tr_layer *l, size_t p0,
                        size_t q)
{
    const unsigned OW = l->out_w;
    const size_t first = p0 / OW;
    size_t oh = (p0 + q - 1) / OW + 1;

    while (oh-- > first) {
        const size_t start = oh * OW > p0 ? oh * OW : p0;
        const size_t stop = (oh + 1) * OW < p0 + q ? (oh + 1) * OW : p0 + q;
        band_col2im_row(dx, dcol, q, start - p0, l, (unsigned)oh, (unsigned)(start - oh * OW),
                        (unsigned)(stop - oh * OW));
    }
}

void tr_conv2d_forward_band(float *y, const float *x, const float *w, const float *b,
                            const struct tr_layer *l, unsigned n, float *scratch, size_t q)
{
    const size_t KK = (size_t)l->in_c * l->d.kernel * l->d.kernel;
    const size_t P = (size_t)l->out_h * l->out_w, OC = l->out_c;
    const size_t xs = (size_t)l->in_c * l->in_h * l->in_w;
    size_t i, oc, j, p0;

    for (i = 0; i < n; i++) {
        float *yi = y + i * OC * P;
        for (p0 = 0; p0 < P; p0 += q) {
            const size_t qq = P - p0 < q ? P - p0 : q;
            band_col(scratch, x + i * xs, l, p0, qq);
            for (oc = 0; oc < OC; oc++)
                for (j = 0; j < qq; j++)
                    yi[oc * P + p0 + j] = b[oc];
            tr_gemm(yi + p0, w, scratch, OC, qq, KK, KK, qq, P);
        }
    }
}

void tr_conv2d_backward_band(float *dx, float *dw, float *db, const float *dy,
                             const float *x, const float *w,
                             const struct tr_layer *l, unsigned n, float *scratch, size_t q)
{
    const size_t KK = (size_t)l->in_c * l->d.kernel * l->d.kernel;
    const size_t P = (size_t)l->out_h * l->out_w, OC = l->out_c;
    const size_t xs = (size_t)l->in_c * l->in_h * l->in_w;
    const size_t last = (P - 1) / q * q;       /* first position of the last band */
    float *colT = scratch;                      /* (q, KK), then dcol (KK, q) */
    size_t i, oc, j, p0;

    for (j = 0; j < OC * KK; j++)
        dw[j] = 0.0f;
    for (oc = 0; oc < OC; oc++)
        db[oc] = 0.0f;
    for (i = 0; i < n; i++) {
        const float *dyi = dy + i * OC * P;
        for (oc = 0; oc < OC; oc++)
            db[oc] += tr_sum_lanes16(dyi + oc * P, P);
        band_dw(dw, dyi, x + i * xs, l, colT, q * KK);
        if (dx == NULL)
            continue;
        /* x of this sample is read: its dx may now take its place */
        for (j = 0; j < xs; j++)
            dx[i * xs + j] = 0.0f;
        for (p0 = last + q; p0 >= q;) {
            size_t qq;
            p0 -= q;
            qq = P - p0 < q ? P - p0 : q;
            tr_gemm_at_set(colT, w, dyi + p0, KK, qq, OC, KK, P, qq);
            band_col2im(dx + i * xs, colT, l, p0, qq);
        }
    }
}

/* the padded planes and 8 floats of slack a vector lane may read past them */
size_t tr_conv2d_pad_floats(const struct tr_layer *l)
{
    return (size_t)l->in_c * (l->in_h + 2u * l->d.pad) * (l->in_w + 2u * l->d.pad) + 8u;
}

/* The one-plane kernels' inner blocks, chosen by this one #if: GCC's
 * generic vectors where the target has vector registers (the compiler maps
 * them to AVX-512/AVX/SSE/NEON; 8 floats, and the whole-plane tiles the
 * registers' width), plain float arrays elsewhere (the Cortex-M4F keeps
 * them in its 32 single registers). Same operations in the same order
 * either way: each lane is one output (or one tap) of its own. */
#if defined(__GNUC__) && (defined(__AVX__) || defined(__SSE2__) || defined(__ARM_NEON))
typedef float tr_v8 __attribute__((vector_size(32)));
/* an unaligned load (a macro: a function returning a vector wider than the
 * target's registers would change the ABI on SSE-only builds) */
#define V8_LOAD(v, p) __builtin_memcpy(&(v), (p), sizeof(tr_v8))

/* one row of outputs, stride 1, in chunks of 32: four vectors of 8
 * accumulators, independent chains over the taps (one chain would wait for
 * the add latency at every tap); the lanes past the row's end compute on
 * the next row (or the padding's slack) and are not stored */
static void plane_row_s1(float *y, const float *xrow, const float *w_oc, float b,
                         unsigned OW, unsigned IC, unsigned K, size_t plane, size_t Wp)
{
    unsigned ow, ic, ki, kj, j;

    for (ow = 0; ow < OW; ow += 32) {
        const unsigned rem = OW - ow < 32 ? OW - ow : 32;
        tr_v8 a0 = {b, b, b, b, b, b, b, b}, a1 = a0, a2 = a0, a3 = a0;
        float out[32];
        for (ic = 0; ic < IC; ic++)
            for (ki = 0; ki < K; ki++) {
                const float *xr = xrow + ic * plane + ki * Wp + ow;
                const float *wr = w_oc + ((size_t)ic * K + ki) * K;
                for (kj = 0; kj < K; kj++) {
                    const float wv = wr[kj];
                    tr_v8 x0, x1, x2, x3;
                    V8_LOAD(x0, xr + kj);
                    a0 += wv * x0;
                    if (rem > 8) {
                        V8_LOAD(x1, xr + kj + 8);
                        a1 += wv * x1;
                    }
                    if (rem > 16) {
                        V8_LOAD(x2, xr + kj + 16);
                        a2 += wv * x2;
                    }
                    if (rem > 24) {
                        V8_LOAD(x3, xr + kj + 24);
                        a3 += wv * x3;
                    }
                }
            }
        __builtin_memcpy(out, &a0, sizeof a0);
        __builtin_memcpy(out + 8, &a1, sizeof a1);
        __builtin_memcpy(out + 16, &a2, sizeof a2);
        __builtin_memcpy(out + 24, &a3, sizeof a3);
        for (j = 0; j < rem; j++)
            y[ow + j] = out[j];
    }
}

/* Whole planes, stride 1: tiles of PR output rows x PN vectors of PV
 * outputs, PR*PN accumulators in registers (16 where the target has 32
 * vector registers, 8 where it has 16). A tap's weight is loaded once
 * for the tile, and each output still starts at b and adds its taps in
 * order (ic, ki, kj). */
#if defined(__AVX512F__)
#define TR_PV 16
#define TR_PR 8
#define TR_PN 2
#elif defined(__AVX__)
#define TR_PV 8
#define TR_PR 2
#define TR_PN 4
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define TR_PV 4
#define TR_PR 4
#define TR_PN 4
#else
#define TR_PV 4
#define TR_PR 2
#define TR_PN 4
#endif
typedef float tr_pv __attribute__((vector_size(TR_PV * 4)));
#define TR_PLANE_TILES 1

static inline __attribute__((always_inline)) void
plane_tile(float *y, const float *xrow, const float *w_oc, float b, unsigned OW, unsigned IC,
           unsigned K, size_t plane, size_t Wp, const int r, const int nv)
{
    const tr_pv zero = {0};
    tr_pv acc[TR_PR][TR_PN];
    unsigned ic, ki, kj;
    int t, v;

    for (t = 0; t < r; t++)
        for (v = 0; v < nv; v++)
            acc[t][v] = b - zero;               /* b - (+0) is b, -0 included */
    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++) {
            const float *xr = xrow + ic * plane + ki * Wp;
            const float *wr = w_oc + ((size_t)ic * K + ki) * K;
            for (kj = 0; kj < K; kj++) {
                const float wv = wr[kj];
                for (t = 0; t < r; t++)
                    for (v = 0; v < nv; v++) {
                        tr_pv x;
                        __builtin_memcpy(&x, xr + t * Wp + kj + v * TR_PV, sizeof x);
                        acc[t][v] += wv * x;
                    }
            }
        }
    for (t = 0; t < r; t++)
        for (v = 0; v < nv; v++) {
            const unsigned o = (unsigned)v * TR_PV;
            if (o + TR_PV <= OW) {
                __builtin_memcpy(y + (size_t)t * OW + o, &acc[t][v], sizeof acc[t][v]);
            } else {
                unsigned e;
                for (e = 0; o + e < OW; e++)
                    y[(size_t)t * OW + o + e] = acc[t][v][e];
            }
        }
}

/* 1 if tiles can make the whole plane: a row fits PN vectors, whose reads
 * past the row stay inside the padded input and its 8 floats of slack */
static int plane_tiles(unsigned OW, unsigned K, size_t Wp)
{
    const unsigned nv = (OW + TR_PV - 1) / TR_PV;
    return nv <= TR_PN && nv * TR_PV + K - 2 <= Wp + 7;
}

/* r rows (TR_PR, TR_PR / 2 or 1) of a plane that plane_tiles can make */
static void plane_rows(float *y, const float *xrow, const float *w_oc, float b, unsigned OW,
                       unsigned IC, unsigned K, size_t plane, size_t Wp, int r)
{
    const int nv = (int)((OW + TR_PV - 1) / TR_PV);
    unsigned o;
#define TR_PLANE_CASE(R, NV)                                                  \
    if (r == (R) && nv == (NV)) {                                             \
        plane_tile(y, xrow, w_oc, b, OW, IC, K, plane, Wp, R, NV);            \
        return;                                                               \
    }
    TR_PLANE_CASE(TR_PR, TR_PN)
    TR_PLANE_CASE(TR_PR, TR_PN - 1)
    TR_PLANE_CASE(TR_PR / 2, TR_PN)
    TR_PLANE_CASE(TR_PR / 2, TR_PN - 1)
    TR_PLANE_CASE(1, TR_PN)
    TR_PLANE_CASE(1, TR_PN - 1)
#undef TR_PLANE_CASE
    for (; r > 0; r--, y += OW, xrow += Wp)     /* narrower rows: a vector at a time */
        for (o = 0; o < OW; o += TR_PV)
            plane_tile(y + o, xrow + o, w_oc, b, OW - o, IC, K, plane, Wp, 1, 1);
}

/* a plane, stride 1, in tiles of TR_PR rows, then the rows left */
static void plane_s1_tiles(float *y, const float *xpad, const float *w_oc, float b,
                           unsigned OH, unsigned OW, unsigned IC, unsigned K, size_t plane,
                           size_t Wp)
{
    unsigned oh = 0;

    while (oh < OH) {
        const unsigned left = OH - oh;
        const int r = left >= TR_PR ? TR_PR : left >= TR_PR / 2 ? TR_PR / 2 : 1;
        plane_rows(y + (size_t)oh * OW, xpad + (size_t)oh * Wp, w_oc, b, OW, IC, K, plane, Wp,
                   r);
        oh += (unsigned)r;
    }
}

/* one channel (H, W) into its padded plane: the plane zeroed, then each
 * row copied in whole vectors (the last one ending at the row's end) */
static void pad_plane(float *restrict xp, const float *restrict xs, size_t H, size_t W,
                      size_t P)
{
    const size_t Wp = W + 2 * P, n = (H + 2 * P) * Wp;
    const tr_pv zero = {0};
    size_t q, h, w;

    for (q = 0; q + TR_PV <= n; q += TR_PV)
        __builtin_memcpy(xp + q, &zero, sizeof zero);
    for (; q < n; q++)
        xp[q] = 0.0f;
    for (h = 0; h < H; h++) {
        float *r = xp + (P + h) * Wp + P;
        const float *src = xs + h * W;
        tr_pv v;
        if (W < TR_PV) {
            for (w = 0; w < W; w++)
                r[w] = src[w];
            continue;
        }
        for (w = 0; w + TR_PV <= W; w += TR_PV) {
            __builtin_memcpy(&v, src + w, sizeof v);
            __builtin_memcpy(r + w, &v, sizeof v);
        }
        __builtin_memcpy(&v, src + W - TR_PV, sizeof v);
        __builtin_memcpy(r + W - TR_PV, &v, sizeof v);
    }
}

/* the 25 taps of a 5x5 stride-1 weight gradient: one vector per kernel row
 * (lanes 0..4 are its taps, 5..7 are discarded; the padded input has 8
 * floats of slack for them), each lane's sum over the positions in order */
static void plane_dw_k5(float *dwc, const float *xp, const float *g, unsigned OH, unsigned OW,
                        size_t Wp)
{
    tr_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0};
    unsigned oh, ow, t;

    for (t = 0; t < 5; t++) {
        a0[t] = dwc[t];
        a1[t] = dwc[5 + t];
        a2[t] = dwc[10 + t];
        a3[t] = dwc[15 + t];
        a4[t] = dwc[20 + t];
    }
    for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++) {
            const float gv = g[(size_t)oh * OW + ow];
            const float *x0 = xp + (size_t)oh * Wp + ow;
            tr_v8 x;
            V8_LOAD(x, x0);
            a0 += x * gv;
            V8_LOAD(x, x0 + Wp);
            a1 += x * gv;
            V8_LOAD(x, x0 + 2 * Wp);
            a2 += x * gv;
            V8_LOAD(x, x0 + 3 * Wp);
            a3 += x * gv;
            V8_LOAD(x, x0 + 4 * Wp);
            a4 += x * gv;
        }
    for (t = 0; t < 5; t++) {
        dwc[t] = a0[t];
        dwc[5 + t] = a1[t];
        dwc[10 + t] = a2[t];
        dwc[15 + t] = a3[t];
        dwc[20 + t] = a4[t];
    }
}
#else
#define TR_PLANE_TILES 0
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define TR_PLANE_MVE 1      /* Helium blocks, the scalar ones their fallback */
#include <arm_mve.h>
#else
#define TR_PLANE_MVE 0
#endif

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

#if TR_VFP_ASM
/* Blocks of 12 and 8 outputs of a 5x5 stride-1 kernel (plane_blk12_k5 and
 * plane_blk8_fpu's 5x5 case, below) in VFP assembly: a
 * kernel row's inputs by one load-multiple (from s16), each weight by a
 * post-increment load (s12), the sums from s0, products alternating in s13
 * and s14; the same operations in the same order as the C: per kernel row
 * of 12 outputs 5 + 120 + 4 instructions, of 8 outputs 5 + 80 + 4. */
#define VP_MAC(a, x, p) "vmul.f32 " p ", s12, " x "\n\tvadd.f32 " a ", " a ", " p "\n\t"
#define VP_TAP8(x0, x1, x2, x3, x4, x5, x6, x7)                                   \
    "vldmia %[w]!, {s12}\n\t"                                                     \
    VP_MAC("s0", x0, "s13") VP_MAC("s1", x1, "s14") VP_MAC("s2", x2, "s13")        \
    VP_MAC("s3", x3, "s14") VP_MAC("s4", x4, "s13") VP_MAC("s5", x5, "s14")        \
    VP_MAC("s6", x6, "s13") VP_MAC("s7", x7, "s14")
#define VP_TAP12(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11)               \
    VP_TAP8(x0, x1, x2, x3, x4, x5, x6, x7)                                        \
    VP_MAC("s8", x8, "s13") VP_MAC("s9", x9, "s14") VP_MAC("s10", x10, "s13")      \
    VP_MAC("s11", x11, "s14")
#define VP_SET8 "vmov.f32 s0, %[b]\n\tvmov.f32 s1, s0\n\tvmov.f32 s2, s0\n\t"       \
    "vmov.f32 s3, s0\n\tvmov.f32 s4, s0\n\tvmov.f32 s5, s0\n\tvmov.f32 s6, s0\n\t"  \
    "vmov.f32 s7, s0\n\t"
#define VP_SET12 VP_SET8 "vmov.f32 s8, s0\n\tvmov.f32 s9, s0\n\tvmov.f32 s10, s0\n\t" \
    "vmov.f32 s11, s0\n\t"
#define VP_ROW8                                                                   \
    VP_TAP8("s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23")               \
    VP_TAP8("s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24")               \
    VP_TAP8("s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25")               \
    VP_TAP8("s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26")               \
    VP_TAP8("s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27")
#define VP_ROW12                                                                  \
    VP_TAP12("s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27") \
    VP_TAP12("s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28") \
    VP_TAP12("s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29") \
    VP_TAP12("s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30") \
    VP_TAP12("s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31")
/* y (n) = b + the 5x5 taps of IC padded planes from xrow: SET the sums,
 * the kernel rows' inputs XREGS, ROW their products, SUMS stored */
#define VP_BLOCK_FN(name, SET, XREGS, ROW, SUMS)                                  \
    static void name(float *y, const float *xrow, const float *w_oc, float b, unsigned IC, \
                     size_t plane, size_t Wp)                                     \
    {                                                                             \
        const size_t wp4 = Wp * sizeof(float), next4 = (plane - 5 * Wp) * sizeof(float); \
        const float *x = xrow, *w = w_oc;                                         \
        size_t rows, ics = IC;                                                    \
        __asm__ volatile(                                                         \
            SET                                                                   \
            "2:\n\t"                                                              \
            "movs %[rows], #5\n"                                                  \
            "1:\n\t"                                                              \
            "vldmia %[x], {" XREGS "}\n\t"                                        \
            "add %[x], %[x], %[wp4]\n\t"                                          \
            ROW                                                                   \
            "subs %[rows], %[rows], #1\n\t"                                       \
            "bne 1b\n\t"                                                          \
            "add %[x], %[x], %[next4]\n\t"                                        \
            "subs %[ics], %[ics], #1\n\t"                                         \
            "bne 2b\n\t"                                                          \
            "vstmia %[y], {" SUMS "}\n\t"                                         \
            : [x] "+r"(x), [w] "+r"(w), [rows] "=&r"(rows), [ics] "+r"(ics)       \
            : [y] "r"(y), [b] "t"(b), [wp4] "r"(wp4), [next4] "r"(next4)          \
            : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", \
              "s12", "s13", "s14", "s16", "s17", "s18", "s19", "s20", "s21", "s22", \
              "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31", "cc",   \
              "memory");                                                          \
    }
VP_BLOCK_FN(plane_blk12_k5, VP_SET12, "s16-s31", VP_ROW12, "s0-s11")
VP_BLOCK_FN(plane_blk8_k5_vfp, VP_SET8, "s16-s27", VP_ROW8, "s0-s7")
#undef VP_MAC
#undef VP_TAP8
#undef VP_TAP12
#undef VP_SET8
#undef VP_SET12
#undef VP_ROW8
#undef VP_ROW12
#undef VP_BLOCK_FN
#endif

static void plane_blk8_fpu(float *y, const float *xrow, const float *w_oc, float b,
                           unsigned IC, unsigned K, size_t plane, size_t Wp)
{
    float a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    unsigned ic, ki, kj;

#if TR_VFP_ASM
    if (K == 5) {
        plane_blk8_k5_vfp(y, xrow, w_oc, b, IC, plane, Wp);
        return;
    }
#endif
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
#if TR_VFP_ASM
/* The turn of 8 positions in VFP assembly: the 8 next inputs (s16-s23) and
 * the 8 gradients (s24-s31) by one load-multiple each, then DW_POS's
 * products in its order (input times gradient, products in s14 and s15),
 * the last 4 inputs moved down into x0..x3 for the next turn: 2 + 80 + 4
 * instructions and the loop's 2 per 40 multiply-adds */
#define DWA_MAC(a, x, g, p) "vmul.f32 " p ", " x ", " g "\n\tvadd.f32 %[" a "], %[" a "], " p "\n\t"
#define DWA_POS(g, p0, p1, p2, p3, p4)                                          \
    DWA_MAC("a0", p0, g, "s14") DWA_MAC("a1", p1, g, "s15") DWA_MAC("a2", p2, g, "s14") \
    DWA_MAC("a3", p3, g, "s15") DWA_MAC("a4", p4, g, "s14")
#define DWA_TURN                                                                \
    "vldmia %[xp]!, {s16-s23}\n\t"                                              \
    "vldmia %[gp]!, {s24-s31}\n\t"                                              \
    DWA_POS("s24", "%[x0]", "%[x1]", "%[x2]", "%[x3]", "s16")                     \
    DWA_POS("s25", "%[x1]", "%[x2]", "%[x3]", "s16", "s17")                       \
    DWA_POS("s26", "%[x2]", "%[x3]", "s16", "s17", "s18")                         \
    DWA_POS("s27", "%[x3]", "s16", "s17", "s18", "s19")                           \
    DWA_POS("s28", "s16", "s17", "s18", "s19", "s20")                             \
    DWA_POS("s29", "s17", "s18", "s19", "s20", "s21")                             \
    DWA_POS("s30", "s18", "s19", "s20", "s21", "s22")                             \
    DWA_POS("s31", "s19", "s20", "s21", "s22", "s23")                             \
    "vmov.f32 %[x0], s20\n\tvmov.f32 %[x1], s21\n\t"                            \
    "vmov.f32 %[x2], s22\n\tvmov.f32 %[x3], s23\n\t"
#endif
static void plane_dw_row5(float *dwr, const float *xr0, const float *g, unsigned OH,
                          unsigned OW, size_t Wp)
{
    float a0 = dwr[0], a1 = dwr[1], a2 = dwr[2], a3 = dwr[3], a4 = dwr[4];
    unsigned oh, ow;

    for (oh = 0; oh < OH; oh++) {
        const float *x = xr0 + (size_t)oh * Wp, *gr = g + (size_t)oh * OW;
        float x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
        ow = 0;
#if TR_VFP_ASM      /* turns of 8 positions in assembly (DWA_TURN) */
        if (OW >= 8) {
            const float *xp = x + 4, *gp = gr;
            size_t turns = OW / 8;
            __asm__ volatile("1:\n\t" DWA_TURN "subs %[n], %[n], #1\n\tbne 1b\n\t"
                             : [a0] "+t"(a0), [a1] "+t"(a1), [a2] "+t"(a2), [a3] "+t"(a3),
                               [a4] "+t"(a4), [x0] "+t"(x0), [x1] "+t"(x1), [x2] "+t"(x2),
                               [x3] "+t"(x3), [xp] "+r"(xp), [gp] "+r"(gp), [n] "+r"(turns)
                             :
                             : "s14", "s15", "s16", "s17", "s18", "s19", "s20", "s21", "s22",
                               "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31",
                               "cc", "memory");
            ow = OW - OW % 8;
        }
#elif !TR_PLANE_MVE /* (Helium's fallback keeps turns of 4: fewer there) */
        for (; ow + 8 <= OW; ow += 8) {         /* 8 positions per turn */
            const float x4 = x[ow + 4], x5 = x[ow + 5], x6 = x[ow + 6], x7 = x[ow + 7];
            const float x8 = x[ow + 8], x9 = x[ow + 9], x10 = x[ow + 10], x11 = x[ow + 11];
            DW_POS(gr[ow], x0, x1, x2, x3, x4)
            DW_POS(gr[ow + 1], x1, x2, x3, x4, x5)
            DW_POS(gr[ow + 2], x2, x3, x4, x5, x6)
            DW_POS(gr[ow + 3], x3, x4, x5, x6, x7)
            DW_POS(gr[ow + 4], x4, x5, x6, x7, x8)
            DW_POS(gr[ow + 5], x5, x6, x7, x8, x9)
            DW_POS(gr[ow + 6], x6, x7, x8, x9, x10)
            DW_POS(gr[ow + 7], x7, x8, x9, x10, x11)
            x0 = x8; x1 = x9; x2 = x10; x3 = x11;
        }
#endif
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
#if TR_VFP_ASM
#undef DWA_MAC
#undef DWA_POS
#undef DWA_TURN
#endif

static void plane_dw_k5_fpu(float *dwc, const float *xp, const float *g, unsigned OH,
                            unsigned OW, size_t Wp)
{
    unsigned ki;

    for (ki = 0; ki < 5; ki++)
        plane_dw_row5(dwc + 5 * ki, xp + ki * Wp, g, OH, OW, Wp);
}

#if TR_PLANE_MVE
/* ---- Helium: the blocks above with 4-lane vectors, each lane one output
 * (or one tap) adding the same products in the same order; a block that met
 * a subnormal is computed again by the scalar one (tr_mve_flushed). */
/* nv vectors (1 or 2) of outputs: a tap's weight times the inputs it meets */
static inline __attribute__((always_inline)) int
plane_blk_mve(float *y, const float *xrow, const float *w_oc, float b, unsigned IC, unsigned K,
              size_t plane, size_t Wp, const int nv)
{
    const unsigned fpscr = tr_mve_begin();
    float32x4_t a0 = vdupq_n_f32(b), a1 = a0;
    unsigned ic, ki, kj;

    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < K; ki++) {
            const float *xr = xrow + ic * plane + ki * Wp;
            const float *wr = w_oc + ((size_t)ic * K + ki) * K;
#pragma GCC unroll 5
            for (kj = 0; kj < K; kj++) {
                const float wv = wr[kj];
                a0 = vaddq_f32(a0, vmulq_n_f32(vld1q_f32(xr + kj), wv));
                if (nv > 1)
                    a1 = vaddq_f32(a1, vmulq_n_f32(vld1q_f32(xr + kj + 4), wv));
            }
        }
    if (tr_mve_flushed(fpscr))
        return 1;
    vst1q_f32(y, a0);
    if (nv > 1)
        vst1q_f32(y + 4, a1);
    return 0;
}

static void plane_blk8(float *y, const float *xrow, const float *w_oc, float b, unsigned IC,
                       unsigned K, size_t plane, size_t Wp)
{
    if (K == 5 ? plane_blk_mve(y, xrow, w_oc, b, IC, 5, plane, Wp, 2)
               : plane_blk_mve(y, xrow, w_oc, b, IC, K, plane, Wp, 2))
        plane_blk8_fpu(y, xrow, w_oc, b, IC, K, plane, Wp);
}

static void plane_blk4(float *y, const float *xrow, const float *w_oc, float b, unsigned IC,
                       unsigned K, size_t plane, size_t Wp)
{
    if (K == 5 ? plane_blk_mve(y, xrow, w_oc, b, IC, 5, plane, Wp, 1)
               : plane_blk_mve(y, xrow, w_oc, b, IC, K, plane, Wp, 1))
        plane_blk4_fpu(y, xrow, w_oc, b, IC, K, plane, Wp);
}

/* the 25 taps of a 5x5 stride-1 weight gradient: a kernel row's taps 0-3
 * in one vector, its tap 4 on the scalar FPU; all five rows per position */
#define DW_ROW(r)                                                             \
    a##r = vaddq_f32(a##r, vmulq_n_f32(vld1q_f32(xo + r * Wp), gv));         \
    t##r += xo[r * Wp + 4] * gv;

static void plane_dw_k5(float *dwc, const float *xp, const float *g, unsigned OH, unsigned OW,
                        size_t Wp)
{
    const unsigned fpscr = tr_mve_begin();
    float32x4_t a0 = vld1q_f32(dwc), a1 = vld1q_f32(dwc + 5), a2 = vld1q_f32(dwc + 10);
    float32x4_t a3 = vld1q_f32(dwc + 15), a4 = vld1q_f32(dwc + 20);
    float t0 = dwc[4], t1 = dwc[9], t2 = dwc[14], t3 = dwc[19], t4 = dwc[24];
    unsigned oh, ow;

    for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++) {
            const float gv = g[(size_t)oh * OW + ow], *xo = xp + (size_t)oh * Wp + ow;
            DW_ROW(0) DW_ROW(1) DW_ROW(2) DW_ROW(3) DW_ROW(4)
        }
    if (tr_mve_flushed(fpscr)) {
        plane_dw_k5_fpu(dwc, xp, g, OH, OW, Wp);
        return;
    }
    vst1q_f32(dwc, a0);
    dwc[4] = t0;
    vst1q_f32(dwc + 5, a1);
    dwc[9] = t1;
    vst1q_f32(dwc + 10, a2);
    dwc[14] = t2;
    vst1q_f32(dwc + 15, a3);
    dwc[19] = t3;
    vst1q_f32(dwc + 20, a4);
    dwc[24] = t4;
}
#undef DW_ROW
#else
#define plane_blk8 plane_blk8_fpu
#define plane_blk4 plane_blk4_fpu
#define plane_dw_k5 plane_dw_k5_fpu
#define TR_PLANE_BLK12 1
#if !TR_VFP_ASM  /* (else the assembly block above) */
/* 12 outputs of a 5x5 kernel on a scalar FPU: a kernel row's 16 inputs
 * and the 12 sums in registers (30 of the 32), each input loaded once per
 * kernel row where blocks of 8 load 12 for 8 outputs. Each output starts
 * at b and adds its taps in order (ic, ki, kj). */
/* one tap's weight w times the 12 inputs its outputs meet */
#define TAP12(w, p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11)            \
    {                                                                         \
        const float wv = (w);                                                 \
        a0 += wv * p0; a1 += wv * p1; a2 += wv * p2; a3 += wv * p3;           \
        a4 += wv * p4; a5 += wv * p5; a6 += wv * p6; a7 += wv * p7;           \
        a8 += wv * p8; a9 += wv * p9; a10 += wv * p10; a11 += wv * p11;       \
    }
static void plane_blk12_k5(float *y, const float *xrow, const float *w_oc, float b,
                           unsigned IC, size_t plane, size_t Wp)
{
    float a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    float a8 = b, a9 = b, a10 = b, a11 = b;
    unsigned ic, ki;

    for (ic = 0; ic < IC; ic++)
        for (ki = 0; ki < 5; ki++) {
            const float *xr = xrow + ic * plane + ki * Wp;
            const float *wr = w_oc + ((size_t)ic * 5 + ki) * 5;
            const float x0 = xr[0], x1 = xr[1], x2 = xr[2], x3 = xr[3], x4 = xr[4];
            const float x5 = xr[5], x6 = xr[6], x7 = xr[7], x8 = xr[8], x9 = xr[9];
            const float x10 = xr[10], x11 = xr[11], x12 = xr[12], x13 = xr[13];
            const float x14 = xr[14], x15 = xr[15];
            TAP12(wr[0], x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11)
            TAP12(wr[1], x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12)
            TAP12(wr[2], x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13)
            TAP12(wr[3], x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14)
            TAP12(wr[4], x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15)
        }
    y[0] = a0; y[1] = a1; y[2] = a2; y[3] = a3; y[4] = a4; y[5] = a5;
    y[6] = a6; y[7] = a7; y[8] = a8; y[9] = a9; y[10] = a10; y[11] = a11;
}
#endif
#undef TAP12
#endif
#ifndef TR_PLANE_BLK12
#define TR_PLANE_BLK12 0
#endif

/* one row of outputs, stride 1: blocks of 8, of 4, then single outputs */
static void plane_row_s1(float *y, const float *xrow, const float *w_oc, float b,
                         unsigned OW, unsigned IC, unsigned K, size_t plane, size_t Wp)
{
    unsigned ow = 0, ic, ki, kj;

#if TR_PLANE_BLK12     /* a block of 12 where blocks of 8 would leave 4 */
    for (; K == 5 && ow + 12 <= OW && (OW - ow) % 8 != 0; ow += 12)
        plane_blk12_k5(y + ow, xrow + ow, w_oc, b, IC, plane, Wp);
#endif
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
#endif

void tr_conv2d_pad(float *xpad, const float *x, const struct tr_layer *l)
{
    const size_t H = l->in_h, W = l->in_w, P = l->d.pad;
    const size_t plane = (H + 2 * P) * (W + 2 * P);
    size_t ic, w;

    for (ic = 0; ic < l->in_c; ic++)
        pad_plane(xpad + ic * plane, x + ic * H * W, H, W, P);
    for (w = 0; w < 8; w++)                       /* the slack */
        xpad[l->in_c * plane + w] = 0.0f;
}

/* y (OH, OW) = b + w_oc (IC*K*K) taps over the padded input, each output
 * starting at b and adding its taps in order (ic, ki, kj) */
void tr_conv2d_plane(float *y, const float *xpad, const float *w_oc, float b,
                     const struct tr_layer *l)
{
    const unsigned IC = l->in_c, K = l->d.kernel, S = l->d.stride;
    const unsigned OH = l->out_h, OW = l->out_w;
    const size_t Hp = l->in_h + 2u * l->d.pad, Wp = l->in_w + 2u * l->d.pad;
    unsigned oh, ow, ic, ki, kj;

#if TR_PLANE_TILES
    if (S == 1 && plane_tiles(OW, K, Wp)) {
        plane_s1_tiles(y, xpad, w_oc, b, OH, OW, IC, K, Hp * Wp, Wp);
        return;
    }
#endif
    for (oh = 0; oh < OH; oh++) {
        float *yr = y + (size_t)oh * OW;
        const float *xrow = xpad + (size_t)oh * S * Wp;
        if (S == 1) {
            plane_row_s1(yr, xrow, w_oc, b, OW, IC, K, Hp * Wp, Wp);
            continue;
        }
        for (ow = 0; ow < OW; ow++) {
            float acc = b;
            for (ic = 0; ic < IC; ic++)
                for (ki = 0; ki < K; ki++) {
                    const float *xr = xrow + (ic * Hp + ki) * Wp + (size_t)ow * S;
                    const float *wr = w_oc + ((size_t)ic * K + ki) * K;
                    for (kj = 0; kj < K; kj++)
                        acc += wr[kj] * xr[kj];
                }
            yr[ow] = acc;
        }
    }
}

/* dw_oc (IC*K*K) += the taps' products with g (OH, OW), each tap's sum
 * running over the output positions in row-major order */
void tr_conv2d_plane_dw(float *dw_oc, const float *xpad, const float *g,
                        const struct tr_layer *l)
{
    const unsigned IC = l->in_c, K = l->d.kernel, S = l->d.stride;
    const unsigned OH = l->out_h, OW = l->out_w;
    const size_t Hp = l->in_h + 2u * l->d.pad, Wp = l->in_w + 2u * l->d.pad;
    unsigned oh, ow, ic, ki, kj;

    for (ic = 0; ic < IC; ic++) {
        const float *xp = xpad + ic * Hp * Wp;
        float *dwc = dw_oc + (size_t)ic * K * K;
        if (K == 5 && S == 1) {
            plane_dw_k5(dwc, xp, g, OH, OW, Wp);
            continue;
        }
        for (ki = 0; ki < K; ki++)
            for (kj = 0; kj < K; kj++) {
                float acc = dwc[ki * K + kj];
                for (oh = 0; oh < OH; oh++) {
                    const float *xr = xp + ((size_t)oh * S + ki) * Wp + kj;
                    const float *gr = g + (size_t)oh * OW;
                    for (ow = 0; ow < OW; ow++)
                        acc += xr[(size_t)ow * S] * gr[ow];
                }
                dwc[ki * K + kj] = acc;
            }
    }
}
