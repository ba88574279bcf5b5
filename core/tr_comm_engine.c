/* tinyring: the engine every data collective runs on.
 *
 * A collective is, on each rank, a list of send steps (RIGHT link) and a list
 * of receive steps (LEFT link). A step covers a region of the caller's buffer
 * and travels as segments of at most cfg.segment_bytes, each one message:
 * a 32-byte header then the payload. The per-kind files (ring, chain,
 * barrier) only say what each step is; this file moves the bytes.
 *
 * Pipelining: a send step may depend on a receive step over the same region
 * (the ring sends on, at step k+1, the chunk it reduced at step k). Segment s
 * of the send goes out as soon as segment s of that receive is complete, not
 * when the whole step is. Receives never wait for sends, so with any amount
 * of buffering in the links nothing can deadlock.
 *
 * Each tr_comm_progress call pumps sends and receives alternately until
 * neither moves a byte: receives are drained greedily, and a completed
 * receive segment releases the next send at once. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"
#include "tr_error.h"

static uint32_t seg_bytes(const struct tr_comm *c)
{
    return c->run.seg;
}

static void get_step(const struct tr_comm *c, int is_tx, uint32_t k, struct tr_comm_step *st)
{
    switch (c->run.kind) {
    case TR_KIND_RING:
    case TR_KIND_EXCHANGE:
        tr_comm_ring_step(c, is_tx, k, st);
        break;
    case TR_KIND_BARRIER:
        tr_comm_barrier_step(c, is_tx, k, st);
        break;
    case TR_KIND_RING_CODEC:
    case TR_KIND_CODEC_EXCHANGE:
        tr_comm_codec_step(c, is_tx, k, st);
        break;
    default:
        tr_comm_chain_step(c, is_tx, k, st);
        break;
    }
}

/* Loads step x->step (if any is left) and resets the segment position. */
static void load_step(struct tr_comm *c, int is_tx)
{
    struct tr_comm_xfer *x = is_tx ? &c->run.tx : &c->run.rx;
    struct tr_comm_step st;
    uint32_t s = seg_bytes(c);

    x->seg = 0;
    x->done = 0;
    if (x->step >= x->nsteps)
        return;
    st.voff = 0;
    st.vcnt = 0;
    get_step(c, is_tx, x->step, &st);
    x->off = st.off;
    x->len = st.len;
    x->dep = st.dep;
    x->mode = st.mode;
    x->phase = st.phase;
    x->voff = st.voff;
    x->vcnt = st.vcnt;
    x->nseg = st.len == 0 ? 1u : (uint32_t)(((uint64_t)st.len + s - 1u) / s);
}

/* The caller's memory of byte off of the vector (buf holds [lo, hi)). */
static uint8_t *at_byte(const struct tr_comm *c, uint32_t off)
{
    return (uint8_t *)c->buf + (off - c->run.lo);
}

/* Byte offset (in the vector) and length of the current segment of x. */
static uint32_t cur_off(const struct tr_comm *c, const struct tr_comm_xfer *x)
{
    return x->off + x->seg * seg_bytes(c);
}

static uint32_t cur_len(const struct tr_comm *c, const struct tr_comm_xfer *x)
{
    uint32_t at = x->seg * seg_bytes(c);
    uint32_t left = x->len - at;
    return left < seg_bytes(c) ? left : seg_bytes(c);
}

static void fill_hdr(const struct tr_comm *c, const struct tr_comm_xfer *x,
                     struct tr_wire_hdr *h)
{
    h->magic = TR_WIRE_MAGIC;
    h->version = (uint8_t)TR_PROTO_VERSION;
    h->kind = (uint8_t)c->run.kind;
    h->op = (uint8_t)c->run.op;
    h->flags = 0;
    h->seq = c->seq;
    h->step = x->step;
    h->root = (uint32_t)c->run.root;
    h->offset = cur_off(c, x);
    h->length = cur_len(c, x);
    h->total = c->run.total;
}

static void tx_encode(struct tr_comm *c)
{
    struct tr_wire_hdr h;
    if (c->run.tx.step >= c->run.tx.nsteps)
        return;
    fill_hdr(c, &c->run.tx, &h);
    tr_wire_put_hdr(c->run.tx.hdr, &h);
}

/* Next segment (or step) of x. */
static void advance(struct tr_comm *c, int is_tx)
{
    struct tr_comm_xfer *x = is_tx ? &c->run.tx : &c->run.rx;
    x->done = 0;
    if (++x->seg >= x->nseg) {
        x->step++;
        load_step(c, is_tx);
    }
    if (is_tx)
        tx_encode(c);
}

/* Has the receive side completed segment seg of step step? */
static int rx_has(const struct tr_comm *c, int32_t step, uint32_t seg)
{
    const struct tr_comm_xfer *r = &c->run.rx;
    if (step < 0)
        return 1;
    return r->step > (uint32_t)step || (r->step == (uint32_t)step && r->seg > seg);
}

static int engine_fail(struct tr_comm *c, int code, int phase, int peer)
{
    tr_comm_fail(c, code, phase, peer);
    c->broken = code;
    c->active = TR_KIND_IDLE;
    return code;
}

