/* tinyring: reduce to a root and broadcast from a root (the chain shapes of
 * tr_comm_chain.c with one half each). */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"
#include "tr_error.h"

int tr_reduce_start(struct tr_comm *c, float *buf, size_t count, enum tr_op op, int root)
{
    int rc;
    if (c && c->active)
        return TR_ERR_BUSY;             /* keep the running one's fault */
    if (!c || (count > 0 && !buf) || count > 0x3FFFFFFFu ||
        (op != TR_OP_SUM && op != TR_OP_AVG) || root < 0 || root >= c->cfg.world)
        return c ? tr_comm_fail(c, TR_ERR_INVAL, TR_PHASE_NONE, -1) : TR_ERR_INVAL;
    if ((rc = tr_comm_start_floats(c, buf, count, op)) != 0)
        return rc < 0 ? rc : 0;
    c->run.kind = TR_KIND_REDUCE;
    c->run.op = (int)op;
    c->run.root = root;
    tr_comm_chain_plan(c);
    return tr_comm_engine_start(c, TR_KIND_REDUCE, buf, (uint32_t)count * 4u, 4,
                                (int)op, root);
}

int tr_broadcast_start(struct tr_comm *c, void *buf, size_t bytes, int root)
{
    int rc;
    if (c && c->active)
        return TR_ERR_BUSY;             /* keep the running one's fault */
    if (!c || (bytes > 0 && !buf) || bytes > 0xFFFFFFFFu || root < 0 ||
        root >= c->cfg.world)
        return c ? tr_comm_fail(c, TR_ERR_INVAL, TR_PHASE_NONE, -1) : TR_ERR_INVAL;
    rc = tr_comm_start_check(c);
    if (rc < 0 || c->cfg.world == 1)
        return rc;
    c->run.kind = TR_KIND_BCAST;
    c->run.op = 0;
    c->run.root = root;
    tr_comm_chain_plan(c);
    return tr_comm_engine_start(c, TR_KIND_BCAST, buf, (uint32_t)bytes, 1, 0, root);
}

int tr_reduce(struct tr_comm *c, float *buf, size_t count, enum tr_op op, int root)
{
    int rc = tr_reduce_start(c, buf, count, op, root);
    if (rc != TR_ERR_AGAIN)
        return rc;
    return tr_comm_wait(c);
}

int tr_broadcast(struct tr_comm *c, void *buf, size_t bytes, int root)
{
    int rc = tr_broadcast_start(c, buf, bytes, root);
    if (rc != TR_ERR_AGAIN)
        return rc;
    return tr_comm_wait(c);
}
