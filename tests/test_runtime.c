/* test_runtime.c - pipelined training on threads equals training on one device.

   Build and run (tests/run_tests.sh does this):
       cc -std=c99 -O2 -Wall -Wextra tests/test_runtime.c -o test_runtime -lpthread -lm && ./test_runtime

   For every built-in schedule, d in {2, 3, 4} and n from d to 4d (skipping
   what a schedule refuses, e.g. interleaved-1f1b when n % d != 0): a tiny
   gpt_ref.h model with 2 layers per stage runs one step through the lowered
   programs on d threads (ref/cpu_pipeline.h) and one step on one device
   on the same microbatches. Checked: no deadlock (a 30 s timeout would
   report it), loss and every gradient within 1e-5 relative (and counted
   bitwise equal), and the most live activations on each device equal to
   the schedule's predicted peak (peak_memory / stage_memory, in chunk
   activations) and to the lowering's slot count. The same again with
   times F=1 B=2 W=1 comm=0.5 and F=1 B=1 W=0 (other reorderings, so other
   programs) for n in {d, 3d-1, 4d}. Then an ordering bug
   (receive before send on one device) must time out with the stuck op named. */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#include "../ref/gpt_ref.h"
#include "../ref/cpu_pipeline.h"
#include "group.h"

#include <math.h>

static gpt_config model_for(int stages) {
    gpt_config c;
    c.vocab = 16;
    c.seq = 8;
    c.channels = 8;
    c.heads = 2;
    c.layers = 2 * stages;
    c.batch = 1;
    return c;
}

static void make_data(const gpt_config *c, int n, int *tok, int *tgt) {
    unsigned long long r = 12345;
    int i, N = n * c->batch * c->seq;
    for (i = 0; i < N; i++) tok[i] = (int)(gpt__rng(&r) % (unsigned long long)c->vocab);
    for (i = 0; i < N; i++) tgt[i] = i + 1 < N ? tok[i + 1] : 0;
}

/* largest |a-b| / (|b| + 1e-8 max|b|) over the arrays; *bitwise = all equal */
static double max_rel(const float *a, const float *b, size_t n, int *bitwise) {
    double mx = 0, scale = 0, worst = 0;
    size_t i;
    for (i = 0; i < n; i++) if (fabs(b[i]) > scale) scale = fabs(b[i]);
    *bitwise = 1;
    for (i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]) / (fabs(b[i]) + 1e-6 * scale);
        if (a[i] != b[i]) *bitwise = 0;
        if (e > worst) worst = e;
    }
    (void)mx;
    return worst;
}

/* times = NULL: unit times and every n in d..4d; else those times (the
   schedules are squeezed and reordered differently, so the programs
   differ) and n in {d, 3d-1, 4d} */
static void test_equal_gradients(const pp_times *times, const char *title) {
    group g;
    int i, d, n, runs = 0, bitwise_runs = 0, skipped = 0, dual_runs = 0;
    double worst = 0, t0 = cpu_pipe_now();
    group_begin(&g, title);
    for (i = 0; i < pp_sched_count(); i++)
        for (d = 2; d <= 4; d++)
            for (n = d; n <= 4 * d; n++) {
                pp_config cfg;
                pp_schedule *s = NULL;
                pp_program *prog = NULL;
                char err[512];
                gpt_config mc;
                memset(&cfg, 0, sizeof cfg);
                cfg.schedule = pp_sched_info_at(i)->name;
                cfg.devices = d;
                cfg.microbatches = n;
                if (times) {
                    if (n != d && n != 3 * d - 1 && n != 4 * d) continue;
                    cfg.times = *times;
                }
                if (pp_sched_build(&cfg, &s, err) != PP_OK) { skipped++; continue; }
                mc = model_for(s->stages);
                if (pp_sched_find(cfg.schedule)->recompute) {
                    /* 1F1B-R keeps each stage's input: that fraction of the stage's activations */
                    gpt_stage st = gpt_stage_of(&mc, 0, s->stages);
                    pp_sched_free(s);
                    s = NULL;
                    cfg.recompute_input = (double)(mc.batch * mc.seq * mc.channels) / (double)gpt_act_size(&mc, &st);
                    if (!check(&g, pp_sched_build(&cfg, &s, err) == PP_OK, "1f1b-r: %s", err)) continue;
                }
                if (check(&g, pp_sched_lower(s, &prog, err) == PP_OK, "%s d=%d n=%d: lower: %s", cfg.schedule, d, n,
                          err)) {
                    size_t P = gpt_param_sizes(&mc, (size_t[GPT_NUM_TENSORS]){0}), N = (size_t)n * mc.batch * mc.seq;
                    float *params = (float *)malloc(sizeof(float) * P), *gp = (float *)malloc(sizeof(float) * P),
                          *gr = (float *)malloc(sizeof(float) * P);
                    int *tok = (int *)malloc(sizeof(int) * N), *tgt = (int *)malloc(sizeof(int) * N), dev, bw;
                    double ref_loss = 0, rel;
                    cpu_pipe_stats st;
                    gpt_init(&mc, params, 1);
                    make_data(&mc, n, tok, tgt);
                    cpu_reference_step(&mc, params, n, tok, tgt, gr, &ref_loss);
                    if (check(&g, cpu_pipeline_step(&mc, params, prog, tok, tgt, 30.0, gp, &st, err, sizeof err),
                              "%s d=%d n=%d: %s", cfg.schedule, d, n, err)) {
                        runs++;
                        dual_runs += s->copies == 2; /* dualpipe: two copies' gradients summed per microbatch */
                        rel = max_rel(gp, gr, P, &bw);
                        if (rel > worst) worst = rel;
                        bw &= st.loss == ref_loss;
                        bitwise_runs += bw;
                        check(&g, rel <= 1e-5, "%s d=%d n=%d: gradient relative difference %g", cfg.schedule, d, n, rel);
                        check(&g, fabs(st.loss - ref_loss) <= 1e-5 * fabs(ref_loss), "%s d=%d n=%d: loss %.9g vs %.9g",
                              cfg.schedule, d, n, st.loss, ref_loss);
                        for (dev = 0; dev < d; dev++) {
                            double predicted = s->peak_memory[dev] / s->stage_memory[0];
                            check(&g, st.peak_live[dev] == prog->slots[dev] &&
                                          fabs(st.peak_live[dev] - predicted) < 1e-6,
                                  "%s d=%d n=%d: device %d held %d activations at most, predicted %g, slots %d",
                                  cfg.schedule, d, n, dev, st.peak_live[dev], predicted, prog->slots[dev]);
                        }
                    }
                    free(params); free(gp); free(gr); free(tok); free(tgt);
                }
                pp_program_free(prog);
                pp_sched_free(s);
            }
    check(&g, dual_runs > 0, "no two-copy (dualpipe) schedule ran");
    group_end(&g, "%d runs (%d of them dualpipe, two model copies; %d refused by their schedule), %d bitwise equal; "
                  "worst relative gradient difference %g; %.1f s",
              runs, dual_runs, skipped, bitwise_runs, worst, cpu_pipe_now() - t0);
}

