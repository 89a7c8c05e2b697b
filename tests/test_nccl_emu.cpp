/* test_nccl_emu.cpp - the emulated NCCL (emu/nccl.h) on its own:
   3 processes (forked) on the host runtime of emu/mock, bootstrapped
   at NCCL_COMM_ID=127.0.0.1:<a free port>. Checks NCCL's rules as NCCL
   states them, not figures taken from the emulation:
   - a group that posts its receive before its send completes (a ring);
   - sends and receives between one pair meet in the order they are posted,
     within a group and across calls; a send to oneself;
   - buffered sends: two ranks that each send, then receive, in separate
     calls, complete; with PP_EMU_NCCL_RENDEZVOUS=1 (a send completes when its
     receive is posted) the same calls wait for each other and fail at
     PP_EMU_NCCL_TIMEOUT, while the exchange in one group completes;
   - all-reduce sums in rank order: (1e8 + -1e8) + 1 in float is 1, and 0
     in any order that adds the 1 to a big one first (reversed, or rank 0
     and 2 first), and every rank gets the same bits; max, min, avg on other
     types; in place;
   - errors: a receive of the wrong size fails with both sizes, a rank's
     abort fails its peers' next operation with its reason, bad calls are
     ncclInvalidArgument / ncclInvalidUsage, a bad call inside a group runs
     nothing of the group;
   - a timeout names the rank the waits end at: in a chain 0 -> 1 -> 2
     where rank 2 stopped, rank 0's clock, which fires first, names rank 2
     (not rank 1, which only waits); ranks that wait on each other are
     named a deadlock.
   Build (tests/nccl_procs.sh does): c++ -std=c++11 -Iemu/mock -x c++ tests/test_nccl_emu.cpp
   Prints one line per group and "N passed, N failed". */
#include <cuda_runtime.h>
#include <nccl.h>
#include <math.h>
#include <sys/wait.h>
#include "group.h"

#define RANKS 3

static int g_pipe = -1; /* a child's findings go to the parent, one line each */

static void expect(int ok, const char *fmt, ...) {
    char line[400];
    int k;
    va_list ap;
    k = snprintf(line, sizeof line, "%s ", ok ? "PASS" : "FAIL");
    va_start(ap, fmt);
    k += vsnprintf(line + k, sizeof line - (size_t)k - 1, fmt, ap);
    va_end(ap);
    if (k > (int)sizeof line - 2) k = (int)sizeof line - 2;
    line[k++] = '\n';
    if (write(g_pipe, line, (size_t)k) < 0) _exit(99);
}

static int sync_ok(cudaStream_t s) { return cudaStreamSynchronize(s) == cudaSuccess; }

/* a ring in one group, receive first; two messages to one peer in posting order; a send to oneself */
static void p2p(ncclComm_t c, cudaStream_t s, int r) {
    int next = (r + 1) % RANKS, prev = (r + RANKS - 1) % RANKS, i;
    float *in = NULL, *out = NULL, *x = NULL, *y = NULL, *self = NULL;
    cudaMalloc((void **)&in, 4 * sizeof(float));
    cudaMalloc((void **)&out, 4 * sizeof(float));
    cudaMalloc((void **)&x, 2 * sizeof(float));
    cudaMalloc((void **)&y, 2 * sizeof(float));
    cudaMalloc((void **)&self, sizeof(float));
    for (i = 0; i < 4; i++) out[i] = (float)(10 * r + i);
    ncclGroupStart();
    ncclRecv(in, 4, ncclFloat, prev, c, s);
    ncclSend(out, 4, ncclFloat, next, c, s);
    expect(ncclGroupEnd() == ncclSuccess, "rank %d: ring group posted", r);
    expect(sync_ok(s), "rank %d: ring group completed", r);
    for (i = 0; i < 4; i++)
        expect(in[i] == (float)(10 * prev + i), "rank %d: ring element %d from rank %d is %g", r, i, prev, in[i]);
    /* rank 0 -> rank 1: x[0] then x[1] in one group; rank 1 receives y[0] then y[1], each its own call */
    if (r == 0) {
        x[0] = 1;
        x[1] = 2;
        ncclGroupStart();
        ncclSend(&x[0], 1, ncclFloat, 1, c, s);
        ncclSend(&x[1], 1, ncclFloat, 1, c, s);
        ncclGroupEnd();
    } else if (r == 1) {
        ncclRecv(&y[0], 1, ncclFloat, 0, c, s);
        ncclRecv(&y[1], 1, ncclFloat, 0, c, s);
    }
    expect(sync_ok(s), "rank %d: ordered pair completed", r);
    if (r == 1) expect(y[0] == 1 && y[1] == 2, "rank 1: the two sends arrive in posting order: %g %g", y[0], y[1]);
    out[0] = 7.5f;
    ncclGroupStart();
    ncclSend(out, 1, ncclFloat, r, c, s);
    ncclRecv(self, 1, ncclFloat, r, c, s);
    ncclGroupEnd();
    expect(sync_ok(s) && *self == 7.5f, "rank %d: a send to itself arrives: %g", r, *self);
    if (r < 2) { /* buffered: each sends first, in its own call */
        out[0] = (float)r;
        ncclSend(out, 1, ncclFloat, 1 - r, c, s);
        ncclRecv(in, 1, ncclFloat, 1 - r, c, s);
        expect(sync_ok(s) && in[0] == (float)(1 - r), "rank %d: buffered: send then receive, ungrouped, completes: %g", r, in[0]);
    }
    cudaFree(in);
    cudaFree(out);
    cudaFree(x);
    cudaFree(y);
    cudaFree(self);
}

