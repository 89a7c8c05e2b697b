/* pp_emu.cpp - the CUDA emulator's runtime (emu/gpu; emu/README.md).

   Device side: each CUDA thread of a block is a fiber on the calling OS
   thread; blocks run one after another. __syncthreads is a block barrier,
   shuffles, __syncwarp, ldmatrix, mma.sync and WMMA's mma are warp
   collectives (the last lane to arrive computes for all 32). cp.async
   copies land at cp.async.wait_group, the latest moment the PTX ISA allows.
   Host side: the part of the CUDA runtime API pp_cuda.cu and its tests use,
   with streams as queues run at synchronisation points in a seeded random
   order that keeps stream order and event waits.

   Checkers (every report names the source lines of both accesses):
   - shared memory: races between two barriers (RAW, WAW, WAR per byte;
     __syncwarp orders the lanes of one warp), reads of bytes no thread of
     the block wrote, accesses outside the block's shared memory;
   - global memory: out of bounds (red zones), use after free, races between
     threads or blocks of one launch (per 2-byte granule; atomics exempt),
     kernel accesses to memory that is not device, shared or local memory;
     host code dereferencing device memory (in the instrumented unit);
   - across streams: operations of different streams (kernels, copies,
     memsets, the emulated NCCL's buffers) on one granule with no event
     wait or synchronisation between them (vector clocks, "stream order"
     below), whatever order the streams ran in;
   - loads, stores and cp.async not aligned to their width; indexes outside
     an array of known size, local arrays included (-fsanitize=bounds);
   - barrier divergence (threads at different __syncthreads, or exited while
     others wait) and deadlock (who waits where).
   PP_EMU_PROFILE=path writes per-kernel and per-line counters at exit
   (bank conflicts, sectors per request, tensor FLOPs, bytes: make
   kernel-report).
   A finding is printed once per pair of source lines; at exit the number of
   findings is printed and the process exits 1 if there was any. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>
/* fibers: a hand-written x86-64 switch (about 4x faster than ucontext),
   ucontext elsewhere or with -DPP_EMU_UCONTEXT */
#if defined(__x86_64__) && !defined(PP_EMU_UCONTEXT)
#define PP_EMU_ASM_SWITCH 1
#else
#include <ucontext.h>
#endif

#define PP_EMU_RUNTIME 1
#include "pp_emu.h"
#include "../pp_emu_hostop.h"
#include "mma.h"
#include <memory>
/* the runtime names the fields, not the device macros */
#undef warpSize
#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim

/* ---------------------------------------------------------------- sites */

/* a "where": an instruction address (from the sanitizer hooks) or, with the
   top bit set, a (file, line) pair from a macro (line in bits 47..62) */
typedef uint64_t where_t;
static where_t site(const char *file, int line) {
    return (1ull << 63) | ((uint64_t)(line & 0xffff) << 47) | ((uint64_t)(uintptr_t)file & ((1ull << 47) - 1));
}

static std::string short_path(const char *p) {
    static std::string cwd;
    if (cwd.empty()) {
        char b[4096];
        cwd = getcwd(b, sizeof b) ? std::string(b) + "/" : "/";
    }
    std::string s(p);
    if (s.compare(0, cwd.size(), cwd) == 0) return s.substr(cwd.size());
    size_t k = s.find("/tests/");
    if (k == std::string::npos) k = s.rfind('/');
    return k == std::string::npos ? s : s.substr(k + 1);
}

/* file:line of a where, with the inlined-into chain for an address (addr2line) */
static std::string where_str(where_t w) {
    static std::unordered_map<where_t, std::string> cache;
    if (w == 0) return "(nowhere)";
    if (w >> 63) {
        char b[32];
        snprintf(b, sizeof b, ":%d", (int)((w >> 47) & 0xffff));
        return short_path((const char *)(uintptr_t)(w & ((1ull << 47) - 1))) + b;
    }
    auto it = cache.find(w);
    if (it != cache.end()) return it->second;
    std::string r;
    Dl_info di;
    if (dladdr((void *)(uintptr_t)w, &di) && di.dli_fname) {
        char cmd[4300];
        FILE *f;
        snprintf(cmd, sizeof cmd, "addr2line -i -e '%s' 0x%llx 2>/dev/null", di.dli_fname,
                 (unsigned long long)(w - 1 - (uintptr_t)di.dli_fbase));
        if ((f = popen(cmd, "r")) != NULL) {
            char line[4096];
            int n = 0;
            while (fgets(line, sizeof line, f)) {
                line[strcspn(line, "\n")] = 0;
                char *d = strstr(line, " (discriminator");
                if (d) *d = 0;
                if (n++) r += " <- ";
                r += short_path(line);
            }
            pclose(f);
        }
    }
    if (r.empty()) {
        char b[40];
        snprintf(b, sizeof b, "pc 0x%llx", (unsigned long long)w);
        r = b;
    }
    cache[w] = r;
    return r;
}

/* ------------------------------------------------------------- findings */

enum {
#define PP_EMU_X(id, text) F_##id,
    PP_EMU_FINDINGS(PP_EMU_X)
#undef PP_EMU_X
    F_KINDS
};
static const char *finding_names[F_KINDS] = {
#define PP_EMU_X(id, text) text,
    PP_EMU_FINDINGS(PP_EMU_X)
#undef PP_EMU_X
};
static long g_findings[F_KINDS];
static std::map<std::string, long> g_seen; /* kind + lines: printed once */
struct pending_report { int kind; std::string key; std::string text; };
static std::vector<pending_report> g_pending; /* built in fibers, printed from the scheduler */
static int g_check = 1;                       /* PP_EMU_CHECK=0 turns the checkers off */
static int g_verbose_limit = 30;              /* distinct reports printed */

/* a finding: counted always, its text built only the first time its kind
   and pair of source lines is seen */
