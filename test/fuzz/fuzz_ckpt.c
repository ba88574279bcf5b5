/* Fuzz harness: checkpoint and model files, i.e. core's training state
 * bytes (tr_train_state_check, tr_train_state_load in core/tr_train.c;
 * apps/mnist_ring/ckpt.c only moves them to and from disk).
 *
 * Input: one mode byte, then the file. Mode bit 1 sets the trailing CRC-32
 * right before parsing, so that the fuzzer reaches the checks behind it.
 * The trainer is fuzz_train.h's.
 * Invariants: bytes that check out have the length their header implies and
 * a header that encodes back from what was decoded (every field, reserved
 * ones included); a checkpoint that loads saves back to the very same
 * bytes (nothing ignored, nothing lost), at a position a run passes through
 * (steps done = epoch * steps per epoch + step); one that does not load is
 * refused with TR_ERR_FORMAT or TR_ERR_MISMATCH and leaves the trainer
 * exactly as it was.
 */
#include <zlib.h>

#include "fuzz.h"
#include "fuzz_train.h"
#include "tr_error.h"
#include "tr_util.h"

/* The header (96 bytes, or 112 in version 2) tr_train_state_save writes
 * for what info says. */
static void header_of(uint8_t h[TR_STATE_HEADER2], const struct tr_train_state_info *in)
{
    memset(h, 0, TR_STATE_HEADER2);
    memcpy(h, in->kind == TR_STATE_MODEL ? "TRINGMDL" : "TRINGCKP", 8);
    tr_put_le32(h + 8, in->version);
    tr_put_le32(h + 12, in->header_len);
    tr_put_le64(h + 16, in->config_hash);
    tr_put_le32(h + 24, in->layout_hash);
    tr_put_le32(h + 28, in->world);
    tr_put_le32(h + 32, in->batch);
    tr_put_le32(h + 36, in->epoch);
    tr_put_le32(h + 40, in->step);
    tr_put_le32(h + 44, in->sgd_started);
    tr_put_le64(h + 48, in->global_step);
    tr_put_le64(h + 56, in->seed);
    tr_put_le64(h + 64, in->n_params);
    tr_put_le64(h + 72, in->n_buffers);
    tr_put_le64(h + 80, in->n_train);
    tr_put_le32(h + 88, in->flags);
    if (in->header_len == TR_STATE_HEADER2) {
        tr_put_le32(h + 96, in->deal_first);
        tr_put_le32(h + 100, in->deal_world);
        tr_put_le32(h + 104, in->deal_step);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size };
    uint8_t mode = fz_u8(&in), h[TR_STATE_HEADER2];
    size_t len = in.n, n, i;
    uint8_t *file = malloc(len + 1), *before, *after;
    struct tr_train *t = fz_train_new();
    struct tr_train_state_info info;
    int rc;

    memcpy(file, in.p, len);
    if ((mode & 2) && len >= 4)
        tr_put_le32(file + len - 4, (uint32_t)crc32(0L, file, (uInt)(len - 4)));
    n = tr_train_state_size(t, TR_STATE_CHECKPOINT);
    before = malloc(n);
    after = malloc(n);
    FZ_ASSERT(tr_train_state_save(t, TR_STATE_CHECKPOINT, before, n) == (long)n, "save");

    rc = tr_train_state_check(file, len, &info);
    if (rc == 0) {
        FZ_ASSERT(info.problem == TR_STATE_OK && info.expect_len == len,
                  "checked out with %zu bytes, the header implies %zu", len, info.expect_len);
        header_of(h, &info);
        for (i = 0; i < info.header_len; i++)
            FZ_ASSERT(h[i] == file[i], "header byte %zu checked out as 0x%02x, encodes back as "
                      "0x%02x", i, file[i], h[i]);
    } else {
        FZ_ASSERT(rc == TR_ERR_FORMAT && info.problem != TR_STATE_OK, "check: %d problem %d",
                  rc, info.problem);
    }

    rc = tr_train_state_load(t, file, len);
    FZ_ASSERT(tr_train_state_save(t, TR_STATE_CHECKPOINT, after, n) == (long)n, "save");
    if (rc == 0) {
        FZ_ASSERT(len == n && memcmp(after, file, n) == 0,
                  "a checkpoint that loads saves back to other bytes");
        FZ_ASSERT(info.global_step == (uint64_t)info.epoch * t->steps + info.step,
                  "loaded a position outside the run: epoch %u step %u, %llu steps in all",
                  info.epoch, info.step, (unsigned long long)info.global_step);
    } else {
        FZ_ASSERT(rc == TR_ERR_FORMAT || rc == TR_ERR_MISMATCH, "load refused with %d", rc);
        FZ_ASSERT(memcmp(after, before, n) == 0, "a refused checkpoint changed the trainer");
    }
    free(before);
    free(after);
    free(file);
    return 0;
}
