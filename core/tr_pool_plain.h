/* tinyring: the pool's 2x2 planes one window at a time (scalar FPU targets).
 * Included by tr_layer_pool.c alone, from its one #if that chooses the
 * 2x2 stride-2 rows and planes per target; not a header of its own. */
#ifndef TR_POOL_PLAIN_H
#define TR_POOL_PLAIN_H

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

#endif /* TR_POOL_PLAIN_H */
