/* mnist_ring --elastic: joining a job that may already run, the membership
 * rounds after a lost link or an agreed change, and what rank 0 of the ring
 * says about them. The trainer's side (rollback, resync, re-deal) is core's
 * (tr_train.h); the membership protocol is the POSIX port's
 * (tr_posix_elastic_*). */
#ifndef MR_ELASTIC_H
#define MR_ELASTIC_H

#include <stdint.h>

#include "args.h"
#include "peers.h"
#include "tinyring.h"
#include "tr_posix.h"

struct mr_elastic {
    struct tr_posix_elastic el;        /* the links: tr_posix_transport(&el.px, ...) */
    struct tr_posix_endpoint table[TR_POSIX_MAX_WORLD];
    uint32_t rank;                     /* this process's original rank */
    uint32_t world;                    /* the job's original world */
    unsigned min_ranks;
    int      joiner;                   /* joined a running job (holds no state yet) */
    int      change_asked;             /* a change was asked for this process's joiners */
    double   t_lost;                   /* when the ring was lost (recovery clock), 0 = none */
    uint32_t lost_ms;                  /* the same on the port's clock */
    double   detect;                   /* the lost ring's detection time (s), < 0 = not known */
    uint32_t detect_rank;              /* ... of this rank that left */
    struct tr_posix_elastic_round round;   /* the last round */
    long     die_rank;                 /* MR_DEBUG_DIE_AT=RANK:POSITION (tests): this rank */
    uint64_t die_pos;                  /* kills itself once its state is at this position */
};

/* Set when this process stops because the job went on without it (a
 * membership round refused it as dropped, or it was in a group that is not
 * a majority): --nproc's launcher tells that from a failure of the job. */
extern int mr_elastic_left;

/* Find a running job (then wait for the view that takes this process in:
 * e->joiner = 1), else meet the others as a fixed job would (tcp://, env://
 * or the --peers table) and keep listening. *rank, *world: this process's
 * place in the current ring. 0, or a negative tr_err after a message. */
int mr_elastic_join(struct mr_elastic *e, const struct mr_args *a, const char *init_method,
                    const struct mr_peers *peers, int rank, int world, const char *job_token,
                    int *ring_rank, int *ring_world);

/* After TR_TRAIN_LOST or TR_TRAIN_CHANGE: the membership round, then the
 * trainer bound to the new ring (tr_train_reform). Rank 0 of the new ring
 * prints who left or came back. 0, or a negative tr_err after a message
 * (below --min-ranks: the member holding the latest state writes
 * --checkpoint first). */
int mr_elastic_reform(struct mr_elastic *e, const struct mr_args *a, struct tr_train *t,
                      struct tr_transport *tp, int (*save_ckpt)(void *ctx), void *ctx);

/* Between events: take joiners' requests (rank 0 of the ring asks every
 * rank for a change); after a resync, rank 0 prints the detection time (a
 * rank that left: from its last heartbeat to the lost ring) and the
 * recovery time (from there to the first completed step); MR_DEBUG_DIE_AT. */
void mr_elastic_event(struct mr_elastic *e, struct tr_train *t, int ev);
void mr_elastic_service(struct mr_elastic *e, struct tr_train *t);

#endif /* MR_ELASTIC_H */
