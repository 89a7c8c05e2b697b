/* ppsched.c - the pp_sched command-line tool.

   Demonstrates the whole public path of pp_sched.h from a user's side: fill a
   pp_config (zero fields mean defaults), pp_sched_build, pp_sched_validate,
   then print with pp_sched_print_ascii or pp_sched_print_json, and free with
   one call. It is also how you look at a schedule without writing C.

   Build:   make                  (or: cc -std=c99 -O2 -o ppsched examples/ppsched.c -lm)
   Run:     ./ppsched --list
            ./ppsched -s v-half -d 4 -n 8
            ./ppsched -s zb-h1 -d 4 -n 8 --times 1,1,1,0.1 --format json
            ./ppsched -s v-half -d 4 -n 8 --format csv > v-half.csv   (PyTorch CSV)
            ./ppsched -s v-half -d 4 -n 8 --format svg > v-half.svg
            ./ppsched analyze v-half.csv --times 1,2,1,0.05
            ./ppsched gallery -d 4 -n 8 -o gallery
            ./ppsched plan --model llama3-70b --gpu h100-80g --gpus 64 --global-batch 512

   Prints:  --list: one line per built-in schedule: its name, its facts
            (placement, chunks per device, passes, what sets its memory or
            order; read from pp_sched_info) and its description.
            Otherwise the schedule's timeline (one row per device, as in the
            paper's figures, coloured when stdout is a terminal) or one JSON
            object (see README.md for its keys), a PyTorch schedule CSV (and,
            on stderr, the torchtitan setting that matches its placement), an
            SVG picture or a Chrome trace. analyze reads a PyTorch CSV and
            prints the schedule it describes with real times; gallery writes
            one SVG per built-in schedule and an index.html. plan (pp_plan.h)
            ranks layouts x microbatch sizes x schedules for a model on a
            cluster: the top K, then each schedule's best or why none fits.
   Exit:    0 ok; 2 the arguments must change (an unknown or inapplicable
            option, a value out of range, a schedule the library refuses to
            build from them: pp_status_bad_input); 1 a bad input file or a
            failed run. An argument error prints one line saying what was
            wrong and what would be right, and a pointer to --help. */
#define _POSIX_C_SOURCE 200809L /* isatty under -std=c99 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_PLAN_IMPLEMENTATION
#include "../pp_plan.h"

static const char *usage_text =
    "usage: ppsched -s NAME -d D -n N [options]\n"
    "       ppsched sweep -s NAME -d D -n N --mem-from A --mem-to B [--mem-step S] [options]\n"
    "       ppsched best --mem-limit X -d D -n N [options]\n"
    "       ppsched analyze FILE.csv|- [--times F,B,W[,COMM]] [options]   (- = standard input)\n"
    "       ppsched gallery -d D -n N -o DIR [--times F,B,W[,COMM]]\n"
    "       ppsched plan (--model NAME | --layers L --hidden H --heads A --seq S) --global-batch GB --gpus N [...]\n"
    "       ppsched --list\n"
    "       ppsched --help\n"
    "\n"
    "  -s, --schedule NAME      built-in schedule (see --list), e.g. v-half\n"
    "  -d, --devices D          pipeline devices (d >= 1)\n"
    "  -n, --microbatches N     microbatches (n >= 1)\n"
    "  -v, --chunks V           stages per device; 0 or absent = the schedule's own\n"
    "      --times F,B,W[,COMM] pass times for one device's share of the model\n"
    "                           (default 1,1,1,0); F, B > 0, W, COMM >= 0; COMM\n"
    "                           is added on every dependency that crosses devices\n"
    "      --format FORMAT      ascii (default), json, csv (PyTorch compute_only\n"
    "                           schedule CSV), svg (picture), trace (Chrome\n"
    "                           trace event JSON for chrome://tracing, Perfetto)\n"
    "                           or program: the per-device programs of\n"
    "                           pp_sched_lower, checked for deadlock (F0.1#2 = F\n"
    "                           of stage 0, microbatch 1 in slot 2; {S>1 a0.1 R<1\n"
    "                           g1.0} = one group: send the activation to device\n"
    "                           1, receive a gradient from it)\n"
    "      --svg-memory         svg: draw each device's memory over time too\n"
    "  -o, --output DIR         gallery: directory for the SVGs and index.html\n"
    "      --no-reorder         skip the Appendix C warm-up/cool-down reordering\n"
    "      --bubble-growth      ascii, json: also measure O(p)/O(n) for v-auto, zb-auto,\n"
    "                           zb-1p, zb-2p (two more searches, at 3d and 6d\n"
    "                           microbatches); the other schedules always get it\n"
    "      --mem-limit X        v-auto, zb-auto: activation memory limit per device,\n"
    "                           in units (1F1B's device 0 holds d); default d\n"
    "      --recompute-input X  1f1b-r: activation kept per stage, as a fraction\n"
    "                           of a chunk's activation (default 0)\n"
    "      --mem-from A, --mem-to B, --mem-step S\n"
    "                           sweep: the limits to try (step default 0.5); v-auto\n"
    "                           and zb-auto are built under each, any other schedule\n"
    "                           once, with the limits its peak is above marked\n"
    "      --no-color           no ANSI colours (default: colour when stdout is a\n"
    "                           terminal and NO_COLOR is not set)\n"
    "      --list               list the built-in schedules with their facts and exit\n"
    "  -h, --help               show this help and exit\n"
    "\n"
    "analyze reads a PyTorch schedule CSV (one row per rank, cells like 3F1, 3I1,\n"
    "3W1, 3B1), checks it, squeezes it with the given times and prints it.\n"
    "\n"
    "An option that does not apply to the subcommand, schedule or format chosen\n"
    "is an error that says why. best lists every schedule: ranked, above the\n"
    "limit, or not built and why.\n"
    "\n"
    "exit status: 0 ok; 2 the arguments must change (bad or inapplicable option,\n"
    "a value out of range, a schedule that cannot be built from them); 1 a bad\n"
    "input file or a failed run (cannot read or write, a CSV that is not a\n"
    "schedule, a schedule that does not validate)\n";

/* ---- the command line: one table of options, one parser, one check ------
   Every option is a row of opts[]: its names, whether it takes a value, the
   subcommands it applies to, the facts (pp_sched_info, FACT_*) the chosen
   schedule must have for it to mean something, the output formats it
   applies to, and a phrase that says what it is for. parse_args reads the
   arguments into an args struct (no printing, no exit: the fuzz target
   tests/fuzz_cli.c calls it) and then check_args, the one check, refuses
   every option that does not apply to the subcommand, schedule and format
   chosen, naming the option and why. A new option is a new row and a case
   in set_option. plan (pp_plan.h) keeps its own table, plan_opts. */

enum { FMT_ASCII, FMT_JSON, FMT_CSV, FMT_SVG, FMT_TRACE, FMT_PROGRAM };
#define FMTS_TEXT ((1u << FMT_ASCII) | (1u << FMT_JSON))

enum { MODE_BUILD = 1, MODE_SWEEP = 2, MODE_BEST = 4, MODE_ANALYZE = 8, MODE_GALLERY = 16 };
#define MODES_ALL 31u
#define MODES_SCHED (MODE_BUILD | MODE_SWEEP | MODE_BEST | MODE_GALLERY) /* those that build from -d, -n */

static const char *mode_name(unsigned mode) {
    switch (mode) {
    case MODE_SWEEP: return "sweep";
    case MODE_BEST: return "best";
    case MODE_ANALYZE: return "analyze";
    case MODE_GALLERY: return "gallery";
    default: return "a single schedule (no subcommand)";
    }
}

