/* The cuda backend's instance (backends/cuda.h): open from typed options (hc_cuda_open_with),
 * eval, close (the kind, hc_backend_cuda, and its parser are in backends/cuda_opts.c).
 * Modes cuda:fp32, cuda:fp16, cuda:ref32 and cuda:emulate:PROFILE run the one forward pass of
 * backends/cuda_graph.cu (whose comment says what each mode computes) on device 0; eval copies the
 * input rows to the device, runs the pass and copies the raw heads back in one wait. Errors: the
 * first failed CUDA or cuBLAS call of an open or eval is kept with the call and the layer named and
 * eval returns HC_EBACKEND; kernel faults are asynchronous, so they surface at the next
 * synchronizing call, named "(asynchronous)"; HC_CUDA_SYNC=1 names the layer exactly. */
#include "backends/cuda_impl.h"

extern "C" {
#include "refs/round.h"
}

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

using namespace hccuda;

namespace {

void inst_free(inst *I)
{
    if (!I)
        return;
    if (!I->borrowed) {
        for (int i = 0; i < I->n_w; i++)
            cudaFree(I->w[i].dev);
        free(I->w);
        for (int i = 0; i < I->n_ropes; i++) {
            cudaFree(I->ropes[i].cos_t);
            cudaFree(I->ropes[i].sin_t);
        }
        free(I->ropes);
        for (int i = 0; i < I->n_wp; i++)
            hc_kconv_free(&I->wp[i].k);
        free(I->wp);
        hc_emulate_close(I->emu);
    }
    free(I->tap_host);
    cudaFree(I->d_over);
    free(I->h_over);
    cudaFree(I->d_sum_over);
    free(I->h_sum_over);
    free(I->in_host);
    cudaFree(I->arena);
    cudaFree(I->d_spatial);
    cudaFree(I->d_global);
    cudaFree(I->d_meta);
    cudaFree(I->d_policy);
    cudaFree(I->d_pass);
    cudaFree(I->d_value);
    cudaFree(I->d_score);
    cudaFree(I->d_own);
    cudaFreeHost(I->h_stage);
    hc_cublas_close(&I->blas);
    free(I);
}

/* emulate: the Winograd weights of the 3x3 and 5x5 convolutions whose mode is not 0 (fp16 tiles,
 * F(2x2,3x3), fp16 accumulation: what conv_ref asks wino_prep for), prepared side by side on the
 * host's processors before the dry run uploads them: one by one they took most of a large net's
 * open. Those of mode 0, every one of ref32's, are computed on the device (wino_dev). */
struct wino_list {
    const hc_conv **cs;
    int *modes;
    const hc_emulate *emu;
    int n, cap;
};

int want_wino(const hc_conv *c, void *user)
{
    wino_list *L = (wino_list *)user;
    if (!((c->ky == 3 && c->kx == 3) || (c->ky == 5 && c->kx == 5)))
        return 0;
    int mode = hc_emulate_conv_mode(L->emu, c);
    if (mode == 0)
        return 0;
    if (L->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 64;
        const hc_conv **g = (const hc_conv **)realloc(L->cs, (size_t)cap * sizeof *g);
        if (g)
            L->cs = g;
        int *m = g ? (int *)realloc(L->modes, (size_t)cap * sizeof *m) : NULL;
        if (m)
            L->modes = m;
        if (!g || !m)
            return -1;
        L->cap = cap;
    }
    L->modes[L->n] = mode;
    L->cs[L->n++] = c;
    return 0;
}

void prepare_winograd(inst *I)
{
    wino_list L = {};
    L.emu = I->emu;
    int n = 0;
    hc_kconv **ks = NULL;
    if (hc_engine_each_conv(I->net, want_wino, &L) == 0 && (n = L.n) > 0) {
        I->wp = (wprep *)calloc((size_t)n, sizeof *I->wp);
        ks = (hc_kconv **)calloc((size_t)n, sizeof *ks);
    }
    if (L.n > 0 && (!I->wp || !ks)) {
        I->bad = 1;
        hc_err_set(I->err, HC_ENOMEM, "cuda: Winograd table");
    } else if (n > 0) {
        for (int i = 0; i < n; i++) {
            I->wp[i].src = L.cs[i];
            ks[i] = &I->wp[i].k;
        }
        if (hc_engine_convs_prepare(ks, L.cs, L.modes, n, 1, 0, I->err))
            I->bad = 1;
        else
            I->n_wp = n;
    }
    free(L.cs);
    free(L.modes);
    free(ks);
}

/* An instance's own device memory: the input and output rows, the pinned staging buffer, the
 * emulation's overflow rows, and the activation arena sized by a dry run of the pass at
 * max_batch (which, for an instance that is not a lane, uploads and prepares the weights). */
void alloc_buffers(inst *I)
{
    const hc_net *net = I->net;
    int max_batch = I->max_batch, nx = I->nx, ny = I->ny;
    size_t hw = (size_t)I->hw, B = (size_t)max_batch;
    int pc = net->num_policy_c, sc = net->num_score_value_c;
    CK(I, cudaMalloc(&I->d_spatial, B * net->num_input_c * hw * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_global, B * (net->num_input_global_c + 1) * sizeof(float)), "open");
    if (net->trunk.has_meta_encoder)
        CK(I, cudaMalloc(&I->d_meta, B * net->num_input_meta_c * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_policy, B * pc * hw * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_pass, B * pc * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_value, B * 3 * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_score, B * sc * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_own, B * hw * sizeof(float)), "open");
    CK(I, cudaMallocHost(&I->h_stage, B * ((size_t)pc * hw + pc + 3 + sc + hw + 2) * sizeof(float)), "open");
    if (I->emu) {
        CK(I, cudaMalloc(&I->d_over, B * sizeof(int)), "open");
        CK(I, cudaMalloc(&I->d_sum_over, B * sizeof(int)), "open");
        I->h_over = (int *)malloc(B * sizeof(int));
        I->h_sum_over = (int *)malloc(B * sizeof(int));
        I->in_host_n = B * ((size_t)net->num_input_c * hw + net->num_input_global_c + net->num_input_meta_c);
        I->in_host = (float *)malloc(I->in_host_n * sizeof(float) + 4);
        if (!I->h_over || !I->h_sum_over || !I->in_host) {
            I->bad = 1;
            hc_err_set(I->err, HC_ENOMEM, "cuda: emulate buffers");
        }
    }
    if (!I->bad && I->emu && !I->borrowed)
        prepare_winograd(I);
    if (!I->bad) {
        fwd F = {};
        F.I = I;
        F.dry = 1;
        F.B = max_batch;
        F.nx = nx;
        F.ny = ny;
        F.hw = I->hw;
        F.S = B * hw;
        forward(&F);
        I->arena_floats = F.peak;
        if (!I->bad)
            CK(I, cudaMalloc(&I->arena, (F.peak + 64) * sizeof(float)), "open (activation arena)");
    }
}

/* The end of an open: the uploads done before another thread's stream (a lane's) reads them;
 * the instance, or NULL (freed) after a failure. */
inst *open_done(inst *I)
{
    if (!I->bad)
        CK(I, cudaDeviceSynchronize(), "open");
    if (I->bad) {
        inst_free(I);
        return NULL;
    }
    I->err = NULL;
    return I;
}

/* Options set by a program rather than parsed: the knobs are fp16's, and the faults a mode has
 * (hc_cuda_faults); others are refused rather than ignored. */
int opts_check(const hc_cuda_opts *o, hc_err *err)
{
    const hc_cuda_faults *fl = &o->faults;
    if ((o->pool32 || o->mid32 || o->probs32) && o->mode != HC_CUDA_FP16)
        return hc_err_set(err, HC_EUSAGE, "cuda: the knobs pool32, mid32 and probs32 are fp16's");
    if ((fl->noround[0] || fl->acc16_chunk8 || fl->sums || fl->tiles) && o->mode != HC_CUDA_EMULATE)
        return hc_err_set(err, HC_EUSAGE, "cuda: the planted faults noround, acc16_chunk8, sums and tiles are emulate's");
    if (fl->split_k && o->mode != HC_CUDA_REF32 && o->mode != HC_CUDA_EMULATE)
        return hc_err_set(err, HC_EUSAGE, "cuda: the planted fault split_k is ref32's and emulate's");
    return 0;
}

} // namespace

