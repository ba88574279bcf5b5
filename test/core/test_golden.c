/* test_golden: the seed ConvNet against PyTorch (test/core/torch_golden.py wrote
 * test/fixtures/convnet_golden.bin; torch is not needed here).
 *
 * Checked, for a fixed batch of 8 from tr_model_init_params(42), with both
 * the fast and the reference kernels: the first 32 initial values of every
 * parameter tensor (bitwise: the init is PyTorch-compatible in distribution
 * and tinyring-defined in bits), the training-mode logits and loss, every
 * gradient, the BN running stats after one forward, and after 3 SGD steps
 * (lr 0.02 momentum 0.9; lr 0.05 with weight decay 0.01 + nesterov) the losses, every parameter,
 * the running stats and the eval-mode logits.
 *
 * Tolerance, per element: |c - t| <= 1e-4 * (|t| + s), s = 0.01 * max|t|
 * over the tensor: 1e-4 relative, with an absolute floor at 1e-6 of the
 * tensor's scale for values that are sums cancelling to near zero (float
 * summation order differs from oneDNN's). */
#include "harness.h"
#ifndef TEST_SUITE
#define TEST_SUITE "core_golden"
#endif
#include "tinyring.h"
#include "tr_util.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXREC 32
struct rec { char name[64]; uint32_t n; float *v; };
static struct rec recs[MAXREC];
static int nrec;

static int load(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char hdr[8], b4[4];
    int len;
    if (!f) return -1;
    if (fread(hdr, 1, 8, f) != 8 || memcmp(hdr, "TRGOLD1\n", 8) != 0) { fclose(f); return -1; }
    while (nrec < MAXREC && (len = fgetc(f)) != EOF) {
        struct rec *r = &recs[nrec];
        uint32_t i;
        if (fread(r->name, 1, (size_t)len, f) != (size_t)len || fread(b4, 1, 4, f) != 4) break;
        r->name[len] = 0;
        r->n = tr_get_le32(b4);
        r->v = malloc((r->n ? r->n : 1) * sizeof(float));
        for (i = 0; i < r->n; i++) {
            uint32_t u;
            if (fread(b4, 1, 4, f) != 4) { fclose(f); return -1; }
            u = tr_get_le32(b4);
            memcpy(&r->v[i], &u, 4);
        }
        nrec++;
    }
    fclose(f);
    return nrec;
}

static const struct rec *get(const char *name)
{
    int i;
    for (i = 0; i < nrec; i++)
        if (strcmp(recs[i].name, name) == 0) return &recs[i];
    fprintf(stderr, "fixture record %s missing\n", name);
    return NULL;
}

static double worst_seen;

static void cmp(const char *what, const float *c, const char *name, size_t n)
{
    const struct rec *t = get(name);
    double mx = 0.0, w = 0.0;
    size_t i, at = 0;
    if (!t || t->n != n) {
        TH_CHECK(0, "%s: fixture %s has %u values, want %zu", what, name, t ? t->n : 0, n);
        return;
    }
    for (i = 0; i < n; i++)
        if (fabs(t->v[i]) > mx) mx = fabs(t->v[i]);
    for (i = 0; i < n; i++) {
        double e = fabs((double)c[i] - t->v[i]) / (1e-4 * (fabs(t->v[i]) + 0.01 * mx));
        if (!(e <= w)) { w = e != e ? 1e30 : e; at = i; }
    }
    if (w > worst_seen) worst_seen = w;
    printf("  %-28s %6zu values, worst %.3f of tolerance\n", what, n, w);
    TH_CHECK(w <= 1.0, "%s: element %zu is %.8g, PyTorch %.8g (%.2f x tolerance)", what, at,
             c[at], t->v[at], w);
}

