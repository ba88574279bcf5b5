/* tinyring test: every collective on the simulated transport, over world
 * sizes 1..8, element counts 0, 1, primes, not divisible by the world, up to
 * 16 Mi, with partial writes and would-block; results within float tolerance
 * of a double serial sum and bitwise equal on all ranks; buffers fenced by
 * canaries. Faults are in test_comm_faults.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "comm_util.h"
#include "tr_comm_internal.h"
#include "tr_error.h"

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

/* The same collectives through a hostile transport: partial writes down to
 * one byte, would-block every n-th call, FIFOs smaller than a segment, and a
 * shuffled schedule. Results must not change. */
static void test_knobs(void)
{
    static const struct knobs ks[] = {
        {1, 0, 0, 0},  {7, 3, 1, 0},  {0, 2, 1, 0},
        {0, 0, 1, 50}, {13, 5, 1, 97}, {1000, 0, 1, 3000},
    };
    static const int worlds[] = {2, 3, 5, 8};
    static const size_t ns[] = {1, 13, 1009, 4099};
    size_t ki, wi, ni;
    int algo;
    for (ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (wi = 0; wi < sizeof worlds / sizeof worlds[0]; wi++)
            for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                for (algo = 0; algo < 3; algo++)
                    TH_CHECK(run_float(worlds[wi], ns[ni], W_ALLREDUCE, algo == 1, algo, 0, 256,
                                       &ks[ki]),
                             "knobs %zu: %s world=%d count=%zu", ki, algo_name(algo),
                             worlds[wi], ns[ni]);
                TH_CHECK(run_float(worlds[wi], ns[ni], W_REDUCE, TR_OP_AVG, 0, worlds[wi] - 1,
                                   128, &ks[ki]),
                         "knobs %zu: reduce world=%d count=%zu", ki, worlds[wi], ns[ni]);
                TH_CHECK(run_bcast(worlds[wi], ns[ni] * 4 + 3, 1, 64, &ks[ki]),
                         "knobs %zu: broadcast world=%d", ki, worlds[wi]);
            }
}

/* Large buffers with the default (256 KiB) segments; 16 Mi elements for a
 * couple of world sizes only, to keep the suite short. */
static void test_large(void)
{
    struct knobs k = {0, 0, 0, 256 * 1024};
    TH_CHECK(run_float(2, 16u << 20, W_ALLREDUCE, TR_OP_AVG, TR_ALGO_RING, 0, 0, &k),
             "ring avg world=2 count=16Mi");
    TH_CHECK(run_float(3, (16u << 20) + 1, W_ALLREDUCE, TR_OP_SUM, TR_ALGO_RING, 0, 0, &k),
             "ring sum world=3 count=16Mi+1");
    TH_CHECK(run_float(5, (1u << 20) + 7, W_ALLREDUCE, TR_OP_SUM, TR_ALGO_CHAIN, 0, 0, &k),
             "chain world=5 count=1Mi+7");
    TH_CHECK(run_float(4, (1u << 20) + 3, W_ALLREDUCE, TR_OP_AVG, TR_ALGO_REDUCE_BCAST, 0, 0, &k),
             "reduce+bcast world=4 count=1Mi+3");
    TH_CHECK(run_float(8, (2u << 20) + 5, W_ALLREDUCE, TR_OP_AVG, TR_ALGO_RING, 0, 0, &k),
             "ring avg world=8 count=2Mi+5");
}

/* Back to back, as an application runs them: each rank starts its next
 * collective as soon as its previous one finished, so ranks are in
 * different collectives at the same time. */
