/* tinyring: allreduce entry points; the algorithms are tr_comm_ring.c and
 * tr_comm_chain.c. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"
#include "tr_error.h"

int tr_allreduce_start(struct tr_comm *c, float *buf, size_t count,
                       enum tr_op op, enum tr_algo algo)
{
    return tr_allreduce_range_start(c, buf, count, 0, count, op, algo);
}

int tr_allreduce_range_start(struct tr_comm *c, float *buf, size_t count, size_t lo,
                             size_t hi, enum tr_op op, enum tr_algo algo)
{
    uint32_t total, blo, bhi;
    int rc;
    if (c && c->active)
        return TR_ERR_BUSY;             /* keep the running one's fault */
    if (!c || lo > hi || hi > count || (hi > lo && !buf) || count > 0x3FFFFFFFu ||
        (op != TR_OP_SUM && op != TR_OP_AVG) ||
        (algo != TR_ALGO_RING && algo != TR_ALGO_CHAIN && algo != TR_ALGO_REDUCE_BCAST))
        return c ? tr_comm_fail(c, TR_ERR_INVAL, TR_PHASE_NONE, -1) : TR_ERR_INVAL;
    if ((rc = tr_comm_start_floats(c, buf, hi - lo, op)) != 0)
        return rc < 0 ? rc : 0;
    total = (uint32_t)count * 4u;
    blo = (uint32_t)lo * 4u;
    bhi = (uint32_t)hi * 4u;
    if (algo == TR_ALGO_RING) {
        /* world 2 and one segment: the one-round exchange (tr_comm_ring.c) */
        int kind = c->cfg.world == 2 && (uint64_t)count * 4u <= c->cfg.segment_bytes
                       ? TR_KIND_EXCHANGE : TR_KIND_RING;
        c->run.kind = kind;             /* the step geometry depends on it */
        c->run.op = (int)op;
        c->run.tx.nsteps = kind == TR_KIND_EXCHANGE ? 1u : 2u * ((uint32_t)c->cfg.world - 1u);
        c->run.rx.nsteps = c->run.tx.nsteps;
        return tr_comm_engine_start_range(c, kind, buf, total, blo, bhi, 4, (int)op, 0);
    }
    c->run.kind = algo == TR_ALGO_CHAIN ? TR_KIND_CHAIN : TR_KIND_REDUCE_BCAST;
    c->run.op = (int)op;
    c->run.root = algo == TR_ALGO_CHAIN ? c->cfg.world - 1 : 0;
    tr_comm_chain_plan(c);
    return tr_comm_engine_start_range(c, c->run.kind, buf, total, blo, bhi, 4, (int)op,
                                      c->run.root);
}

int tr_allreduce(struct tr_comm *c, float *buf, size_t count, enum tr_op op, enum tr_algo algo)
{
    int rc = tr_allreduce_start(c, buf, count, op, algo);
    if (rc != TR_ERR_AGAIN)
        return rc;
    return tr_comm_wait(c);
}

int tr_allreduce_range(struct tr_comm *c, float *buf, size_t count, size_t lo, size_t hi,
                       enum tr_op op, enum tr_algo algo)
{
    int rc = tr_allreduce_range_start(c, buf, count, lo, hi, op, algo);
    if (rc != TR_ERR_AGAIN)
        return rc;
    return tr_comm_wait(c);
}
