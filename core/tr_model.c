/* tinyring: model description, validation, arena layout, init, layout hash.
 *
 * One function, layout(), resolves the shapes and carves the arena; the
 * size query runs it on a measuring arena, init on the caller's buffer, so
 * the two cannot disagree. Arena order (each piece TR_ARENA_ALIGN-rounded):
 *   params | grads | momentum | buffers | dlogits |
 *   per layer: out (not flatten, nor a ReLU after conv/BN/linear: those
 *   alias their input), save (BN only) |
 *   dbuf[0] | dbuf[1] | scratch
 */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_model.h"
#include "tr_arena.h"
#include "tr_error.h"
#include "tr_math.h"
#include "tr_rng.h"
#include "tr_layer_kernels.h"
#include "tr_util.h"
#include "tr_plan.h"

void tr_model_desc_convnet(struct tr_model_desc *d, unsigned c1, unsigned c2,
                           unsigned classes)
{
    static const uint8_t kinds[10] = {
        TR_LAYER_CONV2D, TR_LAYER_BATCHNORM2D, TR_LAYER_RELU, TR_LAYER_MAXPOOL2D,
        TR_LAYER_CONV2D, TR_LAYER_BATCHNORM2D, TR_LAYER_RELU, TR_LAYER_MAXPOOL2D,
        TR_LAYER_FLATTEN, TR_LAYER_LINEAR
    };
    unsigned i;

    for (i = 0; i < TR_MAX_LAYERS; i++) {
        struct tr_layer_desc z = {0, 0, 0, 0, 0};
        d->layer[i] = z;
    }
    d->in_c = 1;
    d->in_h = 28;
    d->in_w = 28;
    d->n_layers = 10;
    d->plan = TR_PLAN_FAST;
    for (i = 0; i < 10; i++)
        d->layer[i].kind = kinds[i];
    for (i = 0; i < 2; i++) {
        struct tr_layer_desc *conv = &d->layer[4 * i], *pool = &d->layer[4 * i + 3];
        conv->kernel = 5;
        conv->stride = 1;
        conv->pad = 2;
        conv->out = (uint16_t)(i == 0 ? c1 : c2);
        pool->kernel = 2;
        pool->stride = 2;
    }
    d->layer[9].out = (uint16_t)classes;
}

/* The buckets (tr_model.h, docs/BUCKETS.md): a head is a layer with
 * parameters that is not a BN; bucket b is the (heads - 1 - b)-th head's
 * parameters up to the next head's, so a BN goes with the head before it
 * (and a BN before every head with the first). done_at is the lowest layer
 * of the bucket; tr_model.c's layout lowers it for the lean plan's stream
 * (its weight gradient is made by the block before it). */
/* The float guard's run-time half (tr_config.h): a multiply-add whose fused
 * result (2^-24) differs from the two-rounding one (0), compiled with this
 * file's flags. Where the compiler fused it in spite of the pragma (an
 * explicit -ffp-contract=fast in an ISO dialect with GCC, or with Clang),
 * core's other multiply-adds may be fused too. */
static int fuses_multiply_add(void)
{
    volatile float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
    float x = a, y = c;
    return x * x + y != 0.0f;
}

static void cut_buckets(struct tr_model *m)
{
    unsigned head[TR_MAX_LAYERS], nh = 0, i, b;

    for (i = 0; i < m->n_layers; i++) {
        m->layer[i].bucket = -1;
        if (m->layer[i].p_len > 0 && m->layer[i].d.kind != TR_LAYER_BATCHNORM2D)
            head[nh++] = i;
    }
    m->n_buckets = 0;
    if (m->n_params == 0)
        return;
    if (nh == 0)
        head[nh++] = 0;          /* BN parameters only: one bucket */
    for (b = 0; b < nh; b++) {
        unsigned h = nh - 1u - b;
        struct tr_bucket *k = &m->bucket[b];
        k->lo = h == 0 ? 0 : m->layer[head[h]].p_off;
        k->hi = b == 0 ? m->n_params : m->layer[head[h + 1u]].p_off;
        k->done_at = m->n_layers;
    }
    m->n_buckets = nh;
    for (i = 0; i < m->n_layers; i++) {
        struct tr_layer *l = &m->layer[i];
        if (l->p_len == 0)
            continue;
        for (b = 0; b < nh; b++)
            if (l->p_off >= m->bucket[b].lo && l->p_off < m->bucket[b].hi)
                break;
        l->bucket = (int8_t)b;
        if (i < m->bucket[b].done_at)
            m->bucket[b].done_at = i;
    }
}

