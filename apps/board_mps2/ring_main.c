/* tinyring board_mps2: the ring image. The board joins a data-parallel ring
 * with other boards and POSIX host ranks over lwIP (NO_SYS=1) on the LAN9118:
 *
 *   ring RANK WORLD TOKEN STEPS SEED IMAGES LABELS IP:PORT... (WORLD of them)
 *
 * Every rank trains the ConvNet variant BOARD_RING_C1/C2 (board_cfg.h), batch
 * BOARD_RING_BATCH, on its own slice of the samples (step s, rank r: samples
 * (s*WORLD + r)*BATCH ...), averages gradients with tr_allreduce (ring) and
 * steps SGD; it prints each step's local loss and, at the end, the hash of
 * its parameters, which must equal every other rank's bit for bit.
 * The board's address is table[RANK]; netmask /24, no gateway. */
#include "lwip/init.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "tinyring.h"
#include "tr_lwip.h"
#include "board.h"
#include "board_cfg.h"
#include "args.h"
#include "fmt.h"
#include "idx_sh.h"
#include "lan9118_netif.h"
#include "semihost.h"
#include "train_step.h"

#define MAX_STEPS 16u
#define W BOARD_RING_MAX_WORLD
#define B BOARD_RING_BATCH

static uint8_t arena[BOARD_RING_ARENA_BYTES] TR_ARENA_ALIGNED;
static uint8_t comm_scratch[BOARD_RING_SCRATCH_BYTES] __attribute__((aligned(4)));
static uint8_t rx_rings[2 * 2 * TCP_WND];  /* per link 2 x TCP_WND: no pbuf held */
static uint8_t pixels[MAX_STEPS * W * B * BT_PIXELS];
static uint8_t labels[MAX_STEPS * W * B];
static float x[B * BT_PIXELS];
static struct tr_model model;
static struct tr_comm comm;
static struct tr_lwip lw;
static struct lan9118 nic;
static struct netif nif;
static struct tr_lwip_addr table[W];

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

static int parse_addr(const char *s, struct tr_lwip_addr *a)
{
    unsigned v = 0, part = 0;
    for (; *s; s++) {
        if (*s >= '0' && *s <= '9') {
            v = v * 10u + (unsigned)(*s - '0');
            if (v > 65535u)
                return -1;
        } else if (*s == '.' && part < 3) {
            if (v > 255u)
                return -1;
            a->ip[part++] = (uint8_t)v;
            v = 0;
        } else if (*s == ':' && part == 3) {
            if (v > 255u)
                return -1;
            a->ip[part++] = (uint8_t)v;
            v = 0;
        } else {
            return -1;
        }
    }
    if (part != 4 || v == 0)
        return -1;
    a->port = (uint16_t)v;
    return 0;
}

static int fail(const char *what, int e)
{
    const struct tr_comm_fault *f = tr_comm_last_fault(&comm);
    board_printf("ring: %s: %s (phase %s, peer rank %d)\n", what, tr_strerror(e),
                 tr_comm_phase_name(f->phase), f->peer_rank);
    return 1;
}

