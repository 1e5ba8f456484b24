// SIR epidemic particle filter that marginalizes the discrete sum of new
// infections and recoveries with libmarg. See README.md for the model;
// `sir --help` lists every option with its default.
//
// Exit status: 0 on success, 1 when --check finds a failure, 2 on bad
// arguments, environment or data, 3 when an output cannot be written, 4 when
// the filter collapses (no particle can explain a count).
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
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "example_cli.hpp"
#include "ranks.hpp"

namespace {

using namespace marg_example;
using clock_type = std::chrono::steady_clock;
using sir_ranks::fixed;
using sir_ranks::from_fixed;
using sir_ranks::to_fixed;

// the processes of the run (one, or the ranks of an MPI job): set in main
const sir_ranks::ranks* world = nullptr;

// splitmix64's output function of x
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// What a particle's random numbers are for: each use has its own stream.
enum class stream : std::uint64_t { prior = 1, draw, sample, move, resample, replicate };

/// Counter-based random numbers: splitmix64 started at a hash of (seed,
/// stream, day, particle), so a particle's draws depend on its global index
/// alone, not on the rank, thread or chunk that holds it: the filter is the
/// same for any number of ranks and threads.
struct rng {
  using result_type = std::uint64_t;
  std::uint64_t state;
  rng(std::uint64_t seed, stream s, std::uint64_t day, std::uint64_t particle)
      : state(mix64(mix64(mix64(mix64(seed) ^ static_cast<std::uint64_t>(s)) ^ day) ^ particle)) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() {
    const std::uint64_t x = state;
    state += 0x9e3779b97f4a7c15ULL;
    return mix64(x);
  }
};

/// A generator that hands out given 64-bit values in order (the uniforms of
/// a batch of particles, each from its own rng).
struct replay {
  using result_type = std::uint64_t;
  const std::uint64_t* next;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return *next++; }
};

// the 1978 boarding-school influenza outbreak: boys confined to bed, days 1..14
const std::vector<std::int64_t> boarding_school = {3,   8,   26,  76, 225, 298, 258,
                                                   233, 189, 128, 68, 29,  14,  4};

// the largest number of particles per replicate times replicates the program
// accepts: about 8 GB of particle state and histories on the default data
constexpr std::int64_t max_total_particles = 20000000;

struct options {
  int particles = 5000;  // per replicate
  int replicates = 8;    // independent filters, for the Monte Carlo standard errors
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

[[noreturn]] void input_error(const std::string& what) {
  std::fprintf(stderr, "sir: %s\n", what.c_str());
  std::exit(exit_bad_input);
}

const char* const data_format =
    "--data FILE: text, one day per line, the day's count (a non-negative integer) as the last "
    "field of the line (fields separated by ',', ';' or tabs); a first line without digits "
    "is a header, blank lines and lines starting with '#' are skipped; any other line is "
    "an error.";

options parse(int argc, char** argv) {
  options o;
  CLI::App app(
      "SIR epidemic particle filter; new infections and recoveries marginalized with libmarg.\n" +
          std::string(data_format) +
          "\nExit status: 0 success, 1 --check failed, 2 bad arguments or data, 3 an output "
          "could not be written, 4 the filter collapsed.",
      "sir");
  standard_options(app);
  app.add_option("--particles", o.particles, "particles per replicate")
      ->check(CLI::Range(1, 100000000));
  app.add_option("--replicates", o.replicates,
                 "independent filters whose spread gives the Monte Carlo standard errors")
      ->check(CLI::Range(1, 1000));
  app.add_option("--backend", o.backend, "libmarg backend")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  app.add_option("--seed", o.seed, "random seed");
  app.add_option("--data", o.data, "CSV of daily counts (default: boarding-school data, 1978)")
      ->check(CLI::ExistingFile);
  app.add_option("--population", o.population, "population size")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}));
  app.add_option("--initial", o.initial, "infected on day 0")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}));
  app.add_option("--out", o.out,
                 "folder for filter.csv, params.csv, summary.csv (checked before the run)");
  bool no_marginalize = false, no_move = false;
  app.add_flag("--no-marginalize", no_marginalize, "sample Δi, Δr (bootstrap filter)");
  app.add_flag("--no-move", no_move, "no resample-move step on the parameters");
  app.add_flag("--float", o.use_float, "float pmfs instead of double");
  app.add_option("--repeat", o.repeat,
                 "seed study: R seeds S..S+R-1, one filter of B particles each (0: none)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--groups", o.groups, "width groups per day (0: one per 4,096 particles, 1..8)")
      ->check(CLI::Range(0, 64));
  app.add_flag("--timing", o.timing, "wall time per stage");
  app.add_flag("--check", o.check, "exit 1 unless the estimates pass sanity checks");
  app.add_flag("--quiet", o.quiet, "no progress line on stderr");
  parse_or_exit(app, argc, argv);
  o.marginalize = !no_marginalize;
  o.rejuvenate = !no_move;
  if (o.initial > o.population) input_error("--initial must not exceed --population");
  if (o.repeat > 0 && !o.out.empty())
    input_error("--out writes one run's results: not with --repeat");
  // the cap is per process: each rank holds its share of the particles
  const std::int64_t per_rank = (std::int64_t{o.particles} + world->size() - 1) / world->size();
  if (per_rank * o.replicates > max_total_particles)
    input_error("--particles " + std::to_string(o.particles) + " times --replicates " +
                std::to_string(o.replicates) +
                (world->size() > 1 ? " over " + std::to_string(world->size()) + " ranks" : "") +
                " is above the cap of " + std::to_string(max_total_particles) +
                " particles in all per process");
  if (o.particles < world->size())
    input_error("--particles " + std::to_string(o.particles) + " is below the number of ranks (" +
                std::to_string(world->size()) + ")");
  return o;
}

