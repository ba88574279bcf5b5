/* tinyring test: one POSIX rank running the same job as an lwIP rank.
 *
 *   posix_rank --master 198.18.0.1:29500 --addr 198.18.0.20 --port 7000
 *              --rank 0 --world 4 --token 0x1234 --mode train --suite NAME ...
 *
 * Rendezvous is the POSIX port's tcp:// (rank 0 is the master); lwIP ranks of
 * a mixed ring have no rendezvous client (boards use a static table), so the
 * test registers them with lwip_register, and the link hello is shared.
 *
 *   posix_rank --table A:P,A:P,... --rank R --world W --mode elastic ...
 *
 * An elastic rank: the static table (tr_posix_connect_table), then the
 * POSIX port's membership (tr_posix_elastic_*) after a lost ring. With
 * --rejoin it is a process started again: it finds the running job
 * (tr_posix_elastic_find) and joins it at the next change.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tinyring.h"
#include "tr_posix.h"
#include "ring_job.h"

#define MAX_WORLD 16

static struct tr_posix_elastic el;

static int el_reform(void *ctx, uint64_t position, int *rank, int *world, int *source,
                     uint32_t *epoch, uint64_t *step)
{
    static struct tr_posix_elastic_round round;
    char err[512];
    int rc = tr_posix_elastic_reform(&el, position, &round, err, sizeof err);
    (void)ctx;
    if (rc < 0) {
        fprintf(stderr, "posix rank %u: membership round: %s\n", el.cfg.rank, err);
        return rc;
    }
    printf("posix rank %u: round %u ms, coordinator rank %u, %u left\n", el.cfg.rank,
           (unsigned)round.ms, (unsigned)round.coordinator, (unsigned)round.n_left);
    *rank = round.rank;
    *world = round.world;
    *source = round.source;
    *epoch = round.epoch;
    *step = round.step;
    return 0;
}

static int el_service(void *ctx)
{
    (void)ctx;
    return tr_posix_elastic_service(&el);
}

/* A process started again: find the job, wait for its round. Returns 0 or
 * an error (a message printed). */
static int rejoin(const struct tr_posix_elastic_config *ec, struct ring_elastic *ops)
{
    static struct tr_posix_elastic_round round;
    char err[512];
    int rc = tr_posix_elastic_find(&el, ec, 5000, err, sizeof err);
    if (rc == 1)
        rc = tr_posix_elastic_reform(&el, 0, &round, err, sizeof err);
    else if (rc == 0) {
        snprintf(err, sizeof err, "no running job answered");
        rc = TR_ERR_CLOSED;
    }
    if (rc != 0) {
        fprintf(stderr, "posix rank %u: rejoin failed: %s\n", ec->rank, err);
        return rc < 0 ? rc : TR_ERR_CLOSED;
    }
    ring_elastic_joined(ops, "posix", ec->rank, round.rank, round.world, round.source, round.epoch,
                        round.coordinator);
    return 0;
}

/* An elastic rank over a static table. Returns the exit code. */
static int run_elastic_table(struct ring_job *j, const char *tabs, int again)
{
    static struct tr_posix_endpoint table[MAX_WORLD];
    static struct ring_elastic ops = { el_reform, el_service, NULL, 0, 0, 0, 0 };
    struct tr_posix_table_config tc;
    struct tr_posix_elastic_config ec;
    struct tr_posix px;
    struct tr_transport tp;
    char err[512], item[64];
    int n = 0, rc, code;
    while (*tabs && n < MAX_WORLD) {
        size_t k = strcspn(tabs, ",");
        if (k >= sizeof item)
            return 2;
        memcpy(item, tabs, k);
        item[k] = 0;
        if (tr_posix_endpoint_parse(&table[n++], item, err, sizeof err) < 0) {
            fprintf(stderr, "posix_rank: --table: %s\n", err);
            return 2;
        }
        tabs += k + (tabs[k] == ',');
    }
    if (n != j->world)
        return 2;
    memset(&ec, 0, sizeof ec);
    ec.job_token = j->token;
    ec.rank = (uint32_t)j->rank;
    ec.world = (uint32_t)j->world;
    ec.table = table;
    ec.timeout_ms = j->timeout_ms;
    ec.spin_us = 0;
    if (again) {
        if (rejoin(&ec, &ops) < 0)
            return 1;
    } else {
        tr_posix_table_config_default(&tc);
        tc.table = table;
        tc.rank = j->rank;
        tc.world = j->world;
        tc.job_token = j->token;
        tc.timeout_ms = 20000;
        rc = tr_posix_connect_table(&px, &tc, err, sizeof err);
        if (rc == 0)
            rc = tr_posix_elastic_start(&el, &ec, &px, err, sizeof err);
        if (rc < 0) {
            fprintf(stderr, "posix rank %d: connect failed: %s\n", j->rank, err);
            return 1;
        }
    }
    tr_posix_transport(&el.px, &tp);
    j->el = &ops;
    code = ring_job_run(j, &tp);
    tr_posix_elastic_close(&el);
    return code;
}

int main(int argc, char **argv)
{
    struct ring_job j = { 0, 0, 0, "coll", "posix", "posix", 10000, 0, 3, 1 << 20, 0, -1, NULL, 0 };
    static struct tr_posix px;
    struct tr_posix_config pc;
    struct tr_transport tp;
    char method[128], err[256];
    const char *master = NULL, *tabs = NULL;
    int again = 0;
    int i, rc, code;

    tr_posix_config_default(&pc);
    for (i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (ring_job_arg(&j, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--master")) { master = v; i++; }
        else if (!strcmp(argv[i], "--addr")) { pc.addr = v; i++; }
        else if (!strcmp(argv[i], "--port")) { pc.listen_port = (uint16_t)atoi(v); i++; }
        else if (!strcmp(argv[i], "--table")) { tabs = v; i++; }
        else if (!strcmp(argv[i], "--rejoin")) again = 1;
        else { fprintf(stderr, "posix_rank: unknown argument %s\n", argv[i]); return 2; }
    }
    if (tabs && !strcmp(j.mode, "elastic"))
        return run_elastic_table(&j, tabs, again);
    if (!master) {
        fprintf(stderr, "posix_rank: need --master HOST:PORT\n");
        return 2;
    }
    snprintf(method, sizeof method, "tcp://%s", master);
    pc.init_method = method;
    pc.rank = j.rank;
    pc.world = j.world;
    pc.job_token = j.token;
    pc.connect_timeout_ms = 20000;
    pc.join_timeout_ms = 30000;
    pc.sndbuf = -1;                 /* kernel autotuning, as a host would */
    pc.rcvbuf = -1;
    rc = tr_posix_connect(&px, &pc, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "posix rank %d: connect failed: %s\n", j.rank, err);
        return 1;
    }
    tr_posix_transport(&px, &tp);
    code = ring_job_run(&j, &tp);
    tr_posix_close(&px);
    return code;
}
