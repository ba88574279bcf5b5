/* mnist_ring: progress, metrics and plot (see report.h). */
#define _GNU_SOURCE
#include "report.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double mr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int progress_open;

static void fmt_time(char *b, size_t n, double s)
{
    long t = s < 0 ? 0 : (long)(s + 0.5);
    if (t >= 3600)
        snprintf(b, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(b, n, "%ld:%02ld", t / 60, t % 60);
}

void mr_progress(unsigned epoch, unsigned epochs, unsigned step, unsigned steps,
                 double loss, double samples_per_s, double eta_s)
{
    char eta[32];
    fmt_time(eta, sizeof eta, eta_s);
    if (isatty(STDOUT_FILENO)) {
        printf("\repoch %u/%u  step %u/%u (%3.0f%%)  loss %.4f  %.0f samples/s  ETA %s   ",
               epoch, epochs, step, steps, 100.0 * step / steps, loss, samples_per_s, eta);
        progress_open = 1;
    } else {
        printf("epoch %u/%u  step %u/%u (%3.0f%%)  loss %.4f  %.0f samples/s  ETA %s\n",
               epoch, epochs, step, steps, 100.0 * step / steps, loss, samples_per_s, eta);
    }
    fflush(stdout);
}

void mr_progress_end(void)
{
    if (progress_open) {
        printf("\r%*s\r", 90, "");
        progress_open = 0;
    }
}

void mr_print_epoch(const struct mr_epoch_stats *s, unsigned epochs)
{
    mr_progress_end();
    printf("epoch %u/%u  loss %.4f  train acc %.4f  test loss %.4f  test acc %.4f  "
           "%.0f samples/s  comm %.1f%%  %.1f s\n",
           s->epoch, epochs, s->train_loss, s->train_acc, s->test_loss, s->test_acc,
           s->samples_per_s, 100.0 * s->comm_share, s->seconds);
    fflush(stdout);
}

int mr_metrics_append(const char *path, const struct mr_epoch_stats *s)
{
    struct stat st;
    int fresh = stat(path, &st) != 0 || st.st_size == 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "mnist_ring: %s: cannot write metrics: %s\n", path, strerror(errno));
        return -1;
    }
    if (fresh)
        fprintf(f, "epoch,global_step,train_loss,train_acc,test_loss,test_acc,"
                   "samples_per_s,comm_share,seconds\n");
    fprintf(f, "%u,%llu,%.6f,%.6f,%.6f,%.6f,%.1f,%.4f,%.3f\n", s->epoch,
            (unsigned long long)s->global_step, s->train_loss, s->train_acc, s->test_loss,
            s->test_acc, s->samples_per_s, s->comm_share, s->seconds);
    if (fclose(f) != 0) {
        fprintf(stderr, "mnist_ring: %s: cannot write metrics: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Two panels against the epoch: loss (train, test) and accuracy (train, test),
 * as seed 002 plots its training curve. */
static const char plot_script[] =
    "set terminal png size 900,400 noenhanced\n"
    "set xtics 1\n"
    "set output '%s'\n"
    "set datafile separator ','\n"
    "set key autotitle columnhead\n"
    "set multiplot layout 1,2 title 'mnist_ring'\n"
    "set xlabel 'epoch'\n"
    "set ylabel 'cross-entropy loss'\n"
    "set grid\n"
    "plot '%s' using 1:3 with linespoints title 'train loss', '' using 1:5 with linespoints title 'test loss'\n"
    "set ylabel 'accuracy'\n"
    "plot '%s' using 1:4 with linespoints title 'train acc', '' using 1:6 with linespoints title 'test acc'\n"
    "unset multiplot\n";

int mr_plot(const char *csv, const char *png)
{
    FILE *g = fopen(csv, "r");
    int st;
    if (!g) {
        fprintf(stderr, "mnist_ring: --plot: %s: cannot read the metrics: %s\n", csv,
                strerror(errno));
        return -2;
    }
    fclose(g);
    /* mr_args_parse refuses these too: each name goes into the script */
    if (strpbrk(csv, "'\n\r") || strpbrk(png, "'\n\r")) {
        fprintf(stderr, "mnist_ring: --plot: file names with quotes or newlines are not "
                        "supported\n");
        return -2;
    }
    g = popen("gnuplot 2>/dev/null", "w");  /* quiet: a one-epoch plot warns */
    if (!g) {
        fprintf(stderr, "mnist_ring: --plot: cannot run gnuplot: %s\n", strerror(errno));
        return -1;
    }
    fprintf(g, plot_script, png, csv, csv);
    st = pclose(g);
    if (st != 0) {
        if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
            fprintf(stderr, "mnist_ring: --plot: no gnuplot (install gnuplot-nox) to draw %s\n",
                    png);
        else
            fprintf(stderr, "mnist_ring: --plot: gnuplot failed drawing %s from %s\n", png, csv);
        unlink(png);   /* no empty or half-drawn picture left behind */
        return -1;
    }
    return 0;
}
