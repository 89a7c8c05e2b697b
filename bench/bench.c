/* bench.c - how long pp_sched_build takes for every built-in schedule.

   Demonstrates timing the whole build (block, repeat, squeeze, reorder,
   simulated peak memory) at a size larger than any real pipeline: d = 64
   devices, n = 1024 microbatches, unit times.

   Build and run:  make bench
   Prints:         one line per schedule (the adaptive ones, v-auto and
                   zb-auto, in a second table at growing d and n, with
                   wall and CPU time): name, build time in milliseconds
                   (best of 3, CLOCK_MONOTONIC), makespan, bubble rate and the
                   largest per-device peak memory (units: one microbatch's
                   activation for one device's share of the model). A schedule
                   that does not build prints the library's message instead.
                   Always exits 0: it measures, it does not judge.
                   First, the scale table: every built-in at
                   d = 128, n = 1024 and v-auto at d = 16, n = 128, CPU ms
                   (best of up to 3 builds), at unit times and at the three
                   measured settings of make optimal-grid (Table 5 + comm
                   0.6, B = 2F + comm 0.1, the last stage 1.3x);
                   `bench/bench scale [NAME..]` prints it alone (make
                   bench-scale), for the schedules named.
                   `bench/bench limits` (make bench-limits): the corners of
                   LIMITS, each built alone in a child process under a CPU
                   cap (BENCH_LIMITS_CAP seconds, default 300): every
                   built-in at its largest d with its smallest n (where
                   the builder wants n = d or 2d, the largest d LIMITS
                   takes with that n), every
                   built-in at d = 4 with its largest n, and the
                   searches (the adaptive ones and interleaved-1f1b-m) at
                   their largest d (at n = 1 and n = 2d + 4, their
                   dearest) and at d = 4096 and 65536 (refused, with
                   what to use instead). One line each: CPU seconds, peak
                   memory (getrusage maxrss) and the status.
                   `bench/bench limits NAME` runs one schedule's corners. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c99 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_PLAN_IMPLEMENTATION
#include "../pp_plan.h"

#define DEVICES 64
#define MICROBATCHES 1024
#define REPEATS 3

static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void adaptive_header(void) {
    printf("%-10s %4s %5s %6s %10s %10s %10s %8s %9s\n", "schedule", "d", "n", "limit", "wall ms", "cpu ms", "makespan",
           "bubble", "max peak");
}

/* One build of an adaptive schedule, timed (wall and CPU), as one row. */
static void adaptive_row(const pp_config *cfg) {
    pp_schedule *s = NULL;
    char err[PP_ERR_LEN];
    double t0 = now_ms(), c0 = cpu_ms(), ms, cpu, peak = 0, limit = cfg->mem_limit > 0 ? cfg->mem_limit : cfg->devices;
    int i;
    if (pp_sched_build(cfg, &s, err) != PP_OK) {
        printf("%-10s %4d %5d %6g failed: %s\n", cfg->schedule, cfg->devices, cfg->microbatches, limit, err);
        return;
    }
    ms = now_ms() - t0;
    cpu = cpu_ms() - c0;
    for (i = 0; i < s->devices; i++)
        if (s->peak_memory[i] > peak) peak = s->peak_memory[i];
    printf("%-10s %4d %5d %6g %10.1f %10.1f %10.6g %7.2f%% %9.6g\n", cfg->schedule, cfg->devices, cfg->microbatches, limit,
           ms, cpu, s->makespan, 100.0 * s->bubble_rate, peak);
    fflush(stdout);
    pp_sched_free(s);
}

/* pp_plan (pp_plan.h): the paper's 98.5B model (Table 2) on 40 GPUs of 80
   GiB (target: well under a second each); 1,000 and 10,000 layers on 40
   GPUs (under a second, a few seconds); Llama 3 405B on 16,384
   H100s, DeepSeek-V3 on 2048 H800s (FP8), Llama 3 405B on 1024 H100s and
   Llama 3 70B on 162 (every request under 2 s of CPU). Wall and CPU time,
   each the least of three runs: the CPU time is what the targets are about
   on a shared machine. */
