/* test_cuda_kernels.cu - every kernel of pp_cuda_gpt.cuh and every kind of
   stage (first, middle, last, single) against ref/gpt_ref.h in float.

   Build and run (make test-cuda-kernels does both; make test builds it and
   runs it, and it skips itself where there is no GPU):
       nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a \
            -gencode arch=compute_80,code=compute_80 -o test_cuda_kernels tests/test_cuda_kernels.cu
       ./test_cuda_kernels        # one line per check group, then "N passed, N failed"
   The kernel groups cover both matmul engines and both attention engines;
   the stage groups use the compiled-in ones (-DPP__MM_ENGINE=0 and
   -DPP__ATT_ENGINE=1 switch them).

   Each tensor is checked as |gpu - ref| <= atol + rtol |ref| for every
   element, atol = A x max|ref| of that tensor (a tensor's own scale: outputs
   that cancel to near zero are judged against the tensor's size, not their
   own). The reference gets exactly the GPU's inputs (bf16-rounded
   activations and weights), so a kernel test measures the kernel alone:
     bf16 outputs of one kernel:  A = 5e-3, rtol = 2e-2 (one bf16 rounding
       is 2^-9 = 0.2% relative; fp32 sums in another order add far less;
       the margin is for tanhf/expf and products of two rounded values)
     fp32 outputs (weight gradients, statistics, losses): A = 1e-3,
       rtol = 1e-3 (only fp32 summation order differs from the reference)
     whole stages: A = 3e-2, rtol = 5e-2: every intermediate is stored in
       bf16 (gpt_ref.h keeps float), and the roundings of up to three
       blocks, attention and the softmax compound.
   Gradient checks compare increments (grad after - grad before), because
   W accumulates into a gradient that starts non-zero here. Each group line
   reports "worst" = the largest |gpu - ref| / (atol + rtol |ref|) seen:
   1.0 is the limit, so it says how much margin there is.
   Slots and workspaces are filled with NaN (0xFF bytes) first: a kernel that
   reads something nobody wrote shows up as a NaN. */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "../ref/gpt_ref.h"
#include "group.h"
#include "../pp_cuda_gpt.cuh"

typedef std::vector<float> vecf;

#define CK(call)                                                                                       \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            printf("[FAIL] %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));      \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

static unsigned long long g_seed = 12345;
static float uni(float lo, float hi) { return lo + (hi - lo) * (float)gpt_uniform(&g_seed); }
static float bfr(float x) { return __bfloat162float(__float2bfloat16(x)); }
static vecf rnd(size_t n, float lo, float hi) {
    vecf v(n);
    for (size_t i = 0; i < n; i++) v[i] = bfr(uni(lo, hi));
    return v;
}

/* device buffers (freed at exit; the test allocates little) */
static pp__bf16 *up_bf(const vecf &h) {
    std::vector<pp__bf16> b(h.size() ? h.size() : 1);
    for (size_t i = 0; i < h.size(); i++) b[i] = __float2bfloat16(h[i]);
    pp__bf16 *d;
    CK(cudaMalloc(&d, b.size() * sizeof(pp__bf16)));
    CK(cudaMemcpy(d, b.data(), b.size() * sizeof(pp__bf16), cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize()); /* kernels may run on a non-blocking stream next */
    return d;
}
static float *up_f(const vecf &h) {
    float *d;
    CK(cudaMalloc(&d, (h.size() ? h.size() : 1) * sizeof(float)));
    if (h.size()) CK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    return d;
}
static int *up_i(const std::vector<int> &h) {
    int *d;
    CK(cudaMalloc(&d, h.size() * sizeof(int)));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    return d;
}
static void *nan_buf(size_t bytes) {
    void *d;
    CK(cudaMalloc(&d, bytes));
    CK(cudaMemset(d, 0xFF, bytes));
    CK(cudaDeviceSynchronize());
    return d;
}
static vecf down_bf(const void *d, size_t n) {
    std::vector<pp__bf16> b(n);
    vecf h(n);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(b.data(), d, n * sizeof(pp__bf16), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) h[i] = __bfloat162float(b[i]);
    return h;
}
static vecf down_f(const float *d, size_t n) {
    vecf h(n);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
}

/* tolerances (see the top of the file) */
#define BF_A 5e-3
#define BF_R 2e-2
#define F32_A 1e-3
#define F32_R 1e-3
#define STAGE_A 3e-2
#define STAGE_R 5e-2

static double g_worst; /* worst error / tolerance in the current group */

/* one check: every element of gpu within atol + rtol |ref|, atol = A max|ref| */
static void cmp(group *g, const char *what, const float *gpu, const float *ref, size_t n, double A, double R) {
    double mx = 0, worst = 0;
    size_t wi = 0, bad = 0;
    for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs((double)ref[i]));
    double atol = A * (mx > 0 ? mx : 1e-30);
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)gpu[i] - ref[i]), tol = atol + R * fabs((double)ref[i]);
        double q = err / tol;
        if (!(q <= 1.0)) bad++; /* NaN counts as bad */
        if (!(q <= worst)) { worst = q; wi = i; }
    }
    if (worst > g_worst || worst != worst) g_worst = worst;
    check(g, bad == 0, "%s: %zu of %zu elements off, worst at %zu: gpu %.6g ref %.6g (max|ref| %.3g)", what, bad, n,
          wi, n ? gpu[wi] : 0.0, n ? ref[wi] : 0.0, mx);
}
static void cmpv(group *g, const char *what, const vecf &gpu, const vecf &ref, double A, double R) {
    if (!check(g, gpu.size() == ref.size(), "%s: sizes %zu vs %zu", what, gpu.size(), ref.size())) return;
    cmp(g, what, gpu.data(), ref.data(), ref.size(), A, R);
}
static vecf minus(const vecf &a, const vecf &b) {
    vecf d(a.size());
    for (size_t i = 0; i < a.size(); i++) d[i] = (float)((double)a[i] - b[i]);
    return d;
}

