/* emu/mock/cuda_runtime.h - a host emulation of the CUDA runtime calls
   pp_cuda.cu makes, so that the executor's logic (slots, send buffers,
   transfers, the one-GPU interleaving, deadlock reports, the memory plan)
   runs on a machine without a GPU (tests/run_tests.sh builds pp_cuda.cu with
   -DPP_CUDA_HOST_EMULATION -Iemu/mock, as C++).

   Streams are real queues: work (copies, memsets, the mock kernels, event
   records, event waits) is queued per stream and runs only when something
   synchronises, in a random order that keeps each stream's order and every
   event wait (MOCK_CUDA_SEED picks the order; 0 runs everything at once, in
   issue order). So a missing cudaStreamWaitEvent in the executor shows up
   as wrong data or a wrong result, as it would on a GPU, and a wait that can
   never be satisfied aborts with a message. Pageable host copies behave as
   CUDA's: a host-to-device copy takes the source at the call, a
   device-to-host copy returns when it is done.

   Host operations run in stream order too: cudaLaunchHostFunc, and
   pp_emu_stream_poll (emu/pp_emu_hostop.h), an operation that is
   polled until it says it is done, so another process can make progress
   meanwhile (the emulated NCCL, emu/nccl.h, is built on it).
   When every stream with work is blocked on such a poll, the mock sleeps
   about 1 ms and polls again; a poll that fails puts its stream in error,
   which the stream's synchronize and query return from then on (as a
   failed kernel does on a GPU), while its later work still runs. */
#ifndef PP_CUDA_MOCK_RUNTIME_H
#define PP_CUDA_MOCK_RUNTIME_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorNotReady = 600, cudaErrorLaunchFailure = 719 } cudaError_t;
typedef enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice } cudaMemcpyKind;
struct mock_event { double t; long issued, done; };
typedef struct mock_event *cudaEvent_t;
typedef int (*mock_poll_fn)(void *user);
struct mock_op { std::function<void()> run; cudaEvent_t wait; long gen; mock_poll_fn poll; void *user; };
struct mock_stream { std::deque<mock_op> q; cudaError_t error; };
typedef struct mock_stream *cudaStream_t;
typedef void (*cudaHostFn_t)(void *user);
#define cudaStreamNonBlocking 1u
#define cudaEventDefault 0u
#define cudaEventDisableTiming 2u

static std::vector<cudaStream_t> mock_streams;
static unsigned long long mock_seed_state;
static int mock_seeded;
static size_t mock_cuda_used; /* GPU memory: MOCK_CUDA_MEM bytes (default 80 GiB), allocations counted */
static cudaError_t mock_null_error; /* a poll that failed on the NULL stream */

static unsigned long long mock_seed(void) {
    if (!mock_seeded) {
        const char *s = getenv("MOCK_CUDA_SEED");
        mock_seed_state = s ? strtoull(s, NULL, 10) : 1;
        mock_seeded = 1;
    }
    return mock_seed_state;
}
static unsigned mock_rand(void) {
    mock_seed_state ^= mock_seed_state << 13;
    mock_seed_state ^= mock_seed_state >> 7;
    mock_seed_state ^= mock_seed_state << 17;
    return (unsigned)(mock_seed_state >> 11);
}
static int mock_ready(const mock_op &o) { return !o.wait || o.wait->done >= o.gen; }
static void mock_sleep_1ms(void) { usleep(1000); }
/* runs the head of one stream that can run (tried from one chosen at
   random): 1 ran something, 2 only polls that are not done yet, 0 nothing
   can run */
static int mock_step(void) {
    size_t i, k, pick;
    std::vector<cudaStream_t> ready;
    for (i = 0; i < mock_streams.size(); i++)
        if (!mock_streams[i]->q.empty() && mock_ready(mock_streams[i]->q.front())) ready.push_back(mock_streams[i]);
    if (ready.empty()) return 0;
    pick = mock_rand() % ready.size();
    for (k = 0; k < ready.size(); k++) {
        cudaStream_t s = ready[(pick + k) % ready.size()];
        mock_op o = s->q.front();
        if (o.poll) {
            int r = o.poll(o.user);
            if (r == 0) continue;
            s->q.pop_front();
            if (r < 0 && s->error == cudaSuccess) s->error = cudaErrorLaunchFailure;
            return 1;
        }
        s->q.pop_front();
        if (o.run) o.run();
        return 1;
    }
    return 2;
}
static void mock_stuck(void) {
    fprintf(stderr, "mock CUDA: queued work waits on events that are never recorded: the streams deadlock\n");
    abort();
}
static void mock_drain_all(void) {
    for (;;) {
        size_t i;
        int left = 0;
        for (i = 0; i < mock_streams.size(); i++) left |= !mock_streams[i]->q.empty();
        if (!left) return;
        switch (mock_step()) {
        case 0: mock_stuck(); break;
        case 2: mock_sleep_1ms(); break;
        }
    }
}
static void mock_drain(cudaStream_t s) {
    if (!s) { mock_drain_all(); return; }
    while (!s->q.empty())
        switch (mock_step()) {
        case 0: mock_stuck(); break;
        case 2: mock_sleep_1ms(); break;
        }
}
/* queue on s; the NULL (legacy) stream and seed 0 run at once, after everything queued */
static void mock_enqueue(cudaStream_t s, std::function<void()> f) {
    mock_op o;
    if (!s || mock_seed() == 0) {
        mock_drain_all();
        f();
        return;
    }
    o.run = f;
    o.wait = NULL;
    o.gen = 0;
    o.poll = NULL;
    o.user = NULL;
    s->q.push_back(o);
}

