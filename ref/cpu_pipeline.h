/* cpu_pipeline.h - runs one training step of the gpt_ref.h model through a
   pp_sched schedule: one pthread per device, each executing its lowered
   program (pp_sched_lower), SEND/RECV through blocking channels.

   Include after pp_sched.h and gpt_ref.h (float). Used by
   tests/test_runtime.c and examples/train_cpu.c. Link with -lpthread -lm.

   Channels behave like NCCL point-to-point calls: a device posts the SENDs
   of a group (pp_program_group_end: consecutive SEND/RECV ops with one
   group id), then waits for each RECV of the group, then waits until
   every one of its SENDs was received. A
   SEND therefore blocks until its RECV is posted (rendezvous), and the k-th
   send a->b meets the k-th receive on b from a (pp_program_pair: a program
   whose pairs carry different data is refused before the step runs).
   So an ordering bug deadlocks here as it would on GPUs; every wait has a
   deadline, and a device that passes it stops the step and reports the op
   it waited on.

   Memory: each device owns program->slots[d] activation slots, each one
   stage's gpt_ref activation buffer (1f1b-r: the stage input only, and one
   scratch buffer where BW recomputes the forward). A (stage, microbatch)
   takes its slot at F (the slot the lowering chose) and gives it back after
   W or BW; the runtime checks the slot is free when taken and counts the
   most live at once. Data in flight sits in two mailboxes per device: the
   producer of an output with a SEND or HANDOFF after it (op.sends) writes
   it to its out-box, by (payload, producing stage, microbatch); a SEND
   reads it there; a RECV, or a HANDOFF on the same device (the turn of a
   V), writes it into the in-box of its consumer, by (payload, consuming
   stage, microbatch), where the consumer reads its input. The runtime
   reads the program alone: it knows no dependency rule of its own.

   Gradients: W of (stage s, microbatch j) accumulates into a gradient
   buffer of microbatch j (stage s's parameters only); after the step the
   buffers are summed in microbatch order. The one-device reference does
   the same, so pipelined and unpipelined gradients are bitwise equal.

   Two model copies (dualpipe, program copies == 2): stages S/2..S-1 are a second
   copy of stages 0..S/2-1 (same layers, same parameters here: the copies
   start equal and DualPipe keeps them so); microbatch j < n/2 runs the
   first, the others the second. Both write their gradients into microbatch
   j's buffer in the model's one layout, so the sum in microbatch order adds
   the two copies' gradients exactly as the one-device reference does. */
#ifndef CPU_PIPELINE_H
#define CPU_PIPELINE_H

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define CPU_PIPE_MAX_DEVICES 64

typedef struct cpu_pipe_stats {
    double loss;                               /* mean over microbatches of each one's mean token loss */
    int peak_live[CPU_PIPE_MAX_DEVICES];       /* most (stage, mb) activations held at once */
    double busy[CPU_PIPE_MAX_DEVICES];         /* seconds spent in compute ops */
    double wall;                               /* seconds from the first device's first op to the last one's end */
    double start[CPU_PIPE_MAX_DEVICES], end[CPU_PIPE_MAX_DEVICES]; /* per device, after its buffers are set up */
    double pass_time[CPU_PIPE_MAX_DEVICES][4]; /* seconds in F, B, W, BW ops (pp_kind order) */
    int pass_count[CPU_PIPE_MAX_DEVICES][4];
} cpu_pipe_stats;

GPT_FN double cpu_pipe_now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

/* ---- the one-device reference ---- */

/* n microbatches of cfg->batch*cfg->seq tokens each, one after the other on
   one "device"; grads (gpt_params layout) = sum in microbatch order of each
   microbatch's gradient of the mean loss over all n*N tokens. */
GPT_FN int cpu_reference_step(const gpt_config *c, const float *params, int n, const int *tokens, const int *targets,
                              float *grads, double *loss) {
    size_t P = gpt_param_sizes(c, (size_t[GPT_NUM_TENSORS]){0}), N = (size_t)c->batch * c->seq, i;
    gpt_stage all = gpt_stage_of(c, 0, 1);
    gpt_params w = gpt_params_at(c, (float *)params);
    float *act = (float *)malloc(sizeof(float) * gpt_act_size(c, &all));
    float *g = (float *)malloc(sizeof(float) * P);
    double sum = 0;
    int j;
    if (!act || !g) { free(act); free(g); return 0; }
    memset(grads, 0, sizeof(float) * P);
    for (j = 0; j < n; j++) {
        gpt_params dw = gpt_params_at(c, g);
        memset(g, 0, sizeof(float) * P);
        sum += gpt_stage_forward(c, &w, &all, act, NULL, tokens + j * N, targets + j * N);
        gpt_stage_backward_input(c, &w, &all, act, NULL, targets + j * N, (float)(1.0 / ((double)n * N)));
        gpt_stage_backward_weight(c, &dw, &all, act, tokens + j * N);
        for (i = 0; i < P; i++) grads[i] += g[i];
    }
    *loss = sum / n;
    free(act);
    free(g);
    return 1;
}

