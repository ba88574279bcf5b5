/* A minimal bare-metal image around core, the same source on every target
 * (Cortex-M4F, RV32IMAFC, Cortex-M55 under QEMU) and on the host (the twin
 * whose output the targets must reproduce line for line).
 *
 * With IMAGE_CHECKS (the test image):
 *   - the fast GEMMs (tr_gemm, and tr_gemm_at with A stored transposed)
 *     against their references, bitwise, on the seed net's and the narrow
 *     net's shapes, odd sizes and operands whose products fall below the
 *     smallest normal float; each result's hash is printed;
 *   - the sampler: hashes of the batches of some deals (MNIST's size, odd
 *     sizes, near 2^32) and its inverse on them;
 *   - a whole training step of the net with the fast kernels against the
 *     reference kernels (loss and every gradient within a float tolerance).
 * Always: the size query (at build time through the generated
 * image_arena.h, and again here), then IMAGE_STEPS training steps (forward,
 * loss, backward, SGD with momentum) on a synthetic batch, printing each
 * step's loss bits and the hashes of the parameters and BN statistics, on
 * the execution plan IMAGE_PLAN (fast, or lean: the one for small RAM);
 * lines starting with '#' carry the instructions each step took and are not
 * compared. No libc: the memcpy/memset/memmove a compiler may emit are
 * defined in the ports. */
#include "tinyring.h"
#include "tr_layer_kernels.h"
#include "tr_util.h"
#include "image.h"
#include "image_arena.h"

#ifndef IMAGE_STEPS
#define IMAGE_STEPS 3
#endif
#ifndef IMAGE_CHECKS
#define IMAGE_CHECKS 0
#endif
#ifndef IMAGE_PLAN
#define IMAGE_PLAN TR_PLAN_FAST
#endif

#if IMAGE_CHECKS
#define GEMM_POOL_FLOATS 180000u   /* the largest shape below: A, B and two C */
#define MAX_PARAMS 32768u
#else
#define GEMM_POOL_FLOATS 0u
#endif
#define POOL_BYTES (IMAGE_ARENA_BYTES > GEMM_POOL_FLOATS * 4u ? IMAGE_ARENA_BYTES : GEMM_POOL_FLOATS * 4u)

/* the model's arena; the GEMM checks borrow it before the model is laid out */
static uint8_t pool[POOL_BYTES] TR_ARENA_ALIGNED;
static struct tr_model model;
static float input[IMAGE_BATCH * 28 * 28];
static uint8_t labels[IMAGE_BATCH];

/* ---- text without libc ------------------------------------------------ */
static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static char *put_u64(char *p, uint64_t v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n)
        *p++ = d[--n];
    return p;
}

static char *put_hex(char *p, uint32_t v)
{
    int i;
    p = put_str(p, "0x");
    for (i = 28; i >= 0; i -= 4)
        *p++ = "0123456789abcdef"[(v >> i) & 15u];
    return p;
}

static void line_end(char *buf, char *p)
{
    *p++ = '\n';
    *p = 0;
    img_puts(buf);
}

/* FNV-1a over the bytes of n floats (every target is little-endian) */
static uint32_t hash_floats(const float *x, size_t n)
{
    return tr_fnv1a32(TR_FNV32_INIT, x, n * sizeof *x);
}

#if IMAGE_CHECKS
/* ---- GEMM: fast against reference, bitwise ----------------------------- */
struct shape { uint16_t m, n, k; int8_t scale; };

/* scale: 0 for values in [-1, 1); s < 0 multiplies A and B by 2^(8s) and
 * C by 2^(16s), so products and sums land in the subnormal range */
