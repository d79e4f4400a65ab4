/* Replays a fuzz target's kept inputs without libFuzzer (any C compiler): every file of
 * tests/fuzz/corpus/TARGET and tests/fuzz/regress/TARGET (from the repository root) goes
 * through LLVMFuzzerTestOneInput once; extra arguments name more files or directories.
 * A crash or sanitizer report ends the program (tests/run.sh counts that as a failure); each
 * directory replayed reports one PASS line. FUZZ_TARGET names the target; FUZZ_REPLAY_VERBOSE=1
 * prints each file's name before replaying it (to find the one that crashes). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../hc_test.h"
#include "fuzz_util.h"

#ifndef FUZZ_TARGET
#error "build with -DFUZZ_TARGET=\"name\""
#endif

static int verbose;

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf)
            abort();
        size_t r = fread(buf + len, 1, cap - len, f);
        len += r;
        if (len < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    fclose(f);
    /* libFuzzer hands over a private copy of exactly the input's size; so does this. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact)
        abort();
    memcpy(exact, buf, len);
    free(buf);
    if (verbose) /* to tell which input crashed: FUZZ_REPLAY_VERBOSE=1 */
        fprintf(stderr, "replaying %s\n", path);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Returns the number of files replayed, -1 when path is absent. */
static long replay(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return replay_file(path) == 0 ? 1 : -1;
    DIR *d = opendir(path);
    if (!d)
        return -1;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        if (!names)
            abort();
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp);
    long count = 0;
    for (size_t i = 0; i < n; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, names[i]);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && replay_file(full) == 0)
            count++;
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    char corpus[512], regress[512], name[128];
    verbose = getenv("FUZZ_REPLAY_VERBOSE") != NULL;
    hc_plan(2 + (unsigned)(argc - 1)); /* the corpus, the regression inputs, one per argument */
    snprintf(corpus, sizeof corpus, "tests/fuzz/corpus/%s", FUZZ_TARGET);
    snprintf(regress, sizeof regress, "tests/fuzz/regress/%s", FUZZ_TARGET);
    long nc = replay(corpus);
    snprintf(name, sizeof name, "fuzz-%s.corpus", FUZZ_TARGET);
    hc_check(name, nc > 0, "no seed corpus at %s (run from the repository root)", corpus);
    long nr = replay(regress); /* -1: none kept (no finding for this target yet) */
    snprintf(name, sizeof name, "fuzz-%s.regress", FUZZ_TARGET);
    if (nr >= 0)
        hc_check(name, 1, " ");
    else
        hc_skip(name, "no regression inputs kept for this target");
    for (int i = 1; i < argc; i++) {
        snprintf(name, sizeof name, "fuzz-%s.arg-%d", FUZZ_TARGET, i);
        hc_check(name, replay(argv[i]) >= 0, "%s: absent", argv[i]);
    }
    printf("fuzz-%s: replayed %ld corpus and %ld regression inputs\n", FUZZ_TARGET, nc, nr < 0 ? 0 : nr);
    return hc_test_exit();
}
