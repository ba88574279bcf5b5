/* tinyring test/board: the host twin of the board's training image.
 *
 *   host_train samples DIR N [IMAGES.gz LABELS.gz]
 *       write DIR/images.idx and DIR/labels.idx (uncompressed IDX, what the
 *       board reads through semihosting): the first N samples of the given
 *       MNIST-format files, or N synthetic ones (PCG32 strokes) without them
 *   host_train check BOARD_LOG IMAGES LABELS STEPS SEED C1 C2 BATCH
 *       run the same steps on the host (apps/board_mps2/train_step.c, host
 *       build/libtinyring.a) and compare every "step S loss L bits X" line of
 *       the board's log within 1e-4; suite "board_train"
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "harness.h"
#include "tinyring.h"
#include "train_step.h"
#include "host_idx.h"
#include "tr_util.h"

#define MAX_STEPS 64

static void put_be32(FILE *f, uint32_t v)
{
    uint8_t b[4];
    tr_put_be32(b, v);
    fwrite(b, 1, 4, f);
}

static int gz_read_all(gzFile g, void *buf, unsigned len)
{
    return gzread(g, buf, len) == (int)len ? 0 : -1;
}

static int samples(int argc, char **argv)
{
    char path[1024];
    unsigned n, i;
    uint8_t *pix, *lab, h[16];
    FILE *f;
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: host_train samples DIR N [IMAGES.gz LABELS.gz]\n");
        return 2;
    }
    n = (unsigned)atoi(argv[3]);
    pix = malloc((size_t)n * BT_PIXELS);
    lab = malloc(n);
    if (!pix || !lab || n == 0)
        return 1;
    if (argc == 6) {
        gzFile gi = gzopen(argv[4], "rb"), gl = gzopen(argv[5], "rb");
        if (!gi || !gl || gz_read_all(gi, h, 16) || gz_read_all(gi, pix, n * BT_PIXELS) ||
            gz_read_all(gl, h, 8) || gz_read_all(gl, lab, n)) {
            fprintf(stderr, "host_train: cannot read %s / %s\n", argv[4], argv[5]);
            return 1;
        }
        gzclose(gi);
        gzclose(gl);
    } else {
        /* synthetic: a class-dependent bar plus PCG32 noise, deterministic */
        struct tr_rng r;
        tr_rng_seed(&r, 7, 1);
        for (i = 0; i < n; i++) {
            unsigned p, cls = tr_rng_below(&r, 10);
            lab[i] = (uint8_t)cls;
            for (p = 0; p < BT_PIXELS; p++) {
                unsigned row = p / 28, col = p % 28;
                unsigned on = (row >= 2 + 2 * cls && row < 6 + 2 * cls) || col == 3 + 2 * cls;
                pix[(size_t)i * BT_PIXELS + p] =
                    (uint8_t)(on ? 200 + tr_rng_below(&r, 56) : tr_rng_below(&r, 40));
            }
        }
    }
    snprintf(path, sizeof path, "%s/images.idx", argv[2]);
    if (!(f = fopen(path, "wb")))
        return 1;
    put_be32(f, 0x803);
    put_be32(f, n);
    put_be32(f, 28);
    put_be32(f, 28);
    fwrite(pix, 1, (size_t)n * BT_PIXELS, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/labels.idx", argv[2]);
    if (!(f = fopen(path, "wb")))
        return 1;
    put_be32(f, 0x801);
    put_be32(f, n);
    fwrite(lab, 1, n, f);
    fclose(f);
    free(pix);
    free(lab);
    return 0;
}

