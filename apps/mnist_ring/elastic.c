/* mnist_ring --elastic (see elastic.h). */
#define _GNU_SOURCE
#include "elastic.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

int mr_elastic_left;

/* A process started again asks the job for at most this long per try. */
#define MR_FIND_MS 1500u

/* The POSIX port's config for this process's init method. */
static void posix_config(const struct mr_elastic *e, const char *init_method,
                         struct tr_posix_config *pc)
{
    tr_posix_config_default(pc);
    pc->init_method = init_method;
    pc->rank = (int)e->rank;
    pc->world = (int)e->world;
}

static void config(struct mr_elastic *e, const struct mr_args *a, const char *job_token,
                   struct tr_posix_elastic_config *ec)
{
    memset(ec, 0, sizeof *ec);
    ec->job_token = tr_posix_token(job_token);
    ec->rank = e->rank;
    ec->world = e->world;
    ec->min_ranks = a->min_ranks;
    ec->timeout_ms = a->timeout_s * 1000u;
    if (a->nproc > 1)
        ec->local_ranks = a->nproc;
    ec->spin_us = TR_POSIX_SPIN_AUTO;
    if (getenv("MR_DEBUG_NO_BEAT"))            /* tests: the timeouts alone */
        ec->beat_ms = TR_POSIX_BEAT_OFF;
}

static void debug_die_at(struct mr_elastic *e)
{
    const char *s = getenv("MR_DEBUG_DIE_AT");
    unsigned long long pos;
    long rank;
    e->die_rank = -1;
    if (s && sscanf(s, "%ld:%llu", &rank, &pos) == 2) {
        e->die_rank = rank;
        e->die_pos = pos;
    }
}

/* A fixed job's start (rendezvous or table), then keep the listener. */
static int start_fresh(struct mr_elastic *e, const struct mr_args *a, const char *init_method,
                       const struct mr_peers *peers, struct tr_posix_elastic_config *ec)
{
    struct tr_posix px;
    char err[512];
    int rc;
    if (peers) {
        struct tr_posix_table_config tc;
        tr_posix_table_config_default(&tc);
        tc.table = peers->table;
        tc.rank = (int)e->rank;
        tc.world = peers->world;
        tc.job_token = ec->job_token;
        tc.timeout_ms = ec->timeout_ms;
        rc = tr_posix_connect_table(&px, &tc, err, sizeof err);
    } else {
        struct tr_posix_config pc;
        posix_config(e, init_method, &pc);
        pc.iface = a->iface;
        pc.job_token = ec->job_token;
        pc.connect_timeout_ms = pc.join_timeout_ms = ec->timeout_ms;
        pc.local_ranks = ec->local_ranks;
        pc.table_out = e->table;
        rc = tr_posix_connect(&px, &pc, err, sizeof err);
        e->rank = (uint32_t)px.rank;
        e->world = (uint32_t)px.world;
        ec->rank = e->rank;
        ec->world = e->world;
    }
    if (rc == 0) {
        ec->table = e->table;
        rc = tr_posix_elastic_start(&e->el, ec, &px, err, sizeof err);
    }
    if (rc < 0)
        fprintf(stderr, "mnist_ring: rank %u: cannot join the job: %s\n", e->rank, err);
    return rc;
}

int mr_elastic_join(struct mr_elastic *e, const struct mr_args *a, const char *init_method,
                    const struct mr_peers *peers, int rank, int world, const char *job_token,
                    int *ring_rank, int *ring_world)
{
    struct tr_posix_elastic_config ec;
    char err[512];
    double t0;
    int rc, found;

    memset(e, 0, sizeof *e);
    debug_die_at(e);
    e->rank = rank < 0 ? 0 : (uint32_t)rank;
    e->world = peers ? (uint32_t)peers->world : world < 1 ? 1 : (uint32_t)world;
    e->min_ranks = a->min_ranks;
    if (init_method && !strcmp(init_method, "env://") &&
        tr_posix_env_rank(&rank, &world, err, sizeof err) == 0) {
        e->rank = (uint32_t)rank;
        e->world = (uint32_t)world;
    }
    config(e, a, job_token, &ec);
    if (peers) {
        memcpy(e->table, peers->table, sizeof e->table);
        ec.table = e->table;
    } else {
        struct tr_posix_config pc;
        posix_config(e, init_method, &pc);
        if ((rc = tr_posix_elastic_master(&pc, &ec, err, sizeof err)) < 0) {
            fprintf(stderr, "mnist_ring: --elastic: %s: %s\n", init_method, err);
            return rc;
        }
    }
    /* a job that answers but does not take this process in yet (its ring
     * still names this rank: the round that drops the old process has not
     * run) is asked again until --timeout */
    t0 = mr_now();
    do
        found = tr_posix_elastic_find(&e->el, &ec, MR_FIND_MS, err, sizeof err);
    while (found == TR_ERR_TIMEOUT && mr_now() - t0 < a->timeout_s);
    if (found < 0) {
        fprintf(stderr, "mnist_ring: rank %u: cannot rejoin the job: %s\n", e->rank, err);
        return found;
    }
    if (found == 0 && (rc = start_fresh(e, a, init_method, peers, &ec)) < 0)
        return rc;
    if (found) {
        e->joiner = 1;
        if ((rc = tr_posix_elastic_reform(&e->el, 0, &e->round, err, sizeof err)) < 0) {
            fprintf(stderr, "mnist_ring: rank %u: rejoining the job failed: %s\n", e->rank, err);
            return rc;
        }
        fprintf(stderr, "mnist_ring: rank %u: rejoined the running job as ring rank %d of %d\n",
                e->rank, e->round.rank, e->round.world);
    }
    *ring_rank = e->el.index;
    *ring_world = (int)e->el.view.n;
    return 0;
}

