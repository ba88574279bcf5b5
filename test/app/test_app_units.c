/* test/app: unit tests of mnist_ring's own modules: the IDX reader, the
 * distributed sampler and the checkpoint file. */
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
#include "sampler.h"
#include "tr_error.h"
#include "tr_util.h"

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

static void test_sampler(void)
{
    static const uint32_t ns[] = { 1, 7, 600, 601, 1000 };
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        for (uint32_t world = 1; world <= 5; world++) {
            uint32_t n = ns[t], *seen = calloc(n, sizeof *seen), shard0 = 0, steps0 = 0;
            int ok = 1, same = 1;
            for (uint32_t r = 0; r < world; r++) {
                struct mr_sampler s, s2;
                TH_CHECK(mr_sampler_init(&s, n, world, r, 100, 42) == 0, "init");
                mr_sampler_init(&s2, n, world, r, 100, 42);
                mr_sampler_set_epoch(&s, 3);
                mr_sampler_set_epoch(&s2, 3);
                if (r == 0) {
                    shard0 = s.shard;
                    steps0 = s.steps;
                }
                ok &= s.shard == shard0 && s.steps == steps0 && s.shard * world >= n &&
                      s.shard * world < n + world;
                for (uint32_t k = 0; k < s.shard; k++) {
                    seen[s.idx[k]]++;
                    same &= s.idx[k] == s2.idx[k];
                }
                uint32_t total = 0;
                for (uint32_t k = 0; k < s.steps; k++)
                    total += mr_sampler_count(&s, k);
                ok &= total == s.shard;
                mr_sampler_free(&s);
                mr_sampler_free(&s2);
            }
            /* every sample at least once; repeats only from padding */
            uint32_t extra = 0;
            for (uint32_t i = 0; i < n; i++) {
                ok &= seen[i] >= 1;
                extra += seen[i] - 1;
            }
            TH_CHECK(ok && extra == shard0 * world - n, "n %u world %u: shards not an equal, "
                     "covering partition (extra %u)", n, world, extra);
            TH_CHECK(same, "n %u world %u: same seed and epoch gave different shards", n, world);
            free(seen);
        }
    }
    {   /* epochs differ, seeds differ; count() at the end */
        struct mr_sampler a, b;
        int diff_epoch = 0, diff_seed = 0;
        mr_sampler_init(&a, 1000, 2, 0, 100, 1);
        mr_sampler_init(&b, 1000, 2, 0, 100, 2);
        mr_sampler_set_epoch(&a, 0);
        mr_sampler_set_epoch(&b, 0);
        for (uint32_t k = 0; k < a.shard; k++)
            diff_seed |= a.idx[k] != b.idx[k];
        memcpy(b.idx, a.idx, a.shard * sizeof *a.idx);
        mr_sampler_set_epoch(&a, 1);
        for (uint32_t k = 0; k < a.shard; k++)
            diff_epoch |= a.idx[k] != b.idx[k];
        TH_CHECK(diff_seed && diff_epoch, "shuffle ignores seed (%d) or epoch (%d)", diff_seed, diff_epoch);
        mr_sampler_free(&a);
        mr_sampler_free(&b);
        mr_sampler_init(&a, 250, 1, 0, 100, 1);
        TH_CHECK(a.steps == 3 && mr_sampler_count(&a, 2) == 50 && mr_sampler_count(&a, 3) == 0,
                 "short last batch: steps %u count %u", a.steps, mr_sampler_count(&a, 2));
        mr_sampler_free(&a);
        TH_CHECK(mr_sampler_init(&a, 10, 2, 2, 100, 1) == TR_ERR_INVAL, "rank >= world accepted");
    }
}

static void fill(struct mr_ckpt *c, float *p, float *m, float *b, size_t np, size_t nb)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < np; i++) {
        p[i] = (float)i * 0.37f - 3.0f;
        m[i] = -(float)i / 7.0f;
    }
    for (size_t i = 0; i < nb; i++)
        b[i] = 1.0f + (float)i;
    c->config_hash = 0x1122334455667788ull;
    c->layout_hash = 0xabcdef01u;
    c->world = 4; c->batch = 100; c->epoch = 2; c->step = 17; c->sgd_started = 1;
    c->global_step = 317; c->seed = 99; c->n_params = np; c->n_buffers = nb; c->n_train = 600;
    c->flags = MR_CKPT_HAS_MOMENTUM;
    c->params = p; c->momentum = m; c->buffers = b;
}

