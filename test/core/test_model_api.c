/* test_model_api: the size query equals what init uses, too-small and
 * unaligned arenas, bad descriptions, forward/loss/backward argument errors,
 * deterministic init, the layout hash, and that nothing writes outside the
 * arena during a training step. */
#include "harness.h"
#include "tinyring.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CANARY 0xA5u
static uint8_t big[8u << 20] TR_ARENA_ALIGNED;   /* 8 MiB, enough for batch 10 */

static int size_of(const struct tr_model_desc *d, unsigned batch, size_t *b)
{
    return tr_model_arena_size(d, batch, b);
}

static void test_sizes(void)
{
    static const unsigned widths[3][2] = {{16, 32}, {4, 8}, {1, 1}};
    static const unsigned batches[4] = {1, 3, 10, 17};
    struct tr_model_desc d;
    struct tr_model m;
    unsigned wi, bi;

    for (wi = 0; wi < 3; wi++)
        for (bi = 0; bi < 4; bi++) {
            size_t need = 0;
            int rc;
            tr_model_desc_convnet(&d, widths[wi][0], widths[wi][1], 10);
            rc = size_of(&d, batches[bi], &need);
            TH_CHECK(rc == 0 && need > 0, "size query rc %d", rc);
            if (need + 64 > sizeof big) {
                TH_CHECK(0, "test arena too small for %zu", need);
                continue;
            }
            memset(big, CANARY, need + 64);
            rc = tr_model_init(&m, &d, batches[bi], big, need);
            TH_CHECK(rc == 0, "init with exactly the queried size: %d", rc);
            TH_CHECK(m.arena_used == need, "arena_used %zu != query %zu", m.arena_used, need);
            TH_CHECK(big[need] == CANARY, "init wrote past the arena");
            rc = tr_model_init(&m, &d, batches[bi], big, need - 1);
            TH_CHECK(rc == TR_ERR_NOMEM, "one byte short: %d", rc);
            rc = tr_model_init(&m, &d, batches[bi], big, need / 2);
            TH_CHECK(rc == TR_ERR_NOMEM, "half: %d", rc);
            rc = tr_model_init(&m, &d, batches[bi], big, 0);
            TH_CHECK(rc == TR_ERR_NOMEM, "empty: %d", rc);
            rc = tr_model_init(&m, &d, batches[bi], big + 4, need);
            TH_CHECK(rc == TR_ERR_INVAL, "unaligned: %d", rc);
            rc = tr_model_init(&m, &d, batches[bi], NULL, need);
            TH_CHECK(rc == TR_ERR_INVAL, "NULL arena: %d", rc);
        }
    /* the seed net: 29034 parameters, 96 buffer floats */
    tr_model_desc_convnet(&d, 16, 32, 10);
    TH_CHECK(tr_model_init(&m, &d, 1, big, sizeof big) == 0, "seed init");
    TH_CHECK(m.n_params == 29034, "seed n_params %zu", m.n_params);
    TH_CHECK(m.n_buffers == 96, "seed n_buffers %zu", m.n_buffers);
    TH_CHECK(m.classes == 10 && m.batch == 1 && m.n_layers == 10, "seed shape");
    TH_CHECK(m.layer[9].in_c == 1568 && m.layer[9].in_h == 1 && m.layer[3].out_h == 14 &&
             m.layer[7].out_w == 7, "seed layer shapes");
    /* bigger batch needs more: activations scale with it */
    {
        size_t a = 0, b = 0;
        size_of(&d, 1, &a);
        size_of(&d, 2, &b);
        TH_CHECK(b > a, "batch 2 (%zu) > batch 1 (%zu)", b, a);
    }
}

static void expect_inval(const struct tr_model_desc *d, unsigned batch, const char *what)
{
    size_t b = 0;
    struct tr_model m;
    TH_CHECK(tr_model_arena_size(d, batch, &b) == TR_ERR_INVAL, "size: %s", what);
    TH_CHECK(tr_model_init(&m, d, batch, big, sizeof big) == TR_ERR_INVAL, "init: %s", what);
}