void *hc_cuda_open_with(const hc_cuda_opts *o, const hc_backend_open_opts *oo, hc_err *err)
{
    const hc_net *net = oo->net;
    int nx = oo->nx, ny = oo->ny, max_batch = oo->max_batch;
    if (o->mode < HC_CUDA_FP32 || o->mode > HC_CUDA_EMULATE) {
        hc_err_set(err, HC_EINTERNAL, "cuda: options not parsed (mode %d)", o->mode);
        return NULL;
    }
    if ((oo->profile || oo->active) && o->mode != HC_CUDA_EMULATE) {
        hc_err_set(err, HC_EUSAGE, "cuda: only cuda:emulate takes a profile or a layer subset");
        return NULL;
    }
    if (o->mode == HC_CUDA_EMULATE && !oo->profile && !o->profile[0]) {
        hc_err_set(err, HC_ECONFIG, "cuda: emulate needs a profile: cuda:emulate:NAME or cuda:emulate:PATH.yaml");
        return NULL;
    }
    if (opts_check(o, err))
        return NULL;
    if (!net) {
        hc_err_set(err, HC_ECONFIG, "cuda needs a net");
        return NULL;
    }
    if (max_batch < 1 || nx < 1 || ny < 1 || (size_t)nx * ny > 100000) {
        hc_err_set(err, HC_EBACKEND, "cuda: bad arguments (batch %d, %dx%d)", max_batch, nx, ny);
        return NULL;
    }
    /* The engine's checks of what the graph may hold (odd kernels, no dilation, SwiGLU ...),
     * exactly as ref32 makes them, without preparing its weights. */
    if (hc_engine_check(net, err))
        return NULL;
    /* emulate: the CPU emulation's rounded net and layer table (one row, one thread: its own
     * engine never runs here); every rounding it asks is one this mode follows */
    hc_emulate *emu = NULL;
    if (o->mode == HC_CUDA_EMULATE) {
        emu = oo->profile ? hc_emulate_open_profile(oo->profile, net, nx, ny, 1, 1, oo->active, oo->n_active, err)
                          : hc_emulate_open_subset(o->profile, net, nx, ny, 1, 1, oo->active, oo->n_active, err);
        if (!emu)
            return NULL;
        net = hc_emulate_net(emu);
    }

    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        hc_emulate_close(emu);
        hc_err_set(err, HC_EBACKEND, "cuda: no CUDA device (cudaGetDeviceCount: %s)",
                   e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return NULL;
    }
    inst *I = (inst *)calloc(1, sizeof *I);
    if (!I) {
        hc_emulate_close(emu);
        hc_err_set(err, HC_ENOMEM, "cuda: instance");
        return NULL;
    }
    I->emu = emu;
    I->faults = o->faults;
    I->acc16_chunk = o->faults.acc16_chunk8 ? 8 : (int)HC_ACC16_CHUNK;
    I->err = err;
    I->net = net;
    I->fp16 = o->mode == HC_CUDA_FP16;
    I->ref = o->mode == HC_CUDA_REF32 || o->mode == HC_CUDA_EMULATE;
    I->pool32 = o->pool32;
    I->mid32 = o->mid32;
    I->probs32 = o->probs32;
    I->nx = nx;
    I->ny = ny;
    I->hw = nx * ny;
    I->max_batch = max_batch;
    const char *sy = getenv("HC_CUDA_SYNC");
    I->sync_layers = sy && *sy && strcmp(sy, "0") != 0;
    /* A waiting thread sleeps instead of spinning: on a host running a sweep, many processes
     * wait on one GPU and their spinning would take the cores the CPU cases need. Only possible
     * before the process's context exists (a later instance keeps what the first set). */
    if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess)
        (void)cudaGetLastError();
    CK(I, cudaSetDevice(0), "open");
    if (!I->bad && !I->ref && hc_cublas_open(&I->blas, err))
        I->bad = 1;
    if (!I->bad)
        collect_ropes(I, net->trunk.blocks, net->trunk.num_blocks);
    alloc_buffers(I);
    return open_done(I);
}

