/* tinyring: the link hello (see tr_link_hs.h). */
#include <string.h>

#include "tr_error.h"
#include "tr_link_hs.h"

static const uint8_t magic[4] = { 'T', 'R', 'L', '1' };

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

void tr_link_hs_put(uint8_t *out, uint64_t job_token, uint32_t rank, uint32_t world)
{
    memcpy(out, magic, 4);
    put32(out + 4, TR_LINK_HS_VERSION);
    put32(out + 8, (uint32_t)job_token);
    put32(out + 12, (uint32_t)(job_token >> 32));
    put32(out + 16, rank);
    put32(out + 20, world);
}

int tr_link_hs_check(const uint8_t *in, uint64_t job_token, uint32_t world,
                     uint32_t want_rank)
{
    uint64_t token;
    if (memcmp(in, magic, 4) != 0)
        return TR_ERR_PROTO;
    token = (uint64_t)get32(in + 8) | (uint64_t)get32(in + 12) << 32;
    if (get32(in + 4) != TR_LINK_HS_VERSION || token != job_token ||
        get32(in + 20) != world || get32(in + 16) != want_rank)
        return TR_ERR_MISMATCH;
    return 0;
}
