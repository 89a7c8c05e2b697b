/* fuzz_api.c - libFuzzer target for every public function that takes a
   schedule, a block or a program, on corrupted objects.

   Build and run:  make fuzz-api   (clang -fsanitize=fuzzer,address,undefined)
   Replay:         tests/fuzz_replay.c -DFUZZ_TARGET='"fuzz_api.c"' runs it on
                   every file of tests/fuzz_corpus_api/ in `make test`.

   The bytes pick a built-in schedule (a fixed one for an adaptive one)
   and small d, n; the target builds it
   (pp_sched_build) and the building block it came from (or zb-h1's), lowers
   the schedule, then corrupts up to 12 fields of the three objects: a count
   of the header (devices, stages, microbatches, num_passes, chunks,
   interval, ...), a pass's device, stage, microbatch, kind, start or end,
   an entry of device_start, stage_device, stage_time, the block's offsets,
   an op of the program, an array pointer set to NULL. Values come from a
   list of edges (0, -1, INT_MAX, INT_MIN, d, S, n, P, ...) or the raw
   bytes. The objects are then copied so that every array has the length
   the corrupted header gives it (the contract of the transparent structs:
   the fields count the arrays; a count above what the copy can hold leaves
   that array NULL, which the entry checks must refuse), and every public
   function is called on them.

   The property: no sanitizer report, no crash, no hang; every status is a
   status of the enum and every failure has a message. */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_SCHED_IO_IMPLEMENTATION
#include "../pp_sched_io.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fa_bytes { const uint8_t *p; size_t n; } fa_bytes;

static unsigned fa_byte(fa_bytes *b) {
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}
static unsigned fa_u16(fa_bytes *b) { unsigned x = fa_byte(b); return x | fa_byte(b) << 8; }

/* an int value: an edge, or near one of the object's counts, or raw */
static int fa_int(fa_bytes *b, int d, int S, int n, int P) {
    static const int edges[] = {0, 1, 2, 3, -1, -2, INT_MAX, INT_MIN, INT_MAX - 1, INT_MAX / 2, INT_MAX / 4,
                                INT_MAX / 4 + 1, INT_MAX / 12, 65536, 1 << 20};
    unsigned x = fa_byte(b);
    int near[4];
    near[0] = d; near[1] = S; near[2] = n; near[3] = P;
    if (x < 0x80) return edges[x % (sizeof edges / sizeof edges[0])];
    if (x < 0xf0) return (int)((unsigned)near[(x >> 2) & 3] + (x & 3) - 1u); /* count - 1 .. count + 2, wrapping */
    return (int)(fa_u16(b) | fa_u16(b) << 16);
}

static double fa_real(fa_bytes *b, double scale) {
    static const double edges[] = {0, 1, -1, 0.5, 2, 1e-300, 1e15, 1e16, 1e308, -1e308, -0.0};
    unsigned x = fa_byte(b);
    double v;
    if (x < 0x80) return edges[x % (sizeof edges / sizeof edges[0])];
    if (x < 0xc0) return scale * (double)(x - 0x80) / 16.0; /* near the schedule's times */
    if (x == 0xc0) return HUGE_VAL;
    if (x == 0xc1) return -HUGE_VAL;
    if (x == 0xc2) { v = 0; return v / v; }
    {
        uint8_t raw[8];
        int i;
        for (i = 0; i < 8; i++) raw[i] = (uint8_t)fa_byte(b);
        memcpy(&v, raw, sizeof v);
        return v;
    }
}

/* Largest array the copies hold; a count above it leaves its array NULL. */
enum { FA_CAP = 1 << 16 };

static void *fa_copy(const void *src, long long have, long long want, size_t elem) {
    char *p;
    if (want < 0 || want > FA_CAP) return NULL;
    p = (char *)calloc((size_t)(want > 0 ? want : 1), elem);
    if (p && src && have > 0) memcpy(p, src, (size_t)(have < want ? have : want) * elem);
    return p;
}