static void bench_plan(void) {
    static pp_candidate c[200000];
    pp_plan_request r;
    char err[PP_ERR_LEN];
    int n = 0, j, i, k, pruned, over = 0;
    for (j = 0; j < 9; j++) {
        double t0, c0, wall, cpu;
        char what[96];
        memset(&r, 0, sizeof r);
        r.model.layers = 78;
        r.model.hidden = 10240;
        r.model.heads = 80;
        r.model.seq = j == 0 ? 1024 : j == 1 ? 3072 : 16384;
        r.global_batch = j == 1 ? 640 : 160;
        r.gpus = 40;
        r.gpu.mem_bytes = 80.0 * 1073741824.0;
        r.cp = 1;
        snprintf(what, sizeof what, "98.5B seq %d batch %d, 40 x 80 GiB", r.model.seq, r.global_batch);
        if (j == 3 || j == 4) { /* a deep narrow stack */
            r.model.layers = j == 3 ? 1000 : 10000;
            r.model.hidden = 1024;
            r.model.heads = 16;
            r.model.seq = 1024;
            snprintf(what, sizeof what, "%d layers (h 1024) seq 1024 batch 160, 40 x 80 GiB", r.model.layers);
        }
        if (j >= 5) { /* published models on their real clusters */
            static const struct { const char *model, *gpu; int gpus, batch; } big[4] = {
                {"llama3-405b", "h100-80g", 16384, 2048}, {"deepseek-v3", "h800", 2048, 15360},
                {"llama3-405b", "h100-80g", 1024, 1024}, {"llama3-70b", "h100-80g", 162, 648}};
            memset(&r, 0, sizeof r);
            pp_model_preset(big[j - 5].model, &r.model, NULL);
            pp_gpu_preset(big[j - 5].gpu, &r.gpu, NULL);
            if (j == 6) { r.fp8 = 1; r.model.recompute_norm_up = 1; r.model.fp8_moe_act = 1; r.recipe = PP_RECIPE_DEEPSEEK; }
            r.gpus = big[j - 5].gpus;
            r.global_batch = big[j - 5].batch;
            snprintf(what, sizeof what, "%s, %d x %s, batch %d x %d", big[j - 5].model, r.gpus, big[j - 5].gpu,
                     r.global_batch, r.model.seq);
        }
        /* the least of three runs: the machine may be shared */
        for (k = 0, wall = cpu = -1; k < 3; k++) {
            double w1, c1;
            t0 = now_ms();
            c0 = cpu_ms();
            if (pp_plan(&r, c, 200000, &n, err) != PP_OK) break;
            w1 = now_ms() - t0;
            c1 = cpu_ms() - c0;
            if (wall < 0 || w1 < wall) wall = w1;
            if (cpu < 0 || c1 < cpu) cpu = c1;
        }
        if (k < 3) { printf("pp_plan %s failed: %s\n", what, err); continue; }
        for (i = pruned = 0; i < n; i++) pruned += c[i].pruned;
        if (cpu > 2000) over++;
        printf("pp_plan %s: %.0f ms wall, %.0f ms CPU%s, %d candidates (%d pruned), best %s pp=%d tp=%d cp=%d ep=%d v=%d "
               "mbs=%d\n", what, wall, cpu, cpu > 2000 ? " (over 2 s)" : "", n, pruned, c[0].schedule, c[0].pp, c[0].tp,
               c[0].cp, c[0].ep, c[0].v, c[0].mbs);
        fflush(stdout);
    }
    printf("pp_plan: %d of 9 requests over 2 s of CPU (least of 3 runs each)\n", over);
}

/* CPU ms of one build (best of up to 3, fewer once 3 s are spent), with
   its makespan; -1 when it does not build (the message goes to err). */
