/* tinyring: col2im's stride-1 row adds on the Cortex-M4F, by load-multiple,
 * four adds and store-multiple (tr_layer_kernels.h's tr_vfp_add).
 * Included by tr_layer_conv.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_CONV_VFP_H
#define TR_CONV_VFP_H

/* xs[j - wlo] += r[j] for j in [wlo, whi) (j unused: tr_conv_cols.h's) */
#define COL2IM_ADD(xs, r, wlo, whi, j) tr_vfp_add((xs), (r) + (wlo), (whi) - (wlo))

#endif /* TR_CONV_VFP_H */