enum {
    OPT_HELP, OPT_LIST, OPT_SCHEDULE, OPT_DEVICES, OPT_MICROBATCHES, OPT_CHUNKS, OPT_TIMES, OPT_FORMAT,
    OPT_SVG_MEMORY, OPT_OUTPUT, OPT_NO_REORDER, OPT_BUBBLE_GROWTH, OPT_MEM_LIMIT, OPT_RECOMPUTE_INPUT,
    OPT_MEM_FROM, OPT_MEM_TO, OPT_MEM_STEP, OPT_NO_COLOR,
    OPT_COUNT
};

/* The facts of a schedule (pp_sched_info, from PP_SCHED_LIST) an option
   can need, as bits of option_row.needs. */
enum { FACT_ANY_CHUNKS = 1, FACT_TAKES_LIMIT = 2, FACT_RECOMPUTE = 4, FACT_REORDERED = 8, FACT_ADAPTIVE = 16 };

static unsigned sched_facts(const pp_sched_info *in) {
    return (in->any_chunks ? FACT_ANY_CHUNKS : 0u) | (in->takes_limit ? FACT_TAKES_LIMIT : 0u) |
           (in->recompute ? FACT_RECOMPUTE : 0u) | (in->published ? 0u : FACT_REORDERED) |
           (in->adaptive ? FACT_ADAPTIVE : 0u);
}

typedef struct option_row {
    const char *shortname, *longname;
    int takes_value;
    unsigned modes;   /* MODE_* it applies to */
    unsigned needs;   /* build, sweep: the chosen schedule must have one of these FACT_*; 0 = any */
    unsigned formats; /* bit per FMT_* it applies to; 0 = any */
    const char *what; /* what it is for, said when it does not apply */
} option_row;

static const option_row opts[OPT_COUNT] = {
    {"-h", "--help", 0, MODES_ALL, 0, 0, "help"},
    {NULL, "--list", 0, MODES_ALL, 0, 0, "the list of schedules"},
    {"-s", "--schedule", 1, MODE_BUILD | MODE_SWEEP, 0, 0,
     "the schedule to build; best and gallery build every one and analyze reads it from the file"},
    {"-d", "--devices", 1, MODES_SCHED, 0, 0, "the device count; analyze reads it from the file"},
    {"-n", "--microbatches", 1, MODES_SCHED, 0, 0, "the microbatch count; analyze reads it from the file"},
    {"-v", "--chunks", 1, MODES_SCHED, FACT_ANY_CHUNKS, 0, "the chunk count of the interleaved and looped schedules"},
    {NULL, "--times", 1, MODES_ALL, 0, 0, "the pass times"},
    {NULL, "--format", 1, MODE_BUILD | MODE_SWEEP | MODE_BEST | MODE_ANALYZE, 0, 0,
     "the output format; gallery writes SVG and HTML"},
    {NULL, "--svg-memory", 0, MODE_BUILD | MODE_ANALYZE, 0, 1u << FMT_SVG, "a memory curve under an SVG timeline"},
    {"-o", "--output", 1, MODE_GALLERY, 0, 0, "gallery's output directory"},
    {NULL, "--no-reorder", 0, MODE_BUILD | MODE_SWEEP | MODE_BEST | MODE_GALLERY, FACT_REORDERED, 0,
     "skipping the reordering of the schedules that reorder"},
    {NULL, "--bubble-growth", 0, MODE_BUILD, FACT_ADAPTIVE, FMTS_TEXT,
     "measuring O(p)/O(n) of the searched schedules, which the others always get"},
    {NULL, "--mem-limit", 1, MODE_BUILD | MODE_BEST | MODE_GALLERY, FACT_TAKES_LIMIT, 0,
     "the memory limit of v-auto and zb-auto and best's ranking limit; sweep takes --mem-from and --mem-to"},
    {NULL, "--recompute-input", 1, MODE_BUILD | MODE_SWEEP | MODE_BEST | MODE_GALLERY, FACT_RECOMPUTE, 0,
     "the stage input 1f1b-r keeps"},
    {NULL, "--mem-from", 1, MODE_SWEEP, 0, 0, "sweep's first limit"},
    {NULL, "--mem-to", 1, MODE_SWEEP, 0, 0, "sweep's last limit"},
    {NULL, "--mem-step", 1, MODE_SWEEP, 0, 0, "sweep's step"},
    /* a display preference, like NO_COLOR: accepted with every format */
    {NULL, "--no-color", 0, MODE_BUILD | MODE_ANALYZE, 0, 0, "the colours of the ascii timeline"},
};

typedef struct args {
    unsigned mode;
    int given[OPT_COUNT]; /* argv index where each option was given, 0 = not given */
    pp_config cfg;        /* zero fields = the library's defaults */
    int format, color, svg_flags, want_growth, help, list;
    const char *file, *outdir;
    double mem_from, mem_to, mem_step;
} args;

/* One sentence into msg; returns 2 (bad command line). */
static int arg_error(char *msg, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return 2;
}

/* Whole number >= 0 that fits an int, nothing before or after it. */
static int parse_count(const char *text, int *out) {
    char *end;
    long v;
    if (text[0] < '0' || text[0] > '9') return 0; /* no sign, no space: "-4", " 4" are rejected */
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v > INT_MAX) return 0;
    *out = (int)v;
    return 1;
}

/* Finite number >= 0, nothing before or after it. */
static int parse_real(const char *text, double *out) {
    char *end;
    double v;
    if (!((text[0] >= '0' && text[0] <= '9') || text[0] == '.')) return 0;
    errno = 0;
    v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || v < 0) return 0;
    *out = v;
    return 1;
}

/* "F,B,W" or "F,B,W,COMM" with F > 0, B > 0 (zero times are the library's
   default, unit times: given on the command line they are an error). */
static int parse_times(const char *text, pp_times *t) {
    double v[4] = {0, 0, 0, 0};
    char buf[256];
    char *field = buf, *comma;
    int count = 0;
    if (strlen(text) >= sizeof buf) return 0;
    strcpy(buf, text);
    for (;;) {
        comma = strchr(field, ',');
        if (comma) *comma = '\0';
        if (count == 4 || !parse_real(field, &v[count])) return 0;
        count++;
        if (!comma) break;
        field = comma + 1;
    }
    if (count < 3 || !(v[0] > 0) || !(v[1] > 0)) return 0;
    for (count = 0; count < 4; count++) if (v[count] > PP_TIME_MAX) return 0;
    t->f = v[0];
    t->b = v[1];
    t->w = v[2];
    t->comm = v[3];
    return 1;
}

