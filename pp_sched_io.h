/* pp_sched_io.h - v0.7.0 - PyTorch schedule CSV in and out, SVG pictures and Chrome traces for pp_sched.h - MIT licence (see end of file)

   A companion of pp_sched.h: writes a schedule as PyTorch's "compute_only"
   schedule CSV, reads one back (checked, then squeezed with your times),
   draws it as SVG and writes it as a Chrome trace. C99, libc only. It uses
   pp_sched.h's public API only (as pp_plan.h does): an engine that builds
   and runs schedules never needs this file.

   Do this:
       #define PP_SCHED_IO_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the
   implementation. pp_sched.h's implementation must be in the program too
   (PP_SCHED_IMPLEMENTATION, in the same file or another):
       #define PP_SCHED_IMPLEMENTATION
       #include "pp_sched.h"
       #define PP_SCHED_IO_IMPLEMENTATION
       #include "pp_sched_io.h"
   Every other file just includes "pp_sched_io.h" (which includes "pp_sched.h").

CONTENTS
   QUICK START            a complete program and what it prints
   API                    one line per function
   CONFIGURATION MACROS, ERRORS, MEMORY, THREADS, DOES NOT
   PYTORCH CSV, PICTURES  the formats

QUICK START
   #include <stdio.h>
   #define PP_SCHED_IMPLEMENTATION
   #include "pp_sched.h"
   #define PP_SCHED_IO_IMPLEMENTATION
   #include "pp_sched_io.h"

   int main(void) {
       pp_config cfg = {0};
       char err[PP_ERR_LEN];
       pp_schedule *s = NULL, *back = NULL;
       static const char csv[] = "0F0,0F1,,0B0,0B1\n,1F0,1B0,1F1,1B1\n"; // 1F1B on 2 ranks, 2 microbatches
       cfg.schedule = "1f1b";
       cfg.devices = 2;
       cfg.microbatches = 3;
       if (pp_sched_build(&cfg, &s, err) != PP_OK || pp_sched_print_csv(stdout, s, err) != PP_OK) { fprintf(stderr, "%s\n", err); return 1; }
       cfg.times.f = 1; cfg.times.b = 2;                // re-time a PyTorch CSV: F = 1, B (full backward) = 2
       if (pp_sched_from_csv(csv, sizeof csv - 1, &cfg, &back, err) != PP_OK) { fprintf(stderr, "%s\n", err); return 1; }
       printf("%s: d=%d n=%d makespan %g, torchtitan %s\n", back->name, back->devices, back->microbatches,
              back->makespan, pp_sched_torchtitan_schedule(back));
       pp_sched_free(back);
       pp_sched_free(s);
       return 0;
   }

   Output:
       0F0,0F1,,0B0,0F2,0B1,,0B2
       ,1F0,1B0,1F1,1B1,1F2,1B2,
       pytorch-csv: d=2 n=2 makespan 9, torchtitan 1F1B

API (one line each; status-returning calls fill err[PP_ERR_LEN] on failure)
   pp_sched_print_csv(f, s, err)       PyTorch compute_only schedule CSV, time-aligned (one route only)
   pp_sched_from_csv(text, len, cfg, &s, err)  parse a PyTorch CSV from memory, check it, squeeze it with
                                       cfg's times (cfg may be NULL: unit times)
   pp_sched_torchtitan_schedule(s)     the torchtitan pipeline_parallel_schedule giving s's placement, or NULL
   pp_sched_print_svg(f, s, flags, err)  SVG picture, time to scale (flags: PP_SVG_MEMORY)
   pp_sched_print_trace(f, s, err)     Chrome trace event JSON (chrome://tracing, Perfetto)

CONFIGURATION MACROS
   PP_SCHED_IO_IMPLEMENTATION  emit the implementation in this translation unit
   PP_SCHED_IO_STATIC          make every function static
   PP_SCHED_IO_API             decoration of public functions (default: PP_SCHED_API)
   PP_SCHED_NO_STDIO           (pp_sched.h's) drops the three FILE* printers; the CSV
                               reader stays (it reads memory)

ERRORS, MEMORY, THREADS
   As pp_sched.h: every fallible call returns pp_status and fills the
   caller's err with what was wrong and what would be right; each call
   first checks the schedule it reads with pp_sched_check_shape. The
   reader allocates through cfg->allocator (zero = malloc/free), the CSV
   writer through s->allocator. No globals; never exits.

DOES NOT
   write or read PyTorch's compute_comms CSV (the lowering, pp_sched_lower,
   places the communication), nor write a schedule with two model copies
   (dualpipe) as CSV: PyTorch's has one route.

PYTORCH CSV (pp_sched_print_csv, pp_sched_from_csv)
   The "compute_only" schedule CSV of PyTorch's PipelineScheduleMulti and
   torchtitan: one row per rank, cells {stage}{F|I|W|B}{microbatch}, time-
   aligned. What was checked in PyTorch's source, and where the reader is
   stricter than PyTorch: docs/pytorch-csv.md. Every refusal names the row,
   the column and what was expected. The reader checks the file with the
   dependency rule of pp_pass_input.

PICTURES (pp_sched_print_svg, pp_sched_print_trace)
   SVG: one row per device, x = real time to scale, F blue, B green, W
   orange, BW (combined backward) purple; dark shade = even chunk, light =
   odd chunk; grey = idle; the microbatch number in each pass when it fits;
   title with name, d, n, v, placement and times; footer with makespan,
   bubble rate, peak memory per device (and the Eq. 1 bound when the
   schedule was built from a block). PP_SVG_MEMORY adds each device's
   memory over time (F allocates at its start, W/BW frees at its end).
   Chrome trace: {"traceEvents": [...]}, one process per device (named,
   sorted), one complete event ("ph": "X") per pass, named like "F3" with
   args stage, microbatch, chunk; ts/dur in microseconds with one time unit
   of ours = 1000 (1 ms) so chrome://tracing and Perfetto show sane scales.
*/
#ifndef PP_SCHED_IO_H
#define PP_SCHED_IO_H

#include "pp_sched.h"

#ifndef PP_SCHED_IO_API
#ifdef PP_SCHED_IO_STATIC
#define PP_SCHED_IO_API static
#else
#define PP_SCHED_IO_API PP_SCHED_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Import a PyTorch "compute_only" schedule CSV from memory (no stdio needed). */
PP_SCHED_IO_API pp_status pp_sched_from_csv(const char *text, size_t len, const pp_config *cfg, pp_schedule **out,
                                            char *err);
PP_SCHED_IO_API const char *pp_sched_torchtitan_schedule(const pp_schedule *s);
#ifndef PP_SCHED_NO_STDIO
#define PP_SVG_MEMORY 1 /* pp_sched_print_svg flag: memory curve per device under the timeline */
PP_SCHED_IO_API pp_status pp_sched_print_csv(FILE *f, const pp_schedule *s, char *err);
PP_SCHED_IO_API pp_status pp_sched_print_svg(FILE *f, const pp_schedule *s, int flags, char *err);
PP_SCHED_IO_API pp_status pp_sched_print_trace(FILE *f, const pp_schedule *s, char *err);
#endif

