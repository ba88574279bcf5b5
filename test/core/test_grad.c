/* test_grad: finite-difference gradient checks of every layer kernel (fast
 * and reference where both exist) at several shapes - odd sizes, batch 1 and
 * > 1, stride and padding variants - and of whole small models through
 * tr_model_forward / loss / backward.
 *
 * Per layer: L = sum(y * R) for a fixed random R, so dL/dy = R; backward(R)
 * must match (L(v+eps) - L(v-eps)) / 2eps for every input and parameter.
 * L is summed in double; the tolerance |fd - an| <= atol + rtol*|an| is set
 * from the float rounding of y (see each call). */
#include "harness.h"
#include "tc_util.h"
#include "tr_util.h"
#include <stdio.h>

struct op {
    struct tr_layer l;
    unsigned n;
    int fast;          /* use the fast kernel where there is one */
    float *scratch;    /* fast conv scratch */
};

static size_t n_par(const struct op *o)
{
    switch (o->l.d.kind) {
    case TR_LAYER_CONV2D:
        return (size_t)o->l.out_c * o->l.in_c * o->l.d.kernel * o->l.d.kernel + o->l.out_c;
    case TR_LAYER_LINEAR:
        return (size_t)o->l.out_c * tc_in(&o->l) + o->l.out_c;
    case TR_LAYER_BATCHNORM2D:
        return 2u * o->l.in_c;
    default:
        return 0;
    }
}

static void fwd(struct op *o, float *y, float *save, const float *x, const float *p)
{
    const struct tr_layer *l = &o->l;
    const float *b = p + n_par(o) - l->out_c;
    float run[2 * 64];
    unsigned c;

    switch (l->d.kind) {
    case TR_LAYER_CONV2D:
        if (o->fast) tr_conv2d_forward(y, x, p, b, l, o->n, o->scratch);
        else tr_conv2d_forward_ref(y, x, p, b, l, o->n);
        break;
    case TR_LAYER_LINEAR:
        if (o->fast) tr_linear_forward(y, x, p, b, l, o->n);
        else tr_linear_forward_ref(y, x, p, b, l, o->n);
        break;
    case TR_LAYER_BATCHNORM2D:
        for (c = 0; c < l->in_c; c++) { run[c] = 0.0f; run[l->in_c + c] = 1.0f; }
        tr_bn2d_forward_train(y, save, run, x, p, l, o->n);
        break;
    case TR_LAYER_RELU:
        tr_relu_forward(y, x, o->n * tc_in(l));
        break;
    case TR_LAYER_MAXPOOL2D:
        tr_maxpool2d_forward(y, x, l, o->n);
        break;
    }
}

static void bwd(struct op *o, float *dx, float *dp, const float *dy, const float *x,
                const float *p, const float *y, const float *save)
{
    const struct tr_layer *l = &o->l;
    float *db = dp + n_par(o) - l->out_c;

    switch (l->d.kind) {
    case TR_LAYER_CONV2D:
        if (o->fast) tr_conv2d_backward(dx, dp, db, dy, x, p, l, o->n, o->scratch);
        else tr_conv2d_backward_ref(dx, dp, db, dy, x, p, l, o->n);
        break;
    case TR_LAYER_LINEAR:
        tr_linear_backward(dx, dp, db, dy, x, p, l, o->n);
        break;
    case TR_LAYER_BATCHNORM2D:
        tr_bn2d_backward(dx, dp, dy, x, p, save, l, o->n);
        break;
    case TR_LAYER_RELU:
        tr_relu_backward(dx, dy, y, o->n * tc_in(l));
        break;
    case TR_LAYER_MAXPOOL2D:
        tr_maxpool2d_backward(dx, dy, x, y, l, o->n);
        break;
    }
}

static double lossf(struct op *o, float *y, float *save, const float *x, const float *p,
                    const float *r)
{
    size_t i, ny = o->n * tc_out(&o->l);
    double s = 0.0;
    fwd(o, y, save, x, p);
    for (i = 0; i < ny; i++)
        s += (double)y[i] * r[i];
    return s;
}