static void group_start(group *g, const char *name) {
    group_begin(g, name);
    g_worst = 0;
}
static void group_done(group *g, const char *what) { group_end(g, "%s; worst %.3f of tolerance", what, g_worst); }

/* ---- matmul ---- */

/* engine 1: mma.sync + ldmatrix (the default), 0: WMMA */
static void test_matmul(int engine) {
    /* N, IC, OC: tile multiples and not, K not a multiple of 8 (scalar
       loads), many K tiles, split-K (N >= 1024 rows with few output tiles) */
    static const int shapes[][3] = {{51, 48, 144}, {51, 37, 67}, {300, 256, 200}, {257, 129, 131},
                                    {2048, 64, 64}, {130, 40, 24}, {4096, 96, 136}, {1, 8, 8}};
    group gf, gb, gw;
    double wf = 0, wb = 0, ww = 0;
    char name[64], gname[3][96];
    const char *en = engine ? "mma.sync" : "WMMA";
    snprintf(gname[0], sizeof gname[0], "matmul forward, %s (inp w^T + bias + residual)", en);
    snprintf(gname[1], sizeof gname[1], "matmul B, %s (dinp = dout w)", en);
    snprintf(gname[2], sizeof gname[2], "matmul W, %s (dw += dout^T inp, dbias += colsum dout)", en);
    group_start(&gf, gname[0]);
    group_start(&gb, gname[1]);
    group_start(&gw, gname[2]);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int N = shapes[s][0], IC = shapes[s][1], OC = shapes[s][2];
        vecf inp = rnd((size_t)N * IC, -1, 1), w = rnd((size_t)OC * IC, -0.5f, 0.5f), bias = rnd(OC, -1, 1);
        vecf resid = rnd((size_t)N * OC, -1, 1), dout = rnd((size_t)N * OC, -1, 1);
        vecf dw0 = rnd((size_t)OC * IC, -1, 1), db0 = rnd(OC, -1, 1);
        pp__bf16 *d_inp = up_bf(inp), *d_w = up_bf(w), *d_bias = up_bf(bias), *d_res = up_bf(resid),
                 *d_dout = up_bf(dout);
        pp__bf16 *d_out = (pp__bf16 *)nan_buf((size_t)N * OC * 2), *d_dinp = (pp__bf16 *)nan_buf((size_t)N * IC * 2);
        float *d_dw = up_f(dw0), *d_db = up_f(db0);
        void *ws = nan_buf(pp__matmul_w_ws_floats(N, IC, OC) * sizeof(float) + 256);
        snprintf(name, sizeof name, "N=%d IC=%d OC=%d", N, IC, OC);

        g_worst = 0;
        CK(pp__gpt_matmul_forward_ex(engine, d_out, d_inp, d_w, d_bias, d_res, N, IC, OC, 0));
        vecf ref((size_t)N * OC);
        gpt_matmul_forward(ref.data(), inp.data(), w.data(), bias.data(), N, IC, OC);
        for (size_t i = 0; i < ref.size(); i++) ref[i] += resid[i];
        cmpv(&gf, name, down_bf(d_out, ref.size()), ref, BF_A, BF_R);
        /* and without bias and residual */
        CK(pp__gpt_matmul_forward_ex(engine, d_out, d_inp, d_w, NULL, NULL, N, IC, OC, 0));
        gpt_matmul_forward(ref.data(), inp.data(), w.data(), NULL, N, IC, OC);
        cmpv(&gf, name, down_bf(d_out, ref.size()), ref, BF_A, BF_R);
        wf = fmax(wf, g_worst);

        g_worst = 0;
        CK(pp__gpt_matmul_backward_input_ex(engine, d_dinp, d_dout, d_w, N, IC, OC, 0));
        vecf rdi((size_t)N * IC, 0.0f);
        gpt_matmul_backward_input(rdi.data(), dout.data(), w.data(), N, IC, OC);
        cmpv(&gb, name, down_bf(d_dinp, rdi.size()), rdi, BF_A, BF_R);
        wb = fmax(wb, g_worst);

        g_worst = 0;
        CK(pp__gpt_matmul_backward_weight_ex(engine, d_dw, d_db, d_dout, d_inp, N, IC, OC, ws, 0));
        vecf rdw = dw0, rdb = db0;
        gpt_matmul_backward_weight(rdw.data(), rdb.data(), dout.data(), inp.data(), N, IC, OC);
        vecf gdw = down_f(d_dw, rdw.size()), gdb = down_f(d_db, rdb.size());
        cmpv(&gw, name, minus(gdw, dw0), minus(rdw, dw0), F32_A, F32_R);
        cmpv(&gw, name, minus(gdb, db0), minus(rdb, db0), F32_A, F32_R);
        /* deterministic: the same accumulation again gives the same bits */
        CK(cudaMemcpy(d_dw, dw0.data(), dw0.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_db, db0.data(), db0.size() * 4, cudaMemcpyHostToDevice));
        CK(pp__gpt_matmul_backward_weight_ex(engine, d_dw, d_db, d_dout, d_inp, N, IC, OC, ws, 0));
        check(&gw, memcmp(down_f(d_dw, rdw.size()).data(), gdw.data(), gdw.size() * 4) == 0 &&
                       memcmp(down_f(d_db, rdb.size()).data(), gdb.data(), gdb.size() * 4) == 0,
              "%s: W twice from the same start differs (not deterministic)", name);
        ww = fmax(ww, g_worst);
        cudaFree(d_inp); cudaFree(d_w); cudaFree(d_bias); cudaFree(d_res); cudaFree(d_dout); cudaFree(d_out);
        cudaFree(d_dinp); cudaFree(d_dw); cudaFree(d_db); cudaFree(ws);
    }
    g_worst = wf; group_done(&gf, "8 shapes incl. N,K,OC not multiples of 128/32/8, bf16 out");
    g_worst = wb; group_done(&gb, "8 shapes, bf16 out");
    g_worst = ww; group_done(&gw, "8 shapes incl. split-K, fp32 increments, bitwise repeatable");
}

