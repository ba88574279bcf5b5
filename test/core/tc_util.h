/* test/core helpers: random tensors from tr_rng, layer shapes by hand,
 * mixed absolute/relative comparison. */
#ifndef TC_UTIL_H
#define TC_UTIL_H

#include "tinyring.h"
#include "tr_layer_kernels.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct tr_rng tc_rng;

static inline float *tc_rand(size_t n, float lo, float hi)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = tr_rng_uniform(&tc_rng, lo, hi);
    return p;
}

static inline float *tc_zeros(size_t n)
{
    return calloc(n ? n : 1, sizeof(float));
}

/* A resolved layer with the given per-sample input shape. */
static inline struct tr_layer tc_layer(unsigned kind, unsigned ic, unsigned h, unsigned w,
                                unsigned out, unsigned k, unsigned s, unsigned p)
{
    struct tr_layer l;
    memset(&l, 0, sizeof l);
    l.d.kind = (uint8_t)kind;
    l.d.kernel = (uint8_t)k;
    l.d.stride = (uint8_t)s;
    l.d.pad = (uint8_t)p;
    l.d.out = (uint16_t)out;
    l.in_c = (uint16_t)ic;
    l.in_h = (uint16_t)h;
    l.in_w = (uint16_t)w;
    l.out_c = (uint16_t)ic;
    l.out_h = (uint16_t)h;
    l.out_w = (uint16_t)w;
    if (kind == TR_LAYER_CONV2D) {
        l.out_c = (uint16_t)out;
        l.out_h = (uint16_t)((h + 2 * p - k) / s + 1);
        l.out_w = (uint16_t)((w + 2 * p - k) / s + 1);
    } else if (kind == TR_LAYER_MAXPOOL2D) {
        l.out_h = (uint16_t)((h - k) / s + 1);
        l.out_w = (uint16_t)((w - k) / s + 1);
    } else if (kind == TR_LAYER_LINEAR) {
        l.out_c = (uint16_t)out;
    }
    return l;
}

static inline size_t tc_in(const struct tr_layer *l) { return (size_t)l->in_c * l->in_h * l->in_w; }
static inline size_t tc_out(const struct tr_layer *l) { return (size_t)l->out_c * l->out_h * l->out_w; }

/* largest |a-b| / (atol + rtol*|b|) over n values: <= 1 means all close */
static inline double tc_worst(const float *a, const float *b, size_t n, double atol, double rtol)
{
    double w = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]) / (atol + rtol * fabs((double)b[i]));
        if (!(e <= w))   /* also catches NaN */
            w = e != e ? 1e30 : e;
    }
    return w;
}

static inline double tc_maxabs(const float *a, size_t n)
{
    double m = 0.0;
    size_t i;
    for (i = 0; i < n; i++)
        if (fabs((double)a[i]) > m)
            m = fabs((double)a[i]);
    return m;
}

#endif /* TC_UTIL_H */
