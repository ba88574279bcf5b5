/* tinyring: forward, softmax cross-entropy, backward of a laid-out model.
 * Dispatches each layer to its kernel (fast, or reference when
 * m->kernels == TR_KERNELS_REF); the kernels live in tr_layer_*.c. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_model.h"
#include "tr_error.h"
#include "tr_math.h"
#include "tr_layer_kernels.h"
#include "tr_plan.h"

/* Whether the fast plan's fast kernels run BN blocks fused. Where the
 * target has vector registers (hosts) a batch's activations are megabytes
 * and the fused blocks save their memory traffic; on a scalar FPU
 * (Cortex-M4F, RV32, the M55's scalar core) instructions count, and making
 * a plane again in the block's backward costs more than it saves (the seed
 * net: 24.97 M -> 25.35 M instructions per sample on the M4F), so the fast
 * plan runs those layers one by one there. The lean plan always fuses (its
 * layout has no room for the layers' outputs); the bits are the same. */
#if defined(__GNUC__) && (defined(__AVX__) || defined(__SSE2__) || defined(__ARM_NEON))
#define TR_FAST_PLAN_FUSES 1
#else
#define TR_FAST_PLAN_FUSES 0
#endif

/* 1 if the run is layer by layer: the reference kernels, or the fast plan
 * on a target where it does not fuse */
static int layered(const struct tr_model *m, int ref)
{
    return ref || (m->desc.plan == TR_PLAN_FAST && !TR_FAST_PLAN_FUSES);
}

/* Where a layer's bias starts among its parameters (its last out_c
 * floats); 0 for a layer without parameters, whose pointer is never read
 * (p_len - out_c would wrap and point far outside the block). */
static size_t bias_at(const struct tr_layer *l)
{
    return l->p_len >= l->out_c ? l->p_len - l->out_c : 0;
}

static size_t out_floats(const struct tr_layer *l, unsigned n)
{
    return (size_t)n * l->out_c * l->out_h * l->out_w;
}

/* One layer run alone (TR_ROLE_LAYER). *fused says the BN just run applied
 * the ReLU that follows (fast kernels fuse BN -> in-place ReLU). */
static int layer_forward(struct tr_model *m, unsigned i, const float *in, unsigned n,
                         int train, int ref, int *fused)
{
    struct tr_layer *l = &m->layer[i];
    const float *p = m->params + l->p_off, *b = p + bias_at(l);

    switch (l->d.kind) {
    case TR_LAYER_CONV2D:
        if (ref)
            tr_conv2d_forward_ref(l->out, in, p, b, l, n);
        else if (l->band)
            tr_conv2d_forward_band(l->out, in, p, b, l, n, m->scratch, l->band);
        else
            tr_conv2d_forward(l->out, in, p, b, l, n, m->scratch);
        break;
    case TR_LAYER_BATCHNORM2D:
        *fused = !ref && i + 1 < m->n_layers && tr_model_relu_in_place(m, i + 1);
        if (train && *fused)
            tr_bn2d_forward_train_relu(l->out, l->save, m->buffers + l->b_off, in, p, l, n);
        else if (train)
            tr_bn2d_forward_train(l->out, l->save, m->buffers + l->b_off, in, p, l, n);
        else if (*fused)
            tr_bn2d_forward_eval_relu(l->out, in, p, m->buffers + l->b_off, l, n);
        else
            tr_bn2d_forward_eval(l->out, in, p, m->buffers + l->b_off, l, n);
        return 0;
    case TR_LAYER_RELU:
        if (*fused)
            *fused = 0;            /* applied by the BN just before */
        else if (l->out == in)
            tr_relu_inplace(l->out, out_floats(l, n));
        else
            tr_relu_forward(l->out, in, out_floats(l, n));
        return 0;
    case TR_LAYER_MAXPOOL2D:
        tr_maxpool2d_forward(l->out, in, l, n);
        break;
    case TR_LAYER_FLATTEN:
        break;  /* l->out aliases the previous layer's out */
    case TR_LAYER_LINEAR:
        if (ref)
            tr_linear_forward_ref(l->out, in, p, b, l, n);
        else
            tr_linear_forward(l->out, in, p, b, l, n);
        break;
    default:
        return TR_ERR_INVAL;
    }
    *fused = 0;
    return 0;
}

