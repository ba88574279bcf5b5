/* tinyring board_mps2: the console (semihosting) and the CMSDK UART0. */
#include "board.h"
#include "semihost.h"

#define UART0_BASE   0x40004000u
#define UART_DATA    (UART0_BASE + 0x00u)
#define UART_STATE   (UART0_BASE + 0x04u)  /* bit 0: TX buffer full */
#define UART_CTRL    (UART0_BASE + 0x08u)  /* bit 0: TX enable */
#define UART_BAUDDIV (UART0_BASE + 0x10u)

void board_uart_init(void)
{
    BOARD_REG32(UART_BAUDDIV) = BOARD_SYSCLK_HZ / 115200u;
    BOARD_REG32(UART_CTRL) = 1u;
}

void board_uart_puts(const char *s)
{
    for (; *s; s++) {
        while (BOARD_REG32(UART_STATE) & 1u)
            ;
        BOARD_REG32(UART_DATA) = (uint8_t)*s;
    }
}

void board_puts(const char *s)
{
    sh_puts(s);
}