/* One layer's output shape and parameter and buffer lengths from its input
 * shape (c, h, w) and its description ld; i is its index. 0 or TR_ERR_INVAL. */
static int layer_shape(const struct tr_layer_desc *ld, unsigned i, unsigned c, unsigned h,
                       unsigned w, struct tr_layer *l)
{
    unsigned long oc = c, oh = h, ow = w;

    switch (ld->kind) {
    case TR_LAYER_CONV2D:
        if (ld->kernel < 1 || ld->stride < 1 || ld->out < 1 ||
            h + 2u * ld->pad < ld->kernel || w + 2u * ld->pad < ld->kernel)
            return TR_ERR_INVAL;
        oc = ld->out;
        oh = (h + 2u * ld->pad - ld->kernel) / ld->stride + 1u;
        ow = (w + 2u * ld->pad - ld->kernel) / ld->stride + 1u;
        l->p_len = (size_t)ld->out * c * ld->kernel * ld->kernel + ld->out;
        break;
    case TR_LAYER_BATCHNORM2D:
        if (ld->kernel || ld->stride || ld->pad || ld->out)
            return TR_ERR_INVAL;
        l->p_len = 2u * c;
        l->b_len = 2u * c;
        break;
    case TR_LAYER_RELU:
        if (ld->kernel || ld->stride || ld->pad || ld->out)
            return TR_ERR_INVAL;
        break;
    case TR_LAYER_MAXPOOL2D:
        if (ld->kernel < 1 || ld->stride < 1 || ld->pad || ld->out ||
            h < ld->kernel || w < ld->kernel)
            return TR_ERR_INVAL;
        oh = (h - ld->kernel) / ld->stride + 1u;
        ow = (w - ld->kernel) / ld->stride + 1u;
        break;
    case TR_LAYER_FLATTEN:
        /* aliases its input's buffer, so it cannot be the first layer */
        if (ld->kernel || ld->stride || ld->pad || ld->out || i == 0)
            return TR_ERR_INVAL;
        oc = (unsigned long)c * h * w;
        oh = ow = 1;
        break;
    case TR_LAYER_LINEAR:
        /* input must be flat: after FLATTEN or a 1x1 shape */
        if (ld->kernel || ld->stride || ld->pad || ld->out < 1 || h != 1 || w != 1)
            return TR_ERR_INVAL;
        oc = ld->out;
        l->p_len = (size_t)ld->out * c + ld->out;
        break;
    default:
        return TR_ERR_INVAL;
    }
    if (oc > 65535ul || oh > 65535ul || ow > 65535ul)
        return TR_ERR_INVAL;
    l->out_c = (uint16_t)oc;
    l->out_h = (uint16_t)oh;
    l->out_w = (uint16_t)ow;
    return 0;
}

