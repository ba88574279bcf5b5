/* tinyring board_mps2: build-time tool (runs on the build host, links the
 * host build/libtinyring.a). Asks core's size query for the board's model
 * variants and writes the header the firmware sizes its static arenas from:
 *
 *   gen_cfg header c1 c2 batch_max segment plan momentum grads [planes [codecs [elastic]]] > board_cfg.h
 *   (plan 0 fast or 1 lean: TR_PLAN_*; momentum the SGD momentum the arena
 *   is sized for: 0 holds no momentum twin; grads full or bucket:
 *   TR_TRAIN_GRADS_*; planes batch (the default) or one: the trainer's
 *   one_plane, TR_MODEL_ONE_PLANE; codecs none (the default: the image
 *   refuses a lossy --compress) or all: the arena holds the largest of
 *   every codec of tr_codec.h, with and without --average-every and
 *   --elastic, at any world up to BOARD_MAX_WORLD; elastic: the arena
 *   holds --elastic's too (the images with BOARD_ELASTIC), fixed: not)
 *   gen_cfg trainer c1 c2 batch segment plan momentum grads [planes [codecs [elastic]]]
 *                       the same query as one line for `make cross`:
 *                       "trainer c1=16 c2=32 plan=lean batch=1
 *                       samples=60000 momentum=0.9 bytes=N grads=bucket"
 *   gen_cfg table c1,c2[,c1,c2...] b1,b2,...     RAM breakdown, markdown rows
 *
 * The trainer's arena does not grow with the training set (the sampler
 * computes its shuffle): both commands ask the query at 1, 60,000 and
 * 2^32-1 samples and fail if the answers differ. The firmware runs the
 * query again at start-up for its actual settings and refuses to train if
 * they need more than the build reserved. The arena holds only numbers at
 * TR_ARENA_ALIGN boundaries (no pointers): its size does not depend on the
 * host's pointer width. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tinyring.h"
#include "tr_codec.h"

static size_t arena_bytes(unsigned c1, unsigned c2, unsigned batch)
{
    struct tr_model_desc d;
    size_t n = 0;
    tr_model_desc_convnet(&d, c1, c2, 10);
    if (tr_model_arena_size(&d, batch, &n) < 0) {
        fprintf(stderr, "gen_cfg: size query failed for %u/%u batch %u\n", c1, c2, batch);
        exit(1);
    }
    return n;
}

static unsigned arg_u(const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || end == s) {
        fprintf(stderr, "gen_cfg: not a number: %s\n", s);
        exit(2);
    }
    return (unsigned)v;
}

static int no_samples(void *ctx, int split, const uint32_t *idx, unsigned n, uint8_t *px,
                      uint8_t *lb)
{
    (void)ctx; (void)split; (void)idx; (void)n; (void)px; (void)lb;
    return 0;
}

/* settings.h's BOARD_MAX_WORLD: the largest ring a board joins */
#define GEN_MAX_WORLD 16

struct image_cfg {
    unsigned c1, c2, batch, seg, plan, grads, one_plane, codecs, elastic;
    float momentum;
};

static int grads_of(const char *s, unsigned *g)
{
    if (!strcmp(s, "full"))
        *g = TR_TRAIN_GRADS_FULL;
    else if (!strcmp(s, "bucket"))
        *g = TR_TRAIN_GRADS_BUCKET;
    else
        return -1;
    return 0;
}

/* c1 c2 batch segment plan momentum grads [planes [codecs [elastic]]] from argv[2..11] */
static int parse(int argc, char **argv, struct image_cfg *ic)
{
    char *end;
    if (argc < 9 || argc > 12)
        return -1;
    ic->one_plane = argc >= 10 && !strcmp(argv[9], "one");
    if (argc >= 10 && !ic->one_plane && strcmp(argv[9], "batch"))
        return -1;
    ic->codecs = argc >= 11 && !strcmp(argv[10], "all");
    if (argc >= 11 && !ic->codecs && strcmp(argv[10], "none"))
        return -1;
    ic->elastic = argc == 12 && !strcmp(argv[11], "elastic");
    if (argc == 12 && !ic->elastic && strcmp(argv[11], "fixed"))
        return -1;
    ic->c1 = arg_u(argv[2]); ic->c2 = arg_u(argv[3]); ic->batch = arg_u(argv[4]);
    ic->seg = arg_u(argv[5]); ic->plan = arg_u(argv[6]);
    ic->momentum = strtof(argv[7], &end);
    if (*end || end == argv[7] || !(ic->momentum >= 0.0f && ic->momentum < 1.0f)) {
        fprintf(stderr, "gen_cfg: momentum %s is not in [0, 1)\n", argv[7]);
        exit(2);
    }
    return grads_of(argv[8], &ic->grads);
}

