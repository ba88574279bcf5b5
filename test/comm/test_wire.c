/* tinyring: core's byte helpers (tr_util.h), the link hello (tr_link.h) and
 * the collectives' header and hello (tr_comm_wire.c): exact bytes, round
 * trips and the link hello's verdicts. Suite "wire". */
#include <string.h>

#include "harness.h"
#include "tinyring.h"
#include "tr_comm_internal.h"
#include "tr_link.h"
#include "tr_util.h"

static void test_bytes(void)
{
    uint8_t b[8];
    static const uint8_t le[8] = { 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01 };
    tr_put_le64(b, 0x0123456789abcdefull);
    TH_CHECK(memcmp(b, le, 8) == 0, "le64 bytes");
    TH_CHECK(tr_get_le64(b) == 0x0123456789abcdefull, "le64 round trip");
    TH_CHECK(tr_get_le32(b) == 0x89abcdefu && tr_get_le16(b) == 0xcdefu, "le32/le16 of the same bytes");
    tr_put_le32(b, 0xdeadbeefu);
    TH_CHECK(b[0] == 0xef && b[3] == 0xde, "le32 bytes");
    tr_put_le16(b, 0xbeefu);
    TH_CHECK(b[0] == 0xef && b[1] == 0xbe && tr_get_le16(b) == 0xbeefu, "le16");
    tr_put_be32(b, 0x00000803u);
    TH_CHECK(b[0] == 0 && b[2] == 8 && b[3] == 3 && tr_get_be32(b) == 0x803u, "be32 (IDX magic)");
    /* FNV-1a published test vectors */
    TH_CHECK(tr_fnv1a32(TR_FNV32_INIT, "", 0) == 0x811c9dc5u, "FNV-1a 32 of ''");
    TH_CHECK(tr_fnv1a32(TR_FNV32_INIT, "a", 1) == 0xe40c292cu, "FNV-1a 32 of 'a'");
    TH_CHECK(tr_fnv1a32(TR_FNV32_INIT, "foobar", 6) == 0xbf9cf968u, "FNV-1a 32 of 'foobar'");
    TH_CHECK(tr_fnv1a64(TR_FNV64_INIT, "a", 1) == 0xaf63dc4c8601ec8cull, "FNV-1a 64 of 'a'");
    TH_CHECK(tr_fnv1a64(TR_FNV64_INIT, "foobar", 6) == 0x85944171f73967e8ull, "FNV-1a 64 of 'foobar'");
    TH_CHECK(tr_fnv1a64(tr_fnv1a64(TR_FNV64_INIT, "foo", 3), "bar", 3) == 0x85944171f73967e8ull,
             "FNV-1a 64 chained over pieces");
}

static void test_link_hello(void)
{
    static const uint8_t want[TR_LINK_HELLO_BYTES] = {
        'T', 'R', 'L', '1', 1, 0, 0, 0, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,
        3, 0, 0, 0, 4, 0, 0, 0 };
    struct tr_link_hello h = { TR_LINK_VERSION, 0x0123456789abcdefull, 3, 4 }, g;
    uint64_t tok = h.token;
    uint8_t b[TR_LINK_HELLO_BYTES];

    tr_link_hello_put(b, &h);
    TH_CHECK(memcmp(b, want, sizeof b) == 0, "link hello bytes");
    TH_CHECK(tr_link_hello_get(&g, b) == 0 && g.version == 1 && g.token == tok && g.rank == 3 &&
             g.world == 4, "link hello round trip");
    TH_CHECK(tr_link_hello_judge(&g, b, tok, 4, 3) == TR_LINK_OK, "the expected neighbour");
    TH_CHECK(tr_link_hello_judge(&g, b, tok + 1, 4, 3) == TR_LINK_OTHER_JOB, "another job");
    TH_CHECK(tr_link_hello_judge(&g, b, tok, 5, 3) == TR_LINK_OTHER_WORLD, "another world");
    TH_CHECK(tr_link_hello_judge(&g, b, tok, 4, 2) == TR_LINK_OTHER_RANK, "another rank");
    b[4] = 2;
    TH_CHECK(tr_link_hello_judge(&g, b, tok, 4, 3) == TR_LINK_OTHER_VERSION && g.version == 2,
             "another version");
    TH_CHECK(tr_link_verdict_err(TR_LINK_OK) == 0 &&
             tr_link_verdict_err(TR_LINK_OTHER_VERSION) == TR_ERR_MISMATCH &&
             tr_link_verdict_err(TR_LINK_GARBAGE) == TR_ERR_PROTO, "verdicts as codes");
    TH_CHECK(tr_link_hello_prefix_ok(b, 0) && tr_link_hello_prefix_ok(b, 2) &&
             tr_link_hello_prefix_ok(b, 24), "a hello's prefixes pass");
    b[2] = 'R';
    TH_CHECK(!tr_link_hello_prefix_ok(b, 3) && tr_link_hello_prefix_ok(b, 2),
             "a stranger is caught at its first wrong byte");
    TH_CHECK(tr_link_hello_judge(&g, b, tok, 4, 3) == TR_LINK_GARBAGE, "garbage");
    memcpy(b, "TRR1", 4);
    TH_CHECK(tr_link_hello_get(&g, b) == TR_ERR_PROTO, "a registration is not a link hello");
}

static void test_comm_wire(void)
{
    struct tr_wire_hdr h = { TR_WIRE_MAGIC, 1, 2, 3, 0, 0x11223344u, 5, 6, 7, 8, 9 }, g;
    struct tr_wire_hello m = { 1, TR_WIRE_BOM, 0xfeedfacecafebeefull, 2, 3, 0xabcdef01u, 4096 }, n;
    uint8_t b[TR_WIRE_HDR_BYTES];
    tr_wire_put_hdr(b, &h);
    TH_CHECK(memcmp(b, "TRNG", 4) == 0 && b[5] == 2 && b[8] == 0x44 && b[11] == 0x11 &&
             b[28] == 9, "header bytes");
    tr_wire_get_hdr(&g, b);
    TH_CHECK(memcmp(&g, &h, sizeof g) == 0, "header round trip");
    tr_wire_put_hello(b, &m);
    tr_wire_get_hello(&n, b);
    TH_CHECK(n.version == 1 && n.bom == TR_WIRE_BOM && n.token == m.token && n.rank == 2 &&
             n.world == 3 && n.layout == m.layout && n.segment == 4096, "hello round trip");
    TH_CHECK(b[8] == 0xef && b[15] == 0xfe, "hello token little-endian");
}

int main(void)
{
    test_bytes();
    test_link_hello();
    test_comm_wire();
    return th_report("wire");
}
