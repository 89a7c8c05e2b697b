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
            build from them: pp_status_bad_input); 1 a bad input file, a
            failed run, a failed write (one line naming the file or standard
            output and the reason), or sweep or best where nothing fits. An
            argument error prints one line saying what was wrong and what
            would be right, and a pointer to --help. */
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
#define PP_SCHED_IO_IMPLEMENTATION
#include "../pp_sched_io.h"
#define PP_PLAN_IMPLEMENTATION
#include "../pp_plan.h"
#include "pp_cli.h" /* the option rules and the checked output of every example program */

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
    "schedule, a schedule that does not validate, sweep or best where no limit\n"
    "or schedule fits)\n";

/* ---- the command line: one table of options, one parser, one check ------
   Every option is a row of opts[]: its names, whether it takes a value, the
   subcommands it applies to, the facts (pp_sched_info, FACT_*) the chosen
   schedule must have for it to mean something, the output formats it
   applies to, and a phrase that says what it is for. parse_args reads the
   arguments (pp_cli_parse, examples/pp_cli.h: the rules train_cpu and
   train_gpt follow too) into an args struct (no printing, no exit: the fuzz target
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
    pp_cli_opt o;     /* names, takes a value (pp_cli.h reads these) */
    unsigned modes;   /* MODE_* it applies to */
    unsigned needs;   /* build, sweep: the chosen schedule must have one of these FACT_*; 0 = any */
    unsigned formats; /* bit per FMT_* it applies to; 0 = any */
    const char *what; /* what it is for, said when it does not apply */
} option_row;

static const option_row opts[OPT_COUNT] = {
    {{"-h", "--help", 0}, MODES_ALL, 0, 0, "help"},
    {{NULL, "--list", 0}, MODES_ALL, 0, 0, "the list of schedules"},
    {{"-s", "--schedule", 1}, MODE_BUILD | MODE_SWEEP, 0, 0,
     "the schedule to build; best and gallery build every one and analyze reads it from the file"},
    {{"-d", "--devices", 1}, MODES_SCHED, 0, 0, "the device count; analyze reads it from the file"},
    {{"-n", "--microbatches", 1}, MODES_SCHED, 0, 0, "the microbatch count; analyze reads it from the file"},
    {{"-v", "--chunks", 1}, MODES_SCHED, FACT_ANY_CHUNKS, 0, "the chunk count of the interleaved and looped schedules"},
    {{NULL, "--times", 1}, MODES_ALL, 0, 0, "the pass times"},
    {{NULL, "--format", 1}, MODE_BUILD | MODE_SWEEP | MODE_BEST | MODE_ANALYZE, 0, 0,
     "the output format; gallery writes SVG and HTML"},
    {{NULL, "--svg-memory", 0}, MODE_BUILD | MODE_ANALYZE, 0, 1u << FMT_SVG, "a memory curve under an SVG timeline"},
    {{"-o", "--output", 1}, MODE_GALLERY, 0, 0, "gallery's output directory"},
    {{NULL, "--no-reorder", 0}, MODE_BUILD | MODE_SWEEP | MODE_BEST | MODE_GALLERY, FACT_REORDERED, 0,
     "skipping the reordering of the schedules that reorder"},
    {{NULL, "--bubble-growth", 0}, MODE_BUILD, FACT_ADAPTIVE, FMTS_TEXT,
     "measuring O(p)/O(n) of the searched schedules, which the others always get"},
    {{NULL, "--mem-limit", 1}, MODE_BUILD | MODE_BEST | MODE_GALLERY, FACT_TAKES_LIMIT, 0,
     "the memory limit of v-auto and zb-auto and best's ranking limit; sweep takes --mem-from and --mem-to"},
    {{NULL, "--recompute-input", 1}, MODE_BUILD | MODE_SWEEP | MODE_BEST | MODE_GALLERY, FACT_RECOMPUTE, 0,
     "the stage input 1f1b-r keeps"},
    {{NULL, "--mem-from", 1}, MODE_SWEEP, 0, 0, "sweep's first limit"},
    {{NULL, "--mem-to", 1}, MODE_SWEEP, 0, 0, "sweep's last limit"},
    {{NULL, "--mem-step", 1}, MODE_SWEEP, 0, 0, "sweep's step"},
    /* a display preference, like NO_COLOR: accepted with every format */
    {{NULL, "--no-color", 0}, MODE_BUILD | MODE_ANALYZE, 0, 0, "the colours of the ascii timeline"},
};

typedef struct args {
    unsigned mode;
    int given[OPT_COUNT]; /* argv index where each option was given, 0 = not given */
    pp_config cfg;        /* zero fields = the library's defaults */
    int format, color, svg_flags, want_growth, help, list;
    const char *file, *outdir;
    double mem_from, mem_to, mem_step;
} args;

#define arg_error pp_cli_error /* one sentence into msg; returns 2 (bad command line) */

/* Whole number >= 0 that fits an int, nothing before or after it ("-4", " 4" are rejected). */
static int parse_count(const char *text, int *out) { return pp_cli_int(text, 0, INT_MAX, out); }

