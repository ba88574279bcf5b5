/* tinyring board_mps2: LAN9118 driver (see lan9118.h). Register offsets and
 * bit fields from the LAN9118 datasheet's system control and status register
 * map; the MAC registers are reached through MAC_CSR_CMD/MAC_CSR_DATA, the
 * PHY registers through the MAC's MII_ACC/MII_DATA. */
#include "lan9118.h"

/* system control and status registers (byte offsets from base) */
#define RX_DATA_FIFO  0x00u
#define TX_DATA_FIFO  0x20u
#define RX_STATUS     0x40u
#define TX_STATUS     0x48u
#define ID_REV        0x50u
#define IRQ_CFG       0x54u
#define INT_STS       0x58u
#define INT_EN        0x5Cu
#define BYTE_TEST     0x64u
#define FIFO_INT      0x68u
#define RX_CFG        0x6Cu
#define TX_CFG        0x70u
#define HW_CFG        0x74u
#define RX_FIFO_INF   0x7Cu
#define TX_FIFO_INF   0x80u
#define PMT_CTRL      0x84u
#define MAC_CSR_CMD   0xA4u
#define MAC_CSR_DATA  0xA8u
#define AFC_CFG       0xACu

#define BYTE_TEST_MAGIC   0x87654321u
#define IRQ_CFG_IRQ_EN    (1u << 8)
#define IRQ_CFG_IRQ_POL   (1u << 4)   /* 1: active high */
#define IRQ_CFG_IRQ_TYPE  (1u << 0)   /* 1: push-pull */
#define INT_RSFL          (1u << 3)   /* RX status FIFO level */
#define HW_CFG_SRST       (1u << 0)
#define PMT_CTRL_READY    (1u << 0)
#define TX_CFG_TX_ON      (1u << 1)
#define TX_CFG_TXS_DUMP   (1u << 15)
#define TX_CFG_TXD_DUMP   (1u << 14)
#define RX_CFG_RX_DUMP    (1u << 15)
#define MAC_CSR_BUSY      (1u << 31)
#define MAC_CSR_READ      (1u << 30)

/* TX command A/B */
#define TXA_FIRST_SEG     (1u << 13)
#define TXA_LAST_SEG      (1u << 12)
/* RX status */
#define RXS_ERROR         (1u << 15)
#define RXS_LEN(s)        (((s) >> 16) & 0x3FFFu)
/* TX status */
#define TXS_ERROR         (1u << 15)

/* MAC CSR indexes */
#define MAC_CR     1u
#define MAC_ADDRH  2u
#define MAC_ADDRL  3u
#define MAC_MII_ACC  6u
#define MAC_MII_DATA 7u
#define MAC_CR_RXEN  (1u << 2)
#define MAC_CR_TXEN  (1u << 3)
#define MAC_CR_FDPX  (1u << 20)
#define MAC_CR_PRMS  (1u << 18)
#define MII_BUSY     (1u << 0)
#define MII_WRITE    (1u << 1)
#define PHY_ADDR     1u

/* PHY registers */
#define PHY_BMCR     0u
#define PHY_BMSR     1u
#define BMCR_RESET    (1u << 15)
#define BMCR_LOOPBACK (1u << 14)
#define BMCR_ANENABLE (1u << 12)
#define BMCR_ANRESTART (1u << 9)
#define BMCR_FULLDPLX (1u << 8)
#define BMSR_LINK     (1u << 2)

#define SPIN_LIMIT 100000u

static inline uint32_t rd(const struct lan9118 *d, uint32_t off)
{
    return *(volatile uint32_t *)(d->base + off);
}

static inline void wr(const struct lan9118 *d, uint32_t off, uint32_t v)
{
    *(volatile uint32_t *)(d->base + off) = v;
}