int tr_model_forward(struct tr_model *m, const float *x, unsigned n, int train)
{
    const int ref = m->kernels == TR_KERNELS_REF;
    const float *in = x;
    unsigned i;
    int fused = 0, err;

    if (x == NULL || n == 0 || n > m->batch)
        return TR_ERR_INVAL;
    /* PyTorch: "Expected more than 1 value per channel when training" */
    if (train && tr_model_bn_single_value(m, n))
        return TR_ERR_INVAL;
    /* the reference kernels run layer by layer: the fast plan's layout */
    if (ref && m->desc.plan != TR_PLAN_FAST)
        return TR_ERR_INVAL;
    m->last_train = 0;
    for (i = 0; i < m->n_layers; i++) {
        struct tr_layer *l = &m->layer[i];
        switch (layered(m, ref) ? TR_ROLE_LAYER : l->role) {
        case TR_ROLE_LAYER:
            if ((err = layer_forward(m, i, in, n, train, ref, &fused)) != 0)
                return err;
            break;
        case TR_ROLE_BLOCK:
            tr_plan_block_forward(m, i, x, n, train);
            break;
        case TR_ROLE_STREAM:
            tr_plan_stream_forward(m, i, x, n, train);
            break;
        default:            /* recomputed, or run by the block before */
            break;
        }
        in = l->out;
    }
    m->input = x;
    m->last_n = n;
    m->last_train = train ? 1 : 0;
    m->last_kernels = m->kernels;
    return 0;
}

const float *tr_model_logits(const struct tr_model *m)
{
    return m->layer[m->n_layers - 1].out;
}

/* loss_i = log(sum_j e^(z_j - max)) - (z_label - max); the max shift keeps
 * every exponent <= 0, so nothing overflows. dz = (softmax - onehot) / n. */
int tr_model_loss(struct tr_model *m, const uint8_t *labels, float *loss, unsigned *correct)
{
    const unsigned C = m->classes, n = m->last_n;
    const float *z = tr_model_logits(m);
    const float inv_n = 1.0f / (float)n;
    float total = 0.0f;
    unsigned i, j, hits = 0;

    if (n == 0 || labels == NULL)
        return TR_ERR_INVAL;
    for (i = 0; i < n; i++)
        if (labels[i] >= C)
            return TR_ERR_INVAL;
    for (i = 0; i < n; i++) {
        const float *zi = z + (size_t)i * C;
        float *dz = m->dlogits + (size_t)i * C;
        float mx = zi[0], sum = 0.0f, inv;
        unsigned arg = 0;
        for (j = 1; j < C; j++)
            if (zi[j] > mx) {
                mx = zi[j];
                arg = j;
            }
        hits += arg == labels[i];
        for (j = 0; j < C; j++) {
            dz[j] = tr_expf(zi[j] - mx);
            sum += dz[j];
        }
        total += tr_logf(sum) - (zi[labels[i]] - mx);
        inv = 1.0f / sum;
        for (j = 0; j < C; j++)
            dz[j] = dz[j] * inv * inv_n;
        dz[labels[i]] -= inv_n;
    }
    if (loss)
        *loss = total * inv_n;
    if (correct)
        *correct = hits;
    return 0;
}

/* One layer's backward run alone (TR_ROLE_LAYER): dout is the gradient
 * w.r.t. its output, din receives the one w.r.t. its input (NULL: none).
 * *fused says the pool just run applied the gate of the ReLU before it, so
 * that ReLU passes its gradient through. */
