/* tinyring POSIX port: configuration defaults, the job token, and the
 * connect sequence (plan -> listen -> rendezvous -> ring links). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tr_error.h"
#include "tr_posix_int.h"
#include "tr_util.h"

void tr_posix_config_default(struct tr_posix_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->rank = -1;
    cfg->world = -1;
    cfg->spin_us = TR_POSIX_SPIN_AUTO;
}

uint32_t tr_posix_spin_for(const struct tr_posix_config *cfg)
{
    static const char *const vars[] = {
        "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"
    };
    long local = cfg->local_ranks, cpus;
    size_t i;
    if (cfg->spin_us != TR_POSIX_SPIN_AUTO)
        return cfg->spin_us;
    for (i = 0; local <= 0 && i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            local = strtol(v, NULL, 10);   /* Slurm's "2(x3)" reads as 2 */
    }
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return (local > 0 && cpus > 0 && local <= cpus) ? TR_POSIX_SPIN_US : 0;
}

uint64_t tr_posix_token(const char *s)
{
    uint64_t h = tr_fnv1a64(TR_FNV64_INIT, s ? s : "", s ? strlen(s) : 0);
    return h ? h : 1;
}

int tr_posix_connect(struct tr_posix *px, const struct tr_posix_config *cfg,
                     char *err, size_t errlen)
{
    struct tr_posix_endpoint table[TR_POSIX_MAX_WORLD];   /* on the stack: reentrant */
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
    px->spin_us = tr_posix_spin_for(cfg);
    if (pl.world == 1) {
        if (cfg->table_out)
            memset(cfg->table_out, 0, sizeof cfg->table_out[0]);   /* listens nowhere */
        return 0;                      /* nobody to meet: no sockets at all */
    }

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
    if (rc == 0 && cfg->table_out)
        memcpy(cfg->table_out, table, (size_t)pl.world * sizeof table[0]);
    return rc;
}

/* Leave without losing bytes: say we are done writing (FIN after our last
 * bytes), then read and discard until each neighbour says the same, at most
 * 2 s. Closing a socket with unread bytes in it sends a reset, which could
 * destroy data a neighbour has not read yet. */
void tr_posix_close(struct tr_posix *px)
{
    uint32_t deadline = tr_posix_clock_ms() + 2000u;
    int open[2], i;
    if (px->fd[0] >= 0 && px->fd[0] == px->fd[1])
        px->fd[1] = -1;                       /* one socket for both (never ours) */
    for (i = 0; i < 2; i++) {
        open[i] = px->fd[i] >= 0;
        if (open[i])
            shutdown(px->fd[i], SHUT_WR);
    }
    while ((open[0] || open[1]) && tr_posix_left_ms(deadline) > 0) {
        struct pollfd pf[2];
        int np = 0, which[2];
        for (i = 0; i < 2; i++)
            if (open[i]) {
                pf[np].fd = px->fd[i];
                pf[np].events = POLLIN;
                pf[np].revents = 0;
                which[np++] = i;
            }
        if (poll(pf, (nfds_t)np, tr_posix_left_ms(deadline)) <= 0)
            continue;
        for (i = 0; i < np; i++) {
            char sink[4096];
            ssize_t n;
            if (!pf[i].revents)
                continue;
            n = recv(pf[i].fd, sink, sizeof sink, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                open[which[i]] = 0;
        }
    }
    tr_posix_close_fd(&px->fd[0]);
    tr_posix_close_fd(&px->fd[1]);
}
