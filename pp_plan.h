/* pp_plan.h - v0.1.0 - which pipeline layout, microbatch size and schedule fit a model on a cluster - MIT licence (see end of file)

   A planner on top of pp_sched.h: from a transformer model, a GPU and a GPU
   count it enumerates pipeline x tensor x data parallel layouts, microbatch
   sizes and every built-in schedule of pp_sched.h, estimates each one's
   memory in bytes and its step time (by building the schedule with the
   estimated per-stage times), and ranks what fits. C99, libc only. It uses
   pp_sched.h's public API only (as sokol_gl.h sits on sokol_gfx.h): an
   engine that only runs schedules never needs this file.

   Do this:
       #define PP_PLAN_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the
   implementation. pp_sched.h's implementation must be in the program too
   (PP_SCHED_IMPLEMENTATION, in the same file or another):
       #define PP_SCHED_IMPLEMENTATION
       #include "pp_sched.h"
       #define PP_PLAN_IMPLEMENTATION
       #include "pp_plan.h"
   Every other file just includes "pp_plan.h" (which includes "pp_sched.h").

QUICK START
   #include <stdio.h>
   #define PP_SCHED_IMPLEMENTATION
   #include "pp_sched.h"
   #define PP_PLAN_IMPLEMENTATION
   #include "pp_plan.h"

   int main(void) {
       static pp_candidate c[4096];
       pp_plan_request r = {0};
       char err[PP_ERR_LEN];
       int count = 0;
       r.model.layers = 32; r.model.hidden = 4096; r.model.heads = 32; r.model.seq = 4096;
       r.gpus = 32; r.global_batch = 128; r.gpu.mem_bytes = 80.0 * (1 << 30);
       if (pp_plan(&r, c, 4096, &count, err) != PP_OK) { fprintf(stderr, "%s\n", err); return 1; }
       // c[] is sorted: the fastest candidate that fits comes first
       printf("%s pp=%d tp=%d dp=%d mbs=%d: %.2f s per step, %.1f GiB\n", c[0].schedule, c[0].pp, c[0].tp,
              c[0].dp, c[0].mbs, c[0].step_time, c[0].peak_bytes / (1 << 30));
       return 0;
   }

   Output:
       v-auto pp=2 tp=2 dp=8 mbs=4: 4.49 s per step, 43.4 GiB

API (one line each; status-returning calls fill err[PP_ERR_LEN] on failure)
   pp_plan(req, out, cap, &count, err) every pp x tp x dp x mbs x schedule, fit, step time, ranked
   pp_partition(cost, L, S, first, &max, alloc, err)  exact min-max contiguous split of L items into S stages
   pp_partition_v(cost, L, d, first, &max, alloc, err) exact V split: least slowest DEVICE (stages k, 2d-1-k)
   pp_layer_activation_bytes(m, mbs, tp, recompute)  bytes one layer keeps per microbatch
   pp_layer_params(m)                  parameters of one transformer layer (12h^2 + 13h)

CONFIGURATION MACROS
   PP_PLAN_IMPLEMENTATION   emit the implementation in this translation unit
   PP_PLAN_STATIC           make every function static
   PP_PLAN_API              decoration of public functions (default: PP_SCHED_API)

ERRORS, MEMORY, THREADS
   As pp_sched.h: every fallible call returns pp_status and fills the
   caller's err with what was wrong and what would be right; the
   planner allocates through req.allocator (zero = malloc/free), its builds
   included; no globals: threads may plan at once; never prints, never exits.

PLANNING (pp_partition, pp_partition_v, pp_layer_activation_bytes, pp_plan)
   partition   pp_partition: f[k][j] = min over i of max(f[k-1][i], sum of
               items [i, j)), every stage non-empty; O(S L^2), exact (tests
               compare with brute force). pp_partition_v: device k holds
               stages k and 2d-1-k; g_k(a, b) = least slowest device for the
               items [a, b) left to devices k..d-1; O(d L^4), exact, refused
               above 4e8 steps. Looped placement is split by pp_partition
               (slowest stage). pp_plan uses pp_partition over all S stages
               for every placement (pp_partition_v is too slow at d = 40):
               per-stage times then drive the scheduler (stage_times).
   items       pp_plan splits L + 2 items: the embedding, the L layers, the
               LM head, so 78 layers + 2 fill pp = 40 V stages exactly, like
               the paper's "one layer less on the first and last stage".
   activation  bytes per layer per microbatch, 16-bit (Korthikanti et al.
               2022, "Reducing Activation Recomputation in Large Transformer
               Models", Sec. 4): s*b*h*(34 + 5*a*s/h); flash attention keeps
               no s x s scores: 34*s*b*h (default; the paper used it, Sec.
               4.4); tensor + sequence parallel (default when tp > 1):
               divided by t; tensor parallel without SP: s*b*h*(10 + 24/t +
               5as/(ht)); full recomputation keeps the layer input, 2*s*b*h
               (/t with SP). A unit (schedule peak_memory) = L/pp layers of
               it; peak activation bytes of device i = peak_memory[i] x unit.
               1f1b-r: recompute_input = 2/34 of a layer's activation.
   static      parameters per layer 12h^2 + 13h (Narayanan et al. 2021),
               embedding V*h + s*h (positions) on the embedding's stage, LM
               head V*h on the head's stage (untied, as Megatron with pp > 1
               keeps a copy), all divided by t. Bytes per parameter (mixed
               precision Adam, Megatron): 2 weight + 2 gradient + 12 (fp32
               master, m, v) = 16; the distributed optimizer (default)
               shards the 12 over dp: 4 + 12/dp. Peak of a device = its
               static bytes + its activation bytes; a candidate fits when
               the largest device's peak <= gpu memory - gpu.reserve_bytes
               (default 0; set it for the CUDA context, NCCL buffers and
               fragmentation: ppsched plan --reserve GiB).
   pass times  roofline per microbatch: a layer's forward is 24*b*s*h^2*(1 +
               s/(6h))/t FLOPs (Narayanan et al. 2021, Eq. 2 without the
               backward and vocab terms) at gpu.flops (default 190e12, ~60%
               of the A100's 312 TFLOP/s), or its weights + activations at
               hbm_bw if slower; B = F (input gradient: same matmul FLOPs),
               W = F (weight gradient: same), so F:B:W = 1:1:1 plus TP's
               communication: with t > 1 two all-gather/reduce-scatter pairs
               of 2sbh bytes per F and per B, each 2(t-1)/t of it over tp_bw
               (300e9). TP also narrows every matmul to h/t columns, which
               runs below the GPU's matmul rate (Appendix D.4 and Figure 12
               of the paper: single-pass MFU falls as t grows): compute time
               x (1 + 0.037 x log2 t x min(1, 1024/(b*s))). 0.037 is Table
               6's V-ZB column at seq 1024 (57.58% MFU at t=1 pp=40, 54.78%
               at t=2 pp=20: 5.1% slower, of which our TP communication
               above accounts for 1.4%); the loss shrinks as b*s grows
               (more output tiles per matmul), so at seq 16384 it is 1/16
               of that. gpu.tp_slowdown sets the 0.037 (< 0: none). Without
               it TP=2 wins at seq 1024 by 0.6%, against the paper's
               finding. Head forward 2*b*s*h*V/t FLOPs, B = W = F; the
               embedding a memory-bound gather. Pipeline comm per edge
               2sbh/t bytes over net_bw (25e9). User times (req.times)
               replace all this: F, B, W of one device's share, spread over
               stages in proportion to the roofline costs.
   step time   makespan of the schedule built with those per-stage times at
               n_b microbatches, plus (n - n_b) x the busiest device's work
               per microbatch (the steady state), plus a ring all-reduce of
               the 16-bit gradients, 2(dp-1)/dp x 2 bytes x parameters over
               net_bw, when dp > 1. n = global_batch / (dp x mbs). n_b = pp
               for 1f1b, 1f1b-r, zb-h1, 1f1b-v, v-min, v-half, v-zb (at unit
               times this equals the full build, checked at d = 8, 20, n =
               160), 2pp for the others, n for gpipe and looped-bfs (memory
               grows with n). Builds are cached per (schedule, pp, n_b, tp,
               limit) and scaled by the layer time across mbs; the cache is
               emptied when (pp, tp) changes (no later layout can hit an
               earlier pair's entries; it used to fill its 256 slots before
               pp = 20 of the 98.5B example, so the rest were built anew,
               not scaled: up to 0.01% different step times). MFU = 72 *
               B * s * L * h^2 * (1 + s/(6h) + V/(12hL)) / (step * N *
               312e12) (Narayanan et al. 2021, Eq. 3).
   pruning     branch and bound: before a build, the work bound max over
               devices k of (head_k + n_b p_k) + (n - n_b) max p_k (+ the dp
               all-reduce), p_k = device k's F + B + W per microbatch (+ F
               for 1f1b-r's recomputation), head_k = the F times of the
               stages before its first stage k (it cannot start earlier),
               is a lower bound on the step time above (no pass is shorter
               than its stage time, none overlaps another on its device;
               tests check bound <= step for every built candidate of the
               98.5B examples). A candidate is not built when its bound
               exceeds both the best step time its schedule has reached so
               far and the keep_top-th best step time of all candidates so
               far (req.keep_top, 0 = 10; ppsched plan passes --top): then
               pruned = 1, fits = 0 (not known), step_time = 0, peak_bytes =
               its static bytes, bound set, reason "not built: at least X%
               slower (work bound) than its best layout ..., outside the top
               K". Each schedule's best layout and the first keep_top of the
               ranking are therefore always built, so the ranking's top, the
               per-schedule summary and every built candidate's numbers are
               those of req.no_prune = 1 (ppsched plan --no-prune), which
               builds everything; a pruned layout's stage times are kept in
               the cache, so a later layout that shares its build gets the
               same build as without pruning (tests compare both runs).
               Candidates keep their place in the output (pp, tp, mbs,
               schedule ascending) but the (pp, tp) pairs are evaluated in
               the order of their lowest 1f1b work bound (that of the
               schedule asked for with req.schedule), so good incumbents
               come first; within a pair mbs ascending, as the cache
               expects. The bound ignores the bubble and memory: 98.5B
               example, 388 of 1260 candidates pruned at seq 1024, 176 at
               seq 3072 (batch 640), none at seq 16384 (most candidates are
               out of memory, which no time bound can tell, and fewer than
               10 fit at all pp). User CPU on a 2-core machine (loaded, wall
               up to twice that), seq 1024 / 3072 / 16384: before 1.26 /
               1.12 / 1.13 s; emptying the cache per (pp, tp) 0.81 / 0.69 /
               0.64; now 0.56 / 0.63 / 0.70 (no_prune 0.80 / 0.67 / 0.71).
               What is left is mostly the builds at pp = 40 (interleaved-
               1f1b-m's block search, 0.1 s per layout) and v-auto at pp =
               5.
   layouts     dp = world / (tp x pp), rejected when it does not divide (the
               seed overview's 3D rule); tp in 1, 2, 4, 8 (one node) dividing
               the heads; pp any divisor of N with S <= L + 2; mbs 1, 2, 4
               unless given, dividing global_batch / dp.
   adaptive    v-auto and zb-auto get mem_limit = the units left after the
               static bytes (in half units, at most 2pp); they, zb-1p and
               zb-2p are built only at pp <= 8 (PP__PLAN_AUTO_PP; zb-auto
               at every pp of the 98.5B example costs 0.7 s, v-auto at pp =
               10..40 seconds); elsewhere the candidate says "not
               evaluated".

REVISION HISTORY
   0.1.0  the planner moves out of pp_sched.h (where it was 0.3.0's
          "planning") into this header, on pp_sched.h's public API (the
          schedule facts of pp_sched_info, pp_sched_find); it takes the
          caller's allocator. Same plans as pp_sched.h 0.3.3's pp_plan.
*/
#ifndef PP_PLAN_H
#define PP_PLAN_H

