/* test/app: writes a small synthetic IDX data set (digit-like strokes: each
 * class is a distinct set of bars, drawn at a jittered position with noise),
 * raw or gzip'd, and the broken variants the reader must reject.
 *
 *   gen_idx DIR NTRAIN NTEST SEED [raw|gz] [ok|magic|truncated|count|dims|labelrange]
 * The broken variant affects the training images (or labels for count and
 * labelrange); the test split is always well formed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tr_util.h"

static uint64_t st;
static uint32_t rnd(void)
{
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(st >> 33);
}

/* segments of a 7-segment display on a 28x28 canvas: each class lights some */
static const char *const seg_of[10] = { "abcdef", "bc", "abdeg", "abcdg", "bcfg",
                                        "acdfg", "acdefg", "abc", "abcdefg", "abcdfg" };

static void bar(uint8_t *img, int x0, int y0, int x1, int y1)
{
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++)
            if (x >= 0 && x < 28 && y >= 0 && y < 28)
                img[y * 28 + x] = (uint8_t)(200 + rnd() % 56);
}

static void draw(uint8_t *img, int cls)
{
    int dx = (int)(rnd() % 5) - 2, dy = (int)(rnd() % 5) - 2;
    memset(img, 0, 784);
    for (const char *s = seg_of[cls]; *s; s++) {
        int L = 8 + dx, R = 19 + dx, T = 4 + dy, M = 13 + dy, B = 23 + dy;
        switch (*s) {
        case 'a': bar(img, L, T, R, T + 1); break;
        case 'b': bar(img, R - 1, T, R, M); break;
        case 'c': bar(img, R - 1, M, R, B); break;
        case 'd': bar(img, L, B - 1, R, B); break;
        case 'e': bar(img, L, M, L + 1, B); break;
        case 'f': bar(img, L, T, L + 1, M); break;
        case 'g': bar(img, L, M, R, M + 1); break;
        }
    }
    for (int i = 0; i < 784; i++) {  /* speckle noise */
        if (rnd() % 16 == 0)
            img[i] = (uint8_t)(rnd() % 256);
    }
}

static void put(const char *path, int gz, const void *buf, size_t len)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        if (!f || gzwrite(f, buf, (unsigned)len) != (int)len || gzclose(f) != Z_OK) {
            fprintf(stderr, "gen_idx: cannot write %s\n", path);
            exit(1);
        }
    } else {
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
            fprintf(stderr, "gen_idx: cannot write %s\n", path);
            exit(1);
        }
    }
}

static void split(const char *dir, const char *name, uint32_t n, int gz, const char *bad)
{
    size_t ilen = 16 + (size_t)n * 784, llen = 8 + n;
    unsigned char *im = malloc(ilen), *lb = malloc(llen);
    char path[1024];
    uint32_t nl = n;
    if (!im || !lb)
        exit(1);
    tr_put_be32(im, 0x803); tr_put_be32(im + 4, n); tr_put_be32(im + 8, 28); tr_put_be32(im + 12, 28);
    for (uint32_t i = 0; i < n; i++) {
        int c = (int)(rnd() % 10);
        lb[8 + i] = (unsigned char)c;
        draw(im + 16 + (size_t)i * 784, c);
    }
    if (!strcmp(bad, "magic")) tr_put_be32(im, 0x0803 + 0x100);
    if (!strcmp(bad, "dims")) tr_put_be32(im + 8, 27);
    if (!strcmp(bad, "truncated")) ilen -= 784 * 3 + 100;
    if (!strcmp(bad, "count")) { nl = n - 1; llen -= 1; }
    if (!strcmp(bad, "labelrange")) lb[8 + n / 2] = 10;
    tr_put_be32(lb, 0x801); tr_put_be32(lb + 4, nl);
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte%s", dir, name, gz ? ".gz" : "");
    put(path, gz, im, ilen);
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte%s", dir, name, gz ? ".gz" : "");
    put(path, gz, lb, llen);
    free(im);
    free(lb);
}

int main(int argc, char **argv)
{
    const char *bad;
    int gz;
    if (argc < 5) {
        fprintf(stderr, "usage: gen_idx DIR NTRAIN NTEST SEED [raw|gz] [ok|magic|truncated|count|dims|labelrange]\n");
        return 2;
    }
    st = strtoull(argv[4], NULL, 10) * 2 + 1;
    gz = argc > 5 && !strcmp(argv[5], "gz");
    bad = argc > 6 ? argv[6] : "ok";
    split(argv[1], "train", (uint32_t)atoi(argv[2]), gz, bad);
    split(argv[1], "t10k", (uint32_t)atoi(argv[3]), gz, "ok");
    return 0;
}
