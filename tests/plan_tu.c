/* plan_tu.c - pp_plan.h sits on pp_sched.h's public API only.
   Built twice: with -DPLAN_TU_SCHED it is only pp_sched.h's implementation;
   without, it is pp_plan.h's implementation (and no pp_sched.h private
   helper is in scope, so any use of one fails to compile) plus a main that
   plans a small model. tests/run_tests.sh links the two; exits 0 when the
   plan has a fitting candidate. */
#ifdef PLAN_TU_SCHED
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#else
#define PP_PLAN_IMPLEMENTATION
#include "../pp_plan.h"
#include <stdio.h>

int main(void) {
    static pp_candidate c[2048];
    pp_plan_request r;
    char err[PP_ERR_LEN];
    int count = 0;
    memset(&r, 0, sizeof r);
    r.model.layers = 12;
    r.model.hidden = 768;
    r.model.heads = 12;
    r.model.seq = 1024;
    r.gpus = 8;
    r.global_batch = 32;
    if (pp_plan(&r, c, 2048, &count, err) != PP_OK) { printf("plan_tu: %s\n", err); return 1; }
    return count > 0 && c[0].step_time > 0 ? 0 : 2;
}
#endif
