/* tinyring: allreduce latency and bus bandwidth over the POSIX port, one
 * rank per process (test/bench/comm/run.sh starts N of them).
 *
 *   tr_bench_comm --init tcp://127.0.0.1:P --rank R --world N [--algo ring|chain|rb]
 *                 [--sizes B,B,...] [--budget-ms T] [--segment B] [--sockbuf B]
 *                 [--spin-us U]
 *
 * For each size (bytes, a multiple of 4): 2 warm-up allreduces, then rank 0
 * picks an iteration count that fills about budget-ms and broadcasts it; a
 * barrier; the timed loop. Rank 0 prints one line per size:
 *   tinyring ALGO N BYTES ITERS USEC_PER_OP ALGBW_GBS BUSBW_GBS
 * busbw = bytes / time * 2 (N-1) / N, as nccl-tests reports it.
 * Only rank 0's clock is used: every allreduce ends after every rank's data
 * reached every rank, so the loop time is the same everywhere up to one hop.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tinyring.h"
#include "tr_posix.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(struct tr_comm *c, int rank, int rc, const char *what)
{
    const struct tr_comm_fault *f = tr_comm_last_fault(c);
    fprintf(stderr, "rank %d: %s: %s (phase %s, peer rank %d)\n", rank, what,
            tr_strerror(rc), tr_comm_phase_name(f->phase), f->peer_rank);
    return 1;
}

int main(int argc, char **argv)
{
    static const char *default_sizes =
        "4096,16384,65536,116136,262144,1048576,4194304,16777216,67108864";
    struct tr_posix_config pc;
    struct tr_posix px;
    struct tr_transport tp;
    struct tr_comm_config cc;
    struct tr_comm comm;
    const char *sizes = default_sizes, *algo_s = "ring", *p;
    enum tr_algo algo = TR_ALGO_RING;
    double budget = 0.25;
    uint32_t segment = 0;
    size_t max_bytes = 0, i;
    float *buf;
    void *scratch;
    char err[512];
    int a, rc, sockbuf = 0;

    tr_posix_config_default(&pc);
    pc.job_token = tr_posix_token(getenv("TINYRING_JOB"));
    for (a = 1; a + 1 < argc; a += 2) {
        const char *k = argv[a], *v = argv[a + 1];
        if (!strcmp(k, "--init")) pc.init_method = v;
        else if (!strcmp(k, "--rank")) pc.rank = atoi(v);
        else if (!strcmp(k, "--world")) pc.world = atoi(v);
        else if (!strcmp(k, "--algo")) algo_s = v;
        else if (!strcmp(k, "--sizes")) sizes = v;
        else if (!strcmp(k, "--budget-ms")) budget = atof(v) / 1000.0;
        else if (!strcmp(k, "--segment")) segment = (uint32_t)atol(v);
        else if (!strcmp(k, "--sockbuf")) sockbuf = atoi(v);
        else if (!strcmp(k, "--spin-us")) pc.spin_us = (uint32_t)atol(v);
        else {
            fprintf(stderr, "unknown option %s\n", k);
            return 2;
        }
    }
    if (!strcmp(algo_s, "chain")) algo = TR_ALGO_CHAIN;
    else if (!strcmp(algo_s, "rb")) algo = TR_ALGO_REDUCE_BCAST;
    pc.sndbuf = pc.rcvbuf = sockbuf;
    for (p = sizes; *p; ) {
        size_t b = (size_t)strtoull(p, (char **)&p, 10);
        if (b > max_bytes)
            max_bytes = b;
        if (*p == ',')
            p++;
        else if (*p)
            return 2;
    }
    rc = tr_posix_connect(&px, &pc, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "rank %d: %s\n", px.rank, err);
        return 1;
    }
    tr_posix_transport(&px, &tp);
    memset(&cc, 0, sizeof cc);
    cc.rank = px.rank;
    cc.world = px.world;
    cc.timeout_ms = 30000;
    cc.segment_bytes = segment;
    cc.job_token = px.job_token;
    cc.layout_hash = 0xbe4c4u;
    scratch = aligned_alloc(64, (tr_comm_scratch_size(&cc) + 63) & ~(size_t)63);
    buf = aligned_alloc(64, (max_bytes + 63) & ~(size_t)63);
    if (!scratch || !buf)
        return 1;
    for (i = 0; i < max_bytes / 4; i++)
        buf[i] = (float)((i + (size_t)px.rank) & 7) * 0.125f;
    rc = tr_comm_init(&comm, &cc, px.world > 1 ? &tp : NULL, scratch, tr_comm_scratch_size(&cc));
    if (rc == 0)
        rc = tr_comm_hello(&comm);
    if (rc < 0)
        return fail(&comm, px.rank, rc, "init/hello");

    for (p = sizes; *p; ) {
        size_t bytes = (size_t)strtoull(p, (char **)&p, 10), n = bytes / 4;
        int32_t iters;
        double t0, t, us, algbw;
        if (*p == ',')
            p++;
        t0 = now_s();
        for (a = 0; a < 2; a++)
            if ((rc = tr_allreduce(&comm, buf, n, TR_OP_SUM, algo)) < 0)
                return fail(&comm, px.rank, rc, "warm-up allreduce");
        t = (now_s() - t0) / 2.0;
        iters = (int32_t)(budget / (t > 1e-7 ? t : 1e-7));
        if (iters < 3) iters = 3;
        if (iters > 20000) iters = 20000;
        if ((rc = tr_broadcast(&comm, &iters, sizeof iters, 0)) < 0)
            return fail(&comm, px.rank, rc, "broadcast");
        if ((rc = tr_barrier(&comm)) < 0)
            return fail(&comm, px.rank, rc, "barrier");
        t0 = now_s();
        for (a = 0; a < iters; a++)
            if ((rc = tr_allreduce(&comm, buf, n, TR_OP_SUM, algo)) < 0)
                return fail(&comm, px.rank, rc, "allreduce");
        t = (now_s() - t0) / iters;
        us = t * 1e6;
        algbw = (double)bytes / t / 1e9;
        if (px.rank == 0)
            printf("tinyring %s %d %zu %d %.2f %.3f %.3f\n", algo_s, px.world, bytes,
                   (int)iters, us, algbw, algbw * 2.0 * (px.world - 1) / px.world);
        fflush(stdout);
    }
    tr_posix_close(&px);
    free(buf);
    free(scratch);
    return 0;
}
