/* tinyring: the lean plan's roles and fused stages.
 *
 * A block is a BatchNorm followed by [ReLU] MaxPool. Only the pool's output
 * is stored; everything else is made again one (sample, channel) plane at a
 * time from the BN's input (itself recomputed when it is a first conv's
 * output). Backward gets the pool's gradient plane, finds each window's
 * argmax on the recomputed plane, and writes the BN's input gradient over
 * the BN's input (a conv's output, which nothing reads again). A linear
 * after a block's pool (a stream) does not need that pool's output stored
 * either: it makes it again sample by sample, and its own input gradient is
 * made a plane at a time by the block's backward. Every float operation is
 * the fast plan's, in its order: the planes go through the same plane
 * kernels (tr_bn2d_plane_*, tr_maxpool2d_*, tr_conv2d_plane*). */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_plan.h"
#include "tr_layer_kernels.h"

/* ---- roles ---------------------------------------------------------- */

static unsigned kind(const struct tr_model *m, unsigned i)
{
    return i < m->n_layers ? m->layer[i].d.kind : 0u;
}

void tr_plan_roles(struct tr_model *m)
{
    unsigned i, p, s;

    const int lean = m->desc.plan == TR_PLAN_LEAN;

    for (i = 0; i < m->n_layers; i++)
        m->layer[i].role = TR_ROLE_LAYER;
    for (i = 0; i < m->n_layers; i++) {
        if (kind(m, i) != TR_LAYER_BATCHNORM2D)
            continue;
        p = kind(m, i + 1) == TR_LAYER_RELU ? i + 2 : i + 1;
        if (kind(m, p) != TR_LAYER_MAXPOOL2D)
            continue;
        m->layer[p].role = m->layer[p - 1].role = TR_ROLE_IN_BLOCK;
        m->layer[i].role = TR_ROLE_BLOCK;
        if (!lean)          /* the fast plan stores everything else */
            continue;
        if (i == 1 && kind(m, 0) == TR_LAYER_CONV2D)
            m->layer[0].role = TR_ROLE_RECOMPUTED;
        s = kind(m, p + 1) == TR_LAYER_FLATTEN ? p + 2 : p + 1;
        if (kind(m, s) == TR_LAYER_LINEAR) {
            m->layer[s].role = TR_ROLE_STREAM;
            if (s == p + 2)
                m->layer[p + 1].role = TR_ROLE_IN_BLOCK;
        }
    }
}

/* 1 if pool layer p of a block feeds a stream (its output is not stored) */
static int streams(const struct tr_model *m, unsigned p)
{
    unsigned s = kind(m, p + 1) == TR_LAYER_FLATTEN ? p + 2 : p + 1;
    return s < m->n_layers && m->layer[s].role == TR_ROLE_STREAM;
}

int tr_plan_stores(const struct tr_model *m, unsigned i)
{
    const struct tr_layer *l = &m->layer[i];

    if (m->desc.plan == TR_PLAN_FAST)   /* every output: the reference kernels need them */
        return l->d.kind != TR_LAYER_FLATTEN && !tr_model_relu_in_place(m, i);
    switch (l->role) {
    case TR_ROLE_LAYER:
        return l->d.kind != TR_LAYER_FLATTEN && !tr_model_relu_in_place(m, i);
    case TR_ROLE_IN_BLOCK:
        return l->d.kind == TR_LAYER_MAXPOOL2D && !streams(m, i);
    case TR_ROLE_STREAM:
        return 1;
    default:
        return 0;
    }
}

/* 1 if no backward reads layer j's output buffer once the layer after it
 * has run its backward, so that layer may write its input gradient there */
static int out_free(const struct tr_model *m, unsigned j)
{
    const struct tr_layer *l = &m->layer[j];

    switch (l->d.kind) {
    case TR_LAYER_FLATTEN:
        return l->role == TR_ROLE_LAYER && j > 0 && out_free(m, j - 1);
    case TR_LAYER_CONV2D:
    case TR_LAYER_LINEAR:
    case TR_LAYER_BATCHNORM2D:
        return l->role == TR_ROLE_LAYER || l->role == TR_ROLE_STREAM;
    case TR_LAYER_MAXPOOL2D:      /* a block's pool: the block recomputes */
        return l->role == TR_ROLE_IN_BLOCK && !streams(m, j);
    default:                      /* ReLU gates with its out, a pool compares */
        return 0;
    }
}

