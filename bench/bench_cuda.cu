/* bench_cuda.cu - how fast pp_cuda_gpt.cuh's kernels are: per-kernel
   TFLOP/s and the share of the GPU's dense bf16 peak, our matmul next to
   cuBLAS on the same shapes and layouts (cuBLAS only here, as the yardstick),
   and the F, B, W times of whole stages of a GPT-2 small sized model.

   Build and run (make bench-cuda-kernels does both):
       nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a \
            -gencode arch=compute_80,code=compute_80 -o bench_cuda bench/bench_cuda.cu -lcublas
       ./bench_cuda [--peak TFLOPS] [--quick] [--wmma]
   Tuning the matmul: add -DPP__MM_BK=64 -DPP__MM_STAGES=4 (for example) to
   the nvcc line; the test should be rerun with the same flags.

   --peak sets the dense bf16 peak where the table below does not know the
   GPU; --quick runs fewer shapes and iterations; --wmma adds the matmul
   table of the WMMA engine (the stages use the default, mma.sync).
   Attention runs on both engines; the stages use PP__ATT_ENGINE (default
   0, CUDA cores; build with -DPP__ATT_ENGINE=1 for tensor cores). Without a GPU it prints a
   skip line and exits 0. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pp_cuda_gpt.cuh"

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define CB(call)                                                                           \
    do {                                                                                   \
        cublasStatus_t s_ = (call);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* dense bf16 tensor-core peak (fp32 accumulate, no sparsity), TFLOP/s, from
   the vendors' data sheets */
static double peak_of(const cudaDeviceProp *p) {
    const char *n = p->name;
    if (strstr(n, "H100") || strstr(n, "H200") || strstr(n, "GH200")) {
        if (strstr(n, "PCIe")) return 756;
        if (strstr(n, "NVL")) return 835;
        return 989; /* SXM (132 SMs at 1.83 GHz boost) */
    }
    if (strstr(n, "A100")) return 312;
    if (strstr(n, "L40S")) return 362;
    if (strstr(n, "A10G") || strstr(n, "A10")) return 125;
    return 0;
}

static __global__ void bench_fill(pp__bf16 *p, size_t n, unsigned seed, float scale) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 15;
        x *= 2246822519u;
        x ^= x >> 13;
        p[i] = __float2bfloat16(scale * ((float)(x & 0xFFFF) / 32768.0f - 1.0f));
    }
}
static pp__bf16 *rand_bf(size_t n, float scale) {
    static unsigned seed = 1;
    pp__bf16 *p;
    CK(cudaMalloc(&p, n * sizeof(pp__bf16)));
    bench_fill<<<1024, 256>>>(p, n, seed++ * 0x9E3779B9u, scale);
    CK(cudaGetLastError());
    return p;
}
static float *zeros_f(size_t n) {
    float *p;
    CK(cudaMalloc(&p, n * sizeof(float)));
    CK(cudaMemset(p, 0, n * sizeof(float)));
    return p;
}

static int g_iters = 20;
static cudaEvent_t g_e0, g_e1;

/* average milliseconds of one call of fn (a lambda returning cudaError_t) */
template <typename F> static double time_ms(F fn) {
    for (int i = 0; i < 2; i++) CK(fn());
    CK(cudaEventRecord(g_e0));
    for (int i = 0; i < g_iters; i++) CK(fn());
    CK(cudaEventRecord(g_e1));
    CK(cudaEventSynchronize(g_e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, g_e0, g_e1));
    return ms / g_iters;
}

static double tflops(double flops, double ms) { return flops / (ms * 1e-3) / 1e12; }

