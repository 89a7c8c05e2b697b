/* gpt_ref.h - a small GPT-2-style decoder in plain C, every operation split
   into forward, B (gradient for its input) and W (gradient for its weights).

   It is the reference the pipeline runtime is checked against (and later
   the oracle for CUDA kernels): readable loops, no tricks, one thread.
   Include it where you use it; every function is static. Compiles as C99
   and as C++ (for a .cu file that compares kernels against it).

       #define GPT_REAL double   // optional, default float (tests use double
       #include "gpt_ref.h"      // for finite differences)

   Model: token + position embedding; L blocks of (layernorm, causal
   self-attention with QKV and output projection, residual, layernorm, MLP
   with GELU, residual); final layernorm; LM head (its own weights, not tied
   to the token embedding, so the first and last stage share nothing);
   softmax cross-entropy. Shapes follow llm.c: N = B*T rows of C channels.

   Split backward. B functions ACCUMULATE (+=) the gradient for their input
   and keep what their W needs; W functions ACCUMULATE (+=) into the weight
   gradients and read only forward activations and what B left behind
   (never the weights). A stage's backward is one gpt_stage_backward_input
   (B) and one gpt_stage_backward_weight (W), or both in a row (BW).

   Stages: contiguous layer ranges; stage 0 also owns the embedding, the last
   stage the final layernorm, the head and the loss. Everything one
   (stage, microbatch) needs between its F and its W lives in one activation
   buffer of gpt_act_size() reals: the stage input, every block's
   activations, and the gradients B computed for W. */
#ifndef GPT_REF_H
#define GPT_REF_H

#include <errno.h>
#include <fcntl.h> /* open, fstat, read: gpt_read_text */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* every function is static; unused ones are not warned about */
#if defined(__GNUC__) || defined(__clang__)
#define GPT_FN static __attribute__((unused))
#else
#define GPT_FN static
#endif

#ifndef GPT_REAL
#define GPT_REAL float
#endif
typedef GPT_REAL gpt_real;

typedef struct gpt_config {
    int vocab;    /* V */
    int seq;      /* T: tokens per sequence */
    int channels; /* C */
    int heads;    /* NH, divides C */
    int layers;   /* L */
    int batch;    /* B: sequences per microbatch */
} gpt_config;

/* ---- parameters: one array, llm.c's order (with a separate LM head) ---- */

enum {
    GPT_WTE, GPT_WPE, GPT_LN1W, GPT_LN1B, GPT_QKVW, GPT_QKVB, GPT_ATTPROJW, GPT_ATTPROJB, GPT_LN2W, GPT_LN2B,
    GPT_FCW, GPT_FCB, GPT_FCPROJW, GPT_FCPROJB, GPT_LNFW, GPT_LNFB, GPT_LMW, GPT_LMB, GPT_NUM_TENSORS
};

static const char *const gpt_tensor_names[GPT_NUM_TENSORS] = {
    "wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb", "ln2w", "ln2b",
    "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb", "lmw", "lmb"};

/* sizes[t] of every tensor (per-layer tensors hold all L layers); returns the total */
GPT_FN size_t gpt_param_sizes(const gpt_config *c, size_t sizes[GPT_NUM_TENSORS]) {
    size_t V = (size_t)c->vocab, T = (size_t)c->seq, C = (size_t)c->channels, L = (size_t)c->layers, total = 0;
    int i;
    sizes[GPT_WTE] = V * C;
    sizes[GPT_WPE] = T * C;
    sizes[GPT_LN1W] = L * C;
    sizes[GPT_LN1B] = L * C;
    sizes[GPT_QKVW] = L * 3 * C * C;
    sizes[GPT_QKVB] = L * 3 * C;
    sizes[GPT_ATTPROJW] = L * C * C;
    sizes[GPT_ATTPROJB] = L * C;
    sizes[GPT_LN2W] = L * C;
    sizes[GPT_LN2B] = L * C;
    sizes[GPT_FCW] = L * 4 * C * C;
    sizes[GPT_FCB] = L * 4 * C;
    sizes[GPT_FCPROJW] = L * C * 4 * C;
    sizes[GPT_FCPROJB] = L * C;
    sizes[GPT_LNFW] = C;
    sizes[GPT_LNFB] = C;
    sizes[GPT_LMW] = V * C;
    sizes[GPT_LMB] = V;
    for (i = 0; i < GPT_NUM_TENSORS; i++) total += sizes[i];
    return total;
}

/* pointers to every tensor inside one array of gpt_param_sizes() reals */
typedef struct gpt_params {
    gpt_real *t[GPT_NUM_TENSORS];
} gpt_params;

