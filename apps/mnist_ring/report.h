/* mnist_ring: what rank 0 shows and keeps: progress, metrics CSV, plot. */
#ifndef MR_REPORT_H
#define MR_REPORT_H

#include <stdint.h>
#include <stdio.h>

struct mr_epoch_stats {
    unsigned epoch;            /* 1-based */
    uint64_t global_step;
    double   train_loss, train_acc;
    double   test_loss, test_acc;
    double   samples_per_s;    /* all ranks, training steps only */
    double   comm_share;       /* share of step time inside the gradient allreduce */
    double   seconds;          /* training time of the epoch */
};

double mr_now(void);           /* monotonic seconds */

/* Progress within an epoch: a rewritten line on a terminal, a line every
 * quarter epoch otherwise. */
void mr_progress(unsigned epoch, unsigned epochs, unsigned step, unsigned steps,
                 double loss, double samples_per_s, double eta_s);
void mr_progress_end(void);
void mr_print_epoch(const struct mr_epoch_stats *s, unsigned epochs);

/* Append one row (writes the header first when the file is new or empty). */
int mr_metrics_append(const char *path, const struct mr_epoch_stats *s);

/* Draw the metrics CSV into a PNG with gnuplot; 0, or after a message -2
 * (the CSV cannot be read, a name gnuplot cannot take) or -1 (gnuplot
 * missing or failed; no PNG is left). */
int mr_plot(const char *csv, const char *png);

#endif /* MR_REPORT_H */
