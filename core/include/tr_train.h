/* tinyring: the data-parallel trainer, one loop for boards and hosts.
 *
 * It owns what a step and an epoch are, so an application only does I/O
 * (samples in, lines and files out):
 *
 *   - the sampler: every epoch the training set is shuffled from (seed,
 *     epoch) and dealt out like PyTorch's DistributedSampler (tr_sampler_*);
 *   - a step: this rank's samples through the application's loader, pixels
 *     scaled to pixel/255 (torchvision's ToTensor), forward, loss, backward
 *     (every return code checked), the gradient allreduce (average, with the
 *     configured algorithm), SGD on the flat blocks;
 *   - an epoch's end: BN running statistics averaged over the ring (also
 *     every sync_every steps, the checkpoint points), the test set evaluated
 *     slice by slice, loss and counts summed over the ring;
 *   - the start: the configuration hash exchanged at hello (ranks started
 *     with another model, batch, lr, momentum, seed, algorithm, data size or
 *     sync_every refuse each other), then rank 0's state (fresh from the
 *     seed, or restored from checkpoint bytes) broadcast to every rank;
 *   - the training state as bytes (what a checkpoint or model file holds,
 *     format below) and its restore.
 * After every step all ranks hold bit-identical parameters; after every BN
 * average, bit-identical models.
 *
 * Memory: one caller-owned arena, sized first (tr_train_arena_size runs the
 * layout code in measure mode, so the size is exactly what init uses):
 * the model (its own size query), the collectives' scratch, one batch of
 * indices, labels and model input (the pixels widened in place). Nothing grows with the number
 * of samples: the sampler computes the shuffle where it is read.
 *
 * Driving it: tr_train_begin, then tr_train_next until it returns 0 (done)
 * or a negative tr_err; every positive return is an event the application
 * may report or act on (a checkpoint after TR_TRAIN_SYNC or TR_TRAIN_EPOCH):
 *
 *   tr_train_init(&t, &cfg, arena, sizeof arena);
 *   tr_train_begin(&t, NULL, 0);
 *   while ((rc = tr_train_next(&t, &rep)) > 0)
 *       if (rc == TR_TRAIN_EPOCH) print rep.train_loss, rep.test_acc ...;
 *   if (rc < 0) report tr_train_last_fault(&t);
 *
 * An elastic run (cfg.elastic) may change its world at a step boundary:
 *
 *   - a collective that fails on a link (peer closed or reset, timeout,
 *     garbage) returns TR_TRAIN_LOST instead of an error; the state is then
 *     that of this rank's last completed step (SGD is applied only once the
 *     whole averaged gradient arrived, a BN average cut half-way is undone,
 *     an evaluation cut half-way is done again), and a survivor is at most
 *     one step ahead of another;
 *   - tr_train_request_change (e.g. a process asks to join) is carried to
 *     every rank by a one-float sum after the next gradient allreduce; every
 *     rank then returns TR_TRAIN_CHANGE after that same step;
 *   - after either, the application finds the new ring (core/include/tr_elastic.h)
 *     and calls tr_train_reform(t, rank, world, tp, source): the next
 *     tr_train_next says hello on the new ring, takes the whole state of
 *     rank `source` (the one with the most steps done, the lowest rank
 *     among equals), deals the rest of the epoch out over the new world
 *     and returns TR_TRAIN_START. A process that joins calls
 *     tr_train_begin(t, NULL, 0) and then tr_train_reform. The first start
 *     of an elastic run is the same path with source 0.
 *
 * tr_train_next waits in the transport's poll (on lwIP NO_SYS=1, the port's
 * poll drives the stack). tr_train_poll is the same without waiting: it
 * returns TR_ERR_AGAIN while a collective waits for the network, and the
 * caller does other work, or tr_train_wait(&t, ms) (the transport's poll
 * for what the collective waits for), before calling it again. Computing a
 * step or an evaluation is one call.
 *
 * State bytes (a checkpoint "TRINGCKP" or a model "TRINGMDL"; version 3,
 * or version 4 when written by an elastic run; integers and IEEE-754
 * binary32 little-endian). Versions 1 and 2 are the same layouts written
 * before the sampler computed its shuffle (Fisher-Yates into an array):
 * a model file of either is read, a checkpoint is refused
 * (TR_STATE_OLD_SAMPLER), as its run cannot go on in the same order.
 *   off  size  field
 *     0     8  magic
 *     8     4  version (3 or 4; 1 or 2)
 *    12     4  header bytes (96 for versions 3 and 1, 112 for 4 and 2)
 *    16     8  configuration hash (tr_train_config_hash)
 *    24     4  model layout hash (tr_model_layout_hash)
 *    28     4  world size (elastic: the world when it was written)
 *    32     4  batch per rank
 *    36     4  epoch in progress, 0-based (model: epochs done)
 *    40     4  steps of that epoch done
 *    44     4  SGD started (1 after the first step)
 *    48     8  steps done in total
 *    56     8  seed (the shuffle of epoch e is a function of seed and e)
 *    64     8  n_params
 *    72     8  n_buffers
 *    80     8  training samples
 *    88     4  flags: bit 0 = momentum present (checkpoints); elastic:
 *              bit 1 = the BN average of this step is still due; bit 2 =
 *              residual present (checkpoints of a run with a lossy
 *              cfg.compress; fixed or elastic)
 *    92     4  0
 *   elastic (version 4) only: the epoch's current deal (tr_sampler_* above)
 *    96     4  first position of the deal
 *   100     4  world the deal is over
 *   104     4  step of the epoch at which the deal began
 *   108     4  0
 *  header      params f32[n_params] (per layer weight then bias), momentum
 *              f32[n_params] (flag bit 0 only), error-feedback residual
 *              f32[n_params] (flag bit 2 only: every rank's, averaged at each
 *              sync point; zeros when written between sync points), BN
 *              buffers f32[n_buffers]
 *   end     4  CRC-32 (zlib's polynomial) of every byte before it
 */
