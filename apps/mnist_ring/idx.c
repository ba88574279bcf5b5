/* mnist_ring: IDX reader (see idx.h). */
#include "idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "tr_error.h"
#include "tr_util.h"

#define IDX_MAGIC_IMAGES 0x00000803u  /* ubyte, 3 dimensions */
#define IDX_MAGIC_LABELS 0x00000801u  /* ubyte, 1 dimension */
#define MR_CLASSES 10

/* Read exactly len bytes; returns 0, or -1 (short: truncated) / -2 (zlib error,
 * gzip stream cut short included: gz_corrupt tells them apart). */
static int read_exact(gzFile f, void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        unsigned chunk = len > (1u << 30) ? (1u << 30) : (unsigned)len;
        int got = gzread(f, p, chunk), code = Z_OK;
        if (got < 0)
            return -2;
        if (got == 0) {   /* the end, or a zlib error (gzerror) */
            gzerror(f, &code);
            return code == Z_OK || code == Z_STREAM_END ? -1 : -2;
        }
        p += got;
        len -= (size_t)got;
    }
    return 0;
}

/* Read exactly len bytes into a buffer that grows as they arrive (from 64 KiB,
 * doubling), so a header that announces more than the file holds costs no
 * more memory than the file. Returns 0 and the buffer in *out, or -1 (short:
 * truncated), -2 (zlib error), -3 (out of memory) with nothing kept. */
static int read_grown(gzFile f, size_t len, uint8_t **out)
{
    size_t cap = 0, got = 0;
    uint8_t *buf = NULL;
    int r = 0;
    while (got < len && r == 0) {
        size_t ncap = cap ? 2 * cap : (size_t)1 << 16;
        uint8_t *nb = realloc(buf, ncap < len ? ncap : len);
        if (!nb) {
            r = -3;
            break;
        }
        buf = nb;
        cap = ncap < len ? ncap : len;
        r = read_exact(f, buf + got, cap - got);
        got = cap;
    }
    if (r != 0) {
        free(buf);
        return r;
    }
    *out = buf ? buf : malloc(1);
    return *out ? 0 : -3;
}

/* After a short read (r == -1) or a zlib error (r == -2): 1 if the file is
 * corrupt (a bad CRC or length in the trailer, bad deflate data), 0 if it
 * merely ends early. */
static int gz_corrupt(gzFile f, int r)
{
    int code = Z_OK;
    if (r == -1)
        return 0;
    gzerror(f, &code);
    return code != Z_BUF_ERROR;
}

/* The zlib error's text, or why the file ended. */
static const char *gz_problem(gzFile f, int r)
{
    int code = Z_OK;
    const char *msg = gzerror(f, &code);
    if (r == -1)
        return "file ends early";
    if (code == Z_BUF_ERROR)
        return "gzip stream ends early";
    return msg && *msg ? msg : "read error";
}

/* Open path and read its header: magic, then ndims u32 dimensions. */
static int open_idx(const char *path, uint32_t want_magic, unsigned ndims, uint32_t *dims,
                    gzFile *out, char *err, size_t errlen)
{
    unsigned char hdr[16];
    gzFile f = gzopen(path, "rb");
    int r;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
        return TR_ERR_IO;
    }
    r = read_exact(f, hdr, 4 + 4 * (size_t)ndims);
    if (r != 0) {
        if (gz_corrupt(f, r))
            snprintf(err, errlen, "%s: corrupt (gzip: %s)", path, gz_problem(f, r));
        else
            snprintf(err, errlen, "%s: truncated header (%s)", path,
                     r == -1 ? "file too short for an IDX header" : gz_problem(f, r));
        gzclose(f);
        return TR_ERR_FORMAT;
    }
    if (tr_get_be32(hdr) != want_magic) {
        snprintf(err, errlen, "%s: wrong magic 0x%08x, expected 0x%08x (IDX %s file)", path,
                 (unsigned)tr_get_be32(hdr), (unsigned)want_magic,
                 want_magic == IDX_MAGIC_IMAGES ? "ubyte 3-d image" : "ubyte 1-d label");
        gzclose(f);
        return TR_ERR_FORMAT;
    }
    for (unsigned i = 0; i < ndims; i++)
        dims[i] = tr_get_be32(hdr + 4 + 4 * i);
    *out = f;
    return 0;
}

