/* bench_c.c - the C side of make bench-python: pp_sched_build of v-auto at
   d = 16, n = 128 (unit times, then 1, 1.1, 0.9, 0.05), best CPU time (this process) of
   REPS builds each, in ms, one line per setting ("unit MS", "uneven MS"),
   for python/bench_python.py to put next to the same build through Python.
   Build: cc -std=c99 -O2 -I. -o python/bench_c python/bench_c.c -lm */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
#define PP_SCHED_IMPLEMENTATION
#include "pp_sched.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(void) {
    enum { REPS = 7 };
    const pp_times uneven = {1.0, 1.1, 0.9, 0.05};
    int k, r;
    for (k = 0; k < 2; k++) {
        double best = 1e300;
        for (r = 0; r < REPS; r++) {
            pp_config cfg = {0};
            char err[PP_ERR_LEN];
            pp_schedule *s = NULL;
            double t0;
            cfg.schedule = "v-auto";
            cfg.devices = 16;
            cfg.microbatches = 128;
            if (k) cfg.times = uneven;
            t0 = now_ms();
            if (pp_sched_build(&cfg, &s, err) != PP_OK) { fprintf(stderr, "bench_c: %s\n", err); return 1; }
            t0 = now_ms() - t0;
            if (t0 < best) best = t0;
            pp_sched_free(s);
        }
        printf("%s %.3f\n", k ? "uneven" : "unit", best);
    }
    return 0;
}
