/* mnist_ring: checkpoint and model files (see ckpt.h). */
#include "ckpt.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tr_error.h"

static int io_fail(const char *what, const char *path, int e, char *err, size_t errlen)
{
    int nospc = (e == ENOSPC || e == EDQUOT || e == EFBIG);
    snprintf(err, errlen, "%s: %s: %s%s", path, what, strerror(e),
             nospc ? " (previous file kept)" : "");
    return nospc ? TR_ERR_NOSPC : TR_ERR_IO;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int mr_ckpt_write(const char *path, const void *bytes, size_t len, char *err, size_t errlen)
{
    char tmp[4096], dir[4096];
    int fd, rc, e;

    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return io_fail("cannot create temporary file", path, errno, err, errlen);
    if (write_all(fd, bytes, len) != 0) {
        rc = io_fail("write failed", path, errno, err, errlen);
        goto fail;
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
    return 0;
fail:
    e = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = e;
    return rc;
}

/* The whole file into a malloc'd buffer. */
static int slurp(const char *path, unsigned char **buf, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    long n;
    *buf = NULL;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return TR_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(err, errlen, "%s: cannot size the file", path);
        fclose(f);
        return TR_ERR_IO;
    }
    *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!*buf || fread(*buf, 1, (size_t)n, f) != (size_t)n) {
        snprintf(err, errlen, "%s: read failed", path);
        fclose(f);
        free(*buf);
        *buf = NULL;
        return TR_ERR_IO;
    }
    fclose(f);
    *len = (size_t)n;
    return 0;
}

int mr_ckpt_read(const char *path, int kind, void **bytes, size_t *len,
                 struct tr_train_state_info *info, char *err, size_t errlen)
{
    const char *name = kind == TR_STATE_MODEL ? "model" : "checkpoint";
    unsigned char *buf;
    int rc = slurp(path, &buf, len, err, errlen);

    *bytes = NULL;
    if (rc < 0)
        return rc;
    rc = tr_train_state_check(buf, *len, info);
    if (rc == 0 && info->kind != kind) {
        info->problem = TR_STATE_MAGIC;
        rc = TR_ERR_FORMAT;
    }
    switch (rc < 0 ? info->problem : TR_STATE_OK) {
    case TR_STATE_OK:
        *bytes = buf;
        return 0;
    case TR_STATE_SHORT:
        snprintf(err, errlen, "%s: truncated (%zu bytes, shorter than a header)", path, *len);
        break;
    case TR_STATE_MAGIC:
        snprintf(err, errlen, "%s: not a tinyring %s (wrong magic)", path, name);
        break;
    case TR_STATE_VERSION_DIFFERS:
        snprintf(err, errlen, "%s: unsupported version %u (this program reads %u and %u)", path,
                 (unsigned)info->version, TR_STATE_VERSION, TR_STATE_VERSION2);
        break;
    case TR_STATE_OLD_SAMPLER:
        snprintf(err, errlen, "%s: checkpoint version %u was written by a tinyring whose sampler "
                 "shuffled with Fisher-Yates; this one deals another order (version %u and %u "
                 "checkpoints), so that run cannot go on bit for bit: finish it with the build "
                 "that wrote it, or start again without --resume", path, (unsigned)info->version,
                 TR_STATE_VERSION, TR_STATE_VERSION2);
        break;
    case TR_STATE_SIZE:
        snprintf(err, errlen, "%s: truncated or padded: %zu bytes, header says %zu", path,
                 *len, info->expect_len);
        break;
    default:
        snprintf(err, errlen, "%s: CRC mismatch (corrupt file)", path);
        break;
    }
    free(buf);
    return TR_ERR_FORMAT;
}
