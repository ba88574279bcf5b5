/* mnist_ring: the --peers table (see peers.h). */
#define _GNU_SOURCE
#include "peers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_error.h"

/* An entry line longer than this is refused (comments may be longer). */
#define MR_PEERS_LINE_MAX 511

/* "RANK ADDR:PORT" into e; 0, or -1 with why in msg. */
static int parse_line(char *s, long *rank, struct tr_posix_endpoint *e, char *msg, size_t n)
{
    char *rank_s = strtok(s, " \t\r\n"), *addr = strtok(NULL, " \t\r\n"), *end;
    char why[256];
    if (!rank_s || !addr || strtok(NULL, " \t\r\n")) {
        snprintf(msg, n, "want 'RANK IPV4:PORT'");
        return -1;
    }
    errno = 0;
    *rank = strtol(rank_s, &end, 10);
    if (errno || *end || end == rank_s || *rank < 0 || *rank >= TR_POSIX_MAX_WORLD) {
        snprintf(msg, n, "'%s' is not a rank in 0..%d", rank_s, TR_POSIX_MAX_WORLD - 1);
        return -1;
    }
    if (tr_posix_endpoint_parse(e, addr, why, sizeof why) < 0) {
        snprintf(msg, n, "%s", why);
        return -1;
    }
    return 0;
}

static int same(const struct tr_posix_endpoint *a, const struct tr_posix_endpoint *b)
{
    return a->addr == b->addr && a->port == b->port;
}

int mr_peers_load(struct mr_peers *p, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL, msg[300];
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, entries = 0, last_line = 0;
    long max_rank = -1;

    memset(p, 0, sizeof *p);
    if (!f) {
        snprintf(err, errlen, "--peers %s: cannot open: %s", path, strerror(errno));
        return TR_ERR_IO;
    }
    /* whole lines, however long: a comment's tail is never read as an entry */
    while ((len = getline(&buf, &cap, f)) >= 0) {
        struct tr_posix_endpoint e;
        char *s = buf + strspn(buf, " \t");
        long rank;
        lineno++;
        if (*s == '#' || *s == '\n' || *s == '\r' || *s == 0)
            continue;
        if (len > MR_PEERS_LINE_MAX) {
            snprintf(err, errlen, "--peers %s: line %d: too long", path, lineno);
            goto bad;
        }
        if (parse_line(s, &rank, &e, msg, sizeof msg) < 0) {
            snprintf(err, errlen, "--peers %s: line %d: %s", path, lineno, msg);
            goto bad;
        }
        if (p->line[rank]) {
            snprintf(err, errlen, "--peers %s: line %d: rank %ld appears twice (also on line %d)",
                     path, lineno, rank, p->line[rank]);
            goto bad;
        }
        for (int r = 0; r < TR_POSIX_MAX_WORLD; r++)
            if (p->line[r] && same(&p->table[r], &e)) {
                snprintf(err, errlen, "--peers %s: line %d: the address of rank %ld is rank %d's "
                         "too (line %d): every rank needs its own address:port", path, lineno,
                         rank, r, p->line[r]);
                goto bad;
            }
        p->table[rank] = e;
        p->line[rank] = lineno;
        entries++;
        if (rank > max_rank) {
            max_rank = rank;
            last_line = lineno;
        }
    }
    free(buf);
    fclose(f);
    if (entries == 0) {
        snprintf(err, errlen, "--peers %s: no 'RANK IPV4:PORT' line", path);
        return TR_ERR_FORMAT;
    }
    for (int r = 0; r < entries; r++)
        if (!p->line[r]) {
            snprintf(err, errlen, "--peers %s: rank %d is missing: %d lines need ranks 0..%d "
                     "(line %d has rank %ld)", path, r, entries, entries - 1, last_line, max_rank);
            return TR_ERR_FORMAT;
        }
    p->world = entries;
    return 0;
bad:
    free(buf);
    fclose(f);
    return TR_ERR_FORMAT;
}
