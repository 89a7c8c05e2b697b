/* pp_sched.h - v0.8.0 - pipeline-parallel schedules with controllable memory - MIT licence (see end of file)

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

CONTENTS
   QUICK START            a complete program and what it prints
   CONCEPTS               device, stage, chunk, placement, F/B/W, routes,
                          building block, interval, lifespan, Eq. 1, squeeze
   API                    one line per function; the schedule table
   WRITE YOUR OWN BLOCK   a building block by hand: fill, repeat, squeeze
   LOWERING               per-device programs a runtime runs alone
   CONFIGURATION MACROS, ERRORS, MEMORY, THREADS, DOES NOT, LIMITS
   RULINGS                where the papers are ambiguous, what this file does
   RECENT REVISION HISTORY
   Elsewhere in the repository: README.md (a user's guide), docs/ (one page
   per subject), DESIGN.md (each ruling with its measurements),
   CHANGELOG.md (every version, dated). The planner is pp_plan.h; PyTorch
   CSV in and out, SVG and Chrome traces are pp_sched_io.h (both on this
   file's public API, each with its own _IMPLEMENTATION macro).
   The implementation's sections, in file order (marked "---- name ----"):
   small helpers; the schedule object; the entry check; the dependency rule
   (Section 2); metrics; squeeze; validation; bounds; building blocks;
   reorder (Appendix C); a bounded local search that can only improve;
   reusing reorders within a build; extending a schedule by its stable
   phase; any per-device order; lowering; built-in building blocks; the
   build request; list scheduling; interleaved, looped BFS, DualPipe; v-zb
   built pass by pass; adaptive schedules under a memory limit (Appendix A);
   v-auto, second family; v-auto and zb-auto; the built-in schedules; bubble
   growth (Appendix E.1); printers.

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
       v-half: d=4 v=2 stages=8 n=8, times F=1 B=1 W=1 comm=0, one column = 0.5
       device 0 |F0 F1 F2 F3 F4 ......f0 b0 w0 f1 b1 w1 f2 ......B0 b2 w2 f3 W0 F5 B1 b3 w3 ...f4 W1 F6 B2 b4 w4 f5 W2 F7 B3 b5 w5 f6 b6 B4 W3 w6 f7 b7 B5 W4 B6 w7 W5 W6 B7 W7 |
       device 1 |...F0 F1 F2 F3 ...f0 ...f1 b0 w0 f2 b1 w1 F4 B0 W0 ...f3 b2 ...B1 w2 F5 W1 f4 b3 B2 w3 F6 W2 f5 b4 B3 w4 F7 W3 f6 b5 B4 w5 b6 f7 W4 B5 b7 B6 w6 W5 w7 B7 W6 W7 |
       device 2 |......F0 F1 F2 f0 ...f1 ...f2 b0 w0 F3 b1 B0 w1 ...f3 W0 F4 B1 b2 w2 f4 W1 F5 B2 b3 w3 f5 W2 F6 B3 b4 w4 f6 W3 F7 B4 b5 w5 f7 b6 B5 W4 B6 b7 w6 W5 B7 w7 W6 W7 |
       device 3 |.........F0 f0 F1 f1 F2 f2 ......b0 B0 w0 F3 W0 f3 b1 B1 w1 F4 W1 f4 b2 B2 w2 F5 W2 f5 b3 B3 w3 F6 W3 f6 b4 B4 w4 F7 W4 f7 b5 B5 b6 B6 w5 W5 b7 B7 w6 W6 w7 W7 |
       F forward, B backward for input, W backward for weights; lower case = odd chunk; . = idle
       makespan 26.5, bubble rate 9.43%, lower bound 26.5 (Appendix E.2)
       peak memory per device (units: one microbatch's activation for 1/d of the model): 3 3 3 3
       Eq. 1 bound from the building block (T=6): 3 3 3 3

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
               pass at a time. (One rule, one home: pp_pass_input; everything
               else derives from it, and the runtimes read it from the
               lowered program.)
   routes      every microbatch runs through stages 0..S-1, except in a
               schedule with copies = 2 (dualpipe): two copies of the model,
               stages d..2d-1 are the second copy's 0..d-1 (placed V-like:
               device r holds copy A's stage r and copy B's stage d-1-r);
               microbatches 0..n/2-1 run stages 0..d-1 only, n/2..n-1 run
               d..2d-1 only, and the deps above hold within each route (F of
               stage d has no predecessor, B of stage d-1 follows its own F).
               A stage is then 1/d of the model: its pass takes t, its F
               allocates 1 unit, and each device keeps 2/d of the parameters
               (twice 1F1B's share; peak_memory counts activations only).
   bubble rate 1 - (sum of busy time over devices) / (d * makespan).

   building block   the passes of ONE microbatch laid out on a grid of unit
               cells (F, B, W take 1 cell, BW takes 2, 1F1B-R's BW 3): an
               offset per pass, plus the placement (pp_block).
   repeating interval T   block k starts at k*T. Two passes on one device in
               one cell is a collision and the block is illegal.
   lifespan    l(s): from the start of F to the end of the later of B, W.
   peak memory (Eq. 1) device i <= sum over its stages of ceil(l(s)/T)*m(s).
               pp_sched_build also simulates allocation over the final
               timeline; the simulation never exceeds Eq. 1 (the
               adaptive schedules, which reorder up to their mem_limit,
               never exceed that limit instead).
   squeeze     every pass starts as early as its dependencies and its
               device's previous pass allow, keeping each device's order,
               with the real times.
   reorder     Appendix C: warm-up bubbles are filled with later passes that
               are ready, without raising the device's peak memory; in the
               cool-down, W passes are removed, the rest squeezed, the W
               passes put back into bubbles after their B, the rest appended.


API (one line each; status-returning calls fill err[PP_ERR_LEN] on failure)
   pp_sched_build(cfg, &s, err)        build a built-in schedule by name
   pp_sched_free(s)                    free anything returned as pp_schedule*
   pp_sched_validate(s, err)           every pass once, no overlap, deps, placement
   pp_sched_check_shape(s, who, t, err)  the entry check: counts and indices safe to read
   pp_pass_input(S, n, copies, split, kind, stage, mb, &k, &st)  THE dependency rule: a pass's input
   pp_sched_peak_memory(s, out)        simulate allocation/free, out[d] in units
   pp_sched_count(), pp_sched_info_at(i)   the built-in schedules: pp_sched_info, one row
                                       of PP_SCHED_LIST (placement, chunks, split, recompute,
                                       copies, adaptive, limit, published order, steady,
                                       search and most devices, F&B pairs)
   pp_sched_find(name)                 the row of a name (or of a built schedule's s->name)
   pp_block_create(d, v, place, split, mpb, alloc, &blk, err)  an empty block (alloc may be
                                       NULL); fill f, b, w and set blk->interval by hand
   pp_block_free(blk)
   pp_block_check(blk, err)            dependencies inside the block, collisions on repeat
   pp_block_peak_bound(blk, dev)       Eq. 1 for one device, in units
   pp_repeat(blk, n, starts, cfg, &s, err)  repeat on the unit grid (starts: NULL = k*T)
   pp_squeeze(s, err)                  earliest start keeping device order, real times
   pp_reorder(s, err)                  Appendix C warm-up and cool-down reordering
   pp_sched_from_order(order, cfg, &s, err)  any per-device pass order -> squeezed schedule
   pp_sched_bounds(s, &b)              lower bounds on the makespan (work, path, Appendix E.2)
   pp_sched_bubble_growth(cfg, &g, err) O(p) (g=0) or O(n) (g=1) bubble, measured (Appendix E.1)
   pp_vhalf_o_p(times)                 Appendix E.1's condition for V-Half's O(p) bubble
   pp_fb_pair_time(x, a, share)        the F&B pair rule: max(x - share a, a) (pp_config.fb_share)
   pp_sched_lower(s, &prog, err)       per-device programs: computes, SEND/RECV, HANDOFF, slots
   pp_sched_check_deadlock(prog, stuck, err)  simulate blocking send/recv; names stuck ops
   pp_program_group_end(prog, dev, i)  end of the SEND/RECV group that starts at op i (the group rule)
   pp_program_pair(prog, partner, err) the op each SEND/RECV meets: k-th send a->b, k-th receive (pairing)
   pp_program_free(prog), pp_op_type_name(t)
   pp_sched_print_ascii(f, s, color)   timeline like the paper's figures
   pp_sched_print_json(f, s)           one JSON object
   pp_program_print(f, prog)           one line per device: ops, groups in { }, slots
   pp_sched_io.h: pp_sched_print_csv, pp_sched_from_csv (PyTorch CSV), pp_sched_print_svg,
                                       pp_sched_print_trace, pp_sched_torchtitan_schedule
   pp_stage_route(S, copies, stage, &first, &last)  the route a stage is on (runtimes: where F's input
                                       comes from, where B's gradient goes; see routes in CONCEPTS)
   pp_status_string(st), pp_kind_name(k), pp_placement_name(p)
   pp_status_bad_input(st)             1: the caller's input must change (tools exit 2), 0: a failed run

WRITE YOUR OWN BLOCK
   A building block is the offsets of one microbatch's passes in unit cells
   (blk->f, blk->b, blk->w at [stage * microbatches_per_block + k]; b is BW
   when split is 0) and the interval T, which pp_block_create leaves at 0:
   set it. pp_block_check says what collides or runs too early.
   #include <stdio.h>
   #define PP_SCHED_IMPLEMENTATION
   #include "pp_sched.h"

   int main(void) { // 1F1B's building block by hand: d = 3, one stage per device, BW not split
       int d = 3, s;
       char err[PP_ERR_LEN];
       pp_block *b = NULL;
       pp_schedule *sch = NULL;
       if (pp_block_create(d, 1, PP_PLACE_SEQUENTIAL, 0, 1, NULL, &b, err) != PP_OK) { fprintf(stderr, "%s\n", err); return 1; }
       b->interval = 3;                                  // T: set by hand (F 1 cell + BW 2 cells per device)
       for (s = 0; s < d; s++) {
           b->f[s] = s;                                  // F of stage s at cell s
           b->b[s] = d + 2 * (d - 1 - s);                // BW back from the last stage, 2 cells each
       }
       if (pp_block_check(b, err) != PP_OK || pp_repeat(b, 6, NULL, NULL, &sch, err) != PP_OK ||
           pp_squeeze(sch, err) != PP_OK) { fprintf(stderr, "%s\n", err); return 1; }
       printf("Eq. 1 on device 0: %g units, simulated: %g\n", pp_block_peak_bound(b, 0), sch->peak_memory[0]);
       pp_sched_print_ascii(stdout, sch, 0);
       pp_sched_free(sch);
       pp_block_free(b);
       return 0;
   }

   Output:
       Eq. 1 on device 0: 3 units, simulated: 3
       schedule: d=3 v=1 stages=3 n=6, times F=1 B=1 W=1 comm=0, one column = 1
       device 0 |F0 F1 F2 ............B0    F3 B1    F4 B2    F5 B3    ...B4    ...B5    |
       device 1 |...F0 F1 ......B0    F2 B1    F3 B2    F4 B3    F5 B4    ...B5    ......|
       device 2 |......F0 B0    F1 B1    F2 B2    F3 B3    F4 B4    F5 B5    ............|
       F forward, B backward (input and weights together); lower case = odd chunk; . = idle
       makespan 24, bubble rate 25.00%, lower bound 24 (Appendix E.2, generalised)
       peak memory per device (units: one microbatch's activation for 1/d of the model): 3 2 1
       Eq. 1 bound from the building block (T=3): 3 2 1

LOWERING (pp_sched_lower; the full argument sits above its implementation)
   program     per device, its passes as COMPUTE ops in the schedule's order,
               plus a SEND on the producer's device and a RECV on the
               consumer's for every dependency that crosses devices, and a
               HANDOFF right before the consumer where producer and
               consumer stage share a device (the turn of a V). It carries
               all a runtime needs: stage_device, copies (routes, through
               pp_stage_route), recompute; op.sends marks the outputs that
               wait in a send buffer, op.consumer the stage data goes to.
   order       both ends of a transfer get one key, the consumer's start:
               the RECV sits right before its consumer, the SEND after its
               producer; a device's ops are sorted by (key, payload, stage,
               microbatch) and those of one key form a group. Under NCCL's
               rules (a send may block until its receive is posted, ops of
               a group progress together) this cannot deadlock: the stuck
               op with the smallest key always finds its partner posted.
   groups      consecutive SEND/RECV ops of a device with one group id are
               posted together; pp_program_group_end is the rule.
   pairing     the k-th SEND a->b meets the k-th RECV on b from a;
               pp_program_pair is the rule. The deadlock checker and every
               runtime (ref/cpu_pipeline.h, pp_cuda.cu) read these two.
   slots       a (stage, microbatch) takes the lowest free slot of its device
               at its RECV, HANDOFF or F and frees it after its W (or BW); slots[d]
               equals the schedule's peak in chunk activations
               (peak_memory / stage_memory). 1f1b-r: a slot holds the stage
               input its BW recomputes from, so slots count stage inputs
               even when recompute_input = 0 makes peak_memory 0.
   send buffers an output waits in a send buffer from its producer's end to
               its SEND or HANDOFF; send_buffers[d] counts the most at once.

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
   Entry checks: every call that takes a schedule, block or program checks
   first every count, index and time it will read (pp__sched_shape,
   pp__block_shape, pp__program_shape) and refuses a corrupted object with
   a status and a message; the void printers write one line saying why
   (ascii, program) or nothing (JSON). pp_reorder and pp_sched_lower take
   only a schedule that pp_sched_validate accepts. The arrays must have the
   lengths the header's counts give them, as the library allocates them.

DOES NOT
   run anything on GPUs (see pp_cuda.h), write or read other tools'
   formats (PyTorch CSV, SVG, Chrome trace: pp_sched_io.h). Memory in
   bytes (pp_plan.h) is an estimate, not a measurement. The lowering places
   communication but does not move data. Transient working memory of a pass
   (e.g. the activations 1F1B-R recomputes inside its BW) is not counted.

LIMITS (checked by pp_sched_build before any work; the table with the
   reasons sits above pp__req_resolve)
   devices d         1 .. 65536 (V-shape schedules: >= 2)
   chunks v          0 (the schedule's own) or what it takes; 4 d v (3v+4)
                     <= INT_MAX/4 (a building block's cells are ints)
   microbatches n    >= 1 with 3 d v n <= INT_MAX/4 passes (gpipe: n <=
                     INT_MAX/64)
   times             finite, F > 0, B > 0, W >= 0, comm >= 0, each <= 1e15;
                     F = B = W = 0 is the default, unit times 1, 1, 1 (a
                     zero F or B with anything else nonzero is an error);
                     stage_times the same per stage. The total work (every
                     pass's time plus comm per pass) <= 1e15, and the
                     shortest F and B (BW where B and W are not split) >=
                     1e-8 (1 + total work): the clock's tolerance is 1e-9
                     relative, and an F or B stays at least ten tolerances
                     long (W and comm may be 0; one below the tolerance acts
                     as 0). At equal times this caps a schedule near 1e8
                     passes.
   recompute_input   0, or 1e-6 .. 1
   mem_limit         0 (default d), or 1e-6 .. ; above max(n, 3d), where a
                     higher limit builds the same schedule (no device holds
                     more than n units; the searches' candidates stop
                     changing at 3d), clamped to it: s->mem_limit is the
                     limit used, s->mem_limit_asked the one asked for, and
                     the ascii and JSON output say so.
   searches          their work grows faster than d, so they take fewer
                     devices: v-auto d <= 128, zb-auto, zb-1p, zb-2p d <=
                     384, interleaved-1f1b-m d <= 256 (its block choice
                     reorders about log2(d/16) + 3 candidates at 2d
                     microbatches, 8d^2 passes each, whatever n is); each
                     within about a minute of one core at its limit (make
                     bench-limits prints every corner). Above it:
                     PP_ERR_OVERFLOW naming
                     the limit and the fixed schedules of the same
                     placement (pp__devices_most).
   reorder           at most 2^22 passes at once (the whole schedule when
                     n <= 2d + 6, else 2d + 4 microbatches of it; the
                     published orders are never reordered): above,
                     PP_ERR_OVERFLOW with the n that fits, or no_reorder
                     (PP__REORDER_MOST).
   progress          pp_config.progress is called during the searches and
                     between a reordered build's long steps; returning
                     nonzero stops the build (PP_ERR_CANCELLED).

RULINGS (where the papers are ambiguous, what this file does; the comment
   above each named function has the reason, DESIGN.md the measurements)
   - V blocks: chunk offsets d0/d1 as Section 3.1 balances them, the smallest
     collision-free turns, W in the first free cell; Table 8 (pp__v_block).
   - eager 1F1B, ZB-H1/H2, GPipe: the 1F1B block with F offsets 4, with B/W
     split, with the F->B turn 3n-2 (pp__linear_block).
   - interleaved-1f1b: Megatron's order, n % d == 0 (pp__interleaved_official);
     -u: uniform block, any n, 2d-1 units at v = 2 (pp__interleaved_uniform_block).
   - zb-min (Fig. 16b, lost): two microbatches per block at T = 6, about
     2(d+1)/3 units (pp__zbmin_block).
   - interleaved-1f1b-m (Fig. 16c, lost): v = 2, T = 6, Megatron's makespan
     at n >= 2d without comm, about d+1 units (pp__interleaved_lowmem_block).
   - Published orders (PP_SCHED_LIST's published column) are never
     reordered: gpipe, 1f1b, eager-1f1b, interleaved-1f1b, 1f1b-r, ...
   - dualpipe: two routes (copies = 2) on V placement, DualPipeV folded to
     d/2 (pp__dualpipe); pp_sched_io.h refuses its CSV (PyTorch's has one route).
   - F&B pairs: compute keeps fb_share of the GPU while the pair's all-to-all
     runs and all of it after, max(x - share a, a) (pp_fb_pair_time).
   - Reorder: no device above its squeezed peak or Eq. 1 bound, the peak
     never rises; every step of every variant is a candidate (pp__reorder).
   - Local search: swaps on the critical path, then moves into the 2 nearest
     idle gaps, within the caps, on a budget (pp__local_search).
   - Guarantee: never longer than its own unit-time order, nor than a fixed
     schedule of its family whose memory caps fit (pp__guarantee).
   - Work that could only shorten a schedule stops at the order bound; the
     same schedules (pp__order_bound, pp__may_beat, pp__small_n).
   - v-auto: our V blocks (Eq. 3's K split) and the authors' cell grid,
     re-derived; default limit d (pp__v_auto, pp__vgrid_search).
   - zb-auto: sequential blocks with B/W split, mem_limit >= d, zb.py's greedy
     order competes (pp__zb_auto, pp__zb_list); zb-1p/2p: limits d and 2d.
   - v-zb: V-ZB's block against a list-built order within its Eq. 1 bound;
     the shorter wins, the block at a tie (pp__vzb_list).
   - v-auto and v-zb at d <= 8, n <= 2d (shake_d): a deterministic
     iterated local search last (at d <= 6, n <= 3d/2 a second walk that moves pairs
     of passes), kept only when shorter, within v-auto's
     limit or v-zb's caps (pp__v_shake); v-auto also takes the
     searched v-zb where that fits its limit and is shorter.
   - Lower bounds: work, path, Appendix E.2 derived for V placement and any
     times, its steps on every device of any placement with one route, two
     windows where a device's F passes exceed k (pp_sched_bounds).
   - Bubble growth is measured at 3d and 6d microbatches, not derived
     (pp_sched_bubble_growth).

RECENT REVISION HISTORY (all versions, dated: CHANGELOG.md)
   0.8.0  Appendix E.2's bound on every placement with one route; one reorder memo per build
   0.7.0  pp_fb_pair_time; fb_share is the compute's share while the all-to-all runs; faster searches
   0.6.0  pp_sched_io.h; public dependency, group and pairing rules; v-auto's cool-down candidates
   0.5.2  the local search also moves passes into idle gaps on the critical path
   0.5.1  searches stop at the order bound (same schedules, faster)
*/
#ifndef PP_SCHED_H
#define PP_SCHED_H

#define PP_SCHED_VERSION_MAJOR 0
#define PP_SCHED_VERSION_MINOR 8
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
#define PP_TIME_MAX 1e15   /* the largest pass time, comm and total work of a schedule (LIMITS) */

/* One status enum; names and strings from one table. */
#define PP_STATUS_LIST(X)                                                        \
    X(PP_OK, "ok")                                                               \
    X(PP_ERR_INVALID_ARG, "invalid argument")                                    \
    X(PP_ERR_UNKNOWN_SCHEDULE, "unknown schedule")                               \
    X(PP_ERR_OUT_OF_MEMORY, "out of memory")                                     \
    X(PP_ERR_OVERFLOW, "sizes too large")                                        \
    X(PP_ERR_COLLISION, "building block collides with its repeat")               \
    X(PP_ERR_DEADLOCK, "pass order cannot run (dependency cycle)")               \
    X(PP_ERR_INVALID_SCHEDULE, "schedule breaks a rule")                         \
    X(PP_ERR_CANCELLED, "stopped by the progress callback")

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
    int no_guarantee;            /* 1 = skip the guarantee's comparison builds
                                    (DESIGN.md): for callers that build many
                                    schedules to rank them (pp_plan) */
    double mem_limit;            /* v-auto, zb-auto: activation memory limit per device,
                                    in units; 0 = d (1F1B's peak) */
    pp_allocator allocator;      /* zero = malloc/free */
    /* dualpipe, dualpipe-v: F&B overlap (DeepSeek-V3 report, Sec. 3.2.1; see
       pp__fb_time). 0 = the forward and backward of a pair run in sequence */
    int fb_overlap;              /* 1: a paired F and full backward run as one pass of time t_FB */
    double fb_time;              /* > 0: t_FB of every pair, seconds; 0 = from fb_comm, fb_share */
    const pp_times *fb_comm;     /* optional [S]: the part of stage s's F (.f), B (.b), W (.w) time
                                    that is communication the other pass's compute can hide */
    double fb_share;             /* the share of the GPU a pair's compute keeps while its
                                    all-to-all runs (the SMs communication leaves it; all
                                    of them after): t_FB = max(F + B + W - fb_share a, a),
                                    a from fb_comm (pp_fb_pair_time); 0 = 1, full overlap */
    int (*progress)(void *user, const char *what, double done);
                                 /* optional: called now and then during long
                                    work (the adaptive searches, interleaved-
                                    1f1b-m's block choice) with what it is
                                    doing and done in 0..1 of that step; a
                                    nonzero return stops the build with
                                    PP_ERR_CANCELLED (Ctrl-C). NULL = none */
    void *progress_user;         /* passed to progress */
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
    int copies;              /* model copies, each its own route (routes, CONCEPTS): 1 (0 reads as 1): every
                                microbatch runs stages 0..S-1; 2 (dualpipe): microbatch j < n/2 runs
                                stages 0..S/2-1, j >= n/2 runs S/2..S-1 */
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
    int on_grid;             /* 1 straight after pp_repeat: start/end are block cells
                                (F, B, W 1 cell); pp_squeeze applies the real times */
    double mem_limit;        /* the limit an adaptive schedule was built under; 0 = none */
    double mem_limit_asked;  /* the config's mem_limit when it was above the largest useful limit and
                                mem_limit was clamped to that (LIMITS); 0 = not clamped */
    int recompute;           /* 1: BW recomputes F from the kept stage input (1f1b-r) */
    int bubble_growth;       /* -1 not computed, 0 O(p), 1 O(n): see pp_sched_bubble_growth */
    pp_allocator allocator;
    int fb_pairs;            /* dualpipe with fb_overlap: F&B pairs run as one pass (their F, B, W
                                share the pair's interval in that order, so their lengths are
                                shares of t_FB, not stage times); 0: none. pp_squeeze times every
                                pass alone again */
} pp_schedule;

/* Lower bounds on the makespan (pp_sched_bounds). */
typedef struct pp_bounds {
    double work;     /* the busiest device's total pass time */
    double path;     /* one microbatch's dependency chain: all F, then all B (or BW), with comm */
    double appendix; /* Appendix E.2 generalised (derivation above pp_sched_bounds): any
                        placement with one route, any F, B, W, comm. A device's work plus
                        its idle before its first B can start (A) and after its last F
                        (C): busy + (A - k f) + (C - k (b + w)), k = peak in chunk
                        activations, f, b, w one chunk's times; only the larger idle term
                        when its F passes are at most k; the largest over the devices. V
                        placement, equal times t per chunk, comm 0, 2n > k: (6n + 6d -
                        3k - 1) t, the paper's figure; one stage per device: 1F1B's
                        makespan at its peak. -1 with two routes (dualpipe) or no memory */
    double best;     /* the largest of the three */
} pp_bounds;

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

/* The built-in schedules: the one table of their facts. Everything in and
   around the library (the builder, the chunks check, the reorder rule, the
   planner, the CLI, the runtimes, the tests) reads a fact here, never a
   schedule's name. One row per schedule:
     X(id, name, placement, chunks, any_chunks, split, recompute, copies, limit, published,
       steady, search_d, max_d, fb_pairs, shake_d, fixed, block, builder, description)
   placement  PP_PLACE_<placement>
   chunks     v when pp_config.chunks is 0; any_chunks 1: any v >= 2 is accepted
   split      1: B and W are separate passes; 0: one BW pass
   recompute  1: BW redoes F first and only the stage input is kept (1F1B-R)
   copies     model copies, each its own route (2: dualpipe; see pp_stage_route)
   limit      0: a fixed construction; -1: adaptive, searched under
              pp_config.mem_limit (0 = d); k > 0: adaptive at the fixed limit k x d
   published  1: built in its published order and never reordered (Appendix C)
   steady     k > 0: from k x d microbatches on, each further microbatch adds
              the busiest device's work and about no memory, so the planner
              builds min(n, k x d) and extrapolates (1: the 1F1B-like and V
              schedules, where at unit times that equals the full build,
              checked for d = 8, 20, n = 160; 2: the rest, whose warm-up runs
              longer); 0: memory grows with n, built at n
   search_d   its build is a search: the most devices at which it takes
              about 0.1 s (unit times, n = 2d), which the planner keeps to;
              0: not a search
   max_d      the most devices it builds at, its search growing faster than
              d (about a minute of one core at its costliest n: make
              bench-limits); 0: the library's limit, 65536
   fb_pairs   1: pp_config.fb_overlap runs its F&B pairs as one pass
              (DualPipe); 0: it has none and refuses fb_overlap
   shake_d    the most devices at which its build ends, at n <= 2d, with
              the iterated local search (pp__v_shake: the orders the solver
              finds at small sizes); 0: never
   fixed      the fixed schedules its adaptive search starts from and
              returns where they win (pp__<fixed>_fixed); none: no search
   block      pp__block_of_<block> in the implementation: the building block
              it repeats over n; none: it is not built from a block
   builder    pp__build_<builder>: every builder returns the schedule, from
              the row's block where it has one (from_block: the block
              repeated, squeezed and reordered). The memory caps of a row
              with a block are its block's, known before the builder runs */
#define PP_SCHED_LIST(X)                                                                                                                 \
    X(PP_SCHED_GPIPE, "gpipe", SEQUENTIAL, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, none, gpipe, from_block,                                  \
      "all forwards, then all backwards; memory grows with n (GPipe)")                                                                   \
    X(PP_SCHED_1F1B, "1f1b", SEQUENTIAL, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, none, 1f1b, from_block,                                     \
      "one forward, one backward; device 0 holds d microbatches (DAPPLE/PipeDream-flush)")                                               \
    X(PP_SCHED_EAGER_1F1B, "eager-1f1b", SEQUENTIAL, 1, 0, 0, 0, 1, 0, 1, 2, 0, 0, 0, 0, none, eager_1f1b, from_block,                   \
      "1F1B with wider forward offsets: 2(d-i)-1 warm-up forwards, more memory")                                                         \
    X(PP_SCHED_INTERLEAVED_1F1B, "interleaved-1f1b", LOOPED, 2, 1, 0, 0, 1, 0, 1, 2, 0, 0, 0, 0, none, none, interleaved,                \
      "Megatron's interleaved 1F1B, v chunks looped over devices; needs n % d == 0")                                                     \
    X(PP_SCHED_INTERLEAVED_1F1B_U, "interleaved-1f1b-u", LOOPED, 2, 1, 0, 0, 1, 0, 0, 2, 0, 0, 0, 0, none, interleaved_u, from_block,    \
      "interleaved 1F1B repeated at a uniform interval (Appendix H): Megatron's bubble, any n, more memory")                             \
    X(PP_SCHED_ZB_H1, "zb-h1", SEQUENTIAL, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, none, zb_h1, from_block,                                  \
      "zero bubble H1: 1F1B's memory, B/W split, about 1/3 of 1F1B's bubble")                                                            \
    X(PP_SCHED_ZB_H2, "zb-h2", SEQUENTIAL, 1, 0, 1, 0, 1, 0, 0, 2, 0, 0, 0, 0, none, zb_h2, from_block,                                  \
      "zero bubble H2: eager 1F1B's block with B/W split, near-zero bubble, 2x memory")                                                  \
    X(PP_SCHED_1F1B_V, "1f1b-v", VSHAPE, 2, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, none, 1f1b_v, from_block,                                   \
      "1F1B's block on V-shape placement, no B/W split (Appendix I)")                                                                    \
    X(PP_SCHED_V_MIN, "v-min", VSHAPE, 2, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, none, v_min, from_block,                                      \
      "V-shape, minimal offsets: about 1/3 of 1F1B's memory (Section 3)")                                                                \
    X(PP_SCHED_V_HALF, "v-half", VSHAPE, 2, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, none, v_half, from_block,                                   \
      "V-shape: about 1/2 of 1F1B's memory, less bubble than 1F1B (Section 3)")                                                          \
    X(PP_SCHED_V_ZB, "v-zb", VSHAPE, 2, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 8, none, v_zb, v_zb,                                               \
      "V-shape zero bubble at 1F1B's memory (Section 3)")                                                                                \
    X(PP_SCHED_1F1B_R, "1f1b-r", SEQUENTIAL, 1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, none, 1f1b_r, from_block,                               \
      "1F1B with full recomputation: backward redoes F, keeps only stage inputs")                                                        \
    X(PP_SCHED_V_AUTO, "v-auto", VSHAPE, 2, 0, 1, 0, 1, -1, 0, 2, 8, 128, 0, 8, vauto, none, v_auto,                                     \
      "adaptive V-shape: least makespan within mem_limit (Appendix A; default limit d)")                                                 \
    X(PP_SCHED_ZB_AUTO, "zb-auto", SEQUENTIAL, 1, 0, 1, 0, 1, -1, 0, 2, 8, 384, 0, 0, zbauto, none, zb_auto,                             \
      "adaptive zero bubble, one stage per device: least makespan within mem_limit")                                                     \
    X(PP_SCHED_ZB_1P, "zb-1p", SEQUENTIAL, 1, 0, 1, 0, 1, 1, 0, 2, 8, 384, 0, 0, zbauto, none, zb_auto,                                  \
      "zb-auto at 1F1B's memory (limit d)")                                                                                              \
    X(PP_SCHED_ZB_2P, "zb-2p", SEQUENTIAL, 1, 0, 1, 0, 1, 2, 0, 2, 8, 384, 0, 0, zbauto, none, zb_auto,                                  \
      "zb-auto at twice 1F1B's memory (limit 2d)")                                                                                       \
    X(PP_SCHED_LOOPED_BFS, "looped-bfs", LOOPED, 2, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, none, none, looped_bfs,                             \
      "looped placement, breadth-first: every forward of a chunk before the next (PyTorch's LoopedBFS)")                                 \
    X(PP_SCHED_DUALPIPE_V, "dualpipe-v", VSHAPE, 2, 0, 1, 0, 1, 0, 1, 2, 0, 0, 1, 0, none, none, dualpipe_v,                             \
      "DeepSeek's DualPipeV: V placement, F/B pairs (run in sequence here); needs n >= 2d")                                              \
    X(PP_SCHED_DUALPIPE, "dualpipe", VSHAPE, 2, 0, 1, 0, 2, 0, 1, 2, 0, 0, 1, 0, none, none, dualpipe,                                   \
      "DeepSeek's DualPipe: two model copies fed from both ends, half the microbatches each; even d, even n >= 2d")                      \
    X(PP_SCHED_ZB_MIN, "zb-min", SEQUENTIAL, 1, 0, 1, 0, 1, 0, 0, 2, 0, 0, 0, 0, none, zb_min, from_block,                               \
      "zero bubble block with two microbatches per block: about 2/3 of 1F1B's memory (Appendix I, Fig. 16b)")                            \
    X(PP_SCHED_INTERLEAVED_1F1B_M, "interleaved-1f1b-m", LOOPED, 2, 0, 0, 0, 1, 0, 0, 2, 40, 256, 0, 0, none, interleaved_m, from_block, \
      "interleaved 1F1B's makespan (n >= 2d, no comm) at less memory, any n; v = 2 (Appendix I, Fig. 16c)")

typedef enum pp_sched_id {
#define PP__SCHED_ENUM(id, name, place, chunks, any_chunks, split, recompute, copies, limit, published, steady, \
                       search_d, max_d, fb_pairs, shake_d, fixed, block, builder, desc)                                   \
    id,
    PP_SCHED_LIST(PP__SCHED_ENUM)
#undef PP__SCHED_ENUM
    PP_SCHED_COUNT
} pp_sched_id;

/* One row of PP_SCHED_LIST (pp_sched_info_at, pp_sched_find). */
typedef struct pp_sched_info {
    const char *name;
    const char *description;
    pp_sched_id id;
    pp_placement placement;
    int chunks;         /* v when pp_config.chunks is 0 */
    int any_chunks;     /* 1: any chunks >= 2 (looped placement); 0: exactly chunks */
    int split_backward; /* 1: F, B, W passes; 0: F, BW */
    int recompute;      /* 1: BW recomputes F from the kept stage input */
    int copies;         /* model copies (routes): 1, or 2 for dualpipe */
    int adaptive;       /* 1: searched under a memory limit (Appendix A) */
    int takes_limit;    /* 1: reads pp_config.mem_limit (0 = d) */
    double fixed_limit; /* adaptive at a fixed limit of fixed_limit x d units; 0 = none */
    int published;      /* 1: built in its published order, never reordered */
    int steady;         /* k: from k x d microbatches on, each adds the same work and
                           about no memory; 0: memory grows with n */
    int search_devices; /* its build is a search quick (about 0.1 s) up to this many
                           devices; 0: not a search */
    int max_devices;    /* the most devices it builds at; 0: the library's limit */
    int fb_pairs;       /* 1: has F&B pairs that pp_config.fb_overlap runs as one */
} pp_sched_info;

PP_SCHED_API const char *pp_status_string(pp_status st);
/* 1 when st means the caller's input must change (invalid argument, unknown
   schedule, sizes too large), 0 otherwise: the tools exit 2 for these and 1
   for a failed run. */
PP_SCHED_API int pp_status_bad_input(pp_status st);
PP_SCHED_API const char *pp_kind_name(pp_kind k);
PP_SCHED_API const char *pp_placement_name(pp_placement p);
/* The first and last stage of the route stage lies on: 0 and stages-1, or
   with copies == 2 (dualpipe) the stages of its model copy, [0, S/2) or
   [S/2, S). F of a route's first stage has no input from a previous stage;
   B of its last stage starts from the loss. */
PP_SCHED_API void pp_stage_route(int stages, int copies, int stage, int *first, int *last);
/* THE dependency rule (deps in CONCEPTS; one home, the library's own
   passes derive from it too): the one pass that pass (kind, stage,
   microbatch) waits for, in a schedule of that many stages, microbatches
   and copies (routes), B and W split or not. 1: *in_kind, *in_stage get the
   input (of the same microbatch); 0: the pass has no input (F of a route's
   first stage); -1: an argument out of range (nothing written). */
PP_SCHED_API int pp_pass_input(int stages, int microbatches, int copies, int split_backward, pp_kind kind, int stage,
                               int microbatch, pp_kind *in_kind, int *in_stage);

PP_SCHED_API int pp_sched_count(void);                        /* PP_SCHED_COUNT */
PP_SCHED_API const pp_sched_info *pp_sched_info_at(int i);     /* i = a pp_sched_id; NULL out of range */
/* The row of a built-in name (case, '-' and '_' ignored; NULL = "1f1b"), or
   of a built schedule's s->name; NULL when it names no built-in schedule. */
PP_SCHED_API const pp_sched_info *pp_sched_find(const char *name);

PP_SCHED_API pp_status pp_sched_build(const pp_config *cfg, pp_schedule **out, char *err);
PP_SCHED_API void pp_sched_free(pp_schedule *s);
PP_SCHED_API pp_status pp_sched_validate(const pp_schedule *s, char *err);
/* The entry check every call that reads a schedule makes first: counts in
   range and consistent, arrays present, every index a pass holds inside
   them; times 1: also every number a picture lays out finite and every
   pass inside [0, makespan]. Less than pp_sched_validate (no rules): what a
   reader of s's arrays needs. caller starts the message (NULL: this
   function's name). PP_ERR_INVALID_SCHEDULE or PP_ERR_INVALID_ARG (NULL). */
PP_SCHED_API pp_status pp_sched_check_shape(const pp_schedule *s, const char *caller, int times, char *err);
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

PP_SCHED_API pp_status pp_sched_bounds(const pp_schedule *s, pp_bounds *out);
PP_SCHED_API pp_status pp_sched_bubble_growth(const pp_config *cfg, int *grows, char *err);
PP_SCHED_API int pp_vhalf_o_p(pp_times t);
/* The F&B pair rule (pp_config.fb_share): x seconds in sequence, a of them
   all-to-all, share = pp_config.fb_share (0 = 1) -> t_FB */
PP_SCHED_API double pp_fb_pair_time(double x, double a, double share);
/* ---- lowering: one program per device (see LOWERING in the docs block) ---- */

/* HANDOFF: the output of a stage becomes the input of the next stage on its
   route on the same device (the turn of a V): a SEND and its RECV in one. */
typedef enum pp_op_type { PP_OP_COMPUTE = 0, PP_OP_SEND = 1, PP_OP_RECV = 2, PP_OP_HANDOFF = 3 } pp_op_type;

/* What a SEND/RECV/HANDOFF carries: the output of F (to the next stage) or
   of B/BW (the gradient for the previous stage's output). */
typedef enum pp_payload { PP_ACTIVATION = 0, PP_GRADIENT = 1 } pp_payload;

typedef struct pp_op {
    pp_op_type type;
    pp_kind kind;       /* COMPUTE: F, B, W or BW; ignored otherwise */
    int stage;          /* COMPUTE: the pass's stage; SEND/RECV/HANDOFF: the stage that PRODUCED the data */
    int microbatch;
    int peer;           /* SEND: destination device; RECV: source device; HANDOFF: this device;
                           COMPUTE: -1 */
    pp_payload what;    /* SEND/RECV/HANDOFF only */
    int slot;           /* COMPUTE, RECV and HANDOFF: activation slot of the (stage, microbatch) the
                           op works on on this device (RECV, HANDOFF: the consumer's); SEND: -1 */
    int group;          /* consecutive SEND/RECV ops of one device with the same group >= 0 are
                           posted together (ncclGroupStart/End); -1: the op is a group of its own */
    double time;        /* the point of the timeline the op belongs to (sorting key) */
    int consumer;       /* SEND/RECV/HANDOFF: the stage that consumes the data; COMPUTE: -1 */
    int sends;          /* COMPUTE: 1 when a SEND or HANDOFF of its output follows on this
                           device (the output waits in a send buffer until then) */
} pp_op;

/* Per-device programs. Transparent: tests and other tools may fill one by
   hand (allocator, slots and send_buffers may then be zero/NULL). */
typedef struct pp_program {
    char name[32];         /* the schedule's */
    int devices, stages, microbatches;
    int copies;            /* as pp_schedule.copies: 2 = two routes; any other value = one
                              (pp_stage_route gives a stage's route) */
    int recompute;         /* as pp_schedule.recompute: BW recomputes F from the kept input */
    int num_ops;
    pp_op *ops;            /* device-major, each device's ops in program order */
    int *device_start;     /* [d+1]: ops of device i are [device_start[i], device_start[i+1]) */
    int *stage_device;     /* [S]: the device each stage runs on (NULL in a hand-built program:
                              the runtimes need it, the checker does not) */
    int *slots;            /* [d]: activation slots device i needs (= most (stage, mb) live at once) */
    int *send_buffers;     /* [d]: most outputs waiting for their SEND at once on device i */
    pp_allocator allocator;
} pp_program;

/* Lowers a valid schedule (pp_sched_validate is run first); *out is freed
   with pp_program_free. */
PP_SCHED_API pp_status pp_sched_lower(const pp_schedule *s, pp_program **out, char *err);
PP_SCHED_API void pp_program_free(pp_program *p);
/* PP_OK when every device reaches its end; PP_ERR_DEADLOCK when some cannot
   (err names the op each stuck device waits on, stuck[d] (may be NULL) gets
   its index into p->ops, -1 for a device that finished);
   PP_ERR_INVALID_SCHEDULE when the k-th send a->b and the k-th receive on b
   from a carry different data, or a compute or send runs before its data is
   on the device; PP_ERR_INVALID_ARG for out-of-range fields. */
PP_SCHED_API pp_status pp_sched_check_deadlock(const pp_program *p, int *stuck, char *err);
/* The two rules every runtime of a program follows (LOWERING), so that
   none writes its own. Groups: pp_program_group_end gives the end
   (exclusive) of the group that starts at op i of device: i + 1 for a
   COMPUTE, a HANDOFF or a SEND/RECV with group -1; otherwise past the SEND
   and RECV ops right after i with i's group id. A runtime posts ops
   [i, end) together (ncclGroupStart/End). Pairing: pp_program_pair fills
   partner[num_ops] with the op each SEND and RECV meets, the k-th SEND
   a->b with the k-th RECV on b from a (NCCL matches in order), and -1 for
   other ops and a SEND or RECV whose channel has fewer ops on the other
   side. PP_ERR_INVALID_SCHEDULE when two that meet carry different data (a
   channel ordered differently on its two sides), PP_ERR_INVALID_ARG when
   p fails the entry check; it allocates through p->allocator. */
PP_SCHED_API int pp_program_group_end(const pp_program *p, int device, int i);
PP_SCHED_API pp_status pp_program_pair(const pp_program *p, int *partner, char *err);
PP_SCHED_API const char *pp_op_type_name(pp_op_type t);

#ifndef PP_SCHED_NO_STDIO
PP_SCHED_API void pp_sched_print_ascii(FILE *f, const pp_schedule *s, int color);
PP_SCHED_API void pp_sched_print_json(FILE *f, const pp_schedule *s);
PP_SCHED_API void pp_program_print(FILE *f, const pp_program *p);
#endif

#ifdef __cplusplus
}
#endif
#endif /* PP_SCHED_H */

/* ======================================================================== */
/*                              IMPLEMENTATION                               */
/* ======================================================================== */
#ifdef PP_SCHED_IMPLEMENTATION
#ifndef PP__SCHED_IMPLEMENTATION_INCLUDED
#define PP__SCHED_IMPLEMENTATION_INCLUDED

#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <limits.h>
#include <float.h>
#include <stdio.h> /* vsnprintf for error messages, even with PP_SCHED_NO_STDIO */

#ifndef PP_ASSERT
#include <assert.h>
#define PP_ASSERT(x) assert(x)
#endif

#ifdef PP_SCHED_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define PP__DEF static __attribute__((unused))
#else
#define PP__DEF static
#endif
#else
#define PP__DEF
#endif

#define PP__EPS 1e-9

/* ---- small helpers ------------------------------------------------------ */

static void pp__err(char *err, const char *fmt, ...) {
    va_list ap;
    if (!err) return;
    va_start(ap, fmt);
    vsnprintf(err, PP_ERR_LEN, fmt, ap);
    va_end(ap);
}

static int pp__finite(double x) { return x == x && (x - x) == 0.0; }
static double pp__max(double a, double b) { return a > b ? a : b; }
static double pp__abs(double a) { return a < 0 ? -a : a; }

static void *pp__default_alloc(size_t n, void *u) { (void)u; return malloc(n); }
static void pp__default_free(void *p, void *u) { (void)u; free(p); }

static pp_allocator pp__allocator(const pp_allocator *a) {
    pp_allocator r;
    if (a && a->alloc && a->free) return *a;
    r.alloc = pp__default_alloc;
    r.free = pp__default_free;
    r.user = NULL;
    return r;
}

static void *pp__malloc(const pp_allocator *a, size_t n) { return a->alloc(n ? n : 1, a->user); }
static void pp__mfree(const pp_allocator *a, void *p) { if (p) a->free(p, a->user); }

/* size of count elements of size bytes, 0 on overflow */
static size_t pp__size(size_t count, size_t size) {
    if (size && count > ((size_t)-1) / size) return 0;
    return count * size;
}

static size_t pp__align8(size_t x) { return (x + 7u) & ~(size_t)7u; }

/* Room for one more item (of size bytes) in *list, which holds count of
   them in room for *cap: the list doubles (from 256) when full (the
   adaptive searches' lists of blocks; out of memory: *list unchanged). */
static pp_status pp__grow(const pp_allocator *al, void **list, int count, int *cap, size_t size, char *err) {
    void *x;
    if (count < *cap) return PP_OK;
    x = pp__malloc(al, pp__size((size_t)(*cap ? 2 * *cap : 256), size));
    if (!x) { pp__err(err, "out of memory in the adaptive search"); return PP_ERR_OUT_OF_MEMORY; }
    if (count) memcpy(x, *list, (size_t)count * size);
    pp__mfree(al, *list);
    *list = x;
    *cap = *cap ? 2 * *cap : 256;
    return PP_OK;
}

PP__DEF const char *pp_status_string(pp_status st) {
    static const char *names[] = {
#define PP__STR(name, str) str,
        PP_STATUS_LIST(PP__STR)
#undef PP__STR
    };
    if ((int)st < 0 || (int)st >= (int)PP_STATUS_COUNT) return "unknown status";
    return names[st];
}

PP__DEF int pp_status_bad_input(pp_status st) {
    return st == PP_ERR_INVALID_ARG || st == PP_ERR_UNKNOWN_SCHEDULE || st == PP_ERR_OVERFLOW;
}

PP__DEF const char *pp_kind_name(pp_kind k) {
    switch (k) {
    case PP_F: return "F";
    case PP_B: return "B";
    case PP_W: return "W";
    case PP_BW: return "BW";
    }
    return "?";
}

PP__DEF const char *pp_placement_name(pp_placement p) {
    switch (p) {
    case PP_PLACE_SEQUENTIAL: return "sequential";
    case PP_PLACE_LOOPED: return "looped";
    case PP_PLACE_VSHAPE: return "v-shape";
    }
    return "?";
}

static int pp__place(pp_placement p, int d, int s) {
    if (p == PP_PLACE_VSHAPE) return s < d ? s : 2 * d - 1 - s;
    return s % d;
}

/* Routes (routes in CONCEPTS): the first and last stage microbatch j runs
   through. copies == 2: j < n/2 runs stages [0, S/2), the others [S/2, S). */
static int pp__route_first(int S, int n, int copies, int j) { return copies == 2 && j >= n / 2 ? S / 2 : 0; }
static int pp__route_last(int S, int n, int copies, int j) { return copies == 2 && j < n / 2 ? S / 2 - 1 : S - 1; }
static int pp__copies(int copies) { return copies == 2 ? 2 : 1; }

PP__DEF void pp_stage_route(int stages, int copies, int stage, int *first, int *last) {
    int f = copies == 2 && stage >= stages / 2 ? stages / 2 : 0;
    if (stages < 1) { /* no stages: an empty route, 0..-1 */
        if (first) *first = 0;
        if (last) *last = -1;
        return;
    }
    if (first) *first = f;
    if (last) *last = f + (copies == 2 ? stages / 2 : stages) - 1;
}

/* key of pass (kind, stage, microbatch) in [0, 4*S*n) */
static int pp__key(int S, int n, pp_kind k, int s, int j) { return ((int)k * S + s) * n + j; }

/* ---- the schedule object: one allocation -------------------------------- */

static pp_schedule *pp__sched_alloc(const pp_allocator *al, int d, int v, int S, int n, int split, char *err,
                                    pp_status *st) {
    size_t P, off_passes, off_times, off_mem, off_peak, off_bound, off_dstart, off_sdev, total;
    pp_schedule *s;
    *st = PP_OK;
    if ((long long)S * n > INT_MAX / 12 || (long long)S * 4 > INT_MAX) { /* 3 S n <= INT_MAX / 4 */
        pp__err(err, "%d stages x %d microbatches is too many passes for an int index", S, n);
        *st = PP_ERR_OVERFLOW;
        return NULL;
    }
    P = (size_t)S * (size_t)n * (split ? 3u : 2u);
    off_passes = pp__align8(sizeof(pp_schedule));
    off_times = pp__align8(off_passes + pp__size(P, sizeof(pp_pass)));
    off_mem = off_times + pp__size((size_t)S * 4u, sizeof(double));
    off_peak = off_mem + pp__size((size_t)S, sizeof(double));
    off_bound = off_peak + pp__size((size_t)d, sizeof(double));
    off_dstart = off_bound + pp__size((size_t)d, sizeof(double));
    off_sdev = off_dstart + pp__size((size_t)d + 1u, sizeof(int));
    total = off_sdev + pp__size((size_t)S, sizeof(int));
    s = (pp_schedule *)pp__malloc(al, total);
    if (!s) {
        pp__err(err, "out of memory allocating a schedule of %lu bytes", (unsigned long)total);
        *st = PP_ERR_OUT_OF_MEMORY;
        return NULL;
    }
    memset(s, 0, total);
    s->devices = d;
    s->chunks = v;
    s->stages = S;
    s->microbatches = n;
    s->split_backward = split;
    s->num_passes = (int)P;
    s->passes = (pp_pass *)((char *)s + off_passes);
    s->stage_time = (double *)((char *)s + off_times);
    s->stage_memory = (double *)((char *)s + off_mem);
    s->peak_memory = (double *)((char *)s + off_peak);
    s->peak_bound = (double *)((char *)s + off_bound);
    s->device_start = (int *)((char *)s + off_dstart);
    s->stage_device = (int *)((char *)s + off_sdev);
    s->bubble_growth = -1;
    s->copies = 1;
    s->allocator = *al;
    return s;
}

PP__DEF void pp_sched_free(pp_schedule *s) {
    pp_allocator a;
    if (!s) return;
    a = s->allocator;
    pp__mfree(&a, s);
}

static double pp__dur(const pp_schedule *s, const pp_pass *p) { return s->stage_time[p->stage * 4 + (int)p->kind]; }

/* Check times (LIMITS); all-zero f, b, w means unit times (comm stays as
   given). Each time is finite and at most PP_TIME_MAX. */
static pp_status pp__resolve_times(const pp_times *in, pp_times *out, char *err) {
    pp_times t = *in;
    if (t.f == 0 && t.b == 0 && t.w == 0) { t.f = 1; t.b = 1; t.w = 1; }
    if (!pp__finite(t.f) || !pp__finite(t.b) || !pp__finite(t.w) || !pp__finite(t.comm) || t.f > PP_TIME_MAX ||
        t.b > PP_TIME_MAX || t.w > PP_TIME_MAX || t.comm > PP_TIME_MAX) {
        pp__err(err, "times must be finite and at most %g, got F=%g B=%g W=%g comm=%g", PP_TIME_MAX, t.f, t.b, t.w,
                t.comm);
        return PP_ERR_INVALID_ARG;
    }
    if (t.f <= 0 || t.b <= 0 || t.w < 0 || t.comm < 0) {
        pp__err(err, "times need F > 0, B > 0, W >= 0, comm >= 0 (or F = B = W = 0 for unit times 1,1,1); "
                     "got F=%g B=%g W=%g comm=%g", t.f, t.b, t.w, t.comm);
        return PP_ERR_INVALID_ARG;
    }
    *out = t;
    return PP_OK;
}

/* pp_config resolved once, at the entry points (pp_sched_build through
   pp__req_resolve, pp_repeat, pp_sched_from_order, pp_sched_from_csv):
   every default applied, every field checked. No code below them reads a
   pp_config (sokol's _sg_desc_defaults). */
typedef struct pp__cfg {
    pp_times times;              /* unit times when f, b, w are all zero; checked */
    const pp_times *stage_times; /* [S] or NULL: times / v; checked where S is known */
    double recompute_input;      /* checked: 0, or 1e-6 .. 1 */
    int reorder;                 /* 0: no_reorder */
    int guarantee;               /* 0: no_guarantee */
    pp_allocator al;             /* malloc/free when zero */
    int fb_overlap;              /* checked: 0 or 1 */
    double fb_time, fb_share;    /* checked; fb_share default applied (1) */
    const pp_times *fb_comm;     /* [S] or NULL */
    int (*progress)(void *user, const char *what, double done); /* NULL: none */
    void *progress_user;
} pp__cfg;

static pp_status pp__cfg_resolve(const pp_config *cfg, pp__cfg *c, char *err) {
    pp_config zero;
    if (!cfg) { memset(&zero, 0, sizeof zero); cfg = &zero; }
    memset(c, 0, sizeof *c);
    if (!pp__finite(cfg->recompute_input) || cfg->recompute_input < 0 || cfg->recompute_input > 1 ||
        (cfg->recompute_input > 0 && cfg->recompute_input < 1e-6)) {
        pp__err(err, "recompute_input is the fraction of a chunk's activation 1f1b-r keeps per stage: 0, or "
                     "1e-6 .. 1; got %g", cfg->recompute_input);
        return PP_ERR_INVALID_ARG;
    }
    c->stage_times = cfg->stage_times;
    c->recompute_input = cfg->recompute_input;
    c->reorder = !cfg->no_reorder;
    c->guarantee = !cfg->no_guarantee;
    c->al = pp__allocator(&cfg->allocator);
    if ((cfg->fb_overlap & ~1) || !pp__finite(cfg->fb_time) || cfg->fb_time < 0 || cfg->fb_time > 1e9 ||
        !pp__finite(cfg->fb_share) || cfg->fb_share < 0 || cfg->fb_share > 1 ||
        (cfg->fb_share > 0 && cfg->fb_share < 0.01)) {
        pp__err(err, "fb_overlap must be 0 or 1, fb_time 0 (derived) or seconds up to 1e9, fb_share (compute's "
                     "share of the GPU while a pair's all-to-all runs) 0 (= 1) or 0.01 .. 1; got %d, %g, %g",
                cfg->fb_overlap, cfg->fb_time, cfg->fb_share);
        return PP_ERR_INVALID_ARG;
    }
    c->fb_overlap = cfg->fb_overlap;
    c->fb_time = cfg->fb_time;
    c->fb_share = cfg->fb_share > 0 ? cfg->fb_share : 1;
    c->fb_comm = cfg->fb_comm;
    c->progress = cfg->progress;
    c->progress_user = cfg->progress_user;
    return pp__resolve_times(&cfg->times, &c->times, err);
}

/* Reports progress (pp_config.progress) and asks whether to go on:
   PP_ERR_CANCELLED with a message when the callback says stop. */
static pp_status pp__tick(const pp__cfg *c, const char *what, double done, char *err) {
    if (!c->progress || !c->progress(c->progress_user, what, done < 0 ? 0 : done > 1 ? 1 : done)) return PP_OK;
    pp__err(err, "%s: stopped (pp_config.progress asked to stop)", what);
    return PP_ERR_CANCELLED;
}

/* The duration of F, B, W, BW of each stage ([S * 4], pp_schedule.stage_time)
   and the units one F allocates ([S]), for S stages at v stages of a route
   per device. recompute: BW also redoes F, and a stage keeps only its input. */
static pp_status pp__stage_times(const pp__cfg *c, int S, double v, int recompute, double *stage_time,
                                 double *stage_memory, char *err) {
    int st;
    for (st = 0; st < S; st++) {
        pp_times x;
        if (c->stage_times) {
            x = c->stage_times[st];
            if (!pp__finite(x.f) || !pp__finite(x.b) || !pp__finite(x.w) || x.f <= 0 || x.b <= 0 || x.w < 0 ||
                x.f > PP_TIME_MAX || x.b > PP_TIME_MAX || x.w > PP_TIME_MAX) {
                pp__err(err, "stage_times[%d] needs finite F > 0, B > 0, W >= 0, each at most %g; got F=%g B=%g W=%g",
                        st, PP_TIME_MAX, x.f, x.b, x.w);
                return PP_ERR_INVALID_ARG;
            }
        } else {
            x.f = c->times.f / v;
            x.b = c->times.b / v;
            x.w = c->times.w / v;
        }
        stage_time[st * 4 + PP_F] = x.f;
        stage_time[st * 4 + PP_B] = x.b;
        stage_time[st * 4 + PP_W] = x.w;
        stage_time[st * 4 + PP_BW] = x.b + x.w + (recompute ? x.f : 0);
        stage_memory[st] = (recompute ? c->recompute_input : 1.0) / v;
    }
    return PP_OK;
}

/* The times of S stages and n microbatches together (LIMITS): the total
   work (every pass's time, plus comm on both edges of every F and backward
   pass) is at most PP_TIME_MAX, and the shortest F and B (BW where the
   backward is not split) are at least PP__TIME_RES (1 + total work). The
   schedule's clock compares with a tolerance of PP__EPS (1 + t): a shorter
   F or B at the end of the schedule could overlap another unseen, which is
   what F > 0, B > 0 forbid. W and comm may be 0, and one below the
   tolerance acts as 0 (the planner gives a zero W 1e-9). */
#define PP__TIME_RES 1e-8
/* One microbatch's work over the S stages (per) and the shortest F and B
   (small), as pp__check_work adds them up. */
static void pp__work_of(const double *stage_time, int S, int split, double comm, double *per, double *small) {
    int s, k;
    *per = *small = 0;
    for (s = 0; s < S; s++) {
        const double *t = stage_time + (size_t)s * 4u;
        *per += t[PP_F] + t[PP_BW] + 2 * comm;
        for (k = 0; k < 4; k++) {
            if (k == PP_W || (k == PP_BW ? split : !split && k == PP_B)) continue;
            if (*small == 0 || t[k] < *small) *small = t[k];
        }
    }
}
static int pp__work_fits(const double *stage_time, int S, int n, int split, double comm) {
    double total = 0, small = 0, per;
    int s;
    for (s = 0; s < S; s++) { /* the same sum, in the same order, as pp__check_work */
        const double *t = stage_time + (size_t)s * 4u;
        total += (double)n * (t[PP_F] + t[PP_BW] + 2 * comm);
    }
    pp__work_of(stage_time, S, split, comm, &per, &small);
    return total <= PP_TIME_MAX && small >= PP__TIME_RES * (1 + total);
}
/* The most microbatches these times allow (0: not even one). */
static int pp__work_most(const double *stage_time, int S, int split, double comm) {
    double per, small, most;
    int n;
    pp__work_of(stage_time, S, split, comm, &per, &small);
    most = (small / PP__TIME_RES - 1) / per;
    if (PP_TIME_MAX / per < most) most = PP_TIME_MAX / per;
    if (!(most >= 1)) return 0;
    n = most >= INT_MAX ? INT_MAX : (int)most;
    while (n > 0 && !pp__work_fits(stage_time, S, n, split, comm)) n = n > 64 ? (int)(n * (1 - 1e-9)) - 1 : n - 1;
    return n;
}
/* What would make n microbatches of these times fit, followed: every time
   multiplied by one factor, fewer microbatches, or, where neither can, times
   closer together. */
static void pp__work_advice(const double *stage_time, int S, int n, int split, double comm, char *buf, size_t len) {
    double per, small, total, lo, hi;
    int most = pp__work_most(stage_time, S, split, comm), at = 0;
    pp__work_of(stage_time, S, split, comm, &per, &small);
    total = (double)n * per;
    /* k scales every time: k small >= 1e-8 (1 + k total) and k total <= PP_TIME_MAX */
    lo = small > PP__TIME_RES * total ? PP__TIME_RES / (small - PP__TIME_RES * total) : -1;
    hi = PP_TIME_MAX / total;
    buf[0] = '\0';
    if (lo > 0 && lo * 1.002 < hi * 0.998) {
        if (lo > 1) at = snprintf(buf, len, "multiply every time by %.4g or more", lo * 1.002);
        else at = snprintf(buf, len, "scale every time down: multiply each by %.4g or less", hi * 0.998);
    }
    if (most >= 1 && most < n)
        snprintf(buf + at, len - (size_t)at, "%suse at most %d microbatches", at ? ", or " : "", most);
    else if (!at)
        snprintf(buf, len, "at any scale one microbatch's work (%g) is more than 1e8 x the shortest F or B (%g): "
                           "lengthen the shortest passes or shorten the longest", per, small);
}
static pp_status pp__check_work(const double *stage_time, int S, int n, int split, double comm, char *err) {
    double total = 0, small = 0, need, per;
    char fix[200];
    int s;
    for (s = 0; s < S; s++) {
        const double *t = stage_time + (size_t)s * 4u;
        total += (double)n * (t[PP_F] + t[PP_BW] + 2 * comm);
    }
    pp__work_of(stage_time, S, split, comm, &per, &small);
    if (!(total <= PP_TIME_MAX)) {
        pp__work_advice(stage_time, S, n, split, comm, fix, sizeof fix);
        pp__err(err, "times too large: the %d stages x %d microbatches add up to %g of work, above %g (the unit is "
                     "yours); %s", S, n, total, PP_TIME_MAX, fix);
        return PP_ERR_OVERFLOW;
    }
    need = PP__TIME_RES * (1 + total);
    if (small < need) {
        pp__work_advice(stage_time, S, n, split, comm, fix, sizeof fix);
        pp__err(err, "times too far apart for double precision: the shortest F or B (%g) must be at least %g "
                     "(1e-8 x (1 + %g, the total work)); %s", small, need, total, fix);
        return PP_ERR_INVALID_ARG;
    }
    return PP_OK;
}

/* Fill a schedule's times, stage_time and stage_memory. */
static pp_status pp__set_stage_times(pp_schedule *s, const pp__cfg *c, int recompute, char *err) {
    pp_status st;
    s->times = c->times;
    s->recompute = recompute;
    st = pp__stage_times(c, s->stages, (double)s->chunks / pp__copies(s->copies), recompute, s->stage_time,
                         s->stage_memory, err);
    if (st != PP_OK) return st;
    return pp__check_work(s->stage_time, s->stages, s->microbatches, s->split_backward, c->times.comm, err);
}

/* ---- the entry check ---------------------------------------------------- */

/* What every public function that reads a schedule checks first (they
   trust nothing else of a caller's pp_schedule): the header's counts are in
   range and agree with each other (num_passes is what S, n, copies and
   split give), the arrays are there, device_start rises from 0 to
   num_passes, every stage is placed on a device, and every pass's device,
   stage, microbatch and kind are indices the arrays hold. times: also the
   numbers a printer lays out (stage times, times, makespan, every pass's
   start and end) are finite, and every pass lies in [0, makespan]. O(P +
   S + d), no allocation. The arrays are taken to have the lengths the
   header gives them (as pp_sched_build allocates them): a count larger
   than its array cannot be seen from here. pp_sched_validate adds the
   rules (once each, dependencies, no overlap, durations). fn names the
   caller in the message. */
static pp_status pp__sched_shape(const pp_schedule *s, const char *fn, int times, char *err) {
    long long d, S, n, P, want;
    int i, dev;
    if (!s) { pp__err(err, "%s: schedule is NULL", fn); return PP_ERR_INVALID_ARG; }
    d = s->devices; S = s->stages; n = s->microbatches; P = s->num_passes;
    if (!memchr(s->name, 0, sizeof s->name)) {
        pp__err(err, "%s: the schedule's name is not NUL-terminated within its %d bytes", fn, (int)sizeof s->name);
        return PP_ERR_INVALID_SCHEDULE;
    }
    if (d < 1 || S < d || n < 1 || S * n > INT_MAX / 12 || (s->copies == 2 && (S % 2 || n % 2))) {
        pp__err(err, "%s: schedule header is inconsistent (d=%lld S=%lld n=%lld copies=%d): it needs devices >= 1, "
                     "stages >= devices, microbatches >= 1, 3 x stages x microbatches <= %d, and even stages and "
                     "microbatches with copies = 2", fn, d, S, n, s->copies, INT_MAX / 4);
        return PP_ERR_INVALID_SCHEDULE;
    }
    want = S / pp__copies(s->copies) * n * (s->split_backward ? 3 : 2);
    if (P != want) {
        pp__err(err, "%s: schedule header is inconsistent (d=%lld S=%lld n=%lld copies=%d passes=%lld): "
                     "%lld passes expected", fn, d, S, n, s->copies, P, want);
        return PP_ERR_INVALID_SCHEDULE;
    }
    if (!s->passes || !s->device_start || !s->stage_device || !s->stage_time || !s->stage_memory ||
        !s->peak_memory || !s->peak_bound) {
        pp__err(err, "%s: the schedule lacks an array (passes, device_start, stage_device, stage_time, "
                     "stage_memory, peak_memory and peak_bound must all be set)", fn);
        return PP_ERR_INVALID_SCHEDULE;
    }
    if (s->device_start[0] != 0 || s->device_start[d] != P) {
        pp__err(err, "%s: device_start must run from 0 to num_passes (%lld), got %d..%d", fn, P, s->device_start[0],
                s->device_start[d]);
        return PP_ERR_INVALID_SCHEDULE;
    }
    for (i = 0; i < S; i++)
        if (s->stage_device[i] < 0 || s->stage_device[i] >= d) {
            pp__err(err, "%s: stage %d is placed on device %d, outside 0..%lld", fn, i, s->stage_device[i], d - 1);
            return PP_ERR_INVALID_SCHEDULE;
        }
    for (dev = 0; dev < d; dev++) /* all of it before any pass is read: it bounds the pass loops */
        if (s->device_start[dev] > s->device_start[dev + 1]) {
            pp__err(err, "%s: device_start must not decrease: device %d starts at %d and ends at %d", fn, dev,
                    s->device_start[dev], s->device_start[dev + 1]);
            return PP_ERR_INVALID_SCHEDULE;
        }
    for (dev = 0; dev < d; dev++) {
        for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
            const pp_pass *p = &s->passes[i];
            if (p->device != dev || p->stage < 0 || p->stage >= S || p->microbatch < 0 || p->microbatch >= n ||
                (int)p->kind < 0 || (int)p->kind > 3) {
                pp__err(err, "%s: pass %d is out of range (device %d, stage %d of %lld, microbatch %d of %lld, "
                             "kind %d) where device %d's passes are", fn, i, p->device, p->stage, S, p->microbatch, n,
                        (int)p->kind, dev);
                return PP_ERR_INVALID_SCHEDULE;
            }
            /* off its microbatch's route (copies = 2), a pass's input would be a stage outside 0..S-1 */
            if (p->stage < pp__route_first((int)S, (int)n, s->copies, p->microbatch) ||
                p->stage > pp__route_last((int)S, (int)n, s->copies, p->microbatch)) {
                pp__err(err, "%s: %s(stage %d, mb %d): microbatch %d runs stages %d..%d only (copy %d of 2)", fn,
                        pp_kind_name(p->kind), p->stage, p->microbatch, p->microbatch,
                        pp__route_first((int)S, (int)n, s->copies, p->microbatch),
                        pp__route_last((int)S, (int)n, s->copies, p->microbatch), p->microbatch < n / 2 ? 1 : 2);
                return PP_ERR_INVALID_SCHEDULE;
            }
        }
    }
    if (!times) return PP_OK;
    if (!pp__finite(s->makespan) || s->makespan < 0 || !pp__finite(s->times.f) || !pp__finite(s->times.b) ||
        !pp__finite(s->times.w) || !pp__finite(s->times.comm)) {
        pp__err(err, "%s: the schedule's makespan (%g) and times (F=%g B=%g W=%g comm=%g) must be finite, the "
                     "makespan >= 0", fn, s->makespan, s->times.f, s->times.b, s->times.w, s->times.comm);
        return PP_ERR_INVALID_SCHEDULE;
    }
    for (i = 0; i < S * 4; i++)
        if (!pp__finite(s->stage_time[i])) {
            pp__err(err, "%s: stage_time[%d] is %g, not a finite time", fn, i, s->stage_time[i]);
            return PP_ERR_INVALID_SCHEDULE;
        }
    for (i = 0; i < P; i++) {
        const pp_pass *p = &s->passes[i];
        if (!(p->start >= 0 && p->start <= p->end && p->end <= s->makespan)) {
            pp__err(err, "%s: pass %d (%s stage %d, microbatch %d) runs [%g, %g], outside [0, makespan %g]", fn, i,
                    pp_kind_name(p->kind), p->stage, p->microbatch, p->start, p->end, s->makespan);
            return PP_ERR_INVALID_SCHEDULE;
        }
    }
    return PP_OK;
}

PP__DEF pp_status pp_sched_check_shape(const pp_schedule *s, const char *caller, int times, char *err) {
    return pp__sched_shape(s, caller ? caller : "pp_sched_check_shape", times, err);
}

/* ---- the dependency rule (Section 2) ------------------------------------ */

/* THE dependency rule: the one pass that pass (k, stage, j) waits for, of
   a schedule with S stages, n microbatches and `copies` routes (Section 2):
   F after F of the stage before it on its route, none on the route's first
   stage; B (BW without split) after B (BW) of the stage after it, or on the
   route's last stage after its own F (the loss); W after B of its stage.
   Returns 1 with the input's kind and stage, 0 for a pass without input.
   Everything else (validation, squeeze, blocks, the grid search, lowering,
   the deadlock checkers, and outside the header through pp_pass_input the
   CSV import of pp_sched_io.h) derives from this function. */
static int pp__input(int S, int n, int copies, int split, pp_kind k, int stage, int j, pp_kind *dk, int *ds) {
    switch (k) {
    case PP_F:
        if (stage == pp__route_first(S, n, copies, j)) return 0;
        *dk = PP_F; *ds = stage - 1;
        return 1;
    case PP_B:
    case PP_BW:
        if (stage == pp__route_last(S, n, copies, j)) { *dk = PP_F; *ds = stage; return 1; }
        *dk = split ? PP_B : PP_BW; *ds = stage + 1;
        return 1;
    case PP_W:
        *dk = PP_B; *ds = stage;
        return 1;
    }
    return 0;
}

/* pp__input for callers outside the header: the arguments checked first
   (-1 when out of range, nothing written). */
PP__DEF int pp_pass_input(int stages, int microbatches, int copies, int split_backward, pp_kind kind, int stage,
                          int microbatch, pp_kind *in_kind, int *in_stage) {
    int S = stages, n = microbatches;
    if (!in_kind || !in_stage || S < 1 || n < 1 || (copies == 2 && (S % 2 || n % 2)) || (int)kind < 0 ||
        (int)kind > 3 || microbatch < 0 || microbatch >= n || stage < pp__route_first(S, n, copies, microbatch) ||
        stage > pp__route_last(S, n, copies, microbatch))
        return -1;
    return pp__input(S, n, copies, split_backward, kind, stage, microbatch, in_kind, in_stage);
}

/* The input of a pass of schedule s (pp__input). */
static int pp__dep(const pp_schedule *s, const pp_pass *p, pp_kind *dk, int *ds) {
    return pp__input(s->stages, s->microbatches, s->copies, s->split_backward, p->kind, p->stage, p->microbatch, dk, ds);
}

/* pp__dep as a table, for the loops that ask it of every pass. Entry
   (half * 4 + kind) * stages + stage (half: 1 on dualpipe's second route)
   holds the key of that pass's input at microbatch 0 (pp__dep_key adds
   the microbatch), or -1 when it has none; entry + 8 * stages holds the
   input's stage. tab: [16 * stages] ints. */
static void pp__dep_table_of(int S, int n, int copies, int split, int *tab) {
    int half, k, st, E = 8 * S;
    for (half = 0; half < 2; half++)
        for (k = 0; k < 4; k++)
            for (st = 0; st < S; st++) {
                pp_kind dk;
                int ds, e = (half * 4 + k) * S + st;
                if (pp__input(S, n, copies, split, (pp_kind)k, st, half ? n - 1 : 0, &dk, &ds)) {
                    tab[e] = pp__key(S, n, dk, ds, 0);
                    tab[E + e] = ds;
                } else {
                    tab[e] = -1;
                    tab[E + e] = st;
                }
            }
}

static void pp__dep_table(const pp_schedule *s, int *tab) {
    pp__dep_table_of(s->stages, s->microbatches, s->copies, s->split_backward, tab);
}

/* The key of p's input from pp__dep_table's tab, or -1 when p has none;
   *dstage: the input's stage. half: pp__dep_half(s). */
static int pp__dep_key(const int *tab, int S, int half, const pp_pass *p, int *dstage) {
    int e = (int)p->kind * S + p->stage + (p->microbatch >= half ? 4 * S : 0);
    *dstage = tab[8 * S + e];
    return tab[e] < 0 ? -1 : tab[e] + p->microbatch;
}

/* the first microbatch of dualpipe's second route; INT_MAX with one route */
static int pp__dep_half(const pp_schedule *s) { return s->copies == 2 ? s->microbatches / 2 : INT_MAX; }

/* ---- metrics ------------------------------------------------------------ */

/* Memory is a function of each device's pass order alone: F allocates at
   its start, the later of B/W (or BW) frees at its end, all on one device. */
/* What a pass does to its device's memory: an F allocates its stage's
   activations, the later of B/W (or BW) frees them, a B alone changes
   nothing. */
static double pp__pass_memory(const pp_schedule *s, const pp_pass *p) {
    return p->kind == PP_F ? s->stage_memory[p->stage] : p->kind == PP_BW || p->kind == PP_W ? -s->stage_memory[p->stage] : 0;
}

/* The peak of count passes of one device, in order (memory rises at each
   F). With busy and end (pp__metrics), also adds their busy time to *busy
   and raises *end to their latest end, in the same pass over them. */
static double pp__device_scan(const pp_schedule *s, const pp_pass *p, int count, double *busy, double *end) {
    double cur = 0, peak = 0;
    int i;
    for (i = 0; i < count; i++) {
        if (busy) {
            *busy += p[i].end - p[i].start;
            *end = pp__max(*end, p[i].end);
        }
        cur += pp__pass_memory(s, &p[i]);
        if (p[i].kind == PP_F && cur > peak) peak = cur;
    }
    return peak;
}
static double pp__device_peak(const pp_schedule *s, const pp_pass *p, int count) {
    return pp__device_scan(s, p, count, NULL, NULL);
}

static void pp__peak_memory(const pp_schedule *s, double *out) {
    int i;
    for (i = 0; i < s->devices; i++)
        out[i] = pp__device_peak(s, s->passes + s->device_start[i], s->device_start[i + 1] - s->device_start[i]);
}

PP__DEF pp_status pp_sched_peak_memory(const pp_schedule *s, double *out) {
    if (!out || pp__sched_shape(s, "pp_sched_peak_memory", 0, NULL) != PP_OK) return PP_ERR_INVALID_ARG;
    pp__peak_memory(s, out);
    return PP_OK;
}

/* The makespan, the bubble rate and each device's peak, in one pass over
   the passes (pp__device_scan): they are device-major, so busy sums in the
   passes' order as ever. */
static void pp__metrics(pp_schedule *s) {
    int dev;
    double busy = 0, end = 0;
    for (dev = 0; dev < s->devices; dev++)
        s->peak_memory[dev] = pp__device_scan(s, s->passes + s->device_start[dev],
                                              s->device_start[dev + 1] - s->device_start[dev], &busy, &end);
    s->makespan = end;
    s->bubble_rate = end > 0 ? 1.0 - busy / (s->devices * end) : 0;
    if (s->bubble_rate < 0 && s->bubble_rate > -1e-12) s->bubble_rate = 0;
}

/* ---- squeeze ------------------------------------------------------------ */

/* Earliest start for every pass, keeping each device's order. Passes with
   skip[i] set are left out (they must have no dependents: W passes). Each
   device runs its order until a pass's input has not run yet, then waits
   for that input's key (wk) and is woken when the input runs (every input
   is of the same stage or a neighbour: only those stages' devices can be
   waiting for it). The starts do not depend on the order the devices run
   in. pp__squeeze_loop times every pass from ptr[i] on, on each device i
   (free_at[i]: the end of the pass before; done, endt: every key timed
   before, and its end; left: the passes still to time); tab: the
   schedule's pp__dep_table; wk, stack: [d] ints of scratch. */
static pp_status pp__squeeze_loop(pp_schedule *s, const unsigned char *skip, const int *tab, int *ptr, int *wk, int *stack,
                                  double *free_at, unsigned char *done, double *endt, int left, char *err) {
    int d = s->devices, S = s->stages, n = s->microbatches, i, ns = 0, half = pp__dep_half(s);
    const double comm = s->times.comm;
    const int *sd = s->stage_device;
    for (i = 0; i < d; i++) { wk[i] = -1; stack[ns++] = d - 1 - i; }
    {
        /* locals: the stores below (done is char) would otherwise make the
           compiler reload every field of s after each one */
        pp_pass *ps = s->passes;
        const double *stt = s->stage_time;
        const int *ds = s->device_start;
        while (ns > 0) {
            int j, stop;
            double t;
            i = stack[--ns];
            j = ptr[i]; stop = ds[i + 1]; t = free_at[i];
            for (; j < stop; j++) {
                pp_pass *p = &ps[j];
                int k, st = p->stage, kind = (int)p->kind, in;
                double start = t;
                if (skip && skip[j]) continue;
                k = pp__dep_key(tab, S, half, p, &in);
                if (k >= 0) {
                    if (!done[k]) { wk[i] = k; break; }
                    start = pp__max(start, endt[k] + (sd[in] != i ? comm : 0));
                }
                t = start + stt[st * 4 + kind];
                p->start = start;
                p->end = t;
                k = (kind * S + st) * n + p->microbatch;
                done[k] = 1;
                endt[k] = t;
                left--;
                if (st > 0 && wk[sd[st - 1]] == k) { wk[sd[st - 1]] = -1; stack[ns++] = sd[st - 1]; }
                if (st < S - 1 && wk[sd[st + 1]] == k) { wk[sd[st + 1]] = -1; stack[ns++] = sd[st + 1]; }
            }
            ptr[i] = j;
            free_at[i] = t;
        }
    }
    if (left > 0) {
        char buf[PP_ERR_LEN];
        int len = 0;
        buf[0] = 0;
        for (i = 0; i < d && len < 160; i++) {
            if (ptr[i] < s->device_start[i + 1]) {
                const pp_pass *p = &s->passes[ptr[i]];
                len += snprintf(buf + len, sizeof buf - (size_t)len, " device %d waits at %s(stage %d, mb %d);", i,
                                pp_kind_name(p->kind), p->stage, p->microbatch);
            }
        }
        pp__err(err, "the pass order deadlocks (%d passes never run):%s", left, buf);
    }
    return left > 0 ? PP_ERR_DEADLOCK : PP_OK;
}

static pp_status pp__squeeze(pp_schedule *s, const unsigned char *skip, char *err) {
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes;
    int i, left = 0, *tab, *ptr, *wk, *stack;
    pp_allocator *al = &s->allocator;
    size_t keys = (size_t)4 * S * n;
    double *endt = (double *)pp__malloc(al, pp__size(keys, sizeof(double)));
    unsigned char *done = (unsigned char *)pp__malloc(al, keys);
    int *buf = (int *)pp__malloc(al, pp__size(3u * (size_t)d + 16u * (size_t)S, sizeof(int)));
    double *free_at = (double *)pp__malloc(al, pp__size((size_t)d, sizeof(double)));
    pp_status st;
    if (!endt || !done || !buf || !free_at) {
        pp__mfree(al, endt); pp__mfree(al, done); pp__mfree(al, buf); pp__mfree(al, free_at);
        pp__err(err, "out of memory in squeeze");
        return PP_ERR_OUT_OF_MEMORY;
    }
    ptr = buf; wk = ptr + d; stack = wk + d; tab = stack + d;
    pp__dep_table(s, tab);
    memset(done, 0, keys);
    for (i = 0; i < d; i++) { ptr[i] = s->device_start[i]; free_at[i] = 0; }
    if (skip) { for (i = 0; i < P; i++) left += !skip[i]; }
    else left = P;
    st = pp__squeeze_loop(s, skip, tab, ptr, wk, stack, free_at, done, endt, left, err);
    pp__mfree(al, endt); pp__mfree(al, done); pp__mfree(al, buf); pp__mfree(al, free_at);
    return st;
}

PP__DEF pp_status pp_squeeze(pp_schedule *s, char *err) {
    pp_status st;
    st = pp__sched_shape(s, "pp_squeeze", 0, err);
    if (st != PP_OK) return st;
    st = pp__squeeze(s, NULL, err);
    if (st != PP_OK) return st;
    s->on_grid = 0;
    pp__metrics(s);
    return PP_OK;
}

/* ---- validation --------------------------------------------------------- */

PP__DEF pp_status pp_sched_validate(const pp_schedule *s, char *err) {
    int d, S, n, P, i, dev;
    size_t keys;
    int *pos;
    pp_allocator al;
    pp_status st = PP_OK;
    st = pp__sched_shape(s, "pp_sched_validate", 0, err);
    if (st != PP_OK) return st;
    d = s->devices; S = s->stages; n = s->microbatches; P = s->num_passes;
    al = s->allocator;
    keys = (size_t)4 * S * n;
    pos = (int *)pp__malloc(&al, pp__size(keys, sizeof(int)));
    if (!pos) { pp__err(err, "out of memory in validate"); return PP_ERR_OUT_OF_MEMORY; }
    for (i = 0; i < (int)keys; i++) pos[i] = -1;
    for (dev = 0; dev < d && st == PP_OK; dev++) {
        for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
            const pp_pass *p = &s->passes[i];
            int k;
            if (s->split_backward ? p->kind == PP_BW : (p->kind == PP_B || p->kind == PP_W)) {
                pp__err(err, "%s(stage %d, mb %d): a %s schedule has no %s pass", pp_kind_name(p->kind), p->stage,
                        p->microbatch, s->split_backward ? "B/W-split" : "combined-backward", pp_kind_name(p->kind));
                st = PP_ERR_INVALID_SCHEDULE; break;
            }
            if (p->device != dev || s->stage_device[p->stage] != dev) {
                pp__err(err, "%s(stage %d, mb %d) runs on device %d but stage %d is placed on device %d",
                        pp_kind_name(p->kind), p->stage, p->microbatch, dev, p->stage, s->stage_device[p->stage]);
                st = PP_ERR_INVALID_SCHEDULE; break;
            }
            k = pp__key(S, n, p->kind, p->stage, p->microbatch);
            if (pos[k] >= 0) {
                pp__err(err, "%s(stage %d, mb %d) appears twice", pp_kind_name(p->kind), p->stage, p->microbatch);
                st = PP_ERR_INVALID_SCHEDULE; break;
            }
            pos[k] = i;
            if (!pp__finite(p->start) || p->start < -PP__EPS || p->end < p->start) {
                pp__err(err, "%s(stage %d, mb %d) has a bad interval [%g, %g]", pp_kind_name(p->kind), p->stage,
                        p->microbatch, p->start, p->end);
                st = PP_ERR_INVALID_SCHEDULE; break;
            }
            if (!s->on_grid && !s->fb_pairs && pp__abs((p->end - p->start) - pp__dur(s, p)) > PP__EPS * (1 + pp__dur(s, p))) {
                pp__err(err, "%s(stage %d, mb %d) lasts %g, its stage time is %g", pp_kind_name(p->kind), p->stage,
                        p->microbatch, p->end - p->start, pp__dur(s, p));
                st = PP_ERR_INVALID_SCHEDULE; break;
            }
            if (i > s->device_start[dev] && p->start < s->passes[i - 1].end - PP__EPS * (1 + p->start)) {
                const pp_pass *q = &s->passes[i - 1];
                pp__err(err, "device %d runs %s(stage %d, mb %d) at %g before %s(stage %d, mb %d) ends at %g", dev,
                        pp_kind_name(p->kind), p->stage, p->microbatch, p->start, pp_kind_name(q->kind), q->stage,
                        q->microbatch, q->end);
                st = PP_ERR_INVALID_SCHEDULE; break;
            }
        }
    }
    /* every pass exactly once (counts match, so no duplicate means none missing), dependencies */
    for (i = 0; i < P && st == PP_OK; i++) {
        const pp_pass *p = &s->passes[i];
        pp_kind dk;
        int ds;
        if (pp__dep(s, p, &dk, &ds)) {
            int k = pos[pp__key(S, n, dk, ds, p->microbatch)];
            double need;
            if (k < 0) {
                pp__err(err, "%s(stage %d, mb %d) is missing", pp_kind_name(dk), ds, p->microbatch);
                st = PP_ERR_INVALID_SCHEDULE; break;
            }
            need = s->passes[k].end + (!s->on_grid && s->stage_device[ds] != p->device ? s->times.comm : 0);
            if (p->start < need - PP__EPS * (1 + need)) {
                pp__err(err, "%s(stage %d, mb %d) starts at %g before %s(stage %d, mb %d) is ready at %g",
                        pp_kind_name(p->kind), p->stage, p->microbatch, p->start, pp_kind_name(dk), ds, p->microbatch,
                        need);
                st = PP_ERR_INVALID_SCHEDULE;
            }
        }
    }
    pp__mfree(&al, pos);
    return st;
}

/* ---- bounds: what no order can beat (Appendix E.2) ---------------------- */

/* Appendix E.2's bound, re-derived for any F, B, W times and comm.

   Setting: V-shape placement, one route (copies != 2), S = 2d stages.
   Let m = d-1, the middle device: it holds stages d-1 and d, and both of
   its stages' microbatches pass through it twice per F chain. Per stage s
   write f(s) for its F time, b(s) for its B time (BW when the backward is
   not split) and w(s) for its W time (0 when not split); c = comm on every
   dependency between two devices. k = the most activations device m ever
   holds: peak_memory / (the smaller stage_memory of stages d-1, d); we use
   the largest peak over all devices, which is no smaller, so the bound only
   gets weaker. Memory is counted in each device's pass order: F allocates,
   W (or BW) frees.

   1. Makespan E = (busy time of device m) + (idle time of device m). Busy
      time is fixed: n * (f+b+w of stage d-1 + f+b+w of stage d).
   2. Warm-up. The first backward device m can run is B(d, j) for some j;
      it needs F of every stage 0..2d-1 of microbatch j, then B of stages
      2d-1..d+1. So it starts no earlier than
          A = sum_{s=0}^{2d-1} f(s) + sum_{s=d+1}^{2d-1} b(s) + c * (device
              changes along that chain; 3d-3 for V-shape).
      Every pass device m starts before A is therefore an F, and all of
      them come before its first W in its order, so there are at most k of
      them. Busy time in [0, A) <= k * max(f(d-1), f(d)); idle in [0, A)
      >= A - k * max(f(d-1), f(d)).
   3. Cool-down. Let t* be the end of device m's last F. That F is some
      F(d, j) (F(d-1, j) is always followed on device m by F(d, j)). After
      it microbatch j still needs F of stages d+1..2d-1, B of every stage
      2d-1..0 and W(0, j), one after another, so
          E >= t* + C,  C = sum_{s=d+1}^{2d-1} f(s) + sum_{s=0}^{2d-1} b(s)
              + w(0) + c * (device changes along it; 3d-3 for V-shape).
      After t* device m runs only B and W passes of activations it still
      holds right after its last F: at most k of them, each needing at most
      max over its two stages of b + w. Idle in [t*, E) >= C - k * that.
   4. The two windows [0, A) and [t*, E) do not overlap when 2n > k: if t*
      < A, all 2n F passes of device m would come before its first W, so it
      would hold 2n activations at once. Then
          E >= busy + (A - k max f) + (C - k max(b + w)).
      When 2n <= k only one window is used (the larger idle, at least 0).
   5. Equal times per stage, f = b = w = t, c = 0, split backward: A =
      (3d-1)t, C = 3dt, busy = 6nt, so E >= (6n + 6d - 1 - 3k)t: the
      paper's figure, now for any n with 2n > k. For 2n <= k the paper's
      figure is not a bound (v-half d=4 n=1: 11.5 against a makespan of 8.5),
      which is why step 4 falls back to one window there.
   Each window's idle could also be clamped at 0 separately (stronger when
   k > 1.5d at equal times); we keep the plain sum so the equal-time figure
   stays the paper's.

   Any placement with one route: the same steps hold on every device D, with
   x = the last stage D holds (d for device d-1 on the V; i on device i with
   one stage per device; d(v-1) + i when interleaved). D's first backward is
   B(x, j) (any other stage of D waits for it), so A_D = F of every stage +
   B of stages S-1..x+1; D's last F is F(x, j) (F(x, j) follows every F of
   j on D), so C_D = F of stages x+1..S-1 + B of every stage + W(0); k =
   peak / D's least stage_memory, max f and max (b + w) over D's stages, and
   the windows apart when D's (stages x n) F passes exceed k. The bound is
   the largest over the devices. With one stage per device at equal times
   t, c = 0, BW = 2t, device 0 gives (3n + 6d - 4 - 3k) t: 1F1B's (n + d -
   1) 3t at its peak k = d. */
typedef struct pp__vdev {
    int top, stages;                /* its last stage (-1: none), how many it holds */
    double mem, fmax, bwmax, busy;  /* least stage_memory (-1: none yet), max f, max b + w, its work */
} pp__vdev;
static double pp__vbound(const pp_schedule *s, double peak) {
    int d = s->devices, S = s->stages, i, dev, bk = s->split_backward ? PP_B : PP_BW;
    double c = s->times.comm, fall = 0, ball = 0, best = -1, *fs, *bs;
    const double *t = s->stage_time;
    pp__vdev *v;
    if (pp__copies(s->copies) != 1 || d < 1 || S < 1) return -1;
    v = (pp__vdev *)pp__malloc(&s->allocator, pp__size((size_t)d, sizeof *v));
    fs = (double *)pp__malloc(&s->allocator, pp__size((size_t)S, 2u * sizeof(double)));
    if (!v || !fs) { pp__mfree(&s->allocator, v); pp__mfree(&s->allocator, fs); return -1; }
    bs = fs + S;
    for (dev = 0; dev < d; dev++) {
        v[dev].top = -1; v[dev].stages = 0;
        v[dev].mem = -1; v[dev].fmax = v[dev].bwmax = v[dev].busy = 0;
        for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) v[dev].busy += pp__dur(s, &s->passes[i]);
    }
    /* per device its stages' figures; fall, ball: F, B of every stage, each with the hop into it */
    for (i = 0; i < S; i++) {
        pp__vdev *x = &v[s->stage_device[i]];
        double hop = i > 0 && s->stage_device[i] != s->stage_device[i - 1] ? c : 0;
        x->top = i;
        x->stages++;
        if (x->mem < 0 || s->stage_memory[i] < x->mem) x->mem = s->stage_memory[i];
        x->fmax = pp__max(x->fmax, t[i * 4 + PP_F]);
        x->bwmax = pp__max(x->bwmax, t[i * 4 + bk] + (s->split_backward ? t[i * 4 + PP_W] : 0));
        fall += t[i * 4 + PP_F] + hop;
        ball += t[i * 4 + bk] + hop;
    }
    /* fs[x], bs[x]: F, B of stages x+1..S-1, each with the hop into it */
    fs[S - 1] = bs[S - 1] = 0;
    for (i = S - 2; i >= 0; i--) {
        double hop = s->stage_device[i + 1] != s->stage_device[i] ? c : 0;
        fs[i] = fs[i + 1] + t[(i + 1) * 4 + PP_F] + hop;
        bs[i] = bs[i + 1] + t[(i + 1) * 4 + bk] + hop;
    }
    for (dev = 0; dev < d; dev++) {
        const pp__vdev *x = &v[dev];
        double k, warm, cool;
        if (x->top < 0 || !(x->mem > 0)) continue;
        k = peak / x->mem;
        warm = fall + bs[x->top] - k * x->fmax;                                             /* A - k max f */
        cool = fs[x->top] + ball + (s->split_backward ? t[0 * 4 + PP_W] : 0) - k * x->bwmax; /* C - k max (b + w) */
        best = pp__max(best, (double)x->stages * s->microbatches > k + 1e-9 ? x->busy + warm + cool
                                                                              : x->busy + pp__max(0, pp__max(warm, cool)));
    }
    pp__mfree(&s->allocator, v);
    pp__mfree(&s->allocator, fs);
    return best;
}

/* One microbatch's dependency chain: F of every stage, then the backward
   of every stage, 2 comm per device boundary; the last W (split); with two
   routes (copies = 2) the longer of the two (pp_bounds.path). */
static double pp__path_bound(const pp_schedule *s) {
    int i, r, S = s->stages;
    double best = 0;
    for (r = 0; r < pp__copies(s->copies); r++) {
        int j = r * (s->microbatches - 1), a = pp__route_first(S, s->microbatches, s->copies, j);
        int z = pp__route_last(S, s->microbatches, s->copies, j);
        double path = 0;
        for (i = a; i <= z; i++) {
            path += s->stage_time[i * 4 + PP_F] + s->stage_time[i * 4 + (s->split_backward ? PP_B : PP_BW)];
            if (i > a && s->stage_device[i] != s->stage_device[i - 1]) path += 2 * s->times.comm;
        }
        if (s->split_backward) path += s->stage_time[a * 4 + PP_W];
        best = pp__max(best, path);
    }
    return best;
}

PP__DEF pp_status pp_sched_bounds(const pp_schedule *s, pp_bounds *out) {
    int i, dev;
    double peak = 0;
    if (!out || pp__sched_shape(s, "pp_sched_bounds", 0, NULL) != PP_OK) return PP_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    for (dev = 0; dev < s->devices; dev++) {
        double w = 0;
        for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) w += pp__dur(s, &s->passes[i]);
        out->work = pp__max(out->work, w);
        peak = pp__max(peak, s->peak_memory[dev]);
    }
    out->path = pp__path_bound(s);
    out->appendix = pp__vbound(s, peak);
    out->best = pp__max(out->work, pp__max(out->path, out->appendix));
    return PP_OK;
}

/* A lower bound on the makespan of any order of s's passes (one route):
   each device's work, after the earliest its first pass can start (an F:
   the forward path to its first stage) and before the least its last pass
   leaves to do (split: 0, a W may end it; else the backward path below its
   stage). At unit times it is the makespan of 1F1B, ZB-H1 and interleaved
   1F1B at large n, so candidates that cannot be shorter are not built. */
static double pp__device_bound(const pp_schedule *s) {
    int d = s->devices, S = s->stages, i, st;
    double best = 0, fpath = 0, bpath = 0;
    double *head, *tail;
    if (pp__copies(s->copies) != 1) return 0;
    head = (double *)pp__malloc(&s->allocator, pp__size((size_t)d, 2u * sizeof(double)));
    if (!head) return 0;
    tail = head + d;
    for (i = 0; i < d; i++) head[i] = tail[i] = -1;
    for (st = 0; st < S; st++) {
        int dev = s->stage_device[st];
        if (st > 0) {
            int cross = s->stage_device[st - 1] != dev;
            fpath += s->stage_time[(st - 1) * 4 + PP_F] + (cross ? s->times.comm : 0);
            bpath += s->stage_time[(st - 1) * 4 + (s->split_backward ? PP_B : PP_BW)] + (cross ? s->times.comm : 0);
        }
        if (head[dev] < 0 || fpath < head[dev]) head[dev] = fpath;
        if (tail[dev] < 0 || bpath < tail[dev]) tail[dev] = s->split_backward ? 0 : bpath;
    }
    for (i = 0; i < d; i++) {
        double w = 0;
        int k;
        for (k = s->device_start[i]; k < s->device_start[i + 1]; k++) w += pp__dur(s, &s->passes[k]);
        best = pp__max(best, pp__max(head[i], 0) + w + pp__max(tail[i], 0));
    }
    pp__mfree(&s->allocator, head);
    return best;
}

/* The lower bound every order of s's passes obeys, whatever its memory:
   pp__device_bound or the critical path (pp_sched_bounds' path), the
   larger. A schedule that reaches it cannot be shortened by any order, so
   the local search, the guarantee and the adaptive searches stop there
   (pp__at_bound). */
static double pp__order_bound(const pp_schedule *s) {
    return pp__max(pp__device_bound(s), pp__path_bound(s));
}

static int pp__at_bound(double mk, double lb) { return mk <= lb * (1 + PP__EPS) + PP__EPS; }

/* Whether a candidate of best's passes (same devices, stages, times) whose
   peak is at most `peak` may still win over best in an adaptive search
   (pp__auto_better: shorter, or as short with a smaller peak). lb0:
   pp__order_bound(best). Where the bounds (lb0, Appendix E.2 at that peak)
   say it cannot be as short, it cannot win. Where they say it can at most
   be as short, it must have a smaller peak, and `peak` is taken as the
   peak it ends with: a candidate whose memory before its reordering is not
   below best's peak is not built (reordering keeps each device under a cap
   and never seeks a smaller peak; see DESIGN.md). */
static int pp__may_beat(const pp_schedule *best, double lb0, double peak) {
    double mk = best->makespan, tol = PP__EPS * (1 + mk), lb = pp__max(lb0, pp__vbound(best, peak)), top = 0;
    int i;
    if (lb > mk + tol) return 0;
    if (lb < mk - tol) return 1;
    for (i = 0; i < best->devices; i++) top = pp__max(top, best->peak_memory[i]);
    return peak < top - 1e-9;
}

/* ---- building blocks ---------------------------------------------------- */

PP__DEF pp_status pp_block_create(int devices, int chunks, pp_placement placement, int split_backward,
                                  int microbatches_per_block, const pp_allocator *alloc, pp_block **out, char *err) {
    pp_allocator al = pp__allocator(alloc);
    int S, m;
    size_t off, total;
    pp_block *b;
    if (!out) { pp__err(err, "pp_block_create: out is NULL"); return PP_ERR_INVALID_ARG; }
    *out = NULL;
    if (devices < 1 || chunks < 1 || microbatches_per_block < 1) {
        pp__err(err, "a block needs devices >= 1, chunks >= 1, microbatches >= 1; got %d, %d, %d", devices, chunks,
                microbatches_per_block);
        return PP_ERR_INVALID_ARG;
    }
    if ((int)placement < PP_PLACE_SEQUENTIAL || (int)placement > PP_PLACE_VSHAPE) {
        pp__err(err, "placement %d is not a pp_placement: use PP_PLACE_SEQUENTIAL (0), PP_PLACE_LOOPED (1) or "
                     "PP_PLACE_VSHAPE (2)", (int)placement);
        return PP_ERR_INVALID_ARG;
    }
    if ((placement == PP_PLACE_SEQUENTIAL && chunks != 1) || (placement == PP_PLACE_VSHAPE && chunks != 2)) {
        pp__err(err, "%s placement needs chunks = %d, got %d", pp_placement_name(placement),
                placement == PP_PLACE_VSHAPE ? 2 : 1, chunks);
        return PP_ERR_INVALID_ARG;
    }
    if ((long long)devices * chunks > INT_MAX / 16 || (long long)devices * chunks * microbatches_per_block > INT_MAX / 16) {
        pp__err(err, "block too large: %d devices x %d chunks x %d microbatches", devices, chunks,
                microbatches_per_block);
        return PP_ERR_OVERFLOW;
    }
    S = devices * chunks;
    m = S * microbatches_per_block;
    off = pp__align8(sizeof(pp_block));
    total = off + pp__size((size_t)S + 3u * (size_t)m, sizeof(int));
    b = (pp_block *)pp__malloc(&al, total);
    if (!b) { pp__err(err, "out of memory allocating a block"); return PP_ERR_OUT_OF_MEMORY; }
    memset(b, 0, total);
    b->devices = devices;
    b->chunks = chunks;
    b->stages = S;
    b->placement = placement;
    b->split_backward = split_backward ? 1 : 0;
    b->microbatches = microbatches_per_block;
    b->bw_cells = 2;
    b->stage_device = (int *)((char *)b + off);
    b->f = b->stage_device + S;
    b->b = b->f + m;
    b->w = b->b + m;
    b->allocator = al;
    for (m = 0; m < S; m++) b->stage_device[m] = pp__place(placement, devices, m);
    *out = b;
    return PP_OK;
}

PP__DEF void pp_block_free(pp_block *blk) {
    pp_allocator a;
    if (!blk) return;
    a = blk->allocator;
    pp__mfree(&a, blk);
}

static int pp__block_cells(const pp_block *b, pp_kind k) {
    if (k == PP_BW) return b->bw_cells > 0 ? b->bw_cells : 2;
    return 1;
}

static void pp__block_pass(const pp_block *b, int idx, pp_kind *k, int *s, int *j, int *cell) {
    int m = b->stages * b->microbatches, which = idx / m, r = idx % m;
    *s = r / b->microbatches;
    *j = r % b->microbatches;
    if (which == 0) { *k = PP_F; *cell = b->f[r]; }
    else if (which == 1) { *k = b->split_backward ? PP_B : PP_BW; *cell = b->b[r]; }
    else { *k = PP_W; *cell = b->w[r]; }
}

/* The largest offset of a pass in a block, in cells: offsets plus a pass's
   cells and the interval stay far inside an int. */
#define PP__CELL_MAX (INT_MAX / 4)

/* What every public function that reads a block checks first (as
   pp__sched_shape for schedules): devices, chunks and microbatches >= 1,
   stages = devices x chunks, 16 x stages x microbatches within an int, a
   placement of the enum, an interval of 1 .. INT_MAX / 64 / devices cells,
   bw_cells 0 .. interval, the arrays there, every stage on a device and
   every offset in 0 .. PP__CELL_MAX. O(S m), no allocation; the arrays are
   taken to have the lengths the header gives. */
static pp_status pp__block_shape(const pp_block *b, const char *fn, char *err) {
    long long d, S, mb;
    int i, m;
    if (!b) { pp__err(err, "%s: block is NULL", fn); return PP_ERR_INVALID_ARG; }
    d = b->devices; S = b->stages; mb = b->microbatches;
    if (d < 1 || b->chunks < 1 || mb < 1 || d * b->chunks > INT_MAX / 16 || S != d * b->chunks ||
        S * mb > INT_MAX / 16) {
        pp__err(err, "%s: block header is inconsistent (devices %lld, chunks %d, stages %lld, microbatches %lld): it "
                     "needs devices, chunks, microbatches >= 1, stages = devices x chunks and 16 x stages x "
                     "microbatches <= %d", fn, d, b->chunks, S, mb, INT_MAX);
        return PP_ERR_INVALID_ARG;
    }
    if ((int)b->placement < PP_PLACE_SEQUENTIAL || (int)b->placement > PP_PLACE_VSHAPE) {
        pp__err(err, "%s: block placement %d is not a pp_placement (0, 1 or 2)", fn, (int)b->placement);
        return PP_ERR_INVALID_ARG;
    }
    if (b->interval < 1) { pp__err(err, "%s: block interval must be >= 1 cell, got %d", fn, b->interval); return PP_ERR_INVALID_ARG; }
    if (b->interval > INT_MAX / 64 / d) {
        pp__err(err, "%s: block interval %d is too large: at most %lld cells on %lld devices", fn, b->interval,
                INT_MAX / 64 / d, d);
        return PP_ERR_OVERFLOW;
    }
    if (b->bw_cells < 0 || b->bw_cells > b->interval) {
        pp__err(err, "%s: bw_cells must be 0 (2 cells) .. the interval (%d), got %d", fn, b->interval, b->bw_cells);
        return PP_ERR_INVALID_ARG;
    }
    if (!b->stage_device || !b->f || !b->b || (b->split_backward && !b->w)) {
        pp__err(err, "%s: the block lacks an array (stage_device, f, b, and w when split_backward)", fn);
        return PP_ERR_INVALID_ARG;
    }
    for (i = 0; i < S; i++)
        if (b->stage_device[i] < 0 || b->stage_device[i] >= d) {
            pp__err(err, "%s: stage %d is placed on device %d, outside 0..%lld", fn, i, b->stage_device[i], d - 1);
            return PP_ERR_INVALID_ARG;
        }
    m = (int)(S * mb);
    for (i = 0; i < m; i++) {
        int k, cell[3];
        cell[0] = b->f[i]; cell[1] = b->b[i]; cell[2] = b->split_backward ? b->w[i] : 0;
        for (k = 0; k < 3; k++)
            if (cell[k] < 0 || cell[k] > PP__CELL_MAX) {
                pp__err(err, "%s: %s(stage %d, mb %d) has offset %d, outside 0..%d", fn,
                        k == 0 ? "F" : k == 2 ? "W" : b->split_backward ? "B" : "BW", i / (int)mb, i % (int)mb,
                        cell[k], PP__CELL_MAX);
                return PP_ERR_INVALID_ARG;
            }
    }
    return PP_OK;
}

PP__DEF pp_status pp_block_check(const pp_block *b, char *err) {
    int S, mb, T, npass, i, c;
    int *occ;
    pp_status st = pp__block_shape(b, "pp_block_check", err);
    if (st != PP_OK) return st;
    S = b->stages; mb = b->microbatches; T = b->interval;
    npass = S * mb * (b->split_backward ? 3 : 2);
    /* dependencies inside the block, on the grid (pp__input, one route) */
    for (i = 0; i < S * mb; i++) {
        int s = i / mb, j = i % mb, which;
        for (which = 0; which < (b->split_backward ? 3 : 2); which++) {
            pp_kind k = which == 0 ? PP_F : which == 2 ? PP_W : b->split_backward ? PP_B : PP_BW, dk;
            int cell = which == 0 ? b->f[i] : which == 1 ? b->b[i] : b->w[i], ds, di, ready;
            if (!pp__input(S, mb, 1, b->split_backward, k, s, j, &dk, &ds)) continue;
            di = ds * mb + j;
            ready = (dk == PP_F ? b->f[di] : b->b[di]) + pp__block_cells(b, dk);
            if (cell < ready) {
                pp__err(err, "%s(stage %d, mb %d) at cell %d starts before %s(stage %d, mb %d) ends at %d",
                        pp_kind_name(k), s, j, cell, pp_kind_name(dk), ds, j, ready);
                return PP_ERR_INVALID_ARG;
            }
        }
    }
    /* collisions: every cell of every pass, modulo T, per device */
    occ = (int *)pp__malloc(&b->allocator, pp__size((size_t)b->devices * (size_t)T, sizeof(int)));
    if (!occ) { pp__err(err, "out of memory in pp_block_check"); return PP_ERR_OUT_OF_MEMORY; }
    for (i = 0; i < b->devices * T; i++) occ[i] = -1;
    for (i = 0; i < npass && st == PP_OK; i++) {
        /* pp__block_pass, without its divisions on the common path */
        int m = S * mb, r0 = i % m, which = i / m, s = mb == 1 ? r0 : r0 / mb, j = mb == 1 ? 0 : r0 % mb, dev;
        int cell = which == 0 ? b->f[r0] : which == 1 ? b->b[r0] : b->w[r0];
        pp_kind k = which == 0 ? PP_F : which == 2 ? PP_W : b->split_backward ? PP_B : PP_BW;
        int cells = k == PP_BW ? pp__block_cells(b, k) : 1;
        dev = b->stage_device[s];
        for (c = 0; c < cells; c++) {
            int r = (int)(((long long)cell + c) % T), *o = &occ[(size_t)dev * (size_t)T + (size_t)r];
            if (*o >= 0) {
                pp_kind k2; int s2, j2, cell2;
                pp__block_pass(b, *o, &k2, &s2, &j2, &cell2);
                pp__err(err, "collision on device %d: %s(stage %d, mb %d) at cell %d and %s(stage %d, mb %d) at cell %d "
                        "meet in cell %d mod T=%d", dev, pp_kind_name(k2), s2, j2, cell2, pp_kind_name(k), s, j, cell, r, T);
                st = PP_ERR_COLLISION;
                break;
            }
            *o = i;
        }
    }
    pp__mfree(&b->allocator, occ);
    return st;
}

/* Eq. 1's term for entry i of the block (stage i / microbatches): ceil(l/T)
   m(s), l the activation's life in cells, m(s) the stage's memory. */
static double pp__block_term(const pp_block *b, int i, const double *stage_memory) {
    int s = i / b->microbatches, T = b->interval, last, l;
    last = b->split_backward ? (b->w[i] + 1 > b->b[i] + 1 ? b->w[i] + 1 : b->b[i] + 1) : b->b[i] + pp__block_cells(b, PP_BW);
    l = last - b->f[i];
    return (double)((l + T - 1) / T) * (stage_memory ? stage_memory[s] : 1.0 / b->chunks);
}

/* Eq. 1 with per-stage memory m(s): sum over stages on the device of
   ceil(l/T) m(s), for every device at once (one pass over the block, each
   device's terms added in stage order): out[d]. */
static void pp__block_bounds(const pp_block *b, const double *stage_memory, double *out) {
    int i, mb = b->microbatches;
    for (i = 0; i < b->devices; i++) out[i] = b->interval < 1 ? -1 : 0;
    if (b->interval < 1) return;
    for (i = 0; i < b->stages * mb; i++) out[b->stage_device[i / mb]] += pp__block_term(b, i, stage_memory);
}

/* The same for one device. */
static double pp__block_bound(const pp_block *b, int device, const double *stage_memory) {
    int i, mb = b->microbatches;
    double sum = 0;
    if (b->interval < 1) return -1;
    for (i = 0; i < b->stages * mb; i++)
        if (b->stage_device[i / mb] == device) sum += pp__block_term(b, i, stage_memory);
    return sum;
}

PP__DEF double pp_block_peak_bound(const pp_block *blk, int device) {
    if (pp__block_shape(blk, "pp_block_peak_bound", NULL) != PP_OK || device < 0 || device >= blk->devices) return -1;
    return pp__block_bound(blk, device, NULL);
}

static int pp__cmp_pass(const void *a, const void *b) {
    const pp_pass *x = (const pp_pass *)a, *y = (const pp_pass *)b;
    if (x->start < y->start) return -1;
    if (x->start > y->start) return 1;
    return (int)x->kind - (int)y->kind;
}

/* Sort each device's passes by start and fill device_start. Passes must
   already be grouped by device with counts in device_start[dev+1]. Starts
   on the block grid are whole cells, one pass per cell where the block
   repeats without collision: a bucket per cell does it in linear time;
   qsort where two passes share a cell or memory is short. */
static void pp__sort_devices(pp_schedule *s) {
    int i, most = 0;
    pp_allocator *al = &s->allocator;
    pp_pass *tmp;
    int *slot = NULL;
    size_t cells = 0;
    for (i = 0; i < s->devices; i++) if (s->device_start[i + 1] - s->device_start[i] > most) most = s->device_start[i + 1] - s->device_start[i];
    tmp = (pp_pass *)pp__malloc(al, pp__size((size_t)most + 1u, sizeof(pp_pass)));
    for (i = 0; i < s->devices; i++) {
        pp_pass *p = s->passes + s->device_start[i];
        int m = s->device_start[i + 1] - s->device_start[i], j, k;
        double lo = 0, hi = 0;
        size_t range;
        for (j = 0; j < m; j++) {
            if (j == 0 || p[j].start < lo) lo = p[j].start;
            if (j == 0 || p[j].start > hi) hi = p[j].start;
        }
        range = m > 0 && hi - lo < 8.0 * m + 64 ? (size_t)(hi - lo) + 1u : 0;
        if (range > cells) {
            pp__mfree(al, slot);
            slot = (int *)pp__malloc(al, pp__size(range, sizeof(int)));
            cells = slot ? range : 0;
        }
        if (tmp && range && slot) {
            for (k = 0; k < (int)range; k++) slot[k] = -1;
            for (j = 0; j < m; j++) {
                double c = p[j].start - lo;
                k = (int)c;
                if ((double)k != c || slot[k] >= 0) break;
                slot[k] = j;
            }
            if (j == m) {
                memcpy(tmp, p, (size_t)m * sizeof(pp_pass));
                for (k = 0, j = 0; k < (int)range; k++) if (slot[k] >= 0) p[j++] = tmp[slot[k]];
                continue;
            }
        }
        qsort(p, (size_t)m, sizeof(pp_pass), pp__cmp_pass);
    }
    pp__mfree(al, tmp);
    pp__mfree(al, slot);
}

static pp_status pp__repeat(const pp_block *b, int n, const int *starts, const pp__cfg *c, int recompute,
                            pp_schedule **out, char *err) {
    pp_status st;
    pp_allocator al;
    pp_schedule *s;
    int d, S, mb, i, j, k, *fill;
    long long nblocks;
    if (!b || !out) { pp__err(err, "pp_repeat: block and out must not be NULL"); return PP_ERR_INVALID_ARG; }
    *out = NULL;
    if (n < 1) { pp__err(err, "microbatches must be >= 1, got %d", n); return PP_ERR_INVALID_ARG; }
    st = pp_block_check(b, err);
    /* with explicit starts only the placed passes can collide; checked below */
    if (st != PP_OK && !(starts && st == PP_ERR_COLLISION)) return st;
    d = b->devices; S = b->stages; mb = b->microbatches;
    nblocks = ((long long)n + mb - 1) / mb;
    if (nblocks * b->interval + 4LL * S * (b->interval + 4) > INT_MAX / 4) {
        pp__err(err, "%d microbatches at interval %d overflow the grid", n, b->interval);
        return PP_ERR_OVERFLOW;
    }
    al = c->al;
    s = pp__sched_alloc(&al, d, b->chunks, S, n, b->split_backward, err, &st);
    if (!s) return st;
    s->placement = b->placement;
    for (i = 0; i < S; i++) s->stage_device[i] = b->stage_device[i];
    st = pp__set_stage_times(s, c, recompute, err);
    if (st != PP_OK) { pp_sched_free(s); return st; }
    /* counts per device, then place */
    for (i = 0; i < S; i++) s->device_start[b->stage_device[i] + 1] += n * (b->split_backward ? 3 : 2);
    for (i = 0; i < d; i++) s->device_start[i + 1] += s->device_start[i];
    fill = (int *)pp__malloc(&al, pp__size((size_t)d, sizeof(int)));
    if (!fill) { pp_sched_free(s); pp__err(err, "out of memory in pp_repeat"); return PP_ERR_OUT_OF_MEMORY; }
    for (i = 0; i < d; i++) fill[i] = s->device_start[i];
    for (k = 0; k < nblocks; k++) {
        long long base = starts ? starts[k] : (long long)k * b->interval;
        if (starts && (starts[k] < 0 || (k > 0 && starts[k] < starts[k - 1]))) {
            pp__err(err, "block starts must be >= 0 and non-decreasing; starts[%d] = %d", k, starts[k]);
            pp__mfree(&al, fill); pp_sched_free(s);
            return PP_ERR_INVALID_ARG;
        }
        for (j = 0; j < mb && k * mb + j < n; j++) {
            for (i = 0; i < S; i++) {
                int r = i * mb + j, dev = b->stage_device[i], kinds = b->split_backward ? 3 : 2, q;
                for (q = 0; q < kinds; q++) {
                    pp_pass *p = &s->passes[fill[dev]++];
                    int cell = q == 0 ? b->f[r] : q == 1 ? b->b[r] : b->w[r];
                    p->device = dev;
                    p->stage = i;
                    p->microbatch = k * mb + j;
                    p->kind = q == 0 ? PP_F : q == 2 ? PP_W : (b->split_backward ? PP_B : PP_BW);
                    p->start = (double)(base + cell);
                    p->end = p->start + pp__block_cells(b, p->kind);
                }
            }
        }
    }
    pp__mfree(&al, fill);
    pp__sort_devices(s);
    /* non-uniform starts can collide even when the block repeats at T cleanly */
    for (i = 0; i < d; i++)
        for (j = s->device_start[i] + 1; j < s->device_start[i + 1]; j++) {
            const pp_pass *p = &s->passes[j], *q = &s->passes[j - 1];
            if (p->start < q->end) {
                pp__err(err, "collision on device %d: %s(stage %d, mb %d) and %s(stage %d, mb %d) both at cell %g", i,
                        pp_kind_name(q->kind), q->stage, q->microbatch, pp_kind_name(p->kind), p->stage, p->microbatch,
                        p->start);
                pp_sched_free(s);
                return PP_ERR_COLLISION;
            }
        }
    s->interval = b->interval;
    s->on_grid = 1;
    pp__block_bounds(b, s->stage_memory, s->peak_bound);
    pp__metrics(s);
    *out = s;
    return PP_OK;
}

PP__DEF pp_status pp_repeat(const pp_block *blk, int microbatches, const int *starts, const pp_config *cfg,
                            pp_schedule **out, char *err) {
    pp__cfg c;
    pp_status st;
    if (out) *out = NULL;
    st = pp__cfg_resolve(cfg, &c, err);
    if (st != PP_OK) return st;
    return pp__repeat(blk, microbatches, starts, &c, 0, out, err);
}

/* A V device's passes of one microbatch, the one set of names for them
   (the V blocks, the grid, v-zb's list builder): F0, F1, B1, B0 in V
   order, then W1, W0; chunk 0 is stage i on device i, chunk 1 stage
   2d-1-i. As cell codes 0 is a free cell, and the order matters: a W's
   code is its B's plus 2. */
enum { PP__V_F0 = 1, PP__V_F1, PP__V_B1, PP__V_B0, PP__V_W1, PP__V_W0 };

/* 1 for the passes that run from device 0 towards d-1 (F0, B1, W1), 0 for
   those that run from d-1 back to 0 (F1, B0, W0) */
static int pp__v_from_first(int k) { return k == PP__V_F0 || k == PP__V_B1 || k == PP__V_W1; }

/* The pass a cell code stands for on device dev: its kind, and its stage
   (F0, B0, W0: chunk 0's stage dev; F1, B1, W1: chunk 1's stage 2d-1-dev). */
static pp_kind pp__v_kind(int k) { return k == PP__V_F0 || k == PP__V_F1 ? PP_F : k == PP__V_B1 || k == PP__V_B0 ? PP_B : PP_W; }

static int pp__v_stage(int d, int dev, int k) { return k == PP__V_F0 || k == PP__V_B0 || k == PP__V_W0 ? dev : 2 * d - 1 - dev; }

/* +1 for a forward (it allocates), -1 for a W (it frees), 0 for the rest */
static int pp__v_mem(int k) { return k == PP__V_F0 || k == PP__V_F1 ? 1 : k == PP__V_W1 || k == PP__V_W0 ? -1 : 0; }

/* The code of pass (k, stage) and its device in *dev (pp__v_kind and
   pp__v_stage inverted): chunk 0 (stage < d) is F0, B0, W0; chunk 1 F1, B1, W1. */
static int pp__v_code(int d, pp_kind k, int stage, int *dev) {
    int upper = stage >= d;
    *dev = upper ? 2 * d - 1 - stage : stage;
    if (k == PP_F) return upper ? PP__V_F1 : PP__V_F0;
    if (k == PP_W) return upper ? PP__V_W1 : PP__V_W0;
    return upper ? PP__V_B1 : PP__V_B0;
}

/* ---- reorder (Appendix C) ----------------------------------------------- */

static double pp__mem_effect(const pp_schedule *s, const pp_pass *p) {
    if (p->kind == PP_F) return s->stage_memory[p->stage];
    if (p->kind == PP_W || p->kind == PP_BW) return -s->stage_memory[p->stage];
    return 0;
}

/* Fill bubbles with later passes of the same device that are ready and fit
   entirely, leaving every other pass where it is, if the device's memory
   stays within cap. cooldown = 0: the bubbles of the warm-up, before the
   first microbatch has gone all the way through (Appendix C); cooldown = 1:
   the bubbles after the device's last F. Returns the number of moves.
   fit: [3 * num_passes] scratch. A pass fits a bubble [gs, ge] when
   max(gs, input) + time <= ge (input: its input's end, plus comm across
   devices), which is max(gs + time, input + time) <= ge to the last bit
   (rounding is monotone). So fit[j] keeps input + time (-DBL_MAX without
   input), fit[P + j] the time, fit[2P + j] the input's key, for the
   positions below vend: a move changes one end in endk, and shifts the
   positions it passes over, so it shifts those entries and recomputes the
   ones whose input it is (found through pos, the position of each known
   pass by its key, not by a scan of the positions after it). A bubble where
   no pass in reach has its input early enough (the common case in the
   warm-up) is told by the least fit[] of each block of 64 positions
   (fit[3P + j / 64]): a position that becomes known lowers its block's
   least, a move recomputes only the blocks whose entries it changed
   (pp__gap_blocks). */
static void pp__gap_blocks(const double *fit, double *bmin, int a, int from, int to, int end) {
    /* bmin[x / 64]: the least fit[x] over its block's known positions of
       this device ([a, end)), for the blocks that [from, to) touches */
    int blk;
    for (blk = from >> 6; blk <= (to - 1) >> 6 && from < to; blk++) {
        int x = blk * 64 > a ? blk * 64 : a, e = blk * 64 + 64 < end ? blk * 64 + 64 : end;
        double m = DBL_MAX;
        for (; x < e; x++) if (fit[x] < m) m = fit[x];
        bmin[blk] = m;
    }
}

static int pp__gap_fill(pp_schedule *s, const double *cap, double *endk, const int *tab, int cooldown, double *fit,
                        int *pos) {
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes, dev, moved = 0, half = pp__dep_half(s);
    int window = 4 * S + 16;
    double warm_end = endk[pp__key(S, n, s->split_backward ? PP_B : PP_BW, 0, 0)];
    const double *stt = s->stage_time, *sm = s->stage_memory;
    double *fdur = fit + P, *fkey = fit + 2 * (size_t)P, *bmin = fit + 3 * (size_t)P;
    for (dev = 0; dev < d; dev++) {
        int a = s->device_start[dev], b = s->device_start[dev + 1], i, lo = a, hi = b - 1, vend = a;
        double gs = 0, cur = 0;
        if (cooldown) {
            for (i = a; i < b; i++) if (s->passes[i].kind == PP_F) lo = i + 1;
        } else {
            for (i = a; i < b && s->passes[i].start < warm_end; i++) {}
            hi = i;
        }
        for (i = a; i < b; i++) {
            double ge = s->passes[i].start;
            while (i >= lo && i <= hi && ge - gs > PP__EPS * (1 + ge)) {
                int j, found = -1, last = i + window < b - 1 ? i + window : b - 1, any = 0, acc;
                double ready = 0, pre = 0, pm = 0, lim = ge + PP__EPS * (1 + ge);
                for (j = vend; j <= last; j++) { /* from vend: every entry below it is set */
                    const pp_pass *p = &s->passes[j];
                    int ds, k = pp__dep_key(tab, S, half, p, &ds);
                    fdur[j] = stt[p->stage * 4 + (int)p->kind];
                    fit[j] = -DBL_MAX;
                    fkey[j] = k;
                    pos[pp__key(S, n, p->kind, p->stage, p->microbatch)] = j;
                    if (k >= 0) {
                        double need = endk[k];
                        if (s->stage_device[ds] != dev) need += s->times.comm;
                        fit[j] = need + fdur[j];
                    }
                    /* its block's least grows by one known position */
                    if (j == a || (j & 63) == 0 || fit[j] < bmin[j >> 6]) bmin[j >> 6] = fit[j];
                }
                if (last + 1 > vend) vend = last + 1;
                /* any pass in reach whose input is early enough? (blocks of 64 by their least) */
                for (j = i + 1; j <= last && !any;) {
                    if ((j & 63) == 0 && j + 63 <= last) {
                        any = bmin[j >> 6] <= lim;
                        j += 64;
                    } else {
                        any = fit[j] <= lim;
                        j++;
                    }
                }
                if (!any) break; /* no pass in reach fits in time, so none fits */
                for (j = i + 1, acc = i; j <= last; j++) {
                    const pp_pass *p = &s->passes[j];
                    if ((j & 63) == 0 && j + 63 <= last && bmin[j >> 6] > lim) { j += 63; continue; } /* none fits in time */
                    if (gs + fdur[j] > lim || fit[j] > lim) continue;
                    if (p->kind == PP_F) {
                        /* pre: memory change over passes i..j-1; pm: its
                           highest point right after an F (0 if none): moving
                           an F to i raises every level in between. Summed
                           in order, only as far as an F that fits in time */
                        for (; acc < j; acc++) {
                            const pp_pass *r = &s->passes[acc];
                            if (r->kind == PP_F) { pre += sm[r->stage]; if (pre > pm) pm = pre; }
                            else pre += pp__mem_effect(s, r);
                        }
                        if (cur + pp__mem_effect(s, p) + pm > cap[dev] + 1e-9) continue;
                    }
                    found = j;
                    break;
                }
                if (found < 0) break;
                {
                    pp_pass tmp = s->passes[found];
                    int ds, k = pp__dep_key(tab, S, half, &tmp, &ds), x;
                    ready = gs;
                    if (k >= 0) {
                        double need = endk[k];
                        if (s->stage_device[ds] != dev) need += s->times.comm;
                        ready = pp__max(ready, need);
                    }
                    memmove(&s->passes[i + 1], &s->passes[i], (size_t)(found - i) * sizeof(pp_pass));
                    memmove(&fit[i + 1], &fit[i], (size_t)(found - i) * sizeof(double));
                    memmove(&fdur[i + 1], &fdur[i], (size_t)(found - i) * sizeof(double));
                    memmove(&fkey[i + 1], &fkey[i], (size_t)(found - i) * sizeof(double));
                    tmp.start = ready;
                    tmp.end = ready + pp__dur(s, &tmp);
                    s->passes[i] = tmp;
                    for (x = i + 1; x <= found; x++) {
                        const pp_pass *p = &s->passes[x];
                        pos[pp__key(S, n, p->kind, p->stage, p->microbatch)] = x;
                    }
                    k = pp__key(S, n, tmp.kind, tmp.stage, tmp.microbatch);
                    pos[k] = i;
                    endk[k] = tmp.end;
                    pp__gap_blocks(fit, bmin, a, i, found + 1, vend);
                    {
                        /* the passes waiting for this one on this device, at
                           positions (i, vend): those whose input is key k
                           (the same microbatch, a stage at most one away) */
                        int ck, cs;
                        for (cs = tmp.stage - 1; cs <= tmp.stage + 1; cs++) {
                            if (cs < 0 || cs >= S || s->stage_device[cs] != dev) continue;
                            for (ck = 0; ck < 4; ck++) {
                                pp_pass c;
                                int dx, kc;
                                c.kind = (pp_kind)ck; c.stage = cs; c.microbatch = tmp.microbatch;
                                if (pp__dep_key(tab, S, half, &c, &dx) != k) continue;
                                x = pos[pp__key(S, n, c.kind, cs, tmp.microbatch)];
                                if (x <= i || x >= vend) continue;
                                kc = (int)s->passes[x].kind;
                                if (kc != ck || s->passes[x].stage != cs || s->passes[x].microbatch != tmp.microbatch) continue;
                                fit[x] = tmp.end + (s->stage_device[dx] != dev ? s->times.comm : 0) + fdur[x];
                                pp__gap_blocks(fit, bmin, a, x, x + 1, vend);
                            }
                        }
                    }
                    gs = tmp.end;
                    cur += pp__mem_effect(s, &tmp);
                    moved++;
                    i++;
                    hi++;
                }
            }
            gs = s->passes[i].end;
            cur += pp__mem_effect(s, &s->passes[i]);
        }
    }
    return moved;
}

/* Fill, squeeze, again: moving a pass earlier lets its dependents move too.
   squeezed: s's times are already its order squeezed (a round that moves
   nothing then needs no squeeze: squeezing depends on the order alone). */
static pp_status pp__gap_fill_rounds(pp_schedule *s, const double *cap, double *endk, int cooldown, int squeezed,
                                     char *err) {
    int iter, i;
    pp_status st = PP_OK;
    int *tab = (int *)pp__malloc(&s->allocator, pp__size((size_t)s->stages, 16u * sizeof(int)));
    double *fit = (double *)pp__malloc(&s->allocator, pp__size((size_t)s->num_passes + 64, 4u * sizeof(double)));
    int *pos = (int *)pp__malloc(&s->allocator, pp__size((size_t)4 * s->stages, (size_t)s->microbatches * sizeof(int)));
    if (!tab || !fit || !pos) {
        pp__mfree(&s->allocator, tab); pp__mfree(&s->allocator, fit); pp__mfree(&s->allocator, pos);
        pp__err(err, "out of memory in reorder");
        return PP_ERR_OUT_OF_MEMORY;
    }
    pp__dep_table(s, tab);
    /* (every entry set: a position is looked up by keys not yet known too) */
    memset(pos, 0xff, (size_t)4 * s->stages * (size_t)s->microbatches * sizeof(int));
    for (iter = 0; iter < 4 && st == PP_OK; iter++) {
        int moved;
        for (i = 0; i < s->num_passes; i++) {
            const pp_pass *p = &s->passes[i];
            endk[pp__key(s->stages, s->microbatches, p->kind, p->stage, p->microbatch)] = p->end;
        }
        moved = pp__gap_fill(s, cap, endk, tab, cooldown, fit, pos);
        if (!moved && (iter > 0 || squeezed)) break;
        st = pp__squeeze(s, NULL, err);
        if (!moved) break;
    }
    pp__mfree(&s->allocator, tab); pp__mfree(&s->allocator, fit); pp__mfree(&s->allocator, pos);
    return st;
}

/* Cool-down (Appendix C): W passes are taken out, the rest squeezed, then
   each device puts the W passes back into its bubbles after their B (oldest
   first) and appends the rest. all = 0 takes out the W passes after the
   device's last F, the paper's cool-down; all = 1 takes out every W, which
   lets B chains run ahead in the stable phase too: a W is then forced in
   before an F whenever that F would lift the device above cap. */
static pp_status pp__wfill(pp_schedule *s, double *endk, const double *cap, int all, char *err) {
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes, dev, i;
    pp_allocator *al = &s->allocator;
    unsigned char *skip;
    int *pidx, *rdy;
    pp_pass *tmp, *pend;
    pp_status st;
    if (!s->split_backward) return PP_OK;
    skip = (unsigned char *)pp__malloc(al, (size_t)P);
    pidx = (int *)pp__malloc(al, pp__size((size_t)S * (size_t)n, sizeof(int)));
    rdy = (int *)pp__malloc(al, pp__size((size_t)P, sizeof(int)));
    tmp = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof(pp_pass)));
    pend = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof(pp_pass)));
    if (!skip || !pidx || !rdy || !tmp || !pend) {
        pp__mfree(al, skip); pp__mfree(al, pidx); pp__mfree(al, rdy); pp__mfree(al, tmp); pp__mfree(al, pend);
        pp__err(err, "out of memory in reorder");
        return PP_ERR_OUT_OF_MEMORY;
    }
    memset(skip, 0, (size_t)P);
    for (i = 0; i < S * n; i++) pidx[i] = -1;
    for (dev = 0; dev < d; dev++) {
        int a = s->device_start[dev], b = s->device_start[dev + 1], lf = a - 1;
        if (!all)
            for (i = a; i < b; i++) if (s->passes[i].kind == PP_F) lf = i;
        for (i = lf + 1; i < b; i++) if (s->passes[i].kind == PP_W) skip[i] = 1;
    }
    st = pp__squeeze(s, skip, err);
    if (st == PP_OK) {
        for (i = 0; i < P; i++) {
            const pp_pass *p = &s->passes[i];
            if (!skip[i]) endk[pp__key(S, n, p->kind, p->stage, p->microbatch)] = p->end;
        }
        for (dev = 0; dev < d; dev++) {
            /* pend: this device's W passes taken out, in order; rdy: the indices
               into pend whose B has run and that are not placed yet, in order */
            int a = s->device_start[dev], b = s->device_start[dev + 1], np = 0, nt = 0, nr = 0, q, x, placed;
            double t = 0, mem = 0, wmin = 0;
            for (i = a; i < b; i++)
                if (skip[i]) {
                    pidx[s->passes[i].stage * n + s->passes[i].microbatch] = np;
                    if (!np || pp__dur(s, &s->passes[i]) < wmin) wmin = pp__dur(s, &s->passes[i]);
                    pend[np++] = s->passes[i];
                }
            if (!np) continue;
            for (i = a; i < b; i++) {
                const pp_pass *cur = &s->passes[i];
                if (skip[i]) continue;
                /* bubbles before this pass: W passes that fit, oldest first (t
                   only grows, so one sweep sees every W that can still fit).
                   None fits when the shortest W does not fit right at t (a W
                   ends at or after t + its time): skip the scan then, the
                   common case in the stable phase. */
                placed = 0;
                if (nr > 0 && t + wmin <= cur->start + PP__EPS * (1 + cur->start))
                for (q = 0; q < nr; q++) {
                    pp_pass *w = &pend[rdy[q]];
                    double ready = pp__max(t, endk[pp__key(S, n, PP_B, w->stage, w->microbatch)]), dur = pp__dur(s, w);
                    if (ready + dur > cur->start + PP__EPS * (1 + cur->start)) continue;
                    tmp[nt] = *w;
                    tmp[nt].start = ready;
                    tmp[nt].end = t = ready + dur;
                    mem -= s->stage_memory[w->stage];
                    nt++;
                    w->microbatch = -1 - w->microbatch;
                    rdy[q] = -1;
                    placed = 1;
                }
                if (placed) {
                    for (q = x = 0; q < nr; q++) if (rdy[q] >= 0) rdy[x++] = rdy[q];
                    nr = x;
                }
                /* an F that would break the cap takes W passes first */
                for (q = 0; cur->kind == PP_F && q < nr && mem + s->stage_memory[cur->stage] > cap[dev] + 1e-9; q++) {
                    pp_pass *w = &pend[rdy[q]];
                    tmp[nt] = *w;
                    tmp[nt].start = pp__max(t, endk[pp__key(S, n, PP_B, w->stage, w->microbatch)]);
                    tmp[nt].end = t = tmp[nt].start + pp__dur(s, w);
                    mem -= s->stage_memory[w->stage];
                    nt++;
                    w->microbatch = -1 - w->microbatch;
                }
                if (q > 0) { memmove(rdy, rdy + q, (size_t)(nr - q) * sizeof(int)); nr -= q; }
                tmp[nt] = *cur;
                tmp[nt].start = pp__max(cur->start, t);
                tmp[nt].end = t = tmp[nt].start + pp__dur(s, cur);
                nt++;
                mem += pp__mem_effect(s, cur);
                if (cur->kind == PP_B) {
                    /* its W, if taken out, is ready now: insert in pend order */
                    int k = pidx[cur->stage * n + cur->microbatch];
                    if (k >= 0 && k < np && pend[k].stage == cur->stage && pend[k].microbatch == cur->microbatch) {
                        for (x = nr; x > 0 && rdy[x - 1] > k; x--) rdy[x] = rdy[x - 1];
                        rdy[x] = k;
                        nr++;
                    }
                }
            }
            for (q = 0; q < np; q++)
                if (pend[q].microbatch >= 0) tmp[nt++] = pend[q];
            for (q = 0; q < nt; q++)
                if (tmp[q].microbatch < 0) tmp[q].microbatch = -1 - tmp[q].microbatch;
            PP_ASSERT(nt == b - a);
            memcpy(&s->passes[a], tmp, (size_t)nt * sizeof(pp_pass));
        }
    }
    pp__mfree(al, skip); pp__mfree(al, pidx); pp__mfree(al, rdy); pp__mfree(al, tmp); pp__mfree(al, pend);
    if (st != PP_OK) return st;
    return pp__squeeze(s, NULL, err);
}

/* a hint that *p is read soon; nothing without GCC or Clang */
#if defined(__GNUC__) || defined(__clang__)
#define PP__PREFETCH(p) __builtin_prefetch(p)
#else
#define PP__PREFETCH(p) ((void)0)
#endif

/* the index of the lowest set bit of x (x != 0) */
static int pp__ctz64(unsigned long long x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    static const unsigned char pos[64] = {0,  1,  56, 2,  57, 49, 28, 3,  61, 58, 42, 50, 38, 29, 17, 4,
                                          62, 47, 59, 36, 45, 43, 51, 22, 53, 39, 33, 30, 24, 18, 12, 5,
                                          63, 55, 48, 27, 60, 41, 37, 16, 46, 35, 44, 21, 52, 32, 23, 11,
                                          54, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,  13, 8,  7,  6};
    return pos[((x & (0 - x)) * 0x03f79d71b4ca8b09ull) >> 58];
#endif
}

/* pp__list_reorder's tournament: of two devices (-1: none, no passes
   left) the one free first, the lower on a tie; win[K + i] is device i's
   leaf, win[1] the winner. pp__list_replay plays device dev's path again
   after its free_at changed (live = 0: it has no passes left). */
static int pp__list_win(const double *free_at, int a, int b) {
    if (a < 0) return b;
    if (b < 0) return a;
    return free_at[b] < free_at[a] || (free_at[b] == free_at[a] && b < a) ? b : a;
}
static void pp__list_replay(int *win, int K, const double *free_at, int dev, int live) {
    int x = K + dev;
    win[x] = live ? dev : -1;
    for (x /= 2; x >= 1; x /= 2) win[x] = pp__list_win(free_at, win[2 * x], win[2 * x + 1]);
}

/* The same rule run forward in time: whenever a device falls idle in the
   warm-up (before the first microbatch is through) or in its cool-down
   (after its last F), it runs the first pass of its order that is ready,
   an F only while memory stays within cap; in the cool-down B passes go
   before W passes so the backward chains are not held up. In the stable
   phase each device keeps its order. */
static pp_status pp__list_reorder(pp_schedule *s, const double *cap, double warm_end, char *err) {
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes, window = 4 * S + 16, left = P, i;
    int half = pp__dep_half(s);
    pp_allocator *al = &s->allocator;
    size_t keys = (size_t)4 * S * n;
    pp_pass *out = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof(pp_pass)));
    unsigned char *taken = (unsigned char *)pp__malloc(al, (size_t)P);
    double *endk = (double *)pp__malloc(al, pp__size(keys, sizeof(double)));
    double *free_at = (double *)pp__malloc(al, pp__size((size_t)d, sizeof(double)));
    double *mem = (double *)pp__malloc(al, pp__size((size_t)d, sizeof(double)));
    int *head = (int *)pp__malloc(al, pp__size((size_t)d, sizeof(int)));
    int *fill = (int *)pp__malloc(al, pp__size((size_t)d, sizeof(int)));
    int *fleft = (int *)pp__malloc(al, pp__size((size_t)d, sizeof(int)));
    int *tab = (int *)pp__malloc(al, pp__size((size_t)S, 16u * sizeof(int)));
    int K = 1, *win; /* win[1..2K): a tournament over the devices (pp__list_win) */
    /* ev[1..2K): a second tournament, over every device's free_at (live or
       done), for the next event after t; a leaf whose free_at is at or
       before t + eps is dropped (-1) when a query meets it: t never goes
       back, so it stays out until its device's free_at changes. One query
       is O(log d) amortized instead of a scan over the devices. */
    int *ev;
    /* ready: bit j set when pass j is not taken and its input has run (or
       it has none), so the scan for a pass to run skips the others in 64s;
       dstart/dlist: the passes waiting for each key (CSR), to set theirs */
    size_t words = ((size_t)P + 63) / 64;
    unsigned long long *ready = (unsigned long long *)pp__malloc(al, pp__size(words, sizeof(unsigned long long)));
    int *dstart = (int *)pp__malloc(al, pp__size(keys + 1, sizeof(int)));
    int *dlist = (int *)pp__malloc(al, pp__size((size_t)P, sizeof(int)));
    pp_status st = PP_OK;
    while (K < d) K *= 2;
    win = (int *)pp__malloc(al, pp__size(2u * (size_t)K, sizeof(int)));
    ev = (int *)pp__malloc(al, pp__size(2u * (size_t)K, sizeof(int)));
    if (!out || !taken || !endk || !free_at || !mem || !head || !fill || !fleft || !tab || !win || !ev || !ready ||
        !dstart || !dlist) {
        pp__err(err, "out of memory in reorder");
        st = PP_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    memset(taken, 0, (size_t)P);
    pp__dep_table(s, tab);
    memset(ready, 0, words * sizeof(unsigned long long));
    memset(dstart, 0, (keys + 1) * sizeof(int));
    for (i = 0; i < P; i++) {
        int ds, k = pp__dep_key(tab, S, half, &s->passes[i], &ds);
        if (k >= 0) dstart[k + 1]++;
        else ready[i >> 6] |= 1ull << (i & 63);
    }
    for (i = 0; i < (int)keys; i++) dstart[i + 1] += dstart[i];
    for (i = 0; i < P; i++) {
        int ds, k = pp__dep_key(tab, S, half, &s->passes[i], &ds);
        if (k >= 0) dlist[dstart[k]++] = i;
    }
    for (i = (int)keys; i > 0; i--) dstart[i] = dstart[i - 1]; /* back to the starts */
    dstart[0] = 0;
    for (i = 0; i < d; i++) {
        int j;
        free_at[i] = 0; mem[i] = 0; head[i] = fill[i] = s->device_start[i]; fleft[i] = 0;
        for (j = s->device_start[i]; j < s->device_start[i + 1]; j++) fleft[i] += s->passes[j].kind == PP_F;
    }
    for (i = 0; i < K; i++) win[K + i] = i < d && head[i] < s->device_start[i + 1] ? i : -1;
    for (i = K - 1; i >= 1; i--) win[i] = pp__list_win(free_at, win[2 * i], win[2 * i + 1]);
    for (i = 0; i < K; i++) ev[K + i] = i < d ? i : -1;
    for (i = K - 1; i >= 1; i--) ev[i] = pp__list_win(free_at, ev[2 * i], ev[2 * i + 1]);
    while (left > 0) {
        int dev, j, last, pick = -1, pick_w = -1, flexible;
        double t, rmin = -1, next = -1;
        /* the device with passes left that is free first (the lowest on a tie) */
        dev = win[1];
        t = free_at[dev];
        flexible = t < warm_end - PP__EPS || fleft[dev] == 0;
        last = flexible ? head[dev] + window : head[dev];
        if (last > s->device_start[dev + 1] - 1) last = s->device_start[dev + 1] - 1;
        for (j = head[dev]; j <= last && pick < 0;) {
            /* the next pass at or after j that is not taken and whose input has run */
            unsigned long long bits = ready[j >> 6] & (~0ull << (j & 63));
            const pp_pass *p;
            int ds, k;
            double r = 0;
            if (!bits) { j = (j | 63) + 1; continue; }
            j = (j & ~63) + pp__ctz64(bits);
            if (j > last) break;
            p = &s->passes[j];
            if ((k = pp__dep_key(tab, S, half, p, &ds)) >= 0)
                r = endk[k] + (s->stage_device[ds] != dev ? s->times.comm : 0);
            if (p->kind == PP_F && j != head[dev] && mem[dev] + s->stage_memory[p->stage] > cap[dev] + 1e-9) { j++; continue; }
            if (r > t + PP__EPS * (1 + t)) { if (rmin < 0 || r < rmin) rmin = r; j++; continue; }
            if (p->kind == PP_W && fleft[dev] == 0) { if (pick_w < 0) pick_w = j; j++; continue; }
            pick = j;
        }
        if (pick < 0) pick = pick_w;
        if (pick < 0) {
            /* nothing ready: wait for the next event anywhere, the first
               free_at after t + eps of any device (dev's own is t) */
            while (ev[1] >= 0 && !(free_at[ev[1]] > t + PP__EPS)) pp__list_replay(ev, K, free_at, ev[1], 0);
            if (ev[1] >= 0) next = free_at[ev[1]];
            if (rmin >= 0 && (next < 0 || rmin < next)) next = rmin;
            if (next < 0) {
                pp__err(err, "reorder: device %d cannot go on at time %g", dev, t);
                st = PP_ERR_DEADLOCK;
                goto cleanup;
            }
            free_at[dev] = next;
            pp__list_replay(win, K, free_at, dev, 1);
            pp__list_replay(ev, K, free_at, dev, 1);
            continue;
        }
        {
            pp_pass p = s->passes[pick];
            int ds, k;
            double r = t;
            if ((k = pp__dep_key(tab, S, half, &p, &ds)) >= 0) {
                r = pp__max(t, endk[k] + (s->stage_device[ds] != dev ? s->times.comm : 0));
            }
            p.start = r;
            p.end = r + pp__dur(s, &p);
            k = pp__key(S, n, p.kind, p.stage, p.microbatch);
            endk[k] = p.end;
            for (i = dstart[k]; i < dstart[k + 1]; i++) ready[dlist[i] >> 6] |= 1ull << (dlist[i] & 63);
            ready[pick >> 6] &= ~(1ull << (pick & 63));
            free_at[dev] = p.end;
            mem[dev] += pp__mem_effect(s, &p);
            if (p.kind == PP_F) fleft[dev]--;
            out[fill[dev]++] = p;
            taken[pick] = 1;
            left--;
            while (head[dev] < s->device_start[dev + 1] && taken[head[dev]]) head[dev]++;
            pp__list_replay(win, K, free_at, dev, head[dev] < s->device_start[dev + 1]);
            pp__list_replay(ev, K, free_at, dev, 1);
        }
    }
    memcpy(s->passes, out, (size_t)P * sizeof(pp_pass));
    st = pp__squeeze(s, NULL, err);
cleanup:
    pp__mfree(al, out); pp__mfree(al, taken); pp__mfree(al, endk);
    pp__mfree(al, free_at); pp__mfree(al, mem); pp__mfree(al, head); pp__mfree(al, fill); pp__mfree(al, fleft);
    pp__mfree(al, tab); pp__mfree(al, win); pp__mfree(al, ev); pp__mfree(al, ready); pp__mfree(al, dstart);
    pp__mfree(al, dlist);
    return st;
}

typedef struct pp__ref { double start; int dev, idx; } pp__ref;

static int pp__cmp_ref(const void *a, const void *b) {
    const pp__ref *x = (const pp__ref *)a, *y = (const pp__ref *)b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->dev != y->dev) return x->dev - y->dev;
    return x->idx - y->idx;
}

/* Every pass of s into refs in (start, device, index) order, pp__cmp_ref's.
   When each device's passes already run in start order (a squeezed
   schedule) that is a merge of the d runs, by a tournament of losers:
   K >= d leaves (a power of two), key[r] the start of run r's next pass
   (DBL_MAX when it has none), node x holds the run that lost there and
   the winner goes on up; each pass out replays its run's path, one
   comparison per level. Otherwise qsort. scratch: [4 * d] ints, key:
   [2 * d] doubles. With tmp ([2P] ints; NULL: none), a counting sort
   gives the same order without the tournament's comparisons: where every
   start is a whole number below 2P (the unit grid, where most sweeps run)
   by start, else into P buckets by start, then each bucket by start (the
   passes go in in device order, and both sorts keep it on a tie). */
/* The sweep's gap bitset, summarised: bit w of s1 is set when word w of
   the gap bits is not 0, bit j of s2 when word j of s1 is not 0, so the
   next gap after a run of passes without one is found in a few words
   rather than by walking the run (a stable phase without bubbles is
   most of a device). pp__gap_sum refreshes word w's bits in the summaries;
   pp__gap_next gives the first nonzero gap word after w (-1: none; W1, W2:
   the summaries' lengths in words). */
static void pp__gap_sum(const unsigned long long *gw, unsigned long long *s1, unsigned long long *s2, int w) {
    int j = w >> 6;
    if (gw[w]) s1[j] |= 1ull << (w & 63);
    else s1[j] &= ~(1ull << (w & 63));
    if (s1[j]) s2[j >> 6] |= 1ull << (j & 63);
    else s2[j >> 6] &= ~(1ull << (j & 63));
}
static int pp__gap_next(const unsigned long long *s1, const unsigned long long *s2, int w, int W1, int W2) {
    unsigned long long bits;
    int j, k;
    w++;
    j = w >> 6;
    if (j >= W1) return -1;
    bits = s1[j] & (~0ull << (w & 63));
    if (bits) return j * 64 + pp__ctz64(bits);
    j++;
    k = j >> 6;
    if (k >= W2) return -1;
    bits = s2[k] & (~0ull << (j & 63));
    while (!bits && ++k < W2) bits = s2[k];
    if (!bits) return -1;
    j = k * 64 + pp__ctz64(bits);
    return j * 64 + pp__ctz64(s1[j]);
}

static void pp__sort_refs(const pp_schedule *s, pp__ref *refs, int *scratch, double *key, int *tmp) {
    int d = s->devices, P = s->num_passes, i, k, K = 1, w, x, whole = 1;
    double tmax = 0;
    int *cur, *lose;
    const pp_pass *ps = s->passes;
    for (i = 0; i < d; i++)
        for (k = s->device_start[i] + 1; k < s->device_start[i + 1]; k++)
            if (ps[k].start < ps[k - 1].start) {
                for (k = 0; k < P; k++) { refs[k].start = ps[k].start; refs[k].dev = ps[k].device; refs[k].idx = k; }
                qsort(refs, (size_t)P, sizeof(pp__ref), pp__cmp_ref);
                return;
            }
    for (k = 0; k < P && tmp; k++) {
        double t = ps[k].start;
        if (!(t >= 0 && t <= 1e300)) tmp = NULL;
        else {
            if (t > tmax) tmax = t;
            if (whole && (t > 2.0 * P - 2 || t != (double)(int)t)) whole = 0;
        }
    }
    if (tmp) {
        /* bucket of a start: itself where every start is whole, else its
           place in P equal parts of [0, tmax] (monotone in the start) */
        int B = whole ? (int)tmax + 1 : P;
        long long work = 0; /* the insertions' moves: past 8P (starts bunched in few buckets), the tournament */
        double scale = whole || tmax <= 0 ? 1 : (double)(B - 1) / tmax;
#define PP__BUCKET(t) (whole ? (int)(t) : (int)((t) * scale) < B ? (int)((t) * scale) : B - 1)
        for (k = 0; k <= B; k++) tmp[k] = 0;
        for (k = 0; k < P; k++) tmp[PP__BUCKET(ps[k].start) + 1]++;
        for (k = 1; k <= B; k++) tmp[k] += tmp[k - 1];
        for (i = 0; i < d; i++)
            for (k = s->device_start[i]; k < s->device_start[i + 1]; k++) {
                int at = tmp[PP__BUCKET(ps[k].start)]++;
                refs[at].start = ps[k].start; refs[at].dev = i; refs[at].idx = k;
            }
#undef PP__BUCKET
        /* tmp[b]: the end of bucket b; within a bucket the passes are in
           device order, so a stable sort by start gives pp__cmp_ref's
           order (the tournament's, where the buckets hold too many passes
           out of order) */
        for (w = 0; w < B && !whole && work <= 8LL * P; w++)
            for (x = (w ? tmp[w - 1] : 0) + 1; x < tmp[w] && work <= 8LL * P; x++) {
                pp__ref r = refs[x];
                int y = x;
                for (; y > (w ? tmp[w - 1] : 0) && refs[y - 1].start > r.start; y--) refs[y] = refs[y - 1];
                refs[y] = r;
                work += x - y;
            }
        if (work <= 8LL * P) return;
    }
    while (K < d) K *= 2;
    cur = scratch; lose = cur + K;
    for (i = 0; i < K; i++) {
        cur[i] = i < d ? s->device_start[i] : 0;
        key[i] = i < d && cur[i] < s->device_start[i + 1] ? ps[cur[i]].start : DBL_MAX;
    }
#define PP__BEFORE(a, b) (key[a] < key[b] || (key[a] == key[b] && (a) < (b)))
    /* built by playing the runs up from their leaves in order: a run stops
       at the first empty node (its subtree's other half is still to come),
       and the one that gets past the top (lose[0]) wins */
    for (x = 1; x < K; x++) lose[x] = -1;
    for (i = 0; i < K; i++) {
        w = i;
        for (x = (K + i) / 2; x >= 1 && w >= 0; x /= 2) {
            if (lose[x] < 0) { lose[x] = w; w = -1; }
            else if (PP__BEFORE(lose[x], w)) { int t = lose[x]; lose[x] = w; w = t; }
        }
        if (w >= 0) lose[0] = w;
    }
    w = lose[0];
    for (k = 0; k < P; k++) {
        double kw;
        refs[k].start = key[w]; refs[k].dev = w; refs[k].idx = cur[w];
        cur[w]++;
        key[w] = kw = cur[w] < s->device_start[w + 1] ? ps[cur[w]].start : DBL_MAX;
        /* PP__BEFORE(lose[x], w) without branches: which run wins a node
           is data, not a pattern a branch predictor learns */
        for (x = (K + w) / 2; x >= 1; x /= 2) {
            int l = lose[x], b;
            double kl = key[l];
            b = (kl < kw) | ((kl == kw) & (l < w));
            lose[x] = b ? w : l;
            w = b ? l : w;
            kw = b ? kl : kw;
        }
    }
#undef PP__BEFORE
}

/* Appendix C as one sweep over all passes in time order: a pass of the
   warm-up (it starts before the first microbatch's backward reaches stage
   0) or of the cool-down (it starts after stage 0's last F) moves to the
   earliest bubble of its device that comes after its dependencies and holds
   it, if memory stays within cap; every other pass stays. grid = 1 runs the
   sweep on the unit grid (F, B, W one cell) and squeezes with real times
   afterwards, grid = 0 on the real times. */
static pp_status pp__sweep_reorder(pp_schedule *s, const double *cap, int flags, char *err) {
    int grid = flags & 1, all = flags & 2;
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes, i, k, half = pp__dep_half(s);
    pp_allocator *al = &s->allocator;
    size_t keys = (size_t)4 * S * n;
    pp__ref *refs = (pp__ref *)pp__malloc(al, pp__size((size_t)P, sizeof(pp__ref)));
    pp_pass *placed = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof(pp_pass)));
    double *lev = (double *)pp__malloc(al, pp__size((size_t)P, sizeof(double)));
    double *endk = (double *)pp__malloc(al, pp__size(keys, sizeof(double)));
    double *saved_time = (double *)pp__malloc(al, pp__size((size_t)S * 4u, sizeof(double)));
    int *cnt = (int *)pp__malloc(al, pp__size(5u * (size_t)d + 16u * (size_t)S, sizeof(int))); /* and pp__sort_refs' scratch, the dep table */
    double *key = (double *)pp__malloc(al, pp__size(2u * (size_t)d, sizeof(double)));
    /* gap: per device a bitset over the placed passes, bit x set when
       placed pass x does not start exactly where the one before it ends
       (woff[dev]: the device's first word) */
    unsigned long long *gap = (unsigned long long *)pp__malloc(al, pp__size((size_t)P / 64u + 2u * (size_t)d + 1u,
                                                                            sizeof(unsigned long long)));
    int *woff = (int *)pp__malloc(al, pp__size(3u * ((size_t)d + 1u), sizeof(int)));
    unsigned long long *sum = NULL; /* the gap words' summaries (pp__gap_sum): s1 at woff[d + 1 + dev], s2 after */
    double warm_end = 0, cool_start = 0, comm = s->times.comm, smax = 0;
    pp_status st = PP_OK;
    if (!refs || !placed || !lev || !endk || !saved_time || !cnt || !key || !gap || !woff) {
        pp__err(err, "out of memory in reorder");
        st = PP_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    memcpy(saved_time, s->stage_time, (size_t)S * 4u * sizeof(double));
    if (grid) {
        for (i = 0; i < S; i++) {
            s->stage_time[i * 4 + PP_F] = s->stage_time[i * 4 + PP_B] = s->stage_time[i * 4 + PP_W] = 1;
            s->stage_time[i * 4 + PP_BW] = 2;
        }
        s->times.comm = 0;
        st = pp__squeeze(s, NULL, err);
        if (st != PP_OK) goto cleanup;
    }
    for (i = 0; i < P; i++) {
        const pp_pass *p = &s->passes[i];
        if (p->stage == 0 && p->microbatch == 0 && p->kind != PP_F && p->kind != PP_W) warm_end = p->start;
        if (p->stage == pp__route_first(S, n, s->copies, n - 1) && p->microbatch == n - 1 && p->kind == PP_F)
            cool_start = p->start;
    }
    pp__sort_refs(s, refs, cnt + d, key, (int *)lev); /* (lev: P doubles, not yet in use) */
    pp__dep_table(s, cnt + 5 * d);
    for (i = 0; i < d; i++) cnt[i] = 0;
    for (i = 0, woff[0] = 0; i < d; i++) woff[i + 1] = woff[i] + (s->device_start[i + 1] - s->device_start[i]) / 64 + 2;
    memset(gap, 0, (size_t)woff[d] * sizeof(unsigned long long));
    /* per device W1 = W0 / 64 + 1 words of s1, then W2 = W1 / 64 + 1 of s2 */
    for (i = 0, woff[d + 1] = 0; i < d; i++) {
        int w1 = (woff[i + 1] - woff[i]) / 64 + 1;
        woff[d + 2 + i] = woff[d + 1 + i] + w1 + w1 / 64 + 1;
    }
    sum = (unsigned long long *)pp__malloc(al, pp__size((size_t)woff[2 * d + 1] + 1u, sizeof(unsigned long long)));
    if (!sum) {
        pp__err(err, "out of memory in reorder");
        st = PP_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    memset(sum, 0, ((size_t)woff[2 * d + 1] + 1u) * sizeof(unsigned long long));
    for (k = 0; k < P; k++) {
        pp_pass p = s->passes[refs[k].idx];
        if (k + 8 < P) PP__PREFETCH(&s->passes[refs[k + 8].idx]); /* (time order: the passes of many devices) */
        int dev = p.device, base = s->device_start[dev], m = cnt[dev], pos = m, q, movable, ds, in;
        unsigned long long *gw = gap + woff[dev], *s1 = sum + woff[d + 1 + dev];
        int W1 = (woff[dev + 1] - woff[dev]) / 64 + 1, W2 = W1 / 64 + 1;
        unsigned long long *s2 = s1 + W1;
        double r = 0, dur = pp__dur(s, &p), start = p.start;
        movable = all || p.start <= warm_end || p.start > cool_start;
        if ((in = pp__dep_key(cnt + 5 * d, S, half, &p, &ds)) >= 0)
            r = endk[in] + (s->stage_device[ds] != dev ? comm : 0);
        /* a bubble starts at r or later (gs >= r): none is earlier than start when r is not */
        if (movable && !(r < start - PP__EPS * (1 + start))) movable = 0;
        if (movable) {
            /* earliest bubble after r among the placed passes that holds dur */
            /* a bubble must end at or after r + dur: skip the passes that start
               before that (starts on a device are sorted) */
            int lo = 0, hi = m, late = 1;
            double prev_end, need = r + dur, thr = start - PP__EPS * (1 + start);
            /* (the starts are not always sorted, with comm: so the same
               bisection as ever, not a search that would probe elsewhere) */
            while (lo < hi) {
                int mid = lo + (hi - lo) / 2;
                double ms = placed[base + mid].start;
                int below = ms + PP__EPS * (1 + ms) < need; /* (no branch: the way it goes is data) */
                lo = below ? mid + 1 : lo;
                hi = below ? hi : mid;
            }
            prev_end = lo > 0 ? placed[base + lo - 1].end : 0;
            for (q = lo; q <= m; q++) {
                double gs, ge;
                if (late && prev_end >= thr) {
                    /* no bubble from here on starts before start (gs >=
                       prev_end) when no pass after ends earlier: stay at
                       the end */
                    int x;
                    late = 0;
                    for (x = q; x < m && placed[base + x].end >= thr; x++) {}
                    if (x == m) break;
                }
                if (q < m && prev_end >= r && dur > 4e-9 * (1 + smax) && !(gw[q >> 6] >> (q & 63) & 1)) {
                    /* a pass that starts where the one before ends, after r:
                       no room there for a pass longer than twice the
                       clock's tolerance; go to the next bubble */
                    int w = q >> 6, q2;
                    unsigned long long bits = gw[w] & (~0ull << (q & 63));
                    if (!bits) { /* the next word with a gap, at most word m / 64 */
                        int nw = pp__gap_next(s1, s2, w, W1, W2);
                        if (nw >= 0 && nw <= m >> 6) { w = nw; bits = gw[w]; }
                    }
                    q2 = bits ? w * 64 + pp__ctz64(bits) : m;
                    if (q2 > m) q2 = m;
                    q = q2;
                    prev_end = placed[base + q - 1].end;
                }
                gs = pp__max(prev_end, r);
                ge = q < m ? placed[base + q].start : start;
                if (q == m) ge = pp__max(ge, gs + dur); /* at the end it may stay where it is */
                if (gs + dur <= ge + PP__EPS * (1 + ge) && gs < start - PP__EPS * (1 + start)) {
                    int ok = 1, x;
                    if (p.kind == PP_F) {
                        /* lev[x]: memory after placed pass x; an F raises every later level */
                        double add = s->stage_memory[p.stage];
                        if ((q > 0 ? lev[base + q - 1] : 0) + add > cap[dev] + 1e-9) ok = 0;
                        for (x = q; x < m && ok; x++) {
                            const pp_pass *y = &placed[base + x];
                            double during = (x > 0 ? lev[base + x - 1] : 0) +
                                            (y->kind == PP_F ? s->stage_memory[y->stage] : 0);
                            if (during + add > cap[dev] + 1e-9) ok = 0;
                        }
                    }
                    if (ok) { pos = q; start = gs; break; }
                }
                if (q < m) prev_end = placed[base + q].end;
            }
        }
        if (pos == m) start = pp__max(start, r);
        p.start = start;
        p.end = start + dur;
        if (pos < m) {
            memmove(&placed[base + pos + 1], &placed[base + pos], (size_t)(m - pos) * sizeof(pp_pass));
            memmove(&lev[base + pos + 1], &lev[base + pos], (size_t)(m - pos) * sizeof(double));
        }
        placed[base + pos] = p;
        {
            double eff = pp__mem_effect(s, &p);
            int x;
            lev[base + pos] = (pos > 0 ? lev[base + pos - 1] : 0) + eff;
            for (x = pos + 1; x <= m; x++) lev[base + x] += eff;
        }
        if (pos < m) { /* the bits from pos on move up one */
            int w, pw = pos >> 6;
            unsigned long long low = (1ull << (pos & 63)) - 1;
            for (w = (m + 1) >> 6; w > pw; w--) {
                gw[w] = gw[w] << 1 | gw[w - 1] >> 63;
                pp__gap_sum(gw, s1, s2, w);
            }
            gw[pw] = (gw[pw] & low) | (gw[pw] & ~low) << 1;
            pp__gap_sum(gw, s1, s2, pw);
        }
        for (q = pos; q <= pos + 1 && q <= m; q++) {
            unsigned long long bit = 1ull << (q & 63);
            if (q == 0 || placed[base + q].start != placed[base + q - 1].end) gw[q >> 6] |= bit;
            else gw[q >> 6] &= ~bit;
            pp__gap_sum(gw, s1, s2, q >> 6);
        }
        if (p.start > smax) smax = p.start;
        cnt[dev]++;
        endk[pp__key(S, n, p.kind, p.stage, p.microbatch)] = p.end;
    }
    memcpy(s->passes, placed, (size_t)P * sizeof(pp_pass));
cleanup:
    if (saved_time) {
        memcpy(s->stage_time, saved_time, (size_t)S * 4u * sizeof(double));
        s->times.comm = comm;
    }
    if (st == PP_OK) st = pp__squeeze(s, NULL, err);
    pp__mfree(al, refs); pp__mfree(al, placed); pp__mfree(al, lev); pp__mfree(al, endk);
    pp__mfree(al, saved_time); pp__mfree(al, cnt); pp__mfree(al, key); pp__mfree(al, gap); pp__mfree(al, woff);
    pp__mfree(al, sum);
    return st;
}

/* The reorder variants: Appendix C's warm-up fill then cool-down refill,
   and ours. Each is a first step (variants with the same first step run it
   once: a step depends on the pass order alone), an optional W refill
   (pp__wfill: 0 = Appendix C's, 1 = every W taken out and put back), then
   a second step. pp__reorder runs those a mask names and keeps the
   shortest result; nothing longer than the squeezed input, nothing that
   lifts a device above its cap. */
enum { /* first steps; a sweep's flags: pp__sweep_flags */
    PP__RS_NONE, PP__RS_GAP_FILL, PP__RS_SWEEP_GRID, PP__RS_SWEEP_REAL, PP__RS_SWEEP_ALL_GRID, PP__RS_SWEEP_ALL_REAL
};
enum { /* second steps */
    PP__RT_NONE,
    PP__RT_GAPS,  /* the gap fill again, cool-down included (pp__gap_fill_rounds) */
    PP__RT_LIST,  /* the event-driven list schedule (pp__list_reorder) */
    PP__RT_SWEEP, /* the first step's sweep again */
    PP__RT_SWEEP_ALL_REAL
};
enum { /* the variants, by name; a mask has bit PP__RV_x for variant x */
    PP__RV_APPENDIX_C, PP__RV_APPENDIX_C_ALL_W, PP__RV_LIST, PP__RV_W_LIST, PP__RV_SWEEP_GRID, PP__RV_SWEEP_GRID_W,
    PP__RV_SWEEP_REAL, PP__RV_SWEEP_REAL_W, PP__RV_SWEEP_ALL_GRID, PP__RV_SWEEP_ALL_REAL, PP__RV_SWEEP_ALL_GRID_W,
    PP__RV_COUNT
};
static const struct pp__reorder_variant { signed char first, wfill, then; } pp__reorder_variants[PP__RV_COUNT] = {
    {PP__RS_GAP_FILL, 0, PP__RT_GAPS},        /* APPENDIX_C */
    {PP__RS_GAP_FILL, 1, PP__RT_GAPS},        /* APPENDIX_C_ALL_W */
    {PP__RS_NONE, -1, PP__RT_LIST},           /* LIST */
    {PP__RS_NONE, 1, PP__RT_LIST},            /* W_LIST */
    {PP__RS_SWEEP_GRID, -1, PP__RT_NONE},     /* SWEEP_GRID: warm-up and cool-down passes, on the unit grid */
    {PP__RS_SWEEP_GRID, 1, PP__RT_SWEEP},     /* SWEEP_GRID_W */
    {PP__RS_SWEEP_REAL, -1, PP__RT_NONE},     /* SWEEP_REAL: the same on real times */
    {PP__RS_SWEEP_REAL, 1, PP__RT_SWEEP},     /* SWEEP_REAL_W */
    {PP__RS_SWEEP_ALL_GRID, -1, PP__RT_NONE}, /* SWEEP_ALL_GRID: every pass, on the unit grid */
    {PP__RS_NONE, -1, PP__RT_SWEEP_ALL_REAL}, /* SWEEP_ALL_REAL: every pass, on real times */
    {PP__RS_SWEEP_ALL_GRID, 1, PP__RT_SWEEP}, /* SWEEP_ALL_GRID_W */
};
#define PP__RV_ALL ((1u << PP__RV_COUNT) - 1u)
/* the four the adaptive searches rank with (and interleaved-1f1b-m picks with) */
#define PP__RV_RANK                                                                                                   \
    (1u << PP__RV_APPENDIX_C | 1u << PP__RV_SWEEP_GRID | 1u << PP__RV_SWEEP_ALL_GRID | 1u << PP__RV_SWEEP_ALL_GRID_W)
/* pp__sweep_reorder's flags for a sweep step */
static int pp__sweep_flags(int step) {
    return step == PP__RS_SWEEP_GRID ? 1 : step == PP__RS_SWEEP_ALL_GRID ? 3 : step == PP__RS_SWEEP_ALL_REAL ? 2 : 0;
}

/* A reorder allocates and frees the same few large buffers (a pass array,
   the end times by key) dozens of times: its variants, their squeezes.
   pp__reorder hands its steps the schedule's allocator wrapped in this
   cache, which keeps up to PP__CACHE_KEEP freed blocks of at least
   PP__CACHE_MIN bytes and gives the smallest that fits to the next
   request, so the large buffers are not returned to the system and
   faulted in again each time. Each block carries its size in a header of
   PP__CACHE_HDR bytes. Nothing allocated through it outlives the reorder;
   the cached blocks go back to the schedule's allocator at its end. */
enum { PP__CACHE_KEEP = 12, PP__CACHE_MIN = 65536, PP__CACHE_HDR = 16 };
typedef struct pp__cache {
    pp_allocator base;
    void *blk[PP__CACHE_KEEP];
    size_t size[PP__CACHE_KEEP];
    int n;
} pp__cache;

static void *pp__cache_alloc(size_t n, void *user) {
    pp__cache *c = (pp__cache *)user;
    int i, best = -1;
    char *raw;
    for (i = 0; i < c->n; i++)
        if (c->size[i] >= n && (best < 0 || c->size[i] < c->size[best])) best = i;
    if (best >= 0) {
        raw = (char *)c->blk[best];
        c->n--;
        c->blk[best] = c->blk[c->n];
        c->size[best] = c->size[c->n];
        return raw + PP__CACHE_HDR;
    }
    if (n > (size_t)-1 - PP__CACHE_HDR) return NULL;
    raw = (char *)c->base.alloc(n + PP__CACHE_HDR, c->base.user);
    if (!raw) return NULL;
    memcpy(raw, &n, sizeof n);
    return raw + PP__CACHE_HDR;
}

static void pp__cache_free(void *p, void *user) {
    pp__cache *c = (pp__cache *)user;
    char *raw = (char *)p - PP__CACHE_HDR;
    size_t n;
    memcpy(&n, raw, sizeof n);
    if (n >= PP__CACHE_MIN && c->n < PP__CACHE_KEEP) {
        c->blk[c->n] = raw;
        c->size[c->n++] = n;
        return;
    }
    c->base.free(raw, c->base.user);
}

/* The microbatches a long schedule is reordered at (then extended by its
   stable phase, pp__block_schedule), and whether n is small enough to be
   reordered whole (n <= 2d + 6). */
static int pp__reorder_n(int d) { return 2 * d + 4; }
static int pp__small_n(int d, int n) { return n <= pp__reorder_n(d) + 2; }

/* The memory cap of each device (cap[d]) when s, squeezed or on the grid,
   is reordered. "Without changing peak memory": no device goes above the
   schedule's peak, nor above what Eq. 1 promises for it when the schedule
   has a block; limit > 0 (an adaptive schedule's): every device up to it. */
static void pp__reorder_caps(const pp_schedule *s, double limit, double *cap) {
    int i, d = s->devices;
    double top = 0;
    for (i = 0; i < d; i++) top = pp__max(top, s->peak_memory[i]);
    for (i = 0; i < d; i++)
        cap[i] = limit > 0 ? pp__max(limit, s->peak_memory[i])
                 : s->peak_bound[i] >= 0 ? pp__max(s->peak_memory[i], s->peak_bound[i] < top ? s->peak_bound[i] : top)
                                         : top;
}

/* A step of a reorder variant ended (status st): its order is a candidate,
   kept (in vbest, its makespan in *mk) when it is shorter than the best the
   variant has seen and lifts no device above cap. The next step goes on
   from the step's own order (some steps prepare the next: the W refill's
   result can be longer until the second step fills its gaps), so a
   variant's result, its best step, never ends longer than a step before
   it. A step that found no way (PP_ERR_DEADLOCK) leaves the best so far
   for the next. *vb: where the variant's best order is (the input, the
   shared first step's order, or vbest, where a shorter one is copied).
   Returns the status to go on with. */
static pp_status pp__reorder_keep(pp_schedule *s, pp_status st, const double *cap, pp_pass *vbest, const pp_pass **vb,
                                  double *mk) {
    int i, P = s->num_passes;
    if (st == PP_ERR_DEADLOCK) {
        memcpy(s->passes, *vb, (size_t)P * sizeof(pp_pass));
        return PP_OK;
    }
    if (st != PP_OK) return st;
    pp__metrics(s);
    for (i = 0; i < s->devices; i++) if (s->peak_memory[i] > cap[i] + 1e-9) break;
    if (i == s->devices && s->makespan < *mk - PP__EPS * (1 + *mk)) {
        *mk = s->makespan;
        memcpy(vbest, s->passes, (size_t)P * sizeof(pp_pass));
        *vb = vbest;
    }
    return PP_OK;
}

/* The orders the variants run in. They stop at the order bound, and the
   earlier of two equally short orders wins, so the order decides only
   which of equally short results is taken, and how soon the bound stops
   them. By name; or, with PP__RV_BOUND_FIRST in the mask, those that reach
   the bound first most often (Appendix C's gap fill, then the every-pass
   sweep on the grid with the W refill: at unit times the only variant at
   the bound in v-auto's reorders at d = 128), each next to the variant that
   shares its first step. */
#define PP__RV_BOUND_FIRST (1u << 16)
static const signed char pp__reorder_order[2][PP__RV_COUNT] = {
    {PP__RV_APPENDIX_C, PP__RV_APPENDIX_C_ALL_W, PP__RV_LIST, PP__RV_W_LIST, PP__RV_SWEEP_GRID, PP__RV_SWEEP_GRID_W,
     PP__RV_SWEEP_REAL, PP__RV_SWEEP_REAL_W, PP__RV_SWEEP_ALL_GRID, PP__RV_SWEEP_ALL_REAL, PP__RV_SWEEP_ALL_GRID_W},
    {PP__RV_APPENDIX_C, PP__RV_APPENDIX_C_ALL_W, PP__RV_SWEEP_ALL_GRID_W, PP__RV_SWEEP_ALL_GRID, PP__RV_LIST,
     PP__RV_W_LIST, PP__RV_SWEEP_GRID, PP__RV_SWEEP_GRID_W, PP__RV_SWEEP_REAL, PP__RV_SWEEP_REAL_W, PP__RV_SWEEP_ALL_REAL}};

/* 1 when a variant after the r-th of run order ord in mask has its first
   step (its order is kept for it) */
static int pp__reorder_shares(const signed char *ord, unsigned mask, int r) {
    int w;
    for (w = r + 1; w < PP__RV_COUNT; w++)
        if ((mask >> ord[w] & 1u) && pp__reorder_variants[ord[w]].first == pp__reorder_variants[ord[r]].first) return 1;
    return 0;
}

/* *orders (may be NULL): bit o set when run order o gives the same result.
   Each variant's result does not depend on the order (a shared first step
   is the same step), so order o's is found by running its loop again over
   the variants' makespans, where every variant it reaches has run. */
static pp_status pp__reorder_run(pp_schedule *s, unsigned mask, double limit, double enough, unsigned *won, unsigned *orders,
                                 char *err) {
    int d, S, n, P, i, r, wv = -1, o;
    const signed char *ord = pp__reorder_order[(mask & PP__RV_BOUND_FIRST) != 0];
    double vmk[PP__RV_COUNT];
    unsigned ran = 0;
    size_t keys;
    double *endk, *cap, best_mk, warm_end, in_mk, pre_mk = 0, lb;
    pp_pass *saved, *best, *pre, *vbest;
    const pp_pass *vb, *bp; /* where the variant's best and the best of all are (no copy until one is shorter) */
    pp_allocator *al;
    pp_status st = PP_OK, pre_st = PP_OK;
    int pre_first = 0, share = 0;
    if (!s) { pp__err(err, "pp_reorder: schedule is NULL"); return PP_ERR_INVALID_ARG; }
    if (s->on_grid) {
        st = pp_squeeze(s, err);
        if (st != PP_OK) return st;
    }
    d = s->devices; S = s->stages; n = s->microbatches; P = s->num_passes;
    al = &s->allocator;
    keys = (size_t)4 * S * n;
    endk = (double *)pp__malloc(al, pp__size(keys, sizeof(double)));
    cap = (double *)pp__malloc(al, pp__size((size_t)d, sizeof(double)));
    mask &= PP__RV_ALL;
    for (r = 0; r < PP__RV_COUNT; r++)
        if ((mask >> ord[r] & 1u) && pp__reorder_variants[ord[r]].first) share |= pp__reorder_shares(ord, mask, r);
    saved = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof(pp_pass)));
    best = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof(pp_pass)));
    pre = share ? (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof(pp_pass))) : NULL;
    vbest = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof(pp_pass)));
    if (!endk || !cap || !saved || !best || (share && !pre) || !vbest) {
        pp__mfree(al, endk); pp__mfree(al, cap); pp__mfree(al, saved); pp__mfree(al, best); pp__mfree(al, pre);
        pp__mfree(al, vbest);
        pp__err(err, "out of memory in reorder");
        return PP_ERR_OUT_OF_MEMORY;
    }
    memcpy(saved, s->passes, (size_t)P * sizeof(pp_pass));
    bp = saved;
    best_mk = in_mk = s->makespan;
    lb = pp__max(pp__order_bound(s), enough);
    pp__reorder_caps(s, limit, cap);
    for (i = 0; i < P; i++) {
        const pp_pass *p = &s->passes[i];
        endk[pp__key(S, n, p->kind, p->stage, p->microbatch)] = p->end;
    }
    warm_end = endk[pp__key(S, n, s->split_backward ? PP_B : PP_BW, 0, 0)];
    /* a variant keeps only a shorter order: none is shorter than the bound
       (nor needs to be shorter than enough) */
    for (r = 0; r < PP__RV_COUNT && st == PP_OK && !pp__at_bound(best_mk, lb); r++) {
        /* variants with one first step share it: the second starts from the
           first's result, kept in pre (endk is rewritten before it is read) */
        const int variant = ord[r];
        const struct pp__reorder_variant *rv = &pp__reorder_variants[variant];
        int f = rv->first;
        double mk = in_mk;
        if (!(mask >> variant & 1u)) continue;
        if (f && f == pre_first) {
            st = pre_st;
            if (st != PP_OK) break;
            memcpy(s->passes, pre, (size_t)P * sizeof(pp_pass));
            /* the first step's best: its own order when it was shorter than the input */
            vb = pre_mk < in_mk ? pre : saved;
            mk = pre_mk;
        } else {
            memcpy(s->passes, saved, (size_t)P * sizeof(pp_pass));
            vb = saved;
            if (f) {
                st = f == PP__RS_GAP_FILL ? pp__gap_fill_rounds(s, cap, endk, 0, 0, err)
                                          : pp__sweep_reorder(s, cap, pp__sweep_flags(f), err);
                st = pp__reorder_keep(s, st, cap, vbest, &vb, &mk);
                pre_first = f;
                pre_st = st;
                pre_mk = mk;
                if (st == PP_OK && pp__reorder_shares(ord, mask, r)) memcpy(pre, s->passes, (size_t)P * sizeof(pp_pass));
            }
        }
        if (st == PP_OK && rv->wfill >= 0)
            st = pp__reorder_keep(s, pp__wfill(s, endk, cap, rv->wfill, err), cap, vbest, &vb, &mk); /* it squeezes last */
        if (st == PP_OK && rv->then != PP__RT_NONE) {
            pp_status t = PP_OK;
            if (rv->then == PP__RT_GAPS) t = pp__gap_fill_rounds(s, cap, endk, 1, 1, err);
            if (rv->then == PP__RT_LIST) t = pp__list_reorder(s, cap, warm_end, err);
            if (rv->then == PP__RT_SWEEP) t = pp__sweep_reorder(s, cap, pp__sweep_flags(f), err);
            if (rv->then == PP__RT_SWEEP_ALL_REAL) t = pp__sweep_reorder(s, cap, pp__sweep_flags(PP__RS_SWEEP_ALL_REAL), err);
            st = pp__reorder_keep(s, t, cap, vbest, &vb, &mk);
        }
        if (st == PP_OK && mk < best_mk - PP__EPS * (1 + best_mk)) {
            best_mk = mk;
            if (vb == vbest) { /* vbest's buffer becomes the best, the old best the next variant's */
                pp_pass *t = best;
                best = vbest;
                vbest = t;
            } else {
                memcpy(best, vb, (size_t)P * sizeof(pp_pass));
            }
            bp = best;
            wv = variant;
        }
        if (st == PP_OK) { vmk[variant] = mk; ran |= 1u << variant; }
    }
    if (won) *won = wv >= 0 ? 1u << wv : 0u;
    if (orders) *orders = 0;
    for (o = 0; orders && o < 2; o++) { /* order o's loop over the makespans */
        double b = in_mk;
        int w = -1;
        for (r = 0; r < PP__RV_COUNT && !pp__at_bound(b, lb); r++) {
            int v = pp__reorder_order[o][r];
            if (!(mask >> v & 1u)) continue;
            if (!(ran >> v & 1u)) { w = -2; break; }
            if (vmk[v] < b - PP__EPS * (1 + b)) { b = vmk[v]; w = v; }
        }
        if (st == PP_OK && w == wv) *orders |= 1u << o;
    }
    memcpy(s->passes, bp, (size_t)P * sizeof(pp_pass));
    pp__metrics(s);
    pp__mfree(al, endk); pp__mfree(al, cap); pp__mfree(al, saved); pp__mfree(al, best); pp__mfree(al, pre);
    pp__mfree(al, vbest);
    return st;
}

/* mask: bit PP__RV_x runs variant x. limit > 0: every device may go up to
   limit (the adaptive schedules' memory limit) instead of the usual cap.
   Every step of a variant is a candidate (pp__reorder_keep), and the
   shortest candidate of all variants wins: monotone, never longer than the
   squeezed input or any step's order, never above a device's cap. No more
   variants run once the best is at the order bound, or (enough > 0, for a
   caller that only asks whether a makespan is reached) at most enough.
   won (may be NULL): the bit of the variant that gave the result, 0 when
   none was shorter than the input. orders (may be NULL): see
   pp__reorder_run. */
static pp_status pp__reorder_any(pp_schedule *s, unsigned mask, double limit, double enough, unsigned *won,
                                 unsigned *orders, char *err) {
    pp__cache c;
    pp_status st;
    int i;
    if (!s) { pp__err(err, "pp_reorder: schedule is NULL"); return PP_ERR_INVALID_ARG; }
    c.base = s->allocator;
    c.n = 0;
    s->allocator.alloc = pp__cache_alloc;
    s->allocator.free = pp__cache_free;
    s->allocator.user = &c;
    if (won) *won = 0; /* (also where the run fails before its end) */
    st = pp__reorder_run(s, mask, limit, enough, won, orders, err);
    s->allocator = c.base;
    for (i = 0; i < c.n; i++) c.base.free(c.blk[i], c.base.user);
    return st;
}
static pp_status pp__reorder_to(pp_schedule *s, unsigned mask, double limit, double enough, unsigned *won, char *err) {
    return pp__reorder_any(s, mask, limit, enough, won, NULL, err);
}

static pp_status pp__reorder(pp_schedule *s, unsigned mask, double limit, char *err) {
    return pp__reorder_to(s, mask, limit, 0, NULL, err);
}

PP__DEF pp_status pp_reorder(pp_schedule *s, char *err) {
    pp_status st = pp_sched_validate(s, err);
    if (st != PP_OK) return st;
    return pp__reorder(s, PP__RV_ALL, 0, err);
}

/* ---- a bounded local search that can only improve ---------------------- */

/* The last step of every reordered build (pp__build): walk the critical
   path back from the pass that ends last and collect the passes that wait
   for their device's previous pass rather than for their input. Moves
   around such a pass j (pp__local_moves), each kept when the makespan
   drops: 0, swap j with j - 1; 1, move j earlier into one of the
   PP__LOCAL_GAPS nearest idle gaps before it (it runs in the gap, or the
   passes it now precedes slide into it); 2, move j - 1 later into one of
   the nearest idle gaps after j, or to its device's end. Each kind is
   tried on the whole path before the next: a single swap cannot fill a
   gap two or more passes away, since each swap alone delays the pass it
   overtakes (v-zb, d=4 n=8, times 1,2,1,0.1 gains 36.3 -> 36.2
   from one move of kind 1, within 1% of the proven 35.9). Every move keeps
   the dependency rule (never before its own input, never after a pass
   that needs it, on its device: pp__input; an order that deadlocks
   through other devices is refused by the squeeze) and the memory caps
   (cap[d]: the reorder's, or an adaptive schedule's mem_limit). It stops
   when no move on the critical path helps, at the order bound, or after
   PP__LOCAL_WORK trials (each one squeeze of the whole schedule), scaled
   by min(n, 2d+4)/n, the share of the schedule the reorder itself runs on
   (pp__block_schedule): so it costs at most about what the reorder does
   (a reorder runs 11 variants of 2 to 4 steps, each a squeeze or more).
   Deterministic: candidates are tried from the end of the critical path
   back, nearer gaps first; the first that helps is kept. */
enum { PP__LOCAL_WORK = 24, PP__LOCAL_GAPS = 2, PP__LOCAL_PHASES = 3 };

/* The memory levels of the order the local search starts each round from
   (its snapshot): lev[i], the level after position i on its device; top[],
   a max tree over the levels after an F (-1e300 elsewhere), so that the
   peak of a moved order costs O(log P), where pp__device_peak would walk
   the whole device (O(n) per tried move, O(n^2) for a search at large n).
   lev holds 3P doubles. */
static void pp__local_levels(const pp_schedule *s, double *lev) {
    int P = s->num_passes, dev, i;
    double *top = lev + P;
    for (dev = 0; dev < s->devices; dev++) {
        int a = s->device_start[dev], e = s->device_start[dev + 1];
        double cur = 0;
        for (i = a; i < e; i++) {
            cur += pp__pass_memory(s, &s->passes[i]);
            lev[i] = cur;
            top[P + i] = s->passes[i].kind == PP_F ? cur : -1e300;
        }
    }
    for (i = P - 1; i >= 1; i--) top[i] = top[2 * i] > top[2 * i + 1] ? top[2 * i] : top[2 * i + 1];
}

/* the highest level after an F at positions l..r of the snapshot
   (-1e300: none) */
static double pp__local_top(const double *lev, int P, int l, int r) {
    const double *top = lev + P;
    double m = -1e300;
    for (l += P, r += P + 1; l < r; l >>= 1, r >>= 1) {
        if (l & 1) { if (top[l] > m) m = top[l]; l++; }
        if (r & 1) { --r; if (top[r] > m) m = top[r]; }
    }
    return m;
}

/* passes[from] to position to of the same device, the passes between one
   place over, when its device's memory stays within cap (returns 1); else
   returns 0 and leaves the order. The order must be the snapshot
   pp__local_levels measured: the levels outside from..to do not change,
   those between move by the moved pass's own change. */
static int pp__local_move(pp_schedule *s, int from, int to, const double *cap, const double *lev) {
    pp_pass t = s->passes[from];
    int P = s->num_passes, dev = t.device, a = s->device_start[dev], e = s->device_start[dev + 1];
    int lo = from < to ? from : to, hi = from < to ? to : from;
    double dt = pp__pass_memory(s, &t), peak = 0, x;
    /* the highest level after an F before the span and after it (0: none) */
    if (lo > a && (x = pp__local_top(lev, P, a, lo - 1)) > peak) peak = x;
    if (hi + 1 < e && (x = pp__local_top(lev, P, hi + 1, e - 1)) > peak) peak = x;
    if (from < to) {
        x = pp__local_top(lev, P, from + 1, to) - dt;          /* those after it, one place earlier */
        if (t.kind == PP_F && lev[to] > x) x = lev[to];         /* it, at the end of the span */
    } else {
        x = pp__local_top(lev, P, to, from - 1) + dt;           /* those before it, one place later */
        if (t.kind == PP_F && (to > a ? lev[to - 1] : 0) + dt > x) x = (to > a ? lev[to - 1] : 0) + dt;
    }
    if (x > peak) peak = x;
    if (peak > cap[dev] + 1e-9) return 0;
    if (from < to) memmove(s->passes + from, s->passes + from + 1, (size_t)(to - from) * sizeof(pp_pass));
    else memmove(s->passes + to + 1, s->passes + to, (size_t)(from - to) * sizeof(pp_pass));
    s->passes[to] = t;
    return 1;
}

/* 1 when position i of its device starts after the device was idle */
static int pp__local_gap(const pp_schedule *s, int i) {
    const pp_pass *p = &s->passes[i];
    return i > s->device_start[p->device] ? p->start > s->passes[i - 1].end + PP__EPS * (1 + p->start) : p->start > PP__EPS;
}

/* The round's tables for pp__local_moves, so that finding a move costs no
   walk along the device: prev[i] / next[i], the nearest position at or
   before / at or after i on its device that starts after a gap (a - 1 /
   e when there is none; a, e: the device's first and end positions), and
   dep[key], the first position on the same device of a pass whose input
   is that key (INT_MAX: none). */
static void pp__local_tables(const pp_schedule *s, const int *tab, const int *pos, int *prev, int *next, int *dep) {
    int S = s->stages, n = s->microbatches, half = pp__dep_half(s), dev, i, ds, k;
    for (i = 0; i < 4 * S * n; i++) dep[i] = INT_MAX;
    for (dev = 0; dev < s->devices; dev++) {
        int a = s->device_start[dev], e = s->device_start[dev + 1], g = a - 1;
        for (i = a; i < e; i++) {
            if (pp__local_gap(s, i)) g = i;
            prev[i] = g;
            k = pp__dep_key(tab, S, half, &s->passes[i], &ds);
            if (k >= 0 && s->passes[pos[k]].device == dev && i < dep[k]) dep[k] = i;
        }
        for (g = e, i = e - 1; i >= a; i--) {
            if (prev[i] == i) g = i;
            next[i] = g;
        }
    }
}

/* The moves of phase ph for candidate j (it waits for j - 1 on the
   critical path) into from[] / to[] (at most PP__LOCAL_GAPS); returns how
   many. 0: the swap (none when j is a W and j - 1 starts without a gap
   before it: the W, which nothing waits for, would only take j - 1's
   place); 1: j to just before one of the nearest passes before j - 1
   that start after a gap, not before its input; 2: j - 1 to just before
   one of the nearest passes after j that start after a gap, or to the
   device's end, not after a pass that needs it (prev, next, dep:
   pp__local_tables). */
static int pp__local_moves(const pp_schedule *s, const int *tab, const int *pos, const int *prev, const int *next,
                           const int *dep, int j, int ph, int *from, int *to) {
    int S = s->stages, n = s->microbatches, half = pp__dep_half(s), dev = s->passes[j].device, m = 0, i, ds;
    int a = s->device_start[dev], e = s->device_start[dev + 1];
    if (ph == 0) {
        if (s->passes[j].kind == PP_W && !pp__local_gap(s, j - 1)) return 0;
        from[0] = j; to[0] = j - 1;
        return 1;
    }
    if (ph == 1) {
        int in = pp__dep_key(tab, S, half, &s->passes[j], &ds), lo = a;
        if (in >= 0 && s->stage_device[ds] == dev) lo = pos[in] + 1;
        for (i = j - 2 >= a ? prev[j - 2] : a - 1; i >= lo && m < PP__LOCAL_GAPS; i = i > a ? prev[i - 1] : a - 1) {
            from[m] = j; to[m++] = i;
        }
        return m;
    }
    {
        const pp_pass *b = &s->passes[j - 1];
        int d1 = dep[pp__key(S, n, b->kind, b->stage, b->microbatch)], last = d1 < e ? d1 : e - 1;
        for (i = j + 1 < e ? next[j + 1] : e; i <= last && m < PP__LOCAL_GAPS; i = i + 1 < e ? next[i + 1] : e) {
            from[m] = j - 1; to[m++] = i - 1;
        }
        if (m < PP__LOCAL_GAPS && d1 >= e) { from[m] = j - 1; to[m++] = e - 1; }
        return m;
    }
}

/* The squeeze of s where only passes that start at T or later (its times
   so far) can move: s was squeezed, then passes were reordered on one
   device only at positions whose passes started at T or later (T the end
   of the pass before them). Every pass that started before T keeps its
   time (its device's pass before it and its input ended before T, so by
   induction they keep theirs), and those are a prefix of each device, so
   the loop runs from the first pass at T or later on each device (cut[i])
   and gives the full squeeze's times, bit for bit. tab: s's pp__dep_table;
   done, endt: every key's flag and end in s as squeezed (those from cut on
   are timed again); buf: [3d] ints, free_at: [d] doubles of scratch. */
static pp_status pp__squeeze_tail(pp_schedule *s, double T, const int *tab, int *cut, int *buf, double *free_at,
                                  unsigned char *done, double *endt, char *err) {
    int d = s->devices, S = s->stages, n = s->microbatches, i, j, left = 0;
    const pp_pass *ps = s->passes;
    for (i = 0; i < d; i++) {
        int lo = s->device_start[i], hi = s->device_start[i + 1];
        while (lo < hi) { /* the first start at T or later: the starts before the moved span rise */
            int mid = lo + (hi - lo) / 2;
            if (ps[mid].start < T) lo = mid + 1;
            else hi = mid;
        }
        cut[i] = buf[i] = lo;
        free_at[i] = lo > s->device_start[i] ? ps[lo - 1].end : 0;
        for (j = lo; j < s->device_start[i + 1]; j++) {
            done[pp__key(S, n, ps[j].kind, ps[j].stage, ps[j].microbatch)] = 0;
            left++;
        }
    }
    return pp__squeeze_loop(s, NULL, tab, buf, buf + d, buf + 2 * d, free_at, done, endt, left, err);
}

static pp_status pp__local_search(pp_schedule *s, const double *cap, char *err) {
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes, half = pp__dep_half(s);
    int small = n < pp__reorder_n(d) ? n : pp__reorder_n(d), trials = (int)((long long)PP__LOCAL_WORK * small / n), i;
    double lb = pp__order_bound(s);
    pp_allocator *al = &s->allocator;
    size_t keys = (size_t)4 * S * n;
    int *pos, *tab, *cand, *prev, *dep, *sq, squeezed = -1;
    double *keep; /* the round's times: start, end of each position */
    double *lev, *sq_end;
    unsigned char *sq_done;
    pp_status st = PP_OK;
    if (pp__at_bound(s->makespan, lb)) return PP_OK; /* no order is shorter */
    pos = (int *)pp__malloc(al, pp__size(keys, sizeof(int)));
    tab = (int *)pp__malloc(al, pp__size((size_t)S, 16u * sizeof(int)));
    cand = (int *)pp__malloc(al, pp__size((size_t)P, sizeof(int)));
    keep = (double *)pp__malloc(al, pp__size((size_t)P, 2u * sizeof(double)));
    lev = (double *)pp__malloc(al, pp__size((size_t)P, 3u * sizeof(double)));
    prev = (int *)pp__malloc(al, pp__size((size_t)P, 2u * sizeof(int)));
    dep = (int *)pp__malloc(al, pp__size(keys, sizeof(int)));
    /* a trial's squeeze from the moved span on (pp__squeeze_tail): each
       key's flag and end, then [d] doubles; [3d] ints of scratch, then
       each device's cut */
    sq_done = (unsigned char *)pp__malloc(al, keys);
    sq_end = (double *)pp__malloc(al, pp__size(keys + (size_t)d, sizeof(double)));
    sq = (int *)pp__malloc(al, pp__size((size_t)d, 4u * sizeof(int)));
    if (trials < 2) trials = 2;
    if (!pos || !tab || !cand || !keep || !lev || !prev || !dep || !sq_done || !sq_end || !sq) {
        pp__err(err, "out of memory in the local search");
        st = PP_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    pp__dep_table(s, tab);
    memset(sq_done, 0, keys);
    while (trials > 0 && !pp__at_bound(s->makespan, lb)) { /* (no order is shorter than lb) */
        int nc = 0, cur = 0, k, improved = 0, phase;
        for (i = 0; i < P; i++) {
            const pp_pass *p = &s->passes[i];
            pos[pp__key(S, n, p->kind, p->stage, p->microbatch)] = i;
            if (p->end > s->passes[cur].end) cur = i;
        }
        /* the critical path back from the pass that ends last: follow the
           input where it binds, else the device's previous pass (a
           candidate) */
        for (;;) {
            const pp_pass *p = &s->passes[cur];
            int dev = p->device, ds, in = pp__dep_key(tab, S, half, p, &ds);
            double tol = PP__EPS * (1 + p->start);
            if (in >= 0) {
                const pp_pass *x = &s->passes[pos[in]];
                if (x->end + (s->stage_device[ds] != dev ? s->times.comm : 0) >= p->start - tol) { cur = pos[in]; continue; }
            }
            if (cur > s->device_start[dev] && s->passes[cur - 1].end >= p->start - tol) {
                if (!(in >= 0 && pos[in] == cur - 1)) cand[nc++] = cur;
                cur--;
                continue;
            }
            break;
        }
        for (i = 0; i < P; i++) { keep[2 * i] = s->passes[i].start; keep[2 * i + 1] = s->passes[i].end; }
        /* whether the round's times are its order's squeeze (the trials then
           time only what follows their moved span): known after the first
           round, whose order a squeeze gave; the input's, checked once */
        if (squeezed < 0) {
            st = pp__squeeze(s, NULL, err);
            if (st == PP_ERR_OUT_OF_MEMORY) goto cleanup;
            for (squeezed = st == PP_OK, i = 0; i < P && squeezed; i++)
                squeezed = s->passes[i].start == keep[2 * i] && s->passes[i].end == keep[2 * i + 1];
            for (i = 0; i < P; i++) { s->passes[i].start = keep[2 * i]; s->passes[i].end = keep[2 * i + 1]; }
            st = PP_OK;
        }
        for (i = 0; i < P && squeezed; i++) {
            int key = pp__key(S, n, s->passes[i].kind, s->passes[i].stage, s->passes[i].microbatch);
            sq_done[key] = 1;
            sq_end[key] = s->passes[i].end;
        }
        pp__local_levels(s, lev);
        pp__local_tables(s, tab, pos, prev, prev + P, dep);
        for (phase = 0; phase < PP__LOCAL_PHASES && !improved; phase++)
            for (k = 0; k < nc && trials > 0 && !improved; k++) {
                int from[PP__LOCAL_GAPS], to[PP__LOCAL_GAPS], m = pp__local_moves(s, tab, pos, prev, prev + P, dep, cand[k], phase, from, to), x;
                for (x = 0; x < m && trials > 0; x++) {
                    double mk = s->makespan, top = 0;
                    int r, lo = from[x] < to[x] ? from[x] : to[x], dv = s->passes[lo].device;
                    int *cut = sq + 3 * d;
                    if (!pp__local_move(s, from[x], to[x], cap, lev)) continue;
                    trials--;
                    if (squeezed)
                        st = pp__squeeze_tail(s, lo > s->device_start[dv] ? s->passes[lo - 1].end : 0, tab, cut, sq,
                                              sq_end + keys, sq_done, sq_end, err);
                    else st = pp__squeeze(s, NULL, err);
                    if (st == PP_ERR_OUT_OF_MEMORY) goto cleanup;
                    if (st == PP_OK) {
                        /* squeezed, each device's passes end in order: its
                           last ends last (pp__metrics' makespan, without
                           its pass over every pass) */
                        for (r = 0; r < d; r++)
                            if (s->device_start[r + 1] > s->device_start[r])
                                top = pp__max(top, s->passes[s->device_start[r + 1] - 1].end);
                        if (top < mk - PP__EPS * (1 + mk)) { pp__metrics(s); improved = 1; squeezed = 1; break; }
                    }
                    st = PP_OK;
                    /* back to the round's order and times: the pass moved
                       from to[x] back to from[x]; after a tail squeeze only
                       the passes from each device's cut on changed */
                    {
                        pp_pass t = s->passes[to[x]];
                        int f = from[x], g = to[x], j;
                        if (f < g) memmove(s->passes + f + 1, s->passes + f, (size_t)(g - f) * sizeof(pp_pass));
                        else memmove(s->passes + g, s->passes + g + 1, (size_t)(f - g) * sizeof(pp_pass));
                        s->passes[f] = t;
                        if (!squeezed)
                            for (j = 0; j < P; j++) { s->passes[j].start = keep[2 * j]; s->passes[j].end = keep[2 * j + 1]; }
                        for (r = 0; squeezed && r < d; r++)
                            for (j = cut[r]; j < s->device_start[r + 1]; j++) {
                                pp_pass *q = &s->passes[j];
                                int key = pp__key(S, n, q->kind, q->stage, q->microbatch);
                                q->start = keep[2 * j];
                                q->end = keep[2 * j + 1];
                                sq_done[key] = 1;
                                sq_end[key] = q->end;
                            }
                    }
                    /* (the round's order again: its metrics, which nothing above changed) */
                }
            }
        if (!improved) break;
    }
cleanup:
    pp__mfree(al, pos); pp__mfree(al, tab); pp__mfree(al, cand); pp__mfree(al, keep); pp__mfree(al, lev);
    pp__mfree(al, prev); pp__mfree(al, dep); pp__mfree(al, sq_done); pp__mfree(al, sq_end); pp__mfree(al, sq);
    return st;
}

/* ---- reusing reorders within a build ------------------------------------ */

/* Different candidates of a search often come to the same pass order (two
   to four in ten of v-auto's reorders at d = 16), a fixed schedule of the
   family (V-ZB's block is often one of v-auto's finalists) too, and
   reordering the same order again gives the same result. So one build
   keeps what it reordered (pp__vshare): an entry holds the input and the
   output order as pass keys in device order. The input must be squeezed
   (its times are then a function of its order) and so is every variant's
   output (each ends with a squeeze), so a hit restores the output with one
   squeeze. A reorder reads its input's order, its shape (devices, stages,
   routes, stage times, memory, placement, comm), the variants and each
   device's memory cap (pp__reorder_caps: the limit or the peak bound only
   through it): an entry matches on all of them. Up to PP__MEMO_SHAPES
   shapes (a build's own times, and unit times for the guarantee); a
   schedule of another shape just reorders. Entries stop at PP__MEMO_MAX
   or PP__MEMO_BYTES of keys. */
enum { PP__MEMO_MAX = 256, PP__MEMO_BYTES = 32 << 20, PP__MEMO_SHAPES = 4 };

typedef struct pp__memo_entry {
    unsigned long hash;
    unsigned mask, won; /* mask: the variants and the run order asked; won: the variant bit pp__reorder_to gave */
    int shape, n, P, same; /* same: the reorder kept the input */
    unsigned orders; /* bit o: the result is run order o's too (pp__reorder_run): found for either */
    int *keys;       /* [2P + d + 1]: input keys, output keys, device_start */
    double *cap;     /* [d]: each device's memory cap */
} pp__memo_entry;

typedef struct pp__memo_shape {
    int d, S, copies, split;
    double comm, *tm; /* [4S] stage_time, then [S] stage_memory */
    int *sd;          /* [S] stage_device */
} pp__memo_shape;

typedef struct pp__memo {
    pp_allocator al;
    int count, shapes;
    size_t bytes;
    double *cap;      /* [d of the last lookup]: the caps of the schedule looked up */
    int cap_d;
    pp__memo_shape sh[PP__MEMO_SHAPES];
    pp__memo_entry e[PP__MEMO_MAX];
} pp__memo;

static void pp__memo_init(pp__memo *m, const pp_allocator *al) {
    memset(m, 0, sizeof *m);
    m->al = pp__allocator(al);
}

static void pp__memo_free(pp__memo *m) {
    int i;
    for (i = 0; i < m->count; i++) { pp__mfree(&m->al, m->e[i].keys); pp__mfree(&m->al, m->e[i].cap); }
    for (i = 0; i < m->shapes; i++) { pp__mfree(&m->al, m->sh[i].tm); pp__mfree(&m->al, m->sh[i].sd); }
    pp__mfree(&m->al, m->cap);
    m->count = m->shapes = 0; m->cap = NULL; m->cap_d = 0; m->bytes = 0;
}

/* The index of s's shape in m, adding it where there is room; -1: none
   (out of room or memory: s just reorders). */
static int pp__memo_shape_of(pp__memo *m, const pp_schedule *s) {
    int S = s->stages, i;
    pp__memo_shape *h;
    for (i = 0; i < m->shapes; i++) {
        h = &m->sh[i];
        if (h->d == s->devices && h->S == S && h->copies == s->copies && h->split == s->split_backward &&
            h->comm == s->times.comm && !memcmp(h->tm, s->stage_time, (size_t)S * 4u * sizeof(double)) &&
            !memcmp(h->tm + 4 * S, s->stage_memory, (size_t)S * sizeof(double)) &&
            !memcmp(h->sd, s->stage_device, (size_t)S * sizeof(int)))
            return i;
    }
    if (m->shapes == PP__MEMO_SHAPES) return -1;
    h = &m->sh[m->shapes];
    h->tm = (double *)pp__malloc(&m->al, pp__size((size_t)S * 5u, sizeof(double)));
    h->sd = (int *)pp__malloc(&m->al, pp__size((size_t)S, sizeof(int)));
    if (!h->tm || !h->sd) {
        pp__mfree(&m->al, h->tm); pp__mfree(&m->al, h->sd);
        h->tm = NULL; h->sd = NULL;
        return -1;
    }
    h->d = s->devices; h->S = S; h->copies = s->copies; h->split = s->split_backward; h->comm = s->times.comm;
    memcpy(h->tm, s->stage_time, (size_t)S * 4u * sizeof(double));
    memcpy(h->tm + 4 * S, s->stage_memory, (size_t)S * sizeof(double));
    memcpy(h->sd, s->stage_device, (size_t)S * sizeof(int));
    return m->shapes++;
}

static unsigned long pp__memo_hash(const pp_schedule *s) {
    unsigned long h = 2166136261UL;
    int i;
    for (i = 0; i < s->num_passes; i++) {
        const pp_pass *p = &s->passes[i];
        h = (h ^ (unsigned long)pp__key(s->stages, s->microbatches, p->kind, p->stage, p->microbatch)) * 16777619UL;
    }
    return h;
}

/* pp__reorder_to(s, mask, limit, 0, won) through the memo m (NULL: none);
   s must be squeezed. won may be NULL. */
static pp_status pp__reorder_memo(pp_schedule *s, unsigned mask, double limit, pp__memo *m, unsigned *won, char *err) {
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes, i, k, shape;
    unsigned ords = 0;
    unsigned long h;
    pp__memo_entry *e;
    pp_status st;
    unsigned w = 0;
    if (!m || s->on_grid || (shape = pp__memo_shape_of(m, s)) < 0) return pp__reorder_to(s, mask, limit, 0, won, err);
    if (m->cap_d < d) {
        pp__mfree(&m->al, m->cap);
        m->cap = (double *)pp__malloc(&m->al, pp__size((size_t)d, sizeof(double)));
        m->cap_d = m->cap ? d : 0;
        if (!m->cap) return pp__reorder_to(s, mask, limit, 0, won, err);
    }
    pp__reorder_caps(s, limit, m->cap);
    h = pp__memo_hash(s);
    for (k = 0; k < m->count; k++) {
        e = &m->e[k];
        if (e->hash != h || e->shape != shape || e->n != n || e->P != P) continue;
        /* the same variants; an entry of the other run order only where that order gives the same */
        if ((e->mask ^ mask) & PP__RV_ALL || !(e->orders >> ((mask & PP__RV_BOUND_FIRST) != 0) & 1u)) continue;
        if (memcmp(e->keys + 2 * P, s->device_start, (size_t)(d + 1) * sizeof(int))) continue;
        if (memcmp(e->cap, m->cap, (size_t)d * sizeof(double))) continue;
        for (i = 0; i < P; i++) {
            const pp_pass *p = &s->passes[i];
            if (e->keys[i] != pp__key(S, n, p->kind, p->stage, p->microbatch)) break;
        }
        if (i < P) continue;
        if (!e->same) { /* the output order, timed again */
            int dev;
            for (dev = 0; dev < d; dev++)
                for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
                    int key = e->keys[P + i];
                    pp_pass *p = &s->passes[i];
                    p->device = dev;
                    p->microbatch = key % n;
                    p->stage = key / n % S;
                    p->kind = (pp_kind)(key / n / S);
                }
            st = pp__squeeze(s, NULL, err);
            if (st != PP_OK) return st;
        }
        pp__metrics(s);
        if (won) *won = e->won;
        return PP_OK;
    }
    /* not seen: reorder, and keep it while there is room */
    e = NULL;
    if (m->count < PP__MEMO_MAX && m->bytes + (size_t)(2 * P + d + 1) * sizeof(int) <= PP__MEMO_BYTES) {
        e = &m->e[m->count];
        memset(e, 0, sizeof *e);
        e->keys = (int *)pp__malloc(&m->al, pp__size((size_t)(2 * P + d + 1), sizeof(int)));
        e->cap = (double *)pp__malloc(&m->al, pp__size((size_t)d, sizeof(double)));
        if (!e->keys || !e->cap) { /* no room after all: just reorder */
            pp__mfree(&m->al, e->keys); pp__mfree(&m->al, e->cap);
            e = NULL;
        } else {
            for (i = 0; i < P; i++) {
                const pp_pass *p = &s->passes[i];
                e->keys[i] = pp__key(S, n, p->kind, p->stage, p->microbatch);
            }
            memcpy(e->keys + 2 * P, s->device_start, (size_t)(d + 1) * sizeof(int));
            memcpy(e->cap, m->cap, (size_t)d * sizeof(double));
        }
    }
    st = pp__reorder_any(s, mask, limit, 0, &w, &ords, err);
    if (won) *won = w;
    if (e && st == PP_OK) {
        for (i = 0; i < P; i++) {
            const pp_pass *p = &s->passes[i];
            e->keys[P + i] = pp__key(S, n, p->kind, p->stage, p->microbatch);
        }
        e->same = !memcmp(e->keys, e->keys + P, (size_t)P * sizeof(int));
        e->hash = h; e->shape = shape; e->mask = mask; e->won = w; e->n = n; e->P = P; e->orders = ords;
        m->bytes += (size_t)(2 * P + d + 1) * sizeof(int);
        m->count++;
    } else if (e) {
        pp__mfree(&m->al, e->keys); pp__mfree(&m->al, e->cap);
    }
    return st;
}

/* ---- extending a schedule by its stable phase --------------------------- */

/* A repeated block's stable phase is periodic: on every device the order
   repeats every c passes (c = passes per microbatch on that device) with
   microbatches one higher. So a schedule reordered at a small n gives the
   one at a larger n by inserting n - n_small more periods into each
   device's order where it is periodic, shifting the microbatches after;
   one squeeze then times it. The warm-up and cool-down are the small
   schedule's, the stable phase the same order as the block's. A block of
   per microbatches repeats every per x c passes with microbatches per
   higher (pp__extend_by; n - a's microbatches a multiple of per). *out
   is NULL (and PP_OK returned) when some device has no periodic stretch
   of three periods, or the result does not cover every pass once or
   deadlocks: the caller then builds at n directly. */
static pp_status pp__extend_by(const pp_schedule *a, int n, int per, pp_schedule **out, char *err) {
    int d = a->devices, S = a->stages, na = a->microbatches, dev, i, delta = n - na, ok = 1;
    pp_allocator al = a->allocator;
    pp_schedule *s;
    pp_status st;
    unsigned char *seen;
    size_t keys;
    *out = NULL;
    if (delta <= 0 || per < 1 || delta % per) return PP_OK;
    s = pp__sched_alloc(&al, d, a->chunks, S, n, a->split_backward, err, &st);
    if (!s) return st;
    keys = (size_t)4 * S * n;
    seen = (unsigned char *)pp__malloc(&al, keys);
    if (!seen) { pp_sched_free(s); pp__err(err, "out of memory extending a schedule"); return PP_ERR_OUT_OF_MEMORY; }
    memset(seen, 0, keys);
    s->placement = a->placement;
    s->times = a->times;
    s->interval = a->interval;
    s->mem_limit = a->mem_limit;
    memcpy(s->name, a->name, sizeof s->name);
    memcpy(s->stage_device, a->stage_device, (size_t)S * sizeof(int));
    memcpy(s->stage_time, a->stage_time, (size_t)S * 4u * sizeof(double));
    memcpy(s->stage_memory, a->stage_memory, (size_t)S * sizeof(double));
    memcpy(s->peak_bound, a->peak_bound, (size_t)d * sizeof(double));
    s->device_start[0] = 0;
    for (dev = 0; dev < d && ok; dev++) {
        const pp_pass *q = a->passes + a->device_start[dev];
        int len = a->device_start[dev + 1] - a->device_start[dev], c = len / na * per, p = -1, t, j, k;
        pp_pass *o = s->passes + s->device_start[dev];
        /* the periodic position nearest the middle: three periods in a row */
        for (t = 0; c > 0 && t <= len && p < 0; t++) {
            int cand = len / 2 + (t % 2 ? (t + 1) / 2 : -(t / 2));
            if (cand < 0 || cand + 3 * c > len) continue;
            for (j = cand; j < cand + 2 * c; j++)
                if (q[j].kind != q[j + c].kind || q[j].stage != q[j + c].stage ||
                    q[j].microbatch + per != q[j + c].microbatch) break;
            if (j == cand + 2 * c) p = cand;
        }
        if (p < 0) { ok = 0; break; }
        s->device_start[dev + 1] = s->device_start[dev] + len + delta / per * c;
        memcpy(o, q, (size_t)p * sizeof(pp_pass));
        o += p;
        for (k = 0; k < delta; k += per)
            for (j = 0; j < c; j++) { *o = q[p + j]; o->microbatch += k; o++; }
        for (j = p; j < len; j++) { *o = q[j]; o->microbatch += delta; o++; }
    }
    if (ok) {
        for (i = 0; i < s->num_passes && ok; i++) {
            const pp_pass *p = &s->passes[i];
            int k;
            if (p->microbatch < 0 || p->microbatch >= n) { ok = 0; break; }
            k = pp__key(S, n, p->kind, p->stage, p->microbatch);
            if (seen[k]) ok = 0;
            seen[k] = 1;
        }
    }
    pp__mfree(&al, seen);
    if (ok) {
        st = pp__squeeze(s, NULL, NULL);
        if (st == PP_ERR_OUT_OF_MEMORY) { pp_sched_free(s); pp__err(err, "out of memory extending a schedule"); return st; }
        ok = st == PP_OK;
    }
    if (!ok) { pp_sched_free(s); return PP_OK; }
    pp__metrics(s);
    *out = s;
    return PP_OK;
}

/* Above PP__EXTEND_WHOLE_D devices a schedule whose extension is not
   exact is not reordered again at the whole n where the extension keeps
   every peak (see pp__extend_exact_by), and where it has none, a fixed
   schedule is reordered at n with the one variant that won at 2d+4
   microbatches (pp__block_schedule): at d = 128, n = 1024 a reorder at n
   costs about a second (V shapes; half that for one chunk). Of the 84
   builds of that size at the four settings of make bench-scale, one came
   out longer (v-min, B = 2F + comm: 0.05%; docs/quality.md, build time at
   scale). */
enum { PP__EXTEND_WHOLE_D = 32 };
static int pp__extend_whole(int d) { return d <= PP__EXTEND_WHOLE_D; }
/* Above PP__EXTEND_WHOLE_D devices the searches also build fewer
   finalists at n: PP__LARGE_FINAL of v-auto's blocks (pp__auto_finish) and
   of its grid family (pp__vgrid_search), where 6 + 2 and 8 run below. At
   d = 128, n = 1024 with Table 5 + comm, B = 2F + comm and per-stage times
   the first of each was the best of its family, and the fixed V-ZB as
   short or shorter (docs/quality.md). */
enum { PP__LARGE_FINAL = 2 };
static int pp__finalists(int d, int n) { return d > PP__EXTEND_WHOLE_D && n > PP__LARGE_FINAL ? PP__LARGE_FINAL : n; }

/* pp__extend_by of a reordered schedule, kept (in *out) only when the
   added microbatches cost exactly the busiest device's work (a stable
   phase without bubble, which reordering at n could not shorten) and no
   device's peak rises; *out = NULL otherwise. Above PP__EXTEND_WHOLE_D
   devices (pp__extend_whole) it is kept whenever no device's peak rises:
   the caller then does not reorder the whole n. */
static pp_status pp__extend_exact_by(const pp_schedule *s, int n, int per, pp_schedule **out, char *err) {
    pp_schedule *e = NULL;
    double wmax = 0;
    int i, j;
    pp_status st = pp__extend_by(s, n, per, &e, err);
    *out = NULL;
    if (st != PP_OK || !e) return st;
    for (i = 0; i < s->devices; i++) {
        double w = 0;
        for (j = s->device_start[i]; j < s->device_start[i + 1]; j++) w += pp__dur(s, &s->passes[j]);
        wmax = pp__max(wmax, w / s->microbatches);
        if (e->peak_memory[i] > s->peak_memory[i] + 1e-9) break;
    }
    if (i == s->devices && (!pp__extend_whole(s->devices) ||
                            e->makespan - s->makespan <= (n - s->microbatches) * wmax * (1 + 1e-9) + 1e-9))
        *out = e;
    else pp_sched_free(e);
    return PP_OK;
}

/* A block repeated n times, squeezed and, when mask is not 0, reordered
   with those variants (limit as in pp__reorder). For n above 2d+6 the
   reordering runs at 2d+4 microbatches and pp__extend_by adds the rest, kept
   only when the added microbatches cost exactly the busiest device's work
   (a stable phase without bubble, which reordering at n could not
   shorten) and no device's peak rises; otherwise the whole n is reordered
   (blocks whose bubble grows with n: V-Min and 1F1B-V at uneven times).
   A block of k microbatches (zb-min's 2) is reordered at 2d+4 or the
   next microbatch, so that n is a whole number of blocks more, and
   extended by whole blocks. */
static pp_status pp__block_schedule(const pp_block *blk, int n, const pp__cfg *c, int recompute, unsigned mask,
                                    double limit, pp__memo *memo, pp_schedule **out, char *err) {
    pp_schedule *s = NULL, *e = NULL;
    pp_status st;
    int k = blk->microbatches, ns = pp__reorder_n(blk->devices);
    unsigned won = 0;
    *out = NULL;
    if (mask && !pp__small_n(blk->devices, n)) {
        if (k > 1) ns += (n - ns) % k;
        st = pp__repeat(blk, ns, NULL, c, recompute, &s, err);
        if (st == PP_OK) st = pp_squeeze(s, err);
        if (st == PP_OK) st = pp__reorder_memo(s, mask, limit, memo, &won, err);
        if (st == PP_OK) st = pp__extend_exact_by(s, n, k > 1 ? k : 1, &e, err);
        pp_sched_free(s);
        if (st != PP_OK) return st;
        if (e) { *out = e; return PP_OK; }
        s = NULL;
    }
    /* above PP__EXTEND_WHOLE_D devices the whole n with the one variant
       that gave the reorder at 2d+4 microbatches (all where none did) */
    if (won && !pp__extend_whole(blk->devices)) mask = won;
    st = pp__repeat(blk, n, NULL, c, recompute, &s, err);
    if (st == PP_OK) st = pp_squeeze(s, err);
    if (st == PP_OK && mask) st = pp__reorder_memo(s, mask, limit, memo, NULL, err);
    if (st != PP_OK) { pp_sched_free(s); return st; }
    *out = s;
    return PP_OK;
}

/* ---- any per-device order ----------------------------------------------- */

/* copies: 1, or 2 for two routes (routes in CONCEPTS); only dualpipe passes 2. */
static pp_status pp__from_order(const pp_order *o, const pp__cfg *c, int copies, pp_schedule **out, char *err) {
    pp_allocator al;
    pp_schedule *s;
    pp_status st;
    int d, S, n, v, i, split = -1, P, *fill;
    unsigned char *seen;
    if (!o || !out) { pp__err(err, "pp_sched_from_order: order and out must not be NULL"); return PP_ERR_INVALID_ARG; }
    *out = NULL;
    d = o->devices; S = o->stages; n = o->microbatches;
    if (d < 1 || S < 1 || n < 1 || S < d) {
        pp__err(err, "an order needs devices >= 1, stages >= devices, microbatches >= 1; got %d, %d, %d", d, S, n);
        return PP_ERR_INVALID_ARG;
    }
    if ((long long)S * n > INT_MAX / 12) { pp__err(err, "%d stages x %d microbatches is too many", S, n); return PP_ERR_OVERFLOW; }
    if (!o->passes || o->count < 1) { pp__err(err, "the order has no passes"); return PP_ERR_INVALID_ARG; }
    if (S % d != 0 && !c->stage_times) {
        pp__err(err, "%d stages on %d devices is uneven: give per-stage times (pp_config.stage_times)", S, d);
        return PP_ERR_INVALID_ARG;
    }
    v = S % d == 0 ? S / d : 1;
    for (i = 0; i < o->count; i++) {
        pp_kind k = o->passes[i].kind;
        if ((int)k < 0 || (int)k > 3) { pp__err(err, "pass %d has an unknown kind %d", i, (int)k); return PP_ERR_INVALID_ARG; }
        if (k == PP_F) continue;
        if (split < 0) split = k != PP_BW;
        if (split != (k != PP_BW)) {
            pp__err(err, "pass %d: an order uses either B and W or BW, not both", i);
            return PP_ERR_INVALID_ARG;
        }
    }
    if (split < 0) { pp__err(err, "the order has no backward passes"); return PP_ERR_INVALID_ARG; }
    P = S / copies * n * (split ? 3 : 2);
    if (o->count != P) {
        pp__err(err, "the order has %d passes, %d stages x %d microbatches need %d", o->count, S, n, P);
        return PP_ERR_INVALID_ARG;
    }
    al = c->al;
    s = pp__sched_alloc(&al, d, v, S, n, split, err, &st);
    if (!s) return st;
    s->copies = copies;
    s->num_passes = P;
    if (o->name) { strncpy(s->name, o->name, sizeof s->name - 1); s->name[sizeof s->name - 1] = 0; }
    s->placement = PP_PLACE_LOOPED;
    for (i = 0; i < S; i++) {
        s->stage_device[i] = o->stage_device ? o->stage_device[i] : i % d;
        if (s->stage_device[i] < 0 || s->stage_device[i] >= d) {
            pp__err(err, "stage %d is placed on device %d, outside 0..%d", i, s->stage_device[i], d - 1);
            pp_sched_free(s);
            return PP_ERR_INVALID_ARG;
        }
    }
    if (S == d) s->placement = PP_PLACE_SEQUENTIAL;
    if (S == 2 * d && d > 1) { /* with one device V and looped place alike: looped is reported */
        for (i = 0; i < S && s->stage_device[i] == pp__place(PP_PLACE_VSHAPE, d, i); i++) {}
        if (i == S) s->placement = PP_PLACE_VSHAPE;
    }
    st = pp__set_stage_times(s, c, 0, err);
    if (st != PP_OK) { pp_sched_free(s); return st; }
    seen = (unsigned char *)pp__malloc(&al, (size_t)4 * S * n);
    fill = (int *)pp__malloc(&al, pp__size((size_t)d, sizeof(int)));
    if (!seen || !fill) {
        pp__mfree(&al, seen); pp__mfree(&al, fill); pp_sched_free(s);
        pp__err(err, "out of memory in pp_sched_from_order");
        return PP_ERR_OUT_OF_MEMORY;
    }
    memset(seen, 0, (size_t)4 * S * n);
    for (i = 0; i < P; i++) {
        const pp_pass *p = &o->passes[i];
        int k;
        if (p->stage < 0 || p->stage >= S || p->microbatch < 0 || p->microbatch >= n ||
            p->stage < pp__route_first(S, n, copies, p->microbatch) ||
            p->stage > pp__route_last(S, n, copies, p->microbatch)) {
            pp__err(err, "pass %d: stage %d / microbatch %d out of range (stages %d, microbatches %d, %d route%s)", i,
                    p->stage, p->microbatch, S, n, copies, copies > 1 ? "s" : "");
            st = PP_ERR_INVALID_ARG; break;
        }
        if (p->device != s->stage_device[p->stage]) {
            pp__err(err, "pass %d: %s(stage %d, mb %d) is on device %d but stage %d lives on device %d", i,
                    pp_kind_name(p->kind), p->stage, p->microbatch, p->device, p->stage, s->stage_device[p->stage]);
            st = PP_ERR_INVALID_ARG; break;
        }
        k = pp__key(S, n, p->kind, p->stage, p->microbatch);
        if (seen[k]) {
            pp__err(err, "pass %d: %s(stage %d, mb %d) appears twice", i, pp_kind_name(p->kind), p->stage, p->microbatch);
            st = PP_ERR_INVALID_ARG; break;
        }
        seen[k] = 1;
        s->device_start[p->device + 1]++;
    }
    if (st == PP_OK) {
        for (i = 0; i < d; i++) { s->device_start[i + 1] += s->device_start[i]; fill[i] = s->device_start[i]; }
        for (i = 0; i < P; i++) {
            pp_pass p = o->passes[i];
            p.start = p.end = 0;
            s->passes[fill[p.device]++] = p;
        }
        for (i = 0; i < d; i++) s->peak_bound[i] = -1;
        st = pp_squeeze(s, err);
    }
    pp__mfree(&al, seen); pp__mfree(&al, fill);
    if (st != PP_OK) { pp_sched_free(s); return st; }
    *out = s;
    return PP_OK;
}

PP__DEF pp_status pp_sched_from_order(const pp_order *o, const pp_config *cfg, pp_schedule **out, char *err) {
    pp__cfg c;
    pp_status st;
    if (out) *out = NULL;
    st = pp__cfg_resolve(cfg, &c, err);
    if (st != PP_OK) return st;
    return pp__from_order(o, &c, 1, out, err);
}

/* The largest Eq. 1 bound over the devices. A V block with one
   microbatch has stages i and 2d-1-i on device i: O(d) instead of the
   O(d S) of pp_block_peak_bound per device. */
static int pp__block_life(const pp_block *b, int r) {
    int last = b->split_backward ? (b->w[r] > b->b[r] ? b->w[r] : b->b[r]) + 1 : b->b[r] + pp__block_cells(b, PP_BW);
    return last - b->f[r];
}

static double pp__block_max_bound(const pp_block *b) {
    double m = 0, *per;
    int i, T = b->interval, d = b->devices;
    if (b->placement != PP_PLACE_VSHAPE || b->microbatches != 1 || b->chunks != 2 || T < 1) {
        per = (double *)pp__malloc(&b->allocator, pp__size((size_t)d, sizeof(double)));
        if (!per) { /* one device at a time then */
            for (i = 0; i < d; i++) m = pp__max(m, pp_block_peak_bound(b, i));
            return m;
        }
        pp__block_bounds(b, NULL, per);
        for (i = 0; i < d; i++) m = pp__max(m, per[i]);
        pp__mfree(&b->allocator, per);
        return m;
    }
    for (i = 0; i < d; i++) {
        int l0 = pp__block_life(b, i), l1 = pp__block_life(b, 2 * d - 1 - i);
        m = pp__max(m, ((double)((l0 + T - 1) / T) + (double)((l1 + T - 1) / T)) / 2);
    }
    return m;
}

/* ---- lowering: per-device programs, slots, deadlock check ---------------- */
/* pp_sched_lower turns a timed schedule into one program per device:
   COMPUTE ops in the schedule's order, with SEND/RECV ops for every
   dependency that crosses devices, and an activation slot for every op that
   touches a (stage, microbatch).

   Communication order. Every transfer (producer P on device a, consumer C
   on device b) gets ONE key, t = start of C in the schedule, and both of
   its ops carry it: the SEND on a, the RECV on b. On every device, an op
   with key t sits after the computes that start before t and before those
   that start at or after t; ops of one device with the same key form one
   group (posted together, like ncclGroupStart/End); groups of a device run
   in increasing key. The RECV therefore comes right before C (as late as
   possible: the consumer's input arrives just when it is needed), and the
   SEND after P (P ends before C starts in a valid schedule). Within a group
   and on every channel a->b, ops are sorted by (key, payload, stage,
   microbatch) on both sides, so the k-th send a->b is the k-th receive on b
   from a (NCCL matches point-to-point calls in order).

   Why it cannot deadlock under rendezvous semantics (a send may wait for
   its receive; ops of one group progress together; computes never wait):
   suppose some devices are stuck. Take the stuck group with the smallest
   key t. Each of its ops has its partner op, with the same key t, in the
   peer's program. The peer cannot be at a group of smaller key (t is the
   smallest among stuck devices, and a device that is not stuck reaches its
   next group or its end), and it cannot be past key t (it would have
   completed its group t, which needs this op's partner to complete, which
   needs this op). So the peer is posted at its group t, which holds the
   partner: every op of the group is matched, and it completes.
   Contradiction. The same argument works with every op alone (no groups),
   because (key, payload, stage, microbatch) names each transfer once and
   both of its ends sit at the same place of that one global order; groups
   only let the exchanges of one step progress together (Megatron's
   send_forward_recv_backward) instead of one after the other.
   pp_sched_check_deadlock checks all this (and that data arrives before it
   is used) by simulation, on any program, hand-built ones included. It
   takes the worst case of NCCL's "may block": every send waits for its
   receive; a program that finishes so also finishes when sends buffer.

   Slots. A (stage, microbatch) gets the lowest free slot of its device at
   the first op that touches it (the RECV of its input, or its F), and gives
   it back after its W (split backward) or BW. The RECV stands right before
   its F, so the slot count is the most (stage, microbatch) live at once:
   the schedule's simulated peak in chunk activations (peak_memory * v).
   1f1b-r keeps only a stage's input in its slot (BW recomputes the rest),
   so there the slots count stage inputs (stage_memory may be 0). Outputs
   are sent from a send buffer that lives from the end of their producer to
   their SEND; send_buffers[d] is the most of those alive at once. */

PP__DEF const char *pp_op_type_name(pp_op_type t) {
    switch (t) {
    case PP_OP_COMPUTE: return "COMPUTE";
    case PP_OP_SEND: return "SEND";
    case PP_OP_RECV: return "RECV";
    case PP_OP_HANDOFF: return "HANDOFF";
    }
    return "?";
}

typedef struct pp__comm {
    double key;
    int what, stage, mb, peer, send, consumer_stage;
} pp__comm;

static int pp__cmp_comm(const void *pa, const void *pb) {
    const pp__comm *a = (const pp__comm *)pa, *b = (const pp__comm *)pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (a->what != b->what) return a->what - b->what;
    if (a->stage != b->stage) return a->stage - b->stage;
    if (a->mb != b->mb) return a->mb - b->mb;
    if (a->peer != b->peer) return a->peer - b->peer;
    return a->send - b->send;
}

/* The producer of pass p's input when it is another stage's output (the
   data a transfer or a hand-off carries): 1 and its (kind, stage), or 0. */
static int pp__producer(const pp_schedule *s, const pp_pass *p, pp_kind *k, int *st) {
    return pp__dep(s, p, k, st) && *st != p->stage;
}

PP__DEF void pp_program_free(pp_program *p) {
    pp_allocator a;
    if (!p) return;
    a = p->allocator;
    pp__mfree(&a, p);
}

PP__DEF pp_status pp_sched_lower(const pp_schedule *s, pp_program **out, char *err) {
    int d, S, n, P, i, dev, transfers = 0, handoffs = 0, nops, ncomm = 0;
    int *index = NULL, *slot_of = NULL, *free_list = NULL;
    unsigned char *sends_out = NULL;
    pp__comm *comm = NULL;
    int *comm_start = NULL;
    size_t off_ops, off_dstart, off_sdev, off_slots, off_sbuf, total;
    pp_program *pr;
    pp_allocator al;
    pp_status st;
    if (out) *out = NULL;
    if (!s || !out) {
        pp__err(err, "pp_sched_lower needs a schedule and an output pointer, got %s", !s ? "s = NULL" : "out = NULL");
        return PP_ERR_INVALID_ARG;
    }
    st = pp_sched_validate(s, err);
    if (st != PP_OK) return st;
    d = s->devices; S = s->stages; n = s->microbatches; P = s->num_passes;
    al = s->allocator;
    if (!al.alloc || !al.free) al = pp__allocator(NULL);
    /* count the transfers */
    index = (int *)pp__malloc(&al, pp__size((size_t)4 * S * n, sizeof(int)));
    sends_out = (unsigned char *)pp__malloc(&al, (size_t)P); /* passes whose output leaves by SEND or HANDOFF */
    if (!index || !sends_out) goto oom;
    memset(sends_out, 0, (size_t)P);
    for (i = 0; i < 4 * S * n; i++) index[i] = -1;
    for (i = 0; i < P; i++) {
        const pp_pass *p = &s->passes[i];
        index[pp__key(S, n, p->kind, p->stage, p->microbatch)] = i;
    }
    for (i = 0; i < P; i++) {
        pp_kind k; int ps;
        if (!pp__producer(s, &s->passes[i], &k, &ps)) continue;
        if (s->stage_device[ps] != s->passes[i].device) transfers++;
        else handoffs++;
        sends_out[index[pp__key(S, n, k, ps, s->passes[i].microbatch)]] = 1;
    }
    if ((long long)P + 2LL * transfers + handoffs > INT_MAX / 2) {
        pp__err(err, "%d passes and %d transfers are too many ops for an int index", P, transfers);
        pp__mfree(&al, index);
        pp__mfree(&al, sends_out);
        return PP_ERR_OVERFLOW;
    }
    nops = P + 2 * transfers + handoffs;
    comm = (pp__comm *)pp__malloc(&al, pp__size((size_t)2 * transfers + 1, sizeof(pp__comm)));
    comm_start = (int *)pp__malloc(&al, pp__size((size_t)d + 1, sizeof(int)));
    slot_of = (int *)pp__malloc(&al, pp__size((size_t)S * n, sizeof(int)));
    free_list = (int *)pp__malloc(&al, pp__size((size_t)S * n + 1, sizeof(int)));
    off_ops = pp__align8(sizeof(pp_program));
    off_dstart = pp__align8(off_ops + pp__size((size_t)nops, sizeof(pp_op)));
    off_sdev = off_dstart + pp__size((size_t)d + 1, sizeof(int));
    off_slots = off_sdev + pp__size((size_t)S, sizeof(int));
    off_sbuf = off_slots + pp__size((size_t)d, sizeof(int));
    total = off_sbuf + pp__size((size_t)d, sizeof(int));
    pr = (pp_program *)pp__malloc(&al, total);
    if (!comm || !comm_start || !slot_of || !free_list || !pr) {
        pp__mfree(&al, pr);
        goto oom;
    }
    memset(pr, 0, total);
    memcpy(pr->name, s->name, sizeof pr->name);
    pr->devices = d; pr->stages = S; pr->microbatches = n; pr->num_ops = nops; pr->copies = pp__copies(s->copies);
    pr->recompute = s->recompute;
    pr->ops = (pp_op *)((char *)pr + off_ops);
    pr->device_start = (int *)((char *)pr + off_dstart);
    pr->stage_device = (int *)((char *)pr + off_sdev);
    memcpy(pr->stage_device, s->stage_device, sizeof(int) * (size_t)S);
    pr->slots = (int *)((char *)pr + off_slots);
    pr->send_buffers = (int *)((char *)pr + off_sbuf);
    pr->allocator = al;
    /* the comm ops of every device, device by device, then sorted by key */
    for (dev = 0; dev < d; dev++) {
        comm_start[dev] = ncomm;
        for (i = 0; i < P; i++) {
            const pp_pass *c = &s->passes[i];
            pp_kind k; int ps;
            pp__comm x;
            if (!pp__producer(s, c, &k, &ps) || s->stage_device[ps] == c->device) continue;
            if (c->device != dev && s->stage_device[ps] != dev) continue;
            x.key = c->start;
            x.what = c->kind == PP_F ? PP_ACTIVATION : PP_GRADIENT;
            x.stage = ps;
            x.mb = c->microbatch;
            x.consumer_stage = c->stage;
            x.send = s->stage_device[ps] == dev;
            x.peer = x.send ? c->device : s->stage_device[ps];
            comm[ncomm++] = x;
        }
        qsort(comm + comm_start[dev], (size_t)(ncomm - comm_start[dev]), sizeof(pp__comm), pp__cmp_comm);
    }
    comm_start[d] = ncomm;
    /* merge: an op with key t goes before the first compute starting after t,
       or at t with a nonzero duration (a W of zero time at t stays before it,
       so the RECV still comes right before its consumer) */
    {
        int o = 0;
        for (dev = 0; dev < d; dev++) {
            int c = comm_start[dev], group = 0, used = 0, nfree = 0, live_sends = 0, k;
            double last_key = 0;
            int have_key = 0;
            pr->device_start[dev] = o;
            for (i = 0; i < S * n; i++) slot_of[i] = -1;
            for (i = s->device_start[dev]; i <= s->device_start[dev + 1]; i++) {
                const pp_pass *p = i < s->device_start[dev + 1] ? &s->passes[i] : NULL;
                while (c < comm_start[dev + 1] && (!p || comm[c].key < p->start || (comm[c].key == p->start && p->end > p->start))) {
                    pp_op *op = &pr->ops[o++];
                    const pp__comm *x = &comm[c++];
                    if (have_key && x->key != last_key) group++;
                    have_key = 1;
                    last_key = x->key;
                    op->type = x->send ? PP_OP_SEND : PP_OP_RECV;
                    op->kind = PP_F;
                    op->stage = x->stage;
                    op->microbatch = x->mb;
                    op->peer = x->peer;
                    op->what = (pp_payload)x->what;
                    op->group = group;
                    op->time = x->key;
                    op->slot = -1;
                    op->consumer = x->consumer_stage;
                    op->sends = 0;
                    if (x->send) {
                        live_sends--;
                    } else {
                        int key = x->consumer_stage * n + x->mb;
                        if (slot_of[key] < 0) {
                            slot_of[key] = nfree > 0 ? free_list[--nfree] : used++;
                        }
                        op->slot = slot_of[key];
                    }
                }
                if (!p) break;
                if (have_key) { group++; have_key = 0; }
                {   /* the input from this device's other stage: a HANDOFF right before, like a RECV */
                    pp_kind hk;
                    int hs;
                    if (pp__producer(s, p, &hk, &hs) && s->stage_device[hs] == dev) {
                        pp_op *op = &pr->ops[o++];
                        int key = p->stage * n + p->microbatch;
                        op->type = PP_OP_HANDOFF;
                        op->kind = PP_F;
                        op->stage = hs;
                        op->microbatch = p->microbatch;
                        op->peer = dev;
                        op->what = p->kind == PP_F ? PP_ACTIVATION : PP_GRADIENT;
                        op->group = -1;
                        op->time = p->start;
                        op->consumer = p->stage;
                        op->sends = 0;
                        if (slot_of[key] < 0) slot_of[key] = nfree > 0 ? free_list[--nfree] : used++;
                        op->slot = slot_of[key];
                        live_sends--;
                    }
                }
                {
                    pp_op *op = &pr->ops[o++];
                    int key = p->stage * n + p->microbatch;
                    op->type = PP_OP_COMPUTE;
                    op->kind = p->kind;
                    op->stage = p->stage;
                    op->microbatch = p->microbatch;
                    op->peer = -1;
                    op->what = PP_ACTIVATION;
                    op->group = -1;
                    op->time = p->start;
                    op->consumer = -1;
                    op->sends = sends_out[i];
                    if (slot_of[key] < 0) slot_of[key] = nfree > 0 ? free_list[--nfree] : used++;
                    op->slot = slot_of[key];
                    if (p->kind == PP_W || p->kind == PP_BW) {
                        /* keep the free list sorted high..low so the lowest slot is reused first */
                        int at = nfree++;
                        while (at > 0 && free_list[at - 1] < op->slot) { free_list[at] = free_list[at - 1]; at--; }
                        free_list[at] = op->slot;
                        slot_of[key] = -2; /* done: a second F would be a schedule error */
                    }
                    if (sends_out[i]) live_sends++;
                    if (live_sends > pr->send_buffers[dev]) pr->send_buffers[dev] = live_sends;
                }
                k = used - nfree;
                if (k > pr->slots[dev]) pr->slots[dev] = k;
            }
        }
        pr->device_start[d] = o;
        PP_ASSERT(o == nops);
    }
    pp__mfree(&al, index);
    pp__mfree(&al, comm);
    pp__mfree(&al, comm_start);
    pp__mfree(&al, sends_out);
    pp__mfree(&al, slot_of);
    pp__mfree(&al, free_list);
    *out = pr;
    return PP_OK;
oom:
    pp__mfree(&al, index);
    pp__mfree(&al, comm);
    pp__mfree(&al, comm_start);
    pp__mfree(&al, sends_out);
    pp__mfree(&al, slot_of);
    pp__mfree(&al, free_list);
    pp__err(err, "out of memory lowering %s (d=%d, n=%d)", s->name, s->devices, s->microbatches);
    return PP_ERR_OUT_OF_MEMORY;
}

static int pp__is_comm(pp_op_type t) { return t == PP_OP_SEND || t == PP_OP_RECV; }

/* The group rule (LOWERING): a SEND or RECV with group >= 0 and the SEND
   and RECV ops right after it on its device with the same group id are
   posted together; any other op is a group of its own. */
PP__DEF int pp_program_group_end(const pp_program *p, int device, int i) {
    int e, j = i + 1;
    if (!p || !p->ops || !p->device_start || device < 0 || device >= p->devices || i < 0 ||
        i < p->device_start[device] || i >= p->device_start[device + 1] || p->device_start[device + 1] > p->num_ops)
        return j; /* not an op of that device: a group of its own */
    e = p->device_start[device + 1];
    if (!pp__is_comm(p->ops[i].type) || p->ops[i].group < 0) return j;
    while (j < e && pp__is_comm(p->ops[j].type) && p->ops[j].group == p->ops[i].group) j++;
    return j;
}

static void pp__op_text(const pp_op *op, char *buf, size_t len) {
    if (op->type == PP_OP_COMPUTE)
        snprintf(buf, len, "%s(stage %d, mb %d)", pp_kind_name(op->kind), op->stage, op->microbatch);
    else if (op->type == PP_OP_HANDOFF)
        snprintf(buf, len, "HANDOFF %s of stage %d mb %d", op->what == PP_ACTIVATION ? "activation" : "gradient",
                 op->stage, op->microbatch);
    else
        snprintf(buf, len, "%s %s of stage %d mb %d %s device %d", pp_op_type_name(op->type),
                 op->what == PP_ACTIVATION ? "activation" : "gradient", op->stage, op->microbatch,
                 op->type == PP_OP_SEND ? "to" : "from", op->peer);
}

/* Simulates the programs: computes run when their inputs are on the device;
   a group's ops are posted together and each completes when its partner
   (the k-th send a->b pairs with the k-th receive on b from a) is posted
   too; a device leaves a group when all its ops completed. */
/* What pp_sched_check_deadlock and pp_program_print check first (as
   pp__sched_shape for schedules): counts >= 1, device_start rising from 0
   to num_ops, and every op's type, kind, stage, microbatch, peer and
   payload in range. O(ops), no allocation. */
static pp_status pp__program_shape(const pp_program *p, const char *fn, char *err) {
    int d, S, n, N, i, dev;
    if (!p || !p->ops || !p->device_start || p->devices < 1 || p->stages < 1 || p->microbatches < 1 || p->num_ops < 0) {
        pp__err(err, "%s needs a program with devices, stages, microbatches >= 1, num_ops >= 0 and ops", fn);
        return PP_ERR_INVALID_ARG;
    }
    d = p->devices; S = p->stages; n = p->microbatches; N = p->num_ops;
    if (p->device_start[0] != 0 || p->device_start[d] != N) {
        pp__err(err, "device_start must run from 0 to num_ops (%d), got %d..%d", N, p->device_start[0], p->device_start[d]);
        return PP_ERR_INVALID_ARG;
    }
    for (dev = 0; dev < d; dev++) /* all of it before any op is read: it bounds the op loops */
        if (p->device_start[dev] > p->device_start[dev + 1]) {
            pp__err(err, "device_start must not decrease, device %d starts at %d and ends at %d", dev,
                    p->device_start[dev], p->device_start[dev + 1]);
            return PP_ERR_INVALID_ARG;
        }
    for (dev = 0; dev < d; dev++) {
        for (i = p->device_start[dev]; i < p->device_start[dev + 1]; i++) {
            const pp_op *op = &p->ops[i];
            int bad = op->stage < 0 || op->stage >= S || op->microbatch < 0 || op->microbatch >= n;
            if (!bad && (op->stage < pp__route_first(S, n, p->copies, op->microbatch) ||
                         op->stage > pp__route_last(S, n, p->copies, op->microbatch)))
                bad = 1; /* a stage off the microbatch's route (copies = 2) */
            if (op->type == PP_OP_COMPUTE) bad |= (int)op->kind < 0 || (int)op->kind > 3;
            else if (op->type == PP_OP_SEND || op->type == PP_OP_RECV)
                bad |= op->peer < 0 || op->peer >= d || op->peer == dev ||
                       (op->what != PP_ACTIVATION && op->what != PP_GRADIENT);
            else if (op->type == PP_OP_HANDOFF)
                bad |= op->peer != dev || (op->what != PP_ACTIVATION && op->what != PP_GRADIENT);
            else bad = 1;
            if (bad) {
                pp__err(err, "op %d of device %d is out of range (type %d, kind %d, stage %d of %d, mb %d of %d, peer %d)",
                        i - p->device_start[dev], dev, (int)op->type, (int)op->kind, op->stage, S, op->microbatch, n,
                        op->peer);
                return PP_ERR_INVALID_ARG;
            }
        }
    }
    return PP_OK;
}

/* The pairing rule (LOWERING): on every channel a->b, the k-th SEND of
   device a to b meets the k-th RECV of device b from a, as NCCL matches
   the point-to-point calls of two ranks in order. */
PP__DEF pp_status pp_program_pair(const pp_program *p, int *partner, char *err) {
    int d, N, i, dev;
    int *seq = NULL, *cnt = NULL, *chan_off = NULL, *chan_ops = NULL;
    pp_allocator al;
    pp_status st = PP_OK;
    char a[96], b[96];
    st = pp__program_shape(p, "pp_program_pair", err);
    if (st != PP_OK) return st;
    if (!partner) { pp__err(err, "pp_program_pair: partner is NULL (it needs num_ops ints)"); return PP_ERR_INVALID_ARG; }
    d = p->devices; N = p->num_ops;
    al = p->allocator;
    if (!al.alloc || !al.free) al = pp__allocator(NULL);
    seq = (int *)pp__malloc(&al, pp__size((size_t)N + 1, sizeof(int)));
    cnt = (int *)pp__malloc(&al, pp__size((size_t)2 * d * d, sizeof(int)));
    chan_off = (int *)pp__malloc(&al, pp__size((size_t)2 * d * d + 1, sizeof(int)));
    chan_ops = (int *)pp__malloc(&al, pp__size((size_t)N + 1, sizeof(int)));
    if (!seq || !cnt || !chan_off || !chan_ops) {
        pp__err(err, "out of memory pairing %d ops", N);
        st = PP_ERR_OUT_OF_MEMORY;
        goto end;
    }
    memset(cnt, 0, sizeof(int) * 2 * d * d);
    /* channel c = (src*d + dst)*2 + (0 send side, 1 receive side); seq = order on the channel */
    for (dev = 0; dev < d; dev++)
        for (i = p->device_start[dev]; i < p->device_start[dev + 1]; i++) {
            const pp_op *op = &p->ops[i];
            int c;
            partner[i] = -1;
            if (!pp__is_comm(op->type)) continue;
            c = op->type == PP_OP_SEND ? (dev * d + op->peer) * 2 : (op->peer * d + dev) * 2 + 1;
            seq[i] = cnt[c]++;
        }
    chan_off[0] = 0;
    for (i = 0; i < 2 * d * d; i++) chan_off[i + 1] = chan_off[i] + cnt[i];
    for (dev = 0; dev < d; dev++)
        for (i = p->device_start[dev]; i < p->device_start[dev + 1]; i++) {
            const pp_op *op = &p->ops[i];
            int c;
            if (!pp__is_comm(op->type)) continue;
            c = op->type == PP_OP_SEND ? (dev * d + op->peer) * 2 : (op->peer * d + dev) * 2 + 1;
            chan_ops[chan_off[c] + seq[i]] = i;
        }
    for (i = 0; i < d * d; i++) {
        int k, ns = cnt[2 * i], nr = cnt[2 * i + 1];
        for (k = 0; k < ns && k < nr; k++) {
            int si = chan_ops[chan_off[2 * i] + k], ri = chan_ops[chan_off[2 * i + 1] + k];
            const pp_op *x = &p->ops[si], *y = &p->ops[ri];
            if (x->what != y->what || x->stage != y->stage || x->microbatch != y->microbatch) {
                pp__op_text(x, a, sizeof a);
                pp__op_text(y, b, sizeof b);
                pp__err(err, "send %d from device %d to %d is '%s' but the matching receive is '%s': both sides must "
                        "order a channel's transfers alike", k, i / d, i % d, a, b);
                st = PP_ERR_INVALID_SCHEDULE;
                goto end;
            }
            partner[si] = ri;
            partner[ri] = si;
        }
    }
end:
    pp__mfree(&al, seq);
    pp__mfree(&al, cnt);
    pp__mfree(&al, chan_off);
    pp__mfree(&al, chan_ops);
    return st;
}

PP__DEF pp_status pp_sched_check_deadlock(const pp_program *p, int *stuck, char *err) {
    int d, S, n, N, dev, progress, left;
    int *partner = NULL, *pc = NULL;
    unsigned char *done = NULL, *have = NULL, *made = NULL;
    pp_allocator al;
    pp_status st = PP_OK;
    char a[96];
    st = pp__program_shape(p, "pp_sched_check_deadlock", err);
    if (st != PP_OK) return st;
    d = p->devices; S = p->stages; n = p->microbatches; N = p->num_ops;
    al = p->allocator;
    if (!al.alloc || !al.free) al = pp__allocator(NULL);
    partner = (int *)pp__malloc(&al, pp__size((size_t)N + 1, sizeof(int)));
    pc = (int *)pp__malloc(&al, pp__size((size_t)d, sizeof(int)));
    done = (unsigned char *)pp__malloc(&al, (size_t)N + 1);
    /* per device, by (payload, stage, microbatch): have = there as an input
       (RECV, HANDOFF), made = computed there */
    have = (unsigned char *)pp__malloc(&al, pp__size((size_t)d * 2 * S, (size_t)n));
    made = (unsigned char *)pp__malloc(&al, pp__size((size_t)d * 2 * S, (size_t)n));
    if (!partner || !pc || !done || !have || !made) {
        pp__err(err, "out of memory checking %d ops", N);
        st = PP_ERR_OUT_OF_MEMORY;
        goto end;
    }
    memset(done, 0, (size_t)N + 1);
    memset(have, 0, (size_t)d * 2 * S * n);
    memset(made, 0, (size_t)d * 2 * S * n);
    /* the k-th send a->b meets the k-th receive on b from a */
    st = pp_program_pair(p, partner, err);
    if (st != PP_OK) goto end;
    for (dev = 0; dev < d; dev++) pc[dev] = p->device_start[dev];
    do {
        progress = 0;
        for (dev = 0; dev < d; dev++) {
            unsigned char *h = have + (size_t)dev * 2 * S * n, *m = made + (size_t)dev * 2 * S * n;
            while (pc[dev] < p->device_start[dev + 1]) {
                const pp_op *op = &p->ops[pc[dev]];
                int e = pp_program_group_end(p, dev, pc[dev]), all = 1, k;
                if (op->type == PP_OP_HANDOFF) {
                    size_t at = (size_t)(op->what * S + op->stage) * n + op->microbatch;
                    if (!m[at]) {
                        pp__op_text(op, a, sizeof a);
                        pp__err(err, "device %d runs '%s' (op %d) before it has computed that data", dev, a,
                                pc[dev] - p->device_start[dev]);
                        st = PP_ERR_INVALID_SCHEDULE;
                        goto end;
                    }
                    h[at] = 1;
                    pc[dev]++;
                    progress = 1;
                    continue;
                }
                if (op->type == PP_OP_COMPUTE) {
                    int s_ = op->stage, j = op->microbatch, ok = 1, ds;
                    pp_kind dk;
                    /* pp__input: another stage's output must have arrived
                       (RECV, HANDOFF); the pass's own stage's was made here */
                    if (pp__input(S, n, p->copies, 1, op->kind, s_, j, &dk, &ds)) {
                        size_t at = (size_t)((dk == PP_F ? 0 : 1) * S + ds) * n + j;
                        ok = ds == s_ ? m[at] : h[at];
                    }
                    if (!ok) {
                        pp__op_text(op, a, sizeof a);
                        pp__err(err, "device %d runs %s (op %d) before its input is on the device", dev, a,
                                pc[dev] - p->device_start[dev]);
                        st = PP_ERR_INVALID_SCHEDULE;
                        goto end;
                    }
                    if (op->kind == PP_F) m[(0 * S + s_) * n + j] = 1;
                    else if (op->kind != PP_W) m[(1 * S + s_) * n + j] = 1;
                    pc[dev]++;
                    progress = 1;
                    continue;
                }
                for (k = pc[dev]; k < e; k++) {
                    int q = partner[k], pd;
                    if (done[k]) continue;
                    if (q < 0) { all = 0; continue; }
                    pd = p->ops[k].peer;
                    if (q >= pc[pd] && pc[pd] < p->device_start[pd + 1] && q < pp_program_group_end(p, pd, pc[pd]) &&
                        pp__is_comm(p->ops[pc[pd]].type)) {
                        int si = p->ops[k].type == PP_OP_SEND ? k : q, ri = si == k ? q : k;
                        int sd = p->ops[ri].peer, rd = p->ops[si].peer;
                        const pp_op *x = &p->ops[si];
                        size_t at = (size_t)(x->what * S + x->stage) * n + x->microbatch;
                        if (!made[(size_t)sd * 2 * S * n + at]) {
                            pp__op_text(x, a, sizeof a);
                            pp__err(err, "device %d posts '%s' before it has computed that data", sd, a);
                            st = PP_ERR_INVALID_SCHEDULE;
                            goto end;
                        }
                        have[(size_t)rd * 2 * S * n + at] = 1;
                        done[k] = done[q] = 1;
                    } else {
                        all = 0;
                    }
                }
                if (!all) break;
                pc[dev] = e;
                progress = 1;
            }
        }
    } while (progress);
    left = 0;
    for (dev = 0; dev < d; dev++) {
        int stuck_at = pc[dev] < p->device_start[dev + 1] ? pc[dev] : -1;
        if (stuck) stuck[dev] = stuck_at;
        if (stuck_at >= 0) left++;
    }
    if (left) {
        /* name the op each stuck device waits on (the first incomplete op of its group) */
        size_t len = 0;
        char msg[PP_ERR_LEN];
        msg[0] = '\0';
        len = (size_t)snprintf(msg, sizeof msg, "deadlock, %d of %d devices stuck:", left, d);
        for (dev = 0; dev < d && len < sizeof msg; dev++) {
            int k, e;
            if (pc[dev] >= p->device_start[dev + 1]) continue;
            e = pp_program_group_end(p, dev, pc[dev]);
            for (k = pc[dev]; k < e - 1 && done[k]; k++) {}
            pp__op_text(&p->ops[k], a, sizeof a);
            len += (size_t)snprintf(msg + len, sizeof msg - len, " device %d at op %d (%s%s);", dev,
                                    k - p->device_start[dev], a, partner[k] < 0 ? ", never matched" : "");
        }
        pp__err(err, "%s", msg);
        st = PP_ERR_DEADLOCK;
    }
end:
    pp__mfree(&al, partner);
    pp__mfree(&al, pc);
    pp__mfree(&al, done);
    pp__mfree(&al, have);
    pp__mfree(&al, made);
    return st;
}

/* ---- built-in building blocks ------------------------------------------- */

/* Blocks on sequential or looped placement: F of stage s follows F of s-1 by
   fo cells (+gf when s starts a new chunk); the first backward follows the
   last F by turn; backward of s follows that of s+1 by bo (+gb across a
   chunk boundary); W (when split) sits right after its B, or, with wlife,
   as late as a lifespan of wlife cells allows (ZB-H1/H2 delay W so every
   stage lives as long as stage 0 and all devices share its peak). */
typedef struct pp__linear { int fo, gf, turn, bo, gb, bw_cells, interval, wlife; } pp__linear;

static pp_status pp__linear_block(int d, int v, int split, const pp__linear *L, const pp_allocator *al, pp_block **out,
                                  char *err) {
    pp_block *b;
    int s, S;
    pp_status st = pp_block_create(d, v, v == 1 ? PP_PLACE_SEQUENTIAL : PP_PLACE_LOOPED, split, 1, al, &b, err);
    if (st != PP_OK) return st;
    S = b->stages;
    b->interval = L->interval;
    b->bw_cells = L->bw_cells;
    b->f[0] = 0;
    for (s = 1; s < S; s++) b->f[s] = b->f[s - 1] + L->fo + (s % d == 0 ? L->gf : 0);
    b->b[S - 1] = b->f[S - 1] + L->turn;
    for (s = S - 2; s >= 0; s--) b->b[s] = b->b[s + 1] + L->bo + ((s + 1) % d == 0 ? L->gb : 0);
    for (s = 0; s < S; s++) {
        b->w[s] = b->b[s] + 1;
        if (L->wlife > 0 && b->f[s] + L->wlife - 1 > b->w[s]) b->w[s] = b->f[s] + L->wlife - 1;
    }
    *out = b;
    return PP_OK;
}

/* V-shape blocks (Section 3.1): F of chunk 0 steps f0 cells per device,
   F of chunk 1 f1, B of chunk 1 b1, B of chunk 0 b0; a, b, c are the turns
   F0->F1 (last device), F1->B1 (device 0), B1->B0 (last device). W takes
   the first cell after its B that is free in the repeat. With gap_every,
   every gap_every-th backward step waits gap more cells (1F1B-V: a combined
   BW fills 2 of 3 cells per step, so steps of 2 need a rest of 3 every
   third step to repeat at T=6 without collision).
   K > 0 splits the devices as Eq. 3 of Appendix A does (devices counted
   from 0 here): a step of F0 or B1 that leaves device i uses f0/b1 when
   i+1 < K and f0k/b1k otherwise; a step of F1 or B0 that leaves device i
   uses f1/b0 when i < K and f1k/b0k otherwise. K = 0 is the uniform block. */
/* Appendix I, Figure 16b (the figure was lost; see DESIGN.md, zb-min):
   sequential placement, B/W split, two microbatches a and b per block,
   T = 6. a: F(i) at i, B(i) at 2d-2+t0-i (F and B chains of one cell per
   stage, the turn t0 on the last device); b: the same shifted by c cells
   with turn t1; each W in the first cell after its B that is free in the
   repeat (a's first, or b's first). Per device a block fills all 6 cells,
   so the stable phase has no bubble at unit times. Of the (c, t0, t1, W
   order) that repeat without collision, the one with the least steady-state
   peak (live microbatches at the worst cell, counted exactly over the
   repeat, not Eq. 1's per-microbatch ceiling), then the least c+t0+t1, is
   taken. */
/* cells x in [0, a) with x = t mod T (a, t >= 0) */
static int pp__cells_mod(int a, int t, int T) { return a > t ? (a - t - 1) / T + 1 : 0; }

static int pp__zbmin_peak(const pp_block *b) {
    int dev, t, j, worst = 0, T = b->interval;
    for (dev = 0; dev < b->devices; dev++)
        for (t = 0; t < T; t++) {
            int live = 0;
            /* the copies of each activation alive at cell t mod T: its
               cells f .. end-1 that are t mod T (counted, not walked: the
               lives are O(d) cells long) */
            for (j = 0; j < 2; j++) {
                int i = dev * 2 + j, end = b->w[i] + 1 > b->b[i] + 1 ? b->w[i] + 1 : b->b[i] + 1;
                if (end > b->f[i]) live += pp__cells_mod(end, t, T) - pp__cells_mod(b->f[i], t, T);
            }
            if (live > worst) worst = live;
        }
    return worst;
}

static pp_status pp__zbmin_block(int d, const pp_allocator *al, pp_block **out, char *err) {
    pp_block *b = NULL, *best = NULL;
    int c, t0, t1, wo, best_peak = 0, best_sum = 0;
    pp_status st;
    for (c = 1; c < 6; c++)
        for (t0 = 1; t0 <= 5; t0++)
            for (t1 = 1; t1 <= 5; t1++)
                for (wo = 0; wo < 2; wo++) {
                    int i, j, q, pk;
                    if (!b) {
                        st = pp_block_create(d, 1, PP_PLACE_SEQUENTIAL, 1, 2, al, &b, err);
                        if (st != PP_OK) { pp_block_free(best); return st; }
                        b->interval = 6;
                    }
                    for (i = 0; i < d; i++) {
                        int used[6] = {0, 0, 0, 0, 0, 0};
                        b->f[i * 2] = i;
                        b->b[i * 2] = 2 * d - 2 + t0 - i;
                        b->f[i * 2 + 1] = i + c;
                        b->b[i * 2 + 1] = 2 * d - 2 + t1 - i + c;
                        for (j = 0; j < 2; j++) { used[b->f[i * 2 + j] % 6] = 1; used[b->b[i * 2 + j] % 6] = 1; }
                        for (q = 0; q < 2; q++) {
                            int x;
                            j = wo ? 1 - q : q;
                            for (x = b->b[i * 2 + j] + 1; used[x % 6] && x < b->b[i * 2 + j] + 6; x++) {}
                            used[x % 6] = 1; /* a full device collides; pp_block_check says so */
                            b->w[i * 2 + j] = x;
                        }
                    }
                    st = pp_block_check(b, NULL);
                    if (st == PP_ERR_OUT_OF_MEMORY) {
                        pp_block_free(b); pp_block_free(best);
                        pp__err(err, "out of memory building zb-min's block");
                        return st;
                    }
                    if (st != PP_OK) continue;
                    pk = pp__zbmin_peak(b);
                    if (!best || pk < best_peak || (pk == best_peak && c + t0 + t1 < best_sum)) {
                        pp_block_free(best);
                        best = b;
                        b = NULL;
                        best_peak = pk;
                        best_sum = c + t0 + t1;
                    }
                }
    pp_block_free(b);
    if (!best) { pp__err(err, "zb-min: no block repeats without collision at d=%d", d); return PP_ERR_COLLISION; }
    *out = best;
    return PP_OK;
}

typedef struct pp__vblock {
    int f0, f1, b1, b0, a, b, c, bw_cells, split, gap_every, gap, phase;
    int K, f0k, f1k, b1k, b0k;
} pp__vblock;

static pp_status pp__v_block(int d, const pp__vblock *V, const pp_allocator *al, pp_block **out, char *err) {
    pp_block *blk;
    int s, S = 2 * d, T, dev, K = V->K > 0 ? V->K : d + 1;
    unsigned char *occ;
    pp_status st = pp_block_create(d, 2, PP_PLACE_VSHAPE, V->split, 1, al, &blk, err);
    if (st != PP_OK) return st;
    T = V->split ? 6 : 2 * (1 + V->bw_cells);
    blk->interval = T;
    blk->bw_cells = V->bw_cells;
    blk->f[0] = 0;
    for (s = 1; s < d; s++) blk->f[s] = blk->f[s - 1] + (s < K ? V->f0 : V->f0k);          /* leaves device s-1 */
    blk->f[d] = blk->f[d - 1] + V->a;
    for (s = d + 1; s < S; s++) blk->f[s] = blk->f[s - 1] + (2 * d - s < K ? V->f1 : V->f1k); /* leaves 2d-s */
    blk->b[S - 1] = blk->f[S - 1] + V->b;
    for (s = S - 2; s >= 0; s--) {
        int k = S - 1 - s; /* k-th step of the backward chain */
        int step;
        if (s == d - 1) step = V->c;
        else if (s >= d) step = 2 * d - 1 - s < K ? V->b1 : V->b1k; /* leaves device 2d-2-s */
        else step = s + 1 < K ? V->b0 : V->b0k;                      /* leaves device s+1 */
        blk->b[s] = blk->b[s + 1] + step;
        if (V->gap_every > 0 && (V->phase + k) % V->gap_every == 0) blk->b[s] += V->gap;
    }
    if (!V->split) { *out = blk; return PP_OK; }
    /* W: greedy, per device, in the order of the B passes */
    occ = (unsigned char *)pp__malloc(al, (size_t)T);
    if (!occ) { pp_block_free(blk); pp__err(err, "out of memory"); return PP_ERR_OUT_OF_MEMORY; }
    for (dev = 0; dev < d; dev++) {
        int st0 = dev, st1 = S - 1 - dev, first, second, k;
        memset(occ, 0, (size_t)T);
        occ[blk->f[st0] % T] = occ[blk->f[st1] % T] = 1;
        if (occ[blk->b[st0] % T] || occ[blk->b[st1] % T] || blk->b[st0] % T == blk->b[st1] % T) {
            /* F and B collide: let pp_block_check name them */
            blk->w[st0] = blk->b[st0] + 1;
            blk->w[st1] = blk->b[st1] + 1;
            continue;
        }
        occ[blk->b[st0] % T] = occ[blk->b[st1] % T] = 1;
        first = blk->b[st1] < blk->b[st0] ? st1 : st0;
        second = first == st1 ? st0 : st1;
        for (k = 0; k < 2; k++) {
            int who = k == 0 ? first : second, c = blk->b[who] + 1;
            while (occ[c % T]) c++;
            occ[c % T] = 1;
            blk->w[who] = c;
        }
    }
    pp__mfree(al, occ);
    *out = blk;
    return PP_OK;
}

/* Which turns (a, b, c) in 1..6 let a split V block (T = 6) repeat without
   collision: its F and B passes are built once with zero turns, then on
   every device the four F/B cells must differ mod 6 (W passes take the
   two cells left, greedily). ok[(a-1)*36+(b-1)*6+(c-1)] is set for those. */
static pp_status pp__v_turns_ok(int d, pp__vblock V, const pp_allocator *al, unsigned char *ok, char *err) {
    pp_block *z;
    pp_status st;
    int a, b, c, i, nt = 0;
    unsigned char seen[1296];
    short tup[1296];
    V.a = V.b = V.c = 0;
    st = pp__v_block(d, &V, al, &z, err);
    if (st != PP_OK) return st;
    /* devices whose four cells agree mod 6 collide for the same turns: check each pattern once */
    memset(seen, 0, sizeof seen);
    for (i = 0; i < d; i++) {
        int t = ((z->f[i] % 6 * 6 + z->f[2 * d - 1 - i] % 6) * 6 + z->b[2 * d - 1 - i] % 6) * 6 + z->b[i] % 6;
        if (!seen[t]) { seen[t] = 1; tup[nt++] = (short)t; }
    }
    pp_block_free(z);
    for (a = 1; a <= 6; a++)
        for (b = 1; b <= 6; b++)
            for (c = 1; c <= 6; c++) {
                int good = 1;
                for (i = 0; i < nt && good; i++) {
                    int t = tup[i], m = 1 << (t / 216), r;
                    r = 1 << (t / 36 % 6 + a) % 6;
                    if (m & r) { good = 0; break; }
                    m |= r;
                    r = 1 << (t / 6 % 6 + a + b) % 6;
                    if (m & r) { good = 0; break; }
                    m |= r;
                    if (m & 1 << (t % 6 + a + b + c) % 6) good = 0;
                }
                ok[(a - 1) * 36 + (b - 1) * 6 + (c - 1)] = (unsigned char)good;
            }
    return PP_OK;
}

/* The smallest turns (by sum, then lexicographic) that repeat without a
   collision: "slightly different offsets for different d" (Appendix F). */
/* won (may be NULL): the winner's parameters, which pp__v_block builds again */
static pp_status pp__v_search(int d, pp__vblock V, const pp_allocator *al, pp_block **out, pp__vblock *won, char *err) {
    int sum, bc = V.split ? 1 : V.bw_cells, phases = V.gap_every > 0 ? V.gap_every : 1;
    double best_mem = -1;
    pp_block *best = NULL;
    unsigned char ok[216];
    /* a split block collides or not by its turns mod 6 alone (pp__v_turns_ok) */
    int quick = V.split && !V.gap_every && pp__v_turns_ok(d, V, al, ok, NULL) == PP_OK;
    /* least Eq. 1 memory first (a schedule's memory is its identity), then the smallest turns */
    for (sum = 2 + bc; sum <= 24; sum++) {
        for (V.a = 1; V.a <= sum - 1 - bc; V.a++) {
            for (V.b = 1; V.b <= sum - V.a - bc; V.b++) {
                for (V.phase = 0; V.phase < phases; V.phase++) {
                    pp_block *blk;
                    pp_status st;
                    double mem = 0;
                    V.c = sum - V.a - V.b;
                    if (quick && !ok[(V.a - 1) % 6 * 36 + (V.b - 1) % 6 * 6 + (V.c - 1) % 6]) continue;
                    st = pp__v_block(d, &V, al, &blk, err);
                    if (st != PP_OK) { pp_block_free(best); return st; }
                    if (pp_block_check(blk, NULL) != PP_OK) { pp_block_free(blk); continue; }
                    mem = pp__block_max_bound(blk);
                    if (best && mem >= best_mem - 1e-9) { pp_block_free(blk); continue; }
                    pp_block_free(best);
                    best = blk;
                    best_mem = mem;
                    if (won) *won = V;
                }
            }
        }
    }
    if (best) { *out = best; return PP_OK; }
    pp__err(err, "no collision-free V block with offsets %d/%d/%d/%d for d=%d", V.f0, V.f1, V.b1, V.b0, d);
    return PP_ERR_COLLISION;
}

/* ---- the build request: pp_config resolved once, and the shape -------- */

/* The shape of the schedule asked for: what every candidate of a search
   shares, worked out once. dtab: pp__dep_table at one microbatch and one
   route, so an input's key at n microbatches is dtab[e] * n plus the
   microbatch. All four arrays live in one allocation. */
typedef struct pp__shape {
    pp_placement placement;
    int stages, split;
    int *stage_device;    /* [S] */
    double *stage_time;   /* [S * 4], as pp_schedule.stage_time */
    double *stage_memory; /* [S], as pp_schedule.stage_memory */
    int *dtab;            /* [16 * S] */
} pp__shape;

/* A build request: pp_config resolved once (pp__req_resolve), the row of the
   schedule asked for, and what follows from them. Builders and searches
   take this, never a pp_config. */
typedef struct pp__req {
    pp__cfg c;
    const pp_sched_info *info;
    int d, n, v, S;
    double limit; /* adaptive: the memory limit in units (default and fixed limits applied); 0 otherwise */
    double limit_asked; /* mem_limit when it was clamped to the largest useful limit; 0 otherwise */
    pp__shape shape;
    /* (a rival of an adaptive row, pp__build_req) the order, [num_passes],
       and the caps, [d], that the row's iterated local search started from */
    const pp_pass *shaken;
    const double *shaken_cap;
    int shaken_passes;
    struct pp__vshare *vshare; /* what one build's V searches share; may be NULL */
} pp__req;

/* A block of v-auto's search, by the parameters that build it (pass 1
   builds again only the blocks pass 0 kept). */
typedef struct pp__vrec { int K; unsigned char x0, x1, y0, y1, t, extra; } pp__vrec;
/* A block of zb-auto's search, by the parameters that build it (pp__zb_block) */
typedef struct pp__zrec { int wl; unsigned char fo, bo, turn; } pp__zrec;

/* What one pp_sched_build's V searches share: its own build, the fixed V
   schedules its search and its guarantee build, and the same at unit
   times all ask for some of the same time-free results. pp_sched_build
   owns it (every request made for that build points to it); the first to
   work out a part fills it, and a later one takes it only where every
   input of that part is equal, so each gets what it would have worked out.
   - v0, z0: the first pass of v-auto's and of zb-auto's block search
     (pp__v_auto, pp__zb_auto), which marks the levels that have a block and
     lists the blocks that fit the limit and repeat without collision: it
     reads the blocks' structure and Eq. 1 bounds, never the times (inputs:
     d, limit, levels ranked; pp__pass0);
   - key, won: the winners of the fixed V blocks' searches
     (pp__block_vshape; inputs: d and the block's offsets);
   - vzb...: V-ZB's list-built order (pp__vzb_list; inputs: n, the stage
     times and memory, comm and the caps), built by V-ZB's own build and
     again by v-auto's at the limit, which is V-ZB's bound at the default
     limit;
   - memo: every reorder of the build's searches and of the fixed
     schedules built from a block (pp__reorder_memo; inputs: the order,
     its shape, the variants and the caps). */
enum { PP__VSHARE_BLOCKS = 8 };
/* A search's first pass (pp__vshare): its inputs d, limit and levels
   ranked (nlev), and what it found: the least level ranked, the least peak
   of any legal block and the list of nrec blocks (pp__vrec or pp__zrec;
   NULL: none held) */
typedef struct pp__pass0 {
    int d, nlev, nrec, lev_min;
    double limit, min_mem;
    void *rec;
} pp__pass0;
typedef struct pp__vshare {
    pp__pass0 v0, z0;
    int nblk, blk_d[PP__VSHARE_BLOCKS];
    pp__vblock key[PP__VSHARE_BLOCKS], won[PP__VSHARE_BLOCKS];
    int vzb_n, vzb_d;
    double vzb_mk, *vzb_key; /* [4 S + S + d + 1]: stage times, stage memory, caps, comm; NULL: none yet */
    struct pp__lsp *vzb;     /* [3 S n], as pp__ls keeps an order; NULL where no run finished */
    pp__memo memo;           /* pp__vshare_init sets its allocator */
} pp__vshare;

static void pp__vshare_init(pp__vshare *sh, const pp_allocator *al) {
    memset(sh, 0, sizeof *sh);
    pp__memo_init(&sh->memo, al);
}

static void pp__vshare_free(pp__vshare *sh, const pp_allocator *al) {
    pp__mfree(al, sh->v0.rec);
    pp__mfree(al, sh->z0.rec);
    pp__mfree(al, sh->vzb_key);
    pp__mfree(al, sh->vzb);
    pp__memo_free(&sh->memo);
    memset(sh, 0, sizeof *sh);
}

static void pp__req_free(pp__req *q) {
    pp__mfree(&q->c.al, q->shape.stage_time);
    q->shape.stage_time = NULL;
}

/* Fills q (c, info, d, n, v, limit given) with S and the shape. */
static pp_status pp__req_shape(pp__req *q, char *err) {
    int S = q->d * q->v, i;
    pp__shape *h = &q->shape;
    size_t doubles = pp__size((size_t)S, 5u * sizeof(double)), ints = pp__size((size_t)S, 17u * sizeof(int));
    pp_status st;
    q->S = S;
    h->placement = q->info->placement;
    h->stages = S;
    h->split = q->info->split_backward;
    h->stage_time = doubles && ints ? (double *)pp__malloc(&q->c.al, pp__size(1, doubles + ints)) : NULL;
    if (!h->stage_time) { pp__err(err, "out of memory building %s", q->info->name); return PP_ERR_OUT_OF_MEMORY; }
    h->stage_memory = h->stage_time + (size_t)S * 4u;
    h->stage_device = (int *)(h->stage_memory + S);
    h->dtab = h->stage_device + S;
    for (i = 0; i < S; i++) h->stage_device[i] = pp__place(h->placement, q->d, i);
    pp__dep_table_of(S, 1, 1, h->split, h->dtab);
    st = pp__stage_times(&q->c, S, (double)q->v / q->info->copies, q->info->recompute, h->stage_time, h->stage_memory,
                         err);
    if (st != PP_OK) pp__req_free(q);
    return st;
}

/* A built-in schedule by id, under q's config (the adaptive searches
   compare with the fixed schedules of their family this way). */
/* What a candidate (of the guarantee, of an adaptive search) must do to be
   built: caps at most cap on every device (cap may be NULL: any), and the
   lower bound on the makespan of any order of s's with peak at most those
   caps (work and path, lb0, and Appendix E.2's, which falls as the peak
   rises) below mk, the best so far: a candidate that cannot be shorter is
   not built; with ties (an adaptive search, where s is the best so far and
   mk its makespan), one that cannot win over s (pp__may_beat). */
typedef struct pp__fit {
    const double *cap;
    const pp_schedule *s;
    double lb0, mk;
    int ties;
} pp__fit;

static pp_status pp__build_id(const pp__req *q, pp_sched_id id, const pp__fit *fit, pp_schedule **out, char *err);

/* ---- list scheduling: the core of zb-auto's and v-zb's list builders ---- */

/* An order of one route with B/W split built pass by pass on the real
   times. A device runs its passes in the order they are put; a pass ends
   its time after the later of its device's clock and its input's end
   (pp__input), plus comm where the input ran on another device, so each
   run is timed as it is built (the times are a squeeze of the order). A W
   is its device's oldest pending one, in the order of their B. The list
   builders (pp__zl_run, pp__vl_run) only choose which pass each device puts
   next. */
/* A list schedule's pass as its order keeps it: the stage, and microbatch 4
   + kind; the device is where it lies (device r's passes at r 3 (S/d) n). */
typedef struct pp__lsp {
    int stage, mk;
} pp__lsp;

typedef struct pp__ls {
    int d, S, n;
    const int *sd;                /* stage_device [S] */
    const double *tm, *sm, *cap;  /* stage_time [S*4], stage_memory [S], cap [d] in units */
    double comm, idle_max;        /* idle_max: the largest of idle, kept as it grows */
    const double *budget;         /* [d] idle of a previous run, or NULL (pp__ls_budget) */
    double budget_max, best_mk;   /* best_mk: the shortest run's makespan, -1 = none yet */
    double *end;                  /* [3 S n]: end of (kind F/B/W, stage, microbatch); -1 = not placed */
    double *clock, *idle, *mem;   /* [d] */
    double *prev;                 /* [d]: scratch for a run's idle (L->budget) */
    int *next;                    /* [3 S]: next microbatch of (kind, stage) */
    int *wq, *wh, *wt;            /* [S n]: pending W, device r's at r (S/d) n, as stage n + microbatch; head, tail [d] */
    int *len;                     /* [d]: order length */
    pp__lsp *ord, *best;          /* [3 S n] each: device r's order at r 3 (S/d) n; the shortest run's */
    char *mem_block;              /* the one allocation */
} pp__ls;

static double *pp__ls_end(const pp__ls *L, pp_kind k, int st, int i) { return &L->end[((int)k * L->S + st) * L->n + i]; }
static int pp__ls_count(const pp__ls *L, pp_kind k, int st) { return L->next[(int)k * L->S + st]; }
static int pp__ls_pending(const pp__ls *L, int r) { return L->wt[r] - L->wh[r]; }

/* One allocation for q's microbatches on S stages placed by sd, under
   cap [d], with `extra` ints after it (*extra_out). */
static pp_status pp__ls_init(pp__ls *L, const pp__req *q, int S, const double *cap, int extra, int **extra_out,
                             const char *what, char *err) {
    int d = q->d, n = q->n;
    size_t P = (size_t)3 * S * n, words;
    memset(L, 0, sizeof *L);
    L->d = d; L->S = S; L->n = n; L->tm = q->shape.stage_time; L->sm = q->shape.stage_memory; L->cap = cap;
    L->comm = q->c.times.comm; L->best_mk = -1;
    words = pp__size(P, 2 * sizeof(pp__lsp));
    L->mem_block = words ? (char *)pp__malloc(&q->c.al, pp__size(1, words + pp__size(P + 4u * d, sizeof(double)) +
                                                                    pp__size((size_t)S * (n + 3u) + 3u * d + extra,
                                                                             sizeof(int))))
                         : NULL;
    if (!L->mem_block) { pp__err(err, "out of memory building %s", what); return PP_ERR_OUT_OF_MEMORY; }
    L->ord = (pp__lsp *)L->mem_block;
    L->best = L->ord + P;
    L->end = (double *)(L->best + P);
    L->clock = L->end + P; L->idle = L->clock + d; L->mem = L->idle + d; L->prev = L->mem + d;
    L->next = (int *)(L->prev + d);
    L->wq = L->next + 3 * (size_t)S; L->wh = L->wq + (size_t)S * n; L->wt = L->wh + d; L->len = L->wt + d;
    *extra_out = L->len + d;
    return PP_OK;
}

/* Before a run: nothing placed. */
static void pp__ls_reset(pp__ls *L) {
    int r;
    for (r = 0; r < L->d; r++) { L->clock[r] = L->idle[r] = L->mem[r] = 0; L->wh[r] = L->wt[r] = L->len[r] = 0; }
    for (r = 0; r < 3 * L->S; r++) L->next[r] = 0;
    for (r = 0; r < 3 * L->S * L->n; r++) L->end[r] = -1;
    L->idle_max = 0;
}

/* The input of (k, st, i) (pp__input): 2 where it runs on another device,
   1 on the same device, its end in *in (-1: not placed yet); 0: none. */
static int pp__ls_input(const pp__ls *L, pp_kind k, int st, int i, double *in) {
    pp_kind dk;
    int ds;
    if (!pp__input(L->S, L->n, 1, 1, k, st, i, &dk, &ds)) return 0;
    *in = *pp__ls_end(L, dk, ds, i);
    return L->sd[ds] != L->sd[st] ? 2 : 1;
}

/* Device r's next pass of kind k on stage st; 0 where its microbatches are
   used up, its input is not placed yet or its F would go above the cap.
   A W goes through pp__ls_put_w. */
static int pp__ls_put(pp__ls *L, int r, pp_kind k, int st) {
    int i = L->next[(int)k * L->S + st], x;
    double t = L->tm[st * 4 + (int)k], no_wait = L->clock[r] + t, e = no_wait, in = 0;
    pp__lsp *p;
    if (i >= L->n || (k == PP_F && L->mem[r] + L->sm[st] > L->cap[r] + PP__EPS)) return 0;
    x = pp__ls_input(L, k, st, i, &in);
    if (x && in < 0) return 0;
    if (x == 2 && in + L->comm + t > e) e = in + L->comm + t;
    if (L->len[r] > 0) { L->idle[r] += e - no_wait; L->idle_max = pp__max(L->idle_max, L->idle[r]); }
    *pp__ls_end(L, k, st, i) = e;
    L->clock[r] = e;
    if (k == PP_F) L->mem[r] += L->sm[st];
    if (k == PP_W) L->mem[r] -= L->sm[st];
    if (k == PP_B) L->wq[r * (L->S / L->d) * L->n + L->wt[r]++] = st * L->n + i;
    p = &L->ord[(size_t)r * 3 * (L->S / L->d) * L->n + L->len[r]++];
    p->stage = st;
    p->mk = i * 4 + (int)k;
    L->next[(int)k * L->S + st]++;
    return 1;
}

/* Device r's oldest pending W (the next W of its stage); 0 where none is pending. */
static int pp__ls_put_w(pp__ls *L, int r) {
    if (L->wh[r] == L->wt[r]) return 0;
    return pp__ls_put(L, r, PP_W, L->wq[r * (L->S / L->d) * L->n + L->wh[r]++] / L->n);
}

/* Device r's idle budget: the largest idle of any device so far, or with
   a previous run's idle (L->budget), the largest of that minus r's own
   there, where larger. */
static double pp__ls_budget(const pp__ls *L, int r) {
    return L->budget ? pp__max(L->idle_max, L->budget_max - L->budget[r]) : L->idle_max;
}

/* Before device r's next pass of kind k on stage st, whose input comes
   from another device: W passes that end before the input arrives, and one
   more where the wait stays: with greedy, any wait; else, where extra, a
   wait above r's idle budget. */
static void pp__ls_fill(pp__ls *L, int r, pp_kind k, int st, int extra, int greedy) {
    double in;
    int i = pp__ls_count(L, k, st);
    if (i >= L->n || pp__ls_input(L, k, st, i, &in) != 2 || in < 0) return;
    while (L->wh[r] < L->wt[r]) {
        int x = L->wq[r * (L->S / L->d) * L->n + L->wh[r]];
        double w = L->tm[(x / L->n) * 4 + PP_W];
        if (!(in + L->comm >= L->clock[r] + w)) break;
        pp__ls_put_w(L, r);
    }
    if (L->wh[r] < L->wt[r] &&
        (greedy ? L->clock[r] < in + L->comm : extra && in + L->comm - L->clock[r] > pp__ls_budget(L, r) - L->idle[r]))
        pp__ls_put_w(L, r);
}

/* After a run that placed every pass: keeps its order where it is the
   shortest so far (the two arrays change places: the next run writes all
   of ord again); returns its makespan. */
static double pp__ls_keep(pp__ls *L) {
    double mk = 0;
    int r;
    for (r = 0; r < L->d; r++) mk = pp__max(mk, L->clock[r]);
    if (L->best_mk < 0 || mk < L->best_mk - PP__EPS * (1 + mk)) {
        pp__lsp *t = L->best;
        L->best_mk = mk;
        L->best = L->ord;
        L->ord = t;
    }
    return mk;
}

/* 1 where the run placed every pass. */
static int pp__ls_full(const pp__ls *L) {
    int r;
    for (r = 0; r < L->d; r++) if (L->len[r] != 3 * (L->S / L->d) * L->n) return 0;
    return 1;
}

/* The shortest run as a squeezed schedule in *out, where one finished
   and is shorter than beat (NULL otherwise); frees L's memory. */
static pp_status pp__ls_finish(pp__ls *L, const pp__req *q, double beat, pp_schedule **out, char *err) {
    pp_status st = PP_OK;
    *out = NULL;
    if (L->best_mk >= 0 && L->best_mk < beat - PP__EPS * (1 + beat)) {
        pp_order O;
        int x, P = 3 * L->S * L->n, per = 3 * (L->S / L->d) * L->n;
        pp_pass *ps = (pp_pass *)pp__malloc(&q->c.al, pp__size((size_t)P, sizeof(pp_pass)));
        if (!ps) {
            pp__mfree(&q->c.al, L->mem_block);
            pp__err(err, "out of memory building %s", q->info->name);
            return PP_ERR_OUT_OF_MEMORY;
        }
        for (x = 0; x < P; x++) {
            ps[x].device = x / per; ps[x].stage = L->best[x].stage;
            ps[x].microbatch = L->best[x].mk >> 2; ps[x].kind = (pp_kind)(L->best[x].mk & 3);
            ps[x].start = ps[x].end = 0;
        }
        memset(&O, 0, sizeof O);
        O.name = q->info->name; O.devices = L->d; O.stages = L->S; O.microbatches = L->n;
        O.stage_device = L->sd; O.passes = ps; O.count = P;
        st = pp__from_order(&O, &q->c, 1, out, err);
        pp__mfree(&q->c.al, ps);
    }
    pp__mfree(&q->c.al, L->mem_block);
    return st;
}

/* zb-auto's list-built candidate. The Zero Bubble authors' heuristic
   (sail-sg's zb.py, its greedy part) builds a one-stage-per-device order
   microbatch by microbatch on the real times; the facts we take, in our own
   code: (1) microbatch 0: F on every device; then, from the last device up
   to the first, how many more F device j can run before the gradient of
   microbatch 0 reaches it (the last device's B end, plus comm per hop, plus
   B per device), within memory; a device never runs more of them than the
   device before it (the later device trims); then B from the last device;
   (2) every next microbatch: one F on each device that should (with the
   "B first" switch, a device two F ahead of the next skips its F when the
   next one's F and B come first or when the wait is within its idle
   budget), a device only where the next one also does; then B from the
   last device; before an F or B, W fill the wait for its input (a W that
   ends before the input arrives), and one more W goes in when the wait is
   beyond the idle budget (or, by a switch, also within it); W is also
   forced where an F would go above the memory limit, and device 0 runs its
   W before its B once its F are done; (3) the rest of the W. Three switches
   (idle allowed before the first B, B first, the extra W within the
   budget) give 8 runs; the shortest is kept. */
typedef struct pp__zl {
    pp__ls c;                    /* one stage per device: stage j on device j */
    int bubble_first, b_first, w_greedy;
    int *req;                    /* [d]: F to add */
} pp__zl;

static int pp__zl_run(pp__zl *Z) {
    pp__ls *L = &Z->c;
    int d = L->d, n = L->n, i, j, *req = Z->req;
    pp__ls_reset(L);
    for (j = 0; j < d; j++) req[j] = 0;
    /* 1: microbatch 0, and the F each device runs before its first B */
    for (j = 0; j < d; j++) if (!pp__ls_put(L, j, PP_F, j)) return 0;
    {
        double grad = *pp__ls_end(L, PP_F, d - 1, 0) + L->tm[(d - 1) * 4 + PP_B]; /* when device j's B can end */
        for (j = d - 2; j >= 0; j--) {
            double mem = L->mem[j], at = L->clock[j], tf = L->tm[j * 4 + PP_F];
            while (pp__ls_count(L, PP_F, j) + req[j] < n && mem + L->sm[j] <= L->cap[j] + PP__EPS &&
                   (Z->bubble_first ? !(at + tf > grad + L->comm) : !(at >= grad + L->comm))) {
                mem += L->sm[j]; at += tf; req[j]++;
            }
            grad = pp__max(at, grad + L->comm) + L->tm[j * 4 + PP_B];
        }
        for (j = 1; j < d; j++)
            while (req[j] > 0 && req[j] >= req[j - 1] && pp__ls_count(L, PP_F, j) + req[j] < n) req[j]--;
        for (j = 0; j < d; j++) for (i = 0; i < req[j]; i++) if (!pp__ls_put(L, j, PP_F, j)) return 0;
        for (j = d - 1; j >= 0; j--) if (!pp__ls_put(L, j, PP_B, j)) return 0;
    }
    /* 2: the next microbatches */
    for (i = 1; i < n; i++) {
        for (j = 0; j < d; j++) {
            int f = pp__ls_count(L, PP_F, j);
            req[j] = 0;
            if (f >= n) continue;
            if (Z->b_first && j + 1 < d && f >= pp__ls_count(L, PP_F, j + 1) + 2) {
                double next = L->clock[j + 1] + L->tm[(j + 1) * 4 + PP_F] + L->tm[(j + 1) * 4 + PP_B] + L->comm;
                double mem = L->mem[j] + L->sm[j], wc = 0;
                int k = 0;
                if (L->clock[j] >= next) continue;
                while (mem > L->cap[j] + PP__EPS && k < pp__ls_pending(L, j)) { wc += L->tm[j * 4 + PP_W]; mem -= L->sm[j]; k++; }
                if (L->clock[j] + L->tm[j * 4 + PP_F] + wc <= next) { req[j] = 1; continue; }
                if (next - L->clock[j] <= L->idle_max - L->idle[j]) continue;
            }
            req[j] = 1;
        }
        for (j = d - 2; j >= 0; j--) if (req[j + 1] < req[j]) req[j] = req[j + 1];
        for (j = 0; j < d; j++) {
            if (!req[j]) continue;
            while (L->mem[j] + L->sm[j] > L->cap[j] + PP__EPS) if (!pp__ls_put_w(L, j)) return 0;
            pp__ls_fill(L, j, PP_F, j, 1, Z->w_greedy);
            if (!pp__ls_put(L, j, PP_F, j)) return 0;
        }
        for (j = d - 1; j >= 0; j--) {
            if (pp__ls_count(L, PP_B, j) != i) return 0;
            pp__ls_fill(L, j, PP_B, j, 1, Z->w_greedy);
            if (j == 0 && pp__ls_count(L, PP_F, j) == n) while (pp__ls_put_w(L, j)) {}
            if (!pp__ls_put(L, j, PP_B, j)) return 0;
        }
    }
    /* 3: the rest of the W */
    for (j = 0; j < d; j++) while (pp__ls_put_w(L, j)) {}
    return pp__ls_full(L);
}

/* The shortest of the 8 runs within limit (units, every device) as a
   squeezed schedule in *out; NULL where none finishes or none is shorter
   than beat. */
static pp_status pp__zb_list(const pp__req *q, double limit, double beat, pp_schedule **out, char *err) {
    int d = q->d, v, j, *sd;
    pp__zl Z;
    pp_status st;
    double *cap;
    *out = NULL;
    memset(&Z, 0, sizeof Z);
    st = pp__ls_init(&Z.c, q, d, NULL, 2 * d, &Z.req, "zb-auto", err);
    if (st != PP_OK) return st;
    sd = Z.req + d;
    cap = Z.c.prev; /* the one cap, on every device */
    for (j = 0; j < d; j++) { sd[j] = j; cap[j] = limit; }
    Z.c.sd = sd; Z.c.cap = cap;
    for (v = 0; v < 8; v++) {
        Z.bubble_first = !(v & 4); Z.b_first = !(v & 2); Z.w_greedy = !(v & 1);
        if (pp__zl_run(&Z)) pp__ls_keep(&Z.c);
    }
    return pp__ls_finish(&Z.c, q, beat, out, err);
}

/* ---- interleaved, looped BFS, DualPipe: published orders and their blocks */

/* Appendix H's uniform repeat of the interleaved block. Every microbatch
   gets the same block, repeated every T = 3v cells: F steps one cell per
   device, BW steps 3v-1 cells (its 2 cells, then room for the other
   chunks' passes of the microbatches in flight); the F chain waits
   (3v-1)(d-1) cells where it wraps to the next chunk, the BW chain
   d-3v+2 cells more (possibly fewer) where it wraps back. Found by search
   over such linear blocks (F step, BW step, the two wrap gaps, the F->B
   turn) for the least squeezed makespan at unit times, d = 2..8, v = 2..3,
   and written in closed form; tests check it for every d up to 32. */
static pp_status pp__interleaved_uniform_block(int d, int v, const pp_allocator *al, pp_block **out, char *err) {
    pp__linear L;
    pp_block *b;
    pp_status st;
    memset(&L, 0, sizeof L);
    L.fo = 1; L.bo = 3 * v - 1; L.bw_cells = 2; L.interval = 3 * v; L.turn = 1;
    L.gf = (3 * v - 1) * (d - 1);
    L.gb = d - 3 * v + 2;
    st = pp__linear_block(d, v, 0, &L, al, &b, err);
    if (st != PP_OK) return st;
    st = pp_block_check(b, err);
    if (st != PP_OK) { pp_block_free(b); return st; }
    *out = b;
    return PP_OK;
}

/* Megatron's interleaved 1F1B as a per-device order: microbatches go in
   groups of d; device i warms up with 2(d-i-1) + (v-1)d forwards. */
static pp_status pp__interleaved_official(const pp__cfg *cfg, int d, int v, int n, pp_schedule **out, char *err) {
    pp_allocator al = cfg->al;
    int S = d * v, total = n * v, P = S * n * 2, dev, c = 0, k;
    pp_pass *ps;
    pp_order o;
    pp_status st;
    if ((long long)S * n > INT_MAX / 12) { pp__err(err, "%d stages x %d microbatches is too many", S, n); return PP_ERR_OVERFLOW; }
    ps = (pp_pass *)pp__malloc(&al, pp__size((size_t)P, sizeof(pp_pass)));
    if (!ps) { pp__err(err, "out of memory"); return PP_ERR_OUT_OF_MEMORY; }
    for (dev = 0; dev < d; dev++) {
        int warm = (d - dev - 1) * 2 + (v - 1) * d;
        if (warm > total) warm = total;
        for (k = 0; k < total + total; k++) {
            /* k-th op of this device: warm-up forwards, then F/BW pairs, then backwards */
            int fwd, idx, g;
            if (k < warm) { fwd = 1; idx = k; }
            else if (k < warm + 2 * (total - warm)) {
                int r = k - warm;
                fwd = r % 2 == 0;
                idx = fwd ? warm + r / 2 : r / 2;
            } else { fwd = 0; idx = k - warm - (total - warm); }
            g = idx % (d * v);
            ps[c].device = dev;
            ps[c].microbatch = (idx / (d * v)) * d + g % d;
            ps[c].stage = (fwd ? g / d : v - 1 - g / d) * d + dev;
            ps[c].kind = fwd ? PP_F : PP_BW;
            ps[c].start = ps[c].end = 0;
            c++;
        }
    }
    PP_ASSERT(c == P);
    o.name = "interleaved-1f1b";
    o.devices = d; o.stages = S; o.microbatches = n; o.stage_device = NULL; o.passes = ps; o.count = P;
    st = pp__from_order(&o, cfg, 1, out, err);
    pp__mfree(&al, ps);
    return st;
}

/* Appendix I, Figure 16c (lost; see DESIGN.md, interleaved-1f1b-m): the
   linear interleaved block with v = 2, T = 6, one-cell F steps, two-cell
   BW steps, turn 1, the chunk-1 -> chunk-0 wrap of the BW chain waiting
   gb = 4d-3 cells and the chunk-0 -> chunk-1 wrap of the F chain waiting
   gf = (3-d mod 6) + 6j cells (then F1 - F0 = 3 mod 6 on every device and
   the two BW pairs fill the other four cells). A j is tried at n0 = 2d
   microbatches with the configured times (repeat, squeeze, reorder with
   PP__RV_RANK): pp__ilm_try. The block is the first j of j0 .. j0+d/6+4
   that reaches Megatron's makespan at n0 (its order is built too), else
   the shortest (the makespan is not monotone in j). A larger j only
   lengthens chunk 0's lifespan, so the first is the least memory at that
   makespan. */
static pp_status pp__ilm_block(int d, int j, const pp_allocator *al, pp_block **out, char *err) {
    pp__linear L;
    memset(&L, 0, sizeof L);
    L.fo = 1; L.turn = 1; L.bo = 2; L.bw_cells = 2; L.interval = 6;
    L.gf = ((3 - d) % 6 + 6) % 6 + 6 * j;
    L.gb = 4 * d - 3;
    return pp__linear_block(d, 2, 0, &L, al, out, err);
}

/* j's block in *out and its makespan at n0 in *mk; seen[j - j0] (-1: not
   yet) keeps each j's makespan, so a j tried once is not reordered again */
static pp_status pp__ilm_try(const pp__cfg *cfg, int d, int j, const pp_allocator *al, double target, double *seen,
                             pp_block **out, double *mk, char *err) {
    pp_block *b = NULL;
    pp_schedule *s = NULL;
    pp_status st;
    *out = NULL;
    st = pp__ilm_block(d, j, al, &b, err);
    if (st == PP_OK && *seen >= 0) { *mk = *seen; *out = b; return PP_OK; }
    if (st == PP_OK) st = pp__repeat(b, 2 * d, NULL, cfg, 0, &s, err);
    if (st == PP_OK) st = pp_squeeze(s, err);
    /* v-auto's four ranking variants, until one reaches the target: a
       block that reaches it is taken whatever the rest would give */
    if (st == PP_OK) st = pp__reorder_to(s, PP__RV_RANK, 0, target, NULL, err);
    if (st == PP_OK) { *seen = *mk = s->makespan; *out = b; }
    else pp_block_free(b);
    pp_sched_free(s);
    return st;
}

/* The j that reach the target make one run (measured at unit and Table
   5's times, d = 2 .. 128: a few that do not, about d/11 of them, then
   about d/6 that do, then at most two that do not), so the first is found
   by steps of s = max(1, d/16) from j0 until one reaches it, then by
   halving the last step: about log2(d/16) + 3 tries of 8d^2 passes each,
   where trying every j up to the first costs about d/11 tries (d = 128:
   5 for 8). At d < 32 the steps are of 1, every j in turn. When no step
   reaches it (measured times, where Megatron's order is timed without
   our reordering), every j in turn as at d < 32; above PP__ILM_ALL_D
   devices the shortest step itself (d = 128: 4 tries instead of 30, each
   about 0.09 s; at such times the makespan after the reorder moves by up
   to 3% from one j to the next with no trend, and the j near the
   shortest step were no better on the whole; docs/quality.md). */
enum { PP__ILM_ALL_D = 32 };
static pp_status pp__interleaved_lowmem_block(const pp__cfg *cfg, int d, const pp_allocator *al, pp_block **out,
                                              char *err) {
    pp_block *best = NULL, *b = NULL;
    pp_schedule *meg = NULL;
    double best_mk = 0, target, mk = 0, *seen;
    int j, j0, jmax, lo, hi = -1, step = d / 16 > 1 ? d / 16 : 1, tries = 0, jfrom, jto, jstep = -1;
    pp_status st = pp__interleaved_official(cfg, d, 2, 2 * d, &meg, err);
    if (st != PP_OK) return st;
    target = meg->makespan;
    pp_sched_free(meg);
    /* below j0 (chunk 1 starting before 1.9d on device 0) nothing reached
       Megatron's makespan in our runs (d = 2..24, 32, 64; the first that
       did started at 1.67d to 2.5d), so those builds are skipped */
    j0 = (int)((0.9 * d - (double)(((3 - d) % 6 + 6) % 6)) / 6);
    if (j0 < 0) j0 = 0;
    jmax = j0 + d / 6 + 4;
    seen = (double *)pp__malloc(al, pp__size((size_t)(jmax - j0 + 1), sizeof(double)));
    if (!seen) { pp__err(err, "out of memory choosing the interleaved-1f1b-m block"); return PP_ERR_OUT_OF_MEMORY; }
    for (j = j0; j <= jmax; j++) seen[j - j0] = -1;
#define PP__ILM_TRY(jj)                                                                                              \
    do {                                                                                                             \
        st = pp__tick(cfg, "interleaved-1f1b-m: block choice", tries / (tries + 4.0), err);                          \
        tries++;                                                                                                     \
        if (st == PP_OK) st = pp__ilm_try(cfg, d, (jj), al, target, &seen[(jj) - j0], &b, &mk, err);                 \
        if (st != PP_OK) { pp_block_free(best); pp__mfree(al, seen); return st; }                                     \
    } while (0)
#define PP__ILM_REACHED (mk <= target + PP__EPS * (1 + target))
    /* the steps: lo the last j tried that did not reach the target */
    for (lo = j0 - 1, j = j0; j <= jmax; lo = j, j += step) {
        PP__ILM_TRY(j);
        if (PP__ILM_REACHED) { hi = j; best = b; break; }
        if (jstep < 0 || mk < seen[jstep - j0] - PP__EPS * (1 + mk)) jstep = j;
        pp_block_free(b);
    }
    /* halving: the first j after lo that reaches it */
    while (hi >= 0 && hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        PP__ILM_TRY(mid);
        if (PP__ILM_REACHED) { pp_block_free(best); best = b; hi = mid; }
        else { pp_block_free(b); lo = mid; }
    }
    if (hi >= 0) { pp__mfree(al, seen); *out = best; return PP_OK; }
    /* no step reached it: every j in turn (above PP__ILM_ALL_D devices the
       shortest step, already reordered), the first that reaches it, else
       the shortest (the first of those) */
    jfrom = j0; jto = jmax;
    if (d > PP__ILM_ALL_D) jfrom = jto = jstep;
    for (j = jfrom; j <= jto; j++) {
        PP__ILM_TRY(j);
        if (best && mk >= best_mk - PP__EPS * (1 + best_mk)) { pp_block_free(b); continue; }
        pp_block_free(best);
        best = b;
        best_mk = mk;
        if (PP__ILM_REACHED) break;
    }
#undef PP__ILM_TRY
#undef PP__ILM_REACHED
    pp__mfree(al, seen);
    *out = best;
    return PP_OK;
}

/* Breadth-first looped schedule (PyTorch's ScheduleLoopedBFS, the
   breadth-first end of Llama 3's depth-first/breadth-first knob): each
   device runs the forwards of its chunks in order, every microbatch of a
   chunk before the next chunk, then the backwards of its chunks in reverse,
   microbatches in reverse. Combined backward; memory grows with n. */
static pp_status pp__looped_bfs(const pp__cfg *cfg, int d, int v, int n, pp_schedule **out, char *err) {
    pp_allocator al = cfg->al;
    int S = d * v, P = S * n * 2, dev, c = 0, k, j;
    pp_pass *ps;
    pp_order o;
    pp_status st;
    ps = (pp_pass *)pp__malloc(&al, pp__size((size_t)P, sizeof(pp_pass)));
    if (!ps) { pp__err(err, "out of memory"); return PP_ERR_OUT_OF_MEMORY; }
    for (dev = 0; dev < d; dev++) {
        for (k = 0; k < v; k++)
            for (j = 0; j < n; j++, c++) {
                ps[c].device = dev; ps[c].stage = k * d + dev; ps[c].microbatch = j; ps[c].kind = PP_F;
                ps[c].start = ps[c].end = 0;
            }
        for (k = v - 1; k >= 0; k--)
            for (j = n - 1; j >= 0; j--, c++) {
                ps[c].device = dev; ps[c].stage = k * d + dev; ps[c].microbatch = j; ps[c].kind = PP_BW;
                ps[c].start = ps[c].end = 0;
            }
    }
    PP_ASSERT(c == P);
    o.name = "looped-bfs";
    o.devices = d; o.stages = S; o.microbatches = n; o.stage_device = NULL; o.passes = ps; o.count = P;
    st = pp__from_order(&o, cfg, 1, out, err);
    pp__mfree(&al, ps);
    return st;
}

/* The F&B pair rule (DeepSeek-V3 report, Sec. 3.2.1-3.2.2): a pair of x
   seconds in sequence, a of them all-to-all (clamped to 0 .. x), has
   compute c = x - a. One pass's all-to-all runs beside the other's compute;
   the communication kernels hold their SMs only while they run (20 of the
   H800's 132), so the compute keeps a share of the GPU for the time a and
   the whole GPU after it: share a + (t - a) = c, t = x - share a, and
   neither stream finishes before the longer of the two: t = a when c <
   share a. share 1 (the default, 0): full overlap, max(c, a). */
PP__DEF double pp_fb_pair_time(double x, double a, double share) {
    double t;
    a = a < 0 ? 0 : a > x ? x : a;
    t = x - (share > 0 ? share : 1) * a;
    return t > a ? t : a;
}

/* F&B overlap (DeepSeek-V3 report, Sec. 3.2.1, Table 2): s's passes timed
   again with each marked F (pair[i] = 1 at its index in s->passes) and the
   full backward that follows it on its device (B, then W) run as ONE pass,
   as a runtime does it (torchtitan's overlap_callback, PyTorch's
   OVERLAP_F_B): the pair starts when its device is free and BOTH inputs
   have arrived, lasts t_FB, and releases both outputs at its end. t_FB =
   fb_time when given, else pp_fb_pair_time(F + B + W, a, fb_share) =
   max(F + B + W - fb_share a, a), a = the communication parts of the three
   passes (fb_comm). Inside the pair's interval F, B, W get shares of t_FB
   in proportion to their own times, so no device runs two passes at once
   and every dependency holds. Every other pass is timed as pp__squeeze
   does. Devices run in turn as far as each can: a pass waits for an input
   not yet run. */
static pp_status pp__fb_time(pp_schedule *s, const unsigned char *pair, const pp__cfg *c, char *err) {
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes, i, left = P, moved = 1, npair = 0;
    int half = pp__dep_half(s), *tab, *ptr;
    pp_allocator *al = &s->allocator;
    size_t keys = (size_t)4 * S * n;
    double *endt = (double *)pp__malloc(al, pp__size(keys, sizeof(double)));
    unsigned char *done = (unsigned char *)pp__malloc(al, keys);
    int *buf = (int *)pp__malloc(al, pp__size((size_t)d + 16u * (size_t)S, sizeof(int)));
    double *free_at = (double *)pp__malloc(al, pp__size((size_t)d, sizeof(double)));
    const double comm = s->times.comm, *stt = s->stage_time;
    if (!endt || !done || !buf || !free_at) {
        pp__mfree(al, endt); pp__mfree(al, done); pp__mfree(al, buf); pp__mfree(al, free_at);
        pp__err(err, "out of memory timing F&B pairs");
        return PP_ERR_OUT_OF_MEMORY;
    }
    ptr = buf; tab = buf + d;
    pp__dep_table(s, tab);
    memset(done, 0, keys);
    for (i = 0; i < d; i++) { ptr[i] = s->device_start[i]; free_at[i] = 0; }
    while (left > 0 && moved) {
        moved = 0;
        for (i = 0; i < d; i++) {
            int j = ptr[i], stop = s->device_start[i + 1];
            while (j < stop) {
                pp_pass *p = &s->passes[j];
                int np = pair[j] && j + 2 < stop ? 3 : 1, q, k, in;
                double start = free_at[i], sum = 0, t, at;
                for (q = 0; q < (np == 3 ? 2 : 1); q++) { /* the inputs of the pass, or of the pair's F and B */
                    k = pp__dep_key(tab, S, half, &p[q], &in);
                    if (k < 0) continue;
                    if (!done[k]) break;
                    start = pp__max(start, endt[k] + (s->stage_device[in] != i ? comm : 0));
                }
                if (q < (np == 3 ? 2 : 1)) break;
                for (q = 0; q < np; q++) sum += stt[p[q].stage * 4 + (int)p[q].kind];
                t = sum;
                if (np == 3) {
                    double a = 0;
                    if (p[1].kind != PP_B || p[2].kind != PP_W || p[0].kind != PP_F) {
                        pp__err(err, "internal error: an F&B pair at pass %d is not F, B, W", j);
                        left = -1;
                        break;
                    }
                    if (c->fb_comm)
                        for (q = 0; q < 3; q++) {
                            const pp_times *x = &c->fb_comm[p[q].stage];
                            double part = q == 0 ? x->f : q == 1 ? x->b : x->w, whole = stt[p[q].stage * 4 + (int)p[q].kind];
                            a += part < whole ? (part > 0 ? part : 0) : whole;
                        }
                    t = c->fb_time > 0 ? c->fb_time : pp_fb_pair_time(sum, a, c->fb_share);
                    npair++;
                }
                at = start;
                for (q = 0; q < np; q++) {
                    double dur = stt[p[q].stage * 4 + (int)p[q].kind] * (sum > 0 ? t / sum : 0);
                    p[q].start = at;
                    p[q].end = q == np - 1 ? pp__max(at, start + t) : at + dur;
                    at = p[q].end;
                    k = pp__key(S, n, p[q].kind, p[q].stage, p[q].microbatch);
                    done[k] = 1;
                    endt[k] = start + t; /* a pair releases both outputs at its end */
                }
                free_at[i] = start + t;
                j += np;
                left -= np;
                moved = 1;
            }
            ptr[i] = j;
            if (left < 0) break;
        }
    }
    pp__mfree(al, endt); pp__mfree(al, done); pp__mfree(al, buf); pp__mfree(al, free_at);
    if (left < 0) return PP_ERR_INVALID_SCHEDULE;
    if (left > 0) {
        pp__err(err, "the F&B pairs deadlock (%d passes never run): a pair waits for its own output", left);
        return PP_ERR_DEADLOCK;
    }
    s->fb_pairs = npair;
    pp__metrics(s);
    return PP_OK;
}

/* DualPipeV (DeepSeek's V-shape variant of DualPipe, as in their
   dualpipev.py and PyTorch's ScheduleDualPipeV): V placement, rank r holds
   stage r (chunk 0) and stage 2d-1-r (chunk 1); every device runs eight
   phases: 2(d-r-1) F0; r+1 pairs F0 F1; d-r-1 times B1 W1 F1 (B split);
   n-2d+r+1 times "F0 with B1, F1 with B0"; d-r-1 times B1, "F1 with B0";
   r+1 times B1 B0 (the second half with B split, by rank parity); d-r-1
   times W, B0 (split); r+1 times W. A full backward here is B followed at
   once by W; a split one leaves W in a queue that the W steps take from,
   oldest first. DualPipe overlaps each F with the B it is paired with on
   the GPU; this model runs them one after the other, or with
   pp_config.fb_overlap as one pass of t_FB (pp__fb_time). Needs n >= 2d.

   DualPipe itself (DeepSeek-V3, Section 3.2.1; their dualpipe.py) runs the
   same eight phases on each device with (d, r, n) replaced by (d/2,
   h = min(r, d-1-r), n/2): DualPipeV is DualPipe folded in half. Its two
   chunks are the two model copies: on devices r < d/2 chunk 0 is copy A's
   stage r (fed from device 0) and chunk 1 copy B's (fed from device d-1);
   devices r >= d/2 swap them. */
typedef struct pp__dpv {
    pp_pass *ps;
    int c, n, dev, stage[2], mb0[2], fwd[2], bwd[2], *wq, wh, wt; /* wq: [2n], deferred W as stage * n + mb */
    unsigned char *pair; /* [P] or NULL: 1 at the F of an F&B pair (its full B, W follow it) */
} pp__dpv;

static void pp__dpv_emit(pp__dpv *D, pp_kind k, int stage, int mb) {
    pp_pass *p = &D->ps[D->c++];
    p->device = D->dev; p->stage = stage; p->microbatch = mb; p->kind = k; p->start = p->end = 0;
}
static void pp__dpv_f(pp__dpv *D, int chunk) { pp__dpv_emit(D, PP_F, D->stage[chunk], D->mb0[chunk] + D->fwd[chunk]++); }
static void pp__dpv_b(pp__dpv *D, int chunk, int split) {
    int st = D->stage[chunk], mb = D->mb0[chunk] + D->bwd[chunk]++;
    pp__dpv_emit(D, PP_B, st, mb);
    if (!split) pp__dpv_emit(D, PP_W, st, mb);
    else D->wq[D->wt++] = st * D->n + mb;
}
static void pp__dpv_w(pp__dpv *D) {
    int x = D->wq[D->wh++];
    pp__dpv_emit(D, PP_W, x / D->n, x % D->n);
}

/* the next F starts an F&B pair (its full B follows it) */
static void pp__dpv_pair(pp__dpv *D) { if (D->pair) D->pair[D->c] = 1; }

/* The eight phases of one device: H = half the pipeline's length (DualPipeV:
   d; DualPipe: d/2), r = the device's place in it, m = microbatches per chunk.
   The F&B pairs are dualpipe.py's: "F0 with B1, F1 with B0" in phase 4
   but the first F0, B1 of the last place (r = H-1), which run apart ("we
   don't overlap these two chunks to further reduce bubble size"), and
   "F1 with B0" in phase 5. */
static void pp__dpv_device(pp__dpv *D, int H, int r, int m) {
    int k;
    D->fwd[0] = D->fwd[1] = D->bwd[0] = D->bwd[1] = 0;
    D->wh = D->wt = 0;
    for (k = 0; k < 2 * (H - r - 1); k++) pp__dpv_f(D, 0);                                 /* 1: F0 */
    for (k = 0; k < r + 1; k++) { pp__dpv_f(D, 0); pp__dpv_f(D, 1); }                     /* 2: F0 F1 */
    for (k = 0; k < H - r - 1; k++) { pp__dpv_b(D, 1, 1); pp__dpv_w(D); pp__dpv_f(D, 1); } /* 3 */
    for (k = 0; k < m - 2 * H + r + 1; k++) {                                             /* 4: main */
        if (k > 0 || r != H - 1) pp__dpv_pair(D);
        pp__dpv_f(D, 0); pp__dpv_b(D, 1, 0);
        pp__dpv_pair(D);
        pp__dpv_f(D, 1); pp__dpv_b(D, 0, 0);
    }
    for (k = 0; k < H - r - 1; k++) { pp__dpv_b(D, 1, 0); pp__dpv_pair(D); pp__dpv_f(D, 1); pp__dpv_b(D, 0, 0); } /* 5 */
    {                                                                                     /* 6: B1 B0 */
        int zb = 0, half = (r + 1) / 2;
        for (k = 0; k < r + 1; k++) {
            if (k == half && r % 2 == 1) zb = 1;
            pp__dpv_b(D, 1, zb);
            if (k == half && r % 2 == 0) zb = 1;
            pp__dpv_b(D, 0, zb);
        }
    }
    for (k = 0; k < H - r - 1; k++) { pp__dpv_w(D); pp__dpv_b(D, 0, 1); }                  /* 7: W B0 */
    while (D->wh < D->wt) pp__dpv_w(D);                                                    /* 8: W */
    PP_ASSERT(D->fwd[0] == m && D->fwd[1] == m && D->bwd[0] == m && D->bwd[1] == m);
}

/* dual = 0: dualpipe-v; 1: dualpipe (two copies, routes in CONCEPTS). */
static pp_status pp__dualpipe(const pp__cfg *cfg, int d, int n, int dual, pp_schedule **out, char *err) {
    pp_allocator al = cfg->al;
    int S = 2 * d, P = S / (dual ? 2 : 1) * n * 3, i;
    int *sd;
    pp__dpv *D;
    pp_order o;
    pp_status st;
    if (dual && (d % 2 != 0 || n % 2 != 0 || n < 2 * d)) {
        pp__err(err, "dualpipe needs an even number of devices and an even number of microbatches >= 2 x devices, "
                     "got d=%d, n=%d; try d=%d, n=%d", d, n, d + d % 2, n < 2 * (d + d % 2) ? 2 * (d + d % 2) : n + n % 2);
        return PP_ERR_INVALID_ARG;
    }
    if (!dual && n < 2 * d) {
        pp__err(err, "dualpipe-v needs microbatches >= 2 x devices, got n=%d, d=%d; try n=%d", n, d, 2 * d);
        return PP_ERR_INVALID_ARG;
    }
    D = (pp__dpv *)pp__malloc(&al, sizeof(pp__dpv));
    sd = (int *)pp__malloc(&al, pp__size((size_t)S, sizeof(int)));
    if (D) D->ps = (pp_pass *)pp__malloc(&al, pp__size((size_t)P, sizeof(pp_pass)));
    if (D) D->wq = (int *)pp__malloc(&al, pp__size((size_t)2 * n, sizeof(int)));
    if (D) D->pair = cfg->fb_overlap ? (unsigned char *)pp__malloc(&al, (size_t)P) : NULL;
    if (!D || !sd || !D->ps || !D->wq || (cfg->fb_overlap && !D->pair)) {
        if (D) { pp__mfree(&al, D->ps); pp__mfree(&al, D->wq); pp__mfree(&al, D->pair); }
        pp__mfree(&al, D); pp__mfree(&al, sd);
        pp__err(err, "out of memory");
        return PP_ERR_OUT_OF_MEMORY;
    }
    D->c = 0; D->n = n;
    if (D->pair) memset(D->pair, 0, (size_t)P);
    /* both place stage s < d on device s and stage s >= d on 2d-1-s: for
       dualpipe, stages d..2d-1 are copy B's stages 0..d-1 */
    for (i = 0; i < S; i++) sd[i] = pp__place(PP_PLACE_VSHAPE, d, i);
    for (D->dev = 0; D->dev < d; D->dev++) {
        int r = D->dev;
        if (!dual) {
            D->stage[0] = r; D->stage[1] = 2 * d - 1 - r;
            D->mb0[0] = D->mb0[1] = 0;
            pp__dpv_device(D, d, r, n);
        } else {
            int second = r >= d / 2; /* chunk c is copy c ^ second */
            D->stage[second] = r; D->mb0[second] = 0;                     /* copy A */
            D->stage[!second] = 2 * d - 1 - r; D->mb0[!second] = n / 2;   /* copy B */
            pp__dpv_device(D, d / 2, second ? d - 1 - r : r, n / 2);
        }
    }
    PP_ASSERT(D->c == P);
    o.name = dual ? "dualpipe" : "dualpipe-v";
    o.devices = d; o.stages = S; o.microbatches = n; o.stage_device = sd; o.passes = D->ps; o.count = P;
    st = pp__from_order(&o, cfg, dual ? 2 : 1, out, err);
    /* pp__from_order keeps the device-major order the phases were emitted in */
    if (st == PP_OK && D->pair) {
        st = pp__fb_time(*out, D->pair, cfg, err);
        if (st != PP_OK) { pp_sched_free(*out); *out = NULL; }
    }
    pp__mfree(&al, D->ps); pp__mfree(&al, D->wq); pp__mfree(&al, D->pair); pp__mfree(&al, D); pp__mfree(&al, sd);
    return st;
}

/* ---- v-zb built pass by pass: a list-built warm-up and steady phase ---- */

/* V-ZB's block, repeated and squeezed, lays its warm-up on the unit grid:
   with comm, or at n = d where the warm-up and cool-down are the whole
   schedule, each device waits wherever a chunk's input is late. The Zero
   Bubble authors' V-ZB generator (sail-sg's zbv.py) builds the order pass by
   pass on the real times instead. The facts we take from it, in our own
   code: (1) every device runs F of chunk 0 for microbatch 0; then, from the
   last device down, device i runs extra F of chunk 0 (with devices 0..i
   keeping pace) while they end before chunk 1's input reaches it (its
   producer's end + comm) and while 2 + 2i more F still fit its memory, then
   its first F of chunk 1; (2) devices i >= 1 catch up with device i-1 in
   F passes, chunk by chunk from the last device; (3) 2n rounds, each one B
   per device (chunk 1's B where its input is there, the devices in V order)
   and then one F per device, where a W fills the wait for an input that
   arrives at least a W later, and one more W goes in when the wait is
   longer than the device's idle budget (the largest idle of any device,
   minus its own); (4) the rest of the W. It is run four times (one extra
   W before a chunk-0 B, before an F: on or off), and each run again with
   the idle of the previous run as a per-device budget while that lowers
   the largest idle. Every run is timed as it is built (the times are a
   squeeze of the order); pp__vzb_list keeps the shortest. */
typedef struct pp__vl {
    pp__ls c;                    /* V placement: device r holds stages r and 2d-1-r */
    int fill_f, fill_b;
    int *bq;                     /* [d]: a round's B, device r as r (chunk 0) or -1-r (chunk 1) */
} pp__vl;

/* device r's pass q (PP__V_F0 .. PP__V_B0): how many are placed, the end
   of microbatch j's, put the next, fill the wait before it */
static int pp__vl_cnt(const pp__vl *V, int r, int q) { return pp__ls_count(&V->c, pp__v_kind(q), pp__v_stage(V->c.d, r, q)); }
static double pp__vl_end(const pp__vl *V, int q, int r, int j) {
    return *pp__ls_end(&V->c, pp__v_kind(q), pp__v_stage(V->c.d, r, q), j);
}
static int pp__vl_put(pp__vl *V, int r, int q) { return pp__ls_put(&V->c, r, pp__v_kind(q), pp__v_stage(V->c.d, r, q)); }
static void pp__vl_fill(pp__vl *V, int r, int q, int extra) {
    pp__ls_fill(&V->c, r, pp__v_kind(q), pp__v_stage(V->c.d, r, q), extra, 0);
}

/* One run (steps 1-4 above); 0 where a step finds no legal pass. */
static int pp__vl_run(pp__vl *V) {
    pp__ls *L = &V->c;
    int d = L->d, n = L->n, r, j, round, alt = PP__V_F0;
    pp__ls_reset(L);
    /* 1: the warm-up, comm counted in when chunk 1's input arrives */
    for (r = 0; r < d; r++) if (!pp__vl_put(V, r, PP__V_F0)) return 0;
    for (r = d - 1; r >= 0; r--) {
        if (r < d - 1) {
            int st = pp__v_stage(d, r, PP__V_F0);
            double arrive = pp__vl_end(V, PP__V_F1, r + 1, 0) + L->comm;
            while (L->mem[r] + L->sm[st] * (2 + 2 * r) <= L->cap[r] + PP__EPS &&
                   L->clock[r] + L->tm[st * 4 + PP_F] <= arrive && pp__vl_cnt(V, r, PP__V_F0) < n)
                for (j = 0; j <= r; j++) if (!pp__vl_put(V, j, PP__V_F0)) return 0;
        }
        if (!pp__vl_put(V, r, PP__V_F1)) return 0;
    }
    /* 2: each device catches up with the one before it in F passes */
    for (r = 1; r < d; r++) {
        while (pp__vl_cnt(V, r, PP__V_F0) + pp__vl_cnt(V, r, PP__V_F1) <
                   pp__vl_cnt(V, r - 1, PP__V_F0) + pp__vl_cnt(V, r - 1, PP__V_F1) ||
               (pp__vl_cnt(V, r, PP__V_F1) <= pp__vl_cnt(V, r - 1, PP__V_F1) && pp__vl_cnt(V, r - 1, PP__V_F1) < n)) {
            for (j = d - 1; j >= r; j--)
                if (pp__vl_cnt(V, j, alt) < n && !pp__vl_put(V, j, alt)) return 0;
            alt = alt == PP__V_F0 ? PP__V_F1 : PP__V_F0;
        }
    }
    /* 3: 2n rounds of one B, then one F, per device */
    for (round = 0; round < 2 * n; round++) {
        int i, nb = 0;
        /* B: chunk 0's B (q B0) where its input is there, from the last
           device down, then chunk 1's B (q B1) on the others in device
           order; which one each device runs is decided before any runs */
        for (i = 0; i < 2; i++)
            for (r = i ? 0 : d - 1; i ? r < d : r >= 0; r += i ? 1 : -1) {
                int c0 = pp__vl_cnt(V, r, PP__V_B0), c1 = pp__vl_cnt(V, r, PP__V_B1);
                int b0 = c0 < c1 && (r == d - 1 || c1 >= n || pp__vl_end(V, PP__V_B0, r + 1, c0) >= 0);
                if (b0 == !i) V->bq[nb++] = b0 ? r : -1 - r;
            }
        for (i = 0; i < nb; i++) {
            int b0 = V->bq[i] >= 0, qq = b0 ? PP__V_B0 : PP__V_B1;
            r = b0 ? V->bq[i] : -1 - V->bq[i];
            pp__vl_fill(V, r, qq, b0 || V->fill_b);
            if (!pp__vl_put(V, r, qq)) return 0;
        }
        /* F: chunk 1's where its input is there, else chunk 0's where its input is there */
        for (r = 0; r < d; r++) {
            int c0 = pp__vl_cnt(V, r, PP__V_F0), c1 = pp__vl_cnt(V, r, PP__V_F1), qq = -1, st;
            if (c1 >= n) continue;
            if (c1 >= c0) qq = PP__V_F0;
            else if (r == d - 1 || pp__vl_end(V, PP__V_F1, r + 1, c1) >= 0) qq = PP__V_F1;
            else if (c0 < n && (r == 0 || pp__vl_end(V, PP__V_F0, r - 1, c0) >= 0)) qq = PP__V_F0;
            if (qq < 0) continue;
            st = pp__v_stage(d, r, qq);
            while (L->mem[r] + L->sm[st] > L->cap[r] + PP__EPS) if (!pp__ls_put_w(L, r)) return 0;
            pp__vl_fill(V, r, qq, V->fill_f);
            if (!pp__vl_put(V, r, qq)) return 0;
        }
    }
    /* 4: the rest of the W */
    for (r = 0; r < d; r++) while (pp__ls_put_w(L, r)) {}
    return pp__ls_full(L);
}

/* Fills key ([5 S + d + 1]) with what pp__vzb_list's runs read of q and
   cap; 1 when sh holds their result for those (pp__vshare). */
static int pp__vzb_shared(const pp__vshare *sh, const pp__req *q, const double *cap, double *key) {
    int S = 2 * q->d, i;
    for (i = 0; i < 4 * S; i++) key[i] = q->shape.stage_time[i];
    for (i = 0; i < S; i++) key[4 * S + i] = q->shape.stage_memory[i];
    for (i = 0; i < q->d; i++) key[5 * S + i] = cap[i];
    key[5 * S + q->d] = q->c.times.comm;
    return sh->vzb_key && sh->vzb_n == q->n && sh->vzb_d == q->d &&
           !memcmp(sh->vzb_key, key, (size_t)(5 * S + q->d + 1) * sizeof *key);
}

/* The shortest order of the runs, within cap ([d], units), as a squeezed
   schedule in *out; NULL where no run finishes or none is shorter than
   beat (its makespan is known before the schedule is built). */
static pp_status pp__vzb_list(const pp__req *q, const double *cap, double beat, pp_schedule **out, char *err) {
    int d = q->d, r, fb, ff, it, *sd, S = 2 * d, nk = 5 * S + d + 1;
    size_t P = (size_t)3 * S * q->n;
    pp__vl V;
    pp__vshare *sh = q->vshare;
    double *key = NULL;
    pp_status st;
    *out = NULL;
    memset(&V, 0, sizeof V);
    st = pp__ls_init(&V.c, q, 2 * d, cap, 3 * d, &V.bq, "v-zb", err);
    if (st != PP_OK) return st;
    sd = V.bq + d;
    for (r = 0; r < 2 * d; r++) sd[r] = r < d ? r : 2 * d - 1 - r;
    V.c.sd = sd;
    /* this build ran the same runs already: their result */
    if (sh) {
        key = (double *)pp__malloc(&q->c.al, pp__size((size_t)nk, sizeof *key));
        if (key && pp__vzb_shared(sh, q, cap, key)) {
            V.c.best_mk = sh->vzb_mk;
            if (sh->vzb_mk >= 0) memcpy(V.c.best, sh->vzb, P * sizeof *V.c.best);
            pp__mfree(&q->c.al, key);
            return pp__ls_finish(&V.c, q, beat, out, err);
        }
        if (sh->vzb_key) { pp__mfree(&q->c.al, key); key = NULL; } /* the share holds another's */
    }
    for (fb = 1; fb >= 0; fb--)
        for (ff = 1; ff >= 0; ff--) {
            double last = -1;
            V.fill_b = fb; V.fill_f = ff; V.c.budget = NULL;
            /* again with the idle of the run before as the budget, while the largest idle drops */
            for (it = 0; it < 64; it++) {
                double top = 0;
                if (!pp__vl_run(&V)) break;
                pp__ls_keep(&V.c);
                for (r = 0; r < d; r++) top = pp__max(top, V.c.idle[r]);
                if (V.c.budget && !(top < last)) break;
                memcpy(V.c.prev, V.c.idle, (size_t)d * sizeof *V.c.prev);
                V.c.budget = V.c.prev; V.c.budget_max = last = top;
            }
        }
    if (key) { /* into the share, which frees both (without room for the order, not shared) */
        sh->vzb = V.c.best_mk < 0 ? NULL : (pp__lsp *)pp__malloc(&q->c.al, pp__size(P, sizeof *V.c.best));
        if (V.c.best_mk < 0 || sh->vzb) {
            sh->vzb_key = key; sh->vzb_n = q->n; sh->vzb_d = d; sh->vzb_mk = V.c.best_mk;
            if (sh->vzb) memcpy(sh->vzb, V.c.best, P * sizeof *V.c.best);
        } else pp__mfree(&q->c.al, key);
    }
    return pp__ls_finish(&V.c, q, beat, out, err);
}

/* ---- adaptive schedules under a memory limit (Appendix A) -------------- */

/* Candidates are grouped by their Eq. 1 peak (in half units, a "level").
   A first pass over the search space only notes which levels have a
   block; the second ranks the blocks of the PP__AUTO_LEVELS highest of
   those by their squeezed makespan at PP__AUTO_NEVAL microbatches (real
   times, no reordering). The best PP__AUTO_TOP of each level are reordered
   at PP__AUTO_N2 microbatches with the reorder variants PP__RV_RANK; a
   level goes on when its best beats every lower level there, and the
   PP__AUTO_BUILD best of those (over all levels) are built at the real n
   with every reorder variant (pp__block_schedule: at 2d+4 microbatches,
   extended by the stable phase), every device allowed up to the limit.
   Only blocks whose Eq. 1 bound fits are used, and reordering never goes
   above the limit, so the simulated peak fits. The numbers are the
   cheapest we found that lose no configuration of our grid to the slower
   search before them (see DESIGN.md). */
enum {
    PP__AUTO_TOP = 16,   /* blocks kept per level */
    PP__AUTO_FINAL = 2,  /* best of a level that go on */
    PP__AUTO_BUILD = 6,  /* built at the real n */
    PP__AUTO_TOPX = 4,   /* the same for the blocks with wider turns, ranked apart */
    PP__AUTO_BUILDX = 2,
    PP__AUTO_LEVELS = 6, /* levels ranked */
    PP__AUTO_SEEN = 65536, /* hashes of the blocks already tried */
    /* v-auto's own PP__AUTO_TOP and PP__AUTO_LEVELS (see below), and its blocks' ranges */
    PP__VAUTO_TOP = 4, PP__VAUTO_LEVELS = 3, PP__VAUTO_TURNS = 2, PP__VAUTO_TURNSX = 2, PP__VAUTO_D0 = 4, PP__VAUTO_D1 = 3
};
/* v-auto's own PP__AUTO_TOP and PP__AUTO_LEVELS (at most those): since its
   grid family (pp__vgrid_search) runs beside the block search, 4 blocks of
   3 levels lose nothing on our grids (336 configurations d 4..16, n 2d and
   4d, limits d/2-1/2..d, three time settings; 40 at n = 8d up to d = 32;
   the 60 against sail-sg's scheduler), at about 2/3 of the time. zb-auto
   keeps 16 and 6: fewer made 18 of 582 configurations longer. v-auto's
   blocks: delta0 in 1..PP__VAUTO_D0 cells, delta1 in 1..PP__VAUTO_D1, turns
   at most PP__VAUTO_TURNS above the smallest that repeats (and
   PP__VAUTO_TURNSX more, ranked apart). */
/* microbatches of the first ranking (squeezed makespan) and of the second (reordered) */
static int pp__auto_neval(int d) { return 2 * d; }
static int pp__auto_n2(int d) { return d + 2; }
typedef struct pp__auto {
    const pp__req *q;
    pp_allocator al;
    int n, n_eval, n2, levels;
    int pass, lev_min;       /* pass 0 only marks the levels that have a block; pass 1 ranks from lev_min */
    int ntop, nlev;          /* blocks kept per level (<= PP__AUTO_TOP), levels ranked */
    int nl, extra;           /* levels [nl, 2 nl): the same for blocks with wider turns (extra = 1), ranked apart */
    double limit, min_mem;   /* min_mem: least peak of any legal candidate seen */
    double lb_eval;          /* pp__order_bound at n_eval microbatches (the same for every block), -1 = not yet */
    double lb_n;             /* the same at n, from the first schedule of the search's passes pp__auto_finish builds */
    int *count;              /* [levels] */
    unsigned long *seen;     /* [PP__AUTO_SEEN]: hashes of the blocks already tried, 0 = empty */
    pp_block **top;          /* [levels * PP__AUTO_TOP] */
    double *top_mk;          /* [levels * PP__AUTO_TOP] */
    int shape[4];            /* the blocks' devices, chunks, stages, split that the buffers below fit */
    const double *tm;        /* [stages * 4] stage times: the shape's */
    double comm;
    int exact;               /* every time and comm a multiple of 2^-10, all the work below 2^40: sums are exact */
    double *endt, *free_at;  /* [4 * stages * n_eval], [2 * devices]: pp__block_makespan's scratch */
    int *ent;                /* [stages * 3 * 4]: a block's passes (pp__block_makespan) */
    const int *dtab;         /* [16 * stages]: the shape's inputs */
    double *ent_dur, *ent_comm; /* [stages * 3] each: their times, and the comm before them */
    pp__memo own, *memo;     /* the reorders of stages 2 and 3: the build's (pp__vshare), else its own */
    int kept;                /* pass 0: the block just considered was kept (fits, no collision, not seen) */
    int replay;              /* pass 1 builds only what pass 0 kept: no need to check again */
} pp__auto;

/* 1 when p holds the first pass of a search of d devices under limit with
   A's levels ranked (pp__pass0) */
static int pp__pass0_held(const pp__pass0 *p, const pp__auto *A, int d, double limit) {
    return p && p->rec && p->d == d && p->limit == limit && p->nlev == A->nlev;
}
/* A's first pass (its list rec of nrec blocks) into p where p holds none:
   1 when p took the list (and frees it with the share) */
static int pp__pass0_keep(pp__pass0 *p, const pp__auto *A, int d, double limit, void *rec, int nrec) {
    if (!p || p->rec || nrec <= 0) return 0;
    p->d = d; p->nlev = A->nlev; p->nrec = nrec; p->lev_min = A->lev_min;
    p->limit = limit; p->min_mem = A->min_mem; p->rec = rec;
    return 1;
}

/* ntop (at most PP__AUTO_TOP) blocks kept per level, nlev levels ranked */
static pp_status pp__auto_init(pp__auto *A, const pp__req *q, int ntop, int nlev, char *err) {
    int d = q->d, n = q->n;
    double limit = q->limit;
    memset(A, 0, sizeof *A);
    A->q = q; A->al = q->c.al; A->n = n; A->limit = limit; A->min_mem = -1; A->lb_eval = A->lb_n = -1;
    pp__memo_init(&A->own, &A->al);
    A->memo = q->vshare ? &q->vshare->memo : &A->own;
    A->ntop = ntop < PP__AUTO_TOP ? ntop : PP__AUTO_TOP; A->nlev = nlev;
    A->n_eval = n < pp__auto_neval(d) ? n : pp__auto_neval(d);
    A->n2 = n < pp__auto_n2(d) ? n : pp__auto_n2(d);
    A->nl = (int)(2 * limit + 1e-9) + 1;
    A->levels = 2 * A->nl;
    A->count = (int *)pp__malloc(&A->al, pp__size((size_t)A->levels, sizeof(int)));
    A->top = (pp_block **)pp__malloc(&A->al, pp__size((size_t)A->levels * PP__AUTO_TOP, sizeof(pp_block *)));
    A->top_mk = (double *)pp__malloc(&A->al, pp__size((size_t)A->levels * PP__AUTO_TOP, sizeof(double)));
    A->seen = (unsigned long *)pp__malloc(&A->al, pp__size(PP__AUTO_SEEN, sizeof(unsigned long)));
    if (!A->count || !A->top || !A->top_mk || !A->seen) {
        pp__mfree(&A->al, A->count); pp__mfree(&A->al, A->top); pp__mfree(&A->al, A->top_mk); pp__mfree(&A->al, A->seen);
        pp__err(err, "out of memory in the adaptive search");
        return PP_ERR_OUT_OF_MEMORY;
    }
    memset(A->count, 0, (size_t)A->levels * sizeof(int));
    memset(A->seen, 0, PP__AUTO_SEEN * sizeof(unsigned long));
    return PP_OK;
}

/* 1 if an identical block was considered before (different parameters
   often give the same offsets); remembers it otherwise. */
static int pp__auto_seen(pp__auto *A, const pp_block *b) {
    unsigned long h = 1469598103UL;
    int i, m = b->stages * b->microbatches;
    size_t slot, probes;
    for (i = 0; i < m; i++) {
        h = (h ^ (unsigned long)b->f[i]) * 1099511UL;
        h = (h ^ (unsigned long)b->b[i]) * 1099511UL;
        h = (h ^ (unsigned long)b->w[i]) * 1099511UL;
    }
    if (!h) h = 1;
    slot = (size_t)(h % PP__AUTO_SEEN);
    for (probes = 0; probes < PP__AUTO_SEEN; probes++, slot = (slot + 1) % PP__AUTO_SEEN) {
        if (A->seen[slot] == h) return 1;
        if (!A->seen[slot]) { A->seen[slot] = h; return 0; }
    }
    return 0; /* full: just evaluate */
}

/* After pass 0: only the A->nlev (PP__AUTO_LEVELS) highest levels that have a block
   are ranked (the shortest schedule comes from the top level or the one
   below it in every configuration we measured: reordering may fill any
   block up to the limit, so a lower level brings a worse block to the
   same memory). */
static int pp__auto_next_pass(pp__auto *A) {
    int l, k = 0;
    if (A->pass > 0) return A->pass + 1;
    A->lev_min = 0;
    for (l = A->nl - 1; l >= 0; l--)
        if (A->count[l] && ++k == A->nlev) { A->lev_min = l; break; }
    memset(A->count, 0, (size_t)A->levels * sizeof(int));
    memset(A->seen, 0, PP__AUTO_SEEN * sizeof(unsigned long));
    return 1;
}

static void pp__auto_free_eval(pp__auto *A) {
    pp__mfree(&A->al, A->endt); pp__mfree(&A->al, A->free_at); pp__mfree(&A->al, A->ent);
    pp__mfree(&A->al, A->ent_dur);
    A->endt = A->free_at = A->ent_dur = A->ent_comm = NULL; A->ent = NULL;
    A->tm = NULL; A->dtab = NULL;
}

static void pp__auto_release(pp__auto *A) {
    int l, k;
    for (l = 0; l < A->levels; l++)
        for (k = 0; k < A->count[l]; k++) pp_block_free(A->top[l * PP__AUTO_TOP + k]);
    pp__mfree(&A->al, A->count); pp__mfree(&A->al, A->top); pp__mfree(&A->al, A->top_mk); pp__mfree(&A->al, A->seen);
    A->count = NULL; A->top = NULL; A->top_mk = NULL; A->seen = NULL;
    pp__auto_free_eval(A);
    pp__memo_free(&A->own);
}

/* 1 when every time of S stages (tm[4 s + kind]) and comm is a multiple
   of 2^-10 and n of each, with a comm for each of 3 passes, stay below
   2^40: then every sum and difference of them in a timing is exact */
static int pp__sums_exact(const double *tm, int S, double comm, int n) {
    int i;
    double total = comm * 1024.0 * 3.0 * S * n;
    if (comm * 1024.0 != (double)(long long)(comm * 1024.0)) return 0;
    for (i = 0; i < 4 * S; i++) {
        double x = tm[i] * 1024.0;
        if (x != (double)(long long)x) return 0;
        total += x * n;
    }
    return total < 1099511627776.0 * 1024.0;
}

/* The buffers of pp__block_makespan for blocks shaped like b (the shape
   of the schedule asked for: its stage times and inputs are the shape's). */
static pp_status pp__auto_eval_init(pp__auto *A, const pp_block *b, char *err) {
    int S = b->stages, d = b->devices;
    if (A->tm && A->shape[0] == d && A->shape[1] == b->chunks && A->shape[2] == S && A->shape[3] == b->split_backward)
        return PP_OK;
    PP_ASSERT(d == A->q->d && S == A->q->S && b->split_backward == A->q->shape.split);
    pp__auto_free_eval(A);
    A->ent = (int *)pp__malloc(&A->al, pp__size((size_t)S * 12u, sizeof(int)));
    if (!A->ent) { pp__err(err, "out of memory in the adaptive search"); return PP_ERR_OUT_OF_MEMORY; }
    A->dtab = A->q->shape.dtab;
    A->tm = A->q->shape.stage_time;
    A->comm = A->q->c.times.comm;
    A->exact = pp__sums_exact(A->tm, S, A->comm, A->n_eval);
    A->endt = (double *)pp__malloc(&A->al, pp__size((size_t)S * 4u * (size_t)A->n_eval, sizeof(double)));
    A->free_at = (double *)pp__malloc(&A->al, pp__size((size_t)d, 2u * sizeof(double)));
    A->ent_dur = (double *)pp__malloc(&A->al, pp__size((size_t)S * 6u, sizeof(double)));
    if (A->ent_dur) A->ent_comm = A->ent_dur + (size_t)S * 3u;
    if (!A->endt || !A->free_at || !A->ent_dur) {
        pp__auto_free_eval(A);
        pp__err(err, "out of memory in the adaptive search");
        return PP_ERR_OUT_OF_MEMORY;
    }
    A->shape[0] = d; A->shape[1] = b->chunks; A->shape[2] = S; A->shape[3] = b->split_backward;
    return PP_OK;
}

/* The makespan pp__repeat then pp_squeeze give the one-microbatch block b
   at n <= A->n_eval microbatches, without building the schedule. Copy k
   of the block starts at cell kT, and every input lies in an earlier cell
   (pp_block_check), so the passes run in cell order over all devices, each
   as early as its device and its input allow: pp__squeeze's arithmetic,
   in the same order per device, so the same figure to the last bit.
   beat: the caller keeps the block only when its makespan is below beat;
   the timing stops (returning at least beat) once a device's end so far
   plus the work it has left, every pass as early as it can, is above beat
   by more than the rounding of those sums: the makespan cannot be lower.
   Where those sums are exact (A->exact: unit times, and any times in
   multiples of 2^-10), it stops once that is at least beat: the makespan
   cannot be lower than beat (a tie is stopped too, which matters at unit
   times, where most blocks of a level tie). */
static double pp__block_makespan(pp__auto *A, const pp_block *b, int n, double beat) {
    int S = b->stages, T = b->interval, kinds = b->split_backward ? 3 : 2, E = S * kinds, d = b->devices, i, g, e, r,
        at = 0, qmax = 0;
    int *ent = A->ent; /* per pass, in the order of cell mod T: copy offset cell / T, device, key, input key (-1: none) */
    double *endt = A->endt, *free_at = A->free_at, *left = A->free_at + d, *dur = A->ent_dur, *cadd = A->ent_comm,
           mk = 0;
    for (i = 0; i < d; i++) free_at[i] = left[i] = 0;
    for (r = 0; r < T; r++)
        for (e = 0; e < E; e++) {
            int s = e % S, q = e / S, cell = q == 0 ? b->f[s] : q == 1 ? b->b[s] : b->w[s], in, ds;
            pp_kind k = q == 0 ? PP_F : q == 1 ? (b->split_backward ? PP_B : PP_BW) : PP_W;
            if (cell % T != r) continue;
            in = A->dtab[(int)k * S + s]; /* one route: the first half of the table */
            ds = A->dtab[8 * S + (int)k * S + s];
            ent[4 * at] = cell / T;
            ent[4 * at + 1] = b->stage_device[s];
            ent[4 * at + 2] = ((int)k * S + s) * n;
            ent[4 * at + 3] = in < 0 ? -1 : in * n;
            dur[at] = A->tm[s * 4 + (int)k];
            cadd[at] = in >= 0 && b->stage_device[ds] != b->stage_device[s] ? A->comm : 0;
            if (cell / T > qmax) qmax = cell / T;
            at++;
        }
    if (beat < 1e300)
        for (e = 0; e < E; e++) left[ent[4 * e + 1]] += dur[e] * n;
    /* period g holds copy g - cell / T of every pass */
    for (g = 0; g <= qmax + n - 1; g++) {
        for (e = 0; e < E; e++) {
            int j = g - ent[4 * e], dev = ent[4 * e + 1];
            double start = free_at[dev], end;
            if ((unsigned)j >= (unsigned)n) continue;
            if (ent[4 * e + 3] >= 0) start = pp__max(start, endt[ent[4 * e + 3] + j] + cadd[e]);
            end = start + dur[e];
            endt[ent[4 * e + 2] + j] = free_at[dev] = end;
            mk = pp__max(mk, end);
            left[dev] -= dur[e];
        }
        if (beat < 1e300 && g % 8 == 7)
            for (i = 0; i < d; i++)
                if (A->exact ? free_at[i] + left[i] >= beat : free_at[i] + left[i] > beat * (1 + 1e-9) + 1e-9)
                    return pp__max(mk, beat);
    }
    return mk;
}

/* Takes ownership of blk. */
static pp_status pp__auto_consider(pp__auto *A, pp_block *blk, char *err) {
    pp_schedule *s = NULL;
    pp_status st;
    double mem, mk, *tm, beat;
    pp_block **tb;
    int i, k, lev, *cnt, top = A->extra && PP__AUTO_TOPX < A->ntop ? PP__AUTO_TOPX : A->ntop;
    if (!A->replay && pp__auto_seen(A, blk)) { pp_block_free(blk); return PP_OK; }
    mem = pp__block_max_bound(blk);
    lev = (int)(2 * mem + 0.5);
    if (lev >= A->nl) lev = A->nl - 1;
    /* pass 1 needs only the levels kept; pass 0 checked the rest */
    if (A->pass == 1 && (mem > A->limit + 1e-9 || lev < A->lev_min)) { pp_block_free(blk); return PP_OK; }
    if (A->extra) lev += A->nl;
    if (!A->replay && pp_block_check(blk, NULL) != PP_OK) { pp_block_free(blk); return PP_OK; }
    if (A->min_mem < 0 || mem < A->min_mem) A->min_mem = mem;
    if (mem > A->limit + 1e-9) { pp_block_free(blk); return PP_OK; }
    if (A->pass == 0) { A->count[lev] = 1; A->kept = 1; pp_block_free(blk); return PP_OK; }
    cnt = &A->count[lev];
    tb = &A->top[lev * PP__AUTO_TOP];
    tm = &A->top_mk[lev * PP__AUTO_TOP];
    if (A->lb_eval < 0) { /* every block has the same passes at n_eval, so the same bound */
        st = pp__repeat(blk, A->n_eval, NULL, &A->q->c, 0, &s, err);
        if (st == PP_OK) st = pp_squeeze(s, err);
        if (st == PP_OK) A->lb_eval = pp__order_bound(s);
        pp_sched_free(s);
        s = NULL;
        if (st != PP_OK) { pp_block_free(blk); return st; }
    }
    /* a full level whose last is at that bound keeps no more: a block goes
       in only when shorter (with 1e-9 of slack, less the rounding of sums
       of up to about 1e4 passes) */
    if (*cnt == top && tm[top - 1] <= A->lb_eval + 0.5e-9 - 1e-12 * A->lb_eval) { pp_block_free(blk); return PP_OK; }
    if (blk->microbatches == 1) {
        st = pp__auto_eval_init(A, blk, err);
        if (st != PP_OK) { pp_block_free(blk); return st; }
        /* a full level takes a block below its longest only */
        for (k = 0, beat = 1e300; *cnt == top && k < top; k++) beat = k ? pp__max(beat, tm[k]) : tm[k];
        mk = pp__block_makespan(A, blk, A->n_eval, beat < 1e300 ? beat - 1e-9 : beat);
    } else {
        st = pp__repeat(blk, A->n_eval, NULL, &A->q->c, 0, &s, err);
        if (st == PP_OK) st = pp_squeeze(s, err);
        if (st != PP_OK) { pp_sched_free(s); pp_block_free(blk); return st; }
        mk = s->makespan;
        pp_sched_free(s);
    }
    for (k = 0; k < *cnt; k++)
        if (mk < tm[k] - 1e-9) break;
    if (k == top) { pp_block_free(blk); return PP_OK; }
    if (*cnt == top) pp_block_free(tb[top - 1]);
    else (*cnt)++;
    for (i = *cnt - 1; i > k; i--) { tb[i] = tb[i - 1]; tm[i] = tm[i - 1]; }
    tb[k] = blk; tm[k] = mk;
    return PP_OK;
}

/* Shorter wins; at the same makespan the smaller peak. */
static int pp__auto_better(const pp_schedule *s, const pp_schedule *best) {
    double a = 0, b = 0;
    int i;
    if (!best) return 1;
    if (s->makespan < best->makespan - 1e-9) return 1;
    if (s->makespan > best->makespan + 1e-9) return 0;
    for (i = 0; i < s->devices; i++) { a = pp__max(a, s->peak_memory[i]); b = pp__max(b, best->peak_memory[i]); }
    return a < b - 1e-9;
}

/* The reorder variants of the searches' finalists and of the fixed
   schedules above pp__small_n (reordered at 2d+4 microbatches, and at the
   full n): above 16 devices, all but the two list variants, which cost two
   thirds of such a reorder's time at d = 128 and won none of those
   finalists at d = 32 and 128, nor any fixed schedule at d = 32, 64 and
   128 with n = 8d (they do win a few at d = 4 and 5, limits above d: up
   to 0.4%). */
static unsigned pp__rv_large(int d) { return d > 16 ? PP__RV_ALL & ~(1u << PP__RV_LIST | 1u << PP__RV_W_LIST) : PP__RV_ALL; }

/* A finalist blk of A's search above pp__small_n, as pp__block_schedule
   builds it (reordered at 2d+4 microbatches and extended by its stable
   phase; where that is not exact, reordered at the full n), and where the
   extension was not exact, that extension too when it keeps within the
   limit: a stable phase with a bubble is sometimes shorter as the small
   reorder left it than as the reorder at n makes it. The shorter of them
   replaces *best when better. */
static pp_status pp__auto_large(pp__auto *A, const pp_block *blk, pp_schedule **best, char *err) {
    pp_schedule *s = NULL, *e = NULL;
    pp_status st;
    /* above PP__EXTEND_WHOLE_D devices the variants that reach the bound first run first */
    unsigned mask = pp__rv_large(A->q->d) | (pp__extend_whole(A->q->d) ? 0u : PP__RV_BOUND_FIRST);
    int i;
    st = pp__repeat(blk, pp__reorder_n(blk->devices), NULL, &A->q->c, 0, &s, err);
    if (st == PP_OK) st = pp_squeeze(s, err);
    if (st == PP_OK) st = pp__reorder_memo(s, mask, A->limit, A->memo, NULL, err);
    if (st == PP_OK) st = pp__extend_exact_by(s, A->n, 1, &e, err);
    if (st == PP_OK && !e) { /* the inexact extension, then the whole n reordered */
        st = pp__extend_by(s, A->n, 1, &e, err);
        for (i = 0; st == PP_OK && e && i < e->devices; i++)
            if (e->peak_memory[i] > A->limit + 1e-9) { pp_sched_free(e); e = NULL; }
        pp_sched_free(s);
        s = NULL;
        /* above PP__EXTEND_WHOLE_D devices that extension alone where it
           fits, else the block at n squeezed, not reordered */
        if (st == PP_OK && (pp__extend_whole(A->q->d) || !e)) st = pp__repeat(blk, A->n, NULL, &A->q->c, 0, &s, err);
        if (st == PP_OK && s) st = pp_squeeze(s, err);
        if (st == PP_OK && s && pp__extend_whole(A->q->d)) st = pp__reorder_memo(s, mask, A->limit, A->memo, NULL, err);
        if (st == PP_OK && e && s && !pp__auto_better(e, s)) { pp_sched_free(e); e = NULL; }
    } else {
        pp_sched_free(s);
        s = NULL;
    }
    if (st == PP_OK && !e) { e = s; s = NULL; }
    pp_sched_free(s);
    if (st != PP_OK) { pp_sched_free(e); return st; }
    if (A->lb_n < 0) A->lb_n = pp__order_bound(e);
    if (pp__auto_better(e, *best)) { pp_sched_free(*best); *best = e; e = NULL; }
    pp_sched_free(e);
    return PP_OK;
}

static pp_status pp__auto_finish(pp__auto *A, const pp_sched_id *fixed, int nfixed, pp_schedule **out, char *err) {
    pp_schedule *best = NULL;
    pp_status st = PP_OK;
    int k, l, nf = 0;
    double frontier = 1e300, lb2 = -1; /* lb2: pp__order_bound at n2, the same for every block */
    pp__fit fit;
    int nx = 0;
    pp_block *fb[PP__AUTO_BUILD + PP__AUTO_BUILDX]; /* finalists: the best PP__AUTO_BUILD by their small-n estimate, */
    double fmk[PP__AUTO_BUILD + PP__AUTO_BUILDX];   /* then the best PP__AUTO_BUILDX of the wider turns */
    for (l = 0; l < A->levels && st == PP_OK; l++) {
        int order[PP__AUTO_TOP], nfinal = 0;
        double re_mk[PP__AUTO_TOP];
        pp_block **tb = &A->top[l * PP__AUTO_TOP];
        /* a frontier at the bound at n2 (with the slack of the test below,
           less rounding): no later level can beat it, so none is reordered */
        if (lb2 >= 0 && frontier <= lb2 + 0.5e-9 - 1e-12 * lb2) break;
        /* stage 2: reordered at the small n with the cheap variants */
        for (k = 0; k < A->count[l] && st == PP_OK; k++) {
            pp_schedule *s = NULL;
            int i;
            st = pp__repeat(tb[k], A->n2, NULL, &A->q->c, 0, &s, err);
            if (st == PP_OK) st = pp_squeeze(s, err);
            if (st == PP_OK && lb2 < 0) lb2 = pp__order_bound(s);
            if (st == PP_OK && A->q->c.reorder) st = pp__reorder_memo(s, PP__RV_RANK, A->limit, A->memo, NULL, err);
            if (st == PP_OK) {
                re_mk[k] = s->makespan;
                for (i = nfinal; i > 0 && re_mk[order[i - 1]] > re_mk[k] + 1e-9; i--) order[i] = order[i - 1];
                order[i] = k;
                nfinal++;
            }
            pp_sched_free(s);
        }
        if (nfinal > PP__AUTO_FINAL) nfinal = PP__AUTO_FINAL;
        /* a level goes on only if it beats every lower level at the small n
           (which levels go on depends on the lower levels alone) */
        if (nfinal > 0 && re_mk[order[0]] < frontier - 1e-9) frontier = re_mk[order[0]];
        else nfinal = 0;
        for (k = 0; k < nfinal; k++) {
            int i, x = l >= A->nl, cap = x ? PP__AUTO_BUILDX : PP__AUTO_BUILD, *num = x ? &nx : &nf;
            pp_block **b = x ? fb + PP__AUTO_BUILD : fb;
            double mk = re_mk[order[k]], *m = x ? fmk + PP__AUTO_BUILD : fmk;
            if (*num == cap && (cap == 0 || mk >= m[*num - 1] - 1e-9)) continue;
            if (*num < cap) (*num)++;
            for (i = *num - 1; i > 0 && m[i - 1] > mk + 1e-9; i--) { b[i] = b[i - 1]; m[i] = m[i - 1]; }
            b[i] = tb[order[k]]; m[i] = mk;
        }
    }
    for (k = 0; k < nx; k++) fb[nf + k] = fb[PP__AUTO_BUILD + k];
    nf += nx;
    /* stage 3: the finalists at the real n, every reorder variant; above
       pp__small_n, none after one at the order bound (DESIGN.md: the search
       stops at the bound), and each reordered at 2d+4 microbatches and
       extended by its stable phase (pp__auto_large) */
    for (k = 0; k < pp__finalists(A->q->d, nf) && st == PP_OK; k++) {
        pp_schedule *s = NULL;
        if (best && !pp__small_n(A->q->d, A->n) && pp__at_bound(best->makespan, A->lb_n)) break;
        if (A->q->c.reorder && !pp__small_n(A->q->d, A->n)) st = pp__auto_large(A, fb[k], &best, err);
        else
            st = pp__block_schedule(fb[k], A->n, &A->q->c, 0, A->q->c.reorder ? PP__RV_ALL : 0u, A->limit, A->memo, &s,
                                    err);
        if (st == PP_OK && s && A->lb_n < 0) A->lb_n = pp__order_bound(s);
        if (st == PP_OK && s && pp__auto_better(s, best)) { pp_sched_free(best); best = s; s = NULL; }
        pp_sched_free(s);
    }
    /* the fixed blocks of the same family, where they fit: the adaptive
       schedule is never longer than them. One that cannot be as short as
       the best so far (its memory caps and the bounds, pp__fit with ties)
       is not built: it could neither be shorter nor tie with a smaller peak */
    memset(&fit, 0, sizeof fit);
    fit.ties = 1;
    for (k = 0; k < nfixed && st == PP_OK; k++) {
        pp_schedule *s = NULL;
        int i;
        double mem = 0;
        if (best) { fit.s = best; fit.lb0 = pp__max(A->lb_n, 0); fit.mk = best->makespan; }
        if (pp__build_id(A->q, fixed[k], best ? &fit : NULL, &s, NULL) != PP_OK || !s) continue;
        if (A->lb_n < 0 && s->split_backward == A->q->shape.split) A->lb_n = pp__order_bound(s); /* (1f1b: not split) */
        for (i = 0; i < s->devices; i++) mem = pp__max(mem, s->peak_memory[i]);
        if (A->min_mem < 0 || mem < A->min_mem) A->min_mem = mem;
        if (mem <= A->limit + 1e-9 && pp__auto_better(s, best)) { pp_sched_free(best); best = s; s = NULL; }
        pp_sched_free(s);
    }
    if (st != PP_OK) { pp_sched_free(best); return st; }
    *out = best;
    return PP_OK;
}

/* ---- v-auto, second family: cell-grid construction ---------------------- */

/* The adaptive V scheduler of the paper's authors (sail-sg's
   v_auto_schedule.py, Appendix A as they run it) builds its schedules on a
   grid of unit cells, not by repeating a block and squeezing with real
   times. Its steps, as we re-derived them and run them here:
     1. a block: device 0's cells for F0, F1, B1, B0 (F1 and B0 run from
        device d-1 back to 0) are a
        permutation of 4 of the 6 cells of a period; device i+1's F0 and B1
        cells are device i's plus o (mod 6), its F1 and B0 cells minus 1, with
        o = o0 on the first len0 devices and o1 <= o0 after; each W takes
        the first cell free after its B (cyclically);
     2. the period is laid down 4d + M + 1 times per device (M = max(n, 2d))
        and the copies before microbatch 0 and after microbatch M-1 cleared;
     3. unit-time squeeze keeping each device's order;
     4. warm-up rebuilt under the peak: device i runs its F0 passes for
        2(d-1-i) cells, then i+1 F0/F1 pairs, then B, W, F1-or-F0 triples,
        with at most min(i+1, peak/2) F1 and peak - that F0 in flight;
     5. squeeze; for n < 2d the extra microbatches are dropped and, where
        memory allows, the early W passes are pushed to the end; squeeze;
     6. cool-down rebuilt: the last B1 and B0 passes move onto the diagonal
        that starts at device 0's last F1, the W passes after them fill the
        free cells in order; squeeze;
     7. each free cell, left to right, takes the first later pass of its
        device that is ready and keeps the device under its peak;
     8. W passes relabelled in the order of their B.
   A candidate is kept when its peak stays within the limit and the order
   is valid; it is timed with the real F/B/W/comm. pp__v_auto runs this
   family next to its block search (not with no_reorder: steps 4 to 7 are
   reordering) and keeps the shorter schedule. For n <= 2d+4 every block
   of the family is timed at n, so v-auto is never longer than this
   construction there; above, the ranking at 2d+4 picks the 8 rebuilt.
   The 8 are then reordered by pp__reorder on the real times, within
   their own peak (never longer; up to 7% shorter with comm or uneven
   times on our grids). */

typedef struct pp__vgrid {
    int d, m, M, len, cap;   /* devices, microbatches kept, on the grid, row length, row capacity */
    unsigned char *g, *t;    /* [d * cap] rows, and the squeeze's scratch */
    int *idx;                /* [M * d * 7]: new cell of the c-th pass of each code on each device */
    int *cnt, *nxt, *pk, *lc, *low; /* [d * 7], [d], [d], [d * 7], [d]: scratch */
    int *lo, *hi;            /* [d], [d]: each row's busy span (pp__vgrid_spans) */
    int *in;                 /* [d * 7 * 2]: pp__vgrid_input of (device, code): code, device */
    int (*pos)[6];           /* [d]: the block's cells per device; all int arrays live in idx's allocation */
    pp_allocator al;
} pp__vgrid;

#define PP__GROW(G, i) ((G)->g + (size_t)(i) * (size_t)(G)->cap)
#define PP__GIDX(G, c, i, k) ((G)->idx[((size_t)(c) * (size_t)(G)->d + (size_t)(i)) * 7u + (size_t)(k)])

/* The input of code k's pass on device dev (pp__input on the V): the code
   it waits for (0 for none: F on device 0) and that code's device in *dd. */
static int pp__vgrid_input(int d, int dev, int k, int *dd) {
    pp_kind dk;
    int ds;
    *dd = dev;
    if (!pp__input(2 * d, 1, 1, 1, pp__v_kind(k), pp__v_stage(d, dev, k), 0, &dk, &ds)) return 0;
    return pp__v_code(d, dk, ds, dd);
}

/* The highest activation count (cells: one chunk each) over the devices. */
static int pp__vgrid_peak(const pp__vgrid *G, int *per) {
    int i, j, best = 0;
    for (i = 0; i < G->d; i++) {
        const unsigned char *r = PP__GROW(G, i);
        int mem = 0, pk = 0;
        for (j = 0; j < G->len; j++) {
            mem += pp__v_mem(r[j]);
            if (mem > pk) pk = mem;
        }
        if (per) per[i] = pk;
        if (pk > best) best = pk;
    }
    return best;
}

/* Step 1: the block's cells per device; 0 if two passes collide. */
static int pp__vgrid_block(int d, const int *first, int o0, int o1, int len0, int (*pos)[6]) {
    int i, v, j;
    for (i = 0; i < d; i++) {
        int vis[6] = {0, 0, 0, 0, 0, 0};
        if (i == 0) for (v = 0; v < 4; v++) pos[0][v] = first[v];
        else {
            int o = i - 1 < len0 ? o0 : o1;
            for (v = 0; v < 4; v++) pos[i][v] = (pos[i - 1][v] + (v == 0 || v == 2 ? o : -1) + 6) % 6;
        }
        for (v = 0; v < 4; v++) {
            if (vis[pos[i][v]]) return 0;
            vis[pos[i][v]] = 1;
        }
        for (v = 2; v < 4; v++) /* W after B, w after b: the first free cell, cyclically */
            for (j = 0; j < 6; j++) {
                int c = (pos[i][v] + j) % 6;
                if (!vis[c]) { pos[i][v + 2] = c; vis[c] = 1; break; }
            }
    }
    return 1;
}

static int pp__fdiv6(int x) { return x >= 0 ? x / 6 : -((-x + 5) / 6); }

/* Copies of a code at cells a, a+6, ..., a+6(M-1): how many lie at or before cell t. */
static int pp__vgrid_count(int t, int a, int M) {
    int c = t < a ? 0 : (t - a) / 6 + 1;
    return c < M ? c : M;
}

/* Step 2's peak without laying the grid down. The lay keeps M copies of
   every code on every device, at a + 6j, a the cell of microbatch 0 that
   its cursor finds (below as in pp__vgrid_lay). A device's memory at cell t
   is count(F) + count(f) - count(W) - count(w) of the copies up to t; it
   only rises at an F or f copy, and along the copies of one code it is
   piecewise linear, with kinks where another code's copies start or stop:
   the largest value lies at one of those or at the first or last copy.
   a: [d * 7] scratch. Equal to pp__vgrid_peak after pp__vgrid_lay. */
static int pp__vgrid_laid_peak(int d, int M, int (*pos)[6], int *a) {
    static const int order[4] = {PP__V_F0, PP__V_F1, PP__V_B1, PP__V_B0};
    int at = 6, q, v, i, best = 0;
    for (q = 0; q < 4; q++) {
        int k = order[q];
        for (v = 0; v < d; v++) {
            int dev = pp__v_from_first(k) ? v : d - 1 - v;
            at += ((pos[dev][k - 1] - at) % 6 + 6) % 6;
            a[dev * 7 + k] = at++;
            if (k == PP__V_B1 || k == PP__V_B0) a[dev * 7 + k + 2] = at + ((pos[dev][k + 1] - at) % 6 + 6) % 6;
        }
    }
    for (i = 0; i < d; i++) {
        static const int kinked[4] = {PP__V_F0, PP__V_F1, PP__V_W1, PP__V_W0};
        const int *ai = a + i * 7;
        for (q = 0; q < 2; q++) {
            int c = ai[q ? PP__V_F1 : PP__V_F0], js[18], nj = 0, x;
            js[nj++] = 0;
            js[nj++] = M - 1;
            for (v = 0; v < 4; v++) { /* where code v's count starts (j0) and stops (j1) changing along c's copies */
                int av = ai[kinked[v]], j0 = -pp__fdiv6(c - av), j1 = pp__fdiv6(av + 6 * (M - 1) - c);
                js[nj++] = j0 - 1; js[nj++] = j0; js[nj++] = j1; js[nj++] = j1 + 1;
            }
            for (x = 0; x < nj; x++) {
                int t = c + 6 * js[x], m;
                if (js[x] < 0 || js[x] >= M) continue;
                m = pp__vgrid_count(t, ai[PP__V_F0], M) + pp__vgrid_count(t, ai[PP__V_F1], M) -
                    pp__vgrid_count(t, ai[PP__V_W1], M) - pp__vgrid_count(t, ai[PP__V_W0], M);
                if (m > best) best = m;
            }
        }
    }
    return best;
}

static void pp__vgrid_clear(pp__vgrid *G, int i, int at, int step) {
    unsigned char *r = PP__GROW(G, i);
    for (; at >= 0 && at < G->len; at += step) r[at] = 0;
}

/* Step 2: lay the period down and keep microbatches 0..M-1 of every pass. */
static void pp__vgrid_lay(pp__vgrid *G, int (*pos)[6]) {
    static const int order[4] = {PP__V_F0, PP__V_F1, PP__V_B1, PP__V_B0};
    int d = G->d, i, j, v, q, at = 6;
    G->len = 6 * (4 * d + G->M + 1);
    for (i = 0; i < d; i++) {
        unsigned char *r = PP__GROW(G, i);
        memset(r, 0, (size_t)G->cap);
        for (j = 0; j < G->len; j += 6)
            for (v = 0; v < 6; v++) r[j + pos[i][v]] = (unsigned char)(v + 1);
    }
    /* microbatch 0 runs through the passes in dependency order: a cursor
       finds each device's first copy after the previous one */
    for (q = 0; q < 4; q++) {
        int k = order[q];
        for (v = 0; v < d; v++) {
            int dev = pp__v_from_first(k) ? v : d - 1 - v;
            unsigned char *r = PP__GROW(G, dev);
            for (j = 0; j < 6; j++, at++) {
                if (r[at] != k) continue;
                pp__vgrid_clear(G, dev, at - 6, -6);
                pp__vgrid_clear(G, dev, at + 6 * G->M, 6);
                at++;
                if (k == PP__V_B1 || k == PP__V_B0) {
                    int w = k + 2, x;
                    for (x = 0; x < 6; x++)
                        if (r[at + x] == w) {
                            pp__vgrid_clear(G, dev, at + x - 6, -6);
                            pp__vgrid_clear(G, dev, at + x + 6 * G->M, 6);
                            break;
                        }
                }
                break;
            }
        }
    }
}

/* Each row's first and last busy cell (lo = len, hi = -1 for an empty
   row), so the column walks below skip the empty ends of the rows. */
static void pp__vgrid_spans(const pp__vgrid *G) {
    int i;
    for (i = 0; i < G->d; i++) {
        const unsigned char *r = PP__GROW(G, i);
        int lo = 0, hi = G->len - 1;
        while (lo < G->len && !r[lo]) lo++;
        while (hi >= lo && !r[hi]) hi--;
        G->lo[i] = lo;
        G->hi[i] = hi;
    }
}

/* The cell order of the squeeze and of the timing: column by column; in
   a column first the passes that run towards device d-1 (F0, B1, W1) in
   device order, then those that run towards device 0 (F1, B0, W0) in
   reverse, so a pass's input in the same column comes first. Calls
   visit(G, dev, j, ctx) for every busy cell and stops with 0 at the first
   visit that returns 0. */
typedef int (*pp__vgrid_visit)(pp__vgrid *G, int dev, int j, void *ctx);

static int pp__vgrid_walk(pp__vgrid *G, pp__vgrid_visit visit, void *ctx) {
    int d = G->d, i, j, *low = G->low;
    pp__vgrid_spans(G);
    for (j = 0; j < G->len; j++) {
        int nlow = 0;
        for (i = 0; i < d; i++) {
            int k = j < G->lo[i] || j > G->hi[i] ? 0 : PP__GROW(G, i)[j];
            if (!k) continue;
            if (!pp__v_from_first(k)) low[nlow++] = i;
            else if (!visit(G, i, j, ctx)) return 0;
        }
        while (nlow > 0)
            if (!visit(G, low[--nlow], j, ctx)) return 0;
    }
    return 1;
}

typedef struct pp__vgrid_sq { int m, len; } pp__vgrid_sq;

/* Places the pass in cell j of device dev's row where the squeeze puts
   it: at the device's next cell, after its input; 0 if that breaks a rule. */
static int pp__vgrid_place(pp__vgrid *G, int dev, int j, void *ctx) {
    pp__vgrid_sq *q = (pp__vgrid_sq *)ctx;
    int m = q->m, *len = &q->len;
    int (*cnt)[7] = (int (*)[7])G->cnt, k = PP__GROW(G, dev)[j], c = cnt[dev][k], at = G->nxt[dev];
    int dk = G->in[(dev * 7 + k) * 2], from = G->in[(dev * 7 + k) * 2 + 1];
    unsigned char *row = G->t + (size_t)dev * (size_t)G->cap;
    if (c >= m) return 0;
    /* an input on another device exists when that device has placed more
       passes of its code than c; one on this device is earlier in its row */
    if (dk && from != dev) {
        if (cnt[from][dk] <= c) return 0;
        if (PP__GIDX(G, c, from, dk) + 1 > at) at = PP__GIDX(G, c, from, dk) + 1;
    }
    if (at >= G->cap) return 0;
    while (G->nxt[dev] < at) row[G->nxt[dev]++] = 0;
    row[at] = (unsigned char)k;
    cnt[dev][k] = c + 1;
    PP__GIDX(G, c, dev, k) = at;
    G->nxt[dev] = at + 1;
    if (at + 1 > *len) *len = at + 1;
    return 1;
}

/* Steps 3, 5, 6: unit-time squeeze, each device keeping its order; m
   passes of each code per device at most. 0 if the grid breaks a rule.
   idx needs no reset (pp__vgrid_place checks the counts), and the new
   rows are cleared as they are written, up to the new length: no step
   reads a row past G->len before writing it. */
static int pp__vgrid_squeeze(pp__vgrid *G, int m) {
    int d = G->d, i, len, *next = G->nxt;
    pp__vgrid_sq q;
    memset(G->cnt, 0, (size_t)d * 7u * sizeof(int));
    memset(next, 0, (size_t)d * sizeof(int));
    q.m = m; q.len = 0;
    if (!pp__vgrid_walk(G, pp__vgrid_place, &q)) return 0;
    len = q.len;
    for (i = 0; i < d; i++) memset(G->t + (size_t)i * (size_t)G->cap + next[i], 0, (size_t)(len - next[i]));
    {
        unsigned char *x = G->g;
        G->g = G->t; G->t = x;
    }
    G->len = len;
    return 1;
}

/* Step 4: the warm-up rebuilt under the grid's peak (see above), which the
   caller knows. */
static int pp__vgrid_warmup(pp__vgrid *G, int peak) {
    int d = G->d, M = G->M, i, j, x;
    if (peak > 2 * d) peak = 2 * d;
    for (i = 0; i < d; i++) {
        unsigned char *r = PP__GROW(G, i);
        int nff = i + 1 < peak / 2 ? i + 1 : peak / 2, nf, cf = 0, cff = 0, cb = 0, cw = 0, uf = 0, uff = 0, ub = 0, uw = 0;
        if (nff > M) nff = M;
        nf = peak - nff < M ? peak - nff : M;
        /* take out everything before the device's first b */
        for (j = 0; j < G->len && r[j] != PP__V_B0; j++) {
            if (r[j] == PP__V_F0) cf++;
            else if (r[j] == PP__V_F1) cff++;
            else if (r[j] == PP__V_B1) cb++;
            else if (r[j] == PP__V_W1) cw++;
            else if (r[j] == PP__V_W0) return 0;
            r[j] = 0;
        }
        j = i;
        for (x = 0; x < 2 * (d - 1 - i); x++, j++)
            if (uf < nf && uf < cf) { if (j >= G->cap) return 0; r[j] = PP__V_F0; uf++; }
        for (x = 0; x < i + 1; x++) {
            if (uf < nf && uf < cf) { if (j >= G->cap) return 0; r[j] = PP__V_F0; uf++; }
            j++;
            if (uff < nff && uff < cff) { if (j >= G->cap) return 0; r[j] = PP__V_F1; uff++; }
            j++;
        }
        while (uf < cf || uff < cff || ub < cb || uw < cw) {
            if (j + 2 >= G->cap) return 0;
            if (ub < cb) { r[j] = PP__V_B1; ub++; }
            j++;
            if (uw < cw) { r[j] = PP__V_W1; uw++; }
            j++;
            if (uff < cff) { if (uff >= uf) return 0; r[j] = PP__V_F1; uff++; }
            else if (uf < cf) { r[j] = PP__V_F0; uf++; }
            j++;
        }
        if (j > G->len) return 0;
    }
    return 1;
}

/* Step 5 for n < 2d: keep the first m passes of each code per device. */
static void pp__vgrid_trim(pp__vgrid *G, int m) {
    int i, j, c[7];
    for (i = 0; i < G->d; i++) {
        unsigned char *r = PP__GROW(G, i);
        memset(c, 0, sizeof c);
        for (j = 0; j < G->len; j++)
            if (r[j] && c[r[j]]++ >= m) r[j] = 0;
    }
}

/* Step 5, where memory allows: the first W passes of each device move to
   the end, as many as its peak is below the given peak. */
static void pp__vgrid_late_w(pp__vgrid *G, int peak) {
    int d = G->d, i, j, lo = 1 << 30, ext;
    int *per = G->pk;
    pp__vgrid_peak(G, per);
    for (i = 0; i < d; i++) if (per[i] < lo) lo = per[i];
    ext = peak - lo;
    if (ext < 0 || G->len + ext > G->cap) return;
    for (i = 0; i < d; i++) {
        unsigned char *r = PP__GROW(G, i), *pad = G->t;
        int cnt = 0;
        for (j = 0; j < G->len && per[i] + cnt < peak; j++)
            if (r[j] == PP__V_W1 || r[j] == PP__V_W0) { pad[cnt++] = r[j]; r[j] = 0; }
        for (j = 0; j < ext; j++) r[G->len + j] = j < cnt ? pad[j] : 0;
    }
    G->len += ext;
}

/* Step 6: the cool-down rebuilt (see above); peak: the grid's, which the
   caller knows. */
static int pp__vgrid_cooldown(pp__vgrid *G, int m, int peak) {
    int d = G->d, i, j, k, maxbb, maxb, start = -1, len = G->len;
    if (peak > 2 * d) return 0;
    maxbb = (peak + 1) / 2 < m ? (peak + 1) / 2 : m;
    maxb = peak - maxbb < m ? peak - maxbb : m;
    for (i = 0; i < d; i++) {
        unsigned char *r = PP__GROW(G, i);
        int cb = 0, cbb = 0, cw = 0, cww = 0, lastf = -1;
        for (j = G->len - 1; j >= 0; j--) {
            if (r[j] == PP__V_F1 && lastf < 0) lastf = j;
            if (r[j] == PP__V_B1 && cb < i + 1 && cb < maxb) { r[j] = 0; cb++; }
            if (r[j] == PP__V_B0 && cbb < maxbb) { r[j] = 0; cbb++; }
        }
        for (j = G->len - 1; j >= 0; j--) {
            if (cw >= cb && cww >= cbb && cw + cww >= peak) break;
            if (r[j] == PP__V_W1) { r[j] = 0; cw++; }
            if (r[j] == PP__V_W0) { r[j] = 0; cww++; }
        }
        if (i == 0) start = lastf;
        for (k = 0; k < cbb; k++) {
            int at = start - i + 2 * d - 2 * k;
            if (at < 0 || at >= G->len || r[at]) return 0;
            r[at] = PP__V_B0;
        }
        for (k = 0; k < cb; k++) {
            int at = start + 1 + i - 2 * k;
            if (at < 0 || at >= G->len) return 0;
            r[at] = PP__V_B1;
        }
    }
    /* W passes into the free cells after the device's last W, in order */
    for (i = 0; i < d; i++) {
        unsigned char *r = PP__GROW(G, i);
        int cw = 0, cww = 0, lastw = -1, end = G->len;
        for (j = G->len - 1; j >= 0; j--) if (r[j] == PP__V_W1 || r[j] == PP__V_W0) { lastw = j; break; }
        for (j = 0; j < G->len; j++) {
            int c = r[j];
            if (c == PP__V_B1) cw++;
            else if (c == PP__V_B0) cww++;
            else if (c == PP__V_W1) cw--;
            else if (c == PP__V_W0) cww--;
            if (!c && j > lastw) {
                if (cw > 0) { r[j] = PP__V_W1; cw--; }
                else if (cww > 0) { r[j] = PP__V_W0; cww--; }
            }
        }
        if (end + cw + cww > G->cap) return 0;
        for (; cw > 0; cw--) r[end++] = PP__V_W1;
        for (; cww > 0; cww--) r[end++] = PP__V_W0;
        for (j = end; j < G->cap; j++) r[j] = 0;
        if (end > len) len = end;
    }
    G->len = len;
    return pp__vgrid_squeeze(G, m);
}

/* Step 7: every free cell, left to right over all devices, takes the first
   later pass of its device (one of each code looked at) that is ready by
   then and keeps the device at or below the grid's peak. Returns the
   filled grid's peak. */
static int pp__vgrid_fill(pp__vgrid *G, int m) {
    int d = G->d, i, j, k, x, peak = pp__vgrid_peak(G, NULL), after = 0;
    int (*cnt)[7] = (int (*)[7])G->cnt, *mem = G->nxt, *lc = G->lc;
    memset(G->cnt, 0, (size_t)d * 7u * sizeof(int));
    memset(mem, 0, (size_t)d * sizeof(int));
    /* lc[i * 7 + k]: the last cell of code k on device i, kept up to date
       as passes move, so the look-ahead stops once it has seen every code
       still to come (the codes past it would never be found) */
    for (i = 0; i < d; i++) {
        const unsigned char *r = PP__GROW(G, i);
        for (k = 0; k < 7; k++) lc[i * 7 + k] = -1;
        for (j = 0; j < G->len; j++) if (r[j]) lc[i * 7 + r[j]] = j;
    }
    for (j = 0; j < G->len; j++)
        for (i = 0; i < d; i++) {
            unsigned char *r = PP__GROW(G, i);
            int avail = 0, delta = 0, top = 0, c;
            if (r[j]) {
                c = cnt[i][r[j]]++;
                PP__GIDX(G, c, i, r[j]) = j;
                mem[i] += pp__v_mem(r[j]);
                if (mem[i] > after) after = mem[i];
                continue;
            }
            /* the codes still to come whose next pass is ready by cell j
               (and, for F and f, with memory left): whether a pass is
               ready does not depend on where it lies, so the look-ahead
               skips the others and stops once it has seen these */
            for (k = 1; k < 7; k++) {
                int dk = G->in[(i * 7 + k) * 2], dd = G->in[(i * 7 + k) * 2 + 1];
                if (lc[i * 7 + k] <= j || (pp__v_mem(k) > 0 && mem[i] >= peak)) continue;
                c = cnt[i][k];
                if (c >= m) continue;
                /* its input has run (counts), on another device before cell j */
                if (!dk || (cnt[dd][dk] > c && (dd == i || PP__GIDX(G, c, dd, dk) < j))) avail |= 1 << k;
            }
            for (x = j + 1; x < G->len && avail; x++) {
                int q = r[x], before = top;
                delta += pp__v_mem(q);
                if (delta > top) top = delta;
                if (!q || !(avail >> q & 1)) continue;
                avail &= ~(1 << q);
                if (pp__v_mem(q) > 0 && mem[i] + before >= peak) continue;
                c = cnt[i][q];
                r[j] = (unsigned char)q; r[x] = 0;
                if (lc[i * 7 + q] == x) /* the code's last cell moved: the one before it (j at worst) */
                    for (lc[i * 7 + q] = x - 1; r[lc[i * 7 + q]] != q; lc[i * 7 + q]--) {}
                cnt[i][q] = c + 1;
                PP__GIDX(G, c, i, q) = j;
                mem[i] += pp__v_mem(q);
                if (mem[i] > after) after = mem[i];
                break;
            }
        }
    return after;
}

/* Step 8: the W passes of a device take the codes of its B passes in order. */
static int pp__vgrid_relabel(pp__vgrid *G, int m) {
    int i, j;
    unsigned char *q = G->t; /* scratch queue */
    for (i = 0; i < G->d; i++) {
        unsigned char *r = PP__GROW(G, i);
        int head = 0, tail = 0, c[7];
        memset(c, 0, sizeof c);
        for (j = 0; j < G->len; j++) if (r[j]) c[r[j]]++;
        for (j = 1; j < 7; j++) if (c[j] != m) return 0;
        for (j = 0; j < G->len; j++) {
            if (r[j] == PP__V_B1 || r[j] == PP__V_B0) q[tail++] = (unsigned char)(r[j] + 2);
            else if (r[j] == PP__V_W1 || r[j] == PP__V_W0) {
                if (head == tail) return 0;
                r[j] = q[head++];
            }
        }
    }
    return 1;
}

/* Steps 2 to 8 for one block; returns 1 with the grid ready, 0 if the
   block gives nothing. *peak: the peak that decides whether larger
   offsets are worth trying (the caller stops a len0 run above the limit). */
static int pp__vgrid_run(pp__vgrid *G, int (*pos)[6], int maxmem, int *peak) {
    int d = G->d, m = G->m, M = G->M, init, pk;
    pp__vgrid_lay(G, pos);
    *peak = init = pp__vgrid_peak(G, NULL);
    if ((m == M && init > maxmem) || init > 2 * d) return 0;
    /* a squeeze keeps each device's order, so its peak: the peaks known
       are not counted again */
    if (!pp__vgrid_squeeze(G, M) || !pp__vgrid_warmup(G, init) || !pp__vgrid_squeeze(G, M)) return 0;
    pk = pp__vgrid_peak(G, NULL);
    if (pk > init) return 0;
    if (m < M) {
        pp__vgrid_trim(G, m);
        if (m <= d && 2 * m <= maxmem) pp__vgrid_late_w(G, pk < 2 * d ? pk : 2 * d);
        if (!pp__vgrid_squeeze(G, m)) return 0;
        *peak = init = pk = pp__vgrid_peak(G, NULL);
        if (init > maxmem) return 0;
    }
    if (!pp__vgrid_cooldown(G, m, pk)) return 0;
    pk = pp__vgrid_fill(G, m);
    if (!pp__vgrid_relabel(G, m)) return 0; /* W and w count alike: the peak stays */
    if (pk > init) { *peak = init; return 0; }
    *peak = pk;
    return 1;
}

/* The grid as a per-device order (microbatches counted per code). */
static void pp__vgrid_order(const pp__vgrid *G, pp_pass *out) {
    int d = G->d, i, j, n = 0;
    for (i = 0; i < d; i++) {
        const unsigned char *r = PP__GROW(G, i);
        int c[7];
        memset(c, 0, sizeof c);
        for (j = 0; j < G->len; j++) {
            int k = r[j];
            pp_pass x;
            if (!k) continue;
            memset(&x, 0, sizeof x);
            x.device = i;
            x.kind = pp__v_kind(k);
            x.stage = pp__v_stage(d, i, k);
            x.microbatch = c[k]++;
            out[n++] = x;
        }
    }
}

/* The grid's makespan with real times: passes run in cell order (a
   valid grid has every dependency in an earlier cell), each as soon as its
   device and its input allow, comm added across devices. tm: stage times
   [stage * 4 + kind]; end: scratch [m * d * 7]. -1 if a pass comes before
   its input. pp__vgrid_time_pass runs the pass in cell j of device dev
   (0 if its input has not run). */
typedef struct pp__vgrid_tm { const double *tm; double comm, *end, *free_at, mk; } pp__vgrid_tm;

static int pp__vgrid_time_pass(pp__vgrid *G, int dev, int j, void *ctx) {
    pp__vgrid_tm *T = (pp__vgrid_tm *)ctx;
    const double *tm = T->tm;
    double comm = T->comm, *end = T->end, *free_at = T->free_at;
    int d = G->d, k = PP__GROW(G, dev)[j], c, dk = G->in[(dev * 7 + k) * 2], dd = G->in[(dev * 7 + k) * 2 + 1];
    int (*cnt)[7] = (int (*)[7])G->cnt;
    double t = free_at[dev];
    c = cnt[dev][k]++;
    if (dk) {
        /* the input has run when its device has run more passes of its code;
           comm when it crosses devices */
        double e;
        if (cnt[dd][dk] <= c) return 0;
        e = end[((size_t)c * (size_t)d + (size_t)dd) * 7u + (size_t)dk] + (dd != dev ? comm : 0);
        if (e > t) t = e;
    }
    t += tm[pp__v_stage(d, dev, k) * 4 + (int)pp__v_kind(k)];
    end[((size_t)c * (size_t)d + (size_t)dev) * 7u + (size_t)k] = free_at[dev] = t;
    if (t > T->mk) T->mk = t;
    return 1;
}

static double pp__vgrid_time(pp__vgrid *G, const double *tm, double comm, double *end, double *free_at) {
    int i;
    pp__vgrid_tm T;
    memset(G->cnt, 0, (size_t)G->d * 7u * sizeof(int));
    for (i = 0; i < G->d; i++) free_at[i] = 0;
    T.tm = tm; T.comm = comm; T.end = end; T.free_at = free_at; T.mk = 0;
    return pp__vgrid_walk(G, pp__vgrid_time_pass, &T) ? T.mk : -1;
}

enum {
    PP__VGRID_TOP = 8,   /* the best blocks by their grid's time, rebuilt at n and reordered */
    PP__VGRID_LENS = 16, /* beyond this many devices, this many values of len0 */
    PP__VGRID_GAP = 1    /* see pp__vgrid_search: blocks within this many cells of the highest laid peak run */
};
static int pp__vgrid_n(int d) { return 2 * d + 4; } /* above this n the blocks are ranked at it */

typedef struct pp__vgrid_cand { int first[4], o0, o1, len0, init; double mk; } pp__vgrid_cand;

/* For n >= 2d the search first works out every block's peak after step 2
   (pp__vgrid_laid_peak, without the grid) and runs steps 2 to 8 only for
   blocks whose laid peak is within PP__VGRID_GAP cells of the highest that
   fits: a block that starts with less memory is rebuilt under that lower
   peak (steps 4 and 6), which costs it bubble. Measured without it on 336
   configurations (d 4..16, n 2d and 4d, limits d/2 - 1/2..d, unit, Table 5
   and comm times): of the 8 blocks ranked best, 2384 had the highest laid
   peak, 58 one cell less and none less than that. With it v-auto gives the
   same schedules there, on 40 more at n = 8d and on the 60 compared with
   the authors' scheduler, in half the time or less. For n < 2d a block's peak is known only after step 5, so every
   block runs. */

/* Times the grid of candidate c and keeps it among the PP__VGRID_TOP best
   (ties: the earlier first). */
static void pp__vgrid_rank(pp__vgrid *G, pp__vgrid_cand *c, const double *tm, double comm, double *end, double *free_at,
                           pp__vgrid_cand *top, int *ntop) {
    int k;
    c->mk = pp__vgrid_time(G, tm, comm, end, free_at);
    if (c->mk < 0) return;
    for (k = *ntop; k > 0 && top[k - 1].mk > c->mk + 1e-9; k--)
        if (k < PP__VGRID_TOP) top[k] = top[k - 1];
    if (k < PP__VGRID_TOP) { top[k] = *c; if (*ntop < PP__VGRID_TOP) (*ntop)++; }
}

static pp_status pp__vgrid_alloc(pp__vgrid *G, const pp__cfg *c, int d, int n) {
    size_t ni;
    int i, k, *x;
    memset(G, 0, sizeof *G);
    G->al = c->al;
    G->d = d; G->m = n; G->M = n > 2 * d ? n : 2 * d;
    G->cap = 6 * (4 * d + G->M + 1) + 8 * d + 16;
    G->g = (unsigned char *)pp__malloc(&G->al, pp__size((size_t)d, (size_t)G->cap));
    G->t = (unsigned char *)pp__malloc(&G->al, pp__size((size_t)d, (size_t)G->cap));
    /* the int arrays, in one allocation: idx, cnt, lc, in, pos, then the
       five of one int per device */
    ni = (size_t)G->M * (size_t)d * 7u + (size_t)d * (7u + 7u + 14u + 6u + 5u);
    G->idx = x = (int *)pp__malloc(&G->al, pp__size(ni, sizeof(int)));
    if (!G->g || !G->t || !x) return PP_ERR_OUT_OF_MEMORY;
    x += (size_t)G->M * (size_t)d * 7u;
    G->cnt = x; x += 7 * d;
    G->lc = x; x += 7 * d;
    G->in = x; x += 14 * d;
    G->pos = (int (*)[6])x; x += 6 * d;
    G->nxt = x; x += d;
    G->pk = x; x += d;
    G->lo = x; x += d;
    G->hi = x; x += d;
    G->low = x;
    for (i = 0; i < d; i++)
        for (k = 0; k < 7; k++) G->in[(i * 7 + k) * 2] = k ? pp__vgrid_input(d, i, k, &G->in[(i * 7 + k) * 2 + 1]) : 0;
    return PP_OK;
}

static void pp__vgrid_release(pp__vgrid *G) {
    pp__mfree(&G->al, G->g); pp__mfree(&G->al, G->t); pp__mfree(&G->al, G->idx);
    memset(G, 0, sizeof *G);
}

/* One block of the family through the grid at G's n, then as a schedule. */
static pp_status pp__vgrid_build(pp__vgrid *G, const pp__cfg *cfg, const pp__vgrid_cand *c, int maxmem,
                                 pp_schedule **out) {
    pp_pass *ord;
    int *sd, i, d = G->d, n = G->m, peak;
    pp_order O;
    pp_status st = PP_OK;
    *out = NULL;
    if (!pp__vgrid_block(d, c->first, c->o0, c->o1, c->len0, G->pos) ||
        !pp__vgrid_run(G, G->pos, maxmem < 2 * d ? maxmem : 2 * d, &peak) || peak > maxmem)
        return PP_OK;
    ord = (pp_pass *)pp__malloc(&G->al, pp__size((size_t)d * 6u * (size_t)n, sizeof(pp_pass)));
    sd = (int *)pp__malloc(&G->al, pp__size((size_t)d * 2u, sizeof(int)));
    if (!ord || !sd) { pp__mfree(&G->al, ord); pp__mfree(&G->al, sd); return PP_ERR_OUT_OF_MEMORY; }
    for (i = 0; i < 2 * d; i++) sd[i] = i < d ? i : 2 * d - 1 - i;
    pp__vgrid_order(G, ord);
    memset(&O, 0, sizeof O);
    O.name = "v-auto"; O.devices = d; O.stages = 2 * d; O.microbatches = n;
    O.stage_device = sd; O.passes = ord; O.count = 6 * d * n;
    st = pp__from_order(&O, cfg, 1, out, NULL);
    if (st == PP_OK) pp__metrics(*out);
    else if (st != PP_ERR_OUT_OF_MEMORY) st = PP_OK; /* a grid that deadlocks is no candidate */
    pp__mfree(&G->al, ord); pp__mfree(&G->al, sd);
    return st;
}

/* The shortest schedule of the grid family within limit (NULL in *out if
   none). Every block is ranked by its grid's time at n, or at
   pp__vgrid_n(d) for larger n; the best PP__VGRID_TOP are built at n as
   schedules and reordered with every variant (pp__reorder, within their
   own peak), except those that cannot win over beat (may be NULL), the
   best of the other family, or over the best of their own so far
   (pp__may_beat; lb0: pp__order_bound at n, -1 = not known yet). */
static pp_status pp__vgrid_search(const pp__req *q, const pp_schedule *beat, double lb0, pp_schedule **out, char *err) {
    const pp__cfg *cfg = &q->c;
    int d = q->d, n = q->n;
    double limit = q->limit;
    pp__vgrid G, G2;
    pp__memo own, *memo = q->vshare ? &q->vshare->memo : &own; /* the build's, else its own */
    pp__vgrid_cand top[PP__VGRID_TOP], c;
    double *end = NULL, *free_at = NULL, comm = q->c.times.comm;
    const double *tm = q->shape.stage_time; /* as every V schedule of this d and config gets them */
    int maxmem = (int)(2 * limit + 1e-9), n1 = n < pp__vgrid_n(d) ? n : pp__vgrid_n(d), ntop = 0, fi, bi, bbi, k;
    int gcap = maxmem < 2 * d ? maxmem : 2 * d; /* the peak a grid may reach */
    int step = d > PP__VGRID_LENS ? d / PP__VGRID_LENS : 1, prune, best = 0, i, nc = 0;
    size_t ncap = 0;
    pp__vgrid_cand *cand = NULL;
    pp_status st;
    *out = NULL;
    if (d < 2 || maxmem < 2) return PP_OK;
    pp__memo_init(&own, &cfg->al);
    st = pp__vgrid_alloc(&G, cfg, d, n1);
    if (st == PP_OK) {
        end = (double *)pp__malloc(&G.al, pp__size((size_t)n1 * (size_t)d * 7u, sizeof(double)));
        free_at = (double *)pp__malloc(&G.al, pp__size((size_t)d, sizeof(double)));
        if (!end || !free_at) st = PP_ERR_OUT_OF_MEMORY;
    }
    /* phase 1 (n >= 2d): every block's laid peak; phase 2 runs steps 2 to 8
       for the blocks within PP__VGRID_GAP of the highest. With n >= 2d no
       step trims the grid, so the laid peak is the one the loop below
       breaks on (pp__vgrid_run returns it when it fails) */
    prune = n1 >= 2 * d && st == PP_OK;
    if (prune) {
        ncap = (size_t)60 * 15u * (size_t)((d - 1) / step + 1);
        cand = (pp__vgrid_cand *)pp__malloc(&G.al, pp__size(ncap, sizeof *cand));
        if (!cand) st = PP_ERR_OUT_OF_MEMORY;
    }
    c.first[0] = 0;
    for (fi = 1; fi < 6 && st == PP_OK; fi++)
    for (bi = 1; bi < 6 && st == PP_OK; bi++)
    for (bbi = 1; bbi < 6 && st == PP_OK; bbi++) {
        if (fi == bi || fi == bbi || bi == bbi) continue;
        c.first[1] = fi; c.first[2] = bi; c.first[3] = bbi;
        for (c.o0 = 1; c.o0 <= 5; c.o0++)
        for (c.o1 = 1; c.o1 <= c.o0; c.o1++)
        /* len0 past d - 1 is o0 everywhere; one block when o0 = o1; beyond
           PP__VGRID_LENS devices every (d / PP__VGRID_LENS)-th len0 */
        for (c.len0 = 1; c.len0 < d && st == PP_OK; c.len0 += c.o0 == c.o1 ? d : step) {
            int peak, ok;
            st = pp__tick(cfg, "v-auto: grid blocks", ((fi - 1) * 25 + (bi - 1) * 5 + bbi - 1) / 125.0, err);
            if (st != PP_OK) break;
            if (!pp__vgrid_block(d, c.first, c.o0, c.o1, c.len0, G.pos)) continue;
            if (prune) {
                c.init = pp__vgrid_laid_peak(d, G.M, G.pos, G.lc);
                if (c.init > gcap) break; /* larger len0 only adds memory */
                if (c.init > best) best = c.init;
                if ((size_t)nc < ncap) cand[nc++] = c; /* ncap counts every block above: always */
                continue;
            }
            ok = pp__vgrid_run(&G, G.pos, gcap, &peak);
            if (peak > gcap) break; /* larger len0 only adds memory */
            if (!ok) continue;
            pp__vgrid_rank(&G, &c, tm, comm, end, free_at, top, &ntop);
        }
    }
    for (i = 0; i < nc && st == PP_OK; i++) {
        int peak;
        c = cand[i];
        if (c.init < best - PP__VGRID_GAP) continue;
        st = pp__tick(cfg, "v-auto: grid blocks, second phase", (double)i / nc, err);
        if (st != PP_OK) break;
        pp__vgrid_block(d, c.first, c.o0, c.o1, c.len0, G.pos);
        if (pp__vgrid_run(&G, G.pos, gcap, &peak))
            pp__vgrid_rank(&G, &c, tm, comm, end, free_at, top, &ntop);
    }
    pp__mfree(&G.al, cand);
    /* the finalists at the real n, as schedules, then our reordering on
       the real times within the schedule's own peak: it shortens the
       grid's schedule where the unit grid misjudges uneven times and comm
       (up to 7% on our grids). Reordering up to the limit instead shortened
       nothing more and made one configuration longer at a higher limit. Above pp__vgrid_n(d) the reordering runs at n1 and the
       stable phase extends it (pp__extend_exact_by) when that is exact; the
       grid built at n is a candidate too, reordered at n only when the
       extension was not exact. */
    memset(&G2, 0, sizeof G2);
    if (st == PP_OK && ntop && n1 != n) st = pp__vgrid_alloc(&G2, cfg, d, n);
    /* different blocks often end in the same grid (about a fifth of the
       finalists): the memo gives its reorder without running it again */
    for (k = 0; k < pp__finalists(d, ntop) && st == PP_OK; k++) {
        pp_schedule *s = NULL, *e = NULL;
        const pp_schedule *ref = *out && (!beat || pp__auto_better(*out, beat)) ? *out : beat;
        int inexact = 0;
        st = pp__tick(cfg, "v-auto: grid finalists", (double)k / ntop, err);
        if (st != PP_OK) break;
        st = pp__vgrid_build(&G, cfg, &top[k], maxmem, &s);
        if (st == PP_OK && s && ref) { /* one that cannot win over the best so far is not reordered */
            double peak = 0;
            for (i = 0; i < d; i++) peak = pp__max(peak, s->peak_memory[i]);
            if (lb0 < 0) lb0 = pp__order_bound(ref);
            if (!pp__may_beat(ref, lb0, peak)) { pp_sched_free(s); continue; }
        }
        if (n1 != n) {
            if (st == PP_OK && s) st = pp__reorder_memo(s, pp__rv_large(d), 0, memo, NULL, err);
            if (st == PP_OK && s) st = pp__extend_exact_by(s, n, 1, &e, err);
            /* not exact: the extension is a candidate too (within the
               limit), beside the grid at n reordered */
            if (st == PP_OK && s && !e) {
                inexact = 1;
                st = pp__extend_by(s, n, 1, &e, err);
                for (i = 0; st == PP_OK && e && i < d; i++)
                    if (e->peak_memory[i] > limit + 1e-9) { pp_sched_free(e); e = NULL; }
            }
            pp_sched_free(s);
            s = NULL;
            /* above PP__EXTEND_WHOLE_D devices that extension alone, where it fits */
            if (st == PP_OK && (pp__extend_whole(d) || !inexact || !e)) st = pp__vgrid_build(&G2, cfg, &top[k], maxmem, &s);
        }
        /* (above PP__EXTEND_WHOLE_D devices the grid at n is not reordered) */
        if (st == PP_OK && s && (!e || inexact) && (n1 == n || pp__extend_whole(d)))
            st = pp__reorder_memo(s, n1 != n ? pp__rv_large(d) : PP__RV_ALL, 0, memo, NULL, err);
        if (st == PP_OK && e && pp__auto_better(e, *out)) { pp_sched_free(*out); *out = e; e = NULL; }
        if (st == PP_OK && s && pp__auto_better(s, *out)) { pp_sched_free(*out); *out = s; s = NULL; }
        pp_sched_free(s);
        pp_sched_free(e);
    }
    pp__memo_free(&own);
    if (st == PP_ERR_OUT_OF_MEMORY) pp__err(err, "out of memory in the v-auto grid search");
    pp__mfree(&G.al, end); pp__mfree(&G.al, free_at);
    pp__vgrid_release(&G);
    pp__vgrid_release(&G2);
    if (st != PP_OK) { pp_sched_free(*out); *out = NULL; }
    return st;
}

/* ---- v-auto and zb-auto: the two adaptive searches ------------------- */

/* The fixed schedules each search builds as candidates too (at the
   caller's times, pp__build_id; taken when their peak fits the limit): the
   guarantee need not build them again. */
enum { PP__AUTO_FIXED = 3 }; /* how many each search takes */
static const pp_sched_id pp__vauto_fixed[PP__AUTO_FIXED] = {PP_SCHED_V_MIN, PP_SCHED_V_HALF, PP_SCHED_V_ZB};
static const pp_sched_id pp__zbauto_fixed[PP__AUTO_FIXED] = {PP_SCHED_ZB_H1, PP_SCHED_ZB_H2, PP_SCHED_1F1B};

/* The cool-down's joint move (docs/quality.md, where v-auto loses): on a
   device of a V, from first-leg microbatch c on, the second-leg passes
   between first-leg B(j) and the next first-leg B run before B(j): F of
   microbatches up to j + of, B up to j + ob (j + of on device 0, whose
   second leg is the last stage: its B follows its own F), the group
   stopping at the first pass beyond those, with the second-leg W's between
   them (one frees the activation a later F of the group takes); trailing
   W's stay where they were. A step whose order would take the device above
   limit is not made. p: one device's passes, lo its first-leg stage; tmp,
   keep: room for cnt passes each. */
static void pp__v_cool_device(const pp_schedule *s, pp_pass *p, int cnt, int lo, int c, int of, int ob, double limit,
                              pp_pass *tmp, pp_pass *keep) {
    int i = 0, bmax = lo == 0 ? of : ob;
    for (;;) {
        int k, e, g = 0, r = 0, last = -1, j;
        while (i < cnt && !(p[i].stage == lo && p[i].kind == PP_B && p[i].microbatch >= c)) i++;
        if (i >= cnt) return;
        j = p[i].microbatch;
        for (e = i + 1; e < cnt && !(p[e].stage == lo && p[e].kind == PP_B); e++) {}
        /* the group: second-leg passes in (i, e) up to the first one beyond */
        for (k = i + 1; k < e; k++) {
            if (p[k].stage == lo) continue;
            if ((p[k].kind == PP_F && p[k].microbatch > j + of) || (p[k].kind == PP_B && p[k].microbatch > j + bmax)) break;
            if (p[k].kind != PP_W) last = k;
        }
        if (last >= 0) {
            for (k = i + 1; k <= last; k++) if (p[k].stage != lo) tmp[g++] = p[k];
            r = g;
            tmp[r++] = p[i];
            for (k = i + 1; k < e; k++) if (p[k].stage == lo || k > last) tmp[r++] = p[k];
            memcpy(keep, p + i, (size_t)r * sizeof *p);
            memcpy(p + i, tmp, (size_t)r * sizeof *p);
            if (pp__device_peak(s, p, cnt) > limit + 1e-9) memcpy(p + i, keep, (size_t)r * sizeof *p);
        }
        i = e;
    }
}

/* v-auto's finishing candidates: the cool-down move above for every start c
   in the last d + 2 microbatches and of, ob in 1..2, on every device but
   the turn's at once, each squeezed and kept only when shorter, with every
   device's peak within the limit. s is changed only to a shorter order,
   and is left as it was, to the bit, otherwise. */
static pp_status pp__v_cool(pp_schedule *s, double limit, char *err) {
    int d = s->devices, n = s->microbatches, P = s->num_passes, c, of, ob, i;
    pp_allocator *al = &s->allocator;
    pp_pass *best, *tmp, *keep;
    double bmk, s0, br0, *pk0;
    if (s->placement != PP_PLACE_VSHAPE || !s->split_backward || s->copies == 2 || s->fb_pairs) return PP_OK;
    best = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof *best));
    tmp = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof *tmp));
    keep = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof *keep));
    pk0 = (double *)pp__malloc(al, pp__size((size_t)d, sizeof *pk0));
    if (!best || !tmp || !keep || !pk0) {
        pp__mfree(al, best); pp__mfree(al, tmp); pp__mfree(al, keep); pp__mfree(al, pk0);
        pp__err(err, "out of memory in v-auto's cool-down candidates");
        return PP_ERR_OUT_OF_MEMORY;
    }
    memcpy(best, s->passes, (size_t)P * sizeof *best);
    bmk = s0 = s->makespan;
    br0 = s->bubble_rate;
    memcpy(pk0, s->peak_memory, (size_t)d * sizeof *pk0);
    for (c = n - 1; c >= 0 && c >= n - d - 2; c--)
        for (of = 1; of <= 2; of++)
            for (ob = 1; ob <= 2; ob++) {
                int ok = 1;
                memcpy(s->passes, best, (size_t)P * sizeof *best);
                for (i = 0; i < d - 1; i++) /* the turn, device d - 1, keeps its order */
                    pp__v_cool_device(s, s->passes + s->device_start[i], s->device_start[i + 1] - s->device_start[i], i,
                                      c, of, ob, limit, tmp, keep);
                if (!memcmp(s->passes, best, (size_t)P * sizeof *best)) continue;
                for (i = 0; i < d && ok; i++) {
                    double v = pp__device_peak(s, s->passes + s->device_start[i],
                                               s->device_start[i + 1] - s->device_start[i]);
                    ok = v <= limit + 1e-9;
                }
                if (!ok || pp__squeeze(s, NULL, NULL) != PP_OK) continue;
                pp__metrics(s);
                if (s->makespan < bmk - 1e-9) { memcpy(best, s->passes, (size_t)P * sizeof *best); bmk = s->makespan; }
            }
    memcpy(s->passes, best, (size_t)P * sizeof *best);
    if (bmk < s0 - 1e-9) pp__metrics(s);
    else { s->makespan = s0; s->bubble_rate = br0; memcpy(s->peak_memory, pk0, (size_t)d * sizeof *pk0); }
    pp__mfree(al, best); pp__mfree(al, tmp); pp__mfree(al, keep); pp__mfree(al, pk0);
    return PP_OK;
}

/* v-auto's and v-zb's last step at small sizes: an iterated local search
   (pp__v_shake). The orders the solver finds where v-auto stopped above
   it (docs/quality.md, where v-auto loses) differ from ours in a joint
   move of several passes on several devices, the steady phase and the
   turn's device included; no single move or swap of the local search
   reaches them, and no one rule for the move covered every row. So: from
   the current order, move one or two random passes up to PP__SHAKE_REACH
   places on their devices, squeeze, run the local search on the result
   every second round (the rounds between walk further for the same work),
   and take it as the current order when it is no longer (walking over
   orders of equal makespan); keep the shortest order seen. Deterministic:
   a fixed seed for a xorshift generator held in the function. Every order
   tried keeps every device within limit; an order that deadlocks is
   refused by the squeeze. The work is PP__SHAKE_WORK passes squeezed (so
   fewer rounds on larger schedules), cut short at the order bound. Up to
   PP__SHAKE_RUN_D devices and 3d/2 microbatches (the sizes where the first
   walk stops short of the solver's best: d = 3 and 6 at n = d) a second
   walk of the same rounds follows, from
   the shortest order seen, with another seed: it moves runs of one or two
   adjacent passes (a B with its W), runs the local search every round,
   and starts again from the shortest order every PP__SHAKE_RESET rounds.
   The solver's order at d = 3, n = 4, B = 2F + comm, limit 2
   (docs/quality.md) is one such run and one pass on two devices away,
   each alone no shorter, and the first walk drifts off it over equal
   orders; that walk is left as it was, so no order it finds is lost. s
   changes only to a strictly shorter order and is left as it was, to the
   bit, otherwise. limit > 0: every device within it (an adaptive
   schedule); 0: each device within caps[i] (a fixed one: its memory caps,
   pp__build_caps, which its local search keeps too), or its own peak
   where that is higher or caps is NULL. */
enum { PP__SHAKE_WORK = 1200000, PP__SHAKE_REACH = 4, PP__SHAKE_MOVES = 2 };
enum { PP__SHAKE_RUN_D = 6, PP__SHAKE_RUN = 2, PP__SHAKE_RESET = 50, PP__SHAKE_SEED2 = 3 };
static void pp__shake_caps(const pp_schedule *s, double limit, const double *caps, double *cap) {
    int i;
    for (i = 0; i < s->devices; i++)
        cap[i] = limit > 0 ? limit : caps ? pp__max(caps[i], s->peak_memory[i]) : s->peak_memory[i];
}
static pp_status pp__v_shake(pp_schedule *s, double limit, const double *caps, char *err) {
    int d = s->devices, P = s->num_passes, it, rounds = PP__SHAKE_WORK / (P > 0 ? P : 1);
    int rounds2 = d <= PP__SHAKE_RUN_D && 2 * s->microbatches <= 3 * d ? rounds : 0; /* the second walk's rounds */
    pp_allocator *al = &s->allocator;
    unsigned long long x = 2; /* the generator's state */
    double lb = pp__order_bound(s), s0 = s->makespan, br0 = s->bubble_rate, cm = s->makespan, bm = s->makespan;
    double *cap, *pk0;
    pp_pass *orig, *cur, *best;
    pp_status st = PP_OK;
    if (pp__at_bound(s0, lb)) return PP_OK;
    orig = (pp_pass *)pp__malloc(al, pp__size((size_t)P, 3u * sizeof *orig));
    cap = (double *)pp__malloc(al, pp__size((size_t)d, 2u * sizeof *cap));
    if (!orig || !cap) {
        pp__mfree(al, orig); pp__mfree(al, cap);
        pp__err(err, "out of memory in the iterated local search");
        return PP_ERR_OUT_OF_MEMORY;
    }
    cur = orig + P; best = orig + 2 * (size_t)P; pk0 = cap + d;
    pp__shake_caps(s, limit, caps, cap);
    memcpy(orig, s->passes, (size_t)P * sizeof *orig);
    memcpy(cur, orig, (size_t)P * sizeof *orig);
    memcpy(best, orig, (size_t)P * sizeof *orig);
    memcpy(pk0, s->peak_memory, (size_t)d * sizeof *pk0);
    for (it = 0; it < rounds + rounds2 && !pp__at_bound(bm, lb); it++) {
        int m, k, ok = 1, run = it < rounds ? 1 : PP__SHAKE_RUN;
        if (it == rounds) x = PP__SHAKE_SEED2;
        if (it >= rounds && (it - rounds) % PP__SHAKE_RESET == 0) { cm = bm; memcpy(cur, best, (size_t)P * sizeof *cur); }
        memcpy(s->passes, cur, (size_t)P * sizeof *cur);
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        k = 1 + (int)((x >> 20) % PP__SHAKE_MOVES);
        for (m = 0; m < k && ok; m++) {
            int dev, a, e, f, to, len;
            pp_pass t[PP__SHAKE_RUN];
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            dev = (int)((x >> 11) % (unsigned)d);
            a = s->device_start[dev]; e = s->device_start[dev + 1];
            len = 1 + (int)((x >> 56) % (unsigned)run);
            if (e - a < len + 1) continue;
            f = a + (int)((x >> 27) % (unsigned)(e - a - len + 1));
            to = f + (int)((x >> 43) % (2 * PP__SHAKE_REACH + 1)) - PP__SHAKE_REACH;
            to = to < a ? a : to > e - len ? e - len : to;
            if (to == f) continue;
            memcpy(t, s->passes + f, (size_t)len * sizeof *t);
            if (f < to) memmove(s->passes + f, s->passes + f + len, (size_t)(to - f) * sizeof *t);
            else memmove(s->passes + to + len, s->passes + to, (size_t)(f - to) * sizeof *t);
            memcpy(s->passes + to, t, (size_t)len * sizeof *t);
            ok = pp__device_peak(s, s->passes + a, e - a) <= cap[dev] + 1e-9;
        }
        if (!ok || !memcmp(s->passes, cur, (size_t)P * sizeof *cur)) continue;
        st = pp__squeeze(s, NULL, NULL); /* a deadlocked order is refused */
        if (st == PP_ERR_OUT_OF_MEMORY) { pp__err(err, "out of memory in the iterated local search"); break; }
        if (st != PP_OK) { st = PP_OK; continue; }
        pp__metrics(s);
        if ((it % 2 == 0 || it >= rounds) && (st = pp__local_search(s, cap, err)) != PP_OK) break;
        if (s->makespan > cm + PP__EPS * (1 + cm)) continue;
        cm = s->makespan;
        memcpy(cur, s->passes, (size_t)P * sizeof *cur);
        if (cm < bm - PP__EPS * (1 + bm)) { bm = cm; memcpy(best, cur, (size_t)P * sizeof *cur); }
    }
    if (st == PP_OK && bm < s0 - PP__EPS * (1 + s0)) {
        memcpy(s->passes, best, (size_t)P * sizeof *best);
        pp__metrics(s);
    } else {
        memcpy(s->passes, orig, (size_t)P * sizeof *orig);
        s->makespan = s0; s->bubble_rate = br0;
        memcpy(s->peak_memory, pk0, (size_t)d * sizeof *pk0);
    }
    pp__mfree(al, orig); pp__mfree(al, cap);
    return st;
}

/* v-auto: V-shape blocks with the K split of Eq. 3. delta0 (F of chunk 0,
   B of chunk 1) from 1 to 4 cells, delta1 (F of chunk 1, B of chunk 0) from
   1 to 3 cells, on each side of K; turns by pp__v_turns; W greedy. */
static pp_status pp__v_auto(const pp__req *q, pp_schedule **out, char *err) {
    int d = q->d;
    double limit = q->limit;
    pp__auto A;
    pp__vblock V;
    pp_status st;
    int K, x0, x1, y0, y1, nrec = 0, caprec = 0, r;
    double lb; /* pp__order_bound at n (A.lb_n), -1 if nothing was built */
    pp__vrec *rec = NULL; /* pass 0's blocks that fit the limit and repeat without collision, in order */
    pp__vshare *sh = q->vshare;
    pp__pass0 *p0;
    int shared;
    *out = NULL;
    /* with the grid family beside it (not with no_reorder) a narrower block search is enough */
    st = pp__auto_init(&A, q, q->c.reorder ? PP__VAUTO_TOP : PP__AUTO_TOP, q->c.reorder ? PP__VAUTO_LEVELS : PP__AUTO_LEVELS,
                       err);
    if (st != PP_OK) return st;
    memset(&V, 0, sizeof V);
    V.split = 1; V.bw_cells = 2;
    p0 = sh ? &sh->v0 : NULL;
    shared = pp__pass0_held(p0, &A, d, limit);
    if (shared) { rec = (pp__vrec *)p0->rec; nrec = p0->nrec; A.min_mem = p0->min_mem; }
    /* pass 0. K = 0 is the uniform block; beyond 16 devices every (d/16)-th K */
    for (K = 0; K < d && st == PP_OK && !shared; K += d > 16 ? d / 16 : 1) {
        for (x0 = 1; x0 <= PP__VAUTO_D0 && st == PP_OK; x0++)
        for (x1 = 1; x1 <= PP__VAUTO_D1 && st == PP_OK; x1++)
        for (y0 = K ? 1 : x0; y0 <= (K ? PP__VAUTO_D0 : x0) && st == PP_OK; y0++)
        for (y1 = K ? 1 : x1; y1 <= (K ? PP__VAUTO_D1 : x1) && st == PP_OK; y1++) {
            unsigned char ok[216];
            int t, minsum = 99;
            if (K && y0 == x0 && y1 == x1) continue; /* the uniform block, K = 0 */
            V.K = K; V.f0 = V.b1 = x0; V.f1 = V.b0 = x1; V.f0k = V.b1k = y0; V.f1k = V.b0k = y1;
            st = pp__v_turns_ok(d, V, &A.al, ok, err);
            for (t = 0; t < 216 && st == PP_OK; t++)
                if (ok[t] && t / 36 + t / 6 % 6 + t % 6 + 3 < minsum) minsum = t / 36 + t / 6 % 6 + t % 6 + 3;
            /* the turns of the smallest sums: larger turns only add memory */
            for (t = 0; t < 216 && st == PP_OK; t++) {
                pp_block *blk = NULL;
                int sum = t / 36 + t / 6 % 6 + t % 6 + 3;
                if (!ok[t] || sum > minsum + PP__VAUTO_TURNS + PP__VAUTO_TURNSX) continue;
                A.extra = sum > minsum + PP__VAUTO_TURNS;
                V.a = t / 36 + 1; V.b = t / 6 % 6 + 1; V.c = t % 6 + 1;
                A.kept = 0;
                st = pp__tick(&q->c, "v-auto: blocks", (double)K / d, err);
                if (st == PP_OK) st = pp__v_block(d, &V, &A.al, &blk, err);
                if (st == PP_OK) st = pp__auto_consider(&A, blk, err);
                if (st == PP_OK && A.kept) {
                    void *list = rec;
                    if ((st = pp__grow(&A.al, &list, nrec, &caprec, sizeof *rec, err)) != PP_OK) break;
                    rec = (pp__vrec *)list;
                    rec[nrec].K = K; rec[nrec].x0 = (unsigned char)x0; rec[nrec].x1 = (unsigned char)x1;
                    rec[nrec].y0 = (unsigned char)y0; rec[nrec].y1 = (unsigned char)y1; rec[nrec].t = (unsigned char)t;
                    rec[nrec].extra = (unsigned char)A.extra;
                    nrec++;
                }
            }
        }
    }
    /* pass 1: the same blocks in the same order, those pass 0 kept (the
       first of equal blocks, without collision, within the limit) */
    A.pass = pp__auto_next_pass(&A); /* also on failure: it clears pass 0's level marks, which are no blocks */
    A.replay = 1;
    if (shared) A.lev_min = p0->lev_min;
    else if (st == PP_OK) shared = pp__pass0_keep(p0, &A, d, limit, rec, nrec); /* the list goes to sh, which frees it */
    for (r = 0; r < nrec && st == PP_OK; r++) {
        pp_block *blk = NULL;
        const pp__vrec *q = &rec[r]; /* (shadows the request: the loop reads the record only) */
        V.K = q->K; V.f0 = V.b1 = q->x0; V.f1 = V.b0 = q->x1; V.f0k = V.b1k = q->y0; V.f1k = V.b0k = q->y1;
        V.a = q->t / 36 + 1; V.b = q->t / 6 % 6 + 1; V.c = q->t % 6 + 1;
        A.extra = q->extra;
        st = pp__tick(&A.q->c, "v-auto: blocks at n", (double)r / nrec, err);
        if (st == PP_OK) st = pp__v_block(d, &V, &A.al, &blk, err);
        if (st == PP_OK) st = pp__auto_consider(&A, blk, err);
    }
    if (!shared) pp__mfree(&A.al, rec);
    if (st == PP_OK) st = pp__auto_finish(&A, pp__vauto_fixed, PP__AUTO_FIXED, out, err);
    lb = A.lb_n;
    pp__auto_release(&A);
    /* the grid family, except above pp__small_n where the blocks' best is at
       the order bound (DESIGN.md: the search stops at the bound) or the
       limit is d or more: there the blocks (V-ZB's among them) were as
       short or shorter in every configuration we measured (d = 8 to 128,
       n = 2d+8 to 8d, five time settings with comm, limits d to 2d: 325
       rows, the grid longer by 0 to 4.8%; docs/quality.md); below d the
       family wins by up to 17% and is kept */
    if (st == PP_OK && q->c.reorder &&
        (pp__small_n(d, q->n) || !*out || (!pp__at_bound((*out)->makespan, lb) && limit < d))) {
        pp_schedule *g = NULL;
        st = pp__vgrid_search(q, *out, lb, &g, err);
        if (st == PP_OK && g && pp__auto_better(g, *out)) { pp_sched_free(*out); *out = g; g = NULL; }
        pp_sched_free(g);
        if (st != PP_OK) { pp_sched_free(*out); *out = NULL; }
    }
    /* V-ZB's list-built order at the limit (pp__vzb_list); above 2d + 6
       microbatches it is kept only when shorter, so not built where nothing is */
    if (st == PP_OK && q->c.reorder && *out && (pp__small_n(d, q->n) || !pp__at_bound((*out)->makespan, lb))) {
        pp_schedule *g = NULL;
        double *cap = (double *)pp__malloc(&q->c.al, pp__size((size_t)d, sizeof(double)));
        int i, small = pp__small_n(d, q->n);
        if (!cap) { pp_sched_free(*out); *out = NULL; pp__err(err, "out of memory in v-auto"); return PP_ERR_OUT_OF_MEMORY; }
        for (i = 0; i < d; i++) cap[i] = limit;
        st = pp__vzb_list(q, cap, small ? 1e300 : (*out)->makespan, &g, err);
        pp__mfree(&q->c.al, cap);
        if (st == PP_OK && g && small) st = pp__reorder(g, PP__RV_ALL, limit, err);
        if (st == PP_OK && g && pp__auto_better(g, *out)) { pp_sched_free(*out); *out = g; g = NULL; }
        pp_sched_free(g);
        if (st != PP_OK) { pp_sched_free(*out); *out = NULL; }
    }
    /* the cool-down candidates (pp__v_cool), up to 16 devices at the sizes
       of pp__small_n only: they cost a fifth of the search's time at d = 16,
       n = 128, and a third at d = 64, n = 128 */
    if (st == PP_OK && q->c.reorder && *out && d <= 16 && pp__small_n(d, q->n)) {
        st = pp__v_cool(*out, limit, err);
        if (st != PP_OK) { pp_sched_free(*out); *out = NULL; }
    }
    if (st == PP_OK && !*out) {
        pp__err(err, "v-auto: no V schedule fits mem_limit %g units for d=%d; the smallest that works is %g", limit, d,
                A.min_mem);
        return PP_ERR_INVALID_ARG;
    }
    return st;
}

/* zb-auto: sequential blocks with B/W split. F steps fo cells per device, B
   steps bo, the F->B turn on the last device; W goes to the first cell
   free in the repeat at or after max(its B + 1, its F + wlife - 1), wlife
   = 3 wl cells, the lifespan that stage 0 gets (0 = W right after B).
   pp__zb_block builds the block of (fo, bo, turn, wl). */
static pp_status pp__zb_block(int d, int fo, int bo, int turn, int wl, const pp_allocator *al, pp_block **out,
                              char *err) {
    pp_block *blk;
    int s, T = 3, dev;
    unsigned char occ[3];
    int wlife = wl == 0 ? 0 : 3 * wl; /* in cells, multiples of T */
    pp_status st = pp_block_create(d, 1, PP_PLACE_SEQUENTIAL, 1, 1, al, &blk, err);
    *out = NULL;
    if (st != PP_OK) return st;
    blk->interval = T;
    blk->f[0] = 0;
    for (s = 1; s < d; s++) blk->f[s] = blk->f[s - 1] + fo;
    blk->b[d - 1] = blk->f[d - 1] + turn;
    for (s = d - 2; s >= 0; s--) blk->b[s] = blk->b[s + 1] + bo;
    for (dev = 0; dev < d; dev++) {
        int c = blk->b[dev] + 1, lo = blk->f[dev] + wlife - 1;
        occ[0] = occ[1] = occ[2] = 0;
        occ[blk->f[dev] % T] = 1;
        occ[blk->b[dev] % T] = 1;
        if (c < lo) c = lo;
        while (occ[c % T] && c < blk->b[dev] + 1 + 3 * T) c++;
        blk->w[dev] = c;
    }
    *out = blk;
    return PP_OK;
}

static pp_status pp__zb_auto(const pp__req *q, pp_schedule **out, char *err) {
    int d = q->d;
    double limit = q->limit;
    pp__auto A;
    pp_status st;
    int fo, bo, turn, wl, nrec = 0, caprec = 0, r, shared;
    double lb; /* pp__order_bound at n (A.lb_n), -1 if nothing was built */
    pp__zrec *rec = NULL; /* pass 0's blocks that fit the limit and repeat without collision, in order */
    pp__vshare *sh = q->vshare;
    pp__pass0 *p0;
    *out = NULL;
    st = pp__auto_init(&A, q, PP__AUTO_TOP, PP__AUTO_LEVELS, err);
    if (st != PP_OK) return st;
    p0 = sh ? &sh->z0 : NULL;
    shared = pp__pass0_held(p0, &A, d, limit);
    if (shared) { rec = (pp__zrec *)p0->rec; nrec = p0->nrec; A.min_mem = p0->min_mem; }
    /* pass 0: which levels have a block, and the blocks pass 1 ranks */
    for (fo = 1; fo <= 6 && st == PP_OK && !shared; fo++)
    for (bo = 1; bo <= 3 && st == PP_OK; bo++)
    for (turn = 1; turn <= 6 && st == PP_OK; turn++)
    for (wl = 0; wl <= 2 * d + 2 && st == PP_OK; wl++) {
        pp_block *blk = NULL;
        st = pp__tick(&q->c, "zb-auto: blocks",
                      ((((fo - 1) * 3 + bo - 1) * 6 + turn - 1) * (2.0 * d + 3) + wl) / (108.0 * (2 * d + 3)), err);
        if (st == PP_OK) st = pp__zb_block(d, fo, bo, turn, wl, &A.al, &blk, err);
        A.kept = 0;
        if (st == PP_OK) st = pp__auto_consider(&A, blk, err);
        if (st == PP_OK && A.kept) {
            void *list = rec;
            if ((st = pp__grow(&A.al, &list, nrec, &caprec, sizeof *rec, err)) != PP_OK) break;
            rec = (pp__zrec *)list;
            rec[nrec].fo = (unsigned char)fo; rec[nrec].bo = (unsigned char)bo; rec[nrec].turn = (unsigned char)turn;
            rec[nrec].wl = wl;
            nrec++;
        }
    }
    /* pass 1: the blocks pass 0 kept (the first of equal blocks, without
       collision, within the limit), in the same order */
    A.pass = pp__auto_next_pass(&A); /* also on failure: it clears pass 0's level marks */
    A.replay = 1;
    if (shared) A.lev_min = p0->lev_min;
    else if (st == PP_OK) shared = pp__pass0_keep(p0, &A, d, limit, rec, nrec); /* the list goes to sh, which frees it */
    for (r = 0; r < nrec && st == PP_OK; r++) {
        pp_block *blk = NULL;
        st = pp__tick(&q->c, "zb-auto: blocks at n", (double)r / nrec, err);
        if (st == PP_OK) st = pp__zb_block(d, rec[r].fo, rec[r].bo, rec[r].turn, rec[r].wl, &A.al, &blk, err);
        if (st == PP_OK) st = pp__auto_consider(&A, blk, err);
    }
    if (!shared) pp__mfree(&A.al, rec);
    if (st == PP_OK) st = pp__auto_finish(&A, pp__zbauto_fixed, PP__AUTO_FIXED, out, err);
    lb = A.lb_n;
    pp__auto_release(&A);
    /* the list-built candidate, reordered (as the blocks: up to 2d + 6
       microbatches); only where a block fits, so the limits zb-auto takes
       stay those of its blocks (the list would also build below d units);
       above 2d + 6 microbatches it is kept only when shorter, so not built
       where nothing is */
    if (st == PP_OK && q->c.reorder && *out && (pp__small_n(d, q->n) || !pp__at_bound((*out)->makespan, lb))) {
        pp_schedule *g = NULL;
        int small = pp__small_n(d, q->n);
        st = pp__zb_list(q, limit, small ? 1e300 : (*out)->makespan, &g, err);
        if (st == PP_OK && g && small) st = pp__reorder(g, PP__RV_ALL, limit, err);
        if (st == PP_OK && g && pp__auto_better(g, *out)) { pp_sched_free(*out); *out = g; g = NULL; }
        pp_sched_free(g);
        if (st != PP_OK) { pp_sched_free(*out); *out = NULL; }
    }
    if (st == PP_OK && !*out) {
        pp__err(err, "zb-auto: no schedule fits mem_limit %g units for d=%d; the smallest that works is %g", limit, d,
                A.min_mem);
        return PP_ERR_INVALID_ARG;
    }
    return st;
}

/* ---- the built-in schedules --------------------------------------------- */

static const pp_sched_info pp__infos[PP_SCHED_COUNT] = {
#define PP__SCHED_INFO(id, name, place, chunks, any_chunks, split, recompute, copies, limit, published, steady,      \
                       search_d, max_d, fb_pairs, shake_d, fixed, block, builder, desc)                                          \
    {name, desc, id, PP_PLACE_##place, chunks, any_chunks, split, recompute, copies, (limit) != 0, (limit) < 0,       \
     (limit) > 0 ? (double)(limit) : 0.0, published, steady, search_d, max_d, fb_pairs},
    PP_SCHED_LIST(PP__SCHED_INFO)
#undef PP__SCHED_INFO
};

PP__DEF int pp_sched_count(void) { return PP_SCHED_COUNT; }

PP__DEF const pp_sched_info *pp_sched_info_at(int i) {
    if (i < 0 || i >= PP_SCHED_COUNT) return NULL;
    return &pp__infos[i];
}

static int pp__streq(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x == '_') x = '-';
        if (y == '_') y = '-';
        if (x != y) return 0;
    }
    return *a == *b;
}

PP__DEF const pp_sched_info *pp_sched_find(const char *name) {
    int id;
    if (!name) name = "1f1b";
    for (id = 0; id < PP_SCHED_COUNT; id++)
        if (pp__streq(name, pp__infos[id].name)) return &pp__infos[id];
    return NULL;
}

/* Every block and builder gets the request, resolved and checked once
   (pp__req_resolve). A row's block (pp__block_of_<block>) returns its
   building block; its builder (pp__build_<builder>) returns the schedule,
   from that block where the row has one. */
/* The one-stage-per-device blocks of Section 2 (offsets: see DESIGN.md). */
static pp_status pp__block_linear(const pp__req *q, int fo, int turn, int wlife, int recompute, pp_block **blk,
                                  char *err) {
    pp__linear L;
    memset(&L, 0, sizeof L);
    L.fo = fo; L.turn = turn; L.bo = 2; L.bw_cells = 2; L.interval = 3; L.wlife = wlife;
    if (recompute) { L.bo = 3; L.bw_cells = 3; L.interval = 4; }
    return pp__linear_block(q->d, 1, q->info->split_backward, &L, &q->c.al, blk, err);
}
static pp_status pp__block_of_gpipe(const pp__req *q, pp_block **blk, char *err) {
    if (q->n > INT_MAX / 64) { pp__err(err, "gpipe: %d microbatches is too many", q->n); return PP_ERR_OVERFLOW; }
    return pp__block_linear(q, 1, 3 * q->n - 2, 0, 0, blk, err); /* all F before any B */
}
static pp_status pp__block_of_1f1b(const pp__req *q, pp_block **blk, char *err) {
    return pp__block_linear(q, 1, 1, 0, 0, blk, err);
}
static pp_status pp__block_of_eager_1f1b(const pp__req *q, pp_block **blk, char *err) {
    return pp__block_linear(q, 4, 1, 0, 0, blk, err);
}
static pp_status pp__block_of_zb_h1(const pp__req *q, pp_block **blk, char *err) {
    return pp__block_linear(q, 1, 1, 3 * q->d, 0, blk, err); /* W lives as long as stage 0 in 1F1B */
}
static pp_status pp__block_of_zb_h2(const pp__req *q, pp_block **blk, char *err) {
    return pp__block_linear(q, 4, 1, 6 * q->d - 3, 0, blk, err); /* ... in eager 1F1B */
}
static pp_status pp__block_of_1f1b_r(const pp__req *q, pp_block **blk, char *err) {
    return pp__block_linear(q, 1, 1, 0, 1, blk, err);
}

/* pp__v_search's block, through q's share (pp__vshare): a search already
   run in this build gives its winner, built again */
static pp_status pp__v_search_shared(const pp__req *q, pp__vblock V, pp_block **blk, char *err) {
    pp__vshare *sh = q->vshare;
    pp__vblock won;
    pp_status st;
    int k;
    for (k = 0; sh && k < sh->nblk; k++)
        if (sh->blk_d[k] == q->d && !memcmp(&sh->key[k], &V, sizeof V)) return pp__v_block(q->d, &sh->won[k], &q->c.al, blk, err);
    st = pp__v_search(q->d, V, &q->c.al, blk, &won, err);
    if (st == PP_OK && sh && sh->nblk < PP__VSHARE_BLOCKS) {
        sh->blk_d[sh->nblk] = q->d; sh->key[sh->nblk] = V; sh->won[sh->nblk] = won;
        sh->nblk++;
    }
    return st;
}

/* The V-shape blocks of Section 3: offsets of F and B of each chunk. */
static pp_status pp__block_vshape(const pp__req *q, int f0, int f1, int b0, int b1, pp_block **blk, char *err) {
    pp__vblock V;
    memset(&V, 0, sizeof V);
    V.split = q->info->split_backward; V.bw_cells = 2;
    V.f0 = f0; V.f1 = f1; V.b0 = b0; V.b1 = b1;
    if (!V.split) { V.gap_every = 3; V.gap = 3; }
    return pp__v_search_shared(q, V, blk, err);
}
static pp_status pp__block_of_1f1b_v(const pp__req *q, pp_block **blk, char *err) {
    return pp__block_vshape(q, 1, 1, 2, 2, blk, err);
}
static pp_status pp__block_of_v_min(const pp__req *q, pp_block **blk, char *err) {
    return pp__block_vshape(q, 1, 1, 1, 1, blk, err);
}
static pp_status pp__block_of_v_half(const pp__req *q, pp_block **blk, char *err) {
    return pp__block_vshape(q, 2, 1, 1, 2, blk, err);
}
static pp_status pp__block_of_v_zb(const pp__req *q, pp_block **blk, char *err) {
    return pp__block_vshape(q, 4, 2, 2, 4, blk, err);
}
static pp_status pp__block_of_interleaved_u(const pp__req *q, pp_block **blk, char *err) {
    return pp__interleaved_uniform_block(q->d, q->v, &q->c.al, blk, err);
}
static pp_status pp__block_of_interleaved_m(const pp__req *q, pp_block **blk, char *err) {
    return pp__interleaved_lowmem_block(&q->c, q->d, &q->c.al, blk, err);
}
static pp_status pp__block_of_zb_min(const pp__req *q, pp_block **blk, char *err) {
    return pp__zbmin_block(q->d, &q->c.al, blk, err);
}

/* The builder of most rows with a block: the block repeated over n,
   squeezed and reordered (the published schedules are defined by their
   order and are not; the adaptive ones reorder their candidates
   themselves). */
static pp_status pp__build_from_block(const pp__req *q, const pp_block *blk, pp_schedule **s, char *err) {
    const pp_sched_info *in = q->info;
    int reorder = q->c.reorder && !in->published && !in->adaptive;
    /* above pp__small_n, the searches' variants (pp__rv_large) */
    unsigned mask = pp__small_n(q->d, q->n) ? PP__RV_ALL : pp__rv_large(q->d);
    return pp__block_schedule(blk, q->n, &q->c, in->recompute, reorder ? mask : 0u, 0, q->vshare ? &q->vshare->memo : NULL,
                              s, err);
}
/* V-ZB: its block's schedule, or the list-built order of pp__vzb_list
   under the block's Eq. 1 bound (the memory V-ZB promises, d units),
   reordered within it, where that is shorter. */
static pp_status pp__build_v_zb(const pp__req *q, const pp_block *b, pp_schedule **s, char *err) {
    pp_schedule *g = NULL;
    pp_status st = pp__build_from_block(q, b, s, err);
    if (st != PP_OK || !q->c.reorder) return st; /* no_reorder: the block alone */
    /* reordered only up to 2d + 6 microbatches (beyond, the block's schedule
       is reordered at 2d + 4 and extended; reordering at full n is slow),
       so beyond only an order shorter before reordering can win: none where
       the block's schedule is at the order bound */
    if (!pp__small_n(q->d, q->n) && pp__at_bound((*s)->makespan, pp__order_bound(*s))) return st;
    st = pp__vzb_list(q, (*s)->peak_bound, pp__small_n(q->d, q->n) ? 1e300 : (*s)->makespan, &g, err);
    if (st == PP_OK && g) {
        g->interval = (*s)->interval;
        memcpy(g->peak_bound, (*s)->peak_bound, (size_t)q->d * sizeof *g->peak_bound);
        if (pp__small_n(q->d, q->n)) st = pp__reorder(g, PP__RV_ALL, 0, err);
        if (st == PP_OK && g->makespan < (*s)->makespan - PP__EPS * (1 + g->makespan)) { pp_sched_free(*s); *s = g; g = NULL; }
    }
    pp_sched_free(g);
    if (st != PP_OK) { pp_sched_free(*s); *s = NULL; }
    return st;
}

static pp_status pp__build_v_auto(const pp__req *q, const pp_block *blk, pp_schedule **s, char *err) {
    (void)blk;
    return pp__v_auto(q, s, err);
}
static pp_status pp__build_zb_auto(const pp__req *q, const pp_block *blk, pp_schedule **s, char *err) {
    (void)blk;
    return pp__zb_auto(q, s, err);
}
static pp_status pp__build_interleaved(const pp__req *q, const pp_block *blk, pp_schedule **s, char *err) {
    (void)blk;
    if (q->n % q->d != 0) {
        pp__err(err, "interleaved-1f1b (Megatron) needs microbatches to be a multiple of devices, got n=%d, d=%d; "
                     "try n=%d or interleaved-1f1b-u", q->n, q->d, (q->n / q->d + 1) * q->d);
        return PP_ERR_INVALID_ARG;
    }
    return pp__interleaved_official(&q->c, q->d, q->v, q->n, s, err);
}
static pp_status pp__build_looped_bfs(const pp__req *q, const pp_block *blk, pp_schedule **s, char *err) {
    (void)blk;
    return pp__looped_bfs(&q->c, q->d, q->v, q->n, s, err);
}
static pp_status pp__build_dualpipe_v(const pp__req *q, const pp_block *blk, pp_schedule **s, char *err) {
    (void)blk;
    return pp__dualpipe(&q->c, q->d, q->n, 0, s, err);
}
static pp_status pp__build_dualpipe(const pp__req *q, const pp_block *blk, pp_schedule **s, char *err) {
    (void)blk;
    return pp__dualpipe(&q->c, q->d, q->n, 1, s, err);
}

/* The rows' blocks (NULL: none) and builders, from PP_SCHED_LIST. */
typedef pp_status (*pp__block_fn)(const pp__req *q, pp_block **blk, char *err);
typedef pp_status (*pp__builder)(const pp__req *q, const pp_block *blk, pp_schedule **s, char *err);
#define pp__block_of_none NULL
static const pp__block_fn pp__blocks[PP_SCHED_COUNT] = {
#define PP__SCHED_BLOCK(id, name, place, chunks, any_chunks, split, recompute, copies, limit, published, steady, \
                        search_d, max_d, fb_pairs, shake_d, fixed, block, builder, desc)                                   \
    pp__block_of_##block,
    PP_SCHED_LIST(PP__SCHED_BLOCK)
#undef PP__SCHED_BLOCK
};
#undef pp__block_of_none
static const pp__builder pp__builders[PP_SCHED_COUNT] = {
#define PP__SCHED_BUILDER(id, name, place, chunks, any_chunks, split, recompute, copies, limit, published, steady, \
                          search_d, max_d, fb_pairs, shake_d, fixed, block, builder, desc)                                   \
    pp__build_##builder,
    PP_SCHED_LIST(PP__SCHED_BUILDER)
#undef PP__SCHED_BUILDER
};

/* Each row's shake_d column: the most devices at which its build ends with
   the iterated local search (pp__v_shake), 0 none. */
static const int pp__shake_d[PP_SCHED_COUNT] = {
#define PP__SCHED_SHAKE(id, name, place, chunks, any_chunks, split, recompute, copies, limit, published, steady, \
                        search_d, max_d, fb_pairs, shake_d, fixed, block, builder, desc)                         \
    shake_d,
    PP_SCHED_LIST(PP__SCHED_SHAKE)
#undef PP__SCHED_SHAKE
};

/* Each row's fixed column: the fixed schedules its search takes, or NULL. */
#define pp__none_fixed NULL
static const pp_sched_id *const pp__fixed_of[PP_SCHED_COUNT] = {
#define PP__SCHED_FIXED(id, name, place, chunks, any_chunks, split, recompute, copies, limit, published, steady, \
                        search_d, max_d, fb_pairs, shake_d, fixed, block, builder, desc)                                          \
    pp__##fixed##_fixed,
    PP_SCHED_LIST(PP__SCHED_FIXED)
#undef PP__SCHED_FIXED
};
#undef pp__none_fixed

/* The chunks a schedule accepts, from its row: v, or err saying what would be right. */
static int pp__resolve_chunks(const pp_sched_info *in, int chunks, char *err) {
    int v = chunks ? chunks : in->chunks;
    if (in->any_chunks) {
        if (v >= 2) return v;
        pp__err(err, "%s needs chunks >= 2 (chunks = 1 is plain 1f1b), got %d", in->name, v);
    } else if (v == in->chunks) {
        return v;
    } else if (in->placement == PP_PLACE_VSHAPE) {
        pp__err(err, "%s is a V-shape schedule and needs chunks = 2, got %d", in->name, v);
    } else if (in->chunks == 1) {
        pp__err(err, "%s places one stage per device and needs chunks = 1, got %d", in->name, v);
    } else {
        pp__err(err, "%s is built for chunks = %d only, got %d", in->name, in->chunks, v);
    }
    return -1;
}

/* The unknown-name message lists the table's names, as many as fit. */
static void pp__err_unknown(char *err, const char *name) {
    size_t len;
    int id;
    if (!err) return;
    pp__err(err, "unknown schedule '%.40s'; known:", name);
    for (id = 0; id < PP_SCHED_COUNT; id++) {
        len = strlen(err);
        if (len + strlen(pp__infos[id].name) + 3 >= PP_ERR_LEN) break;
        snprintf(err + len, PP_ERR_LEN - len, "%s %s", id ? "," : "", pp__infos[id].name);
    }
}

/* The memory limit schedule `in` is built under at d devices: the caller's
   mem_limit (0 = d, 1F1B's peak) where it takes one, its fixed limit, or
   0 (none). */
static double pp__limit_of(const pp_sched_info *in, double mem_limit, int d) {
    if (in->takes_limit) return mem_limit > 0 ? mem_limit : d;
    return in->adaptive ? in->fixed_limit * d : 0;
}

/* pp_config checked and resolved, once, into q: the one place that reads
   the caller's config for a build, and its one validation, before any
   work. Every field is checked against this table (LIMITS in the docs block
   says the same); a bad one gets PP_ERR_INVALID_ARG (PP_ERR_OVERFLOW where
   only its size is wrong) and a sentence that says what was wrong and what
   would be right. Then every default is applied (chunks, times, mem_limit,
   the allocator) and the shape worked out.

   field             range                                      why
   schedule          a row of PP_SCHED_LIST (pp_sched_find)     NULL = 1f1b
   devices d         1 .. 65536 (V-shape placement: >= 2)
   chunks v          0 = the row's chunks; else that, or any
                     v >= 2 where the row has any_chunks
   microbatches n    >= 1; 3 d v n <= INT_MAX/4                 pass indices are ints
                     (gpipe: n <= INT_MAX/64, its builder's      its F->B turn is 3n-2 cells
                     first check)
   d, v together     4 d v (3v + 4) <= INT_MAX/4                a block's cells are ints: S
                                                                stages up to 3v + 4 cells apart
   times, comm       pp__resolve_times: finite, f, b > 0, w, comm >= 0, each
                     <= PP_TIME_MAX; f = b = w = 0 is unit times
   stage_times[s]    the same, per stage (pp__stage_times)
   all the times     pp__check_work: total work <= PP_TIME_MAX, shortest F,
                     B >= 1e-8 x (1 + total work)                the clock's tolerance
   recompute_input   0, or 1e-6 .. 1 (pp__cfg_resolve)          a fraction of a chunk's activation
   mem_limit         0 = the default (d); else >= 1e-6 and finite; above the
                     largest useful limit, max(n, 3d), clamped to it: limits
                     above it build the same schedule (tests/test_limits.c
                     checks a grid), and the output says so
                     (pp_schedule.mem_limit_asked)
   no_reorder        any nonzero reads as 1
   Fields a schedule does not read (mem_limit where the row has no
   takes_limit, recompute_input where it has no recompute) are checked all
   the same and ignored. */
#define PP__MAX_DEVICES 65536

/* The most devices schedule in builds at, and what builds at more
   (alternative: fixed schedules of the same placement and memory). The
   searches whose work grows faster than their output take at most their
   row's max_d devices, where each finishes in about a minute of one core
   at the n that costs it most (make bench-limits): v-auto's block and grid
   searches grow about as d^2 at small n, zb-auto's (zb-1p, zb-2p) about as
   d^2 to d^3, interleaved-1f1b-m's block choice as d^2 log d whatever n is
   (about log2(d/16) + 3 candidates, each a reorder of its 8d^2 passes at
   2d microbatches: pp__interleaved_lowmem_block). */
static int pp__devices_most(const pp_sched_info *in, const char **alternative) {
    *alternative = "";
    if (!in->max_devices) return PP__MAX_DEVICES;
    if (in->placement == PP_PLACE_VSHAPE)
        *alternative = "v-zb (1F1B's memory), v-half (1/2 of it) or v-min (1/3 of it)";
    else if (in->placement == PP_PLACE_SEQUENTIAL)
        *alternative = "zb-h1 (1F1B's memory) or zb-h2 (twice 1F1B's memory)";
    else
        *alternative = "interleaved-1f1b-u (any n, more memory) or interleaved-1f1b (n a multiple of d)";
    return in->max_devices;
}

/* The most passes one reorder takes (the whole schedule when n <= 2d + 6,
   else 2d + 4 microbatches of it, or 2d + 5 where a block of two makes n
   a whole number of blocks more, pp__block_schedule). A reorder holds
   about 200 bytes of each pass and runs up to eleven variants, and a
   V-shape one costs more per pass as d grows: at 2^24 passes zb-h2 took
   10 s but v-half (d = 1024) 98 s and 1f1b-v 83 s, so 2^22 (docs/limits.md
   has the figures). */
#define PP__REORDER_MOST (1 << 22)
static long long pp__reorder_passes(const pp__req *q) {
    long long per = (long long)q->S * (q->info->split_backward ? 3 : 2), nr = q->n;
    if (!pp__small_n(q->d, q->n)) {
        /* a block of k microbatches is reordered at 2d+4 plus (n - 2d - 4)
           mod k (pp__block_schedule); the block is built only where that
           can decide the limit */
        pp__block_fn of = pp__blocks[q->info->id];
        pp_block *blk = NULL;
        nr = pp__reorder_n(q->d);
        if (of && per * (nr + 1) > PP__REORDER_MOST && of(q, &blk, NULL) == PP_OK && blk->microbatches > 1)
            nr += (q->n - nr) % blk->microbatches;
        pp_block_free(blk);
    }
    return per * nr;
}

static pp_status pp__req_resolve(const pp_config *cfg, pp__req *q, char *err) {
    const pp_sched_info *in;
    const char *name;
    int d, n, v, too_many;
    double cells;
    double useful;
    pp_status st;
    memset(q, 0, sizeof *q);
    in = pp_sched_find(cfg->schedule);
    if (!in) { pp__err_unknown(err, cfg->schedule); return PP_ERR_UNKNOWN_SCHEDULE; }
    name = in->name;
    d = cfg->devices;
    n = cfg->microbatches;
    if (d < 1) { pp__err(err, "%s needs devices >= 1, got %d", name, d); return PP_ERR_INVALID_ARG; }
    if (n < 1) { pp__err(err, "%s needs microbatches >= 1, got %d", name, n); return PP_ERR_INVALID_ARG; }
    if (d > PP__MAX_DEVICES) {
        pp__err(err, "%s: %d devices is more than the %d supported", name, d, PP__MAX_DEVICES);
        return PP_ERR_OVERFLOW;
    }
    {
        const char *alt;
        int most = pp__devices_most(in, &alt);
        if (d > most) {
            pp__err(err, "%s takes at most %d devices, got %d (its search grows faster than d; the limit keeps "
                         "it within about a minute): use devices <= %d, or a fixed schedule, %s", name, most, d,
                    most, alt);
            return PP_ERR_OVERFLOW;
        }
    }
    if (cfg->chunks < 0) { pp__err(err, "%s: chunks must be >= 0 (0 = default), got %d", name, cfg->chunks); return PP_ERR_INVALID_ARG; }
    st = pp__cfg_resolve(cfg, &q->c, err); /* recompute_input, times, allocator */
    if (st != PP_OK) return st;
    q->info = in;
    q->d = d;
    q->n = n;
    q->v = v = pp__resolve_chunks(in, cfg->chunks, err);
    if (v < 0) return PP_ERR_INVALID_ARG;
    if (in->placement == PP_PLACE_VSHAPE && d < 2) {
        pp__err(err, "%s needs devices >= 2, got %d", name, d);
        return PP_ERR_INVALID_ARG;
    }
    /* a block's cells: offsets of S stages, each up to 3v + 4 cells apart
       (interleaved-1f1b-u's F chain waits (3v-1)(d-1) cells at each wrap) */
    cells = 4.0 * d * v * (3.0 * v + 4); /* in double: no overflow for any int d, v */
    if (cells > INT_MAX / 4) {
        int most = 2;
        while (4LL * d * (most + 1) * (3LL * (most + 1) + 4) <= INT_MAX / 4) most++;
        pp__err(err, "%s: %d chunks on %d devices make a building block of about %.3g cells, more than an int "
                     "holds; at d=%d chunks can be at most %d", name, v, d, cells,
                d, most);
        return PP_ERR_OVERFLOW;
    }
    too_many = (long long)d * v * n * 3 > INT_MAX / 4; /* said below, once the times are known */
    if (!pp__finite(cfg->mem_limit) || cfg->mem_limit < 0 || (cfg->mem_limit > 0 && cfg->mem_limit < 1e-6)) {
        pp__err(err, "mem_limit must be a finite number of units, 0 (the default, d) or at least 1e-6; got %g",
                cfg->mem_limit);
        return PP_ERR_INVALID_ARG;
    }
    q->limit = pp__limit_of(in, cfg->mem_limit, d);
    if (in->takes_limit) {
        /* no device can hold more than n units; the searches' candidates
           (and so what they build) stop changing above 3d */
        useful = n > 3.0 * d ? (double)n : 3.0 * d;
        if (q->limit > useful) {
            q->limit_asked = q->limit;
            q->limit = useful;
        }
    }
    st = pp__req_shape(q, err);
    if (st == PP_OK && too_many) {
        /* the advice is a count these times also allow, so that it works */
        int most = pp__work_most(q->shape.stage_time, q->S, in->split_backward, q->c.times.comm);
        if (most > INT_MAX / 4 / 3 / (d * v)) most = INT_MAX / 4 / 3 / (d * v);
        if (most < 1) st = pp__check_work(q->shape.stage_time, q->S, 1, in->split_backward, q->c.times.comm, err);
        else {
            pp__err(err, "%s: %d devices x %d chunks x %d microbatches is too many passes (3 d v n must be at most %d); "
                         "use at most %d microbatches", name, d, v, n, INT_MAX / 4, most);
            st = PP_ERR_OVERFLOW;
        }
    } else if (st == PP_OK) st = pp__check_work(q->shape.stage_time, q->S, n, in->split_backward, q->c.times.comm, err);
    if (st == PP_OK && q->c.reorder && !in->published && pp__reorder_passes(q) > PP__REORDER_MOST) {
        /* n at most this is reordered whole within the limit (it is below 2d + 6 whenever the limit is hit) */
        long long most = PP__REORDER_MOST / ((long long)q->S * (in->split_backward ? 3 : 2));
        pp__err(err, "%s: reordering d=%d n=%d means %lld passes at once, more than the %d a reorder takes within "
                     "about a minute (n <= 2d + 6 is reordered whole, a larger n at 2d + 4 microbatches): use n <= "
                     "%lld, or no_reorder (--no-reorder)", name, d, n, pp__reorder_passes(q), PP__REORDER_MOST, most);
        st = PP_ERR_OVERFLOW;
    }
    if (st != PP_OK) pp__req_free(q);
    return st;
}

/* The memory caps of q's schedule (cap[d]), from its block (blk, repeated
   at n) where its row has one, else from the schedule s its builder
   returned: an adaptive schedule's limit; a published order's own peak
   (it is never moved); else the caps its reorder keeps (pp__reorder_caps).
   Every order pp__build returns for q fits them. */
/* The fewest microbatches whose repeat of b has every device's peak as
   at n, or n. On the grid, block k's passes lie in cells k T + [lo, hi),
   so at most c = (hi - lo + T - 1) / T + 1 blocks meet in any cell; with
   2c + 4 blocks, a stretch of T cells has every block it meets, and a
   larger n repeats that stretch's passes, which add F and free them
   again (net 0), in each device's order: the running sums there, and so
   the peaks, are those of the stretch (exactly, when every stage's
   memory is a multiple of 1/1024 below 1e3, so that every sum is exact;
   pp__build_caps checks). The last block keeps n's count of
   microbatches. */
static int pp__caps_n(const pp_block *b, int n) {
    int r, rows = b->stages * b->microbatches, lo = INT_MAX, hi = 0, T = b->interval, mb = b->microbatches;
    long long c, n1;
    if (T < 1) return n;
    for (r = 0; r < rows; r++) {
        int f = b->f[r], e = b->b[r] + pp__block_cells(b, b->split_backward ? PP_B : PP_BW);
        if (b->split_backward) { f = f < b->w[r] ? f : b->w[r]; e = e > b->w[r] + 1 ? e : b->w[r] + 1; }
        f = f < b->b[r] ? f : b->b[r];
        e = e > b->f[r] + 1 ? e : b->f[r] + 1;
        lo = lo < f ? lo : f;
        hi = hi > e ? hi : e;
    }
    c = ((long long)hi - lo + T - 1) / T + 1;
    n1 = (2 * c + 4) * mb + n % mb;
    return n1 < n ? (int)n1 : n;
}

static pp_status pp__build_caps(const pp__req *q, const pp_block *blk, const pp_schedule *s, double *cap, char *err) {
    pp_schedule *g = NULL;
    pp_status st = PP_OK;
    int i;
    if (q->info->adaptive) {
        for (i = 0; i < q->d; i++) cap[i] = q->limit;
        return PP_OK;
    }
    if (blk) {
        /* the block's peaks, at fewer microbatches where they are n's */
        int n1 = pp__caps_n(blk, q->n);
        st = pp__repeat(blk, n1, NULL, &q->c, q->info->recompute, &g, err);
        for (i = 0; st == PP_OK && n1 < q->n && i < g->stages; i++)
            if (!(g->stage_memory[i] > -1e3 && g->stage_memory[i] < 1e3) ||
                g->stage_memory[i] * 1024 != (double)(long long)(g->stage_memory[i] * 1024))
                break;
        if (st == PP_OK && n1 < q->n && i < g->stages) {
            pp_sched_free(g);
            g = NULL;
            st = pp__repeat(blk, q->n, NULL, &q->c, q->info->recompute, &g, err);
        }
        if (st == PP_OK) s = g;
    }
    if (st == PP_OK && q->info->published) memcpy(cap, s->peak_memory, (size_t)q->d * sizeof(double));
    else if (st == PP_OK) pp__reorder_caps(s, 0, cap);
    pp_sched_free(g);
    return st;
}

/* Builds q's schedule: its block (where its row has one), its builder,
   the local search, then validation. cap[d] (may be NULL) gets its memory
   caps (pp__build_caps); with fit (may be NULL) a schedule that does not
   fit (pp__fit) is not built: *out = NULL, PP_OK. A row with a block has
   its caps from the block, checked before its builder runs. */
static pp_status pp__build_fit(const pp__req *q, const pp__fit *fit, double *cap, pp_schedule **out, char *err) {
    const pp_sched_info *in = q->info;
    pp__block_fn block = pp__blocks[in->id];
    pp_block *blk = NULL;
    pp_schedule *s = NULL;
    pp_status st;
    int local, i;
    double *caps = NULL;
    *out = NULL;
    st = block ? block(q, &blk, err) : pp__builders[in->id](q, NULL, &s, err);
    if (st != PP_OK) return st;
    /* the published schedules are defined by their order, not moved */
    local = q->c.reorder && !in->published;
    if (fit || cap || local) {
        caps = (double *)pp__malloc(&q->c.al, pp__size((size_t)q->d, sizeof(double)));
        st = caps ? pp__build_caps(q, blk, s, caps, err) : PP_ERR_OUT_OF_MEMORY;
        if (!caps) pp__err(err, "out of memory building %s", in->name);
        double top = 0;
        for (i = 0; st == PP_OK && fit && i < q->d; i++) {
            if (fit->cap && caps[i] > fit->cap[i] + 1e-9) break;
            top = pp__max(top, caps[i]);
        }
        if (st == PP_OK && fit && i == q->d && fit->s &&
            (fit->ties ? !pp__may_beat(fit->s, fit->lb0, top)
                       : pp__max(fit->lb0, pp__vbound(fit->s, top)) >= fit->mk - PP__EPS * (1 + fit->mk)))
            i = -1; /* cannot be shorter (with ties: cannot win, pp__may_beat) */
        if (st != PP_OK || (fit && i < q->d)) {
            pp_block_free(blk); pp_sched_free(s); pp__mfree(&q->c.al, caps);
            return st;
        }
    }
    if (block) {
        /* a fixed build's long steps (a reorder of up to PP__REORDER_MOST
           passes, the local search, the guarantee's orders) ask between them */
        st = pp__tick(&q->c, "reordering", 0, err);
        if (st == PP_OK) st = pp__builders[in->id](q, blk, &s, err);
        pp_block_free(blk);
        if (st != PP_OK) { pp__mfree(&q->c.al, caps); return st; }
    }
    if (st == PP_OK && local) st = pp__tick(&q->c, "local search", 0, err);
    if (st == PP_OK && local) st = pp__local_search(s, caps, err);
    if (st == PP_OK) {
        char verr[PP_ERR_LEN];
        pp_status vst = pp_sched_validate(s, verr);
        if (vst == PP_ERR_OUT_OF_MEMORY) {
            pp__err(err, "%s", verr);
            st = vst;
        } else if (vst != PP_OK) {
            pp__err(err, "internal error, %s built an invalid schedule: %s", in->name, verr);
            st = PP_ERR_INVALID_SCHEDULE;
        }
    }
    if (st == PP_OK && cap) memcpy(cap, caps, (size_t)q->d * sizeof(double));
    pp__mfree(&q->c.al, caps);
    if (st != PP_OK) { pp_sched_free(s); return st; }
    strncpy(s->name, in->name, sizeof s->name - 1);
    s->mem_limit = q->limit;
    s->mem_limit_asked = q->limit_asked;
    *out = s;
    return PP_OK;
}

/* The request for schedule id at q's devices, microbatches and config
   (unit = 1: at unit times instead, comm 0, no stage_times), under memory
   limit `limit` (ignored by the fixed schedules). */
static pp_status pp__req_like(const pp__req *q, pp_sched_id id, int unit, double limit, pp__req *r, char *err) {
    pp_status st;
    memset(r, 0, sizeof *r);
    r->c = q->c;
    if (unit) {
        r->c.times.f = r->c.times.b = r->c.times.w = 1;
        r->c.times.comm = 0;
        r->c.stage_times = NULL;
    }
    r->info = &pp__infos[id];
    r->vshare = q->vshare;
    r->d = q->d;
    r->n = q->n;
    r->v = r->info->any_chunks ? q->v : r->info->chunks;
    r->limit = limit;
    if (r->info->placement == PP_PLACE_VSHAPE && r->d < 2) { pp__err(err, "%s needs devices >= 2", r->info->name); return PP_ERR_INVALID_ARG; }
    st = pp__req_shape(r, err);
    if (st != PP_OK) return st;
    st = pp__check_work(r->shape.stage_time, r->S, r->n, r->info->split_backward, r->c.times.comm, err);
    if (st != PP_OK) pp__req_free(r);
    return st;
}

/* q's build of schedule id (see pp__fit: *out NULL when fit says it
   cannot be built) */
static pp_status pp__build_id(const pp__req *q, pp_sched_id id, const pp__fit *fit, pp_schedule **out, char *err) {
    pp__req r;
    pp_status st;
    *out = NULL;
    st = pp__req_like(q, id, 0, pp__limit_of(&pp__infos[id], 0, q->d), &r, err);
    if (st != PP_OK) return st;
    st = pp__build_fit(&r, fit, NULL, out, err);
    pp__req_free(&r);
    return st;
}

/* 1 when the adaptive search that builds `in` already took schedule y, as
   built at the caller's times, wherever its peak fits the limit (which its
   caps fitting the limit implies), and the local search after it only
   shortens: the guarantee need not build it again at those times. */
static int pp__search_built(const pp_sched_info *in, pp_sched_id y) {
    const pp_sched_id *f = pp__fixed_of[in->id];
    int k;
    for (k = 0; f && k < PP__AUTO_FIXED; k++) if (f[k] == y) return 1;
    return 0;
}

/* The guarantee (DESIGN.md): s, built for q, takes the shortest of its own
   order and the candidates below, each timed again at q's times (the order
   of a schedule without B/W split runs in a split one with each W right
   after its B):
   (a) its own order built at unit times;
   (b) the orders of every fixed (not adaptive) schedule of its family (same
       placement, chunks, recompute and copies; split, or unsplit when s is)
       whose memory caps (pp__build_caps) fit s's caps, device by device,
       built at q's times and (unless published) at unit times.
   Candidates of (b) must also fit s's caps as timed. Published orders and
   no_reorder builds keep their order. cap: s's caps (pp__build_caps). */
static pp_status pp__guarantee(const pp__req *q, const double *cap, pp_schedule *s, char *err) {
    const pp_sched_info *in = q->info;
    int unit, P = s->num_passes, id, k, d = q->d;
    double best_mk = s->makespan, own_mk = s->makespan;
    pp_allocator *al = &s->allocator;
    pp_pass *best;
    pp_status st = PP_OK;
    pp__fit fit;
    if (in->published || !q->c.reorder || !q->c.guarantee) return PP_OK;
    memset(&fit, 0, sizeof fit);
    fit.s = s;
    fit.lb0 = pp__order_bound(s);
    if (pp__at_bound(s->makespan, fit.lb0)) return PP_OK; /* nothing is shorter */
    unit = !q->c.stage_times && q->c.times.f == 1 && q->c.times.b == 1 && q->c.times.w == 1 && q->c.times.comm == 0;
    /* best: the shortest order so far (s's own first); s->passes then
       holds each candidate in turn */
    best = (pp_pass *)pp__malloc(al, pp__size((size_t)P, sizeof(pp_pass)));
    if (!best) {
        pp__err(err, "out of memory building %s", in->name);
        return PP_ERR_OUT_OF_MEMORY;
    }
    memcpy(best, s->passes, (size_t)P * sizeof(pp_pass));
    for (id = -1; id < PP_SCHED_COUNT && st == PP_OK; id++) {
        /* id -1: s's own order at unit times (a); then each schedule of (b) at q's times and at unit times */
        const pp_sched_info *y = &pp__infos[id < 0 ? (int)in->id : id];
        int pass;
        if (id >= 0 && (id == (int)in->id || y->adaptive || y->placement != in->placement ||
                        y->recompute != in->recompute || y->copies != in->copies ||
                        (y->split_backward && !in->split_backward) || (y->any_chunks ? q->v : y->chunks) != q->v))
            continue;
        for (pass = id < 0 ? 1 : 0; pass < 2 && st == PP_OK; pass++) {
            pp__req r;
            pp_schedule *c = NULL;
            char cerr[PP_ERR_LEN];
            if (pass == 1 && (unit || y->published)) break; /* the same order as pass 0 */
            if (pass == 0 && id >= 0 && pp__search_built(in, y->id)) continue;
            st = pp__tick(&q->c, "the orders of its family", (id + 1.0) / (PP_SCHED_COUNT + 1), err);
            if (st != PP_OK) break;
            st = pp__req_like(q, y->id, pass, id < 0 ? q->limit : pp__limit_of(y, 0, d), &r, cerr);
            if (st == PP_OK) {
                fit.cap = id < 0 ? NULL : cap;
                fit.mk = best_mk;
                st = pp__build_fit(&r, &fit, NULL, &c, cerr);
                pp__req_free(&r);
            }
            if (st != PP_OK || !c) {
                /* a candidate that cannot be built here (interleaved-1f1b at n % d != 0, dualpipe-v at n < 2d) */
                if (st == PP_ERR_OUT_OF_MEMORY) pp__err(err, "%s", cerr);
                else st = PP_OK;
                pp_sched_free(c);
                continue;
            }
            /* c's order in s's layout (BW -> B, W), timed at q's times */
            for (k = 0; k < d; k++) {
                int i, w = s->device_start[k];
                pp_pass *o = s->passes;
                for (i = c->device_start[k]; i < c->device_start[k + 1]; i++) {
                    o[w] = c->passes[i];
                    if (o[w].kind == PP_BW && s->split_backward) {
                        o[w].kind = PP_B;
                        o[++w] = c->passes[i];
                        o[w].kind = PP_W;
                    }
                    w++;
                }
                PP_ASSERT(w == s->device_start[k + 1]);
            }
            pp_sched_free(c);
            st = pp__squeeze(s, NULL, err);
            if (st == PP_OK) {
                pp__metrics(s);
                for (k = 0; id >= 0 && k < d; k++) if (s->peak_memory[k] > cap[k] + 1e-9) break;
                if ((id < 0 || k == d) && s->makespan < best_mk - PP__EPS * (1 + best_mk)) {
                    best_mk = s->makespan;
                    memcpy(best, s->passes, (size_t)P * sizeof(pp_pass));
                }
            }
        }
    }
    memcpy(s->passes, best, (size_t)P * sizeof(pp_pass));
    pp__metrics(s);
    pp__mfree(al, best);
    /* an adaptive schedule where another order won: the local search again,
       on that order, within mem_limit. Not a fixed one: a schedule whose
       family holds it compares with the orders above, not with what a
       further search finds from them (fitting stays transitive) */
    if (st == PP_OK && in->adaptive && best_mk < own_mk - PP__EPS * (1 + own_mk)) st = pp__local_search(s, cap, err);
    return st;
}

/* q's schedule, all steps: the build (pp__build_fit; with fit, *out NULL
   and PP_OK where it does not fit), the guarantee, then at the row's
   shake_d (n <= 2d) the iterated local search (pp__v_shake), from the
   order everything above chose, so it can only shorten it: an adaptive
   row within its limit, a fixed one within its caps. An
   adaptive row then also takes the searched build of each fixed schedule
   of its search that the search reaches too, where its caps fit and it is
   shorter: the guarantee compares with those schedules' orders built
   without the search, and the search from two starts finds different
   orders. Where such a rival reaches its iterated local search with the
   row's own starting order and caps (often: the row took that schedule),
   its search is not run again: it would end where the row's did, so it
   could not be shorter (pp__shaken_same). */
static int pp__shaken_same(const pp__req *q, const pp_schedule *s, const double *cap, double *tmp) {
    int i;
    const pp_pass *a = s->passes, *b = q->shaken;
    if (!b || q->shaken_passes != s->num_passes) return 0;
    pp__shake_caps(s, q->info->adaptive ? q->limit : 0, cap, tmp);
    for (i = 0; i < s->devices; i++) if (tmp[i] != q->shaken_cap[i]) return 0;
    for (i = 0; i < s->num_passes; i++)
        if (a[i].device != b[i].device || a[i].stage != b[i].stage || a[i].microbatch != b[i].microbatch ||
            a[i].kind != b[i].kind || a[i].start != b[i].start || a[i].end != b[i].end)
            return 0;
    return 1;
}

static pp_status pp__build_req(const pp__req *q, const pp__fit *fit, pp_schedule **out, char *err) {
    const pp_sched_info *in = q->info;
    const pp_sched_id *f = pp__fixed_of[in->id];
    int shake = q->c.reorder && q->d <= pp__shake_d[in->id] && q->n <= 2 * q->d, k, i;
    double *cap = (double *)pp__malloc(&q->c.al, pp__size((size_t)q->d, 2u * sizeof(double)));
    pp_pass *start = NULL; /* the order the iterated local search starts from, where rivals follow */
    pp_status st = PP_OK;
    *out = NULL;
    if (!cap) { pp__err(err, "out of memory building %s", in->name); return PP_ERR_OUT_OF_MEMORY; }
    st = pp__build_fit(q, fit, cap, out, err);
    if (st == PP_OK && *out) st = pp__guarantee(q, cap, *out, err);
    if (st == PP_OK && *out && shake && in->adaptive && f) {
        start = (pp_pass *)pp__malloc(&q->c.al, pp__size((size_t)(*out)->num_passes, sizeof *start));
        if (!start) { pp__err(err, "out of memory building %s", in->name); st = PP_ERR_OUT_OF_MEMORY; }
        else {
            memcpy(start, (*out)->passes, (size_t)(*out)->num_passes * sizeof *start);
            pp__shake_caps(*out, q->limit, cap, cap + q->d);
        }
    }
    if (st == PP_OK && *out && shake && !pp__shaken_same(q, *out, cap, cap + q->d))
        st = pp__v_shake(*out, in->adaptive ? q->limit : 0, cap, err);
    for (k = 0; st == PP_OK && *out && shake && in->adaptive && f && k < PP__AUTO_FIXED; k++) {
        pp_schedule *s = *out, *c = NULL;
        pp__req r;
        pp__fit rf;
        char cerr[PP_ERR_LEN];
        if (q->d > pp__shake_d[f[k]]) continue;
        memset(&rf, 0, sizeof rf);
        rf.cap = cap;
        st = pp__req_like(q, f[k], 0, pp__limit_of(&pp__infos[f[k]], 0, q->d), &r, cerr);
        if (st == PP_OK) {
            r.shaken = start; r.shaken_cap = cap + q->d; r.shaken_passes = s->num_passes;
            st = pp__build_req(&r, &rf, &c, cerr);
            pp__req_free(&r);
        }
        if (st != PP_OK || !c) { /* one that cannot be built here, or whose caps do not fit */
            if (st == PP_ERR_OUT_OF_MEMORY) pp__err(err, "%s", cerr);
            else st = PP_OK;
            pp_sched_free(c);
            continue;
        }
        for (i = 0; i < q->d && c->num_passes == s->num_passes; i++)
            if (c->device_start[i + 1] != s->device_start[i + 1] || c->peak_memory[i] > cap[i] + 1e-9) break;
        if (i == q->d && c->makespan < s->makespan - PP__EPS * (1 + s->makespan)) {
            memcpy(s->passes, c->passes, (size_t)s->num_passes * sizeof *s->passes);
            pp__metrics(s);
        }
        pp_sched_free(c);
    }
    if (st != PP_OK) { pp_sched_free(*out); *out = NULL; }
    pp__mfree(&q->c.al, cap);
    pp__mfree(&q->c.al, start);
    return st;
}

PP__DEF pp_status pp_sched_build(const pp_config *cfg, pp_schedule **out, char *err) {
    pp__req q;
    pp__vshare sh;
    pp_status st;
    if (err) err[0] = 0;
    if (!out) { pp__err(err, "pp_sched_build: out must not be NULL"); return PP_ERR_INVALID_ARG; }
    *out = NULL;
    if (!cfg) { pp__err(err, "pp_sched_build: cfg must not be NULL"); return PP_ERR_INVALID_ARG; }
    st = pp__req_resolve(cfg, &q, err);
    if (st != PP_OK) return st;
    if (q.c.fb_overlap && !q.info->fb_pairs) {
        pp__err(err, "fb_overlap pairs the F and B of dualpipe and dualpipe-v; %s has no F&B pairs: use 0",
                q.info->name);
        pp__req_free(&q);
        return PP_ERR_INVALID_ARG;
    }
    pp__vshare_init(&sh, &q.c.al);
    q.vshare = &sh;
    st = pp__build_req(&q, NULL, out, err);
    if (st == PP_OK && err) err[0] = 0; /* a candidate or a reorder step that found no way may have written there */
    pp__vshare_free(&sh, &q.c.al);
    pp__req_free(&q);
    return st;
}

/* ---- bubble growth (Appendix E.1) --------------------------------------- */

/* O(n) or O(p) (Appendix E.1), measured: the same configuration is built
   at n1 = max(3d, n) and n2 = 2 n1 microbatches (rounded up to a multiple
   of d) and the idle time compared. The bubble grows with n when the idle
   time per device rises by more than 1% of one microbatch's per-device
   work for each added microbatch. */
PP__DEF pp_status pp_sched_bubble_growth(const pp_config *cfg, int *grows, char *err) {
    pp_config c;
    double idle[2] = {0, 0}, work = 0;
    int k, n[2], d;
    if (!cfg || !grows) { pp__err(err, "pp_sched_bubble_growth: cfg and grows must not be NULL"); return PP_ERR_INVALID_ARG; }
    *grows = -1;
    d = cfg->devices;
    if (d < 1 || cfg->microbatches < 1) { pp__err(err, "pp_sched_bubble_growth: needs devices and microbatches >= 1"); return PP_ERR_INVALID_ARG; }
    n[0] = 3 * d;
    n[1] = 6 * d;
    c = *cfg;
    for (k = 0; k < 2; k++) {
        pp_schedule *s = NULL;
        pp_status st;
        double busy = 0;
        int i;
        c.microbatches = n[k];
        st = pp_sched_build(&c, &s, err);
        if (st != PP_OK) return st;
        for (i = 0; i < s->num_passes; i++) busy += pp__dur(s, &s->passes[i]);
        idle[k] = (s->devices * s->makespan - busy) / s->devices;
        work = busy / ((double)s->devices * n[k]);
        pp_sched_free(s);
    }
    *grows = (idle[1] - idle[0]) / (n[1] - n[0]) > 0.01 * work;
    return PP_OK;
}

/* Appendix E.1's condition for V-Half's bubble to stay O(p). */
PP__DEF int pp_vhalf_o_p(pp_times t) {
    if (t.f == 0 && t.b == 0 && t.w == 0) return 1;
    return t.w + 2 * t.b >= 2 * t.f && t.w + 2 * t.f >= 2 * t.b;
}

/* ---- printers ----------------------------------------------------------- */
#ifndef PP_SCHED_NO_STDIO

static long pp__round(double x) { return (long)(x + 0.5); }

PP__DEF void pp_sched_print_ascii(FILE *f, const pp_schedule *s, int color) {
    double q = 0, mk;
    long cols, c;
    int i, dev, digits = 1, cw, k;
    char err[PP_ERR_LEN];
    if (!f) return;
    if (pp__sched_shape(s, "pp_sched_print_ascii", 1, err) != PP_OK) {
        fprintf(f, "%s\n", err);
        return;
    }
    for (i = 10; i <= s->microbatches - 1 && digits < 9; i *= 10) digits++;
    cw = 1 + digits; /* "F12" */
    for (i = 0; i < s->stages * 4; i++) {
        double t = s->stage_time[i];
        int kind = i % 4;
        if (s->on_grid) { t = kind == PP_BW ? 2 : 1; }
        if ((kind == PP_BW) == (s->split_backward == 0) || kind == PP_F)
            if (t > 0 && (q == 0 || t < q)) q = t;
    }
    mk = s->makespan;
    if (q <= 0) q = 1;
    if (mk / q > 400) q = mk / 400;
    cols = (long)(mk / q + 0.5);
    fprintf(f, "%s: d=%d v=%d stages=%d n=%d, times F=%g B=%g W=%g comm=%g, one column = %g\n", s->name[0] ? s->name : "schedule",
            s->devices, s->chunks, s->stages, s->microbatches, s->times.f, s->times.b, s->times.w, s->times.comm, q);
    for (dev = 0; dev < s->devices; dev++) {
        long at = 0;
        fprintf(f, "device %*d |", s->devices > 10 ? 2 : 1, dev);
        for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
            const pp_pass *p = &s->passes[i];
            long c0 = pp__round(p->start / q), c1 = pp__round(p->end / q), width;
            int chunk = p->stage / s->devices, len;
            char label[16];
            char letter = p->kind == PP_F ? 'F' : p->kind == PP_W ? 'W' : 'B';
            if (c0 < at) c0 = at;
            if (c1 <= c0) c1 = c0 + 1;
            for (c = at; c < c0; c++) fprintf(f, "%.*s", cw + 1, "..........................");
            if (chunk % 2 == 1) letter = (char)(letter - 'A' + 'a');
            len = snprintf(label, sizeof label, "%c%d", letter, p->microbatch);
            width = (c1 - c0) * (cw + 1) - 1;
            if (color) {
                static const char *bg[4] = {"44", "42", "43", "46"}, *bright[4] = {"104", "102", "103", "106"};
                fprintf(f, "\x1b[%s;%sm", p->kind == PP_F ? "97" : "30", chunk % 2 ? bright[p->kind] : bg[p->kind]);
            }
            fprintf(f, "%s", label);
            for (k = len; k < width; k++) fputc(' ', f);
            if (color) fprintf(f, "\x1b[0m");
            fputc(' ', f);
            at = c1;
        }
        for (c = at; c < cols; c++) fprintf(f, "%.*s", cw + 1, "..........................");
        fprintf(f, "|\n");
    }
    fprintf(f, "%s; lower case = %s; . = idle\n",
            s->split_backward ? "F forward, B backward for input, W backward for weights"
                              : "F forward, B backward (input and weights together)",
            s->copies == 2 ? "the second model copy (stages d..2d-1, microbatches n/2..n-1)" : "odd chunk");
    {
        pp_bounds lb;
        pp_sched_bounds(s, &lb);
        fprintf(f, "makespan %g, bubble rate %.2f%%, lower bound %g (%s)\n", s->makespan, 100.0 * s->bubble_rate,
                lb.best,
                lb.best == lb.appendix ? (s->placement == PP_PLACE_VSHAPE ? "Appendix E.2" : "Appendix E.2, generalised")
                : lb.best == lb.work   ? "busiest device's work"
                                       : "one microbatch's path");
    }
    if (s->mem_limit > 0 && s->mem_limit_asked > 0)
        fprintf(f, "memory limit %g units (asked %g, clamped to the largest useful limit, max(n, 3d): a higher "
                   "limit builds the same schedule)\n", s->mem_limit, s->mem_limit_asked);
    else if (s->mem_limit > 0) fprintf(f, "memory limit %g units\n", s->mem_limit);
    if (s->bubble_growth >= 0) fprintf(f, "bubble grows with %s\n", s->bubble_growth ? "n: O(n)" : "d only: O(p)");
    fprintf(f, "peak memory per device (units: one microbatch's activation for 1/d of the model):");
    for (dev = 0; dev < s->devices; dev++) fprintf(f, " %g", s->peak_memory[dev]);
    fputc('\n', f);
    if (s->devices > 0 && s->peak_bound[0] >= 0) {
        fprintf(f, "Eq. 1 bound from the building block (T=%d):", s->interval);
        for (dev = 0; dev < s->devices; dev++) fprintf(f, " %g", s->peak_bound[dev]);
        fputc('\n', f);
    }
}

static void pp__json_str(FILE *f, const char *x) {
    fputc('"', f);
    for (; *x; x++) {
        unsigned char ch = (unsigned char)*x;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

PP__DEF void pp_sched_print_json(FILE *f, const pp_schedule *s) {
    int i;
    if (!f || pp__sched_shape(s, "pp_sched_print_json", 0, NULL) != PP_OK) return;
    fprintf(f, "{\"schedule\": ");
    pp__json_str(f, s->name);
    fprintf(f, ", \"devices\": %d, \"chunks\": %d, \"stages\": %d, \"microbatches\": %d,\n", s->devices, s->chunks,
            s->stages, s->microbatches);
    if (s->copies == 2) /* only then, so one-copy output is unchanged */
        fprintf(f, " \"copies\": 2, \"routes\": [{\"stages\": [0, %d], \"microbatches\": [0, %d]}, "
                   "{\"stages\": [%d, %d], \"microbatches\": [%d, %d]}],\n",
                s->stages / 2 - 1, s->microbatches / 2 - 1, s->stages / 2, s->stages - 1, s->microbatches / 2,
                s->microbatches - 1);
    fprintf(f, " \"times\": {\"F\": %.12g, \"B\": %.12g, \"W\": %.12g, \"comm\": %.12g},\n", s->times.f, s->times.b,
            s->times.w, s->times.comm);
    fprintf(f, " \"makespan\": %.12g, \"bubble_rate\": %.12g,\n", s->makespan, s->bubble_rate);
    {
        pp_bounds lb;
        pp_sched_bounds(s, &lb);
        if (s->mem_limit > 0) fprintf(f, " \"mem_limit\": %.12g,", s->mem_limit);
        else fprintf(f, " \"mem_limit\": null,");
        if (s->mem_limit_asked > 0) fprintf(f, " \"mem_limit_asked\": %.12g, \"mem_limit_clamped\": true,", s->mem_limit_asked);
        fprintf(f, " \"lower_bound\": %.12g, \"bubble_growth\": %s,\n", lb.best,
                s->bubble_growth < 0 ? "null" : s->bubble_growth ? "\"O(n)\"" : "\"O(p)\"");
    }
    fprintf(f, " \"peak_memory\": [");
    for (i = 0; i < s->devices; i++) fprintf(f, "%s%.12g", i ? ", " : "", s->peak_memory[i]);
    fprintf(f, "],\n \"valid\": %s,\n \"passes\": [\n", pp_sched_validate(s, NULL) == PP_OK ? "true" : "false");
    for (i = 0; i < s->num_passes; i++) {
        const pp_pass *p = &s->passes[i];
        fprintf(f, "  {\"device\": %d, \"stage\": %d, \"microbatch\": %d, \"kind\": \"%s\", \"start\": %.12g, \"end\": %.12g}%s\n",
                p->device, p->stage, p->microbatch, pp_kind_name(p->kind), p->start, p->end,
                i + 1 < s->num_passes ? "," : "");
    }
    fprintf(f, " ]}\n");
}
/* device 0 (2 slots): F0.0#0 {S>1 a0.0} F0.1#1 {S>1 a0.1 R<1 g1.0} BW0.0#0 ...
   F/B/W/BW stage.microbatch#slot; S>peer / R<peer a|g stage.microbatch
   (a = activation, g = gradient, of the producing stage); { } = one group. */
PP__DEF void pp_program_print(FILE *f, const pp_program *p) {
    int dev, i;
    char err[PP_ERR_LEN];
    if (!f) return;
    if (pp__program_shape(p, "pp_program_print", err) != PP_OK) {
        fprintf(f, "%s\n", err);
        return;
    }
    for (dev = 0; dev < p->devices; dev++) {
        int open = 0, prev_group = -1;
        fprintf(f, "device %d", dev);
        if (p->slots) fprintf(f, " (%d slots)", p->slots[dev]);
        fputc(':', f);
        for (i = p->device_start[dev]; i < p->device_start[dev + 1]; i++) {
            const pp_op *op = &p->ops[i];
            if (open && (!pp__is_comm(op->type) || op->group < 0 || op->group != prev_group)) {
                fputc('}', f);
                open = 0;
            }
            if (op->type == PP_OP_COMPUTE) {
                fprintf(f, " %s%d.%d", pp_kind_name(op->kind), op->stage, op->microbatch);
                if (op->slot >= 0) fprintf(f, "#%d", op->slot);
                continue;
            }
            if (op->type == PP_OP_HANDOFF) {
                fprintf(f, " H%c%d.%d", op->what == PP_ACTIVATION ? 'a' : 'g', op->stage, op->microbatch);
                continue;
            }
            if (!open) {
                fputs(" {", f);
                open = 1;
            } else {
                fputc(' ', f);
            }
            prev_group = op->group;
            fprintf(f, "%s%d %c%d.%d", op->type == PP_OP_SEND ? "S>" : "R<", op->peer,
                    op->what == PP_ACTIVATION ? 'a' : 'g', op->stage, op->microbatch);
            if (op->group < 0) { fputc('}', f); open = 0; }
        }
        if (open) fputc('}', f);
        fputc('\n', f);
    }
}
#endif /* PP_SCHED_NO_STDIO */

/* PP_SCHED_IMPLEMENTATION_DONE */
#endif /* PP__SCHED_IMPLEMENTATION_INCLUDED */
#endif /* PP_SCHED_IMPLEMENTATION */

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
