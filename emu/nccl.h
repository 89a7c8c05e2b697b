/* emu/nccl.h - NCCL emulated across real processes, for the host
   runtimes (emu/mock, emu/gpu). Header-only: it is included by
   the one translation unit that calls NCCL (pp_cuda.cu) and is written on
   the CUDA runtime API plus pp_emu_stream_poll (pp_emu_hostop.h), so it runs
   on either runtime. Compile as C++ (the runtimes are C++).

   What it emulates (NCCL 2.28's names, values and blocking rules):
   - ncclGetUniqueId / ncclCommInitRank with NCCL's bootstrap: with
     NCCL_COMM_ID=host:port set, every rank gets the same id and rank 0's
     ncclCommInitRank runs the bootstrap root there; without it,
     ncclGetUniqueId starts the root on a free port of 127.0.0.1 in this
     process (a thread, as NCCL does) and the id carries that address (the
     MPI_Bcast path). Every rank then tells the root its own listening port,
     gets everyone's, and connects to every other rank: one TCP connection
     per pair, loopback only.
   - ncclSend / ncclRecv: buffered sends (a send completes when its bytes are
     copied out of the user's buffer), so grouped send/recv never deadlock
     however the ops are ordered in the group. The k-th send a->b meets the
     k-th receive on b from a, the order in which they are posted, as NCCL
     pairs them; sizes must agree. PP_EMU_NCCL_RENDEZVOUS=1 is stricter: a
     send completes only once its receive has been posted (reached in its
     stream), the rule pp_sched_check_deadlock assumes and NCCL's for sends
     larger than its buffers, so a program that needs a group (or a
     buffer) to make progress hangs here (and times out) as it would there.
   - ncclAllReduce: every rank sends its input to every other and each sums
     them in rank order (0, 1, ..., n-1), so all ranks get the same bits, and
     a sum where one rank holds the only non-zero equals that value exactly.
     Sum, prod, max, min, avg over int8..uint64, float, double.
   - ncclGroupStart/End: the ops of a group are posted at ncclGroupEnd as
     one stream operation per (communicator, stream) that starts all its
     sends, then completes its receives in any order.
   - ncclCommDestroy (flushes, says goodbye, waits for the peers' goodbyes),
     ncclCommAbort (tells every peer why, closes), ncclCommGetAsyncError,
     ncclGetLastError, ncclGetErrorString, ncclCommUserRank / Count /
     CuDevice, ncclGetVersion.

   Failure: a peer whose connection closes without a goodbye (it died), a
   peer that aborts (its reason travels with it), a size mismatch or a
   timeout fails the communicator: every pending and later operation of it
   fails (the stream's poll op returns -1), ncclCommGetAsyncError returns
   the error and ncclGetLastError says which rank and why. The timeout is
   the last resort for a peer that neither answers nor dies (or never
   connects to the bootstrap): PP_EMU_NCCL_TIMEOUT seconds of waiting in one
   operation, default 300. It names the root, not the nearest waiter: a
   rank that has waited a while tells its peers whom it waits on (and
   repeats it while it waits), so a rank whose clock fires follows the
   chain of waits to the rank that neither answered nor sent anything, or
   names a deadlock when the waits go round. An abort carries the rank the
   failure started at and its first message, so a rank that takes the
   abort names that root, not the rank that passed the abort on. (Real
   NCCL names no root; the emulation does so its tests can say which rank
   hung.)

   Test hooks (failure injection, read by the rank they name):
     PP_EMU_NCCL_FAIL_RANK=r PP_EMU_NCCL_FAIL_AT=init  rank r's ncclCommInitRank fails before it contacts anyone
     PP_EMU_NCCL_FAIL_RANK=r PP_EMU_NCCL_FAIL_AT=N     rank r's N-th send, receive or all-reduce (counted from 1
                                                      over the process, in stream order) fails when it runs
     PP_EMU_NCCL_FAIL_MODE=kill                       instead of failing, the process kills itself (SIGKILL)
                                                      there: no abort, no goodbye, as a crash
     PP_EMU_NCCL_FAIL_MODE=hang                       instead, the process stops there, its connections open,
                                                      for PP_EMU_NCCL_TIMEOUT + 2 s, then exits with status 3

   Device buffers are read and written from the host operation directly:
   both host runtimes keep device memory in host memory. Those functions
   are left out of the CUDA emulator's per-access hooks (PP__EMU_MOVES_BYTES:
   no sanitizer hooks), which would report host code touching device
   memory: here they stand for NCCL's own kernels. Instead each buffer is
   handed whole to pp_emu_device_access before it is read or written, so
   the emulator checks it as a kernel's access: inside one live allocation
   (a receive longer than its buffer is out of bounds), and ordered by the
   streams after the operations that last wrote or read it. Not emulated:
   other collectives, communicator splitting and configs, non-blocking
   communicators, NCCL's joining of the streams of one group (each stream's
   part of a group runs in its own stream order), more than one machine. */
#ifndef PP_EMU_NCCL_H
#define PP_EMU_NCCL_H
#include <cuda_runtime.h>
#include "pp_emu_hostop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NCCL_MAJOR 2
#define NCCL_MINOR 28
#define NCCL_PATCH 0
#define NCCL_VERSION_CODE 22800
#define NCCL_UNIQUE_ID_BYTES 128

typedef struct ncclComm *ncclComm_t;
typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;
typedef enum {
    ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2, ncclInternalError = 3,
    ncclInvalidArgument = 4, ncclInvalidUsage = 5, ncclRemoteError = 6, ncclInProgress = 7, ncclNumResults = 8
} ncclResult_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4, ncclNumOps = 5 } ncclRedOp_t;
typedef enum {
    ncclInt8 = 0, ncclChar = 0, ncclUint8 = 1, ncclInt32 = 2, ncclInt = 2, ncclUint32 = 3, ncclInt64 = 4,
    ncclUint64 = 5, ncclFloat16 = 6, ncclHalf = 6, ncclFloat32 = 7, ncclFloat = 7, ncclFloat64 = 8,
    ncclDouble = 8, ncclBfloat16 = 9, ncclNumTypes = 10
} ncclDataType_t;

/* ---- private: time, errors, injection ---- */

enum { PP__EMU_P2P = 1, PP__EMU_COLL = 2, PP__EMU_ABORT = 3, PP__EMU_BYE = 4, PP__EMU_READY = 5, PP__EMU_WAITING = 6 };
enum { PP__EMU_SEND, PP__EMU_RECV, PP__EMU_ALLREDUCE };
#define PP__EMU_MAGIC 0x50504e43u /* every header on the wire starts with it */

typedef struct pp__emu_msg { struct pp__emu_msg *next; size_t len; char *data; } pp__emu_msg;
typedef struct { pp__emu_msg *head, *tail; } pp__emu_queue;
typedef struct { uint32_t magic, type; uint64_t len; } pp__emu_hdr;

typedef struct {
    int fd;  /* -1 once closed */
    int bye; /* it said goodbye (ncclCommDestroy): its end of file is no failure */
    long ready_in, ready_used; /* rendezvous: its receives posted for my sends, and those my sends took */
    pp__emu_queue p2p, coll; /* messages received, not yet matched */
    pp__emu_msg *waits; /* its last "waiting on" notice: nranks flags; NULL: it waits on nobody */
    double heard;       /* when its last bytes arrived */
    pp__emu_hdr hdr;         /* the message being read */
    size_t hdr_got, cur_got;
    pp__emu_msg *cur;
    char *out; /* bytes not yet written to the socket */
    size_t out_len, out_off, out_cap;
} pp__emu_peer;

struct ncclComm {
    int rank, nranks, cuda_device;
    pp__emu_peer *peer; /* [nranks]; peer[rank] is only an inbox (sends to self) */
    pthread_mutex_t mu;
    int refs;   /* the user's handle and every queued operation */
    int closed; /* ncclCommDestroy or ncclCommAbort was called */
    int rendezvous; /* PP_EMU_NCCL_RENDEZVOUS=1: a send completes when its receive is posted */
    ncclResult_t async;
    char last[512];
    int root;        /* the rank the failure started at (-1: none, e.g. a deadlock or a usage error) */
    char cause[512]; /* the message where it started (ours, or the one an abort brought) */
    double timeout;
    int *want;            /* [nranks]: how many of our waiting batches wait on each rank */
    unsigned char *said;  /* [nranks]: the "waiting on" flags we last told our peers */
    double said_at;
};

