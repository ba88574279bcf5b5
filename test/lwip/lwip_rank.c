/* tinyring test: one rank with its own lwIP stack (NO_SYS=1) on a TAP device.
 *
 *   lwip_rank --tap tap1 --ip 198.18.0.11 --mask 255.255.255.0
 *             --table 198.18.0.10:7000,198.18.0.11:7000,...
 *             --rank 1 --world 3 --token 0x1234 --mode coll --suite NAME
 *             [--timeout ms] [--segment bytes] [--iters n] [--bytes n]
 *             [--connect-ms ms] [--rx bytes]
 *
 * The main loop is exactly what firmware runs: lwip_init, netif_add, then
 * everything happens in tr_lwip's poll, which calls the TAP drive
 * (frames in, sys_check_timeouts). Run it inside the test's network
 * namespace (ip netns exec), where the TAP already exists.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lwip/init.h"
#include "lwip/memp.h"
#include "lwip/priv/memp_priv.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/ip4_addr.h"

#include "tinyring.h"
#include "tr_lwip.h"
#include "tapif.h"
#include "ring_job.h"
#include "../harness.h"

#define MAX_WORLD 16

static struct tr_tapif tap;
static struct tr_lwip lw;
static uint8_t rx_rings[2 * 2 * TCP_WND];   /* 2 links x 2 windows */
static struct tr_lwip_addr table[MAX_WORLD];
static struct tr_lwip_elastic el;

static int el_service(void *ctx)
{
    (void)ctx;
    return tr_lwip_elastic_service(&el);
}

/* --rejoin: a board started again finds its running job and joins it at
 * the next change. Returns 0 or an error (a message printed). */
static int rejoin(struct ring_elastic *ops)
{
    static struct tr_lwip_elastic_round round;
    int rc = tr_lwip_elastic_find(&el, 5000);
    if (rc == 1)
        rc = tr_lwip_elastic_reform(&el, 0, &round);
    else if (rc == 0)
        rc = TR_ERR_CLOSED;
    if (rc < 0) {
        fprintf(stderr, "lwip rank %u: rejoin failed: %s (refusal %u, verdict %d)\n", el.rank,
                tr_strerror(rc), (unsigned)el.refusal, round.verdict);
        return rc;
    }
    ring_elastic_joined(ops, "lwip", el.rank, round.rank, round.world, round.source, round.epoch,
                        round.coordinator);
    return 0;
}

/* --mode elastic: the lwIP port's membership round after a lost ring. */
static int el_reform(void *ctx, uint64_t position, int *rank, int *world, int *source,
                     uint32_t *epoch, uint64_t *step)
{
    static struct tr_lwip_elastic_round round;
    int rc = tr_lwip_elastic_reform(&el, position, &round);
    (void)ctx;
    if (rc < 0) {
        fprintf(stderr, "lwip rank %u: membership round failed: %s (verdict %d, answer %u, "
                "coordinated %d, coordinator %u, %u rounds, %u ms)\n", el.rank,
                tr_strerror(rc), round.verdict, (unsigned)round.answer, round.coordinated,
                (unsigned)round.coordinator, (unsigned)round.rounds, (unsigned)round.ms);
        return rc;
    }
    printf("lwip rank %u: round %u ms, coordinator rank %u, %u left, %u JOINs redirected\n",
           el.rank, (unsigned)round.ms, (unsigned)round.coordinator, (unsigned)round.n_left,
           (unsigned)el.redirected);
    *rank = round.rank;
    *world = round.world;
    *source = round.source;
    *epoch = round.epoch;
    *step = round.step;
    return 0;
}

/* --mode elastic: the membership kept from the start (before connect);
 * --rejoin: the running job found and joined. 0 or an error. */
static int elastic_up(struct ring_job *j, int again)
{
    static struct ring_elastic ops = { NULL, el_service, NULL, 0, 0, 0, 0 };
    struct tr_lwip_elastic_config ec;
    int rc;
    memset(&ec, 0, sizeof ec);
    ec.timeout_ms = j->timeout_ms;
    rc = tr_lwip_elastic_start(&el, &ec, &lw);
    ops.reform = el_reform;
    j->el = &ops;
    if (rc == 0 && again)
        rc = rejoin(&ops);
    return rc;
}

static int parse_table(const char *s)
{
    int n = 0;
    while (*s && n < MAX_WORLD) {
        unsigned a, b, c, d, port;
        int used = 0;
        if (sscanf(s, "%u.%u.%u.%u:%u%n", &a, &b, &c, &d, &port, &used) != 5)
            return -1;
        table[n].ip[0] = (uint8_t)a; table[n].ip[1] = (uint8_t)b;
        table[n].ip[2] = (uint8_t)c; table[n].ip[3] = (uint8_t)d;
        table[n].port = (uint16_t)port;
        n++;
        s += used;
        if (*s == ',')
            s++;
    }
    return n;
}

/* Free elements of one of lwIP's static pools (walks its free list; works
 * without LWIP_STATS, as lwIP's own unit tests check for leaks). */
static int pool_free(memp_t t)
{
    const struct memp_desc *d = memp_pools[t];
    const struct memp *m = *d->tab;
    int n = 0;
    while (m) {
        n++;
        m = m->next;
    }
    return n;
}

/* Segments still queued on live pcbs (a FIN the neighbour has not
 * acknowledged because it exited first is in flight, not leaked). */
