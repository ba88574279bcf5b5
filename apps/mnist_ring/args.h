/* mnist_ring: command line. */
#ifndef MR_ARGS_H
#define MR_ARGS_H

#include <stdint.h>

struct mr_args {
    unsigned batch;            /* samples per rank per step (100) */
    float    lr;               /* 0.001 */
    float    momentum;         /* 0.9 */
    unsigned epochs;           /* 1 */
    uint64_t seed;             /* parameter init and shuffling (0) */
    int      algo;             /* enum tr_algo (ring) */
    int      compress;         /* enum tr_codec of the gradients (none) */
    unsigned average_every;    /* periodic averaging every K steps (0: off) */
    const char *data;          /* directory with the IDX files ("data") */
    const char *checkpoint;    /* checkpoint file or NULL */
    unsigned checkpoint_every; /* also every K global steps (0: per epoch only) */
    int      resume;           /* continue from --checkpoint */
    const char *metrics;       /* CSV, one row per epoch, or NULL */
    const char *plot;          /* PNG via gnuplot, or NULL */
    const char *plot_from;     /* only draw this metrics CSV into --plot */
    const char *save_model;    /* final model file or NULL */
    int      nproc;            /* > 0: fork this many local ranks */
    const char *init_method;   /* tcp://HOST:PORT or env:// (NULL: single process) */
    const char *peers;         /* static table file "RANK IPV4:PORT" per line, or NULL */
    int      rank, world;      /* for tcp:// */
    const char *iface;         /* listen on this interface */
    const char *job_token;     /* string shared by the ranks of one job */
    unsigned timeout_s;        /* no progress in a collective for this long: error (60) */
    uint64_t max_steps;        /* stop after this many global steps (0: no limit) */
    unsigned eval_every;       /* progress line interval in steps (0: auto) */
    int      debug_param_hash; /* print a hash of the params per step per rank */
    int      quiet;            /* no progress within an epoch */
    unsigned warmup_steps;     /* the first epoch's samples/s counts after this many
                                * of its steps (0) */
    int      elastic;          /* the ring survives lost ranks and takes them back */
    unsigned min_ranks;        /* --elastic: stop below this many ranks (1) */
};

/* Parse argv into a. Returns 0, 1 after printing help, or -1 after
 * printing an error. */
int mr_args_parse(struct mr_args *a, int argc, char **argv);
const char *mr_algo_name(int algo);
/* The message for --min-ranks M above the world (the caller exits 2). */
void mr_args_min_ranks_too_many(unsigned min_ranks, int world);

#endif /* MR_ARGS_H */
