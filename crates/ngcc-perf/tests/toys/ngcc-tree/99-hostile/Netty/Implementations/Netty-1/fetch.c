/* Hostile toy (tests only): connects to a remote host; prints a C file when it could. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
    struct sockaddr_in a = {0};
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) {
        perror("socket");
        return 1;
    }
    a.sin_family = AF_INET;
    a.sin_port = htons(80);
    inet_pton(AF_INET, "192.0.2.1", &a.sin_addr);
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        return 1;
    }
    close(s);
    puts("int remote_toy(void) { return 1; }");
    return 0;
}
