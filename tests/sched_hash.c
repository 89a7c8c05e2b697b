/* sched_hash.c - one hash of what every built-in schedule builds.

   A refactor that means to keep the schedules as they are proves it with
   this hash: run `make hash` before and after and compare. It builds every
   built-in schedule (those that take a limit, takes_limit in
   pp_sched_info, at several limits) over a grid of devices, microbatches,
   times (unit, uneven, with comm, B = 2F, W = 0, per-stage times) and
   reorder on and off, and hashes (FNV-1a, 64 bits) the status of each build
   and, when it built, every pass (device, stage, microbatch, kind, start,
   end, the doubles bit for bit) and every device's simulated peak.

   Build and run:  make hash   (or cc -std=c99 -O2 tests/sched_hash.c -lm)
   Prints one line per schedule (builds, failures, its own hash) and the
   total hash last. -v also prints one line per build: its hash, makespan,
   largest device peak and the memory the schedule promises (an adaptive
   schedule's limit, else the largest Eq. 1 bound, -1 where it has none);
   bench/hash_diff.sh compares two headers' builds with it. -x adds three
   time settings to the grid (Table 5's, with and without comm; B = 2F with
   comm 0.05): a different hash, for comparing two headers only. */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void fnv(uint64_t *h, const void *p, size_t len) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < len; i++) { *h ^= b[i]; *h *= 1099511628211ull; }
}
static void fnv_int(uint64_t *h, int x) { long long v = x; fnv(h, &v, sizeof v); }
static void fnv_double(uint64_t *h, double x) {
    if (x == 0) x = 0; /* -0 and 0 hash alike */
    fnv(h, &x, sizeof x);
}

static void hash_schedule(uint64_t *h, pp_status st, const pp_schedule *s) {
    int i;
    fnv_int(h, (int)st);
    if (st != PP_OK) return;
    fnv_int(h, s->num_passes);
    for (i = 0; i < s->num_passes; i++) {
        const pp_pass *p = &s->passes[i];
        fnv_int(h, p->device), fnv_int(h, p->stage), fnv_int(h, p->microbatch), fnv_int(h, (int)p->kind);
        fnv_double(h, p->start), fnv_double(h, p->end);
    }
    for (i = 0; i < s->devices; i++) fnv_double(h, s->peak_memory[i]);
}

int main(int argc, char **argv) {
    static const int ds[] = {2, 3, 4, 5, 8};
    static const pp_times times[] = {
        {1, 1, 1, 0},       /* unit */
        {1.3, 2.1, 0.7, 0}, /* uneven */
        {1, 1, 1, 0.25},    /* with comm */
        {1, 2, 1, 0},       /* B = 2F */
        {1, 2, 0, 0.1},     /* W = 0 */
    };
    /* -x only (not in the hash make hash prints): Table 5's times, with and without comm, and B = 2F with a
       small comm, where the list-built V-ZB and zb-auto candidates differ from the blocks */
    static const pp_times extra[] = {{12.96, 13.22, 9.76, 0}, {12.96, 13.22, 9.76, 0.6}, {1, 2, 1, 0.05}};
    static const double limit_frac[] = {0, 0.5, 0.75, 1.5}; /* x d; 0 = the default */
    int a, verbose = 0, nextra = 0, nt = (int)(sizeof times / sizeof times[0]);
    uint64_t total = 14695981039346656037ull;
    int id, count = pp_sched_count(), builds_all = 0;
    pp_times stt[16];
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-v") == 0) verbose = 1;
        else if (strcmp(argv[a], "-x") == 0) nextra = (int)(sizeof extra / sizeof extra[0]);
        else { fprintf(stderr, "usage: sched_hash [-v] [-x]\n"); return 2; }
    }
    {
        int s;
        for (s = 0; s < 16; s++) stt[s].f = 1 + 0.1 * (s % 5), stt[s].b = 2 - 0.15 * (s % 3), stt[s].w = 0.5 + 0.05 * s, stt[s].comm = 0;
    }
    for (id = 0; id < count; id++) {
        const pp_sched_info *info = pp_sched_info_at(id);
        uint64_t h = 14695981039346656037ull;
        int di, ni, ti, li, ro, builds = 0, fails = 0;
        int adaptive = info->takes_limit;
        for (di = 0; di < (int)(sizeof ds / sizeof ds[0]); di++)
        for (ni = 0; ni < 6; ni++)
        for (ti = 0; ti <= nt + nextra; ti++)
        for (li = 0; li < (adaptive ? (int)(sizeof limit_frac / sizeof limit_frac[0]) : 1); li++)
        for (ro = 0; ro < 2; ro++) {
            int d = ds[di], ns[6], n;
            pp_config cfg;
            pp_schedule *s = NULL;
            pp_status st;
            char err[PP_ERR_LEN];
            ns[0] = 1, ns[1] = 3, ns[2] = d, ns[3] = 2 * d, ns[4] = 3 * d + 1, ns[5] = 4 * d;
            n = ns[ni];
            if (adaptive && d == 8 && n > 2 * d) continue; /* keep the run short */
            memset(&cfg, 0, sizeof cfg);
            cfg.schedule = info->name;
            cfg.devices = d;
            cfg.microbatches = n;
            cfg.no_reorder = ro;
            if (ti < nt) cfg.times = times[ti];
            else if (ti > nt) cfg.times = extra[ti - nt - 1];
            else cfg.times = times[2], cfg.stage_times = stt; /* per stage, with comm */
            cfg.mem_limit = limit_frac[li] * d;
            st = pp_sched_build(&cfg, &s, err);
            fnv_int(&h, d), fnv_int(&h, n), fnv_int(&h, ti), fnv_int(&h, li), fnv_int(&h, ro);
            hash_schedule(&h, st, s);
            builds++;
            if (st != PP_OK) fails++;
            if (verbose) {
                uint64_t one = 14695981039346656037ull;
                double peak = 0, promise = -1;
                int i;
                hash_schedule(&one, st, s);
                for (i = 0; st == PP_OK && i < s->devices; i++) {
                    peak = peak > s->peak_memory[i] ? peak : s->peak_memory[i];
                    promise = promise > s->peak_bound[i] ? promise : s->peak_bound[i];
                }
                if (st == PP_OK && s->mem_limit > 0) promise = s->mem_limit;
                printf("  %s d=%d n=%d times#%d limit %g reorder %d: %s %016llx makespan %.17g peak %.17g promise %.17g\n",
                       info->name, d, n, ti, cfg.mem_limit, !ro, pp_status_string(st), (unsigned long long)one,
                       st == PP_OK ? s->makespan : -1, peak, promise);
            }
            pp_sched_free(s);
        }
        printf("%-20s %5d builds %5d refused  %016llx\n", info->name, builds, fails, (unsigned long long)h);
        fnv(&total, &h, sizeof h);
        builds_all += builds;
    }
    printf("all %d schedules, %d builds: %016llx\n", count, builds_all, (unsigned long long)total);
    return 0;
}
