/* pp_sched.h - v0.1.0 - pipeline-parallel schedules with controllable memory - MIT licence (see end of file)

   Builds, checks and measures pipeline-parallel training schedules the way
   "Pipeline Parallelism with Controllable Memory" (Qi, Wan, Amar, Lin) does:
   building block -> repeat -> squeeze -> reorder. C99, libc only.

   Do this:
       #define PP_SCHED_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.
       #include ...
       #define PP_SCHED_IMPLEMENTATION
       #include "pp_sched.h"
   Every other file just includes "pp_sched.h".

QUICK START
   #include <stdio.h>
   #define PP_SCHED_IMPLEMENTATION
   #include "pp_sched.h"

   int main(void) {
       pp_config cfg = {0};
       cfg.schedule = "v-half";          // any name from pp_sched_info_at()
       cfg.devices = 4;                  // d
       cfg.microbatches = 8;             // n; zero times = unit times
       char err[PP_ERR_LEN];
       pp_schedule *s = NULL;
       if (pp_sched_build(&cfg, &s, err) != PP_OK) { fprintf(stderr, "%s\n", err); return 1; }
       pp_sched_print_ascii(stdout, s, 0);
       pp_sched_free(s);
       return 0;
   }

   Output:
@@QUICKSTART_OUTPUT@@

CONCEPTS
   device      one GPU (rank) of the pipeline; d of them.
   stage       a contiguous slice of the model's layers; S = v*d stages.
   chunk       a device holds v stages, its chunks (v=1: 1F1B, v=2: V-shape).
   placement   stage -> device. sequential (v=1, stage s on device s);
               looped/interleaved (stage s on device s mod d);
               V-shape (v=2: stage s<d on device s, stage s>=d on 2d-1-s).
   microbatch  one of the n slices of the batch that flow through the pipe.
   F, B, W     forward; backward for the input (B); backward for the weights
               (W). Schedules without that split run one combined pass BW.
   times       t_F, t_B, t_W are for one microbatch through ONE DEVICE'S
               share of the model (1/d of its layers). A chunk pass takes t/v,
               so a V-shape pass takes half as long as a 1F1B pass and the
               same model on the same devices is compared. t_comm is added on
               every dependency edge that crosses devices. Per-stage times
               (uneven stages) override this through pp_config.stage_times.
   memory      unit = activation of one microbatch for one device's share of
               the model (M/d where M is the whole model's activation). F of
               a chunk allocates 1/v unit; B and W both done (or BW done)
               free it. 1F1B's device 0 peaks at exactly d units (= M).
   deps        F(s,j) after F(s-1,j); B(S-1,j) after F(S-1,j);
               B(s,j) after B(s+1,j); W(s,j) after B(s,j). A device runs one
               pass at a time.
   bubble rate 1 - (sum of busy time over devices) / (d * makespan).

   building block   the passes of ONE microbatch laid out on a grid of unit
               cells (F, B, W take 1 cell, BW takes 2, 1F1B-R's BW 3): an
               offset per pass, plus the placement (pp_block).
   repeating interval T   block k starts at k*T. Two passes on one device in
               one cell is a collision and the block is illegal.
   lifespan    l(s): from the start of F to the end of the later of B, W.
   peak memory (Eq. 1) device i <= sum over its stages of ceil(l(s)/T)*m(s).
               pp_sched_build also simulates allocation over the final
               timeline; the simulation never exceeds Eq. 1.
   squeeze     every pass starts as early as its dependencies and its
               device's previous pass allow, keeping each device's order,
               with the real times.
   reorder     Appendix C: warm-up bubbles are filled with later passes that
               are ready, without raising the device's peak memory; in the
               cool-down, W passes are removed, the rest squeezed, the W
               passes put back into bubbles after their B, the rest appended.

   V-Half, d=4, n=8, unit times (each cell is a chunk pass, 0.5 time):
       device 0 |0 1  0 1 2 ...      F of chunk 0 are digits, chunk 1 letters
       ...        (see pp_sched_print_ascii; the quick-start above prints one)

API (one line each; status-returning calls fill err[PP_ERR_LEN] on failure)
   pp_sched_build(cfg, &s, err)        build a built-in schedule by name
   pp_sched_free(s)                    free anything returned as pp_schedule*
   pp_sched_validate(s, err)           every pass once, no overlap, deps, placement
   pp_sched_peak_memory(s, out)        simulate allocation/free, out[d] in units
   pp_sched_count(), pp_sched_info_at(i)   the built-in schedules
   pp_block_create(d, v, place, split, mpb, &blk, err) / pp_block_free(blk)
   pp_block_check(blk, err)            dependencies inside the block, collisions on repeat
   pp_block_peak_bound(blk, dev)       Eq. 1 for one device, in units
   pp_repeat(blk, n, starts, cfg, &s, err)  repeat on the unit grid (starts: NULL = k*T)
   pp_squeeze(s, err)                  earliest start keeping device order, real times
   pp_reorder(s, err)                  Appendix C warm-up and cool-down reordering
   pp_sched_from_order(order, cfg, &s, err)  any per-device pass order -> squeezed schedule
   pp_sched_print_ascii(f, s, color)   timeline like the paper's figures
   pp_sched_print_json(f, s)           one JSON object
   pp_status_string(st), pp_kind_name(k), pp_placement_name(p)

CONFIGURATION MACROS
   PP_SCHED_IMPLEMENTATION  emit the implementation in this translation unit
   PP_SCHED_STATIC          make every function static
   PP_SCHED_API             decoration of public functions (default extern)
   PP_ASSERT(x)             defaults to assert(x)
   PP_SCHED_NO_STDIO        drop the FILE* printers

ERRORS, MEMORY, THREADS
   Every fallible call returns pp_status; err (caller-owned, PP_ERR_LEN bytes,
   may be NULL) gets a sentence that says what was wrong and what would be
   right. A pp_schedule lives in one allocation: pp_sched_free frees it. Pass
   your own allocator in pp_config.allocator. No globals: threads may build
   schedules at once. The library never prints unless asked, never exits.

DOES NOT
   run anything on GPUs (see pp_cuda.h), insert communication (see the
   lowering), or model memory in bytes. Transient working memory of a pass
   (e.g. the activations 1F1B-R recomputes inside its BW) is not counted.

LIMITS
   devices, microbatches, chunks >= 1; S*n*3 passes must fit in an int
   (checked). Times must be finite and >= 0 with t_F > 0 and t_B > 0.

DECISIONS (where the paper is ambiguous, what this file does)
   - Offsets of V blocks: F chunk 0 offsets d0, F chunk 1 offsets d1, B of
     chunk 1 offsets d0, B of chunk 0 offsets d1 (Section 3.1's balance).
     The three turn offsets (F0->F1 on the last device, F1->B on device 0,
     B1->B0 on the last device) are the smallest (by sum, then
     lexicographic) that repeat without collision; W takes the first cell
     after its B free in the repeat. This reproduces Table 8 (V-Min needs
     the F->B turn 3 when d = 0 mod 3, else 1).
   - eager 1F1B: 1F1B block with F offsets 4 (the smallest larger offset
     that repeats without collision); warm-up is 2(d-i)-1 forwards.
   - ZB-H1 / ZB-H2: the 1F1B / eager 1F1B blocks with B and W split,
     squeezed and reordered.
   - GPipe: the 1F1B block with the F->B turn 3n-2.
   - Official interleaved 1F1B: Megatron's per-device order (warm-up
     2(d-i-1)+(v-1)d forwards, groups of d microbatches), needs n % d == 0.
   - Reorder never raises a device's own peak memory above what it had
     after squeezing.

REVISION HISTORY
   0.1.0  first release: framework, built-in schedules, printers.
*/
#ifndef PP_SCHED_H
#define PP_SCHED_H

