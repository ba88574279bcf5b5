/* tinyring: the wire format of the collectives, encoded byte by byte in
 * little-endian so that it does not depend on the host's byte order or
 * struct layout. Payloads (float data) travel in native order; the hello's
 * byte-order mark refuses a peer whose native order differs. */
#include "tr_comm_internal.h"

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* Layout: magic(4) version(1) kind(1) op(1) flags(1) seq(4) step(4) root(4)
 * offset(4) length(4) total(4) = 32 bytes. */
void tr_wire_put_hdr(uint8_t out[TR_WIRE_HDR_BYTES], const struct tr_wire_hdr *h)
{
    put32(out + 0, h->magic);
    out[4] = h->version;
    out[5] = h->kind;
    out[6] = h->op;
    out[7] = h->flags;
    put32(out + 8, h->seq);
    put32(out + 12, h->step);
    put32(out + 16, h->root);
    put32(out + 20, h->offset);
    put32(out + 24, h->length);
    put32(out + 28, h->total);
}

void tr_wire_get_hdr(struct tr_wire_hdr *h, const uint8_t in[TR_WIRE_HDR_BYTES])
{
    h->magic = get32(in + 0);
    h->version = in[4];
    h->kind = in[5];
    h->op = in[6];
    h->flags = in[7];
    h->seq = get32(in + 8);
    h->step = get32(in + 12);
    h->root = get32(in + 16);
    h->offset = get32(in + 20);
    h->length = get32(in + 24);
    h->total = get32(in + 28);
}

/* Layout: version(4) bom(4, native order) token(8) rank(4) world(4)
 * layout(4) segment(4) = 32 bytes. */
void tr_wire_put_hello(uint8_t out[TR_WIRE_HELLO_BYTES], const struct tr_wire_hello *h)
{
    union { uint32_t u; uint8_t b[4]; } bom;
    unsigned i;
    bom.u = h->bom;
    put32(out + 0, h->version);
    for (i = 0; i < 4; i++)
        out[4 + i] = bom.b[i];
    put32(out + 8, (uint32_t)h->token);
    put32(out + 12, (uint32_t)(h->token >> 32));
    put32(out + 16, h->rank);
    put32(out + 20, h->world);
    put32(out + 24, h->layout);
    put32(out + 28, h->segment);
}

void tr_wire_get_hello(struct tr_wire_hello *h, const uint8_t in[TR_WIRE_HELLO_BYTES])
{
    union { uint32_t u; uint8_t b[4]; } bom;
    unsigned i;
    h->version = get32(in + 0);
    for (i = 0; i < 4; i++)
        bom.b[i] = in[4 + i];
    h->bom = bom.u;
    h->token = (uint64_t)get32(in + 8) | ((uint64_t)get32(in + 12) << 32);
    h->rank = get32(in + 16);
    h->world = get32(in + 20);
    h->layout = get32(in + 24);
    h->segment = get32(in + 28);
}