static double cpu_build(const pp_config *cfg, double *makespan, char *err) {
    double best = -1, spent = 0;
    int r;
    for (r = 0; r < 3 && spent < 3000; r++) {
        pp_schedule *s = NULL;
        double c0 = cpu_ms(), ms;
        if (pp_sched_build(cfg, &s, err) != PP_OK) return -1;
        ms = cpu_ms() - c0;
        spent += ms;
        if (best < 0 || ms < best) best = ms;
        *makespan = s->makespan;
        pp_sched_free(s);
    }
    return best;
}

/* The time settings of the scale table: unit times, and the three measured
   settings of make optimal-grid (Table 5 + comm 0.6; B = 2F + comm 0.1;
   per-stage times, every stage F, B, W = 1/v, the last stage 1.3x, as an LM
   head makes it), where the searches rarely stop at the order bound. */
static const struct { const char *name; double f, b, w, comm, last; } scale_set[] = {
    {"unit", 1, 1, 1, 0, 1}, {"table5", 12.96, 13.22, 9.76, 0.6, 1}, {"b2f", 1, 2, 1, 0.1, 1}, {"last1.3", 1, 1, 1, 0, 1.3}};
#define SCALE_SETS ((int)(sizeof scale_set / sizeof scale_set[0]))

/* cfg at setting k; stage: room for the per-stage times (d * chunks) */
static void scale_config(pp_config *cfg, const pp_sched_info *in, int d, int n, int k, pp_times *stage) {
    int S, i;
    double v;
    memset(cfg, 0, sizeof *cfg);
    cfg->schedule = in->name;
    cfg->devices = d;
    cfg->microbatches = n;
    cfg->times.f = scale_set[k].f; cfg->times.b = scale_set[k].b; cfg->times.w = scale_set[k].w;
    cfg->times.comm = scale_set[k].comm;
    if (scale_set[k].last == 1) return;
    /* as bench/stage_json.c: S = chunks x d stages, each at 1/v of the
       device's share (v = chunks per model copy) */
    S = in->chunks * d;
    v = (double)in->chunks / (in->copies > 1 ? in->copies : 1);
    for (i = 0; i < S; i++) {
        double x = i == S - 1 ? scale_set[k].last : 1.0;
        stage[i].f = cfg->times.f / v * x;
        stage[i].b = cfg->times.b / v * x;
        stage[i].w = cfg->times.w / v * x;
        stage[i].comm = 0;
    }
    cfg->stage_times = stage;
}

/* The build-time targets: every built-in at d = 128, n = 1024 (default
   settings) under 2 s of CPU, v-auto at d = 16, n = 128 under 50 ms, at
   unit times and at the three measured settings. CPU time: steadier than
   wall time on a shared machine. `bench/bench scale NAME..` times only
   those schedules. */
static void bench_scale(int argc, char **argv) {
    static const struct { int d, n; const char *only; } rows[] = {{128, 1024, NULL}, {16, 128, "v-auto"}};
    static pp_times stage[4096];
    int k, i, j, a;
    double total[SCALE_SETS];
    printf("build time at scale: default settings, CPU ms (best of up to 3); unit = F,B,W 1,1,1; table5 = 12.96,13.22,9.76 "
           "comm 0.6;\nb2f = 1,2,1 comm 0.1; last1.3 = unit times per device, the last stage 1.3x (per-stage times)\n");
    printf("%-20s %4s %5s", "schedule", "d", "n");
    for (j = 0; j < SCALE_SETS; j++) printf(" %10s", scale_set[j].name);
    printf("\n");
    for (j = 0; j < SCALE_SETS; j++) total[j] = 0;
    for (k = 0; k < 2; k++)
        for (i = 0; i < pp_sched_count(); i++) {
            const pp_sched_info *in = pp_sched_info_at(i);
            int want = argc <= 2;
            for (a = 2; a < argc; a++) want |= strcmp(argv[a], in->name) == 0;
            if (!want || (rows[k].only && strcmp(rows[k].only, in->name) != 0)) continue;
            printf("%-20s %4d %5d", in->name, rows[k].d, rows[k].n);
            fflush(stdout);
            for (j = 0; j < SCALE_SETS; j++) {
                pp_config cfg;
                char err[PP_ERR_LEN];
                double ms, makespan = 0;
                scale_config(&cfg, in, rows[k].d, rows[k].n, j, stage);
                ms = cpu_build(&cfg, &makespan, err);
                if (ms < 0) printf(" %10s", "failed");
                else printf(" %10.1f", ms);
                if (k == 0 && ms > 0) total[j] += ms;
                fflush(stdout);
            }
            printf("\n");
        }
    printf("all built-ins at d=128 n=1024, CPU ms in all:");
    for (j = 0; j < SCALE_SETS; j++) printf(" %s %.0f%s", scale_set[j].name, total[j], j + 1 < SCALE_SETS ? "," : "");
    printf("\n\n");
}

