/* Test-only backend kinds (fault:, tests/lib/fault.c) and the test registry that holds them in
 * front of the user registry: what tests/helper_halfcheck and the library tests open fault: specs
 * through. `halfcheck backends` never lists them. */
#ifndef HC_TESTKINDS_H
#define HC_TESTKINDS_H

#include "backends/backend.h"

extern const hc_backend_kind hc_test_kind_fault;

/* The test kinds, then (next) the user registry. */
const hc_backend_registry *hc_test_registry(void);

#endif