int tr_plan_dx(const struct tr_model *m, unsigned i, int layers)
{
    const struct tr_layer *l = &m->layer[i];
    const int lean = m->desc.plan == TR_PLAN_LEAN;

    if (i == 0)
        return TR_DX_NONE;
    switch (layers ? TR_ROLE_LAYER : l->role) {
    case TR_ROLE_BLOCK:
        if (m->layer[i - 1].role == TR_ROLE_RECOMPUTED)
            return TR_DX_NONE;
        return out_free(m, i - 1) ? TR_DX_IN_PLACE : TR_DX_DBUF;
    case TR_ROLE_LAYER:
        if (l->d.kind == TR_LAYER_FLATTEN)
            return TR_DX_PASS;
        if (lean && l->d.kind == TR_LAYER_CONV2D && out_free(m, i - 1))
            return TR_DX_IN_PLACE;
        return TR_DX_DBUF;
    default:
        return TR_DX_NONE;
    }
}

/* ---- a block's layers ----------------------------------------------- */

struct blk {
    const struct tr_layer *conv;   /* the recomputed first conv, or NULL */
    const struct tr_layer *bn, *pool, *lin;  /* lin: the stream after, or NULL */
    struct tr_layer one;           /* the pool seen as one plane (C = 1) */
    int relu;
    int keeps;                     /* the lean backward keeps its windows (blk_kept) */
    int one_plane;                 /* the recomputed conv's planes: one plane,
                                    * made again by every pass (TR_MODEL_ONE_PLANE
                                    * at batch > 1), else one per sample, made once */
    unsigned C;
    size_t hw, ohw;                /* BN plane, pool plane */
    const float *src;              /* the BN's input when stored (n, C, H, W) */
};

static void blk_get(struct blk *k, const struct tr_model *m, unsigned b, const float *x)
{
    unsigned p = kind(m, b + 1) == TR_LAYER_RELU ? b + 2 : b + 1;
    unsigned s = kind(m, p + 1) == TR_LAYER_FLATTEN ? p + 2 : p + 1;

    k->bn = &m->layer[b];
    k->pool = &m->layer[p];
    k->relu = p == b + 2;
    k->conv = b == 1 && m->layer[0].role == TR_ROLE_RECOMPUTED ? &m->layer[0] : NULL;
    k->lin = s < m->n_layers && m->layer[s].role == TR_ROLE_STREAM ? &m->layer[s] : NULL;
    k->C = k->bn->in_c;
    k->hw = (size_t)k->bn->in_h * k->bn->in_w;
    k->ohw = (size_t)k->pool->out_h * k->pool->out_w;
    k->one = *k->pool;
    k->one.in_c = k->one.out_c = 1;
    k->src = b == 0 ? x : m->layer[b - 1].out;
    k->keeps = m->desc.plan == TR_PLAN_LEAN && tr_maxpool2d_in_place(k->pool);
    k->one_plane = k->conv && (m->opts & TR_MODEL_ONE_PLANE) && m->batch > 1;
}

/* floats of the recomputed conv's plane buffer at batch */
static size_t blk_planes_floats(const struct blk *k, unsigned batch)
{
    return k->conv ? (k->one_plane ? 1u : (size_t)batch) * k->hw : 0;
}

/* floats of plane temporaries a block's backward needs beyond its input */
static size_t blk_temps(const struct blk *k)
{
    return k->hw + k->ohw + (tr_maxpool2d_in_place(k->pool) ? 0 : k->hw) +
           (k->lin && !k->keeps ? k->ohw : 0);
}

/* floats of what a keeping block's backward keeps of a channel's planes
 * from its first pass to its second: with a stream, the pool's gradient
 * planes (the stream's input gradient), then the windows' argmax bytes */
static size_t blk_kept_floats(const struct blk *k, unsigned batch)
{
    const size_t w = (size_t)batch * k->ohw;

    return k->keeps ? (k->lin ? w : 0) + (w + sizeof(float) - 1) / sizeof(float) : 0;
}

/* floats of the region the planes' temporaries and a padded sample share */
static size_t blk_union(const struct blk *k)
{
    const size_t t = blk_temps(k), pad = k->conv ? tr_conv2d_pad_floats(k->conv) : 0;

    return pad > t ? pad : t;
}

size_t tr_plan_block_floats(const struct tr_model *m, unsigned b, unsigned batch)
{
    struct blk k;

    blk_get(&k, m, b, NULL);
    return blk_planes_floats(&k, batch) + blk_union(&k) + blk_kept_floats(&k, batch);
}