static size_t mock_cuda_total(void) {
    const char *s = getenv("MOCK_CUDA_MEM");
    return s ? (size_t)strtoull(s, NULL, 10) : (size_t)80 << 30;
}
static inline const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : e == cudaErrorMemoryAllocation ? "out of memory" : e == cudaErrorNotReady ? "not ready" : e == cudaErrorLaunchFailure ? "a host operation in the stream failed" : "invalid argument"; }
static inline const char *cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : e == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation" : e == cudaErrorNotReady ? "cudaErrorNotReady" : e == cudaErrorLaunchFailure ? "cudaErrorLaunchFailure" : "cudaErrorInvalidValue"; }
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int *n) { const char *s = getenv("MOCK_CUDA_DEVICES"); *n = s ? atoi(s) : 1; return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int d) { (void)d; return cudaSuccess; }
static inline cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize(void) {
    size_t i;
    mock_drain_all();
    for (i = 0; i < mock_streams.size(); i++)
        if (mock_streams[i]->error != cudaSuccess) return mock_streams[i]->error;
    return mock_null_error;
}
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
    mock_drain_all();
    if (p) { size_t *b = (size_t *)p - 2; mock_cuda_used -= b[0]; free(b); }
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) { (void)k; mock_drain_all(); memmove(d, s, n); return cudaSuccess; }
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st) {
    if (k == cudaMemcpyDeviceToHost) { /* pageable host memory: returns when done */
        mock_drain(st);
        memmove(d, s, n);
    } else if (k == cudaMemcpyHostToDevice) { /* the source is taken now */
        std::shared_ptr<std::vector<char> > buf(new std::vector<char>((const char *)s, (const char *)s + n));
        mock_enqueue(st, [=] { memmove(d, buf->data(), n); });
    } else {
        mock_enqueue(st, [=] { memmove(d, s, n); });
    }
    return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *d, int v, size_t n) { mock_drain_all(); memset(d, v, n); return cudaSuccess; }
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st) { mock_enqueue(st, [=] { memset(d, v, n); }); return cudaSuccess; }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f) {
    (void)f;
    *s = new mock_stream;
    (*s)->error = cudaSuccess;
    mock_streams.push_back(*s);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
    size_t i;
    mock_drain(s);
    for (i = 0; i < mock_streams.size(); i++)
        if (mock_streams[i] == s) { mock_streams.erase(mock_streams.begin() + (long)i); break; }
    delete s;
    return cudaSuccess;
}
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    mock_drain(s);
    return s ? s->error : mock_null_error;
}
/* runs what can run without waiting: done, its error, or not ready */
static inline cudaError_t cudaStreamQuery(cudaStream_t s) {
    if (!s) {
        size_t i;
        for (;;) {
            int left = 0;
            for (i = 0; i < mock_streams.size(); i++) left |= !mock_streams[i]->q.empty();
            if (!left) return mock_null_error;
            switch (mock_step()) {
            case 0: mock_stuck(); break;
            case 2: return cudaErrorNotReady;
            }
        }
    }
    while (!s->q.empty())
        switch (mock_step()) {
        case 0: mock_stuck(); break;
        case 2: return cudaErrorNotReady;
        }
    return s->error;
}
static inline cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *user) {
    mock_enqueue(s, [=] { fn(user); });
    return cudaSuccess;
}
#include "../pp_emu_hostop.h"
/* the NULL stream and seed 0 poll at once, until done */
/* no checkers on the host emulation */
inline int pp_emu_device_access(const void *, size_t, int, const char *) { return 1; }
inline cudaError_t pp_emu_stream_poll(cudaStream_t s, pp_emu_poll_fn fn, void *user) {
    mock_op o;
    if (!s || mock_seed() == 0) {
        int r;
        mock_drain_all();
        while ((r = fn(user)) == 0) mock_sleep_1ms();
        if (r < 0) {
            if (s && s->error == cudaSuccess) s->error = cudaErrorLaunchFailure;
            if (!s && mock_null_error == cudaSuccess) mock_null_error = cudaErrorLaunchFailure;
        }
        return cudaSuccess;
    }
    o.wait = NULL;
    o.gen = 0;
    o.poll = fn;
    o.user = user;
    s->q.push_back(o);
    return cudaSuccess;
}
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f) { (void)f; *e = (cudaEvent_t)calloc(1, sizeof(struct mock_event)); return cudaSuccess; }
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
static inline cudaError_t cudaEventDestroy(cudaEvent_t e) { mock_drain_all(); free(e); return cudaSuccess; }
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    long g = ++e->issued;
    mock_enqueue(s, [=] { e->t = (double)clock() / CLOCKS_PER_SEC; e->done = g; });
    return cudaSuccess;
}
/* waits for the record issued last; a wait on an event never recorded is an
   executor bug the mock reports (CUDA would ignore it) */
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f) {
    mock_op o;
    (void)f;
    if (e->issued == 0) return cudaErrorInvalidValue;
    if (!s || mock_seed() == 0) { /* at once: everything before runs first */
        mock_drain_all();
        return cudaSuccess;
    }
    o.wait = e;
    o.gen = e->issued;
    o.poll = NULL;
    o.user = NULL;
    s->q.push_back(o);
    return cudaSuccess;
}
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
    if (a->done < a->issued || b->done < b->issued) return cudaErrorNotReady;
    *ms = (float)(1e3 * (b->t - a->t));
    return cudaSuccess;
}
#endif