/* The training image's arena: core's trainer for the variant at the largest
 * batch the image accepts, in a ring (collective scratch for the segment
 * size); the size query lays it out in measure mode. The same at any
 * number of training samples, or this fails. */
static size_t query(const struct image_cfg *ic, int codec, uint32_t avg, int elastic, int world)
{
    static const uint32_t samples[3] = { 1u, 60000u, 0xffffffffu };
    struct tr_train_config c;
    struct tr_transport none;
    size_t bytes[3];
    int i;
    memset(&c, 0, sizeof c);
    memset(&none, 0, sizeof none);
    tr_model_desc_convnet(&c.model, ic->c1, ic->c2, 10);
    c.model.plan = (uint8_t)ic->plan;
    c.batch = ic->batch;
    c.load = no_samples;
    c.epochs = 1;
    c.world = world;          /* a ring: the collectives' scratch counts */
    c.tp = &none;             /* the size query never calls it */
    c.segment_bytes = ic->seg;
    c.momentum = ic->momentum;
    c.grad_mode = (int)ic->grads;
    c.one_plane = (int)ic->one_plane;
    c.algo = TR_ALGO_RING;
    c.compress = codec;
    c.average_every = avg;
    c.elastic = elastic;
    for (i = 0; i < 3; i++) {
        c.n_train = samples[i];
        if (tr_train_arena_size(&c, &bytes[i]) < 0)
            return 0;         /* a combination core refuses: the image does too */
    }
    if (bytes[0] != bytes[1] || bytes[1] != bytes[2]) {
        fprintf(stderr, "gen_cfg: the trainer's arena grows with the training set (%lu, %lu, "
                "%lu bytes at 1, 60000, 2^32-1 samples)\n", (unsigned long)bytes[0],
                (unsigned long)bytes[1], (unsigned long)bytes[2]);
        exit(1);
    }
    return bytes[0];
}

/* Without codecs: the plain ring (--average-every needs nothing more), and
 * --elastic's if the image takes it. With
 * them: the largest of every codec, with periodic averaging (the anchor) or
 * elastic (the residual's copy), the wire image at the largest world. */
static size_t trainer_bytes(const struct image_cfg *ic)
{
    size_t b = query(ic, TR_CODEC_NONE, 0, 0, 2), q;
    int k;
    if (!b) {
        fprintf(stderr, "gen_cfg: size query failed for %u/%u batch %u\n", ic->c1, ic->c2,
                ic->batch);
        exit(1);
    }
    if (ic->elastic && (q = query(ic, TR_CODEC_NONE, 0, 1, 2)) > b)
        b = q;                /* --elastic: BN copy, scratch for any world */
    for (k = 1; ic->codecs && k < TR_CODEC_COUNT; k++) {
        if ((q = query(ic, k, 0, 0, GEN_MAX_WORLD)) == 0) {
            fprintf(stderr, "gen_cfg: size query failed for %s\n", tr_codec_name(k));
            exit(1);
        }
        b = q > b ? q : b;
        q = query(ic, k, 2, 0, GEN_MAX_WORLD);   /* 0: refused with this gradient mode */
        b = q > b ? q : b;
        q = query(ic, k, 0, 1, GEN_MAX_WORLD);
        b = q > b ? q : b;
    }
    return b;
}

static int header(int argc, char **argv)
{
    struct image_cfg ic;
    size_t bytes;
    if (parse(argc, argv, &ic) < 0) {
        fprintf(stderr, "usage: gen_cfg header c1 c2 batch_max segment plan momentum "
                "full|bucket [batch|one [none|all [fixed|elastic]]]\n");
        return 2;
    }
    bytes = trainer_bytes(&ic);
    printf("/* generated by apps/board_mps2/tools/gen_cfg.c from core's size queries */\n");
    printf("#ifndef BOARD_CFG_H\n#define BOARD_CFG_H\n");
    printf("#define BOARD_C1 %uu\n#define BOARD_C2 %uu\n#define BOARD_BATCH_MAX %uu\n"
           "#define BOARD_SEGMENT %uu\n#define BOARD_PLAN %uu\n#define BOARD_GRADS %uu\n"
           "#define BOARD_MOMENTUM_ARENA %d   /* 0: no momentum twin */\n"
           "#define BOARD_ONE_PLANE %u\n"
           "#define BOARD_CODECS %u   /* 0: no room for a lossy codec's residual */\n"
           "#define BOARD_ARENA_BYTES %luu\n", ic.c1, ic.c2, ic.batch, ic.seg, ic.plan,
           ic.grads, ic.momentum != 0.0f, ic.one_plane, ic.codecs, (unsigned long)bytes);
    printf("#endif\n");
    return 0;
}