GPT_FN gpt_params gpt_params_at(const gpt_config *c, gpt_real *base) {
    gpt_params p;
    size_t sizes[GPT_NUM_TENSORS], off = 0;
    int i;
    gpt_param_sizes(c, sizes);
    for (i = 0; i < GPT_NUM_TENSORS; i++) {
        p.t[i] = base + off;
        off += sizes[i];
    }
    return p;
}

/* deterministic init (GPT-2's: N(0, 0.02) approximated by a sum of uniforms;
   layernorm weights 1, biases 0); seed is any number */
GPT_FN unsigned long long gpt__rng(unsigned long long *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}
GPT_FN double gpt_uniform(unsigned long long *s) { return (double)(gpt__rng(s) >> 11) * (1.0 / 9007199254740992.0); }

GPT_FN void gpt_init(const gpt_config *c, gpt_real *base, unsigned long long seed) {
    size_t sizes[GPT_NUM_TENSORS], i;
    gpt_params p = gpt_params_at(c, base);
    unsigned long long s = seed * 0x9E3779B97F4A7C15ULL + 1;
    int t;
    gpt_param_sizes(c, sizes);
    for (t = 0; t < GPT_NUM_TENSORS; t++)
        for (i = 0; i < sizes[t]; i++) {
            double g = gpt_uniform(&s) + gpt_uniform(&s) + gpt_uniform(&s) - 1.5; /* var 1/4 */
            if (t == GPT_LN1W || t == GPT_LN2W || t == GPT_LNFW) p.t[t][i] = 1;
            else if (t == GPT_LN1B || t == GPT_LN2B || t == GPT_LNFB) p.t[t][i] = 0;
            else p.t[t][i] = (gpt_real)(0.04 * g);
        }
}

/* ---- operations: forward, B, W ---- */

/* out[N,C] = wte[tok] + wpe[t] */
GPT_FN void gpt_encoder_forward(gpt_real *out, const int *tok, const gpt_real *wte, const gpt_real *wpe, int B, int T,
                                int C) {
    int b, t, i;
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++) {
            gpt_real *o = out + ((size_t)b * T + t) * C;
            const gpt_real *we = wte + (size_t)tok[b * T + t] * C, *wp = wpe + (size_t)t * C;
            for (i = 0; i < C; i++) o[i] = we[i] + wp[i];
        }
}

/* W only: the embedding has no input to differentiate */
GPT_FN void gpt_encoder_backward_weight(gpt_real *dwte, gpt_real *dwpe, const gpt_real *dout, const int *tok, int B,
                                        int T, int C) {
    int b, t, i;
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++) {
            const gpt_real *d = dout + ((size_t)b * T + t) * C;
            gpt_real *we = dwte + (size_t)tok[b * T + t] * C, *wp = dwpe + (size_t)t * C;
            for (i = 0; i < C; i++) {
                we[i] += d[i];
                wp[i] += d[i];
            }
        }
}