int main(void)
{
    char *argv[BOARD_MAX_ARGS];
    int argc, ok = 1, e, rank, world, i;
    unsigned steps, s;
    uint64_t token, seed;
    uint64_t t_comp = 0, t_comm = 0, t0, t1;
    struct tr_model_desc d;
    struct tr_sgd sgd;
    struct tr_comm_config cc;
    struct tr_lwip_config lc;
    ip4_addr_t ip, mask, gw;
    size_t need;
    float loss;

    board_clock_init();
    argc = board_args(argv);
    if (argc < 9) {
        board_printf("usage: ring RANK WORLD TOKEN STEPS SEED IMAGES LABELS IP:PORT...\n");
        return 1;
    }
    rank = (int)board_arg_u64(argv[1], &ok);
    world = (int)board_arg_u64(argv[2], &ok);
    token = board_arg_u64(argv[3], &ok);
    steps = (unsigned)board_arg_u64(argv[4], &ok);
    seed = board_arg_u64(argv[5], &ok);
    if (!ok || world < 2 || world > (int)W || rank < 0 || rank >= world || steps < 1 ||
        steps > MAX_STEPS || argc != 8 + world) {
        board_printf("ring: bad arguments\n");
        return 1;
    }
    for (i = 0; i < world; i++)
        if (parse_addr(argv[8 + i], &table[i])) {
            board_printf("ring: bad address %s\n", argv[8 + i]);
            return 1;
        }
    if (idx_sh_load(argv[6], argv[7], 0, steps * (unsigned)world * B, pixels, labels))
        return 1;

    /* the model: same variant, seed and layout on every rank */
    tr_model_desc_convnet(&d, BOARD_RING_C1, BOARD_RING_C2, 10);
    if (tr_model_arena_size(&d, B, &need) < 0 || need != BOARD_RING_ARENA_BYTES) {
        board_printf("ring: size query disagrees with the build\n");
        return 1;
    }
    if ((e = tr_model_init(&model, &d, B, arena, sizeof arena)) < 0)
        return fail("model init", e);
    tr_model_init_params(&model, seed);
    tr_sgd_init(&sgd);

    /* the network: LAN9118 -> lwIP netif -> tr_lwip transport */
    if ((e = lan9118_init(&nic, LAN9118_MPS2_BASE, 0, 0)) != 0) {
        board_printf("ring: lan9118 init %d\n", e);
        return 1;
    }
    lan9118_irq_enable(&nic, 1);
    board_nvic_enable(LAN9118_MPS2_IRQ, 1);
    lwip_init();
    IP4_ADDR(&ip, table[rank].ip[0], table[rank].ip[1], table[rank].ip[2], table[rank].ip[3]);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 0, 0, 0, 0);
    if (!netif_add(&nif, &ip, &mask, &gw, &nic, lan9118_netif_init, ethernet_input)) {
        board_printf("ring: netif_add failed\n");
        return 1;
    }
    netif_set_default(&nif);
    netif_set_up(&nif);
    netif_set_link_up(&nif);
    board_printf("ring: rank %d/%d at %d.%d.%d.%d:%u mac %x%x link %d\n", rank, world,
                 table[rank].ip[0], table[rank].ip[1], table[rank].ip[2], table[rank].ip[3],
                 (unsigned)table[rank].port, (unsigned)(nic.mac[0] << 8 | nic.mac[1]),
                 (unsigned)(nic.mac[2] << 24 | nic.mac[3] << 16 | nic.mac[4] << 8 | nic.mac[5]),
                 lan9118_link_up(&nic));

    lc.rank = rank;
    lc.world = world;
    lc.table = table;
    lc.job_token = token;
    lc.connect_timeout_ms = 60000;
    lc.retry_ms = 200;
    lc.drive = drive;
    lc.drive_arg = 0;
    lc.rx_mem = rx_rings;
    lc.rx_mem_size = sizeof rx_rings;
    if ((e = tr_lwip_init(&lw, &lc)) < 0)
        return fail("tr_lwip_init", e);
    if ((e = tr_lwip_connect(&lw)) < 0)
        return fail("connect", e);

    cc.rank = rank;
    cc.world = world;
    cc.timeout_ms = 60000;
    cc.segment_bytes = BOARD_RING_SEGMENT;
    cc.job_token = token;
    cc.layout_hash = tr_model_layout_hash(&model);
    if (tr_comm_scratch_size(&cc) > sizeof comm_scratch) {
        board_printf("ring: comm scratch too small\n");
        return 1;
    }
    if ((e = tr_comm_init(&comm, &cc, tr_lwip_transport(&lw), comm_scratch,
                          sizeof comm_scratch)) < 0)
        return fail("comm init", e);
    if ((e = tr_comm_hello(&comm)) < 0)
        return fail("hello", e);
    board_printf("ring: links up, hello ok, params %u\n", (unsigned)model.n_params);

    for (s = 0; s < steps; s++) {
        unsigned first = (s * (unsigned)world + (unsigned)rank) * B;
        t0 = board_ticks();
        bt_pixels_to_input(x, pixels + (size_t)first * BT_PIXELS, B);
        if ((e = bt_forward_backward(&model, x, labels + first, B, &loss)) < 0)
            return fail("step", e);
        t1 = board_ticks();
        t_comp += t1 - t0;
        if ((e = tr_allreduce(&comm, model.grads, model.n_params, TR_OP_AVG, TR_ALGO_RING)) < 0)
            return fail("allreduce", e);
        t0 = board_ticks();
        t_comm += t0 - t1;
        bt_sgd_step(&model, &sgd);
        board_printf("step %u loss %f bits %x\n", s, (double)loss, (unsigned)bt_float_bits(loss));
    }
    board_printf("params hash %x\n", (unsigned)bt_hash_floats(model.params, model.n_params));
    board_printf("ring: ticks compute %u allreduce %u, lan9118 tx %u rx %u rx_err %u irqs %u "
                 "nopbuf %u\n", (unsigned)t_comp, (unsigned)t_comm, (unsigned)nic.tx_frames,
                 (unsigned)nic.rx_frames, (unsigned)nic.rx_errors, (unsigned)nic.irqs,
                 lan9118_netif_rx_nopbuf);
    board_printf("stack used %u bytes\n", (unsigned)board_stack_used());
    /* a last barrier so nobody closes while a neighbour still reads */
    if ((e = tr_barrier(&comm)) < 0)
        return fail("barrier", e);
    tr_lwip_close(&lw, 500);
    return 0;
}