/* Finite number >= 0, nothing before or after it. */
static int parse_real(const char *text, double *out) { return pp_cli_real(text, out); }

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
static int set_option(void *user, int k, const char *name, const char *value, char *msg, size_t len) {
    args *A = (args *)user;
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
            return arg_error(msg, len, "%s does not apply to %s: it is for %s", o->o.longname, mode_name(A->mode), o->what);
        if (o->needs && info && !(sched_facts(info) & o->needs)) {
            char names[512];
            schedules_with(o->needs, names, sizeof names);
            return arg_error(msg, len, "%s does not apply to %s: it is for %s; schedules it applies to: %s", o->o.longname,
                             info->name, o->what, names);
        }
        if (o->formats && !(o->formats & (1u << A->format)))
            return arg_error(msg, len, "%s does not apply to --format %s: it is for %s", o->o.longname,
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

/* analyze's FILE (or -): the one argument that is not an option */
static int set_file(void *user, const char *arg, char *msg, size_t len) {
    args *A = (args *)user;
    if (A->mode == MODE_ANALYZE && !A->file) { A->file = arg; return 0; }
    return arg_error(msg, len, "unexpected argument '%.64s'", arg);
}

/* argv into A: 0 ok, 2 bad command line with a sentence in msg. Prints
   nothing, exits never. */
static int parse_args(int argc, char **argv, args *A, char *msg, size_t len) {
    int first = 1, k;
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
    if (pp_cli_parse(argc, argv, first, opts, sizeof opts[0], OPT_COUNT, A->given, set_option, set_file, A, msg, len))
        return 2;
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

/* Ctrl-C: the SIGINT handler only sets this flag. The searches see it
   through the progress callback (they stop with PP_ERR_CANCELLED); best,
   sweep and gallery check it before each build and stop there, exit 130. */
static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}
static int interrupted_exit(const char *what) {
    fprintf(stderr, "ppsched: interrupted (Ctrl-C) during %s\n", what);
    return 130;
}

/* ppsched sweep: one line per memory limit. An adaptive schedule is built
   under each limit (the trade-off between activation memory and makespan);
   any other schedule is built once, and a limit its peak is above is
   marked. No row that fits: exit 1, saying which limit would. */
static int run_sweep(pp_config cfg, double from, double to, double step, int json) {
    const pp_sched_info *info = pp_sched_find(cfg.schedule);
    int adaptive = info && info->takes_limit;
    int first = 1, k, count = (int)((to - from) / step + 1e-9) + 1, fitting = 0;
    double fixed_peak = 0;
    pp_schedule *fixed = NULL;
    char err[PP_ERR_LEN], why[PP_ERR_LEN] = "";
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
        if (interrupted) {
            pp_sched_free(fixed);
            return interrupted_exit("sweep");
        }
        if (adaptive) {
            pp_status st;
            cfg.mem_limit = lim;
            st = pp_sched_build(&cfg, &s, err);
            if (interrupted) {
                pp_sched_free(s);
                return interrupted_exit("sweep");
            }
            if (st != PP_OK && (st != PP_ERR_INVALID_ARG || !strstr(err, "no "))) {
                if (json) printf("\n]}\n");
                fprintf(stderr, "ppsched: %s\n", err);
                return exit_code(st);
            }
            if (st != PP_OK) memcpy(why, err, sizeof why); /* the last: the nearest limit's reason */
        }
        if (!s) {
            if (json) printf("%s  {\"mem_limit\": %g, \"fits\": false}", first ? "" : ",\n", lim);
            else printf("%-10g %12s %10s %10s\n", lim, "-", "-", "does not fit");
        } else {
            int fits = max_peak(s) <= lim + 1e-9;
            fitting += fits;
            fixed_peak = max_peak(s);
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
    if (fitting) return 0;
    if (adaptive && why[0])
        fprintf(stderr, "ppsched: sweep: no limit from %g to %g fits; at %g: %s\n", from, from + (count - 1) * step,
                from + (count - 1) * step, why);
    else
        fprintf(stderr, "ppsched: sweep: no limit from %g to %g fits: %s's peak is %g units; sweep up to "
                        "--mem-to %g or more\n", from, from + (count - 1) * step, cfg.schedule, fixed_peak, fixed_peak);
    return 1;
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
        if (interrupted) {
            pp_sched_free(s);
            free(rows);
            return interrupted_exit("best");
        }
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
    if (built && !rows[0].fits) { /* sorted: the first row fits if any does */
        double least = rows[0].peak;
        const char *who = rows[0].name;
        for (i = 0; i < nr; i++)
            if (rows[i].built && rows[i].peak < least) { least = rows[i].peak; who = rows[i].name; }
        fprintf(stderr, "ppsched: best: no schedule fits --mem-limit %g at d=%d, n=%d; the smallest peak is %s's, %g: "
                        "--mem-limit %g or more\n", limit, cfg.devices, cfg.microbatches, who, least, least);
        free(rows);
        return 1;
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

/* One SVG per built-in schedule and an index.html showing them side by side.
   Each file is written under a temporary name and renamed (pp_cli.h), the
   index last, so no file is ever half-written; the index shows only the
   pictures this run wrote, and a picture of a built-in schedule left in DIR
   by an earlier run is removed when this run does not write it again (it
   would show another d, n or times under this run's name). */
static int gallery(const pp_config *base, const char *dir) {
    char path[4096], err[PP_ERR_LEN];
    pp_cli_file html, svg;
    FILE *h;
    int i, failed = 0, written = 0, bad_input = 0, nsched = pp_sched_count();
    unsigned char *wrote = (unsigned char *)calloc((size_t)nsched, 1);
    if (!wrote) { fprintf(stderr, "ppsched: out of memory\n"); return 1; }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "ppsched: cannot create directory '%s': %s\n", dir, strerror(errno));
        free(wrote);
        return 1;
    }
    if (snprintf(path, sizeof path, "%s/index.html", dir) >= (int)sizeof path - 40) {
        fprintf(stderr, "ppsched: gallery: directory name too long (at most %d bytes)\n", (int)sizeof path - 80);
        free(wrote);
        return 2;
    }
    if (pp_cli_create("ppsched", &html, path)) { free(wrote); return 1; }
    h = html.f;
    fprintf(h, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pp_sched gallery d=%d n=%d</title>\n"
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
    for (i = 0; i < nsched; i++) {
        const pp_sched_info *info = pp_sched_info_at(i);
        pp_config cfg = *base;
        pp_schedule *s = NULL;
        pp_status st;
        cfg.schedule = info->name;
        snprintf(path, sizeof path, "%s/%s.svg", dir, info->name);
        st = pp_sched_build(&cfg, &s, err);
        if (interrupted) { /* no index of a gallery that is not whole, nor an earlier one */
            pp_sched_free(s);
            free(wrote);
            pp_cli_discard(&html);
            snprintf(path, sizeof path, "%s/index.html", dir);
            if (remove(path) != 0 && errno != ENOENT)
                fprintf(stderr, "ppsched: gallery: cannot remove the earlier '%s': %s\n", path, strerror(errno));
            return interrupted_exit("gallery");
        }
        if (st != PP_OK) {
            bad_input += pp_status_bad_input(st);
            fprintf(h, "<tr><td>%s</td><td colspan=\"3\">not built: ", info->name);
            html_str(h, err);
            fprintf(h, "</td><td>");
            html_str(h, info->description);
            fprintf(h, "</td></tr>\n");
            fprintf(stderr, "ppsched: gallery: %s: %s\n", info->name, err);
        } else {
            double peak = 0;
            int dev;
            for (dev = 0; dev < s->devices; dev++) if (s->peak_memory[dev] > peak) peak = s->peak_memory[dev];
            fprintf(h, "<tr><td><a href=\"#%s\">%s</a></td><td>%g</td><td>%.2f%%</td><td>%g</td><td>", info->name,
                    info->name, s->makespan, 100 * s->bubble_rate, peak);
            html_str(h, info->description);
            fprintf(h, "</td></tr>\n");
            if (failed) {
                /* one failed write is said; the rest are not tried (the gallery is not whole) */
            } else if (pp_cli_create("ppsched", &svg, path)) {
                failed = 1;
            } else if (pp_sched_print_svg(svg.f, s, PP_SVG_MEMORY, err) != PP_OK) {
                fprintf(stderr, "ppsched: gallery: %s: %s\n", info->name, err);
                pp_cli_discard(&svg);
                failed = 1;
            } else if (pp_cli_commit("ppsched", &svg)) {
                failed = 1;
            } else {
                wrote[i] = 1;
                written++;
            }
        }
        pp_sched_free(s);
        /* not written now: an earlier run's picture would show under this run's index */
        if (!wrote[i] && remove(path) != 0 && errno != ENOENT) {
            fprintf(stderr, "ppsched: gallery: cannot remove the earlier '%s': %s\n", path, strerror(errno));
            failed = 1;
        }
    }
    fprintf(h, "</table>\n<div class=\"g\">\n");
    for (i = 0; i < nsched; i++) {
        const pp_sched_info *info = pp_sched_info_at(i);
        if (!wrote[i]) continue;
        fprintf(h, "<figure id=\"%s\"><img src=\"%s.svg\" alt=\"%s\"><figcaption>%s: ", info->name, info->name,
                info->name, info->name);
        html_str(h, info->description);
        fprintf(h, "</figcaption></figure>\n");
    }
    fprintf(h, "</div>\n</body></html>\n");
    free(wrote);
    if (failed || written == 0) { /* no index of a gallery that is not whole, nor an earlier one */
        snprintf(path, sizeof path, "%s/index.html", dir);
        pp_cli_discard(&html);
        if (remove(path) != 0 && errno != ENOENT)
            fprintf(stderr, "ppsched: gallery: cannot remove the earlier '%s': %s\n", path, strerror(errno));
        if (failed) {
            fprintf(stderr, "ppsched: gallery: not every file could be written (above); wrote no index.html\n");
            return 1;
        }
        fprintf(stderr, "ppsched: gallery: wrote no SVG to %s (the reasons are above)\n", dir);
        return bad_input < nsched ? 1 : 2;
    }
    if (pp_cli_commit("ppsched", &html)) return 1;
    printf("ppsched: wrote %d SVG%s and index.html to %s", written, written == 1 ? "" : "s", dir);
    if (written < nsched) printf(" (%d of %d schedules not built, see above)", nsched - written, nsched);
    printf("\n");
    return 0;
}

/* ---- ppsched plan: which layout, microbatch size and schedule fit and run fastest ---- */

/* --hf-config: a Hugging Face config.json into a pp_model, read with cJSON
   (Debian/Ubuntu: libcjson-dev; the Makefile finds it with pkg-config or a
   compile probe). The families and the fields read are in docs/planner.md;
   a field that changes the model but is not modelled is refused by name. */
#ifdef PP_HAVE_CJSON
#include <cjson/cJSON.h>

/* an integer field: 1 read, 0 absent (out untouched), -1 error (msg names it) */
static int hf_int(const cJSON *root, const char *key, int *out, char *msg, size_t len) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, key);
    double v;
    if (!x || cJSON_IsNull(x)) return 0;
    v = cJSON_IsNumber(x) ? x->valuedouble : -1;
    if (!cJSON_IsNumber(x) || v != floor(v) || v < 0 || v > 1e9) {
        snprintf(msg, len, "%s: must be a whole number >= 0", key);
        return -1;
    }
    *out = (int)v;
    return 1;
}
static int hf_need(const cJSON *root, const char *key, int *out, char *msg, size_t len) {
    int st = hf_int(root, key, out, msg, len);
    if (st == 0) snprintf(msg, len, "%s: missing (a whole number is needed)", key);
    return st == 1;
}
static int hf_bool(const cJSON *root, const char *key, int dflt) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!x || cJSON_IsNull(x)) return dflt;
    return cJSON_IsTrue(x) ? 1 : cJSON_IsFalse(x) ? 0 : -1;
}

