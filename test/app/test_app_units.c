/* test/app: unit tests of mnist_ring's own modules: the IDX reader, the
 * checkpoint file (the sampler and the state bytes are core's: test_train). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ckpt.h"
#include "harness.h"
#include "idx.h"
#include "tr_error.h"
#include "tr_util.h"
#include "tr_train.h"

static char dir[256];

/* n images (pixel = (i + p) & 255), labels i % 10; then damage as asked */
static void write_pair(const char *tag, uint32_t n, uint32_t magic, uint32_t h, uint32_t w,
                       uint32_t nlabels, size_t cut, int gz, char *ip, char *lp)
{
    size_t ilen = 16 + (size_t)n * h * w, llen = 8 + nlabels;
    unsigned char *im = calloc(1, ilen), *lb = calloc(1, llen);
    tr_put_be32(im, magic); tr_put_be32(im + 4, n); tr_put_be32(im + 8, h); tr_put_be32(im + 12, w);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t p = 0; p < h * w; p++)
            im[16 + (size_t)i * h * w + p] = (unsigned char)(i + p);
    tr_put_be32(lb, 0x801); tr_put_be32(lb + 4, nlabels);
    for (uint32_t i = 0; i < nlabels; i++)
        lb[8 + i] = (unsigned char)(i % 10);
    sprintf(ip, "%s/%s-img%s", dir, tag, gz ? ".gz" : "");
    sprintf(lp, "%s/%s-lbl", dir, tag);
    if (gz) {
        gzFile f = gzopen(ip, "wb");
        gzwrite(f, im, (unsigned)ilen);
        gzclose(f);
        if (cut) {  /* cut the compressed stream */
            struct stat st;
            stat(ip, &st);
            if (truncate(ip, st.st_size - (off_t)cut) != 0)
                perror("truncate");
        }
    } else {
        FILE *f = fopen(ip, "wb");
        fwrite(im, 1, ilen - cut, f);
        fclose(f);
    }
    FILE *f = fopen(lp, "wb");
    fwrite(lb, 1, llen, f);
    fclose(f);
    free(im);
    free(lb);
}

static int load_expect(const char *tag, uint32_t n, uint32_t magic, uint32_t h, uint32_t w,
                       uint32_t nl, size_t cut, int gz, int want_rc, const char *want_msg)
{
    char ip[512], lp[512], err[1024] = "";
    struct mr_dataset ds;
    int rc;
    write_pair(tag, n, magic, h, w, nl, cut, gz, ip, lp);
    rc = mr_idx_load(&ds, ip, lp, err, sizeof err);
    TH_CHECK(rc == want_rc, "%s: rc %d want %d (%s)", tag, rc, want_rc, err);
    if (want_msg) {
        TH_CHECK(strstr(err, want_msg) != NULL, "%s: message '%s' lacks '%s'", tag, err, want_msg);
        TH_CHECK(strstr(err, dir) != NULL, "%s: message '%s' does not name the file", tag, err);
        TH_CHECK(ds.images == NULL && ds.labels == NULL, "%s: buffers kept after failure", tag);
    }
    if (rc == 0) {
        int ok = ds.n == n;
        for (uint32_t i = 0; ok && i < n; i++)
            ok = ds.labels[i] == i % 10 && ds.images[(size_t)i * 784 + 5] == (uint8_t)(i + 5);
        TH_CHECK(ok, "%s: loaded data differs from what was written", tag);
        mr_dataset_free(&ds);
    }
    return rc;
}

static void test_idx(void)
{
    load_expect("ok-raw", 37, 0x803, 28, 28, 37, 0, 0, 0, NULL);
    load_expect("ok-gz", 37, 0x803, 28, 28, 37, 0, 1, 0, NULL);
    load_expect("magic", 37, 0x801, 28, 28, 37, 0, 0, TR_ERR_FORMAT, "wrong magic");
    load_expect("dims", 37, 0x803, 27, 28, 37, 0, 0, TR_ERR_FORMAT, "27x28, expected 28x28");
    load_expect("count", 37, 0x803, 28, 28, 36, 0, 0, TR_ERR_FORMAT, "count mismatch");
    load_expect("trunc", 37, 0x803, 28, 28, 37, 100, 0, TR_ERR_FORMAT, "truncated");
    load_expect("trunc-gz", 37, 0x803, 28, 28, 37, 40, 1, TR_ERR_FORMAT, "truncated");
    load_expect("header", 0, 0x803, 28, 28, 0, 10, 0, TR_ERR_FORMAT, "truncated header");
    {
        char ip[512], lp[512], err[512];
        struct mr_dataset ds;
        int rc = mr_idx_load(&ds, "/nonexistent/x", "/nonexistent/y", err, sizeof err);
        TH_CHECK(rc == TR_ERR_IO && strstr(err, "/nonexistent/x"), "missing file: %d %s", rc, err);
        rc = mr_idx_find(dir, "train", ip, lp, sizeof ip, err, sizeof err);
        TH_CHECK(rc == TR_ERR_IO && strstr(err, "train-images-idx3-ubyte"), "find: %d %s", rc, err);
    }
}

