/* pp_cuda_gpt.cuh - the GPT of ref/gpt_ref.h on one GPU for pp_cuda.cu - MIT licence (see end of file)
   Forward (F), input gradient (B) and weight gradient (W) kept apart.

   Private to pp_cuda: pp_cuda.cu includes it once (after <cuda_runtime.h>
   and <cuda_bf16.h>); every function is static and every name starts with
   pp__, so nothing leaks into the engine that compiles it. It may be pasted
   into pp_cuda.cu; it does not rely on being its own translation unit.
   The contract with the executor: the names in the "the contract"
   section at the bottom of this file, listed in docs/cuda.md ("The kernel
   contract"); emu/mock/pp_cuda_gpt_ref.cuh implements the same names.

   Model and split: exactly ref/gpt_ref.h, op for op. gpt_stage_forward,
   gpt_stage_backward_input and gpt_stage_backward_weight become
   pp__gpt_forward, pp__gpt_backward_input and pp__gpt_backward_weight; the
   parameters are one flat array in gpt_param_sizes order.

   Precision: fp32 master weights and gradients (the executor owns them);
   the kernels read a bf16 copy of the weights; activations are bf16 except
   layernorm mean/rstd, per-token losses and the softmax log-sum-exp (fp32).
   Every reduction (dot products, layernorm statistics, softmax, column sums)
   runs in fp32. Matmuls: bf16 in, fp32 accumulate, on tensor cores:
   128x128x32 block tiles, 8 warps of 64x32, 3-stage cp.async pipeline,
   mma.sync m16n8k16 fed by ldmatrix (PP__MM_ENGINE=1, default) or WMMA
   16x16x16 (PP__MM_ENGINE=0, kept as a cross-check); any M, N, K (tails
   zero-padded). Attention, layernorm, softmax, GELU, embedding: CUDA cores,
   one warp per row (one block per row for the vocabulary-wide softmax);
   attention can instead run its per-head products on the tensor cores
   (PP__ATT_ENGINE=1, llm.c's batched-matmul layout; opt-in until measured).
   Weight gradients are deterministic: no float atomics, every sum runs in a
   fixed order (column-parallel partial sums over row chunks, then a fixed
   order reduction; split-K partials reduced the same way).

   Slot (one stage, one microbatch; every region 256-byte aligned):
     [input N*C][dinput N*C][block 0]...[block nl-1][head, last stage only]
     block: ln1, ln1_mean, ln1_rstd, qkv, att (B,NH,T,T), atty, res2, ln2,
            ln2_mean, ln2_rstd, fch, fch_gelu, res3          (F)
            dres3, dfch, dln2, dres2, dqkv, dln1             (B, for W)
     head:  lnf, lnf_mean, lnf_rstd, logits (B overwrites them with dlogits),
            losses, lse, dlnf
   The stage output is the last block's res3; the gradient for it (doutput)
   IS the last block's dres3: a RECV writes there and B reads it in place.
   A stage without layers and without head (more stages than layers) has
   output = input and doutput = dinput. B's scratch (dfch_gelu, datty, the
   attention row sums) and W's partial sums live in the workspace (with
   PP__ATT_ENGINE=1 also attention's T x T buffers, which F uses too).

   Tolerances (tests/test_cuda_kernels.cu, against gpt_ref.h in float):
   |gpu - ref| <= atol + rtol |ref| per tensor, atol a stated fraction of
   the tensor's largest |ref|; see the test for the numbers and why.

   F never writes dinput or any gradient region, so F can be re-run in place
   over a slot whose input and doutput are already there (recomputation).

   Limits: C % NH == 0; attention keeps one (T + head size) float row per
   warp in shared memory (T up to about 12000); N = B*T, V, 4C below 2^31.
   Compile-time knobs: PP__MM_ENGINE, PP__MM_BK, PP__MM_STAGES, PP__ATT_ENGINE. */
#ifndef PP_CUDA_GPT_CUH
#define PP_CUDA_GPT_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <mma.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>

typedef __nv_bfloat16 pp__bf16;

#define PP__GPT_CHECK_LAUNCH()                     \
    do {                                           \
        cudaError_t pp__e_ = cudaGetLastError();   \
        if (pp__e_ != cudaSuccess) return pp__e_;  \
    } while (0)
#define PP__GPT_TRY(call)                          \
    do {                                           \
        cudaError_t pp__e_ = (call);               \
        if (pp__e_ != cudaSuccess) return pp__e_;  \
    } while (0)

static inline unsigned pp__gpt_grid(size_t n, unsigned per) {
    size_t b = (n + per - 1) / per;
    return (unsigned)(b < 1 ? 1 : (b > (1u << 30) ? (1u << 30) : b));
}

static inline int pp__gpt_aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }
static inline size_t pp__gpt_round256(size_t b) { return (b + 255) / 256 * 256; }

/* ---- reductions ---- */

static __device__ __forceinline__ float pp__warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
static __device__ __forceinline__ float pp__warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
/* whole-block sum or max (blockDim.x a multiple of 32, at most 1024); every thread gets the result */
static __device__ __forceinline__ float pp__block_reduce(float v, int is_max) {
    __shared__ float part[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = is_max ? pp__warp_max(v) : pp__warp_sum(v);
    __syncthreads(); /* part[] may still be read by a previous call */
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = lane < nw ? part[lane] : (is_max ? -INFINITY : 0.0f);
    return is_max ? pp__warp_max(v) : pp__warp_sum(v);
}

/* ---- elementwise: conversion, AdamW, GELU ---- */

static __global__ void pp__to_bf16(pp__bf16 *dst, const float *src, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2bfloat16(src[i]);
}

/* AdamW as llm.c: decoupled weight decay, bias corrections c1 = 1 - beta1^t, c2 = 1 - beta2^t */
static __global__ void pp__adamw(float *p, const float *g, float *m, float *v, size_t n, float lr, float b1, float b2,
                                 float eps, float wd, float c1, float c2) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float gi = g[i], mi = b1 * m[i] + (1.0f - b1) * gi, vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * p[i]);
    }
}

#define PP__GELU_S 0.7978845608028654f /* sqrt(2/pi), GPT-2's tanh approximation (gpt_ref.h) */
static __global__ void pp__gelu_fwd(pp__bf16 *out, const pp__bf16 *inp, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float x = __bfloat162float(inp[i]);
        out[i] = __float2bfloat16(0.5f * x * (1.0f + tanhf(PP__GELU_S * (x + 0.044715f * x * x * x))));
    }
}
/* dinp = gelu'(inp) * dout (overwrites: dinp is produced here only) */
static __global__ void pp__gelu_bwd(pp__bf16 *dinp, const pp__bf16 *inp, const pp__bf16 *dout, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float x = __bfloat162float(inp[i]), th = tanhf(PP__GELU_S * (x + 0.044715f * x * x * x));
        float du = PP__GELU_S * (1.0f + 3.0f * 0.044715f * x * x);
        dinp[i] = __float2bfloat16((0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du) * __bfloat162float(dout[i]));
    }
}

/* ---- embedding ---- */

/* out[n,:] = wte[tok[n],:] + wpe[n % T,:]; a token outside [0,V) gets wpe only */
static __global__ void pp__encoder_fwd(pp__bf16 *out, const int *tok, const pp__bf16 *wte, const pp__bf16 *wpe, int N,
                                       int T, int C, int V) {
    size_t total = (size_t)N * C;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        size_t n = i / C, c = i % C;
        int v = tok[n];
        float x = __bfloat162float(wpe[(n % T) * C + c]);
        if (v >= 0 && v < V) x += __bfloat162float(wte[(size_t)v * C + c]);
        out[i] = __float2bfloat16(x);
    }
}

/* dwte[tok[n],:] += dout[n,:]. Thread (c, p) owns column c of the vocab rows
   in range p and walks n in order: every element has one writer and a fixed
   summation order (deterministic), and C * P threads run at once. */
static __global__ void pp__encoder_dwte(float *dwte, const pp__bf16 *dout, const int *tok, int N, int C, int V,
                                        int P) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)C * P) return;
    int c = (int)(idx % C), p = (int)(idx / C);
    int lo = (int)((long long)V * p / P), hi = (int)((long long)V * (p + 1) / P);
    for (int n = 0; n < N; n++) {
        int v = tok[n];
        if (v >= lo && v < hi) dwte[(size_t)v * C + c] += __bfloat162float(dout[(size_t)n * C + c]);
    }
}

/* dwpe[t,c] += sum over the batch of dout[b*T+t, c], b in order */
static __global__ void pp__encoder_dwpe(float *dwpe, const pp__bf16 *dout, int B, int T, int C) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x, TC = (size_t)T * C;
    if (idx >= TC) return;
    float s = 0;
    for (int b = 0; b < B; b++) s += __bfloat162float(dout[b * TC + idx]);
    dwpe[idx] += s;
}

/* ---- layernorm (one warp per row) ---- */

static __global__ void pp__layernorm_fwd(pp__bf16 *out, float *mean, float *rstd, const pp__bf16 *inp,
                                         const pp__bf16 *w, const pp__bf16 *b, int N, int C) {
    int lane = threadIdx.x & 31, row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= N) return;
    const pp__bf16 *x = inp + (size_t)row * C;
    pp__bf16 *o = out + (size_t)row * C;
    float m = 0, v = 0, s;
    for (int i = lane; i < C; i += 32) m += __bfloat162float(x[i]);
    m = pp__warp_sum(m) / C;
    for (int i = lane; i < C; i += 32) {
        float d = __bfloat162float(x[i]) - m;
        v += d * d;
    }
    v = pp__warp_sum(v) / C;
    s = rsqrtf(v + 1e-5f);
    for (int i = lane; i < C; i += 32)
        o[i] = __float2bfloat16((__bfloat162float(x[i]) - m) * s * __bfloat162float(w[i]) + __bfloat162float(b[i]));
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
}

/* dinp = (dres ? dres : 0) + d(out)/d(inp)^T dout. gpt_ref.h accumulates
   into a buffer that held dres (or zeros); here it is one write, so B needs
   no memsets. dinp may alias dres. */
static __global__ void pp__layernorm_bwd_input(pp__bf16 *dinp, const pp__bf16 *dres, const pp__bf16 *dout,
                                               const pp__bf16 *inp, const float *mean, const float *rstd,
                                               const pp__bf16 *w, int N, int C) {
    int lane = threadIdx.x & 31, row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= N) return;
    const pp__bf16 *x = inp + (size_t)row * C, *d = dout + (size_t)row * C;
    float m = mean[row], s = rstd[row], dm = 0, dnm = 0;
    for (int i = lane; i < C; i += 32) {
        float norm = (__bfloat162float(x[i]) - m) * s, dn = __bfloat162float(w[i]) * __bfloat162float(d[i]);
        dm += dn;
        dnm += dn * norm;
    }
    dm = pp__warp_sum(dm) / C;
    dnm = pp__warp_sum(dnm) / C;
    for (int i = lane; i < C; i += 32) {
        size_t k = (size_t)row * C + i;
        float norm = (__bfloat162float(x[i]) - m) * s, dn = __bfloat162float(w[i]) * __bfloat162float(d[i]);
        float r = dres ? __bfloat162float(dres[k]) : 0.0f;
        dinp[k] = __float2bfloat16(r + (dn - dm - norm * dnm) * s);
    }
}

/* ---- deterministic column sums: partial sums over chunks of rows, then a
   fixed-order sum of the partials ---- */

#define PP__ROWS_PER_CHUNK 128
static inline int pp__gpt_row_chunks(int N) { return (N + PP__ROWS_PER_CHUNK - 1) / PP__ROWS_PER_CHUNK; }