#ifdef __cplusplus
}
#endif
#endif /* PP_SCHED_IO_H */

/* ======================================================================== */
/*                              IMPLEMENTATION                               */
/* ======================================================================== */
#ifdef PP_SCHED_IO_IMPLEMENTATION
#ifndef PP__IO_IMPLEMENTATION_INCLUDED
#define PP__IO_IMPLEMENTATION_INCLUDED

#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h> /* vsnprintf, snprintf for messages, even with PP_SCHED_NO_STDIO */

#ifdef PP_SCHED_IO_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define PP__IO_DEF static __attribute__((unused))
#else
#define PP__IO_DEF static
#endif
#else
#define PP__IO_DEF
#endif

/* ---- small helpers (this file's own: it sees pp_sched.h's public API only) */

static void pp__io_err(char *err, const char *fmt, ...) {
    va_list ap;
    if (!err) return;
    va_start(ap, fmt);
    vsnprintf(err, PP_ERR_LEN, fmt, ap);
    va_end(ap);
}

static void *pp__io_default_alloc(size_t n, void *u) { (void)u; return malloc(n); }
static void pp__io_default_free(void *p, void *u) { (void)u; free(p); }

/* the caller's allocator, or malloc/free where it is zero */
static pp_allocator pp__io_allocator(const pp_allocator *a) {
    pp_allocator r;
    if (a && a->alloc && a->free) return *a;
    r.alloc = pp__io_default_alloc;
    r.free = pp__io_default_free;
    r.user = NULL;
    return r;
}

static void *pp__io_malloc(const pp_allocator *a, size_t n) { return a->alloc(n ? n : 1, a->user); }
static void pp__io_mfree(const pp_allocator *a, void *p) { if (p) a->free(p, a->user); }

/* size of count elements of size bytes, 0 on overflow */
static size_t pp__io_size(size_t count, size_t size) {
    if (size && count > ((size_t)-1) / size) return 0;
    return count * size;
}

/* index of pass (kind, stage, microbatch) in [0, 4*S*n) */
static int pp__io_key(int S, int n, pp_kind k, int s, int j) { return ((int)k * S + s) * n + j; }

#ifndef PP_SCHED_NO_STDIO
static double pp__io_max(double a, double b) { return a > b ? a : b; }
static double pp__io_abs(double a) { return a < 0 ? -a : a; }