#ifndef TR_TRAIN_H
#define TR_TRAIN_H

#include <stddef.h>
#include <stdint.h>
#include "tr_comm.h"
#include "tr_model.h"
#include "tr_sgd.h"
#include "tr_transport.h"

/* ---- the sampler (PyTorch's DistributedSampler, shuffle on, drop_last off)
 *
 * The shuffle of an epoch is a permutation perm of 0..n-1 drawn from
 * (seed, epoch) and computed one position at a time (a keyed Feistel
 * network with cycle walking, tr_sampler.c): a struct tr_sampler of a few
 * words, whatever n. A deal hands positions first.. of it to world ranks:
 * the list perm[first..n) is padded by repeating its head up to a multiple
 * of world, rank r takes padded positions r, r+world, r+2*world, ... (its
 * shard, ceil((n-first)/world) long), in batches of `batch`; the last batch
 * may be short. first is 0 for a whole epoch; a later position deals out
 * the rest of an epoch (steps done by all ranks consume a prefix of the
 * padded list: s steps of batch B over world W consume s*B*W positions).
 *
 * Before state version 3 the shuffle was Fisher-Yates into an array of n
 * entries in the arena; checkpoints of that sampler are refused
 * (TR_STATE_OLD_SAMPLER). */

#define TR_SAMPLER_ROUNDS 6       /* Feistel rounds (even) */
#define TR_SAMPLER_FEISTEL 2u     /* this sampler, in the configuration hash */

/* The shuffle of one epoch. */
struct tr_sampler {
    uint32_t n;                   /* samples */
    uint32_t ha, hb;              /* widths of the network's two parts */
    uint32_t key[TR_SAMPLER_ROUNDS];
};

/* The shuffle of (seed, epoch) over n samples: the round keys are the first
 * TR_SAMPLER_ROUNDS numbers of tr_rng stream 0x5348554646 + epoch. */
void tr_sampler_init(struct tr_sampler *s, uint32_t n, uint64_t seed, uint32_t epoch);

/* perm[i], for i < n. */
uint32_t tr_sampler_at(const struct tr_sampler *s, uint32_t i);