/* Resolve shapes and parameter offsets of every layer into m (no memory). */
static int resolve(struct tr_model *m, const struct tr_model_desc *d)
{
    unsigned c, h, w, i;
    size_t np = 0, nb = 0;

    if (d == NULL || d->n_layers < 1 || d->n_layers > TR_MAX_LAYERS ||
        d->in_c == 0 || d->in_h == 0 || d->in_w == 0 ||
        (d->plan != TR_PLAN_FAST && d->plan != TR_PLAN_LEAN) ||
        d->layer[d->n_layers - 1].kind != TR_LAYER_LINEAR)
        return TR_ERR_INVAL;
    m->desc = *d;
    m->n_layers = d->n_layers;
    c = d->in_c;
    h = d->in_h;
    w = d->in_w;
    for (i = 0; i < d->n_layers; i++) {
        struct tr_layer *l = &m->layer[i];
        int rc;

        l->d = d->layer[i];
        l->in_c = (uint16_t)c;
        l->in_h = (uint16_t)h;
        l->in_w = (uint16_t)w;
        l->p_off = np;
        l->p_len = 0;
        l->b_off = nb;
        l->b_len = 0;
        l->out = NULL;
        l->save = NULL;
        l->role = TR_ROLE_LAYER;
        l->band = 0;
        if ((rc = layer_shape(&d->layer[i], i, c, h, w, l)) < 0)
            return rc;
        np += l->p_len;
        nb += l->b_len;
        c = l->out_c;
        h = l->out_h;
        w = l->out_w;
    }
    m->n_params = np;
    m->n_buffers = nb;
    m->classes = c;
    cut_buckets(m);
    return 0;
}

/* floats a * b, or 0 with *ovf set when it cannot be represented in bytes */
static size_t mul_floats(size_t a, size_t b, int *ovf)
{
    if (a != 0 && b > ((size_t)-1 / sizeof(float)) / a) {
        *ovf = 1;
        return 0;
    }
    return a * b;
}

/* ReLU overwrites its input when that is the output of a conv, BN or linear
 * layer: their backward passes read their inputs, never their outputs, so
 * nothing needs the pre-activation values afterwards. (After a max-pool it
 * may not: the pool's backward compares its input with its own output.) */
int tr_model_relu_in_place(const struct tr_model *m, unsigned i)
{
    unsigned prev;

    if (i == 0 || m->layer[i].d.kind != TR_LAYER_RELU)
        return 0;
    prev = m->layer[i - 1].d.kind;
    return prev == TR_LAYER_CONV2D || prev == TR_LAYER_BATCHNORM2D || prev == TR_LAYER_LINEAR;
}

int tr_model_bn_single_value(const struct tr_model *m, unsigned n)
{
    unsigned i;

    for (i = 0; i < m->n_layers; i++)
        if (m->layer[i].d.kind == TR_LAYER_BATCHNORM2D &&
            (size_t)n * m->layer[i].in_h * m->layer[i].in_w == 1)
            return 1;
    return 0;
}

static size_t sample_floats(const struct tr_layer *l, int out)
{
    return out ? (size_t)l->out_c * l->out_h * l->out_w
               : (size_t)l->in_c * l->in_h * l->in_w;
}

/* Output positions per band of a lean conv: as many as fit in room floats
 * of scratch (the other stages' need, which the arena holds anyway), a
 * multiple of 8, at least 8, at most the whole plane. */
static size_t band_positions(const struct tr_layer *l, size_t room)
{
    const size_t P = (size_t)l->out_h * l->out_w;
    const size_t q = room / tr_conv2d_band_floats(l, 1);

    if (q >= P)
        return P;
    if (q < 8)
        return P < 8 ? P : 8;
    return q - q % 8;
}

/* Floats of scratch: the largest need of any stage. On the lean plan the
 * convolutions are sized last, within a room: what the blocks and streams
 * need anyway, or an eighth of the activations the plan stores, whichever
 * is larger (at a large batch the activations dwarf any conv scratch).
 * A conv whose whole-image scratch fits in the room runs the fast plan's
 * kernels (band 0); the others run in bands of output positions. */
static size_t scratch_floats(struct tr_model *m, unsigned batch)
{
    size_t room = 0, act = 0, need, smax;
    unsigned i;

    for (i = 0; i < m->n_layers; i++) {
        need = m->layer[i].role == TR_ROLE_BLOCK ? tr_plan_block_floats(m, i, batch)
             : m->layer[i].role == TR_ROLE_STREAM ? tr_plan_stream_floats(m, i) : 0;
        room = need > room ? need : room;
        if (tr_plan_stores(m, i))
            act += (size_t)batch * sample_floats(&m->layer[i], 1);
    }
    smax = room;
    if (act / 8 > room)
        room = act / 8;
    for (i = 0; i < m->n_layers; i++) {
        struct tr_layer *l = &m->layer[i];
        if (l->d.kind != TR_LAYER_CONV2D || l->role != TR_ROLE_LAYER)
            continue;
        need = tr_conv2d_scratch_floats(l);
        l->band = 0;
        if (m->desc.plan == TR_PLAN_LEAN && need > room) {
            l->band = band_positions(l, room);
            need = tr_conv2d_band_floats(l, l->band);
        }
        smax = need > smax ? need : smax;
    }
    return smax;
}

