/* tinyring fuzz harnesses of the collectives: see fuzz_ring.h. */
#include <string.h>

#include "comm_util.h"
#include "fuzz_ring.h"
#include "sim_transport.h"
#include "tr_codec.h"
#include "tr_error.h"

#define FIFO_CAP   (64u * 1024u)  /* per direction: no stream of a plan wraps */
#define EDIT_SLACK 1024u          /* room for inserted bytes */
#define MAX_CALLS  4000000L       /* progress calls before a run counts as hung */

void fz_plan_read(struct fz_plan *pl, struct fz *in)
{
    pl->world = 2 + fz_u8(in) % 7;
    pl->rank = fz_u8(in) % pl->world;
    uint8_t opb;
    pl->kind = fz_u8(in) % FZ_KINDS;
    opb = fz_u8(in);
    pl->op = opb & 1;
    pl->codec = TR_CODEC_BF16 + (opb >> 1) % 3;
    pl->root = fz_u8(in) % pl->world;
    pl->count = fz_u16(in) % 1025u;
    pl->segment = 64u << (fz_u8(in) % 5);
    if (pl->kind == FZ_RING_CODEC && pl->segment < 128u)
        pl->segment = 128u;     /* a segment holds a whole int8 block */
}

/* FZ_RING_CODEC: each rank's wire image and residual (the reference ranks
 * and then the rank under test, one after the other) */
#define FZ_MAX_COUNT 1024u
static uint8_t fz_wire[SIM_MAX_WORLD][4u * FZ_MAX_COUNT + 64u * 8u];
static float fz_res[SIM_MAX_WORLD][FZ_MAX_COUNT];

static size_t plan_bytes(const struct fz_plan *pl)
{
    if (pl->kind == FZ_BARRIER)
        return 0;
    return pl->kind == FZ_BCAST ? pl->count : pl->count * sizeof(float);
}

void fz_fill(uint8_t *buf, const struct fz_plan *pl, int rank)
{
    size_t i;
    if (pl->kind == FZ_BCAST) {
        for (i = 0; i < pl->count; i++)
            buf[i] = (uint8_t)(rank * 31 + (int)i * 7);
        return;
    }
    if (pl->kind == FZ_BARRIER)
        return;
    for (i = 0; i < pl->count; i++) {
        float v = val(rank, i, 7);
        memcpy(buf + 4 * i, &v, 4);
    }
}

int fz_start(struct tr_comm *c, const struct fz_plan *pl, void *buf)
{
    switch (pl->kind) {
    case FZ_RING:
        return tr_allreduce_start(c, buf, pl->count, (enum tr_op)pl->op, TR_ALGO_RING);
    case FZ_CHAIN:
        return tr_allreduce_start(c, buf, pl->count, (enum tr_op)pl->op, TR_ALGO_CHAIN);
    case FZ_REDUCE_BCAST:
        return tr_allreduce_start(c, buf, pl->count, (enum tr_op)pl->op, TR_ALGO_REDUCE_BCAST);
    case FZ_REDUCE:
        return tr_reduce_start(c, buf, pl->count, (enum tr_op)pl->op, pl->root);
    case FZ_BCAST:
        return tr_broadcast_start(c, buf, pl->count, pl->root);
    case FZ_RING_CODEC: {
        int r = c->cfg.rank;
        size_t i;
        for (i = 0; i < pl->count; i++)
            fz_res[r][i] = val(r + 5, i, 3) * 0.01f;
        return tr_allreduce_codec_start(c, buf, pl->count, (enum tr_op)pl->op, pl->codec,
                                        fz_res[r], fz_wire[r], sizeof fz_wire[r]);
    }
    default:
        return tr_barrier_start(c);
    }
}

int fz_finish(struct tr_comm *c, int rc)
{
    long calls = 0;
    while (rc == TR_ERR_AGAIN) {
        FZ_ASSERT(++calls < MAX_CALLS, "no end after %ld progress calls (a hang)", calls);
        rc = tr_comm_progress(c);
    }
    return rc;
}

static void copy_stream(struct fz_stream *s, const struct sim_fifo *f)
{
    FZ_ASSERT(f->written <= f->cap, "reference stream wrapped its fifo");
    s->len = s->cap = (size_t)f->written;
    s->pos = 0;
    s->buf = malloc(s->cap + 1);
    memcpy(s->buf, f->buf, s->len);
}

int fz_ref_run(struct fz_ref *ref, const struct fz_plan *pl)
{
    static struct job j;
    uint8_t *buf[SIM_MAX_WORLD];
    size_t bytes = plan_bytes(pl);
    int r, left = (pl->rank - 1 + pl->world) % pl->world, ok;

    memset(ref, 0, sizeof *ref);
    if (job_open(&j, pl->world, pl->segment, FIFO_CAP, 1000) < 0) {
        job_free(&j);
        return -1;
    }
    ref->hello_len[TR_LEFT] = (size_t)j.net.fwd[left].written;
    ref->hello_len[TR_RIGHT] = (size_t)j.net.back[pl->rank].written;
    for (r = 0; r < pl->world; r++) {
        buf[r] = malloc(bytes + 4);
        fz_fill(buf[r], pl, r);
        j.rc[r] = fz_start(&j.c[r], pl, buf[r]);
    }
    sim_run(&j.net, j.c, j.rc, 100000, 0);
    ok = all_rc(&j, 0);
    if (ok) {
        copy_stream(&ref->in[TR_LEFT], &j.net.fwd[left]);
        copy_stream(&ref->in[TR_RIGHT], &j.net.back[pl->rank]);
        ref->bytes = bytes;
        ref->result = malloc(bytes + 1);
        memcpy(ref->result, buf[pl->rank], bytes);
    }
    for (r = 0; r < pl->world; r++)
        free(buf[r]);
    job_free(&j);
    return ok ? 0 : -1;
}

