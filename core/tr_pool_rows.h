/* tinyring: the pool's plain 2x2 rows (forward, in-place backward), for every
 * target without AVX-512.
 * Included by tr_layer_pool.c alone, from its one #if that chooses the
 * 2x2 stride-2 rows and planes per target; not a header of its own. */
#ifndef TR_POOL_ROWS_H
#define TR_POOL_ROWS_H

#define POOL2_PASSES 1u
/* One output row of 2x2 stride-2 windows over input rows x0, x1: the same
 * row-major "replace only if greater" order as the general loop below, so
 * the same bits; straight-line selects that vectorise. */
static void pool2_row_forward(float *restrict y, const float *restrict x0,
                              const float *restrict x1, unsigned ow_n)
{
    unsigned ow;

    for (ow = 0; ow < ow_n; ow++) {
        float m = x0[2 * ow];
        m = x0[2 * ow + 1] > m ? x0[2 * ow + 1] : m;
        m = x1[2 * ow] > m ? x1[2 * ow] : m;
        m = x1[2 * ow + 1] > m ? x1[2 * ow + 1] : m;
        y[ow] = m;
    }
}

/* The 2x2 row of pool2_row for dx written over x: each window's four inputs
 * are read before its four gradients are stored, same selection, same bits
 * (restrict holds: each row is read and written through its own pointer
 * only, and y, dy are other buffers) */
static void pool2_row_inplace(float *restrict t0, float *restrict t1,
                              const float *restrict y, const float *restrict dy,
                              unsigned ow_n, int relu)
{
    unsigned ow;

    for (ow = 0; ow < ow_n; ow++) {
        const uint32_t gate = relu ? 0u - (uint32_t)(y[ow] > 0.0f) : ~0u;
        const uint32_t m = tr_float_bits(y[ow]), g = tr_float_bits(dy[ow]) & gate;
        const uint32_t x00 = tr_float_bits(t0[2 * ow]), x01 = tr_float_bits(t0[2 * ow + 1]);
        const uint32_t x10 = tr_float_bits(t1[2 * ow]);
        const uint32_t a = 0u - (uint32_t)(x00 == m);
        const uint32_t b = (0u - (uint32_t)(x01 == m)) & ~a;
        const uint32_t c = (0u - (uint32_t)(x10 == m)) & ~(a | b);
        const uint32_t e = ~(a | b | c);
        t0[2 * ow] = tr_bits_float(g & a);
        t0[2 * ow + 1] = tr_bits_float(g & b);
        t1[2 * ow] = tr_bits_float(g & c);
        t1[2 * ow + 1] = tr_bits_float(g & e);
    }
}

#endif /* TR_POOL_ROWS_H */
