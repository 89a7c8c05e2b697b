/* test_lower.c - pp_pass_input, lowering, activation slots and the deadlock checker of pp_sched.h.

   Build and run (tests/run_tests.sh does this):
       cc -std=c99 -O2 -Wall -Wextra tests/test_lower.c -o test_lower -lm && ./test_lower

   For every built-in schedule over a grid of (d, n, times): the programs hold
   every pass once in the schedule's order, one SEND and one RECV for every
   dependency that crosses devices and none for those that do not, each RECV
   right before its consumer; the checker proves them deadlock-free; the
   slots, replayed here, are never shared by two live activations and their
   number equals the schedule's peak in chunk activations. Then hand-built
   programs that must deadlock (or are malformed) are refused, with the ops
   named. Prints one line per group and "N passed, N failed". */
#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_TEST_COUNTING_ALLOCATOR
#include "group.h"

#include <math.h>

static int max_live(const pp_schedule *s, int dev) {
    int i, live = 0, peak = 0;
    for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
        pp_kind k = s->passes[i].kind;
        if (k == PP_F && ++live > peak) peak = live;
        if (k == PP_W || k == PP_BW) live--;
    }
    return peak;
}

/* The first (last = 0) or last (last = 1) stage of the route through stage st. */
static int route_of(const pp_schedule *s, int st, int last) {
    int f, l;
    pp_stage_route(s->stages, s->copies, st, &f, &l);
    return last ? l : f;
}