static long long fa_len(long long x) { return x; }

static void fa_status(pp_status st, const char *err) {
    if ((int)st < 0 || (int)st >= (int)PP_STATUS_COUNT) abort();
    if (st != PP_OK && err[0] == 0) abort();
}

/* a copy of s whose arrays have the lengths its (corrupted) header gives */
typedef struct fa_sched { pp_schedule s; } fa_sched;

static void fa_sched_copy(pp_schedule *dst, const pp_schedule *src, const pp_schedule *hdr) {
    long long d = hdr->devices, S = hdr->stages, P = hdr->num_passes;
    *dst = *hdr;
    dst->passes = (pp_pass *)fa_copy(src->passes, src->num_passes, fa_len(P), sizeof(pp_pass));
    dst->device_start = (int *)fa_copy(src->device_start, src->devices + 1LL, d + 1, sizeof(int));
    dst->stage_device = (int *)fa_copy(src->stage_device, src->stages, S, sizeof(int));
    dst->stage_time = (double *)fa_copy(src->stage_time, 4LL * src->stages, 4 * S, sizeof(double));
    dst->stage_memory = (double *)fa_copy(src->stage_memory, src->stages, S, sizeof(double));
    dst->peak_memory = (double *)fa_copy(src->peak_memory, src->devices, d, sizeof(double));
    dst->peak_bound = (double *)fa_copy(src->peak_bound, src->devices, d, sizeof(double));
    dst->allocator = src->allocator;
}

static void fa_sched_release(pp_schedule *s) {
    free(s->passes); free(s->device_start); free(s->stage_device); free(s->stage_time); free(s->stage_memory);
    free(s->peak_memory); free(s->peak_bound);
}

static void fa_block_copy(pp_block *dst, const pp_block *src, const pp_block *hdr) {
    long long S = hdr->stages, m = (long long)hdr->stages * hdr->microbatches, m0 = (long long)src->stages * src->microbatches;
    *dst = *hdr;
    dst->stage_device = (int *)fa_copy(src->stage_device, src->stages, S, sizeof(int));
    dst->f = (int *)fa_copy(src->f, m0, m, sizeof(int));
    dst->b = (int *)fa_copy(src->b, m0, m, sizeof(int));
    dst->w = (int *)fa_copy(src->w, m0, m, sizeof(int));
    dst->allocator = src->allocator;
}

static void fa_block_release(pp_block *b) { free(b->stage_device); free(b->f); free(b->b); free(b->w); }

static void fa_program_copy(pp_program *dst, const pp_program *src, const pp_program *hdr) {
    long long d = hdr->devices, N = hdr->num_ops;
    *dst = *hdr;
    dst->ops = (pp_op *)fa_copy(src->ops, src->num_ops, N, sizeof(pp_op));
    dst->device_start = (int *)fa_copy(src->device_start, src->devices + 1LL, d + 1, sizeof(int));
    dst->stage_device = src->stage_device ? (int *)fa_copy(src->stage_device, src->stages, hdr->stages, sizeof(int)) : NULL;
    dst->slots = src->slots ? (int *)fa_copy(src->slots, src->devices, d, sizeof(int)) : NULL;
    dst->send_buffers = src->send_buffers ? (int *)fa_copy(src->send_buffers, src->devices, d, sizeof(int)) : NULL;
    dst->allocator = src->allocator;
}

static void fa_program_release(pp_program *p) {
    free(p->ops); free(p->device_start); free(p->stage_device); free(p->slots); free(p->send_buffers);
}

/* one corruption: object (0 schedule, 1 block, 2 program), field, index, value */
typedef struct fa_op { unsigned obj, field, index; fa_bytes val; } fa_op;

static FILE *fa_sink(void) {
    static FILE *f;
    if (!f) f = fopen("/dev/null", "w");
    return f;
}