/* The inverse: the i with perm[i] == v, for v < n. */
uint32_t tr_sampler_index(const struct tr_sampler *s, uint32_t v);

/* Samples per rank of a deal: ceil((n - first) / world); 0 if first >= n. */
uint32_t tr_sampler_shard(uint32_t n, uint32_t first, uint32_t world);

/* Steps of a deal: ceil(shard / batch). */
uint32_t tr_sampler_steps(uint32_t n, uint32_t first, uint32_t world, uint32_t batch);

/* The samples of step `step` for `rank`: writes up to batch indices into
 * idx and returns how many (0 past the end of the shard). */
unsigned tr_sampler_batch(const struct tr_sampler *s, uint32_t first, uint32_t world,
                          uint32_t rank, uint32_t batch, uint32_t step, uint32_t *idx);

/* ---- the trainer */

enum tr_split {
    TR_SPLIT_TRAIN = 0,
    TR_SPLIT_TEST  = 1
};

/* The application's samples: copy samples idx[0..n) of split into pixels
 * (n * in_c*in_h*in_w bytes, 0..255, in the model's C,H,W order) and their
 * classes into labels (n). Returns 0, or a negative tr_err that stops the
 * trainer (fault TR_TRAIN_LOAD). */
typedef int (*tr_train_load_fn)(void *ctx, int split, const uint32_t *idx, unsigned n,
                                uint8_t *pixels, uint8_t *labels);

struct tr_train_config {
    struct tr_model_desc model;   /* the network (e.g. tr_model_desc_convnet) */
    unsigned batch;               /* samples per rank per step, >= 1 */
    uint32_t n_train;             /* training samples, >= 1 */
    uint32_t n_test;              /* test samples; 0 = no evaluation */
    tr_train_load_fn load;        /* required */
    void    *load_ctx;            /* passed to load */
    float    lr;                  /* SGD learning rate (seeds: 0.001) */
    float    momentum;            /* SGD momentum (seeds: 0.9) */
    uint64_t seed;                /* parameter init (rank 0) and the shuffle */
    int      algo;                /* enum tr_algo of every reduction */
    uint32_t epochs;              /* >= 1 */
    uint64_t max_steps;           /* stop after this many steps in total
                                   * (then evaluate, TR_TRAIN_EPOCH with
                                   * stopped = 1); 0 = no limit */
    int      compress;            /* enum tr_codec (tr_codec.h) of the gradient
                                   * allreduce: TR_CODEC_NONE (0) is the plain
                                   * allreduce of algo, today's bits; a lossy
                                   * codec needs algo TR_ALGO_RING and keeps an
                                   * error-feedback residual per parameter
                                   * (training state: checkpoints, resync).
                                   * In the configuration hash unless none. */
    uint32_t average_every;       /* 0 or 1: the gradients are averaged every
                                   * step. K >= 2: periodic averaging (as
                                   * PyTorch's PostLocalSGD): steps with this
                                   * rank's own gradient, the parameters
                                   * averaged over the ring after every step
                                   * with global_step % K == 0, and parameters
                                   * and momentum both before every BN average
                                   * (sync_every points, epoch ends), so that
                                   * every checkpoint point holds one state on
                                   * all ranks. With a lossy compress the
                                   * parameters' change since the last average
                                   * goes over the compressed ring instead
                                   * (error feedback on it; momentum stays
                                   * fp32). --elastic: every average is a
                                   * sync point and a membership change goes
                                   * back to the last one (docs/DESIGN.md).
                                   * In the configuration hash when >= 2. */
    uint32_t sync_every;          /* also average the BN statistics every K
                                   * steps within an epoch (TR_TRAIN_SYNC: a
                                   * checkpoint point); 0 = at epoch ends only.
                                   * Part of the configuration hash: it
                                   * changes the statistics. */
    /* the ring */
    int      rank;                /* 0 .. world-1 */
    int      world;               /* >= 1 */
    const struct tr_transport *tp;/* the ring links; NULL when world == 1 */
    uint64_t job_token;           /* as struct tr_comm_config */
    uint32_t timeout_ms;          /* as struct tr_comm_config; 0 = its default */
    uint32_t segment_bytes;       /* as struct tr_comm_config; 0 = its default */
    /* 1: the world may change during the run (TR_TRAIN_LOST,
     * TR_TRAIN_CHANGE, tr_train_reform). The collectives' scratch is then
     * there for any world up to TR_TRAIN_MAX_WORLD, and the configuration
     * hash leaves the world out. 0: a fixed world. */
    int      elastic;
    /* How a step holds the gradient (docs/BUCKETS.md): TR_TRAIN_GRADS_FULL
     * (0): the whole gradient, its buckets reduced one after another while
     * backward goes on, SGD once they all arrived; TR_TRAIN_GRADS_BUCKET:
     * no full gradient in the arena, one buffer of the largest bucket:
     * each bucket reduced and applied by SGD as soon as backward made it,
     * backward waiting meanwhile (boards). The same bits either way (not
     * part of the configuration hash: ranks of both modes train together,
     * except in elastic runs, whose recovery differs: a step lost after k
     * of its buckets were applied counts as done, with k in the position,
     * see tr_train_position). With momentum 0 the arena holds no momentum
     * twin in either mode. */
    int      grad_mode;
    /* 1: the model's TR_MODEL_ONE_PLANE (tr_model.h): on the lean plan at
     * batch > 1, less arena for more instructions; the same bits (not part
     * of the configuration hash). 0: one plane per sample. */
    int      one_plane;
    /* optional: a microsecond clock, to report the time spent in the
     * gradient allreduce (comm_us); NULL = not measured */
    uint64_t (*clock_us)(void *ctx);
    void    *clock_ctx;
};