/* Everything this file asserts about one lowered schedule; returns 1 when fine. */
static int check_program(group *g, const pp_schedule *s, const pp_program *pr, const char *tag) {
    int d = s->devices, S = s->stages, n = s->microbatches, dev, i, ok = 1, cross = 0, sends = 0, recvs = 0;
    int local = 0, handoffs = 0;
    int *stuck = (int *)malloc(sizeof(int) * (size_t)d);
    char err[PP_ERR_LEN];
    pp_status st = pp_sched_check_deadlock(pr, stuck, err);
    ok &= check(g, st == PP_OK, "%s: checker says %s: %s", tag, pp_status_string(st), err);
    for (dev = 0; dev < d; dev++) ok &= check(g, stuck[dev] == -1, "%s: device %d reported stuck", tag, dev);
    free(stuck);
    for (i = 0; i < s->num_passes; i++) {
        const pp_pass *p = &s->passes[i];
        int ps = -1;
        if (p->kind == PP_F && p->stage > route_of(s, p->stage, 0)) ps = p->stage - 1;
        if ((p->kind == PP_B || p->kind == PP_BW) && p->stage < route_of(s, p->stage, 1)) ps = p->stage + 1;
        if (ps >= 0 && s->stage_device[ps] != p->device) cross++;
        if (ps >= 0 && s->stage_device[ps] == p->device) local++;
    }
    ok &= check(g, pr->stage_device && memcmp(pr->stage_device, s->stage_device, sizeof(int) * (size_t)S) == 0 &&
                       pr->recompute == s->recompute && strcmp(pr->name, s->name) == 0,
                "%s: the program does not carry the schedule's stage_device, recompute or name", tag);
    for (dev = 0; dev < d; dev++) {
        int c = s->device_start[dev], live = 0, peak = 0, waiting = 0, most_waiting = 0;
        int *owner = (int *)malloc(sizeof(int) * (size_t)(S * n + 1)); /* slot -> stage*n+mb, -1 free */
        for (i = 0; i <= S * n; i++) owner[i] = -1;
        for (i = pr->device_start[dev]; i < pr->device_start[dev + 1]; i++) {
            const pp_op *op = &pr->ops[i];
            if (op->type == PP_OP_COMPUTE) {
                const pp_pass *p = &s->passes[c];
                int key = op->stage * n + op->microbatch;
                ok &= check(g, c < s->device_start[dev + 1] && p->kind == op->kind && p->stage == op->stage &&
                                   p->microbatch == op->microbatch,
                            "%s: device %d op %d is %s(%d,%d), the schedule's next pass differs", tag, dev, i,
                            pp_kind_name(op->kind), op->stage, op->microbatch);
                c++;
                /* an output for another stage waits for its SEND or HANDOFF */
                {
                    int out = (op->kind == PP_F && op->stage < route_of(s, op->stage, 1)) ||
                              (op->kind != PP_F && op->kind != PP_W && op->stage > route_of(s, op->stage, 0));
                    ok &= check(g, op->sends == out, "%s: device %d op %d: sends %d, its output %s another stage", tag,
                                dev, i, op->sends, out ? "goes to" : "does not go to");
                    if (out && ++waiting > most_waiting) most_waiting = waiting;
                }
                if (!check(g, op->slot >= 0 && op->slot < pr->slots[dev], "%s: device %d op %d slot %d of %d", tag,
                           dev, i, op->slot, pr->slots[dev]))
                    { ok = 0; continue; }
                if (op->kind == PP_F && owner[op->slot] != key) {
                    ok &= check(g, owner[op->slot] == -1, "%s: device %d F(%d,%d) takes slot %d still held by (%d,%d)",
                                tag, dev, op->stage, op->microbatch, op->slot, owner[op->slot] / n, owner[op->slot] % n);
                    owner[op->slot] = key;
                    if (++live > peak) peak = live;
                } else {
                    ok &= check(g, owner[op->slot] == key, "%s: device %d %s(%d,%d) reads slot %d which holds %d", tag,
                                dev, pp_kind_name(op->kind), op->stage, op->microbatch, op->slot, owner[op->slot]);
                }
                if (op->kind == PP_W || op->kind == PP_BW) { owner[op->slot] = -1; live--; }
            } else if (op->type == PP_OP_RECV || op->type == PP_OP_HANDOFF) {
                int k = i + 1, cs = op->what == PP_ACTIVATION ? op->stage + 1 : op->stage - 1;
                const char *name = pp_op_type_name(op->type);
                if (op->type == PP_OP_RECV) {
                    recvs++;
                    ok &= check(g, op->peer == s->stage_device[op->stage] && s->stage_device[cs] == dev,
                                "%s: device %d RECV of stage %d from device %d", tag, dev, op->stage, op->peer);
                } else {
                    handoffs++;
                    waiting--;
                    ok &= check(g, op->peer == dev && s->stage_device[op->stage] == dev && s->stage_device[cs] == dev,
                                "%s: device %d HANDOFF of stage %d to stage %d", tag, dev, op->stage, op->consumer);
                }
                ok &= check(g, op->consumer == cs, "%s: device %d %s %d: consumer %d, expected %d", tag, dev, name, i,
                            op->consumer, cs);
                /* as late as possible: only communication between it and its consumer (a HANDOFF: none) */
                while (op->type == PP_OP_RECV && k < pr->device_start[dev + 1] && pr->ops[k].type != PP_OP_COMPUTE) k++;
                ok &= check(g, k < pr->device_start[dev + 1] && pr->ops[k].type == PP_OP_COMPUTE &&
                                   pr->ops[k].stage == cs && pr->ops[k].microbatch == op->microbatch &&
                                   (op->what == PP_ACTIVATION ? pr->ops[k].kind == PP_F : pr->ops[k].kind != PP_F),
                            "%s: device %d %s %d of (%d,%d) is not right before its consumer", tag, dev, name, i,
                            op->stage, op->microbatch);
                if (op->what == PP_ACTIVATION) {
                    int key = cs * n + op->microbatch;
                    ok &= check(g, op->slot >= 0 && op->slot < pr->slots[dev] && owner[op->slot] == -1,
                                "%s: device %d %s into slot %d which is not free", tag, dev, name, op->slot);
                    if (op->slot >= 0 && op->slot < pr->slots[dev]) owner[op->slot] = key;
                    if (++live > peak) peak = live;
                }
            } else {
                sends++;
                waiting--;
                ok &= check(g, op->peer != dev && s->stage_device[op->stage] == dev, "%s: device %d SEND of stage %d",
                            tag, dev, op->stage);
            }
        }
        ok &= check(g, c == s->device_start[dev + 1], "%s: device %d program has %d of %d passes", tag, dev,
                    c - s->device_start[dev], s->device_start[dev + 1] - s->device_start[dev]);
        ok &= check(g, live == 0, "%s: device %d ends with %d live activations", tag, dev, live);
        ok &= check(g, waiting == 0 && most_waiting == pr->send_buffers[dev],
                    "%s: device %d: %d outputs never sent, most waiting %d, send_buffers %d", tag, dev, waiting,
                    most_waiting, pr->send_buffers[dev]);
        ok &= check(g, pr->slots[dev] == peak && peak == max_live(s, dev),
                    "%s: device %d has %d slots, replay peak %d, schedule's live peak %d", tag, dev, pr->slots[dev], peak,
                    max_live(s, dev));
        /* peak_memory is in units of 1/d of the model; a chunk activation is 1/v of that */
        if (s->stage_memory[0] > 0)
            ok &= check(g, fabs(pr->slots[dev] * s->stage_memory[0] - s->peak_memory[dev]) < 1e-9,
                        "%s: device %d slots %d x %g != predicted peak %g", tag, dev, pr->slots[dev], s->stage_memory[0],
                        s->peak_memory[dev]);
        free(owner);
    }
    ok &= check(g, sends == cross && recvs == cross, "%s: %d sends and %d receives for %d cross-device dependencies",
                tag, sends, recvs, cross);
    ok &= check(g, handoffs == local, "%s: %d hand-offs for %d same-device dependencies between stages", tag, handoffs,
                local);
    return ok;
}

