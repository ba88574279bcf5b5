/* tinyring: a small sequential CNN in the caller's arena.
 *
 * Layout (llm.c's malloc_and_point_parameters): all trainable parameters in
 * one float block, gradients and SGD momentum in twin blocks with the same
 * offsets, BatchNorm running statistics in a fourth block. SGD is then one
 * flat loop and gradient averaging is one collective on one float array.
 *
 * Tensors are float32 NCHW, PyTorch's layout, so weights map one to one:
 *   conv weight (OC, IC, KH, KW), conv bias (OC), bn weight/bias (C),
 *   linear weight (OUT, IN), linear bias (OUT).
 */
#ifndef TR_MODEL_H
#define TR_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "tr_config.h"   /* TR_MAX_LAYERS */

enum tr_layer_kind {
    TR_LAYER_CONV2D = 1,     /* out = channels, kernel, stride, pad */
    TR_LAYER_BATCHNORM2D,    /* channels from input; eps 1e-5, momentum 0.1 */
    TR_LAYER_RELU,
    TR_LAYER_MAXPOOL2D,      /* kernel = window, stride */
    TR_LAYER_FLATTEN,        /* (B,C,H,W) -> (B,C*H*W), no data movement */
    TR_LAYER_LINEAR          /* out = features */
};

struct tr_layer_desc {
    uint8_t  kind;    /* enum tr_layer_kind */
    uint8_t  kernel;  /* conv: square kernel size; maxpool: window; else 0 */
    uint8_t  stride;  /* conv, maxpool: stride (>= 1); else 0 */
    uint8_t  pad;     /* conv: zero padding on every side; else 0 */
    uint16_t out;     /* conv: output channels; linear: output features; else 0 */
};

/* Execution plans: how the arena is laid out and the layers are run. Both
 * compute the same bits (ranks on different plans train together: the plan
 * is not part of tr_model_layout_hash). */
#define TR_PLAN_FAST 0   /* every layer's output and both gradient buffers
                          * stored, whole-image convolution scratch: speed */
#define TR_PLAN_LEAN 1   /* as few bytes as possible: outputs recomputed
                          * where that is cheap, gradients written in place,
                          * convolution scratch in bands (docs/DESIGN.md) */

struct tr_model_desc {
    uint16_t in_c, in_h, in_w;  /* one input sample's shape, e.g. 1, 28, 28 */
    uint8_t  n_layers;          /* used entries of layer[]; the last must be
                                 * LINEAR: its out is the number of classes */
    uint8_t  plan;              /* TR_PLAN_FAST (0) or TR_PLAN_LEAN */
    struct tr_layer_desc layer[TR_MAX_LAYERS];
};

/* Fill d with the seeds' ConvNet (seed 002) for 1x28x28 input:
 * conv(1->c1,5,pad 2)-BN-ReLU-pool2, conv(c1->c2,5,pad 2)-BN-ReLU-pool2,
 * flatten, linear(c2*7*7 -> classes). c1=16, c2=32, classes=10 is the seed;
 * smaller channel counts give a narrower net for small boards. The plan is
 * TR_PLAN_FAST; set d->plan afterwards for another. */
void tr_model_desc_convnet(struct tr_model_desc *d, unsigned c1, unsigned c2,
                           unsigned classes);

/* One resolved layer: shapes, where its parameters live, and the arena
 * buffers its forward pass fills for its backward pass. */
struct tr_layer {
    struct tr_layer_desc d;
    uint16_t in_c, in_h, in_w;     /* per-sample input shape */
    uint16_t out_c, out_h, out_w;  /* per-sample output shape */
    size_t   p_off, p_len;         /* floats at params+p_off (weights then bias) */
    size_t   b_off, b_len;         /* floats at buffers+b_off (BN: mean then var) */
    float   *out;                  /* (batch, out_c, out_h, out_w) forward output;
                                    * FLATTEN, and a ReLU after conv/BN/linear,
                                    * alias the previous layer's out. On the
                                    * lean plan NULL where the role keeps none.
                                    * The fast kernels write only what the
                                    * roles read (a block's BN and ReLU outs
                                    * are left as they were), and backward
                                    * writes gradients over some */
    float   *save;                 /* what backward needs beyond in/out: BN the
                                    * batch mean (C) then invstd (C), xhat is
                                    * recomputed; NULL for the others (max-pool
                                    * finds its argmax again from in and out) */
    uint8_t  role;                 /* how the plan runs it (TR_ROLE_*) */
    int8_t   bucket;               /* the bucket of its parameters, -1: none */
    size_t   band;                 /* conv: output positions per band of its
                                    * scratch (lean plan), or 0: whole-image
                                    * im2col (fast plan, and lean where room) */
};

