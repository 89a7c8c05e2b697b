/* pp_cuda.h - v0.1.0 - runs pp_sched's per-device programs on NVIDIA GPUs - MIT licence (see end of file)

   A thin executor: it walks the program pp_sched_lower() made for a
   pipeline device, op by op, and maps every op to GPU work: a COMPUTE to
   the forward, input-gradient (B) or weight-gradient (W) pass of one
   pipeline stage of a small GPT, a SEND/RECV to ncclSend/ncclRecv (grouped
   as the lowering says) or, inside one process, to a device-to-device copy.
   It is written so that an engine like llm.c can adopt pipeline
   parallelism with any of pp_sched's schedules: the engine may hand over
   the CUDA stream and the NCCL communicator it already has.

   This header is plain C99 (it compiles with a C compiler and no CUDA
   headers): the context is opaque, streams and communicators travel as
   void*. The implementation is pp_cuda.cu (compile it once with nvcc and
   link the object; it includes pp_cuda_gpt.cuh, the model's kernels):
       nvcc -O2 -c pp_cuda.cu -o pp_cuda.o
       cc -c app.c && nvcc app.o pp_cuda.o -lnccl -o app
   pp_cuda.cu uses only pp_sched.h's types; the one translation unit of your
   program that defines PP_SCHED_IMPLEMENTATION provides its functions.

QUICK START (one GPU, the 4 devices of v-half simulated on it)
   #include <stdio.h>
   #define PP_SCHED_IMPLEMENTATION
   #include "pp_sched.h"
   #include "pp_cuda.h"

   int main(void) {
       static int tok[8 * 256], tgt[8 * 256];    // 8 microbatches of batch*seq = 4*64 tokens
       for (int i = 0; i < 8 * 256; i++) { tok[i] = i % 7; tgt[i] = (i + 1) % 7; }
       pp_config sc = {0};
       sc.schedule = "v-half"; sc.devices = 4; sc.microbatches = 8;
       char err[PP_CUDA_ERR_LEN];
       pp_schedule *s; pp_program *prog; pp_cuda *ctx;
       if (pp_sched_build(&sc, &s, err) || pp_sched_lower(s, &prog, err)) { fprintf(stderr, "%s\n", err); return 1; }
       pp_cuda_config cfg = {0};                  // zero = default: one GPU here, 2 layers per stage
       cfg.program = prog; cfg.model.vocab = 7;
       if (pp_cuda_create(&cfg, &ctx, err) != PP_CUDA_OK) { fprintf(stderr, "%s\n", err); return 1; }
       for (int step = 0; step < 30; step++) {
           float loss;
           if (pp_cuda_step(ctx, prog, tok, tgt, &loss, err) || pp_cuda_update(ctx, err)) { fprintf(stderr, "%s\n", err); break; }
           if (step % 10 == 0) printf("step %d loss %.3f\n", step, loss);
       }
       pp_cuda_destroy(ctx); pp_program_free(prog); pp_sched_free(s);
       return 0;
   }
   Build: cc -std=c99 -c quick.c && nvcc -c pp_cuda.cu && nvcc quick.o pp_cuda.o -lnccl -o quick
   Output: the loss at steps 0, 10, 20, falling from about ln 7 = 1.95. No
   GPU has run it yet. On the CUDA emulator (emu/gpu: these kernels
   and this executor on the CPU, checkers on, no finding), with
   cfg.model.channels = 32, seq = 16, batch = 1 added to keep it to 5 CPU
   minutes, it printed (emulated, not GPU output):
       step 0 loss 1.962
       step 10 loss 1.357
       step 20 loss 1.095
   examples/train_gpt.cu is the complete program.

MODES
   one GPU     (PP_CUDA_ONE_GPU) one process runs all d devices' programs on
               one GPU: one CUDA stream per pipeline device, cudaEvents for
               the dependencies, device-to-device copies for the transfers.
               It exists to test the executor, the memory plan and the
               numerics on a single GPU (NCCL up to 2.29 rejects two ranks
               on one GPU); it is not faster than one device.
   NCCL        (PP_CUDA_NCCL) one process per GPU; this process runs device
               r's program, r = its rank. Transfers are ncclSend/ncclRecv.
   auto        (zero) NCCL when a communicator is given or the launcher
               started more than one process, else one GPU.

TWO MODEL COPIES (dualpipe, pp_schedule.copies = 2)
   Stages d..2d-1 are the second copy's stages 0..d-1 (the model has d
   stages); a microbatch runs through its copy only. Both copies read one
   weight array and add into one gradient array, so the step equals the
   one-copy step (DualPipe's gradients of the two copies are summed). In
   NCCL mode the gradient array is all-reduced over the ranks after the
   step, which gives every rank that sum.

LAUNCHING (NCCL mode; train_gpt stands for your program)
   The rank, the number of ranks and the local rank come from the launcher:
   mpirun (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK; MPICH's PMI_RANK/PMI_SIZE),
   srun (SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID) or torchrun
   (RANK/WORLD_SIZE/LOCAL_RANK); where several are set, torchrun's come
   first, then mpirun's, then srun's (torchrun started by srun, mpirun in a
   Slurm allocation). The process uses GPU (local rank mod the GPUs it
   sees). The NCCL id comes from NCCL's own bootstrap: set
   NCCL_COMM_ID=host:port (a free port on the host of rank 0) in every
   rank's environment and every rank gets the same id from
   ncclGetUniqueId. Built with make MPI=1 (-DPP_CUDA_MPI), rank 0's id is
   broadcast with MPI instead and NCCL_COMM_ID is not needed; MPI is
   initialised by the first context if the program has not done it, and
   then finalised at exit (not by pp_cuda_destroy: a later context still
   needs it).
   one node, 4 GPUs:
       NCCL_COMM_ID=127.0.0.1:29511 mpirun -np 4 -x NCCL_COMM_ID ./train_gpt -s v-half -d 4 -n 16
       NCCL_COMM_ID=127.0.0.1:29511 srun -n 4 --gpus-per-task 1 ./train_gpt -s v-half -d 4 -n 16
       NCCL_COMM_ID=127.0.0.1:29511 torchrun --standalone --nproc_per_node 4 --no-python ./train_gpt -s v-half -d 4 -n 16
   two nodes, 8 GPUs (node0 runs rank 0):
       mpirun -np 8 -H node0:4,node1:4 -x NCCL_COMM_ID=node0:29511 ./train_gpt -s v-half -d 8 -n 32
       NCCL_COMM_ID=node0:29511 srun -N 2 --ntasks-per-node 4 --gpus-per-task 1 ./train_gpt -s v-half -d 8 -n 32
       (on each node) NCCL_COMM_ID=node0:29511 torchrun --nnodes 2 --nproc_per_node 4 --node_rank K
           --master_addr node0 --no-python ./train_gpt -s v-half -d 8 -n 32
       with make MPI=1: mpirun -np 8 -H node0:4,node1:4 ./train_gpt -s v-half -d 8 -n 32
   The number of ranks must equal the program's devices.

PRECISION
   fp32 master weights, fp32 gradients and AdamW state; a bf16 copy of the
   weights that the kernels read; activations kept in bf16 (layernorm
   statistics, softmax statistics and per-token losses in fp32); matmuls
   accumulate in fp32. Tensors crossing devices are bf16, batch*seq*channels
   values. Gradients accumulate in place (+=) in fp32 in the order the
   schedule runs the W passes, so a pipelined step equals the unpipelined
   step to rounding, not bitwise. The loss is the mean over microbatches of
   each microbatch's mean token loss; d(loss)/d(token loss) = 1/(N*n) with
   N = batch*seq tokens per microbatch and n microbatches.

MEMORY PLAN (pp_cuda_plan; the same numbers pp_cuda_create allocates)
   activation slots  device i gets program->slots[i] slots (the schedule's
               predicted peak in chunk activations), each one stage's
               activation for one microbatch (the largest stage the device
               holds). 1f1b-r: a slot keeps the stage input and the gradient
               that arrives for it (2 boundary tensors), plus one full
               scratch slot per device where BW redoes the forward.
   send buffers program->send_buffers[i] boundary tensors: an output waits
               there from its producer to its SEND or HANDOFF (the slot may
               be reused by then).
   weights     fp32 master + bf16 copy; gradients fp32; AdamW m and v fp32.
               The whole model on every GPU (a small-model runtime): a rank
               computes only its stages; AdamW runs over the whole array,
               where the other stages' gradients are zero.
   workspaces  scratch of one pass, one per stream.
   data        the step's tokens and targets.
   pp_cuda_create checks the total against cudaMemGetInfo's free bytes (or
   cfg.memory_budget when smaller) BEFORE allocating anything and returns
   PP_CUDA_ERR_NO_MEMORY with both numbers; slots are allocated once, never
   during a step.

API (status-returning calls fill err[PP_CUDA_ERR_LEN] on failure; err may be NULL)
   pp_cuda_device_count()              GPUs visible (0 when CUDA has none or fails)
   pp_cuda_plan(cfg, device, &mem, err)  bytes one device needs (-1: a one-GPU process), no GPU touched
   pp_cuda_create(cfg, &ctx, err)      start-up, memory check, allocation, weight init
   pp_cuda_step(ctx, prog, inputs, targets, &loss, err)  one step: fills the gradients, returns the loss
   pp_cuda_update(ctx, err)            AdamW on the gradients of the last step
   pp_cuda_destroy(ctx)                frees everything it created (not a stream or comm it was given)
   pp_cuda_num_params(ctx), pp_cuda_get_params / pp_cuda_set_params / pp_cuda_get_grads (host fp32,
                                       the layout of ref/gpt_ref.h's gpt_param_sizes)
   pp_cuda_memory_info(ctx, &mem)      the plan, free bytes at start, measured slot bytes
   pp_cuda_device_info(ctx, dev, &info)  slots, measured peak live slots, bytes, busy time
   pp_cuda_pass_ms(ctx, stage, kind)   mean measured time of F, B, W or BW of a stage (profile = 1)
   pp_cuda_stage_times(ctx, times, err)  those as pp_config.stage_times for re-planning
   pp_cuda_step_ms(ctx)                GPU time of the last step (profile = 1)
   pp_cuda_reset_stats(ctx)            forget measured times and peaks
   pp_cuda_rank(ctx), pp_cuda_world(ctx)   this process's pipeline device and their number
   pp_cuda_status_string(st)

ERRORS
   One status enum (PP_CUDA_STATUS_LIST). Every CUDA and NCCL call is
   checked; a failure returns PP_CUDA_ERR_CUDA / PP_CUDA_ERR_NCCL with a
   message naming the call, its error string, the file and the line. Bad
   configurations and programs get a sentence that says what was wrong.
   Nothing prints, nothing exits. After a CUDA or NCCL error inside a step
   the context should be destroyed. In NCCL mode every wait for the GPU
   (the end of a step, pp_cuda_create's memory check, which the ranks agree
   on, pp_cuda_stage_times) watches the communicator's asynchronous error
   (ncclCommGetAsyncError) while the stream runs: when NCCL reports a peer
   that died or aborted, the call returns PP_CUDA_ERR_NCCL with NCCL's own
   message (ncclGetLastError) instead of waiting for ever. Whether NCCL
   notices a dead peer depends on its transport; where it does not, the
   peers still wait inside NCCL, so end the job from the launcher.
   pp_cuda_destroy after a failed step aborts the communicator it created
   (ncclCommAbort), so the failed rank itself does not wait there.

THREADS
   A context is used by one host thread at a time. No mutable globals.

DOES NOT
   tensor or data parallelism, gradient clipping, mixed programs (every
   rank runs the same pp_cuda build), checkpointing, model sizes beyond what
   fits whole on one GPU, overlap of a rank's transfers with its own
   compute (one stream per device: NCCL calls and kernels take turns), two
   ranks on one GPU (use the one-GPU mode). Every output bound for another
   device is copied into a send buffer (one device copy per transfer), even
   where its slot would still be alive at the SEND.

REVISION HISTORY
   0.1.0  first version: one-GPU and NCCL modes, memory plan, profiling.
*/
#ifndef PP_CUDA_H
#define PP_CUDA_H

