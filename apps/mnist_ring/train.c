/* mnist_ring: one rank's run on core's trainer (see train.h).
 *
 * core/tr_train.c owns what a step and an epoch are (sampler, pixel
 * scaling, forward, loss, backward, gradient allreduce, SGD, BN averaging,
 * evaluation, the state bytes). This file does the I/O around it: joining
 * the ring, handing samples over, progress lines, checkpoint, metrics and
 * model files.
 */
#define _GNU_SOURCE
#include "train.h"

#include "tr_codec.h"

#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "elastic.h"
#include "report.h"
#include "tinyring.h"
#include "tr_posix.h"

/* Pipeline segment of the collectives in a --peers ring: what the boards'
 * images use (their receive staging is one segment of RAM). Every rank of a
 * ring must use the same (the hello checks it). */
#define MR_PEERS_SEGMENT 4096u

struct mr_rank {
    const struct mr_args *a;
    const struct mr_dataset *train, *test;
    int rank, world;
    struct tr_posix px;
    struct tr_transport tp;
    int have_px;
    struct mr_elastic *e;     /* --elastic: membership and the links (px unused) */
    int started;              /* the first TR_TRAIN_START was seen */
    struct tr_train t;
    void *arena;
    void *state;              /* tr_train_state_size bytes, for the files */
    size_t state_len;
    /* the last checkpoint written or resumed from (rank 0) */
    int ck_have;
    uint32_t ck_epoch, ck_step;
    uint64_t ck_global;
    /* progress within the epoch */
    double t_start, t_last, t_trained;
    unsigned k0, qmark;
    /* --warmup-steps: the samples (all ranks) and comm time before the
     * clock started again in the first epoch; warm_done: it did, or that
     * epoch ended first */
    double warm_samples;
    uint64_t warm_comm_us;
    uint64_t comm_trained;     /* comm_us at the last step's report (t_trained) */
    int warm_done;
    double last_acc;
};

/* ---- joining the ring */

/* --peers: listen on our line of the table, connect to the next rank's. */
static int join_table(struct mr_rank *r, const struct mr_peers *peers, const char *job_token)
{
    struct tr_posix_table_config tc;
    char err[512];
    int rc;

    tr_posix_table_config_default(&tc);
    tc.table = peers->table;
    tc.rank = r->rank;
    tc.world = peers->world;
    tc.job_token = tr_posix_token(job_token);
    tc.timeout_ms = r->a->timeout_s * 1000u;
    rc = tr_posix_connect_table(&r->px, &tc, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "mnist_ring: rank %d: cannot join the ring of --peers %s: %s\n", r->rank,
                r->a->peers, err);
        return rc;
    }
    return 0;
}

static int join(struct mr_rank *r, const char *init_method, const struct mr_peers *peers,
                int rank, int world, const char *job_token)
{
    const struct mr_args *a = r->a;
    struct tr_posix_config pc;
    char err[512];
    int rc;

    r->rank = rank < 0 ? 0 : rank;
    r->world = world < 1 ? 1 : world;
    if (a->elastic && (peers || init_method)) {
        if (!(r->e = calloc(1, sizeof *r->e))) {
            fprintf(stderr, "mnist_ring: out of memory\n");
            return TR_ERR_NOMEM;
        }
        if ((rc = mr_elastic_join(r->e, a, init_method, peers, rank, world, job_token, &r->rank,
                                  &r->world)) < 0)
            return rc;
        tr_posix_transport(&r->e->el.px, &r->tp);
        return 0;
    }
    if (peers) {
        r->world = peers->world;
        if (r->world == 1)
            return 0;
        if ((rc = join_table(r, peers, job_token)) < 0)
            return rc;
        r->have_px = 1;
        tr_posix_transport(&r->px, &r->tp);
        return 0;
    }
    if (!init_method)
        return 0;
    tr_posix_config_default(&pc);
    pc.init_method = init_method;
    pc.rank = rank;
    pc.world = world;
    pc.iface = a->iface;
    pc.job_token = tr_posix_token(job_token);
    pc.connect_timeout_ms = a->timeout_s * 1000u;
    pc.join_timeout_ms = a->timeout_s * 1000u;
    if (a->nproc > 1)
        pc.local_ranks = a->nproc;     /* --nproc: all ranks on this host */
    rc = tr_posix_connect(&r->px, &pc, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "mnist_ring: rank %d: cannot join the job (%s): %s\n", r->px.rank,
                init_method, err);
        return rc;
    }
    r->have_px = 1;
    r->rank = r->px.rank;
    r->world = r->px.world;
    tr_posix_transport(&r->px, &r->tp);
    return 0;
}

