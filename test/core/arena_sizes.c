/* arena_sizes: the arena bytes tr_model_arena_size reports for the seed
 * ConvNet (or a narrower one) on both execution plans, for the docs, `make
 * cross` and the cross images. Nothing here is computed by hand: every
 * number is the size query's, or read back from a model laid out for real.
 *   arena_sizes                    markdown tables: nets x plans at batch
 *                                  1/10/100 (docs/DESIGN.md), then the parts
 *                                  of each arena (docs/FIRMWARE.md's RAM table)
 *   arena_sizes lines              "arena c1=16 c2=32 plan=lean batch=1 bytes=N"
 *                                  for the seed and narrow nets, batch 1/2/4/8
 *   arena_sizes ram                the RAM table's rows alone
 *   arena_sizes trainer            "trainer c1=16 c2=32 plan=lean batch=1
 *                                  samples=60000 momentum=0.9 grads=bucket
 *                                  bytes=N": the whole trainer's arena
 *                                  (tr_train_arena_size, one rank, the
 *                                  sampler of 60,000 samples) with the full
 *                                  gradient and in the in-place bucket mode,
 *                                  momentum 0.9 and 0 (also at the end of
 *                                  the default output)
 *   arena_sizes -h C1 C2 BATCH [PLAN]  a C header for an image's static arena */
#include "tinyring.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *plan_name[2] = {"fast", "lean"};

static size_t bytes_of(unsigned c1, unsigned c2, unsigned batch, unsigned plan)
{
    struct tr_model_desc d;
    size_t b = 0;
    tr_model_desc_convnet(&d, c1, c2, 10);
    d.plan = (uint8_t)plan;
    if (tr_model_arena_size(&d, batch, &b) != 0) {
        fprintf(stderr, "arena_sizes: bad model %u/%u batch %u\n", c1, c2, batch);
        exit(1);
    }
    return b;
}

static void lines(void)
{
    static const unsigned nets[2][2] = {{16, 32}, {4, 8}}, batches[4] = {1, 2, 4, 8};
    unsigned i, p, b;
    for (i = 0; i < 2; i++)
        for (p = 0; p < 2; p++)
            for (b = 0; b < 4; b++)
                printf("arena c1=%u c2=%u plan=%s batch=%u bytes=%zu\n", nets[i][0], nets[i][1],
                       plan_name[p], batches[b], bytes_of(nets[i][0], nets[i][1], batches[b], p));
}

/* thousands separators, as the docs write bytes */
static const char *grouped(size_t v)
{
    static char buf[12][32];
    static unsigned k;
    char tmp[32], *o = buf[k++ % 12];
    int n = snprintf(tmp, sizeof tmp, "%zu", v), i, j = 0;
    for (i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            o[j++] = ',';
        o[j++] = tmp[i];
    }
    o[j] = 0;
    return o;
}

/* One row per (net, plan, batch): a model laid out for real, its parts read
 * back: activations are the outputs it stores, scratch the kernels', the
 * rest (BN statistics, dlogits, input-gradient buffers, alignment) is the
 * backward state. RING_BYTES: the ring image's network and board RAM. */
#define RING_BYTES 91904u
static void ram(void)
{
    static const unsigned nets[2][2] = {{16, 32}, {4, 8}}, batches[4] = {1, 2, 4, 8};
    unsigned i, p, b, l;
    for (i = 0; i < 2; i++)
        for (p = 0; p < 2; p++)
            for (b = 0; b < 4; b++) {
                struct tr_model_desc d;
                struct tr_model m;
                size_t n = bytes_of(nets[i][0], nets[i][1], batches[b], p), act = 0, par, scr;
                void *arena = NULL;
                tr_model_desc_convnet(&d, nets[i][0], nets[i][1], 10);
                d.plan = (uint8_t)p;
                if (posix_memalign(&arena, TR_ARENA_ALIGN, n) != 0 ||
                    tr_model_init(&m, &d, batches[b], arena, n) != 0) {
                    fprintf(stderr, "arena_sizes: init failed\n");
                    exit(1);
                }
                for (l = 0; l < m.n_layers; l++)
                    if (m.layer[l].out && (l == 0 || m.layer[l].out != m.layer[l - 1].out))
                        act += (size_t)batches[b] * m.layer[l].out_c * m.layer[l].out_h *
                               m.layer[l].out_w * sizeof(float);
                par = m.n_params * sizeof(float);
                scr = m.scratch_len * sizeof(float);
                printf("| %u/%u%s | %s | %u | %s | %s | %s | %s | %s | %s | **%s** | %s |\n",
                       nets[i][0], nets[i][1], i == 0 ? " (seed)" : " (narrow)", plan_name[p],
                       batches[b], grouped(par), grouped(par), grouped(par), grouped(act),
                       grouped(scr), grouped(m.arena_used - 3 * par - act - scr),
                       grouped(m.arena_used), grouped(m.arena_used + RING_BYTES));
                free(arena);
            }
}

