/* Tests of the C API's pmf and batch handles, compiled as C99: every entry
 * point against the C++ API on the same inputs (cxx_reference.cpp) and
 * against long double loops, and every error path (null handle, bad
 * argument, other element type, out of memory through a tiny pool cap)
 * returning its status with a message and leaving the outputs untouched. */
#include <marg/marg.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxx_reference.h"

#include "check.h"

/* a failing call: the status, a message naming `what`, the output unchanged */
#define CHECK_FAILS(call, status, what)                                                \
  do {                                                                                 \
    CHECK((call) == (status));                                                         \
    CHECK(strstr(marg_last_error_message(), (what)) != NULL);                          \
    if (strstr(marg_last_error_message(), (what)) == NULL)                             \
      fprintf(stderr, "  message: %s (wanted %s)\n", marg_last_error_message(), what); \
  } while (0)

#define SENTINEL 12345.0
#define CAP 4096

static int close_rel(long double got, long double want, double tol) {
  if (want == 0) return fabsl(got) <= tol;
  return fabsl((got - want) / want) <= tol;
}

/* the handle a successful factory call wrote (read after the call) */
static marg_pmf* must(marg_status s, marg_pmf** h) {
  CHECK(s == MARG_SUCCESS);
  if (s != MARG_SUCCESS) fprintf(stderr, "  %s\n", marg_last_error_message());
  return *h;
}

/* the probabilities of a handle (double) */
static int64_t probs_of(const marg_pmf* x, double* out, int64_t* lower) {
  int64_t lo = 0, hi = -1;
  CHECK(marg_pmf_support(x, &lo, &hi) == MARG_SUCCESS);
  CHECK(marg_pmf_probs_f64(x, out, CAP) == MARG_SUCCESS);
  *lower = lo;
  return hi - lo + 1;
}

/* ---- factories: identical to the C++ API, f32 and f64 ---- */
static void check_factories(void) {
  static double want[CAP], got[CAP];
  static float gotf[CAP];
  const double w[5] = {0.5, 2, 0, 1, 3.5};
  const double lw[4] = {-800, -801, -INFINITY, -799.5};
  int fam, is_float;
  for (fam = 0; fam < CXX_FAMILIES; ++fam)
    for (is_float = 0; is_float <= 1; ++is_float) {
      marg_pmf* h = NULL;
      marg_status s = MARG_ERROR_INTERNAL;
      double a[3] = {0, 0, 0}, trunc_want = -1, trunc_got = -1;
      int64_t n = 0, k = 0, lower_want = 0, lower_got = 0, size, i;
      int same = 1;
      switch (fam) {
        case CXX_CATEGORICAL:
          memcpy(a, w, 0), n = 5, k = -2;
          s = is_float ? marg_pmf_categorical_f32((const float[]){0.5f, 2, 0, 1, 3.5f}, 5, -2, &h)
                       : marg_pmf_categorical_f64(w, 5, -2, &h);
          break;
        case CXX_CATEGORICAL_LOG:
          n = 4, k = 7;
          s = is_float ? marg_pmf_categorical_log_f32(
                             (const float[]){-800, -801, -INFINITY, -799.5f}, 4, 7, &h)
                       : marg_pmf_categorical_log_f64(lw, 4, 7, &h);
          break;
        case CXX_BERNOULLI:
          a[0] = 0.25;
          s = is_float ? marg_pmf_bernoulli_f32(0.25f, &h) : marg_pmf_bernoulli_f64(0.25, &h);
          break;
        case CXX_BINOMIAL:
          n = 40, a[0] = 0.375;
          s = is_float ? marg_pmf_binomial_f32(40, 0.375f, &h)
                       : marg_pmf_binomial_f64(40, 0.375, &h);
          break;
        case CXX_UNIFORM_INT:
          k = -3, n = 9;
          s = is_float ? marg_pmf_uniform_int_f32(-3, 9, &h) : marg_pmf_uniform_int_f64(-3, 9, &h);
          break;
        case CXX_BETA_BINOMIAL:
          n = 30, a[0] = 2.5, a[1] = 0.75;
          s = is_float ? marg_pmf_beta_binomial_f32(30, 2.5f, 0.75f, &h)
                       : marg_pmf_beta_binomial_f64(30, 2.5, 0.75, &h);
          break;
        case CXX_POISSON:
          a[0] = 6.5, a[1] = 1e-12;
          s = is_float ? marg_pmf_poisson_f32(6.5f, 1e-12f, &h)
                       : marg_pmf_poisson_f64(6.5, 1e-12, &h);
          break;
        case CXX_GEOMETRIC:
          a[0] = 0.125, a[1] = 1e-9;
          s = is_float ? marg_pmf_geometric_f32(0.125f, 1e-9f, &h)
                       : marg_pmf_geometric_f64(0.125, 1e-9, &h);
          break;
        case CXX_NEGATIVE_BINOMIAL:
          a[0] = 3.5, a[1] = 0.4, a[2] = 1e-10;
          s = is_float ? marg_pmf_negative_binomial_f32(3.5f, 0.4f, 1e-10f, &h)
                       : marg_pmf_negative_binomial_f64(3.5, 0.4, 1e-10, &h);
          break;
        default:
          k = -17;
          s = is_float ? marg_pmf_delta_f32(-17, &h) : marg_pmf_delta_f64(-17, &h);
          break;
      }
      CHECK(s == MARG_SUCCESS);
      if (s != MARG_SUCCESS) {
        fprintf(stderr, "  family %d float %d: %s\n", fam, is_float, marg_last_error_message());
        continue;
      }
      size = cxx_factory(fam, is_float,
                         fam == CXX_CATEGORICAL       ? w
                         : fam == CXX_CATEGORICAL_LOG ? lw
                                                      : a,
                         n, k, want, CAP, &lower_want, &trunc_want);
      CHECK(size >= 1);
      CHECK(marg_pmf_support(h, &lower_got, NULL) == MARG_SUCCESS && lower_got == lower_want);
      {
        int64_t sz = 0;
        CHECK(marg_pmf_size(h, &sz) == MARG_SUCCESS && sz == size);
      }
      if (is_float) {
        float t = -1;
        CHECK(marg_pmf_probs_f32(h, gotf, CAP) == MARG_SUCCESS);
        for (i = 0; i < size; ++i) same &= (double)gotf[i] == want[i];
        CHECK(marg_pmf_truncated_mass_f32(h, &t) == MARG_SUCCESS);
        trunc_got = t;
      } else {
        CHECK(marg_pmf_probs_f64(h, got, CAP) == MARG_SUCCESS);
        for (i = 0; i < size; ++i) same &= got[i] == want[i];
        CHECK(marg_pmf_truncated_mass_f64(h, &trunc_got) == MARG_SUCCESS);
      }
      CHECK(same);
      CHECK(trunc_got == trunc_want);
      if (!same) fprintf(stderr, "  family %d float %d differs from C++\n", fam, is_float);
      marg_pmf_destroy(h);
    }
  /* tail 0 means the default tail */
  {
    marg_pmf *a = NULL, *b = NULL;
    double tm = -1;
    int64_t ua = 0, ub = 0;
    const double arg[2] = {3.0, 1e-300};
    CHECK(marg_pmf_poisson_f64(3.0, 0, &a) == MARG_SUCCESS);
    CHECK(cxx_factory(CXX_POISSON, 0, arg, 0, 0, got, CAP, &ua, &tm) >= 1);
    CHECK(marg_pmf_support(a, NULL, &ua) == MARG_SUCCESS);
    CHECK(marg_pmf_poisson_f64(3.0, 1e-300, &b) == MARG_SUCCESS);
    CHECK(marg_pmf_support(b, NULL, &ub) == MARG_SUCCESS && ua == ub);
    marg_pmf_destroy(a);
    marg_pmf_destroy(b);
  }
}

