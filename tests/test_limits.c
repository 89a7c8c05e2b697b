/* test_limits.c - pp_sched_build's one validation (pp__req_resolve): every
   range in LIMITS just inside and just outside, the input-limit reproducers
   at the library level, the clamp of mem_limit, and the entry checks of the
   calls that take a block or a schedule (corrupted fields refused).

   Build and run:  cc -std=c99 -O2 tests/test_limits.c -o test_limits -lm && ./test_limits
   Prints one line per check group and "test_limits: N groups passed, M failed". */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_SCHED_IO_IMPLEMENTATION
#include "../pp_sched_io.h"
#include "group.h"

#include <limits.h>
#include <math.h>

/* Builds cfg; the status, and the message in err. */
static pp_status try_build(const pp_config *cfg, char *err) {
    pp_schedule *s = NULL;
    pp_status st = pp_sched_build(cfg, &s, err);
    if (st == PP_OK && pp_sched_validate(s, err) != PP_OK) st = PP_ERR_INVALID_SCHEDULE;
    pp_sched_free(s);
    return st;
}

static pp_config make(const char *name, int d, int n) {
    pp_config c;
    memset(&c, 0, sizeof c);
    c.schedule = name;
    c.devices = d;
    c.microbatches = n;
    return c;
}

/* expect status want and, when want is not PP_OK, a message containing each of the words */
static void expect(group *g, const pp_config *c, pp_status want, const char *what, const char *w1, const char *w2) {
    char err[PP_ERR_LEN];
    pp_status st;
    err[0] = 0;
    st = try_build(c, err);
    if (!check(g, st == want, "%s: status %s, want %s (%s)", what, pp_status_string(st), pp_status_string(want), err)) return;
    if (want == PP_OK) return;
    check(g, w1 == NULL || strstr(err, w1) != NULL, "%s: message '%s' lacks '%s'", what, err, w1);
    check(g, w2 == NULL || strstr(err, w2) != NULL, "%s: message '%s' lacks '%s'", what, err, w2);
}

static unsigned long long hash_sched(const pp_schedule *s) {
    unsigned long long h = 1469598103934665603ull;
    int i;
    for (i = 0; i < s->num_passes; i++) {
        const pp_pass *p = &s->passes[i];
        double v[5];
        int k;
        v[0] = p->device; v[1] = p->stage * 4 + (int)p->kind; v[2] = p->microbatch; v[3] = p->start; v[4] = p->end;
        for (k = 0; k < 5; k++) {
            unsigned long long u;
            memcpy(&u, &v[k], sizeof u);
            h = (h ^ u) * 1099511628211ull;
        }
    }
    return h;
}

static void reproducers(void) {
    group g;
    pp_config c;
    pp_schedule *s = NULL;
    char err[PP_ERR_LEN];
    group_begin(&g, "input-limit reproducers, library level");
    /* v-auto, zb-auto at mem_limit 1e9: was a segfault (levels from 2 x limit overflowed an int) */
    c = make("v-auto", 4, 8);
    c.mem_limit = 1e9;
    if (check(&g, pp_sched_build(&c, &s, err) == PP_OK, "v-auto limit 1e9: %s", err)) {
        check(&g, s->mem_limit == 12 && s->mem_limit_asked == 1e9, "v-auto limit 1e9: used %g asked %g, want 12 (3d) and 1e9",
              s->mem_limit, s->mem_limit_asked);
        pp_sched_free(s);
    }
    c.schedule = "zb-auto";
    expect(&g, &c, PP_OK, "zb-auto limit 1e9", NULL, NULL);
    /* 1e308 times: was an uninitialised read in the reorder, or "lasts inf" */
    c = make("zb-h1", 4, 8);
    c.times.f = 1e308; c.times.b = 1; c.times.w = 1;
    expect(&g, &c, PP_ERR_INVALID_ARG, "zb-h1 F=1e308", "at most 1e+15", "F=1e+308");
    c.schedule = "1f1b";
    expect(&g, &c, PP_ERR_INVALID_ARG, "1f1b F=1e308", "at most 1e+15", NULL);
    /* interleaved-1f1b-u v=100000: block offsets overflowed */
    c = make("interleaved-1f1b-u", 4, 8);
    c.chunks = 100000;
    expect(&g, &c, PP_ERR_OVERFLOW, "interleaved-1f1b-u v=100000", "chunks can be at most 3343", NULL);
    /* 4 d v (3v + 4) <= INT_MAX / 4 at d = 4: v = 3343 is the last that fits (worked by hand:
       16 x 3343 x 10033 = 536645104 <= 536870911 < 16 x 3344 x 10036) */
    c.chunks = 3344;
    expect(&g, &c, PP_ERR_OVERFLOW, "interleaved-1f1b-u v=3344", "at most 3343", NULL);
    /* v = INT_MAX - 1 (found by tests/fuzz_build.c): the cell count itself overflowed a long long */
    c.chunks = INT_MAX - 1;
    expect(&g, &c, PP_ERR_OVERFLOW, "interleaved-1f1b-u v=INT_MAX-1", "at most 3343", NULL);
    /* zero times: all of F, B, W zero is the default, unit times; a zero F or B alone is an error */
    c = make("zb-h1", 4, 8);
    {
        pp_config u = c;
        pp_schedule *a = NULL, *b = NULL;
        u.times.f = 1; u.times.b = 1; u.times.w = 1;
        if (check(&g, pp_sched_build(&c, &a, err) == PP_OK && pp_sched_build(&u, &b, err) == PP_OK, "zero times: %s", err))
            check(&g, hash_sched(a) == hash_sched(b) && a->times.f == 1 && a->times.w == 1,
                  "zero times build what unit times build");
        pp_sched_free(a);
        pp_sched_free(b);
    }
    c.times.f = 0; c.times.b = 1; c.times.w = 1;
    expect(&g, &c, PP_ERR_INVALID_ARG, "F=0 B=1 W=1", "F > 0", "F = B = W = 0 for unit times");
    c.times.f = 1; c.times.b = 0; c.times.w = 0;
    expect(&g, &c, PP_ERR_INVALID_ARG, "F=1 B=0 W=0", "B > 0", NULL);
    /* recompute_input 1e308: was a peak of inf */
    c = make("1f1b-r", 4, 8);
    c.recompute_input = 1e308;
    expect(&g, &c, PP_ERR_INVALID_ARG, "1f1b-r recompute_input=1e308", "0, or 1e-6 .. 1", NULL);
    c.recompute_input = 1;
    expect(&g, &c, PP_OK, "1f1b-r recompute_input=1", NULL, NULL);
    group_end(&g, "mem_limit 1e9 on v-auto and zb-auto, F=1e308, v=100000, zero times, recompute_input 1e308");
}

