/* The reference cache: ref32's outputs keyed by what they depend on, so a rerun of a suite
 * skips the fp32 reference it already computed. */
#ifndef HC_REFCACHE_H
#define HC_REFCACHE_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/data/nnoutput.h"
#include "backends/settings.h"

/* The key (64 hex digits and a NUL) of the net's and positions' digests, the settings and the
 * engine version: a change to any of them is a different file. */
void hc_refcache_key(const char *net_digest, const char *pos_digest, const hc_eval_settings *s, char hex[65]);

/* 1 with outs[0..n) filled when path holds every record and each fits the buffer of s; else 0
 * with outs untouched (a missing or stale file only costs time). */
int hc_refcache_read(const char *path, hc_nnoutput *outs, size_t n, const hc_eval_settings *s);

/* Whether dir can hold the cache: created if absent (with its parents), a directory, and a file
 * can be made in it. 0, or -1 with err naming dir and why (a file where the directory should be,
 * a directory that cannot be made or written): the run then computes each reference afresh. */
int hc_refcache_usable(const char *dir, hc_err *err);

/* The lock on key's entry in dir, held by the one process computing it: another run (a sweep's
 * job beside it) that misses the same entry waits here, then reads what the first wrote, instead
 * of computing the same reference again. The lock is one byte of dir/.locks at an offset taken
 * from the key (keys that share a byte only wait for each other); the system drops it when its
 * process ends, however it ends. Returns the lock (>= 0) once held; -1 when dir cannot lock (the
 * caller computes without); -2 when stop(user) turned true while waiting (polled every 20 ms). */
int hc_refcache_lock(const char *dir, const char key[65], int (*stop)(void *), void *user);
/* Releases a lock of hc_refcache_lock (nothing for a negative one). */
void hc_refcache_unlock(int lock);

/* Writes outs[0..n) to path atomically. */
int hc_refcache_write(const char *path, const hc_nnoutput *outs, size_t n, hc_err *err);

#endif