static unsigned stream_block(const struct tr_model *m, unsigned i)
{
    unsigned p = kind(m, i - 1) == TR_LAYER_FLATTEN ? i - 2 : i - 1;
    return kind(m, p - 1) == TR_LAYER_RELU ? p - 2 : p - 1;
}

size_t tr_plan_stream_floats(const struct tr_model *m, unsigned i)
{
    struct blk k;

    blk_get(&k, m, stream_block(m, i), NULL);
    return (size_t)m->layer[i].in_c + k.hw + (k.conv ? k.hw + tr_conv2d_pad_floats(k.conv) : 0);
}

/* The BN's input plane (i, c): stored, or the first conv's output plane
 * computed into dst from sample i padded into xpad. */
static const float *blk_plane(const struct tr_model *m, const struct blk *k, const float *x,
                              unsigned i, unsigned c, float *dst, float *xpad)
{
    const struct tr_layer *cv = k->conv;
    size_t kk;

    if (cv == NULL)
        return k->src + ((size_t)i * k->C + c) * k->hw;
    kk = (size_t)cv->in_c * cv->d.kernel * cv->d.kernel;
    tr_conv2d_pad(xpad, x + (size_t)i * cv->in_c * cv->in_h * cv->in_w, cv);
    tr_conv2d_plane(dst, xpad, m->params + cv->p_off + c * kk,
                    m->params[cv->p_off + cv->p_len - cv->out_c + c], cv);
    return dst;
}

/* channel c's normalisation: the batch's (save) in training, else the
 * running statistics' */
static void blk_stats(const struct tr_model *m, const struct blk *k, unsigned c, int train,
                      float *mean, float *invstd)
{
    if (train) {
        *mean = k->bn->save[c];
        *invstd = k->bn->save[k->C + c];
    } else {
        const float *run = m->buffers + k->bn->b_off;
        *mean = run[c];
        *invstd = tr_bn2d_eval_invstd(run[k->C + c]);
    }
}

/* channel c's BN map for the plane kernels */
static void blk_bn(struct tr_bn_plane *p, const struct tr_model *m, const struct blk *k,
                   unsigned c, float mean, float invstd)
{
    const float *gb = m->params + k->bn->p_off;

    p->mean = mean;
    p->invstd = invstd;
    p->g = gb[c];
    p->b = gb[k->C + c];
    p->relu = k->relu;
}

/* pool output plane y (OH, OW) of input plane pl, t (hw) its scratch
 * (the lean plan's and evaluation's form) */
static void blk_pool_plane(float *y, float *t, const float *pl, const struct tr_model *m,
                           const struct blk *k, unsigned c, float mean, float invstd)
{
    struct tr_bn_plane bp;

    blk_bn(&bp, m, k, c, mean, invstd);
    tr_maxpool2d_bn_forward_plane(y, pl, &bp, &k->one, t);
}

/* ---- block forward --------------------------------------------------- */

/* Scratch of a block: [the recomputed conv's planes of one channel, batch
 * of them, or one (one_plane)] then a region that holds the padded sample
 * while a conv plane is made, else the plane temporaries t (hw), yp (ohw),
 * dyb (hw, unless the pool's gradient can be written over t) and gp (ohw,
 * with a stream, unless kept); then what a keeping backward keeps
 * (blk_kept_floats). */
static float *blk_region(const struct tr_model *m, const struct blk *k)
{
    return m->scratch + blk_planes_floats(k, m->batch);
}

/* where the recomputed conv's plane of sample i is made */
static float *blk_cbuf(const struct tr_model *m, const struct blk *k, unsigned i)
{
    return m->scratch + (k->one_plane ? 0 : (size_t)i * k->hw);
}

/* the BN's input plane (i, c) for a pass after the first: the stored input,
 * the recomputed conv's plane the first pass made, or (one_plane) made again */
static const float *blk_plane_again(const struct tr_model *m, const struct blk *k,
                                    const float *x, unsigned i, unsigned c, float *reg)
{
    if (k->conv == NULL)
        return blk_plane(m, k, x, i, c, NULL, NULL);
    if (!k->one_plane)
        return blk_cbuf(m, k, i);
    return blk_plane(m, k, x, i, c, blk_cbuf(m, k, i), reg);
}