static int check(int argc, char **argv)
{
    unsigned steps, c1, c2, B, s, seen = 0;
    uint64_t seed;
    float host_loss[MAX_STEPS], board_loss[MAX_STEPS];
    int have[MAX_STEPS] = {0};
    uint32_t board_hash = 0, host_hash;
    int have_hash = 0;
    unsigned board_arena = 0, board_used = 0;
    struct tr_model_desc d;
    struct tr_model m;
    struct tr_sgd sgd;
    size_t need;
    void *arena;
    uint8_t *pix, *lab;
    float *x;
    char line[512];
    FILE *log;

    if (argc != 10) {
        fprintf(stderr, "usage: host_train check LOG IMAGES LABELS STEPS SEED C1 C2 BATCH\n");
        return 2;
    }
    steps = (unsigned)atoi(argv[5]);
    seed = strtoull(argv[6], 0, 0);
    c1 = (unsigned)atoi(argv[7]);
    c2 = (unsigned)atoi(argv[8]);
    B = (unsigned)atoi(argv[9]);
    if (steps < 1 || steps > MAX_STEPS)
        return 2;

    /* the host run: same samples, seed, variant, batch, same step code */
    tr_model_desc_convnet(&d, c1, c2, 10);
    TH_CHECK(tr_model_arena_size(&d, B, &need) == 0, "size query");
    if (posix_memalign(&arena, TR_ARENA_ALIGN, (need + 15) & ~(size_t)15))
        arena = NULL;
    pix = malloc((size_t)steps * B * BT_PIXELS);
    lab = malloc((size_t)steps * B);
    x = malloc((size_t)B * BT_PIXELS * sizeof(float));
    if (!arena || !pix || !lab || !x)
        return 1;
    TH_CHECK(host_load_idx(argv[3], argv[4], steps * B, pix, lab) == 0, "read %s", argv[3]);
    TH_CHECK(tr_model_init(&m, &d, B, arena, need) == 0, "model init");
    TH_CHECK(m.arena_used == need, "arena use %zu equals the size query %zu", m.arena_used, need);
    tr_model_init_params(&m, seed);
    tr_sgd_init(&sgd);
    for (s = 0; s < steps; s++) {
        bt_pixels_to_input(x, pix + (size_t)s * B * BT_PIXELS, B);
        TH_CHECK(bt_forward_backward(&m, x, lab + s * B, B, &host_loss[s]) == 0, "host step %u", s);
        bt_sgd_step(&m, &sgd);
    }
    host_hash = bt_hash_floats(m.params, m.n_params);

    /* the board's log */
    log = fopen(argv[2], "r");
    TH_CHECK(log != NULL, "open board log %s", argv[2]);
    while (log && fgets(line, sizeof line, log)) {
        unsigned st, bits;
        float f;
        if (sscanf(line, "step %u loss %*s bits %x", &st, &bits) == 2 && st < MAX_STEPS) {
            memcpy(&f, &bits, sizeof f);
            board_loss[st] = f;
            have[st] = 1;
            seen++;
        } else if (strncmp(line, "train: convnet", 14) == 0 && strstr(line, " arena ") &&
                   sscanf(strstr(line, " arena "), " arena %u used %u", &st, &bits) == 2) {
            board_arena = st;
            board_used = bits;
        } else if (sscanf(line, "params hash %x", &bits) == 1) {
            board_hash = bits;
            have_hash = 1;
        }
    }
    if (log)
        fclose(log);
    TH_CHECK(seen == steps, "board printed %u step lines, want %u", seen, steps);
    /* the board's static arena is what the host's size query says, all used */
    TH_CHECK(board_arena == need && board_used == need,
             "board arena %u used %u, host size query %zu", board_arena, board_used, need);
    for (s = 0; s < steps; s++) {
        TH_CHECK(have[s], "board step %u missing", s);
        if (!have[s])
            continue;
        TH_CHECK(isfinite(host_loss[s]) && host_loss[s] > 0.0f, "host loss %u is %g", s,
                 (double)host_loss[s]);
        TH_CHECK(fabsf(board_loss[s] - host_loss[s]) <= 1e-4f,
                 "step %u: board loss %.7f, host %.7f", s, (double)board_loss[s],
                 (double)host_loss[s]);
        printf("step %u board %.7f host %.7f diff %.2e\n", s, (double)board_loss[s],
               (double)host_loss[s], (double)fabsf(board_loss[s] - host_loss[s]));
    }
    /* training moved: the last loss differs from the first */
    TH_CHECK(steps < 2 || host_loss[steps - 1] != host_loss[0], "loss never changed");
    TH_CHECK(have_hash, "board printed no params hash");
    /* core promises the same bits on every IEEE target (-ffp-contract=off,
     * no libm, fixed summation order): the parameters after training too */
    TH_CHECK(board_hash == host_hash, "params hash board %08x host %08x", board_hash, host_hash);
    printf("params hash board %08x host %08x (%s)\n", board_hash, host_hash,
           board_hash == host_hash ? "bitwise equal" : "differ");
    free(arena);
    free(pix);
    free(lab);
    free(x);
    return th_report("board_train");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "samples"))
        return samples(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "check"))
        return check(argc, argv);
    fprintf(stderr, "usage: host_train samples|check ...\n");
    return 2;
}
