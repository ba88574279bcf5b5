/* Cortex-M4F (QEMU mps2-an386) and Cortex-M55 (mps3-an547) startup for the
 * minimal images: vector table, .data copy, .bss zeroing, FPU (and on the
 * M55 the M-profile vector extension, which the same CPACR bits enable),
 * then img_main; text and the result leave through Arm semihosting
 * (SYS_WRITE0, SYS_EXIT), so QEMU's exit status says whether every check
 * passed.
 *
 * Instructions: QEMU with -icount shift=0 advances virtual time by exactly
 * 1 ns per instruction, and SysTick counts the processor clock in that
 * time. The startup times a loop of a known number of instructions to get
 * instructions per tick (40 on the 25 MHz mps2-an386, 31.25 on the 32 MHz
 * mps3-an547); SysTick runs free with an interrupt per 2^24 ticks. */
#include "image.h"

void reset_handler(void);
static void default_handler(void);
static void systick_handler(void);

extern uint32_t __etext, __data_start__, __data_end__, __bss_start__, __bss_end__, __stack_top;

__attribute__((section(".vectors"), used))
static void (*const vectors[16])(void) = {
    (void (*)(void))&__stack_top, reset_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, 0, 0, 0, 0,
    default_handler, default_handler, 0, default_handler, systick_handler,
};

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)
#define ICSR_PENDSTSET (1u << 26)

static volatile uint32_t systick_wraps;
static uint32_t cal_instr = 1, cal_ticks = 1;

static uint32_t semihost(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static void semihost_exit(int ok)
{
    /* SYS_EXIT (0x18) with ADP_Stopped_ApplicationExit or _RunTimeErrorUnknown */
    semihost(0x18u, (const void *)(ok ? 0x20026u : 0x20023u));
    for (;;)
        ;
}

void img_puts(const char *s)
{
    semihost(0x04u, s);   /* SYS_WRITE0 */
}

static void default_handler(void)
{
    img_puts("FAIL: fault or unexpected exception\n");
    semihost_exit(0);
}

static void systick_handler(void)
{
    systick_wraps++;
}

/* SysTick ticks since start; retried while a wrap is pending or happened
 * between the two reads of the wrap count */
static uint64_t ticks(void)
{
    for (;;) {
        uint32_t w = systick_wraps, v = SYST_CVR;
        if (w == systick_wraps && !(SCB_ICSR & ICSR_PENDSTSET))
            return ((uint64_t)w << 24) + (0xFFFFFFu - v);
    }
}

uint64_t img_instret(void)
{
    return ticks() * cal_instr / cal_ticks;
}

/* 2 x 2^20 instructions (subs, bne), timed */
static void calibrate(void)
{
    uint32_t n = 1u << 20;
    uint64_t t0 = ticks(), t1;
    __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
    t1 = ticks();
    cal_instr = 2u << 20;
    cal_ticks = (uint32_t)(t1 - t0);
    if (cal_ticks == 0)
        cal_ticks = 1;
}

/* "# SysTick: N instructions in T ticks" */
static void print_calibration(void)
{
    char buf[80], *p = buf;
    uint32_t v[2], i;
    const char *s;
    v[0] = cal_instr;
    v[1] = cal_ticks;
    for (i = 0; i < 2; i++) {
        char d[12];
        int n = 0;
        for (s = i ? " instructions in " : "# SysTick calibration: "; *s;)
            *p++ = *s++;
        do {
            d[n++] = (char)('0' + v[i] % 10u);
            v[i] /= 10u;
        } while (v[i]);
        while (n)
            *p++ = d[--n];
    }
    for (s = " ticks\n"; *s;)
        *p++ = *s++;
    *p = 0;
    img_puts(buf);
}

void reset_handler(void)
{
    uint32_t *src = &__etext, *dst = &__data_start__;
    while (dst < &__data_end__)
        *dst++ = *src++;
    for (dst = &__bss_start__; dst < &__bss_end__;)
        *dst++ = 0;
    /* CPACR: full access to CP10/CP11 (the FPU, and MVE where there is one) */
    SCB_CPACR |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 7u;   /* enable, interrupt on wrap, processor clock */
    while (SYST_CVR == 0)   /* the first tick loads the reload value */
        ;
    calibrate();
    print_calibration();
    semihost_exit(img_main() == 0);
}