static void test_ckpt(void)
{
    enum { NP = 1001, NB = 96 };
    static float p[NP], m[NP], b[NB], p2[NP], m2[NP], b2[NB];
    struct mr_ckpt c, r;
    char path[512], err[1024];
    int rc;
    FILE *f;

    sprintf(path, "%s/ck", dir);
    fill(&c, p, m, b, NP, NB);
    rc = mr_ckpt_write(path, &c, err, sizeof err);
    TH_CHECK(rc == 0, "write: %s", err);
    memset(&r, 0, sizeof r);
    r.n_params = NP; r.n_buffers = NB; r.params = p2; r.momentum = m2; r.buffers = b2;
    rc = mr_ckpt_read(path, &r, err, sizeof err);
    TH_CHECK(rc == 0, "read: %s", err);
    TH_CHECK(!memcmp(p, p2, sizeof p) && !memcmp(m, m2, sizeof m) && !memcmp(b, b2, sizeof b),
             "round trip changed the floats");
    TH_CHECK(r.config_hash == c.config_hash && r.epoch == 2 && r.step == 17 && r.sgd_started == 1 &&
             r.global_step == 317 && r.seed == 99 && r.world == 4 && r.layout_hash == 0xabcdef01u,
             "round trip changed the header");
    {   /* the documented layout: magic, version, sizes at their offsets */
        unsigned char h[96];
        struct stat st;
        f = fopen(path, "rb");
        TH_CHECK(f && fread(h, 1, 96, f) == 96, "header read");
        fclose(f);
        stat(path, &st);
        TH_CHECK(!memcmp(h, "TRINGCKP", 8) && h[8] == 1 && h[12] == 96 && h[64] == (NP & 255) &&
                 h[65] == (NP >> 8) && h[72] == NB && h[36] == 2 && h[40] == 17,
                 "header bytes do not follow the documented layout");
        TH_CHECK(st.st_size == 96 + 4 * (2 * NP + NB) + 4, "file size %ld", (long)st.st_size);
        /* a flipped bit anywhere is caught by the CRC */
        f = fopen(path, "r+b");
        fseek(f, 96 + 4 * 500, SEEK_SET);
        fputc(0x5a, f);
        fclose(f);
        rc = mr_ckpt_read(path, &r, err, sizeof err);
        TH_CHECK(rc == TR_ERR_FORMAT && strstr(err, "CRC"), "corruption not caught: %d %s", rc, err);
        if (truncate(path, st.st_size - 9) != 0)
            perror("truncate");
        rc = mr_ckpt_read(path, &r, err, sizeof err);
        TH_CHECK(rc == TR_ERR_FORMAT && strstr(err, "truncated"), "truncation not caught: %d %s", rc, err);
    }
    /* another model size */
    mr_ckpt_write(path, &c, err, sizeof err);
    r.n_params = NP - 1;
    rc = mr_ckpt_read(path, &r, err, sizeof err);
    TH_CHECK(rc == TR_ERR_MISMATCH, "size mismatch not caught: %d %s", rc, err);
    r.n_params = NP;
    r.is_model = 1;
    rc = mr_ckpt_read(path, &r, err, sizeof err);
    TH_CHECK(rc == TR_ERR_FORMAT && strstr(err, "magic"), "checkpoint read as a model: %d %s", rc, err);
    /* unwritable: a directory that does not exist; the old file stays */
    rc = mr_ckpt_write("/nonexistent-dir/ck", &c, err, sizeof err);
    TH_CHECK(rc == TR_ERR_IO && strstr(err, "/nonexistent-dir/ck"), "unwritable: %d %s", rc, err);
    sprintf(path, "%s/ck", dir);
    c.epoch = 5;
    {   /* a failing rename (target is a directory) keeps no temp file behind */
        char d2[600];
        sprintf(d2, "%s/isdir", dir);
        mkdir(d2, 0755);
        rc = mr_ckpt_write(d2, &c, err, sizeof err);
        TH_CHECK(rc == TR_ERR_IO && strstr(err, "rename"), "rename over a dir: %d %s", rc, err);
        char tmp[700];
        sprintf(tmp, "%s.tmp.%ld", d2, (long)getpid());
        TH_CHECK(access(tmp, F_OK) != 0, "temporary file left behind");
    }
}

int main(void)
{
    char cmd[300];
    snprintf(dir, sizeof dir, "/tmp/tr_app_units.%ld", (long)getpid());
    mkdir(dir, 0755);
    test_idx();
    test_idx_damage();
    test_sampler();
    test_ckpt();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return th_report("app-units");
}
