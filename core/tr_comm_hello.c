/* tinyring: the hello on both ring links.
 *
 * Each rank sends one 64-byte message (header of kind HELLO + payload:
 * version, byte-order mark, job token, rank, world, layout hash, segment
 * size) on LEFT and
 * on RIGHT, and reads one from each. Bad magic or an unexpected header is a
 * stranger: TR_ERR_PROTO at once. Any disagreement in the payload (or a
 * neighbour that is not the rank the ring says it should be) is
 * TR_ERR_MISMATCH; the rank still finishes sending its own hellos first so
 * that the peer sees the mismatch too instead of a timeout, and then a
 * verdict goes once around the ring so that every rank reports it (below).
 *
 * Scratch use: [0,64) the outgoing message, [64,128) from LEFT,
 * [128,192) from RIGHT. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"
#include "tr_error.h"

#define MSG (TR_WIRE_HDR_BYTES + TR_WIRE_HELLO_BYTES)

/* The header of a hello (step 0, the 32-byte hello follows) or of verdict k
 * (step k + 1, nothing follows; flags 1 and root = the rank that disagreed,
 * or flags 0 and root 0), encoded into out. */
static void hello_hdr(uint8_t out[TR_WIRE_HDR_BYTES], uint32_t step, uint32_t length,
                      uint8_t flags, uint32_t root)
{
    struct tr_wire_hdr h;
    h.magic = TR_WIRE_MAGIC;
    h.version = (uint8_t)TR_PROTO_VERSION;
    h.kind = TR_KIND_HELLO;
    h.op = 0;
    h.flags = flags;
    h.seq = 0;
    h.step = step;
    h.root = root;
    h.offset = 0;
    h.length = length;
    h.total = length;
    tr_wire_put_hdr(out, &h);
}

/* Is p, all 32 bytes of it, the header hello_hdr would write? */
static int hdr_is(const uint8_t *p, uint32_t step, uint32_t length, uint8_t flags,
                  uint32_t root)
{
    uint8_t want[TR_WIRE_HDR_BYTES];
    unsigned i;
    hello_hdr(want, step, length, flags, root);
    for (i = 0; i < TR_WIRE_HDR_BYTES; i++)
        if (p[i] != want[i])
            return 0;
    return 1;
}

static int hello_fail(struct tr_comm *c, int code, int peer)
{
    tr_comm_fail(c, code, TR_PHASE_HELLO, peer);
    c->broken = code;
    c->active = TR_KIND_IDLE;
    return code;
}

int tr_comm_hello_start(struct tr_comm *c)
{
    struct tr_wire_hello m;
    struct tr_comm_xfer *xs[4];
    unsigned i;

    if (!c)
        return TR_ERR_INVAL;
    if (c->active)
        return TR_ERR_BUSY;
    if (c->broken)
        return tr_comm_fail(c, c->broken, TR_PHASE_HELLO, -1);
    c->fault.code = 0;
    c->fault.phase = TR_PHASE_NONE;
    c->fault.peer = -1;
    c->fault.peer_rank = -1;
    c->fault.seq = 0;
    c->fault.peer_version = 0;
    if (c->cfg.world == 1) {
        c->hello_done = 1;
        return 0;
    }
    c->hello_done = 0;
    c->seq = 0;

    m.version = TR_PROTO_VERSION;
    m.bom = TR_WIRE_BOM;
    m.token = c->cfg.job_token;
    m.rank = (uint32_t)c->cfg.rank;
    m.world = (uint32_t)c->cfg.world;
    m.layout = c->cfg.layout_hash;
    m.segment = c->cfg.segment_bytes;
    hello_hdr(c->scratch, 0, TR_WIRE_HELLO_BYTES, 0, 0);
    tr_wire_put_hello(c->scratch + TR_WIRE_HDR_BYTES, &m);

    xs[0] = &c->run.tx;
    xs[1] = &c->run.tx2;
    xs[2] = &c->run.rx;
    xs[3] = &c->run.rx2;
    for (i = 0; i < 4; i++) {
        xs[i]->step = 0;
        xs[i]->nsteps = 1;
        xs[i]->seg = 0;
        xs[i]->nseg = 1;
        xs[i]->done = 0;
        xs[i]->phase = TR_PHASE_HELLO;
    }
    c->run.kind = TR_KIND_HELLO;
    c->run.pending_err = 0;
    c->run.pending_peer = -1;
    c->run.pending_rank = -1;
    c->run.hello_stage = 0;
    c->active = TR_KIND_HELLO;
    c->run.last_ms = c->tp->now_ms(c->tp->ctx);
    return tr_comm_hello_progress(c);
}

