/* Fuzz harness: the lwIP port's receive path (port/lwip/tr_lwip.c) fed as
 * pbuf chains, on the real lwIP (LWIP_DIR, NO_SYS=1, the port's lwipopts.h).
 *
 * One lwIP stack in this process, on a netif that loops every packet back
 * into itself (10.0.0.1; fuzz_loopif.c). The port runs rank 0 of a ring of 2 or 3 (left
 * neighbour listening on 7000, right neighbour on 7001). The harness is the
 * neighbours, on lwIP's raw API: it accepts the port's right link and
 * answers its hello, and it connects to the port's listener. What the port
 * then receives on that connection is the fuzzer's: the input is cut into
 * pbufs (PBUF_POOL, sizes from the input) chained a few at a time and
 * handed to the pcb's receive callback, exactly as tcp_input does; first
 * while the connection is a candidate (its first 24 bytes are its link
 * hello), then, once the port took it as its left link, between
 * tr_lwip_recv calls of sizes from the input; optionally a FIN at the end.
 *
 * Input: flags (bit 0: put a correct hello before the bytes; bit 1: FIN at
 * the end; bit 2: a ring of 3), 8 pbuf sizes, 4 chain lengths, 4 read
 * sizes, then the bytes.
 * Invariants: the port takes the connection as its left link exactly when
 * its first 24 bytes are the left neighbour's hello; from then on
 * tr_lwip_recv returns every later byte handed to lwIP, in order, nothing
 * else, and after a FIN TR_ERR_CLOSED; its ring never holds more than its
 * size; after tr_lwip_close every pbuf is back in lwIP's pool.
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
#include "tr_error.h"
#include "tr_link.h"
#include "tr_lwip.h"

#define TOKEN     0x5eed0123456789abull
#define PORT0     7000
#define MAX_STREAM 8192

/* ---- the run ------------------------------------------------------------- */

struct run {
    struct tr_lwip lw;
    int world;
    /* the input */
    uint8_t piece[8], per_chain[4], reads[4];
    uint8_t stream[MAX_STREAM];
    size_t  len;                      /* bytes of stream */
    size_t  fed;                      /* bytes handed to the port so far */
    unsigned chains;
    int     fin;
    /* the neighbours (the harness) */
    struct tcp_pcb *listener, *accepted, *client;
    uint8_t hello_in[TR_LINK_HELLO_BYTES];
    size_t  hello_got;
    int     connected;
    /* what tr_lwip_recv returned */
    uint8_t out[MAX_STREAM];
    size_t  out_len;
};

static struct run R;
static uint8_t rx_mem[2 * 8 * 1460 + 64];

static void hello_of(uint8_t *out, uint32_t rank, uint32_t world)
{
    struct tr_link_hello h = { TR_LINK_VERSION, TOKEN, 0, 0 };
    h.rank = rank;
    h.world = world;
    tr_link_hello_put(out, &h);
}

/* the right neighbour: read the port's hello, answer with ours */
static err_t acc_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg;
    (void)err;
    if (!p)
        return ERR_OK;
    if (R.hello_got < TR_LINK_HELLO_BYTES)
        R.hello_got += pbuf_copy_partial(p, R.hello_in + R.hello_got,
                                         (u16_t)(TR_LINK_HELLO_BYTES - R.hello_got), 0);
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    if (R.hello_got == TR_LINK_HELLO_BYTES) {
        uint8_t mine[TR_LINK_HELLO_BYTES];
        hello_of(mine, 1, (uint32_t)R.world);
        tcp_write(pcb, mine, sizeof mine, TCP_WRITE_FLAG_COPY);
        tcp_output(pcb);
        R.hello_got++;                /* answered */
    }
    return ERR_OK;
}

static void acc_err(void *arg, err_t err)
{
    (void)arg;
    (void)err;
    R.accepted = NULL;
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    if (err != ERR_OK || !pcb || R.accepted)
        return ERR_VAL;
    R.accepted = pcb;
    tcp_recv(pcb, acc_recv);
    tcp_err(pcb, acc_err);
    return ERR_OK;
}

