/* train_gpt.cu - train a tiny GPT through a pipeline schedule on GPUs (pp_cuda.h).

   Demonstrates the executor end to end: build a schedule, lower it to one
   program per device (pp_sched_lower), prove the programs cannot deadlock
   (pp_sched_check_deadlock), plan and allocate the GPU memory once
   (pp_cuda_create), then train on data/pipeline.txt (bytes as tokens, as
   examples/train_cpu.c does). One process runs all d devices on one GPU
   (the one-GPU mode: a stream per device); launched with several ranks
   (mpirun, srun, torchrun: see pp_cuda.h LAUNCHING) each rank drives one GPU
   through NCCL. With --profile it first runs a few steps to time F, B and W
   of every stage, re-plans with v-auto at --mem-limit using those times
   (pp_config.stage_times), and trains with the new plan.

   Build:   make train_gpt        (nvcc; links pp_cuda.o and NCCL)
   Run:     ./train_gpt -s v-half -d 4 -n 16
            ./train_gpt -s 1f1b -d 4 -n 16 --profile --mem-limit 2
            ./train_gpt -s 1f1b -d 1 -n 4 --nccl      (NCCL start-up with one rank)
            NCCL_COMM_ID=127.0.0.1:29511 mpirun -np 4 -x NCCL_COMM_ID ./train_gpt -s v-half -d 4 -n 16

   Prints:  the schedule, model and memory plan (bytes per kind, free GPU
            memory), the loss every tenth of the steps, then the step time,
            tokens/s, the measured bubble next to the schedule's predicted
            one (at unit times and at the measured pass times), per device
            the peak activation memory (live slots x slot bytes) next to the
            prediction, and per stage the measured F, B, W (or BW) times in
            ms. In NCCL mode rank 0 prints, other ranks add their device's
            line.
   Exit:    0 ok; 2 the arguments must change (a bad or inapplicable option,
            a schedule the library refuses for -s, -d, -n, a --profile
            re-plan that cannot be built: checked before any device is
            looked for; options follow ppsched's rules, examples/pp_cli.h);
            1 a failure (no CUDA device, the data file, a CUDA/NCCL error,
            not enough memory, a failed write of the output or --loss-log, a
            loss or gradient that is not finite: the step and the tensor are
            named). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#include "../pp_cuda.h"
#include "../ref/gpt_ref.h" /* gpt_read_text */
#include "pp_cli.h"           /* ppsched's option rules and checked output */

static const char *usage_text =
    "usage: train_gpt -s NAME -d D -n N [options]\n"
    "\n"
    "  -s, --schedule NAME    built-in schedule (./ppsched --list), default v-half\n"
    "  -d, --devices D        pipeline devices, 1..64, default 4 (NCCL mode: the number of ranks)\n"
    "  -n, --microbatches N   microbatches per step, default 16\n"
    "      --steps K          training steps, default 200\n"
    "      --lr X             AdamW learning rate, default 0.001\n"
    "      --layers-per-stage L   default 2\n"
    "      --channels C       hidden size, default 128\n"
    "      --heads H          attention heads, default 4\n"
    "      --seq T            tokens per sequence, default 64\n"
    "      --batch B          sequences per microbatch, default 4\n"
    "      --data PATH        text to learn, default data/pipeline.txt\n"
    "      --loss-log PATH    rank 0 writes every step's loss there, one line each (step, loss to 9 digits)\n"
    "      --one-gpu          all devices on this GPU even when launched with several ranks\n"
    "      --nccl             NCCL mode even for one rank (-d 1 without a launcher checks NCCL start-up)\n"
    "      --profile          time F, B, W per stage for --profile-steps steps, re-plan with v-auto\n"
    "                         at --mem-limit using those times, then train with that plan\n"
    "      --profile-steps K  default 10\n"
    "      --mem-limit X      v-auto's activation limit per device, in units of 1F1B's\n"
    "                         per-device activation (1F1B peaks at d); default d/2\n"
    "  -h, --help             this text\n";