GPT_FN void gpt_layernorm_forward(gpt_real *out, gpt_real *mean, gpt_real *rstd, const gpt_real *inp,
                                  const gpt_real *w, const gpt_real *bias, int N, int C) {
    const double eps = 1e-5;
    int n, i;
    for (n = 0; n < N; n++) {
        const gpt_real *x = inp + (size_t)n * C;
        gpt_real *o = out + (size_t)n * C;
        double m = 0, v = 0, s;
        for (i = 0; i < C; i++) m += x[i];
        m /= C;
        for (i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
        v /= C;
        s = 1.0 / sqrt(v + eps);
        for (i = 0; i < C; i++) o[i] = (gpt_real)((x[i] - m) * s) * w[i] + bias[i];
        mean[n] = (gpt_real)m;
        rstd[n] = (gpt_real)s;
    }
}

/* dinp += d(out)/d(inp)^T dout */
GPT_FN void gpt_layernorm_backward_input(gpt_real *dinp, const gpt_real *dout, const gpt_real *inp,
                                         const gpt_real *mean, const gpt_real *rstd, const gpt_real *w, int N, int C) {
    int n, i;
    for (n = 0; n < N; n++) {
        const gpt_real *x = inp + (size_t)n * C, *d = dout + (size_t)n * C;
        gpt_real *dx = dinp + (size_t)n * C;
        double m = mean[n], s = rstd[n], dnorm_mean = 0, dnorm_norm_mean = 0;
        for (i = 0; i < C; i++) {
            double norm = (x[i] - m) * s, dnorm = (double)w[i] * d[i];
            dnorm_mean += dnorm;
            dnorm_norm_mean += dnorm * norm;
        }
        dnorm_mean /= C;
        dnorm_norm_mean /= C;
        for (i = 0; i < C; i++) {
            double norm = (x[i] - m) * s, dnorm = (double)w[i] * d[i];
            dx[i] += (gpt_real)((dnorm - dnorm_mean - norm * dnorm_norm_mean) * s);
        }
    }
}

GPT_FN void gpt_layernorm_backward_weight(gpt_real *dw, gpt_real *db, const gpt_real *dout, const gpt_real *inp,
                                          const gpt_real *mean, const gpt_real *rstd, int N, int C) {
    int n, i;
    for (n = 0; n < N; n++) {
        const gpt_real *x = inp + (size_t)n * C, *d = dout + (size_t)n * C;
        for (i = 0; i < C; i++) {
            gpt_real norm = (gpt_real)((x[i] - mean[n]) * rstd[n]);
            dw[i] += norm * d[i];
            db[i] += d[i];
        }
    }
}

/* out[N,OC] = inp[N,IC] w[OC,IC]^T + bias[OC] (bias may be NULL) */
GPT_FN void gpt_matmul_forward(gpt_real *out, const gpt_real *inp, const gpt_real *w, const gpt_real *bias, int N,
                               int IC, int OC) {
    int n, o, i;
    for (n = 0; n < N; n++)
        for (o = 0; o < OC; o++) {
            const gpt_real *x = inp + (size_t)n * IC, *wr = w + (size_t)o * IC;
            double acc = bias ? bias[o] : 0;
            for (i = 0; i < IC; i++) acc += (double)x[i] * wr[i];
            out[(size_t)n * OC + o] = (gpt_real)acc;
        }
}

/* dinp[N,IC] += dout[N,OC] w[OC,IC] */
GPT_FN void gpt_matmul_backward_input(gpt_real *dinp, const gpt_real *dout, const gpt_real *w, int N, int IC, int OC) {
    int n, o, i;
    for (n = 0; n < N; n++)
        for (i = 0; i < IC; i++) {
            double acc = 0;
            for (o = 0; o < OC; o++) acc += (double)dout[(size_t)n * OC + o] * w[(size_t)o * IC + i];
            dinp[(size_t)n * IC + i] += (gpt_real)acc;
        }
}

/* dw[OC,IC] += dout^T inp, dbias[OC] += column sums of dout (dbias may be NULL) */
GPT_FN void gpt_matmul_backward_weight(gpt_real *dw, gpt_real *dbias, const gpt_real *dout, const gpt_real *inp, int N,
                                       int IC, int OC) {
    int n, o, i;
    for (o = 0; o < OC; o++) {
        for (i = 0; i < IC; i++) {
            double acc = 0;
            for (n = 0; n < N; n++) acc += (double)dout[(size_t)n * OC + o] * inp[(size_t)n * IC + i];
            dw[(size_t)o * IC + i] += (gpt_real)acc;
        }
        if (dbias) {
            double acc = 0;
            for (n = 0; n < N; n++) acc += dout[(size_t)n * OC + o];
            dbias[o] += (gpt_real)acc;
        }
    }
}

/* causal self-attention: qkv[N,3C] -> out[N,C]; att[B,NH,T,T] keeps the
   softmax (row t uses columns 0..t) for the backward */
GPT_FN void gpt_attention_forward(gpt_real *out, gpt_real *att, const gpt_real *qkv, int B, int T, int C, int NH) {
    int hs = C / NH, b, t, h, t2, i;
    double scale = 1.0 / sqrt((double)hs);
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++)
            for (h = 0; h < NH; h++) {
                const gpt_real *q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
                gpt_real *a = att + (((size_t)b * NH + h) * T + t) * T;
                gpt_real *o = out + ((size_t)b * T + t) * C + h * hs;
                double mx = -1e300, sum = 0;
                for (t2 = 0; t2 <= t; t2++) {
                    const gpt_real *k = qkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
                    double dot = 0;
                    for (i = 0; i < hs; i++) dot += (double)q[i] * k[i];
                    dot *= scale;
                    a[t2] = (gpt_real)dot;
                    if (dot > mx) mx = dot;
                }
                for (t2 = 0; t2 <= t; t2++) {
                    double e = exp(a[t2] - mx);
                    a[t2] = (gpt_real)e;
                    sum += e;
                }
                for (t2 = 0; t2 < T; t2++) a[t2] = t2 <= t ? (gpt_real)(a[t2] / sum) : 0;
                for (i = 0; i < hs; i++) {
                    double acc = 0;
                    for (t2 = 0; t2 <= t; t2++) acc += (double)a[t2] * qkv[((size_t)b * T + t2) * 3 * C + 2 * C + h * hs + i];
                    o[i] = (gpt_real)acc;
                }
            }
}

