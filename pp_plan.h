/* pp_plan.h - v0.6.0 - which pipeline layout, microbatch size and schedule fit a model on a cluster - MIT licence (see end of file)

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
       1f1b pp=1 tp=1 dp=32 mbs=2: 4.00 s per step, 75.3 GiB

API (one line each; status-returning calls fill err[PP_ERR_LEN] on failure)
   pp_plan(req, out, cap, &count, err) every pp x tp x cp x ep x dp x mbs x schedule x v: fit, step time,
                                       ranked (out NULL, cap 0: checks the request, counts, builds nothing)
   pp_model_stats(m, &counts, err)     check a model; its parameters, active parameters, FLOPs per token
   pp_model_preset(name, &m, err), pp_model_preset_name(i)   published model shapes (PRESETS)
   pp_gpu_preset(name, &g, err), pp_gpu_preset_name(i)       GPUs; pp_gpu_defaults(&g) fills the defaults
   pp_recipe_name(i), pp_recompute_name(i)  names of pp_recipe, pp_recompute ("megatron", "full", ...)
   pp_partition(cost, L, S, first, &max, alloc, err)  exact min-max contiguous split of L items into S stages
   pp_partition_v(cost, L, d, first, &max, alloc, err) exact V split: least slowest DEVICE (stages k, 2d-1-k)
   pp_layer_activation_bytes(m, mbs, tp, recompute)  bytes one layer keeps per microbatch
   pp_layer_params(m)                  parameters of the first layer (12h^2 + 13h for GPT)

CONFIGURATION MACROS
   PP_PLAN_IMPLEMENTATION   emit the implementation in this translation unit
   PP_PLAN_STATIC           make every function static
   PP_PLAN_API              decoration of public functions (default: PP_SCHED_API)

ERRORS, MEMORY, THREADS
   As pp_sched.h: every fallible call returns pp_status and fills the
   caller's err with what was wrong and what would be right; the
   planner allocates through req.allocator (zero = malloc/free), its builds
   included; no globals: threads may plan at once; never prints, never exits.

PLANNING (pp_partition, pp_partition_v, pp_model_stats, pp_plan)
   model       pp_model describes one transformer (zero = default); every
               count is derived per layer, a dense and a MoE kind:
               attention  Q h x a*d, K and V h x k*d each (GQA: k = kv_heads
                          < a heads, MQA: k = 1; Ainslie et al. 2023), out
                          a*d x h; d = head_dim (h/a). MLA (DeepSeek-V2,
                          Sec. 2.1): h x q_lora, q_lora x a(d + r), h x
                          (kv_lora + r), kv_lora x 2a*d, out a*d x h, r =
                          rope_head_dim. Biases (GPT): Q, K, V widths + h.
               MLP        two h x ffn matrices, or three when gated (SwiGLU:
                          gate, up, down); biases (GPT) ffn (2 ffn) + h.
               MoE        the first dense_layers layers dense, the rest:
                          experts x an expert MLP of expert_ffn, a router h x
                          experts, shared_experts always-on experts; active
                          = top_k + shared experts.
               norms      LayerNorm 2h each (weight, bias), RMSNorm h; two
                          per layer, one final. So a GPT layer is 12h^2 +
                          13h (Narayanan et al. 2021).
               embedding  V x h (+ s x h learned positions without rope);
                          the LM head V x h more when untied.
   FLOPs       forward per token and layer: 2 per matmul parameter used
               (top_k + shared experts and the router for MoE) + 2 s a (dq +
               d) for QK^T and AV over the whole sequence, dq = d (+ r for
               MLA); a GPT layer 24h^2 + 4sh (Narayanan et al. 2021, Eq. 2;
               causal masking not halved, as there). Head 2hV. Training =
               3 x forward: pp_model_counts.flops_per_token; MFU = global
               batch x s x that / (step x N x gpu.peak_flops) (their Eq. 3
               for a GPT model).
   items       pp_plan splits L + 2 items: the embedding, the L layers, the
               LM head, so 78 layers + 2 fill pp = 40 V stages exactly, like
               the paper's "one layer less on the first and last stage".
   partition   pp_partition: f[k][j] = min over i of max(f[k-1][i], sum of
               items [i, j)), every stage non-empty, exact (tests compare
               with brute force); the first minimising i is found by binary
               searches (f rises with i, the sum falls): O(S L log L), the
               same split as the O(S L^2) scan (tested). pp_partition_v:
               device k holds stages k and 2d-1-k; g_k(a, b) = least slowest
               device for the items [a, b) left to devices k..d-1; O(d L^4),
               exact, refused above 4e8 steps. pp_plan uses pp_partition
               over all S stages for every placement, then, at the same
               slowest stage, gives the first stages the fewest items
               (pp__plan_split_back: they hold the most microbatches); per-stage
               times then drive the scheduler (stage_times). dualpipe: one split into
               pp stages, used by both copies.
   activation  bytes per layer per microbatch, 16-bit (Korthikanti et al.
               2022, "Reducing Activation Recomputation in Large Transformer
               Models", Sec. 4.1): per token 10h that tensor parallelism
               without SP leaves whole (two norm inputs 4h, attention and
               MLP inputs 2h each, two dropout masks) + 2 x (Q + K + V +
               attention output widths) + the MLP's 2 x 2 ffn (GELU input
               and output) = 34h for GPT; + 5as without flash attention
               (default: flash, the paper's setting, Sec. 4.4). GQA narrows
               K and V; a gated MLP keeps gate, up and their product (3 x 2
               ffn; the SiLU is recomputed); MLA keeps its latents too; a
               MoE layer keeps for each of top_k experts the token's copy
               (2h) and its inner activations, the same inner ones per
               shared expert, and fp32 router logits. With sequence
               parallelism (default when tp > 1) everything is divided by
               t, without it only the split part (their Eq. 3: 10 + 24/t +
               5as/(ht) for GPT). Tokens per rank = mbs x s / cp.
               req.recompute, for every schedule: full keeps the layer
               input, 2h per token (/t with SP), its B redoes the forward
               (collectives included), and the layer being rebuilt adds its
               whole activations while its backward runs; selective drops
               the 5as scores and redoes the attention core (the same as
               none with flash attention). 1f1b-r recomputes by itself.
               The first stage keeps the token ids and the embedding's
               dropout mask, (8 + h) per token; the last the logits: the
               head's and final norm's inputs 4h and the fp32 softmax 4V
               (/t), of which a split backward's B frees 2V (Megatron's
               report_theoretical_memory: 4sbh(1 + V/h)). recompute_norm_up drops the norm outputs (4h) and
               MLA's expanded Q, K, V (DeepSeek-V3 report, Sec. 3.2.3);
               fp8_moe_act keeps per routed expert an FP8 dispatched copy
               (h) and the SwiGLU's FP8 inputs (2 expert_ffn), its output
               recomputed (Sec. 3.3.3). A unit
               (schedule peak_memory, mem_limit, peak_units) = one
               microbatch's activations of 1/pp of the model, embedding
               input and logits included (their mean); bytes are counted
               per stage (static, below).
   static      each device's items' parameters, divided by t; routed
               experts also by ep. The LM head's weight sits on the last
               stage when untied or pp > 1 (Megatron keeps a copy of a tied
               embedding there). Bytes per parameter by req.recipe, D = the
               ranks holding the same weight (dp x cp, / ep for routed
               experts): megatron (default; Megatron-LM bf16, whose
               gradient buffers are fp32) 2 weight + 4 gradient + 12/D
               (fp32 master, Adam m, v; 12 with no_distributed_optimizer);
               zero1 2 + 2 + 12/D, zero2 2 + 14/D, zero3 16/D (Rajbhandari
               et al. 2020, Sec. 5) + 4 x the device's largest matrix
               gathered (DeepSpeed's estimate_zero3_model_states_mem_needs);
               fsdp (PyTorch FSDP2, bf16 compute, fp32 reduce) 4/D fp32
               weight + 4/D gradient + 8/D Adam + the current and next
               layer gathered in bf16 and one layer's fp32 gradient
               (8 x the device's largest layer); deepseek (DeepSeek-V3
               report Sec. 3.3.3, ZeRO-1 Sec. 3.1) 2 + 4 fp32 gradient +
               8/D (fp32 master, bf16 AdamW m, v). dualpipe: each device
               holds stage k of one copy and stage pp-1-k of the other,
               each with its gradients and optimizer state (two full
               copies; its optimizer state could be shared, which we do not
               model). Activation bytes: each device's passes in their
               order, an F adding its stage's bytes, a W (or BW) removing
               them (as pp_sched_peak_memory does in units). A candidate
               fits when the largest device's static + activation bytes +
               gpu.reserve_bytes <= gpu memory; the reserve (0 = default,
               < 0 = none) is 1.5 GiB + 3% of the memory: CUDA context and
               workspaces 0.5 GiB, NCCL buffers 1 GiB, allocator
               fragmentation 3% (docs/planner.md derives it).
               pp_candidate.mem breaks the largest device down.
   pass times  roofline per microbatch: a layer's forward FLOPs (above) / t
               at gpu.flops (default efficiency x peak_flops; a zero pp_gpu
               190/312 of the A100's 312e12, the presets their fitted
               efficiency, CALIBRATION), or its weights (local experts
               included) + activations at hbm_bw if slower. Narrow matmuls:
               each group (attention projections, MLP, experts) at w / (w +
               gpu.gemm_width) of the rate, w its narrow side on one rank
               (a x d / t, ffn / t, expert_ffn / expert tp; presets only).
               FP8 (req.fp8): the layers' matmuls at gpu.fp8_speedup x the
               rate; attention scores, embedding and head stay 16-bit
               (DeepSeek-V3 Sec. 3.3). B = F (input gradient: same matmul
               FLOPs), W = F without communication, so F:B:W = 1:1:1 plus
               communication, added to F and B:
               TP  two all-gather/reduce-scatter pairs of 2 T h bytes (T =
                   tokens per rank), each 2(t-1)/t of it over tp_bw. TP
                   also narrows every matmul, which runs below the GPU's
                   matmul rate (Appendix D.4 and Figure 12 of the paper):
                   compute time x (1 + 0.037 x log2 t x min(1, 1024/T)).
                   0.037 is Table 6's V-ZB column at seq 1024 (57.58% MFU at
                   t=1 pp=40, 54.78% at t=2 pp=20: 5.1% slower, of which our
                   TP communication accounts for 1.4%); gpu.tp_slowdown sets
                   it (< 0: none). Without it TP=2 wins at seq 1024 by 0.6%,
                   against the paper's finding.
               CP  ring attention: K and V of the other cp - 1 ranks pass
                   by, (cp - 1) x T x 2(k + v widths) / t bytes, overlapped
                   with the QK^T and AV FLOPs; only the excess is added.
               EP  all-to-all: each token to top_k experts and back, T (/t
                   with SP) x top_k (ep-1)/ep x h x (2 + 2) bytes per MoE
                   layer, dispatch 1 byte instead of 2 with req.fp8; with
                   model.route_nodes R < top_k and the group across nodes
                   (DeepSeek-V3's node-limited routing, Sec. 2.1.2, 3.2.2)
                   two legs at once, the slower one counted
                   (pp__plan_a2a_routed): min(R, nodes) (nodes-1)/nodes
                   copies over IB at net_bw (one per remote node a token
                   reaches), top_k (r-1)/r over NVLink at tp_bw (the landing
                   GPU forwards to each of its node's r EP ranks holding an
                   expert, one copy per expert).
               overlaps (each can be turned off in the request):
                   TP (no_tp_overlap): Megatron's --tp-comm-overlap
                   (Transformer Engine userbuffers) splits the all-gathers
                   and reduce-scatters into chunks that run beside the
                   matmuls using them: only max(0, TP comm - compute) shows.
                   DP (no_dp_overlap): Megatron's --overlap-grad-reduce
                   starts a model chunk's reduce-scatter bucket by bucket
                   in that chunk's last microbatch's backward
                   (schedules.py, enable_grad_sync per chunk;
                   param_and_grad_buffer.py, start_grad_sync): each
                   stage's share of its device's per-step traffic (by its
                   parameters) starts at its last B or W in the build less
                   its F + B + W of one microbatch, the device's stages in
                   ready order on its DP link; a device ends at the later
                   of its last pass and its chain, the step at the last
                   device (extrapolated times: each ready time + (n - n_b)
                   x the busiest device's work per microbatch). With the
                   distributed optimizer (megatron, deepseek) the
                   parameter all-gather (2 of the 4 + 2 bytes) is apart:
                   --overlap-param-gather runs it bucket by bucket for the
                   next step's forward, each forward pre-hook waiting on
                   its bucket (distributed_data_parallel.py,
                   _make_forward_pre_hook; param_and_grad_buffer.py,
                   start_param_sync and finish_param_sync). A stage's
                   all-gather ends by the end of its first F in the build;
                   a device's run one after the other from the step's
                   start, in first-F order, and the step starts later by
                   the largest excess over the devices. An fp32
                   all-reduce (no distributed optimizer) and zero1's
                   all-gather stay at the end; per-microbatch traffic
                   (zero2, zero3, fsdp) is apart (recipes).
                   F&B (no_fb_overlap): dualpipe and dualpipe-v are built
                   with pp_config.fb_overlap (pp_sched.h's F&B pairs): each
                   F paired with another microbatch's full backward is one
                   pass of t_FB = max(c + (1 - eta) a, a), a = the pair's
                   all-to-all, c = F + B + W - a its compute, eta = 112/132:
                   one pass's all-to-all beside the other's compute, which
                   runs on the 112 of 132 SMs DeepSeek-V3 leaves it
                   (Sec. 3.2.2) while the all-to-all runs and on all of them
                   after it (the communication kernels hold their SMs only
                   while they run): eta a + (t - a) = c; t = a when c < eta
                   a: pp_sched.h's pair rule (pp_fb_pair_time) at
                   fb_share = eta, the all-to-all parts as fb_comm. Passes
                   dualpipe.py runs alone (warm-up, cool-down: its steps
                   1-3 and 6-8) keep their all-to-all exposed. Built
                   to 8pp microbatches (pairs are the steady state).
               A group of ranks x tp GPUs within gpu.node_gpus (8) talks
               over tp_bw, else over net_bw (TP, CP, EP groups that span
               nodes: pp_candidate.span). Head forward 2 T h V/t FLOPs
               (fp32 logits for the roofline); the embedding a memory-bound
               gather. Pipeline send per stage boundary (pp__plan_items):
               one microbatch's activation, 2 T h/t (SP) bytes, over tp_bw
               when the pp x tp x cp x dp GPUs fit a node, else net_bw
               (consecutive stages are tp x cp x dp GPUs apart; the
               schedule takes one send time, the slowest boundary's). User
               times (req.times) replace all this: F, B, W of
               one device's share, spread over stages in proportion to the
               roofline costs.
   step time   makespan of the schedule built with those per-stage times and
               the send time as pp_config.times.comm (on every edge that
               crosses devices) at n_b microbatches, plus (n - n_b) x the busiest device's work
               per microbatch (the steady state), plus the gradient
               synchronisation of the largest device over the ranks sharing
               each weight ((D-1)/D x bytes x parameters; D = dp x cp, / ep
               for routed experts; over tp_bw when the dp x cp x tp GPUs
               fit a node, else net_bw): megatron reduce-scatters fp32
               gradients and all-gathers bf16 weights, 4 + 2 bytes per step
               (an fp32 all-reduce, 8, without the distributed optimizer;
               deepseek as megatron); zero1 2 + 2 per step; zero2 2 per microbatch + 2 per step;
               zero3 2 + 2 + 2 and fsdp 2 + 2 + 4 per microbatch (gathers
               in F and B, a reduce-scatter); per-microbatch traffic hides
               under the device's work for that microbatch, only its excess
               counts. pp_candidate.time splits the step: the busiest
               device's compute and its TP, CP, EP communication, its
               waits on pipeline sends (pp: each idle gap that ends at a
               pass whose input ran on another device, up to comm), the
               rest of its idle time (bubble), and dp. n = global_batch /
               (dp x mbs). n_b from the planner's steady fact of the schedule
               (pp__plan_steady): pp for steady = 1 (1f1b, 1f1b-r, zb-h1, 1f1b-v, v-min, v-half, v-zb:
               at unit times this equals the full build, checked at d = 8,
               20, n = 160), n for steady = 0 (gpipe, looped-bfs: memory
               grows with n), else 2pp. Within one (pp, tp, cp) a build is
               reused by another layout (mbs, ep) only when every stage
               time is the build's times one factor (to 1e-12), and then
               scaled: the schedule is the same (with tp > 1 the TP
               slowdown makes mbs not proportional, so each mbs is built).
   guarantee   candidates are built with pp_config.no_guarantee = 1 (the
               DESIGN.md, "The guarantee"): reordered and locally
               searched, without the comparison builds that would cost 2 to
               3 times as much at the planner's non-unit stage times (Llama
               3 405B on 16,384 GPUs: 1.6 s instead of 4 s). A step time is
               therefore an upper bound on what pp_sched_build gives for
               that layout, which is never longer (test_guarantee checks
               no_guarantee never shortens a build).
   pruning     branch and bound: before a build, the work bound max over
               devices k of (head_k + n_b p_k, head_k + n_b q_k + tail_k) +
               (n - n_b) max p_k, q_k = its F + B per
               microbatch, tail_k = the B times of stages 0..k-1 (one route:
               stage k is device k's first, every F and B on device k
               precedes its microbatch's B on stage k, and the last of those
               still has the B chain down to stage 0 ahead of it; head and
               tail each with one send per boundary they cross), p_k = device k's F + B + W per microbatch (+ F
               for recomputation; half of both stages for dualpipe), head_k = the F times of the
               stages before its first stage k (it cannot start earlier;
               dualpipe: the shorter of its two copies' heads, the second
               copy entering at device pp-1), times rho_k with F&B pairs
               (the least t_FB / (F + B + W) of the pairs device k can
               form: no pass is shorter than rho_k of its time), is a lower
               bound on the step time above (no pass is shorter than its
               stage time, none overlaps another on its device). With DP
               overlap, device k also ends no earlier than head_k + n_b p_k
               + (n - n_b) max p_k + min over its stages c of max(0, sync_c
               - window_c): its last pass readies one of its stages, whose
               synchronisation then still runs; without overlap the whole
               dp time is added (tests check
               bound <= step for every built candidate of 25 requests, and
               the top 10 against no_prune's). A candidate is not built when its bound
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
               Candidates keep their place in the output (pp, tp, cp, ep,
               mbs, schedule, v ascending) but the (pp, tp, cp) triples are
               evaluated in the order of plain 1f1b's best step time over
               their ep and mbs (a quick build: 1f1b's order is its
               published one), triples where 1f1b fits nowhere after them
               by its work bound, so good incumbents come first and most
               layouts that do not fit come when the incumbents prune them.
               A memo keeps every build's result by its exact inputs
               (schedule, v, n_b, limit, settings, every stage's times, the
               bytes each stage keeps, each device's static bytes) for the
               whole plan: a layout of another triple with the same inputs
               (cp = 2 at mbs = 2 and cp = 1 at mbs = 1 have the same tokens
               per rank, dp x cp and n) takes the result without building;
               equal inputs give the same build, so nothing changes but the
               time (16 MiB of keys at most). The work bound ignores the bubble
               and memory; the memory-time bound (not with no_prune;
               pp__plan_live_bound) adds memory: a microbatch's bytes on
               stage s live at least R_s, the F and backward of stages s
               to its route's last (and the sends between them), inside [head, M - tail], so a device
               with L bytes left after its static ones holds on average n_b
               sum_s a_s R_s / (M - head - tail) <= L and M >= head + tail
               + n_b sum_s a_s R_s / L (extrapolated and + dp as above; no
               F&B pairs). A candidate past it is slower than that or out of
               memory, so it is pruned by the same rule (reason "memory-time
               bound"); a built candidate's bound field stays its work bound.
               Memory bound (not with no_prune): before a build,
               each device's static bytes + one microbatch on all its
               stages of one copy (the F of its last stage precedes the B
               and W of the earlier ones) + full recomputation's transient;
               above the memory the candidate is not built: fits = 0,
               pruned = 0, peak_bytes = that bound, reason "out of memory
               by at least ...". Memory floor (not with no_prune, once the
               schedule has a layout that fits): v-min, v-half and v-zb
               (V-shape, B/W split, reordered) are first built with
               no_reorder; what their last device holds from each F to its
               B there (+ its static bytes) is at most that device's peak in
               the full build (observed, not proven: test_plan checks it
               over a grid; it fails on other devices), so above the memory
               the full build is skipped the same way (pp__plan_floor_oom).
               Timings: make bench-plan and docs/planner.md.
   layouts     dp = N / (tp x cp x pp), rejected when it does not divide
               (the seed overview's 3D rule, with context parallelism); tp
               in 1, 2, 4, 8 (within a node) dividing the heads; cp 1, and
               powers of 2 dividing seq while seq / cp >= 4096 (CP is for
               long sequences); ep (MoE) powers of 2 dividing the experts
               and tp x dp x cp: dividing dp x cp, EP groups are carved
               from the data-parallel ranks and the experts are
               tensor-parallel (tp); otherwise the EP group folds TP ranks
               in and the experts are not tensor-parallel (Megatron-Core's
               MoE parallel folding); pp any divisor of N with S <= L + 2
               and, unless given, at least two items per device (pp <= (L
               + 2) / 2: one-layer devices are dominated by their bubble and
               cost the most to build);
               mbs 1, 2, 4, dividing global_batch / dp; v (the schedules
               whose any_chunks fact is set: interleaved-1f1b, -u,
               looped-bfs) 2, 3, 4, 6, 8 while pp x v <= 128 and <= L + 2,
               and (pp >= 2) every v with pp x v dividing the layers
               within the same limits (NeMo's v = 5 for Llama 3 70B at pp
               4). Partitions are kept within a (pp, tp, cp) while the
               item costs only scale (the min-max split is the same).
               Any of them given in the request is the only value tried.
   adaptive    v-auto and zb-auto get mem_limit = the units left after the
               static bytes (in half units, at most 2pp). A schedule built by
               a search (adaptive: v-auto, zb-auto, zb-1p, zb-2p, up to pp =
               8; interleaved-1f1b-m up to 40: pp__plan_search_d) is built
               only up to that pp;
               elsewhere the candidate says "not evaluated". So is a build
               of more than 4194304 passes.

LIMITS (pp_plan and pp_model_stats check these before any work; the message
   names the field and the valid range)
   model       layers 1..100000, hidden 1..2^20, heads 1..65536 dividing
               hidden unless head_dim is set, kv_heads 0..heads dividing
               heads, seq 1..2^24, ffn, vocab 0..2^24, experts 0..65536,
               top_k 0..experts, shared_experts 0..64, dense_layers below
               layers, MoE and MLA fields only with experts / kv_lora_rank
               set, flags 0 or 1.
   request     gpus 1..2^24, global_batch 1..2^30, pp, tp, cp, dp 0..gpus and
               their product dividing (all four given: equal to) gpus, tp
               dividing heads, cp dividing seq, ep dividing experts, mbs
               0..global_batch, v 0 or 2..64, keep_top 0..10^6; at most 200000
               candidates (narrow the search with pp, tp, cp, ep, mbs or a
               schedule beyond that).
               recipe 0..4 (pp_recipe), recompute 0..2 (pp_recompute).
   gpu         every number finite and >= 0 (reserve_bytes may be < 0:
               none): mem_bytes, reserve_bytes up to 1 PiB (reserve
               below memory), flops, peak_flops up to 1e18 (flops <=
               peak_flops), efficiency up to 1, bandwidths up to
               1e15; tp_slowdown up to 10.
   times       F, B > 0, W, comm >= 0, all up to 1e9 s, the largest within
               1e6 x the smallest nonzero one.

PRESETS (pp_model_preset, pp_gpu_preset; the counts are checked against the
   published ones in tests/test_plan.c)
   gpt3-175b     96 layers, h 12288, 96 heads, seq 2048, V 50257, tied,
                 learned positions (Brown et al. 2020, Table 2.1)
   llama3-8b     32 layers, h 4096, 32 heads, 8 KV heads, SwiGLU 14336,
   llama3-70b    80 layers, h 8192, 64 heads, 8 KV, 28672,
   llama3-405b   126 layers, h 16384, 128 heads, 8 KV, 53248; V 128256,
                 untied, RoPE, RMSNorm, seq 8192 (Meta 2024, Table 3)
   mixtral-8x7b  32 layers, h 4096, 32 heads, 8 KV, 8 experts of 14336,
                 top 2, V 32000, seq 4096 (Jiang et al. 2024)
   deepseek-v3   61 layers (3 dense, ffn 18432), h 7168, 128 heads of 128,
                 MLA (kv 512, q 1536, rope 64), 256 experts of 2048 + 1
                 shared, top 8, V 129280, seq 4096 (DeepSeek-V3 report)
   GPUs (memory GiB, dense BF16 peak, HBM, NVLink per direction, network per GPU):
   a100-80g 80, 312e12, 2.0e12, 300e9, 25e9; h100-80g 80, 989e12, 3.35e12,
   450e9, 50e9; h800 as h100-80g with NVLink 200e9 (400 GB/s both ways);
   h200 141, 989e12, 4.8e12, 450e9, 50e9; b200 180, 2250e12, 8e12, 900e9,
   50e9 (NVIDIA's data sheets: nominal, per direction, with no achieved
   fraction anywhere; DeepSeek-V3's 160 GB/s NVLink is DeepEP's measured
   figure, --nvlink-bw 160). deepseek-v3 routes each token to at most 4
   nodes (route_nodes). Each GPU preset carries a fitted efficiency and
   gemm_width (CALIBRATION).

CALIBRATION (make calibrate; bench/calibrate.c, docs/planner.md)
   The presets' constants are fitted on 4 of 11 published runs, each planned
   at its published layout: A100 efficiency 0.7686 and gemm_width 845.4 on
   Narayanan et al. 2021's 39.1B and 1008B rows (the width so that both err
   alike), H100 efficiency 0.5479 on Llama 3 405B at 8,192 GPUs (43% MFU),
   FP8 speed-up 1.21 on DeepSeek-V3 (180K H800 GPU-hours per trillion
   tokens). H800, H200 and B200 take H100's efficiency (not fitted). The 7
   held-out runs (Narayanan's 145.6B, 310.1B, 529.6B, GPT-3 175B on 1024
   A100s, Korthikanti et al. 2022's 175B, Llama 3 405B on 16,384 GPUs,
   MegaScale's 175B on 12,288) are within 6.6%.

REVISION HISTORY
   0.6.0  DualPipe pairs timed by pp_sched.h's pair rule (pp_fb_pair_time)
          with the real all-to-all parts and fb_share = 112/132
   0.5.0  the expert all-to-all is the slower of its IB and NVLink legs;
          DP synchronisation per model chunk and the parameter all-gather
          at the step's start, as Megatron's overlaps run them; a memory
          floor skips v-min, v-half and v-zb layouts that cannot fit; a
          DualPipe F&B pair loses the communication SMs only while its
          all-to-all runs; FP8 speed-up refitted (1.21).
   0.4.2  a memo of builds across the (pp, tp, cp) triples and triples
          ordered by 1f1b's built step time: the same candidates, Llama 3
          405B on 1,024 GPUs in 2.4 s of CPU instead of 3.4.
   0.4.1  a memory-time bound prunes layouts whose activations cannot fit
          at a competitive step time (same top K, Llama 3 405B on 1,024
          GPUs 2.2x faster); node-limited routing reaches at most the EP
          group's nodes (EP 16 over 2 nodes: 1 network copy, not 2).
   0.4.0  time as runtimes run it: FP8 matmuls (req.fp8), TP, DP and F&B
          overlaps (dualpipe's pairs through pp_config.fb_overlap), node-
          limited routing, narrow-matmul rate, h800, efficiencies fitted on
          published runs (CALIBRATION); EP folded from TP ranks; every v
          dividing the layers; a work bound that holds for dualpipe.
   0.3.0  memory as frameworks allocate it (recipes megatron, fsdp, zero1-3,
          logits and the embedding input, a default reserve, bytes through
          each device's pass order, pp_candidate.mem); recomputation for
          every schedule (req.recompute); TP/CP/EP groups across nodes at
          net_bw (span); the step's split (pp_candidate.time), tokens and
          FLOP/s per GPU; Qwen2 QKV biases and Qwen3 QK norms (qkv_bias,
          qk_norm).
   0.2.0  a model description (GQA/MQA, gated MLPs, FFN size, vocab, tied or
          untied embeddings, RoPE, RMSNorm, MoE with shared experts and
          dense layers first, MLA), presets for six published models and
          four GPUs, context and expert parallelism, v chosen by the
          planner, dualpipe with its two copies, one check of the request,
          an exact build cache, O(S L log L) partitions (10,000 layers).
   0.1.0  the planner moves out of pp_sched.h (where it was 0.3.0's
          "planning") into this header, on pp_sched.h's public API (the
          schedule facts of pp_sched_info, pp_sched_find); it takes the
          caller's allocator. Same plans as pp_sched.h 0.3.3's pp_plan.
*/
#ifndef PP_PLAN_H
#define PP_PLAN_H

