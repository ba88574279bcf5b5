/* tinyring: the trainer's elastic part (see tr_train.h): what a rank keeps
 * when a collective fails, and the resync that starts a new ring.
 *
 * Positions. A rank's state is that of its last completed collective that
 * changes state: a step's gradients (then SGD ran) or a BN average. A
 * collective completes on some ranks and not on others only when a rank
 * dies inside it after sending its part, so the survivors of a failure are
 * at most one such collective apart, and the furthest of them holds a state
 * every rank contributed to. The resync takes that state (the source's):
 *   - parameters, momentum and where training is, broadcast;
 *   - BN running statistics: broadcast when they are the same on every rank
 *     (an average or a broadcast since the last forward), else averaged over
 *     the ranks that hold them for the source's step (a rank one step behind
 *     kept that step's forward in its buffers: bn_alt), so the result does
 *     not depend on which rank happened to finish the step;
 *   - the rest of the epoch dealt out again over the new world from the
 *     first sample position no step has consumed.
 * A run where rank r dies after position p therefore ends with the same bits
 * as any other with that death, whichever survivors saw the last collective
 * complete. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_train_internal.h"

#include "tr_error.h"
#include "tr_util.h"

#define RE_START_BYTES 88u
#define RE_SYNC_DUE 1u
#define RE_BN_SAME  2u
#define RE_RES_SAME 4u

uint64_t tr_train_position(const struct tr_train *t)
{
    uint64_t p;
    if (!t || !t->holds_state)
        return 0;
    p = 2u * t->global_step + 1u + (t->sync_due ? 0u : 1u);
    if (t->cfg.grad_mode != TR_TRAIN_GRADS_BUCKET)
        return p;
    return p * 17u + (t->bk_partial ? t->bk_partial : 16u);
}

/* --elastic with periodic averaging: every rank's parameters, momentum and
 * BN buffers are its own between averages, so a resync could not give a
 * replay the same bits whichever rank it took them from; every survivor
 * goes back to the last average instead (the same state on every rank that
 * completed it; the furthest of them is the source), and the steps since
 * are dealt again over the new world. The residual starts again from
 * zeros (an average's encoding left each rank its own). */
static void snap_restore(struct tr_train *t)
{
    struct tr_model *m = &t->model;
    size_t i;
    tr_float_copy(m->params, t->anchor, m->n_params);
    if (t->snap_mom)
        tr_float_copy(m->momentum, t->snap_mom, m->n_params);
    tr_float_copy(m->buffers, t->snap_buf, m->n_buffers);
    if (t->residual) {
        for (i = 0; i < m->n_params; i++)
            t->residual[i] = 0.0f;
        t->res_same = 1;
    }
    t->global_step = t->snap.global_step;
    t->epoch = t->snap.epoch;
    t->step = t->snap.step;
    t->steps = t->snap.steps;
    t->deal_first = t->snap.deal_first;
    t->deal_world = t->snap.deal_world;
    t->deal_step = t->snap.deal_step;
    t->correct = t->snap.correct;
    t->seen = t->snap.seen;
    t->sgd.started = t->snap.sgd_started;
    t->sync_due = t->snap.sync_due;
    t->stepped = t->snap.stepped;
    t->loss_sum = t->snap.loss_sum;
    t->bn_same = 1;              /* taken after a BN average, or a resync's */
    t->bn_alt = 0;
    t->bk_partial = 0;
    t->change_held = 0;          /* the reform takes in whoever asked */
}

