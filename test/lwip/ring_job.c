/* tinyring test: one rank's work over a transport (see ring_job.h). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tinyring.h"
#include "../harness.h"
#include "ring_job.h"
#include "tr_codec.h"
#include "tr_util.h"

#define GRAD_FLOATS 29034u               /* seed ConvNet: 116136 bytes */
#define MAX_FLOATS  (1u << 18)           /* 1 MiB of floats */

static float buf_a[MAX_FLOATS], buf_b[MAX_FLOATS];
static uint8_t scratch[1u << 20] __attribute__((aligned(16)));
static float res_a[MAX_FLOATS];
static uint8_t wire_a[2u * MAX_FLOATS + 4096u];

void ring_elastic_joined(struct ring_elastic *ops, const char *who, unsigned me, int rank,
                         int world, int source, uint32_t epoch, uint32_t coordinator)
{
    printf("%s rank %u: rejoined as ring rank %d of %d (view %u, coordinator rank %u)\n", who,
           me, rank, world, (unsigned)epoch, (unsigned)coordinator);
    ops->joiner = 1;
    ops->rank = rank;
    ops->world = world;
    ops->source = source;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fault_msg(const struct ring_job *j, const struct tr_comm *c, const char *what, int rc)
{
    const struct tr_comm_fault *f = tr_comm_last_fault(c);
    fprintf(stderr, "%s rank %d: %s failed: %s (phase %s, %s link, peer rank %d, seq %u)\n",
            j->label, j->rank, what, tr_strerror(rc), tr_comm_phase_name(f->phase),
            f->peer == TR_LEFT ? "left" : f->peer == TR_RIGHT ? "right" : "no",
            f->peer_rank, (unsigned)f->seq);
}

/* ---- stream: the transport alone ---------------------------------------- */

static uint8_t pat(int rank, long i) { return (uint8_t)(i * 131 + rank * 17 + (i >> 12)); }

static int run_stream(const struct ring_job *j, const struct tr_transport *tp)
{
    static uint8_t out[8192], in[8192];
    long sent = 0, got = 0, bad = 0;
    int left = (j->rank - 1 + j->world) % j->world, rc = 0, eof = 0;
    double t0 = now_s();
    uint32_t last = tp->now_ms(tp->ctx);
    while (sent < j->bytes || got < j->bytes) {
        unsigned want = 0;
        int moved = 0, r;
        if (sent < j->bytes) {
            long n = j->bytes - sent, k, w;
            if (n > (long)sizeof out)
                n = sizeof out;
            for (k = 0; k < n; k++)
                out[k] = pat(j->rank, sent + k);
            w = tp->send(tp->ctx, TR_RIGHT, out, (size_t)n);
            if (w > 0) {
                sent += w;
                moved = 1;
            } else if (w == TR_ERR_AGAIN) {
                want |= TR_POLL_SEND(TR_RIGHT);
            } else {
                rc = (int)w;
                break;
            }
        }
        if (got < j->bytes) {
            long n = tp->recv(tp->ctx, TR_LEFT, in, sizeof in), k;
            if (n > 0) {
                for (k = 0; k < n; k++)
                    bad += in[k] != pat(left, got + k);
                got += n;
                moved = 1;
            } else if (n == TR_ERR_AGAIN) {
                want |= TR_POLL_RECV(TR_LEFT);
            } else {
                rc = (int)n;
                eof = n == TR_ERR_CLOSED;
                break;
            }
        }
        if (moved) {
            last = tp->now_ms(tp->ctx);
            continue;
        }
        r = tp->poll(tp->ctx, want, 100);
        if (r < 0) {
            rc = r;
            break;
        }
        if ((uint32_t)(tp->now_ms(tp->ctx) - last) > j->timeout_ms) {
            rc = TR_ERR_TIMEOUT;
            break;
        }
    }
    {
        double dt = now_s() - t0;
        printf("%s rank %d: stream sent %ld got %ld bytes in %.3f s (%.1f MB/s each way)\n",
               j->label, j->rank, sent, got, dt, dt > 0 ? got / dt / 1e6 : 0.0);
    }
    TH_CHECK(rc == 0, "stream: %s%s", tr_strerror(rc), eof ? " (early EOF)" : "");
    TH_CHECK(sent == j->bytes, "stream: sent %ld of %ld", sent, j->bytes);
    TH_CHECK(got == j->bytes, "stream: got %ld of %ld", got, j->bytes);
    TH_CHECK(bad == 0, "stream: %ld corrupted bytes", bad);
    /* both directions done: wait until the right neighbour has everything
     * (it stops reading only when done), i.e. drain our send queue */
    {
        uint32_t t = tp->now_ms(tp->ctx);
        while ((uint32_t)(tp->now_ms(tp->ctx) - t) < 300)
            tp->poll(tp->ctx, 0, 10);
    }
    return 0;
}

/* ---- coll: the collectives suite --------------------------------------- */

/* An integer-valued float in [-512, 511] from (rank, i, salt): every sum of
 * up to 8 of them is exact, so any reduction order gives the serial sum. */
static float ival(int rank, size_t i, unsigned salt)
{
    uint32_t h = (uint32_t)(i * 2654435761u) ^ (uint32_t)(rank * 40503u + salt * 97u);
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return (float)((int)(h & 1023u) - 512);
}

static void check_hash_agrees(struct tr_comm *c, const struct ring_job *j, const void *p,
                              size_t n, const char *what)
{
    uint64_t mine = tr_fnv1a64(TR_FNV64_INIT, p, n), root = mine;
    int rc = tr_broadcast(c, &root, sizeof root, 0);
    if (rc < 0)
        fault_msg(j, c, "hash broadcast", rc);
    TH_CHECK(rc == 0, "%s: hash broadcast: %s", what, tr_strerror(rc));
    TH_CHECK(root == mine, "%s: rank %d result differs from rank 0's (bitwise)", what, j->rank);
}

static int run_coll(const struct ring_job *j, struct tr_comm *c)
{
    static const size_t counts[] = { 0, 1, 2, 3, 7, 13, 97, 1009, 4099, GRAD_FLOATS, 65537 };
    static const char *algo_name[] = { "ring", "chain", "reduce-bcast" };
    unsigned a, k, salt = 1;
    int rc, root;
    for (a = 0; a < 3; a++) {
        for (k = 0; k < sizeof counts / sizeof counts[0]; k++, salt++) {
            size_t n = counts[k], i, bad = 0;
            struct tr_rng rng;
            int r;
            for (i = 0; i < n; i++)
                buf_a[i] = ival(j->rank, i, salt);
            rc = tr_allreduce(c, buf_a, n, TR_OP_SUM, (enum tr_algo)a);
            if (rc < 0)
                fault_msg(j, c, "allreduce", rc);
            TH_CHECK(rc == 0, "allreduce %s n=%zu: %s", algo_name[a], n, tr_strerror(rc));
            for (i = 0; i < n; i++) {
                float s = 0.0f;
                for (r = 0; r < j->world; r++)
                    s += ival(r, i, salt);
                bad += memcmp(&s, &buf_a[i], sizeof s) != 0;
            }
            TH_CHECK(bad == 0, "allreduce %s n=%zu: %zu elements != serial sum", algo_name[a],
                     n, bad);
            /* random floats: order-dependent rounding, must still agree bitwise */
            tr_rng_seed(&rng, 1234u + salt, (uint64_t)j->rank);
            for (i = 0; i < n; i++)
                buf_b[i] = tr_rng_uniform(&rng, -1.0f, 1.0f);
            rc = tr_allreduce(c, buf_b, n, k % 2 ? TR_OP_AVG : TR_OP_SUM, (enum tr_algo)a);
            if (rc < 0)
                fault_msg(j, c, "allreduce", rc);
            TH_CHECK(rc == 0, "allreduce %s random n=%zu: %s", algo_name[a], n,
                     tr_strerror(rc));
            check_hash_agrees(c, j, buf_b, n * sizeof(float), "allreduce random");
        }
    }
    /* the compressed ring (tr_codec.h): every codec's wire format between
     * lwIP and POSIX ranks; the decoded averages agree bitwise, and they
     * are near the exact ones */
    for (a = TR_CODEC_BF16; a < TR_CODEC_COUNT; a++) {
        static const size_t cn[] = { 1009, GRAD_FLOATS };
        for (k = 0; k < 2; k++, salt++) {
            size_t n = cn[k], i, bad = 0;
            for (i = 0; i < n; i++) {
                buf_a[i] = ival(j->rank, i, salt) / 64.0f;
                res_a[i] = 0.0f;
            }
            rc = tr_allreduce_codec(c, buf_a, n, TR_OP_AVG, (int)a, res_a, wire_a, sizeof wire_a);
            if (rc < 0)
                fault_msg(j, c, "compressed allreduce", rc);
            TH_CHECK(rc == 0, "allreduce %s n=%zu: %s", tr_codec_name((int)a), n,
                     tr_strerror(rc));
            for (i = 0; i < n; i++) {
                float s = 0.0f;
                int r;
                for (r = 0; r < j->world; r++)
                    s += ival(r, i, salt) / 64.0f;
                s /= (float)j->world;
                /* half a step per hop, the step growing with the partial
                 * sum (|value| <= 8): sum_h h*8/(2*qmax) / world */
                float tol = a == TR_CODEC_BF16 ? 0.1f
                            : (float)(j->world + 1) * 8.0f /
                                  (4.0f * (a == TR_CODEC_INT8 ? 127.0f : 7.0f)) * 1.1f;
                bad += !(buf_a[i] - s <= tol && s - buf_a[i] <= tol);
            }
            TH_CHECK(bad == 0, "allreduce %s n=%zu: %zu elements far from the average",
                     tr_codec_name((int)a), n, bad);
            check_hash_agrees(c, j, buf_a, n * sizeof(float), "compressed allreduce");
        }
    }
    /* broadcast of odd byte counts from every root */
    for (root = 0; root < j->world; root++) {
        static const size_t sizes[] = { 1, 5, 1000, 70001 };
        for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            uint8_t *b = (uint8_t *)buf_a;
            size_t n = sizes[k], i, bad = 0;
            for (i = 0; i < n; i++)
                b[i] = j->rank == root ? (uint8_t)(i * 7 + root) : 0xee;
            rc = tr_broadcast(c, b, n, root);
            if (rc < 0)
                fault_msg(j, c, "broadcast", rc);
            TH_CHECK(rc == 0, "broadcast root %d n=%zu: %s", root, n, tr_strerror(rc));
            for (i = 0; i < n; i++)
                bad += b[i] != (uint8_t)(i * 7 + root);
            TH_CHECK(bad == 0, "broadcast root %d n=%zu: %zu wrong bytes", root, n, bad);
        }
    }
    /* barrier: nobody leaves before the late rank has entered. All ranks
     * run on one host, so CLOCK_MONOTONIC is one clock for all of them: the
     * late rank broadcasts its entry time and every rank compares its exit. */
    for (k = 0; k < 3; k++) {
        int late = (int)k % j->world;
        int64_t t_in = 0, t_out;
        struct timespec ts;
        if (j->rank == late) {
            struct timespec nap = { 0, 200 * 1000000L };
            nanosleep(&nap, NULL);
        }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (j->rank == late)
            t_in = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        rc = tr_barrier(c);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t_out = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        if (rc < 0)
            fault_msg(j, c, "barrier", rc);
        TH_CHECK(rc == 0, "barrier %u: %s", k, tr_strerror(rc));
        rc = tr_broadcast(c, &t_in, sizeof t_in, late);
        TH_CHECK(rc == 0, "barrier %u: broadcast of the entry time: %s", k, tr_strerror(rc));
        TH_CHECK(t_out >= t_in, "barrier %u: rank %d left %.3f ms before late rank %d entered",
                 k, j->rank, (double)(t_in - t_out) / 1e6, late);
    }
    return 0;
}