void hc_cuda_warm(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
        /* the flag an open sets, set first: it can only be set before the context exists */
        if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess)
            (void)cudaGetLastError();
        if (cudaSetDevice(0) == cudaSuccess)
            cudaFree(0); /* creates the context */
    }
    (void)cudaGetLastError();
}

void *hc_cuda_open_sharing(void *vbase, int max_batch, int threads, hc_err *err)
{
    (void)threads; /* a lane is one thread's stream */
    const inst *base = (const inst *)vbase;
    if (max_batch < 1) {
        hc_err_set(err, HC_EBACKEND, "cuda: bad batch %d", max_batch);
        return NULL;
    }
    inst *I = (inst *)calloc(1, sizeof *I);
    if (!I) {
        hc_err_set(err, HC_ENOMEM, "cuda: instance");
        return NULL;
    }
    /* the base's net, mode, knobs and faults; its weights and tables borrowed */
    I->net = base->net;
    I->fp16 = base->fp16;
    I->ref = base->ref;
    I->faults = base->faults;
    I->acc16_chunk = base->acc16_chunk;
    I->pool32 = base->pool32;
    I->mid32 = base->mid32;
    I->probs32 = base->probs32;
    I->sync_layers = base->sync_layers;
    I->nx = base->nx;
    I->ny = base->ny;
    I->hw = base->hw;
    I->max_batch = max_batch;
    I->emu = base->emu;
    I->w = base->w;
    I->n_w = I->cap_w = base->n_w;
    I->wp = base->wp;
    I->n_wp = base->n_wp;
    I->ropes = base->ropes;
    I->n_ropes = base->n_ropes;
    I->borrowed = 1;
    I->err = err;
    CK(I, cudaSetDevice(0), "open");
    /* its cuBLAS handle (one is not to be used by two threads at once) is created by its first
     * eval, on its own thread: the lanes' handles side by side, not one after another here */
    if (!I->bad)
        alloc_buffers(I);
    return open_done(I);
}

