/* kernel_profile.cu - one F, B and W of a one-block GPT stage (embedding,
   block, head) through the kernels of pp_cuda_gpt.cuh, for the emulator's
   counters (make kernel-report runs it with PP_EMU_PROFILE=path under
   emu/gpu; the counters are documented in pp_emu.cpp). Shape:
   vocab 256, T 64, C 128, 4 heads, batch 2: N = 128 rows, the matmuls'
   full 128-row tiles. Not a benchmark: the emulator has no timing. */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#include "../pp_cuda_gpt.cuh"
#include "bench_dev.h"

int main(void) {
    pp__gpt_dims d = {256, 64, 128, 4, 1, 2};
    pp__gpt_stage s = pp__gpt_stage_of(&d, 0, 1);
    size_t P = pp__gpt_param_count(&d), sb = pp__gpt_slot_bytes(&d, &s), wb = pp__gpt_workspace_bytes(&d, &s);
    int N = d.seq * d.batch;
    pp__bf16 *w = dev_bf16(P, 0.1f);
    float *grad, *loss;
    int *tok;
    void *slot, *ws;
    std::vector<int> ht((size_t)N);
    for (int i = 0; i < N; i++) ht[(size_t)i] = (i * 7) % d.vocab;
    cudaMalloc(&grad, P * sizeof(float));
    cudaMemset(grad, 0, P * sizeof(float));
    cudaMalloc(&loss, sizeof(float));
    cudaMalloc(&tok, (size_t)N * sizeof(int));
    cudaMemcpy(tok, ht.data(), (size_t)N * sizeof(int), cudaMemcpyHostToDevice);
    cudaMalloc(&slot, sb);
    cudaMalloc(&ws, wb);
    pp__gpt_forward(&d, &s, w, slot, tok, tok, loss, ws, 0);
    pp__gpt_backward_input(&d, &s, w, slot, tok, 1.0f / (float)N, ws, 0);
    pp__gpt_backward_weight(&d, &s, grad, slot, tok, ws, 0);
    if (cudaDeviceSynchronize() != cudaSuccess) { printf("kernel_profile: a kernel failed\n"); return 1; }
    printf("kernel_profile: F+B+W of a one-block stage (vocab %d, T %d, C %d, %d heads, batch %d)\n", d.vocab, d.seq,
           d.channels, d.heads, d.batch);
    return 0;
}
