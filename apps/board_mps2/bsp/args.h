/* tinyring board_mps2: the semihosting command line split into words
 * (in place, at most BOARD_MAX_ARGS), and number parsing. */
#ifndef BOARD_ARGS_H
#define BOARD_ARGS_H

#include <stdint.h>

#define BOARD_MAX_ARGS 48
/* the command line's bytes: a ring rank's flags with two /tmp paths take
 * about 200 (RAM: the 256 KiB image counts every byte) */
#define BOARD_CMDLINE_BYTES 1024

/* Fetch and split the command line; argv[0] is the image name QEMU passes
 * first. Returns argc (0 if there is no command line). */
int board_args(char **argv);

/* Decimal (or 0x hex) number; *ok cleared when s is not one. */
uint64_t board_arg_u64(const char *s, int *ok);

#endif /* BOARD_ARGS_H */