// Reads the daily counts strictly (data_format): a line that is neither a
// header, blank nor a comment, and not a valid count, is an error naming the
// file, the line and its text; a file holding NUL or other control bytes is
// rejected as binary.
std::vector<std::int64_t> read_counts(const std::string& path, std::int64_t population) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error("cannot read --data '" + path + "': " + std::strerror(errno));
  std::vector<std::int64_t> counts;
  std::string line;
  std::size_t number = 0;
  bool seen_content = false;
  const auto fail = [&](const std::string& why, const std::string& text) {
    std::string shown = text.size() > 60 ? text.substr(0, 60) + "..." : text;
    input_error("--data '" + path + "' line " + std::to_string(number) + ": " + why + ": '" +
                shown + "'\n" + data_format);
  };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (const char c : line) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f)
        input_error("--data '" + path + "' line " + std::to_string(number) + ": a control byte (" +
                    std::to_string(u) + "): the file looks binary, not a text file of counts\n" +
                    data_format);
    }
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto sep = line.find_last_of(",;\t");
    std::string field = sep == std::string::npos ? line : line.substr(sep + 1);
    field.erase(0, field.find_first_not_of(" \t"));
    field.erase(field.find_last_not_of(" \t") + 1);
    const bool header = !seen_content;
    seen_content = true;
    const bool digits = !field.empty() && field.size() <= 18 &&
                        field.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) {
      // a header is the first line that is not a count and holds no digit-only field
      if (header && line.find_first_of("0123456789") == std::string::npos) continue;
      fail(field.empty() ? "no count in the last field"
                         : "the last field '" + field + "' is not a non-negative integer",
           line);
    }
    const std::int64_t v = std::stoll(field);
    if (v > population)
      fail("the count " + field + " exceeds --population " + std::to_string(population), line);
    counts.push_back(v);
  }
  if (in.bad()) input_error("cannot read --data '" + path + "': " + std::strerror(errno));
  if (counts.empty()) input_error("--data '" + path + "' holds no counts\n" + data_format);
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

/// The filtered law of i_t on one day: weights gathered per value over
/// [first, first + mass.size()).
struct day_mass {
  std::int64_t first = 0;
  std::vector<double> mass;
};

// summarize() for a law over consecutive integers: O(support), no sort
summary summarize_mass(const day_mass& d) {
  const auto x = [&](std::size_t k) {
    return static_cast<double>(d.first) + static_cast<double>(k);
  };
  double total = 0, mean = 0;
  for (std::size_t k = 0; k < d.mass.size(); ++k) total += d.mass[k], mean += d.mass[k] * x(k);
  summary s{mean / total, x(0), x(0), x(d.mass.size() - 1)};
  double c = 0;
  bool lo = false, med = false, hi = false;
  for (std::size_t k = 0; k < d.mass.size(); ++k) {
    c += d.mass[k] / total;
    if (!lo && c >= 0.025) s.lo = x(k), lo = true;
    if (!med && c >= 0.5) s.median = x(k), med = true;
    if (!hi && c >= 0.975) s.hi = x(k), hi = true;
  }
  return s;
}

// ---------------------------------------------------------------- the filter

constexpr int particle_chunks = 64;

// Runs fn(begin, end) over particles [0, B) cut into a fixed number of chunks
// on marg::cpu_threads() host threads (libmarg's persistent workers: no
// thread is started per call).
template <class F>
void for_ranges(int B, F&& fn) {
  const int chunks = std::min(particle_chunks, std::max(B, 1));
  const int threads = std::clamp(marg::cpu_threads(), 1, std::max(B / 256, 1));
  marg::parallel_chunks(chunks, threads, [&](std::int64_t c) {
    fn(static_cast<int>(std::int64_t{B} * c / chunks),
       static_cast<int>(std::int64_t{B} * (c + 1) / chunks));
  });
}

// The sum over all ranks' particles of term(b) (values in [0, 1], b over
// this rank's [0, n)), in fixed point: the same number for any split of the
// particles over ranks and threads.
template <class F>
fixed sum_all(int n, F&& term) {
  const int chunks = std::min(particle_chunks, std::max(n, 1));
  std::vector<fixed> part(static_cast<std::size_t>(chunks), 0);
  const int threads = std::clamp(marg::cpu_threads(), 1, std::max(n / 256, 1));
  marg::parallel_chunks(chunks, threads, [&](std::int64_t c) {
    fixed s = 0;
    for (auto b = static_cast<int>(std::int64_t{n} * c / chunks),
              e = static_cast<int>(std::int64_t{n} * (c + 1) / chunks);
         b < e; ++b)
      s += to_fixed(term(b));
    part[static_cast<std::size_t>(c)] = s;
  });
  fixed s = 0;
  for (fixed x : part) s += x;
  return world->sum(s);
}