static void fa_header(pp_schedule *h, pp_block *bh, pp_program *ph, const fa_op *op) {
    fa_bytes v = op->val;
    int d = h->devices, S = h->stages, n = h->microbatches, P = h->num_passes;
    switch (op->obj) {
    case 0:
        switch (op->field) {
        case 0: h->devices = fa_int(&v, d, S, n, P); break;
        case 1: h->stages = fa_int(&v, d, S, n, P); break;
        case 2: h->microbatches = fa_int(&v, d, S, n, P); break;
        case 3: h->num_passes = fa_int(&v, d, S, n, P); break;
        case 4: h->chunks = fa_int(&v, d, S, n, P); break;
        case 5: h->copies = fa_int(&v, d, S, n, P); break;
        case 6: h->split_backward = fa_int(&v, d, S, n, P); break;
        case 7: h->placement = (pp_placement)fa_int(&v, d, S, n, P); break;
        }
        break;
    case 1:
        switch (op->field) {
        case 0: bh->devices = fa_int(&v, bh->devices, bh->stages, bh->microbatches, bh->interval); break;
        case 1: bh->stages = fa_int(&v, bh->devices, bh->stages, bh->microbatches, bh->interval); break;
        case 2: bh->microbatches = fa_int(&v, bh->devices, bh->stages, bh->microbatches, bh->interval); break;
        case 3: bh->chunks = fa_int(&v, bh->devices, bh->stages, bh->microbatches, bh->interval); break;
        }
        break;
    default:
        switch (op->field) {
        case 0: ph->devices = fa_int(&v, ph->devices, ph->stages, ph->microbatches, ph->num_ops); break;
        case 1: ph->stages = fa_int(&v, ph->devices, ph->stages, ph->microbatches, ph->num_ops); break;
        case 2: ph->microbatches = fa_int(&v, ph->devices, ph->stages, ph->microbatches, ph->num_ops); break;
        case 3: ph->num_ops = fa_int(&v, ph->devices, ph->stages, ph->microbatches, ph->num_ops); break;
        }
    }
}

/* index into an array of len entries (len <= 0 or array NULL: nothing) */
#define FA_AT(arr, len) ((arr) && (len) > 0 && (len) <= FA_CAP ? &(arr)[op->index % (unsigned)(len)] : NULL)