/* The runtime blocks like NCCL: swapping a SEND and the RECV after it on one
   device deadlocks, and the timeout names where each device waits. With every
   group split instead, the lowered order still runs. Two receives of one
   channel in the other order are refused before the step (pp_program_pair). */
static void test_deadlock_reported(void) {
    group g;
    pp_config cfg;
    pp_schedule *s = NULL;
    pp_program *prog = NULL;
    char err[512] = "";
    gpt_config mc;
    int k, swapped = 0;
    group_begin(&g, "CPU pipeline: an ordering bug deadlocks and is reported");
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = "1f1b";
    cfg.devices = 4;
    cfg.microbatches = 8;
    mc = model_for(4);
    if (check(&g, pp_sched_build(&cfg, &s, err) == PP_OK && pp_sched_lower(s, &prog, err) == PP_OK, "%s", err)) {
        size_t P = gpt_param_sizes(&mc, (size_t[GPT_NUM_TENSORS]){0}), N = (size_t)8 * mc.seq;
        float *params = (float *)malloc(sizeof(float) * P), *gp = (float *)malloc(sizeof(float) * P);
        int *tok = (int *)malloc(sizeof(int) * N), *tgt = (int *)malloc(sizeof(int) * N);
        cpu_pipe_stats st;
        gpt_init(&mc, params, 1);
        make_data(&mc, 8, tok, tgt);
        for (k = 0; k < prog->num_ops; k++) prog->ops[k].group = -1;
        check(&g, cpu_pipeline_step(&mc, params, prog, tok, tgt, 30.0, gp, &st, err, sizeof err),
              "ungrouped: %s", err);
        for (k = prog->device_start[1]; k + 1 < prog->device_start[2]; k++)
            if (prog->ops[k].type == PP_OP_SEND && prog->ops[k + 1].type == PP_OP_RECV) {
                pp_op t = prog->ops[k];
                prog->ops[k] = prog->ops[k + 1];
                prog->ops[k + 1] = t;
                swapped++;
                k++;
            }
        check(&g, swapped > 0 && !cpu_pipeline_step(&mc, params, prog, tok, tgt, 0.5, gp, &st, err, sizeof err) &&
                      strstr(err, "timeout: device"),
              "swapped: want a timeout, got '%s'", err);
        {   /* device 1's first two receives from device 0 (mb 0 and 1) in the other order: the
               pairing meets mb 0's send with mb 1's receive, and the step is refused before it runs */
            int r0 = -1, r1 = -1;
            char keep[512];
            snprintf(keep, sizeof keep, "%s", err);
            for (k = prog->device_start[1]; k < prog->device_start[2] && r1 < 0; k++)
                if (prog->ops[k].type == PP_OP_RECV && prog->ops[k].peer == 0) {
                    if (r0 < 0) r0 = k; else r1 = k;
                }
            if (check(&g, r1 > 0, "no two receives from device 0 on device 1")) {
                int m = prog->ops[r0].microbatch;
                prog->ops[r0].microbatch = prog->ops[r1].microbatch;
                prog->ops[r1].microbatch = m;
                check(&g, !cpu_pipeline_step(&mc, params, prog, tok, tgt, 30.0, gp, &st, err, sizeof err) &&
                              strstr(err, "send 0 from device 0 to 1") && strstr(err, "matching receive"),
                      "receives swapped: want the pairing's refusal, got '%s'", err);
            }
            snprintf(err, sizeof err, "%s", keep);
        }
        free(params); free(gp); free(tok); free(tgt);
    }
    pp_program_free(prog);
    pp_sched_free(s);
    group_end(&g, "%s", err);
}

int main(void) {
    static const pp_times uneven = {1, 2, 1, 0.5}, no_w = {1, 1, 0, 0};
    test_equal_gradients(NULL, "CPU pipeline: every schedule, d 2..4, n d..4d: gradients, loss, live activations, no deadlock");
    test_equal_gradients(&uneven, "CPU pipeline, times F=1 B=2 W=1 comm=0.5: n in d, 3d-1, 4d");
    test_equal_gradients(&no_w, "CPU pipeline, times F=1 B=1 W=0: n in d, 3d-1, 4d");
    test_deadlock_reported();
    printf("%d passed, %d failed\n", g_groups_passed, g_groups_failed);
    return g_groups_failed ? 1 : 0;
}