/* FD-check one op on input x (given) and random params; returns worst ratio */
static void check(const char *name, struct op *o, float *x, float eps, double atol, double rtol)
{
    const size_t nx = o->n * tc_in(&o->l), ny = o->n * tc_out(&o->l), np = n_par(o);
    float *p = tc_rand(np, -0.5f, 0.5f), *r = tc_rand(ny, -1.0f, 1.0f);
    float *y = tc_zeros(ny), *dx = tc_zeros(nx), *dp = tc_zeros(np);
    float save[4 * 64];
    double worst = 0.0;
    size_t i, bad = 0;
    int pass;

    if (o->l.d.kind == TR_LAYER_CONV2D)
        o->scratch = tc_zeros(tr_conv2d_scratch_floats(&o->l));
    if (o->l.d.kind == TR_LAYER_BATCHNORM2D)   /* gamma around 1, as trained nets have */
        for (i = 0; i < o->l.in_c; i++) p[i] += 1.0f;
    fwd(o, y, save, x, p);
    for (i = 0; i < nx; i++) dx[i] = 1e9f;     /* backward must overwrite */
    for (i = 0; i < np; i++) dp[i] = 1e9f;
    bwd(o, dx, dp, r, x, p, y, save);
    for (pass = 0; pass < 2; pass++) {
        float *v = pass ? p : x, *an = pass ? dp : dx;
        size_t nv = pass ? np : nx;
        for (i = 0; i < nv; i++) {
            float keep = v[i];
            double lp, lm, fd, e;
            v[i] = keep + eps;
            lp = lossf(o, y, save, x, p, r);
            v[i] = keep - eps;
            lm = lossf(o, y, save, x, p, r);
            v[i] = keep;
            fd = (lp - lm) / ((double)(keep + eps) - (double)(keep - eps));
            e = fabs(fd - an[i]) / (atol + rtol * fabs(an[i]));
            if (!(e <= 1.0)) {
                if (bad++ < 3)
                    fprintf(stderr, "  %s %s[%zu]: analytic %.7g fd %.7g\n", name,
                            pass ? "param" : "input", i, an[i], fd);
            }
            if (e > worst) worst = e;
        }
    }
    TH_CHECK(bad == 0, "%s (%s, n=%u): %zu gradients off, worst %.3g", name,
             o->fast ? "fast" : "ref", o->n, bad, worst);
    free(p); free(r); free(y); free(dx); free(dp);
    if (o->scratch) { free(o->scratch); o->scratch = NULL; }
}

/* x for piecewise-linear layers: distinct values on a 0.01 grid (shuffled),
 * none within 0.005 of zero, so +-eps (1e-3) never crosses a kink or tie. */
static float *kinkfree(size_t n)
{
    float *x = tc_zeros(n);
    size_t i;
    for (i = 0; i < n; i++)
        x[i] = (float)((long)i - (long)n / 2) * 0.01f + 0.005f;
    for (i = n; i-- > 1;) {
        size_t j = tr_rng_below(&tc_rng, (uint32_t)(i + 1));
        float t = x[i]; x[i] = x[j]; x[j] = t;
    }
    return x;
}

static void conv_cases(void)
{
    /* n, ic, h, w, oc, k, s, p */
    static const unsigned c[][8] = {
        {1, 1, 5, 5, 2, 3, 1, 1},   /* batch 1, same padding */
        {2, 3, 7, 6, 4, 3, 2, 0},   /* stride 2, no padding, odd sizes */
        {3, 2, 9, 9, 3, 5, 1, 2},   /* the seed's 5x5 pad 2 */
        {2, 2, 6, 7, 3, 2, 3, 1},   /* stride larger than kernel */
        {1, 3, 4, 5, 5, 1, 1, 0},   /* 1x1 */
        {2, 1, 5, 4, 17, 3, 1, 3},  /* padding >= kernel/2, 17 outputs */
    };
    unsigned i;
    int fast;
    for (i = 0; i < sizeof c / sizeof c[0]; i++)
        for (fast = 0; fast < 2; fast++) {
            struct op o;
            float *x;
            memset(&o, 0, sizeof o);
            o.l = tc_layer(TR_LAYER_CONV2D, c[i][1], c[i][2], c[i][3], c[i][4],
                           c[i][5], c[i][6], c[i][7]);
            o.n = c[i][0];
            o.fast = fast;
            x = tc_rand(o.n * tc_in(&o.l), -1.0f, 1.0f);
            /* linear in x and w: FD is exact up to float rounding of y */
            check("conv2d", &o, x, 1e-2f, 2e-3, 2e-3);
            free(x);
        }
}

