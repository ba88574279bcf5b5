/* mnist_ring: one rank's training run. */
#ifndef MR_TRAIN_H
#define MR_TRAIN_H

#include <signal.h>

#include "args.h"
#include "idx.h"
#include "peers.h"

/* Connect (init_method tcp:// with rank/world, or env://; or peers, a
 * checked static table, as rank), agree on the starting model (rank 0 inits
 * from --seed or loads --checkpoint and broadcasts), train, evaluate, save.
 * rank/world are ignored for env://; with neither init_method nor peers the
 * run is a single rank. Returns the process exit status: 0, 1 after
 * printing what failed, or 128 + the signal after an interruption. */
int mr_train_rank(const struct mr_args *a, const struct mr_dataset *train,
                  const struct mr_dataset *test, const char *init_method,
                  const struct mr_peers *peers, int rank, int world, const char *job_token);

/* The signal (SIGINT, SIGTERM) that asked this process to stop, or 0. A
 * rank checks it between events and while it waits for the ring: it leaves
 * after the step it is in, rank 0 saying at which epoch and step and where
 * the last checkpoint is, and mr_train_rank returns 128 + the signal. */
extern volatile sig_atomic_t mr_interrupted;
/* 1 once this process stops in order on a signal (a rank from the start
 * of training, the --nproc launcher once its ranks run); before that a
 * signal ends it at once, as by default. */
extern volatile sig_atomic_t mr_stop_in_order;

const char *mr_signal_name(int sig);

#endif /* MR_TRAIN_H */
