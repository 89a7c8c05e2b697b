/* stage_json.c - one built schedule as JSON, with per-stage times.
 *
 * ppsched's --times gives every stage the same times; bench/optimal.py's
 * grid also measures a pipeline whose last stage is heavier (an LM head).
 * This prints pp_sched_print_json for a schedule built with
 * pp_config.stage_times: every stage runs F, B, W / v (v = chunks per
 * device), the last stage LAST times that.
 *
 *   make bench/stage_json
 *   bench/stage_json NAME D N F,B,W,COMM LAST [MEM_LIMIT]
 *
 * Exit status 0 with the JSON on stdout, 2 with pp_sched's message on
 * stderr when the schedule cannot be built. */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    pp_config cfg = {0};
    pp_schedule *s = NULL;
    pp_times stage[1024];
    char err[256] = "";
    double last, v;
    int S, i;
    const pp_sched_info *info;
    if (argc < 6 || argc > 7) {
        fprintf(stderr, "usage: %s NAME D N F,B,W,COMM LAST [MEM_LIMIT]\n", argv[0]);
        return 2;
    }
    cfg.schedule = argv[1];
    cfg.devices = atoi(argv[2]);
    cfg.microbatches = atoi(argv[3]);
    if (sscanf(argv[4], "%lf,%lf,%lf,%lf", &cfg.times.f, &cfg.times.b, &cfg.times.w, &cfg.times.comm) != 4) {
        fprintf(stderr, "times must be F,B,W,COMM, got %s\n", argv[4]);
        return 2;
    }
    last = atof(argv[5]);
    if (argc == 7)
        cfg.mem_limit = atof(argv[6]);
    info = pp_sched_find(cfg.schedule);
    if (!info) {
        fprintf(stderr, "no built-in schedule named %s\n", cfg.schedule);
        return 2;
    }
    /* the schedule's own chunks per device: build once with even times */
    if (pp_sched_build(&cfg, &s, err) != PP_OK) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    S = s->stages;
    v = (double)s->chunks / (s->copies > 1 ? s->copies : 1);
    pp_sched_free(s);
    if (S > 1024) {
        fprintf(stderr, "at most 1024 stages, got %d\n", S);
        return 2;
    }
    for (i = 0; i < S; i++) {
        double x = i == S - 1 ? last : 1.0;
        stage[i].f = cfg.times.f / v * x;
        stage[i].b = cfg.times.b / v * x;
        stage[i].w = cfg.times.w / v * x;
        stage[i].comm = 0;
    }
    cfg.stage_times = stage;
    if (pp_sched_build(&cfg, &s, err) != PP_OK) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    pp_sched_print_json(stdout, s);
    pp_sched_free(s);
    return 0;
}