static void pp__io_json_str(FILE *f, const char *x) {
    fputc('"', f);
    for (; *x; x++) {
        unsigned char ch = (unsigned char)*x;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}
#endif

/* ---- PyTorch CSV in and out, SVG, Chrome trace -------------------------- */
/* The CSV format is described (with where it was checked) under PYTORCH CSV
   in the docs block. The parser works on a memory buffer and needs no stdio;
   the printers below it do. */

/* PyTorch's letter for a pass kind: our B (input) is its I, our BW its B. */
static char pp__io_csv_letter(pp_kind k) { return k == PP_F ? 'F' : k == PP_B ? 'I' : k == PP_W ? 'W' : 'B'; }

PP__IO_DEF const char *pp_sched_torchtitan_schedule(const pp_schedule *s) {
    int i, looped = 1, vshape = 1;
    if (pp_sched_check_shape(s, "pp_sched_torchtitan_schedule", 0, NULL) != PP_OK || s->copies == 2) return NULL;
    for (i = 0; i < s->stages; i++) {
        if (s->stage_device[i] != i % s->devices) looped = 0;
        if (s->stages != 2 * s->devices || s->stage_device[i] != (i < s->devices ? i : 2 * s->devices - 1 - i) /* V-shape placement */) vshape = 0;
    }
    if (looped && s->stages == s->devices) return "1F1B";
    if (looped) return "Interleaved1F1B";
    if (vshape) return "ZBVZeroBubble";
    return NULL;
}

/* One parsed cell: kind is PP_F, PP_B (PyTorch I), PP_W or PP_BW (PyTorch B). */
typedef struct pp__io_cell {
    int row, col, stage, mb;
    pp_kind kind;
} pp__io_cell;

typedef struct pp__io_csv {
    pp_allocator al;
    pp__io_cell *cells;
    int count, cap;
    char *err;
} pp__io_csv;

#define PP__IO_CSV_MAX_INDEX 1048575 /* largest stage or microbatch index read */

/* The cell's text for a message: at most 24 bytes, unprintable bytes as '?'. */
static void pp__io_csv_quote(char *buf, const char *x, size_t len) {
    size_t i, m = len > 24 ? 24 : len;
    for (i = 0; i < m; i++) buf[i] = (x[i] >= 0x20 && x[i] < 0x7f && x[i] != '\'') ? x[i] : '?';
    if (len > 24) { buf[m++] = '.'; buf[m++] = '.'; buf[m++] = '.'; }
    buf[m] = 0;
}

static pp_status pp__io_csv_push(pp__io_csv *c, int row, int col, int stage, pp_kind kind, int mb) {
    if (c->count == c->cap) {
        int cap = c->cap ? c->cap : 64;
        pp__io_cell *nc;
        if (cap > INT_MAX / 2) { pp__io_err(c->err, "too many cells in the file"); return PP_ERR_OVERFLOW; }
        cap *= c->cap ? 2 : 1;
        nc = (pp__io_cell *)pp__io_malloc(&c->al, pp__io_size((size_t)cap, sizeof(pp__io_cell)));
        if (!nc) { pp__io_err(c->err, "out of memory reading the CSV (%d cells)", c->count); return PP_ERR_OUT_OF_MEMORY; }
        if (c->count) memcpy(nc, c->cells, (size_t)c->count * sizeof(pp__io_cell));
        pp__io_mfree(&c->al, c->cells);
        c->cells = nc;
        c->cap = cap;
    }
    c->cells[c->count].row = row;
    c->cells[c->count].col = col;
    c->cells[c->count].stage = stage;
    c->cells[c->count].kind = kind;
    c->cells[c->count].mb = mb;
    c->count++;
    return PP_OK;
}

/* Parses one compute action "{stage}{F|I|W|B}{microbatch}" (the whole of x). */
static pp_status pp__io_csv_action(pp__io_csv *c, int row, int col, const char *x, size_t len, const char *cell,
                                size_t cell_len) {
    static const char *comms[] = {"UNSHARD", "RESHARD", "REDUCE_GRAD", "SEND_F", "RECV_F", "SEND_B", "RECV_B",
                                  "OVERLAP_F_B"};
    char q[32];
    size_t i = 0, k;
    long stage = 0, mb = 0;
    pp_kind kind;
    pp__io_csv_quote(q, cell, cell_len);
    while (i < len && x[i] >= '0' && x[i] <= '9') {
        stage = stage * 10 + (x[i] - '0');
        if (stage > PP__IO_CSV_MAX_INDEX) {
            pp__io_err(c->err, "row %d (rank %d), column %d: '%s' has a stage index above %d", row + 1, row, col + 1, q,
                    PP__IO_CSV_MAX_INDEX);
            return PP_ERR_INVALID_ARG;
        }
        i++;
    }
    if (i == 0) {
        pp__io_err(c->err, "row %d (rank %d), column %d: '%s' does not parse; expected an empty cell or "
                        "{stage}{F|I|W|B}{microbatch} such as 3F1 (no header row, no rank column)", row + 1, row, col + 1, q);
        return PP_ERR_INVALID_ARG;
    }
    for (k = 0; k < sizeof comms / sizeof comms[0]; k++) {
        size_t m = strlen(comms[k]);
        if (len - i >= m && memcmp(x + i, comms[k], m) == 0) {
            pp__io_err(c->err, "row %d (rank %d), column %d: '%s' is a communication action (PyTorch's compute_comms "
                            "format); expected a compute_only file: F, I, W or B cells", row + 1, row, col + 1, q);
            return PP_ERR_INVALID_ARG;
        }
    }
    if (i >= len || (x[i] != 'F' && x[i] != 'I' && x[i] != 'W' && x[i] != 'B')) {
        pp__io_err(c->err, "row %d (rank %d), column %d: '%s' does not parse; expected F, I, W or B after the stage "
                        "index, as in %ldF0", row + 1, row, col + 1, q, stage);
        return PP_ERR_INVALID_ARG;
    }
    kind = x[i] == 'F' ? PP_F : x[i] == 'I' ? PP_B : x[i] == 'W' ? PP_W : PP_BW;
    i++;
    if (i >= len || x[i] < '0' || x[i] > '9') {
        pp__io_err(c->err, "row %d (rank %d), column %d: '%s' has no microbatch index; expected digits after the "
                        "action letter, as in %ld%c0", row + 1, row, col + 1, q, stage, pp__io_csv_letter(kind));
        return PP_ERR_INVALID_ARG;
    }
    while (i < len && x[i] >= '0' && x[i] <= '9') {
        mb = mb * 10 + (x[i] - '0');
        if (mb > PP__IO_CSV_MAX_INDEX) {
            pp__io_err(c->err, "row %d (rank %d), column %d: '%s' has a microbatch index above %d", row + 1, row,
                    col + 1, q, PP__IO_CSV_MAX_INDEX);
            return PP_ERR_INVALID_ARG;
        }
        i++;
    }
    if (i != len) {
        pp__io_err(c->err, "row %d (rank %d), column %d: '%s' has '%c' after the microbatch index; expected the cell "
                        "to end there", row + 1, row, col + 1, q, (x[i] >= 0x20 && x[i] < 0x7f) ? x[i] : '?');
        return PP_ERR_INVALID_ARG;
    }
    return pp__io_csv_push(c, row, col, (int)stage, kind, (int)mb);
}

/* One cell, already trimmed and unquoted. Empty = idle. PyTorch's
   "(a;b)OVERLAP_F_B" cells (DualPipeV) are read as a then b. */
static pp_status pp__io_csv_cell(pp__io_csv *c, int row, int col, const char *x, size_t len) {
    if (len == 0) return PP_OK;
    if (x[0] == '(') {
        size_t close = 1, a;
        pp_status st;
        char q[32];
        while (close < len && x[close] != ')') close++;
        if (close == len || len - close - 1 != 11 || memcmp(x + close + 1, "OVERLAP_F_B", 11) != 0) {
            pp__io_csv_quote(q, x, len);
            pp__io_err(c->err, "row %d (rank %d), column %d: '%s' does not parse; a cell in parentheses must be "
                            "(action;action)OVERLAP_F_B", row + 1, row, col + 1, q);
            return PP_ERR_INVALID_ARG;
        }
        for (a = 1; a < close;) {
            size_t b = a;
            while (b < close && x[b] != ';') b++;
            while (a < b && (x[a] == ' ' || x[a] == '\t')) a++;
            {
                size_t e = b;
                while (e > a && (x[e - 1] == ' ' || x[e - 1] == '\t')) e--;
                st = pp__io_csv_action(c, row, col, x + a, e - a, x, len);
                if (st != PP_OK) return st;
            }
            a = b + 1;
        }
        return PP_OK;
    }
    return pp__io_csv_action(c, row, col, x, len, x, len);
}

/* Rows and cells -> c->cells; *rows gets the number of rows. */
static pp_status pp__io_csv_read(pp__io_csv *c, const char *t, size_t len, int *rows) {
    size_t pos = 0;
    int row = 0;
    pp_status st;
    if (len >= 3 && (unsigned char)t[0] == 0xEF && (unsigned char)t[1] == 0xBB && (unsigned char)t[2] == 0xBF) pos = 3;
    while (pos < len) {
        size_t end = pos, stop;
        int col = 0, cells_before = c->count;
        while (end < len && t[end] != '\n') end++;
        stop = end;
        if (stop > pos && t[stop - 1] == '\r') stop--;
        if (stop == pos) {
            pp__io_err(c->err, "row %d is blank; expected one row per rank with no blank lines (a blank line is a rank "
                            "with no passes to PyTorch's csv reader)", row + 1);
            return PP_ERR_INVALID_ARG;
        }
        if (row >= 65536) {
            pp__io_err(c->err, "row %d: more than 65536 rows; one row is one rank and at most 65536 are supported", row + 1);
            return PP_ERR_OVERFLOW;
        }
        while (pos <= stop) {
            size_t a = pos, b;
            while (a < stop && (t[a] == ' ' || t[a] == '\t')) a++;
            if (a < stop && t[a] == '"') {
                size_t q = a + 1;
                while (q < stop && t[q] != '"') q++;
                if (q == stop) {
                    pp__io_err(c->err, "row %d (rank %d), column %d: a quote is not closed on its line", row + 1, row, col + 1);
                    return PP_ERR_INVALID_ARG;
                }
                b = q + 1;
                while (b < stop && (t[b] == ' ' || t[b] == '\t')) b++;
                if (b < stop && t[b] != ',') {
                    pp__io_err(c->err, "row %d (rank %d), column %d: text after a closing quote; expected a comma",
                            row + 1, row, col + 1);
                    return PP_ERR_INVALID_ARG;
                }
                {
                    size_t x = a + 1, e = q;
                    while (x < e && (t[x] == ' ' || t[x] == '\t')) x++;
                    while (e > x && (t[e - 1] == ' ' || t[e - 1] == '\t')) e--;
                    st = pp__io_csv_cell(c, row, col, t + x, e - x);
                }
            } else {
                size_t e;
                b = a;
                while (b < stop && t[b] != ',') b++;
                e = b;
                while (e > a && (t[e - 1] == ' ' || t[e - 1] == '\t')) e--;
                st = pp__io_csv_cell(c, row, col, t + a, e - a);
            }
            if (st != PP_OK) return st;
            col++;
            pos = b + 1; /* past the comma; past stop ends the row */
        }
        if (c->count == cells_before) {
            pp__io_err(c->err, "row %d (rank %d) has no passes; expected every rank to run at least one stage", row + 1, row);
            return PP_ERR_INVALID_ARG;
        }
        row++;
        pos = end + 1;
    }
    if (row == 0) {
        pp__io_err(c->err, "the file is empty; expected one row per rank of {stage}{F|I|W|B}{microbatch} cells");
        return PP_ERR_INVALID_ARG;
    }
    *rows = row;
    return PP_OK;
}

/* The name of a parsed cell, as it is written in the file. */
static void pp__io_csv_name(char *buf, size_t size, const pp__io_cell *x) {
    snprintf(buf, size, "%d%c%d", x->stage, pp__io_csv_letter(x->kind), x->mb);
}

/* Stage placement from the rows: a stage lives on one rank (PyTorch's
   _validate_schedule checks this too), and every stage 0..S-1 is used. */
static pp_status pp__io_csv_place(pp__io_csv *c, int S, int *stage_rank, int *stage_first) {
    int i, s;
    pp__io_cell *cs = c->cells;
    char a[40];
    for (i = 0; i < S; i++) stage_rank[i] = -1;
    for (i = 0; i < c->count; i++) {
        int r = stage_rank[cs[i].stage];
        if (r < 0) { stage_rank[cs[i].stage] = cs[i].row; stage_first[cs[i].stage] = i; }
        else if (r != cs[i].row) {
            const pp__io_cell *f = &cs[stage_first[cs[i].stage]];
            pp__io_csv_name(a, sizeof a, &cs[i]);
            pp__io_err(c->err, "row %d (rank %d), column %d: %s puts stage %d on rank %d, but row %d, column %d put it "
                            "on rank %d; a stage lives on one rank", cs[i].row + 1, cs[i].row, cs[i].col + 1, a,
                    cs[i].stage, cs[i].row, f->row + 1, f->col + 1, f->row);
            return PP_ERR_INVALID_ARG;
        }
    }
    for (s = 0; s < S; s++)
        if (stage_rank[s] < 0) {
            pp__io_err(c->err, "stage %d appears in no row; the file uses stages up to %d, so expected every stage 0..%d",
                    s, S - 1, S - 1);
            return PP_ERR_INVALID_ARG;
        }
    return PP_OK;
}

/* A file with fewer than 2*S*n cells misses a pass; this names one while
   using memory in proportion to S + n only (not S*n: a two-cell file can
   name stage 10^6 and microbatch 10^6). */
static pp_status pp__io_csv_missing(pp__io_csv *c, int S, int n, const int *stage_rank) {
    pp_allocator *al = &c->al;
    int *cnt = (int *)pp__io_malloc(al, pp__io_size((size_t)S * 2, sizeof(int)));
    unsigned char *has = (unsigned char *)pp__io_malloc(al, (size_t)n);
    int i, s, j, back;
    if (!cnt || !has) {
        pp__io_mfree(al, cnt); pp__io_mfree(al, has);
        pp__io_err(c->err, "out of memory checking a CSV of %d stages and %d microbatches", S, n);
        return PP_ERR_OUT_OF_MEMORY;
    }
    memset(cnt, 0, (size_t)S * 2 * sizeof(int));
    for (i = 0; i < c->count; i++)
        if (c->cells[i].kind != PP_W) cnt[c->cells[i].stage * 2 + (c->cells[i].kind != PP_F)]++;
    for (s = 0; s < S; s++)
        for (back = 0; back < 2; back++)
            if (cnt[s * 2 + back] < n) {
                memset(has, 0, (size_t)n);
                for (i = 0; i < c->count; i++)
                    if (c->cells[i].stage == s && c->cells[i].kind != PP_W && (c->cells[i].kind != PP_F) == back)
                        has[c->cells[i].mb] = 1;
                for (j = 0; j < n && has[j]; j++) {}
                pp__io_err(c->err, "row %d (rank %d) has no %s for stage %d, microbatch %d; expected F, then B (or I "
                                "and W), for every stage and every microbatch 0..%d (the largest index in the file)",
                        stage_rank[s] + 1, stage_rank[s], back ? "B or I" : "F", s, j < n ? j : 0, n - 1);
                pp__io_mfree(al, cnt); pp__io_mfree(al, has);
                return PP_ERR_INVALID_ARG;
            }
    pp__io_mfree(al, cnt); pp__io_mfree(al, has);
    pp__io_err(c->err, "the file has %d passes, fewer than the %d that %d stages and %d microbatches need", c->count,
            2 * S * n, S, n);
    return PP_ERR_INVALID_ARG;
}

/* The checks of PyTorch's _validate_schedule, with row and column in every
   message: each pass once, F before I or B and I before W on a row, the
   counts F = n, B + I = n, W = I per stage. */
static pp_status pp__io_csv_check(pp__io_csv *c, int S, int n, const int *stage_rank, int *first) {
    int i, s, j;
    pp__io_cell *cs = c->cells;
    char a[40], b[40];
    /* first[]: index of the cell of (kind, stage, mb), -1 if none */
    for (i = 0; i < 4 * S * n; i++) first[i] = -1;
    for (i = 0; i < c->count; i++) {
        int k = pp__io_key(S, n, cs[i].kind, cs[i].stage, cs[i].mb);
        int other = cs[i].kind == PP_B ? pp__io_key(S, n, PP_BW, cs[i].stage, cs[i].mb)
                  : cs[i].kind == PP_BW ? pp__io_key(S, n, PP_B, cs[i].stage, cs[i].mb) : -1;
        if (first[k] >= 0 || (other >= 0 && first[other] >= 0)) {
            const pp__io_cell *f = &cs[first[k] >= 0 ? first[k] : first[other]];
            pp__io_csv_name(a, sizeof a, &cs[i]);
            pp__io_csv_name(b, sizeof b, f);
            pp__io_err(c->err, "row %d (rank %d), column %d: %s repeats %s of row %d, column %d; expected each pass "
                            "of each microbatch once (and B or I, not both)", cs[i].row + 1, cs[i].row,
                    cs[i].col + 1, a, b, f->row + 1, f->col + 1);
            return PP_ERR_INVALID_ARG;
        }
        first[k] = i;
    }
    /* order on each row: F before I or B, I before W (the row is the
       stage's rank, so "before on the row" is "earlier in the file") */
    for (i = 0; i < c->count; i++) {
        const pp__io_cell *x = &cs[i];
        pp_kind need = x->kind == PP_W ? PP_B : PP_F;
        int k;
        if (x->kind == PP_F) continue;
        k = first[pp__io_key(S, n, need, x->stage, x->mb)];
        pp__io_csv_name(a, sizeof a, x);
        snprintf(b, sizeof b, "%d%c%d", x->stage, need == PP_F ? 'F' : 'I', x->mb);
        if (k < 0) {
            if (x->kind == PP_W && first[pp__io_key(S, n, PP_BW, x->stage, x->mb)] >= 0)
                pp__io_err(c->err, "row %d (rank %d), column %d: %s follows a full backward %d B%d; expected W only "
                                "after an I of the same stage and microbatch", x->row + 1, x->row, x->col + 1, a,
                        x->stage, x->mb);
            else
                pp__io_err(c->err, "row %d (rank %d), column %d: %s has no %s anywhere in the file; expected %s before it "
                                "on this row", x->row + 1, x->row, x->col + 1, a, b, b);
            return PP_ERR_INVALID_ARG;
        }
        if (k > i) {
            pp__io_err(c->err, "row %d (rank %d), column %d: %s comes before its %s (column %d); expected %s first",
                    x->row + 1, x->row, x->col + 1, a, b, cs[k].col + 1, b);
            return PP_ERR_INVALID_ARG;
        }
    }
    /* counts: F = n, B + I = n, W = I for every stage */
    for (s = 0; s < S; s++)
        for (j = 0; j < n; j++) {
            int f = first[pp__io_key(S, n, PP_F, s, j)], in = first[pp__io_key(S, n, PP_B, s, j)];
            int full = first[pp__io_key(S, n, PP_BW, s, j)], w = first[pp__io_key(S, n, PP_W, s, j)];
            const char *what = f < 0 ? "F" : (in < 0 && full < 0) ? "B or I" : (in >= 0 && w < 0) ? "W" : NULL;
            if (what)
                pp__io_err(c->err, "row %d (rank %d) has no %s for stage %d, microbatch %d; expected F, then B (or I "
                                "and W), for every stage and every microbatch 0..%d", stage_rank[s] + 1, stage_rank[s],
                        what, s, j, n - 1);
            if (what) return PP_ERR_INVALID_ARG;
        }
    return PP_OK;
}

/* Runs the rows as written (every pass after its row's previous pass and
   after the pass it needs) and names the cells that never run. */
static pp_status pp__io_csv_deadlock(pp__io_csv *c, int d, int S, int n, const int *first, const int *row_start) {
    pp_allocator *al = &c->al;
    unsigned char *done = (unsigned char *)pp__io_malloc(al, (size_t)4 * S * n);
    int *ptr = (int *)pp__io_malloc(al, pp__io_size((size_t)d, sizeof(int)));
    int i, left = c->count, progress;
    pp_status st = PP_OK;
    if (!done || !ptr) {
        pp__io_mfree(al, done); pp__io_mfree(al, ptr);
        pp__io_err(c->err, "out of memory checking the CSV's order");
        return PP_ERR_OUT_OF_MEMORY;
    }
    memset(done, 0, (size_t)4 * S * n);
    for (i = 0; i < d; i++) ptr[i] = row_start[i];
    do {
        progress = 0;
        for (i = 0; i < d; i++) {
            while (ptr[i] < row_start[i + 1]) {
                const pp__io_cell *x = &c->cells[ptr[i]];
                pp_kind dk;
                int ds, ok = 1;
                /* pp_pass_input; the file may hold B or BW, so a B input is either */
                if (pp_pass_input(S, n, 1, 1, x->kind, x->stage, x->mb, &dk, &ds) > 0)
                    ok = done[pp__io_key(S, n, dk, ds, x->mb)] || (dk == PP_B && done[pp__io_key(S, n, PP_BW, ds, x->mb)]);
                if (!ok) break;
                done[pp__io_key(S, n, x->kind, x->stage, x->mb)] = 1;
                ptr[i]++;
                left--;
                progress = 1;
            }
        }
    } while (progress && left > 0);
    if (left > 0) {
        for (i = 0; i < d && ptr[i] >= row_start[i + 1]; i++) {}
        {
            const pp__io_cell *x = &c->cells[ptr[i]];
            pp_kind dk = PP_F;
            int ds = 0, k;
            char a[40], b[40], w[40];
            (void)pp_pass_input(S, n, 1, 1, x->kind, x->stage, x->mb, &dk, &ds); /* stuck: it has an input */
            k = first[pp__io_key(S, n, dk, ds, x->mb)];
            if (k < 0 && dk == PP_B) { k = first[pp__io_key(S, n, PP_BW, ds, x->mb)]; }
            pp__io_csv_name(a, sizeof a, x);
            if (k >= 0) {
                const pp__io_cell *y = &c->cells[k];
                const pp__io_cell *blk = &c->cells[ptr[y->row] < row_start[y->row + 1] ? ptr[y->row] : k];
                pp__io_csv_name(b, sizeof b, y);
                pp__io_csv_name(w, sizeof w, blk);
                pp__io_err(c->err, "row %d (rank %d), column %d: %s waits for %s at row %d, column %d, which never runs "
                                "(row %d is stuck at column %d, %s); the order deadlocks (%d passes never run)",
                        x->row + 1, x->row, x->col + 1, a, b, y->row + 1, y->col + 1, y->row + 1, blk->col + 1, w, left);
            } else {
                pp__io_err(c->err, "row %d (rank %d), column %d: %s waits for a pass that is not in the file", x->row + 1,
                        x->row, x->col + 1, a);
            }
        }
        st = PP_ERR_DEADLOCK;
    }
    pp__io_mfree(al, done); pp__io_mfree(al, ptr);
    return st;
}

PP__IO_DEF pp_status pp_sched_from_csv(const char *text, size_t len, const pp_config *cfg, pp_schedule **out,
                                    char *err) {
    pp__io_csv c;
    pp_status st;
    int rows = 0, S = 0, n = 0, i, split = 0, np = 0, max_s = -1, max_j = -1;
    int *stage_rank = NULL, *stage_first = NULL, *first = NULL, *row_start = NULL;
    pp_pass *passes = NULL;
    if (err) err[0] = 0;
    if (!out) { pp__io_err(err, "pp_sched_from_csv: out must not be NULL"); return PP_ERR_INVALID_ARG; }
    *out = NULL;
    if (!text && len) { pp__io_err(err, "pp_sched_from_csv: text is NULL"); return PP_ERR_INVALID_ARG; }
    if (len > (size_t)INT_MAX / 2) {
        pp__io_err(err, "the CSV has %lu bytes; at most %d are read", (unsigned long)len, INT_MAX / 2);
        return PP_ERR_OVERFLOW;
    }
    memset(&c, 0, sizeof c);
    c.al = pp__io_allocator(cfg ? &cfg->allocator : NULL);
    c.err = err;
    st = pp__io_csv_read(&c, text ? text : "", len, &rows);
    if (st != PP_OK) goto done;
    for (i = 0; i < c.count; i++) {
        if (c.cells[i].stage > max_s) { max_s = c.cells[i].stage; }
        if (c.cells[i].mb > max_j) { max_j = c.cells[i].mb; }
        if (c.cells[i].kind == PP_B || c.cells[i].kind == PP_W) split = 1;
    }
    S = max_s + 1;
    n = max_j + 1;
    if (S < rows) {
        pp__io_err(err, "%d rows (ranks) but the stage indices only reach %d; expected at least one stage per rank",
                rows, S - 1);
        st = PP_ERR_INVALID_ARG;
        goto done;
    }
    if (S % rows != 0 && !(cfg && cfg->stage_times)) {
        pp__io_err(err, "%d stages on %d ranks (rows): expected the same number of stages on every rank (a multiple "
                     "of %d stages), or per-stage times in pp_config.stage_times", S, rows, rows);
        st = PP_ERR_INVALID_ARG;
        goto done;
    }
    stage_rank = (int *)pp__io_malloc(&c.al, pp__io_size((size_t)S, sizeof(int)));
    stage_first = (int *)pp__io_malloc(&c.al, pp__io_size((size_t)S, sizeof(int)));
    if (!stage_rank || !stage_first) {
        pp__io_err(err, "out of memory placing %d stages", S);
        st = PP_ERR_OUT_OF_MEMORY;
        goto done;
    }
    st = pp__io_csv_place(&c, S, stage_rank, stage_first);
    if (st != PP_OK) goto done;
    if ((long long)c.count < 2LL * S * n) { st = pp__io_csv_missing(&c, S, n, stage_rank); goto done; }
    /* from here S*n <= cells/2, so the arrays below are as small as the file */
    first = (int *)pp__io_malloc(&c.al, pp__io_size((size_t)4 * S * n, sizeof(int)));
    row_start = (int *)pp__io_malloc(&c.al, pp__io_size((size_t)rows + 1, sizeof(int)));
    passes = (pp_pass *)pp__io_malloc(&c.al, pp__io_size((size_t)S * n * (split ? 3 : 2), sizeof(pp_pass)));
    if (!first || !row_start || !passes) {
        pp__io_err(err, "out of memory checking a CSV of %d stages and %d microbatches", S, n);
        st = PP_ERR_OUT_OF_MEMORY;
        goto done;
    }
    st = pp__io_csv_check(&c, S, n, stage_rank, first);
    if (st != PP_OK) goto done;
    if (c.count > (split ? 3 : 2) * S * n) { /* counts hold and nothing repeats, so this cannot happen */
        pp__io_err(err, "the file has %d passes, more than %d stages x %d microbatches allow", c.count, S, n);
        st = PP_ERR_INVALID_ARG;
        goto done;
    }
    for (i = 0; i <= rows; i++) row_start[i] = 0;
    for (i = 0; i < c.count; i++) row_start[c.cells[i].row + 1] = i + 1;
    for (i = 1; i <= rows; i++) if (row_start[i] < row_start[i - 1]) row_start[i] = row_start[i - 1];
    st = pp__io_csv_deadlock(&c, rows, S, n, first, row_start);
    if (st != PP_OK) goto done;
    /* our model: a schedule splits all backwards or none. In a file that
       mixes them (PyTorch allows B + I = n), a full backward B becomes I
       followed at once by W: same time, same memory. */
    for (i = 0; i < c.count; i++) {
        const pp__io_cell *x = &c.cells[i];
        pp_pass p;
        p.device = x->row; p.stage = x->stage; p.microbatch = x->mb; p.start = p.end = 0;
        p.kind = x->kind;
        if (x->kind == PP_BW && split) {
            p.kind = PP_B;
            passes[np++] = p;
            p.kind = PP_W;
        }
        passes[np++] = p;
    }
    {
        pp_order o;
        pp_config cf;
        char verr[PP_ERR_LEN];
        memset(&o, 0, sizeof o);
        if (cfg) cf = *cfg; else memset(&cf, 0, sizeof cf);
        o.name = "pytorch-csv";
        o.devices = rows;
        o.stages = S;
        o.microbatches = n;
        o.stage_device = stage_rank;
        o.passes = passes;
        o.count = np;
        st = pp_sched_from_order(&o, &cf, out, err);
        if (st == PP_OK && (st = pp_sched_validate(*out, verr)) != PP_OK) {
            pp__io_err(err, "the CSV's schedule breaks a rule: %s", verr);
            pp_sched_free(*out);
            *out = NULL;
        }
    }
done:
    pp__io_mfree(&c.al, c.cells);
    pp__io_mfree(&c.al, stage_rank);
    pp__io_mfree(&c.al, stage_first);
    pp__io_mfree(&c.al, first);
    pp__io_mfree(&c.al, row_start);
    pp__io_mfree(&c.al, passes);
    return st;
}

#ifndef PP_SCHED_NO_STDIO

/* Column of every pass in a time-aligned CSV. Each pass takes one column,
   after its device's previous pass and after the pass it depends on, so a
   producer's column is always before its consumer's (PipelineScheduleMulti
   posts the matching receive in the producer's column). */
static pp_status pp__io_csv_columns(const pp_schedule *s, int *col, int *ncols, char *err) {
    int d = s->devices, S = s->stages, n = s->microbatches, P = s->num_passes;
    int i, left = P, progress, maxc = 0;
    pp_allocator al = s->allocator;
    size_t keys = (size_t)4 * S * n;
    int *at = (int *)pp__io_malloc(&al, pp__io_size(keys, sizeof(int)));
    int *ptr = (int *)pp__io_malloc(&al, pp__io_size((size_t)d, sizeof(int)));
    int *next = (int *)pp__io_malloc(&al, pp__io_size((size_t)d, sizeof(int)));
    if (!at || !ptr || !next) {
        pp__io_mfree(&al, at); pp__io_mfree(&al, ptr); pp__io_mfree(&al, next);
        pp__io_err(err, "out of memory laying out the CSV columns");
        return PP_ERR_OUT_OF_MEMORY;
    }
    for (i = 0; i < (int)keys; i++) at[i] = -1;
    for (i = 0; i < d; i++) { ptr[i] = s->device_start[i]; next[i] = 0; }
    do {
        progress = 0;
        for (i = 0; i < d; i++) {
            while (ptr[i] < s->device_start[i + 1]) {
                const pp_pass *p = &s->passes[ptr[i]];
                pp_kind dk;
                int ds, c = next[i];
                if (pp_pass_input(S, n, s->copies, s->split_backward, p->kind, p->stage, p->microbatch, &dk, &ds) > 0) {
                    int k = at[pp__io_key(S, n, dk, ds, p->microbatch)];
                    if (k < 0) break;
                    if (k + 1 > c) c = k + 1;
                }
                col[ptr[i]] = c;
                at[pp__io_key(S, n, p->kind, p->stage, p->microbatch)] = c;
                next[i] = c + 1;
                if (c + 1 > maxc) maxc = c + 1;
                ptr[i]++;
                progress = 1;
                left--;
            }
        }
    } while (progress && left > 0);
    pp__io_mfree(&al, at); pp__io_mfree(&al, ptr); pp__io_mfree(&al, next);
    if (left > 0) {
        pp__io_err(err, "the schedule's pass order deadlocks, it has no CSV (validate it first)");
        return PP_ERR_DEADLOCK;
    }
    *ncols = maxc;
    return PP_OK;
}

PP__IO_DEF pp_status pp_sched_print_csv(FILE *f, const pp_schedule *s, char *err) {
    pp_allocator al;
    int *col, ncols = 0, dev, i;
    pp_status st;
    if (!f) { pp__io_err(err, "pp_sched_print_csv: file is NULL"); return PP_ERR_INVALID_ARG; }
    st = pp_sched_check_shape(s, "pp_sched_print_csv", 0, err);
    if (st != PP_OK) return st;
    if (s->copies == 2) {
        pp__io_err(err, "%s runs two model copies, each on half the microbatches; PyTorch's schedule CSV has one "
                     "route (every stage runs every microbatch) and cannot express it: use --format json or trace",
                s->name);
        return PP_ERR_INVALID_ARG;
    }
    al = s->allocator;
    col = (int *)pp__io_malloc(&al, pp__io_size((size_t)s->num_passes, sizeof(int)));
    if (!col) { pp__io_err(err, "out of memory writing the CSV"); return PP_ERR_OUT_OF_MEMORY; }
    st = pp__io_csv_columns(s, col, &ncols, err);
    if (st == PP_OK) {
        for (dev = 0; dev < s->devices; dev++) {
            int c = 0;
            for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
                const pp_pass *p = &s->passes[i];
                for (; c < col[i]; c++) fputc(',', f);
                fprintf(f, "%d%c%d", p->stage, pp__io_csv_letter(p->kind), p->microbatch);
            }
            /* every row as long as the longest: a rank loops over its own
               row and must still post receives for its neighbours' passes */
            for (; c < ncols - 1; c++) fputc(',', f);
            fputc('\n', f);
        }
    }
    pp__io_mfree(&al, col);
    return st;
}

