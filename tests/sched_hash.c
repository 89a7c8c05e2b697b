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
   comm 0.05), -l the adaptive schedules at n = 4d and 8d (d 4..16, five
   time settings, five limits): a different hash, for comparing two
   headers only.

   `make hash-big` (sched_hash big) covers the sizes the grid does not: every
   built-in at d = 128, n = 1024 (unit times), and at d = 16, n = 128 and
   d = 32, n = 256 with Table 5's times, with comm and B = 2F, at several
   limits; one line per build (makespan and hash), so two headers can be
   diffed line by line. -DPP_SCHED_HEADER='"path"' builds this file against
   another copy of the header (an older one, to compare). */
#define PP_SCHED_IMPLEMENTATION
#ifdef PP_SCHED_HEADER
#include PP_SCHED_HEADER
#else
#include "../pp_sched.h"
#endif

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

/* One build of the grids (t, stt may be NULL: unit times, no per-stage times). */
static pp_status build_one(const char *name, int d, int n, const pp_times *t, const pp_times *stt, double limit, int ro,
                           pp_schedule **s) {
    pp_config cfg;
    char err[PP_ERR_LEN];
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = name;
    cfg.devices = d;
    cfg.microbatches = n;
    cfg.no_reorder = ro;
    if (t) cfg.times = *t;
    cfg.stage_times = stt;
    cfg.mem_limit = limit;
    return pp_sched_build(&cfg, s, err);
}

/* One build per line: name, d, n, times, limit, status, makespan, hash. */
static uint64_t big_one(const char *name, int d, int n, const pp_times *t, double limit) {
    pp_schedule *s = NULL;
    pp_status st = build_one(name, d, n, t, NULL, limit, 0, &s);
    uint64_t one = 14695981039346656037ull;
    hash_schedule(&one, st, s);
    printf("%-20s d=%-3d n=%-4d times %g/%g/%g/%g limit %-5g %-12s %-12.10g %016llx\n", name, d, n, t ? t->f : 1,
           t ? t->b : 1, t ? t->w : 1, t ? t->comm : 0, limit, pp_status_string(st), st == PP_OK ? s->makespan : 0,
           (unsigned long long)one);
    fflush(stdout);
    pp_sched_free(s);
    return one;
}

static int big(void) {
    static const pp_times times[] = {
        {12.96, 13.22, 9.76, 0},   /* the paper's Table 5 */
        {12.96, 13.22, 9.76, 0.6}, /* with the comm fitted to Table 4's 1F1B row */
        {1, 2, 1, 0.05},           /* B = 2F with comm */
        {1, 2, 0, 0.1},            /* W = 0 */
    };
    static const int dn[][2] = {{16, 128}, {32, 256}};
    static const double limit_frac[] = {0, 0.5, 0.75};
    uint64_t total = 14695981039346656037ull, h;
    int id, count = pp_sched_count(), k, ti, li;
    for (id = 0; id < count; id++) {
        h = big_one(pp_sched_info_at(id)->name, 128, 1024, NULL, 0);
        fnv(&total, &h, sizeof h);
    }
    for (k = 0; k < 2; k++)
        for (id = 0; id < count; id++)
            for (ti = 0; ti < (int)(sizeof times / sizeof times[0]); ti++)
                for (li = 0; li < (pp_sched_info_at(id)->takes_limit ? 3 : 1); li++) {
                    if (k == 1 && !pp_sched_info_at(id)->takes_limit) continue; /* d = 32: the searches only */
                    h = big_one(pp_sched_info_at(id)->name, dn[k][0], dn[k][1], &times[ti], limit_frac[li] * dn[k][0]);
                    fnv(&total, &h, sizeof h);
                }
    printf("all: %016llx\n", (unsigned long long)total);
    return 0;
}

/* One build of the grid into h (and a line with -v): 1 when refused. ti: the
   times' label (100 + k: -l's times #Lk) */
