/* JSON numbers written fast and exactly as jansson writes them with JSON_REAL_PRECISION(17)
 * (printf "%.17g", ".0" appended to integral values, '+' and leading zeros dropped from the
 * exponent), so that the outputs files keep their bytes. Writing ~730 numbers per position
 * through jansson's objects and printf cost about a tenth of a whole 19x19 reference run. */
#ifndef HC_JSONNUM_H
#define HC_JSONNUM_H

enum { HC_JSON_REAL_MAX = 32 }; /* the longest text hc_json_real writes, with its NUL */

/* Writes v into buf (NUL-terminated) and returns the length. v must be finite (JSON has no
 * NaN or inf). Floats in [1e-28, 1e17) take an exact integer path (round half to even on the
 * exact value, as glibc's printf); anything else goes through snprintf. */
int hc_json_real(char *buf, double v);

#endif