/* Checks what a port call returned for a request of `asked` bytes: the bytes
 * moved (1..asked), 0 for TR_ERR_AGAIN, the port's error, or TR_ERR_IO when
 * the port broke its contract (0 bytes, or more than asked). */
static long io_result(long n, size_t asked)
{
    if (n == TR_ERR_AGAIN)
        return 0;
    if (n < 0)
        return n;
    if (n == 0 || (size_t)n > asked)
        return TR_ERR_IO;
    return n;
}

long tr_comm_io(struct tr_comm *c, int is_tx, int peer, void *buf, size_t len)
{
    const struct tr_transport *tp = c->tp;
    long n = is_tx ? tp->send(tp->ctx, peer, buf, len) : tp->recv(tp->ctx, peer, buf, len);
    return io_result(n, len);
}

long tr_comm_sendv(struct tr_comm *c, int peer, const struct tr_iovec *iov, unsigned n)
{
    const struct tr_transport *tp = c->tp;
    size_t want = 0;
    unsigned i;
    if (n < 2 || !tp->sendv)
        return io_result(tp->send(tp->ctx, peer, iov[0].base, iov[0].len), iov[0].len);
    for (i = 0; i < n; i++)
        want += iov[i].len;
    return io_result(tp->sendv(tp->ctx, peer, iov, n), want);
}

static int tx_pump(struct tr_comm *c, int *moved)
{
    struct tr_comm_xfer *x = &c->run.tx;
    const uint8_t *payload;

    while (x->step < x->nsteps) {
        uint32_t len = cur_len(c, x);
        struct tr_iovec iov[2];
        unsigned niov = 1;
        long n;

        if (x->done == 0 && !rx_has(c, x->dep, x->seg))
            break;                      /* pipeline: wait for the reduced segment */
        /* a header-only message may have no buffer at all (barrier) */
        payload = len > 0 ? at_byte(c, cur_off(c, x)) : NULL;
        if (x->done < TR_WIRE_HDR_BYTES) {
            /* header and payload in one call where the port can: one segment
             * on the wire, one wake-up at the receiver instead of two */
            iov[0].base = x->hdr + x->done;
            iov[0].len = TR_WIRE_HDR_BYTES - x->done;
            iov[1].base = payload;
            iov[1].len = len;
            niov = len > 0 ? 2u : 1u;
        } else {
            iov[0].base = payload + (x->done - TR_WIRE_HDR_BYTES);
            iov[0].len = len - (x->done - TR_WIRE_HDR_BYTES);
        }
        n = tr_comm_sendv(c, TR_RIGHT, iov, niov);
        if (n == 0)
            break;
        if (n < 0)
            return engine_fail(c, (int)n, x->phase, TR_RIGHT);
        x->done += (uint32_t)n;
        *moved = 1;
        if (x->done == TR_WIRE_HDR_BYTES + len)
            advance(c, 1);
    }
    return 0;
}

/* Checks a received header against the one this rank expects. */
static int rx_check(struct tr_comm *c)
{
    struct tr_comm_xfer *x = &c->run.rx;
    struct tr_wire_hdr got, exp;

    tr_wire_get_hdr(&got, x->hdr);
    fill_hdr(c, x, &exp);
    if (got.magic != exp.magic || got.version != exp.version)
        return TR_ERR_PROTO;            /* not one of ours */
    if (got.kind != exp.kind || got.op != exp.op || got.root != exp.root ||
        got.total != exp.total)
        return TR_ERR_MISMATCH;         /* a different call on the peer */
    if (got.seq != exp.seq || got.step != exp.step || got.offset != exp.offset ||
        got.length != exp.length || got.flags != 0)
        return TR_ERR_PROTO;
    return 0;
}

static int rx_apply(struct tr_comm *c)
{
    struct tr_comm_xfer *x = &c->run.rx;
    uint32_t len = cur_len(c, x);
    float *dst;
    const float *stage = (const float *)(void *)c->scratch;

    if (len == 0)
        return 0;                       /* header only (barrier: no buffer) */
    if (c->run.kind == TR_KIND_RING_CODEC || c->run.kind == TR_KIND_CODEC_EXCHANGE)
        return tr_comm_codec_apply(c);
    dst = (float *)(void *)at_byte(c, cur_off(c, x));
    switch (x->mode) {
    case TR_RX_SUM:
        tr_comm_sum(dst, stage, len / 4u);
        break;
    case TR_RX_SUM_DIV:
        tr_comm_sum_div(dst, stage, len / 4u, (float)c->cfg.world);
        break;
    case TR_RX_RSUM:
        tr_comm_rsum(dst, stage, len / 4u);
        break;
    case TR_RX_RSUM_DIV:
        tr_comm_rsum_div(dst, stage, len / 4u, (float)c->cfg.world);
        break;
    default:
        break;                          /* TR_RX_COPY: already in place */
    }
    return 0;
}

