/* tinyring test: lwIP netif on a Linux TAP device (see tapif.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "tapif.h"

#define FRAME_MAX 1518          /* Ethernet frame without FCS, VLAN tag room */
#define RX_BURST  64            /* frames read per drive turn at most */

static err_t tap_linkoutput(struct netif *n, struct pbuf *p)
{
    struct tr_tapif *t = (struct tr_tapif *)n->state;
    uint8_t frame[FRAME_MAX];
    ssize_t w;
    u16_t len = p->tot_len;
    if (len > sizeof frame)
        return ERR_BUF;
    pbuf_copy_partial(p, frame, len, 0);
    w = write(t->fd, frame, len);
    if (w != (ssize_t)len) {
        t->tx_err++;            /* EIO while the TAP is down: the frame is lost */
        return ERR_IF;
    }
    t->tx_frames++;
    return ERR_OK;
}

static err_t tap_netif_init(struct netif *n)
{
    struct tr_tapif *t = (struct tr_tapif *)n->state;
    n->name[0] = 't';
    n->name[1] = 'p';
    n->output = etharp_output;
    n->linkoutput = tap_linkoutput;
    n->mtu = 1500;
    n->hwaddr_len = 6;
    memcpy(n->hwaddr, t->mac, 6);
    n->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    return ERR_OK;
}

/* The kernel side's flags: up and running means frames can flow. */
static int tap_kernel_up(struct tr_tapif *t)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", t->name);
    if (ioctl(t->ctl, SIOCGIFFLAGS, &ifr) < 0)
        return 0;
    return (ifr.ifr_flags & IFF_UP) != 0;
}

static void follow_link(struct tr_tapif *t)
{
    int up = tap_kernel_up(t);
    if (up && !netif_is_link_up(&t->netif))
        netif_set_link_up(&t->netif);
    else if (!up && netif_is_link_up(&t->netif))
        netif_set_link_down(&t->netif);
}

int tr_tapif_open(struct tr_tapif *t, const char *name, const uint8_t mac[6],
                  const char *addr, const char *mask)
{
    struct ifreq ifr;
    ip4_addr_t a, m, gw;
    memset(t, 0, sizeof *t);
    t->fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (t->fd < 0) {
        fprintf(stderr, "tapif: open /dev/net/tun: %s\n", strerror(errno));
        return -1;
    }
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
    if (ioctl(t->fd, TUNSETIFF, &ifr) < 0) {
        fprintf(stderr, "tapif: TUNSETIFF %s: %s\n", name, strerror(errno));
        close(t->fd);
        return -1;
    }
    fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK);
    t->ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    snprintf(t->name, sizeof t->name, "%s", ifr.ifr_name);
    memcpy(t->mac, mac, 6);
    if (!ip4addr_aton(addr, &a) || !ip4addr_aton(mask, &m)) {
        fprintf(stderr, "tapif: bad address %s/%s\n", addr, mask);
        return -1;
    }
    ip4_addr_set_zero(&gw);
    if (!netif_add(&t->netif, &a, &m, &gw, t, tap_netif_init, ethernet_input)) {
        fprintf(stderr, "tapif: netif_add failed\n");
        return -1;
    }
    netif_set_default(&t->netif);
    netif_set_up(&t->netif);
    follow_link(t);
    return 0;
}

void tr_tapif_drive(void *arg, uint32_t wait_ms)
{
    struct tr_tapif *t = (struct tr_tapif *)arg;
    struct pollfd pfd = { t->fd, POLLIN, 0 };
    uint32_t next = sys_timeouts_sleeptime();   /* next lwIP timer */
    int i;
    if (wait_ms > next)
        wait_ms = next;
    if (wait_ms > 50)
        wait_ms = 50;                 /* also re-check the link state */
    poll(&pfd, 1, (int)wait_ms);
    for (i = 0; i < RX_BURST; i++) {
        uint8_t frame[FRAME_MAX];
        struct pbuf *p;
        ssize_t n = read(t->fd, frame, sizeof frame);
        if (n <= 0)
            break;
        p = pbuf_alloc(PBUF_RAW, (u16_t)n, PBUF_POOL);
        if (!p) {                     /* pool empty: TCP will resend it */
            t->rx_drop++;
            continue;
        }
        pbuf_take(p, frame, (u16_t)n);
        t->rx_frames++;
        if (t->netif.input(p, &t->netif) != ERR_OK)
            pbuf_free(p);
    }
    sys_check_timeouts();
    if ((int32_t)(sys_now() - t->next_link_check) >= 0) {
        follow_link(t);
        t->next_link_check = sys_now() + 50;
    }
}

void tr_tapif_close(struct tr_tapif *t)
{
    netif_set_down(&t->netif);
    netif_remove(&t->netif);
    if (t->fd >= 0)
        close(t->fd);
    if (t->ctl >= 0)
        close(t->ctl);
    t->fd = t->ctl = -1;
}
