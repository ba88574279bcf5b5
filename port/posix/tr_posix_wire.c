/* tinyring POSIX port: byte layout of the rendezvous messages, the
 * registration and the master's answer (see tr_posix.h). Little-endian
 * integers (core/tr_util.h), the same on every host. The link hello is
 * core's (core/include/tr_link.h), shared with the lwIP port. */
#include <string.h>

#include "tr_error.h"
#include "tr_posix_int.h"
#include "tr_util.h"

static const uint8_t magic_reg[4]  = { 'T', 'R', 'R', '1' };
static const uint8_t magic_ans[4]  = { 'T', 'R', 'T', '1' };

/* Layout: "TRR1" | version | token | rank | world | IPv4 | port | 0. */
void tr_posix_put_reg(uint8_t out[TR_POSIX_REG_BYTES], const struct tr_posix_intro *r)
{
    memcpy(out, magic_reg, 4);
    tr_put_le32(out + 4, r->version);
    tr_put_le64(out + 8, r->token);
    tr_put_le32(out + 16, r->rank);
    tr_put_le32(out + 20, r->world);
    memcpy(out + 24, &r->addr, 4);          /* already network order */
    tr_put_le16(out + 28, r->port);
    tr_put_le16(out + 30, 0);
}

int tr_posix_get_reg(struct tr_posix_intro *r, const uint8_t in[TR_POSIX_REG_BYTES])
{
    if (memcmp(in, magic_reg, 4) != 0)
        return TR_ERR_PROTO;
    r->version = tr_get_le32(in + 4);
    r->token = tr_get_le64(in + 8);
    r->rank = tr_get_le32(in + 16);
    r->world = tr_get_le32(in + 20);
    memcpy(&r->addr, in + 24, 4);
    r->port = tr_get_le16(in + 28);
    if (tr_get_le16(in + 30) != 0 || r->port == 0)
        return TR_ERR_PROTO;
    return 0;
}

/* out holds TR_POSIX_ANS_BYTES + n * 8 bytes. */
void tr_posix_put_ans(uint8_t *out, int status, uint32_t world, uint32_t why,
                      const struct tr_posix_endpoint *table, uint32_t n)
{
    uint32_t i;
    memcpy(out, magic_ans, 4);
    tr_put_le32(out + 4, (uint32_t)status);
    tr_put_le32(out + 8, world);
    tr_put_le32(out + 12, why);
    tr_put_le32(out + 16, n);
    tr_put_le32(out + 20, 0);
    for (i = 0; i < n; i++) {
        uint8_t *e = out + TR_POSIX_ANS_BYTES + 8 * i;
        memcpy(e, &table[i].addr, 4);
        tr_put_le16(e + 4, table[i].port);
        tr_put_le16(e + 6, 0);
    }
}

int tr_posix_get_ans_head(const uint8_t in[TR_POSIX_ANS_BYTES], int *status,
                          uint32_t *world, uint32_t *why, uint32_t *n)
{
    if (memcmp(in, magic_ans, 4) != 0)
        return TR_ERR_PROTO;
    *status = (int)tr_get_le32(in + 4);
    *world = tr_get_le32(in + 8);
    *why = tr_get_le32(in + 12);
    *n = tr_get_le32(in + 16);
    if (*n > TR_POSIX_MAX_WORLD || *status > 0 || tr_get_le32(in + 20) != 0)
        return TR_ERR_PROTO;
    return 0;
}

int tr_posix_get_ans_entry(const uint8_t in[8], struct tr_posix_endpoint *p)
{
    if (tr_get_le16(in + 6) != 0)
        return TR_ERR_PROTO;
    memcpy(&p->addr, in, 4);
    p->port = tr_get_le16(in + 4);
    return 0;
}