/* ---- bench limits: the corners of LIMITS ---- */

/* 1 when pp_sched_build's validation (the checks before any work) takes
   name at d, n */
static int limits_accepts(const char *name, int d, int n) {
    pp_config c;
    pp__req q;
    char err[PP_ERR_LEN];
    memset(&c, 0, sizeof c);
    c.schedule = name; c.devices = d; c.microbatches = n;
    if (pp__req_resolve(&c, &q, err) != PP_OK) return 0;
    pp__req_free(&q);
    return 1;
}

/* the smallest n the schedule takes at d (1, 2, d or 2d: the rules of
   the built-ins), 0 when none */
static int limits_smallest_n(const char *name, int d) {
    int tries[4], k;
    tries[0] = 1; tries[1] = 2; tries[2] = d; tries[3] = 2 * d;
    for (k = 0; k < 4; k++) if (limits_accepts(name, d, tries[k])) return tries[k];
    return 0;
}

/* one build in a child under a CPU cap: CPU seconds, peak memory, status;
   returns 1 when the build refused n (the builders' own rules on n, such as
   n a multiple of d), 0 otherwise */
static int limits_run(const char *name, int d, int n, int cap) {
    int fd[2];
    pid_t pid;
    char line[PP_ERR_LEN + 64];
    ssize_t got = 0;
    int status = 0;
    printf("%-20s %6d %9d  ", name, d, n);
    fflush(stdout);
    if (pipe(fd) != 0 || (pid = fork()) < 0) { printf("cannot fork\n"); return 0; }
    if (pid == 0) {
        pp_config c;
        pp_schedule *s = NULL;
        char err[PP_ERR_LEN];
        struct rlimit rl;
        struct rusage ru;
        pp_status st;
        int len;
        close(fd[0]);
        rl.rlim_cur = rl.rlim_max = (rlim_t)cap;
        setrlimit(RLIMIT_CPU, &rl);
        memset(&c, 0, sizeof c);
        c.schedule = name; c.devices = d; c.microbatches = n;
        err[0] = 0;
        st = pp_sched_build(&c, &s, err);
        getrusage(RUSAGE_SELF, &ru);
        len = snprintf(line, sizeof line, "%8.2f s %8.0f MB  %s%s\n",
                       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6,
                       ru.ru_maxrss / 1024.0, st == PP_OK ? "built" : "refused: ", st == PP_OK ? "" : err);
        if (write(fd[1], line, (size_t)len) != len) _exit(1);
        pp_sched_free(s);
        _exit(st == PP_ERR_INVALID_ARG ? 3 : 0);
    }
    close(fd[1]);
    got = read(fd[0], line, sizeof line - 1);
    close(fd[0]);
    waitpid(pid, &status, 0);
    if (got > 0) {
        line[got] = 0;
        fputs(line, stdout);
    } else if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL)) {
        printf("%8s   over the cap of %d s of CPU\n", "-", cap);
    } else {
        printf("%8s   the child failed (status %d)\n", "-", status);
    }
    fflush(stdout);
    return WIFEXITED(status) && WEXITSTATUS(status) == 3;
}