static void matmuls(cublasHandle_t h, double peak, int quick, int engine) {
    const int N = 8192;
    const int Cs[] = {768, 1024, 4096};
    printf("\nmatmul (ours: %s bf16, %dx%dx%d tiles, %d stages), N = %d rows: TFLOP/s (share of peak) ours | "
           "cuBLAS | ours/cuBLAS\n", engine ? "mma.sync" : "WMMA", PP__MM_BM, PP__MM_BN, PP__MM_BK, PP__MM_STAGES, N);
    printf("%6s %6s   %-30s %-30s %-30s\n", "IC", "OC", "forward (inp w^T + bias)", "B (dout w)", "W (dw += dout^T inp)");
    for (int ci = 0; ci < (quick ? 1 : 3); ci++) {
        int C = Cs[ci];
        int shapes[4][2] = {{C, 3 * C}, {C, C}, {C, 4 * C}, {4 * C, C}};
        for (int s = 0; s < 4; s++) {
            int IC = shapes[s][0], OC = shapes[s][1];
            double fl = 2.0 * N * IC * OC, t[3][2];
            pp__bf16 *inp = rand_bf((size_t)N * IC, 1), *w = rand_bf((size_t)OC * IC, 0.05f),
                     *bias = rand_bf(OC, 0.1f), *out = rand_bf((size_t)N * OC, 1), *dinp = rand_bf((size_t)N * IC, 1);
            float *dw = zeros_f((size_t)OC * IC), *db = zeros_f(OC), *ws = zeros_f(pp__matmul_w_ws_floats(N, IC, OC));
            const float one = 1, zero = 0;
            t[0][0] = time_ms([&] { return pp__gpt_matmul_forward_ex(engine, out, inp, w, bias, NULL, N, IC, OC, 0); });
            t[0][1] = time_ms([&] {
                CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, IC, &one, w, CUDA_R_16BF, IC, inp, CUDA_R_16BF, IC,
                                &zero, out, CUDA_R_16BF, OC, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                return cudaGetLastError();
            });
            t[1][0] = time_ms([&] { return pp__gpt_matmul_backward_input_ex(engine, dinp, out, w, N, IC, OC, 0); });
            t[1][1] = time_ms([&] {
                CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, IC, N, OC, &one, w, CUDA_R_16BF, IC, out, CUDA_R_16BF, OC,
                                &zero, dinp, CUDA_R_16BF, IC, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                return cudaGetLastError();
            });
            t[2][0] = time_ms([&] {
                return pp__gpt_matmul_backward_weight_ex(engine, dw, NULL, out, inp, N, IC, OC, ws, 0);
            });
            t[2][1] = time_ms([&] {
                CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, N, &one, inp, CUDA_R_16BF, IC, out, CUDA_R_16BF,
                                OC, &one, dw, CUDA_R_32F, IC, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                return cudaGetLastError();
            });
            printf("%6d %6d", IC, OC);
            for (int k = 0; k < 3; k++) {
                double a = tflops(fl, t[k][0]), b = tflops(fl, t[k][1]);
                char cell[64];
                snprintf(cell, sizeof cell, "%5.0f (%2.0f%%) | %5.0f | %3.0f%%", a, peak > 0 ? 100 * a / peak : 0.0, b,
                         100 * a / b);
                printf("   %-30s", cell);
            }
            printf("\n");
            cudaFree(inp); cudaFree(w); cudaFree(bias); cudaFree(out); cudaFree(dinp); cudaFree(dw); cudaFree(db);
            cudaFree(ws);
        }
    }
}