int tr_train_priv_lost(struct tr_train *t, int what, int code, int rank)
{
    struct tr_model *m = &t->model;
    if (tr_train_priv_avg_elastic(t)) {
        if (t->snap_valid && t->holds_state)
            snap_restore(t);
        tr_train_priv_fault(t, what, code, rank);
        t->phase = PH_LOST;
        return TR_TRAIN_LOST;
    }
    switch (t->phase) {
    case PH_BACKWARD:
    case PH_GRADS:
    case PH_FLAG:
        if (t->cfg.grad_mode == TR_TRAIN_GRADS_BUCKET && (t->bk_done > 0 || t->phase == PH_FLAG)) {
            /* in place, k buckets applied: the step counts as done (the
             * layers not yet updated skip it); its forward's buffers are
             * the step's own */
            unsigned k = t->phase == PH_FLAG ? 0u : t->bk_done;
            t->sgd.started = 1;
            tr_train_priv_step_count(t);
            t->bk_partial = k < m->n_buckets ? k : 0u;
            /* the residual of the buckets not applied (below bucket k-1's
             * start) back as it was before the step's encoding */
            if (t->res_copy && t->bk_partial)
                tr_float_copy(t->residual, t->res_copy, m->bucket[k - 1].lo);
            break;
        }
        t->bn_alt = 1;   /* SGD did not run: the buffers hold this step's forward */
        if (t->res_copy) {  /* and the residual the step's encoding rewrote */
            tr_float_copy(t->residual, t->res_copy, m->n_params);
            t->res_same = t->res_same_copy;
        }
        break;
    case PH_SYNC:
    case PH_EPOCH_BN:    /* an average cut half-way: this rank's own buffers back */
    case PH_SYNC_RES:    /* (the residual's average runs on res_copy) */
    case PH_EPOCH_RES:
        tr_float_copy(m->buffers, t->bn_copy, m->n_buffers);
        break;
    default:
        break;
    }
    tr_train_priv_fault(t, what, code, rank);
    t->phase = PH_LOST;
    return TR_TRAIN_LOST;
}

int tr_train_request_change(struct tr_train *t)
{
    if (!t || !t->cfg.elastic)
        return TR_ERR_INVAL;
    t->change_asked = 1;
    return 0;
}

int tr_train_priv_elastic_begin(struct tr_train *t)
{
    t->holds_state = t->cfg.rank == 0 && t->start_status == 0;
    t->bn_same = 1;
    t->bn_alt = 0;
    t->source = 0;
    t->phase = PH_RE_ARMED;
    return 0;
}

int tr_train_reform(struct tr_train *t, int rank, int world, const struct tr_transport *tp,
                    int source)
{
    if (!t || !t->cfg.elastic || world < 1 || world > TR_TRAIN_MAX_WORLD || rank < 0 ||
        rank >= world || source < 0 || source >= world || (world > 1 && !tp))
        return TR_ERR_INVAL;
    if (t->phase == PH_RE_ARMED)
        t->holds_state = 0;      /* a process that joins: after tr_train_begin */
    else if (t->phase != PH_LOST && t->phase != PH_CHANGED)
        return TR_ERR_INVAL;
    t->cfg.rank = rank;
    t->cfg.world = world;
    t->cfg.tp = world > 1 ? tp : 0;
    t->source = source;
    t->start_status = 0;
    t->phase = PH_RE_ARMED;
    return 0;
}

/* ---- the resync, phase by phase */

static int hello(struct tr_train *t)
{
    struct tr_comm_config cc;
    int rc;
    t->phase = PH_RE_HELLO;
    if (t->cfg.world == 1)
        return 0;
    tr_train_priv_comm_config(&t->cfg, &cc);
    cc.layout_hash = tr_train_priv_hello_hash(t);
    rc = tr_comm_init(&t->comm, &cc, t->cfg.tp, t->comm_scratch, t->comm_scratch_bytes);
    if (rc == 0)
        rc = tr_comm_hello_start(&t->comm);
    if (rc < 0 && rc != TR_ERR_AGAIN)
        return tr_train_priv_lost(t, TR_TRAIN_HELLO, rc, -1);
    return 0;
}

/* The source's record: the fixed ring's start record, then the deal, the
 * BN flags and the position. */
static void record_encode(struct tr_train *t)
{
    uint8_t *b = t->start_msg;
    uint32_t flags = (t->sync_due ? RE_SYNC_DUE : 0u) | (t->bn_same ? RE_BN_SAME : 0u) |
                     (t->res_same ? RE_RES_SAME : 0u);
    tr_train_priv_start_encode(t);      /* status .. SGD started, as a fixed ring's */
    tr_put_le64(b + 48, t->deal_first);
    tr_put_le64(b + 56, t->deal_world);
    tr_put_le64(b + 64, t->deal_step);
    tr_put_le64(b + 72, flags);
    tr_put_le64(b + 80, tr_train_position(t));
}

