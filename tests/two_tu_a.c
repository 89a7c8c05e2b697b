/* two_tu_a.c - with two_tu_b.c: pp_sched.h included from two translation units.
   Normal build: only this file defines PP_SCHED_IMPLEMENTATION, so the two link
   without duplicate symbols. With -DTWO_TU_STATIC both define it together with
   PP_SCHED_STATIC, each gets its own private copy, and they still link.
   With -DPP_SCHED_NO_STDIO the printers are gone and the rest still builds,
   pp_sched_io.h's PyTorch CSV parser (which reads from memory) included.
   Exits 0 when both units built the same schedule and the CSV parsed. */
#ifdef TWO_TU_STATIC
#define PP_SCHED_STATIC
#define PP_SCHED_IO_STATIC
#endif
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_SCHED_IO_IMPLEMENTATION
#include "../pp_sched_io.h"
#ifndef PP_SCHED_NO_STDIO
#include <stdio.h>
#endif

double two_tu_b_makespan(int d, int n); /* two_tu_b.c */

int main(void) {
    pp_config cfg = {0};
    pp_schedule *s = NULL;
    char err[PP_ERR_LEN];
    double here, there;
    cfg.schedule = "v-half";
    cfg.devices = 4;
    cfg.microbatches = 8;
    if (pp_sched_build(&cfg, &s, err) != PP_OK) return 1;
    if (pp_sched_validate(s, err) != PP_OK) return 2;
    here = s->makespan;
    pp_sched_free(s);
    there = two_tu_b_makespan(4, 8);
    {   /* PyTorch CSV from memory: 2 ranks, 1F1B, 2 microbatches */
        static const char csv[] = "0F0,0F1,,,0B0,,0B1\n,1F0,1B0,1F1,,1B1,\n";
        pp_schedule *c = NULL;
        if (pp_sched_from_csv(csv, sizeof csv - 1, NULL, &c, err) != PP_OK) return 4;
        if (c->devices != 2 || c->num_passes != 8) return 5;
        pp_sched_free(c);
    }
#ifndef PP_SCHED_NO_STDIO
    if (here != there) printf("two_tu: makespan %g in one unit, %g in the other\n", here, there);
#endif
    return here == there && here > 0 ? 0 : 3;
}
