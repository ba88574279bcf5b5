/* tinyring test: an lwIP netif on a Linux TAP device (host only).
 *
 * The TAP device must exist (ip tuntap add dev NAME mode tap) in the network
 * namespace the process runs in; tr_tapif_open attaches to it with
 * IFF_TAP|IFF_NO_PI, so every read() is one Ethernet frame and every write()
 * sends one. tr_tapif_drive is the tr_lwip "drive" callback: wait for a frame
 * (poll on the fd), feed frames to lwIP, run sys_check_timeouts(), and follow
 * the kernel side's up/down state into the netif's link state (so a TAP set
 * down makes routes vanish and the port reports TR_ERR_UNREACH).
 */
#ifndef TR_TAPIF_H
#define TR_TAPIF_H

#include <stdint.h>
#include "lwip/netif.h"

struct tr_tapif {
    int           fd;          /* /dev/net/tun attached to the TAP, or -1 */
    int           ctl;         /* AF_INET socket for SIOCGIFFLAGS */
    char          name[16];    /* interface name */
    uint8_t       mac[6];      /* our MAC (lwIP side) */
    struct netif  netif;       /* the lwIP netif (default) */
    uint32_t      next_link_check;   /* sys_now() of the next flags check */
    unsigned long rx_frames, tx_frames, rx_drop, tx_err;
};

/* Attach to TAP `name`, add the netif with addr/mask (dotted quads), set it
 * default and up. lwip_init() first. Returns 0 or -1 (errno text printed). */
int tr_tapif_open(struct tr_tapif *t, const char *name, const uint8_t mac[6],
                  const char *addr, const char *mask);

/* The tr_lwip drive callback: arg is the struct tr_tapif. */
void tr_tapif_drive(void *arg, uint32_t wait_ms);

void tr_tapif_close(struct tr_tapif *t);

#endif /* TR_TAPIF_H */