static void pp__io_xml_str(FILE *f, const char *x) {
    for (; *x; x++) {
        unsigned char ch = (unsigned char)*x;
        if (ch == '<') fputs("&lt;", f);
        else if (ch == '>') fputs("&gt;", f);
        else if (ch == '&') fputs("&amp;", f);
        else if (ch == '"') fputs("&quot;", f);
        else if (ch < 0x20) fputc('?', f);
        else fputc(ch, f);
    }
}

/* A tick step of 1, 2 or 5 x 10^k giving at most about 20 ticks. */
static double pp__io_tick_step(double span) {
    double step = 1e-9;
    while (span / step > 20) {
        if (span / (step * 2) <= 20) return step * 2;
        if (span / (step * 5) <= 20) return step * 5;
        step *= 10;
    }
    return step;
}

/* Memory change of a pass on its device: F adds at its start, W or BW
   removes at its end; 0 for passes that change nothing. */
static int pp__io_mem_event(const pp_schedule *s, const pp_pass *p, double *x, double *m) {
    if (p->kind == PP_F) { *x = p->start; *m = s->stage_memory[p->stage]; return 1; }
    if (p->kind == PP_W || p->kind == PP_BW) { *x = p->end; *m = -s->stage_memory[p->stage]; return 1; }
    return 0;
}

