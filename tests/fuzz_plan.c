/* fuzz_plan.c - libFuzzer target for pp_plan's request (pp_plan.h).

   Build and run:  make fuzz-plan   (clang -fsanitize=fuzzer,address,undefined;
                                     FUZZ_TIME=N seconds; crashers land in
                                     fuzz-out/, copy them to tests/fuzz_corpus_plan/)
   Replay:         tests/fuzz_replay.c built with -DFUZZ_PLAN runs this function
                   on every file in tests/fuzz_corpus_plan/ in `make test`.

   The request is read from the fuzzer's bytes field by field: each field
   takes one selector byte, then either a small value in the field's useful
   range (most of the time, so that plans really run) or raw bytes (an int
   or a double from anywhere, NaN and infinities included, so that the
   check of the request is fuzzed too). Property: pp_plan returns PP_OK
   with candidates that are finite, sorted and consistent (a fitting one's
   peak within memory - reserve), or a status with a message; never a
   crash, a leak, undefined behaviour or a hang. The recipe and the
   recomputation are read last (out-of-range values included), so older
   corpus files keep their meaning. Requests whose candidate
   count (asked with cap = 0, which runs only the check and the count) is
   above 400, or with more than 96 layers or 32 GPUs, are only counted,
   not planned, to keep each run short (planning 162 GPUs can take 3 s:
   make bench times the large plans). */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_PLAN_IMPLEMENTATION
#include "../pp_plan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fz { const uint8_t *p; size_t n; } fz;

static unsigned fz_byte(fz *f) {
    unsigned b = f->n ? f->p[0] : 0;
    if (f->n) { f->p++; f->n--; }
    return b;
}

/* a small int in [0, hi] most of the time, else raw 32 bits */
static int fz_int(fz *f, int hi) {
    unsigned sel = fz_byte(f), v = 0, i;
    if (sel < 224) return (int)((fz_byte(f) | fz_byte(f) << 8) % (unsigned)(hi + 1));
    for (i = 0; i < 4; i++) v |= fz_byte(f) << (8 * i);
    return (int)v;
}