/* After the payload: the file must end here, and a gzip'd one with its
 * trailer (CRC and length) whole and right: gzread() gives 0 at the end
 * either way, gzerror() tells them apart. */
static int expect_eof(gzFile f, const char *path, char *err, size_t errlen)
{
    unsigned char extra;
    int got = gzread(f, &extra, 1), code = Z_OK;
    if (got > 0) {
        snprintf(err, errlen, "%s: trailing bytes after the data the header announces", path);
        return TR_ERR_FORMAT;
    }
    gzerror(f, &code);
    if (got < 0 || (code != Z_OK && code != Z_STREAM_END)) {
        if (gz_corrupt(f, -2))
            snprintf(err, errlen, "%s: corrupt (gzip: %s)", path, gz_problem(f, -2));
        else
            snprintf(err, errlen, "%s: truncated (%s)", path, gz_problem(f, -2));
        return TR_ERR_FORMAT;
    }
    return 0;
}

int mr_idx_load(struct mr_dataset *ds, const char *img_path, const char *lbl_path,
                char *err, size_t errlen)
{
    uint32_t idim[3], ldim[1];
    gzFile fi = NULL, fl = NULL;
    int rc, r;

    memset(ds, 0, sizeof *ds);
    snprintf(ds->img_path, sizeof ds->img_path, "%s", img_path);
    snprintf(ds->lbl_path, sizeof ds->lbl_path, "%s", lbl_path);

    rc = open_idx(img_path, IDX_MAGIC_IMAGES, 3, idim, &fi, err, errlen);
    if (rc)
        return rc;
    if (idim[1] != MR_IMG_H || idim[2] != MR_IMG_W) {
        snprintf(err, errlen, "%s: images are %ux%u, expected %ux%u", img_path,
                 (unsigned)idim[1], (unsigned)idim[2], MR_IMG_H, MR_IMG_W);
        rc = TR_ERR_FORMAT;
        goto fail;
    }
    if (idim[0] == 0 || idim[0] > 100000000u) {
        snprintf(err, errlen, "%s: implausible image count %u", img_path, (unsigned)idim[0]);
        rc = TR_ERR_FORMAT;
        goto fail;
    }
    rc = open_idx(lbl_path, IDX_MAGIC_LABELS, 1, ldim, &fl, err, errlen);
    if (rc)
        goto fail;
    if (ldim[0] != idim[0]) {
        snprintf(err, errlen, "%s: %u labels but %s has %u images (count mismatch)", lbl_path,
                 (unsigned)ldim[0], img_path, (unsigned)idim[0]);
        rc = TR_ERR_FORMAT;
        goto fail;
    }
    ds->n = idim[0];
    r = read_grown(fi, (size_t)ds->n * MR_IMG_PIXELS, &ds->images);
    if (r == -3) {
        snprintf(err, errlen, "%s: out of memory for %u images", img_path, (unsigned)ds->n);
        rc = TR_ERR_NOMEM;
        goto fail;
    }
    if (r != 0 && gz_corrupt(fi, r)) {
        snprintf(err, errlen, "%s: corrupt (gzip: %s)", img_path, gz_problem(fi, r));
        rc = TR_ERR_FORMAT;
        goto fail;
    }
    if (r != 0) {
        snprintf(err, errlen, "%s: truncated: the header announces %u images of 28x28 (%s)",
                 img_path, (unsigned)ds->n, gz_problem(fi, r));
        rc = TR_ERR_FORMAT;
        goto fail;
    }
    r = read_grown(fl, ds->n, &ds->labels);
    if (r == -3) {
        snprintf(err, errlen, "%s: out of memory for %u labels", lbl_path, (unsigned)ds->n);
        rc = TR_ERR_NOMEM;
        goto fail;
    }
    if (r != 0 && gz_corrupt(fl, r)) {
        snprintf(err, errlen, "%s: corrupt (gzip: %s)", lbl_path, gz_problem(fl, r));
        rc = TR_ERR_FORMAT;
        goto fail;
    }
    if (r != 0) {
        snprintf(err, errlen, "%s: truncated: the header announces %u labels (%s)", lbl_path,
                 (unsigned)ds->n, gz_problem(fl, r));
        rc = TR_ERR_FORMAT;
        goto fail;
    }
    if ((rc = expect_eof(fi, img_path, err, errlen)) != 0 ||
        (rc = expect_eof(fl, lbl_path, err, errlen)) != 0)
        goto fail;
    for (uint32_t i = 0; i < ds->n; i++) {
        if (ds->labels[i] >= MR_CLASSES) {
            snprintf(err, errlen, "%s: label %u at index %u is not a class 0..9", lbl_path,
                     ds->labels[i], (unsigned)i);
            rc = TR_ERR_FORMAT;
            goto fail;
        }
    }
    gzclose(fi);
    gzclose(fl);
    return 0;
fail:
    if (fi)
        gzclose(fi);
    if (fl)
        gzclose(fl);
    mr_dataset_free(ds);
    return rc;
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* First of dir/{,MNIST/raw/,FashionMNIST/raw/}name{,.gz} that exists. */
static int find_one(const char *dir, const char *name, char *out, size_t outlen)
{
    static const char *const sub[] = { "", "MNIST/raw/", "FashionMNIST/raw/" };
    static const char *const ext[] = { "", ".gz" };
    for (size_t s = 0; s < sizeof sub / sizeof sub[0]; s++) {
        for (size_t e = 0; e < 2; e++) {
            snprintf(out, outlen, "%s/%s%s%s", dir, sub[s], name, ext[e]);
            if (exists(out))
                return 0;
        }
    }
    return -1;
}

int mr_idx_find(const char *dir, const char *split, char *img_path, char *lbl_path,
                size_t pathlen, char *err, size_t errlen)
{
    char name[64];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", split);
    if (find_one(dir, name, img_path, pathlen) != 0) {
        snprintf(err, errlen,
                 "%s: no %s[.gz] here nor in %s/MNIST/raw or %s/FashionMNIST/raw "
                 "(run apps/mnist_ring/get-data.sh, or see README: bring your own MNIST)",
                 dir, name, dir, dir);
        return TR_ERR_IO;
    }
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", split);
    if (find_one(dir, name, lbl_path, pathlen) != 0) {
        snprintf(err, errlen, "%s: no %s[.gz] here nor in %s/MNIST/raw or %s/FashionMNIST/raw",
                 dir, name, dir, dir);
        return TR_ERR_IO;
    }
    return 0;
}

int mr_idx_load_dir(const char *dir, struct mr_dataset *train, struct mr_dataset *test,
                    char *err, size_t errlen)
{
    char ip[1024], lp[1024];
    int rc = mr_idx_find(dir, "train", ip, lp, sizeof ip, err, errlen);
    if (rc)
        return rc;
    rc = mr_idx_load(train, ip, lp, err, errlen);
    if (rc)
        return rc;
    rc = mr_idx_find(dir, "t10k", ip, lp, sizeof ip, err, errlen);
    if (rc == 0)
        rc = mr_idx_load(test, ip, lp, err, errlen);
    if (rc)
        mr_dataset_free(train);
    return rc;
}

void mr_dataset_free(struct mr_dataset *ds)
{
    free(ds->images);
    free(ds->labels);
    ds->images = NULL;
    ds->labels = NULL;
    ds->n = 0;
}
