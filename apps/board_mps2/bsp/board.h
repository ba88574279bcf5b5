/* tinyring board_mps2: what the board support offers the images (QEMU
 * mps2-an386: Cortex-M4F, 25 MHz SYSCLK, CMSDK UART0, LAN9118 at 0x40200000;
 * built with -DBOARD_MPS3_AN547, QEMU mps3-an547: Cortex-M55, 32 MHz,
 * LAN9118 at 0x41400000). */
#ifndef BOARD_H
#define BOARD_H

#include <stdint.h>

#ifdef BOARD_MPS3_AN547
#define BOARD_SYSCLK_HZ 32000000u
#else
#define BOARD_SYSCLK_HZ 25000000u
#endif

#define BOARD_REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* SysTick from the processor clock, 1 kHz interrupt: a millisecond counter
 * (the clock hook of the tr_transport and lwIP's sys_now). */
void     board_clock_init(void);
uint32_t board_now_ms(void);
/* SYSCLK cycles since board_clock_init (64-bit: ms * 25000 + the SysTick
 * phase). Under qemu -icount shift=0 one instruction takes 1 ns of virtual
 * time, so a difference times 40 is an instruction count. */
uint64_t board_ticks(void);

/* NVIC: enable or disable external interrupt n (0..31; 0..95 on the AN547). */
void board_nvic_enable(unsigned n, int on);

/* The core, from SCB CPUID's part number: "Cortex-M4", "Cortex-M55" or
 * "unknown". */
const char *board_cpu_name(void);

/* Deepest stack use so far in bytes (the reset handler paints the stack). */
uint32_t board_stack_used(void);

/* CMSDK APB UART0 (qemu -serial / -nographic stdio): polled output. */
void board_uart_init(void);
void board_uart_puts(const char *s);

/* Console: semihosting SYS_WRITE0 (and nothing else: one place to change). */
void board_puts(const char *s);

#endif /* BOARD_H */
