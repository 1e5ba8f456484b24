// The Poisson-binomial distribution: the number of successes among N
// independent trials with their own probabilities, exact through marg::sum.
//
//   poisson_binomial [--n N] [--pmax P] [--seed S] [--backend cpu|cuda|auto]
//                    [--max-seconds T] [--check]          (--help: the defaults)
//
// Prints the time of the sum, the tails next to a normal approximation, and
// the relative error of libmarg against a long double dynamic program at
// N = 2,000. Exit status: 0 on success, 1 when --check fails, 2 on bad input,
// 3 when standard output cannot be written, 5 when the sum runs past its
// time budget (--max-seconds).
#include <marg/marg.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "example_cli.hpp"

namespace {

struct options {
  std::int64_t n = 100000;
  std::uint64_t seed = 1;
  double pmax = 0.01;  // p_i ~ Uniform(0, pmax): rare events, a skewed sum
  std::string backend = "auto";
  double max_seconds = 60;  // the time budget of the sum
  bool check = false;
};

// the largest N accepted: the cost grows about as N^2, so at this N the sum
// runs for minutes on a small machine and the default --max-seconds stops it
// with a message
constexpr std::int64_t max_trials = 1000000;

options parse(int argc, char** argv) {
  options o;
  CLI::App app(
      "The Poisson-binomial distribution of N trials, exact through marg::sum, checked against "
      "exact moments and a long double dynamic program.\nExit status: 0 success, 1 --check "
      "failed, 2 bad arguments, 3 standard output cannot be written, 5 the sum ran past "
      "--max-seconds.",
      "poisson_binomial");
  marg_example::standard_options(app);
  app.add_option("--n", o.n, "trials N")->check(CLI::Range(std::int64_t{1}, max_trials));
  app.add_option("--pmax", o.pmax, "p_i ~ Uniform(0, pmax)")->check(CLI::Range(1e-300, 1.0));
  app.add_option("--seed", o.seed, "random seed");
  app.add_option("--backend", o.backend, "libmarg backend")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  app.add_option("--max-seconds", o.max_seconds,
                 "time budget of the sum (marg::cancel_scope); past it the sum stops")
      ->check(CLI::Range(1e-6, 1e6));
  app.add_flag("--check", o.check, "exit 1 unless every check passes");
  marg_example::parse_or_exit(app, argc, argv);
  return o;
}

std::vector<double> draw_probs(std::int64_t n, double pmax, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, pmax);
  std::vector<double> p(static_cast<std::size_t>(n));
  for (double& x : p) x = u(g);
  return p;
}

marg::pmf<double> poisson_binomial(const std::vector<double>& p) {
  std::vector<marg::pmf<double>> terms;
  terms.reserve(p.size());
  for (double x : p) terms.push_back(marg::bernoulli<double>(x));
  return marg::sum(terms);
}

// the reference: the O(N^2) dynamic program in long double, independent of libmarg
std::vector<long double> reference(const std::vector<double>& p) {
  std::vector<long double> r{1.0L};
  for (double x : p) {
    std::vector<long double> next(r.size() + 1, 0.0L);
    for (std::size_t k = 0; k < r.size(); ++k) {
      next[k] += r[k] * (1.0L - x);
      next[k + 1] += r[k] * x;
    }
    r.swap(next);
  }
  return r;
}

