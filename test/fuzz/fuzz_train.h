/* tinyring fuzz: the small trainer whose state bytes (checkpoints and model
 * files, core/tr_train.c) the ckpt harness parses and gen_corpus writes its
 * seeds from: a 1x2x2 input, conv 1x1 to 2 channels, BatchNorm, linear to 3
 * classes (35 parameters, 4 BN buffers: a 396-byte checkpoint), one rank,
 * 16 steps per epoch, 3 epochs. */
#ifndef TR_FUZZ_TRAIN_H
#define TR_FUZZ_TRAIN_H

#include <stdlib.h>
#include <string.h>

#include "tr_arena.h"
#include "tr_train.h"

static int fz_train_samples(void *ctx, int split, const uint32_t *idx, unsigned n,
                            uint8_t *pixels, uint8_t *labels)
{
    unsigned k;
    (void)ctx;
    (void)split;
    for (k = 0; k < n; k++) {
        memset(pixels + 4 * k, (int)(idx[k] * 37u), 4);
        labels[k] = (uint8_t)(idx[k] % 3u);
    }
    return 0;
}

static void fz_train_config(struct tr_train_config *c)
{
    memset(c, 0, sizeof *c);
    c->model.in_c = 1;
    c->model.in_h = 2;
    c->model.in_w = 2;
    c->model.n_layers = 4;
    c->model.layer[0].kind = TR_LAYER_CONV2D;
    c->model.layer[0].kernel = 1;
    c->model.layer[0].stride = 1;
    c->model.layer[0].out = 2;
    c->model.layer[1].kind = TR_LAYER_BATCHNORM2D;
    c->model.layer[2].kind = TR_LAYER_FLATTEN;
    c->model.layer[3].kind = TR_LAYER_LINEAR;
    c->model.layer[3].out = 3;
    c->batch = 4;
    c->n_train = 64;
    c->load = fz_train_samples;
    c->lr = 0.01f;
    c->momentum = 0.9f;
    c->seed = 5;
    c->algo = TR_ALGO_RING;
    c->epochs = 3;
    c->rank = 0;
    c->world = 1;
}

/* A fresh trainer in a zeroed arena (the same bytes every time). */
static struct tr_train *fz_train_new(void)
{
    static struct tr_train t;
    static void *arena;
    static size_t bytes;
    struct tr_train_config c;
    fz_train_config(&c);
    if (!arena && (tr_train_arena_size(&c, &bytes) < 0 ||
                   posix_memalign(&arena, TR_ARENA_ALIGN, bytes) != 0))
        abort();
    memset(arena, 0, bytes);
    memset(&t, 0, sizeof t);
    if (tr_train_init(&t, &c, arena, bytes) != 0)
        abort();
    return &t;
}

#endif /* TR_FUZZ_TRAIN_H */
