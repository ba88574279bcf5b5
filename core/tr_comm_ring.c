/* tinyring: the bandwidth-optimal ring allreduce (seed 003).
 *
 * The buffer is cut into world chunks whose sizes differ by at most one
 * element (the first count % world chunks get the extra one; some chunks are
 * empty when count < world). With N = world and r = rank:
 *
 *   reduce-scatter, step k = 0 .. N-2:
 *       send chunk (r - k) mod N, receive chunk (r - k - 1) mod N and add it
 *       (through the staging segment) into buf. At k = N-2 the received chunk
 *       (r + 1) mod N is complete on this rank alone: for TR_OP_AVG it is
 *       divided here, once, before anybody copies it.
 *   all-gather, step k = N-1 + j, j = 0 .. N-2:
 *       send chunk (r + 1 - j) mod N, receive chunk (r - j) mod N straight
 *       into buf (copy only, so every rank ends with the same bits).
 *
 * The chunk sent at step k+1 is the one received at step k, so each send step
 * depends on the previous receive step segment by segment: that is the
 * pipeline. An empty chunk still travels as one header-only message, which
 * keeps the ranks in step and lets a peer with another count be detected.
 *
 * World 2 with a buffer that fits one segment (the 116 KiB gradient of the
 * seed ConvNet with the default segment) is special: the ring would take two
 * rounds (half the buffer each way, then the other half back). Both ranks
 * instead send their whole buffer at once and add what they receive: the
 * bytes each rank sends are the same (2(N-1)/N of the buffer is all of it at
 * N = 2), the rounds are halved, and the result is still bitwise identical:
 * rank 0 computes own + peer, rank 1 peer + own, so both add rank 0's value
 * to rank 1's in that order (IEEE addition is commutative, and keeping the
 * order also keeps NaN payloads equal). The received sum may only land once
 * our own copy has gone out whole (tr_comm_engine.c, rx_may_apply).
 * Larger buffers keep the ring: it adds half as much per rank and pipelines
 * freely, and measured 1.5-2x faster at 16 MiB on TCP loopback. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"
#include "tr_error.h"

static uint32_t mod(long a, long n)
{
    long m = a % n;
    return (uint32_t)(m < 0 ? m + n : m);
}

/* Byte region of chunk i: count elements of 4 bytes over world chunks,
 * cut from the whole vector and clipped to the range [lo, hi) of the call
 * (an empty clip is the range's start, 0 bytes). */
static void chunk(const struct tr_comm *c, uint32_t i, uint32_t *off, uint32_t *len)
{
    uint32_t count = c->run.total / 4u;
    uint32_t n = (uint32_t)c->cfg.world;
    uint32_t base = count / n, rem = count % n;
    uint32_t start = i * base + (i < rem ? i : rem);
    uint32_t a = start * 4u, b = a + (base + (i < rem ? 1u : 0u)) * 4u;
    if (a < c->run.lo)
        a = c->run.lo;
    if (b > c->run.hi)
        b = c->run.hi;
    if (b <= a) {
        a = c->run.lo;
        b = a;
    }
    *off = a;
    *len = b - a;
}

uint32_t tr_comm_ring_index(long n, long r, int is_tx, uint32_t k)
{
    long kk = (long)k;
    int rs = kk < n - 1;
    if (is_tx)
        return rs ? mod(r - kk, n) : mod(r + 1 - (kk - (n - 1)), n);
    return rs ? mod(r - kk - 1, n) : mod(r - (kk - (n - 1)), n);
}

void tr_comm_ring_step(const struct tr_comm *c, int is_tx, uint32_t k,
                       struct tr_comm_step *st)
{
    long n = c->cfg.world, r = c->cfg.rank, kk = (long)k;
    int rs = kk < n - 1;
    uint32_t idx;

    if (c->run.kind == TR_KIND_EXCHANGE) {
        /* world 2: swap the whole buffer once and add; rank 0 computes
         * own + peer and rank 1 peer + own, i.e. both rank0 + rank1 */
        int avg = c->run.op == TR_OP_AVG;
        st->off = c->run.lo;
        st->len = c->run.hi - c->run.lo;
        st->dep = -1;
        st->phase = TR_PHASE_REDUCE_SCATTER;
        if (r == 0)
            st->mode = avg ? TR_RX_SUM_DIV : TR_RX_SUM;
        else
            st->mode = avg ? TR_RX_RSUM_DIV : TR_RX_RSUM;
        return;
    }
    idx = tr_comm_ring_index(n, r, is_tx, k);
    chunk(c, idx, &st->off, &st->len);
    st->dep = is_tx && k > 0 ? (int)k - 1 : -1;
    st->phase = rs ? TR_PHASE_REDUCE_SCATTER : TR_PHASE_ALL_GATHER;
    if (!rs)
        st->mode = TR_RX_COPY;
    else if (c->run.op == TR_OP_AVG && kk == n - 2)
        st->mode = TR_RX_SUM_DIV;
    else
        st->mode = TR_RX_SUM;
}
