// SIR epidemic particle filter that marginalizes the discrete sum of new
// infections and recoveries with libmarg. See README.md for the model.
//
//   sir [--particles B] [--backend cpu|cuda|auto] [--seed S] [--data FILE]
//       [--population N] [--initial I] [--out DIR] [--no-marginalize] [--no-move]
//       [--float] [--repeat R] [--check] [--quiet]
//
// Exit status: 0 on success, 1 when --check finds a failure, 2 on bad arguments.
#include <marg/marg.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using rng = std::mt19937_64;

// the 1978 boarding-school influenza outbreak: boys confined to bed, days 1..14
const std::vector<std::int64_t> boarding_school = {3,   8,   26,  76, 225, 298, 258,
                                                   233, 189, 128, 68, 29,  14,  4};

struct options {
  int particles = 1000;
  std::string backend = "auto";
  std::uint64_t seed = 1;
  std::string data;  // empty: the boarding-school data
  std::int64_t population = 763;
  std::int64_t initial = 1;  // infected on day 0
  std::string out;
  bool marginalize = true;
  bool rejuvenate = true;
  bool use_float = false;
  int repeat = 0;  // > 0: the seed study
  bool check = false;
  bool quiet = false;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(
      stderr,
      "sir: %s\n"
      "usage: sir [--particles B] [--backend cpu|cuda|auto] [--seed S] [--data FILE]\n"
      "           [--population N] [--initial I] [--out DIR] [--no-marginalize] [--no-move]\n"
      "           [--float] [--repeat R] [--check] [--quiet]\n",
      what.c_str());
  std::exit(2);
}

std::int64_t parse_int(const std::string& text, const char* name, std::int64_t lo,
                       std::int64_t hi) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < lo || v > hi)
    usage_error(std::string(name) + " = '" + text + "' (must be an integer in " +
                std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return v;
}

options parse(int argc, char** argv) {
  options o;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto value = [&]() -> std::string {
      if (a + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++a];
    };
    if (arg == "--particles")
      o.particles = static_cast<int>(parse_int(value(), "--particles", 1, 100000000));
    else if (arg == "--backend") {
      o.backend = value();
      if (o.backend != "cpu" && o.backend != "cuda" && o.backend != "auto")
        usage_error("--backend = '" + o.backend + "' (must be cpu, cuda or auto)");
    } else if (arg == "--seed")
      o.seed = static_cast<std::uint64_t>(
          parse_int(value(), "--seed", 0, std::numeric_limits<std::int64_t>::max()));
    else if (arg == "--data")
      o.data = value();
    else if (arg == "--population")
      o.population = parse_int(value(), "--population", 1, 100000000);
    else if (arg == "--initial")
      o.initial = parse_int(value(), "--initial", 1, 100000000);
    else if (arg == "--out")
      o.out = value();
    else if (arg == "--no-marginalize")
      o.marginalize = false;
    else if (arg == "--no-move")
      o.rejuvenate = false;
    else if (arg == "--float")
      o.use_float = true;
    else if (arg == "--repeat")
      o.repeat = static_cast<int>(parse_int(value(), "--repeat", 1, 100000));
    else if (arg == "--check")
      o.check = true;
    else if (arg == "--quiet")
      o.quiet = true;
    else if (arg == "--help" || arg == "-h") {
      std::printf("see examples/sir/README.md\n");
      std::exit(0);
    } else
      usage_error("unknown argument '" + arg + "'");
  }
  if (o.initial > o.population) usage_error("--initial must not exceed --population");
  return o;
}

// reads counts from a CSV: one count per line, the last field of each line;
// lines whose last field is not an integer (headers, blanks, comments) are skipped
std::vector<std::int64_t> read_counts(const std::string& path) {
  std::ifstream in(path);
  if (!in) usage_error("cannot read --data '" + path + "'");
  std::vector<std::int64_t> counts;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto comma = line.find_last_of(",;\t");
    std::string field = comma == std::string::npos ? line : line.substr(comma + 1);
    field.erase(0, field.find_first_not_of(" \t"));
    field.erase(field.find_last_not_of(" \t") + 1);
    char* end = nullptr;
    const long long v = std::strtoll(field.c_str(), &end, 10);
    if (field.empty() || *end != '\0') continue;
    if (v < 0) usage_error("--data '" + path + "' holds a negative count: " + field);
    counts.push_back(v);
  }
  if (counts.empty()) usage_error("--data '" + path + "' holds no counts");
  return counts;
}