/* Roles (struct tr_layer.role): how the fast kernels run a layer
 * (docs/DESIGN.md). Both plans fuse BN blocks; the lean plan also
 * recomputes and streams. The fast plan still stores every layer's output
 * (the reference kernels, which run every layer alone, write them all);
 * its fast kernels leave a block's BN and ReLU outputs unwritten.
 *   TR_ROLE_LAYER      runs alone; out stored (or an alias of its input's)
 *   TR_ROLE_RECOMPUTED a first conv feeding a BN block: out is NULL, the
 *                      block computes it again one plane at a time
 *   TR_ROLE_BLOCK      a BN followed by [ReLU] MaxPool: the pool's output
 *                      made from the BN's input plane by plane; on the lean
 *                      plan nothing else is stored
 *   TR_ROLE_IN_BLOCK   the ReLU and MaxPool of a block (run by it), and a
 *                      Flatten before a TR_ROLE_STREAM linear
 *   TR_ROLE_STREAM     a linear after a block's pool: that pool's out is
 *                      NULL, made again sample by sample as the linear
 *                      reads it; its input gradient is never stored */
/* A bucket (docs/BUCKETS.md): a contiguous slice [lo, hi) of the flat
 * parameter vector whose gradient backward completes at once, reduced as
 * one range. One per conv or linear layer, a BN's gamma and beta with the
 * conv before it (the layer backward reaches next), numbered in the order
 * backward completes them: bucket 0 is the last linear layer, the last
 * bucket the first conv. A function of the layers only (not of the plan),
 * so ranks on different plans cut the same buckets. */
struct tr_bucket {
    size_t   lo, hi;               /* floats of the flat vector */
    unsigned done_at;              /* complete once backward has run every
                                    * layer from the last down to this one */
};

/* Options of tr_model_arena_size_opt / tr_model_init_opt (bits). */
#define TR_MODEL_GRAD_BUCKET 1u    /* no full gradient: grads is one buffer
                                    * of the largest bucket, holding the open
                                    * bucket (tr_model_bucket_next) */
#define TR_MODEL_NO_MOMENTUM 2u    /* no momentum twin (SGD without
                                    * momentum): momentum is NULL */
#define TR_MODEL_ONE_PLANE   4u    /* the lean plan's recomputed first conv
                                    * keeps one output plane, not one per
                                    * sample: every pass over the batch makes
                                    * it again (the scratch stops growing by
                                    * a plane per sample; more instructions
                                    * at batch > 1: make board-cycles). The
                                    * same bits; nothing changes at batch 1 */

#define TR_ROLE_LAYER      0
#define TR_ROLE_RECOMPUTED 1
#define TR_ROLE_BLOCK      2
#define TR_ROLE_IN_BLOCK   3
#define TR_ROLE_STREAM     4

struct tr_model {
    struct tr_model_desc desc;     /* copy of the description it was built from */
    unsigned batch;                /* largest batch the arena was laid out for */
    unsigned classes;              /* outputs of the last layer */
    size_t   n_params;             /* floats in params, grads and momentum */
    size_t   n_buffers;            /* floats in buffers (BN running mean, var) */
    float   *params;               /* (n_params) trainable parameters */
    float   *grads;                /* (n_params) d loss / d params of the last
                                    * backward; TR_MODEL_GRAD_BUCKET: (grads_len)
                                    * the open bucket's, grads[0] its lo */
    float   *momentum;             /* (n_params) SGD momentum buffers, NULL
                                    * with TR_MODEL_NO_MOMENTUM */
    unsigned opts;                 /* TR_MODEL_* options it was laid out with */
    size_t   grads_len;            /* floats at grads: n_params, or the
                                    * largest bucket (at least n_buffers + 1:
                                    * the trainer's resync borrows it) */
    unsigned n_buckets;
    struct tr_bucket bucket[TR_MAX_LAYERS];
    float   *spill;                /* TR_MODEL_GRAD_BUCKET on the lean plan: a
                                    * block's BN gradient made while the
                                    * stream's bucket is still open */
    size_t   spill_lo, spill_len;  /* the floats of the flat vector it holds */
    int      spill_used;           /* spill holds this backward's gradient */
    unsigned open_bucket;          /* TR_MODEL_GRAD_BUCKET: the bucket grads holds */
    /* the staged backward (tr_model_backward_begin/stage) */
    unsigned bw_left;              /* layers whose backward has not run */
    unsigned bw_done;              /* buckets complete */
    int      bw_fused;
    const float *bw_dout, *bw_sdy;
    float   *buffers;              /* (n_buffers) BN running statistics */
    float   *dlogits;              /* (batch, classes) d loss / d logits from tr_model_loss */
    float   *dbuf[2];              /* ping-pong activation gradients, largest layer */
    float   *scratch;              /* kernel scratch (im2col, ...) */
    size_t   scratch_len;          /* floats at scratch */
    const float *input;            /* the input of the last forward (caller's memory) */
    unsigned last_n;               /* samples in the last forward */
    int      last_train;           /* 1 if the last forward ran in training mode */
    size_t   arena_used;           /* bytes of the arena this model uses */
    unsigned n_layers;
    struct tr_layer layer[TR_MAX_LAYERS];
    int      kernels;              /* TR_KERNELS_FAST (set by init) or
                                    * TR_KERNELS_REF: the plain reference loops,
                                    * for tests, on the fast plan only (forward
                                    * refuses them on the lean plan); the
                                    * caller may switch any time: a forward
                                    * runs the kernels set then, and its
                                    * backward the same */
    int      last_kernels;         /* kernels of the last forward */
};

