/* tinyring: the trainer's internals shared by tr_train.c (the fixed ring:
 * start, steps, epochs, the state bytes) and tr_train_elastic.c (rollback,
 * resync after a reform). Not installed. */
#ifndef TR_TRAIN_INTERNAL_H
#define TR_TRAIN_INTERNAL_H

#include "tr_train.h"

#define START_BYTES 48u   /* the fixed ring's start record */

enum tr_train_phase {
    PH_IDLE = 0,       /* initialised, not begun */
    PH_HELLO,          /* hello exchange (configuration hash) */
    PH_START_BCAST,    /* rank 0's start record */
    PH_PARAM_BCAST,
    PH_MOMENTUM_BCAST,
    PH_BUFFER_BCAST,
    PH_STEP,           /* next: decide, then compute a step */
    PH_GRADS,          /* gradient allreduce (the buckets after backward) */
    PH_SYNC_GO,        /* start the within-epoch BN average */
    PH_SYNC,
    PH_EPOCH_GO,       /* start the end-of-epoch BN average */
    PH_EPOCH_BN,
    PH_EVAL,           /* evaluate (the epoch's BN average is done) */
    PH_EPOCH_SUMS,     /* evaluation and training sums over the ring */
    PH_DONE,
    PH_FAILED,
    /* elastic runs */
    PH_FLAG,           /* the change flag's sum after the gradients */
    PH_CHANGE,         /* TR_TRAIN_CHANGE is to be returned */
    PH_CHANGED,        /* TR_TRAIN_CHANGE returned: reform, or go on */
    PH_LOST,           /* TR_TRAIN_LOST returned: reform */
    PH_RE_ARMED,       /* tr_train_reform called, nothing sent yet */
    PH_RE_HELLO,       /* hello on the new ring */
    PH_RE_START,       /* the source's start record */
    PH_RE_PARAMS,      /* the source's parameters */
    PH_RE_MOMENTUM,    /* the source's momentum */
    PH_RE_BUFFERS,     /* the source's BN buffers (they are the same on every rank) */
    PH_RE_BUFAVG,      /* the holders' BN buffers averaged (they differ per rank) */
    PH_BACKWARD,       /* backward, its buckets reduced as they complete */
    PH_RE_RESIDUAL,    /* the source's error-feedback residual */
    /* the fixed ring again (after the elastic ones so their order stays) */
    PH_RESIDUAL_BCAST, /* rank 0's error-feedback residual */
    PH_AVG_GO,         /* periodic averaging: start the parameters' average */
    PH_AVG_PARAMS,
    PH_AVG_MOMENTUM,
    PH_SYNC_RES,       /* after PH_SYNC: the error-feedback residuals averaged */
    PH_EPOCH_RES       /* after PH_EPOCH_BN: the same */
};

/* tr_train.c */
void tr_train_priv_start_encode(struct tr_train *t);   /* the first START_BYTES of a record */
void tr_train_priv_fault(struct tr_train *t, int what, int code, int rank);   /* fill t->fault */
int  tr_train_priv_fail(struct tr_train *t, int what, int code, int rank);
int  tr_train_priv_report(const struct tr_train *t, struct tr_train_report *rep, int event);
void tr_train_priv_step_count(struct tr_train *t);   /* the step counts as done */
void tr_train_priv_epoch_reset(struct tr_train *t);
int  tr_train_priv_evaluate(struct tr_train *t);
int  tr_train_priv_bcast(struct tr_train *t, int phase, int what, void *buf, size_t bytes,
                        int root);
int  tr_train_priv_reduce(struct tr_train *t, int phase, int what, float *buf, size_t n,
                         enum tr_op op);
void tr_train_priv_comm_config(const struct tr_train_config *c, struct tr_comm_config *cc);
uint32_t tr_train_priv_steps(const struct tr_train *t);
void tr_train_priv_copy(float *dst, const float *src, size_t n);
uint32_t tr_train_priv_hello_hash(const struct tr_train *t);

/* --elastic with periodic averaging (every average a sync point, the
 * state of the last one kept): 1 if so */
int  tr_train_priv_avg_elastic(const struct tr_train *t);
void tr_train_priv_snap_take(struct tr_train *t);

/* tr_train_elastic.c */
/* A collective failed in an elastic run: roll back to the last completed
 * step and return TR_TRAIN_LOST. */
int  tr_train_priv_lost(struct tr_train *t, int what, int code, int rank);
/* The phases PH_FLAG .. PH_RE_BUFAVG (the collective of the phase, if any,
 * has completed when called for PH_FLAG and PH_RE_*). */
int  tr_train_priv_elastic(struct tr_train *t, struct tr_train_report *rep);
/* The elastic start record (tr_train_begin arms it with source 0). */
int  tr_train_priv_elastic_begin(struct tr_train *t);

#endif /* TR_TRAIN_INTERNAL_H */
