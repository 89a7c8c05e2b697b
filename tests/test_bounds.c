/* test_bounds.c - the Appendix E.2 lower bound, generalised to any F, B, W
   times and comm (pp_bounds.appendix; the derivation sits above
   pp_sched_bounds in pp_sched.h).

   Build and run (tests/run_tests.sh does this):
       cc -std=c99 -O2 -Wall -Wextra tests/test_bounds.c -o test_bounds -lm && ./test_bounds

   Groups:
     equal-times   unit-like times (and 2,2,2): the paper's 6n + 6d - 3k - 1
                   chunk passes, computed here, k from this file's own
                   memory count
     valid         every V schedule (v-min, v-half, v-zb, 1f1b-v, v-auto at
                   several limits), d = 2..8, n in {d, 2d, 3d+1}, equal and
                   unequal times, with and without comm: bound <= makespan
     small-n       n = 1, 2 (where 2n <= k): the paper's figure is above the
                   real makespan there; the bound must not be
     by-hand       figures derived by hand below, strictly above work and path
     one-stage     the same steps for one stage per device (1F1B, ZB-H1 and
                   the other sequential schedules, zb-auto at several limits):
                   bound <= makespan everywhere, and figures worked by hand
     looped        interleaved placement: bound <= makespan, and d = 2 by hand */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_TEST_CURRENT_GROUP
#include "group.h" /* CHECK, group_next */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pp_schedule *build(const char *name, int d, int n, pp_times t, double limit) {
    char err[PP_ERR_LEN];
    pp_config c;
    pp_schedule *s = NULL;
    memset(&c, 0, sizeof c);
    c.schedule = name; c.devices = d; c.microbatches = n; c.times = t; c.mem_limit = limit;
    if (pp_sched_build(&c, &s, err) != PP_OK) return NULL;
    return s;
}

/* Our own count of the most chunk activations any device holds: walk each
   device's passes in order, +1 at F, -1 at W (or BW). */
static int own_peak_chunks(const pp_schedule *s) {
    int dev, i, best = 0;
    for (dev = 0; dev < s->devices; dev++) {
        int cur = 0;
        for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
            pp_kind k = s->passes[i].kind;
            if (k == PP_F && ++cur > best) best = cur;
            if (k == PP_W || k == PP_BW) cur--;
        }
    }
    return best;
}

static double tol(double x) { return 1e-9 * (1 + fabs(x)); }