#include <stddef.h>
#include "pp_sched.h"

#define PP_CUDA_VERSION_MAJOR 0
#define PP_CUDA_VERSION_MINOR 1
#define PP_CUDA_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

#define PP_CUDA_ERR_LEN 512

#define PP_CUDA_STATUS_LIST(X)                                                 \
    X(PP_CUDA_OK, "ok")                                                        \
    X(PP_CUDA_ERR_INVALID_ARG, "invalid argument")                             \
    X(PP_CUDA_ERR_NO_DEVICE, "no CUDA device")                                 \
    X(PP_CUDA_ERR_NO_MEMORY, "not enough free GPU memory")                     \
    X(PP_CUDA_ERR_HOST_MEMORY, "out of host memory")                           \
    X(PP_CUDA_ERR_CUDA, "CUDA call failed")                                    \
    X(PP_CUDA_ERR_NCCL, "NCCL call failed")                                    \
    X(PP_CUDA_ERR_BOOTSTRAP, "multi-GPU start-up failed")                      \
    X(PP_CUDA_ERR_PROGRAM, "program does not fit the context or cannot run")

typedef enum pp_cuda_status {
#define PP_CUDA__ENUM(name, str) name,
    PP_CUDA_STATUS_LIST(PP_CUDA__ENUM)
#undef PP_CUDA__ENUM
    PP_CUDA_STATUS_COUNT
} pp_cuda_status;