static void bench_limits(const char *only) {
    int i, cap = getenv("BENCH_LIMITS_CAP") ? atoi(getenv("BENCH_LIMITS_CAP")) : 300;
    static const int search_d[2] = {4096, 65536};
    if (cap < 1) cap = 300;
    printf("pp_sched %d.%d.%d: the corners of LIMITS, one build each in its own process, unit times, CPU capped at "
           "%d s\n%-20s %6s %9s  %8s   %8s     %s\n", PP_SCHED_VERSION_MAJOR, PP_SCHED_VERSION_MINOR,
           PP_SCHED_VERSION_PATCH, cap, "schedule", "d", "n", "CPU", "peak mem", "status");
    printf("-- largest d, smallest n\n");
    for (i = 0; i < pp_sched_count(); i++) {
        const char *name = pp_sched_info_at(i)->name;
        int lo = 1, hi = 65536, n;
        if (only && strcmp(name, only) != 0) continue;
        if (!limits_smallest_n(name, hi)) { /* the largest d it takes (one by d) */
            while (lo < hi) {
                int mid = lo + (hi - lo + 1) / 2;
                if (limits_smallest_n(name, mid)) lo = mid; else hi = mid - 1;
            }
        }
        /* the smallest n the build takes: 1, 2, d or 2d (the builders' rules) */
        n = limits_smallest_n(name, hi);
        if (n && limits_run(name, hi, n, cap)) {
            /* the builder wants n a multiple of d or n >= 2d: the largest d
               whose n = d (then 2d) LIMITS takes; dualpipe also wants d even */
            int k;
            for (k = 1; k <= 2; k++) {
                lo = 1;
                hi = 65536 / k;
                while (lo < hi) {
                    int mid = lo + (hi - lo + 1) / 2;
                    if (limits_accepts(name, mid, k * mid)) lo = mid; else hi = mid - 1;
                }
                if (!limits_accepts(name, lo, k * lo)) continue;
                if (!limits_run(name, lo, k * lo, cap)) break;
                if (k == 2 && lo % 2 && lo > 2 && !limits_run(name, lo - 1, k * (lo - 1), cap)) break;
            }
        }
    }
    printf("-- d = 4, largest n\n");
    for (i = 0; i < pp_sched_count(); i++) {
        const char *name = pp_sched_info_at(i)->name;
        long long lo = 1, hi = INT_MAX;
        if ((only && strcmp(name, only) != 0) || !limits_accepts(name, 4, 4)) continue;
        while (lo < hi) {
            long long mid = lo + (hi - lo + 1) / 2;
            /* interleaved and dualpipe take n a multiple of d or even: round down to 4 */
            if (limits_accepts(name, 4, (int)mid) || limits_accepts(name, 4, (int)(mid - mid % 4))) lo = mid; else hi = mid - 1;
        }
        limits_run(name, 4, limits_accepts(name, 4, (int)hi) ? (int)hi : (int)(hi - hi % 4), cap);
    }
    printf("-- the searches: their largest d at n = 1 and 2d + 4, and d = 4096, 65536\n");
    for (i = 0; i < pp_sched_count(); i++) {
        const pp_sched_info *in = pp_sched_info_at(i);
        const char *alt;
        int k, most;
        if ((!in->adaptive && !in->max_devices) || (only && strcmp(in->name, only) != 0)) continue;
        most = pp__devices_most(in, &alt);
        limits_run(in->name, most, 1, cap);
        limits_run(in->name, most, 2 * most + 4, cap);
        for (k = 0; k < 2; k++) limits_run(in->name, search_d[k], 1, cap);
    }
}

