/* tinyring board_mps2: the training image. The board trains the ConvNet
 * BOARD_C1/BOARD_C2 (board_cfg.h) with core's trainer (core/include/tr_train.h) on
 * samples it reads from host IDX files through semihosting: alone
 * (train.elf, net_none.c) or as one rank of a ring with other boards and
 * mnist_ring processes (ring.elf, net_lwip.c: lwIP on the LAN9118).
 *
 *   train [--data DIR] [--epochs N] [--batch N] [--lr X] [--momentum X]
 *         [--seed N] [--allreduce ALGO] [--max-steps N] [--checkpoint-every K]
 *         [--rank R --peers FILE --job-token STR] [--timeout S] [--debug-param-hash]
 *         [--elastic [--min-ranks M]]   (a lost rank survived: port/lwip/README.md)
 *         [--compress none|bf16|int8|int4] [--average-every K]   (as mnist_ring's)
 *         [--checkpoint FILE]   (the state, as mnist_ring's: --resume goes on)
 *
 * With --elastic a board that starts looks for its job running first (it
 * does not know whether it rebooted): a running job takes it in at its next
 * change (net.h, board_net_up), else the ring starts fresh.
 *
 * The flags are mnist_ring's (settings.h); so are the lines it prints: one
 * per epoch (loss, train accuracy, test loss and accuracy on its slice of
 * the test set, summed over the ring), and with --debug-param-hash every
 * step's loss bits and parameter hash and the final hashes. Exits 0, or 1
 * after a line saying what failed. */
#include <string.h>

#include "tinyring.h"
#include "tr_codec.h"
#include "tr_util.h"
#include "board.h"
#include "board_cfg.h"
#include "args.h"
#include "fmt.h"
#include "idx_sh.h"
#include "net.h"
#include "semihost.h"
#include "settings.h"

/* --checkpoint's path + ".tmp" */
#define BOARD_PATH_MAX 256

/* every byte the trainer uses: sized at build time by core's own query for
 * the largest batch this image accepts, its gradient mode and momentum
 * (gen_cfg.c; any number of samples: the sampler stores nothing per
 * sample), checked again at run time for the actual settings */
static uint8_t arena[BOARD_ARENA_BYTES] TR_ARENA_ALIGNED __attribute__((section(".psram")));
static struct tr_train t;
static struct board_settings s;
static struct board_ring ring;             /* where this board is in the ring */
static struct idx_sh train_set, test_set;

static int load(void *ctx, int split, const uint32_t *idx, unsigned n, uint8_t *pixels,
                uint8_t *labels)
{
    const struct idx_sh *d = split == TR_SPLIT_TRAIN ? &train_set : &test_set;
    (void)ctx;
    return idx_sh_read(d, idx, n, pixels, labels) < 0 ? TR_ERR_IO : 0;
}

/* SysTick in microseconds, for the time spent in the gradient allreduce */
static uint64_t clock_us(void *ctx)
{
    (void)ctx;
    return board_ticks() / (BOARD_SYSCLK_HZ / 1000000u);
}

static void print_hash(const char *fmt_head, uint64_t step, const float *v, size_t n)
{
    uint64_t h = tr_train_hash(v, n);
    board_printf(fmt_head, s.rank, (unsigned)step, (unsigned)(h >> 32), (unsigned)h);
}