static void test_lower_grid(void) {
    group g;
    int i, d, n, t, cases = 0;
    static const pp_times times[] = {{0, 0, 0, 0}, {1, 2, 1, 0.5}, {1, 1, 0, 0}, {2, 3, 1, 0.25}};
    group_begin(&g, "lowering: every built-in schedule, d 1..6, n 1..3d, 4 time settings");
    for (i = 0; i < pp_sched_count(); i++)
        for (d = 1; d <= 6; d++)
            for (n = 1; n <= 3 * d; n++)
                for (t = 0; t < 4; t++) {
                    pp_config cfg;
                    pp_schedule *s = NULL;
                    pp_program *pr = NULL;
                    char err[PP_ERR_LEN], tag[96];
                    memset(&cfg, 0, sizeof cfg);
                    cfg.schedule = pp_sched_info_at(i)->name;
                    cfg.devices = d;
                    cfg.microbatches = n;
                    cfg.times = times[t];
                    cfg.recompute_input = t == 3 ? 0.25 : 0;
                    if (pp_sched_build(&cfg, &s, err) != PP_OK) continue; /* refusals are test_sched's job */
                    snprintf(tag, sizeof tag, "%s d=%d n=%d t%d", cfg.schedule, d, n, t);
                    if (check(&g, pp_sched_lower(s, &pr, err) == PP_OK, "%s: lower: %s", tag, err)) {
                        check_program(&g, s, pr, tag);
                        cases++;
                    }
                    pp_program_free(pr);
                    pp_sched_free(s);
                }
    group_end(&g, "%d schedules lowered, deadlock-free, slots = predicted peak", cases);
}

/* ---- hand-built programs ---- */

static pp_op C(pp_kind k, int stage, int mb) {
    pp_op o;
    memset(&o, 0, sizeof o);
    o.type = PP_OP_COMPUTE; o.kind = k; o.stage = stage; o.microbatch = mb; o.peer = -1; o.slot = -1; o.group = -1;
    return o;
}

static pp_op X(pp_op_type t, pp_payload what, int stage, int mb, int peer, int grp) {
    pp_op o;
    memset(&o, 0, sizeof o);
    o.type = t; o.what = what; o.stage = stage; o.microbatch = mb; o.peer = peer; o.slot = -1; o.group = grp;
    return o;
}

static pp_status run_hand(pp_op *ops, int count, const int *starts, int d, int S, int n, int *stuck, char *err) {
    pp_program p;
    memset(&p, 0, sizeof p);
    p.devices = d; p.stages = S; p.microbatches = n; p.num_ops = count; p.ops = ops;
    p.device_start = (int *)starts;
    return pp_sched_check_deadlock(&p, stuck, err);
}

