/* tinyring test: faults on the simulated transport give their error codes,
 * fill struct tr_comm_fault, never hang (simulated clock, bounded rounds) and
 * never write past a buffer; hello refuses mismatches and strangers on every
 * rank; the API edges (sizes, world 1, busy, broken, blocking forms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "comm_util.h"
#include "tr_comm_internal.h"
#include "tr_error.h"

#define COUNT 4099

/* A ring allreduce of COUNT floats on an open job; rank r uses counts[r]
 * when counts is given. Buffers are checked for canaries. Returns the
 * simulated ms it took, or -1 if the run hit its bound. */
static long run_ar(struct job *j, const size_t *counts, int algo, const int *ops)
{
    float *buf[SIM_MAX_WORLD];
    size_t n[SIM_MAX_WORLD];
    uint32_t t0 = j->net.now;
    long rounds;
    int r, canaries = 1;

    for (r = 0; r < j->world; r++) {
        size_t i;
        n[r] = counts ? counts[r] : COUNT;
        buf[r] = alloc_buf(n[r]);
        for (i = 0; i < n[r]; i++)
            buf[r][i] = val(r, i, 7);
    }
    for (r = 0; r < j->world; r++)
        j->rc[r] = tr_allreduce_start(&j->c[r], buf[r], n[r],
                                      ops ? (enum tr_op)ops[r] : TR_OP_SUM, (enum tr_algo)algo);
    rounds = sim_run(&j->net, j->c, j->rc, 20000, 1);
    for (r = 0; r < j->world; r++) {
        canaries &= canary_ok(buf[r], n[r]);
        free(buf[r]);
    }
    TH_CHECK(canaries, "a fault let a rank write past its buffer");
    TH_CHECK(rounds >= 0, "a fault made the job hang (rounds bound hit)");
    return rounds < 0 ? -1 : (long)(j->net.now - t0);
}

static int is_err(int rc) { return rc < 0 && rc != TR_ERR_AGAIN; }

/* every rank except skip ended with an error */
static int all_failed(const struct job *j, int skip)
{
    int r;
    for (r = 0; r < j->world; r++)
        if (r != skip && !is_err(j->rc[r]))
            return 0;
    return 1;
}

/* ---- transport faults during a collective ------------------------------- */

static void test_peer_death(void)
{
    static const long after[] = {0, 1, 31, 32, 33, 1000, 9000};
    size_t i;
    int algo;
    for (algo = 0; algo < 3; algo++)
        for (i = 0; i < sizeof after / sizeof after[0]; i++) {
            struct job j;
            int dead = 2, right = 3;
            if (job_open(&j, 4, 256, 4096, 500) < 0) {
                TH_CHECK(0, "hello");
                job_free(&j);
                continue;
            }
            j.net.ep[dead].die_after = (int64_t)j.net.ep[dead].sent + after[i];
            run_ar(&j, NULL, algo, NULL);
            TH_CHECK(all_failed(&j, dead), "%s: rank dies after %ld bytes: not all failed",
                     algo_name(algo), after[i]);
            /* the rank reading from the dead one sees it close */
            TH_CHECK(j.rc[right] == TR_ERR_CLOSED && j.c[right].fault.code == TR_ERR_CLOSED &&
                     j.c[right].fault.peer == TR_LEFT && j.c[right].fault.peer_rank == dead &&
                     j.c[right].fault.seq == 1,
                     "%s: death after %ld: rank %d rc=%d peer=%d peer_rank=%d", algo_name(algo),
                     after[i], right, j.rc[right], j.c[right].fault.peer,
                     j.c[right].fault.peer_rank);
            job_free(&j);
        }
}

struct corrupt_case {
    int at;        /* byte of the first data header */
    int want;      /* error on the receiving rank */
    const char *what;
};