typedef struct {
    int kind, peer, done;
    const void *sbuf;
    void *rbuf;
    size_t count, bytes;
    ncclDataType_t type;
    ncclRedOp_t red;
    pp__emu_msg **got; /* all-reduce: [nranks] inputs as they arrive */
} pp__emu_op;

typedef struct { /* one stream operation: a group's ops on one communicator and stream */
    ncclComm_t comm;
    cudaStream_t stream;
    int n, started;
    double t0;
    pp__emu_op *ops;
    unsigned char *mine; /* [2 nranks]: the ranks its "waiting on" share names, then scratch */
} pp__emu_batch;

/* functions that move the user's device bytes (see the top) */
#define PP__EMU_MOVES_BYTES __attribute__((no_sanitize_address, no_sanitize_thread))

static thread_local char pp__emu_last[512]; /* ncclGetLastError(NULL) */
static thread_local struct { int depth, n, cap; ncclResult_t err; pp__emu_batch *pending; } pp__emu_group;
static long pp__emu_nth; /* send/recv/all-reduce ops run by this process, for PP_EMU_NCCL_FAIL_AT */
/* bootstrap root threads still running in this process (a mutex, not atomics:
   the emulator's instrumented build has no hooks for atomic builtins) */
static int pp__emu_roots;
static pthread_mutex_t pp__emu_roots_mu = PTHREAD_MUTEX_INITIALIZER;
static inline int pp__emu_roots_add(int k) {
    int n;
    pthread_mutex_lock(&pp__emu_roots_mu);
    n = pp__emu_roots += k;
    pthread_mutex_unlock(&pp__emu_roots_mu);
    return n;
}

static inline double pp__emu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static inline void pp__emu_sleep_ms(int ms) {
    struct timespec t;
    t.tv_sec = 0;
    t.tv_nsec = 1000000L * ms;
    nanosleep(&t, NULL);
}
static inline double pp__emu_timeout(void) {
    const char *s = getenv("PP_EMU_NCCL_TIMEOUT");
    double v = s ? atof(s) : 0;
    return v > 0 ? v : 300;
}
static inline int pp__emu_ms_left(double deadline) {
    double l = deadline - pp__emu_now();
    return l <= 0 ? 0 : l > 1e6 ? 1000000000 : (int)(l * 1e3) + 1;
}

/* the thread's last error (and the communicator's, when there is one) */
static inline ncclResult_t pp__emu_err(ncclComm_t c, ncclResult_t r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pp__emu_last, sizeof pp__emu_last, fmt, ap);
    va_end(ap);
    if (c) snprintf(c->last, sizeof c->last, "%s", pp__emu_last);
    return r;
}
/* the communicator fails, because of rank root (-1: of no rank): the first
   reason is kept, and is the cause an abort of ours tells the peers */
static inline void pp__emu_fail(ncclComm_t c, int root, ncclResult_t r, const char *fmt, ...) {
    va_list ap;
    if (c->async != ncclSuccess) return;
    c->async = r;
    c->root = root;
    va_start(ap, fmt);
    vsnprintf(c->last, sizeof c->last, fmt, ap);
    va_end(ap);
    snprintf(c->cause, sizeof c->cause, "%s", c->last);
    snprintf(pp__emu_last, sizeof pp__emu_last, "%s", c->last);
}

/* PP_EMU_NCCL_FAIL_*: 1 when rank's nth op (0: its init) is to fail; kill mode does not return */
static inline int pp__emu_inject(int rank, long nth) {
    const char *r = getenv("PP_EMU_NCCL_FAIL_RANK"), *at = getenv("PP_EMU_NCCL_FAIL_AT"), *mode;
    if (!r || !at || atoi(r) != rank) return 0;
    if (nth == 0 ? strcmp(at, "init") != 0 : atol(at) != nth) return 0;
    mode = getenv("PP_EMU_NCCL_FAIL_MODE");
    if (mode && !strcmp(mode, "kill")) {
        fprintf(stderr, "emulated NCCL: rank %d kills itself at %s%s (PP_EMU_NCCL_FAIL_AT, _MODE=kill)\n", rank,
                nth ? "op " : "", at);
        fflush(stderr);
        raise(SIGKILL);
    }
    if (mode && !strcmp(mode, "hang")) {
        double until = pp__emu_now() + pp__emu_timeout() + 2;
        fprintf(stderr, "emulated NCCL: rank %d stops at %s%s (PP_EMU_NCCL_FAIL_AT, _MODE=hang)\n", rank,
                nth ? "op " : "", at);
        fflush(stderr);
        while (pp__emu_now() < until) pp__emu_sleep_ms(10);
        _exit(3);
    }
    return 1;
}

/* ---- private: sockets ---- */

static inline void pp__emu_nonblock(int fd) {
    int one = 1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* a listening socket at addr:port (network order; port 0: any free one); -1 and errno */
static inline int pp__emu_listen(uint32_t addr, uint16_t port, uint16_t *got_port) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = addr;
    a.sin_port = port;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 256) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (got_port) *got_port = a.sin_port;
    return fd;
}

/* connects to addr:port; a refused connection is retried until deadline (the root may not listen yet) */
static inline int pp__emu_connect(uint32_t addr, uint16_t port, double deadline) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = addr;
    a.sin_port = port;
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), e;
        if (fd < 0) return -1;
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
        e = errno;
        close(fd);
        errno = e;
        if ((e != ECONNREFUSED && e != EINTR) || pp__emu_now() >= deadline) return -1;
        pp__emu_sleep_ms(10);
    }
}

/* all n bytes read (wr = 0) or written (wr = 1) by deadline on a blocking
   socket; 0 ok, -1 with errno (0 for end of file, ETIMEDOUT) */
static inline int pp__emu_io(int fd, void *buf, size_t n, int wr, double deadline) {
    char *p = (char *)buf;
    while (n > 0) {
        struct pollfd q;
        ssize_t k;
        q.fd = fd;
        q.events = wr ? POLLOUT : POLLIN;
        q.revents = 0;
        if (poll(&q, 1, pp__emu_ms_left(deadline)) == 0) { errno = ETIMEDOUT; return -1; }
        k = wr ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k == 0) { errno = 0; return -1; }
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}
static inline const char *pp__emu_why(void) { return errno ? strerror(errno) : "the other end closed the connection"; }

/* accepts one connection by deadline; -1 with errno ETIMEDOUT when none came */
static inline int pp__emu_accept(int lfd, double deadline) {
    struct pollfd q;
    q.fd = lfd;
    q.events = POLLIN;
    q.revents = 0;
    if (poll(&q, 1, pp__emu_ms_left(deadline)) <= 0) { errno = ETIMEDOUT; return -1; }
    return accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
}

/* ---- private: the bootstrap root (a thread, as NCCL's) ---- */

typedef struct { pp__emu_hdr h; int32_t rank, nranks; uint16_t port, pad; } pp__emu_hello;
typedef struct { char magic[8]; uint32_t addr; uint16_t port, root_running; uint64_t token; } pp__emu_id;
typedef struct { int fd; double timeout; } pp__emu_root_arg;