/* sample i's kept pool gradient plane (with a stream) and argmax bytes */
static float *blk_kept_grad(const struct tr_model *m, const struct blk *k, unsigned i)
{
    return blk_region(m, k) + blk_union(k) + (size_t)i * k->ohw;
}

static uint8_t *blk_kept_args(const struct tr_model *m, const struct blk *k, unsigned i)
{
    const size_t grads = k->lin ? (size_t)m->batch * k->ohw : 0;

    return (uint8_t *)(void *)(blk_region(m, k) + blk_union(k) + grads) + (size_t)i * k->ohw;
}

/* 1 if the block's planes are all stored and its pool's output too (the
 * fast plan, no recomputed conv, no stream): then its passes go sample by
 * sample through the batch's planes (in memory order) instead of channel by
 * channel; every per-channel sum still adds its planes in sample order */
static int by_samples(const struct tr_model *m, const struct blk *k)
{
    return m->desc.plan == TR_PLAN_FAST && k->conv == NULL && k->lin == NULL;
}

/* 1 if a by_samples block keeps its windows' argmax (a byte each, in the
 * BN's output buffer, which the fast plan lays out and the block otherwise
 * leaves unwritten): 2x2 stride-2 pools. Its backward then routes the
 * pool's gradient from them, without making the BN plane again; else it
 * makes the plane again and keeps each plane's dy in that buffer. */
static int args(const struct blk *k)
{
    return tr_maxpool2d_in_place(k->pool);
}

static uint8_t *blk_args(const struct blk *k)
{
    return (uint8_t *)(void *)k->bn->out;
}

/* Ask for plane pi's pool output and argmax bytes (and with dy, the pool's
 * gradient) to come into the cache, for writing (wr) or reading: the pool's
 * kernels waited for them, plane after plane (the BN's input planes, read
 * in one long stream, the hardware fetches ahead by itself) */
static void plane_prefetch(const struct blk *k, size_t pi, const float *dy, int wr)
{
    size_t j;

    for (j = 0; j < k->ohw; j += 16) {
        if (dy)
            __builtin_prefetch(dy + pi * k->ohw + j);
        if (wr)
            __builtin_prefetch(k->pool->out + pi * k->ohw + j, 1);
        else
            __builtin_prefetch(k->pool->out + pi * k->ohw + j);
    }
    for (j = 0; args(k) && j < k->ohw; j += 64) {
        if (wr)
            __builtin_prefetch(blk_args(k) + pi * k->ohw + j, 1);
        else
            __builtin_prefetch(blk_args(k) + pi * k->ohw + j);
    }
}

/* The training forward of a by_samples block: save[] holds the running sums
 * (the mean's, then the squared deviations') until tr_bn2d_finish. */
static void block_forward_samples(struct tr_model *m, const struct blk *k, unsigned n)
{
    const float cnt = (float)((size_t)n * k->hw);
    float *save = k->bn->save, *reg = blk_region(m, k);
    const float *pl = k->src;
    unsigned c, i;

    for (c = 0; c < 2 * k->C; c++)
        save[c] = 0.0f;
    for (i = 0; i < n; i++)
        for (c = 0; c < k->C; c++, pl += k->hw)
            save[c] += tr_sum_lanes16(pl, k->hw);
    for (c = 0; c < k->C; c++)
        save[c] = save[c] / cnt;
    for (i = 0, pl = k->src; i < n; i++)
        for (c = 0; c < k->C; c++, pl += k->hw)
            save[k->C + c] += tr_bn2d_plane_sqdev(pl, k->hw, save[c]);
    for (c = 0; c < k->C; c++)
        tr_bn2d_finish(save, m->buffers + k->bn->b_off, k->C, c, save[c], save[k->C + c], cnt);
    for (i = 0, pl = k->src; i < n; i++)
        for (c = 0; c < k->C; c++, pl += k->hw) {
            const size_t pi = (size_t)i * k->C + c;
            struct tr_bn_plane bp;
            if (pi + 2 < (size_t)n * k->C)
                plane_prefetch(k, pi + 2, NULL, 1);
            blk_bn(&bp, m, k, c, save[c], save[k->C + c]);
            if (args(k))    /* each window's argmax kept for the backward */
                tr_maxpool2d_bn_forward_plane_arg(k->pool->out + pi * k->ohw,
                                                  blk_args(k) + pi * k->ohw, pl, &bp,
                                                  &k->one, reg);
            else
                tr_maxpool2d_bn_forward_plane(k->pool->out + pi * k->ohw, pl, &bp, &k->one,
                                              reg);
        }
}

