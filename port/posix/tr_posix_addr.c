/* tinyring POSIX port: init methods (tcp://, env://), the environment, and
 * the choice of the local address to listen on (interface or address). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tr_error.h"
#include "tr_link.h"
#include "tr_posix_int.h"

/* Decimal integer in [lo, hi], nothing else in the string. */
static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int resolve4(const char *host, uint32_t *addr)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return -1;
    *addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr;
    freeaddrinfo(res);
    return 0;
}

/* The first variable of the list that is set; its name in *which. */
static const char *env_first(const char *const *names, const char **which)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v) {
            *which = *names;
            return v;
        }
    }
    return NULL;
}

int tr_posix_env_rank(int *rank, int *world, char *err, size_t errlen)
{
    static const char *const rank_vars[] = { "RANK", "OMPI_COMM_WORLD_RANK",
                                             "SLURM_PROCID", "PMI_RANK", NULL };
    static const char *const size_vars[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE",
                                             "SLURM_NTASKS", "PMI_SIZE", NULL };
    const char *rn = NULL, *wn = NULL;
    const char *rv = env_first(rank_vars, &rn);
    const char *wv = env_first(size_vars, &wn);
    long r, w;
    if (!rv)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "env://: no rank in the environment (RANK, "
                             "OMPI_COMM_WORLD_RANK, SLURM_PROCID or PMI_RANK)");
    if (!wv)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "env://: no world size in the environment (WORLD_SIZE, "
                             "OMPI_COMM_WORLD_SIZE, SLURM_NTASKS or PMI_SIZE)");
    if (parse_int(wv, 1, TR_POSIX_MAX_WORLD, &w) < 0)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "env://: %s=\"%s\" is not a world size in 1..%d", wn, wv,
                             TR_POSIX_MAX_WORLD);
    if (parse_int(rv, 0, w - 1, &r) < 0)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "env://: %s=\"%s\" is not a rank in 0..%ld (%s=%ld)", rn, rv,
                             w - 1, wn, w);
    *rank = (int)r;
    *world = (int)w;
    return 0;
}

static int parse_master(uint32_t *addr, uint16_t *port, const char *host, const char *ps,
                        const char *what, char *err, size_t errlen)
{
    long p;
    if (parse_int(ps, 1, 65535, &p) < 0)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL, "%s: bad master port \"%s\"",
                             what, ps);
    if (resolve4(host, addr) < 0)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "%s: cannot resolve master host \"%s\" to an IPv4 address",
                             what, host);
    *port = (uint16_t)p;
    return 0;
}

/* tcp://HOST:PORT[,HOST:PORT...]: the first is the rendezvous, the others
 * pl->more (an elastic job's further rendezvous addresses). */
static int parse_tcp(struct tr_posix_plan *pl, const char *m, char *err, size_t errlen)
{
    const char *hp = m + 6;
    int k = 0;
    for (;;) {
        char item[300], *colon;
        const char *end = strchr(hp, ',');
        size_t len = end ? (size_t)(end - hp) : strlen(hp);
        uint32_t *addr = k ? &pl->more[k - 1].addr : &pl->master_addr;
        uint16_t *port = k ? &pl->more[k - 1].port : &pl->master_port;
        int rc;
        if (k == TR_POSIX_MAX_MASTERS)
            return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                 "init method \"%s\": more than %d addresses", m,
                                 TR_POSIX_MAX_MASTERS);
        if (len >= sizeof item)
            return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                 "init method \"%s\": an address is too long", m);
        memcpy(item, hp, len);
        item[len] = 0;
        colon = strrchr(item, ':');
        if (!colon || colon == item || !colon[1])
            return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                 "init method \"%s\": expected tcp://HOST:PORT[,HOST:PORT...]",
                                 m);
        *colon = 0;
        rc = parse_master(addr, port, item, colon + 1, "tcp://", err, errlen);
        if (rc < 0)
            return rc;
        pl->n_more = k++;
        if (!end)
            return 0;
        hp = end + 1;
    }
}