/* dqkv += d(out)/d(qkv)^T dout, from qkv and the kept softmax; no scratch */
GPT_FN void gpt_attention_backward_input(gpt_real *dqkv, const gpt_real *dout, const gpt_real *qkv,
                                         const gpt_real *att, int B, int T, int C, int NH) {
    int hs = C / NH, b, t, h, t2, i;
    double scale = 1.0 / sqrt((double)hs);
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++)
            for (h = 0; h < NH; h++) {
                const gpt_real *q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
                const gpt_real *a = att + (((size_t)b * NH + h) * T + t) * T;
                const gpt_real *d = dout + ((size_t)b * T + t) * C + h * hs;
                gpt_real *dq = dqkv + ((size_t)b * T + t) * 3 * C + h * hs;
                double s = 0;
                /* softmax backward needs sum_k att[k] datt[k] first, datt[k] = dout . v_k */
                for (t2 = 0; t2 <= t; t2++) {
                    const gpt_real *v = qkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
                    double datt = 0;
                    for (i = 0; i < hs; i++) datt += (double)d[i] * v[i];
                    s += a[t2] * datt;
                }
                for (t2 = 0; t2 <= t; t2++) {
                    const gpt_real *k = qkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
                    const gpt_real *v = qkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
                    gpt_real *dk = dqkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
                    gpt_real *dv = dqkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
                    double datt = 0, dpre;
                    for (i = 0; i < hs; i++) datt += (double)d[i] * v[i];
                    dpre = a[t2] * (datt - s) * scale;
                    for (i = 0; i < hs; i++) {
                        dq[i] += (gpt_real)(dpre * k[i]);
                        dk[i] += (gpt_real)(dpre * q[i]);
                        dv[i] += (gpt_real)(a[t2] * d[i]);
                    }
                }
            }
}

#define GPT_GELU_S 0.7978845608028654 /* sqrt(2/pi), tanh approximation as GPT-2 */
GPT_FN void gpt_gelu_forward(gpt_real *out, const gpt_real *inp, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        double x = inp[i];
        out[i] = (gpt_real)(0.5 * x * (1.0 + tanh(GPT_GELU_S * (x + 0.044715 * x * x * x))));
    }
}
GPT_FN void gpt_gelu_backward_input(gpt_real *dinp, const gpt_real *inp, const gpt_real *dout, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        double x = inp[i], u = GPT_GELU_S * (x + 0.044715 * x * x * x), th = tanh(u);
        double du = GPT_GELU_S * (1.0 + 3.0 * 0.044715 * x * x);
        dinp[i] += (gpt_real)((0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * du) * dout[i]);
    }
}

/* probs[N,V] = softmax(logits); losses[n] = -log probs[n, target[n]] */
GPT_FN void gpt_crossentropy_forward(gpt_real *probs, gpt_real *losses, const gpt_real *logits, const int *target,
                                     int N, int V) {
    int n, i;
    for (n = 0; n < N; n++) {
        const gpt_real *l = logits + (size_t)n * V;
        gpt_real *p = probs + (size_t)n * V;
        double mx = -1e300, sum = 0;
        for (i = 0; i < V; i++) if (l[i] > mx) mx = l[i];
        for (i = 0; i < V; i++) sum += exp(l[i] - mx);
        for (i = 0; i < V; i++) p[i] = (gpt_real)(exp(l[i] - mx) / sum);
        losses[n] = (gpt_real)(-(l[target[n]] - mx - log(sum)));
    }
}

/* dlogits += (probs - onehot(target)) * dloss, dloss = d(total loss)/d(losses[n]) */
GPT_FN void gpt_crossentropy_backward_input(gpt_real *dlogits, const gpt_real *probs, const int *target, gpt_real dloss,
                                            int N, int V) {
    int n, i;
    for (n = 0; n < N; n++)
        for (i = 0; i < V; i++)
            dlogits[(size_t)n * V + i] += (probs[(size_t)n * V + i] - (i == target[n] ? 1 : 0)) * dloss;
}

/* ---- data: a text file, its distinct bytes the vocabulary ---- */

/* Reads the file at path into a malloc'd buffer of *len bytes (the caller
   frees it) and numbers its distinct bytes in order of first appearance:
   map[byte] = token, or -1 for bytes it does not hold; *vocab = how many.
   Returns NULL with a sentence in err (256 bytes) when the file cannot be
   read or holds min_len bytes or fewer. */