// log sum_b exp(v_b) over all ranks' particles
double log_sum_exp(const std::vector<double>& v) {
  const double m = world->max(*std::max_element(v.begin(), v.end()));
  if (!std::isfinite(m)) return m;
  return m + std::log(from_fixed(
                 sum_all(static_cast<int>(v.size()), [&](int b) { return std::exp(v[b] - m); })));
}

// normalized weights (over all ranks) from log weights
std::vector<double> normalize(const std::vector<double>& logw) {
  const double z = log_sum_exp(logw);
  std::vector<double> w(logw.size());
  for_ranges(static_cast<int>(w.size()), [&](int b0, int b1) {
    for (int b = b0; b < b1; ++b) w[b] = std::exp(logw[b] - z);
  });
  return w;
}

double ess(const std::vector<double>& w) {
  const double s2 =
      from_fixed(sum_all(static_cast<int>(w.size()), [&](int b) { return w[b] * w[b]; }));
  return s2 > 0 ? 1.0 / s2 : 0.0;
}

// a double's place in the order of doubles as an unsigned integer
std::uint64_t order_key(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u >> 63 ? ~u : u | (std::uint64_t{1} << 63);
}
double from_order_key(std::uint64_t k) {
  const std::uint64_t u = k >> 63 ? k & ~(std::uint64_t{1} << 63) : ~k;
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// Weighted mean and equal-tailed 95% interval of values x with weights w
// (summing to 1) over all ranks: a quantile q is the smallest x whose
// cumulative weight reaches q, found by bisection on the order of doubles
// (one sum over the ranks per step), never gathering the values.
summary summarize(const std::vector<double>& x, const std::vector<double>& w) {
  const std::size_t n = x.size();
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<std::uint64_t> keys(n);
  std::vector<fixed> below(n + 1, 0);  // weight of the first k values in order
  double top = 0;
  for (std::size_t k = 0; k < n; ++k) {
    keys[k] = order_key(x[idx[k]]);
    below[k + 1] = below[k] + to_fixed(w[idx[k]]);
    top = std::max(top, std::abs(x[k]));
  }
  const fixed total = world->sum(below[n]);
  const double xmin = -world->max(-x[idx.front()]), xmax = world->max(x[idx.back()]);
  // the mean: terms w x / 2^e in [-1, 1]
  const int e = std::ilogb(std::max(world->max(top), 1e-300)) + 1;
  const double mean = std::ldexp(
      from_fixed(sum_all(static_cast<int>(n), [&](int b) { return std::ldexp(w[b] * x[b], -e); })),
      e);
  const double q[3] = {0.025, 0.5, 0.975};
  std::uint64_t lo[3], hi[3];
  fixed need[3];
  for (int j = 0; j < 3; ++j)
    lo[j] = order_key(xmin), hi[j] = order_key(xmax), need[j] = sir_ranks::fraction_of(total, q[j]);
  while (lo[0] < hi[0] || lo[1] < hi[1] || lo[2] < hi[2]) {
    std::vector<fixed> f(3);
    std::uint64_t mid[3];
    for (int j = 0; j < 3; ++j) {
      mid[j] = lo[j] + (hi[j] - lo[j]) / 2;
      f[j] = below[std::upper_bound(keys.begin(), keys.end(), mid[j]) - keys.begin()];
    }
    world->sum(f);
    for (int j = 0; j < 3; ++j)
      if (lo[j] < hi[j]) (f[j] >= need[j] ? hi[j] = mid[j] : lo[j] = mid[j] + 1);
  }
  return {mean, from_order_key(lo[0]), from_order_key(lo[1]), from_order_key(lo[2])};
}

// The filtered law of i_t over all ranks' particles: their weights summed per value
day_mass infected_mass(const std::vector<state>& xs, const std::vector<double>& w) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = 0;
  for (const state& x : xs) first = std::min(first, x.i), last = std::max(last, x.i);
  first = world->min(first), last = world->max(last);
  std::vector<fixed> mass(static_cast<std::size_t>(last - first + 1), 0);
  for (std::size_t b = 0; b < xs.size(); ++b) mass[xs[b].i - first] += to_fixed(w[b]);
  world->sum(mass);
  day_mass d{first, std::vector<double>(mass.size())};
  for (std::size_t k = 0; k < mass.size(); ++k) d.mass[k] = from_fixed(mass[k]);
  return d;
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
  std::vector<double> ess;                // per day, after weighting
  std::vector<day_mass> infected;         // filtered law of i_t per day
  std::vector<double> log_likelihood_to;  // log p(y_1..t) estimate, per day
  std::vector<params> theta;              // final particles
  std::vector<double> weights;            // their normalized weights
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

/// The random streams of one day of one filter: particle b of this rank is
/// particle first + b of all.
struct day_streams {
  std::uint64_t seed;
  std::size_t day;
  std::int64_t first;
  rng of(stream s, int b) const { return rng(seed, s, day, static_cast<std::uint64_t>(first + b)); }
};

// One day of the marginalized filter for a set of particles. With X = Δi and
// Y = Δr independent given the particle's state, i_t = i + X - Y; the soft
// evidence L(i_t) = P(y | i_t) over the support of X + (-Y) gives each
// particle's weight and an exact joint draw of (X, -Y) from its posterior in
// one batched call (marg::sample_given_evidence: the law of X - Y by one
// batched convolution, i_t drawn from it times L, then (X, -Y) given i_t).
template <class T>
void step_group(const std::vector<int>& members, std::vector<state>& xs,
                const std::vector<params>& th, std::int64_t population, std::int64_t y,
                std::vector<double>& logw_inc, const day_streams& r) {
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
  // two uniforms per particle from its own stream, in the order of the rows
  std::vector<std::uint64_t> bits(2 * static_cast<std::size_t>(B));
  for_ranges(B, [&](int j0, int j1) {
    for (int j = j0; j < j1; ++j) {
      rng g = r.of(stream::draw, members[j]);
      bits[2 * j] = g(), bits[2 * j + 1] = g();
    }
  });
  replay g{bits.data()};
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
// or `--groups`; a particle gets the same uniforms for any number of sets).
template <class T>
void step_marginalized(std::vector<state>& xs, const std::vector<params>& th,
                       std::int64_t population, std::int64_t y, std::vector<double>& logw_inc,
                       int groups_wanted, const day_streams& r) {
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
    step_group<T>(members, xs, th, population, y, logw_inc, r);
}

// One day of the plain bootstrap filter: Δi, Δr sampled, weight P(y | i_t).
void step_sampled(std::vector<state>& xs, const std::vector<params>& th, std::int64_t population,
                  std::int64_t y, const log_factorials& lf, std::vector<double>& logw_inc,
                  const day_streams& r) {
  for_ranges(static_cast<int>(xs.size()), [&](int b0, int b1) {
    for (int b = b0; b < b1; ++b) {
      rng g = r.of(stream::sample, b);
      const double pi = infection_prob(th[b], xs[b].i, population);
      const std::int64_t di = std::binomial_distribution<std::int64_t>(xs[b].s, pi)(g);
      const std::int64_t dr = std::binomial_distribution<std::int64_t>(xs[b].i, th[b].gamma)(g);
      xs[b] = {xs[b].s - di, xs[b].i + di - dr, xs[b].r + dr};
      logw_inc[b] = log_obs(lf, y, xs[b].i, th[b].rho);
    }
  });
}

// The filter broke down on a day: no particle can explain the day's count
// (every weight zero) or the estimate is not a number.
struct filter_collapse : std::runtime_error {
  filter_collapse(std::size_t day, std::int64_t y, int particles, bool not_a_number)
      : std::runtime_error(
            "the filter collapsed on day " + std::to_string(day + 1) + " (count " +
            std::to_string(y) + "): " +
            (not_a_number ? std::string("the weights are not finite numbers")
                          : std::string("no particle can explain the count (every weight is 0)")) +
            ". Likely causes: too few particles for that observation (--particles " +
            std::to_string(particles) +
            "; try 10x more), a count the model cannot produce (above the infected of every "
            "particle, e.g. a wrong --population or --initial), or an error in the data.") {}
};

/// One particle in the resampling exchange (its day records follow it).
struct particle_head {
  std::int64_t copies;  // its offspring on the receiving rank
  state x;
  params th;
  path_stats ps;
};

// Systematic resampling over all ranks' particles: slot k of B takes the
// particle whose cumulative weight (over all ranks, in fixed point: the same
// integers on every rank) first exceeds (u + k) / B of the total; each
// particle goes once to each rank holding some of its slots, with its number
// of copies there. Afterwards this rank holds slots [first, first + n) in
// order: the same particles for any number of ranks.
void resample_all(int B, double u, std::size_t days, const std::vector<double>& w,
                  std::vector<state>& xs, std::vector<params>& th, std::vector<path_stats>& paths,
                  histories& hist) {
  const int n = static_cast<int>(xs.size()), ranks = world->size();
  std::vector<fixed> cum(static_cast<std::size_t>(n));
  fixed c = 0;
  for (int b = 0; b < n; ++b) cum[b] = c += to_fixed(w[b]);
  const fixed before = world->sum_before(c), total = world->sum(c);
  const auto target = [&](std::int64_t k) {
    return sir_ranks::fraction_of(total, (u + static_cast<double>(k)) / B);
  };
  // this rank's first slot: the first whose target reaches the weight before it
  std::int64_t lo = 0, hi = B;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (target(mid) >= before)
      hi = mid;
    else
      lo = mid + 1;
  }
  // particle b takes slots [end[b - 1], end[b]) (the last particle of all: up to B)
  std::vector<std::int64_t> end(static_cast<std::size_t>(n));
  std::int64_t k = lo;
  for (int b = 0; b < n; ++b) {
    while (k < B && target(k) < before + cum[b]) ++k;
    end[b] = k;
  }
  if (world->rank() == ranks - 1) end[n - 1] = B;
  struct piece {
    int b;
    std::int64_t copies;
  };
  std::vector<piece> pieces;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks), 0);
  int d = 0;
  for (int b = 0; b < n; ++b)
    for (std::int64_t s = b ? end[b - 1] : lo; s < end[b];) {
      while (world->first(B, d + 1) <= s) ++d;
      const std::int64_t stop = std::min(end[b], world->first(B, d + 1));
      pieces.push_back({b, stop - s});
      ++counts[d];
      s = stop;
    }
  const std::size_t rec = sizeof(particle_head) + days * sizeof(day_record);
  std::vector<char> send(pieces.size() * rec);
  for_ranges(static_cast<int>(pieces.size()), [&](int p0, int p1) {
    for (int p = p0; p < p1; ++p) {
      const int b = pieces[p].b;
      const particle_head h{pieces[p].copies, xs[b], th[b], paths[b]};
      std::memcpy(send.data() + p * rec, &h, sizeof h);
      std::memcpy(send.data() + p * rec + sizeof h, hist.of(b), days * sizeof(day_record));
    }
  });
  const std::vector<char> recv = world->exchange(send, counts, rec);
  const int received = static_cast<int>(recv.size() / rec);
  std::vector<std::int64_t> at(static_cast<std::size_t>(received) + 1, 0);
  for (int p = 0; p < received; ++p) {
    particle_head h;
    std::memcpy(&h, recv.data() + p * rec, sizeof h);
    at[p + 1] = at[p] + h.copies;
  }
  if (at.back() != n) throw std::logic_error("resampling: slots lost in the exchange");
  for_ranges(received, [&](int p0, int p1) {
    for (int p = p0; p < p1; ++p) {
      particle_head h;
      std::memcpy(&h, recv.data() + p * rec, sizeof h);
      for (std::int64_t b = at[p]; b < at[p + 1]; ++b) {
        xs[b] = h.x, th[b] = h.th, paths[b] = h.ps;
        std::memcpy(hist.of(static_cast<int>(b)), recv.data() + p * rec + sizeof h,
                    days * sizeof(day_record));
      }
    }
  });
}