#define PP_PLAN_VERSION_MAJOR 0
#define PP_PLAN_VERSION_MINOR 1
#define PP_PLAN_VERSION_PATCH 0

#include "pp_sched.h"

#ifndef PP_PLAN_API
#ifdef PP_PLAN_STATIC
#define PP_PLAN_API static
#else
#define PP_PLAN_API PP_SCHED_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A GPT-style model. Zero fields take the defaults named here. */
typedef struct pp_model {
    int layers, hidden, heads, seq; /* L, h, a, s: required */
    int vocab;                      /* V; 0 = 51200 */
    int no_flash_attention;         /* 0: flash attention (no s*s scores kept) */
    int no_seq_parallel;            /* 0: sequence parallelism whenever tp > 1 */
    int no_distributed_optimizer;   /* 0: optimizer state sharded over dp */
} pp_model;

/* One GPU and its links. Zero fields take the defaults (an A100 80 GB). */
typedef struct pp_gpu {
    double mem_bytes; /* 0 = 80 GiB */
    double flops;     /* achieved matmul FLOP/s; 0 = 190e12 (~60% of 312e12) */
    double hbm_bw;    /* bytes/s; 0 = 2.0e12 */
    double tp_bw;     /* tensor-parallel link, bytes/s; 0 = 300e9 (NVLink) */
    double net_bw;    /* pipeline send/recv and dp all-reduce, bytes/s; 0 = 25e9 */
    double reserve_bytes; /* kept back (CUDA context, NCCL buffers, fragmentation); 0 = none */
    double tp_slowdown; /* TP-sharded matmuls run (1 + this x log2 tp x min(1, 1024/(mbs x seq)))
                           times slower (narrower matmuls); 0 = 0.037 (see PLANNING,
                           pass times); < 0 = none */
} pp_gpu;

typedef struct pp_plan_request {
    pp_model model;
    pp_gpu gpu;
    int gpus;          /* N, required */
    int global_batch;  /* sequences per step, required */
    int pp, tp, dp, mbs; /* 0 = enumerate */
    const char *schedule; /* NULL = every built-in */
    const pp_times *times; /* optional measured per-device-share times (F, B, W,
                              comm) for one microbatch of mbs; replaces the roofline */
    int no_prune;      /* 1: build every candidate (no work-bound pruning; PLANNING, pruning) */
    int keep_top;      /* pruning keeps the first keep_top of the ranking exact; 0 = 10 */
    pp_allocator allocator; /* every allocation of pp_plan, its builds included; zero = malloc/free */
} pp_plan_request;

