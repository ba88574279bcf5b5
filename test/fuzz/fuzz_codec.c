/* Fuzz harness: the gradient codecs' wire formats (core/tr_codec.c), the
 * bytes a compressed ring receives from its left neighbour.
 *
 * Input: codec (1 byte, mod TR_CODEC_COUNT), count (le16, at most 4096),
 * then the encoded bytes (short input: zeros).
 * Invariants: decoding writes exactly count floats and no more; a decode
 * that succeeds gives only finite values, decode_add of the same bytes onto
 * zeros gives the same bits, and encoding those values again succeeds and
 * decodes to values within half a quantisation step (for none and bf16: to
 * the very same bytes); a decode that fails says TR_ERR_PROTO.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "tr_codec.h"
#include "tr_error.h"

#define GUARD 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size };
    int codec = fz_u8(&in) % TR_CODEC_COUNT;
    size_t n = fz_u16(&in) % 4097u, nb = tr_codec_bytes(codec, n), got, i;
    const uint8_t *p = fz_take(&in, nb, &got);
    uint8_t *bytes = calloc(nb + 1, 1), *again = malloc(nb + 1);
    float *d = malloc((n + GUARD) * 4), *z = malloc((n + 1) * 4), *d2 = malloc((n + 1) * 4);
    int rc;

    memcpy(bytes, p, got);
    for (i = 0; i < GUARD; i++)
        d[n + i] = -7.0f;
    rc = tr_codec_decode(codec, bytes, n, d);
    for (i = 0; i < GUARD; i++)
        FZ_ASSERT(d[n + i] == -7.0f, "decode wrote past %zu values", n);
    if (rc < 0) {
        FZ_ASSERT(rc == TR_ERR_PROTO, "decode failed with %d", rc);
    } else {
        for (i = 0; i < n; i++) {
            FZ_ASSERT(isfinite(d[i]), "decoded value %zu not finite", i);
            z[i] = 0.0f;
        }
        FZ_ASSERT(tr_codec_decode_add(codec, bytes, n, z) == 0, "decode_add refused");
        for (i = 0; i < n; i++)
            FZ_ASSERT(memcmp(&z[i], &d[i], 4) == 0 || (z[i] == 0.0f && d[i] == 0.0f),
                      "decode_add differs at %zu", i);
        FZ_ASSERT(tr_codec_encode(codec, d, n, again, NULL) == 0, "re-encode refused");
        if (codec == TR_CODEC_NONE || codec == TR_CODEC_BF16)
            FZ_ASSERT(memcmp(again, bytes, nb) == 0, "re-encoded bytes differ");
        FZ_ASSERT(tr_codec_decode(codec, again, n, d2) == 0, "own bytes refused");
        for (i = 0; i < n; i++) {
            size_t b0 = i / TR_CODEC_BLOCK * TR_CODEC_BLOCK, k;
            double amax = 0, step;
            if (codec == TR_CODEC_NONE || codec == TR_CODEC_BF16) {
                FZ_ASSERT(memcmp(&d2[i], &d[i], 4) == 0, "round trip differs at %zu", i);
                continue;
            }
            for (k = b0; k < b0 + TR_CODEC_BLOCK && k < n; k++)
                amax = fabs(d[k]) > amax ? fabs(d[k]) : amax;
            step = amax / (codec == TR_CODEC_INT8 ? 127.0 : 7.0);
            /* half a step, the quotient's rounding, and a denormal step's
             * own rounding (up to 127 half units of the last place) */
            FZ_ASSERT(fabs((double)d2[i] - d[i]) <= step * 0.50001 + 128 * 1.5e-45,
                      "re-encoded value %zu off by %g (step %g)", i, fabs((double)d2[i] - d[i]),
                      step);
        }
    }
    free(bytes), free(again), free(d), free(z), free(d2);
    return 0;
}
