/* _pp_sched.c - the CPython extension behind the pp_sched package.

   One translation unit holds pp_sched.h's and pp_plan.h's implementations
   and a thin layer over their public API. It is written against CPython's
   limited API (Py_LIMITED_API 3.10), so one abi3 wheel per platform serves
   every CPython from 3.10 on. The Python side (__init__.py) checks argument
   types and turns the plain tuples and dicts returned here into typed
   objects; this file only converts and calls. Every library status becomes
   pp_sched.Error (a ValueError) carrying the library's message. */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PP_SCHED_IMPLEMENTATION
#define PP_SCHED_STATIC
#include "pp_sched.h"
#define PP_SCHED_IO_IMPLEMENTATION
#define PP_SCHED_IO_STATIC
#include "pp_sched_io.h"
#define PP_PLAN_IMPLEMENTATION
#define PP_PLAN_STATIC
#include "pp_plan.h"

/* The module's state would hold these in a multi-phase module; one module
   object per process is all this extension supports (single-phase init), so
   they are set once at import and never change. */
static PyObject *Error;      /* pp_sched.Error, a ValueError subclass */
static PyObject *SchedType;  /* _pp_sched.Sched */

static PyObject *raise_status(pp_status st, const char *err) {
    PyObject *exc, *status;
    const char *msg = err && err[0] ? err : pp_status_string(st);
    exc = PyObject_CallFunction(Error, "s", msg);
    if (!exc) return NULL;
    status = PyUnicode_FromString(pp_status_string(st));
    if (!status || PyObject_SetAttrString(exc, "status", status) < 0) {
        Py_XDECREF(status);
        Py_DECREF(exc);
        return NULL;
    }
    Py_DECREF(status);
    PyErr_SetObject(Error, exc);
    Py_DECREF(exc);
    return NULL;
}

/* ---- the schedule object: owns one pp_schedule ---- */

typedef struct {
    PyObject_HEAD
    pp_schedule *s;
} SchedObject;

static void sched_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    pp_sched_free(((SchedObject *)self)->s);
    ((SchedObject *)self)->s = NULL;
    tp_free(self);
    Py_DECREF(tp);
}

static pp_schedule *sched_of(PyObject *self) {
    pp_schedule *s = ((SchedObject *)self)->s;
    if (!s) PyErr_SetString(Error, "this schedule object holds no schedule (build one with pp_sched.build)");
    return s;
}

static PyObject *wrap_schedule(pp_schedule *s) {
    PyTypeObject *tp = (PyTypeObject *)SchedType;
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    PyObject *o = alloc(tp, 0);
    if (!o) {
        pp_sched_free(s);
        return NULL;
    }
    ((SchedObject *)o)->s = s;
    return o;
}

/* A list of n numbers: ints (as_int) read from ix, or floats read from x;
   zeros where the array is NULL. */
static PyObject *num_list(const double *x, const int *ix, int as_int, int n) {
    PyObject *l = PyList_New(n);
    int i;
    if (!l) return NULL;
    for (i = 0; i < n; i++) {
        PyObject *v = as_int ? PyLong_FromLong(ix ? ix[i] : 0) : PyFloat_FromDouble(x ? x[i] : 0.0);
        if (!v || PyList_SetItem(l, i, v) < 0) {
            Py_DECREF(l);
            return NULL;
        }
    }
    return l;
}
static PyObject *double_list(const double *x, int n) { return num_list(x, NULL, 0, n); }
static PyObject *int_list(const int *x, int n) { return num_list(NULL, x, 1, n); }

