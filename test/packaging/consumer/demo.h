/* test/packaging consumer: a few SGD steps of the narrow ConvNet (4/8) on a
 * synthetic batch, one source for the host and the Cortex-M4F board, so the
 * two print the same numbers when core computes the same bits. The steps
 * are core's trainer (tr_train.h) on an in-memory data set. */
#ifndef DEMO_H
#define DEMO_H

#include <stdint.h>

#define DEMO_STEPS 5u

/* Runs the steps: loss_bits[s] is step s's loss (before its update) as
 * IEEE-754 bits, *param_hash FNV-1a over every parameter's bits at the end.
 * Returns 0, or a negative tr_err. */
int demo_run(uint32_t loss_bits[DEMO_STEPS], uint32_t *param_hash);

#endif /* DEMO_H */