/* ---- accessors against loops over the probabilities; binomial closed form ---- */
static void check_accessors(void) {
  static double p[CAP], lp[CAP];
  static float pf[CAP];
  marg_pmf *x = must(marg_pmf_binomial_f64(25, 0.3, &x), &x), *c = NULL, *xf = NULL;
  int64_t lower, size = probs_of(x, p, &lower), k;
  long double mean = 0, var = 0, cum = 0;
  double v, worst = 0;
  marg_dtype dt = MARG_DTYPE_MAX_ENUM;
  CHECK(lower == 0 && size == 26);
  CHECK(marg_pmf_dtype(x, &dt) == MARG_SUCCESS && dt == MARG_DTYPE_F64);
  /* closed form C(n,k) p^k (1-p)^(n-k) in long double */
  for (k = 0; k <= 25; ++k) {
    long double c_nk = 1;
    int64_t j;
    for (j = 1; j <= k; ++j) c_nk = c_nk * (25 - k + j) / j;
    {
      const long double want =
          c_nk * powl(0.3L, (long double)k) * powl(0.7L, (long double)(25 - k));
      const double r = (double)fabsl((p[k] - want) / want);
      if (r > worst) worst = r;
    }
  }
  CHECK(worst <= 1e-13);
  CHECK(marg_pmf_log_probs_f64(x, lp, CAP) == MARG_SUCCESS);
  for (k = 0; k < size; ++k) mean += (long double)k * p[k];
  for (k = 0; k < size; ++k) var += ((long double)k - mean) * ((long double)k - mean) * p[k];
  for (k = -2; k <= 27; ++k) {
    const double want = k >= 0 && k <= 25 ? p[k] : 0;
    CHECK(marg_pmf_prob_f64(x, k, &v) == MARG_SUCCESS && v == want);
    CHECK(marg_pmf_log_prob_f64(x, k, &v) == MARG_SUCCESS);
    CHECK(want > 0 ? close_rel(v, logl(want), 1e-13) : (isinf(v) && v < 0));
    if (k >= 0 && k <= 25) CHECK(close_rel(lp[k], logl(want), 1e-13));
    if (k >= 0 && k <= 25) cum += want;
    CHECK(marg_pmf_cdf_f64(x, k, &v) == MARG_SUCCESS);
    CHECK(close_rel(v, k > 25 ? 1.0L : cum, 1e-14));
  }
  CHECK(marg_pmf_mean_f64(x, &v) == MARG_SUCCESS && close_rel(v, mean, 1e-14));
  CHECK(close_rel(mean, 25 * 0.3L, 1e-12));
  CHECK(marg_pmf_variance_f64(x, &v) == MARG_SUCCESS && close_rel(v, var, 1e-13));
  CHECK(close_rel(var, 25 * 0.3L * 0.7L, 1e-12));
  /* copy shares the values */
  CHECK(marg_pmf_copy(x, &c) == MARG_SUCCESS);
  CHECK(marg_pmf_prob_f64(c, 7, &v) == MARG_SUCCESS && v == p[7]);
  marg_pmf_destroy(x);
  CHECK(marg_pmf_prob_f64(c, 7, &v) == MARG_SUCCESS && v == p[7]);
  /* float accessors */
  xf = must(marg_pmf_binomial_f32(25, 0.3f, &xf), &xf);
  CHECK(marg_pmf_dtype(xf, &dt) == MARG_SUCCESS && dt == MARG_DTYPE_F32);
  CHECK(marg_pmf_probs_f32(xf, pf, CAP) == MARG_SUCCESS);
  {
    float f = 0;
    CHECK(marg_pmf_prob_f32(xf, 7, &f) == MARG_SUCCESS && f == pf[7]);
    CHECK(close_rel(f, p[7], 1e-6));
    CHECK(marg_pmf_log_prob_f32(xf, 7, &f) == MARG_SUCCESS && close_rel(f, log(p[7]), 1e-6));
    CHECK(marg_pmf_log_probs_f32(xf, pf, CAP) == MARG_SUCCESS && close_rel(pf[7], log(p[7]), 1e-6));
    CHECK(marg_pmf_cdf_f32(xf, 25, &f) == MARG_SUCCESS && f == 1.0f);
    CHECK(marg_pmf_mean_f32(xf, &f) == MARG_SUCCESS && close_rel(f, 7.5, 1e-6));
    CHECK(marg_pmf_variance_f32(xf, &f) == MARG_SUCCESS && close_rel(f, 5.25, 1e-5));
  }
  /* sampling by inversion: u against the cumulative sums */
  {
    const double us[5] = {0.0, 0.1, 0.5, 0.9, 0.999999};
    int i;
    for (i = 0; i < 5; ++i) {
      int64_t got = -1, want = 0;
      long double s = p[0];
      while (s <= us[i] && want < 25) s += p[++want];
      CHECK(marg_pmf_sample(c, us[i], &got) == MARG_SUCCESS && got == want);
    }
  }
  marg_pmf_destroy(c);
  marg_pmf_destroy(xf);
}

