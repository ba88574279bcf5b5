/* test/app: unit tests of core's trainer (core/include/tr_train.h): the
 * sampler (a bijection at any size, the padded and strided deal), the arena
 * size query, the
 * event sequence, the state bytes and their restore, failures of the
 * loader and the model, and rings of simulated ranks driven through the
 * non-blocking tr_train_poll (bit-identical ranks, a configuration
 * mismatch at hello, rank 0 refusing to start, a dead rank). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sim_transport.h"
#include "tinyring.h"
#include "tr_codec.h"
#include "tr_train.h"
#include "tr_util.h"
#include "train_samples.h"


/* CRC-32 of zlib, bit by bit */
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* ---- the sampler */

/* The deal as mnist_ring and the trainer always did it (DistributedSampler:
 * the whole permutation, padded by its head to a multiple of world, rank r
 * taking positions r, r+world, ...), on a permutation written out in full */
static void ref_shard(const uint32_t *perm, uint32_t n, uint32_t world, uint32_t rank,
                      uint32_t *idx, uint32_t *shard)
{
    *shard = (uint32_t)(((uint64_t)n + world - 1) / world);
    for (uint32_t k = 0; k < *shard; k++)
        idx[k] = perm[(uint32_t)(((uint64_t)k * world + rank) % n)];
}

/* Every position of 0..n-1 maps into 0..n-1, no value twice, and the
 * inverse maps each back; returns the violations. */
static unsigned bijection_bad(const struct tr_sampler *s, uint32_t n)
{
    uint8_t *seen = calloc(n / 8 + 1, 1);
    unsigned bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = tr_sampler_at(s, i);
        if (v >= n || (seen[v / 8] >> (v % 8) & 1u) || tr_sampler_index(s, v) != i) {
            bad++;
            continue;
        }
        seen[v / 8] |= (uint8_t)(1u << (v % 8));
    }
    free(seen);
    return bad;
}

static void test_sampler_bijection(void)
{
    static const uint32_t small[] = { 1, 2, 3, 4, 5, 15, 16, 17, 255, 600, 60000, 65535,
                                      65536, 65537, (1u << 20) + 3 };
    static const uint32_t huge[] = { (1u << 31) - 1, (1u << 31) + 11, 3u << 30, 0xffffffffu };
    unsigned bad = 0, cases = 0;
    uint64_t x = 0x243f6a8885a308d3ull;
    for (size_t t = 0; t < sizeof small / sizeof small[0]; t++)
        for (uint32_t e = 0; e < (small[t] > 70000u ? 1u : 3u); e++) {
            struct tr_sampler s;
            tr_sampler_init(&s, small[t], 7 + e, e);
            bad += bijection_bad(&s, small[t]);
            cases++;
        }
    TH_CHECK(bad == 0 && cases > 40, "sampler: %u positions break the bijection (%u cases)", bad,
             cases);
    /* 2^31-ish: every round of the network is a bijection of the 2^b words
     * by construction, the walk inverts; on random points both ways */
    bad = 0;
    for (size_t t = 0; t < sizeof huge / sizeof huge[0]; t++) {
        struct tr_sampler s;
        uint32_t n = huge[t], fixed = 0;
        tr_sampler_init(&s, n, 11 + t, (uint32_t)t);
        for (int k = 0; k < 20000; k++) {
            uint32_t i, v, p;
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;   /* xorshift64 */
            i = (uint32_t)(x % n);
            v = tr_sampler_at(&s, i);
            p = tr_sampler_index(&s, i);
            bad += v >= n || tr_sampler_index(&s, v) != i || p >= n || tr_sampler_at(&s, p) != i;
            fixed += v == i;
        }
        bad += fixed > 2;
        bad += tr_sampler_index(&s, tr_sampler_at(&s, n - 1)) != n - 1 ||
               tr_sampler_index(&s, tr_sampler_at(&s, 0)) != 0;
    }
    TH_CHECK(bad == 0, "sampler near 2^31: %u points whose inverse disagrees", bad);
}

static void test_sampler_order(void)
{
    static const uint32_t ns[] = { 1, 2, 3, 7, 600, 601, 1000, 60000, 65537, 70001 };
    static const uint32_t batches[] = { 1, 7, 100 };
    int diffs = 0, cases = 0, partition_bad = 0;
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++)
        for (uint32_t world = 1; world <= 5; world++)
            for (size_t b = 0; b < 3; b++)
                for (uint32_t epoch = 0; epoch < 3; epoch += 2) {
                    uint32_t n = ns[t], B = batches[b], shard;
                    uint32_t *perm = malloc(n * 4), *idx = malloc(n * 4);
                    uint32_t *seen = calloc(n, 4), *ref = malloc(((n + world) / world + 1) * 4);
                    uint32_t extra = 0;
                    struct tr_sampler s;
                    tr_sampler_init(&s, n, 42 + epoch, epoch);
                    for (uint32_t i = 0; i < n; i++)
                        perm[i] = tr_sampler_at(&s, i);
                    for (uint32_t r = 0; r < world; r++) {
                        uint32_t steps = tr_sampler_steps(n, 0, world, B), got = 0;
                        ref_shard(perm, n, world, r, ref, &shard);
                        partition_bad += tr_sampler_shard(n, 0, world) != shard ||
                                         steps != (shard + B - 1) / B;
                        for (uint32_t k = 0; k < steps; k++) {
                            unsigned c = tr_sampler_batch(&s, 0, world, r, B, k, idx);
                            partition_bad += c != (shard - k * B < B ? shard - k * B : B);
                            for (unsigned i = 0; i < c; i++) {
                                diffs += idx[i] != ref[k * B + i];
                                seen[idx[i]]++;
                            }
                            got += c;
                        }
                        partition_bad += got != shard ||
                                         tr_sampler_batch(&s, 0, world, r, B, steps, idx) != 0;
                        cases++;
                    }
                    for (uint32_t i = 0; i < n; i++) {
                        partition_bad += seen[i] == 0;
                        extra += seen[i] - (seen[i] > 0);
                    }
                    partition_bad += extra != shard * world - n;
                    free(perm); free(idx); free(seen); free(ref);
                }
    TH_CHECK(diffs == 0, "sampler: %d indices differ from the padded, strided deal (%d cases)",
             diffs, cases);
    TH_CHECK(partition_bad == 0, "sampler: %d shard/step/partition violations", partition_bad);
    {   /* seeds and epochs change the order; the same (seed, epoch), the same */
        struct tr_sampler a, b;
        int same_seed = 0, same_epoch = 0, again = 0;
        tr_sampler_init(&a, 1000, 1, 0);
        for (uint32_t i = 0; i < 1000; i++) {
            tr_sampler_init(&b, 1000, 2, 0);
            same_seed += tr_sampler_at(&a, i) == tr_sampler_at(&b, i);
            tr_sampler_init(&b, 1000, 1, 1);
            same_epoch += tr_sampler_at(&a, i) == tr_sampler_at(&b, i);
            tr_sampler_init(&b, 1000, 1, 0);
            again += tr_sampler_at(&a, i) == tr_sampler_at(&b, i);
        }
        TH_CHECK(same_seed < 10, "sampler: another seed, %d of 1000 positions alike", same_seed);
        TH_CHECK(same_epoch < 10, "sampler: another epoch, %d of 1000 positions alike", same_epoch);
        TH_CHECK(again == 1000, "sampler: same seed and epoch, another shuffle");
    }
    {   /* a shuffle, not a near-identity: MNIST's 60,000, the first 6,000
         * positions spread over the tenths of the set, few fixed points */
        struct tr_sampler s;
        unsigned tenth[10] = { 0 }, fixed = 0, lo = 6000, hi = 0;
        tr_sampler_init(&s, 60000, 42, 0);
        for (uint32_t i = 0; i < 60000; i++) {
            uint32_t v = tr_sampler_at(&s, i);
            fixed += v == i;
            if (i < 6000)
                tenth[v / 6000]++;
        }
        for (int k = 0; k < 10; k++) {
            lo = tenth[k] < lo ? tenth[k] : lo;
            hi = tenth[k] > hi ? tenth[k] : hi;
        }
        TH_CHECK(fixed < 8 && lo > 480 && hi < 720,
                 "sampler: 60000 shuffled poorly (%u fixed points, tenths %u..%u of 6000)",
                 fixed, lo, hi);
    }
    {   /* the order is part of the checkpoint format (version 3 and 4: a
         * resumed run goes on in the same order): a change of the sampler
         * must change the version, and these values */
        static const uint32_t want[8] = { 48370, 48317, 7454, 50931, 32380, 21486, 58727, 40677 };
        struct tr_sampler s;
        int ok = 1;
        tr_sampler_init(&s, 60000, 42, 0);
        for (uint32_t i = 0; i < 8; i++)
            ok &= tr_sampler_at(&s, i) == want[i];
        TH_CHECK(ok, "sampler: the order of version 3 changed (%u %u %u ...)",
                 tr_sampler_at(&s, 0), tr_sampler_at(&s, 1), tr_sampler_at(&s, 2));
    }
}