/* One candidate the planner considered (fitting or not). */
typedef struct pp_candidate {
    char schedule[32];
    int pp, tp, dp, mbs, microbatches;
    int fits;                /* 1: largest device's peak <= gpu memory */
    double peak_bytes;       /* largest device: static + activation */
    double static_bytes;     /* that device's parameters, gradients, optimizer */
    double unit_bytes;       /* one unit: activation of one microbatch for L/pp layers */
    double peak_units;       /* that device's schedule peak, units */
    double step_time;        /* seconds; 0 when it does not fit or did not build */
    double mfu;              /* model FLOPs / (step_time * N * 312e12); 0 when not run */
    char reason[160];        /* why it lost (or "best") */
    double bound;            /* lower bound on step_time (work bound), seconds; 0 when
                                the candidate stopped before its build */
    int pruned;              /* 1: not built, its bound is slower than its schedule's
                                best layout found before it (fits = 0: unknown) */
} pp_candidate;

/* alloc: NULL or zero = malloc/free */
PP_PLAN_API pp_status pp_partition(const double *cost, int items, int stages, int *first, double *max_cost,
                                   const pp_allocator *alloc, char *err);
PP_PLAN_API pp_status pp_partition_v(const double *cost, int items, int devices, int *first, double *max_cost,
                                     const pp_allocator *alloc, char *err);
PP_PLAN_API double pp_layer_activation_bytes(const pp_model *m, int mbs, int tp, int recompute);
PP_PLAN_API double pp_layer_params(const pp_model *m);
PP_PLAN_API pp_status pp_plan(const pp_plan_request *req, pp_candidate *out, int cap, int *count, char *err);

#ifdef __cplusplus
}
#endif
#endif /* PP_PLAN_H */

/* ======================================================================== */
/*                              IMPLEMENTATION                               */
/* ======================================================================== */
#ifdef PP_PLAN_IMPLEMENTATION
#ifndef PP__PLAN_IMPLEMENTATION_INCLUDED
#define PP__PLAN_IMPLEMENTATION_INCLUDED

#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stdio.h> /* vsnprintf, snprintf for messages */

#ifdef PP_PLAN_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define PP_PLAN_DEF static __attribute__((unused))
#else
#define PP_PLAN_DEF static
#endif
#else
#define PP_PLAN_DEF
#endif

/* The formulas and their sources are in PLANNING in the docs block. */

static void *pp__plan_default_alloc(size_t n, void *u) { (void)u; return malloc(n); }
static void pp__plan_default_free(void *p, void *u) { (void)u; free(p); }

/* the caller's allocator, or malloc/free when it is zero */
static pp_allocator pp__plan_al(const pp_allocator *a) {
    pp_allocator r;
    if (a && a->alloc && a->free) return *a;
    r.alloc = pp__plan_default_alloc;
    r.free = pp__plan_default_free;
    r.user = NULL;
    return r;
}
static void *pp__plan_malloc(const pp_allocator *a, size_t n) { return a->alloc(n ? n : 1, a->user); }
static void pp__plan_free(const pp_allocator *a, void *p) { if (p) a->free(p, a->user); }

static void pp__plan_err(char *err, const char *fmt, ...) {
    va_list ap;
    if (!err) return;
    va_start(ap, fmt);
    vsnprintf(err, PP_ERR_LEN, fmt, ap);
    va_end(ap);
}

static int pp__plan_finite(double x) { return x == x && (x - x) == 0.0; }

/* Exact min-max contiguous split: f[k][j] = least max cost of items [0, j) in
   k+1 stages, each stage non-empty; stage k = [i, j) for the first i that
   minimises max(f[k-1][i], sum of [i, j)). f[k-1][i] grows with i and the
   sum shrinks, so that max falls, then rises: the first minimum is found by
   two binary searches instead of a scan (the same i as the scan, in
   O(stages * items * log items) instead of O(stages * items^2)). Two rows of
   f and stages x (items + 1) split points are kept; refused above
   PP__PLAN_SPLIT_CELLS of them. */
#define PP__PLAN_SPLIT_CELLS 50000000.0
PP_PLAN_DEF pp_status pp_partition(const double *cost, int items, int stages, int *first, double *max_cost,
                                   const pp_allocator *alloc, char *err) {
    pp_allocator al = pp__plan_al(alloc);
    double *pre, *f, *g;
    int *arg, i, j, k;
    if (err) err[0] = 0;
    if (!cost || !first || items < 1 || stages < 1) {
        pp__plan_err(err, "pp_partition: needs cost, first and items, stages >= 1 (got items=%d stages=%d)", items, stages);
        return PP_ERR_INVALID_ARG;
    }
    if (stages > items) {
        pp__plan_err(err, "cannot split %d layers into %d non-empty stages: use at most %d stages", items, stages, items);
        return PP_ERR_INVALID_ARG;
    }
    for (i = 0; i < items; i++)
        if (!pp__plan_finite(cost[i]) || cost[i] < 0) {
            pp__plan_err(err, "pp_partition: cost[%d] must be finite and >= 0, got %g", i, cost[i]);
            return PP_ERR_INVALID_ARG;
        }
    if ((double)stages * (items + 1) > PP__PLAN_SPLIT_CELLS) {
        pp__plan_err(err, "pp_partition: %d items into %d stages needs %.0f split points, more than the %.0f allowed; "
                     "use fewer stages", items, stages, (double)stages * (items + 1), PP__PLAN_SPLIT_CELLS);
        return PP_ERR_OVERFLOW;
    }
    pre = (double *)pp__plan_malloc(&al, sizeof(double) * (size_t)(items + 1));
    f = (double *)pp__plan_malloc(&al, sizeof(double) * (size_t)(items + 1));
    g = (double *)pp__plan_malloc(&al, sizeof(double) * (size_t)(items + 1));
    arg = (int *)pp__plan_malloc(&al, sizeof(int) * (size_t)stages * (size_t)(items + 1));
    if (!pre || !f || !g || !arg) {
        pp__plan_free(&al, pre);
        pp__plan_free(&al, f);
        pp__plan_free(&al, g);
        pp__plan_free(&al, arg);
        pp__plan_err(err, "pp_partition: out of memory");
        return PP_ERR_OUT_OF_MEMORY;
    }
    pre[0] = 0;
    for (i = 0; i < items; i++) pre[i + 1] = pre[i] + cost[i];
    for (j = 0; j <= items; j++) {
        f[j] = j >= 1 ? pre[j] : 1e300;
        arg[j] = 0;
    }
    for (k = 1; k < stages; k++) {
        for (j = 0; j <= items; j++) {
            double best = 1e300;
            int bi = -1;
            if (j > k) { /* i in [k, j): x = f[i] rises, y = pre[j] - pre[i] falls */
                int lo = k, hi = j, c;
                while (lo < hi) { /* c = first i with x >= y (j: none) */
                    int mid = lo + (hi - lo) / 2;
                    if (f[mid] >= pre[j] - pre[mid]) hi = mid; else lo = mid + 1;
                }
                c = lo;
                if (c < j) { best = f[c]; bi = c; }
                if (c > k && !(bi >= 0 && best < pre[j] - pre[c - 1])) {
                    double yv = pre[j] - pre[c - 1];
                    lo = k;
                    hi = c - 1;
                    while (lo < hi) { /* the first i whose y already equals the left minimum */
                        int mid = lo + (hi - lo) / 2;
                        if (pre[j] - pre[mid] <= yv) hi = mid; else lo = mid + 1;
                    }
                    best = yv;
                    bi = lo;
                }
            }
            g[j] = best;
            arg[(size_t)k * (items + 1) + j] = bi;
        }
        { double *t = f; f = g; g = t; }
    }
    if (max_cost) *max_cost = f[items];
    j = items;
    for (k = stages - 1; k >= 0; k--) {
        i = k ? arg[(size_t)k * (items + 1) + j] : 0;
        first[k] = i;
        j = i;
    }
    pp__plan_free(&al, pre);
    pp__plan_free(&al, f);
    pp__plan_free(&al, g);
    pp__plan_free(&al, arg);
    return PP_OK;
}