void tr_plan_block_forward(struct tr_model *m, unsigned b, const float *x, unsigned n,
                           int train)
{
    struct blk k;
    float *reg;
    unsigned c, i;

    blk_get(&k, m, b, x);
    reg = blk_region(m, &k);
    if (train && by_samples(m, &k)) {
        block_forward_samples(m, &k, n);
        return;
    }
    for (c = 0; c < k.C; c++) {
        float mean, invstd;
        if (train) {
            const float cnt = (float)((size_t)n * k.hw);
            float sum = 0.0f, sq = 0.0f;
            for (i = 0; i < n; i++)
                sum += tr_sum_lanes16(blk_plane(m, &k, x, i, c, blk_cbuf(m, &k, i), reg), k.hw);
            mean = sum / cnt;
            for (i = 0; i < n; i++)
                sq += tr_bn2d_plane_sqdev(blk_plane_again(m, &k, x, i, c, reg), k.hw, mean);
            tr_bn2d_finish(k.bn->save, m->buffers + k.bn->b_off, k.C, c, mean, sq, cnt);
        }
        if (k.lin)          /* the stream makes the pool's output when it reads it */
            continue;
        blk_stats(m, &k, c, train, &mean, &invstd);
        for (i = 0; i < n; i++) {
            const float *pl = train ? blk_plane_again(m, &k, x, i, c, reg)
                                    : blk_plane(m, &k, x, i, c, m->scratch, reg);
            blk_pool_plane(k.pool->out + ((size_t)i * k.C + c) * k.ohw, reg, pl, m, &k, c,
                           mean, invstd);
        }
    }
}

/* ---- block backward -------------------------------------------------- */

/* Eight named values j = 0..7 (a scalar FPU keeps them in registers; an
 * array stays in memory at -O2 on the Cortex-M4F) */
#define L8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define SUM0(j) float s##j = 0.0f;
#define SUM_ADD(j) s##j += g * wo[j];
#define SUM_PUT(j) gp[q + j] = s##j;
#define YP_GET(j) const float y##j = yp[q + j];
#define ROW_ADD(j) row[j] += g * y##j;

/* gp (ohw) = the stream's input gradient for plane (i, c): from +0, adding
 * sdy[i][o] * w[o][c*ohw + q] for o ascending (tr_linear_backward's dx),
 * eight positions' sums at a time */
static void stream_grad(float *gp, const struct tr_model *m, const struct blk *k,
                        const float *sdy, unsigned i, unsigned c)
{
    const size_t in = k->lin->in_c, out = k->lin->out_c;
    const float *w = m->params + k->lin->p_off + (size_t)c * k->ohw, *dyi = sdy + i * out;
    size_t q = 0, o;

    for (; q + 8 <= k->ohw; q += 8) {
        const float *wo = w + q;
        L8(SUM0)
        for (o = 0; o < out; o++, wo += in) {
            const float g = dyi[o];
            L8(SUM_ADD)
        }
        L8(SUM_PUT)
    }
    for (; q < k->ohw; q++) {
        float s = 0.0f;
        for (o = 0; o < out; o++)
            s += dyi[o] * w[o * in + q];
        gp[q] = s;
    }
}

/* the stream's weight gradient from sample i's pool output plane yp of
 * channel c: dw[o][c*ohw + q] adds sdy[i][o] * yp[q], eight positions at a
 * time. The block's first pass takes the samples in order, so each
 * weight's sum runs over them in order from +0 (tr_linear_backward's dw;
 * tr_plan_stream_backward zeroed dw) */
static void stream_dw(struct tr_model *m, const struct blk *k, const float *yp,
                      const float *sdy, unsigned i, unsigned c)
{
    const size_t in = k->lin->in_c, out = k->lin->out_c;
    float *dw = tr_plan_grad(m, k->lin) + (size_t)c * k->ohw;
    const float *dyi = sdy + i * out;
    size_t q = 0, o;

    for (; q + 8 <= k->ohw; q += 8) {
        float *row = dw + q;
        L8(YP_GET)
        for (o = 0; o < out; o++, row += in) {
            const float g = dyi[o];
            L8(ROW_ADD)
        }
    }
    for (; q < k->ohw; q++)
        for (o = 0; o < out; o++)
            dw[o * in + q] += dyi[o] * yp[q];
}
#undef L8
#undef SUM0
#undef SUM_ADD
#undef SUM_PUT
#undef YP_GET
#undef ROW_ADD