PP__IO_DEF pp_status pp_sched_print_svg(FILE *f, const pp_schedule *s, int flags, char *err) {
    /* layout in px: left label column, timeline rows, axis, optional memory panels, footer */
    const double L = 78, PW = 960, R = 60, RH = 26, GAP = 4, TOP = 84, MH = 40;
    /* F blue, B (input) green, W orange, BW (combined) purple; dark = even chunk, light = odd chunk */
    static const char *fill[4][2] = {{"#2f6db5", "#9cc3ee"}, {"#2a9d55", "#a3dcb5"}, {"#d98c10", "#f6cf85"},
                                     {"#7a4fb0", "#c9b2e6"}};
    static const char *ink[2] = {"#ffffff", "#111111"};
    double mk, sx, W, H, axis_y, mem_y, step, t, maxpeak = 0;
    int dev, i, d, memory = (flags & PP_SVG_MEMORY) != 0;
    const char *title;
    pp_status st;
    if (!f) { pp__io_err(err, "pp_sched_print_svg: file is NULL"); return PP_ERR_INVALID_ARG; }
    st = pp_sched_check_shape(s, "pp_sched_print_svg", 1, err);
    if (st != PP_OK) return st;
    d = s->devices;
    mk = s->makespan > 0 ? s->makespan : 1;
    sx = PW / mk;
    W = L + PW + R;
    axis_y = TOP + d * (RH + GAP);
    mem_y = axis_y + 34;
    H = mem_y + (memory ? d * (MH + GAP) + 8 : 0) + 76;
    for (dev = 0; dev < d; dev++) maxpeak = pp__io_max(maxpeak, s->peak_memory[dev]);
    title = s->name[0] ? s->name : "schedule";
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
               "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n", W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%g\" height=\"%g\" fill=\"#ffffff\"/>\n", W, H);
    fprintf(f, "<text x=\"%g\" y=\"24\" font-size=\"17\" font-weight=\"bold\">", L);
    pp__io_xml_str(f, title);
    fprintf(f, "</text>\n<text x=\"%g\" y=\"44\" font-size=\"13\">d=%d devices, n=%d microbatches, v=%d chunk%s "
               "(%s placement), times F=%g B=%g W=%g comm=%g</text>\n", L, d, s->microbatches, s->chunks,
            s->chunks == 1 ? "" : "s", pp_placement_name(s->placement), s->times.f, s->times.b, s->times.w,
            s->times.comm);
    /* legend */
    {
        const char *names[4] = {"F forward", s->split_backward ? "B backward (input)" : "B backward (input+weights)",
                                "W backward (weights)", "idle"};
        double x = L;
        for (i = 0; i < 4; i++) {
            int kind = i == 1 && !s->split_backward ? PP_BW : i;
            if (i == 2 && !s->split_backward) continue;
            fprintf(f, "<rect x=\"%g\" y=\"54\" width=\"14\" height=\"14\" fill=\"%s\"/>", x,
                    i == 3 ? "#ececec" : fill[kind][0]);
            if (i < 3 && s->chunks > 1)
                fprintf(f, "<rect x=\"%g\" y=\"54\" width=\"14\" height=\"14\" fill=\"%s\"/>", x + 15, fill[kind][1]);
            x += (i < 3 && s->chunks > 1) ? 34 : 19;
            fprintf(f, "<text x=\"%g\" y=\"66\" font-size=\"12\">%s</text>\n", x, names[i]);
            x += 7.2 * (double)strlen(names[i]) + 18;
        }
        if (s->chunks > 1)
            fprintf(f, "<text x=\"%g\" y=\"66\" font-size=\"12\">%s</text>\n", x,
                    s->chunks == 2 ? "dark = chunk 0, light = chunk 1" : "dark = even chunk, light = odd chunk");
    }
    for (dev = 0; dev < d; dev++) {
        double y = TOP + dev * (RH + GAP);
        fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"13\" text-anchor=\"end\">device %d</text>\n", L - 8,
                y + RH * 0.65, dev);
        fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#ececec\"/>\n", L, y, PW, RH);
        for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
            const pp_pass *p = &s->passes[i];
            int shade = (p->stage / (d > 0 ? d : 1)) % 2, digits = 1, m;
            double x = L + p->start * sx, w = (p->end - p->start) * sx, fs;
            if (w < 0.5) w = 0.5;
            for (m = p->microbatch; m >= 10; m /= 10) digits++;
            fprintf(f, "<rect x=\"%.2f\" y=\"%g\" width=\"%.2f\" height=\"%g\" fill=\"%s\" stroke=\"#ffffff\" "
                       "stroke-width=\"0.6\"><title>%s stage %d microbatch %d [%g, %g]</title></rect>\n",
                    x, y, w, RH, fill[p->kind][shade], pp_kind_name(p->kind), p->stage, p->microbatch, p->start, p->end);
            fs = (w - 2) / (0.62 * digits);
            if (fs > 13) fs = 13;
            if (fs >= 5)
                fprintf(f, "<text x=\"%.2f\" y=\"%g\" font-size=\"%.1f\" text-anchor=\"middle\" fill=\"%s\">%d</text>\n",
                        x + w / 2, y + RH / 2 + fs * 0.36, fs, ink[shade], p->microbatch);
        }
    }
    /* time axis */
    step = pp__io_tick_step(mk);
    fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#444444\"/>\n", L, axis_y, L + PW, axis_y);
    for (t = 0; t <= mk * (1 + 1e-9); t += step) {
        double x = L + t * sx;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"#444444\"/>"
                   "<text x=\"%.2f\" y=\"%g\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n",
                x, axis_y, x, axis_y + 4, x, axis_y + 16, t);
    }
    fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"end\">time</text>\n", L - 8, axis_y + 16);
    if (memory) {
        for (dev = 0; dev < d; dev++) {
            double y0 = mem_y + dev * (MH + GAP), base = y0 + MH, cur = 0, ys = maxpeak > 0 ? (MH - 4) / maxpeak : 0;
            double px = 0, pm = 0;
            fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"end\">memory %d</text>\n", L - 8,
                    y0 + MH * 0.6, dev);
            fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#f7f7f7\"/>\n", L, y0, PW, MH);
            fprintf(f, "<polyline fill=\"none\" stroke=\"#b03030\" stroke-width=\"1.5\" points=\"%g,%g", L, base);
            /* F allocates at its start, W or BW frees at its end; changes at
               one instant are drawn as one step */
            for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
                double x, m;
                int k;
                if (!pp__io_mem_event(s, &s->passes[i], &x, &m)) continue;
                for (k = i - 1; k >= s->device_start[dev] && !pp__io_mem_event(s, &s->passes[k], &px, &pm); k--) {}
                if (k < s->device_start[dev] || pp__io_abs(px - x) > 1e-9 * (1 + x))
                    fprintf(f, " %.2f,%.2f", L + x * sx, base - cur * ys);
                cur += m;
                for (k = i + 1; k < s->device_start[dev + 1] && !pp__io_mem_event(s, &s->passes[k], &px, &pm); k++) {}
                if (k == s->device_start[dev + 1] || pp__io_abs(px - x) > 1e-9 * (1 + x))
                    fprintf(f, " %.2f,%.2f", L + x * sx, base - cur * ys);
            }
            fprintf(f, " %g,%.2f\"/>\n", L + PW, base - cur * ys);
            fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"10\" fill=\"#b03030\">peak %g</text>\n", L + PW + 4,
                    base - s->peak_memory[dev] * ys + 3, s->peak_memory[dev]);
        }
    }
    {
        double y = H - 50;
        fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"13\">makespan %g, bubble rate %.2f%%</text>\n", L, y,
                s->makespan, 100.0 * s->bubble_rate);
        fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"13\">peak memory per device (units: one microbatch's "
                   "activation for 1/d of the model):", L, y + 18);
        for (dev = 0; dev < d; dev++) fprintf(f, " %g", s->peak_memory[dev]);
        fprintf(f, "</text>\n");
        if (d > 0 && s->peak_bound[0] >= 0) {
            fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"13\">Eq. 1 bound from the building block (T=%d):", L,
                    y + 36, s->interval);
            for (dev = 0; dev < d; dev++) fprintf(f, " %g", s->peak_bound[dev]);
            fprintf(f, "</text>\n");
        }
        fprintf(f, "</svg>\n");
    }
    return PP_OK;
}