static void ranges(void) {
    group g;
    pp_config c;
    double nan = 0;
    nan = nan / nan;
    group_begin(&g, "ranges of LIMITS: just inside builds, just outside refused with what would be right");
    c = make("1f1b", 0, 8); expect(&g, &c, PP_ERR_INVALID_ARG, "d=0", "devices >= 1", NULL);
    c = make("1f1b", 1, 1); expect(&g, &c, PP_OK, "d=1 n=1", NULL, NULL);
    c = make("1f1b", 65537, 1); expect(&g, &c, PP_ERR_OVERFLOW, "d=65537", "65536", NULL);
    c = make("1f1b", 4, 0); expect(&g, &c, PP_ERR_INVALID_ARG, "n=0", "microbatches >= 1", NULL);
    c = make("1f1b", 4, -5); expect(&g, &c, PP_ERR_INVALID_ARG, "n=-5", "microbatches >= 1", NULL);
    c = make("v-half", 1, 8); expect(&g, &c, PP_ERR_INVALID_ARG, "v-half d=1", "devices >= 2", NULL);
    c = make("1f1b", 4, INT_MAX); expect(&g, &c, PP_ERR_OVERFLOW, "n=INT_MAX", "too many passes", "use at most");
    /* 3 d v n <= INT_MAX/4 = 536870911: d=4 v=1 gives n <= 44739242; the advice is a count the
       shortest-pass rule allows too: one microbatch is 4 x (F + BW) = 12 units of work, and
       1 >= 1e-8 (1 + 12 n) gives n <= (1e8 - 1) / 12 = 8333333 */
    c = make("1f1b", 4, 44739243); expect(&g, &c, PP_ERR_OVERFLOW, "1f1b d=4 n=44739243", "use at most 8333333 microbatches", NULL);
    /* followed (at a W that keeps the count small): one microbatch is 4 x (1 + 1 + 1e6) = 4000008
       units, (1e8 - 1) / 4000008 = 24.99 */
    c = make("1f1b", 4, 44739243); c.times.f = 1; c.times.b = 1; c.times.w = 1e6;
    expect(&g, &c, PP_ERR_OVERFLOW, "1f1b d=4 n=44739243 W=1e6", "use at most 24 microbatches", NULL);
    c.microbatches = 24; expect(&g, &c, PP_OK, "1f1b d=4 n=24 W=1e6 (the advice followed)", NULL, NULL);
    c.microbatches = 25; expect(&g, &c, PP_ERR_INVALID_ARG, "1f1b d=4 n=25 W=1e6", "use at most 24 microbatches", NULL);
    /* W = 0 keeps the total work (2n) within the shortest-pass rule, so gpipe's own check speaks */
    c = make("gpipe", 1, INT_MAX / 64 + 1); c.times.f = 1; c.times.b = 1;
    expect(&g, &c, PP_ERR_OVERFLOW, "gpipe n=INT_MAX/64+1", "too many", NULL);
    /* at equal times the shortest-pass rule caps the passes near 1e8: 1f1b d=1 n=4e7 has total work 1.2e8 */
    c = make("1f1b", 1, 40000000);
    /* no scale helps (the work is 1.2e8 x the shortest pass): n <= (1e8 - 1) / 3 */
    expect(&g, &c, PP_ERR_INVALID_ARG, "1f1b d=1 n=4e7 unit times", "must be at least 1.2", "use at most 33333333 microbatches");
    c = make("v-half", 4, 8); c.chunks = 3; expect(&g, &c, PP_ERR_INVALID_ARG, "v-half v=3", "chunks = 2", NULL);
    c = make("1f1b", 4, 8); c.chunks = -1; expect(&g, &c, PP_ERR_INVALID_ARG, "v=-1", "chunks must be >= 0", NULL);
    c = make("nope", 4, 8); expect(&g, &c, PP_ERR_UNKNOWN_SCHEDULE, "name nope", "known: gpipe", NULL);
    c = make("V_Half", 4, 8); expect(&g, &c, PP_OK, "name V_Half", NULL, NULL);
    /* times */
    c = make("1f1b", 4, 8); c.times.f = nan; c.times.b = 1;
    expect(&g, &c, PP_ERR_INVALID_ARG, "F=nan", "finite", NULL);
    c = make("1f1b", 4, 8); c.times.f = 1; c.times.b = 1; c.times.comm = -0.5;
    expect(&g, &c, PP_ERR_INVALID_ARG, "comm=-0.5", "comm >= 0", NULL);
    c = make("1f1b", 4, 8); c.times.f = 1e15; c.times.b = 1;
    expect(&g, &c, PP_ERR_OVERFLOW, "F=1e15 (each fits, the total does not)", "above 1e+15", "at any scale");
    /* total work at d=4 n=8, F = W = 1, B tiny: 8 x 4 x (2 + B), about 64; the shortest F or B
       must be >= 1e-8 x (1 + 64) = 6.5e-7 */
    c = make("zb-h1", 4, 8); c.times.f = 1; c.times.b = 7e-7; c.times.w = 1;
    expect(&g, &c, PP_OK, "zb-h1 B=7e-7 at total work 64", NULL, NULL);
    c.times.b = 6e-7;
    expect(&g, &c, PP_ERR_INVALID_ARG, "zb-h1 B=6e-7 (below 6.5e-7)", "times too far apart", "must be at least 6.5e-07");
    c.times.b = 1; c.times.f = 6e-7;
    /* one microbatch: 4 x (6e-7 + 1 + 1) = 8.0000024; 6e-7 >= 1e-8 (1 + 8.0000024 n) gives n <= 7 */
    expect(&g, &c, PP_ERR_INVALID_ARG, "zb-h1 F=6e-7", "must be at least 6.5e-07", "use at most 7 microbatches");
    /* W and comm may be 0, and tiny ones act as 0 (the planner gives a zero W 1e-9) */
    c.times.f = 1; c.times.w = 1e-12; c.times.comm = 1e-12;
    expect(&g, &c, PP_OK, "zb-h1 W=1e-12 comm=1e-12", NULL, NULL);
    c.times.w = 0; c.times.comm = 0;
    {
        pp_times st[4] = {{1, 1, 1, 0}, {1, 1, 1, 0}, {1, 1e308, 1, 0}, {1, 1, 1, 0}};
        c = make("1f1b", 4, 8);
        c.stage_times = st;
        expect(&g, &c, PP_ERR_INVALID_ARG, "stage_times[2].b = 1e308", "stage_times[2]", "at most 1e+15");
        st[2].b = 0;
        expect(&g, &c, PP_ERR_INVALID_ARG, "stage_times[2].b = 0", "B > 0", NULL);
        st[2].b = 2;
        expect(&g, &c, PP_OK, "stage_times all sane", NULL, NULL);
    }
    /* recompute_input, mem_limit */
    c = make("1f1b-r", 4, 8); c.recompute_input = 1.5; expect(&g, &c, PP_ERR_INVALID_ARG, "recompute_input 1.5", "1e-6 .. 1", NULL);
    c.recompute_input = 1e-9; expect(&g, &c, PP_ERR_INVALID_ARG, "recompute_input 1e-9", "1e-6 .. 1", NULL);
    c.recompute_input = -1; expect(&g, &c, PP_ERR_INVALID_ARG, "recompute_input -1", "1e-6 .. 1", NULL);
    c = make("v-auto", 4, 8); c.mem_limit = -1; expect(&g, &c, PP_ERR_INVALID_ARG, "mem_limit -1", "at least 1e-6", NULL);
    c.mem_limit = 1.0 / 0.0; expect(&g, &c, PP_ERR_INVALID_ARG, "mem_limit inf", "finite", NULL);
    c.mem_limit = 1e-300; expect(&g, &c, PP_ERR_INVALID_ARG, "mem_limit 1e-300", "at least 1e-6", NULL);
    group_end(&g, "d, n, v, their products, name, times (each, total, shortest), stage_times, recompute_input, mem_limit");
}

