/* tinyring test: one POSIX rank running the same job as an lwIP rank.
 *
 *   posix_rank --master 198.18.0.1:29500 --addr 198.18.0.20 --port 7000
 *              --rank 0 --world 4 --token 0x1234 --mode train --suite NAME ...
 *
 * Rendezvous is the POSIX port's tcp:// (rank 0 is the master); lwIP ranks of
 * a mixed ring have no rendezvous client (boards use a static table), so the
 * test registers them with lwip_register, and the link hello is shared.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tinyring.h"
#include "tr_posix.h"
#include "ring_job.h"

int main(int argc, char **argv)
{
    struct ring_job j = { 0, 0, 0, "coll", "posix", "posix", 10000, 0, 3, 1 << 20 };
    static struct tr_posix px;
    struct tr_posix_config pc;
    struct tr_transport tp;
    char method[128], err[256];
    const char *master = NULL;
    int i, rc, code;

    tr_posix_config_default(&pc);
    for (i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (ring_job_arg(&j, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--master")) { master = v; i++; }
        else if (!strcmp(argv[i], "--addr")) { pc.addr = v; i++; }
        else if (!strcmp(argv[i], "--port")) { pc.listen_port = (uint16_t)atoi(v); i++; }
        else { fprintf(stderr, "posix_rank: unknown argument %s\n", argv[i]); return 2; }
    }
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