/* ---- layernorm ---- */

static void test_layernorm(void) {
    static const int shapes[][2] = {{51, 48}, {257, 200}, {64, 768}, {3, 1}};
    group gf, gb, gw;
    double wf = 0, wb = 0, ww = 0;
    char name[64];
    group_start(&gf, "layernorm forward (out, mean, rstd)");
    group_start(&gb, "layernorm B (dinp = dres + ...)");
    group_start(&gw, "layernorm W (dw, db)");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int N = shapes[s][0], C = shapes[s][1];
        vecf x = rnd((size_t)N * C, -1.5f, 2.5f), w = rnd(C, 0.8f, 1.2f), b = rnd(C, -0.2f, 0.2f);
        vecf dout = rnd((size_t)N * C, -1, 1), dres = rnd((size_t)N * C, -1, 1);
        vecf dw0 = rnd(C, -1, 1), db0 = rnd(C, -1, 1);
        vecf out((size_t)N * C), mean(N), rstd(N);
        snprintf(name, sizeof name, "N=%d C=%d", N, C);
        gpt_layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
        pp__bf16 *d_x = up_bf(x), *d_w = up_bf(w), *d_b = up_bf(b), *d_dout = up_bf(dout), *d_dres = up_bf(dres);
        pp__bf16 *d_out = (pp__bf16 *)nan_buf((size_t)N * C * 2);
        float *d_mean = (float *)nan_buf(N * 4), *d_rstd = (float *)nan_buf(N * 4), *d_dw = up_f(dw0),
              *d_db = up_f(db0);
        void *ws = nan_buf(2 * (size_t)pp__gpt_row_chunks(N) * C * 4);

        g_worst = 0;
        CK(pp__gpt_layernorm_forward(d_out, d_mean, d_rstd, d_x, d_w, d_b, N, C, 0));
        cmpv(&gf, name, down_bf(d_out, out.size()), out, BF_A, BF_R);
        cmpv(&gf, name, down_f(d_mean, N), mean, F32_A, F32_R);
        cmpv(&gf, name, down_f(d_rstd, N), rstd, F32_A, F32_R);
        wf = fmax(wf, g_worst);

        /* B and W get the reference's statistics, so they are judged alone */
        float *d_rm = up_f(mean), *d_rr = up_f(rstd);
        g_worst = 0;
        vecf rdi = dres;
        gpt_layernorm_backward_input(rdi.data(), dout.data(), x.data(), mean.data(), rstd.data(), w.data(), N, C);
        CK(pp__gpt_layernorm_backward_input(d_out, d_dres, d_dout, d_x, d_rm, d_rr, d_w, N, C, 0));
        cmpv(&gb, name, down_bf(d_out, rdi.size()), rdi, BF_A, BF_R);
        vecf rdi0((size_t)N * C, 0.0f);
        gpt_layernorm_backward_input(rdi0.data(), dout.data(), x.data(), mean.data(), rstd.data(), w.data(), N, C);
        CK(pp__gpt_layernorm_backward_input(d_out, NULL, d_dout, d_x, d_rm, d_rr, d_w, N, C, 0));
        cmpv(&gb, name, down_bf(d_out, rdi0.size()), rdi0, BF_A, BF_R);
        wb = fmax(wb, g_worst);

        g_worst = 0;
        vecf rdw = dw0, rdb = db0;
        gpt_layernorm_backward_weight(rdw.data(), rdb.data(), dout.data(), x.data(), mean.data(), rstd.data(), N, C);
        CK(pp__gpt_layernorm_backward_weight(d_dw, d_db, d_dout, d_x, d_rm, d_rr, N, C, ws, 0));
        cmpv(&gw, name, minus(down_f(d_dw, C), dw0), minus(rdw, dw0), F32_A, F32_R);
        cmpv(&gw, name, minus(down_f(d_db, C), db0), minus(rdb, db0), F32_A, F32_R);
        ww = fmax(ww, g_worst);
        cudaFree(d_x); cudaFree(d_w); cudaFree(d_b); cudaFree(d_dout); cudaFree(d_dres); cudaFree(d_out);
        cudaFree(d_mean); cudaFree(d_rstd); cudaFree(d_dw); cudaFree(d_db); cudaFree(ws); cudaFree(d_rm);
        cudaFree(d_rr);
    }
    g_worst = wf; group_done(&gf, "4 shapes, C = 1 .. 768");
    g_worst = wb; group_done(&gb, "4 shapes, with and without the residual gradient");
    g_worst = ww; group_done(&gw, "4 shapes, fp32 increments");
}

