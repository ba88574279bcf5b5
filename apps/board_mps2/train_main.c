/* tinyring board_mps2: the training image. Trains the ConvNet variant
 * BOARD_TRAIN_C1/C2 (board_cfg.h, from core's size query at build time) on
 * samples read from host IDX files through semihosting, one micro-batch of
 * BOARD_TRAIN_BATCH per step, plain SGD as the seeds (lr 0.001, momentum 0.9).
 *
 *   train IMAGES LABELS STEPS [SEED]
 *
 * Prints one line per step ("step S loss L bits XXXXXXXX", the float's exact
 * bits for the host comparison), the parameter hash, the SysTick count of
 * the training loop; exits 0, or 1 with a message. */
#include "tinyring.h"
#include "board.h"
#include "board_cfg.h"
#include "args.h"
#include "fmt.h"
#include "idx_sh.h"
#include "train_step.h"

/* train_narrow.elf: the same image for the ring's variant (-DBOARD_TRAIN_AS_RING) */
#ifdef BOARD_TRAIN_AS_RING
#undef BOARD_TRAIN_C1
#undef BOARD_TRAIN_C2
#undef BOARD_TRAIN_BATCH
#undef BOARD_TRAIN_ARENA_BYTES
#define BOARD_TRAIN_C1 BOARD_RING_C1
#define BOARD_TRAIN_C2 BOARD_RING_C2
#define BOARD_TRAIN_BATCH BOARD_RING_BATCH
#define BOARD_TRAIN_ARENA_BYTES BOARD_RING_ARENA_BYTES
#endif

#define MAX_STEPS 32u

/* every byte core uses: sized by core's own query, in .bss (SSRAM2/3) */
static uint8_t arena[BOARD_TRAIN_ARENA_BYTES] TR_ARENA_ALIGNED;
static struct tr_model model;
static uint8_t pixels[MAX_STEPS * BOARD_TRAIN_BATCH * BT_PIXELS];
static uint8_t labels[MAX_STEPS * BOARD_TRAIN_BATCH];
static float x[BOARD_TRAIN_BATCH * BT_PIXELS];

int main(void)
{
    char *argv[BOARD_MAX_ARGS];
    int argc, ok = 1, e;
    unsigned steps, s, B = BOARD_TRAIN_BATCH;
    uint64_t seed = 42, t0, t1, compute = 0;
    struct tr_model_desc d;
    struct tr_sgd sgd;
    size_t need = 0;
    float loss;

    board_clock_init();
    argc = board_args(argv);
    if (argc < 4) {
        board_printf("usage: train IMAGES LABELS STEPS [SEED]\n");
        return 1;
    }
    steps = (unsigned)board_arg_u64(argv[3], &ok);
    if (argc > 4)
        seed = board_arg_u64(argv[4], &ok);
    if (!ok || steps < 1 || steps > MAX_STEPS) {
        board_printf("train: bad STEPS or SEED\n");
        return 1;
    }
    tr_model_desc_convnet(&d, BOARD_TRAIN_C1, BOARD_TRAIN_C2, 10);
    if ((e = tr_model_arena_size(&d, B, &need)) < 0 || need != BOARD_TRAIN_ARENA_BYTES) {
        board_printf("train: size query %d says %u bytes, build says %u\n", e,
                     (unsigned)need, (unsigned)BOARD_TRAIN_ARENA_BYTES);
        return 1;
    }
    if ((e = tr_model_init(&model, &d, B, arena, sizeof arena)) < 0) {
        board_printf("train: init: %s\n", tr_strerror(e));
        return 1;
    }
    tr_model_init_params(&model, seed);
    tr_sgd_init(&sgd);
    if (idx_sh_load(argv[1], argv[2], 0, steps * B, pixels, labels))
        return 1;
    board_printf("train: convnet %u/%u batch %u steps %u seed %u params %u arena %u used %u\n",
                 (unsigned)BOARD_TRAIN_C1, (unsigned)BOARD_TRAIN_C2, B, steps,
                 (unsigned)seed, (unsigned)model.n_params,
                 (unsigned)BOARD_TRAIN_ARENA_BYTES, (unsigned)model.arena_used);
    for (s = 0; s < steps; s++) {
        t0 = board_ticks();
        bt_pixels_to_input(x, pixels + (size_t)s * B * BT_PIXELS, B);
        e = bt_forward_backward(&model, x, labels + s * B, B, &loss);
        if (e < 0) {
            board_printf("train: step %u: %s\n", s, tr_strerror(e));
            return 1;
        }
        bt_sgd_step(&model, &sgd);
        t1 = board_ticks();
        compute += t1 - t0;
        board_printf("step %u loss %f bits %x\n", s, (double)loss, (unsigned)bt_float_bits(loss));
    }
    board_printf("params hash %x\n", (unsigned)bt_hash_floats(model.params, model.n_params));
    board_printf("ticks %u per-sample %u (25 MHz SysTick; x40 = instructions under -icount shift=0)\n",
                 (unsigned)compute, (unsigned)(compute / ((uint64_t)steps * B)));
    board_printf("stack used %u bytes\n", (unsigned)board_stack_used());
    return 0;
}
