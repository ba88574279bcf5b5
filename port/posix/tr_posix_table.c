/* tinyring POSIX port: ring links from a static address table (no
 * rendezvous master), for rings that mix host ranks with boards. The links
 * themselves are tr_posix_link.c's, as after a rendezvous. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_error.h"
#include "tr_link.h"
#include "tr_posix_int.h"


void tr_posix_table_config_default(struct tr_posix_table_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->rank = -1;
    cfg->world = -1;
    cfg->spin_us = TR_POSIX_SPIN_AUTO;
}

int tr_posix_endpoint_parse(struct tr_posix_endpoint *e, const char *s,
                            char *err, size_t errlen)
{
    char host[INET_ADDRSTRLEN], *end;
    const char *c = s ? strrchr(s, ':') : NULL;
    struct in_addr a;
    long port;
    if (!c || c == s || (size_t)(c - s) >= sizeof host)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "'%s' is not IPV4:PORT", s ? s : "(null)");
    memcpy(host, s, (size_t)(c - s));
    host[c - s] = '\0';
    errno = 0;
    port = strtol(c + 1, &end, 10);
    if (inet_pton(AF_INET, host, &a) != 1 || !c[1] || *end || errno || port < 1 ||
        port > 65535)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "'%s' is not IPV4:PORT (dotted IPv4, port 1..65535)", s);
    e->addr = a.s_addr;
    e->port = (uint16_t)port;
    return 0;
}

/* Every entry usable, no two ranks on one address:port. */
static int table_check(const struct tr_posix_table_config *cfg, char *err, size_t errlen)
{
    int i, k;
    char ab[32];
    if (cfg->world < 1 || cfg->world > TR_POSIX_MAX_WORLD)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL, "world %d is not in 1..%d",
                             cfg->world, TR_POSIX_MAX_WORLD);
    if (cfg->rank < 0 || cfg->rank >= cfg->world)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL, "rank %d is not a rank of world %d",
                             cfg->rank, cfg->world);
    if (!cfg->table)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL, "rank %d: no address table",
                             cfg->rank);
    for (i = 0; i < cfg->world; i++) {
        const struct tr_posix_endpoint *e = &cfg->table[i];
        if (e->port == 0 || e->addr == htonl(INADDR_ANY))
            return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                 "rank %d: table entry of rank %d (%s:%u) needs an address "
                                 "and a port", cfg->rank, i,
                                 tr_posix_ntoa(e->addr, ab, sizeof ab), e->port);
        for (k = 0; k < i; k++)
            if (cfg->table[k].addr == e->addr && cfg->table[k].port == e->port)
                return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                     "rank %d: ranks %d and %d share the table entry %s:%u",
                                     cfg->rank, k, i, tr_posix_ntoa(e->addr, ab, sizeof ab),
                                     e->port);
    }
    return 0;
}

int tr_posix_connect_table(struct tr_posix *px, const struct tr_posix_table_config *cfg,
                           char *err, size_t errlen)
{
    struct tr_posix_config spin;        /* only for tr_posix_spin_for */
    struct tr_posix_plan pl;
    int listen_fd = -1, rc;

    memset(px, 0, sizeof *px);
    px->fd[0] = px->fd[1] = -1;
    px->rank = cfg->rank;
    px->world = cfg->world;
    px->job_token = cfg->job_token;
    if (err && errlen)
        err[0] = 0;
    rc = table_check(cfg, err, errlen);
    if (rc < 0)
        return rc;
    tr_posix_config_default(&spin);
    spin.spin_us = cfg->spin_us;
    spin.local_ranks = cfg->local_ranks;
    px->spin_us = tr_posix_spin_for(&spin);
    px->addr = cfg->table[cfg->rank].addr;
    px->port = cfg->table[cfg->rank].port;
    if (cfg->world == 1)
        return 0;                      /* nobody to meet: no sockets at all */

    memset(&pl, 0, sizeof pl);
    pl.rank = cfg->rank;
    pl.world = cfg->world;
    pl.local_addr = cfg->table[cfg->rank].addr;
    pl.any_addr = 0;                   /* exactly the table's address */
    pl.listen_port = cfg->table[cfg->rank].port;
    pl.token = cfg->job_token;
    pl.join_ms = cfg->timeout_ms ? cfg->timeout_ms : TR_LINK_JOIN_MS;
    pl.connect_ms = pl.join_ms;
    pl.handshake_ms = cfg->handshake_ms ? cfg->handshake_ms : TR_LINK_HANDSHAKE_MS;
    pl.sndbuf = cfg->sndbuf;
    pl.rcvbuf = cfg->rcvbuf;

    rc = tr_posix_listen_open(&pl, &listen_fd, &pl.listen_port, err, errlen);
    if (rc == 0)
        rc = tr_posix_links_open(px, &pl, listen_fd, cfg->table, err, errlen);
    tr_posix_close_fd(&listen_fd);
    return rc;
}