/* ---- the trainer */

/* The loader: samples are in memory, already checked. */
static int load_samples(void *ctx, int split, const uint32_t *idx, unsigned n,
                        uint8_t *pixels, uint8_t *labels)
{
    const struct mr_rank *r = ctx;
    const struct mr_dataset *ds = split == TR_SPLIT_TRAIN ? r->train : r->test;
    for (unsigned i = 0; i < n; i++) {
        memcpy(pixels + (size_t)i * MR_IMG_PIXELS, ds->images + (size_t)idx[i] * MR_IMG_PIXELS,
               MR_IMG_PIXELS);
        labels[i] = ds->labels[idx[i]];
    }
    return 0;
}

static uint64_t clock_us(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int setup(struct mr_rank *r, const char *job_token)
{
    const struct mr_args *a = r->a;
    struct tr_train_config c;
    size_t bytes;
    int rc;

    memset(&c, 0, sizeof c);
    tr_model_desc_convnet(&c.model, 16, 32, 10);
    c.batch = a->batch;
    c.n_train = r->train->n;
    c.n_test = r->test->n;
    c.load = load_samples;
    c.load_ctx = r;
    c.lr = a->lr;
    c.momentum = a->momentum;
    c.seed = a->seed;
    c.algo = a->algo;
    c.compress = a->compress;
    c.average_every = a->average_every;
    c.epochs = a->epochs;
    c.max_steps = a->max_steps;
    c.sync_every = a->checkpoint_every;   /* BN averaged at every checkpoint */
    c.rank = r->rank;
    c.world = r->world;
    c.tp = r->world > 1 ? &r->tp : NULL;
    c.job_token = tr_posix_token(job_token);
    c.timeout_ms = a->timeout_s * 1000u;
    c.segment_bytes = a->peers ? MR_PEERS_SEGMENT : 0;
    c.elastic = a->elastic;
    c.clock_us = clock_us;
    if ((rc = tr_train_arena_size(&c, &bytes)) < 0) {
        fprintf(stderr, "mnist_ring: trainer: %s\n", tr_strerror(rc));
        return rc;
    }
    r->arena = aligned_alloc(TR_ARENA_ALIGN, (bytes + TR_ARENA_ALIGN - 1) / TR_ARENA_ALIGN *
                                             TR_ARENA_ALIGN);
    if (!r->arena) {
        fprintf(stderr, "mnist_ring: out of memory (%zu bytes for the trainer)\n", bytes);
        return TR_ERR_NOMEM;
    }
    if ((rc = tr_train_init(&r->t, &c, r->arena, bytes)) < 0) {
        fprintf(stderr, "mnist_ring: rank %d: trainer init: %s\n", r->rank, tr_strerror(rc));
        return rc;
    }
    r->state_len = tr_train_state_size(&r->t, TR_STATE_CHECKPOINT);
    if (!(r->state = malloc(r->state_len))) {
        fprintf(stderr, "mnist_ring: out of memory\n");
        return TR_ERR_NOMEM;
    }
    return 0;
}

/* ---- files */

static int save_state(struct mr_rank *r, int kind, const char *path, const char *what)
{
    char err[1024];
    long len = tr_train_state_save(&r->t, kind, r->state, r->state_len);
    int rc = len < 0 ? (int)len : mr_ckpt_write(path, r->state, (size_t)len, err, sizeof err);
    if (len < 0)
        snprintf(err, sizeof err, "%s: %s", path, tr_strerror((int)len));
    if (rc < 0)
        fprintf(stderr, "mnist_ring: %s: %s\n", what, err);
    return rc;
}

/* --elastic, below --min-ranks: the member holding the latest state writes
 * it, whatever its rank. */
static int save_latest(void *ctx)
{
    struct mr_rank *r = ctx;
    return save_state(r, TR_STATE_CHECKPOINT, r->a->checkpoint, "checkpoint");
}

static int save_ckpt(struct mr_rank *r)
{
    if (r->rank != 0)
        return 0;
    if (save_state(r, TR_STATE_CHECKPOINT, r->a->checkpoint, "checkpoint") < 0)
        return TR_ERR_IO;
    r->ck_have = 1;
    r->ck_epoch = r->t.epoch;
    r->ck_step = r->t.step;
    r->ck_global = r->t.global_step;
    return 0;
}

/* Rank 0: start from --seed, or from the checkpoint; a checkpoint that
 * cannot be used stops every rank (tr_train_refuse tells the ring). */
static int start(struct mr_rank *r)
{
    const struct mr_args *a = r->a;
    struct tr_train_state_info in;
    void *bytes;
    size_t len;
    char err[1024];
    int rc;

    if (r->e && r->e->joiner) {   /* the ring's state arrives at the resync */
        const struct tr_posix_elastic_round *o = &r->e->round;
        if ((rc = tr_train_begin(&r->t, NULL, 0)) < 0)
            return rc;
        return tr_train_reform(&r->t, o->rank, o->world, o->world > 1 ? &r->tp : NULL,
                               o->source);
    }
    if (r->rank != 0 || !a->resume || access(a->checkpoint, F_OK) != 0) {
        if (r->rank == 0 && a->resume)
            printf("no checkpoint at %s yet: starting from scratch\n", a->checkpoint);
        return tr_train_begin(&r->t, NULL, 0);
    }
    rc = mr_ckpt_read(a->checkpoint, TR_STATE_CHECKPOINT, &bytes, &len, &in, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "mnist_ring: --resume: %s\n", err);
    } else if (in.n_params != r->t.model.n_params || in.n_buffers != r->t.model.n_buffers ||
               !(in.flags & TR_STATE_HAS_MOMENTUM)) {
        fprintf(stderr, "mnist_ring: --resume: %s: holds %llu params and %llu buffers%s, this "
                "model has %llu and %llu\n", a->checkpoint, (unsigned long long)in.n_params,
                (unsigned long long)in.n_buffers,
                in.flags & TR_STATE_HAS_MOMENTUM ? "" : " and no momentum",
                (unsigned long long)r->t.model.n_params, (unsigned long long)r->t.model.n_buffers);
        rc = TR_ERR_MISMATCH;
    } else if ((in.version == TR_STATE_VERSION2) != (a->elastic != 0)) {
        fprintf(stderr, "mnist_ring: --resume: %s was written by %s run; resume it %s\n",
                a->checkpoint, a->elastic ? "a fixed (not --elastic)" : "an --elastic",
                a->elastic ? "without --elastic" : "with --elastic");
        rc = TR_ERR_MISMATCH;
    } else if (in.config_hash != tr_train_config_hash(&r->t)) {
        fprintf(stderr, "mnist_ring: --resume: %s was written by a different configuration "
                "(it had world %u, batch %u, seed %llu; resuming needs the same world size, "
                "batch, lr, momentum, seed, --allreduce, --checkpoint-every, --elastic and data set)\n",
                a->checkpoint, (unsigned)in.world, (unsigned)in.batch,
                (unsigned long long)in.seed);
        rc = TR_ERR_MISMATCH;
    } else {
        printf("resuming from %s: epoch %u, step %u (%llu steps done)\n", a->checkpoint,
               (unsigned)in.epoch + 1, (unsigned)in.step, (unsigned long long)in.global_step);
        rc = tr_train_begin(&r->t, bytes, len);
        r->ck_have = 1;
        r->ck_epoch = in.epoch;
        r->ck_step = in.step;
        r->ck_global = in.global_step;
    }
    free(bytes);
    return rc < 0 ? tr_train_refuse(&r->t, rc) : 0;
}

