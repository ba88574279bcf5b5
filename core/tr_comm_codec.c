/* tinyring: the compressed ring allreduce (contract in tr_comm.h, formats
 * in tr_codec.h).
 *
 * The steps are the ring's (tr_comm_ring.c: the same chunk of the same
 * step, the same pipeline), over the encoded image of the range: chunk i
 * holds values [voff, voff+vcnt) of the caller's floats x and bytes
 * [eoff, eoff+elen) of the wire image, each chunk encoded from its own
 * first value (so a block never spans two chunks, nor leaves the range the
 * caller gave). A segment is a whole number of blocks; only a chunk's last
 * segment may end in a short block.
 *
 * With N = world, r = rank (the ring's indices):
 *   start     x += residual; chunk r of x encoded into the image (the
 *             error into residual): what reduce-scatter step 0 sends.
 *   reduce-scatter step k < N-2 receives chunk (r-k-1): x = decoded + x
 *             (the partial sum so far first, then this rank's value), that
 *             encoded into the image (error into residual), sent at k+1.
 *   step N-2  receives chunk r+1, the last contribution: the same, then
 *             x = decoded(image) (/ N for TR_OP_AVG): the owner keeps what
 *             it sends, not the sum it had.
 *   all-gather receives each other chunk straight into the image and
 *             decodes it: x = decoded (/ N).
 * Every rank encodes each element exactly once, so residual is rewritten
 * whole; the sum delivered is sum(g + residual_before) - sum(residual_after),
 * i.e. whatever a hop loses is added back by that rank at the next call.
 *
 * World 2 is an exchange instead (TR_KIND_CODEC_EXCHANGE), as the plain
 * ring's is (tr_comm_ring.c): each rank encodes its whole range once (the
 * error into residual) and both send their image at the same time; each
 * then holds x = decoded(peer's) + decoded(own) (/ 2). Both add rank 0's
 * decoded value and rank 1's, so by IEEE addition's commutativity the bits
 * are the same on both (no NaN can reach the add: decoding refuses it). The
 * bytes each rank sends are the same as the ring's (half in reduce-scatter,
 * half in all-gather is all of it at N = 2), but in one round instead of
 * two, with no turn-around: the ring's all-gather could only start when its
 * reduce-scatter had arrived and the trainer next called progress, which
 * within a step's backward is the next layer boundary. Only one
 * quantization now: the sum is not encoded again. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_codec.h"
#include "tr_comm_internal.h"
#include "tr_error.h"

/* Chunk i of count values over world: values and wire bytes. */
static void cchunk(int codec, uint32_t count, uint32_t world, uint32_t i, uint32_t *voff,
                   uint32_t *vcnt, uint32_t *eoff, uint32_t *elen)
{
    uint32_t base = count / world, rem = count % world;
    uint32_t big = i < rem ? i : rem;
    *voff = i * base + big;
    *vcnt = base + (i < rem ? 1u : 0u);
    *eoff = (uint32_t)(big * tr_codec_bytes(codec, base + 1u) +
                       (i - big) * tr_codec_bytes(codec, base));
    *elen = (uint32_t)tr_codec_bytes(codec, *vcnt);
}

size_t tr_allreduce_codec_wire_size(int codec, size_t count, int world)
{
    uint32_t voff, vcnt, eoff, elen;
    if (!tr_codec_valid(codec) || world < 1 || count > 0x3FFFFFFFu)
        return 0;
    cchunk(codec, (uint32_t)count, (uint32_t)world, (uint32_t)world - 1u, &voff, &vcnt,
           &eoff, &elen);
    return (size_t)eoff + elen;
}

void tr_comm_codec_step(const struct tr_comm *c, int is_tx, uint32_t k,
                        struct tr_comm_step *st)
{
    long n = c->cfg.world;
    int rs = (long)k < n - 1;
    uint32_t idx = tr_comm_ring_index(n, c->cfg.rank, is_tx, k);

    if (c->run.kind == TR_KIND_CODEC_EXCHANGE) {
        /* the whole range's image both ways, one step */
        cchunk(c->run.codec, c->run.count, 1u, 0u, &st->voff, &st->vcnt, &st->off, &st->len);
        st->dep = -1;
        st->phase = TR_PHASE_REDUCE_SCATTER;
        st->mode = TR_RX_CODEC_SWAP;
        return;
    }

    cchunk(c->run.codec, c->run.count, (uint32_t)n, idx, &st->voff, &st->vcnt, &st->off,
           &st->len);
    st->dep = is_tx && k > 0 ? (int)k - 1 : -1;
    st->phase = rs ? TR_PHASE_REDUCE_SCATTER : TR_PHASE_ALL_GATHER;
    if (!rs)
        st->mode = TR_RX_CODEC_COPY;
    else if ((long)k == n - 2)
        st->mode = TR_RX_CODEC_LAST;
    else
        st->mode = TR_RX_CODEC_ADD;
}

static void finish(struct tr_comm *c, float *x, uint32_t n)
{
    uint32_t i;
    if (c->run.op == TR_OP_AVG) {
        float w = (float)c->cfg.world;
        for (i = 0; i < n; i++)
            x[i] = x[i] / w;
    }
}

