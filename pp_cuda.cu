/* pp_cuda.cu - the executor behind pp_cuda.h (read its docs first) - MIT licence (see pp_cuda.h)

   Compile once, link the object:  nvcc -O2 -c pp_cuda.cu -o pp_cuda.o  (-DPP_CUDA_MPI for MPI's id broadcast)

   Names: pp_cuda_ public (pp_cuda.h), pp__cuda_ / PP__CUDA_ private to this
   file (apart from pp_sched.h's private pp__), pp__gpt_ the kernels'
   contract (pp_cuda_gpt.cuh; docs/cuda.md, "The kernel contract").

   How a step runs. Every pipeline device this process runs (all d in the
   one-GPU mode, its rank's in NCCL mode) has a stream, its activation slots,
   its send buffers and a workspace. The step starts on the main stream
   (tokens up, gradients and loss zeroed, event), every device stream waits
   for that event, the programs are walked, every device stream records an
   event the main stream waits for, the loss comes down.

   COMPUTE  F, B, W, BW of (stage s, microbatch j) in the slot the lowering
            chose (op->slot). A (stage, microbatch) takes its slot at its
            first op (the RECV of its input, or F) and frees it after W or
            BW; the executor checks both and counts the most live at once.
            1f1b-r: the slot keeps the stage input and the gradient that
            arrives for it; F and BW run in a scratch slot, BW first redoes F
            there (with its loss sent to a dummy, not added twice).
   outputs  an output with a SEND or HANDOFF after it (op->sends) is copied
            into a send buffer right after its producer: the lowering counts
            those (program->send_buffers), and the producer's slot may be
            freed (W) and reused before the SEND.
   HANDOFF  the turn of a V (producer and consumer stage on one device):
            the send buffer is copied into the consumer's slot region, as a
            RECV from the device itself would. The executor reads the
            program alone (stage_device, copies, recompute, ops): it has no
            dependency rule of its own.
   NCCL     a group of SEND/RECV ops (pp_program_group_end, pp_sched.h's
            rule) is one ncclGroupStart/End with an ncclSend from the send
            buffer or an ncclRecv into the consumer's slot region. All on the device's
            one stream, so a send buffer freed at its SEND can be refilled
            by a later producer: it runs after the send completed.
   one GPU  the host issues the d programs interleaved, under the rules
            pp_sched_check_deadlock simulates (a group posts all its ops;
            a SEND and its RECV complete together, the k-th send a->b
            with the k-th receive on b from a: pp_program_pair). When
            both are posted it issues: event after the producer on a's stream; b's stream waits
            for it and copies the send buffer into the consumer's slot; an
            event after the copy that a's stream waits for (so a's send
            buffer can be reused, as with NCCL). Every wait is issued after
            the record it waits for, so the GPU cannot deadlock where the
            host did not. */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <nccl.h>
#ifdef PP_CUDA_MPI
/* the C API only: Open MPI's and MPICH's C++ bindings warn under -Werror */
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pp_cuda.h"
/* the model's kernels; the host emulation (-DPP_CUDA_HOST_EMULATION with
   the mock runtime's folder on the include path) swaps in the reference
   model behind the same interface (docs/cuda.md, "The kernel contract") */
#ifdef PP_CUDA_HOST_EMULATION
#include "pp_cuda_gpt_ref.cuh"
#else
#include "pp_cuda_gpt.cuh"
#endif

/* ---- errors ---- */

static pp_cuda_status pp__cuda_fail(char *err, pp_cuda_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, PP_CUDA_ERR_LEN, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* every CUDA and NCCL call goes through one of these; `err` must be in scope */
#define PP__CUDA_CHECK(call)                                                                                             \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess)                                                                                     \
            return pp__cuda_fail(err, PP_CUDA_ERR_CUDA, "%s failed: %s (%s) at %s:%d", #call, cudaGetErrorString(e_),  \
                            cudaGetErrorName(e_), __FILE__, __LINE__);                                             \
    } while (0)
#define PP__CUDA_NCCL(call)                                                                                             \
    do {                                                                                                           \
        ncclResult_t r_ = (call);                                                                                  \
        if (r_ != ncclSuccess)                                                                                     \
            return pp__cuda_fail(err, PP_CUDA_ERR_NCCL, "%s failed: %s at %s:%d", #call, ncclGetErrorString(r_),       \
                            __FILE__, __LINE__);                                                                   \
    } while (0)
#define PP__CUDA_TRY(expr)                                                                                              \
    do {                                                                                                           \
        pp_cuda_status s_ = (expr);                                                                                \
        if (s_ != PP_CUDA_OK) return s_;                                                                           \
    } while (0)

static const char *const pp__cuda_status_strings[] = {
#define PP__CUDA_STR(name, str) str,
    PP_CUDA_STATUS_LIST(PP__CUDA_STR)
#undef PP__CUDA_STR
};

const char *pp_cuda_status_string(pp_cuda_status st) {
    if ((int)st < 0 || st >= PP_CUDA_STATUS_COUNT) return "unknown status";
    return pp__cuda_status_strings[st];
}

static size_t pp__cuda_round256(size_t x) { return (x + 255) / 256 * 256; }

/* ---- the context ---- */

typedef struct pp__cuda_dev { /* one pipeline device run by this process */
    int device;          /* its index in the pipeline */
    cudaStream_t stream;
    int own_stream;
    char *slots, *sendbuf, *scratch;
    void *ws;
    int nslots, nsend;
    size_t slot_bytes, scratch_bytes, ws_bytes;
    int *slot_owner;     /* [nslots]: stage*n + mb holding the slot, -1 free */
    int *slot_of;        /* [S*n]: slot of (stage, mb), -1 none */
    int *send_owner;     /* [nsend]: (payload*S + stage)*n + mb waiting there, -1 free */
    int live, peak;
    cudaEvent_t done;    /* end of its part of the step (main waits) */
    cudaEvent_t *prof;   /* profile: a pair per compute op */
    int *prof_key;       /* stage*4 + kind of each pair */
    int nprof, prof_used;
    double busy_ms;
} pp__cuda_dev;

struct pp_cuda {
    pp__gpt_dims dims;
    int d, S, n, recompute;
    int half;   /* stages per model copy: S, or S/2 for dualpipe's two copies (two routes) */
    int copies; /* pp_schedule.copies */
    size_t N, io, io_stride, P;
    pp__gpt_stage *stages; /* [S] */
    int *stage_device;     /* [S] */
    pp_cuda_mode mode;
    int rank, world, cuda_device;
    cudaStream_t main;
    int own_main;
    ncclComm_t comm;
    int own_comm, mpi_init;
    int failed; /* NCCL mode: a step or collective failed, peers may still wait: destroy aborts the communicator */
    pp__cuda_dev *dev; /* [nlocal] */
    int nlocal;
    float *master, *grad, *m, *v;
    __nv_bfloat16 *w;
    int *tokens, *targets;
    float *loss;      /* [2]: the step's sum of microbatch losses, and a dummy for 1f1b-r's recomputed F */
    int *flag;
    double *times_dev; /* [8*S] for pp_cuda_stage_times' all-reduce */
    cudaEvent_t ev_start, ev_end;
    cudaEvent_t *xfer; /* one-GPU mode: two per transfer */
    int nxfer;
    pp_cuda_optimizer opt;
    int t, profile;
    double *pass_sum; /* [S*4] ms */
    long *pass_count; /* [S*4] */
    double step_ms;
    pp_cuda_memory mem;
};

/* ---- host-side set-up (no GPU) ---- */

/* tensor sizes in ref/gpt_ref.h's gpt_param_sizes order */
static size_t pp__cuda_param_sizes(const pp__gpt_dims *c, size_t sizes[18]) {
    size_t V = (size_t)c->vocab, T = (size_t)c->seq, C = (size_t)c->channels, L = (size_t)c->layers, total = 0;
    size_t s[18] = {V * C, T * C, L * C, L * C, L * 3 * C * C, L * 3 * C, L * C * C, L * C, L * C, L * C,
                    L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C, C, C, V * C, V};
    int i;
    for (i = 0; i < 18; i++) total += (sizes[i] = s[i]);
    return total;
}

/* gpt_ref.h's gpt_init, bit for bit (the tests compare against it) */
static unsigned long long pp__cuda_rng(unsigned long long *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}
static double pp__cuda_uniform(unsigned long long *s) { return (double)(pp__cuda_rng(s) >> 11) * (1.0 / 9007199254740992.0); }
static void pp__cuda_init_params(const pp__gpt_dims *c, float *p, unsigned long long seed) {
    size_t sizes[18], i, off = 0;
    unsigned long long s = seed * 0x9E3779B97F4A7C15ULL + 1;
    int t;
    pp__cuda_param_sizes(c, sizes);
    for (t = 0; t < 18; t++) {
        for (i = 0; i < sizes[t]; i++) {
            double g = pp__cuda_uniform(&s) + pp__cuda_uniform(&s) + pp__cuda_uniform(&s) - 1.5;
            if (t == 2 || t == 8 || t == 14) p[off + i] = 1;       /* ln1w, ln2w, lnfw */
            else if (t == 3 || t == 9 || t == 15) p[off + i] = 0;  /* ln1b, ln2b, lnfb */
            else p[off + i] = (float)(0.04 * g);
        }
        off += sizes[t];
    }
}