/* ---- algebra against a convolution loop ---- */
static void check_algebra(void) {
  static double p[CAP], q[CAP], r[CAP], t[CAP];
  const double wx[4] = {1, 2, 3, 4}, wy[3] = {5, 1, 2};
  marg_pmf* x = must(marg_pmf_categorical_f64(wx, 4, -1, &x), &x);
  marg_pmf* y = must(marg_pmf_categorical_f64(wy, 3, 10, &y), &y);
  marg_pmf *z = NULL, *d = NULL, *n = NULL, *s = NULL, *sum = NULL, *zz = NULL;
  const marg_pmf* terms[3];
  int64_t lx, ly, lz, m = probs_of(x, p, &lx), nn = probs_of(y, q, &ly), sz, i, j;
  int ok = 1;
  CHECK(marg_pmf_add(x, y, &z) == MARG_SUCCESS);
  sz = probs_of(z, r, &lz);
  CHECK(lz == 9 && sz == m + nn - 1);
  for (i = 0; i < sz; ++i) {
    long double acc = 0;
    for (j = 0; j < m; ++j)
      if (i - j >= 0 && i - j < nn) acc += (long double)p[j] * q[i - j];
    ok &= close_rel(r[i], acc, 1e-14);
  }
  CHECK(ok);
  /* x - y: support [lx - uy, ux - ly], P(x - y = v) = sum_j p_j q_{j - v} */
  CHECK(marg_pmf_sub(x, y, &d) == MARG_SUCCESS);
  sz = probs_of(d, r, &lz);
  CHECK(lz == -1 - 12 && sz == m + nn - 1);
  ok = 1;
  for (i = 0; i < sz; ++i) {
    long double acc = 0;
    const int64_t v = lz + i;
    for (j = 0; j < m; ++j) {
      const int64_t yv = lx + j - v - ly;
      if (yv >= 0 && yv < nn) acc += (long double)p[j] * q[yv];
    }
    ok &= close_rel(r[i], acc, 1e-14);
  }
  CHECK(ok);
  CHECK(marg_pmf_neg(x, &n) == MARG_SUCCESS);
  sz = probs_of(n, r, &lz);
  CHECK(lz == -2 && sz == 4);
  ok = 1;
  for (i = 0; i < 4; ++i) ok &= r[i] == p[3 - i];
  CHECK(ok);
  CHECK(marg_pmf_shift(x, 100, &s) == MARG_SUCCESS);
  sz = probs_of(s, r, &lz);
  CHECK(lz == 99 && sz == 4 && memcmp(r, p, 4 * sizeof(double)) == 0);
  /* sum of three = (x + y) + shifted x */
  terms[0] = x, terms[1] = y, terms[2] = s;
  CHECK(marg_pmf_sum(terms, 3, &sum) == MARG_SUCCESS);
  CHECK(marg_pmf_add(z, s, &zz) == MARG_SUCCESS);
  sz = probs_of(sum, r, &lz);
  {
    int64_t l2, s2 = probs_of(zz, t, &l2);
    CHECK(l2 == lz && s2 == sz);
    ok = 1;
    for (i = 0; i < sz; ++i) ok &= close_rel(r[i], t[i], 1e-14);
    CHECK(ok);
  }
  marg_pmf_destroy(x), marg_pmf_destroy(y), marg_pmf_destroy(z), marg_pmf_destroy(d);
  marg_pmf_destroy(n), marg_pmf_destroy(s), marg_pmf_destroy(sum), marg_pmf_destroy(zz);
}

/* ---- observation, sampling and gradients against loops ---- */
static void check_observation(void) {
  static double p[CAP], q[CAP], r[CAP], L[CAP], logL[CAP], gx[CAP], gy[CAP], g[CAP];
  marg_pmf* x = must(marg_pmf_binomial_f64(12, 0.4, &x), &x);
  marg_pmf* y = must(marg_pmf_poisson_f64(3.0, 1e-15, &y), &y);
  marg_pmf *a = NULL, *b = NULL;
  int64_t lx, ly, m = probs_of(x, p, &lx), n = probs_of(y, q, &ly), i, j, len = m + n - 1;
  const int64_t k = 9;
  long double P = 0, Z = 0;
  double ll = 0;
  int ok = 1;
  for (j = 0; j < m; ++j)
    if (k - j >= 0 && k - j < n) P += (long double)p[j] * q[k - j];
  CHECK(marg_pmf_log_prob_sum(x, y, k, &ll) == MARG_SUCCESS && close_rel(ll, logl(P), 1e-14));
  CHECK(marg_pmf_condition_on_sum(x, y, k, &ll, &a, &b) == MARG_SUCCESS);
  CHECK(close_rel(ll, logl(P), 1e-14));
  {
    int64_t la, sa = probs_of(a, r, &la);
    for (i = 0; i < sa; ++i) {
      const int64_t jj = la + i;
      ok &= close_rel(r[i], (long double)p[jj] * q[k - jj] / P, 1e-13);
    }
    CHECK(ok);
  }
  {
    double pb = 0;
    CHECK(marg_pmf_prob_f64(b, 4, &pb) == MARG_SUCCESS);
    CHECK(close_rel(pb, (long double)p[5] * q[4] / P, 1e-13));
  }
  marg_pmf_destroy(a), marg_pmf_destroy(b);
  /* an impossible observation: -inf and NULL handles */
  a = b = (marg_pmf*)&ll;
  CHECK(marg_pmf_condition_on_sum(x, y, -1, &ll, &a, &b) == MARG_SUCCESS);
  CHECK(isinf(ll) && ll < 0 && a == NULL && b == NULL);
  /* joint draw given the sum: u against the posterior's cumulative sums */
  {
    int64_t xv = -1, yv = -1, want = 0;
    long double s = 0;
    const double u = 0.6;
    for (want = 0; want < m; ++want) {
      if (k - want >= 0 && k - want < n) s += (long double)p[want] * q[k - want] / P;
      if (s > u) break;
    }
    CHECK(marg_pmf_sample_given_sum(x, y, k, u, &xv, &yv) == MARG_SUCCESS);
    CHECK(xv == want && yv == k - want);
  }
  /* soft evidence L_i = exp(-(i - 8)^2 / 4) over the support of x + y */
  for (i = 0; i < len; ++i)
    L[i] = exp(-(double)((i - 8) * (i - 8)) / 4), logL[i] = -(double)((i - 8) * (i - 8)) / 4;
  for (i = 0; i < len; ++i)
    for (j = 0; j < m; ++j)
      if (i - j >= 0 && i - j < n) Z += (long double)p[j] * q[i - j] * L[i];
  CHECK(marg_pmf_condition_on_sum_soft_f64(x, y, L, len, &ll, &a, &b) == MARG_SUCCESS);
  CHECK(close_rel(ll, logl(Z), 1e-13));
  {
    int64_t la, sa = probs_of(a, r, &la);
    ok = 1;
    for (i = 0; i < sa; ++i) {
      long double w = 0;
      for (j = 0; j < n; ++j) w += (long double)q[j] * L[la + i + j];
      ok &= close_rel(r[i], p[la + i] * w / Z, 1e-12);
    }
    CHECK(ok);
  }
  marg_pmf_destroy(a), marg_pmf_destroy(b);
  CHECK(marg_pmf_condition_on_sum_log_f64(x, y, logL, len, &ll, &a, &b) == MARG_SUCCESS);
  CHECK(close_rel(ll, logl(Z), 1e-13));
  marg_pmf_destroy(a), marg_pmf_destroy(b);
  /* the sum given the evidence, then a joint draw from two uniforms */
  CHECK(marg_pmf_sum_given_evidence_f64(x, y, L, len, &a) == MARG_SUCCESS);
  {
    int64_t la, sa = probs_of(a, r, &la), zv = 0, xv = -1, yv = -1, xw = 0;
    long double s = 0, P2 = 0;
    const double u1 = 0.3, u2 = 0.7;
    CHECK(la == 0 && sa == len);
    while (zv < sa - 1 && (s += r[zv]) <= u1) ++zv;
    for (j = 0; j < m; ++j)
      if (zv - j >= 0 && zv - j < n) P2 += (long double)p[j] * q[zv - j];
    s = 0;
    for (xw = 0; xw < m; ++xw) {
      if (zv - xw >= 0 && zv - xw < n) s += (long double)p[xw] * q[zv - xw] / P2;
      if (s > u2) break;
    }
    CHECK(marg_pmf_sample_given_evidence_f64(x, y, L, len, u1, u2, &xv, &yv) == MARG_SUCCESS);
    CHECK(xv == xw && yv == zv - xw);
  }
  marg_pmf_destroy(a);
  /* gradients: d log P / d p_j = q_{k-j} / P; sum_grad = band^T g */
  CHECK(marg_pmf_log_prob_sum_grad_f64(x, y, k, gx, CAP, gy, CAP) == MARG_SUCCESS);
  ok = 1;
  for (j = 0; j < m; ++j)
    ok &= close_rel(gx[j], (k - j >= 0 && k - j < n ? q[k - j] : 0) / P, 1e-13);
  for (j = 0; j < n; ++j)
    ok &= close_rel(gy[j], (k - j >= 0 && k - j < m ? p[k - j] : 0) / P, 1e-13);
  CHECK(ok);
  for (i = 0; i < len; ++i) g[i] = 1.0 + 0.01 * (double)i;
  CHECK(marg_pmf_sum_grad_f64(x, y, g, len, gx, CAP, gy, CAP) == MARG_SUCCESS);
  ok = 1;
  for (j = 0; j < m; ++j) {
    long double acc = 0;
    for (i = 0; i < n; ++i) acc += (long double)q[i] * g[i + j];
    ok &= close_rel(gx[j], acc, 1e-13);
  }
  for (j = 0; j < n; ++j) {
    long double acc = 0;
    for (i = 0; i < m; ++i) acc += (long double)p[i] * g[i + j];
    ok &= close_rel(gy[j], acc, 1e-13);
  }
  CHECK(ok);
  marg_pmf_destroy(x), marg_pmf_destroy(y);
}