/* Above max(n, 3d) the limit changes nothing: the same passes as at
   max(n, 3d), and the schedule says what was asked. */
static void clamp(void) {
    group g;
    static const char *names[] = {"v-auto", "zb-auto"};
    int a, d, q, t, k;
    group_begin(&g, "mem_limit above max(n, 3d): clamped, the same schedule as at max(n, 3d), mem_limit_asked says so");
    for (a = 0; a < 2; a++)
        for (d = 2; d <= 5; d++)
            for (q = 0; q < 3; q++)
                for (t = 0; t < 2; t++) {
                    int n = q == 0 ? 1 : q == 1 ? d + 1 : 4 * d;
                    double top = n > 3 * d ? n : 3 * d, lims[3];
                    unsigned long long h0 = 0;
                    pp_config c = make(names[a], d, n);
                    lims[0] = top; lims[1] = top + 0.5; lims[2] = 1e12;
                    if (t) { c.times.f = 1; c.times.b = 2; c.times.w = 1; c.times.comm = 0.1; }
                    for (k = 0; k < 3; k++) {
                        pp_schedule *s = NULL;
                        char err[PP_ERR_LEN];
                        c.mem_limit = lims[k];
                        if (!check(&g, pp_sched_build(&c, &s, err) == PP_OK, "%s d=%d n=%d limit %g: %s", names[a], d, n, lims[k], err))
                            continue;
                        if (k == 0) h0 = hash_sched(s);
                        check(&g, hash_sched(s) == h0, "%s d=%d n=%d t=%d: limit %g builds another schedule than %g",
                              names[a], d, n, t, lims[k], top);
                        check(&g, s->mem_limit == top && s->mem_limit_asked == (k ? lims[k] : 0),
                              "%s d=%d n=%d limit %g: mem_limit %g asked %g", names[a], d, n, lims[k], s->mem_limit,
                              s->mem_limit_asked);
                        pp_sched_free(s);
                    }
                }
    group_end(&g, "v-auto, zb-auto, d 2..5, n 1, d+1, 4d, unit and 1,2,1,0.1 times, limits max(n,3d) + 0, 0.5, 1e12");
}

