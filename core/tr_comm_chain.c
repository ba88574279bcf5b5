/* tinyring: collectives that flow along the ring through a root.
 *
 * Reduce to root R (seed 002): rank R+1 sends its buffer right, each next
 * rank adds what it receives into its own buffer and sends that on, until R
 * adds the last part (and divides, for TR_OP_AVG). Broadcast from R
 * (seed 004's parameter sync): R sends, each rank copies into its buffer and
 * forwards, until R-1. Both are pipelined segment by segment: a rank forwards
 * segment s as soon as it has it.
 *
 * The seeds' chain allreduce (seeds 000/001: accumulate 0 -> 1 -> ... ->
 * N-1, then pass the total around) is exactly reduce to R = N-1 followed by
 * broadcast from N-1; TR_ALGO_REDUCE_BCAST is the same with R = 0. The
 * broadcast part on R depends on R's reduce receive, so the total starts
 * around the ring while later segments are still being summed.
 *
 * Each rank has at most two send steps and two receive steps, all over the
 * whole buffer; tr_comm_chain_plan decides them at start. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"
#include "tr_error.h"

void tr_comm_chain_plan(struct tr_comm *c)
{
    struct tr_comm_run *u = &c->run;
    int n = c->cfg.world, r = c->cfg.rank, root = u->root;
    int do_reduce = u->kind != TR_KIND_BCAST;
    int do_bcast = u->kind != TR_KIND_REDUCE;
    int chain = u->kind == TR_KIND_CHAIN;
    int red_rx = -1, ntx = 0, nrx = 0;

    if (do_reduce) {
        int rel = ((r - root - 1) % n + n) % n;  /* 0 starts, n-1 is the root */
        if (rel > 0) {
            red_rx = nrx;
            u->rx_mode[nrx] = (rel == n - 1 && u->op == TR_OP_AVG) ? TR_RX_SUM_DIV : TR_RX_SUM;
            u->rx_phase[nrx] = chain ? TR_PHASE_CHAIN_REDUCE : TR_PHASE_REDUCE;
            nrx++;
        }
        if (rel < n - 1) {
            u->tx_dep[ntx] = (int8_t)red_rx;
            u->tx_phase[ntx] = chain ? TR_PHASE_CHAIN_REDUCE : TR_PHASE_REDUCE;
            ntx++;
        }
    }
    if (do_bcast) {
        int brel = ((r - root) % n + n) % n;     /* 0 is the root */
        int dep = red_rx;                         /* the root forwards its sum */
        if (brel > 0) {
            dep = nrx;
            u->rx_mode[nrx] = TR_RX_COPY;
            u->rx_phase[nrx] = chain ? TR_PHASE_CHAIN_PASS : TR_PHASE_BROADCAST;
            nrx++;
        }
        if (brel < n - 1) {
            u->tx_dep[ntx] = (int8_t)dep;
            u->tx_phase[ntx] = chain ? TR_PHASE_CHAIN_PASS : TR_PHASE_BROADCAST;
            ntx++;
        }
    }
    u->tx.nsteps = (uint32_t)ntx;
    u->rx.nsteps = (uint32_t)nrx;
}

void tr_comm_chain_step(const struct tr_comm *c, int is_tx, uint32_t k,
                        struct tr_comm_step *st)
{
    st->off = c->run.lo;               /* the whole buffer, or the range */
    st->len = c->run.hi - c->run.lo;
    if (is_tx) {
        st->dep = c->run.tx_dep[k];
        st->mode = TR_RX_COPY;
        st->phase = c->run.tx_phase[k];
    } else {
        st->dep = -1;
        st->mode = c->run.rx_mode[k];
        st->phase = c->run.rx_phase[k];
    }
}
