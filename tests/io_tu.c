/* io_tu.c - pp_sched_io.h sits on pp_sched.h's public API only.
   Built twice: with -DIO_TU_SCHED it is only pp_sched.h's implementation;
   without, it is pp_sched_io.h's implementation (no pp_sched.h private
   helper is in scope there, so any use of one fails to compile or to link)
   plus a main that writes a schedule as CSV, SVG and trace and reads the
   CSV back. tests/run_tests.sh links the two and also checks that every
   private name in pp_sched_io.h carries its own prefix (pp__io_, PP__IO_).
   Exits 0 when the round trip gives the schedule back. */
#ifdef IO_TU_SCHED
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#else
#define PP_SCHED_IO_IMPLEMENTATION
#include "../pp_sched_io.h"
#include <stdio.h>

int main(void) {
    pp_config cfg;
    pp_schedule *s = NULL, *back = NULL;
    char err[PP_ERR_LEN], *text;
    long len;
    int i, rc = 0;
    FILE *f = tmpfile(), *g = tmpfile();
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = "v-half";
    cfg.devices = 4;
    cfg.microbatches = 8;
    if (!f || !g || pp_sched_build(&cfg, &s, err) != PP_OK) { printf("io_tu: %s\n", f ? err : "no tmpfile"); return 1; }
    if (pp_sched_print_svg(f, s, PP_SVG_MEMORY, err) != PP_OK || pp_sched_print_trace(f, s, err) != PP_OK) {
        printf("io_tu: %s\n", err);
        return 2;
    }
    if (ftell(f) < 1000) { printf("io_tu: SVG and trace wrote %ld bytes\n", ftell(f)); return 3; }
    if (pp_sched_print_csv(g, s, err) != PP_OK) { printf("io_tu: csv: %s\n", err); return 4; }
    len = ftell(g);
    rewind(g);
    text = (char *)malloc((size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, g) != (size_t)len) return 5;
    if (pp_sched_from_csv(text, (size_t)len, NULL, &back, err) != PP_OK) { printf("io_tu: read back: %s\n", err); return 6; }
    /* the same passes in the same per-device order, so the same squeezed times */
    if (back->num_passes != s->num_passes || back->makespan != s->makespan) rc = 7;
    for (i = 0; i < s->num_passes && !rc; i++)
        if (back->passes[i].stage != s->passes[i].stage || back->passes[i].kind != s->passes[i].kind ||
            back->passes[i].start != s->passes[i].start)
            rc = 8;
    if (rc) printf("io_tu: the CSV read back differs from the schedule written (%d)\n", rc);
    free(text);
    fclose(f);
    fclose(g);
    pp_sched_free(back);
    pp_sched_free(s);
    return rc;
}
#endif