/* Resolve d into m and carve every buffer from a (measuring or real). */
/* The lean plan's stream: its bucket completes only with the block before
 * it (which makes its weight gradient), and that block's BN (and the conv
 * it recomputes) belong to the next bucket: with TR_MODEL_GRAD_BUCKET their
 * gradients wait in the spill, [spill_lo, spill_lo + spill_len) of the flat
 * vector, until that bucket opens. One stream at most there. */
static int stream_buckets(struct tr_model *m, unsigned opts)
{
    unsigned i, j, streams = 0;

    m->spill_len = 0;
    m->spill_lo = 0;
    for (i = 0; i < m->n_layers; i++) {
        const struct tr_layer *l = &m->layer[i];
        if (l->role != TR_ROLE_STREAM || l->bucket < 0)
            continue;
        for (j = i; j-- > 0;)
            if (m->layer[j].role == TR_ROLE_BLOCK)
                break;
        if (j >= i)
            continue;
        if (j < m->bucket[l->bucket].done_at)
            m->bucket[l->bucket].done_at = j;
        if (++streams > 1 && (opts & TR_MODEL_GRAD_BUCKET))
            return TR_ERR_INVAL;
        m->spill_lo = j > 0 && m->layer[j - 1].role == TR_ROLE_RECOMPUTED ? m->layer[j - 1].p_off
                                                                          : m->layer[j].p_off;
        m->spill_len = m->layer[j].p_off + m->layer[j].p_len - m->spill_lo;
    }
    return 0;
}

static int layout(struct tr_model *m, const struct tr_model_desc *d, unsigned batch,
                  unsigned opts, struct tr_arena *a)
{
    size_t dmax = 0, smax, glen;
    int ovf = 0, err;
    unsigned i;

    if (batch == 0)
        return TR_ERR_INVAL;
    err = resolve(m, d);
    if (err)
        return err;
    /* a BN over a 1x1 map at batch 1 could never take a training step */
    if (batch == 1 && tr_model_bn_single_value(m, 1))
        return TR_ERR_INVAL;
    if (opts & ~(TR_MODEL_GRAD_BUCKET | TR_MODEL_NO_MOMENTUM | TR_MODEL_ONE_PLANE))
        return TR_ERR_INVAL;
    tr_plan_roles(m);
    if ((err = stream_buckets(m, opts)) != 0)
        return err;
    m->opts = opts;
    m->batch = batch;
    glen = m->n_params;
    if (opts & TR_MODEL_GRAD_BUCKET) {
        glen = m->n_buffers + 1u;
        for (i = 0; i < m->n_buckets; i++)
            if (m->bucket[i].hi - m->bucket[i].lo > glen)
                glen = m->bucket[i].hi - m->bucket[i].lo;
    }
    m->grads_len = glen;
    m->params = tr_arena_floats(a, m->n_params);
    m->grads = tr_arena_floats(a, glen);
    m->momentum = opts & TR_MODEL_NO_MOMENTUM ? NULL : tr_arena_floats(a, m->n_params);
    m->buffers = tr_arena_floats(a, m->n_buffers);
    m->dlogits = tr_arena_floats(a, mul_floats(batch, m->classes, &ovf));
    for (i = 0; i < m->n_layers; i++) {
        struct tr_layer *l = &m->layer[i];
        if (tr_plan_stores(m, i))
            l->out = tr_arena_floats(a, mul_floats(batch, sample_floats(l, 1), &ovf));
        else if (l->role == TR_ROLE_LAYER || m->desc.plan == TR_PLAN_FAST)
            l->out = m->layer[i - 1].out;    /* Flatten, a ReLU in place */
        if (l->d.kind == TR_LAYER_BATCHNORM2D)
            l->save = tr_arena_floats(a, 2u * l->in_c);
        /* gradients w.r.t. layer inputs that are not written in place;
         * on the fast plan, of every layer after the first (the reference
         * kernels' backward) */
        if (i > 0 && (m->desc.plan == TR_PLAN_FAST || tr_plan_dx(m, i, 0) == TR_DX_DBUF) &&
            sample_floats(l, 0) > dmax)
            dmax = sample_floats(l, 0);
    }
    dmax = mul_floats(batch, dmax, &ovf);
    m->dbuf[0] = tr_arena_floats(a, dmax);
    m->dbuf[1] = tr_arena_floats(a, dmax);
    smax = scratch_floats(m, batch);
    m->scratch = tr_arena_floats(a, smax);
    m->scratch_len = smax;
    if (!(opts & TR_MODEL_GRAD_BUCKET))
        m->spill_len = 0;
    m->spill = m->spill_len ? tr_arena_floats(a, m->spill_len) : NULL;
    m->spill_used = 0;
    m->open_bucket = 0;
    m->bw_left = 0;
    m->bw_done = 0;
    if (ovf)
        return TR_ERR_NOMEM;
    m->input = NULL;
    m->last_n = 0;
    m->last_train = 0;
    m->kernels = TR_KERNELS_FAST;
    m->last_kernels = TR_KERNELS_FAST;
    m->arena_used = a->used;
    return a->err ? a->err : 0;
}