/* ---- train: the same steps on every kind of rank ------------------------ */

static int run_train(const struct ring_job *j, struct tr_comm *c)
{
    enum { BATCH = 8 };
    static uint8_t arena[4u << 20] __attribute__((aligned(16)));
    static struct tr_model m;
    static float x[BATCH * 28 * 28];
    static uint8_t y[BATCH];
    struct tr_model_desc d;
    struct tr_sgd sgd;
    size_t bytes;
    int s, rc;
    tr_model_desc_convnet(&d, 16, 32, 10);
    rc = tr_model_arena_size(&d, BATCH, &bytes);
    TH_CHECK(rc == 0 && bytes <= sizeof arena, "model arena %zu bytes: %s", bytes,
             tr_strerror(rc));
    if (rc < 0 || bytes > sizeof arena)
        return 1;
    rc = tr_model_init(&m, &d, BATCH, arena, bytes);
    TH_CHECK(rc == 0, "model init: %s", tr_strerror(rc));
    if (rc < 0)
        return 1;
    TH_CHECK(m.n_params == GRAD_FLOATS, "seed ConvNet has %zu params", m.n_params);
    tr_model_init_params(&m, 42);
    tr_sgd_init(&sgd);
    sgd.lr = 0.01f;
    for (s = 0; s < j->iters; s++) {
        struct tr_rng rng;
        int i;
        float loss = 0.0f;
        tr_rng_seed(&rng, 1000u + (uint64_t)s, (uint64_t)j->rank);   /* this rank's shard */
        for (i = 0; i < BATCH; i++) {
            int p, cls = (int)tr_rng_below(&rng, 10);
            y[i] = (uint8_t)cls;
            for (p = 0; p < 28 * 28; p++)   /* a class-dependent blob plus noise */
                x[i * 784 + p] = tr_rng_uniform(&rng, 0.0f, 0.5f) +
                                 (((p / 28) / 3 == cls || (p % 28) / 3 == cls) ? 0.5f : 0.0f);
        }
        rc = tr_model_forward(&m, x, BATCH, 1);
        if (rc == 0)
            rc = tr_model_loss(&m, y, &loss, NULL);
        if (rc == 0)
            rc = tr_model_backward(&m);
        TH_CHECK(rc == 0, "step %d forward/backward: %s", s, tr_strerror(rc));
        rc = tr_allreduce(c, m.grads, m.n_params, TR_OP_AVG, TR_ALGO_RING);
        if (rc < 0)
            fault_msg(j, c, "gradient allreduce", rc);
        TH_CHECK(rc == 0, "step %d allreduce: %s", s, tr_strerror(rc));
        if (rc < 0)
            return 1;
        tr_sgd_step(&sgd, m.params, m.grads, m.momentum, m.n_params);
        printf("%s rank %d: step %d loss %.6f\n", j->label, j->rank, s, (double)loss);
    }
    printf("params %016" PRIx64 "\n", tr_fnv1a64(TR_FNV64_INIT, m.params, m.n_params * sizeof(float)));
    check_hash_agrees(c, j, m.params, m.n_params * sizeof(float), "trained params");
    return 0;
}