static void test_hand_built(void) {
    group g;
    char err[PP_ERR_LEN];
    int stuck[3];
    pp_status st;
    group_begin(&g, "deadlock checker on hand-built programs");
    {
        /* 2 stages on 2 devices, 1F1B steady-state exchange of mb 1's activation
           and mb 0's gradient: device 0 sends, then receives; device 1 sends, then
           receives. Ungrouped, both sends wait for a receive nobody has posted. */
        pp_op ops[] = {
            C(PP_F, 0, 0), X(PP_OP_SEND, PP_ACTIVATION, 0, 0, 1, -1), C(PP_F, 0, 1),
            X(PP_OP_SEND, PP_ACTIVATION, 0, 1, 1, -1), X(PP_OP_RECV, PP_GRADIENT, 1, 0, 1, -1), C(PP_BW, 0, 0),
            X(PP_OP_RECV, PP_GRADIENT, 1, 1, 1, -1), C(PP_BW, 0, 1),
            /* device 1 */
            X(PP_OP_RECV, PP_ACTIVATION, 0, 0, 0, -1), C(PP_F, 1, 0), C(PP_BW, 1, 0),
            X(PP_OP_SEND, PP_GRADIENT, 1, 0, 0, -1), X(PP_OP_RECV, PP_ACTIVATION, 0, 1, 0, -1), C(PP_F, 1, 1),
            C(PP_BW, 1, 1), X(PP_OP_SEND, PP_GRADIENT, 1, 1, 0, -1)};
        int starts[] = {0, 8, 16};
        st = run_hand(ops, 16, starts, 2, 2, 2, stuck, err);
        check(&g, st == PP_ERR_DEADLOCK, "cross sends ungrouped: want deadlock, got %s", pp_status_string(st));
        check(&g, stuck[0] == 3 && stuck[1] == 11, "cross sends ungrouped: stuck at ops %d, %d, want 3, 11", stuck[0],
              stuck[1]);
        check(&g, strstr(err, "device 0 at op 3 (SEND activation of stage 0 mb 1 to device 1)") &&
                      strstr(err, "device 1 at op 3 (SEND gradient of stage 1 mb 0 to device 0)"),
              "message names both sends: %s", err);
        /* the same exchange grouped on both sides (Megatron's send_forward_recv_backward) finishes */
        ops[3].group = ops[4].group = 7;
        ops[11].group = ops[12].group = 3;
        st = run_hand(ops, 16, starts, 2, 2, 2, stuck, err);
        check(&g, st == PP_OK && stuck[0] == -1 && stuck[1] == -1, "grouped: want ok, got %s: %s",
              pp_status_string(st), err);
        /* or ordered by parity: device 1 receives before it sends */
        ops[3].group = ops[4].group = ops[11].group = ops[12].group = -1;
        ops[11] = X(PP_OP_RECV, PP_ACTIVATION, 0, 1, 0, -1);
        ops[12] = X(PP_OP_SEND, PP_GRADIENT, 1, 0, 0, -1);
        st = run_hand(ops, 16, starts, 2, 2, 2, stuck, err);
        check(&g, st == PP_OK, "parity order: want ok, got %s: %s", pp_status_string(st), err);
    }
    {
        /* a receive nobody sends */
        pp_op ops[] = {C(PP_F, 0, 0), X(PP_OP_RECV, PP_ACTIVATION, 0, 0, 0, -1), C(PP_F, 1, 0)};
        int starts[] = {0, 1, 3};
        st = run_hand(ops, 3, starts, 2, 2, 1, stuck, err);
        check(&g, st == PP_ERR_DEADLOCK && stuck[0] == -1 && stuck[1] == 1 && strstr(err, "never matched"),
              "unmatched receive: got %s, stuck %d %d: %s", pp_status_string(st), stuck[0], stuck[1], err);
    }
    {
        /* three devices in a ring, each sends before it receives: a cycle of waits */
        pp_op ops[] = {
            C(PP_F, 0, 0), X(PP_OP_SEND, PP_ACTIVATION, 0, 0, 1, -1), X(PP_OP_RECV, PP_ACTIVATION, 2, 0, 2, -1),
            C(PP_F, 1, 0), X(PP_OP_SEND, PP_ACTIVATION, 1, 0, 2, -1), X(PP_OP_RECV, PP_ACTIVATION, 0, 0, 0, -1),
            C(PP_F, 2, 0), X(PP_OP_SEND, PP_ACTIVATION, 2, 0, 0, -1), X(PP_OP_RECV, PP_ACTIVATION, 1, 0, 1, -1)};
        int starts[] = {0, 3, 6, 9};
        /* F(1,0) runs before stage 0's activation arrived: refused as invalid */
        st = run_hand(ops, 9, starts, 3, 3, 1, stuck, err);
        check(&g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "before its input"),
              "compute before its input: got %s: %s", pp_status_string(st), err);
        /* a ring where every device first waits for its left neighbour's output */
        ops[0] = X(PP_OP_RECV, PP_ACTIVATION, 2, 0, 2, -1);
        ops[1] = C(PP_F, 0, 0);
        ops[2] = X(PP_OP_SEND, PP_ACTIVATION, 0, 0, 1, -1);
        ops[3] = X(PP_OP_RECV, PP_ACTIVATION, 0, 0, 0, -1);
        ops[4] = C(PP_F, 1, 0);
        ops[5] = X(PP_OP_SEND, PP_ACTIVATION, 1, 0, 2, -1);
        ops[6] = X(PP_OP_RECV, PP_ACTIVATION, 1, 0, 1, -1);
        ops[7] = C(PP_F, 2, 0);
        ops[8] = X(PP_OP_SEND, PP_ACTIVATION, 2, 0, 0, -1);
        st = run_hand(ops, 9, starts, 3, 3, 1, stuck, err);
        check(&g, st == PP_ERR_DEADLOCK && stuck[0] == 0 && stuck[1] == 3 && stuck[2] == 6,
              "ring: got %s, stuck %d %d %d: %s", pp_status_string(st), stuck[0], stuck[1], stuck[2], err);
    }
    {
        /* both sides disagree about the order of a channel */
        pp_op ops[] = {C(PP_F, 0, 0), C(PP_F, 0, 1), X(PP_OP_SEND, PP_ACTIVATION, 0, 0, 1, 0),
                       X(PP_OP_SEND, PP_ACTIVATION, 0, 1, 1, 0), X(PP_OP_RECV, PP_ACTIVATION, 0, 1, 0, 0),
                       X(PP_OP_RECV, PP_ACTIVATION, 0, 0, 0, 0), C(PP_F, 1, 1), C(PP_F, 1, 0)};
        int starts[] = {0, 4, 8};
        st = run_hand(ops, 8, starts, 2, 2, 2, stuck, err);
        check(&g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "order"), "channel order: got %s: %s",
              pp_status_string(st), err);
        /* a send of data the device has not computed */
        ops[0] = C(PP_F, 0, 1);
        ops[1] = X(PP_OP_SEND, PP_ACTIVATION, 0, 0, 1, -1);
        ops[2] = C(PP_F, 0, 0);
        ops[3] = X(PP_OP_SEND, PP_ACTIVATION, 0, 1, 1, -1);
        ops[4] = X(PP_OP_RECV, PP_ACTIVATION, 0, 0, 0, -1);
        ops[5] = C(PP_F, 1, 0);
        ops[6] = X(PP_OP_RECV, PP_ACTIVATION, 0, 1, 0, -1);
        ops[7] = C(PP_F, 1, 1);
        st = run_hand(ops, 8, starts, 2, 2, 2, stuck, err);
        check(&g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "before it has computed"), "send early: got %s: %s",
              pp_status_string(st), err);
    }
    {
        /* malformed input is refused, not crashed on */
        pp_op ops[] = {X(PP_OP_SEND, PP_ACTIVATION, 0, 0, 0, -1)};
        int starts[] = {0, 1};
        st = run_hand(ops, 1, starts, 1, 1, 1, stuck, err);
        check(&g, st == PP_ERR_INVALID_ARG, "send to itself: got %s", pp_status_string(st));
        st = pp_sched_check_deadlock(NULL, NULL, err);
        check(&g, st == PP_ERR_INVALID_ARG, "NULL program: got %s", pp_status_string(st));
        st = pp_sched_lower(NULL, NULL, err);
        check(&g, st == PP_ERR_INVALID_ARG, "lower NULL: got %s", pp_status_string(st));
    }
    group_end(&g, "ungrouped cross sends and rings deadlock with the stuck ops named; groups and parity order finish");
}

