/* hc_mkdir_p: one implementation for the runner's cache and reports, merge and katago's workdir. */
#include "files.h"

#include <errno.h>
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