#define TR_TRAIN_GRADS_FULL   0
#define TR_TRAIN_GRADS_BUCKET 1

/* The largest world of an elastic run: TR_TRAIN_MAX_WORLD (tr_config.h). */

/* What tr_train_next returned. */
enum tr_train_event {
    TR_TRAIN_DONE  = 0,   /* every epoch (or max_steps) done */
    TR_TRAIN_START = 1,   /* every rank holds rank 0's state: epoch, step,
                           * global_step say where training continues */
    TR_TRAIN_STEP  = 2,   /* one step done: n, loss, correct of this rank */
    TR_TRAIN_SYNC  = 3,   /* BN statistics averaged within an epoch (every
                           * sync_every steps): a checkpoint point */
    TR_TRAIN_EPOCH = 4,   /* an epoch ended (or max_steps stopped it:
                           * stopped = 1), BN averaged, evaluated; unless
                           * stopped, the state is at the next epoch's start:
                           * a checkpoint point */
    TR_TRAIN_LOST  = 5,   /* elastic: a collective failed on a link
                           * (tr_train_last_fault: the peer blamed, what);
                           * the state is this rank's last completed step;
                           * returned again until tr_train_reform */
    TR_TRAIN_CHANGE = 6   /* elastic: a rank asked for a change
                           * (tr_train_request_change) during the step just
                           * reported; every rank returns it at the same
                           * global_step. tr_train_reform, or tr_train_next
                           * to go on in the same ring */
};

struct tr_train_report {
    uint32_t epoch;        /* epoch the event belongs to, 0-based */
    uint32_t step;         /* steps of that epoch done */
    uint32_t steps;        /* steps per epoch */
    uint64_t global_step;  /* steps done in total */
    /* TR_TRAIN_STEP: this rank's batch */
    unsigned n;            /* samples */
    float    loss;         /* mean cross-entropy */
    unsigned correct;      /* argmax == label */
    /* TR_TRAIN_EPOCH: over every rank */
    int      stopped;      /* 1: max_steps ended training inside the epoch */
    float    train_loss;   /* mean over the epoch's samples (of this run) */
    float    train_acc;
    float    train_samples;/* samples trained on in this epoch, all ranks */
    float    test_loss;    /* mean over the test set (0 when n_test is 0) */
    float    test_acc;
    float    test_samples;
    uint64_t comm_us;      /* this rank's time waiting for the gradient
                            * allreduce after backward ended (its buckets
                            * overlap backward), and in the periodic
                            * averages, during the epoch (0 without
                            * clock_us) */
};