/* ---- what the events show */

/* --debug-param-hash: this rank's loss (its float bits) and parameter hash
 * after a step, in the lines the boards print too */
/* The rank a process is known by in its lines: its ring rank, or with
 * --elastic its original one (the ring's changes). */
static int id_of(const struct mr_rank *r)
{
    return r->e ? (int)r->e->rank : r->rank;
}

static void print_hash(const struct mr_rank *r, uint64_t step, float loss)
{
    uint32_t bits;
    memcpy(&bits, &loss, sizeof bits);
    fprintf(stderr, "loss-bits rank %d step %llu %08x\n", id_of(r), (unsigned long long)step,
            (unsigned)bits);
    fprintf(stderr, "param-hash rank %d step %llu %016llx\n", id_of(r), (unsigned long long)step,
            (unsigned long long)tr_train_hash(r->t.model.params, r->t.model.n_params));
}

static void on_start(struct mr_rank *r, const struct tr_train_report *rep)
{
    const struct mr_args *a = r->a;
    int first = !r->started;
    r->started = 1;
    char extra[96] = "";
    if (a->compress)
        snprintf(extra, sizeof extra, ", compress %s", tr_codec_name(a->compress));
    if (a->average_every >= 2)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                 ", parameters averaged every %u steps", a->average_every);
    if (r->rank == 0 && first && rep->epoch == 0 && rep->step == 0)
        printf("training %u epoch%s on %d rank%s: %u train / %u test samples, batch %u per rank, "
               "%u steps per epoch, lr %g, momentum %g, allreduce %s%s\n",
               a->epochs, a->epochs == 1 ? "" : "s", r->world, r->world == 1 ? "" : "s",
               (unsigned)r->train->n, (unsigned)r->test->n, a->batch, (unsigned)rep->steps,
               (double)a->lr, (double)a->momentum, mr_algo_name(a->algo), extra);
    if (r->rank == 0 && first && a->metrics && !(a->resume && rep->global_step > 0) &&
        !(r->e && r->e->joiner)) {
        FILE *f = fopen(a->metrics, "w");  /* a fresh run starts a fresh file */
        if (f)
            fclose(f);
    }
    if (!first)          /* a resync (--elastic): the epoch's clock goes on */
        return;
    r->t_start = r->t_last = r->t_trained = mr_now();
    r->k0 = rep->step;
    r->qmark = 1;
}

