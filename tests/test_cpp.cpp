// test_cpp.cpp - pp_sched.h with its implementation compiled as C++ (-std=c++11).
// Builds one schedule, validates, lowers and deadlock-checks it; plans a small model
// with pp_plan.h (also compiled as C++); exits 0 on success.
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_SCHED_IO_IMPLEMENTATION
#include "../pp_sched_io.h"
#define PP_PLAN_IMPLEMENTATION
#include "../pp_plan.h"

#include <cstdio>

int main() {
    pp_config cfg = pp_config();
    cfg.schedule = "v-zb";
    cfg.devices = 4;
    cfg.microbatches = 8;
    pp_schedule *s = NULL;
    char err[PP_ERR_LEN];
    if (pp_sched_build(&cfg, &s, err) != PP_OK) {
        std::fprintf(stderr, "test_cpp: build: %s\n", err);
        return 1;
    }
    if (pp_sched_validate(s, err) != PP_OK) {
        std::fprintf(stderr, "test_cpp: validate: %s\n", err);
        pp_sched_free(s);
        return 1;
    }
    pp_program *prog = NULL;
    if (pp_sched_lower(s, &prog, err) != PP_OK || pp_sched_check_deadlock(prog, NULL, err) != PP_OK) {
        std::fprintf(stderr, "test_cpp: lower: %s\n", err);
        pp_program_free(prog);
        pp_sched_free(s);
        return 1;
    }
    pp_program_free(prog);
    {   // export as PyTorch CSV, import it again; SVG and trace print
        std::FILE *f = std::tmpfile();
        char buf[1 << 14];
        size_t len;
        pp_schedule *back = NULL;
        if (!f || pp_sched_print_csv(f, s, err) != PP_OK) return 1;
        std::rewind(f);
        len = std::fread(buf, 1, sizeof buf, f);
        std::fclose(f);
        if (pp_sched_from_csv(buf, len, &cfg, &back, err) != PP_OK || back->makespan != s->makespan) {
            std::fprintf(stderr, "test_cpp: csv round trip: %s\n", err);
            return 1;
        }
        pp_sched_free(back);
        f = std::tmpfile();
        if (!f || pp_sched_print_svg(f, s, PP_SVG_MEMORY, err) != PP_OK || pp_sched_print_trace(f, s, err) != PP_OK) return 1;
        std::fclose(f);
    }
    {   // pp_plan.h: a 12-layer model on 8 GPUs
        pp_plan_request r = pp_plan_request();
        static pp_candidate c[2048];
        int count = 0;
        r.model.layers = 12; r.model.hidden = 768; r.model.heads = 12; r.model.seq = 1024;
        r.gpus = 8; r.global_batch = 32;
        if (pp_plan(&r, c, 2048, &count, err) != PP_OK || count < 1 || c[0].step_time <= 0) {
            std::fprintf(stderr, "test_cpp: pp_plan: %s\n", err);
            return 1;
        }
    }
    std::printf("test_cpp: %s d=%d n=%d makespan %g, bubble rate %.4f\n", s->name, s->devices, s->microbatches, s->makespan,
                s->bubble_rate);
    pp_sched_free(s);
    return 0;
}
