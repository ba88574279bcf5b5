/* test/fuzz: the lwIP harnesses' stack on a loop netif (fuzz_loopif.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/init.h"
#include "lwip/ip4.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "fuzz.h"
#include "fuzz_loopif.h"
#include "tr_lwip.h"

#define QUEUE 64                      /* packets in flight on the loop netif */

uint32_t fuzz_lwip_ms = 1;

/* a fixed number: a run replays exactly */
unsigned tr_lwip_rand(void)
{
    return 0x2545u;
}

u32_t sys_now(void)
{
    return fuzz_lwip_ms;
}

void tr_lwip_platform_assert(const char *msg, const char *file, int line)
{
    fprintf(stderr, "lwIP assertion \"%s\" failed at %s:%d\n", msg, file, line);
    abort();
}

static struct netif nif;
static struct { uint16_t len; uint8_t b[1600]; } queue[QUEUE];
static unsigned queued;

static err_t loop_output(struct netif *n, struct pbuf *p, const ip4_addr_t *to)
{
    (void)n;
    (void)to;
    if (queued < QUEUE && p->tot_len <= sizeof queue[0].b) {
        queue[queued].len = pbuf_copy_partial(p, queue[queued].b, p->tot_len, 0);
        queued++;
    }
    return ERR_OK;                    /* a full queue drops it, as a wire would */
}

static err_t loop_init(struct netif *n)
{
    n->output = loop_output;
    n->mtu = 1500;
    n->flags = NETIF_FLAG_UP | NETIF_FLAG_LINK_UP;
    return ERR_OK;
}

void fuzz_lwip_deliver(void)
{
    unsigned n = queued, i;
    static struct { uint16_t len; uint8_t b[1600]; } now[QUEUE];
    memcpy(now, queue, sizeof now[0] * n);
    queued = 0;
    for (i = 0; i < n; i++) {
        struct pbuf *p = pbuf_alloc(PBUF_RAW, now[i].len, PBUF_POOL);
        if (!p)
            continue;
        pbuf_take(p, now[i].b, now[i].len);
        if (nif.input(p, &nif) != ERR_OK)
            pbuf_free(p);
    }
}

void fuzz_lwip_drop(void)
{
    queued = 0;
}

void fuzz_lwip_reset(void)
{
    struct pbuf *p[256];
    int n = 0, i;
    while (tcp_active_pcbs)
        tcp_abort(tcp_active_pcbs);
    while (tcp_tw_pcbs)
        tcp_abort(tcp_tw_pcbs);
    while (tcp_bound_pcbs)
        tcp_abort(tcp_bound_pcbs);
    while (tcp_listen_pcbs.listen_pcbs)
        tcp_close((struct tcp_pcb *)tcp_listen_pcbs.listen_pcbs);
    fuzz_lwip_drop();
    while (n < 256 && (p[n] = pbuf_alloc(PBUF_RAW, 1, PBUF_POOL)) != NULL)
        n++;
    for (i = 0; i < n; i++)
        pbuf_free(p[i]);
    FZ_ASSERT(n == PBUF_POOL_SIZE, "%d of %d pool pbufs free after close", n, PBUF_POOL_SIZE);
}

void fuzz_lwip_setup(void)
{
    static int done;
    ip4_addr_t a, m, gw;
    if (done)
        return;
    done = 1;
    lwip_init();
    IP4_ADDR(&a, 10, 0, 0, 1);
    IP4_ADDR(&m, 255, 255, 255, 0);
    IP4_ADDR(&gw, 0, 0, 0, 0);
    netif_add(&nif, &a, &m, &gw, NULL, loop_init, ip4_input);
    netif_set_default(&nif);
    netif_set_up(&nif);
    netif_set_link_up(&nif);
}

struct pbuf *fuzz_lwip_chain(const uint8_t *stream, size_t len, size_t *fed,
                             const uint8_t per_chain[4], const uint8_t piece[8],
                             unsigned *chains, size_t (*size_of)(uint8_t))
{
    struct pbuf *head = NULL;
    unsigned k, n = 1u + per_chain[*chains % 4] % 4u;
    for (k = 0; k < n && *fed < len; k++) {
        size_t want = size_of(piece[(*chains + k) % 8]);
        struct pbuf *p;
        if (want > PBUF_POOL_BUFSIZE)
            want = PBUF_POOL_BUFSIZE;
        if (want > len - *fed)
            want = len - *fed;
        p = pbuf_alloc(PBUF_RAW, (u16_t)want, PBUF_POOL);
        if (!p)
            break;
        pbuf_take(p, stream + *fed, (u16_t)want);
        *fed += want;
        if (head)
            pbuf_cat(head, p);
        else
            head = p;
    }
    (*chains)++;
    return head;
}