/* the device that runs program op index i */
static int pp__cuda_op_device(const pp_program *p, int i) {
    int lo = 0, hi = p->devices - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (p->device_start[mid] <= i) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

static int pp__cuda_is_comm(const pp_op *op) { return op->type == PP_OP_SEND || op->type == PP_OP_RECV; }

/* the first and last stage of the route through stage s: 0 and S-1, or the
   stages of s's model copy with two copies (pp_schedule.copies = 2) */
static int pp__cuda_route_first(const pp_cuda *c, int s) { int f; pp_stage_route(c->S, c->copies, s, &f, NULL); return f; }
static int pp__cuda_route_last(const pp_cuda *c, int s) { int l; pp_stage_route(c->S, c->copies, s, NULL, &l); return l; }

/* slots (largest index + 1, and the program's count) and send buffers device dev needs */
static void pp__cuda_count(const pp_program *p, int dev, int *slots, int *sends) {
    int i, live = 0, most = 0, top = p->slots ? p->slots[dev] : 0;
    for (i = p->device_start[dev]; i < p->device_start[dev + 1]; i++) {
        const pp_op *op = &p->ops[i];
        if (op->slot + 1 > top) top = op->slot + 1;
        if (op->type == PP_OP_SEND || op->type == PP_OP_HANDOFF) live--;
        if (op->type == PP_OP_COMPUTE && op->sends && ++live > most) most = live;
    }
    if (p->send_buffers && p->send_buffers[dev] > most) most = p->send_buffers[dev];
    *slots = top;
    *sends = most;
}

/* model dims, stages and placement from the config and its program; c is zeroed by the caller */
static pp_cuda_status pp__cuda_setup(pp_cuda *c, const pp_cuda_config *cfg, char *err) {
    const pp_program *p;
    pp_cuda_model m;
    int i, half;
    if (!cfg || !cfg->program)
        return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "pp_cuda needs a config with a program (pp_sched_lower), got %s",
                        !cfg ? "cfg = NULL" : "program = NULL");
    p = cfg->program;
    if (p->devices < 1 || p->stages < 1 || p->microbatches < 1 || !p->ops || !p->device_start || !p->stage_device)
        return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG,
                        "the program needs devices, stages, microbatches >= 1, ops, device_start and stage_device "
                        "(pp_sched_lower fills them), got d=%d, %d stages, n=%d%s", p->devices, p->stages,
                        p->microbatches, p->stage_device ? "" : ", stage_device = NULL");
    m = cfg->model;
    if (!m.vocab) m.vocab = 256;
    if (!m.seq) m.seq = 64;
    if (!m.channels) m.channels = 128;
    if (!m.heads) m.heads = 4;
    half = p->copies == 2 ? p->stages / 2 : p->stages; /* dualpipe: two copies of a half-S-stage model */
    if (!m.layers) m.layers = 2 * half;
    if (!m.batch) m.batch = 4;
    if (m.vocab < 1 || m.seq < 1 || m.channels < 1 || m.heads < 1 || m.batch < 1 || m.channels % m.heads)
        return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG,
                        "model needs positive vocab, seq, channels, heads, batch and heads dividing channels; got "
                        "vocab %d seq %d channels %d heads %d batch %d", m.vocab, m.seq, m.channels, m.heads, m.batch);
    if (m.layers < half)
        return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "%s has %d stages per model copy: the model needs at least %d layers, got %d",
                        p->name[0] ? p->name : "the program", half, half, m.layers);
    if (cfg->mode != PP_CUDA_AUTO && cfg->mode != PP_CUDA_ONE_GPU && cfg->mode != PP_CUDA_NCCL)
        return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "mode must be PP_CUDA_AUTO, PP_CUDA_ONE_GPU or PP_CUDA_NCCL, got %d",
                        (int)cfg->mode);
    c->dims.vocab = m.vocab;
    c->dims.seq = m.seq;
    c->dims.channels = m.channels;
    c->dims.heads = m.heads;
    c->dims.layers = m.layers;
    c->dims.batch = m.batch;
    c->d = p->devices;
    c->S = p->stages;
    c->half = half;
    c->copies = p->copies;
    c->n = p->microbatches;
    c->recompute = p->recompute;
    c->N = (size_t)m.batch * m.seq;
    c->io = pp__gpt_io_bytes(&c->dims);
    c->io_stride = pp__cuda_round256(c->io);
    c->P = pp__gpt_param_count(&c->dims);
    {
        size_t sizes[18];
        if (pp__cuda_param_sizes(&c->dims, sizes) != c->P)
            return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG,
                            "pp_cuda_gpt.cuh counts %zu parameters, gpt_ref.h's layout %zu: the kernels and the "
                            "executor disagree on the model", c->P, pp__cuda_param_sizes(&c->dims, sizes));
    }
    c->stages = (pp__gpt_stage *)calloc((size_t)c->S, sizeof(pp__gpt_stage));
    c->stage_device = (int *)calloc((size_t)c->S, sizeof(int));
    c->pass_sum = (double *)calloc((size_t)c->S * 4, sizeof(double));
    c->pass_count = (long *)calloc((size_t)c->S * 4, sizeof(long));
    if (!c->stages || !c->stage_device || !c->pass_sum || !c->pass_count)
        return pp__cuda_fail(err, PP_CUDA_ERR_HOST_MEMORY, "out of host memory for %d stages", c->S);
    for (i = 0; i < c->S; i++) {
        c->stages[i] = pp__gpt_stage_of(&c->dims, i % c->half, c->half); /* copy B's stage i = the model's i - half */
        c->stage_device[i] = p->stage_device[i];
        if (c->stage_device[i] < 0 || c->stage_device[i] >= c->d)
            return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "stage %d sits on device %d of %d", i, c->stage_device[i], c->d);
    }
    c->opt = cfg->opt;
    if (c->opt.lr == 0) c->opt.lr = 1e-3f;
    if (c->opt.beta1 == 0) c->opt.beta1 = 0.9f;
    if (c->opt.beta2 == 0) c->opt.beta2 = 0.999f;
    if (c->opt.eps == 0) c->opt.eps = 1e-8f;
    c->profile = cfg->profile;
    return PP_CUDA_OK;
}

/* sizes of local device dev (slots, send buffers, scratch, workspace) */
static void pp__cuda_dev_sizes(const pp_cuda *c, const pp_program *p, int dev, pp__cuda_dev *v) {
    int s;
    size_t slot = 0, ws = 0;
    for (s = 0; s < c->S; s++)
        if (c->stage_device[s] == dev) {
            size_t b = pp__gpt_slot_bytes(&c->dims, &c->stages[s]), w = pp__gpt_workspace_bytes(&c->dims, &c->stages[s]);
            if (b > slot) slot = b;
            if (w > ws) ws = w;
        }
    v->device = dev;
    pp__cuda_count(p, dev, &v->nslots, &v->nsend);
    v->slot_bytes = c->recompute ? 2 * c->io_stride : pp__cuda_round256(slot);
    v->scratch_bytes = c->recompute ? pp__cuda_round256(slot) : 0;
    v->ws_bytes = pp__cuda_round256(ws);
}

static void pp__cuda_plan_add(const pp_cuda *c, const pp__cuda_dev *v, pp_cuda_memory *m) {
    m->activations += (size_t)v->nslots * v->slot_bytes;
    m->send_buffers += (size_t)v->nsend * c->io_stride;
    m->scratch += v->scratch_bytes;
    m->workspaces += v->ws_bytes;
}

static void pp__cuda_plan_common(const pp_cuda *c, pp_cuda_memory *m) {
    m->weights = c->P * sizeof(float) + pp__cuda_round256(c->P * sizeof(__nv_bfloat16));
    m->grads = c->P * sizeof(float);
    m->optimizer = 2 * c->P * sizeof(float);
    m->data = 2 * pp__cuda_round256((size_t)c->n * c->N * sizeof(int)) + 256 + pp__cuda_round256(8 * (size_t)c->S * sizeof(double));
    m->total = m->activations + m->send_buffers + m->scratch + m->weights + m->grads + m->optimizer + m->workspaces +
               m->data;
}

static void pp__cuda_free_host(pp_cuda *c) {
    int l;
    if (c->dev)
        for (l = 0; l < c->nlocal; l++) {
            free(c->dev[l].slot_owner);
            free(c->dev[l].slot_of);
            free(c->dev[l].send_owner);
            free(c->dev[l].prof);
            free(c->dev[l].prof_key);
        }
    free(c->dev);
    free(c->stages);
    free(c->stage_device);
    free(c->pass_sum);
    free(c->pass_count);
    free(c->xfer);
}