static int segs_in_flight(void)
{
    const struct tcp_pcb *p;
    const struct tcp_seg *s;
    int n = 0;
    for (p = tcp_active_pcbs; p; p = p->next) {
        for (s = p->unsent; s; s = s->next)
            n++;
        for (s = p->unacked; s; s = s->next)
            n++;
    }
    return n;
}

/* After a successful job and tr_lwip_close: every received pbuf (held
 * chains included) is back in PBUF_POOL, and every TX segment is free or
 * queued on a live pcb. */
static int check_pools(const char *suite)
{
    char name[128];
    uint32_t t0 = sys_now();
    /* FIN handshakes finish in a few turns; TIME_WAIT holds no segments */
    while ((pool_free(MEMP_TCP_SEG) != memp_pools[MEMP_TCP_SEG]->num ||
            pool_free(MEMP_PBUF_POOL) != memp_pools[MEMP_PBUF_POOL]->num) &&
           (uint32_t)(sys_now() - t0) < 300)
        tr_tapif_drive(&tap, 10);
    TH_CHECK(pool_free(MEMP_PBUF_POOL) == memp_pools[MEMP_PBUF_POOL]->num,
             "PBUF_POOL: %d of %d free after close", pool_free(MEMP_PBUF_POOL),
             memp_pools[MEMP_PBUF_POOL]->num);
    TH_CHECK(pool_free(MEMP_TCP_SEG) + segs_in_flight() == memp_pools[MEMP_TCP_SEG]->num,
             "TCP_SEG: %d free + %d in flight of %d after close", pool_free(MEMP_TCP_SEG),
             segs_in_flight(), memp_pools[MEMP_TCP_SEG]->num);
    TH_CHECK(pool_free(MEMP_PBUF) == memp_pools[MEMP_PBUF]->num,
             "PBUF: %d of %d free after close", pool_free(MEMP_PBUF), memp_pools[MEMP_PBUF]->num);
    snprintf(name, sizeof name, "%s-pools", suite);
    return th_report(name);
}

int main(int argc, char **argv)
{
    struct ring_job j = { 0, 0, 0, "coll", "lwip", "lwip", 10000, 0, 3, 1 << 20, 0, -1, NULL, 0 };
    const char *tapname = NULL, *ip = NULL, *mask = "255.255.255.0";
    struct tr_lwip_config lc;
    struct tr_transport tp;
    uint32_t connect_ms = 20000;
    size_t rx = tr_lwip_rx_size();   /* ask first; --rx overrides (tests) */
    uint8_t mac[6] = { 0x02, 0x74, 0x72, 0x00, 0x00, 0x00 };   /* locally administered */
    int i, n = 0, rc, code, again = 0;

    for (i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (ring_job_arg(&j, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--tap")) { tapname = v; i++; }
        else if (!strcmp(argv[i], "--ip")) { ip = v; i++; }
        else if (!strcmp(argv[i], "--mask")) { mask = v; i++; }
        else if (!strcmp(argv[i], "--table")) { n = parse_table(v); i++; }
        else if (!strcmp(argv[i], "--connect-ms")) { connect_ms = (uint32_t)atol(v); i++; }
        else if (!strcmp(argv[i], "--rx")) { rx = (size_t)atol(v); i++; }
        else if (!strcmp(argv[i], "--rejoin")) again = 1;
        else { fprintf(stderr, "lwip_rank: unknown argument %s\n", argv[i]); return 2; }
    }
    if (!tapname || !ip || n != j.world || j.rank < 0 || j.rank >= j.world ||
        rx > sizeof rx_rings) {
        fprintf(stderr, "lwip_rank: need --tap --ip --table (world entries) --rank --world\n");
        return 2;
    }
    mac[4] = (uint8_t)(getpid() >> 8);
    mac[5] = (uint8_t)j.rank;

    lwip_init();
    if (tr_tapif_open(&tap, tapname, mac, ip, mask) < 0)
        return 2;

    memset(&lc, 0, sizeof lc);
    lc.rank = j.rank;
    lc.world = j.world;
    lc.table = table;
    lc.job_token = j.token;
    lc.connect_timeout_ms = connect_ms;
    lc.drive = tr_tapif_drive;
    lc.drive_arg = &tap;
    lc.rx_mem = rx_rings;
    lc.rx_mem_size = rx;
    rc = tr_lwip_init(&lw, &lc);
    if (rc == 0 && !strcmp(j.mode, "elastic") && (rc = elastic_up(&j, again)) < 0 && again)
        return 1;
    if (rc == 0 && !again)
        rc = tr_lwip_connect(&lw);
    if (rc < 0) {
        fprintf(stderr, "lwip rank %d: bootstrap failed: %s (lwIP err %d, %u strangers refused)\n",
                j.rank, tr_strerror(rc), lw.last_lwip_err, (unsigned)lw.refused);
        return 1;
    }
    printf("lwip rank %d: links up, %u strangers refused\n", j.rank, (unsigned)lw.refused);
    tr_lwip_transport(&lw, &tp);
    code = ring_job_run(&j, &tp);
    if (j.el)
        tr_lwip_elastic_close(&el, 2000);
    else
        tr_lwip_close(&lw, 2000);
    if (code == 0 && strcmp(j.mode, "loop") != 0)
        code = check_pools(j.suite);
    if (tap.rx_drop || tap.tx_err)
        fprintf(stderr, "lwip rank %d: tap rx %lu tx %lu frames, %lu rx dropped, %lu tx errors\n",
                j.rank, tap.rx_frames, tap.tx_frames, tap.rx_drop, tap.tx_err);
    tr_tapif_close(&tap);
    return code;
}