/* The lowered order is a global total order (key, payload, stage,
   microbatch), so it finishes even with every op alone (a runtime without
   ncclGroupStart/End); breaking that order on one device deadlocks. */
static void test_order_matters(void) {
    group g;
    pp_config cfg;
    pp_schedule *s = NULL;
    pp_program *pr = NULL;
    char err[PP_ERR_LEN];
    int i, stuck[4], swapped = 0;
    pp_status st;
    group_begin(&g, "lowering: the order is what makes it safe");
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = "1f1b";
    cfg.devices = 4;
    cfg.microbatches = 8;
    err[0] = 0;
    if (check(&g, pp_sched_build(&cfg, &s, err) == PP_OK && pp_sched_lower(s, &pr, err) == PP_OK, "1f1b: %s", err)) {
        for (i = 0; i < pr->num_ops; i++) pr->ops[i].group = -1;
        st = pp_sched_check_deadlock(pr, stuck, err);
        check(&g, st == PP_OK, "1f1b d=4 n=8 ungrouped: want ok, got %s: %s", pp_status_string(st), err);
        /* device 1: every SEND followed by a RECV is swapped with it (receive first) */
        for (i = pr->device_start[1]; i + 1 < pr->device_start[2]; i++)
            if (pr->ops[i].type == PP_OP_SEND && pr->ops[i + 1].type == PP_OP_RECV) {
                pp_op t = pr->ops[i];
                pr->ops[i] = pr->ops[i + 1];
                pr->ops[i + 1] = t;
                swapped++;
                i++;
            }
        st = pp_sched_check_deadlock(pr, stuck, err);
        check(&g, swapped > 0 && st == PP_ERR_DEADLOCK, "1f1b d=4 n=8, %d pairs swapped on device 1: want deadlock, got %s",
              swapped, pp_status_string(st));
    }
    pp_program_free(pr);
    pp_sched_free(s);
    group_end(&g, "ungrouped still finishes; receive-before-send on device 1 gives: %s", err);
}

