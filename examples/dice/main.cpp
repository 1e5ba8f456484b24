// The PMF of the sum of k fair s-sided dice, computed with libmarg and checked
// against exact integer counts.
//
//   dice [k] [s]    k dice (default 3), s sides each (default 6); dice --help
//
// Prints one row per possible sum (probability and exact count / s^k), then the
// mean and variance. Exits with status 1 when any probability differs from the
// exact count / s^k by more than a few rounding errors, 2 on bad arguments,
// 3 when standard output cannot be written.
#include <marg/marg.hpp>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "example_cli.hpp"

namespace {

// exact number of ways to roll each total k..k*s, by integer dynamic
// programming (independent of libmarg); counts[i] is for total k + i
std::vector<std::uint64_t> exact_counts(int k, int s) {
  std::vector<std::uint64_t> counts{1};  // zero dice: one way to roll 0
  for (int die = 0; die < k; ++die) {
    std::vector<std::uint64_t> next(counts.size() + s - 1, 0);
    for (std::size_t i = 0; i < counts.size(); ++i)
      for (int face = 0; face < s; ++face) next[i + face] += counts[i];
    counts.swap(next);
  }
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  int k = 3, s = 6;
  CLI::App app(
      "The PMF of the sum of k fair s-sided dice (marg::sum), checked against exact integer "
      "counts.\nExit status: 0 success, 1 a probability differs from the exact count, 2 bad "
      "arguments, 3 standard output cannot be written.",
      "dice");
  marg_example::standard_options(app);
  app.add_option("dice", k, "number of dice")->check(CLI::Range(1, 100000));
  app.add_option("sides", s, "sides per die")->check(CLI::Range(1, 100000));
  marg_example::parse_or_exit(app, argc, argv);

  // the counts are exact only while s^k fits in 64 bits
  std::uint64_t total = 1;
  for (int i = 0; i < k; ++i) {
    if (__builtin_mul_overflow(total, static_cast<std::uint64_t>(s), &total)) {
      std::fprintf(stderr, "dice: %d^%d outcomes do not fit in 64 bits; use fewer dice\n", s, k);
      return marg_example::exit_too_large;
    }
  }

  try {
    // k independent dice, added as a balanced tree of convolutions
    const std::vector<marg::pmf<double>> dice(static_cast<std::size_t>(k),
                                              marg::uniform_int<double>(1, s));
    const marg::pmf<double> total_pmf = marg::sum(dice);
    const std::vector<double> sum = total_pmf.probs();  // values lower()..upper(), lower() == k
    double largest = 0;
    for (const double v : sum) largest = std::fmax(largest, v);

    const std::vector<std::uint64_t> counts = exact_counts(k, s);
    const char* where = marg::current_backend() == marg::backend::cuda ? "cuda" : "cpu";
    std::printf("sum of %d fair %d-sided dice (libmarg, %s backend)\n\n", k, s, where);
    std::printf("%8s  %-20s  %-24s  %s\n", "sum", "probability", "exact", "");
    // relative tolerance: a few rounding errors per convolution step
    const double tol = 8.0 * k * s * 1.1102230246251565e-16;
    double mean = 0, second = 0, worst = 0;
    for (std::size_t i = 0; i < sum.size(); ++i) {
      const double value = static_cast<double>(k + static_cast<std::int64_t>(i));
      const long double exact = static_cast<long double>(counts[i]) / total;
      const double rel = static_cast<double>(std::fabs((sum[i] - exact) / exact));
      worst = std::fmax(worst, rel);
      mean += value * sum[i];
      second += value * value * sum[i];
      char fraction[48];
      std::snprintf(fraction, sizeof fraction, "%" PRIu64 "/%" PRIu64, counts[i], total);
      // an ASCII bar, 40 characters for the most likely sum
      const std::string bar(static_cast<std::size_t>(std::lround(40 * sum[i] / largest)), '#');
      std::printf("%8" PRId64 "  %-20.15g  %-24s  %s%s\n", total_pmf.lower() + std::int64_t(i),
                  sum[i], fraction, bar.c_str(), rel > tol ? "  MISMATCH" : "");
    }
    const double variance = second - mean * mean;
    // exact moments of a sum of k independent uniform {1..s}
    const double exact_mean = k * (s + 1) / 2.0;
    const double exact_variance = k * (static_cast<double>(s) * s - 1) / 12.0;
    std::printf("\nmean      %.15g  (exact %.15g)\n", mean, exact_mean);
    std::printf("variance  %.15g  (exact %.15g)\n", variance, exact_variance);
    std::printf("largest relative error against exact counts: %.3g (tolerance %.3g)\n", worst, tol);

    const bool moments_ok = std::fabs(mean - exact_mean) <= 1e-9 * exact_mean &&
                            std::fabs(variance - exact_variance) <= 1e-9 * exact_mean * exact_mean;
    if (worst > tol || !moments_ok) {
      std::fprintf(stderr, "dice: result does not match the exact counts\n");
      return marg_example::finish("dice", marg_example::exit_check_failed);
    }
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "dice: %s\n", e.what());
    return marg_example::finish("dice", marg_example::exit_check_failed);
  }
  return marg_example::finish("dice", marg_example::exit_ok);
}