/* Rank 0's progress line: on a terminal twice a second, else every quarter
 * epoch; with the ETA of the whole run at this epoch's pace. */
static void on_step(struct mr_rank *r, const struct tr_train_report *rep)
{
    const struct mr_args *a = r->a;
    double now = mr_now(), el;
    unsigned k = rep->step, steps = rep->steps;
    int tty, due;
    uint64_t left;

    r->t_trained = now;
    r->comm_trained = r->t.comm_us;
    if (a->debug_param_hash)
        print_hash(r, rep->global_step, rep->loss);
    if (a->warmup_steps && !r->warm_done && k == r->k0 + a->warmup_steps) {
        r->t_start = r->t_last = now;          /* the clock starts again */
        r->k0 = k;
        r->warm_samples = (double)r->t.seen * r->world;
        r->warm_comm_us = r->t.comm_us;
        r->warm_done = 1;
        return;
    }
    if (r->rank != 0 || a->quiet || k >= steps)
        return;
    tty = isatty(STDOUT_FILENO);
    due = tty ? now - r->t_last >= 0.5 : k * 4 >= r->qmark * steps && r->qmark < 4;
    if (!due)
        return;
    el = now - r->t_start;
    left = (uint64_t)(steps - k) + (uint64_t)(a->epochs - rep->epoch - 1) * steps;
    if (a->max_steps && left > a->max_steps - rep->global_step)
        left = a->max_steps - rep->global_step;
    mr_progress(rep->epoch + 1, a->epochs, k, steps,
                r->t.loss_sum / (r->t.seen ? r->t.seen : 1),
                ((double)r->t.seen * r->world - r->warm_samples) / el,
                el / (k - r->k0) * (double)left);
    r->t_last = now;
    if (!tty)
        while (r->qmark < 4 && k * 4 >= r->qmark * steps)
            r->qmark++;
}