/* gathers every rank's listening port and sends each the table (or why it failed) */
static inline void *pp__emu_root(void *p) {
    pp__emu_root_arg arg = *(pp__emu_root_arg *)p;
    double deadline = pp__emu_now() + arg.timeout;
    int n = -1, got = 0, i, stray = -1;
    int *fds = NULL;
    uint16_t *ports = NULL;
    char msg[400] = "";
    free(p);
    while (n < 0 || got < n) {
        pp__emu_hello h;
        int fd = pp__emu_accept(arg.fd, deadline);
        if (fd < 0) {
            size_t k;
            if (n < 0) break; /* nobody came: nobody to tell */
            k = (size_t)snprintf(msg, sizeof msg, "the bootstrap root waited %.0f s (PP_EMU_NCCL_TIMEOUT) and %d of %d "
                                 "ranks connected; missing: rank", arg.timeout, got, n);
            for (i = 0; i < n && k < sizeof msg - 16; i++)
                if (fds[i] < 0) k += (size_t)snprintf(msg + k, sizeof msg - k, " %d", i);
            break;
        }
        if (pp__emu_io(fd, &h, sizeof h, 0, deadline) != 0 || h.h.magic != PP__EMU_MAGIC) { close(fd); continue; }
        if (n < 0) {
            if (h.nranks < 1 || h.nranks > 65536) { stray = fd; snprintf(msg, sizeof msg, "bad rank count %d", h.nranks); break; }
            n = h.nranks;
            fds = (int *)malloc(sizeof(int) * (size_t)n);
            ports = (uint16_t *)calloc((size_t)n, sizeof(uint16_t));
            if (!fds || !ports) { stray = fd; n = 0; snprintf(msg, sizeof msg, "bootstrap root: out of memory"); break; }
            for (i = 0; i < n; i++) fds[i] = -1;
        }
        if (h.nranks != n || h.rank < 0 || h.rank >= n || fds[h.rank] >= 0) {
            stray = fd;
            snprintf(msg, sizeof msg, "a rank said it is rank %d of %d, the first said %d ranks%s", h.rank, h.nranks, n,
                     h.rank >= 0 && h.rank < n && fds[h.rank] >= 0 ? " (that rank connected twice)" : "");
            break;
        }
        fds[h.rank] = fd;
        ports[h.rank] = h.port;
        got++;
    }
    /* closed before the tables go out: a rank that is quick to make its next
       communicator at the same NCCL_COMM_ID must not reach this one */
    close(arg.fd);
    for (i = -1; i < (n > 0 ? n : 0); i++) {
        int fd = i < 0 ? stray : fds[i];
        pp__emu_hdr t;
        if (fd < 0) continue;
        t.magic = PP__EMU_MAGIC;
        t.type = msg[0] ? 1 : 0;
        t.len = msg[0] ? strlen(msg) : sizeof(uint16_t) * (size_t)n;
        if (pp__emu_io(fd, &t, sizeof t, 1, deadline + 10) == 0)
            (void)pp__emu_io(fd, msg[0] ? (void *)msg : (void *)ports, (size_t)t.len, 1, deadline + 10);
        close(fd);
    }
    free(fds);
    free(ports);
    pp__emu_roots_add(-1);
    return NULL;
}

/* a process that hosts the root must not exit (or fail on) before the root
   has answered everyone: ncclCommInitRank waits for it before returning */
static inline void pp__emu_wait_roots(double deadline) {
    while (pp__emu_roots_add(0) > 0 && pp__emu_now() < deadline) pp__emu_sleep_ms(1);
}

static inline int pp__emu_start_root(int fd) {
    pthread_t t;
    pp__emu_root_arg *a = (pp__emu_root_arg *)malloc(sizeof *a);
    if (!a) return -1;
    a->fd = fd;
    a->timeout = pp__emu_timeout();
    pp__emu_roots_add(1);
    if (pthread_create(&t, NULL, pp__emu_root, a) != 0) {
        pp__emu_roots_add(-1);
        free(a);
        return -1;
    }
    pthread_detach(t);
    return 0;
}

/* ---- private: the data path ---- */

static inline void pp__emu_push(pp__emu_queue *q, pp__emu_msg *m) {
    m->next = NULL;
    if (q->tail) q->tail->next = m; else q->head = m;
    q->tail = m;
}
static inline pp__emu_msg *pp__emu_pop(pp__emu_queue *q) {
    pp__emu_msg *m = q->head;
    if (m) { q->head = m->next; if (!q->head) q->tail = NULL; }
    return m;
}
static inline pp__emu_msg *pp__emu_new_msg(size_t len) {
    pp__emu_msg *m = (pp__emu_msg *)malloc(sizeof *m + (len ? len : 1));
    if (m) { m->next = NULL; m->len = len; m->data = (char *)(m + 1); }
    return m;
}
static inline void pp__emu_free_queue(pp__emu_queue *q) {
    pp__emu_msg *m;
    while ((m = pp__emu_pop(q)) != NULL) free(m);
}

/* a message to peer j, queued; written as the socket takes it */
PP__EMU_MOVES_BYTES static inline int pp__emu_out(pp__emu_peer *p, uint32_t type, const void *data, size_t len) {
    pp__emu_hdr h;
    size_t need;
    if (p->out_off == p->out_len) p->out_off = p->out_len = 0;
    need = p->out_len + sizeof h + len;
    if (need > p->out_cap) {
        size_t cap = p->out_cap ? p->out_cap : 4096;
        char *o;
        while (cap < need) cap *= 2;
        if (!(o = (char *)realloc(p->out, cap))) return -1;
        p->out = o;
        p->out_cap = cap;
    }
    h.magic = PP__EMU_MAGIC;
    h.type = type;
    h.len = len;
    memcpy(p->out + p->out_len, &h, sizeof h);
    if (len) memcpy(p->out + p->out_len + sizeof h, data, len);
    p->out_len = need;
    return 0;
}

static inline void pp__emu_close_peer(pp__emu_peer *p) {
    if (p->fd >= 0) close(p->fd);
    p->fd = -1;
    if (p->cur) { free(p->cur); p->cur = NULL; }
}

/* peer j's connection ended (err: errno, 0 for end of file) */
static inline void pp__emu_lost(ncclComm_t c, int j, int err) {
    pp__emu_peer *p = &c->peer[j];
    pp__emu_close_peer(p);
    if (!p->bye && !c->closed)
        pp__emu_fail(c, j, ncclRemoteError, "rank %d: rank %d closed its connection without ncclCommDestroy or "
                     "ncclCommAbort (%s): that process died or exited", c->rank, j,
                     err ? strerror(err) : "end of file");
}

static inline void pp__emu_deliver(ncclComm_t c, int j, uint32_t type, pp__emu_msg *m) {
    if (type == PP__EMU_P2P) { pp__emu_push(&c->peer[j].p2p, m); return; }
    if (type == PP__EMU_COLL) { pp__emu_push(&c->peer[j].coll, m); return; }
    if (type == PP__EMU_WAITING) { /* a notice replaces the last; an empty one: it waits no more */
        free(c->peer[j].waits);
        c->peer[j].waits = m->len == (size_t)c->nranks ? m : NULL;
        if (!c->peer[j].waits) free(m);
        return;
    }
    if (type == PP__EMU_ABORT && !c->closed && c->async == ncclSuccess) {
        /* int32 root, then the cause: we fail because of the root, not of
           the rank that passed the abort on (no root: the aborter is it) */
        int32_t root = -1;
        int k = m->len > sizeof root ? (int)(m->len - sizeof root) : 0;
        if (m->len >= sizeof root) memcpy(&root, m->data, sizeof root);
        if (root < 0 || root >= c->nranks) root = j;
        if (k > (int)sizeof c->cause - 1) k = (int)sizeof c->cause - 1;
        if (root != j)
            pp__emu_fail(c, root, ncclRemoteError, "rank %d: rank %d aborted the communicator because of rank %d: %.*s",
                         c->rank, j, (int)root, k, m->data + sizeof root);
        else
            pp__emu_fail(c, j, ncclRemoteError, "rank %d: rank %d aborted the communicator: %.*s", c->rank, j, k,
                         m->data + sizeof root);
        memcpy(c->cause, m->data + sizeof root, (size_t)k);
        c->cause[k] = 0;
    }
    if (type == PP__EMU_BYE) c->peer[j].bye = 1;
    if (type == PP__EMU_READY) c->peer[j].ready_in++;
    free(m);
}

