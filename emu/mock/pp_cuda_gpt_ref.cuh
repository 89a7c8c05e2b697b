/* emu/mock/pp_cuda_gpt_ref.cuh - the contract of pp_cuda_gpt.cuh (the
   kernels' interface; docs/cuda.md, "The kernel contract") implemented on the host with ref/gpt_ref.h in float:
   a slot is gpt_ref's activation buffer followed by the output gradient.
   With emu/mock/cuda_runtime.h it lets pp_cuda.cu run without a GPU; each
   "kernel" is queued on its stream and runs when the mock runtime says. */
#ifndef PP_CUDA_MOCK_GPT_H
#define PP_CUDA_MOCK_GPT_H
#include <math.h>
#include "../../ref/gpt_ref.h"

typedef struct pp__gpt_dims { int vocab, seq, channels, heads, layers, batch; } pp__gpt_dims;
typedef struct pp__gpt_stage { int first_layer, num_layers, has_embed, has_head; } pp__gpt_stage;

static gpt_config pp__mock_cfg(const pp__gpt_dims *c) {
    gpt_config g;
    g.vocab = c->vocab; g.seq = c->seq; g.channels = c->channels; g.heads = c->heads; g.layers = c->layers; g.batch = c->batch;
    return g;
}
static gpt_stage pp__mock_stage(const pp__gpt_stage *s) {
    gpt_stage g;
    g.first_layer = s->first_layer; g.num_layers = s->num_layers; g.has_embed = s->has_embed; g.has_head = s->has_head;
    return g;
}
static pp__gpt_stage pp__gpt_stage_of(const pp__gpt_dims *c, int s, int S) {
    gpt_config gc = pp__mock_cfg(c);
    gpt_stage g = gpt_stage_of(&gc, s, S);
    pp__gpt_stage r;
    r.first_layer = g.first_layer; r.num_layers = g.num_layers; r.has_embed = g.has_embed; r.has_head = g.has_head;
    return r;
}
static size_t pp__gpt_param_count(const pp__gpt_dims *c) {
    gpt_config gc = pp__mock_cfg(c);
    size_t sizes[GPT_NUM_TENSORS];
    return gpt_param_sizes(&gc, sizes);
}
static size_t pp__gpt_io_bytes(const pp__gpt_dims *c) { return (size_t)c->batch * c->seq * c->channels * sizeof(float); }
static size_t pp__mock_act(const pp__gpt_dims *c, const pp__gpt_stage *g) {
    gpt_config gc = pp__mock_cfg(c);
    gpt_stage gs = pp__mock_stage(g);
    return gpt_act_size(&gc, &gs);
}
static size_t pp__gpt_slot_bytes(const pp__gpt_dims *c, const pp__gpt_stage *g) {
    size_t b = (pp__mock_act(c, g) + (size_t)c->batch * c->seq * c->channels) * sizeof(float);
    return (b + 255) / 256 * 256;
}
static size_t pp__gpt_workspace_bytes(const pp__gpt_dims *c, const pp__gpt_stage *g) { (void)c; (void)g; return 0; }
static void *pp__gpt_slot_input(const pp__gpt_dims *c, const pp__gpt_stage *g, void *slot) { (void)c; (void)g; return slot; }
static void *pp__gpt_slot_dinput(const pp__gpt_dims *c, const pp__gpt_stage *g, void *slot) {
    gpt_config gc = pp__mock_cfg(c);
    (void)g;
    return gpt_act_dinput(&gc, (float *)slot);
}
static void *pp__gpt_slot_output(const pp__gpt_dims *c, const pp__gpt_stage *g, void *slot) {
    gpt_config gc = pp__mock_cfg(c);
    gpt_stage gs = pp__mock_stage(g);
    return g->has_head ? NULL : gpt_act_output(&gc, &gs, (float *)slot);
}
static void *pp__gpt_slot_doutput(const pp__gpt_dims *c, const pp__gpt_stage *g, void *slot) {
    return g->has_head ? NULL : (float *)slot + pp__mock_act(c, g);
}
static cudaError_t pp__gpt_forward(const pp__gpt_dims *c, const pp__gpt_stage *g, const __nv_bfloat16 *w, void *slot,
                                   const int *tokens, const int *targets, float *loss, void *workspace, cudaStream_t stream) {
    gpt_config gc = pp__mock_cfg(c);
    gpt_stage gs = pp__mock_stage(g);
    (void)workspace;
    mock_enqueue(stream, [=] {
        gpt_params p = gpt_params_at(&gc, (float *)w);
        double l = gpt_stage_forward(&gc, &p, &gs, (float *)slot, (float *)slot, tokens, targets);
        if (gs.has_head && loss) *loss += (float)l;
    });
    return cudaSuccess;
}
static cudaError_t pp__gpt_backward_input(const pp__gpt_dims *c, const pp__gpt_stage *g, const __nv_bfloat16 *w,
                                          void *slot, const int *targets, float dloss, void *workspace, cudaStream_t stream) {
    gpt_config gc = pp__mock_cfg(c);
    gpt_stage gs = pp__mock_stage(g);
    const float *dout = g->has_head ? NULL : (const float *)pp__gpt_slot_doutput(c, g, slot);
    (void)workspace;
    mock_enqueue(stream, [=] {
        gpt_params p = gpt_params_at(&gc, (float *)w);
        gpt_stage_backward_input(&gc, &p, &gs, (float *)slot, dout, targets, dloss);
    });
    return cudaSuccess;
}
static cudaError_t pp__gpt_backward_weight(const pp__gpt_dims *c, const pp__gpt_stage *g, float *grad, void *slot,
                                           const int *tokens, void *workspace, cudaStream_t stream) {
    gpt_config gc = pp__mock_cfg(c);
    gpt_stage gs = pp__mock_stage(g);
    (void)workspace;
    mock_enqueue(stream, [=] {
        /* MOCK_CUDA_NAN_W=K: the K-th W pass run leaves a NaN in its stage's
           first gradient of lnfb (the last stage) or ln1b (the others), for
           train_gpt's test that a non-finite gradient stops training */
        static long passes;
        const char *nan_at = getenv("MOCK_CUDA_NAN_W");
        gpt_params dw = gpt_params_at(&gc, grad);
        gpt_stage_backward_weight(&gc, &dw, &gs, (float *)slot, tokens);
        if (nan_at && ++passes == atol(nan_at))
            *(gs.has_head ? dw.t[GPT_LNFB] : dw.t[GPT_LN1B] + (size_t)gs.first_layer * gc.channels) = NAN;
    });
    return cudaSuccess;
}
static cudaError_t pp__gpt_to_bf16(__nv_bfloat16 *dst, const float *src, size_t n, cudaStream_t stream) {
    mock_enqueue(stream, [=] { memcpy(dst, src, n * sizeof(float)); });
    return cudaSuccess;
}
static cudaError_t pp__gpt_adamw(float *master, const float *grad, float *m, float *v, size_t n, float lr, float beta1,
                                 float beta2, float eps, float weight_decay, int t, cudaStream_t stream) {
    double c1 = 1 - pow(beta1, t), c2 = 1 - pow(beta2, t);
    mock_enqueue(stream, [=] {
        size_t i;
        for (i = 0; i < n; i++) {
            m[i] = beta1 * m[i] + (1 - beta1) * grad[i];
            v[i] = beta2 * v[i] + (1 - beta2) * grad[i] * grad[i];
            master[i] -= (float)(lr * ((m[i] / c1) / (sqrt(v[i] / c2) + eps) + weight_decay * master[i]));
        }
    });
    return cudaSuccess;
}
#endif