pp_cuda_status pp_cuda_plan(const pp_cuda_config *cfg, int device, pp_cuda_memory *out, char *err) {
    pp_cuda c;
    pp__cuda_dev v;
    pp_cuda_status st;
    int dev;
    memset(&c, 0, sizeof c);
    if (!out) return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "pp_cuda_plan needs an output, got NULL");
    memset(out, 0, sizeof *out);
    st = pp__cuda_setup(&c, cfg, err);
    if (st == PP_CUDA_OK && (device < -1 || device >= c.d))
        st = pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "device must be -1 (all, one GPU) or 0..%d, got %d", c.d - 1, device);
    if (st == PP_CUDA_OK) {
        for (dev = 0; dev < c.d; dev++)
            if (device < 0 || dev == device) {
                memset(&v, 0, sizeof v);
                pp__cuda_dev_sizes(&c, cfg->program, dev, &v);
                pp__cuda_plan_add(&c, &v, out);
            }
        pp__cuda_plan_common(&c, out);
    }
    pp__cuda_free_host(&c);
    return st;
}

int pp_cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear it */
        return 0;
    }
    return n;
}

/* ---- start-up: launcher variables, NCCL id ---- */

static int pp__cuda_env_int(const char *name, int *out) {
    const char *s = getenv(name);
    char *e;
    long v;
    if (!s || !*s) return 0;
    v = strtol(s, &e, 10);
    if (*e || v < 0 || v > 1000000) return 0;
    *out = (int)v;
    return 1;
}

/* rank, world, local rank (-1 unknown) from mpirun, srun or torchrun; 0 when none set them.
   The launcher that started this process comes first: torchrun run by srun
   (or mpirun run inside a Slurm allocation) inherits the outer launcher's
   variables, which number the torchrun agents (or the batch step), not us. */
static int pp__cuda_launcher(int *rank, int *world, int *local, const char **who) {
    static const char *const vars[4][4] = {
        {"RANK", "WORLD_SIZE", "LOCAL_RANK", "torchrun"},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "mpirun (Open MPI)"},
        {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "mpirun (MPICH)"},
        {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "srun"}};
    int i;
    for (i = 0; i < 4; i++)
        if (pp__cuda_env_int(vars[i][0], rank) && pp__cuda_env_int(vars[i][1], world)) {
            if (!pp__cuda_env_int(vars[i][2], local)) *local = -1;
            *who = vars[i][3];
            return 1;
        }
    return 0;
}

#ifdef PP_CUDA_MPI
static void pp__cuda_mpi_finalize(void) {
    int done = 0;
    if (MPI_Finalized(&done) == MPI_SUCCESS && !done) MPI_Finalize();
}
#endif

static pp_cuda_status pp__cuda_bootstrap(pp_cuda *c, const pp_cuda_config *cfg, int gpus, char *err) {
    ncclUniqueId id;
    int local = -1;
    const char *who = "no launcher";
    if (cfg->comm) {
        c->comm = (ncclComm_t)cfg->comm;
        PP__CUDA_NCCL(ncclCommUserRank(c->comm, &c->rank));
        PP__CUDA_NCCL(ncclCommCount(c->comm, &c->world));
        PP__CUDA_NCCL(ncclCommCuDevice(c->comm, &c->cuda_device));
        if (c->world != c->d)
            return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "the communicator has %d ranks, the program %d devices",
                            c->world, c->d);
        PP__CUDA_CHECK(cudaSetDevice(c->cuda_device));
        return PP_CUDA_OK;
    }
#ifdef PP_CUDA_MPI
    {
        int inited = 0;
        if (MPI_Initialized(&inited) != MPI_SUCCESS)
            return pp__cuda_fail(err, PP_CUDA_ERR_BOOTSTRAP, "MPI_Initialized failed at %s:%d", __FILE__, __LINE__);
        if (!inited) {
            if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
                return pp__cuda_fail(err, PP_CUDA_ERR_BOOTSTRAP, "MPI_Init failed at %s:%d", __FILE__, __LINE__);
            /* finalized at exit, not in pp_cuda_destroy: a second context
               (train_gpt's re-plan) must still find MPI usable, and MPI
               cannot be initialised again after MPI_Finalize */
            atexit(pp__cuda_mpi_finalize);
            c->mpi_init = 1;
        }
        if (MPI_Comm_rank(MPI_COMM_WORLD, &c->rank) != MPI_SUCCESS || MPI_Comm_size(MPI_COMM_WORLD, &c->world) != MPI_SUCCESS)
            return pp__cuda_fail(err, PP_CUDA_ERR_BOOTSTRAP, "MPI_Comm_rank/size failed at %s:%d", __FILE__, __LINE__);
        {
            int r, w;
            if (!pp__cuda_launcher(&r, &w, &local, &who)) local = -1;
        }
        who = "MPI";
    }
#else
    if (!pp__cuda_launcher(&c->rank, &c->world, &local, &who)) {
        c->rank = 0;
        c->world = 1;
    }
#endif
    if (c->world != c->d)
        return pp__cuda_fail(err, PP_CUDA_ERR_BOOTSTRAP,
                        "NCCL mode runs one rank per pipeline device: the program has %d devices, %s started %d "
                        "rank(s) (rank %d)", c->d, who, c->world, c->rank);
    if (c->rank < 0 || c->rank >= c->world)
        return pp__cuda_fail(err, PP_CUDA_ERR_BOOTSTRAP, "%s gave rank %d of %d", who, c->rank, c->world);
    if (cfg->stream) {
        PP__CUDA_CHECK(cudaGetDevice(&c->cuda_device)); /* the stream's device: the caller set it */
    } else {
        c->cuda_device = (local >= 0 ? local : c->rank) % gpus;
        PP__CUDA_CHECK(cudaSetDevice(c->cuda_device));
    }
#ifdef PP_CUDA_MPI
    if (c->rank == 0) PP__CUDA_NCCL(ncclGetUniqueId(&id));
    if (MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return pp__cuda_fail(err, PP_CUDA_ERR_BOOTSTRAP, "MPI_Bcast of the NCCL id failed at %s:%d", __FILE__, __LINE__);
#else
    if (c->world > 1 && !getenv("NCCL_COMM_ID"))
        return pp__cuda_fail(err, PP_CUDA_ERR_BOOTSTRAP,
                        "rank %d of %d (%s): set NCCL_COMM_ID=host:port (a free port on rank 0's host) in every "
                        "rank's environment, or build with make MPI=1 to broadcast the id with MPI",
                        c->rank, c->world, who);
    /* with NCCL_COMM_ID set every rank gets the same id, and rank 0's
       ncclCommInitRank runs the bootstrap root at that address */
    PP__CUDA_NCCL(ncclGetUniqueId(&id));
#endif
    {
        ncclResult_t r = ncclCommInitRank(&c->comm, c->world, id, c->rank);
        if (r != ncclSuccess) /* NCCL's own words say which peer or address */
            return pp__cuda_fail(err, PP_CUDA_ERR_NCCL, "rank %d of %d (%s): ncclCommInitRank failed: %s (%s) at %s:%d",
                            c->rank, c->world, who, ncclGetErrorString(r), ncclGetLastError(NULL), __FILE__, __LINE__);
    }
    c->own_comm = 1;
    return PP_CUDA_OK;
}

/* waits for stream s. In NCCL mode it watches the communicator meanwhile: a
   peer that died or aborted leaves our NCCL operations waiting forever on a
   GPU, and NCCL reports it only as the communicator's asynchronous error.
   That error ends the wait, with NCCL's last message (which names the peer
   where NCCL knows it); the context is then marked failed, so destroy
   aborts the communicator and our own operations end too. */
static pp_cuda_status pp__cuda_wait(pp_cuda *c, cudaStream_t s, char *err) {
    if (c->mode != PP_CUDA_NCCL || !c->comm) {
        PP__CUDA_CHECK(cudaStreamSynchronize(s));
        return PP_CUDA_OK;
    }
    for (;;) {
        cudaError_t e = cudaStreamQuery(s);
        ncclResult_t a = ncclSuccess;
        struct timespec pause = {0, 100000};
        /* first: a failed NCCL operation may let the stream finish, with garbage */
        if (ncclCommGetAsyncError(c->comm, &a) == ncclSuccess && a != ncclSuccess && a != ncclInProgress) {
            c->failed = 1;
            return pp__cuda_fail(err, PP_CUDA_ERR_NCCL, "rank %d: NCCL failed while this rank waited for its stream: %s (%s) "
                            "at %s:%d", c->rank, ncclGetErrorString(a), ncclGetLastError(c->comm), __FILE__, __LINE__);
        }
        if (e == cudaSuccess) return PP_CUDA_OK;
        if (e != cudaErrorNotReady) PP__CUDA_CHECK(e);
        nanosleep(&pause, NULL);
    }
}

/* ---- allocation ---- */

static pp_cuda_status pp__cuda_malloc(void **p, size_t bytes, char *err) {
    *p = NULL;
    if (bytes == 0) return PP_CUDA_OK;
    PP__CUDA_CHECK(cudaMalloc(p, bytes));
    return PP_CUDA_OK;
}