/* ---- the pipeline ---- */

typedef struct cpu__msg {
    int what, stage, mb;
    const float *data;
} cpu__msg;

typedef struct cpu__chan {
    cpu__msg *q; /* every send of this channel, in posting order */
    int posted, taken, cap;
} cpu__chan;

typedef struct cpu__pipe {
    const gpt_config *c;
    gpt_params w;
    const pp_program *prog;
    int recompute, n, S, half; /* half: stages per copy (S/2 with two copies, else S) */
    size_t N, P, slot_size;
    const int *tokens, *targets;
    float *grads_mb;      /* [n][P] */
    double *losses;       /* [n] */
    gpt_stage *stages;    /* [S] */
    cpu__chan *chan;      /* [d*d], src*d + dst */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double deadline;
    int failed;
    char err[512];
    cpu_pipe_stats *stats;
} cpu__pipe;

typedef struct cpu__dev {
    cpu__pipe *p;
    int dev;
} cpu__dev;

GPT_FN void cpu__fail(cpu__pipe *p, const char *msg) { /* call with p->mu held */
    if (!p->failed) {
        p->failed = 1;
        snprintf(p->err, sizeof p->err, "%s", msg);
    }
    pthread_cond_broadcast(&p->cv);
}

/* waits on the condition until the deadline; 0 when it passed or another device failed */
GPT_FN int cpu__wait(cpu__pipe *p) {
    struct timespec ts;
    double dl = p->deadline;
    if (p->failed) return 0;
    ts.tv_sec = (time_t)dl;
    ts.tv_nsec = (long)((dl - (double)ts.tv_sec) * 1e9);
    if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) == ETIMEDOUT && cpu_pipe_now() >= p->deadline) return 0;
    return !p->failed;
}

/* a device that gave up waiting adds where it waits to the report (call with p->mu held) */
GPT_FN void cpu__timeout(cpu__pipe *p, int dev, int opi, const pp_op *op) {
    size_t len;
    if (!p->failed) {
        p->failed = 1;
        snprintf(p->err, sizeof p->err, "timeout:");
    } else if (strncmp(p->err, "timeout:", 8) != 0) {
        return; /* another failure is the story */
    }
    len = strlen(p->err);
    snprintf(p->err + len, sizeof p->err - len, " device %d stuck at op %d (%s %s of stage %d mb %d %s device %d);", dev,
             opi - p->prog->device_start[dev], pp_op_type_name(op->type),
             op->what == PP_ACTIVATION ? "activation" : "gradient", op->stage, op->microbatch,
             op->type == PP_OP_SEND ? "to" : op->type == PP_OP_RECV ? "from" : "on", op->peer);
    pthread_cond_broadcast(&p->cv);
}

