/* tinyring: the transport over lwIP's raw TCP API (see tr_lwip.h).
 *
 * Everything happens inside lwIP's callbacks and the application's drive():
 *   on_recv   appends the pbuf to the link's held chain and pumps it: first
 *             the link handshake, then into the receive ring as far as it
 *             fits. tcp_recved() is called only for bytes that leave the
 *             port (handshake checked, or read by core), so the TCP window
 *             is the backpressure and nothing is ever dropped or refused.
 *   on_sent   nothing to do: poll() re-reads tcp_sndbuf().
 *   on_err    the pcb is gone: the link keeps a sticky tr_err.
 * send() copies into lwIP (TCP_WRITE_FLAG_COPY) bounded by tcp_sndbuf and the
 * segment queue, then tcp_output(). No malloc, no stdio, no host calls.
 */
#include <string.h>

#include "lwip/opt.h"
#include "lwip/init.h"
#include "lwip/err.h"
#include "lwip/ip_addr.h"
#include "lwip/ip.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"

#include "tr_error.h"
#include "tr_lwip.h"
#include "tr_link.h"
#include "tr_util.h"

#if !NO_SYS
#error "the tinyring lwIP port is written for NO_SYS=1"
#endif

enum link_state {
    LS_IDLE = 0,      /* no pcb (right link: waiting for retry_at) */
    LS_CONNECTING,    /* tcp_connect issued */
    LS_HANDSHAKE,     /* connected; waiting for the peer's link hello */
    LS_READY,         /* core's stream */
    LS_FAILED,        /* broken for good: err says why */
    LS_PARKED         /* elastic: a candidate's whole link hello, kept
                       * unanswered until the next links are opened */
};

#define DEF_RETRY_MS   100u
#ifndef TR_LWIP_ATTEMPT_MS
#define TR_LWIP_ATTEMPT_MS 1000u  /* a SYN unanswered this long (peer not booted,
                                * ARP unresolved) is dropped and sent afresh
                                * instead of waiting for lwIP's 3 s, 6 s, ...
                                * SYN backoff */
#endif

/* ---- TCP's initial sequence numbers (RFC 6528) ------------------------
 * Compiled where lwipopts.h sets the hook (the port's, or a project's own):
 * elsewhere nothing calls them, and nothing needs tr_lwip_rand for them. */
#ifdef LWIP_HOOK_TCP_ISN

static uint64_t rotl64(uint64_t x, unsigned b)
{
    return x << b | x >> (64u - b);
}

static void sip_round(uint64_t v[4])
{
    v[0] += v[1]; v[1] = rotl64(v[1], 13); v[1] ^= v[0]; v[0] = rotl64(v[0], 32);
    v[2] += v[3]; v[3] = rotl64(v[3], 16); v[3] ^= v[2];
    v[0] += v[3]; v[3] = rotl64(v[3], 21); v[3] ^= v[0];
    v[2] += v[1]; v[1] = rotl64(v[1], 17); v[1] ^= v[2]; v[2] = rotl64(v[2], 32);
}

