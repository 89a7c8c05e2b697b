/* two_tu_b.c - the second translation unit of the two_tu test (see two_tu_a.c). */
#ifdef TWO_TU_STATIC
#define PP_SCHED_STATIC
#define PP_SCHED_IMPLEMENTATION
#endif
#include "../pp_sched.h"

double two_tu_b_makespan(int d, int n);

double two_tu_b_makespan(int d, int n) {
    pp_config cfg = {0};
    pp_schedule *s = NULL;
    double m;
    cfg.schedule = "v-half";
    cfg.devices = d;
    cfg.microbatches = n;
    if (pp_sched_build(&cfg, &s, NULL) != PP_OK) return -1;
    m = s->makespan;
    pp_sched_free(s);
    return m;
}