/* The rest of an epoch dealt over another world: after s steps of batch B
 * over W ranks, first = s*B*W; the new deal covers perm[first..n) and
 * nothing before it, each at least once, repeats only from padding. */
static void test_sampler_redeal(void)
{
    enum { N = 601 };
    struct tr_sampler sp;
    uint32_t idx[64];
    int bad = 0;
    tr_sampler_init(&sp, N, 9, 4);
    for (uint32_t w0 = 1; w0 <= 4; w0++)
        for (uint32_t s = 0; s * 10 * w0 < N; s += 3)
            for (uint32_t w1 = 1; w1 <= 5; w1++) {
                uint32_t first = s * 10 * w0, seen[N] = { 0 }, extra = 0;
                uint32_t steps = tr_sampler_steps(N, first, w1, 10);
                for (uint32_t r = 0; r < w1; r++)
                    for (uint32_t k = 0; k < steps; k++) {
                        unsigned c = tr_sampler_batch(&sp, first, w1, r, 10, k, idx);
                        for (unsigned i = 0; i < c; i++) {
                            bad += tr_sampler_index(&sp, idx[i]) < first;
                            seen[idx[i]]++;
                        }
                    }
                for (uint32_t i = first; i < N; i++) {
                    uint32_t v = tr_sampler_at(&sp, i);
                    bad += seen[v] == 0;
                    extra += seen[v] - (seen[v] > 0);
                }
                bad += extra != tr_sampler_shard(N, first, w1) * w1 - (N - first);
            }
    TH_CHECK(bad == 0, "re-deal of the rest of an epoch: %d violations", bad);
}

/* ---- a synthetic data set: train_samples.h's pixels, label = i % 10 */
struct data {
    uint32_t n_train, n_test;
    int bad_label_at;     /* a training sample whose label is 10, or -1 */
    int fail_at_call;     /* the loader fails on this call (0 = never) */
    int calls;
};

static int load(void *ctx, int split, const uint32_t *idx, unsigned n, uint8_t *px, uint8_t *lb)
{
    struct data *d = ctx;
    if (++d->calls == d->fail_at_call)
        return TR_ERR_IO;
    for (unsigned k = 0; k < n; k++) {
        if (idx[k] >= (split == TR_SPLIT_TRAIN ? d->n_train : d->n_test))
            return TR_ERR_INVAL;
        for (unsigned p = 0; p < 784; p++)
            px[(size_t)k * 784 + p] = train_sample_pixel(split, idx[k], p);
        lb[k] = (uint8_t)(idx[k] % 10);
        if (split == TR_SPLIT_TRAIN && (int)idx[k] == d->bad_label_at)
            lb[k] = 10;
    }
    return 0;
}

/* knobs every config() takes (the codec tests set them, then put them back) */
static int knob_compress;
static uint32_t knob_average_every;

static void config(struct tr_train_config *c, struct data *d, int rank, int world)
{
    memset(c, 0, sizeof *c);
    tr_model_desc_convnet(&c->model, 4, 8, 10);
    c->batch = 8;
    c->n_train = d->n_train;
    c->n_test = d->n_test;
    c->load = load;
    c->load_ctx = d;
    c->lr = 0.01f;
    c->momentum = 0.9f;
    c->seed = 3;
    c->algo = TR_ALGO_RING;
    c->epochs = 2;
    c->rank = rank;
    c->world = world;
    c->job_token = 77;
    c->segment_bytes = 4096;
    c->compress = knob_compress;
    c->average_every = knob_average_every;
}

static void *arena_for(const struct tr_train_config *c, size_t *bytes)
{
    void *p = NULL;
    if (tr_train_arena_size(c, bytes) < 0 || posix_memalign(&p, TR_ARENA_ALIGN, *bytes + 64))
        return NULL;
    memset(p, 0xA5, *bytes + 64);
    return p;
}

static void test_arena(void)
{
    struct data d = { 40, 12, -1, 0, 0 };
    static const unsigned batches[] = { 1, 3, 8 };
    static struct sim_net net;
    sim_init(&net, 3, 4096);
    for (int b = 0; b < 3; b++)
        for (int world = 1; world <= 3; world += 2) {
            struct tr_train_config c;
            struct tr_train *t = malloc(sizeof *t);
            size_t bytes, model_bytes;
            uint8_t *a;
            int ok = 1;
            config(&c, &d, 0, world);
            c.batch = batches[b];
            c.tp = &net.tp[0];                       /* not used before begin */
            a = arena_for(&c, &bytes);
            tr_model_arena_size(&c.model, c.batch, &model_bytes);
            TH_CHECK(a && bytes > model_bytes + 40 * 4, "size query %zu (model %zu)", bytes, model_bytes);
            if (!a)
                continue;
            TH_CHECK(tr_train_init(t, &c, a, bytes - 1) == TR_ERR_NOMEM,
                     "batch %u world %d: one byte short is not TR_ERR_NOMEM", c.batch, world);
            memset(a, 0xA5, bytes + 64);
            TH_CHECK(tr_train_init(t, &c, a, bytes) == 0, "init with the queried size");
            TH_CHECK(t->arena_used == bytes, "batch %u world %d: init used %zu, query said %zu",
                     c.batch, world, t->arena_used, bytes);
            for (int i = 0; i < 64; i++)
                ok &= a[bytes + i] == 0xA5;
            TH_CHECK(ok, "init wrote past the queried size");
            TH_CHECK(tr_train_init(t, &c, a + 8, bytes) == TR_ERR_INVAL, "unaligned arena accepted");
            free(a);
            free(t);
        }
    {
        struct tr_train_config c;
        size_t bytes;
        config(&c, &d, 0, 1);
        c.load = NULL;
        TH_CHECK(tr_train_arena_size(&c, &bytes) == TR_ERR_INVAL, "no loader accepted");
        config(&c, &d, 2, 2);
        TH_CHECK(tr_train_arena_size(&c, &bytes) == TR_ERR_INVAL, "rank >= world accepted");
        config(&c, &d, 0, 2);
        TH_CHECK(tr_train_arena_size(&c, &bytes) == TR_ERR_INVAL, "world 2 without a transport");
    }
    sim_free(&net);
}

/* A whole single-rank run; the events and canaries along the way. */
struct run {
    struct tr_train t;
    struct data d;
    uint8_t *arena;
    size_t bytes;
};

static int run_open(struct run *r, const struct tr_train_config *c)
{
    r->arena = arena_for(c, &r->bytes);
    return r->arena ? tr_train_init(&r->t, c, r->arena, r->bytes) : -1;
}

static int canary_intact(const struct run *r)
{
    for (int i = 0; i < 64; i++)
        if (r->arena[r->bytes + i] != 0xA5)
            return 0;
    return 1;
}

