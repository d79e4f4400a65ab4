#define _GNU_SOURCE
#include "fuzz_util.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int fuzz_memfd(const uint8_t *data, size_t size, char path[64])
{
    int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd < 0) {
        perror("memfd_create");
        abort();
    }
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            perror("write memfd");
            abort();
        }
        done += (size_t)w;
    }
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return fd;
}

char *fuzz_strdup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}