/* The gradient w.r.t. the BN's output plane (i, c) from input plane pl:
 * the BN plane's values made again (window by window where the block keeps
 * its windows, else in t), the pool's output too, its gradient routed to
 * each window's argmax through the ReLU's gate. The first pass
 * (first) also adds the stream's weight gradient and, where the block
 * keeps its windows, keeps the argmax bytes and the stream's gradient for
 * the second pass (blk_dy_kept). */
static const float *blk_dy(struct tr_model *m, const struct blk *k, const float *pl,
                           unsigned i, unsigned c, const float *dy, const float *sdy,
                           float *reg, int first)
{
    const int inpl = tr_maxpool2d_in_place(k->pool);
    float *t = reg, *yp = t + k->hw, *dyb = inpl ? t : yp + k->ohw;
    float *gp = k->keeps ? blk_kept_grad(m, k, i) : inpl ? yp + k->ohw : dyb + k->hw;
    const float *g = dy ? dy + ((size_t)i * k->C + c) * k->ohw : gp;
    struct tr_bn_plane bp;

    blk_bn(&bp, m, k, c, k->bn->save[c], k->bn->save[k->C + c]);
    if (dy == NULL)
        stream_grad(gp, m, k, sdy, i, c);
    if (k->keeps && first) {
        tr_maxpool2d_bn_plane_keep(dyb, k->lin ? yp : NULL, blk_kept_args(m, k, i), pl, g, &bp,
                                   &k->one);
    } else {
        tr_bn2d_plane_apply(t, pl, k->hw, bp.mean, bp.invstd, bp.g, bp.b, bp.relu);
        tr_maxpool2d_forward(yp, t, &k->one, 1);
        tr_maxpool2d_backward_plane(dyb, g, t, yp, k->pool, k->relu);
    }
    if (k->lin && first)
        stream_dw(m, k, yp, sdy, i, c);
    return dyb;
}

/* the second pass's gradient plane (i, c) of a keeping block: routed into
 * reg from the kept argmax bytes */
static const float *blk_dy_kept(const struct tr_model *m, const struct blk *k, unsigned i,
                                unsigned c, const float *dy, float *reg)
{
    const float *g = dy ? dy + ((size_t)i * k->C + c) * k->ohw : blk_kept_grad(m, k, i);

    tr_maxpool2d_plane_route(reg, g, blk_kept_args(m, k, i), &k->one);
    return reg;
}

/* The recomputed conv's weight and bias gradient for output channel c:
 * zeroed, then sample i's added from its BN input gradient plane dxc (hw),
 * right after the plane is made: the samples in order, so each weight's sum
 * runs over them as one loop over the batch's planes would. */
static void conv_grads_zero(struct tr_model *m, const struct blk *k, unsigned c)
{
    const struct tr_layer *cv = k->conv;
    const size_t kk = (size_t)cv->in_c * cv->d.kernel * cv->d.kernel;
    float *g = tr_plan_grad(m, cv), *dw = g + c * kk;
    size_t j;

    for (j = 0; j < kk; j++)
        dw[j] = 0.0f;
    g[cv->p_len - cv->out_c + c] = 0.0f;
}

static void conv_grads_add(struct tr_model *m, const struct blk *k, const float *x, unsigned i,
                           unsigned c, const float *dxc, float *xpad)
{
    const struct tr_layer *cv = k->conv;
    const size_t kk = (size_t)cv->in_c * cv->d.kernel * cv->d.kernel;
    const size_t xs = (size_t)cv->in_c * cv->in_h * cv->in_w;
    float *g = tr_plan_grad(m, cv);

    tr_conv2d_pad(xpad, x + i * xs, cv);
    tr_conv2d_plane_dw(g + c * kk, xpad, dxc, cv);
    g[cv->p_len - cv->out_c + c] += tr_sum_lanes16(dxc, k->hw);
}

/* copy hw floats of plane src to dst; returns dst */
static const float *plane_copy(float *restrict dst, const float *restrict src, size_t hw)
{
    size_t j;
    for (j = 0; j < hw; j++)
        dst[j] = src[j];
    return dst;
}

/* 1 if the fast plan's block still has its pool's output when its backward
 * runs: the layers after it wrote no gradient over it (a block after it
 * writes its dx in place there) */