typedef enum pp_cuda_mode { PP_CUDA_AUTO = 0, PP_CUDA_ONE_GPU = 1, PP_CUDA_NCCL = 2 } pp_cuda_mode;

/* The GPT of ref/gpt_ref.h. Zero fields take the defaults named here. */
typedef struct pp_cuda_model {
    int vocab;    /* 0 = 256 (bytes as tokens) */
    int seq;      /* tokens per sequence; 0 = 64 */
    int channels; /* 0 = 128 */
    int heads;    /* 0 = 4 */
    int layers;   /* 0 = 2 per stage; at least the schedule's stages */
    int batch;    /* sequences per microbatch; 0 = 4 */
} pp_cuda_model;

/* AdamW (as llm.c). Zero fields take the defaults. */
typedef struct pp_cuda_optimizer {
    float lr;           /* 0 = 1e-3 */
    float beta1, beta2; /* 0 = 0.9, 0.999 */
    float eps;          /* 0 = 1e-8 */
    float weight_decay; /* 0 = none */
} pp_cuda_optimizer;

typedef struct pp_cuda_config {
    const pp_program *program;   /* required: pp_sched_lower(schedule); all the executor reads of the
                                    schedule: stages, placement, routes, recomputation, ops,
                                    slots and send buffers */
    pp_cuda_model model;
    pp_cuda_optimizer opt;
    unsigned long long seed;     /* weight init, that of gpt_ref.h's gpt_init(seed) */
    pp_cuda_mode mode;           /* 0 = auto */
    void *stream;                /* cudaStream_t to run on; NULL = the context makes its own.
                                    One-GPU mode: the stream the step starts and ends on */
    void *comm;                  /* ncclComm_t with one rank per device; NULL = bootstrap (LAUNCHING) */
    size_t memory_budget;        /* bytes this context may take; 0 = cudaMemGetInfo's free bytes */
    int profile;                 /* 1 = time every pass with CUDA events */
} pp_cuda_config;

