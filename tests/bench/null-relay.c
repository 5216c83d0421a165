// SPDX-License-Identifier: MIT
// null-relay: the cheapest possible extra hop (bytes copied both ways, nothing parsed).
//
// usage: null-relay SERVER [ARGS...]. Runs the server on pipes and copies our stdin to its
// stdin and its stdout to our stdout until either side closes: the floor any relay (mcpd
// included) is measured against, since it pays the hop's syscalls and context switches only.

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* One read's worth: an echo call and its answer are a few hundred bytes. */
#define RELAY_CHUNK 65536

/* Copy what is readable on from to to; false on EOF or error. */
static bool pump(int from, int to)
{
    static char buf[RELAY_CHUNK];
    ssize_t n = read(from, buf, sizeof(buf));

    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0)
        return false;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        off += w;
    }
    return true;
}

int main(int argc, char **argv)
{
    int to[2], from[2];
    pid_t pid;

    if (argc < 2) {
        fprintf(stderr, "usage: null-relay SERVER [ARGS...]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0) {
        perror("null-relay: pipe");
        return 1;
    }
    pid = fork();
    if (pid < 0) {
        perror("null-relay: fork");
        return 1;
    }
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = from[0], .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[0].revents && !pump(0, to[1]))
            break;
        if (fds[1].revents && !pump(from[0], 1))
            break;
    }
    close(to[1]);
    close(from[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return 0;
}
