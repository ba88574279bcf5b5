/* mnist_ring: the data-parallel training loop of one rank (see train.h).
 *
 * Per step: gather this rank's batch (uint8 -> float, pixel/255 as
 * ToTensor), forward in training mode, loss, backward, allreduce-average the
 * flat gradient block, SGD step on the flat blocks. Nothing is allocated
 * inside the loop. Every rank ends every step with bit-identical parameters:
 * the same starting bits (broadcast from rank 0), the same averaged
 * gradient bits (the collectives copy one rank's result), the same SGD.
 */
#define _GNU_SOURCE
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt.h"
#include "report.h"
#include "sampler.h"
#include "tinyring.h"
#include "tr_posix.h"
#include "tr_util.h"

/* What rank 0 broadcasts before the model: how to start. */
struct mr_start {
    int64_t  status;          /* 0, or a tr_err: rank 0 could not start, all stop */
    uint64_t config_hash;     /* rank 0's; every rank must have the same */
    uint64_t epoch, step;     /* where to continue */
    uint64_t global_step;
    uint64_t sgd_started;
};

struct mr_rank {
    const struct mr_args *a;
    int rank, world;
    struct tr_posix px;
    struct tr_transport tp;
    int have_px;
    struct tr_comm comm;
    void *comm_scratch;
    struct tr_model m;
    void *arena;
    struct tr_sgd sgd;
    struct mr_sampler smp;
    float *x;                 /* (batch, 1, 28, 28) input of one step */
    uint8_t *y;               /* (batch) labels of one step */
    float lut[256];           /* pixel -> pixel / 255.0f */
    uint64_t config_hash;
};

/* What a checkpoint must agree on to resume bit for bit. --checkpoint-every
 * is in it because BN statistics are averaged at every checkpoint. */
static uint64_t config_hash(const struct mr_rank *r, const struct mr_dataset *train)
{
    const struct mr_args *a = r->a;
    uint64_t h = TR_FNV64_INIT;
    uint32_t lh = tr_model_layout_hash(&r->m);
    uint64_t v[6] = { (uint64_t)r->world, a->batch, a->seed, (uint64_t)a->algo,
                      train->n, a->checkpoint_every };
    h = tr_fnv1a64(h, v, sizeof v);
    h = tr_fnv1a64(h, &a->lr, sizeof a->lr);
    h = tr_fnv1a64(h, &a->momentum, sizeof a->momentum);
    h = tr_fnv1a64(h, &lh, sizeof lh);
    return h;
}

static void comm_error(const struct mr_rank *r, const char *what, int rc)
{
    const struct tr_comm_fault *f = tr_comm_last_fault(&r->comm);
    fprintf(stderr, "mnist_ring: rank %d: %s failed: %s", r->rank, what, tr_strerror(rc));
    if (f && f->code)
        fprintf(stderr, " (in %s, peer rank %d)", tr_comm_phase_name(f->phase), f->peer_rank);
    fprintf(stderr, "; stopping\n");
}

/* Collectives; a single rank has nothing to exchange. */
static int allreduce(struct mr_rank *r, float *buf, size_t n, enum tr_op op, const char *what)
{
    int rc;
    if (r->world == 1)
        return 0;
    rc = tr_allreduce(&r->comm, buf, n, op, (enum tr_algo)r->a->algo);
    if (rc < 0)
        comm_error(r, what, rc);
    return rc;
}

static int broadcast(struct mr_rank *r, void *buf, size_t bytes, const char *what)
{
    int rc;
    if (r->world == 1)
        return 0;
    rc = tr_broadcast(&r->comm, buf, bytes, 0);
    if (rc < 0)
        comm_error(r, what, rc);
    return rc;
}

static void gather(struct mr_rank *r, const struct mr_dataset *ds, const uint32_t *idx,
                   unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const uint8_t *px = ds->images + (size_t)idx[i] * MR_IMG_PIXELS;
        float *x = r->x + (size_t)i * MR_IMG_PIXELS;
        for (unsigned p = 0; p < MR_IMG_PIXELS; p++)
            x[p] = r->lut[px[p]];
        r->y[i] = ds->labels[idx[i]];
    }
}

/* Each rank evaluates its slice of the test set; sums are combined.
 * out: [loss sum, correct, count] over the whole test set. */
