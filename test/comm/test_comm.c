/* tinyring test: every collective on the simulated transport, over world
 * sizes 1..8, element counts 0, 1, primes, not divisible by the world, up to
 * 16 Mi; faults give their error codes and never hang (simulated clock,
 * bounded rounds); buffers are fenced by canaries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "sim_transport.h"
#include "tr_comm.h"
#include "tr_comm_internal.h"
#include "tr_error.h"

#define TOKEN  0x5EED5EED12345678ull
#define LAYOUT 0xC0FFEEu
#define CANARY 8                         /* guard floats after every buffer */
#define GUARD  (-12345.5f)

struct job {
    struct sim_net net;
    int world;
    struct tr_comm c[SIM_MAX_WORLD];
    uint8_t *scratch[SIM_MAX_WORLD];
    int rc[SIM_MAX_WORLD];
};

static void job_cfg(struct tr_comm_config *cfg, int world, int rank, uint32_t seg,
                    uint32_t timeout)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->rank = rank;
    cfg->world = world;
    cfg->segment_bytes = seg;
    cfg->timeout_ms = timeout;
    cfg->job_token = TOKEN;
    cfg->layout_hash = LAYOUT;
}

/* Sets up world ranks without hello. Returns 0 or -1. */
static int job_init(struct job *j, int world, uint32_t seg, size_t fifo, uint32_t timeout)
{
    int r;
    memset(j, 0, sizeof *j);
    j->world = world;
    if (sim_init(&j->net, world, fifo) < 0)
        return -1;
    for (r = 0; r < world; r++) {
        struct tr_comm_config cfg;
        size_t need;
        job_cfg(&cfg, world, r, seg, timeout);
        need = tr_comm_scratch_size(&cfg);
        j->scratch[r] = need ? malloc(need) : NULL;
        if (tr_comm_init(&j->c[r], &cfg, world > 1 ? &j->net.tp[r] : NULL,
                         j->scratch[r], need) != 0)
            return -1;
    }
    return 0;
}

static void job_free(struct job *j)
{
    int r;
    for (r = 0; r < j->world; r++)
        free(j->scratch[r]);
    sim_free(&j->net);
}

static int all_rc(const struct job *j, int want)
{
    int r;
    for (r = 0; r < j->world; r++)
        if (j->rc[r] != want)
            return 0;
    return 1;
}

static int job_hello(struct job *j)
{
    int r;
    for (r = 0; r < j->world; r++)
        j->rc[r] = tr_comm_hello_start(&j->c[r]);
    sim_run(&j->net, j->c, j->rc, 100000, 0);
    return all_rc(j, 0) ? 0 : -1;
}

static int job_open(struct job *j, int world, uint32_t seg, size_t fifo, uint32_t timeout)
{
    if (job_init(j, world, seg, fifo, timeout) < 0)
        return -1;
    return job_hello(j);
}

/* deterministic test value for rank r, element i, in [-1, 1) */
static float val(int r, size_t i, unsigned salt)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(r + 1) * 40503u ^ salt * 2246822519u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (float)((int32_t)(x & 0xFFFFFF) - 0x800000) / (float)0x800000;
}

static float *alloc_buf(size_t count)
{
    float *b = malloc((count + CANARY) * sizeof(float));
    size_t i;
    for (i = 0; i < CANARY; i++)
        b[count + i] = GUARD;
    return b;
}

static int canary_ok(const float *b, size_t count)
{
    size_t i;
    for (i = 0; i < CANARY; i++)
        if (b[count + i] != GUARD)
            return 0;
    return 1;
}

enum what { W_ALLREDUCE, W_REDUCE };

static const char *algo_name(int a)
{
    return a == TR_ALGO_RING ? "ring" : a == TR_ALGO_CHAIN ? "chain" : "reduce+bcast";
}

struct knobs {
    size_t max_write;
    unsigned again_every;
    int shuffle;
    size_t fifo;
};