/* writes what the sockets take, reads what has arrived; never blocks (mutex held) */
static inline void pp__emu_progress(ncclComm_t c) {
    int j;
    for (j = 0; j < c->nranks; j++) {
        pp__emu_peer *p = &c->peer[j];
        while (p->fd >= 0 && p->out_off < p->out_len) {
            ssize_t k = send(p->fd, p->out + p->out_off, p->out_len - p->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0) { p->out_off += (size_t)k; continue; }
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
            pp__emu_lost(c, j, k < 0 ? errno : 0);
        }
        while (p->fd >= 0) {
            ssize_t k;
            int header = p->hdr_got < sizeof p->hdr;
            if (header) k = recv(p->fd, (char *)&p->hdr + p->hdr_got, sizeof p->hdr - p->hdr_got, MSG_DONTWAIT);
            else k = recv(p->fd, p->cur->data + p->cur_got, p->cur->len - p->cur_got, MSG_DONTWAIT);
            if (k == 0 && (header || p->cur->len > p->cur_got)) { pp__emu_lost(c, j, 0); break; }
            if (k < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
                pp__emu_lost(c, j, errno);
                break;
            }
            if (k > 0) p->heard = pp__emu_now();
            if (header) {
                p->hdr_got += (size_t)k;
                if (p->hdr_got < sizeof p->hdr) continue;
                if (p->hdr.magic != PP__EMU_MAGIC || !(p->cur = pp__emu_new_msg((size_t)p->hdr.len))) {
                    pp__emu_close_peer(p);
                    pp__emu_fail(c, j, ncclInternalError, "rank %d: a corrupt message (or no memory for %llu bytes) from rank %d",
                                 c->rank, (unsigned long long)p->hdr.len, j);
                    break;
                }
                p->cur_got = 0;
            } else {
                p->cur_got += (size_t)k;
            }
            if (p->cur_got == p->cur->len) {
                pp__emu_msg *m = p->cur;
                p->cur = NULL;
                p->hdr_got = 0;
                pp__emu_deliver(c, j, p->hdr.type, m);
            }
        }
    }
}

