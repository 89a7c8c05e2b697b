/* test_emu.cu - the CUDA emulator's checkers and limits on small kernels
   with planted bugs, each next to its correct twin (emu/gpu).

   Built by emu/gpu/build.sh (target "self") and run by make test:
   every buggy kernel must raise the kind of finding it plants, every
   correct twin none at all, and the launch limits must refuse what CUDA refuses.
   One line per check group, then "N passed, N failed". The findings are
   forgotten after each check (pp_emu_findings_reset), so the run exits 0
   when every group passes. Not a CUDA program for a GPU: it calls the
   emulator's own pp_emu_findings. */
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "group.h"

/* ---- kernels ---- */

/* each thread writes s[t] and reads its neighbour's; bar: with __syncthreads between */
static __global__ void k_shared_neighbour(float *out, int bar) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = (float)t;
    if (bar) __syncthreads();
    out[t] = s[(t + 1) % 64];
}
/* reads s[t + 32] of which only s[0..31] were written */
static __global__ void k_shared_unwritten(float *out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    if (t < 32) s[t] = 1.0f;
    __syncthreads();
    if (t < 32) out[t] = s[t + 32];
}
/* lanes of one warp: s[lane] then s[lane ^ 1]; sw: with __syncwarp between */
static __global__ void k_warp_exchange(float *out, int sw) {
    __shared__ float s[32];
    int l = threadIdx.x;
    s[l] = (float)l;
    if (sw) __syncwarp();
    out[l] = s[l ^ 1];
}
/* out[i] = in[i] for i < n (and i == n when oob: one past the end of in) */
static __global__ void k_copy(float *out, const float *in, int n, int oob) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n || (oob && i == n)) out[i] = in[i];
}
/* every thread of every block adds into out[0]: plainly (a race) or with atomicAdd */
static __global__ void k_sum(float *out, int atomic) {
    if (atomic) atomicAdd(out, 1.0f);
    else out[0] += 1.0f;
}
/* the first warp waits at a barrier the others never reach */
static __global__ void k_diverge(float *out) {
    if (threadIdx.x < 32) {
        __syncthreads();
        out[threadIdx.x] = 1.0f;
    }
}
/* half a warp leaves before a full-warp shuffle: the other half waits forever */
static __global__ void k_shfl_half(float *out) {
    if (threadIdx.x >= 16) return;
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
}
/* 64 KB of dynamic shared memory, touched */
static __global__ void k_big_smem(float *out) {
    extern __shared__ float big[];
    big[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = big[(threadIdx.x + 1) % blockDim.x];
}
/* cp.async of 16 bytes into shared memory, read with or without waiting for it */
static __global__ void k_cp_async(float *out, const float *in, int wait) {
    __shared__ __align__(16) float s[4];
    unsigned a = (unsigned)__cvta_generic_to_shared(s);
    if (threadIdx.x == 0) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(a), "l"(in), "r"(16) : "memory");
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        if (wait) asm volatile("cp.async.wait_group %0;\n" ::"n"(0) : "memory");
        out[0] = s[1];
    }
}
/* each thread writes s[t], then (bar: after a barrier) s[t ^ 1]: two writers of one word */
static __global__ void k_shared_waw(float *out, int bar) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = 1.0f;
    if (bar) __syncthreads();
    if (bar || t < 32) s[t ^ 1] = 2.0f; /* the twin: every write after the barrier is one thread's */
    if (bar) __syncthreads();
    out[t] = s[t];
}
/* each thread reads s[t ^ 1], then (bar: after a barrier) writes s[t]: a write after a read */
static __global__ void k_shared_war(float *out, int bar) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = (float)t;
    __syncthreads();
    float v = s[t ^ 1];
    if (bar) __syncthreads();
    s[t] = v;
    out[t] = v;
}
/* dynamic shared memory of n floats, one thread per float; oob: the last reads one past the end */
static __global__ void k_dyn_oob(float *out, int oob) {
    extern __shared__ float dyn[];
    int t = threadIdx.x;
    dyn[t] = 1.0f;
    __syncthreads();
    out[t] = dyn[t + (oob && t == (int)blockDim.x - 1)];
}
/* 16-byte vector loads from in + off floats: off 0 is aligned, off 1 is not */
static __global__ void k_vec_load(float *out, const float *in, int off) {
    const float4 v = *(const float4 *)(in + off + 4 * threadIdx.x);
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}
/* 8-byte vector stores into out + off floats */
static __global__ void k_vec_store(float *out, int off) {
    *(float2 *)(out + off + 2 * threadIdx.x) = make_float2(1.0f, 2.0f);
}
/* cp.async of 16 bytes from in + off floats: off 0 aligned, off 2 only 8-byte aligned */
static __global__ void k_cp_async_from(float *out, const float *in, int off) {
    __shared__ __align__(16) float s[4];
    unsigned a = (unsigned)__cvta_generic_to_shared(s);
    if (threadIdx.x == 0) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(a), "l"(in + off), "r"(16) : "memory");
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        out[0] = s[0];
    }
}
/* a thread's local array of 4, indexed at lane & 3 (+ 1 when oob: lane 3 reads loc[4]) */
static __global__ void k_local_array(float *out, int oob) {
    float loc[4];
    for (int i = 0; i < 4; i++) loc[i] = (float)(threadIdx.x + i);
    out[threadIdx.x] = loc[(threadIdx.x & 3) + oob * (threadIdx.x & 1)];
}
/* out[i] = v for i < n, from one thread per element */
static __global__ void k_fill(float *out, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v;
}
/* out[i] = in[i] + 1 */
static __global__ void k_add1(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1.0f;
}
/* an instruction the emulator does not know */
static __global__ void k_unknown_ptx(unsigned *out) {
    unsigned r;
    asm volatile("brev.b32 %0, %1;\n" : "=r"(r) : "r"(out[0]));
    out[0] = r;
}

