/* Tests of the C API, compiled as C99: every function and every error path.
 * References are plain long double loops. */
#include <marg/marg.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static unsigned long long rng_state = 88172645463325252ULL;
static double uniform(void) { /* xorshift64, in (0.01, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return 0.01 + 0.99 * (double)(rng_state >> 11) / 9007199254740992.0;
}

static double rel(long double got, long double want) {
  return (double)fabsl((got - want) / want);
}

/* forward and gradients of one (m, n) problem, double and float, strides 1 and 2 */
static void check_problem(int m, int n, int inc) {
  const int len = m + n - 1;
  double *p = malloc(sizeof(double) * m * inc), *q = malloc(sizeof(double) * n * inc);
  double *g = malloc(sizeof(double) * len * inc), *out = malloc(sizeof(double) * len * inc);
  float *pf = malloc(sizeof(float) * m * inc), *qf = malloc(sizeof(float) * n * inc);
  float *gf = malloc(sizeof(float) * len * inc), *outf = malloc(sizeof(float) * len * inc);
  int i, j;
  double worst = 0, worstf = 0;
  for (i = 0; i < m * inc; ++i) pf[i] = (float)(p[i] = uniform());
  for (i = 0; i < n * inc; ++i) qf[i] = (float)(q[i] = uniform());
  for (i = 0; i < len * inc; ++i) gf[i] = (float)(g[i] = uniform());

  CHECK(marg_convolve_f64(m, n, p, inc, q, inc, out, inc, NULL) == MARG_SUCCESS);
  CHECK(marg_convolve_f32(m, n, pf, inc, qf, inc, outf, inc, NULL) == MARG_SUCCESS);
  for (i = 0; i < len; ++i) {
    long double s = 0, sf = 0;
    for (j = 0; j < m; ++j)
      if (i - j >= 0 && i - j < n) {
        s += (long double)p[j * inc] * q[(i - j) * inc];
        sf += (long double)pf[j * inc] * qf[(i - j) * inc];
      }
    if (rel(out[i * inc], s) > worst) worst = rel(out[i * inc], s);
    if (rel(outf[i * inc], sf) > worstf) worstf = rel(outf[i * inc], sf);
  }
  CHECK(marg_convolve_grad_p_f64(m, n, g, inc, q, inc, out, inc, NULL) == MARG_SUCCESS);
  CHECK(marg_convolve_grad_p_f32(m, n, gf, inc, qf, inc, outf, inc, NULL) == MARG_SUCCESS);
  for (j = 0; j < m; ++j) {
    long double s = 0, sf = 0;
    for (i = 0; i < n; ++i) {
      s += (long double)q[i * inc] * g[(j + i) * inc];
      sf += (long double)qf[i * inc] * gf[(j + i) * inc];
    }
    if (rel(out[j * inc], s) > worst) worst = rel(out[j * inc], s);
    if (rel(outf[j * inc], sf) > worstf) worstf = rel(outf[j * inc], sf);
  }
  CHECK(marg_convolve_grad_q_f64(m, n, g, inc, p, inc, out, inc, NULL) == MARG_SUCCESS);
  CHECK(marg_convolve_grad_q_f32(m, n, gf, inc, pf, inc, outf, inc, NULL) == MARG_SUCCESS);
  for (j = 0; j < n; ++j) {
    long double s = 0, sf = 0;
    for (i = 0; i < m; ++i) {
      s += (long double)p[i * inc] * g[(j + i) * inc];
      sf += (long double)pf[i * inc] * gf[(j + i) * inc];
    }
    if (rel(out[j * inc], s) > worst) worst = rel(out[j * inc], s);
    if (rel(outf[j * inc], sf) > worstf) worstf = rel(outf[j * inc], sf);
  }
  if (worst > 1e-12 || worstf > 1e-5)
    fprintf(stderr, "m=%d n=%d inc=%d: worst relative error double %g float %g\n", m, n, inc, worst,
            worstf);
  CHECK(worst <= 1e-12);
  CHECK(worstf <= 1e-5);
  free(p), free(q), free(g), free(out), free(pf), free(qf), free(gf), free(outf);
}

/* the batched forms against the single forms, with a shared (stride 0) q */
static void check_batched(void) {
  enum { m = 37, n = 101, len = m + n - 1, batch = 5 };
  static double p[m * batch], q[n], g[len * batch], out[len * batch], one[len];
  static float pf[m * batch], qf[n], gf[len * batch], outf[len * batch], onef[len];
  int b, i, same = 1;
  for (i = 0; i < m * batch; ++i) pf[i] = (float)(p[i] = uniform());
  for (i = 0; i < n; ++i) qf[i] = (float)(q[i] = uniform());
  for (i = 0; i < len * batch; ++i) gf[i] = (float)(g[i] = uniform());
  CHECK(marg_convolve_batched_f64(m, n, p, 1, m, q, 1, 0, out, 1, len, batch, NULL) ==
        MARG_SUCCESS);
  CHECK(marg_convolve_batched_f32(m, n, pf, 1, m, qf, 1, 0, outf, 1, len, batch, NULL) ==
        MARG_SUCCESS);
  for (b = 0; b < batch; ++b) {
    marg_convolve_f64(m, n, p + b * m, 1, q, 1, one, 1, NULL);
    marg_convolve_f32(m, n, pf + b * m, 1, qf, 1, onef, 1, NULL);
    for (i = 0; i < len; ++i)
      same &= rel(out[b * len + i], one[i]) <= 1e-14 && rel(outf[b * len + i], onef[i]) <= 1e-6;
  }
  CHECK(same);
  CHECK(marg_convolve_grad_p_batched_f64(m, n, g, 1, len, q, 1, 0, out, 1, m, batch, NULL) ==
        MARG_SUCCESS);
  CHECK(marg_convolve_grad_p_batched_f32(m, n, gf, 1, len, qf, 1, 0, outf, 1, m, batch, NULL) ==
        MARG_SUCCESS);
  for (b = 0, same = 1; b < batch; ++b) {
    marg_convolve_grad_p_f64(m, n, g + b * len, 1, q, 1, one, 1, NULL);
    marg_convolve_grad_p_f32(m, n, gf + b * len, 1, qf, 1, onef, 1, NULL);
    for (i = 0; i < m; ++i)
      same &= rel(out[b * m + i], one[i]) <= 1e-14 && rel(outf[b * m + i], onef[i]) <= 1e-6;
  }
  CHECK(same);
  CHECK(marg_convolve_grad_q_batched_f64(m, n, g, 1, len, p, 1, m, out, 1, n, batch, NULL) ==
        MARG_SUCCESS);
  CHECK(marg_convolve_grad_q_batched_f32(m, n, gf, 1, len, pf, 1, m, outf, 1, n, batch, NULL) ==
        MARG_SUCCESS);
  for (b = 0, same = 1; b < batch; ++b) {
    marg_convolve_grad_q_f64(m, n, g + b * len, 1, p + b * m, 1, one, 1, NULL);
    marg_convolve_grad_q_f32(m, n, gf + b * len, 1, pf + b * m, 1, onef, 1, NULL);
    for (i = 0; i < n; ++i)
      same &= rel(out[b * n + i], one[i]) <= 1e-14 && rel(outf[b * n + i], onef[i]) <= 1e-6;
  }
  CHECK(same);
}

static int message_has(const char* text) {
  return strstr(marg_last_error_message(), text) != NULL;
}

/* every error path returns its status and a message naming the argument */
static void check_errors(void) {
  double p[4] = {1, 2, 3, 4}, q[4] = {1, 2, 3, 4}, r[8];
  float pf[4] = {1, 2, 3, 4}, rf[8];
  marg_backend b;
  int count = -1;
  CHECK(marg_convolve_f64(0, 4, p, 1, q, 1, r, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("m = 0"));
  CHECK(marg_convolve_f32(4, -1, pf, 1, pf, 1, rf, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("n = -1"));
  CHECK(marg_convolve_f64(4, 4, p, 0, q, 1, r, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("incp = 0"));
  CHECK(marg_convolve_f64(4, 4, NULL, 1, q, 1, r, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("p is null"));
  CHECK(marg_convolve_f64(INT_MAX, 2, p, 1, q, 1, r, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("overflows"));
  CHECK(marg_convolve_f64(4, 4, p, 1, q, 1, p, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("overlaps"));
  CHECK(marg_convolve_grad_p_f64(4, 4, r, 1, q, 1, NULL, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("gp is null"));
  CHECK(marg_convolve_grad_q_f32(4, 4, rf, 1, pf, -2, rf, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("incp = -2"));
  CHECK(marg_convolve_batched_f64(4, 4, p, 1, 0, q, 1, 0, r, 1, 7, -1, NULL) ==
        MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("batch = -1"));
  CHECK(marg_convolve_batched_f64(4, 4, p, 1, -4, q, 1, 0, r, 1, 7, 1, NULL) ==
        MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("stridep = -4"));
  CHECK(marg_convolve_batched_f64(2, 2, p, 1, 0, q, 1, 0, r, 1, 2, 2, NULL) ==
        MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("strider = 2"));
  /* batch 0 reads and writes nothing: null pointers are fine */
  CHECK(marg_convolve_batched_f32(4, 4, NULL, 1, 0, NULL, 1, 0, NULL, 1, 0, 0, NULL) ==
        MARG_SUCCESS);
  CHECK(marg_convolve_grad_p_batched_f64(4, 4, NULL, 1, 0, NULL, 1, 0, NULL, 1, 0, 0, NULL) ==
        MARG_SUCCESS);
  CHECK(marg_convolve_grad_q_batched_f32(4, 4, NULL, 1, 0, NULL, 1, 0, NULL, 1, 0, 0, NULL) ==
        MARG_SUCCESS);
  CHECK(marg_get_backend(NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_device_count(NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_set_pool_limit(0) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_set_backend((marg_backend)7) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("backend = 7"));
  CHECK(marg_device_count(&count) == MARG_SUCCESS);
  if (count == 0) {
    CHECK(marg_set_backend(MARG_BACKEND_CUDA) == MARG_ERROR_INVALID_ARGUMENT);
    CHECK(marg_get_backend(&b) == MARG_SUCCESS && b == MARG_BACKEND_CPU);
  }
  /* a reason exactly when CUDA is refused; the refusal's message carries it */
  CHECK(marg_cuda_unusable_reason() != NULL);
  if (marg_cuda_unusable_reason()[0] != '\0') {
    CHECK(marg_set_backend(MARG_BACKEND_CUDA) == MARG_ERROR_INVALID_ARGUMENT);
    CHECK(message_has(marg_cuda_unusable_reason()));
    CHECK(marg_set_backend(MARG_BACKEND_AUTOMATIC) == MARG_SUCCESS);
    CHECK(marg_get_backend(&b) == MARG_SUCCESS && b == MARG_BACKEND_CPU);
  } else {
    CHECK(count > 0);
    CHECK(marg_set_backend(MARG_BACKEND_CUDA) == MARG_SUCCESS);
  }
  CHECK(marg_set_backend(MARG_BACKEND_AUTOMATIC) == MARG_SUCCESS);
  CHECK(strcmp(marg_status_string(MARG_ERROR_OUT_OF_MEMORY), "out of memory") == 0);
  CHECK(strcmp(marg_status_string(MARG_SUCCESS), "success") == 0);
}

/* log P(x + y = k) against a long double loop over the values as given (no
 * normalization, as marg_convolve_*) */
static void check_log_prob_sum(void) {
  enum { m = 40, n = 23 };
  double p[2 * m], q[n], got;
  float pf[2 * m], qf[n], gotf;
  int i, j, worst_ok = 1;
  const long long lx = -5, ly = 100;
  long long k;
  for (i = 0; i < 2 * m; ++i) pf[i] = (float)(p[i] = uniform());
  for (i = 0; i < n; ++i) qf[i] = (float)(q[i] = uniform());
  for (k = lx + ly - 2; k <= lx + ly + m + n; ++k) {
    long double s = 0;
    for (i = 0; i < m; ++i) {
      j = (int)(k - lx - ly - i);
      if (j >= 0 && j < n) s += (long double)p[2 * i] * q[j];
    }
    CHECK(marg_log_prob_sum_f64(m, p, 2, lx, n, q, 1, ly, k, &got, NULL) == MARG_SUCCESS);
    if (s == 0) {
      worst_ok &= isinf(got) && got < 0;
    } else {
      worst_ok &= rel(got, logl(s)) <= 1e-12;
    }
  }
  CHECK(worst_ok);
  CHECK(marg_log_prob_sum_f32(m, pf, 2, lx, n, qf, 1, ly, lx + ly + 30, &gotf, NULL) ==
        MARG_SUCCESS);
  CHECK(marg_log_prob_sum_f64(m, p, 2, lx, n, q, 1, ly, lx + ly + 30, &got, NULL) == MARG_SUCCESS);
  CHECK(fabs(gotf - got) <= 1e-5 * fabs(got));
  /* one rule with marg_convolve_f64: unnormalized weights (each sums to 4)
   * give exp(log P) equal to the convolution's element, here 16 * 1/16 = 1 */
  {
    const double w[4] = {1, 1, 1, 1};
    double r[7], one;
    CHECK(marg_convolve_f64(4, 4, w, 1, w, 1, r, 1, NULL) == MARG_SUCCESS);
    CHECK(marg_log_prob_sum_f64(4, w, 1, 0, 4, w, 1, 0, 3, &one, NULL) == MARG_SUCCESS);
    CHECK(r[3] == 4.0 && fabs(exp(one) - r[3]) <= 1e-15 * r[3]);
  }
  /* error paths: the output keeps its value */
  got = 12345;
  p[0] = -1;
  CHECK(marg_log_prob_sum_f64(m, p, 2, lx, n, q, 1, ly, 0, &got, NULL) ==
        MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("-1"));
  CHECK(got == 12345);
  p[0] = 0.5;
  CHECK(marg_log_prob_sum_f64(0, p, 1, lx, n, q, 1, ly, 0, &got, NULL) ==
        MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_log_prob_sum_f64(m, p, 0, lx, n, q, 1, ly, 0, &got, NULL) ==
        MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_log_prob_sum_f32(m, pf, 1, lx, n, NULL, 1, ly, 0, &gotf, NULL) ==
        MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("q is null"));
  CHECK(marg_log_prob_sum_f64(m, p, 1, lx, n, q, 1, ly, 0, NULL, NULL) ==
        MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("log_prob is null"));
}

/* log-space convolution and its gradients against long double loops, with
 * log-weights spanning e^-3000 (below double's range) and a -inf entry */
static void check_log_convolve(void) {
  enum { m = 7, n = 5, len = m + n - 1 };
  double a[m], b[n], r[len], g[len], ga[m], gb[n], r2[2 * len];
  float af[m], bf[n], rf[len];
  long double worst = 0, worstf = 0, worst_ga = 0, worst_gb = 0;
  int i, j;
  for (i = 0; i < m; ++i) af[i] = (float)(a[i] = -500.0 * i - uniform());
  for (j = 0; j < n; ++j) bf[j] = (float)(b[j] = -3.0 * j - uniform());
  a[3] = af[3] = -INFINITY;
  for (i = 0; i < len; ++i) g[i] = uniform() - 0.5;
  CHECK(marg_log_convolve_f64(m, n, a, 1, b, 1, r, 1, NULL) == MARG_SUCCESS);
  CHECK(marg_log_convolve_f32(m, n, af, 1, bf, 1, rf, 1, NULL) == MARG_SUCCESS);
  CHECK(marg_log_convolve_grad_a_f64(m, n, g, 1, a, 1, b, 1, r, 1, ga, 1, NULL) == MARG_SUCCESS);
  CHECK(marg_log_convolve_grad_b_f64(m, n, g, 1, a, 1, b, 1, r, 1, gb, 1, NULL) == MARG_SUCCESS);
  for (i = 0; i < len; ++i) {
    long double top = -INFINITY, s = 0, topf = -INFINITY, sf = 0;
    for (j = 0; j < m; ++j)
      if (i - j >= 0 && i - j < n) {
        if ((long double)a[j] + b[i - j] > top) top = (long double)a[j] + b[i - j];
        if ((long double)af[j] + bf[i - j] > topf) topf = (long double)af[j] + bf[i - j];
      }
    for (j = 0; j < m; ++j)
      if (i - j >= 0 && i - j < n && a[j] != -INFINITY) {
        s += expl((long double)a[j] + b[i - j] - top);
        sf += expl((long double)af[j] + bf[i - j] - topf);
      }
    if (top == -INFINITY) {
      CHECK(r[i] == -INFINITY && rf[i] == -INFINITY);
      continue;
    }
    worst = fmaxl(worst, fabsl(r[i] - (top + logl(s))) / fmaxl(1, fabsl(top)));
    worstf = fmaxl(worstf, fabsl(rf[i] - (topf + logl(sf))) / fmaxl(1, fabsl(topf)));
  }
  for (j = 0; j < m; ++j) { /* ga_j = sum_k g_{j+k} exp(a_j + b_k - r_{j+k}) */
    long double want = 0, scale = 0;
    for (i = 0; i < n; ++i)
      if (a[j] != -INFINITY) {
        const long double t = expl((long double)a[j] + b[i] - r[j + i]);
        want += g[j + i] * t;
        scale += fabsl(g[j + i]) * t;
      }
    if (scale > 0) worst_ga = fmaxl(worst_ga, fabsl(ga[j] - want) / scale);
    if (a[j] == -INFINITY) CHECK(ga[j] == 0);
  }
  for (i = 0; i < n; ++i) { /* gb_k = sum_j g_{j+k} exp(a_j + b_k - r_{j+k}) */
    long double want = 0, scale = 0;
    for (j = 0; j < m; ++j)
      if (a[j] != -INFINITY) {
        const long double t = expl((long double)a[j] + b[i] - r[j + i]);
        want += g[j + i] * t;
        scale += fabsl(g[j + i]) * t;
      }
    if (scale > 0) worst_gb = fmaxl(worst_gb, fabsl(gb[i] - want) / scale);
  }
  CHECK(worst < 1e-14);
  CHECK(worstf < 1e-6);
  CHECK(worst_ga < 1e-12);
  CHECK(worst_gb < 1e-12);
  /* batched: the same a for both problems (stride 0), b and a shifted b */
  {
    double bb[2 * n];
    for (j = 0; j < n; ++j) bb[j] = bb[n + j] = b[j];
    bb[n] = -1e4;
    CHECK(marg_log_convolve_batched_f64(m, n, a, 1, 0, bb, 1, n, r2, 1, len, 2, NULL) ==
          MARG_SUCCESS);
    for (i = 0; i < len; ++i) CHECK(r2[i] == r[i]);
  }
  /* errors: reported with the argument's name, outputs untouched */
  r[0] = 42;
  CHECK(marg_log_convolve_f64(0, n, a, 1, b, 1, r, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("m = 0"));
  CHECK(marg_log_convolve_f64(m, n, a, 1, NULL, 1, r, 1, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("b is null"));
  CHECK(r[0] == 42);
}

static void check_pool(void) {
  size_t in_use = 1, reserved = 1, limit = 0, old_limit = 0;
  CHECK(marg_pool_stats(&in_use, &reserved, &limit) == MARG_SUCCESS);
  CHECK(limit > 0);
  old_limit = limit;
  CHECK(marg_set_pool_limit(1u << 20) == MARG_SUCCESS);
  CHECK(marg_pool_stats(NULL, NULL, &limit) == MARG_SUCCESS && limit == (1u << 20));
  CHECK(marg_set_pool_limit(old_limit) == MARG_SUCCESS);
  CHECK(marg_synchronize(NULL) == MARG_SUCCESS);
  CHECK(marg_version() != NULL && strchr(marg_version(), '.') != NULL);
}

/* what check_graph's recorded calls read and write */
struct graph_calls {
  int m, n, fail;
  double *p, *q, *r;
};

static marg_status record_convolve(void* user) {
  struct graph_calls* c = (struct graph_calls*)user;
  if (c->fail) return marg_convolve_f64(0, c->n, c->p, 1, c->q, 1, c->r, 1, NULL);
  return marg_convolve_f64(c->m, c->n, c->p, 1, c->q, 1, c->r, 1, NULL);
}

/* capture and replay: on the CPU backend the calls run at each replay, with
 * host memory; on a GPU a host operand is refused at capture */
static void check_graph(int gpu) {
  struct graph_calls c = {37, 23, 0, NULL, NULL, NULL};
  marg_graph* graph = (marg_graph*)&c; /* must be reset to NULL on failure */
  const int len = c.m + c.n - 1;
  int i, j, round;
  c.p = malloc(sizeof(double) * c.m);
  c.q = malloc(sizeof(double) * c.n);
  c.r = malloc(sizeof(double) * len);
  for (i = 0; i < len; ++i) c.r[i] = -1.0;
  CHECK(marg_capture(NULL, NULL, &c, &graph) == MARG_ERROR_INVALID_ARGUMENT && graph == NULL);
  CHECK(marg_capture(NULL, record_convolve, &c, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_graph_replay(NULL, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  marg_graph_destroy(NULL);
  if (gpu) {
    CHECK(marg_set_backend(MARG_BACKEND_CUDA) == MARG_SUCCESS);
    CHECK(marg_capture(NULL, record_convolve, &c, &graph) == MARG_ERROR_INVALID_ARGUMENT);
    CHECK(graph == NULL && message_has("host-memory operand"));
    /* the stream is usable after the refused capture */
    for (i = 0; i < c.m; ++i) c.p[i] = uniform();
    for (i = 0; i < c.n; ++i) c.q[i] = uniform();
    CHECK(marg_convolve_f64(c.m, c.n, c.p, 1, c.q, 1, c.r, 1, NULL) == MARG_SUCCESS);
    CHECK(rel(c.r[0], (long double)c.p[0] * c.q[0]) < 1e-12);
  }
  CHECK(marg_set_backend(MARG_BACKEND_CPU) == MARG_SUCCESS);
  for (i = 0; i < len; ++i) c.r[i] = -1.0;
  CHECK(marg_capture(NULL, record_convolve, &c, &graph) == MARG_SUCCESS && graph != NULL);
  CHECK(c.r[0] == -1.0); /* not run at capture */
  for (round = 0; round < 2; ++round) {
    double worst = 0;
    for (i = 0; i < c.m; ++i) c.p[i] = uniform();
    for (i = 0; i < c.n; ++i) c.q[i] = uniform();
    CHECK(marg_graph_replay(graph, NULL) == MARG_SUCCESS);
    for (i = 0; i < len; ++i) {
      long double s = 0;
      for (j = 0; j < c.m; ++j)
        if (i - j >= 0 && i - j < c.n) s += (long double)c.p[j] * c.q[i - j];
      if (rel(c.r[i], s) > worst) worst = rel(c.r[i], s);
    }
    CHECK(worst < 1e-12);
  }
  /* a call that fails at replay reports its status and message */
  c.fail = 1;
  CHECK(marg_graph_replay(graph, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("m = 0"));
  marg_graph_destroy(graph);
  CHECK(marg_set_backend(MARG_BACKEND_AUTOMATIC) == MARG_SUCCESS);
  free(c.p);
  free(c.q);
  free(c.r);
}

/* the planner mode, wisdom text and wisdom files; the expected text is the
 * format's specification (numeric/planner.hpp), written out */
static void check_wisdom(void) {
  static const char entry[] =
      "# libmarg wisdom 1\n90 132 hopper float convolution 17 17 1 aligned mma 2.5\n";
  static const char want[] =
      "# libmarg wisdom 1\n# capability multiprocessors features type product taps outputs "
      "problems operands variant microseconds\n90 132 hopper float convolution 17 17 1 aligned "
      "mma 2.500\n";
  /* in the working directory (C99 has no temporary-file name that is safe;
   * ctest runs the test in its build folder, a packed build anywhere) */
  static const char file[] = "c_api_wisdom.txt";
  static const char nowhere[] = "c_api_wisdom-no-such-folder/w.txt";
  char text[512], tiny[8];
  size_t length = 0;
  FILE* f = NULL;
  marg_planner_mode mode = MARG_PLANNER_MEASURE;
  CHECK(marg_forget_wisdom() == MARG_SUCCESS);
  CHECK(marg_get_planner_mode(&mode) == MARG_SUCCESS && mode == MARG_PLANNER_ESTIMATE);
  CHECK(marg_set_planner_mode(MARG_PLANNER_MEASURE) == MARG_SUCCESS);
  CHECK(marg_get_planner_mode(&mode) == MARG_SUCCESS && mode == MARG_PLANNER_MEASURE);
  CHECK(marg_set_planner_mode((marg_planner_mode)5) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("mode = 5"));
  CHECK(marg_set_planner_mode(MARG_PLANNER_ESTIMATE) == MARG_SUCCESS);
  CHECK(marg_get_planner_mode(&mode) == MARG_SUCCESS && mode == MARG_PLANNER_ESTIMATE);
  CHECK(marg_get_planner_mode(NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_import_wisdom_text(entry) == MARG_SUCCESS);
  /* too small: the length needed, and an error */
  CHECK(marg_export_wisdom_text(tiny, sizeof tiny, &length) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(length == strlen(want));
  CHECK(marg_export_wisdom_text(NULL, 0, &length) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_export_wisdom_text(text, sizeof text, NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_export_wisdom_text(text, sizeof text, &length) == MARG_SUCCESS);
  CHECK(length == strlen(want) && strcmp(text, want) == 0);
  /* a bad line: named, nothing imported */
  CHECK(marg_import_wisdom_text("# libmarg wisdom 1\n90 132 hopper float convolution 17 17 1 "
                                "aligned mma 1\nnot wisdom\n") == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has("line 3"));
  CHECK(marg_import_wisdom_text(NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_export_wisdom_text(text, sizeof text, &length) == MARG_SUCCESS &&
        strcmp(text, want) == 0);

  /* the file: exactly the text, read back after forgetting */
  CHECK(marg_export_wisdom(file) == MARG_SUCCESS);
  memset(text, 0, sizeof text);
  f = fopen(file, "rb");
  CHECK(f != NULL);
  if (f != NULL) {
    length = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    CHECK(length == strlen(want) && strcmp(text, want) == 0);
  }
  CHECK(marg_forget_wisdom() == MARG_SUCCESS);
  CHECK(marg_export_wisdom_text(text, sizeof text, &length) == MARG_SUCCESS);
  CHECK(strchr(text, '9') == NULL);
  CHECK(marg_import_wisdom(file) == MARG_SUCCESS);
  CHECK(marg_export_wisdom_text(text, sizeof text, &length) == MARG_SUCCESS &&
        strcmp(text, want) == 0);
  /* paths that cannot be written or read are named */
  CHECK(marg_export_wisdom(nowhere) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has(nowhere));
  CHECK(marg_import_wisdom(nowhere) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has(nowhere));
  CHECK(marg_export_wisdom(NULL) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_import_wisdom(NULL) == MARG_ERROR_INVALID_ARGUMENT);
  /* a bad file: its path and line named, nothing imported */
  f = fopen(file, "wb");
  CHECK(f != NULL);
  if (f != NULL) {
    fputs("# libmarg wisdom 1\n80 108 generic double gradient\n", f);
    fclose(f);
  }
  CHECK(marg_forget_wisdom() == MARG_SUCCESS);
  CHECK(marg_import_wisdom(file) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(message_has(file) && message_has("line 2"));
  CHECK(marg_export_wisdom_text(text, sizeof text, &length) == MARG_SUCCESS);
  CHECK(strchr(text, '9') == NULL);
  remove(file);
}

int main(void) {
  static const int sizes[][2] = {{1, 1},   {1, 9},    {9, 1},    {2, 3},     {63, 64},
                                 {64, 64}, {97, 300}, {300, 97}, {257, 1031}};
  int backends[2] = {MARG_BACKEND_CPU, MARG_BACKEND_CUDA}, count = 0, k, s, inc;
  marg_device_count(&count);
  for (k = 0; k < (count > 0 ? 2 : 1); ++k) {
    CHECK(marg_set_backend((marg_backend)backends[k]) == MARG_SUCCESS);
    for (s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); ++s)
      for (inc = 1; inc <= 2; ++inc) check_problem(sizes[s][0], sizes[s][1], inc);
    check_batched();
  }
  CHECK(marg_set_backend(MARG_BACKEND_AUTOMATIC) == MARG_SUCCESS);
  check_errors();
  check_log_prob_sum();
  check_log_convolve();
  check_pool();
  check_graph(count > 0);
  check_wisdom();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