/* Which BN buffers this rank brings to the source's step (src_step), and
 * whether its parameters stay valid while the source's arrive. */
static void buffers_for(struct tr_train *t, uint64_t src_step)
{
    struct tr_model *m = &t->model;
    int same = t->holds_state && t->global_step == src_step;
    t->buf_holder = 0;
    if (same) {
        if (t->bn_alt)            /* our step's own buffers, not the next forward's */
            tr_float_copy(m->buffers, t->bn_copy, m->n_buffers);
        t->buf_holder = 1;
    } else if (t->holds_state && t->bn_alt && t->global_step + 1u == src_step) {
        t->buf_holder = 1;        /* we ran that step's forward: its buffers */
    }
    t->bn_alt = 0;
    if (!same)
        t->holds_state = 0;       /* the broadcast overwrites a state of another step */
}

/* Deal what the epoch has not consumed out over the new world. */
static void redeal(struct tr_train *t)
{
    uint32_t n = t->cfg.n_train;
    uint32_t shard = tr_sampler_shard(n, t->deal_first, t->deal_world);
    uint64_t k = (uint64_t)(t->step - t->deal_step) * t->cfg.batch;
    uint64_t first = t->deal_first + (k < shard ? k : shard) * t->deal_world;
    t->deal_first = first > n ? n : (uint32_t)first;
    t->deal_world = (uint32_t)t->cfg.world;
    t->deal_step = t->step;
    t->steps = tr_train_priv_steps(t);
}

/* Every rank: take the record; 0 to go on, or the failure. */
static int record_decode(struct tr_train *t)
{
    const uint8_t *b = t->start_msg;
    int status = (int)(int64_t)tr_get_le64(b), me = t->cfg.rank == t->source;
    uint32_t epoch = (uint32_t)tr_get_le64(b + 16), flags = (uint32_t)tr_get_le64(b + 72);
    if (status < 0)
        return tr_train_priv_fail(t, me ? t->fault.what : TR_TRAIN_REFUSED, status, t->source);
    if (tr_get_le64(b + 8) != t->config_hash)
        return tr_train_priv_fail(t, TR_TRAIN_CONFIG, TR_ERR_MISMATCH, t->source);
    if (tr_get_le64(b + 80) == 0)      /* the source holds no state: nobody does */
        return tr_train_priv_fail(t, TR_TRAIN_START_BCAST, TR_ERR_INVAL, t->source);
    buffers_for(t, tr_get_le64(b + 32));
    if (epoch != t->epoch)
        tr_train_priv_epoch_reset(t);
    t->epoch = epoch;
    t->step = (uint32_t)tr_get_le64(b + 24);
    t->global_step = tr_get_le64(b + 32);
    t->sgd.started = (int)tr_get_le64(b + 40);
    t->deal_first = (uint32_t)tr_get_le64(b + 48);
    t->deal_world = (uint32_t)tr_get_le64(b + 56);
    t->deal_step = (uint32_t)tr_get_le64(b + 64);
    t->sync_due = (flags & RE_SYNC_DUE) != 0;
    t->bn_same = (flags & RE_BN_SAME) != 0;
    t->res_same = (flags & RE_RES_SAME) != 0;
    t->bk_partial = 0;                 /* the source's state, whole */
    redeal(t);
    return 0;
}

/* The BN buffers: the source's when every rank has the same, else the
 * holders' average (in the gradient block, which is free here; a cut
 * transfer leaves the buffers as they were). */
static int buffers_start(struct tr_train *t)
{
    struct tr_model *m = &t->model;
    size_t i, nb = m->n_buffers;
    if (t->bn_same) {
        if (t->cfg.rank == t->source)
            tr_float_copy(m->grads, m->buffers, nb);
        return tr_train_priv_bcast(t, PH_RE_BUFFERS, TR_TRAIN_BUFFER_BCAST, m->grads,
                                  nb * sizeof(float), t->source);
    }
    for (i = 0; i < nb; i++)
        m->grads[i] = t->buf_holder ? m->buffers[i] : 0.0f;
    m->grads[nb] = t->buf_holder ? 1.0f : 0.0f;
    return tr_train_priv_reduce(t, PH_RE_BUFAVG, TR_TRAIN_BN_SYNC, m->grads, nb + 1, TR_OP_SUM);
}

