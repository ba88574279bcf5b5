/* tinyring board_mps2: an MNIST-format (IDX, uncompressed) image and label
 * file pair on the host, read sample by sample through semihosting. */
#ifndef BOARD_IDX_SH_H
#define BOARD_IDX_SH_H

#include <stdint.h>

#define IDX_SH_PIXELS 784u   /* 28 x 28 */

struct idx_sh {
    int      img, lbl;       /* semihosting handles, -1 when closed */
    uint32_t n;              /* samples */
};

/* Open DIR/PREFIX-images-idx3-ubyte and DIR/PREFIX-labels-idx1-ubyte (PREFIX
 * "train" or "t10k") and check them: magic, 28x28, equal counts, the file
 * lengths, every label 0..9. Returns 0, or -1 with a line saying which file
 * and what is wrong. */
int idx_sh_open(struct idx_sh *d, const char *dir, const char *prefix);

/* Samples idx[0..n) into pixels (n * 784) and labels (n). 0 or -1. */
int idx_sh_read(const struct idx_sh *d, const uint32_t *idx, unsigned n, uint8_t *pixels,
                uint8_t *labels);

void idx_sh_close(struct idx_sh *d);

#endif /* BOARD_IDX_SH_H */
