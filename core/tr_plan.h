/* tinyring (internal): the execution plans' shared pieces. layout() in
 * tr_model.c sizes and places the buffers with these; tr_model_run.c runs
 * the layers by role; tr_plan.c holds the lean plan's fused blocks.
 * Not part of the API (tr_ prefix only because core is a static library). */
#ifndef TR_PLAN_H
#define TR_PLAN_H

#include <stddef.h>
#include "tr_model.h"

/* Where a layer's backward puts the gradient w.r.t. its input */
#define TR_DX_NONE     0   /* first layer, or kept inside a block or a stream */
#define TR_DX_IN_PLACE 1   /* over its input's buffer (nothing reads it again) */
#define TR_DX_DBUF     2   /* the ping-pong buffer that does not hold its dy */
#define TR_DX_PASS     3   /* Flatten: the same floats as its dy */

/* Set every layer's role for m->desc.plan (the fast plan: all TR_ROLE_LAYER). */
void tr_plan_roles(struct tr_model *m);

/* 1 if layer i's output gets a buffer of its own (roles set): not an
 * alias of its input's, not recomputed, not made inside a block. */
int tr_plan_stores(const struct tr_model *m, unsigned i);

/* TR_DX_* of layer i (roles set); layers: the run is layer by layer (the
 * reference kernels, or the fast plan where it does not fuse), every
 * input gradient through a ping-pong buffer. */
int tr_plan_dx(const struct tr_model *m, unsigned i, int layers);

/* Floats of scratch the block headed by BN layer b, and the stream at
 * linear layer i, use at this batch (the conv bands are sized around them). */
size_t tr_plan_block_floats(const struct tr_model *m, unsigned b, unsigned batch);
size_t tr_plan_stream_floats(const struct tr_model *m, unsigned i);

/* The lean plan's fused stages (tr_plan.c). x is the model input,
 * n the samples; the backward of a block reads its pool's gradient from dy,
 * or, when dy is NULL, from the stream after it (its gradient in sdy). */
void tr_plan_block_forward(struct tr_model *m, unsigned b, const float *x, unsigned n,
                           int train);
void tr_plan_block_backward(struct tr_model *m, unsigned b, const float *x, unsigned n,
                            const float *dy, const float *sdy, float *dx);
void tr_plan_stream_forward(struct tr_model *m, unsigned i, const float *x, unsigned n,
                            int train);
/* the stream's bias gradient; its weight gradient is zeroed here and made
 * by the block's backward, which runs next */
void tr_plan_stream_backward(struct tr_model *m, unsigned i, unsigned n, const float *dy);

/* Where backward writes layer l's parameter gradient (l->p_len floats):
 * grads + p_off with the full gradient; in the bucket mode, in the one
 * bucket buffer when l's bucket is the open one, else (a lean block's BN,
 * whose bucket opens after the stream's) in the spill (tr_model.c). */
float *tr_plan_grad(struct tr_model *m, const struct tr_layer *l);

#endif /* TR_PLAN_H */
