/* test_train_buckets: the trainer's gradient by buckets (docs/BUCKETS.md)
 * over rings of simulated ranks driven by tr_train_poll.
 *
 *   - ranks in the in-place mode (TR_TRAIN_GRADS_BUCKET: one bucket buffer,
 *     SGD per bucket) and in the full mode, on the fast and the lean plan,
 *     mixed in one ring of 1-4 ranks and every algorithm, hold the same
 *     parameters after every step as a ring of full-mode fast-plan ranks,
 *     with momentum 0.9 and 0, and end with equal BN statistics;
 *   - the trainer's arena: the query is what init uses, one byte less is
 *     TR_ERR_NOMEM; the in-place mode saves the gradient less its largest
 *     bucket; momentum 0 drops the momentum twin;
 *   - elastic in the in-place mode (docs/BUCKETS.md 6): rank 0 or 1 killed after
 *     every few hundred bytes it sent, across whole steps; each time the
 *     survivors hold bit-identical parameters, momentum and BN statistics
 *     right after the resync and at the end, a replay of the same death ends
 *     with the same bits, and some deaths leave survivors a step's part
 *     apart (one with k buckets applied, another with more). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sim_transport.h"
#include "tinyring.h"
#include "tr_train.h"
#include "train_samples.h"

static int load(void *ctx, int split, const uint32_t *idx, unsigned n, uint8_t *px, uint8_t *lb)
{
    (void)ctx;
    for (unsigned k = 0; k < n; k++) {
        for (unsigned p = 0; p < 784; p++)
            px[(size_t)k * 784 + p] = train_sample_pixel(split, idx[k], p);
        lb[k] = (uint8_t)(idx[k] % 10);
    }
    return 0;
}

static void config(struct tr_train_config *c, int rank, int world, float mu)
{
    memset(c, 0, sizeof *c);
    tr_model_desc_convnet(&c->model, 4, 8, 10);
    c->batch = 5;
    c->n_train = 47;
    c->n_test = 9;
    c->load = load;
    c->lr = 0.02f;
    c->momentum = mu;
    c->seed = 5;
    c->algo = TR_ALGO_RING;
    c->epochs = 2;
    c->rank = rank;
    c->world = world;
    c->job_token = 99;
    c->segment_bytes = 1024;      /* many segments: buckets really overlap */
}

struct ring {
    struct sim_net net;
    int world;
    struct tr_train *t[SIM_MAX_WORLD];
    uint8_t *arena[SIM_MAX_WORLD];
    uint64_t hash[SIM_MAX_WORLD][32];
    int rc[SIM_MAX_WORLD];
};

/* mode: 0 every rank full/fast; 1 mixed (odd ranks in-place, ranks 2, 3 lean) */
static int ring_run(struct ring *g, int world, int algo, float mu, int mixed)
{
    int busy = 1, rounds = 0;
    memset(g, 0, sizeof *g);
    g->world = world;
    if (sim_init(&g->net, world, 1 << 15) < 0)
        return -1;
    for (int k = 0; k < world; k++) {
        struct tr_train_config c;
        size_t bytes;
        config(&c, k, world, mu);
        c.algo = algo;
        c.tp = world > 1 ? &g->net.tp[k] : NULL;
        if (mixed) {
            c.grad_mode = (k % 2 == 1 || world == 1) ? TR_TRAIN_GRADS_BUCKET : TR_TRAIN_GRADS_FULL;
            c.model.plan = k >= 2 || world == 1 ? TR_PLAN_LEAN : TR_PLAN_FAST;
        }
        g->t[k] = calloc(1, sizeof *g->t[k]);
        if (tr_train_arena_size(&c, &bytes) < 0 ||
            posix_memalign((void **)&g->arena[k], TR_ARENA_ALIGN, bytes) ||
            tr_train_init(g->t[k], &c, g->arena[k], bytes) < 0 ||
            tr_train_begin(g->t[k], NULL, 0) < 0)
            return -1;
        g->rc[k] = TR_ERR_AGAIN;
    }
    while (busy && rounds++ < 2000000) {
        busy = 0;
        for (int k = 0; k < world; k++) {
            struct tr_train_report rep;
            if (g->rc[k] != TR_ERR_AGAIN && g->rc[k] <= 0)
                continue;
            g->rc[k] = tr_train_poll(g->t[k], &rep);
            if (g->rc[k] == TR_TRAIN_STEP && rep.global_step < 32)
                g->hash[k][rep.global_step] =
                    tr_train_hash(g->t[k]->model.params, g->t[k]->model.n_params);
            busy |= g->rc[k] == TR_ERR_AGAIN || g->rc[k] > 0;
        }
    }
    return 0;
}