/* The value of option k into A; 0 ok, else 2 with a message. */
static int set_option(args *A, int k, const char *name, const char *value, char *msg, size_t len) {
    int *ip = NULL;
    double *dp = NULL;
    switch (k) {
    case OPT_HELP: A->help = 1; return 0;
    case OPT_LIST: A->list = 1; return 0;
    case OPT_SCHEDULE:
        if (value[0] == '\0') return arg_error(msg, len, "%s needs a schedule name, got ''", name);
        A->cfg.schedule = value;
        return 0;
    case OPT_DEVICES: ip = &A->cfg.devices; break;
    case OPT_MICROBATCHES: ip = &A->cfg.microbatches; break;
    case OPT_CHUNKS:
        if (!parse_count(value, &A->cfg.chunks) || A->cfg.chunks < 1)
            return arg_error(msg, len, "%s needs a whole number >= 1, got '%s'", name, value);
        return 0;
    case OPT_TIMES:
        if (!parse_times(value, &A->cfg.times))
            return arg_error(msg, len, "%s needs F,B,W or F,B,W,COMM, numbers up to %g with F > 0, B > 0, W >= 0, "
                                       "COMM >= 0 (leave --times out for unit times 1,1,1), got '%s'", name, PP_TIME_MAX, value);
        return 0;
    case OPT_FORMAT: {
        static const char *names[] = {"ascii", "json", "csv", "svg", "trace", "program"};
        int f;
        for (f = 0; f < 6 && strcmp(value, names[f]) != 0; f++) {}
        if (f == 6) return arg_error(msg, len, "%s must be ascii, json, csv, svg, trace or program, got '%s'", name, value);
        if ((A->mode & (MODE_SWEEP | MODE_BEST)) && f > FMT_JSON)
            return arg_error(msg, len, "%s of %s is ascii or json, got '%s'", name, mode_name(A->mode), value);
        A->format = f;
        return 0;
    }
    case OPT_SVG_MEMORY: A->svg_flags |= PP_SVG_MEMORY; return 0;
    case OPT_OUTPUT:
        if (value[0] == '\0') return arg_error(msg, len, "%s needs a directory, got ''", name);
        A->outdir = value;
        return 0;
    case OPT_NO_REORDER: A->cfg.no_reorder = 1; return 0;
    case OPT_BUBBLE_GROWTH: A->want_growth = 1; return 0;
    case OPT_NO_COLOR: A->color = 0; return 0;
    case OPT_MEM_LIMIT: dp = &A->cfg.mem_limit; break;
    case OPT_MEM_FROM: dp = &A->mem_from; break;
    case OPT_MEM_TO: dp = &A->mem_to; break;
    case OPT_MEM_STEP: dp = &A->mem_step; break;
    case OPT_RECOMPUTE_INPUT:
        if (!parse_real(value, &A->cfg.recompute_input) || A->cfg.recompute_input > 1)
            return arg_error(msg, len, "%s is the fraction of a chunk's activation 1f1b-r keeps per stage: a number "
                                       "from 0 to 1, got '%s'", name, value);
        return 0;
    }
    if (ip && (!parse_count(value, ip) || *ip < 1))
        return arg_error(msg, len, "%s needs a whole number >= 1, got '%s'", name, value);
    if (dp && (!parse_real(value, dp) || !(*dp > 0)))
        return arg_error(msg, len, "%s needs a number > 0, got '%s'", name, value);
    return 0;
}

/* The names of the schedules with one of the facts in needs. */
static void schedules_with(unsigned needs, char *buf, size_t len) {
    int i;
    size_t at = 0;
    buf[0] = '\0';
    for (i = 0; i < pp_sched_count() && at < len; i++)
        if (sched_facts(pp_sched_info_at(i)) & needs)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", pp_sched_info_at(i)->name);
}

/* The one check: every option given applies to the subcommand, the
   schedule and the format; and what each subcommand needs is there. */
static int check_args(const args *A, char *msg, size_t len) {
    const pp_sched_info *info = (A->mode & (MODE_BUILD | MODE_SWEEP)) ? pp_sched_find(A->cfg.schedule) : NULL;
    int k;
    if (A->help || A->list) return 0;
    for (k = 0; k < OPT_COUNT; k++) {
        const option_row *o = &opts[k];
        if (!A->given[k]) continue;
        if (!(o->modes & A->mode))
            return arg_error(msg, len, "%s does not apply to %s: it is for %s", o->longname, mode_name(A->mode), o->what);
        if (o->needs && info && !(sched_facts(info) & o->needs)) {
            char names[512];
            schedules_with(o->needs, names, sizeof names);
            return arg_error(msg, len, "%s does not apply to %s: it is for %s; schedules it applies to: %s", o->longname,
                             info->name, o->what, names);
        }
        if (o->formats && !(o->formats & (1u << A->format)))
            return arg_error(msg, len, "%s does not apply to --format %s: it is for %s", o->longname,
                             A->format == FMT_JSON ? "json" : A->format == FMT_CSV ? "csv" : A->format == FMT_SVG ? "svg"
                             : A->format == FMT_TRACE ? "trace" : A->format == FMT_PROGRAM ? "program" : "ascii", o->what);
    }
    if (A->mode & MODES_SCHED) {
        if ((A->mode & (MODE_BUILD | MODE_SWEEP)) && !A->cfg.schedule) return arg_error(msg, len, "missing -s NAME (see --list)");
        if (!A->given[OPT_DEVICES]) return arg_error(msg, len, "%s: missing -d D (number of devices)", mode_name(A->mode));
        if (!A->given[OPT_MICROBATCHES]) return arg_error(msg, len, "%s: missing -n N (number of microbatches)", mode_name(A->mode));
    }
    if (A->mode == MODE_GALLERY && !A->outdir) return arg_error(msg, len, "gallery: missing -o DIR");
    if (A->mode == MODE_BEST && !A->given[OPT_MEM_LIMIT])
        return arg_error(msg, len, "best needs --mem-limit X (units; 1F1B's device 0 holds d)");
    if (A->mode == MODE_SWEEP) {
        if (!A->given[OPT_MEM_FROM] || !A->given[OPT_MEM_TO])
            return arg_error(msg, len, "sweep needs --mem-from A and --mem-to B (units; 1F1B's device 0 holds d)");
        if (A->mem_to < A->mem_from)
            return arg_error(msg, len, "sweep needs --mem-from <= --mem-to, got %g and %g", A->mem_from, A->mem_to);
        if ((A->mem_to - A->mem_from) / A->mem_step >= 10000)
            return arg_error(msg, len, "sweep: %g limits is too many (at most 10000): raise --mem-step",
                             floor((A->mem_to - A->mem_from) / A->mem_step) + 1);
    }
    if (A->mode == MODE_ANALYZE && !A->file) return arg_error(msg, len, "analyze: missing FILE.csv (or - for standard input)");
    return 0;
}

/* argv into A: 0 ok, 2 bad command line with a sentence in msg. Prints
   nothing, exits never. */
static int parse_args(int argc, char **argv, args *A, char *msg, size_t len) {
    int i, first = 1, k;
    memset(A, 0, sizeof *A);
    A->mode = MODE_BUILD;
    A->color = -1;
    A->mem_step = 0.5;
    msg[0] = '\0';
    if (argc > 1) {
        static const struct { const char *name; unsigned mode; } subs[] = {
            {"sweep", MODE_SWEEP}, {"best", MODE_BEST}, {"analyze", MODE_ANALYZE}, {"gallery", MODE_GALLERY}};
        for (k = 0; k < 4; k++)
            if (strcmp(argv[1], subs[k].name) == 0) { A->mode = subs[k].mode; first = 2; }
    }
    for (i = first; i < argc; i++) {
        const char *arg = argv[i], *value = NULL, *eq = NULL;
        char flag[64];
        /* --name=value is the same as --name value */
        if (strncmp(arg, "--", 2) == 0) eq = strchr(arg, '=');
        if (eq) {
            size_t n = (size_t)(eq - arg);
            if (n >= sizeof flag) return arg_error(msg, len, "unknown option '%.64s'", arg);
            memcpy(flag, arg, n);
            flag[n] = '\0';
            arg = flag;
            value = eq + 1;
        }
        for (k = 0; k < OPT_COUNT; k++)
            if ((opts[k].shortname && strcmp(arg, opts[k].shortname) == 0) || strcmp(arg, opts[k].longname) == 0) break;
        if (k == OPT_COUNT) {
            if (argv[i][0] == '-' && argv[i][1] != '\0') return arg_error(msg, len, "unknown option '%.64s'", argv[i]);
            if (A->mode == MODE_ANALYZE && !A->file) { A->file = argv[i]; continue; }
            return arg_error(msg, len, "unexpected argument '%.64s'", argv[i]);
        }
        if (opts[k].takes_value && !value) {
            if (i + 1 >= argc) return arg_error(msg, len, "%s needs a value", arg);
            value = argv[++i];
        } else if (!opts[k].takes_value && value) {
            return arg_error(msg, len, "%s takes no value, got '%.64s'", arg, value);
        }
        if (A->given[k]) return arg_error(msg, len, "%s is given twice", opts[k].longname);
        A->given[k] = i;
        if (set_option(A, k, arg, value, msg, len)) return 2;
    }
    return check_args(A, msg, len);
}

/* One schedule's facts from its pp_sched_info, in --list's columns:
   placement, chunks per device (v), its passes (F,B,W: B and W split), and
   what else sets its memory or its order. */
