/* tinyring: conv's 8 x 8 transpose block written whole (8 independent
 * loads, one contiguous run of stores), for every target without AVX.
 * Included by tr_layer_conv.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_CONV_PLAIN_H
#define TR_CONV_PLAIN_H

/* one full 8 x 8 block: column c of a's block is row c of t's */
static void transpose8(float *restrict t, const float *restrict a, size_t rows, size_t cols)
{
    size_t c;

    for (c = 0; c < 8; c++) {
        const float *ac = a + c;
        float *tc = t + c * rows;
        tc[0] = ac[0];
        tc[1] = ac[cols];
        tc[2] = ac[2 * cols];
        tc[3] = ac[3 * cols];
        tc[4] = ac[4 * cols];
        tc[5] = ac[5 * cols];
        tc[6] = ac[6 * cols];
        tc[7] = ac[7 * cols];
    }
}

#endif /* TR_CONV_PLAIN_H */
