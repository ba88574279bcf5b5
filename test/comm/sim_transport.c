/* tinyring test: the simulated transport (see sim_transport.h). */
#include <stdlib.h>
#include <string.h>
#include "sim_transport.h"
#include "tr_error.h"

static size_t fifo_room(const struct sim_fifo *f) { return f->cap - f->len; }

static void fifo_put(struct sim_fifo *f, const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n;) {
        size_t tail = (f->head + f->len) % f->cap;
        size_t run = f->cap - tail;
        if (run > n - i)
            run = n - i;
        memcpy(f->buf + tail, p + i, run);
        if (f->corrupt_at >= 0 && (uint64_t)f->corrupt_at >= f->written &&
            (uint64_t)f->corrupt_at < f->written + run)
            f->buf[tail + (size_t)((uint64_t)f->corrupt_at - f->written)] ^= f->corrupt_xor;
        f->len += run;
        f->written += run;
        i += run;
    }
}

static size_t fifo_get(struct sim_fifo *f, uint8_t *p, size_t n)
{
    size_t got = 0;
    while (got < n && f->len > 0) {
        size_t run = f->cap - f->head;
        if (run > f->len)
            run = f->len;
        if (run > n - got)
            run = n - got;
        memcpy(p + got, f->buf + f->head, run);
        f->head = (f->head + run) % f->cap;
        f->len -= run;
        got += run;
    }
    return got;
}

void sim_inject(struct sim_fifo *f, const void *bytes, size_t n)
{
    if (n > fifo_room(f))
        n = fifo_room(f);
    fifo_put(f, (const uint8_t *)bytes, n);
}

static int left_of(const struct sim_net *net, int r) { return (r - 1 + net->world) % net->world; }

/* connection index of rank r's link peer */
static int conn_of(const struct sim_net *net, int r, int peer)
{
    return peer == TR_RIGHT ? r : left_of(net, r);
}

struct sim_fifo *sim_out(struct sim_net *net, int r, int peer)
{
    return peer == TR_RIGHT ? &net->fwd[r] : &net->back[left_of(net, r)];
}

static struct sim_fifo *sim_in(struct sim_net *net, int r, int peer)
{
    return peer == TR_RIGHT ? &net->back[r] : &net->fwd[left_of(net, r)];
}

void sim_kill(struct sim_net *net, int r)
{
    net->ep[r].dead = 1;
    net->closed[conn_of(net, r, TR_LEFT)] = 1;
    net->closed[conn_of(net, r, TR_RIGHT)] = 1;
}

static int knock(struct sim_ep *e, int peer, int is_send)
{
    unsigned *n = &e->calls[peer * 2 + is_send];
    ++*n;
    return e->again_every && *n % e->again_every == 0;
}

static long sim_send(void *ctx, int peer, const void *buf, size_t len)
{
    struct sim_ep *e = (struct sim_ep *)ctx;
    struct sim_net *net = e->net;
    struct sim_fifo *f = sim_out(net, e->rank, peer);
    size_t n = len;

    if (e->dead || net->closed[conn_of(net, e->rank, peer)])
        return TR_ERR_CLOSED;
    if (knock(e, peer, 1))
        return TR_ERR_AGAIN;
    if (e->max_write && n > e->max_write)
        n = e->max_write;
    if (n > fifo_room(f))
        n = fifo_room(f);
    if (e->die_after >= 0 && e->sent + n >= (uint64_t)e->die_after)
        n = (size_t)((uint64_t)e->die_after - e->sent);
    if (n == 0) {
        if (e->die_after >= 0 && e->sent >= (uint64_t)e->die_after) {
            sim_kill(net, e->rank);
            return TR_ERR_CLOSED;
        }
        return TR_ERR_AGAIN;
    }
    fifo_put(f, (const uint8_t *)buf, n);
    e->sent += n;
    net->moved += n;
    if (e->die_after >= 0 && e->sent >= (uint64_t)e->die_after)
        sim_kill(net, e->rank);
    return (long)n;
}

/* Vectored send: the pieces in order through sim_send, stopping at the
 * first one not taken whole, so every fault knob applies to it too. */
static long sim_sendv(void *ctx, int peer, const struct tr_iovec *iov, unsigned n)
{
    long total = 0;
    unsigned i;
    for (i = 0; i < n; i++) {
        long got;
        if (iov[i].len == 0)
            continue;
        got = sim_send(ctx, peer, iov[i].base, iov[i].len);
        if (got < 0)
            return total > 0 ? total : got;
        total += got;
        if ((size_t)got < iov[i].len)
            break;
    }
    return total > 0 ? total : TR_ERR_AGAIN;
}