/* Exact V split: device k holds stage k = [a_k, a_{k+1}) and stage 2d-1-k =
   [b_{k+1}, b_k); the slowest DEVICE (sum of its two stages) is minimised.
   g_k(a, b) = least max over devices k..d-1 of the remaining items [a, b);
   O(d * items^4), refused above 4e8 steps. */
PP_PLAN_DEF pp_status pp_partition_v(const double *cost, int items, int devices, int *first, double *max_cost,
                                      const pp_allocator *alloc, char *err) {
    pp_allocator al = pp__plan_al(alloc);
    double *pre, *g;
    int *arga, *argb, k, a, b, a2, b2, L = items, d = devices, W;
    size_t cells;
    if (err) err[0] = 0;
    if (!cost || !first || items < 1 || devices < 1) {
        pp__plan_err(err, "pp_partition_v: needs cost, first and items, devices >= 1");
        return PP_ERR_INVALID_ARG;
    }
    if (2 * devices > items) {
        pp__plan_err(err, "cannot split %d layers into %d non-empty V stages (2 x %d devices): use at most %d devices",
                items, 2 * devices, devices, items / 2);
        return PP_ERR_INVALID_ARG;
    }
    for (a = 0; a < items; a++)
        if (!pp__plan_finite(cost[a]) || cost[a] < 0) {
            pp__plan_err(err, "pp_partition_v: cost[%d] must be finite and >= 0, got %g", a, cost[a]);
            return PP_ERR_INVALID_ARG;
        }
    if ((double)d * L * L * L * L / 4 > 4e8) {
        pp__plan_err(err, "pp_partition_v: %d items on %d devices is too large for the exact O(d L^4) search; "
                "use pp_partition over the 2d stages", L, d);
        return PP_ERR_OVERFLOW;
    }
    W = L + 1;
    cells = (size_t)d * W * W;
    pre = (double *)pp__plan_malloc(&al, sizeof(double) * (size_t)W);
    g = (double *)pp__plan_malloc(&al, sizeof(double) * cells);
    arga = (int *)pp__plan_malloc(&al, sizeof(int) * cells);
    argb = (int *)pp__plan_malloc(&al, sizeof(int) * cells);
    if (!pre || !g || !arga || !argb) {
        pp__plan_free(&al, pre);
        pp__plan_free(&al, g);
        pp__plan_free(&al, arga);
        pp__plan_free(&al, argb);
        pp__plan_err(err, "pp_partition_v: out of memory");
        return PP_ERR_OUT_OF_MEMORY;
    }
    pre[0] = 0;
    for (a = 0; a < L; a++) pre[a + 1] = pre[a] + cost[a];
#define PP__G(k, a, b) g[((size_t)(k) * W + (size_t)(a)) * W + (size_t)(b)]
    for (k = d - 1; k >= 0; k--)
        for (a = k; a <= L; a++)
            for (b = a; b <= L; b++) {
                double best = 1e300;
                int ba = -1, bb = -1, need = 2 * (d - k);
                if (b - a >= need) {
                    if (k == d - 1) {
                        best = pre[b] - pre[a];
                        ba = a;
                        bb = b;
                    } else {
                        for (a2 = a + 1; a2 <= b; a2++)
                            for (b2 = b - 1; b2 >= a2 + need - 2; b2--) {
                                double mine = pre[a2] - pre[a] + pre[b] - pre[b2], rest = PP__G(k + 1, a2, b2);
                                double m = mine > rest ? mine : rest;
                                if (m < best) { best = m; ba = a2; bb = b2; }
                            }
                    }
                }
                PP__G(k, a, b) = best;
                arga[((size_t)k * W + a) * W + b] = ba;
                argb[((size_t)k * W + a) * W + b] = bb;
            }
    if (max_cost) *max_cost = PP__G(0, 0, L);
    a = 0;
    b = L;
    for (k = 0; k < d - 1; k++) {
        int na = arga[((size_t)k * W + a) * W + b], nb = argb[((size_t)k * W + a) * W + b];
        first[k] = a;
        first[2 * d - 1 - k] = nb;
        a = na;
        b = nb;
    }
    first[d - 1] = a;
    { /* the turn: split the middle [a, b) as evenly as possible */
        int m, bm = a + 1;
        double bv = 1e300;
        for (m = a + 1; m < b; m++) {
            double x = pre[m] - pre[a], y = pre[b] - pre[m], mx = x > y ? x : y;
            if (mx < bv) { bv = mx; bm = m; }
        }
        first[d] = bm;
    }
#undef PP__G
    pp__plan_free(&al, pre);
    pp__plan_free(&al, g);
    pp__plan_free(&al, arga);
    pp__plan_free(&al, argb);
    return PP_OK;
}

static int pp__vocab(const pp_model *m) { return m->vocab > 0 ? m->vocab : 51200; }

/* Korthikanti et al. 2022, Eq. 1-2 and Table 2: s*b*h*(34 + 5*a*s/h) bytes,
   16-bit activations; flash attention keeps no s*s scores (drops 5as/h);
   with tensor + sequence parallelism everything is divided by t; full
   recomputation keeps only the layer input, 2sbh (/t with SP). Without SP
   and t > 1: sbh(10 + 24/t + 5as/(ht)) (their Eq. 3). */
PP_PLAN_DEF double pp_layer_activation_bytes(const pp_model *m, int mbs, int tp, int recompute) {
    double s, b, h, a, t, attn;
    if (!m || m->seq < 1 || m->hidden < 1 || m->heads < 1 || mbs < 1 || tp < 1) return 0;
    s = m->seq;
    b = mbs;
    h = m->hidden;
    a = m->heads;
    t = tp;
    attn = m->no_flash_attention ? 5 * a * s / h : 0;
    if (recompute) return 2 * s * b * h / (m->no_seq_parallel ? 1 : t);
    if (m->no_seq_parallel && tp > 1) return s * b * h * (10 + 24 / t + attn / t);
    return s * b * h * (34 + attn) / t;
}

/* Megatron's transformer layer: 12h^2 + 13h parameters (Narayanan et al. 2021). */
PP_PLAN_DEF double pp_layer_params(const pp_model *m) {
    double h = m ? m->hidden : 0;
    return 12 * h * h + 13 * h;
}