static void test_garbage(void)
{
    static const struct corrupt_case cases[] = {
        {0, TR_ERR_PROTO, "magic"},   {3, TR_ERR_PROTO, "magic"},
        {4, TR_ERR_PROTO, "version"}, {5, TR_ERR_MISMATCH, "kind"},
        {6, TR_ERR_MISMATCH, "op"},   {7, TR_ERR_PROTO, "flags"},
        {8, TR_ERR_PROTO, "seq"},     {12, TR_ERR_PROTO, "step"},
        {20, TR_ERR_PROTO, "offset"}, {24, TR_ERR_PROTO, "length"},
        {26, TR_ERR_PROTO, "length"}, {28, TR_ERR_MISMATCH, "total"},
    };
    size_t i;
    int world;
    for (world = 2; world <= 5; world += 3)
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            struct job j;
            struct sim_fifo *f;
            if (job_open(&j, world, 256, 4096, 500) < 0) {
                TH_CHECK(0, "hello");
                job_free(&j);
                continue;
            }
            f = sim_out(&j.net, 0, TR_RIGHT);
            f->corrupt_at = (int64_t)f->written + cases[i].at;
            f->corrupt_xor = 0x40;
            run_ar(&j, NULL, TR_ALGO_RING, NULL);
            TH_CHECK(j.rc[1] == cases[i].want && j.c[1].fault.peer == TR_LEFT &&
                     j.c[1].fault.peer_rank == 0 &&
                     j.c[1].fault.phase == TR_PHASE_REDUCE_SCATTER && j.c[1].fault.seq == 1,
                     "world %d, corrupt %s byte %d: rank 1 rc=%d phase=%d peer=%d", world,
                     cases[i].what, cases[i].at, j.rc[1], j.c[1].fault.phase,
                     j.c[1].fault.peer);
            TH_CHECK(all_failed(&j, -1), "world %d, corrupt %s: a rank did not fail", world,
                     cases[i].what);
            job_free(&j);
        }
    /* garbage bytes in the middle of a stream (after the first segment) */
    {
        struct job j;
        static const char junk[] = "\x17\x03\x03garbage that is not a tinyring header at all";
        if (job_open(&j, 3, 256, 1 << 16, 500) == 0) {
            sim_inject(sim_out(&j.net, 1, TR_RIGHT), junk, sizeof junk);
            run_ar(&j, NULL, TR_ALGO_CHAIN, NULL);
            TH_CHECK(j.rc[2] == TR_ERR_PROTO && j.c[2].fault.peer_rank == 1,
                     "injected garbage: rank 2 rc=%d", j.rc[2]);
            TH_CHECK(all_failed(&j, -1), "injected garbage: a rank did not fail");
        } else {
            TH_CHECK(0, "hello");
        }
        job_free(&j);
    }
}

static void test_timeout(void)
{
    int algo;
    for (algo = 0; algo < 3; algo++) {
        struct job j;
        int silent = 2, r, ok = 1;
        long ms;
        if (job_open(&j, 4, 256, 4096, 500) < 0) {
            TH_CHECK(0, "hello");
            job_free(&j);
            continue;
        }
        j.net.ep[silent].silent = 1;
        j.net.keep_failed = 1;              /* every rank must time out itself */
        ms = run_ar(&j, NULL, algo, NULL);
        for (r = 0; r < 4; r++)
            if (r != silent && j.rc[r] != TR_ERR_TIMEOUT)
                ok = 0;
        TH_CHECK(ok, "%s: silent rank: not every rank timed out", algo_name(algo));
        TH_CHECK(ms >= 500 && ms < 2000, "%s: timed out after %ld simulated ms (timeout 500)",
                 algo_name(algo), ms);
        TH_CHECK(j.c[3].fault.peer == TR_LEFT && j.c[3].fault.peer_rank == silent &&
                     j.c[3].fault.phase != TR_PHASE_NONE,
                 "%s: timeout fault names the silent neighbour (peer=%d rank=%d)",
                 algo_name(algo), j.c[3].fault.peer, j.c[3].fault.peer_rank);
        job_free(&j);
    }
}