static int grid_one(uint64_t *h, int verbose, const pp_sched_info *info, int d, int n, int ti, const pp_times *t,
                    const pp_times *stt, double limit, int li, int ro) {
    pp_schedule *s = NULL;
    pp_status st = build_one(info->name, d, n, t, stt, limit, ro, &s);
    fnv_int(h, d), fnv_int(h, n), fnv_int(h, ti), fnv_int(h, li), fnv_int(h, ro);
    hash_schedule(h, st, s);
    if (verbose) {
        uint64_t one = 14695981039346656037ull;
        double peak = 0, promise = -1;
        int i;
        char label[16];
        hash_schedule(&one, st, s);
        for (i = 0; st == PP_OK && i < s->devices; i++) {
            peak = peak > s->peak_memory[i] ? peak : s->peak_memory[i];
            promise = promise > s->peak_bound[i] ? promise : s->peak_bound[i];
        }
        if (st == PP_OK && s->mem_limit > 0) promise = s->mem_limit;
        if (ti >= 100) snprintf(label, sizeof label, "L%d", ti - 100);
        else snprintf(label, sizeof label, "%d", ti);
        printf("  %s d=%d n=%d times#%s limit %g reorder %d: %s %016llx makespan %.17g peak %.17g promise %.17g\n",
               info->name, d, n, label, limit, !ro, pp_status_string(st), (unsigned long long)one,
               st == PP_OK ? s->makespan : -1, peak, promise);
    }
    pp_sched_free(s);
    return st != PP_OK;
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
    /* -l only: unit, B = 2F, W = 0 with comm, uneven, Table 5 with comm */
    static const pp_times ltimes[] = {{1, 1, 1, 0}, {1, 2, 1, 0}, {1, 2, 0, 0.1}, {1.3, 2.1, 0.7, 0}, {12.96, 13.22, 9.76, 0.6}};
    static const int lds[] = {4, 6, 8, 12, 16};
    static const double llimit_frac[] = {0, 0.5, 0.75, 1.5, 2};
    int a, verbose = 0, nextra = 0, large = 0, nt = (int)(sizeof times / sizeof times[0]);
    uint64_t total = 14695981039346656037ull;
    int id, count = pp_sched_count(), builds_all = 0;
    pp_times stt[16];
    if (argc > 1 && strcmp(argv[1], "big") == 0) return big();
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-v") == 0) verbose = 1;
        else if (strcmp(argv[a], "-x") == 0) nextra = (int)(sizeof extra / sizeof extra[0]);
        else if (strcmp(argv[a], "-l") == 0) large = 1;
        else { fprintf(stderr, "usage: sched_hash [-v] [-x] [-l] | sched_hash big\n"); return 2; }
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
            ns[0] = 1, ns[1] = 3, ns[2] = d, ns[3] = 2 * d, ns[4] = 3 * d + 1, ns[5] = 4 * d;
            n = ns[ni];
            if (adaptive && d == 8 && n > 2 * d) continue; /* keep the run short */
            builds++;
            fails += grid_one(&h, verbose, info, d, n, ti, ti < nt ? &times[ti] : ti > nt ? &extra[ti - nt - 1] : &times[2],
                              ti == nt ? stt : NULL, limit_frac[li] * d, li, ro);
        }
        /* -l: the adaptive searches at n = 4d and 8d (above 2d + 6, where they
           reorder at 2d + 4 and extend, and stop at the order bound), times
           "#L0".."#L4" */
        for (di = 0; di < (int)(sizeof lds / sizeof lds[0]) && large && info->adaptive; di++)
        for (ni = 4; ni <= 8; ni += 4)
        for (ti = 0; ti < (int)(sizeof ltimes / sizeof ltimes[0]); ti++)
        for (li = 0; li < (adaptive ? (int)(sizeof llimit_frac / sizeof llimit_frac[0]) : 1); li++) {
            builds++;
            fails += grid_one(&h, verbose, info, lds[di], ni * lds[di], 100 + ti, &ltimes[ti], NULL,
                              llimit_frac[li] * lds[di], li, 0);
        }
        printf("%-20s %5d builds %5d refused  %016llx\n", info->name, builds, fails, (unsigned long long)h);
        fnv(&total, &h, sizeof h);
        builds_all += builds;
    }
    printf("all %d schedules, %d builds: %016llx\n", count, builds_all, (unsigned long long)total);
    return 0;
}
