/* test_lean: the lean plan computes the fast plan's bits, and its arena is
 * what the size query says.
 *
 * For a set of models covering every role (the seed and narrow ConvNets; a
 * recomputed first conv with 3 input channels and stride 2; BN first; blocks
 * without ReLU, with overlapping and 3x3 pools, back to back; a BN or ReLU
 * that is no block; a stream in the middle of the net; a pool on a 1x1
 * output streamed without Flatten) at several batch sizes, with n = batch
 * and n < batch: two models, fast and lean, with the same parameters, run
 * training steps side by side. After each forward and backward every stored
 * layer output, every BN's batch statistics and running statistics, the
 * loss and every parameter gradient are compared bitwise; then SGD; then an
 * eval forward. Also: the size query equals what init uses, one byte less
 * is TR_ERR_NOMEM, the layout hash is the plan's blind spot, and the seed
 * net's roles and stored buffers are the documented ones. */
#include "harness.h"
#ifndef TEST_SUITE
#define TEST_SUITE "core_lean"
#endif
#include "tc_util.h"
#include <stdio.h>

static uint8_t arena_f[32u << 20] TR_ARENA_ALIGNED, arena_l[8u << 20] TR_ARENA_ALIGNED;

static void add(struct tr_model_desc *d, unsigned kind, unsigned k, unsigned s, unsigned p,
                unsigned out)
{
    struct tr_layer_desc *l = &d->layer[d->n_layers++];
    l->kind = (uint8_t)kind;
    l->kernel = (uint8_t)k;
    l->stride = (uint8_t)s;
    l->pad = (uint8_t)p;
    l->out = (uint16_t)out;
}

static void start(struct tr_model_desc *d, unsigned c, unsigned h, unsigned w)
{
    memset(d, 0, sizeof *d);
    d->in_c = (uint16_t)c;
    d->in_h = (uint16_t)h;
    d->in_w = (uint16_t)w;
}

enum { CONV = TR_LAYER_CONV2D, BN = TR_LAYER_BATCHNORM2D, RELU = TR_LAYER_RELU,
       POOL = TR_LAYER_MAXPOOL2D, FLAT = TR_LAYER_FLATTEN, LIN = TR_LAYER_LINEAR };