/* The clamp in the ascii and JSON output. */
static void clamp_output(void) {
    group g;
    pp_config c = make("v-auto", 4, 8);
    pp_schedule *s = NULL;
    char err[PP_ERR_LEN], buf[65536];
    FILE *f;
    size_t len;
    group_begin(&g, "the clamp in the output");
    c.mem_limit = 1e9;
    if (check(&g, pp_sched_build(&c, &s, err) == PP_OK, "build: %s", err)) {
        f = tmpfile();
        pp_sched_print_ascii(f, s, 0);
        rewind(f);
        len = fread(buf, 1, sizeof buf - 1, f);
        buf[len] = 0;
        fclose(f);
        check(&g, strstr(buf, "memory limit 12 units (asked 1e+09, clamped") != NULL, "ascii lacks the clamp line");
        f = tmpfile();
        pp_sched_print_json(f, s);
        rewind(f);
        len = fread(buf, 1, sizeof buf - 1, f);
        buf[len] = 0;
        fclose(f);
        check(&g, strstr(buf, "\"mem_limit\": 12, \"mem_limit_asked\": 1000000000, \"mem_limit_clamped\": true") != NULL,
              "json lacks mem_limit_asked / mem_limit_clamped");
        pp_sched_free(s);
    }
    group_end(&g, "ascii: memory limit 12 units (asked 1e+09, clamped ...); JSON: mem_limit_asked, mem_limit_clamped");
}

/* The same checks behind pp_sched_from_csv and pp_sched_from_order. */
static void other_entries(void) {
    group g;
    const char *csv = "0F0,0I0,0W0\n";
    pp_config c;
    pp_schedule *s = NULL;
    char err[PP_ERR_LEN];
    pp_status st;
    group_begin(&g, "pp_sched_from_csv with times out of range");
    memset(&c, 0, sizeof c);
    c.times.f = 1e308; c.times.b = 1;
    st = pp_sched_from_csv(csv, strlen(csv), &c, &s, err);
    check(&g, st == PP_ERR_INVALID_ARG && !s && strstr(err, "at most 1e+15"), "F=1e308: %s %s", pp_status_string(st), err);
    pp_sched_free(s);
    s = NULL;
    c.times.f = 1e-12;
    st = pp_sched_from_csv(csv, strlen(csv), &c, &s, err);
    check(&g, st == PP_ERR_INVALID_ARG && !s && strstr(err, "too far apart"), "F=1e-12: %s %s", pp_status_string(st), err);
    pp_sched_free(s);
    check(&g, pp_status_bad_input(PP_ERR_INVALID_ARG) && pp_status_bad_input(PP_ERR_UNKNOWN_SCHEDULE) &&
                  pp_status_bad_input(PP_ERR_OVERFLOW) && !pp_status_bad_input(PP_OK) &&
                  !pp_status_bad_input(PP_ERR_OUT_OF_MEMORY) && !pp_status_bad_input(PP_ERR_INVALID_SCHEDULE) &&
                  !pp_status_bad_input(PP_ERR_DEADLOCK),
          "pp_status_bad_input");
    group_end(&g, "F=1e308 and F=1e-12 refused before squeezing; pp_status_bad_input's split");
}

/* 1F1B's block on d = 2 without a split, worked by hand: F(0) at cell 0,
   F(1) at 1, BW(1) at 2-3 (after its own F), BW(0) at 4-5 (after BW(1));
   interval 3 (F + BW = 3 cells per device): device 0 uses cells 0, 4, 5 =
   0, 1, 2 mod 3, device 1 cells 1, 2, 3 = 1, 2, 0. */
static pp_block *hand_block(void) {
    pp_block *b = NULL;
    char err[PP_ERR_LEN];
    if (pp_block_create(2, 1, PP_PLACE_SEQUENTIAL, 0, 1, NULL, &b, err) != PP_OK) return NULL;
    b->interval = 3;
    b->f[0] = 0; b->f[1] = 1;
    b->b[1] = 2; b->b[0] = 4;
    return b;
}

/* the text a printer writes, into buf */
static void printed(void (*print)(FILE *, const pp_schedule *, int), const pp_schedule *s, char *buf, size_t size) {
    FILE *f = tmpfile();
    size_t len = 0;
    if (f) {
        print(f, s, 0);
        rewind(f);
        len = fread(buf, 1, size - 1, f);
        fclose(f);
    }
    buf[len] = 0;
}

/* Every public call that takes a schedule, on one whose pass k was set to
   the given stage and microbatch: each refuses with a status (and, where
   it has one, a message naming the pass), none reads out of range. */
static void corrupt_pass(group *g, const char *what, int stage, int mb) {
    pp_config c = make("zb-h1", 4, 8);
    pp_schedule *s = NULL;
    pp_program *prog = NULL;
    pp_bounds lb;
    double peak[4];
    char err[PP_ERR_LEN], buf[4096];
    pp_status st;
    FILE *f;
    if (!check(g, pp_sched_build(&c, &s, err) == PP_OK, "%s: build: %s", what, err)) return;
    s->passes[s->num_passes / 2].stage = stage;
    s->passes[s->num_passes / 2].microbatch = mb;
    err[0] = 0;
    st = pp_sched_validate(s, err);
    check(g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "out of range"), "%s: validate: %s %s", what, pp_status_string(st), err);
    f = tmpfile();
    err[0] = 0;
    st = pp_sched_print_csv(f, s, err);
    check(g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "pp_sched_print_csv: pass"), "%s: csv: %s %s", what, pp_status_string(st), err);
    err[0] = 0;
    st = pp_sched_print_svg(f, s, PP_SVG_MEMORY, err);
    check(g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "out of range"), "%s: svg: %s %s", what, pp_status_string(st), err);
    err[0] = 0;
    st = pp_sched_print_trace(f, s, err);
    check(g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "out of range"), "%s: trace: %s %s", what, pp_status_string(st), err);
    if (f) fclose(f);
    err[0] = 0;
    st = pp_reorder(s, err);
    check(g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "out of range"), "%s: reorder: %s %s", what, pp_status_string(st), err);
    err[0] = 0;
    st = pp_squeeze(s, err);
    check(g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "out of range"), "%s: squeeze: %s %s", what, pp_status_string(st), err);
    err[0] = 0;
    st = pp_sched_lower(s, &prog, err);
    check(g, st == PP_ERR_INVALID_SCHEDULE && !prog, "%s: lower: %s %s", what, pp_status_string(st), err);
    check(g, pp_sched_peak_memory(s, peak) == PP_ERR_INVALID_ARG, "%s: peak_memory accepted it", what);
    check(g, pp_sched_bounds(s, &lb) == PP_ERR_INVALID_ARG, "%s: bounds accepted it", what);
    check(g, pp_sched_torchtitan_schedule(s) == NULL, "%s: torchtitan_schedule named it", what);
    printed(pp_sched_print_ascii, s, buf, sizeof buf);
    check(g, strncmp(buf, "pp_sched_print_ascii: pass", 26) == 0 && strchr(buf, '\n') == buf + strlen(buf) - 1,
          "%s: ascii printed '%.80s', not one line saying why", what, buf);
    {
        FILE *j = tmpfile();
        long len = -1;
        if (j) { pp_sched_print_json(j, s); len = ftell(j); fclose(j); }
        check(g, len == 0, "%s: json wrote %ld bytes of a schedule it refuses", what, len);
    }
    pp_sched_free(s);
}

