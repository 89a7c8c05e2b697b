/* pp_emu.h - CUDA kernels as host C++ for emu/gpu (emu/README.md).

   Force-included (g++ -include pp_emu.h) into a translation unit that
   emu/gpu/rewrite.py produced from CUDA source. The toolkit's
   cuda_runtime.h and cuda_bf16.h give the types and bf16 rounding (round to
   nearest even, in host code); this header gives what device code uses:
   threadIdx and friends, __syncthreads, __syncwarp, warp shuffles,
   atomicAdd, the PTX the kernels write inline (pp_emu_asm), and the launch.
   Everything runs in pp_emu.cpp: one fiber per CUDA thread, blocks one after
   another on the calling OS thread. Every load and store of the translation
   unit reaches pp_emu.cpp through g++'s -fsanitize=thread hooks,
   which is how the checkers see them. Something device code uses that is
   not here fails to compile, naming its line; a PTX instruction pp_emu.cpp
   does not know stops the run naming it and its line. */
#ifndef PP_EMU_H
#define PP_EMU_H

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <initializer_list>
#include <tuple>
#include <type_traits>
#include <utility>

/* execution-space and memory-space keywords */
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __launch_bounds__
#undef __forceinline__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
/* a static __shared__ variable lives in its own section, whose bounds
   (__start_/__stop_pp_emu_shared) tell pp_emu.cpp it is shared memory;
   blocks run one at a time, so one copy serves every block (poisoned at
   each block's start) */
#define __shared__ static __attribute__((section("pp_emu_shared")))

/* one CUDA thread as pp_emu.cpp runs it */
struct pp_emu_thread {
    uint3 tid, bid;
    dim3 bdim, gdim;
};
#ifdef PP_EMU_RUNTIME
extern "C" pp_emu_thread *pp_emu_cur;
#else
/* const to the kernels: while a thread's fiber runs, pp_emu_cur is that
   thread (and a load of a const global is not instrumented) */
extern "C" pp_emu_thread *const pp_emu_cur;
#endif
#define threadIdx (pp_emu_cur->tid)
#define blockIdx (pp_emu_cur->bid)
#define blockDim (pp_emu_cur->bdim)
#define gridDim (pp_emu_cur->gdim)
#ifndef warpSize
#define warpSize 32
#endif

/* the device-side calls, with the call site's __FILE__ and __LINE__ */
void pp_emu_syncthreads(const char *file, int line);
void pp_emu_syncwarp(const char *file, int line, unsigned mask);
struct pp_emu_syncwarp_at { /* __syncwarp() and __syncwarp(mask) from one macro */
    const char *file;
    int line;
    void operator()(unsigned mask = 0xffffffffu) const { pp_emu_syncwarp(file, line, mask); }
};
/* a warp shuffle of 32 bits: kind 0 xor, 1 down, 2 up, 3 idx */
unsigned pp_emu_shfl(const char *file, int line, int kind, unsigned mask, unsigned v, int arg, int width);
void *pp_emu_dyn_smem(void);
float pp_emu_atomic_add_f32(float *p, float v, const char *file, int line);
size_t pp_emu_cvta_shared(const void *p, const char *file, int line);
#define __syncthreads() pp_emu_syncthreads(__FILE__, __LINE__)
#define __syncwarp(...) (pp_emu_syncwarp_at{__FILE__, __LINE__}(__VA_ARGS__))
#define atomicAdd(p, v) pp_emu_atomic_add_f32((p), (v), __FILE__, __LINE__)
#define __cvta_generic_to_shared(p) pp_emu_cvta_shared((p), __FILE__, __LINE__)

template <class T> static inline T pp_emu_shfl_t(const char *f, int l, int kind, unsigned mask, T v, int arg, int width) {
    static_assert(sizeof(T) == 4, "pp_emu: only 32-bit shuffles are emulated");
    unsigned u;
    memcpy(&u, &v, 4);
    u = pp_emu_shfl(f, l, kind, mask, u, arg, width);
    memcpy(&v, &u, 4);
    return v;
}
/* the width argument is not emulated: a call with one fails to compile */
#define __shfl_xor_sync(m, v, a) pp_emu_shfl_t(__FILE__, __LINE__, 0, m, v, a, 32)
#define __shfl_down_sync(m, v, a) pp_emu_shfl_t(__FILE__, __LINE__, 1, m, v, a, 32)
#define __shfl_up_sync(m, v, a) pp_emu_shfl_t(__FILE__, __LINE__, 2, m, v, a, 32)
#define __shfl_sync(m, v, a) pp_emu_shfl_t(__FILE__, __LINE__, 3, m, v, a, 32)

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
/* CUDA's integer min and max (one type: a mixed call fails to compile) */
#define PP_EMU_MINMAX(T)                                           \
    static inline T min(T a, T b) { return a < b ? a : b; }        \
    static inline T max(T a, T b) { return a > b ? a : b; }