/* the models, by number */
static int model(struct tr_model_desc *d, unsigned which, const char **name)
{
    switch (which) {
    case 0: *name = "seed 16/32"; tr_model_desc_convnet(d, 16, 32, 10); return 1;
    case 1: *name = "narrow 4/8"; tr_model_desc_convnet(d, 4, 8, 10); return 1;
    case 2:
        *name = "conv k3 p1 - BN - ReLU - pool2 - conv k2 s2 p1 - flatten - linear";
        start(d, 2, 7, 6);
        add(d, CONV, 3, 1, 1, 3); add(d, BN, 0, 0, 0, 0); add(d, RELU, 0, 0, 0, 0);
        add(d, POOL, 2, 2, 0, 0); add(d, CONV, 2, 2, 1, 4); add(d, FLAT, 0, 0, 0, 0);
        add(d, LIN, 0, 0, 0, 5);
        return 1;
    case 3:
        *name = "BN first - ReLU - pool2 - conv - BN - pool3 s2 (no ReLU) - flatten - linear";
        start(d, 3, 9, 8);
        add(d, BN, 0, 0, 0, 0); add(d, RELU, 0, 0, 0, 0); add(d, POOL, 2, 2, 0, 0);
        add(d, CONV, 3, 1, 1, 4); add(d, BN, 0, 0, 0, 0); add(d, POOL, 3, 2, 0, 0);
        add(d, FLAT, 0, 0, 0, 0); add(d, LIN, 0, 0, 0, 6);
        return 1;
    case 4:
        *name = "conv 3ch k3 s2 p1 (recomputed) - BN - ReLU - pool3 s3 - flatten - linear";
        start(d, 3, 13, 11);
        add(d, CONV, 3, 2, 1, 5); add(d, BN, 0, 0, 0, 0); add(d, RELU, 0, 0, 0, 0);
        add(d, POOL, 3, 3, 0, 0); add(d, FLAT, 0, 0, 0, 0); add(d, LIN, 0, 0, 0, 4);
        return 1;
    case 5:
        *name = "conv - BN - ReLU - conv - ReLU - pool2 - flatten - linear (no block)";
        start(d, 1, 10, 9);
        add(d, CONV, 3, 1, 1, 3); add(d, BN, 0, 0, 0, 0); add(d, RELU, 0, 0, 0, 0);
        add(d, CONV, 3, 1, 0, 4); add(d, RELU, 0, 0, 0, 0); add(d, POOL, 2, 2, 0, 0);
        add(d, FLAT, 0, 0, 0, 0); add(d, LIN, 0, 0, 0, 3);
        return 1;
    case 6:
        *name = "conv - ReLU - BN - pool4 to 1x1 - linear (stream without flatten)";
        start(d, 1, 6, 6);
        add(d, CONV, 3, 1, 0, 2); add(d, RELU, 0, 0, 0, 0); add(d, BN, 0, 0, 0, 0);
        add(d, POOL, 4, 4, 0, 0); add(d, LIN, 0, 0, 0, 3);
        return 1;
    case 7:
        *name = "conv - BN - pool2 - flatten - linear - ReLU - linear (stream mid-net)";
        start(d, 2, 8, 7);
        add(d, CONV, 3, 1, 1, 3); add(d, BN, 0, 0, 0, 0); add(d, POOL, 2, 2, 0, 0);
        add(d, FLAT, 0, 0, 0, 0); add(d, LIN, 0, 0, 0, 7); add(d, RELU, 0, 0, 0, 0);
        add(d, LIN, 0, 0, 0, 4);
        return 1;
    case 8:
        *name = "conv - BN - ReLU - pool2 - BN - ReLU - pool2 - conv 1x1 - flatten - linear";
        start(d, 1, 12, 12);
        add(d, CONV, 5, 1, 2, 4); add(d, BN, 0, 0, 0, 0); add(d, RELU, 0, 0, 0, 0);
        add(d, POOL, 2, 2, 0, 0); add(d, BN, 0, 0, 0, 0); add(d, RELU, 0, 0, 0, 0);
        add(d, POOL, 2, 2, 0, 0); add(d, CONV, 1, 1, 0, 3); add(d, FLAT, 0, 0, 0, 0);
        add(d, LIN, 0, 0, 0, 5);
        return 1;
    case 9:
        *name = "pool2 - conv - BN - ReLU - pool2 s1 (overlapping) - flatten - linear";
        start(d, 2, 11, 10);
        add(d, POOL, 2, 2, 0, 0); add(d, CONV, 3, 1, 1, 6); add(d, BN, 0, 0, 0, 0);
        add(d, RELU, 0, 0, 0, 0); add(d, POOL, 2, 1, 0, 0); add(d, FLAT, 0, 0, 0, 0);
        add(d, LIN, 0, 0, 0, 3);
        return 1;
    case 10:
        *name = "conv s2 - BN - ReLU - pool2 (odd map) - conv - BN - ReLU - pool2 - flatten - linear";
        start(d, 1, 17, 15);
        add(d, CONV, 3, 2, 1, 4); add(d, BN, 0, 0, 0, 0); add(d, RELU, 0, 0, 0, 0);
        add(d, POOL, 2, 2, 0, 0); add(d, CONV, 3, 1, 1, 5); add(d, BN, 0, 0, 0, 0);
        add(d, RELU, 0, 0, 0, 0); add(d, POOL, 2, 2, 0, 0); add(d, FLAT, 0, 0, 0, 0);
        add(d, LIN, 0, 0, 0, 10);
        return 1;
    default:
        return 0;
    }
}

static int same(const float *a, const float *b, size_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof(float)) == 0;
}

static size_t out_floats(const struct tr_layer *l, unsigned n)
{
    return (size_t)n * l->out_c * l->out_h * l->out_w;
}

/* after a forward: every output the lean plan stores (its backward writes
 * gradients over some of them); after a backward: the BN batch statistics
 * and every parameter gradient; both times the running statistics */
static int compare(const struct tr_model *f, const struct tr_model *l, unsigned n, int grads,
                   const char *what)
{
    unsigned i;
    int ok = 1;

    for (i = 0; i < f->n_layers; i++) {
        const struct tr_layer *fl = &f->layer[i], *ll = &l->layer[i];
        if (!grads && ll->out && ll->out != (i ? l->layer[i - 1].out : NULL) &&
            !same(fl->out, ll->out, out_floats(fl, n))) {
            TH_CHECK(0, "%s: layer %u output differs", what, i);
            ok = 0;
        }
        if (fl->d.kind == TR_LAYER_BATCHNORM2D && grads &&
            !same(fl->save, ll->save, 2u * fl->in_c)) {
            TH_CHECK(0, "%s: layer %u BN batch statistics differ", what, i);
            ok = 0;
        }
        if (grads && !same(f->grads + fl->p_off, l->grads + ll->p_off, fl->p_len)) {
            TH_CHECK(0, "%s: layer %u parameter gradients differ", what, i);
            ok = 0;
        }
    }
    if (!same(f->buffers, l->buffers, f->n_buffers)) {
        TH_CHECK(0, "%s: BN running statistics differ", what);
        ok = 0;
    }
    return ok;
}