// One filter of o.particles particles over all ranks, this rank holding
// particles [first, first + n) of them.
template <class T>
result run_filter(const options& o, const std::vector<std::int64_t>& ys, std::uint64_t seed,
                  bool show_progress) {
  const auto t0 = clock_type::now();
  const int B = o.particles;
  const std::int64_t first = world->first(B, world->rank());
  const int n = static_cast<int>(world->first(B, world->rank() + 1) - first);
  const log_factorials lf(o.population);
  std::vector<params> th(n);
  for_ranges(n, [&](int b0, int b1) {
    for (int b = b0; b < b1; ++b) {
      rng g = day_streams{seed, 0, first}.of(stream::prior, b);
      th[b] = prior_draw(g);
    }
  });
  std::vector<state> xs(n, state{o.population - o.initial, o.initial, 0}), prev(n);
  std::vector<double> logw(n, 0.0), inc(n);
  std::vector<path_stats> paths(n);
  histories hist(n, ys.size());
  result res;
  progress bar(show_progress && world->root());
  stage_times = stage_clock();

  for (std::size_t t = 0; t < ys.size(); ++t) {
    const day_streams streams{seed, t, first};
    for_ranges(
        n, [&](int b0, int b1) { std::copy(xs.begin() + b0, xs.begin() + b1, prev.begin() + b0); });
    stage_times.lap(bookkeeping);
    if (o.marginalize)
      step_marginalized<T>(xs, th, o.population, ys[t], inc, o.groups, streams);
    else
      step_sampled(xs, th, o.population, ys[t], lf, inc, streams), stage_times.lap(draws);
    // log p(y_t | y_1..t-1) ≈ log sum_b W_b w_b with W the normalized previous weights
    const double before = log_sum_exp(logw);
    for_ranges(n, [&](int b0, int b1) {
      for (int b = b0; b < b1; ++b) logw[b] += inc[b];
    });
    const double after = log_sum_exp(logw);
    res.log_likelihood += after - before;
    if (!std::isfinite(after) || !std::isfinite(res.log_likelihood))
      throw filter_collapse(t, ys[t], B, std::isnan(after));
    for_ranges(n, [&](int b0, int b1) {
      for (int b = b0; b < b1; ++b)
        if (std::isfinite(logw[b])) record(paths[b], hist.of(b)[t], prev[b], xs[b], ys[t]);
    });
    const std::vector<double> w = normalize(logw);
    const double e = ess(w);
    if (!(e >= 1 - 1e-9)) throw filter_collapse(t, ys[t], B, true);
    res.ess.push_back(e);
    res.infected.push_back(infected_mass(xs, w));
    res.log_likelihood_to.push_back(res.log_likelihood);
    bar.show(t + 1, ys.size(), e);
    stage_times.lap(bookkeeping);

    if (t + 1 < ys.size() && e < 0.5 * B) {  // adaptive resampling
      rng g(seed, stream::resample, t, 0);   // one stream of the filter: the same on every rank
      resample_all(B, std::generate_canonical<double, 53>(g), t + 1, w, xs, th, paths, hist);
      std::fill(logw.begin(), logw.end(), 0.0);
      stage_times.lap(resampling);
    }
    if (o.rejuvenate)
      for_ranges(n, [&](int b0, int b1) {
        for (int b = b0; b < b1; ++b)
          if (std::isfinite(logw[b])) {
            rng g = streams.of(stream::move, b);
            rejuvenate(th[b], paths[b], hist.of(b), t + 1, o.population, g);
          }
      });
    stage_times.lap(moves);
  }
  bar.done();
  res.stages = stage_times;
  res.theta = th;
  res.weights = normalize(logw);
  res.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  return res;
}

