/* tinyring: communicator setup, the progress dispatch, the blocking loop and
 * fault reporting. Hello is in tr_comm_hello.c, the byte engine in
 * tr_comm_engine.c, each collective's shape in its own file. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"
#include "tr_error.h"

static uint32_t seg_of(const struct tr_comm_config *cfg)
{
    return cfg->segment_bytes ? cfg->segment_bytes : TR_COMM_DEFAULT_SEGMENT;
}

/* Scratch: one staging segment for reductions; hello borrows its first
 * 3 x 64 bytes for its messages (hence at least 192). */
size_t tr_comm_scratch_size(const struct tr_comm_config *cfg)
{
    uint32_t s;
    if (!cfg || cfg->world <= 1)
        return 0;
    s = seg_of(cfg);
    return s < 3u * (TR_WIRE_HDR_BYTES + TR_WIRE_HELLO_BYTES)
               ? 3u * (TR_WIRE_HDR_BYTES + TR_WIRE_HELLO_BYTES) : s;
}

int tr_comm_init(struct tr_comm *c, const struct tr_comm_config *cfg,
                 const struct tr_transport *tp, void *scratch, size_t scratch_size)
{
    size_t need;
    uint32_t s;
    uint8_t *p;
    size_t i;

    if (!c || !cfg || cfg->world < 1 || cfg->rank < 0 || cfg->rank >= cfg->world)
        return TR_ERR_INVAL;
    s = seg_of(cfg);
    if (s % 4u != 0 || s < TR_COMM_MIN_SEGMENT)
        return TR_ERR_INVAL;
    if (cfg->world > 1) {
        if (!tp || !tp->send || !tp->recv || !tp->poll || !tp->now_ms)
            return TR_ERR_INVAL;
        if (scratch && ((uintptr_t)scratch & 3u))
            return TR_ERR_INVAL;
    }
    need = tr_comm_scratch_size(cfg);
    if (need > 0 && (!scratch || scratch_size < need))
        return TR_ERR_NOMEM;

    p = (uint8_t *)c;
    for (i = 0; i < sizeof *c; i++)
        p[i] = 0;
    c->cfg = *cfg;
    c->cfg.segment_bytes = s;
    if (c->cfg.timeout_ms == 0)
        c->cfg.timeout_ms = TR_COMM_DEFAULT_TIMEOUT_MS;
    c->tp = cfg->world > 1 ? tp : NULL;
    c->scratch = (uint8_t *)scratch;
    c->scratch_size = scratch_size;
    c->hello_done = cfg->world == 1;
    c->fault.peer = -1;
    c->fault.peer_rank = -1;
    return 0;
}

int tr_comm_neighbour(const struct tr_comm *c, int peer)
{
    int n = c->cfg.world;
    return peer == TR_LEFT ? (c->cfg.rank - 1 + n) % n : (c->cfg.rank + 1) % n;
}

int tr_comm_fail(struct tr_comm *c, int code, int phase, int peer)
{
    c->fault.code = code;
    c->fault.phase = phase;
    c->fault.peer = peer;
    c->fault.peer_rank = peer >= 0 ? tr_comm_neighbour(c, peer) : -1;
    c->fault.seq = c->seq;
    return code;
}

int tr_comm_start_check(struct tr_comm *c)
{
    if (!c)
        return TR_ERR_INVAL;
    if (c->active)
        return TR_ERR_BUSY;             /* the running one keeps its fault */
    if (c->broken)
        return tr_comm_fail(c, c->broken, TR_PHASE_NONE, -1);
    if (!c->hello_done)
        return tr_comm_fail(c, TR_ERR_INVAL, TR_PHASE_NONE, -1);
    c->fault.code = 0;
    c->fault.phase = TR_PHASE_NONE;
    c->fault.peer = -1;
    c->fault.peer_rank = -1;
    if (c->cfg.world > 1)
        c->seq++;
    c->fault.seq = c->seq;
    return 0;
}

int tr_comm_start_floats(struct tr_comm *c, float *x, size_t n, enum tr_op op)
{
    int rc = tr_comm_start_check(c);
    if (rc < 0)
        return rc;
    if (c->cfg.world > 1)
        return 0;
    if (op == TR_OP_AVG)
        tr_comm_div(x, n, 1.0f);
    return 1;
}

int tr_comm_progress(struct tr_comm *c)
{
    if (!c)
        return TR_ERR_INVAL;
    switch (c->active) {
    case TR_KIND_IDLE:
        return c->fault.code;
    case TR_KIND_HELLO:
        return tr_comm_hello_progress(c);
    default:
        return tr_comm_engine_progress(c);
    }
}

unsigned tr_comm_want(const struct tr_comm *c)
{
    if (!c || c->active == TR_KIND_IDLE)
        return 0;
    if (c->active == TR_KIND_HELLO)
        return tr_comm_hello_want(c);
    return tr_comm_engine_want(c);
}

int tr_comm_wait(struct tr_comm *c)
{
    const struct tr_transport *tp = c->tp;
    for (;;) {
        uint32_t elapsed, remain;
        int prc, rc = tr_comm_progress(c);
        if (rc != TR_ERR_AGAIN)
            return rc;
        elapsed = tp->now_ms(tp->ctx) - c->run.last_ms;
        remain = elapsed < c->cfg.timeout_ms ? c->cfg.timeout_ms - elapsed : 0;
        prc = tp->poll(tp->ctx, tr_comm_want(c), remain);
        if (prc < 0 && prc != TR_ERR_AGAIN) {
            tr_comm_fail(c, prc, c->run.rx.phase, -1);
            c->broken = prc;
            c->active = TR_KIND_IDLE;
            return prc;
        }
    }
}

const struct tr_comm_fault *tr_comm_last_fault(const struct tr_comm *c)
{
    return &c->fault;
}

const char *tr_comm_phase_name(int phase)
{
    switch (phase) {
    case TR_PHASE_NONE:           return "none";
    case TR_PHASE_HELLO:          return "hello";
    case TR_PHASE_REDUCE_SCATTER: return "reduce-scatter";
    case TR_PHASE_ALL_GATHER:     return "all-gather";
    case TR_PHASE_CHAIN_REDUCE:   return "chain reduce";
    case TR_PHASE_CHAIN_PASS:     return "chain pass";
    case TR_PHASE_REDUCE:         return "reduce";
    case TR_PHASE_BROADCAST:      return "broadcast";
    case TR_PHASE_BARRIER:        return "barrier";
    default:                      return "unknown";
    }
}