/* Every scalar and per-device/per-stage fact of the schedule as one dict. */
static PyObject *sched_info(PyObject *self, PyObject *unused) {
    pp_schedule *s = sched_of(self);
    pp_bounds b;
    PyObject *d, *peak, *bound, *sdev, *stime, *smem;
    const char *tt;
    (void)unused;
    if (!s) return NULL;
    if (pp_sched_bounds(s, &b) != PP_OK) b.work = b.path = b.appendix = b.best = 0;
    peak = double_list(s->peak_memory, s->devices);
    bound = double_list(s->peak_bound, s->devices);
    sdev = int_list(s->stage_device, s->stages);
    stime = double_list(s->stage_time, 4 * s->stages);
    smem = double_list(s->stage_memory, s->stages);
    tt = pp_sched_torchtitan_schedule(s);
    if (!peak || !bound || !sdev || !stime || !smem) d = NULL;
    else
        d = Py_BuildValue(
            "{s:s,s:i,s:i,s:i,s:i,s:s,s:O,s:i,s:(dddd),s:d,s:d,s:O,s:O,s:i,s:d,s:d,s:O,s:i,s:O,s:O,s:O,"
            "s:(dddd),s:z,s:i}",
            "name", s->name, "devices", s->devices, "chunks", s->chunks, "stages", s->stages, "microbatches",
            s->microbatches, "placement", pp_placement_name(s->placement), "split_backward",
            s->split_backward ? Py_True : Py_False, "copies", s->copies == 2 ? 2 : 1, "times", s->times.f,
            s->times.b, s->times.w, s->times.comm, "makespan", s->makespan, "bubble_rate", s->bubble_rate,
            "peak_memory", peak, "peak_bound", bound, "interval", s->interval, "mem_limit", s->mem_limit,
            "mem_limit_asked", s->mem_limit_asked, "recompute", s->recompute ? Py_True : Py_False,
            "bubble_growth", s->bubble_growth, "stage_device", sdev, "stage_time", stime, "stage_memory", smem,
            "bounds", b.work, b.path, b.appendix, b.best, "torchtitan", tt, "num_passes", s->num_passes);
    Py_XDECREF(peak);
    Py_XDECREF(bound);
    Py_XDECREF(sdev);
    Py_XDECREF(stime);
    Py_XDECREF(smem);
    return d;
}

/* The passes as a list of (device, stage, microbatch, kind, start, end),
   device-major, each device's in execution order. */
static PyObject *sched_passes(PyObject *self, PyObject *unused) {
    pp_schedule *s = sched_of(self);
    PyObject *l, *kinds[4];
    int i, k;
    (void)unused;
    if (!s) return NULL;
    for (k = 0; k < 4; k++) {
        kinds[k] = PyUnicode_FromString(pp_kind_name((pp_kind)k));
        if (!kinds[k]) {
            while (k--) Py_DECREF(kinds[k]);
            return NULL;
        }
    }
    l = PyList_New(s->num_passes);
    for (i = 0; l && i < s->num_passes; i++) {
        const pp_pass *p = &s->passes[i];
        PyObject *t = Py_BuildValue("(iiiOdd)", p->device, p->stage, p->microbatch, kinds[(int)p->kind & 3],
                                    p->start, p->end);
        if (!t || PyList_SetItem(l, i, t) < 0) {
            Py_DECREF(l);
            l = NULL;
        }
    }
    for (k = 0; k < 4; k++) Py_DECREF(kinds[k]);
    return l;
}

static PyObject *sched_validate(PyObject *self, PyObject *unused) {
    pp_schedule *s = sched_of(self);
    char err[PP_ERR_LEN] = "";
    pp_status st;
    (void)unused;
    if (!s) return NULL;
    st = pp_sched_validate(s, err);
    if (st != PP_OK) return raise_status(st, err);
    Py_RETURN_NONE;
}

/* lower(check): the per-device programs as (ops, device_start, slots,
   send_buffers, stage_device); check = 1 runs pp_sched_check_deadlock too
   and raises on a deadlock. Each op: (type, kind, stage, microbatch, peer,
   what, slot, group, time, consumer, sends). */
