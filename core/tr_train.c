/* tinyring: the data-parallel trainer (see tr_train.h).
 *
 * tr_train_poll is a state machine over phases. A phase either computes
 * (a step, an evaluation) or waits for one collective; every transition
 * happens at a collective's end, so the non-blocking form needs nothing
 * beyond tr_comm_progress and the blocking form only adds the transport's
 * poll between calls. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_codec.h"
#include "tr_train_internal.h"

#include "tr_arena.h"
#include "tr_error.h"
#include "tr_util.h"


/* ---- bytes: little-endian fields (tr_util.h), float bits, FNV-1a 64, CRC-32 */

static uint64_t fnv64_u64(uint64_t h, uint64_t v)
{
    uint8_t b[8];
    tr_put_le64(b, v);
    return tr_fnv1a64(h, b, 8);
}

static uint64_t fnv64_u32(uint64_t h, uint32_t v)
{
    uint8_t b[4];
    tr_put_le32(b, v);
    return tr_fnv1a64(h, b, 4);
}

uint64_t tr_train_hash(const float *v, size_t n)
{
    uint64_t h = TR_FNV64_INIT;
    size_t i;
    for (i = 0; i < n; i++)
        h = fnv64_u32(h, tr_float_bits(v[i]));
    return h;
}

/* CRC-32 of zlib and gzip (reflected 0xEDB88320), four bits at a time. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
    static const uint32_t tab[16] = {
        0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu, 0x76dc4190u, 0x6b6b51f4u,
        0x4db26158u, 0x5005713cu, 0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu,
        0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu
    };
    size_t i;
    crc = ~crc;
    for (i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ tab[crc & 15u];
        crc = (crc >> 4) ^ tab[crc & 15u];
    }
    return ~crc;
}

/* ---- configuration and layout */

static size_t sample_bytes_of(const struct tr_model_desc *d)
{
    return (size_t)d->in_c * d->in_h * d->in_w;
}

static int config_check(const struct tr_train_config *c)
{
    if (!c || c->batch < 1 || c->n_train < 1 || c->epochs < 1 || !c->load ||
        c->world < 1 || c->rank < 0 || c->rank >= c->world ||
        (c->world > 1 && !c->tp) || sample_bytes_of(&c->model) == 0 ||
        c->algo < TR_ALGO_RING || c->algo > TR_ALGO_REDUCE_BCAST ||
        (c->grad_mode != TR_TRAIN_GRADS_FULL && c->grad_mode != TR_TRAIN_GRADS_BUCKET) ||
        !tr_codec_valid(c->compress) ||
        (c->compress != TR_CODEC_NONE && c->algo != TR_ALGO_RING) ||
        /* the compressed average's change travels in the full gradient */
        (c->average_every >= 2 && c->compress != TR_CODEC_NONE &&
         c->grad_mode != TR_TRAIN_GRADS_FULL))
        return TR_ERR_INVAL;
    return 0;
}

void tr_train_priv_comm_config(const struct tr_train_config *c, struct tr_comm_config *cc)
{
    cc->rank = c->rank;
    cc->world = c->world;
    cc->timeout_ms = c->timeout_ms;
    cc->segment_bytes = c->segment_bytes;
    cc->job_token = c->job_token;
    cc->layout_hash = 0;   /* set from the configuration hash at init */
}

/* The model's options: the gradient mode, no momentum twin without
 * momentum, one recomputed plane if asked. */
static unsigned model_opts(const struct tr_train_config *c)
{
    return (c->grad_mode == TR_TRAIN_GRADS_BUCKET ? TR_MODEL_GRAD_BUCKET : 0u) |
           (c->momentum == 0.0f ? TR_MODEL_NO_MOMENTUM : 0u) |
           (c->one_plane ? TR_MODEL_ONE_PLANE : 0u);
}

/* Carve every piece from a (measure mode when a->base is NULL: then t may
 * be NULL and nothing is written). The model lays itself out in its piece. */
static int layout(struct tr_train *t, const struct tr_train_config *c, struct tr_arena *a)
{
    struct tr_comm_config cc;
    size_t model_bytes, scratch_bytes, n_params, n_buffers, sb = sample_bytes_of(&c->model);
    size_t wire_bytes = 0;
    int lossy = tr_codec_lossy(c->compress);
    void *model_mem, *scratch, *wire;
    float *residual, *res_copy, *anchor, *snap_mom, *snap_buf;
    int avg_el = c->elastic && c->average_every >= 2;
    uint32_t *idx;
    uint8_t *labels;
    float *x, *bn_copy;
    int rc;

    if ((rc = tr_model_arena_size_opt(&c->model, c->batch, model_opts(c), &model_bytes)) < 0 ||
        (rc = tr_model_counts(&c->model, &n_params, &n_buffers)) < 0)
        return rc;
    if (lossy) {
        /* the encoded image for this world, or for any world a reform makes */
        int w, top = c->elastic ? TR_TRAIN_MAX_WORLD : c->world;
        for (w = 1; w <= top; w++) {
            size_t b = tr_allreduce_codec_wire_size(c->compress, n_params, w);
            wire_bytes = b > wire_bytes ? b : wire_bytes;
        }
    }
    tr_train_priv_comm_config(c, &cc);
    if (c->elastic)
        cc.world = TR_TRAIN_MAX_WORLD;   /* scratch for any world a reform makes */
    scratch_bytes = tr_comm_scratch_size(&cc);
    model_mem = tr_arena_alloc(a, model_bytes);
    scratch = tr_arena_alloc(a, scratch_bytes);
    idx = (uint32_t *)tr_arena_alloc(a, (size_t)c->batch * sizeof(uint32_t));
    labels = (uint8_t *)tr_arena_alloc(a, c->batch);
    x = tr_arena_floats(a, (size_t)c->batch * sb);
    bn_copy = c->elastic ? tr_arena_floats(a, n_buffers) : 0;
    residual = lossy ? tr_arena_floats(a, n_params) : 0;
    res_copy = lossy && c->elastic ? tr_arena_floats(a, n_params) : 0;
    wire = lossy ? tr_arena_alloc(a, wire_bytes) : 0;
    anchor = (lossy || avg_el) && c->average_every >= 2 ? tr_arena_floats(a, n_params) : 0;
    snap_mom = avg_el && c->momentum != 0.0f ? tr_arena_floats(a, n_params) : 0;
    snap_buf = avg_el ? tr_arena_floats(a, n_buffers > 0 ? n_buffers : 1u) : 0;
    if (a->err)
        return a->err;
    if (!a->base)
        return 0;
    if ((rc = tr_model_init_opt(&t->model, &c->model, c->batch, model_opts(c), model_mem,
                                model_bytes)) < 0)
        return rc;
    t->idx = idx;
    t->labels = labels;
    t->x = x;
    t->bn_copy = bn_copy;
    t->residual = residual;
    t->res_copy = res_copy;
    t->wire = wire;
    t->anchor = anchor;
    t->snap_mom = snap_mom;
    t->snap_buf = snap_buf;
    t->wire_bytes = wire_bytes;
    if (residual) {
        size_t i;
        for (i = 0; i < n_params; i++)
            residual[i] = 0.0f;
    }
    t->arena_used = a->used;
    t->comm_scratch = scratch;
    t->comm_scratch_bytes = scratch_bytes;
    if (c->world > 1) {
        t->config_hash = tr_train_config_hash(t);
        cc.layout_hash = tr_train_priv_hello_hash(t);
        return tr_comm_init(&t->comm, &cc, c->tp, scratch, scratch_bytes);
    }
    return 0;
}

int tr_train_arena_size(const struct tr_train_config *cfg, size_t *bytes)
{
    struct tr_arena a;
    int rc;
    if (!bytes || (rc = config_check(cfg)) < 0)
        return TR_ERR_INVAL;
    tr_arena_measure(&a);
    if ((rc = layout(0, cfg, &a)) < 0)
        return rc;
    *bytes = a.used;
    return 0;
}