/* The exchange (world 2) sends segment s from the very buffer the received
 * segment s is added into: the sum may only land once our own segment s has
 * gone out whole. (Elsewhere the data flow itself guarantees it; the
 * compressed exchange sends its encoded image and writes the floats.) */
static int rx_may_apply(const struct tr_comm *c)
{
    const struct tr_comm_xfer *t = &c->run.tx;
    if (c->run.kind != TR_KIND_EXCHANGE)
        return 1;
    return t->step >= t->nsteps || t->seg > c->run.rx.seg;
}

static int rx_pump(struct tr_comm *c, int *moved)
{
    struct tr_comm_xfer *x = &c->run.rx;

    while (x->step < x->nsteps) {
        uint32_t len = cur_len(c, x);
        void *dst;
        size_t want;
        long n;

        if (x->done == TR_WIRE_HDR_BYTES + len) {
            /* a whole segment (header checked): reduce or copy, move on */
            int rc;
            if (!rx_may_apply(c))
                break;
            rc = rx_apply(c);
            if (rc < 0)
                return engine_fail(c, rc, x->phase, TR_LEFT);
            advance(c, 0);
            continue;
        }
        if (x->done < TR_WIRE_HDR_BYTES) {
            dst = x->hdr + x->done;
            want = TR_WIRE_HDR_BYTES - x->done;
        } else {
            uint32_t at = x->done - TR_WIRE_HDR_BYTES;
            /* all-gather and broadcast land in the caller's buffer directly;
             * reductions go through the staging segment */
            if (x->mode == TR_RX_COPY || x->mode == TR_RX_CODEC_COPY)
                dst = at_byte(c, cur_off(c, x)) + at;
            else
                dst = c->scratch + at;
            want = len - at;
        }
        n = tr_comm_io(c, 0, TR_LEFT, dst, want);
        if (n == 0)
            break;
        if (n < 0)
            return engine_fail(c, (int)n, x->phase, TR_LEFT);
        x->done += (uint32_t)n;
        *moved = 1;
        if (x->done == TR_WIRE_HDR_BYTES) {
            int rc = rx_check(c);
            if (rc < 0)
                return engine_fail(c, rc, x->phase, TR_LEFT);
        }
    }
    return 0;
}

int tr_comm_engine_start(struct tr_comm *c, int kind, void *buf, uint32_t total,
                         uint32_t esize, int op, int root)
{
    return tr_comm_engine_start_range(c, kind, buf, total, 0, total, esize, op, root);
}

int tr_comm_engine_start_range(struct tr_comm *c, int kind, void *buf, uint32_t total,
                               uint32_t lo, uint32_t hi, uint32_t esize, int op, int root)
{
    c->active = kind;
    c->buf = buf;
    c->run.kind = kind;
    c->run.op = op;
    c->run.root = root;
    c->run.total = total;
    c->run.lo = lo;
    c->run.hi = hi;
    c->run.esize = esize;
    if (kind != TR_KIND_RING_CODEC && kind != TR_KIND_CODEC_EXCHANGE)
        c->run.seg = c->cfg.segment_bytes;  /* the codec's start set whole blocks */
    c->run.tx.step = 0;
    c->run.rx.step = 0;
    load_step(c, 1);
    load_step(c, 0);
    tx_encode(c);
    c->run.last_ms = c->tp->now_ms(c->tp->ctx);
    return tr_comm_engine_progress(c);
}

int tr_comm_engine_progress(struct tr_comm *c)
{
    int any = 0;
    uint32_t now;

    for (;;) {
        int moved = 0;
        int rc = tx_pump(c, &moved);
        if (rc < 0)
            return rc;
        rc = rx_pump(c, &moved);
        if (rc < 0)
            return rc;
        if (!moved)
            break;
        any = 1;
    }
    if (c->run.tx.step >= c->run.tx.nsteps && c->run.rx.step >= c->run.rx.nsteps) {
        c->active = TR_KIND_IDLE;
        return 0;
    }
    now = c->tp->now_ms(c->tp->ctx);
    if (any) {
        c->run.last_ms = now;
    } else if (now - c->run.last_ms >= c->cfg.timeout_ms) {
        /* name the link we are starved on: the receive side unless only
         * sends are left */
        if (c->run.rx.step < c->run.rx.nsteps)
            return engine_fail(c, TR_ERR_TIMEOUT, c->run.rx.phase, TR_LEFT);
        return engine_fail(c, TR_ERR_TIMEOUT, c->run.tx.phase, TR_RIGHT);
    }
    return TR_ERR_AGAIN;
}

unsigned tr_comm_engine_want(const struct tr_comm *c)
{
    unsigned w = 0;
    const struct tr_comm_xfer *t = &c->run.tx;
    const struct tr_comm_xfer *r = &c->run.rx;
    if (r->step < r->nsteps &&
        (r->done < TR_WIRE_HDR_BYTES + cur_len(c, r) || rx_may_apply(c)))
        w |= TR_POLL_RECV(TR_LEFT);
    if (t->step < t->nsteps && (t->done > 0 || rx_has(c, t->dep, t->seg)))
        w |= TR_POLL_SEND(TR_RIGHT);
    return w;
}