static int hf_config_load(const char *path, pp_model *m, int *seq_from_file, char *msg, size_t len) {
    static const char *const types[] = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe",
                                        "deepseek_v3"};
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long size;
    cJSON *root = NULL;
    const cJSON *x;
    const char *type;
    int ok = 0, k, v, known = 0, moe, tied, ffn = 0;
    if (!f) { snprintf(msg, len, "cannot open: %s", strerror(errno)); return 0; }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || size > (1 << 24) || fseek(f, 0, SEEK_SET) != 0 ||
        !(text = (char *)malloc((size_t)size + 1)) || fread(text, 1, (size_t)size, f) != (size_t)size) {
        snprintf(msg, len, "cannot read (a JSON file of at most 16 MiB is expected)");
        fclose(f);
        free(text);
        return 0;
    }
    fclose(f);
    text[size] = 0;
    root = cJSON_Parse(text);
    if (!root || !cJSON_IsObject(root)) {
        const char *at = cJSON_GetErrorPtr();
        snprintf(msg, len, "not a JSON object%s%.20s%s", at ? " (near '" : "", at ? at : "", at ? "')" : "");
        goto done;
    }
#define HF_FAIL(...) do { snprintf(msg, len, __VA_ARGS__); goto done; } while (0)
    x = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    type = cJSON_IsString(x) ? x->valuestring : NULL;
    for (k = 0; type && k < (int)(sizeof types / sizeof types[0]); k++) known |= strcmp(type, types[k]) == 0;
    if (!known)
        HF_FAIL("model_type: '%.40s' is not one the planner reads (llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, "
                "qwen3_moe, deepseek_v3)", type ? type : "(missing)");
    memset(m, 0, sizeof *m);
    m->gated = m->rope = m->rmsnorm = 1;
    if (!hf_need(root, "num_hidden_layers", &m->layers, msg, len) || !hf_need(root, "hidden_size", &m->hidden, msg, len) ||
        !hf_need(root, "num_attention_heads", &m->heads, msg, len) || !hf_need(root, "vocab_size", &m->vocab, msg, len) ||
        hf_int(root, "num_key_value_heads", &m->kv_heads, msg, len) < 0 || hf_int(root, "head_dim", &m->head_dim, msg, len) < 0 ||
        hf_int(root, "intermediate_size", &ffn, msg, len) < 0)
        goto done;
    m->ffn = ffn;
    if (hf_int(root, "max_position_embeddings", &m->seq, msg, len) < 0) goto done;
    *seq_from_file = m->seq;
    /* every family here: SiLU-gated MLP, RoPE, RMSNorm */
    x = cJSON_GetObjectItemCaseSensitive(root, "hidden_act");
    if (x && !(cJSON_IsString(x) && strcmp(x->valuestring, "silu") == 0))
        HF_FAIL("hidden_act: '%.20s' is not modelled (silu, the gated SwiGLU MLP, is)", cJSON_IsString(x) ? x->valuestring : "?");
    tied = hf_bool(root, "tie_word_embeddings", 0);
    if (tied < 0) HF_FAIL("tie_word_embeddings: must be true or false");
    m->untied = !tied;
    /* what changes the model and is not modelled: refused by name */
    if (hf_bool(root, "attention_bias", 0) == 1) HF_FAIL("attention_bias: true (Q, K, V, output biases) is not modelled");
    if (hf_bool(root, "mlp_bias", 0) == 1) HF_FAIL("mlp_bias: true is not modelled");
    if (hf_bool(root, "use_sliding_window", 0) == 1)
        HF_FAIL("use_sliding_window: true (sliding-window attention) is not modelled: the planner counts full attention");
    if (strcmp(type, "mistral") == 0 || strcmp(type, "mixtral") == 0) {
        x = cJSON_GetObjectItemCaseSensitive(root, "sliding_window");
        if (x && !cJSON_IsNull(x) && !(cJSON_IsNumber(x) && x->valuedouble >= m->seq))
            HF_FAIL("sliding_window: %g (sliding-window attention, shorter than max_position_embeddings %d) is not "
                    "modelled: the planner counts full attention (null turns it off)", cJSON_IsNumber(x) ? x->valuedouble : -1.0, m->seq);
    }
    x = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    if (cJSON_IsArray(x))
        for (k = 0; k < cJSON_GetArraySize(x); k++) {
            const cJSON *e = cJSON_GetArrayItem(x, k);
            if (!cJSON_IsString(e) || strcmp(e->valuestring, "full_attention") != 0)
                HF_FAIL("layer_types[%d]: only full_attention is modelled", k);
        }
    if (cJSON_GetObjectItemCaseSensitive(root, "quantization_config"))
        fprintf(stderr, "ppsched plan: note: %s: quantization_config (how the checkpoint is stored) is not read; "
                "training is planned in BF16 mixed precision\n", path);
    if (strncmp(type, "qwen2", 5) == 0) m->qkv_bias = 1; /* Qwen2's Q, K, V projections carry biases */
    if (strncmp(type, "qwen3", 5) == 0) m->qk_norm = 1;  /* Qwen3 normalises each query and key head */
    moe = strcmp(type, "mixtral") == 0 || strcmp(type, "qwen2_moe") == 0 || strcmp(type, "qwen3_moe") == 0 ||
          strcmp(type, "deepseek_v3") == 0;
    if (moe) {
        int shared = 0;
        if (strcmp(type, "mixtral") == 0) {
            if (!hf_need(root, "num_local_experts", &m->experts, msg, len)) goto done;
            m->expert_ffn = ffn;
        } else if (strcmp(type, "deepseek_v3") == 0) {
            if (!hf_need(root, "n_routed_experts", &m->experts, msg, len) ||
                !hf_need(root, "moe_intermediate_size", &m->expert_ffn, msg, len) ||
                hf_int(root, "n_shared_experts", &m->shared_experts, msg, len) < 0 ||
                hf_int(root, "first_k_dense_replace", &m->dense_layers, msg, len) < 0)
                goto done;
        } else {
            if (!hf_need(root, "num_experts", &m->experts, msg, len) ||
                !hf_need(root, "moe_intermediate_size", &m->expert_ffn, msg, len) ||
                hf_int(root, "shared_expert_intermediate_size", &shared, msg, len) < 0)
                goto done;
            /* Qwen2-MoE's shared expert is one MLP of shared_expert_intermediate_size: as many experts of
               moe_intermediate_size (the same parameters and FLOPs); its 1 x h gate is not counted */
            if (shared % m->expert_ffn) HF_FAIL("shared_expert_intermediate_size: %d is not a multiple of "
                                                "moe_intermediate_size %d (modelled as whole experts)", shared, m->expert_ffn);
            m->shared_experts = shared / m->expert_ffn;
            v = 1;
            if (hf_int(root, "decoder_sparse_step", &v, msg, len) < 0) goto done;
            if (v != 1) HF_FAIL("decoder_sparse_step: %d (MoE every %d layers) is not modelled; 1 is", v, v);
            x = cJSON_GetObjectItemCaseSensitive(root, "mlp_only_layers");
            if (cJSON_IsArray(x) && cJSON_GetArraySize(x) > 0) HF_FAIL("mlp_only_layers: dense layers among MoE ones are not modelled");
        }
        if (!hf_need(root, "num_experts_per_tok", &m->top_k, msg, len)) goto done;
        if (m->top_k < 1) HF_FAIL("num_experts_per_tok: must be >= 1");
    } else if (!ffn) {
        HF_FAIL("intermediate_size: missing (a whole number is needed)");
    }
    if (strcmp(type, "deepseek_v3") == 0) {
        int vd = 0, nope = 0;
        if (!hf_need(root, "kv_lora_rank", &m->kv_lora_rank, msg, len) ||
            hf_int(root, "q_lora_rank", &m->q_lora_rank, msg, len) < 0 ||
            !hf_need(root, "qk_rope_head_dim", &m->rope_head_dim, msg, len) ||
            !hf_need(root, "qk_nope_head_dim", &nope, msg, len) || !hf_need(root, "v_head_dim", &vd, msg, len))
            goto done;
        if (vd != nope) HF_FAIL("v_head_dim: %d differs from qk_nope_head_dim %d; the planner models one head width", vd, nope);
        m->head_dim = nope;
        m->kv_heads = 0; /* MLA expands keys and values for every head */
        v = 1;
        if (hf_int(root, "moe_layer_freq", &v, msg, len) < 0) goto done;
        if (v != 1) HF_FAIL("moe_layer_freq: %d is not modelled; 1 is", v);
        v = 0;
        if (hf_int(root, "num_nextn_predict_layers", &v, msg, len) < 0) goto done;
        if (v > 0)
            HF_FAIL("num_nextn_predict_layers: %d multi-token prediction module%s not modelled (0 plans the main model)",
                    v, v == 1 ? " is" : "s are");
    }
    ok = 1;
