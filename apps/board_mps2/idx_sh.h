/* tinyring board_mps2: read the first n samples of an MNIST-format (IDX,
 * uncompressed) image/label file pair from the host through semihosting. */
#ifndef BOARD_IDX_SH_H
#define BOARD_IDX_SH_H

#include <stdint.h>

/* Reads samples [first, first+n) into pixels (n*784) and labels (n).
 * Returns 0, or -1 (file missing, bad magic, not 28x28, too few samples,
 * label > 9), with a line on the console saying which. */
int idx_sh_load(const char *img_path, const char *lbl_path, uint32_t first, uint32_t n,
                uint8_t *pixels, uint8_t *labels);

#endif /* BOARD_IDX_SH_H */