int tr_comm_hello(struct tr_comm *c)
{
    int rc = tr_comm_hello_start(c);
    if (rc != TR_ERR_AGAIN)
        return rc;
    return tr_comm_wait(c);
}

/* Checks a complete header (32 bytes) from a neighbour: every field,
 * reserved ones too. Another version is a mismatch, anything else a
 * stranger. */
static int check_hdr(struct tr_comm *c, const uint8_t *p)
{
    struct tr_wire_hdr h;
    tr_wire_get_hdr(&h, p);
    if (h.magic != TR_WIRE_MAGIC)
        return TR_ERR_PROTO;
    if (h.version != TR_PROTO_VERSION) {
        c->fault.peer_version = h.version;   /* the message can say so */
        return TR_ERR_MISMATCH;
    }
    return hdr_is(p, 0, TR_WIRE_HELLO_BYTES, 0, 0) ? 0 : TR_ERR_PROTO;
}

static int check_hello(const struct tr_comm *c, const uint8_t *p, int peer)
{
    struct tr_wire_hello m;
    tr_wire_get_hello(&m, p);
    if (m.version != TR_PROTO_VERSION || m.bom != TR_WIRE_BOM ||
        m.token != c->cfg.job_token || m.world != (uint32_t)c->cfg.world ||
        m.layout != c->cfg.layout_hash || m.segment != c->cfg.segment_bytes ||
        m.rank != (uint32_t)tr_comm_neighbour(c, peer))
        return TR_ERR_MISMATCH;
    return 0;
}

/* Moves bytes of one hello message; returns 0, or an error to fail with
 * (the mismatch case is parked in pending_err instead). */
static int pump(struct tr_comm *c, struct tr_comm_xfer *x, int is_tx, int peer,
                uint8_t *msg, int *moved)
{
    while (x->step < x->nsteps) {
        long n = tr_comm_io(c, is_tx, peer, msg + x->done, MSG - x->done);
        uint32_t before = x->done;
        int rc = 0;
        if (n <= 0)
            return (int)n;
        x->done += (uint32_t)n;
        *moved = 1;
        if (is_tx) {
            if (x->done == MSG)
                x->step = 1;
            continue;
        }
        /* a stranger is refused after its first four bytes */
        if (before < 4 && x->done >= 4 &&
            (msg[0] != (uint8_t)TR_WIRE_MAGIC || msg[1] != (uint8_t)(TR_WIRE_MAGIC >> 8) ||
             msg[2] != (uint8_t)(TR_WIRE_MAGIC >> 16) || msg[3] != (uint8_t)(TR_WIRE_MAGIC >> 24)))
            return TR_ERR_PROTO;
        if (before < TR_WIRE_HDR_BYTES && x->done >= TR_WIRE_HDR_BYTES)
            rc = check_hdr(c, msg);
        if (rc == 0 && x->done == MSG)
            rc = check_hello(c, msg + TR_WIRE_HDR_BYTES, peer);
        if (rc == TR_ERR_MISMATCH) {
            if (!c->run.pending_err) {
                c->run.pending_err = rc;
                c->run.pending_peer = peer;
                c->run.pending_rank = tr_comm_neighbour(c, peer);
            }
            x->step = 1;                /* read no more from this link */
            return 0;
        }
        if (rc < 0)
            return rc;
        if (x->done == MSG)
            x->step = 1;
    }
    return 0;
}

