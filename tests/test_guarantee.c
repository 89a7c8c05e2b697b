/* test_guarantee.c - the guarantee as a property, through the public
   API only (DESIGN.md, "The guarantee"): no built schedule is longer than
     (a) its own order built at unit times and squeezed at the user's times;
     (b) what any fixed schedule of its family (same placement, chunks,
         recompute and copies; split, or unsplit when it is unsplit) builds
         at the same times, when that schedule's memory caps fit its own
         (an adaptive schedule: fit its mem_limit).
   The comparison orders are built here through pp_sched_build, moved into
   another schedule's pass array and timed with pp_squeeze (or read back
   from PyTorch CSV with pp_sched_from_csv), never through the code that
   enforces the guarantee. Caps are worked out here from the rule in
   DESIGN.md: from the schedule built without reordering (its peak per
   device and Eq. 1 bound), or a published order's own peak.

   Grid: every built-in schedule, d = 2..8, n = d, 2d, 2d+1 (odd) and 4d
   (beyond 2d+6 from d = 4 on: reordered at 2d+4 and extended), times
   with comm (Table 5's 12.96/13.22/9.76, comm 0.6), B = 2F (1,2,1) and
   W = 0 with comm (1,1,0, 0.1); v-auto at limits d/2 and d, zb-auto at
   d and 3d/2.

   Build and run:  cc -std=c99 -O2 tests/test_guarantee.c -o test_guarantee -lm && ./test_guarantee
   Prints one line per check group and "test_guarantee: N groups passed, M failed". */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_SCHED_IO_IMPLEMENTATION
#include "../pp_sched_io.h"
#include "group.h"
#include <math.h>

#define MAXC 32  /* configurations per (d, n): schedules, adaptive ones at two limits */
#define MAXD 8
#define NT 3

static const pp_times times[NT] = {{12.96, 13.22, 9.76, 0.6}, {1, 2, 1, 0}, {1, 1, 0, 0.1}};
static const char *time_name[NT] = {"12.96,13.22,9.76,0.6", "1,2,1", "1,1,0,0.1"};

typedef struct conf {
    const pp_sched_info *in;
    double limit;        /* mem_limit asked; 0 = none or the default */
    int built;           /* the unit-time build worked (some schedules refuse some n) */
    double capu[MAXD];   /* memory caps at unit times (fixed schedules) */
    double cap[MAXD];    /* memory caps at the times being checked */
    pp_schedule *unit;   /* built at unit times */
    pp_schedule *fin;    /* built at the times being checked */
} conf;

static int tol_le(double a, double b) { return a <= b * (1 + 1e-9) + 1e-9; }

static pp_config config(const conf *c, int d, int n) {
    pp_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = c->in->name;
    cfg.devices = d;
    cfg.microbatches = n;
    cfg.mem_limit = c->limit;
    return cfg;
}

/* The caps rule of DESIGN.md, written from the docs: a published order's
   own peak per device; otherwise, from the schedule built without
   reordering, each device's peak or, if higher, its Eq. 1 bound up to the
   largest device's peak. */
static int caps_of(const conf *c, int d, int n, const pp_times *t, double *cap) {
    pp_config cfg = config(c, d, n);
    pp_schedule *s = NULL;
    char err[PP_ERR_LEN];
    double top = 0;
    int i;
    cfg.no_reorder = 1;
    if (t) cfg.times = *t;
    if (pp_sched_build(&cfg, &s, err) != PP_OK) return 0;
    for (i = 0; i < d; i++) if (s->peak_memory[i] > top) top = s->peak_memory[i];
    for (i = 0; i < d; i++) {
        double b = s->peak_bound[i];
        if (c->in->published) cap[i] = s->peak_memory[i];
        else if (b < 0) cap[i] = top;
        else cap[i] = s->peak_memory[i] > (b < top ? b : top) ? s->peak_memory[i] : (b < top ? b : top);
    }
    pp_sched_free(s);
    return 1;
}