/* The source's residual is its own (each rank's encoding since the last
 * sync point left its own error; the sync point's average makes them one):
 * which survivor holds the source's position, and so whose residual it
 * would be, is chance, and a replay of the same death must end with the
 * same bits. Every rank starts the new ring with none instead, as a fresh
 * start does; what the codecs owed the steps since the sync point is
 * dropped (the dead rank's is lost in any case). */
static void residual_zero(struct tr_train *t)
{
    size_t i;
    for (i = 0; i < t->model.n_params; i++)
        t->residual[i] = 0.0f;
    t->res_same = 1;
}

/* Every rank holds the source's state: where to go on from. */
static int resync_done(struct tr_train *t, struct tr_train_report *rep)
{
    struct tr_model *m = &t->model;
    const struct tr_train_config *c = &t->cfg;
    int stop = c->max_steps && t->global_step >= c->max_steps, end = t->step >= t->steps || stop;
    size_t i, nb = m->n_buffers;
    if (t->phase == PH_RE_BUFAVG)
        for (i = 0; i < nb; i++)
            m->buffers[i] = m->grads[i] / m->grads[nb];
    else
        tr_float_copy(m->buffers, m->grads, nb);
    t->holds_state = 1;
    t->bn_same = 1;
    tr_train_priv_snap_take(t);   /* (periodic averaging) every rank's state now */
    if (t->sync_due)
        t->phase = end ? PH_EPOCH_GO : PH_SYNC_GO;
    else
        t->phase = end && t->step > 0 ? PH_EVAL : PH_STEP;
    return tr_train_priv_report(t, rep, TR_TRAIN_START);
}

int tr_train_priv_elastic(struct tr_train *t, struct tr_train_report *rep)
{
    struct tr_model *m = &t->model;
    size_t np = m->n_params * sizeof(float);
    int rc;

    switch (t->phase) {
    case PH_CHANGE:
        t->phase = PH_CHANGED;
        return tr_train_priv_report(t, rep, TR_TRAIN_CHANGE);
    case PH_CHANGED:
        t->phase = t->change_next;
        return 0;
    case PH_LOST:
        return tr_train_priv_report(t, rep, TR_TRAIN_LOST);
    case PH_RE_ARMED:
        return hello(t);
    case PH_RE_HELLO:
        if (t->cfg.rank == t->source)
            record_encode(t);
        return tr_train_priv_bcast(t, PH_RE_START, TR_TRAIN_START_BCAST, t->start_msg,
                                  RE_START_BYTES, t->source);
    case PH_RE_START:
        if ((rc = record_decode(t)) < 0)
            return rc;
        return tr_train_priv_bcast(t, PH_RE_PARAMS, TR_TRAIN_PARAM_BCAST, m->params, np,
                                  t->source);
    case PH_RE_PARAMS:
        if (m->momentum)     /* none at momentum 0 (every rank: the hash) */
            return tr_train_priv_bcast(t, PH_RE_MOMENTUM, TR_TRAIN_MOMENTUM_BCAST, m->momentum,
                                      np, t->source);
        /* fall through */
    case PH_RE_MOMENTUM:
        if (t->residual && t->res_same)
            return tr_train_priv_bcast(t, PH_RE_RESIDUAL, TR_TRAIN_MOMENTUM_BCAST, t->residual,
                                      np, t->source);
        if (t->residual)     /* each rank's own: see residual_zero */
            residual_zero(t);
        return buffers_start(t);
    case PH_RE_RESIDUAL:
        return buffers_start(t);
    case PH_RE_BUFFERS:
    case PH_RE_BUFAVG:
        return resync_done(t, rep);
    default:
        return tr_train_priv_fail(t, TR_TRAIN_NONE, TR_ERR_INVAL, -1);
    }
}
