/* tinyring POSIX port: configuration defaults, the job token, and the
 * connect sequence (plan -> listen -> rendezvous -> ring links). */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "tr_error.h"
#include "tr_posix_int.h"

void tr_posix_config_default(struct tr_posix_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->rank = -1;
    cfg->world = -1;
}

uint64_t tr_posix_token(const char *s)
{
    uint64_t h = 1469598103934665603ull;          /* FNV-1a 64 */
    if (s)
        for (; *s; s++) {
            h ^= (uint8_t)*s;
            h *= 1099511628211ull;
        }
    return h ? h : 1;
}

int tr_posix_connect(struct tr_posix *px, const struct tr_posix_config *cfg,
                     char *err, size_t errlen)
{
    static struct tr_posix_peer table[TR_POSIX_MAX_WORLD];
    struct tr_posix_plan pl;
    int master_fd = -1, listen_fd = -1, rc;

    memset(px, 0, sizeof *px);
    px->fd[0] = px->fd[1] = -1;
    px->rank = cfg->rank;
    px->world = cfg->world;
    if (err && errlen)
        err[0] = 0;
    rc = tr_posix_plan_make(&pl, cfg, err, errlen);
    if (rc < 0)
        return rc;
    px->rank = pl.rank;
    px->world = pl.world;
    px->job_token = pl.token;
    if (pl.world == 1)
        return 0;                      /* nobody to meet: no sockets at all */

    /* Rank 0 takes the master port first: if it is in use, say so before
     * anything else. Other ranks dial the master first so that the default
     * listening address is the one that reaches it. */
    if (pl.rank == 0)
        rc = tr_posix_master_open(&pl, &master_fd, err, errlen);
    else
        rc = tr_posix_master_dial(&pl, &master_fd, err, errlen);
    if (rc == 0)
        rc = tr_posix_pick_local(&pl, cfg, pl.rank == 0 ? -1 : master_fd, err, errlen);
    if (rc == 0)
        rc = tr_posix_listen_open(&pl, &listen_fd, &pl.listen_port, err, errlen);
    if (rc == 0) {
        px->addr = pl.local_addr;
        px->port = pl.listen_port;
        if (pl.rank == 0) {
            table[0].addr = pl.local_addr;
            table[0].port = pl.listen_port;
            rc = tr_posix_master_serve(&pl, master_fd, table, err, errlen);
        } else {
            rc = tr_posix_client_join(&pl, master_fd, table, err, errlen);
        }
    }
    tr_posix_close_fd(&master_fd);
    if (rc == 0)
        rc = tr_posix_links_open(px, &pl, listen_fd, table, err, errlen);
    tr_posix_close_fd(&listen_fd);
    return rc;
}

void tr_posix_close(struct tr_posix *px)
{
    tr_posix_close_fd(&px->fd[0]);
    tr_posix_close_fd(&px->fd[1]);
}
