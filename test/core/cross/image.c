/* A minimal bare-metal image around core: size the arena with the size
 * query (at build time, through the generated image_arena.h, and again at
 * run time), init a narrow ConvNet on a static arena, run three training
 * steps (forward, loss, backward, SGD) on a synthetic batch and return 0 if
 * the loss went down. No libc: the memcpy/memset/memmove a compiler may
 * emit for struct copies and loops are defined here, not in core. */
#include "tinyring.h"
#include "image_arena.h"

static uint8_t arena[IMAGE_ARENA_BYTES] TR_ARENA_ALIGNED;
static struct tr_model model;
static float input[IMAGE_BATCH * 28 * 28];
static uint8_t labels[IMAGE_BATCH];
volatile float image_loss[3];   /* inspectable from a debugger */

int image_main(void);

int image_main(void)
{
    struct tr_model_desc d;
    struct tr_sgd sgd;
    struct tr_rng rng;
    size_t need = 0, i;
    unsigned step;

    tr_model_desc_convnet(&d, IMAGE_C1, IMAGE_C2, 10);
    if (tr_model_arena_size(&d, IMAGE_BATCH, &need) != 0 || need > sizeof arena)
        return 1;
    if (tr_model_init(&model, &d, IMAGE_BATCH, arena, sizeof arena) != 0)
        return 2;
    tr_model_init_params(&model, 1);
    tr_rng_seed(&rng, 7, 7);
    for (i = 0; i < sizeof input / sizeof input[0]; i++)
        input[i] = tr_rng_uniform(&rng, -1.0f, 1.0f);
    for (i = 0; i < IMAGE_BATCH; i++)
        labels[i] = (uint8_t)tr_rng_below(&rng, 10);
    tr_sgd_init(&sgd);
    sgd.lr = 0.01f;
    for (step = 0; step < 3; step++) {
        float loss = 0.0f;
        if (tr_model_forward(&model, input, IMAGE_BATCH, 1) != 0 ||
            tr_model_loss(&model, labels, &loss, 0) != 0 || tr_model_backward(&model) != 0)
            return 3;
        tr_sgd_step(&sgd, model.params, model.grads, model.momentum, model.n_params);
        image_loss[step] = loss;
    }
    return image_loss[2] < image_loss[0] ? 0 : 4;
}

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);

void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s) {
        while (n--)
            *d++ = *s++;
    } else {
        while (n--)
            d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}