static void allreduce(ncclComm_t c, cudaStream_t s, int r) {
    static const float big[RANKS] = {1e8f, -1e8f, 1.0f};
    float *f = NULL;
    int *k = NULL;
    double *d = NULL;
    unsigned char *u = NULL;
    cudaMalloc((void **)&f, sizeof(float));
    cudaMalloc((void **)&k, 2 * sizeof(int));
    cudaMalloc((void **)&d, sizeof(double));
    cudaMalloc((void **)&u, 1);
    *f = big[r];
    k[0] = 7 * r;
    k[1] = -7 * r;
    *d = r + 1;
    *u = (unsigned char)(200 + r);
    expect(ncclAllReduce(f, f, 1, ncclFloat, ncclSum, c, s) == ncclSuccess &&
               ncclAllReduce(k, k, 2, ncclInt32, ncclMax, c, s) == ncclSuccess &&
               ncclAllReduce(d, d, 1, ncclDouble, ncclAvg, c, s) == ncclSuccess &&
               ncclAllReduce(u, u, 1, ncclUint8, ncclMin, c, s) == ncclSuccess && sync_ok(s),
           "rank %d: four all-reduces posted and completed", r);
    {
        unsigned bits;
        memcpy(&bits, f, sizeof bits);
        expect(bits == 0x3f800000u, "rank %d: float sum 1e8 + -1e8 + 1 in rank order is 1 (bits %08x, value %g)", r, bits, *f);
    }
    expect(k[0] == 14 && k[1] == 0, "rank %d: int32 max of {0, 7, 14} and {0, -7, -14}: %d %d", r, k[0], k[1]);
    expect(*d == 2.0, "rank %d: double avg of 1, 2, 3: %g", r, *d);
    expect(*u == 200, "rank %d: uint8 min of 200, 201, 202: %d", r, *u);
    cudaFree(f);
    cudaFree(k);
    cudaFree(d);
    cudaFree(u);
}

/* rendezvous: a grouped exchange completes, an ungrouped one waits for ever (times out) */
static void rendezvous(ncclComm_t c, cudaStream_t s, int r) {
    float *a = NULL, *b = NULL;
    ncclResult_t e = ncclSuccess;
    cudaMalloc((void **)&a, sizeof(float));
    cudaMalloc((void **)&b, sizeof(float));
    *a = (float)r;
    if (r == 2) return;
    ncclGroupStart();
    ncclRecv(b, 1, ncclFloat, 1 - r, c, s);
    ncclSend(a, 1, ncclFloat, 1 - r, c, s);
    ncclGroupEnd();
    expect(sync_ok(s) && *b == (float)(1 - r), "rank %d: rendezvous: the grouped exchange completes: %g", r, *b);
    ncclSend(a, 1, ncclFloat, 1 - r, c, s);
    ncclRecv(b, 1, ncclFloat, 1 - r, c, s);
    expect(!sync_ok(s), "rank %d: rendezvous: send then receive, ungrouped on both ranks, does not complete", r);
    expect(ncclCommGetAsyncError(c, &e) == ncclSuccess && e == ncclRemoteError &&
               strstr(ncclGetLastError(c), "in ncclSend for rank(s) ") && strstr(ncclGetLastError(c), "PP_EMU_NCCL_TIMEOUT") &&
               strstr(ncclGetLastError(c), "ranks 0 1 wait on each other: a deadlock"),
           "rank %d: rendezvous: it times out in ncclSend, naming the deadlock of ranks 0 and 1: %s", r, ncclGetLastError(c));
}

