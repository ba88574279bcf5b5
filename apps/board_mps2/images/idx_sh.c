/* tinyring board_mps2: see idx_sh.h. */
#include "idx_sh.h"

#include "fmt.h"
#include "semihost.h"
#include "tr_util.h"

static int read_all(int fd, void *buf, uint32_t len)
{
    uint8_t *p = buf;
    while (len) {
        long n = sh_read(fd, p, len);
        if (n <= 0)
            return -1;
        p += n;
        len -= (uint32_t)n;
    }
    return 0;
}

static int fail(struct idx_sh *d, const char *path, const char *why)
{
    board_printf("idx: %s: %s\n", path, why);
    idx_sh_close(d);
    return -1;
}

/* every label 0..9, read in chunks */
static int labels_ok(int fd, uint32_t n)
{
    uint8_t b[256];
    while (n) {
        uint32_t k = n < sizeof b ? n : (uint32_t)sizeof b, i;
        if (read_all(fd, b, k))
            return 0;
        for (i = 0; i < k; i++)
            if (b[i] > 9u)
                return 0;
        n -= k;
    }
    return 1;
}

int idx_sh_open(struct idx_sh *d, const char *dir, const char *prefix)
{
    char ip[256], lp[256];
    uint8_t h[16];
    fmt_s(ip, sizeof ip, "%s/%s-images-idx3-ubyte", dir, prefix);
    fmt_s(lp, sizeof lp, "%s/%s-labels-idx1-ubyte", dir, prefix);
    d->lbl = -1;
    if ((d->img = sh_open(ip)) < 0)
        return fail(d, ip, "cannot open (raw IDX files only)");
    if (read_all(d->img, h, 16) || tr_get_be32(h) != 0x803u)
        return fail(d, ip, "not an IDX image file (wrong magic)");
    if (tr_get_be32(h + 8) != 28u || tr_get_be32(h + 12) != 28u)
        return fail(d, ip, "images are not 28x28");
    d->n = tr_get_be32(h + 4);
    if (d->n == 0 || sh_flen(d->img) != 16 + (long)d->n * (long)IDX_SH_PIXELS)
        return fail(d, ip, "truncated or padded (length differs from the header's count)");
    if ((d->lbl = sh_open(lp)) < 0)
        return fail(d, lp, "cannot open (raw IDX files only)");
    if (read_all(d->lbl, h, 8) || tr_get_be32(h) != 0x801u)
        return fail(d, lp, "not an IDX label file (wrong magic)");
    if (tr_get_be32(h + 4) != d->n)
        return fail(d, lp, "count mismatch with its image file");
    if (sh_flen(d->lbl) != 8 + (long)d->n)
        return fail(d, lp, "truncated or padded");
    if (!labels_ok(d->lbl, d->n))
        return fail(d, lp, "a label is not a class 0..9");
    return 0;
}

int idx_sh_read(const struct idx_sh *d, const uint32_t *idx, unsigned n, uint8_t *pixels,
                uint8_t *labels)
{
    unsigned i;
    for (i = 0; i < n; i++) {
        if (idx[i] >= d->n ||
            sh_seek(d->img, 16 + idx[i] * IDX_SH_PIXELS) ||
            read_all(d->img, pixels + (uint32_t)i * IDX_SH_PIXELS, IDX_SH_PIXELS) ||
            sh_seek(d->lbl, 8 + idx[i]) || read_all(d->lbl, labels + i, 1))
            return -1;
    }
    return 0;
}

void idx_sh_close(struct idx_sh *d)
{
    if (d->img >= 0)
        sh_close(d->img);
    if (d->lbl >= 0)
        sh_close(d->lbl);
    d->img = d->lbl = -1;
}
