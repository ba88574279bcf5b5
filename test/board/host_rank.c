/* tinyring test/board: a POSIX host rank for the mixed ring with the boards.
 *
 *   host_rank RANK WORLD TOKEN STEPS SEED IMAGES LABELS IP:PORT... (WORLD)
 *
 * The boards have no rendezvous master: every rank's address comes from one
 * static table (the same words on every command line). So this program opens
 * the two ring links itself, with the link hello both ports speak
 * (port/lwip/tr_link_hs.h, byte-compatible with port/posix): listen on
 * table[RANK], connect to the right neighbour and send the hello, accept the
 * left neighbour, check its hello and answer, then read the right one's
 * answer. The two sockets then go to port/posix's transport functions
 * (tr_posix_transport only reads px->fd[]) and to core's collectives.
 * The training steps are apps/board_mps2/train_step.c, as on the boards.
 * Prints "step S loss L bits X" per step and "params hash H". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tinyring.h"
#include "tr_posix.h"
#include "tr_link_hs.h"
#include "train_step.h"
#include "host_idx.h"

#define MAX_WORLD 8
#define MAX_STEPS 16
#define BOOT_MS 60000

static struct sockaddr_in table[MAX_WORLD];

static uint32_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint32_t)(t.tv_sec * 1000u + t.tv_nsec / 1000000u);
}

static int parse_addr(const char *s, struct sockaddr_in *a)
{
    char host[64];
    const char *c = strrchr(s, ':');
    if (!c || (size_t)(c - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(c - s));
    host[c - s] = '\0';
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)atoi(c + 1));
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

/* read exactly n bytes within ms */
static int read_n(int fd, uint8_t *p, size_t n, uint32_t ms)
{
    uint32_t t0 = now_ms();
    while (n) {
        struct pollfd pf = {fd, POLLIN, 0};
        int left = (int)(ms - (now_ms() - t0));
        ssize_t k;
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            return -1;
        k = recv(fd, p, n, 0);
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int links_open(int rank, int world, uint64_t token, int fd[2])
{
    int left = (rank - 1 + world) % world, right = (rank + 1) % world;
    int lfd, one = 1, out = -1, in = -1;
    uint8_t mine[TR_LINK_HS_BYTES], theirs[TR_LINK_HS_BYTES];
    uint32_t t0 = now_ms();

    tr_link_hs_put(mine, token, (uint32_t)rank, (uint32_t)world);
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, (struct sockaddr *)&table[rank], sizeof table[rank]) || listen(lfd, 4)) {
        perror("host_rank: listen");
        return -1;
    }
    /* right: connect until it listens (a board may still be booting) */
    while (out < 0) {
        out = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(out, (struct sockaddr *)&table[right], sizeof table[right]) == 0)
            break;
        close(out);
        out = -1;
        if (now_ms() - t0 > BOOT_MS) {
            fprintf(stderr, "host_rank %d: right neighbour %d never listened\n", rank, right);
            return -1;
        }
        usleep(200 * 1000);
    }
    if (send(out, mine, sizeof mine, MSG_NOSIGNAL) != (ssize_t)sizeof mine)
        return -1;
    /* left: accept until the left neighbour of this job says hello */
    while (in < 0) {
        struct pollfd pf = {lfd, POLLIN, 0};
        int left_ms = BOOT_MS - (int)(now_ms() - t0);
        if (left_ms <= 0 || poll(&pf, 1, left_ms) <= 0) {
            fprintf(stderr, "host_rank %d: left neighbour %d never connected\n", rank, left);
            return -1;
        }
        in = accept(lfd, 0, 0);
        if (in < 0)
            continue;
        if (read_n(in, theirs, sizeof theirs, 5000) ||
            tr_link_hs_check(theirs, token, (uint32_t)world, (uint32_t)left) != 0 ||
            send(in, mine, sizeof mine, MSG_NOSIGNAL) != (ssize_t)sizeof mine) {
            fprintf(stderr, "host_rank %d: refused a stranger on the listener\n", rank);
            close(in);
            in = -1;
        }
    }
    close(lfd);
    if (read_n(out, theirs, sizeof theirs, BOOT_MS) ||
        tr_link_hs_check(theirs, token, (uint32_t)world, (uint32_t)right) != 0) {
        fprintf(stderr, "host_rank %d: right neighbour's answer missing or wrong\n", rank);
        return -1;
    }
    setsockopt(in, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(out, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(in, F_SETFL, fcntl(in, F_GETFL) | O_NONBLOCK);
    fcntl(out, F_SETFL, fcntl(out, F_GETFL) | O_NONBLOCK);
    fd[TR_LEFT] = in;
    fd[TR_RIGHT] = out;
    return 0;
}

int main(int argc, char **argv)
{
    int rank, world, i, e = TR_ERR_NOMEM, c1, c2;
    unsigned steps, s, B;
    uint64_t token, seed;
    struct tr_posix px;
    struct tr_transport tp;
    struct tr_comm comm;
    struct tr_comm_config cc;
    struct tr_model_desc d;
    struct tr_model m;
    struct tr_sgd sgd;
    size_t need;
    void *arena = NULL, *scratch;
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
        if (parse_addr(argv[11 + i], &table[i]))
            return 2;

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

    memset(&px, 0, sizeof px);
    px.rank = rank;
    px.world = world;
    px.job_token = token;
    if (links_open(rank, world, token, px.fd) < 0)
        return 1;
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