static void ring_free(struct ring *g)
{
    for (int k = 0; k < g->world; k++) {
        free(g->arena[k]);
        free(g->t[k]);
    }
    sim_free(&g->net);
}

static void test_rings(void)
{
    static struct ring ref, mix;
    for (int m = 0; m < 2; m++)
        for (int world = 1; world <= 4; world++)
            for (int algo = 0; algo < 3; algo += (world == 1 ? 3 : 1)) {
                float mu = m ? 0.0f : 0.9f;
                int ok = ring_run(&ref, world, algo, mu, 0) == 0 && ring_run(&mix, world, algo, mu, 1) == 0;
                uint64_t steps = ok ? ref.t[0]->global_step : 0;
                for (int k = 0; ok && k < world; k++) {
                    ok &= ref.rc[k] == 0 && mix.rc[k] == 0 && mix.t[k]->global_step == steps;
                    for (uint64_t s = 1; s <= steps && s < 32; s++)
                        ok &= mix.hash[k][s] == ref.hash[0][s] && ref.hash[k][s] == ref.hash[0][s];
                    ok &= tr_train_hash(mix.t[k]->model.buffers, mix.t[k]->model.n_buffers) ==
                          tr_train_hash(ref.t[0]->model.buffers, ref.t[0]->model.n_buffers);
                }
                TH_CHECK(ok && steps > 4,
                         "world %d algo %d momentum %g: in-place and full, fast and lean ranks = "
                         "a full fast ring after each of %llu steps", world, algo, (double)mu,
                         (unsigned long long)steps);
                ring_free(&ref);
                ring_free(&mix);
            }
}

static void test_arena(void)
{
    static const float mus[2] = { 0.9f, 0.0f };
    struct tr_train *t = calloc(1, sizeof *t);
    for (int plan = 0; plan < 2; plan++)
        for (int mi = 0; mi < 2; mi++)
            for (int mode = 0; mode < 2; mode++) {
                struct tr_train_config c;
                size_t bytes, full, n_params, big;
                uint8_t *a;
                config(&c, 0, 1, mus[mi]);
                tr_model_desc_convnet(&c.model, 16, 32, 10);
                c.batch = 1;
                c.model.plan = (uint8_t)plan;
                c.grad_mode = mode;
                tr_train_arena_size(&c, &bytes);
                c.grad_mode = 0;
                tr_train_arena_size(&c, &full);
                c.grad_mode = mode;
                tr_model_counts(&c.model, &n_params, NULL);
                big = 15690;                   /* the seed's linear layer */
                if (posix_memalign((void **)&a, TR_ARENA_ALIGN, bytes))
                    a = NULL;
                TH_CHECK(a && tr_train_init(t, &c, a, bytes - 1) == TR_ERR_NOMEM &&
                             tr_train_init(t, &c, a, bytes) == 0 && t->arena_used == bytes &&
                             (mus[mi] != 0.0f) == (t->model.momentum != NULL),
                         "plan %d momentum %g mode %d: query %zu = used, one byte less NOMEM",
                         plan, (double)mus[mi], mode, bytes);
                if (mode == 1)
                    /* the lean plan's spill: BN2's 64 floats */
                    TH_CHECK(full - bytes + (plan ? 64 * 4 : 0) >= (n_params - big) * 4 - 64 &&
                             full - bytes + (plan ? 64 * 4 : 0) <= (n_params - big) * 4 + 64,
                             "plan %d momentum %g: in-place saves %zu bytes (gradient %zu less "
                             "the largest bucket %zu)", plan, (double)mus[mi], full - bytes,
                             n_params * 4, big * 4);
                free(a);
            }
    {
        struct tr_train_config c;
        size_t with, without;
        config(&c, 0, 1, 0.9f);
        tr_train_arena_size(&c, &with);
        c.momentum = 0.0f;
        tr_train_arena_size(&c, &without);
        {
            size_t np;
            tr_model_counts(&c.model, &np, NULL);
            TH_CHECK(with - without >= np * 4 && with - without <= np * 4 + 64,
                     "momentum 0: no momentum twin (%zu bytes less, %zu params)", with - without,
                     np);
        }
        c.momentum = 0.9f;
        c.grad_mode = 2;
        TH_CHECK(tr_train_arena_size(&c, &with) == TR_ERR_INVAL, "grad_mode 2 refused");
    }
    free(t);
}