static int evaluate(struct mr_rank *r, const struct mr_dataset *test, float out[3])
{
    uint32_t lo = (uint32_t)((uint64_t)test->n * (unsigned)r->rank / (unsigned)r->world);
    uint32_t hi = (uint32_t)((uint64_t)test->n * (unsigned)(r->rank + 1) / (unsigned)r->world);
    double loss_sum = 0;
    unsigned long correct = 0;
    uint32_t idx[4096];
    for (uint32_t s = lo; s < hi; s += r->a->batch) {
        unsigned n = hi - s < r->a->batch ? hi - s : r->a->batch, c = 0;
        float loss = 0;
        for (unsigned i = 0; i < n; i++)
            idx[i] = s + i;
        gather(r, test, idx, n);
        tr_model_forward(&r->m, r->x, n, 0);
        tr_model_loss(&r->m, r->y, &loss, &c);
        loss_sum += (double)loss * n;
        correct += c;
    }
    out[0] = (float)loss_sum;
    out[1] = (float)correct;
    out[2] = (float)(hi - lo);
    return allreduce(r, out, 3, TR_OP_SUM, "test-set evaluation");
}

/* The header and the arrays a checkpoint and a saved model share. */
static void ckpt_fill(struct mr_ckpt *c, const struct mr_rank *r, const struct mr_dataset *train,
                      uint32_t epoch, uint64_t global_step)
{
    memset(c, 0, sizeof *c);
    c->config_hash = r->config_hash;
    c->layout_hash = tr_model_layout_hash(&r->m);
    c->world = (uint32_t)r->world;
    c->batch = r->a->batch;
    c->epoch = epoch;
    c->sgd_started = (uint32_t)r->sgd.started;
    c->global_step = global_step;
    c->seed = r->a->seed;
    c->n_params = r->m.n_params;
    c->n_buffers = r->m.n_buffers;
    c->n_train = train->n;
    c->params = r->m.params;
    c->buffers = r->m.buffers;
}

static int save_ckpt(struct mr_rank *r, const struct mr_dataset *train, uint32_t epoch,
                     uint32_t step, uint64_t global_step)
{
    struct mr_ckpt c;
    char err[1024];
    int rc;
    if (r->rank != 0)
        return 0;
    ckpt_fill(&c, r, train, epoch, global_step);
    c.step = step;
    c.flags = MR_CKPT_HAS_MOMENTUM;
    c.momentum = r->m.momentum;
    rc = mr_ckpt_write(r->a->checkpoint, &c, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "mnist_ring: checkpoint: %s\n", err);
    return rc;
}

static int save_model(struct mr_rank *r, const struct mr_dataset *train, uint32_t epochs_done,
                      uint64_t global_step)
{
    struct mr_ckpt c;
    char err[1024];
    int rc;
    ckpt_fill(&c, r, train, epochs_done, global_step);
    c.is_model = 1;
    rc = mr_ckpt_write(r->a->save_model, &c, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "mnist_ring: --save-model: %s\n", err);
    return rc;
}

/* Rank 0: fresh parameters from --seed, or the checkpoint. */
static void start_state(struct mr_rank *r, const struct mr_dataset *train, struct mr_start *st)
{
    const struct mr_args *a = r->a;
    memset(st, 0, sizeof *st);
    st->config_hash = r->config_hash;
    if (a->resume && access(a->checkpoint, F_OK) == 0) {
        struct mr_ckpt c;
        char err[1024];
        int rc;
        memset(&c, 0, sizeof c);
        c.n_params = r->m.n_params;
        c.n_buffers = r->m.n_buffers;
        c.params = r->m.params;
        c.momentum = r->m.momentum;
        c.buffers = r->m.buffers;
        rc = mr_ckpt_read(a->checkpoint, &c, err, sizeof err);
        if (rc < 0) {
            fprintf(stderr, "mnist_ring: --resume: %s\n", err);
            st->status = rc;
            return;
        }
        if (c.config_hash != r->config_hash) {
            fprintf(stderr, "mnist_ring: --resume: %s was written by a different configuration "
                    "(it had world %u, batch %u, seed %llu; resuming needs the same world size, "
                    "batch, lr, momentum, seed, --allreduce, --checkpoint-every and data set)\n",
                    a->checkpoint, (unsigned)c.world, (unsigned)c.batch,
                    (unsigned long long)c.seed);
            st->status = TR_ERR_MISMATCH;
            return;
        }
        (void)train;
        st->epoch = c.epoch;
        st->step = c.step;
        st->global_step = c.global_step;
        st->sgd_started = c.sgd_started;
        printf("resuming from %s: epoch %u, step %u (%llu steps done)\n", a->checkpoint,
               (unsigned)c.epoch + 1, (unsigned)c.step, (unsigned long long)c.global_step);
    } else {
        if (a->resume)
            printf("no checkpoint at %s yet: starting from scratch\n", a->checkpoint);
        tr_model_init_params(&r->m, a->seed);
    }
}

