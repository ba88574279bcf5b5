/* tinyring: the link hello (see tr_link.h). */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_link.h"
#include "tr_error.h"
#include "tr_util.h"

static const uint8_t link_magic[4] = { 'T', 'R', 'L', '1' };

void tr_link_hello_put(uint8_t out[TR_LINK_HELLO_BYTES], const struct tr_link_hello *h)
{
    unsigned i;
    for (i = 0; i < 4; i++)
        out[i] = link_magic[i];
    tr_put_le32(out + 4, h->version);
    tr_put_le64(out + 8, h->token);
    tr_put_le32(out + 16, h->rank);
    tr_put_le32(out + 20, h->world);
}

int tr_link_hello_prefix_ok(const uint8_t *in, size_t n)
{
    size_t i;
    for (i = 0; i < n && i < 4; i++)
        if (in[i] != link_magic[i])
            return 0;
    return 1;
}

int tr_link_hello_get(struct tr_link_hello *h, const uint8_t in[TR_LINK_HELLO_BYTES])
{
    if (!tr_link_hello_prefix_ok(in, 4))
        return TR_ERR_PROTO;
    h->version = tr_get_le32(in + 4);
    h->token = tr_get_le64(in + 8);
    h->rank = tr_get_le32(in + 16);
    h->world = tr_get_le32(in + 20);
    return 0;
}

enum tr_link_verdict tr_link_hello_judge(struct tr_link_hello *h,
                                         const uint8_t in[TR_LINK_HELLO_BYTES],
                                         uint64_t token, uint32_t world,
                                         uint32_t want_rank)
{
    if (tr_link_hello_get(h, in) < 0)
        return TR_LINK_GARBAGE;
    if (h->version != TR_LINK_VERSION)
        return TR_LINK_OTHER_VERSION;
    if (h->token != token)
        return TR_LINK_OTHER_JOB;
    if (h->world != world)
        return TR_LINK_OTHER_WORLD;
    return h->rank == want_rank ? TR_LINK_OK : TR_LINK_OTHER_RANK;
}

int tr_link_verdict_err(enum tr_link_verdict v)
{
    if (v == TR_LINK_OK)
        return 0;
    return v == TR_LINK_GARBAGE ? TR_ERR_PROTO : TR_ERR_MISMATCH;
}
