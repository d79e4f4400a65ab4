/* The reference cache: ref32's outputs of a net x positions x settings, one binary records
 * file per key, written atomically and validated on read. */
#include "harness/run/refcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness/base/files.h"
#include "harness/base/sha256.h"
#include "harness/base/stream.h"
#include "harness/base/version.h"

void hc_refcache_key(const char *net_digest, const char *pos_digest, const hc_eval_settings *s, char hex[65])
{
    char text[1024];
    snprintf(text, sizeof text, "halfcheck-ref v1|engine %d|net %s|positions %s|nn %dx%d|opt %.17g|pda %.17g|temp %.9g|meta %s",
             HC_ENGINE_VERSION, net_digest, pos_digest, s->nn_x, s->nn_y, s->policy_optimism,
             s->playout_doubling_advantage, (double)s->policy_temperature, s->meta_profile);
    hc_sha256 h;
    hc_sha256_init(&h);
    hc_sha256_update(&h, text, strlen(text));
    hc_sha256_final_hex(&h, hex);
}

int hc_refcache_usable(const char *dir, hc_err *err)
{
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return hc_err_set(err, HC_EIO, "%s: not a directory", dir);
    hc_err merr = {0};
    if (hc_mkdir_p(dir, &merr))
        return hc_err_set(err, HC_EIO, "%s", merr.msg); /* names the directory it could not make */
    /* Write permission as the file system sees it (root, ACLs, a read-only mount): make a file. */
    char probe[4200];
    if (snprintf(probe, sizeof probe, "%s/.probe-XXXXXX", dir) >= (int)sizeof probe)
        return hc_err_set(err, HC_EIO, "%s: path too long", dir);
    int fd = mkstemp(probe);
    if (fd < 0)
        return hc_err_set(err, HC_EIO, "%s: cannot write in it: %s", dir, strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

int hc_refcache_read(const char *path, hc_nnoutput *outs, size_t n, const hc_eval_settings *s)
{
    if (access(path, R_OK) != 0)
        return 0;
    unsigned char *got = calloc(n ? n : 1, 1);
    hc_err err = {0};
    long k = got ? hc_nnoutput_read_records(path, outs, got, n, &err) : -1;
    int ok = k == (long)n;
    for (size_t i = 0; ok && i < n; i++)
        ok = got[i] && outs[i].nn_x_len == s->nn_x && outs[i].nn_y_len == s->nn_y && outs[i].white_owner_map;
    if (!ok)
        for (size_t i = 0; i < n; i++)
            if (got && got[i])
                hc_nnoutput_free(&outs[i]);
    free(got);
    return ok;
}

int hc_refcache_lock(const char *dir, const char key[65], int (*stop)(void *), void *user)
{
    char path[4200];
    if (snprintf(path, sizeof path, "%s/.locks", dir) >= (int)sizeof path)
        return -1;
    /* Not inherited by what the run's children exec (an engine has no business with it). */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    /* The first 7 hex digits: an offset below 2^28, within any off_t. */
    char head[8];
    memcpy(head, key, 7);
    head[7] = '\0';
    long off = strtol(head, NULL, 16);
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = (off_t)off;
    fl.l_len = 1;
    for (;;) {
        if (fcntl(fd, F_SETLK, &fl) == 0)
            return fd;
        if (errno != EACCES && errno != EAGAIN && errno != EINTR)
            break; /* a file system without locks: compute without */
        if (stop && stop(user)) {
            close(fd);
            return -2;
        }
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    close(fd);
    return -1;
}

void hc_refcache_unlock(int lock)
{
    if (lock >= 0)
        close(lock); /* closing the file releases the process's locks on it */
}

int hc_refcache_write(const char *path, const hc_nnoutput *outs, size_t n, hc_err *err)
{
    hc_ostream *o = hc_ostream_open(path, err);
    if (!o)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        void *rec = hc_nnoutput_encode(&outs[i], (long)i, &len, err);
        if (!rec || hc_ostream_write(o, rec, len, err)) {
            free(rec);
            hc_ostream_abort(o);
            return -1;
        }
        free(rec);
    }
    return hc_ostream_commit(o, err);
}
