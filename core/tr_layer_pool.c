/* tinyring: MaxPool2d (window k, stride s, no padding, floor mode). */
#include "tr_layer_kernels.h"

/* y (n, C, OH, OW) = max over each k x k window of x (n, C, H, W). The first
 * maximum in row-major window order wins, like PyTorch (val > max). */
/* pool2_row_forward, pool2_row_inplace and the fused BN planes: below
 * (one #if chooses them) */
static void pool2_row_forward(float *restrict y, const float *restrict x0,
                              const float *restrict x1, unsigned ow_n);
static void pool2_row_inplace(float *restrict t0, float *restrict t1,
                              const float *restrict y, const float *restrict dy,
                              unsigned ow_n, int relu);

void tr_maxpool2d_forward(float *restrict y, const float *restrict x,
                          const struct tr_layer *l, unsigned n)
{
    const unsigned k = l->d.kernel, s = l->d.stride;
    const unsigned H = l->in_h, W = l->in_w, OH = l->out_h, OW = l->out_w;
    const size_t planes = (size_t)n * l->in_c;
    size_t p;
    unsigned oh, ow, i, j;

    if (k == 2 && s == 2) {
        for (p = 0; p < planes; p++)
            for (oh = 0; oh < OH; oh++)
                pool2_row_forward(y + (p * OH + oh) * OW, x + (p * H + 2u * oh) * W,
                                  x + (p * H + 2u * oh + 1u) * W, OW);
        return;
    }
    for (p = 0; p < planes; p++) {
        const float *xp = x + p * H * W;
        float *yp = y + p * OH * OW;
        for (oh = 0; oh < OH; oh++) {
            for (ow = 0; ow < OW; ow++) {
                const float *win = xp + (size_t)oh * s * W + (size_t)ow * s;
                float m = win[0];
                for (i = 0; i < k; i++)
                    for (j = 0; j < k; j++)
                        if (win[i * W + j] > m)
                            m = win[i * W + j];
                yp[oh * OW + ow] = m;
            }
        }
    }
}

static uint32_t fbits(float f)
{
    union { float f; uint32_t u; } b;
    b.f = f;
    return b.u;
}

static float from_bits(uint32_t u)
{
    union { float f; uint32_t u; } b;
    b.u = u;
    return b.f;
}

/* the inputs of plane dx (H, W) no 2x2 stride-2 window covers (a last
 * odd column or row): +0 */
static inline void pool2_edges(float *dx, const struct tr_layer *l)
{
    const unsigned H = l->in_h, W = l->in_w, OH = l->out_h, OW = l->out_w;
    unsigned oh, w;

    for (oh = 0; W > 2u * OW && oh < OH; oh++)
        for (w = 2u * OW; w < W; w++)
            dx[2u * oh * W + w] = dx[(2u * oh + 1u) * W + w] = 0.0f;
    for (w = 2u * OH * W; w < H * W; w++)
        dx[w] = 0.0f;
}

/* One output row of a 2x2 stride-2 window: input rows x0, x1 get dy or +0.
 * The first of the four (row-major) equal to the max wins. It is found with
 * integer compares of the bits (the max is a copy of the first element
 * attaining it, and every element before that one compares less) turned
 * into all-ones/all-zeros masks over dy's bits: straight-line integer code,
 * no data-dependent branches, vectorisable. Separate restrict rows so the
 * compiler needs no aliasing checks. */
static void pool2_row(float *restrict d0, float *restrict d1, const float *restrict x0,
                      const float *restrict x1, const float *restrict y,
                      const float *restrict dy, unsigned ow_n, int relu)
{
    unsigned ow;

    for (ow = 0; ow < ow_n; ow++) {
        /* with relu: the ReLU before the pool passes dy only where max > 0 */
        const uint32_t gate = relu ? 0u - (uint32_t)(y[ow] > 0.0f) : ~0u;
        const uint32_t m = fbits(y[ow]), g = fbits(dy[ow]) & gate;
        const uint32_t a = 0u - (uint32_t)(fbits(x0[2 * ow]) == m);
        const uint32_t b = (0u - (uint32_t)(fbits(x0[2 * ow + 1]) == m)) & ~a;
        const uint32_t c = (0u - (uint32_t)(fbits(x1[2 * ow]) == m)) & ~(a | b);
        const uint32_t e = ~(a | b | c);
        d0[2 * ow] = from_bits(g & a);
        d0[2 * ow + 1] = from_bits(g & b);
        d1[2 * ow] = from_bits(g & c);
        d1[2 * ow + 1] = from_bits(g & e);
    }
}

/* 2x2 windows, stride 2: each input written once; a last odd row or
 * column (outside every window) gets 0. */
static void pool2_backward(float *restrict dx, const float *restrict dy,
                           const float *restrict x, const float *restrict y,
                           const struct tr_layer *l, unsigned n, int relu)
{
    const unsigned H = l->in_h, W = l->in_w, OH = l->out_h, OW = l->out_w;
    const size_t planes = (size_t)n * l->in_c;
    size_t p;
    unsigned oh;

    for (p = 0; p < planes; p++) {
        const float *xp = x + p * H * W;
        float *dxp = dx + p * H * W;
        for (oh = 0; oh < OH; oh++) {
            float *d0 = dxp + 2u * oh * W, *d1 = d0 + W;
            pool2_row(d0, d1, xp + 2u * oh * W, xp + (2u * oh + 1u) * W,
                      y + (p * OH + oh) * OW, dy + (p * OH + oh) * OW, OW, relu);
        }
        pool2_edges(dxp, l);
    }
}

/* dx (n, C, H, W) = dy routed to each window's argmax, found again as the
 * first element equal to y. Overlapping windows (s < k) accumulate. */
static void pool_backward(float *restrict dx, const float *restrict dy,
                          const float *restrict x, const float *restrict y,
                          const struct tr_layer *l, unsigned n, int relu)
{
    const unsigned k = l->d.kernel, s = l->d.stride;
    const unsigned H = l->in_h, W = l->in_w, OH = l->out_h, OW = l->out_w;
    const size_t planes = (size_t)n * l->in_c;
    size_t p, q;
    unsigned oh, ow, i, j;

    if (k == 2 && s == 2) {   /* the seed's pool: every input written once */
        pool2_backward(dx, dy, x, y, l, n, relu);
        return;
    }
    for (q = 0; q < planes * H * W; q++)
        dx[q] = 0.0f;
    for (p = 0; p < planes; p++) {
        const float *xp = x + p * H * W;
        float *dxp = dx + p * H * W;
        const float *yp = y + p * OH * OW, *dyp = dy + p * OH * OW;
        for (oh = 0; oh < OH; oh++) {
            for (ow = 0; ow < OW; ow++) {
                size_t base = (size_t)oh * s * W + (size_t)ow * s;
                float m = yp[oh * OW + ow];
                int found = 0;
                for (i = 0; i < k && !found; i++)
                    for (j = 0; j < k && !found; j++)
                        if (xp[base + i * W + j] == m) {
                            if (!relu || m > 0.0f)
                                dxp[base + i * W + j] += dyp[oh * OW + ow];
                            found = 1;
                        }
            }
        }
    }
}