result run(const options& o, const std::vector<std::int64_t>& ys, std::uint64_t seed,
           bool show_progress) {
  return o.use_float ? run_filter<float>(o, ys, seed, show_progress)
                     : run_filter<double>(o, ys, seed, show_progress);
}

// ---------------------------------------------------------------- replicates

/// R independent filters pooled: each replicate weighted by its likelihood
/// estimate, the spread over replicates giving the Monte Carlo standard errors.
struct pooled {
  std::vector<result> runs;
  std::vector<double> replicate_weight;  // ∝ the replicates' likelihood estimates
  double log_likelihood = 0;             // log of the mean likelihood estimate
  double log_likelihood_se = std::nan("");
  double seconds = 0;
};

// the seed of replicate k: the first draw of its own stream of `seed`
std::uint64_t replicate_seed(std::uint64_t seed, int k) {
  return rng(seed, stream::replicate, 0, static_cast<std::uint64_t>(k))();
}

// weights ∝ exp(v_k), normalized
std::vector<double> softmax(const std::vector<double>& v) {
  const double m = *std::max_element(v.begin(), v.end());
  std::vector<double> w(v.size());
  double z = 0;
  for (std::size_t k = 0; k < v.size(); ++k) z += w[k] = std::exp(v[k] - m);
  for (double& x : w) x /= z;
  return w;
}

