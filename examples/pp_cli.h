/* pp_cli.h - the command line and the output checks shared by the example
   programs (ppsched.c, train_cpu.c, train_gpt.cu). Not part of the library:
   pp_sched.h never prints or exits; these programs do both, the same way.

   Options: one table of rows, each starting with a pp_cli_opt (its short and
   long name and whether it takes a value), read by pp_cli_parse with the
   same rules in every program: "--name=value" is "--name value"; a name that
   is in no row is an unknown option, named as such; an option given twice
   is an error; a flag given a value and an option missing its value are
   errors. The program's own callback turns each value into its setting.
   Nothing here prints or exits: every error is one sentence in the
   caller's msg and the status 2 (the arguments must change).

   Output: every write is checked. pp_cli_create opens a temporary file in
   the folder of the file asked for, and pp_cli_commit flushes, closes and
   renames it onto that name, so a file is written whole or not at all;
   pp_cli_finish checks standard output the same way at exit. A failure is
   one line naming the file (or "standard output") and the system's reason,
   and exit status 1. pp_cli_init ignores SIGXFSZ, so that a file-size limit
   (ulimit -f) is a failed write with EFBIG rather than a killed process.

   Include it after the system headers; it needs POSIX (mkstemp, fchmod,
   umask), C99 or C++. */
#ifndef PP_CLI_H
#define PP_CLI_H

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* a program uses some of these: static inline keeps the others quiet */
#define PP_CLI_FN static inline

typedef struct pp_cli_opt {
    const char *shortname, *longname; /* shortname may be NULL */
    int takes_value;
} pp_cli_opt;

/* One sentence into msg; returns 2 (the arguments must change). */
PP_CLI_FN int pp_cli_error(char *msg, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return 2;
}

/* A whole number lo..hi, digits only: no sign, no space before or after. */
PP_CLI_FN int pp_cli_int(const char *text, long lo, long hi, int *out) {
    char *end;
    long v;
    if (text[0] < '0' || text[0] > '9') return 0;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi || v > INT_MAX) return 0;
    *out = (int)v;
    return 1;
}

/* A finite number >= 0, nothing before or after it. */
PP_CLI_FN int pp_cli_real(const char *text, double *out) {
    char *end;
    double v;
    if (!((text[0] >= '0' && text[0] <= '9') || text[0] == '.')) return 0;
    errno = 0;
    v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || v < 0) return 0;
    *out = v;
    return 1;
}

/* Sets option k (of the table) from value (NULL for a flag); name is as
   typed. Returns 0, or 2 with a sentence in msg. */
typedef int (*pp_cli_set_fn)(void *user, int k, const char *name, const char *value, char *msg, size_t len);
/* An argument that is not an option ("-" included); 0 or 2 with msg. */
typedef int (*pp_cli_arg_fn)(void *user, const char *arg, char *msg, size_t len);

/* Reads argv[first..argc) against count rows of table, each row stride
   bytes long and starting with a pp_cli_opt. given[k] (count entries,
   zeroed here) is the argv index where option k was given, 0 if not.
   positional may be NULL: then any argument that is not an option is an
   error. Returns 0, or 2 with one sentence in msg. */
PP_CLI_FN int pp_cli_parse(int argc, char **argv, int first, const void *table, size_t stride, int count, int *given,
                        pp_cli_set_fn set, pp_cli_arg_fn positional, void *user, char *msg, size_t len) {
    int i, k;
    msg[0] = '\0';
    for (k = 0; k < count; k++) given[k] = 0;
    for (i = first; i < argc; i++) {
        const char *arg = argv[i], *value = NULL, *eq = NULL;
        const pp_cli_opt *o = NULL;
        char flag[64];
        if (strncmp(arg, "--", 2) == 0) eq = strchr(arg, '='); /* --name=value is --name value */
        if (eq) {
            size_t n = (size_t)(eq - arg);
            if (n >= sizeof flag) return pp_cli_error(msg, len, "unknown option '%.64s'", arg);
            memcpy(flag, arg, n);
            flag[n] = '\0';
            arg = flag;
            value = eq + 1;
        }
        for (k = 0; k < count; k++) {
            o = (const pp_cli_opt *)(const void *)((const char *)table + (size_t)k * stride);
            if ((o->shortname && strcmp(arg, o->shortname) == 0) || strcmp(arg, o->longname) == 0) break;
        }
        if (k == count) {
            if (argv[i][0] == '-' && argv[i][1] != '\0') return pp_cli_error(msg, len, "unknown option '%.64s'", argv[i]);
            if (positional) {
                if (positional(user, argv[i], msg, len)) return 2;
                continue;
            }
            return pp_cli_error(msg, len, "unexpected argument '%.64s'", argv[i]);
        }
        if (o->takes_value && !value) {
            if (i + 1 >= argc) return pp_cli_error(msg, len, "%s needs a value", arg);
            value = argv[++i];
        } else if (!o->takes_value && value) {
            return pp_cli_error(msg, len, "%s takes no value, got '%.64s'", arg, value);
        }
        if (given[k]) return pp_cli_error(msg, len, "%s is given twice", o->longname);
        given[k] = i;
        if (set(user, k, arg, value, msg, len)) return 2;
    }
    return 0;
}