/* ---- bench: allreduce busbw ----------------------------------------------- */

static int run_bench(const struct ring_job *j, struct tr_comm *c)
{
    static const size_t sizes[] = { GRAD_FLOATS * 4u, 1u << 20 };
    unsigned k;
    for (k = 0; k < 2; k++) {
        size_t n = sizes[k] / 4, i;
        double best = 1e9, t;
        int it, rc = 0;
        for (i = 0; i < n; i++)
            buf_a[i] = (float)(i % 13);
        rc = tr_allreduce(c, buf_a, n, TR_OP_SUM, TR_ALGO_RING);   /* warm-up */
        for (it = 0; it < j->iters && rc == 0; it++) {
            /* each rep starts together so the slowest rank sets the time */
            rc = tr_barrier(c);
            t = now_s();
            if (rc == 0)
                rc = tr_allreduce(c, buf_a, n, TR_OP_SUM, TR_ALGO_RING);
            t = now_s() - t;
            if (t < best)
                best = t;
        }
        if (rc < 0)
            fault_msg(j, c, "bench allreduce", rc);
        TH_CHECK(rc == 0, "bench %zu bytes: %s", sizes[k], tr_strerror(rc));
        if (rc == 0 && j->rank == 0)
            printf("bench %s world %d bytes %zu best %.6f s busbw %.4f GB/s algbw %.4f GB/s\n",
                   j->label, j->world, sizes[k], best,
                   2.0 * (j->world - 1) / j->world * sizes[k] / best / 1e9,
                   sizes[k] / best / 1e9);
    }
    return 0;
}

