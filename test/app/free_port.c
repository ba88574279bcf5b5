/* test/app: prints N (default 1) TCP ports on 127.0.0.1 that the kernel
 * just gave out (free a moment ago), one a line, for tests that start ranks
 * with tcp://, env:// or a peers table. The N sockets stay bound until all
 * are chosen, so the ports differ (one bound and closed at a time may be
 * given out twice). Usage: free_port [N] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_PORTS 64

int main(int argc, char **argv)
{
    int fd[MAX_PORTS], n = argc > 1 ? atoi(argv[1]) : 1, i;
    if (n < 1 || n > MAX_PORTS) {
        fprintf(stderr, "free_port: N must be 1..%d\n", MAX_PORTS);
        return 2;
    }
    for (i = 0; i < n; i++) {
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        fd[i] = socket(AF_INET, SOCK_STREAM, 0);
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&sa, sizeof sa) != 0 ||
            getsockname(fd[i], (struct sockaddr *)&sa, &len) != 0) {
            perror("free_port");
            return 1;
        }
        printf("%d\n", ntohs(sa.sin_port));
    }
    for (i = 0; i < n; i++)
        close(fd[i]);
    return 0;
}
