/* tinyring board_mps2: lwIP (NO_SYS=1) on the LAN9118 with the tr_lwip
 * transport (see net.h). */
#include "lwip/init.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "net.h"
#include "board.h"
#include "fmt.h"
#include "lan9118_netif.h"
#include "semihost.h"
#include "settings.h"
#include "tr_error.h"
#include "tr_lwip.h"

/* the receive rings, per link BOARD_RX_WNDS x TCP_WND: with one window a
 * link never holds a pbuf (port/lwip/README.md); the capped images take 1 */
#ifndef BOARD_RX_WNDS
#define BOARD_RX_WNDS 2
#endif
static uint8_t rx_rings[2 * BOARD_RX_WNDS * TCP_WND];
static struct tr_lwip lw;
static struct tr_transport tp;             /* the links as core sees them */
static struct lan9118 nic;
static struct netif nif;
static struct tr_lwip_addr table[BOARD_MAX_WORLD];
#if BOARD_ELASTIC
static struct tr_lwip_elastic el;          /* --elastic: the membership */
static int elastic;
#endif

/* LWIP_RAND: the QEMU board has no entropy source and lwIP asks once, at
 * lwip_init, so this is the same at every boot of one image; a board
 * without an RNG would mix in a counter kept across resets */
unsigned tr_lwip_rand(void)
{
    return board_now_ms() * 2654435761u;
}

/* lwIP's NO_SYS clock */
uint32_t sys_now(void)
{
    return board_now_ms();
}

void tr_lwip_platform_assert(const char *msg, const char *file, int line)
{
    board_printf("lwip assert: %s (%s:%d)\n", msg, file, line);
    sh_exit(5);
}

/* IRQ 13: a frame arrived. Acknowledge only; drive() takes it. The point
 * is the wake-up: WFI in drive() returns at once instead of at the next
 * SysTick. */
void board_irq_eth(void)
{
    lan9118_irq_ack(&nic);
}

/* One turn of the network loop: frames in, timers, then sleep until the
 * next interrupt (a frame, or SysTick's 1 ms) if nothing arrived and the
 * caller may wait. A frame that lands between the poll and the WFI costs
 * at most that 1 ms. */
static void drive(void *arg, uint32_t wait_ms)
{
    uint32_t t0 = board_now_ms();
    (void)arg;
    for (;;) {
        int got = lan9118_netif_poll(&nif);
        sys_check_timeouts();
        if (got || board_now_ms() - t0 >= wait_ms)
            return;
        __asm__ volatile("wfi");
    }
}

static int netif_up(const struct board_addr *me)
{
    ip4_addr_t ip, mask, gw;
    int e;
    if ((e = lan9118_init(&nic, LAN9118_MPS2_BASE, 0, 0)) != 0) {
        board_printf("train: lan9118 init %d\n", e);
        return -1;
    }
    lan9118_irq_enable(&nic, 1);
    board_nvic_enable(LAN9118_MPS2_IRQ, 1);
    lwip_init();
    IP4_ADDR(&ip, me->ip[0], me->ip[1], me->ip[2], me->ip[3]);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 0, 0, 0, 0);
    if (!netif_add(&nif, &ip, &mask, &gw, &nic, lan9118_netif_init, ethernet_input)) {
        board_printf("train: netif_add failed\n");
        return -1;
    }
    netif_set_default(&nif);
    netif_set_up(&nif);
    netif_set_link_up(&nif);
    return 0;
}

#if BOARD_ELASTIC
/* A process started again asks each rank of the table at most this long
 * per try (mnist_ring's MR_FIND_MS). */
#define BOARD_FIND_MS 1500u

/* --elastic at power-on: is the job of this table running? 1 (joined: the
 * VIEW taken, the new ring's links up), 0 (none answered, or only members
 * that hold the question: the fresh start) or a tr_err after printing why.
 * A member holds the question when its view still names this board: a
 * running job whose ring has not dropped this board's old life yet (its
 * neighbours' next segments meet the new stack's resets, so that takes a
 * step), or a fresh job whose other ranks linked first and wait for this
 * one. Asked again for up to --timeout / 4, then the fresh start: the
 * fresh ring's links wait --timeout for this board to listen, and a
 * running job that did not take it by then refuses the links (exit 1; the
 * next reboot asks again).
 * The dials get BOARD_FIND_MS too, not the rounds' 3 s: a running job's
 * members answer a SYN at once, while a peer of a fresh job not up yet
 * (its ARP unanswered: lwIP sends the SYN again only after 3 s) would cost
 * 3 s per pass, and the fresh ring's links wait only --timeout for this
 * board to listen. */
static int find_job(const struct board_settings *s, struct board_ring *ring)
{
    static struct tr_lwip_elastic_round r;
    uint32_t t0 = board_now_ms(), limit = s->timeout_s * 250u;
    uint32_t dial = el.cfg.handshake_ms;
    int e;
    el.cfg.handshake_ms = BOARD_FIND_MS;
    do
        e = tr_lwip_elastic_find(&el, BOARD_FIND_MS);
    while (e == TR_ERR_TIMEOUT && board_now_ms() - t0 < limit);
    el.cfg.handshake_ms = dial;
    if (e == TR_ERR_TIMEOUT)
        board_printf("elastic: rank %d: members held the question for %u ms without taking "
                     "this board in: a fresh start\n", s->rank, (unsigned)(board_now_ms() - t0));
    if (e == 0 || e == TR_ERR_TIMEOUT)
        return 0;
    r.verdict = 0;
    if (e == 1)
        e = tr_lwip_elastic_reform(&el, 0, &r);
    if (e < 0) {
        board_printf("train: rank %d: a running job answered but did not take this board: %s "
                     "(refusal %u, verdict %d, after %u ms)\n", s->rank, tr_strerror(e),
                     (unsigned)el.refusal, r.verdict, (unsigned)(board_now_ms() - t0));
        return e;
    }
    board_printf("elastic: rank %d: rejoined the running job as ring rank %d of %d (view %u, "
                 "state from ring rank %d, coordinator rank %u, %u ms)\n", s->rank, r.rank,
                 r.world, (unsigned)r.epoch, r.source, (unsigned)r.coordinator,
                 (unsigned)(board_now_ms() - t0));
    ring->rank = r.rank;
    ring->world = r.world;
    ring->source = r.source;
    ring->joined = 1;
    return 1;
}
#endif