static void test_bad_descs(void)
{
    struct tr_model_desc d, g;
    tr_model_desc_convnet(&g, 16, 32, 10);

    expect_inval(&g, 0, "batch 0");
    d = g; d.n_layers = 0; expect_inval(&d, 1, "no layers");
    d = g; d.n_layers = TR_MAX_LAYERS + 1; expect_inval(&d, 1, "too many layers");
    d = g; d.n_layers = 9; expect_inval(&d, 1, "last layer not linear");
    d = g; d.in_c = 0; expect_inval(&d, 1, "zero input channels");
    d = g; d.in_h = 0; expect_inval(&d, 1, "zero input height");
    d = g; d.layer[0].kernel = 0; expect_inval(&d, 1, "conv kernel 0");
    d = g; d.layer[0].stride = 0; expect_inval(&d, 1, "conv stride 0");
    d = g; d.layer[0].out = 0; expect_inval(&d, 1, "conv 0 outputs");
    d = g; d.layer[0].kernel = 40; expect_inval(&d, 1, "conv kernel larger than padded input");
    d = g; d.layer[3].kernel = 0; expect_inval(&d, 1, "pool window 0");
    d = g; d.layer[3].pad = 1; expect_inval(&d, 1, "pool with padding");
    d = g; d.layer[7].kernel = 15; expect_inval(&d, 1, "pool window larger than input");
    d = g; d.layer[1].out = 3; expect_inval(&d, 1, "bn with out set");
    d = g; d.layer[2].kernel = 1; expect_inval(&d, 1, "relu with kernel set");
    d = g; d.layer[9].out = 0; expect_inval(&d, 1, "linear 0 outputs");
    d = g; d.layer[8].kind = TR_LAYER_RELU; expect_inval(&d, 1, "linear on unflattened input");
    d = g; d.layer[2].kind = 0; expect_inval(&d, 1, "kind 0");
    d = g; d.layer[2].kind = 42; expect_inval(&d, 1, "unknown kind");
    d = g; d.layer[0].kind = TR_LAYER_FLATTEN; d.layer[0].kernel = 0; d.layer[0].stride = 0;
    d.layer[0].pad = 0; d.layer[0].out = 0; expect_inval(&d, 1, "flatten first");
    d = g; d.layer[4].out = 2000; expect_inval(&d, 1, "flatten overflows 16 bits");
    TH_CHECK(tr_model_arena_size(NULL, 1, NULL) == TR_ERR_INVAL, "NULL desc");
    {   /* the smallest valid model: flatten then linear, and a 1x1 linear */
        size_t b = 0;
        d = g; d.n_layers = 2;
        d.layer[0] = g.layer[2]; d.layer[0].kind = TR_LAYER_RELU;
        d.layer[1] = g.layer[8];
        d.layer[2] = g.layer[9];
        d.n_layers = 3;
        TH_CHECK(tr_model_arena_size(&d, 4, &b) == 0, "relu-flatten-linear is valid");
        d.in_h = 1; d.in_w = 1; d.n_layers = 1; d.layer[0] = g.layer[9];
        TH_CHECK(tr_model_arena_size(&d, 4, &b) == 0, "linear on 1x1 input is valid");
    }
}

