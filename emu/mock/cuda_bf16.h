/* emu/mock/cuda_bf16.h: the mock model keeps its "bf16" weights in float */
#ifndef PP_CUDA_MOCK_BF16_H
#define PP_CUDA_MOCK_BF16_H
typedef float __nv_bfloat16;
#endif
