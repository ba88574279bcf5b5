/* tinyring: the distributed sampler (see tr_train.h).
 *
 * The shuffle of an epoch is a keyed bijection of 0..n-1 evaluated at one
 * position at a time, so nothing of size n is ever stored:
 *
 *   - a Feistel network over the b-bit words, 2^b the smallest power of two
 *     >= n (b >= TR_SAMPLER_MIN_BITS): a word is split into a high part of
 *     ha = b/2 bits and a low part of hb = b - ha bits; round r maps
 *     (a, c) to (c, a ^ F(c, key[r])), the parts trading widths, so after
 *     the even number of rounds they have their first widths again. Every
 *     round is a bijection of the 2^b words whatever F is (its inverse
 *     takes (a', c') back to (c' ^ F(a', key[r]), a')), so the network is;
 *   - cycle walking: the network is applied again until the word is < n.
 *     Restricted to 0..n-1 this is a bijection too: the walk from i < n
 *     follows i's cycle of the network to the next member below n, and two
 *     starts below n cannot reach the same one (walking back from it with
 *     the inverse network gives the start: tr_sampler_index). Since
 *     2^b < 2n (for n above 2^TR_SAMPLER_MIN_BITS) a walk takes fewer than
 *     two networks on average.
 *
 * F is a 32-bit integer mixer of (c ^ key), masked to the part's width; the
 * keys are the first TR_SAMPLER_ROUNDS numbers of the tr_rng stream
 * 0x5348554646 + epoch seeded with the run's seed. Integers only: the same
 * order on every target. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_rng.h"
#include "tr_train.h"

/* Stream selector base of the shuffle, apart from the parameter-init stream. */
#define TR_SHUFFLE_STREAM 0x5348554646ull  /* "SHUFF" */

/* Smallest word of the network: sets of a few samples get 16 words, not a
 * network of 1-bit parts (which could only swap halves). */
#define TR_SAMPLER_MIN_BITS 4u

/* A 32-bit mixer (xorshift-multiply, every input bit reaching every
 * output bit). */
static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void tr_sampler_init(struct tr_sampler *s, uint32_t n, uint64_t seed, uint32_t epoch)
{
    struct tr_rng r;
    unsigned b = TR_SAMPLER_MIN_BITS, i;
    while (b < 32u && (1ull << b) < n)
        b++;
    s->n = n;
    s->ha = b / 2u;
    s->hb = b - s->ha;
    tr_rng_seed(&r, seed, TR_SHUFFLE_STREAM + epoch);
    for (i = 0; i < TR_SAMPLER_ROUNDS; i++)
        s->key[i] = tr_rng_u32(&r);
}

static uint32_t mask(unsigned bits)
{
    return bits >= 32u ? 0xffffffffu : (1u << bits) - 1u;
}

/* The network, once, on a word of ha + hb bits. */
static uint32_t network(const struct tr_sampler *s, uint32_t x)
{
    unsigned wa = s->ha, wc = s->hb, r, t;
    uint32_t a = x >> wc, c = x & mask(wc), f;
    for (r = 0; r < TR_SAMPLER_ROUNDS; r++) {
        f = (a ^ mix32(c ^ s->key[r])) & mask(wa);
        a = c;
        c = f;
        t = wa;      /* (a, c) of widths (wa, wc) -> widths (wc, wa) */
        wa = wc;
        wc = t;
    }
    return (a << wc) | c;   /* even rounds: the first widths again */
}

/* Its inverse. */
static uint32_t network_inverse(const struct tr_sampler *s, uint32_t x)
{
    unsigned wa = s->ha, wc = s->hb, r, t;
    uint32_t a = x >> wc, c = x & mask(wc), prev;
    for (r = TR_SAMPLER_ROUNDS; r-- > 0;) {
        /* (a, c) = (c0, a0 ^ F(c0)), widths (wc0, wa0) = (wa, wc) here */
        t = wa;
        wa = wc;
        wc = t;
        prev = (c ^ mix32(a ^ s->key[r])) & mask(wa);
        c = a;
        a = prev;
    }
    return (a << wc) | c;
}

uint32_t tr_sampler_at(const struct tr_sampler *s, uint32_t i)
{
    uint32_t x = i;
    if (s->n <= 1u || i >= s->n)
        return i;
    do
        x = network(s, x);
    while (x >= s->n);
    return x;
}

uint32_t tr_sampler_index(const struct tr_sampler *s, uint32_t v)
{
    uint32_t x = v;
    if (s->n <= 1u || v >= s->n)
        return v;
    do
        x = network_inverse(s, x);
    while (x >= s->n);
    return x;
}

uint32_t tr_sampler_shard(uint32_t n, uint32_t first, uint32_t world)
{
    if (first >= n || world == 0)
        return 0;
    return (uint32_t)(((uint64_t)(n - first) + world - 1) / world);
}

uint32_t tr_sampler_steps(uint32_t n, uint32_t first, uint32_t world, uint32_t batch)
{
    uint32_t shard = tr_sampler_shard(n, first, world);
    return batch ? (uint32_t)(((uint64_t)shard + batch - 1) / batch) : 0;
}

unsigned tr_sampler_batch(const struct tr_sampler *s, uint32_t first, uint32_t world,
                          uint32_t rank, uint32_t batch, uint32_t step, uint32_t *idx)
{
    uint32_t n = s->n, shard = tr_sampler_shard(n, first, world), left = n - first;
    uint64_t k = (uint64_t)step * batch;
    unsigned i, count;
    if (rank >= world || k >= shard)
        return 0;
    count = shard - k < batch ? (unsigned)(shard - k) : batch;
    /* shard position k+i is padded position (k+i)*world + rank of the deal;
     * past its end the padding repeats the deal's head */
    for (i = 0; i < count; i++)
        idx[i] = tr_sampler_at(s, first + (uint32_t)(((k + i) * world + rank) % left));
    return count;
}