/* ---- loop: run until something breaks ----------------------------------- */

static int run_loop(const struct ring_job *j, struct tr_comm *c)
{
    int it, rc = 0;
    size_t i, n = GRAD_FLOATS;
    for (it = 0; it < j->iters; it++) {
        for (i = 0; i < n; i++)
            buf_a[i] = (float)j->rank;
        rc = tr_allreduce(c, buf_a, n, TR_OP_SUM, TR_ALGO_RING);
        if (rc < 0)
            break;
        if (it == 0) {
            printf("%s rank %d: looping\n", j->label, j->rank);
            fflush(stdout);
        }
    }
    if (rc < 0) {
        fault_msg(j, c, "allreduce", rc);
        printf("%s rank %d: error after %d rounds: %s\n", j->label, j->rank, it, tr_strerror(rc));
        return 3;
    }
    printf("%s rank %d: %d rounds, no error\n", j->label, j->rank, it);
    return 0;
}

/* Before the process exits: keep the links serviced for a moment so the
 * last bytes we queued reach our neighbour, and read whatever still arrives
 * (a socket closed with unread input answers with a reset, which could cut
 * off a neighbour that has not read our last message yet). */
static void linger(const struct ring_job *j, const struct tr_transport *tp, uint32_t ms)
{
    uint8_t sink[4096];
    long stray = 0;
    int open[2] = { 1, 1 }, p;
    uint32_t t0 = tp->now_ms(tp->ctx);
    while ((uint32_t)(tp->now_ms(tp->ctx) - t0) < ms && (open[0] || open[1])) {
        unsigned want = 0;
        for (p = 0; p < 2; p++) {
            long n;
            if (!open[p])
                continue;
            n = tp->recv(tp->ctx, p, sink, sizeof sink);
            if (n > 0)
                stray += n;
            else if (n == TR_ERR_AGAIN)
                want |= TR_POLL_RECV(p);
            else
                open[p] = 0;
        }
        if (want && tp->poll(tp->ctx, want, 20) < 0)
            break;
    }
    if (stray)
        printf("%s rank %d: %ld unread bytes at exit\n", j->label, j->rank, stray);
}

