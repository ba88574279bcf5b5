/* mnist_ring: checkpoint and model files.
 *
 * The bytes are core's training state (tr_train_state_save; the format is
 * in core/include/tr_train.h and the README). This file only moves them: writes are
 * atomic (a temporary file beside the target, write, fsync, rename over the
 * target, fsync of the directory; on any failure the temporary file is
 * removed and the previous file is left as it was), and reads check the
 * bytes and say what is wrong with a file.
 */
#ifndef MR_CKPT_H
#define MR_CKPT_H

#include <stddef.h>

#include "tr_train.h"

/* Write len bytes to path atomically. Returns 0, TR_ERR_NOSPC (disk full,
 * quota, file too large) or TR_ERR_IO, with a message in err. */
int mr_ckpt_write(const char *path, const void *bytes, size_t len, char *err, size_t errlen);

/* Read path whole into *bytes (malloc'd; the caller frees it) and check it
 * as a file of kind (TR_STATE_CHECKPOINT or TR_STATE_MODEL): magic,
 * version, length, CRC. Returns 0 with *info decoded, TR_ERR_IO (cannot
 * open or read) or TR_ERR_FORMAT, with a message naming the file in err. */
int mr_ckpt_read(const char *path, int kind, void **bytes, size_t *len,
                 struct tr_train_state_info *info, char *err, size_t errlen);

#endif /* MR_CKPT_H */