static pp_cuda_status pp__cuda_events(cudaEvent_t **pool, int *have, int want, unsigned flags, char *err) {
    cudaEvent_t *p;
    if (want <= *have) return PP_CUDA_OK;
    p = (cudaEvent_t *)realloc(*pool, sizeof(cudaEvent_t) * (size_t)want);
    if (!p) return pp__cuda_fail(err, PP_CUDA_ERR_HOST_MEMORY, "out of host memory for %d events", want);
    *pool = p;
    while (*have < want) {
        PP__CUDA_CHECK(cudaEventCreateWithFlags(&p[*have], flags));
        (*have)++;
    }
    return PP_CUDA_OK;
}

static int pp__cuda_count_ops(const pp_program *p, int dev, int type) {
    int i, k = 0, lo = dev < 0 ? 0 : p->device_start[dev], hi = dev < 0 ? p->num_ops : p->device_start[dev + 1];
    for (i = lo; i < hi; i++) k += p->ops[i].type == type;
    return k;
}

static pp_cuda_status pp__cuda_prof_pool(pp__cuda_dev *v, int ops, char *err) {
    int have = v->nprof;
    int *k;
    PP__CUDA_TRY(pp__cuda_events(&v->prof, &have, 2 * ops, cudaEventDefault, err));
    if (have > v->nprof) {
        k = (int *)realloc(v->prof_key, sizeof(int) * (size_t)have);
        if (!k) return pp__cuda_fail(err, PP_CUDA_ERR_HOST_MEMORY, "out of host memory");
        v->prof_key = k;
        v->nprof = have;
    }
    return PP_CUDA_OK;
}

static pp_cuda_status pp__cuda_create(pp_cuda *c, const pp_cuda_config *cfg, char *err) {
    int gpus = pp_cuda_device_count(), l;
    size_t free_b = 0, total_b = 0, budget, f0, f1;
    PP__CUDA_TRY(pp__cuda_setup(c, cfg, err));
    if (gpus <= 0) return pp__cuda_fail(err, PP_CUDA_ERR_NO_DEVICE, "no CUDA device (cudaGetDeviceCount found none or failed)");
    c->mode = cfg->mode;
    if (c->mode == PP_CUDA_AUTO) {
        int r, w = 1, lr;
        const char *who;
        c->mode = cfg->comm || (pp__cuda_launcher(&r, &w, &lr, &who) && w > 1) ? PP_CUDA_NCCL : PP_CUDA_ONE_GPU;
    }
    if (c->mode == PP_CUDA_NCCL) {
        PP__CUDA_TRY(pp__cuda_bootstrap(c, cfg, gpus, err));
        c->nlocal = 1;
    } else {
        if (cfg->comm)
            return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "a communicator was given for the one-GPU mode (set mode to PP_CUDA_NCCL or AUTO)");
        PP__CUDA_CHECK(cudaGetDevice(&c->cuda_device));
        c->rank = 0;
        c->world = 1;
        c->nlocal = c->d;
    }
    c->dev = (pp__cuda_dev *)calloc((size_t)c->nlocal, sizeof(pp__cuda_dev));
    if (!c->dev) return pp__cuda_fail(err, PP_CUDA_ERR_HOST_MEMORY, "out of host memory");
    memset(&c->mem, 0, sizeof c->mem);
    for (l = 0; l < c->nlocal; l++) {
        pp__cuda_dev *v = &c->dev[l];
        pp__cuda_dev_sizes(c, cfg->program, c->mode == PP_CUDA_NCCL ? c->rank : l, v);
        pp__cuda_plan_add(c, v, &c->mem);
        v->slot_owner = (int *)malloc(sizeof(int) * (size_t)(v->nslots + 1));
        v->slot_of = (int *)malloc(sizeof(int) * (size_t)c->S * c->n);
        v->send_owner = (int *)malloc(sizeof(int) * (size_t)(v->nsend + 1));
        if (!v->slot_owner || !v->slot_of || !v->send_owner) return pp__cuda_fail(err, PP_CUDA_ERR_HOST_MEMORY, "out of host memory");
    }
    pp__cuda_plan_common(c, &c->mem);

    /* the memory check, before anything is allocated */
    PP__CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    c->mem.free_at_start = free_b;
    budget = cfg->memory_budget && cfg->memory_budget < free_b ? cfg->memory_budget : free_b;
    {
        int short_of = c->mem.total > budget;
        if (c->mode == PP_CUDA_NCCL) { /* every rank fails together, none waits in a step for a rank that left */
            int h = short_of ? c->rank + 1 : 0;
            cudaStream_t s0 = cfg->stream ? (cudaStream_t)cfg->stream : 0;
            PP__CUDA_CHECK(cudaMalloc((void **)&c->flag, sizeof(int)));
            PP__CUDA_CHECK(cudaMemcpyAsync(c->flag, &h, sizeof h, cudaMemcpyHostToDevice, s0));
            PP__CUDA_NCCL(ncclAllReduce(c->flag, c->flag, 1, ncclInt32, ncclMax, c->comm, s0));
            PP__CUDA_TRY(pp__cuda_wait(c, s0, err)); /* before the copy: a pageable copy would wait unwatched */
            PP__CUDA_CHECK(cudaMemcpyAsync(&h, c->flag, sizeof h, cudaMemcpyDeviceToHost, s0));
            PP__CUDA_CHECK(cudaStreamSynchronize(s0));
            if (h && !short_of)
                return pp__cuda_fail(err, PP_CUDA_ERR_NO_MEMORY, "rank %d has too little free GPU memory (see its message)",
                                h - 1);
        }
        if (short_of)
            return pp__cuda_fail(err, PP_CUDA_ERR_NO_MEMORY,
                            "%s needs %zu bytes on GPU %d (activation slots %zu, send buffers %zu, recompute scratch "
                            "%zu, weights %zu, gradients %zu, optimizer %zu, workspaces %zu, data %zu) but %zu bytes "
                            "are free (cudaMemGetInfo: %zu free of %zu%s)",
                            c->mode == PP_CUDA_NCCL ? "this rank" : "the one-GPU pipeline", c->mem.total,
                            c->cuda_device, c->mem.activations, c->mem.send_buffers, c->mem.scratch, c->mem.weights,
                            c->mem.grads, c->mem.optimizer, c->mem.workspaces, c->mem.data, budget, free_b, total_b,
                            budget < free_b ? ", memory_budget" : "");
    }

    /* the slots first, alone, so the drop of the free bytes measures them */
    PP__CUDA_CHECK(cudaDeviceSynchronize());
    PP__CUDA_CHECK(cudaMemGetInfo(&f0, &total_b));
    for (l = 0; l < c->nlocal; l++) {
        pp__cuda_dev *v = &c->dev[l];
        PP__CUDA_TRY(pp__cuda_malloc((void **)&v->slots, (size_t)v->nslots * v->slot_bytes, err));
    }
    PP__CUDA_CHECK(cudaMemGetInfo(&f1, &total_b));
    c->mem.measured_activations = f0 > f1 ? f0 - f1 : 0;
    for (l = 0; l < c->nlocal; l++) {
        pp__cuda_dev *v = &c->dev[l];
        PP__CUDA_TRY(pp__cuda_malloc((void **)&v->sendbuf, (size_t)v->nsend * c->io_stride, err));
        PP__CUDA_TRY(pp__cuda_malloc((void **)&v->scratch, v->scratch_bytes, err));
        PP__CUDA_TRY(pp__cuda_malloc(&v->ws, v->ws_bytes, err));
        if (c->mode == PP_CUDA_NCCL && cfg->stream) {
            v->stream = (cudaStream_t)cfg->stream;
        } else {
            PP__CUDA_CHECK(cudaStreamCreateWithFlags(&v->stream, cudaStreamNonBlocking));
            v->own_stream = 1;
        }
        PP__CUDA_CHECK(cudaEventCreateWithFlags(&v->done, cudaEventDisableTiming));
        if (c->profile) PP__CUDA_TRY(pp__cuda_prof_pool(v, pp__cuda_count_ops(cfg->program, v->device, PP_OP_COMPUTE), err));
    }
    if (c->mode == PP_CUDA_NCCL) {
        c->main = c->dev[0].stream; /* one stream: everything in order */
    } else if (cfg->stream) {
        c->main = (cudaStream_t)cfg->stream;
    } else {
        PP__CUDA_CHECK(cudaStreamCreateWithFlags(&c->main, cudaStreamNonBlocking));
        c->own_main = 1;
    }
    PP__CUDA_CHECK(cudaEventCreate(&c->ev_start));
    PP__CUDA_CHECK(cudaEventCreate(&c->ev_end));
    if (c->mode == PP_CUDA_ONE_GPU)
        PP__CUDA_TRY(pp__cuda_events(&c->xfer, &c->nxfer, 2 * pp__cuda_count_ops(cfg->program, -1, PP_OP_SEND), cudaEventDisableTiming, err));
    PP__CUDA_TRY(pp__cuda_malloc((void **)&c->master, c->P * sizeof(float), err));
    PP__CUDA_TRY(pp__cuda_malloc((void **)&c->w, pp__cuda_round256(c->P * sizeof(__nv_bfloat16)), err));
    PP__CUDA_TRY(pp__cuda_malloc((void **)&c->grad, c->P * sizeof(float), err));
    PP__CUDA_TRY(pp__cuda_malloc((void **)&c->m, c->P * sizeof(float), err));
    PP__CUDA_TRY(pp__cuda_malloc((void **)&c->v, c->P * sizeof(float), err));
    PP__CUDA_TRY(pp__cuda_malloc((void **)&c->tokens, pp__cuda_round256((size_t)c->n * c->N * sizeof(int)), err));
    PP__CUDA_TRY(pp__cuda_malloc((void **)&c->targets, pp__cuda_round256((size_t)c->n * c->N * sizeof(int)), err));
    PP__CUDA_TRY(pp__cuda_malloc((void **)&c->loss, 2 * sizeof(float), err));
    PP__CUDA_TRY(pp__cuda_malloc((void **)&c->times_dev, 8 * (size_t)c->S * sizeof(double), err));
    /* everything on the main stream: plain cudaMemset/cudaMemcpy run on the
       legacy stream, which our non-blocking streams do not wait for */
    PP__CUDA_CHECK(cudaMemsetAsync(c->grad, 0, c->P * sizeof(float), c->main));
    PP__CUDA_CHECK(cudaMemsetAsync(c->m, 0, c->P * sizeof(float), c->main));
    PP__CUDA_CHECK(cudaMemsetAsync(c->v, 0, c->P * sizeof(float), c->main));
    {
        float *host = (float *)malloc(c->P * sizeof(float));
        if (!host) return pp__cuda_fail(err, PP_CUDA_ERR_HOST_MEMORY, "out of host memory for %zu parameters", c->P);
        pp__cuda_init_params(&c->dims, host, cfg->seed);
        {
            cudaError_t e = cudaMemcpyAsync(c->master, host, c->P * sizeof(float), cudaMemcpyHostToDevice, c->main);
            if (e == cudaSuccess) e = cudaStreamSynchronize(c->main);
            free(host);
            PP__CUDA_CHECK(e);
        }
    }
    PP__CUDA_CHECK(pp__gpt_to_bf16(c->w, c->master, c->P, c->main));
    PP__CUDA_CHECK(cudaStreamSynchronize(c->main));
    return PP_CUDA_OK;
}

