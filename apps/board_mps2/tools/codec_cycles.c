/* tinyring board_mps2: `make board-codec-cycles`. Instructions that core's
 * gradient codecs (tr_codec.h) take for the seed ConvNet's 29,034 gradients
 * on the Cortex-M4F, RV32IMAFC and Cortex-M55, under QEMU -icount (the
 * start files and counters of test/core/cross: port_arm.c, port_rv.c; see
 * tools/cycles.sh for what such a count is and is not).
 *
 * Per codec, over the whole vector: one encode with error feedback
 * (tr_codec_encode: the bytes and the residual) and one decode-add
 * (tr_codec_decode_add). A step of the compressed ring on N ranks encodes
 * every value once (own chunk, passed partial sums, completed chunk) and
 * decodes it about twice ((N-1)/N in the reduce-scatter, all of it in the
 * all-gather): about one encode and two decodes of the vector per step.
 * Prints "codec NAME encode N decode-add M" (instructions) and the bytes. */
#include "tinyring.h"
#include "tr_codec.h"
#include "image.h"   /* test/core/cross: img_puts, img_instret */

#define N_VALUES 29034u

static float g[N_VALUES], res[N_VALUES], out[N_VALUES];
static uint8_t wire[N_VALUES * 4u + 64u];

static char *put_u(char *p, uint64_t v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v);
    while (n)
        *p++ = d[--n];
    return p;
}

static char *put_s(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

int img_main(void)
{
    uint32_t x = 12345u, i;
    int k, rc = 0;
    /* gradient-like values: small, both signs, a spread of magnitudes */
    for (i = 0; i < N_VALUES; i++) {
        x = x * 1664525u + 1013904223u;
        g[i] = ((float)(int32_t)(x >> 8) - 8388608.0f) * (1.0f / 8388608.0f) *
               (1.0f / (float)(1u + (x & 255u)));
    }
    for (k = 1; k < TR_CODEC_COUNT; k++) {
        char line[128], *p = line;
        uint64_t t0, t1, t2;
        for (i = 0; i < N_VALUES; i++) {
            res[i] = 0.0f;
            out[i] = 0.0f;
        }
        t0 = img_instret();
        rc |= tr_codec_encode(k, g, N_VALUES, wire, res);
        t1 = img_instret();
        rc |= tr_codec_decode_add(k, wire, N_VALUES, out);
        t2 = img_instret();
        p = put_s(p, "codec ");
        p = put_s(p, tr_codec_name(k));
        p = put_s(p, " values ");
        p = put_u(p, N_VALUES);
        p = put_s(p, " bytes ");
        p = put_u(p, tr_codec_bytes(k, N_VALUES));
        p = put_s(p, " encode ");
        p = put_u(p, t1 - t0);
        p = put_s(p, " decode-add ");
        p = put_u(p, t2 - t1);
        p = put_s(p, "\n");
        *p = '\0';
        img_puts(line);
    }
    if (rc)
        img_puts("FAIL: a codec call failed\n");
    return rc != 0;
}