/* What failed, for messages (tr_train_what_name). */
enum tr_train_what {
    TR_TRAIN_NONE = 0,
    TR_TRAIN_HELLO,        /* tr_comm_hello: configuration or link */
    TR_TRAIN_REFUSED,      /* rank 0 could not start (tr_train_refuse) */
    TR_TRAIN_RESTORE,      /* rank 0's state bytes did not load */
    TR_TRAIN_START_BCAST,  /* where to start, from rank 0 */
    TR_TRAIN_CONFIG,       /* this rank's configuration hash differs from rank 0's */
    TR_TRAIN_PARAM_BCAST,
    TR_TRAIN_MOMENTUM_BCAST,
    TR_TRAIN_BUFFER_BCAST,
    TR_TRAIN_LOAD,         /* the application's loader */
    TR_TRAIN_FORWARD,
    TR_TRAIN_LOSS,
    TR_TRAIN_BACKWARD,
    TR_TRAIN_GRADIENTS,    /* gradient allreduce */
    TR_TRAIN_BN_SYNC,      /* BN statistics average */
    TR_TRAIN_EVAL,         /* test-set evaluation and training statistics */
    TR_TRAIN_AVERAGE,      /* periodic averaging of parameters (and momentum) */
    TR_TRAIN_RESIDUAL      /* the error-feedback residuals' average at a sync point */
};

struct tr_train_fault {
    int      code;         /* the tr_err returned, 0 if none */
    int      what;         /* enum tr_train_what */
    int      rank;         /* rank it is blamed on: the peer of a failed
                            * link (see tr_comm_last_fault for the phase),
                            * 0 for TR_TRAIN_REFUSED/RESTORE, this rank for
                            * local failures; -1 unknown */
    uint32_t epoch;        /* where training was: epoch (0-based) */
    uint32_t step;         /* and steps of it done */
};