static int pool_kept(const struct tr_model *m, const struct blk *k, const float *dy)
{
    unsigned q = (unsigned)(k->pool - m->layer) + 1;

    if (m->desc.plan != TR_PLAN_FAST || dy == NULL)
        return 0;
    if (kind(m, q) == TR_LAYER_FLATTEN)
        q++;
    return q >= m->n_layers || tr_plan_dx(m, q, 0) != TR_DX_IN_PLACE;
}

/* the BN output gradient of plane pi (channel c, input plane pl): routed
 * from the windows' argmax into reg, or made with the plane again into
 * the BN's output buffer (kept there for the second pass) */
static const float *blk_dy_samples(const struct tr_model *m, const struct blk *k, size_t pi,
                                   unsigned c, const float *dy, const float *pl, float *reg)
{
    struct tr_bn_plane bp;
    float *cache = k->bn->out + pi * k->hw;

    if (args(k)) {
        tr_maxpool2d_backward_plane_arg(reg, dy + pi * k->ohw, blk_args(k) + pi * k->ohw,
                                        k->pool->out + pi * k->ohw, k->pool, k->relu);
        return reg;
    }
    blk_bn(&bp, m, k, c, k->bn->save[c], k->bn->save[k->C + c]);
    tr_maxpool2d_bn_backward_plane(cache, dy + pi * k->ohw, pl, k->pool->out + pi * k->ohw, &bp,
                                   k->pool, reg);
    return cache;
}

/* The backward of a by_samples block whose pool output is kept: dgb holds
 * the running dgamma and dbeta sums; dy planes in the BN's output buffer */
static void block_backward_samples(struct tr_model *m, const struct blk *k, unsigned n,
                                   const float *dy, float *dx)
{
    const float cnt = (float)((size_t)n * k->hw), *save = k->bn->save;
    const float *gb = m->params + k->bn->p_off, *pl = k->src;
    float *dgb = tr_plan_grad(m, k->bn), *cache = k->bn->out, *reg = blk_region(m, k);
    unsigned c, i;
    size_t pi;

    for (c = 0; c < 2 * k->C; c++)
        dgb[c] = 0.0f;
    for (i = 0, pi = 0; i < n; i++)
        for (c = 0; c < k->C; c++, pi++, pl += k->hw) {
            const float *d;
            float sb, sg;
            if (pi + 2 < (size_t)n * k->C)
                plane_prefetch(k, pi + 2, dy, 0);
            d = blk_dy_samples(m, k, pi, c, dy, pl, reg);
            tr_bn2d_plane_dsums(&sb, &sg, d, pl, k->hw, save[c], save[k->C + c]);
            dgb[k->C + c] += sb;
            dgb[c] += sg;
        }
    if (dx == NULL)
        return;
    for (i = 0, pi = 0, pl = k->src; i < n; i++)
        for (c = 0; c < k->C; c++, pi++, pl += k->hw) {
            const float invstd = save[k->C + c], kc = gb[c] * invstd / cnt;
            const float *d = cache + pi * k->hw;
            if (pi + 2 < (size_t)n * k->C)
                plane_prefetch(k, pi + 2, dy, 0);
            if (args(k)) {      /* routed again: a few bytes read, not a plane */
                tr_maxpool2d_backward_plane_arg(reg, dy + pi * k->ohw, blk_args(k) + pi * k->ohw,
                                                k->pool->out + pi * k->ohw, k->pool, k->relu);
                d = reg;
            }
            tr_bn2d_plane_dx(dx + pi * k->hw, d, pl, k->hw, save[c], invstd, kc, cnt,
                             dgb[k->C + c], dgb[c]);
        }
}