/* pp_program_print: the README's example, byte for byte */
static void test_print(void) {
    static const char *want =
        "device 0 (3 slots): F0.0#0 {S>1 a0.0} F0.1#1 {S>1 a0.1} F0.2#2 {S>1 a0.2 R<1 g1.0} BW0.0#0 F0.3#0 {S>1 a0.3 "
        "R<1 g1.1} BW0.1#1 {R<1 g1.2} BW0.2#2 {R<1 g1.3} BW0.3#0\n"
        "device 1 (2 slots): {R<0 a0.0} F1.0#0 {R<0 a0.1 S>2 a1.0} F1.1#1 {S>2 a1.1 R<2 g2.0} BW1.0#0 {R<0 a0.2 S>0 "
        "g1.0} F1.2#0 {S>2 a1.2 R<2 g2.1} BW1.1#1 {R<0 a0.3 S>0 g1.1} F1.3#1 {S>2 a1.3 R<2 g2.2} BW1.2#0 {S>0 g1.2} "
        "{R<2 g2.3} BW1.3#1 {S>0 g1.3}\n"
        "device 2 (1 slots): {R<1 a1.0} F2.0#0 BW2.0#0 {R<1 a1.1 S>1 g2.0} F2.1#0 BW2.1#0 {R<1 a1.2 S>1 g2.1} F2.2#0 "
        "BW2.2#0 {R<1 a1.3 S>1 g2.2} F2.3#0 BW2.3#0 {S>1 g2.3}\n";
    group g;
    pp_config cfg;
    pp_schedule *s = NULL;
    pp_program *pr = NULL;
    char err[PP_ERR_LEN], got[2048];
    FILE *f = tmpfile();
    size_t len = 0;
    group_begin(&g, "pp_program_print");
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = "1f1b";
    cfg.devices = 3;
    cfg.microbatches = 4;
    if (check(&g, f && pp_sched_build(&cfg, &s, err) == PP_OK && pp_sched_lower(s, &pr, err) == PP_OK, "1f1b: %s",
              err)) {
        pp_program_print(f, pr);
        rewind(f);
        len = fread(got, 1, sizeof got - 1, f);
        got[len] = 0;
        check(&g, strcmp(got, want) == 0, "1f1b d=3 n=4 prints\n%s", got);
    }
    if (f) fclose(f);
    pp_program_free(pr);
    pp_sched_free(s);
    group_end(&g, "1f1b d=3 n=4 as in README.md");
}

/* Every allocation of pp_sched_lower and pp_sched_check_deadlock goes
   through the schedule's allocator, is given back, and a failure at any one
   of them is OUT_OF_MEMORY with nothing leaked. */
/* counting, count_alloc, count_free: group.h */

static void test_allocator(void) {
    group g;
    pp_config cfg;
    counting cnt;
    pp_schedule *s = NULL;
    char err[PP_ERR_LEN];
    long k, total = -1;
    group_begin(&g, "lowering: allocator");
    memset(&cfg, 0, sizeof cfg);
    cfg.schedule = "v-zb";
    cfg.devices = 3;
    cfg.microbatches = 5;
    if (check(&g, pp_sched_build(&cfg, &s, err) == PP_OK, "v-zb: %s", err)) {
        pp_allocator built_with = s->allocator;
        for (k = -1; k < 64; k++) {
            pp_program *pr = NULL;
            pp_status st1, st2 = PP_OK;
            memset(&cnt, 0, sizeof cnt);
            cnt.fail_after = -1;
            s->allocator.alloc = count_alloc;
            s->allocator.free = count_free;
            s->allocator.user = &cnt;
            cnt.fail_after = k;
            st1 = pp_sched_lower(s, &pr, err);
            if (st1 == PP_OK) st2 = pp_sched_check_deadlock(pr, NULL, err);
            pp_program_free(pr);
            if (k < 0) {
                total = cnt.allocs;
                check(&g, st1 == PP_OK && st2 == PP_OK, "no failure: %s", err);
            } else if (k < total) {
                check(&g, st1 == PP_ERR_OUT_OF_MEMORY || st2 == PP_ERR_OUT_OF_MEMORY,
                      "allocation %ld of %ld fails: got %s / %s", k, total, pp_status_string(st1), pp_status_string(st2));
            }
            check(&g, cnt.allocs == cnt.frees, "fail_after %ld: %ld allocations, %ld frees", k, cnt.allocs, cnt.frees);
        }
        s->allocator = built_with; /* pp_sched_free gives it back to the allocator it came from */
    }
    pp_sched_free(s);
    group_end(&g, "%ld allocations, each may fail: OUT_OF_MEMORY, balanced", total);
}

/* The turn of a V needs its HANDOFF: without it, the consumer runs before
   its input is on the device; with it moved before its producer, the
   hand-off itself runs too early. Both are refused by the checker. */