void tr_maxpool2d_backward(float *dx, const float *dy, const float *x, const float *y,
                           const struct tr_layer *l, unsigned n)
{
    pool_backward(dx, dy, x, y, l, n, 0);
}

void tr_maxpool2d_relu_backward(float *dx, const float *dy, const float *x, const float *y,
                                const struct tr_layer *l, unsigned n)
{
    pool_backward(dx, dy, x, y, l, n, 1);
}

int tr_maxpool2d_in_place(const struct tr_layer *l)
{
    return l->d.kernel == 2 && l->d.stride == 2;
}

    /* with vector rows: the even rows, then the odd ones, so a row's stores
     * are not followed by loads right next to them (its masked stores may
     * reach into the next row pair, whose loads would then wait for them) */

/* the fused BN planes as their parts: apply into t, then the pool */
static void bn_forward_plane_parts(float *y, const float *x, const struct tr_bn_plane *bn,
                                   const struct tr_layer *l, float *t)
{
    struct tr_layer one = *l;

    one.in_c = one.out_c = 1;
    tr_bn2d_plane_apply(t, x, (size_t)l->in_h * l->in_w, bn->mean, bn->invstd, bn->g, bn->b,
                        bn->relu);
    tr_maxpool2d_forward(y, t, &one, 1);
}

static void bn_backward_plane_parts(float *dx, const float *dy, const float *x,
                                    const float *y, const struct tr_bn_plane *bn,
                                    const struct tr_layer *l, float *t)
{
    tr_bn2d_plane_apply(t, x, (size_t)l->in_h * l->in_w, bn->mean, bn->invstd, bn->g, bn->b,
                        bn->relu);
    tr_maxpool2d_backward_plane(dx, dy, t, y, l, bn->relu);
}

/* ---- the lean plan's kept windows (2x2 stride 2) ----------------------
 * The first pass makes each window's BN values from x (16 windows at a
 * time with AVX-512, chunk_keep; one at a time, bn_window_max, else), keeps
 * its argmax (TR_POOL_SHUT where the ReLU's gate is shut: the max is
 * not > 0) and writes dx: dy at the argmax, +0 elsewhere, the bits of
 * tr_maxpool2d_bn_backward_plane. The second pass routes dy again from the
 * bytes alone. */

/* ---- the 2x2 stride-2 rows: one #if chooses their implementation ------
 * AVX-512: 16 windows at a time. A row pair's inputs are loaded whole
 * (masked loads: nothing past the 2*ow_n inputs of each row is read),
 * split into each window's four elements by permutes, and compared in
 * the same order as the plain form (the same selections, so the same
 * bits); the backward's gradients are interleaved back and stored by
 * masked stores (in place: nothing past the row's windows is written).
 * GCC leaves the plain rows (7 or 14 windows for the seed) scalar. */
#if defined(__GNUC__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#define POOL2_PASSES 2u    /* in-place rows: even ones, then odd ones */

/* the lanes of the 16 windows' first and second columns in 32 inputs */
#define EVEN_IDX _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0)
#define ODD_IDX _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1)
/* and back: inputs 0-15 and 16-31 of a row from its windows' two columns */
#define ILV_LO _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0)
#define ILV_HI _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8)

/* the masks of the first 2*nw inputs (in two vectors) and of nw windows */
static void pool2_masks(__mmask16 *lo, __mmask16 *hi, __mmask16 *win, unsigned nw)
{
    const unsigned ne = 2u * nw;
    *lo = (__mmask16)(ne >= 16 ? 0xffffu : (1u << ne) - 1u);
    *hi = (__mmask16)(ne <= 16 ? 0u : ne >= 32 ? 0xffffu : (1u << (ne - 16)) - 1u);
    *win = (__mmask16)(nw >= 16 ? 0xffffu : (1u << nw) - 1u);
}

/* BN's map [and ReLU] of 16 values, as tr_bn2d_plane_apply: ((v - mean) *
 * invstd) * g + b, then v > 0 ? v : +0 */
static __m512 bn16(__m512 v, const struct tr_bn_plane *bn)
{
    v = _mm512_sub_ps(v, _mm512_set1_ps(bn->mean));
    v = _mm512_mul_ps(v, _mm512_set1_ps(bn->invstd));
    v = _mm512_mul_ps(v, _mm512_set1_ps(bn->g));
    v = _mm512_add_ps(v, _mm512_set1_ps(bn->b));
    return bn->relu ? _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OS), v)
                    : v;
}

/* a row pair's 2*nw inputs from o on (bn: through BN's map first) */
static void pool2_load(__m512 v[4], const float *x0, const float *x1, unsigned o,
                       __mmask16 lo, __mmask16 hi, const struct tr_bn_plane *bn)
{
    int j;

    v[0] = _mm512_maskz_loadu_ps(lo, x0 + 2 * o);
    v[1] = _mm512_maskz_loadu_ps(hi, x0 + 2 * o + 16);
    v[2] = _mm512_maskz_loadu_ps(lo, x1 + 2 * o);
    v[3] = _mm512_maskz_loadu_ps(hi, x1 + 2 * o + 16);
    for (j = 0; bn && j < 4; j++)
        v[j] = bn16(v[j], bn);
}

static void pool2_row_fwd(float *y, const float *x0, const float *x1, unsigned ow_n,
                          const struct tr_bn_plane *bn)
{
    unsigned o;

    for (o = 0; o < ow_n; o += 16) {
        const unsigned nw = ow_n - o < 16 ? ow_n - o : 16;
        __mmask16 lo, hi, win;
        __m512 r[4], v, m;
        pool2_masks(&lo, &hi, &win, nw);
        pool2_load(r, x0, x1, o, lo, hi, bn);
        /* m = x00; then x01, x10, x11 replace it only if greater */
        m = _mm512_permutex2var_ps(r[0], EVEN_IDX, r[1]);
        v = _mm512_permutex2var_ps(r[0], ODD_IDX, r[1]);
        m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, m, _CMP_GT_OS), m, v);
        v = _mm512_permutex2var_ps(r[2], EVEN_IDX, r[3]);
        m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, m, _CMP_GT_OS), m, v);
        v = _mm512_permutex2var_ps(r[2], ODD_IDX, r[3]);
        m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, m, _CMP_GT_OS), m, v);
        _mm512_mask_storeu_ps(y + o, win, m);
    }
}

static void pool2_row_forward(float *restrict y, const float *restrict x0,
                              const float *restrict x1, unsigned ow_n)
{
    pool2_row_fwd(y, x0, x1, ow_n, NULL);
}

/* bit equality of two vectors' lanes (the plain form's integer compare) */
static __mmask16 same_bits16(__m512 a, __m512 b)
{
    return _mm512_cmpeq_epi32_mask(_mm512_castps_si512(a), _mm512_castps_si512(b));
}