static void test_runtime(void)
{
    struct tr_model_desc d;
    struct tr_model m, m2;
    size_t need = 0;
    float *x;
    uint8_t lab[10];
    float loss = -1.0f, loss2;
    unsigned correct = 99, i;

    tr_model_desc_convnet(&d, 4, 8, 10);
    size_of(&d, 10, &need);
    memset(big, CANARY, sizeof big);
    TH_CHECK(tr_model_init(&m, &d, 10, big, need) == 0, "init");
    for (i = 0; i < m.n_params; i++)
        if (m.params[i] != 0.0f || m.momentum[i] != 0.0f) break;
    TH_CHECK(i == m.n_params, "params and momentum zero after init");
    tr_model_init_params(&m, 5);
    x = malloc(10 * 784 * sizeof *x);
    for (i = 0; i < 10 * 784; i++)
        x[i] = (float)((i * 37u) % 101u) / 50.0f - 1.0f;
    for (i = 0; i < 10; i++)
        lab[i] = (uint8_t)(i * 3 % 10);
    TH_CHECK(tr_model_backward(&m) == TR_ERR_INVAL, "backward before any forward");
    TH_CHECK(tr_model_forward(&m, x, 11, 1) == TR_ERR_INVAL, "n > batch");
    TH_CHECK(tr_model_forward(&m, x, 0, 1) == TR_ERR_INVAL, "n == 0");
    TH_CHECK(tr_model_forward(&m, NULL, 1, 1) == TR_ERR_INVAL, "x NULL");
    TH_CHECK(tr_model_forward(&m, x, 10, 1) == 0, "forward");
    TH_CHECK(tr_model_loss(&m, lab, &loss, &correct) == 0, "loss");
    TH_CHECK(loss > 0.5f && loss < 10.0f && correct <= 10, "loss %g correct %u", loss, correct);
    TH_CHECK(tr_model_backward(&m) == 0, "backward");
    lab[3] = 10;
    TH_CHECK(tr_model_loss(&m, lab, &loss2, NULL) == TR_ERR_INVAL, "label out of range");
    lab[3] = 9;
    {
        struct tr_sgd s;
        tr_sgd_init(&s);
        tr_sgd_step(&s, m.params, m.grads, m.momentum, m.n_params);
    }
    TH_CHECK(big[need] == CANARY && big[need + 1000] == CANARY, "a training step stayed in the arena");
    /* n < batch, then eval mode; backward after eval is refused */
    TH_CHECK(tr_model_forward(&m, x, 3, 1) == 0 && tr_model_loss(&m, lab, &loss, NULL) == 0 &&
             tr_model_backward(&m) == 0, "partial batch train step");
    TH_CHECK(tr_model_forward(&m, x, 7, 0) == 0, "eval forward");
    TH_CHECK(tr_model_loss(&m, lab, NULL, &correct) == 0 && correct <= 7, "eval loss");
    TH_CHECK(tr_model_backward(&m) == TR_ERR_INVAL, "backward after eval forward");
    /* the loss of a partial batch equals the loss of a model built for it */
    {
        static uint8_t small[4u << 20] TR_ARENA_ALIGNED;
        size_t n2 = 0;
        float l1, l2;
        size_of(&d, 3, &n2);
        TH_CHECK(tr_model_init(&m2, &d, 3, small, sizeof small) == 0, "init batch 3");
        memcpy(m2.params, m.params, m.n_params * sizeof(float));
        memcpy(m2.buffers, m.buffers, m.n_buffers * sizeof(float));
        tr_model_forward(&m, x, 3, 0);
        tr_model_loss(&m, lab, &l1, NULL);
        tr_model_forward(&m2, x, 3, 0);
        tr_model_loss(&m2, lab, &l2, NULL);
        TH_CHECK(l1 == l2, "eval loss n=3 of batch-10 model %g vs batch-3 model %g", l1, l2);
    }
    /* init_params: same seed same bits, other seed different, bounds */
    {
        float *copy = malloc(m.n_params * sizeof *copy);
        float bound = 1.0f / sqrtf(25.0f);
        int inb = 1;
        tr_model_init_params(&m, 77);
        memcpy(copy, m.params, m.n_params * sizeof *copy);
        tr_model_init_params(&m, 77);
        TH_CHECK(memcmp(copy, m.params, m.n_params * sizeof *copy) == 0, "same seed, same bits");
        tr_model_init_params(&m, 78);
        TH_CHECK(memcmp(copy, m.params, m.n_params * sizeof *copy) != 0, "other seed differs");
        for (i = 0; i < m.layer[0].p_len; i++)
            if (fabsf(m.params[i]) > bound) inb = 0;
        TH_CHECK(inb, "conv1 params within 1/sqrt(fan_in)");
        TH_CHECK(m.params[m.layer[1].p_off] == 1.0f && m.params[m.layer[1].p_off + 4] == 0.0f &&
                 m.buffers[0] == 0.0f && m.buffers[4] == 1.0f, "BN init");
        free(copy);
    }
    /* layout hash: equal for equal layouts, different otherwise */
    {
        struct tr_model a, b;
        static uint8_t aa[4u << 20] TR_ARENA_ALIGNED, bb[4u << 20] TR_ARENA_ALIGNED;
        struct tr_model_desc d2;
        tr_model_desc_convnet(&d2, 4, 8, 10);
        tr_model_init(&a, &d2, 2, aa, sizeof aa);
        tr_model_init(&b, &d2, 5, bb, sizeof bb);
        TH_CHECK(tr_model_layout_hash(&a) == tr_model_layout_hash(&b), "hash ignores batch");
        tr_model_desc_convnet(&d2, 4, 9, 10);
        tr_model_init(&b, &d2, 2, bb, sizeof bb);
        TH_CHECK(tr_model_layout_hash(&a) != tr_model_layout_hash(&b), "hash sees channels");
        d2 = a.desc;
        d2.layer[0].pad = 1;
        d2.layer[0].kernel = 3;
        tr_model_init(&b, &d2, 2, bb, sizeof bb);
        TH_CHECK(tr_model_layout_hash(&a) != tr_model_layout_hash(&b), "hash sees kernel");
    }
    free(x);
}

