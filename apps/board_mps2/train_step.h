/* tinyring board_mps2: the training steps the board and its host twin run,
 * one source for both (test/board/host_train.c compiles this file too), so
 * "the same steps" is true by construction: same pixel scaling, same order
 * of calls, same hash. Freestanding; everything is the caller's memory. */
#ifndef BOARD_TRAIN_STEP_H
#define BOARD_TRAIN_STEP_H

#include <stddef.h>
#include <stdint.h>
#include "tinyring.h"

#define BT_PIXELS 784u  /* 28 x 28 */

/* x[i] = (pixel / 255 - 0.1307) / 0.3081, the seeds' Normalize, n samples. */
void bt_pixels_to_input(float *x, const uint8_t *pixels, unsigned n);

/* One local step: forward (training mode) on x (n samples), loss against y,
 * backward. Loss in *loss. Returns 0 or a tr_err. The caller then averages
 * grads (ring) or not, and calls tr_sgd_step. */
int bt_forward_backward(struct tr_model *m, const float *x, const uint8_t *y,
                        unsigned n, float *loss);

/* SGD over the model's flat blocks. */
void bt_sgd_step(struct tr_model *m, struct tr_sgd *s);

/* FNV-1a 32 over the bytes of n floats (little-endian on both targets). */
uint32_t bt_hash_floats(const float *v, size_t n);

/* The raw bits of a float, for exact printing. */
uint32_t bt_float_bits(float f);

#endif /* BOARD_TRAIN_STEP_H */