static int configure(const struct tr_transport *tp)
{
    struct tr_train_config c;
    size_t need = 0;
    char extra[64] = "";
    int e, n;
    memset(&c, 0, sizeof c);
    tr_model_desc_convnet(&c.model, BOARD_C1, BOARD_C2, 10);
    c.model.plan = BOARD_PLAN;      /* fast, or lean for a small board (board.mk) */
    c.batch = s.batch;
    c.n_train = train_set.n;
    c.n_test = test_set.n;
    c.load = load;
    c.load_ctx = 0;
    c.lr = s.lr;
    c.momentum = s.momentum;
    c.seed = s.seed;
    c.algo = s.algo;
    c.epochs = s.epochs;
    c.max_steps = s.max_steps;
    c.sync_every = s.checkpoint_every;
    c.compress = s.compress;            /* in the configuration hash: hello */
    c.average_every = s.average_every;  /* refuses ranks that differ */
    c.rank = ring.rank;                 /* a board that rejoined: the ring's */
    c.world = ring.world;
    c.tp = tp;
    c.job_token = board_token(s.job_token);
    c.timeout_ms = s.timeout_s * 1000u;
    c.segment_bytes = BOARD_SEGMENT;
    c.elastic = s.elastic;
    c.grad_mode = BOARD_GRADS;      /* bucket: no full gradient (board.mk) */
    c.one_plane = BOARD_ONE_PLANE;  /* one: conv1 made again per pass (board.mk) */
    c.clock_us = clock_us;
    c.clock_ctx = 0;
    if ((e = tr_train_arena_size(&c, &need)) < 0 || need > sizeof arena) {
        board_printf("train: batch %u at momentum %f, compress %s, average every %u needs %u "
                     "bytes (%s); this image has %u (built for batch <= %u%s)\n", s.batch,
                     (double)s.momentum, tr_codec_name(s.compress), (unsigned)s.average_every,
                     (unsigned)need, e < 0 ? tr_strerror(e) : "more than this image has",
                     (unsigned)sizeof arena,
                     (unsigned)BOARD_BATCH_MAX,
                     BOARD_MOMENTUM_ARENA ? "" : ", momentum 0: no room for a momentum twin");
        return -1;
    }
    if ((e = tr_train_init(&t, &c, arena, sizeof arena)) < 0) {
        board_printf("train: trainer init: %s\n", tr_strerror(e));
        return -1;
    }
    n = s.compress ? fmt_s(extra, sizeof extra, ", compress %s", tr_codec_name(s.compress)) : 0;
    if (s.average_every >= 2)
        fmt_s(extra + n, sizeof extra - (size_t)n, ", params averaged every %u steps",
              (unsigned)s.average_every);
    board_printf("train: convnet %u/%u (%s plan, %s gradient), rank %d/%d, %u train / %u test "
                 "samples, batch %u per rank, %u steps per epoch, lr %f, momentum %f, allreduce "
                 "%s%s, arena %u of %u bytes\n", (unsigned)BOARD_C1, (unsigned)BOARD_C2,
                 BOARD_PLAN == TR_PLAN_LEAN ? "lean" : "fast",
                 BOARD_GRADS == TR_TRAIN_GRADS_BUCKET ? "bucket" : "full", s.rank, s.world,
                 (unsigned)train_set.n, (unsigned)test_set.n, s.batch, (unsigned)t.steps,
                 (double)s.lr, (double)s.momentum, board_algo_name(s.algo),
                 extra,
                 (unsigned)t.arena_used, (unsigned)sizeof arena);
    board_printf("train: cpu %s\n", board_cpu_name());
    return 0;
}

static void on_step(const struct tr_train_report *r)
{
    if (!s.debug_param_hash)
        return;
    board_printf("loss-bits rank %d step %u %x\n", s.rank, (unsigned)r->global_step,
                 (unsigned)tr_float_bits(r->loss));
    print_hash("param-hash rank %d step %u %x%x\n", r->global_step, t.model.params,
               t.model.n_params);
}

static void on_epoch(const struct tr_train_report *r)
{
    if (r->stopped)
        board_printf("stopped after %u steps (--max-steps), in epoch %u at step %u/%u\n",
                     (unsigned)r->global_step, (unsigned)r->epoch + 1, (unsigned)r->step,
                     (unsigned)r->steps);
    board_printf("epoch %u/%u  loss %f  train acc %f  test loss %f  test acc %f  comm %u ms\n",
                 (unsigned)r->epoch + 1, (unsigned)s.epochs, (double)r->train_loss,
                 (double)r->train_acc, (double)r->test_loss, (double)r->test_acc,
                 (unsigned)(r->comm_us / 1000u));
}

static void on_fault(int e)
{
    const struct tr_train_fault *f = tr_train_last_fault(&t);
    const struct tr_comm_fault *cf = tr_comm_last_fault(&t.comm);
    board_printf("train: rank %d: %s failed: %s", s.rank, tr_train_what_name(f->what),
                 tr_strerror(e));
    if (s.world > 1 && cf->code)
        board_printf(" (in %s, peer rank %d)", tr_comm_phase_name(cf->phase), cf->peer_rank);
    board_printf(" at epoch %u, step %u; stopping\n", (unsigned)f->epoch + 1,
                 (unsigned)f->step + 1);
}

/* --checkpoint: the state's bytes through semihosting as core's streaming
 * writer hands them over (no buffer of the state's size) */
static int piece_out(void *ctx, const void *p, size_t n)
{
    return sh_write(*(const int *)ctx, p, n) == (long)n ? 0 : TR_ERR_IO;
}

/* Write the state to FILE.tmp, then rename it FILE (as mnist_ring does: a
 * board stopped mid-write, or a full disk, leaves the last checkpoint as
 * it was). 0, or -1 after saying why. */
static int save_checkpoint(void)
{
    char tmp[BOARD_PATH_MAX];  /* on the stack: the 256 KiB image has no RAM to spare */
    long n = TR_ERR_IO;
    int fd;
    if ((size_t)fmt_s(tmp, sizeof tmp, "%s.tmp", s.checkpoint) + 1 >= sizeof tmp) {
        board_printf("train: --checkpoint %s: the path is longer than %u bytes\n", s.checkpoint,
                     (unsigned)BOARD_PATH_MAX - 6);
        return -1;
    }
    if ((fd = sh_create(tmp)) >= 0) {
        n = tr_train_state_write(&t, TR_STATE_CHECKPOINT, piece_out, &fd);
        if (sh_close(fd) != 0 && n >= 0)
            n = TR_ERR_IO;
    }
    if (n < 0 || sh_rename(tmp, s.checkpoint) < 0) {
        board_printf("train: rank %d: cannot write the checkpoint %s: %s\n", s.rank, tmp,
                     fd < 0 ? "cannot create it" : n < 0 ? tr_strerror((int)n) : "rename failed");
        if (fd >= 0)
            sh_remove(tmp);
        return -1;
    }
    return 0;
}

