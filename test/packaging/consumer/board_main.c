/* test/packaging consumer, Cortex-M4F on QEMU's mps2-an386: the demo's
 * numbers through semihosting (fmt.h's %x is 8 hex digits); main's return
 * value is the emulator's exit status (apps/board_mps2/bsp/startup.c). */
#include "fmt.h"
#include "demo.h"

int main(void)
{
    uint32_t loss[DEMO_STEPS], hash;
    unsigned s;
    if (demo_run(loss, &hash) < 0)
        return 1;
    for (s = 0; s < DEMO_STEPS; s++)
        board_printf("loss %u %x\n", s, (unsigned)loss[s]);
    board_printf("params %x\n", (unsigned)hash);
    return 0;
}
