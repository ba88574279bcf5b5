/* tinyring board_mps2: a polled driver for the SMSC LAN9118 10/100 Ethernet
 * controller (TX/RX data FIFOs with status FIFOs; MAC and PHY registers behind
 * the MAC_CSR and MII windows), written from the datasheet's register map.
 * On mps2-an386 it sits at 0x40200000 (IRQ 13; this driver polls), on
 * mps3-an547 at 0x41400000 (IRQ 49).
 *
 * Frames are whole Ethernet frames without the FCS (the chip adds it on
 * send and strips nothing on receive: recv drops the 4 CRC bytes). Nothing
 * allocates; the caller owns the struct and every buffer.
 */
#ifndef BOARD_LAN9118_H
#define BOARD_LAN9118_H

#include <stddef.h>
#include <stdint.h>

#ifdef BOARD_MPS3_AN547
#define LAN9118_MPS2_BASE 0x41400000u
#define LAN9118_MPS2_IRQ  49
#else
#define LAN9118_MPS2_BASE 0x40200000u
#define LAN9118_MPS2_IRQ  13
#endif
#define LAN9118_MAX_FRAME 1514u  /* bytes without FCS */

enum lan9118_err {
    LAN9118_ERR_ID      = -1,  /* BYTE_TEST or ID_REV do not read as a LAN9118 */
    LAN9118_ERR_TIMEOUT = -2,  /* reset, MAC CSR or MII access never completed */
    LAN9118_ERR_SIZE    = -3,  /* frame too long (send) or buffer too small (recv) */
    LAN9118_ERR_FULL    = -4,  /* no room in the TX data FIFO now; retry */
    LAN9118_ERR_RX      = -5   /* the chip flagged the received frame as bad */
};

struct lan9118 {
    uintptr_t base;        /* register window (LAN9118_MPS2_BASE) */
    uint8_t   mac[6];      /* station address in use */
    uint16_t  chip_id;     /* ID_REV[31:16]: 0x0118 (or 0x9220, ...) */
    uint16_t  chip_rev;    /* ID_REV[15:0] */
    uint16_t  tx_tag;      /* packet tag of the next frame (TX command B) */
    uint32_t  tx_frames;   /* frames handed to the chip */
    uint32_t  rx_frames;   /* good frames delivered by recv */
    uint32_t  rx_errors;   /* frames dropped: error status or too long */
    uint32_t  tx_status_errors;  /* TX status words with the error summary bit */
    volatile uint32_t irqs;      /* interrupts acknowledged by lan9118_irq_ack */
};

/* Probe (BYTE_TEST, ID_REV), soft-reset, program the station address (mac,
 * or the one the chip loaded from its EEPROM when mac is NULL), start
 * auto-negotiation and enable the transmitter and receiver (own address and
 * broadcast; promiscuous when promisc). Returns 0 or a lan9118_err. */
int lan9118_init(struct lan9118 *d, uintptr_t base, const uint8_t *mac, int promisc);

/* Queue one frame (14..1514 bytes). Returns 0, LAN9118_ERR_FULL when the
 * TX FIFO lacks room (nothing written), or LAN9118_ERR_SIZE. */
int lan9118_send(struct lan9118 *d, const void *frame, size_t len);

/* Take the next received frame into buf (cap bytes). Returns its length
 * (FCS removed), 0 when nothing is waiting, or a negative lan9118_err after
 * discarding a bad or oversized frame. */
long lan9118_recv(struct lan9118 *d, void *buf, size_t cap);

/* Frames waiting in the RX status FIFO. */
unsigned lan9118_rx_pending(const struct lan9118 *d);

/* 1 when the PHY reports link up (basic status register). */
int lan9118_link_up(const struct lan9118 *d);

/* Interrupt on received frames (RX status FIFO level): IRQ_CFG push-pull,
 * active high, enabled; INT_EN = RSFL. The board enables the NVIC line
 * (IRQ 13 on mps2-an386); its handler calls lan9118_irq_ack. Frames are
 * still taken by lan9118_recv from the main loop: the interrupt only wakes
 * a WFI. on = 0 masks it again. */
void lan9118_irq_enable(struct lan9118 *d, int on);

/* Acknowledge (clear) the pending interrupt sources; returns them. */
uint32_t lan9118_irq_ack(struct lan9118 *d);

/* Route transmitted frames back to the receiver inside the PHY (BMCR
 * loopback) when on: a self-test without any network. */
int lan9118_phy_loopback(struct lan9118 *d, int on);

#endif /* BOARD_LAN9118_H */