/* the order of a scenario's steps across its processes, made explicit: rank
   r reads bytes from g_order[r][0], the others write them to g_order[r][1] */
static int g_order[RANKS][2];
static void tell(int r) {
    char b = 1;
    if (write(g_order[r][1], &b, 1) != 1) _exit(98);
}
static void hear(int r, int count) { /* count bytes to rank r (alarm() ends a lost one) */
    char b;
    while (count > 0)
        if (read(g_order[r][0], &b, 1) == 1) count--;
        else if (errno != EINTR) _exit(97);
}

/* a chain of waits 0 -> 1 -> 2, in an order no clock decides: rank 2
   receives from rank 0, tells its peers it waits (its notice), then stops
   (it neither answers nor sends anything, its connections open) until the
   others are done; rank 1 receives from rank 2 and waits, its notice out;
   only then rank 0 receives from rank 1. Rank 0's clock (timeout T) fires
   first: rank 1's is 3T and started earlier, and rank 0 only starts after
   rank 2 has gone silent, so it has been silent for T > T / 2 (the
   emulation's "stopped talking") while rank 1 has repeated its notice every
   beat (at most 0.5 s <= T / 4). Rank 0 must follow the chain to rank 2
   (not blame rank 1, and not call the cycle 0 -> 1 -> 2 -> 0 a deadlock,
   since rank 2 went silent); rank 1 names rank 2 too, by rank 0's abort. */
static void chain(ncclComm_t c, cudaStream_t s, int r) {
    float *a = NULL;
    ncclResult_t e = ncclSuccess;
    int peer = (r + 1) % RANKS;
    cudaMalloc((void **)&a, sizeof(float));
    if (r == 0) hear(0, 2); /* rank 2 has gone silent, rank 1 waits on it */
    ncclRecv(a, 1, ncclFloat, peer, c, s);
    if (r > 0) {
        int waits = 1;
        while (!c->said[peer] && (waits = cudaStreamQuery(s) == cudaErrorNotReady)) pp__emu_sleep_ms(5);
        expect(waits, "rank %d: its receive from rank %d waits, and it says so to its peers", r, peer);
        tell(0);
    }
    if (r == 2) {
        hear(2, 2); /* silent until ranks 0 and 1 have checked what they saw */
        return;
    }
    expect(!sync_ok(s), "rank %d: its receive fails", r);
    expect(ncclCommGetAsyncError(c, &e) == ncclSuccess && e == ncclRemoteError &&
               strstr(ncclGetLastError(c), "rank(s) 2, which neither answered nor left") &&
               (r != 0 || strstr(ncclGetLastError(c), "the waits (0 -> 1 -> 2) end at rank(s) 2")),
           "rank %d: it names rank 2%s: %s", r, r == 0 ? " at the end of the chain 0 -> 1 -> 2" : "", ncclGetLastError(c));
    tell(2);
}

/* bad calls fail at once, a bad call in a group runs none of it; a receive
   of the wrong size; an abort reaches the others with its reason */