// ---------------------------------------------------------------- the model

/// Parameters of one particle.
struct params {
  double lambda;  // contact rate per day
  double delta;   // probability that a contact infects
  double gamma;   // daily recovery probability
  double rho;     // reporting probability of an infected
};

double beta_draw(rng& g, double a, double b) {
  const double x = std::gamma_distribution<double>(a, 1.0)(g);
  const double y = std::gamma_distribution<double>(b, 1.0)(g);
  return x / (x + y);
}

// the priors (README.md): lambda ~ Gamma(2, scale 5), delta, gamma, rho ~ Beta(2, 2)
params prior_draw(rng& g) {
  return {std::gamma_distribution<double>(2.0, 5.0)(g), beta_draw(g, 2, 2), beta_draw(g, 2, 2),
          beta_draw(g, 2, 2)};
}

// probability that a susceptible is infected in one day, given i infected
double infection_prob(const params& th, std::int64_t i, std::int64_t population) {
  return th.delta * -std::expm1(-th.lambda * static_cast<double>(i) / population);
}

/// One particle's state.
struct state {
  std::int64_t s, i, r;
};

/// What a particle's path says about its parameters: the sufficient
/// statistics of gamma and rho, and each day's (s, i) before and Δi.
struct path_stats {
  double recovered = 0, at_risk = 0;  // sum Δr, sum i_{t-1}
  double reported = 0, infected = 0;  // sum y_t, sum i_t
  std::vector<std::int64_t> s_prev, i_prev, new_inf;
};

// log p(Δi_1..t | lambda, delta, path) + log prior(lambda, delta) + Jacobian
// of (log lambda, logit delta)
double log_target_lambda_delta(double lambda, double delta, const path_stats& ps,
                               std::int64_t population) {
  double l = 2 * std::log(lambda) - lambda / 5 + 2 * (std::log(delta) + std::log1p(-delta));
  for (std::size_t t = 0; t < ps.new_inf.size(); ++t) {
    const double p = delta * -std::expm1(-lambda * static_cast<double>(ps.i_prev[t]) / population);
    const auto k = static_cast<double>(ps.new_inf[t]);
    const double n = static_cast<double>(ps.s_prev[t]);
    if (k > 0) l += k * std::log(p);
    if (n > k) l += (n - k) * std::log1p(-p);
  }
  return l;
}

// the move: a kernel that leaves p(theta | path, y) invariant, applied to
// every particle after each day (resample-move), so that the parameters do
// not collapse onto the few values drawn from the prior. gamma and rho are
// drawn exactly from their Beta posteriors; (log lambda, logit delta) take a
// few random-walk Metropolis steps.
void rejuvenate(params& th, const path_stats& ps, std::int64_t population, rng& g) {
  th.gamma = beta_draw(g, 2 + ps.recovered, 2 + ps.at_risk - ps.recovered);
  th.rho = beta_draw(g, 2 + ps.reported, 2 + ps.infected - ps.reported);
  std::normal_distribution<double> step(0.0, 0.15);
  double cur = log_target_lambda_delta(th.lambda, th.delta, ps, population);
  for (int k = 0; k < 5; ++k) {
    const double lambda = th.lambda * std::exp(step(g));
    const double z = std::log(th.delta / (1 - th.delta)) + step(g);
    const double delta = 1 / (1 + std::exp(-z));
    if (!(delta > 0 && delta < 1 && lambda > 0 && std::isfinite(lambda))) continue;
    const double prop = log_target_lambda_delta(lambda, delta, ps, population);
    if (std::log(std::generate_canonical<double, 53>(g)) < prop - cur)
      th.lambda = lambda, th.delta = delta, cur = prop;
  }
}

// adds day t to a particle's statistics: before and after its transition
void record(path_stats& ps, const state& before, const state& after, std::int64_t y) {
  const std::int64_t di = before.s - after.s, dr = after.r - before.r;
  ps.recovered += static_cast<double>(dr);
  ps.at_risk += static_cast<double>(before.i);
  ps.reported += static_cast<double>(y);
  ps.infected += static_cast<double>(after.i);
  ps.s_prev.push_back(before.s);
  ps.i_prev.push_back(before.i);
  ps.new_inf.push_back(di);
}