static void test_events(void)
{
    struct run *r = calloc(1, sizeof *r);
    struct tr_train_config c;
    struct tr_train_report rep;
    char seq[64] = "", want[] = "start s s S s E s S s s E done";
    int rc, steps_seen = 0;
    float first_loss = 0, last_loss = 0;

    r->d = (struct data){ 20, 12, -1, 0, 0 };   /* 3 steps of 8, 8, 4 */
    config(&c, &r->d, 0, 1);
    c.sync_every = 2;
    TH_CHECK(run_open(r, &c) == 0, "init");
    TH_CHECK(r->t.steps == 3, "steps per epoch %u, want 3", r->t.steps);
    TH_CHECK(tr_train_next(&r->t, &rep) == TR_ERR_INVAL, "next before begin accepted");
    TH_CHECK(tr_train_begin(&r->t, NULL, 0) == 0, "begin");
    while ((rc = tr_train_next(&r->t, &rep)) > 0) {
        const char *ev = rc == TR_TRAIN_START ? "start " : rc == TR_TRAIN_STEP ? "s "
                       : rc == TR_TRAIN_SYNC ? "S " : "E ";
        strncat(seq, ev, sizeof seq - strlen(seq) - 1);
        if (rc == TR_TRAIN_STEP) {
            steps_seen++;
            if (steps_seen == 1)
                first_loss = rep.loss;
            last_loss = rep.loss;
            TH_CHECK(rep.n == (rep.step == 3 ? 4u : 8u), "step %u: %u samples", rep.step, rep.n);
        }
        if (rc == TR_TRAIN_EPOCH)
            TH_CHECK(!rep.stopped && rep.train_samples == 20 && rep.test_samples == 12 &&
                     rep.test_acc >= 0 && rep.test_acc <= 1 && rep.train_loss > 0,
                     "epoch report: stopped %d train %g test %g acc %g", rep.stopped,
                     (double)rep.train_samples, (double)rep.test_samples, (double)rep.test_acc);
    }
    strncat(seq, rc == 0 ? "done" : "error", sizeof seq - strlen(seq) - 1);
    TH_CHECK(!strcmp(seq, want), "events '%s', want '%s'", seq, want);
    TH_CHECK(tr_train_next(&r->t, &rep) == 0, "done is sticky");
    TH_CHECK(r->t.epoch == 2 && r->t.step == 0 && r->t.global_step == 6, "end state %u/%u/%llu",
             r->t.epoch, r->t.step, (unsigned long long)r->t.global_step);
    TH_CHECK(last_loss < first_loss, "loss %g -> %g does not fall", (double)first_loss, (double)last_loss);
    TH_CHECK(canary_intact(r), "a step wrote past the arena");
    free(r->arena);

    /* max_steps stops inside the second epoch: evaluated, stopped, done */
    memset(r, 0, sizeof *r);
    r->d = (struct data){ 20, 12, -1, 0, 0 };
    config(&c, &r->d, 0, 1);
    c.max_steps = 4;
    run_open(r, &c);
    tr_train_begin(&r->t, NULL, 0);
    seq[0] = 0;
    while ((rc = tr_train_next(&r->t, &rep)) > 0)
        if (rc == TR_TRAIN_EPOCH)
            strncat(seq, rep.stopped ? "stopped " : "epoch ", sizeof seq - strlen(seq) - 1);
    TH_CHECK(rc == 0 && !strcmp(seq, "epoch stopped ") && r->t.epoch == 1 && r->t.step == 1 &&
             r->t.global_step == 4, "max_steps 4: '%s' rc %d, at %u/%u", seq, rc, r->t.epoch, r->t.step);
    free(r->arena);
    free(r);
}

static void run_all(struct run *r)
{
    struct tr_train_report rep;
    while (tr_train_next(&r->t, &rep) > 0)
        ;
}

/* tr_train_state_write's pieces, gathered; fail_at: that call fails with fail_rc */
struct sink {
    uint8_t *buf;
    size_t len, at, max_piece;
    unsigned calls, fail_at;
    int fail_rc;
};

static int sink_write(void *ctx, const void *p, size_t n)
{
    struct sink *s = ctx;
    s->calls++;
    s->max_piece = n > s->max_piece ? n : s->max_piece;
    if (s->fail_at && s->calls >= s->fail_at)
        return s->fail_rc;
    if (n > s->len - s->at)
        return TR_ERR_NOMEM;
    memcpy(s->buf + s->at, p, n);
    s->at += n;
    return 0;
}

/* The streaming writer gives tr_train_state_save's bytes exactly (momentum
 * twin or its zeros, both kinds), in pieces, and stops at a writer's error. */
static void test_state_write(void)
{
    static const float momenta[2] = { 0.9f, 0.0f };
    for (int v = 0; v < 2; v++) {
        struct run *a = calloc(1, sizeof *a);
        struct tr_train_config c;
        struct tr_train_report rep;
        int rc, steps = 0;
        a->d = (struct data){ 20, 12, -1, 0, 0 };
        config(&c, &a->d, 0, 1);
        c.momentum = momenta[v];
        TH_CHECK(run_open(a, &c) == 0, "init (momentum %g)", (double)c.momentum);
        tr_train_begin(&a->t, NULL, 0);
        while (steps < 2 && (rc = tr_train_next(&a->t, &rep)) > 0)
            steps += rc == TR_TRAIN_STEP;
        for (int kind = TR_STATE_CHECKPOINT; kind <= TR_STATE_MODEL; kind++) {
            size_t len = tr_train_state_size(&a->t, kind);
            uint8_t *want = malloc(len), *got = malloc(len);
            struct sink k = { got, len, 0, 0, 0, 0, 0 };
            long n;
            memset(got, 0x5a, len);
            TH_CHECK(tr_train_state_save(&a->t, kind, want, len) == (long)len, "save");
            n = tr_train_state_write(&a->t, kind, sink_write, &k);
            TH_CHECK(n == (long)len && k.at == len && !memcmp(want, got, len),
                     "momentum %g kind %d: the writer's %ld bytes differ from save's %zu",
                     (double)c.momentum, kind, n, len);
            TH_CHECK(k.calls > len / 256 && k.max_piece <= 256,
                     "pieces: %u calls, largest %zu bytes", k.calls, k.max_piece);
            /* a writer's error stops the output at once and is returned */
            k = (struct sink){ got, len, 0, 0, 0, 3, TR_ERR_NOSPC };
            n = tr_train_state_write(&a->t, kind, sink_write, &k);
            TH_CHECK(n == TR_ERR_NOSPC && k.calls == 3, "error at the 3rd piece: %ld after %u calls",
                     n, k.calls);
            k = (struct sink){ got, len, 0, 0, 0, 0, 0 };
            k.fail_at = (unsigned)-1;
            tr_train_state_write(&a->t, kind, sink_write, &k);   /* count the calls */
            k.fail_at = k.calls;
            k.calls = 0;
            k.at = 0;
            k.fail_rc = 1;
            n = tr_train_state_write(&a->t, kind, sink_write, &k);
            TH_CHECK(n == TR_ERR_IO && k.at == len - 4, "the CRC's write failing (1): %ld", n);
            TH_CHECK(tr_train_state_write(&a->t, kind, NULL, &k) == TR_ERR_INVAL, "no writer");
            free(want);
            free(got);
        }
        TH_CHECK(tr_train_state_write(&a->t, 7, sink_write, NULL) == TR_ERR_INVAL, "kind 7");
        free(a->arena);
        free(a);
    }
}