void tr_plan_block_backward(struct tr_model *m, unsigned b, const float *x, unsigned n,
                            const float *dy, const float *sdy, float *dx)
{
    struct blk k;
    float *reg, *cache;
    const float *gb = m->params + m->layer[b].p_off;
    float *dgb = tr_plan_grad(m, &m->layer[b]);
    unsigned c, i;
    int kept;

    blk_get(&k, m, b, x);
    reg = blk_region(m, &k);
    kept = pool_kept(m, &k, dy);
    if (kept && by_samples(m, &k)) {
        block_backward_samples(m, &k, n, dy, dx);
        return;
    }
    /* the fast plan lays out the BN's output, which its blocks never write:
     * the first pass keeps each plane's dy there instead of making it again;
     * where its pool's output is still there (kept), the pool is not made
     * again either */
    cache = m->desc.plan == TR_PLAN_FAST ? k.bn->out : NULL;
    for (c = 0; c < k.C; c++) {
        const float mean = k.bn->save[c], invstd = k.bn->save[k.C + c];
        const float cnt = (float)((size_t)n * k.hw);
        float dbeta = 0.0f, dgamma = 0.0f, kc;
        for (i = 0; i < n; i++) {
            const size_t pi = (size_t)i * k.C + c;
            const float *pl = blk_plane(m, &k, x, i, c, blk_cbuf(m, &k, i), reg);
            const float *d;
            float sb, sg;
            if (kept) {         /* the pool's output read, dy made in the cache */
                struct tr_bn_plane bp;
                blk_bn(&bp, m, &k, c, mean, invstd);
                tr_maxpool2d_bn_backward_plane(cache + pi * k.hw, dy + pi * k.ohw, pl,
                                               k.pool->out + pi * k.ohw, &bp, k.pool, reg);
                d = cache + pi * k.hw;
            } else {
                d = blk_dy(m, &k, pl, i, c, dy, sdy, reg, 1);
                if (cache)      /* kept for the second pass */
                    d = plane_copy(cache + pi * k.hw, d, k.hw);
            }
            tr_bn2d_plane_dsums(&sb, &sg, d, pl, k.hw, mean, invstd);
            dbeta += sb;
            dgamma += sg;
        }
        dgb[c] = dgamma;
        dgb[k.C + c] = dbeta;
        if (dx == NULL && k.conv == NULL)
            continue;
        kc = gb[c] * invstd / cnt;
        if (k.conv)
            conv_grads_zero(m, &k, c);
        for (i = 0; i < n; i++) {
            const float *pl = blk_plane_again(m, &k, x, i, c, reg);
            float *dst = k.conv ? blk_cbuf(m, &k, i) : dx + ((size_t)i * k.C + c) * k.hw;
            const float *d = cache    ? cache + ((size_t)i * k.C + c) * k.hw
                           : k.keeps ? blk_dy_kept(m, &k, i, c, dy, reg)
                                     : blk_dy(m, &k, pl, i, c, dy, sdy, reg, 0);
            tr_bn2d_plane_dx(dst, d, pl, k.hw, mean, invstd, kc, cnt, dbeta, dgamma);
            if (k.conv)         /* dst: now the conv output's gradient */
                conv_grads_add(m, &k, x, i, c, dst, reg);
        }
    }
}

/* ---- stream: a linear reading a block's pool ------------------------- */

/* xl (IN) = the block's pool output of sample s, all channels */
static void stream_input(float *xl, struct tr_model *m, const struct blk *k, const float *x,
                         unsigned s, int train)
{
    float *t = xl + k->lin->in_c, *pbuf = t + k->hw, *xpad = pbuf + k->hw;
    unsigned c;

    for (c = 0; c < k->C; c++) {
        float mean, invstd;
        blk_stats(m, k, c, train, &mean, &invstd);
        blk_pool_plane(xl + c * k->ohw, t, blk_plane(m, k, x, s, c, pbuf, xpad), m, k, c,
                       mean, invstd);
    }
}

void tr_plan_stream_forward(struct tr_model *m, unsigned i, const float *x, unsigned n,
                            int train)
{
    const struct tr_layer *l = &m->layer[i];
    const float *w = m->params + l->p_off, *bias = w + (l->p_len - l->out_c);
    struct blk k;
    unsigned s;

    blk_get(&k, m, stream_block(m, i), x);
    for (s = 0; s < n; s++) {
        stream_input(m->scratch, m, &k, x, s, train);
        tr_linear_forward(l->out + (size_t)s * l->out_c, m->scratch, w, bias, l, 1);
    }
}

/* The stream's bias gradient, db[o] adding dy[s][o] for the samples in
 * order (tr_linear_backward's), and its weight gradient zeroed: the block's
 * backward, which makes the pool's output planes again anyway, adds each
 * one's products (stream_dw) */
void tr_plan_stream_backward(struct tr_model *m, unsigned i, unsigned n, const float *dy)
{
    const struct tr_layer *l = &m->layer[i];
    const size_t in = l->in_c, out = l->out_c;
    float *dw = tr_plan_grad(m, l), *db = dw + out * in;
    size_t o, j;
    unsigned s;

    for (j = 0; j < out * in + out; j++)
        dw[j] = 0.0f;
    for (s = 0; s < n; s++)
        for (o = 0; o < out; o++)
            db[o] += dy[(size_t)s * out + o];
}