const struct tr_transport *board_net_up(const struct board_settings *s, struct board_ring *ring)
{
    struct tr_lwip_config lc;
    const struct board_addr *me = &s->table[s->rank];
    int i, e, found = 0;

    ring->rank = s->rank;
    ring->world = s->world;
    ring->source = 0;
    ring->joined = 0;
    ring->holds_latest = 0;

    for (i = 0; i < s->world; i++) {
        for (e = 0; e < 4; e++)
            table[i].ip[e] = s->table[i].ip[e];
        table[i].port = s->table[i].port;
    }
    if (s->elastic && !BOARD_ELASTIC) {
        board_printf("train: --elastic: this image was built without it (BOARD_ELASTIC=0)\n");
        return 0;
    }
    if (netif_up(me) < 0)
        return 0;
    board_printf("train: rank %d/%d at %d.%d.%d.%d:%u mac %x%x link %d\n", s->rank, s->world,
                 me->ip[0], me->ip[1], me->ip[2], me->ip[3], (unsigned)me->port,
                 (unsigned)(nic.mac[0] << 8 | nic.mac[1]),
                 (unsigned)(nic.mac[2] << 24 | nic.mac[3] << 16 | nic.mac[4] << 8 | nic.mac[5]),
                 lan9118_link_up(&nic));
    lc.rank = s->rank;
    lc.world = s->world;
    lc.table = table;
    lc.job_token = board_token(s->job_token);
    lc.connect_timeout_ms = s->timeout_s * 1000u;
    lc.retry_ms = 200;
    lc.drive = drive;
    lc.drive_arg = 0;
    lc.rx_mem = rx_rings;
    lc.rx_mem_size = sizeof rx_rings;
    e = tr_lwip_init(&lw, &lc);
#if BOARD_ELASTIC
    if (e == 0 && s->elastic) {            /* the listener stays for the whole run */
        struct tr_lwip_elastic_config ec = { 0, 0, 0 };
        ec.timeout_ms = s->timeout_s * 1000u;
        ec.min_ranks = s->min_ranks;
        e = tr_lwip_elastic_start(&el, &ec, &lw);
        elastic = e == 0;
        if (e == 0 && (found = e = find_job(s, ring)) < 0)
            return 0;
    }
#endif
    if (e < 0 || (!found && (e = tr_lwip_connect(&lw)) < 0)) {
        board_printf("train: rank %d: cannot join the ring of --peers %s: %s\n", s->rank,
                     s->peers, tr_strerror(e));
        return 0;
    }
    tr_lwip_transport(&lw, &tp);
    return &tp;
}

#if BOARD_ELASTIC
int board_net_reform(uint64_t position, struct board_ring *ring)
{
    static struct tr_lwip_elastic_round r;
    int e;
    ring->holds_latest = 0;
    if (!elastic)
        return TR_ERR_INVAL;
    e = tr_lwip_elastic_reform(&el, position, &r);
    if (e < 0) {
        ring->holds_latest = r.verdict == TR_EL_BELOW_MIN && r.why.source == el.rank;
        board_printf("train: rank %u: membership round failed: %s (verdict %d: %u of %u ranks "
                     "answered, min %u)\n", (unsigned)el.rank, tr_strerror(e), r.verdict,
                     (unsigned)r.why.joined, (unsigned)r.why.previous, (unsigned)r.why.min_ranks);
        return e;
    }
    board_printf("elastic: rank %u: view %u from position %u: ring rank %d of %d, state from "
                 "ring rank %d, coordinator rank %u%s, %u left, round %u ms\n",
                 (unsigned)el.rank, (unsigned)r.epoch, (unsigned)r.step, r.rank, r.world,
                 r.source, (unsigned)r.coordinator, r.coordinated ? " (this board)" : "",
                 (unsigned)r.n_left, (unsigned)r.ms);
    ring->rank = r.rank;
    ring->world = r.world;
    ring->source = r.source;
    return 0;
}

int board_net_service(void)
{
    return elastic ? tr_lwip_elastic_service(&el) : 0;
}
#else
int board_net_reform(uint64_t position, struct board_ring *ring)
{
    (void)position;
    ring->holds_latest = 0;
    return TR_ERR_INVAL;
}

int board_net_service(void)
{
    return 0;
}
#endif

void board_net_report(void)
{
    board_printf("train: lan9118 tx %u rx %u rx_err %u irqs %u nopbuf %u\n",
                 (unsigned)nic.tx_frames, (unsigned)nic.rx_frames, (unsigned)nic.rx_errors,
                 (unsigned)nic.irqs, lan9118_netif_rx_nopbuf);
}

void board_net_down(uint32_t linger_ms)
{
#if BOARD_ELASTIC
    if (elastic) {
        tr_lwip_elastic_close(&el, linger_ms);
        return;
    }
#endif
    tr_lwip_close(&lw, linger_ms);
}
