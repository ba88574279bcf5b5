/* tinyring: BatchNorm2d as PyTorch's (eps 1e-5, momentum 0.1, affine).
 *
 * Training normalises with the batch mean and the biased variance and moves
 * the running stats with the unbiased variance; eval uses the running stats.
 * Sums are taken per (sample, channel) plane first, in 16 interleaved partial
 * sums, then across samples: float rounding stays small at large batch
 * without double arithmetic, and the loops vectorise under strict FP. */
#include "tr_layer_kernels.h"
#include "tr_math.h"

#define TR_BN_EPS 1e-5f
#define TR_BN_MOMENTUM 0.1f
#define TR_BN_LANES 16

/* sum of x[0..n) in TR_BN_LANES independent partial sums (vectorisable
 * without reassociation), reduced in a fixed order: same bits everywhere */
static float sum_lanes(const float *restrict x, size_t n)
{
    float acc[TR_BN_LANES], s = 0.0f;
    size_t i, j, body = n - n % TR_BN_LANES;

    for (j = 0; j < TR_BN_LANES; j++)
        acc[j] = 0.0f;
    for (i = 0; i < body; i += TR_BN_LANES)
        for (j = 0; j < TR_BN_LANES; j++)
            acc[j] += x[i + j];
    for (i = body; i < n; i++)
        s += x[i];
    for (j = 0; j < TR_BN_LANES; j++)
        s += acc[j];
    return s;
}

/* sum of (x - mean)^2, same lane scheme */
static float sqdev_lanes(const float *restrict x, size_t n, float mean)
{
    float acc[TR_BN_LANES], s = 0.0f;
    size_t i, j, body = n - n % TR_BN_LANES;

    for (j = 0; j < TR_BN_LANES; j++)
        acc[j] = 0.0f;
    for (i = 0; i < body; i += TR_BN_LANES)
        for (j = 0; j < TR_BN_LANES; j++) {
            float d = x[i + j] - mean;
            acc[j] += d * d;
        }
    for (i = body; i < n; i++) {
        float d = x[i] - mean;
        s += d * d;
    }
    for (j = 0; j < TR_BN_LANES; j++)
        s += acc[j];
    return s;
}

/* sum of dy and of dy * (x - mean) * invstd, same lane scheme */
static void dsums_lanes(float *sb, float *sg, const float *restrict dy,
                        const float *restrict x, size_t n, float mean, float invstd)
{
    float ab[TR_BN_LANES], ag[TR_BN_LANES], b = 0.0f, g = 0.0f;
    size_t i, j, body = n - n % TR_BN_LANES;

    for (j = 0; j < TR_BN_LANES; j++)
        ab[j] = ag[j] = 0.0f;
    for (i = 0; i < body; i += TR_BN_LANES)
        for (j = 0; j < TR_BN_LANES; j++) {
            ab[j] += dy[i + j];
            ag[j] += dy[i + j] * ((x[i + j] - mean) * invstd);
        }
    for (i = body; i < n; i++) {
        b += dy[i];
        g += dy[i] * ((x[i] - mean) * invstd);
    }
    for (j = 0; j < TR_BN_LANES; j++) {
        b += ab[j];
        g += ag[j];
    }
    *sb = b;
    *sg = g;
}

/* y = (x - mean) * invstd * g + b over one channel of n samples; with relu,
 * max(0, y) in the same pass (the model's BN -> ReLU pair) */
static void bn_apply(float *restrict y, const float *restrict x, size_t n, size_t hw,
                     size_t chw, float mean, float invstd, float g, float b, int relu)
{
    size_t i, j;

    for (i = 0; i < n; i++) {
        const float *xp = x + i * chw;
        float *yp = y + i * chw;
        if (relu) {
            for (j = 0; j < hw; j++) {
                float v = (xp[j] - mean) * invstd * g + b;
                yp[j] = v > 0.0f ? v : 0.0f;
            }
        } else {
            for (j = 0; j < hw; j++)
                yp[j] = (xp[j] - mean) * invstd * g + b;
        }
    }
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
        float sum = 0.0f, sq = 0.0f, mean, var, invstd, g, b;
        for (i = 0; i < n; i++)
            sum += sum_lanes(x + i * chw + c * hw, hw);
        mean = sum / cnt;
        for (i = 0; i < n; i++)
            sq += sqdev_lanes(x + i * chw + c * hw, hw, mean);
        var = sq / cnt;
        invstd = 1.0f / tr_sqrtf(var + TR_BN_EPS);
        save[c] = mean;
        save[C + c] = invstd;
        /* running stats: unbiased variance (biased if only one value, which
         * tr_model refuses in training; the kernel alone stays defined) */
        run[c] = (1.0f - TR_BN_MOMENTUM) * run[c] + TR_BN_MOMENTUM * mean;
        run[C + c] = (1.0f - TR_BN_MOMENTUM) * run[C + c] +
                     TR_BN_MOMENTUM * (cnt > 1.0f ? sq / (cnt - 1.0f) : var);
        g = gb[c];
        b = gb[C + c];
        bn_apply(y + c * hw, x + c * hw, n, hw, chw, mean, invstd, g, b, relu);
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
        const float invstd = 1.0f / tr_sqrtf(run[C + c] + TR_BN_EPS);
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
    size_t j;

    for (c = 0; c < C; c++) {
        const float mean = save[c], invstd = save[C + c];
        float dbeta = 0.0f, dgamma = 0.0f, k, mb, mg;
        for (i = 0; i < n; i++) {
            float sb, sg;
            dsums_lanes(&sb, &sg, dy + i * chw + c * hw, x + i * chw + c * hw, hw, mean,
                        invstd);
            dbeta += sb;
            dgamma += sg;
        }
        dgb[c] = dgamma;
        dgb[C + c] = dbeta;
        if (dx == NULL)
            continue;
        k = gb[c] * invstd / cnt;
        mb = dbeta;
        mg = dgamma;
        for (i = 0; i < n; i++) {
            const float *xp = x + i * chw + c * hw, *dyp = dy + i * chw + c * hw;
            float *dxp = dx + i * chw + c * hw;
            for (j = 0; j < hw; j++) {
                float xhat = (xp[j] - mean) * invstd;
                dxp[j] = k * ((cnt * dyp[j] - mb) - xhat * mg);
            }
        }
    }
}
