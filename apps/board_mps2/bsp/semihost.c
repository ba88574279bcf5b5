/* tinyring board_mps2: semihosting calls. Operation in r0, pointer to the
 * argument block in r1, result in r0; BKPT 0xAB on M-profile. */
#include "semihost.h"

enum {
    SYS_OPEN = 0x01, SYS_CLOSE = 0x02, SYS_WRITE0 = 0x04, SYS_WRITE = 0x05, SYS_READ = 0x06,
    SYS_SEEK = 0x0A, SYS_FLEN = 0x0C, SYS_REMOVE = 0x0E, SYS_RENAME = 0x0F, SYS_CLOCK = 0x10,
    SYS_GET_CMDLINE = 0x15,
    SYS_EXIT = 0x18, SYS_EXIT_EXTENDED = 0x20
};
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

static long sh_call(unsigned op, const void *arg)
{
    register unsigned r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return (long)(int)r0;
}

static size_t sh_strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

void sh_puts(const char *s)
{
    sh_call(SYS_WRITE0, s);
}

int sh_cmdline(char *buf, size_t len)
{
    uint32_t blk[2];
    if (len < 2)
        return -1;
    blk[0] = (uint32_t)(uintptr_t)buf;
    blk[1] = (uint32_t)(len - 1);
    if (sh_call(SYS_GET_CMDLINE, blk) != 0)
        return -1;
    buf[blk[1] < len ? blk[1] : len - 1] = '\0';
    return (int)blk[1];
}

static int open_mode(const char *path, uint32_t mode)
{
    uint32_t blk[3];
    blk[0] = (uint32_t)(uintptr_t)path;
    blk[1] = mode;
    blk[2] = (uint32_t)sh_strlen(path);
    return (int)sh_call(SYS_OPEN, blk);
}

int sh_open(const char *path)
{
    return open_mode(path, 1);   /* "rb" */
}

int sh_create(const char *path)
{
    return open_mode(path, 5);   /* "wb" */
}

/* SYS_READ or SYS_WRITE of len bytes: the count moved, or -1 (the host
 * answers with the bytes NOT moved) */
static long transfer(unsigned op, int fd, const void *buf, size_t len)
{
    uint32_t blk[3];
    long left;
    blk[0] = (uint32_t)fd;
    blk[1] = (uint32_t)(uintptr_t)buf;
    blk[2] = (uint32_t)len;
    left = sh_call(op, blk);
    if (left < 0 || (size_t)left > len)
        return -1;
    return (long)(len - (size_t)left);
}

long sh_write(int fd, const void *buf, size_t len)
{
    return transfer(SYS_WRITE, fd, buf, len);
}

int sh_rename(const char *from, const char *to)
{
    uint32_t blk[4];
    blk[0] = (uint32_t)(uintptr_t)from;
    blk[1] = (uint32_t)sh_strlen(from);
    blk[2] = (uint32_t)(uintptr_t)to;
    blk[3] = (uint32_t)sh_strlen(to);
    return sh_call(SYS_RENAME, blk) == 0 ? 0 : -1;
}

int sh_remove(const char *path)
{
    uint32_t blk[2];
    blk[0] = (uint32_t)(uintptr_t)path;
    blk[1] = (uint32_t)sh_strlen(path);
    return sh_call(SYS_REMOVE, blk) == 0 ? 0 : -1;
}

long sh_read(int fd, void *buf, size_t len)
{
    return transfer(SYS_READ, fd, buf, len);
}

int sh_seek(int fd, uint32_t pos)
{
    uint32_t blk[2];
    blk[0] = (uint32_t)fd;
    blk[1] = pos;
    return sh_call(SYS_SEEK, blk) == 0 ? 0 : -1;
}

long sh_flen(int fd)
{
    uint32_t blk[1];
    blk[0] = (uint32_t)fd;
    return sh_call(SYS_FLEN, blk);
}

int sh_close(int fd)
{
    uint32_t blk[1];
    blk[0] = (uint32_t)fd;
    return (int)sh_call(SYS_CLOSE, blk);
}

long sh_clock_cs(void)
{
    return sh_call(SYS_CLOCK, 0);
}

void sh_exit(int status)
{
    uint32_t blk[2];
    blk[0] = ADP_STOPPED_APPLICATION_EXIT;
    blk[1] = (uint32_t)status;
    sh_call(SYS_EXIT_EXTENDED, blk);
    /* an old host without the extension: plain SYS_EXIT (status 0 or 1) */
    sh_call(SYS_EXIT, (const void *)(uintptr_t)(status ? 0x20024u /* RunTimeErrorUnknown */
                                                       : ADP_STOPPED_APPLICATION_EXIT));
    for (;;)
        __asm__ volatile("wfi");
}