int main(void) {
    static const char *const fixed[] = {"v-min", "v-half", "v-zb", "1f1b-v"};
    /* per-device F, B, W, comm */
    static const pp_times tt[] = {{1, 1, 1, 0},      {1, 2, 1, 0},     {12.96, 13.22, 9.76, 0}, {1, 1, 0.3, 0},
                                  {2, 1, 1, 0},      {1, 1, 1, 0.2},   {2, 1, 1, 0.5},          {12.96, 13.22, 9.76, 3},
                                  {1, 1, 0.3, 0.05}, {1, 3, 0.5, 0.1}};
    const int ntt = (int)(sizeof tt / sizeof tt[0]);
    int d, ni, ti, i, built = 0, above = 0;

    /* (a) equal times: (6n + 6d - 3k - 1) x (one chunk pass), k = twice the
       peak in units = the peak in chunk activations; every n here has
       2n > k (k <= 2d for these schedules at unit times, n >= d+1) */
    for (d = 2; d <= 8; d++)
        for (ni = 0; ni < 3; ni++) {
            int n = ni == 0 ? d + 1 : ni == 1 ? 2 * d : 3 * d + 1;
            for (i = 0; i < 3; i++) {
                int u;
                for (u = 1; u <= 2; u++) {
                    pp_times t = {0, 0, 0, 0};
                    pp_schedule *s;
                    pp_bounds b;
                    t.f = t.b = t.w = u;
                    s = build(fixed[i], d, n, t, 0);
                    if (!CHECK(s != NULL, "%s d=%d n=%d: did not build", fixed[i], d, n)) continue;
                    {
                        int k = own_peak_chunks(s);
                        double chunk = u / 2.0, want = (6.0 * n + 6.0 * d - 3.0 * k - 1) * chunk;
                        pp_sched_bounds(s, &b);
                        CHECK(2 * n > k, "%s d=%d n=%d: k=%d, 2n > k expected", fixed[i], d, n, k);
                        CHECK(fabs(b.appendix - want) < tol(want), "%s d=%d n=%d t=%d: appendix %.17g, paper's figure %.17g (k=%d)",
                              fixed[i], d, n, u, b.appendix, want, k);
                        {
                            double mp = 0;
                            int dv;
                            for (dv = 0; dv < d; dv++) mp = pp__max(mp, s->peak_memory[dv]);
                            CHECK(fabs(2 * mp - k) < 1e-9, "%s d=%d n=%d: own peak %d chunks, library's %g units", fixed[i], d, n, k, mp);
                        }
                    }
                    pp_sched_free(s);
                }
            }
        }
    group_next("equal-times", "v-min, v-half, v-zb at times 1,1,1 and 2,2,2: appendix = (6n+6d-3k-1) chunk passes, d=2..8");

    /* (b) never above a built schedule's makespan */
    for (d = 2; d <= 8; d++)
        for (ni = 0; ni < 3; ni++) {
            int n = ni == 0 ? d : ni == 1 ? 2 * d : 3 * d + 1;
            for (ti = 0; ti < ntt; ti++) {
                /* 4 fixed blocks, then v-auto at limits d/3+1 .. 2d units
                   (v-auto, the slow one, only at the unequal settings) */
                const double lim[] = {d / 3.0 + 1, d / 2.0 + 0.5, 2.0 * d / 3 + 1, (double)d, 1.5 * d, 2.0 * d};
                int j, nauto = (ti == 0 || ti == 8 || ti == 9) ? 0 : ti == 2 || ti == 7 ? 6 : 3;
                for (j = 0; j < 4 + nauto; j++) {
                    const char *name = j < 4 ? fixed[j] : "v-auto";
                    double L = j < 4 ? 0 : lim[nauto == 6 ? j - 4 : 2 * (j - 4) + 1]; /* 3: d/2+0.5, d, 2d */
                    pp_schedule *s = build(name, d, n, tt[ti], L);
                    pp_bounds b;
                    if (!s) {
                        CHECK(j >= 4, "%s d=%d n=%d: did not build", name, d, n); /* v-auto may not fit a low limit */
                        continue;
                    }
                    built++;
                    CHECK(pp_sched_validate(s, NULL) == PP_OK, "%s d=%d n=%d times#%d: invalid schedule", name, d, n, ti);
                    pp_sched_bounds(s, &b);
                    CHECK(b.appendix >= 0, "%s d=%d n=%d times#%d: appendix not computed", name, d, n, ti);
                    CHECK(b.appendix <= s->makespan + tol(s->makespan),
                          "%s d=%d n=%d times %g,%g,%g,%g limit %g: appendix %.17g above makespan %.17g", name, d, n, tt[ti].f,
                          tt[ti].b, tt[ti].w, tt[ti].comm, L, b.appendix, s->makespan);
                    CHECK(b.best == pp__max(b.work, pp__max(b.path, b.appendix)), "%s: best is not the largest", name);
                    if (b.appendix > pp__max(b.work, b.path) + tol(b.work)) above++;
                    pp_sched_free(s);
                }
            }
        }
    CHECK(above > 0, "the bound never beat max(work, path)");
    {
        char summary[200];
        snprintf(summary, sizeof summary,
                 "%d V schedules (v-auto at 6 limits for 2 settings, 3 for 5), d=2..8, n in {d,2d,3d+1}, %d time settings (4 with comm): bound <= makespan; "
                 "%d strictly above max(work, path)",
                 built, ntt, above);
        group_next("valid", summary);
    }

    /* (c) small n. v-half d=4 n=1, unit times, one chunk pass = 0.5: the
       device holds both of its chunks, k = 2 (own count), 2n = 2 <= k. The
       paper's figure (6 + 24 - 6 - 1) * 0.5 = 11.5 is above the makespan,
       which is the single microbatch's path: (8 F + 8 B + 1 W) * 0.5 = 8.5.
       Our bound uses one window: A = (3d-1)*0.5 = 5.5, warm = 5.5 - 2*0.5
       = 4.5; C = 3d*0.5 = 6, cool = 6 - 2*1 = 4; busy = 6*0.5 = 3; bound
       3 + 4.5 = 7.5. */
    {
        pp_times u = {1, 1, 1, 0};
        pp_schedule *s = build("v-half", 4, 1, u, 0);
        pp_bounds b;
        if (CHECK(s != NULL, "v-half d=4 n=1 did not build")) {
            pp_sched_bounds(s, &b);
            CHECK(own_peak_chunks(s) == 2, "v-half d=4 n=1: k=%d, expected 2", own_peak_chunks(s));
            CHECK(fabs(s->makespan - 8.5) < 1e-9, "v-half d=4 n=1: makespan %g, expected 8.5", s->makespan);
            CHECK(fabs(b.appendix - 7.5) < 1e-9, "v-half d=4 n=1: appendix %g, expected 7.5", b.appendix);
            pp_sched_free(s);
        }
        for (d = 2; d <= 8; d++)
            for (ti = 0; ti < ntt; ti++)
                for (i = 0; i < 4; i++) {
                    int n;
                    for (n = 1; n <= 2; n++) {
                        s = build(fixed[i], d, n, tt[ti], 0);
                        if (!CHECK(s != NULL, "%s d=%d n=%d: did not build", fixed[i], d, n)) continue;
                        pp_sched_bounds(s, &b);
                        CHECK(b.appendix <= s->makespan + tol(s->makespan), "%s d=%d n=%d times#%d: appendix %.17g above makespan %.17g",
                              fixed[i], d, n, ti, b.appendix, s->makespan);
                        pp_sched_free(s);
                    }
                }
    }
    group_next("small-n", "n=1,2 (2n <= k): below the makespan; v-half d=4 n=1 gives 7.5 (paper's figure 11.5 > makespan 8.5)");

    /* (d) by hand, v-half d=4 n=8 (k = 6 chunk activations, own count).
       Per chunk f, b, w are half the per-device times; c = comm.
       A = 2d f + (d-1) b + (3d-3) c, C = (d-1) f + 2d b + w + (3d-3) c,
       busy (device d-1) = 2n (f + b + w), bound = busy + (A - k f) + (C - k (b + w)).
       1. times 2,1,1: f = 1, b = w = 0.5. A = 8 + 1.5 = 9.5, C = 3 + 4 + 0.5
          = 7.5, busy = 16 * 2 = 32; bound = 32 + (9.5 - 6) + (7.5 - 6) = 37.
          work = 32, path = 8 f + 8 b + w = 8 + 4 + 0.5 = 12.5: 37 > 32.
       2. times 1,1,1 comm 0.2: f = b = w = 0.5. A = 4 + 1.5 + 1.8 = 7.3,
          C = 1.5 + 4 + 0.5 + 1.8 = 7.8, busy = 16 * 1.5 = 24; bound = 24 +
          (7.3 - 3) + (7.8 - 6) = 30.1. work = 24; path = 8.5 + 2 * 0.2 * 6
          crossings = 10.9: 30.1 > 24. */
    {
        const pp_times h[2] = {{2, 1, 1, 0}, {1, 1, 1, 0.2}};
        const double want[2] = {37, 30.1}, work[2] = {32, 24}, path[2] = {12.5, 10.9};
        for (i = 0; i < 2; i++) {
            pp_schedule *s = build("v-half", 4, 8, h[i], 0);
            pp_bounds b;
            if (!CHECK(s != NULL, "v-half d=4 n=8 #%d did not build", i)) continue;
            pp_sched_bounds(s, &b);
            CHECK(own_peak_chunks(s) == 6, "v-half d=4 n=8 #%d: k=%d, the figures assume 6", i, own_peak_chunks(s));
            CHECK(fabs(b.appendix - want[i]) < 1e-9, "v-half d=4 n=8 #%d: appendix %.17g, by hand %g", i, b.appendix, want[i]);
            CHECK(fabs(b.work - work[i]) < 1e-9 && fabs(b.path - path[i]) < 1e-9, "v-half d=4 n=8 #%d: work %g path %g, by hand %g %g",
                  i, b.work, b.path, work[i], path[i]);
            CHECK(b.appendix > pp__max(b.work, b.path) + 1, "v-half d=4 n=8 #%d: appendix %g not above work/path", i, b.appendix);
            CHECK(b.appendix <= s->makespan + 1e-9, "v-half d=4 n=8 #%d: appendix %g above makespan %g", i, b.appendix, s->makespan);
            pp_sched_free(s);
        }
    }
    group_next("by-hand", "v-half d=4 n=8: times 2,1,1 gives 37 (work 32), times 1,1,1 comm 0.2 gives 30.1 (work 24)");

    /* (e) one stage per device. Device i holds stage i; k = own peak.
       A_i = sum f + (B of stages d-1..i+1) + c at each device change on
       the way, C_i = (F of i+1..d-1) + sum b + w(0) + c at each change,
       bound = max_i busy + (A_i - k f) + (C_i - k (b + w)) for n > k.
       1. 1f1b d=4 n=6, F 1, BW 2 (k = 4): device 0: A = 4 + 6 = 10, warm 6;
          C = 3 + 8 = 11, cool 11 - 8 = 3; busy 18: 27 (device 1: 18 + 4 +
          2 = 24). 1F1B's makespan (n + d - 1) 3 = 27: the bound is tight.
       2. the same with comm 0.5 (3 changes each way): device 0: A = 4 +
          1.5 + 6 + 1.5 = 13, warm 9; C = 3 + 1.5 + 8 + 1.5 = 14, cool 6;
          33 (device 1: A = 5.5 + 4 + 1 = 10.5, warm 6.5; C = 3 + 8 + 1.5 =
          12.5, cool 4.5: 29).
       3. zb-h1 d=4 n=8, times 2,1,1 (k = 4): device 0: A = 8 + 3 = 11, warm
          11 - 8 = 3; C = 6 + 4 + 1 = 11, cool 11 - 8 = 3; busy 32: 38
          (device 1: 32 + 2 + 1 = 35). work 32, path 8 + 4 + 1 = 13. */
    {
        static const char *const seq[] = {"gpipe", "1f1b", "eager-1f1b", "zb-h1", "zb-h2", "1f1b-r", "zb-min", "zb-auto"};
        const pp_times h[3] = {{1, 2, 0, 0}, {1, 2, 0, 0.5}, {2, 1, 1, 0}};
        const char *hn[3] = {"1f1b", "1f1b", "zb-h1"};
        const int hnb[3] = {6, 6, 8};
        const double want[3] = {27, 33, 38};
        int checked = 0, above1 = 0;
        for (i = 0; i < 3; i++) {
            pp_times t = h[i];
            pp_schedule *s;
            pp_bounds b;
            if (i < 2) { t.b = 1; t.w = 1; } /* 1f1b's BW = b + w = 2 */
            s = build(hn[i], 4, hnb[i], t, 0);
            if (!CHECK(s != NULL, "%s d=4 #%d did not build", hn[i], i)) continue;
            pp_sched_bounds(s, &b);
            CHECK(own_peak_chunks(s) == 4, "%s d=4 #%d: k=%d, the figures assume 4", hn[i], i, own_peak_chunks(s));
            CHECK(fabs(b.appendix - want[i]) < 1e-9, "%s d=4 #%d: bound %.17g, by hand %g", hn[i], i, b.appendix, want[i]);
            CHECK(b.appendix <= s->makespan + 1e-9, "%s d=4 #%d: bound %g above makespan %g", hn[i], i, b.appendix, s->makespan);
            if (i == 0) CHECK(fabs(s->makespan - 27) < 1e-9, "1f1b d=4 n=6: makespan %g, (n + d - 1) 3 = 27", s->makespan);
            if (i == 2) CHECK(fabs(b.work - 32) < 1e-9 && fabs(b.path - 13) < 1e-9 && b.best == b.appendix,
                              "zb-h1 d=4 n=8: work %g path %g best %g, by hand 32 13 38", b.work, b.path, b.best);
            pp_sched_free(s);
        }
        for (d = 2; d <= 8; d++)
            for (ti = 0; ti < ntt; ti++)
                for (i = 0; i < 8; i++) {
                    int ni2, li;
                    for (ni2 = 0; ni2 < 4; ni2++)
                        for (li = 0; li < (i == 7 ? 3 : 1); li++) {
                            int n = ni2 == 0 ? 1 : ni2 == 1 ? d : ni2 == 2 ? 2 * d : 3 * d + 1;
                            double L = li == 0 ? 0 : li == 1 ? d / 2.0 + 0.5 : 2.0 * d;
                            pp_schedule *s = build(seq[i], d, n, tt[ti], L);
                            pp_bounds b;
                            if (!s) {
                                CHECK(i == 7, "%s d=%d n=%d: did not build", seq[i], d, n); /* zb-auto may not fit d/2+1/2 */
                                continue;
                            }
                            pp_sched_bounds(s, &b);
                            checked++;
                            CHECK(b.appendix >= 0 || i == 5, "%s d=%d n=%d times#%d: bound not computed", seq[i], d, n, ti);
                            CHECK(b.appendix <= s->makespan + tol(s->makespan),
                                  "%s d=%d n=%d times#%d limit %g: bound %.17g above makespan %.17g", seq[i], d, n, ti, L,
                                  b.appendix, s->makespan);
                            if (b.appendix > pp__max(b.work, b.path) + tol(b.work)) above1++;
                            pp_sched_free(s);
                        }
                }
        CHECK(checked > 1500 && above1 > checked / 4, "%d sequential schedules, %d with the bound above work and path", checked, above1);
    }
    group_next("one-stage", "one stage per device: bound <= makespan (gpipe .. zb-auto, d=2..8, n 1..3d+1, every time setting); "
               "1f1b d=4 n=6 gives 27 = its makespan, 33 with comm 0.5; zb-h1 d=4 n=8 times 2,1,1 gives 38 (work 32)");

    /* (f) interleaved placement, d = 2, v = 2: stages 0, 2 on device 0 and
       1, 3 on device 1; unit device times, so a chunk's F = 0.5 and its BW
       (not split) = 1. Device 0 (last stage x = 2): A = 4 F + B(3) = 2 + 1
       = 3, C = F(3) + 4 B = 0.5 + 4 = 4.5; device 1 (x = 3): A = 2, C = 4,
       both busy 2n (0.5 + 1) = 3n. With 2n > k: device 0's 3n + (3 - 0.5k)
       + (4.5 - k) = 3n + 7.5 - 1.5k, above device 1's 3n + 6 - 1.5k. */
    {
        static const char *const loo[] = {"interleaved-1f1b", "interleaved-1f1b-u", "interleaved-1f1b-m", "looped-bfs"};
        int checked = 0, byhand = 0;
        pp_times u = {1, 1, 1, 0};
        int n;
        for (n = 2; n <= 8; n += 2) {
            pp_schedule *s = build("interleaved-1f1b", 2, n, u, 0);
            pp_bounds b;
            int k;
            if (!CHECK(s != NULL, "interleaved-1f1b d=2 n=%d did not build", n)) continue;
            pp_sched_bounds(s, &b);
            k = own_peak_chunks(s);
            if (2 * n > k) {
                CHECK(fabs(b.appendix - (3.0 * n + 7.5 - 1.5 * k)) < 1e-9, "interleaved-1f1b d=2 n=%d k=%d: bound %.17g, by hand %g", n,
                      k, b.appendix, 3.0 * n + 7.5 - 1.5 * k);
                byhand++;
            }
            CHECK(b.appendix <= s->makespan + 1e-9, "interleaved-1f1b d=2 n=%d: bound %g above makespan %g", n, b.appendix, s->makespan);
            pp_sched_free(s);
        }
        CHECK(byhand >= 3, "only %d of 4 rows had 2n > k", byhand);
        for (d = 2; d <= 6; d++)
            for (ti = 0; ti < ntt; ti++)
                for (i = 0; i < 4; i++)
                    for (n = d; n <= 3 * d + 1; n += d + 1) {
                        pp_schedule *s = build(loo[i], d, n, tt[ti], 0);
                        pp_bounds b;
                        if (!s) continue; /* interleaved-1f1b needs n % d == 0 */
                        pp_sched_bounds(s, &b);
                        checked++;
                        CHECK(b.appendix >= 0 && b.appendix <= s->makespan + tol(s->makespan),
                              "%s d=%d n=%d times#%d: bound %.17g, makespan %.17g", loo[i], d, n, ti, b.appendix, s->makespan);
                        pp_sched_free(s);
                    }
        CHECK(checked > 300, "%d interleaved schedules", checked);
    }
    group_next("looped", "interleaved placement: bound <= makespan (4 schedules, d=2..6, every time setting); "
               "interleaved-1f1b d=2 gives 3n + 7.5 - 1.5k by hand");

    return g_groups_failed ? 1 : 0;
}
