/* tinyring test: the lwIP port's pieces that need no network.
 *  - the link hello is byte-compatible with the POSIX port's (both ways)
 *  - every lwIP err_t maps to a tr_err (ERR_OK -> 0, the rest negative)
 *  - tr_lwip_init checks its configuration and never touches the network
 *  - the elastic member's messages: core's brief codec and decision (what
 *    the lwIP port uses, no 3 KiB view) give tr_el_encode/decode's bytes and
 *    tr_el_decide's views; tr_lwip_elastic_start's checks
 *  - TCP's initial sequence numbers: SipHash-2-4 against OpenSSL's, and
 *    lwIP's tcp_next_iss gives tr_lwip_tcp_isn's (RFC 6528)
 */
#include <string.h>

#include "lwip/init.h"
#include "lwip/err.h"
#include "lwip/opt.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"

#include "tinyring.h"
#include "tr_lwip.h"
#include "tr_posix_int.h"
#include "../harness.h"

static void drive_nop(void *arg, uint32_t ms) { (void)arg; (void)ms; }

/* The brief codec and decision agree with the full ones. */
static void check_brief(void)
{
    static struct tr_el_msg m, back;
    static struct tr_el_view prev, next;
    static uint8_t a[TR_EL_MAX_BYTES], b[TR_EL_MAX_BYTES];
    struct tr_el_member mem[4], small[2], nm[TR_LWIP_MAX_WORLD];
    struct tr_el_brief br, nb, pb;
    struct tr_el_join j[3];
    struct tr_el_abort w1, w2;
    uint32_t addr[4] = { 0x0a0012c6u, 0x0b0012c6u, 0x0c0012c6u, 0x0d0012c6u };
    uint16_t port[4] = { 7000, 7001, 7002, 7003 };
    size_t na, nb_;
    unsigned t, i;
    int v1, v2;
    tr_el_view_initial(&prev, 4, addr, port);
    for (t = TR_EL_JOIN; t <= TR_EL_ABORT; t++) {
        memset(&m, 0, sizeof m);
        m.type = t;
        m.token = 0x1122334455667788ull;
        m.epoch = 3;
        m.join.rank = 2; m.join.step = 77; m.join.addr = addr[2]; m.join.port = 7002;
        m.answer = TR_EL_NOT_COORD; m.coord = 1;
        m.abort.reason = TR_EL_BELOW_MIN; m.abort.joined = 2; m.abort.previous = 4;
        m.abort.min_ranks = 3; m.abort.step = 9; m.abort.source = 1;
        m.view = prev;
        m.view.epoch = 3;
        na = tr_el_encode(&m, a, sizeof a);
        TH_CHECK(na > 0 && tr_el_decode_brief(a, na, &br, mem, 4) == 0,
                 "type %u: brief decode of tr_el_encode's bytes", t);
        nb_ = tr_el_encode_brief(&br, mem, b, sizeof b);
        TH_CHECK(nb_ == na && memcmp(a, b, na) == 0, "type %u: brief bytes differ", t);
        TH_CHECK(tr_el_decode(b, nb_, &back) == 0 && back.type == t, "type %u: decode", t);
    }
    TH_CHECK(tr_el_decode_brief(a, na, &br, small, 2) != TR_ERR_NOMEM,
             "an ABORT needs no member room");
    m.type = TR_EL_VIEW;
    na = tr_el_encode(&m, a, sizeof a);
    TH_CHECK(tr_el_decode_brief(a, na, &br, small, 2) == TR_ERR_NOMEM,
             "a VIEW of 4 into room for 2 is not NOMEM");
    /* the decision: rank 2 gone, ranks 0, 1, 3 answered at positions 41, 42, 41 */
    memset(j, 0, sizeof j);
    for (i = 0; i < 3; i++) {
        j[i].rank = i < 2 ? i : 3;
        j[i].step = i == 1 ? 42 : 41;
        j[i].addr = addr[j[i].rank];
        j[i].port = port[j[i].rank];
    }
    v1 = tr_el_decide(&prev, j, 3, 1, &next, &w1);
    memset(&pb, 0, sizeof pb);
    pb.epoch = prev.epoch;
    pb.n = prev.n;
    v2 = tr_el_decide_brief(&pb, prev.m, j, 3, 1, &nb, nm, TR_LWIP_MAX_WORLD, &w2);
    TH_CHECK(v1 == TR_EL_GO && v2 == TR_EL_GO, "decide %d, brief %d", v1, v2);
    TH_CHECK(nb.type == TR_EL_VIEW && nb.epoch == next.epoch && nb.n == 3 && nb.n == next.n &&
             nb.source == next.source && nb.source == 1 && nb.step == 42 && nb.step == next.step &&
             memcmp(nm, next.m, 3 * sizeof nm[0]) == 0, "brief view differs from tr_el_decide's");
    TH_CHECK(tr_el_decide_brief(&pb, prev.m, j, 3, 1, &nb, nm, 2, &w2) == TR_ERR_INVAL,
             "a view larger than the room is not INVAL");
    TH_CHECK(tr_el_decide_brief(&pb, prev.m, j, 1, 1, &nb, nm, 4, &w2) == TR_EL_NO_MAJORITY &&
             w2.joined == 1 && w2.previous == 4, "1 of 4 is not NO_MAJORITY");
    TH_CHECK(tr_el_decide_brief(&pb, prev.m, j, 3, 4, &nb, nm, 4, &w2) == TR_EL_BELOW_MIN,
             "3 with min 4 is not BELOW_MIN");
}

