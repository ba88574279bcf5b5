/* tinyring: a portable deterministic PRNG (PCG32, XSH-RR output).
 * Integer-only state transitions: the same seed gives the same bits on every
 * platform. Used for parameter init and by apps for shuffling. */
#ifndef TR_RNG_H
#define TR_RNG_H

#include <stdint.h>

struct tr_rng {
    uint64_t state;  /* current LCG state */
    uint64_t inc;    /* stream selector, always odd */
};

void     tr_rng_seed(struct tr_rng *r, uint64_t seed, uint64_t stream);
uint32_t tr_rng_u32(struct tr_rng *r);
/* Uniform in [0, n) without modulo bias; n >= 1. */
uint32_t tr_rng_below(struct tr_rng *r, uint32_t n);
/* Uniform float in [lo, hi): 24 random mantissa bits, exact IEEE arithmetic. */
float    tr_rng_uniform(struct tr_rng *r, float lo, float hi);

#endif /* TR_RNG_H */