#define PP_PLAN_VERSION_MAJOR 0
#define PP_PLAN_VERSION_MINOR 6
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

/* A transformer. Zero fields take the defaults named here; the ranges
   pp_plan and pp_model_stats accept are in LIMITS. Presets: pp_model_preset. */
typedef struct pp_model {
    int layers, hidden, heads, seq; /* L, h, a, s: required */
    int kv_heads;                   /* key/value heads; 0 = heads (multi-head); fewer: GQA; 1: MQA */
    int head_dim;                   /* 0 = hidden / heads (heads must then divide hidden) */
    int ffn;                        /* MLP hidden size; 0 = 4 x hidden */
    int gated;                      /* 1: gated MLP (SwiGLU): gate, up, down, three h x ffn matrices */
    int vocab;                      /* V; 0 = 51200 */
    int untied;                     /* 1: the LM head is its own V x h matrix; 0: tied to the embedding */
    int rope;                       /* 1: rotary positions (no position embedding); 0: learned s x h */
    int rmsnorm;                    /* 1: RMSNorm and no biases (Llama); 0: LayerNorm and biases (GPT) */
    /* mixture of experts: experts = 0 is a dense model */
    int experts;                    /* routed experts per MoE layer */
    int top_k;                      /* routed experts per token; 0 = 2 */
    int shared_experts;             /* experts every token runs (DeepSeek) */
    int expert_ffn;                 /* hidden size of one expert; 0 = ffn */
    int dense_layers;               /* the first dense_layers layers have a dense MLP of size ffn */
    /* multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank = 0 is off */
    int kv_lora_rank, q_lora_rank;  /* latent widths of K/V and of Q (q 0 = no Q latent) */
    int rope_head_dim;              /* width of the rotary part of each query and key head */
    int no_flash_attention;         /* 0: flash attention (no s*s scores kept) */
    int no_seq_parallel;            /* 0: sequence parallelism whenever tp > 1 */
    int no_distributed_optimizer;   /* 0: optimizer state sharded over the data-parallel ranks */
    /* DeepSeek-V3's activation savings (its report, Sec. 3.2.3 and 3.3.2) */
    int recompute_norm_up;          /* 1: norm outputs and MLA's Q/K/V up-projections recomputed in backward */
    int fp8_moe_act;                /* 1: experts' inputs and SwiGLU inputs kept in FP8, the SwiGLU output recomputed */
    int qkv_bias;                   /* 1: Q, K, V biases with rmsnorm (Qwen2) */
    int qk_norm;                    /* 1: RMSNorm of each query and key head (Qwen3): 2 head_dim parameters */
    int route_nodes;                /* MoE: a token's routed experts span at most this many nodes, and its
                                       all-to-all crosses the network once per node, NVLink forwarding it
                                       within (DeepSeek-V3's node-limited routing, report Sec. 2.1.2, 3.2.2:
                                       4); 0 = no limit */
} pp_model;

/* What a model is, from pp_model_stats. */
typedef struct pp_model_counts {
    double params;          /* every parameter (LM head counted once when tied) */
    double active_params;   /* those one token runs through: MoE layers count top_k + shared experts */
    double flops_per_token; /* training FLOPs per token at seq: 3 x forward (Narayanan et al. 2021) */
    double dense_layer_params, moe_layer_params; /* one layer of each kind (0 when there is none) */
    double embedding_params, head_params; /* head 0 when tied */
} pp_model_counts;

/* One GPU and its links. Zero fields take the defaults (an A100 80 GB);
   presets: pp_gpu_preset. */
typedef struct pp_gpu {
    double mem_bytes; /* 0 = 80 GiB */
    double flops;     /* achieved matmul FLOP/s; 0 = efficiency x peak_flops */
    double hbm_bw;    /* bytes/s; 0 = 2.0e12 */
    double tp_bw;     /* NVLink within a node, bytes/s per direction; 0 = 300e9 */
    double net_bw;    /* between nodes, per GPU (pipeline, dp, and TP/CP/EP groups that span nodes); 0 = 25e9 */
    double reserve_bytes; /* kept back (CUDA context, NCCL buffers, fragmentation); 0 = the default
                             (PLANNING, reserve: 1.5 GiB + 3% of mem_bytes), < 0 = none */
    double tp_slowdown; /* TP-sharded matmuls run (1 + this x log2 tp x min(1, 1024/(mbs x seq)))
                           times slower (narrower matmuls); 0 = 0.037 (see PLANNING,
                           pass times); < 0 = none */
    double peak_flops; /* dense 16-bit peak, FLOP/s, the MFU's denominator; 0 = 312e12 (A100) */
    double efficiency; /* achieved fraction of peak_flops when flops = 0; 0 = 190/312 (the presets
                          carry the fitted ones: PRESETS, CALIBRATION) */
    double fp8_speedup; /* with req.fp8: the layers' matmuls run this many times faster than at
                           flops; 0 = 1.21 (fitted, CALIBRATION) */
    double gemm_width;  /* a layer's matmuls run at w / (w + gemm_width) of flops, w = their narrow
                           side on one rank (attention: heads x head_dim / tp; MLP: ffn / tp;
                           experts: expert_ffn / their tp): narrow matmuls fill the GPU less;
                           0 = off (the presets carry the fitted width, CALIBRATION) */
    int node_gpus;     /* GPUs joined by tp_bw (one node); 0 = 8 */
    const char *name;  /* shown in outputs; NULL = "" */
} pp_gpu;

/* How a framework keeps weights, gradients and optimizer state (PLANNING,
   recipes; D = ranks sharing a weight): bytes per parameter */
typedef enum pp_recipe {
    PP_RECIPE_MEGATRON = 0, /* Megatron-LM bf16: 2 weight + 4 fp32 grad + 12/D (18 without the distributed optimizer) */
    PP_RECIPE_FSDP,         /* PyTorch FSDP2: 16/D + the gathered layers */
    PP_RECIPE_ZERO1,        /* DeepSpeed ZeRO-1: 2 + 2 + 12/D */
    PP_RECIPE_ZERO2,        /* ZeRO-2: 2 + 14/D */
    PP_RECIPE_ZERO3,        /* ZeRO-3: 16/D + the largest gathered matrix */
    PP_RECIPE_DEEPSEEK,     /* DeepSeek-V3: 2 weight + 4 fp32 grad + (4 fp32 master + 2 + 2 bf16 Adam m, v)/D */
    PP_RECIPE_COUNT
} pp_recipe;

/* Activation recomputation, for every schedule (PLANNING, activation) */
typedef enum pp_recompute {
    PP_RECOMPUTE_NONE = 0,  /* keep every activation */
    PP_RECOMPUTE_SELECTIVE, /* recompute the attention core (no s x s scores kept; the same as none with flash) */
    PP_RECOMPUTE_FULL,      /* keep each layer's input, redo its forward before its backward */
    PP_RECOMPUTE_COUNT
} pp_recompute;

typedef struct pp_plan_request {
    pp_model model;
    pp_gpu gpu;
    int gpus;          /* N, required */
    int global_batch;  /* sequences per step, required */
    int pp, tp, dp, mbs; /* 0 = enumerate */
    int cp;            /* context-parallel ranks; 0 = enumerate (1, and powers of 2 keeping seq/cp >= 4096) */
    int ep;            /* expert-parallel ranks (MoE); 0 = enumerate (powers of 2 dividing experts and dp x cp) */
    int v;             /* stages per device of the schedules that take any (looped ones);
                          0 = enumerate 2, 3, 4, 6, 8 */
    const char *schedule; /* NULL = every built-in */
    const pp_times *times; /* optional measured per-device-share times (F, B, W,
                              comm) for one microbatch of mbs; replaces the roofline */
    int no_prune;      /* 1: build every candidate (no work-bound pruning; PLANNING, pruning) */
    int fp8;           /* 1: the layers' matmuls at the FP8 rate (gpu.fp8_speedup x flops); attention
                          scores, embedding and LM head stay 16-bit (DeepSeek-V3 report, Sec. 3.3) */
    int no_tp_overlap; /* 1: TP communication in sequence with the matmuls (PLANNING, overlaps) */
    int no_dp_overlap; /* 1: the data-parallel gradient reduce-scatter and parameter all-gather after
                          the pipeline, not under its first forward and last backward */
    int no_fb_overlap; /* 1: dualpipe runs each F&B pair in sequence (no all-to-all hidden) */
    int keep_top;      /* pruning keeps the first keep_top of the ranking exact; 0 = 10 */
    int recipe;        /* pp_recipe; 0 = PP_RECIPE_MEGATRON */
    int recompute;     /* pp_recompute; 0 = none */
    pp_allocator allocator; /* every allocation of pp_plan, its builds included; zero = malloc/free */
} pp_plan_request;

/* The largest device's memory, bytes (PLANNING, static and activation). */
typedef struct pp_mem_breakdown {
    double weights;     /* 16-bit weights (fsdp: fp32 shards) + gathered layers (zero3, fsdp) */
    double grads;       /* gradient buffers */
    double optimizer;   /* fp32 master weights and Adam m, v (their shard) */
    double activations; /* kept activations at the device's peak (embedding input included) */
    double logits;      /* of that peak: the LM head's input and fp32 logits / cross-entropy */
    double reserve;     /* CUDA context, NCCL buffers, fragmentation */
    double total;       /* the sum: what must fit in gpu.mem_bytes */
} pp_mem_breakdown;

/* The step, seconds: compute + bubble + the exposed communication = step_time. */
typedef struct pp_time_breakdown {
    double compute;     /* the busiest device's passes without their communication */
    double bubble;      /* its idle time, pipeline sends excepted */
    double tp, cp, ep;  /* tensor-parallel collectives, ring attention left over, expert all-to-all */
    double pp;          /* pipeline sends on the fill and drain */
    double dp;          /* gradient synchronisation (and fsdp/zero3 gathers) not hidden */
} pp_time_breakdown;

/* spans: groups that cross nodes, priced at net_bw */
#define PP_SPAN_TP 1
#define PP_SPAN_CP 2
#define PP_SPAN_EP 4

/* One candidate the planner considered (fitting or not). */
typedef struct pp_candidate {
    char schedule[32];
    int pp, tp, dp, mbs, microbatches;
    int cp, ep, v;           /* context-parallel, expert-parallel ranks; stages per device */
    int fits;                /* 1: largest device's peak <= gpu memory - reserve */
    double peak_bytes;       /* largest device: static + activation */
    double static_bytes;     /* that device's parameters, gradients, optimizer */
    double unit_bytes;       /* one unit: activation of one microbatch for L/pp layers */
    double peak_units;       /* that device's schedule peak, units */
    double step_time;        /* seconds; 0 when it does not fit or did not build */
    double mfu;              /* model FLOPs / (step_time * N * gpu.peak_flops); 0 when not run */
    char reason[160];        /* why it lost (or "best") */
    double bound;            /* lower bound on step_time (work bound), seconds; 0 when
                                the candidate stopped before its build */
    int pruned;              /* 1: not built, its bound is slower than its schedule's
                                best layout found before it (fits = 0: unknown) */
    int span;                /* PP_SPAN_*: TP, CP or EP groups that span nodes */
    double tokens_per_gpu;   /* tokens per second per GPU; 0 when not run */
    double tflops_per_gpu;   /* model FLOP/s per GPU (mfu x peak); 0 when not run */
    pp_mem_breakdown mem;    /* largest device (static only when the schedule was not built) */
    pp_time_breakdown time;  /* 0 when not run */
} pp_candidate;