/* Bytes, as planned (pp_cuda_plan) or as allocated (pp_cuda_memory_info). */
typedef struct pp_cuda_memory {
    size_t activations;   /* activation slots */
    size_t send_buffers;
    size_t scratch;       /* 1f1b-r: a full slot per device for the recomputed forward */
    size_t weights;       /* fp32 master + bf16 copy */
    size_t grads;
    size_t optimizer;     /* AdamW m, v */
    size_t workspaces;
    size_t data;          /* tokens, targets, loss */
    size_t total;
    size_t free_at_start;        /* pp_cuda_memory_info: cudaMemGetInfo's free bytes before allocating */
    size_t measured_activations; /* pp_cuda_memory_info: drop of the free bytes across the slot allocations */
} pp_cuda_memory;

typedef struct pp_cuda_device {
    int local;            /* 1 when this process runs the device */
    int slots;            /* slots allocated (program->slots[device]) */
    int peak_slots;       /* most (stage, microbatch) activations live at once, measured since create/reset */
    size_t slot_bytes;    /* one slot */
    int send_buffers;     /* send buffers allocated */
    double busy_ms;       /* profile: GPU time in compute ops during the last step */
} pp_cuda_device;

typedef struct pp_cuda pp_cuda; /* opaque */

const char *pp_cuda_status_string(pp_cuda_status st);
int pp_cuda_device_count(void);
pp_cuda_status pp_cuda_plan(const pp_cuda_config *cfg, int device, pp_cuda_memory *out, char *err);
pp_cuda_status pp_cuda_create(const pp_cuda_config *cfg, pp_cuda **out, char *err);
pp_cuda_status pp_cuda_step(pp_cuda *ctx, const pp_program *program, const int *inputs, const int *targets,
                            float *loss, char *err);
pp_cuda_status pp_cuda_update(pp_cuda *ctx, char *err);
void pp_cuda_destroy(pp_cuda *ctx);

size_t pp_cuda_num_params(const pp_cuda *ctx);
pp_cuda_status pp_cuda_get_params(pp_cuda *ctx, float *host, char *err);
pp_cuda_status pp_cuda_set_params(pp_cuda *ctx, const float *host, char *err);
pp_cuda_status pp_cuda_get_grads(pp_cuda *ctx, float *host, char *err);

void pp_cuda_memory_info(const pp_cuda *ctx, pp_cuda_memory *out);
pp_cuda_status pp_cuda_device_info(const pp_cuda *ctx, int device, pp_cuda_device *out);
double pp_cuda_pass_ms(const pp_cuda *ctx, int stage, pp_kind kind);
/* out[S]: f, b, w of each stage in ms (BW split evenly into b and w; 1f1b-r's
   recomputed forward left out); comm 0. NCCL mode: a collective, every rank
   calls it and gets every stage. */
pp_cuda_status pp_cuda_stage_times(pp_cuda *ctx, pp_times *out, char *err);
double pp_cuda_step_ms(const pp_cuda *ctx);
void pp_cuda_reset_stats(pp_cuda *ctx);
int pp_cuda_rank(const pp_cuda *ctx);
int pp_cuda_world(const pp_cuda *ctx);

#ifdef __cplusplus
}
#endif
#endif /* PP_CUDA_H */

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