int tr_model_arena_size(const struct tr_model_desc *d, unsigned batch, size_t *bytes)
{
    return tr_model_arena_size_opt(d, batch, 0, bytes);
}

int tr_model_arena_size_opt(const struct tr_model_desc *d, unsigned batch, unsigned opts,
                            size_t *bytes)
{
    struct tr_model tmp;
    struct tr_arena a;
    int err;

    tr_arena_measure(&a);
    err = layout(&tmp, d, batch, opts, &a);
    if (err)
        return err == TR_ERR_NOMEM ? TR_ERR_NOMEM : TR_ERR_INVAL;
    if (bytes)
        *bytes = a.used;
    return 0;
}

int tr_model_counts(const struct tr_model_desc *d, size_t *n_params, size_t *n_buffers)
{
    struct tr_model tmp;
    int err = resolve(&tmp, d);
    if (err)
        return TR_ERR_INVAL;
    if (n_params)
        *n_params = tmp.n_params;
    if (n_buffers)
        *n_buffers = tmp.n_buffers;
    return 0;
}

int tr_model_init(struct tr_model *m, const struct tr_model_desc *d, unsigned batch,
                  void *arena, size_t arena_size)
{
    return tr_model_init_opt(m, d, batch, 0, arena, arena_size);
}

int tr_model_init_opt(struct tr_model *m, const struct tr_model_desc *d, unsigned batch,
                      unsigned opts, void *arena, size_t arena_size)
{
    struct tr_arena a;
    size_t i;
    int err;

    if (m == NULL)
        return TR_ERR_INVAL;
    if (fuses_multiply_add())
        return TR_ERR_FLOAT;
    err = tr_arena_init(&a, arena, arena_size);
    if (err)
        return err;
    err = layout(m, d, batch, opts, &a);
    if (err)
        return err;
    for (i = 0; i < m->n_params; i++)
        m->params[i] = 0.0f;
    for (i = 0; i < m->grads_len; i++)
        m->grads[i] = 0.0f;
    for (i = 0; m->momentum && i < m->n_params; i++)
        m->momentum[i] = 0.0f;
    for (i = 0; i < m->n_buffers; i++)
        m->buffers[i] = 0.0f;
    return 0;
}

/* ---- where gradients go, bucket by bucket */

