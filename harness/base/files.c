/* hc_mkdir_p (the runner's cache and reports, merge, katago's workdir) and hc_scratch_dir (every private temporary directory). */
#include "harness/base/files.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

int hc_mkdir_p(const char *dir, hc_err *err)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return hc_err_set(err, HC_EUSAGE, "%s: path too long", dir);
    if (!buf[0])
        return hc_err_set(err, HC_EUSAGE, "empty directory name");
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return hc_err_set(err, HC_EIO, "%s: cannot create the directory: %s", buf, strerror(errno));
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

size_t hc_shell_word(char *out, size_t len, const char *s)
{
    size_t o = 0;
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        plain = plain && (strchr("_-./:=,@+%", *p) || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                          (*p >= '0' && *p <= '9'));
    for (const char *p = plain ? s : "'"; *p && o + 1 < len; p++)
        out[o++] = *p;
    for (const char *p = s; !plain && *p && o + 5 < len; p++) {
        if (*p == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *p;
        }
    }
    if (!plain && o + 1 < len)
        out[o++] = '\'';
    out[o < len ? o : len - 1] = '\0';
    return o < len ? o : len - 1;
}

/* The newest modification time of d and its entries, or -1 when d holds anything but plain files
 * (then it is not ours to remove). */
static time_t newest_plain(const char *d)
{
    struct stat st;
    if (stat(d, &st) != 0)
        return -1;
    time_t newest = st.st_mtime;
    DIR *dp = opendir(d);
    if (!dp)
        return -1;
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (snprintf(p, sizeof p, "%s/%s", d, e->d_name) >= (int)sizeof p || lstat(p, &st) != 0 ||
            !S_ISREG(st.st_mode)) {
            newest = -1;
            break;
        }
        if (st.st_mtime > newest)
            newest = st.st_mtime;
    }
    closedir(dp);
    return newest;
}

static void remove_plain_dir(const char *d)
{
    DIR *dp = opendir(d);
    if (!dp)
        return;
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(dp)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            snprintf(p, sizeof p, "%s/%s", d, e->d_name) < (int)sizeof p)
            unlink(p);
    closedir(dp);
    rmdir(d);
}

/* halfcheck-TAG-PID-XXXXXX directories in base whose process is gone: removed (best effort). */
static void sweep_stale(const char *base, const char *prefix)
{
    DIR *dp = opendir(base);
    if (!dp)
        return;
    size_t pl = strlen(prefix);
    time_t now = time(NULL);
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(dp))) {
        if (strncmp(e->d_name, prefix, pl) != 0)
            continue;
        char *end = NULL;
        long pid = strtol(e->d_name + pl, &end, 10);
        if (pid <= 0 || !end || *end != '-' || strlen(end + 1) != 6 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive (or not ours to ask about) */
        struct stat st;
        if (snprintf(p, sizeof p, "%s/%s", base, e->d_name) >= (int)sizeof p || lstat(p, &st) != 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != getuid())
            continue;
        time_t newest = newest_plain(p);
        if (newest >= 0 && now - newest > 3600)
            remove_plain_dir(p);
    }
    closedir(dp);
}

int hc_scratch_dir(char *dir, size_t cap, const char *tag, const char *tmp_dir, hc_err *err)
{
    const char *env = getenv("TMPDIR");
    const char *base = tmp_dir && *tmp_dir ? tmp_dir : env && *env ? env : "/tmp";
    char prefix[128];
    snprintf(prefix, sizeof prefix, "halfcheck-%s-", tag);
    sweep_stale(base, prefix);
    if (snprintf(dir, cap, "%s/%s%ld-XXXXXX", base, prefix, (long)getpid()) >= (int)cap)
        return hc_err_set(err, HC_EUSAGE, "%s: temporary directory path too long", base);
    if (!mkdtemp(dir))
        return hc_err_set(err, HC_EIO, "%s: cannot create a scratch directory: %s", dir, strerror(errno));
    return 0;
}