pooled run_replicates(const options& o, const std::vector<std::int64_t>& ys) {
  pooled p;
  std::vector<double> ll;
  for (int k = 0; k < o.replicates; ++k) {
    p.runs.push_back(run(o, ys, replicate_seed(o.seed, k), !o.quiet));
    ll.push_back(p.runs.back().log_likelihood);
    p.seconds += p.runs.back().seconds;
  }
  p.replicate_weight = softmax(ll);
  const double m = *std::max_element(ll.begin(), ll.end());
  const double R = o.replicates;
  double mean = 0;
  for (double x : ll) mean += std::exp(x - m) / R;
  p.log_likelihood = m + std::log(mean);
  if (o.replicates > 1) {
    // the likelihood estimates relative to their mean: their standard error
    // is the standard error of the log of the mean (delta method)
    double v = 0;
    for (double x : ll) v += (std::exp(x - m) / mean - 1) * (std::exp(x - m) / mean - 1);
    p.log_likelihood_se = std::sqrt(v / (R - 1) / R);
  }
  return p;
}

// the filtered law of i_t on day t over all replicates: their mixture, each
// weighted by its likelihood estimate of y_1..t
summary pooled_infected(const pooled& p, std::size_t t) {
  std::vector<double> ll;
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = 0;
  for (const result& r : p.runs) {
    ll.push_back(r.log_likelihood_to[t]);
    first = std::min(first, r.infected[t].first);
    last = std::max(last,
                    r.infected[t].first + static_cast<std::int64_t>(r.infected[t].mass.size()) - 1);
  }
  const std::vector<double> v = softmax(ll);
  day_mass d{first, std::vector<double>(static_cast<std::size_t>(last - first + 1), 0.0)};
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const day_mass& dk = p.runs[k].infected[t];
    for (std::size_t j = 0; j < dk.mass.size(); ++j)
      d.mass[static_cast<std::size_t>(dk.first - first) + j] += v[k] * dk.mass[j];
  }
  return summarize_mass(d);
}

double mean_ess(const pooled& p, std::size_t t) {
  double s = 0;
  for (const result& r : p.runs) s += r.ess[t];
  return s / static_cast<double>(p.runs.size());
}

/// A parameter's pooled posterior summary and the standard errors of its
/// mean and interval ends over the replicates (NaN with one replicate).
struct parameter_summary {
  summary pooled;
  double mean_se, lo_se, hi_se;
};

parameter_summary summarize_parameter(const pooled& p, double params::*field) {
  std::vector<double> x, w;
  std::vector<summary> each;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const result& r = p.runs[k];
    std::vector<double> xk(r.theta.size());
    for (std::size_t b = 0; b < xk.size(); ++b) {
      xk[b] = r.theta[b].*field;
      x.push_back(xk[b]);
      w.push_back(p.replicate_weight[k] * r.weights[b]);
    }
    each.push_back(summarize(xk, r.weights));
  }
  const auto se = [&](double summary::*part) {
    const double R = static_cast<double>(each.size());
    if (each.size() < 2) return std::nan("");
    double m = 0, v = 0;
    for (const summary& s : each) m += s.*part / R;
    for (const summary& s : each) v += (s.*part - m) * (s.*part - m);
    return std::sqrt(v / (R - 1) / R);
  };
  return {summarize(x, w), se(&summary::mean), se(&summary::lo), se(&summary::hi)};
}

// ---------------------------------------------------------------- output

/// The output files, opened (so validated) before the filter runs.
struct outputs {
  std::unique_ptr<output_file> filter, params, summary_file;
};