GPT_FN unsigned char *gpt_read_text(const char *path, long min_len, long *len, int map[256], int *vocab, char *err) {
    /* the size from fstat, of a regular file only: a directory or a pipe
       has no size to read it by (ftell gave a directory LONG_MAX) */
    int fd = open(path, O_RDONLY);
    struct stat st;
    unsigned char *text;
    long i, n, got = 0;
    if (fd < 0) {
        snprintf(err, 256, "cannot open %s: %s (run from the repository root, or pass --data)", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, 256, "%s is not a regular file (--data takes a text file)", path);
        close(fd);
        return NULL;
    }
    if (st.st_size > (1L << 30)) {
        snprintf(err, 256, "%s is larger than 1 GiB (%.3g bytes); give a smaller text", path, (double)st.st_size);
        close(fd);
        return NULL;
    }
    n = (long)st.st_size;
    text = (unsigned char *)malloc((size_t)(n > 0 ? n : 1));
    while (text && got < n) {
        ssize_t k = read(fd, text + got, (size_t)(n - got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (long)k;
    }
    close(fd);
    if (!text || n <= min_len || got != n) {
        if (!text) snprintf(err, 256, "out of memory reading %s (%ld bytes)", path, n);
        else if (got != n) snprintf(err, 256, "cannot read %s: %s", path, got < n && errno ? strerror(errno) : "it changed size");
        else snprintf(err, 256, "%s must hold more than %ld bytes", path, min_len);
        free(text);
        return NULL;
    }
    *vocab = 0;
    for (i = 0; i < 256; i++) map[i] = -1;
    for (i = 0; i < n; i++)
        if (map[text[i]] < 0) map[text[i]] = (*vocab)++;
    *len = n;
    return text;
}

/* ---- stages ---- */

typedef struct gpt_stage {
    int first_layer, num_layers; /* blocks [first_layer, first_layer + num_layers) */
    int has_embed, has_head;     /* stage 0 / the last stage */
} gpt_stage;

/* stage s of S, with the L layers split as evenly as possible (earlier
   stages take the extra layers) */
GPT_FN gpt_stage gpt_stage_of(const gpt_config *c, int s, int S) {
    gpt_stage g;
    int base = c->layers / S, extra = c->layers % S;
    g.first_layer = s * base + (s < extra ? s : extra);
    g.num_layers = base + (s < extra ? 1 : 0);
    g.has_embed = s == 0;
    g.has_head = s == S - 1;
    return g;
}

/* One block's tensors inside an activation buffer (forward, then B's). */
typedef struct gpt_block_act {
    gpt_real *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *res2, *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_gelu,
        *res3;
    gpt_real *dres3, *dfch_gelu, *dfch, *dln2, *dres2, *datty, *dqkv, *dln1;
} gpt_block_act;

typedef struct gpt_head_act {
    gpt_real *lnf, *lnf_mean, *lnf_rstd, *logits, *probs, *losses, *dlogits, *dlnf;
} gpt_head_act;

GPT_FN size_t gpt__block_size(const gpt_config *c) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels;
    size_t att = (size_t)c->batch * c->heads * c->seq * c->seq;
    size_t fwd = N * C + 2 * N + 3 * N * C + att + N * C + N * C + N * C + 2 * N + 4 * N * C + 4 * N * C + N * C;
    size_t bwd = N * C + 4 * N * C + 4 * N * C + N * C + N * C + N * C + 3 * N * C + N * C;
    return fwd + bwd;
}

GPT_FN gpt_block_act gpt__block_at(const gpt_config *c, gpt_real *p) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels;
    size_t att = (size_t)c->batch * c->heads * c->seq * c->seq;
    gpt_block_act a;
    a.ln1 = p; p += N * C;
    a.ln1_mean = p; p += N;
    a.ln1_rstd = p; p += N;
    a.qkv = p; p += 3 * N * C;
    a.att = p; p += att;
    a.atty = p; p += N * C;
    a.res2 = p; p += N * C;
    a.ln2 = p; p += N * C;
    a.ln2_mean = p; p += N;
    a.ln2_rstd = p; p += N;
    a.fch = p; p += 4 * N * C;
    a.fch_gelu = p; p += 4 * N * C;
    a.res3 = p; p += N * C;
    a.dres3 = p; p += N * C;
    a.dfch_gelu = p; p += 4 * N * C;
    a.dfch = p; p += 4 * N * C;
    a.dln2 = p; p += N * C;
    a.dres2 = p; p += N * C;
    a.datty = p; p += N * C;
    a.dqkv = p; p += 3 * N * C;
    a.dln1 = p;
    return a;
}

GPT_FN size_t gpt__head_size(const gpt_config *c) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels, V = (size_t)c->vocab;
    return N * C + 2 * N + 3 * N * V + N + N * C;
}