/* the left neighbour's end: swallow the port's answer */
static err_t cli_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg;
    (void)err;
    if (p) {
        tcp_recved(pcb, p->tot_len);
        pbuf_free(p);
    }
    return ERR_OK;
}

static void cli_err(void *arg, err_t err)
{
    (void)arg;
    (void)err;
    R.client = NULL;
}

static err_t cli_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    (void)pcb;
    R.connected = err == ERR_OK;
    return ERR_OK;
}

static void neighbours_start(void)
{
    ip4_addr_t a;
    IP4_ADDR(&a, 10, 0, 0, 1);
    R.listener = tcp_new();
    tcp_bind(R.listener, IP_ANY_TYPE, PORT0 + 1);
    R.listener = tcp_listen(R.listener);
    tcp_accept(R.listener, on_accept);
    R.client = tcp_new();
    tcp_recv(R.client, cli_recv);
    tcp_err(R.client, cli_err);
    tcp_connect(R.client, &a, PORT0, cli_connected);
}

/* a piece of the stream: 1 to 1786 bytes (a pool buffer's at most) */
static size_t piece_bytes(uint8_t v)
{
    return 1u + (size_t)v * 7u;
}

/* The next chain of pbufs from the stream (fuzz_lwip_chain) */
static struct pbuf *next_chain(void)
{
    return fuzz_lwip_chain(R.stream, R.len, &R.fed, R.per_chain, R.piece, &R.chains, piece_bytes);
}

/* Hands p to the port as tcp_input does. */
static void hand_over(struct tcp_pcb *pcb, struct pbuf *p)
{
    pcb->recv(pcb->callback_arg, pcb, p, ERR_OK);
}

static struct tr_lwip_link *candidate(void)
{
    int i;
    for (i = 0; i < TR_LWIP_CANDIDATES; i++)
        if (R.lw.cand[i].pcb && R.lw.cand[i].state != 0)
            return &R.lw.cand[i];
    return NULL;
}

static void ring_check(void)
{
    int i;
    for (i = 0; i < 2; i++)
        FZ_ASSERT(R.lw.link[i].ring_len <= R.lw.link[i].ring_size,
                  "ring %d holds %zu of %zu bytes", i, R.lw.link[i].ring_len,
                  R.lw.link[i].ring_size);
}

/* One turn of the "network": packets, timers, and the fuzzer's next chain
 * for a connection that is still a candidate. */
static void drive(void *arg, uint32_t wait_ms)
{
    struct tr_lwip_link *c;
    (void)arg;
    (void)wait_ms;
    fuzz_lwip_ms += 5;
    fuzz_lwip_deliver();
    sys_check_timeouts();
    if (!R.listener)
        return;                       /* closing: no more scenario */
    if (!R.lw.link[TR_LEFT].pcb && (c = candidate()) != NULL && R.fed < R.len) {
        struct pbuf *p = next_chain();
        if (p)
            hand_over(c->pcb, p);
    }
    ring_check();
}

static void read_some(size_t want)
{
    long n;
    if (want > sizeof R.out - R.out_len)
        want = sizeof R.out - R.out_len;
    if (want == 0)
        return;
    n = tr_lwip_recv(&R.lw, TR_LEFT, R.out + R.out_len, want);
    if (n > 0)
        R.out_len += (size_t)n;
    ring_check();
}

