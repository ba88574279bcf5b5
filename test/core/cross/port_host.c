/* The host twin of the minimal images: the same image.c on the host core
 * library, printing what every target must reproduce. */
#include "image.h"
#include <stdio.h>

void img_puts(const char *s)
{
    fputs(s, stdout);
}

uint64_t img_instret(void)
{
    return 0;
}

int main(void)
{
    return img_main() == 0 ? 0 : 1;
}