/* a peer that calls with another count, op or algorithm */
static void test_call_mismatch(void)
{
    int algo, world;
    for (world = 2; world <= 4; world++)
        for (algo = 0; algo < 3; algo++) {
            struct job j;
            size_t n[SIM_MAX_WORLD];
            int ops[SIM_MAX_WORLD], r, any;
            for (r = 0; r < world; r++) {
                n[r] = r == 1 ? COUNT + 1 : COUNT;
                ops[r] = TR_OP_SUM;
            }
            if (job_open(&j, world, 256, 4096, 500) < 0) {
                TH_CHECK(0, "hello");
                job_free(&j);
                continue;
            }
            run_ar(&j, n, algo, NULL);
            any = 0;
            for (r = 0; r < world; r++)
                any |= j.rc[r] == TR_ERR_MISMATCH || j.rc[r] == TR_ERR_PROTO;
            TH_CHECK(all_failed(&j, -1) && any, "%s world %d: count mismatch not reported",
                     algo_name(algo), world);
            job_free(&j);

            /* op */
            if (job_open(&j, world, 256, 4096, 500) < 0)
                continue;
            ops[world - 1] = TR_OP_AVG;
            run_ar(&j, NULL, algo, ops);
            any = 0;
            for (r = 0; r < world; r++)
                any |= j.rc[r] == TR_ERR_MISMATCH;
            TH_CHECK(all_failed(&j, -1) && any, "%s world %d: op mismatch not reported",
                     algo_name(algo), world);
            job_free(&j);
        }
    /* count 0 on one rank, data on the others */
    {
        struct job j;
        size_t n[3] = {0, 100, 100};
        if (job_open(&j, 3, 256, 4096, 500) == 0) {
            run_ar(&j, n, TR_ALGO_RING, NULL);
            TH_CHECK(all_failed(&j, -1), "count 0 vs 100: not all failed");
            TH_CHECK(j.rc[1] == TR_ERR_MISMATCH, "count 0 vs 100: rank 1 rc=%d", j.rc[1]);
        }
        job_free(&j);
    }
    /* a different collective: broadcast against allreduce */
    {
        struct job j;
        float a[64 + CANARY], b[64 + CANARY];
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        if (job_open(&j, 2, 256, 4096, 500) == 0) {
            j.rc[0] = tr_allreduce_start(&j.c[0], a, 64, TR_OP_SUM, TR_ALGO_RING);
            j.rc[1] = tr_broadcast_start(&j.c[1], b, 64 * 4, 1);
            sim_run(&j.net, j.c, j.rc, 5000, 0);
            /* the broadcast root only sends, so only rank 0 can notice */
            TH_CHECK(j.rc[0] == TR_ERR_MISMATCH, "allreduce vs broadcast: rank 0 rc=%d", j.rc[0]);
        }
        job_free(&j);
    }
}

/* ---- hello ----------------------------------------------------------------- */

enum hello_fault { HF_TOKEN, HF_WORLD, HF_LAYOUT, HF_SEGMENT, HF_RANKS };

static void test_hello_mismatch(void)
{
    static const char *names[] = {"token", "world", "layout", "segment", "ring order"};
    int world, f;
    for (world = 2; world <= 6; world++)
        for (f = HF_TOKEN; f <= HF_RANKS; f++) {
            struct job j;
            int r, ok = 1;
            if (f == HF_RANKS && world < 3)
                continue;
            if (job_init(&j, world, 0, 4096, 500) < 0) {
                TH_CHECK(0, "init");
                continue;
            }
            if (f == HF_TOKEN)
                j.c[1].cfg.job_token ^= 1;
            else if (f == HF_WORLD)
                j.c[1].cfg.world = world + 1;
            else if (f == HF_LAYOUT)
                j.c[1].cfg.layout_hash += 1;
            else if (f == HF_SEGMENT)
                j.c[1].cfg.segment_bytes = 1024;
            else {                          /* ranks 1 and 2 swapped places */
                j.c[1].cfg.rank = 2;
                j.c[2].cfg.rank = 1;
            }
            j.net.keep_failed = 1;
            for (r = 0; world >= 4 && r < world; r++) {
                j.net.ep[r].max_write = 5;      /* and through a hostile link */
                j.net.ep[r].again_every = 3;
            }
            for (r = 0; r < world; r++)
                j.rc[r] = tr_comm_hello_start(&j.c[r]);
            sim_run(&j.net, j.c, j.rc, 5000, 1);
            for (r = 0; r < world; r++) {
                const struct tr_comm_fault *ft = tr_comm_last_fault(&j.c[r]);
                if (j.rc[r] != TR_ERR_MISMATCH || ft->code != TR_ERR_MISMATCH ||
                    ft->phase != TR_PHASE_HELLO || ft->peer_rank < 0) {
                    fprintf(stderr, "  %s world %d rank %d: rc=%d phase=%d peer_rank=%d\n",
                            names[f], world, r, j.rc[r], ft->phase, ft->peer_rank);
                    ok = 0;
                }
            }
            TH_CHECK(ok, "hello %s mismatch, world %d: not TR_ERR_MISMATCH on every rank",
                     names[f], world);
            /* and the communicator stays refused */
            TH_CHECK(tr_barrier_start(&j.c[0]) == TR_ERR_MISMATCH,
                     "after a failed hello a collective must not start");
            job_free(&j);
        }
}