int hc_cuda_eval(void *vi, int batch, const float *spatial, const float *global, const float *meta,
              hc_raw_heads *out, hc_err *err)
{
    inst *I = (inst *)vi;
    const hc_net *net = I->net;
    if (batch < 1 || batch > I->max_batch)
        return hc_err_set(err, HC_EBACKEND, "cuda: batch %d outside 1..%d", batch, I->max_batch);
    if (!spatial || !global || !out)
        return hc_err_set(err, HC_EBACKEND, "cuda: missing input or output");
    if (net->trunk.has_meta_encoder != (meta != NULL))
        return hc_err_set(err, HC_EBACKEND, "cuda: %s %s metadata input rows",
                          net->name ? net->name : "net",
                          net->trunk.has_meta_encoder ? "needs" : "takes no");
    if (out->nx != I->nx || out->ny != I->ny || out->policy_channels != net->num_policy_c ||
        out->score_channels != net->num_score_value_c || out->max_batch < batch)
        return hc_err_set(err, HC_EBACKEND, "cuda: output buffer does not match the net / board");
    if (!I->ref && !I->blas.handle_ok && hc_cublas_open(&I->blas, err))
        return -1;
    I->bad = 0;
    I->err = err;
    I->taps = out->taps;
    if (I->taps)
        hc_tapset_reset(I->taps);
    size_t hw = (size_t)I->hw, B = (size_t)batch;
    int pc = net->num_policy_c, sc = net->num_score_value_c;
    if (I->emu) {
        /* the input rows rounded as backends/emulate.c rounds them (the mask is channel 0 of the
         * rounded rows there too) */
        int fmt = hc_emulate_input_fmt(I->emu);
        size_t ns = B * net->num_input_c * hw, ng = B * net->num_input_global_c,
               nm = meta ? B * net->num_input_meta_c : 0;
        float *h = I->in_host;
        memcpy(h, spatial, ns * sizeof(float));
        memcpy(h + ns, global, ng * sizeof(float));
        if (nm)
            memcpy(h + ns + ng, meta, nm * sizeof(float));
        if (fmt == HC_FMT_FP16)
            hc_round_fp16_array(h, ns + ng + nm);
        else if (fmt == HC_FMT_BF16)
            hc_round_bf16_array(h, ns + ng + nm);
        spatial = h;
        global = h + ns;
        meta = nm ? h + ns + ng : meta;
        CK(I, cudaMemset(I->d_over, 0x7f, B * sizeof(int)), "input");
        CK(I, cudaMemset(I->d_sum_over, 0x7f, B * sizeof(int)), "input");
    }
    CK(I, cudaMemcpy(I->d_spatial, spatial, B * net->num_input_c * hw * sizeof(float),
                     cudaMemcpyHostToDevice),
       "input");
    if (net->num_input_global_c > 0)
        CK(I, cudaMemcpy(I->d_global, global, B * net->num_input_global_c * sizeof(float),
                         cudaMemcpyHostToDevice),
           "input");
    if (meta)
        CK(I, cudaMemcpy(I->d_meta, meta, B * net->num_input_meta_c * sizeof(float),
                         cudaMemcpyHostToDevice),
           "input");
    if (!I->bad) {
        fwd F = {};
        F.I = I;
        F.B = batch;
        F.nx = I->nx;
        F.ny = I->ny;
        F.hw = I->hw;
        F.S = B * hw;
        forward(&F);
    }
    /* The outputs queued behind the pass into one pinned staging buffer, then one wait: a
     * one-position pass is short, and every synchronous copy would be another wait. */
    size_t o_pass = B * pc * hw, o_val = o_pass + B * pc, o_sc = o_val + B * 3, o_own = o_sc + B * sc,
           o_over = o_own + B * hw;
    float *st = I->h_stage;
    if (!I->bad) {
        cudaStream_t cs = cudaStreamPerThread;
        CK(I, cudaMemcpyAsync(st, I->d_policy, o_pass * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        CK(I, cudaMemcpyAsync(st + o_pass, I->d_pass, B * pc * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        CK(I, cudaMemcpyAsync(st + o_val, I->d_value, B * 3 * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        CK(I, cudaMemcpyAsync(st + o_sc, I->d_score, B * sc * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        CK(I, cudaMemcpyAsync(st + o_own, I->d_own, B * hw * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        if (I->emu) {
            CK(I, cudaMemcpyAsync(st + o_over, I->d_over, B * sizeof(int), cudaMemcpyDeviceToHost, cs), "output");
            CK(I, cudaMemcpyAsync(st + o_over + B, I->d_sum_over, B * sizeof(int), cudaMemcpyDeviceToHost, cs),
               "output");
        }
        cudaError_t e = cudaStreamSynchronize(cs);
        if (e != cudaSuccess)
            fail_cuda(I, e, "cudaStreamSynchronize", "forward pass (asynchronous)");
    }
    if (!I->bad) {
        memcpy(out->policy, st, o_pass * sizeof(float));
        memcpy(out->policy_pass, st + o_pass, B * pc * sizeof(float));
        memcpy(out->value, st + o_val, B * 3 * sizeof(float));
        memcpy(out->score, st + o_sc, B * sc * sizeof(float));
        memcpy(out->ownership, st + o_own, B * hw * sizeof(float));
    }
    if (I->emu && !I->bad) {
        memcpy(I->h_over, st + o_over, B * sizeof(int));
        memcpy(I->h_sum_over, st + o_over + B, B * sizeof(int));
        for (size_t r = 0; r < B; r++) {
            if (I->h_over[r] == 0x7f7f7f7f)
                I->h_over[r] = -1;
            if (I->h_sum_over[r] == 0x7f7f7f7f)
                I->h_sum_over[r] = -1;
        }
    }
    I->err = NULL;
    I->taps = NULL;
    if (I->bad)
        return -1;
    out->batch = batch;
    if (I->emu && hc_emulate_finish_sums(I->emu, batch, I->h_over, I->h_sum_over, out, err))
        return -1;
    return 0;
}

int hc_cuda_taps(void *vi)
{
    (void)vi;
    return 1;
}

void hc_cuda_close(void *vi)
{
    inst_free((inst *)vi);
}