/* opts: the lean model's (0, or TR_MODEL_ONE_PLANE: the recomputed conv
 * made again by every pass, the same bits) */
static void train_side_by_side(const struct tr_model_desc *d0, unsigned batch, const char *name,
                               unsigned opts)
{
    struct tr_model_desc d = *d0;
    struct tr_model f, l;
    struct tr_sgd sf, sl;
    size_t in = (size_t)d.in_c * d.in_h * d.in_w, need = 0;
    float *x = tc_rand(batch * in, -1.5f, 2.0f), lf, ll;
    uint8_t lab[96];
    unsigned step, i;
    int ok = 1, rc;
    char what[160];
    void *exact = NULL;

    d.plan = TR_PLAN_FAST;
    rc = tr_model_init(&f, &d, batch, arena_f, sizeof arena_f);
    d.plan = TR_PLAN_LEAN;
    rc |= tr_model_init_opt(&l, &d, batch, opts, arena_l, sizeof arena_l);
    TH_CHECK(rc == 0, "%s b%u: init", name, batch);
    if (rc) { free(x); return; }
    TH_CHECK(tr_model_layout_hash(&f) == tr_model_layout_hash(&l), "%s: layout hash", name);
    /* the size query on the lean plan: exact, and one byte less does not fit */
    TH_CHECK(tr_model_arena_size_opt(&d, batch, opts, &need) == 0 && need == l.arena_used,
             "%s b%u: size query %zu, init used %zu", name, batch, need, l.arena_used);
    {   /* the exact size trains: a heap block of it, so the sanitizers see
         * any byte written past the arena */
        struct tr_model t;
        TH_CHECK(tr_model_init_opt(&t, &d, batch, opts, arena_l, need - 1) == TR_ERR_NOMEM,
                 "%s b%u: one byte short", name, batch);
        if (posix_memalign(&exact, TR_ARENA_ALIGN, need) != 0 ||
            tr_model_init_opt(&l, &d, batch, opts, exact, need) != 0) {
            TH_CHECK(0, "%s b%u: init in exactly %zu bytes", name, batch, need);
            free(x);
            free(exact);
            return;
        }
    }
    tr_model_init_params(&f, 5);
    tr_model_init_params(&l, 5);
    tr_sgd_init(&sf);
    tr_sgd_init(&sl);
    sf.lr = sl.lr = 0.05f;
    for (step = 0; step < 3 && ok; step++) {
        const unsigned n = step == 1 && batch > 2 ? batch - 1 : batch;
        for (i = 0; i < n; i++)
            lab[i] = (uint8_t)((i * 7 + step) % f.classes);
        for (i = 0; i < n * in; i++)
            x[i] = tr_rng_uniform(&tc_rng, -1.5f, 2.0f);
        snprintf(what, sizeof what, "%s b%u n%u step %u opts %u", name, batch, n, step, opts);
        rc = tr_model_forward(&f, x, n, 1) | tr_model_forward(&l, x, n, 1);
        rc |= tr_model_loss(&f, lab, &lf, NULL) | tr_model_loss(&l, lab, &ll, NULL);
        TH_CHECK(rc == 0, "%s: forward, loss", what);
        TH_CHECK(memcmp(&lf, &ll, sizeof lf) == 0, "%s: loss %.9g vs %.9g", what, lf, ll);
        ok &= compare(&f, &l, n, 0, what);
        rc = tr_model_backward(&f) | tr_model_backward(&l);
        TH_CHECK(rc == 0, "%s: backward", what);
        ok &= compare(&f, &l, n, 1, what);
        tr_sgd_step(&sf, f.params, f.grads, f.momentum, f.n_params);
        tr_sgd_step(&sl, l.params, l.grads, l.momentum, l.n_params);
        TH_CHECK(same(f.params, l.params, f.n_params), "%s: parameters after SGD", what);
    }
    TH_CHECK(ok, "%s b%u: training steps bitwise equal", name, batch);
    rc = tr_model_forward(&f, x, batch, 0) | tr_model_forward(&l, x, batch, 0);
    TH_CHECK(rc == 0 && same(tr_model_logits(&f), tr_model_logits(&l), (size_t)batch * f.classes),
             "%s b%u: eval logits", name, batch);
    TH_CHECK(tr_model_backward(&l) == TR_ERR_INVAL, "%s: backward after eval refused", name);
    l.kernels = TR_KERNELS_REF;
    TH_CHECK(tr_model_forward(&l, x, batch, 1) == TR_ERR_INVAL,
             "%s: reference kernels refused on the lean plan", name);
    free(x);
    free(exact);
}

