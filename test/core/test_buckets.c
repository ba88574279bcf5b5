/* test_buckets: the per-layer buckets (docs/BUCKETS.md) and the model's
 * staged backward.
 *
 *   - the seed net's buckets: the linear layer, conv2 + BN2, conv1 + BN1
 *     (in that order, contiguous, covering the vector), the same on both
 *     plans;
 *   - the staged backward computes tr_model_backward's bits, and a bucket
 *     reported complete is never written again;
 *   - the bucket mode (no full gradient, one buffer of the largest bucket,
 *     SGD applied per bucket as it completes) trains bit-identical to the
 *     full gradient and one tr_sgd_step, over whole training steps, on the
 *     fast plan (fast and reference kernels) and the lean plan (whose
 *     stream completes the linear's bucket inside the block before it),
 *     with momentum and without (no momentum twin);
 *   - its arena: the size query is what init uses, one byte less is
 *     TR_ERR_NOMEM, and it is smaller than the full gradient's by what the
 *     docs say (the gradient less the largest bucket, plus a lean block's
 *     spill). */
#include "harness.h"
#include "tc_util.h"
#include <stdio.h>

static uint8_t arena_a[24u << 20] TR_ARENA_ALIGNED, arena_b[24u << 20] TR_ARENA_ALIGNED;

static void fill(float *x, uint8_t *lab, unsigned n, unsigned salt)
{
    struct tr_rng r;
    unsigned i;
    tr_rng_seed(&r, 11 + salt, 5);
    for (i = 0; i < n * 784u; i++)
        x[i] = tr_rng_uniform(&r, 0.0f, 1.0f);
    for (i = 0; i < n; i++)
        lab[i] = (uint8_t)tr_rng_below(&r, 10);
}

static void test_seed_buckets(void)
{
    struct tr_model_desc d;
    struct tr_model m;
    int plan;
    for (plan = 0; plan < 2; plan++) {
        const struct tr_layer *L;
        tr_model_desc_convnet(&d, 16, 32, 10);
        d.plan = (uint8_t)plan;
        TH_CHECK(tr_model_init(&m, &d, 2, arena_a, sizeof arena_a) == 0, "init");
        L = m.layer;
        TH_CHECK(m.n_buckets == 3 && m.bucket[0].lo == L[9].p_off && m.bucket[0].hi == m.n_params &&
                 m.bucket[1].lo == L[4].p_off && m.bucket[1].hi == L[9].p_off &&
                 m.bucket[2].lo == 0 && m.bucket[2].hi == L[4].p_off &&
                 L[5].bucket == 1 && L[1].bucket == 2 && L[2].bucket == -1,
                 "plan %d: seed buckets linear [%zu,%zu) conv2+BN2 [%zu,%zu) conv1+BN1 [%zu,%zu)",
                 plan, m.bucket[0].lo, m.bucket[0].hi, m.bucket[1].lo, m.bucket[1].hi,
                 m.bucket[2].lo, m.bucket[2].hi);
        TH_CHECK(m.bucket[0].hi - m.bucket[0].lo == 15690 && m.bucket[1].hi - m.bucket[1].lo == 12896 &&
                 m.bucket[2].hi == 448, "the seed's bucket sizes 15690, 12896, 448 floats");
    }
}

/* Staged backward on a full-gradient model: the bits of tr_model_backward,
 * and every bucket unchanged from the stage that completed it to the end. */
static void test_staged(unsigned c1, unsigned c2, int plan, int ref, unsigned batch)
{
    static float x[8 * 784], snap[32000];
    struct tr_model_desc d;
    struct tr_model a, b;
    uint8_t lab[8];
    unsigned done = 0, k;
    int rc, ok = 1, order_ok = 1;
    tr_model_desc_convnet(&d, c1, c2, 10);
    d.plan = (uint8_t)plan;
    tr_model_init(&a, &d, batch, arena_a, sizeof arena_a);
    tr_model_init(&b, &d, batch, arena_b, sizeof arena_b);
    tr_model_init_params(&a, 9);
    tr_model_init_params(&b, 9);
    a.kernels = b.kernels = ref ? TR_KERNELS_REF : TR_KERNELS_FAST;
    fill(x, lab, batch, c1);
    tr_model_forward(&a, x, batch, 1);
    tr_model_loss(&a, lab, NULL, NULL);
    tr_model_backward(&a);
    tr_model_forward(&b, x, batch, 1);
    tr_model_loss(&b, lab, NULL, NULL);
    tr_model_backward_begin(&b);
    for (k = 0; k < b.n_params; k++)
        b.grads[k] = 1e30f;                /* stale values that must all be overwritten */
    while ((rc = tr_model_backward_stage(&b)) >= 0) {
        while (done < tr_model_buckets_done(&b)) {
            const struct tr_bucket *q = &b.bucket[done];
            for (k = q->lo; k < q->hi; k++)
                snap[k] = b.grads[k];
            done++;
        }
        if (rc == 0)
            break;
    }
    for (k = 0; k < b.n_params; k++)
        ok &= memcmp(&snap[k], &a.grads[k], 4) == 0 && memcmp(&b.grads[k], &a.grads[k], 4) == 0;
    order_ok = rc == 0 && done == b.n_buckets;
    TH_CHECK(ok && order_ok, "%u/%u plan %d%s batch %u: staged backward = backward, each bucket final "
             "when reported (rc %d, %u of %u buckets)", c1, c2, plan, ref ? " ref" : "", batch, rc,
             done, b.n_buckets);
}

