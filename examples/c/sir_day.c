/* The SIR particle filter of examples/sir, its day step written against the
 * C API: per day, the laws of new infections X = Δi and of -Y = -Δr as
 * binomial batches, the evidence L(i_t) = P(y_t | i_t) of the under-reported
 * count, and one exact joint draw of (X, -Y) given the evidence per particle,
 * with the particle's likelihood. The filter around it (priors, weights,
 * adaptive systematic resampling) follows examples/sir without its
 * rejuvenation moves (`sir --no-move`), drawing the same random numbers in
 * the same order: for the same seed and particle count it prints the same
 * log marginal likelihood as `sir --no-move --replicates 1` (the ctest test
 * example.c.sir compares the two).
 *
 *   sir_day [--particles B] [--seed S]     (B below 8,192: one width group)
 *
 * The random numbers are examples/sir's counter-based streams: splitmix64
 * started at a hash of (seed, use, day, particle), with the C++ standard
 * library's uniform, normal (polar method) and gamma (Marsaglia-Tsang)
 * transforms as libstdc++ implements them; sums over particles are taken in
 * fixed point (128-bit integers) as in the C++ program, so that the numbers
 * match it. */
#include <marg/marg.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- random numbers */

/* splitmix64's output function of x */
static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* the uses of random numbers (examples/sir's enum class stream) */
enum { stream_prior = 1, stream_draw = 2, stream_resample = 5, stream_replicate = 6 };

typedef struct {
  uint64_t state;
} rng;

/* the stream of (seed, use, day, particle) */
static rng rng_of(uint64_t seed, uint64_t use, uint64_t day, uint64_t particle) {
  rng g;
  g.state = mix64(mix64(mix64(mix64(seed) ^ use) ^ day) ^ particle);
  return g;
}

static uint64_t rng_next(rng* g) {
  const uint64_t x = g->state;
  g->state += 0x9e3779b97f4a7c15ULL;
  return mix64(x);
}

/* std::generate_canonical<double, 53> of a 64-bit engine: one draw over 2^64 */
static double canonical(rng* g) {
  const double r = (double)rng_next(g) / 18446744073709551616.0;
  return r >= 1.0 ? nextafter(1.0, 0.0) : r;
}

/* std::normal_distribution (polar method; the second value is kept) */
typedef struct {
  int saved_ok;
  double saved;
} normal_dist;

static double normal_draw(normal_dist* d, rng* g) {
  double x, y, r2, mult;
  if (d->saved_ok) {
    d->saved_ok = 0;
    return d->saved;
  }
  do {
    x = 2.0 * canonical(g) - 1.0;
    y = 2.0 * canonical(g) - 1.0;
    r2 = x * x + y * y;
  } while (r2 > 1.0 || r2 == 0.0);
  mult = sqrt(-2 * log(r2) / r2);
  d->saved = x * mult;
  d->saved_ok = 1;
  return y * mult;
}

/* one draw of a fresh std::gamma_distribution(alpha, beta), alpha >= 1 */
static double gamma_draw(rng* g, double alpha, double beta) {
  normal_dist nd = {0, 0};
  const double a1 = alpha - 1.0 / 3.0, a2 = 1.0 / sqrt(9.0 * a1);
  double u, v, n;
  do {
    do {
      n = normal_draw(&nd, g);
      v = 1.0 + a2 * n;
    } while (v <= 0.0);
    v = v * v * v;
    u = canonical(g);
  } while (u > 1.0 - 0.0331 * n * n * n * n && log(u) > 0.5 * n * n + a1 * (1.0 - v + log(v)));
  return a1 * v * beta;
}

static double beta_draw(rng* g, double a, double b) {
  const double x = gamma_draw(g, a, 1.0);
  const double y = gamma_draw(g, b, 1.0);
  return x / (x + y);
}

/* ---------------------------------------------------------------- the model */

typedef struct {
  double lambda, delta, gamma, rho;
} params;

typedef struct {
  int64_t s, i, r;
} state;

static const int64_t days[14] = {3, 8, 26, 76, 225, 298, 258, 233, 189, 128, 68, 29, 14, 4};
enum { n_days = 14 };
static const int64_t population = 763, initial = 1;

static double infection_prob(const params* th, int64_t i) {
  return th->delta * -expm1(-th->lambda * (double)i / (double)population);
}

/* fixed point: value * 2^100 in a 128-bit integer (values in [0, 1], truncated) */
__extension__ typedef __int128 fixed;
static fixed to_fixed(double x) {
  return (fixed)ldexp(x, 100);
}
static double from_fixed(fixed f) {
  return ldexp((double)f, -100);
}

/* sum of v[b] (or of their squares), in fixed point */
static double fixed_sum(const double* v, int B, int squares) {
  fixed s = 0;
  int b;
  for (b = 0; b < B; ++b) s += to_fixed(squares ? v[b] * v[b] : v[b]);
  return from_fixed(s);
}

static double log_sum_exp(const double* v, double* tmp, int B) {
  double m = v[0];
  int b;
  for (b = 1; b < B; ++b)
    if (v[b] > m) m = v[b];
  if (!isfinite(m)) return m;
  for (b = 0; b < B; ++b) tmp[b] = exp(v[b] - m);
  return m + log(fixed_sum(tmp, B, 0));
}

static int fail(const char* what) {
  fprintf(stderr, "sir_day: %s: %s\n", what, marg_last_error_message());
  return 1;
}

/* One day for all particles through the C API: writes each particle's log
 * likelihood increment and moves its state by the joint draw. */
static int day_step(int B, state* xs, const params* th, int64_t y, uint64_t seed, int t,
                    int64_t* n_inf, double* p_inf, int64_t* n_rec, double* p_rec, int64_t* offset,
                    double* rho, double* u, double* inc, int64_t* first, int64_t* second) {
  marg_pmf_batch *X = NULL, *Y = NULL, *negY = NULL;
  marg_batch_evidence* L = NULL;
  int b, rc = 0;
  for (b = 0; b < B; ++b) {
    n_inf[b] = xs[b].s, p_inf[b] = infection_prob(&th[b], xs[b].i);
    n_rec[b] = xs[b].i, p_rec[b] = th[b].gamma;
    offset[b] = xs[b].i, rho[b] = th[b].rho;
  }
  /* the sampler's uniforms: 2 per particle, from the particle's stream of the day */
  for (b = 0; b < B; ++b) {
    rng g = rng_of(seed, stream_draw, (uint64_t)t, (uint64_t)b);
    u[2 * b] = canonical(&g);
    u[2 * b + 1] = canonical(&g);
  }
  if (marg_pmf_batch_binomial_f64(B, n_inf, p_inf, 1e-17, &X) != MARG_SUCCESS ||
      marg_pmf_batch_binomial_f64(B, n_rec, p_rec, 1e-17, &Y) != MARG_SUCCESS ||
      marg_pmf_batch_neg(Y, &negY) != MARG_SUCCESS ||
      marg_batch_evidence_binomial_count(X, negY, offset, B, &y, 1, rho, B, population, &L) !=
          MARG_SUCCESS ||
      marg_pmf_batch_sample_given_evidence(X, negY, L, u, 2 * (int64_t)B, inc, first, second) !=
          MARG_SUCCESS)
    rc = fail("day step");
  for (b = 0; rc == 0 && b < B; ++b) {
    if (!isfinite(inc[b])) {
      inc[b] = -INFINITY;
      continue;
    }
    xs[b].s -= first[b];
    xs[b].i += first[b] + second[b];
    xs[b].r -= second[b];
  }
  marg_batch_evidence_destroy(L);
  marg_pmf_batch_destroy(negY);
  marg_pmf_batch_destroy(Y);
  marg_pmf_batch_destroy(X);
  return rc;
}

int main(int argc, char** argv) {
  int B = 1000, a, b, t, rc = 0;
  uint64_t seed = 1;
  double ll = 0;
  state *xs, *xs2;
  params *th, *th2;
  double *logw, *inc, *w, *tmp, *p_inf, *p_rec, *rho, *u;
  int64_t *n_inf, *n_rec, *offset, *first, *second;
  int* anc;
  fixed* cum;
  for (a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--particles") == 0)
      B = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--seed") == 0)
      seed = strtoull(argv[a + 1], NULL, 10);
    else
      break;
  }
  if (a < argc || B < 1 || B >= 8192) {
    fprintf(stderr, "usage: sir_day [--particles B (1..8191)] [--seed S]\n");
    return 2;
  }
  xs = malloc(sizeof(state) * B), xs2 = malloc(sizeof(state) * B);
  th = malloc(sizeof(params) * B), th2 = malloc(sizeof(params) * B);
  logw = calloc(B, sizeof(double)), inc = malloc(sizeof(double) * B);
  w = malloc(sizeof(double) * B), tmp = malloc(sizeof(double) * B);
  p_inf = malloc(sizeof(double) * B), p_rec = malloc(sizeof(double) * B);
  rho = malloc(sizeof(double) * B), u = malloc(sizeof(double) * 2 * B);
  n_inf = malloc(sizeof(int64_t) * B), n_rec = malloc(sizeof(int64_t) * B);
  offset = malloc(sizeof(int64_t) * B), first = malloc(sizeof(int64_t) * B);
  second = malloc(sizeof(int64_t) * B), anc = malloc(sizeof(int) * B);
  cum = malloc(sizeof(fixed) * B);

  /* the CPU backend, as the comparison runs `sir --backend cpu` */
  if (marg_set_backend(MARG_BACKEND_CPU) != MARG_SUCCESS) return fail("marg_set_backend");
  /* the seed of sir's replicate 0: the first draw of its stream */
  {
    rng g = rng_of(seed, stream_replicate, 0, 0);
    seed = rng_next(&g);
  }
  /* priors, each particle from its own stream (lambda ~ Gamma(2, scale 5);
   * delta, gamma, rho ~ Beta(2, 2)) */
  for (b = 0; b < B; ++b) {
    rng g = rng_of(seed, stream_prior, 0, (uint64_t)b);
    th[b].lambda = gamma_draw(&g, 2.0, 5.0);
    th[b].delta = beta_draw(&g, 2, 2);
    th[b].gamma = beta_draw(&g, 2, 2);
    th[b].rho = beta_draw(&g, 2, 2);
  }
  for (b = 0; b < B; ++b) xs[b].s = population - initial, xs[b].i = initial, xs[b].r = 0;

  for (t = 0; t < n_days && rc == 0; ++t) {
    double before, after, z, e;
    rc = day_step(B, xs, th, days[t], seed, t, n_inf, p_inf, n_rec, p_rec, offset, rho, u, inc,
                  first, second);
    if (rc != 0) break;
    /* log p(y_t | y_1..t-1) = log sum_b W_b w_b, W the normalized previous weights */
    before = log_sum_exp(logw, tmp, B);
    for (b = 0; b < B; ++b) logw[b] += inc[b];
    after = log_sum_exp(logw, tmp, B);
    ll += after - before;
    if (!isfinite(after)) break;
    z = log_sum_exp(logw, tmp, B);
    for (b = 0; b < B; ++b) w[b] = exp(logw[b] - z);
    e = 1.0 / fixed_sum(w, B, 1);
    if (t + 1 < n_days && e < 0.5 * B) { /* systematic resampling */
      /* slot b takes the first particle j whose fixed-point cumulative weight
       * exceeds (u0 + b) / B of the total (to 50 bits of the fraction) */
      rng g = rng_of(seed, stream_resample, (uint64_t)t, 0);
      const double u0 = canonical(&g);
      fixed total = 0;
      int j = 0;
      for (b = 0; b < B; ++b) cum[b] = total += to_fixed(w[b]);
      for (b = 0; b < B; ++b) {
        const fixed target = (total >> 50) * (fixed)ldexp((u0 + (double)b) / B, 50);
        while (j < B - 1 && cum[j] <= target) ++j;
        anc[b] = j;
      }
      for (b = 0; b < B; ++b) xs2[b] = xs[anc[b]], th2[b] = th[anc[b]];
      memcpy(xs, xs2, sizeof(state) * B);
      memcpy(th, th2, sizeof(params) * B);
      for (b = 0; b < B; ++b) logw[b] = 0;
    }
  }
  if (rc == 0) printf("log marginal likelihood estimate: %.10g\n", ll);
  free(xs), free(xs2), free(th), free(th2), free(logw), free(inc), free(w), free(tmp);
  free(p_inf), free(p_rec), free(rho), free(u), free(n_inf), free(n_rec), free(offset);
  free(first), free(second), free(anc), free(cum);
  return rc;
}
