/* tinyring POSIX port: byte layout of the rendezvous and link-hello messages
 * (see tr_posix.h). Little-endian integers written byte by byte, so the
 * format is the same on every host and on the lwIP boards. */
#include <string.h>

#include "tr_error.h"
#include "tr_posix_int.h"

static const uint8_t magic_reg[4]  = { 'T', 'R', 'R', '1' };
static const uint8_t magic_ans[4]  = { 'T', 'R', 'T', '1' };
static const uint8_t magic_link[4] = { 'T', 'R', 'L', '1' };

void tr_posix_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

uint32_t tr_posix_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void put_u64(uint8_t *p, uint64_t v)
{
    tr_posix_put_u32(p, (uint32_t)v);
    tr_posix_put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)tr_posix_get_u32(p) | (uint64_t)tr_posix_get_u32(p + 4) << 32;
}

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Common head: magic | version | token | rank | world (24 bytes). */
static void put_intro(uint8_t *out, const uint8_t magic[4], const struct tr_posix_intro *r)
{
    memcpy(out, magic, 4);
    tr_posix_put_u32(out + 4, r->version);
    put_u64(out + 8, r->token);
    tr_posix_put_u32(out + 16, r->rank);
    tr_posix_put_u32(out + 20, r->world);
}

static int get_intro(struct tr_posix_intro *r, const uint8_t magic[4], const uint8_t *in)
{
    if (memcmp(in, magic, 4) != 0)
        return TR_ERR_PROTO;
    r->version = tr_posix_get_u32(in + 4);
    r->token = get_u64(in + 8);
    r->rank = tr_posix_get_u32(in + 16);
    r->world = tr_posix_get_u32(in + 20);
    r->addr = 0;
    r->port = 0;
    return 0;
}

void tr_posix_put_reg(uint8_t out[TR_POSIX_REG_BYTES], const struct tr_posix_intro *r)
{
    put_intro(out, magic_reg, r);
    memcpy(out + 24, &r->addr, 4);          /* already network order */
    put_u16(out + 28, r->port);
    put_u16(out + 30, 0);
}

int tr_posix_get_reg(struct tr_posix_intro *r, const uint8_t in[TR_POSIX_REG_BYTES])
{
    int rc = get_intro(r, magic_reg, in);
    if (rc < 0)
        return rc;
    memcpy(&r->addr, in + 24, 4);
    r->port = get_u16(in + 28);
    if (get_u16(in + 30) != 0 || r->port == 0)
        return TR_ERR_PROTO;
    return 0;
}

void tr_posix_put_link(uint8_t out[TR_POSIX_LINK_BYTES], const struct tr_posix_intro *r)
{
    put_intro(out, magic_link, r);
}

int tr_posix_get_link(struct tr_posix_intro *r, const uint8_t in[TR_POSIX_LINK_BYTES])
{
    return get_intro(r, magic_link, in);
}

/* out holds TR_POSIX_ANS_BYTES + n * 8 bytes. */
void tr_posix_put_ans(uint8_t *out, int status, uint32_t world, uint32_t why,
                      const struct tr_posix_endpoint *table, uint32_t n)
{
    uint32_t i;
    memcpy(out, magic_ans, 4);
    tr_posix_put_u32(out + 4, (uint32_t)status);
    tr_posix_put_u32(out + 8, world);
    tr_posix_put_u32(out + 12, why);
    tr_posix_put_u32(out + 16, n);
    tr_posix_put_u32(out + 20, 0);
    for (i = 0; i < n; i++) {
        uint8_t *e = out + TR_POSIX_ANS_BYTES + 8 * i;
        memcpy(e, &table[i].addr, 4);
        put_u16(e + 4, table[i].port);
        put_u16(e + 6, 0);
    }
}

int tr_posix_get_ans_head(const uint8_t in[TR_POSIX_ANS_BYTES], int *status,
                          uint32_t *world, uint32_t *why, uint32_t *n)
{
    if (memcmp(in, magic_ans, 4) != 0)
        return TR_ERR_PROTO;
    *status = (int)tr_posix_get_u32(in + 4);
    *world = tr_posix_get_u32(in + 8);
    *why = tr_posix_get_u32(in + 12);
    *n = tr_posix_get_u32(in + 16);
    if (*n > TR_POSIX_MAX_WORLD || *status > 0)
        return TR_ERR_PROTO;
    return 0;
}

void tr_posix_get_ans_entry(const uint8_t in[8], struct tr_posix_endpoint *p)
{
    memcpy(&p->addr, in, 4);
    p->port = get_u16(in + 4);
}