/* x's order (device by device) into s's pass array, timed by pp_squeeze at
   s's times; returns the makespan, -1 when the layouts differ or it fails. */
static double retime(pp_schedule *s, const pp_schedule *x) {
    char err[PP_ERR_LEN];
    int i;
    if (s->num_passes != x->num_passes || s->devices != x->devices) return -1;
    for (i = 0; i <= s->devices; i++) if (s->device_start[i] != x->device_start[i]) return -1;
    for (i = 0; i < s->num_passes; i++) s->passes[i] = x->passes[i];
    if (pp_squeeze(s, err) != PP_OK) return -1;
    return s->makespan;
}

/* s may take x's orders: x is fixed, of s's family, and fits s's memory
   (x's caps at the times checked and at unit times: a block may depend on
   the times, interleaved-1f1b-m's does, and x may have taken its own
   unit-time order) */
static int candidate(const conf *s, const conf *x, int d) {
    const pp_sched_info *a = s->in, *b = x->in;
    int i;
    if (a == b || b->adaptive || a->published) return 0;
    if (a->placement != b->placement || a->recompute != b->recompute || a->copies != b->copies) return 0;
    if (b->split_backward && !a->split_backward) return 0;
    if (a->chunks != b->chunks) return 0; /* chunks 0: each its own; looped ones default to 2 */
    for (i = 0; i < d; i++) {
        double lim = a->adaptive ? s->fin->mem_limit : s->cap[i];
        if (x->cap[i] > lim + 1e-9 || x->capu[i] > lim + 1e-9) return 0;
    }
    return 1;
}

/* The makespan of name's order built at unit times, exported as PyTorch
   CSV and read back with times t (pp_sched_from_csv squeezes it); -1 after
   a failed check in g. */
static double unit_csv_back(group *g, const char *name, int d, int n, const pp_times *t) {
    pp_config cfg;
    pp_schedule *u = NULL, *r = NULL;
    char err[PP_ERR_LEN], *text = NULL;
    double mk = -1;
    long len;
    FILE *f;
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = name;
    cfg.devices = d;
    cfg.microbatches = n;
    if (!check(g, pp_sched_build(&cfg, &u, err) == PP_OK, "%s: %s", name, err)) return -1;
    if (check(g, (f = tmpfile()) != NULL, "%s: no temporary file", name)) {
        pp_sched_print_csv(f, u, err);
        len = ftell(f);
        rewind(f);
        text = (char *)malloc((size_t)len + 1);
        if (check(g, text && fread(text, 1, (size_t)len, f) == (size_t)len, "%s: csv not read back", name)) {
            pp_config rc;
            memset(&rc, 0, sizeof rc);
            rc.times = *t;
            if (check(g, pp_sched_from_csv(text, (size_t)len, &rc, &r, err) == PP_OK, "%s: csv: %s", name, err))
                mk = r->makespan;
        }
        free(text);
        fclose(f);
    }
    pp_sched_free(u);
    pp_sched_free(r);
    return mk;
}