GPT_FN void *cpu__device_main(void *arg) {
    cpu__dev *dv = (cpu__dev *)arg;
    cpu__pipe *p = dv->p;
    const gpt_config *c = p->c;
    const pp_program *prog = p->prog;
    int dev = dv->dev, d = prog->devices, S = p->S, n = p->n, i, nslots = prog->slots[dev], live = 0;
    size_t N = p->N, NC = N * (size_t)c->channels, mail_n = (size_t)2 * S * n;
    float *slots = (float *)calloc((size_t)(nslots ? nslots : 1) * p->slot_size, sizeof(float));
    int *owner = (int *)malloc(sizeof(int) * (size_t)(nslots ? nslots : 1));
    float *mail = (float *)calloc(2 * mail_n * NC, sizeof(float)); /* out-box, then in-box */
    float *scratch = NULL;
    double busy = 0;
    if (p->recompute) {
        size_t mx = 0;
        int s;
        for (s = 0; s < S; s++)
            if (prog->stage_device[s] == dev && gpt_act_size(c, &p->stages[s]) > mx) mx = gpt_act_size(c, &p->stages[s]);
        scratch = (float *)calloc(mx ? mx : 1, sizeof(float));
    }
    if (!slots || !owner || !mail || (p->recompute && !scratch)) {
        pthread_mutex_lock(&p->mu);
        cpu__fail(p, "out of memory");
        pthread_mutex_unlock(&p->mu);
        goto done;
    }
    for (i = 0; i < nslots; i++) owner[i] = -1;
    p->stats->start[dev] = cpu_pipe_now();
#define OUTBOX(what, stage, mb) (mail + ((size_t)((what) * S + (stage)) * n + (mb)) * NC)
#define INBOX(what, stage, mb) (mail + (mail_n + (size_t)((what) * S + (stage)) * n + (mb)) * NC)
    for (i = prog->device_start[dev]; i < prog->device_start[dev + 1];) {
        const pp_op *op = &prog->ops[i];
        if (op->type == PP_OP_HANDOFF) {
            memcpy(INBOX(op->what, op->consumer, op->microbatch), OUTBOX(op->what, op->stage, op->microbatch),
                   sizeof(float) * NC);
            i++;
            continue;
        }
        if (op->type == PP_OP_COMPUTE) {
            int s = op->stage, j = op->microbatch, key = s * n + j;
            int first, last; /* the route of s (and of j) */
            const gpt_stage *g = &p->stages[s];
            float *slot = slots + (size_t)op->slot * p->slot_size;
            pp_stage_route(p->S, prog->copies, s, &first, &last);
            float *act = p->recompute ? scratch : slot;
            const int *tok = p->tokens + (size_t)j * N, *tgt = p->targets + (size_t)j * N;
            float dloss = (float)(1.0 / ((double)n * N));
            double t0 = cpu_pipe_now();
            char msg[160];
            if (op->slot < 0 || op->slot >= nslots) {
                snprintf(msg, sizeof msg, "device %d: %s(%d,%d) has slot %d of %d", dev, pp_kind_name(op->kind), s, j,
                         op->slot, nslots);
                pthread_mutex_lock(&p->mu); cpu__fail(p, msg); pthread_mutex_unlock(&p->mu);
                break;
            }
            if (op->kind == PP_F) {
                const float *in = s > first ? INBOX(PP_ACTIVATION, s, j) : NULL;
                double loss;
                if (owner[op->slot] != -1) {
                    snprintf(msg, sizeof msg, "device %d: F(%d,%d) takes slot %d still held by stage %d mb %d", dev, s,
                             j, op->slot, owner[op->slot] / n, owner[op->slot] % n);
                    pthread_mutex_lock(&p->mu); cpu__fail(p, msg); pthread_mutex_unlock(&p->mu);
                    break;
                }
                owner[op->slot] = key;
                if (++live > p->stats->peak_live[dev]) p->stats->peak_live[dev] = live;
                if (p->recompute && in) memcpy(slot, in, sizeof(float) * NC); /* the stage input: all 1f1b-r keeps */
                loss = gpt_stage_forward(c, &p->w, g, act, p->recompute ? (in ? slot : NULL) : in, tok, tgt);
                if (g->has_head) p->losses[j] = loss;
                else if (op->sends) memcpy(OUTBOX(PP_ACTIVATION, s, j), gpt_act_output(c, g, act), sizeof(float) * NC);
            } else {
                gpt_params dw = gpt_params_at(c, p->grads_mb + (size_t)j * p->P);
                if (owner[op->slot] != key) {
                    snprintf(msg, sizeof msg, "device %d: %s(%d,%d) finds slot %d holding %d", dev,
                             pp_kind_name(op->kind), s, j, op->slot, owner[op->slot]);
                    pthread_mutex_lock(&p->mu); cpu__fail(p, msg); pthread_mutex_unlock(&p->mu);
                    break;
                }
                if (p->recompute && op->kind == PP_BW) /* recompute the forward from the kept input */
                    gpt_stage_forward(c, &p->w, g, act, s > first ? slot : NULL, tok, tgt);
                if (op->kind == PP_B || op->kind == PP_BW) {
                    gpt_stage_backward_input(c, &p->w, g, act, s < last ? INBOX(PP_GRADIENT, s, j) : NULL, tgt, dloss);
                    if (op->sends) memcpy(OUTBOX(PP_GRADIENT, s, j), gpt_act_dinput(c, act), sizeof(float) * NC);
                }
                if (op->kind == PP_W || op->kind == PP_BW) {
                    gpt_stage_backward_weight(c, &dw, g, act, tok);
                    owner[op->slot] = -1;
                    live--;
                }
            }
            t0 = cpu_pipe_now() - t0;
            busy += t0;
            p->stats->pass_time[dev][op->kind] += t0;
            p->stats->pass_count[dev][op->kind]++;
            i++;
            continue;
        }
        {
            /* a group (pp_sched.h's rule): post its sends, take its receives, wait for its sends to be taken */
            int e = pp_program_group_end(prog, dev, i), k, ok = 1;
            pthread_mutex_lock(&p->mu);
            for (k = i; k < e; k++) {
                const pp_op *x = &prog->ops[k];
                if (x->type == PP_OP_SEND) {
                    cpu__chan *ch = &p->chan[dev * d + x->peer];
                    cpu__msg *m = &ch->q[ch->posted++];
                    m->what = (int)x->what;
                    m->stage = x->stage;
                    m->mb = x->microbatch;
                    m->data = OUTBOX(x->what, x->stage, x->microbatch);
                }
            }
            pthread_cond_broadcast(&p->cv);
            for (k = i; k < e && ok; k++) {
                const pp_op *x = &prog->ops[k];
                cpu__chan *ch;
                if (x->type != PP_OP_RECV) continue;
                ch = &p->chan[x->peer * d + dev];
                while (ch->posted <= ch->taken)
                    if (!cpu__wait(p)) { ok = 0; cpu__timeout(p, dev, k, x); break; }
                if (!ok) break;
                {
                    cpu__msg *m = &ch->q[ch->taken];
                    if (m->what != (int)x->what || m->stage != x->stage || m->mb != x->microbatch) {
                        char msg[200];
                        snprintf(msg, sizeof msg, "device %d expected stage %d mb %d from device %d, got stage %d mb %d",
                                 dev, x->stage, x->microbatch, x->peer, m->stage, m->mb);
                        cpu__fail(p, msg);
                        ok = 0;
                        break;
                    }
                    memcpy(INBOX(x->what, x->consumer, x->microbatch), m->data, sizeof(float) * NC);
                    ch->taken++;
                    pthread_cond_broadcast(&p->cv);
                }
            }
            for (k = i; k < e && ok; k++) {
                const pp_op *x = &prog->ops[k];
                cpu__chan *ch;
                int seq = 0, q;
                if (x->type != PP_OP_SEND) continue;
                ch = &p->chan[dev * d + x->peer];
                /* this send's place on its channel: the sends of this group to that peer were posted last */
                for (q = k + 1; q < e; q++)
                    if (prog->ops[q].type == PP_OP_SEND && prog->ops[q].peer == x->peer) seq++;
                seq = ch->posted - 1 - seq;
                while (ch->taken <= seq)
                    if (!cpu__wait(p)) { ok = 0; cpu__timeout(p, dev, k, x); break; }
            }
            pthread_mutex_unlock(&p->mu);
            if (!ok) break;
            i = e;
        }
    }
#undef OUTBOX
#undef INBOX
done:
    p->stats->end[dev] = cpu_pipe_now();
    if (p->stats->start[dev] == 0) p->stats->start[dev] = p->stats->end[dev];
    p->stats->busy[dev] = busy;
    free(slots);
    free(owner);
    free(mail);
    free(scratch);
    return NULL;
}