static inline size_t pp__emu_type_size(ncclDataType_t t) {
    switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

template <typename T>
static inline void pp__emu_reduce_as(void *acc, const void *x, size_t n, ncclRedOp_t op) {
    T *a = (T *)acc;
    const T *b = (const T *)x;
    size_t i;
    for (i = 0; i < n; i++)
        switch (op) {
        case ncclProd: a[i] = a[i] * b[i]; break;
        case ncclMax: a[i] = b[i] > a[i] ? b[i] : a[i]; break;
        case ncclMin: a[i] = b[i] < a[i] ? b[i] : a[i]; break;
        default: a[i] = a[i] + b[i]; break; /* sum, avg */
        }
}
template <typename T> static inline void pp__emu_divide_as(void *acc, size_t n, int by) {
    size_t i;
    for (i = 0; i < n; i++) ((T *)acc)[i] = (T)(((T *)acc)[i] / (T)by);
}
static inline void pp__emu_reduce(void *acc, const void *x, size_t n, ncclDataType_t t, ncclRedOp_t op) {
    switch (t) {
    case ncclInt8: pp__emu_reduce_as<int8_t>(acc, x, n, op); break;
    case ncclUint8: pp__emu_reduce_as<uint8_t>(acc, x, n, op); break;
    case ncclInt32: pp__emu_reduce_as<int32_t>(acc, x, n, op); break;
    case ncclUint32: pp__emu_reduce_as<uint32_t>(acc, x, n, op); break;
    case ncclInt64: pp__emu_reduce_as<int64_t>(acc, x, n, op); break;
    case ncclUint64: pp__emu_reduce_as<uint64_t>(acc, x, n, op); break;
    case ncclFloat32: pp__emu_reduce_as<float>(acc, x, n, op); break;
    default: pp__emu_reduce_as<double>(acc, x, n, op); break;
    }
}
static inline void pp__emu_average(void *acc, size_t n, ncclDataType_t t, int by) {
    switch (t) {
    case ncclInt8: pp__emu_divide_as<int8_t>(acc, n, by); break;
    case ncclUint8: pp__emu_divide_as<uint8_t>(acc, n, by); break;
    case ncclInt32: pp__emu_divide_as<int32_t>(acc, n, by); break;
    case ncclUint32: pp__emu_divide_as<uint32_t>(acc, n, by); break;
    case ncclInt64: pp__emu_divide_as<int64_t>(acc, n, by); break;
    case ncclUint64: pp__emu_divide_as<uint64_t>(acc, n, by); break;
    case ncclFloat32: pp__emu_divide_as<float>(acc, n, by); break;
    default: pp__emu_divide_as<double>(acc, n, by); break;
    }
}

static inline const char *pp__emu_op_name(int kind) {
    return kind == PP__EMU_SEND ? "ncclSend" : kind == PP__EMU_RECV ? "ncclRecv" : "ncclAllReduce";
}

static inline void pp__emu_unref(ncclComm_t c) {
    int j, last;
    pthread_mutex_lock(&c->mu);
    last = --c->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (!last) return;
    for (j = 0; j < c->nranks; j++) {
        pp__emu_close_peer(&c->peer[j]);
        pp__emu_free_queue(&c->peer[j].p2p);
        pp__emu_free_queue(&c->peer[j].coll);
        free(c->peer[j].out);
        free(c->peer[j].waits);
    }
    free(c->peer);
    free(c->want);
    free(c->said);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static inline void pp__emu_free_batch(pp__emu_batch *b) {
    int i, j;
    for (i = 0; i < b->n; i++)
        if (b->ops[i].got) {
            for (j = 0; j < b->comm->nranks; j++) free(b->ops[i].got[j]);
            free(b->ops[i].got);
        }
    free(b->ops);
    free(b->mine);
    pp__emu_unref(b->comm);
    free(b);
}

/* a message a receive or an all-reduce waits for from peer j: 1 got it,
   0 not yet, -1 the communicator failed (mutex held) */
static inline int pp__emu_take(ncclComm_t c, pp__emu_op *op, int j, pp__emu_msg **out) {
    pp__emu_queue *q = op->kind == PP__EMU_RECV ? &c->peer[j].p2p : &c->peer[j].coll;
    pp__emu_msg *m = pp__emu_pop(q);
    if (!m) {
        if (j != c->rank && c->peer[j].fd < 0)
            pp__emu_fail(c, j, ncclRemoteError, "rank %d: %s waits for %zu bytes from rank %d, which has left the "
                         "communicator", c->rank, pp__emu_op_name(op->kind), op->bytes, j);
        return c->async == ncclSuccess ? 0 : -1;
    }
    if (m->len != op->bytes) {
        pp__emu_fail(c, -1, ncclInvalidUsage, "rank %d: %s of %zu bytes met rank %d's %s of %zu bytes (they pair in the "
                     "order they are posted)", c->rank, pp__emu_op_name(op->kind), op->bytes, j,
                     op->kind == PP__EMU_RECV ? "ncclSend" : "ncclAllReduce", m->len);
        free(m);
        return -1;
    }
    *out = m;
    return 1;
}

/* ---- private: who waits on whom ----
   A rank whose clock runs out while it waits on a peer that itself waits
   must not blame that peer: in a chain of waits the clocks fire in any
   order, and the first to fire may be far from the rank that hung. So a
   batch that has waited one beat (a short wait says nothing) tells every
   peer which ranks it waits on, again every beat while it waits (a notice
   that stops coming means its rank stopped too), and that it waits no more
   when it ends. At its timeout a rank follows these notices from the ranks
   it waits on to the ranks where the waits end: those that wait on nobody,
   or went silent. They are the root it names and its abort carries (an
   abort's receivers name that root, not the rank that passed it on); a
   chain that comes back on itself is a deadlock, and is named one. */

static inline double pp__emu_beat(ncclComm_t c) { return c->timeout / 8 < 0.5 ? c->timeout / 8 : 0.5; }

/* the ranks batch b waits on now, as flags on[nranks]: its receives, its
   rendezvous sends and the all-reduce inputs not yet in (itself included
   when it waits on itself); 1 when it waits on another rank */
static inline int pp__emu_wait_set(const pp__emu_batch *b, unsigned char *on) {
    ncclComm_t c = b->comm;
    int i, j, other = 0;
    memset(on, 0, (size_t)c->nranks);
    for (i = 0; i < b->n; i++) {
        const pp__emu_op *op = &b->ops[i];
        if (op->done) continue;
        if (op->kind != PP__EMU_ALLREDUCE) on[op->peer] = 1;
        else
            for (j = 0; j < c->nranks; j++) on[j] |= !op->got || !op->got[j];
    }
    for (j = 0; j < c->nranks; j++) other |= on[j] && j != c->rank;
    return other;
}

/* updates b's share of this rank's notice (ended: b waits no more) and
   sends the notice when it changed, or a beat after the last (mutex held) */
static inline void pp__emu_announce(pp__emu_batch *b, int ended) {
    ncclComm_t c = b->comm;
    int n = c->nranks, j, changed = 0, any = 0;
    double now = pp__emu_now();
    unsigned char *cur;
    if (!b->mine && (ended || now - b->t0 < pp__emu_beat(c) || !(b->mine = (unsigned char *)calloc(2 * (size_t)n, 1))))
        return;
    cur = b->mine + n;
    if (ended) memset(cur, 0, (size_t)n);
    else pp__emu_wait_set(b, cur);
    cur[c->rank] = 0;
    for (j = 0; j < n; j++) {
        if (cur[j] != b->mine[j]) {
            c->want[j] += cur[j] ? 1 : -1;
            b->mine[j] = cur[j];
        }
        if ((c->want[j] > 0) != c->said[j]) {
            c->said[j] = c->want[j] > 0;
            changed = 1;
        }
        any |= c->said[j];
    }
    if (!changed && !(any && now - c->said_at >= pp__emu_beat(c))) return;
    c->said_at = now;
    for (j = 0; j < n; j++)
        if (j != c->rank && c->peer[j].fd >= 0)
            (void)pp__emu_out(&c->peer[j], PP__EMU_WAITING, any ? c->said : NULL, any ? (size_t)n : 0);
    pp__emu_progress(c);
}

/* " a b c": the flagged ranks */
static inline void pp__emu_list(char *s, size_t cap, const unsigned char *flag, int n) {
    size_t k = 0;
    int j;
    s[0] = 0;
    for (j = 0; j < n && k + 16 < cap; j++)
        if (flag[j]) k += (size_t)snprintf(s + k, cap - k, " %d", j);
}

/* batch b waited c->timeout: the communicator fails, naming where the
   waits end (breadth first over the peers' notices; mutex held) */
static inline void pp__emu_timed_out(pp__emu_batch *b) {
    ncclComm_t c = b->comm;
    int n = c->nranks, i, j, head = 0, tail = 0, direct, direct_ends = 0, root = -1, far = -1;
    int *from = (int *)malloc(sizeof(int) * 2 * (size_t)n), *queue = from ? from + n : NULL;
    unsigned char *on = (unsigned char *)calloc(2 * (size_t)n, 1), *end = on ? on + n : NULL;
    const char *what = "?";
    char who[160] = "", ends[160] = "", path[160] = "";
    double now = pp__emu_now();
    for (i = 0; i < b->n; i++)
        if (!b->ops[i].done) { what = pp__emu_op_name(b->ops[i].kind); break; }
    if (!from || !on) { /* no memory to follow the chain: the plain message */
        pp__emu_fail(c, -1, ncclRemoteError, "rank %d: waited %.0f s (PP_EMU_NCCL_TIMEOUT) in %s", c->rank, c->timeout, what);
        free(from);
        free(on);
        return;
    }
    pp__emu_wait_set(b, on);
    pp__emu_list(who, sizeof who, on, n);
    for (j = 0; j < n; j++) from[j] = -1; /* not reached */
    from[c->rank] = c->rank;
    for (j = 0; j < n; j++)
        if (on[j] && j != c->rank) { from[j] = c->rank; queue[tail++] = j; }
    direct = tail;
    while (head < tail) {
        pp__emu_peer *p = &c->peer[j = queue[head++]];
        int k;
        if (!p->waits || now - p->heard > c->timeout / 2) { /* waits on nobody, or stopped talking */
            end[j] = 1;
            if (root < 0) root = j;
            if (head <= direct) direct_ends++;
            else if (far < 0) far = j;
            continue;
        }
        for (k = 0; k < n; k++)
            if (p->waits->data[k] && from[k] < 0) { from[k] = j; queue[tail++] = k; }
    }
    pp__emu_list(ends, sizeof ends, end, n);
    if (direct == 0 || direct_ends == direct) { /* it waits on itself, or on ranks that wait on nobody */
        pp__emu_fail(c, root, ncclRemoteError, "rank %d: waited %.0f s (PP_EMU_NCCL_TIMEOUT) in %s for rank(s)%s, "
                     "which neither answered nor left", c->rank, c->timeout, what, who);
    } else if (root >= 0) { /* the path to the farthest end: "1 -> 2 -> 3" */
        int hop[64], h = 0;
        size_t k = 0;
        for (j = far >= 0 ? far : root; j != c->rank && h < 64; j = from[j]) hop[h++] = j;
        k = (size_t)snprintf(path, sizeof path, "%d", c->rank);
        while (h > 0 && k + 16 < sizeof path) k += (size_t)snprintf(path + k, sizeof path - k, " -> %d", hop[--h]);
        pp__emu_fail(c, root, ncclRemoteError, "rank %d: waited %.0f s (PP_EMU_NCCL_TIMEOUT) in %s for rank(s)%s, "
                     "which wait in turn: the waits (%s) end at rank(s)%s, which neither answered nor left", c->rank,
                     c->timeout, what, who, path, ends);
    } else { /* every chain comes back: the reached ranks wait on each other */
        for (j = 0; j < n; j++) on[j] = from[j] >= 0;
        pp__emu_list(ends, sizeof ends, on, n);
        pp__emu_fail(c, -1, ncclRemoteError, "rank %d: waited %.0f s (PP_EMU_NCCL_TIMEOUT) in %s for rank(s)%s, and "
                     "ranks%s wait on each other: a deadlock%s", c->rank, c->timeout, what, who, ends,
                     c->rendezvous ? " (PP_EMU_NCCL_RENDEZVOUS=1: a send waits until its receive is posted)" : "");
    }
    free(from);
    free(on);
}

/* starts the batch's sends (first call), then completes what has arrived:
   1 all done, 0 not yet, -1 failed (mutex held) */
PP__EMU_MOVES_BYTES static inline int pp__emu_run(pp__emu_batch *b) {
    ncclComm_t c = b->comm;
    int i, j, all = 1;
    if (!b->started) {
        b->started = 1;
        b->t0 = pp__emu_now();
        if (c->closed && c->async == ncclSuccess)
            pp__emu_fail(c, c->rank, ncclInvalidUsage, "rank %d: an operation ran after its communicator was destroyed", c->rank);
        for (i = 0; i < b->n && c->async == ncclSuccess; i++) {
            pp__emu_op *op = &b->ops[i];
            if (pp__emu_inject(c->rank, ++pp__emu_nth)) {
                pp__emu_fail(c, c->rank, ncclSystemError, "rank %d: injected failure of its NCCL op %ld, an %s (PP_EMU_NCCL_FAIL_AT)",
                             c->rank, pp__emu_nth, pp__emu_op_name(op->kind));
                break;
            }
            if (op->kind == PP__EMU_SEND) {
                pp_emu_device_access(op->sbuf, op->bytes, 0, "ncclSend");
                if (op->peer == c->rank) {
                    pp__emu_msg *m = pp__emu_new_msg(op->bytes);
                    if (!m) { pp__emu_fail(c, c->rank, ncclSystemError, "rank %d: out of host memory", c->rank); break; }
                    memcpy(m->data, op->sbuf, op->bytes);
                    pp__emu_push(&c->peer[c->rank].p2p, m);
                } else if (c->peer[op->peer].fd < 0) {
                    pp__emu_fail(c, op->peer, ncclRemoteError, "rank %d: ncclSend to rank %d, which has left the communicator",
                                 c->rank, op->peer);
                } else if (pp__emu_out(&c->peer[op->peer], PP__EMU_P2P, op->sbuf, op->bytes) != 0) {
                    pp__emu_fail(c, c->rank, ncclSystemError, "rank %d: out of host memory", c->rank);
                }
                op->done = !c->rendezvous;
            } else if (op->kind == PP__EMU_RECV && c->rendezvous) { /* posted: the sender may complete */
                if (op->peer == c->rank) c->peer[c->rank].ready_in++;
                else if (c->peer[op->peer].fd >= 0 && pp__emu_out(&c->peer[op->peer], PP__EMU_READY, NULL, 0) != 0)
                    pp__emu_fail(c, c->rank, ncclSystemError, "rank %d: out of host memory", c->rank);
            } else if (op->kind == PP__EMU_ALLREDUCE) {
                pp__emu_msg *mine = pp__emu_new_msg(op->bytes);
                pp_emu_device_access(op->sbuf, op->bytes, 0, "ncclAllReduce");
                op->got = (pp__emu_msg **)calloc((size_t)c->nranks, sizeof(pp__emu_msg *));
                if (!mine || !op->got) { free(mine); pp__emu_fail(c, c->rank, ncclSystemError, "rank %d: out of host memory", c->rank); break; }
                memcpy(mine->data, op->sbuf, op->bytes);
                op->got[c->rank] = mine;
                for (j = 0; j < c->nranks; j++)
                    if (j != c->rank && c->peer[j].fd >= 0 && pp__emu_out(&c->peer[j], PP__EMU_COLL, op->sbuf, op->bytes) != 0)
                        pp__emu_fail(c, c->rank, ncclSystemError, "rank %d: out of host memory", c->rank);
            }
        }
    }
    if (c->async == ncclSuccess && c->closed)
        pp__emu_fail(c, c->rank, ncclInvalidUsage, "rank %d: the communicator was destroyed with operations pending", c->rank);
    if (c->async != ncclSuccess) return -1;
    pp__emu_progress(c);
    for (i = 0; i < b->n; i++) {
        pp__emu_op *op = &b->ops[i];
        if (op->done) continue;
        if (op->kind == PP__EMU_SEND) { /* rendezvous: done when a receive of its peer's was posted */
            pp__emu_peer *p = &c->peer[op->peer];
            if (p->ready_in > p->ready_used) {
                p->ready_used++;
                op->done = 1;
            } else if (op->peer != c->rank && p->fd < 0) {
                pp__emu_fail(c, op->peer, ncclRemoteError, "rank %d: ncclSend to rank %d, which left before posting its receive",
                             c->rank, op->peer);
                return -1;
            }
        } else if (op->kind == PP__EMU_RECV) {
            pp__emu_msg *m = NULL;
            int r = pp__emu_take(c, op, op->peer, &m);
            if (r < 0) return -1;
            if (r > 0) {
                if (pp_emu_device_access(op->rbuf, m->len, 1, "ncclRecv")) memcpy(op->rbuf, m->data, m->len);
                free(m);
                op->done = 1;
            }
        } else { /* all-reduce */
            int have = 1;
            for (j = 0; j < c->nranks; j++) {
                if (!op->got[j]) {
                    int r = pp__emu_take(c, op, j, &op->got[j]);
                    if (r < 0) return -1;
                    have &= r > 0;
                }
            }
            if (have) { /* in rank order: every rank computes the same bits */
                char *acc = op->got[0]->data;
                for (j = 1; j < c->nranks; j++) pp__emu_reduce(acc, op->got[j]->data, op->count, op->type, op->red);
                if (op->red == ncclAvg) pp__emu_average(acc, op->count, op->type, c->nranks);
                pp_emu_device_access(op->rbuf, op->bytes, 1, "ncclAllReduce");
                memcpy(op->rbuf, acc, op->bytes);
                op->done = 1;
            }
        }
        all &= op->done;
    }
    if (all) return 1;
    pp__emu_announce(b, 0);
    if (pp__emu_now() - b->t0 > c->timeout) {
        pp__emu_timed_out(b);
        return -1;
    }
    return 0;
}

/* the stream operation (pp_emu_stream_poll) */
static inline int pp__emu_poll(void *user) {
    pp__emu_batch *b = (pp__emu_batch *)user;
    int r;
    pthread_mutex_lock(&b->comm->mu);
    r = pp__emu_run(b);
    /* a failed batch leaves its notice standing: its rank still waits on
       the ranks it named until its abort says why */
    if (r > 0) pp__emu_announce(b, 1);
    pthread_mutex_unlock(&b->comm->mu);
    if (r != 0) pp__emu_free_batch(b);
    return r;
}

/* posts the group's ops: one batch per (communicator, stream), in posting order */
static inline ncclResult_t pp__emu_flush_group(void) {
    pp__emu_batch *q = pp__emu_group.pending;
    int n = pp__emu_group.n, i, k;
    ncclResult_t r = ncclSuccess;
    pp__emu_group.pending = NULL;
    pp__emu_group.n = pp__emu_group.cap = 0;
    for (i = 0; i < n; i++) {
        pp__emu_batch *b;
        if (!q[i].ops) continue; /* taken into an earlier batch */
        b = (pp__emu_batch *)calloc(1, sizeof *b);
        if (b) b->ops = (pp__emu_op *)malloc(sizeof(pp__emu_op) * (size_t)(n - i));
        if (!b || !b->ops) {
            free(b);
            r = pp__emu_err(q[i].comm, ncclSystemError, "out of host memory");
            break;
        }
        b->comm = q[i].comm;
        b->stream = q[i].stream;
        for (k = i; k < n; k++)
            if (q[k].ops && q[k].comm == b->comm && q[k].stream == b->stream) {
                b->ops[b->n++] = q[k].ops[0];
                free(q[k].ops);
                q[k].ops = NULL;
            }
        pthread_mutex_lock(&b->comm->mu);
        b->comm->refs++;
        pthread_mutex_unlock(&b->comm->mu);
        if (pp_emu_stream_poll(b->stream, pp__emu_poll, b) != cudaSuccess) {
            r = pp__emu_err(b->comm, ncclUnhandledCudaError, "pp_emu_stream_poll failed");
            pp__emu_free_batch(b);
            break;
        }
    }
    for (i = 0; i < n; i++) free(q[i].ops);
    free(q);
    return r;
}

static inline ncclResult_t pp__emu_post(ncclComm_t c, cudaStream_t s, const pp__emu_op *op) {
    pp__emu_batch *q;
    if (pp__emu_group.n == pp__emu_group.cap) {
        int cap = pp__emu_group.cap ? 2 * pp__emu_group.cap : 16;
        q = (pp__emu_batch *)realloc(pp__emu_group.pending, sizeof *q * (size_t)cap);
        if (!q) return pp__emu_err(c, ncclSystemError, "out of host memory");
        pp__emu_group.pending = q;
        pp__emu_group.cap = cap;
    }
    q = &pp__emu_group.pending[pp__emu_group.n];
    memset(q, 0, sizeof *q);
    q->comm = c;
    q->stream = s;
    q->ops = (pp__emu_op *)malloc(sizeof *op);
    if (!q->ops) return pp__emu_err(c, ncclSystemError, "out of host memory");
    q->ops[0] = *op;
    pp__emu_group.n++;
    return pp__emu_group.depth == 0 ? pp__emu_flush_group() : ncclSuccess;
}

/* checks a call's arguments; an error inside a group fails the whole group at ncclGroupEnd */
static inline ncclResult_t pp__emu_call(ncclComm_t c, cudaStream_t s, int kind, const void *sbuf, void *rbuf,
                                        size_t count, ncclDataType_t type, ncclRedOp_t red, int peer) {
    pp__emu_op op;
    ncclResult_t r = ncclSuccess;
    size_t ts = pp__emu_type_size(type);
    const char *name = pp__emu_op_name(kind);
    if (!c) r = pp__emu_err(NULL, ncclInvalidArgument, "%s: the communicator is NULL", name);
    else if (c->closed) r = pp__emu_err(c, ncclInvalidArgument, "%s: the communicator was destroyed", name);
    else if (!ts || (kind == PP__EMU_ALLREDUCE && (type == ncclFloat16 || type == ncclBfloat16)))
        r = pp__emu_err(c, ncclInvalidArgument, "%s: datatype %d (the emulation reduces int8..uint64, float, double)", name, (int)type);
    else if (kind == PP__EMU_ALLREDUCE && ((int)red < 0 || red >= ncclNumOps))
        r = pp__emu_err(c, ncclInvalidArgument, "%s: reduction %d is not sum, prod, max, min or avg", name, (int)red);
    else if (kind != PP__EMU_ALLREDUCE && (peer < 0 || peer >= c->nranks))
        r = pp__emu_err(c, ncclInvalidArgument, "%s: peer %d, the communicator has ranks 0..%d", name, peer, c->nranks - 1);
    else if (count && ((kind != PP__EMU_RECV && !sbuf) || (kind != PP__EMU_SEND && !rbuf)))
        r = pp__emu_err(c, ncclInvalidArgument, "%s: a NULL buffer for %zu elements", name, count);
    if (r != ncclSuccess) {
        if (pp__emu_group.depth > 0 && pp__emu_group.err == ncclSuccess) pp__emu_group.err = r;
        return r;
    }
    if (count == 0) return ncclSuccess; /* NCCL pairs no zero-byte transfers */
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.peer = peer;
    op.sbuf = sbuf;
    op.rbuf = rbuf;
    op.count = count;
    op.bytes = count * ts;
    op.type = type;
    op.red = red;
    return pp__emu_post(c, s, &op);
}

/* ---- the API ---- */

static inline const char *ncclGetErrorString(ncclResult_t r) {
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}
static inline const char *ncclGetLastError(ncclComm_t c) { return c ? c->last : pp__emu_last; }
static inline ncclResult_t ncclGetVersion(int *v) {
    if (!v) return ncclInvalidArgument;
    *v = NCCL_VERSION_CODE;
    return ncclSuccess;
}

static inline ncclResult_t ncclGetUniqueId(ncclUniqueId *out) {
    pp__emu_id id;
    const char *env = getenv("NCCL_COMM_ID");
    if (!out) return pp__emu_err(NULL, ncclInvalidArgument, "ncclGetUniqueId: NULL");
    memset(&id, 0, sizeof id);
    memcpy(id.magic, "ppemunc", 8);
    if (env) { /* every rank gets the same id; rank 0's init runs the root */
        char host[256];
        const char *colon = strrchr(env, ':');
        long port = colon ? strtol(colon + 1, NULL, 10) : 0;
        size_t hl = colon ? (size_t)(colon - env) : 0;
        const char *h;
        if (!colon || hl == 0 || hl >= sizeof host || port <= 0 || port > 65535)
            return pp__emu_err(NULL, ncclInvalidArgument, "NCCL_COMM_ID=%s: expected host:port", env);
        memcpy(host, env, hl);
        host[hl] = 0;
        h = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
        if (inet_pton(AF_INET, h, &id.addr) != 1 || (ntohl(id.addr) >> 24) != 127)
            return pp__emu_err(NULL, ncclInvalidArgument, "NCCL_COMM_ID=%s: the emulated NCCL runs on one machine, "
                               "over loopback: use 127.0.0.1:PORT or localhost:PORT", env);
        id.port = htons((uint16_t)port);
        id.token = 1469598103934665603ULL;
        for (h = env; *h; h++) id.token = (id.token ^ (unsigned char)*h) * 1099511628211ULL;
    } else { /* the root runs here, on a free port */
        int fd = pp__emu_listen(htonl(INADDR_LOOPBACK), 0, &id.port);
        if (fd < 0) return pp__emu_err(NULL, ncclSystemError, "ncclGetUniqueId: cannot listen on 127.0.0.1: %s", strerror(errno));
        if (pp__emu_start_root(fd) != 0) {
            close(fd);
            return pp__emu_err(NULL, ncclSystemError, "ncclGetUniqueId: cannot start the bootstrap root thread");
        }
        id.addr = htonl(INADDR_LOOPBACK);
        id.root_running = 1;
        id.token = ((uint64_t)getpid() << 32) ^ (uint64_t)(pp__emu_now() * 1e9) ^ (uint64_t)(uintptr_t)&id;
    }
    memset(out, 0, sizeof *out);
    memcpy(out->internal, &id, sizeof id);
    return ncclSuccess;
}

static inline ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId uid, int rank) {
    pp__emu_id id;
    pp__emu_hello h;
    pp__emu_hdr t;
    uint16_t my_port = 0, *ports = NULL;
    double timeout = pp__emu_timeout(), deadline = pp__emu_now() + timeout;
    int me = -1, root = -1, i;
    char addr[32];
    ncclComm_t c = NULL;
    ncclResult_t r = ncclSuccess;
    memcpy(&id, uid.internal, sizeof id);
    if (!out) return pp__emu_err(NULL, ncclInvalidArgument, "ncclCommInitRank: NULL communicator pointer");
    *out = NULL;
    if (memcmp(id.magic, "ppemunc", 8) != 0)
        return pp__emu_err(NULL, ncclInvalidArgument, "ncclCommInitRank: the id does not come from ncclGetUniqueId");
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return pp__emu_err(NULL, ncclInvalidArgument, "ncclCommInitRank: rank %d of %d", rank, nranks);
    if (pp__emu_inject(rank, 0))
        return pp__emu_err(NULL, ncclSystemError, "rank %d: injected failure in ncclCommInitRank "
                           "(PP_EMU_NCCL_FAIL_AT=init), before it contacted anyone", rank);
    inet_ntop(AF_INET, &id.addr, addr, sizeof addr);
    if (rank == 0 && !id.root_running) {
        int fd = pp__emu_listen(id.addr, id.port, NULL);
        if (fd < 0)
            return pp__emu_err(NULL, ncclSystemError, "rank 0: cannot run the bootstrap root at NCCL_COMM_ID %s:%d: %s",
                               addr, ntohs(id.port), strerror(errno));
        if (pp__emu_start_root(fd) != 0) {
            close(fd);
            return pp__emu_err(NULL, ncclSystemError, "rank 0: cannot start the bootstrap root thread");
        }
    }
    c = (ncclComm_t)calloc(1, sizeof *c);
    if (c) {
        c->peer = (pp__emu_peer *)calloc((size_t)nranks, sizeof(pp__emu_peer));
        c->want = (int *)calloc((size_t)nranks, sizeof(int));
        c->said = (unsigned char *)calloc((size_t)nranks, 1);
    }
    ports = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)nranks);
    if (!c || !c->peer || !c->want || !c->said || !ports) {
        r = pp__emu_err(NULL, ncclSystemError, "rank %d: out of host memory", rank);
        goto fail;
    }
    c->rank = rank;
    c->nranks = nranks;
    c->timeout = timeout;
    c->rendezvous = getenv("PP_EMU_NCCL_RENDEZVOUS") && atoi(getenv("PP_EMU_NCCL_RENDEZVOUS")) != 0;
    c->refs = 1;
    c->root = -1;
    pthread_mutex_init(&c->mu, NULL);
    for (i = 0; i < nranks; i++) c->peer[i].fd = -1;
    if (cudaGetDevice(&c->cuda_device) != cudaSuccess) c->cuda_device = 0;

    /* the root: my port in, everyone's out */
    if ((me = pp__emu_listen(htonl(INADDR_LOOPBACK), 0, &my_port)) < 0) {
        r = pp__emu_err(NULL, ncclSystemError, "rank %d: cannot listen on 127.0.0.1: %s", rank, strerror(errno));
        goto fail;
    }
    if ((root = pp__emu_connect(id.addr, id.port, deadline)) < 0) {
        r = pp__emu_err(NULL, ncclSystemError, "rank %d: cannot reach the bootstrap root at %s:%d within %.0f s "
                        "(PP_EMU_NCCL_TIMEOUT): %s", rank, addr, ntohs(id.port), timeout, pp__emu_why());
        goto fail;
    }
    memset(&h, 0, sizeof h);
    h.h.magic = PP__EMU_MAGIC;
    h.rank = rank;
    h.nranks = nranks;
    h.port = my_port;
    if (pp__emu_io(root, &h, sizeof h, 1, deadline) != 0 || pp__emu_io(root, &t, sizeof t, 0, deadline + 10) != 0) {
        r = pp__emu_err(NULL, ncclSystemError, "rank %d: the bootstrap root at %s:%d did not answer: %s", rank, addr,
                        ntohs(id.port), pp__emu_why());
        goto fail;
    }
    if (t.magic != PP__EMU_MAGIC || (t.type == 0 && t.len != sizeof(uint16_t) * (size_t)nranks) || t.len > 4096) {
        r = pp__emu_err(NULL, ncclInternalError, "rank %d: a bad answer from the bootstrap root", rank);
        goto fail;
    }
    if (t.type != 0) {
        char msg[4097];
        if (pp__emu_io(root, msg, (size_t)t.len, 0, deadline + 10) != 0) snprintf(msg, sizeof msg, "(no reason given)");
        else msg[t.len] = 0;
        r = pp__emu_err(NULL, ncclRemoteError, "rank %d: the bootstrap failed: %s", rank, msg);
        goto fail;
    }
    if (pp__emu_io(root, ports, (size_t)t.len, 0, deadline + 10) != 0) {
        r = pp__emu_err(NULL, ncclSystemError, "rank %d: the bootstrap root's table did not arrive: %s", rank, pp__emu_why());
        goto fail;
    }
    close(root);
    root = -1;
    pp__emu_wait_roots(deadline + 20);

    /* the mesh: I connect to the ranks below me and take the ones above */
    for (i = 0; i < rank; i++) {
        int fd = pp__emu_connect(htonl(INADDR_LOOPBACK), ports[i], 0);
        h.port = 0;
        memcpy(&h.pad, &id.token, sizeof h.pad);
        if (fd < 0 || pp__emu_io(fd, &h, sizeof h, 1, deadline) != 0) {
            if (fd >= 0) close(fd);
            r = pp__emu_err(NULL, ncclRemoteError, "rank %d: cannot connect to rank %d: %s", rank, i, pp__emu_why());
            goto fail;
        }
        c->peer[i].fd = fd;
    }
    for (i = rank + 1; i < nranks; i++) {
        pp__emu_hello g;
        uint16_t tok;
        int fd = pp__emu_accept(me, deadline);
        memcpy(&tok, &id.token, sizeof tok);
        if (fd < 0) {
            size_t k = 0;
            char who[200] = "";
            int j;
            for (j = rank + 1; j < nranks && k < sizeof who - 16; j++)
                if (c->peer[j].fd < 0) k += (size_t)snprintf(who + k, sizeof who - k, " %d", j);
            r = pp__emu_err(NULL, ncclRemoteError, "rank %d: rank(s)%s did not connect within %.0f s (PP_EMU_NCCL_TIMEOUT)",
                            rank, who, timeout);
            goto fail;
        }
        if (pp__emu_io(fd, &g, sizeof g, 0, deadline) != 0 || g.h.magic != PP__EMU_MAGIC || g.pad != tok ||
            g.rank <= rank || g.rank >= nranks || c->peer[g.rank].fd >= 0) {
            close(fd); /* not one of ours */
            i--;
            continue;
        }
        c->peer[g.rank].fd = fd;
    }
    close(me);
    for (i = 0; i < nranks; i++) {
        if (c->peer[i].fd >= 0) pp__emu_nonblock(c->peer[i].fd);
        c->peer[i].heard = pp__emu_now();
    }
    free(ports);
    *out = c;
    return ncclSuccess;