static void test_sequence(void)
{
    int world;
    for (world = 2; world <= 6; world++) {
        struct job j;
        enum { STEPS = 12 };
        float *buf[SIM_MAX_WORLD];
        uint8_t bytes[SIM_MAX_WORLD][77];
        int step[SIM_MAX_WORLD], r, ok = 1, done = 0;
        long guard = 0;
        size_t n = 997, i;

        if (job_open(&j, world, 128, 700, 1000) < 0) {
            TH_CHECK(0, "hello world %d", world);
            job_free(&j);
            continue;
        }
        for (r = 0; r < world; r++) {
            buf[r] = alloc_buf(n);
            for (i = 0; i < n; i++)
                buf[r][i] = (float)(r + 1);
            step[r] = 0;
            j.rc[r] = 0;
        }
        while (done < world && guard++ < 1000000) {
            done = 0;
            for (r = 0; r < world; r++) {
                if (j.rc[r] == TR_ERR_AGAIN) {
                    j.rc[r] = tr_comm_progress(&j.c[r]);
                } else if (j.rc[r] < 0) {
                    ok = 0;
                    done++;
                } else if (step[r] == STEPS) {
                    done++;
                } else {
                    /* steps: allreduce ring, barrier, broadcast, chain, reduce */
                    switch (step[r] % 6) {
                    case 0: j.rc[r] = tr_allreduce_start(&j.c[r], buf[r], n, TR_OP_AVG, TR_ALGO_RING); break;
                    case 1: j.rc[r] = tr_barrier_start(&j.c[r]); break;
                    case 2:
                        memset(bytes[r], r == 1 ? step[r] : 0, sizeof bytes[r]);
                        j.rc[r] = tr_broadcast_start(&j.c[r], bytes[r], sizeof bytes[r], 1);
                        break;
                    case 3: j.rc[r] = tr_allreduce_start(&j.c[r], buf[r], n, TR_OP_SUM, TR_ALGO_CHAIN); break;
                    case 4: j.rc[r] = tr_allreduce_start(&j.c[r], buf[r], n, TR_OP_AVG, TR_ALGO_REDUCE_BCAST); break;
                    default: j.rc[r] = tr_barrier_start(&j.c[r]); break;
                    }
                    step[r]++;
                }
            }
        }
        /* values start at r+1: avg -> (w+1)/2, chain sum -> w(w+1)/2, avg
         * keeps it; the second round's sum -> w*w(w+1)/2 (all exact) */
        for (r = 0; r < world && ok; r++) {
            float want = (float)(world * world * (world + 1)) / 2.0f;
            for (i = 0; i < n; i++)
                if (buf[r][i] != want || memcmp(buf[r], buf[0], n * sizeof(float)))
                    ok = 0;
            if (bytes[r][76] != 8)
                ok = 0;
            ok &= canary_ok(buf[r], n);
        }
        TH_CHECK(ok && done == world, "back-to-back collectives, world %d", world);
        for (r = 0; r < world; r++)
            free(buf[r]);
        job_free(&j);
    }
}

/* Bitwise equality even for NaN payloads, signed zeros and infinities, for
 * every algorithm at world 2 (the exchange path) and 3. */
static void test_special_values(void)
{
    int world, algo, op;
    for (world = 2; world <= 3; world++)
        for (algo = 0; algo < 3; algo++)
            for (op = 0; op < 2; op++) {
                struct job j;
                float buf[3][16];
                uint32_t bits;
                int r, ok = 1;
                if (job_open(&j, world, 0, 4096, 1000) < 0) {
                    TH_CHECK(0, "hello");
                    job_free(&j);
                    continue;
                }
                for (r = 0; r < world; r++) {
                    int i;
                    for (i = 0; i < 16; i++)
                        buf[r][i] = val(r, (size_t)i, 5);
                    bits = 0x7FC00001u + (uint32_t)r;     /* NaNs, payload per rank */
                    memcpy(&buf[r][0], &bits, 4);
                    bits = 0xFFC00010u + (uint32_t)r;
                    memcpy(&buf[r][1], &bits, 4);
                    buf[r][2] = r ? -0.0f : 0.0f;
                    buf[r][3] = r == 0 ? 1e30f * 1e30f : -(1e30f * 1e30f);
                    buf[r][4] = 3e38f;                     /* overflows to inf */
                }
                for (r = 0; r < world; r++)
                    j.rc[r] = tr_allreduce_start(&j.c[r], buf[r], 16, (enum tr_op)op,
                                                 (enum tr_algo)algo);
                sim_run(&j.net, j.c, j.rc, 10000, 1);
                for (r = 1; r < world; r++)
                    if (memcmp(buf[r], buf[0], sizeof buf[0]))
                        ok = 0;
                TH_CHECK(all_rc(&j, 0) && ok && buf[0][0] != buf[0][0] &&
                             buf[0][3] != buf[0][3] && buf[0][4] > 3e38f,
                         "special values bitwise equal: %s op=%d world=%d", algo_name(algo), op,
                         world);
                job_free(&j);
            }
}