pp_cuda_status pp_cuda_create(const pp_cuda_config *cfg, pp_cuda **out, char *err) {
    pp_cuda *c;
    pp_cuda_status st;
    if (!out) return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "pp_cuda_create needs an output pointer, got NULL");
    *out = NULL;
    c = (pp_cuda *)calloc(1, sizeof(pp_cuda));
    if (!c) return pp__cuda_fail(err, PP_CUDA_ERR_HOST_MEMORY, "out of host memory");
    st = pp__cuda_create(c, cfg, err);
    if (st != PP_CUDA_OK) {
        c->failed = 1;
        pp_cuda_destroy(c);
        return st;
    }
    *out = c;
    return PP_CUDA_OK;
}

void pp_cuda_destroy(pp_cuda *c) {
    int l, i;
    if (!c) return;
    /* best effort: errors here have nowhere to go. After a failure NCCL
       operations of ours may wait for peers that will never post theirs:
       abort them, or the syncs below (and ncclCommDestroy) never return */
    if (c->failed && c->own_comm && c->comm) {
        (void)ncclCommAbort(c->comm);
        c->comm = NULL;
    }
    if (c->main) (void)cudaStreamSynchronize(c->main);
    if (c->dev)
        for (l = 0; l < c->nlocal; l++) {
            pp__cuda_dev *v = &c->dev[l];
            if (v->stream) (void)cudaStreamSynchronize(v->stream);
            cudaFree(v->slots);
            cudaFree(v->sendbuf);
            cudaFree(v->scratch);
            cudaFree(v->ws);
            if (v->done) cudaEventDestroy(v->done);
            for (i = 0; i < v->nprof; i++) cudaEventDestroy(v->prof[i]);
            if (v->own_stream) cudaStreamDestroy(v->stream);
        }
    for (i = 0; i < c->nxfer; i++) cudaEventDestroy(c->xfer[i]);
    if (c->ev_start) cudaEventDestroy(c->ev_start);
    if (c->ev_end) cudaEventDestroy(c->ev_end);
    if (c->own_main) cudaStreamDestroy(c->main);
    cudaFree(c->master);
    cudaFree(c->w);
    cudaFree(c->grad);
    cudaFree(c->m);
    cudaFree(c->v);
    cudaFree(c->tokens);
    cudaFree(c->targets);
    cudaFree(c->loss);
    cudaFree(c->flag);
    cudaFree(c->times_dev);
    if (c->own_comm && c->comm) ncclCommDestroy(c->comm);
    pp__cuda_free_host(c);
    free(c);
}

/* ---- a step ---- */

static int pp__cuda_key(const pp_cuda *c, int stage, int mb) { return stage * c->n + mb; }

/* (stage, mb) takes slot k (or already holds it: its RECV took it) */
static pp_cuda_status pp__cuda_take(pp_cuda *c, pp__cuda_dev *v, int k, int stage, int mb, char *err) {
    int key = pp__cuda_key(c, stage, mb);
    if (k < 0 || k >= v->nslots)
        return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM, "device %d: stage %d mb %d has slot %d of %d", v->device, stage, mb, k,
                        v->nslots);
    if (v->slot_owner[k] == key) return PP_CUDA_OK;
    if (v->slot_owner[k] != -1)
        return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM, "device %d: stage %d mb %d takes slot %d still held by stage %d mb %d",
                        v->device, stage, mb, k, v->slot_owner[k] / c->n, v->slot_owner[k] % c->n);
    if (v->slot_of[key] != -1)
        return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM, "device %d: stage %d mb %d takes a second slot", v->device, stage, mb);
    v->slot_owner[k] = key;
    v->slot_of[key] = k;
    if (++v->live > v->peak) v->peak = v->live;
    return PP_CUDA_OK;
}

/* the slot (stage, mb) holds, which must be k when k >= 0 */
static pp_cuda_status pp__cuda_held(pp_cuda *c, pp__cuda_dev *v, int k, int stage, int mb, char **slot, char *err) {
    int at = v->slot_of[pp__cuda_key(c, stage, mb)];
    if (at < 0 || (k >= 0 && at != k))
        return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM, "device %d: stage %d mb %d should hold slot %d but holds %d", v->device,
                        stage, mb, k, at);
    *slot = v->slots + (size_t)at * v->slot_bytes;
    return PP_CUDA_OK;
}

/* where a received (or same-device) input (grad = 0) or output gradient (grad = 1) of stage goes */
static char *pp__cuda_in_region(pp_cuda *c, int stage, char *slot, int grad) {
    if (c->recompute) return slot + (grad ? c->io_stride : 0);
    return (char *)(grad ? pp__gpt_slot_doutput(&c->dims, &c->stages[stage], slot)
                         : pp__gpt_slot_input(&c->dims, &c->stages[stage], slot));
}

static int pp__cuda_send_key(const pp_cuda *c, int what, int stage, int mb) { return (what * c->S + stage) * c->n + mb; }

/* copies an output into a free send buffer */
static pp_cuda_status pp__cuda_to_send_buffer(pp_cuda *c, pp__cuda_dev *v, int what, int stage, int mb, const void *src, char *err) {
    int i;
    for (i = 0; i < v->nsend && v->send_owner[i] != -1; i++) {}
    if (i == v->nsend)
        return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM,
                        "device %d: the output of stage %d mb %d finds all %d send buffers taken (create the context "
                        "with this program)", v->device, stage, mb, v->nsend);
    v->send_owner[i] = pp__cuda_send_key(c, what, stage, mb);
    PP__CUDA_CHECK(cudaMemcpyAsync(v->sendbuf + (size_t)i * c->io_stride, src, c->io, cudaMemcpyDeviceToDevice, v->stream));
    return PP_CUDA_OK;
}

static pp_cuda_status pp__cuda_send_buffer(pp_cuda *c, pp__cuda_dev *v, const pp_op *op, int *index, char *err) {
    int i, key = pp__cuda_send_key(c, (int)op->what, op->stage, op->microbatch);
    for (i = 0; i < v->nsend; i++)
        if (v->send_owner[i] == key) {
            *index = i;
            return PP_CUDA_OK;
        }
    return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM, "device %d: SEND of the %s of stage %d mb %d before it was produced",
                    v->device, op->what == PP_ACTIVATION ? "activation" : "gradient", op->stage, op->microbatch);
}