/* The seed net on the lean plan: the documented roles and buffers */
static void seed_roles(void)
{
    static const uint8_t roles[10] = {
        TR_ROLE_RECOMPUTED, TR_ROLE_BLOCK, TR_ROLE_IN_BLOCK, TR_ROLE_IN_BLOCK, TR_ROLE_LAYER,
        TR_ROLE_BLOCK, TR_ROLE_IN_BLOCK, TR_ROLE_IN_BLOCK, TR_ROLE_IN_BLOCK, TR_ROLE_STREAM
    };
    struct tr_model_desc d;
    struct tr_model m;
    unsigned i, ok = 1;

    tr_model_desc_convnet(&d, 16, 32, 10);
    d.plan = TR_PLAN_LEAN;
    TH_CHECK(tr_model_init(&m, &d, 4, arena_l, sizeof arena_l) == 0, "seed lean init");
    for (i = 0; i < 10; i++)
        ok &= m.layer[i].role == roles[i];
    TH_CHECK(ok, "seed net roles on the lean plan");
    for (i = 0, ok = 1; i < 10; i++)    /* stored: pool1, conv2, the logits */
        ok &= (m.layer[i].out != NULL) == (i == 3 || i == 4 || i == 9);
    TH_CHECK(ok, "seed net stores only pool1, conv2 and the logits");
    TH_CHECK(m.dbuf[0] == m.dbuf[1],
             "seed net needs no gradient buffers (all in place)");
    TH_CHECK(m.layer[4].band == 8, "seed conv2 at batch 4 in bands of 8 positions (%zu)",
             m.layer[4].band);
    TH_CHECK(tr_model_init(&m, &d, 96, arena_l, sizeof arena_l) == 0 && m.layer[4].band == 0,
             "seed conv2 at batch 96 on the whole-image kernels (%zu)", m.layer[4].band);
    d.plan = 2;
    TH_CHECK(tr_model_arena_size(&d, 1, NULL) == TR_ERR_INVAL, "unknown plan refused");
    d.plan = TR_PLAN_FAST;
    TH_CHECK(tr_model_init(&m, &d, 4, arena_f, sizeof arena_f) == 0, "seed fast init");
    for (i = 0, ok = 1; i < 10; i++)   /* fused blocks, every output stored */
        ok &= m.layer[i].role == (i == 1 || i == 5 ? TR_ROLE_BLOCK
                                  : i == 2 || i == 3 || i == 6 || i == 7 ? TR_ROLE_IN_BLOCK
                                  : TR_ROLE_LAYER) &&
              (m.layer[i].out != NULL);
    TH_CHECK(ok, "the fast plan fuses the BN blocks and stores every output");
}

int main(void)
{
    static const unsigned batches[] = {1, 2, 3, 5};
    struct tr_model_desc d;
    const char *name;
    unsigned w, b;

    tr_rng_seed(&tc_rng, 31, 7);
    seed_roles();
    for (w = 0; model(&d, w, &name); w++)
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++) {
            size_t need;
            if (w == 0 && batches[b] > 3)
                continue;                 /* the seed net: batch 1..3 is enough */
            if (tr_model_arena_size(&d, batches[b], &need) != 0) {
                TH_CHECK(0, "%s: size query", name);
                continue;
            }
            train_side_by_side(&d, batches[b], name, 0);
            train_side_by_side(&d, batches[b], name, TR_MODEL_ONE_PLANE);
        }
    /* at batch 96 the seed's conv2 runs the whole-image kernels on the lean
     * plan too (their scratch fits in an eighth of the stored activations),
     * its input gradient written over its input */
    {   /* the narrow net on the lean plan: one plane is smaller at batch 4
         * (three conv1 planes of 28 x 28 floats less), the same at batch 1 */
        size_t one = 0, all = 0, one1 = 0, all1 = 0;
        tr_model_desc_convnet(&d, 4, 8, 10);
        d.plan = TR_PLAN_LEAN;
        TH_CHECK(tr_model_arena_size_opt(&d, 4, TR_MODEL_ONE_PLANE, &one) == 0 &&
                 tr_model_arena_size_opt(&d, 4, 0, &all) == 0 && one + 3u * 784u * 4u <= all,
                 "narrow b4: one plane %zu bytes, one per sample %zu", one, all);
        TH_CHECK(tr_model_arena_size_opt(&d, 1, TR_MODEL_ONE_PLANE, &one1) == 0 &&
                 tr_model_arena_size_opt(&d, 1, 0, &all1) == 0 && one1 == all1,
                 "narrow b1: one plane %zu bytes, one per sample %zu", one1, all1);
    }
    model(&d, 0, &name);
    train_side_by_side(&d, 96, "seed 16/32 (whole-image conv2)", 0);
    train_side_by_side(&d, 96, "seed 16/32 (whole-image conv2), one plane", TR_MODEL_ONE_PLANE);
    return th_report(TEST_SUITE);
}
