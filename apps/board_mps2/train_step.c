/* tinyring board_mps2: see train_step.h. */
#include "train_step.h"
#include "tr_util.h"

void bt_pixels_to_input(float *x, const uint8_t *pixels, unsigned n)
{
    size_t i, total = (size_t)n * BT_PIXELS;
    for (i = 0; i < total; i++)
        x[i] = ((float)pixels[i] / 255.0f - 0.1307f) / 0.3081f;
}

int bt_forward_backward(struct tr_model *m, const float *x, const uint8_t *y,
                        unsigned n, float *loss)
{
    int e;
    if ((e = tr_model_forward(m, x, n, 1)) < 0)
        return e;
    if ((e = tr_model_loss(m, y, loss, 0)) < 0)
        return e;
    return tr_model_backward(m);
}

void bt_sgd_step(struct tr_model *m, struct tr_sgd *s)
{
    tr_sgd_step(s, m->params, m->grads, m->momentum, m->n_params);
}

uint32_t bt_float_bits(float f)
{
    union {
        float    f;
        uint32_t u;
    } v;
    v.f = f;
    return v.u;
}

uint32_t bt_hash_floats(const float *v, size_t n)
{
    uint32_t h = TR_FNV32_INIT;
    size_t i;
    for (i = 0; i < n; i++) {
        uint8_t b[4];
        tr_put_le32(b, bt_float_bits(v[i]));
        h = tr_fnv1a32(h, b, 4);
    }
    return h;
}