PP_EMU_MINMAX(int)
PP_EMU_MINMAX(unsigned)
PP_EMU_MINMAX(long)
PP_EMU_MINMAX(unsigned long)
PP_EMU_MINMAX(long long)
PP_EMU_MINMAX(unsigned long long)
#undef PP_EMU_MINMAX

/* inline PTX: the template text with its operands in GCC's numbering
   (outputs first, a "+" operand once) */
struct pp_emu_operand {
    const char *cons;      /* "=r", "+f", "r", "l", "n" */
    void *out;             /* outputs: where the value goes */
    unsigned long long in; /* inputs (and "+" outputs): the value's bits */
    int size;
};
template <class T> static inline pp_emu_operand pp_emu_out(const char *c, T *p) {
    static_assert(sizeof(T) <= 8, "pp_emu: asm operand wider than 64 bits");
    pp_emu_operand o = {c, (void *)p, 0, (int)sizeof(T)};
    if (c[0] == '+') memcpy(&o.in, p, sizeof(T)); /* "=" outputs are not read */
    return o;
}
template <class T> static inline pp_emu_operand pp_emu_in(const char *c, T v) {
    static_assert(sizeof(T) <= 8, "pp_emu: asm operand wider than 64 bits");
    pp_emu_operand o = {c, NULL, 0, (int)sizeof(T)};
    memcpy(&o.in, &v, sizeof(T));
    return o;
}
void pp_emu_asm(const char *file, int line, const char *text, std::initializer_list<pp_emu_operand> ops);

/* cuda_runtime.h's kernel-pointer overload exists for nvcc only */
template <class... P> static inline cudaError_t cudaFuncSetAttribute(void (*k)(P...), cudaFuncAttribute a, int v) {
    return cudaFuncSetAttribute((const void *)k, a, v);
}

/* what the checkers find (one table: the runtime's counters and texts) */
#define PP_EMU_FINDINGS(X)                                  \
    X(SHARED_RACE, "shared-memory race")                   \
    X(SHARED_UNWRITTEN, "read of unwritten shared memory") \
    X(SHARED_OOB, "shared memory out of bounds")           \
    X(GLOBAL_OOB, "global memory out of bounds")           \
    X(GLOBAL_UAF, "use after free")                        \
    X(GLOBAL_RACE, "global-memory race")                   \
    X(STREAM_RACE, "cross-stream race")                    \
    X(MISALIGNED, "misaligned access")                     \
    X(INDEX_OOB, "array index out of bounds")              \
    X(WILD, "wild pointer")                                \
    X(HOST_DEREF, "host code dereferences device memory")  \
    X(BARRIER, "barrier divergence")                       \
    X(DEADLOCK, "deadlock")                                \
    X(API, "runtime API misuse")
enum pp_emu_finding {
#define PP_EMU_X(id, text) PP_EMU_##id,
    PP_EMU_FINDINGS(PP_EMU_X)
#undef PP_EMU_X
};
/* for tests of the emulator itself: findings so far of one kind (-1: all),
   and forgetting them (a run with findings left at exit fails) */
long pp_emu_findings(int kind);
void pp_emu_findings_reset(void);

/* launches: kern<<<g, b, smem, stream>>>(args) as rewrite.py writes it */
struct pp_emu_launch_cfg {
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
    const char *name, *file;
    int line;
};
static inline pp_emu_launch_cfg pp_emu_cfg(dim3 g, dim3 b, size_t smem, cudaStream_t st, const char *name,
                                           const char *f, int l) {
    pp_emu_launch_cfg c = {g, b, smem, st, name, f, l};
    return c;
}
/* the kernel runs later (stream order), in every thread: invoke(kernel,
   params) calls it with its own copy of the parameters (converted as a call
   converts them); destroy(params) frees them after the last block */
typedef void (*pp_emu_invoke_fn)(const void *kernel, void *params);
void pp_emu_launch_fn(const pp_emu_launch_cfg &c, const void *kernel, pp_emu_invoke_fn invoke, void *params,
                      size_t params_bytes, void (*destroy)(void *));
template <class K, class T> static void pp_emu_invoke(const void *k, void *p) { std::apply((K)k, *(T *)p); }
template <class T> static void pp_emu_destroy(void *p) { delete (T *)p; }
template <class... P, class... A>
static inline void pp_emu_launch(const pp_emu_launch_cfg &c, void (*k)(P...), A &&...a) {
    typedef std::tuple<typename std::decay<P>::type...> params;
    params *p = new params(std::forward<A>(a)...);
    pp_emu_launch_fn(c, (const void *)k, &pp_emu_invoke<void (*)(P...), params>, p, sizeof(params),
                     &pp_emu_destroy<params>);
}

#endif