/* The trainer's state; the caller owns it, fields are read-only. */
struct tr_train {
    struct tr_train_config cfg;
    struct tr_model model;        /* parameters, gradients, momentum, BN buffers */
    struct tr_sgd   sgd;
    struct tr_comm  comm;         /* unused when world == 1 */
    uint64_t config_hash;         /* tr_train_config_hash */
    size_t   sample_bytes;        /* in_c * in_h * in_w */
    size_t   arena_used;          /* bytes of the arena in use */
    struct tr_sampler sampler;    /* the shuffle of sampler_epoch */
    /* arena pieces */
    uint32_t *idx;                /* (batch) sample indices of one batch */
    uint8_t  *labels;             /* (batch) */
    float    *x;                  /* (batch, sample) model input, pixel / 255.0f;
                                   * the loader writes the pixels into its
                                   * bytes (fetch in tr_train.c) */
    void     *comm_scratch;       /* the collectives' scratch (a reform binds
                                   * the communicator to it again) */
    size_t    comm_scratch_bytes;
    /* where training is */
    uint32_t epoch;               /* epoch in progress, 0-based */
    uint32_t step;                /* steps of it done */
    uint32_t steps;               /* steps per epoch */
    uint64_t global_step;         /* steps done in total */
    uint32_t sampler_epoch;       /* epoch sampler is for; UINT32_MAX: none */
    int      stepped;             /* a step of this epoch ran in this process */
    int      phase;               /* internal state machine (tr_train.c) */
    int      start_status;        /* rank 0: 0, or why it cannot start */
    /* this epoch's sums (this rank), and the ones sent over the ring */
    double   loss_sum;
    uint32_t correct, seen;
    float    sums[6];             /* test loss, correct, count; train loss, correct, count */
    uint64_t comm_us, t0_us;
    uint8_t  start_msg[96];       /* what the source broadcasts before the state */
    /* the epoch's current deal: sampler position, world, and the step of
     * the epoch at which it began (0, world, 0: the whole epoch) */
    uint32_t deal_first;
    uint32_t deal_world;
    uint32_t deal_step;
    int      sync_due;            /* the BN average of this step is due */
    /* the step's buckets (tr_model.h): started, arrived, one running */
    unsigned bk_sent, bk_done;
    int      bk_flight;
    unsigned bk_partial;          /* elastic, in-place mode: a step lost
                                   * part-way counted as done with this
                                   * many buckets applied (0: none such) */
    /* elastic */
    int      source;              /* rank whose state the (re)start takes */
    int      holds_state;         /* 1: the state is that of global_step
                                   * (0: a process that joins, or a rank
                                   * whose state a failed resync overwrote
                                   * in part; it must not be a source) */
    int      bn_same;             /* the BN buffers are the same on every
                                   * rank (a broadcast or an average since
                                   * the last forward) */
    int      res_same;            /* the error-feedback residual is the same
                                   * on every rank (a sync point's average,
                                   * a start or a resync since the last
                                   * encoding) */
    int      res_same_copy;       /* res_same before the step (res_copy's) */
    int      bn_alt;              /* after TR_TRAIN_LOST in a step: buffers
                                   * hold that step's forward, bn_copy the
                                   * last completed step's */
    int      change_asked;        /* tr_train_request_change on this rank */
    float    change_flag;         /* the sum carried after the gradients */
    int      change_next;         /* phase after a TR_TRAIN_CHANGE */
    uint32_t epochs_reported;     /* TR_TRAIN_EPOCH events returned (an
                                   * evaluation done again after a reform
                                   * is not reported twice) */
    int      buf_holder;          /* resync: this rank's buffers count in
                                   * the average of the source's position */
    float   *bn_copy;             /* (n_buffers) BN buffers before a step's
                                   * forward or an average */
    /* compression (cfg.compress lossy) */
    float   *residual;            /* (n_params) error feedback, or NULL */
    float   *res_copy;            /* (n_params) elastic: residual before the
                                   * step's allreduce, for a rollback */
    float   *anchor;              /* (n_params) periodic averaging with a lossy
                                   * codec or --elastic: the parameters of the
                                   * last average */
    /* --elastic with periodic averaging: the state of the last average
     * (a sync point: every rank had it), which a membership change goes
     * back to; anchor holds its parameters */
    float   *snap_mom;            /* (n_params, with momentum) its momentum */
    float   *snap_buf;            /* (n_buffers) its BN buffers, or NULL */
    int      snap_valid;          /* 1 once taken */
    int      change_held;         /* a change asked between averages waits
                                   * for the next one */
    struct {
        uint64_t global_step;
        uint32_t epoch, step, steps, deal_first, deal_world, deal_step, correct, seen;
        int      sgd_started, sync_due, stepped;
        double   loss_sum;
    } snap;
    void    *wire;                /* the encoded image of the gradients */
    size_t   wire_bytes;
    int      avg_next;            /* periodic averaging: phase after it */
    struct tr_train_report last;  /* the STEP event being assembled */
    struct tr_train_fault fault;
};

/* Exact arena bytes for cfg (the layout run in measure mode). Returns 0, or
 * TR_ERR_INVAL for a bad configuration. */
int tr_train_arena_size(const struct tr_train_config *cfg, size_t *bytes);

/* Lay everything out in arena[0..size) (TR_ARENA_ALIGN-aligned) and bind
 * the communicator to cfg->tp. TR_ERR_NOMEM if the arena is too small,
 * TR_ERR_INVAL for a bad configuration or buffer. No network traffic. */
int tr_train_init(struct tr_train *t, const struct tr_train_config *cfg,
                  void *arena, size_t size);

/* The configuration hash: FNV-1a 64 over world (0 when elastic), batch, seed, algorithm,
 * training samples and sync_every (u64 each), lr and momentum (float bits),
 * the model's layout hash and the sampler (u32 TR_SAMPLER_FEISTEL; the
 * Fisher-Yates sampler before it hashed nothing, so ranks of the two
 * refuse each other), all little-endian; then, only when set (so
 * that runs without them keep their hash and checkpoints), the u64
 * 0x434F4D5000000000 + compress and 0x4156470000000000 + average_every. The hello carries
 * (uint32_t)(h ^ h >> 32) as its layout field, h = this hash with max_steps
 * (u64) folded in: ranks that would stop at different steps refuse each
 * other. */