static void api_entries(void) {
    group g;
    pp_block *b;
    pp_schedule *s = NULL;
    char err[PP_ERR_LEN];
    pp_status st;
    int first = 7, last = 7;
    group_begin(&g, "public entry points on corrupted blocks and schedules: a status and a message, no out-of-range access");
    b = hand_block();
    if (check(&g, b != NULL, "pp_block_create(2, 1, sequential) failed")) {
        err[0] = 0;
        check(&g, pp_block_check(b, err) == PP_OK, "the hand-worked 1F1B block is refused: %s", err);
        check(&g, pp_block_peak_bound(b, 0) == 2 && pp_block_peak_bound(b, 1) == 1,
              "Eq. 1 of the hand block: %g %g, want ceil(6/3) = 2 and ceil(3/3) = 1", pp_block_peak_bound(b, 0),
              pp_block_peak_bound(b, 1));
        /* pp_repeat(b, INT_MAX): (n + mb - 1) overflowed inside the size check */
        err[0] = 0;
        st = pp_repeat(b, INT_MAX, NULL, NULL, &s, err);
        check(&g, st == PP_ERR_OVERFLOW && !s && err[0], "pp_repeat n=INT_MAX: %s %s", pp_status_string(st), err);
        pp_sched_free(s);
        s = NULL;
        /* an offset near INT_MAX: (cell + c) % T overflowed and indexed out of the table */
        b->b[0] = INT_MAX - 1;
        err[0] = 0;
        st = pp_block_check(b, err);
        check(&g, st == PP_ERR_INVALID_ARG && strstr(err, "outside 0.."), "offset INT_MAX-1: %s %s", pp_status_string(st), err);
        err[0] = 0;
        st = pp_repeat(b, 4, NULL, NULL, &s, err);
        check(&g, st == PP_ERR_INVALID_ARG && !s, "pp_repeat of the offset INT_MAX-1 block: %s %s", pp_status_string(st), err);
        pp_sched_free(s);
        s = NULL;
        check(&g, pp_block_peak_bound(b, 0) == -1, "pp_block_peak_bound of the offset INT_MAX-1 block: %g", pp_block_peak_bound(b, 0));
        b->b[0] = 4;
        b->stage_device[1] = 2; /* one past the devices */
        err[0] = 0;
        st = pp_block_check(b, err);
        check(&g, st == PP_ERR_INVALID_ARG && strstr(err, "placed on device 2"), "stage on device 2: %s %s", pp_status_string(st), err);
        b->stage_device[1] = 1;
        b->microbatches = 0; /* was a division by zero in pp_block_peak_bound */
        check(&g, pp_block_peak_bound(b, 0) == -1, "microbatches 0: pp_block_peak_bound %g", pp_block_peak_bound(b, 0));
        b->microbatches = 1;
        b->placement = (pp_placement)7;
        err[0] = 0;
        st = pp_block_check(b, err);
        check(&g, st == PP_ERR_INVALID_ARG && strstr(err, "placement 7"), "block placement 7: %s %s", pp_status_string(st), err);
        pp_block_free(b);
    }
    b = NULL;
    err[0] = 0;
    st = pp_block_create(4, 1, (pp_placement)3, 0, 1, NULL, &b, err);
    check(&g, st == PP_ERR_INVALID_ARG && !b && strstr(err, "PP_PLACE_VSHAPE (2)"), "pp_block_create placement 3: %s %s",
          pp_status_string(st), err);
    st = pp_block_create(INT_MAX, INT_MAX, PP_PLACE_LOOPED, 0, INT_MAX, NULL, &b, err);
    check(&g, st == PP_ERR_OVERFLOW && !b, "pp_block_create INT_MAX^3: %s %s", pp_status_string(st), err);
    corrupt_pass(&g, "stage S+5", 4 + 5, 0);
    corrupt_pass(&g, "stage -1", -1, 0);
    corrupt_pass(&g, "microbatch n", 0, 8);
    corrupt_pass(&g, "microbatch INT_MIN", 0, INT_MIN);
    /* device_start out of order: the pass loops ran past the passes */
    {
        pp_config c = make("1f1b", 4, 8);
        if (check(&g, pp_sched_build(&c, &s, err) == PP_OK, "1f1b: %s", err)) {
            int keep = s->device_start[1];
            s->device_start[1] = s->num_passes + 1000;
            err[0] = 0;
            st = pp_sched_validate(s, err);
            check(&g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "must not decrease"), "device_start[1] past the end: %s %s",
                  pp_status_string(st), err);
            s->device_start[1] = keep;
            s->stage_device[2] = 4;
            err[0] = 0;
            st = pp_squeeze(s, err);
            check(&g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "placed on device 4"), "stage 2 on device 4: %s %s",
                  pp_status_string(st), err);
            s->stage_device[2] = 2;
            s->passes[3].end = 1.0 / 0.0;
            err[0] = 0;
            st = pp_sched_print_svg(stdout, s, 0, err);
            check(&g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "outside [0, makespan"), "a pass ending at inf: svg %s %s",
                  pp_status_string(st), err);
            s->passes[3].end = s->passes[3].start + 1;
            memset(s->name, 'x', sizeof s->name);
            err[0] = 0;
            st = pp_sched_validate(s, err);
            check(&g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "NUL-terminated"), "name without its NUL: %s %s",
                  pp_status_string(st), err);
            pp_sched_free(s);
            s = NULL;
        }
    }
    pp_stage_route(INT_MIN, 1, 0, &first, &last);
    check(&g, first == 0 && last == -1, "pp_stage_route(INT_MIN stages): %d..%d, want the empty route 0..-1", first, last);
    group_end(&g, "block offset INT_MAX-1, stage on no device, placement 7 and 3, pp_repeat n=INT_MAX, pass stage and "
                  "microbatch out of range through every call, device_start, stage_device, an infinite end, a name without NUL");
}