/* ---- elastic: core's trainer, a lost rank survived ------------------------ */

/* Synthetic samples: class from the index, a class blob plus noise. */
static int syn_load(void *ctx, int split, const uint32_t *idx, unsigned n, uint8_t *pixels,
                    uint8_t *labels)
{
    unsigned i, p;
    (void)ctx;
    for (i = 0; i < n; i++) {
        uint32_t h = idx[i] * 2654435761u + (uint32_t)split * 97u;
        int cls = (int)((h >> 7) % 10u);
        labels[i] = (uint8_t)cls;
        for (p = 0; p < 784; p++) {
            uint32_t q = (h ^ (p * 40503u)) * 0x2c1b3c6du;
            int blob = (int)(p / 28) / 3 == cls || (int)(p % 28) / 3 == cls;
            pixels[i * 784 + p] = (uint8_t)(((q >> 13) & 127u) + (blob ? 128u : 0u));
        }
    }
    return 0;
}

static int elastic_event(const struct ring_job *j, struct tr_train *t, int ev,
                         const struct tr_train_report *r, const struct tr_transport *tp,
                         int *asked)
{
    int rank, world, source, rc;
    uint32_t epoch = 0;
    uint64_t step = 0;
    if (j->die_at > 0 && tr_train_position(t) == (uint64_t)j->die_at) {
        printf("%s rank %d: --die-at: killed at position %lld\n", j->label, j->rank, j->die_at);
        fflush(stdout);
        raise(SIGKILL);
    }
    if (ev == TR_TRAIN_STEP && r->global_step % 4 == 0) {
        printf("%s rank %d: step %llu\n", j->label, j->rank, (unsigned long long)r->global_step);
        fflush(stdout);
    }
    if (ev == TR_TRAIN_STEP && j->el->service && !*asked && j->el->service(j->el->ctx) > 0) {
        printf("%s rank %d: a process waits to join: change asked\n", j->label, j->rank);
        tr_train_request_change(t);
        *asked = 1;
    }
    if (ev != TR_TRAIN_LOST && ev != TR_TRAIN_CHANGE)
        return 0;
    *asked = 0;
    if (ev == TR_TRAIN_LOST) {
        const struct tr_comm_fault *f = tr_comm_last_fault(&t->comm);
        printf("%s rank %d: lost the ring at position %llu (%s, peer rank %d)\n", j->label,
               j->rank, (unsigned long long)tr_train_position(t), tr_comm_phase_name(f->phase),
               f->peer_rank);
    }
    rc = j->el->reform(j->el->ctx, tr_train_position(t), &rank, &world, &source, &epoch, &step);
    TH_CHECK(rc == 0, "membership round: %s", tr_strerror(rc));
    if (rc < 0)
        return rc;
    printf("%s rank %d: view %u: ring rank %d of %d, state from ring rank %d at position "
           "%llu\n", j->label, j->rank, (unsigned)epoch, rank, world, source,
           (unsigned long long)step);
    fflush(stdout);
    rc = tr_train_reform(t, rank, world, world > 1 ? tp : NULL, source);
    TH_CHECK(rc == 0, "tr_train_reform: %s", tr_strerror(rc));
    return rc;
}