static int mac_wait(const struct lan9118 *d)
{
    uint32_t i;
    for (i = 0; i < SPIN_LIMIT; i++)
        if (!(rd(d, MAC_CSR_CMD) & MAC_CSR_BUSY))
            return 0;
    return LAN9118_ERR_TIMEOUT;
}

static int mac_read(const struct lan9118 *d, uint32_t idx, uint32_t *v)
{
    if (mac_wait(d))
        return LAN9118_ERR_TIMEOUT;
    wr(d, MAC_CSR_CMD, MAC_CSR_BUSY | MAC_CSR_READ | idx);
    if (mac_wait(d))
        return LAN9118_ERR_TIMEOUT;
    *v = rd(d, MAC_CSR_DATA);
    return 0;
}

static int mac_write(const struct lan9118 *d, uint32_t idx, uint32_t v)
{
    if (mac_wait(d))
        return LAN9118_ERR_TIMEOUT;
    wr(d, MAC_CSR_DATA, v);
    wr(d, MAC_CSR_CMD, MAC_CSR_BUSY | idx);
    return mac_wait(d);
}

static int mii_wait(const struct lan9118 *d)
{
    uint32_t i, v;
    for (i = 0; i < SPIN_LIMIT; i++) {
        if (mac_read(d, MAC_MII_ACC, &v))
            return LAN9118_ERR_TIMEOUT;
        if (!(v & MII_BUSY))
            return 0;
    }
    return LAN9118_ERR_TIMEOUT;
}

static int phy_read(const struct lan9118 *d, uint32_t reg, uint32_t *v)
{
    int e;
    if ((e = mii_wait(d)) != 0)
        return e;
    if ((e = mac_write(d, MAC_MII_ACC, (PHY_ADDR << 11) | (reg << 6) | MII_BUSY)) != 0)
        return e;
    if ((e = mii_wait(d)) != 0)
        return e;
    if ((e = mac_read(d, MAC_MII_DATA, v)) != 0)
        return e;
    *v &= 0xFFFFu;
    return 0;
}

static int phy_write(const struct lan9118 *d, uint32_t reg, uint32_t v)
{
    int e;
    if ((e = mii_wait(d)) != 0)
        return e;
    if ((e = mac_write(d, MAC_MII_DATA, v & 0xFFFFu)) != 0)
        return e;
    if ((e = mac_write(d, MAC_MII_ACC,
                       (PHY_ADDR << 11) | (reg << 6) | MII_WRITE | MII_BUSY)) != 0)
        return e;
    return mii_wait(d);
}