/* The searches whose work grows faster than their output take fewer
   devices than LIMITS' 65536; the refusal names the limit and what builds
   at more, and following it is accepted (the time each takes at its limit
   is make bench-limits' to show, not a test's). */
static void search_limits(void) {
    group g;
    pp_config c;
    char err[PP_ERR_LEN];
    group_begin(&g, "searches above their device limit: refused with the limit and what to use, and the advice is taken");
    c = make("v-auto", 65536, 1);
    expect(&g, &c, PP_ERR_OVERFLOW, "v-auto d=65536 n=1", "at most 128 devices", "v-zb");
    c = make("zb-auto", 65536, 2);
    expect(&g, &c, PP_ERR_OVERFLOW, "zb-auto d=65536 n=2", "at most 384 devices", "zb-h1");
    c = make("zb-2p", 4096, 4096);
    expect(&g, &c, PP_ERR_OVERFLOW, "zb-2p d=4096 n=4096", "at most 384 devices", "zb-h2");
    c = make("zb-1p", 385, 8);
    expect(&g, &c, PP_ERR_OVERFLOW, "zb-1p d=385", "at most 384 devices", NULL);
    c = make("interleaved-1f1b-m", 257, 2);
    expect(&g, &c, PP_ERR_OVERFLOW, "interleaved-1f1b-m d=257 n=2", "at most 256 devices", "interleaved-1f1b-u");
    c = make("v-auto", 129, 4);
    expect(&g, &c, PP_ERR_OVERFLOW, "v-auto d=129", "devices <= 128", NULL);
    /* the advice: the fixed schedules named are taken at the same d and n */
    {
        static const char *alt[3] = {"v-zb", "zb-h1", "interleaved-1f1b-u"};
        static const int ad[3] = {65536, 65536, 257}, an[3] = {1, 2, 2};
        int k;
        for (k = 0; k < 3; k++) {
            pp__req q;
            c = make(alt[k], ad[k], an[k]);
            if (check(&g, pp__req_resolve(&c, &q, err) == PP_OK, "%s d=%d n=%d (the advice): %s", alt[k], ad[k], an[k], err))
                pp__req_free(&q);
        }
    }
    /* and the searches at their limits pass the checks (a build there is bench-limits') */
    {
        static const char *names[4] = {"v-auto", "zb-auto", "zb-2p", "interleaved-1f1b-m"};
        static const int most[4] = {128, 384, 384, 256};
        int k;
        for (k = 0; k < 4; k++) {
            pp__req q;
            pp_status st;
            c = make(names[k], most[k], 2 * most[k] + 4);
            st = pp__req_resolve(&c, &q, err);
            if (check(&g, st == PP_OK, "%s d=%d: %s", names[k], most[k], err)) pp__req_free(&q);
        }
    }
    group_end(&g, "v-auto 65536 and 129, zb-auto 65536, zb-2p 4096 x 4096, zb-1p 385, interleaved-1f1b-m 257; zb-h1 at "
                  "65536 and interleaved-1f1b-u at 257 taken; each search accepted at its limit");
}

/* A whole-schedule reorder takes at most 2^22 passes (n <= 2d + 6 is
   reordered whole, a larger n at 2d + 4 microbatches): above, refused
   before any work with an n that is taken; no_reorder and the published
   orders (never reordered) are not limited. Only the checks run here: a
   build at the limit is bench-limits'. */