/* d0, d1 (2*ow_n each) from input rows x0, x1 (the same rows, in place) */
static void pool2_row_bwd(float *d0, float *d1, const float *x0, const float *x1,
                          const float *y, const float *dy, unsigned ow_n, int relu,
                          const struct tr_bn_plane *bn)
{
    unsigned o;

    for (o = 0; o < ow_n; o += 16) {
        const unsigned nw = ow_n - o < 16 ? ow_n - o : 16;
        __mmask16 lo, hi, win, gate, a, b, c, e;
        __m512 r[4], m, g, d00, d01, d10, d11;
        pool2_masks(&lo, &hi, &win, nw);
        pool2_load(r, x0, x1, o, lo, hi, bn);
        m = _mm512_maskz_loadu_ps(win, y + o);
        g = _mm512_maskz_loadu_ps(win, dy + o);
        /* with relu: dy passes only where the window's max is > 0 */
        gate = relu ? _mm512_cmp_ps_mask(m, _mm512_setzero_ps(), _CMP_GT_OS) : win;
        a = same_bits16(_mm512_permutex2var_ps(r[0], EVEN_IDX, r[1]), m);
        b = (__mmask16)(same_bits16(_mm512_permutex2var_ps(r[0], ODD_IDX, r[1]), m) & ~a);
        c = (__mmask16)(same_bits16(_mm512_permutex2var_ps(r[2], EVEN_IDX, r[3]), m) & ~(a | b));
        e = (__mmask16)~(a | b | c);
        d00 = _mm512_maskz_mov_ps((__mmask16)(gate & a), g);
        d01 = _mm512_maskz_mov_ps((__mmask16)(gate & b), g);
        d10 = _mm512_maskz_mov_ps((__mmask16)(gate & c), g);
        d11 = _mm512_maskz_mov_ps((__mmask16)(gate & e), g);
        _mm512_mask_storeu_ps(d0 + 2 * o, lo, _mm512_permutex2var_ps(d00, ILV_LO, d01));
        _mm512_mask_storeu_ps(d0 + 2 * o + 16, hi, _mm512_permutex2var_ps(d00, ILV_HI, d01));
        _mm512_mask_storeu_ps(d1 + 2 * o, lo, _mm512_permutex2var_ps(d10, ILV_LO, d11));
        _mm512_mask_storeu_ps(d1 + 2 * o + 16, hi, _mm512_permutex2var_ps(d10, ILV_HI, d11));
    }
}

static void pool2_row_inplace(float *restrict t0, float *restrict t1,
                              const float *restrict y, const float *restrict dy,
                              unsigned ow_n, int relu)
{
    pool2_row_bwd(t0, t1, t0, t1, y, dy, ow_n, relu, NULL);
}

/* windows' four elements (top left, top right, bottom left, bottom
 * right) in lane order: their max in *m, their argmax (0..3) returned;
 * each element replaces the max only if greater, in the pool's order */
static inline __attribute__((always_inline)) __m512i window_max_arg(__m512 *m, __m512 e0, __m512 e1, __m512 e2, __m512 e3)
{
    __mmask16 gt;
    __m512 mx = e0;
    __m512i a = _mm512_setzero_si512();

    gt = _mm512_cmp_ps_mask(e1, mx, _CMP_GT_OS);
    mx = _mm512_mask_blend_ps(gt, mx, e1);
    a = _mm512_mask_mov_epi32(a, gt, _mm512_set1_epi32(1));
    gt = _mm512_cmp_ps_mask(e2, mx, _CMP_GT_OS);
    mx = _mm512_mask_blend_ps(gt, mx, e2);
    a = _mm512_mask_mov_epi32(a, gt, _mm512_set1_epi32(2));
    gt = _mm512_cmp_ps_mask(e3, mx, _CMP_GT_OS);
    *m = _mm512_mask_blend_ps(gt, mx, e3);
    return _mm512_mask_mov_epi32(a, gt, _mm512_set1_epi32(3));
}

/* 16 windows (masks lo, hi of their inputs) of a row pair x0, x1 through
 * BN: their max in *m, their argmax (0..3) returned */
static inline __attribute__((always_inline)) __m512i chunk_max_arg(__m512 *m, const float *x0, const float *x1, __mmask16 lo,
                             __mmask16 hi, const struct tr_bn_plane *bn)
{
    __m512 r[4];

    pool2_load(r, x0, x1, 0, lo, hi, bn);
    return window_max_arg(m, _mm512_permutex2var_ps(r[0], EVEN_IDX, r[1]),
                          _mm512_permutex2var_ps(r[0], ODD_IDX, r[1]),
                          _mm512_permutex2var_ps(r[2], EVEN_IDX, r[3]),
                          _mm512_permutex2var_ps(r[2], ODD_IDX, r[3]));
}

/* the same, their max to y and their argmax to arg (win: the windows) */
static void chunk_fwd_arg(float *y, uint8_t *arg, const float *x0, const float *x1,
                          __mmask16 lo, __mmask16 hi, __mmask16 win,
                          const struct tr_bn_plane *bn)
{
    __m512 m;
    const __m512i a = chunk_max_arg(&m, x0, x1, lo, hi, bn);

    _mm512_mask_storeu_ps(y, win, m);
    _mm512_mask_cvtepi32_storeu_epi8(arg, win, a);
}

/* the windows' gradients by element (d[e], e as window_max_arg numbers
 * them): g where argmax a is e in the windows of gate, +0 elsewhere */
static inline __attribute__((always_inline)) void window_route(__m512 d[4], __m512i a, __m512 g, __mmask16 gate)
{
    int e;

    for (e = 0; e < 4; e++)
        d[e] = _mm512_maskz_mov_ps(_mm512_mask_cmpeq_epi32_mask(gate, a, _mm512_set1_epi32(e)), g);
}

/* 16 windows' gradients: g where argmax a points in the windows of gate,
 * +0 elsewhere, interleaved back into rows d0, d1 */
static void chunk_route(float *d0, float *d1, __m512i a, __m512 g, __mmask16 gate,
                        __mmask16 lo, __mmask16 hi)
{
    __m512 d[4];

    window_route(d, a, g, gate);
    _mm512_mask_storeu_ps(d0, lo, _mm512_permutex2var_ps(d[0], ILV_LO, d[1]));
    _mm512_mask_storeu_ps(d0 + 16, hi, _mm512_permutex2var_ps(d[0], ILV_HI, d[1]));
    _mm512_mask_storeu_ps(d1, lo, _mm512_permutex2var_ps(d[2], ILV_LO, d[3]));
    _mm512_mask_storeu_ps(d1 + 16, hi, _mm512_permutex2var_ps(d[2], ILV_HI, d[3]));
}

/* the windows win's argmax bytes from arg in *a and their dy in *g; the
 * gate returned: with relu the windows whose max y is > 0, else all */
static inline __attribute__((always_inline)) __mmask16 arg_load(__m512i *a, __m512 *g, const uint8_t *arg, const float *y,
                                 const float *dy, __mmask16 win, int relu)
{
    *a = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(win, arg));
    *g = _mm512_maskz_loadu_ps(win, dy);
    return relu ? _mm512_mask_cmp_ps_mask(win, _mm512_maskz_loadu_ps(win, y),
                                          _mm512_setzero_ps(), _CMP_GT_OS)
                : win;
}

