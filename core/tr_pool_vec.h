/* tinyring: the pool's 2x2 planes on vector hosts without AVX-512 (AVX2, SSE2,
 * NEON), TR_VL windows a chunk.
 * Included by tr_layer_pool.c alone, from its one #if that chooses the
 * 2x2 stride-2 rows and planes per target; not a header of its own. */
#ifndef TR_POOL_VEC_H
#define TR_POOL_VEC_H

/* ---- vector hosts without AVX-512 (AVX2, SSE2, NEON): TR_VL windows at a
 * time, the shape of the AVX-512 chunks (tr_pool_avx512.h) in host vectors. A row
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
#include <immintrin.h>   /* the masked loads and stores, AVX2's byte widening */
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

/* the argmax bytes of nw windows, and back. Where TR_VL bytes may be read
 * (avail: the bytes from p to the plane's end) they are loaded at once and
 * widened into the int32 lanes in registers (bytes_widen: AVX2's zero
 * extension, else 32-bit words shifted and masked per lane), the lanes past
 * nw unused; else lane by lane. A whole chunk's bytes are picked from the
 * lanes by a shuffle and stored at once. (Lane by lane, or by GCC's
 * generic conversions or shuffles between the widths, the bytes went to
 * the stack in pieces and came back as one vector, which waited for the
 * pieces: a third of the AVX2 routing's time.) */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tr_pool_vec.h: the argmax bytes' words and shuffles take little-endian lanes"
#endif
typedef uint8_t pool_u8 __attribute__((vector_size(TR_VL)));
typedef uint8_t pool_u8x4 __attribute__((vector_size(4 * TR_VL)));
#if TR_VL == 16
#define POOL_NARROW 0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60
#elif TR_VL == 8
#define POOL_NARROW 0, 4, 8, 12, 16, 20, 24, 28
#else
#define POOL_NARROW 0, 4, 8, 12
#endif

/* the TR_VL bytes at p in the lanes' low bytes, zero-extended */
#if defined(__AVX2__) && TR_VL == 8
static inline tr_vil bytes_widen(const uint8_t *p)
{
    return (tr_vil)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}
#else
static inline tr_vil bytes_widen(const uint8_t *p)
{
    uint32_t w[TR_VL / 4];
    tr_vil v, sh;
    unsigned j;

    __builtin_memcpy(w, p, TR_VL);
    for (j = 0; j < TR_VL; j++) {
        v[j] = (int32_t)w[j / 4];
        sh[j] = (int32_t)(8u * (j % 4u));
    }
    return (v >> sh) & 0xff;
}
#endif

static inline tr_vil bytes_load(const uint8_t *p, unsigned nw, size_t avail)
{
    tr_vil v = {0};
    unsigned j;

    if (avail >= TR_VL)
        return bytes_widen(p);
    for (j = 0; j < nw; j++)
        v[j] = p[j];
    return v;
}

static inline void bytes_store(uint8_t *p, tr_vil v, unsigned nw)
{
    unsigned j;

    if (nw >= TR_VL) {
        const pool_u8x4 w = (pool_u8x4)v;
        const pool_u8 b = __builtin_shufflevector(w, w, POOL_NARROW);
        __builtin_memcpy(p, &b, TR_VL);
        return;
    }
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
            const tr_vil a = bytes_load(arg + q, nw, (size_t)OH * OW - q);
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
                a = bytes_load(kept + q, nw, (size_t)OH * OW - q);
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

#endif /* TR_POOL_VEC_H */