static pp_cuda_status pp__cuda_compute(pp_cuda *c, pp__cuda_dev *v, const pp_op *op, char *err) {
    const int s = op->stage, j = op->microbatch, S = c->S;
    const pp__gpt_stage *g;
    const pp__gpt_dims *dm = &c->dims;
    const int *tok, *tgt;
    const float dloss = (float)(1.0 / ((double)c->n * (double)c->N));
    char *slot, *act;
    int prof = -1;
    if (s < 0 || s >= S || j < 0 || j >= c->n || (int)op->kind < 0 || (int)op->kind > 3 ||
        c->stage_device[s] != v->device)
        return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM, "device %d: %s of stage %d mb %d does not belong here", v->device,
                        pp_kind_name(op->kind), s, j);
    g = &c->stages[s];
    tok = c->tokens + (size_t)j * c->N;
    tgt = c->targets + (size_t)j * c->N;
    if (c->profile && v->prof_used + 2 <= v->nprof) {
        prof = v->prof_used;
        v->prof_used += 2;
        v->prof_key[prof] = s * 4 + (int)op->kind;
        PP__CUDA_CHECK(cudaEventRecord(v->prof[prof], v->stream));
    }
    if (op->kind == PP_F) {
        PP__CUDA_TRY(pp__cuda_take(c, v, op->slot, s, j, err));
        slot = v->slots + (size_t)op->slot * v->slot_bytes;
        act = c->recompute ? v->scratch : slot;
        /* the input is in the slot already (RECV or HANDOFF); 1f1b-r runs F in the scratch */
        if (s > pp__cuda_route_first(c, s) && c->recompute) {
            PP__CUDA_CHECK(cudaMemcpyAsync(pp__gpt_slot_input(dm, g, act), slot, c->io, cudaMemcpyDeviceToDevice, v->stream));
        }
        PP__CUDA_CHECK(pp__gpt_forward(dm, g, c->w, act, tok, tgt, c->loss, v->ws, v->stream));
        if (op->sends) PP__CUDA_TRY(pp__cuda_to_send_buffer(c, v, PP_ACTIVATION, s, j, pp__gpt_slot_output(dm, g, act), err));
    } else {
        PP__CUDA_TRY(pp__cuda_held(c, v, op->slot, s, j, &slot, err));
        act = slot;
        if (c->recompute) { /* 1f1b-r's BW: the forward again, from the kept input */
            act = v->scratch;
            if (s > pp__cuda_route_first(c, s))
                PP__CUDA_CHECK(cudaMemcpyAsync(pp__gpt_slot_input(dm, g, act), slot, c->io, cudaMemcpyDeviceToDevice, v->stream));
            PP__CUDA_CHECK(pp__gpt_forward(dm, g, c->w, act, tok, tgt, c->loss + 1, v->ws, v->stream));
            if (s < pp__cuda_route_last(c, s))
                PP__CUDA_CHECK(cudaMemcpyAsync(pp__gpt_slot_doutput(dm, g, act), slot + c->io_stride, c->io,
                                         cudaMemcpyDeviceToDevice, v->stream));
        }
        if (op->kind == PP_B || op->kind == PP_BW) {
            PP__CUDA_CHECK(pp__gpt_backward_input(dm, g, c->w, act, tgt, dloss, v->ws, v->stream));
            if (op->sends) PP__CUDA_TRY(pp__cuda_to_send_buffer(c, v, PP_GRADIENT, s, j, pp__gpt_slot_dinput(dm, g, act), err));
        }
        if (op->kind == PP_W || op->kind == PP_BW) {
            PP__CUDA_CHECK(pp__gpt_backward_weight(dm, g, c->grad, act, tok, v->ws, v->stream));
            v->slot_owner[v->slot_of[pp__cuda_key(c, s, j)]] = -1;
            v->slot_of[pp__cuda_key(c, s, j)] = -1;
            v->live--;
        }
    }
    if (prof >= 0) PP__CUDA_CHECK(cudaEventRecord(v->prof[prof + 1], v->stream));
    return PP_CUDA_OK;
}

/* the consumer side of a transfer: the slot region a RECV or HANDOFF writes */
static pp_cuda_status pp__cuda_recv_region(pp_cuda *c, pp__cuda_dev *v, const pp_op *op, char **dst, char *err) {
    int cs = op->consumer;
    char *slot;
    if (cs < 0 || cs >= c->S || c->stage_device[cs] != v->device || op->microbatch < 0 || op->microbatch >= c->n)
        return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM, "device %d: %s of stage %d's %s mb %d has no consumer here (stage %d)",
                        v->device, pp_op_type_name(op->type), op->stage,
                        op->what == PP_ACTIVATION ? "activation" : "gradient", op->microbatch, cs);
    if (op->what == PP_ACTIVATION) PP__CUDA_TRY(pp__cuda_take(c, v, op->slot, cs, op->microbatch, err));
    PP__CUDA_TRY(pp__cuda_held(c, v, op->slot, cs, op->microbatch, &slot, err));
    *dst = pp__cuda_in_region(c, cs, slot, op->what == PP_GRADIENT);
    return PP_CUDA_OK;
}

/* HANDOFF (the turn of a V): the output waiting in this device's send buffer
   becomes its consumer's input, as a RECV from the device itself */
static pp_cuda_status pp__cuda_handoff(pp_cuda *c, pp__cuda_dev *v, const pp_op *op, char *err) {
    int b = 0;
    char *dst = NULL;
    PP__CUDA_TRY(pp__cuda_send_buffer(c, v, op, &b, err));
    PP__CUDA_TRY(pp__cuda_recv_region(c, v, op, &dst, err));
    PP__CUDA_CHECK(cudaMemcpyAsync(dst, v->sendbuf + (size_t)b * c->io_stride, c->io, cudaMemcpyDeviceToDevice, v->stream));
    v->send_owner[b] = -1; /* stream order: a later producer writes after this copy */
    return PP_CUDA_OK;
}

/* a compute or a hand-off: an op of this device alone */
static pp_cuda_status pp__cuda_local(pp_cuda *c, pp__cuda_dev *v, const pp_op *op, char *err) {
    return op->type == PP_OP_HANDOFF ? pp__cuda_handoff(c, v, op, err) : pp__cuda_compute(c, v, op, err);
}

/* NCCL mode: this rank's program, in order */
static pp_cuda_status pp__cuda_walk_nccl(pp_cuda *c, const pp_program *p, char *err) {
    pp__cuda_dev *v = &c->dev[0];
    int i = p->device_start[v->device], e, k;
    while (i < p->device_start[v->device + 1]) {
        const pp_op *op = &p->ops[i];
        if (!pp__cuda_is_comm(op)) {
            PP__CUDA_TRY(pp__cuda_local(c, v, op, err));
            i++;
            continue;
        }
        e = pp_program_group_end(p, v->device, i);
        /* check the peers first, so a bad program mostly fails outside the group */
        for (k = i; k < e; k++) {
            const pp_op *x = &p->ops[k];
            if (!pp__cuda_is_comm(x) || x->peer < 0 || x->peer >= c->d || x->peer == v->device)
                return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM, "device %d: op %d is a %s with peer %d", v->device,
                                k - p->device_start[v->device], x->type == PP_OP_SEND ? "SEND" : "RECV", x->peer);
        }
        PP__CUDA_NCCL(ncclGroupStart());
        for (k = i; k < e; k++) {
            const pp_op *x = &p->ops[k];
            pp_cuda_status st;
            ncclResult_t r;
            const char *call;
            if (x->type == PP_OP_SEND) {
                int b = 0;
                st = pp__cuda_send_buffer(c, v, x, &b, err);
                if (st != PP_CUDA_OK) { (void)ncclGroupEnd(); return st; }
                r = ncclSend(v->sendbuf + (size_t)b * c->io_stride, c->io, ncclUint8, x->peer, c->comm, v->stream);
                call = "ncclSend";
                v->send_owner[b] = -1; /* stream order: a later producer writes after the send is done */
            } else {
                char *dst = NULL;
                st = pp__cuda_recv_region(c, v, x, &dst, err);
                if (st != PP_CUDA_OK) { (void)ncclGroupEnd(); return st; }
                r = ncclRecv(dst, c->io, ncclUint8, x->peer, c->comm, v->stream);
                call = "ncclRecv";
            }
            if (r != ncclSuccess) {
                (void)ncclGroupEnd();
                return pp__cuda_fail(err, PP_CUDA_ERR_NCCL, "%s(peer %d, stage %d mb %d) failed: %s at %s:%d", call,
                                x->peer, x->stage, x->microbatch, ncclGetErrorString(r), __FILE__, __LINE__);
            }
        }
        PP__CUDA_NCCL(ncclGroupEnd());
        i = e;
    }
    return PP_CUDA_OK;
}

