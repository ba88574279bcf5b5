/* tinyring board_mps2: the LAN9118 driver as an lwIP netif (NO_SYS=1,
 * polled from the main loop; no lwIP call ever runs in an interrupt). */
#ifndef BOARD_LAN9118_NETIF_H
#define BOARD_LAN9118_NETIF_H

#include "lwip/netif.h"
#include "lan9118.h"

/* netif_add() init callback; netif->state must point at an initialised
 * struct lan9118. Ethernet + ARP, MTU 1500, hardware address from the chip. */
err_t lan9118_netif_init(struct netif *nif);

/* Move every waiting frame into lwIP (netif->input). Returns the number
 * delivered; frames are dropped (and counted by lwIP's caller) when the
 * PBUF_POOL is empty. */
int lan9118_netif_poll(struct netif *nif);

/* Frames dropped for want of a pbuf since start. */
extern unsigned lan9118_netif_rx_nopbuf;

#endif /* BOARD_LAN9118_NETIF_H */
