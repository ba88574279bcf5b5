/* Fuzz harness: the link hello (core/tr_link.c), as every port judges it.
 *
 * Input: the expected world (u16) and rank (u16) and a job token (8 bytes,
 * little-endian), then the received bytes (24 or fewer: a short read).
 * Invariants: the magic check agrees byte by byte with tr_link_hello_prefix_ok
 * (a stranger is caught at its first wrong byte); a hello that is not
 * garbage decodes to fields that encode back to the very bytes; a hello
 * judged to be the expected neighbour is exactly the hello that neighbour
 * would send; every verdict maps to its code.
 */
#include <string.h>

#include "fuzz.h"
#include "tr_error.h"
#include "tr_link.h"
#include "tr_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size };
    uint32_t world = fz_u16(&in), want = fz_u16(&in);
    uint8_t tb[8], msg[TR_LINK_HELLO_BYTES], again[TR_LINK_HELLO_BYTES];
    const uint8_t *p;
    size_t n, i;
    uint64_t token;
    struct tr_link_hello h, exp;
    enum tr_link_verdict v;
    int err;

    for (i = 0; i < 8; i++)
        tb[i] = fz_u8(&in);
    token = tr_get_le64(tb);
    p = fz_take(&in, TR_LINK_HELLO_BYTES, &n);

    /* the prefix check on every short read */
    for (i = 0; i <= n; i++) {
        int ok = tr_link_hello_prefix_ok(p, i);
        int want_ok = memcmp(p, "TRL1", i < 4 ? i : 4) == 0;
        FZ_ASSERT(ok == want_ok, "prefix of %zu bytes judged %d", i, ok);
    }
    if (n < TR_LINK_HELLO_BYTES)
        return 0;                       /* a port waits for the whole hello */
    memcpy(msg, p, n);
    v = tr_link_hello_judge(&h, msg, token, world, want);
    err = tr_link_verdict_err(v);
    if (v == TR_LINK_GARBAGE) {
        FZ_ASSERT(memcmp(msg, "TRL1", 4) != 0 && err == TR_ERR_PROTO, "a hello judged garbage");
        return 0;
    }
    tr_link_hello_put(again, &h);
    FZ_ASSERT(memcmp(again, msg, sizeof msg) == 0, "a decoded hello encodes to other bytes");
    exp.version = TR_LINK_VERSION;
    exp.token = token;
    exp.rank = want;
    exp.world = world;
    tr_link_hello_put(again, &exp);
    FZ_ASSERT((v == TR_LINK_OK) == (memcmp(again, msg, sizeof msg) == 0),
              "verdict %d, but the bytes %s the expected neighbour's hello", (int)v,
              v == TR_LINK_OK ? "are not" : "are");
    FZ_ASSERT(err == (v == TR_LINK_OK ? 0 : TR_ERR_MISMATCH), "verdict %d as code %d", (int)v, err);
    return 0;
}