#define PP_SCHED_VERSION_MAJOR 0
#define PP_SCHED_VERSION_MINOR 1
#define PP_SCHED_VERSION_PATCH 0

#include <stddef.h>
#ifndef PP_SCHED_NO_STDIO
#include <stdio.h>
#endif

#ifndef PP_SCHED_API
#ifdef PP_SCHED_STATIC
#define PP_SCHED_API static
#else
#define PP_SCHED_API extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define PP_ERR_LEN 256

/* One status enum; names and strings from one table. */
#define PP_STATUS_LIST(X)                                                        \
    X(PP_OK, "ok")                                                               \
    X(PP_ERR_INVALID_ARG, "invalid argument")                                    \
    X(PP_ERR_UNKNOWN_SCHEDULE, "unknown schedule")                               \
    X(PP_ERR_OUT_OF_MEMORY, "out of memory")                                     \
    X(PP_ERR_OVERFLOW, "sizes too large")                                        \
    X(PP_ERR_COLLISION, "building block collides with its repeat")               \
    X(PP_ERR_DEADLOCK, "pass order cannot run (dependency cycle)")               \
    X(PP_ERR_INVALID_SCHEDULE, "schedule breaks a rule")

typedef enum pp_status {
#define PP__ENUM(name, str) name,
    PP_STATUS_LIST(PP__ENUM)
#undef PP__ENUM
    PP_STATUS_COUNT
} pp_status;

typedef enum pp_kind { PP_F = 0, PP_B = 1, PP_W = 2, PP_BW = 3 } pp_kind;

typedef enum pp_placement {
    PP_PLACE_SEQUENTIAL = 0, /* v = 1, stage s on device s */
    PP_PLACE_LOOPED = 1,     /* stage s on device s mod d (interleaved) */
    PP_PLACE_VSHAPE = 2      /* v = 2, s < d on s, s >= d on 2d-1-s */
} pp_placement;

typedef struct pp_times {
    double f, b, w; /* per microbatch, one device's share of the model */
    double comm;    /* added on every dependency edge that crosses devices */
} pp_times;

typedef struct pp_allocator {
    void *(*alloc)(size_t size, void *user);
    void (*free)(void *ptr, void *user);
    void *user;
} pp_allocator;