GPT_FN gpt_head_act gpt__head_at(const gpt_config *c, gpt_real *p) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels, V = (size_t)c->vocab;
    gpt_head_act h;
    h.lnf = p; p += N * C;
    h.lnf_mean = p; p += N;
    h.lnf_rstd = p; p += N;
    h.logits = p; p += N * V;
    h.probs = p; p += N * V;
    h.dlogits = p; p += N * V;
    h.losses = p; p += N;
    h.dlnf = p;
    return h;
}

/* Layout of an activation buffer: [input N*C][dinput N*C][blocks...][head]. */
GPT_FN size_t gpt_act_size(const gpt_config *c, const gpt_stage *g) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels;
    return 2 * N * C + (size_t)g->num_layers * gpt__block_size(c) + (g->has_head ? gpt__head_size(c) : 0);
}

/* the stage's input inside its activation buffer (what 1F1B-R keeps) */
GPT_FN gpt_real *gpt_act_input(const gpt_config *c, gpt_real *act) { (void)c; return act; }

/* the gradient for the stage's input, written by B (sent to the previous stage) */
GPT_FN gpt_real *gpt_act_dinput(const gpt_config *c, gpt_real *act) {
    return act + (size_t)c->batch * c->seq * c->channels;
}

/* the stage's output (the last block's res3), or NULL for the last stage */
GPT_FN gpt_real *gpt_act_output(const gpt_config *c, const gpt_stage *g, gpt_real *act) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels;
    if (g->has_head || g->num_layers == 0) return g->has_head ? NULL : act;
    return gpt__block_at(c, act + 2 * N * C + (size_t)(g->num_layers - 1) * gpt__block_size(c)).res3;
}

/* F: input is the previous stage's output (ignored with has_embed: tokens
   are embedded instead; it may alias gpt_act_input). The input is copied into
   the buffer first. With has_head, returns the mean loss over the
   microbatch's N tokens (else 0). */
GPT_FN double gpt_stage_forward(const gpt_config *c, const gpt_params *w, const gpt_stage *g, gpt_real *act,
                                const gpt_real *input, const int *tokens, const int *targets) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels, bs = gpt__block_size(c);
    gpt_real *x = gpt_act_input(c, act);
    int l, B = c->batch, T = c->seq, NH = c->heads, iC = c->channels;
    if (g->has_embed) gpt_encoder_forward(x, tokens, w->t[GPT_WTE], w->t[GPT_WPE], B, T, iC);
    else if (input != x) memcpy(x, input, sizeof(gpt_real) * N * C);
    for (l = 0; l < g->num_layers; l++) {
        int L = g->first_layer + l;
        size_t i;
        gpt_block_act a = gpt__block_at(c, act + 2 * N * C + (size_t)l * bs);
        gpt_layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, x, w->t[GPT_LN1W] + L * C, w->t[GPT_LN1B] + L * C,
                              (int)N, iC);
        gpt_matmul_forward(a.qkv, a.ln1, w->t[GPT_QKVW] + L * 3 * C * C, w->t[GPT_QKVB] + L * 3 * C, (int)N, iC,
                           3 * iC);
        gpt_attention_forward(a.atty, a.att, a.qkv, B, T, iC, NH);
        gpt_matmul_forward(a.res2, a.atty, w->t[GPT_ATTPROJW] + L * C * C, w->t[GPT_ATTPROJB] + L * C, (int)N, iC,
                           iC);
        for (i = 0; i < N * C; i++) a.res2[i] += x[i];
        gpt_layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2, w->t[GPT_LN2W] + L * C, w->t[GPT_LN2B] + L * C,
                              (int)N, iC);
        gpt_matmul_forward(a.fch, a.ln2, w->t[GPT_FCW] + L * 4 * C * C, w->t[GPT_FCB] + L * 4 * C, (int)N, iC,
                           4 * iC);
        gpt_gelu_forward(a.fch_gelu, a.fch, 4 * N * C);
        gpt_matmul_forward(a.res3, a.fch_gelu, w->t[GPT_FCPROJW] + L * C * 4 * C, w->t[GPT_FCPROJB] + L * C, (int)N,
                           4 * iC, iC);
        for (i = 0; i < N * C; i++) a.res3[i] += a.res2[i];
        x = a.res3;
    }
    if (g->has_head) {
        gpt_head_act h = gpt__head_at(c, act + 2 * N * C + (size_t)g->num_layers * bs);
        double sum = 0;
        size_t n;
        gpt_layernorm_forward(h.lnf, h.lnf_mean, h.lnf_rstd, x, w->t[GPT_LNFW], w->t[GPT_LNFB], (int)N, iC);
        gpt_matmul_forward(h.logits, h.lnf, w->t[GPT_LMW], w->t[GPT_LMB], (int)N, iC, c->vocab);
        gpt_crossentropy_forward(h.probs, h.losses, h.logits, targets, (int)N, c->vocab);
        for (n = 0; n < N; n++) sum += h.losses[n];
        return sum / (double)N;
    }
    return 0;
}