static void test_handoff(void) {
    group g;
    static const char *const names[] = {"v-half", "1f1b-v", "dualpipe-v"};
    int k;
    group_begin(&g, "lowering: hand-offs at the turn of a V");
    for (k = 0; k < 3; k++) {
        pp_config cfg;
        pp_schedule *s = NULL;
        pp_program *pr = NULL;
        char err[PP_ERR_LEN];
        int i, h = -1, nh = 0;
        memset(&cfg, 0, sizeof cfg);
        cfg.schedule = names[k], cfg.devices = 4, cfg.microbatches = 8;
        if (!check(&g, pp_sched_build(&cfg, &s, err) == PP_OK && pp_sched_lower(s, &pr, err) == PP_OK, "%s: %s",
                   names[k], err)) { pp_sched_free(s); continue; }
        for (i = 0; i < pr->num_ops; i++)
            if (pr->ops[i].type == PP_OP_HANDOFF) { nh++; if (h < 0) h = i; }
        /* two per microbatch: the activation into F of stage d, the gradient into B (BW) of stage d-1 */
        check(&g, nh == 2 * 8, "%s: %d hand-offs, expected 16", names[k], nh);
        if (check(&g, h >= 0, "%s: no HANDOFF op", names[k])) {
            pp_op save = pr->ops[h];
            pr->ops[h] = pr->ops[h + 1]; /* the consumer in the hand-off's place: it runs without its input */
            check(&g, pp_sched_check_deadlock(pr, NULL, err) == PP_ERR_INVALID_SCHEDULE && strstr(err, "before its input"),
                  "%s: consumer without its HANDOFF not refused: %s", names[k], err);
            pr->ops[h] = save;
            pr->ops[h].stage = save.what == PP_ACTIVATION ? save.stage + 1 : save.stage; /* data not made yet */
            pr->ops[h].what = PP_GRADIENT;
            check(&g, pp_sched_check_deadlock(pr, NULL, err) == PP_ERR_INVALID_SCHEDULE,
                  "%s: a HANDOFF of data not yet computed not refused: %s", names[k], err);
            pr->ops[h] = save;
            check(&g, pp_sched_check_deadlock(pr, NULL, err) == PP_OK, "%s: restored program refused: %s", names[k], err);
        }
        pp_program_free(pr);
        pp_sched_free(s);
    }
    group_end(&g, "v-half, 1f1b-v, dualpipe-v d=4 n=8: two per microbatch; without it or too early: refused");
}

/* pp_pass_input against the rule as Section 2 states it, written out here
   for S = 4 stages, n = 4 microbatches: F(s) after F(s-1); B(3) after F(3)
   (the loss); B(s) after B(s+1); W(s) after B(s); BW as B without split;
   with two copies (routes 0..1 for mb 0, 1 and 2..3 for mb 2, 3) each route
   alone. Then every out-of-range argument gives -1. */
static void test_pass_input(void) {
    group g;
    /* {copies, split, kind, stage, mb, want (1/0/-1), kind in, stage in} */
    static const int cases[][8] = {
        {1, 1, PP_F, 0, 0, 0, 0, 0},  {1, 1, PP_F, 3, 2, 1, PP_F, 2},  {1, 1, PP_B, 3, 1, 1, PP_F, 3},
        {1, 1, PP_B, 1, 3, 1, PP_B, 2}, {1, 1, PP_W, 2, 0, 1, PP_B, 2}, {1, 0, PP_BW, 0, 1, 1, PP_BW, 1},
        {1, 0, PP_BW, 3, 0, 1, PP_F, 3}, {2, 1, PP_F, 2, 2, 0, 0, 0},  {2, 1, PP_F, 3, 3, 1, PP_F, 2},
        {2, 1, PP_B, 1, 0, 1, PP_F, 1}, {2, 1, PP_B, 0, 1, 1, PP_B, 1}, {2, 1, PP_B, 3, 2, 1, PP_F, 3},
        {1, 1, PP_F, 4, 0, -1, 0, 0}, {1, 1, PP_F, -1, 0, -1, 0, 0}, {1, 1, PP_F, 1, 4, -1, 0, 0},
        {1, 1, 4, 1, 0, -1, 0, 0},    {2, 1, PP_F, 2, 0, -1, 0, 0},  {2, 1, PP_B, 1, 3, -1, 0, 0},
    };
    int i;
    group_begin(&g, "pp_pass_input: the dependency rule");
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const int *c = cases[i];
        pp_kind k = PP_W;
        int st = -7, r = pp_pass_input(4, 4, c[0], c[1], (pp_kind)c[2], c[3], c[4], &k, &st);
        check(&g, r == c[5] && (r != 1 || (k == (pp_kind)c[6] && st == c[7])) && (r == 1 || (k == PP_W && st == -7)),
              "copies %d split %d %s(stage %d, mb %d): got %d (%s, %d), expected %d (%s, %d)", c[0], c[1],
              pp_kind_name((pp_kind)c[2]), c[3], c[4], r, pp_kind_name(k), st, c[5], pp_kind_name((pp_kind)c[6]), c[7]);
    }
    check(&g, pp_pass_input(0, 4, 1, 1, PP_F, 0, 0, &(pp_kind){PP_F}, &(int){0}) == -1, "0 stages accepted");
    check(&g, pp_pass_input(3, 4, 2, 1, PP_F, 0, 0, &(pp_kind){PP_F}, &(int){0}) == -1, "two copies of 3 stages accepted");
    check(&g, pp_pass_input(4, 4, 1, 1, PP_F, 1, 0, NULL, &(int){0}) == -1, "NULL in_kind accepted");
    group_end(&g, "18 passes by hand (F, B, W, BW, the loss, two routes), out-of-range arguments -1");
}