/* Runs one float collective on fresh ranks and checks it against a
 * double-precision serial sum. Returns 1 if everything held. */
static int run_float(int world, size_t count, enum what what, int op, int algo, int root,
                     uint32_t seg, const struct knobs *k)
{
    struct job j;
    float *buf[SIM_MAX_WORLD];
    double *ref;
    size_t i;
    int r, ok = 1;
    long rounds;
    double tol = 1e-6 * (world + 1);
    unsigned salt = (unsigned)(count * 31 + (size_t)world);

    if (job_open(&j, world, seg, k && k->fifo ? k->fifo : 1u << 16, 2000) < 0) {
        TH_CHECK(0, "hello world=%d", world);
        job_free(&j);
        return 0;
    }
    if (k) {
        for (r = 0; r < world; r++) {
            j.net.ep[r].max_write = k->max_write;
            j.net.ep[r].again_every = k->again_every;
        }
    }
    ref = calloc(count + 1, sizeof(double));
    for (r = 0; r < world; r++) {
        buf[r] = alloc_buf(count);
        for (i = 0; i < count; i++) {
            buf[r][i] = val(r, i, salt);
            ref[i] += (double)buf[r][i];
        }
    }
    for (r = 0; r < world; r++)
        j.rc[r] = what == W_ALLREDUCE
                      ? tr_allreduce_start(&j.c[r], buf[r], count, (enum tr_op)op, (enum tr_algo)algo)
                      : tr_reduce_start(&j.c[r], buf[r], count, (enum tr_op)op, root);
    rounds = sim_run(&j.net, j.c, j.rc, 100000, k ? k->shuffle : 0);
    if (rounds < 0 || !all_rc(&j, 0)) {
        fprintf(stderr, "  rounds=%ld rc0=%d fault phase=%s\n", rounds, j.rc[0],
                tr_comm_phase_name(j.c[0].fault.phase));
        ok = 0;
    }
    for (r = 0; r < world && ok; r++) {
        if (what == W_REDUCE && r != root)
            continue;
        for (i = 0; i < count; i++) {
            double want = op == TR_OP_AVG ? ref[i] / world : ref[i];
            if (!(fabs((double)buf[r][i] - want) <= tol)) {
                fprintf(stderr, "  rank %d elem %zu: %.9g want %.9g\n", r, i,
                        (double)buf[r][i], want);
                ok = 0;
                break;
            }
        }
        if (what == W_ALLREDUCE && r > 0 && count &&
            memcmp(buf[r], buf[0], count * sizeof(float)) != 0) {
            fprintf(stderr, "  rank %d differs bitwise from rank 0\n", r);
            ok = 0;
        }
    }
    for (r = 0; r < world; r++) {
        if (!canary_ok(buf[r], count)) {
            fprintf(stderr, "  rank %d canary overwritten\n", r);
            ok = 0;
        }
        free(buf[r]);
    }
    free(ref);
    job_free(&j);
    return ok;
}

static int run_bcast(int world, size_t bytes, int root, uint32_t seg, const struct knobs *k)
{
    struct job j;
    uint8_t *buf[SIM_MAX_WORLD];
    size_t i;
    int r, ok = 1;

    if (job_open(&j, world, seg, k && k->fifo ? k->fifo : 1u << 16, 2000) < 0) {
        job_free(&j);
        return 0;
    }
    if (k)
        for (r = 0; r < world; r++) {
            j.net.ep[r].max_write = k->max_write;
            j.net.ep[r].again_every = k->again_every;
        }
    for (r = 0; r < world; r++) {
        buf[r] = malloc(bytes + 16);
        for (i = 0; i < bytes; i++)
            buf[r][i] = (uint8_t)(r == root ? i * 7 + 3 : 0xEE);
        memset(buf[r] + bytes, 0xA5, 16);
    }
    for (r = 0; r < world; r++)
        j.rc[r] = tr_broadcast_start(&j.c[r], buf[r], bytes, root);
    if (sim_run(&j.net, j.c, j.rc, 100000, k ? k->shuffle : 0) < 0 || !all_rc(&j, 0))
        ok = 0;
    for (r = 0; r < world; r++) {
        for (i = 0; ok && i < bytes; i++)
            if (buf[r][i] != (uint8_t)(i * 7 + 3))
                ok = 0;
        for (i = 0; i < 16; i++)
            if (buf[r][bytes + i] != 0xA5)
                ok = 0;
        free(buf[r]);
    }
    job_free(&j);
    return ok;
}