float *tr_plan_grad(struct tr_model *m, const struct tr_layer *l)
{
    size_t lo;
    if (!(m->opts & TR_MODEL_GRAD_BUCKET))
        return m->grads + l->p_off;
    if (l->bucket < 0)
        return m->grads;                 /* no parameters: never written */
    lo = m->bucket[l->bucket].lo;
    if ((unsigned)l->bucket == m->open_bucket)
        return m->grads + (l->p_off - lo);
    /* a lean block's BN (or its conv) made before its bucket opens */
    m->spill_used = 1;
    return m->spill + (l->p_off - m->spill_lo);
}

unsigned tr_model_buckets_done(const struct tr_model *m)
{
    return m->bw_done;
}

float *tr_model_bucket_grads(struct tr_model *m, unsigned b)
{
    if (b >= m->n_buckets)
        return NULL;
    if (!(m->opts & TR_MODEL_GRAD_BUCKET))
        return m->grads + m->bucket[b].lo;
    return b == m->open_bucket ? m->grads : NULL;
}

int tr_model_bucket_next(struct tr_model *m)
{
    const struct tr_bucket *k;
    size_t i;
    if (!(m->opts & TR_MODEL_GRAD_BUCKET) || m->bw_done <= m->open_bucket)
        return TR_ERR_INVAL;
    m->open_bucket++;
    if (m->open_bucket >= m->n_buckets)
        return 0;
    k = &m->bucket[m->open_bucket];
    if (m->spill_used && m->spill_lo >= k->lo && m->spill_lo < k->hi) {
        for (i = 0; i < m->spill_len; i++)
            m->grads[m->spill_lo - k->lo + i] = m->spill[i];
        m->spill_used = 0;
    }
    return 0;
}

#define TR_INIT_STREAM 0x7472u  /* "tr": the PCG stream of parameter init */

void tr_model_init_params(struct tr_model *m, uint64_t seed)
{
    struct tr_rng r;
    unsigned i;
    size_t j;

    tr_rng_seed(&r, seed, TR_INIT_STREAM);
    for (i = 0; i < m->n_layers; i++) {
        const struct tr_layer *l = &m->layer[i];
        float *p = m->params + l->p_off;
        if (l->d.kind == TR_LAYER_CONV2D || l->d.kind == TR_LAYER_LINEAR) {
            /* fan_in = IC*K*K (conv) or IN (linear) = (p_len - out) / out */
            size_t fan_in = (l->p_len - l->out_c) / l->out_c;
            float bound = 1.0f / tr_sqrtf((float)fan_in);
            for (j = 0; j < l->p_len; j++)  /* weight then bias */
                p[j] = tr_rng_uniform(&r, -bound, bound);
        } else if (l->d.kind == TR_LAYER_BATCHNORM2D) {
            float *b = m->buffers + l->b_off;
            for (j = 0; j < l->in_c; j++) {
                p[j] = 1.0f;
                p[l->in_c + j] = 0.0f;
                b[j] = 0.0f;
                b[l->in_c + j] = 1.0f;
            }
        }
    }
}

/* FNV-1a over a fixed byte serialisation (no struct padding, no endianness). */
static uint32_t fnv(uint32_t h, uint64_t v, unsigned bytes)
{
    uint8_t b[8];
    tr_put_le64(b, v);
    return tr_fnv1a32(h, b, bytes);     /* the low `bytes` bytes of v */
}

uint32_t tr_model_layout_hash(const struct tr_model *m)
{
    uint32_t h = TR_FNV32_INIT;
    unsigned i;

    h = fnv(h, m->desc.in_c, 2);
    h = fnv(h, m->desc.in_h, 2);
    h = fnv(h, m->desc.in_w, 2);
    h = fnv(h, m->desc.n_layers, 1);
    for (i = 0; i < m->desc.n_layers; i++) {
        const struct tr_layer_desc *l = &m->desc.layer[i];
        h = fnv(h, l->kind, 1);
        h = fnv(h, l->kernel, 1);
        h = fnv(h, l->stride, 1);
        h = fnv(h, l->pad, 1);
        h = fnv(h, l->out, 2);
    }
    h = fnv(h, (uint64_t)m->n_params, 8);
    h = fnv(h, (uint64_t)m->n_buffers, 8);
    return h;
}
