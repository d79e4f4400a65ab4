/* Files and paths: the one `mkdir -p` of the harness, scratch directories, and paths quoted for a shell. */
#ifndef HC_FILES_H
#define HC_FILES_H

#include <stddef.h>

#include "harness/base/err.h"

/* Creates dir and every missing parent (mode 0777 less the umask); a directory that exists
 * already is fine. Returns 0, or -1 with err (HC_EIO naming the directory that could not be
 * made, HC_EUSAGE for a path too long). */
int hc_mkdir_p(const char *dir, hc_err *err);

/* s as one shell word into out: as it is when it holds only characters no shell treats
 * specially, else single-quoted (for the commands halfcheck prints to rerun something). Returns
 * the bytes written (truncated to len). */
size_t hc_shell_word(char *out, size_t len, const char *s);

/* A private scratch directory, made like mkdtemp: TMP/halfcheck-TAG-PID-XXXXXX (TMP: tmp_dir,
 * else $TMPDIR, else /tmp; PID this process's) into dir[cap]. First it removes what earlier
 * processes left of theirs with the same TAG and a PID that no longer exists (a run killed
 * outright, SIGKILL, cannot clean up after itself): only directories of this user, untouched for
 * an hour (their files too), holding plain files only. Returns 0, or -1 with err (HC_EIO). */
int hc_scratch_dir(char *dir, size_t cap, const char *tag, const char *tmp_dir, hc_err *err);

#endif
