/* tinyring board tests: IDX samples for the host twins (see host_idx.h). */
#include <stdio.h>
#include "host_idx.h"
#include "train_step.h"

int host_load_idx(const char *images, const char *labels, unsigned n, uint8_t *pix,
                  uint8_t *lab)
{
    FILE *fi = fopen(images, "rb"), *fl = fopen(labels, "rb");
    unsigned char h[16];
    int ok = fi && fl && fread(h, 1, 16, fi) == 16 &&
             fread(pix, 1, (size_t)n * BT_PIXELS, fi) == (size_t)n * BT_PIXELS &&
             fread(h, 1, 8, fl) == 8 && fread(lab, 1, n, fl) == n;
    if (fi)
        fclose(fi);
    if (fl)
        fclose(fl);
    return ok ? 0 : -1;
}