outputs open_outputs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw output_error("--out '" + dir + "': cannot create the folder: " + ec.message());
  if (!std::filesystem::is_directory(dir, ec))
    throw output_error("--out '" + dir + "' is not a folder");
  return {std::make_unique<output_file>(dir + "/filter.csv"),
          std::make_unique<output_file>(dir + "/params.csv"),
          std::make_unique<output_file>(dir + "/summary.csv")};
}

void write_csv(outputs& out, const std::vector<std::int64_t>& ys, const pooled& p,
               const options& o) {
  // every rank's particles go to params.csv, rank by rank (rank 0 holds
  // one rank's at a time); the files are rank 0's
  const bool root = world->root();
  if (root) out.params->print("weight,lambda,delta,gamma,rho,replicate\n");
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const result& r = p.runs[k];
    std::vector<double> rows;
    for (std::size_t b = 0; b < r.theta.size(); ++b)
      rows.insert(rows.end(), {p.replicate_weight[k] * r.weights[b], r.theta[b].lambda,
                               r.theta[b].delta, r.theta[b].gamma, r.theta[b].rho});
    world->each_on_root(rows, [&](const std::vector<double>& v) {
      for (std::size_t j = 0; j + 4 < v.size(); j += 5)
        out.params->print("%.10g,%.10g,%.10g,%.10g,%.10g,%zu\n", v[j], v[j + 1], v[j + 2], v[j + 3],
                          v[j + 4], k + 1);
    });
  }
  if (!root) return;
  out.params->close();
  output_file& f = *out.filter;
  f.print("day,y,ess,i_mean,i_lo,i_median,i_hi\n");
  for (std::size_t t = 0; t < ys.size(); ++t) {
    const summary s = pooled_infected(p, t);
    f.print("%zu,%lld,%.10g,%.10g,%.10g,%.10g,%.10g\n", t + 1, static_cast<long long>(ys[t]),
            mean_ess(p, t), s.mean, s.lo, s.median, s.hi);
  }
  f.close();
  output_file& h = *out.summary_file;
  h.print("log_likelihood,log_likelihood_se,seconds,days,particles,replicates\n");
  h.print("%.10g,%.10g,%.10g,%zu,%d,%d\n", p.log_likelihood, p.log_likelihood_se, p.seconds,
          ys.size(), o.particles, o.replicates);
  h.close();
}

// Monte Carlo standard errors above these are too large to trust: the log
// likelihood's, and a posterior mean's relative to its 95% interval width
constexpr double max_log_likelihood_se = 0.5;
constexpr double max_mean_se_per_width = 0.1;

int report(const options& o, const std::vector<std::int64_t>& ys, const pooled& p) {
  std::printf("%5s %6s %9s %9s %17s\n", "day", "y", "ESS", "i mean", "i 95% interval");
  for (std::size_t t = 0; t < ys.size(); ++t) {
    const summary s = pooled_infected(p, t);
    std::printf("%5zu %6lld %9.1f %9.1f   [%5.0f, %5.0f]\n", t + 1, static_cast<long long>(ys[t]),
                mean_ess(p, t), s.mean, s.lo, s.hi);
  }
  std::printf("(ESS: mean over the %d replicates of %d particles)\n", o.replicates, o.particles);
  std::vector<std::string> warnings;
  if (o.replicates > 1) {
    std::printf("\nlog marginal likelihood estimate: %.2f ± %.2f (Monte Carlo standard error)\n",
                p.log_likelihood, p.log_likelihood_se);
    if (!(p.log_likelihood_se <= max_log_likelihood_se))
      warnings.push_back("the log likelihood's standard error is above " +
                         std::to_string(max_log_likelihood_se).substr(0, 3));
  } else {
    std::printf("\nlog marginal likelihood estimate: %.2f\n", p.log_likelihood);
    warnings.push_back("one replicate gives no standard errors (--replicates 2 or more)");
  }
  std::printf("parameter posterior: mean ± standard error [95%% interval]\n");
  std::vector<parameter_summary> ps;
  const auto show = [&](const char* name, double params::*field) {
    const parameter_summary s = summarize_parameter(p, field);
    ps.push_back(s);
    std::printf("  %-7s %7.3f ± %.3f   [%7.3f, %7.3f]\n", name, s.pooled.mean, s.mean_se,
                s.pooled.lo, s.pooled.hi);
    if (o.replicates > 1 && !(s.mean_se <= max_mean_se_per_width * (s.pooled.hi - s.pooled.lo)))
      warnings.push_back(std::string("the standard error of the mean of ") + name +
                         " is above a tenth of its interval's width");
  };
  show("lambda", &params::lambda);
  show("delta", &params::delta);
  show("gamma", &params::gamma);
  show("rho", &params::rho);
  for (const std::string& w : warnings)
    std::printf("warning: %s: Monte Carlo noise may dominate; use more --particles\n", w.c_str());
  std::printf("\nwall time: %.3f s for %zu days x %d replicates\n", p.seconds, ys.size(),
              o.replicates);
  if (o.timing)
    for (int s = 0; s < stages; ++s) {
      double sec = 0;
      for (const result& r : p.runs) sec += r.stages.seconds[s];
      std::printf("  %8.3f s  %s\n", sec, stage_names[s]);
    }
  int failures = 0;
  if (o.check) {
    if (!std::isfinite(p.log_likelihood))
      ++failures, std::printf("check: log likelihood not finite\n");
    for (std::size_t t = 0; t < ys.size(); ++t) {
      if (!(mean_ess(p, t) > 0))
        ++failures, std::printf("check: ESS on day %zu is %g\n", t + 1, mean_ess(p, t));
      // the filtered mean cannot fall below the reported count
      if (!(pooled_infected(p, t).mean >= static_cast<double>(ys[t])))
        ++failures, std::printf("check: mean i on day %zu below y\n", t + 1);
    }
    std::printf(failures ? "check: FAILED (%d)\n" : "check: passed\n", failures);
  }
  return failures ? exit_check_failed : exit_ok;
}