static void test_state(void)
{
    struct run *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    struct tr_train_config c;
    struct tr_train_report rep;
    struct tr_train_state_info info;
    size_t len;
    uint8_t *s1, *s2, *bad;
    int rc, steps = 0;

    a->d = b->d = (struct data){ 20, 12, -1, 0, 0 };
    config(&c, &a->d, 0, 1);
    c.sync_every = 2;
    run_open(a, &c);
    tr_train_begin(&a->t, NULL, 0);
    while ((rc = tr_train_next(&a->t, &rep)) > 0 && rc != TR_TRAIN_SYNC)
        steps += rc == TR_TRAIN_STEP;
    TH_CHECK(rc == TR_TRAIN_SYNC && steps == 2, "a sync point after 2 steps (rc %d)", rc);
    len = tr_train_state_size(&a->t, TR_STATE_CHECKPOINT);
    TH_CHECK(len == 96 + 4 * (2 * a->t.model.n_params + a->t.model.n_buffers) + 4,
             "state size %zu", len);
    s1 = malloc(len);
    s2 = malloc(len);
    bad = malloc(len);
    TH_CHECK(tr_train_state_save(&a->t, TR_STATE_CHECKPOINT, s1, len - 1) == TR_ERR_NOMEM,
             "one byte short is not TR_ERR_NOMEM");
    TH_CHECK(tr_train_state_save(&a->t, TR_STATE_CHECKPOINT, s1, len) == (long)len, "save");
    TH_CHECK(tr_train_state_check(s1, len, &info) == 0 && info.kind == TR_STATE_CHECKPOINT &&
             info.epoch == 0 && info.step == 2 && info.global_step == 2 && info.world == 1 &&
             info.batch == 8 && info.seed == 3 && info.n_train == 20 &&
             info.config_hash == tr_train_config_hash(&a->t), "header fields");
    TH_CHECK(!memcmp(s1, "TRINGCKP", 8) && s1[8] == 3 && s1[12] == 96 && s1[40] == 2,
             "header bytes do not follow the documented layout");

    /* restore into a fresh trainer: the same bytes back, the same future */
    config(&c, &b->d, 0, 1);
    c.sync_every = 2;
    run_open(b, &c);
    TH_CHECK(tr_train_begin(&b->t, s1, len) == 0, "begin from state");
    rc = tr_train_next(&b->t, &rep);
    TH_CHECK(rc == TR_TRAIN_START && rep.epoch == 0 && rep.step == 2 && rep.global_step == 2,
             "resumed start at %u/%u (rc %d)", rep.epoch, rep.step, rc);
    tr_train_state_save(&b->t, TR_STATE_CHECKPOINT, s2, len);
    TH_CHECK(!memcmp(s1, s2, len), "state -> restore -> state changed bytes");
    run_all(a);
    run_all(b);
    TH_CHECK(tr_train_hash(a->t.model.params, a->t.model.n_params) ==
             tr_train_hash(b->t.model.params, b->t.model.n_params) &&
             tr_train_hash(a->t.model.buffers, a->t.model.n_buffers) ==
             tr_train_hash(b->t.model.buffers, b->t.model.n_buffers),
             "resumed run differs from the uninterrupted one");

    /* damaged bytes: refused with the reason, nothing changed */
    {
        struct { const char *what; size_t off, len; int problem, code; } dmg[] = {
            { "a payload bit", 96 + 4000, len, TR_STATE_CRC, TR_ERR_FORMAT },
            { "the magic", 0, len, TR_STATE_MAGIC, TR_ERR_FORMAT },
            { "the version", 8, len, TR_STATE_VERSION_DIFFERS, TR_ERR_FORMAT },
            { "the CRC", len - 1, len, TR_STATE_CRC, TR_ERR_FORMAT },
            { "a cut", 0, len - 9, TR_STATE_SIZE, TR_ERR_FORMAT },
            { "a cut header", 0, 50, TR_STATE_SHORT, TR_ERR_FORMAT },
            { "n_params", 64, len, TR_STATE_SIZE, TR_ERR_FORMAT },
        };
        uint64_t before = tr_train_hash(b->t.model.params, b->t.model.n_params);
        for (size_t i = 0; i < sizeof dmg / sizeof dmg[0]; i++) {
            memcpy(bad, s1, len);
            if (dmg[i].len == len)
                bad[dmg[i].off] ^= 0x10;
            rc = tr_train_state_check(bad, dmg[i].len, &info);
            TH_CHECK(rc == dmg[i].code && info.problem == dmg[i].problem,
                     "damaged %s: rc %d problem %d", dmg[i].what, rc, info.problem);
            TH_CHECK(tr_train_state_load(&b->t, bad, dmg[i].len) == dmg[i].code,
                     "damaged %s loaded", dmg[i].what);
        }
        TH_CHECK(before == tr_train_hash(b->t.model.params, b->t.model.n_params) &&
                 b->t.epoch == 2 && b->t.global_step == 6, "a refused state changed the trainer");
        /* a sound checkpoint of the Fisher-Yates sampler (version 1): refused
         * for what it is; a model file of version 1 still reads */
        memcpy(bad, s1, len);
        bad[8] = 1;
        tr_put_le32(bad + len - 4, crc32_of(bad, len - 4));
        rc = tr_train_state_check(bad, len, &info);
        TH_CHECK(rc == TR_ERR_FORMAT && info.problem == TR_STATE_OLD_SAMPLER && info.version == 1 &&
                 info.global_step == 2, "version 1 checkpoint: rc %d problem %d", rc, info.problem);
        TH_CHECK(tr_train_state_load(&b->t, bad, len) == TR_ERR_FORMAT && b->t.global_step == 6 &&
                 before == tr_train_hash(b->t.model.params, b->t.model.n_params),
                 "a version 1 checkpoint loaded");
        bad[8] = 3;
        tr_put_le32(bad + len - 4, crc32_of(bad, len - 4));
        TH_CHECK(tr_train_state_check(bad, len, &info) == 0, "the CRC of the test is not zlib's");
        {
            size_t ml = tr_train_state_size(&a->t, TR_STATE_MODEL);
            uint8_t *mdl = malloc(ml);
            TH_CHECK(tr_train_state_save(&a->t, TR_STATE_MODEL, mdl, ml) == (long)ml && mdl[8] == 3,
                     "a model saves as version 3");
            mdl[8] = 1;
            tr_put_le32(mdl + ml - 4, crc32_of(mdl, ml - 4));
            TH_CHECK(tr_train_state_check(mdl, ml, &info) == 0 && info.kind == TR_STATE_MODEL &&
                     info.version == 1, "a version 1 model file: problem %d", info.problem);
            free(mdl);
        }
    }
    /* another configuration, a model file */
    {
        struct run *o = calloc(1, sizeof *o);
        o->d = a->d;
        config(&c, &o->d, 0, 1);
        c.sync_every = 2;
        c.lr = 0.02f;
        run_open(o, &c);
        TH_CHECK(tr_train_state_load(&o->t, s1, len) == TR_ERR_MISMATCH, "another lr resumed");
        free(o->arena);
        config(&c, &o->d, 0, 1);
        c.sync_every = 2;
        tr_model_desc_convnet(&c.model, 16, 32, 10);
        run_open(o, &c);
        TH_CHECK(tr_train_state_load(&o->t, s1, len) == TR_ERR_MISMATCH, "a 4/8 state in a 16/32 net");
        size_t ml = tr_train_state_size(&a->t, TR_STATE_MODEL);
        TH_CHECK(ml == 96 + 4 * (a->t.model.n_params + a->t.model.n_buffers) + 4, "model size");
        TH_CHECK(tr_train_state_save(&a->t, TR_STATE_MODEL, bad, ml) == (long)ml &&
                 !memcmp(bad, "TRINGMDL", 8) && bad[88] == 0, "model bytes");
        TH_CHECK(tr_train_state_check(bad, ml, &info) == 0 && info.kind == TR_STATE_MODEL &&
                 info.epoch == 2, "model check");
        TH_CHECK(tr_train_state_load(&a->t, bad, ml) == TR_ERR_FORMAT, "a model file resumed");
        /* a restore that fails on rank 0 stops the run, with the reason */
        config(&c, &o->d, 0, 1);
        c.sync_every = 3;     /* another configuration hash */
        free(o->arena);
        run_open(o, &c);
        tr_train_begin(&o->t, s1, len);
        rc = tr_train_next(&o->t, &rep);
        TH_CHECK(rc == TR_ERR_MISMATCH && tr_train_last_fault(&o->t)->what == TR_TRAIN_RESTORE,
                 "begin with a foreign state: rc %d what %d", rc, tr_train_last_fault(&o->t)->what);
        free(o->arena);
        free(o);
    }
    free(s1); free(s2); free(bad);
    free(a->arena); free(b->arena);
    free(a); free(b);
}