/* B: doutput is the gradient for the stage's output (from the next stage;
   ignored with has_head, where dloss = d(total loss)/d(each token's loss)).
   Leaves the gradient for the stage's input in gpt_act_dinput and, for W,
   every weight's output gradient in the buffer. Reads the weights. */
GPT_FN void gpt_stage_backward_input(const gpt_config *c, const gpt_params *w, const gpt_stage *g, gpt_real *act,
                                     const gpt_real *doutput, const int *targets, gpt_real dloss) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels, bs = gpt__block_size(c);
    int l, B = c->batch, T = c->seq, NH = c->heads, iC = c->channels;
    gpt_real *dx; /* gradient of the current block's output */
    memset(gpt_act_dinput(c, act), 0, sizeof(gpt_real) * N * C);
    for (l = 0; l < g->num_layers; l++) {
        gpt_block_act a = gpt__block_at(c, act + 2 * N * C + (size_t)l * bs);
        memset(a.dres3, 0, sizeof(gpt_real) * (bs - (size_t)(a.dres3 - a.ln1)));
    }
    if (g->num_layers > 0)
        dx = gpt__block_at(c, act + 2 * N * C + (size_t)(g->num_layers - 1) * bs).dres3;
    else
        dx = gpt_act_dinput(c, act);
    if (g->has_head) {
        gpt_head_act h = gpt__head_at(c, act + 2 * N * C + (size_t)g->num_layers * bs);
        const gpt_real *x = g->num_layers > 0
                                ? gpt__block_at(c, act + 2 * N * C + (size_t)(g->num_layers - 1) * bs).res3
                                : gpt_act_input(c, act);
        memset(h.dlogits, 0, sizeof(gpt_real) * N * c->vocab);
        memset(h.dlnf, 0, sizeof(gpt_real) * N * C);
        gpt_crossentropy_backward_input(h.dlogits, h.probs, targets, dloss, (int)N, c->vocab);
        gpt_matmul_backward_input(h.dlnf, h.dlogits, w->t[GPT_LMW], (int)N, iC, c->vocab);
        gpt_layernorm_backward_input(dx, h.dlnf, x, h.lnf_mean, h.lnf_rstd, w->t[GPT_LNFW], (int)N, iC);
    } else {
        memcpy(dx, doutput, sizeof(gpt_real) * N * C);
    }
    for (l = g->num_layers - 1; l >= 0; l--) {
        int L = g->first_layer + l;
        size_t i;
        gpt_block_act a = gpt__block_at(c, act + 2 * N * C + (size_t)l * bs);
        const gpt_real *x =
            l > 0 ? gpt__block_at(c, act + 2 * N * C + (size_t)(l - 1) * bs).res3 : gpt_act_input(c, act);
        gpt_real *dxin = l > 0 ? gpt__block_at(c, act + 2 * N * C + (size_t)(l - 1) * bs).dres3 : gpt_act_dinput(c, act);
        /* res3 = res2 + fcproj(gelu(fc(ln2(res2)))) */
        gpt_matmul_backward_input(a.dfch_gelu, a.dres3, w->t[GPT_FCPROJW] + L * C * 4 * C, (int)N, 4 * iC, iC);
        gpt_gelu_backward_input(a.dfch, a.fch, a.dfch_gelu, 4 * N * C);
        gpt_matmul_backward_input(a.dln2, a.dfch, w->t[GPT_FCW] + L * 4 * C * C, (int)N, iC, 4 * iC);
        for (i = 0; i < N * C; i++) a.dres2[i] = a.dres3[i];
        gpt_layernorm_backward_input(a.dres2, a.dln2, a.res2, a.ln2_mean, a.ln2_rstd, w->t[GPT_LN2W] + L * C, (int)N,
                                     iC);
        /* res2 = x + attproj(attention(qkv(ln1(x)))) */
        gpt_matmul_backward_input(a.datty, a.dres2, w->t[GPT_ATTPROJW] + L * C * C, (int)N, iC, iC);
        gpt_attention_backward_input(a.dqkv, a.datty, a.qkv, a.att, B, T, iC, NH);
        gpt_matmul_backward_input(a.dln1, a.dqkv, w->t[GPT_QKVW] + L * 3 * C * C, (int)N, iC, 3 * iC);
        for (i = 0; i < N * C; i++) dxin[i] += a.dres2[i];
        gpt_layernorm_backward_input(dxin, a.dln1, x, a.ln1_mean, a.ln1_rstd, w->t[GPT_LN1W] + L * C, (int)N, iC);
    }
}

