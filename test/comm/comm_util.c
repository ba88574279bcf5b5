/* tinyring test: helpers shared by the comm tests (jobs of N simulated
 * ranks, test data, canaries, checked runs of each collective). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "comm_util.h"
#include "sim_transport.h"
#include "tr_comm.h"
#include "tr_comm_internal.h"
#include "tr_error.h"


void job_cfg(struct tr_comm_config *cfg, int world, int rank, uint32_t seg,
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
int job_init(struct job *j, int world, uint32_t seg, size_t fifo, uint32_t timeout)
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

void job_free(struct job *j)
{
    int r;
    for (r = 0; r < j->world; r++)
        free(j->scratch[r]);
    sim_free(&j->net);
}

int all_rc(const struct job *j, int want)
{
    int r;
    for (r = 0; r < j->world; r++)
        if (j->rc[r] != want)
            return 0;
    return 1;
}

int job_hello(struct job *j)
{
    int r;
    for (r = 0; r < j->world; r++)
        j->rc[r] = tr_comm_hello_start(&j->c[r]);
    sim_run(&j->net, j->c, j->rc, 100000, 0);
    return all_rc(j, 0) ? 0 : -1;
}

int job_open(struct job *j, int world, uint32_t seg, size_t fifo, uint32_t timeout)
{
    if (job_init(j, world, seg, fifo, timeout) < 0)
        return -1;
    return job_hello(j);
}

/* deterministic test value for rank r, element i, in [-1, 1) */
float val(int r, size_t i, unsigned salt)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(r + 1) * 40503u ^ salt * 2246822519u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (float)((int32_t)(x & 0xFFFFFF) - 0x800000) / (float)0x800000;
}

float *alloc_buf(size_t count)
{
    float *b = malloc((count + CANARY) * sizeof(float));
    size_t i;
    for (i = 0; i < CANARY; i++)
        b[count + i] = GUARD;
    return b;
}

int canary_ok(const float *b, size_t count)
{
    size_t i;
    for (i = 0; i < CANARY; i++)
        if (b[count + i] != GUARD)
            return 0;
    return 1;
}

const char *algo_name(int a)
{
    return a == TR_ALGO_RING ? "ring" : a == TR_ALGO_CHAIN ? "chain" : "reduce+bcast";
}

/* Runs one float collective on fresh ranks and checks it against a
 * double-precision serial sum. Returns 1 if everything held. */
int run_float(int world, size_t count, enum what what, int op, int algo, int root,
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
        fprintf(stderr, "  hello failed, world=%d\n", world);
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

int run_bcast(int world, size_t bytes, int root, uint32_t seg, const struct knobs *k)
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

