/* mnist_ring: the distributed sampler (see sampler.h). */
#include "sampler.h"

#include <stdlib.h>
#include <string.h>

#include "tr_error.h"
#include "tr_rng.h"

/* Stream selector base for shuffling, apart from the parameter-init streams. */
#define MR_SHUFFLE_STREAM 0x5348554646ull  /* "SHUFF" */

int mr_sampler_init(struct mr_sampler *s, uint32_t n, uint32_t world, uint32_t rank,
                    uint32_t batch, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    if (n == 0 || world == 0 || rank >= world || batch == 0)
        return TR_ERR_INVAL;
    s->n = n;
    s->world = world;
    s->rank = rank;
    s->batch = batch;
    s->seed = seed;
    s->shard = (uint32_t)(((uint64_t)n + world - 1) / world);
    s->steps = (s->shard + batch - 1) / batch;
    s->perm = malloc((size_t)n * sizeof *s->perm);
    s->idx = malloc((size_t)s->shard * sizeof *s->idx);
    if (!s->perm || !s->idx) {
        mr_sampler_free(s);
        return TR_ERR_NOMEM;
    }
    s->epoch = UINT32_MAX;
    return 0;
}

void mr_sampler_set_epoch(struct mr_sampler *s, uint32_t epoch)
{
    struct tr_rng r;
    tr_rng_seed(&r, s->seed, MR_SHUFFLE_STREAM + epoch);
    for (uint32_t i = 0; i < s->n; i++)
        s->perm[i] = i;
    /* Fisher-Yates, from the top */
    for (uint32_t i = s->n - 1; i > 0; i--) {
        uint32_t j = tr_rng_below(&r, i + 1);
        uint32_t t = s->perm[i];
        s->perm[i] = s->perm[j];
        s->perm[j] = t;
    }
    /* padded position p maps to perm[p % n]: repeats the head, as PyTorch */
    for (uint32_t k = 0; k < s->shard; k++)
        s->idx[k] = s->perm[(uint32_t)(((uint64_t)k * s->world + s->rank) % s->n)];
    s->epoch = epoch;
}

uint32_t mr_sampler_count(const struct mr_sampler *s, uint32_t k)
{
    uint64_t start = (uint64_t)k * s->batch;
    if (start >= s->shard)
        return 0;
    return s->shard - start < s->batch ? (uint32_t)(s->shard - start) : s->batch;
}

void mr_sampler_free(struct mr_sampler *s)
{
    free(s->perm);
    free(s->idx);
    s->perm = NULL;
    s->idx = NULL;
}