/* ---- attention ---- */

/* engine 0: CUDA cores, one warp per row (the default); 1: tensor cores (PP__ATT_ENGINE=1) */
static void test_attention(int engine) {
    /* B, T, C, NH: head sizes 16, 64, 96 (not a multiple of 32), 8, 12 (not a
       multiple of 8: scalar loads); T odd, > 32, 1, and 200 / 264 (T x T
       spans several 128-tiles: the tensor-core engine's causal tile skipping) */
    static const int shapes[][4] = {{3, 17, 48, 3}, {2, 64, 128, 2}, {1, 40, 96, 1}, {2, 33, 64, 8},
                                    {2, 1, 16, 2},  {2, 20, 36, 3},  {1, 200, 64, 1}, {2, 264, 128, 2}};
    group gf, gb;
    double wf = 0, wb = 0;
    char name[64], gname[2][96];
    const char *en = engine ? "tensor cores" : "CUDA cores";
    snprintf(gname[0], sizeof gname[0], "attention forward, %s (out, softmax kept)", en);
    snprintf(gname[1], sizeof gname[1], "attention B, %s (dqkv)", en);
    group_start(&gf, gname[0]);
    group_start(&gb, gname[1]);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int B = shapes[s][0], T = shapes[s][1], C = shapes[s][2], NH = shapes[s][3];
        size_t N = (size_t)B * T, A = (size_t)B * NH * T * T;
        vecf qkv = rnd(N * 3 * C, -2, 2), dout = rnd(N * C, -1, 1);
        vecf out(N * C), att(A);
        snprintf(name, sizeof name, "B=%d T=%d C=%d NH=%d", B, T, C, NH);
        gpt_attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
        pp__bf16 *d_qkv = up_bf(qkv), *d_dout = up_bf(dout);
        pp__bf16 *d_out = (pp__bf16 *)nan_buf(N * C * 2), *d_att = (pp__bf16 *)nan_buf(A * 2);
        pp__bf16 *d_dqkv = (pp__bf16 *)nan_buf(N * 3 * C * 2);
        void *ws = nan_buf(pp__gpt_attention_ws_bytes(engine, B, T, NH));

        g_worst = 0;
        CK(pp__gpt_attention_forward_ex(engine, d_out, d_att, d_qkv, B, T, C, NH, ws, 0));
        cmpv(&gf, name, down_bf(d_out, out.size()), out, BF_A, BF_R);
        cmpv(&gf, name, down_bf(d_att, att.size()), att, BF_A, BF_R);
        wf = fmax(wf, g_worst);

        /* B from the reference's softmax rounded to bf16 (what a slot holds) */
        g_worst = 0;
        for (size_t i = 0; i < A; i++) att[i] = bfr(att[i]);
        pp__bf16 *d_ratt = up_bf(att);
        vecf rdq(N * 3 * C, 0.0f);
        gpt_attention_backward_input(rdq.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH);
        CK(pp__gpt_attention_backward_ex(engine, d_dqkv, d_dout, d_qkv, d_ratt, B, T, C, NH, ws, 0));
        cmpv(&gb, name, down_bf(d_dqkv, rdq.size()), rdq, BF_A, BF_R);
        wb = fmax(wb, g_worst);
        cudaFree(d_qkv); cudaFree(d_dout); cudaFree(d_out); cudaFree(d_att); cudaFree(d_dqkv); cudaFree(ws);
        cudaFree(d_ratt);
    }
    g_worst = wf; group_done(&gf, "8 shapes, head size 8 .. 96, T 1 .. 264");
    g_worst = wb; group_done(&gb, "8 shapes");
}

/* ---- GELU, embedding, cross-entropy, AdamW, conversion ---- */

