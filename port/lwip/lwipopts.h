/* tinyring: lwIP options for the lwIP port, NO_SYS=1 (bare metal, one loop).
 *
 * One file for the host tests (test/lwip: lwIP in a process on a TAP device)
 * and the firmware build (apps/board_mps2), so what the host proves is what a
 * board runs. Sizes are tuned for the ring: two TCP connections (left and
 * right neighbour) plus one listener, streaming bulk float data both ways.
 * Every size is #ifndef-guarded: a board short of RAM may shrink it with -D.
 *
 * RAM this costs (Cortex-M4F, from `size` on the objects: the table in
 * port/lwip/README.md): dominated by the static
 * heap (MEM_SIZE) that TCP_WRITE_FLAG_COPY segments come from and by the
 * PBUF_POOL that received frames land in.
 */
#ifndef TR_LWIPOPTS_H
#define TR_LWIPOPTS_H

/* ---- the system model: no OS, no threads, no libc heap ---------------- */
#define NO_SYS                      1   /* raw API only, one main loop */
#define SYS_LIGHTWEIGHT_PROT        0   /* nothing preempts the stack: the main
                                         * loop feeds frames in (no lwIP calls
                                         * from interrupt handlers) */
#define LWIP_TIMERS                 1   /* sys_check_timeouts() from the loop */
#define LWIP_SOCKET                 0
#define LWIP_NETCONN                0
#define LWIP_NETIF_API              0
#define MEM_LIBC_MALLOC             0   /* lwIP's own heap in a static array */
#define MEMP_MEM_MALLOC             0   /* pools are static arrays too */
/* the pools hold pointers: align to the pointer size (4 on the boards, 8 on
 * a 64-bit host, where 4 left struct memp misaligned: UBSan in test/fuzz) */
#ifdef __SIZEOF_POINTER__
#define MEM_ALIGNMENT               __SIZEOF_POINTER__
#else
#define MEM_ALIGNMENT               4
#endif
#define LWIP_STATS                  0
#define LWIP_PROVIDE_ERRNO          0

/* ---- protocols: IPv4 + ARP + ICMP (ping) + TCP; no UDP, DNS, DHCP ------ */
#define LWIP_IPV4                   1
#define LWIP_IPV6                   0
#define LWIP_ARP                    1
#define LWIP_ETHERNET               1
#define LWIP_ICMP                   1
#define LWIP_RAW                    0
#define LWIP_UDP                    0
#define LWIP_DHCP                   0
#define LWIP_AUTOIP                 0
#define LWIP_IGMP                   0
#define LWIP_DNS                    0
#define LWIP_TCP                    1
#define IP_REASSEMBLY               0   /* TCP segments never fragment (MSS) */
#define IP_FRAG                     0
#define ARP_QUEUEING                1   /* keep the first SYN while ARP resolves */
#define ETHARP_SUPPORT_STATIC_ENTRIES 0
#define LWIP_NETIF_STATUS_CALLBACK  0
#define LWIP_NETIF_LINK_CALLBACK    0
#define LWIP_SINGLE_NETIF           1   /* one NIC per board (and per test rank) */

/* ---- TCP's initial sequence numbers: RFC 6528 (tr_lwip.c), not lwIP's
 * counter. The prototype is here because lwIP expands the hook in tcp.c,
 * which includes no header of the port; with IPv4 only, ip_addr_t is
 * struct ip4_addr. */
#include <stdint.h>
struct ip4_addr;
uint32_t tr_lwip_tcp_isn(const struct ip4_addr *local_ip, uint16_t local_port,
                         const struct ip4_addr *remote_ip, uint16_t remote_port);
#define LWIP_HOOK_TCP_ISN(lip, lport, rip, rport) tr_lwip_tcp_isn((lip), (lport), (rip), (rport))

/* ---- TCP: two bulk connections ---------------------------------------- */
#ifndef TCP_MSS
#define TCP_MSS                     1460
#endif
#ifndef TCP_WND
#define TCP_WND                     (8 * TCP_MSS)   /* per connection; the port
                                                     * reopens it as core reads */
#endif
#ifndef TCP_SND_BUF
#define TCP_SND_BUF                 (8 * TCP_MSS)   /* bytes queued per connection */
#endif
#define TCP_SND_QUEUELEN            ((4 * (TCP_SND_BUF) + (TCP_MSS - 1)) / (TCP_MSS))
#define TCP_QUEUE_OOSEQ             0   /* a LAN: out-of-order is rare, resend */
#define LWIP_TCP_KEEPALIVE          0
#define TCP_LISTEN_BACKLOG          1
#define TCP_DEFAULT_LISTEN_BACKLOG  2
#define LWIP_CALLBACK_API           1
#define LWIP_TCP_TIMESTAMPS         0
#define LWIP_WND_SCALE              0

/* ---- pools (all static): sized for 2 connections + 1 listener ---------- */
#ifndef MEM_SIZE
#define MEM_SIZE                    (2 * TCP_SND_BUF + 8192)  /* heap: copied
                                     * TX segments of both links + ARP/ICMP */
#endif
#ifndef MEMP_NUM_TCP_PCB
#define MEMP_NUM_TCP_PCB            8   /* 2 links + a stranger or a stale
                                         * TIME_WAIT during bootstrap retries */
#endif
#ifndef MEMP_NUM_TCP_PCB_LISTEN
#define MEMP_NUM_TCP_PCB_LISTEN     1
#endif
#define MEMP_NUM_TCP_SEG            (2 * TCP_SND_QUEUELEN + 8)
#define MEMP_NUM_PBUF               8   /* PBUF_REF/ROM: unused by the port */
#define MEMP_NUM_RAW_PCB            0
#define MEMP_NUM_UDP_PCB            0
#define MEMP_NUM_ARP_QUEUE          4
#ifndef PBUF_POOL_SIZE
#define PBUF_POOL_SIZE              (2 * TCP_WND / TCP_MSS + 8)  /* RX frames:
                                     * a full window on each link + slack */
#endif
#define ETH_PAD_SIZE                0

/* ---- checksums in software (a TAP device and a LAN9118 offload nothing) */
#define CHECKSUM_GEN_IP             1
#define CHECKSUM_GEN_TCP            1
#define CHECKSUM_CHECK_IP           1
#define CHECKSUM_CHECK_TCP          1
#define LWIP_CHECKSUM_ON_COPY       1   /* sum while tcp_write copies */

#define LWIP_DEBUG_TIMERNAMES       0

#endif /* TR_LWIPOPTS_H */