/* float forms of observation, sampling and gradients: against the double ones */
static void check_observation_f32(void) {
  static float L[64], g[64], gx[64], gy[64];
  static double Ld[64], gxd[64], gyd[64], gd[64];
  marg_pmf *x = must(marg_pmf_binomial_f32(10, 0.5f, &x), &x),
           *y = must(marg_pmf_geometric_f32(0.5f, 1e-6f, &y), &y);
  marg_pmf *xd = must(marg_pmf_binomial_f64(10, 0.5, &xd), &xd),
           *yd = must(marg_pmf_geometric_f64(0.5, 1e-6, &yd), &yd);
  marg_pmf *a = NULL, *b = NULL, *s = NULL;
  int64_t ny = 0, nyd = 0, len, i;
  double ll = 0, lld = 0;
  int64_t xv, yv;
  CHECK(marg_pmf_size(y, &ny) == MARG_SUCCESS && marg_pmf_size(yd, &nyd) == MARG_SUCCESS &&
        ny == nyd);
  len = 11 + ny - 1;
  for (i = 0; i < len; ++i)
    Ld[i] = L[i] = (float)(1.0 / (1.0 + (double)i)), gd[i] = g[i] = (float)i;
  CHECK(marg_pmf_log_prob_sum(x, y, 6, &ll) == MARG_SUCCESS);
  CHECK(marg_pmf_log_prob_sum(xd, yd, 6, &lld) == MARG_SUCCESS && close_rel(ll, lld, 1e-6));
  CHECK(marg_pmf_condition_on_sum_soft_f32(x, y, L, len, &ll, &a, &b) == MARG_SUCCESS);
  CHECK(marg_pmf_condition_on_sum_soft_f64(xd, yd, Ld, len, &lld, NULL, NULL) == MARG_SUCCESS);
  CHECK(close_rel(ll, lld, 1e-5));
  marg_pmf_destroy(a), marg_pmf_destroy(b);
  for (i = 0; i < len; ++i) L[i] = (float)log(Ld[i]);
  CHECK(marg_pmf_condition_on_sum_log_f32(x, y, L, len, &ll, NULL, &b) == MARG_SUCCESS);
  CHECK(close_rel(ll, lld, 1e-5));
  marg_pmf_destroy(b);
  for (i = 0; i < len; ++i) L[i] = (float)Ld[i];
  CHECK(marg_pmf_sum_given_evidence_f32(x, y, L, len, &s) == MARG_SUCCESS && s != NULL);
  marg_pmf_destroy(s);
  CHECK(marg_pmf_sample_given_evidence_f32(x, y, L, len, 0.5, 0.5, &xv, &yv) == MARG_SUCCESS);
  CHECK(xv >= 0 && xv <= 10 && yv >= 0);
  CHECK(marg_pmf_sum_grad_f32(x, y, g, len, gx, 64, gy, 64) == MARG_SUCCESS);
  CHECK(marg_pmf_sum_grad_f64(xd, yd, gd, len, gxd, 64, gyd, 64) == MARG_SUCCESS);
  CHECK(close_rel(gx[3], gxd[3], 1e-5) && close_rel(gy[2], gyd[2], 1e-5));
  CHECK(marg_pmf_log_prob_sum_grad_f32(x, y, 6, gx, 64, gy, 64) == MARG_SUCCESS);
  CHECK(marg_pmf_log_prob_sum_grad_f64(xd, yd, 6, gxd, 64, gyd, 64) == MARG_SUCCESS);
  CHECK(close_rel(gx[3], gxd[3], 1e-5) && close_rel(gy[2], gyd[2], 1e-5));
  marg_pmf_destroy(x), marg_pmf_destroy(y), marg_pmf_destroy(xd), marg_pmf_destroy(yd);
}