/* alloc: NULL or zero = malloc/free */
PP_PLAN_API pp_status pp_partition(const double *cost, int items, int stages, int *first, double *max_cost,
                                   const pp_allocator *alloc, char *err);
PP_PLAN_API pp_status pp_partition_v(const double *cost, int items, int devices, int *first, double *max_cost,
                                     const pp_allocator *alloc, char *err);
/* Checks m as pp_plan does (LIMITS) and derives its counts; out may be NULL. */
PP_PLAN_API pp_status pp_model_stats(const pp_model *m, pp_model_counts *out, char *err);
/* Bytes one layer keeps per microbatch (the first layer; 0 for a model
   pp_model_stats refuses). recompute: full recomputation, the input only. */
PP_PLAN_API double pp_layer_activation_bytes(const pp_model *m, int mbs, int tp, int recompute);
/* Parameters of one layer (the first; 12h^2 + 13h for a GPT layer). */
PP_PLAN_API double pp_layer_params(const pp_model *m);
/* Published shapes by name (gpt3-175b, llama3-8b, llama3-70b, llama3-405b,
   mixtral-8x7b, deepseek-v3) and GPUs (a100-80g, h100-80g, h200, b200):
   PP_ERR_INVALID_ARG naming the known ones for another name. *_name(i)
   lists them (NULL past the end). */
PP_PLAN_API pp_status pp_model_preset(const char *name, pp_model *out, char *err);
PP_PLAN_API const char *pp_model_preset_name(int i);
PP_PLAN_API pp_status pp_gpu_preset(const char *name, pp_gpu *out, char *err);
PP_PLAN_API const char *pp_gpu_preset_name(int i);
/* g (NULL: a zero pp_gpu) with every default applied: the values pp_plan uses */
PP_PLAN_API pp_gpu pp_gpu_defaults(const pp_gpu *g);
/* "megatron", "fsdp", "zero1", "zero2", "zero3", "deepseek" / "none", "selective", "full"; NULL past the end */
PP_PLAN_API const char *pp_recipe_name(int recipe);
PP_PLAN_API const char *pp_recompute_name(int recompute);
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
#define PP__PLAN_G(k, a, b) g[((size_t)(k) * W + (size_t)(a)) * W + (size_t)(b)]
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
                                double mine = pre[a2] - pre[a] + pre[b] - pre[b2], rest = PP__PLAN_G(k + 1, a2, b2);
                                double m = mine > rest ? mine : rest;
                                if (m < best) { best = m; ba = a2; bb = b2; }
                            }
                    }
                }
                PP__PLAN_G(k, a, b) = best;
                arga[((size_t)k * W + a) * W + b] = ba;
                argb[((size_t)k * W + a) * W + b] = bb;
            }
    if (max_cost) *max_cost = PP__PLAN_G(0, 0, L);
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
#undef PP__PLAN_G
    pp__plan_free(&al, pre);
    pp__plan_free(&al, g);
    pp__plan_free(&al, arga);
    pp__plan_free(&al, argb);
    return PP_OK;
}

/* ---- the model: counts, FLOPs, bytes (formulas and sources in PLANNING) ---- */

/* A model with every default applied and its per-layer counts. Widths are
   per token; params are counts, not bytes. */
typedef struct pp__plan_pmodel {
    pp_model m;                   /* defaults applied */
    double h, s, a, V, hd, rd;    /* hidden, seq, heads, vocab, head dim, rotary head dim (MLA) */
    double q_w, k_w, v_w, o_w;    /* widths of Q, K, V and of the attention output */
    double lat_w;                 /* MLA latents kept per token (kv + q ranks) */
    double attn_mm, attn_other;   /* attention matmul params; its biases and latent norms */
    double norm_p;                /* the layer's norms */
    double mlp_mm, mlp_other;     /* dense MLP: matmul params, biases */
    double exp_mm, exp_other;     /* one expert */
    double router;                /* h x experts */
    double emb, head, final_norm; /* embedding (+ learned positions), untied head, final norm */
    int moe_from;                 /* first MoE layer (layers when dense) */
} pp__plan_pmodel;

static int pp__plan_int_in(char *err, const char *field, int x, int lo, int hi, const char *what) {
    if (x >= lo && x <= hi) return 1;
    pp__plan_err(err, "%s must be %s (%d..%d), got %d", field, what, lo, hi, x);
    return 0;
}

/* The one check of a model (LIMITS), then its counts. */
static pp_status pp__plan_model_resolve(const pp_model *in, pp__plan_pmodel *p, char *err) {
    pp_model m;
    double h, kv, f, ef, E;
    memset(p, 0, sizeof *p);
    if (!in) { pp__plan_err(err, "model: must not be NULL"); return PP_ERR_INVALID_ARG; }
    m = *in;
    if (!pp__plan_int_in(err, "model.layers", m.layers, 1, 100000, "a layer count") ||
        !pp__plan_int_in(err, "model.hidden", m.hidden, 1, 1 << 20, "a width") ||
        !pp__plan_int_in(err, "model.heads", m.heads, 1, 1 << 16, "a head count") ||
        !pp__plan_int_in(err, "model.seq", m.seq, 1, 1 << 24, "a sequence length in tokens") ||
        !pp__plan_int_in(err, "model.kv_heads", m.kv_heads, 0, m.heads, "0 (= heads) or at most heads") ||
        !pp__plan_int_in(err, "model.head_dim", m.head_dim, 0, 1 << 16, "0 (= hidden / heads) or a width") ||
        !pp__plan_int_in(err, "model.ffn", m.ffn, 0, 1 << 24, "0 (= 4 x hidden) or a width") ||
        !pp__plan_int_in(err, "model.vocab", m.vocab, 0, 1 << 24, "0 (= 51200) or a vocabulary size") ||
        !pp__plan_int_in(err, "model.experts", m.experts, 0, 1 << 16, "0 (dense) or an expert count") ||
        !pp__plan_int_in(err, "model.top_k", m.top_k, 0, m.experts > 0 ? m.experts : 0,
                         "0 (= 2) or at most experts") ||
        !pp__plan_int_in(err, "model.shared_experts", m.shared_experts, 0, m.experts > 0 ? 64 : 0,
                         "0, or up to 64 with experts > 0") ||
        !pp__plan_int_in(err, "model.expert_ffn", m.expert_ffn, 0, m.experts > 0 ? 1 << 24 : 0,
                         "0 (= ffn), or a width with experts > 0") ||
        !pp__plan_int_in(err, "model.dense_layers", m.dense_layers, 0, m.experts > 0 ? m.layers - 1 : 0,
                         "0, or fewer than layers with experts > 0") ||
        !pp__plan_int_in(err, "model.kv_lora_rank", m.kv_lora_rank, 0, 1 << 16, "0 (no MLA) or a width") ||
        !pp__plan_int_in(err, "model.q_lora_rank", m.q_lora_rank, 0, m.kv_lora_rank > 0 ? 1 << 16 : 0,
                         "0, or a width with kv_lora_rank > 0") ||
        !pp__plan_int_in(err, "model.rope_head_dim", m.rope_head_dim, 0, m.kv_lora_rank > 0 ? 4096 : 0,
                         "0 (= 64), or a width with kv_lora_rank > 0") ||
        !pp__plan_int_in(err, "model.route_nodes", m.route_nodes, 0, m.experts > 0 ? 65536 : 0,
                         "0 (no limit), or nodes per token with experts > 0"))
        return PP_ERR_INVALID_ARG;
    if ((m.gated | m.untied | m.rope | m.rmsnorm | m.no_flash_attention | m.no_seq_parallel |
         m.no_distributed_optimizer | m.recompute_norm_up | m.fp8_moe_act | m.qkv_bias | m.qk_norm) & ~1) {
        pp__plan_err(err, "model: gated, untied, rope, rmsnorm and the no_* flags must be 0 or 1");
        return PP_ERR_INVALID_ARG;
    }
    if (!m.head_dim && m.hidden % m.heads) {
        pp__plan_err(err, "model.heads %d does not divide hidden %d: use heads dividing it (e.g. %d) or set head_dim",
                     m.heads, m.hidden, m.hidden % 64 == 0 ? m.hidden / 64 : 1);
        return PP_ERR_INVALID_ARG;
    }
    if (m.kv_heads && m.heads % m.kv_heads) {
        pp__plan_err(err, "model.kv_heads %d does not divide heads %d: GQA needs heads / kv_heads query heads per "
                     "key/value head (kv_heads 1 = MQA, = heads for multi-head)", m.kv_heads, m.heads);
        return PP_ERR_INVALID_ARG;
    }
    if (m.kv_lora_rank && m.kv_heads && m.kv_heads != m.heads) {
        pp__plan_err(err, "model.kv_heads %d: MLA (kv_lora_rank > 0) expands keys and values for every head; use 0",
                     m.kv_heads);
        return PP_ERR_INVALID_ARG;
    }
    if (!m.kv_heads) m.kv_heads = m.heads;
    if (!m.head_dim) m.head_dim = m.hidden / m.heads;
    if (!m.ffn) m.ffn = 4 * m.hidden;
    if (!m.vocab) m.vocab = 51200;
    if (m.experts && !m.top_k) m.top_k = m.experts < 2 ? m.experts : 2;
    if (m.experts && !m.expert_ffn) m.expert_ffn = m.ffn;
    if (m.kv_lora_rank && !m.rope_head_dim) m.rope_head_dim = 64;
    p->m = m;
    p->h = h = m.hidden;
    p->s = m.seq;
    p->a = m.heads;
    p->V = m.vocab;
    p->hd = m.head_dim;
    p->rd = m.rope_head_dim;
    kv = m.kv_heads;
    f = m.ffn;
    ef = m.expert_ffn;
    E = m.experts;
    /* attention (GQA: K and V have kv_heads heads; Ainslie et al. 2023) */
    if (m.kv_lora_rank) { /* MLA (DeepSeek-V2 Sec. 2.1): latents, then per-head up-projections */
        double kr = m.kv_lora_rank, qr = m.q_lora_rank, qk = p->hd + p->rd;
        p->q_w = p->a * qk;
        p->k_w = p->a * qk;
        p->v_w = p->a * p->hd;
        p->o_w = p->a * p->hd;
        p->lat_w = kr + qr;
        p->attn_mm = (qr ? h * qr + qr * p->q_w : h * p->q_w) + h * (kr + p->rd) + kr * p->a * (p->hd + p->hd) +
                     p->o_w * h;
        p->attn_other = kr + qr; /* the latents' RMSNorms */
    } else {
        p->q_w = p->a * p->hd;
        p->k_w = kv * p->hd;
        p->v_w = kv * p->hd;
        p->o_w = p->a * p->hd;
        p->attn_mm = h * (p->q_w + p->k_w + p->v_w) + p->o_w * h;
        p->attn_other = m.rmsnorm ? 0 : p->q_w + p->k_w + p->v_w + h; /* QKV and output biases */
        if (m.rmsnorm && m.qkv_bias) p->attn_other += p->q_w + p->k_w + p->v_w;
        if (m.qk_norm) p->attn_other += 2 * p->hd;
    }
    p->norm_p = m.rmsnorm ? 2 * h : 4 * h; /* two norms: weight (and bias) of h each */
    p->mlp_mm = (m.gated ? 3 : 2) * h * f;
    p->mlp_other = m.rmsnorm ? 0 : (m.gated ? 2 * f : f) + h;
    p->exp_mm = (m.gated ? 3 : 2) * h * ef;
    p->exp_other = m.rmsnorm ? 0 : (m.gated ? 2 * ef : ef) + h;
    p->router = h * E;
    p->emb = p->V * h + (m.rope ? 0 : p->s * h);
    p->head = m.untied ? p->V * h : 0;
    p->final_norm = m.rmsnorm ? h : 2 * h;
    p->moe_from = m.experts ? m.dense_layers : m.layers;
    return PP_OK;
}

static int pp__plan_is_moe(const pp__plan_pmodel *p, int layer) { return layer >= p->moe_from; }

/* parameters of a layer; routed experts apart (they are split over ep) */
static double pp__plan_layer_shared_params(const pp__plan_pmodel *p, int moe) {
    double x = p->attn_mm + p->attn_other + p->norm_p;
    if (!moe) return x + p->mlp_mm + p->mlp_other;
    return x + p->router + p->m.shared_experts * (p->exp_mm + p->exp_other);
}
static double pp__plan_layer_expert_params(const pp__plan_pmodel *p, int moe) {
    return moe ? p->m.experts * (p->exp_mm + p->exp_other) : 0;
}

/* forward FLOPs of one token through a layer: 2 per matmul parameter it
   uses, plus QK^T and AV over the whole sequence (Narayanan et al. 2021,
   Eq. 2: 24h^2 + 4sh for a GPT layer; causal masking not halved, as there) */
static double pp__plan_layer_flops(const pp__plan_pmodel *p, int moe) {
    double mm = p->attn_mm + (moe ? p->router + (p->m.top_k + p->m.shared_experts) * p->exp_mm : p->mlp_mm);
    return 2 * mm + 2 * p->s * p->a * (p->q_w / p->a + p->hd);
}

/* bytes of 16-bit activations one token keeps in a layer (Korthikanti et
   al. 2022, Sec. 4.1: 34h per token for a GPT layer, + 5as without flash
   attention), split into what tensor parallelism without sequence
   parallelism leaves whole (LayerNorm inputs 4h, attention and MLP inputs
   2h each, two dropout masks h each: 10h) and what it splits (Q, K, V and
   the attention output, 8h; the MLP's 16h). GQA narrows K and V to
   kv_heads; a gated MLP keeps gate, up and their product (3 x 2 ffn
   bytes, the SiLU recomputed); a MoE layer keeps for each of top_k
   experts the token's dispatched copy and the expert's inner activations,
   the same for each shared expert, and fp32 router logits. */
static void pp__plan_layer_act(const pp__plan_pmodel *p, int moe, double *whole, double *split) {
    double h = p->h, inner_e = (p->m.gated ? 6 : 4) * p->m.expert_ffn, inner_e8 = (p->m.gated ? 2 : 1) * p->m.expert_ffn;
    int up = p->m.recompute_norm_up;
    *whole = up ? 6 * h : 10 * h; /* recomputed norms: their outputs (the attention and MLP inputs) go */
    /* with MLA's up-projections recomputed, Q, K, V are rebuilt from the latents */
    *split = 2 * ((up && p->m.kv_lora_rank ? 0 : p->q_w + p->k_w + p->v_w) + p->o_w) + 2 * p->lat_w;
    if (p->m.no_flash_attention) *split += 5 * p->a * p->s;
    if (!moe) *split += (p->m.gated ? 6 : 4) * (double)p->m.ffn;
    else if (!p->m.fp8_moe_act)
        *split += p->m.top_k * (2 * h + inner_e) + p->m.shared_experts * inner_e + 4 * (double)p->m.experts;
    else /* DeepSeek-V3 Sec. 3.3.3: the FP8 dispatched copy (h bytes) and the
            SwiGLU's FP8 inputs, its output recomputed in the backward */
        *split += p->m.top_k * (h + inner_e8) + p->m.shared_experts * inner_e8 + 4 * (double)p->m.experts;
}

/* bytes a layer keeps for `tokens` tokens on one of t tensor-parallel ranks */
static double pp__plan_act_bytes(const pp__plan_pmodel *p, int moe, double tokens, int t, int recompute) {
    double whole, split, sp = p->m.no_seq_parallel ? 1 : t;
    if (recompute) return 2 * tokens * p->h / sp; /* full recomputation keeps the layer input */
    pp__plan_layer_act(p, moe, &whole, &split);
    return tokens * (whole / sp + split / t);
}

PP_PLAN_DEF pp_status pp_model_stats(const pp_model *m, pp_model_counts *out, char *err) {
    pp__plan_pmodel p;
    pp_status st;
    double Lm, Ld;
    if (err) err[0] = 0;
    st = pp__plan_model_resolve(m, &p, err);
    if (st != PP_OK) return st;
    if (!out) return PP_OK;
    memset(out, 0, sizeof *out);
    Ld = p.moe_from;
    Lm = p.m.layers - p.moe_from;
    out->dense_layer_params = Ld > 0 ? pp__plan_layer_shared_params(&p, 0) : 0;
    out->moe_layer_params = Lm > 0 ? pp__plan_layer_shared_params(&p, 1) + pp__plan_layer_expert_params(&p, 1) : 0;
    out->embedding_params = p.emb;
    out->head_params = p.head;
    out->params = Ld * out->dense_layer_params + Lm * out->moe_layer_params + p.emb + p.head + p.final_norm;
    out->active_params = out->params -
                         Lm * (p.m.experts - p.m.top_k) * (p.exp_mm + p.exp_other);
    /* 3 x forward: backward = 2 x forward (Narayanan et al. 2021, Sec. 5.1); LM head 2hV */
    out->flops_per_token = 3 * (Ld * pp__plan_layer_flops(&p, 0) + Lm * pp__plan_layer_flops(&p, 1) + 2 * p.h * p.V);
    return PP_OK;
}

PP_PLAN_DEF double pp_layer_activation_bytes(const pp_model *m, int mbs, int tp, int recompute) {
    pp__plan_pmodel p;
    if (mbs < 1 || tp < 1 || pp__plan_model_resolve(m, &p, NULL) != PP_OK) return 0;
    return pp__plan_act_bytes(&p, pp__plan_is_moe(&p, 0), (double)mbs * p.s, tp, recompute);
}

PP_PLAN_DEF double pp_layer_params(const pp_model *m) {
    pp__plan_pmodel p;
    if (pp__plan_model_resolve(m, &p, NULL) != PP_OK) return 0;
    return pp__plan_layer_shared_params(&p, pp__plan_is_moe(&p, 0)) + pp__plan_layer_expert_params(&p, pp__plan_is_moe(&p, 0));
}

/* ---- presets: published shapes (sources in PRESETS) ---- */

typedef struct pp__plan_model_preset { const char *name; pp_model m; } pp__plan_model_preset;

/* layers, hidden, heads, seq, kv_heads, head_dim, ffn, gated, vocab, untied,
   rope, rmsnorm, experts, top_k, shared, expert_ffn, dense_layers,
   kv_lora_rank, q_lora_rank, rope_head_dim, then the flags (no_flash_attention .. qk_norm), route_nodes */
