/* tinyring fuzz: writes the seed inputs of test/fuzz/corpus with the
 * project's own encoders, so every harness starts from well-formed inputs
 * and their near misses. Usage: gen_corpus DIR (writes DIR/<harness>/seed-*).
 * The findings' inputs (finding-*) beside them are kept by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "fuzz_train.h"
#include "tr_codec.h"
#include "tr_comm.h"
#include "tr_elastic.h"
#include "tr_link.h"
#include "tr_posix_int.h"
#include "tr_util.h"

static const char *root;

static void put(const char *harness, const char *name, const void *p, size_t n)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", root, harness);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/seed-%s", root, harness, name);
    f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* ---- idx: mode, u16 image length, image file, label file ----------------- */
/* n images of h x w and nlabels labels; the headers announce n_said and
 * nlabels_said (0: as many as there are) */
static void idx_file(const char *name, uint8_t mode, uint32_t n, uint32_t h, uint32_t w,
                     uint32_t nlabels, uint8_t bad_label, uint32_t n_said, uint32_t nlabels_said)
{
    size_t ilen = 16 + (size_t)n * h * w, llen = 8 + nlabels, i;
    uint8_t *b = calloc(1, 3 + ilen + llen), *img = b + 3, *lbl = img + ilen;
    b[0] = mode;
    tr_put_le16(b + 1, (uint16_t)ilen);
    tr_put_be32(img, 0x803);
    tr_put_be32(img + 4, n_said ? n_said : n);
    tr_put_be32(img + 8, h);
    tr_put_be32(img + 12, w);
    for (i = 16; i < ilen; i++)
        img[i] = (uint8_t)(i * 13);
    tr_put_be32(lbl, 0x801);
    tr_put_be32(lbl + 4, nlabels_said ? nlabels_said : nlabels);
    for (i = 0; i < nlabels; i++)
        lbl[8 + i] = (uint8_t)(i % 10);
    if (bad_label && nlabels)
        lbl[8 + nlabels - 1] = bad_label;
    put("idx", name, b, 3 + ilen + llen);
    free(b);
}

static void idx_pair(const char *name, uint8_t mode, uint32_t n, uint32_t h, uint32_t w,
                     uint32_t nlabels, uint8_t bad_label)
{
    idx_file(name, mode, n, h, w, nlabels, bad_label, 0, 0);
}

static void seeds_idx(void)
{
    idx_pair("raw2", 0, 2, 28, 28, 2, 0);
    idx_pair("gz2", 3, 2, 28, 28, 2, 0);
    idx_pair("gz-images", 1, 1, 28, 28, 1, 0);
    idx_pair("label10", 0, 2, 28, 28, 2, 10);
    idx_pair("dims27", 0, 1, 27, 28, 1, 0);
    idx_pair("counts-differ", 0, 2, 28, 28, 3, 0);
    idx_pair("empty", 0, 0, 28, 28, 0, 0);
    idx_file("announces-more", 0, 2, 28, 28, 2, 0, 1000, 1000);
    idx_file("announces-more-gz", 3, 2, 28, 28, 2, 0, 1000, 1000);
}

/* ---- ckpt: mode, file (the trainer of fuzz_train.h) ---------------------- */
static void ckpt_file(const char *name, uint8_t mode, int kind, size_t cut, size_t at,
                      uint32_t value)
{
    struct tr_train *t = fz_train_new();
    size_t n = tr_train_state_size(t, kind);
    uint8_t *b = malloc(1 + n);
    b[0] = mode;
    if (tr_train_state_save(t, kind, b + 1, n) != (long)n)
        exit(1);
    if (at)
        tr_put_le32(b + 1 + at, value);     /* a field changed (mode 2 sets the CRC) */
    put("ckpt", name, b, 1 + (cut ? cut : n));
    free(b);
}

static void seeds_ckpt(void)
{
    ckpt_file("checkpoint", 0, TR_STATE_CHECKPOINT, 0, 0, 0);
    ckpt_file("model", 0, TR_STATE_MODEL, 0, 0, 0);
    ckpt_file("epoch-1-at-step-0", 2, TR_STATE_CHECKPOINT, 0, 36, 1);
    ckpt_file("step-past-epoch", 2, TR_STATE_CHECKPOINT, 0, 40, 16);
    ckpt_file("other-config", 2, TR_STATE_CHECKPOINT, 0, 16, 0xdead);
    ckpt_file("truncated", 2, TR_STATE_CHECKPOINT, 100, 0, 0);
}