/* ---- output ---- */

/* A write failed: one line naming what (a file, or "standard output") and
   the reason (errno, or a failed write where errno says nothing). Returns 1. */
PP_CLI_FN int pp_cli_write_error(const char *prog, const char *what, int err) {
    fprintf(stderr, "%s: cannot write %s: %s\n", prog, what, err ? strerror(err) : "a write failed");
    return 1;
}

/* At start: a file-size limit makes a write fail (EFBIG), not the process die. */
PP_CLI_FN void pp_cli_init(void) {
#ifdef SIGXFSZ
    signal(SIGXFSZ, SIG_IGN);
#endif
}

/* f flushed and its error flag clear: 0, else the errno of the failure (or
   -1 where errno says nothing). */
PP_CLI_FN int pp_cli_flushed(FILE *f) {
    errno = 0;
    if (fflush(f) != 0 || ferror(f)) return errno ? errno : -1;
    return 0;
}

/* At exit: standard output flushed and closed, or one line and status 1.
   rc is the status so far; returned unless the output failed. */
PP_CLI_FN int pp_cli_finish(const char *prog, int rc) {
    int e = pp_cli_flushed(stdout);
    if (!e && fclose(stdout) != 0) e = errno ? errno : -1;
    if (e) return pp_cli_write_error(prog, "standard output", e > 0 ? e : 0);
    return rc;
}

/* A file written under a temporary name in its own folder, renamed onto its
   name by pp_cli_commit (whole, or not at all). */
typedef struct pp_cli_file {
    FILE *f;
    char path[4096], tmp[4096 + 16], what[4096 + 4];
} pp_cli_file;

/* Opens out->f for path; 0, or 1 with a line on stderr. */
PP_CLI_FN int pp_cli_create(const char *prog, pp_cli_file *out, const char *path) {
    int fd;
    mode_t mask;
    memset(out, 0, sizeof *out);
    if (snprintf(out->path, sizeof out->path, "%s", path) >= (int)sizeof out->path ||
        snprintf(out->tmp, sizeof out->tmp, "%s.tmpXXXXXX", path) >= (int)sizeof out->tmp) {
        fprintf(stderr, "%s: cannot write '%.200s...': the path is longer than %d bytes\n", prog, path,
                (int)sizeof out->path - 1);
        return 1;
    }
    snprintf(out->what, sizeof out->what, "'%s'", path);
    fd = mkstemp(out->tmp);
    if (fd < 0) return pp_cli_write_error(prog, out->what, errno);
    mask = umask(0); /* mkstemp makes 0600; the file gets what open(2) would give it */
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || !(out->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        remove(out->tmp);
        return pp_cli_write_error(prog, out->what, e);
    }
    return 0;
}

/* Drops a file being written (its temporary name removed; nothing renamed). */
PP_CLI_FN void pp_cli_discard(pp_cli_file *out) {
    if (out->f) fclose(out->f);
    if (out->f) remove(out->tmp);
    out->f = NULL;
}

/* Flushes, closes and renames out onto its path; 0, or 1 with a line on
   stderr (the temporary file removed, the path untouched). */
PP_CLI_FN int pp_cli_commit(const char *prog, pp_cli_file *out) {
    int e = pp_cli_flushed(out->f);
    if (!e && fsync(fileno(out->f)) != 0 && errno != EINVAL && errno != EROFS) e = errno;
    if (fclose(out->f) != 0 && !e) e = errno ? errno : -1;
    out->f = NULL;
    if (!e && rename(out->tmp, out->path) != 0) e = errno ? errno : -1;
    if (e) {
        remove(out->tmp);
        return pp_cli_write_error(prog, out->what, e > 0 ? e : 0);
    }
    return 0;
}

#endif /* PP_CLI_H */
