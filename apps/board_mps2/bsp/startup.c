/* tinyring board_mps2: vector table and reset handler for the Cortex-M4F
 * (and the Cortex-M55 of mps3-an547: BOARD_MPS3_AN547).
 * Reset copies .data, zeroes .bss and .psram, turns the FPU on (CPACR
 * CP10/CP11 full access) and runs main(); its return value becomes the
 * emulator's exit status through semihosting. */
#include <stddef.h>
#include <stdint.h>
#include "board.h"
#include "lan9118.h"
#include "semihost.h"

extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[], __psram_start[], __psram_end[];
extern uint32_t __stack_top[], __stack_bottom[];

#define STACK_PAINT 0x5AC4C0DEu

int main(void);
void tr_board_reset(void);
void board_systick_handler(void);

#define SCB_CPACR 0xE000ED88u
#define SCB_CFSR  0xE000ED28u
#define SCB_HFSR  0xE000ED2Cu
#define SCB_MMFAR 0xE000ED34u
#define SCB_BFAR  0xE000ED38u

static void put_hex(const char *what, uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    char b[40];
    int i = 0, k;
    while (i < 20 && what[i]) {
        b[i] = what[i];
        i++;
    }
    b[i++] = '0';
    b[i++] = 'x';
    for (k = 28; k >= 0; k -= 4)
        b[i++] = hex[(v >> k) & 15u];
    b[i++] = '\n';
    b[i] = '\0';
    sh_puts(b);
}

/* Any fault is fatal: say which and stop with status 3. */
static void fault_handler(void)
{
    sh_puts("board: fault\n");
    put_hex(" CFSR ", BOARD_REG32(SCB_CFSR));
    put_hex(" HFSR ", BOARD_REG32(SCB_HFSR));
    put_hex(" MMFAR ", BOARD_REG32(SCB_MMFAR));
    put_hex(" BFAR ", BOARD_REG32(SCB_BFAR));
    sh_exit(3);
}

void board_unexpected_irq(void);
/* the Ethernet interrupt (LAN9118_MPS2_IRQ): an image that enables it defines this */
void board_irq_eth(void) __attribute__((weak, alias("board_unexpected_irq")));

void board_unexpected_irq(void)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    put_hex("board: unexpected exception ", ipsr);
    sh_exit(4);
}

/* Linker symbols are addresses, not objects: loops run on word counts. */
static size_t words_between(const uint32_t *lo, const uint32_t *hi)
{
    return ((uintptr_t)hi - (uintptr_t)lo) / sizeof(uint32_t);
}

void tr_board_reset(void)
{
    size_t i, n;
    n = words_between(__data_start, __data_end);
    for (i = 0; i < n; i++)
        __data_start[i] = __data_load[i];
    n = words_between(__bss_start, __bss_end);
    for (i = 0; i < n; i++)
        __bss_start[i] = 0;
    n = words_between(__psram_start, __psram_end);
    for (i = 0; i < n; i++)
        __psram_start[i] = 0;
    /* paint the stack below the current frame: board_stack_used() measures
     * the high-water mark by finding the deepest overwritten word */
    {
        uintptr_t sp;
        __asm__ volatile("mov %0, sp" : "=r"(sp));
        n = words_between(__stack_bottom, (const uint32_t *)(sp - 64u));
        for (i = 0; i < n; i++)
            __stack_bottom[i] = STACK_PAINT;
    }
    BOARD_REG32(SCB_CPACR) |= 0xFu << 20;  /* CP10, CP11: full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    sh_exit(main());
}

#define SCB_CPUID 0xE000ED00u

const char *board_cpu_name(void)
{
    uint32_t part = (BOARD_REG32(SCB_CPUID) >> 4) & 0xFFFu;
    return part == 0xC24u ? "Cortex-M4" : part == 0xD22u ? "Cortex-M55" : "unknown";
}

uint32_t board_stack_used(void)
{
    size_t i = 0, n = words_between(__stack_bottom, __stack_top);
    while (i < n && __stack_bottom[i] == STACK_PAINT)
        i++;
    return (uint32_t)((n - i) * sizeof(uint32_t));
}

#define NVIC_ISER0 0xE000E100u
#define NVIC_ICER0 0xE000E180u
#define NVIC_ICPR0 0xE000E280u

/* Enabling first clears a stale pending bit: the NVIC latches a line that
 * was asserted while disabled (the LAN9118's pin idles active-low after
 * reset until the driver makes it push-pull active-high). */
void board_nvic_enable(unsigned n, int on)
{
    uint32_t word = 4u * (n / 32u);
    if (on)
        BOARD_REG32(NVIC_ICPR0 + word) = 1u << (n & 31u);
    BOARD_REG32((on ? NVIC_ISER0 : NVIC_ICER0) + word) = 1u << (n & 31u);
}

typedef void (*vector_fn)(void);

/* 16 system exceptions, then the 32 external interrupts of the AN385/AN386
 * (UARTs 0-5, timers 8-10, Ethernet 13, ...; the AN547's 96, Ethernet 49):
 * none enabled but the Ethernet's, all reported. */
#define BOARD_IRQS (LAN9118_MPS2_IRQ < 32 ? 32 : 96)
__attribute__((section(".vectors"), used))
static const vector_fn vectors[16 + BOARD_IRQS] = {
    (vector_fn)(uintptr_t)__stack_top,
    tr_board_reset,
    fault_handler,           /* NMI */
    fault_handler,           /* HardFault */
    fault_handler,           /* MemManage */
    fault_handler,           /* BusFault */
    fault_handler,           /* UsageFault */
    0, 0, 0, 0,
    board_unexpected_irq,    /* SVCall */
    board_unexpected_irq,    /* DebugMonitor */
    0,
    board_unexpected_irq,    /* PendSV */
    board_systick_handler,   /* SysTick */
    [16 ... 16 + LAN9118_MPS2_IRQ - 1] = board_unexpected_irq,
    [16 + LAN9118_MPS2_IRQ] = board_irq_eth,   /* LAN9118 */
    [16 + LAN9118_MPS2_IRQ + 1 ... 16 + BOARD_IRQS - 1] = board_unexpected_irq
};
