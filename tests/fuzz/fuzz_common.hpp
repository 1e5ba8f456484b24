/// @file fuzz_common.hpp
/// @brief Shared pieces of the libFuzzer targets: value menus (NaN, +-inf,
/// negatives, subnormals, huge), the error bounds of the contract and a
/// finding reporter that aborts (libFuzzer then saves the input).
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace marg::fuzz {

using real = long double;

/// Prints a finding and aborts: libFuzzer records the crashing input.
[[noreturn]] inline void finding(const char* what, long double got = 0, long double want = 0) {
  std::fprintf(stderr, "FUZZ FINDING: %s (got %.21Lg, want %.21Lg)\n", what, got, want);
  std::abort();
}

/// @return the per-element relative bound of the contract: float 1e-5, double 1e-12
template <class T>
constexpr real tolerance() {
  return sizeof(T) == sizeof(float) ? 1e-5L : 1e-12L;
}

/// Kinds of values a fuzzer may put into data.
enum class value_kind { ordinary, zero, subnormal, tiny, huge, negative, nan, inf, neg_inf };

/// A value of T drawn from the menu; `allow_bad` admits negatives and non-finite.
template <class T>
T draw_value(FuzzedDataProvider& d, bool allow_bad) {
  const int k = d.ConsumeIntegralInRange<int>(0, allow_bad ? 15 : 8);
  const T u = static_cast<T>(d.ConsumeProbability<double>());
  switch (k) {
    case 0:
      return T(0);
    case 1:
      return std::numeric_limits<T>::denorm_min() * (1 + 100 * u);
    case 2:
      return std::numeric_limits<T>::min() * (1 + u);
    case 3:
      return std::numeric_limits<T>::max() / T(1e6) * u;
    case 9:
    case 10:
      return -u;
    case 11:
      return std::numeric_limits<T>::quiet_NaN();
    case 12:
      return std::numeric_limits<T>::infinity();
    case 13:
      return -std::numeric_limits<T>::infinity();
    case 14:
      return -std::numeric_limits<T>::max();
    default:  // ordinary: 10^-U(0, 12)
      return static_cast<T>(std::pow(10.0L, -12.0L * u));
  }
}

/// True when |got - want| is within the contract for one element of a
/// product with `terms` terms whose absolute values sum to `scale` (= want on
/// non-negative input): relative tolerance of the scale, plus terms times the
/// smallest normal T (subnormal products may be flushed or rounded), and an
/// anything accepted where the scale passes the range of T (a partial sum
/// may overflow).
template <class T>
bool within_bound(real got, real want, real scale, int terms) {
  const real max = std::numeric_limits<T>::max();
  if (scale * (1 + tolerance<T>()) >= max) return true;  // an intermediate may overflow
  if (!std::isfinite(got)) return false;
  return std::fabs(got - want) <=
         tolerance<T>() * scale + terms * static_cast<real>(std::numeric_limits<T>::min());
}

}  // namespace marg::fuzz