#undef HF_FAIL
done:
    cJSON_Delete(root);
    free(text);
    return ok;
}
#else
static int hf_config_load(const char *path, pp_model *m, int *seq_from_file, char *msg, size_t len) {
    (void)path; (void)m; (void)seq_from_file;
    snprintf(msg, len, "this ppsched was built without cJSON: install it (Debian/Ubuntu: apt-get install "
             "libcjson-dev) and run make again");
    return 0;
}
#endif

/* Every plan option in one table: name, what it sets (an int or double
   field of pp_plan_request at off, scaled by mul), and its help line.
   INT: whole number; FLAG: sets 1; REAL: number >= 0 times mul; POS: number > 0 times mul. */
enum { PO_INT, PO_FLAG, PO_REAL, PO_POS, PO_SPECIAL };
typedef struct plan_opt { const char *name; int kind; size_t off; double mul; const char *help; } plan_opt;
#define PO(field) offsetof(pp_plan_request, field)
static const plan_opt plan_opts[] = {
    {"--model", PO_SPECIAL, 0, 0, "NAME     a published model (below); other model options override it"},
    {"--hf-config", PO_SPECIAL, 0, 0, "FILE     a Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2/3 and their\n"
     "                    MoE, DeepSeek-V3); other model options override it"},
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
    {"--gpu", PO_SPECIAL, 0, 0, "NAME     a GPU preset (below; default a100-80g); other GPU options override it"},
    {"--gpu-mem", PO_REAL, PO(gpu.mem_bytes), 1073741824.0, "G        GiB per GPU (default the preset's)"},
    {"--reserve", PO_REAL, PO(gpu.reserve_bytes), 1073741824.0, "R        GiB kept back per GPU for the CUDA context, NCCL and\n"
     "                    fragmentation (default 1.5 + 3% of memory; 0 = none)"},
    {"--recipe", PO_SPECIAL, 0, 0, "NAME     megatron (default: bf16 weights, fp32 grads, distributed optimizer),\n"
     "                    fsdp, zero1, zero2, zero3, deepseek (bf16 Adam moments): how weights, grads\n"
     "                    and optimizer are kept"},
    {"--recompute", PO_SPECIAL, 0, 0, "MODE     none (default), selective or full, for every schedule"},
    {"--nvlink-bw", PO_POS, PO(gpu.tp_bw), 1e9, "GB/s     NVLink per GPU per direction (default the preset's)"},
    {"--net-bw", PO_POS, PO(gpu.net_bw), 1e9, "GB/s     network per GPU (default the preset's)"},
    {"--hbm-bw", PO_POS, PO(gpu.hbm_bw), 1e9, "GB/s     GPU memory bandwidth (default the preset's)"},
    {"--train-tokens", PO_SPECIAL, 0, 0, "T        tokens to train on (e.g. 15e12): prints the time to train"},
    {"--tflops", PO_REAL, PO(gpu.flops), 1e12, "X        achieved matmul TFLOP/s per GPU (default efficiency x peak)"},
    {"--peak-tflops", PO_REAL, PO(gpu.peak_flops), 1e12, "X        dense 16-bit peak TFLOP/s, for the MFU (default the preset's)"},
    {"--efficiency", PO_REAL, PO(gpu.efficiency), 1, "X        achieved fraction of peak (default the preset's fitted one)"},
    {"--fp8", PO_FLAG, PO(fp8), 0, "         the layers' matmuls at the FP8 rate (and FP8 MoE dispatch)"},
    {"--fp8-speedup", PO_REAL, PO(gpu.fp8_speedup), 1, "X        FP8 matmul speed-up over 16-bit (default 1.21, fitted)"},
    {"--no-tp-overlap", PO_FLAG, PO(no_tp_overlap), 0, "         TP communication not overlapped with the matmuls"},
    {"--no-dp-overlap", PO_FLAG, PO(no_dp_overlap), 0, "         DP gradient reduction after the pipeline, not under it"},
    {"--no-fb-overlap", PO_FLAG, PO(no_fb_overlap), 0, "         dualpipe: F&B pairs in sequence (all-to-all not hidden)"},
    {"--node-gpus", PO_INT, PO(gpu.node_gpus), 0, "N        GPUs on one NVLink domain (default 8)"},
    {"--gpus", PO_INT, PO(gpus), 0, "N        GPUs in all"},
    {"--global-batch", PO_INT, PO(global_batch), 0, "GB       sequences per step"},
    {"--pp", PO_INT, PO(pp), 0, "P        pipeline stages' devices (default: try every divisor)"},
    {"--tp", PO_INT, PO(tp), 0, "T        tensor parallel (default 1, 2, 4, 8 dividing heads)"},
    {"--cp", PO_INT, PO(cp), 0, "C        context parallel (default 1, 2, 4.. while seq / C >= 4096)"},
    {"--ep", PO_INT, PO(ep), 0, "E        expert parallel (default powers of 2 dividing experts, tp x dp x cp)"},
    {"--dp", PO_INT, PO(dp), 0, "D        data parallel (default gpus / (pp tp cp))"},
    {"--mbs", PO_INT, PO(mbs), 0, "M        microbatch size (default 1, 2, 4)"},
    {"--v", PO_INT, PO(v), 0, "V        stages per device of looped schedules (default 2, 3, 4, 6, 8 and every v dividing the layers)"},
    {"--schedule", PO_SPECIAL, 0, 0, "NAME     one schedule only (-s; default every built-in)"},
    {"--times", PO_SPECIAL, 0, 0, "F,B,W[,COMM] measured seconds of one microbatch through one device's share"},
    {"--top", PO_SPECIAL, 0, 0, "K        rows in the table; pruning keeps the top K exact (default 10)"},
    {"--no-prune", PO_FLAG, PO(no_prune), 0, "         build every candidate"},
    {"--format", PO_SPECIAL, 0, 0, "FMT      table (default) or json (the first K of the ranking, --top)"},
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
               "the first K of the ranking (--top 1000000: every candidate, fitting or not). A candidate\n"
               "whose work bound is already slower than its schedule's best layout so far and than the\n"
               "K-th best so far is not built (\"pruned\": true, \"fits\": null: not known); the top K\n"
               "and each schedule's best are exact.\n"
               "exit status: 0 ok, 1 nothing fits (stderr names the nearest fix) or a failed run,\n"
               "2 arguments to change\n");
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

