/* test/packaging consumer, host: the demo's numbers on stdout, in the
 * board's format. */
#include <stdio.h>
#include "tinyring.h"
#include "demo.h"
#ifdef CONSUMER_POSIX
#include "tr_posix.h"
#endif

int main(void)
{
    uint32_t loss[DEMO_STEPS], hash;
    unsigned s;
    int e = demo_run(loss, &hash);
    if (e < 0) {
        fprintf(stderr, "consumer: %s\n", tr_strerror(e));
        return 1;
    }
    for (s = 0; s < DEMO_STEPS; s++)
        printf("loss %u %08x\n", s, (unsigned)loss[s]);
    printf("params %08x\n", (unsigned)hash);
#ifdef CONSUMER_TR_CONFIG
    printf("config consumer_tr_config.h TR_MAX_LAYERS %u\n", (unsigned)TR_MAX_LAYERS);
#endif
#ifdef CONSUMER_POSIX
    {   /* tinyring::posix: its header and library came with the package */
        struct tr_posix_endpoint ep;
        char err[128] = "";
        if (tr_posix_endpoint_parse(&ep, "127.0.0.1:29500", err, sizeof err) < 0 || ep.port != 29500) {
            fprintf(stderr, "consumer: endpoint not parsed: %s\n", err);
            return 1;
        }
        printf("posix endpoint parsed\n");
    }
#endif
    return 0;
}