/* The left link is up: the rest of the stream, between reads; then drain. */
static void stream_rest(void)
{
    struct tcp_pcb *pcb;
    unsigned k = 0, spins = 0;
    long n;
    while (R.fed < R.len && (pcb = R.lw.link[TR_LEFT].pcb) != NULL) {
        struct pbuf *p = next_chain();
        if (p)
            hand_over(pcb, p);
        read_some((size_t)R.reads[k++ % 4] * R.reads[k % 4] + 1u);
        if (!p && ++spins > 10000)
            break;
    }
    if (R.fin && (pcb = R.lw.link[TR_LEFT].pcb) != NULL)
        pcb->recv(pcb->callback_arg, pcb, NULL, ERR_OK);
    do {
        n = tr_lwip_recv(&R.lw, TR_LEFT, R.out + R.out_len,
                         sizeof R.out - R.out_len ? sizeof R.out - R.out_len : 1);
        if (n > 0)
            R.out_len += (size_t)n;
    } while (n > 0);
    FZ_ASSERT(R.out_len == R.fed - TR_LINK_HELLO_BYTES,
              "%zu bytes handed to lwIP after the hello, %zu came out", R.fed - TR_LINK_HELLO_BYTES,
              R.out_len);
    FZ_ASSERT(memcmp(R.out, R.stream + TR_LINK_HELLO_BYTES, R.out_len) == 0,
              "the bytes came out changed or reordered");
    if (R.fin)
        FZ_ASSERT(n == TR_ERR_CLOSED, "after the FIN and every byte: %ld", n);
    else
        FZ_ASSERT(n == TR_ERR_AGAIN, "no FIN, every byte read: %ld", n);
}

/* Everything back to lwIP; then the pool must be whole again. */
static void teardown(void)
{
    struct tcp_pcb_listen *lst = R.listener ? (struct tcp_pcb_listen *)R.listener : NULL;
    R.listener = NULL;
    tr_lwip_close(&R.lw, 0);
    if (lst)
        tcp_close((struct tcp_pcb *)lst);
    fuzz_lwip_reset();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size };
    struct tr_lwip_addr table[3] = { { { 10, 0, 0, 1 }, PORT0 + 1 },
                                     { { 10, 0, 0, 1 }, PORT0 + 1 },
                                     { { 10, 0, 0, 1 }, PORT0 + 1 } };
    struct tr_lwip_config cfg;
    struct tr_link_hello h;
    uint8_t flags;
    size_t n;
    const uint8_t *rest;
    int rc, left, i, hello_ok, taken;

    fuzz_lwip_setup();
    memset(&R, 0, sizeof R);
    flags = fz_u8(&in);
    R.world = (flags & 4) ? 3 : 2;
    R.fin = (flags & 2) != 0;
    for (i = 0; i < 8; i++)
        R.piece[i] = fz_u8(&in);
    for (i = 0; i < 4; i++)
        R.per_chain[i] = fz_u8(&in);
    for (i = 0; i < 4; i++)
        R.reads[i] = fz_u8(&in);
    left = R.world - 1;
    if (flags & 1) {
        hello_of(R.stream, (uint32_t)left, (uint32_t)R.world);
        R.len = TR_LINK_HELLO_BYTES;
    }
    rest = fz_take(&in, sizeof R.stream - R.len, &n);
    memcpy(R.stream + R.len, rest, n);
    R.len += n;

    /* rank 0 listens on PORT0 (its table entry), connects to rank 1 */
    table[0].port = PORT0;
    memset(&cfg, 0, sizeof cfg);
    cfg.rank = 0;
    cfg.world = R.world;
    cfg.table = table;
    cfg.job_token = TOKEN;
    cfg.connect_timeout_ms = 400;
    cfg.retry_ms = 20;
    cfg.drive = drive;
    cfg.rx_mem = rx_mem;
    cfg.rx_mem_size = sizeof rx_mem;
    FZ_ASSERT(tr_lwip_init(&R.lw, &cfg) == 0, "init");
    neighbours_start();

    rc = tr_lwip_connect(&R.lw);
    ring_check();
    hello_ok = R.fed >= TR_LINK_HELLO_BYTES &&
               tr_link_hello_judge(&h, R.stream, TOKEN, (uint32_t)R.world, (uint32_t)left) ==
                   TR_LINK_OK;
    taken = R.lw.link[TR_LEFT].pcb != NULL;
    FZ_ASSERT(taken == hello_ok, "%s as the left link after %zu bytes whose hello is %s",
              taken ? "taken" : "not taken", R.fed, hello_ok ? "the neighbour's" : "not");
    if (rc == 0)
        stream_rest();

    else
        FZ_ASSERT(rc == TR_ERR_TIMEOUT, "connect failed with %d", rc);
    teardown();
    return 0;
}