/* The fast reduction kernels agree bitwise with their plain references. */
static void test_kernels(void)
{
    enum { N = 1031 };
    static float a[N], b[N], s[N], ra[N];
    size_t n, i;
    int ok = 1;
    for (n = 0; n <= N; n += n < 40 ? 1 : 197) {
        for (i = 0; i < n; i++) {
            a[i] = ra[i] = val(1, i, (unsigned)n) * 1e3f;
            s[i] = val(2, i, (unsigned)n);
        }
        tr_comm_sum(a, s, n);
        tr_comm_sum_ref(ra, s, n);
        ok &= memcmp(a, ra, n * sizeof(float)) == 0;
        tr_comm_sum_div(a, s, n, 7.0f);
        tr_comm_sum_div_ref(ra, s, n, 7.0f);
        ok &= memcmp(a, ra, n * sizeof(float)) == 0;
        tr_comm_rsum(a, s, n);
        tr_comm_rsum_ref(ra, s, n);
        ok &= memcmp(a, ra, n * sizeof(float)) == 0;
        tr_comm_rsum_div(a, s, n, 3.0f);
        tr_comm_rsum_div_ref(ra, s, n, 3.0f);
        ok &= memcmp(a, ra, n * sizeof(float)) == 0;
        for (i = 0; i < n; i++)
            b[i] = a[i];
        tr_comm_div(a, n, 1.0f);
        ok &= memcmp(a, b, n * sizeof(float)) == 0;
    }
    TH_CHECK(ok, "reduction kernels equal their references bitwise");
}

/* A vector reduced range by range (buckets, as the trainer's overlap cuts
 * a gradient) ends with the bits of one whole allreduce on every rank, for
 * every algorithm, op and cut (empty ranges, ranges inside one ring chunk,
 * across several), with small segments and with one that makes world 2 an
 * exchange. Each range sits in a buffer of its own (buf[0] = element lo),
 * fenced by canaries. */
static int range_case(int world, size_t n, int algo, int op, uint32_t seg,
                      const size_t *cut, int ncut)
{
    struct job jw, jr;
    float *whole[SIM_MAX_WORLD], *part[SIM_MAX_WORLD];
    int r, k, ok = 1;
    size_t i;
    unsigned salt = (unsigned)(n * 7 + (size_t)world * 3 + (size_t)algo);

    if (job_open(&jw, world, seg, 1u << 14, 2000) < 0 ||
        job_open(&jr, world, seg, 1u << 14, 2000) < 0)
        return 0;
    for (r = 0; r < world; r++) {
        whole[r] = alloc_buf(n);
        for (i = 0; i < n; i++)
            whole[r][i] = val(r, i, salt);
        jw.rc[r] = tr_allreduce_start(&jw.c[r], whole[r], n, (enum tr_op)op,
                                      (enum tr_algo)algo);
    }
    sim_run(&jw.net, jw.c, jw.rc, 1000000, 0);
    ok &= all_rc(&jw, 0);
    for (k = 0; k + 1 < ncut && ok; k++) {
        size_t lo = cut[k], hi = cut[k + 1];
        for (r = 0; r < world; r++) {
            part[r] = alloc_buf(hi - lo);
            for (i = lo; i < hi; i++)
                part[r][i - lo] = val(r, i, salt);
            jr.rc[r] = tr_allreduce_range_start(&jr.c[r], part[r], n, lo, hi, (enum tr_op)op,
                                                (enum tr_algo)algo);
        }
        sim_run(&jr.net, jr.c, jr.rc, 1000000, 0);
        ok &= all_rc(&jr, 0);
        for (r = 0; r < world; r++) {
            ok &= ok && memcmp(part[r], whole[r] + lo, (hi - lo) * sizeof(float)) == 0;
            ok &= canary_ok(part[r], hi - lo);
            free(part[r]);
        }
    }
    for (r = 0; r < world; r++)
        free(whole[r]);
    job_free(&jw);
    job_free(&jr);
    return ok;
}

