/* tinyring: PCG32 (XSH-RR). Integer state only, so a seed gives the same
 * sequence on every target; floats are built from 24 random bits with one
 * exact scaling, one multiply and one add (no contraction in core). */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_rng.h"

#define TR_PCG_MULT 6364136223846793005ull

void tr_rng_seed(struct tr_rng *r, uint64_t seed, uint64_t stream)
{
    r->state = 0u;
    r->inc = (stream << 1) | 1u;
    (void)tr_rng_u32(r);
    r->state += seed;
    (void)tr_rng_u32(r);
}

uint32_t tr_rng_u32(struct tr_rng *r)
{
    uint64_t old = r->state;
    uint32_t xorshifted, rot;

    r->state = old * TR_PCG_MULT + r->inc;
    xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
    rot = (uint32_t)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

uint32_t tr_rng_below(struct tr_rng *r, uint32_t n)
{
    /* Reject the low (2^32 mod n) values so every residue is equally likely. */
    uint32_t threshold, x;

    if (n <= 1u)
        return 0u;
    threshold = (uint32_t)(0u - n) % n;
    for (;;) {
        x = tr_rng_u32(r);
        if (x >= threshold)
            return x % n;
    }
}

float tr_rng_uniform(struct tr_rng *r, float lo, float hi)
{
    /* u in [0, 1) with 24 bits: exact in float. */
    float u = (float)(tr_rng_u32(r) >> 8) * (1.0f / 16777216.0f);
    float v = lo + (hi - lo) * u;

    return v < hi ? v : lo;  /* rounding can reach hi when lo is tiny vs hi */
}
