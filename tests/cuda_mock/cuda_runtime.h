/* cuda_mock/cuda_runtime.h - a host emulation of the CUDA runtime calls
   pp_cuda.cu makes, so that the executor's logic (slots, send buffers,
   transfers, the one-GPU interleaving, deadlock reports, the memory plan)
   runs on a machine without a GPU (tests/run_tests.sh builds pp_cuda.cu with
   -DPP_CUDA_HOST_EMULATION -Itests/cuda_mock). Work runs at
   once on the host in issue order, which the executor makes a valid order
   (every wait is issued after the record it waits for). Not CUDA: no
   concurrency, so it cannot find a missing wait; a GPU run can. */
#ifndef PP_CUDA_MOCK_RUNTIME_H
#define PP_CUDA_MOCK_RUNTIME_H
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum cudaError { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorInvalidValue = 1 } cudaError_t;
typedef enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice } cudaMemcpyKind;
typedef struct mock_stream { int id; } *cudaStream_t;
typedef struct mock_event { double t; int recorded; } *cudaEvent_t;
#define cudaStreamNonBlocking 1u
#define cudaEventDefault 0u
#define cudaEventDisableTiming 2u

/* GPU memory: MOCK_CUDA_MEM bytes (default 80 GiB), allocations counted */
static size_t mock_cuda_used;
static size_t mock_cuda_total(void) {
    const char *s = getenv("MOCK_CUDA_MEM");
    return s ? (size_t)strtoull(s, NULL, 10) : (size_t)80 << 30;
}
static inline const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : e == cudaErrorMemoryAllocation ? "out of memory" : "invalid argument"; }
static inline const char *cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : e == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation" : "cudaErrorInvalidValue"; }
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int *n) { const char *s = getenv("MOCK_CUDA_DEVICES"); *n = s ? atoi(s) : 1; return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int d) { (void)d; return cudaSuccess; }
static inline cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
static inline cudaError_t cudaMemGetInfo(size_t *f, size_t *t) { *t = mock_cuda_total(); *f = *t - mock_cuda_used; return cudaSuccess; }
static inline cudaError_t cudaMalloc(void **p, size_t n) {
    size_t *b;
    if (n > mock_cuda_total() - mock_cuda_used) { *p = NULL; return cudaErrorMemoryAllocation; }
    b = (size_t *)malloc(n + 16);
    if (!b) return cudaErrorMemoryAllocation;
    memset(b + 2, 0xA5, n); /* garbage, as on a GPU */
    b[0] = n;
    mock_cuda_used += n;
    *p = b + 2;
    return cudaSuccess;
}
static inline cudaError_t cudaFree(void *p) {
    if (p) { size_t *b = (size_t *)p - 2; mock_cuda_used -= b[0]; free(b); }
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) { (void)k; memmove(d, s, n); return cudaSuccess; }
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st) { (void)k; (void)st; memmove(d, s, n); return cudaSuccess; }
static inline cudaError_t cudaMemset(void *d, int v, size_t n) { memset(d, v, n); return cudaSuccess; }
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st) { (void)st; memset(d, v, n); return cudaSuccess; }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f) { (void)f; *s = (cudaStream_t)calloc(1, sizeof(struct mock_stream)); return cudaSuccess; }
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) { free(s); return cudaSuccess; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f) { (void)f; *e = (cudaEvent_t)calloc(1, sizeof(struct mock_event)); return cudaSuccess; }
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
static inline cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return cudaSuccess; }
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)s; e->t = (double)clock() / CLOCKS_PER_SEC; e->recorded = 1; return cudaSuccess; }
/* a wait on an event never recorded is an executor bug the mock can see */
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f) { (void)s; (void)f; return e->recorded ? cudaSuccess : cudaErrorInvalidValue; }
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { *ms = (float)(1e3 * (b->t - a->t)); return cudaSuccess; }
#endif
