/* Lists the descriptors above stderr it was started with, for tests/test_engine_fds: an engine
 * halfcheck starts must get stdin, stdout and stderr only.
 *   helper_fds FILE [PROGRAM ARGS...]
 * writes "fds:" and each open descriptor 3..1023 (fcntl F_GETFD, portable) to FILE, appended
 * (one line per start), then runs PROGRAM with ARGS in its place (execvp), if given. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: helper_fds FILE [PROGRAM ARGS...]\n");
        return 2;
    }
    char line[8192];
    size_t o = (size_t)snprintf(line, sizeof line, "fds:");
    for (int fd = 3; fd < 1024; fd++)
        if (fcntl(fd, F_GETFD) != -1 && o < sizeof line - 16)
            o += (size_t)snprintf(line + o, sizeof line - o, " %d", fd);
    FILE *f = fopen(argv[1], "a");
    if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
        fprintf(stderr, "helper_fds: cannot write %s\n", argv[1]);
        return 2;
    }
    if (argc > 2) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "helper_fds: cannot execute %s\n", argv[2]);
        return 127;
    }
    return 0;
}
