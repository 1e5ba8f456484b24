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
 * The generator is the 64-bit Mersenne twister with the C++ standard
 * library's uniform, normal (polar method) and gamma (Marsaglia-Tsang)
 * transforms as libstdc++ implements them, so that the draws match the C++
 * program's. */
#include <marg/marg.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- random numbers */

typedef struct {
  uint64_t mt[312];
  int i;
} mt64;

static void mt64_seed(mt64* g, uint64_t seed) {
  int i;
  g->mt[0] = seed;
  for (i = 1; i < 312; ++i)
    g->mt[i] = 6364136223846793005ULL * (g->mt[i - 1] ^ (g->mt[i - 1] >> 62)) + (uint64_t)i;
  g->i = 312;
}

static uint64_t mt64_next(mt64* g) {
  uint64_t x;
  if (g->i >= 312) {
    int k;
    for (k = 0; k < 312; ++k) {
      const uint64_t y =
          (g->mt[k] & 0xFFFFFFFF80000000ULL) | (g->mt[(k + 1) % 312] & 0x7FFFFFFFULL);
      g->mt[k] = g->mt[(k + 156) % 312] ^ (y >> 1) ^ ((y & 1) ? 0xB5026F5AA96619E9ULL : 0);
    }
    g->i = 0;
  }
  x = g->mt[g->i++];
  x ^= (x >> 29) & 0x5555555555555555ULL;
  x ^= (x << 17) & 0x71D67FFFEDA60000ULL;
  x ^= (x << 37) & 0xFFF7EEE000000000ULL;
  x ^= x >> 43;
  return x;
}

/* std::generate_canonical<double, 53> of a 64-bit engine: one draw over 2^64 */
static double canonical(mt64* g) {
  const double r = (double)mt64_next(g) / 18446744073709551616.0;
  return r >= 1.0 ? nextafter(1.0, 0.0) : r;
}

/* std::normal_distribution (polar method; the second value is kept) */
typedef struct {
  int saved_ok;
  double saved;
} normal_dist;

static double normal_draw(normal_dist* d, mt64* g) {
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
static double gamma_draw(mt64* g, double alpha, double beta) {
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

static double beta_draw(mt64* g, double a, double b) {
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
enum { n_days = 14, chunks_max = 64 };
static const int64_t population = 763, initial = 1;

static double infection_prob(const params* th, int64_t i) {
  return th->delta * -expm1(-th->lambda * (double)i / (double)population);
}

/* sums over particles in the fixed chunks of examples/sir, added in chunk order */
static double chunk_sum(const double* v, int B, int squares) {
  const int chunks = B < chunks_max ? B : chunks_max;
  double total = 0;
  int c, b;
  for (c = 0; c < chunks; ++c) {
    double s = 0;
    for (b = (int)((int64_t)B * c / chunks); b < (int)((int64_t)B * (c + 1) / chunks); ++b)
      s += squares ? v[b] * v[b] : v[b];
    total += s;
  }
  return total;
}

static double log_sum_exp(const double* v, double* tmp, int B) {
  double m = v[0];
  int b;
  for (b = 1; b < B; ++b)
    if (v[b] > m) m = v[b];
  if (!isfinite(m)) return m;
  for (b = 0; b < B; ++b) tmp[b] = exp(v[b] - m);
  return m + log(chunk_sum(tmp, B, 0));
}

static int fail(const char* what) {
  fprintf(stderr, "sir_day: %s: %s\n", what, marg_last_error_message());
  return 1;
}

/* One day for all particles through the C API: writes each particle's log
 * likelihood increment and moves its state by the joint draw. */
static int day_step(int B, state* xs, const params* th, int64_t y, mt64* g, int64_t* n_inf,
                    double* p_inf, int64_t* n_rec, double* p_rec, int64_t* offset, double* rho,
                    double* u, double* inc, int64_t* first, int64_t* second) {
  marg_pmf_batch *X = NULL, *Y = NULL, *negY = NULL;
  marg_batch_evidence* L = NULL;
  int b, rc = 0;
  for (b = 0; b < B; ++b) {
    n_inf[b] = xs[b].s, p_inf[b] = infection_prob(&th[b], xs[b].i);
    n_rec[b] = xs[b].i, p_rec[b] = th[b].gamma;
    offset[b] = xs[b].i, rho[b] = th[b].rho;
  }
  /* the sampler's uniforms: 2 per particle, from the filter's generator */
  for (b = 0; b < 2 * B; ++b) u[b] = canonical(g);
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
  int B = 1000, a, b, c, t, rc = 0;
  uint64_t seed = 1, seeds[chunks_max];
  double ll = 0;
  mt64 g;
  state *xs, *xs2;
  params *th, *th2;
  double *logw, *inc, *w, *tmp, *p_inf, *p_rec, *rho, *u;
  int64_t *n_inf, *n_rec, *offset, *first, *second;
  int* anc;
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

  /* priors: one generator per chunk of 64, seeded from the filter's generator
   * (lambda ~ Gamma(2, scale 5); delta, gamma, rho ~ Beta(2, 2)) */
  /* the CPU backend, as the comparison runs `sir --backend cpu` */
  if (marg_set_backend(MARG_BACKEND_CPU) != MARG_SUCCESS) return fail("marg_set_backend");
  /* the seed of sir's replicate 0: the first draw of a generator seeded with S */
  mt64_seed(&g, seed);
  seed = mt64_next(&g);
  mt64_seed(&g, seed);
  for (c = 0; c < chunks_max; ++c) seeds[c] = mt64_next(&g);
  for (c = 0; c < chunks_max; ++c) {
    mt64 cg;
    mt64_seed(&cg, seeds[c]);
    for (b = (int)((int64_t)B * c / chunks_max); b < (int)((int64_t)B * (c + 1) / chunks_max);
         ++b) {
      th[b].lambda = gamma_draw(&cg, 2.0, 5.0);
      th[b].delta = beta_draw(&cg, 2, 2);
      th[b].gamma = beta_draw(&cg, 2, 2);
      th[b].rho = beta_draw(&cg, 2, 2);
    }
  }
  for (b = 0; b < B; ++b) xs[b].s = population - initial, xs[b].i = initial, xs[b].r = 0;

  for (t = 0; t < n_days && rc == 0; ++t) {
    double before, after, z, e;
    rc = day_step(B, xs, th, days[t], &g, n_inf, p_inf, n_rec, p_rec, offset, rho, u, inc, first,
                  second);
    if (rc != 0) break;
    /* log p(y_t | y_1..t-1) = log sum_b W_b w_b, W the normalized previous weights */
    before = log_sum_exp(logw, tmp, B);
    for (b = 0; b < B; ++b) logw[b] += inc[b];
    after = log_sum_exp(logw, tmp, B);
    ll += after - before;
    if (!isfinite(after)) break;
    z = log_sum_exp(logw, tmp, B);
    for (b = 0; b < B; ++b) w[b] = exp(logw[b] - z);
    e = 1.0 / chunk_sum(w, B, 1);
    if (t + 1 < n_days && e < 0.5 * B) { /* systematic resampling */
      const double u0 = canonical(&g) / B;
      double cum = w[0];
      int j = 0;
      for (b = 0; b < B; ++b) {
        const double ub = u0 + (double)b / B;
        while (cum <= ub && j < B - 1) cum += w[++j];
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
  free(first), free(second), free(anc);
  return rc;
}