static void linear_cases(void)
{
    static const unsigned c[][3] = {{1, 7, 3}, {4, 33, 5}, {3, 16, 1}, {2, 50, 10}};
    unsigned i;
    int fast;
    for (i = 0; i < sizeof c / sizeof c[0]; i++)
        for (fast = 0; fast < 2; fast++) {
            struct op o;
            float *x;
            memset(&o, 0, sizeof o);
            o.l = tc_layer(TR_LAYER_LINEAR, c[i][1], 1, 1, c[i][2], 0, 0, 0);
            o.n = c[i][0];
            o.fast = fast;
            x = tc_rand(o.n * tc_in(&o.l), -1.0f, 1.0f);
            check("linear", &o, x, 1e-2f, 2e-3, 2e-3);
            free(x);
        }
}

static void bn_cases(void)
{
    static const unsigned c[][4] = {{1, 2, 3, 3}, {4, 3, 5, 4}, {3, 1, 1, 1}, {2, 5, 2, 3}};
    unsigned i;
    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct op o;
        float *x;
        memset(&o, 0, sizeof o);
        o.l = tc_layer(TR_LAYER_BATCHNORM2D, c[i][1], c[i][2], c[i][3], 0, 0, 0, 0);
        o.n = c[i][0];
        x = tc_rand(o.n * tc_in(&o.l), -1.0f, 2.0f);
        /* nonlinear: eps 1e-3 keeps the O(eps^2) term below the rounding */
        check("batchnorm2d", &o, x, 1e-3f, 3e-3, 3e-3);
        free(x);
    }
}

static void relu_pool_cases(void)
{
    static const unsigned pc[][6] = {   /* n, c, h, w, k, s */
        {1, 1, 4, 4, 2, 2}, {2, 3, 7, 5, 2, 2}, {1, 2, 7, 7, 3, 2}, {3, 2, 6, 9, 3, 3},
    };
    unsigned i;
    for (i = 0; i < 2; i++) {
        struct op o;
        float *x;
        memset(&o, 0, sizeof o);
        o.l = tc_layer(TR_LAYER_RELU, 3, 5 + i, 4, 0, 0, 0, 0);
        o.n = 1 + 2 * i;
        x = kinkfree(o.n * tc_in(&o.l));
        check("relu", &o, x, 1e-3f, 1e-4, 1e-4);
        free(x);
    }
    for (i = 0; i < sizeof pc / sizeof pc[0]; i++) {
        struct op o;
        float *x;
        memset(&o, 0, sizeof o);
        o.l = tc_layer(TR_LAYER_MAXPOOL2D, pc[i][1], pc[i][2], pc[i][3], 0, pc[i][4],
                       pc[i][5], 0);
        o.n = pc[i][0];
        x = kinkfree(o.n * tc_in(&o.l));
        check("maxpool2d", &o, x, 1e-3f, 1e-4, 1e-4);
        free(x);
    }
}

/* Ties in maxpool go to the first maximum in row-major window order. */
static void pool_ties(void)
{
    struct tr_layer l = tc_layer(TR_LAYER_MAXPOOL2D, 1, 2, 4, 0, 2, 2, 0);
    float x[8] = {1, 3, 3, 3, 3, 0, 3, 3}, y[2], dy[2] = {1, 2}, dx[8];
    tr_maxpool2d_forward(y, x, &l, 1);
    tr_maxpool2d_backward(dx, dy, x, y, &l, 1);
    TH_CHECK(y[0] == 3 && y[1] == 3, "pool tie forward");
    TH_CHECK(dx[0] == 0 && dx[1] == 1 && dx[4] == 0 && dx[2] == 2 && dx[3] == 0 &&
             dx[6] == 0 && dx[7] == 0, "pool tie goes to the first max");
}

/* The mean cross-entropy of the last forward's logits, in double: keeps the
 * FD quotient's rounding noise (~1e-7 / eps per logit) well below atol. */