/* 16 windows' gradients from their argmax: dy where it points (through
 * the gate), +0 elsewhere */
static void chunk_bwd_arg(float *d0, float *d1, const uint8_t *arg, const float *y,
                          const float *dy, __mmask16 lo, __mmask16 hi, __mmask16 win, int relu)
{
    __m512i a;
    __m512 g;
    const __mmask16 gate = arg_load(&a, &g, arg, y, dy, win, relu);

    chunk_route(d0, d1, a, g, gate, lo, hi);
}

/* 16 windows of the kept-window passes. The first (x0 set): their max to y
 * (unless NULL), argmax or TR_POOL_SHUT to keep; the second (x0 NULL): the
 * argmax bytes read back from kept. Either routes dy into rows d0, d1. */
/* the kept-window passes' gates. The first's: the windows win of max m
 * (stored to y unless NULL) that pass the ReLU, their argmax a kept, the
 * others TR_POOL_SHUT. The second's: the windows whose kept byte (read
 * into *a) is not TR_POOL_SHUT. */
static inline __attribute__((always_inline)) __mmask16 keep_first(float *y, uint8_t *keep, __m512i a, __m512 m,
                                   __mmask16 win, const struct tr_bn_plane *bn)
{
    const __mmask16 gate =
        bn->relu ? _mm512_mask_cmp_ps_mask(win, m, _mm512_setzero_ps(), _CMP_GT_OS) : win;

    if (y)
        _mm512_mask_storeu_ps(y, win, m);
    _mm512_mask_cvtepi32_storeu_epi8(
        keep, win, _mm512_mask_mov_epi32(_mm512_set1_epi32((int)TR_POOL_SHUT), gate, a));
    return gate;
}

static inline __attribute__((always_inline)) __mmask16 keep_second(__m512i *a, const uint8_t *kept, __mmask16 win)
{
    *a = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(win, kept));
    return _mm512_mask_cmplt_epi32_mask(win, *a, _mm512_set1_epi32((int)TR_POOL_SHUT));
}

static inline __attribute__((always_inline)) void chunk_keep(float *d0, float *d1, float *y, uint8_t *keep, const uint8_t *kept,
                       const float *x0, const float *dy, unsigned W, __mmask16 lo,
                       __mmask16 hi, __mmask16 win, const struct tr_bn_plane *bn)
{
    __m512i a;
    __mmask16 gate;

    if (x0) {
        __m512 m;
        a = chunk_max_arg(&m, x0, x0 + W, lo, hi, bn);
        gate = keep_first(y, keep, a, m, win, bn);
    } else {
        gate = keep_second(&a, kept, win);
    }
    chunk_route(d0, d1, a, _mm512_maskz_loadu_ps(win, dy), gate, lo, hi);
}

/* Planes of rows no wider than 16 inputs with at most 8 windows (the
 * seed's 14x14 -> 7x7): two output rows' windows in one chunk, row oh's in
 * lanes 0..OW-1 and oh+1's after them, so 7-window rows fill 14 lanes, not
 * 7. The permutes pick each window's elements from rows 2oh and 2oh+2 (or
 * 2oh+1 and 2oh+3) and put a row pair's gradients back; the windows are
 * compared as in the chunks above, so the same bits. */
struct pool2_pairs {
    __m512i even, odd;             /* a window's first / second column */
    __m512i back0, back1;          /* a row of the first / second output row */
    __mmask16 in;                  /* the 2*OW inputs of a row */
};

static int pool2_paired(const struct tr_layer *l)
{
    return tr_maxpool2d_in_place(l) && l->in_w <= 16 && l->out_w <= 8;
}

static void pool2_pairs_make(struct pool2_pairs *pp, unsigned OW)
{
    int32_t e[16], o[16], b0[16], b1[16];
    unsigned j;

    for (j = 0; j < 16; j++) {
        const unsigned w = j < OW ? j : j - OW, src = j < OW ? 0u : 16u;
        const unsigned h = j / 2u, col = j % 2u ? 16u : 0u;
        e[j] = (int32_t)(src + 2u * w);
        o[j] = (int32_t)(src + 2u * w + 1u);
        b0[j] = (int32_t)(col + (h < OW ? h : 0u));
        b1[j] = (int32_t)(col + (h < OW ? OW + h : 0u));
        if (j >= 2u * OW)
            e[j] = o[j] = 0;
    }
    pp->even = _mm512_loadu_si512(e);
    pp->odd = _mm512_loadu_si512(o);
    pp->back0 = _mm512_loadu_si512(b0);
    pp->back1 = _mm512_loadu_si512(b1);
    pp->in = (__mmask16)((1u << (2u * OW)) - 1u);
}

/* the windows of an output row, and with two of the next */
static __mmask16 pair_windows(int two, unsigned OW)
{
    return (__mmask16)((1u << ((two ? 2u : 1u) * OW)) - 1u);
}

/* output rows oh and, with two, oh+1 of plane x (rows W apart) through BN:
 * their windows' max in *m, their argmax returned */
static inline __attribute__((always_inline)) __m512i pair_max_arg(__m512 *m, const float *x, unsigned W, int two,
                            const struct pool2_pairs *pp, const struct tr_bn_plane *bn)
{
    const __mmask16 in2 = two ? pp->in : 0;
    __m512 r0 = _mm512_maskz_loadu_ps(pp->in, x), r1 = _mm512_maskz_loadu_ps(pp->in, x + W);
    __m512 r2 = _mm512_maskz_loadu_ps(in2, two ? x + 2u * W : x);
    __m512 r3 = _mm512_maskz_loadu_ps(in2, two ? x + 3u * W : x);

    if (bn) {
        r0 = bn16(r0, bn);
        r1 = bn16(r1, bn);
        r2 = bn16(r2, bn);
        r3 = bn16(r3, bn);
    }
    return window_max_arg(m, _mm512_permutex2var_ps(r0, pp->even, r2),
                          _mm512_permutex2var_ps(r0, pp->odd, r2),
                          _mm512_permutex2var_ps(r1, pp->even, r3),
                          _mm512_permutex2var_ps(r1, pp->odd, r3));
}

/* two output rows' gradients g where argmax a points (in the windows of
 * gate), +0 elsewhere, back into input rows d0 .. d0 + 3W (two: else the
 * first two) */
static void paired_route(float *d0, unsigned W, int two, __m512i a, __m512 g, __mmask16 gate,
                         const struct pool2_pairs *pp)
{
    __m512 d[4];

    window_route(d, a, g, gate);
    _mm512_mask_storeu_ps(d0, pp->in, _mm512_permutex2var_ps(d[0], pp->back0, d[1]));
    _mm512_mask_storeu_ps(d0 + W, pp->in, _mm512_permutex2var_ps(d[2], pp->back0, d[3]));
    if (two) {
        _mm512_mask_storeu_ps(d0 + 2u * W, pp->in, _mm512_permutex2var_ps(d[0], pp->back1, d[1]));
        _mm512_mask_storeu_ps(d0 + 3u * W, pp->in, _mm512_permutex2var_ps(d[2], pp->back1, d[3]));
    }
}