static int usage_error(const char *msg) {
    fprintf(stderr, "train_gpt: %s\n(train_gpt --help lists every option)\n", msg);
    return 2;
}

/* the options (pp_cli.h's rules: a repeat or an unknown name is an error) */
enum {
    O_HELP, O_SCHEDULE, O_DEVICES, O_MICROBATCHES, O_STEPS, O_LR, O_LPS, O_CHANNELS, O_HEADS, O_SEQ, O_BATCH, O_DATA,
    O_LOSS_LOG, O_ONE_GPU, O_NCCL, O_PROFILE, O_PROFILE_STEPS, O_MEM_LIMIT, O_COUNT
};
static const pp_cli_opt opts[O_COUNT] = {
    {"-h", "--help", 0}, {"-s", "--schedule", 1}, {"-d", "--devices", 1}, {"-n", "--microbatches", 1},
    {NULL, "--steps", 1}, {NULL, "--lr", 1}, {NULL, "--layers-per-stage", 1}, {NULL, "--channels", 1},
    {NULL, "--heads", 1}, {NULL, "--seq", 1}, {NULL, "--batch", 1}, {NULL, "--data", 1}, {NULL, "--loss-log", 1},
    {NULL, "--one-gpu", 0}, {NULL, "--nccl", 0}, {NULL, "--profile", 0}, {NULL, "--profile-steps", 1},
    {NULL, "--mem-limit", 1},
};
typedef struct options {
    const char *name, *path, *loss_log;
    int help, d, n, steps, lps, C, H, T, B, profile, profile_steps, mode;
    double lr, mem_limit;
} options;

