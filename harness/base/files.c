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
