/* tinyring: the pool's 2x2 rows and planes with AVX-512 (BW, VL), 16 windows a chunk.
 * Included by tr_layer_pool.c alone, from its one #if that chooses the
 * 2x2 stride-2 rows and planes per target; not a header of its own. */
#ifndef TR_POOL_AVX512_H
#define TR_POOL_AVX512_H

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

#endif /* TR_POOL_AVX512_H */
