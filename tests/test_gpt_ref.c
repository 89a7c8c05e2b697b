/* test_gpt_ref.c - every backward of ref/gpt_ref.h against finite differences.

   Build and run (tests/run_tests.sh does this):
       cc -std=c99 -O2 -Wall -Wextra tests/test_gpt_ref.c -o test_gpt_ref -lm && ./test_gpt_ref

   The model is compiled in double here (GPT_REAL=double) so that central
   differences (step 1e-5) are accurate to ~1e-9; a gradient passes when
   |analytic - numeric| <= 1e-6 + 1e-5 |numeric|. Each operation is checked
   through the scalar sum(r * out) with a random r: its B against the
   derivative for its input, its W against the derivative for each weight.
   Then the whole model (loss against every parameter of a tiny config) and
   the stage split: running the model as 3 stages (F of each, then B and W
   per stage, last to first) gives bitwise the gradients of 1 stage. */
#define GPT_REAL double
#include "../ref/gpt_ref.h"
#include "group.h"

#include <math.h>

static unsigned long long g_rng = 42;
static void fill(double *x, size_t n, double scale) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = scale * (2 * gpt_uniform(&g_rng) - 1);
}
static double dot(const double *a, const double *b, size_t n) {
    double s = 0;
    size_t i;
    for (i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}
static double *zeros(size_t n) { return (double *)calloc(n ? n : 1, sizeof(double)); }
static double *rnd(size_t n, double scale) {
    double *x = zeros(n);
    fill(x, n, scale);
    return x;
}

/* f(ctx) is the scalar; compares grad[i] with central differences of f in x[i] */
typedef double (*scalar_fn)(void *ctx);
static int fd_check(group *g, const char *what, scalar_fn f, void *ctx, double *x, const double *grad, size_t n,
                    double *worst) {
    size_t i;
    int ok = 1;
    for (i = 0; i < n; i++) {
        double keep = x[i], hi, lo, num, err;
        const double h = 1e-5;
        x[i] = keep + h;
        hi = f(ctx);
        x[i] = keep - h;
        lo = f(ctx);
        x[i] = keep;
        num = (hi - lo) / (2 * h);
        err = fabs(grad[i] - num);
        if (err / (1e-6 + 1e-5 * fabs(num)) > *worst) *worst = err / (1e-6 + 1e-5 * fabs(num));
        ok &= check(g, err <= 1e-6 + 1e-5 * fabs(num), "%s[%lu]: analytic %.10g, numeric %.10g", what, (unsigned long)i,
                    grad[i], num);
    }
    return ok;
}

/* ---- operations ---- */

typedef struct op_ctx {
    int N, IC, OC, B, T, C, NH, V;
    double *inp, *w, *bias, *r, *out, *aux1, *aux2;
    int *tok;
} op_ctx;

static double f_matmul(void *p) {
    op_ctx *c = (op_ctx *)p;
    gpt_matmul_forward(c->out, c->inp, c->w, c->bias, c->N, c->IC, c->OC);
    return dot(c->r, c->out, (size_t)c->N * c->OC);
}
static double f_layernorm(void *p) {
    op_ctx *c = (op_ctx *)p;
    gpt_layernorm_forward(c->out, c->aux1, c->aux2, c->inp, c->w, c->bias, c->N, c->C);
    return dot(c->r, c->out, (size_t)c->N * c->C);
}
static double f_attention(void *p) {
    op_ctx *c = (op_ctx *)p;
    gpt_attention_forward(c->out, c->aux1, c->inp, c->B, c->T, c->C, c->NH);
    return dot(c->r, c->out, (size_t)c->B * c->T * c->C);
}
static double f_gelu(void *p) {
    op_ctx *c = (op_ctx *)p;
    gpt_gelu_forward(c->out, c->inp, (size_t)c->N);
    return dot(c->r, c->out, (size_t)c->N);
}
static double f_crossentropy(void *p) {
    op_ctx *c = (op_ctx *)p;
    gpt_crossentropy_forward(c->aux1, c->out, c->inp, c->tok, c->N, c->V);
    return dot(c->r, c->out, (size_t)c->N);
}
static double f_encoder(void *p) {
    op_ctx *c = (op_ctx *)p;
    gpt_encoder_forward(c->out, c->tok, c->w, c->bias, c->B, c->T, c->C);
    return dot(c->r, c->out, (size_t)c->B * c->T * c->C);
}

static void test_ops(void) {
    group g;
    double worst = 0;
    op_ctx c;
    group_begin(&g, "gpt_ref operations: B and W against finite differences (double)");
    memset(&c, 0, sizeof c);
    { /* matmul N=3, IC=4, OC=5, with bias */
        double *dinp, *dw, *db;
        c.N = 3; c.IC = 4; c.OC = 5;
        c.inp = rnd(12, 1); c.w = rnd(20, 1); c.bias = rnd(5, 1); c.r = rnd(15, 1); c.out = zeros(15);
        dinp = zeros(12); dw = zeros(20); db = zeros(5);
        gpt_matmul_backward_input(dinp, c.r, c.w, c.N, c.IC, c.OC);
        gpt_matmul_backward_weight(dw, db, c.r, c.inp, c.N, c.IC, c.OC);
        fd_check(&g, "matmul B dinp", f_matmul, &c, c.inp, dinp, 12, &worst);
        fd_check(&g, "matmul W dw", f_matmul, &c, c.w, dw, 20, &worst);
        fd_check(&g, "matmul W dbias", f_matmul, &c, c.bias, db, 5, &worst);
        free(c.inp); free(c.w); free(c.bias); free(c.r); free(c.out); free(dinp); free(dw); free(db);
    }
    { /* layernorm N=3, C=6 */
        double *dinp, *dw, *db;
        c.N = 3; c.C = 6;
        c.inp = rnd(18, 2); c.w = rnd(6, 1); c.bias = rnd(6, 1); c.r = rnd(18, 1); c.out = zeros(18);
        c.aux1 = zeros(3); c.aux2 = zeros(3);
        dinp = zeros(18); dw = zeros(6); db = zeros(6);
        f_layernorm(&c);
        gpt_layernorm_backward_input(dinp, c.r, c.inp, c.aux1, c.aux2, c.w, c.N, c.C);
        gpt_layernorm_backward_weight(dw, db, c.r, c.inp, c.aux1, c.aux2, c.N, c.C);
        fd_check(&g, "layernorm B dinp", f_layernorm, &c, c.inp, dinp, 18, &worst);
        fd_check(&g, "layernorm W dw", f_layernorm, &c, c.w, dw, 6, &worst);
        fd_check(&g, "layernorm W dbias", f_layernorm, &c, c.bias, db, 6, &worst);
        free(c.inp); free(c.w); free(c.bias); free(c.r); free(c.out); free(c.aux1); free(c.aux2);
        free(dinp); free(dw); free(db);
    }
    { /* attention B=2, T=4, C=4, NH=2 */
        size_t nq = 2 * 4 * 12;
        double *dqkv;
        c.B = 2; c.T = 4; c.C = 4; c.NH = 2;
        c.inp = rnd(nq, 1); c.r = rnd(32, 1); c.out = zeros(32); c.aux1 = zeros(2 * 2 * 4 * 4);
        dqkv = zeros(nq);
        f_attention(&c);
        gpt_attention_backward_input(dqkv, c.r, c.inp, c.aux1, c.B, c.T, c.C, c.NH);
        fd_check(&g, "attention B dqkv", f_attention, &c, c.inp, dqkv, nq, &worst);
        free(c.inp); free(c.r); free(c.out); free(c.aux1); free(dqkv);
    }
    { /* gelu on 10 values in [-3, 3] */
        double *dinp;
        c.N = 10;
        c.inp = rnd(10, 3); c.r = rnd(10, 1); c.out = zeros(10);
        dinp = zeros(10);
        gpt_gelu_backward_input(dinp, c.inp, c.r, 10);
        fd_check(&g, "gelu B dinp", f_gelu, &c, c.inp, dinp, 10, &worst);
        free(c.inp); free(c.r); free(c.out); free(dinp);
    }
    { /* softmax cross-entropy N=3, V=5; each token's loss weighted by r, as dloss
         is one number per call: checked per row with dloss = r[n] */
        int tok[3] = {1, 4, 0}, n;
        double *dlogits;
        c.N = 3; c.V = 5; c.tok = tok;
        c.inp = rnd(15, 2); c.r = zeros(3); c.out = zeros(3); c.aux1 = zeros(15);
        c.r[0] = c.r[1] = c.r[2] = 0.37;
        dlogits = zeros(15);
        f_crossentropy(&c);
        gpt_crossentropy_backward_input(dlogits, c.aux1, tok, 0.37, c.N, c.V);
        fd_check(&g, "crossentropy B dlogits", f_crossentropy, &c, c.inp, dlogits, 15, &worst);
        for (n = 0; n < 3; n++) check(&g, c.out[n] > 0, "loss %d positive", n);
        free(c.inp); free(c.r); free(c.out); free(c.aux1); free(dlogits);
    }
    { /* encoder W: B=2, T=3, C=4, vocab 5; token 2 repeats so rows accumulate */
        int tok[6] = {2, 0, 2, 4, 2, 1};
        double *dwte, *dwpe;
        c.B = 2; c.T = 3; c.C = 4; c.tok = tok;
        c.w = rnd(20, 1); c.bias = rnd(12, 1); c.r = rnd(24, 1); c.out = zeros(24);
        dwte = zeros(20); dwpe = zeros(12);
        gpt_encoder_backward_weight(dwte, dwpe, c.r, tok, c.B, c.T, c.C);
        fd_check(&g, "encoder W dwte", f_encoder, &c, c.w, dwte, 20, &worst);
        fd_check(&g, "encoder W dwpe", f_encoder, &c, c.bias, dwpe, 12, &worst);
        free(c.w); free(c.bias); free(c.r); free(c.out); free(dwte); free(dwpe);
    }
    group_end(&g, "matmul, layernorm, attention, gelu, cross-entropy, embedding; worst error %.3g of tolerance", worst);
}

/* ---- the whole model ---- */

typedef struct model_ctx {
    gpt_config cfg;
    gpt_params w;
    double *act;
    int *tok, *tgt;
} model_ctx;

static double f_model(void *p) {
    model_ctx *m = (model_ctx *)p;
    gpt_stage all = gpt_stage_of(&m->cfg, 0, 1);
    return gpt_stage_forward(&m->cfg, &m->w, &all, m->act, NULL, m->tok, m->tgt);
}

static void add_range(size_t off, size_t count, void *user) {
    size_t *total = (size_t *)user;
    (void)off;
    *total += count;
}

static void test_model(void) {
    group g;
    double worst = 0, *params, *grads, *grads3, *acts[3];
    model_ctx m;
    gpt_stage all, st[3];
    gpt_params dw, dw3;
    size_t P, i, owned = 0;
    int s, tok[8], tgt[8], same = 1;
    group_begin(&g, "gpt_ref model: loss against every parameter, 3 stages = 1 stage bitwise");
    m.cfg.vocab = 7; m.cfg.seq = 4; m.cfg.channels = 4; m.cfg.heads = 2; m.cfg.layers = 3; m.cfg.batch = 2;
    P = gpt_param_sizes(&m.cfg, (size_t[GPT_NUM_TENSORS]){0});
    params = zeros(P); grads = zeros(P); grads3 = zeros(P);
    gpt_init(&m.cfg, params, 7);
    /* layernorm weights away from 1 and biases away from 0, so their gradients are general */
    fill(params, P, 0.5);
    m.w = gpt_params_at(&m.cfg, params);
    for (i = 0; i < 8; i++) { tok[i] = (int)(gpt__rng(&g_rng) % 7); tgt[i] = (int)(gpt__rng(&g_rng) % 7); }
    m.tok = tok; m.tgt = tgt;
    all = gpt_stage_of(&m.cfg, 0, 1);
    m.act = zeros(gpt_act_size(&m.cfg, &all));
    dw = gpt_params_at(&m.cfg, grads);
    f_model(&m);
    gpt_stage_backward_input(&m.cfg, &m.w, &all, m.act, NULL, tgt, 1.0 / 8);
    gpt_stage_backward_weight(&m.cfg, &dw, &all, m.act, tok);
    {
        int t;
        size_t sizes[GPT_NUM_TENSORS];
        gpt_param_sizes(&m.cfg, sizes);
        for (t = 0; t < GPT_NUM_TENSORS; t++) {
            char what[64];
            snprintf(what, sizeof what, "model d%s", gpt_tensor_names[t]);
            fd_check(&g, what, f_model, &m, m.w.t[t], dw.t[t], sizes[t], &worst);
        }
    }
    /* the same through 3 stages of 1 layer each */
    dw3 = gpt_params_at(&m.cfg, grads3);
    for (s = 0; s < 3; s++) {
        st[s] = gpt_stage_of(&m.cfg, s, 3);
        acts[s] = zeros(gpt_act_size(&m.cfg, &st[s]));
        gpt_stage_param_ranges(&m.cfg, &st[s], add_range, &owned);
    }
    check(&g, owned == P, "the 3 stages own %lu of %lu parameters", (unsigned long)owned, (unsigned long)P);
    for (s = 0; s < 3; s++)
        gpt_stage_forward(&m.cfg, &m.w, &st[s], acts[s], s ? gpt_act_output(&m.cfg, &st[s - 1], acts[s - 1]) : NULL,
                          tok, tgt);
    for (s = 2; s >= 0; s--) {
        gpt_stage_backward_input(&m.cfg, &m.w, &st[s], acts[s], s < 2 ? gpt_act_dinput(&m.cfg, acts[s + 1]) : NULL,
                                 tgt, 1.0 / 8);
        gpt_stage_backward_weight(&m.cfg, &dw3, &st[s], acts[s], tok);
    }
    for (i = 0; i < P; i++) same &= grads[i] == grads3[i];
    check(&g, same, "3-stage gradients differ from 1-stage gradients");
    for (s = 0; s < 3; s++) free(acts[s]);
    free(params); free(grads); free(grads3); free(m.act);
    group_end(&g, "%lu parameters, worst error %.3g of tolerance", (unsigned long)P, worst);
}

int main(void) {
    test_ops();
    test_model();
    printf("%d passed, %d failed\n", g_groups_passed, g_groups_failed);
    return g_groups_failed ? 1 : 0;
}