/* ---- elastic: a ring of 3, a rank dies after die_bytes, reform, go on */
struct er {
    struct sim_net net[4];
    int cur, n0, world, reforms, partial_seen, resync_ok;
    int victim;                   /* the rank that dies */
    uint64_t want;                /* params of the survivor furthest into the step */
    struct tr_train *t[3];
    uint8_t *arena[3];
    int live[3], idx[3], rc[3];
};

static int er_open(struct er *g, int64_t die_bytes, int victim)
{
    memset(g, 0, sizeof *g);
    g->n0 = g->world = 3;
    g->resync_ok = 1;
    if (sim_init(&g->net[0], 3, 1 << 15) < 0)
        return -1;
    for (int k = 0; k < 3; k++) {
        struct tr_train_config c;
        size_t bytes;
        config(&c, k, 3, 0.9f);
        c.elastic = 1;
        c.sync_every = 3;
        c.grad_mode = TR_TRAIN_GRADS_BUCKET;
        c.model.plan = k == 2 ? TR_PLAN_LEAN : TR_PLAN_FAST;
        c.tp = &g->net[0].tp[k];
        g->t[k] = calloc(1, sizeof *g->t[k]);
        if (tr_train_arena_size(&c, &bytes) < 0 ||
            posix_memalign((void **)&g->arena[k], TR_ARENA_ALIGN, bytes) ||
            tr_train_init(g->t[k], &c, g->arena[k], bytes) < 0 || tr_train_begin(g->t[k], NULL, 0) < 0)
            return -1;
        g->live[k] = 1;
        g->idx[k] = k;
        g->rc[k] = TR_ERR_AGAIN;
    }
    g->victim = victim;
    g->net[0].ep[victim].die_after = die_bytes;
    return 0;
}

static void er_close(struct er *g)
{
    for (int k = 0; k < g->n0; k++) {
        free(g->arena[k]);
        free(g->t[k]);
    }
    for (int i = 0; i <= g->cur; i++)
        sim_free(&g->net[i]);
}

static void er_reform(struct er *g)
{
    int n = 0, src = -1, order[3], partial = 0, differ = 0;
    uint64_t best = 0, first = 0, far = 0;
    struct sim_net *net;
    /* the survivor with the greatest (step, buckets applied), first among
     * equals, found without tr_train_position: its state is what all get */
    for (int k = 0; k < g->n0; k++)
        if (g->live[k] && g->idx[k] >= 0) {
            const struct tr_train *t = g->t[k];
            uint64_t key = t->global_step * 17u + (t->bk_partial ? t->bk_partial : 16u) + 1u;
            if (key > far) {
                far = key;
                g->want = tr_train_hash(t->model.params, t->model.n_params);
            }
        }
    for (int k = 0; k < g->n0; k++)
        if (g->live[k] && g->idx[k] >= 0) {
            uint64_t p = tr_train_position(g->t[k]);
            if (src < 0 || p > best)
                best = p, src = n;
            differ |= n > 0 && p != first;
            first = n ? first : p;
            partial |= g->t[k]->bk_partial > 0;
            order[n++] = k;
        }
    g->partial_seen |= partial && differ;
    net = &g->net[++g->cur];
    sim_init(net, n, 1 << 15);
    for (int i = 0; i < n; i++) {
        int k = order[i];
        g->idx[k] = i;
        tr_train_reform(g->t[k], i, n, &net->tp[i], src);
        g->rc[k] = TR_ERR_AGAIN;
    }
    g->world = n;
    g->reforms++;
}

