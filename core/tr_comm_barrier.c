/* tinyring: barrier.
 *
 * N-1 steps of header-only messages around the ring; each rank sends step k
 * only after it received step k-1. The message a rank receives at step k
 * carries (causally) the arrival of the k+1 ranks to its left, so after step
 * N-2 every rank knows all N have entered. Latency: N-1 hops. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"
#include "tr_error.h"

void tr_comm_barrier_step(const struct tr_comm *c, int is_tx, uint32_t k,
                          struct tr_comm_step *st)
{
    (void)c;
    st->off = 0;
    st->len = 0;
    st->dep = is_tx && k > 0 ? (int)k - 1 : -1;
    st->mode = TR_RX_COPY;
    st->phase = TR_PHASE_BARRIER;
}

int tr_barrier_start(struct tr_comm *c)
{
    int rc = tr_comm_start_check(c);
    if (rc < 0)
        return rc;
    if (c->cfg.world == 1)
        return 0;
    c->run.tx.nsteps = (uint32_t)c->cfg.world - 1u;
    c->run.rx.nsteps = (uint32_t)c->cfg.world - 1u;
    return tr_comm_engine_start(c, TR_KIND_BARRIER, NULL, 0, 1, 0, 0);
}

int tr_barrier(struct tr_comm *c)
{
    int rc = tr_barrier_start(c);
    if (rc != TR_ERR_AGAIN)
        return rc;
    return tr_comm_wait(c);
}
