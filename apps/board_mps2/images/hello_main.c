/* tinyring board_mps2: the smoke image. Checks what the other images rely
 * on: the FPU is on, .data was copied and .bss zeroed, SysTick advances, the
 * semihosting command line arrives; exits with the status given as the
 * first command-line word after the image name (default 0). */
#include "board.h"
#include "fmt.h"
#include "semihost.h"

static volatile float fpu_probe = 1.5f;
static int data_probe = 42;
static int bss_probe;

int main(void)
{
    char cmd[128];
    int status = 0, i, bad = 0;
    uint32_t t0;
    volatile float acc = 0.0f;
    const char *p;

    board_clock_init();
    board_uart_init();
    board_uart_puts("board: uart up\n");
    for (i = 0; i < 1000; i++)
        acc = acc + fpu_probe * 2.0f;
    if (acc != 3000.0f) {
        board_printf("board: FPU result wrong\n");
        bad = 1;
    }
    if (data_probe != 42 || bss_probe != 0) {
        board_printf("board: .data/.bss not initialised\n");
        bad = 1;
    }
    t0 = board_now_ms();
    while (board_now_ms() - t0 < 20u)
        ;
    board_printf("board: hello from mps2-an386, fpu ok, clock ok\n");
    if (sh_cmdline(cmd, sizeof cmd) >= 0) {
        board_printf("board: cmdline \"%s\"\n", cmd);
        for (p = cmd; *p && *p != ' '; p++)
            ;
        while (*p == ' ')
            p++;
        for (; *p >= '0' && *p <= '9'; p++)
            status = status * 10 + (*p - '0');
    }
    /* calibration of the instruction-count method: a loop of exactly two
     * instructions per turn (subs, bne), timed with SysTick. Under
     * qemu -icount shift=0, ticks x 40 should come out near 2 x turns. */
    {
        uint32_t turns = 5000000u;
        uint64_t t0 = board_ticks(), t1;
        __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(turns) : : "cc");
        t1 = board_ticks();
        board_printf("board: calib 5000000 turns x 2 instructions: %u ticks = %u ns virtual\n",
                     (unsigned)(t1 - t0), (unsigned)((t1 - t0) * 40u));
    }
    return bad ? 1 : status;
}