static void fa_element(pp_schedule *s, pp_block *b, pp_program *p, const fa_op *op) {
    fa_bytes v = op->val;
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes;
    double unit = s->makespan > 0 && s->makespan < 1e6 ? s->makespan / 4 : 1;
    if (op->obj == 0) {
        pp_pass *x = FA_AT(s->passes, P);
        switch (op->field) {
        case 8: if (x) x->device = fa_int(&v, d, S, n, P); break;
        case 9: if (x) x->stage = fa_int(&v, d, S, n, P); break;
        case 10: if (x) x->microbatch = fa_int(&v, d, S, n, P); break;
        case 11: if (x) x->kind = (pp_kind)fa_int(&v, d, S, n, P); break;
        case 12: if (x) x->start = fa_real(&v, unit); break;
        case 13: if (x) x->end = fa_real(&v, unit); break;
        case 14: { int *y = FA_AT(s->device_start, d + 1LL); if (y) *y = fa_int(&v, d, S, n, P); } break;
        case 15: { int *y = FA_AT(s->stage_device, S); if (y) *y = fa_int(&v, d, S, n, P); } break;
        case 16: { double *y = FA_AT(s->stage_time, 4LL * S); if (y) *y = fa_real(&v, unit); } break;
        case 17: { double *y = FA_AT(s->stage_memory, S); if (y) *y = fa_real(&v, 1); } break;
        case 18: s->makespan = fa_real(&v, unit); break;
        case 19: memset(s->name, 'x' + (int)(op->index & 1), sizeof s->name); break;
        case 20: {
            double *t = (op->index & 3) == 0 ? &s->times.f : (op->index & 3) == 1 ? &s->times.b
                      : (op->index & 3) == 2 ? &s->times.w : &s->times.comm;
            *t = fa_real(&v, unit);
        } break;
        case 21: s->interval = fa_int(&v, d, S, n, P); break;
        case 22: s->on_grid = fa_int(&v, d, S, n, P); break;
        case 23: { double *y = FA_AT(s->peak_memory, d); if (y) *y = fa_real(&v, 1); } break;
        case 24: { double *y = FA_AT(s->peak_bound, d); if (y) *y = fa_real(&v, 1); } break;
        case 25: s->bubble_growth = fa_int(&v, d, S, n, P); break;
        case 26: s->mem_limit = fa_real(&v, 1); s->mem_limit_asked = fa_real(&v, 1); break;
        case 27: { /* two passes swap places */
            pp_pass *y = FA_AT(s->passes, P), t;
            unsigned k = fa_u16(&v);
            if (x && P > 0 && P <= FA_CAP) { y = &s->passes[k % (unsigned)P]; t = *x; *x = *y; *y = t; }
        } break;
        case 28:
            switch (op->index % 7) {
            case 0: free(s->passes); s->passes = NULL; break;
            case 1: free(s->device_start); s->device_start = NULL; break;
            case 2: free(s->stage_device); s->stage_device = NULL; break;
            case 3: free(s->stage_time); s->stage_time = NULL; break;
            case 4: free(s->stage_memory); s->stage_memory = NULL; break;
            case 5: free(s->peak_memory); s->peak_memory = NULL; break;
            default: free(s->peak_bound); s->peak_bound = NULL; break;
            }
            break;
        }
    } else if (op->obj == 1) {
        long long m = (long long)b->stages * b->microbatches;
        int bd = b->devices, bs = b->stages, bm = b->microbatches, bt = b->interval;
        switch (op->field) {
        case 4: b->placement = (pp_placement)fa_int(&v, bd, bs, bm, bt); break;
        case 5: b->split_backward = fa_int(&v, bd, bs, bm, bt); break;
        case 6: b->interval = fa_int(&v, bd, bs, bm, bt); break;
        case 7: b->bw_cells = fa_int(&v, bd, bs, bm, bt); break;
        case 8: { int *y = FA_AT(b->stage_device, bs); if (y) *y = fa_int(&v, bd, bs, bm, bt); } break;
        case 9: { int *y = FA_AT(b->f, m); if (y) *y = fa_int(&v, bd, bs, bm, bt); } break;
        case 10: { int *y = FA_AT(b->b, m); if (y) *y = fa_int(&v, bd, bs, bm, bt); } break;
        case 11: { int *y = FA_AT(b->w, m); if (y) *y = fa_int(&v, bd, bs, bm, bt); } break;
        case 12:
            switch (op->index % 4) {
            case 0: free(b->stage_device); b->stage_device = NULL; break;
            case 1: free(b->f); b->f = NULL; break;
            case 2: free(b->b); b->b = NULL; break;
            default: free(b->w); b->w = NULL; break;
            }
            break;
        }
    } else {
        pp_op *x = FA_AT(p->ops, p->num_ops);
        int pd = p->devices, ps = p->stages, pm = p->microbatches, pn = p->num_ops;
        switch (op->field) {
        case 4: if (x) x->type = (pp_op_type)fa_int(&v, pd, ps, pm, pn); break;
        case 5: if (x) x->kind = (pp_kind)fa_int(&v, pd, ps, pm, pn); break;
        case 6: if (x) x->stage = fa_int(&v, pd, ps, pm, pn); break;
        case 7: if (x) x->microbatch = fa_int(&v, pd, ps, pm, pn); break;
        case 8: if (x) x->peer = fa_int(&v, pd, ps, pm, pn); break;
        case 9: if (x) x->what = (pp_payload)fa_int(&v, pd, ps, pm, pn); break;
        case 10: if (x) x->slot = fa_int(&v, pd, ps, pm, pn); break;
        case 11: if (x) x->group = fa_int(&v, pd, ps, pm, pn); break;
        case 12: { int *y = FA_AT(p->device_start, pd + 1LL); if (y) *y = fa_int(&v, pd, ps, pm, pn); } break;
        case 13: p->copies = fa_int(&v, pd, ps, pm, pn); break;
        }
    }
}

