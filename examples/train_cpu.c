/* train_cpu.c - train a tiny GPT through a pipeline schedule, on CPU threads.

   Demonstrates the whole contract of pp_sched on a real model: build a
   schedule, lower it to one program per device (pp_sched_lower), prove the
   programs cannot deadlock (pp_sched_check_deadlock), then run them, one
   thread per device, with blocking NCCL-like sends and receives
   (ref/cpu_pipeline.h) on the reference model of ref/gpt_ref.h, and
   train it for a few hundred steps on data/pipeline.txt (characters as
   tokens). Stages are contiguous ranges of the model's layers, placed as the
   schedule says (sequential, looped or V-shape).

   Build:   make                  (or: cc -std=c99 -O2 -o train_cpu examples/train_cpu.c -lpthread -lm)
   Run:     ./train_cpu -s v-half -d 4 -n 8 --steps 300
            ./train_cpu -s zb-h1 -d 3 -n 6 --check

   Prints:  the schedule and model sizes, the loss as it falls (every tenth of
            the steps), then per device the measured bubble and the most live
            activations next to the predicted ones. With --check, one step is
            first run both pipelined and on one device, and the tool prints
            "max relative gradient difference: X" and "loss difference: Y".
   Exit:    0 ok; 2 the arguments must change (a bad option, or a schedule
            the library refuses for -s, -d, -n; options follow ppsched's rules,
            examples/pp_cli.h); 1 a failure (the data file, deadlock,
            mismatch, --check over its tolerance of 1e-5 relative, or a
            failed write of the output). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#include "../ref/gpt_ref.h"
#include "../ref/cpu_pipeline.h"
#include "pp_cli.h" /* ppsched's option rules and checked output */

static const char *usage_text =
    "usage: train_cpu -s NAME -d D -n N [options]\n"
    "\n"
    "  -s, --schedule NAME    built-in schedule (./ppsched --list), default v-half\n"
    "  -d, --devices D        pipeline devices (threads), 1..64, default 4\n"
    "  -n, --microbatches N   microbatches per step, default 8\n"
    "      --steps K          training steps, default 300\n"
    "      --check            first compare one pipelined step with one device\n"
    "      --lr X             Adam learning rate, default 0.003\n"
    "      --layers-per-stage L   default 2\n"
    "      --channels C       hidden size, default 32 (4 heads)\n"
    "      --seq T            tokens per sequence, default 16\n"
    "      --data PATH        text to learn, default data/pipeline.txt\n"
    "  -h, --help             this text\n";

/* the options (pp_cli.h's rules: a repeat or an unknown name is an error) */
enum { O_HELP, O_SCHEDULE, O_DEVICES, O_MICROBATCHES, O_STEPS, O_CHECK, O_LR, O_LPS, O_CHANNELS, O_SEQ, O_DATA, O_COUNT };
static const pp_cli_opt opts[O_COUNT] = {
    {"-h", "--help", 0}, {"-s", "--schedule", 1}, {"-d", "--devices", 1}, {"-n", "--microbatches", 1},
    {NULL, "--steps", 1}, {NULL, "--check", 0}, {NULL, "--lr", 1}, {NULL, "--layers-per-stage", 1},
    {NULL, "--channels", 1}, {NULL, "--seq", 1}, {NULL, "--data", 1},
};
typedef struct options {
    const char *name, *path;
    int help, d, n, steps, check, lps, C, T;
    double lr;
} options;

static int set_option(void *user, int k, const char *name, const char *val, char *msg, size_t len) {
    options *o = (options *)user;
    switch (k) {
    case O_HELP: o->help = 1; break;
    case O_CHECK: o->check = 1; break;
    case O_SCHEDULE: o->name = val; break;
    case O_DATA: o->path = val; break;
    case O_DEVICES:
        if (!pp_cli_int(val, 1, CPU_PIPE_MAX_DEVICES, &o->d)) return pp_cli_error(msg, len, "%s needs 1..64, got '%s'", name, val);
        break;
    case O_MICROBATCHES:
        if (!pp_cli_int(val, 1, 100000, &o->n)) return pp_cli_error(msg, len, "%s needs a whole number 1..100000, got '%s'", name, val);
        break;
    case O_STEPS:
        if (!pp_cli_int(val, 0, 100000000, &o->steps)) return pp_cli_error(msg, len, "%s needs a whole number >= 0, got '%s'", name, val);
        break;
    case O_LPS:
        if (!pp_cli_int(val, 1, 64, &o->lps)) return pp_cli_error(msg, len, "%s needs 1..64, got '%s'", name, val);
        break;
    case O_CHANNELS:
        if (!pp_cli_int(val, 4, 1024, &o->C) || o->C % 4)
            return pp_cli_error(msg, len, "%s needs a multiple of 4 in 4..1024, got '%s'", name, val);
        break;
    case O_SEQ:
        if (!pp_cli_int(val, 1, 1024, &o->T)) return pp_cli_error(msg, len, "%s needs 1..1024, got '%s'", name, val);
        break;
    case O_LR:
        if (!pp_cli_real(val, &o->lr) || !(o->lr > 0 && o->lr < 1))
            return pp_cli_error(msg, len, "%s needs a number in (0, 1), got '%s'", name, val);
        break;
    }
    return 0;
}