fail:
    if (me >= 0) close(me);
    if (root >= 0) close(root);
    pp__emu_wait_roots(deadline + 20);
    free(ports);
    if (c) {
        if (c->peer) {
            snprintf(c->last, sizeof c->last, "%s", pp__emu_last);
            c->refs = 1;
            pp__emu_unref(c);
        } else {
            free(c->want);
            free(c->said);
            free(c);
        }
    }
    return r;
}

static inline ncclResult_t ncclCommUserRank(const ncclComm_t c, int *rank) {
    if (!c || !rank) return pp__emu_err(NULL, ncclInvalidArgument, "ncclCommUserRank: NULL");
    *rank = c->rank;
    return ncclSuccess;
}
static inline ncclResult_t ncclCommCount(const ncclComm_t c, int *count) {
    if (!c || !count) return pp__emu_err(NULL, ncclInvalidArgument, "ncclCommCount: NULL");
    *count = c->nranks;
    return ncclSuccess;
}
static inline ncclResult_t ncclCommCuDevice(const ncclComm_t c, int *device) {
    if (!c || !device) return pp__emu_err(NULL, ncclInvalidArgument, "ncclCommCuDevice: NULL");
    *device = c->cuda_device;
    return ncclSuccess;
}

static inline ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *async) {
    if (!c || !async) return pp__emu_err(NULL, ncclInvalidArgument, "ncclCommGetAsyncError: NULL");
    pthread_mutex_lock(&c->mu);
    if (!c->closed) pp__emu_progress(c); /* a dead peer shows even while nothing waits on it */
    *async = c->async;
    pthread_mutex_unlock(&c->mu);
    return ncclSuccess;
}

