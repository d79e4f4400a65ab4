/* emulate:PROFILE — reduced-precision storage emulated on the fp32 engine (any CPU).
 *
 * The backend keeps a private copy of the net whose weight arrays are rounded per the
 * profile (backends/profile.h), runs refs/engine.c over it with a layer hook that rounds each
 * layer's output tensor to the layer's storage format, and rounds the input rows. Rounding is
 * IEEE round-to-nearest-even with overflow to inf (refs/round.h), never clamped. A non-finite
 * on-board value in any layer's stored output (an activation, or a weight, that overflowed)
 * is reported: later layers could hide it (the engine's ReLU maps NaN to 0), so the rows it
 * hit get NaN outputs and the eval fails with HC_EBACKEND "non-finite output: first
 * non-finite value in layer L (stored as fp16; row r of the batch)", plus the first layer
 * whose weights overflowed when rounded, if any.
 *
 * Inside a layer, where the profile says (docs/EMULATION.md): fp16 accumulation (`accum: fp16`:
 * 16-product chunks summed in fp32, added to an fp16 accumulator) in convolutions, matmuls and the
 * attention GEMMs; the 3x3 convolutions' Winograd tiles stored as fp16 (`winogradTiles`:
 * F(4x4,3x3), or F(2x2,3x3) with `winograd: f2x2`; 5x5 convolutions keep fp32 tiles); pooled
 * values (`pool`), attention scores and probabilities (`attnScores`, `softmax`); the pooling sums
 * and RMSNorm reductions computed in the format (`poolSum`, `normSum`; an overflowed sum is
 * reported like a stored value). NOT rounded: RoPE tables, activation functions' insides.
 * cuda:emulate (backends/cuda.cu) follows every one of these on the GPU, bit for bit, through the
 * layer table and answers below.
 *
 * params: a built-in profile name ("fp16") or a path to a profile YAML file.
 *
 * The in-process API below is what `halfcheck taps` uses to see every layer after rounding. */
#ifndef HC_EMULATE_H
#define HC_EMULATE_H

#include "backends/backend.h"
#include "refs/engine.h"
#include "harness/base/err.h"
#include "harness/model/model.h"
#include "backends/profile.h"

typedef struct hc_emulate hc_emulate;

/* The registry's kind (instances are hc_emulate). */
extern const hc_backend_kind hc_backend_emulate;

/* net: borrowed only during the call (the instance clones it). */
hc_emulate *hc_emulate_open(const char *params, const hc_net *net, int nx, int ny, int max_batch, int threads,
                            hc_err *err);
/* The same with the profile applied only where active[i] != 0, i indexing hc_net_layers(net)'s
 * order and i == n_layers standing for the input rows (n_active == n_layers + 1); the other
 * layers stay fp32 (storage and weights). For finding which layers' precision matters. */
hc_emulate *hc_emulate_open_subset(const char *params, const hc_net *net, int nx, int ny, int max_batch,
                                   int threads, const unsigned char *active, int n_active, hc_err *err);
/* The same from a parsed profile (copied; prof stays the caller's); active may be NULL. */
hc_emulate *hc_emulate_open_profile(const hc_profile *prof, const hc_net *net, int nx, int ny, int max_batch,
                                    int threads, const unsigned char *active, int n_active, hc_err *err);
/* Another instance like base (max_batch rows, threads) that borrows its profile, rounded net,
 * layer table and prepared engine weights; base must outlive it. Taps hooks are not shared. */
hc_emulate *hc_emulate_open_sharing(const hc_emulate *base, int max_batch, int threads, hc_err *err);
int hc_emulate_eval(hc_emulate *em, int batch, const float *spatial, const float *global, const float *meta,
                    hc_raw_heads *out, hc_err *err);
/* A hook called after the rounding of each layer (fn NULL removes it); not during an eval. */
void hc_emulate_set_hook(hc_emulate *em, hc_engine_hook_fn fn, void *user);
const hc_profile *hc_emulate_profile(const hc_emulate *em);
/* The private, rounded net. */
const hc_net *hc_emulate_net(const hc_emulate *em);
/* The storage format the instance applies to the layer named `layer` (-1: not a layer). */
int hc_emulate_layer_storage(const hc_emulate *em, const char *layer);
void hc_emulate_close(hc_emulate *em);

/* For a backend that runs the same emulation on other hardware (backends/cuda.cu's
 * cuda:emulate:PROFILE): it computes with hc_emulate_net's rounded weights, rounds the input rows
 * to hc_emulate_input_fmt, rounds each layer's output where the engine's hook would (to
 * hc_emulate_layer_fmt of hc_emulate_layer_find(name)), and the pooled values, attention scores
 * and probabilities per hc_emulate_layer_mode (refs/engine.h HC_LM_* bits). */
/* The layer's index (by the net's name pointer, then by name), -1 when `name` is no layer. */
int hc_emulate_layer_find(const hc_emulate *em, const char *name);
/* The storage format (HC_FMT_*) of layer li (fp32 for -1). */
int hc_emulate_layer_fmt(const hc_emulate *em, int li);
/* The HC_LM_* bits the engine's layer_mode gets for `name` (0: none). */
int hc_emulate_layer_mode(const hc_emulate *em, const char *name);
int hc_emulate_input_fmt(const hc_emulate *em);
/* The HC_CONV_* flags (refs/engine.h) the engine's conv_mode gets for convolution c of
 * hc_emulate_net (0: none): fp16 accumulation, Winograd tiles, F(2x2,3x3); refs/engine.h
 * hc_engine_conv_prepare with them prepares the convolution as the CPU emulation does. */
int hc_emulate_conv_mode(const hc_emulate *em, const hc_conv *c);
/* What overflowed in an emulated reduction, as the engine's sum_overflow tells it. */
enum { HC_EMULATE_SUM_POOL = 0, HC_EMULATE_SUM_NORM = 1 };
/* The code of an overflowed reduction of the layer named `name` (the layer the engine reports:
 * the one reading the pooled values, or the RMSNorm): 2 * its index + what; -1 when `name` is
 * no layer. Codes order as the CPU's report does: a smaller layer index first, and at the same
 * layer the sum (reported before the layer's output is stored) before its stored value. */
int hc_emulate_sum_code(const hc_emulate *em, const char *name, int what);
/* After an eval done elsewhere: overflow[r] the index of the first layer whose stored output
 * held a non-finite on-board value in row r (-1: none). Rows hit get NaN outputs and the call
 * fails with hc_emulate_eval's message; 0 when none. */
int hc_emulate_finish(const hc_emulate *em, int batch, const int *overflow, hc_raw_heads *out, hc_err *err);
/* The same with the emulated reductions: sum_overflow[r] the smallest hc_emulate_sum_code of a
 * reduction that overflowed in row r (-1: none; NULL: no reductions). A row's first layer is
 * the smaller of the two, the sum at a tie, and the message hc_emulate_eval's for it ("its
 * pooling sum overflowed in fp16"). */
int hc_emulate_finish_sums(const hc_emulate *em, int batch, const int *overflow, const int *sum_overflow,
                           hc_raw_heads *out, hc_err *err);

#endif