/* Ring rank 0, at an epoch's end and at --checkpoint-every points, as
 * mnist_ring's rank 0 */
static int save_due(void)
{
    return s.checkpoint && t.cfg.rank == 0 ? save_checkpoint() : 0;
}

/* --elastic: a lost ring (or an agreed change): the membership round and
 * the trainer on the new ring (the same transport, its links replaced).
 * Below --min-ranks the board holding the latest state writes it. */
static int reform(const struct tr_transport *tp)
{
    int e;
    if (!s.elastic)
        return TR_ERR_INVAL;
    if ((e = board_net_reform(tr_train_position(&t), &ring)) < 0) {
        if (ring.holds_latest && s.checkpoint && save_checkpoint() == 0)
            board_printf("train: rank %d: checkpoint of the last completed step (%u steps "
                         "done) written to %s (resume with mnist_ring --resume)\n", s.rank,
                         (unsigned)t.global_step, s.checkpoint);
        return e;
    }
    if ((e = tr_train_reform(&t, ring.rank, ring.world, ring.world > 1 ? tp : 0,
                             ring.source)) < 0)
        board_printf("train: rank %d: trainer reform: %s\n", s.rank, tr_strerror(e));
    return e;
}

/* Train until done; every event printed as mnist_ring prints it. */
static int run(const struct tr_transport *tp)
{
    struct tr_train_report r;
    float acc = -1;
    uint64_t t0 = board_ticks();
    int e, asked = 0;
    tr_train_begin(&t, 0, 0);
    if (ring.joined && (e = tr_train_reform(&t, ring.rank, ring.world,
                                            ring.world > 1 ? tp : 0, ring.source)) < 0) {
        board_printf("train: rank %d: taking the running job's state: %s\n", s.rank,
                     tr_strerror(e));
        return -1;
    }
    while ((e = tr_train_next(&t, &r)) > 0) {
        if (e == TR_TRAIN_STEP) {
            on_step(&r);
            if (s.elastic && !asked && board_net_service() > 0)
                asked = tr_train_request_change(&t) == 0;   /* a rank waits to join */
        } else if (e == TR_TRAIN_SYNC) {
            if (save_due() < 0)
                return -1;
        } else if (e == TR_TRAIN_EPOCH) {
            on_epoch(&r);
            acc = r.test_acc;
            if (!r.stopped && save_due() < 0)
                return -1;
        } else if (e == TR_TRAIN_LOST || e == TR_TRAIN_CHANGE) {
            asked = 0;
            if (reform(tp) < 0)
                return -1;
        }
    }
    if (e < 0) {
        on_fault(e);
        return -1;
    }
    if (s.debug_param_hash) {
        uint64_t hp = tr_train_hash(t.model.params, t.model.n_params);
        uint64_t hb = tr_train_hash(t.model.buffers, t.model.n_buffers);
        board_printf("final-hash rank %d params %x%x buffers %x%x\n", s.rank,
                     (unsigned)(hp >> 32), (unsigned)hp, (unsigned)(hb >> 32), (unsigned)hb);
    }
    board_printf("done: %u steps, test accuracy %f, %u ms (SysTick)\n",
                 (unsigned)t.global_step, (double)acc,
                 (unsigned)((board_ticks() - t0) / (BOARD_SYSCLK_HZ / 1000u)));
    return 0;
}

int main(void)
{
    char *argv[BOARD_MAX_ARGS];
    const struct tr_transport *tp = 0;
    int argc, rc;

    board_clock_init();
    argc = board_args(argv);
    if (board_settings(&s, argc, argv, BOARD_BATCH_MAX) < 0)
        return 2;
    if (tr_codec_lossy(s.compress) && !BOARD_CODECS) {
        board_printf("train: --compress %s: this image has no room for a codec's error-feedback "
                     "residual (built with BOARD_CODECS=none for %u bytes of arena); only "
                     "--compress none\n", tr_codec_name(s.compress), (unsigned)sizeof arena);
        return 2;
    }
    if (idx_sh_open(&train_set, s.data, "train") < 0 || idx_sh_open(&test_set, s.data, "t10k") < 0)
        return 2;
    ring.world = 1;
    if (s.world > 1 && !(tp = board_net_up(&s, &ring)))
        return 1;
    if (configure(tp) < 0)
        return 1;
    rc = run(tp);
    board_printf("stack used %u bytes\n", (unsigned)board_stack_used());
    if (s.world > 1) {
        board_net_report();
        board_net_down(1000);
    }
    return rc < 0 ? 1 : 0;
}
