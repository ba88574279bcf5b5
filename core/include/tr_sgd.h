/* tinyring: SGD as torch.optim.SGD (dampening 0).
 *
 *   g   = grad + weight_decay * p
 *   buf = g                       on the first step
 *   buf = momentum * buf + g      after
 *   g   = g + momentum * buf      if nesterov, else g = buf
 *   p  -= lr * g
 * With momentum 0 there is no buffer: p -= lr * g.
 */
#ifndef TR_SGD_H
#define TR_SGD_H

#include <stddef.h>

struct tr_sgd {
    float lr;            /* learning rate (seeds: 0.001) */
    float momentum;      /* (seeds: 0.9); 0 disables the buffer */
    float weight_decay;  /* L2 coefficient added to the gradient; 0 = off */
    int   nesterov;      /* 1 = Nesterov momentum (needs momentum > 0) */
    int   started;       /* 0 until the first step; part of a checkpoint */
};

/* Defaults of the seeds: lr 0.001, momentum 0.9, no decay, not nesterov. */
void tr_sgd_init(struct tr_sgd *s);

/* One step over n floats: params (n), grads (n), momentum (n), one flat loop. */
void tr_sgd_step(struct tr_sgd *s, float *params, const float *grads,
                 float *momentum, size_t n);

/* The same update over n floats without marking the step done (started
 * unchanged): a step applied bucket by bucket (tr_train's in-place mode)
 * calls it per bucket, then sets started = 1. SGD is elementwise, so the
 * bits are tr_sgd_step's over the whole vector. momentum may be NULL when
 * s->momentum is 0. */
void tr_sgd_apply(const struct tr_sgd *s, float *params, const float *grads,
                  float *momentum, size_t n);

#endif /* TR_SGD_H */
