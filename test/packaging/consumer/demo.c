/* test/packaging consumer: see demo.h. Freestanding C99, static memory only. */
#include "tinyring.h"
#include "train_step.h"
#include "demo.h"

#define DEMO_C1     4u
#define DEMO_C2     8u
#define DEMO_BATCH  4u
/* a bound, checked against the size query before init */
#define DEMO_ARENA_BYTES (1024u * 1024u)

static uint8_t arena[DEMO_ARENA_BYTES] TR_ARENA_ALIGNED;
static uint8_t pixels[DEMO_BATCH * BT_PIXELS];
static float x[DEMO_BATCH * BT_PIXELS];      /* (batch, 1, 28, 28) */
static uint8_t y[DEMO_BATCH];
static struct tr_model model;

/* pixels and labels 0..9 from a fixed LCG */
static void make_batch(void)
{
    uint32_t s = 20240601u;
    unsigned i;
    for (i = 0; i < DEMO_BATCH * BT_PIXELS; i++) {
        s = s * 1664525u + 1013904223u;
        pixels[i] = (uint8_t)(s >> 24);
    }
    for (i = 0; i < DEMO_BATCH; i++) {
        s = s * 1664525u + 1013904223u;
        y[i] = (uint8_t)((s >> 16) % 10u);
    }
    bt_pixels_to_input(x, pixels, DEMO_BATCH);
}

int demo_run(uint32_t loss_bits[DEMO_STEPS], uint32_t *param_hash)
{
    struct tr_model_desc d;
    struct tr_sgd sgd;
    size_t need;
    unsigned step;
    int e;

    tr_model_desc_convnet(&d, DEMO_C1, DEMO_C2, 10);
    if ((e = tr_model_arena_size(&d, DEMO_BATCH, &need)) < 0)
        return e;
    if (need > sizeof arena)
        return TR_ERR_NOMEM;
    if ((e = tr_model_init(&model, &d, DEMO_BATCH, arena, sizeof arena)) < 0)
        return e;
    tr_model_init_params(&model, 1);
    tr_sgd_init(&sgd);
    sgd.lr = 0.01f;
    make_batch();
    for (step = 0; step < DEMO_STEPS; step++) {
        float loss;
        if ((e = bt_forward_backward(&model, x, y, DEMO_BATCH, &loss)) < 0)
            return e;
        bt_sgd_step(&model, &sgd);
        loss_bits[step] = bt_float_bits(loss);
    }
    *param_hash = bt_hash_floats(model.params, model.n_params);
    return 0;
}
