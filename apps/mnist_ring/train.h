/* mnist_ring: one rank's training run. */
#ifndef MR_TRAIN_H
#define MR_TRAIN_H

#include "args.h"
#include "idx.h"
#include "peers.h"

/* Connect (init_method tcp:// with rank/world, or env://; or peers, a
 * checked static table, as rank), agree on the starting model (rank 0 inits
 * from --seed or loads --checkpoint and broadcasts), train, evaluate, save.
 * rank/world are ignored for env://; with neither init_method nor peers the
 * run is a single rank. Returns the process exit status: 0, or 1 after
 * printing what failed. */
int mr_train_rank(const struct mr_args *a, const struct mr_dataset *train,
                  const struct mr_dataset *test, const char *init_method,
                  const struct mr_peers *peers, int rank, int world, const char *job_token);

#endif /* MR_TRAIN_H */
