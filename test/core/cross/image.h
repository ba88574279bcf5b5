/* The minimal cross images: what image.c needs from each target's start
 * file (port_arm.c for Cortex-M4F and Cortex-M55, port_rv.c for RV32, and
 * port_host.c for the host twin whose output every target must reproduce). */
#ifndef TR_CROSS_IMAGE_H
#define TR_CROSS_IMAGE_H

#include <stdint.h>

/* one NUL-terminated piece of text to the host (semihosting on targets) */
void img_puts(const char *s);

/* instructions retired since start, counted by the emulator (QEMU with
 * -icount shift=0); 0 where nothing counts them (the host twin) */
uint64_t img_instret(void);

/* the image: checks and training steps; returns 0 if every check passed */
int img_main(void);

#endif
