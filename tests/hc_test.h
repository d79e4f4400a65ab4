/* A tiny test framework. Every check has a unique dotted name (e.g. "stream-1.2") so a failing
 * line is greppable; each test program prints PASS/FAIL/SKIP lines and tests/run.sh adds them
 * up into make test's last line. A program that dies without reporting counts as failed. */
#ifndef HC_TEST_H
#define HC_TEST_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/testlib.h"

static int hc_test_failed_count;
/* Checks planned (sum of hc_plan) and reported so far (PASS, FAIL, and skipped or failed
 * groups counted by their size): what hc_skip_rest and hc_fail_rest account for. */
static unsigned long hc_test_planned, hc_test_reported;

static void hc_test_vreport(const char *tag, const char *name, const char *fmt, va_list ap)
{
    printf("%s %s", tag, name);
    if (fmt && *fmt) {
        printf(": ");
        vprintf(fmt, ap);
    }
    printf("\n");
    fflush(stdout);
}

/* Records a check; the message (printf-style) is printed only on failure. Returns cond. */
static inline int hc_check(const char *name, int cond, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int hc_check(const char *name, int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hc_test_reported++;
    if (cond) {
        hc_test_vreport("PASS", name, NULL, ap);
    } else {
        hc_test_failed_count++;
        hc_test_vreport("FAIL", name, fmt, ap);
    }
    va_end(ap);
    return cond;
}

/* The plan: how many checks this program will report (PASS, FAIL, or SKIP counted by its
 * checks). tests/run.sh fails a program whose reported checks differ from the sum of its PLAN
 * lines, so a check lost to an early return or a failed precondition cannot pass unseen. Call
 * it before the checks it covers; a data-driven part may add its share once its count is known. */
static inline void hc_plan(unsigned n)
{
    hc_test_planned += n;
    printf("PLAN %u\n", n);
    fflush(stdout);
}

static inline void hc_test_vgroup(const char *tag, const char *name, unsigned n, const char *fmt, va_list ap)
{
    char head[256];
    snprintf(head, sizeof head, "%s [%u checks]", name, n);
    hc_test_reported += n;
    hc_test_vreport(tag, head, fmt, ap);
}

/* Skips n checks at once (a group whose precondition, e.g. ../shared, is absent): one line,
 * counted as n skipped checks by tests/run.sh. */
static inline void hc_skip_n(const char *name, unsigned n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void hc_skip_n(const char *name, unsigned n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hc_test_vgroup("SKIP", name, n, fmt, ap);
    va_end(ap);
}

/* Fails n checks at once: the checks a failed precondition (not an absent ../shared: a real
 * failure, e.g. a net that no longer loads) leaves unrun. One line, counted as n failures. */
static inline void hc_fail_n(const char *name, unsigned n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void hc_fail_n(const char *name, unsigned n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hc_test_failed_count++;
    hc_test_vgroup("FAIL", name, n, fmt, ap);
    va_end(ap);
}

/* Reports a group of n checks that cannot run by the verdict st of its precondition (tests/lib's
 * convention): skipped where st > 0 (something absent: ../shared, a device), failed where st < 0
 * (a real failure), why as the message; nothing where st is 0. Returns st. */
static inline int hc_unrun_n(const char *name, unsigned n, int st, const char *why)
{
    if (st > 0)
        hc_skip_n(name, n, "%s", why);
    else if (st < 0)
        hc_fail_n(name, n, "%s", why);
    return st;
}

/* The checks planned so far and not yet reported: for a program that stops early. */
static inline unsigned hc_test_rest(void)
{
    return hc_test_planned > hc_test_reported ? (unsigned)(hc_test_planned - hc_test_reported) : 0;
}

/* For a group of n checks that may stop early: hc_test_left(mark, n) is how many of them are
 * still unreported, mark being hc_test_reported when the group began. */
static inline unsigned hc_test_left(unsigned long mark, unsigned n)
{
    unsigned long done = hc_test_reported - mark;
    return done < n ? (unsigned)(n - done) : 0;
}

/* Skips, or fails, every check planned and not yet reported, on one line (nothing when none
 * is left): a program that cannot go on (../shared absent; a net that does not load) still
 * accounts for its plan. */
static inline void hc_skip_rest(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void hc_skip_rest(const char *name, const char *fmt, ...)
{
    unsigned n = hc_test_rest();
    if (!n)
        return;
    va_list ap;
    va_start(ap, fmt);
    hc_test_vgroup("SKIP", name, n, fmt, ap);
    va_end(ap);
}

static inline void hc_fail_rest(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void hc_fail_rest(const char *name, const char *fmt, ...)
{
    unsigned n = hc_test_rest();
    if (!n)
        return;
    va_list ap;
    va_start(ap, fmt);
    hc_test_failed_count++;
    hc_test_vgroup("FAIL", name, n, fmt, ap);
    va_end(ap);
}

/* The larger of m and d where a NaN, once seen, stays: a maximum that forgot a NaN would let
 * a later finite value hide a broken output. */
static inline double hc_max_nan(double m, double d)
{
    return (m != m || d != d) ? (double)NAN : (d > m ? d : m);
}

/* The smaller of m and d, keeping a NaN the same way. */
static inline double hc_min_nan(double m, double d)
{
    return (m != m || d != d) ? (double)NAN : (d < m ? d : m);
}

static inline void hc_skip(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void hc_skip(const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hc_test_reported++;
    hc_test_vreport("SKIP", name, fmt, ap);
    va_end(ap);
}

/* A private scratch directory for this test program (removed by make clean, never shared
 * between programs). */
static inline const char *hc_tmpdir(const char *prog)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "build/tmp/%s", prog);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", buf);
    if (system(cmd) != 0)
        return NULL;
    return buf;
}

static inline int hc_test_exit(void)
{
    return hc_test_failed_count ? 1 : 0;
}

#endif