static void errors(ncclComm_t c, cudaStream_t s, int r) {
    float *b = NULL;
    ncclResult_t a = ncclSuccess;
    cudaMalloc((void **)&b, 4 * sizeof(float));
    b[0] = b[1] = 1;
    expect(ncclGroupEnd() == ncclInvalidUsage, "rank %d: ncclGroupEnd without ncclGroupStart is invalid usage", r);
    expect(ncclSend(b, 1, ncclFloat, RANKS, c, s) == ncclInvalidArgument && strstr(ncclGetLastError(c), "peer 3"),
           "rank %d: a send to rank 3 of 3 is an invalid argument: %s", r, ncclGetLastError(c));
    expect(ncclAllReduce(b, b, 1, ncclBfloat16, ncclSum, c, s) == ncclInvalidArgument,
           "rank %d: a bf16 all-reduce is refused: %s", r, ncclGetLastError(c));
    ncclGroupStart();
    ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
    ncclRecv(NULL, 1, ncclFloat, 0, c, s);
    expect(ncclGroupEnd() == ncclInvalidArgument, "rank %d: a NULL buffer fails its group at ncclGroupEnd", r);
    expect(sync_ok(s) && b[0] == 1, "rank %d: nothing of that group ran (b[0] = %g)", r, b[0]);
    /* rank 0 sends 2 floats, rank 1 receives 1: rank 1 fails naming both sizes, then aborts */
    if (r == 0) ncclSend(b, 2, ncclFloat, 1, c, s);
    if (r == 1) ncclRecv(b, 1, ncclFloat, 0, c, s);
    if (r == 0 || r == 2) expect(sync_ok(s), "rank %d: its part before the mismatch completes", r);
    if (r == 1) {
        expect(!sync_ok(s), "rank 1: the stream of the mismatched receive fails");
        expect(ncclCommGetAsyncError(c, &a) == ncclSuccess && a == ncclInvalidUsage &&
                   strstr(ncclGetLastError(c), "4 bytes") && strstr(ncclGetLastError(c), "8 bytes"),
               "rank 1: invalid usage naming 4 and 8 bytes: %s", ncclGetLastError(c));
        return; /* the caller aborts */
    }
    /* ranks 0 and 2: an all-reduce that rank 1 never joins fails with its reason */
    ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c, s);
    expect(!sync_ok(s), "rank %d: the all-reduce after rank 1's abort fails", r);
    /* from rank 1's own abort, or from the other's, which passes rank 1 on */
    expect(ncclCommGetAsyncError(c, &a) == ncclSuccess && a == ncclRemoteError &&
               (strstr(ncclGetLastError(c), "rank 1 aborted") || strstr(ncclGetLastError(c), "because of rank 1:")) &&
               strstr(ncclGetLastError(c), "4 bytes"),
           "rank %d: a remote error naming rank 1 and its reason: %s", r, ncclGetLastError(c));
}

static int child(int which, int r, ncclUniqueId id) {
    ncclComm_t c = NULL;
    cudaStream_t s;
    ncclResult_t e;
    int n = 0, rank = -1;
    if (which == 4 && r == 1) { /* the chain: rank 1's clock is 3 x the others' (read at init) */
        char t[32];
        snprintf(t, sizeof t, "%g", 3 * atof(getenv("PP_EMU_NCCL_TIMEOUT")));
        setenv("PP_EMU_NCCL_TIMEOUT", t, 1);
    }
    e = ncclCommInitRank(&c, RANKS, id, r);
    expect(e == ncclSuccess, "rank %d: ncclCommInitRank: %s", r, ncclGetLastError(NULL));
    if (e != ncclSuccess) return 1;
    expect(ncclCommCount(c, &n) == ncclSuccess && n == RANKS && ncclCommUserRank(c, &rank) == ncclSuccess && rank == r,
           "rank %d: count %d, rank %d", r, n, rank);
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (which == 0) p2p(c, s, r);
    if (which == 1) allreduce(c, s, r);
    if (which == 2) errors(c, s, r);
    if (which == 3) rendezvous(c, s, r);
    if (which == 4) chain(c, s, r);
    if (which == 2 || (which == 3 && r < 2) || which == 4) ncclCommAbort(c); /* failed: abort; rank 2 of 3 waits in destroy */
    else expect(ncclCommDestroy(c) == ncclSuccess, "rank %d: destroy", r);
    cudaStreamDestroy(s);
    return 0;
}

/* runs scenario `which` on RANKS forked processes; their findings become
   checks; returns its seconds */