/* ---- stage 1: the exchange on both links -------------------------------- */

static int exchange(struct tr_comm *c, int *moved)
{
    struct tr_comm_run *u = &c->run;
    uint8_t *s = c->scratch;
    int rc;
    if ((rc = pump(c, &u->tx, 1, TR_RIGHT, s, moved)) < 0)
        return hello_fail(c, rc, TR_RIGHT);
    if ((rc = pump(c, &u->tx2, 1, TR_LEFT, s, moved)) < 0)
        return hello_fail(c, rc, TR_LEFT);
    if (!u->pending_err) {
        if ((rc = pump(c, &u->rx, 0, TR_LEFT, s + MSG, moved)) < 0)
            return hello_fail(c, rc, TR_LEFT);
        if ((rc = pump(c, &u->rx2, 0, TR_RIGHT, s + 2 * MSG, moved)) < 0)
            return hello_fail(c, rc, TR_RIGHT);
    }
    return 0;
}

/* ---- stage 2: the verdict ring ---------------------------------------------
 * A mismatch is seen only by the neighbours of the odd rank out; so that
 * every rank reports it, N-1 header-only messages go around the ring, each
 * saying "all agreed so far" (flags 0) or "rank X disagreed" (flags 1,
 * root = X). A rank that knows of a mismatch sends all its verdicts at once
 * and stops reading; one that does not forwards step k after reading
 * step k-1, as in the barrier, and adopts a bad verdict it reads. */

static void verdict_hdr(const struct tr_comm *c, uint32_t k, uint8_t *out)
{
    if (c->run.pending_err)
        hello_hdr(out, k + 1u, 0, 1, (uint32_t)c->run.pending_rank);
    else
        hello_hdr(out, k + 1u, 0, 0, 0);
}

/* Is p verdict k as a rank of this world sends it? A bad verdict must name
 * a rank of this world. */
static int verdict_ok(const struct tr_comm *c, const uint8_t *p, uint32_t k)
{
    struct tr_wire_hdr h;
    tr_wire_get_hdr(&h, p);
    if (h.flags == 1 && h.root >= (uint32_t)c->cfg.world)
        return 0;
    return (h.flags == 0 || h.flags == 1) && hdr_is(p, k + 1u, 0, h.flags, h.flags ? h.root : 0);
}

/* Sends the verdicts due. Returns 0 or the error failed with. */
static int verdict_send(struct tr_comm *c, int *moved)
{
    struct tr_comm_run *u = &c->run;

    while (u->tx.step < u->tx.nsteps) {
        long n;
        if (u->tx.done == 0) {
            if (!u->pending_err && u->rx.step < u->tx.step)
                break;
            verdict_hdr(c, u->tx.step, u->tx.hdr);
        }
        n = tr_comm_io(c, 1, TR_RIGHT, u->tx.hdr + u->tx.done, TR_WIRE_HDR_BYTES - u->tx.done);
        if (n == 0)
            break;
        if (n < 0)
            return hello_fail(c, (int)n, TR_RIGHT);
        *moved = 1;
        u->tx.done += (uint32_t)n;
        if (u->tx.done == TR_WIRE_HDR_BYTES) {
            u->tx.done = 0;
            u->tx.step++;
        }
    }
    return 0;
}

/* Reads the verdicts from the left, adopting a bad one. Returns 0 or the
 * error failed with. */
static int verdict_recv(struct tr_comm *c, int *moved)
{
    struct tr_comm_run *u = &c->run;

    while (!u->pending_err && u->rx.step < u->rx.nsteps) {
        struct tr_wire_hdr h;
        long n = tr_comm_io(c, 0, TR_LEFT, u->rx.hdr + u->rx.done,
                            TR_WIRE_HDR_BYTES - u->rx.done);
        if (n == 0)
            break;
        if (n < 0)
            return hello_fail(c, (int)n, TR_LEFT);
        *moved = 1;
        u->rx.done += (uint32_t)n;
        if (u->rx.done < TR_WIRE_HDR_BYTES)
            continue;
        if (!verdict_ok(c, u->rx.hdr, u->rx.step))
            return hello_fail(c, TR_ERR_PROTO, TR_LEFT);
        tr_wire_get_hdr(&h, u->rx.hdr);
        if (h.flags) {
            u->pending_err = TR_ERR_MISMATCH;
            u->pending_peer = -1;
            u->pending_rank = (int)h.root;
        }
        u->rx.done = 0;
        u->rx.step++;
    }
    return 0;
}

