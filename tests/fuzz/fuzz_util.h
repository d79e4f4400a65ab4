/* Shared by the fuzz targets: readers that only take a path get the input through an anonymous
 * in-memory file (memfd), so no target writes to disk (on Linux; elsewhere a temporary file,
 * removed when the next input comes). */
#ifndef HC_FUZZ_UTIL_H
#define HC_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The input as a file: returns the descriptor (close it after use) and its path in path[64],
 * or -1 (the harness aborts: the environment, not the input, is broken). */
int fuzz_memfd(const uint8_t *data, size_t size, char path[64]);
/* A NUL-terminated malloc'd copy of the input. */
char *fuzz_strdup(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
