/* tinyring board_mps2: see idx_sh.h. No seek in the semihosting subset used
 * here: skipped samples are read into a small bounce buffer. */
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

static int skip(int fd, uint32_t len)
{
    uint8_t tmp[256];
    while (len) {
        uint32_t k = len < sizeof tmp ? len : (uint32_t)sizeof tmp;
        if (read_all(fd, tmp, k))
            return -1;
        len -= k;
    }
    return 0;
}

static int fail(const char *path, const char *why, int fd)
{
    board_printf("idx: %s: %s\n", path, why);
    if (fd >= 0)
        sh_close(fd);
    return -1;
}

int idx_sh_load(const char *img_path, const char *lbl_path, uint32_t first, uint32_t n,
                uint8_t *pixels, uint8_t *labels)
{
    uint8_t h[16];
    uint32_t i;
    int fd = sh_open(img_path);
    if (fd < 0)
        return fail(img_path, "cannot open", fd);
    if (read_all(fd, h, 16) || tr_get_be32(h) != 0x803u)
        return fail(img_path, "not an IDX image file", fd);
    if (tr_get_be32(h + 8) != 28u || tr_get_be32(h + 12) != 28u)
        return fail(img_path, "images are not 28x28", fd);
    if (tr_get_be32(h + 4) < first + n)
        return fail(img_path, "too few samples", fd);
    if (skip(fd, first * 784u) || read_all(fd, pixels, n * 784u))
        return fail(img_path, "short read", fd);
    sh_close(fd);

    fd = sh_open(lbl_path);
    if (fd < 0)
        return fail(lbl_path, "cannot open", fd);
    if (read_all(fd, h, 8) || tr_get_be32(h) != 0x801u)
        return fail(lbl_path, "not an IDX label file", fd);
    if (tr_get_be32(h + 4) < first + n)
        return fail(lbl_path, "too few labels", fd);
    if (skip(fd, first) || read_all(fd, labels, n))
        return fail(lbl_path, "short read", fd);
    sh_close(fd);
    for (i = 0; i < n; i++)
        if (labels[i] > 9u)
            return fail(lbl_path, "label out of range", -1);
    return 0;
}