/* Rank 1 is not a tinyring rank: it stays silent and bytes of our choosing
 * appear on its links. */
static void fake_rank(struct job *j, const uint8_t *msg, size_t n)
{
    j->net.ep[1].silent = 1;
    sim_inject(sim_out(&j->net, 1, TR_LEFT), msg, n);
    sim_inject(sim_out(&j->net, 1, TR_RIGHT), msg, n);
}

static void craft_hello(uint8_t msg[64], uint8_t version, uint32_t bom, int rank, int world)
{
    struct tr_wire_hdr h;
    struct tr_wire_hello m;
    memset(&h, 0, sizeof h);
    h.magic = TR_WIRE_MAGIC;
    h.version = version;
    h.kind = TR_KIND_HELLO;
    h.length = h.total = TR_WIRE_HELLO_BYTES;
    m.version = version;
    m.bom = bom;
    m.token = TOKEN;
    m.segment = TR_COMM_DEFAULT_SEGMENT;
    m.rank = (uint32_t)rank;
    m.world = (uint32_t)world;
    m.layout = LAYOUT;
    tr_wire_put_hdr(msg, &h);
    tr_wire_put_hello(msg + 32, &m);
}

static void test_hello_fakes(void)
{
    static const char http[] = "GET / HTTP/1.1\r\nHost: tinyring\r\n\r\n";
    uint8_t msg[64];
    int world = 4, k;
    for (k = 0; k < 4; k++) {
        struct job j;
        int r, want = k == 0 ? TR_ERR_PROTO : TR_ERR_MISMATCH, ok = 1;
        const char *what = k == 0 ? "stranger" : k == 1 ? "version 1" : k == 2 ? "byte order"
                                                                           : "control";
        if (job_init(&j, world, 0, 4096, 500) < 0)
            continue;
        if (k == 0)
            fake_rank(&j, (const uint8_t *)http, sizeof http - 1);
        else if (k == 1)
            craft_hello(msg, 1, TR_WIRE_BOM, 1, world);   /* before the world-2 exchange */
        else if (k == 2)
            craft_hello(msg, TR_PROTO_VERSION, 0x04030201u, 1, world);
        else
            craft_hello(msg, TR_PROTO_VERSION, TR_WIRE_BOM, 1, world);
        if (k > 0)
            fake_rank(&j, msg, sizeof msg);
        j.net.keep_failed = 1;
        for (r = 0; r < world; r++)
            j.rc[r] = r == 1 ? TR_ERR_AGAIN : tr_comm_hello_start(&j.c[r]);
        sim_run(&j.net, j.c, j.rc, 5000, 0);
        if (k == 3) {
            /* a well-formed hello from a rank that then goes silent: its
             * neighbours time out in the verdict ring, never succeed */
            TH_CHECK(j.rc[0] == TR_ERR_TIMEOUT && j.rc[2] == TR_ERR_TIMEOUT,
                     "fake good hello then silence: rc %d %d", j.rc[0], j.rc[2]);
            job_free(&j);
            continue;
        }
        /* the neighbours of the fake refuse it with the fault naming it */
        TH_CHECK(j.rc[0] == want && j.c[0].fault.peer == TR_RIGHT && j.c[0].fault.peer_rank == 1,
                 "%s: rank 0 rc=%d peer=%d", what, j.rc[0], j.c[0].fault.peer);
        TH_CHECK(j.rc[2] == want && j.c[2].fault.peer == TR_LEFT && j.c[2].fault.peer_rank == 1,
                 "%s: rank 2 rc=%d peer=%d", what, j.rc[2], j.c[2].fault.peer);
        if (k == 1)   /* the old peer's version is named to its neighbours, not the others */
            TH_CHECK(j.c[0].fault.peer_version == 1 && j.c[2].fault.peer_version == 1 &&
                     j.c[3].fault.peer_version == 0,
                     "version 1: peer_version %d %d %d", j.c[0].fault.peer_version,
                     j.c[2].fault.peer_version, j.c[3].fault.peer_version);
        else
            TH_CHECK(j.c[0].fault.peer_version == 0 && j.c[2].fault.peer_version == 0,
                     "%s: no peer_version (%d %d)", what, j.c[0].fault.peer_version,
                     j.c[2].fault.peer_version);
        if (want == TR_ERR_MISMATCH)
            ok = j.rc[3] == TR_ERR_MISMATCH;    /* told by the verdict ring */
        else
            ok = is_err(j.rc[3]);
        TH_CHECK(ok, "%s: rank 3 rc=%d", what, j.rc[3]);
        job_free(&j);
    }
}

