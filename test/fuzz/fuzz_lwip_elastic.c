/* Fuzz harness: the lwIP port's elastic listener (port/lwip/
 * tr_lwip_elastic.c: a connection whose first bytes are not a link hello is
 * taken as a membership connection and its JOIN read and answered in lwIP's
 * callbacks), on the real lwIP (NO_SYS=1, the port's lwipopts.h).
 *
 * One lwIP stack in this process, on a netif that loops every packet back
 * into itself (10.0.0.1; fuzz_loopif.c). The port is original rank 1 of a job of 3 (not the
 * view's lowest: it never coordinates between rounds), listening on 7001
 * for the whole run (tr_lwip_elastic_start, tr_lwip_listen). The harness
 * connects to it; what the port then receives on that connection is the
 * fuzzer's, cut into pbuf chains handed to the pcb's receive callback as
 * tcp_input does; optionally a FIN at the end.
 *
 * Input: flags (bit 0: put a well-formed JOIN of this job before the bytes,
 * its fields from the input; bit 1: FIN at the end), the JOIN's fields
 * (rank, flags, epoch choice, step), 8 pbuf sizes, 4 chain lengths, then
 * the bytes.
 * Invariants: the harness receives nothing but, exactly when the stream's
 * first 48 bytes are a JOIN of this job from a process started again whose
 * rank the view no longer names or of an older view, one REPLY NOT_COORD
 * naming rank 0 (the view's lowest), and then the connection closes; any
 * other JOIN of this job waits unanswered, held by the port exactly when
 * nothing followed it (no bytes, no FIN); anything else is never held; after tr_lwip_elastic_close every pbuf is
 * back in lwIP's pool.
 */
#include <string.h>

#include "lwip/init.h"
#include "lwip/ip4.h"
#include "lwip/ip4_addr.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"

#include "fuzz.h"
#include "fuzz_loopif.h"
#include "tr_elastic.h"
#include "tr_error.h"
#include "tr_lwip.h"

#define TOKEN      0x5eed0123456789abull
#define PORT0      7000
#define MAX_STREAM 512
#define JOIN_MSG   (TR_EL_HEAD_BYTES + TR_EL_JOIN_BYTES)

/* ---- the run ------------------------------------------------------------- */

struct run {
    struct tr_lwip lw;
    struct tr_lwip_elastic el;
    uint8_t piece[8], per_chain[4];
    uint8_t stream[MAX_STREAM];
    size_t  len, fed;
    unsigned chains;
    int     fin, fin_sent;
    struct tcp_pcb *client;
    uint16_t client_port;             /* its local port, to find the port's end */
    int     connected, closed;
    uint8_t answer[256];
    size_t  answer_len;
};

static struct run R;
static uint8_t rx_mem[2 * 512];

static err_t cli_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg;
    (void)err;
    if (!p) {
        R.closed = 1;
        return ERR_OK;
    }
    if (p->tot_len <= sizeof R.answer - R.answer_len)
        R.answer_len += pbuf_copy_partial(p, R.answer + R.answer_len, p->tot_len, 0);
    else
        R.answer_len = sizeof R.answer;   /* far too much: the check fails */
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static void cli_err(void *arg, err_t err)
{
    (void)arg;
    (void)err;
    R.client = NULL;
    R.closed = 1;
}

static err_t cli_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    R.connected = err == ERR_OK;
    R.client_port = pcb->local_port;
    return ERR_OK;
}

/* The port's end of the harness's connection, or NULL. */
static struct tcp_pcb *port_end(void)
{
    struct tcp_pcb *p;
    if (!R.connected)
        return NULL;
    for (p = tcp_active_pcbs; p; p = p->next)
        if (p->local_port == PORT0 + 1 && p->remote_port == R.client_port)
            return p->state == SYN_RCVD ? NULL : p;   /* not accepted yet */
    return NULL;
}

/* a piece of the stream: 1 to 64 bytes */
static size_t piece_bytes(uint8_t v)
{
    return 1u + (size_t)v % 64u;
}

/* The next chain of pbufs from the stream (fuzz_lwip_chain) */
static struct pbuf *next_chain(void)
{
    return fuzz_lwip_chain(R.stream, R.len, &R.fed, R.per_chain, R.piece, &R.chains, piece_bytes);
}

/* Hands p (NULL: a FIN) to the port's end as tcp_input does. */
static void hand_over(struct tcp_pcb *pcb, struct pbuf *p)
{
    if (pcb->recv)
        pcb->recv(pcb->callback_arg, pcb, p, ERR_OK);
    else
        tcp_recv_null(NULL, pcb, p, ERR_OK);
}

static void turn(void)
{
    fuzz_lwip_ms += 5;
    fuzz_lwip_deliver();
    sys_check_timeouts();
}

/* The stream, then a FIN if asked, then the answers' way back. */
static void play(void)
{
    int t;
    for (t = 0; t < 400 && (R.fed < R.len || (R.fin && !R.fin_sent)); t++) {
        struct tcp_pcb *pcb;
        turn();
        if ((pcb = port_end()) == NULL)
            continue;                 /* not accepted yet, or reset */
        if (R.fed < R.len) {
            struct pbuf *p = next_chain();
            if (p)
                hand_over(pcb, p);
        } else {
            R.fin_sent = 1;
            hand_over(pcb, NULL);
        }
        if (!port_end())
            break;                    /* the port reset it: the rest has nowhere to go */
    }
    for (t = 0; t < 20; t++)
        turn();
}

/* The JOIN's fields from the input (read always); first in the stream if
 * put. */
