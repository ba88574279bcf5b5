/* tinyring board_mps2: the image without a network (see net.h). */
#include "net.h"

#include "fmt.h"
#include "tr_error.h"

const struct tr_transport *board_net_up(const struct board_settings *s, struct board_ring *ring)
{
    (void)ring;
    board_printf("train: this image has no network: %d ranks need ring.elf\n", s->world);
    return 0;
}

int board_net_reform(uint64_t position, struct board_ring *ring)
{
    (void)position; (void)ring;
    return TR_ERR_INVAL;
}

int board_net_service(void)
{
    return 0;
}

void board_net_report(void)
{
}

void board_net_down(uint32_t linger_ms)
{
    (void)linger_ms;
}
