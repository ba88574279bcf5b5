/* bench-core: per-layer forward/backward time and GFLOP/s of the seed
 * ConvNet's kernels at batch B (default 100) on one core, and samples/s of a
 * full training step (forward + loss + backward + SGD).
 * usage: bench_core [batch] [steps] [ref|lean|steps|count]   ("ref": the reference
 * kernels; "lean": the lean execution plan, training steps only: its layers
 * run fused, so there is no per-layer table; "steps": the fast kernels'
 * training steps only, for a profiler)
 * Prints one "step_samples_per_s <x>" line last, for test/bench/core/run.sh. */
#define _POSIX_C_SOURCE 200112L
#include "bench_clock.h"
#include "tinyring.h"
#include "tr_layer_kernels.h"
#include "tr_plan.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "count" mode (test/bench/core/a64_count.sh, an instruction counter that
 * traces the functions run): each kernel of the tables runs once, right
 * after a call of mark_<row>, and mark_31 after it, so the trace splits
 * into the rows; "mark <row> <label>" lines name them */
#define MARKS(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) \
    M(13) M(14) M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) \
    M(27) M(28) M(29) M(30) M(31)
/* each stores its own row: bodies that differ, which the compiler cannot
 * fold into one function */
static volatile int mark_row;
#define MARK_FN(j) static void __attribute__((noinline)) mark_##j(void) { mark_row = j; }
MARKS(MARK_FN)
#define MARK_CASE(j) case j: mark_##j(); break;
static int counting;

static void mark(int row, const char *label, unsigned li)
{
    if (!counting)
        return;
    if (label)
        printf("mark %d %u %s\n", row, li, label);
    switch (row) {
    MARKS(MARK_CASE)
    default: break;
    }
}

static const char *kname(int k)
{
    static const char *n[] = {"?", "conv2d", "batchnorm2d", "relu", "maxpool2d", "flatten", "linear"};
    return k >= 1 && k <= 6 ? n[k] : "?";
}

/* the seed net's GEMMs as its conv layers call them for one sample
 * (C += A * B, contiguous rows): time each (best of reps runs of enough
 * calls for about 2 ms), print GFLOP/s, and one machine-readable line
 * "gemm_gflops X" for the five together. On a vector host the fast plan's
 * convolutions read their rows on a grid instead, and conv2's input
 * gradient makes no dcol (tr_layer_conv.c): the dcol row is the GEMM the
 * other paths (im2col, the lean plan's bands) run. */
static void gemm_table(int reps)
{
    static const struct { const char *what; size_t m, n, k; int set; } g[] = {
        {"conv1 fwd   y += w * col", 16, 784, 25, 0},
        {"conv2 fwd   y += w * col", 32, 196, 400, 0},
        {"conv1 dw^T += col * dy^T", 25, 16, 784, 0},
        {"conv2 dw^T += col * dy^T", 400, 32, 196, 0},
        {"conv2 dcol  = w^T * dy", 400, 196, 32, 1},
    };
    double t_all = 0, f_all = 0;
    unsigned i;

    printf("%-28s %5s %5s %5s %9s\n", "GEMM (one sample)", "M", "N", "K", "GFLOP/s");
    for (i = 0; i < sizeof g / sizeof g[0]; i++) {
        const size_t m = g[i].m, n = g[i].n, k = g[i].k;
        const double flops = 2.0 * m * n * k;
        const int calls = (int)(4e6 / flops) + 1;   /* about 2 ms at 100 GFLOP/s */
        float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
        float *c = malloc(m * n * sizeof *c);
        double best = 1e30, t0;
        size_t q;
        int r, j;
        for (q = 0; q < m * k; q++) a[q] = 0.001f * (float)(q % 97) - 0.05f;
        for (q = 0; q < k * n; q++) b[q] = 0.002f * (float)(q % 89) - 0.09f;
        for (q = 0; q < m * n; q++) c[q] = 0.0f;
        for (r = 0; r < reps + 1; r++) {
            t0 = bench_now();
            for (j = 0; j < calls; j++) {
                if (g[i].set)
                    tr_gemm_set(c, a, b, m, n, k, k, n, n);
                else
                    tr_gemm(c, a, b, m, n, k, k, n, n);
            }
            t0 = (bench_now() - t0) / calls;
            if (r > 0 && t0 < best)   /* the first run warms the caches */
                best = t0;
        }
        printf("%-28s %5zu %5zu %5zu %9.2f\n", g[i].what, m, n, k, flops / best * 1e-9);
        t_all += best;
        f_all += flops;
        free(a);
        free(b);
        free(c);
    }
    printf("gemm_gflops %.2f\n", f_all / t_all * 1e-9);
}