static int set_option(void *user, int k, const char *name, const char *val, char *msg, size_t len) {
    options *o = (options *)user;
    int *ip = NULL, lo = 1, hi = 0;
    switch (k) {
    case O_HELP: o->help = 1; return 0;
    case O_ONE_GPU: o->mode = PP_CUDA_ONE_GPU; return 0;
    case O_NCCL: o->mode = PP_CUDA_NCCL; return 0;
    case O_PROFILE: o->profile = 1; return 0;
    case O_SCHEDULE: o->name = val; return 0;
    case O_DATA: o->path = val; return 0;
    case O_LOSS_LOG: o->loss_log = val; return 0;
    case O_DEVICES: ip = &o->d; hi = 64; break;
    case O_MICROBATCHES: ip = &o->n; hi = 100000; break;
    case O_STEPS: ip = &o->steps; hi = 100000000; break;
    case O_PROFILE_STEPS: ip = &o->profile_steps; lo = 2; hi = 100000; break;
    case O_LPS: ip = &o->lps; hi = 64; break;
    case O_HEADS: ip = &o->H; hi = 256; break;
    case O_SEQ: ip = &o->T; lo = 2; hi = 8192; break;
    case O_BATCH: ip = &o->B; hi = 65536; break;
    case O_CHANNELS:
        if (!pp_cli_int(val, 8, 8192, &o->C) || o->C % 8)
            return pp_cli_error(msg, len, "%s needs a multiple of 8 in 8..8192, got '%s'", name, val);
        return 0;
    case O_LR:
        if (!pp_cli_real(val, &o->lr) || !(o->lr > 0 && o->lr < 1))
            return pp_cli_error(msg, len, "%s needs a number in (0, 1), got '%s'", name, val);
        return 0;
    case O_MEM_LIMIT:
        if (!pp_cli_real(val, &o->mem_limit) || !(o->mem_limit > 0 && o->mem_limit <= 1e9))
            return pp_cli_error(msg, len, "%s needs a number of units > 0 (at most 1e9), got '%s'", name, val);
        return 0;
    }
    if (ip && !pp_cli_int(val, lo, hi, ip)) return pp_cli_error(msg, len, "%s needs %d..%d, got '%s'", name, lo, hi, val);
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned long long rng_next(unsigned long long *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

/* the context runs in NCCL mode (--nccl with one rank included); set by setup */
static int nccl_mode;

typedef struct run_opts {
    int steps, rank0;
    const unsigned char *text;
    long len;
    const int *map;
    FILE *loss_log; /* rank 0, --loss-log */
} run_opts;

typedef struct run_result {
    double step_s;      /* mean host time of a step (the first, warm-up, left out) */
    double bubble;      /* 1 - sum busy / (d * GPU step time), over the measured steps */
    double loss;
} run_result;

/* builds (and lowers) a schedule; 1f1b-r keeps its stage inputs */
static int build(pp_config *sc, pp_schedule **s, pp_program **prog, char *err) {
    *s = NULL;
    *prog = NULL;
    const pp_sched_info *in = pp_sched_find(sc->schedule);
    if (in && in->recompute && sc->recompute_input == 0)
        sc->recompute_input = 0.1; /* any > 0: the predicted peak then counts the kept inputs */
    if (pp_sched_build(sc, s, err) != PP_OK) return 0;
    if (pp_sched_lower(*s, prog, err) != PP_OK || pp_sched_check_deadlock(*prog, NULL, err) != PP_OK) return 0;
    return 1;
}

/* 0 with a message naming the step and the tensor when the loss or a
   gradient (gpt_ref.h's layout) is NaN or infinite: training on would only
   carry it into every weight */
static int finite_step(pp_cuda *ctx, const pp_cuda_model *m, int step, float loss, float *grads, char *err) {
    gpt_config c;
    size_t sizes[GPT_NUM_TENSORS], off = 0, i;
    int t;
    if (!isfinite(loss)) {
        snprintf(err, PP_CUDA_ERR_LEN, "step %d: the loss is %g", step, loss);
        return 0;
    }
    if (pp_cuda_get_grads(ctx, grads, err) != PP_CUDA_OK) return 0;
    c.vocab = m->vocab; c.seq = m->seq; c.channels = m->channels; c.heads = m->heads; c.layers = m->layers;
    c.batch = m->batch;
    gpt_param_sizes(&c, sizes);
    for (t = 0; t < GPT_NUM_TENSORS; off += sizes[t], t++)
        for (i = 0; i < sizes[t]; i++)
            if (!isfinite(grads[off + i])) {
                snprintf(err, PP_CUDA_ERR_LEN, "step %d: the gradient of %s is %g at element %zu of %zu (loss %g)", step,
                         gpt_tensor_names[t], grads[off + i], i, sizes[t], loss);
                return 0;
            }
    return 1;
}

/* trains `steps` steps of schedule s; prints as it goes (rank 0) */
static int train(pp_cuda *ctx, const pp_schedule *s, const pp_program *prog, const pp_cuda_model *m, const run_opts *o,
                 run_result *res, char *err) {
    int n = s->microbatches, T = m->seq, B = m->batch, step, i, j, d = s->devices, measured = 0;
    size_t N = (size_t)n * B * T;
    int *tok = (int *)malloc(sizeof(int) * N), *tgt = (int *)malloc(sizeof(int) * N);
    float *grads = (float *)malloc(sizeof(float) * pp_cuda_num_params(ctx));
    unsigned long long rng = 2026;
    double host = 0, gpu = 0, busy = 0;
    float loss = 0;
    if (!tok || !tgt || !grads) { free(tok); free(tgt); free(grads); snprintf(err, PP_CUDA_ERR_LEN, "out of host memory"); return 0; }
    for (step = 0; step < o->steps; step++) {
        double t0;
        /* every rank draws the same microbatches: random windows of T+1 bytes */
        for (j = 0; j < n * B; j++) {
            long at = (long)(rng_next(&rng) % (unsigned long long)(o->len - T - 1));
            for (i = 0; i < T; i++) {
                tok[(size_t)j * T + i] = o->map[o->text[at + i]];
                tgt[(size_t)j * T + i] = o->map[o->text[at + i + 1]];
            }
        }
        t0 = now_s();
        if (pp_cuda_step(ctx, prog, tok, tgt, &loss, err) != PP_CUDA_OK) break;
        if (step > 0 || o->steps == 1) { /* the first step warms up */
            pp_cuda_device info;
            host += now_s() - t0;
            gpu += pp_cuda_step_ms(ctx);
            for (i = 0; i < d; i++)
                if (pp_cuda_device_info(ctx, i, &info) == PP_CUDA_OK && info.local) busy += info.busy_ms;
            measured++;
        }
        if (!finite_step(ctx, m, step, loss, grads, err) || pp_cuda_update(ctx, err) != PP_CUDA_OK) break;
        if (o->rank0 && o->loss_log) fprintf(o->loss_log, "%d %.9g\n", step, loss);
        if (o->rank0 && (step % (o->steps / 10 > 0 ? o->steps / 10 : 1) == 0 || step == o->steps - 1))
            printf("step %5d  loss %.4f\n", step, loss);
    }
    free(tok);
    free(tgt);
    free(grads);
    if (step < o->steps) return 0;
    res->step_s = measured ? host / measured : 0;
    /* this process's devices only; in NCCL mode one of d */
    res->bubble = gpu > 0 ? 1 - busy / ((nccl_mode ? 1 : d) * gpu) : 0;
    res->loss = loss;
    return 1;
}

static void report(pp_cuda *ctx, const pp_schedule *s, const pp_cuda_model *m, const run_result *r, int rank0) {
    int d = s->devices, i, nccl = nccl_mode;
    double tokens = (double)s->microbatches * m->batch * m->seq;
    if (rank0) {
        printf("step time %.2f ms, %.0f tokens/s; measured bubble %.1f%% (%s), predicted %.1f%% at unit times\n",
               1e3 * r->step_s, r->step_s > 0 ? tokens / r->step_s : 0, 100 * r->bubble,
               nccl ? "rank 0's device" : "one GPU: the d devices share it, so this is the idle share of d streams",
               100 * s->bubble_rate);
        printf("device  peak activation MiB: measured  predicted  (live slots: measured predicted allocated)\n");
    }
    for (i = 0; i < d; i++) {
        pp_cuda_device info;
        double predicted = s->stage_memory[0] > 0 ? s->peak_memory[i] / s->stage_memory[0] : 0;
        if (pp_cuda_device_info(ctx, i, &info) != PP_CUDA_OK || !info.local) continue;
        printf("%s%6d  %28.2f  %9.2f  (%d %g %d)\n", nccl ? "rank " : "", i,
               (double)info.peak_slots * info.slot_bytes / 1048576.0, predicted * info.slot_bytes / 1048576.0,
               info.peak_slots, predicted, info.slots);
    }
    if (rank0) {
        printf("stage  F ms     B ms     W ms     BW ms  (mean measured pass times%s)\n",
               nccl ? "; rank 0's stages" : "");
        for (i = 0; i < s->stages; i++)
            if (pp_cuda_pass_ms(ctx, i, PP_F) > 0)
                printf("%5d  %-8.3f %-8.3f %-8.3f %-8.3f\n", i, pp_cuda_pass_ms(ctx, i, PP_F), pp_cuda_pass_ms(ctx, i, PP_B),
                       pp_cuda_pass_ms(ctx, i, PP_W), pp_cuda_pass_ms(ctx, i, PP_BW));
    }
    fflush(stdout);
}

static int setup(const pp_program *prog, pp_cuda_model *m, int mode, float lr, pp_cuda **ctx,
                 int *rank0, char *err) {
    pp_cuda_config cfg;
    pp_cuda_memory mem;
    memset(&cfg, 0, sizeof cfg);
    cfg.program = prog;
    cfg.model = *m;
    cfg.opt.lr = lr;
    cfg.seed = 1;
    cfg.profile = 1; /* events around every pass: the bubble and the pass times */
    cfg.mode = (pp_cuda_mode)mode;
    if (pp_cuda_create(&cfg, ctx, err) != PP_CUDA_OK) return 0;
    nccl_mode = mode == PP_CUDA_NCCL || pp_cuda_world(*ctx) > 1;
    *rank0 = pp_cuda_rank(*ctx) == 0;
    pp_cuda_memory_info(*ctx, &mem);
    if (*rank0)
        printf("memory plan (%s): %.1f MiB = activation slots %.1f + send buffers %.2f + recompute scratch %.1f + "
               "weights %.1f + gradients %.1f + AdamW %.1f + workspaces %.1f + data %.2f; %.0f MiB were free; the "
               "slots took %.1f MiB (cudaMemGetInfo)\n",
               nccl_mode ? "this rank" : "all devices on this GPU", mem.total / 1048576.0,
               mem.activations / 1048576.0, mem.send_buffers / 1048576.0, mem.scratch / 1048576.0,
               mem.weights / 1048576.0, mem.grads / 1048576.0, mem.optimizer / 1048576.0, mem.workspaces / 1048576.0,
               mem.data / 1048576.0, mem.free_at_start / 1048576.0, mem.measured_activations / 1048576.0);
    return 1;
}

/* per-stage times of schedule a's S stages turned into times for S2 stages
   of the same layers: each layer gets its stage's time / its layer count */
static void restage(const pp_times *t, int S, int S2, int layers, pp_times *out) {
    int s, l;
    for (s = 0; s < S2; s++) out[s].f = out[s].b = out[s].w = out[s].comm = 0;
    for (l = 0; l < layers; l++) {
        /* gpt_stage_of's split: earlier stages take the extra layers */
        int base = layers / S, extra = layers % S, s1 = 0, s2 = 0, first = 0, cnt;
        while (s1 < S) { cnt = base + (s1 < extra); if (l < first + cnt) break; first += cnt; s1++; }
        cnt = base + (s1 < extra);
        base = layers / S2; extra = layers % S2; first = 0;
        while (s2 < S2) { int c2 = base + (s2 < extra); if (l < first + c2) break; first += c2; s2++; }
        out[s2].f += t[s1].f / cnt;
        out[s2].b += t[s1].b / cnt;
        out[s2].w += t[s1].w / cnt;
    }
}

static int run(int argc, char **argv);
int main(int argc, char **argv) {
    pp_cli_init();
    return pp_cli_finish("train_gpt", run(argc, argv)); /* a failed write of the output: exit 1 */
}

static int run(int argc, char **argv) {
    const char *name, *path, *loss_log;
    int d, n, steps, lps, C, H, T, B, profile, profile_steps, mode;
    int rc = 0, vocab = 0, map[256], rank0 = 1, given[O_COUNT], replan_stages = 0;
    double mem_limit;
    float lr;
    options o;
    char msg[512];
    pp_cli_file loss_file;
    pp_config sc;
    pp_schedule *s = NULL, *s2 = NULL;
    pp_program *prog = NULL, *prog2 = NULL;
    pp_cuda *ctx = NULL;
    pp_cuda_model m;
    char err[PP_CUDA_ERR_LEN];
    unsigned char *text = NULL;
    long len = 0;
    run_opts ro;
    run_result res;

    memset(&ro, 0, sizeof ro);
    memset(&loss_file, 0, sizeof loss_file);
    memset(&o, 0, sizeof o);
    o.name = "v-half"; o.path = "data/pipeline.txt"; o.d = 4; o.n = 16; o.steps = 200; o.lps = 2; o.C = 128; o.H = 4;
    o.T = 64; o.B = 4; o.profile_steps = 10; o.mode = PP_CUDA_AUTO; o.lr = 1e-3;
    if (pp_cli_parse(argc, argv, 1, opts, sizeof opts[0], O_COUNT, given, set_option, NULL, &o, msg, sizeof msg))
        return usage_error(msg);
    if (o.help) { fputs(usage_text, stdout); return 0; }
    name = o.name; path = o.path; loss_log = o.loss_log; d = o.d; n = o.n; steps = o.steps; lps = o.lps; C = o.C;
    H = o.H; T = o.T; B = o.B; profile = o.profile; profile_steps = o.profile_steps; mode = o.mode;
    mem_limit = o.mem_limit; lr = (float)o.lr;
    /* every check that needs no training runs here, before any device is looked for */
    if (C % H) {
        snprintf(msg, sizeof msg, "--heads %d must divide --channels %d", H, C);
        return usage_error(msg);
    }
    if (!profile && given[O_MEM_LIMIT]) return usage_error("--mem-limit applies only with --profile (the limit of its v-auto re-plan)");
    if (!profile && given[O_PROFILE_STEPS]) return usage_error("--profile-steps applies only with --profile");
    {   /* the schedule before the device: arguments the library refuses exit 2 anywhere */
        pp_config chk;
        pp_schedule *cs = NULL;
        pp_status st;
        memset(&chk, 0, sizeof chk);
        chk.schedule = name;
        chk.devices = d;
        chk.microbatches = n;
        st = pp_sched_build(&chk, &cs, err);
        if (st == PP_OK) replan_stages = cs->stages;
        pp_sched_free(cs);
        if (st != PP_OK) { fprintf(stderr, "train_gpt: %s\n", err); return pp_status_bad_input(st) ? 2 : 1; }
    }
    if (profile) {
        /* the re-plan after profiling: v-auto's 2d stages need 2d layers, and
           its memory limit must be one some V schedule fits, whatever times
           the profile measures (the limit depends on the order, not the times) */
        pp_config vc;
        pp_schedule *vs = NULL;
        pp_status st;
        if (lps * replan_stages < 2 * d) {
            snprintf(msg, sizeof msg, "--profile re-plans with v-auto on %d stages: it needs at least %d layers, and %s "
                                      "has %d x %d (--layers-per-stage at least %d)", 2 * d, 2 * d, name, replan_stages,
                     lps, (2 * d + replan_stages - 1) / replan_stages);
            return usage_error(msg);
        }
        memset(&vc, 0, sizeof vc);
        vc.schedule = "v-auto";
        vc.devices = d;
        vc.microbatches = n;
        vc.mem_limit = mem_limit > 0 ? mem_limit : d / 2.0;
        st = pp_sched_build(&vc, &vs, err);
        pp_sched_free(vs);
        if (st != PP_OK) {
            fprintf(stderr, "train_gpt: --profile%s: %s\n", given[O_MEM_LIMIT] ? "" : " (default --mem-limit d/2)", err);
            return pp_status_bad_input(st) ? 2 : 1;
        }
    }

    if (pp_cuda_device_count() <= 0) {
        fprintf(stderr, "train_gpt: no CUDA device (this example needs a GPU; examples/train_cpu.c runs on CPU threads)\n");
        return 1;
    }

    /* the text; its distinct bytes are the vocabulary */
    text = gpt_read_text(path, T + 1, &len, map, &vocab, err);
    if (!text) { fprintf(stderr, "train_gpt: %s\n", err); return 1; }

    memset(&sc, 0, sizeof sc);
    sc.schedule = name;
    sc.devices = d;
    sc.microbatches = n;
    if (!build(&sc, &s, &prog, err)) { fprintf(stderr, "train_gpt: %s\n", err); rc = 1; goto end; }
    memset(&m, 0, sizeof m);
    m.vocab = vocab; m.seq = T; m.channels = C; m.heads = H; m.layers = lps * s->stages; m.batch = B;
    if (!setup(prog, &m, mode, lr, &ctx, &rank0, err)) { fprintf(stderr, "train_gpt: %s\n", err); rc = 1; goto end; }
    if (rank0)
        printf("schedule %s: d=%d v=%d stages=%d n=%d, %s; model: %d layers, C=%d, heads %d, T=%d, batch %d, vocab %d "
               "(bytes of %s), %zu parameters; programs: %d ops, checked deadlock-free\n",
               s->name, d, s->chunks, s->stages, n, nccl_mode ? "NCCL, one rank per device" : "one GPU",
               m.layers, C, H, T, B, vocab, path, pp_cuda_num_params(ctx), prog->num_ops);
    ro.rank0 = rank0;
    ro.text = text;
    ro.len = len;
    ro.map = map;
    ro.steps = profile ? profile_steps : steps;
    if (rank0 && loss_log) { /* written under a temporary name, renamed at the end (pp_cli.h) */
        if (pp_cli_create("train_gpt", &loss_file, loss_log)) { rc = 1; goto end; }
        ro.loss_log = loss_file.f;
    }
    if (!train(ctx, s, prog, &m, &ro, &res, err)) { fprintf(stderr, "train_gpt: %s\n", err); rc = 1; goto end; }
    report(ctx, s, &m, &res, rank0);
    {
        /* the prediction at the measured pass times (a collective in NCCL mode) */
        pp_times *t = (pp_times *)calloc((size_t)s->stages, sizeof(pp_times));
        pp_schedule *ms = NULL;
        pp_config mc = sc;
        double at_measured = -1; /* predicted bubble of s at the measured times */
        if (t && pp_cuda_stage_times(ctx, t, err) == PP_CUDA_OK) {
            mc.stage_times = t;
            if (pp_sched_build(&mc, &ms, err) == PP_OK) at_measured = ms->bubble_rate;
            if (at_measured >= 0 && rank0)
                printf("predicted bubble at the measured pass times: %.1f%%\n", 100 * at_measured);
            pp_sched_free(ms);
            if (profile) {
                /* re-plan: v-auto with those times, carried over to its 2d stages */
                pp_times *t2 = (pp_times *)calloc((size_t)2 * d, sizeof(pp_times));
                pp_config vc;
                memset(&vc, 0, sizeof vc);
                vc.schedule = "v-auto";
                vc.devices = d;
                vc.microbatches = n;
                vc.mem_limit = mem_limit > 0 ? mem_limit : d / 2.0;
                if (t2 && m.layers >= 2 * d) {
                    restage(t, s->stages, 2 * d, m.layers, t2);
                    vc.stage_times = t2;
                    if (!build(&vc, &s2, &prog2, err)) {
                        fprintf(stderr, "train_gpt: re-plan: %s\n", err);
                        rc = 1;
                    } else {
                        if (rank0)
                            printf("\nre-planned: v-auto at mem-limit %g with the measured times: predicted bubble "
                                   "%.1f%%, peak %g units per device (%s had %.1f%% and %g)\n",
                                   vc.mem_limit, 100 * s2->bubble_rate, s2->peak_memory[0], s->name,
                                   100 * (at_measured >= 0 ? at_measured : s->bubble_rate), s->peak_memory[0]);
                        pp_cuda_destroy(ctx);
                        ctx = NULL;
                        if (!setup(prog2, &m, mode, lr, &ctx, &rank0, err)) {
                            fprintf(stderr, "train_gpt: %s\n", err);
                            rc = 1;
                        } else {
                            ro.steps = steps;
                            if (!train(ctx, s2, prog2, &m, &ro, &res, err)) {
                                fprintf(stderr, "train_gpt: %s\n", err);
                                rc = 1;
                            } else {
                                report(ctx, s2, &m, &res, rank0);
                            }
                        }
                    }
                } else {
                    if (rank0) fprintf(stderr, "train_gpt: re-plan needs at least %d layers (--layers-per-stage)\n", 2 * d);
                    rc = 1;
                }
                free(t2);
            }
        } else {
            fprintf(stderr, "train_gpt: %s\n", err);
            rc = 1;
        }
        free(t);
    }
end:
    /* the losses of the steps that ran, also of a failed run: whole lines, renamed in place */
    if (loss_file.f && pp_cli_commit("train_gpt", &loss_file) && rc == 0) rc = 1;
    pp_cuda_destroy(ctx);
    pp_program_free(prog);
    pp_program_free(prog2);
    pp_sched_free(s);
    pp_sched_free(s2);
    free(text);
    return rc;
}
