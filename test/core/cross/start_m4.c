/* Cortex-M4F startup for the minimal image (QEMU mps2-an386 memory map):
 * vector table, .data copy, .bss zeroing, FPU enable, then image_main; the
 * result leaves through Arm semihosting SYS_EXIT so QEMU's exit status says
 * whether the training steps ran. */
#include <stdint.h>

int image_main(void);
void reset_handler(void);
static void default_handler(void);

extern uint32_t __etext, __data_start__, __data_end__, __bss_start__, __bss_end__, __stack_top;

__attribute__((section(".vectors"), used))
static void (*const vectors[16])(void) = {
    (void (*)(void))&__stack_top, reset_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, 0, 0, 0, 0,
    default_handler, default_handler, 0, default_handler, default_handler,
};

static void semihost_exit(int ok)
{
    /* SYS_EXIT (0x18) with ADP_Stopped_ApplicationExit or _RunTimeErrorUnknown */
    register uint32_t r0 __asm__("r0") = 0x18u;
    register uint32_t r1 __asm__("r1") = ok ? 0x20026u : 0x20023u;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;)
        ;
}

static void default_handler(void)
{
    semihost_exit(0);
}

void reset_handler(void)
{
    uint32_t *src = &__etext, *dst = &__data_start__;
    while (dst < &__data_end__)
        *dst++ = *src++;
    for (dst = &__bss_start__; dst < &__bss_end__;)
        *dst++ = 0;
    /* CPACR: full access to CP10/CP11 (the FPU) */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    semihost_exit(image_main() == 0);
}