struct seen_key {
    int kind;
    uint64_t a, b;
    bool operator==(const seen_key &o) const { return kind == o.kind && a == o.a && b == o.b; }
};
struct seen_hash {
    size_t operator()(const seen_key &k) const { return (size_t)(k.a * 0x9E3779B97F4A7C15ull ^ k.b * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)k.kind); }
};
static bool first_time(int kind, uint64_t a, uint64_t b) {
    static std::unordered_set<seen_key, seen_hash> seen;
    g_findings[kind]++;
    return seen.insert(seen_key{kind, a, b}).second;
}
static void report_text(int kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report_text(int kind, const char *fmt, ...) {
    char b[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    g_pending.push_back({kind, "", b});
}
#define REPORT(kind, a, b, ...)                                         \
    do {                                                                \
        if (first_time(kind, (uint64_t)(a), (uint64_t)(b))) report_text(kind, __VA_ARGS__); \
    } while (0)

static void flush_reports(void);
static void report(int kind, const std::string &key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(int kind, const std::string &key, const char *fmt, ...) {
    char b[2048];
    va_list ap;
    g_findings[kind]++;
    std::string k = std::string(finding_names[kind]) + "|" + key;
    if (g_seen[k]++) return;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    g_pending.push_back({kind, k, b});
}

/* texts with "@W<hex>" placeholders for where_t values: symbolised at print time */
static std::string W(where_t w) {
    char b[32];
    snprintf(b, sizeof b, "@W%llx@", (unsigned long long)w);
    return b;
}
static std::string expand(const std::string &t) {
    std::string r;
    size_t i = 0;
    while (i < t.size()) {
        size_t k = t.find("@W", i);
        if (k == std::string::npos) { r += t.substr(i); break; }
        size_t e = t.find('@', k + 2);
        r += t.substr(i, k - i);
        r += where_str((where_t)strtoull(t.substr(k + 2, e - k - 2).c_str(), NULL, 16));
        i = e + 1;
    }
    return r;
}
static long g_printed;
static void flush_reports(void) {
    for (size_t i = 0; i < g_pending.size(); i++) {
        if (g_printed++ < g_verbose_limit) fprintf(stderr, "pp_emu: %s\n", expand(g_pending[i].text).c_str());
        else if (g_printed == g_verbose_limit + 1 && g_verbose_limit > 0) fprintf(stderr, "pp_emu: (further distinct reports not printed; the summary at exit counts them)\n");
    }
    g_pending.clear();
    fflush(stderr);
}

static void prof_write(void);
static bool prof_on(void);
static void at_exit(void) {
    long total = 0;
    if (prof_on()) prof_write();
    flush_reports();
    for (int k = 0; k < F_KINDS; k++) total += g_findings[k];
    if (!total) return;
    fprintf(stderr, "pp_emu: %ld findings:", total);
    for (int k = 0; k < F_KINDS; k++)
        if (g_findings[k]) fprintf(stderr, " %ld %s%s;", g_findings[k], finding_names[k], g_findings[k] > 1 ? " (accesses)" : "");
    fprintf(stderr, " the run fails\n");
    fflush(NULL);
    _exit(1);
}

long pp_emu_findings(int kind) {
    long n = 0;
    for (int k = 0; k < F_KINDS; k++)
        if (kind < 0 || kind == k) n += g_findings[k];
    return n;
}
void pp_emu_findings_reset(void) {
    flush_reports();
    memset(g_findings, 0, sizeof g_findings);
}

static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fatal(const char *fmt, ...) {
    va_list ap;
    flush_reports();
    fprintf(stderr, "pp_emu: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(NULL);
    _exit(2);
}

/* ------------------------------------------------------- device memory */

/* one access as the shadows keep it */
struct acc_rec {
    where_t where;
    uint32_t run;    /* which block execution (0: none) */
    uint32_t bepoch; /* the block's barrier count at the access */
    uint16_t tid;    /* linear thread index in the block */
    uint16_t wepoch; /* the warp's __syncwarp count at the access */
};
/* w, r: the last write and read (one launch's races); sw, sr, sr2: the
   stream operations that last wrote and read it (cross-stream races; a
   second reader when two streams read it unordered) */
struct granule { acc_rec w, r; uint32_t sw, sr, sr2; };

struct alloc_rec {
    uintptr_t base;
    size_t size;
    int freed;
    where_t made, freed_at;
    granule *shadow; /* per 2 bytes, mapped on the first kernel access */
};

static const size_t RED = 256; /* bytes of red zone between allocations */
static char *g_arena;
static size_t g_arena_cap, g_arena_next, g_used;
static std::vector<alloc_rec> g_allocs; /* by address: the arena only grows */

static void arena_init(void) {
    const char *s;
    if (g_arena) return;
    s = getenv("PP_EMU_MEM");
    g_arena_cap = s ? (size_t)strtoull(s, NULL, 10) : (size_t)80 << 30;
    for (;;) {
        void *p = mmap(NULL, g_arena_cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) { g_arena = (char *)p; break; }
        if (g_arena_cap <= ((size_t)1 << 30)) fatal("cannot reserve the device arena");
        g_arena_cap /= 2;
    }
    g_arena_next = RED;
    s = getenv("PP_EMU_CHECK");
    if (s && atoi(s) == 0) g_check = 0;
    s = getenv("PP_EMU_REPORTS");
    if (s) g_verbose_limit = atoi(s);
    atexit(at_exit);
}

static inline bool in_arena(uintptr_t a) { return a - (uintptr_t)g_arena < g_arena_next; }

/* the allocation at or before a (NULL when none) */
static alloc_rec *g_last_alloc;
static alloc_rec *find_alloc(uintptr_t a) {
    if (g_last_alloc && a - g_last_alloc->base < g_last_alloc->size) return g_last_alloc;
    size_t lo = 0, hi = g_allocs.size();
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (g_allocs[m].base <= a) lo = m + 1;
        else hi = m;
    }
    if (lo == 0) return NULL;
    alloc_rec *r = &g_allocs[lo - 1];
    if (a - r->base < r->size) g_last_alloc = r;
    return r;
}

static void *dev_alloc(size_t n, where_t made) {
    arena_init();
    size_t rounded = (n + 255) / 256 * 256;
    if (rounded == 0) rounded = 256;
    if (g_arena_next + rounded + RED > g_arena_cap || g_used + rounded > g_arena_cap) return NULL;
    alloc_rec r;
    r.base = (uintptr_t)g_arena + g_arena_next;
    r.size = n;
    r.freed = 0;
    r.made = made;
    r.freed_at = 0;
    r.shadow = NULL;
    g_arena_next += rounded + RED;
    g_used += rounded;
    memset((void *)r.base, 0xFF, n); /* poison: NaN as float and as bf16 */
    g_last_alloc = NULL;             /* the vector may move */
    g_allocs.push_back(r);
    return (void *)r.base;
}

static size_t shadow_bytes(size_t n) { return ((n + 1) / 2 * sizeof(granule) + 4095) / 4096 * 4096; }

static int dev_free(void *p, where_t at) {
    alloc_rec *r = find_alloc((uintptr_t)p);
    if (!r || r->base != (uintptr_t)p) return 0;
    if (r->freed) return -1;
    r->freed = 1;
    r->freed_at = at;
    g_used -= (r->size + 255) / 256 * 256;
    /* give the pages back; reads of freed memory are reported, not served */
    uintptr_t lo = (r->base + 4095) / 4096 * 4096, hi = (r->base + r->size) / 4096 * 4096;
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
    if (r->shadow) munmap(r->shadow, shadow_bytes(r->size));
    r->shadow = NULL;
    return 1;
}

/* ------------------------------------------------------ fibers, blocks */

enum { T_RUN, T_BAR, T_WARP, T_DONE };
struct cp_rec { uintptr_t dst, src; int bytes, src_bytes; where_t where; };
struct emu_thr {
    pp_emu_thread pub; /* first: pp_emu_cur points here */
    void *sp;
    char *stack_lo;
    int state, lin;
    where_t wait_where;
    const char *wait_what;
    std::vector<cp_rec> open;                /* cp.async not yet committed */
    std::deque<std::vector<cp_rec> > groups; /* committed, oldest first */
};

/* a warp collective: what each lane brought */
enum { C_SHFL, C_SYNCWARP, C_LDSM, C_MMA, C_WMMA };
static const char *coll_names[] = {"a warp shuffle", "__syncwarp", "ldmatrix", "mma.sync", "wmma::mma_sync"};
struct emu_warp {
    int arrived;
    int kind[32];
    where_t where[32];
    void *data[32];
    uint16_t wepoch;
};

struct launch_rec {
    const void *kernel;
    pp_emu_invoke_fn invoke;
    void *params;
    size_t params_bytes;
    void (*destroy)(void *);
    dim3 grid, block;
    size_t smem;
    const char *name;
    where_t where;
};

static const size_t STACK = 256 << 10, MAX_THREADS = 1024, SMEM_MAX = 232448, SMEM_DEFAULT = 48 << 10;
extern "C" {
pp_emu_thread *pp_emu_cur;
extern char __start_pp_emu_shared[] __attribute__((weak));
extern char __stop_pp_emu_shared[] __attribute__((weak));
}
static char *g_stacks;
static emu_thr g_thr[MAX_THREADS];
static emu_warp g_warp[MAX_THREADS / 32];
static emu_thr *g_running;
static int g_nthreads, g_live, g_bar_arrived;
static uint32_t g_run, g_launch_first_run, g_bepoch;
static launch_rec *g_launch;
static int g_block_failed;
/* shared memory of the running block: the static section at offsets
   [0, static), the dynamic area at [dyn_off, dyn_off + smem) */
static char *g_dyn;
static size_t g_dyn_size, g_dyn_off;
static granule *g_sshadow; /* per byte of shared memory */
static std::unordered_map<const void *, int> g_smem_attr;

#if PP_EMU_ASM_SWITCH
static void *g_sched_sp;
/* void pp_emu_swap(void **save_sp, void *to_sp): callee-saved registers on the stack */
extern "C" void pp_emu_swap(void **save, void *to);
asm(".text\n.globl pp_emu_swap\n.type pp_emu_swap,@function\npp_emu_swap:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n"
    ".size pp_emu_swap, .-pp_emu_swap\n");
#else
static ucontext_t g_sched_uc, g_thr_uc[MAX_THREADS];
#endif

static void fiber_main(void);
#if PP_EMU_ASM_SWITCH
static void fiber_entry(void) { fiber_main(); }
#else
static void fiber_entry_uc(void) { fiber_main(); }
#endif

static void fiber_init(emu_thr *t) {
#if PP_EMU_ASM_SWITCH
    uintptr_t top = ((uintptr_t)t->stack_lo + STACK) & ~(uintptr_t)15;
    void **sp = (void **)(top - 64);
    for (int i = 0; i < 6; i++) sp[i] = 0;
    sp[6] = (void *)&fiber_entry;
    t->sp = sp;
#else
    ucontext_t *u = &g_thr_uc[t->lin];
    getcontext(u);
    u->uc_stack.ss_sp = t->stack_lo;
    u->uc_stack.ss_size = STACK;
    u->uc_link = NULL;
    makecontext(u, fiber_entry_uc, 0);
#endif
}
static void switch_to(emu_thr *t) {
    g_running = t;
    pp_emu_cur = &t->pub;
#if PP_EMU_ASM_SWITCH
    pp_emu_swap(&g_sched_sp, t->sp);
#else
    swapcontext(&g_sched_uc, &g_thr_uc[t->lin]);
#endif
    pp_emu_cur = NULL;
    g_running = NULL;
}
/* back to the scheduler; returns when the scheduler runs this thread again */
static void yield(emu_thr *t) {
    pp_emu_cur = NULL;
#if PP_EMU_ASM_SWITCH
    pp_emu_swap(&t->sp, g_sched_sp);
#else
    swapcontext(&g_thr_uc[t->lin], &g_sched_uc);
#endif
    pp_emu_cur = &t->pub;
}

static emu_thr *cur(const char *what) {
    if (!pp_emu_cur) fatal("%s called outside a kernel", what);
    return (emu_thr *)pp_emu_cur;
}

static std::string thr_name(const emu_thr *t) {
    char b[96];
    snprintf(b, sizeof b, "thread (%u,%u,%u) of block (%u,%u,%u)", t->pub.tid.x, t->pub.tid.y, t->pub.tid.z,
             t->pub.bid.x, t->pub.bid.y, t->pub.bid.z);
    return b;
}
static std::string kernel_desc(void) {
    return std::string(g_launch->name) + " (launched at " + W(g_launch->where) + ")";
}

/* ------------------------------------- stream order: vector clocks */

/* Every operation a stream runs (a kernel, a copy, a memset, an emulated
   NCCL operation) is one tick of its stream's clock. A stream's vector
   clock holds, per stream id, the latest tick its next operation is
   ordered after: its own earlier ticks, what an event it waited on had
   seen when recorded, what the host had seen when it enqueued the
   operation (a synchronisation joins the clocks into the host's). Each
   2-byte granule of device memory keeps the last writing and reading
   operations as tags, id << 24 | tick; an access conflicts with one whose
   tick its own clock does not cover. That is a property of the program,
   not of the order the streams happened to run in, so a missing event wait
   is reported in every seeded order. */
typedef std::vector<uint32_t> vclock;
static const vclock *g_op_vc; /* the running operation's stream clock; NULL: host code */
static uint32_t g_op_tag;     /* its tag; 0: host code */
struct op_desc { const char *what; const char *name; where_t where; };
static std::unordered_map<uint32_t, op_desc> g_op_descs; /* tag -> what ran */
static void vc_join(vclock &a, const vclock &b) {
    if (a.size() < b.size()) a.resize(b.size(), 0);
    for (size_t i = 0; i < b.size(); i++)
        if (b[i] > a[i]) a[i] = b[i];
}
static inline bool before_op(uint32_t tag) {
    if (!tag || !g_op_vc || (tag >> 24) == (g_op_tag >> 24)) return true;
    size_t id = tag >> 24;
    return id < g_op_vc->size() && (*g_op_vc)[id] >= (tag & 0xFFFFFFu);
}
static std::string op_str(uint32_t tag) {
    auto it = g_op_descs.find(tag);
    char b[64];
    snprintf(b, sizeof b, " on stream %u (its operation %u)", tag >> 24, tag & 0xFFFFFFu);
    if (it == g_op_descs.end()) return std::string("an operation") + b;
    return std::string(it->second.what) + (it->second.name ? std::string(" ") + it->second.name : std::string()) +
           (it->second.where ? " at " + W(it->second.where) : std::string()) + b;
}
/* one granule touched by the running stream operation */
static void stream_check(granule &g, bool wr, size_t byte, const alloc_rec *r, where_t w) {
    uint32_t other = 0;
    const char *kind = NULL;
    if (!g_op_tag) return;
    if (!before_op(g.sw)) { other = g.sw; kind = wr ? "write after write" : "read after write"; }
    else if (wr && !before_op(g.sr)) { other = g.sr; kind = "write after read"; }
    else if (wr && !before_op(g.sr2)) { other = g.sr2; kind = "write after read"; }
    if (other && first_time(F_STREAM_RACE, (uint64_t)w, (uint64_t)g_op_descs[other].where ^ ((uint64_t)g_op_descs[other].name << 1)))
        report_text(F_STREAM_RACE, "cross-stream race, %s (byte %zu of a %zu-byte allocation made at %s): %s%s%s is not "
                    "ordered after %s: no event wait or synchronisation between them, so the streams may run them in either order",
                    kind, byte, r->size, W(r->made).c_str(), op_str(g_op_tag).c_str(), g_launch ? ", the access at " : "",
                    g_launch ? W(w).c_str() : "", op_str(other).c_str());
    if (wr) {
        g.sw = g_op_tag;
        g.sr = g.sr2 = 0;
    } else if (!g.sr || before_op(g.sr)) {
        g.sr = g_op_tag;
    } else {
        g.sr2 = g_op_tag; /* a third unordered reader forgets the second */
    }
}
static granule *shadow_of(alloc_rec *r) {
    if (!r->shadow) {
        void *p = mmap(NULL, shadow_bytes(r->size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) fatal("cannot map the shadow of a %zu-byte allocation", r->size);
        r->shadow = (granule *)p;
    }
    return r->shadow;
}
/* a device range a stream operation of the runtime (a copy, a memset) or
   the emulated NCCL reads or writes: bounds, use after free, stream order;
   false when it is not inside one live allocation */
static bool op_range(const void *p, size_t n, bool wr, where_t w, const char *call) {
    uintptr_t a = (uintptr_t)p;
    if (!g_check || !n || !g_arena || !in_arena(a)) return true;
    alloc_rec *r = find_alloc(a);
    if (!r || a < r->base || a + n > r->base + r->size) {
        REPORT(F_GLOBAL_OOB, w, 0, "%s %s %zu bytes at %p, not inside one allocation%s (at %s)", call, wr ? "writes" : "reads", n, p,
               r && a >= r->base && a < r->base + r->size ? ": it runs past the end of one" : "", W(w).c_str());
        return false;
    }
    if (r->freed) {
        REPORT(F_GLOBAL_UAF, w, 0, "%s %s device memory freed at %s (allocated at %s; at %s)", call, wr ? "writes" : "reads",
               W(r->freed_at).c_str(), W(r->made).c_str(), W(w).c_str());
        return false;
    }
    granule *sh = shadow_of(r);
    for (size_t k = (a - r->base) / 2; k <= (a + n - 1 - r->base) / 2; k++) stream_check(sh[k], wr, 2 * k, r, w);
    return true;
}

/* ------------------------------------ kernel counters (PP_EMU_PROFILE) */

/* PP_EMU_PROFILE=path writes, at exit, per kernel its launches, block
   size, dynamic shared memory, tensor-core FLOPs and the device bytes it
   touched (each 32-byte sector once per launch: what DRAM would move with
   a perfect cache), and per source line of a shared or global access its
   warp-level requests: the k-th executions of one site by the lanes of a
   warp form one request, as the lanes of a real warp execute it together.
   A shared request costs one wavefront per phase (a 4-byte access: one
   phase of 32 lanes; 8 bytes: two of 16; 16 bytes: four of 8, as
   ldmatrix's eight rows), and a phase costs as many wavefronts as the most
   distinct 4-byte words one of the 32 banks holds; a global request costs
   the distinct 32-byte sectors its lanes touch. The ideal is what the
   request's distinct bytes would cost laid out contiguously. */
struct prof_acc { uintptr_t a; uint16_t lane; uint16_t n; };
struct prof_site { long req = 0, cost = 0, ideal = 0, bytes = 0; };
struct prof_kernel {
    long launches = 0, blocks = 0, flops = 0, dram = 0;
    unsigned threads = 0;
    size_t smem = 0;
    std::map<std::pair<int, where_t>, prof_site> sites; /* (shared?, site) */
};
static int g_prof = -1; /* -1: not yet read from the environment */
static std::map<std::string, prof_kernel> g_prof_k;
static std::unordered_map<uint64_t, uint32_t> g_prof_exec;                 /* (site, lane in block) -> executions */
static std::map<std::tuple<int, where_t, int, uint32_t>, std::vector<prof_acc> > g_prof_req; /* (shared, site, warp, k) */
static std::unordered_set<uintptr_t> g_prof_sectors;                       /* this launch's sectors */
static bool prof_on(void) {
    if (g_prof < 0) g_prof = getenv("PP_EMU_PROFILE") != NULL;
    return g_prof > 0;
}
static void prof_access(int lin, uintptr_t a, size_t n, bool shared, where_t w) {
    uint64_t key = (uint64_t)w * 1315423911u ^ (uint64_t)lin;
    uint32_t k = g_prof_exec[key]++;
    g_prof_req[std::make_tuple(shared ? 1 : 0, w, lin >> 5, k)].push_back(prof_acc{a, (uint16_t)(lin & 31), (uint16_t)n});
    if (!shared)
        for (uintptr_t sct = a / 32; sct <= (a + n - 1) / 32; sct++) g_prof_sectors.insert(sct);
}
/* the block's requests, costed (run_block calls it when the block ends) */
static void prof_block_end(const char *kernel) {
    prof_kernel &K = g_prof_k[kernel];
    for (auto &it : g_prof_req) {
        const std::vector<prof_acc> &v = it.second;
        int shared = std::get<0>(it.first);
        prof_site &S = K.sites[std::make_pair(shared, std::get<1>(it.first))];
        std::set<uintptr_t> bytes;
        size_t width = 1;
        for (const prof_acc &x : v) {
            for (size_t b = 0; b < x.n; b++) bytes.insert(x.a + b);
            if (x.n > width) width = x.n;
        }
        long cost = 0;
        if (shared) {
            int phases = width <= 4 ? 1 : (int)(width / 4), per = 32 / phases;
            for (int ph = 0; ph < phases; ph++) {
                std::map<int, std::set<uintptr_t> > banks;
                for (const prof_acc &x : v)
                    if (x.lane / per == ph)
                        for (uintptr_t wd = x.a / 4; wd <= (x.a + x.n - 1) / 4; wd++) banks[(int)(wd % 32)].insert(wd);
                size_t most = 0;
                for (auto &b : banks) most = std::max(most, b.second.size());
                cost += (long)most;
            }
            S.ideal += (long)((bytes.size() + 127) / 128);
        } else {
            std::set<uintptr_t> sectors;
            for (const prof_acc &x : v)
                for (uintptr_t sct = x.a / 32; sct <= (x.a + x.n - 1) / 32; sct++) sectors.insert(sct);
            cost = (long)sectors.size();
            S.ideal += (long)((bytes.size() + 31) / 32);
        }
        S.req++;
        S.cost += cost;
        S.bytes += (long)bytes.size();
    }
    g_prof_req.clear();
    g_prof_exec.clear();
}
static void prof_write(void) {
    const char *path = getenv("PP_EMU_PROFILE");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) return;
    fprintf(f, "# kernel NAME launches blocks threads smem tensor_flops dram_bytes\n"
               "# site NAME shared|global FILE:LINE requests wavefronts|sectors ideal bytes\n");
    for (auto &k : g_prof_k) {
        fprintf(f, "kernel\t%s\t%ld\t%ld\t%u\t%zu\t%ld\t%ld\n", k.first.c_str(), k.second.launches, k.second.blocks,
                k.second.threads, k.second.smem, k.second.flops, k.second.dram);
        for (auto &st : k.second.sites) {
            std::string where = where_str(st.first.second);
            size_t cut = where.find(" <- ");
            fprintf(f, "site\t%s\t%s\t%s\t%ld\t%ld\t%ld\t%ld\n", k.first.c_str(), st.first.first ? "shared" : "global",
                    where.substr(0, cut).c_str(), st.second.req, st.second.cost, st.second.ideal, st.second.bytes);
        }
    }
    fclose(f);
}

/* ---------------------------------------------------- access checking */

static inline bool ordered(const acc_rec &r, const emu_thr *t, uint16_t wep) {
    /* same thread, or separated by a barrier of the block, or by a __syncwarp of the warp */
    if (r.run != g_run) return false;
    if (r.tid == (uint16_t)t->lin) return true;
    if (r.bepoch != g_bepoch) return true;
    return (r.tid >> 5) == (t->lin >> 5) && r.wepoch != wep;
}
static inline void fill(acc_rec &r, const emu_thr *t, uint16_t wep, where_t w) {
    r.where = w;
    r.run = g_run;
    r.bepoch = g_bepoch;
    r.tid = (uint16_t)t->lin;
    r.wepoch = wep;
}
static std::string tid_str(uint16_t lin) {
    /* a thread of the running block by linear index */
    return thr_name(&g_thr[lin]);
}

static void shared_access(emu_thr *t, size_t off, size_t n, bool wr, where_t w) {
    uint16_t wep = g_warp[t->lin >> 5].wepoch;
    for (size_t i = 0; i < n; i++) {
        granule &g = g_sshadow[off + i];
        bool written = g.w.run == g_run;
        if (!wr) {
            if (!written) {
                REPORT(F_SHARED_UNWRITTEN, w, 0, "read of shared memory no thread of the block wrote (byte %zu of %s): %s at %s",
                       off + i, kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str());
            } else if (!ordered(g.w, t, wep)) {
                REPORT(F_SHARED_RACE, w, g.w.where, "shared-memory race, read after write without a barrier (byte %zu, %s): %s read at %s; %s wrote at %s",
                       off + i, kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str(), tid_str(g.w.tid).c_str(), W(g.w.where).c_str());
            }
            fill(g.r, t, wep, w);
        } else {
            if (written && !ordered(g.w, t, wep))
                REPORT(F_SHARED_RACE, w, g.w.where, "shared-memory race, write after write without a barrier (byte %zu, %s): %s wrote at %s; %s wrote at %s",
                       off + i, kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str(), tid_str(g.w.tid).c_str(), W(g.w.where).c_str());
            if (g.r.run == g_run && !ordered(g.r, t, wep))
                REPORT(F_SHARED_RACE, w, g.r.where, "shared-memory race, write after read without a barrier (byte %zu, %s): %s wrote at %s; %s read at %s",
                       off + i, kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str(), tid_str(g.r.tid).c_str(), W(g.r.where).c_str());
            fill(g.w, t, wep, w);
        }
    }
}

static inline bool global_conflict(const acc_rec &r, const emu_thr *t, uint16_t wep) {
    return r.run >= g_launch_first_run && r.run != 0 && !ordered(r, t, wep);
}
static std::string run_thread_str(const acc_rec &r) {
    if (r.run == g_run) return tid_str(r.tid);
    char b[96];
    snprintf(b, sizeof b, "thread %u of another block of this launch", r.tid);
    return b;
}

static void global_access(emu_thr *t, uintptr_t a, size_t n, bool wr, bool atomic, where_t w) {
    alloc_rec *r = find_alloc(a);
    const char *what = wr ? "write" : "read";
    if (!r || a + n > r->base + r->size || a < r->base) {
        if (r && a < r->base + r->size + RED && a >= r->base)
            REPORT(F_GLOBAL_OOB, w, 0, "global %s of %zu bytes out of bounds: %zu bytes past the end of a %zu-byte allocation made at %s (%s, %s at %s)",
                   what, n, (size_t)(a + n - r->base - r->size), r->size, W(r->made).c_str(), kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str());
        else
            REPORT(F_GLOBAL_OOB, w, 0, "global %s of %zu bytes in a red zone, outside every allocation (%s, %s at %s)", what, n,
                   kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str());
        return;
    }
    if (r->freed) {
        REPORT(F_GLOBAL_UAF, w, 0, "global %s of memory freed at %s (allocated at %s; %s, %s at %s)", what, W(r->freed_at).c_str(),
               W(r->made).c_str(), kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str());
        return;
    }
    if (atomic) return;
    shadow_of(r);
    uint16_t wep = g_warp[t->lin >> 5].wepoch;
    size_t g0 = (a - r->base) / 2, g1 = (a + n - 1 - r->base) / 2;
    for (size_t k = g0; k <= g1; k++) {
        granule &g = r->shadow[k];
        if (global_conflict(g.w, t, wep))
            REPORT(F_GLOBAL_RACE, w, g.w.where, "global-memory race, %s after write in one launch (byte %zu of an allocation made at %s; %s): %s at %s; %s wrote at %s",
                   what, (size_t)(2 * k), W(r->made).c_str(), kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str(),
                   run_thread_str(g.w).c_str(), W(g.w.where).c_str());
        if (wr && global_conflict(g.r, t, wep))
            REPORT(F_GLOBAL_RACE, w, g.r.where, "global-memory race, write after read in one launch (byte %zu of an allocation made at %s; %s): %s wrote at %s; %s read at %s",
                   (size_t)(2 * k), W(r->made).c_str(), kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str(),
                   run_thread_str(g.r).c_str(), W(g.r.where).c_str());
        fill(wr ? g.w : g.r, t, wep, w);
        stream_check(g, wr, 2 * k, r, w);
    }
}

/* every access a kernel makes (and, from host code of the instrumented unit, none to device memory) */
/* align: the width the access must be aligned to (a load or store of n
   bytes, a vector's included, must be n-aligned on the GPU, or it faults
   with a misaligned address); 1 for the accesses g++ itself calls
   unaligned (a memcpy, a vectorised host loop) */
static void access(emu_thr *t, uintptr_t a, size_t n, bool wr, bool atomic, where_t w, size_t align = 1) {
    if (!g_check) return;
    if (!t) {
        if (g_arena && in_arena(a))
            REPORT(F_HOST_DEREF, w, 0, "host code %s device memory at %s (use cudaMemcpy)", wr ? "writes" : "reads", W(w).c_str());
        return;
    }
    uintptr_t st = (uintptr_t)__start_pp_emu_shared, ss = (uintptr_t)__stop_pp_emu_shared - st;
    if (align > 1 && (a & (align - 1)) &&
        (a - (uintptr_t)g_dyn < SMEM_MAX || (st && a - st < ss) || (g_arena && a - (uintptr_t)g_arena < g_arena_cap)))
        REPORT(F_MISALIGNED, w, 0, "misaligned %zu-byte %s at an address %zu bytes past a multiple of %zu (%s memory; %s, %s at %s)",
               n, wr ? "store" : "load", (size_t)(a & (align - 1)), align,
               a - (uintptr_t)g_dyn < SMEM_MAX || (st && a - st < ss) ? "shared" : "global", kernel_desc().c_str(),
               thr_name(t).c_str(), W(w).c_str());
    if (a - (uintptr_t)g_dyn < SMEM_MAX) {
        size_t off = a - (uintptr_t)g_dyn;
        if (off + n > g_dyn_size) {
            REPORT(F_SHARED_OOB, w, 0, "dynamic shared memory %s at bytes %zu..%zu, the launch gave %zu (%s, %s at %s)",
                   wr ? "write" : "read", off, off + n - 1, g_dyn_size, kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str());
            return;
        }
        shared_access(t, g_dyn_off + off, n, wr, w);
        if (prof_on()) prof_access(t->lin, a, n, true, w);
    } else if (st && a - st < ss) {
        shared_access(t, a - st, n, wr, w);
        if (prof_on()) prof_access(t->lin, a, n, true, w);
    } else if (g_arena && a - (uintptr_t)g_arena < g_arena_cap) {
        global_access(t, a, n, wr, atomic, w);
        if (prof_on()) prof_access(t->lin, a, n, false, w);
    } else if (a - (uintptr_t)t->stack_lo < STACK || a - (uintptr_t)&t->pub < sizeof t->pub) {
        return; /* the thread's own local memory, its threadIdx and friends */
    } else if (a - (uintptr_t)g_launch->params < g_launch->params_bytes) {
        return; /* the kernel's parameters */
    } else {
        REPORT(F_WILD, w, 0, "%s of %zu bytes at %p: not device, shared or local memory (a host pointer passed to the kernel?) (%s, %s at %s)",
               wr ? "write" : "read", n, (void *)a, kernel_desc().c_str(), thr_name(t).c_str(), W(w).c_str());
    }
}

/* the sanitizer's hooks: g++ -fsanitize=thread --param
   tsan-instrument-func-entry-exit=0 on the kernels' translation unit turns
   every load and store into a call here (ThreadSanitizer's compile-time
   half only: no TSan runtime is linked). ThreadSanitizer's instrumentation,
   unlike AddressSanitizer's, keeps the store of a read-modify-write (x += y)
   apart from its load, which the race checkers need. */
#define PP_EMU_RET ((where_t)(uintptr_t)__builtin_return_address(0))
#define PP_EMU_HOOK(n)                                                                                               \
    extern "C" void __tsan_read##n(void *a) { access((emu_thr *)pp_emu_cur, (uintptr_t)a, n, false, false, PP_EMU_RET, n); } \
    extern "C" void __tsan_write##n(void *a) { access((emu_thr *)pp_emu_cur, (uintptr_t)a, n, true, false, PP_EMU_RET, n); } \
    extern "C" void __tsan_unaligned_read##n(void *a) { access((emu_thr *)pp_emu_cur, (uintptr_t)a, n, false, false, PP_EMU_RET); } \
    extern "C" void __tsan_unaligned_write##n(void *a) { access((emu_thr *)pp_emu_cur, (uintptr_t)a, n, true, false, PP_EMU_RET); }
PP_EMU_HOOK(1)
PP_EMU_HOOK(2)
PP_EMU_HOOK(4)
PP_EMU_HOOK(8)
PP_EMU_HOOK(16)
extern "C" void __tsan_read_range(void *a, size_t n) { access((emu_thr *)pp_emu_cur, (uintptr_t)a, n, false, false, PP_EMU_RET); }
extern "C" void __tsan_write_range(void *a, size_t n) { access((emu_thr *)pp_emu_cur, (uintptr_t)a, n, true, false, PP_EMU_RET); }
extern "C" void __tsan_init(void) {}
extern "C" void __tsan_func_entry(void *pc) { (void)pc; }
extern "C" void __tsan_func_exit(void) {}
extern "C" void __tsan_vptr_update(void **p, void *v) { (void)p; (void)v; }
extern "C" void __tsan_vptr_read(void **p) { (void)p; }

/* g++ -fsanitize=bounds: an index outside an array whose size the compiler
   knows (a thread's local array, a static __shared__ array, a fixed-size
   array member) calls this before the access (UBSan's compile-time half
   only, as with ThreadSanitizer's above). Local memory has no red zones,
   so this is the check that sees a local-array overrun. */
struct ubsan_loc { const char *file; uint32_t line, column; };
struct ubsan_oob_data { ubsan_loc loc; const void *array_type, *index_type; };
extern "C" void __ubsan_handle_out_of_bounds(void *data, void *index) {
    const ubsan_oob_data *d = (const ubsan_oob_data *)data;
    emu_thr *t = (emu_thr *)pp_emu_cur;
    where_t w = site(d->loc.file, (int)d->loc.line);
    if (!g_check) return;
    REPORT(F_INDEX_OOB, w, 0, "array index %lld out of bounds at %s (%s)", (long long)(intptr_t)index, W(w).c_str(),
           t ? (kernel_desc() + ", " + thr_name(t)).c_str() : "host code");
}
extern "C" void __ubsan_handle_out_of_bounds_abort(void *data, void *index) {
    __ubsan_handle_out_of_bounds(data, index);
    flush_reports();
    fatal("array index out of bounds (-fsanitize=bounds without recovery)");
}

/* ---------------------------------------------------------- the block */

static void release_barrier(void) {
    /* every thread still running has arrived: check they are at one barrier */
    where_t w0 = 0;
    for (int i = 0; i < g_nthreads; i++) {
        emu_thr *t = &g_thr[i];
        if (t->state != T_BAR) continue;
        if (!w0) w0 = t->wait_where;
        else if (t->wait_where != w0)
            REPORT(F_BARRIER, w0, t->wait_where, "barrier divergence in %s: threads wait at different __syncthreads: %s at %s, another at %s",
                   kernel_desc().c_str(), thr_name(t).c_str(), W(t->wait_where).c_str(), W(w0).c_str());
    }
    for (int i = 0; i < g_nthreads; i++)
        if (g_thr[i].state == T_BAR) g_thr[i].state = T_RUN;
    g_bar_arrived = 0;
    g_bepoch++;
}

void pp_emu_syncthreads(const char *file, int line) {
    emu_thr *t = cur("__syncthreads");
    t->state = T_BAR;
    t->wait_where = site(file, line);
    t->wait_what = "__syncthreads";
    if (++g_bar_arrived == g_live) release_barrier();
    while (t->state != T_RUN) yield(t);
}

static void land(emu_thr *t, std::vector<cp_rec> &v);
static void fiber_main(void) {
    emu_thr *t = g_running;
    g_launch->invoke(g_launch->kernel, g_launch->params);
    /* copies still in flight land before the thread's shared memory goes */
    while (!t->groups.empty()) { land(t, t->groups.front()); t->groups.pop_front(); }
    land(t, t->open);
    t->state = T_DONE;
    g_live--;
    if (g_bar_arrived > 0) {
        for (int i = 0; i < g_nthreads; i++)
            if (g_thr[i].state == T_BAR) {
                REPORT(F_BARRIER, g_thr[i].wait_where, 0, "barrier divergence in %s: %s exited while %s waits at __syncthreads at %s",
                       kernel_desc().c_str(), thr_name(t).c_str(), thr_name(&g_thr[i]).c_str(), W(g_thr[i].wait_where).c_str());
                break;
            }
        if (g_bar_arrived == g_live) release_barrier();
    }
    yield(t);
    fatal("a finished thread was resumed");
}

static void deadlock_report(void) {
    std::string s = "deadlock in " + kernel_desc() + ", block (" + std::to_string(g_thr[0].pub.bid.x) + "," +
                    std::to_string(g_thr[0].pub.bid.y) + "," + std::to_string(g_thr[0].pub.bid.z) + "): ";
    int i = 0, shown = 0;
    std::string key;
    while (i < g_nthreads) {
        int j = i;
        while (j + 1 < g_nthreads && g_thr[j + 1].state == g_thr[i].state && g_thr[j + 1].wait_where == g_thr[i].wait_where) j++;
        if (shown++ < 8) {
            s += "threads " + std::to_string(i) + ".." + std::to_string(j);
            if (g_thr[i].state == T_DONE) s += " exited; ";
            else s += std::string(" wait in ") + g_thr[i].wait_what + " at " + W(g_thr[i].wait_where) + "; ";
        }
        if (g_thr[i].state != T_DONE) key += W(g_thr[i].wait_where);
        i = j + 1;
    }
    report(F_DEADLOCK, key, "%s", s.c_str());
}

static void run_block(launch_rec *L, uint3 bid) {
    int n = (int)(L->block.x * L->block.y * L->block.z);
    g_run++;
    g_bepoch = 0;
    g_nthreads = g_live = n;
    g_bar_arrived = 0;
    for (int w = 0; w < (n + 31) / 32; w++) { g_warp[w].arrived = 0; g_warp[w].wepoch = 0; }
    memset(g_dyn, 0xFF, L->smem); /* shared memory starts as poison */
    if (__start_pp_emu_shared) memset(__start_pp_emu_shared, 0xFF, __stop_pp_emu_shared - __start_pp_emu_shared);
    for (int i = 0; i < n; i++) {
        emu_thr *t = &g_thr[i];
        t->lin = i;
        t->pub.tid.x = i % L->block.x;
        t->pub.tid.y = (i / L->block.x) % L->block.y;
        t->pub.tid.z = i / (L->block.x * L->block.y);
        t->pub.bid = bid;
        t->pub.bdim = L->block;
        t->pub.gdim = L->grid;
        t->stack_lo = g_stacks + (size_t)i * STACK;
        t->state = T_RUN;
        t->wait_where = 0;
        t->wait_what = "";
        t->open.clear();
        t->groups.clear();
        fiber_init(t);
    }
    for (;;) {
        int ran = 0;
        for (int i = 0; i < n; i++)
            if (g_thr[i].state == T_RUN) { switch_to(&g_thr[i]); ran = 1; }
        if (g_live == 0) break;
        if (!ran) {
            deadlock_report();
            g_block_failed = 1;
            break;
        }
    }
    if (prof_on()) prof_block_end(L->name);
    flush_reports();
}

/* ---------------------------------------------------- warp collectives */

struct shfl_args { unsigned v, r; int kind, arg; };
struct ldsm_args { uintptr_t row; unsigned *out[4]; int num, trans; };
struct mma_args { unsigned a[4], b[2]; float c[4]; float *d[4]; };
struct wmma_args { float *d; const __nv_bfloat16 *a, *b; const float *c; };

static void coll_compute(int w, int kind);
/* arrive at a collective of the warp; returns when the warp's result is in */
static void collective(emu_thr *t, int kind, where_t where, void *data, unsigned mask) {
    int w = t->lin >> 5, lane = t->lin & 31;
    emu_warp &W_ = g_warp[w];
    if (mask != 0xffffffffu) fatal("%s at %s with mask 0x%x: only full-warp masks are emulated", coll_names[kind], where_str(where).c_str(), mask);
    if (g_nthreads - w * 32 < 32) fatal("%s at %s in a warp of %d threads: only full warps are emulated", coll_names[kind], where_str(where).c_str(), g_nthreads - w * 32);
    W_.kind[lane] = kind;
    W_.where[lane] = where;
    W_.data[lane] = data;
    t->state = T_WARP;
    t->wait_where = where;
    t->wait_what = coll_names[kind];
    if (++W_.arrived == 32) {
        for (int l = 1; l < 32; l++)
            if (W_.kind[l] != W_.kind[0] || W_.where[l] != W_.where[0])
                REPORT(F_BARRIER, W_.where[0], W_.where[l], "warp divergence in %s: lane 0 of warp %d is in %s at %s while lane %d is in %s at %s",
                       kernel_desc().c_str(), w, coll_names[W_.kind[0]], W(W_.where[0]).c_str(), l, coll_names[W_.kind[l]], W(W_.where[l]).c_str());
        coll_compute(w, kind);
        W_.arrived = 0;
        for (int l = 0; l < 32; l++) g_thr[w * 32 + l].state = T_RUN;
    } else {
        yield(t);
    }
    while (t->state != T_RUN) yield(t);
}

static inline float bf2f(unsigned short h) {
    unsigned u = (unsigned)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void coll_compute(int w, int kind) {
    emu_warp &W_ = g_warp[w];
    if (kind == C_SYNCWARP) {
        W_.wepoch++;
    } else if (kind == C_SHFL) {
        shfl_args *a[32];
        for (int l = 0; l < 32; l++) a[l] = (shfl_args *)W_.data[l];
        for (int l = 0; l < 32; l++) {
            int s = a[l]->kind == 0 ? (l ^ a[l]->arg) : a[l]->kind == 1 ? l + a[l]->arg : a[l]->kind == 2 ? l - a[l]->arg : (a[l]->arg & 31);
            if (s < 0 || s > 31) s = l;
            a[l]->r = a[s & 31]->v;
        }
    } else if (kind == C_LDSM) {
        /* matrix j's 8 rows come from the addresses of lanes 8j..8j+7; lane L
           gets row L/4, elements 2(L%4), 2(L%4)+1 (.trans: column L/4, rows 2(L%4), 2(L%4)+1) */
        ldsm_args *a[32];
        unsigned short m[4][8][8];
        for (int l = 0; l < 32; l++) a[l] = (ldsm_args *)W_.data[l];
        int num = a[0]->num;
        for (int j = 0; j < num; j++)
            for (int r = 0; r < 8; r++) {
                int src = 8 * j + r;
                access(&g_thr[w * 32 + src], a[src]->row, 16, false, false, W_.where[src]);
                memcpy(m[j][r], (const void *)a[src]->row, 16);
            }
        for (int l = 0; l < 32; l++)
            for (int j = 0; j < num; j++) {
                unsigned short lo, hi;
                if (!a[l]->trans) { lo = m[j][l / 4][2 * (l % 4)]; hi = m[j][l / 4][2 * (l % 4) + 1]; }
                else { lo = m[j][2 * (l % 4)][l / 4]; hi = m[j][2 * (l % 4) + 1][l / 4]; }
                *a[l]->out[j] = (unsigned)lo | ((unsigned)hi << 16);
            }
    } else if (kind == C_MMA) {
        if (prof_on() && g_launch) g_prof_k[g_launch->name].flops += 2 * 16 * 8 * 16;
        /* m16n8k16, A row-major, B column-major, bf16 in, fp32 accumulate
           (PTX ISA, mma.m16n8k16 fragments; g = lane/4, q = lane%4):
           A a0 (g, 2q..), a1 (g+8, 2q..), a2 (g, 8+2q..), a3 (g+8, 8+2q..)
           B b0 (k 2q.., n g), b1 (k 8+2q.., n g)
           C c0 c1 (g, 2q, 2q+1), c2 c3 (g+8, 2q, 2q+1) */
        float A[16][16], B[16][8], Cm[16][8];
        mma_args *a[32];
        for (int l = 0; l < 32; l++) {
            mma_args *x = a[l] = (mma_args *)W_.data[l];
            int g = l / 4, q = l % 4;
            for (int h = 0; h < 2; h++) {
                A[g][2 * q + h] = bf2f((unsigned short)(x->a[0] >> (16 * h)));
                A[g + 8][2 * q + h] = bf2f((unsigned short)(x->a[1] >> (16 * h)));
                A[g][8 + 2 * q + h] = bf2f((unsigned short)(x->a[2] >> (16 * h)));
                A[g + 8][8 + 2 * q + h] = bf2f((unsigned short)(x->a[3] >> (16 * h)));
                B[2 * q + h][g] = bf2f((unsigned short)(x->b[0] >> (16 * h)));
                B[8 + 2 * q + h][g] = bf2f((unsigned short)(x->b[1] >> (16 * h)));
            }
            Cm[g][2 * q] = x->c[0];
            Cm[g][2 * q + 1] = x->c[1];
            Cm[g + 8][2 * q] = x->c[2];
            Cm[g + 8][2 * q + 1] = x->c[3];
        }
        /* an all-zero A or B (the zero-filled tails of small matrices)
           leaves D = C exactly: skip the products */
        unsigned nz_a = 0, nz_b = 0;
        bool inf_a = false, inf_b = false; /* 0 x inf is NaN: no shortcut then */
        for (int l = 0; l < 32; l++) {
            for (int e = 0; e < 4; e++) {
                nz_a |= a[l]->a[e] & 0x7fff7fffu;
                inf_a |= (a[l]->a[e] & 0x7f80u) == 0x7f80u || (a[l]->a[e] & 0x7f800000u) == 0x7f800000u;
            }
            for (int e = 0; e < 2; e++) {
                nz_b |= a[l]->b[e] & 0x7fff7fffu;
                inf_b |= (a[l]->b[e] & 0x7f80u) == 0x7f80u || (a[l]->b[e] & 0x7f800000u) == 0x7f800000u;
            }
        }
        if ((!nz_a && inf_b) || (!nz_b && inf_a)) nz_a = nz_b = 1;
        for (int l = 0; l < 32; l++) {
            int g = l / 4, q = l % 4;
            for (int e = 0; e < 4; e++) {
                int r = g + (e >= 2 ? 8 : 0), c = 2 * q + (e & 1);
                double s = Cm[r][c];
                if (!nz_a || !nz_b) {
                    *a[l]->d[e] = Cm[r][c];
                    continue;
                }
                for (int k = 0; k < 16; k++) s += (double)A[r][k] * B[k][c];
                *a[l]->d[e] = (float)s;
            }
        }
    } else if (kind == C_WMMA) {
        if (prof_on() && g_launch) g_prof_k[g_launch->name].flops += 2 * 16 * 16 * 16;
        float A[16][16], B[16][16], Cm[16][16];
        wmma_args *a[32];
        for (int l = 0; l < 32; l++) {
            a[l] = (wmma_args *)W_.data[l];
            for (int i = 0; i < 8; i++) {
                int e = 8 * l + i;
                A[e >> 4][e & 15] = __bfloat162float(a[l]->a[i]);
                B[e >> 4][e & 15] = __bfloat162float(a[l]->b[i]);
                Cm[e >> 4][e & 15] = a[l]->c[i];
            }
        }
        for (int l = 0; l < 32; l++)
            for (int i = 0; i < 8; i++) {
                int e = 8 * l + i, r = e >> 4, c = e & 15;
                double s = Cm[r][c];
                for (int k = 0; k < 16; k++) s += (double)A[r][k] * B[k][c];
                a[l]->d[i] = (float)s;
            }
    }
}

void pp_emu_syncwarp(const char *file, int line, unsigned mask) {
    emu_thr *t = cur("__syncwarp");
    collective(t, C_SYNCWARP, site(file, line), NULL, mask);
}
unsigned pp_emu_shfl(const char *file, int line, int kind, unsigned mask, unsigned v, int arg, int width) {
    emu_thr *t = cur("a warp shuffle");
    shfl_args a = {v, 0, kind, arg};
    if (width != 32) fatal("shuffle width %d at %s:%d: only 32 is emulated", width, short_path(file).c_str(), line);
    collective(t, C_SHFL, site(file, line), &a, mask);
    return a.r;
}
unsigned nvcuda::wmma::pp_emu_lane(void) { return (unsigned)cur("WMMA")->lin & 31; }
void nvcuda::wmma::pp_emu_wmma_mma(float d[8], const __nv_bfloat16 a[8], const __nv_bfloat16 b[8], const float c[8],
                                   const char *file, int line) {
    emu_thr *t = cur("wmma::mma_sync");
    float tmp[8];
    wmma_args x = {tmp, a, b, c};
    collective(t, C_WMMA, site(file, line), &x, 0xffffffffu);
    memcpy(d, tmp, sizeof tmp);
}

void *pp_emu_dyn_smem(void) { return g_dyn; }

float pp_emu_atomic_add_f32(float *p, float v, const char *file, int line) {
    emu_thr *t = cur("atomicAdd");
    access(t, (uintptr_t)p, 4, true, true, site(file, line));
    float old = *p;
    *p = old + v;
    return old;
}

size_t pp_emu_cvta_shared(const void *p, const char *file, int line) {
    uintptr_t a = (uintptr_t)p, st = (uintptr_t)__start_pp_emu_shared;
    if (a - (uintptr_t)g_dyn < SMEM_MAX) return g_dyn_off + (a - (uintptr_t)g_dyn);
    if (st && a - st < (uintptr_t)__stop_pp_emu_shared - st) return a - st;
    fatal("__cvta_generic_to_shared at %s:%d of %p, which is not shared memory", short_path(file).c_str(), line, p);
}
static uintptr_t shared_ptr(unsigned s, where_t w) {
    if (s >= g_dyn_off && s - g_dyn_off < SMEM_MAX) return (uintptr_t)g_dyn + (s - g_dyn_off);
    if (s < (uintptr_t)(__stop_pp_emu_shared - __start_pp_emu_shared)) return (uintptr_t)__start_pp_emu_shared + s;
    fatal("shared address 0x%x at %s is outside shared memory", s, where_str(w).c_str());
}

/* ----------------------------------------------------------------- PTX */

/* an instruction's text, parsed once per asm statement */
enum { P_CP_ASYNC, P_COMMIT, P_WAIT_GROUP, P_WAIT_ALL, P_LDSM, P_MMA, P_UNKNOWN };
struct ptx_item { int opnd; unsigned long long lit; std::string text; }; /* %opnd, or a literal */
struct ptx_ins {
    std::string op;
    int code, ldsm_num, ldsm_trans, ldsm_ok;
    std::vector<std::vector<ptx_item> > args; /* each argument: its items ({a, b} gives two, [a] one) */
    std::vector<int> bracket;                 /* argument was [..] */
};
static const ptx_ins &ptx_parse(const char *text) {
    static std::unordered_map<const char *, ptx_ins> cache;
    auto it = cache.find(text);
    if (it != cache.end()) return it->second;
    ptx_ins p;
    std::string s(text);
    while (!s.empty() && (s.back() == '\n' || s.back() == ';' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    size_t i = s.find_first_of(" \t");
    p.op = s.substr(0, i);
    p.code = p.op == "cp.async.cg.shared.global" || p.op == "cp.async.ca.shared.global" ? P_CP_ASYNC
             : p.op == "cp.async.commit_group"                                           ? P_COMMIT
             : p.op == "cp.async.wait_group"                                             ? P_WAIT_GROUP
             : p.op == "cp.async.wait_all"                                               ? P_WAIT_ALL
             : p.op.compare(0, 28, "ldmatrix.sync.aligned.m8n8.x") == 0                  ? P_LDSM
             : p.op == "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"             ? P_MMA
                                                                                         : P_UNKNOWN;
    p.ldsm_num = p.code == P_LDSM ? p.op[28] - '0' : 0;
    p.ldsm_trans = p.op.find(".trans") != std::string::npos;
    p.ldsm_ok = (p.ldsm_num == 1 || p.ldsm_num == 2 || p.ldsm_num == 4) && p.op.find(".shared.b16") != std::string::npos;
    std::string rest = i == std::string::npos ? "" : s.substr(i);
    size_t k = 0;
    while (k < rest.size()) {
        while (k < rest.size() && (rest[k] == ' ' || rest[k] == '\t' || rest[k] == ',')) k++;
        if (k >= rest.size()) break;
        std::vector<ptx_item> items;
        int br = 0;
        std::string body;
        if (rest[k] == '{' || rest[k] == '[') {
            char close = rest[k] == '{' ? '}' : ']';
            br = rest[k] == '[';
            size_t e = rest.find(close, k);
            body = rest.substr(k + 1, e - k - 1);
            k = e + 1;
        } else {
            size_t e = rest.find(',', k);
            if (e == std::string::npos) e = rest.size();
            body = rest.substr(k, e - k);
            k = e;
        }
        size_t a = 0;
        while (a <= body.size()) {
            size_t e = body.find(',', a);
            if (e == std::string::npos) e = body.size();
            std::string item = body.substr(a, e - a);
            item.erase(0, item.find_first_not_of(" \t"));
            item.erase(item.find_last_not_of(" \t") + 1);
            if (!item.empty()) {
                ptx_item x;
                x.text = item;
                x.opnd = item[0] == '%' ? atoi(item.c_str() + 1) : -1;
                x.lit = item[0] == '%' ? 0 : strtoull(item.c_str(), NULL, 0);
                items.push_back(x);
            }
            a = e + 1;
        }
        p.args.push_back(items);
        p.bracket.push_back(br);
    }
    return cache[text] = p;
}

struct opv { const pp_emu_operand *p; size_t n; };
/* an argument item's value: an operand's bits or a literal */
static unsigned long long ptx_val(const ptx_item &item, opv ops, const char *file, int line, const char **cons = NULL) {
    if (item.opnd >= 0) {
        if ((size_t)item.opnd >= ops.n) fatal("asm at %s:%d names %s but has %zu operands", short_path(file).c_str(), line, item.text.c_str(), ops.n);
        if (cons) *cons = ops.p[item.opnd].cons;
        return ops.p[item.opnd].in;
    }
    if (cons) *cons = "literal";
    return item.lit;
}
static const pp_emu_operand &ptx_operand(const ptx_item &item, opv ops, const char *file, int line) {
    if (item.opnd < 0 || (size_t)item.opnd >= ops.n) fatal("asm at %s:%d: %s is not an operand", short_path(file).c_str(), line, item.text.c_str());
    return ops.p[item.opnd];
}
static void need(bool ok, const char *file, int line, const char *text, const char *why) {
    if (!ok) fatal("asm at %s:%d (\"%s\"): %s", short_path(file).c_str(), line, text, why);
}

static void land(emu_thr *t, std::vector<cp_rec> &v) {
    for (size_t i = 0; i < v.size(); i++) {
        cp_rec &c = v[i];
        unsigned char buf[16];
        memset(buf, 0, sizeof buf);
        if (c.src_bytes > 0) {
            access(t, c.src, (size_t)c.src_bytes, false, false, c.where);
            alloc_rec *r = g_arena && in_arena(c.src) ? find_alloc(c.src) : NULL;
            /* a source outside its allocation is reported above; do not fault on it */
            if (!r || (!r->freed && c.src >= r->base && c.src + c.src_bytes <= r->base + r->size) || !in_arena(c.src))
                memcpy(buf, (const void *)c.src, (size_t)c.src_bytes);
        }
        access(t, c.dst, (size_t)c.bytes, true, false, c.where);
        memcpy((void *)c.dst, buf, (size_t)c.bytes);
    }
    v.clear();
}

void pp_emu_asm(const char *file, int line, const char *text, std::initializer_list<pp_emu_operand> il) {
    emu_thr *t = cur("inline PTX");
    opv ops = {il.begin(), il.size()};
    const ptx_ins &p = ptx_parse(text);
    where_t where = site(file, line);
    const std::string &op = p.op;
    if (p.code == P_CP_ASYNC) {
        need(p.args.size() >= 3 && p.bracket[0] && p.bracket[1], file, line, text, "cp.async wants [dst], [src], size[, src-size]");
        const char *c0, *c1;
        cp_rec c;
        unsigned s = (unsigned)ptx_val(p.args[0][0], ops, file, line, &c0);
        c.src = (uintptr_t)ptx_val(p.args[1][0], ops, file, line, &c1);
        need(c0[0] == 'r' && !c0[1] && c1[0] == 'l' && !c1[1], file, line, text, "cp.async's operands: a 32-bit shared address (\"r\") and a 64-bit global pointer (\"l\")");
        c.bytes = (int)ptx_val(p.args[2][0], ops, file, line);
        c.src_bytes = p.args.size() > 3 ? (int)ptx_val(p.args[3][0], ops, file, line) : c.bytes;
        need(p.op[10] == 'a' ? (c.bytes == 4 || c.bytes == 8 || c.bytes == 16) : c.bytes == 16, file, line, text,
             "cp-size must be 16 for .cg (4, 8 or 16 for .ca)");
        need(c.src_bytes >= 0 && c.src_bytes <= c.bytes, file, line, text, "src-size must be in [0, cp-size]");
        c.dst = shared_ptr(s, where);
        if (g_check && (s % c.bytes || c.src % c.bytes))
            REPORT(F_MISALIGNED, where, 0, "cp.async of %d bytes from global address %#llx to shared address %#x: both must be "
                   "aligned to the copy size, %d (%s, %s at %s)", c.bytes, (unsigned long long)c.src, s, c.bytes,
                   kernel_desc().c_str(), thr_name(t).c_str(), W(where).c_str());
        c.where = where;
        t->open.push_back(c);
    } else if (p.code == P_COMMIT) {
        t->groups.push_back(t->open);
        t->open.clear();
    } else if (p.code == P_WAIT_GROUP || p.code == P_WAIT_ALL) {
        size_t n = 0;
        if (p.code == P_WAIT_GROUP) {
            const char *c;
            need(p.args.size() == 1, file, line, text, "wait_group wants one count");
            n = (size_t)ptx_val(p.args[0][0], ops, file, line, &c);
            need(strcmp(c, "n") == 0 || strcmp(c, "literal") == 0, file, line, text, "wait_group's count must be an immediate (\"n\")");
        } else {
            t->groups.push_back(t->open);
            t->open.clear();
        }
        while (t->groups.size() > n) { land(t, t->groups.front()); t->groups.pop_front(); }
    } else if (p.code == P_LDSM) {
        ldsm_args a;
        int num = p.ldsm_num;
        bool trans = p.ldsm_trans;
        need(p.ldsm_ok, file, line, text,
             "ldmatrix: .x1, .x2 or .x4, .shared.b16");
        need(p.args.size() == 2 && (int)p.args[0].size() == num && p.bracket[1], file, line, text, "ldmatrix wants {d...}, [addr]");
        for (int j = 0; j < num; j++) {
            const pp_emu_operand &o = ptx_operand(p.args[0][j], ops, file, line);
            need(o.out && o.cons[0] == '=' && o.cons[1] == 'r' && o.size == 4, file, line, text, "ldmatrix's destinations must be \"=r\" 32-bit outputs");
            a.out[j] = (unsigned *)o.out;
        }
        const char *c;
        unsigned s = (unsigned)ptx_val(p.args[1][0], ops, file, line, &c);
        need(c[0] == 'r' && !c[1], file, line, text, "ldmatrix's address must be a 32-bit shared address (\"r\")");
        need(s % 16 == 0, file, line, text, "ldmatrix row addresses must be 16-byte aligned");
        a.row = shared_ptr(s, where);
        a.num = num;
        a.trans = trans;
        collective(t, C_LDSM, where, &a, 0xffffffffu);
    } else if (p.code == P_MMA) {
        mma_args a;
        need(p.args.size() == 4 && p.args[0].size() == 4 && p.args[1].size() == 4 && p.args[2].size() == 2 && p.args[3].size() == 4,
             file, line, text, "mma.m16n8k16 wants {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}");
        for (int e = 0; e < 4; e++) {
            const pp_emu_operand &d = ptx_operand(p.args[0][e], ops, file, line);
            need(d.out && (d.cons[0] == '=' || d.cons[0] == '+') && d.cons[1] == 'f' && d.size == 4, file, line, text,
                 "mma's D operands must be float outputs (\"=f\" or \"+f\")");
            a.d[e] = (float *)d.out;
            const pp_emu_operand &x = ptx_operand(p.args[1][e], ops, file, line);
            need(!x.out && x.cons[0] == 'r' && x.size == 4, file, line, text, "mma's A operands must be 32-bit \"r\" inputs");
            a.a[e] = (unsigned)x.in;
            const pp_emu_operand &c = ptx_operand(p.args[3][e], ops, file, line);
            need((c.cons[0] == 'f' || c.cons[0] == '+') && c.size == 4, file, line, text, "mma's C operands must be floats");
            memcpy(&a.c[e], &c.in, 4);
        }
        for (int e = 0; e < 2; e++) {
            const pp_emu_operand &x = ptx_operand(p.args[2][e], ops, file, line);
            need(!x.out && x.cons[0] == 'r' && x.size == 4, file, line, text, "mma's B operands must be 32-bit \"r\" inputs");
            a.b[e] = (unsigned)x.in;
        }
        collective(t, C_MMA, where, &a, 0xffffffffu);
    } else {
        fatal("unsupported PTX instruction '%s' at %s:%d (the emulator knows cp.async.{cg,ca}.shared.global, "
              "cp.async.commit_group, cp.async.wait_group, cp.async.wait_all, ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16, "
              "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32)", op.c_str(), short_path(file).c_str(), line);
    }
}

/* ---------------------------------------------------------- launches */

static cudaError_t g_last_error = cudaSuccess, g_async_error = cudaSuccess;

static void run_grid(launch_rec *L) {
    if (!g_stacks) {
        g_stacks = (char *)mmap(NULL, STACK * MAX_THREADS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        g_dyn = (char *)mmap(NULL, SMEM_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        size_t st = (size_t)(__stop_pp_emu_shared - __start_pp_emu_shared);
        g_dyn_off = (st + 127) / 128 * 128;
        g_sshadow = (granule *)mmap(NULL, (g_dyn_off + SMEM_MAX) * sizeof(granule), PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (g_stacks == MAP_FAILED || g_dyn == MAP_FAILED || g_sshadow == MAP_FAILED) fatal("cannot map fiber stacks or shared memory");
    }
    g_launch = L;
    g_dyn_size = L->smem;
    if (prof_on()) {
        prof_kernel &K = g_prof_k[L->name];
        K.launches++;
        K.blocks += (long)L->grid.x * L->grid.y * L->grid.z;
        K.threads = L->block.x * L->block.y * L->block.z;
        K.smem = L->smem;
        g_prof_sectors.clear();
    }
    g_launch_first_run = g_run + 1;
    g_block_failed = 0;
    for (unsigned z = 0; z < L->grid.z && !g_block_failed; z++)
        for (unsigned y = 0; y < L->grid.y && !g_block_failed; y++)
            for (unsigned x = 0; x < L->grid.x && !g_block_failed; x++) run_block(L, make_uint3(x, y, z));
    if (g_block_failed) g_async_error = cudaErrorLaunchFailure;
    if (prof_on()) g_prof_k[L->name].dram += 32 * (long)g_prof_sectors.size();
    g_launch = NULL;
    L->destroy(L->params);
    delete L;
}

/* ------------------------------------------------------------- streams */

struct CUevent_st { long issued, done; double t; int failed; vclock vc; /* its stream's clock when it was recorded */ };
enum { OP_RUN, OP_WAIT, OP_POLL };
struct emu_op {
    int kind;
    std::function<void()> run;
    CUevent_st *ev; /* OP_WAIT: wait for generation gen; OP_RUN of a record: recorded */
    long gen;
    pp_emu_poll_fn poll;
    void *user;
    const char *what, *name; /* for reports: "kernel" and its name, the call */
    where_t where;
    vclock hvc; /* the host's clock when it enqueued the operation */
};
struct CUstream_st { std::deque<emu_op> q; unsigned flags; cudaError_t err; int id; vclock vc; };
/* stream ids for the vector clocks: 1..255, reused after cudaStreamDestroy,
   each id's ticks continuing (a stale entry in a clock then orders nothing
   of the new stream) */
static vclock g_host_vc;
static std::vector<int> g_free_ids;
static uint32_t g_id_tick[256];
static int g_next_id = 1;
static int stream_id(CUstream_st *s) {
    if (s->id) return s->id;
    if (!g_free_ids.empty()) { s->id = g_free_ids.back(); g_free_ids.pop_back(); }
    else if (g_next_id < 256) s->id = g_next_id++;
    else fatal("more than 255 CUDA streams at once");
    return s->id;
}
static void host_sees(const vclock &v) { vc_join(g_host_vc, v); }
static CUstream_st g_legacy;
static std::vector<CUstream_st *> g_streams;
static unsigned long long g_seed_state;

static CUstream_st *resolve(cudaStream_t s) {
    if (!s || s == cudaStreamLegacy || s == cudaStreamPerThread) return &g_legacy;
    return s;
}
static unsigned next_rand(void) {
    if (!g_seed_state) {
        const char *s = getenv("PP_EMU_SEED");
        g_seed_state = s ? strtoull(s, NULL, 10) : 1;
        if (!g_seed_state) g_seed_state = 0x9E3779B97F4A7C15ull;
    }
    g_seed_state ^= g_seed_state << 13;
    g_seed_state ^= g_seed_state >> 7;
    g_seed_state ^= g_seed_state << 17;
    return (unsigned)(g_seed_state >> 11);
}
static std::vector<CUstream_st *> all_streams(void) {
    std::vector<CUstream_st *> v(g_streams);
    v.push_back(&g_legacy);
    return v;
}
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
static emu_op new_op(int kind) {
    emu_op o;
    o.kind = kind;
    o.ev = NULL;
    o.gen = 0;
    o.poll = NULL;
    o.user = NULL;
    o.what = "an operation";
    o.name = NULL;
    o.where = 0;
    return o;
}
static void push_wait(CUstream_st *s, CUevent_st *e, long gen) {
    emu_op o = new_op(OP_WAIT);
    o.ev = e;
    o.gen = gen;
    s->q.push_back(o);
}
/* an event recorded on s now: the op that records it */
static emu_op record_op(CUevent_st *e) {
    long g = ++e->issued;
    emu_op o = new_op(OP_RUN);
    o.run = [e, g] {
        e->t = now_s();
        e->done = g;
        e->failed = 0;
        if (g_op_vc) e->vc = *g_op_vc;
    };
    o.what = "cudaEventRecord";
    o.ev = e;
    o.gen = g;
    return o;
}
/* later waits for the work queued on earlier so far (an implicit event) */
static void order_after(CUstream_st *later, CUstream_st *earlier) {
    CUevent_st *e = new CUevent_st();
    earlier->q.push_back(record_op(e));
    push_wait(later, e, e->issued);
}
static void push(CUstream_st *s, emu_op o) {
    o.hvc = g_host_vc;
    /* the legacy default stream waits for blocking streams and they for it */
    if (s == &g_legacy) {
        for (size_t i = 0; i < g_streams.size(); i++)
            if (!(g_streams[i]->flags & cudaStreamNonBlocking) && !g_streams[i]->q.empty()) order_after(s, g_streams[i]);
    } else if (!(s->flags & cudaStreamNonBlocking) && !g_legacy.q.empty()) {
        order_after(s, &g_legacy);
    }
    s->q.push_back(o);
}
static void enqueue(cudaStream_t st, std::function<void()> f, const char *what, where_t where, const char *name = NULL) {
    emu_op o = new_op(OP_RUN);
    o.run = f;
    o.what = what;
    o.where = where;
    o.name = name;
    push(resolve(st), o);
}
static void fail_stream(CUstream_st *s, cudaError_t e) {
    /* the stream's remaining work is dropped; what waits on its events fails too */
    s->err = e;
    for (size_t i = 0; i < s->q.size(); i++)
        if (s->q[i].kind == OP_RUN && s->q[i].ev) { s->q[i].ev->failed = 1; s->q[i].ev->done = s->q[i].gen; }
    s->q.clear();
}
/* runs o, the next operation of s, as one tick of s's clock */
static int run_op(CUstream_st *s, emu_op &o) {
    int id = stream_id(s), r = 1;
    vc_join(s->vc, o.hvc);
    if (s->vc.size() <= (size_t)id) s->vc.resize((size_t)id + 1, 0);
    if (++g_id_tick[id] > 0xFFFFFFu) fatal("stream %d ran more than 2^24 operations (the clocks' tags would wrap)", id);
    s->vc[id] = g_id_tick[id];
    g_op_vc = &s->vc;
    g_op_tag = (uint32_t)id << 24 | g_id_tick[id];
    if (g_check) g_op_descs[g_op_tag] = op_desc{o.what, o.name, o.where};
    if (o.kind == OP_POLL) r = o.poll(o.user);
    else o.run();
    g_op_vc = NULL;
    g_op_tag = 0;
    return r;
}
/* runs one operation; 0 when nothing could run (a deadlock unless polls are pending) */
static int step(void) {
    std::vector<CUstream_st *> v = all_streams(), ready, polls;
    for (size_t i = 0; i < v.size(); i++) {
        if (v[i]->q.empty()) continue;
        emu_op &o = v[i]->q.front();
        if (o.kind == OP_WAIT) {
            if (o.ev->done >= o.gen) {
                if (o.ev->failed) { fail_stream(v[i], cudaErrorLaunchFailure); return 1; }
                vc_join(v[i]->vc, o.ev->vc);
                v[i]->q.pop_front();
                return 1;
            }
        } else if (o.kind == OP_POLL) {
            polls.push_back(v[i]);
        } else {
            ready.push_back(v[i]);
        }
    }
    if (!ready.empty()) {
        CUstream_st *s = ready[next_rand() % ready.size()];
        emu_op o = s->q.front();
        s->q.pop_front();
        run_op(s, o);
        return 1;
    }
    if (!polls.empty()) {
        for (size_t i = 0; i < polls.size(); i++) {
            emu_op &o = polls[i]->q.front();
            int r = run_op(polls[i], o);
            if (r == 1) { polls[i]->q.pop_front(); return 1; }
            if (r < 0) { fail_stream(polls[i], cudaErrorLaunchFailure); return 1; }
        }
        usleep(1000); /* every stream waits on a peer process: let it progress (the poll decides when to give up) */
        return 1;
    }
    return 0;
}
static cudaError_t deadlock(void) {
    fprintf(stderr, "pp_emu: queued stream work waits on events that are never recorded: the streams deadlock\n");
    for (auto s : all_streams()) s->q.clear();
    return cudaErrorLaunchFailure;
}
static cudaError_t drain_all(void) {
    for (;;) {
        int left = 0;
        for (auto s : all_streams()) left |= !s->q.empty();
        if (!left) break;
        if (!step()) return deadlock();
    }
    for (auto s : all_streams()) host_sees(s->vc);
    cudaError_t e = g_async_error;
    for (auto s : all_streams())
        if (s->err != cudaSuccess) { e = s->err; s->err = cudaSuccess; }
    g_async_error = cudaSuccess;
    return e;
}
static cudaError_t drain(CUstream_st *s) {
    while (!s->q.empty())
        if (!step()) return deadlock();
    host_sees(s->vc);
    cudaError_t e = s->err != cudaSuccess ? s->err : g_async_error;
    s->err = cudaSuccess;
    g_async_error = cudaSuccess;
    return e;
}

static cudaError_t set_err(cudaError_t e) {
    if (e != cudaSuccess) g_last_error = e;
    return e;
}

void pp_emu_launch_fn(const pp_emu_launch_cfg &c, const void *kernel, pp_emu_invoke_fn invoke, void *params,
                      size_t params_bytes, void (*destroy)(void *)) {
    unsigned long long threads = (unsigned long long)c.block.x * c.block.y * c.block.z;
    size_t smax = g_smem_attr.count(kernel) ? (size_t)g_smem_attr[kernel] : SMEM_DEFAULT;
    const char *bad = NULL;
    char why[256];
    arena_init();
    if (!threads || threads > 1024 || c.block.x > 1024 || c.block.y > 1024 || c.block.z > 64) bad = "block size";
    else if (!c.grid.x || !c.grid.y || !c.grid.z || c.grid.x > 0x7fffffffu || c.grid.y > 65535 || c.grid.z > 65535) bad = "grid size";
    if (bad) {
        snprintf(why, sizeof why, "%s (%u,%u,%u) x (%u,%u,%u) outside CUDA's limits", bad, c.grid.x, c.grid.y, c.grid.z,
                 c.block.x, c.block.y, c.block.z);
    } else if (c.smem > smax) {
        bad = "shared";
        snprintf(why, sizeof why, "%zu bytes of dynamic shared memory, above the kernel's %zu%s", c.smem, smax,
                 smax == SMEM_DEFAULT ? " (48 KB default: raise it with cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, n))" : "");
    }
    if (bad) {
        fprintf(stderr, "pp_emu: launch of %s at %s:%d refused: %s\n", c.name, short_path(c.file).c_str(), c.line, why);
        set_err(bad[0] == 's' ? cudaErrorInvalidValue : cudaErrorInvalidConfiguration);
        destroy(params);
        return;
    }
    launch_rec *L = new launch_rec;
    L->kernel = kernel;
    L->invoke = invoke;
    L->params = params;
    L->params_bytes = params_bytes;
    L->destroy = destroy;
    L->grid = c.grid;
    L->block = c.block;
    L->smem = c.smem;
    L->name = c.name;
    L->where = site(c.file, c.line);
    enqueue(c.stream, [L] { run_grid(L); }, "kernel", L->where, c.name);
}

/* ------------------------------------------------------- runtime API */

#define RET_WHERE ((where_t)(uintptr_t)__builtin_return_address(0))

/* a device range [p, p+n) a runtime call touches: live and inside one allocation */
static bool dev_range_ok(const void *p, size_t n, const char *call, where_t w) {
    uintptr_t a = (uintptr_t)p;
    alloc_rec *r = find_alloc(a);
    if (r && !r->freed && a >= r->base && a + n <= r->base + r->size) return true;
    if (r && r->freed && a >= r->base && a < r->base + r->size)
        REPORT(F_GLOBAL_UAF, w, 0, "%s at %s on device memory freed at %s", call, W(w).c_str(), W(r->freed_at).c_str());
    else
        REPORT(F_GLOBAL_OOB, w, 0, "%s at %s: %zu bytes at %p are not inside one live allocation", call, W(w).c_str(), n, p);
    flush_reports();
    return false;
}
static bool is_dev(const void *p) { return g_arena && in_arena((uintptr_t)p); }

static cudaError_t copy_check(void *d, const void *s, size_t n, cudaMemcpyKind k, const char *call, where_t w) {
    arena_init();
    if (k == cudaMemcpyDefault) k = is_dev(d) ? (is_dev(s) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                               : (is_dev(s) ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    bool dd = k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice;
    bool sd = k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice;
    if (n == 0) return cudaSuccess;
    if ((dd && !dev_range_ok(d, n, call, w)) || (sd && !dev_range_ok(s, n, call, w))) return set_err(cudaErrorInvalidValue);
    if ((!dd && is_dev(d)) || (!sd && is_dev(s))) {
        REPORT(F_API, w, 0, "%s at %s: a device pointer given as host memory (wrong cudaMemcpyKind)", call, W(w).c_str());
        flush_reports();
        return set_err(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

extern "C" {

cudaError_t cudaMalloc(void **p, size_t n) {
    void *r = dev_alloc(n, RET_WHERE);
    *p = r;
    return r ? cudaSuccess : set_err(cudaErrorMemoryAllocation);
}
cudaError_t cudaFree(void *p) {
    cudaError_t e;
    if (!p) return cudaSuccess;
    e = drain_all();
    int r = dev_free(p, RET_WHERE);
    if (r <= 0) {
        REPORT(F_API, RET_WHERE, 0, "cudaFree at %s of %p: %s", W(RET_WHERE).c_str(), p, r < 0 ? "freed twice" : "not an allocation's start");
        flush_reports();
        return set_err(cudaErrorInvalidValue);
    }
    return e;
}
cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total) {
    arena_init();
    *total = g_arena_cap;
    *free_b = g_arena_cap - g_used;
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) {
    cudaError_t e = copy_check(d, s, n, k, "cudaMemcpy", RET_WHERE);
    if (e != cudaSuccess) return e;
    e = drain_all();
    memmove(d, s, n);
    return e;
}
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st) {
    cudaError_t e = copy_check(d, s, n, k, "cudaMemcpyAsync", RET_WHERE);
    if (e != cudaSuccess || n == 0) return e;
    if (k == cudaMemcpyDefault) k = is_dev(d) ? (is_dev(s) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice) : cudaMemcpyDeviceToHost;
    if (k == cudaMemcpyDeviceToHost || k == cudaMemcpyHostToHost) { /* pageable host memory: returns when done */
        e = drain(resolve(st));
        memmove(d, s, n);
        return e;
    }
    if (k == cudaMemcpyHostToDevice) { /* the source is taken at the call */
        std::shared_ptr<std::vector<char> > buf(new std::vector<char>((const char *)s, (const char *)s + n));
        where_t w = RET_WHERE;
        enqueue(st, [=] { op_range(d, n, true, w, "cudaMemcpyAsync"); memmove(d, buf->data(), n); }, "cudaMemcpyAsync", w);
    } else {
        where_t w = RET_WHERE;
        enqueue(st, [=] {
            op_range(s, n, false, w, "cudaMemcpyAsync");
            op_range(d, n, true, w, "cudaMemcpyAsync");
            memmove(d, s, n);
        }, "cudaMemcpyAsync", w);
    }
    return cudaSuccess;
}
cudaError_t cudaMemset(void *d, int v, size_t n) {
    arena_init();
    if (n && !dev_range_ok(d, n, "cudaMemset", RET_WHERE)) return set_err(cudaErrorInvalidValue);
    cudaError_t e = drain_all();
    memset(d, v, n);
    return e;
}
cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st) {
    arena_init();
    if (n && !dev_range_ok(d, n, "cudaMemsetAsync", RET_WHERE)) return set_err(cudaErrorInvalidValue);
    where_t w = RET_WHERE;
    enqueue(st, [=] { op_range(d, n, true, w, "cudaMemsetAsync"); memset(d, v, n); }, "cudaMemsetAsync", w);
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
    CUstream_st *n = new CUstream_st();
    n->flags = flags;
    n->err = cudaSuccess;
    g_streams.push_back(n);
    *s = n;
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    cudaError_t e = drain(resolve(s));
    if (s->id) g_free_ids.push_back(s->id);
    g_streams.erase(std::remove(g_streams.begin(), g_streams.end(), s), g_streams.end());
    delete s;
    return e;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return drain(resolve(s)); }
cudaError_t cudaStreamQuery(cudaStream_t s) {
    CUstream_st *r = resolve(s);
    if (!r->q.empty()) step();
    if (r->q.empty()) host_sees(r->vc);
    return r->q.empty() ? cudaSuccess : cudaErrorNotReady;
}
cudaError_t cudaDeviceSynchronize(void) { return drain_all(); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
    (void)flags;
    *e = new CUevent_st();
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    /* queued work may still name it: it is kept (a few bytes) */
    (void)e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    push(resolve(s), record_op(e));
    return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags) {
    (void)flags;
    if (e->issued == 0) return cudaSuccess; /* CUDA: waiting on an event never recorded is a no-op */
    push_wait(resolve(s), e, e->issued);
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    while (e->done < e->issued)
        if (!step()) return deadlock();
    host_sees(e->vc);
    return e->failed ? cudaErrorLaunchFailure : cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
    if (e->done < e->issued) step();
    if (e->done >= e->issued) host_sees(e->vc);
    return e->done < e->issued ? cudaErrorNotReady : cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
    if (a->done < a->issued || b->done < b->issued || !a->issued || !b->issued) return set_err(cudaErrorNotReady);
    *ms = (float)(1e3 * (b->t - a->t));
    return cudaSuccess;
}
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *user) {
    enqueue(s, [fn, user] { fn(user); }, "cudaLaunchHostFunc", RET_WHERE);
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value) {
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;
    if (value < 0 || (size_t)value > SMEM_MAX) return set_err(cudaErrorInvalidValue);
    g_smem_attr[func] = value;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
    cudaError_t e = g_last_error;
    g_last_error = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void) { return g_last_error; }
const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    default: return "unknown error (pp_emu)";
    }
}
const char *cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    default: return "cudaErrorUnknown";
    }
}
static int emu_devices(void) {
    const char *s = getenv("PP_EMU_DEVICES");
    return s ? atoi(s) : 1;
}
cudaError_t cudaGetDeviceCount(int *n) {
    *n = emu_devices();
    return cudaSuccess;
}
static int g_device;
cudaError_t cudaSetDevice(int d) {
    if (d < 0 || d >= emu_devices()) return set_err(cudaErrorInvalidDevice);
    g_device = d;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d) {
    *d = g_device;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d) {
    if (d < 0 || d >= emu_devices()) return set_err(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "pp_emu (CPU emulation of an sm_90 GPU, emu/gpu)");
    arena_init();
    p->totalGlobalMem = g_arena_cap;
    p->sharedMemPerBlock = SMEM_DEFAULT;
    p->sharedMemPerBlockOptin = SMEM_MAX;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 132;
    return cudaSuccess;
}

} /* extern "C" */

cudaError_t pp_emu_stream_poll(cudaStream_t stream, pp_emu_poll_fn fn, void *user) {
    emu_op o = new_op(OP_POLL);
    o.poll = fn;
    o.user = user;
    o.what = "an emulated NCCL operation";
    o.where = RET_WHERE;
    push(resolve(stream), o);
    return cudaSuccess;
}

int pp_emu_device_access(const void *p, size_t n, int write, const char *what) {
    return op_range(p, n, write != 0, RET_WHERE, what) ? 1 : 0;
}