static const struct shape shapes[] = {
    {16, 784, 25, 0}, {32, 196, 400, 0}, {25, 16, 784, 0}, {400, 32, 196, 0}, {400, 196, 32, 0},
    {4, 784, 25, 0}, {8, 196, 100, 0}, {25, 4, 784, 0}, {100, 8, 196, 0}, {100, 196, 8, 0},
    {1, 1, 1, 0}, {5, 7, 13, 0}, {7, 37, 13, 0}, {11, 9, 2, 0}, {13, 8, 0, 0}, {9, 17, 3, 0},
    {12, 8, 9, -8}, {7, 13, 5, -9}, {6, 4, 300, -8}, {6, 9, 7, 0}, {6, 4, 1, 0},
};
/* tr_gemm_at (A stored transposed): the lean plan's input gradients
 * (dcol = w^T dy over bands of 8 positions), odd sizes, subnormals */
static const struct shape shapes_at[] = {
    {400, 8, 32, 0}, {100, 8, 8, 0}, {25, 8, 16, 0}, {9, 7, 5, 0}, {13, 4, 0, 0},
    {11, 8, 9, -8}, {5, 4, 40, -9},
};

static float scaled(struct tr_rng *r, int scale)
{
    float v = tr_rng_uniform(r, -1.0f, 1.0f);
    int i;
    for (i = 0; i < -scale; i++)
        v *= 1.0f / 256.0f;   /* a power of two: exact while the result stays normal */
    return v;
}

/* form 0: tr_gemm, A (M, K); form 1: tr_gemm_at, A stored (K, M) */
static int gemm_check(const struct shape *s, int set, int form)
{
    const size_t m = s->m, n = s->n, k = s->k, ldb = n + 2, ldc = n + 3;
    const size_t lda = form ? m + 1 : k + 1, na = form ? (k ? k : 1) * lda : m * lda;
    float *a = (float *)(void *)pool, *b = a + na, *c1 = b + (k ? k : 1) * ldb, *c2 = c1 + m * ldc;
    struct tr_rng r;
    char buf[96], *p = buf;
    size_t i;
    int ok;

    if ((size_t)(c2 + m * ldc - a) > GEMM_POOL_FLOATS) {
        img_puts("gemm: shape does not fit the pool\n");
        return 1;
    }
    tr_rng_seed(&r, 11u + m, n * 131u + k);
    for (i = 0; i < na; i++)
        a[i] = scaled(&r, s->scale);
    for (i = 0; i < (k ? k : 1) * ldb; i++)
        b[i] = scaled(&r, s->scale);
    for (i = 0; i < m * ldc; i++)
        c1[i] = c2[i] = set ? (i % ldc < n ? 1e30f : 3.0f) : scaled(&r, 2 * s->scale);
    if (set)
        for (i = 0; i < m * ldc; i++)
            if (i % ldc < n)
                c2[i] = 0.0f;
    if (form) {
        (set ? tr_gemm_at_set : tr_gemm_at)(c1, a, b, m, n, k, lda, ldb, ldc);
        tr_gemm_at_ref(c2, a, b, m, n, k, lda, ldb, ldc);
    } else {
        (set ? tr_gemm_set : tr_gemm)(c1, a, b, m, n, k, lda, ldb, ldc);
        tr_gemm_ref(c2, a, b, m, n, k, lda, ldb, ldc);
    }
    ok = __builtin_memcmp(c1, c2, m * ldc * sizeof *c1) == 0;
    p = put_str(p, form ? (set ? "gemm_at_set " : "gemm_at ") : (set ? "gemm_set " : "gemm "));
    p = put_u64(p, m);
    p = put_str(p, "x");
    p = put_u64(p, n);
    p = put_str(p, "x");
    p = put_u64(p, k);
    if (s->scale) {
        p = put_str(p, " tiny");
    }
    p = put_str(p, ": ");
    p = put_hex(p, hash_floats(c1, m * ldc));
    p = put_str(p, ok ? " same bits as the reference" : " FAIL: bits differ from the reference");
    line_end(buf, p);
    return !ok;
}