/* part[chunk, c] = sum of a[n, c] over the chunk's rows (dbias) */
static __global__ void pp__colsum_partial(float *part, const pp__bf16 *a, int N, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x, chunk = blockIdx.y;
    if (c >= C) return;
    int n0 = chunk * PP__ROWS_PER_CHUNK, n1 = min(N, n0 + PP__ROWS_PER_CHUNK);
    float s = 0;
    for (int n = n0; n < n1; n++) s += __bfloat162float(a[(size_t)n * C + c]);
    part[(size_t)chunk * C + c] = s;
}

/* layernorm W: pdw[chunk, c] = sum norm * dout, pdb[chunk, c] = sum dout */
static __global__ void pp__layernorm_bwd_weight_partial(float *pdw, float *pdb, const pp__bf16 *dout,
                                                        const pp__bf16 *inp, const float *mean, const float *rstd,
                                                        int N, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x, chunk = blockIdx.y;
    if (c >= C) return;
    int n0 = chunk * PP__ROWS_PER_CHUNK, n1 = min(N, n0 + PP__ROWS_PER_CHUNK);
    float sw = 0, sb = 0;
    for (int n = n0; n < n1; n++) {
        size_t k = (size_t)n * C + c;
        float d = __bfloat162float(dout[k]), norm = (__bfloat162float(inp[k]) - mean[n]) * rstd[n];
        sw += norm * d;
        sb += d;
    }
    pdw[(size_t)chunk * C + c] = sw;
    pdb[(size_t)chunk * C + c] = sb;
}

/* dst[i] += sum over k of part[k * n + i], k in order (also reduces split-K partials) */
static __global__ void pp__sum_partials(float *dst, const float *part, int parts, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float s = 0;
        for (int k = 0; k < parts; k++) s += part[(size_t)k * n + i];
        dst[i] += s;
    }
}

/* ---- causal attention (one warp per row of the (B,NH,T,T) matrix) ----
   Row r = (b*NH + h)*T + t. The softmax is materialised in att (bf16) as
   gpt_ref.h does; the row being built is kept in fp32 in shared memory. */

/* sum_i x[i] g[i], x in shared memory, g a bf16 row in global memory; vec:
   g is 16-byte aligned and n % 8 == 0, so it is read 8 values at a time */
static __device__ __forceinline__ float pp__dot_row(const float *x, const pp__bf16 *g, int n, int vec) {
    float dot = 0;
    if (vec) {
        const uint4 *g4 = (const uint4 *)g;
        for (int c = 0; c < n / 8; c++) {
            /* one 16-byte load, then a copy into bf16 pairs: reading the
               uint4 through a __nv_bfloat162 pointer breaks strict aliasing
               (g++ -O2 miscompiled it under the emulator, emu/gpu) */
            /* report: one row per lane, rows apart: a request is 32 rows' 16 bytes, half of each row's 32-byte sector; the lane's next read is the other half (L1) */
            uint4 u = g4[c];
            __nv_bfloat162 h2[4];
            memcpy((void *)h2, &u, sizeof h2);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                float2 f = __bfloat1622float2(h2[j]);
                dot += x[8 * c + 2 * j] * f.x + x[8 * c + 2 * j + 1] * f.y;
            }
        }
    } else {
        for (int i = 0; i < n; i++) dot += x[i] * __bfloat162float(g[i]);
    }
    return dot;
}

static __global__ void pp__attention_fwd(pp__bf16 *out, pp__bf16 *att, const pp__bf16 *qkv, int B, int T, int C,
                                         int NH, int vec) {
    extern __shared__ float pp__att_smem[];
    int hs = C / NH, lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    size_t r = (size_t)blockIdx.x * (blockDim.x >> 5) + wid, C3 = 3 * (size_t)C;
    if (r >= (size_t)B * NH * T) return;
    int t = (int)(r % T), h = (int)((r / T) % NH), b = (int)(r / ((size_t)T * NH));
    float *q = pp__att_smem + (size_t)wid * (hs + T), *p = q + hs;
    const pp__bf16 *base = qkv + (size_t)b * T * C3 + (size_t)h * hs;
    float scale = 1.0f / sqrtf((float)hs), mx = -INFINITY, sum = 0;
    for (int i = lane; i < hs; i += 32) q[i] = __bfloat162float(base[(size_t)t * C3 + i]);
    __syncwarp();
    for (int t2 = lane; t2 <= t; t2 += 32) {
        float dot = pp__dot_row(q, base + (size_t)t2 * C3 + C, hs, vec) * scale;
        p[t2] = dot;
        mx = fmaxf(mx, dot);
    }
    mx = pp__warp_max(mx);
    for (int t2 = lane; t2 <= t; t2 += 32) {
        float e = expf(p[t2] - mx);
        p[t2] = e;
        sum += e;
    }
    sum = 1.0f / pp__warp_sum(sum);
    pp__bf16 *arow = att + r * T;
    for (int t2 = lane; t2 < T; t2 += 32) {
        float a = t2 <= t ? p[t2] * sum : 0.0f;
        if (t2 <= t) p[t2] = a;
        arow[t2] = __float2bfloat16(a);
    }
    __syncwarp();
    for (int i = lane; i < hs; i += 32) {
        float acc = 0;
        for (int t2 = 0; t2 <= t; t2++) acc += p[t2] * __bfloat162float(base[(size_t)t2 * C3 + 2 * C + i]);
        out[((size_t)b * T + t) * C + (size_t)h * hs + i] = __float2bfloat16(acc);
    }
}

/* B, part 1 (rows): datt[t2] = dout_t . v_t2, srow = sum_t2 att datt,
   dpre[t2] = att (datt - srow) scale, dq_t = sum_t2 dpre k_t2. Writes dq and
   srow (for part 2). */
static __global__ void pp__attention_bwd_rows(pp__bf16 *dqkv, float *srow, const pp__bf16 *dout,
                                              const pp__bf16 *qkv, const pp__bf16 *att, int B, int T, int C, int NH,
                                              int vec) {
    extern __shared__ float pp__att_smem[];
    int hs = C / NH, lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    size_t r = (size_t)blockIdx.x * (blockDim.x >> 5) + wid, C3 = 3 * (size_t)C;
    if (r >= (size_t)B * NH * T) return;
    int t = (int)(r % T), h = (int)((r / T) % NH), b = (int)(r / ((size_t)T * NH));
    float *d = pp__att_smem + (size_t)wid * (hs + T), *dp = d + hs;
    const pp__bf16 *base = qkv + (size_t)b * T * C3 + (size_t)h * hs, *arow = att + r * T;
    float scale = 1.0f / sqrtf((float)hs), s = 0;
    for (int i = lane; i < hs; i += 32) d[i] = __bfloat162float(dout[((size_t)b * T + t) * C + (size_t)h * hs + i]);
    __syncwarp();
    for (int t2 = lane; t2 <= t; t2 += 32) {
        float datt = pp__dot_row(d, base + (size_t)t2 * C3 + 2 * C, hs, vec);
        dp[t2] = datt;
        s += __bfloat162float(arow[t2]) * datt;
    }
    s = pp__warp_sum(s);
    for (int t2 = lane; t2 <= t; t2 += 32) dp[t2] = __bfloat162float(arow[t2]) * (dp[t2] - s) * scale;
    __syncwarp();
    for (int i = lane; i < hs; i += 32) {
        float acc = 0;
        for (int t2 = 0; t2 <= t; t2++) acc += dp[t2] * __bfloat162float(base[(size_t)t2 * C3 + C + i]);
        dqkv[((size_t)b * T + t) * C3 + (size_t)h * hs + i] = __float2bfloat16(acc);
    }
    if (lane == 0) srow[r] = s;
}

/* B, part 2 (columns): for key/value position t2, dk = sum_{t>=t2} dpre[t][t2] q_t
   and dv = sum_{t>=t2} att[t][t2] dout_t, gathering in t order (no atomics).
   dpre is recomputed from att, dout, v and srow. */
static __global__ void pp__attention_bwd_cols(pp__bf16 *dqkv, const float *srow, const pp__bf16 *dout,
                                              const pp__bf16 *qkv, const pp__bf16 *att, int B, int T, int C, int NH,
                                              int vec) {
    extern __shared__ float pp__att_smem[];
    int hs = C / NH, lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    size_t r = (size_t)blockIdx.x * (blockDim.x >> 5) + wid, C3 = 3 * (size_t)C;
    if (r >= (size_t)B * NH * T) return;
    int t2 = (int)(r % T), h = (int)((r / T) % NH), b = (int)(r / ((size_t)T * NH));
    size_t bh = r - t2; /* (b*NH + h) * T */
    float *v = pp__att_smem + (size_t)wid * (3 * hs + 64), *dk = v + hs, *dv = dk + hs, *sdp = dv + hs, *sa = sdp + 32;
    const pp__bf16 *base = qkv + (size_t)b * T * C3 + (size_t)h * hs;
    const pp__bf16 *dbase = dout + (size_t)b * T * C + (size_t)h * hs;
    float scale = 1.0f / sqrtf((float)hs);
    for (int i = lane; i < hs; i += 32) {
        v[i] = __bfloat162float(base[(size_t)t2 * C3 + 2 * C + i]);
        dk[i] = 0;
        dv[i] = 0;
    }
    __syncwarp();
    for (int t0 = t2; t0 < T; t0 += 32) {
        int t = t0 + lane, cnt = min(32, T - t0);
        float dpl = 0, al = 0;
        if (t < T) {
            float datt = pp__dot_row(v, dbase + (size_t)t * C, hs, vec);
            /* report: a column of att, one row per lane; coalesced, it needs att stored transposed too (B*NH*T*T bf16 more, att's own size, and a transpose pass); the block's 4 warps read 4 adjacent columns of the same sectors (L1, L2) */
            al = __bfloat162float(att[(bh + t) * T + t2]);
            /* report: 32 floats from row t2 on, which need not start a sector: one sector more in some requests */
            dpl = al * (datt - srow[bh + t]) * scale;
        }
        sdp[lane] = dpl;
        sa[lane] = al;
        __syncwarp();
        for (int i = lane; i < hs; i += 32) {
            float ak = dk[i], av = dv[i];
            for (int j = 0; j < cnt; j++) {
                ak += sdp[j] * __bfloat162float(base[(size_t)(t0 + j) * C3 + i]);
                av += sa[j] * __bfloat162float(dbase[(size_t)(t0 + j) * C + i]);
            }
            dk[i] = ak;
            dv[i] = av;
        }
        __syncwarp();
    }
    for (int i = lane; i < hs; i += 32) {
        dqkv[((size_t)b * T + t2) * C3 + C + (size_t)h * hs + i] = __float2bfloat16(dk[i]);
        dqkv[((size_t)b * T + t2) * C3 + 2 * C + (size_t)h * hs + i] = __float2bfloat16(dv[i]);
    }
}

/* ---- softmax cross-entropy (one block per row) ---- */

/* losses[n] = lse - logits[n, target], lse[n] = log sum exp logits[n, :] */
static __global__ void pp__crossentropy_fwd(float *losses, float *lse, const pp__bf16 *logits, const int *targets,
                                            int V) {
    int n = blockIdx.x;
    const pp__bf16 *l = logits + (size_t)n * V;
    float mx = -INFINITY, s = 0;
    for (int i = threadIdx.x; i < V; i += blockDim.x) mx = fmaxf(mx, __bfloat162float(l[i]));
    mx = pp__block_reduce(mx, 1);
    for (int i = threadIdx.x; i < V; i += blockDim.x) s += expf(__bfloat162float(l[i]) - mx);
    s = pp__block_reduce(s, 0);
    if (threadIdx.x == 0) {
        int tg = targets[n];
        float z = mx + logf(s);
        lse[n] = z;
        losses[n] = tg >= 0 && tg < V ? z - __bfloat162float(l[tg]) : 0.0f;
    }
}

