#define _GNU_SOURCE
#include "fuzz_util.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void write_all(int fd, const uint8_t *data, size_t size)
{
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            perror("write fuzz input");
            abort();
        }
        done += (size_t)w;
    }
}

#ifdef __linux__
int fuzz_memfd(const uint8_t *data, size_t size, char path[64])
{
    int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd < 0) {
        perror("memfd_create");
        abort();
    }
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    write_all(fd, data, size);
    return fd;
}
#else
/* No memfd (macOS): a temporary file, removed when the next input comes and at exit (the
 * readers open it by name, with an offset of their own, which /dev/fd/N would not give). */
static char fuzz_last[64];
static void fuzz_unlink_last(void)
{
    if (fuzz_last[0])
        unlink(fuzz_last);
    fuzz_last[0] = '\0';
}
int fuzz_memfd(const uint8_t *data, size_t size, char path[64])
{
    static int registered;
    if (!registered)
        registered = atexit(fuzz_unlink_last) == 0;
    fuzz_unlink_last();
    snprintf(path, 64, "/tmp/hc-fuzz-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        abort();
    }
    snprintf(fuzz_last, sizeof fuzz_last, "%s", path);
    write_all(fd, data, size);
    return fd;
}
#endif

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
