/* RV32IMAFC (QEMU virt) for the minimal images: text and the result leave
 * through RISC-V semihosting (SYS_WRITE0, SYS_EXIT), so QEMU's exit status
 * says whether every check passed; instructions come from minstret, which
 * QEMU with -icount counts exactly. start_rv.S sets up the stack, the FPU
 * and .bss, then calls img_start, and holds the semihosting trap. */
#include "image.h"

void img_start(void);

/* start_rv.S: the semihosting trap (a0 operation, a1 argument) */
uint32_t rv_semihost(uint32_t op, const void *arg);

void img_puts(const char *s)
{
    rv_semihost(0x04u, s);   /* SYS_WRITE0 */
}

uint64_t img_instret(void)
{
    uint32_t hi, lo, hi2;
    do {
        __asm__ volatile("csrr %0, minstreth" : "=r"(hi));
        __asm__ volatile("csrr %0, minstret" : "=r"(lo));
        __asm__ volatile("csrr %0, minstreth" : "=r"(hi2));
    } while (hi != hi2);
    return ((uint64_t)hi << 32) | lo;
}

void img_start(void)
{
    /* SYS_EXIT (0x18) with ADP_Stopped_ApplicationExit or _RunTimeErrorUnknown */
    rv_semihost(0x18u, (const void *)(img_main() == 0 ? 0x20026u : 0x20023u));
    for (;;)
        ;
}
