/* tinyring board_mps2: the image without a network (see net.h). */
#include "net.h"

#include "fmt.h"

const struct tr_transport *board_net_up(const struct board_settings *s)
{
    board_printf("train: this image has no network: %d ranks need ring.elf\n", s->world);
    return 0;
}

void board_net_report(void)
{
}

void board_net_down(uint32_t linger_ms)
{
    (void)linger_ms;
}