/* dlogits = (softmax(logits) - onehot(target)) * dloss; dlogits may alias logits */
static __global__ void pp__crossentropy_bwd(pp__bf16 *dlogits, const pp__bf16 *logits, const float *lse,
                                            const int *targets, float dloss, int N, int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= V) return;
    for (int n = blockIdx.y; n < N; n += gridDim.y) {
        size_t k = (size_t)n * V + i;
        float p = expf(__bfloat162float(logits[k]) - lse[n]);
        dlogits[k] = __float2bfloat16((p - (i == targets[n] ? 1.0f : 0.0f)) * dloss);
    }
}

/* *loss += mean of losses[0..N), summed in a fixed order by one block */
static __global__ void pp__loss_mean(float *loss, const float *losses, int N) {
    float s = 0;
    for (int i = threadIdx.x; i < N; i += blockDim.x) s += losses[i];
    s = pp__block_reduce(s, 0);
    if (threadIdx.x == 0) atomicAdd(loss, s / N); /* one add per microbatch: safe if streams share *loss */
}

/* ---- matmul on tensor cores ----
   C[m,n] = sum_k A(m,k) B(k,n), bf16 in, fp32 accumulate (WMMA 16x16x16).
   A(m,k) is A[m*lda + k] (AK: k contiguous) or A[k*lda + m]; B(k,n) is
   B[n*ldb + k] (BK: k contiguous) or B[k*ldb + n]. Shared-memory tiles keep
   the global layout and WMMA reads them as row- or column-major, so no
   transposes. 128x128 block tile, 8 warps of 64x32, K step 32, 3 stages.
   VEC: 16-byte cp.async loads (contiguous dims multiples of 8, 16-byte
   aligned pointers); out-of-range chunks are zero-filled. Otherwise scalar
   loads with bounds checks and zero padding: any M, N, K works.
   Epilogue: outf (fp32) += or = acc; or outb (bf16) = acc + bias[n] + resid[m,n]. */

#define PP__MM_BM 128 /* the warp layout (2 x 4 warps of 64 x 32) assumes 128 x 128 */
#define PP__MM_BN 128
#ifndef PP__MM_BK /* tuning knobs: K step (a multiple of 16) and pipeline depth (>= 2) */
#define PP__MM_BK 32
#endif
#ifndef PP__MM_STAGES
#define PP__MM_STAGES 3
#endif
#define PP__MM_PAD 8 /* 16 bytes per smem row: spreads rows over banks, keeps 32-byte fragment alignment */
#define PP__MM_THREADS 256
#define PP__MM_TILE_ELEMS                                                                               \
    (PP__MM_BM * (PP__MM_BK + PP__MM_PAD) > PP__MM_BK * (PP__MM_BM + PP__MM_PAD) ? PP__MM_BM * (PP__MM_BK + PP__MM_PAD) \
                                                                                 : PP__MM_BK * (PP__MM_BM + PP__MM_PAD))
#define PP__MM_SMEM (PP__MM_STAGES * 2 * PP__MM_TILE_ELEMS * 2) /* bytes: 61440 at BK 32, 3 stages */

typedef struct pp__mm_args {
    const pp__bf16 *A, *B;
    int lda, ldb, M, N, K;
    int kchunk;          /* K range of split blockIdx.z: [z*kchunk, min(K, (z+1)*kchunk)) */
    float *outf;         /* fp32 output, or NULL */
    size_t split_stride; /* outf of split z is outf + z*split_stride */
    int accumulate;      /* outf: 1 +=, 0 = */
    pp__bf16 *outb;      /* bf16 output, or NULL */
    const pp__bf16 *bias, *resid;
    int ldc;
    /* batched (mma.sync engine only; attention's per-head products): with
       batch_div > 0, blockIdx.z = zb * batch_div + zh picks operands
       A + zb*a_s1 + zh*a_s2, B likewise, outputs and resid + zb*c_s1 + zh*c_s2,
       and K is not split */
    int batch_div;
    size_t a_s1, a_s2, b_s1, b_s2, c_s1, c_s2;
    /* causal structure of T x T operands: 1 the output is only needed on and
       below the diagonal (tiles wholly above it are skipped); 2 A(m,k) is zero
       for k > m; 3 A(m,k) is zero for k < m (K is cut to match) */
    int causal;
} pp__mm_args;