uint64_t tr_lwip_siphash24(const uint8_t key[16], const uint8_t *m, size_t n)
{
    const uint64_t k0 = tr_get_le64(key), k1 = tr_get_le64(key + 8);
    uint64_t v[4], w;
    size_t i, j;

    v[0] = k0 ^ 0x736f6d6570736575ull;
    v[1] = k1 ^ 0x646f72616e646f6dull;
    v[2] = k0 ^ 0x6c7967656e657261ull;
    v[3] = k1 ^ 0x7465646279746573ull;
    for (i = 0; i + 8 <= n; i += 8) {
        w = tr_get_le64(m + i);
        v[3] ^= w;
        sip_round(v);
        sip_round(v);
        v[0] ^= w;
    }
    w = (uint64_t)(n & 0xffu) << 56;        /* n, and the last 0..7 bytes */
    for (j = 0; i + j < n; j++)
        w |= (uint64_t)m[i + j] << (8 * j);
    v[3] ^= w;
    sip_round(v);
    sip_round(v);
    v[0] ^= w;
    v[2] ^= 0xffu;
    for (j = 0; j < 4; j++)
        sip_round(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

static uint8_t isn_secret[16];
static int isn_keyed;

uint32_t tr_lwip_tcp_isn(const struct ip4_addr *local_ip, uint16_t local_port,
                         const struct ip4_addr *remote_ip, uint16_t remote_port)
{
    uint8_t m[12];
    unsigned i;

    if (!isn_keyed) {
        for (i = 0; i < 4; i++)
            tr_put_le32(isn_secret + 4 * i, (uint32_t)tr_lwip_rand());
        isn_keyed = 1;
    }
    tr_put_le32(m, ip4_addr_get_u32(local_ip));
    tr_put_le16(m + 4, local_port);
    tr_put_le32(m + 6, ip4_addr_get_u32(remote_ip));
    tr_put_le16(m + 10, remote_port);
    return sys_now() * 250u + (uint32_t)tr_lwip_siphash24(isn_secret, m, sizeof m);
}
#endif

int tr_lwip_err(int e)
{
    switch (e) {
    case ERR_OK:         return 0;
    case ERR_MEM:        return TR_ERR_NOBUFS;    /* lwIP pools exhausted */
    case ERR_BUF:        return TR_ERR_NOBUFS;
    case ERR_TIMEOUT:    return TR_ERR_TIMEOUT;
    case ERR_RTE:        return TR_ERR_UNREACH;   /* no route: netif/link down */
    case ERR_INPROGRESS: return TR_ERR_AGAIN;
    case ERR_VAL:        return TR_ERR_INVAL;
    case ERR_WOULDBLOCK: return TR_ERR_AGAIN;
    case ERR_USE:        return TR_ERR_ADDRINUSE;
    case ERR_ALREADY:    return TR_ERR_BUSY;
    case ERR_ISCONN:     return TR_ERR_BUSY;
    case ERR_CONN:       return TR_ERR_CLOSED;    /* not connected */
    case ERR_IF:         return TR_ERR_UNREACH;   /* low-level netif error */
    case ERR_ABRT:       return TR_ERR_CLOSED;    /* aborted (retransmits ran out) */
    case ERR_RST:        return TR_ERR_CLOSED;    /* reset by the peer */
    case ERR_CLSD:       return TR_ERR_CLOSED;
    case ERR_ARG:        return TR_ERR_INVAL;
    default:             return TR_ERR_IO;
    }
}

uint32_t tr_lwip_now_ms(void *ctx)
{
    (void)ctx;
    return (uint32_t)sys_now();
}

static int before(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

/* ---- receive path ------------------------------------------------------ */

/* Give n bytes back to lwIP's receive window (tcp_recved takes u16). */
static void give_window(struct tr_lwip_link *l, uint32_t n)
{
    while (n > 0 && l->pcb) {
        u16_t k = (u16_t)(n > 0xffffu ? 0xffffu : n);
        tcp_recved(l->pcb, k);
        n -= k;
    }
}

static void link_fail(struct tr_lwip_link *l, int err)
{
    if (l->err == 0)
        l->err = err;
    l->state = LS_FAILED;
}

/* Drop a connection at once (RST) and forget its pcb and pbufs. */
static void link_abort(struct tr_lwip_link *l)
{
    if (l->pcb) {
        struct tcp_pcb *pcb = l->pcb;
        l->pcb = NULL;
        tcp_arg(pcb, NULL);
        tcp_recv(pcb, NULL);
        tcp_sent(pcb, NULL);
        tcp_err(pcb, NULL);
        tcp_abort(pcb);
    }
    if (l->held) {
        pbuf_free(l->held);
        l->held = NULL;
    }
}

static int send_hello(struct tr_lwip_link *l)
{
    uint8_t msg[TR_LINK_HELLO_BYTES];
    struct tr_link_hello me;
    err_t e;
    me.version = TR_LINK_VERSION;
    me.token = l->owner->cfg.job_token;
    me.rank = (uint32_t)l->owner->cfg.rank;
    me.world = (uint32_t)l->owner->cfg.world;
    tr_link_hello_put(msg, &me);
    e = tcp_write(l->pcb, msg, sizeof msg, TCP_WRITE_FLAG_COPY);
    if (e == ERR_OK)
        e = tcp_output(l->pcb);
    l->owner->last_lwip_err = e;
    return tr_lwip_err(e);
}

static void promote(struct tr_lwip *lw, struct tr_lwip_link *cand);

/* A candidate's first bytes are not a link hello: the elastic layer may
 * take the connection (a membership message), else it is a stranger. */
static void not_a_hello(struct tr_lwip_link *l)
{
    struct tr_lwip *lw = l->owner;
    struct tcp_pcb *pcb = l->pcb;
    int took = 0;
    if (lw->take) {
        tcp_arg(pcb, NULL);
        took = lw->take(lw->take_ctx, pcb, l->hs, l->hs_len, l->held);
    }
    if (took) {                    /* the pcb and its pbufs are the taker's */
        lw->taken = took > 0 ? pcb : NULL;
        l->pcb = NULL;
        l->held = NULL;
    } else {
        tcp_arg(pcb, l);
        lw->refused++;
        link_abort(l);
    }
    l->state = LS_IDLE;
    l->hs_len = 0;
}

/* Check a complete link hello. The accepting side then answers and, for a
 * candidate, becomes the left link; strangers are cut off. */
static void handshake_done(struct tr_lwip_link *l)
{
    struct tr_lwip *lw = l->owner;
    int is_cand = l >= lw->cand && l < lw->cand + TR_LWIP_CANDIDATES;
    int want = is_cand ? (lw->cfg.rank - 1 + lw->cfg.world) % lw->cfg.world
                       : (lw->cfg.rank + 1) % lw->cfg.world;
    struct tr_link_hello h;
    int rc;
    if (is_cand && lw->keep_listener && !lw->linking) {
        l->state = LS_PARKED;     /* a hello of a ring not opened here yet */
        return;
    }
    rc = tr_link_verdict_err(tr_link_hello_judge(&h, l->hs, lw->cfg.job_token,
                                                  (uint32_t)lw->cfg.world, (uint32_t)want));
    if (rc < 0) {
        if (is_cand) {            /* a stranger: drop it, keep listening */
            lw->refused++;
            link_abort(l);
            l->state = LS_IDLE;
        } else {                  /* our right "neighbour" is someone else */
            link_abort(l);
            link_fail(l, rc);
        }
        return;
    }
    l->peer_rank = want;
    if (is_cand) {
        if (lw->link[TR_LEFT].state == LS_READY) {  /* already have one */
            lw->refused++;
            link_abort(l);
            l->state = LS_IDLE;
            return;
        }
        rc = send_hello(l);
        if (rc < 0) {
            link_abort(l);
            l->state = LS_IDLE;
            return;
        }
        promote(lw, l);
    } else {
        l->state = LS_READY;
    }
}

/* Move held bytes into the handshake buffer, then into the ring. */
static void pump(struct tr_lwip_link *l)
{
    while (l->held && l->state == LS_HANDSHAKE) {
        u16_t need = (u16_t)(TR_LINK_HELLO_BYTES - l->hs_len);
        u16_t n = pbuf_copy_partial(l->held, l->hs + l->hs_len, need, 0);
        l->held = pbuf_free_header(l->held, n);
        l->hs_len = (uint8_t)(l->hs_len + n);
        give_window(l, n);
        if (l->owner->take && l >= l->owner->cand &&
            l < l->owner->cand + TR_LWIP_CANDIDATES && !tr_link_hello_prefix_ok(l->hs, l->hs_len)) {
            not_a_hello(l);
            return;
        }
        if (l->hs_len == TR_LINK_HELLO_BYTES)
            handshake_done(l);   /* may promote: l is then an idle slot */
    }
    while (l->held && l->state == LS_READY && l->ring_len < l->ring_size) {
        size_t tail = (l->ring_head + l->ring_len) % l->ring_size;
        size_t room = l->ring_size - l->ring_len;
        size_t run = l->ring_size - tail;       /* contiguous room */
        u16_t n;
        if (run > room)
            run = room;
        if (run > 0xffffu)
            run = 0xffffu;
        n = pbuf_copy_partial(l->held, l->ring + tail, (u16_t)run, 0);
        if (n == 0)
            break;
        l->held = pbuf_free_header(l->held, n);
        l->ring_len += n;
    }
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct tr_lwip_link *l = (struct tr_lwip_link *)arg;
    if (!l) {                      /* detached: nobody wants these bytes */
        if (p) {
            tcp_recved(pcb, p->tot_len);
            pbuf_free(p);
        }
        return ERR_OK;
    }
    if (p == NULL) {               /* the peer's FIN */
        struct tr_lwip *lw = l->owner;
        if (l->state == LS_READY) {
            l->eof = 1;
            return ERR_OK;
        }
        /* closed before the handshake finished: a refusal (or a stranger
         * that gave up); the right link tries again until the deadline */
        link_abort(l);
        l->state = LS_IDLE;
        if (l == &lw->link[TR_RIGHT])
            l->retry_at = sys_now() + (lw->cfg.retry_ms ? lw->cfg.retry_ms : DEF_RETRY_MS);
        return ERR_ABRT;
    }
    if (err != ERR_OK) {           /* lwIP 2.1 never does this; be safe */
        pbuf_free(p);
        return ERR_OK;
    }
    if (l->held)
        pbuf_cat(l->held, p);
    else
        l->held = p;
    l->owner->taken = NULL;
    pump(l);
    /* an aborted stranger: tell lwIP the pcb is gone */
    return l->pcb == pcb || l->owner->link[TR_LEFT].pcb == pcb || l->owner->taken == pcb
           ? ERR_OK : ERR_ABRT;
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct tr_lwip_link *l = (struct tr_lwip_link *)arg;
    (void)pcb; (void)len;
    /* acknowledged segments went back to lwIP's heap and segment pool,
     * which both links share: either may try tcp_write again */
    if (l) {
        l->owner->link[TR_LEFT].send_blocked = 0;
        l->owner->link[TR_RIGHT].send_blocked = 0;
    }
    return ERR_OK;
}

static void on_err(void *arg, err_t err)
{
    struct tr_lwip_link *l = (struct tr_lwip_link *)arg;
    struct tr_lwip *lw;
    int is_cand;
    if (!l)
        return;
    lw = l->owner;
    lw->last_lwip_err = err;
    l->pcb = NULL;                 /* lwIP has freed it already */
    if (l->held) {
        pbuf_free(l->held);
        l->held = NULL;
    }
    is_cand = l >= lw->cand && l < lw->cand + TR_LWIP_CANDIDATES;
    if (is_cand) {
        l->state = LS_IDLE;
    } else if (l == &lw->link[TR_RIGHT] &&
               (l->state == LS_CONNECTING || l->state == LS_HANDSHAKE)) {
        /* refused or reset during bootstrap: try again later */
        l->state = LS_IDLE;
        l->retry_at = sys_now() + (lw->cfg.retry_ms ? lw->cfg.retry_ms : DEF_RETRY_MS);
    } else {
        link_fail(l, tr_lwip_err(err));
    }
}

static void attach(struct tr_lwip_link *l, struct tcp_pcb *pcb)
{
    l->pcb = pcb;
    tcp_arg(pcb, l);
    tcp_recv(pcb, on_recv);
    tcp_sent(pcb, on_sent);
    tcp_err(pcb, on_err);
    tcp_nagle_disable(pcb);        /* collectives send small headers too */
}

/* A candidate passed the handshake: it becomes the left link. */
static void promote(struct tr_lwip *lw, struct tr_lwip_link *c)
{
    struct tr_lwip_link *l = &lw->link[TR_LEFT];
    l->pcb = NULL;
    l->held = c->held;
    l->eof = c->eof;
    l->peer_rank = c->peer_rank;
    l->err = 0;
    l->state = LS_READY;
    attach(l, c->pcb);
    c->pcb = NULL;
    c->held = NULL;
    c->state = LS_IDLE;
    c->hs_len = 0;
    if (lw->listener && !lw->keep_listener) {  /* one left neighbour: stop listening */
        tcp_arg(lw->listener, NULL);
        tcp_accept(lw->listener, NULL);
        tcp_close(lw->listener);
        lw->listener = NULL;
    }
    pump(l);
}

/* ---- bootstrap --------------------------------------------------------- */

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct tr_lwip *lw = (struct tr_lwip *)arg;
    int i;
    if (err != ERR_OK || pcb == NULL || lw == NULL)
        return ERR_VAL;
    for (i = 0; i < TR_LWIP_CANDIDATES; i++) {
        struct tr_lwip_link *c = &lw->cand[i];
        if (c->state == LS_IDLE && c->pcb == NULL) {
            c->owner = lw;
            c->held = NULL;
            c->hs_len = 0;
            c->eof = 0;
            c->err = 0;
            c->peer_rank = -1;
            c->state = LS_HANDSHAKE;
            attach(c, pcb);
            return ERR_OK;
        }
    }
    lw->refused++;                 /* too many half-open strangers */
    tcp_abort(pcb);
    return ERR_ABRT;
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct tr_lwip_link *l = (struct tr_lwip_link *)arg;
    int rc;
    (void)pcb;
    if (!l)
        return ERR_OK;
    if (err != ERR_OK)             /* lwIP 2.1 always passes ERR_OK */
        return ERR_OK;
    l->state = LS_HANDSHAKE;
    l->hs_len = 0;
    rc = send_hello(l);
    if (rc < 0) {
        link_abort(l);
        l->state = LS_IDLE;
        l->retry_at = sys_now() + (l->owner->cfg.retry_ms ? l->owner->cfg.retry_ms
                                                          : DEF_RETRY_MS);
        return ERR_ABRT;
    }
    return ERR_OK;
}

static int start_connect(struct tr_lwip *lw)
{
    struct tr_lwip_link *l = &lw->link[TR_RIGHT];
    const struct tr_lwip_addr *a = &lw->cfg.table[(lw->cfg.rank + 1) % lw->cfg.world];
    ip_addr_t ip;
    struct tcp_pcb *pcb = tcp_new();
    err_t e;
    if (!pcb)
        return TR_ERR_NOBUFS;     /* MEMP_NUM_TCP_PCB exhausted */
    IP_ADDR4(&ip, a->ip[0], a->ip[1], a->ip[2], a->ip[3]);
    attach(l, pcb);
    l->state = LS_CONNECTING;
    l->retry_at = sys_now() + TR_LWIP_ATTEMPT_MS;    /* while connecting: give-up time */
    e = tcp_connect(pcb, &ip, a->port, on_connected);
    if (e != ERR_OK) {
        lw->last_lwip_err = e;
        link_abort(l);             /* e.g. ERR_RTE while the link is down */
        l->state = LS_IDLE;
        l->retry_at = sys_now() + (lw->cfg.retry_ms ? lw->cfg.retry_ms : DEF_RETRY_MS);
    }
    return 0;
}

static int start_listen(struct tr_lwip *lw)
{
    struct tcp_pcb *pcb = tcp_new();
    struct tcp_pcb *lpcb;
    err_t e;
    if (!pcb)
        return TR_ERR_NOBUFS;     /* MEMP_NUM_TCP_PCB exhausted */
    e = tcp_bind(pcb, IP_ANY_TYPE, lw->cfg.table[lw->cfg.rank].port);
    if (e != ERR_OK) {
        lw->last_lwip_err = e;
        tcp_abort(pcb);
        return tr_lwip_err(e);
    }
    lpcb = tcp_listen_with_backlog_and_err(pcb, TR_LWIP_CANDIDATES, &e);
    if (!lpcb) {
        lw->last_lwip_err = e;
        tcp_abort(pcb);
        return tr_lwip_err(e);
    }
    lw->listener = lpcb;
    tcp_arg(lpcb, lw);
    tcp_accept(lpcb, on_accept);
    return 0;
}

size_t tr_lwip_rx_size(void)
{
    return 2u * (size_t)TCP_WND;
}

int tr_lwip_init(struct tr_lwip *lw, const struct tr_lwip_config *cfg)
{
    size_t half;
    int i;
    if (!lw || !cfg || cfg->world < 2 || cfg->rank < 0 || cfg->rank >= cfg->world ||
        !cfg->table || !cfg->drive || !cfg->rx_mem)
        return TR_ERR_INVAL;
    if (cfg->table[cfg->rank].port == 0)
        return TR_ERR_INVAL;
    half = cfg->rx_mem_size / 2;
    if (half < TR_LWIP_RX_MIN)
        return TR_ERR_NOMEM;
    memset(lw, 0, sizeof *lw);
    lw->cfg = *cfg;
    for (i = 0; i < 2; i++) {
        lw->link[i].owner = lw;
        lw->link[i].peer_rank = -1;
        lw->link[i].ring = (uint8_t *)cfg->rx_mem + (size_t)i * half;
        lw->link[i].ring_size = half;
    }
    for (i = 0; i < TR_LWIP_CANDIDATES; i++) {
        lw->cand[i].owner = lw;
        lw->cand[i].peer_rank = -1;
    }
    return 0;
}

void tr_lwip_transport(struct tr_lwip *lw, struct tr_transport *tp)
{
    tp->ctx = lw;
    tp->send = tr_lwip_send;
    tp->recv = tr_lwip_recv;
    tp->poll = tr_lwip_poll;
    tp->now_ms = tr_lwip_now_ms;
    tp->sendv = NULL;              /* tcp_write queues; tcp_output merges */
}

/* Drives the stack until both links are up, one failed, or limit ms. */
static int links_wait(struct tr_lwip *lw, uint32_t limit)
{
    uint32_t t0 = sys_now();
    int rc, i;
    lw->linking = 1;
    for (i = 0; i < TR_LWIP_CANDIDATES; i++)      /* hellos that came early */
        if (lw->cand[i].state == LS_PARKED && lw->cand[i].pcb) {
            lw->cand[i].state = LS_HANDSHAKE;
            handshake_done(&lw->cand[i]);
        }
    lw->link[TR_RIGHT].retry_at = t0;
    for (;;) {
        struct tr_lwip_link *r = &lw->link[TR_RIGHT];
        uint32_t now = sys_now();
        if (r->state == LS_FAILED) {
            lw->linking = 0;
            return r->err;
        }
        if (r->state == LS_READY && lw->link[TR_LEFT].state == LS_READY) {
            lw->linking = 0;
            return 0;
        }
        if ((uint32_t)(now - t0) >= limit)
            break;
        if (r->state == LS_CONNECTING && !before(now, r->retry_at)) {
            link_abort(r);             /* silent peer: start over */
            r->state = LS_IDLE;
        }
        if (r->state == LS_IDLE && !before(now, r->retry_at)) {
            rc = start_connect(lw);
            if (rc < 0) {
                lw->linking = 0;
                return rc;
            }
        }
        lw->cfg.drive(lw->cfg.drive_arg, 10);
    }
    /* deadline: drop whatever is half open */
    lw->linking = 0;
    for (rc = 0; rc < TR_LWIP_CANDIDATES; rc++) {
        link_abort(&lw->cand[rc]);
        lw->cand[rc].state = LS_IDLE;
    }
    return TR_ERR_TIMEOUT;
}

int tr_lwip_connect(struct tr_lwip *lw)
{
    uint32_t limit = lw->cfg.connect_timeout_ms ? lw->cfg.connect_timeout_ms
                                                : TR_LINK_CONNECT_MS;
    int rc = lw->listener ? 0 : start_listen(lw);
    if (rc < 0)
        return rc;
    return links_wait(lw, limit);
}

int tr_lwip_listen(struct tr_lwip *lw)
{
    return lw->listener ? 0 : start_listen(lw);
}

void tr_lwip_drop_links(struct tr_lwip *lw)
{
    int i;
    for (i = 0; i < 2; i++) {
        struct tr_lwip_link *l = &lw->link[i];
        link_abort(l);             /* RST: a neighbour still in the ring fails at once */
        l->state = LS_IDLE;
        l->err = 0;
        l->eof = 0;
        l->peer_rank = -1;
        l->ring_head = l->ring_len = 0;
        l->unacked = 0;
        l->send_blocked = 0;
        l->hs_len = 0;
    }
}

int tr_lwip_relink(struct tr_lwip *lw, int rank, int world, const struct tr_lwip_addr *table,
                   uint64_t token, uint32_t timeout_ms)
{
    if (!lw->listener || world < 2 || rank < 0 || rank >= world || !table)
        return TR_ERR_INVAL;
    tr_lwip_drop_links(lw);
    lw->cfg.rank = rank;
    lw->cfg.world = world;
    lw->cfg.table = table;
    lw->cfg.job_token = token;
    return links_wait(lw, timeout_ms ? timeout_ms : TR_LINK_CONNECT_MS);
}

/* ---- the transport ----------------------------------------------------- */

long tr_lwip_send(void *ctx, int peer, const void *buf, size_t len)
{
    struct tr_lwip *lw = (struct tr_lwip *)ctx;
    struct tr_lwip_link *l;
    size_t room;
    err_t e;
    if (peer != TR_LEFT && peer != TR_RIGHT)
        return TR_ERR_INVAL;
    l = &lw->link[peer];
    if (l->err)
        return l->err;
    if (l->state != LS_READY || !l->pcb)
        return TR_ERR_CLOSED;
    if (len == 0)
        return TR_ERR_INVAL;
    if (l->send_blocked)
        return TR_ERR_AGAIN;
    room = tcp_sndbuf(l->pcb);
    /* leave a segment slot or two: tcp_write needs one per MSS */
    if (room == 0 || tcp_sndqueuelen(l->pcb) + 2 >= TCP_SND_QUEUELEN)
        return TR_ERR_AGAIN;
    if (len > room)
        len = room;
    if (len > 0xffffu)
        len = 0xffffu;
    for (;;) {
        e = tcp_write(l->pcb, buf, (u16_t)len, TCP_WRITE_FLAG_COPY);
        if (e != ERR_MEM || len <= TCP_MSS)
            break;
        len /= 2;                  /* heap or segment pool short: try less */
    }
    if (e == ERR_MEM) {
        /* lwIP's heap or segment pool is short: not writable until some
         * segment is acknowledged (on_sent), or poll would spin */
        l->send_blocked = 1;
        tcp_output(l->pcb);        /* push what is queued; room comes back */
        return TR_ERR_AGAIN;
    }
    if (e != ERR_OK) {
        lw->last_lwip_err = e;
        return tr_lwip_err(e);
    }
    e = tcp_output(l->pcb);
    if (e != ERR_OK && e != ERR_MEM) {
        lw->last_lwip_err = e;
        if (e == ERR_RTE) {        /* our interface is down: say so */
            link_fail(l, TR_ERR_UNREACH);
            return (long)len;      /* accepted; the next call reports it */
        }
    }
    return (long)len;
}

long tr_lwip_recv(void *ctx, int peer, void *buf, size_t len)
{
    struct tr_lwip *lw = (struct tr_lwip *)ctx;
    struct tr_lwip_link *l;
    size_t done = 0;
    if (peer != TR_LEFT && peer != TR_RIGHT)
        return TR_ERR_INVAL;
    l = &lw->link[peer];
    if (len == 0)
        return TR_ERR_INVAL;
    while (done < len && l->ring_len > 0) {
        size_t run = l->ring_size - l->ring_head;
        if (run > l->ring_len)
            run = l->ring_len;
        if (run > len - done)
            run = len - done;
        memcpy((uint8_t *)buf + done, l->ring + l->ring_head, run);
        l->ring_head = (l->ring_head + run) % l->ring_size;
        l->ring_len -= run;
        done += run;
        pump(l);                   /* refill from held pbufs */
    }
    if (done > 0) {
        /* reopen the window for what core took, in MSS-sized steps so the
         * peer is not flooded with window updates */
        l->unacked += (uint32_t)done;
        if (l->unacked >= TCP_MSS || l->ring_len == 0) {
            give_window(l, l->unacked);
            l->unacked = 0;
        }
        return (long)done;
    }
    if (l->err)
        return l->err;
    if (l->eof && !l->held)
        return TR_ERR_CLOSED;
    if (l->state != LS_READY)
        return TR_ERR_CLOSED;
    return TR_ERR_AGAIN;
}

/* A link whose route disappeared (netif or its link down) is broken: TCP
 * would only retransmit into the void until core's timeout. */
static void check_route(struct tr_lwip_link *l)
{
    if (l->state == LS_READY && l->pcb && l->err == 0 &&
        ip_route(&l->pcb->local_ip, &l->pcb->remote_ip) == NULL)
        link_fail(l, TR_ERR_UNREACH);
}

static unsigned ready_mask(struct tr_lwip *lw, unsigned want)
{
    unsigned got = 0;
    int p;
    for (p = 0; p < 2; p++) {
        struct tr_lwip_link *l = &lw->link[p];
        int broken;
        check_route(l);
        if (l->send_blocked && l->pcb && tcp_sndqueuelen(l->pcb) == 0)
            l->send_blocked = 0;   /* nothing of ours in flight to wait for */
        broken = l->err != 0 || l->state != LS_READY || !l->pcb;
        if (want & TR_POLL_RECV(p)) {
            if (l->ring_len > 0 || l->eof || broken)
                got |= TR_POLL_RECV(p);
        }
        if (want & TR_POLL_SEND(p)) {
            if (broken || (!l->send_blocked && tcp_sndbuf(l->pcb) > 0 &&
                           tcp_sndqueuelen(l->pcb) + 2 < TCP_SND_QUEUELEN))
                got |= TR_POLL_SEND(p);
        }
    }
    return got;
}

int tr_lwip_poll(void *ctx, unsigned want, uint32_t timeout_ms)
{
    struct tr_lwip *lw = (struct tr_lwip *)ctx;
    uint32_t t0 = sys_now();
    /* always one turn of the stack first: the caller may have queued data
     * that only moves (and ACKs that only arrive) when the stack runs */
    lw->cfg.drive(lw->cfg.drive_arg, 0);
    for (;;) {
        unsigned got = ready_mask(lw, want);
        uint32_t spent;
        if (got)
            return (int)got;
        spent = sys_now() - t0;
        if (spent >= timeout_ms)
            return 0;
        lw->cfg.drive(lw->cfg.drive_arg, timeout_ms - spent);
    }
}

static int queued(const struct tr_lwip_link *l)
{
    return l->pcb && l->state == LS_READY && (l->pcb->unsent || l->pcb->unacked);
}

void tr_lwip_close(struct tr_lwip *lw, uint32_t linger_ms)
{
    uint32_t t0 = sys_now();
    int i;
    /* first let what core sent reach the neighbours (they may still be
     * waiting for the last segment of the last collective) */
    while ((queued(&lw->link[0]) || queued(&lw->link[1])) &&
           (uint32_t)(sys_now() - t0) < linger_ms)
        lw->cfg.drive(lw->cfg.drive_arg, 5);
    for (i = 0; i < TR_LWIP_CANDIDATES; i++) {
        link_abort(&lw->cand[i]);
        lw->cand[i].state = LS_IDLE;
    }
    if (lw->listener) {
        tcp_arg(lw->listener, NULL);
        tcp_accept(lw->listener, NULL);
        tcp_close(lw->listener);
        lw->listener = NULL;
    }
    for (i = 0; i < 2; i++) {
        struct tr_lwip_link *l = &lw->link[i];
        if (l->held) {
            pbuf_free(l->held);
            l->held = NULL;
        }
        if (l->pcb && l->state == LS_READY) {
            struct tcp_pcb *pcb = l->pcb;
            tcp_arg(pcb, NULL);
            tcp_recv(pcb, NULL);           /* lwIP's default drops late rx */
            tcp_sent(pcb, NULL);
            tcp_err(pcb, NULL);
            if (tcp_close(pcb) == ERR_OK)  /* FIN; lwIP frees the pcb later */
                l->pcb = NULL;
            else
                tcp_arg(pcb, l);
        }
        link_abort(l);                     /* whatever could not close */
        l->state = LS_FAILED;
        if (!l->err)
            l->err = TR_ERR_CLOSED;
    }
    /* a few more turns so the FINs go out */
    t0 = sys_now();
    while ((uint32_t)(sys_now() - t0) < 20)
        lw->cfg.drive(lw->cfg.drive_arg, 5);
}
