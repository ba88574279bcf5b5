/* tinyring test: what one rank does over a transport, the same code for an
 * lwIP rank (lwip_rank.c) and a POSIX rank (posix_rank.c), so a ring of both
 * kinds runs one program's logic.
 *
 * Modes:
 *   stream  raw transport check, no core: N bytes to the right neighbour,
 *           N bytes from the left, content checked (port before collectives)
 *   coll    the collectives suite: allreduce (ring, chain, reduce-bcast) over
 *           counts 0, 1, primes, not divisible by world, the gradient size;
 *           results == serial sum (exact integer-valued floats) and bitwise
 *           identical on all ranks (random floats, hash compared via
 *           broadcast); broadcast from every root; barrier
 *   train   S SGD steps of the seed ConvNet on synthetic data, gradients
 *           averaged with tr_allreduce; prints "params <hash>"
 *   bench   allreduce busbw for the gradient size and 1 MiB
 *   loop    allreduce until failure or `iters` rounds; prints the fault
 *   elastic core's trainer (cfg.elastic) on synthetic samples, `iters`
 *           epochs of `samples` samples, gradients over --compress's codec;
 *           after TR_TRAIN_LOST / CHANGE the program's membership round
 *           (ring_job.el) and tr_train_reform; prints "step", "view" and at
 *           the end "params <hash>" lines
 */
#ifndef TR_RING_JOB_H
#define TR_RING_JOB_H

#include <stdint.h>
#include "tr_transport.h"

struct ring_job {
    int         rank, world;
    uint64_t    token;
    const char *mode;        /* see above */
    const char *suite;       /* harness suite name for the counts */
    const char *label;       /* "lwip" / "posix": for messages */
    uint32_t    timeout_ms;  /* tr_comm timeout */
    uint32_t    segment;     /* tr_comm segment bytes (0 = default) */
    int         iters;       /* train steps / bench reps / loop rounds */
    long        bytes;       /* stream bytes */
    uint32_t    samples;     /* elastic: training samples (0 = 1536) */
    long long   die_at;      /* elastic: SIGKILL itself at this position (a
                              * replay of a kill); -1 = never */
    const struct ring_elastic *el;   /* elastic: the membership round */
    int         compress;    /* elastic: enum tr_codec of the gradients (--compress
                              * none|bf16|int8|int4; 0 = none) */
};

/* The program's membership round for the elastic mode: after a lost ring,
 * the new ring over the same transport (its links replaced). Returns 0
 * with this rank's index, the world and the source's index, or an error
 * (a message printed). */
struct ring_elastic {
    int  (*reform)(void *ctx, uint64_t position, int *rank, int *world, int *source,
                   uint32_t *epoch, uint64_t *step);
    int  (*service)(void *ctx);   /* between steps: > 0 when a process started
                                   * again waits (ask for a change); NULL = none */
    void  *ctx;
    int    joiner;                /* 1: this process joined a running job (its
                                   * round done): train from rank `source` of
                                   * the ring below */
    int    rank, world, source;
};

/* A process started again got its place in the running ring: prints it
 * (as "WHO rank ME: rejoined as ring rank ...", which the tests read) and
 * keeps it in ops for the training. */
void ring_elastic_joined(struct ring_elastic *ops, const char *who, unsigned me, int rank,
                         int world, int source, uint32_t epoch, uint32_t coordinator);

/* Runs the mode; returns the process exit code (0 = all checks passed). */
int ring_job_run(const struct ring_job *j, const struct tr_transport *tp);

/* Common argv parsing for both programs: consumes --rank --world --token
 * --mode --suite --timeout --segment --iters --bytes --samples --die-at --compress; returns 1 if argv[*i]
 * was one of them (and advances *i), 0 if not. */
int ring_job_arg(struct ring_job *j, int argc, char **argv, int *i);

#endif /* TR_RING_JOB_H */