/* ---- grids ---------------------------------------------------------------- */

static const size_t counts[] = {0, 1, 2, 3, 5, 7, 13, 31, 97, 1009, 4099, 65537};

static void test_grid(void)
{
    int world, op, algo;
    size_t ci;
    for (world = 1; world <= 8; world++)
        for (ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
            for (algo = 0; algo < 3; algo++)
                for (op = 0; op < 2; op++) {
                    size_t n = counts[ci];
                    /* small segments so that pipelining really happens */
                    uint32_t seg = n > 4096 ? 4096 : 64;
                    TH_CHECK(run_float(world, n, W_ALLREDUCE, op, algo, 0, seg, NULL),
                             "allreduce %s op=%d world=%d count=%zu", algo_name(algo), op,
                             world, n);
                }
}

static void test_reduce_bcast_barrier_grid(void)
{
    int world, root;
    size_t ci;
    for (world = 1; world <= 8; world++)
        for (ci = 0; ci < sizeof counts / sizeof counts[0]; ci += 2)
            for (root = 0; root < world; root += (world > 3 ? 3 : 1)) {
                size_t n = counts[ci];
                TH_CHECK(run_float(world, n, W_REDUCE, TR_OP_SUM, 0, root, 64, NULL),
                         "reduce sum world=%d count=%zu root=%d", world, n, root);
                TH_CHECK(run_float(world, n, W_REDUCE, TR_OP_AVG, 0, root, 256, NULL),
                         "reduce avg world=%d count=%zu root=%d", world, n, root);
                TH_CHECK(run_bcast(world, n * 3 + 1, root, 64, NULL),
                         "broadcast world=%d bytes=%zu root=%d", world, n * 3 + 1, root);
            }
}

/* A barrier must not let anyone out before the last rank enters. */
static void test_barrier(void)
{
    int world;
    for (world = 1; world <= 8; world++) {
        struct job j;
        int r, late = world / 2, none_done = 1;
        long rounds;
        if (job_open(&j, world, 0, 4096, 1000) < 0) {
            TH_CHECK(0, "hello world %d", world);
            job_free(&j);
            continue;
        }
        for (r = 0; r < world; r++)
            j.rc[r] = r == late ? TR_ERR_AGAIN : tr_barrier_start(&j.c[r]);
        if (world > 1) {
            j.net.ep[late].silent = 1;     /* enters late */
            sim_run(&j.net, j.c, j.rc, 50, 0);
            for (r = 0; r < world; r++)
                if (r != late && j.rc[r] != TR_ERR_AGAIN)
                    none_done = 0;
            TH_CHECK(none_done, "barrier world=%d: a rank left before rank %d entered",
                     world, late);
            j.net.ep[late].silent = 0;
            j.rc[late] = tr_barrier_start(&j.c[late]);
        }
        rounds = sim_run(&j.net, j.c, j.rc, 10000, 1);
        TH_CHECK(rounds >= 0 && all_rc(&j, 0), "barrier world=%d completes", world);
        /* and again, back to back, with a collective after it */
        for (r = 0; r < world; r++)
            j.rc[r] = tr_barrier_start(&j.c[r]);
        sim_run(&j.net, j.c, j.rc, 10000, 1);
        TH_CHECK(all_rc(&j, 0), "second barrier world=%d", world);
        job_free(&j);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    test_grid();
    test_reduce_bcast_barrier_grid();
    test_barrier();
    return th_report("comm");
}