static int fa_field_is_header(const fa_op *op) { return op->field < (op->obj == 0 ? 8u : 4u); }

static void fa_call_sched(pp_schedule *s, unsigned flags) {
    FILE *f = fa_sink();
    char err[PP_ERR_LEN];
    pp_status st;
    double *peak = NULL;
    pp_bounds lb;
    pp_program *prog = NULL;
    err[0] = 0;
    st = pp_sched_validate(s, err);
    fa_status(st, err);
    err[0] = 0;
    st = pp_sched_check_shape(s, NULL, (int)(flags & 1), err);
    fa_status(st, err);
    {   /* the dependency rule on the header's counts and the passes' fields (read where the shape holds) */
        pp_kind k;
        int st_in, i;
        (void)pp_pass_input(s->stages, s->microbatches, s->copies, s->split_backward, (pp_kind)(flags & 7),
                            (int)(flags >> 3 & 7) - 1, (int)(flags >> 6 & 7) - 1, &k, &st_in);
        for (i = 0; st == PP_OK && i < s->num_passes && i < 64; i++)
            (void)pp_pass_input(s->stages, s->microbatches, s->copies, s->split_backward, s->passes[i].kind,
                                s->passes[i].stage, s->passes[i].microbatch, &k, &st_in);
    }
    if (s->devices >= 1 && s->devices <= FA_CAP) peak = (double *)malloc((size_t)s->devices * sizeof(double));
    pp_sched_peak_memory(s, peak);
    free(peak);
    pp_sched_bounds(s, &lb);
    (void)pp_sched_torchtitan_schedule(s);
    if (f) {
        pp_sched_print_ascii(f, s, (int)(flags & 1));
        pp_sched_print_json(f, s);
        err[0] = 0; fa_status(pp_sched_print_csv(f, s, err), err);
        err[0] = 0; fa_status(pp_sched_print_svg(f, s, (int)(flags >> 1 & 1), err), err);
        err[0] = 0; fa_status(pp_sched_print_trace(f, s, err), err);
    }
    err[0] = 0;
    st = pp_sched_lower(s, &prog, err);
    fa_status(st, err);
    if (st == PP_OK) {
        err[0] = 0;
        fa_status(pp_sched_check_deadlock(prog, NULL, err), err);
        pp_program_free(prog);
    }
    /* the order of the corrupted schedule, as another tool's */
    if (s->passes && s->num_passes > 0 && s->num_passes <= FA_CAP && s->stage_device && s->stages <= FA_CAP) {
        pp_order o;
        pp_schedule *t = NULL;
        memset(&o, 0, sizeof o);
        o.devices = s->devices; o.stages = s->stages; o.microbatches = s->microbatches;
        o.stage_device = (flags & 4) ? s->stage_device : NULL;
        o.passes = s->passes; o.count = s->num_passes;
        err[0] = 0;
        st = pp_sched_from_order(&o, NULL, &t, err);
        fa_status(st, err);
        if ((st == PP_OK) != (t != NULL)) abort();
        pp_sched_free(t);
    }
    /* these change s: last */
    err[0] = 0;
    fa_status(pp_squeeze(s, err), err);
    if (flags & 8) { err[0] = 0; fa_status(pp_reorder(s, err), err); }
}