/* Per item (0 = embedding, 1..L = layers, L+1 = LM head): forward time of one
   microbatch, its weights, activation bytes kept per microbatch. */
typedef struct pp__item { double f, w, params, act; } pp__item;

/* compute slowdown of a TP-sharded layer on `tokens` = mbs x seq rows
   (PLANNING, pass times) */
static double pp__tp_slow(const pp_gpu *g, int tp, double tokens) {
    double a = g->tp_slowdown == 0 ? 0.037 : g->tp_slowdown < 0 ? 0 : g->tp_slowdown, l = 0;
    while (tp > 1) { l += 1; tp /= 2; }
    return 1 + a * l * (tokens > 1024 ? 1024 / tokens : 1);
}

static void pp__plan_items(const pp_plan_request *r, int tp, int mbs, pp__item *it, double *comm) {
    const pp_model *m = &r->model;
    double s = m->seq, b = mbs, h = m->hidden, t = tp, V = pp__vocab(m);
    double fl = r->gpu.flops > 0 ? r->gpu.flops : 190e12, hbm = r->gpu.hbm_bw > 0 ? r->gpu.hbm_bw : 2.0e12;
    double tpbw = r->gpu.tp_bw > 0 ? r->gpu.tp_bw : 300e9, net = r->gpu.net_bw > 0 ? r->gpu.net_bw : 25e9;
    double act = pp_layer_activation_bytes(m, mbs, tp, 0), flops, bytes, tf, tcomm = 0;
    int L = m->layers, i;
    /* layer: 24bsh^2(1 + s/6h) forward FLOPs (Narayanan et al. 2021), roofline
       against reading its 16-bit weights and writing its activations */
    flops = 24 * b * s * h * h * (1 + s / (6 * h)) / t;
    bytes = 2 * pp_layer_params(m) / t + act;
    tf = flops / fl > bytes / hbm ? flops / fl : bytes / hbm;
    tf *= pp__tp_slow(&r->gpu, tp, s * b);
    if (tp > 1) tcomm = 2 * 2 * (t - 1) / t * 2 * s * b * h / tpbw; /* 2 all-gather/reduce-scatter pairs */
    for (i = 1; i <= L; i++) {
        it[i].f = tf + tcomm;
        it[i].w = tf;
        it[i].params = pp_layer_params(m) / t;
        it[i].act = act;
    }
    /* embedding: a gather, memory-bound; LM head: 2bshV FLOPs */
    it[0].f = 2 * s * b * h / t / hbm;
    it[0].w = it[0].f;
    it[0].params = (V * h + s * h) / t;
    it[0].act = 0;
    flops = 2 * b * s * h * V / t;
    bytes = 2 * V * h / t + 4 * s * b * V / t;
    tf = flops / fl > bytes / hbm ? flops / fl : bytes / hbm;
    tf *= pp__tp_slow(&r->gpu, tp, s * b);
    it[L + 1].f = tf;
    it[L + 1].w = tf;
    it[L + 1].params = V * h / t;
    it[L + 1].act = 0;
    *comm = 2 * s * b * h / (m->no_seq_parallel ? 1 : t) / net;
}

static void pp__cand_reason(pp_candidate *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->reason, sizeof c->reason, fmt, ap);
    va_end(ap);
}

/* A build shared by layouts of equal (schedule, pp, n_b, tp, memory limit):
   mbs only scales every time (roofline compute-bound) and is divided out. */
#define PP__PLAN_CACHE 256
typedef struct pp__plan_cache {
    int id, pp, nb, tp, S;
    double lim, scale, rin;
    pp_schedule *s; /* NULL: a pruned candidate's entry, built on its first hit from: */
    pp_times *stt;  /* its stage times (so a hit gets what it would have got unpruned) */
} pp__plan_cache;

static void pp__plan_cache_put(pp__plan_cache *e, int id, int pp, int nb, int tp, int S, double lim, double scale,
                               double rin, pp_schedule *sch, pp_times *stt) {
    e->id = id; e->pp = pp; e->nb = nb; e->tp = tp; e->S = S;
    e->lim = lim; e->scale = scale; e->rin = rin;
    e->s = sch; e->stt = stt;
}

static void pp__plan_cache_clear(const pp_allocator *al, pp__plan_cache *cache, int *ncache) {
    while (*ncache > 0) {
        --*ncache;
        pp_sched_free(cache[*ncache].s);
        pp__plan_free(al, cache[*ncache].stt);
    }
}

/* a (pp, tp) pair of layouts: its candidates' first index in out, its key */
typedef struct pp__plan_pair { int pp, tp, dp, base; double key; } pp__plan_pair;

/* each schedule's best step time so far (branch and bound) */
typedef struct pp__plan_inc { double step; int pp, tp, dp, mbs; } pp__plan_inc;

static int pp__cand_cmp(const void *x, const void *y) {
    const pp_candidate *a = (const pp_candidate *)x, *b = (const pp_candidate *)y;
    int ra = a->step_time > 0 ? 0 : a->fits ? 1 : 2, rb = b->step_time > 0 ? 0 : b->fits ? 1 : 2;
    if (ra != rb) return ra - rb;
    if (ra == 0 && a->step_time != b->step_time) return a->step_time < b->step_time ? -1 : 1;
    if (ra == 2 && a->peak_bytes != b->peak_bytes) return a->peak_bytes < b->peak_bytes ? -1 : 1;
    return 0;
}

/* the largest pp at which the planner builds v-auto / zb-auto */
#define PP__PLAN_SEARCH_PP 8

