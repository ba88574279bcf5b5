/* tinyring board_mps2: SysTick on the processor clock (BOARD_SYSCLK_HZ), 1 ms period. */
#include "board.h"

#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define TICKS_PER_MS (BOARD_SYSCLK_HZ / 1000u)

static volatile uint32_t ms_count;

void board_systick_handler(void)
{
    ms_count++;
}

void board_clock_init(void)
{
    BOARD_REG32(SYST_CSR) = 0;
    BOARD_REG32(SYST_RVR) = TICKS_PER_MS - 1u;
    BOARD_REG32(SYST_CVR) = 0;
    BOARD_REG32(SYST_CSR) = 7u;  /* ENABLE | TICKINT | CLKSOURCE=processor */
}

uint32_t board_now_ms(void)
{
    return ms_count;
}

uint64_t board_ticks(void)
{
    uint32_t ms, cvr;
    /* read until no tick interrupt slipped in between the two reads */
    do {
        ms = ms_count;
        cvr = BOARD_REG32(SYST_CVR);
    } while (ms != ms_count);
    return (uint64_t)ms * TICKS_PER_MS + (TICKS_PER_MS - 1u - cvr);
}