/* issue 13, defect 6: the return codes of forward, loss and backward */
static void test_failures(void)
{
    struct run *r = calloc(1, sizeof *r);
    struct tr_train_config c;
    struct tr_train_report rep;
    uint64_t h0;
    int rc;

    r->d = (struct data){ 20, 12, -1, 0, 0 };
    config(&c, &r->d, 0, 1);
    run_open(r, &c);
    tr_train_begin(&r->t, NULL, 0);
    TH_CHECK(tr_train_next(&r->t, &rep) == TR_TRAIN_START, "start");
    TH_CHECK(tr_train_next(&r->t, &rep) == TR_TRAIN_STEP, "step 1");
    /* the sample at position 3 of step 2 gets label 10: loss refuses it */
    r->d.bad_label_at = (int)tr_sampler_at(&r->t.sampler, 3 + 8);
    h0 = tr_train_hash(r->t.model.params, r->t.model.n_params);
    rc = tr_train_next(&r->t, &rep);
    TH_CHECK(rc == TR_ERR_INVAL && tr_train_last_fault(&r->t)->what == TR_TRAIN_LOSS &&
             tr_train_last_fault(&r->t)->step == 1, "label 10: rc %d what %d step %u", rc,
             tr_train_last_fault(&r->t)->what, tr_train_last_fault(&r->t)->step);
    TH_CHECK(h0 == tr_train_hash(r->t.model.params, r->t.model.n_params) && r->t.global_step == 1,
             "a failed loss still stepped SGD");
    TH_CHECK(tr_train_next(&r->t, &rep) == TR_ERR_INVAL, "failure is sticky");
    free(r->arena);

    memset(r, 0, sizeof *r);
    r->d = (struct data){ 20, 12, -1, 3, 0 };   /* the third load fails */
    config(&c, &r->d, 0, 1);
    run_open(r, &c);
    tr_train_begin(&r->t, NULL, 0);
    while ((rc = tr_train_next(&r->t, &rep)) > 0)
        ;
    TH_CHECK(rc == TR_ERR_IO && tr_train_last_fault(&r->t)->what == TR_TRAIN_LOAD &&
             r->t.global_step == 2, "loader failure: rc %d what %d", rc,
             tr_train_last_fault(&r->t)->what);
    free(r->arena);
    free(r);
}

/* ---- rings of simulated ranks, every rank driven by tr_train_poll */
struct ring {
    struct sim_net net;
    int world;
    struct run *r[SIM_MAX_WORLD];
    int rc[SIM_MAX_WORLD];
    int events[SIM_MAX_WORLD];
    uint64_t step_hash[SIM_MAX_WORLD][64];
};

static int ring_open(struct ring *g, int world, void (*tweak)(struct tr_train_config *, int))
{
    memset(g, 0, sizeof *g);
    g->world = world;
    if (sim_init(&g->net, world, 1 << 16) < 0)
        return -1;
    for (int k = 0; k < world; k++) {
        struct tr_train_config c;
        g->r[k] = calloc(1, sizeof *g->r[k]);
        g->r[k]->d = (struct data){ 61, 13, -1, 0, 0 };
        config(&c, &g->r[k]->d, k, world);
        c.tp = &g->net.tp[k];
        c.algo = knob_compress ? TR_ALGO_RING : world % 3;
        if (tweak)
            tweak(&c, k);
        if (run_open(g->r[k], &c) < 0)
            return -1;
    }
    return 0;
}

static void ring_close(struct ring *g)
{
    for (int k = 0; k < g->world; k++) {
        free(g->r[k]->arena);
        free(g->r[k]);
    }
    sim_free(&g->net);
}

/* Round robin until every rank is done or failed; kill (rank, after its
 * n-th step) if kill_rank >= 0. */
static void ring_run(struct ring *g, int kill_rank, int kill_after)
{
    int busy = 1, rounds = 0;
    for (int k = 0; k < g->world; k++)
        g->rc[k] = TR_ERR_AGAIN;
    while (busy && rounds++ < 1000000) {
        busy = 0;
        for (int k = 0; k < g->world; k++) {
            struct tr_train_report rep;
            if (g->rc[k] != TR_ERR_AGAIN && g->rc[k] <= 0)
                continue;
            if (g->net.ep[k].dead)
                continue;
            g->rc[k] = tr_train_poll(&g->r[k]->t, &rep);
            if (g->rc[k] == TR_TRAIN_STEP && rep.global_step < 64)
                g->step_hash[k][rep.global_step] =
                    tr_train_hash(g->r[k]->t.model.params, g->r[k]->t.model.n_params);
            if (g->rc[k] > 0)
                g->events[k]++;
            if (g->rc[k] == TR_TRAIN_STEP && k == kill_rank && (int)rep.global_step == kill_after) {
                sim_kill(&g->net, k);
                g->rc[k] = TR_ERR_CLOSED;
            }
            busy |= g->rc[k] == TR_ERR_AGAIN || g->rc[k] > 0;
        }
        if (!busy) {
            /* a rank that waits for a dead one: let simulated time pass */
            for (int k = 0; k < g->world; k++)
                busy |= g->rc[k] == TR_ERR_AGAIN;
            g->net.now += 100;
        }
    }
}

static void test_ring(void)
{
    for (int world = 2; world <= 4; world++) {
        struct ring *g = malloc(sizeof *g);
        int ok = 1, steps;
        TH_CHECK(ring_open(g, world, NULL) == 0, "ring of %d", world);
        for (int k = 0; k < world; k++)
            tr_train_begin(&g->r[k]->t, NULL, 0);
        ring_run(g, -1, 0);
        steps = (int)g->r[0]->t.global_step;
        for (int k = 0; k < world; k++) {
            ok &= g->rc[k] == 0 && (int)g->r[k]->t.global_step == steps;
            for (int s = 1; s <= steps && s < 64; s++)
                ok &= g->step_hash[k][s] == g->step_hash[0][s] && g->step_hash[0][s] != 0;
            ok &= tr_train_hash(g->r[k]->t.model.buffers, g->r[k]->t.model.n_buffers) ==
                  tr_train_hash(g->r[0]->t.model.buffers, g->r[0]->t.model.n_buffers);
        }
        TH_CHECK(ok && steps == 2 * (int)tr_sampler_steps(61, 0, (uint32_t)world, 8),
                 "world %d (algo %d): every rank done with equal params after each of %d steps "
                 "and equal BN statistics", world, world % 3, steps);
        ring_close(g);
        free(g);
    }
}

static void other_lr(struct tr_train_config *c, int rank)
{
    if (rank == 1)
        c->lr = 0.02f;
}

static void test_ring_faults(void)
{
    struct ring *g = malloc(sizeof *g);
    /* one rank with another lr: refused at hello by everyone */
    ring_open(g, 3, other_lr);
    for (int k = 0; k < 3; k++)
        tr_train_begin(&g->r[k]->t, NULL, 0);
    ring_run(g, -1, 0);
    for (int k = 0; k < 3; k++)
        TH_CHECK(g->rc[k] == TR_ERR_MISMATCH &&
                 tr_train_last_fault(&g->r[k]->t)->what == TR_TRAIN_HELLO &&
                 g->r[k]->t.global_step == 0,
                 "another lr on rank 1: rank %d rc %d what %d", k, g->rc[k],
                 tr_train_last_fault(&g->r[k]->t)->what);
    ring_close(g);

    /* rank 0 cannot start: every rank stops, saying so */
    ring_open(g, 3, NULL);
    tr_train_refuse(&g->r[0]->t, TR_ERR_IO);
    for (int k = 1; k < 3; k++)
        tr_train_begin(&g->r[k]->t, NULL, 0);
    ring_run(g, -1, 0);
    for (int k = 0; k < 3; k++)
        TH_CHECK(g->rc[k] == TR_ERR_IO && tr_train_last_fault(&g->r[k]->t)->what == TR_TRAIN_REFUSED &&
                 tr_train_last_fault(&g->r[k]->t)->rank == 0,
                 "rank 0 refused: rank %d rc %d what %d", k, g->rc[k],
                 tr_train_last_fault(&g->r[k]->t)->what);
    ring_close(g);

    /* rank 2 of 4 dies after its 3rd step: its neighbours name it */
    ring_open(g, 4, NULL);
    for (int k = 0; k < 4; k++)
        tr_train_begin(&g->r[k]->t, NULL, 0);
    ring_run(g, 2, 3);
    for (int k = 1; k <= 3; k += 2) {
        const struct tr_train_fault *f = tr_train_last_fault(&g->r[k]->t);
        TH_CHECK(g->rc[k] < 0 && f->rank == 2 && f->what == TR_TRAIN_GRADIENTS && f->epoch == 1 &&
                 f->step == 1, "rank 2 died after step 3 (epoch 2, step 1 of 2): rank %d rc %d "
                 "blames %d (what %d, epoch %u, step %u)", k, g->rc[k], f->rank, f->what,
                 f->epoch, f->step);
    }
    ring_close(g);
    free(g);
}

