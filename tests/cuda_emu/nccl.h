/* tests/cuda_emu/nccl.h - a one-process stub of NCCL for the emulator: the
   types and calls pp_cuda.cu uses, for one rank only (a communicator of one,
   whose all-reduce is a copy and whose send/receive have no peer). The
   emulated NCCL across processes (built on pp_emu_hostop.h) replaces it. */
#ifndef PP_EMU_NCCL_H
#define PP_EMU_NCCL_H
#include <stddef.h>
#include <string.h>
#include <cuda_runtime.h>

typedef struct pp_emu_nccl_comm { int rank, world; } *ncclComm_t;
typedef enum { ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2, ncclInternalError = 3,
               ncclInvalidArgument = 4, ncclInvalidUsage = 5 } ncclResult_t;
typedef enum { ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclInt = 2, ncclUint32 = 3, ncclInt64 = 4, ncclUint64 = 5,
               ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat = 7, ncclFloat64 = 8, ncclDouble = 8 } ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3 } ncclRedOp_t;
typedef struct { char internal[128]; } ncclUniqueId;

static inline size_t pp_emu_nccl_size(ncclDataType_t t) {
    return t == ncclInt8 || t == ncclUint8 ? 1 : t == ncclFloat16 ? 2 : t == ncclInt64 || t == ncclUint64 || t == ncclFloat64 ? 8 : 4;
}
static inline const char *ncclGetErrorString(ncclResult_t r) {
    return r == ncclSuccess ? "no error" : "invalid usage (tests/cuda_emu/nccl.h: one rank only)";
}
static inline ncclResult_t ncclGetUniqueId(ncclUniqueId *id) { memset(id, 0, sizeof *id); return ncclSuccess; }
static inline ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int r) {
    (void)id;
    if (n != 1 || r != 0) return ncclInvalidUsage;
    *c = new pp_emu_nccl_comm{0, 1};
    return ncclSuccess;
}
static inline ncclResult_t ncclCommDestroy(ncclComm_t c) { delete c; return ncclSuccess; }
static inline ncclResult_t ncclCommAbort(ncclComm_t c) { delete c; return ncclSuccess; }
static inline ncclResult_t ncclCommUserRank(const ncclComm_t c, int *r) { *r = c->rank; return ncclSuccess; }
static inline ncclResult_t ncclCommCount(const ncclComm_t c, int *n) { *n = c->world; return ncclSuccess; }
static inline ncclResult_t ncclCommCuDevice(const ncclComm_t c, int *d) { (void)c; return cudaGetDevice(d) == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError; }
static inline ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
static inline ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }
static inline ncclResult_t ncclSend(const void *b, size_t n, ncclDataType_t t, int p, ncclComm_t c, cudaStream_t s) {
    (void)b; (void)n; (void)t; (void)p; (void)c; (void)s;
    return ncclInvalidUsage; /* one rank: no peer */
}
static inline ncclResult_t ncclRecv(void *b, size_t n, ncclDataType_t t, int p, ncclComm_t c, cudaStream_t s) {
    (void)b; (void)n; (void)t; (void)p; (void)c; (void)s;
    return ncclInvalidUsage;
}
static inline ncclResult_t ncclAllReduce(const void *a, void *b, size_t n, ncclDataType_t t, ncclRedOp_t o, ncclComm_t c,
                                         cudaStream_t s) {
    (void)o; (void)c;
    if (a == b || n == 0) return ncclSuccess;
    return cudaMemcpyAsync(b, a, n * pp_emu_nccl_size(t), cudaMemcpyDeviceToDevice, s) == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}
#endif
