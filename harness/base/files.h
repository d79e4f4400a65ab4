/* Directories on the way to a file: the one `mkdir -p` of the harness. */
#ifndef HC_FILES_H
#define HC_FILES_H

#include "err.h"

/* Creates dir and every missing parent (mode 0777 less the umask); a directory that exists
 * already is fine. Returns 0, or -1 with err (HC_EIO naming the directory that could not be
 * made, HC_EUSAGE for a path too long). */
int hc_mkdir_p(const char *dir, hc_err *err);

#endif