// the seed study: log-likelihood variance and ESS over R seeds
int study(const options& o, const std::vector<std::int64_t>& ys) {
  std::printf("%6s %12s %10s %10s %8s\n", "seed", "log lik", "mean ESS", "min ESS", "seconds");
  std::vector<double> ll, mean_ess, min_ess;
  double seconds = 0;
  for (int k = 0; k < o.repeat; ++k) {
    const std::uint64_t seed = o.seed + static_cast<std::uint64_t>(k);
    result r;
    try {
      r = run(o, ys, seed, !o.quiet);
    } catch (const filter_collapse& e) {
      std::printf("%6llu  collapsed: %s\n", static_cast<unsigned long long>(seed), e.what());
      ll.push_back(-std::numeric_limits<double>::infinity());
      continue;
    }
    const double me = std::accumulate(r.ess.begin(), r.ess.end(), 0.0) / ys.size();
    const double mi = *std::min_element(r.ess.begin(), r.ess.end());
    std::printf("%6llu %12.4f %10.1f %10.1f %8.3f\n", static_cast<unsigned long long>(seed),
                r.log_likelihood, me, mi, r.seconds);
    ll.push_back(r.log_likelihood), mean_ess.push_back(me), min_ess.push_back(mi);
    seconds += r.seconds;
  }
  // runs that collapsed (no particle compatible with a count) count as -inf;
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
  if (o.check && fin.size() != ll.size()) return exit_check_failed;
  return exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  const sir_ranks::ranks processes(&argc, &argv);
  world = &processes;
  // every rank runs the whole program (the sums, quantiles and resampling
  // take all of them); rank 0 prints
  if (!world->root() && !std::freopen("/dev/null", "w", stdout)) return exit_output_failed;
  const options o = parse(argc, argv);
  const std::vector<std::int64_t> ys =
      o.data.empty() ? boarding_school : read_counts(o.data, o.population);
  for (std::int64_t y : ys)
    if (y > o.population) input_error("a count exceeds --population");
  outputs out;
  try {
    // before the work: a bad path fails at once
    if (!o.out.empty() && world->root()) out = open_outputs(o.out);
    // one GPU per rank: the ranks of a host share its GPUs round-robin
    if (o.backend != "cpu" && marg::device_count() > 0)
      marg::set_device(world->local_rank() % marg::device_count());
    marg::set_backend(o.backend == "cpu"    ? marg::backend::cpu
                      : o.backend == "cuda" ? marg::backend::cuda
                                            : marg::backend::automatic);
  } catch (const output_error& e) {
    std::fprintf(stderr, "sir: %s\n", e.what());
    world->abort(exit_output_failed);  // only rank 0 writes: the others stop with it
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sir: %s\n", e.what());
    return exit_bad_input;
  }
  int status = exit_ok;
  try {
    std::printf("SIR particle filter: %s, %d x %d particles, %s, %s backend, seed %llu\n",
                o.marginalize ? "Δi, Δr marginalized (libmarg)" : "Δi, Δr sampled (bootstrap)",
                o.replicates, o.particles, o.use_float ? "float" : "double",
                marg::current_backend() == marg::backend::cuda ? "cuda" : "cpu",
                static_cast<unsigned long long>(o.seed));
    if (world->size() > 1)
      std::printf("MPI: %d ranks, about %d particles each\n", world->size(),
                  o.particles / world->size());
    std::printf("data: %zu days%s, population %lld, %lld infected on day 0\n\n", ys.size(),
                o.data.empty() ? " (boarding-school influenza, 1978)" : "",
                static_cast<long long>(o.population), static_cast<long long>(o.initial));
    if (o.repeat > 0) return finish("sir", study(o, ys));
    const pooled p = run_replicates(o, ys);
    status = report(o, ys, p);  // stdout first: the results survive a failing file
    if (!o.out.empty()) write_csv(out, ys, p, o);
  } catch (const filter_collapse& e) {
    std::fflush(stdout);
    if (world->root()) std::fprintf(stderr, "sir: %s\n", e.what());
    return finish("sir", exit_filter_failed);
  } catch (const output_error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "sir: %s\n", e.what());
    if (world->size() > 1) world->abort(exit_output_failed);
    return finish("sir", exit_output_failed);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "sir: %s\n", e.what());
    // an error of one rank: the others may wait for it in a collective
    if (world->size() > 1) world->abort(exit_bad_input);
    return finish("sir", exit_bad_input);
  }
  return finish("sir", status);
}
