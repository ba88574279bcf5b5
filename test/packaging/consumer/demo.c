/* test/packaging consumer: see demo.h. Freestanding C99, static memory only. */
#include <string.h>
#include "tinyring.h"
#include "demo.h"

#define DEMO_C1     4u
#define DEMO_C2     8u
#define DEMO_BATCH  4u
/* a bound, checked against the size query before init */
#define DEMO_ARENA_BYTES (1024u * 1024u)

static uint8_t arena[DEMO_ARENA_BYTES] TR_ARENA_ALIGNED;
static struct tr_train t;

/* DEMO_BATCH samples: pixels and labels 0..9 from a fixed LCG */
static int load(void *ctx, int split, const uint32_t *idx, unsigned n, uint8_t *pixels,
                uint8_t *labels)
{
    unsigned i, p;
    (void)ctx;
    (void)split;
    for (i = 0; i < n; i++) {
        uint32_t s = 20240601u + idx[i];
        for (p = 0; p < 784u; p++) {
            s = s * 1664525u + 1013904223u;
            pixels[i * 784u + p] = (uint8_t)(s >> 24);
        }
        s = s * 1664525u + 1013904223u;
        labels[i] = (uint8_t)((s >> 16) % 10u);
    }
    return 0;
}

int demo_run(uint32_t loss_bits[DEMO_STEPS], uint32_t *param_hash)
{
    struct tr_train_config c;
    struct tr_train_report r;
    size_t need;
    uint64_t h;
    int e;

    memset(&c, 0, sizeof c);
    tr_model_desc_convnet(&c.model, DEMO_C1, DEMO_C2, 10);
    c.batch = DEMO_BATCH;
    c.n_train = DEMO_BATCH;      /* one step per epoch */
    c.load = load;
    c.lr = 0.01f;
    c.momentum = 0.9f;
    c.seed = 1;
    c.epochs = DEMO_STEPS;
    c.world = 1;
    if ((e = tr_train_arena_size(&c, &need)) < 0)
        return e;
    if (need > sizeof arena)
        return TR_ERR_NOMEM;
    if ((e = tr_train_init(&t, &c, arena, sizeof arena)) < 0 || (e = tr_train_begin(&t, 0, 0)) < 0)
        return e;
    while ((e = tr_train_next(&t, &r)) > 0)
        if (e == TR_TRAIN_STEP)
            memcpy(&loss_bits[r.global_step - 1], &r.loss, 4);
    if (e < 0)
        return e;
    h = tr_train_hash(t.model.params, t.model.n_params);
    *param_hash = (uint32_t)(h ^ (h >> 32));
    return 0;
}