/* arg NULL: the max only */
static inline __attribute__((always_inline)) void paired_forward_arg(float *y, uint8_t *arg, const float *x,
                               const struct tr_bn_plane *bn, const struct tr_layer *l)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    struct pool2_pairs pp;
    unsigned oh;

    pool2_pairs_make(&pp, OW);
    for (oh = 0; oh < OH; oh += 2) {
        const int two = oh + 1 < OH;
        const __mmask16 win = pair_windows(two, OW);
        __m512 m;
        const __m512i a = pair_max_arg(&m, x + 2u * oh * W, W, two, &pp, bn);
        _mm512_mask_storeu_ps(y + (size_t)oh * OW, win, m);
        if (arg)
            _mm512_mask_cvtepi32_storeu_epi8(arg + (size_t)oh * OW, win, a);
    }
}

static void paired_backward_arg(float *dx, const float *dy, const uint8_t *arg,
                                const float *y, const struct tr_layer *l, int relu)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    struct pool2_pairs pp;
    unsigned oh;

    pool2_pairs_make(&pp, OW);
    for (oh = 0; oh < OH; oh += 2) {
        const int two = oh + 1 < OH;
        const size_t q = (size_t)oh * OW;
        const __mmask16 win = pair_windows(two, OW);
        __m512i a;
        __m512 g;
        const __mmask16 gate = arg_load(&a, &g, arg + q, y + q, dy + q, win, relu);
        paired_route(dx + 2u * oh * W, W, two, a, g, gate, &pp);
    }
    pool2_edges(dx, l);
}

/* keep_planes' passes (chunk_keep) on paired rows */
static void paired_keep(float *dx, float *y, uint8_t *keep, const uint8_t *kept, const float *x,
                        const float *dy, const struct tr_bn_plane *bn, const struct tr_layer *l)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    struct pool2_pairs pp;
    unsigned oh;

    pool2_pairs_make(&pp, OW);
    for (oh = 0; oh < OH; oh += 2) {
        const int two = oh + 1 < OH;
        const size_t q = (size_t)oh * OW;
        const __mmask16 win = pair_windows(two, OW);
        __mmask16 gate;
        __m512i a;
        if (x) {
            __m512 m;
            a = pair_max_arg(&m, x + 2u * oh * W, W, two, &pp, bn);
            gate = keep_first(y ? y + q : NULL, keep + q, a, m, win, bn);
        } else {
            gate = keep_second(&a, kept + q, win);
        }
        paired_route(dx + 2u * oh * W, W, two, a, _mm512_maskz_loadu_ps(win, dy + q), gate, &pp);
    }
    pool2_edges(dx, l);
}

/* a plane of either pass (chunk_keep), 16 windows of every row at a time */
static void keep_planes(float *dx, float *y, uint8_t *keep, const uint8_t *kept,
                        const float *x, const float *dy, const struct tr_bn_plane *bn,
                        const struct tr_layer *l)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    unsigned o, oh;

    if (pool2_paired(l)) {
        paired_keep(dx, y, keep, kept, x, dy, bn, l);
        return;
    }
    for (o = 0; o < OW; o += 16) {
        __mmask16 lo, hi, win;
        pool2_masks(&lo, &hi, &win, OW - o < 16 ? OW - o : 16);
        for (oh = 0; oh < OH; oh++) {
            const size_t q = (size_t)oh * OW + o, r = 2u * oh * W + 2u * o;
            chunk_keep(dx + r, dx + r + W, y ? y + q : NULL, keep ? keep + q : NULL,
                       kept ? kept + q : NULL, x ? x + r : NULL, dy + q, W, lo, hi, win, bn);
        }
    }
    pool2_edges(dx, l);
}

void tr_maxpool2d_bn_plane_keep(float *dx, float *y, uint8_t *arg, const float *x,
                                const float *dy, const struct tr_bn_plane *bn,
                                const struct tr_layer *l)
{
    keep_planes(dx, y, arg, NULL, x, dy, bn, l);
}

void tr_maxpool2d_plane_route(float *dx, const float *dy, const uint8_t *arg,
                              const struct tr_layer *l)
{
    keep_planes(dx, NULL, NULL, arg, NULL, dy, NULL, l);
}

/* the planes: 16 windows of every row at a time, their masks made once */
void tr_maxpool2d_bn_forward_plane_arg(float *y, uint8_t *arg, const float *x,
                                       const struct tr_bn_plane *bn, const struct tr_layer *l,
                                       float *t)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    unsigned o, oh;

    (void)t;
    if (pool2_paired(l)) {
        paired_forward_arg(y, arg, x, bn, l);
        return;
    }
    for (o = 0; o < OW; o += 16) {
        __mmask16 lo, hi, win;
        pool2_masks(&lo, &hi, &win, OW - o < 16 ? OW - o : 16);
        for (oh = 0; oh < OH; oh++)
            chunk_fwd_arg(y + (size_t)oh * OW + o, arg + (size_t)oh * OW + o,
                          x + 2u * oh * W + 2u * o, x + (2u * oh + 1u) * W + 2u * o, lo, hi, win,
                          bn);
    }
}

void tr_maxpool2d_backward_plane_arg(float *dx, const float *dy, const uint8_t *arg,
                                     const float *y, const struct tr_layer *l, int relu)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    unsigned o, oh;

    if (pool2_paired(l)) {
        paired_backward_arg(dx, dy, arg, y, l, relu);
        return;
    }
    for (o = 0; o < OW; o += 16) {
        __mmask16 lo, hi, win;
        pool2_masks(&lo, &hi, &win, OW - o < 16 ? OW - o : 16);
        for (oh = 0; oh < OH; oh++) {
            float *d0 = dx + 2u * oh * W + 2u * o;
            chunk_bwd_arg(d0, d0 + W, arg + (size_t)oh * OW + o, y + (size_t)oh * OW + o,
                          dy + (size_t)oh * OW + o, lo, hi, win, relu);
        }
    }
    pool2_edges(dx, l);
}

void tr_maxpool2d_bn_forward_plane(float *y, const float *x, const struct tr_bn_plane *bn,
                                   const struct tr_layer *l, float *t)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    unsigned oh;

    if (!tr_maxpool2d_in_place(l)) {
        bn_forward_plane_parts(y, x, bn, l, t);
        return;
    }
    if (pool2_paired(l)) {
        paired_forward_arg(y, NULL, x, bn, l);
        return;
    }
    for (oh = 0; oh < OH; oh++)
        pool2_row_fwd(y + (size_t)oh * OW, x + 2u * oh * W, x + (2u * oh + 1u) * W, OW, bn);
}

