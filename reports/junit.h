/* JUnit XML (libxml2) in the shape Jenkins, GitLab and GitHub test reporters read, described
 * by reports/junit.xsd: <testsuites>, a <testsuite> per net x board (in first-seen order), a
 * <testcase> per backend x mode x tier named "backend=B mode=M tier=T" with classname
 * "NET.BOARD". A failing tier gives <failure> (metric, percentile, value, limit and worst
 * position per failing limit); an error result or a non-finite value gives <error>; a skipped
 * result gives <skipped message=reason>. Every figure of the stats and the closest margin are
 * the testcase's <properties>. Written atomically. */
#ifndef HC_JUNIT_H
#define HC_JUNIT_H

#include "reports/results.h"

int hc_junit_write(const hc_results *rs, const char *path, hc_err *err);

#endif
