/* tinyring board_mps2: LAN9118 driver test image.
 *
 *   nettest loop            PHY loopback: every frame sent comes back intact
 *   nettest ping N          send N numbered frames (ethertype 0x88B5, lengths
 *                           60..1514) to the broadcast address and check that
 *                           each comes back echoed by a peer, byte for byte
 *   nettest pong N          echo N such frames back to their sender
 *
 * Two QEMU instances joined by a socket netdev on 127.0.0.1 run ping and
 * pong. Exit status 0 when every check held. */
#include <string.h>
#include "args.h"
#include "board.h"
#include "fmt.h"
#include "lan9118.h"
#include "semihost.h"

#define ETHERTYPE_TEST 0x88B5u
#define WAIT_MS 5000u

static struct lan9118 nic;
static uint8_t txf[LAN9118_MAX_FRAME], rxf[LAN9118_MAX_FRAME];

/* IRQ 13: count and acknowledge (frames are still read by the main loop) */
void board_irq_eth(void)
{
    lan9118_irq_ack(&nic);
}

static size_t frame_len(unsigned seq)
{
    static const size_t lens[] = {60, 61, 62, 63, 64, 127, 511, 1000, 1513, 1514};
    return lens[seq % (sizeof lens / sizeof lens[0])];
}

/* frame seq from src to dst: header, seq, then a pattern that depends on both */
static void build(uint8_t *f, size_t len, const uint8_t *dst, const uint8_t *src, unsigned seq)
{
    size_t i;
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = (uint8_t)(ETHERTYPE_TEST >> 8);
    f[13] = (uint8_t)ETHERTYPE_TEST;
    f[14] = (uint8_t)(seq >> 8);
    f[15] = (uint8_t)seq;
    for (i = 16; i < len; i++)
        f[i] = (uint8_t)(i * 7u + seq * 13u + (i >> 8));
}

static long wait_frame(uint32_t ms)
{
    uint32_t t0 = board_now_ms();
    long n;
    do {
        n = lan9118_recv(&nic, rxf, sizeof rxf);
        if (n > 0 && ((rxf[12] << 8) | rxf[13]) == ETHERTYPE_TEST)
            return n;
        if (n < 0)
            return n;
    } while (board_now_ms() - t0 < ms);
    return 0;
}

static int send_retry(const uint8_t *f, size_t len)
{
    uint32_t t0 = board_now_ms();
    int e;
    while ((e = lan9118_send(&nic, f, len)) == LAN9118_ERR_FULL &&
           board_now_ms() - t0 < WAIT_MS)
        ;
    return e;
}

