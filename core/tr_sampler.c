/* tinyring: the distributed sampler (see tr_train.h). */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_rng.h"
#include "tr_train.h"

/* Stream selector base of the shuffle, apart from the parameter-init stream. */
#define TR_SHUFFLE_STREAM 0x5348554646ull  /* "SHUFF" */

unsigned tr_sampler_width(uint32_t n)
{
    return n <= 65536u ? 2u : 4u;
}

/* Entry i of a permutation stored tr_sampler_width(n) bytes an entry. */
static uint32_t get(const void *perm, unsigned w, uint32_t i)
{
    return w == 2u ? ((const uint16_t *)perm)[i] : ((const uint32_t *)perm)[i];
}

static void set(void *perm, unsigned w, uint32_t i, uint32_t v)
{
    if (w == 2u)
        ((uint16_t *)perm)[i] = (uint16_t)v;
    else
        ((uint32_t *)perm)[i] = v;
}

void tr_sampler_shuffle(void *perm, uint32_t n, uint64_t seed, uint32_t epoch)
{
    unsigned w = tr_sampler_width(n);
    struct tr_rng r;
    uint32_t i;
    tr_rng_seed(&r, seed, TR_SHUFFLE_STREAM + epoch);
    for (i = 0; i < n; i++)
        set(perm, w, i, i);
    for (i = n > 0 ? n - 1 : 0; i > 0; i--) {   /* Fisher-Yates, from the top */
        uint32_t j = tr_rng_below(&r, i + 1);
        uint32_t t = get(perm, w, i);
        set(perm, w, i, get(perm, w, j));
        set(perm, w, j, t);
    }
}

uint32_t tr_sampler_at(const void *perm, uint32_t n, uint32_t i)
{
    return get(perm, tr_sampler_width(n), i);
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

unsigned tr_sampler_batch(const void *perm, uint32_t n, uint32_t first, uint32_t world,
                          uint32_t rank, uint32_t batch, uint32_t step, uint32_t *idx)
{
    uint32_t shard = tr_sampler_shard(n, first, world), left = n - first;
    unsigned w = tr_sampler_width(n);
    uint64_t k = (uint64_t)step * batch;
    unsigned i, count;
    if (rank >= world || k >= shard)
        return 0;
    count = shard - k < batch ? (unsigned)(shard - k) : batch;
    /* shard position k+i is padded position (k+i)*world + rank of the deal;
     * past its end the padding repeats the deal's head */
    for (i = 0; i < count; i++)
        idx[i] = get(perm, w, first + (uint32_t)(((k + i) * world + rank) % left));
    return count;
}
