/* tinyring board_mps2: the training image's settings, from the semihosting
 * command line, with mnist_ring's flag names (a board accepts the same
 * training settings as a host rank of the same ring):
 *
 *   --data DIR           raw IDX files DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte
 *   --epochs N  --batch N  --lr X  --momentum X  --seed N
 *   --allreduce ring|chain|reduce-bcast  --max-steps N  --checkpoint-every K
 *   --rank R  --peers FILE  --job-token STR  --timeout S   (rings; FILE as mnist_ring's)
 *   --debug-param-hash   per-step loss bits and parameter hash, as mnist_ring
 *   --elastic  --min-ranks M   an elastic ring, as mnist_ring's: a lost rank is
 *                        survived (the lwIP port's membership, port/lwip/README.md)
 *   --compress none|bf16|int8|int4   the gradients' wire format, as mnist_ring's
 *                        (a lossy codec keeps an error-feedback residual; ring
 *                        only; images built with BOARD_CODECS=none refuse one)
 *   --average-every K    periodic averaging, as mnist_ring's (not with --elastic)
 *
 *   --checkpoint FILE    the training state as mnist_ring's --checkpoint FILE
 *                        (through semihosting, FILE.tmp renamed): written by
 *                        ring rank 0 at the end of every epoch and every
 *                        --checkpoint-every K steps, and with --elastic when
 *                        the job stops below --min-ranks by the member that
 *                        holds the latest state (mnist_ring --resume goes on)
 *
 * --checkpoint-every K averages the BN statistics every K steps as mnist_ring
 * does at its checkpoints (with or without --checkpoint): a ring whose host
 * rank 0 checkpoints every K steps needs it on every board. */
#ifndef BOARD_SETTINGS_H
#define BOARD_SETTINGS_H

#include <stdint.h>

#define BOARD_MAX_WORLD 16
/* the --peers file's bytes: 16 lines "15 255.255.255.255:65535" take 400 */
#define BOARD_PEERS_BYTES 1024

/* One rank's listening address. */
struct board_addr {
    uint8_t  ip[4];
    uint16_t port;
};

struct board_settings {
    const char *data;          /* "data" */
    uint32_t epochs;           /* 1 */
    unsigned batch;            /* BOARD_BATCH_MAX (the image's arena bound) */
    float    lr, momentum;     /* 0.001, 0.9 */
    uint64_t seed;             /* 0 */
    int      algo;             /* enum tr_algo */
    uint64_t max_steps;        /* 0: none */
    uint32_t checkpoint_every; /* 0 */
    int      rank, world;      /* 0, 1 (world from --peers) */
    const char *peers;         /* the table file, or 0 */
    const char *job_token;     /* "" */
    const char *checkpoint;    /* --checkpoint FILE, or 0 */
    uint32_t timeout_s;        /* 60 */
    int      debug_param_hash;
    int      elastic;          /* 0; 1: --elastic (every rank of the job) */
    unsigned min_ranks;        /* 1: --min-ranks (elastic: fewer members stop the job) */
    int      compress;         /* enum tr_codec: TR_CODEC_NONE */
    uint32_t average_every;    /* 0 */
    struct board_addr table[BOARD_MAX_WORLD];
};

/* Parse argv[1..argc) (argv[0] is the image name) and read --peers.
 * Returns 0, or -1 after printing what is wrong. */
int board_settings(struct board_settings *s, int argc, char **argv, unsigned batch_max);

/* mnist_ring's --job-token as a number (tr_posix_token: FNV-1a 64, 0 -> 1). */
uint64_t board_token(const char *s);

const char *board_algo_name(int algo);

#endif /* BOARD_SETTINGS_H */
