/* tinyring: SGD as torch.optim.SGD (dampening 0), one flat loop.
 * Compiled with -ffp-contract=off like all of core: every rank (host or
 * board) that applies the same averaged gradient gets the same bits. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_sgd.h"

void tr_sgd_init(struct tr_sgd *s)
{
    s->lr = 0.001f;
    s->momentum = 0.9f;
    s->weight_decay = 0.0f;
    s->nesterov = 0;
    s->started = 0;
}

/* momentum SGD as the seeds run it (no weight decay, not Nesterov, after
 * the first step): buf = mu * buf + g; p = p - lr * buf, with no test per
 * element (on the Cortex-M4F the general loop below re-tested its flags
 * each time) */
static void step_momentum(float *restrict params, const float *restrict grads,
                          float *restrict momentum, size_t n, float lr, float mu)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const float buf = mu * momentum[i] + grads[i];
        momentum[i] = buf;
        params[i] = params[i] - lr * buf;
    }
}

/* the same at the first step, where torch starts buf at g */
static void step_first(float *restrict params, const float *restrict grads,
                       float *restrict momentum, size_t n, float lr)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const float g = grads[i];
        momentum[i] = g;
        params[i] = params[i] - lr * g;
    }
}

void tr_sgd_step(struct tr_sgd *s, float *params, const float *grads,
                 float *momentum, size_t n)
{
    tr_sgd_apply(s, params, grads, momentum, n);
    s->started = 1;
}

void tr_sgd_apply(const struct tr_sgd *s, float *params, const float *grads,
                  float *momentum, size_t n)
{
    const float lr = s->lr, mu = s->momentum, wd = s->weight_decay;
    const int started = s->started, nesterov = s->nesterov;
    size_t i;

    if (wd == 0.0f && mu != 0.0f && !nesterov) {
        if (started)
            step_momentum(params, grads, momentum, n, lr, mu);
        else
            step_first(params, grads, momentum, n, lr);
        return;
    }
    for (i = 0; i < n; i++) {
        float g = grads[i];
        if (wd != 0.0f)
            g = g + wd * params[i];
        if (mu != 0.0f) {
            float buf = started ? mu * momentum[i] + g : g;
            momentum[i] = buf;
            g = nesterov ? g + mu * buf : buf;
        }
        params[i] = params[i] - lr * g;
    }
}