static void other_kernels(double peak) {
    const int B = 8, T = 1024, C = 768, NH = 12, V = 50257, N = B * T;
    size_t NC = (size_t)N * C, A = (size_t)B * NH * T * T;
    pp__bf16 *x = rand_bf(NC, 1), *y = rand_bf(NC, 1), *lw = rand_bf(C, 1), *lb = rand_bf(C, 0.1f);
    pp__bf16 *qkv = rand_bf(3 * NC, 1), *dqkv = rand_bf(3 * NC, 1), *att = rand_bf(A, 1), *h4 = rand_bf(4 * NC, 1),
             *g4 = rand_bf(4 * NC, 1), *logits = rand_bf((size_t)N * V, 2);
    float *mean = zeros_f(N), *rstd = zeros_f(N), *dw = zeros_f(C), *db = zeros_f(C), *losses = zeros_f(N),
          *lse = zeros_f(N), *part = zeros_f(2 * (size_t)pp__gpt_row_chunks(N) * C);
    int *tgt;
    CK(cudaMalloc(&tgt, N * sizeof(int)));
    CK(cudaMemset(tgt, 0, N * sizeof(int)));
    double hs = C / NH, att_f = 2.0 * 2.0 * B * NH * (double)T * (T + 1) / 2 * hs; /* QK^T and AV, causal half */
    double ms;
    printf("\nother kernels at B=%d T=%d C=%d NH=%d V=%d (N = %d rows); * = the engine the stages use\n", B, T, C, NH,
           V, N);
    ms = time_ms([&] { return pp__gpt_layernorm_forward(y, mean, rstd, x, lw, lb, N, C, 0); });
    printf("  %-34s %8.3f ms  %6.0f GB/s\n", "layernorm forward", ms, 2.0 * NC * 2 / (ms * 1e6));
    ms = time_ms([&] { return pp__gpt_layernorm_backward_input(y, x, y, x, mean, rstd, lw, N, C, 0); });
    printf("  %-34s %8.3f ms  %6.0f GB/s\n", "layernorm B", ms, 4.0 * NC * 2 / (ms * 1e6));
    ms = time_ms([&] { return pp__gpt_layernorm_backward_weight(dw, db, y, x, mean, rstd, N, C, part, 0); });
    printf("  %-34s %8.3f ms  %6.0f GB/s\n", "layernorm W", ms, 2.0 * NC * 2 / (ms * 1e6));
    void *aws;
    CK(cudaMalloc(&aws, pp__gpt_attention_ws_bytes(1, B, T, NH)));
    for (int e = 0; e < 2; e++) {
        const char *en = e ? "tensor cores" : "CUDA cores";
        char label[64];
        ms = time_ms([&] { return pp__gpt_attention_forward_ex(e, x, att, qkv, B, T, C, NH, aws, 0); });
        snprintf(label, sizeof label, "attention forward, %s%s", en, e == PP__ATT_ENGINE ? " *" : "");
        printf("  %-34s %8.3f ms  %6.1f TFLOP/s (%.1f%% of peak)\n", label, ms, tflops(att_f, ms),
               peak > 0 ? 100 * tflops(att_f, ms) / peak : 0.0);
        ms = time_ms([&] { return pp__gpt_attention_backward_ex(e, dqkv, y, qkv, att, B, T, C, NH, aws, 0); });
        snprintf(label, sizeof label, "attention B, %s%s", en, e == PP__ATT_ENGINE ? " *" : "");
        printf("  %-34s %8.3f ms  %6.1f TFLOP/s (%.1f%% of peak; 2x forward's flops)\n", label, ms,
               tflops(2 * att_f, ms), peak > 0 ? 100 * tflops(2 * att_f, ms) / peak : 0.0);
    }
    cudaFree(aws);
    ms = time_ms([&] { return pp__gpt_gelu_forward(g4, h4, 4 * NC, 0); });
    printf("  %-34s %8.3f ms  %6.0f GB/s\n", "gelu forward", ms, 2.0 * 4 * NC * 2 / (ms * 1e6));
    ms = time_ms([&] { return pp__gpt_gelu_backward_input(g4, h4, g4, 4 * NC, 0); });
    printf("  %-34s %8.3f ms  %6.0f GB/s\n", "gelu B", ms, 3.0 * 4 * NC * 2 / (ms * 1e6));
    ms = time_ms([&] { return pp__gpt_crossentropy_forward(losses, lse, logits, tgt, N, V, 0); });
    printf("  %-34s %8.3f ms  %6.0f GB/s\n", "cross-entropy forward", ms, 2.0 * N * V * 2 / (ms * 1e6));
    ms = time_ms([&] { return pp__gpt_crossentropy_backward_input(logits, logits, lse, tgt, 0.0f, N, V, 0); });
    printf("  %-34s %8.3f ms  %6.0f GB/s\n", "cross-entropy B (in place)", ms, 2.0 * N * V * 2 / (ms * 1e6));
    cudaFree(x); cudaFree(y); cudaFree(lw); cudaFree(lb); cudaFree(qkv); cudaFree(dqkv); cudaFree(att); cudaFree(h4);
    cudaFree(g4); cudaFree(logits); cudaFree(mean); cudaFree(rstd); cudaFree(dw); cudaFree(db); cudaFree(losses);
    cudaFree(lse); cudaFree(part); cudaFree(tgt);
}