/* after a reform, every member's state once it returned TR_TRAIN_START */
static void er_check_resync(struct er *g)
{
    const struct tr_model *m0 = NULL;
    for (int k = 0; k < g->n0; k++) {
        const struct tr_model *m = &g->t[k]->model;
        if (!g->live[k] || g->idx[k] < 0)
            continue;
        g->resync_ok &= tr_train_hash(m->params, m->n_params) == g->want;
        if (!m0) {
            m0 = m;
            continue;
        }
        g->resync_ok &= memcmp(m->params, m0->params, m->n_params * 4) == 0 &&
                        memcmp(m->momentum, m0->momentum, m->n_params * 4) == 0 &&
                        memcmp(m->buffers, m0->buffers, m->n_buffers * 4) == 0;
    }
}

static void er_run(struct er *g)
{
    int started = 0;
    for (int rounds = 0; rounds < 2000000; rounds++) {
        struct sim_net *net = &g->net[g->cur];
        int busy = 0, lost = 0;
        for (int k = 0; k < g->n0; k++) {
            struct tr_train_report rep;
            int i = g->idx[k], ev;
            if (!g->live[k] || i < 0 || (g->rc[k] <= 0 && g->rc[k] != TR_ERR_AGAIN))
                continue;
            if (g->rc[k] == TR_TRAIN_LOST) {
                lost++;
                continue;
            }
            ev = g->rc[k] = tr_train_poll(g->t[k], &rep);
            if (net->ep[i].dead && g->cur == 0 && k == g->victim) {
                g->live[k] = 0;                /* the killed process */
                continue;
            }
            if (ev == TR_TRAIN_LOST) {
                sim_kill(net, i);
                net->ep[i].dead = 0;
            }
            if (ev == TR_TRAIN_START && g->reforms > 0 && ++started == g->world) {
                er_check_resync(g);
                started = 0;
            }
            busy |= ev == TR_ERR_AGAIN || ev > 0;
        }
        if (!busy && lost == 0)
            return;
        if (!busy) {
            started = 0;
            er_reform(g);
            continue;
        }
        net->now += 1;
    }
}

static uint64_t er_hash(const struct er *g, int *same)
{
    uint64_t h = 0;
    int first = 1;
    *same = 1;
    for (int k = 0; k < g->n0; k++) {
        const struct tr_model *m = &g->t[k]->model;
        uint64_t x;
        if (!g->live[k])
            continue;
        x = tr_train_hash(m->params, m->n_params) ^ 3 * tr_train_hash(m->buffers, m->n_buffers) ^
            7 * tr_train_hash(m->momentum, m->n_params);
        *same &= g->rc[k] == 0 && (first || x == h);
        h = x;
        first = 0;
    }
    return h;
}

static void test_elastic(void)
{
    static struct er a, b;
    int trials = 0, all_ok = 1, partial = 0, lost = 0;
    for (int64_t die = 48000; die < 190000; die += 1777) {   /* after the start's broadcasts */
        int same_a, same_b, ok, victim = (int)(die / 1777) % 2;
        uint64_t ha, hb;
        if (er_open(&a, die, victim) < 0 || er_open(&b, die, victim) < 0) {
            TH_CHECK(0, "elastic ring open");
            return;
        }
        er_run(&a);
        er_run(&b);
        ha = er_hash(&a, &same_a);
        hb = er_hash(&b, &same_b);
        ok = same_a && same_b && ha == hb && a.resync_ok && !a.live[victim] && a.reforms >= 1;
        if (!ok)
            fprintf(stderr, "  die after %lld bytes: survivors same %d, replay same %d, resync %d, "
                    "reforms %d\n", (long long)die, same_a, ha == hb, a.resync_ok, a.reforms);
        all_ok &= ok;
        partial += a.partial_seen;
        lost += a.reforms > 0;
        trials++;
        er_close(&a);
        er_close(&b);
    }
    TH_CHECK(all_ok && lost == trials, "in-place elastic, %d deaths: survivors bit-identical after "
             "the resync (the state of the one furthest into the step) and at the end, each "
             "replay the same", trials);
    TH_CHECK(partial > 0, "some deaths (%d of %d) left survivors a part of a step apart", partial,
             trials);
}

int main(void)
{
    test_elastic();
    test_arena();
    test_rings();
    return th_report("train_buckets");
}
