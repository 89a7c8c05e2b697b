/* cuda_mock/nccl.h: NCCL's types; every call fails (the mock runs the one-GPU mode only) */
#ifndef PP_CUDA_MOCK_NCCL_H
#define PP_CUDA_MOCK_NCCL_H
#include <stddef.h>
typedef struct mock_comm *ncclComm_t;
typedef enum { ncclSuccess = 0, ncclInvalidUsage = 5 } ncclResult_t;
typedef enum { ncclInt32 = 2, ncclUint8 = 1, ncclFloat = 7, ncclDouble = 8 } ncclDataType_t;
typedef enum { ncclSum = 0, ncclMax = 2 } ncclRedOp_t;
typedef struct { char internal[128]; } ncclUniqueId;
static inline const char *ncclGetErrorString(ncclResult_t r) { return r == ncclSuccess ? "no error" : "invalid usage (mock NCCL)"; }
static inline ncclResult_t ncclGetUniqueId(ncclUniqueId *id) { (void)id; return ncclInvalidUsage; }
static inline ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int r) { (void)c; (void)n; (void)id; (void)r; return ncclInvalidUsage; }
static inline ncclResult_t ncclCommDestroy(ncclComm_t c) { (void)c; return ncclSuccess; }
static inline ncclResult_t ncclCommAbort(ncclComm_t c) { (void)c; return ncclSuccess; }
static inline ncclResult_t ncclCommUserRank(const ncclComm_t c, int *r) { (void)c; (void)r; return ncclInvalidUsage; }
static inline ncclResult_t ncclCommCount(const ncclComm_t c, int *n) { (void)c; (void)n; return ncclInvalidUsage; }
static inline ncclResult_t ncclCommCuDevice(const ncclComm_t c, int *d) { (void)c; (void)d; return ncclInvalidUsage; }
static inline ncclResult_t ncclGroupStart(void) { return ncclInvalidUsage; }
static inline ncclResult_t ncclGroupEnd(void) { return ncclInvalidUsage; }
static inline ncclResult_t ncclSend(const void *b, size_t n, ncclDataType_t t, int p, ncclComm_t c, void *s) { (void)b; (void)n; (void)t; (void)p; (void)c; (void)s; return ncclInvalidUsage; }
static inline ncclResult_t ncclRecv(void *b, size_t n, ncclDataType_t t, int p, ncclComm_t c, void *s) { (void)b; (void)n; (void)t; (void)p; (void)c; (void)s; return ncclInvalidUsage; }
static inline ncclResult_t ncclAllReduce(const void *a, void *b, size_t n, ncclDataType_t t, ncclRedOp_t o, ncclComm_t c, void *s) { (void)a; (void)b; (void)n; (void)t; (void)o; (void)c; (void)s; return ncclInvalidUsage; }
#endif