/* F, B, W of each stage of a 12-layer GPT-2 small split into 4 stages */
static void stages(double peak, int quick) {
    pp__gpt_dims d = {50257, 1024, 768, 12, 12, quick ? 4 : 8};
    int S = 4, N = d.batch * d.seq;
    double C = d.channels, T = d.seq, V = d.vocab;
    size_t P = pp__gpt_param_count(&d);
    pp__bf16 *w = rand_bf(P, 0.02f);
    float *grad = zeros_f(P), *loss = zeros_f(1);
    int *tok;
    CK(cudaMalloc(&tok, N * sizeof(int)));
    CK(cudaMemset(tok, 0, N * sizeof(int)));
    printf("\nstages of GPT-2 small (V=%d T=%d C=%d NH=%d L=%d), microbatch B=%d (N = %d rows), %d stages\n", d.vocab,
           d.seq, d.channels, d.heads, d.layers, d.batch, N, S);
    printf("  %-28s %10s %10s %10s   (TFLOP/s of the matmuls and attention each pass does)\n", "stage", "F ms", "B ms",
           "W ms");
    for (int s = 0; s < S; s++) {
        if (quick && s == 1) continue;
        pp__gpt_stage g = pp__gpt_stage_of(&d, s, S);
        size_t sb = pp__gpt_slot_bytes(&d, &g), wb = pp__gpt_workspace_bytes(&d, &g);
        void *slot, *ws;
        CK(cudaMalloc(&slot, sb));
        CK(cudaMalloc(&ws, wb));
        CK(cudaMemset(slot, 0, sb));
        bench_fill<<<1024, 256>>>((pp__bf16 *)pp__gpt_slot_input(&d, &g, slot), (size_t)N * d.channels, 7, 1.0f);
        if (!g.has_head)
            bench_fill<<<1024, 256>>>((pp__bf16 *)pp__gpt_slot_doutput(&d, &g, slot), (size_t)N * d.channels, 9, 1e-3f);
        CK(cudaGetLastError());
        /* flops: per layer the four matmuls (24 N C^2) and attention (2 N T C causal); head 2 N C V */
        double mm = g.num_layers * 24.0 * N * C * C + (g.has_head ? 2.0 * N * C * V : 0);
        double at = g.num_layers * 2.0 * N * T * C;
        double tf = time_ms([&] { return pp__gpt_forward(&d, &g, w, slot, tok, tok, loss, ws, 0); });
        /* B overwrites the head's logits with their gradient: F once before every B */
        double tfb = time_ms([&] {
            cudaError_t e = pp__gpt_forward(&d, &g, w, slot, tok, tok, loss, ws, 0);
            return e ? e : pp__gpt_backward_input(&d, &g, w, slot, tok, 1.0f / N, ws, 0);
        });
        double tw = time_ms([&] { return pp__gpt_backward_weight(&d, &g, grad, slot, tok, ws, 0); });
        double tb = tfb - tf;
        char name[64];
        snprintf(name, sizeof name, "%d: layers %d-%d%s%s", s, g.first_layer, g.first_layer + g.num_layers - 1,
                 g.has_embed ? " +embed" : "", g.has_head ? " +head" : "");
        printf("  %-28s %10.2f %10.2f %10.2f   F %.0f, B %.0f, W %.0f TFLOP/s (%.0f%% / %.0f%% / %.0f%% of peak)\n",
               name, tf, tb, tw, tflops(mm + at, tf), tflops(mm + 2 * at, tb), tflops(mm, tw),
               peak > 0 ? 100 * tflops(mm + at, tf) / peak : 0.0, peak > 0 ? 100 * tflops(mm + 2 * at, tb) / peak : 0.0,
               peak > 0 ? 100 * tflops(mm, tw) / peak : 0.0);
        cudaFree(slot);
        cudaFree(ws);
    }
    cudaFree(w); cudaFree(grad); cudaFree(loss); cudaFree(tok);
}

int main(int argc, char **argv) {
    int n = 0, quick = 0, wmma = 0;
    double peak = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--peak") && i + 1 < argc) peak = atof(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--wmma")) wmma = 1;
        else {
            fprintf(stderr, "usage: %s [--peak TFLOPS] [--quick] [--wmma]\n", argv[0]);
            return 2;
        }
    }
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("[skip] bench_cuda: no CUDA device\n");
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    if (peak < 0) peak = peak_of(&prop);
    printf("bench_cuda on %s (sm_%d%d, %d SMs): dense bf16 peak %s", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, peak > 0 ? "" : "unknown (pass --peak TFLOPS)\n");
    if (peak > 0) printf("%.0f TFLOP/s\n", peak);
    if (quick) g_iters = 5;
    CK(cudaEventCreate(&g_e0));
    CK(cudaEventCreate(&g_e1));
    cublasHandle_t h;
    CB(cublasCreate(&h));
    matmuls(h, peak, quick, 1);
    if (wmma) matmuls(h, peak, quick, 0);
    other_kernels(peak);
    stages(peak, quick);
    cublasDestroy(h);
    return 0;
}
