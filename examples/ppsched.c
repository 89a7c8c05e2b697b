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

   Prints:  --list: one line per built-in schedule, name and description.
            Otherwise the schedule's timeline (one row per device, as in the
            paper's figures, coloured when stdout is a terminal) or one JSON
            object (see README.md for its keys), a PyTorch schedule CSV (and,
            on stderr, the torchtitan setting that matches its placement), an
            SVG picture or a Chrome trace. analyze reads a PyTorch CSV and
            prints the schedule it describes with real times; gallery writes
            one SVG per built-in schedule and an index.html. plan (pp_plan.h)
            ranks layouts x microbatch sizes x schedules for a model on a
            cluster: the top K, then each schedule's best or why none fits.
   Exit:    0 ok; 1 the library failed to build a schedule or built one that
            does not validate; 2 bad command line (usage goes to stderr). */
#define _POSIX_C_SOURCE 200809L /* isatty under -std=c99 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define PP_SCHED_IMPLEMENTATION
#include "../pp_sched.h"
#define PP_PLAN_IMPLEMENTATION
#include "../pp_plan.h"

static const char *usage_text =
    "usage: ppsched -s NAME -d D -n N [options]\n"
    "       ppsched sweep -s v-auto|zb-auto -d D -n N --mem-from A --mem-to B [--mem-step S] [options]\n"
    "       ppsched best --mem-limit X -d D -n N [options]\n"
    "       ppsched analyze FILE.csv [--times F,B,W[,COMM]] [options]\n"
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
    "                           (default 1,1,1,0); COMM is added on every\n"
    "                           dependency that crosses devices\n"
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
    "                           sweep: the limits to try (step default 0.5)\n"
    "      --no-color           no ANSI colours (default: colour when stdout is a\n"
    "                           terminal and NO_COLOR is not set)\n"
    "      --list               list the built-in schedules and exit\n"
    "  -h, --help               show this help and exit\n"
    "\n"
    "analyze reads a PyTorch schedule CSV (one row per rank, cells like 3F1, 3I1,\n"
    "3W1, 3B1), checks it, squeezes it with the given times and prints it.\n"
    "\n"
    "exit status: 0 ok, 1 schedule failed to build or validate, 2 bad arguments\n";

/* One line saying what was wrong, then the usage, all on stderr. */
static int usage_error(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "ppsched: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n\n%s", usage_text);
    return 2;
}

/* arg is the short name (may be NULL) or the long name of an option. */
static int is_option(const char *arg, const char *shortname, const char *longname) {
    return (shortname && strcmp(arg, shortname) == 0) || strcmp(arg, longname) == 0;
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

/* "F,B,W" or "F,B,W,COMM". */
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
    if (count < 3) return 0;
    t->f = v[0];
    t->b = v[1];
    t->w = v[2];
    t->comm = v[3];
    return 1;
}

static void list_schedules(void) {
    int i, width = 0;
    for (i = 0; i < pp_sched_count(); i++) {
        int len = (int)strlen(pp_sched_info_at(i)->name);
        if (len > width) width = len;
    }
    for (i = 0; i < pp_sched_count(); i++) {
        const pp_sched_info *info = pp_sched_info_at(i);
        printf("%-*s  %s\n", width, info->name, info->description);
    }
}

static double max_peak(const pp_schedule *s) {
    double m = 0;
    int i;
    for (i = 0; i < s->devices; i++)
        if (s->peak_memory[i] > m) m = s->peak_memory[i];
    return m;
}

/* ppsched sweep: one line per memory limit, the trade-off of an adaptive
   schedule between activation memory and makespan. */
static int run_sweep(pp_config cfg, double from, double to, double step, int json) {
    double lim;
    int first = 1, k, count;
    char err[PP_ERR_LEN];
    if (!(from > 0) || to < from || !(step > 0)) return usage_error("sweep needs 0 < --mem-from <= --mem-to and --mem-step > 0");
    count = (int)((to - from) / step + 1e-9) + 1;
    if (count > 10000) return usage_error("sweep: %d limits is too many (at most 10000)", count);
    if (json) printf("{\"schedule\": \"%s\", \"devices\": %d, \"microbatches\": %d, \"sweep\": [\n", cfg.schedule, cfg.devices, cfg.microbatches);
    else printf("%-10s %12s %10s %10s\n", "mem_limit", "makespan", "bubble", "peak");
    for (k = 0; k < count; k++) {
        pp_schedule *s = NULL;
        pp_status st;
        lim = from + k * step;
        cfg.mem_limit = lim;
        st = pp_sched_build(&cfg, &s, err);
        if (st != PP_OK) {
            if (st != PP_ERR_INVALID_ARG || !strstr(err, "no ")) { fprintf(stderr, "ppsched: %s\n", err); return st == PP_ERR_INVALID_ARG ? 2 : 1; }
            if (json) printf("%s  {\"mem_limit\": %g, \"fits\": false}", first ? "" : ",\n", lim);
            else printf("%-10g %12s %10s %10s\n", lim, "-", "-", "does not fit");
        } else {
            if (json) printf("%s  {\"mem_limit\": %g, \"fits\": true, \"makespan\": %.12g, \"bubble_rate\": %.12g, \"peak_memory\": %.12g}",
                             first ? "" : ",\n", lim, s->makespan, s->bubble_rate, max_peak(s));
            else printf("%-10g %12g %9.2f%% %10g\n", lim, s->makespan, 100 * s->bubble_rate, max_peak(s));
            pp_sched_free(s);
        }
        first = 0;
    }
    if (json) printf("\n]}\n");
    return 0;
}

