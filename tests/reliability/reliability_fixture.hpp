/// @file reliability_fixture.hpp
/// @brief Shared pieces of the reliability suite: long double references of
/// sums and posteriors (plain loops over the probabilities a pmf reports),
/// a pool-limit guard and a failure collector for worker threads.
#pragma once

#include <catch2/catch.hpp>

#include <marg/marg.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "../common/reference.hpp"
#include "../numeric/numeric_fixture.hpp"

namespace marg::test::rel {

using marg::test::real;
using marg::test::rvec;

/// @return the probabilities of x widened to long double
template <class T>
rvec widen_pmf(const marg::pmf<T>& x) {
  return widen(x.probs());
}

/// The long double law of the sum of independent terms, by a left fold of
/// plain convolution loops (not the library's balanced tree).
/// @param xs the terms
/// @param lower receives the lower bound of the sum
template <class T>
rvec ref_sum(const std::vector<marg::pmf<T>>& xs, std::int64_t& lower) {
  rvec r{1.0L};
  lower = 0;
  for (const auto& x : xs) {
    r = ref_convolve(r, widen_pmf(x));
    lower += x.lower();
  }
  return r;
}

/// Posterior of x given x + y = k, by brute force over the joint (index i of
/// the result is the value x.lower() + i; zero where impossible).
/// @return the unnormalized weights; total receives their sum
template <class T>
rvec ref_posterior_first(const marg::pmf<T>& x, const marg::pmf<T>& y, std::int64_t k,
                         real& total) {
  rvec w(static_cast<std::size_t>(x.size()), 0.0L);
  total = 0;
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const std::int64_t j = k - (x.lower() + i);
    if (j < y.lower() || j > y.upper()) continue;
    w[i] = static_cast<real>(x.prob(x.lower() + i)) * y.prob(j);
    total += w[i];
  }
  return w;
}

/// Relative errors of got against want over the elements whose reference is
/// above 1e-30 (float) or 1e-300 (double): products of many terms fall below
/// the range of float in the outer tails.
template <class T>
error_report compare_in_range(const std::vector<T>& got, const rvec& want, double tol) {
  const real floor = sizeof(T) == sizeof(float) ? 1e-30L : 1e-300L;
  error_report rep;
  if (got.size() != want.size()) {
    rep.failures = 1;
    return rep;
  }
  for (std::size_t i = 0; i < got.size(); ++i)
    if (want[i] > floor)
      rep.add(static_cast<std::int64_t>(i), got[i], want[i], relative_error(got[i], want[i]), tol);
  return rep;
}

/// Restores the pool limit when the scope ends.
class pool_limit_guard {
 public:
  pool_limit_guard() : previous_(marg::pool_limit()) {}
  pool_limit_guard(const pool_limit_guard&) = delete;
  pool_limit_guard& operator=(const pool_limit_guard&) = delete;
  ~pool_limit_guard() {
    try {
      marg::set_pool_limit(previous_);
    } catch (...) {
    }
  }

 private:
  std::size_t previous_;
};

/// Collects failure messages from worker threads (Catch assertions are not
/// thread-safe): workers add, the test thread checks once they joined.
class failures {
 public:
  /// Records one failure.
  void add(const std::string& what) {
    const std::lock_guard lock(mutex_);
    if (list_.size() < 20) list_.push_back(what);
    ++count_;
  }
  /// @return the number of failures
  long count() const { return count_; }
  /// @return the first failures, one a line
  std::string describe() const {
    std::string s;
    for (const auto& x : list_) s += x + "\n";
    return s;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> list_;
  long count_ = 0;
};

}  // namespace marg::test::rel