static void test_hello_timeout_and_faults(void)
{
    struct job j;
    int r;
    /* four bytes that start like the magic and then differ, then silence:
     * refused at once, not after the timeout */
    if (job_init(&j, 3, 0, 4096, 300) == 0) {
        uint32_t t0 = j.net.now;
        fake_rank(&j, (const uint8_t *)"TRNX", 4);
        j.net.keep_failed = 1;
        j.rc[1] = TR_ERR_AGAIN;
        j.rc[0] = tr_comm_hello_start(&j.c[0]);
        j.rc[2] = tr_comm_hello_start(&j.c[2]);
        sim_run(&j.net, j.c, j.rc, 5000, 0);
        TH_CHECK(j.rc[0] == TR_ERR_PROTO && j.rc[2] == TR_ERR_PROTO && j.net.now - t0 < 300,
                 "4-byte stranger: rc %d %d after %u ms", j.rc[0], j.rc[2],
                 (unsigned)(j.net.now - t0));
    }
    job_free(&j);
    /* a rank that never starts: its neighbours time out in the hello */
    if (job_init(&j, 3, 0, 4096, 300) == 0) {
        j.net.ep[2].silent = 1;
        j.net.keep_failed = 1;
        for (r = 0; r < 3; r++)
            j.rc[r] = r == 2 ? TR_ERR_AGAIN : tr_comm_hello_start(&j.c[r]);
        sim_run(&j.net, j.c, j.rc, 5000, 0);
        TH_CHECK(j.rc[0] == TR_ERR_TIMEOUT && j.c[0].fault.phase == TR_PHASE_HELLO &&
                     j.c[0].fault.peer == TR_LEFT && j.c[0].fault.peer_rank == 2,
                 "hello with a silent rank: rank 0 rc=%d peer=%d", j.rc[0], j.c[0].fault.peer);
        TH_CHECK(j.rc[1] == TR_ERR_TIMEOUT && j.c[1].fault.peer_rank == 2,
                 "hello with a silent rank: rank 1 rc=%d", j.rc[1]);
    }
    job_free(&j);
    /* hello through 1-byte writes and would-block every other call */
    for (r = 2; r <= 8; r += 3) {
        int i;
        if (job_init(&j, r, 0, 64, 500) < 0)
            continue;
        for (i = 0; i < r; i++) {
            j.net.ep[i].max_write = 1;
            j.net.ep[i].again_every = 2;
        }
        TH_CHECK(job_hello(&j) == 0, "hello with 1-byte writes, world %d", r);
        job_free(&j);
    }
    /* a rank that dies in the middle of its hello */
    if (job_init(&j, 3, 0, 4096, 300) == 0) {
        j.net.ep[1].die_after = 40;
        for (r = 0; r < 3; r++)
            j.rc[r] = tr_comm_hello_start(&j.c[r]);
        sim_run(&j.net, j.c, j.rc, 5000, 0);
        TH_CHECK(j.rc[2] == TR_ERR_CLOSED && j.c[2].fault.peer == TR_LEFT,
                 "death in hello: rank 2 rc=%d", j.rc[2]);
        TH_CHECK(is_err(j.rc[0]), "death in hello: rank 0 rc=%d", j.rc[0]);
    }
    job_free(&j);
}