int lan9118_init(struct lan9118 *d, uintptr_t base, const uint8_t *mac, int promisc)
{
    uint32_t v, lo, hi, i;
    int e;

    d->base = base;
    d->tx_tag = 1;
    d->tx_frames = d->rx_frames = d->rx_errors = d->tx_status_errors = 0;
    d->irqs = 0;
    if (rd(d, BYTE_TEST) != BYTE_TEST_MAGIC)
        return LAN9118_ERR_ID;
    v = rd(d, ID_REV);
    d->chip_id = (uint16_t)(v >> 16);
    d->chip_rev = (uint16_t)v;
    if (d->chip_id != 0x0118 && d->chip_id != 0x0117 && d->chip_id != 0x0116 &&
        d->chip_id != 0x0115 && d->chip_id != 0x9220 && d->chip_id != 0x9221)
        return LAN9118_ERR_ID;

    /* soft reset; the chip clears SRST when done and sets READY */
    wr(d, HW_CFG, HW_CFG_SRST);
    for (i = 0; i < SPIN_LIMIT && (rd(d, HW_CFG) & HW_CFG_SRST); i++)
        ;
    if (i == SPIN_LIMIT)
        return LAN9118_ERR_TIMEOUT;
    for (i = 0; i < SPIN_LIMIT && !(rd(d, PMT_CTRL) & PMT_CTRL_READY); i++)
        ;
    if (i == SPIN_LIMIT)
        return LAN9118_ERR_TIMEOUT;

    /* polled until lan9118_irq_enable: sources masked and acknowledged; the
     * pin push-pull active high (an open-drain active-low pin would hold a
     * level-sensitive NVIC input asserted while idle) but not enabled */
    wr(d, INT_EN, 0);
    wr(d, INT_STS, 0xFFFFFFFFu);
    wr(d, IRQ_CFG, IRQ_CFG_IRQ_POL | IRQ_CFG_IRQ_TYPE);
    /* TX FIFO 5 KiB (HW_CFG TX_FIF_SZ = 5, the reset value), no flow control */
    wr(d, HW_CFG, 5u << 16);
    wr(d, AFC_CFG, 0);
    wr(d, FIFO_INT, 0xFF000000u);

    /* station address: ADDRL holds bytes 0..3, ADDRH bytes 4..5 */
    if (mac) {
        lo = (uint32_t)mac[0] | (uint32_t)mac[1] << 8 | (uint32_t)mac[2] << 16 |
             (uint32_t)mac[3] << 24;
        hi = (uint32_t)mac[4] | (uint32_t)mac[5] << 8;
        if ((e = mac_write(d, MAC_ADDRL, lo)) != 0 || (e = mac_write(d, MAC_ADDRH, hi)) != 0)
            return e;
    }
    if ((e = mac_read(d, MAC_ADDRL, &lo)) != 0 || (e = mac_read(d, MAC_ADDRH, &hi)) != 0)
        return e;
    for (i = 0; i < 4; i++)
        d->mac[i] = (uint8_t)(lo >> (8 * i));
    d->mac[4] = (uint8_t)hi;
    d->mac[5] = (uint8_t)(hi >> 8);

    /* PHY: reset, then auto-negotiate */
    if ((e = phy_write(d, PHY_BMCR, BMCR_RESET)) != 0)
        return e;
    for (i = 0; i < 1000; i++) {
        if ((e = phy_read(d, PHY_BMCR, &v)) != 0)
            return e;
        if (!(v & BMCR_RESET))
            break;
    }
    if ((e = phy_write(d, PHY_BMCR, BMCR_ANENABLE | BMCR_ANRESTART)) != 0)
        return e;

    /* flush both directions, then enable */
    wr(d, RX_CFG, RX_CFG_RX_DUMP);
    wr(d, TX_CFG, TX_CFG_TXS_DUMP | TX_CFG_TXD_DUMP);
    wr(d, TX_CFG, TX_CFG_TX_ON);
    wr(d, RX_CFG, 0);  /* no end alignment, no data offset */
    return mac_write(d, MAC_CR, MAC_CR_TXEN | MAC_CR_RXEN | MAC_CR_FDPX |
                                (promisc ? MAC_CR_PRMS : 0u));
}

/* Retire TX status words so the status FIFO never fills. */
static void tx_reap(struct lan9118 *d)
{
    while ((rd(d, TX_FIFO_INF) >> 16) & 0xFFu) {
        if (rd(d, TX_STATUS) & TXS_ERROR)
            d->tx_status_errors++;
    }
}

int lan9118_send(struct lan9118 *d, const void *frame, size_t len)
{
    const uint8_t *p = frame;
    size_t words = (len + 3u) / 4u, i;
    uint32_t w;

    if (len < 14u || len > LAN9118_MAX_FRAME)
        return LAN9118_ERR_SIZE;
    tx_reap(d);
    /* TX_FIFO_INF[15:0]: free bytes in the TX data FIFO; two command words */
    if ((rd(d, TX_FIFO_INF) & 0xFFFFu) < words * 4u + 8u)
        return LAN9118_ERR_FULL;
    wr(d, TX_DATA_FIFO, TXA_FIRST_SEG | TXA_LAST_SEG | (uint32_t)len);
    wr(d, TX_DATA_FIFO, (uint32_t)d->tx_tag << 16 | (uint32_t)len);
    if (++d->tx_tag == 0)  /* tags 1..65535: 0 never appears in a status */
        d->tx_tag = 1;
    /* the FIFO takes little-endian words; the last one is zero-padded */
    for (i = 0; i < words; i++) {
        size_t k, n = len - i * 4u < 4u ? len - i * 4u : 4u;
        w = 0;
        for (k = 0; k < n; k++)
            w |= (uint32_t)p[i * 4u + k] << (8u * k);
        wr(d, TX_DATA_FIFO, w);
    }
    d->tx_frames++;
    return 0;
}