/* One pipelined step. Returns 1 on success; 0 with err filled on a
   deadlock (timeout), a mismatch or a broken slot. */
GPT_FN int cpu_pipeline_step(const gpt_config *c, const float *params, const pp_program *prog,
                             const int *tokens, const int *targets, double timeout_s, float *grads,
                             cpu_pipe_stats *stats, char *err, size_t errlen) {
    cpu__pipe p;
    pthread_t th[CPU_PIPE_MAX_DEVICES];
    cpu__dev dv[CPU_PIPE_MAX_DEVICES];
    int d = prog->devices, i, j, ok = 1, started = 0;
    size_t k;
    memset(&p, 0, sizeof p);
    memset(stats, 0, sizeof *stats);
    p.half = prog->copies == 2 ? prog->stages / 2 : prog->stages;
    if (!prog->stage_device) {
        snprintf(err, errlen, "the program has no stage_device (pp_sched_lower fills it)");
        return 0;
    }
    {   /* pp_sched.h's pairing rule: a channel ordered differently on its two sides is refused here,
           before any thread runs (the channels below would find it too, as NCCL would not) */
        int *partner = (int *)malloc(sizeof(int) * (size_t)(prog->num_ops > 0 ? prog->num_ops : 1));
        char perr[PP_ERR_LEN] = "out of memory";
        pp_status ps = partner ? pp_program_pair(prog, partner, perr) : PP_ERR_OUT_OF_MEMORY;
        free(partner);
        if (ps != PP_OK) {
            snprintf(err, errlen, "%s", perr);
            return 0;
        }
    }
    if (d > CPU_PIPE_MAX_DEVICES || c->layers < p.half) {
        snprintf(err, errlen, "need d <= %d and layers >= stages, got d=%d, %d layers, %d stages", CPU_PIPE_MAX_DEVICES,
                 d, c->layers, p.half);
        return 0;
    }
    p.c = c;
    p.w = gpt_params_at(c, (float *)params);
    p.prog = prog;
    p.recompute = prog->recompute;
    p.n = prog->microbatches;
    p.S = prog->stages;
    p.N = (size_t)c->batch * c->seq;
    p.P = gpt_param_sizes(c, (size_t[GPT_NUM_TENSORS]){0});
    p.tokens = tokens;
    p.targets = targets;
    p.stats = stats;
    p.stages = (gpt_stage *)malloc(sizeof(gpt_stage) * (size_t)p.S);
    p.grads_mb = (float *)calloc((size_t)p.n * p.P, sizeof(float));
    p.losses = (double *)calloc((size_t)p.n, sizeof(double));
    p.chan = (cpu__chan *)calloc((size_t)d * d, sizeof(cpu__chan));
    if (!p.stages || !p.grads_mb || !p.losses || !p.chan) { ok = 0; snprintf(err, errlen, "out of memory"); goto end; }
    for (i = 0; i < p.S; i++) {
        p.stages[i] = gpt_stage_of(c, i % p.half, p.half); /* copy B's stage i is the model's i - half */
        k = p.recompute ? p.N * (size_t)c->channels : gpt_act_size(c, &p.stages[i]);
        if (k > p.slot_size) p.slot_size = k;
    }
    for (i = 0; i < prog->num_ops; i++) /* channel capacity: its number of sends */
        if (prog->ops[i].type == PP_OP_SEND) {
            int dev = 0;
            while (prog->device_start[dev + 1] <= i) dev++;
            p.chan[dev * d + prog->ops[i].peer].cap++;
        }
    for (i = 0; i < d * d; i++) {
        p.chan[i].q = (cpu__msg *)calloc((size_t)(p.chan[i].cap ? p.chan[i].cap : 1), sizeof(cpu__msg));
        if (!p.chan[i].q) { ok = 0; snprintf(err, errlen, "out of memory"); goto end; }
    }
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    p.deadline = cpu_pipe_now() + timeout_s;
    for (i = 0; i < d; i++) {
        dv[i].p = &p;
        dv[i].dev = i;
        if (pthread_create(&th[i], NULL, cpu__device_main, &dv[i]) != 0) {
            pthread_mutex_lock(&p.mu);
            cpu__fail(&p, "pthread_create failed");
            pthread_mutex_unlock(&p.mu);
            break;
        }
        started++;
    }
    for (i = 0; i < started; i++) pthread_join(th[i], NULL);
    {
        double t0 = stats->start[0], t1 = stats->end[0];
        for (i = 1; i < started; i++) {
            if (stats->start[i] < t0) t0 = stats->start[i];
            if (stats->end[i] > t1) t1 = stats->end[i];
        }
        stats->wall = t1 - t0;
    }
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
    if (p.failed) {
        ok = 0;
        snprintf(err, errlen, "%s", p.err);
        goto end;
    }
    /* sum in microbatch order, as the reference does */
    memset(grads, 0, sizeof(float) * p.P);
    stats->loss = 0;
    for (j = 0; j < p.n; j++) {
        for (k = 0; k < p.P; k++) grads[k] += p.grads_mb[(size_t)j * p.P + k];
        stats->loss += p.losses[j];
    }
    stats->loss /= p.n;
end:
    if (p.chan)
        for (i = 0; i < d * d; i++) free(p.chan[i].q);
    free(p.chan);
    free(p.stages);
    free(p.grads_mb);
    free(p.losses);
    return ok;
}

#endif /* CPU_PIPELINE_H */