/* ---- API edges ------------------------------------------------------------- */

static void test_sizes(void)
{
    struct tr_comm_config cfg;
    struct tr_comm c;
    struct sim_net net;
    uint32_t segs[] = {0, 64, 100, 4096, 65536, 262144};
    size_t i;
    static uint32_t mem[70000];  /* 280000 bytes */

    sim_init(&net, 2, 1024);
    for (i = 0; i < sizeof segs / sizeof segs[0]; i++) {
        size_t need;
        job_cfg(&cfg, 2, 0, segs[i], 0);
        need = tr_comm_scratch_size(&cfg);
        TH_CHECK(need >= (segs[i] ? segs[i] : 262144u), "scratch holds a segment");
        TH_CHECK(tr_comm_init(&c, &cfg, &net.tp[0], mem, need - 1) == TR_ERR_NOMEM,
                 "scratch one byte short -> TR_ERR_NOMEM (seg %u)", (unsigned)segs[i]);
        TH_CHECK(tr_comm_init(&c, &cfg, &net.tp[0], NULL, need) == TR_ERR_NOMEM,
                 "no scratch -> TR_ERR_NOMEM");
        TH_CHECK(tr_comm_init(&c, &cfg, &net.tp[0], mem, need) == 0,
                 "exact scratch size is enough (seg %u)", (unsigned)segs[i]);
    }
    job_cfg(&cfg, 2, 0, 66, 0);
    TH_CHECK(tr_comm_init(&c, &cfg, &net.tp[0], mem, sizeof mem) == TR_ERR_INVAL,
             "segment not a multiple of 4 -> INVAL");
    job_cfg(&cfg, 2, 0, 60, 0);
    TH_CHECK(tr_comm_init(&c, &cfg, &net.tp[0], mem, sizeof mem) == TR_ERR_INVAL,
             "segment < 64 -> INVAL");
    job_cfg(&cfg, 2, 2, 0, 0);
    TH_CHECK(tr_comm_init(&c, &cfg, &net.tp[0], mem, sizeof mem) == TR_ERR_INVAL,
             "rank >= world -> INVAL");
    job_cfg(&cfg, 2, 0, 0, 0);
    TH_CHECK(tr_comm_init(&c, &cfg, NULL, mem, sizeof mem) == TR_ERR_INVAL,
             "world 2 without transport -> INVAL");
    TH_CHECK(tr_comm_init(&c, &cfg, &net.tp[0], (uint8_t *)mem + 1, sizeof mem - 4) ==
                 TR_ERR_INVAL, "misaligned scratch -> INVAL");
    TH_CHECK(tr_comm_init(&c, &cfg, &net.tp[0], mem, sizeof mem) == 0 &&
                 tr_barrier_start(&c) == TR_ERR_INVAL,
             "a collective before hello -> INVAL");
    job_cfg(&cfg, 1, 0, 0, 0);
    TH_CHECK(tr_comm_scratch_size(&cfg) == 0, "world 1 needs no scratch");
    sim_free(&net);
}