/* ppsched best: every built-in schedule on these devices and times, ranked
   by makespan; those above the memory limit are marked and listed last. */
static int run_best(pp_config cfg, int json) {
    typedef struct row { const char *name; double mk, bubble, peak; int fits; } row;
    row rows[64];
    int i, j, nr = 0;
    char err[PP_ERR_LEN];
    double limit = cfg.mem_limit;
    if (!(limit > 0)) return usage_error("best needs --mem-limit X (units; 1F1B's device 0 holds d)");
    for (i = 0; i < pp_sched_count() && nr < 64; i++) {
        pp_config c = cfg;
        pp_schedule *s = NULL;
        c.schedule = pp_sched_info_at(i)->name;
        if (pp_sched_build(&c, &s, err) != PP_OK) continue; /* not for these d, n (or nothing fits the limit) */
        rows[nr].name = c.schedule;
        rows[nr].mk = s->makespan;
        rows[nr].bubble = s->bubble_rate;
        rows[nr].peak = max_peak(s);
        rows[nr].fits = rows[nr].peak <= limit + 1e-9;
        nr++;
        pp_sched_free(s);
    }
    for (i = 1; i < nr; i++) /* insertion sort: fitting first, then by makespan */
        for (j = i; j > 0; j--) {
            row *a = &rows[j - 1], *b = &rows[j];
            if (a->fits > b->fits || (a->fits == b->fits && a->mk <= b->mk)) break;
            { row t = *a; *a = *b; *b = t; }
        }
    if (json) {
        printf("{\"mem_limit\": %g, \"devices\": %d, \"microbatches\": %d, \"ranking\": [\n", limit, cfg.devices, cfg.microbatches);
        for (i = 0; i < nr; i++)
            printf("  {\"schedule\": \"%s\", \"fits\": %s, \"makespan\": %.12g, \"bubble_rate\": %.12g, \"peak_memory\": %.12g}%s\n",
                   rows[i].name, rows[i].fits ? "true" : "false", rows[i].mk, rows[i].bubble, rows[i].peak, i + 1 < nr ? "," : "");
        printf("]}\n");
    } else {
        printf("memory limit %g units, d=%d, n=%d\n", limit, cfg.devices, cfg.microbatches);
        printf("%-4s %-20s %10s %9s %8s\n", "rank", "schedule", "makespan", "bubble", "peak");
        for (i = 0; i < nr; i++) {
            char rank[16];
            if (rows[i].fits) snprintf(rank, sizeof rank, "%d", i + 1);
            else snprintf(rank, sizeof rank, "-");
            printf("%-4s %-20s %10g %8.2f%% %8g%s\n", rank, rows[i].name, rows[i].mk, 100 * rows[i].bubble,
                   rows[i].peak, rows[i].fits ? "" : "  does not fit");
        }
    }
    return nr ? 0 : 1;
}

enum { FMT_ASCII, FMT_JSON, FMT_CSV, FMT_SVG, FMT_TRACE, FMT_PROGRAM };

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
        return st == PP_ERR_INVALID_ARG ? 2 : 1; /* the CSV of a two-copy schedule */
    }
    return 0;
}

