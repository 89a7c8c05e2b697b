/* bench_dev.h - device buffers for the kernel benchmarks and profiles
   (bench/bench_emu.cu, bench/kernel_profile.cu): host code only, so nvcc
   and the CUDA emulator (emu/gpu/build.sh copies it next to the rewritten
   sources) both compile it as it is. Include it after pp_cuda_gpt.cuh. */
#ifndef PP_BENCH_DEV_H
#define PP_BENCH_DEV_H

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <vector>

/* n bf16 values spread over [-scale/2, scale/2) by a multiplicative hash of
   the index (no RNG state, the same on every build), on the device; exits on
   an allocation failure, as a benchmark may */
static pp__bf16 *dev_bf16(size_t n, float scale) {
    std::vector<pp__bf16> h(n);
    for (size_t i = 0; i < n; i++) h[i] = __float2bfloat16(scale * (float)((i * 2654435761u) % 1000) / 1000.0f - scale / 2);
    pp__bf16 *d;
    if (cudaMalloc(&d, n * sizeof(pp__bf16)) != cudaSuccess) exit(1);
    cudaMemcpy(d, h.data(), n * sizeof(pp__bf16), cudaMemcpyHostToDevice);
    return d;
}

#endif