static int on_epoch(struct mr_rank *r, const struct tr_train_report *rep)
{
    const struct mr_args *a = r->a;
    struct mr_epoch_stats es;
    memset(&es, 0, sizeof es);
    es.seconds = r->t_trained - r->t_start;
    es.epoch = rep->epoch + 1;
    es.global_step = rep->global_step;
    es.test_loss = rep->test_loss;
    es.test_acc = rep->test_acc;
    es.train_loss = rep->train_loss;
    es.train_acc = rep->train_acc;
    es.samples_per_s = es.seconds > 0 ? (rep->train_samples - r->warm_samples) / es.seconds : 0;
    /* over the same window as seconds: up to the last step's report, not
     * the epoch end's averages after it (with --average-every at 1 Mbit/s,
     * those alone took longer than the steps timed) */
    es.comm_share =
        es.seconds > 0 ? (double)(r->comm_trained - r->warm_comm_us) / 1e6 / es.seconds : 0;
    r->warm_samples = 0;        /* the next epochs count whole */
    r->warm_comm_us = 0;
    r->warm_done = 1;
    r->last_acc = es.test_acc;
    if (r->rank == 0) {
        if (rep->stopped)
            printf("stopped after %llu steps (--max-steps), in epoch %u at step %u/%u\n",
                   (unsigned long long)rep->global_step, rep->epoch + 1, rep->step, rep->steps);
        mr_print_epoch(&es, a->epochs);
        if (a->metrics && mr_metrics_append(a->metrics, &es) < 0)
            return TR_ERR_IO;
    }
    if (!rep->stopped && a->checkpoint && save_ckpt(r) < 0)
        return TR_ERR_IO;
    r->t_start = r->t_last = r->t_trained = mr_now();
    r->k0 = 0;
    r->qmark = 1;
    return 0;
}

/* ---- failures */

/* Milliseconds since the right neighbour's stack last acknowledged anything,
 * when it owes an answer (bytes unacknowledged, or the port's keepalive
 * probe unanswered); else -1 (nothing owed, or not known). */
static long right_silent_ms(const struct mr_rank *r)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    int fd = r->e ? r->e->el.px.fd[TR_RIGHT] : r->have_px ? r->px.fd[TR_RIGHT] : -1;
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        (ti.tcpi_unacked == 0 && ti.tcpi_probes == 0))
        return -1;
    return (long)ti.tcpi_last_ack_recv;
}

/* Which link and rank a collective failed on; and when the right
 * neighbour's stack has acknowledged nothing of what we sent (or of the
 * port's keepalive probe, when all was acknowledged) for half the timeout or
 * more, say so: that neighbour stopped (a board lost power, a
 * host vanished) and what failed here (a timeout starving on the left link,
 * or a left neighbour giving up first) is its echo around the ring. A frozen
 * process is not caught by this (its kernel still acknowledges), only a
 * silent stack. */
static void comm_detail(const struct mr_rank *r, char *link, char *cause, size_t n)
{
    const struct tr_comm_fault *f = tr_comm_last_fault(&r->t.comm);
    long silent = right_silent_ms(r);
    link[0] = cause[0] = 0;
    if (r->world < 2 || !f || !f->code)
        return;
    snprintf(link, n, " (in %s, peer rank %d)", tr_comm_phase_name(f->phase), f->peer_rank);
    if (silent >= 0 && silent * 2 >= (long)r->a->timeout_s * 1000)
        snprintf(cause, n, "; rank %d (right neighbour) has acknowledged nothing for %.1f s: "
                 "it stopped or is cut off", (r->rank + 1) % r->world, silent / 1000.0);
}

