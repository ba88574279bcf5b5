/* tinyring: conv on a scalar FPU (Cortex-M4F, M55, RV32, plain C): no
 * shifted planes and no direct input gradient (shifted() is 0 there, so
 * these are never called).
 * Included by tr_layer_conv.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_CONV_SCALAR_H
#define TR_CONV_SCALAR_H

static void shifted_begin(float *z, const struct tr_layer *l)
{
    (void)z, (void)l;
}

static void shifted_planes(float *z, const float *x, size_t ic0, size_t ic1,
                           const struct tr_layer *l)
{
    (void)z, (void)x, (void)ic0, (void)ic1, (void)l;
}

static size_t dx_floats(const struct tr_layer *l)
{
    (void)l;
    return 0;
}

static void dx_begin(float *wk, float *space, const float *w, const struct tr_layer *l)
{
    (void)wk, (void)space, (void)w, (void)l;
}

#define TR_DX_NS 1

static void dx_samples(float *dx, size_t ns, const float *wk, float *space, const float *dy,
                       const struct tr_layer *l)
{
    (void)dx, (void)ns, (void)wk, (void)space, (void)dy, (void)l;
}

#endif /* TR_CONV_SCALAR_H */
