/* tinyring board_mps2: see lan9118_netif.h. One static bounce frame: the
 * FIFOs move 32-bit words, pbuf chains are byte-granular. Both directions
 * share it: a received frame is copied into its pbuf before lwIP sees it,
 * so whatever lwIP sends in answer finds the frame free (nothing sends
 * from an interrupt, and linkoutput never polls the receive side). */
#include <string.h>
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"
#include "board.h"
#include "lan9118_netif.h"

unsigned lan9118_netif_rx_nopbuf;

static uint8_t frame[LAN9118_MAX_FRAME];

#define TX_WAIT_MS 100u

static err_t linkoutput(struct netif *nif, struct pbuf *p)
{
    struct lan9118 *d = nif->state;
    uint16_t len;
    uint32_t t0;
    int e;

    if (p->tot_len > sizeof frame)
        return ERR_BUF;
    len = pbuf_copy_partial(p, frame, p->tot_len, 0);
    /* the chip drains its FIFO at line rate: wait briefly rather than drop */
    t0 = board_now_ms();
    while ((e = lan9118_send(d, frame, len)) == LAN9118_ERR_FULL &&
           board_now_ms() - t0 < TX_WAIT_MS)
        ;
    return e == 0 ? ERR_OK : ERR_IF;
}

err_t lan9118_netif_init(struct netif *nif)
{
    struct lan9118 *d = nif->state;
    nif->name[0] = 'e';
    nif->name[1] = 'n';
    nif->output = etharp_output;
    nif->linkoutput = linkoutput;
    nif->mtu = 1500;
    nif->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(nif->hwaddr, d->mac, ETH_HWADDR_LEN);
    nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    return ERR_OK;
}

int lan9118_netif_poll(struct netif *nif)
{
    struct lan9118 *d = nif->state;
    int n = 0;
    long len;
    while ((len = lan9118_recv(d, frame, sizeof frame)) != 0) {
        struct pbuf *p;
        if (len < 0)
            continue;  /* bad frame, already discarded and counted */
        p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
        if (!p) {
            lan9118_netif_rx_nopbuf++;
            continue;
        }
        pbuf_take(p, frame, (u16_t)len);
        if (nif->input(p, nif) != ERR_OK)
            pbuf_free(p);
        n++;
    }
    return n;
}