/* ---- batches: the SIR step against the C++ API, rows against single pmfs ---- */
static void check_batches(void) {
  enum { B = 6 };
  const int64_t n_inf[B] = {700, 650, 10, 500, 0, 300}, n_rec[B] = {40, 90, 3, 200, 5, 0};
  const double p_inf[B] = {0.01, 0.05, 0.5, 0.2, 0.3, 0.001},
               p_rec[B] = {0.3, 0.5, 0.9, 0.1, 0.0, 0.4};
  const int64_t offsets[B] = {40, 90, 3, 200, 5, 0};
  const double rho[B] = {0.5, 0.7, 0.2, 0.9, 0.5, 0.3};
  double u[2 * B], ll[B], ll_want[B];
  int64_t first[B], second[B], first_want[B], second_want[B];
  marg_pmf_batch *X = NULL, *Y = NULL, *negY = NULL, *cp = NULL;
  marg_batch_evidence* E = NULL;
  int i, same = 1, batch = 0, length = 0;
  marg_dtype dt;
  for (i = 0; i < 2 * B; ++i) u[i] = (0.5 + i) / (2 * B);
  CHECK(marg_pmf_batch_binomial_f64(B, n_inf, p_inf, 1e-17, &X) == MARG_SUCCESS);
  CHECK(marg_pmf_batch_binomial_f64(B, n_rec, p_rec, 1e-17, &Y) == MARG_SUCCESS);
  CHECK(marg_pmf_batch_neg(Y, &negY) == MARG_SUCCESS);
  CHECK(marg_batch_evidence_binomial_count(X, negY, offsets, B, (const int64_t[]){30}, 1, rho, B,
                                           763, &E) == MARG_SUCCESS);
  CHECK(marg_pmf_batch_sample_given_evidence(X, negY, E, u, 2 * B, ll, first, second) ==
        MARG_SUCCESS);
  CHECK(cxx_batch_step(B, n_inf, p_inf, n_rec, p_rec, offsets, 30, rho, 763, 1e-17, u, ll_want,
                       first_want, second_want) == 0);
  for (i = 0; i < B; ++i)
    same &= (ll[i] == ll_want[i] || (isinf(ll[i]) && isinf(ll_want[i]))) &&
            first[i] == first_want[i] && second[i] == second_want[i];
  CHECK(same);
  /* the posterior given the same evidence has the same log likelihoods */
  {
    double llp[B];
    marg_pmf_batch *F = NULL, *S = NULL;
    CHECK(marg_pmf_batch_condition_on_evidence(X, negY, E, llp, &F, &S) == MARG_SUCCESS);
    for (i = 0; i < B; ++i) CHECK(isinf(ll[i]) ? isinf(llp[i]) : close_rel(llp[i], ll[i], 1e-12));
    marg_pmf_batch_destroy(F), marg_pmf_batch_destroy(S);
  }
  CHECK(marg_pmf_batch_shape(X, &dt, &batch, &length) == MARG_SUCCESS);
  CHECK(dt == MARG_DTYPE_F64 && batch == B && length >= 1);
  /* rows, lowers and probabilities agree; a row is a pmf handle */
  {
    static double v[B * 1024], r[1024];
    int64_t lowers[B];
    CHECK(length <= 1024);
    CHECK(marg_pmf_batch_probs_f64(X, v, B * 1024) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_lowers(X, lowers, B) == MARG_SUCCESS);
    for (i = 0; i < B; ++i) {
      marg_pmf* row = NULL;
      int64_t lo = 0, sz, j;
      CHECK(marg_pmf_batch_row(X, i, &row) == MARG_SUCCESS);
      sz = probs_of(row, r, &lo);
      CHECK(lo == lowers[i] && sz <= length);
      for (j = 0; j < sz; ++j) same &= r[j] == v[i * length + j];
      marg_pmf_destroy(row);
    }
    CHECK(same);
  }
  /* log_prob_sum, hard conditioning and sampling per row against single pmfs */
  {
    const int64_t k[B] = {5, 30, 4, 80, 0, 0};
    double lps[B], llc[B];
    marg_pmf_batch *F = NULL, *S = NULL, *Z = NULL, *D = NULL, *A = NULL;
    int64_t xv[B], yv[B];
    CHECK(marg_pmf_batch_log_prob_sum(X, Y, k, B, lps) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_condition_on_sum(X, Y, k, B, llc, &F, &S) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_sample_given_sum(X, Y, k, u, B, ll, xv, yv) == MARG_SUCCESS);
    for (i = 0; i < B; ++i) {
      marg_pmf *rx = NULL, *ry = NULL, *px = NULL;
      double want = 0;
      CHECK(marg_pmf_batch_row(X, i, &rx) == MARG_SUCCESS &&
            marg_pmf_batch_row(Y, i, &ry) == MARG_SUCCESS);
      CHECK(marg_pmf_log_prob_sum(rx, ry, k[i], &want) == MARG_SUCCESS);
      CHECK(isinf(want) ? isinf(lps[i]) : close_rel(lps[i], want, 1e-13));
      CHECK(isinf(want) ? isinf(llc[i]) : close_rel(llc[i], want, 1e-13));
      CHECK(marg_pmf_condition_on_sum(rx, ry, k[i], NULL, &px, NULL) == MARG_SUCCESS);
      if (px != NULL) {
        int64_t xs = -1, ys = -1;
        CHECK(marg_pmf_sample_given_sum(rx, ry, k[i], u[2 * i], &xs, &ys) == MARG_SUCCESS);
        CHECK(xs == xv[i] && ys == yv[i]);
      }
      marg_pmf_destroy(rx), marg_pmf_destroy(ry), marg_pmf_destroy(px);
    }
    /* x + y and x - y row by row; soft evidence */
    CHECK(marg_pmf_batch_add(X, Y, &Z) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_sub(X, Y, &D) == MARG_SUCCESS);
    {
      marg_pmf *r0 = NULL, *rx = NULL, *ry = NULL, *want = NULL, *d0 = NULL, *dw = NULL;
      static double a[2048], b[2048];
      int64_t la, lb, sa, sb, j;
      CHECK(marg_pmf_batch_row(Z, 1, &r0) == MARG_SUCCESS);
      CHECK(marg_pmf_batch_row(X, 1, &rx) == MARG_SUCCESS &&
            marg_pmf_batch_row(Y, 1, &ry) == MARG_SUCCESS);
      CHECK(marg_pmf_add(rx, ry, &want) == MARG_SUCCESS);
      sa = probs_of(r0, a, &la), sb = probs_of(want, b, &lb);
      CHECK(la == lb && sa >= sb);
      for (j = 0; j < sb; ++j) same &= close_rel(a[j], b[j], 1e-12) || fabs(a[j] - b[j]) < 1e-300;
      CHECK(same);
      CHECK(marg_pmf_batch_row(D, 1, &d0) == MARG_SUCCESS &&
            marg_pmf_sub(rx, ry, &dw) == MARG_SUCCESS);
      {
        double pd = 0, pw = 0;
        CHECK(marg_pmf_prob_f64(d0, 20, &pd) == MARG_SUCCESS &&
              marg_pmf_prob_f64(dw, 20, &pw) == MARG_SUCCESS);
        CHECK(close_rel(pd, pw, 1e-12));
      }
      marg_pmf_destroy(r0), marg_pmf_destroy(rx), marg_pmf_destroy(ry), marg_pmf_destroy(want);
      marg_pmf_destroy(d0), marg_pmf_destroy(dw);
    }
    {
      int zl = 0, j;
      double* Lz;
      double lls[B];
      marg_pmf_batch *P1 = NULL, *P2 = NULL;
      CHECK(marg_pmf_batch_shape(Z, NULL, NULL, &zl) == MARG_SUCCESS);
      Lz = malloc(sizeof(double) * B * zl);
      for (j = 0; j < B * zl; ++j) Lz[j] = 1.0;
      /* L = 1 everywhere: log-likelihood 0 up to the truncation, posteriors the priors */
      CHECK(marg_pmf_batch_condition_on_sum_soft_f64(X, Y, Lz, (int64_t)B * zl, lls, &P1, &P2) ==
            MARG_SUCCESS);
      for (j = 0; j < B; ++j) CHECK(fabs(lls[j]) < 1e-12);
      free(Lz);
      marg_pmf_batch_destroy(P1), marg_pmf_batch_destroy(P2);
    }
    marg_pmf_batch_destroy(F), marg_pmf_batch_destroy(S), marg_pmf_batch_destroy(Z),
        marg_pmf_batch_destroy(D);
    /* batch from rows, create, add one pmf, copy */
    {
      marg_pmf *r1 = must(marg_pmf_binomial_f64(3, 0.5, &r1), &r1),
               *r2 = must(marg_pmf_delta_f64(4, &r2), &r2);
      const marg_pmf* rows[2];
      const int64_t lw[2] = {0, 4};
      const double vals[8] = {1, 3, 3, 1, 2, 0, 0, 0};
      double got[8];
      marg_pmf_batch *R = NULL, *C = NULL;
      rows[0] = r1, rows[1] = r2;
      CHECK(marg_pmf_batch_from_rows(rows, 2, &R) == MARG_SUCCESS);
      CHECK(marg_pmf_batch_create_f64(2, 4, lw, vals, 1, &C) == MARG_SUCCESS);
      CHECK(marg_pmf_batch_probs_f64(R, got, 8) == MARG_SUCCESS);
      CHECK(got[0] == 0.125 && got[1] == 0.375 && got[4] == 1 && got[5] == 0);
      CHECK(marg_pmf_batch_probs_f64(C, got, 8) == MARG_SUCCESS);
      CHECK(got[0] == 0.125 && got[1] == 0.375 && got[4] == 1 && got[5] == 0);
      CHECK(marg_pmf_batch_add_pmf(R, r2, &A) == MARG_SUCCESS);
      {
        int64_t lows[2] = {0, 0};
        CHECK(marg_pmf_batch_lowers(A, lows, 2) == MARG_SUCCESS && lows[0] == 4 && lows[1] == 8);
      }
      CHECK(marg_pmf_batch_copy(A, &cp) == MARG_SUCCESS);
      marg_pmf_destroy(r1), marg_pmf_destroy(r2);
      marg_pmf_batch_destroy(R), marg_pmf_batch_destroy(C), marg_pmf_batch_destroy(A);
    }
  }
  /* batch gradients and draws given soft evidence, row by row against single pmfs */
  {
    int lx = 0, ly = 0, j;
    int64_t xs[B], ys[B];
    double *g, *gx, *gy, *Lb, lls[B];
    CHECK(marg_pmf_batch_shape(X, NULL, NULL, &lx) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_shape(Y, NULL, NULL, &ly) == MARG_SUCCESS);
    g = malloc(sizeof(double) * B * (lx + ly - 1)), Lb = malloc(sizeof(double) * B * (lx + ly - 1));
    gx = malloc(sizeof(double) * B * lx), gy = malloc(sizeof(double) * B * ly);
    for (j = 0; j < B * (lx + ly - 1); ++j)
      g[j] = 1.0 + 0.001 * (j % 97), Lb[j] = 1.0 / (1 + j % 13);
    CHECK(marg_pmf_batch_sum_grad_f64(X, Y, g, (int64_t)B * (lx + ly - 1), gx, (int64_t)B * lx, gy,
                                      (int64_t)B * ly) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_sample_given_evidence_soft_f64(X, Y, Lb, (int64_t)B * (lx + ly - 1), u,
                                                        2 * B, lls, xs, ys) == MARG_SUCCESS);
    for (i = 0; i < B; ++i) {
      marg_pmf *rx = NULL, *ry = NULL;
      int64_t sx = 0, sy = 0, xv = -1, yv = -1;
      static double rgx[2048], rgy[2048];
      double rl = 0;
      int ok = 1;
      CHECK(marg_pmf_batch_row(X, i, &rx) == MARG_SUCCESS &&
            marg_pmf_batch_row(Y, i, &ry) == MARG_SUCCESS);
      CHECK(marg_pmf_size(rx, &sx) == MARG_SUCCESS && marg_pmf_size(ry, &sy) == MARG_SUCCESS);
      /* the row's own g and L: the first sx + sy - 1 values of its padded row */
      CHECK(marg_pmf_sum_grad_f64(rx, ry, g + i * (lx + ly - 1), sx + sy - 1, rgx, 2048, rgy,
                                  2048) == MARG_SUCCESS);
      for (j = 0; j < sx; ++j) ok &= close_rel(gx[i * lx + j], rgx[j], 1e-12);
      for (j = 0; j < sy; ++j) ok &= close_rel(gy[i * ly + j], rgy[j], 1e-12);
      CHECK(ok);
      CHECK(marg_pmf_condition_on_sum_soft_f64(rx, ry, Lb + i * (lx + ly - 1), sx + sy - 1, &rl,
                                               NULL, NULL) == MARG_SUCCESS);
      CHECK(close_rel(lls[i], rl, 1e-12));
      CHECK(marg_pmf_sample_given_evidence_f64(rx, ry, Lb + i * (lx + ly - 1), sx + sy - 1,
                                               u[2 * i], u[2 * i + 1], &xv, &yv) == MARG_SUCCESS);
      CHECK(xv == xs[i] && yv == ys[i]);
      marg_pmf_destroy(rx), marg_pmf_destroy(ry);
    }
    CHECK_FAILS(marg_pmf_batch_sum_grad_f64(X, Y, g, (int64_t)B * (lx + ly - 1), gx, 1, gy,
                                            (int64_t)B * ly),
                MARG_ERROR_INVALID_ARGUMENT, "count_x");
    CHECK_FAILS(marg_pmf_batch_sample_given_evidence_soft_f64(X, Y, Lb, (int64_t)B * (lx + ly - 1),
                                                              u, 3, lls, xs, ys),
                MARG_ERROR_INVALID_ARGUMENT, "count of u");
    free(g), free(gx), free(gy), free(Lb);
  }
  /* float batches */
  {
    marg_pmf_batch* Xf = NULL;
    float v[2 * 64];
    CHECK(marg_pmf_batch_binomial_f32(2, n_inf, p_inf, 1e-7, &Xf) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_shape(Xf, &dt, &batch, &length) == MARG_SUCCESS && dt == MARG_DTYPE_F32);
    CHECK(length <= 64 && marg_pmf_batch_probs_f32(Xf, v, 2 * 64) == MARG_SUCCESS);
    /* the rows are Binomial(700, 0.01) and Binomial(650, 0.05) around their modes */
    {
      int64_t lows[2];
      float pm = 0;
      CHECK(marg_pmf_batch_lowers(Xf, lows, 2) == MARG_SUCCESS);
      CHECK(lows[0] <= 7 && 7 - lows[0] < length);
      pm = v[7 - lows[0]];
      CHECK(close_rel(pm, 0.1497532481, 1e-5)); /* C(700,7) 0.01^7 0.99^693 */
    }
    /* float soft conditioning, gradients and draws against the double batch of the same rows */
    {
      marg_pmf_batch *Xd = NULL, *F1 = NULL, *F2 = NULL;
      int lf = 0, j;
      float *L, *gxf, *gyf;
      double *Ld, *gxd, *gyd, llf[2], lld[2], uu[4] = {0.2, 0.4, 0.6, 0.8};
      int64_t xf[2], yf[2], xd[2], yd[2];
      CHECK(marg_pmf_batch_binomial_f64(2, n_inf, p_inf, 1e-7, &Xd) == MARG_SUCCESS);
      CHECK(marg_pmf_batch_shape(Xd, NULL, NULL, &lf) == MARG_SUCCESS && lf == length);
      L = malloc(sizeof(float) * 2 * (2 * length - 1)),
      Ld = malloc(sizeof(double) * 2 * (2 * length - 1));
      gxf = malloc(sizeof(float) * 2 * length), gyf = malloc(sizeof(float) * 2 * length);
      gxd = malloc(sizeof(double) * 2 * length), gyd = malloc(sizeof(double) * 2 * length);
      for (j = 0; j < 2 * (2 * length - 1); ++j) Ld[j] = L[j] = (float)(1.0 / (1 + j % 5));
      CHECK(marg_pmf_batch_condition_on_sum_soft_f32(Xf, Xf, L, 2 * (2 * length - 1), llf, &F1,
                                                     &F2) == MARG_SUCCESS);
      CHECK(marg_pmf_batch_condition_on_sum_soft_f64(Xd, Xd, Ld, 2 * (2 * length - 1), lld, NULL,
                                                     NULL) == MARG_SUCCESS);
      CHECK(close_rel(llf[0], lld[0], 1e-5) && close_rel(llf[1], lld[1], 1e-5));
      CHECK(marg_pmf_batch_sum_grad_f32(Xf, Xf, L, 2 * (2 * length - 1), gxf, 2 * length, gyf,
                                        2 * length) == MARG_SUCCESS);
      CHECK(marg_pmf_batch_sum_grad_f64(Xd, Xd, Ld, 2 * (2 * length - 1), gxd, 2 * length, gyd,
                                        2 * length) == MARG_SUCCESS);
      for (j = 0; j < 2 * length; ++j) CHECK(close_rel(gxf[j], gxd[j], 1e-5));
      CHECK(marg_pmf_batch_sample_given_evidence_soft_f32(Xf, Xf, L, 2 * (2 * length - 1), uu, 4,
                                                          llf, xf, yf) == MARG_SUCCESS);
      CHECK(marg_pmf_batch_sample_given_evidence_soft_f64(Xd, Xd, Ld, 2 * (2 * length - 1), uu, 4,
                                                          lld, xd, yd) == MARG_SUCCESS);
      /* the same uniforms: float rounding moves a draw by at most one value */
      for (j = 0; j < 2; ++j) CHECK(llabs((long long)(xf[j] + yf[j] - xd[j] - yd[j])) <= 1);
      free(L), free(Ld), free(gxf), free(gyf), free(gxd), free(gyd);
      marg_pmf_batch_destroy(Xd), marg_pmf_batch_destroy(F1), marg_pmf_batch_destroy(F2);
    }
    marg_pmf_batch_destroy(Xf);
    CHECK(marg_pmf_batch_create_f32(1, 2, (const int64_t[]){0}, (const float[]){1, 3}, 1, &Xf) ==
          MARG_SUCCESS);
    CHECK(marg_pmf_batch_probs_f32(Xf, v, 2) == MARG_SUCCESS && v[0] == 0.25f && v[1] == 0.75f);
    marg_pmf_batch_destroy(Xf);
  }
  /* log-probabilities of a batch sum whose products leave the type's range:
   * rows {t, 1 - t} + themselves, against the long double closed form */
  {
    const double td = 1e-200;
    const float tf = 1e-30f;
    const double pd[2] = {td, 1 - td};
    const float pf[2] = {tf, 1 - tf};
    double ld[3], qd[3];
    float lf[3];
    long double want[3];
    int i;
    marg_pmf_batch *Bd = NULL, *Sd = NULL, *Bf = NULL, *Sf = NULL;
    CHECK(marg_pmf_batch_create_f64(1, 2, (const int64_t[]){0}, pd, 0, &Bd) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_add(Bd, Bd, &Sd) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_probs_f64(Sd, qd, 3) == MARG_SUCCESS && qd[0] == 0);
    CHECK(marg_pmf_batch_log_probs_f64(Sd, ld, 3) == MARG_SUCCESS);
    want[0] = logl((long double)pd[0] * pd[0]);
    want[1] = logl(2.0L * pd[0] * pd[1]);
    want[2] = logl((long double)pd[1] * pd[1]);
    CHECK(close_rel(ld[0], want[0], 1e-14) && close_rel(ld[1], want[1], 1e-14));
    CHECK(fabsl(ld[2] - want[2]) <= 1e-15);
    CHECK_FAILS(marg_pmf_batch_log_probs_f64(Sd, ld, 2), MARG_ERROR_INVALID_ARGUMENT, "count");
    CHECK_FAILS(marg_pmf_batch_log_probs_f32(Sd, lf, 3), MARG_ERROR_INVALID_ARGUMENT,
                "holds double");
    CHECK(marg_pmf_batch_create_f32(1, 2, (const int64_t[]){0}, pf, 0, &Bf) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_add(Bf, Bf, &Sf) == MARG_SUCCESS);
    CHECK(marg_pmf_batch_log_probs_f32(Sf, lf, 3) == MARG_SUCCESS);
    want[0] = logl((long double)pf[0] * pf[0]);
    want[1] = logl(2.0L * pf[0] * pf[1]);
    for (i = 0; i < 2; ++i) CHECK(close_rel(lf[i], want[i], 1e-6));
    /* a batch that fits the type: the log of its probabilities */
    CHECK(marg_pmf_batch_log_probs_f64(Bd, ld, 2) == MARG_SUCCESS);
    CHECK(ld[0] == log(pd[0]) && ld[1] == log(pd[1]));
    marg_pmf_batch_destroy(Bd), marg_pmf_batch_destroy(Sd);
    marg_pmf_batch_destroy(Bf), marg_pmf_batch_destroy(Sf);
  }
  marg_pmf_batch_destroy(X), marg_pmf_batch_destroy(Y), marg_pmf_batch_destroy(negY);
  marg_pmf_batch_destroy(cp);
  marg_batch_evidence_destroy(E);
}

