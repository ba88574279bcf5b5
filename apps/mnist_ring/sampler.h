/* mnist_ring: which samples each rank trains on (PyTorch's DistributedSampler).
 *
 * Every epoch the whole training set is shuffled from (seed, epoch) with
 * tr_rng, identically on every rank. The permutation is padded by repeating
 * its first entries up to a multiple of the world size, so every shard has
 * the same length ceil(n / world) and every rank runs the same number of
 * steps (a rank that ran out first would leave the others waiting in the
 * allreduce). Rank r takes positions r, r + world, r + 2*world, ... Shards
 * are disjoint apart from those few padding repeats (at most world-1).
 * The last batch of an epoch may be short (drop_last=False, as the seeds).
 */
#ifndef MR_SAMPLER_H
#define MR_SAMPLER_H

#include <stdint.h>

struct mr_sampler {
    uint32_t n;          /* samples in the data set */
    uint32_t world;      /* ranks */
    uint32_t rank;       /* this rank */
    uint32_t batch;      /* samples per step on this rank */
    uint32_t shard;      /* samples per rank per epoch: ceil(n / world) */
    uint32_t steps;      /* steps per epoch: ceil(shard / batch) */
    uint64_t seed;       /* shared shuffle seed */
    uint32_t epoch;      /* epoch idx[] holds */
    uint32_t *perm;      /* (n) scratch permutation, malloc'd */
    uint32_t *idx;       /* (shard) this rank's samples for the epoch, in order */
};

int  mr_sampler_init(struct mr_sampler *s, uint32_t n, uint32_t world, uint32_t rank,
                     uint32_t batch, uint64_t seed);
/* Fill idx[] for this epoch: a pure function of (seed, epoch, n, world, rank). */
void mr_sampler_set_epoch(struct mr_sampler *s, uint32_t epoch);
/* Samples in step k of the epoch (batch, or fewer for the last step). */
uint32_t mr_sampler_count(const struct mr_sampler *s, uint32_t k);
void mr_sampler_free(struct mr_sampler *s);

#endif /* MR_SAMPLER_H */