#define TR_KERNELS_FAST 0
#define TR_KERNELS_REF  1

/* Exact arena bytes tr_model_init needs for d at this batch size.
 * Returns 0 and sets *bytes, or TR_ERR_INVAL for a bad description. */
int tr_model_arena_size(const struct tr_model_desc *d, unsigned batch, size_t *bytes);

/* The floats of parameters and of buffers a model of d has, before any
 * arena exists. Returns 0 or TR_ERR_INVAL for a bad description. */
int tr_model_counts(const struct tr_model_desc *d, size_t *n_params, size_t *n_buffers);

/* Lay the model out in arena[0..arena_size) (TR_ARENA_ALIGN-aligned).
 * TR_ERR_NOMEM if it is too small, TR_ERR_INVAL for a bad description.
 * Parameters are zero until tr_model_init_params. Momentum is zeroed. */
int tr_model_init(struct tr_model *m, const struct tr_model_desc *d, unsigned batch,
                  void *arena, size_t arena_size);

/* PyTorch's default initialisation from a portable PRNG: conv and linear
 * weight and bias U(-1/sqrt(fan_in), +1/sqrt(fan_in)) (kaiming-uniform with
 * a=sqrt(5)), BN weight 1, bias 0, running mean 0, var 1. Same seed, same
 * bits on every platform. */
void tr_model_init_params(struct tr_model *m, uint64_t seed);

/* Forward n <= batch samples x (n, in_c, in_h, in_w). train=1 uses batch
 * statistics in BN and updates the running stats; train=0 uses running
 * stats. Returns 0 or TR_ERR_INVAL. x must stay unchanged until backward
 * (the lean plan reads it again). */
int tr_model_forward(struct tr_model *m, const float *x, unsigned n, int train);

/* Logits (n, classes) of the last forward. */
const float *tr_model_logits(const struct tr_model *m);

/* Softmax cross-entropy of the last forward against labels (n), averaged
 * over the batch; writes dlogits for backward. loss and correct (argmax ==
 * label count) may be NULL. Returns 0, or TR_ERR_INVAL for a label out of
 * range. */
int tr_model_loss(struct tr_model *m, const uint8_t *labels, float *loss, unsigned *correct);

/* Backward of the last (training) forward from dlogits: overwrites grads.
 * Returns 0, or TR_ERR_INVAL if the last forward was not in training mode
 * or the model has no full gradient (TR_MODEL_GRAD_BUCKET: the staged
 * backward below). */
int tr_model_backward(struct tr_model *m);

/* The same with options (TR_MODEL_*): 0 is tr_model_arena_size and
 * tr_model_init. */
int tr_model_arena_size_opt(const struct tr_model_desc *d, unsigned batch, unsigned opts,
                            size_t *bytes);
int tr_model_init_opt(struct tr_model *m, const struct tr_model_desc *d, unsigned batch,
                      unsigned opts, void *arena, size_t arena_size);

/* Backward a stage at a time, so that a caller can reduce a bucket as soon
 * as its gradient is complete (and, in the bucket mode, must, before
 * backward may go on):
 *   tr_model_backward_begin(m);               0 or TR_ERR_INVAL as backward
 *   while ((rc = tr_model_backward_stage(m)) > 0)
 *       while (done < tr_model_buckets_done(m)) reduce bucket done++ ...
 * A stage is one layer's backward (a fused block's, on the plans that fuse).
 * stage returns 1 while stages remain, 0 when backward is done, or
 * TR_ERR_BUSY in the bucket mode while the open bucket is complete and not
 * yet released by tr_model_bucket_next. The bits are tr_model_backward's. */
int tr_model_backward_begin(struct tr_model *m);
int tr_model_backward_stage(struct tr_model *m);
/* Buckets whose gradient the current backward has completed (they complete
 * in order 0, 1, ...). */
unsigned tr_model_buckets_done(const struct tr_model *m);
/* Where bucket b's gradient is (hi - lo floats): grads + lo, or in the
 * bucket mode grads itself (b must be the open bucket; NULL otherwise). */
float *tr_model_bucket_grads(struct tr_model *m, unsigned b);
/* The bucket mode: the open bucket is done with (reduced, applied); open
 * the next, so backward may go on. 0, or TR_ERR_INVAL if not complete. */
int tr_model_bucket_next(struct tr_model *m);

/* A 32-bit hash of the model's layout (description, n_params, n_buffers),
 * for the collectives' hello: ranks with different models refuse each other. */
uint32_t tr_model_layout_hash(const struct tr_model *m);

#endif /* TR_MODEL_H */