uint64_t tr_train_config_hash(const struct tr_train *t);

/* Arm the start. Rank 0: state NULL starts from cfg.seed; else the bytes
 * of a checkpoint (tr_train_state_save), restored when tr_train_next gets
 * there (a state that does not load stops every rank: TR_TRAIN_RESTORE on
 * rank 0, TR_TRAIN_REFUSED on the others). Other ranks pass NULL, 0.
 * Returns 0 (every failure, the hello's too, comes from tr_train_next) or
 * TR_ERR_INVAL when called twice. */
int tr_train_begin(struct tr_train *t, const void *state, size_t len);

/* Rank 0, instead of tr_train_begin: it cannot start (err < 0, e.g. its
 * checkpoint file could not be read). tr_train_next still says so to the
 * ring: it returns err on rank 0, and on every rank fault TR_TRAIN_REFUSED. */
int tr_train_refuse(struct tr_train *t, int err);

/* Run to the next event (blocking: waits in the transport's poll). Returns
 * an enum tr_train_event > 0 with *rep filled, 0 when done (again and
 * again), or a negative tr_err (again and again; tr_train_last_fault). */
int tr_train_next(struct tr_train *t, struct tr_train_report *rep);

/* The same without waiting: TR_ERR_AGAIN while a collective waits for the
 * network. */
int tr_train_poll(struct tr_train *t, struct tr_train_report *rep);

/* TR_POLL_* bits the running collective waits for (0 when none runs). */
unsigned tr_train_want(const struct tr_train *t);

/* After TR_ERR_AGAIN: wait in the transport's poll for what the running
 * collective needs, at most max_ms and at most until its deadline. Returns
 * 0, or a failure of the port's poll (which stops the trainer). */
int tr_train_wait(struct tr_train *t, uint32_t max_ms);

/* Elastic runs: ask every rank for TR_TRAIN_CHANGE after the next step (the
 * request travels with that step's collectives). 0, or TR_ERR_INVAL when
 * not elastic. */
int tr_train_request_change(struct tr_train *t);

/* Elastic runs, after TR_TRAIN_LOST or TR_TRAIN_CHANGE (or before the first
 * tr_train_next of a process that joins, after tr_train_begin): bind to a
 * new ring, this process being `rank` of `world` over tp (NULL when world
 * is 1), and arm the resync from rank `source`. Nothing moves on the
 * network until tr_train_next, which returns TR_TRAIN_START once the state
 * arrived, TR_TRAIN_LOST if the new ring fails too (reform again), or an
 * error. TR_ERR_INVAL when not elastic, not at such a point, or arguments
 * out of range (world 1 .. TR_TRAIN_MAX_WORLD). */
int tr_train_reform(struct tr_train *t, int rank, int world, const struct tr_transport *tp,
                    int source);

/* Elastic runs: how far this rank's state is, for the membership round
 * (the JOIN's step field): 0 when it holds no state (a process that joins,
 * or one whose resync was cut), else 2 x global_step + 1, + 1 once the BN
 * average due after that step is done (or none is due). Ranks of one ring
 * are at most one collective apart; the round picks the furthest. In the
 * in-place mode (grad_mode TR_TRAIN_GRADS_BUCKET) that value x 17 + k,
 * where k is the buckets applied of a step lost part-way (which counts as
 * done: the layers not yet updated skip it), or 16 for a whole step, so
 * the survivor with the most of the step applied is the furthest. */
uint64_t tr_train_position(const struct tr_train *t);

const struct tr_train_fault *tr_train_last_fault(const struct tr_train *t);
const char *tr_train_what_name(int what);

/* ---- the state as bytes */

enum tr_train_state_kind {
    TR_STATE_CHECKPOINT = 0,   /* "TRINGCKP": parameters, momentum, BN buffers, position */
    TR_STATE_MODEL      = 1    /* "TRINGMDL": parameters and BN buffers */
};