static int setup(struct mr_rank *r, const struct mr_dataset *train, const char *init_method,
                 int rank, int world, const char *job_token)
{
    const struct mr_args *a = r->a;
    struct tr_model_desc d;
    struct tr_comm_config cc;
    size_t bytes;
    char err[512];
    int rc;

    r->rank = rank < 0 ? 0 : rank;
    r->world = world < 1 ? 1 : world;
    if (init_method) {
        struct tr_posix_config pc;
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
            fprintf(stderr, "mnist_ring: rank %d: cannot join the job (%s): %s\n",
                    r->px.rank, init_method, err);
            return rc;
        }
        r->have_px = 1;
        r->rank = r->px.rank;
        r->world = r->px.world;
        tr_posix_transport(&r->px, &r->tp);
    }

    tr_model_desc_convnet(&d, 16, 32, 10);
    rc = tr_model_arena_size(&d, a->batch, &bytes);
    if (rc < 0) {
        fprintf(stderr, "mnist_ring: model: %s\n", tr_strerror(rc));
        return rc;
    }
    bytes = (bytes + TR_ARENA_ALIGN - 1) / TR_ARENA_ALIGN * TR_ARENA_ALIGN;
    r->arena = aligned_alloc(TR_ARENA_ALIGN, bytes);
    r->x = aligned_alloc(64, ((size_t)a->batch * MR_IMG_PIXELS * sizeof(float) + 63) / 64 * 64);
    r->y = malloc(a->batch);
    if (!r->arena || !r->x || !r->y) {
        fprintf(stderr, "mnist_ring: out of memory\n");
        return TR_ERR_NOMEM;
    }
    rc = tr_model_init(&r->m, &d, a->batch, r->arena, bytes);
    if (rc < 0) {
        fprintf(stderr, "mnist_ring: model init: %s\n", tr_strerror(rc));
        return rc;
    }
    for (int i = 0; i < 256; i++)
        r->lut[i] = (float)i / 255.0f;
    tr_sgd_init(&r->sgd);
    r->sgd.lr = a->lr;
    r->sgd.momentum = a->momentum;

    memset(&cc, 0, sizeof cc);
    cc.rank = r->rank;
    cc.world = r->world;
    cc.timeout_ms = a->timeout_s * 1000u;
    cc.job_token = tr_posix_token(job_token);
    /* the hello compares the whole run configuration, not only the model:
     * a rank started with another lr, batch, seed, algorithm or data set is
     * refused by every rank before any training starts */
    r->config_hash = config_hash(r, train);
    cc.layout_hash = (uint32_t)(r->config_hash ^ (r->config_hash >> 32));
    bytes = tr_comm_scratch_size(&cc);
    r->comm_scratch = aligned_alloc(16, (bytes + 15) / 16 * 16 + 16);
    if (!r->comm_scratch) {
        fprintf(stderr, "mnist_ring: out of memory\n");
        return TR_ERR_NOMEM;
    }
    rc = tr_comm_init(&r->comm, &cc, r->world > 1 ? &r->tp : NULL, r->comm_scratch, bytes);
    if (rc < 0) {
        fprintf(stderr, "mnist_ring: rank %d: comm init: %s\n", r->rank, tr_strerror(rc));
        return rc;
    }
    if (r->world > 1) {
        rc = tr_comm_hello(&r->comm);
        if (rc == TR_ERR_MISMATCH)
            fprintf(stderr, "mnist_ring: rank %d: the ranks' configurations differ (batch, lr, "
                    "momentum, seed, --allreduce, --checkpoint-every, data set or model); "
                    "start every rank with the same flags and data\n", r->rank);
        if (rc < 0) {
            comm_error(r, "hello with the neighbours", rc);
            return rc;
        }
    }
    return 0;
}

/* tr_posix_close leaves gracefully: no neighbour loses the last bytes. */
static void teardown(struct mr_rank *r)
{
    if (r->have_px)
        tr_posix_close(&r->px);
    mr_sampler_free(&r->smp);
    free(r->arena);
    free(r->x);
    free(r->y);
    free(r->comm_scratch);
}

static void print_hash(const struct mr_rank *r, uint64_t step)
{
    uint64_t h = tr_fnv1a64(TR_FNV64_INIT, r->m.params, r->m.n_params * sizeof(float));
    fprintf(stderr, "param-hash rank %d step %llu %016llx\n", r->rank,
            (unsigned long long)step, (unsigned long long)h);
}