void fz_ref_free(struct fz_ref *ref)
{
    free(ref->in[0].buf);
    free(ref->in[1].buf);
    free(ref->result);
}

void fz_stream_edit(struct fz_stream *s, const struct fz_stream *ref, size_t from,
                    struct fz *in)
{
    s->cap = ref->len + EDIT_SLACK;
    s->buf = malloc(s->cap);
    s->len = ref->len;
    s->pos = 0;
    memcpy(s->buf, ref->buf, ref->len);
    while (in->n >= 4) {
        size_t off = fz_u16(in);
        uint8_t x = fz_u8(in), op = fz_u8(in);
        size_t at = from + off % (s->len - from + 1);
        switch (op % 4) {
        case 0:                                   /* flip bits of a byte */
            if (at < s->len)
                s->buf[at] ^= x ? x : 0x80;
            break;
        case 1:                                   /* the peer stops here */
            s->len = at;
            break;
        case 2:                                   /* a byte too many */
            if (s->len < s->cap) {
                memmove(s->buf + at + 1, s->buf + at, s->len - at);
                s->buf[at] = x;
                s->len++;
            }
            break;
        default:                                  /* a byte missing */
            if (at < s->len) {
                memmove(s->buf + at, s->buf + at + 1, s->len - at - 1);
                s->len--;
            }
            break;
        }
    }
}

/* ---- the transport ----------------------------------------------------- */

static size_t next_limit(struct fz_net *n)
{
    uint8_t b = n->chunk[n->calls++ % 4];
    return (size_t)b * b;                         /* 0 (would block) .. 65025 */
}

static long fz_send(void *ctx, int peer, const void *buf, size_t len)
{
    struct fz_net *n = ctx;
    size_t lim = next_limit(n);
    (void)buf;
    n->now++;
    if (lim == 0)
        return TR_ERR_AGAIN;
    if (lim > len)
        lim = len;
    n->sent[peer] += lim;
    return (long)lim;
}

static long fz_sendv(void *ctx, int peer, const struct tr_iovec *iov, unsigned cnt)
{
    size_t total = 0;
    unsigned i;
    for (i = 0; i < cnt; i++)
        total += iov[i].len;
    return fz_send(ctx, peer, iov[0].base, total);
}

static long fz_recv(void *ctx, int peer, void *buf, size_t len)
{
    struct fz_net *n = ctx;
    struct fz_stream *s = &n->in[peer];
    size_t lim = next_limit(n);
    n->now++;
    if (lim == 0)
        return TR_ERR_AGAIN;
    if (s->pos == s->len)
        return TR_ERR_CLOSED;                     /* the peer stopped talking */
    if (lim > len)
        lim = len;
    if (lim > s->len - s->pos)
        lim = s->len - s->pos;
    memcpy(buf, s->buf + s->pos, lim);
    s->pos += lim;
    return (long)lim;
}

static int fz_poll(void *ctx, unsigned want, uint32_t timeout_ms)
{
    struct fz_net *n = ctx;
    (void)timeout_ms;
    n->now++;
    return (int)want;                             /* every link is always ready */
}

static uint32_t fz_now(void *ctx)
{
    return ((struct fz_net *)ctx)->now++;
}

void fz_net_init(struct fz_net *n, struct fz *in)
{
    unsigned i;
    memset(n, 0, sizeof *n);
    for (i = 0; i < 4; i++)
        n->chunk[i] = fz_u8(in);
    if (!n->chunk[0] && !n->chunk[1] && !n->chunk[2] && !n->chunk[3])
        n->chunk[0] = 1;                          /* not a link that never moves */
    n->tp.ctx = n;
    n->tp.send = fz_send;
    n->tp.recv = fz_recv;
    n->tp.poll = fz_poll;
    n->tp.now_ms = fz_now;
    n->tp.sendv = (n->chunk[3] & 1) ? fz_sendv : NULL;
}

void fz_net_free(struct fz_net *n)
{
    free(n->in[0].buf);
    free(n->in[1].buf);
}

void fz_check_failure(struct tr_comm *c, const struct fz_plan *pl, int rc)
{
    const struct tr_comm_fault *f = tr_comm_last_fault(c);
    FZ_ASSERT(rc == TR_ERR_PROTO || rc == TR_ERR_MISMATCH || rc == TR_ERR_CLOSED ||
              rc == TR_ERR_IO || rc == TR_ERR_TIMEOUT, "failed with code %d", rc);
    FZ_ASSERT(f->code == rc, "fault records %d, the call returned %d", f->code, rc);
    FZ_ASSERT(f->peer_rank >= -1 && f->peer_rank < pl->world,
              "the fault names rank %d in a world of %d", f->peer_rank, pl->world);
    FZ_ASSERT(tr_barrier_start(c) == rc, "not broken after a failure");
}