static long sim_recv(void *ctx, int peer, void *buf, size_t len)
{
    struct sim_ep *e = (struct sim_ep *)ctx;
    struct sim_net *net = e->net;
    struct sim_fifo *f = sim_in(net, e->rank, peer);
    size_t n;

    if (e->dead)
        return TR_ERR_CLOSED;
    if (knock(e, peer, 0))
        return TR_ERR_AGAIN;
    n = fifo_get(f, (uint8_t *)buf, len);
    if (n > 0) {
        net->moved += n;
        return (long)n;
    }
    return net->closed[conn_of(net, e->rank, peer)] ? TR_ERR_CLOSED : TR_ERR_AGAIN;
}

static unsigned ready(struct sim_net *net, int r)
{
    unsigned m = 0;
    int p;
    for (p = TR_LEFT; p <= TR_RIGHT; p++) {
        int closed = net->closed[conn_of(net, r, p)];
        if (closed || sim_in(net, r, p)->len > 0)
            m |= TR_POLL_RECV(p);
        if (closed || fifo_room(sim_out(net, r, p)) > 0)
            m |= TR_POLL_SEND(p);
    }
    return m;
}

static int sim_poll(void *ctx, unsigned want, uint32_t timeout_ms)
{
    struct sim_ep *e = (struct sim_ep *)ctx;
    struct sim_net *net = e->net;
    uint64_t before = net->moved;
    unsigned m;

    if (net->driver)
        net->driver(net, e->rank, net->driver_arg);
    m = ready(net, e->rank) & want;
    /* nothing moved anywhere and nothing ready: let simulated time pass */
    if (!m && net->moved == before && timeout_ms > 0)
        net->now++;
    return (int)m;
}

static uint32_t sim_now(void *ctx)
{
    return ((struct sim_ep *)ctx)->net->now;
}

int sim_init(struct sim_net *net, int world, size_t fifo_cap)
{
    int i;
    memset(net, 0, sizeof *net);
    if (world < 1 || world > SIM_MAX_WORLD)
        return -1;
    net->world = world;
    net->now = 1000;
    net->rng = 0x9E3779B97F4A7C15ull;
    for (i = 0; i < world; i++) {
        net->fwd[i].buf = malloc(fifo_cap);
        net->back[i].buf = malloc(fifo_cap);
        if (!net->fwd[i].buf || !net->back[i].buf)
            return -1;
        net->fwd[i].cap = net->back[i].cap = fifo_cap;
        net->fwd[i].corrupt_at = net->back[i].corrupt_at = -1;
        net->ep[i].net = net;
        net->ep[i].rank = i;
        net->ep[i].die_after = -1;
        net->tp[i].ctx = &net->ep[i];
        net->tp[i].send = sim_send;
        net->tp[i].recv = sim_recv;
        net->tp[i].poll = sim_poll;
        net->tp[i].now_ms = sim_now;
        /* odd ranks offer a vectored send, even ranks do not: every test
         * runs both of the engine's send paths */
        net->tp[i].sendv = (i & 1) ? sim_sendv : NULL;
    }
    return 0;
}

void sim_free(struct sim_net *net)
{
    int i;
    for (i = 0; i < net->world; i++) {
        free(net->fwd[i].buf);
        free(net->back[i].buf);
    }
}

static uint32_t next_rand(struct sim_net *net)
{
    net->rng ^= net->rng << 13;
    net->rng ^= net->rng >> 7;
    net->rng ^= net->rng << 17;
    return (uint32_t)(net->rng >> 16);
}

long sim_run(struct sim_net *net, struct tr_comm *comms, int *rc, uint32_t max_ms,
             int shuffle)
{
    uint32_t start = net->now;
    long rounds = 0;
    int order[SIM_MAX_WORLD];
    int i, n = net->world;

    for (i = 0; i < n; i++)
        order[i] = i;
    for (;;) {
        uint64_t before = net->moved;
        int running = 0;
        if (shuffle) {
            for (i = n - 1; i > 0; i--) {
                int j = (int)(next_rand(net) % (uint32_t)(i + 1));
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
        for (i = 0; i < n; i++) {
            int r = order[i];
            if (rc[r] != TR_ERR_AGAIN || net->ep[r].dead)
                continue;
            running++;
            if (net->ep[r].silent)
                continue;
            rc[r] = tr_comm_progress(&comms[r]);
            if (rc[r] < 0 && rc[r] != TR_ERR_AGAIN && !net->keep_failed)
                sim_kill(net, r);       /* a failed rank exits */
        }
        rounds++;
        if (!running)
            return rounds;
        for (i = 0; i < n; i++)
            if (rc[i] == TR_ERR_AGAIN && !net->ep[i].dead && !net->ep[i].silent)
                break;
        if (i == n)
            return rounds;              /* only silent or dead ranks left */
        if (net->moved == before)
            net->now++;
        if (net->now - start > max_ms)
            return -1;
    }
}