enum { FACT_COLUMNS = 4 };
static void schedule_facts(const pp_sched_info *in, char col[FACT_COLUMNS][48]) {
    size_t at = 0, len = sizeof col[3];
    snprintf(col[0], sizeof col[0], "%s", pp_placement_name(in->placement));
    snprintf(col[1], sizeof col[1], "v%s%d", in->any_chunks ? ">=" : "=", in->chunks);
    snprintf(col[2], sizeof col[2], "%s", in->split_backward ? "F,B,W" : "F,BW");
    col[3][0] = 0;
#define FACT(...) (at += (size_t)snprintf(col[3] + at, at < len ? len - at : 0, __VA_ARGS__))
    if (in->recompute) FACT("%srecompute", at ? ", " : "");
    if (in->copies > 1) FACT("%s%d copies", at ? ", " : "", in->copies);
    if (in->adaptive && in->takes_limit) FACT("%sadaptive", at ? ", " : "");
    else if (in->adaptive && in->fixed_limit == 1) FACT("%sadaptive at limit d", at ? ", " : "");
    else if (in->adaptive) FACT("%sadaptive at limit %gd", at ? ", " : "", in->fixed_limit);
    if (in->published) FACT("%sas published", at ? ", " : "");
#undef FACT
}

/* one line per schedule: name, facts, description (the name stays the
   first word: scripts read it with awk '{ print $1 }') */
static void list_schedules(void) {
    int i, k, name_w = 0, w[FACT_COLUMNS] = {0};
    char col[FACT_COLUMNS][48];
    for (i = 0; i < pp_sched_count(); i++) {
        const pp_sched_info *info = pp_sched_info_at(i);
        schedule_facts(info, col);
        if ((int)strlen(info->name) > name_w) name_w = (int)strlen(info->name);
        for (k = 0; k < FACT_COLUMNS; k++)
            if ((int)strlen(col[k]) > w[k]) w[k] = (int)strlen(col[k]);
    }
    for (i = 0; i < pp_sched_count(); i++) {
        const pp_sched_info *info = pp_sched_info_at(i);
        schedule_facts(info, col);
        printf("%-*s", name_w, info->name);
        for (k = 0; k < FACT_COLUMNS; k++) printf("  %-*s", w[k], col[k]);
        printf("  %s\n", info->description);
    }
}

static double max_peak(const pp_schedule *s) {
    double m = 0;
    int i;
    for (i = 0; i < s->devices; i++)
        if (s->peak_memory[i] > m) m = s->peak_memory[i];
    return m;
}

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

/* The exit status for a library status: 0 ok, 2 the arguments must change,
   1 a failed run (pp_status_bad_input decides). */
static int exit_code(pp_status st) { return st == PP_OK ? 0 : pp_status_bad_input(st) ? 2 : 1; }

/* ppsched sweep: one line per memory limit. An adaptive schedule is built
   under each limit (the trade-off between activation memory and makespan);
   any other schedule is built once, and a limit its peak is above is
   marked. */
static int run_sweep(pp_config cfg, double from, double to, double step, int json) {
    const pp_sched_info *info = pp_sched_find(cfg.schedule);
    int adaptive = info && info->takes_limit;
    int first = 1, k, count = (int)((to - from) / step + 1e-9) + 1;
    pp_schedule *fixed = NULL;
    char err[PP_ERR_LEN];
    if (!adaptive) { /* one build; its peak against every limit */
        pp_status st = pp_sched_build(&cfg, &fixed, err);
        if (st != PP_OK) { fprintf(stderr, "ppsched: %s\n", err); return exit_code(st); }
    }
    if (json) printf("{\"schedule\": \"%s\", \"devices\": %d, \"microbatches\": %d, \"adaptive\": %s, \"sweep\": [\n",
                     info ? info->name : cfg.schedule, cfg.devices, cfg.microbatches, adaptive ? "true" : "false");
    else {
        if (!adaptive)
            printf("%s does not adapt to a memory limit: one schedule, its peak against each limit\n", fixed->name);
        printf("%-10s %12s %10s %10s\n", "mem_limit", "makespan", "bubble", "peak");
    }
    for (k = 0; k < count; k++) {
        pp_schedule *s = fixed;
        double lim = from + k * step;
        if (adaptive) {
            pp_status st;
            cfg.mem_limit = lim;
            st = pp_sched_build(&cfg, &s, err);
            if (st != PP_OK && (st != PP_ERR_INVALID_ARG || !strstr(err, "no "))) {
                if (json) printf("\n]}\n");
                fprintf(stderr, "ppsched: %s\n", err);
                return exit_code(st);
            }
        }
        if (!s) {
            if (json) printf("%s  {\"mem_limit\": %g, \"fits\": false}", first ? "" : ",\n", lim);
            else printf("%-10g %12s %10s %10s\n", lim, "-", "-", "does not fit");
        } else {
            int fits = max_peak(s) <= lim + 1e-9;
            if (json) printf("%s  {\"mem_limit\": %g, \"fits\": %s, \"makespan\": %.12g, \"bubble_rate\": %.12g, \"peak_memory\": %.12g}",
                             first ? "" : ",\n", lim, fits ? "true" : "false", s->makespan, s->bubble_rate, max_peak(s));
            else printf("%-10g %12g %9.2f%% %10g%s\n", lim, s->makespan, 100 * s->bubble_rate, max_peak(s),
                        fits ? "" : "  above the limit");
            if (adaptive) pp_sched_free(s);
        }
        first = 0;
    }
    if (json) printf("\n]}\n");
    pp_sched_free(fixed);
    return 0;
}

/* ppsched best: every built-in schedule on these devices and times, ranked
   by makespan; those above the memory limit follow, marked, and then those
   not built, with the reason. */
static int run_best(pp_config cfg, int json) {
    typedef struct row { const char *name; double mk, bubble, peak; int fits, built; pp_status st; char why[PP_ERR_LEN]; } row;
    row *rows;
    int i, j, nr = pp_sched_count(), built = 0, bad_input = 0;
    double limit = cfg.mem_limit;
    rows = (row *)calloc((size_t)nr, sizeof *rows);
    if (!rows) { fprintf(stderr, "ppsched: out of memory\n"); return 1; }
    for (i = 0; i < nr; i++) {
        pp_config c = cfg;
        pp_schedule *s = NULL;
        row *r = &rows[i];
        c.schedule = r->name = pp_sched_info_at(i)->name;
        r->st = pp_sched_build(&c, &s, r->why);
        if (r->st != PP_OK) { bad_input += pp_status_bad_input(r->st); continue; }
        r->built = 1;
        r->mk = s->makespan;
        r->bubble = s->bubble_rate;
        r->peak = max_peak(s);
        r->fits = r->peak <= limit + 1e-9;
        built++;
        pp_sched_free(s);
    }
    for (i = 1; i < nr; i++) /* insertion sort: fitting, then above the limit, by makespan; then not built */
        for (j = i; j > 0; j--) {
            row *a = &rows[j - 1], *b = &rows[j], t;
            int ka = a->built + a->fits, kb = b->built + b->fits;
            if (ka > kb || (ka == kb && (!a->built || a->mk <= b->mk))) break;
            t = *a; *a = *b; *b = t;
        }
    if (json) {
        printf("{\"mem_limit\": %g, \"devices\": %d, \"microbatches\": %d, \"ranking\": [\n", limit, cfg.devices, cfg.microbatches);
        for (i = 0; i < nr; i++) {
            if (rows[i].built)
                printf("  {\"schedule\": \"%s\", \"built\": true, \"fits\": %s, \"makespan\": %.12g, \"bubble_rate\": %.12g, \"peak_memory\": %.12g}",
                       rows[i].name, rows[i].fits ? "true" : "false", rows[i].mk, rows[i].bubble, rows[i].peak);
            else {
                printf("  {\"schedule\": \"%s\", \"built\": false, \"fits\": false, \"reason\": ", rows[i].name);
                json_string(rows[i].why);
                printf("}");
            }
            printf("%s\n", i + 1 < nr ? "," : "");
        }
        printf("]}\n");
    } else {
        printf("memory limit %g units, d=%d, n=%d\n", limit, cfg.devices, cfg.microbatches);
        printf("%-4s %-20s %10s %9s %8s\n", "rank", "schedule", "makespan", "bubble", "peak");
        for (i = 0; i < nr; i++) {
            if (!rows[i].built) {
                printf("%-4s %-20s not built: %s\n", "-", rows[i].name, rows[i].why);
                continue;
            }
            if (rows[i].fits) printf("%-4d ", i + 1);
            else printf("%-4s ", "-");
            printf("%-20s %10g %8.2f%% %8g%s\n", rows[i].name, rows[i].mk, 100 * rows[i].bubble, rows[i].peak,
                   rows[i].fits ? "" : "  does not fit");
        }
    }
    free(rows);
    if (built) return 0;
    fprintf(stderr, "ppsched: best: no schedule could be built for d=%d, n=%d (each one's reason is above)\n",
            cfg.devices, cfg.microbatches);
    return bad_input == nr ? 2 : 1;
}