/* W: accumulates into the gradient array (gpt_params layout) from the
   activation buffer alone (and the tokens for the embedding). */
GPT_FN void gpt_stage_backward_weight(const gpt_config *c, const gpt_params *dw, const gpt_stage *g, gpt_real *act,
                                      const int *tokens) {
    size_t N = (size_t)c->batch * c->seq, C = (size_t)c->channels, bs = gpt__block_size(c);
    int l, iC = c->channels;
    for (l = 0; l < g->num_layers; l++) {
        int L = g->first_layer + l;
        gpt_block_act a = gpt__block_at(c, act + 2 * N * C + (size_t)l * bs);
        const gpt_real *x =
            l > 0 ? gpt__block_at(c, act + 2 * N * C + (size_t)(l - 1) * bs).res3 : gpt_act_input(c, act);
        gpt_layernorm_backward_weight(dw->t[GPT_LN1W] + L * C, dw->t[GPT_LN1B] + L * C, a.dln1, x, a.ln1_mean,
                                      a.ln1_rstd, (int)N, iC);
        gpt_matmul_backward_weight(dw->t[GPT_QKVW] + L * 3 * C * C, dw->t[GPT_QKVB] + L * 3 * C, a.dqkv, a.ln1, (int)N,
                                   iC, 3 * iC);
        gpt_matmul_backward_weight(dw->t[GPT_ATTPROJW] + L * C * C, dw->t[GPT_ATTPROJB] + L * C, a.dres2, a.atty,
                                   (int)N, iC, iC);
        gpt_layernorm_backward_weight(dw->t[GPT_LN2W] + L * C, dw->t[GPT_LN2B] + L * C, a.dln2, a.res2, a.ln2_mean,
                                      a.ln2_rstd, (int)N, iC);
        gpt_matmul_backward_weight(dw->t[GPT_FCW] + L * 4 * C * C, dw->t[GPT_FCB] + L * 4 * C, a.dfch, a.ln2, (int)N,
                                   iC, 4 * iC);
        gpt_matmul_backward_weight(dw->t[GPT_FCPROJW] + L * C * 4 * C, dw->t[GPT_FCPROJB] + L * C, a.dres3,
                                   a.fch_gelu, (int)N, 4 * iC, iC);
    }
    if (g->has_head) {
        gpt_head_act h = gpt__head_at(c, act + 2 * N * C + (size_t)g->num_layers * bs);
        const gpt_real *x = g->num_layers > 0
                                ? gpt__block_at(c, act + 2 * N * C + (size_t)(g->num_layers - 1) * bs).res3
                                : gpt_act_input(c, act);
        gpt_matmul_backward_weight(dw->t[GPT_LMW], dw->t[GPT_LMB], h.dlogits, h.lnf, (int)N, iC, c->vocab);
        gpt_layernorm_backward_weight(dw->t[GPT_LNFW], dw->t[GPT_LNFB], h.dlnf, x, h.lnf_mean, h.lnf_rstd, (int)N, iC);
    }
    if (g->has_embed)
        gpt_encoder_backward_weight(dw->t[GPT_WTE], dw->t[GPT_WPE], gpt_act_dinput(c, act), tokens, c->batch, c->seq,
                                    iC);
}

/* Which parameters a stage owns: calls fn(offset, count) for each range of
   the gpt_params array (used to sum gradients stage by stage). */
GPT_FN void gpt_stage_param_ranges(const gpt_config *c, const gpt_stage *g, void (*fn)(size_t, size_t, void *),
                                   void *user) {
    size_t sizes[GPT_NUM_TENSORS], off[GPT_NUM_TENSORS], o = 0;
    int t;
    gpt_param_sizes(c, sizes);
    for (t = 0; t < GPT_NUM_TENSORS; t++) {
        off[t] = o;
        o += sizes[t];
    }
    for (t = 0; t < GPT_NUM_TENSORS; t++) {
        if (t == GPT_WTE || t == GPT_WPE) {
            if (g->has_embed) fn(off[t], sizes[t], user);
        } else if (t == GPT_LNFW || t == GPT_LNFB || t == GPT_LMW || t == GPT_LMB) {
            if (g->has_head) fn(off[t], sizes[t], user);
        } else {
            size_t per = sizes[t] / (size_t)c->layers;
            fn(off[t] + per * (size_t)g->first_layer, per * (size_t)g->num_layers, user);
        }
    }
}

#endif /* GPT_REF_H */