unsigned lan9118_rx_pending(const struct lan9118 *d)
{
    return (rd(d, RX_FIFO_INF) >> 16) & 0xFFu;
}

/* Discard a frame by reading its words. (The datasheet's RX_DP_CTRL
 * fast-forward is quicker for long frames on silicon, but QEMU's model does
 * not keep its FIFO fill level right after one, so reads it is.) */
static void rx_discard(struct lan9118 *d, uint32_t words)
{
    uint32_t i;
    for (i = 0; i < words; i++)
        (void)rd(d, RX_DATA_FIFO);
}

long lan9118_recv(struct lan9118 *d, void *buf, size_t cap)
{
    uint8_t *p = buf;
    uint32_t st, len, words, i, w, k;

    if (!lan9118_rx_pending(d))
        return 0;
    st = rd(d, RX_STATUS);
    len = RXS_LEN(st);         /* includes the 4 FCS bytes */
    words = (len + 3u) / 4u;
    if ((st & RXS_ERROR) || len < 18u) {
        rx_discard(d, words);
        d->rx_errors++;
        return LAN9118_ERR_RX;
    }
    if (len - 4u > cap) {
        rx_discard(d, words);
        d->rx_errors++;
        return LAN9118_ERR_SIZE;
    }
    len -= 4u;
    for (i = 0; i < words; i++) {
        w = rd(d, RX_DATA_FIFO);
        for (k = 0; k < 4u; k++) {
            uint32_t at = i * 4u + k;
            if (at < len)
                p[at] = (uint8_t)(w >> (8u * k));
        }
    }
    d->rx_frames++;
    return (long)len;
}

void lan9118_irq_enable(struct lan9118 *d, int on)
{
    /* FIFO_INT[7:0] = 0: RSFL as soon as one status word waits */
    wr(d, FIFO_INT, 0xFF000000u);
    wr(d, INT_STS, INT_RSFL);
    wr(d, INT_EN, on ? INT_RSFL : 0u);
    wr(d, IRQ_CFG, IRQ_CFG_IRQ_POL | IRQ_CFG_IRQ_TYPE | (on ? IRQ_CFG_IRQ_EN : 0u));
}

uint32_t lan9118_irq_ack(struct lan9118 *d)
{
    uint32_t st = rd(d, INT_STS) & rd(d, INT_EN);
    wr(d, INT_STS, st);
    d->irqs++;
    return st;
}

int lan9118_link_up(const struct lan9118 *d)
{
    uint32_t v;
    if (phy_read(d, PHY_BMSR, &v))
        return 0;
    /* link status latches low: read twice for the current state */
    if (phy_read(d, PHY_BMSR, &v))
        return 0;
    return (v & BMSR_LINK) != 0;
}

int lan9118_phy_loopback(struct lan9118 *d, int on)
{
    uint32_t v;
    int e;
    if ((e = phy_read(d, PHY_BMCR, &v)) != 0)
        return e;
    v &= ~(BMCR_LOOPBACK | BMCR_ANENABLE | BMCR_ANRESTART | BMCR_RESET);
    if (on)
        v |= BMCR_LOOPBACK | BMCR_FULLDPLX;
    else
        v |= BMCR_ANENABLE | BMCR_ANRESTART;
    return phy_write(d, PHY_BMCR, v);
}
