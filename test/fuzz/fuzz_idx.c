/* Fuzz harness: IDX image and label files, raw and gzip'd
 * (apps/mnist_ring/idx.c, read through zlib's gzread).
 *
 * Input: a mode byte, a u16 (little-endian) length L, L bytes of the image
 * file, then the label file. Mode bit 0 gzips the image file and bit 1 the
 * label file before the reader sees them (so the fuzzer explores the IDX
 * structure behind gzip too); without them the bytes are the file as is,
 * which may itself be a (broken) gzip stream.
 * Invariants: a pair that loads holds exactly the samples its headers
 * announce, every label is a class 0..9, and the images and labels encode
 * back (IDX header + bytes) to exactly the bytes zlib reads from the files;
 * a pair that is refused is refused with TR_ERR_FORMAT (or an I/O or memory
 * error) and a message naming one of the two files, with nothing kept; and
 * the reader never asks for much more memory at once than the files hold
 * (a header that announces more than is there costs nothing).
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <sanitizer/allocator_interface.h>

#include "fuzz.h"
#include "idx.h"
#include "tr_error.h"
#include "tr_util.h"

#define MAX_PLAIN (64u << 20)    /* bound on what zlib may inflate a file to */
#define ALLOC_SLACK (256u << 10) /* zlib's own state and buffers, the reader's steps */

/* The largest single allocation while the reader runs (a sanitizer hook). */
static int watching;
static size_t biggest;

static void on_malloc(const volatile void *p, size_t n)
{
    (void)p;
    if (watching && n > biggest)
        biggest = n;
}

static void on_free(const volatile void *p)
{
    (void)p;
}

/* A memory file holding bytes (gzip'd when gz); its path in path. */
static int mem_file(const uint8_t *p, size_t n, int gz, char *path, size_t pathlen)
{
    int fd = memfd_create("fuzz-idx", 0);
    if (fd < 0)
        abort();
    if (gz) {
        gzFile g = gzdopen(dup(fd), "wb");
        if (!g || (n && gzwrite(g, p, (unsigned)n) != (int)n) || gzclose(g) != Z_OK)
            abort();
    } else if (n && write(fd, p, n) != (ssize_t)n) {
        abort();
    }
    snprintf(path, pathlen, "/proc/self/fd/%d", fd);
    return fd;
}

/* Everything zlib's gzread gives for path (as the reader sees the file). */
static uint8_t *plain_bytes(const char *path, size_t *len)
{
    gzFile g = gzopen(path, "rb");
    size_t cap = 1u << 16;
    uint8_t *buf = malloc(cap);
    int got;
    *len = 0;
    if (!g || !buf)
        abort();
    while (*len < MAX_PLAIN && (got = gzread(g, buf + *len, (unsigned)(cap - *len))) > 0) {
        *len += (size_t)got;
        if (*len == cap && !(buf = realloc(buf, cap *= 2)))
            abort();
    }
    gzclose(g);
    return buf;
}

/* Does the message start with "path:"? */
static int names(const char *err, const char *path)
{
    size_t n = strlen(path);
    return strncmp(err, path, n) == 0 && err[n] == ':';
}

static void check_loaded(const struct mr_dataset *ds, const char *ip, const char *lp)
{
    size_t ilen, llen;
    uint8_t *img = plain_bytes(ip, &ilen), *lbl = plain_bytes(lp, &llen);
    uint8_t h[16];
    FZ_ASSERT(ds->n > 0 && ds->images && ds->labels, "loaded, but empty");
    FZ_ASSERT(ilen == 16 + (size_t)ds->n * MR_IMG_PIXELS, "image file has %zu bytes for %u images",
              ilen, (unsigned)ds->n);
    FZ_ASSERT(llen == 8 + (size_t)ds->n, "label file has %zu bytes for %u labels", llen,
              (unsigned)ds->n);
    tr_put_be32(h, 0x803);
    tr_put_be32(h + 4, ds->n);
    tr_put_be32(h + 8, MR_IMG_H);
    tr_put_be32(h + 12, MR_IMG_W);
    FZ_ASSERT(memcmp(img, h, 16) == 0, "image header does not encode back");
    FZ_ASSERT(memcmp(img + 16, ds->images, (size_t)ds->n * MR_IMG_PIXELS) == 0,
              "pixels differ from the file's");
    tr_put_be32(h, 0x801);
    FZ_ASSERT(memcmp(lbl, h, 8) == 0, "label header does not encode back");
    FZ_ASSERT(memcmp(lbl + 8, ds->labels, ds->n) == 0, "labels differ from the file's");
    for (uint32_t i = 0; i < ds->n; i++)
        FZ_ASSERT(ds->labels[i] < 10, "label %u at %u kept", ds->labels[i], (unsigned)i);
    free(img);
    free(lbl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size };
    uint8_t mode = fz_u8(&in);
    size_t ilen, llen;
    const uint8_t *ib = fz_take(&in, fz_u16(&in), &ilen);
    const uint8_t *lb = fz_take(&in, in.n, &llen);
    char ip[64], lp[64], err[512] = "";
    struct mr_dataset ds;
    int fi = mem_file(ib, ilen, mode & 1, ip, sizeof ip);
    int fl = mem_file(lb, llen, mode & 2, lp, sizeof lp);
    size_t plain_i, plain_l;
    uint8_t *pi, *pl;
    int rc;

    static int hooked;
    if (!hooked)
        hooked = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
    biggest = 0;
    watching = 1;
    rc = mr_idx_load(&ds, ip, lp, err, sizeof err);
    watching = 0;
    pi = plain_bytes(ip, &plain_i);
    pl = plain_bytes(lp, &plain_l);
    free(pi);
    free(pl);
    FZ_ASSERT(biggest <= 2 * (plain_i + plain_l) + ALLOC_SLACK,
              "the reader asked for %zu bytes at once for files of %zu and %zu bytes",
              biggest, plain_i, plain_l);

    if (rc == 0) {
        check_loaded(&ds, ip, lp);
        mr_dataset_free(&ds);
    } else {
        FZ_ASSERT(rc == TR_ERR_FORMAT || rc == TR_ERR_IO || rc == TR_ERR_NOMEM,
                  "refused with code %d (%s)", rc, err);
        FZ_ASSERT(names(err, ip) || names(err, lp),
                  "refusal names neither file: '%s'", err);
        FZ_ASSERT(ds.n == 0 && !ds.images && !ds.labels, "a refused pair kept its data");
    }
    close(fi);
    close(fl);
    return 0;
}
