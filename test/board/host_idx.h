/* tinyring board tests: the host twins' reader for the first n samples of
 * an uncompressed IDX pair (the same files the boards read by semihosting). */
#ifndef HOST_IDX_H
#define HOST_IDX_H

#include <stdint.h>

/* pix (n, BT_PIXELS) and lab (n) from the image and label files after their
 * headers. Returns 0, or -1 if a file is missing or shorter. */
int host_load_idx(const char *images, const char *labels, unsigned n, uint8_t *pix,
                  uint8_t *lab);

#endif /* HOST_IDX_H */