#define TR_STATE_VERSION 3u        /* fixed world */
#define TR_STATE_VERSION2 4u       /* elastic runs */
#define TR_STATE_VERSION_FY 1u     /* fixed world, Fisher-Yates sampler */
#define TR_STATE_VERSION2_FY 2u    /* elastic, Fisher-Yates sampler */
#define TR_STATE_HEADER  96u       /* fixed world */
#define TR_STATE_HEADER2 112u      /* elastic */
#define TR_STATE_HAS_MOMENTUM 1u
#define TR_STATE_SYNC_DUE 2u       /* elastic only */
#define TR_STATE_HAS_RESIDUAL 4u   /* a lossy codec's error-feedback residual */

/* Why bytes are not a state (tr_train_state_check), for messages. */
enum tr_state_problem {
    TR_STATE_OK = 0,
    TR_STATE_SHORT,            /* shorter than a header and its CRC */
    TR_STATE_MAGIC,            /* not "TRINGCKP" / "TRINGMDL" */
    TR_STATE_VERSION_DIFFERS,  /* another version or header size */
    TR_STATE_SIZE,             /* length differs from what the header says */
    TR_STATE_CRC,              /* CRC mismatch: corrupt */
    TR_STATE_OLD_SAMPLER       /* a sound checkpoint of version 1 or 2: its
                                * run dealt another shuffle */
};

/* The header of state bytes, decoded. */
struct tr_train_state_info {
    int      problem;          /* enum tr_state_problem */
    int      kind;             /* enum tr_train_state_kind (from the magic) */
    uint32_t version;
    uint64_t config_hash;
    uint32_t layout_hash;
    uint32_t world, batch, epoch, step, sgd_started;
    uint64_t global_step, seed, n_params, n_buffers, n_train;
    uint32_t flags;
    uint32_t header_len;       /* TR_STATE_HEADER or TR_STATE_HEADER2 */
    uint32_t deal_first, deal_world, deal_step;   /* elastic; else 0, world, 0 */
    size_t   expect_len;       /* length the header implies (0 if absurd) */
};

/* Bytes tr_train_state_save writes for this kind. */
size_t tr_train_state_size(const struct tr_train *t, int kind);

/* Write the state (where training is: epoch, step, parameters, momentum,
 * BN buffers). Returns the bytes written, or TR_ERR_NOMEM if len is short. */
long tr_train_state_save(const struct tr_train *t, int kind, void *buf, size_t len);

/* The same bytes as tr_train_state_save, handed to write(ctx, p, n) in
 * order, in pieces of at most 256 bytes (a board writes a checkpoint
 * larger than any buffer it has; the CRC is kept as the bytes pass, on
 * about 300 bytes of stack). write returns 0, or a negative tr_err that
 * stops the output and is returned (any other non-zero: TR_ERR_IO).
 * Returns the bytes written (tr_train_state_size), TR_ERR_INVAL (unknown
 * kind, no write) or write's error. */
long tr_train_state_write(const struct tr_train *t, int kind,
                          int (*write)(void *ctx, const void *p, size_t n), void *ctx);

/* Decode and check bytes without a trainer: magic, version, length, CRC,
 * and a checkpoint of the old sampler. Returns 0 or TR_ERR_FORMAT, with
 * info->problem saying why (the header is decoded whenever the magic is
 * right). */
int tr_train_state_check(const void *buf, size_t len, struct tr_train_state_info *info);

/* Restore a checkpoint into t: TR_ERR_FORMAT (tr_train_state_check, or a
 * model file, or a position outside the run, or a version 3 state in an
 * elastic run or the reverse), TR_ERR_MISMATCH (another configuration hash
 * or model size). An elastic run takes a version 4 state written at any
 * world; its start deals the rest of the epoch out over the world of the
 * run. Nothing is changed on failure. */
int tr_train_state_load(struct tr_train *t, const void *buf, size_t len);

/* FNV-1a 64 over the little-endian bytes of v[0..n) (parameter and BN
 * statistics hashes that every target prints alike). */
uint64_t tr_train_hash(const float *v, size_t n);

#endif /* TR_TRAIN_H */
