/* tinyring: BatchNorm2d as PyTorch's (eps 1e-5, momentum 0.1, affine).
 *
 * Training normalises with the batch mean and the biased variance and moves
 * the running stats with the unbiased variance; eval uses the running stats.
 * Sums are taken per (sample, channel) plane first, in 16 interleaved partial
 * sums, then across samples: float rounding stays small at large batch
 * without double arithmetic, and the loops vectorise under strict FP. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_layer_kernels.h"
#include "tr_math.h"

#define TR_BN_EPS 1e-5f
#define TR_BN_MOMENTUM 0.1f
#define TR_LANES 16

/* The lanes16 sums (docs/DESIGN.md): lane j adds the elements 16m+j in
 * order, then the tail is added and the lanes in order. One #if chooses
 * how the 16 lanes are held: TR_V16 host vectors (tr_layer_kernels.h: one
 * AVX-512 register, two AVX or four SSE/NEON ones, lane j in vector
 * j / TR_VL) where the target has vector registers, 16 named scalars
 * elsewhere. The same operations either way. */
#if TR_HOST_VECTORS                                 /* AVX-512, AVX, SSE2, NEON */
#include "tr_bn_vec.h"
#else                                               /* M4F, M55, RV32, plain C */
#include "tr_bn_plain.h"
#endif

void tr_bn2d_plane_apply(float *restrict y, const float *restrict x, size_t hw, float mean,
                         float invstd, float g, float b, int relu)
{
    size_t j;

    if (relu) {
        for (j = 0; j < hw; j++) {
            float v = (x[j] - mean) * invstd * g + b;
            y[j] = v > 0.0f ? v : 0.0f;
        }
    } else {
        for (j = 0; j < hw; j++)
            y[j] = (x[j] - mean) * invstd * g + b;
    }
}

/* dx may be x or dy (element j reads both before writing dx[j]) */
void tr_bn2d_plane_dx(float *dx, const float *dy, const float *x, size_t hw, float mean,
                      float invstd, float k, float cnt, float dbeta, float dgamma)
{
    size_t j;

    for (j = 0; j < hw; j++) {
        float xhat = (x[j] - mean) * invstd;
        dx[j] = k * ((cnt * dy[j] - dbeta) - xhat * dgamma);
    }
}

void tr_bn2d_finish(float *save, float *run, unsigned C, unsigned c, float mean, float sq,
                    float cnt)
{
    const float var = sq / cnt, invstd = 1.0f / tr_sqrtf(var + TR_BN_EPS);

    save[c] = mean;
    save[C + c] = invstd;
    /* running stats: unbiased variance (biased if only one value, which
     * tr_model refuses in training; the kernel alone stays defined) */
    run[c] = (1.0f - TR_BN_MOMENTUM) * run[c] + TR_BN_MOMENTUM * mean;
    run[C + c] = (1.0f - TR_BN_MOMENTUM) * run[C + c] +
                 TR_BN_MOMENTUM * (cnt > 1.0f ? sq / (cnt - 1.0f) : var);
}

float tr_bn2d_eval_invstd(float run_var)
{
    return 1.0f / tr_sqrtf(run_var + TR_BN_EPS);
}

/* y = (x - mean) * invstd * g + b over one channel of n samples; with relu,
 * max(0, y) in the same pass (the model's BN -> ReLU pair) */
static void bn_apply(float *y, const float *x, size_t n, size_t hw, size_t chw, float mean,
                     float invstd, float g, float b, int relu)
{
    size_t i;

    for (i = 0; i < n; i++)
        tr_bn2d_plane_apply(y + i * chw, x + i * chw, hw, mean, invstd, g, b, relu);
}

static void bn_train(float *restrict y, float *restrict save, float *restrict run,
                     const float *restrict x, const float *restrict gb,
                     const struct tr_layer *l, unsigned n, int relu)
{
    const unsigned C = l->in_c;
    const size_t hw = (size_t)l->in_h * l->in_w, chw = (size_t)C * hw;
    const float cnt = (float)((size_t)n * hw);
    unsigned c, i;

    for (c = 0; c < C; c++) {
        float sum = 0.0f, sq = 0.0f, mean;
        for (i = 0; i < n; i++)
            sum += tr_sum_lanes16(x + i * chw + c * hw, hw);
        mean = sum / cnt;
        for (i = 0; i < n; i++)
            sq += tr_bn2d_plane_sqdev(x + i * chw + c * hw, hw, mean);
        tr_bn2d_finish(save, run, C, c, mean, sq, cnt);
        bn_apply(y + c * hw, x + c * hw, n, hw, chw, mean, save[C + c], gb[c], gb[C + c], relu);
    }
}

void tr_bn2d_forward_train(float *y, float *save, float *run, const float *x,
                           const float *gb, const struct tr_layer *l, unsigned n)
{
    bn_train(y, save, run, x, gb, l, n, 0);
}

void tr_bn2d_forward_train_relu(float *y, float *save, float *run, const float *x,
                                const float *gb, const struct tr_layer *l, unsigned n)
{
    bn_train(y, save, run, x, gb, l, n, 1);
}

static void bn_eval(float *restrict y, const float *restrict x,
                    const float *restrict gb, const float *restrict run,
                    const struct tr_layer *l, unsigned n, int relu)
{
    const unsigned C = l->in_c;
    const size_t hw = (size_t)l->in_h * l->in_w, chw = (size_t)C * hw;
    unsigned c;

    for (c = 0; c < C; c++) {
        const float mean = run[c];
        const float invstd = tr_bn2d_eval_invstd(run[C + c]);
        bn_apply(y + c * hw, x + c * hw, n, hw, chw, mean, invstd, gb[c], gb[C + c], relu);
    }
}

void tr_bn2d_forward_eval(float *y, const float *x, const float *gb, const float *run,
                          const struct tr_layer *l, unsigned n)
{
    bn_eval(y, x, gb, run, l, n, 0);
}

void tr_bn2d_forward_eval_relu(float *y, const float *x, const float *gb, const float *run,
                               const struct tr_layer *l, unsigned n)
{
    bn_eval(y, x, gb, run, l, n, 1);
}

/* With xhat = (x - mean) * invstd and N = n*H*W values per channel:
 *   dbeta = sum dy, dgamma = sum dy*xhat,
 *   dx = gamma*invstd/N * (N*dy - dbeta - xhat*dgamma). */
void tr_bn2d_backward(float *restrict dx, float *restrict dgb, const float *restrict dy,
                      const float *restrict x, const float *restrict gb,
                      const float *restrict save, const struct tr_layer *l, unsigned n)
{
    const unsigned C = l->in_c;
    const size_t hw = (size_t)l->in_h * l->in_w, chw = (size_t)C * hw;
    const float cnt = (float)((size_t)n * hw);
    unsigned c, i;

    for (c = 0; c < C; c++) {
        const float mean = save[c], invstd = save[C + c];
        float dbeta = 0.0f, dgamma = 0.0f, k;
        for (i = 0; i < n; i++) {
            float sb, sg;
            tr_bn2d_plane_dsums(&sb, &sg, dy + i * chw + c * hw, x + i * chw + c * hw, hw,
                                mean, invstd);
            dbeta += sb;
            dgamma += sg;
        }
        dgb[c] = dgamma;
        dgb[C + c] = dbeta;
        if (dx == NULL)
            continue;
        k = gb[c] * invstd / cnt;
        for (i = 0; i < n; i++)
            tr_bn2d_plane_dx(dx + i * chw + c * hw, dy + i * chw + c * hw, x + i * chw + c * hw,
                             hw, mean, invstd, k, cnt, dbeta, dgamma);
    }
}