PP__IO_DEF pp_status pp_sched_print_trace(FILE *f, const pp_schedule *s, char *err) {
    int dev, i, first = 1;
    pp_status st;
    if (!f) { pp__io_err(err, "pp_sched_print_trace: file is NULL"); return PP_ERR_INVALID_ARG; }
    st = pp_sched_check_shape(s, "pp_sched_print_trace", 0, err);
    if (st != PP_OK) return st;
    /* ts and dur are microseconds in the trace format: one time unit of ours is written as 1000 (1 ms) */
    fprintf(f, "{\"displayTimeUnit\": \"ms\",\n \"otherData\": {\"schedule\": ");
    pp__io_json_str(f, s->name);
    fprintf(f, ", \"devices\": %d, \"microbatches\": %d, \"chunks\": %d, \"time_unit_us\": 1000, "
               "\"makespan\": %.12g, \"bubble_rate\": %.12g},\n \"traceEvents\": [\n", s->devices, s->microbatches,
            s->chunks, s->makespan, s->bubble_rate);
    for (dev = 0; dev < s->devices; dev++) {
        fprintf(f, "%s  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": "
                   "\"device %d\"}},\n  {\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
                   "\"args\": {\"sort_index\": %d}}", first ? "" : ",\n", dev, dev, dev, dev);
        first = 0;
        for (i = s->device_start[dev]; i < s->device_start[dev + 1]; i++) {
            const pp_pass *p = &s->passes[i];
            fprintf(f, ",\n  {\"name\": \"%s%d\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": 0, "
                       "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"stage\": %d, \"microbatch\": %d, \"chunk\": %d}}",
                    pp_kind_name(p->kind), p->microbatch, pp_kind_name(p->kind), dev, p->start * 1000.0,
                    (p->end - p->start) * 1000.0, p->stage, p->microbatch, p->stage / s->devices);
        }
    }
    fprintf(f, "\n ]}\n");
    return PP_OK;
}
#endif /* PP_SCHED_NO_STDIO */


#endif /* PP__IO_IMPLEMENTATION_INCLUDED */
#endif /* PP_SCHED_IO_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
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
------------------------------------------------------------------------------
*/