/* ---- the lean plan's plane kernels against the convolution, bitwise ----
 * One sample, every output plane: tr_conv2d_plane against tr_conv2d_forward,
 * tr_conv2d_plane_dw against tr_conv2d_backward's dw (ic, h, w -> oc, 5x5,
 * stride 1, pad 2). Widths 14, 10 and 28 take the blocks of 12, 8 and 4
 * and single outputs, over one and two input channels; scale -8 puts products in the subnormal range, where Helium's
 * blocks must hand over to the scalar FPU. */
struct plane_shape { uint8_t ic, h, w, oc; int8_t scale; };
static const struct plane_shape plane_shapes[] = {
    {1, 12, 14, 3, 0}, {2, 7, 10, 2, 0}, {1, 6, 14, 2, -8}, {2, 5, 10, 2, -8},
    {2, 4, 28, 2, 0},
};

static int plane_check(const struct plane_shape *c)
{
    struct tr_layer l;
    size_t P, kk, nx, nw, i;
    float *x, *w, *dy, *y, *dw, *db, *xpad, *pl, *dwp, *sc;
    struct tr_rng r;
    unsigned oc;
    int ok = 1;
    char buf[96], *p = buf;

    __builtin_memset(&l, 0, sizeof l);
    l.d.kind = TR_LAYER_CONV2D;
    l.d.kernel = 5;
    l.d.stride = 1;
    l.d.pad = 2;
    l.d.out = c->oc;
    l.in_c = c->ic;
    l.out_c = c->oc;
    l.in_h = l.out_h = c->h;
    l.in_w = l.out_w = c->w;
    P = (size_t)c->h * c->w;
    kk = (size_t)c->ic * 25u;
    nx = c->ic * P;
    nw = c->oc * kk;
    x = (float *)(void *)pool;
    w = x + nx;
    dy = w + nw + c->oc;
    y = dy + c->oc * P;
    dw = y + c->oc * P;
    db = dw + nw;
    dwp = db + c->oc;
    xpad = dwp + nw;
    pl = xpad + tr_conv2d_pad_floats(&l);
    sc = pl + P;
    if ((size_t)(sc + tr_conv2d_scratch_floats(&l) - x) * 4u > sizeof pool) {
        img_puts("plane: shape does not fit the pool\n");
        return 1;
    }
    tr_rng_seed(&r, 5u + c->ic, c->w);
    for (i = 0; i < nx; i++)
        x[i] = scaled(&r, c->scale);
    for (i = 0; i < nw + c->oc; i++)
        w[i] = scaled(&r, c->scale);
    for (i = 0; i < c->oc * P; i++)
        dy[i] = scaled(&r, c->scale);
    tr_conv2d_forward(y, x, w, w + nw, &l, 1, sc);
    tr_conv2d_backward(NULL, dw, db, dy, x, w, &l, 1, sc);
    tr_conv2d_pad(xpad, x, &l);
    for (i = 0; i < nw; i++)
        dwp[i] = 0.0f;
    for (oc = 0; oc < c->oc; oc++) {
        tr_conv2d_plane(pl, xpad, w + oc * kk, w[nw + oc], &l);
        ok &= __builtin_memcmp(pl, y + oc * P, P * sizeof *pl) == 0;
        tr_conv2d_plane_dw(dwp + oc * kk, xpad, dy + oc * P, &l);
    }
    ok &= __builtin_memcmp(dw, dwp, nw * sizeof *dw) == 0;
    p = put_str(p, "plane ");
    p = put_u64(p, c->ic);
    p = put_str(p, "x");
    p = put_u64(p, c->h);
    p = put_str(p, "x");
    p = put_u64(p, c->w);
    p = put_str(p, "->");
    p = put_u64(p, c->oc);
    p = put_str(p, c->scale ? " tiny: " : ": ");
    p = put_hex(p, hash_floats(y, c->oc * P) ^ hash_floats(dwp, nw));
    p = put_str(p, ok ? " same bits as the convolution" : " FAIL: bits differ from the convolution");
    line_end(buf, p);
    return !ok;
}