void tr_maxpool2d_bn_backward_plane(float *dx, const float *dy, const float *x,
                                    const float *y, const struct tr_bn_plane *bn,
                                    const struct tr_layer *l, float *t)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    unsigned oh;

    if (!tr_maxpool2d_in_place(l)) {
        bn_backward_plane_parts(dx, dy, x, y, bn, l, t);
        return;
    }
    for (oh = 0; oh < OH; oh++) {
        float *d0 = dx + 2u * oh * W, *d1 = d0 + W;
        pool2_row_bwd(d0, d1, x + 2u * oh * W, x + (2u * oh + 1u) * W, y + (size_t)oh * OW,
                      dy + (size_t)oh * OW, OW, bn->relu, bn);
    }
    pool2_edges(dx, l);
}
#else
#define POOL2_PASSES 1u
/* One output row of 2x2 stride-2 windows over input rows x0, x1: the same
 * row-major "replace only if greater" order as the general loop below, so
 * the same bits; straight-line selects that vectorise. */
static void pool2_row_forward(float *restrict y, const float *restrict x0,
                              const float *restrict x1, unsigned ow_n)
{
    unsigned ow;

    for (ow = 0; ow < ow_n; ow++) {
        float m = x0[2 * ow];
        m = x0[2 * ow + 1] > m ? x0[2 * ow + 1] : m;
        m = x1[2 * ow] > m ? x1[2 * ow] : m;
        m = x1[2 * ow + 1] > m ? x1[2 * ow + 1] : m;
        y[ow] = m;
    }
}

/* The 2x2 row of pool2_row for dx written over x: each window's four inputs
 * are read before its four gradients are stored, same selection, same bits
 * (restrict holds: each row is read and written through its own pointer
 * only, and y, dy are other buffers) */
static void pool2_row_inplace(float *restrict t0, float *restrict t1,
                              const float *restrict y, const float *restrict dy,
                              unsigned ow_n, int relu)
{
    unsigned ow;

    for (ow = 0; ow < ow_n; ow++) {
        const uint32_t gate = relu ? 0u - (uint32_t)(y[ow] > 0.0f) : ~0u;
        const uint32_t m = fbits(y[ow]), g = fbits(dy[ow]) & gate;
        const uint32_t x00 = fbits(t0[2 * ow]), x01 = fbits(t0[2 * ow + 1]);
        const uint32_t x10 = fbits(t1[2 * ow]);
        const uint32_t a = 0u - (uint32_t)(x00 == m);
        const uint32_t b = (0u - (uint32_t)(x01 == m)) & ~a;
        const uint32_t c = (0u - (uint32_t)(x10 == m)) & ~(a | b);
        const uint32_t e = ~(a | b | c);
        t0[2 * ow] = from_bits(g & a);
        t0[2 * ow + 1] = from_bits(g & b);
        t1[2 * ow] = from_bits(g & c);
        t1[2 * ow + 1] = from_bits(g & e);
    }
}


#if TR_HOST_VECTORS
/* ---- vector hosts without AVX-512 (AVX2, SSE2, NEON): TR_VL windows at a
 * time, the shape of the AVX-512 chunks above in host vectors. A row
 * pair's 2*nw inputs are loaded as two vectors per row (the lanes past
 * them not read: masked loads where the target has them, else lane by
 * lane), split into each window's four elements by shuffles, compared in
 * the plain order (the same selections, so the same bits), and the
 * gradients interleaved back and stored up to the row's windows only. */
#if TR_VL == 16
#define POOL_EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define POOL_ODD 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#define POOL_LO 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23
#define POOL_HI 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31
#elif TR_VL == 8
#define POOL_EVEN 0, 2, 4, 6, 8, 10, 12, 14
#define POOL_ODD 1, 3, 5, 7, 9, 11, 13, 15
#define POOL_LO 0, 8, 1, 9, 2, 10, 3, 11
#define POOL_HI 4, 12, 5, 13, 6, 14, 7, 15
#else
#define POOL_EVEN 0, 2, 4, 6
#define POOL_ODD 1, 3, 5, 7
#define POOL_LO 0, 4, 1, 5
#define POOL_HI 2, 6, 3, 7
#endif
#if defined(__AVX__) && TR_VL == 8
#include <immintrin.h>
#endif

/* the lanes 0 .. TR_VL-1 */
static inline tr_vil lane_index(void)
{
    tr_vil v;
    int j;

    for (j = 0; j < TR_VL; j++)
        v[j] = j;
    return v;
}

/* the first n (<= TR_VL) floats at p, +0 in the other lanes; nothing past
 * them is read */
static inline tr_vfl load_n(const float *p, unsigned n)
{
    tr_vfl v = {0};

    if (n >= TR_VL) {
        TR_VLOAD(v, p);
    } else {
#if defined(__AVX__) && TR_VL == 8
        v = (tr_vfl)_mm256_maskload_ps(p, (__m256i)(lane_index() < (int32_t)n));
#else
        unsigned j;
        for (j = 0; j < n; j++)
            v[j] = p[j];
#endif
    }
    return v;
}

/* the first n (<= TR_VL) lanes of v to p; nothing past them written */
static inline void store_n(float *p, tr_vfl v, unsigned n)
{
    if (n >= TR_VL) {
        TR_VSTORE(p, v);
    } else {
#if defined(__AVX__) && TR_VL == 8
        _mm256_maskstore_ps(p, (__m256i)(lane_index() < (int32_t)n), (__m256)v);
#else
        unsigned j;
        for (j = 0; j < n; j++)
            p[j] = v[j];
#endif
    }
}

/* where mask m is set, x, else y */
static inline tr_vfl select_v(tr_vil m, tr_vfl x, tr_vfl y)
{
    return (tr_vfl)(((tr_vil)x & m) | ((tr_vil)y & ~m));
}

/* BN's map [and ReLU] of TR_VL values, as tr_bn2d_plane_apply */
static inline tr_vfl bn_v(tr_vfl v, const struct tr_bn_plane *bn)
{
    v = (v - bn->mean) * bn->invstd * bn->g + bn->b;
    return bn->relu ? (tr_vfl)((tr_vil)v & (v > 0.0f)) : v;
}

/* nw (1 .. TR_VL) windows from x0 (rows x0 and x0 + W) through BN: their
 * max in *m, their argmax (0..3) returned; each element replaces the max
 * only if greater, in the pool's order */
static inline __attribute__((always_inline)) tr_vil chunk_max_arg(tr_vfl *m, const float *x0,
                                                                  size_t W, unsigned nw,
                                                                  const struct tr_bn_plane *bn)
{
    const unsigned lo = 2u * nw < TR_VL ? 2u * nw : TR_VL, hi = 2u * nw - lo;
    tr_vfl r0 = load_n(x0, lo), r1 = load_n(x0 + TR_VL, hi);
    tr_vfl r2 = load_n(x0 + W, lo), r3 = load_n(x0 + W + TR_VL, hi), e, mx;
    tr_vil gt, a;

    if (bn) {
        r0 = bn_v(r0, bn);
        r1 = bn_v(r1, bn);
        r2 = bn_v(r2, bn);
        r3 = bn_v(r3, bn);
    }
    mx = __builtin_shufflevector(r0, r1, POOL_EVEN);
    e = __builtin_shufflevector(r0, r1, POOL_ODD);
    gt = e > mx;
    mx = select_v(gt, e, mx);
    a = gt & 1;
    e = __builtin_shufflevector(r2, r3, POOL_EVEN);
    gt = e > mx;
    mx = select_v(gt, e, mx);
    a = (a & ~gt) | (gt & 2);
    e = __builtin_shufflevector(r2, r3, POOL_ODD);
    gt = e > mx;
    *m = select_v(gt, e, mx);
    return (a & ~gt) | (gt & 3);
}

