// SIR epidemic particle filter that marginalizes the discrete sum of new
// infections and recoveries with libmarg. See README.md for the model.
//
//   sir [--particles B] [--backend cpu|cuda|auto] [--seed S] [--data FILE]
//       [--population N] [--initial I] [--out DIR] [--no-marginalize] [--no-move]
//       [--float] [--repeat R] [--groups G] [--timing] [--check] [--quiet]
//
// Exit status: 0 on success, 1 when --check finds a failure, 2 on bad arguments.
#include <marg/marg.hpp>
#include <marg/numeric/parallel.hpp>

#include <unistd.h>

#include <algorithm>
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
  int repeat = 0;       // > 0: the seed study
  int groups = 0;       // width groups per day; 0: B / 4096, at most 8
  bool timing = false;  // wall time per stage of the filter
  bool check = false;
  bool quiet = false;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(
      stderr,
      "sir: %s\n"
      "usage: sir [--particles B] [--backend cpu|cuda|auto] [--seed S] [--data FILE]\n"
      "           [--population N] [--initial I] [--out DIR] [--no-marginalize] [--no-move]\n"
      "           [--float] [--repeat R] [--groups G] [--timing] [--check] [--quiet]\n",
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
    else if (arg == "--groups")
      o.groups = static_cast<int>(parse_int(value(), "--groups", 1, 64));
    else if (arg == "--timing")
      o.timing = true;
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

/// One day of a particle's path: (s, i) before the transition, and Δi.
struct day_record {
  std::int64_t s_prev, i_prev, new_inf;
};

/// What a particle's path says about its parameters: the sufficient
/// statistics of gamma and rho (its days are in the shared `histories`).
struct path_stats {
  double recovered = 0, at_risk = 0;  // sum Δr, sum i_{t-1}
  double reported = 0, infected = 0;  // sum y_t, sum i_t
  // the move's log target at the particle's (lambda, delta) over its first
  // `target_days` days (none yet: the largest size_t), kept by the move: the
  // next day adds one day's terms
  double target = 0;
  std::size_t target_days = static_cast<std::size_t>(-1);
};

/// The day records of all particles: row b holds particle b's days (one
/// buffer, no allocation per particle or day).
struct histories {
  std::size_t capacity;
  std::vector<day_record> days;
  histories(int particles, std::size_t max_days)
      : capacity(max_days), days(static_cast<std::size_t>(particles) * max_days) {}
  day_record* of(int b) { return days.data() + static_cast<std::size_t>(b) * capacity; }
  const day_record* of(int b) const { return days.data() + static_cast<std::size_t>(b) * capacity; }
};

// l plus one day's terms of the log target (the additions in the order of
// log_target_lambda_delta, so that a target extended day by day is the same
// number as one computed at once)
double add_day(double l, double lambda, double delta, const day_record& d,
               std::int64_t population) {
  const double p = delta * -std::expm1(-lambda * static_cast<double>(d.i_prev) / population);
  const auto k = static_cast<double>(d.new_inf);
  const double n = static_cast<double>(d.s_prev);
  if (k > 0) l += k * std::log(p);
  if (n > k) l += (n - k) * std::log1p(-p);
  return l;
}

// log p(Δi_1..t | lambda, delta, path) + log prior(lambda, delta) + Jacobian
// of (log lambda, logit delta)
double log_target_lambda_delta(double lambda, double delta, const day_record* h, std::size_t days,
                               std::int64_t population) {
  double l = 2 * std::log(lambda) - lambda / 5 + 2 * (std::log(delta) + std::log1p(-delta));
  for (std::size_t t = 0; t < days; ++t) l = add_day(l, lambda, delta, h[t], population);
  return l;
}

// the move: a kernel that leaves p(theta | path, y) invariant, applied to
// every particle after each day (resample-move), so that the parameters do
// not collapse onto the few values drawn from the prior. gamma and rho are
// drawn exactly from their Beta posteriors; (log lambda, logit delta) take a
// few random-walk Metropolis steps.
void rejuvenate(params& th, path_stats& ps, const day_record* h, std::size_t days,
                std::int64_t population, rng& g) {
  th.gamma = beta_draw(g, 2 + ps.recovered, 2 + ps.at_risk - ps.recovered);
  th.rho = beta_draw(g, 2 + ps.reported, 2 + ps.infected - ps.reported);
  std::normal_distribution<double> step(0.0, 0.15);
  // the target at the current point: yesterday's kept value plus today's
  // terms when the move ran yesterday (lambda, delta change only here)
  double cur = ps.target_days + 1 == days
                   ? add_day(ps.target, th.lambda, th.delta, h[days - 1], population)
                   : log_target_lambda_delta(th.lambda, th.delta, h, days, population);
  for (int k = 0; k < 5; ++k) {
    const double lambda = th.lambda * std::exp(step(g));
    const double z = std::log(th.delta / (1 - th.delta)) + step(g);
    const double delta = 1 / (1 + std::exp(-z));
    if (!(delta > 0 && delta < 1 && lambda > 0 && std::isfinite(lambda))) continue;
    const double prop = log_target_lambda_delta(lambda, delta, h, days, population);
    if (std::log(std::generate_canonical<double, 53>(g)) < prop - cur)
      th.lambda = lambda, th.delta = delta, cur = prop;
  }
  ps.target = cur, ps.target_days = days;
}

// adds a day to a particle's statistics and its day record: before and after its transition
void record(path_stats& ps, day_record& day, const state& before, const state& after,
            std::int64_t y) {
  const std::int64_t di = before.s - after.s, dr = after.r - before.r;
  ps.recovered += static_cast<double>(dr);
  ps.at_risk += static_cast<double>(before.i);
  ps.reported += static_cast<double>(y);
  ps.infected += static_cast<double>(after.i);
  day = {before.s, before.i, di};
}

// Each row of Δi and Δr keeps all but 1e-17 of its binomial mass at each end
// (marg::binomial_batch): the supports, and so the convolutions, shrink from
// n + 1 values to a few standard deviations.
constexpr double binomial_tail = 1e-17;

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

// summarize() for the filtered i_t, integers in 0..population: the weights
// gathered per value, O(B + N) instead of a sort of the particles
summary summarize_infected(const std::vector<state>& xs, const std::vector<double>& w,
                           std::int64_t population) {
  std::vector<double> mass(static_cast<std::size_t>(population) + 1, 0.0);
  std::int64_t first = population, last = 0;
  double mean = 0;
  for (std::size_t b = 0; b < xs.size(); ++b) {
    mass[xs[b].i] += w[b];
    mean += w[b] * static_cast<double>(xs[b].i);
    first = std::min(first, xs[b].i), last = std::max(last, xs[b].i);
  }
  summary s{mean, static_cast<double>(first), static_cast<double>(first),
            static_cast<double>(last)};
  double c = 0;
  bool lo = false, med = false, hi = false;
  for (std::int64_t v = first; v <= last; ++v) {
    c += mass[v];
    const auto x = static_cast<double>(v);
    if (!lo && c >= 0.025) s.lo = x, lo = true;
    if (!med && c >= 0.5) s.median = x, med = true;
    if (!hi && c >= 0.975) s.hi = x, hi = true;
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

constexpr int particle_chunks = 64;

// Runs fn(begin, end) over particles [0, B) cut into a fixed number of chunks
// on marg::cpu_threads() host threads (libmarg's persistent workers: no
// thread is started per call): the chunks never depend on the thread count.
template <class F>
void for_ranges(int B, F&& fn) {
  const int chunks = std::min(particle_chunks, std::max(B, 1));
  const int threads = std::clamp(marg::cpu_threads(), 1, std::max(B / 256, 1));
  marg::parallel_chunks(chunks, threads, [&](std::int64_t c) {
    fn(static_cast<int>(std::int64_t{B} * c / chunks),
       static_cast<int>(std::int64_t{B} * (c + 1) / chunks));
  });
}

// for_ranges with a generator per chunk, fn(begin, end, g), each seeded from
// `g` (which advances by 64 draws): the results do not depend on the thread count.
template <class F>
void for_chunks(int B, rng& g, F&& fn) {
  std::vector<std::uint64_t> seeds(particle_chunks);
  for (auto& s : seeds) s = g();
  const int chunks = particle_chunks;
  const int threads = std::clamp(marg::cpu_threads(), 1, std::max(B / 256, 1));
  marg::parallel_chunks(chunks, threads, [&](std::int64_t c) {
    rng cg(seeds[c]);
    fn(static_cast<int>(std::int64_t{B} * c / chunks),
       static_cast<int>(std::int64_t{B} * (c + 1) / chunks), cg);
  });
}

// A sum over particles in the fixed chunks of for_ranges, the partial sums
// added in chunk order: the same value for any thread count.
template <class F>
double sum_over(int B, F&& term) {
  const int chunks = std::min(particle_chunks, std::max(B, 1));
  std::vector<double> part(static_cast<std::size_t>(chunks), 0.0);
  const int threads = std::clamp(marg::cpu_threads(), 1, std::max(B / 256, 1));
  marg::parallel_chunks(chunks, threads, [&](std::int64_t c) {
    double s = 0;
    for (auto b = static_cast<int>(std::int64_t{B} * c / chunks),
              e = static_cast<int>(std::int64_t{B} * (c + 1) / chunks);
         b < e; ++b)
      s += term(b);
    part[static_cast<std::size_t>(c)] = s;
  });
  return std::accumulate(part.begin(), part.end(), 0.0);
}

// log sum_b exp(v_b), the sum in the fixed chunks (any thread count: one value)
double log_sum_exp(const std::vector<double>& v) {
  const double m = *std::max_element(v.begin(), v.end());
  if (!std::isfinite(m)) return m;
  return m +
         std::log(sum_over(static_cast<int>(v.size()), [&](int b) { return std::exp(v[b] - m); }));
}

// normalized weights from log weights
std::vector<double> normalize(const std::vector<double>& logw) {
  const double z = log_sum_exp(logw);
  std::vector<double> w(logw.size());
  for_ranges(static_cast<int>(w.size()), [&](int b0, int b1) {
    for (int b = b0; b < b1; ++b) w[b] = std::exp(logw[b] - z);
  });
  return w;
}

double ess(const std::vector<double>& w) {
  const double s2 = sum_over(static_cast<int>(w.size()), [&](int b) { return w[b] * w[b]; });
  return s2 > 0 ? 1.0 / s2 : 0.0;
}

// Wall time per stage of the filter (--timing): each lap() adds the time
// since the previous one to a stage; read after the run.
enum stage { binomials, likelihoods, draws, bookkeeping, resampling, moves, stages };
const char* const stage_names[stages] = {"pmfs of Δi, -Δr (binomial_batch, negation, grouping)",
                                         "likelihood rows",
                                         "sample_given_evidence (convolution, weights, draws)",
                                         "weights, records, summaries",
                                         "resampling",
                                         "moves"};
struct stage_clock {
  double seconds[stages] = {};
  clock_type::time_point last = clock_type::now();
  void lap(stage s) {
    const auto now = clock_type::now();
    seconds[s] += std::chrono::duration<double>(now - last).count();
    last = now;
  }
};
stage_clock stage_times;  // one filter runs at a time

/// What one run of the filter produces.
struct result {
  double log_likelihood = 0;
  std::vector<double> ess;        // per day, after weighting
  std::vector<summary> infected;  // filtered i_t per day
  std::vector<params> theta;      // final particles
  std::vector<double> weights;    // their normalized weights
  double seconds = 0;
  stage_clock stages;  // wall time per stage
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

// The particles in at most `groups` sets of similar support width, each set
// to be padded only to its own longest row (the batched operations pad every
// row to the longest of the batch). A counting sort on the summed standard
// deviations of Δi and Δr, cut into sets of equal size: O(B), deterministic.
std::vector<std::vector<int>> group_by_width(const std::vector<double>& width, int groups) {
  const int B = static_cast<int>(width.size());
  const auto key = [&](int b) { return static_cast<std::size_t>(std::min(width[b], 1e6)); };
  std::size_t top = 0;
  for (int b = 0; b < B; ++b) top = std::max(top, key(b));
  std::vector<int> start(top + 2, 0), order(B);
  for (int b = 0; b < B; ++b) ++start[key(b) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  for (int b = 0; b < B; ++b) order[start[key(b)]++] = b;
  std::vector<std::vector<int>> r(groups);
  for (int k = 0; k < groups; ++k)
    r[k].assign(order.begin() + std::int64_t{B} * k / groups,
                order.begin() + std::int64_t{B} * (k + 1) / groups);
  return r;
}

// One day of the marginalized filter for a set of particles. With X = Δi and
// Y = Δr independent given the particle's state, i_t = i + X - Y; the soft
// evidence L(i_t) = P(y | i_t) over the support of X + (-Y) gives each
// particle's weight and an exact joint draw of (X, -Y) from its posterior in
// one batched call (marg::sample_given_evidence: the law of X - Y by one
// batched convolution, i_t drawn from it times L, then (X, -Y) given i_t).
template <class T>
void step_group(const std::vector<int>& members, std::vector<state>& xs,
                const std::vector<params>& th, std::int64_t population, std::int64_t y,
                std::vector<double>& logw_inc, rng& g) {
  const int B = static_cast<int>(members.size());
  std::vector<std::int64_t> n_inf(B), n_rec(B);
  std::vector<double> p_inf(B), p_rec(B);
  for_ranges(B, [&](int j0, int j1) {
    for (int j = j0; j < j1; ++j) {
      const int b = members[j];
      n_inf[j] = xs[b].s, p_inf[j] = infection_prob(th[b], xs[b].i, population);
      n_rec[j] = xs[b].i, p_rec[j] = th[b].gamma;
    }
  });
  const auto X = marg::binomial_batch<T>(n_inf, p_inf, binomial_tail);
  const auto negY = -marg::binomial_batch<T>(n_rec, p_rec, binomial_tail);
  stage_times.lap(binomials);

  // L_b(i_t) = P(y | i_t, rho_b) over i_t = i_{t-1} + (the support of X + (-Y)),
  // 0 above the population, each row scaled by its largest value (the scale
  // is added back into the log likelihood): built where the rows live (on
  // the GPU with the CUDA backend)
  std::vector<std::int64_t> offset(B);
  std::vector<double> rho(B);
  for_ranges(B, [&](int j0, int j1) {
    for (int j = j0; j < j1; ++j) offset[j] = xs[members[j]].i, rho[j] = th[members[j]].rho;
  });
  const auto like = marg::binomial_count_evidence(X, negY, offset, {y}, rho, population);
  stage_times.lap(likelihoods);
  const auto draw = marg::sample_given_evidence(X, negY, like, g);
  for_ranges(B, [&](int j0, int j1) {
    for (int j = j0; j < j1; ++j) {
      const int b = members[j];
      logw_inc[b] = static_cast<double>(draw.log_likelihood[j]);
      if (!std::isfinite(logw_inc[b])) {
        logw_inc[b] = -std::numeric_limits<double>::infinity();
        continue;  // weight 0 from now on; the state is never read again
      }
      const std::int64_t di = draw.first[j], dr = -draw.second[j];
      xs[b] = {xs[b].s - di, xs[b].i + di - dr, xs[b].r + dr};
    }
  });
  stage_times.lap(draws);
}

// One day of the marginalized filter for all particles: one batched step per
// set of particles of similar support width (one set below 8,192 particles,
// or `--groups`; from two sets on, a particle gets the same uniforms for any
// number of sets).
template <class T>
void step_marginalized(std::vector<state>& xs, const std::vector<params>& th,
                       std::int64_t population, std::int64_t y, std::vector<double>& logw_inc,
                       int groups_wanted, rng& g) {
  const int B = static_cast<int>(xs.size());
  const int groups =
      std::min(groups_wanted > 0 ? groups_wanted : std::clamp(B / 4096, 1, 8), std::max(B, 1));
  std::vector<double> width(B);
  if (groups > 1)
    for_ranges(B, [&](int b0, int b1) {
      for (int b = b0; b < b1; ++b) {
        const double p = infection_prob(th[b], xs[b].i, population), q = th[b].gamma;
        width[b] = std::sqrt(static_cast<double>(xs[b].s) * p * (1 - p)) +
                   std::sqrt(static_cast<double>(xs[b].i) * q * (1 - q));
      }
    });
  for (const auto& members : group_by_width(width, groups))
    step_group<T>(members, xs, th, population, y, logw_inc, g);
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
  for_chunks(B, g, [&](int b0, int b1, rng& g) {
    for (int b = b0; b < b1; ++b) th[b] = prior_draw(g);
  });
  std::vector<state> xs(B, state{o.population - o.initial, o.initial, 0}), prev(B);
  std::vector<double> logw(B, 0.0), inc(B);
  std::vector<path_stats> paths(B);
  histories hist(B, ys.size());
  // the resampling targets: allocated once, reused
  std::vector<state> xs2(B);
  std::vector<params> th2(B);
  std::vector<path_stats> paths2(B);
  histories hist2(B, ys.size());
  result res;
  progress bar(show_progress);
  stage_times = stage_clock();

  for (std::size_t t = 0; t < ys.size(); ++t) {
    for_ranges(
        B, [&](int b0, int b1) { std::copy(xs.begin() + b0, xs.begin() + b1, prev.begin() + b0); });
    stage_times.lap(bookkeeping);
    if (o.marginalize)
      step_marginalized<T>(xs, th, o.population, ys[t], inc, o.groups, g);
    else
      step_sampled(xs, th, o.population, ys[t], lf, inc, g), stage_times.lap(draws);
    // log p(y_t | y_1..t-1) ≈ log sum_b W_b w_b with W the normalized previous weights
    const double before = log_sum_exp(logw);
    for_ranges(B, [&](int b0, int b1) {
      for (int b = b0; b < b1; ++b) logw[b] += inc[b];
    });
    const double after = log_sum_exp(logw);
    res.log_likelihood += after - before;
    if (!std::isfinite(after)) {  // every particle is incompatible with y_t
      res.ess.push_back(0);
      res.infected.push_back({std::nan(""), std::nan(""), std::nan(""), std::nan("")});
      break;
    }
    for_ranges(B, [&](int b0, int b1) {
      for (int b = b0; b < b1; ++b)
        if (std::isfinite(logw[b])) record(paths[b], hist.of(b)[t], prev[b], xs[b], ys[t]);
    });
    const std::vector<double> w = normalize(logw);
    const double e = ess(w);
    res.ess.push_back(e);
    res.infected.push_back(summarize_infected(xs, w, o.population));
    bar.show(t + 1, ys.size(), e);
    stage_times.lap(bookkeeping);

    if (t + 1 < ys.size() && e < 0.5 * B) {  // adaptive resampling
      const std::vector<int> a = resample(w, g);
      for_ranges(B, [&](int b0, int b1) {
        for (int b = b0; b < b1; ++b) {
          xs2[b] = xs[a[b]], th2[b] = th[a[b]], paths2[b] = paths[a[b]];
          std::copy(hist.of(a[b]), hist.of(a[b]) + t + 1, hist2.of(b));
        }
      });
      xs.swap(xs2);
      th.swap(th2);
      paths.swap(paths2);
      std::swap(hist, hist2);
      std::fill(logw.begin(), logw.end(), 0.0);
      stage_times.lap(resampling);
    }
    if (o.rejuvenate)
      for_chunks(B, g, [&](int b0, int b1, rng& g) {
        for (int b = b0; b < b1; ++b)
          if (std::isfinite(logw[b]))
            rejuvenate(th[b], paths[b], hist.of(b), t + 1, o.population, g);
      });
    stage_times.lap(moves);
  }
  bar.done();
  res.stages = stage_times;
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
  if (o.timing)
    for (int s = 0; s < stages; ++s)
      std::printf("  %8.3f s  %s\n", r.stages.seconds[s], stage_names[s]);
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