/* ---- one training step, fast kernels against the reference ------------ */
static float absf(float x)
{
    return x < 0 ? -x : x;
}

static int fast_vs_ref(void)
{
    static float g_fast[MAX_PARAMS];
    float loss_fast = 0, loss_ref = 0, gmax = 0;
    size_t i, bad = 0;
    char buf[96], *p = buf;

    if (model.n_params > MAX_PARAMS)
        return 1;
    model.kernels = TR_KERNELS_FAST;
    if (tr_model_forward(&model, input, IMAGE_BATCH, 1) != 0 ||
        tr_model_loss(&model, labels, &loss_fast, 0) != 0 || tr_model_backward(&model) != 0)
        return 1;
    for (i = 0; i < model.n_params; i++)
        g_fast[i] = model.grads[i];
    model.kernels = TR_KERNELS_REF;
    if (tr_model_forward(&model, input, IMAGE_BATCH, 1) != 0 ||
        tr_model_loss(&model, labels, &loss_ref, 0) != 0 || tr_model_backward(&model) != 0)
        return 1;
    model.kernels = TR_KERNELS_FAST;
    for (i = 0; i < model.n_params; i++)
        if (absf(model.grads[i]) > gmax)
            gmax = absf(model.grads[i]);
    /* per element 1e-4 relative, floored at 1e-6 of the largest gradient */
    for (i = 0; i < model.n_params; i++)
        if (absf(g_fast[i] - model.grads[i]) > 1e-4f * (absf(model.grads[i]) + 0.01f * gmax))
            bad++;
    if (absf(loss_fast - loss_ref) > 1e-5f * absf(loss_ref))
        bad++;
    p = put_str(p, "training step, fast kernels against the reference: ");
    if (bad) {
        p = put_str(p, "FAIL: ");
        p = put_u64(p, bad);
        p = put_str(p, " values outside the tolerance");
    } else {
        p = put_str(p, "loss and ");
        p = put_u64(p, model.n_params);
        p = put_str(p, " gradients within 1e-4");
    }
    line_end(buf, p);
    return bad != 0;
}
#endif

/* ---- training steps ----------------------------------------------------- */
static int train(void)
{
    struct tr_sgd sgd;
    uint64_t total = 0;
    char buf[128], *p;
    unsigned step;

    tr_model_init_params(&model, 1);
    tr_sgd_init(&sgd);
    sgd.lr = 0.01f;
    sgd.momentum = 0.9f;
    for (step = 0; step < IMAGE_STEPS; step++) {
        float loss = 0.0f;
        uint64_t t0 = img_instret(), t1;
        if (tr_model_forward(&model, input, IMAGE_BATCH, 1) != 0 ||
            tr_model_loss(&model, labels, &loss, 0) != 0 || tr_model_backward(&model) != 0)
            return 1;
        tr_sgd_step(&sgd, model.params, model.grads, model.momentum, model.n_params);
        t1 = img_instret();
        total += t1 - t0;
        p = put_str(buf, "step ");
        p = put_u64(p, step);
        p = put_str(p, " loss bits ");
        p = put_hex(p, tr_float_bits(loss));
        line_end(buf, p);
        p = put_str(buf, "# step ");
        p = put_u64(p, step);
        p = put_str(p, " instructions ");
        p = put_u64(p, t1 - t0);
        line_end(buf, p);
    }
    p = put_str(buf, "params hash ");
    p = put_hex(p, hash_floats(model.params, model.n_params));
    p = put_str(p, ", BN statistics hash ");
    p = put_hex(p, hash_floats(model.buffers, model.n_buffers));
    line_end(buf, p);
    p = put_str(buf, "# instructions per sample ");
    p = put_u64(p, total / ((uint64_t)IMAGE_STEPS * IMAGE_BATCH));
    p = put_str(p, " (net ");
    p = put_u64(p, IMAGE_C1);
    p = put_str(p, "/");
    p = put_u64(p, IMAGE_C2);
    p = put_str(p, IMAGE_PLAN == TR_PLAN_FAST ? ", fast plan" : ", lean plan");
    p = put_str(p, ", batch ");
    p = put_u64(p, IMAGE_BATCH);
    p = put_str(p, ", ");
    p = put_u64(p, IMAGE_STEPS);
    p = put_str(p, " steps)");
    line_end(buf, p);
    return 0;
}