/* one-GPU mode: one transfer, SEND op x on device a, its RECV y on device b */
static pp_cuda_status pp__cuda_transfer(pp_cuda *c, const pp_op *x, const pp_op *y, int a, int b, int t, char *err) {
    pp__cuda_dev *va = &c->dev[a], *vb = &c->dev[b];
    char *dst = NULL;
    int sb = 0;
    PP__CUDA_TRY(pp__cuda_send_buffer(c, va, x, &sb, err));
    PP__CUDA_TRY(pp__cuda_recv_region(c, vb, y, &dst, err));
    PP__CUDA_CHECK(cudaEventRecord(c->xfer[2 * t], va->stream));
    PP__CUDA_CHECK(cudaStreamWaitEvent(vb->stream, c->xfer[2 * t], 0));
    PP__CUDA_CHECK(cudaMemcpyAsync(dst, va->sendbuf + (size_t)sb * c->io_stride, c->io, cudaMemcpyDeviceToDevice, vb->stream));
    PP__CUDA_CHECK(cudaEventRecord(c->xfer[2 * t + 1], vb->stream));
    PP__CUDA_CHECK(cudaStreamWaitEvent(va->stream, c->xfer[2 * t + 1], 0)); /* as ncclSend: done when received */
    va->send_owner[sb] = -1;
    return PP_CUDA_OK;
}

/* one-GPU mode: issue every device's program, interleaved under NCCL's rules */
static pp_cuda_status pp__cuda_walk_one_gpu(pp_cuda *c, const pp_program *p, char *err) {
    int d = p->devices, i, dev, t = 0, left = d, comm = 0;
    int *pc = (int *)malloc(sizeof(int) * (size_t)d);
    int *partner = (int *)malloc(sizeof(int) * (size_t)(p->num_ops + 1));
    unsigned char *done = (unsigned char *)calloc((size_t)p->num_ops + 1, 1);
    pp_cuda_status st = PP_CUDA_OK;
    pp_status ps;
    if (!pc || !partner || !done) {
        st = pp__cuda_fail(err, PP_CUDA_ERR_HOST_MEMORY, "out of host memory");
        goto end;
    }
    /* the k-th send a->b meets the k-th receive on b from a: pp_sched.h's pairing rule */
    ps = pp_program_pair(p, partner, err);
    if (ps != PP_OK) {
        st = ps == PP_ERR_OUT_OF_MEMORY ? PP_CUDA_ERR_HOST_MEMORY : PP_CUDA_ERR_PROGRAM;
        goto end;
    }
    for (i = 0; i < p->num_ops; i++) {
        const pp_op *x = &p->ops[i];
        if (!pp__cuda_is_comm(x)) continue;
        comm++;
        if (partner[i] < 0) {
            int a = pp__cuda_op_device(p, i);
            st = pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM, "device %d: op %d, a %s of stage %d mb %d %s device %d, meets "
                               "no op on that device (a channel needs as many receives as sends)", a,
                               i - p->device_start[a], pp_op_type_name(x->type), x->stage, x->microbatch,
                               x->type == PP_OP_SEND ? "to" : "from", x->peer);
            goto end;
        }
    }
    st = pp__cuda_events(&c->xfer, &c->nxfer, comm, cudaEventDisableTiming, err); /* 2 per send */
    if (st != PP_CUDA_OK) goto end;
    for (dev = 0; dev < d; dev++) pc[dev] = p->device_start[dev];
    while (left > 0) {
        int progress = 0;
        left = 0;
        for (dev = 0; dev < d; dev++) {
            while (pc[dev] < p->device_start[dev + 1]) {
                const pp_op *op = &p->ops[pc[dev]];
                int e, k, all = 1;
                if (!pp__cuda_is_comm(op)) {
                    st = pp__cuda_local(c, &c->dev[dev], op, err);
                    if (st != PP_CUDA_OK) goto end;
                    pc[dev]++;
                    progress = 1;
                    continue;
                }
                e = pp_program_group_end(p, dev, pc[dev]);
                for (k = pc[dev]; k < e; k++) {
                    int q = partner[k], b;
                    if (done[k]) continue;
                    b = pp__cuda_op_device(p, q);
                    /* the partner is posted: its device stands at the group that holds it */
                    if (pc[b] <= q && pp__cuda_is_comm(&p->ops[pc[b]]) && q < pp_program_group_end(p, b, pc[b])) {
                        int sk = p->ops[k].type == PP_OP_SEND ? k : q, rk = sk == k ? q : k;
                        st = pp__cuda_transfer(c, &p->ops[sk], &p->ops[rk], pp__cuda_op_device(p, sk), pp__cuda_op_device(p, rk), t++, err);
                        if (st != PP_CUDA_OK) goto end;
                        done[k] = done[q] = 1;
                        progress = 1;
                    } else {
                        all = 0;
                    }
                }
                if (!all) break;
                pc[dev] = e;
                progress = 1;
            }
            if (pc[dev] < p->device_start[dev + 1]) left++;
        }
        if (left > 0 && !progress) {
            char *at = err;
            size_t room = PP_CUDA_ERR_LEN;
            st = PP_CUDA_ERR_PROGRAM;
            if (err) {
                int w = snprintf(at, room, "the programs deadlock:");
                for (dev = 0; dev < d && w > 0 && (size_t)w < room; dev++) {
                    const pp_op *op;
                    at += w;
                    room -= (size_t)w;
                    if (pc[dev] >= p->device_start[dev + 1]) { w = 0; continue; }
                    op = &p->ops[pc[dev]];
                    w = snprintf(at, room, " device %d waits at its op %d (%s stage %d mb %d, peer %d);", dev,
                                 pc[dev] - p->device_start[dev], pp_op_type_name(op->type), op->stage,
                                 op->microbatch, op->peer);
                }
            }
            goto end;
        }
    }
end:
    free(pc);
    free(partner);
    free(done);
    return st;
}

static pp_cuda_status pp__cuda_step(pp_cuda *c, const pp_program *p, const int *inputs, const int *targets, float *loss,
                               char *err) {
    int l, i;
    float host_loss = 0;
    size_t bytes;
    if (!c || !p || !inputs || !targets || !loss)
        return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "pp_cuda_step needs a context, a program, inputs, targets and a loss pointer");
    if (p->devices != c->d || p->stages != c->S || p->microbatches != c->n || !p->ops || !p->device_start)
        return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM,
                        "the program has d=%d, %d stages, n=%d; the context was made for d=%d, %d stages, n=%d",
                        p->devices, p->stages, p->microbatches, c->d, c->S, c->n);
    for (l = 0; l < c->nlocal; l++) {
        pp__cuda_dev *v = &c->dev[l];
        int slots, sends;
        pp__cuda_count(p, v->device, &slots, &sends);
        if (slots > v->nslots || sends > v->nsend)
            return pp__cuda_fail(err, PP_CUDA_ERR_PROGRAM,
                            "device %d: the program needs %d slots and %d send buffers, the context has %d and %d "
                            "(create it with this program)", v->device, slots, sends, v->nslots, v->nsend);
        for (i = 0; i < v->nslots; i++) v->slot_owner[i] = -1;
        for (i = 0; i < c->S * c->n; i++) v->slot_of[i] = -1;
        for (i = 0; i < v->nsend; i++) v->send_owner[i] = -1;
        v->live = 0;
        v->prof_used = 0;
        if (c->profile) PP__CUDA_TRY(pp__cuda_prof_pool(v, pp__cuda_count_ops(p, v->device, PP_OP_COMPUTE), err));
    }
    /* start: data up, gradients and loss zeroed, then every device stream may go */
    bytes = (size_t)c->n * c->N * sizeof(int);
    PP__CUDA_CHECK(cudaMemcpyAsync(c->tokens, inputs, bytes, cudaMemcpyHostToDevice, c->main));
    PP__CUDA_CHECK(cudaMemcpyAsync(c->targets, targets, bytes, cudaMemcpyHostToDevice, c->main));
    PP__CUDA_CHECK(cudaMemsetAsync(c->grad, 0, c->P * sizeof(float), c->main));
    PP__CUDA_CHECK(cudaMemsetAsync(c->loss, 0, 2 * sizeof(float), c->main));
    PP__CUDA_CHECK(cudaEventRecord(c->ev_start, c->main));
    for (l = 0; l < c->nlocal; l++) PP__CUDA_CHECK(cudaStreamWaitEvent(c->dev[l].stream, c->ev_start, 0));
    PP__CUDA_TRY(c->mode == PP_CUDA_NCCL ? pp__cuda_walk_nccl(c, p, err) : pp__cuda_walk_one_gpu(c, p, err));
    for (l = 0; l < c->nlocal; l++) {
        PP__CUDA_CHECK(cudaEventRecord(c->dev[l].done, c->dev[l].stream));
        PP__CUDA_CHECK(cudaStreamWaitEvent(c->main, c->dev[l].done, 0));
    }
    /* the loss lives on the last stage's device: every rank gets it */
    if (c->mode == PP_CUDA_NCCL) PP__CUDA_NCCL(ncclAllReduce(c->loss, c->loss, 1, ncclFloat, ncclSum, c->comm, c->main));
    /* dualpipe: rank r holds copy A's stage r and copy B's stage d-1-r, so the
       two copies' gradients of a stage sit on two ranks; summing the whole
       array (zero where a rank computed nothing) gives every rank the sum,
       as the one-GPU mode's shared gradient array does */
    if (c->mode == PP_CUDA_NCCL && c->half != c->S)
        PP__CUDA_NCCL(ncclAllReduce(c->grad, c->grad, c->P, ncclFloat, ncclSum, c->comm, c->main));
    PP__CUDA_CHECK(cudaEventRecord(c->ev_end, c->main));
    PP__CUDA_TRY(pp__cuda_wait(c, c->main, err));
    PP__CUDA_CHECK(cudaMemcpyAsync(&host_loss, c->loss, sizeof(float), cudaMemcpyDeviceToHost, c->main));
    PP__CUDA_CHECK(cudaStreamSynchronize(c->main));
    *loss = host_loss / (float)c->n;
    if (c->profile) {
        float ms = 0;
        PP__CUDA_CHECK(cudaEventElapsedTime(&ms, c->ev_start, c->ev_end));
        c->step_ms = ms;
        for (l = 0; l < c->nlocal; l++) {
            pp__cuda_dev *v = &c->dev[l];
            v->busy_ms = 0;
            for (i = 0; i + 1 < v->prof_used; i += 2) {
                PP__CUDA_CHECK(cudaEventElapsedTime(&ms, v->prof[i], v->prof[i + 1]));
                v->busy_ms += ms;
                c->pass_sum[v->prof_key[i]] += ms;
                c->pass_count[v->prof_key[i]]++;
            }
        }
    }
    return PP_CUDA_OK;
}