/* pp_program_group_end and pp_program_pair on a hand-built program whose
   groups and pairs are written out here: device 0 = {F, SEND a0.0 (g 4),
   SEND a0.1 (g 4), RECV g1.0 (g 4), RECV g1.1 (g 5), BW}, device 1 =
   {RECV a0.0 (g -1), RECV a0.1 (g 2), SEND g1.0 (g 2), F, SEND g1.1 (g 2)}. */
static void test_groups_and_pairs(void) {
    group g;
    pp_op ops[] = {
        C(PP_F, 0, 0), X(PP_OP_SEND, PP_ACTIVATION, 0, 0, 1, 4), X(PP_OP_SEND, PP_ACTIVATION, 0, 1, 1, 4),
        X(PP_OP_RECV, PP_GRADIENT, 1, 0, 1, 4), X(PP_OP_RECV, PP_GRADIENT, 1, 1, 1, 5), C(PP_BW, 0, 0),
        /* device 1: ops 6.. */
        X(PP_OP_RECV, PP_ACTIVATION, 0, 0, 0, -1), X(PP_OP_RECV, PP_ACTIVATION, 0, 1, 0, 2),
        X(PP_OP_SEND, PP_GRADIENT, 1, 0, 0, 2), C(PP_F, 1, 0), X(PP_OP_SEND, PP_GRADIENT, 1, 1, 0, 2)};
    int starts[] = {0, 6, 11};
    /* end of the group starting at op i (on its device) */
    static const int want_end[] = {1, 4, 4, 4, 5, 6, 7, 9, 9, 10, 11};
    /* the k-th send a->b with the k-th receive on b from a */
    static const int want_pair[] = {-1, 6, 7, 8, 10, -1, 1, 2, 3, -1, 4};
    int partner[11], i, dev, okp = 1;
    char err[PP_ERR_LEN];
    pp_program p;
    pp_status st;
    memset(&p, 0, sizeof p);
    p.devices = 2; p.stages = 2; p.microbatches = 2; p.num_ops = 11; p.ops = ops; p.device_start = starts;
    group_begin(&g, "pp_program_group_end, pp_program_pair: the group and pairing rules");
    for (dev = 0; dev < 2; dev++)
        for (i = starts[dev]; i < starts[dev + 1]; i++)
            check(&g, pp_program_group_end(&p, dev, i) == want_end[i], "group_end(device %d, op %d) = %d, want %d", dev,
                  i, pp_program_group_end(&p, dev, i), want_end[i]);
    check(&g, pp_program_group_end(&p, 1, 3) == 4 && pp_program_group_end(NULL, 0, 3) == 4,
          "an op of another device or no program: i + 1");
    st = pp_program_pair(&p, partner, err);
    if (check(&g, st == PP_OK, "pair: %s %s", pp_status_string(st), err))
        for (i = 0; i < 11; i++) okp &= check(&g, partner[i] == want_pair[i], "partner[%d] = %d, want %d", i, partner[i], want_pair[i]);
    /* a channel ordered differently on its two sides: device 1 receives mb 1 first */
    ops[6].microbatch = 1; ops[7].microbatch = 0;
    st = pp_program_pair(&p, partner, err);
    check(&g, st == PP_ERR_INVALID_SCHEDULE && strstr(err, "send 0 from device 0 to 1") &&
                  strstr(err, "RECV activation of stage 0 mb 1 from device 0"),
          "mismatched channel: %s %s", pp_status_string(st), err);
    ops[6].microbatch = 0; ops[7].microbatch = 1;
    /* one send too few (device 1's last): the second receive on device 0 has no partner, the rest still pair */
    p.num_ops = 10; starts[2] = 10;
    st = pp_program_pair(&p, partner, err);
    check(&g, st == PP_OK && partner[4] == -1 && partner[3] == 8 && partner[1] == 6, "one send short: %s, partner[4] %d",
          pp_status_string(st), partner[4]);
    check(&g, pp_program_pair(&p, NULL, err) == PP_ERR_INVALID_ARG, "NULL partner accepted");
    group_end(&g, "a hand-built program of 11 ops: every group end and pair as written by hand; a mismatch named");
}

int main(void) {
    test_pass_input();
    test_groups_and_pairs();
    test_lower_grid();
    test_handoff();
    test_hand_built();
    test_order_matters();
    test_print();
    test_allocator();
    printf("%d passed, %d failed\n", g_groups_passed, g_groups_failed);
    return g_groups_failed ? 1 : 0;
}