/* BatchNorm with one value per channel (a 1x1 map at batch 1) cannot train:
 * PyTorch refuses ("Expected more than 1 value per channel when training");
 * so does tinyring, at init when the batch makes it certain, else at a
 * training forward of one sample. Eval forward stays allowed. */
static void test_bn_single_value(void)
{
    static uint8_t a[1u << 16] TR_ARENA_ALIGNED;
    struct tr_model_desc d;
    struct tr_model m;
    float x[2 * 3] = {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f};
    uint8_t lab[2] = {0, 1};
    float loss;
    size_t b = 0;
    unsigned i, nz = 0;

    memset(&d, 0, sizeof d);
    d.in_c = 3; d.in_h = 1; d.in_w = 1; d.n_layers = 3;
    d.layer[0].kind = TR_LAYER_BATCHNORM2D;
    d.layer[1].kind = TR_LAYER_FLATTEN;
    d.layer[2].kind = TR_LAYER_LINEAR; d.layer[2].out = 2;
    expect_inval(&d, 1, "BN on a 1x1 map at batch 1");
    TH_CHECK(tr_model_arena_size(&d, 2, &b) == 0 && tr_model_init(&m, &d, 2, a, sizeof a) == 0,
             "BN on a 1x1 map at batch 2 lays out");
    tr_model_init_params(&m, 1);
    TH_CHECK(tr_model_forward(&m, x, 1, 1) == TR_ERR_INVAL, "train forward of 1 sample refused");
    TH_CHECK(tr_model_backward(&m) == TR_ERR_INVAL, "nothing to backward after the refusal");
    TH_CHECK(tr_model_forward(&m, x, 1, 0) == 0, "eval forward of 1 sample allowed");
    TH_CHECK(tr_model_forward(&m, x, 2, 1) == 0 && tr_model_loss(&m, lab, &loss, NULL) == 0 &&
             tr_model_backward(&m) == 0, "train step of 2 samples");
    for (i = 0; i < 6; i++)   /* BN gamma and beta get gradients again */
        nz += m.grads[i] != 0.0f;
    TH_CHECK(nz >= 3, "BN gradients nonzero at 2 values per channel (%u of 6)", nz);
    /* the seed net's BN see 28x28 and 14x14 maps: batch 1 is fine */
    tr_model_desc_convnet(&d, 4, 8, 10);
    TH_CHECK(tr_model_arena_size(&d, 1, &b) == 0, "seed-shaped net at batch 1");
}

int main(void)
{
    test_sizes();
    test_bn_single_value();
    test_bad_descs();
    test_runtime();
    return th_report("core_model_api");
}
