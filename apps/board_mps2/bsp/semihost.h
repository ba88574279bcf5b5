/* tinyring board_mps2: ARM semihosting (BKPT 0xAB) as QEMU implements it
 * with -semihosting-config enable=on,target=native. Console text, host files
 * (read, and written: a checkpoint) and the exit status; nothing here
 * allocates. */
#ifndef BOARD_SEMIHOST_H
#define BOARD_SEMIHOST_H

#include <stddef.h>
#include <stdint.h>

/* Write a NUL-terminated string to the host's console (SYS_WRITE0). */
void sh_puts(const char *s);

/* Copy the semihosting command line (SYS_GET_CMDLINE) into buf[0..len),
 * NUL-terminated. Returns its length, or -1. */
int sh_cmdline(char *buf, size_t len);

/* Open a host file read-only, binary (SYS_OPEN mode "rb"). Returns a handle
 * >= 0 or -1. */
int sh_open(const char *path);

/* Create or truncate a host file for writing, binary (SYS_OPEN mode "wb").
 * Returns a handle >= 0 or -1. */
int sh_create(const char *path);

/* Write len bytes (SYS_WRITE). Returns the number written (less than len:
 * the host's disk is full or failed), or -1. */
long sh_write(int fd, const void *buf, size_t len);

/* Rename a host file, replacing `to` (SYS_RENAME). 0 or -1. */
int sh_rename(const char *from, const char *to);

/* Delete a host file (SYS_REMOVE). 0 or -1. */
int sh_remove(const char *path);

/* Read up to len bytes (SYS_READ). Returns the number read (0 at EOF), or -1. */
long sh_read(int fd, void *buf, size_t len);

/* Move to byte pos from the start of the file (SYS_SEEK). 0 or -1. */
int sh_seek(int fd, uint32_t pos);

/* The file's length in bytes (SYS_FLEN), or -1. */
long sh_flen(int fd);

int sh_close(int fd);

/* Host clock in centiseconds since the program started (SYS_CLOCK). */
long sh_clock_cs(void);

/* Stop the emulator with an exit status: SYS_EXIT_EXTENDED with
 * ADP_Stopped_ApplicationExit and the status as subcode (QEMU exits with it). */
void sh_exit(int status) __attribute__((noreturn));

#endif /* BOARD_SEMIHOST_H */