/* ---- the same steps in the bucket mode ------------------------------------
 * No full gradient: one buffer of the largest bucket, each bucket applied
 * by SGD (tr_sgd_apply) as soon as backward completed it, backward waiting
 * (tr_model_backward_stage says TR_ERR_BUSY) until it is released; on the
 * lean plan with TR_MODEL_ONE_PLANE too (conv1's plane made again by every
 * pass: the boards' smallest arena). The parameters and BN statistics must
 * be the full gradient's bits. */
static int train_inplace(uint32_t want_params, uint32_t want_bn)
{
    const unsigned opts = TR_MODEL_GRAD_BUCKET | TR_MODEL_ONE_PLANE;
    struct tr_model_desc d;
    struct tr_sgd sgd;
    char buf[128], *p;
    size_t need = 0;
    unsigned step;
    uint32_t hp, hb;

    tr_model_desc_convnet(&d, IMAGE_C1, IMAGE_C2, 10);
    d.plan = IMAGE_PLAN;
    if (tr_model_arena_size_opt(&d, IMAGE_BATCH, opts, &need) != 0 || need > sizeof pool ||
        tr_model_init_opt(&model, &d, IMAGE_BATCH, opts, pool, need) != 0 ||
        model.arena_used != need) {
        img_puts("FAIL: bucket mode size query or init\n");
        return 1;
    }
    tr_model_init_params(&model, 1);
    tr_sgd_init(&sgd);
    sgd.lr = 0.01f;
    sgd.momentum = 0.9f;
    for (step = 0; step < IMAGE_STEPS; step++) {
        unsigned applied = 0;
        int rc;
        if (tr_model_forward(&model, input, IMAGE_BATCH, 1) != 0 ||
            tr_model_loss(&model, labels, 0, 0) != 0 || tr_model_backward_begin(&model) != 0)
            return 1;
        for (;;) {
            rc = tr_model_backward_stage(&model);
            if (rc < 0 && rc != TR_ERR_BUSY)
                return 1;
            while (applied < tr_model_buckets_done(&model) && (rc == TR_ERR_BUSY || rc == 0)) {
                const struct tr_bucket *q = &model.bucket[applied];
                tr_sgd_apply(&sgd, model.params + q->lo, tr_model_bucket_grads(&model, applied),
                             model.momentum + q->lo, q->hi - q->lo);
                tr_model_bucket_next(&model);
                applied++;
            }
            if (rc == 0)
                break;
        }
        if (applied != model.n_buckets)
            return 1;
        sgd.started = 1;
    }
    hp = hash_floats(model.params, model.n_params);
    hb = hash_floats(model.buffers, model.n_buffers);
    p = put_str(buf, "bucket by bucket: params hash ");
    p = put_hex(p, hp);
    p = put_str(p, hp == want_params && hb == want_bn ? ", the full gradient's" : ", DIFFERS");
    line_end(buf, p);
    p = put_str(buf, "# bucket mode arena bytes ");
    p = put_u64(p, need);
    line_end(buf, p);
    return hp != want_params || hb != want_bn;
}

#if IMAGE_CHECKS
/* The sampler (integers only) deals the same indices on every target: a
 * hash of the batches some deals hand one rank, at MNIST's size, odd sizes
 * and near 2^32, and the inverse on the same points. */