static int no_load(void *ctx, int split, const uint32_t *idx, unsigned n, uint8_t *px,
                   uint8_t *lb)
{
    (void)ctx; (void)split; (void)idx; (void)n; (void)px; (void)lb;
    return -1;
}

static void trainer(void)
{
    static const float mus[2] = {0.9f, 0.0f};
    static const char *mode_name[2] = {"full", "bucket"};
    unsigned p, mi, g;
    for (p = 0; p < 2; p++)
        for (mi = 0; mi < 2; mi++)
            for (g = 0; g < 2; g++) {
                struct tr_train_config c;
                size_t b = 0;
                memset(&c, 0, sizeof c);
                tr_model_desc_convnet(&c.model, 16, 32, 10);
                c.model.plan = (uint8_t)p;
                c.batch = 1;
                c.n_train = 60000;
                c.load = no_load;
                c.lr = 0.001f;
                c.momentum = mus[mi];
                c.epochs = 1;
                c.world = 1;
                c.grad_mode = (int)g;
                if (tr_train_arena_size(&c, &b) != 0) {
                    fprintf(stderr, "arena_sizes: bad trainer configuration\n");
                    exit(1);
                }
                printf("trainer c1=16 c2=32 plan=%s batch=1 samples=60000 momentum=%g grads=%s "
                       "bytes=%zu\n", plan_name[p], (double)mus[mi], mode_name[g], b);
            }
}

int main(int argc, char **argv)
{
    static const unsigned nets[3][2] = {{16, 32}, {8, 16}, {4, 8}};
    static const unsigned batches[3] = {1, 10, 100};
    unsigned i, j, p;

    if ((argc == 5 || argc == 6) && strcmp(argv[1], "-h") == 0) {
        unsigned c1 = (unsigned)atoi(argv[2]), c2 = (unsigned)atoi(argv[3]);
        unsigned b = (unsigned)atoi(argv[4]), plan = argc == 6 ? (unsigned)atoi(argv[5]) : 0;
        printf("/* generated by test/core/arena_sizes.c from tr_model_arena_size */\n");
        printf("#define IMAGE_C1 %uu\n#define IMAGE_C2 %uu\n#define IMAGE_BATCH %uu\n", c1, c2, b);
        printf("#define IMAGE_PLAN %uu\n", plan);
        printf("#define IMAGE_ARENA_BYTES %zuu\n", bytes_of(c1, c2, b, plan));
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "lines") == 0) {
        lines();
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "ram") == 0) {
        ram();
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "trainer") == 0) {
        trainer();
        return 0;
    }
    printf("| net (conv1, conv2 channels) | params | plan | batch 1 | batch 10 | batch 100 |\n");
    printf("|---|---:|---|---:|---:|---:|\n");
    for (i = 0; i < 3; i++)
        for (p = 0; p < 2; p++) {
            struct tr_model_desc d;
            struct tr_model m;
            static unsigned char a[1u << 22] TR_ARENA_ALIGNED;
            tr_model_desc_convnet(&d, nets[i][0], nets[i][1], 10);
            tr_model_init(&m, &d, 1, a, sizeof a);
            printf("| %s%u, %u | %zu | %s |", i == 0 ? "seed: " : "", nets[i][0], nets[i][1],
                   m.n_params, plan_name[p]);
            for (j = 0; j < 3; j++)
                printf(" %zu |", bytes_of(nets[i][0], nets[i][1], batches[j], p));
            printf("\n");
        }
    printf("\n| variant (c1/c2) | plan | micro-batch | params | grads | momentum | activations "
           "| kernel scratch | backward state | **arena (size query)** | firmware RAM with the ring |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    ram();
    printf("\n");
    trainer();
    return 0;
}