int main(void)
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    char *argv[BOARD_MAX_ARGS];
    int argc, e, bad = 0;
    unsigned n, seq;

    board_clock_init();
    argc = board_args(argv);             /* 0 if there is no command line */
    if (argc < 2)
        return 2;
    n = 20;                              /* frames, unless the command line says */
    if (argc > 2) {
        int ok;
        uint64_t v = board_arg_u64(argv[2], &ok);
        if (ok && v <= 0xFFFFu)
            n = (unsigned)v;
    }

    e = lan9118_init(&nic, LAN9118_MPS2_BASE, 0, 0);
    board_printf("nettest: init %d id %x mac %x:%x link %d\n", e,
                 (unsigned)nic.chip_id << 16 | nic.chip_rev,
                 (unsigned)(nic.mac[0] << 16 | nic.mac[1] << 8 | nic.mac[2]),
                 (unsigned)(nic.mac[3] << 16 | nic.mac[4] << 8 | nic.mac[5]),
                 lan9118_link_up(&nic));
    if (e)
        return 1;

    if (!strcmp(argv[1], "loop")) {
        if (lan9118_phy_loopback(&nic, 1))
            return 1;
        /* the NVIC line is on from here; the chip's interrupt from frame 1
         * on: frame 0 must raise nothing (pin disabled, idle level low) */
        board_nvic_enable(LAN9118_MPS2_IRQ, 1);
        for (seq = 0; seq < n; seq++) {
            if (seq == 1) {
                if (nic.irqs != 0) {
                    board_printf("nettest: %u interrupts while disabled\n", (unsigned)nic.irqs);
                    bad++;
                }
                lan9118_irq_enable(&nic, 1);
            }
            size_t len = frame_len(seq);
            long got;
            build(txf, len, nic.mac, nic.mac, seq);
            if (send_retry(txf, len)) {
                bad++;
                continue;
            }
            got = wait_frame(WAIT_MS);
            if (got != (long)len || memcmp(rxf, txf, len)) {
                board_printf("nettest: loop frame %u: got %d bytes, want %u\n", seq,
                             (int)got, (unsigned)len);
                bad++;
            }
        }
        /* one receive interrupt per frame (loopback delivers during the send) */
        if (n > 1 && nic.irqs != n - 1) {
            board_printf("nettest: %u receive interrupts for %u frames\n", (unsigned)nic.irqs, n - 1);
            bad++;
        }
        board_printf("nettest: loop irqs %u\n", (unsigned)nic.irqs);
        lan9118_irq_enable(&nic, 0);
        board_nvic_enable(LAN9118_MPS2_IRQ, 0);
        /* error paths: a frame too long to send is refused; a frame too
         * long for the caller's buffer is discarded whole, and the next
         * frame still arrives intact (the FIFO stays word-aligned) */
        if (lan9118_send(&nic, txf, LAN9118_MAX_FRAME + 1u) != LAN9118_ERR_SIZE ||
            lan9118_send(&nic, txf, 13) != LAN9118_ERR_SIZE) {
            board_printf("nettest: bad lengths were not refused\n");
            bad++;
        }
        build(txf, 999, nic.mac, nic.mac, 7777);
        if (send_retry(txf, 999) == 0) {
            uint32_t t0 = board_now_ms();
            long got;
            while (!lan9118_rx_pending(&nic) && board_now_ms() - t0 < WAIT_MS)
                ;
            got = lan9118_recv(&nic, rxf, 100);
            if (got != LAN9118_ERR_SIZE) {
                board_printf("nettest: short buffer gave %d\n", (int)got);
                bad++;
            }
        }
        build(txf, 61, nic.mac, nic.mac, 7778);
        if (send_retry(txf, 61) || wait_frame(WAIT_MS) != 61 || memcmp(rxf, txf, 61)) {
            board_printf("nettest: frame after a discarded one is wrong\n");
            bad++;
        }
        if (nic.rx_errors != 1u) {
            board_printf("nettest: rx_errors %u, want 1\n", (unsigned)nic.rx_errors);
            bad++;
        }
        nic.rx_errors = 0;
    } else if (!strcmp(argv[1], "ping")) {
        for (seq = 0; seq < n; seq++) {
            size_t len = frame_len(seq);
            long got;
            build(txf, len, bcast, nic.mac, seq);
            if (send_retry(txf, len)) {
                bad++;
                continue;
            }
            got = wait_frame(WAIT_MS);
            /* the echo comes addressed to us, from the peer, same payload */
            if (got != (long)len || memcmp(rxf, nic.mac, 6) ||
                !memcmp(rxf + 6, nic.mac, 6) || memcmp(rxf + 12, txf + 12, len - 12)) {
                board_printf("nettest: ping frame %u: echo %d bytes, want %u\n", seq,
                             (int)got, (unsigned)len);
                bad++;
            }
        }
    } else if (!strcmp(argv[1], "pong")) {
        for (seq = 0; seq < n; seq++) {
            long got = wait_frame(4u * WAIT_MS);
            if (got <= 0) {
                board_printf("nettest: pong: no frame %u (%d)\n", seq, (int)got);
                bad++;
                break;
            }
            memcpy(txf, rxf + 6, 6);
            memcpy(txf + 6, nic.mac, 6);
            memcpy(txf + 12, rxf + 12, (size_t)got - 12);
            if (send_retry(txf, (size_t)got))
                bad++;
        }
    } else {
        return 2;
    }
    board_printf("nettest: %s tx %u rx %u rx_errors %u bad %d\n", argv[1],
                 (unsigned)nic.tx_frames, (unsigned)nic.rx_frames,
                 (unsigned)nic.rx_errors, bad);
    return bad ? 1 : 0;
}
