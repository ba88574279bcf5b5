/* mnist_ring: the static table of a ring without rendezvous (--peers FILE),
 * for rings with boards, which have no rendezvous client.
 *
 * One rank per line, "RANK IPV4:PORT" (e.g. "2 198.18.0.11:5002"); blank
 * lines and lines starting with '#' are skipped. The ranks must be exactly
 * 0..N-1 for a table of N lines, every address:port different. */
#ifndef MR_PEERS_H
#define MR_PEERS_H

#include <stddef.h>

#include "tr_posix.h"

struct mr_peers {
    int world;                                        /* entries */
    struct tr_posix_endpoint table[TR_POSIX_MAX_WORLD]; /* [rank] */
    int line[TR_POSIX_MAX_WORLD];                     /* line of each rank, 1-based */
};

/* Read and check path. Returns 0, or TR_ERR_IO / TR_ERR_FORMAT with a
 * message naming the file and the line in err. */
int mr_peers_load(struct mr_peers *p, const char *path, char *err, size_t errlen);

#endif /* MR_PEERS_H */