// P(Z <= z) of the standard normal
double phi(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  int failures = 0;
  try {
    marg::set_backend(o.backend == "cpu"    ? marg::backend::cpu
                      : o.backend == "cuda" ? marg::backend::cuda
                                            : marg::backend::automatic);
    const char* where = marg::current_backend() == marg::backend::cuda ? "cuda" : "cpu";

    // 1. the distribution of N trials
    const std::vector<double> p = draw_probs(o.n, o.pmax, o.seed);
    const auto t0 = std::chrono::steady_clock::now();
    const marg::pmf<double> s = [&] {
      // the sum stops between blocks once the budget is spent
      const marg::cancel_scope budget(
          {}, {.max_work = 0, .max_time = std::chrono::duration<double>(o.max_seconds)});
      return poisson_binomial(p);
    }();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    long double mu = 0, var = 0;
    for (double x : p) mu += x, var += static_cast<long double>(x) * (1 - x);
    const double sd = std::sqrt(static_cast<double>(var));
    std::printf(
        "Poisson-binomial: successes among N = %lld trials, p_i ~ Uniform(0, %g) "
        "(seed %llu), libmarg %s backend, double\n",
        static_cast<long long>(o.n), o.pmax, static_cast<unsigned long long>(o.seed), where);
    std::printf("sum of %lld Bernoulli pmfs (marg::sum): %.3f s\n", static_cast<long long>(o.n),
                secs);
    std::printf(
        "support %lld..%lld; mean %.6f (sum p_i %.6f); variance %.6f (sum p_i(1-p_i) "
        "%.6f)\n\n",
        static_cast<long long>(s.lower()), static_cast<long long>(s.upper()), s.mean(),
        static_cast<double>(mu), s.variance(), static_cast<double>(var));
    if (std::abs(s.mean() - mu) > 1e-9 * mu || std::abs(s.variance() - var) > 1e-8 * var) {
      ++failures;
      std::printf("check: mean or variance differs from the exact moments\n");
    }

    // 2. tails next to the normal approximation (with continuity correction)
    std::printf("%5s  %-24s %-12s %-12s | %-24s %-12s %-12s\n", "k", "lower tail P(S <= x)",
                "exact", "normal", "upper tail P(S >= x)", "exact", "normal");
    for (int k = 1; k <= 10; ++k) {
      const auto lo = static_cast<std::int64_t>(std::floor(static_cast<double>(mu) - k * sd));
      const auto hi = static_cast<std::int64_t>(std::ceil(static_cast<double>(mu) + k * sd));
      const double exact_lo = s.cdf(lo);
      // the upper tail summed directly (1 - cdf loses everything below 1e-16)
      long double up = 0;
      for (std::int64_t j = hi; j <= s.upper(); ++j) up += s.prob(j);
      const double normal_lo = phi((lo + 0.5 - static_cast<double>(mu)) / sd);
      const double normal_hi = phi(-(hi - 0.5 - static_cast<double>(mu)) / sd);
      std::printf("%4dσ  x = %-20lld %-12.4e %-12.4e | x = %-20lld %-12.4e %-12.4e\n", k,
                  static_cast<long long>(lo), exact_lo, normal_lo, static_cast<long long>(hi),
                  static_cast<double>(up), normal_hi);
    }

    // 3. accuracy against the long double dynamic program at N = 2,000
    const std::int64_t nref = 2000;
    const std::vector<double> pr = draw_probs(nref, 1.0, o.seed + 1);
    const marg::pmf<double> sr = poisson_binomial(pr);
    const std::vector<long double> ref = reference(pr);
    double worst = 0, smallest = 1;
    std::int64_t compared = 0, worst_at = 0;
    for (std::int64_t k = 0; k <= nref; ++k) {
      const long double r = ref[static_cast<std::size_t>(k)];
      if (r < std::numeric_limits<double>::min()) continue;  // below double's normal range
      const double e = static_cast<double>(std::abs(sr.prob(k) - r) / r);
      if (e > worst) worst = e, worst_at = k;
      smallest = std::min(smallest, static_cast<double>(r));
      ++compared;
    }
    const double bound = 1e-10;
    std::printf(
        "\nN = %lld (p_i ~ Uniform(0, 1)) against a long double dynamic program: max relative "
        "error %.3e "
        "(at k = %lld) over all %lld probabilities >= DBL_MIN (smallest %.3e); "
        "bound %.0e\n",
        static_cast<long long>(nref), worst, static_cast<long long>(worst_at),
        static_cast<long long>(compared), smallest, bound);
    if (!(worst < bound)) {
      ++failures;
      std::printf("check: relative error above the bound\n");
    }
    if (o.check) std::printf(failures ? "check: FAILED (%d)\n" : "check: passed\n", failures);
  } catch (const marg::cancelled& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "poisson_binomial: %s (raise --max-seconds or lower --n)\n", e.what());
    return marg_example::finish("poisson_binomial", marg_example::exit_too_large);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "poisson_binomial: %s\n", e.what());
    return marg_example::finish("poisson_binomial", marg_example::exit_bad_input);
  }
  return marg_example::finish("poisson_binomial", o.check && failures
                                                      ? marg_example::exit_check_failed
                                                      : marg_example::exit_ok);
}
