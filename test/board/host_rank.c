/* tinyring test/board: a POSIX host rank for the mixed ring with the boards.
 *
 *   host_rank C1 C2 BATCH RANK WORLD TOKEN STEPS SEED IMAGES LABELS IP:PORT... (WORLD)
 *
 * The boards have no rendezvous master: every rank's address comes from one
 * static table (the same words on every command line). So this program opens
 * its two ring links with port/posix's tr_posix_connect_table: listen on
 * table[RANK], connect to the right neighbour (retried while a board boots)
 * and accept the left one, with the link hello the lwIP port speaks too
 * (port/lwip/tr_link_hs.h). Then core's collectives drive the links through
 * tr_posix_transport. The training steps are apps/board_mps2/train_step.c,
 * as on the boards. Prints "step S loss L bits X" per step and "params hash H". */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tinyring.h"
#include "tr_posix.h"
#include "train_step.h"
#include "host_idx.h"

#define MAX_WORLD 8
#define MAX_STEPS 16
#define BOOT_MS 60000                  /* a board may still be booting */

static struct tr_posix_endpoint table[MAX_WORLD];

int main(int argc, char **argv)
{
    int rank, world, i, e = TR_ERR_NOMEM, c1, c2;
    unsigned steps, s, B;
    uint64_t token, seed;
    struct tr_posix px;
    struct tr_posix_table_config tc;
    struct tr_transport tp;
    struct tr_comm comm;
    struct tr_comm_config cc;
    struct tr_model_desc d;
    struct tr_model m;
    struct tr_sgd sgd;
    size_t need;
    void *arena = NULL, *scratch;
    char err[256];
    uint8_t *pix, *lab;
    float *x, loss;

    if (argc < 11) {
        fprintf(stderr, "usage: host_rank C1 C2 BATCH RANK WORLD TOKEN STEPS SEED IMAGES LABELS IP:PORT...\n");
        return 2;
    }
    c1 = atoi(argv[1]);
    c2 = atoi(argv[2]);
    B = (unsigned)atoi(argv[3]);
    rank = atoi(argv[4]);
    world = atoi(argv[5]);
    token = strtoull(argv[6], 0, 0);
    steps = (unsigned)atoi(argv[7]);
    seed = strtoull(argv[8], 0, 0);
    if (world < 2 || world > MAX_WORLD || rank < 0 || rank >= world || argc != 11 + world ||
        steps < 1 || steps > MAX_STEPS || B < 1)
        return 2;
    for (i = 0; i < world; i++)
        if (tr_posix_endpoint_parse(&table[i], argv[11 + i], err, sizeof err) < 0) {
            fprintf(stderr, "host_rank: %s\n", err);
            return 2;
        }

    tr_model_desc_convnet(&d, (unsigned)c1, (unsigned)c2, 10);
    if (tr_model_arena_size(&d, B, &need) < 0 ||
        posix_memalign(&arena, TR_ARENA_ALIGN, (need + 15) & ~(size_t)15) ||
        tr_model_init(&m, &d, B, arena, need) < 0)
        return 1;
    tr_model_init_params(&m, seed);
    tr_sgd_init(&sgd);
    pix = malloc((size_t)steps * world * B * BT_PIXELS);
    lab = malloc((size_t)steps * world * B);
    x = malloc((size_t)B * BT_PIXELS * sizeof(float));
    if (!pix || !lab || !x || host_load_idx(argv[9], argv[10], steps * (unsigned)world * B, pix, lab)) {
        fprintf(stderr, "host_rank: cannot read samples\n");
        return 1;
    }

    tr_posix_table_config_default(&tc);
    tc.table = table;
    tc.rank = rank;
    tc.world = world;
    tc.job_token = token;
    tc.timeout_ms = BOOT_MS;
    tc.handshake_ms = 5000;            /* a board under QEMU may answer slowly */
    tc.sndbuf = -1;                    /* kernel autotuning, as before */
    tc.rcvbuf = -1;
    tc.spin_us = 0;                    /* QEMU boards share the cores: never spin */
    if ((e = tr_posix_connect_table(&px, &tc, err, sizeof err)) < 0) {
        fprintf(stderr, "host_rank %d: %s (%s)\n", rank, err, tr_strerror(e));
        return 1;
    }
    tr_posix_transport(&px, &tp);

    memset(&cc, 0, sizeof cc);
    cc.rank = rank;
    cc.world = world;
    cc.timeout_ms = 60000;
    cc.segment_bytes = 4096;
    cc.job_token = token;
    cc.layout_hash = tr_model_layout_hash(&m);
    scratch = malloc(tr_comm_scratch_size(&cc));
    if (!scratch || (e = tr_comm_init(&comm, &cc, &tp, scratch, tr_comm_scratch_size(&cc))) < 0 ||
        (e = tr_comm_hello(&comm)) < 0) {
        const struct tr_comm_fault *f = tr_comm_last_fault(&comm);
        fprintf(stderr, "host_rank %d: comm init/hello: %s (phase %s, peer rank %d)\n", rank,
                tr_strerror(e), tr_comm_phase_name(f->phase), f->peer_rank);
        return 1;
    }
    printf("host_rank %d: links up, hello ok, params %zu\n", rank, m.n_params);
    for (s = 0; s < steps; s++) {
        unsigned first = (s * (unsigned)world + (unsigned)rank) * B;
        bt_pixels_to_input(x, pix + (size_t)first * BT_PIXELS, B);
        if ((e = bt_forward_backward(&m, x, lab + first, B, &loss)) < 0 ||
            (e = tr_allreduce(&comm, m.grads, m.n_params, TR_OP_AVG, TR_ALGO_RING)) < 0) {
            const struct tr_comm_fault *f = tr_comm_last_fault(&comm);
            fprintf(stderr, "host_rank %d: step %u: %s (phase %s, peer rank %d)\n", rank, s,
                    tr_strerror(e), tr_comm_phase_name(f->phase), f->peer_rank);
            return 1;
        }
        bt_sgd_step(&m, &sgd);
        printf("step %u loss %f bits %08x\n", s, (double)loss, bt_float_bits(loss));
        fflush(stdout);
    }
    printf("params hash %08x\n", bt_hash_floats(m.params, m.n_params));
    if ((e = tr_barrier(&comm)) < 0) {
        fprintf(stderr, "host_rank %d: final barrier: %s\n", rank, tr_strerror(e));
        return 1;
    }
    tr_posix_close(&px);
    return 0;
}