/* AdamW as in llm.c (no weight decay here) */
static void adam_update(float *p, const float *g, float *m, float *v, size_t n, double lr, int t) {
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    double c1 = 1 - pow(b1, t), c2 = 1 - pow(b2, t);
    size_t i;
    for (i = 0; i < n; i++) {
        m[i] = (float)(b1 * m[i] + (1 - b1) * g[i]);
        v[i] = (float)(b2 * v[i] + (1 - b2) * g[i] * g[i]);
        p[i] -= (float)(lr * (m[i] / c1) / (sqrt(v[i] / c2) + eps));
    }
}

static int run(int argc, char **argv);
int main(int argc, char **argv) {
    pp_cli_init();
    return pp_cli_finish("train_cpu", run(argc, argv)); /* a failed write of the output: exit 1 */
}

static int run(int argc, char **argv) {
    const char *name, *path;
    int d, n, steps, check, lps, C, T, i, j, step, rc = 0;
    double lr;
    options o = {"v-half", "data/pipeline.txt", 0, 4, 8, 300, 0, 2, 32, 16, 3e-3};
    int given[O_COUNT];
    char msg[512];
    pp_config cfg;
    pp_schedule *s = NULL;
    pp_program *prog = NULL;
    char err[512];
    gpt_config mc;
    unsigned char *text = NULL;
    long len = 0;
    int map[256], vocab = 0;
    size_t P, N;
    float *params = NULL, *grads = NULL, *gref = NULL, *m = NULL, *v = NULL;
    int *tok = NULL, *tgt = NULL;
    double busy[CPU_PIPE_MAX_DEVICES] = {0}, wall = 0;
    int peak[CPU_PIPE_MAX_DEVICES] = {0};
    double kind_time[4] = {0};
    long kind_count[4] = {0};
    unsigned long long rng = 2026;

    if (pp_cli_parse(argc, argv, 1, opts, sizeof opts[0], O_COUNT, given, set_option, NULL, &o, msg, sizeof msg)) {
        fprintf(stderr, "train_cpu: %s\n(train_cpu --help lists every option)\n", msg);
        return 2;
    }
    if (o.help) { fputs(usage_text, stdout); return 0; }
    name = o.name; path = o.path; d = o.d; n = o.n; steps = o.steps; check = o.check; lps = o.lps; C = o.C; T = o.T;
    lr = o.lr;

    /* the schedule, its programs, and the proof they finish */
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = name;
    cfg.devices = d;
    cfg.microbatches = n;
    {   /* a schedule the library refuses for these arguments: exit 2 */
        pp_status st = pp_sched_build(&cfg, &s, err);
        if (st != PP_OK) { fprintf(stderr, "train_cpu: %s\n", err); return pp_status_bad_input(st) ? 2 : 1; }
    }
    /* the text; its distinct bytes are the vocabulary (after the schedule:
       bad arguments exit 2 before a missing file exits 1) */
    text = gpt_read_text(path, T + 1, &len, map, &vocab, err);
    if (!text) { fprintf(stderr, "train_cpu: %s\n", err); pp_sched_free(s); return 1; }
    mc.vocab = vocab; mc.seq = T; mc.channels = C; mc.heads = 4; mc.layers = lps * s->stages; mc.batch = 1;
    if (s->recompute) {
        /* 1F1B-R keeps a stage's input: that fraction of its activations */
        gpt_stage g0 = gpt_stage_of(&mc, 0, s->stages);
        pp_sched_free(s);
        s = NULL;
        cfg.recompute_input = (double)(T * C) / (double)gpt_act_size(&mc, &g0);
        if (pp_sched_build(&cfg, &s, err) != PP_OK) { fprintf(stderr, "train_cpu: %s\n", err); return 1; }
    }
    if (pp_sched_lower(s, &prog, err) != PP_OK || pp_sched_check_deadlock(prog, NULL, err) != PP_OK) {
        fprintf(stderr, "train_cpu: %s\n", err);
        rc = 1;
        goto end;
    }
    P = gpt_param_sizes(&mc, (size_t[GPT_NUM_TENSORS]){0});
    N = (size_t)n * T;
    printf("schedule %s: d=%d v=%d stages=%d n=%d; model: %d layers (%d per stage), C=%d, T=%d, vocab %d (bytes of %s), "
           "%lu parameters\n",
           s->name, d, s->chunks, s->stages, n, mc.layers, lps, C, T, vocab, path, (unsigned long)P);
    printf("programs: %d ops, checked deadlock-free; predicted bubble rate %.2f%% (unit F=B=W times)\n", prog->num_ops,
           100 * s->bubble_rate);
    params = (float *)malloc(sizeof(float) * P);
    grads = (float *)malloc(sizeof(float) * P);
    gref = (float *)malloc(sizeof(float) * P);
    m = (float *)calloc(P, sizeof(float));
    v = (float *)calloc(P, sizeof(float));
    tok = (int *)malloc(sizeof(int) * N);
    tgt = (int *)malloc(sizeof(int) * N);
    if (!params || !grads || !gref || !m || !v || !tok || !tgt) { fprintf(stderr, "train_cpu: out of memory\n"); rc = 1; goto end; }
    gpt_init(&mc, params, 1);

    for (step = 0; step < (steps > 0 ? steps : 1); step++) {
        cpu_pipe_stats st;
        /* n microbatches: random windows of T+1 characters */
        for (j = 0; j < n; j++) {
            long at = (long)(gpt__rng(&rng) % (unsigned long long)(len - T - 1));
            for (i = 0; i < T; i++) {
                tok[j * T + i] = map[text[at + i]];
                tgt[j * T + i] = map[text[at + i + 1]];
            }
        }
        if (!cpu_pipeline_step(&mc, params, prog, tok, tgt, 60.0, grads, &st, err, sizeof err)) {
            fprintf(stderr, "train_cpu: step %d: %s\n", step, err);
            rc = 1;
            goto end;
        }
        if (step == 0 && check) {
            double ref_loss = 0, worst = 0, scale = 0;
            size_t k;
            cpu_reference_step(&mc, params, n, tok, tgt, gref, &ref_loss);
            for (k = 0; k < P; k++) if (fabs(gref[k]) > scale) scale = fabs(gref[k]);
            for (k = 0; k < P; k++) {
                double e = fabs((double)grads[k] - gref[k]) / (fabs(gref[k]) + 1e-6 * scale);
                if (e > worst) worst = e;
            }
            printf("max relative gradient difference: %g\n", worst);
            printf("loss difference: %g\n", fabs(st.loss - ref_loss));
            if (worst > 1e-5 || fabs(st.loss - ref_loss) > 1e-5 * fabs(ref_loss)) {
                fprintf(stderr, "train_cpu: --check: over the tolerance of 1e-5 relative\n");
                rc = 1;
                goto end;
            }
        }
        for (j = 0; j < d; j++) {
            busy[j] += st.busy[j];
            if (st.peak_live[j] > peak[j]) peak[j] = st.peak_live[j];
        }
        wall += st.wall;
        for (j = 0; j < d; j++)
            for (i = 0; i < 4; i++) {
                kind_time[i] += st.pass_time[j][i];
                kind_count[i] += st.pass_count[j][i];
            }
        if (steps == 0) break;
        if (step % (steps / 10 > 0 ? steps / 10 : 1) == 0 || step == steps - 1)
            printf("step %5d  loss %.4f\n", step, st.loss);
        adam_update(params, grads, m, v, P, lr, step + 1);
    }

    {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        double total = 0;
        printf("\ndevice  bubble(measured)  live activations: measured  predicted  (slots)\n");
        for (j = 0; j < d; j++) {
            double b = wall > 0 ? 1 - busy[j] / wall : 0;
            total += busy[j];
            printf("%6d  %15.1f%%  %27d  %9g  (%d)\n", j, 100 * b, peak[j], s->peak_memory[j] / s->stage_memory[0],
                   prog->slots[j]);
        }
        printf("bubble rate: measured %.1f%%, predicted %.1f%%", wall > 0 ? 100 * (1 - total / (d * wall)) : 0,
               100 * s->bubble_rate);
        if (cores > 0 && cores < d)
            printf(" (this machine has %ld cores for %d device threads, so devices also wait for a core)", cores, d);
        printf("\n");
        {
            /* the same schedule rebuilt with the pass times measured here (per
               device share of the model: a chunk pass times v), for a fairer
               prediction than unit times */
            pp_config mt = cfg;
            pp_schedule *ms = NULL;
            double v = s->chunks, f = 0, b = 0, w = 0;
            if (kind_count[PP_F]) f = kind_time[PP_F] / kind_count[PP_F] * v;
            if (s->split_backward && kind_count[PP_B] && kind_count[PP_W]) {
                b = kind_time[PP_B] / kind_count[PP_B] * v;
                w = kind_time[PP_W] / kind_count[PP_W] * v;
            } else if (kind_count[PP_BW]) {
                /* BW = B + W (+ F again for 1f1b-r); split evenly between B and W */
                double bw = kind_time[PP_BW] / kind_count[PP_BW] * v - (s->recompute ? f : 0);
                b = w = bw > 0 ? bw / 2 : f;
            }
            mt.times.f = f;
            mt.times.b = b;
            mt.times.w = w;
            if (f > 0 && b > 0 && pp_sched_build(&mt, &ms, err) == PP_OK)
                printf("predicted bubble rate at the measured pass times (F %.3g ms, B %.3g ms, W %.3g ms per device "
                       "share): %.1f%%\n", 1e3 * f, 1e3 * b, 1e3 * w, 100 * ms->bubble_rate);
            pp_sched_free(ms);
        }
    }
end:
    free(text); free(params); free(grads); free(gref); free(m); free(v); free(tok); free(tgt);
    pp_program_free(prog);
    pp_sched_free(s);
    return rc;
}