static void run(int kernels)
{
    static uint8_t arena[8u << 20] TR_ARENA_ALIGNED;
    struct tr_model_desc d;
    struct tr_model m;
    const struct rec *x = get("input"), *lab = get("labels"), *head = get("init_head");
    uint8_t labels[8];
    float loss, losses[3];
    unsigned i, k, hi = 0, hbad = 0, tag;
    const char *kn = kernels == TR_KERNELS_REF ? "ref" : "fast";
    char what[64];

    if (!x || !lab || !head || lab->n != 8 || x->n != 8 * 784) {
        TH_CHECK(0, "fixture records input/labels/init_head");
        return;
    }
    for (i = 0; i < 8; i++) labels[i] = (uint8_t)lab->v[i];
    tr_model_desc_convnet(&d, 16, 32, 10);
    TH_CHECK(tr_model_init(&m, &d, 8, arena, sizeof arena) == 0, "init");
    m.kernels = kernels;
    tr_model_init_params(&m, 42);
    /* first 32 values of each of the 10 tensors, bitwise */
    for (i = 0; i < m.n_layers; i++) {
        const struct tr_layer *l = &m.layer[i];
        size_t wl = l->p_len - (l->d.kind == TR_LAYER_BATCHNORM2D ? l->in_c : l->out_c);
        size_t off[2] = {l->p_off, l->p_off + wl}, len[2] = {wl, l->p_len - wl};
        if (!l->p_len) continue;
        for (k = 0; k < 2; k++) {
            size_t j;
            for (j = 0; j < len[k] && j < 32; j++, hi++)
                if (hi >= head->n || memcmp(&m.params[off[k] + j], &head->v[hi], 4) != 0) hbad++;
        }
    }
    TH_CHECK(hbad == 0 && hi == head->n, "init params bitwise equal to the script's (%u of %u differ)",
             hbad, hi);
    printf("%s kernels:\n", kn);
    TH_CHECK(tr_model_forward(&m, x->v, 8, 1) == 0, "forward");
    cmp("logits", tr_model_logits(&m), "fwd_logits", 80);
    tr_model_loss(&m, labels, &loss, NULL);
    cmp("loss", &loss, "fwd_loss", 1);
    TH_CHECK(tr_model_backward(&m) == 0, "backward");
    for (i = 0; i < m.n_layers; i++) {
        const struct tr_layer *l = &m.layer[i];
        const struct rec *g = get("fwd_grads");
        if (!l->p_len || !g) continue;
        /* per layer, so each layer's gradient scale sets its floor */
        {
            float *sub = g->v;
            struct rec keep = *g;
            recs[g - recs].v = sub + l->p_off;
            recs[g - recs].n = (uint32_t)l->p_len;
            snprintf(what, sizeof what, "grads layer %u", i);
            cmp(what, m.grads + l->p_off, "fwd_grads", l->p_len);
            recs[g - recs] = keep;
        }
    }
    cmp("BN running stats, 1 fwd", m.buffers, "fwd_buffers", m.n_buffers);
    for (tag = 0; tag < 2; tag++) {
        struct tr_sgd s;
        char nm[32];
        tr_sgd_init(&s);
        s.lr = tag ? 0.05f : 0.02f;
        if (tag) { s.weight_decay = 0.01f; s.nesterov = 1; }
        tr_model_init(&m, &d, 8, arena, sizeof arena);
        m.kernels = kernels;
        tr_model_init_params(&m, 42);
        for (k = 0; k < 3; k++) {
            tr_model_forward(&m, x->v, 8, 1);
            tr_model_loss(&m, labels, &losses[k], NULL);
            tr_model_backward(&m);
            tr_sgd_step(&s, m.params, m.grads, m.momentum, m.n_params);
        }
        snprintf(nm, sizeof nm, "%c_losses", 'a' + tag);
        snprintf(what, sizeof what, "SGD %s: losses", tag ? "wd+nesterov" : "momentum");
        cmp(what, losses, nm, 3);
        snprintf(nm, sizeof nm, "%c_params", 'a' + tag);
        snprintf(what, sizeof what, "SGD %s: params", tag ? "wd+nesterov" : "momentum");
        cmp(what, m.params, nm, m.n_params);
        snprintf(nm, sizeof nm, "%c_buffers", 'a' + tag);
        snprintf(what, sizeof what, "SGD %s: BN stats", tag ? "wd+nesterov" : "momentum");
        cmp(what, m.buffers, nm, m.n_buffers);
        tr_model_forward(&m, x->v, 8, 0);
        snprintf(nm, sizeof nm, "%c_eval_logits", 'a' + tag);
        snprintf(what, sizeof what, "SGD %s: eval logits", tag ? "wd+nesterov" : "momentum");
        cmp(what, tr_model_logits(&m), nm, 80);
    }
}

int main(int argc, char **argv)
{
    char path[512];
    snprintf(path, sizeof path, "%s/convnet_golden.bin", argc > 1 ? argv[1] : "test/fixtures");
    TH_CHECK(load(path) > 0, "load %s", path);
    if (nrec > 0) {
        run(TR_KERNELS_FAST);
        run(TR_KERNELS_REF);
    }
    printf("worst element: %.3f of the tolerance\n", worst_seen);
    return th_report(TEST_SUITE);
}
