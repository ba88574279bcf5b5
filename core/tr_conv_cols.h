/* tinyring: col2im's stride-1 row adds in C (every target but the
 * Cortex-M4F, tr_conv_vfp.h).
 * Included by tr_layer_conv.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_CONV_COLS_H
#define TR_CONV_COLS_H

/* xs[j - wlo] += r[j] for j in [wlo, whi), j the caller's counter (a
 * macro, so that the loop is the code it always was) */
#define COL2IM_ADD(xs, r, wlo, whi, j)                                        \
    for (j = (wlo); j < (whi); j++)                                           \
        (xs)[j - (wlo)] += (r)[j]

#endif /* TR_CONV_COLS_H */
