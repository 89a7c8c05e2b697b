/* fuzz_build.c - libFuzzer target for pp_sched_build's config.

   Build and run:  make fuzz   (clang -fsanitize=fuzzer,address,undefined)
   Replay:         tests/fuzz_replay.c -DFUZZ_TARGET='"fuzz_build.c"' runs it on
                   every file of tests/fuzz_corpus_build/ in `make test`.

   The bytes are read as a structured config: schedule (an index, or a name
   that is not one), devices, microbatches, chunks, F, B, W, comm,
   mem_limit, recompute_input, no_reorder, and per-stage times. Counts come
   mostly small and sometimes from a list of edges (0, 1, 65536, 65537,
   INT_MAX, ...); numbers from a list of edges (0, 1e-12, 1e15, 1e308, inf,
   nan, -1, ...) or the raw bytes of a double.

   The properties: pp__req_resolve, the validation, never crashes on any
   config; on small ones (d <= 10, n <= 40, v <= 6) pp_sched_build gives
   PP_OK with a schedule that validates, has a finite makespan and, when
   the limit was clamped, says so; or refuses with the same status as the
   validation or a later one, with a message and no schedule. */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"

#include <stdint.h>
#include <math.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fuzz_bytes { const uint8_t *p; size_t n; } fuzz_bytes;

static unsigned fuzz_byte(fuzz_bytes *b) {
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

static int fuzz_count(fuzz_bytes *b, int small) {
    static const int edges[] = {0, 1, 2, -1, 65536, 65537, 3343, 3344, INT_MAX, INT_MIN, 1 << 20, 44739242, 100000};
    unsigned x = fuzz_byte(b);
    if (x & 0x80) return edges[(x & 0x7f) % (sizeof edges / sizeof edges[0])];
    return (int)(x % (unsigned)small) + 1;
}

static double fuzz_real(fuzz_bytes *b) {
    static const double edges[] = {0, 1, 2, 0.5, 3, 1e-12, 1e-9, 1e-8, 1e-6, 1e-3, 0.1, 1e9, 1e15, 1e16, 1e308, -1, -0.0};
    unsigned x = fuzz_byte(b);
    double v;
    if (x < 0xf0) return edges[x % (sizeof edges / sizeof edges[0])];
    if (x == 0xf0) return HUGE_VAL;
    if (x == 0xf1) return -HUGE_VAL;
    if (x == 0xf2) { v = 0; return v / v; } /* nan */
    {
        uint8_t raw[8];
        int i;
        for (i = 0; i < 8; i++) raw[i] = (uint8_t)fuzz_byte(b);
        memcpy(&v, raw, sizeof v);
        return v;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_bytes b;
    pp_config cfg;
    pp__req q;
    pp_times stage[64];
    char err[PP_ERR_LEN], err2[PP_ERR_LEN];
    pp_schedule *s = NULL;
    pp_status st, st2;
    unsigned pick, flags;
    int i;
    b.p = data;
    b.n = size;
    memset(&cfg, 0, sizeof cfg);
    pick = fuzz_byte(&b) % (unsigned)(pp_sched_count() + 2);
    cfg.schedule = pick < (unsigned)pp_sched_count() ? pp_sched_info_at((int)pick)->name : pick == (unsigned)pp_sched_count() ? NULL : "V_HALF";
    cfg.devices = fuzz_count(&b, 8);
    cfg.microbatches = fuzz_count(&b, 24);
    cfg.chunks = fuzz_count(&b, 5);
    if (cfg.chunks != INT_MIN) cfg.chunks--; /* 0..4, or an edge */
    flags = fuzz_byte(&b);
    if (flags & 1) { cfg.times.f = fuzz_real(&b); cfg.times.b = fuzz_real(&b); cfg.times.w = fuzz_real(&b); }
    if (flags & 2) cfg.times.comm = fuzz_real(&b);
    if (flags & 4) cfg.mem_limit = fuzz_real(&b);
    if (flags & 8) cfg.recompute_input = fuzz_real(&b);
    cfg.no_reorder = (flags >> 4) & 1;
    if ((flags & 32) && cfg.devices >= 1 && cfg.devices <= 8 && cfg.chunks >= 0 && cfg.chunks <= 4) {
        /* the array has what any schedule of these d and v reads: d * max(v, 2) stages */
        for (i = 0; i < 64; i++) {
            stage[i].f = fuzz_real(&b); stage[i].b = fuzz_real(&b); stage[i].w = fuzz_real(&b); stage[i].comm = 0;
            if (b.n == 0) { stage[i].f = 1 + i; stage[i].b = 2; stage[i].w = 1; }
        }
        cfg.stage_times = stage;
    }
    err[0] = 0;
    st = pp__req_resolve(&cfg, &q, err);
    if (st != PP_OK && err[0] == 0) abort();
    if (st == PP_OK) pp__req_free(&q);
    if (cfg.devices > 10 || cfg.microbatches > 40 || cfg.chunks > 6) return 0; /* too slow to build here */
    err2[0] = 0;
    st2 = pp_sched_build(&cfg, &s, err2);
    if (st != PP_OK && st2 != st) abort();   /* the validation's answer is the build's */
    if (st2 != PP_OK) {
        if (s || err2[0] == 0) abort();
        return 0;
    }
    if (!s || pp_sched_validate(s, err2) != PP_OK || !pp__finite(s->makespan) || s->makespan <= 0) abort();
    if (s->mem_limit_asked > 0 && !(s->mem_limit < s->mem_limit_asked)) abort();
    pp_sched_free(s);
    return 0;
}
