/* tinyring test: register lwIP ranks with a POSIX rendezvous master.
 *
 *   lwip_register --master 198.18.0.20:29500 --token T --world N
 *                 --rank 1 --at 198.18.0.11:7000 [--rank 3 --at ...]
 *
 * A board has a static table and no rendezvous client; in a mixed ring the
 * POSIX ranks still learn where everyone listens from their master. This
 * sends the registrations for the lwIP ranks (the POSIX port's own encoder,
 * tr_posix_put_reg), all at once, waits for the master's answers (its
 * decoder, tr_posix_get_ans_head) and checks their status. Host sockets;
 * exits 0 on success.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tr_posix_int.h"

#define MAXR 16

static int parse_hostport(const char *s, struct sockaddr_in *sa)
{
    char host[64];
    const char *c = strchr(s, ':');
    if (!c || (size_t)(c - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(c - s));
    host[c - s] = 0;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)atoi(c + 1));
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static int read_all(int fd, uint8_t *b, size_t n, int ms)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd p = { fd, POLLIN, 0 };
        ssize_t k;
        if (poll(&p, 1, ms) <= 0)
            return -1;
        k = recv(fd, b + got, n - got, 0);
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct sockaddr_in master, at[MAXR];
    int rank[MAXR], fd[MAXR], n = 0, world = 0, i, bad = 0, have_master = 0;
    uint64_t token = 0;
    for (i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--master")) have_master = parse_hostport(argv[i + 1], &master) == 0;
        else if (!strcmp(argv[i], "--token")) token = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--world")) world = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rank") && n < MAXR) rank[n] = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--at") && n < MAXR) {
            if (parse_hostport(argv[i + 1], &at[n]) < 0) return 2;
            n++;
        } else return 2;
    }
    if (!have_master || n == 0 || world < 2)
        return 2;
    for (i = 0; i < n; i++) {
        uint8_t reg[TR_POSIX_REG_BYTES];
        struct tr_posix_intro r;
        int tries;
        fd[i] = -1;
        for (tries = 0; tries < 200; tries++) {        /* master may not be up yet */
            struct timespec ts = { 0, 100 * 1000000L };
            int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (connect(s, (struct sockaddr *)&master, sizeof master) == 0) {
                fd[i] = s;
                break;
            }
            close(s);
            nanosleep(&ts, NULL);
        }
        if (fd[i] < 0) {
            fprintf(stderr, "lwip_register: master unreachable: %s\n", strerror(errno));
            return 1;
        }
        r.version = TR_POSIX_VERSION;
        r.token = token;
        r.rank = (uint32_t)rank[i];
        r.world = (uint32_t)world;
        r.addr = at[i].sin_addr.s_addr;
        r.port = ntohs(at[i].sin_port);
        tr_posix_put_reg(reg, &r);
        if (send(fd[i], reg, sizeof reg, MSG_NOSIGNAL) != (ssize_t)sizeof reg)
            return 1;
    }
    for (i = 0; i < n; i++) {
        uint8_t ans[TR_POSIX_ANS_BYTES];
        int status;
        uint32_t aworld, why, k;
        if (read_all(fd[i], ans, sizeof ans, 30000) < 0 ||
            tr_posix_get_ans_head(ans, &status, &aworld, &why, &k) < 0) {
            fprintf(stderr, "lwip_register: no answer for rank %d\n", rank[i]);
            bad++;
            continue;
        }
        {   /* the table that follows: read it so the close is clean */
            uint8_t e[8];
            while (k-- > 0 && read_all(fd[i], e, sizeof e, 5000) == 0)
                ;
        }
        if (status != 0) {
            fprintf(stderr, "lwip_register: master refused rank %d: status %d\n", rank[i], status);
            bad++;
        }
        close(fd[i]);
    }
    return bad ? 1 : 0;
}