/* Prints s in the chosen format; 0 ok, 1 the library refused. */
static int print_schedule(const pp_schedule *s, int format, int color, int svg_flags) {
    char err[PP_ERR_LEN];
    pp_status st = PP_OK;
    switch (format) {
    case FMT_JSON: pp_sched_print_json(stdout, s); break;
    case FMT_SVG: st = pp_sched_print_svg(stdout, s, svg_flags, err); break;
    case FMT_TRACE: st = pp_sched_print_trace(stdout, s, err); break;
    case FMT_PROGRAM: {
        pp_program *prog = NULL;
        st = pp_sched_lower(s, &prog, err);
        if (st == PP_OK) st = pp_sched_check_deadlock(prog, NULL, err);
        if (prog) pp_program_print(stdout, prog);
        pp_program_free(prog);
        break;
    }
    case FMT_CSV: {
        const char *tt = pp_sched_torchtitan_schedule(s);
        st = pp_sched_print_csv(stdout, s, err);
        if (st == PP_OK && tt)
            fprintf(stderr, "ppsched: torchtitan: set pipeline_parallel_schedule_csv to this file and "
                            "pipeline_parallel_schedule = \"%s\" for its %s placement (%d stage%s per rank%s)\n",
                    tt, pp_placement_name(s->placement), s->chunks, s->chunks == 1 ? "" : "s",
                    s->chunks > 2 ? "; set pipeline_parallel_layers_per_stage so there are that many" : "");
        else if (st == PP_OK)
            fprintf(stderr, "ppsched: torchtitan: no pipeline_parallel_schedule gives this stage placement\n");
        break;
    }
    default:
        if (color < 0) {
            const char *no_color = getenv("NO_COLOR"); /* https://no-color.org */
            color = isatty(STDOUT_FILENO) && !(no_color && no_color[0]);
        }
        pp_sched_print_ascii(stdout, s, color);
    }
    if (st != PP_OK) {
        fprintf(stderr, "ppsched: %s\n", err);
        return exit_code(st); /* 2: the CSV of a two-copy schedule (this format cannot express it) */
    }
    return 0;
}