int tr_posix_plan_make(struct tr_posix_plan *pl, const struct tr_posix_config *cfg,
                       char *err, size_t errlen)
{
    const char *m = cfg->init_method;
    int rc;
    memset(pl, 0, sizeof *pl);
    if (!m)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL, "no init method (tcp://HOST:PORT or env://)");
    if (strncmp(m, "tcp://", 6) == 0) {
        if (cfg->world < 1 || cfg->world > TR_POSIX_MAX_WORLD)
            return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                 "world size %d out of range 1..%d", cfg->world,
                                 TR_POSIX_MAX_WORLD);
        if (cfg->rank < 0 || cfg->rank >= cfg->world)
            return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                 "rank %d out of range 0..%d", cfg->rank, cfg->world - 1);
        pl->rank = cfg->rank;
        pl->world = cfg->world;
        rc = parse_tcp(pl, m, err, errlen);
        if (rc < 0)
            return rc;
    } else if (strcmp(m, "env://") == 0) {
        const char *ma = getenv("MASTER_ADDR"), *mp = getenv("MASTER_PORT");
        rc = tr_posix_env_rank(&pl->rank, &pl->world, err, errlen);
        if (rc < 0)
            return rc;
        /* No silent default: a guessed port could meet another job's master. */
        if (!ma || !*ma || !mp || !*mp)
            return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                 "env://: MASTER_ADDR and MASTER_PORT must be set "
                                 "(torchrun sets them; with mpirun add -x MASTER_ADDR=... "
                                 "-x MASTER_PORT=...)");
        rc = parse_master(&pl->master_addr, &pl->master_port, ma, mp, "env://", err, errlen);
        if (rc < 0)
            return rc;
    } else {
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "unknown init method \"%s\" (tcp://HOST:PORT or env://)", m);
    }
    pl->listen_port = cfg->listen_port;
    pl->token = cfg->job_token;
    pl->connect_ms = cfg->connect_timeout_ms ? cfg->connect_timeout_ms : TR_LINK_CONNECT_MS;
    pl->join_ms = cfg->join_timeout_ms ? cfg->join_timeout_ms : TR_LINK_JOIN_MS;
    pl->handshake_ms = cfg->handshake_ms ? cfg->handshake_ms : TR_LINK_HANDSHAKE_MS;
    pl->sndbuf = cfg->sndbuf;
    pl->rcvbuf = cfg->rcvbuf;
    return 0;
}

static int iface_addr(const char *name, uint32_t *addr)
{
    struct ifaddrs *ifs, *i;
    int found = -1;
    if (getifaddrs(&ifs) < 0)
        return -1;
    for (i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || strcmp(i->ifa_name, name))
            continue;
        *addr = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
        found = 0;
        break;
    }
    freeifaddrs(ifs);
    return found;
}

/* The local address the kernel would use towards dst: a connected UDP
 * socket sends nothing, it only chooses a route. */
static int route_addr(uint32_t dst, uint16_t port, uint32_t *addr)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_DGRAM, 0), rc = -1;
    if (fd < 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = dst;
    sa.sin_port = htons(port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0) {
        *addr = sa.sin_addr.s_addr;
        rc = 0;
    }
    close(fd);
    return rc;
}

int tr_posix_pick_local(struct tr_posix_plan *pl, const struct tr_posix_config *cfg,
                        int master_fd, char *err, size_t errlen)
{
    if (cfg->iface && *cfg->iface) {
        if (iface_addr(cfg->iface, &pl->local_addr) < 0)
            return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                 "interface \"%s\" not found or has no IPv4 address",
                                 cfg->iface);
        return 0;
    }
    if (cfg->addr && *cfg->addr) {
        struct in_addr a;
        if (inet_pton(AF_INET, cfg->addr, &a) != 1)
            return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                                 "listen address \"%s\" is not an IPv4 address", cfg->addr);
        pl->local_addr = a.s_addr;
        return 0;
    }
    if (master_fd >= 0) {
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        if (getsockname(master_fd, (struct sockaddr *)&sa, &len) == 0) {
            pl->local_addr = sa.sin_addr.s_addr;
            return 0;
        }
    }
    /* Rank 0: its own address as seen from the others is the one they reach
     * the master at, which may differ per rank (and a host name may resolve
     * to 127.0.1.1 locally): listen everywhere, answer per connection. */
    pl->any_addr = pl->rank == 0;
    if (route_addr(pl->master_addr, pl->master_port, &pl->local_addr) < 0)
        return tr_posix_fail(err, errlen, TR_ERR_UNREACH,
                             "no local address routes to the master");
    return 0;
}

int tr_posix_config_check(const struct tr_posix_config *cfg, int *rank, int *world,
                          char *err, size_t errlen)
{
    struct tr_posix_plan pl;
    int rc = tr_posix_plan_make(&pl, cfg, err, errlen);
    if (rc < 0)
        return rc;
    *rank = pl.rank;
    *world = pl.world;
    return 0;
}