static void test_elementwise(void) {
    group g;
    size_t n = 3001;
    vecf x = rnd(n, -5, 5), d = rnd(n, -1, 1), y(n), dx(n, 0.0f);
    pp__bf16 *d_x = up_bf(x), *d_d = up_bf(d), *d_y = (pp__bf16 *)nan_buf(n * 2);
    group_start(&g, "gelu forward and B");
    gpt_gelu_forward(y.data(), x.data(), n);
    gpt_gelu_backward_input(dx.data(), x.data(), d.data(), n);
    CK(pp__gpt_gelu_forward(d_y, d_x, n, 0));
    cmpv(&g, "forward", down_bf(d_y, n), y, BF_A, BF_R);
    CK(pp__gpt_gelu_backward_input(d_y, d_x, d_d, n, 0));
    cmpv(&g, "B", down_bf(d_y, n), dx, BF_A, BF_R);
    group_done(&g, "3001 values in [-5, 5]");
    cudaFree(d_x); cudaFree(d_d); cudaFree(d_y);

    group_start(&g, "encoder forward and W (dwte, dwpe; repeated tokens)");
    static const int shapes[][4] = {{3, 17, 48, 67}, {4, 33, 40, 1000}, {2, 5, 8, 3}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int B = shapes[s][0], T = shapes[s][1], C = shapes[s][2], V = shapes[s][3], N = B * T;
        std::vector<int> tok(N);
        for (int i = 0; i < N; i++) tok[i] = i % 5 == 0 ? 1 : (int)(uni(0, 1) * V) % V; /* token 1 repeats */
        vecf wte = rnd((size_t)V * C, -1, 1), wpe = rnd((size_t)T * C, -1, 1), dout = rnd((size_t)N * C, -1, 1);
        vecf dwte0 = rnd((size_t)V * C, -1, 1), dwpe0 = rnd((size_t)T * C, -1, 1), out((size_t)N * C);
        int *d_tok = up_i(tok);
        pp__bf16 *d_wte = up_bf(wte), *d_wpe = up_bf(wpe), *d_dout = up_bf(dout),
                 *d_out = (pp__bf16 *)nan_buf((size_t)N * C * 2);
        float *d_dwte = up_f(dwte0), *d_dwpe = up_f(dwpe0);
        char name[64];
        snprintf(name, sizeof name, "B=%d T=%d C=%d V=%d", B, T, C, V);
        gpt_encoder_forward(out.data(), tok.data(), wte.data(), wpe.data(), B, T, C);
        CK(pp__gpt_encoder_forward(d_out, d_tok, d_wte, d_wpe, B, T, C, V, 0));
        cmpv(&g, name, down_bf(d_out, out.size()), out, BF_A, BF_R);
        vecf rdwte = dwte0, rdwpe = dwpe0;
        gpt_encoder_backward_weight(rdwte.data(), rdwpe.data(), dout.data(), tok.data(), B, T, C);
        CK(pp__gpt_encoder_backward_weight(d_dwte, d_dwpe, d_dout, d_tok, B, T, C, V, 0));
        cmpv(&g, name, minus(down_f(d_dwte, rdwte.size()), dwte0), minus(rdwte, dwte0), F32_A, F32_R);
        cmpv(&g, name, minus(down_f(d_dwpe, rdwpe.size()), dwpe0), minus(rdwpe, dwpe0), F32_A, F32_R);
        cudaFree(d_tok); cudaFree(d_wte); cudaFree(d_wpe); cudaFree(d_dout); cudaFree(d_out); cudaFree(d_dwte);
        cudaFree(d_dwpe);
    }
    group_done(&g, "3 shapes, V up to 1000");

    group_start(&g, "cross-entropy forward (losses, lse, mean loss) and B (in place)");
    static const int ce[][2] = {{51, 67}, {64, 1000}, {8, 50257}, {5, 1}};
    for (size_t s = 0; s < sizeof ce / sizeof ce[0]; s++) {
        int N = ce[s][0], V = ce[s][1];
        std::vector<int> tgt(N);
        for (int i = 0; i < N; i++) tgt[i] = (int)(uni(0, 1) * V) % V;
        vecf logits = rnd((size_t)N * V, -3, 3), probs((size_t)N * V), losses(N), lse(N), dl((size_t)N * V, 0.0f);
        char name[64];
        snprintf(name, sizeof name, "N=%d V=%d", N, V);
        gpt_crossentropy_forward(probs.data(), losses.data(), logits.data(), tgt.data(), N, V);
        double mean = 0;
        for (int n = 0; n < N; n++) {
            double mx = -1e300, sum = 0;
            for (int i = 0; i < V; i++) mx = fmax(mx, logits[(size_t)n * V + i]);
            for (int i = 0; i < V; i++) sum += exp(logits[(size_t)n * V + i] - mx);
            lse[n] = (float)(mx + log(sum));
            mean += losses[n];
        }
        float dloss = 1.0f / N, loss0 = 1.0f;
        gpt_crossentropy_backward_input(dl.data(), probs.data(), tgt.data(), dloss, N, V);
        int *d_tgt = up_i(tgt);
        pp__bf16 *d_l = up_bf(logits);
        float *d_losses = (float *)nan_buf(N * 4), *d_lse = (float *)nan_buf(N * 4), *d_loss = up_f(vecf(1, loss0));
        CK(pp__gpt_crossentropy_forward(d_losses, d_lse, d_l, d_tgt, N, V, 0));
        pp__loss_mean<<<1, 1024>>>(d_loss, d_losses, N);
        CK(cudaGetLastError());
        cmpv(&g, name, down_f(d_losses, N), losses, F32_A, F32_R);
        cmpv(&g, name, down_f(d_lse, N), lse, F32_A, F32_R);
        vecf gl = down_f(d_loss, 1), rl(1, (float)(mean / N));
        gl[0] -= loss0;
        cmpv(&g, name, gl, rl, F32_A, F32_R);
        CK(pp__gpt_crossentropy_backward_input(d_l, d_l, d_lse, d_tgt, dloss, N, V, 0));
        cmpv(&g, name, down_bf(d_l, dl.size()), dl, BF_A, BF_R);
        cudaFree(d_tgt); cudaFree(d_l); cudaFree(d_losses); cudaFree(d_lse); cudaFree(d_loss);
    }
    group_done(&g, "4 shapes, V = 1 .. 50257");

    group_start(&g, "AdamW (3 steps, weight decay) and fp32 -> bf16");
    {
        size_t m = 4099;
        vecf p = rnd(m, -1, 1), mm(m, 0.0f), vv(m, 0.0f);
        float *d_p = up_f(p), *d_m = up_f(mm), *d_v = up_f(vv), *d_g = NULL;
        const double lr = 1e-2, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
        for (int t = 1; t <= 3; t++) {
            vecf gr = rnd(m, -1, 1);
            if (d_g) cudaFree(d_g);
            d_g = up_f(gr);
            for (size_t i = 0; i < m; i++) { /* llm.c's AdamW, in double */
                double mi = b1 * mm[i] + (1 - b1) * gr[i], vi = b2 * vv[i] + (1 - b2) * gr[i] * gr[i];
                double mh = mi / (1 - pow(b1, t)), vh = vi / (1 - pow(b2, t));
                mm[i] = (float)mi;
                vv[i] = (float)vi;
                p[i] = (float)(p[i] - lr * (mh / (sqrt(vh) + eps) + wd * p[i]));
            }
            CK(pp__gpt_adamw(d_p, d_g, d_m, d_v, m, (float)lr, (float)b1, (float)b2, (float)eps, (float)wd, t, 0));
        }
        cmpv(&g, "params", down_f(d_p, m), p, 1e-5, 1e-5);
        cmpv(&g, "m", down_f(d_m, m), mm, 1e-5, 1e-5);
        cmpv(&g, "v", down_f(d_v, m), vv, 1e-5, 1e-5);
        pp__bf16 *d_b = (pp__bf16 *)nan_buf(m * 2);
        vecf hp = down_f(d_p, m), rb(m);
        CK(pp__gpt_to_bf16(d_b, d_p, m, 0));
        for (size_t i = 0; i < m; i++) rb[i] = bfr(hp[i]);
        vecf gb = down_bf(d_b, m);
        check(&g, memcmp(gb.data(), rb.data(), m * 4) == 0, "to_bf16 differs from the host's round-to-nearest");
        cudaFree(d_p); cudaFree(d_m); cudaFree(d_v); cudaFree(d_g); cudaFree(d_b);
    }
    group_done(&g, "4099 values; atol 1e-5 x max, rtol 1e-5; to_bf16 bit-exact");
}