/* steps of SGD: a full gradient and tr_sgd_step (a) against the bucket mode
 * with tr_sgd_apply per bucket as it completes (b) */
static void test_inplace(unsigned c1, unsigned c2, int plan, int ref, unsigned batch, float mu)
{
    static float x[8 * 784];
    struct tr_model_desc d;
    struct tr_model a, b;
    struct tr_sgd sa, sb;
    uint8_t lab[8];
    unsigned step, opts = TR_MODEL_GRAD_BUCKET | (mu == 0.0f ? TR_MODEL_NO_MOMENTUM : 0u);
    size_t need, full;
    int ok = 1, busy_seen = 0, bad_rc = 0;
    tr_model_desc_convnet(&d, c1, c2, 10);
    d.plan = (uint8_t)plan;
    tr_model_arena_size(&d, batch, &full);
    TH_CHECK(tr_model_arena_size_opt(&d, batch, opts, &need) == 0 && need < full &&
             tr_model_init_opt(&b, &d, batch, opts, arena_b, need - 1) == TR_ERR_NOMEM &&
             tr_model_init_opt(&b, &d, batch, opts, arena_b, need) == 0 && b.arena_used == need &&
             (mu != 0.0f) == (b.momentum != NULL),
             "%u/%u plan %d batch %u opts %u: query %zu = used %zu, one byte less NOMEM (full %zu)",
             c1, c2, plan, batch, opts, need, b.arena_used, full);
    tr_model_init(&a, &d, batch, arena_a, sizeof arena_a);
    tr_model_init_params(&a, 4);
    tr_model_init_params(&b, 4);
    a.kernels = b.kernels = ref ? TR_KERNELS_REF : TR_KERNELS_FAST;
    tr_sgd_init(&sa);
    sa.lr = 0.05f;
    sa.momentum = mu;
    sb = sa;
    TH_CHECK(tr_model_backward(&b) == TR_ERR_INVAL, "bucket mode: whole backward refused");
    for (step = 0; step < 3; step++) {
        int rc;
        unsigned applied = 0;
        fill(x, lab, batch, step);
        tr_model_forward(&a, x, batch, 1);
        tr_model_loss(&a, lab, NULL, NULL);
        tr_model_backward(&a);
        tr_sgd_step(&sa, a.params, a.grads, a.momentum, a.n_params);
        tr_model_forward(&b, x, batch, 1);
        tr_model_loss(&b, lab, NULL, NULL);
        tr_model_backward_begin(&b);
        for (;;) {
            rc = tr_model_backward_stage(&b);
            if (rc == TR_ERR_BUSY) {
                const struct tr_bucket *q = &b.bucket[applied];
                busy_seen = 1;
                tr_sgd_apply(&sb, b.params + q->lo, tr_model_bucket_grads(&b, applied),
                             b.momentum ? b.momentum + q->lo : NULL, q->hi - q->lo);
                tr_model_bucket_next(&b);
                applied++;
                continue;
            }
            if (rc <= 0)
                break;
        }
        bad_rc |= rc != 0;
        while (applied < tr_model_buckets_done(&b)) {     /* the last one(s) */
            const struct tr_bucket *q = &b.bucket[applied];
            tr_sgd_apply(&sb, b.params + q->lo, tr_model_bucket_grads(&b, applied),
                         b.momentum ? b.momentum + q->lo : NULL, q->hi - q->lo);
            tr_model_bucket_next(&b);
            applied++;
        }
        sb.started = 1;
        ok &= applied == b.n_buckets;
        ok &= memcmp(a.params, b.params, a.n_params * sizeof(float)) == 0;
        ok &= memcmp(a.buffers, b.buffers, a.n_buffers * sizeof(float)) == 0;
        if (b.momentum)
            ok &= memcmp(a.momentum, b.momentum, a.n_params * sizeof(float)) == 0;
    }
    TH_CHECK(ok && busy_seen && !bad_rc,
             "%u/%u plan %d%s batch %u momentum %g: 3 steps of SGD bucket by bucket = full "
             "gradient (params, momentum, BN statistics bitwise)", c1, c2, plan, ref ? " ref" : "",
             batch, (double)mu);
}

int main(void)
{
    static const unsigned nets[2][2] = {{16, 32}, {4, 8}};
    unsigned i, batch;
    int plan;
    test_seed_buckets();
    for (i = 0; i < 2; i++)
        for (batch = 1; batch <= 4; batch += 3)
            for (plan = 0; plan < 2; plan++) {
                test_staged(nets[i][0], nets[i][1], plan, 0, batch);
                test_inplace(nets[i][0], nets[i][1], plan, 0, batch, 0.9f);
                test_inplace(nets[i][0], nets[i][1], plan, 0, batch, 0.0f);
                if (plan == TR_PLAN_FAST) {
                    test_staged(nets[i][0], nets[i][1], plan, 1, batch);
                    test_inplace(nets[i][0], nets[i][1], plan, 1, batch, 0.9f);
                }
            }
    return th_report("core_buckets");
}