int main(void) {
    group ga, gb, gm, gc;
    conf cs[MAXC];
    int d, ni, ti, nc, i, j, pairs = 0, adaptive_pairs = 0;
    long shorter_a = 0;
    group_begin(&ga, "guarantee-unit-order");
    group_begin(&gb, "guarantee-family");
    group_begin(&gm, "guarantee-caps");
    group_begin(&gc, "guarantee-csv");
    for (d = 2; d <= MAXD; d++)
        for (ni = 0; ni < 4; ni++) {
            int n = ni == 0 ? d : ni == 1 ? 2 * d : ni == 2 ? 2 * d + 1 : 4 * d;
            nc = 0;
            for (i = 0; i < pp_sched_count(); i++) {
                const pp_sched_info *in = pp_sched_info_at(i);
                int k, nl = in->takes_limit ? 2 : 1;
                for (k = 0; k < nl; k++) {
                    conf *c = &cs[nc++];
                    memset(c, 0, sizeof *c);
                    c->in = in;
                    if (in->takes_limit) c->limit = in->placement == PP_PLACE_VSHAPE ? (k ? d : d / 2.0) : (k ? 1.5 * d : d);
                }
            }
            for (i = 0; i < nc; i++) {
                pp_config cfg = config(&cs[i], d, n);
                char err[PP_ERR_LEN];
                cs[i].built = pp_sched_build(&cfg, &cs[i].unit, err) == PP_OK;
                if (cs[i].built && !cs[i].in->adaptive) cs[i].built = caps_of(&cs[i], d, n, NULL, cs[i].capu);
            }
            for (ti = 0; ti < NT; ti++) {
                for (i = 0; i < nc; i++) {
                    pp_config cfg = config(&cs[i], d, n);
                    char err[PP_ERR_LEN];
                    cfg.times = times[ti];
                    cs[i].fin = NULL;
                    if (!cs[i].built) continue;
                    check(&ga, pp_sched_build(&cfg, &cs[i].fin, err) == PP_OK, "%s d=%d n=%d times %s: %s",
                          cs[i].in->name, d, n, time_name[ti], err);
                    if (cs[i].fin && !cs[i].in->adaptive)
                        check(&gm, caps_of(&cs[i], d, n, &times[ti], cs[i].cap), "%s d=%d n=%d times %s: no_reorder build fails",
                              cs[i].in->name, d, n, time_name[ti]);
                }
                /* memory: a fixed schedule within its caps (at these times, or at
                   unit times where it took its own unit-time order), an adaptive
                   one within its limit */
                for (i = 0; i < nc; i++) {
                    const pp_schedule *s = cs[i].fin;
                    int k;
                    if (!s || cs[i].in->published) continue;
                    for (k = 0; k < d; k++) {
                        double lim = cs[i].in->adaptive ? s->mem_limit
                                     : cs[i].cap[k] > cs[i].capu[k] ? cs[i].cap[k] : cs[i].capu[k];
                        check(&gm, tol_le(s->peak_memory[k], lim), "%s d=%d n=%d limit %g times %s: device %d peak %g above %g",
                              s->name, d, n, cs[i].limit, time_name[ti], k, s->peak_memory[k], lim);
                    }
                }
                /* (b): never longer than a fitting schedule of the family */
                for (i = 0; i < nc; i++)
                    for (j = 0; j < nc; j++) {
                        const pp_schedule *s = cs[i].fin, *x = cs[j].fin;
                        if (!s || !x || !candidate(&cs[i], &cs[j], d)) continue;
                        pairs++;
                        adaptive_pairs += cs[i].in->adaptive;
                        check(&gb, tol_le(s->makespan, x->makespan), "%s d=%d n=%d limit %g times %s: %.10g, %s %.10g",
                              s->name, d, n, cs[i].limit, time_name[ti], s->makespan, x->name, x->makespan);
                    }
                /* (a): never longer than its own unit-time order timed here
                   (this rewrites fin's passes: last) */
                for (i = 0; i < nc; i++) {
                    pp_schedule *s = cs[i].fin;
                    double mk, a;
                    if (!s) continue;
                    mk = s->makespan;
                    a = retime(s, cs[i].unit);
                    check(&ga, a >= 0, "%s d=%d n=%d: unit order does not fit the schedule's layout", s->name, d, n);
                    check(&ga, a < 0 || tol_le(mk, a), "%s d=%d n=%d limit %g times %s: %.10g, its unit order %.10g",
                          s->name, d, n, cs[i].limit, time_name[ti], mk, a);
                    if (a >= 0 && mk < a * (1 - 1e-9)) shorter_a++;
                    pp_sched_free(s);
                    cs[i].fin = NULL;
                }
            }
            for (i = 0; i < nc; i++) pp_sched_free(cs[i].unit);
        }
    group_end(&ga, "every schedule, d 2..8, n d, 2d, 2d+1, 4d, 3 time settings, v-auto and zb-auto at two limits: "
                   "no longer than its own unit-time order squeezed at those times (%ld shorter)", shorter_a);
    group_end(&gb, "%d pairs (%d with an adaptive schedule): no longer than a fixed schedule of the family whose "
                   "caps fit", pairs, adaptive_pairs);
    group_end(&gm, "fixed schedules within their caps, adaptive ones within mem_limit");

    /* the CSV path: export at unit times, read back with the user's times */
    for (i = 0; i < pp_sched_count(); i++) {
        const pp_sched_info *in = pp_sched_info_at(i);
        pp_config cfg;
        pp_schedule *s = NULL;
        char err[PP_ERR_LEN];
        double back;
        if (in->copies != 1 || in->recompute) continue; /* a CSV holds one route, and no recomputation */
        memset(&cfg, 0, sizeof cfg);
        cfg.schedule = in->name;
        cfg.devices = 4;
        cfg.microbatches = 8;
        cfg.times = times[0];
        back = unit_csv_back(&gc, in->name, 4, 8, &times[0]);
        if (back > 0 && check(&gc, pp_sched_build(&cfg, &s, err) == PP_OK, "%s: %s", in->name, err))
            check(&gc, tol_le(s->makespan, back), "%s d=4 n=8 times %s: %.10g, its unit CSV read back %.10g", in->name,
                  time_name[0], s->makespan, back);
        pp_sched_free(s);
    }
    group_end(&gc, "every one-route schedule without recomputation, d=4 n=8: no longer than its unit-time CSV read back at Table 5's times "
                   "with comm");
    /* no_guarantee: the knob pp_plan ranks with. It may only leave a build
       longer (the guarantee only shortens), and on the guarantee's reproducer
       (v-half d=4 n=8, Table 5 times with comm: equal to its unit-time
       order read back from CSV) it must leave it longer, or the knob would do nothing. */
    {
        group gk;
        group_begin(&gk, "no_guarantee");
        for (i = 0; i < pp_sched_count(); i++) {
            pp_config cfg;
            pp_schedule *a = NULL, *b = NULL;
            char err[PP_ERR_LEN];
            memset(&cfg, 0, sizeof cfg);
            cfg.schedule = pp_sched_info_at(i)->name;
            cfg.devices = 4;
            cfg.microbatches = 8;
            cfg.times = times[0];
            if (pp_sched_build(&cfg, &a, err) == PP_OK) {
                cfg.no_guarantee = 1;
                if (check(&gk, pp_sched_build(&cfg, &b, err) == PP_OK, "%s no_guarantee: %s", cfg.schedule, err)) {
                    check(&gk, tol_le(a->makespan, b->makespan), "%s d=4 n=8: %.10g with the guarantee, %.10g without",
                          cfg.schedule, a->makespan, b->makespan);
                    if (!strcmp(cfg.schedule, "v-half")) {
                        double back = unit_csv_back(&gk, "v-half", 4, 8, &times[0]);
                        check(&gk, fabs(a->makespan - back) < 1e-9 * back, "v-half d=4 n=8 with the guarantee: %.10g, its unit-time "
                              "order read back from CSV %.10g", a->makespan, back);
                        check(&gk, b->makespan > a->makespan + 1e-6, "v-half d=4 n=8 no_guarantee: %.10g, not longer than %.10g", b->makespan, a->makespan);
                    }
                }
            }
            pp_sched_free(a);
            pp_sched_free(b);
        }
        group_end(&gk, "every schedule at d=4 n=8, Table 5 times with comm: no shorter without the guarantee; "
                       "v-half's reproducer longer without it");
    }
    printf("test_guarantee: %d groups passed, %d failed\n", g_groups_passed, g_groups_failed);
    return g_groups_failed != 0;
}