static inline ncclResult_t ncclGroupStart(void) {
    if (pp__emu_group.depth++ == 0) pp__emu_group.err = ncclSuccess;
    return ncclSuccess;
}
static inline ncclResult_t ncclGroupEnd(void) {
    ncclResult_t r;
    if (pp__emu_group.depth == 0) return pp__emu_err(NULL, ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    if (--pp__emu_group.depth > 0) return ncclSuccess;
    r = pp__emu_group.err;
    if (r != ncclSuccess) { /* a bad call inside: nothing of the group runs */
        int i;
        for (i = 0; i < pp__emu_group.n; i++) free(pp__emu_group.pending[i].ops);
        free(pp__emu_group.pending);
        pp__emu_group.pending = NULL;
        pp__emu_group.n = pp__emu_group.cap = 0;
        return r;
    }
    return pp__emu_flush_group();
}

static inline ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t c,
                                    cudaStream_t s) {
    return pp__emu_call(c, s, PP__EMU_SEND, buf, NULL, count, type, ncclSum, peer);
}
static inline ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t c,
                                    cudaStream_t s) {
    return pp__emu_call(c, s, PP__EMU_RECV, NULL, buf, count, type, ncclSum, peer);
}
static inline ncclResult_t ncclAllReduce(const void *sbuf, void *rbuf, size_t count, ncclDataType_t type,
                                         ncclRedOp_t op, ncclComm_t c, cudaStream_t s) {
    return pp__emu_call(c, s, PP__EMU_ALLREDUCE, sbuf, rbuf, count, type, op, -1);
}