static PyObject *sched_lower(PyObject *self, PyObject *args) {
    pp_schedule *s = sched_of(self);
    char err[PP_ERR_LEN] = "";
    pp_program *prog = NULL;
    pp_status st;
    int check = 0, i;
    PyObject *ops = NULL, *res = NULL, *starts = NULL, *slots = NULL, *sbuf = NULL, *sdev = NULL;
    if (!s) return NULL;
    if (!PyArg_ParseTuple(args, "|p", &check)) return NULL;
    st = pp_sched_lower(s, &prog, err);
    if (st == PP_OK && check) st = pp_sched_check_deadlock(prog, NULL, err);
    if (st != PP_OK) {
        pp_program_free(prog);
        return raise_status(st, err);
    }
    ops = PyList_New(prog->num_ops);
    for (i = 0; ops && i < prog->num_ops; i++) {
        const pp_op *op = &prog->ops[i];
        PyObject *t = Py_BuildValue("(ssiiisiidii)", pp_op_type_name(op->type),
                                    op->type == PP_OP_COMPUTE ? pp_kind_name(op->kind) : "",
                                    op->stage, op->microbatch, op->peer,
                                    op->type == PP_OP_COMPUTE ? "" : op->what == PP_ACTIVATION ? "activation" : "gradient",
                                    op->slot, op->group, op->time, op->consumer, op->sends);
        if (!t || PyList_SetItem(ops, i, t) < 0) {
            Py_DECREF(ops);
            ops = NULL;
        }
    }
    starts = int_list(prog->device_start, prog->devices + 1);
    slots = int_list(prog->slots, prog->devices);
    sbuf = int_list(prog->send_buffers, prog->devices);
    sdev = int_list(prog->stage_device, prog->stages);
    if (ops && starts && slots && sbuf && sdev) res = Py_BuildValue("(OOOOO)", ops, starts, slots, sbuf, sdev);
    Py_XDECREF(ops);
    Py_XDECREF(starts);
    Py_XDECREF(slots);
    Py_XDECREF(sbuf);
    Py_XDECREF(sdev);
    pp_program_free(prog);
    return res;
}

/* ---- printers: the library writes to a FILE*, we hand back a str ---- */

enum { OUT_ASCII, OUT_JSON, OUT_CSV, OUT_SVG, OUT_TRACE, OUT_PROGRAM };

static PyObject *sched_print(PyObject *self, PyObject *args) {
    pp_schedule *s = sched_of(self);
    char err[PP_ERR_LEN] = "";
    pp_status st = PP_OK;
    int what, flags = 0;
    long len;
    char *buf;
    FILE *f;
    PyObject *res;
    if (!s) return NULL;
    if (!PyArg_ParseTuple(args, "i|i", &what, &flags)) return NULL;
    f = tmpfile();
    if (!f) return PyErr_SetFromErrno(PyExc_OSError);
    switch (what) {
    case OUT_ASCII: pp_sched_print_ascii(f, s, flags); break;
    case OUT_JSON: pp_sched_print_json(f, s); break;
    case OUT_CSV: st = pp_sched_print_csv(f, s, err); break;
    case OUT_SVG: st = pp_sched_print_svg(f, s, flags, err); break;
    case OUT_TRACE: st = pp_sched_print_trace(f, s, err); break;
    case OUT_PROGRAM: {
        pp_program *prog = NULL;
        st = pp_sched_lower(s, &prog, err);
        if (st == PP_OK) pp_program_print(f, prog);
        pp_program_free(prog);
        break;
    }
    default:
        fclose(f);
        PyErr_SetString(PyExc_ValueError, "unknown output format");
        return NULL;
    }
    if (st != PP_OK) {
        fclose(f);
        return raise_status(st, err);
    }
    if (fflush(f) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    buf = (char *)malloc((size_t)len + 1);
    if (!buf) {
        fclose(f);
        return PyErr_NoMemory();
    }
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        fclose(f);
        PyErr_SetString(PyExc_OSError, "could not read the printed schedule back");
        return NULL;
    }
    fclose(f);
    res = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
    free(buf);
    return res;
}

/* bubble_growth(): measures O(p)/O(n) (two more builds) and stores it in the
   schedule, as ppsched does before printing JSON; returns 0, 1 or -1. */
static PyObject *sched_set_name(PyObject *self, PyObject *args) {
    pp_schedule *s = sched_of(self);
    const char *name;
    if (!s) return NULL;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    snprintf(s->name, sizeof s->name, "%s", name);
    Py_RETURN_NONE;
}