/* Reads a whole file into memory (caller frees); NULL with a message on failure. */
static char *read_file(const char *path, size_t *len) {
    int std_in = strcmp(path, "-") == 0; /* - is standard input */
    FILE *f = std_in ? stdin : fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f) {
        fprintf(stderr, "ppsched: cannot open '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        size_t got;
        if (n == cap) {
            char *nb;
            if (cap >= ((size_t)1 << 30)) {
                fprintf(stderr, "ppsched: '%s' is larger than 1 GiB\n", path);
                free(buf);
                if (!std_in) fclose(f);
                return NULL;
            }
            cap = cap ? cap * 2 : 65536;
            nb = (char *)realloc(buf, cap);
            if (!nb) {
                fprintf(stderr, "ppsched: out of memory reading '%s'\n", path);
                free(buf);
                if (!std_in) fclose(f);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        fprintf(stderr, "ppsched: error reading '%s'\n", path);
        free(buf);
        if (!std_in) fclose(f);
        return NULL;
    }
    if (!std_in) fclose(f);
    *len = n;
    return buf;
}

static void html_str(FILE *f, const char *x) {
    for (; *x; x++) {
        if (*x == '<') fputs("&lt;", f);
        else if (*x == '>') fputs("&gt;", f);
        else if (*x == '&') fputs("&amp;", f);
        else fputc(*x, f);
    }
}

/* One SVG per built-in schedule and an index.html showing them side by side. */
static int gallery(const pp_config *base, const char *dir) {
    char path[4096], err[PP_ERR_LEN];
    FILE *html;
    int i, failed = 0, written = 0, bad_input = 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "ppsched: cannot create directory '%s': %s\n", dir, strerror(errno));
        return 1;
    }
    if (snprintf(path, sizeof path, "%s/index.html", dir) >= (int)sizeof path) {
        fprintf(stderr, "ppsched: directory name too long\n");
        return 2;
    }
    html = fopen(path, "w");
    if (!html) {
        fprintf(stderr, "ppsched: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(html, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pp_sched gallery d=%d n=%d</title>\n"
                  "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
                  "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child{text-align:left}"
                  ".g{display:grid;grid-template-columns:repeat(auto-fill,minmax(640px,1fr));gap:1em}"
                  "figure{margin:0;border:1px solid #ddd;padding:4px}img{width:100%%}</style></head><body>\n"
                  "<h1>pp_sched gallery: d=%d devices, n=%d microbatches, times F=%g B=%g W=%g comm=%g</h1>\n"
                  "<table><tr><th>schedule</th><th>makespan</th><th>bubble rate</th><th>peak memory (max device)</th>"
                  "<th>what it is</th></tr>\n",
            base->devices, base->microbatches, base->devices, base->microbatches,
            base->times.f == 0 && base->times.b == 0 && base->times.w == 0 ? 1 : base->times.f,
            base->times.f == 0 && base->times.b == 0 && base->times.w == 0 ? 1 : base->times.b,
            base->times.f == 0 && base->times.b == 0 && base->times.w == 0 ? 1 : base->times.w, base->times.comm);
    for (i = 0; i < pp_sched_count(); i++) {
        const pp_sched_info *info = pp_sched_info_at(i);
        pp_config cfg = *base;
        pp_schedule *s = NULL;
        pp_status st;
        cfg.schedule = info->name;
        st = pp_sched_build(&cfg, &s, err);
        if (st != PP_OK) {
            bad_input += pp_status_bad_input(st);
            fprintf(html, "<tr><td>%s</td><td colspan=\"3\">not built: ", info->name);
            html_str(html, err);
            fprintf(html, "</td><td>");
            html_str(html, info->description);
            fprintf(html, "</td></tr>\n");
            fprintf(stderr, "ppsched: gallery: %s: %s\n", info->name, err);
            continue;
        }
        {
            double peak = 0;
            int dev;
            FILE *svg;
            for (dev = 0; dev < s->devices; dev++) if (s->peak_memory[dev] > peak) peak = s->peak_memory[dev];
            fprintf(html, "<tr><td><a href=\"#%s\">%s</a></td><td>%g</td><td>%.2f%%</td><td>%g</td><td>", info->name,
                    info->name, s->makespan, 100 * s->bubble_rate, peak);
            html_str(html, info->description);
            fprintf(html, "</td></tr>\n");
            snprintf(path, sizeof path, "%s/%s.svg", dir, info->name);
            svg = fopen(path, "w");
            if (!svg) {
                fprintf(stderr, "ppsched: cannot write '%s': %s\n", path, strerror(errno));
                failed = 1;
            } else if ((pp_sched_print_svg(svg, s, PP_SVG_MEMORY, err) != PP_OK) + (fclose(svg) != 0)) {
                fprintf(stderr, "ppsched: cannot write '%s'\n", path);
                remove(path); /* not half a picture in the index */
                failed = 1;
            } else {
                written++;
            }
        }
        pp_sched_free(s);
    }
    fprintf(html, "</table>\n<div class=\"g\">\n");
    for (i = 0; i < pp_sched_count(); i++) {
        const pp_sched_info *info = pp_sched_info_at(i);
        snprintf(path, sizeof path, "%s/%s.svg", dir, info->name);
        if (access(path, F_OK) != 0) continue;
        fprintf(html, "<figure id=\"%s\"><img src=\"%s.svg\" alt=\"%s\"><figcaption>%s: ", info->name, info->name,
                info->name, info->name);
        html_str(html, info->description);
        fprintf(html, "</figcaption></figure>\n");
    }
    fprintf(html, "</div>\n</body></html>\n");
    if (fclose(html) != 0) failed = 1;
    if (written == 0) {
        fprintf(stderr, "ppsched: gallery: wrote no SVG to %s (the reasons are above)\n", dir);
        return failed || bad_input < pp_sched_count() ? 1 : 2;
    }
    printf("ppsched: wrote %d SVG%s and index.html to %s", written, written == 1 ? "" : "s", dir);
    if (written < pp_sched_count()) printf(" (%d of %d schedules not built, see above)", pp_sched_count() - written, pp_sched_count());
    printf("\n");
    return failed;
}

/* ---- ppsched plan: which layout, microbatch size and schedule fit and run fastest ---- */

/* Every plan option in one table: name, what it sets (an int or double
   field of pp_plan_request at off, scaled by mul), and its help line.
   INT: whole number; FLAG: sets 1; REAL: number >= 0 times mul. */
enum { PO_INT, PO_FLAG, PO_REAL, PO_SPECIAL };
typedef struct plan_opt { const char *name; int kind; size_t off; double mul; const char *help; } plan_opt;
#define PO(field) offsetof(pp_plan_request, field)
static const plan_opt plan_opts[] = {
    {"--model", PO_SPECIAL, 0, 0, "NAME     a published model (below); other model options override it"},
    {"--layers", PO_INT, PO(model.layers), 0, "L        transformer layers"},
    {"--hidden", PO_INT, PO(model.hidden), 0, "H        hidden size"},
    {"--heads", PO_INT, PO(model.heads), 0, "A        attention heads"},
    {"--kv-heads", PO_INT, PO(model.kv_heads), 0, "K        key/value heads (GQA; 1 = MQA; default = heads)"},
    {"--head-dim", PO_INT, PO(model.head_dim), 0, "D        width of a head (default hidden / heads)"},
    {"--ffn", PO_INT, PO(model.ffn), 0, "F        MLP hidden size (default 4 x hidden)"},
    {"--gated", PO_FLAG, PO(model.gated), 0, "         gated MLP (SwiGLU: three matrices)"},
    {"--seq", PO_INT, PO(model.seq), 0, "S        sequence length"},
    {"--vocab", PO_INT, PO(model.vocab), 0, "V        vocabulary (default 51200)"},
    {"--untied", PO_FLAG, PO(model.untied), 0, "         LM head separate from the embedding"},
    {"--rope", PO_FLAG, PO(model.rope), 0, "         rotary positions (no position embedding)"},
    {"--rmsnorm", PO_FLAG, PO(model.rmsnorm), 0, "         RMSNorm and no biases (Llama-style)"},
    {"--experts", PO_INT, PO(model.experts), 0, "E        MoE: routed experts per MoE layer"},
    {"--top-k", PO_INT, PO(model.top_k), 0, "K        MoE: experts per token (default 2)"},
    {"--shared-experts", PO_INT, PO(model.shared_experts), 0, "N        MoE: experts every token runs"},
    {"--expert-ffn", PO_INT, PO(model.expert_ffn), 0, "F        MoE: hidden size of one expert (default --ffn)"},
    {"--dense-layers", PO_INT, PO(model.dense_layers), 0, "N        MoE: dense layers before the first MoE layer"},
    {"--kv-lora-rank", PO_INT, PO(model.kv_lora_rank), 0, "R        MLA: latent width of keys/values (0 = off)"},
    {"--q-lora-rank", PO_INT, PO(model.q_lora_rank), 0, "R        MLA: latent width of queries"},
    {"--rope-head-dim", PO_INT, PO(model.rope_head_dim), 0, "D        MLA: rotary part of a head (default 64)"},
    {"--no-flash", PO_FLAG, PO(model.no_flash_attention), 0, "         keep the s x s attention scores"},
    {"--no-seq-parallel", PO_FLAG, PO(model.no_seq_parallel), 0, "         tensor parallelism without sequence parallelism"},
    {"--no-dist-opt", PO_FLAG, PO(model.no_distributed_optimizer), 0, "         optimizer state not sharded over dp"},
    {"--recompute-norm-up", PO_FLAG, PO(model.recompute_norm_up), 0, "         recompute norms and MLA up-projections (DeepSeek-V3)"},
    {"--fp8-moe-act", PO_FLAG, PO(model.fp8_moe_act), 0, "         keep experts' activations in FP8 (DeepSeek-V3)"},
    {"--gpu", PO_SPECIAL, 0, 0, "NAME     a GPU preset (below); other GPU options override it"},
    {"--gpu-mem", PO_REAL, PO(gpu.mem_bytes), 1073741824.0, "G        GiB per GPU (default the preset's, else 80)"},
    {"--reserve", PO_REAL, PO(gpu.reserve_bytes), 1073741824.0, "R        GiB kept back per GPU (CUDA context, NCCL, fragmentation)"},
    {"--tflops", PO_REAL, PO(gpu.flops), 1e12, "X        achieved matmul TFLOP/s per GPU (default efficiency x peak)"},
    {"--peak-tflops", PO_REAL, PO(gpu.peak_flops), 1e12, "X        dense 16-bit peak TFLOP/s, for the MFU (default 312)"},
    {"--efficiency", PO_REAL, PO(gpu.efficiency), 1, "X        achieved fraction of peak (default 190/312 = 0.61)"},
    {"--node-gpus", PO_INT, PO(gpu.node_gpus), 0, "N        GPUs on one NVLink domain (default 8)"},
    {"--gpus", PO_INT, PO(gpus), 0, "N        GPUs in all"},
    {"--global-batch", PO_INT, PO(global_batch), 0, "GB       sequences per step"},
    {"--pp", PO_INT, PO(pp), 0, "P        pipeline stages' devices (default: try every divisor)"},
    {"--tp", PO_INT, PO(tp), 0, "T        tensor parallel (default 1, 2, 4, 8 dividing heads)"},
    {"--cp", PO_INT, PO(cp), 0, "C        context parallel (default 1, 2, 4.. while seq / C >= 4096)"},
    {"--ep", PO_INT, PO(ep), 0, "E        expert parallel (default powers of 2 dividing experts, dp x cp)"},
    {"--dp", PO_INT, PO(dp), 0, "D        data parallel (default gpus / (pp tp cp))"},
    {"--mbs", PO_INT, PO(mbs), 0, "M        microbatch size (default 1, 2, 4)"},
    {"--v", PO_INT, PO(v), 0, "V        stages per device of looped schedules (default 2, 3, 4, 6, 8)"},
    {"--schedule", PO_SPECIAL, 0, 0, "NAME     one schedule only (-s; default every built-in)"},
    {"--times", PO_SPECIAL, 0, 0, "F,B,W[,COMM] measured seconds of one microbatch through one device's share"},
    {"--top", PO_SPECIAL, 0, 0, "K        rows in the table; pruning keeps the top K exact (default 10)"},
    {"--no-prune", PO_FLAG, PO(no_prune), 0, "         build every candidate"},
    {"--format", PO_SPECIAL, 0, 0, "FMT      table (default) or json (every candidate)"},
};
#undef PO
#define PLAN_NOPTS ((int)(sizeof plan_opts / sizeof plan_opts[0]))

static void plan_usage(FILE *f) {
    int i;
    fprintf(f, "usage: ppsched plan (--model NAME | --layers L --hidden H --heads A --seq S) --global-batch GB --gpus N\n"
               "                    [--gpu NAME] [options]\n\n");
    for (i = 0; i < PLAN_NOPTS; i++) fprintf(f, "  %-17s %s\n", plan_opts[i].name, plan_opts[i].help);
    fprintf(f, "\nmodels:");
    for (i = 0; pp_model_preset_name(i); i++) fprintf(f, " %s", pp_model_preset_name(i));
    fprintf(f, "\ngpus:  ");
    for (i = 0; pp_gpu_preset_name(i); i++) fprintf(f, " %s", pp_gpu_preset_name(i));
    fprintf(f, "\n\nPrints the top K candidates, then why each schedule's best lost; --format json prints\n"
               "every candidate considered, fitting or not. A candidate whose work bound is already\n"
               "slower than its schedule's best layout so far and than the K-th best so far is not\n"
               "built (\"pruned\": true); the top K and each schedule's best are exact.\n"
               "exit status: 0 ok, 1 failed run (out of memory), 2 arguments to change\n");
}

static int plan_error(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "ppsched plan: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (ppsched plan --help lists the options)\n");
    return 2;
}

