/* mnist_ring: checkpoint and model files (see ckpt.h). */
#include "ckpt.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tr_error.h"
#include "tr_util.h"

static const char MAGIC_CKPT[8] = { 'T', 'R', 'I', 'N', 'G', 'C', 'K', 'P' };
static const char MAGIC_MODEL[8] = { 'T', 'R', 'I', 'N', 'G', 'M', 'D', 'L' };

static unsigned char *put_floats(unsigned char *p, const float *f, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++, p += 4) {
        uint32_t u;
        memcpy(&u, &f[i], 4);
        tr_put_le32(p, u);
    }
    return p;
}
static const unsigned char *get_floats(const unsigned char *p, float *f, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++, p += 4) {
        uint32_t u = tr_get_le32(p);
        memcpy(&f[i], &u, 4);
    }
    return p;
}

static size_t file_bytes(uint64_t n_params, uint64_t n_buffers, int momentum)
{
    return MR_CKPT_HEADER + 4 * (size_t)(n_params * (momentum ? 2 : 1) + n_buffers) + 4;
}

static int io_fail(const char *what, const char *path, int e, char *err, size_t errlen)
{
    int nospc = (e == ENOSPC || e == EDQUOT || e == EFBIG);
    snprintf(err, errlen, "%s: %s: %s%s", path, what, strerror(e),
             nospc ? " (previous file kept)" : "");
    return nospc ? TR_ERR_NOSPC : TR_ERR_IO;
}

int mr_ckpt_write(const char *path, const struct mr_ckpt *c, char *err, size_t errlen)
{
    int mom = (c->flags & MR_CKPT_HAS_MOMENTUM) != 0;
    size_t len = file_bytes(c->n_params, c->n_buffers, mom);
    unsigned char *buf = malloc(len), *p;
    char tmp[4096], dir[4096];
    int fd, rc = 0, e;
    size_t off = 0;

    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return TR_ERR_NOMEM;
    }
    memset(buf, 0, MR_CKPT_HEADER);
    memcpy(buf, c->is_model ? MAGIC_MODEL : MAGIC_CKPT, 8);
    tr_put_le32(buf + 8, MR_CKPT_VERSION);
    tr_put_le32(buf + 12, MR_CKPT_HEADER);
    tr_put_le64(buf + 16, c->config_hash);
    tr_put_le32(buf + 24, c->layout_hash);
    tr_put_le32(buf + 28, c->world);
    tr_put_le32(buf + 32, c->batch);
    tr_put_le32(buf + 36, c->epoch);
    tr_put_le32(buf + 40, c->step);
    tr_put_le32(buf + 44, c->sgd_started);
    tr_put_le64(buf + 48, c->global_step);
    tr_put_le64(buf + 56, c->seed);
    tr_put_le64(buf + 64, c->n_params);
    tr_put_le64(buf + 72, c->n_buffers);
    tr_put_le64(buf + 80, c->n_train);
    tr_put_le32(buf + 88, c->flags);
    p = put_floats(buf + MR_CKPT_HEADER, c->params, c->n_params);
    if (mom)
        p = put_floats(p, c->momentum, c->n_params);
    p = put_floats(p, c->buffers, c->n_buffers);
    tr_put_le32(p, (uint32_t)crc32(0L, buf, (uInt)(len - 4)));

    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        rc = io_fail("cannot create temporary file", path, errno, err, errlen);
        free(buf);
        return rc;
    }
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = io_fail("write failed", path, w < 0 ? errno : ENOSPC, err, errlen);
            goto fail;
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0) {
        rc = io_fail("fsync failed", path, errno, err, errlen);
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = io_fail("close failed", path, errno, err, errlen);
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        rc = io_fail("rename failed", path, errno, err, errlen);
        goto fail;
    }
    /* make the rename itself durable */
    snprintf(dir, sizeof dir, "%s", path);
    fd = open(dirname(dir), O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(buf);
    return 0;
fail:
    e = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    free(buf);
    errno = e;
    return rc;
}

int mr_ckpt_read(const char *path, struct mr_ckpt *c, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    const unsigned char *p;
    long len;
    int rc = TR_ERR_FORMAT, mom;
    uint64_t np, nb;

    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return TR_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(err, errlen, "%s: cannot size the file", path);
        fclose(f);
        return TR_ERR_IO;
    }
    if ((size_t)len < MR_CKPT_HEADER + 4) {
        snprintf(err, errlen, "%s: truncated (%ld bytes, shorter than a header)", path, len);
        fclose(f);
        return TR_ERR_FORMAT;
    }
    buf = malloc((size_t)len);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        snprintf(err, errlen, "%s: read failed", path);
        fclose(f);
        free(buf);
        return TR_ERR_IO;
    }
    fclose(f);
    if (memcmp(buf, c->is_model ? MAGIC_MODEL : MAGIC_CKPT, 8) != 0) {
        snprintf(err, errlen, "%s: not a tinyring %s (wrong magic)", path,
                 c->is_model ? "model" : "checkpoint");
        goto out;
    }
    if (tr_get_le32(buf + 8) != MR_CKPT_VERSION || tr_get_le32(buf + 12) != MR_CKPT_HEADER) {
        snprintf(err, errlen, "%s: unsupported version %u (this program reads %u)", path,
                 (unsigned)tr_get_le32(buf + 8), MR_CKPT_VERSION);
        goto out;
    }
    np = tr_get_le64(buf + 64);
    nb = tr_get_le64(buf + 72);
    mom = (tr_get_le32(buf + 88) & MR_CKPT_HAS_MOMENTUM) != 0;
    if (np > (1ull << 32) || nb > (1ull << 32) || (size_t)len != file_bytes(np, nb, mom)) {
        snprintf(err, errlen, "%s: truncated or padded: %ld bytes, header says %zu", path,
                 len, np > (1ull << 32) || nb > (1ull << 32) ? 0 : file_bytes(np, nb, mom));
        goto out;
    }
    if (tr_get_le32(buf + len - 4) != (uint32_t)crc32(0L, buf, (uInt)(len - 4))) {
        snprintf(err, errlen, "%s: CRC mismatch (corrupt file)", path);
        goto out;
    }
    if (np != c->n_params || nb != c->n_buffers || (!c->is_model && !mom)) {
        snprintf(err, errlen, "%s: holds %llu params and %llu buffers, this model has %llu and %llu",
                 path, (unsigned long long)np, (unsigned long long)nb,
                 (unsigned long long)c->n_params, (unsigned long long)c->n_buffers);
        rc = TR_ERR_MISMATCH;
        goto out;
    }
    c->config_hash = tr_get_le64(buf + 16);
    c->layout_hash = tr_get_le32(buf + 24);
    c->world = tr_get_le32(buf + 28);
    c->batch = tr_get_le32(buf + 32);
    c->epoch = tr_get_le32(buf + 36);
    c->step = tr_get_le32(buf + 40);
    c->sgd_started = tr_get_le32(buf + 44);
    c->global_step = tr_get_le64(buf + 48);
    c->seed = tr_get_le64(buf + 56);
    c->n_train = tr_get_le64(buf + 80);
    c->flags = tr_get_le32(buf + 88);
    p = get_floats(buf + MR_CKPT_HEADER, c->params, np);
    if (mom) {
        if (c->momentum)
            get_floats(p, c->momentum, np);
        p += 4 * np;
    }
    get_floats(p, c->buffers, nb);
    rc = 0;
out:
    free(buf);
    return rc;
}
