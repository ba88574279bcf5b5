/* tinyring: the lean conv bands' row copies and adds in plain C, for every
 * target but the Cortex-M4F (whose are in tr_band_vfp.h).
 * Included by tr_layer_band.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_BAND_COLS_H
#define TR_BAND_COLS_H

/* Macros, so that every target's loop is the code it always was: j is the
 * caller's counter. (r)[j - ow0] = xs[j] for j in [lo, hi): a tap row's
 * valid columns */
#define BAND_COPY(r, xs, lo, hi, ow0, j)                                      \
    for (j = (lo); j < (hi); j++)                                             \
        (r)[j - (ow0)] = (xs)[j]

/* r[0..5) = xk[0..5): the five taps of a 5-wide kernel row */
#define BAND_COPY5(r, xk)                                                     \
    do {                                                                      \
        (r)[0] = (xk)[0]; (r)[1] = (xk)[1]; (r)[2] = (xk)[2];                 \
        (r)[3] = (xk)[3]; (r)[4] = (xk)[4];                                   \
    } while (0)

/* xs[j] += r[j - ow0] for j in [lo, hi) */
#define BAND_ADD(xs, r, lo, hi, ow0, j)                                       \
    for (j = (lo); j < (hi); j++)                                             \
        (xs)[j] += (r)[j - (ow0)]

#endif /* TR_BAND_COLS_H */