static void test_range(void)
{
    static const size_t sizes[] = {1, 7, 97, 1009, 4099};
    int world, algo, op;
    size_t si;
    for (world = 1; world <= 6; world++)
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (algo = 0; algo < 3; algo++)
                for (op = 0; op < 2; op++) {
                    size_t n = sizes[si];
                    /* the seed's bucket shape (small head, a large middle,
                     * the largest last) with an empty range and a one */
                    size_t cut[7];
                    cut[0] = 0;
                    cut[1] = n / 61;
                    cut[2] = cut[1];
                    cut[3] = n / 2 < cut[2] + 1 ? cut[2] : n / 2 - 1;
                    cut[4] = cut[3] + (n - cut[3] > 1 ? 1 : 0);
                    cut[5] = cut[4] + (n - cut[4]) / 3;
                    cut[6] = n;
                    TH_CHECK(range_case(world, n, algo, op, 64, cut, 7),
                             "ranges = whole, %s op=%d world=%d count=%zu seg 64",
                             algo_name(algo), op, world, n);
                    TH_CHECK(range_case(world, n, algo, op, 1u << 16, cut, 7),
                             "ranges = whole, %s op=%d world=%d count=%zu one segment",
                             algo_name(algo), op, world, n);
                }
}

/* Ranks that disagree on the range are refused, not summed wrongly. */
static void test_range_mismatch(void)
{
    struct job j;
    float a[64], b[64];
    size_t i;
    int ok;
    if (job_open(&j, 3, 64, 1u << 14, 500) < 0) {
        TH_CHECK(0, "hello for the range mismatch");
        return;
    }
    for (i = 0; i < 64; i++)
        a[i] = b[i] = 1.0f;
    j.rc[0] = tr_allreduce_range_start(&j.c[0], a, 300, 10, 74, TR_OP_SUM, TR_ALGO_RING);
    j.rc[1] = tr_allreduce_range_start(&j.c[1], b, 300, 11, 75, TR_OP_SUM, TR_ALGO_RING);
    j.rc[2] = tr_allreduce_range_start(&j.c[2], b, 300, 10, 74, TR_OP_SUM, TR_ALGO_RING);
    sim_run(&j.net, j.c, j.rc, 100000, 0);
    ok = j.rc[0] < 0 && j.rc[0] != TR_ERR_AGAIN && j.rc[1] < 0 && j.rc[1] != TR_ERR_AGAIN;
    TH_CHECK(ok, "ranges that differ between ranks fail (rc %d %d %d)", j.rc[0], j.rc[1],
             j.rc[2]);
    job_free(&j);
    job_init(&j, 1, 64, 1u << 14, 500);
    TH_CHECK(tr_allreduce_range_start(&j.c[0], a, 10, 5, 4, TR_OP_SUM, TR_ALGO_RING) ==
                 TR_ERR_INVAL &&
             tr_allreduce_range_start(&j.c[0], a, 10, 5, 11, TR_OP_SUM, TR_ALGO_RING) ==
                 TR_ERR_INVAL &&
             tr_allreduce_range_start(&j.c[0], a, 10, 10, 10, TR_OP_AVG, TR_ALGO_RING) == 0,
             "range arguments: lo > hi and hi > count refused, an empty range is fine");
    job_free(&j);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    test_kernels();
    test_range();
    test_range_mismatch();
    test_special_values();
    test_grid();
    test_reduce_bcast_barrier_grid();
    test_barrier();
    test_knobs();
    test_sequence();
    test_large();
    return th_report("comm");
}
