/* bench_emu.cu - how fast the CUDA emulator (emu/gpu) runs the real
   kernels of pp_cuda_gpt.cuh on the CPU: CPU seconds per call, best of 3.

   Build and run (make bench-emu does both; no GPU, no nvcc needed):
       sh emu/gpu/build.sh emu-out "" bench && emu-out/bench_emu
   Prints one line per case: the matmul forward on the mma.sync engine at
   128^3 and 256^3, the WMMA engine at 128^3, layernorm forward at 4096 x
   768, and a whole F+B+W of one GPT block (T=64, C=128), with the checkers
   on (the default) and off (PP_EMU_CHECK=0 in the environment turns them off
   for the whole run, so run it twice to compare). */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vector>

#include "../pp_cuda_gpt.cuh"
#include "bench_dev.h"

static double cpu_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* best of 3 CPU seconds of f() followed by a device synchronize */
template <class F> static double best3(F f) {
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = cpu_s();
        f();
        if (cudaDeviceSynchronize() != cudaSuccess) { printf("bench_emu: a kernel failed\n"); exit(1); }
        double t = cpu_s() - t0;
        if (t < best) best = t;
    }
    return best;
}

int main(void) {
    const char *chk = getenv("PP_EMU_CHECK");
    int on = !(chk && atoi(chk) == 0);
    printf("bench_emu: CPU seconds per call, best of 3, checkers %s\n", on ? "on" : "off (PP_EMU_CHECK=0)");
    int sizes[2] = {128, 256};
    for (int k = 0; k < 2; k++) {
        int n = sizes[k];
        pp__bf16 *a = dev_bf16((size_t)n * n, 2), *w = dev_bf16((size_t)n * n, 1), *o = dev_bf16((size_t)n * n, 0);
        double t = best3([&] { pp__gpt_matmul_forward_ex(1, o, a, w, NULL, NULL, n, n, n, 0); });
        printf("  matmul forward %d^3, mma.sync + ldmatrix + cp.async   %8.3f s\n", n, t);
        if (n == 128) {
            t = best3([&] { pp__gpt_matmul_forward_ex(0, o, a, w, NULL, NULL, n, n, n, 0); });
            printf("  matmul forward %d^3, WMMA                             %8.3f s\n", n, t);
        }
        cudaFree(a); cudaFree(w); cudaFree(o);
    }
    {
        int N = 4096, C = 768;
        pp__bf16 *x = dev_bf16((size_t)N * C, 2), *g = dev_bf16(C, 1), *b = dev_bf16(C, 1), *o = dev_bf16((size_t)N * C, 0);
        float *mean, *rstd;
        cudaMalloc(&mean, N * sizeof(float));
        cudaMalloc(&rstd, N * sizeof(float));
        double t = best3([&] { pp__gpt_layernorm_forward(o, mean, rstd, x, g, b, N, C, 0); });
        printf("  layernorm forward 4096 x 768                          %8.3f s\n", t);
    }
    {
        pp__gpt_dims d = {256, 64, 128, 4, 1, 1};
        pp__gpt_stage s = pp__gpt_stage_of(&d, 0, 1);
        size_t P = pp__gpt_param_count(&d), sb = pp__gpt_slot_bytes(&d, &s), wb = pp__gpt_workspace_bytes(&d, &s);
        pp__bf16 *w = dev_bf16(P, 0.1f);
        float *grad, *loss;
        int *tok;
        void *slot, *ws;
        std::vector<int> ht(64);
        for (int i = 0; i < 64; i++) ht[i] = (i * 7) % 256;
        cudaMalloc(&grad, P * sizeof(float));
        cudaMemset(grad, 0, P * sizeof(float));
        cudaMalloc(&loss, sizeof(float));
        cudaMalloc(&tok, 64 * sizeof(int));
        cudaMemcpy(tok, ht.data(), 64 * sizeof(int), cudaMemcpyHostToDevice);
        cudaMalloc(&slot, sb);
        cudaMalloc(&ws, wb);
        double t = best3([&] {
            pp__gpt_forward(&d, &s, w, slot, tok, tok, loss, ws, 0);
            pp__gpt_backward_input(&d, &s, w, slot, tok, 1.0f / 64, ws, 0);
            pp__gpt_backward_weight(&d, &s, grad, slot, tok, ws, 0);
        });
        printf("  F+B+W of a 1-block GPT (T=64, C=128, V=256, batch 1)  %8.3f s\n", t);
    }
    return 0;
}