int tr_train_init(struct tr_train *t, const struct tr_train_config *cfg, void *arena, size_t size)
{
    struct tr_arena a;
    uint8_t *p = (uint8_t *)t;
    size_t i;
    int rc;

    if (!t || (rc = config_check(cfg)) < 0)
        return TR_ERR_INVAL;
    for (i = 0; i < sizeof *t; i++)
        p[i] = 0;
    t->cfg = *cfg;
    t->sample_bytes = sample_bytes_of(&cfg->model);
    if ((rc = tr_arena_init(&a, arena, size)) < 0)
        return rc;
    if ((rc = layout(t, cfg, &a)) < 0)
        return rc;
    t->config_hash = tr_train_config_hash(t);
    tr_sgd_init(&t->sgd);
    t->sgd.lr = cfg->lr;
    t->sgd.momentum = cfg->momentum;
    t->deal_first = 0;
    t->deal_world = (uint32_t)cfg->world;
    t->deal_step = 0;
    t->steps = tr_train_priv_steps(t);
    t->sampler_epoch = UINT32_MAX;
    t->fault.rank = -1;
    t->res_same = 1;          /* zeros on every rank */
    t->phase = PH_IDLE;
    return 0;
}

/* Steps of the epoch in progress: those before its current deal began and
 * the deal's own. */
uint32_t tr_train_priv_steps(const struct tr_train *t)
{
    return t->deal_step + tr_sampler_steps(t->cfg.n_train, t->deal_first, t->deal_world,
                                           t->cfg.batch);
}

uint64_t tr_train_config_hash(const struct tr_train *t)
{
    const struct tr_train_config *c = &t->cfg;
    uint64_t h = TR_FNV64_INIT;
    h = fnv64_u64(h, c->elastic ? 0u : (uint64_t)c->world);
    h = fnv64_u64(h, c->batch);
    h = fnv64_u64(h, c->seed);
    h = fnv64_u64(h, (uint64_t)c->algo);
    h = fnv64_u64(h, c->n_train);
    h = fnv64_u64(h, c->sync_every);
    h = fnv64_u32(h, tr_float_bits(c->lr));
    h = fnv64_u32(h, tr_float_bits(c->momentum));
    h = fnv64_u32(h, tr_model_layout_hash(&t->model));
    h = fnv64_u32(h, TR_SAMPLER_FEISTEL);
    if (c->compress != TR_CODEC_NONE)
        h = fnv64_u64(h, 0x434F4D5000000000ull + (uint64_t)c->compress);
    if (c->average_every >= 2)
        h = fnv64_u64(h, 0x4156470000000000ull + c->average_every);
    /* an elastic run's recovery differs in the in-place mode (positions
     * count buckets applied): its ranks must all be in it */
    if (c->elastic && c->grad_mode == TR_TRAIN_GRADS_BUCKET)
        h = fnv64_u64(h, 0x4255434B4554ull);
    return h;
}

/* The hello's layout field: the configuration hash and max_steps, where
 * the job ends (a rank that stops early would leave the others waiting
 * for it round after round). Not in the configuration hash itself: a
 * checkpoint may go on with another --max-steps. */
uint32_t tr_train_priv_hello_hash(const struct tr_train *t)
{
    uint64_t h = fnv64_u64(t->config_hash, t->cfg.max_steps);
    return (uint32_t)(h ^ (h >> 32));
}

/* ---- the state as bytes */

static const uint8_t magic_ckpt[8] = { 'T', 'R', 'I', 'N', 'G', 'C', 'K', 'P' };
static const uint8_t magic_model[8] = { 'T', 'R', 'I', 'N', 'G', 'M', 'D', 'L' };