static void list_ranks(char *buf, size_t n, const uint32_t *r, uint32_t count)
{
    size_t used = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < count && used + 12 < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%u", i ? ", " : "", r[i]);
}

/* Rank 0 of the new ring: one line per membership change. */
static void say_change(const struct mr_elastic *e, const struct tr_train *t)
{
    const struct tr_posix_elastic_round *o = &e->round;
    char left[256], back[256];
    if (o->rank != 0)
        return;
    list_ranks(left, sizeof left, o->left, o->n_left);
    list_ranks(back, sizeof back, o->joined, o->n_joined);
    mr_progress_end();
    fprintf(stderr, "elastic: view %u at step %llu (position %llu): %s%s%s%s%s; %d rank%s from "
            "rank %u's state; membership round %.3f s\n", o->epoch,
            (unsigned long long)t->global_step, (unsigned long long)o->step,
            o->n_left ? "rank " : "", left, o->n_left ? " left" : "",
            o->n_joined ? (o->n_left ? ", rank " : "rank ") : "",
            o->n_joined ? strcat(back, " came back") : (o->n_left ? "" : "no change"), o->world,
            o->world == 1 ? "" : "s", e->el.view.m[o->source].rank, o->ms / 1000.0);
}

/* ABORT: why, and the checkpoint of the latest state by the one holding it. */
static int abort_round(struct mr_elastic *e, const struct mr_args *a, const char *err,
                       int (*save_ckpt)(void *ctx), void *ctx)
{
    const struct tr_el_abort *w = &e->round.why;
    fprintf(stderr, "mnist_ring: rank %u: %s\n", e->rank, err);
    if (e->round.verdict == TR_EL_BELOW_MIN && a->checkpoint && w->source == e->rank) {
        if (save_ckpt(ctx) < 0)
            return TR_ERR_IO;
        fprintf(stderr, "mnist_ring: rank %u: checkpoint of the last completed step written to "
                "%s (resume with --resume)\n", e->rank, a->checkpoint);
    }
    return TR_ERR_CLOSED;
}

int mr_elastic_reform(struct mr_elastic *e, const struct mr_args *a, struct tr_train *t,
                      struct tr_transport *tp, int (*save_ckpt)(void *ctx), void *ctx)
{
    char err[512];
    int rc;
    if (a->debug_param_hash) {
        const struct tr_train_fault *f = tr_train_last_fault(t);
        fprintf(stderr, "elastic-debug rank %u: %s: %s failed: %s (peer %d)\n", e->rank,
                e->change_asked ? "change" : "lost", tr_train_what_name(f->what),
                tr_strerror(f->code), f->rank);
    }
    if (!e->t_lost) {
        e->t_lost = mr_now();
        e->lost_ms = tr_posix_elastic_clock_ms();
        e->detect = -1;
    }
    e->change_asked = 0;
    rc = tr_posix_elastic_reform(&e->el, tr_train_position(t), &e->round, err, sizeof err);
    for (uint32_t i = 0; rc == 0 && i < e->round.n_left; i++) {
        uint32_t at, r = e->round.left[i];
        double d;
        if (!tr_posix_elastic_last_beat(&e->el, r, &at))
            continue;
        d = (int32_t)(e->lost_ms - at) > 0 ? (e->lost_ms - at) / 1000.0 : 0.0;
        if (d > e->detect) {
            e->detect = d;
            e->detect_rank = r;
        }
    }
    if (rc < 0 && e->round.verdict != TR_EL_GO && rc == TR_ERR_CLOSED) {
        mr_elastic_left = e->round.verdict == TR_EL_NO_MAJORITY;
        return abort_round(e, a, err, save_ckpt, ctx);
    }
    if (rc == TR_ERR_MISMATCH)    /* refused: the ring went on without this process */
        mr_elastic_left = 1;
    if (rc < 0) {
        fprintf(stderr, "mnist_ring: rank %u: membership round failed: %s\n", e->rank, err);
        return rc;
    }
    tr_posix_transport(&e->el.px, tp);
    rc = tr_train_reform(t, e->round.rank, e->round.world, e->round.world > 1 ? tp : NULL,
                         e->round.source);
    if (rc < 0) {
        fprintf(stderr, "mnist_ring: rank %u: trainer reform: %s\n", e->rank, tr_strerror(rc));
        return rc;
    }
    say_change(e, t);
    return 0;
}

void mr_elastic_event(struct mr_elastic *e, struct tr_train *t, int ev)
{
    if (ev == TR_TRAIN_STEP && e->t_lost) {
        char det[128] = "";
        if (e->detect >= 0)
            snprintf(det, sizeof det, "detection %.3f s (rank %u's last heartbeat to the lost "
                     "ring) + ", e->detect, e->detect_rank);
        if (t->cfg.rank == 0)
            fprintf(stderr, "elastic: %srecovery %.3f s (from the lost link or the change to "
                    "this completed step %llu)\n", det, mr_now() - e->t_lost,
                    (unsigned long long)t->global_step);
        e->t_lost = 0;
    }
    if (ev > 0 && e->die_rank == (long)e->rank && tr_train_position(t) == e->die_pos) {
        fprintf(stderr, "mnist_ring: rank %u: MR_DEBUG_DIE_AT: killed at position %llu\n",
                e->rank, (unsigned long long)e->die_pos);
        raise(SIGKILL);
    }
}

void mr_elastic_service(struct mr_elastic *e, struct tr_train *t)
{
    if (tr_posix_elastic_service(&e->el) > 0 && !e->change_asked) {
        tr_train_request_change(t);
        e->change_asked = 1;
    }
}
