/* Files and paths: the one `mkdir -p` of the harness, and paths quoted for a shell. */
#ifndef HC_FILES_H
#define HC_FILES_H

#include <stddef.h>

#include "err.h"

/* Creates dir and every missing parent (mode 0777 less the umask); a directory that exists
 * already is fine. Returns 0, or -1 with err (HC_EIO naming the directory that could not be
 * made, HC_EUSAGE for a path too long). */
int hc_mkdir_p(const char *dir, hc_err *err);

/* s as one shell word into out: as it is when it holds only characters no shell treats
 * specially, else single-quoted (for the commands halfcheck prints to rerun something). Returns
 * the bytes written (truncated to len). */
size_t hc_shell_word(char *out, size_t len, const char *s);

#endif