static int same8(const uint8_t *a, const uint8_t *b)
{
    int i;
    for (i = 0; i < 8; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static size_t state_bytes(size_t header, uint64_t n_params, uint64_t n_buffers, int momentum,
                          int residual)
{
    return header + 4u * (size_t)(n_params * (1u + (momentum ? 1u : 0u) + (residual ? 1u : 0u)) +
                                  n_buffers) + 4u;
}

/* An elastic run writes version 4 (the epoch's deal), a fixed world 3. */
static size_t header_of(const struct tr_train *t)
{
    return t->cfg.elastic ? TR_STATE_HEADER2 : TR_STATE_HEADER;
}

size_t tr_train_state_size(const struct tr_train *t, int kind)
{
    return state_bytes(header_of(t), t->model.n_params, t->model.n_buffers,
                       kind == TR_STATE_CHECKPOINT,
                       kind == TR_STATE_CHECKPOINT && t->residual != NULL);
}

static const uint8_t *get_floats(const uint8_t *p, float *f, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++, p += 4)
        f[i] = tr_bits_float(tr_get_le32(p));
    return p;
}

/* tr_train_state_write's bytes on their way out: gathered in pieces of
 * STATE_PIECE for the caller's write, the CRC kept over what went out. */
#define STATE_PIECE 256u

struct state_out {
    int    (*write)(void *ctx, const void *p, size_t n);
    void    *ctx;
    uint32_t crc;              /* crc32_update over the bytes handed out */
    size_t   n;                /* bytes waiting in buf */
    int      err;              /* the first write's failure, or 0 */
    uint8_t  buf[STATE_PIECE];
};

static void out_flush(struct state_out *o)
{
    int rc;
    if (o->n && !o->err) {
        o->crc = crc32_update(o->crc, o->buf, o->n);
        rc = o->write(o->ctx, o->buf, o->n);
        o->err = rc < 0 ? rc : rc > 0 ? TR_ERR_IO : 0;
    }
    o->n = 0;
}

static void out_word(struct state_out *o, uint32_t v)
{
    if (o->n + 4u > STATE_PIECE)
        out_flush(o);
    tr_put_le32(o->buf + o->n, v);
    o->n += 4u;
}

static void out_floats(struct state_out *o, const float *f, size_t n)
{
    size_t i;
    for (i = 0; i < n && !o->err; i++)
        out_word(o, tr_float_bits(f[i]));
}

long tr_train_state_write(const struct tr_train *t, int kind,
                          int (*write)(void *ctx, const void *p, size_t n), void *ctx)
{
    const struct tr_model *m = &t->model;
    int ckpt = kind == TR_STATE_CHECKPOINT;
    size_t need = tr_train_state_size(t, kind), head = header_of(t), i;
    uint32_t flags = ckpt ? TR_STATE_HAS_MOMENTUM : 0u;
    struct state_out o;
    uint8_t *b = o.buf;

    if ((kind != TR_STATE_CHECKPOINT && kind != TR_STATE_MODEL) || !write)
        return TR_ERR_INVAL;
    if (ckpt && t->residual)
        flags |= TR_STATE_HAS_RESIDUAL;
    o.write = write;
    o.ctx = ctx;
    o.crc = 0;
    o.err = 0;
    for (i = 0; i < head; i++)
        b[i] = 0;
    for (i = 0; i < 8; i++)
        b[i] = ckpt ? magic_ckpt[i] : magic_model[i];
    tr_put_le32(b + 8, t->cfg.elastic ? TR_STATE_VERSION2 : TR_STATE_VERSION);
    tr_put_le32(b + 12, (uint32_t)head);
    tr_put_le64(b + 16, t->config_hash);
    tr_put_le32(b + 24, tr_model_layout_hash(m));
    tr_put_le32(b + 28, (uint32_t)t->cfg.world);
    tr_put_le32(b + 32, t->cfg.batch);
    tr_put_le32(b + 36, t->epoch);
    tr_put_le32(b + 40, t->step);
    tr_put_le32(b + 44, (uint32_t)t->sgd.started);
    tr_put_le64(b + 48, t->global_step);
    tr_put_le64(b + 56, t->cfg.seed);
    tr_put_le64(b + 64, m->n_params);
    tr_put_le64(b + 72, m->n_buffers);
    tr_put_le64(b + 80, t->cfg.n_train);
    if (t->cfg.elastic) {
        if (t->sync_due)
            flags |= TR_STATE_SYNC_DUE;
        tr_put_le32(b + 96, t->deal_first);
        tr_put_le32(b + 100, t->deal_world);
        tr_put_le32(b + 104, t->deal_step);
    }
    tr_put_le32(b + 88, flags);
    o.n = head;
    out_floats(&o, m->params, m->n_params);
    if (ckpt && m->momentum) {
        out_floats(&o, m->momentum, m->n_params);
    } else if (ckpt) {       /* no twin (momentum 0): the zeros it would hold */
        for (i = 0; i < m->n_params && !o.err; i++)
            out_word(&o, 0u);
    }
    if (ckpt && t->residual && t->res_same) {
        /* after TR_TRAIN_LOST, the last completed step's */
        out_floats(&o, t->bn_alt && t->res_copy ? t->res_copy : t->residual, m->n_params);
    } else if (ckpt && t->residual) {
        /* each rank's own since the last sync point: none, as a resync
         * from this position gives every rank (tr_train_elastic.c) */
        for (i = 0; i < m->n_params && !o.err; i++)
            out_word(&o, 0u);
    }
    /* after TR_TRAIN_LOST in a step, the last completed step's buffers */
    out_floats(&o, t->bn_alt ? t->bn_copy : m->buffers, m->n_buffers);
    out_flush(&o);
    tr_put_le32(o.buf, o.crc);  /* the CRC covers everything before it */
    o.n = 4u;
    if (!o.err) {
        int rc = write(ctx, o.buf, 4u);
        o.err = rc < 0 ? rc : rc > 0 ? TR_ERR_IO : 0;
    }
    return o.err ? (long)o.err : (long)need;
}

/* tr_train_state_save's writer: the next bytes of its buffer. */
static int mem_write(void *ctx, const void *p, size_t n)
{
    uint8_t **at = (uint8_t **)ctx;
    const uint8_t *s = (const uint8_t *)p;
    size_t i;
    for (i = 0; i < n; i++)
        (*at)[i] = s[i];
    *at += n;
    return 0;
}

long tr_train_state_save(const struct tr_train *t, int kind, void *buf, size_t len)
{
    uint8_t *at = (uint8_t *)buf;
    if (kind != TR_STATE_CHECKPOINT && kind != TR_STATE_MODEL)
        return TR_ERR_INVAL;
    if (!buf || len < tr_train_state_size(t, kind))
        return TR_ERR_NOMEM;
    return tr_train_state_write(t, kind, mem_write, &at);
}

/* Version 3 or 1 (96-byte header), 4 or 2 (112, the deal); reserved bytes
 * and unknown flags belong to another version. */
static int version_check(const uint8_t *b, size_t len, struct tr_train_state_info *info)
{
    uint32_t head = tr_get_le32(b + 12), v = info->version;
    uint32_t known = TR_STATE_HAS_MOMENTUM | TR_STATE_HAS_RESIDUAL;
    if ((v == TR_STATE_VERSION || v == TR_STATE_VERSION_FY) && head == TR_STATE_HEADER) {
        info->header_len = TR_STATE_HEADER;
    } else if ((v == TR_STATE_VERSION2 || v == TR_STATE_VERSION2_FY) &&
               head == TR_STATE_HEADER2 && len >= TR_STATE_HEADER2 + 4u) {
        info->header_len = TR_STATE_HEADER2;
        info->deal_first = tr_get_le32(b + 96);
        info->deal_world = tr_get_le32(b + 100);
        info->deal_step = tr_get_le32(b + 104);
        known |= TR_STATE_SYNC_DUE;
        if (tr_get_le32(b + 108) != 0)
            return TR_ERR_FORMAT;
    } else {
        return TR_ERR_FORMAT;
    }
    return tr_get_le32(b + 92) != 0 || (info->flags & ~known) != 0 ? TR_ERR_FORMAT : 0;
}

int tr_train_state_check(const void *buf, size_t len, struct tr_train_state_info *info)
{
    const uint8_t *b = (const uint8_t *)buf;
    struct tr_train_state_info z;
    uint8_t *zp = (uint8_t *)&z;
    size_t i;

    for (i = 0; i < sizeof z; i++)
        zp[i] = 0;
    *info = z;
    if (!buf || len < TR_STATE_HEADER + 4u) {
        info->problem = TR_STATE_SHORT;
        return TR_ERR_FORMAT;
    }
    if (same8(b, magic_ckpt))
        info->kind = TR_STATE_CHECKPOINT;
    else if (same8(b, magic_model))
        info->kind = TR_STATE_MODEL;
    else {
        info->problem = TR_STATE_MAGIC;
        return TR_ERR_FORMAT;
    }
    info->version = tr_get_le32(b + 8);
    info->config_hash = tr_get_le64(b + 16);
    info->layout_hash = tr_get_le32(b + 24);
    info->world = tr_get_le32(b + 28);
    info->batch = tr_get_le32(b + 32);
    info->epoch = tr_get_le32(b + 36);
    info->step = tr_get_le32(b + 40);
    info->sgd_started = tr_get_le32(b + 44);
    info->global_step = tr_get_le64(b + 48);
    info->seed = tr_get_le64(b + 56);
    info->n_params = tr_get_le64(b + 64);
    info->n_buffers = tr_get_le64(b + 72);
    info->n_train = tr_get_le64(b + 80);
    info->flags = tr_get_le32(b + 88);
    info->deal_first = 0;
    info->deal_world = info->world;
    info->deal_step = 0;
    if (version_check(b, len, info) < 0) {
        info->problem = TR_STATE_VERSION_DIFFERS;
        return TR_ERR_FORMAT;
    }
    if (info->n_params <= (1ull << 32) && info->n_buffers <= (1ull << 32))
        info->expect_len = state_bytes(info->header_len, info->n_params, info->n_buffers,
                                       (info->flags & TR_STATE_HAS_MOMENTUM) != 0,
                                       (info->flags & TR_STATE_HAS_RESIDUAL) != 0);
    if (len != info->expect_len) {
        info->problem = TR_STATE_SIZE;
        return TR_ERR_FORMAT;
    }
    if (tr_get_le32(b + len - 4) != crc32_update(0, b, len - 4)) {
        info->problem = TR_STATE_CRC;
        return TR_ERR_FORMAT;
    }
    /* its position is in a shuffle this sampler does not deal */
    if (info->kind == TR_STATE_CHECKPOINT &&
        (info->version == TR_STATE_VERSION_FY || info->version == TR_STATE_VERSION2_FY)) {
        info->problem = TR_STATE_OLD_SAMPLER;
        return TR_ERR_FORMAT;
    }
    return 0;
}

/* A position a run of this configuration passes through. Fixed world: steps
 * done = epoch x steps per epoch + step. Elastic (deals over changing
 * worlds): a deal that starts inside the epoch and a step within it. */
static int position_check(const struct tr_train *t, const struct tr_train_state_info *in)
{
    uint32_t steps;
    if (in->sgd_started > 1u)
        return TR_ERR_FORMAT;
    if (in->header_len == TR_STATE_HEADER)
        return in->step >= t->steps ||
               in->global_step != (uint64_t)in->epoch * t->steps + in->step ? TR_ERR_FORMAT : 0;
    if (in->deal_world < 1 || in->deal_world > TR_TRAIN_MAX_WORLD ||
        in->deal_first > t->cfg.n_train || in->deal_step > in->step ||
        in->global_step < in->step)
        return TR_ERR_FORMAT;
    steps = in->deal_step + tr_sampler_steps(t->cfg.n_train, in->deal_first, in->deal_world,
                                             t->cfg.batch);
    return in->step > steps ? TR_ERR_FORMAT : 0;
}

int tr_train_state_load(struct tr_train *t, const void *buf, size_t len)
{
    struct tr_train_state_info in;
    struct tr_model *m = &t->model;
    const uint8_t *p;
    int rc;

    if ((rc = tr_train_state_check(buf, len, &in)) < 0)
        return rc;
    if (in.kind != TR_STATE_CHECKPOINT || !(in.flags & TR_STATE_HAS_MOMENTUM))
        return TR_ERR_FORMAT;
    if (((in.flags & TR_STATE_HAS_RESIDUAL) != 0) != (t->residual != NULL))
        return TR_ERR_MISMATCH;   /* written with another codec */
    if (in.n_params != m->n_params || in.n_buffers != m->n_buffers ||
        in.config_hash != t->config_hash || in.layout_hash != tr_model_layout_hash(m))
        return TR_ERR_MISMATCH;
    if ((in.header_len == TR_STATE_HEADER2) != (t->cfg.elastic != 0))
        return TR_ERR_FORMAT;
    /* the fields the configuration hash stands for must say the same */
    if ((!t->cfg.elastic && in.world != (uint32_t)t->cfg.world) || in.batch != t->cfg.batch ||
        in.seed != t->cfg.seed || in.n_train != t->cfg.n_train)
        return TR_ERR_MISMATCH;
    if ((rc = position_check(t, &in)) < 0)
        return rc;
    p = get_floats((const uint8_t *)buf + in.header_len, m->params, m->n_params);
    if (m->momentum)
        p = get_floats(p, m->momentum, m->n_params);
    else                     /* momentum 0: never read */
        p += 4u * m->n_params;
    if (t->residual)
        p = get_floats(p, t->residual, m->n_params);
    get_floats(p, m->buffers, m->n_buffers);
    t->epoch = in.epoch;
    t->step = in.step;
    t->global_step = in.global_step;
    t->sgd.started = (int)in.sgd_started;
    t->deal_first = in.deal_first;
    t->deal_world = in.deal_world;
    t->deal_step = in.deal_step;
    t->steps = tr_train_priv_steps(t);
    t->sync_due = (in.flags & TR_STATE_SYNC_DUE) != 0;
    t->res_same = 1;          /* the file's residual is every rank's from here */
    return 0;
}

/* ---- faults */

void tr_train_priv_fault(struct tr_train *t, int what, int code, int rank)
{
    t->fault.code = code;
    t->fault.what = what;
    t->fault.rank = rank;
    t->fault.epoch = t->epoch;
    t->fault.step = t->step;
}

static int fail(struct tr_train *t, int what, int code, int rank)
{
    tr_train_priv_fault(t, what, code, rank);
    t->phase = PH_FAILED;
    return code;
}

int tr_train_priv_fail(struct tr_train *t, int what, int code, int rank)
{
    return fail(t, what, code, rank);
}

/* A collective failed. An elastic run rolls back and reports the lost link,
 * except a hello that found another configuration. */
static int fail_comm(struct tr_train *t, int what, int code)
{
    int peer = tr_comm_last_fault(&t->comm)->peer_rank;
    if (t->cfg.elastic && !(what == TR_TRAIN_HELLO && code == TR_ERR_MISMATCH))
        return tr_train_priv_lost(t, what, code, peer);
    return fail(t, what, code, peer);
}

const struct tr_train_fault *tr_train_last_fault(const struct tr_train *t)
{
    return &t->fault;
}

const char *tr_train_what_name(int what)
{
    switch (what) {
    case TR_TRAIN_NONE:           return "nothing";
    case TR_TRAIN_HELLO:          return "hello with the neighbours";
    case TR_TRAIN_REFUSED:        return "start (rank 0 could not start)";
    case TR_TRAIN_RESTORE:        return "restoring the checkpoint";
    case TR_TRAIN_START_BCAST:    return "start broadcast";
    case TR_TRAIN_CONFIG:         return "configuration check against rank 0";
    case TR_TRAIN_PARAM_BCAST:    return "parameter broadcast";
    case TR_TRAIN_MOMENTUM_BCAST: return "momentum broadcast";
    case TR_TRAIN_BUFFER_BCAST:   return "BN statistics broadcast";
    case TR_TRAIN_LOAD:           return "sample loading";
    case TR_TRAIN_FORWARD:        return "forward pass";
    case TR_TRAIN_LOSS:           return "loss";
    case TR_TRAIN_BACKWARD:       return "backward pass";
    case TR_TRAIN_GRADIENTS:      return "gradient allreduce";
    case TR_TRAIN_BN_SYNC:        return "BN statistics average";
    case TR_TRAIN_AVERAGE:        return "parameter average";
    case TR_TRAIN_RESIDUAL:       return "error-feedback residual average";
    case TR_TRAIN_EVAL:           return "test-set evaluation";
    default:                      return "unknown";
    }
}

/* ---- the start */

/* A hello that fails at once is reported by the next tr_train_poll. */
static int hello_start(struct tr_train *t)
{
    int rc;
    t->phase = PH_HELLO;
    if (t->cfg.world > 1 && (rc = tr_comm_hello_start(&t->comm)) < 0 && rc != TR_ERR_AGAIN)
        fail_comm(t, TR_TRAIN_HELLO, rc);
    return 0;
}

int tr_train_begin(struct tr_train *t, const void *state, size_t len)
{
    if (!t || t->phase != PH_IDLE)
        return TR_ERR_INVAL;
    if (t->cfg.rank == 0) {
        if (state) {
            int rc = tr_train_state_load(t, state, len);
            if (rc < 0) {
                t->start_status = rc;
                t->fault.what = TR_TRAIN_RESTORE;
            }
        } else {
            tr_model_init_params(&t->model, t->cfg.seed);
        }
    }
    if (t->cfg.elastic)
        return tr_train_priv_elastic_begin(t);
    return hello_start(t);
}

int tr_train_refuse(struct tr_train *t, int err)
{
    if (!t || t->phase != PH_IDLE || t->cfg.rank != 0 || err >= 0)
        return TR_ERR_INVAL;
    t->start_status = err;
    t->fault.what = TR_TRAIN_REFUSED;
    return hello_start(t);
}

/* Rank 0's start record: status, its configuration hash, where to go on
 * (START_BYTES; an elastic run's record appends its deal to these). */
void tr_train_priv_start_encode(struct tr_train *t)
{
    uint8_t *b = t->start_msg;
    tr_put_le64(b, (uint64_t)(int64_t)t->start_status);
    tr_put_le64(b + 8, t->config_hash);
    tr_put_le64(b + 16, t->epoch);
    tr_put_le64(b + 24, t->step);
    tr_put_le64(b + 32, t->global_step);
    tr_put_le64(b + 40, (uint64_t)t->sgd.started);
}

/* Every rank: take rank 0's record; 0 to go on, or the failure. */
static int start_decode(struct tr_train *t)
{
    const uint8_t *b = t->start_msg;
    int status = (int)(int64_t)tr_get_le64(b);
    if (t->cfg.rank == 0 && status < 0)
        return fail(t, t->fault.what, status, 0);
    if (status < 0)
        return fail(t, TR_TRAIN_REFUSED, status, 0);
    if (tr_get_le64(b + 8) != t->config_hash)
        return fail(t, TR_TRAIN_CONFIG, TR_ERR_MISMATCH, 0);
    t->epoch = (uint32_t)tr_get_le64(b + 16);
    t->step = (uint32_t)tr_get_le64(b + 24);
    t->global_step = tr_get_le64(b + 32);
    t->sgd.started = (int)tr_get_le64(b + 40);
    return 0;
}

int tr_train_priv_bcast(struct tr_train *t, int phase, int what, void *buf, size_t bytes,
                       int root)
{
    int rc;
    t->phase = phase;
    if (t->cfg.world == 1)
        return 0;
    rc = tr_broadcast_start(&t->comm, buf, bytes, root);
    return rc < 0 && rc != TR_ERR_AGAIN ? fail_comm(t, what, rc) : 0;
}

static int bcast_start(struct tr_train *t, int phase, int what, void *buf, size_t bytes)
{
    return tr_train_priv_bcast(t, phase, what, buf, bytes, 0);
}

/* ---- steps and epochs */

void tr_train_priv_epoch_reset(struct tr_train *t)
{
    t->loss_sum = 0;
    t->correct = 0;
    t->seen = 0;
    t->comm_us = 0;
    t->stepped = 0;
}

static uint64_t clock_us(const struct tr_train *t)
{
    return t->cfg.clock_us ? t->cfg.clock_us(t->cfg.clock_ctx) : 0;
}

int tr_train_priv_reduce(struct tr_train *t, int phase, int what, float *buf, size_t n,
                        enum tr_op op)
{
    int rc;
    t->phase = phase;
    if (t->cfg.world == 1)
        return 0;
    rc = tr_allreduce_start(&t->comm, buf, n, op, (enum tr_algo)t->cfg.algo);
    return rc < 0 && rc != TR_ERR_AGAIN ? fail_comm(t, what, rc) : 0;
}

/* Samples idx[0..n) of split through the loader into the model input.
 * The pixels sit in the last quarter of x's bytes (x has room for the
 * largest batch: 4 bytes a pixel there), counted from the start at this
 * batch: pixel i is read before float i is written, and float i's bytes
 * [4i, 4i + 4) end before pixel i + 1's byte 3N + i + 1 for every i < N,
 * so widening in order never overwrites a pixel not yet read. */
static int fetch(struct tr_train *t, int split, unsigned n)
{
    size_t i, total = (size_t)n * t->sample_bytes;
    uint8_t *px = (uint8_t *)t->x + 3u * total;
    int rc = t->cfg.load(t->cfg.load_ctx, split, t->idx, n, px, t->labels);
    if (rc < 0)
        return fail(t, TR_TRAIN_LOAD, rc, t->cfg.rank);
    for (i = 0; i < total; i++)
        t->x[i] = (float)px[i] / 255.0f;
    return 0;
}

/* Forward and loss of n fetched samples; backward begun when training
 * (its stages run in PH_BACKWARD). */
static int run_batch(struct tr_train *t, unsigned n, int train, float *loss, unsigned *correct)
{
    int rc, me = t->cfg.rank;
    if ((rc = tr_model_forward(&t->model, t->x, n, train)) < 0)
        return fail(t, TR_TRAIN_FORWARD, rc, me);
    if ((rc = tr_model_loss(&t->model, t->labels, loss, correct)) < 0)
        return fail(t, TR_TRAIN_LOSS, rc, me);
    if (train && (rc = tr_model_backward_begin(&t->model)) < 0)
        return fail(t, TR_TRAIN_BACKWARD, rc, me);
    return 0;
}

/* ---- the gradient, bucket by bucket (docs/BUCKETS.md, docs/DESIGN.md)
 *
 * Backward completes buckets in order 0, 1, ...; each is averaged as the
 * range [lo, hi) of the whole gradient (tr_allreduce_range_start: the bits
 * of one allreduce of the whole), one at a time, the next started as soon
 * as the ring is free and backward has completed it. In the full mode
 * backward never waits: between its stages the running bucket is moved on
 * (tr_comm_progress, and the port's poll with no wait, which on lwIP
 * NO_SYS=1 is what moves the stack), and SGD runs once every bucket has
 * arrived. In the bucket mode each bucket is applied by SGD as it arrives
 * and its buffer reused, so backward waits for it. */

/* A bucket's average arrived on this rank. */
static void bucket_arrived(struct tr_train *t, unsigned b)
{
    struct tr_model *m = &t->model;
    const struct tr_bucket *k = &m->bucket[b];
    if (t->cfg.grad_mode != TR_TRAIN_GRADS_BUCKET)
        return;                            /* SGD once all arrived */
    tr_sgd_apply(&t->sgd, m->params + k->lo, tr_model_bucket_grads(m, b),
                 m->momentum ? m->momentum + k->lo : NULL, k->hi - k->lo);
    tr_model_bucket_next(m);
}

/* Move the buckets on: finish the running one if it can, start the next
 * that backward completed. 0 when none runs and none is waiting to start,
 * TR_ERR_AGAIN while one runs, or a failure (TR_TRAIN_LOST in elastic runs). */
static int grads_pump(struct tr_train *t)
{
    struct tr_model *m = &t->model;
    int rc;
    for (;;) {
        if (t->bk_flight) {
            rc = tr_comm_progress(&t->comm);
            if (rc == TR_ERR_AGAIN)
                return rc;
            if (rc < 0)
                return fail_comm(t, TR_TRAIN_GRADIENTS, rc);
            t->bk_flight = 0;
            bucket_arrived(t, t->bk_done++);
        }
        if (t->bk_sent >= tr_model_buckets_done(m))
            return 0;
        if (t->cfg.world > 1 && t->cfg.average_every < 2) {
            const struct tr_bucket *k = &m->bucket[t->bk_sent];
            if (t->residual) {
                /* the compressed ring over the bucket alone: its blocks
                 * start at the bucket's first value (docs/BUCKETS.md 7) */
                rc = tr_allreduce_codec_start(&t->comm, tr_model_bucket_grads(m, t->bk_sent),
                                              k->hi - k->lo, TR_OP_AVG, t->cfg.compress,
                                              t->residual + k->lo, t->wire, t->wire_bytes);
                if (rc == TR_ERR_RANGE)   /* this rank's gradient: NaN or infinity */
                    return fail(t, TR_TRAIN_GRADIENTS, rc, t->cfg.rank);
            } else {
                rc = tr_allreduce_range_start(&t->comm, tr_model_bucket_grads(m, t->bk_sent),
                                              m->n_params, k->lo, k->hi, TR_OP_AVG,
                                              (enum tr_algo)t->cfg.algo);
            }
            t->bk_sent++;
            if (rc == TR_ERR_AGAIN) {
                t->bk_flight = 1;
                continue;
            }
            if (rc < 0)
                return fail_comm(t, TR_TRAIN_GRADIENTS, rc);
        } else {
            /* world 1: the average is itself; periodic averaging: a
             * local step, this rank's own gradient */
            t->bk_sent++;
        }
        bucket_arrived(t, t->bk_done++);
    }
}

/* PH_BACKWARD: backward's stages with the buckets moved on between them. */
static int backward_run(struct tr_train *t)
{
    struct tr_model *m = &t->model;
    const struct tr_transport *tp = t->cfg.tp;
    int rc, st;
    for (;;) {
        rc = grads_pump(t);
        if (rc < 0 && rc != TR_ERR_AGAIN)
            return rc;
        st = tr_model_backward_stage(m);
        if (st == TR_ERR_BUSY)
            return TR_ERR_AGAIN;           /* bucket mode: its bucket is on the ring */
        if (st < 0)
            return fail(t, TR_TRAIN_BACKWARD, st, t->cfg.rank);
        if (st == 0)
            break;
        if (t->bk_flight && tp)            /* let the stack move (lwIP NO_SYS=1) */
            (void)tp->poll(tp->ctx, tr_comm_want(&t->comm), 0);
    }
    t->t0_us = clock_us(t);
    t->phase = PH_GRADS;
    return 0;
}

void tr_train_priv_copy(float *dst, const float *src, size_t n)
{
    tr_float_copy(dst, src, n);
}

/* This rank's batch of the current step: gradients, then their allreduce. */
static int step_compute(struct tr_train *t)
{
    const struct tr_train_config *c = &t->cfg;
    struct tr_train_report *r = &t->last;
    unsigned n;
    int rc;

    if (t->sampler_epoch != t->epoch) {
        tr_sampler_init(&t->sampler, c->n_train, c->seed, t->epoch);
        t->sampler_epoch = t->epoch;
    }
    n = tr_sampler_batch(&t->sampler, t->deal_first, t->deal_world, (uint32_t)c->rank, c->batch,
                         t->step - t->deal_step, t->idx);
    if (c->elastic)   /* the last completed step's, for a rollback */
        tr_float_copy(t->bn_copy, t->model.buffers, t->model.n_buffers);
    r->n = n;
    r->correct = 0;
    if ((rc = fetch(t, TR_SPLIT_TRAIN, n)) < 0 ||
        (rc = run_batch(t, n, 1, &r->loss, &r->correct)) < 0)
        return rc;
    if (t->res_copy)   /* the last completed step's residual, for a rollback */
        tr_float_copy(t->res_copy, t->residual, t->model.n_params);
    t->res_same_copy = t->res_same;
    if (t->residual && c->world > 1 && c->average_every < 2)
        t->res_same = 0;   /* each rank's encoding leaves its own error */
    t->bk_sent = 0;
    t->bk_done = 0;
    t->bk_flight = 0;
    t->phase = PH_BACKWARD;
    return backward_run(t);
}

/* Periodic averaging with a lossy codec: the change since the last average
 * (in the gradient buffer, free after SGD) over the compressed ring. */
static int average_delta_start(struct tr_train *t)
{
    struct tr_model *m = &t->model;
    size_t i;
    int rc;
    t->phase = PH_AVG_PARAMS;
    if (t->cfg.world == 1)
        return 0;
    t->res_same = 0;
    for (i = 0; i < m->n_params; i++)
        m->grads[i] = m->params[i] - t->anchor[i];
    rc = tr_allreduce_codec_start(&t->comm, m->grads, m->n_params, TR_OP_AVG, t->cfg.compress,
                                  t->residual, t->wire, t->wire_bytes);
    if (rc == TR_ERR_RANGE)
        return fail(t, TR_TRAIN_AVERAGE, rc, t->cfg.rank);
    return rc < 0 && rc != TR_ERR_AGAIN ? fail_comm(t, TR_TRAIN_AVERAGE, rc) : 0;
}

/* An event's report: where training is, every other field 0. */
int tr_train_priv_report(const struct tr_train *t, struct tr_train_report *rep, int event)
{
    struct tr_train_report z = { 0 };
    *rep = z;
    rep->epoch = t->epoch;
    rep->step = t->step;
    rep->steps = t->steps;
    rep->global_step = t->global_step;
    return event;
}

int tr_train_priv_avg_elastic(const struct tr_train *t)
{
    return t->snap_buf != NULL;
}

/* --elastic with periodic averaging, at a sync point (after the average,
 * the BN average and the residuals'), or a resync's end: the state every
 * rank holds, kept (the parameters in anchor) for a membership change to
 * go back to. */
void tr_train_priv_snap_take(struct tr_train *t)
{
    struct tr_model *m = &t->model;
    if (!t->snap_buf)
        return;
    tr_float_copy(t->anchor, m->params, m->n_params);
    if (t->snap_mom)
        tr_float_copy(t->snap_mom, m->momentum, m->n_params);
    tr_float_copy(t->snap_buf, m->buffers, m->n_buffers);
    t->snap.global_step = t->global_step;
    t->snap.epoch = t->epoch;
    t->snap.step = t->step;
    t->snap.steps = t->steps;
    t->snap.deal_first = t->deal_first;
    t->snap.deal_world = t->deal_world;
    t->snap.deal_step = t->deal_step;
    t->snap.correct = t->correct;
    t->snap.seen = t->seen;
    t->snap.sgd_started = t->sgd.started;
    t->snap.sync_due = t->sync_due;
    t->snap.stepped = t->stepped;
    t->snap.loss_sum = t->loss_sum;
    t->snap_valid = 1;
}

/* The gradients are averaged: SGD, count the step, report it. */
/* Count the step as done (the gradients are applied): where training is,
 * the epoch's sums, the phase that follows. */
void tr_train_priv_step_count(struct tr_train *t)
{
    struct tr_train_report *r = &t->last;
    uint32_t every = t->cfg.sync_every;

    t->step++;
    t->global_step++;
    t->stepped = 1;
    t->bn_same = 0;           /* this rank's forward moved its BN statistics */
    t->bk_partial = 0;
    t->loss_sum += (double)r->loss * r->n;
    t->correct += r->correct;
    t->seen += r->n;
    t->phase = ((every && t->global_step % every == 0) ||
                (tr_train_priv_avg_elastic(t) && t->global_step % t->cfg.average_every == 0)) &&
               t->step < t->steps ? PH_SYNC_GO : PH_STEP;
    t->sync_due = t->phase == PH_SYNC_GO || t->step >= t->steps ||
                  (t->cfg.max_steps && t->global_step >= t->cfg.max_steps);
}

static int step_finish(struct tr_train *t, struct tr_train_report *rep)
{
    struct tr_model *m = &t->model;
    struct tr_train_report *r = &t->last;

    t->comm_us += clock_us(t) - t->t0_us;
    if (t->cfg.grad_mode == TR_TRAIN_GRADS_BUCKET)
        t->sgd.started = 1;                /* applied bucket by bucket */
    else
        tr_sgd_step(&t->sgd, m->params, m->grads, m->momentum, m->n_params);
    tr_train_priv_step_count(t);
    tr_train_priv_report(t, rep, TR_TRAIN_STEP);
    rep->n = r->n;
    rep->loss = r->loss;
    rep->correct = r->correct;
    if (t->cfg.elastic && t->change_flag > 0 && tr_train_priv_avg_elastic(t)) {
        t->change_held = 1;           /* after the next average (bn_average_done) */
    } else if (t->cfg.elastic && t->change_flag > 0) {
        t->change_next = t->phase;    /* TR_TRAIN_CHANGE comes next */
        t->phase = PH_CHANGE;
    }
    if (t->cfg.average_every >= 2 && (t->global_step % t->cfg.average_every == 0 || t->sync_due)) {
        t->avg_next = t->phase;       /* periodic averaging comes first */
        t->phase = PH_AVG_GO;
    }
    return TR_TRAIN_STEP;
}

/* Each rank evaluates its slice of the test set; the sums of the slices
 * and of this epoch's training go over the ring together. */
int tr_train_priv_evaluate(struct tr_train *t)
{
    const struct tr_train_config *c = &t->cfg;
    uint32_t lo = (uint32_t)((uint64_t)c->n_test * (uint32_t)c->rank / (uint32_t)c->world);
    uint32_t hi = (uint32_t)((uint64_t)c->n_test * (uint32_t)(c->rank + 1) / (uint32_t)c->world);
    double loss_sum = 0;
    uint32_t correct = 0, s;
    int rc;

    for (s = lo; s < hi; s += c->batch) {
        unsigned n = hi - s < c->batch ? hi - s : c->batch, i, k = 0;
        float loss = 0;
        for (i = 0; i < n; i++)
            t->idx[i] = s + i;
        if ((rc = fetch(t, TR_SPLIT_TEST, n)) < 0 || (rc = run_batch(t, n, 0, &loss, &k)) < 0)
            return rc;
        loss_sum += (double)loss * n;
        correct += k;
    }
    t->sums[0] = (float)loss_sum;
    t->sums[1] = (float)correct;
    t->sums[2] = (float)(hi - lo);
    t->sums[3] = (float)t->loss_sum;
    t->sums[4] = (float)t->correct;
    t->sums[5] = (float)t->seen;
    return tr_train_priv_reduce(t, PH_EPOCH_SUMS, TR_TRAIN_EVAL, t->sums, 6, TR_OP_SUM);
}

static int epoch_finish(struct tr_train *t, struct tr_train_report *rep)
{
    const float *s = t->sums;
    tr_train_priv_report(t, rep, TR_TRAIN_EPOCH);
    rep->stopped = t->step < t->steps;
    rep->test_loss = s[2] > 0 ? s[0] / s[2] : 0;
    rep->test_acc = s[2] > 0 ? s[1] / s[2] : 0;
    rep->test_samples = s[2];
    rep->train_loss = s[5] > 0 ? s[3] / s[5] : 0;
    rep->train_acc = s[5] > 0 ? s[4] / s[5] : 0;
    rep->train_samples = s[5];
    rep->comm_us = t->comm_us;
    t->sync_due = 0;
    if (rep->stopped) {
        t->phase = PH_DONE;
        return TR_TRAIN_EPOCH;
    }
    t->epoch++;
    t->step = 0;
    t->deal_first = 0;
    t->deal_world = (uint32_t)t->cfg.world;
    t->deal_step = 0;
    t->steps = tr_train_priv_steps(t);
    tr_train_priv_epoch_reset(t);
    t->phase = PH_STEP;
    if (t->change_held) {     /* the change waited for this average */
        t->change_held = 0;
        t->change_next = PH_STEP;
        t->phase = PH_CHANGE;
    }
    if (t->epoch <= t->epochs_reported)
        return 0;     /* evaluated again after a reform: reported before */
    t->epochs_reported = t->epoch;
    return TR_TRAIN_EPOCH;
}

/* What comes after the previous step: done, the epoch's end, or a step. */
static int step_next(struct tr_train *t)
{
    const struct tr_train_config *c = &t->cfg;
    int stop = c->max_steps && t->global_step >= c->max_steps;
    if (t->epoch >= c->epochs || (stop && !t->stepped)) {
        t->phase = PH_DONE;
        return 0;
    }
    if (stop || t->step >= t->steps) {
        t->phase = PH_EPOCH_GO;
        return 0;
    }
    return step_compute(t);
}

static int start_report(struct tr_train *t, struct tr_train_report *rep)
{
    if (t->anchor)   /* every rank holds the same parameters now */
        tr_float_copy(t->anchor, t->model.params, t->model.n_params);
    tr_train_priv_epoch_reset(t);
    t->res_same = 1;  /* rank 0's residual on every rank */
    t->phase = PH_STEP;
    return tr_train_priv_report(t, rep, TR_TRAIN_START);
}

/* The collective of the current phase: TR_ERR_AGAIN, 0 when done (or none
 * runs: world 1), or the failure. */
static int wait_coll(struct tr_train *t, int what)
{
    int rc;
    if (t->cfg.world == 1)
        return 0;
    rc = tr_comm_progress(&t->comm);
    if (rc == TR_ERR_AGAIN)
        return rc;
    return rc < 0 ? fail_comm(t, what, rc) : 0;
}

static int what_of(int phase)
{
    switch (phase) {
    case PH_HELLO:          return TR_TRAIN_HELLO;
    case PH_START_BCAST:    return TR_TRAIN_START_BCAST;
    case PH_PARAM_BCAST:    return TR_TRAIN_PARAM_BCAST;
    case PH_MOMENTUM_BCAST: return TR_TRAIN_MOMENTUM_BCAST;
    case PH_BUFFER_BCAST:   return TR_TRAIN_BUFFER_BCAST;
    case PH_BACKWARD:
    case PH_GRADS:
    case PH_FLAG:           return TR_TRAIN_GRADIENTS;
    case PH_RE_HELLO:       return TR_TRAIN_HELLO;
    case PH_RE_START:       return TR_TRAIN_START_BCAST;
    case PH_RE_PARAMS:      return TR_TRAIN_PARAM_BCAST;
    case PH_RE_MOMENTUM:    return TR_TRAIN_MOMENTUM_BCAST;
    case PH_RE_BUFFERS:     return TR_TRAIN_BUFFER_BCAST;
    case PH_RE_BUFAVG:      return TR_TRAIN_BN_SYNC;
    case PH_SYNC:
    case PH_EPOCH_BN:       return TR_TRAIN_BN_SYNC;
    case PH_EPOCH_SUMS:     return TR_TRAIN_EVAL;
    case PH_RESIDUAL_BCAST: return TR_TRAIN_MOMENTUM_BCAST;
    case PH_RE_RESIDUAL:    return TR_TRAIN_MOMENTUM_BCAST;
    case PH_AVG_PARAMS:
    case PH_AVG_MOMENTUM:   return TR_TRAIN_AVERAGE;
    case PH_SYNC_RES:
    case PH_EPOCH_RES:      return TR_TRAIN_RESIDUAL;
    default:                return TR_TRAIN_NONE;
    }
}

/* Every bucket arrived: the change flag's sum (elastic), or the step's end. */
static int grads_done(struct tr_train *t, struct tr_train_report *rep)
{
    if (t->cfg.elastic) {   /* a change asked for travels with every step */
        /* taken now: a request made while the flag's sum runs is kept
         * for the next step, not cleared when the sum completes */
        t->change_flag = t->change_asked ? 1.0f : 0.0f;
        t->change_asked = 0;
        return tr_train_priv_reduce(t, PH_FLAG, TR_TRAIN_GRADIENTS, &t->change_flag, 1,
                                   TR_OP_SUM);
    }
    return step_finish(t, rep);
}

/* PH_SYNC_GO, PH_EPOCH_GO: the BatchNorm buffers' average, at a sync point
 * or before the epoch's evaluation. */
static int bn_average_start(struct tr_train *t)
{
    struct tr_model *m = &t->model;
    if (t->cfg.elastic)   /* this step's buffers, for a rollback */
        tr_float_copy(t->bn_copy, m->buffers, m->n_buffers);
    return tr_train_priv_reduce(t, t->phase == PH_SYNC_GO ? PH_SYNC : PH_EPOCH_BN,
                               TR_TRAIN_BN_SYNC, m->buffers, m->n_buffers, TR_OP_AVG);
}

/* PH_SYNC, PH_EPOCH_BN: the buffers' average arrived. With a lossy codec
 * the error-feedback residuals are averaged next (PH_SYNC_RES,
 * PH_EPOCH_RES): every rank then holds the same residual, so the state at a
 * sync point (a checkpoint's) is one state, and a start from it gives every
 * rank what it had; the sum over ranks, what the codecs still owe the
 * gradient, is kept (up to rounding). An elastic run averages a copy, so a
 * cut average leaves the residual whole. Then every rank holds the same
 * buffers; at a sync point the step goes on; at the epoch's end the
 * evaluation starts. */
static int bn_average_done(struct tr_train *t, struct tr_train_report *rep)
{
    struct tr_model *m = &t->model;
    int epoch = t->phase == PH_EPOCH_BN || t->phase == PH_EPOCH_RES;
    if (t->residual && (t->phase == PH_SYNC || t->phase == PH_EPOCH_BN)) {
        float *r = t->res_copy ? t->res_copy : t->residual;
        if (t->res_copy)
            tr_float_copy(t->res_copy, t->residual, m->n_params);
        return tr_train_priv_reduce(t, epoch ? PH_EPOCH_RES : PH_SYNC_RES, TR_TRAIN_RESIDUAL,
                                   r, m->n_params, TR_OP_AVG);
    }
    if (t->res_copy)
        tr_float_copy(t->residual, t->res_copy, m->n_params);
    t->sync_due = 0;
    t->bn_same = 1;
    t->res_same = 1;
    tr_train_priv_snap_take(t);
    if (epoch)
        return tr_train_priv_evaluate(t);
    t->phase = PH_STEP;
    if (t->change_held) {     /* the change waited for this average */
        t->change_held = 0;
        t->change_next = PH_STEP;
        t->phase = PH_CHANGE;
    }
    return tr_train_priv_report(t, rep, TR_TRAIN_SYNC);
}

/* PH_GRADS: the gradient buckets' collectives, then the step's end. */
static int grads_step(struct tr_train *t, struct tr_train_report *rep)
{
    int rc;
    if ((rc = grads_pump(t)) != 0)
        return rc;            /* TR_ERR_AGAIN, a failure, or TR_TRAIN_LOST */
    return grads_done(t, rep);
}

/* PH_AVG_GO: periodic averaging starts (the parameters, or with a codec
 * their change since the last average). */
static int average_start(struct tr_train *t)
{
    struct tr_model *m = &t->model;
    t->t0_us = clock_us(t);   /* the average counts as the step's communication */
    if (t->anchor && t->residual)
        return average_delta_start(t);
    return tr_train_priv_reduce(t, PH_AVG_PARAMS, TR_TRAIN_AVERAGE, m->params, m->n_params,
                               TR_OP_AVG);
}

/* PH_AVG_PARAMS, PH_AVG_MOMENTUM: an average arrived. After the parameters,
 * at a checkpoint point, momentum's average follows; then the step goes on
 * at avg_next. */
static int average_done(struct tr_train *t)
{
    struct tr_model *m = &t->model;
    if (t->phase == PH_AVG_PARAMS) {
        if (t->anchor && t->residual && t->cfg.world > 1) {
            /* the averaged change on top of the last average, the same on
             * every rank; it is the next anchor (--elastic: once the sync
             * point completes, tr_train_priv_snap_take) */
            size_t i;
            int keep = tr_train_priv_avg_elastic(t);
            for (i = 0; i < m->n_params; i++) {
                m->params[i] = t->anchor[i] + m->grads[i];
                if (!keep)
                    t->anchor[i] = m->params[i];
            }
        }
        if (t->sync_due && m->momentum)   /* a checkpoint point: momentum too, one state */
            return tr_train_priv_reduce(t, PH_AVG_MOMENTUM, TR_TRAIN_AVERAGE, m->momentum,
                                       m->n_params, TR_OP_AVG);
    }
    t->comm_us += clock_us(t) - t->t0_us;
    t->phase = t->avg_next;
    return 0;
}

/* PH_HELLO .. PH_BUFFER_BCAST: the start's collective arrived; the next
 * one starts. In order: hello, the start message (rank 0's settings), the
 * parameters, momentum (if any), the codec's residual (if any), the
 * buffers; after them, TR_TRAIN_START. */
static int start_next(struct tr_train *t, struct tr_train_report *rep)
{
    struct tr_model *m = &t->model;
    size_t np = m->n_params * sizeof(float);
    int rc;

    switch (t->phase) {
    case PH_HELLO:
        if (t->cfg.rank == 0)
            tr_train_priv_start_encode(t);
        return bcast_start(t, PH_START_BCAST, TR_TRAIN_START_BCAST, t->start_msg, START_BYTES);
    case PH_START_BCAST:
        if ((rc = start_decode(t)) < 0)
            return rc;
        return bcast_start(t, PH_PARAM_BCAST, TR_TRAIN_PARAM_BCAST, m->params, np);
    case PH_PARAM_BCAST:
        if (m->momentum)       /* none without momentum (every rank alike: the hash) */
            return bcast_start(t, PH_MOMENTUM_BCAST, TR_TRAIN_MOMENTUM_BCAST, m->momentum, np);
        /* fall through */
    case PH_MOMENTUM_BCAST:
        if (t->residual)
            return bcast_start(t, PH_RESIDUAL_BCAST, TR_TRAIN_MOMENTUM_BCAST, t->residual, np);
        return bcast_start(t, PH_BUFFER_BCAST, TR_TRAIN_BUFFER_BCAST, m->buffers,
                           m->n_buffers * sizeof(float));
    case PH_RESIDUAL_BCAST:
        return bcast_start(t, PH_BUFFER_BCAST, TR_TRAIN_BUFFER_BCAST, m->buffers,
                           m->n_buffers * sizeof(float));
    default:   /* PH_BUFFER_BCAST */
        return start_report(t, rep);
    }
}

/* The current phase's collective completed: what follows it. */
static int collective_done(struct tr_train *t, struct tr_train_report *rep)
{
    switch (t->phase) {
    case PH_HELLO:
    case PH_START_BCAST:
    case PH_PARAM_BCAST:
    case PH_MOMENTUM_BCAST:
    case PH_RESIDUAL_BCAST:
    case PH_BUFFER_BCAST:
        return start_next(t, rep);
    case PH_AVG_PARAMS:
    case PH_AVG_MOMENTUM:
        return average_done(t);
    case PH_FLAG:
        return step_finish(t, rep);
    case PH_SYNC:
    case PH_EPOCH_BN:
    case PH_SYNC_RES:
    case PH_EPOCH_RES:
        return bn_average_done(t, rep);
    case PH_EPOCH_SUMS:
        return epoch_finish(t, rep);
    default:
        if (t->phase >= PH_RE_HELLO)
            return tr_train_priv_elastic(t, rep);
        return fail(t, TR_TRAIN_NONE, TR_ERR_INVAL, -1);
    }
}

/* One transition: > 0 an event, 0 go on, < 0 a failure or TR_ERR_AGAIN.
 * The phases in the first switch act at once; every other phase waits for
 * its collective, then collective_done says what follows. */
static int advance(struct tr_train *t, struct tr_train_report *rep)
{
    int rc;

    switch (t->phase) {
    case PH_IDLE:     return TR_ERR_INVAL;
    case PH_DONE:     return TR_TRAIN_DONE;
    case PH_FAILED:   return t->fault.code;
    case PH_STEP:     return step_next(t);
    case PH_SYNC_GO:
    case PH_EPOCH_GO: return bn_average_start(t);
    case PH_EVAL:     return tr_train_priv_evaluate(t);
    case PH_BACKWARD: return backward_run(t);
    case PH_GRADS:    return grads_step(t, rep);
    case PH_AVG_GO:   return average_start(t);
    case PH_CHANGE:
    case PH_CHANGED:
    case PH_LOST:
    case PH_RE_ARMED: return tr_train_priv_elastic(t, rep);
    default:          break;
    }
    if ((rc = wait_coll(t, what_of(t->phase))) != 0)
        return rc;            /* TR_ERR_AGAIN, a failure, or TR_TRAIN_LOST */
    return collective_done(t, rep);
}

int tr_train_poll(struct tr_train *t, struct tr_train_report *rep)
{
    struct tr_train_report scratch;
    int rc;
    if (!t)
        return TR_ERR_INVAL;
    if (!rep)
        rep = &scratch;
    do
        rc = advance(t, rep);
    while (rc == 0 && t->phase != PH_DONE);
    return rc;
}

unsigned tr_train_want(const struct tr_train *t)
{
    return t->cfg.world > 1 ? tr_comm_want(&t->comm) : 0;
}

int tr_train_wait(struct tr_train *t, uint32_t max_ms)
{
    const struct tr_transport *tp = t->cfg.tp;
    uint32_t elapsed, remain, limit;
    int rc;
    if (t->cfg.world == 1 || !t->comm.active)
        return t->phase == PH_FAILED ? t->fault.code : 0;
    /* at most until the collective's own deadline, which progress checks */
    limit = t->comm.cfg.timeout_ms;
    elapsed = tp->now_ms(tp->ctx) - t->comm.run.last_ms;
    remain = elapsed < limit ? limit - elapsed : 0;
    rc = tp->poll(tp->ctx, tr_train_want(t), remain < max_ms ? remain : max_ms);
    if (rc < 0 && rc != TR_ERR_AGAIN) {
        if (t->cfg.elastic) {
            tr_train_priv_lost(t, what_of(t->phase), rc, -1);
            return 0;         /* the next poll returns TR_TRAIN_LOST */
        }
        return fail(t, what_of(t->phase), rc, -1);
    }
    return 0;
}

int tr_train_next(struct tr_train *t, struct tr_train_report *rep)
{
    for (;;) {
        int rc = tr_train_poll(t, rep);
        if (rc != TR_ERR_AGAIN)
            return rc;
        if ((rc = tr_train_wait(t, UINT32_MAX)) < 0)
            return rc;
    }
}