/* Reads a whole file into memory (caller frees); NULL with a message on failure. */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
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
                fclose(f);
                return NULL;
            }
            cap = cap ? cap * 2 : 65536;
            nb = (char *)realloc(buf, cap);
            if (!nb) {
                fprintf(stderr, "ppsched: out of memory reading '%s'\n", path);
                free(buf);
                fclose(f);
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
        fclose(f);
        return NULL;
    }
    fclose(f);
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
    int i, failed = 0;
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
        cfg.schedule = info->name;
        if (pp_sched_build(&cfg, &s, err) != PP_OK) {
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
            if (!svg || pp_sched_print_svg(svg, s, PP_SVG_MEMORY, err) != PP_OK || fclose(svg) != 0) {
                fprintf(stderr, "ppsched: cannot write '%s'\n", path);
                failed = 1;
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
    if (!failed) printf("ppsched: wrote %d SVGs and index.html to %s\n", pp_sched_count(), dir);
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

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        putchar(*s);
    }
    putchar('"');
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

int main(int argc, char **argv) {
    pp_config cfg;
    pp_schedule *s = NULL;
    pp_status st;
    char err[PP_ERR_LEN];
    int have_devices = 0, have_microbatches = 0, want_list = 0, format = FMT_ASCII, color = -1, svg_flags = 0;
    int want_growth = 0;
    int i, first = 1;
    enum { MODE_BUILD, MODE_ANALYZE, MODE_GALLERY, MODE_SWEEP, MODE_BEST } mode = MODE_BUILD;
    const char *file = NULL, *outdir = NULL;
    double mem_from = 0, mem_to = 0, mem_step = 0.5;

    memset(&cfg, 0, sizeof cfg); /* zero fields = the library's defaults */
    if (argc > 1 && strcmp(argv[1], "plan") == 0) return plan_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "analyze") == 0) { mode = MODE_ANALYZE; first = 2; }
    if (argc > 1 && strcmp(argv[1], "gallery") == 0) { mode = MODE_GALLERY; first = 2; }
    if (argc > 1 && strcmp(argv[1], "sweep") == 0) { mode = MODE_SWEEP; first = 2; }
    if (argc > 1 && strcmp(argv[1], "best") == 0) { mode = MODE_BEST; first = 2; }
    for (i = first; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = NULL;
        const char *eq = NULL;
        char flag[64];
        int takes_value;

        /* --name=value is the same as --name value */
        if (strncmp(arg, "--", 2) == 0) eq = strchr(arg, '=');
        if (eq) {
            size_t len = (size_t)(eq - arg);
            if (len >= sizeof flag) return usage_error("unknown option '%s'", argv[i]);
            memcpy(flag, arg, len);
            flag[len] = '\0';
            arg = flag;
            value = eq + 1;
        }
#define IS(shortname, longname) is_option(arg, shortname, longname)
        takes_value = IS("-s", "--schedule") || IS("-d", "--devices") || IS("-n", "--microbatches") ||
                      IS("-v", "--chunks") || IS(NULL, "--times") || IS(NULL, "--format") ||
                      IS(NULL, "--recompute-input") || IS("-o", "--output") || IS(NULL, "--mem-limit") ||
                      IS(NULL, "--mem-from") || IS(NULL, "--mem-to") || IS(NULL, "--mem-step");
        if (takes_value && !value) {
            if (i + 1 >= argc) return usage_error("%s needs a value", arg);
            value = argv[++i];
        } else if (!takes_value && value) {
            return usage_error("%s takes no value, got '%s'", arg, value);
        }

        if (IS("-h", "--help")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (IS(NULL, "--list")) {
            want_list = 1;
        } else if (IS("-s", "--schedule")) {
            if (value[0] == '\0') return usage_error("%s needs a schedule name, got ''", arg);
            cfg.schedule = value;
        } else if (IS("-d", "--devices")) {
            if (!parse_count(value, &cfg.devices))
                return usage_error("%s needs a whole number >= 1, got '%s'", arg, value);
            have_devices = 1;
        } else if (IS("-n", "--microbatches")) {
            if (!parse_count(value, &cfg.microbatches))
                return usage_error("%s needs a whole number >= 1, got '%s'", arg, value);
            have_microbatches = 1;
        } else if (IS("-v", "--chunks")) {
            if (!parse_count(value, &cfg.chunks))
                return usage_error("%s needs a whole number >= 0 (0 = the schedule's own), got '%s'", arg, value);
        } else if (IS(NULL, "--times")) {
            if (!parse_times(value, &cfg.times))
                return usage_error("%s needs F,B,W or F,B,W,COMM (finite numbers >= 0), got '%s'", arg, value);
        } else if (IS(NULL, "--format")) {
            if (strcmp(value, "ascii") == 0) format = FMT_ASCII;
            else if (strcmp(value, "json") == 0) format = FMT_JSON;
            else if (strcmp(value, "csv") == 0) format = FMT_CSV;
            else if (strcmp(value, "svg") == 0) format = FMT_SVG;
            else if (strcmp(value, "trace") == 0) format = FMT_TRACE;
            else if (strcmp(value, "program") == 0) format = FMT_PROGRAM;
            else return usage_error("%s must be ascii, json, csv, svg, trace or program, got '%s'", arg, value);
        } else if (IS(NULL, "--svg-memory")) {
            svg_flags |= PP_SVG_MEMORY;
        } else if (IS("-o", "--output")) {
            if (value[0] == '\0') return usage_error("%s needs a directory, got ''", arg);
            outdir = value;
        } else if (IS(NULL, "--recompute-input")) {
            if (!parse_real(value, &cfg.recompute_input))
                return usage_error("%s needs a finite number >= 0, got '%s'", arg, value);
        } else if (IS(NULL, "--mem-limit")) {
            if (!parse_real(value, &cfg.mem_limit) || cfg.mem_limit <= 0)
                return usage_error("%s needs a number of units > 0, got '%s'", arg, value);
        } else if (IS(NULL, "--mem-from") || IS(NULL, "--mem-to") || IS(NULL, "--mem-step")) {
            double *dst = IS(NULL, "--mem-from") ? &mem_from : IS(NULL, "--mem-to") ? &mem_to : &mem_step;
            if (!parse_real(value, dst) || *dst <= 0) return usage_error("%s needs a number of units > 0, got '%s'", arg, value);
        } else if (IS(NULL, "--no-reorder")) {
            cfg.no_reorder = 1;
        } else if (IS(NULL, "--bubble-growth")) {
            want_growth = 1;
        } else if (IS(NULL, "--no-color")) {
            color = 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return usage_error("unknown option '%s'", argv[i]);
        } else if (mode == MODE_ANALYZE && !file) {
            file = argv[i];
        } else {
            return usage_error("unexpected argument '%s'", argv[i]);
        }
#undef IS
    }

    if (want_list) {
        list_schedules();
        return 0;
    }
    if (mode == MODE_GALLERY) {
        if (!have_devices) return usage_error("gallery: missing -d D (number of devices)");
        if (!have_microbatches) return usage_error("gallery: missing -n N (number of microbatches)");
        if (!outdir) return usage_error("gallery: missing -o DIR");
        return gallery(&cfg, outdir);
    }
    if (mode == MODE_ANALYZE) {
        size_t len = 0;
        char *text;
        if (!file) return usage_error("analyze: missing FILE.csv");
        if (cfg.schedule || have_devices || have_microbatches)
            return usage_error("analyze takes its schedule, devices and microbatches from the file; drop -s, -d, -n");
        text = read_file(file, &len);
        if (!text) return 1;
        st = pp_sched_from_csv(text, len, &cfg, &s, err);
        free(text);
        if (st != PP_OK) {
            fprintf(stderr, "ppsched: %s: %s\n", file, err);
            return st == PP_ERR_OUT_OF_MEMORY ? 1 : 1;
        }
        {   /* name it after the file, for the title of a picture */
            const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
            const char *tt = pp_sched_torchtitan_schedule(s);
            snprintf(s->name, sizeof s->name, "%s", base);
            fprintf(stderr, "ppsched: %s: %d ranks, %d stages (%s placement%s%s), %d microbatches, %s\n", file,
                    s->devices, s->stages, pp_placement_name(s->placement), tt ? ", torchtitan " : "", tt ? tt : "",
                    s->microbatches, s->split_backward ? "backward split into I and W" : "full backward B");
        }
    } else {
        if (mode == MODE_BEST) {
            if (!have_devices) return usage_error("missing -d D (number of devices)");
            if (!have_microbatches) return usage_error("missing -n N (number of microbatches)");
            return run_best(cfg, format == FMT_JSON);
        }
        if (!cfg.schedule) return usage_error("missing -s NAME (see --list)");
        if (!have_devices) return usage_error("missing -d D (number of devices)");
        if (!have_microbatches) return usage_error("missing -n N (number of microbatches)");
        if (mode == MODE_SWEEP) return run_sweep(cfg, mem_from, mem_to, mem_step, format == FMT_JSON);

        st = pp_sched_build(&cfg, &s, err);
        if (st != PP_OK) {
            fprintf(stderr, "ppsched: %s\n", err[0] ? err : pp_status_string(st));
            return (st == PP_ERR_INVALID_ARG || st == PP_ERR_UNKNOWN_SCHEDULE) ? 2 : 1;
        }
        if ((format == FMT_ASCII || format == FMT_JSON) && (want_growth || !pp_sched_find(s->name)->adaptive)) {
            /* O(p) or O(n): two more builds, at 3d and 6d microbatches; for
               the adaptive schedules two more searches, so only when asked
               (the JSON key is null then) */
            int grows;
            if (pp_sched_bubble_growth(&cfg, &grows, NULL) == PP_OK) s->bubble_growth = grows;
        }
    }

    {
        int rc = print_schedule(s, format, color, svg_flags); /* 2: this format cannot express s */
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