static int resolves(const pp_config *c, char *err) {
    pp__req q;
    if (pp__req_resolve(c, &q, err) != PP_OK) return 0;
    pp__req_free(&q);
    return 1;
}
static void reorder_limit(void) {
    group g;
    pp_config c;
    char err[PP_ERR_LEN], want[64];
    int most;
    group_begin(&g, "the largest reorder: refused above 2^22 passes with an n that is taken");
    /* zb-h2: d stages, F, B, W: 3 d n passes reordered whole at n <= 2d + 6 */
    most = (1 << 22) / (3 * 4096); /* 341 */
    snprintf(want, sizeof want, "use n <= %d", most);
    c = make("zb-h2", 4096, 4096);
    expect(&g, &c, PP_ERR_OVERFLOW, "zb-h2 d=4096 n=4096", want, "no_reorder");
    c = make("zb-h2", 4096, most + 1);
    expect(&g, &c, PP_ERR_OVERFLOW, "zb-h2 d=4096 n=most+1", want, NULL);
    c = make("zb-h2", 4096, most);
    check(&g, resolves(&c, err), "zb-h2 d=4096 n=%d (the advice): %s", most, err);
    c = make("zb-h2", 4096, 4096);
    c.no_reorder = 1;
    check(&g, resolves(&c, err), "zb-h2 d=4096 n=4096 no_reorder: %s", err);
    /* n > 2d + 6: reordered at 2d + 4 = 4100 microbatches, 3 x 2048 x 4100 passes */
    most = (1 << 22) / (3 * 2048); /* 682, below 2d + 6 */
    snprintf(want, sizeof want, "use n <= %d", most);
    c = make("zb-h1", 2048, 5000);
    expect(&g, &c, PP_ERR_OVERFLOW, "zb-h1 d=2048 n=5000", want, NULL);
    c = make("zb-h1", 2048, most);
    check(&g, resolves(&c, err), "zb-h1 d=2048 n=%d (the advice): %s", most, err);
    /* v-zb: 2d stages, so half the microbatches of zb-h1 at the same d */
    most = (1 << 22) / (3 * 2 * 2048);
    snprintf(want, sizeof want, "use n <= %d", most);
    c = make("v-zb", 2048, 2048);
    expect(&g, &c, PP_ERR_OVERFLOW, "v-zb d=2048 n=2048", want, NULL);
    /* 1f1b-v: 2d stages, F and BW, 4 d n passes */
    most = (1 << 22) / (2 * 2 * 4096);
    c = make("1f1b-v", 4096, most);
    check(&g, resolves(&c, err), "1f1b-v d=4096 n=%d: %s", most, err);
    c = make("1f1b-v", 4096, most + 1);
    expect(&g, &c, PP_ERR_OVERFLOW, "1f1b-v d=4096 n=most+1", "2d + 6", NULL);
    /* zb-min repeats a block of 2 microbatches: above 2d + 6 it is reordered
       at 2d + 4, or 2d + 5 when n - (2d + 4) is odd. d = 835: 3 x 835 x 1674
       = 4193370 passes fit in 2^22 = 4194304, 3 x 835 x 1675 = 4195875 do not */
    c = make("zb-min", 835, 1678);
    check(&g, resolves(&c, err), "zb-min d=835 n=1678 (reordered at 1674): %s", err);
    snprintf(want, sizeof want, "means %d passes", 4195875);
    c = make("zb-min", 835, 1677);
    expect(&g, &c, PP_ERR_OVERFLOW, "zb-min d=835 n=1677 (reordered at 1675)", want, NULL);
    /* a published order is not reordered: 2 x 4096 x 4096 passes taken */
    c = make("looped-bfs", 2048, 4096);
    check(&g, resolves(&c, err), "looped-bfs d=2048 n=4096: %s", err);
    group_end(&g, "zb-h2 4096 x 4096 and 4096 x 342 refused, 4096 x 341 and no_reorder taken; zb-h1 2048 x 5000 "
                  "(at 2d + 4) refused, 2048 x 682 taken; v-zb, 1f1b-v at the edge; zb-min 835 x 1677 (at 2d + 5) refused, 835 x 1678 taken; looped-bfs (published) not limited");
}

/* the progress callback: counts its calls, asks to stop from call `stop` on (0: never) */
typedef struct stopper { int calls, stop; } stopper;
static int stop_at(void *user, const char *what, double done) {
    stopper *p = (stopper *)user;
    (void)what; (void)done;
    return ++p->calls >= p->stop && p->stop > 0;
}

/* Every built-in that is reordered (not a published order) asks the
   progress callback during its build, so Ctrl-C stops a long fixed build
   too: a callback that asks to stop gets PP_ERR_CANCELLED and no
   schedule; one that never does gets the same schedule as none. */
static void cancel_fixed(void) {
    group g;
    int i;
    group_begin(&g, "progress and cancellation in every reordered build");
    for (i = 0; i < pp_sched_count(); i++) {
        const pp_sched_info *in = pp_sched_info_at(i);
        pp_config c = make(in->name, 4, 8);
        pp_schedule *s = NULL, *t = NULL;
        char err[PP_ERR_LEN];
        stopper p;
        pp_status st;
        if (in->published) continue;
        memset(&p, 0, sizeof p);
        p.stop = 1;
        c.progress = stop_at;
        c.progress_user = &p;
        st = pp_sched_build(&c, &s, err);
        check(&g, st == PP_ERR_CANCELLED && !s && strstr(err, "stopped"), "%s: asked to stop, got %s (%s)", in->name,
              pp_status_string(st), err);
        pp_sched_free(s);
        s = NULL;
        memset(&p, 0, sizeof p);
        st = pp_sched_build(&c, &s, err);
        c.progress = NULL;
        if (check(&g, st == PP_OK && p.calls > 0, "%s: never asked to stop: %s, %d calls", in->name,
                  pp_status_string(st), p.calls) &&
            check(&g, pp_sched_build(&c, &t, err) == PP_OK, "%s without a callback: %s", in->name, err))
            check(&g, hash_sched(s) == hash_sched(t), "%s: the callback changed the schedule", in->name);
        pp_sched_free(s);
        pp_sched_free(t);
    }
    group_end(&g, "every built-in but the published orders, d=4 n=8: stopped at the first call; never stopped, "
                  "the same schedule as with no callback");
}

/* The shortcuts of the large-n builds give what the long way gives:
   - a block's memory caps from its repeat at pp__caps_n microbatches are
     the peaks of its repeat at n (every built-in block, n = 1 .. 60);
   - zb-min (two microbatches a block) reordered at 2d+4 or 2d+5 and
     extended by whole blocks is the whole n reordered, pass for pass;
   - interleaved-1f1b-m's block choice by steps and halving picks the
     first j that reaches Megatron's makespan, found here by trying every
     j in turn (d >= 32, where the steps are longer than one). */