/* ---- link: world, rank, token, hello ------------------------------------ */
static void link_seed(const char *name, uint16_t world, uint16_t want, uint64_t token,
                      const struct tr_link_hello *h, size_t cut)
{
    uint8_t b[12 + TR_LINK_HELLO_BYTES];
    tr_put_le16(b, world);
    tr_put_le16(b + 2, want);
    tr_put_le64(b + 4, token);
    tr_link_hello_put(b + 12, h);
    put("link", name, b, 12 + (cut ? cut : TR_LINK_HELLO_BYTES));
}

static void seeds_link(void)
{
    struct tr_link_hello h = { TR_LINK_VERSION, 0x5eedull, 3, 4 };
    link_seed("ok", 4, 3, 0x5eedull, &h, 0);
    link_seed("other-job", 4, 3, 0x5eeeull, &h, 0);
    link_seed("other-rank", 4, 2, 0x5eedull, &h, 0);
    link_seed("short", 4, 3, 0x5eedull, &h, 7);
    h.version = 2;
    link_seed("other-version", 4, 3, 0x5eedull, &h, 0);
}

/* ---- rdv: mode, registration or answer ----------------------------------- */
static void seeds_rdv(void)
{
    struct tr_posix_intro r = { TR_POSIX_VERSION, 0x5eedull, 2, 4, 0x0100007fu, 40002 };
    struct tr_posix_endpoint tab[3] = { { 0x0100007fu, 40000 }, { 0x0200007fu, 0 },
                                        { 0x0300007fu, 40002 } };
    uint8_t b[1 + TR_POSIX_ANS_BYTES + 3 * 8];
    b[0] = 0;
    tr_posix_put_reg(b + 1, &r);
    put("rdv", "registration", b, 1 + TR_POSIX_REG_BYTES);
    b[0] = 1;
    tr_posix_put_ans(b + 1, 0, 3, 0, tab, 3);
    put("rdv", "answer-table", b, sizeof b);
    tr_posix_put_ans(b + 1, -110, 4, 5, tab, 3);
    put("rdv", "answer-missing", b, sizeof b);
    tr_posix_put_ans(b + 1, -52, 4, 1, NULL, 0);
    put("rdv", "answer-refused", b, 1 + TR_POSIX_ANS_BYTES);
}

/* ---- hello and comm: a plan, chunk sizes, then edits --------------------- */
static void ring_seed_op(const char *harness, const char *name, uint8_t world, uint8_t rank,
                         uint8_t kind, uint8_t op, uint16_t count, uint8_t seg_shift,
                         const uint8_t *tail, size_t ntail)
{
    uint8_t b[64];
    b[0] = (uint8_t)(world - 2);
    b[1] = rank;
    b[2] = kind;
    b[3] = op;                /* bit 0: average; above: the codec */
    b[4] = 1;                 /* root */
    tr_put_le16(b + 5, count);
    b[7] = seg_shift;
    b[8] = 255; b[9] = 3; b[10] = 40; b[11] = 7;   /* chunks: big, small, ... */
    memcpy(b + 12, tail, ntail);
    put(harness, name, b, 12 + ntail);
}

static void ring_seed(const char *harness, const char *name, uint8_t world, uint8_t rank,
                      uint8_t kind, uint16_t count, uint8_t seg_shift, const uint8_t *tail,
                      size_t ntail)
{
    ring_seed_op(harness, name, world, rank, kind, 1, count, seg_shift, tail, ntail);
}

/* ---- codec: codec byte, count (le16), then encoded bytes ----------------- */
static void codec_seeds(void)
{
    static const uint16_t counts[] = { 1, 3, 64, 65, 200 };
    float x[200];
    uint8_t b[3 + 4 * 200];
    unsigned c, k, i;
    for (i = 0; i < 200; i++)
        x[i] = (float)((int)(i * 37 % 101) - 50) / 16.0f;
    for (c = 0; c < 4; c++)
        for (k = 0; k < 5; k++) {
            char name[64];
            size_t n = tr_codec_bytes((int)c, counts[k]);
            b[0] = (uint8_t)c;
            tr_put_le16(b + 1, counts[k]);
            tr_codec_encode((int)c, x, counts[k], b + 3, NULL);
            snprintf(name, sizeof name, "%s-%u", tr_codec_name((int)c), counts[k]);
            put("codec", name, b, 3 + n);
        }
}