typedef struct pp_config {
    const char *schedule;        /* built-in name; NULL = "1f1b" */
    int devices;                 /* d >= 1, required */
    int microbatches;            /* n >= 1, required */
    int chunks;                  /* v; 0 = the schedule's own (2 for V and interleaved) */
    pp_times times;              /* all of f, b, w zero = unit times 1,1,1 */
    const pp_times *stage_times; /* optional [S]: time of each pass of stage s itself
                                    (not scaled by 1/v); comm still from times.comm */
    double recompute_input;      /* 1f1b-r: activation kept per stage, fraction of a
                                    chunk's activation (default 0) */
    int no_reorder;              /* 1 = skip the Appendix C reordering */
    pp_allocator allocator;      /* zero = malloc/free */
} pp_config;

typedef struct pp_pass {
    int device, stage, microbatch;
    pp_kind kind;
    double start, end;
} pp_pass;

/* The result: transparent, one allocation. */
typedef struct pp_schedule {
    char name[32];
    int devices, chunks, stages, microbatches;
    pp_placement placement;
    int split_backward;      /* 1: F, B, W passes; 0: F, BW */
    pp_times times;          /* as resolved (unit times when zero was given) */
    int num_passes;
    pp_pass *passes;         /* device-major; within a device in execution order */
    int *device_start;       /* [d+1]: passes of device i are [device_start[i], device_start[i+1]) */
    int *stage_device;       /* [S] */
    double *stage_time;      /* [S*4]: duration of F, B, W, BW of stage s at [s*4+kind] */
    double *stage_memory;    /* [S]: units allocated by one F of stage s */
    double makespan;
    double bubble_rate;
    double *peak_memory;     /* [d]: simulated, in units */
    double *peak_bound;      /* [d]: Eq. 1 from the building block; -1 when not built from one */
    int interval;            /* T of the building block in cells; 0 when not built from one */
    pp_allocator allocator;
} pp_schedule;

/* A building block: offsets (in unit cells) of every pass of one block's
   microbatches. Cells: F, B, W take 1, BW takes bw_cells (2, or 3 for 1F1B-R). */
typedef struct pp_block {
    int devices, chunks, stages;
    pp_placement placement;
    int split_backward;
    int microbatches;        /* microbatches in one block (usually 1) */
    int interval;            /* T, in cells, between consecutive blocks */
    int bw_cells;            /* cells taken by BW; 0 = 2 */
    int *stage_device;       /* [S] */
    int *f, *b, *w;          /* [S * microbatches], index s*microbatches + k; b is BW when !split */
    pp_allocator allocator;
} pp_block;

/* A per-device pass order from anywhere (another tool, a paper, a test). */
typedef struct pp_order {
    const char *name;
    int devices, stages, microbatches;
    const int *stage_device; /* [stages]; NULL = looped (s mod d) */
    const pp_pass *passes;   /* every pass; those of one device in the order they run
                                (start/end ignored; device must match stage_device) */
    int count;
} pp_order;

typedef struct pp_sched_info {
    const char *name;
    const char *description;
} pp_sched_info;

PP_SCHED_API const char *pp_status_string(pp_status st);
PP_SCHED_API const char *pp_kind_name(pp_kind k);
PP_SCHED_API const char *pp_placement_name(pp_placement p);

PP_SCHED_API int pp_sched_count(void);
PP_SCHED_API const pp_sched_info *pp_sched_info_at(int i);

PP_SCHED_API pp_status pp_sched_build(const pp_config *cfg, pp_schedule **out, char *err);
PP_SCHED_API void pp_sched_free(pp_schedule *s);
PP_SCHED_API pp_status pp_sched_validate(const pp_schedule *s, char *err);
PP_SCHED_API pp_status pp_sched_peak_memory(const pp_schedule *s, double *out);

PP_SCHED_API pp_status pp_block_create(int devices, int chunks, pp_placement placement, int split_backward,
                                       int microbatches_per_block, const pp_allocator *alloc, pp_block **out,
                                       char *err);
PP_SCHED_API void pp_block_free(pp_block *blk);
PP_SCHED_API pp_status pp_block_check(const pp_block *blk, char *err);
PP_SCHED_API double pp_block_peak_bound(const pp_block *blk, int device);
PP_SCHED_API pp_status pp_repeat(const pp_block *blk, int microbatches, const int *starts, const pp_config *cfg,
                                 pp_schedule **out, char *err);
PP_SCHED_API pp_status pp_squeeze(pp_schedule *s, char *err);
PP_SCHED_API pp_status pp_reorder(pp_schedule *s, char *err);
PP_SCHED_API pp_status pp_sched_from_order(const pp_order *order, const pp_config *cfg, pp_schedule **out,
                                           char *err);

#ifndef PP_SCHED_NO_STDIO
PP_SCHED_API void pp_sched_print_ascii(FILE *f, const pp_schedule *s, int color);
PP_SCHED_API void pp_sched_print_json(FILE *f, const pp_schedule *s);
#endif

#ifdef __cplusplus
}
#endif
#endif /* PP_SCHED_H */