int main(int argc, char **argv) {
    int i, r, d;
    if (argc > 1 && strcmp(argv[1], "plan") == 0) { bench_plan(); return 0; }
    if (argc > 1 && strcmp(argv[1], "limits") == 0) { bench_limits(argc > 2 ? argv[2] : NULL); return 0; }
    bench_scale(argc, argv);
    if (argc > 1 && strcmp(argv[1], "scale") == 0) return 0;
    printf("pp_sched %d.%d.%d: pp_sched_build, d=%d n=%d, unit times, best of %d\n", PP_SCHED_VERSION_MAJOR,
           PP_SCHED_VERSION_MINOR, PP_SCHED_VERSION_PATCH, DEVICES, MICROBATCHES, REPEATS);
    printf("%-20s %10s %10s %8s %9s\n", "schedule", "ms", "makespan", "bubble", "max peak");
    for (i = 0; i < pp_sched_count(); i++) {
        const char *name = pp_sched_info_at(i)->name;
        pp_config cfg;
        pp_schedule *s = NULL;
        pp_status st = PP_OK;
        char err[PP_ERR_LEN];
        double best = -1, peak = 0;

        if (pp_sched_info_at(i)->adaptive) continue; /* below */
        memset(&cfg, 0, sizeof cfg);
        cfg.schedule = name;
        cfg.devices = DEVICES;
        cfg.microbatches = MICROBATCHES;
        for (r = 0; r < REPEATS; r++) {
            double t0 = now_ms(), ms;
            pp_sched_free(s); /* keep the last one to report on; free(NULL) is fine */
            s = NULL;
            st = pp_sched_build(&cfg, &s, err);
            ms = now_ms() - t0;
            if (st != PP_OK) break;
            if (best < 0 || ms < best) best = ms;
        }
        if (st != PP_OK) {
            printf("%-20s failed: %s\n", name, err[0] ? err : pp_status_string(st));
            fflush(stdout);
            continue;
        }
        for (d = 0; d < s->devices; d++)
            if (s->peak_memory[d] > peak) peak = s->peak_memory[d];
        printf("%-20s %10.2f %10.6g %7.2f%% %9.6g\n", name, best, s->makespan, 100.0 * s->bubble_rate, peak);
        fflush(stdout);
        pp_sched_free(s);
    }
    /* The adaptive schedules search many blocks per build: how the time
       grows with d (at n = 8d) and with n (at d = 16), at their default
       limit (d units, 1F1B's peak). Wall time and this process's CPU time:
       on a loaded machine the CPU time is the steadier of the two. */
    {
        static const int dn[][2] = {{4, 32}, {8, 64}, {16, 128}, {32, 256}, {64, 512},
                                    {16, 32}, {16, 64}, {16, 256}, {16, 512}};
        int k, j;
        printf("\nadaptive schedules at mem_limit = d (one build each; growth with d at n = 8d, then with n at d = 16)\n");
        adaptive_header();
        for (k = 0; k < pp_sched_count(); k++)
            for (j = 0; j < (int)(sizeof dn / sizeof dn[0]) && pp_sched_info_at(k)->takes_limit; j++) {
                pp_config cfg;
                memset(&cfg, 0, sizeof cfg);
                cfg.schedule = pp_sched_info_at(k)->name;
                cfg.devices = dn[j][0];
                cfg.microbatches = dn[j][1];
                adaptive_row(&cfg);
            }
    }
    /* v-auto where its search is hardest: the paper's Table 5 times (the
       stable phase has bubbles at low limits, so finalists are reordered at
       the full n) and limits below 1F1B's d. */
    {
        static const int ds[] = {8, 16, 32};
        static const double frac[] = {0.5, 0.75};
        int j, f;
        printf("\nv-auto at Table 5 times (F 12.96, B 13.22, W 9.76), n = 8d, limits d/2 and 3d/4\n");
        adaptive_header();
        for (j = 0; j < (int)(sizeof ds / sizeof ds[0]); j++)
            for (f = 0; f < 2; f++) {
                pp_config cfg;
                memset(&cfg, 0, sizeof cfg);
                cfg.schedule = "v-auto";
                cfg.devices = ds[j];
                cfg.microbatches = 8 * ds[j];
                cfg.mem_limit = frac[f] * ds[j];
                cfg.times.f = 12.96; cfg.times.b = 13.22; cfg.times.w = 9.76;
                adaptive_row(&cfg);
            }
    }
    bench_plan();
    return 0;
}