/* the best fitting candidate of a request, or none: for the nearest fix */
static int plan_try(const pp_plan_request *r, pp_candidate *best) {
    pp_candidate *c;
    char err[PP_ERR_LEN];
    int count = 0, ok = 0;
    if (pp_plan(r, NULL, 0, &count, err) != PP_OK || count < 1) return 0;
    c = (pp_candidate *)malloc(sizeof *c * (size_t)count);
    if (!c) return 0;
    if (pp_plan(r, c, count, &count, err) == PP_OK && count > 0 && c[0].step_time > 0) {
        *best = c[0];
        ok = 1;
    }
    free(c);
    return ok;
}

static void plan_fix_line(const char *how, const pp_candidate *b) {
    fprintf(stderr, "  %-28s fits: %s pp=%d tp=%d cp=%d ep=%d dp=%d mbs=%d, %.1f GiB, %.3f s per step\n", how, b->schedule,
            b->pp, b->tp, b->cp, b->ep, b->dp, b->mbs, b->mem.total / 1073741824.0, b->step_time);
}

/* Nothing fits: what would (PLANNING in docs/planner.md, "no answer"). */
static void plan_nearest_fix(const pp_plan_request *r0) {
    pp_plan_request r = *r0;
    pp_candidate b;
    char how[64];
    int found = 0, k;
    fprintf(stderr, "ppsched plan: no candidate fits in %.1f GiB per GPU; the nearest fixes:\n",
            pp_gpu_defaults(&r0->gpu).mem_bytes / 1073741824.0);
    if (r0->recompute != PP_RECOMPUTE_FULL) {
        r.recompute = PP_RECOMPUTE_FULL;
        if (plan_try(&r, &b)) { plan_fix_line("--recompute full", &b); found++; }
        r.recompute = r0->recompute;
    }
    if (r0->recipe != PP_RECIPE_FSDP) {
        r.recipe = PP_RECIPE_FSDP;
        if (plan_try(&r, &b)) { plan_fix_line("--recipe fsdp", &b); found++; }
        r.recipe = r0->recipe;
    }
    for (k = 2; r0->pp > 0 && k <= 8; k *= 2) {
        r.pp = r0->pp * k;
        if (r.dp > 0) r.dp = 0;
        snprintf(how, sizeof how, "--pp %d", r.pp);
        if (r.pp <= r0->gpus && plan_try(&r, &b)) { plan_fix_line(how, &b); found++; break; }
    }
    r.pp = r0->pp;
    r.dp = r0->dp;
    for (k = 2; k <= 64; k *= 2) { /* more GPUs: the data-parallel degree grows */
        if ((double)r0->gpus * k > (1 << 24)) break;
        r.gpus = r0->gpus * k;
        if (r0->dp > 0) r.dp = r0->dp * k;
        snprintf(how, sizeof how, "--gpus %d (%d more)", r.gpus, r.gpus - r0->gpus);
        if (plan_try(&r, &b)) { plan_fix_line(how, &b); found++; break; }
    }
    if (!found) fprintf(stderr, "  none of --recompute full, --recipe fsdp, a larger --pp or up to 64x the GPUs fits\n");
}