static void large_n_paths(void) {
    group g;
    char err[PP_ERR_LEN];
    int id, d, n, fewer = 0, k;
    static const int ds[5] = {2, 3, 4, 5, 8};
    group_begin(&g, "large n: caps at fewer microbatches, zb-min extended by blocks, interleaved-1f1b-m's steps");
    for (id = 0; id < PP_SCHED_COUNT; id++)
        for (k = 0; k < 5; k++) {
            pp_config c = make(pp__infos[id].name, ds[k], 60);
            pp__req q;
            pp_block *blk = NULL;
            if (!pp__blocks[id] || pp__req_resolve(&c, &q, err) != PP_OK) continue;
            if (pp__blocks[id](&q, &blk, err) == PP_OK) {
                for (n = 1; n <= 60; n++) {
                    pp_schedule *a = NULL, *b = NULL;
                    int n1 = pp__caps_n(blk, n), i, same = 1;
                    if (pp__repeat(blk, n, NULL, &q.c, q.info->recompute, &a, err) != PP_OK) continue;
                    if (check(&g, pp__repeat(blk, n1, NULL, &q.c, q.info->recompute, &b, err) == PP_OK,
                              "%s d=%d: repeat at %d: %s", c.schedule, ds[k], n1, err)) {
                        for (i = 0; i < ds[k]; i++) same &= a->peak_memory[i] == b->peak_memory[i];
                        check(&g, same, "%s d=%d n=%d: the peaks at %d microbatches differ", c.schedule, ds[k], n, n1);
                        fewer += n1 < n;
                    }
                    pp_sched_free(a);
                    pp_sched_free(b);
                }
            }
            pp_block_free(blk);
            pp__req_free(&q);
        }
    check(&g, fewer > 1000, "only %d repeats were shortened", fewer);
    for (d = 2; d <= 5; d++)
        for (k = 0; k < 6; k++) {
            static const pp_times t[2] = {{1, 1, 1, 0}, {1.3, 2.1, 0.7, 0.1}};
            pp_config c = make("zb-min", d, k < 3 ? 2 * d + 7 + k : 3 * d + 9);
            pp__req q;
            pp_block *blk = NULL;
            pp_schedule *a = NULL, *b = NULL;
            c.times = t[k % 2];
            if (!check(&g, pp__req_resolve(&c, &q, err) == PP_OK, "zb-min d=%d: %s", d, err)) continue;
            if (check(&g, pp__block_of_zb_min(&q, &blk, err) == PP_OK &&
                              pp__block_schedule(blk, q.n, &q.c, 0, PP__RV_ALL, 0, NULL, &a, err) == PP_OK &&
                              pp__repeat(blk, q.n, NULL, &q.c, 0, &b, err) == PP_OK && pp_squeeze(b, err) == PP_OK &&
                              pp__reorder_memo(b, PP__RV_ALL, 0, NULL, NULL, err) == PP_OK,
                      "zb-min d=%d n=%d: %s", d, q.n, err)) {
                int i, same = a->num_passes == b->num_passes;
                for (i = 0; same && i < a->num_passes; i++)
                    same = a->passes[i].kind == b->passes[i].kind && a->passes[i].stage == b->passes[i].stage &&
                           a->passes[i].microbatch == b->passes[i].microbatch && a->passes[i].start == b->passes[i].start;
                check(&g, same, "zb-min d=%d n=%d: extended by blocks, not the whole n reordered (makespans %g, %g)", d,
                      q.n, a->makespan, b->makespan);
            }
            pp_sched_free(a);
            pp_sched_free(b);
            pp_block_free(blk);
            pp__req_free(&q);
        }
    for (k = 0; k < 4; k++) {
        static const int dd[4] = {32, 33, 40, 48};
        pp_config c = make("interleaved-1f1b-m", dd[k], 1);
        pp__cfg cfg;
        pp_schedule *meg = NULL;
        pp_block *got = NULL, *want = NULL;
        int j, j0, i, same;
        double mk = 0, seen;
        d = dd[k];
        if (!check(&g, pp__cfg_resolve(&c, &cfg, err) == PP_OK && pp__interleaved_official(&cfg, d, 2, 2 * d, &meg, err) == PP_OK &&
                           pp__interleaved_lowmem_block(&cfg, d, &cfg.al, &got, err) == PP_OK,
                   "interleaved-1f1b-m d=%d: %s", d, err))
            continue;
        /* every j in turn from j0 (its formula), the first that reaches the target */
        j0 = (int)((0.9 * d - (double)(((3 - d) % 6 + 6) % 6)) / 6);
        for (j = j0 < 0 ? 0 : j0; j <= j0 + d / 6 + 4; j++) {
            seen = -1;
            if (pp__ilm_try(&cfg, d, j, &cfg.al, meg->makespan, &seen, &want, &mk, err) != PP_OK) break;
            if (mk <= meg->makespan + PP__EPS * (1 + meg->makespan)) break;
            pp_block_free(want);
            want = NULL;
        }
        if (check(&g, want != NULL, "interleaved-1f1b-m d=%d: no j reaches %g", d, meg->makespan)) {
            same = 1;
            for (i = 0; i < want->stages * want->microbatches; i++) same &= want->f[i] == got->f[i] && want->b[i] == got->b[i];
            check(&g, same, "interleaved-1f1b-m d=%d: the steps chose another block than j = %d", d, j);
        }
        pp_block_free(want);
        pp_block_free(got);
        pp_sched_free(meg);
    }
    group_end(&g, "caps at fewer microbatches equal at n = 1 .. 60 (%d shortened); zb-min d = 2 .. 5 extended = whole n "
                  "reordered; interleaved-1f1b-m d = 32, 33, 40, 48 the first j that reaches the target", fewer);
}

int main(void) {
    reproducers();
    ranges();
    clamp();
    clamp_output();
    other_entries();
    api_entries();
    search_limits();
    reorder_limit();
    cancel_fixed();
    large_n_paths();
    printf("test_limits: %d groups passed, %d failed\n", g_groups_passed, g_groups_failed);
    return g_groups_failed != 0;
}