static int run_elastic(const struct ring_job *j, const struct tr_transport *tp)
{
    static struct tr_train t;
    static uint8_t arena[16u << 20] __attribute__((aligned(64)));
    struct tr_train_config c;
    struct tr_train_report r;
    size_t need = 0;
    int ev, rc, asked = 0;
    memset(&c, 0, sizeof c);
    tr_model_desc_convnet(&c.model, 16, 32, 10);
    c.batch = 8;
    c.n_train = j->samples ? j->samples : 1536;
    c.load = syn_load;
    c.lr = 0.01f;
    c.momentum = 0.9f;
    c.seed = 42;
    c.algo = TR_ALGO_RING;
    c.epochs = (uint32_t)(j->iters > 0 ? j->iters : 1);
    c.rank = j->el->joiner ? j->el->rank : j->rank;
    c.world = j->el->joiner ? j->el->world : j->world;
    c.tp = c.world > 1 ? tp : NULL;
    c.job_token = j->token;
    c.timeout_ms = j->timeout_ms;
    c.segment_bytes = j->segment;
    c.elastic = 1;
    c.compress = j->compress;
    rc = tr_train_arena_size(&c, &need);
    TH_CHECK(rc == 0 && need <= sizeof arena, "arena %zu bytes: %s", need, tr_strerror(rc));
    if (rc < 0 || need > sizeof arena)
        return 1;
    rc = tr_train_init(&t, &c, arena, sizeof arena);
    TH_CHECK(rc == 0, "tr_train_init: %s", tr_strerror(rc));
    if (rc < 0)
        return 1;
    if (c.compress)
        printf("%s rank %d: compress %s, arena %zu bytes\n", j->label, j->rank,
               tr_codec_name(c.compress), need);
    tr_train_begin(&t, NULL, 0);
    if (j->el->joiner) {           /* started again: the state comes from the ring */
        rc = tr_train_reform(&t, j->el->rank, j->el->world, j->el->world > 1 ? tp : NULL,
                             j->el->source);
        TH_CHECK(rc == 0, "tr_train_reform of a joiner: %s", tr_strerror(rc));
        if (rc < 0)
            return 1;
    }
    while ((ev = tr_train_next(&t, &r)) > 0)
        if (elastic_event(j, &t, ev, &r, tp, &asked) < 0)
            return 1;
    if (ev < 0)
        fprintf(stderr, "%s rank %d: training failed: %s (%s)\n", j->label, j->rank,
                tr_strerror(ev), tr_train_what_name(tr_train_last_fault(&t)->what));
    TH_CHECK(ev == 0, "training: %s", tr_strerror(ev));
    printf("%s rank %d: done at step %llu, ring of %d\n", j->label, j->rank,
           (unsigned long long)t.global_step, t.cfg.world);
    printf("params %016" PRIx64 " buffers %016" PRIx64 "\n",
           tr_train_hash(t.model.params, t.model.n_params),
           tr_train_hash(t.model.buffers, t.model.n_buffers));
    fflush(stdout);
    return ev == 0 ? 0 : 1;
}