static void fa_call_block(pp_block *b, fa_bytes *in, const pp_schedule *s) {
    char err[PP_ERR_LEN];
    pp_status st;
    int n, dev, *starts = NULL;
    long long nb;
    pp_schedule *r = NULL;
    pp_config cfg;
    err[0] = 0;
    fa_status(pp_block_check(b, err), err);
    dev = fa_int(in, b->devices, b->stages, b->microbatches, b->interval);
    (void)pp_block_peak_bound(b, dev);
    n = fa_int(in, s->devices, s->stages, s->microbatches, s->num_passes);
    if (n == INT_MIN) n = 0;
    if (n > 64 && n != INT_MAX && n != INT_MAX / 2) n = 1 + n % 64;
    nb = b->microbatches >= 1 && n >= 1 ? ((long long)n + b->microbatches - 1) / b->microbatches : 0;
    if (fa_byte(in) & 1 && nb > 0 && nb <= 64) {
        int k;
        starts = (int *)malloc((size_t)nb * sizeof(int));
        for (k = 0; k < nb; k++) starts[k] = k * (b->interval > 0 && b->interval < 1000 ? b->interval : 3) + (int)(fa_byte(in) % 3) - 1;
    }
    memset(&cfg, 0, sizeof cfg);
    err[0] = 0;
    st = pp_repeat(b, n, starts, &cfg, &r, err);
    fa_status(st, err);
    if ((st == PP_OK) != (r != NULL)) abort();
    if (r) {
        err[0] = 0;
        fa_status(pp_squeeze(r, err), err);
        err[0] = 0;
        fa_status(pp_sched_validate(r, err), err);
        pp_sched_free(r);
    }
    free(starts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fa_bytes in;
    pp_config cfg;
    pp__req q;
    pp_schedule *s = NULL, hs, cs;
    pp_block *blk = NULL, hb, cb;
    pp_program *prog = NULL, hp, cp;
    char err[PP_ERR_LEN];
    fa_op ops[12];
    int nops = 0, i, pick;
    unsigned flags;
    in.p = data;
    in.n = size;
    memset(&cfg, 0, sizeof cfg);
    pick = (int)(fa_byte(&in) % (unsigned)pp_sched_count());
    /* the adaptive searches build what a fixed schedule of their placement
       builds, slowly (tests/fuzz_build.c fuzzes them): their stand-ins */
    if (pp_sched_info_at(pick)->adaptive)
        pick = pp_sched_info_at(pick)->placement == PP_PLACE_VSHAPE ? PP_SCHED_V_ZB : PP_SCHED_ZB_H2;
    cfg.schedule = pp_sched_info_at(pick)->name;
    cfg.devices = 1 + (int)(fa_byte(&in) % 6);
    cfg.microbatches = 1 + (int)(fa_byte(&in) % 12);
    flags = fa_byte(&in);
    cfg.no_guarantee = 1;
    if (flags & 16) { cfg.times.f = 1; cfg.times.b = 2; cfg.times.w = 1; cfg.times.comm = 0.5; }
    if (pp_sched_build(&cfg, &s, err) != PP_OK) {
        cfg.schedule = "1f1b";
        if (pp_sched_build(&cfg, &s, err) != PP_OK) abort();
    }
    /* the block: the schedule's own where it is built from one, else zb-h1's */
    if (pp__req_resolve(&cfg, &q, err) == PP_OK) {
        if (!pp__blocks[q.info->id] || pp__blocks[q.info->id](&q, &blk, err) != PP_OK) blk = NULL;
        pp__req_free(&q);
    }
    if (!blk) {
        cfg.schedule = "zb-h1";
        if (pp__req_resolve(&cfg, &q, err) != PP_OK) abort();
        if (pp__blocks[q.info->id](&q, &blk, err) != PP_OK || !blk) abort();
        pp__req_free(&q);
    }
    if (pp_sched_lower(s, &prog, err) != PP_OK) abort();
    /* the corruptions */
    while (in.n >= 4 && nops < 12) {
        fa_op *op = &ops[nops++];
        unsigned x = fa_byte(&in);
        op->obj = x % 3;
        op->field = (x / 3) % (op->obj == 0 ? 29u : op->obj == 1 ? 13u : 14u);
        op->index = fa_u16(&in);
        op->val = in;
        /* each value reads at most 9 bytes; the next op starts after its first byte */
        fa_byte(&in);
        if (fa_byte(&in) == 0xff) break; /* the rest is the calls' bytes */
    }
    hs = *s; hb = *blk; hp = *prog;
    for (i = 0; i < nops; i++)
        if (fa_field_is_header(&ops[i])) fa_header(&hs, &hb, &hp, &ops[i]);
    fa_sched_copy(&cs, s, &hs);
    fa_block_copy(&cb, blk, &hb);
    fa_program_copy(&cp, prog, &hp);
    for (i = 0; i < nops; i++)
        if (!fa_field_is_header(&ops[i])) fa_element(&cs, &cb, &cp, &ops[i]);

    fa_call_sched(&cs, flags);
    fa_call_block(&cb, &in, s);
    {
        FILE *f = fa_sink();
        /* the checker's tables take d x 2S x n bytes by design: a large
           consistent header is a large request, not a bug; kept to 2 MB */
        if ((double)cp.devices * cp.stages * cp.microbatches <= (double)(1 << 20)) {
            err[0] = 0;
            fa_status(pp_sched_check_deadlock(&cp, NULL, err), err);
        }
        if (cp.num_ops >= 0 && cp.num_ops <= FA_CAP) { /* the two rules on the corrupted program */
            int *partner = (int *)malloc(((size_t)cp.num_ops + 1) * sizeof(int));
            int dev, i;
            if (partner && (double)cp.devices * cp.devices <= (double)(1 << 20)) {
                err[0] = 0;
                fa_status(pp_program_pair(&cp, partner, err), err);
            }
            free(partner);
            for (dev = -1; dev <= 2; dev++)
                for (i = -1; i <= 4 && i <= cp.num_ops; i++) (void)pp_program_group_end(&cp, dev, i);
        }
        if (f) pp_program_print(f, &cp);
    }
    /* the calls on plain values */
    {
        pp_block *nb = NULL;
        int d = fa_int(&in, 2, 4, 8, 16), v = fa_int(&in, 2, 4, 8, 16), m = fa_int(&in, 1, 2, 3, 4);
        pp_placement pl = (pp_placement)fa_int(&in, 0, 1, 2, 3);
        int first, last;
        err[0] = 0;
        if (d > 64) d = 1 + d % 64;
        if (v > 8) v = 1 + v % 8;
        if (m > 8) m = 1 + m % 8;
        fa_status(pp_block_create(d, v, pl, (int)(flags >> 5 & 1), m, NULL, &nb, err), err);
        if (nb) {
            err[0] = 0;
            fa_status(pp_block_check(nb, err), err); /* interval 0: refused */
            pp_block_free(nb);
        }
        pp_stage_route(fa_int(&in, 2, 4, 8, 16), fa_int(&in, 1, 2, 3, 4), fa_int(&in, 0, 1, 2, 3), &first, &last);
        (void)pp_kind_name((pp_kind)fa_int(&in, 0, 1, 2, 3));
        (void)pp_placement_name(pl);
        (void)pp_status_string((pp_status)fa_int(&in, 0, 1, 2, 3));
        (void)pp_status_bad_input((pp_status)fa_int(&in, 0, 1, 2, 3));
        (void)pp_op_type_name((pp_op_type)fa_int(&in, 0, 1, 2, 3));
        (void)pp_sched_info_at(fa_int(&in, 0, 1, 2, 21));
    }

    fa_sched_release(&cs);
    fa_block_release(&cb);
    fa_program_release(&cp);
    pp_program_free(prog);
    pp_block_free(blk);
    pp_sched_free(s);
    return 0;
}