static double ce_double(const struct tr_model *m, const uint8_t *lab, unsigned n)
{
    const float *z = tr_model_logits(m);
    double total = 0.0;
    unsigned i, j;
    for (i = 0; i < n; i++) {
        const float *zi = z + (size_t)i * m->classes;
        double mx = zi[0], s = 0.0;
        for (j = 1; j < m->classes; j++)
            if (zi[j] > mx) mx = zi[j];
        for (j = 0; j < m->classes; j++)
            s += exp((double)zi[j] - mx);
        total += log(s) + mx - zi[lab[i]];
    }
    return total / n;
}

/* FNV-1a over the on/off state of every ReLU output and the argmax of every
 * max-pool window of the model at its current parameters: the model's piece
 * of linearity. Taken from a forward with the reference kernels, which
 * store every layer's output (the fast ones run BN, ReLU and pool fused and
 * keep only the pool's). */
static uint32_t pattern_of(const struct tr_model *m, unsigned n);
static uint32_t pattern(struct tr_model *m, const float *x, unsigned n)
{
    const int kernels = m->kernels;
    uint32_t h;
    m->kernels = TR_KERNELS_REF;
    tr_model_forward(m, x, n, 1);
    h = pattern_of(m, n);
    m->kernels = kernels;
    return h;
}

static uint32_t pattern_of(const struct tr_model *m, unsigned n)
{
    uint32_t h = TR_FNV32_INIT;
    unsigned li;
    size_t j;
    for (li = 0; li < m->n_layers; li++) {
        const struct tr_layer *l = &m->layer[li];
        size_t cnt = (size_t)n * l->out_c * l->out_h * l->out_w;
        if (l->d.kind == TR_LAYER_RELU) {
            for (j = 0; j < cnt; j++) {
                uint8_t on = l->out[j] > 0.0f;
                h = tr_fnv1a32(h, &on, 1);
            }
        } else if (l->d.kind == TR_LAYER_MAXPOOL2D) {
            const float *in = m->layer[li - 1].out;
            size_t plane;
            unsigned oh, ow, a, b;
            for (plane = 0; plane < (size_t)n * l->in_c; plane++)
                for (oh = 0; oh < l->out_h; oh++)
                    for (ow = 0; ow < l->out_w; ow++) {
                        const float *win = in + plane * l->in_h * l->in_w +
                                           (size_t)oh * l->d.stride * l->in_w + ow * l->d.stride;
                        float y = l->out[(plane * l->out_h + oh) * l->out_w + ow];
                        uint8_t arg = 0, found = 0;
                        for (a = 0; a < l->d.kernel && !found; a++)
                            for (b = 0; b < l->d.kernel && !found; b++)
                                if (win[a * l->in_w + b] == y) {
                                    arg = (uint8_t)(a * l->d.kernel + b);
                                    found = 1;
                                }
                        h = tr_fnv1a32(h, &arg, 1);
                    }
        }
    }
    return h;
}