/* Damaged files at random: a header byte overwritten, the image count set
 * to any 32-bit value, or the file cut anywhere. The reader must refuse
 * with TR_ERR_FORMAT and a message naming the file, or load exactly what is
 * there; never crash, over-read or allocate what the file does not hold
 * (the sanitizer rerun of this suite checks the memory side). */
static void test_idx_damage(void)
{
    char ip[512], lp[512], err[1024];
    unsigned char *good, *bad;
    size_t len;
    uint64_t x = 0x9e3779b97f4a7c15ull;   /* xorshift64: reproducible */
    int refused = 0, loaded = 0, wrong = 0;
    FILE *f;

    write_pair("dmg", 23, 0x803, 28, 28, 23, 0, 0, ip, lp);
    f = fopen(ip, "rb");
    len = 16 + (size_t)23 * 784;
    good = malloc(len);
    bad = malloc(len);
    TH_CHECK(f && fread(good, 1, len, f) == len, "read back the good image file");
    if (f)
        fclose(f);
    for (int i = 0; i < 400; i++) {
        struct mr_dataset ds;
        size_t blen = len;
        int rc;
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        memcpy(bad, good, len);
        switch (i % 3) {
        case 0: bad[x % 16] = (unsigned char)(x >> 32); break;       /* a header byte */
        case 1: tr_put_be32(bad + 4, (uint32_t)(x >> 16)); break;           /* any count */
        default: blen = (size_t)(x % len); break;                    /* cut anywhere */
        }
        f = fopen(ip, "wb");
        fwrite(bad, 1, blen, f);
        fclose(f);
        err[0] = 0;
        rc = mr_idx_load(&ds, ip, lp, err, sizeof err);
        if (rc == 0) {
            /* only a damage that leaves a valid pair may load: all 23 images */
            loaded++;
            if (ds.n != 23 || memcmp(ds.images, good + 16, (size_t)23 * 784) != 0)
                wrong++;
            mr_dataset_free(&ds);
        } else {
            refused++;
            if (rc != TR_ERR_FORMAT || strstr(err, ip) == NULL || ds.images || ds.labels)
                wrong++;
        }
    }
    TH_CHECK(wrong == 0, "damaged IDX files: %d of 400 neither refused cleanly nor loaded intact", wrong);
    TH_CHECK(refused >= 300, "damaged IDX files: only %d of 400 refused (loaded %d)", refused, loaded);
    free(good);
    free(bad);
}

/* A state to write: a narrow net's trainer, fresh from seed 5. */
static int load_none(void *ctx, int split, const uint32_t *idx, unsigned n, uint8_t *px, uint8_t *lb)
{
    (void)ctx; (void)split; (void)idx; (void)px; (void)lb; (void)n;
    return 0;
}

static void *state_of(int kind, size_t *len, struct tr_train **tp, void **arena)
{
    struct tr_train_config c;
    struct tr_train *t = calloc(1, sizeof *t);
    size_t bytes;
    void *bytes_out;
    memset(&c, 0, sizeof c);
    tr_model_desc_convnet(&c.model, 4, 8, 10);
    c.batch = 4; c.n_train = 600; c.load = load_none; c.lr = 0.01f; c.momentum = 0.9f;
    c.seed = 5; c.epochs = 1; c.world = 1;
    tr_train_arena_size(&c, &bytes);
    *arena = aligned_alloc(16, (bytes + 15) / 16 * 16);
    tr_train_init(t, &c, *arena, bytes);
    tr_train_begin(t, NULL, 0);            /* rank 0, fresh: parameters from the seed */
    *len = tr_train_state_size(t, kind);
    bytes_out = malloc(*len);
    tr_train_state_save(t, kind, bytes_out, *len);
    *tp = t;
    return bytes_out;
}