static int plan_main(int argc, char **argv) {
    pp_plan_request r;
    pp_candidate *c;
    pp_times times;
    pp_model_counts mc;
    pp_gpu g;
    char err[PP_ERR_LEN], msg[PP_ERR_LEN];
    int i, k, count = 0, json = 0, top = 10, have_model = 0, have_gpu = 0, hf_seq = 0, seq_given = 0, fits = 0;
    double train_tokens = 0;
    const char *hf_path = NULL;
    pp_status st;
    memset(&r, 0, sizeof r);
    /* presets first, so that every other option overrides them */
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { plan_usage(stdout); return 0; }
        if ((strcmp(a, "--model") == 0 || strcmp(a, "--gpu") == 0) && v) {
            if (a[2] == 'm' && hf_path) return plan_error("--hf-config and --model both name a model: give one");
            st = a[2] == 'm' ? pp_model_preset(v, &r.model, err) : pp_gpu_preset(v, &r.gpu, err);
            if (st != PP_OK) return plan_error("%s %s: %s", a, v, err);
            have_model |= a[2] == 'm';
            have_gpu |= a[2] == 'g';
        }
        if (strcmp(a, "--hf-config") == 0 && v) {
            if (have_model) return plan_error("--hf-config and --model both name a model: give one");
            if (!hf_config_load(v, &r.model, &hf_seq, msg, sizeof msg)) return plan_error("--hf-config %s: %s", v, msg);
            have_model = 1;
            hf_path = v;
        }
        if (strcmp(a, "--seq") == 0) seq_given = 1;
    }
    /* no --gpu: the a100-80g preset, said in the output */
    if (!have_gpu) pp_gpu_preset("a100-80g", &r.gpu, NULL);
    if (hf_path && !seq_given && hf_seq < 1)
        return plan_error("--hf-config %s: max_position_embeddings: missing; give the training length with --seq", hf_path);
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
        } else if (o->kind == PO_REAL || o->kind == PO_POS) {
            double x;
            if (!parse_real(v, &x) || (o->kind == PO_POS && !(x > 0)))
                return plan_error("%s needs a finite number %s, got '%s'", a, o->kind == PO_POS ? "> 0" : ">= 0", v);
            /* --reserve 0: none (a zero field is the default reserve) */
            if (strcmp(a, "--reserve") == 0 && x == 0) x = -1.0 / o->mul;
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
        } else if (strcmp(a, "--recipe") == 0 || strcmp(a, "--recompute") == 0) {
            int rec = strcmp(a, "--recipe") == 0, n = rec ? PP_RECIPE_COUNT : PP_RECOMPUTE_COUNT;
            for (k = 0; k < n && strcmp(v, rec ? pp_recipe_name(k) : pp_recompute_name(k)) != 0; k++) {}
            if (k == n)
                return plan_error(rec ? "--recipe is megatron, fsdp, zero1, zero2, zero3 or deepseek, got '%s'"
                                      : "--recompute is none, selective or full, got '%s'", v);
            if (rec) r.recipe = k;
            else r.recompute = k;
        } else if (strcmp(a, "--train-tokens") == 0) {
            if (!parse_real(v, &train_tokens) || !(train_tokens >= 1) || train_tokens > 1e18)
                return plan_error("--train-tokens needs a token count from 1 to 1e18, got '%s'", v);
        } /* --model, --gpu, --hf-config: done above */
    }
    if (hf_path && !seq_given) r.model.seq = hf_seq;
    if (!have_model && (r.model.layers < 1 || r.model.hidden < 1 || r.model.heads < 1 || r.model.seq < 1))
        return plan_error("give --model NAME, --hf-config FILE, or --layers, --hidden, --heads and --seq");
    if (r.global_batch < 1 || r.gpus < 1) return plan_error("--global-batch and --gpus are required (>= 1)");
    r.keep_top = top; /* pruning keeps the printed top exact */
    /* cap 0: the count of candidates (and every check of the request) */
    st = pp_plan(&r, NULL, 0, &count, err);
    if (st != PP_OK)
        return st == PP_ERR_OUT_OF_MEMORY ? (fprintf(stderr, "ppsched plan: %s\n", err), 1) : plan_error("%s", err);
    g = pp_gpu_defaults(&r.gpu);
    if (r.tp > g.node_gpus)
        fprintf(stderr, "ppsched plan: warning: --tp %d is larger than a node (%d GPUs): its collectives run over the "
                "network (%.0f GB/s per GPU)\n", r.tp, g.node_gpus, g.net_bw / 1e9);
    c = (pp_candidate *)malloc(sizeof *c * (size_t)(count > 0 ? count : 1));
    if (!c) { fprintf(stderr, "ppsched plan: out of memory for %d candidates\n", count); return 1; }
    st = pp_plan(&r, c, count, &count, err);
    if (st != PP_OK) {
        free(c);
        return st == PP_ERR_OUT_OF_MEMORY ? (fprintf(stderr, "ppsched plan: %s\n", err), 1) : plan_error("%s", err);
    }
    pp_model_stats(&r.model, &mc, NULL);
    for (i = 0; i < count; i++) fits += c[i].step_time > 0;
    if (json) {
        printf("{\"model\": {\"params\": %.0f, \"active_params\": %.0f, \"flops_per_token\": %.6g, \"seq\": %d},\n",
               mc.params, mc.active_params, mc.flops_per_token, r.model.seq);
        printf(" \"gpu\": {\"name\": ");
        json_string(g.name);
        printf(", \"assumed\": %s, \"mem_bytes\": %.0f, \"reserve_bytes\": %.0f, \"peak_flops\": %.6g, \"flops\": %.6g, "
               "\"hbm_bw\": %.6g, \"tp_bw\": %.6g, \"net_bw\": %.6g, \"node_gpus\": %d},\n",
               have_gpu ? "false" : "true", g.mem_bytes, g.reserve_bytes, g.peak_flops, g.flops, g.hbm_bw, g.tp_bw,
               g.net_bw, g.node_gpus);
        printf(" \"recipe\": \"%s\", \"recompute\": \"%s\", \"train_tokens\": %.6g,\n \"candidates\": [",
               pp_recipe_name(r.recipe), pp_recompute_name(r.recompute), train_tokens);
        for (i = 0; i < count && i < top; i++) { /* the first --top of the ranking */
            printf("%s\n  {\"schedule\": ", i ? "," : "");
            json_string(c[i].schedule);
            printf(", \"pp\": %d, \"tp\": %d, \"cp\": %d, \"ep\": %d, \"dp\": %d, \"v\": %d, \"mbs\": %d, \"microbatches\": %d, "
                   "\"fits\": %s, \"peak_bytes\": %.0f, \"step_time\": %.6g, \"mfu\": %.4f, \"bound\": %.6g, \"pruned\": %s, ",
                   c[i].pp, c[i].tp, c[i].cp, c[i].ep, c[i].dp, c[i].v, c[i].mbs, c[i].microbatches,
                   c[i].pruned ? "null" : c[i].fits ? "true" : "false", c[i].peak_bytes, c[i].step_time, c[i].mfu, c[i].bound,
                   c[i].pruned ? "true" : "false");
            printf("\"span\": [%s%s%s%s%s], \"tokens_per_gpu\": %.6g, \"tflops_per_gpu\": %.6g, ",
                   c[i].span & PP_SPAN_TP ? "\"tp\"" : "", (c[i].span & PP_SPAN_TP) && (c[i].span & ~PP_SPAN_TP) ? ", " : "",
                   c[i].span & PP_SPAN_CP ? "\"cp\"" : "", (c[i].span & PP_SPAN_CP) && (c[i].span & PP_SPAN_EP) ? ", " : "",
                   c[i].span & PP_SPAN_EP ? "\"ep\"" : "", c[i].tokens_per_gpu, c[i].tflops_per_gpu / 1e12);
            if (train_tokens > 0)
                printf("\"train_seconds\": %.6g, ", c[i].step_time > 0 ? train_tokens / ((double)r.global_batch * r.model.seq) *
                                                                            c[i].step_time : 0.0);
            printf("\"memory\": {\"weights\": %.0f, \"grads\": %.0f, \"optimizer\": %.0f, \"activations\": %.0f, "
                   "\"logits\": %.0f, \"reserve\": %.0f, \"total\": %.0f}, ", c[i].mem.weights, c[i].mem.grads,
                   c[i].mem.optimizer, c[i].mem.activations, c[i].mem.logits, c[i].mem.reserve, c[i].mem.total);
            printf("\"time\": {\"compute\": %.6g, \"bubble\": %.6g, \"tp\": %.6g, \"cp\": %.6g, \"ep\": %.6g, "
                   "\"pp\": %.6g, \"dp\": %.6g}, \"reason\": ", c[i].time.compute, c[i].time.bubble, c[i].time.tp,
                   c[i].time.cp, c[i].time.ep, c[i].time.pp, c[i].time.dp);
            json_string(c[i].reason);
            printf("}");
        }
        printf("\n]}\n");
    } else {
        int shown = 0;
        printf("model: %.2fB parameters (%.2fB active), %.3g training FLOPs per token, seq %d%s\n", mc.params / 1e9,
               mc.active_params / 1e9, mc.flops_per_token, r.model.seq,
               hf_path && !seq_given ? " (max_position_embeddings; --seq sets the training length)" : "");
        printf(have_gpu ? "gpu %s" : "gpu: none given, assumed %s (--gpu names one)", g.name);
        printf(": %.0f GiB (%.1f reserved), %.0f TFLOP/s peak, %.0f achieved; memory %s, recompute %s\n\n",
               g.mem_bytes / 1073741824.0, g.reserve_bytes / 1073741824.0, g.peak_flops / 1e12, g.flops / 1e12,
               pp_recipe_name(r.recipe), pp_recompute_name(r.recompute));
        printf("%-20s %4s %3s %3s %3s %4s %2s %4s %5s %5s %8s %8s %9s %7s %6s  %s\n", "schedule", "pp", "tp", "cp", "ep", "dp",
               "v", "mbs", "n", "net", "GiB", "step s", "tok/s/GPU", "TFLOP/s", "MFU", "reason");
        for (i = 0; i < count && shown < top; i++) {
            char net[16];
            if (c[i].step_time <= 0) continue;
            snprintf(net, sizeof net, "%s%s%s", c[i].span & PP_SPAN_TP ? "T" : "", c[i].span & PP_SPAN_CP ? "C" : "",
                     c[i].span & PP_SPAN_EP ? "E" : "");
            printf("%-20s %4d %3d %3d %3d %4d %2d %4d %5d %5s %8.1f %8.3f %9.0f %7.0f %5.1f%%  %s\n", c[i].schedule, c[i].pp,
                   c[i].tp, c[i].cp, c[i].ep, c[i].dp, c[i].v, c[i].mbs, c[i].microbatches, net[0] ? net : "-",
                   c[i].mem.total / 1073741824.0, c[i].step_time, c[i].tokens_per_gpu, c[i].tflops_per_gpu / 1e12,
                   100 * c[i].mfu, c[i].reason);
            shown++;
        }
        if (!shown) printf("(no candidate fits)\n");
        else {
            const pp_candidate *b = &c[0];
            const pp_mem_breakdown *m = &b->mem;
            const pp_time_breakdown *t = &b->time;
            printf("\nGiB: the largest GPU's memory, reserve included; net: T, C, E = the TP, CP, EP group spans nodes\n"
                   "(priced at the network's bandwidth).\n");
            printf("\nbest: %s pp=%d tp=%d cp=%d ep=%d dp=%d v=%d mbs=%d\n", b->schedule, b->pp, b->tp, b->cp, b->ep, b->dp,
                   b->v, b->mbs);
            printf("  memory of its largest GPU (GiB): weights %.1f + grads %.1f + optimizer %.1f + activations %.1f + "
                   "logits %.1f + reserve %.1f = %.1f of %.0f\n", m->weights / 1073741824.0, m->grads / 1073741824.0,
                   m->optimizer / 1073741824.0, m->activations / 1073741824.0, m->logits / 1073741824.0,
                   m->reserve / 1073741824.0, m->total / 1073741824.0, g.mem_bytes / 1073741824.0);
            printf("  step %.3f s: compute %.3f + bubble %.3f + exposed communication TP %.3f, CP %.3f, EP %.3f, PP %.3f, "
                   "DP %.3f\n", b->step_time, t->compute, t->bubble, t->tp, t->cp, t->ep, t->pp, t->dp);
            printf("  %.0f tokens/s per GPU, %.0f TFLOP/s per GPU, MFU %.1f%%\n", b->tokens_per_gpu, b->tflops_per_gpu / 1e12,
                   100 * b->mfu);
            if (train_tokens > 0) {
                double secs = train_tokens / ((double)r.global_batch * r.model.seq) * b->step_time;
                printf("  %.3g tokens in %.1f days (%.0f steps, %.3g GPU-hours)\n", train_tokens, secs / 86400,
                       ceil(train_tokens / ((double)r.global_batch * r.model.seq)), secs * r.gpus / 3600);
            }
        }
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
    if (!fits) { /* exit 1: a script can tell; stderr says what would fit */
        fflush(stdout);
        plan_nearest_fix(&r);
        return 1;
    }
    return 0;
}

#ifndef PPSCHED_NO_MAIN
/* Long work: progress on stderr when it is a terminal (never into the
   output), and Ctrl-C stops the build cleanly. The SIGINT handler only sets
   a flag; the library asks the callback whether to go on (it keeps no
   globals of its own). */
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

static int run(int argc, char **argv);
int main(int argc, char **argv) {
    pp_cli_init();
    return pp_cli_finish("ppsched", run(argc, argv)); /* a failed write of the output: one line, exit 1 */
}

static int run(int argc, char **argv) {
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
    {   /* flushed before the check, so a broken schedule can still be looked at */
        int e = pp_cli_flushed(stdout);
        if (e) {
            pp_sched_free(s);
            clearerr(stdout); /* said here, with its reason, and not again at exit */
            return pp_cli_write_error("ppsched", "standard output", e > 0 ? e : 0);
        }
    }

    /* Printed first so a broken schedule can still be looked at. */
    st = pp_sched_validate(s, err);
    pp_sched_free(s);
    if (st != PP_OK) {
        fprintf(stderr, "ppsched: schedule does not validate: %s\n", err);
        return 1;
    }
    return 0; /* main checks that standard output was written */
}
#endif