static const pp__plan_model_preset pp__plan_model_presets[] = {
    {"gpt3-175b", {96, 12288, 96, 2048, 0, 0, 0, 0, 50257, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {"llama3-8b", {32, 4096, 32, 8192, 8, 0, 14336, 1, 128256, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {"llama3-70b", {80, 8192, 64, 8192, 8, 0, 28672, 1, 128256, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {"llama3-405b", {126, 16384, 128, 8192, 8, 0, 53248, 1, 128256, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {"mixtral-8x7b", {32, 4096, 32, 4096, 8, 0, 14336, 1, 32000, 1, 1, 1, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {"deepseek-v3", {61, 7168, 128, 4096, 0, 128, 18432, 1, 129280, 1, 1, 1, 256, 8, 1, 2048, 3, 512, 1536, 64, 0, 0, 0, 0, 0, 0, 0, 4}},
};

typedef struct pp__plan_gpu_preset { const char *name; double mem_gib, peak, hbm, tp_bw, net_bw, eff, gemm_width; } pp__plan_gpu_preset;

/* eff: the achieved fraction of the dense peak, fitted by make calibrate
   (bench/calibrate.c) on published runs: A100 on Narayanan et al. 2021,
   H100 on Llama 3 405B; H800, H200 and B200 take H100's (not fitted) */
#define PP__PLAN_EFF_A100 0.7686
#define PP__PLAN_EFF_H100 0.5479
#define PP__PLAN_GEMM_WIDTH 845.4
static const pp__plan_gpu_preset pp__plan_gpu_presets[] = {
    /* name       memory GiB  dense bf16   HBM B/s  NVLink B/s per direction  network B/s per GPU  efficiency */
    {"a100-80g", 80, 312e12, 2.0e12, 300e9, 25e9, PP__PLAN_EFF_A100, PP__PLAN_GEMM_WIDTH},
    {"h100-80g", 80, 989e12, 3.35e12, 450e9, 50e9, PP__PLAN_EFF_H100, PP__PLAN_GEMM_WIDTH},
    {"h800", 80, 989e12, 3.35e12, 200e9, 50e9, PP__PLAN_EFF_H100, PP__PLAN_GEMM_WIDTH},
    {"h200", 141, 989e12, 4.8e12, 450e9, 50e9, PP__PLAN_EFF_H100, PP__PLAN_GEMM_WIDTH},
    {"b200", 180, 2250e12, 8.0e12, 900e9, 50e9, PP__PLAN_EFF_H100, PP__PLAN_GEMM_WIDTH},
};

#define PP__PLAN_NMODEL_PRESETS ((int)(sizeof pp__plan_model_presets / sizeof pp__plan_model_presets[0]))
#define PP__PLAN_NGPU_PRESETS ((int)(sizeof pp__plan_gpu_presets / sizeof pp__plan_gpu_presets[0]))

PP_PLAN_DEF const char *pp_model_preset_name(int i) {
    return i >= 0 && i < PP__PLAN_NMODEL_PRESETS ? pp__plan_model_presets[i].name : NULL;
}
PP_PLAN_DEF const char *pp_gpu_preset_name(int i) {
    return i >= 0 && i < PP__PLAN_NGPU_PRESETS ? pp__plan_gpu_presets[i].name : NULL;
}

/* "known: a, b, c" into buf */
static void pp__plan_preset_list(char *buf, size_t cap, const char *(*name)(int)) {
    size_t used = 0;
    int i;
    buf[0] = 0;
    for (i = 0; name(i) && used + 1 < cap; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", name(i));
        if (w < 0) break;
        used += (size_t)w;
    }
}

PP_PLAN_DEF pp_status pp_model_preset(const char *name, pp_model *out, char *err) {
    char known[160];
    int i;
    if (err) err[0] = 0;
    if (!out) { pp__plan_err(err, "pp_model_preset: out must not be NULL"); return PP_ERR_INVALID_ARG; }
    for (i = 0; name && i < PP__PLAN_NMODEL_PRESETS; i++)
        if (strcmp(name, pp__plan_model_presets[i].name) == 0) { *out = pp__plan_model_presets[i].m; return PP_OK; }
    pp__plan_preset_list(known, sizeof known, pp_model_preset_name);
    pp__plan_err(err, "unknown model '%.40s'; known: %s", name ? name : "(null)", known);
    return PP_ERR_INVALID_ARG;
}

PP_PLAN_DEF pp_status pp_gpu_preset(const char *name, pp_gpu *out, char *err) {
    char known[160];
    int i;
    if (err) err[0] = 0;
    if (!out) { pp__plan_err(err, "pp_gpu_preset: out must not be NULL"); return PP_ERR_INVALID_ARG; }
    for (i = 0; name && i < PP__PLAN_NGPU_PRESETS; i++)
        if (strcmp(name, pp__plan_gpu_presets[i].name) == 0) {
            const pp__plan_gpu_preset *g = &pp__plan_gpu_presets[i];
            memset(out, 0, sizeof *out);
            out->name = g->name;
            out->mem_bytes = g->mem_gib * 1073741824.0;
            out->peak_flops = g->peak;
            out->hbm_bw = g->hbm;
            out->tp_bw = g->tp_bw;
            out->net_bw = g->net_bw;
            out->efficiency = g->eff;
            out->gemm_width = g->gemm_width;
            return PP_OK;
        }
    pp__plan_preset_list(known, sizeof known, pp_gpu_preset_name);
    pp__plan_err(err, "unknown gpu '%.40s'; known: %s", name ? name : "(null)", known);
    return PP_ERR_INVALID_ARG;
}

/* ---- the request: checked once, defaults applied ---- */

typedef struct pp__plan_preq {
    const pp_plan_request *r;
    pp__plan_pmodel p;
    pp_gpu g;          /* defaults applied */
    double gmem;       /* usable bytes: mem_bytes - reserve */
    double flops_per_token; /* training, for the MFU */
    int node;          /* GPUs on one tp_bw link */
} pp__plan_preq;

static int pp__plan_real_in(char *err, const char *field, double x, double lo, double hi, const char *what) {
    if (pp__plan_finite(x) && x >= lo && x <= hi) return 1;
    pp__plan_err(err, "%s must be %s (%g..%g), got %g", field, what, lo, hi, x);
    return 0;
}

PP_PLAN_DEF pp_gpu pp_gpu_defaults(const pp_gpu *in) {
    pp_gpu g;
    if (in) g = *in;
    else memset(&g, 0, sizeof g);
    if (!g.mem_bytes) g.mem_bytes = 80.0 * 1073741824.0;
    if (!g.peak_flops) g.peak_flops = 312e12;
    if (!g.efficiency) g.efficiency = 190.0 / 312.0;
    if (!g.flops) g.flops = g.efficiency * g.peak_flops;
    if (!g.fp8_speedup) g.fp8_speedup = 1.21;
    if (!g.hbm_bw) g.hbm_bw = 2.0e12;
    if (!g.tp_bw) g.tp_bw = 300e9;
    if (!g.net_bw) g.net_bw = 25e9;
    if (!g.node_gpus) g.node_gpus = 8;
    if (!g.name) g.name = "";
    /* PLANNING, reserve: CUDA context and library workspaces 0.5 GiB, NCCL
       buffers of the TP, PP, DP groups 1 GiB, allocator fragmentation 3% */
    if (g.reserve_bytes == 0) g.reserve_bytes = 1.5 * 1073741824.0 + 0.03 * g.mem_bytes;
    if (g.reserve_bytes < 0) g.reserve_bytes = 0;
    return g;
}

static const char *const pp__plan_recipe_names[] = {"megatron", "fsdp", "zero1", "zero2", "zero3", "deepseek"};
static const char *const pp__plan_recompute_names[] = {"none", "selective", "full"};
PP_PLAN_DEF const char *pp_recipe_name(int i) { return i >= 0 && i < PP_RECIPE_COUNT ? pp__plan_recipe_names[i] : NULL; }
PP_PLAN_DEF const char *pp_recompute_name(int i) {
    return i >= 0 && i < PP_RECOMPUTE_COUNT ? pp__plan_recompute_names[i] : NULL;
}

/* The one check of a request (LIMITS in the docs block), before any work. */
static pp_status pp__plan_resolve(const pp_plan_request *r, pp__plan_preq *q, char *err) {
    const pp_gpu *g = &r->gpu;
    pp_model_counts ms;
    pp_status st;
    double mem;
    memset(q, 0, sizeof *q);
    q->r = r;
    st = pp__plan_model_resolve(&r->model, &q->p, err);
    if (st != PP_OK) return st;
    if (!pp__plan_int_in(err, "gpus", r->gpus, 1, 1 << 24, "a GPU count") ||
        !pp__plan_int_in(err, "global_batch", r->global_batch, 1, 1 << 30, "sequences per step") ||
        !pp__plan_int_in(err, "pp", r->pp, 0, r->gpus, "0 (enumerate) or at most gpus") ||
        !pp__plan_int_in(err, "tp", r->tp, 0, r->gpus, "0 (enumerate) or at most gpus") ||
        !pp__plan_int_in(err, "dp", r->dp, 0, r->gpus, "0 (enumerate) or at most gpus") ||
        !pp__plan_int_in(err, "cp", r->cp, 0, r->gpus, "0 (enumerate) or at most gpus") ||
        !pp__plan_int_in(err, "ep", r->ep, 0, q->p.m.experts > 0 ? q->p.m.experts : 1,
                         "0 (enumerate) or at most experts (1 for a dense model)") ||
        !pp__plan_int_in(err, "mbs", r->mbs, 0, r->global_batch, "0 (enumerate) or at most global_batch") ||
        !pp__plan_int_in(err, "v", r->v, 0, 64, "0 (enumerate) or stages per device") ||
        !pp__plan_int_in(err, "keep_top", r->keep_top, 0, 1000000, "0 (= 10) or a count") ||
        !pp__plan_int_in(err, "no_prune", r->no_prune, 0, 1, "0 or 1") ||
        !pp__plan_int_in(err, "fp8", r->fp8, 0, 1, "0 or 1") ||
        !pp__plan_int_in(err, "no_tp_overlap", r->no_tp_overlap, 0, 1, "0 or 1") ||
        !pp__plan_int_in(err, "no_dp_overlap", r->no_dp_overlap, 0, 1, "0 or 1") ||
        !pp__plan_int_in(err, "no_fb_overlap", r->no_fb_overlap, 0, 1, "0 or 1") ||
        !pp__plan_int_in(err, "gpu.node_gpus", g->node_gpus, 0, 1 << 16, "0 (= 8) or GPUs per node"))
        return PP_ERR_INVALID_ARG;
    if (!pp__plan_real_in(err, "gpu.mem_bytes", g->mem_bytes, 0, 1125899906842624.0, "0 (= 80 GiB) or bytes up to 1 PiB") ||
        !pp__plan_real_in(err, "gpu.peak_flops", g->peak_flops, 0, 1e18, "0 (= 312e12) or FLOP/s") ||
        !pp__plan_real_in(err, "gpu.flops", g->flops, 0, 1e18, "0 (= efficiency x peak) or FLOP/s") ||
        !pp__plan_real_in(err, "gpu.efficiency", g->efficiency, 0, 1, "0 (= 190/312) or a fraction of peak") ||
        !pp__plan_real_in(err, "gpu.fp8_speedup", g->fp8_speedup, 0, 4, "0 (= 1.21) or a speed-up over 16-bit") ||
        !pp__plan_real_in(err, "gpu.gemm_width", g->gemm_width, 0, 1e6, "0 (off) or a width") ||
        !pp__plan_real_in(err, "gpu.hbm_bw", g->hbm_bw, 0, 1e15, "0 (= 2e12) or bytes/s") ||
        !pp__plan_real_in(err, "gpu.tp_bw", g->tp_bw, 0, 1e15, "0 (= 300e9) or bytes/s") ||
        !pp__plan_real_in(err, "gpu.net_bw", g->net_bw, 0, 1e15, "0 (= 25e9) or bytes/s") ||
        !pp__plan_real_in(err, "gpu.tp_slowdown", g->tp_slowdown, -1e300, 10, "0 (= 0.037), < 0 (none) or a factor") ||
        !pp__plan_real_in(err, "gpu.reserve_bytes", g->reserve_bytes, -1e300, 1125899906842624.0,
                          "0 (the default), < 0 (none) or bytes") ||
        !pp__plan_int_in(err, "recipe", r->recipe, 0, PP_RECIPE_COUNT - 1,
                         "0 megatron, 1 fsdp, 2 zero1, 3 zero2, 4 zero3, 5 deepseek") ||
        !pp__plan_int_in(err, "recompute", r->recompute, 0, PP_RECOMPUTE_COUNT - 1, "0 none, 1 selective, 2 full"))
        return PP_ERR_INVALID_ARG;
    q->g = pp_gpu_defaults(g);
    q->node = q->g.node_gpus;
    mem = q->g.mem_bytes;
    if (q->g.reserve_bytes >= mem) {
        pp__plan_err(err, "gpu.reserve_bytes must be below the GPU memory (%.1f GiB), got %.1f GiB",
                     mem / 1073741824.0, q->g.reserve_bytes / 1073741824.0);
        return PP_ERR_INVALID_ARG;
    }
    if (q->g.flops > q->g.peak_flops) {
        pp__plan_err(err, "gpu.flops %g is above gpu.peak_flops %g: the achieved rate cannot pass the peak",
                     q->g.flops, q->g.peak_flops);
        return PP_ERR_INVALID_ARG;
    }
    q->gmem = mem - q->g.reserve_bytes;
    if (r->times) {
        const pp_times *t = r->times;
        double lo = 1e300, hi = 0, x[4];
        int i;
        x[0] = t->f; x[1] = t->b; x[2] = t->w; x[3] = t->comm;
        for (i = 0; i < 4; i++) {
            if (!pp__plan_finite(x[i]) || x[i] < 0 || x[i] > 1e9 || (i < 2 && x[i] <= 0)) {
                pp__plan_err(err, "times: F and B must be > 0, W and comm >= 0, all finite seconds up to 1e9 "
                             "(got %g, %g, %g, %g)", t->f, t->b, t->w, t->comm);
                return PP_ERR_INVALID_ARG;
            }
            if (x[i] > 0 && x[i] < lo) lo = x[i];
            if (x[i] > hi) hi = x[i];
        }
        if (hi > 1e6 * lo) {
            pp__plan_err(err, "times: the largest of F, B, W, comm (%g) is more than 1e6 x the smallest nonzero one (%g); "
                         "give times within a factor of 1e6 (or 0 for W, comm)", hi, lo);
            return PP_ERR_INVALID_ARG;
        }
    }
    if (r->v == 1) {
        pp__plan_err(err, "v must be 0 (enumerate) or 2..64: stages per device of the looped schedules (v = 1 is "
                     "plain 1f1b, whose schedules are planned anyway)");
        return PP_ERR_INVALID_ARG;
    }
    if (r->schedule && !pp_sched_find(r->schedule)) {
        pp__plan_err(err, "unknown schedule '%.40s' (ppsched --list names them)", r->schedule);
        return PP_ERR_UNKNOWN_SCHEDULE;
    }
    if (r->tp > 0 && q->p.m.heads % r->tp) {
        pp__plan_err(err, "tp %d does not divide heads %d: tensor parallelism splits the heads evenly", r->tp,
                     q->p.m.heads);
        return PP_ERR_INVALID_ARG;
    }
    if (r->ep > 0 && q->p.m.experts % r->ep) {
        pp__plan_err(err, "ep %d does not divide experts %d: each expert-parallel rank holds experts / ep experts",
                     r->ep, q->p.m.experts);
        return PP_ERR_INVALID_ARG;
    }
    if (r->cp > 0 && q->p.m.seq % r->cp) {
        pp__plan_err(err, "cp %d does not divide seq %d: context parallelism splits the sequence evenly", r->cp,
                     q->p.m.seq);
        return PP_ERR_INVALID_ARG;
    }
    {
        long long P = r->pp > 0 ? r->pp : 1, T = r->tp > 0 ? r->tp : 1, C = r->cp > 0 ? r->cp : 1, D = r->dp > 0 ? r->dp : 1;
        long long all = P * T * C * D; /* each <= gpus <= 2^24: no overflow before the test */
        if (all > r->gpus || r->gpus % all ||
            (r->pp > 0 && r->tp > 0 && r->cp > 0 && r->dp > 0 && all != r->gpus)) {
            pp__plan_err(err, "the layout does not multiply to the GPU count: pp x tp x cp x dp = %lld x %lld x %lld x %lld "
                         "= %lld must %s %d (dp = gpus / (tp x cp x pp) must be exact)", P, T, C, D, all,
                         r->pp > 0 && r->tp > 0 && r->cp > 0 && r->dp > 0 ? "equal" : "divide", r->gpus);
            return PP_ERR_INVALID_ARG;
        }
    }
    pp_model_stats(&q->p.m, &ms, NULL);
    q->flops_per_token = ms.flops_per_token;
    return PP_OK;
}

/* ---- one layout: items, stages, bytes, times ---- */

/* Per item (0 = embedding, 1..L = layers, L+1 = LM head): forward time of one
   microbatch (b = its time without communication), its parameters on one
   rank (expert ones apart), activation bytes kept per microbatch. */
typedef struct pp__plan_item {
    double f, w, params, eparams, act;
    double tpc, cpc, epc; /* of f: tensor-, context-, expert-parallel communication */
    double rc;            /* forward time redone before its backward (recomputation) */
    double big;           /* its largest weight matrix on one rank (ZeRO-3's gathered buffer) */
    double peak_act;      /* a layer's whole activations, rebuilt while full recomputation runs its backward */
    double act_in;        /* a layer's input alone (what 1f1b-r keeps) */
    int head;             /* 1: the LM head (its activations are the logits) */
} pp__plan_item;

/* one layout's ranks: tensor, context, expert parallel, microbatch size;
   etp: the experts' tensor-parallel ranks, tp where EP groups are carved
   from dp x cp, 1 where they fold TP ranks in (Megatron-Core's MoE
   parallel folding: expert layers use EP x expert-DP over TP x CP x DP) */
typedef struct pp__plan_lay { int pp, tp, cp, ep, dp, mbs, etp; } pp__plan_lay;

/* compute slowdown of a TP-sharded layer on `tokens` rows (PLANNING, pass times) */
static double pp__plan_tp_slow(const pp_gpu *g, int tp, double tokens) {
    double a = g->tp_slowdown == 0 ? 0.037 : g->tp_slowdown < 0 ? 0 : g->tp_slowdown, l = 0;
    while (tp > 1) { l += 1; tp /= 2; }
    return 1 + a * l * (tokens > 1024 ? 1024 / tokens : 1);
}

/* a link between `ranks` x tp GPUs: NVLink inside a node, else the network */
static double pp__plan_link(const pp__plan_preq *q, int ranks, int tp) {
    return (double)ranks * tp <= q->node ? q->g.tp_bw : q->g.net_bw;
}

/* which of a layout's TP, CP, EP groups span nodes (PP_SPAN_*): their
   collectives run at net_bw */
static int pp__plan_span(const pp__plan_preq *q, const pp__plan_lay *y) {
    int s = 0;
    if (y->tp > q->node) s |= PP_SPAN_TP;
    if (y->cp > 1 && (double)y->cp * y->tp > q->node) s |= PP_SPAN_CP;
    if (y->ep > 1 && (double)y->ep * y->etp > q->node) s |= PP_SPAN_EP;
    return s;
}

/* activation bytes a layer keeps under the request's recomputation
   (full: the layer input; selective: without the s x s scores) */
static double pp__plan_act_kept(const pp__plan_preq *q, int moe, double tokens, int t, int full) {
    pp__plan_pmodel sel;
    if (full || q->r->recompute == PP_RECOMPUTE_FULL) return pp__plan_act_bytes(&q->p, moe, tokens, t, 1);
    if (q->r->recompute != PP_RECOMPUTE_SELECTIVE || !q->p.m.no_flash_attention)
        return pp__plan_act_bytes(&q->p, moe, tokens, t, 0);
    sel = q->p;
    sel.m.no_flash_attention = 0;
    return pp__plan_act_bytes(&sel, moe, tokens, t, 0);
}

/* Seconds per byte of one token copy for a node-limited all-to-all
   (DeepSeek-V3 report, Sec. 2.1.2 and 3.2.2): a token of top_k experts
   reaches m = min(R, nodes) nodes, k/m experts on each; it crosses IB once
   to each remote one, m (nodes-1)/nodes copies, to the GPU of the sender's
   in-node index there, which forwards it over NVLink to each other of its
   node's `ranks` EP ranks holding one of its experts, as the sender does in
   its own node: per node (k/m)(ranks-1)/ranks copies, k (ranks-1)/ranks in
   all (one per expert, as the report's "3.2 experts per node" counts).
   The two legs run at once (the report: "fully overlapped"), so the
   slower one is the all-to-all: IB at net_bw, NVLink at tp_bw as the TP
   collectives use it. The combine is the same traffic backwards. */
static double pp__plan_a2a_routed(const pp__plan_preq *q, int top_k, int route, double nodes, double ranks) {
    double m = route < nodes ? route : nodes, ib = m * (nodes - 1) / nodes / q->g.net_bw;
    double nv = ranks > 1 ? top_k * (ranks - 1) / ranks / q->g.tp_bw : 0;
    return ib > nv ? ib : nv;
}

/* forward time of a layer kind: its compute and its communication apart */
typedef struct pp__plan_ltime { double compute, tp, cp, ep, core; } pp__plan_ltime;
static pp__plan_ltime pp__plan_layer_time(const pp__plan_preq *q, const pp__plan_lay *y, int moe) {
    const pp__plan_pmodel *p = &q->p;
    double t = y->tp, T = (double)y->mbs * p->s / y->cp; /* tokens on this rank */
    double attn = T * 2 * p->s * p->a * (p->q_w / p->a + p->hd) / t, mm = T * pp__plan_layer_flops(p, moe) / t - attn;
    double w = pp__plan_layer_shared_params(p, moe) / t + pp__plan_layer_expert_params(p, moe) / ((double)y->ep * y->etp);
    double bytes = 2 * w + pp__plan_act_bytes(p, moe, T, y->tp, 0), tf, tm;
    pp__plan_ltime r;
    memset(&r, 0, sizeof r);
    if (q->g.gemm_width > 0) { /* narrow matmuls fill the GPU less: each group at w / (w + gemm_width) */
        double wa = p->o_w / t, wm = moe ? p->m.expert_ffn / (double)y->etp : p->m.ffn / t, gw = q->g.gemm_width;
        double fa = T * 2 * (p->attn_mm + (moe ? p->router : 0)) / t, fm = mm - fa;
        mm = fa * (wa + gw) / wa + fm * (wm + gw) / wm;
    }
    /* FP8: the layer's matmuls at the FP8 rate, attention scores at 16 bits */
    tm = mm / (q->r->fp8 ? q->g.fp8_speedup * q->g.flops : q->g.flops) + attn / q->g.flops;
    tf = tm > bytes / q->g.hbm_bw ? tm : bytes / q->g.hbm_bw;
    tf *= pp__plan_tp_slow(&q->g, y->tp, T);
    /* 2 all-gather/reduce-scatter pairs; a TP group larger than a node runs over the network */
    if (y->tp > 1) r.tp = 2 * 2 * (t - 1) / t * 2 * T * p->h / pp__plan_link(q, 1, y->tp);
    /* TP overlap (Megatron's --tp-comm-overlap, Transformer Engine's
       userbuffers): the all-gathers and reduce-scatters run in chunks beside
       the matmuls that use them; only what outlasts the compute shows */
    if (!q->r->no_tp_overlap) r.tp = r.tp > tf ? r.tp - tf : 0;
    if (y->cp > 1) { /* ring attention: K and V go round the cp ranks, overlapped with the scores */
        double kv = (y->cp - 1) * T * 2 * (p->k_w + p->v_w) / t / pp__plan_link(q, y->cp, y->tp);
        double scores = T * 2 * p->s * (p->q_w + p->o_w) / t / q->g.flops;
        if (kv > scores) r.cp = kv - scores;
    }
    if (moe && y->ep > 1) { /* all-to-all: each token to top_k experts and back (PLANNING, pass times) */
        double copies = p->m.top_k * (y->ep - 1.0) / y->ep, gpus = (double)y->ep * y->etp, nodes = gpus / q->node;
        double sp = p->m.no_seq_parallel ? 1 : t, wire = (q->r->fp8 ? 1 : 2) + 2;
        /* dispatch in FP8 with req.fp8 (DeepSeek-V3 Sec. 3.3.2), combine in 16 bits */
        r.ep = (T / sp) * copies * p->h * wire / pp__plan_link(q, y->ep, y->etp);
        if (p->m.route_nodes && nodes > 1 && p->m.route_nodes < p->m.top_k) /* node-limited: IB and NVLink legs */
            r.ep = (T / sp) * p->h * wire *
                   pp__plan_a2a_routed(q, p->m.top_k, p->m.route_nodes, nodes, q->node / (double)y->etp);
    }
    r.compute = tf;
    /* the attention core (QK^T, AV), which selective recomputation redoes */
    r.core = T * 2 * p->s * p->a * (p->q_w / p->a + p->hd) / t / q->g.flops * pp__plan_tp_slow(&q->g, y->tp, T);
    return r;
}

static void pp__plan_items(const pp__plan_preq *q, const pp__plan_lay *y, pp__plan_item *it, double *comm) {
    const pp__plan_pmodel *p = &q->p;
    double t = y->tp, T = (double)y->mbs * p->s / y->cp, V = p->V, h = p->h, flops, bytes, tf;
    int L = p->m.layers, i, k;
    double sp = p->m.no_seq_parallel ? 1 : t, big[2];
    pp__plan_ltime lt[2];
    memset(it, 0, sizeof(pp__plan_item) * (size_t)(L + 2));
    for (k = 0; k < 2; k++) {
        lt[k] = pp__plan_layer_time(q, y, k);
        /* the largest matrix of a layer: an attention projection or an MLP (expert) matrix */
        big[k] = p->h * (k ? (double)p->m.expert_ffn : (double)p->m.ffn);
        if (p->h * p->q_w > big[k]) big[k] = p->h * p->q_w;
        if (p->h * p->o_w > big[k]) big[k] = p->h * p->o_w;
        big[k] /= t;
    }
    for (i = 1; i <= L; i++) {
        int moe = pp__plan_is_moe(p, i - 1);
        const pp__plan_ltime *x = &lt[moe];
        it[i].f = x->compute + x->tp + x->cp + x->ep;
        it[i].w = x->compute;
        it[i].tpc = x->tp;
        it[i].cpc = x->cp;
        it[i].epc = x->ep;
        /* full: the forward again, its collectives included; selective: the attention core */
        it[i].rc = q->r->recompute == PP_RECOMPUTE_FULL ? it[i].f
                 : q->r->recompute == PP_RECOMPUTE_SELECTIVE && p->m.no_flash_attention ? x->core : 0;
        it[i].params = pp__plan_layer_shared_params(p, moe) / t;
        it[i].eparams = pp__plan_layer_expert_params(p, moe) / ((double)y->ep * y->etp);
        it[i].act = pp__plan_act_kept(q, moe, T, y->tp, 0);
        it[i].act_in = pp__plan_act_bytes(p, moe, T, y->tp, 1);
        it[i].peak_act = pp__plan_act_bytes(p, moe, T, y->tp, 0);
        it[i].big = big[moe];
    }
    /* embedding: a gather, memory-bound; LM head: 2 T h V FLOPs, fp32 logits */
    it[0].f = 2 * T * h / t / q->g.hbm_bw;
    it[0].w = it[0].f;
    it[0].params = p->emb / t;
    it[0].eparams = 0;
    /* the token ids (8 bytes) and the embedding's dropout mask (Megatron's
       report_theoretical_memory), split as the layers' by SP */
    it[0].act = T * (8 + h) / sp;
    it[0].big = p->emb / t;
    flops = 2 * T * h * V / t;
    bytes = 2 * V * h / t + 4 * T * V / t;
    tf = flops / q->g.flops > bytes / q->g.hbm_bw ? flops / q->g.flops : bytes / q->g.hbm_bw;
    tf *= pp__plan_tp_slow(&q->g, y->tp, T);
    it[L + 1].f = tf;
    it[L + 1].w = tf;
    /* the head's weight: its own, or with pp > 1 the copy of the tied embedding Megatron keeps on the last stage */
    it[L + 1].params = (p->m.untied || y->pp > 1 ? V * h : 0) / t + p->final_norm / t;
    it[L + 1].eparams = 0;
    /* logits and the loss: the final norm's and the head's 16-bit inputs
       (2 x 2 T h) and the fp32 softmax the cross-entropy keeps (4 T V), V
       split by TP (Megatron's report_theoretical_memory: 4 s b h (1 + V/h)) */
    it[L + 1].act = 4 * T * h / sp + 4 * T * V / t;
    it[L + 1].act_in = 2 * T * V / t; /* of act: freed by a split backward's B (4 T V fp32 -> 2 T V) */
    it[L + 1].big = V * h / t;
    it[L + 1].head = 1;
    /* one microbatch's activation (16-bit, T x h, / t with SP) sent across
       a stage boundary: consecutive stages are tp x cp x dp GPUs apart
       (Megatron's rank order, pp outermost), so every boundary stays on
       NVLink only when the whole pipeline, pp x that, fits a node; the
       schedule takes one send time for every edge, so otherwise it is the
       slowest boundary's, over the network */
    *comm = 2 * T * h / sp / pp__plan_link(q, y->pp * y->cp * y->dp, y->tp);
}

static void pp__plan_cand_reason(pp_candidate *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->reason, sizeof c->reason, fmt, ap);
    va_end(ap);
}

/* A build shared by layouts of equal (schedule, v, n_b, memory limit)
   whose stage times are those of the build times one factor (to 1e-12):
   the schedule is the same, every time scaled. The cache is emptied per
   (pp, tp, cp); a hit is typically another mbs or ep at tp = 1. */
#define PP__PLAN_CACHE 256
typedef struct pp__plan_cache {
    int id, v, nb, S;
    double lim, rin;
    pp_schedule *s; /* NULL: a pruned candidate's entry, built on its first hit */
    pp_times *stt;  /* [S]: its stage times */
    int known;      /* 1: its build's result is in the memo (s may be NULL): never pruned */
} pp__plan_cache;

/* the factor x with a[s] = x b[s] for every time of every stage, or 0 */
static double pp__plan_ratio(const pp_times *a, const pp_times *b, int S) {
    double x = a[0].f / b[0].f;
    int s;
    for (s = 0; s < S; s++) {
        const double p[4] = {a[s].f, a[s].b, a[s].w, a[s].comm}, q[4] = {b[s].f, b[s].b, b[s].w, b[s].comm};
        int k;
        for (k = 0; k < 4; k++) {
            double d = p[k] - x * q[k];
            if ((d < 0 ? -d : d) > 1e-12 * (p[k] < 0 ? -p[k] : p[k])) return 0;
        }
    }
    return x;
}

/* splits of the current items, by stage count (v values + 1 + dualpipe's) */
#define PP__PLAN_SPLITS 24

/* What the planner reads from one build with one layout's bytes: the
   makespan, the busiest device's work, the largest device's peak (its
   static bytes, units, activations and logits) and the sends waited on;
   rdy: each stage's last gradient pass's end ([S]), then each device's last
   pass's end ([pp]), then each stage's first F's start ([S]), in w->sact or
   after a memo entry's key. */
typedef struct pp__plan_res { double makespan, work, peak, static_bytes, units, act, logits, p2p; const double *rdy; } pp__plan_res;

/* The memo: every build's result by its exact inputs (schedule, v, n_b, S,
   limit, recomputed input, F&B settings, the send time, every stage's times,
   the bytes each stage keeps and each device's static bytes), over the whole
   plan. Equal inputs give the same build, bit for bit (pp_sched_build is
   deterministic), so a hit is the result the build would give. Layouts of
   different (pp, tp, cp) triples meet here: cp = 2 at mbs = 2 and cp = 1 at
   mbs = 1 have the same tokens per rank, dp x cp and n. */
typedef struct pp__plan_memo { unsigned long long hash; double *key; int len; pp__plan_res res; } pp__plan_memo;
#define PP__PLAN_MEMO_KEY(items) (16 + 12 * 2 * (size_t)(items))
/* the most key doubles the memo keeps (16 MiB); past it, nothing is added */
#define PP__PLAN_MEMO_DOUBLES 2097152.0

/* each schedule's best step time so far (branch and bound) */
typedef struct pp__plan_inc { double step; char lay[64]; } pp__plan_inc;

/* One plan's working memory, from the caller's allocator. */
typedef struct pp__plan_pws {
    pp_allocator al;
    pp__plan_item *it;        /* [L + 2] of the current (tp, cp, ep, mbs) */
    double *cost;        /* [L + 2] */
    pp_times *stt;       /* [2 (L + 2)] */
    pp_times *fbc;       /* [2 (L + 2)]: each stage's all-to-all part of F and B (pp_config.fb_comm) */
    double *dev_static, *dev_params, *dev_eparams; /* [L + 2]: pp <= items */
    double *dev_big, *dev_unit; /* [L + 2]: a device's largest matrix, largest item (gathered by zero3, fsdp) */
    double *sact;        /* [25 (L + 2)]: per stage kept bytes, logits, TP, CP, EP comm, recompute
                            transient, logits freed by B, round trip (pp__plan_live_bound), DP
                            synchronisation time at the end; a build's ready times (pp__plan_res.rdy);
                            DP parameter all-gather time at the start */
    double comm;         /* pipeline send time of the current items */
    int nsplit, split_S[PP__PLAN_SPLITS];
    int *split;          /* [PP__PLAN_SPLITS][L + 2] */
    double *split_cost;  /* [L + 2]: the costs the kept splits were made for */
    pp__plan_cache cache[PP__PLAN_CACHE];
    int ncache, items;
    double *mkey;        /* [PP__PLAN_MEMO_KEY(items)]: the current memo key */
    pp__plan_memo *memo; /* [memo_cap] */
    int nmemo, memo_cap;
    double memo_doubles; /* key doubles held */
} pp__plan_pws;

/* keeps a build (or, s = NULL, a pruned layout's times); 0 when full */
static int pp__plan_cache_put(pp__plan_pws *w, int id, int v, int nb, int S, double lim, double rin, pp_schedule *s,
                              const pp_times *stt) {
    pp__plan_cache *e;
    pp_times *copy;
    if (w->ncache == PP__PLAN_CACHE) return 0;
    copy = (pp_times *)pp__plan_malloc(&w->al, sizeof(pp_times) * (size_t)S);
    if (!copy) return 0;
    memcpy(copy, stt, sizeof(pp_times) * (size_t)S);
    e = &w->cache[w->ncache++];
    e->id = id; e->v = v; e->nb = nb; e->S = S; e->lim = lim; e->rin = rin;
    e->s = s; e->stt = copy; e->known = 0;
    return 1;
}

static void pp__plan_cache_clear(pp__plan_pws *w) {
    while (w->ncache > 0) {
        --w->ncache;
        pp_sched_free(w->cache[w->ncache].s);
        pp__plan_free(&w->al, w->cache[w->ncache].stt);
    }
}

/* the memo key of building cb (S stages on pp devices, busiest its busiest
   device) with the current bytes, in w->mkey: its length, or -1 */
static int pp__plan_memo_key(pp__plan_pws *w, const pp_config *cb, int id, int S, int pp, int busiest) {
    int items = w->items, s, n = 0;
    double *k = w->mkey;
    const double *sact = w->sact;
    if (!k) return -1;
    k[n++] = id; k[n++] = cb->chunks; k[n++] = cb->microbatches; k[n++] = S; k[n++] = pp; k[n++] = busiest;
    k[n++] = cb->mem_limit; k[n++] = cb->recompute_input; k[n++] = cb->fb_overlap; k[n++] = cb->fb_share;
    k[n++] = cb->fb_time; k[n++] = cb->times.comm; k[n++] = cb->times.f; k[n++] = cb->times.b; k[n++] = cb->times.w;
    for (s = 0; s < S; s++) {
        const pp_times *t = &cb->stage_times[s];
        k[n++] = t->f; k[n++] = t->b; k[n++] = t->w; k[n++] = t->comm;
        if (cb->fb_overlap && cb->fb_comm) { k[n++] = cb->fb_comm[s].f; k[n++] = cb->fb_comm[s].b; }
        /* kept bytes, logits, recomputation transient, logits freed by B */
        k[n++] = sact[s]; k[n++] = sact[2 * items + s]; k[n++] = sact[10 * items + s]; k[n++] = sact[12 * items + s];
    }
    for (s = 0; s < pp; s++) k[n++] = w->dev_static[s];
    return n;
}

static unsigned long long pp__plan_memo_hash(const double *k, int n) {
    const unsigned char *b = (const unsigned char *)k;
    unsigned long long h = 1469598103934665603ULL;
    size_t i, m = (size_t)n * sizeof(double);
    for (i = 0; i < m; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* 1 and *res when the memo holds w->mkey[0..n) */
static int pp__plan_memo_find(pp__plan_pws *w, int n, pp__plan_res *res) {
    unsigned long long h = pp__plan_memo_hash(w->mkey, n);
    int i;
    for (i = 0; i < w->nmemo; i++) {
        const pp__plan_memo *e = &w->memo[i];
        if (e->hash == h && e->len == n && !memcmp(e->key, w->mkey, sizeof(double) * (size_t)n)) {
            *res = e->res;
            res->rdy = e->key + e->len;
            return 1;
        }
    }
    return 0;
}

/* adds w->mkey[0..n) -> res (nothing when out of room or memory: a later
   equal layout builds again) */
static void pp__plan_memo_put(pp__plan_pws *w, int n, const pp__plan_res *res) {
    pp__plan_memo *e;
    int nr = 2 * (int)w->mkey[3] + (int)w->mkey[4]; /* S + pp ready times, S first F starts after the key */
    if (w->memo_doubles + n + nr > PP__PLAN_MEMO_DOUBLES) return;
    if (w->nmemo == w->memo_cap) {
        int cap = w->memo_cap ? 2 * w->memo_cap : 256;
        pp__plan_memo *m = (pp__plan_memo *)pp__plan_malloc(&w->al, sizeof(pp__plan_memo) * (size_t)cap);
        if (!m) return;
        if (w->nmemo) memcpy(m, w->memo, sizeof(pp__plan_memo) * (size_t)w->nmemo);
        pp__plan_free(&w->al, w->memo);
        w->memo = m;
        w->memo_cap = cap;
    }
    e = &w->memo[w->nmemo];
    e->key = (double *)pp__plan_malloc(&w->al, sizeof(double) * (size_t)(n + nr));
    if (!e->key) return;
    memcpy(e->key, w->mkey, sizeof(double) * (size_t)n);
    memcpy(e->key + n, res->rdy, sizeof(double) * (size_t)nr);
    e->len = n;
    e->hash = pp__plan_memo_hash(w->mkey, n);
    e->res = *res;
    w->nmemo++;
    w->memo_doubles += n + nr;
}

static void pp__plan_memo_clear(pp__plan_pws *w) {
    while (w->nmemo > 0) pp__plan_free(&w->al, w->memo[--w->nmemo].key);
    pp__plan_free(&w->al, w->memo);
    w->memo = NULL;
    w->memo_cap = 0;
    w->memo_doubles = 0;
}

/* reads a build with the current bytes (w->sact, dev_static): bytes are
   each device's passes in order, F allocating its stage's bytes, W (or BW)
   freeing them, as pp_sched_peak_memory does in units; full recomputation
   adds the largest layer it rebuilds in a backward */
static void pp__plan_read(const pp__plan_pws *w, const pp_schedule *sch, int busiest, pp__plan_res *res) {
    int items = w->items, dev, p, pp = sch->devices;
    const double *sact = w->sact, *slog = w->sact + 2 * items, *stra = w->sact + 10 * items, *slogb = w->sact + 12 * items;
    double work = 0, wd, best_peak = 0, *rdy = w->sact + 18 * items;
    memset(res, 0, sizeof *res);
    for (p = 0; p < sch->stages + pp; p++) rdy[p] = 0;
    for (p = 0; p < sch->stages; p++) rdy[sch->stages + pp + p] = 1e300;
    for (dev = 0; dev < pp; dev++) {
        double cur = 0, curl = 0, pk = 0, pkl = 0, tra = 0, peak_b;
        wd = 0;
        for (p = sch->device_start[dev]; p < sch->device_start[dev + 1]; p++) {
            const pp_pass *x = &sch->passes[p];
            wd += x->end - x->start;
            if (x->end > rdy[sch->stages + dev]) rdy[sch->stages + dev] = x->end;
            if (x->kind != PP_F && x->end > rdy[x->stage]) rdy[x->stage] = x->end;
            if (x->kind == PP_F && x->start < rdy[sch->stages + pp + x->stage]) rdy[sch->stages + pp + x->stage] = x->start;
            if (x->kind == PP_F) {
                cur += sact[x->stage];
                curl += slog[x->stage];
                if (cur + curl > pk + pkl) { pk = cur; pkl = curl; }
                if (stra[x->stage] > tra) tra = stra[x->stage];
            } else if (x->kind == PP_B) {
                curl -= slogb[x->stage];
            } else if (x->kind == PP_W) {
                cur -= sact[x->stage];
                curl -= slog[x->stage] - slogb[x->stage];
            } else if (x->kind == PP_BW) {
                cur -= sact[x->stage];
                curl -= slog[x->stage];
            }
        }
        if (wd > work) work = wd;
        peak_b = w->dev_static[dev] + pk + pkl + tra;
        if (peak_b > best_peak) {
            best_peak = peak_b;
            res->peak = peak_b;
            res->static_bytes = w->dev_static[dev];
            res->units = sch->peak_memory[dev];
            res->act = pk + tra;
            res->logits = pkl;
        }
    }
    /* the busiest device's wait on sends (PLANNING, step split): an idle
       gap that ends at a pass whose input comes from another device
       waited up to times.comm on that send */
    for (p = sch->device_start[busiest]; p < sch->device_start[busiest + 1]; p++) {
        const pp_pass *x = &sch->passes[p];
        double gap = x->start - (p > sch->device_start[busiest] ? sch->passes[p - 1].end : 0);
        pp_kind ik;
        int is;
        if (gap > 0 && pp_pass_input(sch->stages, sch->microbatches, sch->copies, sch->split_backward, x->kind,
                                     x->stage, x->microbatch, &ik, &is) == 1 &&
            sch->stage_device[is] != busiest)
            res->p2p += gap < sch->times.comm ? gap : sch->times.comm;
    }
    res->makespan = sch->makespan;
    res->work = work;
    res->rdy = rdy;
}

/* Among the splits whose slowest stage costs mx, the one that gives the
   first stages the fewest items: each stage from the last takes what fits
   in mx, leaving one item for each stage before it. The first stages hold
   the most microbatches in flight (1F1B's first holds pp), so this costs
   no time bound and lowers the peak. Its first stage fits in mx: greedy
   boundaries from the back lie at or before those of any split within mx. */
static void pp__plan_split_back(const double *cost, int items, int S, double mx, int *first) {
    int k, j = items;
    double tol = mx * (1 + 1e-12);
    for (k = S - 1; k >= 1; k--) {
        double x = cost[j - 1];
        int i = j - 1;
        while (i - 1 >= k && x + cost[i - 1] <= tol) x += cost[--i];
        first[k] = i;
        j = i;
    }
    first[0] = 0;
}

/* stages of at most M the split from the front needs (each takes what fits) */
static int pp__plan_split_count(const double *cost, int items, double M) {
    int i, n = 1;
    double x = 0;
    for (i = 0; i < items; i++) {
        if (cost[i] > M) return items + 1;
        if (x + cost[i] > M) { n++; x = 0; }
        x += cost[i];
    }
    return n;
}

/* pp_partition's least slowest stage, in O(items) per probe instead of its
   O(S items log items): the count above falls as M rises, so bisect M to
   adjacent values and take the slowest stage of the split at the upper one
   (every split within the lower one needs more than S stages). items >= S. */
static double pp__plan_split_minmax(const double *cost, int items, int S) {
    double lo = 0, hi = 0, m = 0, x = 0;
    int i, it;
    for (i = 0; i < items; i++) {
        hi += cost[i];
        if (cost[i] > lo) lo = cost[i];
    }
    if (pp__plan_split_count(cost, items, lo) <= S) hi = lo;
    for (it = 0; it < 200 && hi > lo; it++) {
        double mid = lo + 0.5 * (hi - lo);
        if (mid <= lo || mid >= hi) break;
        if (pp__plan_split_count(cost, items, mid) <= S) hi = mid; else lo = mid;
    }
    for (i = 0; i < items; i++) { /* the slowest stage of the split at hi */
        if (x + cost[i] > hi) { if (x > m) m = x; x = 0; }
        x += cost[i];
    }
    return x > m ? x : m;
}

/* the split of the current items into S stages (kept per S until the items change) */
static const int *pp__plan_split(pp__plan_pws *w, int items, int S, char *err) {
    int k;
    double mx;
    for (k = 0; k < w->nsplit; k++)
        if (w->split_S[k] == S) return w->split + (size_t)k * items;
    if (w->nsplit == PP__PLAN_SPLITS) w->nsplit = 0;
    k = w->nsplit;
    (void)err;
    mx = pp__plan_split_minmax(w->cost, items, S);
    pp__plan_split_back(w->cost, items, S, mx, w->split + (size_t)k * items);
    w->split_S[k] = S;
    w->nsplit = k + 1;
    return w->split + (size_t)k * items;
}

/* "pp=5 tp=4 dp=1 mbs=1", with cp, ep, v where they are not 1 */
static void pp__plan_lay_name(char *buf, size_t cap, int pp, int tp, int cp, int ep, int dp, int v, int mbs) {
    int u = snprintf(buf, cap, "pp=%d tp=%d", pp, tp);
    if (u > 0 && cp > 1 && (size_t)u < cap) u += snprintf(buf + u, cap - (size_t)u, " cp=%d", cp);
    if (u > 0 && ep > 1 && (size_t)u < cap) u += snprintf(buf + u, cap - (size_t)u, " ep=%d", ep);
    if (u > 0 && (size_t)u < cap) u += snprintf(buf + u, cap - (size_t)u, " dp=%d", dp);
    if (u > 0 && v > 2 && (size_t)u < cap) u += snprintf(buf + u, cap - (size_t)u, " v=%d", v);
    if (u > 0 && (size_t)u < cap) snprintf(buf + u, cap - (size_t)u, " mbs=%d", mbs);
}

static int pp__plan_cand_cmp(const void *x, const void *y) {
    const pp_candidate *a = (const pp_candidate *)x, *b = (const pp_candidate *)y;
    int ra = a->step_time > 0 ? 0 : a->fits ? 1 : 2, rb = b->step_time > 0 ? 0 : b->fits ? 1 : 2;
    if (ra != rb) return ra - rb;
    if (ra == 0 && a->step_time != b->step_time) return a->step_time < b->step_time ? -1 : 1;
    if (ra == 2 && a->peak_bytes != b->peak_bytes) return a->peak_bytes < b->peak_bytes ? -1 : 1;
    return 0;
}

/* the most passes one build may have (pp x v x n_b x 3) */
#define PP__PLAN_MAX_PASSES 4194304.0

/* The schedule's facts the planner reads (pp_sched_info, PP_SCHED_LIST's
   steady and search_d columns). steady: after steady x pp microbatches
   each further one adds the same work and no memory (0: memory grows
   with n). */
static int pp__plan_steady(const pp_sched_info *info) { return info->steady; }
/* the largest pp at which a schedule built by a search is built in about
   0.1 s (unit times, n = 2pp); 0: no search */
static int pp__plan_search_d(const pp_sched_info *info) { return info->search_devices; }

/* compute's share eta of the GPU while an F&B pair's all-to-all runs:
   DeepSeek-V3 gives 20 of the H800's 132 SMs to communication (report,
   Sec. 3.2.2). The communication kernels hold their SMs only while they
   run, so a pair of x in sequence, a of it all-to-all, runs its compute c
   = x - a at eta beside the all-to-all and at the whole GPU after it: eta
   a + (t - a) = c gives t_FB = c + (1 - eta) a when c >= eta a, else the
   all-to-all is the longer stream and t_FB = a (PLANNING, overlaps):
   pp_sched.h's pair rule at pp_config.fb_share = eta (pp_fb_pair_time) */
#define PP__PLAN_FB_SHARE (112.0 / 132.0)

/* the device of stage s (pp_sched.h's placements; dualpipe's second copy
   is V-shaped too) */
static int pp__plan_dev(int vplace, int pp, int s) { return vplace ? (s < pp ? s : 2 * pp - 1 - s) : s % pp; }

/* Bytes per parameter of a recipe (PLANNING, recipes) for a weight shared by
   D ranks: weight, gradient, optimizer state. */
static void pp__plan_recipe_bytes(int recipe, int no_dist, double D, double *wb, double *gb, double *ob) {
    switch (recipe) {
    case PP_RECIPE_FSDP: *wb = 4 / D; *gb = 4 / D; *ob = 8 / D; break; /* fp32 shards; Adam m, v */
    case PP_RECIPE_ZERO1: *wb = 2; *gb = 2; *ob = 12 / D; break;
    case PP_RECIPE_ZERO2: *wb = 2; *gb = 2 / D; *ob = 12 / D; break;
    case PP_RECIPE_ZERO3: *wb = 2 / D; *gb = 2 / D; *ob = 12 / D; break;
    /* DeepSeek-V3 report Sec. 3.3.3: AdamW moments in BF16, master weights
       and gradients (for accumulation) in FP32; ZeRO-1 over DP (Sec. 3.1) */
    case PP_RECIPE_DEEPSEEK: *wb = 2; *gb = 4; *ob = 8 / D; break;
    default: *wb = 2; *gb = 4; *ob = no_dist ? 12 : 12 / D; break; /* Megatron bf16: fp32 grads */
    }
}

/* Bytes per parameter a recipe moves over the data-parallel ranks, before
   the ring's (D-1)/D: once per step, and per microbatch (PLANNING, recipes);
   *gather: the part of per_step that is the distributed optimizer's
   parameter all-gather, overlapped with the next step's forward */
static void pp__plan_recipe_sync(int recipe, int no_dist, double *per_step, double *per_mb, double *gather) {
    *per_step = 0;
    *per_mb = 0;
    *gather = 0;
    switch (recipe) {
    case PP_RECIPE_FSDP: *per_mb = 2 + 2 + 4; break;  /* all-gather in F and in B, fp32 reduce-scatter */
    case PP_RECIPE_ZERO1: *per_step = 2 + 2; break;   /* reduce-scatter of 16-bit grads, all-gather of weights */
    case PP_RECIPE_ZERO2: *per_mb = 2; *per_step = 2; break; /* grads reduced per microbatch */
    case PP_RECIPE_ZERO3: *per_mb = 2 + 2 + 2; break; /* all-gather in F and in B, reduce-scatter */
    case PP_RECIPE_DEEPSEEK: *per_step = 4 + 2; *gather = 2; break; /* ZeRO-1: fp32 grads reduce-scattered, bf16 weights gathered */
    default: *per_step = no_dist ? 2 * 4 : 4 + 2; *gather = no_dist ? 0 : 2; break; /* fp32 all-reduce; or reduce-scatter + all-gather */
    }
}

/* The memory-time bound (PLANNING, pruning), without the extrapolation:
   the least makespan of nb microbatches that keeps every device within its
   memory. A microbatch's bytes on stage s that last until its W (a_s: its
   kept bytes, less the logits a split backward frees at B) are held from
   the start of its F there to the end of its B there at least, and that
   span contains the F and B of every later stage of its route (F after F
   of the stage before, B after B of the stage after): R_s = the F + B of
   stages s to the route's last (BW where the backward is not split), with
   a send each way (stt[].comm) where consecutive stages sit on two devices. Over a makespan M the bytes a device holds
   average at least (microbatches per route) x sum_s a_s R_s / M, and the
   peak is no lower than the mean; for the device to fit, its activations
   stay within the memory left after its static bytes and its largest
   recomputation transient, so M >= that sum / what is left. 0 when no
   device bounds anything; a device with nothing left (the memory bound
   catches it first): 1e300. Needs w->stt, sact, slog, slogb, stra of the
   current stages. */
static double pp__plan_live_bound(const pp__plan_preq *q, pp__plan_pws *w, int S, int Sp, int pp, int vplace, int dual, int nb,
                                  const pp_sched_info *info) {
    const pp_times *stt = w->stt;
    int items = q->p.m.layers + 2, s, dev;
    double *sact = w->sact, *slog = w->sact + 2 * items, *stra = w->sact + 10 * items;
    double *slogb = w->sact + 12 * items, *R = w->sact + 14 * items, x = 0, best = 0, comm = stt[0].comm;
    /* a backward pass's time: B, or where it is not split BW = B + W (+ F when it recomputes) */
#define PP__PLAN_BACK(s) (info->split_backward ? stt[s].b : stt[s].b + stt[s].w + (info->recompute ? stt[s].f : 0))
    for (s = S - 1; s >= 0; s--) { /* suffix sums within each route (dualpipe: [0, Sp) and [Sp, S)) */
        int last = s == S - 1 || (dual && s == Sp - 1);
        x = last ? 0 : x + (pp__plan_dev(vplace, pp, s) != pp__plan_dev(vplace, pp, s + 1) ? 2 * comm : 0);
        x += stt[s].f + PP__PLAN_BACK(s);
        R[s] = x;
    }
    for (dev = 0; dev < pp; dev++) {
        double held = 0, tr = 0, left, head = 1e300, tail = 1e300;
        for (s = 0; s < S; s++) {
            double a, hs = 0, ts = 0;
            int t;
            if (pp__plan_dev(vplace, pp, s) != dev) continue;
            a = sact[s] + slog[s] - slogb[s];
            if (a > 0) held += a * R[s];
            if (stra[s] > tr) tr = stra[s];
            /* the F and B chains before stage s on its route: its bytes are
               held inside [head, M - tail] */
            for (t = dual && s >= Sp ? Sp : 0; t < s; t++) {
                double c1 = pp__plan_dev(vplace, pp, t) != pp__plan_dev(vplace, pp, t + 1) ? comm : 0;
                hs += stt[t].f + c1;
                ts += PP__PLAN_BACK(t) + c1;
            }
            if (hs < head) head = hs;
            if (ts < tail) tail = ts;
        }
        left = q->gmem - w->dev_static[dev] - tr;
        if (held <= 0) continue;
        if (left <= 0) return 1e300;
        x = head + tail + held * (dual ? nb / 2 : nb) / left;
        if (x > best) best = x;
    }
#undef PP__PLAN_BACK
    return best;
}

/* The memory floor (PLANNING, pruning), of the V-shape schedules that
   pp_sched.h builds by reordering a repeated block (fixed: not published,
   adaptive or a search) with B and W split: the last device (d - 1, where
   the V turns: stages d - 1 and d) holds, at its peak, at least what the
   same build with no_reorder (the block repeated and squeezed, a fraction
   of the build's CPU) holds there from each F to its B. An observed
   property of pp_sched.h's reorder and local search, not a theorem (it
   holds where the full build runs the Fs live at that order's peak before
   their first B there: DESIGN.md, the planner's memory floor): test_plan
   checks it on each such schedule over a grid of d up to 128, n, times and
   bytes. It does not hold on the other devices, nor for the BW schedules
   (counterexamples in that grid). On the models
   the planner sees, the last device of a V holds the most (the split gives
   the first stages the fewest layers), so the floor catches most layouts
   that end out of memory. */
static int pp__plan_floor_applies(const pp_sched_info *info) {
    return info->placement == PP_PLACE_VSHAPE && info->split_backward && info->copies == 1 && !info->published &&
           !info->adaptive && !info->search_devices;
}

/* the floor: device d - 1's static bytes, the most it holds from an F to its
   B in sch's order (sch built with no_reorder) and its recomputation
   transient */
static double pp__plan_floor_read(const pp__plan_pws *w, const pp_schedule *sch) {
    int items = w->items, dev = sch->devices - 1, p;
    const double *sact = w->sact, *slog = w->sact + 2 * items, *stra = w->sact + 10 * items;
    double cur = 0, pk = 0, tra = 0;
    for (p = sch->device_start[dev]; p < sch->device_start[dev + 1]; p++) {
        const pp_pass *x = &sch->passes[p];
        if (x->kind == PP_F) {
            cur += sact[x->stage] + slog[x->stage];
            if (cur > pk) pk = cur;
            if (stra[x->stage] > tra) tra = stra[x->stage];
        } else if (x->kind == PP_B || x->kind == PP_BW)
            cur -= sact[x->stage] + slog[x->stage];
    }
    return w->dev_static[dev] + pk + tra;
}

/* 1 and *fl when the floor of building cb is above the memory: the
   build cannot fit and is skipped; 0 when the floor does not apply, does
   not build, or fits */
static int pp__plan_floor_oom(const pp__plan_preq *q, pp__plan_pws *w, const pp_sched_info *info, const pp_config *cb,
                              double *fl) {
    pp_config c2 = *cb;
    pp_schedule *s2 = NULL;
    char e3[PP_ERR_LEN];
    if (!pp__plan_floor_applies(info) || cb->fb_overlap) return 0;
    c2.no_reorder = 1;
    if (pp_sched_build(&c2, &s2, e3) != PP_OK) return 0;
    *fl = pp__plan_floor_read(w, s2);
    pp_sched_free(s2);
    return *fl > q->gmem;
}

/* a candidate skipped on its memory floor (pp__plan_floor_oom) */
static void pp__plan_floor_cand(const pp__plan_preq *q, pp_candidate *c, double fl, double static_max, double unit) {
    c->peak_bytes = fl;
    c->static_bytes = static_max;
    c->unit_bytes = unit;
    c->mem.activations = fl - static_max; /* the breakdown adds up to the floor */
    c->mem.logits = 0;
    c->mem.total = fl + c->mem.reserve;
    pp__plan_cand_reason(c, "out of memory by at least %.2f GiB (its last device, from each F to its B in its order "
                         "before reordering)", (fl - q->gmem) / 1073741824.0);
}

/* device dev's stages (pp__plan_dev) with amt > 0 in (key, stage) order
   into ord, their count returned: S / pp stages at most, 64 (LIMITS: v <=
   64; V placement 2). Stage by stage ascending, each inserted after the
   equal keys. */
static int pp__plan_dp_order(const double *amt, const double *key, int S, int pp, int vplace, int dev, int *ord) {
    int k = 0, j, s;
    for (s = 0; s < S; s++) {
        if (pp__plan_dev(vplace, pp, s) != dev || amt[s] <= 0) continue;
        for (j = k++; j > 0 && key[ord[j - 1]] > key[s]; j--) ord[j] = ord[j - 1];
        ord[j] = s;
    }
    return k;
}

/* Evaluate one (layout, schedule, v). */
/* The step's end with each device's gradient synchronisation (PLANNING,
   overlaps): stage c of device k is ready at rdy[c] (its last B or W), its
   sdp[c] runs on the device's DP link from max(ready - window_c, the
   previous chunk's end) in ready order, window_c = its F + B + W of one
   microbatch; device k ends at the later of its last pass rdy[S + k] and
   its chain. Build times plus ext (the extrapolated microbatches), times
   scale. The start part: stage c's parameter all-gather sag[c] must end
   before its first F (which starts at rdy[S + pp + c]) ends: the
   forward's pre-hooks wait on it bucket by bucket. Device k's all-gathers
   run one after the other from the step's start in first-F order; what a
   chain ends past a deadline is exposed, and the step starts later by the
   largest such part over the devices. */
static double pp__plan_dp_end(const double *sdp, const double *sag, const pp_times *stt, const double *rdy, double ext,
                              double scale, int S, int pp, int vplace) {
    double fin = 0, late = 0;
    int dev, j, k, ord[64];
    for (dev = 0; dev < pp; dev++) { /* this device's stages in (first F, stage) order */
        double t = 0;
        k = pp__plan_dp_order(sag, rdy + S + pp, S, pp, vplace, dev, ord);
        for (j = 0; j < k; j++) {
            int nx = ord[j];
            double nr = rdy[S + pp + nx];
            t += sag[nx];
            if (t - (nr * scale + stt[nx].f) > late) late = t - (nr * scale + stt[nx].f);
        }
    }
    for (dev = 0; dev < pp; dev++) { /* this device's stages in (ready, stage) order */
        double t = 0, e = (rdy[S + dev] + ext) * scale;
        k = pp__plan_dp_order(sdp, rdy, S, pp, vplace, dev, ord);
        for (j = 0; j < k; j++) {
            int nx = ord[j];
            double st = (rdy[nx] + ext) * scale - (stt[nx].f + stt[nx].b + stt[nx].w);
            t = (st > t ? st : t) + sdp[nx];
        }
        if (t > e) e = t;
        if (e > fin) fin = e;
    }
    return fin + late;
}

static void pp__plan_one(const pp__plan_preq *q, pp__plan_pws *w, const pp__plan_lay *y, int id, int v, pp_candidate *c,
                         const pp__plan_inc *inc, double top_k) {
    const pp_plan_request *r = q->r;
    const pp__plan_pmodel *P = &q->p;
    const pp_sched_info *info = pp_sched_info_at(id);
    const char *name = info->name;
    pp__plan_item *it = w->it;
    pp_times *stt = w->stt;
    const int *first;
    int pp = y->pp, tp = y->tp, dp = y->dp, mbs = y->mbs;
    int L = P->m.layers, items = L + 2, n = r->global_batch / (dp * mbs), S, Sp, s, i, dev, nb, cached = 0, busiest = 0;
    int recompute = info->recompute, dual = info->copies == 2, vplace = info->placement == PP_PLACE_VSHAPE;
    int rc_full = recompute || r->recompute == PP_RECOMPUTE_FULL;
    /* ranks sharing a dense / an expert weight (experts: TP x CP x DP over EP x expert TP) */
    double dshard = (double)dp * y->cp, eshard = dshard * tp / ((double)y->ep * y->etp);
    double wb, gb, ob, ewb, egb, eob, sync_step, sync_mb, sync_ag, dp_step = 0, dp_mb = 0;
    /* the data-parallel group (dp x cp ranks, tp apart in Megatron's rank order) inside one node: NVLink */
    double dpbw = dshard * tp <= q->node ? q->g.tp_bw : q->g.net_bw;
    double unit, act_sum = 0, static_max = 0, best_peak = 0, lim = 0, scale = 1, mem_bound = 0, p2p = 0;
    double *sact = w->sact, *slog = w->sact + 2 * items, *stp = w->sact + 4 * items, *scp = w->sact + 6 * items;
    double *sep = w->sact + 8 * items, *stra = w->sact + 10 * items, *slogb = w->sact + 12 * items;
    double *sdp = w->sact + 16 * items, *sag = w->sact + 23 * items, dp_lb = 0;
    pp_config cfg;
    pp_schedule *sch = NULL;
    pp__plan_res res;
    char e2[PP_ERR_LEN];
    memset(c, 0, sizeof *c);
    snprintf(c->schedule, sizeof c->schedule, "%s", name);
    c->pp = pp;
    c->tp = tp;
    c->dp = dp;
    c->cp = y->cp;
    c->ep = y->ep;
    c->v = v;
    c->mbs = mbs;
    c->microbatches = n;
    c->span = pp__plan_span(q, y);
    c->mem.reserve = q->g.reserve_bytes;
    S = pp * v;
    Sp = dual ? pp : S; /* dualpipe: two copies of a pp-stage split */
    if (Sp > items) {
        pp__plan_cand_reason(c, "%d layers + embedding + head cannot fill %d stages", L, Sp);
        return;
    }
    first = pp__plan_split(w, items, Sp, e2);
    if (!first) { pp__plan_cand_reason(c, "%s", e2); return; }
    pp__plan_recipe_bytes(r->recipe, P->m.no_distributed_optimizer, dshard, &wb, &gb, &ob);
    pp__plan_recipe_bytes(r->recipe, P->m.no_distributed_optimizer, eshard, &ewb, &egb, &eob);
    pp__plan_recipe_sync(r->recipe, P->m.no_distributed_optimizer, &sync_step, &sync_mb, &sync_ag);
    /* bytes: static per device from its stages' items (PLANNING, static) */
    for (dev = 0; dev < pp; dev++) w->dev_params[dev] = w->dev_eparams[dev] = w->dev_big[dev] = w->dev_unit[dev] = 0;
    for (s = 0; s < S; s++) {
        int part = s < Sp ? s : s - Sp, end = part + 1 < Sp ? first[part + 1] : items;
        double f = 0, wt = 0, pd = 0, pe = 0, rc = 0;
        dev = pp__plan_dev(vplace, pp, s);
        sact[s] = slog[s] = stp[s] = scp[s] = sep[s] = stra[s] = slogb[s] = 0;
        for (i = first[part]; i < end; i++) {
            const pp__plan_item *x = &it[i];
            f += x->f;
            wt += x->w;
            pd += x->params;
            pe += x->eparams;
            /* 1f1b-r recomputes in its BW itself (pp_sched.h); the planner's
               recomputation goes into B for the other schedules */
            if (!recompute) rc += x->rc;
            /* kept bytes: a layer's input under 1f1b-r's own recomputation */
            if (x->head) {
                slog[s] += x->act;
                /* the fp32 softmax goes at the head's B; its W keeps the 16-bit logits' gradient */
                slogb[s] += x->act_in;
            }
            else sact[s] += recompute && i > 0 ? x->act_in : x->act;
            stp[s] += x->tpc;
            scp[s] += x->cpc;
            sep[s] += x->epc;
            if (rc_full && x->peak_act > stra[s]) stra[s] = x->peak_act;
            if (x->big > w->dev_big[dev]) w->dev_big[dev] = x->big;
            if (x->params + x->eparams > w->dev_unit[dev]) w->dev_unit[dev] = x->params + x->eparams;
        }
        if (s < Sp) act_sum += sact[s] + slog[s];
        if (f <= 0) f = 1e-9;
        stt[s].f = f;
        stt[s].b = f + rc;
        stt[s].w = wt > 0 ? wt : 1e-9;
        stt[s].comm = w->comm;
        w->dev_params[dev] += pd;
        w->dev_eparams[dev] += pe;
        /* this stage's gradient synchronisation (PLANNING, recipes): the
           end part (reduce-scatter or all-reduce) and the start part (the
           distributed optimizer's parameter all-gather) */
        sdp[s] = dshard > 1 || eshard > 1 ? (pd * (dshard - 1) / dshard + pe * (eshard - 1) / eshard) / dpbw : 0;
        sag[s] = sync_ag * sdp[s];
        sdp[s] *= sync_step - sync_ag;
    }
    for (dev = 0; dev < pp; dev++) {
        double pd = w->dev_params[dev], pe = w->dev_eparams[dev];
        double gw = 0, st; /* gathered 16-bit layers: ZeRO-3's largest matrix, FSDP's current and next layer + its grads */
        if (r->recipe == PP_RECIPE_ZERO3) gw = 4 * w->dev_big[dev];
        if (r->recipe == PP_RECIPE_FSDP) gw = (2 * 2 + 4) * w->dev_unit[dev];
        st = pd * (wb + gb + ob) + pe * (ewb + egb + eob) + gw;
        w->dev_static[dev] = st;
        if (st > static_max) {
            static_max = st;
            c->mem.weights = pd * wb + pe * ewb + gw;
            c->mem.grads = pd * gb + pe * egb;
            c->mem.optimizer = pd * ob + pe * eob;
            /* the gradient synchronisation of this device (PLANNING, recipes) */
            dp_step = dshard > 1 || eshard > 1 ? sync_step * (pd * (dshard - 1) / dshard + pe * (eshard - 1) / eshard) /
                                                     dpbw : 0;
            dp_mb = dshard > 1 || eshard > 1 ? sync_mb * (pd * (dshard - 1) / dshard + pe * (eshard - 1) / eshard) /
                                                   dpbw : 0;
        }
    }
    c->mem.total = static_max + c->mem.reserve;
    if (r->times) { /* measured per-device-share times: spread over stages by cost */
        double tot = 0;
        for (s = 0; s < S; s++) tot += stt[s].f;
        for (s = 0; s < S; s++) {
            double qs = stt[s].f / tot * pp;
            stt[s].f = r->times->f * qs;
            stt[s].b = r->times->b * qs;
            stt[s].w = r->times->w * qs > 0 ? r->times->w * qs : 1e-9;
            stt[s].comm = r->times->comm;
            stp[s] = scp[s] = sep[s] = 0; /* measured: no split of the communication */
        }
    }
    /* DP overlap (PLANNING, overlaps): Megatron's --overlap-grad-reduce
       launches a model chunk's gradient reduce-scatter bucket by bucket
       during that chunk's last microbatch's backward; the chunks of a device
       share its DP link one after the other. Without overlap the whole
       synchronisation of the largest device follows the step. The step is
       assembled from the build's ready times below (pp__plan_dp_end). */
    if (r->no_dp_overlap) dp_lb = dp_step;
    /* a unit: one microbatch's activations (logits included) of 1/pp of the model (their mean) */
    unit = act_sum / pp;
    if (unit <= 0) unit = 1;
    if (static_max >= q->gmem) {
        c->peak_bytes = static_max;
        c->static_bytes = static_max;
        c->unit_bytes = unit;
        pp__plan_cand_reason(c, "parameters and optimizer alone need %.1f GiB > %.1f GiB%s", static_max / 1073741824.0,
                        q->gmem / 1073741824.0, dual ? " (two copies of the parameters)" : "");
        return;
    }
    /* memory bound (PLANNING, pruning): a device holds at least one
       microbatch's bytes on all its stages of one copy (the F of its last
       stage comes before the B and W of its earlier ones) and the largest
       transient of full recomputation; above the memory, no build can fit */
    if (!r->no_prune) {
        double lb_max = 0;
        for (dev = 0; dev < pp; dev++) {
            double sum = 0, one = 0, tr = 0, lb;
            for (s = 0; s < S; s++) {
                if (pp__plan_dev(vplace, pp, s) != dev) continue;
                sum += sact[s] + slog[s];
                if (sact[s] + slog[s] > one) one = sact[s] + slog[s];
                if (stra[s] > tr) tr = stra[s];
            }
            lb = w->dev_static[dev] + (dual ? one : sum) + tr;
            if (lb > lb_max) lb_max = lb;
        }
        if (lb_max > q->gmem) {
            c->peak_bytes = lb_max;
            c->static_bytes = static_max;
            c->unit_bytes = unit;
            c->mem.activations = lb_max - static_max; /* the breakdown adds up to the bound */
            c->mem.total = lb_max + c->mem.reserve;
            pp__plan_cand_reason(c, "out of memory by at least %.2f GiB (one microbatch on every stage of a device)",
                            (lb_max - q->gmem) / 1073741824.0);
            return;
        }
    }
    if (info->takes_limit) {
        /* the most units every device can hold, in half units */
        lim = (double)(long)((q->gmem - static_max) / unit * 2) / 2;
        if (lim > 2.0 * pp) lim = 2.0 * pp;
        if (lim < 0.5) {
            pp__plan_cand_reason(c, "no memory left for activations (%.1f GiB static)", static_max / 1073741824.0);
            c->unit_bytes = unit;
            return;
        }
    }
    if (pp__plan_search_d(info) && pp > pp__plan_search_d(info)) {
        pp__plan_cand_reason(c, "not evaluated: the %s search takes seconds at pp > %d (the planner keeps it to pp <= %d)",
                        name, pp__plan_search_d(info), pp__plan_search_d(info));
        c->unit_bytes = unit;
        return;
    }
    /* build at n_b microbatches, extrapolate the steady state: n_b = pp
       where the peak is reached within d microbatches (steady = 1: at unit
       times the extrapolation equals the full build, checked for d = 8, 20
       at n = 160), 2pp where warm-up runs longer, n where memory grows with n */
    nb = n < 2 * pp ? n : 2 * pp;
    if (pp__plan_steady(info) == 1 && n > pp) nb = pp;
    if (pp__plan_steady(info) == 0) nb = n;
    if ((double)S * nb * 3 > PP__PLAN_MAX_PASSES) {
        pp__plan_cand_reason(c, "not evaluated: its build would have %.0f passes (%d stages x %d microbatches x 3), "
                        "over the planner's %.0f", (double)S * nb * 3, S, nb, PP__PLAN_MAX_PASSES);
        c->unit_bytes = unit;
        return;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.allocator = w->al;
    cfg.schedule = name;
    cfg.devices = pp;
    cfg.microbatches = nb;
    cfg.chunks = v;
    cfg.stage_times = stt;
    cfg.mem_limit = lim;
    cfg.no_guarantee = 1; /* ranking: PLANNING, "the guarantee" */
    if (recompute) cfg.recompute_input = pp__plan_act_bytes(P, 0, 1, tp, 1) / pp__plan_act_bytes(P, 0, 1, tp, 0);
    /* F&B overlap (PLANNING, overlaps): dualpipe's pairs hide one pass's
       all-to-all under the other's compute, on the SMs communication leaves */
    /* the pipeline's sends: pp_sched.h adds times.comm on every dependency
       edge that crosses devices (PLANNING, step time) */
    cfg.times.comm = stt[0].comm;
    if (info->fb_pairs) {
        double a = 0;
        for (s = 0; s < S; s++) {
            int part = s < Sp ? s : s - Sp, end = part + 1 < Sp ? first[part + 1] : items;
            double x = 0;
            for (i = first[part]; i < end; i++) x += it[i].epc;
            w->fbc[s].f = w->fbc[s].b = r->times ? 0 : x;
            /* the sends between stages are times.comm, on the edges, not inside a pass */
            w->fbc[s].w = w->fbc[s].comm = 0;
            a += 2 * w->fbc[s].f;
        }
        /* a pair is never longer than its sequence (max(x - eta a, a) <= x) */
        if (!r->no_fb_overlap && a > 0) {
            cfg.fb_overlap = 1;
            cfg.fb_comm = w->fbc;
            cfg.fb_share = PP__PLAN_FB_SHARE;
            /* pairs are the steady state: a 2pp build has few of them, so it
               is built to 8pp microbatches (even, as dualpipe needs) before
               the extrapolation */
            if (n > nb) {
                nb = n < 8 * pp ? n : 8 * pp;
                nb -= nb % 2;
                cfg.microbatches = nb;
            }
        }
    }
    /* work bound (PLANNING, pruning): device k runs nb x p_k of passes (its
       stages' F + B + W, + F again for recomputation) and cannot start
       before microbatch 0's forwards reach its first stage k, so
       makespan(nb) >= head_k + nb p_k; the extrapolation adds (n - nb) x
       the busiest p. With F&B pairs every pass lasts at least rho_k of its
       time, rho_k = the least t_FB / (F + B + W) of the pairs device k can
       form (at most 1). dualpipe: device k also holds the second copy's
       stage, whose route starts at device pp-1, so it may start after the
       shorter of the two heads. */
    {
        double pmax = 0, mk = 0, mkdp = 0, head = 0, tail = 0, bound;
        for (dev = 0; dev < pp; dev++) {
            double pk = 0, qk = 0, rho = 1, hk = head;
            int s2;
            for (s = 0; s < S; s++) {
                int sd = pp__plan_dev(vplace, pp, s);
                if (sd == dev) {
                    pk += stt[s].f + stt[s].b + stt[s].w + (recompute ? stt[s].f : 0);
                    qk += stt[s].f + stt[s].b + (recompute ? stt[s].f : 0);
                    for (s2 = 0; cfg.fb_overlap && s2 < S; s2++) {
                        int sd2 = pp__plan_dev(vplace, pp, s2);
                        double x = stt[s].f + stt[s2].b + stt[s2].w, tfb;
                        if (sd2 != dev) continue;
                        /* what pp_sched.h will give the pair from the parts passed (above) */
                        tfb = pp_fb_pair_time(x, w->fbc[s].f + w->fbc[s2].b, cfg.fb_share);
                        if (tfb / x < rho) rho = tfb / x;
                    }
                }
            }
            pk *= rho;
            qk *= rho;
            if (dual) { /* each microbatch runs one of the two copies; copy B enters at device pp-1 */
                double hb = 0;
                pk /= 2;
                for (s = pp; s < 2 * pp - 1 - dev; s++) hb += stt[s].f + cfg.times.comm;
                if (hb < hk) hk = hb;
            }
            if (pk > pmax) { pmax = pk; busiest = dev; }
            if (hk + nb * pk > mk) mk = hk + nb * pk;
            /* DP overlap: device k's last pass readies one of its stages c,
               whose synchronisation then runs at least sdp_c - window_c more */
            if (!r->no_dp_overlap && dp_step > 0) {
                double x = -1;
                for (s = 0; s < S; s++)
                    if (pp__plan_dev(vplace, pp, s) == dev) {
                        double e = sdp[s] - (stt[s].f + stt[s].b + stt[s].w);
                        if (x < 0 || e < x) x = e > 0 ? e : 0;
                    }
                if (x > 0 && hk + nb * pk + x > mkdp) mkdp = hk + nb * pk + x;
            }
            /* one route: stage k is device k's first, and every F and B of a
               microbatch on device k precedes its B on stage k; the last of
               those is followed by the B chain down to stage 0 */
            if (!dual && head + nb * qk + tail > mk) mk = head + nb * qk + tail;
            /* stage dev to dev + 1 crosses devices: one send each way */
            head += stt[dev].f + cfg.times.comm;
            tail += stt[dev].b + cfg.times.comm;
        }
        bound = (mkdp > mk + dp_lb ? mkdp : mk + dp_lb) + (double)(n - nb) * pmax;
        c->bound = bound;
        /* memory-time bound (PLANNING, pruning): what fits limits how many
           microbatches live at once, and each lives at least its round trip */
        if (!r->no_prune && !cfg.fb_overlap) {
            double live = pp__plan_live_bound(q, w, S, Sp, pp, vplace, dual, nb, info);
            if (live > 0) mem_bound = live + (double)(n - nb) * pmax + dp_lb;
        }
        /* per-microbatch gathers and reductions (fsdp, zero2, zero3) hide under the device's work */
        if (dp_mb > pmax) dp_mb = (dp_mb - pmax) * n;
        else dp_mb = 0;
    }
    {
        int k, hit = -1, mk;
        double mfloor;
        pp__plan_cache *e = NULL;
        pp_config cb = cfg; /* the build the result comes from: this layout's times, or a cached entry's */
        for (k = 0; k < w->ncache && hit < 0; k++) {
            e = &w->cache[k];
            if (e->id == id && e->v == v && e->nb == nb && e->S == S && e->lim == lim && e->rin == cfg.recompute_input &&
                !cfg.fb_overlap &&
                (scale = pp__plan_ratio(stt, e->stt, S)) > 0)
                hit = k;
        }
        if (hit < 0) scale = 1;
        double pb = mem_bound > c->bound ? mem_bound : c->bound;
        if ((hit < 0 || (!w->cache[hit].s && !w->cache[hit].known)) && !r->no_prune && inc && inc->step > 0 &&
            pb > inc->step * (1 + 1e-9) && pb > top_k * (1 + 1e-9)) {
            /* slower than this schedule's best so far whatever its bubble
               (or, past the memory-time bound, slower or out of memory): not
               built; its times are kept for a later layout that shares the build */
            c->pruned = 1;
            c->unit_bytes = unit;
            c->static_bytes = static_max;
            c->peak_bytes = static_max;
            if (mem_bound > c->bound) {
                c->bound = mem_bound;
                pp__plan_cand_reason(c, "not built: at least %.1f%% slower (memory-time bound %.3f s) than its best "
                                "layout %s, outside the top %d, or out of memory", 100 * (c->bound / inc->step - 1),
                                c->bound, inc->lay, r->keep_top > 0 ? r->keep_top : 10);
            } else
                pp__plan_cand_reason(c, "not built: at least %.1f%% slower (work bound %.3f s) than its best layout %s, "
                                "outside the top %d", 100 * (c->bound / inc->step - 1), c->bound, inc->lay,
                                r->keep_top > 0 ? r->keep_top : 10);
            if (hit < 0) pp__plan_cache_put(w, id, v, nb, S, lim, cfg.recompute_input, NULL, stt);
            return;
        }
        if (hit >= 0) {
            e = &w->cache[hit];
            cb.stage_times = e->stt;
            cb.times.comm = e->stt[0].comm;
        }
        /* the same build with the same bytes seen before (another layout, any
           triple): its result, without building */
        mk = pp__plan_memo_key(w, &cb, id, S, pp, busiest);
        if (mk >= 0 && pp__plan_memo_find(w, mk, &res)) {
            if (hit >= 0) e->known = 1;
            else if (pp__plan_cache_put(w, id, v, nb, S, lim, cfg.recompute_input, NULL, stt))
                w->cache[w->ncache - 1].known = 1;
        } else {
            /* a skip on the memory floor needs a fitting layout of this
               schedule already (its best is exact, and a schedule that fits
               nowhere keeps its closest built layout) */
            if ((hit < 0 || !e->s) && !r->no_prune && inc && inc->step > 0 &&
                pp__plan_floor_oom(q, w, info, &cb, &mfloor)) {
                if (hit < 0) pp__plan_cache_put(w, id, v, nb, S, lim, cfg.recompute_input, NULL, stt);
                pp__plan_floor_cand(q, c, mfloor, static_max, unit);
                return;
            }
            if (hit >= 0 && !e->s) { /* a pruned or remembered layout's entry: build it with its times */
                if (pp_sched_build(&cb, &e->s, e2) != PP_OK) {
                    e->s = NULL;
                    pp__plan_cand_reason(c, "does not build: %s", e2);
                    c->unit_bytes = unit;
                    return;
                }
            }
            if (hit >= 0) {
                sch = e->s;
                cached = 1;
            } else {
                if (pp_sched_build(&cfg, &sch, e2) != PP_OK) {
                    pp__plan_cand_reason(c, "does not build: %s", e2);
                    c->unit_bytes = unit;
                    return;
                }
                cached = pp__plan_cache_put(w, id, v, nb, S, lim, cfg.recompute_input, sch, stt);
            }
            pp__plan_read(w, sch, busiest, &res);
            if (mk >= 0) pp__plan_memo_put(w, mk, &res);
            if (!cached) pp_sched_free(sch);
        }
    }
    if (res.peak > best_peak) {
        best_peak = res.peak;
        c->static_bytes = res.static_bytes;
        c->peak_units = res.units;
        c->mem.activations = res.act;
        c->mem.logits = res.logits;
    }
    p2p = res.p2p;
    c->peak_bytes = best_peak;
    c->unit_bytes = unit;
    c->step_time = (res.makespan + (double)(n - nb) * res.work / nb) * scale;
    if (!r->no_dp_overlap && dp_step > 0)
        dp_step = pp__plan_dp_end(sdp, sag, stt, res.rdy, (double)(n - nb) * res.work / nb, scale, S, pp, vplace) -
                  c->step_time;
    {
        /* the largest device's breakdown, weights again from that device */
        double pd = 0, pe = 0, gw = 0;
        for (dev = 0; dev < pp; dev++)
            if (w->dev_static[dev] == c->static_bytes) break;
        if (dev < pp) {
            pd = w->dev_params[dev];
            pe = w->dev_eparams[dev];
            if (r->recipe == PP_RECIPE_ZERO3) gw = 4 * w->dev_big[dev];
            if (r->recipe == PP_RECIPE_FSDP) gw = (2 * 2 + 4) * w->dev_unit[dev];
            c->mem.weights = pd * wb + pe * ewb + gw;
            c->mem.grads = pd * gb + pe * egb;
            c->mem.optimizer = pd * ob + pe * eob;
        }
        c->mem.total = c->peak_bytes + c->mem.reserve;
    }
    /* data parallel: the step's gradient synchronisation, and what per-microbatch gathers leave exposed */
    c->step_time += dp_step + dp_mb;
    c->fits = best_peak <= q->gmem;
    if (!c->fits) {
        pp__plan_cand_reason(c, "out of memory by %.2f GiB (%.1f GiB with the %.1f GiB reserve)",
                        (best_peak - q->gmem) / 1073741824.0, c->mem.total / 1073741824.0, c->mem.reserve / 1073741824.0);
        c->step_time = 0;
        return;
    }
    {
        /* the step's split (PLANNING, step split): the busiest device's
           passes, their communication apart, then its idle time */
        double comp = 0, ctp = 0, ccp = 0, cep = 0, busy, idle, mult = rc_full ? 3 : 2;
        for (s = 0; s < S; s++) {
            int sd = pp__plan_dev(vplace, pp, s);
            if (sd != busiest) continue;
            comp += stt[s].f + stt[s].b + stt[s].w + (recompute ? stt[s].f : 0);
            ctp += mult * stp[s];
            ccp += mult * scp[s];
            cep += mult * sep[s];
        }
        comp -= ctp + ccp + cep;
        if (dual) { comp /= 2; ctp /= 2; ccp /= 2; cep /= 2; }
        c->time.compute = n * comp;
        c->time.tp = n * ctp;
        c->time.cp = n * ccp;
        c->time.ep = n * cep;
        c->time.dp = dp_step + dp_mb;
        busy = c->time.compute + c->time.tp + c->time.cp + c->time.ep;
        idle = c->step_time - c->time.dp - busy;
        if (idle < 0) { /* communication an overlap hid (F&B pairs): not exposed, in proportion */
            double comm = c->time.tp + c->time.cp + c->time.ep, keep = comm + idle > 0 ? (comm + idle) / comm : 0;
            if (comm > 0) { c->time.tp *= keep; c->time.cp *= keep; c->time.ep *= keep; }
            else c->time.compute += idle;
            idle = 0;
        }
        c->time.pp = p2p * scale < idle ? p2p * scale : idle;
        c->time.bubble = idle - c->time.pp;
    }
    /* MFU: the model's training FLOPs over the GPUs' peak (Narayanan et al. 2021, Eq. 3, generalised) */
    c->mfu = (double)r->global_batch * P->s * q->flops_per_token / (c->step_time * r->gpus * q->g.peak_flops);
    c->tokens_per_gpu = (double)r->global_batch * P->s / (c->step_time * r->gpus);
    c->tflops_per_gpu = c->mfu * q->g.peak_flops;
}

/* a (pp, tp, cp) triple of layouts: its candidates' first index in out, its key */
typedef struct pp__plan_pair { int pp, tp, cp, dp, base, n; double key; } pp__plan_pair;

/* the planner refuses requests with more candidates than this (LIMITS) */
#define PP__PLAN_MAX_CANDIDATES 200000

static const int pp__plan_vs[] = {2, 3, 4, 6, 8}; /* v tried for schedules that take any */
/* v > 2 is tried while pp x v stays within this many stages (a build at
   pp = 40, v = 8 takes 0.05 s; Megatron's published runs stay below it) */
#define PP__PLAN_V_STAGES 128

/* the v values schedule id is tried with at pp (S = pp v <= items) */
static int pp__plan_nv(const pp__plan_preq *q, int id, int pp, int *vs) {
    const pp_sched_info *info = pp_sched_info_at(id);
    int items = q->p.m.layers + 2, nv = 0, k;
    if (!info->any_chunks) { vs[0] = info->chunks; return 1; }
    if (q->r->v > 0) { vs[0] = q->r->v; return 1; }
    for (k = 0; k < (int)(sizeof pp__plan_vs / sizeof pp__plan_vs[0]); k++)
        if (k == 0 || ((double)pp * pp__plan_vs[k] <= items && pp * pp__plan_vs[k] <= PP__PLAN_V_STAGES))
            vs[nv++] = pp__plan_vs[k];
    /* and every other v giving each stage the same number of layers (pp x v
       dividing them: NeMo's v = 5 for Llama 3 70B at pp 4), pp >= 2 */
    for (k = 5; pp >= 2 && k <= 64 && pp * k <= PP__PLAN_V_STAGES && pp * k <= items; k++)
        if (k != 6 && k != 8 && q->p.m.layers % (pp * k) == 0) vs[nv++] = k;
    return nv;
}

/* is ep a layout's expert-parallel degree: divides experts and dp x cp (EP
   groups carved from the data- and context-parallel ranks, the experts
   tensor-parallel like the rest), or tp x dp x cp (Megatron-Core's MoE
   parallel folding: the EP group takes TP ranks too, and the experts are
   not tensor-parallel: pp__plan_etp) */
static int pp__plan_ep_ok(const pp__plan_preq *q, int ep, int tp, int dp, int cp) {
    int E = q->p.m.experts;
    long long all = (long long)tp * dp * cp;
    if (q->r->ep > 0) return ep == q->r->ep && all % ep == 0;
    if (E == 0) return ep == 1;
    return E % ep == 0 && all % ep == 0 && (ep & (ep - 1)) == 0;
}
/* the experts' tensor-parallel ranks: tp, or 1 where ep folds TP ranks in */
static int pp__plan_etp(int ep, int tp, int dp, int cp) { return (long long)dp * cp % ep == 0 ? tp : 1; }

/* mbs values: 1, 2, 4 (or the one asked for) dividing global_batch / dp */
static int pp__plan_mbs_ok(const pp__plan_preq *q, int mbs, int dp) {
    if (q->r->mbs > 0 && mbs != q->r->mbs) return 0;
    return q->r->global_batch % dp == 0 && (q->r->global_batch / dp) % mbs == 0;
}

PP_PLAN_DEF pp_status pp_plan(const pp_plan_request *r, pp_candidate *out, int cap, int *count, char *err) {
    pp__plan_preq q;
    pp__plan_pws w;
    pp__plan_lay y;
    pp_status st;
    int id, total = 0, items, nsched = 0, rep = -1, pass, npairs = 0, k, ktop, ntop = 0, want = -1, nall = pp_sched_count();
    int mbs_lo, mbs_hi, vs[72];
    double *top = NULL;
    pp__plan_pair *pairs = NULL;
    pp__plan_inc *inc = NULL;
    if (err) err[0] = 0;
    if (count) *count = 0;
    if (!r || !count || cap < 0 || (cap > 0 && !out)) {
        pp__plan_err(err, "pp_plan: needs req, count, cap >= 0 and out when cap > 0");
        return PP_ERR_INVALID_ARG;
    }
    st = pp__plan_resolve(r, &q, err);
    if (st != PP_OK) return st;
    if (r->schedule) want = (int)pp_sched_find(r->schedule)->id;
    memset(&w, 0, sizeof w);
    w.al = pp__plan_al(&r->allocator);
    items = q.p.m.layers + 2;
    mbs_lo = r->mbs > 0 ? r->mbs : 1;
    mbs_hi = r->mbs > 0 ? r->mbs : 4;
    /* (pp, tp, cp) triples in enumeration order; each one's candidates keep
       their place in out (pp, tp, cp, ep, mbs, schedule, v ascending), but
       the triples are evaluated in the order of plain 1F1B's best step time
       over the triple's ep and mbs (a quick build of a published order, kept
       in the memo; triples where it fits nowhere after, by its work bound),
       so that good incumbents come early and the candidates that do not
       fit come late, when the incumbents prune most of them. Pass 0 counts,
       pass 1 fills. */
    for (id = 0; id < nall; id++)
        if (!r->schedule || id == want) nsched++;
    rep = (int)PP_SCHED_1F1B; /* the order key's schedule */
    for (pass = 0; pass < 2; pass++) {
        int pp, tp, cp;
        npairs = 0;
        total = 0;
        for (pp = 1; pp <= r->gpus; pp++) {
            if (r->gpus % pp || (r->pp > 0 && pp != r->pp)) continue;
            /* at least two items (layers, embedding, head) per device unless asked */
            if (r->pp <= 0 && pp > 1 && 2 * pp > items) continue;
            for (tp = 1; tp <= r->gpus / pp; tp++) {
                if ((r->gpus / pp) % tp || (r->tp > 0 && tp != r->tp)) continue;
                /* TP inside one node (1, 2, 4, 8 on 8 GPUs), heads split evenly */
                if (r->tp <= 0 && (q.node % tp || q.p.m.heads % tp)) continue;
                for (cp = r->cp > 0 ? r->cp : 1; cp <= r->gpus / (pp * tp); cp *= 2) {
                    int dp, ep, mbs, nl = 0;
                    if (r->cp > 0 && cp != r->cp) break;
                    /* CP for long sequences: at least 4096 tokens per rank */
                    if (r->cp <= 0 && cp > 1 && q.p.m.seq / cp < 4096) break;
                    if ((r->gpus / (pp * tp)) % cp || q.p.m.seq % cp) continue;
                    dp = r->gpus / (pp * tp * cp);
                    if (r->dp > 0 && dp != r->dp) continue;
                    for (ep = 1; ep <= (q.p.m.experts > 0 ? q.p.m.experts : 1); ep++) {
                        if (!pp__plan_ep_ok(&q, ep, tp, dp, cp)) continue;
                        for (mbs = mbs_lo; mbs <= mbs_hi; mbs *= 2) {
                            if (!pp__plan_mbs_ok(&q, mbs, dp)) continue;
                            for (id = 0; id < nall; id++)
                                if (!r->schedule || id == want) nl += pp__plan_nv(&q, id, pp, vs);
                        }
                    }
                    if (nl == 0) continue;
                    if (pass == 1) {
                        pairs[npairs].pp = pp;
                        pairs[npairs].tp = tp;
                        pairs[npairs].cp = cp;
                        pairs[npairs].dp = dp;
                        pairs[npairs].base = total;
                        pairs[npairs].n = nl;
                        pairs[npairs].key = 1e300;
                    }
                    total += nl;
                    npairs++;
                    if (total > PP__PLAN_MAX_CANDIDATES) {
                        pp__plan_free(&w.al, pairs);
                        pp__plan_err(err, "the search has more than %d candidates (%d GPUs, %d layers): narrow it with "
                                     "pp, tp, cp, ep, mbs or a schedule", PP__PLAN_MAX_CANDIDATES, r->gpus, q.p.m.layers);
                        return PP_ERR_OVERFLOW;
                    }
                }
            }
        }
        if (pass == 0) {
            if (npairs == 0) {
                pp__plan_err(err, "no layout: no pp x tp x cp x dp = %d (tp within a %d-GPU node dividing heads %d) "
                             "with mbs dividing global batch %d / dp%s", r->gpus, q.node, q.p.m.heads, r->global_batch,
                             q.p.m.experts ? " and ep dividing experts and tp x dp x cp" : "");
                return PP_ERR_INVALID_ARG;
            }
            pairs = (pp__plan_pair *)pp__plan_malloc(&w.al, sizeof(pp__plan_pair) * (size_t)npairs);
            if (!pairs) { pp__plan_err(err, "pp_plan: out of memory"); return PP_ERR_OUT_OF_MEMORY; }
        }
    }
    *count = total;
    if (cap == 0 && !out) { /* a query: the request is valid and has this many candidates */
        pp__plan_free(&w.al, pairs);
        return PP_OK;
    }
    if (total > cap) {
        pp__plan_free(&w.al, pairs);
        pp__plan_err(err, "pp_plan: %d candidates, room for %d", total, cap);
        return PP_ERR_OVERFLOW;
    }
    ktop = r->keep_top > 0 ? r->keep_top : 10;
    if (ktop > total) ktop = total;
    w.it = (pp__plan_item *)pp__plan_malloc(&w.al, sizeof(pp__plan_item) * (size_t)items);
    w.cost = (double *)pp__plan_malloc(&w.al, sizeof(double) * (size_t)items);
    w.stt = (pp_times *)pp__plan_malloc(&w.al, sizeof(pp_times) * (size_t)(4 * items));
    if (w.stt) w.fbc = w.stt + 2 * items;
    w.dev_static = (double *)pp__plan_malloc(&w.al, sizeof(double) * (size_t)(5 * items));
    w.sact = (double *)pp__plan_malloc(&w.al, sizeof(double) * (size_t)(25 * items));
    w.split = (int *)pp__plan_malloc(&w.al, sizeof(int) * (size_t)PP__PLAN_SPLITS * (size_t)items);
    w.split_cost = (double *)pp__plan_malloc(&w.al, sizeof(double) * (size_t)items);
    w.items = items;
    w.mkey = (double *)pp__plan_malloc(&w.al, sizeof(double) * PP__PLAN_MEMO_KEY(items)); /* NULL: no memo */
    inc = (pp__plan_inc *)pp__plan_malloc(&w.al, sizeof(pp__plan_inc) * (size_t)nall);
    top = (double *)pp__plan_malloc(&w.al, sizeof(double) * (size_t)ktop);
    if (!w.it || !w.cost || !w.stt || !w.dev_static || !w.sact || !w.split || !w.split_cost || !inc || !top) {
        st = PP_ERR_OUT_OF_MEMORY;
        pp__plan_err(err, "pp_plan: out of memory");
        goto done;
    }
    w.dev_params = w.dev_static + items;
    w.dev_eparams = w.dev_static + 2 * items;
    w.dev_big = w.dev_static + 3 * items;
    w.dev_unit = w.dev_static + 4 * items;
    memset(inc, 0, sizeof(pp__plan_inc) * (size_t)nall);
    /* pass 2: each triple's key (1F1B's best step, or its work bound); pass 3: evaluate */
    for (pass = 2; pass < 4; pass++) {
        if (pass == 2 && r->no_prune) continue;
        if (pass == 3) { /* stable insertion sort by key (no_prune: every key 1e300, enumeration order) */
            for (k = 1; k < npairs; k++) {
                pp__plan_pair x = pairs[k];
                int j = k;
                while (j > 0 && pairs[j - 1].key > x.key) { pairs[j] = pairs[j - 1]; j--; }
                pairs[j] = x;
            }
        }
        for (k = 0; k < npairs; k++) {
            int idx = pairs[k].base, ep;
            y.pp = pairs[k].pp;
            y.tp = pairs[k].tp;
            y.cp = pairs[k].cp;
            y.dp = pairs[k].dp;
            /* the cache's key holds (pp, tp, cp): no other triple can hit an
               entry of this one, so it is emptied here and never fills up */
            pp__plan_cache_clear(&w);
            w.nsplit = 0; /* splits are kept within a triple only: the same ones whatever the triples' order */
            for (ep = 1; ep <= (q.p.m.experts > 0 ? q.p.m.experts : 1); ep++) {
                if (!pp__plan_ep_ok(&q, ep, y.tp, y.dp, y.cp)) continue;
                y.ep = ep;
                y.etp = pp__plan_etp(ep, y.tp, y.dp, y.cp);
                for (y.mbs = mbs_lo; y.mbs <= mbs_hi; y.mbs *= 2) {
                    int i;
                    if (!pp__plan_mbs_ok(&q, y.mbs, y.dp)) continue;
                    pp__plan_items(&q, &y, w.it, &w.comm);
                    for (i = 0; i < items; i++) w.cost[i] = w.it[i].f;
                    /* a min-max split does not change when every cost is scaled
                       by one factor (another mbs of a model of equal layers):
                       the splits are kept */
                    if (w.nsplit > 0) {
                        double x = w.cost[0] / w.split_cost[0];
                        for (i = 0; i < items; i++) {
                            double d = w.cost[i] - x * w.split_cost[i];
                            if ((d < 0 ? -d : d) > 1e-12 * w.cost[i]) break;
                        }
                        if (i < items || !(x > 0)) w.nsplit = 0;
                    }
                    if (w.nsplit == 0) memcpy(w.split_cost, w.cost, sizeof(double) * (size_t)items);
                    if (pass == 2) {
                        pp_candidate c;
                        double key;
                        pp__plan_one(&q, &w, &y, rep, pp_sched_info_at(rep)->chunks, &c, NULL, 1e300);
                        key = c.step_time > 0 ? c.step_time : c.bound > 0 ? 1e100 * c.bound : 1e300;
                        if (key > 0 && key < pairs[k].key) pairs[k].key = key;
                        continue;
                    }
                    for (id = 0; id < nall; id++) {
                        int nv, j;
                        if (r->schedule && id != want) continue;
                        nv = pp__plan_nv(&q, id, y.pp, vs);
                        for (j = 0; j < nv; j++) {
                            pp_candidate c;
                            pp__plan_one(&q, &w, &y, id, vs[j], &c, &inc[id], ntop < ktop ? 1e300 : top[ktop - 1]);
                            if (c.step_time > 0 && ktop > 0) { /* keep the ktop best step times, ascending */
                                int t;
                                if (ntop < ktop) t = ntop++;
                                else if (c.step_time < top[ktop - 1]) t = ktop - 1;
                                else t = -1;
                                if (t >= 0) {
                                    while (t > 0 && top[t - 1] > c.step_time) { top[t] = top[t - 1]; t--; }
                                    top[t] = c.step_time;
                                }
                            }
                            if (c.step_time > 0 && (inc[id].step <= 0 || c.step_time < inc[id].step)) {
                                inc[id].step = c.step_time;
                                pp__plan_lay_name(inc[id].lay, sizeof inc[id].lay, y.pp, y.tp, y.cp, y.ep, y.dp, c.v, y.mbs);
                            }
                            out[idx++] = c;
                        }
                    }
                }
            }
        }
    }
    qsort(out, (size_t)total, sizeof *out, pp__plan_cand_cmp);
    if (total > 0 && out[0].step_time > 0) {
        char lay[64];
        int i;
        pp__plan_lay_name(lay, sizeof lay, out[0].pp, out[0].tp, out[0].cp, out[0].ep, out[0].dp, out[0].v, out[0].mbs);
        pp__plan_cand_reason(&out[0], "best");
        for (i = 1; i < total && out[i].step_time > 0; i++)
            pp__plan_cand_reason(&out[i], "%.1f%% slower than the best (%s %s)", 100 * (out[i].step_time / out[0].step_time - 1),
                            out[0].schedule, lay);
    }
    st = PP_OK;
done:
    pp__plan_cache_clear(&w);
    pp__plan_memo_clear(&w);
    pp__plan_free(&w.al, w.mkey);
    pp__plan_free(&w.al, pairs);
    pp__plan_free(&w.al, inc);
    pp__plan_free(&w.al, top);
    pp__plan_free(&w.al, w.it);
    pp__plan_free(&w.al, w.cost);
    pp__plan_free(&w.al, w.stt);
    pp__plan_free(&w.al, w.dev_static);
    pp__plan_free(&w.al, w.sact);
    pp__plan_free(&w.al, w.split);
    pp__plan_free(&w.al, w.split_cost);
    return st;
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