/* ---- harness ---- */

static float *dalloc(size_t n) {
    float *p;
    if (cudaMalloc(&p, n * sizeof(float)) != cudaSuccess) exit(1);
    cudaMemset(p, 0, n * sizeof(float));
    return p;
}
/* the findings of kind since the last call (and forget them all) */
static long took(int kind, long *all) {
    cudaDeviceSynchronize();
    long k = pp_emu_findings(kind);
    *all = pp_emu_findings(-1);
    pp_emu_findings_reset();
    return k;
}
/* a planted bug raises its finding; the twin raises none */
static void expect(group *g, const char *what, int kind, int buggy) {
    long all, k = took(kind, &all);
    if (buggy) check(g, k > 0, "%s: %ld findings of the planted kind, %ld in all", what, k, all);
    else check(g, all == 0, "%s (correct twin): %ld findings", what, all);
}

int main(void) {
    group g;
    setenv("PP_EMU_REPORTS", "0", 1); /* the counts are checked; the texts would only be noise */
    float *out = dalloc(1024), *in = dalloc(256);

    group_begin(&g, "shared memory: RAW race without __syncthreads, unwritten bytes, __syncwarp orders one warp");
    for (int bug = 0; bug < 2; bug++) {
        k_shared_neighbour<<<1, 64>>>(out, !bug);
        expect(&g, "neighbour exchange", PP_EMU_SHARED_RACE, bug);
        k_warp_exchange<<<1, 32>>>(out, !bug);
        expect(&g, "lane exchange", PP_EMU_SHARED_RACE, bug);
    }
    k_shared_unwritten<<<1, 64>>>(out);
    expect(&g, "half-written array", PP_EMU_SHARED_UNWRITTEN, 1);
    group_end(&g, "");

    group_begin(&g, "global memory: out of bounds, use after free, races in one launch (atomics exempt), host pointers in kernels, device pointers in host code");
    for (int bug = 0; bug < 2; bug++) {
        k_copy<<<3, 128>>>(out, in, 256, bug);
        expect(&g, "one past the end", PP_EMU_GLOBAL_OOB, bug);
        k_sum<<<2, 64>>>(out, !bug);
        expect(&g, "sum into one float", PP_EMU_GLOBAL_RACE, bug);
    }
    {
        float *gone = dalloc(256);
        cudaFree(gone);
        k_copy<<<1, 64>>>(out, gone, 64, 0);
        expect(&g, "kernel reads a freed buffer", PP_EMU_GLOBAL_UAF, 1);
        float host[4] = {0, 0, 0, 0};
        k_copy<<<1, 4>>>(out, host, 4, 0);
        expect(&g, "kernel reads a host array", PP_EMU_WILD, 1);
        volatile float v = *(volatile float *)out; /* host code dereferencing a device pointer */
        (void)v;
        expect(&g, "host code reads device memory", PP_EMU_HOST_DEREF, 1);
        check(&g, cudaMemcpy(host, out + 1022, 4 * sizeof(float), cudaMemcpyDeviceToHost) == cudaErrorInvalidValue,
              "cudaMemcpy past the end of an allocation is refused");
        expect(&g, "cudaMemcpy past the end", PP_EMU_GLOBAL_OOB, 1);
    }
    group_end(&g, "");

    group_begin(&g, "shared memory: WAW and WAR races without a barrier, dynamic shared memory read one past its end");
    for (int bug = 0; bug < 2; bug++) {
        k_shared_waw<<<1, 64>>>(out, !bug);
        expect(&g, "two threads write one word", PP_EMU_SHARED_RACE, bug);
        k_shared_war<<<1, 64>>>(out, !bug);
        expect(&g, "a write after a neighbour's read", PP_EMU_SHARED_RACE, bug);
        k_dyn_oob<<<1, 64, 64 * sizeof(float)>>>(out, bug);
        expect(&g, "dynamic shared memory one past the end", PP_EMU_SHARED_OOB, bug);
    }
    group_end(&g, "");

    group_begin(&g, "alignment by width: misaligned 16-byte vector loads, 8-byte vector stores, 16-byte cp.async sources");
    for (int bug = 0; bug < 2; bug++) {
        k_vec_load<<<1, 32>>>(out, in, bug);
        expect(&g, "float4 load", PP_EMU_MISALIGNED, bug);
        k_vec_store<<<1, 32>>>(out, bug);
        expect(&g, "float2 store", PP_EMU_MISALIGNED, bug);
        k_cp_async_from<<<1, 32>>>(out, in, 2 * bug);
        expect(&g, "cp.async source", PP_EMU_MISALIGNED, bug);
    }
    group_end(&g, "");

    group_begin(&g, "local arrays: an index past a thread's array of 4 (-fsanitize=bounds)");
    for (int bug = 0; bug < 2; bug++) {
        k_local_array<<<1, 32>>>(out, bug);
        expect(&g, "local array", PP_EMU_INDEX_OOB, bug);
    }
    group_end(&g, "");

    group_begin(&g, "stream order (vector clocks): a kernel, a copy, a memset on two streams unordered race, in either run order; an event wait orders them");
    {
        cudaStream_t s1, s2;
        cudaEvent_t ev;
        float *a = dalloc(256), *b = dalloc(256);
        cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
        cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
        cudaEventCreate(&ev);
        for (int bug = 0; bug < 2; bug++) {
            for (int first = 0; first < 2; first++) {
                /* RAW: s1 writes a, s2 reads it; the twin orders them with an event */
                k_fill<<<2, 128, 0, s1>>>(a, 1.0f, 256);
                cudaEventRecord(ev, s1);
                if (!bug) cudaStreamWaitEvent(s2, ev, 0);
                k_add1<<<2, 128, 0, s2>>>(b, a, 256);
                cudaStreamSynchronize(first ? s2 : s1); /* which stream runs first (the bug: s2's reader when first = 1) */
                expect(&g, first ? "kernel reads what another stream's kernel writes (the reader run first)"
                                 : "kernel reads what another stream's kernel writes (the writer run first)",
                       PP_EMU_STREAM_RACE, bug);
            }
            /* a copy reading what a kernel of another stream writes; the twin copies on the kernel's stream */
            k_fill<<<2, 128, 0, s1>>>(a, 2.0f, 256);
            cudaMemcpyAsync(b, a, 256 * sizeof(float), cudaMemcpyDeviceToDevice, bug ? s2 : s1);
            expect(&g, "copy on another stream than the kernel that writes its source", PP_EMU_STREAM_RACE, bug);
            /* WAR: s1 reads a, then s2 clears it */
            k_add1<<<2, 128, 0, s1>>>(b, a, 256);
            cudaEventRecord(ev, s1);
            if (!bug) cudaStreamWaitEvent(s2, ev, 0);
            cudaMemsetAsync(a, 0, 256 * sizeof(float), s2);
            expect(&g, "memset of what another stream's kernel reads", PP_EMU_STREAM_RACE, bug);
            /* after a host synchronisation every stream is ordered after what it saw */
            k_fill<<<2, 128, 0, s1>>>(a, 3.0f, 256);
            cudaStreamSynchronize(s1);
            if (bug) k_add1<<<2, 128, 0, s2>>>(b, a, 256);
            expect(&g, "kernel after the host synchronised with the writer's stream", PP_EMU_STREAM_RACE, 0);
        }
        cudaStreamDestroy(s1);
        cudaStreamDestroy(s2);
        cudaFree(a);
        cudaFree(b);
    }
    group_end(&g, "");

    group_begin(&g, "barriers: divergence and deadlock reported (who waits where), the launch fails");
    k_diverge<<<1, 64>>>(out);
    expect(&g, "__syncthreads in a branch", PP_EMU_BARRIER, 1);
    k_shfl_half<<<1, 32>>>(out);
    check(&g, cudaDeviceSynchronize() == cudaErrorLaunchFailure, "a deadlocked launch fails the next synchronize");
    expect(&g, "shuffle with half a warp gone", PP_EMU_DEADLOCK, 1);
    group_end(&g, "");

    group_begin(&g, "cp.async lands at wait_group: a read before the wait sees unwritten shared memory");
    for (int bug = 0; bug < 2; bug++) {
        k_cp_async<<<1, 32>>>(out, in, !bug);
        expect(&g, "cp.async read", PP_EMU_SHARED_UNWRITTEN, bug);
    }
    group_end(&g, "");

    group_begin(&g, "launch limits: block size, 48 KB dynamic shared memory unless raised by cudaFuncSetAttribute");
    cudaGetLastError();
    k_copy<<<1, 2048>>>(out, in, 1, 0);
    check(&g, cudaGetLastError() == cudaErrorInvalidConfiguration, "2048 threads per block are refused");
    k_big_smem<<<1, 64, 64 << 10>>>(out);
    check(&g, cudaGetLastError() == cudaErrorInvalidValue, "64 KB of dynamic shared memory without the attribute is refused");
    check(&g, cudaFuncSetAttribute(k_big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10) == cudaSuccess, "attribute set");
    k_big_smem<<<1, 64, 64 << 10>>>(out);
    check(&g, cudaGetLastError() == cudaSuccess, "64 KB of dynamic shared memory with the attribute launches");
    expect(&g, "64 KB kernel", PP_EMU_SHARED_RACE, 0);
    group_end(&g, "");

    group_begin(&g, "an unsupported PTX instruction stops the run naming it and its line");
    {
        char path[] = "/tmp/pp_emu_selftest.XXXXXX", text[4096] = "";
        int fd = mkstemp(path), status = 0;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(fd, 2);
            k_unknown_ptx<<<1, 32>>>((unsigned *)out);
            cudaDeviceSynchronize();
            _exit(0);
        }
        waitpid(pid, &status, 0);
        ssize_t n = pread(fd, text, sizeof text - 1, 0);
        text[n > 0 ? n : 0] = 0;
        close(fd);
        unlink(path);
        check(&g, WIFEXITED(status) && WEXITSTATUS(status) == 2, "the child exits 2 (status %d)", status);
        check(&g, strstr(text, "'brev.b32'") && strstr(text, "test_emu.cu:"), "the message names brev.b32 and the line: %s", text);
        printf("    %s", text);
    }
    group_end(&g, "");

    printf("%d passed, %d failed\n", g_groups_passed, g_groups_failed);
    return g_groups_failed ? 1 : 0;
}