static void seeds_ring(void)
{
    static const char *const kinds[] = { "ring", "chain", "reduce-bcast", "reduce", "bcast",
                                         "barrier" };
    static const uint8_t flip_magic[] = { 0, 0, 0, 0, 0x40, 0 };      /* left, flip byte 0 */
    static const uint8_t flip_verdict[] = { 0, 70, 0, 1, 0 };         /* left, flags */
    static const uint8_t right_rank[] = { 1, 48, 0, 2, 0 };           /* right, rank field */
    static const uint8_t flip_seq[] = { 9, 0, 1, 0 };                 /* header seq */
    static const uint8_t cut[] = { 100, 0, 0, 1 };                    /* peer stops */
    uint8_t k;
    ring_seed("hello", "world2", 2, 0, 0, 0, 0, (const uint8_t *)"", 1);
    ring_seed("hello", "world5", 5, 3, 0, 0, 2, (const uint8_t *)"", 1);
    ring_seed("hello", "world8-bad-magic", 8, 7, 0, 0, 0, flip_magic, sizeof flip_magic);
    ring_seed("hello", "world3-verdict", 3, 1, 0, 0, 0, flip_verdict, sizeof flip_verdict);
    ring_seed("hello", "world4-right-rank", 4, 2, 0, 0, 0, right_rank, sizeof right_rank);
    for (k = 0; k < 6; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s-w4", kinds[k]);
        ring_seed("comm", name, 4, 1, k, 300, 1, NULL, 0);
        snprintf(name, sizeof name, "%s-w3-seq", kinds[k]);
        ring_seed("comm", name, 3, 2, k, 77, 0, flip_seq, sizeof flip_seq);
    }
    ring_seed("comm", "ring-w2-cut", 2, 1, 0, 1024, 4, cut, sizeof cut);
    /* the compressed ring (kind 6): bf16, int8, int4 in the op byte */
    for (k = 0; k < 3; k++) {
        static const char *const codecs[] = { "bf16", "int8", "int4" };
        char name[64];
        snprintf(name, sizeof name, "codec-%s-w4", codecs[k]);
        ring_seed_op("comm", name, 4, 1, 6, (uint8_t)(1u | k << 1), 300, 2, NULL, 0);
        snprintf(name, sizeof name, "codec-%s-w3-flip", codecs[k]);
        ring_seed_op("comm", name, 3, 2, 6, (uint8_t)(k << 1), 200, 1, flip_seq, sizeof flip_seq);
        /* world 2: the exchange (kind 10), whole images both ways at once */
        snprintf(name, sizeof name, "codec-%s-w2", codecs[k]);
        ring_seed_op("comm", name, 2, 1, 6, (uint8_t)(1u | k << 1), 300, 2, NULL, 0);
        snprintf(name, sizeof name, "codec-%s-w2-cut", codecs[k]);
        ring_seed_op("comm", name, 2, 0, 6, (uint8_t)(k << 1), 1000, 3, cut, sizeof cut);
    }
    codec_seeds();
}

/* ---- lwip: flags, 8 pbuf sizes, 4 chain lengths, 4 read sizes, bytes ---- */
static void lwip_seed(const char *name, uint8_t flags, uint8_t piece, size_t nbytes,
                      int hello_first)
{
    uint8_t b[17 + 24 + 3000];
    size_t i, n = 17;
    b[0] = flags;
    for (i = 0; i < 8; i++)
        b[1 + i] = (uint8_t)(piece + 37 * i);
    for (i = 0; i < 4; i++) {
        b[9 + i] = (uint8_t)i;            /* 1..4 pbufs per chain */
        b[13 + i] = (uint8_t)(5 + 20 * i); /* reads of 26 .. 3601 bytes */
    }
    if (hello_first) {                     /* the hello of rank 1 of a ring of 2 */
        struct tr_link_hello h = { TR_LINK_VERSION, 0x5eed0123456789abull, 1, 2 };
        tr_link_hello_put(b + n, &h);
        n += TR_LINK_HELLO_BYTES;
    }
    for (i = 0; i < nbytes && n < sizeof b; i++)
        b[n++] = (uint8_t)(i * 29 + 1);
    put("lwip", name, b, n);
}

static void seeds_lwip(void)
{
    lwip_seed("hello-then-data", 1, 3, 2500, 0);
    lwip_seed("hello-data-fin", 3, 40, 1200, 0);
    lwip_seed("hello-in-stream", 0, 1, 300, 1);
    lwip_seed("ring3", 5, 90, 2000, 0);
    lwip_seed("stranger", 0, 9, 100, 0);
    lwip_seed("short-hello", 0, 0, 0, 0);
}

/* ---- lwip_elastic: flags, JOIN fields (rank, flags, epoch choice, u16
 * step), 8 pbuf sizes, 4 chain lengths, bytes -------------------------- */