/* Whole model: CE loss through tr_model, FD over every parameter and some inputs. */
static void model_case(const struct tr_model_desc *d, unsigned batch, unsigned n, int kernels,
                       const char *name)
{
    static uint8_t arena[1u << 20] TR_ARENA_ALIGNED;
    struct tr_model m;
    size_t in = (size_t)d->in_c * d->in_h * d->in_w, i, bad = 0, run_floats;
    float *x = tc_rand(n * in, -1.0f, 1.0f), *g, *keepbuf;
    uint8_t lab[8];
    float loss;
    /* ReLU and max-pool kinks: with thousands of pre-activations, a step
     * of eps sometimes moves one across 0 (or swaps a pool window's max) and
     * FD there mixes two slopes. pattern() fingerprints every ReLU's on/off
     * state and every pool window's argmax; a probe whose +eps or -eps
     * pattern differs from the base one crossed a kink and is inconclusive.
     * Everywhere else the loss is smooth along the probe and FD must match,
     * and at least 90% of the probes must be conclusive. */
    const float eps = 5e-4f;
    const double atol = 1e-3, rtol = 5e-3;
    size_t inconclusive = 0;
    uint32_t base;
    int rc = tr_model_init(&m, d, batch, arena, sizeof arena);

    TH_CHECK(rc == 0, "%s: init %d", name, rc);
    if (rc) { free(x); return; }
    m.kernels = kernels;
    tr_model_init_params(&m, 11);
    for (i = 0; i < n; i++)
        lab[i] = (uint8_t)((i * 7 + 1) % m.classes);
    run_floats = m.n_buffers;
    keepbuf = tc_zeros(run_floats + 1);
    memcpy(keepbuf, m.buffers, run_floats * sizeof(float));
    tr_model_forward(&m, x, n, 1);
    tr_model_loss(&m, lab, &loss, NULL);
    tr_model_backward(&m);
    g = tc_zeros(m.n_params);
    memcpy(g, m.grads, m.n_params * sizeof(float));
    base = pattern(&m, x, n);
    for (i = 0; i < m.n_params; i++) {
        float keep = m.params[i];
        double lp, lm, fd;
        uint32_t pp, pm;
        m.params[i] = keep + eps;
        tr_model_forward(&m, x, n, 1);
        lp = ce_double(&m, lab, n);
        pp = pattern(&m, x, n);
        m.params[i] = keep - eps;
        tr_model_forward(&m, x, n, 1);
        lm = ce_double(&m, lab, n);
        pm = pattern(&m, x, n);
        m.params[i] = keep;
        if (pp != base || pm != base) {
            inconclusive++;
            continue;
        }
        fd = (lp - lm) / ((double)(keep + eps) - (double)(keep - eps));
        if (!(fabs(fd - g[i]) <= atol + rtol * fabs(g[i]))) {
            if (bad++ < 3)
                fprintf(stderr, "  %s param %zu: analytic %.7g fd %.7g\n", name, i, g[i], fd);
        }
    }
    TH_CHECK(inconclusive * 10 <= m.n_params, "%s: %zu of %zu probes hit a kink", name,
             inconclusive, m.n_params);
    printf("%s: %zu parameters, %zu probes inconclusive (kink within eps)\n", name,
           m.n_params, inconclusive);
    TH_CHECK(bad == 0, "%s: %zu of %zu parameter gradients off", name, bad, m.n_params);
    /* the running stats moved (train forward) and eval differs from train */
    TH_CHECK(run_floats == 0 || memcmp(keepbuf, m.buffers, run_floats * sizeof(float)) != 0,
             "%s: running stats updated", name);
    free(x); free(g); free(keepbuf);
}

static void model_cases(void)
{
    struct tr_model_desc d;
    int k;
    memset(&d, 0, sizeof d);
    /* 2x7x6 -> conv(3,k3,p1) -> BN -> ReLU -> pool2 -> conv(4,k2,s2,p1) -> flatten -> linear(5) */
    d.in_c = 2; d.in_h = 7; d.in_w = 6; d.n_layers = 7;
    d.layer[0].kind = TR_LAYER_CONV2D; d.layer[0].kernel = 3; d.layer[0].stride = 1;
    d.layer[0].pad = 1; d.layer[0].out = 3;
    d.layer[1].kind = TR_LAYER_BATCHNORM2D;
    d.layer[2].kind = TR_LAYER_RELU;
    d.layer[3].kind = TR_LAYER_MAXPOOL2D; d.layer[3].kernel = 2; d.layer[3].stride = 2;
    d.layer[4].kind = TR_LAYER_CONV2D; d.layer[4].kernel = 2; d.layer[4].stride = 2;
    d.layer[4].pad = 1; d.layer[4].out = 4;
    d.layer[5].kind = TR_LAYER_FLATTEN;
    d.layer[6].kind = TR_LAYER_LINEAR; d.layer[6].out = 5;
    for (k = 0; k < 2; k++) {
        model_case(&d, 4, 4, k ? TR_KERNELS_REF : TR_KERNELS_FAST, k ? "model ref b4" : "model fast b4");
        model_case(&d, 5, 3, k ? TR_KERNELS_REF : TR_KERNELS_FAST, k ? "model ref n3<b5" : "model fast n3<b5");
    }
    /* a narrow seed ConvNet, batch 2 */
    tr_model_desc_convnet(&d, 2, 3, 10);
    model_case(&d, 2, 2, TR_KERNELS_FAST, "narrow convnet b2");
}

int main(void)
{
    tr_rng_seed(&tc_rng, 2024, 9);
    conv_cases();
    linear_cases();
    bn_cases();
    relu_pool_cases();
    pool_ties();
    model_cases();
    return th_report("core_grad");
}
