/* group.h - the check-group harness of tests/test_sched.c, shared by the
   newer tests (test_lower.c, test_gpt_ref.c, test_runtime.c).
   One line per group, "[ok] name: details (N checks)" or "[FAIL] ...", with
   the first failing cases indented under it (TEST_DETAILS=N shows N). */
#ifndef PP_TEST_GROUP_H
#define PP_TEST_GROUP_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DETAILS 64 /* kept per group; TEST_DETAILS=N prints up to N (default 6) */

typedef struct group {
    const char *name;
    long checks, fails, stored;
    char detail[MAX_DETAILS][320];
} group;

static int g_groups_passed, g_groups_failed;

static void group_begin(group *g, const char *name) {
    memset(g, 0, sizeof *g);
    g->name = name;
}

/* Records one check; on failure keeps the message for the group's report. */
static int check(group *g, int ok, const char *fmt, ...) {
    g->checks++;
    if (!ok) {
        if (g->stored < MAX_DETAILS) {
            /* keep at most 3 details per first word (usually the schedule's
               name) so one broken schedule does not hide the others */
            char *msg = g->detail[g->stored];
            size_t w;
            long i, same = 0;
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(msg, sizeof g->detail[0], fmt, ap);
            va_end(ap);
            w = strcspn(msg, " :");
            for (i = 0; i < g->stored; i++)
                if (strncmp(g->detail[i], msg, w) == 0 && strcspn(g->detail[i], " :") == w) same++;
            if (same < 3) g->stored++;
        }
        g->fails++;
    }
    return ok;
}

static void group_end(group *g, const char *fmt, ...) {
    char summary[256];
    va_list ap;
    long i;
    va_start(ap, fmt);
    vsnprintf(summary, sizeof summary, fmt, ap);
    va_end(ap);
    if (g->fails == 0) {
        printf("[ok] %s: %s (%ld checks)\n", g->name, summary, g->checks);
        g_groups_passed++;
    } else {
        printf("[FAIL] %s: %ld of %ld checks failed; %s\n", g->name, g->fails, g->checks, summary);
        const char *env = getenv("TEST_DETAILS");
        long show = env ? atol(env) : 6;
        for (i = 0; i < g->stored && i < show; i++) printf("    - %s\n", g->detail[i]);
        g_groups_failed++;
    }
    fflush(stdout);
}

/* A counting allocator that can be told to fail: allocation number
   fail_after (0-based) and every later one return NULL; -1 never fails.
   Define PP_TEST_COUNTING_ALLOCATOR before including to get it. */
#ifdef PP_TEST_COUNTING_ALLOCATOR
typedef struct counting {
    long allocs, frees, fail_after;
} counting;

static void *count_alloc(size_t size, void *user) {
    counting *c = (counting *)user;
    if (c->fail_after >= 0 && c->allocs >= c->fail_after) return NULL;
    c->allocs++;
    return malloc(size);
}

static void count_free(void *ptr, void *user) {
    counting *c = (counting *)user;
    if (ptr) c->frees++;
    free(ptr);
}
#endif

/* Straight-line tests (test_auto.c, test_plan.c) define PP_TEST_CURRENT_GROUP
   before including this: CHECK(cond, fmt, ...) records into one current
   group, group_next(name, summary) reports it and starts the next. */
#ifdef PP_TEST_CURRENT_GROUP
static group g_current;
#define CHECK(cond, ...) check(&g_current, (cond) ? 1 : 0, __VA_ARGS__)
static void group_next(const char *name, const char *summary) {
    g_current.name = name;
    group_end(&g_current, "%s", summary);
    group_begin(&g_current, NULL);
}
#endif

#endif