static void test_world1(void)
{
    struct tr_comm_config cfg;
    struct tr_comm c;
    float a[97], b[97];
    uint8_t bytes[10] = {1, 2, 3};
    size_t i;
    job_cfg(&cfg, 1, 0, 0, 0);
    TH_CHECK(tr_comm_init(&c, &cfg, NULL, NULL, 0) == 0, "world 1 init without transport");
    TH_CHECK(tr_comm_hello(&c) == 0, "world 1 hello");
    for (i = 0; i < 97; i++)
        a[i] = b[i] = val(0, i, 3) * 1e-3f;
    TH_CHECK(tr_allreduce(&c, a, 97, TR_OP_AVG, TR_ALGO_RING) == 0 &&
                 memcmp(a, b, sizeof a) == 0, "world 1 avg is exact");
    TH_CHECK(tr_allreduce(&c, a, 97, TR_OP_SUM, TR_ALGO_CHAIN) == 0 &&
                 memcmp(a, b, sizeof a) == 0, "world 1 sum is a no-op");
    TH_CHECK(tr_reduce(&c, a, 97, TR_OP_AVG, 0) == 0 && memcmp(a, b, sizeof a) == 0,
             "world 1 reduce");
    TH_CHECK(tr_broadcast(&c, bytes, sizeof bytes, 0) == 0 && bytes[2] == 3, "world 1 bcast");
    TH_CHECK(tr_barrier(&c) == 0, "world 1 barrier");
    TH_CHECK(tr_allreduce(&c, NULL, 0, TR_OP_AVG, TR_ALGO_RING) == 0, "world 1 count 0");
    TH_CHECK(tr_reduce(&c, a, 97, TR_OP_SUM, 1) == TR_ERR_INVAL, "root out of range");
    TH_CHECK(tr_allreduce(&c, a, 97, (enum tr_op)7, TR_ALGO_RING) == TR_ERR_INVAL, "bad op");
    TH_CHECK(tr_allreduce(&c, a, 97, TR_OP_SUM, (enum tr_algo)9) == TR_ERR_INVAL, "bad algo");
    TH_CHECK(tr_comm_progress(&c) == TR_ERR_INVAL || tr_comm_progress(&c) <= 0,
             "progress when idle does not run anything");
}

static void test_busy_and_broken(void)
{
    struct job j;
    float *buf[3];
    int r;
    if (job_open(&j, 3, 256, 4096, 500) < 0) {
        TH_CHECK(0, "hello");
        job_free(&j);
        return;
    }
    for (r = 0; r < 3; r++) {
        size_t i;
        buf[r] = alloc_buf(1000);
        for (i = 0; i < 1000; i++)
            buf[r][i] = (float)r;
        j.rc[r] = tr_allreduce_start(&j.c[r], buf[r], 1000, TR_OP_SUM, TR_ALGO_RING);
    }
    TH_CHECK(tr_barrier_start(&j.c[0]) == TR_ERR_BUSY, "second collective -> BUSY");
    TH_CHECK(tr_broadcast_start(&j.c[1], buf[1], 4, 0) == TR_ERR_BUSY, "bcast while busy");
    sim_run(&j.net, j.c, j.rc, 5000, 0);
    TH_CHECK(all_rc(&j, 0) && buf[0][999] == 3.0f && buf[2][0] == 3.0f,
             "the first collective still completes");
    /* now break it: rank 2 dies; the others are broken for good */
    j.net.ep[2].die_after = (int64_t)j.net.ep[2].sent + 10;
    for (r = 0; r < 3; r++)
        j.rc[r] = tr_allreduce_start(&j.c[r], buf[r], 1000, TR_OP_SUM, TR_ALGO_RING);
    sim_run(&j.net, j.c, j.rc, 5000, 0);
    TH_CHECK(j.rc[0] < 0 && tr_barrier_start(&j.c[0]) == j.rc[0] &&
                 tr_comm_last_fault(&j.c[0])->code == j.rc[0],
             "a broken communicator refuses new collectives with the same code");
    for (r = 0; r < 3; r++)
        free(buf[r]);
    job_free(&j);
}

/* ---- blocking forms: rank 0 blocks, its poll() drives the others ---------- */

static void drive_others(struct sim_net *net, int caller, void *arg)
{
    struct job *j = (struct job *)arg;
    int r;
    for (r = 0; r < j->world; r++)
        if (r != caller && j->rc[r] == TR_ERR_AGAIN && !net->ep[r].silent && !net->ep[r].dead)
            j->rc[r] = tr_comm_progress(&j->c[r]);
}