static void lwip_el_seed(const char *name, uint8_t flags, uint8_t rank, uint8_t jflags,
                         uint8_t epoch, const uint8_t *bytes, size_t nbytes)
{
    uint8_t b[17 + 64];
    size_t i, n = 0;
    b[n++] = flags;
    b[n++] = rank;
    b[n++] = jflags;
    b[n++] = epoch;
    b[n++] = 7;                            /* step 7 */
    b[n++] = 0;
    for (i = 0; i < 8; i++)
        b[n++] = (uint8_t)(5 + 11 * i);    /* pbufs of 6 .. 83 bytes */
    for (i = 0; i < 4; i++)
        b[n++] = (uint8_t)i;
    for (i = 0; i < nbytes && n < sizeof b; i++)
        b[n++] = bytes[i];
    put("lwip_elastic", name, b, n);
}

static void seeds_lwip_elastic(void)
{
    static const uint8_t trl[] = { 'T', 'R', 'L', '1', 1, 0, 0, 0 };
    static const uint8_t tre[] = { 'T', 'R', 'E', '1', 1, 0, 1, 0 };
    lwip_el_seed("join-member", 1, 0, 0, 0, NULL, 0);         /* held */
    lwip_el_seed("join-joiner", 1, 3, 1, 2, NULL, 0);         /* rank dropped: NOT_COORD(0) */
    lwip_el_seed("join-joiner-member", 1, 2, 1, 2, NULL, 0);  /* rank a member: held */
    lwip_el_seed("join-stale", 1, 2, 0, 3, NULL, 0);          /* epoch 2^31: NOT_COORD */
    lwip_el_seed("join-fin", 3, 2, 0, 1, NULL, 0);            /* held, then closed */
    lwip_el_seed("join-then-bytes", 1, 0, 0, 0, tre, sizeof tre);
    lwip_el_seed("link-hello-prefix", 0, 0, 0, 0, trl, sizeof trl);
    lwip_el_seed("head-prefix", 0, 0, 0, 0, tre, sizeof tre);
}

/* ---- elastic: mode 0 = one membership message, 1 = a decision --------- */
static void elastic_msg(const char *name, const struct tr_el_msg *m, size_t cut)
{
    static uint8_t b[1 + TR_EL_MAX_BYTES];
    size_t n = tr_el_encode(m, b + 1, sizeof b - 1);
    b[0] = 0;
    put("elastic", name, b, 1 + n - cut);
}

static void seeds_elastic(void)
{
    static struct tr_el_msg m;
    /* a decision: 4 ranks, min 2, JOINs of ranks 0, 1, 3 (steps 5, 5, 6) */
    static const uint8_t decide[] = { 1, 4, 2, 3, 7, 0,0,5,1,0, 1,0,5,2,0, 3,0,6,3,0 };
    static const uint8_t joiner[] = { 1, 3, 3, 3, 1, 0,0,9,0,0, 2,0,9,2,0, 1,1,0,4,0 };
    memset(&m, 0, sizeof m);
    m.type = TR_EL_JOIN;
    m.token = 0x5eedull;
    m.epoch = 2;
    m.join.rank = 3;
    m.join.step = 41;
    m.join.addr = 0x0100007fu;
    m.join.port = 7003;
    elastic_msg("join", &m, 0);
    m.join.flags = TR_EL_JOINER;
    m.epoch = TR_EL_ANY_EPOCH;
    elastic_msg("join-restarted", &m, 0);
    elastic_msg("join-short", &m, 5);
    m.type = TR_EL_REPLY;
    m.answer = TR_EL_EXCLUDED;
    elastic_msg("reply", &m, 0);
    m.type = TR_EL_ABORT;
    m.abort.reason = TR_EL_BELOW_MIN;
    m.abort.joined = 1;
    m.abort.previous = 3;
    m.abort.min_ranks = 2;
    m.abort.step = 12;
    elastic_msg("abort", &m, 0);
    m.type = TR_EL_VIEW;
    tr_el_view_initial(&m.view, 5, NULL, NULL);
    m.view.epoch = 3;
    m.view.source = 2;
    elastic_msg("view", &m, 0);
    put("elastic", "decide", decide, sizeof decide);
    put("elastic", "decide-joiner", joiner, sizeof joiner);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus DIR\n");
        return 2;
    }
    root = argv[1];
    mkdir(root, 0755);
    seeds_idx();
    seeds_ckpt();
    seeds_link();
    seeds_rdv();
    seeds_ring();
    seeds_lwip();
    seeds_lwip_elastic();
    seeds_elastic();
    return 0;
}