static int sampler_check(void)
{
    static const struct {
        uint32_t n, epoch, first, world, rank, batch;
    } deal[] = {
        { 60000, 0, 0, 1, 0, 1 }, { 60000, 3, 0, 4, 3, 8 }, { 60000, 1, 12345, 3, 1, 4 },
        { 10000, 0, 0, 2, 1, 100 }, { 3, 0, 0, 2, 1, 1 }, { 65537, 2, 0, 5, 4, 7 },
        { 2147483659u, 1, 0, 8, 5, 16 }, { 0xffffffffu, 0, 1000, 64, 63, 3 },
    };
    uint32_t idx[100];
    size_t d;
    int bad = 0;
    for (d = 0; d < sizeof deal / sizeof deal[0]; d++) {
        struct tr_sampler s;
        uint32_t h = TR_FNV32_INIT, step;
        char buf[96], *p;
        tr_sampler_init(&s, deal[d].n, 42, deal[d].epoch);
        for (step = 0; step < 6; step++) {
            unsigned k, c = tr_sampler_batch(&s, deal[d].first, deal[d].world, deal[d].rank,
                                             deal[d].batch, step, idx);
            for (k = 0; k < c; k++)
                bad += tr_sampler_at(&s, tr_sampler_index(&s, idx[k])) != idx[k];
            h = tr_fnv1a32(h, idx, c * sizeof idx[0]);
            h = tr_fnv1a32(h, &c, sizeof c);
        }
        p = put_str(buf, "sampler n=");
        p = put_u64(p, deal[d].n);
        p = put_str(p, " epoch=");
        p = put_u64(p, deal[d].epoch);
        p = put_str(p, " batches hash ");
        p = put_hex(p, h);
        line_end(buf, p);
    }
    if (bad)
        img_puts("FAIL: the sampler's inverse\n");
    return bad != 0;
}
#endif

int img_main(void)
{
    struct tr_model_desc d;
    struct tr_rng rng;
    size_t need = 0, i;
    int fails = 0;

#if IMAGE_CHECKS
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        fails += gemm_check(&shapes[i], 0, 0) + gemm_check(&shapes[i], 1, 0);
    for (i = 0; i < sizeof shapes_at / sizeof shapes_at[0]; i++)
        fails += gemm_check(&shapes_at[i], 0, 1) + gemm_check(&shapes_at[i], 1, 1);
    for (i = 0; i < sizeof plane_shapes / sizeof plane_shapes[0]; i++)
        fails += plane_check(&plane_shapes[i]);
    fails += sampler_check();
#endif
    tr_model_desc_convnet(&d, IMAGE_C1, IMAGE_C2, 10);
    d.plan = IMAGE_PLAN;
    if (tr_model_arena_size(&d, IMAGE_BATCH, &need) != 0 || need != IMAGE_ARENA_BYTES ||
        tr_model_init(&model, &d, IMAGE_BATCH, pool, sizeof pool) != 0) {
        img_puts("FAIL: size query or init\n");
        return 1;
    }
    tr_rng_seed(&rng, 7, 7);
    for (i = 0; i < sizeof input / sizeof input[0]; i++)
        input[i] = tr_rng_uniform(&rng, -1.0f, 1.0f);
    for (i = 0; i < IMAGE_BATCH; i++)
        labels[i] = (uint8_t)tr_rng_below(&rng, 10);
#if IMAGE_CHECKS
    tr_model_init_params(&model, 1);
    if (IMAGE_PLAN == TR_PLAN_FAST)   /* the reference kernels run on the fast plan only */
        fails += fast_vs_ref();
#endif
    if (train() != 0) {
        img_puts("FAIL: a training step returned an error\n");
        return 1;
    }
    {
        uint32_t hp = hash_floats(model.params, model.n_params);
        uint32_t hb = hash_floats(model.buffers, model.n_buffers);
        fails += train_inplace(hp, hb);
    }
    img_puts(fails ? "FAIL: some checks failed\n" : "all checks passed\n");
    return fails != 0;
}
