/* tinyring test: a simulated in-memory transport for N ranks in one process.
 *
 * Connection i joins rank i (its RIGHT link) and rank i+1 (its LEFT link);
 * each direction is a byte FIFO of a fixed capacity. Nothing blocks: the
 * test drives every rank's tr_comm_progress round robin (sim_run), or a rank
 * in a blocking call drives the others from inside poll() (sim_set_driver).
 * The clock is simulated: it advances only when a whole round moved nothing,
 * so timeouts take no real time.
 *
 * Fault knobs (per rank unless said otherwise):
 *   max_write     send accepts at most this many bytes per call (0 = no limit)
 *   again_every   every n-th send (or recv) call on a link returns
 *                 TR_ERR_AGAIN (0 = never)
 *   die_after     the rank dies after sending this many bytes in total: its
 *                 connections close, the scheduler stops running it (-1 = never)
 *   silent        the rank is never run: a peer that never answers
 *   corrupt       xor a byte of one stream at a given offset (garbage)
 *   sim_inject    push raw bytes into a stream (a stranger talking) */
#ifndef SIM_TRANSPORT_H
#define SIM_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include "tr_transport.h"
#include "tr_comm.h"

#define SIM_MAX_WORLD 16

struct sim_fifo {
    uint8_t *buf;          /* cap bytes */
    size_t   cap;
    size_t   head;         /* index of the oldest byte */
    size_t   len;          /* bytes queued */
    uint64_t written;      /* bytes ever written (stream offset) */
    int64_t  corrupt_at;   /* stream offset to xor, -1 for none */
    uint8_t  corrupt_xor;
};

struct sim_net;

struct sim_ep {
    struct sim_net *net;
    int      rank;
    size_t   max_write;
    unsigned again_every;
    unsigned calls[4];     /* per link and direction, for again_every */
    int64_t  die_after;
    uint64_t sent;
    int      dead;
    int      silent;
};

struct sim_net {
    int world;
    uint32_t now;                          /* simulated ms */
    uint64_t moved;                        /* bytes moved by anyone, ever */
    struct sim_fifo fwd[SIM_MAX_WORLD];    /* rank i -> i+1 over connection i */
    struct sim_fifo back[SIM_MAX_WORLD];   /* rank i+1 -> i over connection i */
    int closed[SIM_MAX_WORLD];             /* connection i closed */
    struct sim_ep ep[SIM_MAX_WORLD];
    struct tr_transport tp[SIM_MAX_WORLD];
    /* for blocking calls: poll() of a rank runs this once (drives the others) */
    void (*driver)(struct sim_net *net, int caller, void *arg);
    void *driver_arg;
    uint64_t rng;                          /* scheduler order, when shuffled */
    int keep_failed;                       /* sim_run: a failed rank keeps its
                                            * links open (default: they close) */
};

/* world ranks, fifo capacity per direction in bytes. */
int  sim_init(struct sim_net *net, int world, size_t fifo_cap);
void sim_free(struct sim_net *net);
/* Kills rank r now: closes both its connections. */
void sim_kill(struct sim_net *net, int r);
/* The stream rank r writes on link peer (TR_LEFT / TR_RIGHT). */
struct sim_fifo *sim_out(struct sim_net *net, int r, int peer);
/* Pushes n raw bytes into f (ignoring capacity limits of the writer side). */
void sim_inject(struct sim_fifo *f, const void *bytes, size_t n);

/* Round-robin scheduler: calls tr_comm_progress on every live, non-silent
 * rank whose rc[r] is TR_ERR_AGAIN, until none is, or max_ms simulated ms
 * pass. A rank whose collective fails is treated like a process that exits:
 * its connections close. shuffle != 0 varies the order each round. Returns
 * the number of rounds, or -1 if max_ms passed with ranks still running. */
long sim_run(struct sim_net *net, struct tr_comm *comms, int *rc, uint32_t max_ms,
             int shuffle);

#endif /* SIM_TRANSPORT_H */