static int trainer(int argc, char **argv)
{
    struct image_cfg ic;
    if (parse(argc, argv, &ic) < 0) {
        fprintf(stderr, "usage: gen_cfg trainer c1 c2 batch segment plan momentum "
                "full|bucket [batch|one [none|all [fixed|elastic]]]\n");
        return 2;
    }
    printf("trainer c1=%u c2=%u plan=%s batch=%u samples=60000 momentum=%g bytes=%lu "
           "grads=%s%s%s\n", ic.c1, ic.c2, ic.plan == TR_PLAN_LEAN ? "lean" : "fast", ic.batch,
           (double)ic.momentum, (unsigned long)trainer_bytes(&ic),
           ic.grads == TR_TRAIN_GRADS_BUCKET ? "bucket" : "full",
           ic.one_plane ? " planes=one" : "", ic.codecs ? " codecs=all" : "");
    if (ic.codecs) {   /* what each codec adds: residual + wire image (+ anchor, + elastic copy) */
        size_t none = query(&ic, TR_CODEC_NONE, 0, 0, GEN_MAX_WORLD);
        int k;
        for (k = 1; k < TR_CODEC_COUNT; k++) {
            size_t b = query(&ic, k, 0, 0, GEN_MAX_WORLD), avg = query(&ic, k, 2, 0, GEN_MAX_WORLD);
            size_t el = query(&ic, k, 0, 1, GEN_MAX_WORLD);
            char a[48] = "refused by core";
            if (avg)
                snprintf(a, sizeof a, "+%lu", (unsigned long)(avg - none));
            printf("  --compress %s: +%lu bytes (world <= %d); with --average-every K: %s; "
                   "with --elastic: +%lu\n", tr_codec_name(k), (unsigned long)(b - none),
                   GEN_MAX_WORLD, a,
                   (unsigned long)(el - query(&ic, TR_CODEC_NONE, 0, 1, GEN_MAX_WORLD)));
        }
    }
    return 0;
}

/* One row per (variant, batch): bytes of each part of the arena, measured
 * by laying the model out for real and reading the sizes back. */
static int table(int argc, char **argv)
{
    unsigned ch[16], bs[16], nch = 0, nb = 0, i, j, l;
    char *tok, *s;
    if (argc != 4) {
        fprintf(stderr, "usage: gen_cfg table c1,c2[,c1,c2...] b1,b2,...\n");
        return 2;
    }
    for (s = argv[2]; (tok = strtok(s, ",")) && nch < 16; s = NULL)
        ch[nch++] = arg_u(tok);
    for (s = argv[3]; (tok = strtok(s, ",")) && nb < 16; s = NULL)
        bs[nb++] = arg_u(tok);
    printf("| variant (c1/c2) | batch | params | grads | momentum | BN stats | "
           "activations | kernel scratch | backward state | arena total |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (i = 0; i + 1 < nch; i += 2)
        for (j = 0; j < nb; j++) {
            struct tr_model_desc d;
            struct tr_model *m = malloc(sizeof *m);
            size_t n = arena_bytes(ch[i], ch[i + 1], bs[j]), act = 0, p, bn, scr, rest;
            void *arena = NULL;
            if (posix_memalign(&arena, TR_ARENA_ALIGN, (n + 15) & ~(size_t)15))
                arena = NULL;
            tr_model_desc_convnet(&d, ch[i], ch[i + 1], 10);
            if (!m || !arena || tr_model_init(m, &d, bs[j], arena, n) < 0) {
                fprintf(stderr, "gen_cfg: init failed\n");
                return 1;
            }
            /* one count per distinct output buffer: flatten and in-place
             * layers (ReLU after conv/BN/linear) share their input's */
            for (l = 0; l < m->n_layers; l++)
                if (l == 0 || m->layer[l].out != m->layer[l - 1].out)
                    act += (size_t)bs[j] * m->layer[l].out_c * m->layer[l].out_h *
                           m->layer[l].out_w * sizeof(float);
            p = m->n_params * sizeof(float);
            bn = m->n_buffers * sizeof(float);
            scr = m->scratch_len * sizeof(float);
            if (3 * p + bn + act + scr > m->arena_used) {
                fprintf(stderr, "gen_cfg: the parts exceed the arena: layout changed?\n");
                return 1;
            }
            rest = m->arena_used - 3 * p - bn - act - scr;
            printf("| %u/%u | %u | %lu | %lu | %lu | %lu | %lu | %lu | %lu | %lu |\n",
                   ch[i], ch[i + 1], bs[j], (unsigned long)p, (unsigned long)p,
                   (unsigned long)p, (unsigned long)bn, (unsigned long)act,
                   (unsigned long)scr, (unsigned long)rest, (unsigned long)m->arena_used);
            free(arena);
            free(m);
        }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "header"))
        return header(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "trainer"))
        return trainer(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "table"))
        return table(argc, argv);
    fprintf(stderr, "usage: gen_cfg header ... | gen_cfg trainer ... | gen_cfg table ...\n");
    return 2;
}
