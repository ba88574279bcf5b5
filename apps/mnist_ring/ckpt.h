/* mnist_ring: checkpoints and saved models, one versioned file format.
 *
 * Layout (version 1; every integer little-endian, every float an IEEE-754
 * binary32 little-endian; 96-byte header):
 *   off  size  field
 *     0     8  magic: "TRINGCKP" (checkpoint) or "TRINGMDL" (final model)
 *     8     4  version (1)
 *    12     4  header bytes (96)
 *    16     8  config hash: what must match to resume (see main.c)
 *    24     4  model layout hash (tr_model_layout_hash)
 *    28     4  world size
 *    32     4  batch per rank
 *    36     4  epoch: the epoch in progress (0-based); for a model: epochs done
 *    40     4  step: steps of that epoch already done
 *    44     4  sgd.started
 *    48     8  global step: steps done since the start of training
 *    56     8  seed (parameter init and shuffling; the sampler's RNG state is
 *              a pure function of seed and epoch, so this is its state)
 *    64     8  n_params
 *    72     8  n_buffers (BatchNorm running mean and var)
 *    80     8  training samples in the data set
 *    88     4  flags: bit 0 = momentum present
 *    92     4  reserved, 0
 *    96        params  f32[n_params]   (PyTorch order: per layer weight, bias)
 *              momentum f32[n_params]  (only if flags bit 0)
 *              buffers f32[n_buffers]  (per BN layer: running mean, running var)
 *   end     4  CRC-32 (zlib's, as gzip) of every byte before it
 *
 * Writes are atomic: a temporary file beside the target, write, fsync,
 * rename over the target, fsync the directory. On any failure the temporary
 * file is removed and the previous file is left as it was.
 */
#ifndef MR_CKPT_H
#define MR_CKPT_H

#include <stddef.h>
#include <stdint.h>

#define MR_CKPT_VERSION 1u
#define MR_CKPT_HEADER 96u
#define MR_CKPT_HAS_MOMENTUM 1u

struct mr_ckpt {
    int      is_model;        /* 1: "TRINGMDL", 0: "TRINGCKP" */
    uint64_t config_hash;
    uint32_t layout_hash;
    uint32_t world, batch;
    uint32_t epoch, step;
    uint32_t sgd_started;
    uint64_t global_step;
    uint64_t seed;
    uint64_t n_params, n_buffers;
    uint64_t n_train;
    uint32_t flags;
    float   *params;          /* (n_params) the caller's memory */
    float   *momentum;        /* (n_params), or NULL when flags has no momentum */
    float   *buffers;         /* (n_buffers) */
};

/* Write c to path atomically. Returns 0, TR_ERR_NOSPC (disk full, quota,
 * file too large) or TR_ERR_IO, with a message in err. */
int mr_ckpt_write(const char *path, const struct mr_ckpt *c, char *err, size_t errlen);

/* Read path into c. c->params/momentum/buffers must point at n_params /
 * n_params / n_buffers floats whose counts the caller sets beforehand in
 * c->n_params and c->n_buffers; a file with other counts is TR_ERR_MISMATCH.
 * TR_ERR_FORMAT for a bad magic, version, size or CRC. */
int mr_ckpt_read(const char *path, struct mr_ckpt *c, char *err, size_t errlen);

#endif /* MR_CKPT_H */