/* Evaluate one (layout, schedule). */
static void pp__plan_one(const pp_plan_request *r, const pp_allocator *al, int id, int pp, int tp, int dp, int mbs, pp_candidate *c,
                         pp__item *it, double *cost, int *first, pp_times *stt, pp__plan_cache *cache,
                         int *ncache, const pp__plan_inc *inc, double top_k, int bound_only) {
    const pp_model *m = &r->model;
    const pp_sched_info *info = pp_sched_info_at(id);
    const char *name = info->name;
    double gmem = (r->gpu.mem_bytes > 0 ? r->gpu.mem_bytes : 80.0 * 1073741824.0) - r->gpu.reserve_bytes, comm, mx;
    int L = m->layers, items = L + 2, n = r->global_batch / (dp * mbs), v, S, s, i, dev, recompute;
    int vplace, adaptive = info->adaptive, nb;
    double optb = m->no_distributed_optimizer ? 12 : 12.0 / dp, unit, static_max = 0, best_peak = 0;
    double dev_static[1024], lim = 0, scale = 1;
    int cached = 0;
    pp_config cfg;
    pp_schedule *sch = NULL;
    char e2[PP_ERR_LEN];
    memset(c, 0, sizeof *c);
    snprintf(c->schedule, sizeof c->schedule, "%s", name);
    c->pp = pp;
    c->tp = tp;
    c->dp = dp;
    c->mbs = mbs;
    c->microbatches = n;
    v = info->chunks;
    vplace = info->placement == PP_PLACE_VSHAPE;
    recompute = info->recompute;
    S = pp * v;
    if (info->copies == 2) { /* its static bytes (two copies) and its split (d stages per copy) differ */
        pp__cand_reason(c, "not evaluated: dualpipe keeps two copies of the parameters, which the planner does not model");
        return;
    }
    if (pp > 1024) { pp__cand_reason(c, "pp > 1024"); return; }
    if (S > items) {
        pp__cand_reason(c, "%d layers + embedding + head cannot fill %d stages", L, S);
        return;
    }
    pp__plan_items(r, tp, mbs, it, &comm);
    for (i = 0; i < items; i++) cost[i] = it[i].f;
    if (pp_partition(cost, items, S, first, &mx, al, e2) != PP_OK) { pp__cand_reason(c, "%s", e2); return; }
    /* bytes: static per device from its stages' items; unit = L/pp layers */
    for (dev = 0; dev < pp; dev++) dev_static[dev] = 0;
    for (s = 0; s < S; s++) {
        int end = s + 1 < S ? first[s + 1] : items;
        double f = 0, w = 0, p = 0;
        dev = vplace ? (s < pp ? s : 2 * pp - 1 - s) : s % pp;
        for (i = first[s]; i < end; i++) {
            f += it[i].f;
            w += it[i].w;
            p += it[i].params;
        }
        if (f <= 0) f = 1e-9;
        stt[s].f = f;
        stt[s].b = f;
        stt[s].w = w > 0 ? w : 1e-9;
        stt[s].comm = comm;
        dev_static[dev] += p * (4 + optb);
    }
    if (r->times) { /* measured per-device-share times: spread over stages by cost */
        double tot = 0;
        for (s = 0; s < S; s++) tot += stt[s].f;
        for (s = 0; s < S; s++) {
            double q = stt[s].f / tot * pp;
            stt[s].f = r->times->f * q;
            stt[s].b = r->times->b * q;
            stt[s].w = r->times->w * q > 0 ? r->times->w * q : 1e-9;
            stt[s].comm = r->times->comm;
        }
    }
    unit = pp_layer_activation_bytes(m, mbs, tp, recompute) * L / pp;
    for (dev = 0; dev < pp; dev++)
        if (dev_static[dev] > static_max) static_max = dev_static[dev];
    if (static_max >= gmem) {
        c->fits = 0;
        c->peak_bytes = static_max;
        c->static_bytes = static_max;
        c->unit_bytes = unit;
        pp__cand_reason(c, "parameters and optimizer alone need %.1f GiB > %.1f GiB", static_max / 1073741824.0,
                        gmem / 1073741824.0);
        return;
    }
    if (adaptive) {
        /* the most units every device can hold, in half units */
        lim = (double)(long)((gmem - static_max) / unit * 2) / 2;
        if (lim > 2.0 * pp) lim = 2.0 * pp;
        if (lim < 0.5) {
            pp__cand_reason(c, "no memory left for activations (%.1f GiB static)", static_max / 1073741824.0);
            c->unit_bytes = unit;
            return;
        }
        if (pp > PP__PLAN_SEARCH_PP) {
            pp__cand_reason(c, "not evaluated: the %s search is slow at pp > %d (the planner keeps it to pp <= %d)", name,
                            PP__PLAN_SEARCH_PP, PP__PLAN_SEARCH_PP);
            c->unit_bytes = unit;
            return;
        }
    }
    if (info->search && pp > PP__PLAN_SEARCH_PP) {
        pp__cand_reason(c, "not evaluated: the %s search takes seconds at pp > %d (planner keeps to pp <= %d)", name,
                        PP__PLAN_SEARCH_PP, PP__PLAN_SEARCH_PP);
        c->unit_bytes = unit;
        return;
    }
    /* build at n_b = min(n, 2pp) microbatches, extrapolate the steady state */
    /* n_b = pp where the peak is reached within d microbatches (1F1B-like
       and the V schedules: at unit times the extrapolation equals the full
       build, checked for d = 8, 20 at n = 160), 2pp where warm-up runs
       longer (eager, zb-h2, interleaved, dualpipe-v, the adaptive ones), n
       where memory grows with n (gpipe, looped-bfs) */
    nb = n < 2 * pp ? n : 2 * pp;
    if (info->steady == 1 && n > pp) nb = pp;
    if (info->steady == 0) nb = n;
    memset(&cfg, 0, sizeof cfg);
    cfg.allocator = *al;
    cfg.schedule = name;
    cfg.devices = pp;
    cfg.microbatches = nb;
    cfg.chunks = v;
    cfg.stage_times = stt;
    cfg.mem_limit = lim;
    if (recompute) cfg.recompute_input = pp_layer_activation_bytes(m, mbs, tp, 1) / pp_layer_activation_bytes(m, mbs, tp, 0);
    /* work bound (PLANNING, pruning): device k runs nb x p_k of passes (its
       stages' F + B + W, + F again for 1f1b-r) and cannot start before
       microbatch 0's forwards reach its first stage k, so makespan(nb) >=
       head_k + nb p_k; the extrapolation adds (n - nb) x the busiest p */
    {
        double pmax = 0, mk = 0, head = 0, bound;
        int k;
        for (dev = 0; dev < pp; dev++) {
            double pk = 0;
            for (k = 0; k < 2 && (k == 0 || v == 2); k++) {
                s = k == 0 ? dev : vplace ? 2 * pp - 1 - dev : pp + dev;
                pk += stt[s].f + stt[s].b + stt[s].w + (recompute ? stt[s].f : 0);
            }
            if (pk > pmax) pmax = pk;
            if (head + nb * pk > mk) mk = head + nb * pk;
            head += stt[dev].f;
        }
        bound = mk + (double)(n - nb) * pmax;
        if (dp > 1) bound += 2.0 * (dp - 1) / dp * (static_max / (4 + optb)) * 2 / (r->gpu.net_bw > 0 ? r->gpu.net_bw : 25e9);
        c->bound = bound;
        if (bound_only) return;
    }
    {
        int k, hit = -1;
        for (k = 0; k < *ncache; k++)
            if (cache[k].id == id && cache[k].pp == pp && cache[k].nb == nb && cache[k].tp == tp &&
                cache[k].lim == lim && (r->times || cache[k].scale > 0)) { hit = k; break; }
        if ((hit < 0 || !cache[hit].s) && !r->no_prune && inc && inc->step > 0 &&
            c->bound > inc->step * (1 + 1e-9) && c->bound > top_k * (1 + 1e-9)) {
            /* slower than this schedule's best so far whatever its bubble: not
               built; its times are kept for a later layout that shares the build */
            c->pruned = 1;
            c->unit_bytes = unit;
            c->static_bytes = static_max;
            c->peak_bytes = static_max;
            pp__cand_reason(c, "not built: at least %.1f%% slower (work bound %.3f s) than its best layout pp=%d tp=%d dp=%d mbs=%d, "
                            "outside the top %d", 100 * (c->bound / inc->step - 1), c->bound, inc->pp, inc->tp, inc->dp, inc->mbs,
                            r->keep_top > 0 ? r->keep_top : 10);
            if (hit < 0 && *ncache < PP__PLAN_CACHE) {
                pp_times *copy = (pp_times *)pp__plan_malloc(al, sizeof(pp_times) * (size_t)S);
                if (copy) {
                    memcpy(copy, stt, sizeof(pp_times) * (size_t)S);
                    pp__plan_cache_put(&cache[(*ncache)++], id, pp, nb, tp, S, lim, r->times ? 0 : it[1].f,
                                       cfg.recompute_input, NULL, copy);
                }
            }
            return;
        }
        if (hit >= 0 && !cache[hit].s) { /* a pruned layout's entry: build it with its times */
            pp_config c2 = cfg;
            c2.stage_times = cache[hit].stt;
            c2.recompute_input = cache[hit].rin;
            if (pp_sched_build(&c2, &cache[hit].s, e2) != PP_OK) {
                cache[hit].s = NULL;
                pp__cand_reason(c, "does not build: %s", e2);
                c->unit_bytes = unit;
                return;
            }
            pp__plan_free(al, cache[hit].stt);
            cache[hit].stt = NULL;
        }
        if (hit >= 0) {
            sch = cache[hit].s;
            scale = r->times ? 1 : it[1].f / cache[hit].scale;
            cached = 1;
        } else {
            if (pp_sched_build(&cfg, &sch, e2) != PP_OK) {
                pp__cand_reason(c, "does not build: %s", e2);
                c->unit_bytes = unit;
                return;
            }
            if (*ncache < PP__PLAN_CACHE) {
                pp__plan_cache_put(&cache[(*ncache)++], id, pp, nb, tp, S, lim, r->times ? 0 : it[1].f,
                                   cfg.recompute_input, sch, NULL);
                cached = 1;
            }
        }
    }
    {
        double work = 0, wd;
        int p;
        for (dev = 0; dev < pp; dev++) {
            double peak_b;
            wd = 0;
            for (p = sch->device_start[dev]; p < sch->device_start[dev + 1]; p++)
                wd += sch->passes[p].end - sch->passes[p].start;
            if (wd > work) work = wd;
            /* recompute: the schedule's units are already the kept input fraction */
            peak_b = dev_static[dev] + sch->peak_memory[dev] * (recompute ? pp_layer_activation_bytes(m, mbs, tp, 0) * L / pp : unit);
            if (peak_b > best_peak) {
                best_peak = peak_b;
                c->static_bytes = dev_static[dev];
                c->peak_units = sch->peak_memory[dev];
            }
        }
        c->peak_bytes = best_peak;
        c->unit_bytes = unit;
        c->step_time = (sch->makespan + (double)(n - nb) * work / nb) * scale;
    }
    if (!cached) pp_sched_free(sch);
    /* data parallel: ring all-reduce of 16-bit gradients of the largest device */
    if (dp > 1) c->step_time += 2.0 * (dp - 1) / dp * (static_max / (4 + optb)) * 2 / (r->gpu.net_bw > 0 ? r->gpu.net_bw : 25e9);
    c->fits = best_peak <= gmem;
    if (!c->fits) {
        pp__cand_reason(c, "out of memory by %.1f GiB (peak %.1f GiB)", (best_peak - gmem) / 1073741824.0,
                        best_peak / 1073741824.0);
        c->step_time = 0;
        return;
    }
    {
        double s_ = m->seq, h = m->hidden, Lm = L, V = pp__vocab(m);
        double model_flops = 72.0 * r->global_batch * s_ * Lm * h * h * (1 + s_ / (6 * h) + V / (12 * h * Lm));
        c->mfu = model_flops / (c->step_time * r->gpus * 312e12);
    }
}