/* Each line goes out in one write: the ranks --nproc starts share stderr. */
static void report_fault(const struct mr_rank *r, int rc)
{
    const struct tr_train_fault *f = tr_train_last_fault(&r->t);
    char detail[128], cause[128], at[48] = "";
    comm_detail(r, detail, cause, sizeof detail);
    switch (f->what) {
    case TR_TRAIN_RESTORE:
        if (r->rank == 0) {          /* checked before: only a position outside the run is left */
            fprintf(stderr, "mnist_ring: --resume: %s: cannot restore: %s\n", r->a->checkpoint,
                    tr_strerror(rc));
            return;
        }
        /* fall through */
    case TR_TRAIN_REFUSED:
        if (r->rank != 0)
            fprintf(stderr, "mnist_ring: rank %d: rank 0 could not start; stopping\n", r->rank);
        return;                      /* rank 0 said why before */
    case TR_TRAIN_CONFIG:
        fprintf(stderr, "mnist_ring: rank %d: my configuration (batch, lr, momentum, seed, "
                "--allreduce, data set) differs from rank 0's; stopping\n", r->rank);
        return;
    case TR_TRAIN_HELLO:
        if (rc == TR_ERR_MISMATCH && r->world > 1 && tr_comm_last_fault(&r->t.comm)->peer_version)
            fprintf(stderr, "mnist_ring: rank %d: rank %d speaks tinyring wire protocol version "
                    "%d, this build version %u: another tinyring build; run the same build on "
                    "every rank\n", r->rank, tr_comm_last_fault(&r->t.comm)->peer_rank,
                    tr_comm_last_fault(&r->t.comm)->peer_version, TR_PROTO_VERSION);
        else if (rc == TR_ERR_MISMATCH)
            fprintf(stderr, "mnist_ring: rank %d: the ranks' configurations differ (batch, lr, "
                    "momentum, seed, --allreduce, --compress, --average-every, "
                    "--checkpoint-every, --max-steps, data set or model); "
                    "start every rank with the same flags and data\n", r->rank);
        break;
    default:
        break;
    }
    if (f->what >= TR_TRAIN_LOAD)
        snprintf(at, sizeof at, " at epoch %u, step %u", f->epoch + 1, f->step + 1);
    fprintf(stderr, "mnist_ring: rank %d: %s failed: %s%s%s%s; stopping\n", r->rank,
            tr_train_what_name(f->what), tr_strerror(rc), detail, at, cause);
}

/* ---- the run */

volatile sig_atomic_t mr_interrupted;
volatile sig_atomic_t mr_stop_in_order;

const char *mr_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* Rank 0 says where training stopped and how to go on, in one write (as
 * report_fault). */
static void report_interrupt(const struct mr_rank *r)
{
    const struct mr_args *a = r->a;
    const struct tr_train *t = &r->t;
    char where[PATH_MAX + 128];
    if (r->rank != 0)
        return;
    mr_progress_end();
    if (r->ck_have)
        snprintf(where, sizeof where, "last checkpoint: %s at epoch %u, step %u (%llu steps done): "
                 "continue with --resume", a->checkpoint, r->ck_epoch + 1, r->ck_step,
                 (unsigned long long)r->ck_global);
    else if (a->checkpoint)
        snprintf(where, sizeof where, "no checkpoint written to %s yet", a->checkpoint);
    else
        snprintf(where, sizeof where, "no checkpoint (run without --checkpoint)");
    fprintf(stderr, "mnist_ring: interrupted by %s in epoch %u of %u after step %u of %u "
            "(%llu steps done); %s\n", mr_signal_name(mr_interrupted), t->epoch + 1, a->epochs,
            t->step, t->steps, (unsigned long long)t->global_step, where);
}

#define MR_INTERRUPTED (-1000)

/* The next event, or MR_INTERRUPTED: waits for the ring in slices, so a
 * signal is seen within a fraction of a second. */
static int next_event(struct mr_rank *r, struct tr_train_report *rep)
{
    int ev;
    for (;;) {
        if (mr_interrupted)
            return MR_INTERRUPTED;
        if (r->e)
            mr_elastic_service(r->e, &r->t);
        if ((ev = tr_train_poll(&r->t, rep)) != TR_ERR_AGAIN)
            return ev < 0 && mr_interrupted ? MR_INTERRUPTED : ev;
        if ((ev = tr_train_wait(&r->t, 250)) < 0)
            return mr_interrupted ? MR_INTERRUPTED : ev;
    }
}

