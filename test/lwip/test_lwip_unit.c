/* tinyring test: the lwIP port's pieces that need no network.
 *  - the link hello is byte-compatible with the POSIX port's (both ways)
 *  - every lwIP err_t maps to a tr_err (ERR_OK -> 0, the rest negative)
 *  - tr_lwip_init checks its configuration and never touches the network
 */
#include <string.h>

#include "lwip/init.h"
#include "lwip/err.h"
#include "lwip/opt.h"

#include "tinyring.h"
#include "tr_lwip.h"
#include "tr_posix_int.h"
#include "../harness.h"

static void drive_nop(void *arg, uint32_t ms) { (void)arg; (void)ms; }

int main(void)
{
    int e;

    /* error mapping: ERR_OK..ERR_ARG (0..-16) and an unknown one */
    TH_CHECK(tr_lwip_err(ERR_OK) == 0, "ERR_OK is not 0");
    for (e = -1; e >= -17; e--) {
        int t = tr_lwip_err(e);
        TH_CHECK(t < 0, "err_t %d maps to %d", e, t);
        TH_CHECK(strcmp(tr_strerror(t), "unknown error") != 0, "err_t %d maps to unknown %d", e, t);
    }
    TH_CHECK(tr_lwip_err(ERR_RST) == TR_ERR_CLOSED, "reset is not 'closed'");
    TH_CHECK(tr_lwip_err(ERR_RTE) == TR_ERR_UNREACH, "no route is not 'unreachable'");
    /* lwIP's pools running dry is not the caller's arena being too small */
    TH_CHECK(tr_lwip_err(ERR_MEM) == TR_ERR_NOBUFS, "ERR_MEM is not NOBUFS");
    TH_CHECK(tr_lwip_err(ERR_BUF) == TR_ERR_NOBUFS, "ERR_BUF is not NOBUFS");
    TH_CHECK(strstr(tr_strerror(tr_lwip_err(ERR_MEM)), "arena") == NULL,
             "ERR_MEM reads '%s'", tr_strerror(tr_lwip_err(ERR_MEM)));
    TH_CHECK(tr_lwip_err(ERR_USE) == TR_ERR_ADDRINUSE, "ERR_USE is not ADDRINUSE");

    /* configuration checks */
    {
        static struct tr_lwip lw;
        static uint8_t rx[2 * TR_LWIP_RX_MIN];
        static const struct tr_lwip_addr table[2] = { { { 198, 18, 0, 10 }, 7000 },
                                                      { { 198, 18, 0, 11 }, 7000 } };
        struct tr_lwip_config c;
        struct tr_transport t, *tp = &t;
        uint8_t buf[4];
        lwip_init();
        memset(&c, 0, sizeof c);
        c.rank = 0; c.world = 2; c.table = table; c.drive = drive_nop;
        c.rx_mem = rx; c.rx_mem_size = sizeof rx;
        TH_CHECK(tr_lwip_init(&lw, &c) == 0, "a good configuration is refused");
        memset(tp, 0, sizeof *tp);
        tr_lwip_transport(&lw, tp);
        TH_CHECK(tp->ctx == &lw && tp->send && tp->recv && tp->poll && tp->now_ms,
                 "transport not filled");
        TH_CHECK(tp->recv(tp->ctx, TR_LEFT, buf, sizeof buf) == TR_ERR_CLOSED,
                 "recv before connect is not CLOSED");
        TH_CHECK(tp->send(tp->ctx, TR_RIGHT, buf, sizeof buf) == TR_ERR_CLOSED,
                 "send before connect is not CLOSED");
        TH_CHECK(tp->send(tp->ctx, 2, buf, sizeof buf) == TR_ERR_INVAL, "peer 2 accepted");
        TH_CHECK(tr_lwip_rx_size() == 2u * TCP_WND && tr_lwip_rx_size() >= 2 * TR_LWIP_RX_MIN,
                 "rx size query %zu", tr_lwip_rx_size());
        c.rx_mem_size = sizeof rx - 1;
        TH_CHECK(tr_lwip_init(&lw, &c) == TR_ERR_NOMEM, "small rx rings accepted");
        c.rx_mem_size = sizeof rx;
        c.world = 1;
        TH_CHECK(tr_lwip_init(&lw, &c) == TR_ERR_INVAL, "world 1 accepted");
        c.world = 2; c.rank = 2;
        TH_CHECK(tr_lwip_init(&lw, &c) == TR_ERR_INVAL, "rank out of range accepted");
        c.rank = 0; c.drive = NULL;
        TH_CHECK(tr_lwip_init(&lw, &c) == TR_ERR_INVAL, "no drive callback accepted");
    }
    return th_report("lwip-unit");
}