pp_cuda_status pp_cuda_step(pp_cuda *c, const pp_program *p, const int *inputs, const int *targets, float *loss,
                            char *err) {
    pp_cuda_status st = pp__cuda_step(c, p, inputs, targets, loss, err);
    if (st != PP_CUDA_OK && c && c->mode == PP_CUDA_NCCL) c->failed = 1;
    return st;
}

pp_cuda_status pp_cuda_update(pp_cuda *c, char *err) {
    if (!c) return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "pp_cuda_update needs a context");
    c->t++;
    PP__CUDA_CHECK(pp__gpt_adamw(c->master, c->grad, c->m, c->v, c->P, c->opt.lr, c->opt.beta1, c->opt.beta2, c->opt.eps,
                           c->opt.weight_decay, c->t, c->main));
    PP__CUDA_CHECK(pp__gpt_to_bf16(c->w, c->master, c->P, c->main));
    return PP_CUDA_OK;
}

/* ---- getters ---- */

size_t pp_cuda_num_params(const pp_cuda *c) { return c ? c->P : 0; }

static pp_cuda_status pp__cuda_copy(pp_cuda *c, void *dst, const void *src, cudaMemcpyKind kind, char *err) {
    if (!c || !dst || !src) return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "needs a context and a host array");
    PP__CUDA_CHECK(cudaStreamSynchronize(c->main));
    PP__CUDA_CHECK(cudaMemcpyAsync(dst, src, c->P * sizeof(float), kind, c->main));
    PP__CUDA_CHECK(cudaStreamSynchronize(c->main));
    return PP_CUDA_OK;
}
pp_cuda_status pp_cuda_get_params(pp_cuda *c, float *host, char *err) {
    return pp__cuda_copy(c, host, c ? c->master : NULL, cudaMemcpyDeviceToHost, err);
}
pp_cuda_status pp_cuda_get_grads(pp_cuda *c, float *host, char *err) {
    return pp__cuda_copy(c, host, c ? c->grad : NULL, cudaMemcpyDeviceToHost, err);
}
pp_cuda_status pp_cuda_set_params(pp_cuda *c, const float *host, char *err) {
    PP__CUDA_TRY(pp__cuda_copy(c, c ? c->master : NULL, host, cudaMemcpyHostToDevice, err));
    PP__CUDA_CHECK(pp__gpt_to_bf16(c->w, c->master, c->P, c->main));
    PP__CUDA_CHECK(cudaStreamSynchronize(c->main));
    return PP_CUDA_OK;
}

void pp_cuda_memory_info(const pp_cuda *c, pp_cuda_memory *out) {
    if (!out) return;
    if (!c) { memset(out, 0, sizeof *out); return; }
    *out = c->mem;
}

pp_cuda_status pp_cuda_device_info(const pp_cuda *c, int device, pp_cuda_device *out) {
    int l;
    char *err = NULL;
    if (!c || !out || device < 0 || device >= c->d)
        return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "bad device");
    memset(out, 0, sizeof *out);
    for (l = 0; l < c->nlocal; l++)
        if (c->dev[l].device == device) {
            const pp__cuda_dev *v = &c->dev[l];
            out->local = 1;
            out->slots = v->nslots;
            out->peak_slots = v->peak;
            out->slot_bytes = v->slot_bytes;
            out->send_buffers = v->nsend;
            out->busy_ms = v->busy_ms;
        }
    return PP_CUDA_OK;
}

double pp_cuda_pass_ms(const pp_cuda *c, int stage, pp_kind kind) {
    int k;
    if (!c || stage < 0 || stage >= c->S || (int)kind < 0 || (int)kind > 3) return 0;
    k = stage * 4 + (int)kind;
    return c->pass_count[k] ? c->pass_sum[k] / (double)c->pass_count[k] : 0;
}

pp_cuda_status pp_cuda_stage_times(pp_cuda *c, pp_times *out, char *err) {
    int s, k, S;
    double *sum, *cnt;
    if (!c || !out) return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG, "pp_cuda_stage_times needs a context and out[S]");
    S = c->S;
    sum = (double *)malloc(sizeof(double) * 8 * (size_t)S);
    if (!sum) return pp__cuda_fail(err, PP_CUDA_ERR_HOST_MEMORY, "out of host memory");
    cnt = sum + 4 * S;
    for (k = 0; k < 4 * S; k++) {
        sum[k] = c->pass_sum[k];
        cnt[k] = (double)c->pass_count[k];
    }
    if (c->mode == PP_CUDA_NCCL) { /* each rank measured its own stages */
        cudaError_t e = cudaMemcpyAsync(c->times_dev, sum, sizeof(double) * 8 * (size_t)S, cudaMemcpyHostToDevice, c->main);
        ncclResult_t r = e == cudaSuccess ? ncclAllReduce(c->times_dev, c->times_dev, 8 * (size_t)S, ncclDouble, ncclSum,
                                                          c->comm, c->main) : ncclSuccess;
        if (e == cudaSuccess && r == ncclSuccess) {
            pp_cuda_status st = pp__cuda_wait(c, c->main, err);
            if (st != PP_CUDA_OK) {
                free(sum);
                return st;
            }
        }
        if (e == cudaSuccess && r == ncclSuccess)
            e = cudaMemcpyAsync(sum, c->times_dev, sizeof(double) * 8 * (size_t)S, cudaMemcpyDeviceToHost, c->main);
        if (e == cudaSuccess && r == ncclSuccess) e = cudaStreamSynchronize(c->main);
        if (e != cudaSuccess || r != ncclSuccess) {
            free(sum);
            c->failed = 1;
            if (r != ncclSuccess)
                return pp__cuda_fail(err, PP_CUDA_ERR_NCCL, "ncclAllReduce(times) failed: %s at %s:%d", ncclGetErrorString(r), __FILE__, __LINE__);
            return pp__cuda_fail(err, PP_CUDA_ERR_CUDA, "copying the pass times failed: %s at %s:%d", cudaGetErrorString(e), __FILE__, __LINE__);
        }
    }
    for (s = 0; s < S; s++) {
        double mean[4];
        for (k = 0; k < 4; k++) mean[k] = cnt[s * 4 + k] > 0 ? sum[s * 4 + k] / cnt[s * 4 + k] : 0;
        out[s].f = mean[PP_F];
        out[s].comm = 0;
        if (cnt[s * 4 + PP_B] > 0) {
            out[s].b = mean[PP_B];
            out[s].w = mean[PP_W];
        } else {
            double bw = mean[PP_BW] - (c->recompute ? mean[PP_F] : 0);
            out[s].b = out[s].w = bw > 0 ? bw / 2 : mean[PP_F];
        }
        if (!(out[s].f > 0 && out[s].b > 0)) {
            free(sum);
            return pp__cuda_fail(err, PP_CUDA_ERR_INVALID_ARG,
                            "stage %d has no measured passes: create the context with profile = 1 and run a step first", s);
        }
    }
    free(sum);
    return PP_CUDA_OK;
}

double pp_cuda_step_ms(const pp_cuda *c) { return c ? c->step_ms : 0; }

void pp_cuda_reset_stats(pp_cuda *c) {
    int l, k;
    if (!c) return;
    for (k = 0; k < 4 * c->S; k++) {
        c->pass_sum[k] = 0;
        c->pass_count[k] = 0;
    }
    for (l = 0; l < c->nlocal; l++) {
        c->dev[l].peak = 0;
        c->dev[l].busy_ms = 0;
    }
    c->step_ms = 0;
}

int pp_cuda_rank(const pp_cuda *c) { return c ? c->rank : -1; }
int pp_cuda_world(const pp_cuda *c) { return c ? c->world : 0; }

/*
MIT License

Copyright (c) 2026 the pp_sched authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
*/