/* ---- elastic rings of simulated ranks: a rank dies, the survivors reform
 * (the test plays the membership round: source = the furthest position,
 * the lowest index among equals, as tr_el_decide picks) */
#define E_MAX 6
struct ering {
    struct sim_net net[3];        /* the ring of each view */
    int cur;                      /* net of the current view */
    int n0;                       /* processes */
    struct run *r[E_MAX];
    int live[E_MAX];              /* process alive */
    int idx[E_MAX];               /* index in the current view, -1 = not a member */
    int world;                    /* members of the current view */
    int rc[E_MAX];
    int reforms;
    uint64_t src_pos;             /* the source's position at the last reform */
    int left_behind;              /* a survivor was one collective behind the source */
    int kill;                     /* process to kill, -1 none */
    int64_t kill_bytes;           /* ... after it sent this many bytes (>= 0) */
    uint64_t kill_pos;            /* ... or once its position is this (0: not) */
    uint64_t kill_step;           /* ... or after this global step's STEP event (0: not) */
};

static void elastic_cfg(struct tr_train_config *c, int rank, int world)
{
    c->elastic = 1;
    c->rank = rank;
    c->world = world;
}

static int ering_open(struct ering *g, int n, int elastic)
{
    memset(g, 0, sizeof *g);
    g->n0 = g->world = n;
    g->kill = -1;
    g->kill_bytes = -1;
    if (sim_init(&g->net[0], n, 1 << 16) < 0)
        return -1;
    for (int k = 0; k < n; k++) {
        struct tr_train_config c;
        g->r[k] = calloc(1, sizeof *g->r[k]);
        g->r[k]->d = (struct data){ 61, 13, -1, 0, 0 };
        config(&c, &g->r[k]->d, k, n);
        c.sync_every = 3;
        c.epochs = 3;
        c.tp = &g->net[0].tp[k];
        if (elastic)
            elastic_cfg(&c, k, n);
        if (run_open(g->r[k], &c) < 0)
            return -1;
        g->live[k] = 1;
        g->idx[k] = k;
        tr_train_begin(&g->r[k]->t, NULL, 0);
        g->rc[k] = TR_ERR_AGAIN;
    }
    return 0;
}

static void ering_close(struct ering *g)
{
    for (int k = 0; k < g->n0; k++) {
        free(g->r[k]->arena);
        free(g->r[k]);
    }
    for (int i = 0; i <= g->cur; i++)
        sim_free(&g->net[i]);
}

/* The membership round: members that are alive (and joiners, idx -2) form
 * the next view in process order. */
static void ering_reform(struct ering *g)
{
    int n = 0, src = -1, order[E_MAX];
    uint64_t best = 0;
    struct sim_net *net;
    for (int k = 0; k < g->n0; k++)
        if (g->live[k] && g->idx[k] != -1) {
            uint64_t p = g->idx[k] == -2 ? 0 : tr_train_position(&g->r[k]->t);
            if (src < 0 || p > best)
                best = p, src = n;
            order[n++] = k;
        }
    g->left_behind = 0;
    for (int i = 0; i < n; i++)
        g->left_behind |= g->idx[order[i]] != -2 &&
                          tr_train_position(&g->r[order[i]]->t) != best;
    net = &g->net[++g->cur];
    sim_init(net, n, 1 << 16);
    for (int i = 0; i < n; i++) {
        int k = order[i];
        g->idx[k] = i;
        TH_CHECK(tr_train_reform(&g->r[k]->t, i, n, &net->tp[i], src) == 0, "reform %d", k);
        g->rc[k] = TR_ERR_AGAIN;
    }
    g->world = n;
    g->src_pos = best;
    g->reforms++;
}

static int ering_should_die(struct ering *g, int k, int ev, const struct tr_train_report *rep)
{
    if (k != g->kill)
        return 0;
    if (g->kill_pos && ev > 0 && tr_train_position(&g->r[k]->t) == g->kill_pos)
        return 1;
    return g->kill_step && ev == TR_TRAIN_STEP && rep->global_step == g->kill_step;
}

/* One turn of every member; returns 1 while someone runs. */
static int ering_turn(struct ering *g, int *lost)
{
    struct sim_net *net = &g->net[g->cur];
    int busy = 0;
    for (int k = 0; k < g->n0; k++) {
        struct tr_train_report rep;
        int i = g->idx[k], ev;
        if (!g->live[k] || i < 0 || (g->rc[k] <= 0 && g->rc[k] != TR_ERR_AGAIN))
            continue;
        if (g->rc[k] == TR_TRAIN_LOST) {
            (*lost)++;
            continue;
        }
        ev = g->rc[k] = tr_train_poll(&g->r[k]->t, &rep);
        if (ering_should_die(g, k, ev, &rep) || (k == g->kill && net->ep[i].dead)) {
            sim_kill(net, i);
            g->live[k] = 0;
            g->kill = -1;
            continue;
        }
        if (ev == TR_TRAIN_LOST) {
            sim_kill(net, i);          /* a rank that lost the ring closes its links */
            net->ep[i].dead = 0;
        }
        busy |= ev == TR_ERR_AGAIN || ev > 0;
    }
    return busy;
}

/* Run to the end, reforming whenever every member lost the ring. */
static void ering_run(struct ering *g)
{
    for (int rounds = 0; rounds < 2000000; rounds++) {
        int lost = 0, busy;
        if (g->kill >= 0 && g->kill_bytes >= 0 && g->idx[g->kill] >= 0)
            g->net[g->cur].ep[g->idx[g->kill]].die_after = g->kill_bytes, g->kill_bytes = -1;
        busy = ering_turn(g, &lost);
        if (!busy && lost == 0)
            return;
        if (!busy) {
            ering_reform(g);
            continue;
        }
        g->net[g->cur].now += 1;
    }
}

static int ering_same_end(const struct ering *g, uint64_t *hp, uint64_t *hb)
{
    int first = 1, ok = 1;
    for (int k = 0; k < g->n0; k++) {
        const struct tr_model *m = &g->r[k]->t.model;
        uint64_t p, b;
        if (!g->live[k] || g->idx[k] < 0)
            continue;
        p = tr_train_hash(m->params, m->n_params);
        b = tr_train_hash(m->buffers, m->n_buffers);
        ok &= g->rc[k] == 0;
        if (first)
            *hp = p, *hb = b, first = 0;
        ok &= p == *hp && b == *hb;
    }
    return ok && !first;
}

static void test_elastic_plain(void)
{
    struct ering *g = malloc(sizeof *g), *h = malloc(sizeof *h);
    uint64_t p1, b1, p2, b2;
    /* no fault: an elastic ring trains the same bits as a fixed one */
    ering_open(g, 3, 0);
    ering_run(g);
    ering_open(h, 3, 1);
    ering_run(h);
    TH_CHECK(ering_same_end(g, &p1, &b1) && ering_same_end(h, &p2, &b2) && p1 == p2 && b1 == b2 &&
             h->reforms == 0 && g->r[0]->t.global_step == h->r[0]->t.global_step,
             "elastic without faults = the fixed ring (%016llx %016llx, buffers %016llx %016llx, "
             "steps %llu %llu, reforms %d, rc %d %d)",
             (unsigned long long)p1, (unsigned long long)p2, (unsigned long long)b1,
             (unsigned long long)b2, (unsigned long long)g->r[0]->t.global_step,
             (unsigned long long)h->r[0]->t.global_step, h->reforms, g->rc[0], h->rc[0]);
    ering_close(g);
    ering_close(h);
    free(g);
    free(h);
}

/* A death at any byte of the run ends with the bits of the replay that
 * kills the same rank right after the position the survivors resumed from. */