// Binomial(n, p) on the window of values whose probability is at least 1e-20
// of the mode's (the mass dropped is below 1e-17): the supports, and so the
// convolutions, shrink from n + 1 values to a few standard deviations.
template <class T>
marg::pmf<T> binomial_window(std::int64_t n, double p) {
  if (n == 0 || p <= 0) return marg::delta<T>(0);
  if (p >= 1) return marg::delta<T>(n);
  const std::int64_t mode =
      std::min<std::int64_t>(n, static_cast<std::int64_t>(std::floor((n + 1) * p)));
  const double odds = p / (1 - p), floor_ratio = 1e-20;
  std::vector<double> up{1.0}, down;
  double v = 1.0;
  for (std::int64_t k = mode; k < n; ++k) {  // P(k+1)/P(k) = (n-k)/(k+1) * odds
    v *= static_cast<double>(n - k) / static_cast<double>(k + 1) * odds;
    if (v < floor_ratio) break;
    up.push_back(v);
  }
  v = 1.0;
  for (std::int64_t k = mode; k > 0; --k) {  // P(k-1)/P(k) = k/(n-k+1) / odds
    v *= static_cast<double>(k) / static_cast<double>(n - k + 1) / odds;
    if (v < floor_ratio) break;
    down.push_back(v);
  }
  std::vector<T> w(down.size() + up.size());
  std::size_t j = 0;
  for (auto it = down.rbegin(); it != down.rend(); ++it) w[j++] = static_cast<T>(*it);
  for (double u : up) w[j++] = static_cast<T>(u);
  return marg::categorical<T>(std::move(w), mode - static_cast<std::int64_t>(down.size()));
}

// log C(n, k) from a table of log-factorials
struct log_factorials {
  std::vector<double> lf;
  explicit log_factorials(std::int64_t n) : lf(static_cast<std::size_t>(n) + 1) {
    for (std::int64_t k = 1; k <= n; ++k) lf[k] = lf[k - 1] + std::log(static_cast<double>(k));
  }
  double choose(std::int64_t n, std::int64_t k) const { return lf[n] - lf[k] - lf[n - k]; }
};

// log P(y | i) for y ~ Binomial(i, rho)
double log_obs(const log_factorials& lf, std::int64_t y, std::int64_t i, double rho) {
  if (i < y || i < 0) return -std::numeric_limits<double>::infinity();
  return lf.choose(i, y) + y * std::log(rho) + (i - y) * std::log1p(-rho);
}

// ---------------------------------------------------------------- summaries