static __device__ __forceinline__ void pp__cp_async16(void *smem, const void *gmem, int bytes) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void pp__cp_async_commit(void) { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> static __device__ __forceinline__ void pp__cp_async_wait(void) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* One operand tile: rows x cols elements of the global matrix whose element
   (row, col) is at g[row*ld + col] (col contiguous), rows [r0, r0+rows) bounded
   by rmax, cols [c0, c0+cols) bounded by cmax, into s[rows][cols + PAD]. */
template <int ROWS, int COLS, bool VEC>
static __device__ __forceinline__ void pp__mm_load_tile(pp__bf16 *s, const pp__bf16 *g, int ld, int r0, int rmax,
                                                        int c0, int cmax) {
    const int tid = threadIdx.x;
    if (VEC) {
        /* A quarter warp's eight 16-byte stores are one shared-memory phase,
           conflict-free when they land in eight distinct 16-byte slots of a
           128-byte line. With CPR < 8 chunks per row, consecutive chunks
           would span rows r, r+1, ... whose slots overlap (rows of
           CPR + 1 slots: at BK 32, rows of 5 slots put row r+1's last chunk
           on row r's first). So a phase takes rows CPR apart instead: row
           g + k*CPR (k < 8/CPR) of an 8-row group starts (CPR+1)*k*CPR
           slots after row g, 4k (CPR 4) or 6k (CPR 2) modulo 8, and their
           CPR chunks each fill the slots in between. The warp still reads the same 8 rows'
           bytes from global memory; ldmatrix's reads are unchanged. */
        constexpr int CPR = COLS / 8, chunks = ROWS * CPR;
        static_assert(CPR >= 8 || (8 % CPR == 0 && ROWS % 8 == 0), "tile rows in groups of 8");
#pragma unroll
        for (int c = tid; c < chunks; c += PP__MM_THREADS) {
            int row, col;
            if (CPR >= 8) {
                row = c / CPR;
                col = (c % CPR) * 8;
            } else { /* c = group (8 rows), g (< CPR), k (< 8/CPR), chunk (< CPR) */
                int w = c % (8 * CPR), p = w % 8;
                row = c / (8 * CPR) * 8 + w / 8 + p / CPR * CPR;
                col = p % CPR * 8;
            }
            int gr = r0 + row, gc = c0 + col;
            bool ok = gr < rmax && gc < cmax; /* cmax % 8 == 0: a chunk is all in or all out */
            const pp__bf16 *src = ok ? g + (size_t)gr * ld + gc : g;
            pp__cp_async16(s + row * (COLS + PP__MM_PAD) + col, src, ok ? 16 : 0);
        }
    } else {
#pragma unroll 4
        for (int e = tid; e < ROWS * COLS; e += PP__MM_THREADS) {
            int row = e / COLS, col = e % COLS, gr = r0 + row, gc = c0 + col;
            s[row * (COLS + PP__MM_PAD) + col] =
                gr < rmax && gc < cmax ? g[(size_t)gr * ld + gc] : __float2bfloat16(0.0f);
        }
    }
}

template <bool AK, bool BK, bool VEC>
static __global__ void __launch_bounds__(PP__MM_THREADS) pp__matmul(pp__mm_args a) {
    using namespace nvcuda;
    typedef typename std::conditional<AK, wmma::row_major, wmma::col_major>::type ALayout;
    typedef typename std::conditional<BK, wmma::col_major, wmma::row_major>::type BLayout;
    extern __shared__ __align__(128) unsigned char pp__mm_smem[];
    pp__bf16 *sm = (pp__bf16 *)pp__mm_smem;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, wm = warp >> 2, wn = warp & 3;
    const int m0 = blockIdx.y * PP__MM_BM, n0 = blockIdx.x * PP__MM_BN;
    const int kbeg = blockIdx.z * a.kchunk, kend = min(a.K, kbeg + a.kchunk);
    const int ntiles = kend > kbeg ? (kend - kbeg + PP__MM_BK - 1) / PP__MM_BK : 0;
    const int lda_s = AK ? PP__MM_BK + PP__MM_PAD : PP__MM_BM + PP__MM_PAD;
    const int ldb_s = BK ? PP__MM_BK + PP__MM_PAD : PP__MM_BN + PP__MM_PAD;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);

    /* stage s: A tile at sm + 2*s*TILE, B tile right after it */
    auto load = [&](int stage, int kt) {
        pp__bf16 *As = sm + (size_t)2 * stage * PP__MM_TILE_ELEMS, *Bs = As + PP__MM_TILE_ELEMS;
        int k0 = kbeg + kt * PP__MM_BK;
        if (AK) pp__mm_load_tile<PP__MM_BM, PP__MM_BK, VEC>(As, a.A, a.lda, m0, a.M, k0, kend);
        else pp__mm_load_tile<PP__MM_BK, PP__MM_BM, VEC>(As, a.A, a.lda, k0, kend, m0, a.M);
        if (BK) pp__mm_load_tile<PP__MM_BN, PP__MM_BK, VEC>(Bs, a.B, a.ldb, n0, a.N, k0, kend);
        else pp__mm_load_tile<PP__MM_BK, PP__MM_BN, VEC>(Bs, a.B, a.ldb, k0, kend, n0, a.N);
    };

#pragma unroll
    for (int s = 0; s < PP__MM_STAGES - 1; s++) {
        if (s < ntiles) load(s, s);
        pp__cp_async_commit();
    }
    for (int kt = 0; kt < ntiles; kt++) {
        pp__cp_async_wait<PP__MM_STAGES - 2>(); /* tile kt has landed (this thread's part) */
        __syncthreads();                        /* ... everyone's; and tile kt-1 is no longer read */
        if (kt + PP__MM_STAGES - 1 < ntiles) load((kt + PP__MM_STAGES - 1) % PP__MM_STAGES, kt + PP__MM_STAGES - 1);
        pp__cp_async_commit();
        const pp__bf16 *As = sm + (size_t)2 * (kt % PP__MM_STAGES) * PP__MM_TILE_ELEMS,
                       *Bs = As + PP__MM_TILE_ELEMS;
#pragma unroll
        for (int kk = 0; kk < PP__MM_BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, pp__bf16, ALayout> fa[4];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, pp__bf16, BLayout> fb[2];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                int m = wm * 64 + i * 16;
                wmma::load_matrix_sync(fa[i], AK ? As + m * lda_s + kk : As + kk * lda_s + m, lda_s);
            }
#pragma unroll
            for (int j = 0; j < 2; j++) {
                int n = wn * 32 + j * 16;
                wmma::load_matrix_sync(fb[j], BK ? Bs + n * ldb_s + kk : Bs + kk * ldb_s + n, ldb_s);
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
    }
    pp__cp_async_wait<0>();
    __syncthreads(); /* the tiles' memory becomes the epilogue's scratch */

    float *scr = (float *)pp__mm_smem + warp * 256;
    float *outf = a.outf ? a.outf + blockIdx.z * a.split_stride : NULL;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            wmma::store_matrix_sync(scr, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            for (int e = lane; e < 256; e += 32) {
                int gm = m0 + wm * 64 + i * 16 + (e >> 4), gn = n0 + wn * 32 + j * 16 + (e & 15);
                if (gm < a.M && gn < a.N) {
                    size_t k = (size_t)gm * a.ldc + gn;
                    float v = scr[e];
                    if (outf) {
                        outf[k] = a.accumulate ? outf[k] + v : v;
                    } else {
                        if (a.bias) v += __bfloat162float(a.bias[gn]);
                        if (a.resid) v += __bfloat162float(a.resid[k]);
                        a.outb[k] = __float2bfloat16(v);
                    }
                }
            }
            __syncwarp();
        }
}

/* The same kernel with the tensor-core instructions written out: ldmatrix
   (x4; .trans where the tile is stored k-major for B or m-major for A) and
   mma.sync m16n8k16 bf16 -> fp32. WMMA's loads compile to generic 32-bit
   loads here (sm_90a SASS shows LD.E, not LDSM), so this one is the default;
   PP__MM_ENGINE=0 selects WMMA. Fragment layouts: PTX ISA, "Matrix
   Fragments for mma.m16n8k16 with floating point type" (g = lane/4, q = lane%4):
     A (16x16, row): reg0 (g, 2q..2q+1), reg1 (g+8, 2q..), reg2 (g, 8+2q..), reg3 (g+8, 8+2q..)
     B (16x8, col):  reg0 (k 2q..2q+1, n g), reg1 (k 8+2q.., n g)
     C (16x8 fp32):  c0,c1 (g, 2q..2q+1), c2,c3 (g+8, 2q..2q+1)
   ldmatrix.x4 gives register j the 8x8 matrix whose row addresses lanes
   8j..8j+7 supply (lane gets row lane/4, columns 2(lane%4)..; with .trans
   row 2(lane%4).., column lane/4), so the address each lane supplies picks
   which 8x8 quarter lands in which register. */
static __device__ __forceinline__ void pp__ldsm_x4(unsigned r[4], const void *p) {
    unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
}
static __device__ __forceinline__ void pp__ldsm_x4_trans(unsigned r[4], const void *p) {
    unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
}
static __device__ __forceinline__ void pp__mma_bf16(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* one output element of the epilogue (bounds checked by the caller) */
static __device__ __forceinline__ void pp__mm_put(const pp__mm_args &a, float *outf, pp__bf16 *outb,
                                                  const pp__bf16 *resid, int gm, int gn, float v) {
    size_t k = (size_t)gm * a.ldc + gn;
    if (outf) {
        /* report: the mma fragment's layout: a request is 8 rows of 4 lanes at every other column (a lane's 2 adjacent columns are 2 requests) */
        outf[k] = a.accumulate ? outf[k] + v : v;
    } else {
        if (a.bias) v += __bfloat162float(a.bias[gn]);
        /* report: the mma fragment's layout, as for outf: 8 rows of 4 bf16 at every other column */
        if (resid) v += __bfloat162float(resid[k]);
        outb[k] = __float2bfloat16(v);
    }
}

template <bool AK, bool BK, bool VEC>
static __global__ void __launch_bounds__(PP__MM_THREADS) pp__matmul_mma(pp__mm_args a) {
    extern __shared__ __align__(128) unsigned char pp__mm_smem[];
    pp__bf16 *sm = (pp__bf16 *)pp__mm_smem;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, wm = warp >> 2, wn = warp & 3;
    const int m0 = blockIdx.y * PP__MM_BM, n0 = blockIdx.x * PP__MM_BN;
    int kbeg = blockIdx.z * a.kchunk, kend = min(a.K, kbeg + a.kchunk);
    size_t offa = 0, offb = 0, offc = 0;
    if (a.batch_div > 0) {
        size_t zb = blockIdx.z / a.batch_div, zh = blockIdx.z % a.batch_div;
        offa = zb * a.a_s1 + zh * a.a_s2;
        offb = zb * a.b_s1 + zh * a.b_s2;
        offc = zb * a.c_s1 + zh * a.c_s2;
        kbeg = 0;
        kend = a.K;
    }
    if (a.causal == 1 && n0 > m0 + PP__MM_BM - 1) return; /* the whole block: no barrier is skipped */
    if (a.causal == 2) kend = min(kend, m0 + PP__MM_BM);
    if (a.causal == 3) kbeg = max(kbeg, m0); /* m0 is a multiple of BK: 16-byte chunks stay aligned */
    const pp__bf16 *Ag = a.A + offa, *Bg = a.B + offb;
    const int ntiles = kend > kbeg ? (kend - kbeg + PP__MM_BK - 1) / PP__MM_BK : 0;
    const int lda_s = AK ? PP__MM_BK + PP__MM_PAD : PP__MM_BM + PP__MM_PAD;
    const int ldb_s = BK ? PP__MM_BK + PP__MM_PAD : PP__MM_BN + PP__MM_PAD;
    const int l7 = lane & 7, l8 = (lane >> 3) & 1, l16 = lane >> 4;
    float acc[4][4][4]; /* [m16 tile][n8 tile][c0..c3]: the warp's 64 x 32 */
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    auto load = [&](int stage, int kt) {
        pp__bf16 *As = sm + (size_t)2 * stage * PP__MM_TILE_ELEMS, *Bs = As + PP__MM_TILE_ELEMS;
        int k0 = kbeg + kt * PP__MM_BK;
        if (AK) pp__mm_load_tile<PP__MM_BM, PP__MM_BK, VEC>(As, Ag, a.lda, m0, a.M, k0, kend);
        else pp__mm_load_tile<PP__MM_BK, PP__MM_BM, VEC>(As, Ag, a.lda, k0, kend, m0, a.M);
        if (BK) pp__mm_load_tile<PP__MM_BN, PP__MM_BK, VEC>(Bs, Bg, a.ldb, n0, a.N, k0, kend);
        else pp__mm_load_tile<PP__MM_BK, PP__MM_BN, VEC>(Bs, Bg, a.ldb, k0, kend, n0, a.N);
    };

#pragma unroll
    for (int s = 0; s < PP__MM_STAGES - 1; s++) {
        if (s < ntiles) load(s, s);
        pp__cp_async_commit();
    }
    for (int kt = 0; kt < ntiles; kt++) {
        pp__cp_async_wait<PP__MM_STAGES - 2>();
        __syncthreads();
        if (kt + PP__MM_STAGES - 1 < ntiles) load((kt + PP__MM_STAGES - 1) % PP__MM_STAGES, kt + PP__MM_STAGES - 1);
        pp__cp_async_commit();
        const pp__bf16 *As = sm + (size_t)2 * (kt % PP__MM_STAGES) * PP__MM_TILE_ELEMS,
                       *Bs = As + PP__MM_TILE_ELEMS;
#pragma unroll
        for (int kk = 0; kk < PP__MM_BK; kk += 16) {
            unsigned fa[4][4], fb[4][2];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                int m = wm * 64 + i * 16;
                if (AK) /* As[m][k]: quarters (m0-7,k0-7) (m8-15,k0-7) (m0-7,k8-15) (m8-15,k8-15) */
                    pp__ldsm_x4(fa[i], As + (m + l7 + 8 * l8) * lda_s + kk + 8 * l16);
                else /* As[k][m], transposed: the same quarters */
                    pp__ldsm_x4_trans(fa[i], As + (kk + l7 + 8 * l16) * lda_s + m + 8 * l8);
            }
#pragma unroll
            for (int jj = 0; jj < 2; jj++) {
                int n = wn * 32 + jj * 16;
                unsigned r[4];
                if (BK) /* Bs[n][k]: (n0-7,k0-7) (n0-7,k8-15) (n8-15,k0-7) (n8-15,k8-15) */
                    pp__ldsm_x4(r, Bs + (n + l7 + 8 * l16) * ldb_s + kk + 8 * l8);
                else /* Bs[k][n], transposed: (k0-7,n0-7) (k8-15,n0-7) (k0-7,n8-15) (k8-15,n8-15) */
                    pp__ldsm_x4_trans(r, Bs + (kk + l7 + 8 * l8) * ldb_s + n + 8 * l16);
                fb[2 * jj][0] = r[0];
                fb[2 * jj][1] = r[1];
                fb[2 * jj + 1][0] = r[2];
                fb[2 * jj + 1][1] = r[3];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) pp__mma_bf16(acc[i][j], fa[i], fb[j][0], fb[j][1]);
        }
    }
    pp__cp_async_wait<0>();

    float *outf = a.outf ? a.outf + (a.batch_div > 0 ? offc : blockIdx.z * a.split_stride) : NULL;
    pp__bf16 *outb = a.outb ? a.outb + offc : NULL;
    const pp__bf16 *resid = a.resid ? a.resid + offc : NULL;
    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int gm = m0 + wm * 64 + i * 16 + g + (e >= 2 ? 8 : 0), gn = n0 + wn * 32 + j * 8 + 2 * q + (e & 1);
                if (gm < a.M && gn < a.N) pp__mm_put(a, outf, outb, resid, gm, gn, acc[i][j][e]);
            }
}

/* which tensor-core code the matmuls run: 1 mma.sync + ldmatrix, 0 WMMA */
#ifndef PP__MM_ENGINE
#define PP__MM_ENGINE 1
#endif