/* SipHash-2-4 with key 00 01 .. 0f of the messages 00 01 .. n-1, as
 * `openssl mac -macopt hexkey:000102030405060708090a0b0c0d0e0f -macopt
 * size:8 SIPHASH` prints them; then the hook in lwIP's TCP. */
static void check_isn(void)
{
    static const struct { size_t n; uint8_t h[8]; } v[] = {
        { 0, { 0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72 } },
        { 1, { 0xfd, 0x67, 0xdc, 0x93, 0xc5, 0x39, 0xf8, 0x74 } },
        { 7, { 0x37, 0xd1, 0x01, 0x8b, 0xf5, 0x00, 0x02, 0xab } },
        { 8, { 0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93 } },
        { 12, { 0xfb, 0xe5, 0x0e, 0x86, 0xbc, 0x8f, 0x1e, 0x75 } },
        { 15, { 0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1 } },
    };
    uint8_t key[16], m[16];
    uint32_t isn[8];
    struct tcp_pcb *pcb;
    unsigned i, j, tries, same = 0;

    for (i = 0; i < 16; i++)
        key[i] = m[i] = (uint8_t)i;
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        const uint64_t h = tr_lwip_siphash24(key, m, v[i].n);
        int ok = 1;
        for (j = 0; j < 8; j++)
            ok &= (uint8_t)(h >> (8 * j)) == v[i].h[j];
        TH_CHECK(ok, "SipHash-2-4 of %u bytes: %016llx", (unsigned)v[i].n, (unsigned long long)h);
    }

    pcb = tcp_new();
    TH_CHECK(pcb != NULL, "tcp_new");
    if (pcb == NULL)
        return;
    IP4_ADDR(&pcb->local_ip, 198, 18, 0, 10);
    IP4_ADDR(&pcb->remote_ip, 198, 18, 0, 11);
    pcb->local_port = 49152;
    /* the same millisecond on both sides of a call: the clock's part known */
    for (tries = 0; tries < 100 && same < 8; tries++) {
        const uint32_t t0 = sys_now();
        uint32_t a, b;
        pcb->remote_port = (u16_t)(7000 + same);
        a = tcp_next_iss(pcb);
        b = tr_lwip_tcp_isn(&pcb->local_ip, pcb->local_port, &pcb->remote_ip, pcb->remote_port);
        if (sys_now() != t0)
            continue;
        TH_CHECK(a == b, "tcp_next_iss %08x is not the hook's %08x", (unsigned)a, (unsigned)b);
        isn[same++] = a - t0 * 250u;            /* F of the four alone */
    }
    TH_CHECK(same == 8, "no quiet millisecond in 100 tries");
    for (i = 0; i < same; i++)        /* F: 8 remote ports, 8 unrelated numbers */
        for (j = i + 1; j < same; j++)
            TH_CHECK(isn[i] != isn[j] && isn[i] + 1 != isn[j] && isn[j] + 1 != isn[i],
                     "ports %u and %u: F %08x and %08x", 7000 + i, 7000 + j, (unsigned)isn[i],
                     (unsigned)isn[j]);
    tcp_abort(pcb);
}

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
        c.drive = drive_nop;
        {   /* elastic start: before connect only, world within the bound */
            static struct tr_lwip_elastic el;
            struct tr_lwip_elastic_config ec;
            memset(&ec, 0, sizeof ec);
            TH_CHECK(tr_lwip_init(&lw, &c) == 0, "init");
            TH_CHECK(tr_lwip_elastic_start(&el, &ec, &lw) == 0, "elastic start refused");
            TH_CHECK(lw.keep_listener && lw.take && lw.cfg.table == el.table && el.n == 2 &&
                     el.index == 0 && el.cfg.timeout_ms == 60000 && el.cfg.min_ranks == 1 &&
                     el.m[1].port == 7000 && memcmp(&el.m[1].addr, table[1].ip, 4) == 0,
                     "elastic start: state");
            TH_CHECK(tr_lwip_elastic_service(&el) == 0, "service with nothing pending");
            el.index = -1;
            {
                struct tr_lwip_elastic_round r;
                TH_CHECK(tr_lwip_elastic_reform(&el, 1, &r) == TR_ERR_INVAL,
                         "reform of a closed member accepted");
            }
        }
    }
    check_brief();
    check_isn();
    return th_report("lwip-unit");
}