static void verdict_arm(struct tr_comm *c)
{
    struct tr_comm_run *u = &c->run;
    u->hello_stage = 1;
    u->tx.step = u->rx.step = 0;
    u->tx.done = u->rx.done = 0;
    u->tx.nsteps = u->rx.nsteps = (uint32_t)c->cfg.world - 1u;
}

static int finish_bad(struct tr_comm *c)
{
    struct tr_comm_run *u = &c->run;
    tr_comm_fail(c, u->pending_err, TR_PHASE_HELLO, u->pending_peer);
    if (u->pending_peer < 0)
        c->fault.peer_rank = u->pending_rank;
    c->broken = u->pending_err;
    c->active = TR_KIND_IDLE;
    return u->pending_err;
}

int tr_comm_hello_progress(struct tr_comm *c)
{
    struct tr_comm_run *u = &c->run;
    int any = 0;
    uint32_t now;

    for (;;) {
        int moved = 0;
        if (u->hello_stage == 0) {
            if (exchange(c, &moved) < 0)
                return c->fault.code;
            if (u->tx.step && u->tx2.step &&
                (u->pending_err || (u->rx.step && u->rx2.step))) {
                verdict_arm(c);
                moved = 1;
            }
        } else {
            if (verdict_send(c, &moved) < 0 || verdict_recv(c, &moved) < 0)
                return c->fault.code;
            if (u->tx.step >= u->tx.nsteps &&
                (u->pending_err || u->rx.step >= u->rx.nsteps)) {
                if (u->pending_err)
                    return finish_bad(c);
                c->active = TR_KIND_IDLE;
                c->hello_done = 1;
                return 0;
            }
        }
        if (!moved)
            break;
        any = 1;
    }
    now = c->tp->now_ms(c->tp->ctx);
    if (any) {
        u->last_ms = now;
    } else if (now - u->last_ms >= c->cfg.timeout_ms) {
        if (u->pending_err)
            return finish_bad(c);       /* the news matters more than the stall */
        if (u->hello_stage == 1)
            return hello_fail(c, TR_ERR_TIMEOUT,
                              u->rx.step < u->rx.nsteps ? TR_LEFT : TR_RIGHT);
        if (!u->rx.step)
            return hello_fail(c, TR_ERR_TIMEOUT, TR_LEFT);
        if (!u->rx2.step)
            return hello_fail(c, TR_ERR_TIMEOUT, TR_RIGHT);
        return hello_fail(c, TR_ERR_TIMEOUT, !u->tx.step ? TR_RIGHT : TR_LEFT);
    }
    return TR_ERR_AGAIN;
}

unsigned tr_comm_hello_want(const struct tr_comm *c)
{
    const struct tr_comm_run *u = &c->run;
    unsigned w = 0;
    if (u->hello_stage == 1) {
        if (u->tx.step < u->tx.nsteps && (u->pending_err || u->rx.step >= u->tx.step))
            w |= TR_POLL_SEND(TR_RIGHT);
        if (!u->pending_err && u->rx.step < u->rx.nsteps)
            w |= TR_POLL_RECV(TR_LEFT);
        return w;
    }
    if (!u->tx.step)
        w |= TR_POLL_SEND(TR_RIGHT);
    if (!u->tx2.step)
        w |= TR_POLL_SEND(TR_LEFT);
    if (!u->pending_err) {
        if (!u->rx.step)
            w |= TR_POLL_RECV(TR_LEFT);
        if (!u->rx2.step)
            w |= TR_POLL_RECV(TR_RIGHT);
    }
    return w;
}
