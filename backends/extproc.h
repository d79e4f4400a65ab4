/* External programs driven over pipes (the gtp: and pipe: backends): start a command with its
 * stdin and stdout on pipes, its stderr drained into a short tail kept for error messages;
 * write without dying of SIGPIPE; read lines and byte blocks with a deadline; stop it.
 * Internal to backends/. */
#ifndef HC_EXTPROC_H
#define HC_EXTPROC_H

#include <stddef.h>
#include <sys/types.h>

#include "harness/base/err.h"

typedef struct hc_extproc {
    pid_t pid;
    int to_fd, from_fd, err_fd;
    char rbuf[65536];
    size_t rstart, rlen;
    char tail[600]; /* last bytes of the program's stderr */
    size_t tail_len;
    char name[256]; /* argv[0], for messages */
} hc_extproc;

/* Splits a command line into words (whitespace separates; '...' and "..." quote; a backslash
 * escapes the next character) and expands $VAR and ${VAR} inside words (not in '...').
 * Returns a malloc'd NULL-terminated argv (free with hc_extproc_free_argv), or NULL with err:
 * a syntax error, or an unset variable as an HC_BACKEND_SKIP message (the case cannot run here,
 * which is no error of the backend under test). */
char **hc_extproc_split(const char *cmd, hc_err *err);
void hc_extproc_free_argv(char **argv);

/* Starts argv (execvp, no shell). Fails with err when the program cannot be executed. */
int hc_extproc_start(hc_extproc *p, char *const argv[], hc_err *err);
/* Writes all of buf by the deadline (SIGPIPE blocked for the call); -1 with err when the
 * program is gone or stops reading. */
int hc_extproc_write(hc_extproc *p, const void *buf, size_t n, double deadline, hc_err *err);
/* Reads one line (without '\n', '\r' dropped) into line (cap bytes) by the deadline
 * (hc_extproc_now() seconds). Returns the length, or -1 with err: EOF (the program exited:
 * its status and stderr tail are in the message), timeout, or a line longer than cap. */
long hc_extproc_read_line(hc_extproc *p, char *line, size_t cap, double deadline, hc_err *err);
/* Without waiting, for a program fed and read side by side with others (a writer that waited for
 * room while the program waits for its output to be read would deadlock): hc_extproc_write_some
 * writes what the program's input takes now and returns the bytes written (0: none), -1 with err
 * (it exited); hc_extproc_try_read_line returns a line already received or readable now, or
 * HC_EXTPROC_NO_LINE, -1 with err as hc_extproc_read_line; hc_extproc_wait_any waits until one of
 * n programs has room for input (want_write[i]) or output (want_read[i]), or the deadline, draining
 * their stderr meanwhile (at most 16 programs). */
enum { HC_EXTPROC_NO_LINE = -2 };
long hc_extproc_write_some(hc_extproc *p, const void *buf, size_t n, hc_err *err);
long hc_extproc_try_read_line(hc_extproc *p, char *line, size_t cap, hc_err *err);
void hc_extproc_wait_any(hc_extproc *const *ps, const int *want_write, const int *want_read, int n, double deadline);
/* Reads exactly n bytes by the deadline, or -1 with err (short read: how many were read). */
int hc_extproc_read(hc_extproc *p, void *buf, size_t n, double deadline, hc_err *err);
/* Kills (SIGKILL) and reaps the program if running; closes the pipes. Safe to repeat. */
void hc_extproc_stop(hc_extproc *p);
/* Closes its stdin and waits up to grace seconds for it to exit, then stops it. */
void hc_extproc_finish(hc_extproc *p, double grace);
int hc_extproc_running(const hc_extproc *p);
/* The largest peak resident set among this process's children that have exited and been
 * reaped, in KiB (getrusage RUSAGE_CHILDREN, POSIX; ru_maxrss is KiB on Linux and the BSDs,
 * bytes on macOS); -1 when unknown. Backends run in a case's own child process
 * (harness/run/isolate), so there it is the largest of that case's engine processes. */
double hc_extproc_children_peak_rss_kib(void);
double hc_extproc_now(void);

#endif