static void test_blocking(void)
{
    struct job j;
    float *buf[4];
    uint8_t bytes[4][300];
    int r, ok = 1;
    size_t i, n = 12345;
    uint32_t t0;

    if (job_init(&j, 4, 1024, 8192, 400) < 0)
        return;
    j.net.driver = drive_others;
    j.net.driver_arg = &j;
    for (r = 1; r < 4; r++)
        j.rc[r] = tr_comm_hello_start(&j.c[r]);
    j.rc[0] = TR_ERR_AGAIN;
    TH_CHECK(tr_comm_hello(&j.c[0]) == 0, "blocking hello");
    sim_run(&j.net, j.c, j.rc, 1000, 0);
    for (r = 0; r < 4; r++) {
        buf[r] = alloc_buf(n);
        for (i = 0; i < n; i++)
            buf[r][i] = (float)(r + 1) * 0.25f;
    }
    for (r = 1; r < 4; r++)
        j.rc[r] = tr_allreduce_start(&j.c[r], buf[r], n, TR_OP_AVG, TR_ALGO_RING);
    j.rc[0] = TR_ERR_AGAIN;
    TH_CHECK(tr_allreduce(&j.c[0], buf[0], n, TR_OP_AVG, TR_ALGO_RING) == 0,
             "blocking allreduce");
    j.rc[0] = 0;
    sim_run(&j.net, j.c, j.rc, 1000, 0);
    for (r = 0; r < 4; r++)
        for (i = 0; i < n; i++)
            if (buf[r][i] != 0.625f)
                ok = 0;
    TH_CHECK(ok && all_rc(&j, 0), "blocking allreduce result (avg of .25 .5 .75 1)");
    for (r = 0; r < 4; r++)
        memset(bytes[r], r == 3 ? 0x5A : 0, sizeof bytes[r]);
    for (r = 1; r < 4; r++)
        j.rc[r] = tr_broadcast_start(&j.c[r], bytes[r], sizeof bytes[r], 3);
    TH_CHECK(tr_broadcast(&j.c[0], bytes[0], sizeof bytes[0], 3) == 0 && bytes[0][299] == 0x5A,
             "blocking broadcast");
    j.rc[0] = 0;
    sim_run(&j.net, j.c, j.rc, 1000, 0);
    TH_CHECK(all_rc(&j, 0) && bytes[1][0] == 0x5A && bytes[2][150] == 0x5A,
             "blocking broadcast reaches all");
    for (r = 1; r < 4; r++)
        j.rc[r] = tr_barrier_start(&j.c[r]);
    TH_CHECK(tr_barrier(&j.c[0]) == 0, "blocking barrier");
    j.rc[0] = 0;
    sim_run(&j.net, j.c, j.rc, 1000, 0);
    TH_CHECK(all_rc(&j, 0), "blocking barrier on all");
    for (r = 1; r < 4; r++)
        j.rc[r] = tr_reduce_start(&j.c[r], buf[r], n, TR_OP_SUM, 0);
    TH_CHECK(tr_reduce(&j.c[0], buf[0], n, TR_OP_SUM, 0) == 0 && buf[0][n - 1] == 2.5f,
             "blocking reduce to root 0");
    j.rc[0] = 0;
    sim_run(&j.net, j.c, j.rc, 1000, 0);
    /* blocking call whose peers never come: times out via poll + clock */
    j.net.ep[1].silent = j.net.ep[2].silent = j.net.ep[3].silent = 1;
    t0 = j.net.now;
    TH_CHECK(tr_barrier(&j.c[0]) == TR_ERR_TIMEOUT &&
                 j.c[0].fault.phase == TR_PHASE_BARRIER && j.c[0].fault.peer == TR_LEFT &&
                 j.c[0].fault.peer_rank == 3,
             "blocking barrier with silent peers times out, naming the left rank");
    TH_CHECK(j.net.now - t0 >= 400 && j.net.now - t0 < 1000,
             "blocking timeout after %u simulated ms (timeout 400)", (unsigned)(j.net.now - t0));
    for (r = 0; r < 4; r++)
        free(buf[r]);
    job_free(&j);
}

static void test_phase_names(void)
{
    int p, ok = 1;
    for (p = TR_PHASE_NONE; p <= TR_PHASE_BARRIER; p++)
        if (!tr_comm_phase_name(p) || !strcmp(tr_comm_phase_name(p), "unknown"))
            ok = 0;
    TH_CHECK(ok && !strcmp(tr_comm_phase_name(99), "unknown"), "phase names");
}

int main(void)
{
    test_sizes();
    test_world1();
    test_phase_names();
    test_busy_and_broken();
    test_peer_death();
    test_garbage();
    test_timeout();
    test_call_mismatch();
    test_hello_mismatch();
    test_hello_fakes();
    test_hello_timeout_and_faults();
    test_blocking();
    return th_report("comm_faults");
}