static PyObject *sched_set_bubble_growth(PyObject *self, PyObject *args) {
    pp_schedule *s = sched_of(self);
    int g;
    if (!s) return NULL;
    if (!PyArg_ParseTuple(args, "i", &g)) return NULL;
    s->bubble_growth = g < 0 ? -1 : g ? 1 : 0;
    Py_RETURN_NONE;
}

static PyMethodDef sched_methods[] = {
    {"info", sched_info, METH_NOARGS, "every scalar, per-device and per-stage fact as a dict"},
    {"passes", sched_passes, METH_NOARGS, "[(device, stage, microbatch, kind, start, end)]"},
    {"validate", sched_validate, METH_NOARGS, "pp_sched_validate; raises Error"},
    {"lower", sched_lower, METH_VARARGS, "lower([check]): per-device programs"},
    {"print", sched_print, METH_VARARGS, "print(what[, flags]) -> str"},
    {"set_name", sched_set_name, METH_VARARGS, "rename (at most 31 bytes are kept)"},
    {"set_bubble_growth", sched_set_bubble_growth, METH_VARARGS, "store a bubble growth result"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot sched_slots[] = {
    {Py_tp_dealloc, (void *)sched_dealloc},
    {Py_tp_methods, sched_methods},
    {Py_tp_doc, (void *)"one built schedule (pp_schedule); use pp_sched.Schedule"},
    {0, NULL},
};

static PyType_Spec sched_spec = {
    "pp_sched._pp_sched.Sched", sizeof(SchedObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    sched_slots,
};

/* ---- building ---- */

/* stage_times: None or a sequence of (f, b, w[, comm]) per stage; *out is
   malloc'ed (caller frees) or NULL. The Python layer has checked the types,
   this only converts (and still refuses what it cannot convert). */
static int parse_stage_times(PyObject *seq, pp_times **out, int *count) {
    Py_ssize_t n, i;
    pp_times *t;
    *out = NULL;
    *count = 0;
    if (seq == Py_None) return 0;
    n = PySequence_Size(seq);
    if (n < 0) return -1;
    if (n > 1 << 24) {
        PyErr_SetString(Error, "stage_times: more than 16777216 stages");
        return -1;
    }
    t = (pp_times *)calloc((size_t)(n ? n : 1), sizeof *t);
    if (!t) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < n; i++) {
        PyObject *row = PySequence_GetItem(seq, i);
        int ok;
        if (!row) {
            free(t);
            return -1;
        }
        ok = PyArg_ParseTuple(row, "ddd|d", &t[i].f, &t[i].b, &t[i].w, &t[i].comm);
        Py_DECREF(row);
        if (!ok) {
            free(t);
            return -1;
        }
    }
    *out = t;
    *count = (int)n;
    return 0;
}

/* build(schedule, devices, microbatches, chunks, (f, b, w, comm), stage_times,
         recompute_input, no_reorder, no_guarantee, mem_limit) */
static PyObject *mod_build(PyObject *mod, PyObject *args) {
    pp_config cfg;
    const char *name;
    PyObject *stage_seq;
    pp_times *st_times = NULL;
    int n_st = 0, no_reorder = 0, no_guarantee = 0;
    char err[PP_ERR_LEN] = "";
    pp_schedule *s = NULL;
    pp_status st;
    (void)mod;
    memset(&cfg, 0, sizeof cfg);
    if (!PyArg_ParseTuple(args, "siii(dddd)Odppd", &name, &cfg.devices, &cfg.microbatches, &cfg.chunks,
                          &cfg.times.f, &cfg.times.b, &cfg.times.w, &cfg.times.comm, &stage_seq,
                          &cfg.recompute_input, &no_reorder, &no_guarantee, &cfg.mem_limit))
        return NULL;
    if (parse_stage_times(stage_seq, &st_times, &n_st) < 0) return NULL;
    if (st_times) {
        /* the library reads stage_times[0 .. S-1]: S is only known from the
           schedule's facts, so check the length against them first */
        const pp_sched_info *in = pp_sched_find(name);
        long v = cfg.chunks > 0 ? cfg.chunks : in ? in->chunks : 1;
        long S = (long)cfg.devices * v;
        if (in && cfg.devices >= 1 && n_st != S) {
            free(st_times);
            PyErr_Format(Error, "stage_times has %d rows; %s with devices=%d and %ld chunks has %ld stages: give one "
                         "(f, b, w) per stage", n_st, in->name, cfg.devices, v, S);
            return NULL;
        }
        cfg.stage_times = st_times;
    }
    cfg.schedule = name;
    cfg.no_reorder = no_reorder;
    cfg.no_guarantee = no_guarantee;
    Py_BEGIN_ALLOW_THREADS
    st = pp_sched_build(&cfg, &s, err);
    Py_END_ALLOW_THREADS
    free(st_times);
    if (st != PP_OK) {
        pp_sched_free(s);
        return raise_status(st, err);
    }
    return wrap_schedule(s);
}

/* bubble_growth(same arguments as build) -> 0 (O(p)) or 1 (O(n)) */
static PyObject *mod_bubble_growth(PyObject *mod, PyObject *args) {
    pp_config cfg;
    const char *name;
    PyObject *stage_seq;
    pp_times *st_times = NULL;
    int n_st = 0, no_reorder = 0, no_guarantee = 0, grows = -1;
    char err[PP_ERR_LEN] = "";
    pp_status st;
    (void)mod;
    memset(&cfg, 0, sizeof cfg);
    if (!PyArg_ParseTuple(args, "siii(dddd)Odppd", &name, &cfg.devices, &cfg.microbatches, &cfg.chunks,
                          &cfg.times.f, &cfg.times.b, &cfg.times.w, &cfg.times.comm, &stage_seq,
                          &cfg.recompute_input, &no_reorder, &no_guarantee, &cfg.mem_limit))
        return NULL;
    if (stage_seq != Py_None) {
        PyErr_SetString(Error, "bubble growth is measured at uniform times: stage_times must be None");
        return NULL;
    }
    (void)st_times;
    (void)n_st;
    cfg.schedule = name;
    cfg.no_reorder = no_reorder;
    cfg.no_guarantee = no_guarantee;
    /* pp_sched_bubble_growth builds at 3d and 6d microbatches and computes
       those in int before it checks d: above INT_MAX / 6 devices (far above
       the library's device limit) ask pp_sched_build for its refusal instead */
    if (cfg.devices > INT_MAX / 6) {
        pp_schedule *s = NULL;
        st = pp_sched_build(&cfg, &s, err);
        pp_sched_free(s);
        if (st == PP_OK) {
            st = PP_ERR_OVERFLOW;
            snprintf(err, sizeof err, "bubble growth: devices = %d is too large (6 x devices microbatches must fit an int)",
                     cfg.devices);
        }
        return raise_status(st, err);
    }
    Py_BEGIN_ALLOW_THREADS
    st = pp_sched_bubble_growth(&cfg, &grows, err);
    Py_END_ALLOW_THREADS
    if (st != PP_OK) return raise_status(st, err);
    return PyLong_FromLong(grows);
}

/* from_csv(text, (f, b, w, comm), stage_times) */
static PyObject *mod_from_csv(PyObject *mod, PyObject *args) {
    pp_config cfg;
    const char *text;
    Py_ssize_t len;
    PyObject *stage_seq;
    pp_times *st_times = NULL;
    int n_st = 0;
    char err[PP_ERR_LEN] = "";
    pp_schedule *s = NULL;
    pp_status st;
    (void)mod;
    memset(&cfg, 0, sizeof cfg);
    if (!PyArg_ParseTuple(args, "s#(dddd)O", &text, &len, &cfg.times.f, &cfg.times.b, &cfg.times.w,
                          &cfg.times.comm, &stage_seq))
        return NULL;
    if (parse_stage_times(stage_seq, &st_times, &n_st) < 0) return NULL;
    cfg.stage_times = st_times;
    /* the stage count is known only once the CSV is read: parse it once
       without stage_times, check the length, then again with them */
    if (st_times) {
        pp_config plain = cfg;
        plain.stage_times = NULL;
        st = pp_sched_from_csv(text, (size_t)len, &plain, &s, err);
        if (st != PP_OK) {
            free(st_times);
            pp_sched_free(s);
            return raise_status(st, err);
        }
        if (s->stages != n_st) {
            int S = s->stages;
            pp_sched_free(s);
            free(st_times);
            PyErr_Format(Error, "stage_times has %d rows; the CSV has %d stages: give one (f, b, w) per stage",
                         n_st, S);
            return NULL;
        }
        pp_sched_free(s);
        s = NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    st = pp_sched_from_csv(text, (size_t)len, &cfg, &s, err);
    Py_END_ALLOW_THREADS
    free(st_times);
    if (st != PP_OK) {
        pp_sched_free(s);
        return raise_status(st, err);
    }
    return wrap_schedule(s);
}

/* schedules(): the facts table, one tuple per row of PP_SCHED_LIST:
   (name, description, placement, chunks, any_chunks, split_backward,
    recompute, copies, adaptive, takes_limit, fixed_limit, published) */
static PyObject *mod_schedules(PyObject *mod, PyObject *unused) {
    int n = pp_sched_count(), i;
    PyObject *l = PyList_New(n);
    (void)mod;
    (void)unused;
    for (i = 0; l && i < n; i++) {
        const pp_sched_info *in = pp_sched_info_at(i);
        PyObject *t = Py_BuildValue("(sssiOOOiOOdO)", in->name, in->description, pp_placement_name(in->placement),
                                    in->chunks, in->any_chunks ? Py_True : Py_False,
                                    in->split_backward ? Py_True : Py_False, in->recompute ? Py_True : Py_False,
                                    in->copies, in->adaptive ? Py_True : Py_False,
                                    in->takes_limit ? Py_True : Py_False, in->fixed_limit,
                                    in->published ? Py_True : Py_False);
        if (!t || PyList_SetItem(l, i, t) < 0) {
            Py_DECREF(l);
            l = NULL;
        }
    }
    return l;
}

/* ---- the planner (pp_plan.h) ---- */

/* Fills the int and double fields of a C struct from a dict whose keys the
   Python layer has checked against the field tables below. */
typedef struct field { const char *name; size_t off; char type; } field;
#define FI(T, f) {#f, offsetof(T, f), 'i'}
#define FD(T, f) {#f, offsetof(T, f), 'd'}
static const field model_fields[] = {
    FI(pp_model, layers), FI(pp_model, hidden), FI(pp_model, heads), FI(pp_model, seq), FI(pp_model, kv_heads),
    FI(pp_model, head_dim), FI(pp_model, ffn), FI(pp_model, gated), FI(pp_model, vocab), FI(pp_model, untied),
    FI(pp_model, rope), FI(pp_model, rmsnorm), FI(pp_model, experts), FI(pp_model, top_k),
    FI(pp_model, shared_experts), FI(pp_model, expert_ffn), FI(pp_model, dense_layers),
    FI(pp_model, kv_lora_rank), FI(pp_model, q_lora_rank), FI(pp_model, rope_head_dim),
    FI(pp_model, no_flash_attention), FI(pp_model, no_seq_parallel), FI(pp_model, no_distributed_optimizer),
    FI(pp_model, recompute_norm_up), FI(pp_model, fp8_moe_act), {NULL, 0, 0}};
static const field gpu_fields[] = {
    FD(pp_gpu, mem_bytes), FD(pp_gpu, flops), FD(pp_gpu, hbm_bw), FD(pp_gpu, tp_bw), FD(pp_gpu, net_bw),
    FD(pp_gpu, reserve_bytes), FD(pp_gpu, tp_slowdown), FD(pp_gpu, peak_flops), FD(pp_gpu, efficiency),
    FI(pp_gpu, node_gpus), {NULL, 0, 0}};
static const field req_fields[] = {
    FI(pp_plan_request, gpus), FI(pp_plan_request, global_batch), FI(pp_plan_request, pp),
    FI(pp_plan_request, tp), FI(pp_plan_request, dp), FI(pp_plan_request, mbs), FI(pp_plan_request, cp),
    FI(pp_plan_request, ep), FI(pp_plan_request, v), FI(pp_plan_request, no_prune),
    FI(pp_plan_request, keep_top), {NULL, 0, 0}};

static int fill_fields(void *base, const field *fields, PyObject *dict, const char *what) {
    const field *fl;
    Py_ssize_t pos = 0;
    PyObject *key, *val;
    if (dict == Py_None) return 0;
    if (!PyDict_Check(dict)) {
        PyErr_Format(PyExc_TypeError, "%s must be a dict", what);
        return -1;
    }
    while (PyDict_Next(dict, &pos, &key, &val)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, NULL) : NULL;
        if (!k) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s: keys must be str", what);
            return -1;
        }
        for (fl = fields; fl->name; fl++)
            if (strcmp(fl->name, k) == 0) break;
        if (!fl->name) {
            PyErr_Format(Error, "%s has no field '%s'", what, k);
            return -1;
        }
        if (fl->type == 'i') {
            int overflow = 0;
            long x = PyLong_AsLongAndOverflow(val, &overflow);
            if (x == -1 && PyErr_Occurred()) return -1;
            if (overflow || x < -2147483647L - 1 || x > 2147483647L) {
                PyErr_Format(Error, "%s.%s = %S is out of range for a C int", what, k, val);
                return -1;
            }
            *(int *)((char *)base + fl->off) = (int)x;
        } else {
            double x = PyFloat_AsDouble(val);
            if (x == -1.0 && PyErr_Occurred()) return -1;
            *(double *)((char *)base + fl->off) = x;
        }
    }
    return 0;
}

/* plan(model_preset, model_fields, gpu_preset, gpu_fields, request_fields,
        schedule, times) -> [candidate tuples] */
static PyObject *mod_plan(PyObject *mod, PyObject *args) {
    pp_plan_request r;
    const char *mpreset, *gpreset, *sched;
    PyObject *mdict, *gdict, *rdict, *times, *l = NULL;
    pp_times tm;
    char err[PP_ERR_LEN] = "";
    pp_candidate *c = NULL;
    int count = 0, i;
    pp_status st;
    (void)mod;
    memset(&r, 0, sizeof r);
    if (!PyArg_ParseTuple(args, "zOzOOzO", &mpreset, &mdict, &gpreset, &gdict, &rdict, &sched, &times)) return NULL;
    if (mpreset && (st = pp_model_preset(mpreset, &r.model, err)) != PP_OK) return raise_status(st, err);
    if (gpreset && (st = pp_gpu_preset(gpreset, &r.gpu, err)) != PP_OK) return raise_status(st, err);
    if (fill_fields(&r.model, model_fields, mdict, "model") < 0 || fill_fields(&r.gpu, gpu_fields, gdict, "gpu") < 0 ||
        fill_fields(&r, req_fields, rdict, "plan request") < 0)
        return NULL;
    if (times != Py_None) {
        memset(&tm, 0, sizeof tm);
        if (!PyArg_ParseTuple(times, "dddd", &tm.f, &tm.b, &tm.w, &tm.comm)) return NULL;
        r.times = &tm;
    }
    r.schedule = sched;
    /* cap 0: the count of candidates (and every check of the request) */
    Py_BEGIN_ALLOW_THREADS
    st = pp_plan(&r, NULL, 0, &count, err);
    Py_END_ALLOW_THREADS
    if (st != PP_OK) return raise_status(st, err);
    c = (pp_candidate *)calloc((size_t)(count > 0 ? count : 1), sizeof *c);
    if (!c) return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    st = pp_plan(&r, c, count, &count, err);
    Py_END_ALLOW_THREADS
    if (st != PP_OK) {
        free(c);
        return raise_status(st, err);
    }
    l = PyList_New(count);
    for (i = 0; l && i < count; i++) {
        const pp_candidate *k = &c[i];
        PyObject *t = Py_BuildValue("(siiiiiiiiOdddddddsO)", k->schedule, k->pp, k->tp, k->dp, k->mbs,
                                    k->microbatches, k->cp, k->ep, k->v, k->fits ? Py_True : Py_False,
                                    k->peak_bytes, k->static_bytes, k->unit_bytes, k->peak_units, k->step_time,
                                    k->mfu, k->bound, k->reason, k->pruned ? Py_True : Py_False);
        if (!t || PyList_SetItem(l, i, t) < 0) {
            Py_DECREF(l);
            l = NULL;
        }
    }
    free(c);
    return l;
}

/* presets() -> ([model names], [gpu names]) */
static PyObject *mod_presets(PyObject *mod, PyObject *unused) {
    PyObject *m = PyList_New(0), *g = PyList_New(0), *res = NULL;
    int i;
    (void)mod;
    (void)unused;
    if (!m || !g) goto done;
    for (i = 0; pp_model_preset_name(i); i++) {
        PyObject *x = PyUnicode_FromString(pp_model_preset_name(i));
        if (!x || PyList_Append(m, x) < 0) {
            Py_XDECREF(x);
            goto done;
        }
        Py_DECREF(x);
    }
    for (i = 0; pp_gpu_preset_name(i); i++) {
        PyObject *x = PyUnicode_FromString(pp_gpu_preset_name(i));
        if (!x || PyList_Append(g, x) < 0) {
            Py_XDECREF(x);
            goto done;
        }
        Py_DECREF(x);
    }
    res = Py_BuildValue("(OO)", m, g);
done:
    Py_XDECREF(m);
    Py_XDECREF(g);
    return res;
}

static PyMethodDef module_methods[] = {
    {"build", mod_build, METH_VARARGS, "pp_sched_build"},
    {"bubble_growth", mod_bubble_growth, METH_VARARGS, "pp_sched_bubble_growth"},
    {"from_csv", mod_from_csv, METH_VARARGS, "pp_sched_from_csv"},
    {"schedules", mod_schedules, METH_NOARGS, "the facts table (PP_SCHED_LIST)"},
    {"plan", mod_plan, METH_VARARGS, "pp_plan"},
    {"presets", mod_presets, METH_NOARGS, "model and GPU preset names"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_pp_sched", "pp_sched.h and pp_plan.h, wrapped (use the pp_sched package)", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pp_sched(void) {
    PyObject *m = PyModule_Create(&module_def), *version;
    if (!m) return NULL;
    if (!Error) {
        Error = PyErr_NewExceptionWithDoc("pp_sched.Error",
                                          "a pp_sched library error: str(e) is the library's message, e.status its status",
                                          PyExc_ValueError, NULL);
        if (!Error) goto fail;
    }
    if (!SchedType) {
        SchedType = PyType_FromSpec(&sched_spec);
        if (!SchedType) goto fail;
    }
    version = Py_BuildValue("(iii)", PP_SCHED_VERSION_MAJOR, PP_SCHED_VERSION_MINOR, PP_SCHED_VERSION_PATCH);
    if (!version || PyModule_AddObjectRef(m, "Error", Error) < 0 || PyModule_AddObjectRef(m, "Sched", SchedType) < 0 ||
        PyModule_AddObject(m, "version", version) < 0 || PyModule_AddIntConstant(m, "OUT_ASCII", OUT_ASCII) < 0 ||
        PyModule_AddIntConstant(m, "OUT_JSON", OUT_JSON) < 0 || PyModule_AddIntConstant(m, "OUT_CSV", OUT_CSV) < 0 ||
        PyModule_AddIntConstant(m, "OUT_SVG", OUT_SVG) < 0 || PyModule_AddIntConstant(m, "OUT_TRACE", OUT_TRACE) < 0 ||
        PyModule_AddIntConstant(m, "OUT_PROGRAM", OUT_PROGRAM) < 0 ||
        PyModule_AddIntConstant(m, "SVG_MEMORY", PP_SVG_MEMORY) < 0) {
        Py_XDECREF(version);
        goto fail;
    }
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
