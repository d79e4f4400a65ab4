/* Arrays in the files other ML tools write and read: numpy's .npy (npy.c) and safetensors
 * (safetensors.c), each format's reader beside its writer. What halfcheck exchanges through them is
 * per-layer tensors (docs/TAPS.md: golden layers out with `taps --save`, a tool's taps in through
 * the `tensors:` backend), so only floating-point element types are read: f32 and f16 (.npy,
 * little-endian, C order), F32, F16 and BF16 (safetensors). Values are kept as floats converted
 * exactly from the stored type, which is kept too (it says what precision a tool stored).
 *
 * Refusals name the file, the tensor and the byte offset: "FILE: tensor NAME: offset N: ...".
 * A file that ends early, a header whose shape needs another number of data bytes than the file
 * holds, another element type, a Fortran-order array and a name given twice are each refused
 * with their own message. The parsers take memory (fuzzed: tests/fuzz/fuzz_npy.c,
 * fuzz_safetensors.c); the loaders read a file whole, at most HC_TENSORFILE_MAX_BYTES. */
#ifndef HC_TENSORFILE_H
#define HC_TENSORFILE_H

#include <stddef.h>
#include <stdint.h>

#include "harness/base/err.h"
#include "harness/base/stream.h"

enum hc_dtype { HC_DT_F32 = 0, HC_DT_F16 = 1, HC_DT_BF16 = 2 };

#define HC_TENSOR_MAX_DIMS 8
/* The largest file the loaders read (4 GiB), and the largest tensor (2^31 elements). */
#define HC_TENSORFILE_MAX_BYTES ((size_t)1 << 32)
#define HC_TENSOR_MAX_ELEMS ((uint64_t)1 << 31)

typedef struct hc_tensor {
    char *name;  /* malloc'd */
    int dtype;   /* enum hc_dtype: the stored element type */
    int ndim;    /* 0 (a scalar) .. HC_TENSOR_MAX_DIMS */
    int64_t shape[HC_TENSOR_MAX_DIMS];
    size_t count; /* elements: the product of shape */
    float *data;  /* [count] in C (row-major) order, malloc'd */
} hc_tensor;

/* Frees name and data and zeroes t. */
void hc_tensor_clear(hc_tensor *t);
size_t hc_dtype_size(int dtype);
/* "F32", "F16", "BF16" (safetensors' names). */
const char *hc_dtype_str(int dtype);
/* The shape as "[2, 96, 19, 19]" into buf. */
const char *hc_tensor_shape_str(const hc_tensor *t, char *buf, size_t len);
/* IEEE binary16 / bfloat16 bits <-> float: exact one way, round to nearest even the other. */
float hc_f16_to_float(uint16_t h);
float hc_bf16_to_float(uint16_t h);
uint16_t hc_float_to_f16(float x);
uint16_t hc_float_to_bf16(float x);

/* The refusal every tensor reader gives: "FILE: tensor NAME: offset N: WHAT" ("FILE: offset N:
 * WHAT" where name is NULL), HC_EFORMAT. Returns -1. */
int hc_tensorfile_fail(hc_err *err, const char *file, const char *name, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Writes t's elements to s as its dtype stores them, little-endian, in C order (the data section of
 * both formats). 0, or -1 with err. */
int hc_tensor_write_data(hc_ostream *s, const hc_tensor *t, hc_err *err);

/* ---- .npy (format versions 1.0, 2.0, 3.0) ---- */

/* Parses one .npy image of len bytes; file and name say where in messages. out gets a copy of
 * name. 0, or -1 with err (HC_EFORMAT; out left empty). */
int hc_npy_parse(const void *buf, size_t len, const char *file, const char *name, hc_tensor *out, hc_err *err);
/* Reads path (plain or gzip'd) and parses it. */
int hc_npy_load(const char *path, const char *name, hc_tensor *out, hc_err *err);
/* Writes t as a version 1.0 .npy in t->dtype (F32 or F16; values are rounded to nearest even
 * when not representable), atomically (temporary file, rename). BF16 is refused: numpy has no
 * such type. */
int hc_npy_write(const char *path, const hc_tensor *t, hc_err *err);

/* ---- safetensors: u64 header length, a JSON header, the data ---- */

typedef struct hc_tensorset {
    hc_tensor *t; /* in the order of their data offsets */
    int n;
    char **meta;  /* the header's "__metadata__": key, value, key, value, ... (2 * n_meta strings) */
    int n_meta;
} hc_tensorset;

int hc_safetensors_parse(const void *buf, size_t len, const char *file, hc_tensorset *out, hc_err *err);
int hc_safetensors_load(const char *path, hc_tensorset *out, hc_err *err);
/* Writes ts[0..n) (each in its dtype) and the string pairs meta[0..2*n_meta) atomically. */
int hc_safetensors_write(const char *path, const hc_tensor *ts, int n, const char *const *meta, int n_meta,
                         hc_err *err);
/* The tensor called name, or NULL. */
const hc_tensor *hc_tensorset_find(const hc_tensorset *s, const char *name);
/* The metadata value of key, or NULL. */
const char *hc_tensorset_meta(const hc_tensorset *s, const char *key);
void hc_tensorset_free(hc_tensorset *s);

#endif