template <bool AK, bool BK, bool VEC>
static cudaError_t pp__matmul_launch(const pp__mm_args *a, int splits, int engine, cudaStream_t stream) {
    dim3 grid((unsigned)((a->N + PP__MM_BN - 1) / PP__MM_BN), (unsigned)((a->M + PP__MM_BM - 1) / PP__MM_BM),
              (unsigned)splits);
    if (engine != 1 && (a->batch_div > 0 || a->causal)) return cudaErrorInvalidValue; /* mma.sync only */
    if (engine == 1) {
        PP__GPT_TRY(cudaFuncSetAttribute(pp__matmul_mma<AK, BK, VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         PP__MM_SMEM));
        pp__matmul_mma<AK, BK, VEC><<<grid, PP__MM_THREADS, PP__MM_SMEM, stream>>>(*a);
    } else {
        PP__GPT_TRY(cudaFuncSetAttribute(pp__matmul<AK, BK, VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         PP__MM_SMEM));
        pp__matmul<AK, BK, VEC><<<grid, PP__MM_THREADS, PP__MM_SMEM, stream>>>(*a);
    }
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

/* picks the VEC path when the contiguous dims allow 16-byte chunks; AK/BK as
   above (the three combinations the model uses: fwd 1,1; B 1,0; W 0,0) */
static inline cudaError_t pp__matmul_run(int AK, int BK, const pp__mm_args *a, int splits, int engine,
                                         cudaStream_t stream) {
    int vec = pp__gpt_aligned16(a->A) && pp__gpt_aligned16(a->B) && a->lda % 8 == 0 && a->ldb % 8 == 0 &&
              (AK ? a->K % 8 == 0 : a->M % 8 == 0) && (BK ? a->K % 8 == 0 : a->N % 8 == 0) &&
              (!(AK || BK) || a->kchunk % 8 == 0) &&
              (a->batch_div <= 0 || (a->a_s1 % 8 == 0 && a->a_s2 % 8 == 0 && a->b_s1 % 8 == 0 && a->b_s2 % 8 == 0));
    if (a->M <= 0 || a->N <= 0) return cudaSuccess;
    if (AK && BK) return vec ? pp__matmul_launch<true, true, true>(a, splits, engine, stream)
                             : pp__matmul_launch<true, true, false>(a, splits, engine, stream);
    if (AK && !BK) return vec ? pp__matmul_launch<true, false, true>(a, splits, engine, stream)
                              : pp__matmul_launch<true, false, false>(a, splits, engine, stream);
    if (!AK && !BK) return vec ? pp__matmul_launch<false, false, true>(a, splits, engine, stream)
                               : pp__matmul_launch<false, false, false>(a, splits, engine, stream);
    return cudaErrorInvalidValue;
}

/* out[N,OC] = inp[N,IC] w[OC,IC]^T + bias[OC] + resid[N,OC] (bias, resid may be NULL) */
static inline cudaError_t pp__gpt_matmul_forward_ex(int engine, pp__bf16 *out, const pp__bf16 *inp,
                                                    const pp__bf16 *w, const pp__bf16 *bias, const pp__bf16 *resid,
                                                    int N, int IC, int OC, cudaStream_t stream) {
    pp__mm_args a;
    memset(&a, 0, sizeof a);
    a.A = inp; a.lda = IC; a.B = w; a.ldb = IC; a.M = N; a.N = OC; a.K = IC; a.kchunk = IC;
    a.outb = out; a.bias = bias; a.resid = resid; a.ldc = OC;
    return pp__matmul_run(1, 1, &a, 1, engine, stream);
}
static inline cudaError_t pp__gpt_matmul_forward(pp__bf16 *out, const pp__bf16 *inp, const pp__bf16 *w,
                                                 const pp__bf16 *bias, const pp__bf16 *resid, int N, int IC, int OC,
                                                 cudaStream_t stream) {
    return pp__gpt_matmul_forward_ex(PP__MM_ENGINE, out, inp, w, bias, resid, N, IC, OC, stream);
}

/* dinp[N,IC] = dout[N,OC] w[OC,IC] (overwrites; gpt_ref.h adds into zeros) */
static inline cudaError_t pp__gpt_matmul_backward_input_ex(int engine, pp__bf16 *dinp, const pp__bf16 *dout,
                                                           const pp__bf16 *w, int N, int IC, int OC,
                                                           cudaStream_t stream) {
    pp__mm_args a;
    memset(&a, 0, sizeof a);
    a.A = dout; a.lda = OC; a.B = w; a.ldb = IC; a.M = N; a.N = IC; a.K = OC; a.kchunk = OC;
    a.outb = dinp; a.ldc = IC;
    return pp__matmul_run(1, 0, &a, 1, engine, stream);
}
static inline cudaError_t pp__gpt_matmul_backward_input(pp__bf16 *dinp, const pp__bf16 *dout, const pp__bf16 *w,
                                                        int N, int IC, int OC, cudaStream_t stream) {
    return pp__gpt_matmul_backward_input_ex(PP__MM_ENGINE, dinp, dout, w, N, IC, OC, stream);
}

/* W's matmul is OC x IC outputs over K = N rows: few output tiles and a long
   K at small C, so K is split until about two waves of 132 SMs' blocks run;
   each split writes fp32 partials that one kernel sums in split order
   (deterministic). Splits stay >= 512 rows long. */
static inline int pp__matmul_w_splits(int N, int IC, int OC) {
    long tiles = (long)((OC + PP__MM_BM - 1) / PP__MM_BM) * ((IC + PP__MM_BN - 1) / PP__MM_BN);
    int s = 1;
    while (s < 8 && tiles * s < 264 && N / (2 * s) >= 512) s *= 2;
    return s;
}
/* workspace floats pp__gpt_matmul_backward_weight needs */
static inline size_t pp__matmul_w_ws_floats(int N, int IC, int OC) {
    int s = pp__matmul_w_splits(N, IC, OC);
    size_t part = s > 1 ? (size_t)s * OC * IC : 0, bias = (size_t)pp__gpt_row_chunks(N) * OC;
    return part > bias ? part : bias;
}

/* dw[OC,IC] += dout[N,OC]^T inp[N,IC]; dbias[OC] += column sums of dout (dbias may be NULL) */
static inline cudaError_t pp__gpt_matmul_backward_weight_ex(int engine, float *dw, float *dbias,
                                                            const pp__bf16 *dout, const pp__bf16 *inp, int N, int IC,
                                                            int OC, void *workspace, cudaStream_t stream) {
    float *part = (float *)workspace;
    int splits = pp__matmul_w_splits(N, IC, OC);
    pp__mm_args a;
    if (N <= 0) return cudaSuccess;
    if (dbias) {
        dim3 grid((unsigned)((OC + 255) / 256), (unsigned)pp__gpt_row_chunks(N));
        pp__colsum_partial<<<grid, 256, 0, stream>>>(part, dout, N, OC);
        PP__GPT_CHECK_LAUNCH();
        pp__sum_partials<<<pp__gpt_grid((size_t)OC, 256), 256, 0, stream>>>(dbias, part, pp__gpt_row_chunks(N), (size_t)OC);
        PP__GPT_CHECK_LAUNCH();
    }
    memset(&a, 0, sizeof a);
    a.A = dout; a.lda = OC; a.B = inp; a.ldb = IC; a.M = OC; a.N = IC; a.K = N; a.ldc = IC;
    if (splits == 1) {
        a.kchunk = N; a.outf = dw; a.accumulate = 1;
        return pp__matmul_run(0, 0, &a, 1, engine, stream);
    }
    a.kchunk = ((N + splits - 1) / splits + PP__MM_BK - 1) / PP__MM_BK * PP__MM_BK;
    a.outf = part; a.split_stride = (size_t)OC * IC; a.accumulate = 0;
    PP__GPT_TRY(pp__matmul_run(0, 0, &a, splits, engine, stream));
    pp__sum_partials<<<pp__gpt_grid((size_t)OC * IC, 256), 256, 0, stream>>>(dw, part, splits, (size_t)OC * IC);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}
static inline cudaError_t pp__gpt_matmul_backward_weight(float *dw, float *dbias, const pp__bf16 *dout,
                                                         const pp__bf16 *inp, int N, int IC, int OC, void *workspace,
                                                         cudaStream_t stream) {
    return pp__gpt_matmul_backward_weight_ex(PP__MM_ENGINE, dw, dbias, dout, inp, N, IC, OC, workspace, stream);
}

/* ---- launchers for the other ops (test_cuda_kernels.cu calls them one by one) ---- */

static inline cudaError_t pp__gpt_encoder_forward(pp__bf16 *out, const int *tok, const pp__bf16 *wte,
                                                  const pp__bf16 *wpe, int B, int T, int C, int V,
                                                  cudaStream_t stream) {
    size_t n = (size_t)B * T * C;
    pp__encoder_fwd<<<pp__gpt_grid(n, 256), 256, 0, stream>>>(out, tok, wte, wpe, B * T, T, C, V);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

static inline cudaError_t pp__gpt_encoder_backward_weight(float *dwte, float *dwpe, const pp__bf16 *dout,
                                                          const int *tok, int B, int T, int C, int V,
                                                          cudaStream_t stream) {
    int P = 65536 / (C > 0 ? C : 1);
    if (P < 1) P = 1;
    if (P > V) P = V;
    if (P < 1) P = 1;
    pp__encoder_dwte<<<pp__gpt_grid((size_t)C * P, 256), 256, 0, stream>>>(dwte, dout, tok, B * T, C, V, P);
    PP__GPT_CHECK_LAUNCH();
    pp__encoder_dwpe<<<pp__gpt_grid((size_t)T * C, 256), 256, 0, stream>>>(dwpe, dout, B, T, C);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

static inline cudaError_t pp__gpt_layernorm_forward(pp__bf16 *out, float *mean, float *rstd, const pp__bf16 *inp,
                                                    const pp__bf16 *w, const pp__bf16 *b, int N, int C,
                                                    cudaStream_t stream) {
    pp__layernorm_fwd<<<pp__gpt_grid((size_t)N, 8), 256, 0, stream>>>(out, mean, rstd, inp, w, b, N, C);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

static inline cudaError_t pp__gpt_layernorm_backward_input(pp__bf16 *dinp, const pp__bf16 *dres,
                                                           const pp__bf16 *dout, const pp__bf16 *inp,
                                                           const float *mean, const float *rstd, const pp__bf16 *w,
                                                           int N, int C, cudaStream_t stream) {
    pp__layernorm_bwd_input<<<pp__gpt_grid((size_t)N, 8), 256, 0, stream>>>(dinp, dres, dout, inp, mean, rstd, w, N, C);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

/* workspace: 2 * pp__gpt_row_chunks(N) * C floats */
static inline cudaError_t pp__gpt_layernorm_backward_weight(float *dw, float *db, const pp__bf16 *dout,
                                                            const pp__bf16 *inp, const float *mean,
                                                            const float *rstd, int N, int C, void *workspace,
                                                            cudaStream_t stream) {
    int chunks = pp__gpt_row_chunks(N);
    float *pdw = (float *)workspace, *pdb = pdw + (size_t)chunks * C;
    dim3 grid((unsigned)((C + 255) / 256), (unsigned)chunks);
    if (N <= 0) return cudaSuccess;
    pp__layernorm_bwd_weight_partial<<<grid, 256, 0, stream>>>(pdw, pdb, dout, inp, mean, rstd, N, C);
    PP__GPT_CHECK_LAUNCH();
    pp__sum_partials<<<pp__gpt_grid((size_t)C, 256), 256, 0, stream>>>(dw, pdw, chunks, (size_t)C);
    PP__GPT_CHECK_LAUNCH();
    pp__sum_partials<<<pp__gpt_grid((size_t)C, 256), 256, 0, stream>>>(db, pdb, chunks, (size_t)C);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

#define PP__ATT_WARPS 4 /* rows per block */

static inline cudaError_t pp__att_smem_ok(const void *kernel, size_t bytes) {
    if (bytes > 48 * 1024)
        return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    return cudaSuccess;
}

static inline cudaError_t pp__gpt_attention_forward(pp__bf16 *out, pp__bf16 *att, const pp__bf16 *qkv, int B, int T,
                                                    int C, int NH, cudaStream_t stream) {
    size_t rows = (size_t)B * NH * T, smem;
    if (NH <= 0 || C % NH != 0) return cudaErrorInvalidValue;
    smem = (size_t)PP__ATT_WARPS * (C / NH + T) * sizeof(float);
    PP__GPT_TRY(pp__att_smem_ok((const void *)pp__attention_fwd, smem));
    pp__attention_fwd<<<(unsigned)((rows + PP__ATT_WARPS - 1) / PP__ATT_WARPS), 32 * PP__ATT_WARPS, smem, stream>>>(
        out, att, qkv, B, T, C, NH, (C / NH) % 8 == 0 && C % 8 == 0 && pp__gpt_aligned16(qkv));
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

/* dqkv[N,3C] = d(out)/d(qkv)^T dout (overwrites); workspace: B*NH*T floats */
static inline cudaError_t pp__gpt_attention_backward(pp__bf16 *dqkv, const pp__bf16 *dout, const pp__bf16 *qkv,
                                                     const pp__bf16 *att, int B, int T, int C, int NH,
                                                     void *workspace, cudaStream_t stream) {
    size_t rows = (size_t)B * NH * T;
    size_t smem1 = NH > 0 ? (size_t)PP__ATT_WARPS * (C / NH + T) * sizeof(float) : 0;
    size_t smem2 = NH > 0 ? (size_t)PP__ATT_WARPS * (3 * (C / NH) + 64) * sizeof(float) : 0;
    unsigned grid = (unsigned)((rows + PP__ATT_WARPS - 1) / PP__ATT_WARPS);
    float *srow = (float *)workspace;
    if (NH <= 0 || C % NH != 0) return cudaErrorInvalidValue;
    PP__GPT_TRY(pp__att_smem_ok((const void *)pp__attention_bwd_rows, smem1));
    PP__GPT_TRY(pp__att_smem_ok((const void *)pp__attention_bwd_cols, smem2));
    int vec = (C / NH) % 8 == 0 && C % 8 == 0 && pp__gpt_aligned16(qkv) && pp__gpt_aligned16(dout);
    pp__attention_bwd_rows<<<grid, 32 * PP__ATT_WARPS, smem1, stream>>>(dqkv, srow, dout, qkv, att, B, T, C, NH, vec);
    PP__GPT_CHECK_LAUNCH();
    pp__attention_bwd_cols<<<grid, 32 * PP__ATT_WARPS, smem2, stream>>>(dqkv, srow, dout, qkv, att, B, T, C, NH, vec);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

/* ---- attention on tensor cores (PP__ATT_ENGINE 1; opt-in) ----
   llm.c's layout: the per-head products as batched matmuls on the mma.sync
   engine (z = b*NH + h), the causal softmax and its backward as row kernels
   over an fp32 T x T buffer in the workspace:
     F: S = Q K^T (fp32), att = softmax(scale S) (bf16, zeros above the
        diagonal), out = att V
     B: D = dout V^T (fp32), P = att (D - rowsum(att D)) scale (bf16, zeros
        above), dq = P K, dk = P^T Q, dv = att^T dout
   Tiles wholly above the diagonal are skipped and K is cut where an operand
   is triangular (pp__mm_args.causal). att and P are rounded to bf16 before
   they feed the tensor cores (the CUDA-core engine keeps them fp32). */

#ifndef PP__ATT_ENGINE
#define PP__ATT_ENGINE 0 /* 0: CUDA cores, one warp per row (tested first); 1: tensor cores */
#endif

/* workspace bytes the attention of one block needs, F or B */
static inline size_t pp__gpt_attention_ws_bytes(int engine, int B, int T, int NH) {
    size_t att = (size_t)B * NH * T * T;
    if (engine == 1) return pp__gpt_round256(att * sizeof(float)) + pp__gpt_round256(att * sizeof(pp__bf16));
    return pp__gpt_round256((size_t)B * NH * T * sizeof(float));
}

/* warp per row r = (b*NH + h)*T + t: att[r, :] = causal softmax of scale * S[r, :] */
static __global__ void pp__att_softmax_fwd(pp__bf16 *att, const float *S, size_t rows, int T, float scale) {
    int lane = threadIdx.x & 31;
    size_t r = (size_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (r >= rows) return;
    int t = (int)(r % T);
    const float *srow = S + r * T;
    float mx = -INFINITY, sum = 0;
    for (int t2 = lane; t2 <= t; t2 += 32) mx = fmaxf(mx, scale * srow[t2]);
    mx = pp__warp_max(mx);
    for (int t2 = lane; t2 <= t; t2 += 32) sum += expf(scale * srow[t2] - mx);
    sum = 1.0f / pp__warp_sum(sum);
    for (int t2 = lane; t2 < T; t2 += 32)
        att[r * T + t2] = __float2bfloat16(t2 <= t ? expf(scale * srow[t2] - mx) * sum : 0.0f);
}

/* warp per row: P[r, t2] = att (D - sum_t2 att D) scale for t2 <= t, 0 above */
static __global__ void pp__att_softmax_bwd(pp__bf16 *P, const float *D, const pp__bf16 *att, size_t rows, int T,
                                           float scale) {
    int lane = threadIdx.x & 31;
    size_t r = (size_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (r >= rows) return;
    int t = (int)(r % T);
    const float *drow = D + r * T;
    const pp__bf16 *arow = att + r * T;
    float s = 0;
    for (int t2 = lane; t2 <= t; t2 += 32) s += __bfloat162float(arow[t2]) * drow[t2];
    s = pp__warp_sum(s);
    for (int t2 = lane; t2 < T; t2 += 32)
        P[r * T + t2] = __float2bfloat16(t2 <= t ? __bfloat162float(arow[t2]) * (drow[t2] - s) * scale : 0.0f);
}

/* one batched per-head product: C_z (M x N) = A_z B_z, z = b*NH + h */
static inline cudaError_t pp__att_gemm(int AK, int BK, const pp__bf16 *A, int lda, size_t a_s1, size_t a_s2,
                                       const pp__bf16 *Bm, int ldb, size_t b_s1, size_t b_s2, float *outf,
                                       pp__bf16 *outb, int ldc, size_t c_s1, size_t c_s2, int M, int N, int K,
                                       int causal, int B, int NH, cudaStream_t stream) {
    pp__mm_args a;
    memset(&a, 0, sizeof a);
    a.A = A; a.lda = lda; a.a_s1 = a_s1; a.a_s2 = a_s2;
    a.B = Bm; a.ldb = ldb; a.b_s1 = b_s1; a.b_s2 = b_s2;
    a.outf = outf; a.outb = outb; a.ldc = ldc; a.c_s1 = c_s1; a.c_s2 = c_s2;
    a.M = M; a.N = N; a.K = K; a.kchunk = K; a.batch_div = NH; a.causal = causal;
    return pp__matmul_run(AK, BK, &a, B * NH, 1, stream);
}

static inline cudaError_t pp__gpt_attention_forward_tc(pp__bf16 *out, pp__bf16 *att, const pp__bf16 *qkv, int B,
                                                       int T, int C, int NH, void *workspace, cudaStream_t stream) {
    size_t hs = (size_t)(NH > 0 ? C / NH : 0), C3 = 3 * (size_t)C, TT = (size_t)T * T, rows = (size_t)B * NH * T;
    float *S = (float *)workspace;
    if (NH <= 0 || C % NH != 0) return cudaErrorInvalidValue;
    /* S[z, t, t2] = q_t . k_t2 */
    PP__GPT_TRY(pp__att_gemm(1, 1, qkv, (int)C3, T * C3, hs, qkv + C, (int)C3, T * C3, hs, S, NULL, T, NH * TT, TT, T,
                             T, (int)hs, 1, B, NH, stream));
    pp__att_softmax_fwd<<<(unsigned)((rows + 3) / 4), 128, 0, stream>>>(att, S, rows, T, 1.0f / sqrtf((float)hs));
    PP__GPT_CHECK_LAUNCH();
    /* out[b, t, h*hs + i] = sum_t2 att[z, t, t2] v_t2[i] */
    return pp__att_gemm(1, 0, att, T, NH * TT, TT, qkv + 2 * C, (int)C3, T * C3, hs, NULL, out, C, (size_t)T * C, hs,
                        T, (int)hs, T, 2, B, NH, stream);
}

static inline cudaError_t pp__gpt_attention_backward_tc(pp__bf16 *dqkv, const pp__bf16 *dout, const pp__bf16 *qkv,
                                                        const pp__bf16 *att, int B, int T, int C, int NH,
                                                        void *workspace, cudaStream_t stream) {
    size_t hs = (size_t)(NH > 0 ? C / NH : 0), C3 = 3 * (size_t)C, TT = (size_t)T * T, rows = (size_t)B * NH * T;
    float *D = (float *)workspace;
    pp__bf16 *P = (pp__bf16 *)((char *)workspace + pp__gpt_round256(rows * T * sizeof(float)));
    if (NH <= 0 || C % NH != 0) return cudaErrorInvalidValue;
    /* D[z, t, t2] = dout_t . v_t2 */
    PP__GPT_TRY(pp__att_gemm(1, 1, dout, C, (size_t)T * C, hs, qkv + 2 * C, (int)C3, T * C3, hs, D, NULL, T, NH * TT,
                             TT, T, T, (int)hs, 1, B, NH, stream));
    pp__att_softmax_bwd<<<(unsigned)((rows + 3) / 4), 128, 0, stream>>>(P, D, att, rows, T, 1.0f / sqrtf((float)hs));
    PP__GPT_CHECK_LAUNCH();
    /* dq_t = sum_t2 P[t, t2] k_t2 */
    PP__GPT_TRY(pp__att_gemm(1, 0, P, T, NH * TT, TT, qkv + C, (int)C3, T * C3, hs, NULL, dqkv, (int)C3, T * C3, hs, T,
                             (int)hs, T, 2, B, NH, stream));
    /* dk_t2 = sum_t P[t, t2] q_t */
    PP__GPT_TRY(pp__att_gemm(0, 0, P, T, NH * TT, TT, qkv, (int)C3, T * C3, hs, NULL, dqkv + C, (int)C3, T * C3, hs, T,
                             (int)hs, T, 3, B, NH, stream));
    /* dv_t2 = sum_t att[t, t2] dout_t */
    return pp__att_gemm(0, 0, att, T, NH * TT, TT, dout, C, (size_t)T * C, hs, NULL, dqkv + 2 * C, (int)C3, T * C3, hs,
                        T, (int)hs, T, 3, B, NH, stream);
}

/* the engine switch the stage functions use; workspace: pp__gpt_attention_ws_bytes(engine, ...) */
static inline cudaError_t pp__gpt_attention_forward_ex(int engine, pp__bf16 *out, pp__bf16 *att, const pp__bf16 *qkv,
                                                       int B, int T, int C, int NH, void *workspace,
                                                       cudaStream_t stream) {
    if (engine == 1) return pp__gpt_attention_forward_tc(out, att, qkv, B, T, C, NH, workspace, stream);
    return pp__gpt_attention_forward(out, att, qkv, B, T, C, NH, stream);
}
static inline cudaError_t pp__gpt_attention_backward_ex(int engine, pp__bf16 *dqkv, const pp__bf16 *dout,
                                                        const pp__bf16 *qkv, const pp__bf16 *att, int B, int T, int C,
                                                        int NH, void *workspace, cudaStream_t stream) {
    if (engine == 1) return pp__gpt_attention_backward_tc(dqkv, dout, qkv, att, B, T, C, NH, workspace, stream);
    return pp__gpt_attention_backward(dqkv, dout, qkv, att, B, T, C, NH, workspace, stream);
}

static inline cudaError_t pp__gpt_gelu_forward(pp__bf16 *out, const pp__bf16 *inp, size_t n, cudaStream_t stream) {
    pp__gelu_fwd<<<pp__gpt_grid(n, 256), 256, 0, stream>>>(out, inp, n);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

static inline cudaError_t pp__gpt_gelu_backward_input(pp__bf16 *dinp, const pp__bf16 *inp, const pp__bf16 *dout,
                                                      size_t n, cudaStream_t stream) {
    pp__gelu_bwd<<<pp__gpt_grid(n, 256), 256, 0, stream>>>(dinp, inp, dout, n);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

static inline cudaError_t pp__gpt_crossentropy_forward(float *losses, float *lse, const pp__bf16 *logits,
                                                       const int *targets, int N, int V, cudaStream_t stream) {
    if (N <= 0) return cudaSuccess;
    pp__crossentropy_fwd<<<(unsigned)N, 256, 0, stream>>>(losses, lse, logits, targets, V);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

static inline cudaError_t pp__gpt_crossentropy_backward_input(pp__bf16 *dlogits, const pp__bf16 *logits,
                                                              const float *lse, const int *targets, float dloss,
                                                              int N, int V, cudaStream_t stream) {
    dim3 grid((unsigned)((V + 255) / 256), (unsigned)(N < 65535 ? N : 65535));
    if (N <= 0) return cudaSuccess;
    pp__crossentropy_bwd<<<grid, 256, 0, stream>>>(dlogits, logits, lse, targets, dloss, N, V);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

/* ================== the contract (docs/cuda.md, "The kernel contract") ================== */

typedef struct pp__gpt_dims {
    int vocab, seq, channels, heads, layers, batch;
} pp__gpt_dims; /* = gpt_config */
typedef struct pp__gpt_stage {
    int first_layer, num_layers, has_embed, has_head;
} pp__gpt_stage; /* = gpt_stage */

/* = gpt_stage_of: contiguous layer ranges, earlier stages take the extra layers */
static inline pp__gpt_stage pp__gpt_stage_of(const pp__gpt_dims *c, int s, int S) {
    pp__gpt_stage g;
    int base = c->layers / S, extra = c->layers % S;
    g.first_layer = s * base + (s < extra ? s : extra);
    g.num_layers = base + (s < extra ? 1 : 0);
    g.has_embed = s == 0;
    g.has_head = s == S - 1;
    return g;
}

/* parameter tensors in gpt_param_sizes order (gpt_ref.h's GPT_WTE ...) */
enum {
    PP__GPT_WTE, PP__GPT_WPE, PP__GPT_LN1W, PP__GPT_LN1B, PP__GPT_QKVW, PP__GPT_QKVB, PP__GPT_ATTPROJW, PP__GPT_ATTPROJB, PP__GPT_LN2W, PP__GPT_LN2B,
    PP__GPT_FCW, PP__GPT_FCB, PP__GPT_FCPROJW, PP__GPT_FCPROJB, PP__GPT_LNFW, PP__GPT_LNFB, PP__GPT_LMW, PP__GPT_LMB, PP__GPT_NUM_TENSORS
};

/* per[t]: elements of tensor t for one layer (or the whole tensor if not
   per-layer); off[t]: its offset in the flat array; returns the total */
static inline size_t pp__gpt_param_layout(const pp__gpt_dims *c, size_t off[PP__GPT_NUM_TENSORS],
                                          size_t per[PP__GPT_NUM_TENSORS]) {
    size_t V = (size_t)c->vocab, T = (size_t)c->seq, C = (size_t)c->channels, L = (size_t)c->layers, o = 0;
    size_t p[PP__GPT_NUM_TENSORS] = {V * C, T * C, C, C, 3 * C * C, 3 * C, C * C, C, C, C,
                                 4 * C * C, 4 * C, 4 * C * C, C, C, C, V * C, V};
    for (int t = 0; t < PP__GPT_NUM_TENSORS; t++) {
        int layered = t >= PP__GPT_LN1W && t <= PP__GPT_FCPROJB;
        if (off) off[t] = o;
        if (per) per[t] = p[t];
        o += p[t] * (layered ? L : 1);
    }
    return o;
}

static inline size_t pp__gpt_param_count(const pp__gpt_dims *c) { return pp__gpt_param_layout(c, NULL, NULL); }

/* = gpt_stage_param_ranges (not in the contract; for the executor's
   per-stage optimizer steps and gradient sums): fn(offset, count, user)
   for each range of the flat parameter array that stage g owns */
static inline void pp__gpt_stage_param_ranges(const pp__gpt_dims *c, const pp__gpt_stage *g,
                                              void (*fn)(size_t, size_t, void *), void *user) {
    size_t off[PP__GPT_NUM_TENSORS], per[PP__GPT_NUM_TENSORS];
    pp__gpt_param_layout(c, off, per);
    for (int t = 0; t < PP__GPT_NUM_TENSORS; t++) {
        if (t == PP__GPT_WTE || t == PP__GPT_WPE) {
            if (g->has_embed) fn(off[t], per[t], user);
        } else if (t >= PP__GPT_LNFW) {
            if (g->has_head) fn(off[t], per[t], user);
        } else if (g->num_layers > 0) {
            fn(off[t] + per[t] * (size_t)g->first_layer, per[t] * (size_t)g->num_layers, user);
        }
    }
}


typedef struct pp__gpt_block {
    pp__bf16 *ln1, *qkv, *att, *atty, *res2, *ln2, *fch, *fch_gelu, *res3; /* F */
    pp__bf16 *dres3, *dfch, *dln2, *dres2, *dqkv, *dln1;                   /* B, for W */
    float *ln1_mean, *ln1_rstd, *ln2_mean, *ln2_rstd;
} pp__gpt_block;

typedef struct pp__gpt_head {
    pp__bf16 *lnf, *logits, *dlnf; /* logits: B overwrites them with dlogits */
    float *lnf_mean, *lnf_rstd, *losses, *lse;
} pp__gpt_head;

/* cursor: the next region of COUNT values of TYPE, 256-byte aligned; sets
   p->FIELD only when p is given (sizes are computed with p == NULL) */
#define PP__GPT_TAKE(field, type, count)                        \
    do {                                                        \
        size_t o_ = cur;                                        \
        cur += pp__gpt_round256(sizeof(type) * (size_t)(count)); \
        if (p) p->field = (type *)(base + o_);                  \
    } while (0)

static inline size_t pp__gpt_block_layout(const pp__gpt_dims *c, char *base, pp__gpt_block *p) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels, cur = 0;
    size_t att = (size_t)c->batch * c->heads * c->seq * c->seq;
    PP__GPT_TAKE(ln1, pp__bf16, N * C);
    PP__GPT_TAKE(ln1_mean, float, N);
    PP__GPT_TAKE(ln1_rstd, float, N);
    PP__GPT_TAKE(qkv, pp__bf16, 3 * N * C);
    PP__GPT_TAKE(att, pp__bf16, att);
    PP__GPT_TAKE(atty, pp__bf16, N * C);
    PP__GPT_TAKE(res2, pp__bf16, N * C);
    PP__GPT_TAKE(ln2, pp__bf16, N * C);
    PP__GPT_TAKE(ln2_mean, float, N);
    PP__GPT_TAKE(ln2_rstd, float, N);
    PP__GPT_TAKE(fch, pp__bf16, 4 * N * C);
    PP__GPT_TAKE(fch_gelu, pp__bf16, 4 * N * C);
    PP__GPT_TAKE(res3, pp__bf16, N * C);
    PP__GPT_TAKE(dres3, pp__bf16, N * C);
    PP__GPT_TAKE(dfch, pp__bf16, 4 * N * C);
    PP__GPT_TAKE(dln2, pp__bf16, N * C);
    PP__GPT_TAKE(dres2, pp__bf16, N * C);
    PP__GPT_TAKE(dqkv, pp__bf16, 3 * N * C);
    PP__GPT_TAKE(dln1, pp__bf16, N * C);
    return cur;
}

static inline size_t pp__gpt_head_layout(const pp__gpt_dims *c, char *base, pp__gpt_head *p) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels, V = (size_t)c->vocab, cur = 0;
    PP__GPT_TAKE(lnf, pp__bf16, N * C);
    PP__GPT_TAKE(lnf_mean, float, N);
    PP__GPT_TAKE(lnf_rstd, float, N);
    PP__GPT_TAKE(logits, pp__bf16, N * V);
    PP__GPT_TAKE(losses, float, N);
    PP__GPT_TAKE(lse, float, N);
    PP__GPT_TAKE(dlnf, pp__bf16, N * C);
    return cur;
}

/* one boundary tensor: N*C bf16 */
static inline size_t pp__gpt_io_bytes(const pp__gpt_dims *c) {
    return (size_t)c->batch * c->seq * c->channels * sizeof(pp__bf16);
}

static inline size_t pp__gpt_slot_bytes(const pp__gpt_dims *c, const pp__gpt_stage *g) {
    return 2 * pp__gpt_round256(pp__gpt_io_bytes(c)) + (size_t)g->num_layers * pp__gpt_block_layout(c, NULL, NULL) +
           (g->has_head ? pp__gpt_head_layout(c, NULL, NULL) : 0);
}

static inline pp__gpt_block pp__gpt_block_at(const pp__gpt_dims *c, void *slot, int l) {
    pp__gpt_block b;
    size_t bb = pp__gpt_block_layout(c, NULL, NULL);
    pp__gpt_block_layout(c, (char *)slot + 2 * pp__gpt_round256(pp__gpt_io_bytes(c)) + (size_t)l * bb, &b);
    return b;
}

static inline pp__gpt_head pp__gpt_head_at(const pp__gpt_dims *c, const pp__gpt_stage *g, void *slot) {
    pp__gpt_head h;
    size_t bb = pp__gpt_block_layout(c, NULL, NULL);
    pp__gpt_head_layout(c, (char *)slot + 2 * pp__gpt_round256(pp__gpt_io_bytes(c)) + (size_t)g->num_layers * bb, &h);
    return h;
}

static inline void *pp__gpt_slot_input(const pp__gpt_dims *c, const pp__gpt_stage *g, void *slot) {
    (void)c;
    (void)g;
    return slot;
}
static inline void *pp__gpt_slot_dinput(const pp__gpt_dims *c, const pp__gpt_stage *g, void *slot) {
    (void)g;
    return (char *)slot + pp__gpt_round256(pp__gpt_io_bytes(c));
}
/* the last block's res3 (the input itself for a stage with no layers) */
static inline void *pp__gpt_slot_output(const pp__gpt_dims *c, const pp__gpt_stage *g, void *slot) {
    if (g->has_head) return NULL;
    if (g->num_layers == 0) return slot;
    return pp__gpt_block_at(c, slot, g->num_layers - 1).res3;
}
/* the last block's dres3, which B reads in place (dinput for a stage with no layers) */
static inline void *pp__gpt_slot_doutput(const pp__gpt_dims *c, const pp__gpt_stage *g, void *slot) {
    if (g->has_head) return NULL;
    if (g->num_layers == 0) return pp__gpt_slot_dinput(c, g, slot);
    return pp__gpt_block_at(c, slot, g->num_layers - 1).dres3;
}

/* workspace: B's scratch (dfch_gelu, reused for datty; attention row sums)
   then W's partial sums */
typedef struct pp__gpt_ws {
    pp__bf16 *tmp; /* 4*N*C */
    char *srow;    /* attention's scratch: pp__gpt_attention_ws_bytes (row sums, or the T x T buffers) */
    float *part;
} pp__gpt_ws;

static inline size_t pp__gpt_ws_layout(const pp__gpt_dims *c, const pp__gpt_stage *g, char *base, pp__gpt_ws *p) {
    int N = c->batch * c->seq, C = c->channels, V = c->vocab;
    size_t cur = 0, part = 0, x;
#define PP__GPT_MAXW(v) (x = (v), part = x > part ? x : part)
    if (g->num_layers > 0) {
        PP__GPT_MAXW(2 * (size_t)pp__gpt_row_chunks(N) * C);
        PP__GPT_MAXW(pp__matmul_w_ws_floats(N, C, 3 * C));
        PP__GPT_MAXW(pp__matmul_w_ws_floats(N, C, C));
        PP__GPT_MAXW(pp__matmul_w_ws_floats(N, C, 4 * C));
        PP__GPT_MAXW(pp__matmul_w_ws_floats(N, 4 * C, C));
    }
    if (g->has_head) {
        PP__GPT_MAXW(2 * (size_t)pp__gpt_row_chunks(N) * C);
        PP__GPT_MAXW(pp__matmul_w_ws_floats(N, C, V));
    }
#undef PP__GPT_MAXW
    PP__GPT_TAKE(tmp, pp__bf16, g->num_layers > 0 ? 4 * (size_t)N * C : 0);
    PP__GPT_TAKE(srow, char, g->num_layers > 0 ? pp__gpt_attention_ws_bytes(PP__ATT_ENGINE, c->batch, c->seq, c->heads) : 0);
    PP__GPT_TAKE(part, float, part);
    return cur < 256 ? 256 : cur;
}
#undef PP__GPT_TAKE

static inline size_t pp__gpt_workspace_bytes(const pp__gpt_dims *c, const pp__gpt_stage *g) {
    return pp__gpt_ws_layout(c, g, NULL, NULL);
}

static inline int pp__gpt_dims_ok(const pp__gpt_dims *c) {
    return c->vocab > 0 && c->seq > 0 && c->channels > 0 && c->heads > 0 && c->channels % c->heads == 0 &&
           c->layers >= 0 && c->batch > 0;
}

/* F (gpt_stage_forward) */
static inline cudaError_t pp__gpt_forward(const pp__gpt_dims *c, const pp__gpt_stage *g, const pp__bf16 *w,
                                          void *slot, const int *tokens, const int *targets, float *loss,
                                          void *workspace, cudaStream_t stream) {
    size_t off[PP__GPT_NUM_TENSORS], per[PP__GPT_NUM_TENSORS];
    int B = c->batch, T = c->seq, C = c->channels, NH = c->heads, V = c->vocab, N = B * T;
    pp__bf16 *x = (pp__bf16 *)pp__gpt_slot_input(c, g, slot);
    pp__gpt_ws ws;
    if (!pp__gpt_dims_ok(c)) return cudaErrorInvalidValue;
    pp__gpt_param_layout(c, off, per);
    pp__gpt_ws_layout(c, g, (char *)workspace, &ws);
#define PP__GPT_W(t, l) (w + off[t] + (size_t)(l) * per[t])
    if (g->has_embed) PP__GPT_TRY(pp__gpt_encoder_forward(x, tokens, w + off[PP__GPT_WTE], w + off[PP__GPT_WPE], B, T, C, V, stream));
    for (int l = 0; l < g->num_layers; l++) {
        int L = g->first_layer + l;
        pp__gpt_block a = pp__gpt_block_at(c, slot, l);
        PP__GPT_TRY(pp__gpt_layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, x, PP__GPT_W(PP__GPT_LN1W, L), PP__GPT_W(PP__GPT_LN1B, L), N,
                                          C, stream));
        PP__GPT_TRY(pp__gpt_matmul_forward(a.qkv, a.ln1, PP__GPT_W(PP__GPT_QKVW, L), PP__GPT_W(PP__GPT_QKVB, L), NULL, N, C, 3 * C,
                                       stream));
        PP__GPT_TRY(pp__gpt_attention_forward_ex(PP__ATT_ENGINE, a.atty, a.att, a.qkv, B, T, C, NH, ws.srow, stream));
        PP__GPT_TRY(pp__gpt_matmul_forward(a.res2, a.atty, PP__GPT_W(PP__GPT_ATTPROJW, L), PP__GPT_W(PP__GPT_ATTPROJB, L), x, N, C, C,
                                       stream));
        PP__GPT_TRY(pp__gpt_layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2, PP__GPT_W(PP__GPT_LN2W, L),
                                          PP__GPT_W(PP__GPT_LN2B, L), N, C, stream));
        PP__GPT_TRY(pp__gpt_matmul_forward(a.fch, a.ln2, PP__GPT_W(PP__GPT_FCW, L), PP__GPT_W(PP__GPT_FCB, L), NULL, N, C, 4 * C, stream));
        PP__GPT_TRY(pp__gpt_gelu_forward(a.fch_gelu, a.fch, 4 * (size_t)N * C, stream));
        PP__GPT_TRY(pp__gpt_matmul_forward(a.res3, a.fch_gelu, PP__GPT_W(PP__GPT_FCPROJW, L), PP__GPT_W(PP__GPT_FCPROJB, L), a.res2, N,
                                       4 * C, C, stream));
        x = a.res3;
    }
    if (g->has_head) {
        pp__gpt_head h = pp__gpt_head_at(c, g, slot);
        PP__GPT_TRY(pp__gpt_layernorm_forward(h.lnf, h.lnf_mean, h.lnf_rstd, x, w + off[PP__GPT_LNFW], w + off[PP__GPT_LNFB], N, C,
                                          stream));
        PP__GPT_TRY(pp__gpt_matmul_forward(h.logits, h.lnf, w + off[PP__GPT_LMW], w + off[PP__GPT_LMB], NULL, N, C, V, stream));
        PP__GPT_TRY(pp__gpt_crossentropy_forward(h.losses, h.lse, h.logits, targets, N, V, stream));
        if (loss) {
            pp__loss_mean<<<1, 1024, 0, stream>>>(loss, h.losses, N);
            PP__GPT_CHECK_LAUNCH();
        }
    }
    return cudaSuccess;
}

/* B (gpt_stage_backward_input) */
static inline cudaError_t pp__gpt_backward_input(const pp__gpt_dims *c, const pp__gpt_stage *g, const pp__bf16 *w,
                                                 void *slot, const int *targets, float dloss, void *workspace,
                                                 cudaStream_t stream) {
    size_t off[PP__GPT_NUM_TENSORS], per[PP__GPT_NUM_TENSORS];
    int B = c->batch, T = c->seq, C = c->channels, NH = c->heads, V = c->vocab, N = B * T;
    pp__gpt_ws ws;
    if (!pp__gpt_dims_ok(c)) return cudaErrorInvalidValue;
    pp__gpt_param_layout(c, off, per);
    pp__gpt_ws_layout(c, g, (char *)workspace, &ws);
    if (g->has_head) {
        pp__gpt_head h = pp__gpt_head_at(c, g, slot);
        /* the gradient for the last block's output (or the stage input) */
        pp__bf16 *dx = g->num_layers > 0 ? pp__gpt_block_at(c, slot, g->num_layers - 1).dres3
                                         : (pp__bf16 *)pp__gpt_slot_dinput(c, g, slot);
        const pp__bf16 *x = g->num_layers > 0 ? pp__gpt_block_at(c, slot, g->num_layers - 1).res3
                                              : (const pp__bf16 *)pp__gpt_slot_input(c, g, slot);
        PP__GPT_TRY(pp__gpt_crossentropy_backward_input(h.logits, h.logits, h.lse, targets, dloss, N, V, stream));
        PP__GPT_TRY(pp__gpt_matmul_backward_input(h.dlnf, h.logits, w + off[PP__GPT_LMW], N, C, V, stream));
        PP__GPT_TRY(pp__gpt_layernorm_backward_input(dx, NULL, h.dlnf, x, h.lnf_mean, h.lnf_rstd, w + off[PP__GPT_LNFW], N, C,
                                                 stream));
    } /* else the gradient for the output is already in place (pp__gpt_slot_doutput) */
    for (int l = g->num_layers - 1; l >= 0; l--) {
        int L = g->first_layer + l;
        pp__gpt_block a = pp__gpt_block_at(c, slot, l);
        const pp__bf16 *x = l > 0 ? pp__gpt_block_at(c, slot, l - 1).res3 : (const pp__bf16 *)pp__gpt_slot_input(c, g, slot);
        pp__bf16 *dxin = l > 0 ? pp__gpt_block_at(c, slot, l - 1).dres3 : (pp__bf16 *)pp__gpt_slot_dinput(c, g, slot);
        /* res3 = res2 + fcproj(gelu(fc(ln2(res2)))); ws.tmp = dfch_gelu */
        PP__GPT_TRY(pp__gpt_matmul_backward_input(ws.tmp, a.dres3, PP__GPT_W(PP__GPT_FCPROJW, L), N, 4 * C, C, stream));
        PP__GPT_TRY(pp__gpt_gelu_backward_input(a.dfch, a.fch, ws.tmp, 4 * (size_t)N * C, stream));
        PP__GPT_TRY(pp__gpt_matmul_backward_input(a.dln2, a.dfch, PP__GPT_W(PP__GPT_FCW, L), N, C, 4 * C, stream));
        PP__GPT_TRY(pp__gpt_layernorm_backward_input(a.dres2, a.dres3, a.dln2, a.res2, a.ln2_mean, a.ln2_rstd,
                                                 PP__GPT_W(PP__GPT_LN2W, L), N, C, stream));
        /* res2 = x + attproj(attention(qkv(ln1(x)))); ws.tmp = datty */
        PP__GPT_TRY(pp__gpt_matmul_backward_input(ws.tmp, a.dres2, PP__GPT_W(PP__GPT_ATTPROJW, L), N, C, C, stream));
        PP__GPT_TRY(pp__gpt_attention_backward_ex(PP__ATT_ENGINE, a.dqkv, ws.tmp, a.qkv, a.att, B, T, C, NH, ws.srow,
                                                  stream));
        PP__GPT_TRY(pp__gpt_matmul_backward_input(a.dln1, a.dqkv, PP__GPT_W(PP__GPT_QKVW, L), N, C, 3 * C, stream));
        PP__GPT_TRY(pp__gpt_layernorm_backward_input(dxin, a.dres2, a.dln1, x, a.ln1_mean, a.ln1_rstd, PP__GPT_W(PP__GPT_LN1W, L),
                                                 N, C, stream));
    }
    return cudaSuccess;
}
#undef PP__GPT_W

/* W (gpt_stage_backward_weight): grad += this stage's weight gradients */
static inline cudaError_t pp__gpt_backward_weight(const pp__gpt_dims *c, const pp__gpt_stage *g, float *grad,
                                                  void *slot, const int *tokens, void *workspace,
                                                  cudaStream_t stream) {
    size_t off[PP__GPT_NUM_TENSORS], per[PP__GPT_NUM_TENSORS];
    int B = c->batch, T = c->seq, C = c->channels, V = c->vocab, N = B * T;
    pp__gpt_ws ws;
    if (!pp__gpt_dims_ok(c)) return cudaErrorInvalidValue;
    pp__gpt_param_layout(c, off, per);
    pp__gpt_ws_layout(c, g, (char *)workspace, &ws);
#define PP__GPT_G(t, l) (grad + off[t] + (size_t)(l) * per[t])
    for (int l = 0; l < g->num_layers; l++) {
        int L = g->first_layer + l;
        pp__gpt_block a = pp__gpt_block_at(c, slot, l);
        const pp__bf16 *x = l > 0 ? pp__gpt_block_at(c, slot, l - 1).res3 : (const pp__bf16 *)pp__gpt_slot_input(c, g, slot);
        PP__GPT_TRY(pp__gpt_layernorm_backward_weight(PP__GPT_G(PP__GPT_LN1W, L), PP__GPT_G(PP__GPT_LN1B, L), a.dln1, x, a.ln1_mean,
                                                  a.ln1_rstd, N, C, ws.part, stream));
        PP__GPT_TRY(pp__gpt_matmul_backward_weight(PP__GPT_G(PP__GPT_QKVW, L), PP__GPT_G(PP__GPT_QKVB, L), a.dqkv, a.ln1, N, C, 3 * C,
                                               ws.part, stream));
        PP__GPT_TRY(pp__gpt_matmul_backward_weight(PP__GPT_G(PP__GPT_ATTPROJW, L), PP__GPT_G(PP__GPT_ATTPROJB, L), a.dres2, a.atty, N, C, C,
                                               ws.part, stream));
        PP__GPT_TRY(pp__gpt_layernorm_backward_weight(PP__GPT_G(PP__GPT_LN2W, L), PP__GPT_G(PP__GPT_LN2B, L), a.dln2, a.res2, a.ln2_mean,
                                                  a.ln2_rstd, N, C, ws.part, stream));
        PP__GPT_TRY(pp__gpt_matmul_backward_weight(PP__GPT_G(PP__GPT_FCW, L), PP__GPT_G(PP__GPT_FCB, L), a.dfch, a.ln2, N, C, 4 * C,
                                               ws.part, stream));
        PP__GPT_TRY(pp__gpt_matmul_backward_weight(PP__GPT_G(PP__GPT_FCPROJW, L), PP__GPT_G(PP__GPT_FCPROJB, L), a.dres3, a.fch_gelu, N,
                                               4 * C, C, ws.part, stream));
    }
#undef PP__GPT_G
    if (g->has_head) {
        pp__gpt_head h = pp__gpt_head_at(c, g, slot);
        const pp__bf16 *x = g->num_layers > 0 ? pp__gpt_block_at(c, slot, g->num_layers - 1).res3
                                              : (const pp__bf16 *)pp__gpt_slot_input(c, g, slot);
        PP__GPT_TRY(pp__gpt_matmul_backward_weight(grad + off[PP__GPT_LMW], grad + off[PP__GPT_LMB], h.logits, h.lnf, N, C, V,
                                               ws.part, stream));
        PP__GPT_TRY(pp__gpt_layernorm_backward_weight(grad + off[PP__GPT_LNFW], grad + off[PP__GPT_LNFB], h.dlnf, x, h.lnf_mean,
                                                  h.lnf_rstd, N, C, ws.part, stream));
    }
    if (g->has_embed)
        PP__GPT_TRY(pp__gpt_encoder_backward_weight(grad + off[PP__GPT_WTE], grad + off[PP__GPT_WPE],
                                                (const pp__bf16 *)pp__gpt_slot_dinput(c, g, slot), tokens, B, T, C, V,
                                                stream));
    return cudaSuccess;
}

static inline cudaError_t pp__gpt_to_bf16(pp__bf16 *dst, const float *src, size_t n, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    pp__to_bf16<<<pp__gpt_grid(n, 256), 256, 0, stream>>>(dst, src, n);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

/* t: the step, from 1 */
static inline cudaError_t pp__gpt_adamw(float *master, const float *grad, float *m, float *v, size_t n, float lr,
                                        float beta1, float beta2, float eps, float weight_decay, int t,
                                        cudaStream_t stream) {
    float c1 = (float)(1.0 - pow((double)beta1, (double)t)), c2 = (float)(1.0 - pow((double)beta2, (double)t));
    if (n == 0) return cudaSuccess;
    pp__adamw<<<pp__gpt_grid(n, 256), 256, 0, stream>>>(master, grad, m, v, n, lr, beta1, beta2, eps, weight_decay, c1,
                                                      c2);
    PP__GPT_CHECK_LAUNCH();
    return cudaSuccess;
}

#endif /* PP_CUDA_GPT_CUH */

/*
MIT License

Copyright (c) 2026 the pp_sched authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
*/