double log_sum_exp(const std::vector<double>& v) {
  const double m = *std::max_element(v.begin(), v.end());
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

// normalized weights from log weights
std::vector<double> normalize(const std::vector<double>& logw) {
  const double z = log_sum_exp(logw);
  std::vector<double> w(logw.size());
  for (std::size_t b = 0; b < w.size(); ++b) w[b] = std::exp(logw[b] - z);
  return w;
}

double ess(const std::vector<double>& w) {
  double s2 = 0;
  for (double x : w) s2 += x * x;
  return s2 > 0 ? 1.0 / s2 : 0.0;
}

/// Weighted mean and equal-tailed 95% interval.
struct summary {
  double mean, lo, median, hi;
};

summary summarize(const std::vector<double>& x, const std::vector<double>& w) {
  std::vector<std::size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  summary s{0, x[idx.front()], x[idx.front()], x[idx.back()]};
  for (std::size_t b = 0; b < x.size(); ++b) s.mean += w[b] * x[b];
  double c = 0;
  bool lo = false, med = false, hi = false;
  for (std::size_t j : idx) {
    c += w[j];
    if (!lo && c >= 0.025) s.lo = x[j], lo = true;
    if (!med && c >= 0.5) s.median = x[j], med = true;
    if (!hi && c >= 0.975) s.hi = x[j], hi = true;
  }
  return s;
}

// systematic resampling: B ancestor indices
std::vector<int> resample(const std::vector<double>& w, rng& g) {
  const int B = static_cast<int>(w.size());
  std::vector<int> a(B);
  const double u0 = std::generate_canonical<double, 53>(g) / B;
  double c = w[0];
  int j = 0;
  for (int b = 0; b < B; ++b) {
    const double u = u0 + static_cast<double>(b) / B;
    while (c <= u && j < B - 1) c += w[++j];
    a[b] = j;
  }
  return a;
}

// ---------------------------------------------------------------- the filter

// Runs fn(begin, end, g) over particles [0, B) cut into a fixed number of
// chunks, each with its own generator seeded from `g`, on marg::cpu_threads()
// host threads: the results do not depend on the thread count.
template <class F>
void for_chunks(int B, rng& g, F&& fn) {
  constexpr int chunks = 64;
  std::vector<std::uint64_t> seeds(chunks);
  for (auto& s : seeds) s = g();
  std::vector<std::exception_ptr> errors(chunks);
  std::atomic<int> next{0};
  auto work = [&] {
    for (int c; (c = next++) < chunks;) {
      try {
        rng cg(seeds[c]);
        fn(static_cast<int>(std::int64_t{B} * c / chunks),
           static_cast<int>(std::int64_t{B} * (c + 1) / chunks), cg);
      } catch (...) {
        errors[c] = std::current_exception();
      }
    }
  };
  const int threads = std::clamp(marg::cpu_threads(), 1, std::min(chunks, std::max(B / 256, 1)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

/// What one run of the filter produces.
struct result {
  double log_likelihood = 0;
  std::vector<double> ess;        // per day, after weighting
  std::vector<summary> infected;  // filtered i_t per day
  std::vector<params> theta;      // final particles
  std::vector<double> weights;    // their normalized weights
  double seconds = 0;
  long long dropped = 0;  // particles whose float posterior underflowed
};

// the live progress line, only on a terminal
struct progress {
  bool on;
  clock_type::time_point start = clock_type::now();
  explicit progress(bool enabled) : on(enabled && isatty(STDERR_FILENO)) {}
  void show(std::size_t day, std::size_t days, double e) const {
    if (!on) return;
    const double t = std::chrono::duration<double>(clock_type::now() - start).count();
    std::fprintf(stderr, "\rday %zu/%zu  ESS %8.1f  elapsed %6.2f s ", day, days, e, t);
    std::fflush(stderr);
  }
  void done() const {
    if (on) std::fprintf(stderr, "\r%60s\r", "");
  }
};

// One day of the marginalized filter for all particles. With X = Δi and
// Y = Δr independent given the particle's state, i_t = i + X - Y; the soft
// evidence L(i_t) = P(y | i_t) over the support of X + (-Y) gives each
// particle's weight and the posterior of X in one batched call, then Y is
// drawn given X from P(Y = r) L(i + X - r).
template <class T>
void step_marginalized(std::vector<state>& xs, const std::vector<params>& th,
                       std::int64_t population, std::int64_t y, const log_factorials& lf,
                       std::vector<double>& logw_inc, rng& g, std::atomic<long long>& dropped) {
  const int B = static_cast<int>(xs.size());
  std::vector<marg::pmf<T>> inf(B), rec(B);
  for_chunks(B, g, [&](int b0, int b1, rng&) {
    for (int b = b0; b < b1; ++b) {
      inf[b] = binomial_window<T>(xs[b].s, infection_prob(th[b], xs[b].i, population));
      rec[b] = binomial_window<T>(xs[b].i, th[b].gamma);
    }
  });
  const marg::pmf_batch<T> X(inf);
  const marg::pmf_batch<T> negY = -marg::pmf_batch<T>(rec);
  const int len = X.length() + negY.length() - 1;

  // L_b over the padded support of X + (-Y), scaled by its row maximum
  std::vector<T> like(static_cast<std::size_t>(B) * len);
  std::vector<double> scale(B);
  for_chunks(B, g, [&](int b0, int b1, rng&) {
    std::vector<double> row(len);
    for (int b = b0; b < b1; ++b) {
      const std::int64_t base = xs[b].i + X.lowers()[b] + negY.lowers()[b];  // i_t at index 0
      const double l1 = std::log(th[b].rho), l0 = std::log1p(-th[b].rho);
      double m = -std::numeric_limits<double>::infinity();
      for (int k = 0; k < len; ++k) {
        const std::int64_t it = base + k;
        // the padded support reaches past 0..N where the prior mass is 0
        row[k] = it < y || it > population ? -std::numeric_limits<double>::infinity()
                                           : lf.choose(it, y) + y * l1 + (it - y) * l0;
        m = std::max(m, row[k]);
      }
      scale[b] = m;
      T* L = like.data() + static_cast<std::size_t>(b) * len;
      for (int k = 0; k < len; ++k)
        L[k] = std::isfinite(m) ? static_cast<T>(std::exp(row[k] - m)) : T(0);
    }
  });

  const auto post = marg::condition_on_sum(X, negY, like);
  for_chunks(B, g, [&](int b0, int b1, rng& g) {
    for (int b = b0; b < b1; ++b) {
      logw_inc[b] = static_cast<double>(post.log_likelihood[b]) + scale[b];
      if (!std::isfinite(logw_inc[b])) {
        logw_inc[b] = -std::numeric_limits<double>::infinity();
        continue;  // weight 0 from now on; the state is never read again
      }
      // Δi from its exact posterior, then Δr given Δi. Workaround: in float the
      // batched posterior row can underflow to all zeros although the log
      // likelihood is finite (p_j * (band^T L)_j is formed in T before the
      // division by the long double total); such a particle is dropped (weight 0).
      std::int64_t di = 0;
      try {
        di = X.lowers()[b] + post.first.sample_index(b, std::generate_canonical<double, 53>(g));
      } catch (const marg::invalid_argument&) {
        logw_inc[b] = -std::numeric_limits<double>::infinity();
        ++dropped;
        continue;
      }
      const marg::pmf<T>& R = rec[b];
      const T* L = like.data() + static_cast<std::size_t>(b) * len;
      const std::int64_t base = xs[b].i + X.lowers()[b] + negY.lowers()[b];
      long double total = 0;
      std::vector<long double> c(static_cast<std::size_t>(R.size()));
      for (std::int64_t j = 0; j < R.size(); ++j) {
        const std::int64_t dr = R.lower() + j, it = xs[b].i + di - dr;
        const std::int64_t k = it - base;
        total += static_cast<long double>(R.data()[j]) * (k >= 0 && k < len ? L[k] : T(0));
        c[j] = total;
      }
      const long double u = std::generate_canonical<double, 53>(g) * total;
      std::int64_t j = 0;
      while (j + 1 < R.size() && c[j] <= u) ++j;
      const std::int64_t dr = R.lower() + j;
      xs[b] = {xs[b].s - di, xs[b].i + di - dr, xs[b].r + dr};
    }
  });
}

// One day of the plain bootstrap filter: Δi, Δr sampled, weight P(y | i_t).
void step_sampled(std::vector<state>& xs, const std::vector<params>& th, std::int64_t population,
                  std::int64_t y, const log_factorials& lf, std::vector<double>& logw_inc, rng& g) {
  for_chunks(static_cast<int>(xs.size()), g, [&](int b0, int b1, rng& g) {
    for (int b = b0; b < b1; ++b) {
      const double pi = infection_prob(th[b], xs[b].i, population);
      const std::int64_t di = std::binomial_distribution<std::int64_t>(xs[b].s, pi)(g);
      const std::int64_t dr = std::binomial_distribution<std::int64_t>(xs[b].i, th[b].gamma)(g);
      xs[b] = {xs[b].s - di, xs[b].i + di - dr, xs[b].r + dr};
      logw_inc[b] = log_obs(lf, y, xs[b].i, th[b].rho);
    }
  });
}

template <class T>
result run_filter(const options& o, const std::vector<std::int64_t>& ys, std::uint64_t seed,
                  bool show_progress) {
  const auto t0 = clock_type::now();
  rng g(seed);
  const int B = o.particles;
  const log_factorials lf(o.population);
  std::vector<params> th(B);
  for (auto& t : th) t = prior_draw(g);
  std::vector<state> xs(B, state{o.population - o.initial, o.initial, 0});
  std::vector<double> logw(B, 0.0), inc(B);
  std::vector<path_stats> paths(B);
  std::atomic<long long> dropped{0};
  result res;
  progress bar(show_progress);

  for (std::size_t t = 0; t < ys.size(); ++t) {
    const std::vector<state> prev = xs;
    if (o.marginalize)
      step_marginalized<T>(xs, th, o.population, ys[t], lf, inc, g, dropped);
    else
      step_sampled(xs, th, o.population, ys[t], lf, inc, g);
    // log p(y_t | y_1..t-1) ≈ log sum_b W_b w_b with W the normalized previous weights
    const double before = log_sum_exp(logw);
    for (int b = 0; b < B; ++b) logw[b] += inc[b];
    const double after = log_sum_exp(logw);
    res.log_likelihood += after - before;
    if (!std::isfinite(after)) {  // every particle is incompatible with y_t
      res.ess.push_back(0);
      res.infected.push_back({std::nan(""), std::nan(""), std::nan(""), std::nan("")});
      break;
    }
    for (int b = 0; b < B; ++b)
      if (std::isfinite(logw[b])) record(paths[b], prev[b], xs[b], ys[t]);
    const std::vector<double> w = normalize(logw);
    const double e = ess(w);
    res.ess.push_back(e);
    std::vector<double> it(B);
    for (int b = 0; b < B; ++b) it[b] = static_cast<double>(xs[b].i);
    res.infected.push_back(summarize(it, w));
    bar.show(t + 1, ys.size(), e);

    if (t + 1 < ys.size() && e < 0.5 * B) {  // adaptive resampling
      const std::vector<int> a = resample(w, g);
      std::vector<state> xs2(B);
      std::vector<params> th2(B);
      std::vector<path_stats> paths2(B);
      for (int b = 0; b < B; ++b) xs2[b] = xs[a[b]], th2[b] = th[a[b]], paths2[b] = paths[a[b]];
      xs.swap(xs2);
      th.swap(th2);
      paths.swap(paths2);
      std::fill(logw.begin(), logw.end(), 0.0);
    }
    if (o.rejuvenate)
      for_chunks(B, g, [&](int b0, int b1, rng& g) {
        for (int b = b0; b < b1; ++b)
          if (std::isfinite(logw[b])) rejuvenate(th[b], paths[b], o.population, g);
      });
  }
  bar.done();
  res.dropped = dropped.load();
  res.theta = th;
  res.weights = std::isfinite(log_sum_exp(logw)) ? normalize(logw) : std::vector<double>(B, 0.0);
  res.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  return res;
}

result run(const options& o, const std::vector<std::int64_t>& ys, std::uint64_t seed,
           bool show_progress) {
  return o.use_float ? run_filter<float>(o, ys, seed, show_progress)
                     : run_filter<double>(o, ys, seed, show_progress);
}

// ---------------------------------------------------------------- output

void write_csv(const std::string& dir, const std::vector<std::int64_t>& ys, const result& r) {
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/filter.csv");
    f << "day,y,ess,i_mean,i_lo,i_median,i_hi\n";
    for (std::size_t t = 0; t < r.ess.size(); ++t)
      f << t + 1 << ',' << ys[t] << ',' << r.ess[t] << ',' << r.infected[t].mean << ','
        << r.infected[t].lo << ',' << r.infected[t].median << ',' << r.infected[t].hi << '\n';
  }
  {
    std::ofstream f(dir + "/params.csv");
    f << "weight,lambda,delta,gamma,rho\n";
    f.precision(10);
    for (std::size_t b = 0; b < r.theta.size(); ++b)
      f << r.weights[b] << ',' << r.theta[b].lambda << ',' << r.theta[b].delta << ','
        << r.theta[b].gamma << ',' << r.theta[b].rho << '\n';
  }
  {
    std::ofstream f(dir + "/summary.csv");
    f.precision(10);
    f << "log_likelihood,seconds,days\n"
      << r.log_likelihood << ',' << r.seconds << ',' << r.ess.size() << '\n';
  }
}

int report(const options& o, const std::vector<std::int64_t>& ys, const result& r) {
  std::printf("%5s %6s %9s %9s %17s\n", "day", "y", "ESS", "i mean", "i 95% interval");
  for (std::size_t t = 0; t < r.ess.size(); ++t)
    std::printf("%5zu %6lld %9.1f %9.1f   [%5.0f, %5.0f]\n", t + 1, static_cast<long long>(ys[t]),
                r.ess[t], r.infected[t].mean, r.infected[t].lo, r.infected[t].hi);
  std::printf("\nlog marginal likelihood estimate: %.4f\n", r.log_likelihood);
  if (r.dropped > 0)
    std::printf("note: %lld particle-days dropped (posterior row underflowed in float)\n",
                r.dropped);
  int failures = 0;
  if (std::isfinite(r.log_likelihood)) {
    std::vector<double> v(r.theta.size());
    auto show = [&](const char* name, double params::*field) {
      for (std::size_t b = 0; b < v.size(); ++b) v[b] = r.theta[b].*field;
      const summary s = summarize(v, r.weights);
      std::printf("  %-7s %8.4f   [%8.4f, %8.4f]\n", name, s.mean, s.lo, s.hi);
    };
    std::printf("parameter posterior: mean [95%% interval]\n");
    show("lambda", &params::lambda);
    show("delta", &params::delta);
    show("gamma", &params::gamma);
    show("rho", &params::rho);
  }
  const std::size_t days = r.ess.size();
  std::printf("\nwall time: %.3f s for %zu days (%.4f s per day)\n", r.seconds, days,
              days ? r.seconds / days : 0.0);
  if (o.check) {
    if (!std::isfinite(r.log_likelihood))
      ++failures, std::printf("check: log likelihood not finite\n");
    if (days != ys.size()) ++failures, std::printf("check: the filter stopped early\n");
    for (std::size_t t = 0; t < days; ++t)
      if (!(r.ess[t] > 0))
        ++failures, std::printf("check: ESS on day %zu is %g\n", t + 1, r.ess[t]);
    // the filtered mean cannot fall below the reported count
    for (std::size_t t = 0; t < days; ++t)
      if (!(r.infected[t].mean >= static_cast<double>(ys[t])))
        ++failures, std::printf("check: mean i on day %zu below y\n", t + 1);
    std::printf(failures ? "check: FAILED (%d)\n" : "check: passed\n", failures);
  }
  return failures ? 1 : 0;
}

// the seed study: log-likelihood variance and ESS over R seeds
int study(const options& o, const std::vector<std::int64_t>& ys) {
  std::printf("%6s %12s %10s %10s %8s\n", "seed", "log lik", "mean ESS", "min ESS", "seconds");
  std::vector<double> ll, mean_ess, min_ess;
  double seconds = 0;
  for (int k = 0; k < o.repeat; ++k) {
    const std::uint64_t seed = o.seed + static_cast<std::uint64_t>(k);
    const result r = run(o, ys, seed, !o.quiet);
    const double me = std::accumulate(r.ess.begin(), r.ess.end(), 0.0) / ys.size();
    const double mi = *std::min_element(r.ess.begin(), r.ess.end());
    std::printf("%6llu %12.4f %10.1f %10.1f %8.3f\n", static_cast<unsigned long long>(seed),
                r.log_likelihood, me, mi, r.seconds);
    ll.push_back(r.log_likelihood), mean_ess.push_back(me), min_ess.push_back(mi);
    seconds += r.seconds;
  }
  // runs where every particle became incompatible with a count give -inf;
  // the statistics are over the finite runs
  std::vector<double> fin;
  for (double x : ll)
    if (std::isfinite(x)) fin.push_back(x);
  const auto mean = [](const std::vector<double>& v) {
    return v.empty() ? std::nan("") : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  };
  const double m = mean(fin);
  double var = 0;
  for (double x : fin) var += (x - m) * (x - m);
  var = fin.size() > 1 ? var / (fin.size() - 1) : std::nan("");
  std::printf(
      "\n%d seeds, %zu with a finite estimate: log likelihood mean %.4f, variance %.4f "
      "(sd %.4f); mean ESS %.1f; mean min ESS %.1f; %.3f s per run\n",
      o.repeat, fin.size(), m, var, std::sqrt(var), mean(mean_ess), mean(min_ess),
      seconds / o.repeat);
  if (o.check && fin.size() != ll.size()) return 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  const std::vector<std::int64_t> ys = o.data.empty() ? boarding_school : read_counts(o.data);
  for (std::int64_t y : ys)
    if (y > o.population) usage_error("a count exceeds --population");
  try {
    marg::set_backend(o.backend == "cpu"    ? marg::backend::cpu
                      : o.backend == "cuda" ? marg::backend::cuda
                                            : marg::backend::automatic);
    std::printf("SIR particle filter: %s, %d particles, %s, %s backend, seed %llu\n",
                o.marginalize ? "Δi, Δr marginalized (libmarg)" : "Δi, Δr sampled (bootstrap)",
                o.particles, o.use_float ? "float" : "double",
                marg::current_backend() == marg::backend::cuda ? "cuda" : "cpu",
                static_cast<unsigned long long>(o.seed));
    std::printf("data: %zu days%s, population %lld, %lld infected on day 0\n\n", ys.size(),
                o.data.empty() ? " (boarding-school influenza, 1978)" : "",
                static_cast<long long>(o.population), static_cast<long long>(o.initial));
    if (o.repeat > 0) return study(o, ys);
    const result r = run(o, ys, o.seed, !o.quiet);
    if (!o.out.empty()) write_csv(o.out, ys, r);
    return report(o, ys, r);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sir: %s\n", e.what());
    return 2;
  }
}