static int layer_backward(struct tr_model *m, unsigned i, const float *dout, float *din,
                          unsigned n, int ref, int *fused)
{
    const struct tr_layer *l = &m->layer[i];
    const float *in = i ? m->layer[i - 1].out : m->input;
    const float *p = m->params + l->p_off;
    float *g = tr_plan_grad(m, l), *gb = g + bias_at(l);

    switch (l->d.kind) {
    case TR_LAYER_CONV2D:
        if (ref)
            tr_conv2d_backward_ref(din, g, gb, dout, in, p, l, n);
        else if (l->band)
            tr_conv2d_backward_band(din, g, gb, dout, in, p, l, n, m->scratch, l->band);
        else
            tr_conv2d_backward(din, g, gb, dout, in, p, l, n, m->scratch);
        break;
    case TR_LAYER_BATCHNORM2D:
        tr_bn2d_backward(din, g, dout, in, p, l->save, l, n);
        break;
    case TR_LAYER_RELU:                /* (not when the pool after did it) */
        if (din)
            tr_relu_backward(din, dout, l->out, out_floats(l, n));
        break;
    case TR_LAYER_MAXPOOL2D:
        /* fast kernels fold the backward of a ReLU just before into this one */
        *fused = !ref && din && m->layer[i - 1].d.kind == TR_LAYER_RELU;
        if (*fused)
            tr_maxpool2d_relu_backward(din, dout, in, l->out, l, n);
        else if (din)
            tr_maxpool2d_backward(din, dout, in, l->out, l, n);
        return 0;
    case TR_LAYER_FLATTEN:
        break;                         /* din is dout: nothing to move */
    case TR_LAYER_LINEAR:
        tr_linear_backward(din, g, gb, dout, in, p, l, n);
        break;
    default:
        return TR_ERR_INVAL;
    }
    *fused = 0;
    return 0;
}

/* The buffer layer i's backward writes its input gradient to (tr_plan_dx) */
static float *dx_dest(struct tr_model *m, unsigned i, const float *dout, int layers)
{
    switch (tr_plan_dx(m, i, layers)) {
    case TR_DX_IN_PLACE:
        return (float *)m->layer[i - 1].out;
    case TR_DX_DBUF:
        return dout == m->dbuf[0] ? m->dbuf[1] : m->dbuf[0];
    case TR_DX_PASS:
        return (float *)dout;
    default:
        return NULL;
    }
}

int tr_model_backward_begin(struct tr_model *m)
{
    if (!m->last_train || m->last_n == 0)
        return TR_ERR_INVAL;
    m->bw_left = m->n_layers;
    m->bw_done = 0;
    m->bw_fused = 0;
    m->bw_dout = m->dlogits;
    m->bw_sdy = NULL;
    m->open_bucket = 0;
    m->spill_used = 0;
    return 0;
}

/* One layer's backward (or a block's, or a stream's) from the top down:
 * the loop of a whole backward, one turn per call; the turn's state (the
 * gradient flowing down, a stream's, a fused ReLU) lives in m->bw_*. */
int tr_model_backward_stage(struct tr_model *m)
{
    const int ref = m->last_kernels == TR_KERNELS_REF;   /* as its forward ran */
    const unsigned n = m->last_n;
    const float *dout = m->bw_dout;
    const struct tr_layer *l;
    unsigned i;
    float *din;
    int err;

    if (m->bw_left == 0)
        return 0;
    if ((m->opts & TR_MODEL_GRAD_BUCKET) && m->bw_done > m->open_bucket)
        return TR_ERR_BUSY;            /* the open bucket is not released yet */
    i = m->bw_left - 1u;
    l = &m->layer[i];
    din = dx_dest(m, i, dout, layered(m, ref));
    switch (layered(m, ref) ? TR_ROLE_LAYER : l->role) {
    case TR_ROLE_LAYER:
        if (m->bw_fused && l->d.kind == TR_LAYER_RELU) {
            m->bw_fused = 0;           /* the pool after applied its gate */
            din = (float *)dout;
        } else if ((err = layer_backward(m, i, dout, din, n, ref, &m->bw_fused)) != 0) {
            return err;
        }
        break;
    case TR_ROLE_STREAM:               /* its input gradient stays virtual */
        tr_plan_stream_backward(m, i, n, dout);
        m->bw_sdy = dout;
        din = NULL;
        break;
    case TR_ROLE_BLOCK:
        tr_plan_block_backward(m, i, m->input, n, dout, m->bw_sdy, din);
        m->bw_sdy = NULL;
        break;
    default:                           /* run by the block or the stream */
        din = (float *)dout;
        break;
    }
    m->bw_dout = din;
    m->bw_left = i;
    while (m->bw_done < m->n_buckets && m->bucket[m->bw_done].done_at >= i)
        m->bw_done++;
    return m->bw_left > 0;
}

int tr_model_backward(struct tr_model *m)
{
    int rc;

    if (m->opts & TR_MODEL_GRAD_BUCKET)
        return TR_ERR_INVAL;           /* no full gradient: stage by stage */
    if ((rc = tr_model_backward_begin(m)) != 0)
        return rc;
    while ((rc = tr_model_backward_stage(m)) > 0)
        ;
    return rc;
}