static int run(struct mr_rank *r)
{
    struct tr_train_report rep;
    int ev;
    while ((ev = next_event(r, &rep)) > 0) {
        if (r->e)
            mr_elastic_event(r->e, &r->t, ev);
        switch (ev) {
        case TR_TRAIN_LOST:
        case TR_TRAIN_CHANGE:
            if (mr_elastic_reform(r->e, r->a, &r->t, &r->tp, save_latest, r) < 0)
                return TR_ERR_CLOSED;
            r->rank = r->t.cfg.rank;
            r->world = r->t.cfg.world;
            break;
        case TR_TRAIN_START:
            on_start(r, &rep);
            break;
        case TR_TRAIN_STEP:
            on_step(r, &rep);
            break;
        case TR_TRAIN_SYNC:   /* (--elastic --average-every: every average is one) */
            if (r->a->checkpoint && r->a->checkpoint_every &&
                r->t.global_step % r->a->checkpoint_every == 0 && save_ckpt(r) < 0)
                return TR_ERR_IO;
            break;
        case TR_TRAIN_EPOCH:
            if (on_epoch(r, &rep) < 0)
                return TR_ERR_IO;
            break;
        }
    }
    if (ev == MR_INTERRUPTED)
        report_interrupt(r);
    else if (ev < 0)
        report_fault(r, ev);
    return ev;
}

/* The model, the plot and the last line. */
static int finish(struct mr_rank *r)
{
    const struct mr_args *a = r->a;
    if (a->debug_param_hash && r->e)
        fprintf(stderr, "heartbeat-gap rank %d max %u ms\n", id_of(r),
                tr_posix_elastic_beat_gap(&r->e->el));
    if (a->debug_param_hash)
        fprintf(stderr, "final-hash rank %d params %016llx buffers %016llx\n", id_of(r),
                (unsigned long long)tr_train_hash(r->t.model.params, r->t.model.n_params),
                (unsigned long long)tr_train_hash(r->t.model.buffers, r->t.model.n_buffers));
    if (r->rank != 0)
        return 0;
    if (a->save_model && save_state(r, TR_STATE_MODEL, a->save_model, "--save-model") < 0)
        return TR_ERR_IO;
    if (a->plot && a->metrics && mr_plot(a->metrics, a->plot) < 0)
        return TR_ERR_IO;
    printf("done: %llu steps", (unsigned long long)r->t.global_step);
    if (r->last_acc >= 0)
        printf(", test accuracy %.4f", r->last_acc);
    if (a->save_model)
        printf(", model saved to %s", a->save_model);
    printf("\n");
    return 0;
}

/* tr_posix_close leaves gracefully: no neighbour loses the last bytes. */
static void teardown(struct mr_rank *r)
{
    if (r->have_px)
        tr_posix_close(&r->px);
    if (r->e) {
        tr_posix_elastic_close(&r->e->el);
        free(r->e);
    }
    free(r->arena);
    free(r->state);
}

int mr_train_rank(const struct mr_args *a, const struct mr_dataset *train,
                  const struct mr_dataset *test, const char *init_method,
                  const struct mr_peers *peers, int rank, int world, const char *job_token)
{
    struct mr_rank r;
    int rc;

    memset(&r, 0, sizeof r);
    r.a = a;
    r.train = train;
    r.test = test;
    r.last_acc = -1;
    if ((rc = join(&r, init_method, peers, rank, world, job_token)) == 0 &&
        (rc = setup(&r, job_token)) == 0) {
        mr_stop_in_order = 1;
        if ((rc = start(&r)) == 0 && (rc = run(&r)) == 0)
            rc = finish(&r);
    }
    fflush(stdout);
    teardown(&r);
    if (rc == MR_INTERRUPTED)
        return 128 + mr_interrupted;
    return rc < 0 ? 1 : 0;
}