/* ---- error paths: status, message, outputs untouched ---- */
static void check_errors(void) {
  marg_pmf *x = must(marg_pmf_binomial_f64(5, 0.5, &x), &x),
           *xf = must(marg_pmf_binomial_f32(5, 0.5f, &xf), &xf);
  marg_pmf* out = (marg_pmf*)&out; /* a sentinel no call may overwrite */
  marg_pmf* const sentinel = out;
  marg_pmf_batch* bout = (marg_pmf_batch*)&out;
  double v = SENTINEL, arr[8] = {SENTINEL, SENTINEL};
  float vf = (float)SENTINEL;
  int64_t iv = 777, iv2 = 777;
  const double w[2] = {1, -1};
  const marg_pmf* terms[2];

  CHECK_FAILS(marg_pmf_categorical_f64(w, 2, 0, &out), MARG_ERROR_INVALID_ARGUMENT, "-1");
  CHECK(out == sentinel);
  CHECK_FAILS(marg_pmf_categorical_f64(NULL, 2, 0, &out), MARG_ERROR_INVALID_ARGUMENT,
              "weights is null");
  CHECK_FAILS(marg_pmf_categorical_f64(w, 0, 0, &out), MARG_ERROR_INVALID_ARGUMENT,
              "count of weights");
  CHECK_FAILS(marg_pmf_binomial_f64(-1, 0.5, &out), MARG_ERROR_INVALID_ARGUMENT, "n");
  CHECK_FAILS(marg_pmf_binomial_f64(4, 1.5, &out), MARG_ERROR_INVALID_ARGUMENT, "1.5");
  CHECK_FAILS(marg_pmf_bernoulli_f32(NAN, &out), MARG_ERROR_INVALID_ARGUMENT, "p");
  CHECK_FAILS(marg_pmf_uniform_int_f64(3, 2, &out), MARG_ERROR_INVALID_ARGUMENT, "uniform_int");
  CHECK_FAILS(marg_pmf_beta_binomial_f64(4, -1, 1, &out), MARG_ERROR_INVALID_ARGUMENT,
              "beta_binomial");
  CHECK_FAILS(marg_pmf_poisson_f64(-2, 0, &out), MARG_ERROR_INVALID_ARGUMENT, "poisson");
  CHECK_FAILS(marg_pmf_geometric_f64(0, 0, &out), MARG_ERROR_INVALID_ARGUMENT, "geometric");
  CHECK_FAILS(marg_pmf_negative_binomial_f64(1, 0.5, 2, &out), MARG_ERROR_INVALID_ARGUMENT, "tail");
  CHECK_FAILS(marg_pmf_categorical_log_f64((const double[]){-INFINITY}, 1, 0, &out),
              MARG_ERROR_INVALID_ARGUMENT, "categorical_log");
  CHECK_FAILS(marg_pmf_delta_f64(0, NULL), MARG_ERROR_INVALID_ARGUMENT, "out is null");
  CHECK(out == sentinel);
  /* null handles */
  CHECK_FAILS(marg_pmf_prob_f64(NULL, 0, &v), MARG_ERROR_INVALID_ARGUMENT, "x is null");
  CHECK_FAILS(marg_pmf_support(NULL, &iv, &iv2), MARG_ERROR_INVALID_ARGUMENT, "x is null");
  CHECK(iv == 777 && iv2 == 777);
  CHECK_FAILS(marg_pmf_add(x, NULL, &out), MARG_ERROR_INVALID_ARGUMENT, "y is null");
  CHECK_FAILS(marg_pmf_copy(NULL, &out), MARG_ERROR_INVALID_ARGUMENT, "x is null");
  CHECK_FAILS(marg_pmf_condition_on_sum(NULL, x, 1, &v, &out, &out), MARG_ERROR_INVALID_ARGUMENT,
              "x is null");
  CHECK_FAILS(marg_pmf_log_prob_sum(x, x, 1, NULL), MARG_ERROR_INVALID_ARGUMENT, "out is null");
  CHECK_FAILS(marg_pmf_batch_neg(NULL, &bout), MARG_ERROR_INVALID_ARGUMENT, "x is null");
  CHECK(out == sentinel && bout == (marg_pmf_batch*)&out && v == SENTINEL);
  /* the other element type */
  CHECK_FAILS(marg_pmf_prob_f64(xf, 0, &v), MARG_ERROR_INVALID_ARGUMENT, "holds float");
  CHECK_FAILS(marg_pmf_mean_f32(x, &vf), MARG_ERROR_INVALID_ARGUMENT, "holds double");
  CHECK_FAILS(marg_pmf_add(x, xf, &out), MARG_ERROR_INVALID_ARGUMENT, "different element types");
  terms[0] = x, terms[1] = xf;
  CHECK_FAILS(marg_pmf_sum(terms, 2, &out), MARG_ERROR_INVALID_ARGUMENT, "xs[1]");
  CHECK_FAILS(marg_pmf_sum(terms, 0, &out), MARG_ERROR_INVALID_ARGUMENT, "count");
  CHECK(v == SENTINEL && vf == (float)SENTINEL && out == sentinel);
  /* bad arguments */
  CHECK_FAILS(marg_pmf_probs_f64(x, arr, 3), MARG_ERROR_INVALID_ARGUMENT, "count of out");
  CHECK(arr[0] == SENTINEL && arr[1] == SENTINEL);
  CHECK_FAILS(marg_pmf_sample(x, 1.0, &iv), MARG_ERROR_INVALID_ARGUMENT, "u");
  CHECK_FAILS(marg_pmf_sample_given_sum(x, x, 99, 0.5, &iv, &iv2), MARG_ERROR_INVALID_ARGUMENT,
              "impossible");
  CHECK(iv == 777 && iv2 == 777);
  CHECK_FAILS(marg_pmf_condition_on_sum_soft_f64(x, x, arr, 3, &v, &out, &out),
              MARG_ERROR_INVALID_ARGUMENT, "likelihood");
  CHECK_FAILS(marg_pmf_sum_grad_f64(x, x, arr, 11, arr, 2, arr, 8), MARG_ERROR_INVALID_ARGUMENT,
              "count_x");
  CHECK_FAILS(marg_pmf_log_prob_sum_grad_f64(x, x, 99, arr, 8, arr, 8), MARG_ERROR_INVALID_ARGUMENT,
              "log_prob_sum_grad");
  CHECK(v == SENTINEL && out == sentinel && arr[0] == SENTINEL);
  CHECK_FAILS(marg_pmf_batch_binomial_f64(0, &iv, &v, 1e-17, &bout), MARG_ERROR_INVALID_ARGUMENT,
              "batch");
  CHECK_FAILS(marg_pmf_batch_create_f64(1, 2, &iv, w, 0, &bout), MARG_ERROR_INVALID_ARGUMENT, "-1");
  CHECK(bout == (marg_pmf_batch*)&out);
  /* out of memory through a tiny pool cap */
  {
    size_t limit = 0;
    marg_pmf* big = must(marg_pmf_binomial_f64(20000, 0.5, &big), &big);
    marg_pmf_batch* bx = NULL;
    CHECK(marg_pmf_batch_binomial_f64(1, (const int64_t[]){20000}, (const double[]){0.5}, 1e-17,
                                      &bx) == MARG_SUCCESS);
    CHECK(marg_pool_stats(NULL, NULL, &limit) == MARG_SUCCESS);
    CHECK(marg_set_pool_limit(1) == MARG_SUCCESS);
    CHECK_FAILS(marg_pmf_binomial_f64(100000, 0.5, &out), MARG_ERROR_OUT_OF_MEMORY, "");
    CHECK(strlen(marg_last_error_message()) > 0);
    CHECK_FAILS(marg_pmf_add(big, big, &out), MARG_ERROR_OUT_OF_MEMORY, "");
    CHECK_FAILS(marg_pmf_batch_add(bx, bx, &bout), MARG_ERROR_OUT_OF_MEMORY, "");
    CHECK(out == sentinel && bout == (marg_pmf_batch*)&out);
    CHECK(marg_set_pool_limit(limit) == MARG_SUCCESS);
    marg_pmf_destroy(big);
    marg_pmf_batch_destroy(bx);
  }
  marg_pmf_destroy(NULL);
  marg_pmf_batch_destroy(NULL);
  marg_batch_evidence_destroy(NULL);
  marg_pmf_destroy(x);
  marg_pmf_destroy(xf);
}

int main(void) {
  check_factories();
  check_accessors();
  check_algebra();
  check_observation();
  check_observation_f32();
  check_batches();
  check_errors();
  printf("test_c_pmf: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
