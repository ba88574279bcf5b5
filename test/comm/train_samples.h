/* tinyring test: the synthetic samples the trainer's tests learn from
 * (test/app/test_train.c, test/comm/test_train_buckets.c). */
#ifndef TRAIN_SAMPLES_H
#define TRAIN_SAMPLES_H

#include <stdint.h>

/* Pixel p (0..783, row-major 28x28) of sample i of split (TR_SPLIT_*):
 * hashed noise, plus a bright band in rows 2c..2c+4 for class c = i % 10,
 * so a small ConvNet learns it in a few steps. */
static inline uint8_t train_sample_pixel(int split, uint32_t i, unsigned p)
{
    uint32_t x = (uint32_t)split * 2654435761u + i * 40503u + p * 2246822519u, row = p / 28;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    return (uint8_t)((x >> 26) + (row >= 2 * (i % 10) && row < 2 * (i % 10) + 5 ? 180 : 0));
}

#endif /* TRAIN_SAMPLES_H */