/* Average BN running statistics so every rank holds the identical model. */
static int sync_buffers(struct mr_rank *r)
{
    return allreduce(r, r->m.buffers, r->m.n_buffers, TR_OP_AVG, "BN statistics average");
}

int mr_train_rank(const struct mr_args *a, const struct mr_dataset *train,
                  const struct mr_dataset *test, const char *init_method,
                  int rank, int world, const char *job_token)
{
    struct mr_rank r;
    struct mr_start st;
    uint64_t gstep;
    unsigned epoch, k0;
    int rc, stopped = 0, lead;
    double last_acc = -1;

    memset(&r, 0, sizeof r);
    r.a = a;
    rc = setup(&r, train, init_method, rank, world, job_token);
    if (rc < 0)
        goto out;
    lead = r.rank == 0;

    /* one starting point for everyone: rank 0's */
    if (lead)
        start_state(&r, train, &st);
    if ((rc = broadcast(&r, &st, sizeof st, "start broadcast")) < 0)
        goto out;
    if (st.status != 0) {
        if (!lead)
            fprintf(stderr, "mnist_ring: rank %d: rank 0 could not start; stopping\n", r.rank);
        rc = (int)st.status;
        goto out;
    }
    if (st.config_hash != r.config_hash) {
        fprintf(stderr, "mnist_ring: rank %d: my configuration (batch, lr, momentum, seed, "
                "--allreduce, data set) differs from rank 0's; stopping\n", r.rank);
        rc = TR_ERR_MISMATCH;
        goto out;
    }
    if ((rc = broadcast(&r, r.m.params, r.m.n_params * sizeof(float), "parameter broadcast")) < 0 ||
        (rc = broadcast(&r, r.m.momentum, r.m.n_params * sizeof(float), "momentum broadcast")) < 0 ||
        (rc = broadcast(&r, r.m.buffers, r.m.n_buffers * sizeof(float), "BN statistics broadcast")) < 0)
        goto out;
    r.sgd.started = (int)st.sgd_started;
    gstep = st.global_step;

    rc = mr_sampler_init(&r.smp, train->n, (uint32_t)r.world, (uint32_t)r.rank, a->batch, a->seed);
    if (rc < 0) {
        fprintf(stderr, "mnist_ring: sampler: %s\n", tr_strerror(rc));
        goto out;
    }
    if (lead && st.epoch == 0 && st.step == 0)
        printf("training %u epoch%s on %d rank%s: %u train / %u test samples, batch %u per rank, "
               "%u steps per epoch, lr %g, momentum %g, allreduce %s\n",
               a->epochs, a->epochs == 1 ? "" : "s", r.world, r.world == 1 ? "" : "s",
               (unsigned)train->n, (unsigned)test->n, a->batch, (unsigned)r.smp.steps,
               (double)a->lr, (double)a->momentum, mr_algo_name(a->algo));

    if (lead && a->metrics && !(a->resume && gstep > 0)) {
        FILE *f = fopen(a->metrics, "w");  /* a fresh run starts a fresh file */
        if (f)
            fclose(f);
    }
    k0 = (unsigned)st.step;
    for (epoch = (unsigned)st.epoch; epoch < a->epochs && !stopped; epoch++, k0 = 0) {
        struct mr_epoch_stats es;
        double t_start = mr_now(), t_comm = 0, t_last = t_start, loss_sum = 0;
        unsigned long correct = 0, seen = 0;
        float sums[6];
        unsigned k, qmark = 1;

        if (a->max_steps && gstep >= a->max_steps) {
            stopped = 1;
            break;
        }
        mr_sampler_set_epoch(&r.smp, epoch);
        for (k = k0; k < r.smp.steps; k++) {
            unsigned n = mr_sampler_count(&r.smp, k), c = 0;
            float loss = 0;
            double t0;
            if (a->max_steps && gstep >= a->max_steps) {
                stopped = 1;
                break;
            }
            gather(&r, train, r.smp.idx + (size_t)k * a->batch, n);
            tr_model_forward(&r.m, r.x, n, 1);
            tr_model_loss(&r.m, r.y, &loss, &c);
            tr_model_backward(&r.m);
            t0 = mr_now();
            if ((rc = allreduce(&r, r.m.grads, r.m.n_params, TR_OP_AVG, "gradient allreduce")) < 0) {
                fprintf(stderr, "mnist_ring: rank %d: (at epoch %u, step %u)\n", r.rank,
                        epoch + 1, k + 1);
                goto out;
            }
            t_comm += mr_now() - t0;
            tr_sgd_step(&r.sgd, r.m.params, r.m.grads, r.m.momentum, r.m.n_params);
            gstep++;
            loss_sum += (double)loss * n;
            correct += c;
            seen += n;
            if (a->debug_param_hash)
                print_hash(&r, gstep);
            if (lead && !a->quiet) {
                double now = mr_now();
                int tty = isatty(STDOUT_FILENO);
                int due = tty ? now - t_last >= 0.5
                              : (k + 1) * 4 >= qmark * r.smp.steps && qmark < 4;
                if (due && k + 1 < r.smp.steps) {
                    double el = now - t_start;
                    unsigned done = k + 1 - k0;
                    /* ETA of the whole run, at this epoch's pace */
                    uint64_t left = (uint64_t)(r.smp.steps - k - 1) +
                                    (uint64_t)(a->epochs - epoch - 1) * r.smp.steps;
                    if (a->max_steps && left > a->max_steps - gstep)
                        left = a->max_steps - gstep;
                    mr_progress(epoch + 1, a->epochs, k + 1, r.smp.steps, loss_sum / seen,
                                (double)seen * r.world / el, el / done * (double)left);
                    t_last = now;
                    if (!tty)
                        while (qmark < 4 && (k + 1) * 4 >= qmark * r.smp.steps)
                            qmark++;
                }
            }
            if (a->checkpoint_every && gstep % a->checkpoint_every == 0 && k + 1 < r.smp.steps) {
                if ((rc = sync_buffers(&r)) < 0)
                    goto out;
                if ((rc = save_ckpt(&r, train, epoch, k + 1, gstep)) < 0)
                    goto out;
            }
        }
        /* end of the epoch (or of --max-steps): one identical model, evaluated */
        memset(&es, 0, sizeof es);
        es.seconds = mr_now() - t_start;
        if ((rc = sync_buffers(&r)) < 0)
            goto out;
        if ((rc = evaluate(&r, test, sums)) < 0)
            goto out;
        sums[3] = (float)loss_sum;
        sums[4] = (float)correct;
        sums[5] = (float)seen;
        if ((rc = allreduce(&r, sums + 3, 3, TR_OP_SUM, "training statistics")) < 0)
            goto out;
        es.epoch = epoch + 1;
        es.global_step = gstep;
        es.test_loss = sums[2] > 0 ? sums[0] / sums[2] : 0;
        es.test_acc = sums[2] > 0 ? sums[1] / sums[2] : 0;
        es.train_loss = sums[5] > 0 ? sums[3] / sums[5] : 0;
        es.train_acc = sums[5] > 0 ? sums[4] / sums[5] : 0;
        last_acc = es.test_acc;
        es.samples_per_s = es.seconds > 0 ? sums[5] / es.seconds : 0;
        es.comm_share = es.seconds > 0 ? t_comm / es.seconds : 0;
        if (lead) {
            if (stopped)
                printf("stopped after %llu steps (--max-steps), in epoch %u at step %u/%u\n",
                       (unsigned long long)gstep, epoch + 1, k, (unsigned)r.smp.steps);
            mr_print_epoch(&es, a->epochs);
            if (a->metrics && mr_metrics_append(a->metrics, &es) < 0) {
                rc = TR_ERR_IO;
                goto out;
            }
        }
        if (!stopped && a->checkpoint && (rc = save_ckpt(&r, train, epoch + 1, 0, gstep)) < 0)
            goto out;
    }
    if (a->debug_param_hash) {
        uint64_t hp = tr_fnv1a64(TR_FNV64_INIT, r.m.params, r.m.n_params * sizeof(float));
        uint64_t hb = tr_fnv1a64(TR_FNV64_INIT, r.m.buffers, r.m.n_buffers * sizeof(float));
        fprintf(stderr, "final-hash rank %d params %016llx buffers %016llx\n", r.rank,
                (unsigned long long)hp, (unsigned long long)hb);
    }
    if (lead && a->save_model && (rc = save_model(&r, train, epoch, gstep)) < 0)
        goto out;
    if (lead && a->plot && a->metrics && mr_plot(a->metrics, a->plot) < 0) {
        rc = TR_ERR_IO;
        goto out;
    }
    if (lead) {
        printf("done: %llu steps", (unsigned long long)gstep);
        if (last_acc >= 0)
            printf(", test accuracy %.4f", last_acc);
        if (a->save_model)
            printf(", model saved to %s", a->save_model);
        printf("\n");
    }
    rc = 0;
out:
    fflush(stdout);
    teardown(&r);
    return rc < 0 ? 1 : 0;
}