/* flushes what is queued, says goodbye, and waits (a while) for every
   peer's goodbye, so no byte a peer still needs is lost in a reset */
static inline ncclResult_t ncclCommDestroy(ncclComm_t c) {
    double deadline;
    int j, left;
    if (!c) return pp__emu_err(NULL, ncclInvalidArgument, "ncclCommDestroy: NULL");
    deadline = pp__emu_now() + (c->timeout < 10 ? c->timeout : 10);
    pthread_mutex_lock(&c->mu);
    for (j = 0; j < c->nranks; j++)
        if (c->peer[j].fd >= 0) (void)pp__emu_out(&c->peer[j], PP__EMU_BYE, NULL, 0);
    c->closed = 1;
    for (;;) {
        pp__emu_progress(c);
        for (left = 0, j = 0; j < c->nranks; j++) {
            pp__emu_peer *p = &c->peer[j];
            if (p->fd < 0) continue;
            if (p->out_off == p->out_len && !p->bye) { left = 1; continue; }
            if (p->out_off == p->out_len && p->bye) { pp__emu_close_peer(p); continue; }
            left = 1;
        }
        if (!left || pp__emu_now() > deadline) break;
        pthread_mutex_unlock(&c->mu);
        pp__emu_sleep_ms(1);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    pp__emu_unref(c);
    return ncclSuccess;
}

/* tells every peer why (its ncclGetLastError shows it): the rank the
   failure started at (int32), then the message where it started; closes at once */
static inline ncclResult_t ncclCommAbort(ncclComm_t c) {
    char why[sizeof(int32_t) + sizeof c->cause];
    int32_t root;
    size_t len;
    int j;
    if (!c) return ncclSuccess;
    pthread_mutex_lock(&c->mu);
    root = c->async != ncclSuccess ? c->root : c->rank;
    if (c->async != ncclSuccess) snprintf(why + sizeof root, sizeof why - sizeof root, "%s", c->cause);
    else snprintf(why + sizeof root, sizeof why - sizeof root, "rank %d called ncclCommAbort", c->rank);
    memcpy(why, &root, sizeof root);
    len = sizeof root + strlen(why + sizeof root);
    c->closed = 1;
    for (j = 0; j < c->nranks; j++) {
        pp__emu_peer *p = &c->peer[j];
        char sink[4096];
        if (p->fd < 0) continue;
        (void)pp__emu_out(p, PP__EMU_ABORT, why, len);
        (void)send(p->fd, p->out + p->out_off, p->out_len - p->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        /* unread input would make close() reset the connection, and the
           reason might not arrive */
        while (recv(p->fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {}
        shutdown(p->fd, SHUT_WR);
        pp__emu_close_peer(p);
    }
    if (c->async == ncclSuccess) {
        c->async = ncclInvalidUsage;
        snprintf(c->last, sizeof c->last, "rank %d: the communicator was aborted", c->rank);
    }
    pthread_mutex_unlock(&c->mu);
    pp__emu_unref(c);
    return ncclSuccess;
}

#endif