static void put_join(struct fz *in, int put)
{
    static const uint32_t epochs[4] = { 0, 1, TR_EL_ANY_EPOCH, 0x80000000u };
    struct tr_el_brief b;
    memset(&b, 0, sizeof b);
    b.type = TR_EL_JOIN;
    b.token = TOKEN;
    b.join.rank = fz_u8(in) % 4u;
    b.join.flags = fz_u8(in) & TR_EL_JOINER;
    b.epoch = epochs[fz_u8(in) % 4u];
    b.join.step = fz_u16(in);
    b.join.addr = 0x0100000au;
    b.join.port = (uint16_t)(PORT0 + b.join.rank);
    if (put)
        R.len = tr_el_encode_brief(&b, NULL, R.stream, sizeof R.stream);
}

static const struct tr_lwip_el_conn *held_join(void)
{
    unsigned i;
    for (i = 0; i < TR_LWIP_EL_CONNS; i++)
        if (R.el.conn[i].pcb && R.el.conn[i].state == 1)
            return &R.el.conn[i];
    return NULL;
}

/* What the port must have done with the stream. */
static void judge(void)
{
    struct tr_el_brief j, r;
    int is_join = R.fed >= JOIN_MSG && tr_el_decode_brief(R.stream, JOIN_MSG, &j, NULL, 0) == 0 &&
                  j.type == TR_EL_JOIN && j.token == TOKEN;
    /* a joiner whose rank the view (0, 1, 2) no longer names, or a JOIN of an
     * older view (an epoch "before" 0) */
    int answer_now = is_join && ((j.join.flags & TR_EL_JOINER) ? j.join.rank > 2
                                                               : (int32_t)j.epoch < 0);
    const struct tr_lwip_el_conn *h = held_join();
    if (answer_now) {
        FZ_ASSERT(R.answer_len == TR_EL_HEAD_BYTES + TR_EL_REPLY_BYTES,
                  "a JOIN to redirect got %zu bytes back", R.answer_len);
        FZ_ASSERT(tr_el_decode_brief(R.answer, R.answer_len, &r, NULL, 0) == 0 &&
                  r.type == TR_EL_REPLY && r.token == TOKEN && r.answer == TR_EL_NOT_COORD &&
                  r.coord == 0 && r.epoch == 0, "the REPLY is not NOT_COORD(0) of epoch 0");
        FZ_ASSERT(R.closed, "the port did not close after its REPLY");
        FZ_ASSERT(!h, "a redirected JOIN is still held");
        return;
    }
    FZ_ASSERT(R.answer_len == 0, "%zu bytes answered to a stream that gets no REPLY",
              R.answer_len);
    if (is_join && R.len == JOIN_MSG && !R.fin) {
        FZ_ASSERT(h != NULL, "a JOIN of this view, nothing after it, is not held");
        FZ_ASSERT(h->join.rank == j.join.rank && h->join.step == j.join.step &&
                  h->epoch == j.epoch && h->join.port == j.join.port,
                  "the held JOIN differs from the one sent");
    } else {
        FZ_ASSERT(!h, "a JOIN is held after %s",
                  is_join ? "bytes or a FIN after it" : "a stream that is no JOIN");
    }
}

/* Everything back to lwIP; then the pool must be whole again. */
static void teardown(void)
{
    tr_lwip_elastic_close(&R.el, 0);
    fuzz_lwip_reset();
}

static void drive(void *arg, uint32_t wait_ms)
{
    (void)arg;
    (void)wait_ms;
    turn();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size };
    struct tr_lwip_addr table[3] = { { { 10, 0, 0, 1 }, PORT0 },
                                     { { 10, 0, 0, 1 }, PORT0 + 1 },
                                     { { 10, 0, 0, 1 }, PORT0 + 2 } };
    struct tr_lwip_config cfg;
    struct tr_lwip_elastic_config ec;
    ip4_addr_t a;
    uint8_t flags;
    const uint8_t *rest;
    size_t n;
    int i;

    fuzz_lwip_setup();
    memset(&R, 0, sizeof R);
    flags = fz_u8(&in);
    R.fin = (flags & 2) != 0;
    put_join(&in, flags & 1);
    for (i = 0; i < 8; i++)
        R.piece[i] = fz_u8(&in);
    for (i = 0; i < 4; i++)
        R.per_chain[i] = fz_u8(&in);
    rest = fz_take(&in, sizeof R.stream - R.len, &n);
    memcpy(R.stream + R.len, rest, n);
    R.len += n;

    memset(&cfg, 0, sizeof cfg);
    cfg.rank = 1;
    cfg.world = 3;
    cfg.table = table;
    cfg.job_token = TOKEN;
    cfg.drive = drive;
    cfg.rx_mem = rx_mem;
    cfg.rx_mem_size = sizeof rx_mem;
    memset(&ec, 0, sizeof ec);
    ec.handshake_ms = 100000;         /* the poll timer never drops it here */
    FZ_ASSERT(tr_lwip_init(&R.lw, &cfg) == 0, "init");
    FZ_ASSERT(tr_lwip_elastic_start(&R.el, &ec, &R.lw) == 0, "elastic start");
    FZ_ASSERT(tr_lwip_listen(&R.lw) == 0, "listen");

    R.client = tcp_new();
    tcp_recv(R.client, cli_recv);
    tcp_err(R.client, cli_err);
    IP4_ADDR(&a, 10, 0, 0, 1);
    tcp_connect(R.client, &a, PORT0 + 1, cli_connected);
    play();
    judge();
    teardown();
    return 0;
}