/* the fused blocks as the training step runs them (BN [ReLU] pool in one
 * pass each way; the table's BN, ReLU and pool rows are the layers' own
 * kernels, which the fast plan runs only layer by layer) */
static void block_table(struct tr_model *m, const float *x, unsigned B, int reps)
{
    unsigned li;
    size_t i;
    int k;

    for (li = 1; li < m->n_layers; li++) {
        double tf = 1e30, tb = 1e30, t0;
        float *dy = m->dbuf[1];
        const struct tr_layer *pool;
        size_t outn;
        if (m->layer[li].role != TR_ROLE_BLOCK)
            continue;
        pool = &m->layer[li + (m->layer[li + 1].d.kind == TR_LAYER_RELU ? 2 : 1)];
        outn = (size_t)B * pool->out_c * pool->out_h * pool->out_w;
        for (i = 0; i < outn; i++) dy[i] = 1e-3f * (float)(i % 7);
        for (k = 0; k < reps; k++) {
            mark(20 + (li == 1 ? 0 : 2), "block_fused", li);
            t0 = bench_now();
            tr_plan_block_forward(m, li, x, B, 1);
            if (bench_now() - t0 < tf) tf = bench_now() - t0;
            mark(21 + (li == 1 ? 0 : 2), "block_fused", li);
            t0 = bench_now();
            tr_plan_block_backward(m, li, x, B, dy, NULL, (float *)m->layer[li - 1].out);
            if (bench_now() - t0 < tb) tb = bench_now() - t0;
            mark(31, NULL, 0);
        }
        printf("%-3u %-12s %10.3f %9s %10.3f %9s\n", li, "block fused", tf * 1e3, "-", tb * 1e3, "-");
    }
}