int tr_comm_codec_apply(struct tr_comm *c)
{
    struct tr_comm_xfer *r = &c->run.rx;
    uint32_t first = r->seg * c->run.seg_vals;
    uint32_t n = r->vcnt - first;
    uint32_t off = r->off + r->seg * c->run.seg;
    uint8_t *img = (uint8_t *)c->buf + off;
    float *x = c->run.cx + r->voff + first;
    float *res = c->run.cres ? c->run.cres + r->voff + first : NULL;
    int codec = c->run.codec, rc;

    if (n > c->run.seg_vals)
        n = c->run.seg_vals;
    if (r->mode == TR_RX_CODEC_COPY) {
        rc = tr_codec_decode(codec, img, n, x);
        if (rc < 0)
            return rc;
        finish(c, x, n);
        return 0;
    }
    if (r->mode == TR_RX_CODEC_SWAP) {
        /* img: this rank's own bytes (they went out from there, unchanged) */
        if ((rc = tr_codec_decode(codec, img, n, x)) < 0 ||
            (rc = tr_codec_decode_add(codec, c->scratch, n, x)) < 0)
            return rc;
        if (!tr_codec_finite(x, n))
            return TR_ERR_RANGE;            /* the sum overflowed, as the ring's encode says */
        finish(c, x, n);
        return 0;
    }
    rc = tr_codec_decode_add(codec, c->scratch, n, x);
    if (rc < 0)
        return rc;
    rc = tr_codec_encode(codec, x, n, img, res);   /* TR_ERR_RANGE: a sum overflowed */
    if (rc < 0 || r->mode != TR_RX_CODEC_LAST)
        return rc;
    rc = tr_codec_decode(codec, img, n, x);
    if (rc < 0)
        return rc;
    finish(c, x, n);
    return 0;
}

int tr_allreduce_codec_start(struct tr_comm *c, float *buf, size_t count, enum tr_op op,
                             int codec, float *residual, void *wire, size_t wire_bytes)
{
    uint32_t n, r, voff, vcnt, eoff, elen, bb = tr_codec_block_bytes(codec);
    size_t i;
    int rc, kind;

    if (c && c->active)
        return TR_ERR_BUSY;             /* keep the running one's fault */
    if (codec == TR_CODEC_NONE)
        return tr_allreduce_start(c, buf, count, op, TR_ALGO_RING);
    if (!c || !tr_codec_valid(codec) || (count > 0 && !buf) || count > 0x3FFFFFFFu ||
        (op != TR_OP_SUM && op != TR_OP_AVG) || (residual && residual == buf))
        return c ? tr_comm_fail(c, TR_ERR_INVAL, TR_PHASE_NONE, -1) : TR_ERR_INVAL;
    if (c->cfg.world > 1) {
        /* before the sequence number moves: a refusal leaves the ring in step */
        if (c->cfg.segment_bytes < bb)
            return tr_comm_fail(c, TR_ERR_INVAL, TR_PHASE_NONE, -1);
        if (!wire || wire_bytes < tr_allreduce_codec_wire_size(codec, count, c->cfg.world))
            return tr_comm_fail(c, TR_ERR_NOMEM, TR_PHASE_NONE, -1);
        /* refuse NaN and infinity before anything moves or changes */
        for (i = 0; i < count; i++) {
            float v = residual ? buf[i] + residual[i] : buf[i];
            if (!tr_codec_finite(&v, 1))
                return tr_comm_fail(c, TR_ERR_RANGE, TR_PHASE_NONE, -1);
        }
    }
    if ((rc = tr_comm_start_floats(c, buf, count, op)) != 0)
        return rc < 0 ? rc : 0;
    if (residual)
        for (i = 0; i < count; i++)
            buf[i] = buf[i] + residual[i];
    n = (uint32_t)c->cfg.world;
    r = (uint32_t)c->cfg.rank;
    kind = n == 2u ? TR_KIND_CODEC_EXCHANGE : TR_KIND_RING_CODEC;
    c->run.codec = codec;
    c->run.count = (uint32_t)count;
    c->run.cx = buf;
    c->run.cres = residual;
    c->run.seg = c->cfg.segment_bytes / bb * bb;
    c->run.seg_vals = c->cfg.segment_bytes / bb * tr_codec_block_values(codec);
    c->run.kind = kind;
    c->run.op = (int)op;
    c->run.tx.nsteps = kind == TR_KIND_CODEC_EXCHANGE ? 1u : 2u * (n - 1u);
    c->run.rx.nsteps = c->run.tx.nsteps;
    /* the exchange encodes the whole range (one chunk), the ring chunk r */
    if (kind == TR_KIND_CODEC_EXCHANGE)
        cchunk(codec, (uint32_t)count, 1u, 0u, &voff, &vcnt, &eoff, &elen);
    else
        cchunk(codec, (uint32_t)count, n, r, &voff, &vcnt, &eoff, &elen);
    rc = tr_codec_encode(codec, buf + voff, vcnt, (uint8_t *)wire + eoff,
                         residual ? residual + voff : NULL);
    if (rc < 0)
        return tr_comm_fail(c, rc, TR_PHASE_NONE, -1);   /* checked above: not reached */
    return tr_comm_engine_start(c, kind, wire,
                                kind == TR_KIND_CODEC_EXCHANGE
                                    ? elen
                                    : (uint32_t)tr_allreduce_codec_wire_size(codec, count, (int)n),
                                1, (int)op, codec);
}

int tr_allreduce_codec(struct tr_comm *c, float *buf, size_t count, enum tr_op op,
                       int codec, float *residual, void *wire, size_t wire_bytes)
{
    int rc = tr_allreduce_codec_start(c, buf, count, op, codec, residual, wire, wire_bytes);
    if (rc != TR_ERR_AGAIN)
        return rc;
    return tr_comm_wait(c);
}