static void test_elastic_deaths(int64_t stride)
{
    struct ering *g = malloc(sizeof *g), *h = malloc(sizeof *h);
    int ok = 1, behind = 0, trials = 0, victims[] = { 0, 2, 3 };
    for (int v = 0; v < 3; v++)
        for (int64_t bytes = 1000; bytes < 200000; bytes += stride) {
            uint64_t p1 = 0, b1 = 0, p2 = 0, b2 = 0;
            int same;
            ering_open(g, 4, 1);
            g->kill = victims[v];
            g->kill_bytes = bytes;
            ering_run(g);
            if (g->reforms == 0 || g->src_pos == 0) {
                /* before the start's state arrived anywhere: nobody can go on */
                int clean = 1;
                for (int k = 0; k < 4; k++)
                    clean &= !g->live[k] || (g->rc[k] < 0 && g->r[k]->t.fault.what ==
                                             TR_TRAIN_START_BCAST);
                if (g->reforms && !clean)
                    TH_CHECK(0, "rank %d dies at byte %lld of the start: clean errors",
                             victims[v], (long long)bytes);
                ok &= !g->reforms || clean;
                ering_close(g);
                continue;
            }
            ering_open(h, 4, 1);
            h->kill = victims[v];
            h->kill_pos = g->src_pos;
            ering_run(h);
            same = ering_same_end(g, &p1, &b1) && ering_same_end(h, &p2, &b2) && p1 == p2 &&
                   b1 == b2 && g->world == 3 && h->world == 3 && h->reforms == 1;
            if (!same)
                TH_CHECK(0, "rank %d dies after %lld bytes: resumed at position %llu (replay %llu, "
                         "%d reforms, world %d/%d, behind %d/%d), end "
                         "%016llx/%016llx, replay %016llx/%016llx", victims[v], (long long)bytes,
                         (unsigned long long)g->src_pos, (unsigned long long)h->src_pos,
                         h->reforms, g->world, h->world, g->left_behind, h->left_behind,
                         (unsigned long long)p1,
                         (unsigned long long)b1, (unsigned long long)p2, (unsigned long long)b2);
            ok &= same;
            behind += g->left_behind;
            trials++;
            ering_close(g);
            ering_close(h);
        }
    TH_CHECK(ok && trials >= 40, "%d deaths at random bytes (ranks 0, 2, 3), %d with survivors a "
             "collective apart: every survivor ends equal, and equal to the replay", trials, behind);
    free(g);
    free(h);
}

/* Two of five die; then one process comes back (a change at a step
 * boundary) and the ring grows again. */
static void test_elastic_regrow(void)
{
    struct ering *g = malloc(sizeof *g);
    uint64_t p, b;
    struct tr_train_config c;
    ering_open(g, 5, 1);
    g->kill = 1;
    g->kill_step = 2;
    while (g->kill >= 0 && g->reforms == 0) {       /* run to the first death */
        int lost = 0;
        if (!ering_turn(g, &lost) && lost)
            ering_reform(g);
        g->net[g->cur].now++;
    }
    g->kill = 3;
    g->kill_step = 4;
    ering_run(g);
    TH_CHECK(ering_same_end(g, &p, &b) && g->world == 3 && g->reforms == 2,
             "two of five die: 3 finish equal (world %d, %d reforms)", g->world, g->reforms);
    ering_close(g);

    /* a process started again: it asks to join at a step, the ring grows to 4 */
    ering_open(g, 4, 1);
    g->kill = 2;
    g->kill_step = 3;
    for (int rounds = 0; rounds < 2000000 && g->reforms < 2; rounds++) {
        int lost = 0, busy = ering_turn(g, &lost);
        if (!busy && lost) {
            ering_reform(g);
            continue;
        }
        if (g->reforms == 1 && !g->live[2]) {       /* back: a fresh process, same rank */
            free(g->r[2]->arena);
            g->r[2]->d = (struct data){ 61, 13, -1, 0, 0 };
            config(&c, &g->r[2]->d, 2, 4);
            elastic_cfg(&c, 2, 4);
            c.sync_every = 3;
            c.epochs = 3;
            c.tp = &g->net[0].tp[2];
            run_open(g->r[2], &c);
            tr_train_begin(&g->r[2]->t, NULL, 0);
            g->live[2] = 1;
            g->idx[2] = -2;                            /* waits for the next round */
            tr_train_request_change(&g->r[0]->t);      /* the coordinator asks */
        }
        for (int k = 0; k < 4; k++)
            if (g->live[k] && g->idx[k] >= 0 && g->rc[k] == TR_TRAIN_CHANGE)
                g->rc[k] = TR_TRAIN_LOST;              /* this test's round: the same path */
        g->net[g->cur].now++;
    }
    ering_run(g);
    TH_CHECK(ering_same_end(g, &p, &b) && g->world == 4 && g->reforms == 2,
             "one dies and comes back: 4 finish equal (world %d, %d reforms, rank 2 rc %d)",
             g->world, g->reforms, g->rc[2]);
    ering_close(g);
    free(g);
}

/* Rank 0 asks for a change once, `ask` turns after its first step (0: never),
 * as an app asks once per joiner. Returns the STEP events rank 0 saw after
 * the request before TR_TRAIN_CHANGE (-1: none came within 3), or with
 * ask 0, the turns between rank 0's first two steps. */
static int ering_ask_at(struct ering *g, int ask)
{
    int turn = -1, steps = 0, first = -1;
    ering_open(g, 3, 1);
    for (int rounds = 0; rounds < 200000 && steps < 3; rounds++) {
        int lost = 0;
        if (turn >= 0 && ++turn == ask)
            tr_train_request_change(&g->r[0]->t);
        if (!ering_turn(g, &lost))
            break;
        if (g->rc[0] == TR_TRAIN_CHANGE && ask > 0 && turn >= ask)
            return steps;
        if (g->rc[0] == TR_TRAIN_STEP) {
            if (turn < 0)
                turn = first = 0;
            else if (ask == 0)
                return turn - first;
            else if (turn >= ask)
                steps++;
        }
        g->net[g->cur].now++;
    }
    return -1;
}

/* A change asked for at any moment of a step (while the gradients or the
 * change flag's sum are in flight, or between steps) is carried by that
 * step or the next: TR_TRAIN_CHANGE comes within two steps. */
static void test_elastic_request_any_turn(void)
{
    struct ering *g = malloc(sizeof *g);
    int per_step, missed = 0, j;
    per_step = ering_ask_at(g, 0);
    ering_close(g);
    for (j = 1; per_step > 0 && j <= 2 * per_step; j++) {
        int steps = ering_ask_at(g, j);
        ering_close(g);
        missed += steps < 0;           /* -1: not within two steps */
        if (steps < 0)
            TH_CHECK(0, "a change asked at turn %d after a step (%d turns per step) was lost",
                     j, per_step);
    }
    TH_CHECK(per_step > 0 && missed == 0,
             "a change asked at each of %d turns (%d per step) came within two steps",
             2 * per_step, per_step);
    free(g);
}

/* An elastic run's checkpoint (version 4: the deal) resumes at another
 * world: taken when the ring is lost, it restarts 2 ranks that train the
 * same parameters as the 2 survivors that went on without it. */
static void test_elastic_state(void)
{
    struct ering *g = malloc(sizeof *g), *h = malloc(sizeof *h);
    struct tr_train_state_info in;
    uint64_t p1 = 0, b1 = 0, p2 = 0, b2 = 0;
    long len;
    uint8_t *buf;
    int lost = 0;
    ering_open(g, 3, 1);
    g->kill = 1;
    g->kill_step = 5;
    while (ering_turn(g, &lost) || !lost)
        g->net[g->cur].now++;
    len = (long)tr_train_state_size(&g->r[0]->t, TR_STATE_CHECKPOINT);
    buf = malloc((size_t)len);
    TH_CHECK(tr_train_state_save(&g->r[0]->t, TR_STATE_CHECKPOINT, buf, (size_t)len) == len &&
             tr_train_state_check(buf, (size_t)len, &in) == 0 && in.version == 4 &&
             in.header_len == TR_STATE_HEADER2 && in.global_step == 5 && in.deal_world == 3,
             "a lost ring's state saves as version 4 (step %llu, deal world %u)",
             (unsigned long long)in.global_step, in.deal_world);
    ering_reform(g);
    ering_run(g);
    ering_open(h, 2, 1);
    h->r[0]->t.phase = 0;     /* begun by ering_open: begin again from the bytes */
    TH_CHECK(tr_train_begin(&h->r[0]->t, buf, (size_t)len) == 0 &&
             h->r[0]->t.global_step == 5, "version 4 loads at world 2");
    ering_run(h);
    TH_CHECK(ering_same_end(g, &p1, &b1) && ering_same_end(h, &p2, &b2) && p1 == p2 &&
             h->r[0]->t.global_step == g->r[0]->t.global_step,
             "resumed at world 2 = the survivors (%016llx %016llx)", (unsigned long long)p1,
             (unsigned long long)p2);
    buf[100] ^= 1;            /* a state that fails its CRC */
    TH_CHECK(tr_train_state_check(buf, (size_t)len, &in) == TR_ERR_FORMAT, "CRC checked");
    free(buf);
    ering_close(g);
    ering_close(h);
    free(g);
    free(h);
}