/* a double in [0, hi] most of the time, else raw 64 bits (NaN, inf, negative) */
static double fz_real(fz *f, double hi) {
    unsigned sel = fz_byte(f), i;
    uint64_t v = 0;
    double d;
    if (sel < 224) return hi * (double)(fz_byte(f) | fz_byte(f) << 8) / 65535.0;
    for (i = 0; i < 8; i++) v |= (uint64_t)fz_byte(f) << (8 * i);
    memcpy(&d, &v, sizeof d);
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    pp_plan_request r;
    pp_times t;
    pp_candidate *c;
    char err[PP_ERR_LEN];
    int count = 0, i, ns = pp_sched_count(), preset;
    pp_status st;
    f.p = data;
    f.n = size;
    memset(&r, 0, sizeof r);
    preset = fz_byte(&f) % 8; /* 0..5: a model preset to start from, 6, 7: none */
    if (preset < 6) pp_model_preset(pp_model_preset_name(preset), &r.model, NULL);
    if (fz_byte(&f) & 1) pp_gpu_preset(pp_gpu_preset_name((int)(fz_byte(&f) % 4)), &r.gpu, NULL);
    if (fz_byte(&f) & 1) r.model.layers = fz_int(&f, 130);
    if (fz_byte(&f) & 1) r.model.hidden = fz_int(&f, 8192);
    if (fz_byte(&f) & 1) r.model.heads = fz_int(&f, 128);
    if (fz_byte(&f) & 1) r.model.seq = fz_int(&f, 65536);
    if (fz_byte(&f) & 1) r.model.kv_heads = fz_int(&f, 16);
    if (fz_byte(&f) & 1) r.model.head_dim = fz_int(&f, 256);
    if (fz_byte(&f) & 1) r.model.ffn = fz_int(&f, 30000);
    if (fz_byte(&f) & 1) r.model.vocab = fz_int(&f, 200000);
    if (fz_byte(&f) & 1) r.model.experts = fz_int(&f, 64);
    if (fz_byte(&f) & 1) r.model.top_k = fz_int(&f, 8);
    if (fz_byte(&f) & 1) r.model.shared_experts = fz_int(&f, 2);
    if (fz_byte(&f) & 1) r.model.expert_ffn = fz_int(&f, 4096);
    if (fz_byte(&f) & 1) r.model.dense_layers = fz_int(&f, 8);
    if (fz_byte(&f) & 1) r.model.kv_lora_rank = fz_int(&f, 1024);
    if (fz_byte(&f) & 1) r.model.q_lora_rank = fz_int(&f, 2048);
    if (fz_byte(&f) & 1) r.model.rope_head_dim = fz_int(&f, 128);
    {
        unsigned flags = fz_byte(&f) | fz_byte(&f) << 8;
        r.model.gated = flags & 1; r.model.untied = flags >> 1 & 1; r.model.rope = flags >> 2 & 1;
        r.model.rmsnorm = flags >> 3 & 1; r.model.no_flash_attention = flags >> 4 & 1;
        r.model.no_seq_parallel = flags >> 5 & 1; r.model.no_distributed_optimizer = flags >> 6 & 1;
        r.model.recompute_norm_up = flags >> 7 & 1; r.model.fp8_moe_act = flags >> 8 & 1;
        r.no_prune = flags >> 9 & 1;
        r.fp8 = flags >> 10 & 1; r.no_tp_overlap = flags >> 11 & 1;
        r.no_dp_overlap = flags >> 12 & 1; r.no_fb_overlap = flags >> 13 & 1;
        if (flags >> 15) r.model.gated = 2; /* an out-of-range flag */
    }
    r.gpus = fz_int(&f, 256);
    r.global_batch = fz_int(&f, 512);
    if (fz_byte(&f) & 1) r.pp = fz_int(&f, 64);
    if (fz_byte(&f) & 1) r.tp = fz_int(&f, 8);
    if (fz_byte(&f) & 1) r.dp = fz_int(&f, 64);
    if (fz_byte(&f) & 1) r.cp = fz_int(&f, 8);
    if (fz_byte(&f) & 1) r.ep = fz_int(&f, 64);
    if (fz_byte(&f) & 1) r.mbs = fz_int(&f, 8);
    if (fz_byte(&f) & 1) r.v = fz_int(&f, 8);
    if (fz_byte(&f) & 1) r.keep_top = fz_int(&f, 20);
    if (fz_byte(&f) & 1) r.gpu.mem_bytes = fz_real(&f, 200.0 * 1073741824.0);
    if (fz_byte(&f) & 1) r.gpu.reserve_bytes = fz_real(&f, 16.0 * 1073741824.0);
    if (fz_byte(&f) & 1) r.gpu.flops = fz_real(&f, 1e15);
    if (fz_byte(&f) & 1) r.gpu.peak_flops = fz_real(&f, 3e15);
    if (fz_byte(&f) & 1) r.gpu.efficiency = fz_real(&f, 1);
    if (fz_byte(&f) & 1) r.gpu.hbm_bw = fz_real(&f, 1e13);
    if (fz_byte(&f) & 1) r.gpu.tp_bw = fz_real(&f, 1e12);
    if (fz_byte(&f) & 1) r.gpu.net_bw = fz_real(&f, 1e11);
    if (fz_byte(&f) & 1) r.gpu.tp_slowdown = fz_real(&f, 1) - (fz_byte(&f) & 1);
    if (fz_byte(&f) & 1) r.gpu.node_gpus = fz_int(&f, 16);
    if (fz_byte(&f) & 1) {
        t.f = fz_real(&f, 10); t.b = fz_real(&f, 10); t.w = fz_real(&f, 10); t.comm = fz_real(&f, 1);
        r.times = &t;
    }
    if (fz_byte(&f) & 1) r.schedule = pp_sched_info_at((int)(fz_byte(&f) % (unsigned)ns))->name;
    if (fz_byte(&f) & 1) r.gpu.gemm_width = fz_real(&f, 4000);
    if (fz_byte(&f) & 1) r.gpu.fp8_speedup = fz_real(&f, 4);
    if (fz_byte(&f) & 1) r.model.route_nodes = fz_int(&f, 16);
    /* the accounting: a recipe and a recomputation, the count itself out of range at times */
    if (fz_byte(&f) & 1) r.recipe = (int)(fz_byte(&f) % (PP_RECIPE_COUNT + 1));
    if (fz_byte(&f) & 1) r.recompute = (int)(fz_byte(&f) % (PP_RECOMPUTE_COUNT + 1));
    err[0] = 0;
#ifdef FUZZ_PLAN_PRINT /* the request, for a look at a finding */
    printf("L=%d h=%d a=%d s=%d kv=%d hd=%d ffn=%d V=%d E=%d k=%d sh=%d eff=%d dl=%d kvr=%d qr=%d rd=%d gpus=%d gb=%d "
           "pp=%d tp=%d dp=%d cp=%d ep=%d mbs=%d v=%d sched=%s times=%d mem=%g recipe=%d recompute=%d\n", r.model.layers, r.model.hidden,
           r.model.heads, r.model.seq, r.model.kv_heads, r.model.head_dim, r.model.ffn, r.model.vocab, r.model.experts,
           r.model.top_k, r.model.shared_experts, r.model.expert_ffn, r.model.dense_layers, r.model.kv_lora_rank,
           r.model.q_lora_rank, r.model.rope_head_dim, r.gpus, r.global_batch, r.pp, r.tp, r.dp, r.cp, r.ep, r.mbs, r.v,
           r.schedule ? r.schedule : "-", r.times != NULL, r.gpu.mem_bytes, r.recipe, r.recompute);
#endif
    st = pp_plan(&r, NULL, 0, &count, err);
    if (st != PP_OK) {
        if (err[0] == 0) abort(); /* every refusal says why */
        return 0;
    }
    if (count < 0 || count > 200000) abort();
    if (count > 400 || r.model.layers > 96 || r.gpus > 32) return 0; /* counted only: see above */
    c = (pp_candidate *)malloc(sizeof *c * (size_t)(count > 0 ? count : 1));
    if (!c) return 0;
    st = pp_plan(&r, c, count, &count, err);
    if (st == PP_OK) {
        double mem = pp_gpu_defaults(&r.gpu).mem_bytes - r.gpu.reserve_bytes;
        for (i = 0; i < count; i++) {
            const pp_candidate *x = &c[i];
            if (!(x->step_time >= 0) || !(x->peak_bytes >= 0) || !(x->mfu >= 0) || x->step_time != x->step_time ||
                x->peak_bytes > 1e300 || x->step_time > 1e300 || x->reason[0] == 0)
                abort();
            if (x->step_time > 0 && (!x->fits || x->peak_bytes > mem * (1 + 1e-12))) abort();
            if (i > 0 && x->step_time > 0 && (c[i - 1].step_time <= 0 || c[i - 1].step_time > x->step_time)) abort();
            if (x->pp * x->tp * x->cp * x->dp != r.gpus) abort();
        }
    } else if (err[0] == 0) {
        abort();
    }
    free(c);
    return 0;
}