/* nw windows' gradients: g where argmax a points in the lanes of gate, +0
 * elsewhere, interleaved back into rows d0 and d0 + W */
static inline __attribute__((always_inline)) void chunk_route(float *d0, size_t W, tr_vil a,
                                                              tr_vfl g, tr_vil gate,
                                                              unsigned nw)
{
    const unsigned lo = 2u * nw < TR_VL ? 2u * nw : TR_VL, hi = 2u * nw - lo;
    const tr_vfl e0 = (tr_vfl)((tr_vil)g & gate & (a == 0));
    const tr_vfl e1 = (tr_vfl)((tr_vil)g & gate & (a == 1));
    const tr_vfl e2 = (tr_vfl)((tr_vil)g & gate & (a == 2));
    const tr_vfl e3 = (tr_vfl)((tr_vil)g & gate & (a == 3));

    store_n(d0, __builtin_shufflevector(e0, e1, POOL_LO), lo);
    store_n(d0 + TR_VL, __builtin_shufflevector(e0, e1, POOL_HI), hi);
    store_n(d0 + W, __builtin_shufflevector(e2, e3, POOL_LO), lo);
    store_n(d0 + W + TR_VL, __builtin_shufflevector(e2, e3, POOL_HI), hi);
}

/* the argmax bytes of nw windows, and back */
static inline tr_vil bytes_load(const uint8_t *p, unsigned nw)
{
    tr_vil v = {0};
    unsigned j;

    for (j = 0; j < nw; j++)
        v[j] = p[j];
    return v;
}

static inline void bytes_store(uint8_t *p, tr_vil v, unsigned nw)
{
    unsigned j;

    for (j = 0; j < nw; j++)
        p[j] = (uint8_t)v[j];
}

/* the windows of one output row at a time, TR_VL at a time: nw each */
#define CHUNKS(OW, o, nw) \
    for (o = 0; o < OW && ((nw = OW - o < TR_VL ? OW - o : TR_VL), 1); o += TR_VL)

/* y (OH, OW) and, unless NULL, the argmax bytes of the plane bn makes of x */
static void vec_forward(float *y, uint8_t *arg, const float *x, const struct tr_bn_plane *bn,
                        const struct tr_layer *l)
{
    const size_t W = l->in_w;
    const unsigned OH = l->out_h, OW = l->out_w;
    unsigned oh, o, nw;

    for (oh = 0; oh < OH; oh++)
        CHUNKS(OW, o, nw) {
            const size_t q = (size_t)oh * OW + o;
            tr_vfl m;
            const tr_vil a = chunk_max_arg(&m, x + 2u * oh * W + 2u * o, W, nw, bn);
            store_n(y + q, m, nw);
            if (arg)
                bytes_store(arg + q, a, nw);
        }
}

void tr_maxpool2d_bn_forward_plane_arg(float *y, uint8_t *arg, const float *x,
                                       const struct tr_bn_plane *bn, const struct tr_layer *l,
                                       float *t)
{
    (void)t;
    vec_forward(y, arg, x, bn, l);
}

void tr_maxpool2d_bn_forward_plane(float *y, const float *x, const struct tr_bn_plane *bn,
                                   const struct tr_layer *l, float *t)
{
    if (tr_maxpool2d_in_place(l))
        vec_forward(y, NULL, x, bn, l);
    else
        bn_forward_plane_parts(y, x, bn, l, t);
}

void tr_maxpool2d_bn_backward_plane(float *dx, const float *dy, const float *x,
                                    const float *y, const struct tr_bn_plane *bn,
                                    const struct tr_layer *l, float *t)
{
    bn_backward_plane_parts(dx, dy, x, y, bn, l, t);
}

void tr_maxpool2d_backward_plane_arg(float *dx, const float *dy, const uint8_t *arg,
                                     const float *y, const struct tr_layer *l, int relu)
{
    const size_t W = l->in_w;
    const unsigned OH = l->out_h, OW = l->out_w;
    unsigned oh, o, nw;

    for (oh = 0; oh < OH; oh++)
        CHUNKS(OW, o, nw) {
            const size_t q = (size_t)oh * OW + o;
            const tr_vil a = bytes_load(arg + q, nw);
            const tr_vil gate = relu ? load_n(y + q, nw) > 0.0f : ~(tr_vil){0};
            chunk_route(dx + 2u * oh * W + 2u * o, W, a, load_n(dy + q, nw), gate, nw);
        }
    pool2_edges(dx, l);
}

/* the kept-window passes: the first (x set) makes each window's max (to y
 * unless NULL) and argmax from x, keeps the argmax or TR_POOL_SHUT where
 * the ReLU's gate is shut; the second reads them back from kept. Either
 * routes dy. */
static void vec_keep(float *dx, float *y, uint8_t *keep, const uint8_t *kept, const float *x,
                     const float *dy, const struct tr_bn_plane *bn, const struct tr_layer *l)
{
    const size_t W = l->in_w;
    const unsigned OH = l->out_h, OW = l->out_w;
    unsigned oh, o, nw;

    for (oh = 0; oh < OH; oh++)
        CHUNKS(OW, o, nw) {
            const size_t q = (size_t)oh * OW + o;
            tr_vil a, gate;
            if (x) {
                tr_vfl m;
                a = chunk_max_arg(&m, x + 2u * oh * W + 2u * o, W, nw, bn);
                gate = bn->relu ? m > 0.0f : ~(tr_vil){0};
                if (y)
                    store_n(y + q, m, nw);
                bytes_store(keep + q, (a & gate) | ((int32_t)TR_POOL_SHUT & ~gate), nw);
            } else {
                a = bytes_load(kept + q, nw);
                gate = a < (int32_t)TR_POOL_SHUT;
            }
            chunk_route(dx + 2u * oh * W + 2u * o, W, a, load_n(dy + q, nw), gate, nw);
        }
    pool2_edges(dx, l);
}

void tr_maxpool2d_bn_plane_keep(float *dx, float *y, uint8_t *arg, const float *x,
                                const float *dy, const struct tr_bn_plane *bn,
                                const struct tr_layer *l)
{
    vec_keep(dx, y, arg, NULL, x, dy, bn, l);
}

void tr_maxpool2d_plane_route(float *dx, const float *dy, const uint8_t *arg,
                              const struct tr_layer *l)
{
    vec_keep(dx, NULL, NULL, arg, NULL, dy, NULL, l);
}
#else
/* BN [ReLU] of one input: tr_bn2d_plane_apply's expression */
static inline float bn_value(float v, const struct tr_bn_plane *bn)
{
    const float r = (v - bn->mean) * bn->invstd * bn->g + bn->b;

    return bn->relu && !(r > 0.0f) ? 0.0f : r;
}