static int plan_main(int argc, char **argv) {
    pp_plan_request r;
    pp_candidate *c;
    pp_times times;
    pp_model_counts mc;
    pp_gpu g;
    char err[PP_ERR_LEN];
    int i, k, count = 0, json = 0, top = 10, have_model = 0;
    pp_status st;
    memset(&r, 0, sizeof r);
    /* presets first, so that every other option overrides them */
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { plan_usage(stdout); return 0; }
        if ((strcmp(a, "--model") == 0 || strcmp(a, "--gpu") == 0) && v) {
            st = a[2] == 'm' ? pp_model_preset(v, &r.model, err) : pp_gpu_preset(v, &r.gpu, err);
            if (st != PP_OK) return plan_error("%s %s: %s", a, v, err);
            have_model |= a[2] == 'm';
        }
    }
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const plan_opt *o = NULL;
        if (strcmp(a, "-s") == 0) a = "--schedule";
        for (k = 0; k < PLAN_NOPTS; k++)
            if (strcmp(a, plan_opts[k].name) == 0) o = &plan_opts[k];
        if (!o) return plan_error("unknown option '%s'", argv[i]);
        if (o->kind == PO_FLAG) { *(int *)((char *)&r + o->off) = 1; continue; }
        if (!v) return plan_error("%s needs a value", a);
        i++;
        if (o->kind == PO_INT) {
            if (!parse_count(v, (int *)((char *)&r + o->off))) return plan_error("%s needs a whole number, got '%s'", a, v);
        } else if (o->kind == PO_REAL) {
            double x;
            if (!parse_real(v, &x)) return plan_error("%s needs a finite number >= 0, got '%s'", a, v);
            *(double *)((char *)&r + o->off) = x * o->mul;
        } else if (strcmp(a, "--schedule") == 0) {
            r.schedule = v;
        } else if (strcmp(a, "--times") == 0) {
            if (!parse_times(v, &times)) return plan_error("--times needs F,B,W[,COMM], got '%s'", v);
            r.times = &times;
        } else if (strcmp(a, "--top") == 0) {
            if (!parse_count(v, &top) || top < 1) return plan_error("--top needs a whole number >= 1, got '%s'", v);
        } else if (strcmp(a, "--format") == 0) {
            if (strcmp(v, "json") == 0) json = 1;
            else if (strcmp(v, "table") != 0 && strcmp(v, "ascii") != 0)
                return plan_error("--format is table or json, got '%s'", v);
        } /* --model, --gpu: done above */
    }
    if (!have_model && (r.model.layers < 1 || r.model.hidden < 1 || r.model.heads < 1 || r.model.seq < 1))
        return plan_error("give --model NAME, or --layers, --hidden, --heads and --seq");
    if (r.global_batch < 1 || r.gpus < 1) return plan_error("--global-batch and --gpus are required (>= 1)");
    r.keep_top = top; /* pruning keeps the printed top exact */
    /* cap 0: the count of candidates (and every check of the request) */
    st = pp_plan(&r, NULL, 0, &count, err);
    if (st != PP_OK)
        return st == PP_ERR_OUT_OF_MEMORY ? (fprintf(stderr, "ppsched plan: %s\n", err), 1) : plan_error("%s", err);
    c = (pp_candidate *)malloc(sizeof *c * (size_t)(count > 0 ? count : 1));
    if (!c) { fprintf(stderr, "ppsched plan: out of memory for %d candidates\n", count); return 1; }
    st = pp_plan(&r, c, count, &count, err);
    if (st != PP_OK) {
        free(c);
        return st == PP_ERR_OUT_OF_MEMORY ? (fprintf(stderr, "ppsched plan: %s\n", err), 1) : plan_error("%s", err);
    }
    pp_model_stats(&r.model, &mc, NULL);
    g = pp_gpu_defaults(&r.gpu);
    if (json) {
        printf("{\"model\": {\"params\": %.0f, \"active_params\": %.0f, \"flops_per_token\": %.6g},\n", mc.params,
               mc.active_params, mc.flops_per_token);
        printf(" \"gpu\": {\"name\": ");
        json_string(g.name);
        printf(", \"mem_bytes\": %.0f, \"reserve_bytes\": %.0f, \"peak_flops\": %.6g, \"flops\": %.6g, \"hbm_bw\": %.6g, "
               "\"tp_bw\": %.6g, \"net_bw\": %.6g, \"node_gpus\": %d},\n \"candidates\": [",
               g.mem_bytes, g.reserve_bytes, g.peak_flops, g.flops, g.hbm_bw, g.tp_bw, g.net_bw, g.node_gpus);
        for (i = 0; i < count; i++) {
            printf("%s\n  {\"schedule\": ", i ? "," : "");
            json_string(c[i].schedule);
            printf(", \"pp\": %d, \"tp\": %d, \"cp\": %d, \"ep\": %d, \"dp\": %d, \"v\": %d, \"mbs\": %d, \"microbatches\": %d, "
                   "\"fits\": %s, \"peak_bytes\": %.0f, \"step_time\": %.6g, \"mfu\": %.4f, \"bound\": %.6g, \"pruned\": %s, "
                   "\"reason\": ", c[i].pp, c[i].tp, c[i].cp, c[i].ep, c[i].dp, c[i].v, c[i].mbs, c[i].microbatches,
                   c[i].fits ? "true" : "false", c[i].peak_bytes, c[i].step_time, c[i].mfu, c[i].bound,
                   c[i].pruned ? "true" : "false");
            json_string(c[i].reason);
            printf("}");
        }
        printf("\n]}\n");
    } else {
        int shown = 0;
        printf("model: %.2fB parameters (%.2fB active), %.3g training FLOPs per token; gpu%s%s: %.0f GiB, "
               "%.0f TFLOP/s peak, %.0f achieved\n\n", mc.params / 1e9, mc.active_params / 1e9, mc.flops_per_token,
               g.name[0] ? " " : "", g.name, g.mem_bytes / 1073741824.0, g.peak_flops / 1e12, g.flops / 1e12);
        printf("%-20s %4s %3s %3s %3s %4s %2s %4s %5s %9s %9s %8s %6s  %s\n", "schedule", "pp", "tp", "cp", "ep", "dp",
               "v", "mbs", "n", "peak GiB", "units", "step s", "MFU", "reason");
        for (i = 0; i < count && shown < top; i++) {
            if (c[i].step_time <= 0) continue;
            printf("%-20s %4d %3d %3d %3d %4d %2d %4d %5d %9.1f %9.2f %8.3f %5.1f%%  %s\n", c[i].schedule, c[i].pp,
                   c[i].tp, c[i].cp, c[i].ep, c[i].dp, c[i].v, c[i].mbs, c[i].microbatches,
                   c[i].peak_bytes / 1073741824.0, c[i].peak_units, c[i].step_time, 100 * c[i].mfu, c[i].reason);
            shown++;
        }
        if (!shown) printf("(no candidate fits)\n");
        printf("\nper schedule, its best layout or why none ran:\n");
        for (k = 0; k < pp_sched_count(); k++) {
            const char *name = pp_sched_info_at(k)->name;
            int best = -1, smallest = -1, fitsum = 0, any = 0, skipped = -1, nskipped = 0;
            for (i = 0; i < count; i++) {
                if (strcmp(c[i].schedule, name) != 0) continue;
                any = 1;
                if (c[i].step_time > 0 && best < 0) best = i;
                if (c[i].fits) fitsum++;
                if (strncmp(c[i].reason, "not evaluated", 13) == 0) { if (skipped < 0) skipped = i; nskipped++; }
                /* closest: the smallest overshoot among those whose schedule was built
                   (activations counted), else the smallest static-only overshoot */
                if (!c[i].fits && c[i].peak_bytes > 0 &&
                    (smallest < 0 || (c[i].peak_units > 0) > (c[smallest].peak_units > 0) ||
                     ((c[i].peak_units > 0) == (c[smallest].peak_units > 0) && c[i].peak_bytes < c[smallest].peak_bytes)))
                    smallest = i;
            }
            if (!any) continue;
            if (best >= 0)
                printf("  %-20s pp=%d tp=%d cp=%d ep=%d dp=%d v=%d mbs=%d %.3f s: %s\n", name, c[best].pp, c[best].tp,
                       c[best].cp, c[best].ep, c[best].dp, c[best].v, c[best].mbs, c[best].step_time, c[best].reason);
            else if (skipped >= 0)
                printf("  %-20s no evaluated layout fits; %d layouts %s\n", name, nskipped, c[skipped].reason);
            else if (smallest >= 0)
                printf("  %-20s fits in no layout; closest pp=%d tp=%d cp=%d ep=%d dp=%d mbs=%d: %s\n", name,
                       c[smallest].pp, c[smallest].tp, c[smallest].cp, c[smallest].ep, c[smallest].dp, c[smallest].mbs,
                       c[smallest].reason);
            else {
                for (i = 0; i < count; i++) if (strcmp(c[i].schedule, name) == 0) break;
                printf("  %-20s not run: %s\n", name, c[i].reason);
            }
        }
    }
    free(c);
    return 0;
}