int ring_job_run(const struct ring_job *j, const struct tr_transport *tp)
{
    static struct tr_comm c;
    struct tr_comm_config cc;
    int rc, code = 0;
    fflush(stdout);
    if (strcmp(j->mode, "stream") == 0) {
        run_stream(j, tp);
        return th_report(j->suite);
    }
    if (strcmp(j->mode, "elastic") == 0) {
        code = j->el ? run_elastic(j, tp) : 2;
        return th_report(j->suite) | code;
    }
    memset(&cc, 0, sizeof cc);
    cc.rank = j->rank;
    cc.world = j->world;
    cc.timeout_ms = j->timeout_ms;
    cc.segment_bytes = j->segment;
    cc.job_token = j->token;
    cc.layout_hash = 0x5eedc0deu;
    if (strcmp(j->mode, "train") == 0) {   /* the model's own layout hash */
        struct tr_model_desc d;
        static uint8_t a2[4u << 20] __attribute__((aligned(16)));
        static struct tr_model m2;
        size_t bytes;
        tr_model_desc_convnet(&d, 16, 32, 10);
        if (tr_model_arena_size(&d, 8, &bytes) == 0 && bytes <= sizeof a2 &&
            tr_model_init(&m2, &d, 8, a2, bytes) == 0)
            cc.layout_hash = tr_model_layout_hash(&m2);
    }
    if (tr_comm_scratch_size(&cc) > sizeof scratch) {
        fprintf(stderr, "scratch too small for segment %u\n", j->segment);
        return 2;
    }
    rc = tr_comm_init(&c, &cc, tp, scratch, sizeof scratch);
    TH_CHECK(rc == 0, "tr_comm_init: %s", tr_strerror(rc));
    if (rc == 0) {
        rc = tr_comm_hello(&c);
        if (rc < 0)
            fault_msg(j, &c, "hello", rc);
        TH_CHECK(rc == 0, "tr_comm_hello: %s", tr_strerror(rc));
    }
    if (rc == 0) {
        if (strcmp(j->mode, "coll") == 0)
            code = run_coll(j, &c);
        else if (strcmp(j->mode, "train") == 0)
            code = run_train(j, &c);
        else if (strcmp(j->mode, "bench") == 0)
            code = run_bench(j, &c);
        else if (strcmp(j->mode, "loop") == 0)
            return run_loop(j, &c);
        else {
            fprintf(stderr, "unknown mode %s\n", j->mode);
            return 2;
        }
    }
    linger(j, tp, 300);
    fflush(stdout);
    return th_report(j->suite) | code;
}

int ring_job_arg(struct ring_job *j, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!v)
        return 0;
    if (!strcmp(a, "--rank")) j->rank = atoi(v);
    else if (!strcmp(a, "--world")) j->world = atoi(v);
    else if (!strcmp(a, "--token")) j->token = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--mode")) j->mode = v;
    else if (!strcmp(a, "--suite")) j->suite = v;
    else if (!strcmp(a, "--timeout")) j->timeout_ms = (uint32_t)strtoul(v, NULL, 0);
    else if (!strcmp(a, "--segment")) j->segment = (uint32_t)strtoul(v, NULL, 0);
    else if (!strcmp(a, "--iters")) j->iters = atoi(v);
    else if (!strcmp(a, "--bytes")) j->bytes = strtol(v, NULL, 0);
    else if (!strcmp(a, "--samples")) j->samples = (uint32_t)strtoul(v, NULL, 0);
    else if (!strcmp(a, "--die-at")) j->die_at = strtoll(v, NULL, 0);
    else if (!strcmp(a, "--compress")) {
        for (j->compress = 0; j->compress < TR_CODEC_COUNT && strcmp(v, tr_codec_name(j->compress));
             j->compress++)
            ;
        if (j->compress == TR_CODEC_COUNT) {
            fprintf(stderr, "--compress %s: want none, bf16, int8 or int4\n", v);
            exit(2);
        }
    } else return 0;
    *i += 1;
    return 1;
}