static void test_ckpt(void)
{
    struct tr_train *t;
    struct tr_train_state_info in;
    void *arena, *back = NULL;
    size_t len, blen = 0;
    unsigned char *ck = state_of(TR_STATE_CHECKPOINT, &len, &t, &arena);
    char path[512], err[1024];
    int rc;
    FILE *f;

    sprintf(path, "%s/ck", dir);
    rc = mr_ckpt_write(path, ck, len, err, sizeof err);
    TH_CHECK(rc == 0, "write: %s", err);
    rc = mr_ckpt_read(path, TR_STATE_CHECKPOINT, &back, &blen, &in, err, sizeof err);
    TH_CHECK(rc == 0 && blen == len && !memcmp(back, ck, len), "read back: %d %s", rc, err);
    TH_CHECK(in.n_params == t->model.n_params && in.seed == 5 && in.world == 1 && in.batch == 4,
             "decoded header");
    free(back);
    {   /* the documented layout: magic, version, sizes at their offsets */
        unsigned char h[96];
        struct stat st;
        f = fopen(path, "rb");
        TH_CHECK(f && fread(h, 1, 96, f) == 96, "header read");
        fclose(f);
        stat(path, &st);
        TH_CHECK(!memcmp(h, "TRINGCKP", 8) && h[8] == 3 && h[12] == 96 &&
                 h[64] == (t->model.n_params & 255) && h[65] == (t->model.n_params >> 8 & 255) &&
                 h[72] == t->model.n_buffers && h[88] == 1,
                 "header bytes do not follow the documented layout");
        TH_CHECK((size_t)st.st_size == 96 + 4 * (2 * t->model.n_params + t->model.n_buffers) + 4,
                 "file size %ld", (long)st.st_size);
        /* a flipped bit anywhere is caught by the CRC */
        f = fopen(path, "r+b");
        fseek(f, 96 + 4 * 500, SEEK_SET);
        fputc(0x5a, f);
        fclose(f);
        rc = mr_ckpt_read(path, TR_STATE_CHECKPOINT, &back, &blen, &in, err, sizeof err);
        TH_CHECK(rc == TR_ERR_FORMAT && strstr(err, "CRC") && strstr(err, path) && !back,
                 "corruption not caught: %d %s", rc, err);
        if (truncate(path, st.st_size - 9) != 0)
            perror("truncate");
        rc = mr_ckpt_read(path, TR_STATE_CHECKPOINT, &back, &blen, &in, err, sizeof err);
        TH_CHECK(rc == TR_ERR_FORMAT && strstr(err, "truncated"), "truncation not caught: %d %s", rc, err);
        if (truncate(path, 40) != 0)
            perror("truncate");
        rc = mr_ckpt_read(path, TR_STATE_CHECKPOINT, &back, &blen, &in, err, sizeof err);
        TH_CHECK(rc == TR_ERR_FORMAT && strstr(err, "shorter than a header"), "cut header: %d %s", rc, err);
    }
    /* another version; a checkpoint read as a model and the other way round */
    ck[8] = 7;
    mr_ckpt_write(path, ck, len, err, sizeof err);
    rc = mr_ckpt_read(path, TR_STATE_CHECKPOINT, &back, &blen, &in, err, sizeof err);
    TH_CHECK(rc == TR_ERR_FORMAT && strstr(err, "unsupported version 7 (this program reads 3 and 4)"),
             "version: %d %s", rc, err);
    ck[8] = 3;
    mr_ckpt_write(path, ck, len, err, sizeof err);
    rc = mr_ckpt_read(path, TR_STATE_MODEL, &back, &blen, &in, err, sizeof err);
    TH_CHECK(rc == TR_ERR_FORMAT && strstr(err, "not a tinyring model (wrong magic)"),
             "checkpoint read as a model: %d %s", rc, err);
    {
        size_t mlen;
        struct tr_train *t2;
        void *arena2;
        unsigned char *mdl = state_of(TR_STATE_MODEL, &mlen, &t2, &arena2);
        mr_ckpt_write(path, mdl, mlen, err, sizeof err);
        rc = mr_ckpt_read(path, TR_STATE_CHECKPOINT, &back, &blen, &in, err, sizeof err);
        TH_CHECK(rc == TR_ERR_FORMAT && strstr(err, "not a tinyring checkpoint (wrong magic)"),
                 "model read as a checkpoint: %d %s", rc, err);
        rc = mr_ckpt_read(path, TR_STATE_MODEL, &back, &blen, &in, err, sizeof err);
        TH_CHECK(rc == 0 && blen == mlen && in.kind == TR_STATE_MODEL && in.flags == 0,
                 "model read back: %d %s", rc, err);
        free(back);
        free(mdl);
        free(arena2);
        free(t2);
    }
    /* unwritable: a directory that does not exist */
    rc = mr_ckpt_write("/nonexistent-dir/ck", ck, len, err, sizeof err);
    TH_CHECK(rc == TR_ERR_IO && strstr(err, "/nonexistent-dir/ck"), "unwritable: %d %s", rc, err);
    rc = mr_ckpt_read("/nonexistent-dir/ck", TR_STATE_CHECKPOINT, &back, &blen, &in, err, sizeof err);
    TH_CHECK(rc == TR_ERR_IO && strstr(err, "cannot open"), "missing file: %d %s", rc, err);
    {   /* a failing rename (target is a directory) keeps no temp file behind */
        char d2[600], tmp[700];
        sprintf(d2, "%s/isdir", dir);
        mkdir(d2, 0755);
        rc = mr_ckpt_write(d2, ck, len, err, sizeof err);
        TH_CHECK(rc == TR_ERR_IO && strstr(err, "rename"), "rename over a dir: %d %s", rc, err);
        sprintf(tmp, "%s.tmp.%ld", d2, (long)getpid());
        TH_CHECK(access(tmp, F_OK) != 0, "temporary file left behind");
    }
    free(ck);
    free(arena);
    free(t);
}

int main(void)
{
    char cmd[300];
    snprintf(dir, sizeof dir, "/tmp/tr_app_units.%ld", (long)getpid());
    mkdir(dir, 0755);
    test_idx();
    test_idx_damage();
    test_ckpt();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return th_report("app-units");
}