int main(int argc, char **argv)
{
    unsigned B = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    int ref = argc > 3 && strcmp(argv[3], "ref") == 0;
    int lean = argc > 3 && strcmp(argv[3], "lean") == 0;
    int only_steps = argc > 3 && strcmp(argv[3], "steps") == 0;
    int count = argc > 3 && strcmp(argv[3], "count") == 0;
    struct tr_model_desc d;
    struct tr_model m;
    struct tr_sgd s;
    struct tr_rng r;
    size_t bytes = 0, i;
    uint8_t *arena, *labels;
    float *x, loss;
    double t0, best = 1e30, total = 0;
    unsigned li;
    int k, reps = 5;

    tr_model_desc_convnet(&d, 16, 32, 10);
    d.plan = lean ? TR_PLAN_LEAN : TR_PLAN_FAST;
    if (B == 0 || tr_model_arena_size(&d, B, &bytes) != 0) {
        fprintf(stderr, "bad batch\n");
        return 1;
    }
    if (posix_memalign((void **)&arena, TR_ARENA_ALIGN, bytes) != 0 ||
        tr_model_init(&m, &d, B, arena, bytes) != 0) {
        fprintf(stderr, "init failed\n");
        return 1;
    }
    m.kernels = ref ? TR_KERNELS_REF : TR_KERNELS_FAST;
    tr_model_init_params(&m, 1);
    tr_sgd_init(&s);
    x = malloc((size_t)B * 784 * sizeof *x);
    labels = malloc(B);
    tr_rng_seed(&r, 5, 5);
    for (i = 0; i < (size_t)B * 784; i++) x[i] = tr_rng_uniform(&r, -0.8f, 2.0f);
    for (i = 0; i < B; i++) labels[i] = (uint8_t)tr_rng_below(&r, 10);
    if (count) {
        counting = 1;
        reps = 1;
        steps = 1;
    }
    printf("seed ConvNet, batch %u, %s, arena %zu bytes\n", B,
           ref ? "reference kernels" : lean ? "lean plan" : "fast kernels", bytes);
    if (lean || only_steps)
        goto steps;

    /* per layer: time each kernel on the model's own buffers */
    tr_model_forward(&m, x, B, 1);
    tr_model_loss(&m, labels, &loss, NULL);
    tr_model_backward(&m);
    printf("%-3s %-12s %10s %9s %10s %9s\n", "#", "layer", "fwd ms", "GFLOP/s", "bwd ms", "GFLOP/s");
    for (li = 0; li < m.n_layers; li++) {
        struct tr_layer *l = &m.layer[li];
        const float *in = li ? m.layer[li - 1].out : x;
        const float *p = m.params + l->p_off;
        float *g = m.grads + l->p_off, *dx = li ? m.dbuf[0] : NULL, *dy = m.dbuf[1];
        size_t outn = (size_t)B * l->out_c * l->out_h * l->out_w;
        double ff = 0, fb = 0, tf = 1e30, tb = 1e30;
        if (l->d.kind == TR_LAYER_FLATTEN) continue;
        if (l->d.kind == TR_LAYER_LINEAR) dy = m.dlogits;
        for (i = 0; i < outn && l->d.kind != TR_LAYER_LINEAR; i++) dy[i] = 1e-3f * (float)(i % 7);
        if (l->d.kind == TR_LAYER_CONV2D) {
            ff = 2.0 * B * l->out_c * l->out_h * l->out_w * l->in_c * l->d.kernel * l->d.kernel;
            fb = ff * (dx ? 2 : 1);
        } else if (l->d.kind == TR_LAYER_LINEAR) {
            ff = 2.0 * B * l->in_c * l->out_c;
            fb = 2 * ff;
        }
        for (k = 0; k < reps; k++) {
            const float *b = p + (l->p_len - l->out_c);
            mark(2 * (int)li, kname(l->d.kind), li);
            t0 = bench_now();
            switch (l->d.kind) {
            case TR_LAYER_CONV2D:
                if (ref) tr_conv2d_forward_ref(l->out, in, p, b, l, B);
                else tr_conv2d_forward(l->out, in, p, b, l, B, m.scratch);
                break;
            case TR_LAYER_BATCHNORM2D:
                tr_bn2d_forward_train(l->out, l->save, m.buffers + l->b_off, in, p, l, B);
                break;
            case TR_LAYER_RELU:   /* in place after conv/BN, as the model runs it */
                if (l->out == in) tr_relu_inplace(l->out, outn);
                else tr_relu_forward(l->out, in, outn);
                break;
            case TR_LAYER_MAXPOOL2D: tr_maxpool2d_forward(l->out, in, l, B); break;
            case TR_LAYER_LINEAR:
                if (ref) tr_linear_forward_ref(l->out, in, p, b, l, B);
                else tr_linear_forward(l->out, in, p, b, l, B);
                break;
            }
            if (bench_now() - t0 < tf) tf = bench_now() - t0;
            mark(2 * (int)li + 1, kname(l->d.kind), li);
            t0 = bench_now();
            switch (l->d.kind) {
            case TR_LAYER_CONV2D:
                if (ref) tr_conv2d_backward_ref(dx, g, g + (l->p_len - l->out_c), dy, in, p, l, B);
                else tr_conv2d_backward(dx, g, g + (l->p_len - l->out_c), dy, in, p, l, B, m.scratch);
                break;
            case TR_LAYER_BATCHNORM2D: tr_bn2d_backward(dx, g, dy, in, p, l->save, l, B); break;
            case TR_LAYER_RELU: tr_relu_backward(dx, dy, l->out, outn); break;
            case TR_LAYER_MAXPOOL2D: tr_maxpool2d_backward(dx, dy, in, l->out, l, B); break;
            case TR_LAYER_LINEAR:
                tr_linear_backward(dx, g, g + (l->p_len - l->out_c), dy, in, p, l, B);
                break;
            }
            if (bench_now() - t0 < tb) tb = bench_now() - t0;
            mark(31, NULL, 0);
        }
        if (ff > 0)
            printf("%-3u %-12s %10.3f %9.2f %10.3f %9.2f\n", li, kname(l->d.kind), tf * 1e3,
                   ff / tf * 1e-9, tb * 1e3, fb / tb * 1e-9);
        else
            printf("%-3u %-12s %10.3f %9s %10.3f %9s\n", li, kname(l->d.kind), tf * 1e3, "-",
                   tb * 1e3, "-");
    }

    block_table(&m, x, B, reps);
    if (!count)
        gemm_table(reps);

steps:
    /* full training steps */
    for (k = count ? 0 : -2; k < steps; k++) {
        mark(30, "training_step", 0);
        t0 = bench_now();
        tr_model_forward(&m, x, B, 1);
        tr_model_loss(&m, labels, &loss, NULL);
        tr_model_backward(&m);
        tr_sgd_step(&s, m.params, m.grads, m.momentum, m.n_params);
        t0 = bench_now() - t0;
        mark(31, NULL, 0);
        if (k >= 0) {
            total += t0;
            if (t0 < best) best = t0;
        }
    }
    printf("training step: mean %.2f ms, best %.2f ms, loss %.4f\n", total / steps * 1e3,
           best * 1e3, loss);
    printf("step_samples_per_s %.1f\n", B / (total / steps));
    free(arena);
    free(x);
    free(labels);
    return 0;
}
