/* tinyring: the transport over lwIP's raw TCP API (NO_SYS=1).
 *
 * For bare-metal firmware with one main loop and no threads; proven on the
 * host by test/lwip (lwIP in a process on a TAP device). The port never
 * blocks and never allocates: the state struct and the receive rings are the
 * caller's, lwIP's own memory comes from its static pools (port/lwip/
 * lwipopts.h). Everything host-specific (the NIC, the clock) is the
 * application's:
 *
 *   - sys_now(): lwIP's NO_SYS clock (milliseconds), which the application
 *     provides anyway for sys_check_timeouts(); the port uses it as now_ms.
 *   - drive(arg, wait_ms): one turn of the application's network loop: feed
 *     received frames to the netif (netif->input), call sys_check_timeouts(),
 *     and wait for input at most wait_ms (host: poll() on the TAP fd; board:
 *     service the NIC, maybe WFI). poll() calls it until what core waits for
 *     holds or the timeout passes; so does bootstrap.
 *
 * Bootstrap (tr_lwip_connect): a static table gives every rank's IPv4
 * address and TCP port. Each rank listens on its own port for its left
 * neighbour and connects to its right one, retrying until the deadline. The
 * first bytes on a new connection are the link hello of core/tr_link.h
 * (the POSIX port speaks the same, so POSIX and lwIP ranks share one ring):
 * strangers (wrong job token, wrong rank) are dropped and the listener
 * keeps waiting. Core's tr_comm_hello runs after.
 *
 * Use:
 *   static struct tr_lwip lw;                       // caller's state
 *   static uint8_t rx[2 * 16384];                   // caller's rx rings
 *   struct tr_lwip_config c = { rank, world, table, token, 20000, 0,
 *                               my_drive, &nic, rx, sizeof rx };
 *   tr_lwip_init(&lw, &c);                          // after lwip_init + netif_add
 *   tr_lwip_connect(&lw);                           // both links up
 *   static struct tr_transport tp;                  // caller's, lives as long as comm
 *   tr_lwip_transport(&lw, &tp);
 *   tr_comm_init(&comm, &cc, &tp, scratch, n);
 *   ...
 *   tr_lwip_close(&lw, 1000);
 */
#ifndef TR_LWIP_H
#define TR_LWIP_H

#include <stddef.h>
#include <stdint.h>
#include "tr_link.h"
#include "tr_transport.h"

struct tcp_pcb;
struct pbuf;

/* Where one rank listens. */
struct tr_lwip_addr {
    uint8_t  ip[4];   /* IPv4 address a.b.c.d as ip[0..3] */
    uint16_t port;    /* TCP port, host byte order */
};

struct tr_lwip_config {
    int      rank;                /* 0 .. world-1 */
    int      world;               /* >= 2 (world 1 needs no transport) */
    const struct tr_lwip_addr *table; /* world entries, index = rank; the
                                   * caller keeps it alive (a const table in
                                   * flash is the intended use) */
    uint64_t job_token;           /* sent and checked in the link handshake */
    uint32_t connect_timeout_ms;  /* bootstrap deadline; 0 = 30000 */
    uint32_t retry_ms;            /* wait between connect attempts; 0 = 100 */
    void   (*drive)(void *arg, uint32_t wait_ms); /* see above; required */
    void    *drive_arg;           /* passed to drive */
    void    *rx_mem;              /* caller's receive rings: split in two equal
                                   * halves, one per link */
    size_t   rx_mem_size;         /* bytes at rx_mem: >= 2 * TR_LWIP_RX_MIN;
                                   * 2 * TCP_WND avoids holding pbufs */
};

/* Smallest ring per link tr_lwip_init accepts. */
#define TR_LWIP_RX_MIN 256u

/* Bytes of rx_mem to give tr_lwip_init for this lwipopts.h: a ring of one
 * TCP window per link, so received pbufs never wait in the port (ask first,
 * then pass the memory). Less works, down to 2 * TR_LWIP_RX_MIN. */
size_t tr_lwip_rx_size(void);

/* One TCP connection to a neighbour (or a candidate on the listener). */
struct tr_lwip_link {
    struct tr_lwip *owner;        /* back pointer (tcp_arg of the pcb) */
    struct tcp_pcb *pcb;          /* NULL once closed or failed */
    int      state;               /* enum in tr_lwip.c: idle, connecting,
                                   * handshake, ready, failed */
    int      err;                 /* sticky tr_err once the link broke, else 0 */
    int      eof;                 /* 1 after the peer's FIN */
    int      peer_rank;           /* rank at the other end, -1 until known */
    uint8_t *ring;                /* receive ring: ring_size bytes of rx_mem */
    size_t   ring_size;
    size_t   ring_head;           /* index of the oldest unread byte */
    size_t   ring_len;            /* unread bytes in the ring */
    struct pbuf *held;            /* received pbufs that did not fit the ring
                                   * yet (not acknowledged to lwIP: the TCP
                                   * window stays shut for them) */
    uint32_t unacked;             /* bytes core read but not yet passed to
                                   * tcp_recved (batched to >= 1 MSS) */
    uint32_t retry_at;            /* sys_now() of the next connect attempt
                                   * (while connecting: when to give up on
                                   * this attempt's SYN) */
    int      send_blocked;        /* 1 after tcp_write said ERR_MEM: not
                                   * writable until a segment is acked */
    uint8_t  hs[TR_LINK_HELLO_BYTES]; /* link hello bytes received so far */
    uint8_t  hs_len;
};

#define TR_LWIP_CANDIDATES 2      /* accepted, not yet identified connections */

struct tr_lwip {
    struct tr_lwip_config cfg;    /* copy of the configuration */
    struct tcp_pcb *listener;     /* listening pcb until the left link is up */
    struct tr_lwip_link link[2];  /* [TR_LEFT], [TR_RIGHT] */
    struct tr_lwip_link cand[TR_LWIP_CANDIDATES];
    uint32_t refused;             /* strangers dropped at the handshake */
    int      last_lwip_err;       /* the last err_t lwIP reported, for messages */
};

/* Check the configuration and set the state up (no network traffic yet).
 * lwip_init() and the netif must already be set up. Returns 0 or
 * TR_ERR_INVAL / TR_ERR_NOMEM (rx_mem too small). */
int tr_lwip_init(struct tr_lwip *lw, const struct tr_lwip_config *cfg);

/* Listen, connect to the right neighbour, accept the left one, exchange link
 * handshakes; drives the stack until both links are up or the deadline.
 * Returns 0, TR_ERR_TIMEOUT, TR_ERR_ADDRINUSE, TR_ERR_NOBUFS (lwIP pools). */
int tr_lwip_connect(struct tr_lwip *lw);

/* Fill tp so core drives lw's two links (tp->ctx = lw); the caller owns tp,
 * as with tr_posix_transport. It stays valid while lw lives. */
void tr_lwip_transport(struct tr_lwip *lw, struct tr_transport *tp);

/* Drive the stack until what was sent is acknowledged (at most linger_ms),
 * then close both links with a FIN; the link state is dropped. */
void tr_lwip_close(struct tr_lwip *lw, uint32_t linger_ms);

/* An lwIP err_t as a tr_err (0 for ERR_OK). */
int tr_lwip_err(int lwip_err);

/* The transport functions, also callable directly. */
long tr_lwip_send(void *ctx, int peer, const void *buf, size_t len);
long tr_lwip_recv(void *ctx, int peer, void *buf, size_t len);
int  tr_lwip_poll(void *ctx, unsigned want, uint32_t timeout_ms);
uint32_t tr_lwip_now_ms(void *ctx);

#endif /* TR_LWIP_H */