/* The 2x2 window at x0 (row x0, the row below at x0 + W) made by the BN
 * plane's map: its max in *m, found as tr_maxpool2d_forward finds it (the
 * first value greater than all before it), the argmax's index (0..3,
 * row-major) returned and its offset from x0 in *off (0, 1, W, W + 1) */
static inline unsigned bn_window_max(float *m, size_t *off, const float *x0, size_t W,
                                     const struct tr_bn_plane *bn)
{
    const float e1 = bn_value(x0[1], bn), e2 = bn_value(x0[W], bn);
    const float e3 = bn_value(x0[W + 1], bn);
    float v = bn_value(x0[0], bn);
    unsigned a = 0;
    size_t o = 0;
    int gt;

    /* selects, not branches on the data (conditional moves) */
    gt = e1 > v;
    v = gt ? e1 : v;
    a = gt ? 1u : a;
    o = gt ? 1u : o;
    gt = e2 > v;
    v = gt ? e2 : v;
    a = gt ? 2u : a;
    o = gt ? W : o;
    gt = e3 > v;
    v = gt ? e3 : v;
    a = gt ? 3u : a;
    o = gt ? W + 1u : o;
    *m = v;
    *off = o;
    return a;
}

/* y (OH, OW) and, unless NULL, the argmax bytes of 2x2 stride-2 windows
 * over the plane the BN map makes of x, in one pass: no plane written */
static void pool2_bn_forward(float *y, uint8_t *arg, const float *x,
                             const struct tr_bn_plane *bnp, const struct tr_layer *l)
{
    const struct tr_bn_plane bn = *bnp;   /* a local copy: stores cannot alias it */
    const size_t W = l->in_w;
    const unsigned OH = l->out_h, OW = l->out_w;
    unsigned oh, ow;
    size_t off;

    for (oh = 0; oh < OH; oh++) {
        const float *x0 = x + 2u * oh * W;
        for (ow = 0; ow < OW; ow++, x0 += 2) {
            const unsigned a = bn_window_max(y + (size_t)oh * OW + ow, &off, x0, W, &bn);
            if (arg)
                arg[(size_t)oh * OW + ow] = (uint8_t)a;
        }
    }
}

void tr_maxpool2d_bn_forward_plane(float *y, const float *x, const struct tr_bn_plane *bn,
                                   const struct tr_layer *l, float *t)
{
    if (tr_maxpool2d_in_place(l))
        pool2_bn_forward(y, NULL, x, bn, l);
    else
        bn_forward_plane_parts(y, x, bn, l, t);
}

void tr_maxpool2d_bn_backward_plane(float *dx, const float *dy, const float *x,
                                    const float *y, const struct tr_bn_plane *bn,
                                    const struct tr_layer *l, float *t)
{
    bn_backward_plane_parts(dx, dy, x, y, bn, l, t);
}

static void pool2_backward_arg_plain(float *dx, const float *dy, const uint8_t *arg,
                                     const float *y, const struct tr_layer *l, int relu)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    unsigned oh, ow;
    size_t q;

    for (q = 0; q < (size_t)l->in_h * W; q++)
        dx[q] = 0.0f;
    for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++) {
            const unsigned a = arg[oh * OW + ow];
            const float m = y[oh * OW + ow];
            if (!relu || m > 0.0f)
                dx[(2u * oh + a / 2u) * W + 2u * ow + a % 2u] = dy[oh * OW + ow];
        }
}

void tr_maxpool2d_bn_forward_plane_arg(float *y, uint8_t *arg, const float *x,
                                       const struct tr_bn_plane *bn, const struct tr_layer *l,
                                       float *t)
{
    (void)t;
    pool2_bn_forward(y, arg, x, bn, l);
}

void tr_maxpool2d_backward_plane_arg(float *dx, const float *dy, const uint8_t *arg,
                                     const float *y, const struct tr_layer *l, int relu)
{
    pool2_backward_arg_plain(dx, dy, arg, y, l, relu);
}

/* a window's four elements +0, then dy at its argmax a (none if shut) */
static void window_route(float *d0, float *d1, unsigned a, float g)
{
    d0[0] = d0[1] = d1[0] = d1[1] = 0.0f;
    if (a < TR_POOL_SHUT)
        (a < 2u ? d0 : d1)[a & 1u] = g;
}

void tr_maxpool2d_bn_plane_keep(float *dx, float *y, uint8_t *arg, const float *x,
                                const float *dy, const struct tr_bn_plane *bnp,
                                const struct tr_layer *l)
{
    const struct tr_bn_plane bn = *bnp;   /* a local copy: stores cannot alias it */
    const size_t W = l->in_w;
    const unsigned OH = l->out_h, OW = l->out_w;
    unsigned oh, ow;

    for (oh = 0; oh < OH; oh++) {
        const float *x0 = x + 2u * oh * W;
        float *d0 = dx + 2u * oh * W;
        for (ow = 0; ow < OW; ow++, x0 += 2, d0 += 2) {
            const size_t q = (size_t)oh * OW + ow;
            size_t off;
            float m;
            const unsigned a = bn_window_max(&m, &off, x0, W, &bn);
            const int shut = bn.relu && !(m > 0.0f);
            if (y)
                y[q] = m;
            d0[0] = d0[1] = d0[W] = d0[W + 1] = 0.0f;
            arg[q] = (uint8_t)(shut ? TR_POOL_SHUT : a);
            d0[off] = shut ? 0.0f : dy[q];
        }
    }
    pool2_edges(dx, l);
}

void tr_maxpool2d_plane_route(float *dx, const float *dy, const uint8_t *arg,
                              const struct tr_layer *l)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    unsigned oh, ow;

    for (oh = 0; oh < OH; oh++) {
        float *d0 = dx + 2u * oh * W, *d1 = d0 + W;
        for (ow = 0; ow < OW; ow++, d0 += 2, d1 += 2)
            window_route(d0, d1, arg[oh * OW + ow], dy[oh * OW + ow]);
    }
    pool2_edges(dx, l);
}
#endif /* TR_HOST_VECTORS */
#endif

void tr_maxpool2d_backward_plane(float *dx, const float *dy, const float *x, const float *y,
                                 const struct tr_layer *l, int relu)
{
    const unsigned W = l->in_w, OH = l->out_h, OW = l->out_w;
    struct tr_layer one = *l;
    unsigned r, oh;

    if (!tr_maxpool2d_in_place(l) || dx != x) {
        one.in_c = one.out_c = 1;
        pool_backward(dx, dy, x, y, &one, 1, relu);
        return;
    }
    for (r = 0; r < POOL2_PASSES; r++)
        for (oh = r; oh < OH; oh += POOL2_PASSES) {
            float *t0 = dx + 2u * oh * W, *t1 = t0 + W;
            pool2_row_inplace(t0, t1, y + (size_t)oh * OW, dy + (size_t)oh * OW, OW, relu);
        }
    pool2_edges(dx, l);
}