/* ---- compressed gradients and periodic averaging */

static int residual_sum_nonzero(const struct tr_train *t)
{
    for (size_t i = 0; i < t->model.n_params; i++)
        if (t->residual[i] != 0.0f)
            return 1;
    return 0;
}

static uint64_t ring_final(struct ring *g, int world, int *ok)
{
    for (int k = 0; k < world; k++)
        *ok &= g->rc[k] == 0 && g->r[k]->t.global_step == g->r[0]->t.global_step &&
               tr_train_hash(g->r[k]->t.model.params, g->r[k]->t.model.n_params) ==
                   tr_train_hash(g->r[0]->t.model.params, g->r[0]->t.model.n_params);
    return tr_train_hash(g->r[0]->t.model.params, g->r[0]->t.model.n_params);
}

static void other_codec(struct tr_train_config *c, int rank)
{
    if (rank == 2)
        c->compress = c->compress == TR_CODEC_INT8 ? TR_CODEC_INT4 : TR_CODEC_INT8;
}

static void other_period(struct tr_train_config *c, int rank)
{
    if (rank == 1)
        c->average_every = 4;
}

static void test_codec_ring(void)
{
    struct ring *g = malloc(sizeof *g);
    uint64_t plain, h[TR_CODEC_COUNT];
    int ok = 1;
    for (int codec = TR_CODEC_NONE; codec < TR_CODEC_COUNT; codec++) {
        knob_compress = codec;
        ok = 1;
        ring_open(g, 3, NULL);
        for (int k = 0; k < 3; k++)
            tr_train_begin(&g->r[k]->t, NULL, 0);
        ring_run(g, -1, 0);
        for (int s = 1; s < 10; s++)
            for (int k = 1; k < 3; k++)
                ok &= g->step_hash[k][s] == g->step_hash[0][s];
        h[codec] = ring_final(g, 3, &ok);
        TH_CHECK(ok, "--compress %s: every rank equal after every step", tr_codec_name(codec));
        TH_CHECK(codec == TR_CODEC_NONE ? g->r[0]->t.residual == NULL
                                        : g->r[0]->t.residual && residual_sum_nonzero(&g->r[0]->t),
                 "--compress %s: a residual only for a lossy codec, and in use",
                 tr_codec_name(codec));
        ring_close(g);
    }
    plain = h[TR_CODEC_NONE];
    TH_CHECK(h[1] != plain && h[2] != plain && h[3] != plain && h[1] != h[2] && h[2] != h[3],
             "each codec trains its own bits (%016llx %016llx %016llx %016llx)",
             (unsigned long long)h[0], (unsigned long long)h[1], (unsigned long long)h[2],
             (unsigned long long)h[3]);
    /* hello refuses a rank with another codec */
    knob_compress = TR_CODEC_INT8;
    ring_open(g, 3, other_codec);
    for (int k = 0; k < 3; k++)
        tr_train_begin(&g->r[k]->t, NULL, 0);
    ring_run(g, -1, 0);
    for (int k = 0; k < 3; k++)
        TH_CHECK(g->rc[k] == TR_ERR_MISMATCH &&
                 tr_train_last_fault(&g->r[k]->t)->what == TR_TRAIN_HELLO,
                 "int4 on rank 2 among int8: rank %d rc %d", k, g->rc[k]);
    ring_close(g);
    knob_compress = TR_CODEC_NONE;
    /* a lossy codec with another algorithm, or with periodic averaging */
    {
        struct tr_train_config c;
        struct data d = { 40, 12, -1, 0, 0 };
        size_t bytes;
        config(&c, &d, 0, 1);
        c.compress = TR_CODEC_INT8;
        c.algo = TR_ALGO_CHAIN;
        TH_CHECK(tr_train_arena_size(&c, &bytes) == TR_ERR_INVAL, "int8 with the chain accepted");
        c.algo = TR_ALGO_RING;
        c.average_every = 2;
        c.elastic = 1;
        TH_CHECK(tr_train_arena_size(&c, &bytes) == 0, "elastic averaging refused");
        c.elastic = 0;
        c.compress = 17;
        c.average_every = 0;
        TH_CHECK(tr_train_arena_size(&c, &bytes) == TR_ERR_INVAL, "codec 17 accepted");
    }
    free(g);
}

/* periodic averaging: ranks differ between the averages and agree at them */
static void test_average_every(void)
{
    struct ring *g = malloc(sizeof *g);
    uint64_t hc[2];
    for (int codec = 0; codec < 2; codec++) {
    int differ = 0, agree = 1, ok = 1;
    knob_average_every = 3;
    knob_compress = codec ? TR_CODEC_INT8 : TR_CODEC_NONE;
    ring_open(g, 3, NULL);
    for (int k = 0; k < 3; k++)
        tr_train_begin(&g->r[k]->t, NULL, 0);
    ring_run(g, -1, 0);
    /* the STEP event comes before the step's average: step s's hash is
     * local; step s-1's was averaged when s-1 is a multiple of 3 */
    for (int s = 1; s < 6; s++)
        for (int k = 1; k < 3; k++)
            differ |= g->step_hash[k][s] != g->step_hash[0][s];
    hc[codec] = ring_final(g, 3, &ok);
    for (int k = 1; k < 3; k++)
        agree &= tr_train_hash(g->r[k]->t.model.momentum, g->r[k]->t.model.n_params) ==
                 tr_train_hash(g->r[0]->t.model.momentum, g->r[0]->t.model.n_params);
    TH_CHECK(differ && ok && agree, "--average-every 3 --compress %s: local steps differ (%d), "
             "the end agrees (params %d, momentum %d)", tr_codec_name(knob_compress), differ,
             ok, agree);
    TH_CHECK(!codec || residual_sum_nonzero(&g->r[0]->t), "the average's residual in use");
    ring_close(g);
    }
    knob_compress = TR_CODEC_NONE;
    TH_CHECK(hc[0] != hc[1], "the compressed average trains its own bits");
    ring_open(g, 3, other_period);
    for (int k = 0; k < 3; k++)
        tr_train_begin(&g->r[k]->t, NULL, 0);
    ring_run(g, -1, 0);
    for (int k = 0; k < 3; k++)
        TH_CHECK(g->rc[k] == TR_ERR_MISMATCH, "another period on rank 1: rank %d rc %d", k,
                 g->rc[k]);
    ring_close(g);
    knob_average_every = 0;
    free(g);
}

int main(void)
{
    test_sampler_bijection();
    test_sampler_order();
    test_sampler_redeal();
    test_arena();
    test_events();
    test_state();
    test_state_write();
    test_failures();
    test_ring();
    test_ring_faults();
    test_elastic_plain();
    test_elastic_deaths(3001);
    test_elastic_regrow();
    test_elastic_request_any_turn();
    test_elastic_state();
    test_codec_ring();
    test_average_every();
    /* the residual through a checkpoint and an elastic resync, bit for bit:
     * lost between sync points, each rank's residual is its own; the
     * survivors start the new ring with none, the checkpoint holds none,
     * and both must end equal */
    knob_compress = TR_CODEC_INT8;
    test_elastic_state();
    /* ... and deaths at every point of a step: which survivor holds the
     * source's position must not decide the residual, and a rank rolled
     * back from the next step to a sync point's position holds the common
     * residual again (res_same restored with it) */
    test_elastic_deaths(12011);
    knob_compress = TR_CODEC_NONE;
    /* --elastic with periodic averaging: every survivor goes back to the
     * last average, so whichever survivors completed what, the end is the
     * replay's; without a codec and with int8 */
    knob_average_every = 3;
    test_elastic_deaths(12011);
    knob_compress = TR_CODEC_INT8;
    test_elastic_deaths(12011);
    knob_compress = TR_CODEC_NONE;
    knob_average_every = 0;
    return th_report("train");
}
