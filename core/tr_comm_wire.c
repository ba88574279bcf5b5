/* tinyring: the wire format of the collectives, encoded byte by byte in
 * little-endian so that it does not depend on the host's byte order or
 * struct layout. Payloads (float data) travel in native order; the hello's
 * byte-order mark refuses a peer whose native order differs. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"
#include "tr_util.h"

/* Layout: magic(4) version(1) kind(1) op(1) flags(1) seq(4) step(4) root(4)
 * offset(4) length(4) total(4) = 32 bytes. */
void tr_wire_put_hdr(uint8_t out[TR_WIRE_HDR_BYTES], const struct tr_wire_hdr *h)
{
    tr_put_le32(out + 0, h->magic);
    out[4] = h->version;
    out[5] = h->kind;
    out[6] = h->op;
    out[7] = h->flags;
    tr_put_le32(out + 8, h->seq);
    tr_put_le32(out + 12, h->step);
    tr_put_le32(out + 16, h->root);
    tr_put_le32(out + 20, h->offset);
    tr_put_le32(out + 24, h->length);
    tr_put_le32(out + 28, h->total);
}

void tr_wire_get_hdr(struct tr_wire_hdr *h, const uint8_t in[TR_WIRE_HDR_BYTES])
{
    h->magic = tr_get_le32(in + 0);
    h->version = in[4];
    h->kind = in[5];
    h->op = in[6];
    h->flags = in[7];
    h->seq = tr_get_le32(in + 8);
    h->step = tr_get_le32(in + 12);
    h->root = tr_get_le32(in + 16);
    h->offset = tr_get_le32(in + 20);
    h->length = tr_get_le32(in + 24);
    h->total = tr_get_le32(in + 28);
}

/* Layout: version(4) bom(4, native order) token(8) rank(4) world(4)
 * layout(4) segment(4) = 32 bytes. */
void tr_wire_put_hello(uint8_t out[TR_WIRE_HELLO_BYTES], const struct tr_wire_hello *h)
{
    union { uint32_t u; uint8_t b[4]; } bom;
    unsigned i;
    bom.u = h->bom;
    tr_put_le32(out + 0, h->version);
    for (i = 0; i < 4; i++)
        out[4 + i] = bom.b[i];
    tr_put_le64(out + 8, h->token);
    tr_put_le32(out + 16, h->rank);
    tr_put_le32(out + 20, h->world);
    tr_put_le32(out + 24, h->layout);
    tr_put_le32(out + 28, h->segment);
}

void tr_wire_get_hello(struct tr_wire_hello *h, const uint8_t in[TR_WIRE_HELLO_BYTES])
{
    union { uint32_t u; uint8_t b[4]; } bom;
    unsigned i;
    h->version = tr_get_le32(in + 0);
    for (i = 0; i < 4; i++)
        bom.b[i] = in[4 + i];
    h->bom = bom.u;
    h->token = tr_get_le64(in + 8);
    h->rank = tr_get_le32(in + 16);
    h->world = tr_get_le32(in + 20);
    h->layout = tr_get_le32(in + 24);
    h->segment = tr_get_le32(in + 28);
}