static double scenario(int which, const char *name) {
    group g;
    int fds[2], r, status;
    pid_t pid[RANKS];
    char buf[65536];
    size_t got = 0;
    ncclUniqueId id;
    double t0 = pp__emu_now();
    {
        uint16_t port = 0;
        char env[64];
        int fd = pp__emu_listen(htonl(INADDR_LOOPBACK), 0, &port);
        close(fd);
        snprintf(env, sizeof env, "127.0.0.1:%d", ntohs(port));
        setenv("NCCL_COMM_ID", env, 1);
    }
    group_begin(&g, name);
    for (r = 0; r < RANKS; r++) g_order[r][0] = g_order[r][1] = -1;
    for (r = 0; r < RANKS; r++)
        if (pipe(g_order[r]) != 0) break;
    if (!check(&g, r == RANKS && ncclGetUniqueId(&id) == ncclSuccess && pipe(fds) == 0, "id and pipes: %s",
               ncclGetLastError(NULL))) {
        group_end(&g, "no id");
        return 0;
    }
    fflush(stdout);
    for (r = 0; r < RANKS; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            close(fds[0]);
            g_pipe = fds[1];
            /* a hang is a failure, not a stuck test; the clocks above scale with this machine, so does this */
            alarm(30 + 4 * (getenv("PP_EMU_NCCL_TIMEOUT") ? (unsigned)atoi(getenv("PP_EMU_NCCL_TIMEOUT")) : 0u));
            _exit(child(which, r, id));
        }
    }
    close(fds[1]);
    for (r = 0; r < RANKS; r++) {
        close(g_order[r][0]);
        close(g_order[r][1]);
    }
    for (;;) {
        ssize_t k = read(fds[0], buf + got, sizeof buf - 1 - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fds[0]);
    buf[got] = 0;
    for (r = 0; r < RANKS; r++) {
        waitpid(pid[r], &status, 0);
        check(&g, WIFEXITED(status) && WEXITSTATUS(status) == 0, "rank %d ended with status %d (signal %d)", r,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    {
        char *line = strtok(buf, "\n");
        for (; line; line = strtok(NULL, "\n")) check(&g, strncmp(line, "PASS", 4) == 0, "%s", line + 5);
    }
    group_end(&g, "%d processes, %.2f s", RANKS, pp__emu_now() - t0);
    return pp__emu_now() - t0;
}

int main(void) {
    double base = 0, t;
    char timeout[32], name[400];
    signal(SIGPIPE, SIG_IGN);
    t = scenario(0, "emulated NCCL, 3 processes: a ring group receiving first, two sends to one peer meet their receives in posting order, a send to oneself");
    if (t > base) base = t;
    t = scenario(1, "emulated NCCL, 3 processes: all-reduce in rank order (float 1e8 - 1e8 + 1 = 1 on every rank), int32 max, double avg, uint8 min");
    if (t > base) base = t;
    t = scenario(2, "emulated NCCL, 3 processes: bad calls refused, a bad group runs nothing, a wrong-size receive fails with both sizes, an abort reaches the others with its reason");
    if (t > base) base = t;
    /* The timeouts below are a margin over how long this machine took for a
       whole scenario above (start-up, bootstrap, every call): 50 x that, and
       at least 2 s (4 s for the chain, whose beat is 0.5 s). Where it takes
       10x longer, the clocks wait 10x longer. */
    snprintf(timeout, sizeof timeout, "%.0f", ceil(fmax(2, 50 * base)));
    setenv("PP_EMU_NCCL_RENDEZVOUS", "1", 1);
    setenv("PP_EMU_NCCL_TIMEOUT", timeout, 1);
    snprintf(name, sizeof name, "emulated NCCL, 3 processes, PP_EMU_NCCL_RENDEZVOUS=1: a grouped exchange completes, the same calls ungrouped wait for each other, time out (PP_EMU_NCCL_TIMEOUT=%s) and are named a deadlock", timeout);
    scenario(3, name);
    unsetenv("PP_EMU_NCCL_RENDEZVOUS");
    snprintf(timeout, sizeof timeout, "%.0f", ceil(fmax(4, 50 * base)));
    setenv("PP_EMU_NCCL_TIMEOUT", timeout, 1);
    snprintf(name, sizeof name, "emulated NCCL, 3 processes: a chain of waits 0 -> 1 -> 2 where rank 2 stops while waiting, set up in that order; rank 0's clock (PP_EMU_NCCL_TIMEOUT=%s, rank 1's 3 x that) names rank 2, not the waiter rank 1", timeout);
    scenario(4, name);
    printf("%d passed, %d failed\n", g_groups_passed, g_groups_failed);
    return g_groups_failed ? 1 : 0;
}
