/* tinyring test: helpers shared by the comm tests. */
#ifndef COMM_UTIL_H
#define COMM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "sim_transport.h"
#include "tr_comm.h"

#define TOKEN  0x5EED5EED12345678ull
#define LAYOUT 0xC0FFEEu
#define CANARY 8                         /* guard floats after every buffer */
#define GUARD  (-12345.5f)

/* N simulated ranks with their communicators and last return codes. */
struct job {
    struct sim_net net;
    int world;
    struct tr_comm c[SIM_MAX_WORLD];
    uint8_t *scratch[SIM_MAX_WORLD];
    int rc[SIM_MAX_WORLD];
};

enum what { W_ALLREDUCE, W_REDUCE };

/* transport knobs applied to every rank of a checked run */
struct knobs {
    size_t max_write;
    unsigned again_every;
    int shuffle;
    size_t fifo;
};

void job_cfg(struct tr_comm_config *cfg, int world, int rank, uint32_t seg, uint32_t timeout);
int  job_init(struct job *j, int world, uint32_t seg, size_t fifo, uint32_t timeout);
int  job_hello(struct job *j);
int  job_open(struct job *j, int world, uint32_t seg, size_t fifo, uint32_t timeout);
void job_free(struct job *j);
int  all_rc(const struct job *j, int want);
float val(int r, size_t i, unsigned salt);
float *alloc_buf(size_t count);
int  canary_ok(const float *b, size_t count);
const char *algo_name(int a);
/* A float collective on fresh ranks, checked against a double serial sum and
 * bitwise across ranks (allreduce); 1 if everything held. */
int  run_float(int world, size_t count, enum what what, int op, int algo, int root,
               uint32_t seg, const struct knobs *k);
/* A byte broadcast on fresh ranks; 1 if every rank holds root's bytes. */
int  run_bcast(int world, size_t bytes, int root, uint32_t seg, const struct knobs *k);

#endif /* COMM_UTIL_H */