PP_PLAN_DEF pp_status pp_plan(const pp_plan_request *r, pp_candidate *out, int cap, int *count, char *err) {
    pp_allocator al = pp__plan_al(r ? &r->allocator : NULL);
    const pp_model *m;
    int pp, tp, mbs, id, total = 0, L, items, nlayouts = 0, nsched = 0, rep = -1, pass, npairs = 0, k, ktop, ntop = 0;
    double *top = NULL;
    pp__plan_pair *pairs = NULL;
    pp__item *it;
    double *cost;
    int *first;
    pp_times *stt;
    pp__plan_cache cache[PP__PLAN_CACHE];
    pp__plan_inc *inc;
    int ncache = 0, nall = pp_sched_count(), want = -1;
    if (err) err[0] = 0;
    if (count) *count = 0;
    if (!r || !count || (cap > 0 && !out)) { pp__plan_err(err, "pp_plan: needs req, count and out (cap > 0)"); return PP_ERR_INVALID_ARG; }
    m = &r->model;
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->seq < 1 || r->gpus < 1 || r->global_batch < 1) {
        pp__plan_err(err, "pp_plan: layers, hidden, heads, seq, gpus and global_batch must be >= 1 (got %d %d %d %d %d %d)",
                m->layers, m->hidden, m->heads, m->seq, r->gpus, r->global_batch);
        return PP_ERR_INVALID_ARG;
    }
    {
        double mem = r->gpu.mem_bytes > 0 ? r->gpu.mem_bytes : 80.0 * 1073741824.0;
        if (!(r->gpu.reserve_bytes >= 0) || r->gpu.reserve_bytes >= mem) {
            pp__plan_err(err, "pp_plan: reserve_bytes must be >= 0 and below the GPU memory (%.1f GiB), got %.1f GiB",
                    mem / 1073741824.0, r->gpu.reserve_bytes / 1073741824.0);
            return PP_ERR_INVALID_ARG;
        }
    }
    if (m->hidden % m->heads) {
        pp__plan_err(err, "hidden %d is not a multiple of heads %d", m->hidden, m->heads);
        return PP_ERR_INVALID_ARG;
    }
    if (r->schedule) {
        want = pp_sched_find(r->schedule);
        if (want < 0) { pp__plan_err(err, "unknown schedule '%s'", r->schedule); return PP_ERR_UNKNOWN_SCHEDULE; }
    }
    if (r->pp > 0 || r->tp > 0 || r->dp > 0) {
        int P = r->pp > 0 ? r->pp : 1, T = r->tp > 0 ? r->tp : 1, D = r->dp > 0 ? r->dp : 1;
        if (r->gpus % (P * T * D)) {
            pp__plan_err(err, "world %d not divisible by tp*pp*dp = %d (dp = world / (tp * pp) must be exact)", r->gpus,
                    P * T * D);
            return PP_ERR_INVALID_ARG;
        }
    }
    L = m->layers;
    items = L + 2;
    it = (pp__item *)pp__plan_malloc(&al, sizeof(pp__item) * (size_t)items);
    cost = (double *)pp__plan_malloc(&al, sizeof(double) * (size_t)items);
    first = (int *)pp__plan_malloc(&al, sizeof(int) * (size_t)(2 * items + 2));
    stt = (pp_times *)pp__plan_malloc(&al, sizeof(pp_times) * (size_t)(2 * items + 2));
    inc = (pp__plan_inc *)pp__plan_malloc(&al, sizeof(pp__plan_inc) * (size_t)nall);
    if (!it || !cost || !first || !stt || !inc) {
        pp__plan_free(&al, inc);
        pp__plan_free(&al, it);
        pp__plan_free(&al, cost);
        pp__plan_free(&al, first);
        pp__plan_free(&al, stt);
        pp__plan_err(err, "pp_plan: out of memory");
        return PP_ERR_OUT_OF_MEMORY;
    }
    memset(inc, 0, sizeof(pp__plan_inc) * (size_t)nall);
    /* (pp, tp) pairs in enumeration order; each pair's candidates keep their
       place in out (pp, tp, mbs, schedule ascending, as without pruning), but
       the pairs are evaluated in the order of their lowest work bound (one
       schedule's, over the pair's mbs) so that good incumbents come early */
    for (id = 0; id < nall; id++)
        if (!r->schedule || id == want) { nsched++; if (rep < 0) rep = id; }
    if (!r->schedule) rep = pp_sched_find("1f1b"); /* the pairs' order key: plain 1F1B's work bound */
    for (pass = 0; pass < 2; pass++) {
        npairs = 0;
        for (pp = 1; pp <= r->gpus; pp++) {
            if (r->gpus % pp || (r->pp > 0 && pp != r->pp)) continue;
            for (tp = 1; tp <= r->gpus / pp; tp++) {
                int dp, nl = 0;
                double key = 1e300;
                if ((r->gpus / pp) % tp || (r->tp > 0 && tp != r->tp)) continue;
                if (r->tp <= 0 && (8 % tp || m->heads % tp)) continue; /* TP inside one 8-GPU node (1, 2, 4, 8), heads split evenly */
                dp = r->gpus / (pp * tp);
                if (r->dp > 0 && dp != r->dp) continue;
                for (mbs = r->mbs > 0 ? r->mbs : 1; mbs <= (r->mbs > 0 ? r->mbs : 4); mbs *= 2) { /* default grid 1, 2, 4 */
                    if (r->mbs > 0 && mbs != r->mbs) continue;
                    if (r->global_batch % (dp * mbs)) continue;
                    nl++;
                    if (pass == 1 && !r->no_prune) {
                        pp_candidate c;
                        pp__plan_one(r, &al, rep, pp, tp, dp, mbs, &c, it, cost, first, stt, cache, &ncache, NULL, 0, 1);
                        if (c.bound > 0 && c.bound < key) key = c.bound;
                    }
                }
                if (nl == 0) continue;
                if (pass == 1) {
                    pairs[npairs].pp = pp;
                    pairs[npairs].tp = tp;
                    pairs[npairs].dp = dp;
                    pairs[npairs].base = total;
                    pairs[npairs].key = key;
                    total += nl * nsched;
                    nlayouts += nl;
                }
                npairs++;
            }
        }
        if (pass == 0) {
            pairs = (pp__plan_pair *)pp__plan_malloc(&al, sizeof(pp__plan_pair) * (size_t)(npairs > 0 ? npairs : 1));
            if (!pairs) {
                pp__plan_free(&al, inc);
                pp__plan_free(&al, it);
                pp__plan_free(&al, cost);
                pp__plan_free(&al, first);
                pp__plan_free(&al, stt);
                pp__plan_err(err, "pp_plan: out of memory");
                return PP_ERR_OUT_OF_MEMORY;
            }
        }
    }
    ktop = r->keep_top > 0 ? r->keep_top : 10;
    if (ktop > total) ktop = total > 0 ? total : 1;
    top = (double *)pp__plan_malloc(&al, sizeof(double) * (size_t)ktop);
    if (!top) {
        pp__plan_free(&al, pairs);
        pp__plan_free(&al, inc);
        pp__plan_free(&al, it);
        pp__plan_free(&al, cost);
        pp__plan_free(&al, first);
        pp__plan_free(&al, stt);
        pp__plan_err(err, "pp_plan: out of memory");
        return PP_ERR_OUT_OF_MEMORY;
    }
    /* stable insertion sort by key (with no_prune every key is 1e300: enumeration order) */
    for (k = 1; k < npairs; k++) {
        pp__plan_pair x = pairs[k];
        int j = k;
        while (j > 0 && pairs[j - 1].key > x.key) { pairs[j] = pairs[j - 1]; j--; }
        pairs[j] = x;
    }
    for (k = 0; k < npairs; k++) {
        int dp = pairs[k].dp, idx = pairs[k].base;
        pp = pairs[k].pp;
        tp = pairs[k].tp;
        /* the cache's key holds (pp, tp): no other pair can hit an entry of
           this one, so it is emptied here and never fills up */
        pp__plan_cache_clear(&al, cache, &ncache);
        for (mbs = r->mbs > 0 ? r->mbs : 1; mbs <= (r->mbs > 0 ? r->mbs : 4); mbs *= 2) {
            if (r->mbs > 0 && mbs != r->mbs) continue;
            if (r->global_batch % (dp * mbs)) continue;
            for (id = 0; id < nall; id++) {
                pp_candidate c;
                if (r->schedule && id != want) continue;
                pp__plan_one(r, &al, id, pp, tp, dp, mbs, &c, it, cost, first, stt, cache, &ncache, &inc[id],
                             ntop < ktop ? 1e300 : top[ktop - 1], 0);
                if (c.step_time > 0) { /* keep the ktop best step times, ascending */
                    int j;
                    if (ntop < ktop) j = ntop++;
                    else if (c.step_time < top[ktop - 1]) j = ktop - 1;
                    else j = -1;
                    if (j >= 0) {
                        while (j > 0 && top[j - 1] > c.step_time) { top[j] = top[j - 1]; j--; }
                        top[j] = c.step_time;
                    }
                }
                if (c.step_time > 0 && (inc[id].step <= 0 || c.step_time < inc[id].step)) {
                    inc[id].step = c.step_time;
                    inc[id].pp = pp;
                    inc[id].tp = tp;
                    inc[id].dp = dp;
                    inc[id].mbs = mbs;
                }
                if (idx < cap) out[idx] = c;
                idx++;
            }
        }
    }
    pp__plan_free(&al, pairs);
    pp__plan_free(&al, inc);
    pp__plan_free(&al, top);
    pp__plan_free(&al, it);
    pp__plan_free(&al, cost);
    pp__plan_free(&al, first);
    pp__plan_free(&al, stt);
    pp__plan_cache_clear(&al, cache, &ncache);
    *count = total;
    if (nlayouts == 0) {
        pp__plan_err(err, "no layout: no pp x tp x dp = %d with mbs dividing global batch %d / dp", r->gpus, r->global_batch);
        return PP_ERR_INVALID_ARG;
    }
    if (total > cap) {
        pp__plan_err(err, "pp_plan: %d candidates, room for %d", total, cap);
        return PP_ERR_OVERFLOW;
    }
    qsort(out, (size_t)total, sizeof *out, pp__cand_cmp);
    if (total > 0 && out[0].step_time > 0) {
        int i;
        pp__cand_reason(&out[0], "best");
        for (i = 1; i < total && out[i].step_time > 0; i++)
            pp__cand_reason(&out[i], "%.1f%% slower than the best (%s pp=%d tp=%d dp=%d mbs=%d)",
                            100 * (out[i].step_time / out[0].step_time - 1), out[0].schedule, out[0].pp, out[0].tp,
                            out[0].dp, out[0].mbs);
    }
    return PP_OK;
}

#endif /* PP__PLAN_IMPLEMENTATION_INCLUDED */
#endif /* PP_PLAN_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 the pp_sched authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
