// Shared pieces of the CUDA benchmark and checker: random positive inputs and
// an independent long double reference of the three banded products.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "detail/banded.hpp"

namespace marg::bench {

/// random positive values in (0.01, 1]: zeros would hide unwritten outputs
template <class T>
std::vector<T> random_positive(std::int64_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  std::vector<T> v(static_cast<std::size_t>(size));
  for (auto& x : v) x = static_cast<T>(u(rng));
  return v;
}

/// One problem in long double, plain loops over the definitions of convolve.hpp.
/// a, b are contiguous; returns the out vector.
template <class T>
std::vector<long double> reference_one(detail::banded_op op, int m, int n, const T* a, const T* b) {
  using detail::banded_op;
  const std::int64_t lr = std::int64_t{m} + n - 1;
  std::vector<long double> out;
  if (op == banded_op::convolve) {
    out.assign(lr, 0.0L);
    for (std::int64_t i = 0; i < lr; ++i) {
      const std::int64_t lo = std::max<std::int64_t>(0, i - n + 1),
                         hi = std::min<std::int64_t>(i, m - 1);
      long double s = 0;
      for (std::int64_t j = lo; j <= hi; ++j) s += static_cast<long double>(a[j]) * b[i - j];
      out[i] = s;
    }
  } else {
    const int lo = op == banded_op::grad_p ? m : n, lk = op == banded_op::grad_p ? n : m;
    out.assign(lo, 0.0L);
    for (int j = 0; j < lo; ++j) {
      long double s = 0;
      for (int k = 0; k < lk; ++k) s += static_cast<long double>(b[k]) * a[j + k];
      out[j] = s;
    }
  }
  return out;
}

/// The same over host threads for one large problem (outputs split in ranges).
template <class T>
std::vector<long double> reference_parallel(detail::banded_op op, int m, int n, const T* a,
                                            const T* b) {
  using detail::banded_op;
  const auto len = detail::lengths_of(op, m, n);
  std::vector<long double> out(static_cast<std::size_t>(len.out));
  const int nt = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < nt; ++t) {
    pool.emplace_back([&, t] {
      // interleaved outputs balance the triangular work of convolve
      for (std::int64_t i = t; i < len.out; i += nt) {
        long double s = 0;
        if (op == banded_op::convolve) {
          const std::int64_t lo = std::max<std::int64_t>(0, i - n + 1);
          const std::int64_t hi = std::min<std::int64_t>(i, m - 1);
          for (std::int64_t j = lo; j <= hi; ++j) s += static_cast<long double>(a[j]) * b[i - j];
        } else {
          const std::int64_t lk = op == banded_op::grad_p ? n : m;
          for (std::int64_t k = 0; k < lk; ++k) s += static_cast<long double>(b[k]) * a[i + k];
        }
        out[i] = s;
      }
    });
  }
  for (auto& th : pool) th.join();
  return out;
}

/// max over elements of |x - ref| / ref (ref > 0 on positive inputs)
template <class T>
double max_rel_error(const T* x, const long double* ref, std::int64_t len, std::int64_t inc,
                     std::int64_t* negatives = nullptr) {
  double worst = 0;
  for (std::int64_t i = 0; i < len; ++i) {
    const long double v = x[i * inc];
    if (negatives != nullptr && v < 0) ++*negatives;
    const long double e = std::fabs(v - ref[i]) / (ref[i] > 0 ? ref[i] : 1.0L);
    if (!(e <= worst))
      worst = std::isnan(static_cast<double>(e)) ? INFINITY : static_cast<double>(e);
  }
  return worst;
}

}  // namespace marg::bench