/* ---- whole stages ---- */

/* the part of tensor t that stage g owns: [*o, *o + *n) in the flat array */
static void owned(const gpt_config *c, const gpt_stage *g, int t, size_t *o, size_t *n) {
    size_t sizes[GPT_NUM_TENSORS], off = 0;
    gpt_param_sizes(c, sizes);
    for (int i = 0; i < t; i++) off += sizes[i];
    *o = off;
    *n = 0;
    if (t == GPT_WTE || t == GPT_WPE) {
        if (g->has_embed) *n = sizes[t];
    } else if (t >= GPT_LNFW) {
        if (g->has_head) *n = sizes[t];
    } else {
        size_t per = sizes[t] / (size_t)c->layers;
        *o = off + per * (size_t)g->first_layer;
        *n = per * (size_t)g->num_layers;
    }
}

static void test_stage(const gpt_config *cfg, int s, int S, const char *label) {
    pp__gpt_dims d = {cfg->vocab, cfg->seq, cfg->channels, cfg->heads, cfg->layers, cfg->batch};
    gpt_stage g = gpt_stage_of(cfg, s, S);
    pp__gpt_stage pg = pp__gpt_stage_of(&d, s, S);
    size_t N = (size_t)cfg->batch * cfg->seq, C = (size_t)cfg->channels, V = (size_t)cfg->vocab, P;
    size_t sizes[GPT_NUM_TENSORS];
    char name[160];
    group gr;
    snprintf(name, sizeof name, "stage %s (%d of %d: layers %d..%d%s%s) V=%d T=%d C=%d NH=%d B=%d", label, s, S,
             g.first_layer, g.first_layer + g.num_layers - 1, g.has_embed ? ", embed" : "", g.has_head ? ", head" : "",
             cfg->vocab, cfg->seq, cfg->channels, cfg->heads, cfg->batch);
    group_start(&gr, name);

    /* layout facts the executor relies on */
    P = gpt_param_sizes(cfg, sizes);
    check(&gr, pp__gpt_param_count(&d) == P, "param count %zu, gpt_ref.h %zu", pp__gpt_param_count(&d), P);
    check(&gr, pg.first_layer == g.first_layer && pg.num_layers == g.num_layers && pg.has_embed == g.has_embed &&
                   pg.has_head == g.has_head, "pp__gpt_stage_of differs from gpt_stage_of");
    size_t sb = pp__gpt_slot_bytes(&d, &pg), wb = pp__gpt_workspace_bytes(&d, &pg), io = pp__gpt_io_bytes(&d);
    check(&gr, sb % 256 == 0 && wb % 256 == 0 && io == N * C * 2, "slot %zu, workspace %zu, io %zu bytes", sb, wb, io);

    /* weights: gpt_init, then every tensor perturbed (layernorm weights off 1,
       biases off 0), rounded to bf16: the reference computes with the GPU's weights */
    vecf master(P), grad0 = rnd(P, -1, 1);
    gpt_init(cfg, master.data(), 7);
    for (size_t i = 0; i < P; i++) master[i] = bfr(master[i] + uni(-0.02f, 0.02f));
    std::vector<int> tok(N), tgt(N);
    for (size_t i = 0; i < N; i++) {
        tok[i] = (int)(uni(0, 1) * V) % (int)V;
        tgt[i] = (int)(uni(0, 1) * V) % (int)V;
    }
    vecf input = rnd(N * C, -1, 1), dout = rnd(N * C, -0.05f, 0.05f);
    float dloss = 1.0f / (float)N;

    /* reference */
    gpt_params w = gpt_params_at(cfg, master.data());
    vecf rgrad = grad0, act(gpt_act_size(cfg, &g));
    gpt_params dw = gpt_params_at(cfg, rgrad.data());
    double rloss = gpt_stage_forward(cfg, &w, &g, act.data(), input.data(), tok.data(), tgt.data());
    vecf rout;
    if (!g.has_head) {
        float *o = gpt_act_output(cfg, &g, act.data());
        rout.assign(o, o + N * C);
    }
    vecf rlogits;
    if (g.has_head) {
        gpt_head_act h = gpt__head_at(cfg, act.data() + 2 * N * C + (size_t)g.num_layers * gpt__block_size(cfg));
        rlogits.assign(h.logits, h.logits + N * V);
    }
    gpt_stage_backward_input(cfg, &w, &g, act.data(), dout.data(), tgt.data(), dloss);
    gpt_stage_backward_weight(cfg, &dw, &g, act.data(), tok.data());
    vecf rdin(gpt_act_dinput(cfg, act.data()), gpt_act_dinput(cfg, act.data()) + N * C);

    /* GPU: slot and workspace start as NaN */
    vecf wv(master.begin(), master.end());
    pp__bf16 *d_w = up_bf(wv);
    float *d_grad = up_f(grad0), *d_loss = up_f(vecf(1, 1.0f));
    int *d_tok = up_i(tok), *d_tgt = up_i(tgt);
    void *slot = nan_buf(sb), *ws = nan_buf(wb);
    cudaStream_t st; /* a non-blocking stream, as the executor uses */
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    char *in = (char *)pp__gpt_slot_input(&d, &pg, slot), *din = (char *)pp__gpt_slot_dinput(&d, &pg, slot);
    char *out = (char *)pp__gpt_slot_output(&d, &pg, slot), *dout_r = (char *)pp__gpt_slot_doutput(&d, &pg, slot);
    char *lo = (char *)slot, *hi = lo + sb;
    check(&gr, in >= lo && in + io <= hi && din >= lo && din + io <= hi && in != din, "input/dinput regions");
    check(&gr, g.has_head ? out == NULL && dout_r == NULL
                          : out >= lo && out + io <= hi && dout_r >= lo && dout_r + io <= hi && out != dout_r,
          "output/doutput regions");
    if (!g.has_embed) {
        pp__bf16 *t = up_bf(input);
        CK(cudaMemcpyAsync(in, t, io, cudaMemcpyDeviceToDevice, st));
        CK(cudaStreamSynchronize(st));
        cudaFree(t);
    }
    CK(pp__gpt_forward(&d, &pg, d_w, slot, d_tok, d_tgt, d_loss, ws, st));
    CK(cudaDeviceSynchronize());
    if (!g.has_head) {
        cmpv(&gr, "F output", down_bf(out, N * C), rout, STAGE_A, STAGE_R);
    } else {
        pp__gpt_head h = pp__gpt_head_at(&d, &pg, slot);
        vecf gl = down_f(d_loss, 1), rl(1, (float)rloss);
        gl[0] -= 1.0f;
        cmpv(&gr, "F logits", down_bf(h.logits, N * V), rlogits, STAGE_A, STAGE_R);
        cmpv(&gr, "F loss", gl, rl, STAGE_A, STAGE_R);
    }
    /* every block's activations, for a precise report when something is off */
    for (int l = 0; l < g.num_layers; l++) {
        gpt_block_act ra = gpt__block_at(cfg, act.data() + 2 * N * C + (size_t)l * gpt__block_size(cfg));
        pp__gpt_block ga = pp__gpt_block_at(&d, slot, l);
        cmpv(&gr, "F qkv", down_bf(ga.qkv, 3 * N * C), vecf(ra.qkv, ra.qkv + 3 * N * C), STAGE_A, STAGE_R);
        cmpv(&gr, "F atty", down_bf(ga.atty, N * C), vecf(ra.atty, ra.atty + N * C), STAGE_A, STAGE_R);
        cmpv(&gr, "F fch_gelu", down_bf(ga.fch_gelu, 4 * N * C), vecf(ra.fch_gelu, ra.fch_gelu + 4 * N * C), STAGE_A,
             STAGE_R);
        cmpv(&gr, "F res3", down_bf(ga.res3, N * C), vecf(ra.res3, ra.res3 + N * C), STAGE_A, STAGE_R);
    }

    if (!g.has_head) {
        pp__bf16 *t = up_bf(dout);
        CK(cudaMemcpyAsync(dout_r, t, io, cudaMemcpyDeviceToDevice, st)); /* what a RECV of the gradient does */
        CK(cudaStreamSynchronize(st));
        cudaFree(t);
    }
    CK(pp__gpt_backward_input(&d, &pg, d_w, slot, d_tgt, dloss, ws, st));
    CK(cudaDeviceSynchronize());
    for (int l = 0; l < g.num_layers; l++) {
        gpt_block_act ra = gpt__block_at(cfg, act.data() + 2 * N * C + (size_t)l * gpt__block_size(cfg));
        pp__gpt_block ga = pp__gpt_block_at(&d, slot, l);
        cmpv(&gr, "B dres3", down_bf(ga.dres3, N * C), vecf(ra.dres3, ra.dres3 + N * C), STAGE_A, STAGE_R);
        cmpv(&gr, "B dfch", down_bf(ga.dfch, 4 * N * C), vecf(ra.dfch, ra.dfch + 4 * N * C), STAGE_A, STAGE_R);
        cmpv(&gr, "B dqkv", down_bf(ga.dqkv, 3 * N * C), vecf(ra.dqkv, ra.dqkv + 3 * N * C), STAGE_A, STAGE_R);
    }
    cmpv(&gr, "B dinput", down_bf(din, N * C), rdin, STAGE_A, STAGE_R);

    CK(pp__gpt_backward_weight(&d, &pg, d_grad, slot, d_tok, ws, st));
    vecf ggrad = down_f(d_grad, P);
    size_t off = 0;
    int untouched = 1;
    for (int t = 0; t < GPT_NUM_TENSORS; t++) {
        size_t o, n;
        char what[64];
        owned(cfg, &g, t, &o, &n);
        snprintf(what, sizeof what, "W %s", gpt_tensor_names[t]);
        if (n) {
            vecf a(ggrad.begin() + o, ggrad.begin() + o + n), b(rgrad.begin() + o, rgrad.begin() + o + n),
                z(grad0.begin() + o, grad0.begin() + o + n);
            cmpv(&gr, what, minus(a, z), minus(b, z), STAGE_A, STAGE_R);
        }
        /* everything outside what the stage owns stays as it was, bit for bit */
        for (size_t i = off; i < off + sizes[t]; i++)
            if ((i < o || i >= o + n) && memcmp(&ggrad[i], &grad0[i], 4) != 0) untouched = 0;
        off += sizes[t];
    }
    check(&gr, untouched, "W wrote gradients of tensors the stage does not own");
    /* pp__gpt_stage_param_ranges = gpt_stage_param_ranges (empty ranges aside) */
    {
        std::vector<size_t> a, b;
        struct add {
            static void to(size_t o, size_t n, void *u) {
                if (n) {
                    ((std::vector<size_t> *)u)->push_back(o);
                    ((std::vector<size_t> *)u)->push_back(n);
                }
            }
        };
        pp__gpt_stage_param_ranges(&d, &pg, add::to, &a);
        gpt_stage_param_ranges(cfg, &g, add::to, &b);
        check(&gr, a == b, "pp__gpt_stage_param_ranges differs from gpt_stage_param_ranges");
    }
    /* W again from the same start: bit-identical (the executor's pipelined
       vs unpipelined comparison relies on it) */
    CK(cudaMemcpy(d_grad, grad0.data(), P * 4, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    CK(pp__gpt_backward_weight(&d, &pg, d_grad, slot, d_tok, ws, st));
    check(&gr, memcmp(down_f(d_grad, P).data(), ggrad.data(), P * 4) == 0, "W is not bitwise repeatable");
    group_done(&gr, "F, every block, B, W per tensor");
    cudaFree(d_w); cudaFree(d_grad); cudaFree(d_loss); cudaFree(d_tok); cudaFree(d_tgt); cudaFree(slot);
    cudaFree(ws);
    cudaStreamDestroy(st);
}

int main(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("[skip] test_cuda_kernels: no CUDA device\n");
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("test_cuda_kernels on %s (sm_%d%d, %d SMs); stages use matmul engine %d (%s), attention engine %d (%s)\n",
           prop.name, prop.major, prop.minor, prop.multiProcessorCount, PP__MM_ENGINE,
           PP__MM_ENGINE ? "mma.sync" : "WMMA", PP__ATT_ENGINE, PP__ATT_ENGINE ? "tensor cores" : "CUDA cores");
    test_matmul(1);
    test_matmul(0);
    test_layernorm();
    test_attention(0);
    test_attention(1);
    test_elementwise();
    /* the shapes the issue names: nothing a multiple of a tile */
    gpt_config small = {67, 17, 48, 3, 3, 3};
    test_stage(&small, 0, 3, "first");
    test_stage(&small, 1, 3, "middle");
    test_stage(&small, 2, 3, "last");
    test_stage(&small, 0, 1, "single");
    /* head size 64 and several K tiles; more stages than layers: stages with no block */
    gpt_config wide = {300, 64, 128, 2, 2, 2};
    test_stage(&wide, 0, 2, "first");
    test_stage(&wide, 1, 2, "last");
    test_stage(&wide, 2, 4, "middle, no layers");
    test_stage(&wide, 3, 4, "last, head only");
    printf("%d passed, %d failed\n", g_groups_passed, g_groups_failed);
    return g_groups_failed ? 1 : 0;
}