#ifndef PPSCHED_NO_MAIN
/* Long work: progress on stderr when it is a terminal (never into the
   output), and Ctrl-C stops the build cleanly. The SIGINT handler only sets
   a flag; the library asks the callback whether to go on (it keeps no
   globals of its own). */
static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}
typedef struct progress_line {
    int tty;      /* stderr is a terminal */
    time_t start; /* the line shows after a second of work, at most once a second */
    time_t shown;
} progress_line;
static int show_progress(void *user, const char *what, double done) {
    progress_line *p = (progress_line *)user;
    time_t now;
    if (interrupted) return 1;
    if (!p->tty) return 0;
    now = time(NULL);
    if (now - p->start >= 1 && now != p->shown) {
        fprintf(stderr, "\rppsched: %s %3.0f%% (Ctrl-C stops) \r", what, 100 * done);
        p->shown = now;
    }
    return 0;
}
static void progress_clear(progress_line *p) {
    if (p->shown) fprintf(stderr, "\r%-72s\r", "");
    p->shown = 0;
}

int main(int argc, char **argv) {
    args A;
    progress_line progress;
    pp_schedule *s = NULL;
    pp_status st;
    char err[PP_ERR_LEN], msg[1024];

    /* plan (pp_plan.h) has its own table of options (plan_opts) */
    if (argc > 1 && strcmp(argv[1], "plan") == 0) return plan_main(argc, argv);
    if (parse_args(argc, argv, &A, msg, sizeof msg) != 0) {
        if (argc == 1) /* no arguments at all: show what there is */
            fprintf(stderr, "ppsched: %s\n\n%s", msg, usage_text);
        else
            fprintf(stderr, "ppsched: %s\n(ppsched --help lists every option)\n", msg);
        return 2;
    }
    if (A.help) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (A.list) {
        list_schedules();
        return 0;
    }
    memset(&progress, 0, sizeof progress);
    progress.tty = isatty(STDERR_FILENO);
    progress.start = time(NULL);
    A.cfg.progress = show_progress;
    A.cfg.progress_user = &progress;
    signal(SIGINT, on_sigint);
    switch (A.mode) {
    case MODE_GALLERY: return gallery(&A.cfg, A.outdir);
    case MODE_BEST: return run_best(A.cfg, A.format == FMT_JSON);
    case MODE_SWEEP: return run_sweep(A.cfg, A.mem_from, A.mem_to, A.mem_step, A.format == FMT_JSON);
    case MODE_ANALYZE: {
        size_t len = 0;
        char *text = read_file(A.file, &len);
        const char *base, *tt;
        if (!text) return 1;
        st = pp_sched_from_csv(text, len, &A.cfg, &s, err);
        free(text);
        if (st != PP_OK) { /* a file that is not a schedule */
            fprintf(stderr, "ppsched: %s: %s\n", A.file, err);
            return 1;
        }
        /* name it after the file, for the title of a picture */
        base = strrchr(A.file, '/') ? strrchr(A.file, '/') + 1 : strcmp(A.file, "-") == 0 ? "stdin" : A.file;
        tt = pp_sched_torchtitan_schedule(s);
        snprintf(s->name, sizeof s->name, "%s", base);
        fprintf(stderr, "ppsched: %s: %d ranks, %d stages (%s placement%s%s), %d microbatches, %s\n", A.file,
                s->devices, s->stages, pp_placement_name(s->placement), tt ? ", torchtitan " : "", tt ? tt : "",
                s->microbatches, s->split_backward ? "backward split into I and W" : "full backward B");
        break;
    }
    default: {
        const pp_sched_info *info = pp_sched_find(A.cfg.schedule);
        st = pp_sched_build(&A.cfg, &s, err);
        progress_clear(&progress);
        if (st == PP_ERR_CANCELLED && interrupted) {
            fprintf(stderr, "ppsched: interrupted (Ctrl-C) while building %s; nothing written\n", info->name);
            return 130;
        }
        if (st != PP_OK) {
            fprintf(stderr, "ppsched: %s\n", err[0] ? err : pp_status_string(st));
            return exit_code(st);
        }
        if ((A.format == FMT_ASCII || A.format == FMT_JSON) && (A.want_growth || !info->adaptive)) {
            /* O(p) or O(n): two more builds, at 3d and 6d microbatches; for
               the searched schedules two more searches, so only when asked
               (the JSON key is null then) */
            int grows;
            if (pp_sched_bubble_growth(&A.cfg, &grows, NULL) == PP_OK) s->bubble_growth = grows;
        }
    }
    }
    {
        int rc = print_schedule(s, A.format, A.color, A.svg_flags); /* 2: this format cannot express s */
        if (rc != 0) {
            pp_sched_free(s);
            return rc;
        }
    }
    fflush(stdout);

    /* Printed first so a broken schedule can still be looked at. */
    st = pp_sched_validate(s, err);
    pp_sched_free(s);
    if (st != PP_OK) {
        fprintf(stderr, "ppsched: schedule does not validate: %s\n", err);
        return 1;
    }
    return ferror(stdout) ? 1 : 0;
}
#endif
