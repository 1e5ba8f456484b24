// binomial_batch: per-row binomials trimmed to their high-mass windows, built
// outward from the mode by the ratio recurrence, in parallel over fixed chunks.
#include <marg/distributions/batch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "batch_arith.hpp"
#include "batch_rows.hpp"
#include "detail.hpp"
#include "parallel.hpp"
#if MARG_WITH_CUDA
#include "cuda/batch_device.hpp"
#endif

namespace marg {
namespace {

/// Row b of binomial_batch's arguments: n in 0..INT_MAX-1, p in [0, 1] (the
/// names are formatted only for an error).
void check_row(const char* f, const std::vector<std::int64_t>& ns, const std::vector<double>& ps,
               std::int64_t b) {
  MARG_EXPECTS(
      ns[b] >= 0 && ns[b] < INT_MAX,
      detail::bad_argument(f, ("ns[" + std::to_string(b) + "]").c_str(), ns[b], "in 0..INT_MAX-1"));
  detail::check_probability_at(f, "ps", static_cast<std::size_t>(b), ps[b]);
}

/// A row's window and where its values start in its chunk's scratch.
struct window {
  detail::binomial_window w;
  std::int64_t offset = 0;
};

#if MARG_WITH_CUDA
/// A lower bound on the log of every value of binomial_batch's rows, without
/// reading them: a kept value v/kept (kept <= n + 1 values of at most the
/// mode's 1) passed v >= tail * kept * (1 - r) with 1 - r >= 1 / (n + 2) away
/// from the mode, so it is at least tail / (n + 2)^2; one more e^-1 for
/// rounding. NaN (not known) when the bound is below T's normal range, where
/// rows can hold values rounded to 0.
template <class T>
double device_floor(const std::vector<std::int64_t>& ns, double tail) {
  const double n = static_cast<double>(*std::max_element(ns.begin(), ns.end()));
  const double bound = std::log(tail) - 2 * std::log(n + 2) - 1;
  return bound >= detail::log_min_normal<T> ? bound : std::numeric_limits<double>::quiet_NaN();
}
#endif

}  // namespace

template <class T>
pmf_batch<T> binomial_batch(const std::vector<std::int64_t>& ns, const std::vector<double>& ps,
                            double tail) {
  const char* f = "marg::binomial_batch";
  MARG_EXPECTS(!ns.empty(), std::string(f) + ": ns is empty");
  MARG_EXPECTS(
      ns.size() <= INT_MAX,
      detail::bad_argument(f, "ns.size()", static_cast<std::int64_t>(ns.size()), "<= INT_MAX"));
  MARG_EXPECTS(ps.size() == ns.size(),
               detail::bad_argument(f, "ps.size()", static_cast<std::int64_t>(ps.size()),
                                    ("ns.size() = " + std::to_string(ns.size())).c_str()));
  detail::check_real(f, "tail", tail, 0, 1, true, true, "in (0, 1)");
  const auto B = static_cast<std::int64_t>(ns.size());
#if MARG_WITH_CUDA
  if (detail::gpu::active()) {  // checked here, built on the device (the same values)
    for (std::int64_t b = 0; b < B; ++b) check_row(f, ns, ps, b);
    auto r =
        detail::gpu::binomial_rows_on_device<T>(ns.data(), ps.data(), static_cast<int>(B), tail, f);
    return pmf_batch<T>(detail::trusted, std::move(r.values), static_cast<int>(B), r.length,
                        std::move(r.lowers), std::move(r.truncated), device_floor<T>(ns, tail));
  }
#endif
  // pass 1: each row checked, then its window; its values (up from the mode,
  // then down) in its chunk's scratch. A bad row throws in its chunk; the
  // lowest chunk's error wins, so the first bad row is named, as in a serial
  // check before any work.
  const std::int64_t grain = 256;
  const std::int64_t chunks = (B + grain - 1) / grain;
  std::vector<std::vector<double>> scratch(static_cast<std::size_t>(chunks));
  std::vector<window> win(static_cast<std::size_t>(B));
  detail::parallel_rows(B, grain, [&](std::int64_t c, std::int64_t b0, std::int64_t b1) {
    auto& out = scratch[c];
    double room = 0;  // about 20 standard deviations a row: few reallocations
    for (std::int64_t b = b0; b < b1; ++b) {
      check_row(f, ns, ps, b);
      room += 16 + 20 * std::sqrt(static_cast<double>(ns[b]) * ps[b] * (1 - ps[b]));
    }
    out.reserve(static_cast<std::size_t>(std::min(room, 1e8)));
    for (std::int64_t b = b0; b < b1; ++b) {
      win[b].offset = static_cast<std::int64_t>(out.size());
      win[b].w =
          detail::binomial_window_of(ns[b], ps[b], tail, [&](double v) { out.push_back(v); });
    }
  });
  std::int64_t len = 1;
  for (const window& w : win) len = std::max(len, w.w.size());
  const int L = detail::length_checked(f, "the longest window", len);
  // pass 2: rows normalized into the padded batch
  array<T> a(static_cast<std::size_t>(B) * L);
  T* d = a.data();
  std::vector<std::int64_t> lowers(static_cast<std::size_t>(B));
  std::vector<T> truncated(static_cast<std::size_t>(B));
  // the rows fall away from the mode: their smallest values are at the ends
  std::vector<T> ends(static_cast<std::size_t>(B));
  detail::parallel_rows(B, grain, [&](std::int64_t c, std::int64_t b0, std::int64_t b1) {
    const double* in = scratch[c].data();
    for (std::int64_t b = b0; b < b1; ++b) {
      const detail::binomial_window& w = win[b].w;
      T* r = d + b * L;
      const double* v = in + win[b].offset;  // up values, then down values
      for (std::int64_t j = 0; j < w.down; ++j)
        r[w.down - 1 - j] = static_cast<T>(v[w.up + j] / w.kept);
      r[w.down] = static_cast<T>(1 / w.kept);
      for (std::int64_t j = 0; j < w.up; ++j) r[w.down + 1 + j] = static_cast<T>(v[j] / w.kept);
      std::fill(r + w.size(), r + L, T(0));
      lowers[b] = w.lower();
      truncated[b] = static_cast<T>(w.truncated());
      ends[b] = std::min(r[0], r[w.size() - 1]);
    }
  });
  const T low = *std::min_element(ends.begin(), ends.end());
  return pmf_batch<T>(detail::trusted, std::move(a), static_cast<int>(B), L, std::move(lowers),
                      std::move(truncated), std::log(static_cast<double>(low)));
}

namespace {

// one value per row, or one for all rows
template <class V>
const V& row_value(const std::vector<V>& v, std::int64_t b) {
  return v[v.size() == 1 ? 0 : static_cast<std::size_t>(b)];
}

template <class V>
void check_per_row(const char* f, const char* name, const std::vector<V>& v, int B) {
  MARG_EXPECTS(v.size() == static_cast<std::size_t>(B) || v.size() == 1,
               detail::bad_argument(f, (std::string(name) + ".size()").c_str(),
                                    static_cast<std::int64_t>(v.size()),
                                    ("x.batch() = " + std::to_string(B) + " or 1").c_str()));
}

// lgamma_r: lgamma's sign global is shared between threads
double lgamma_host(double a) {
  int sign = 0;
  return lgamma_r(a, &sign);
}

}  // namespace

template <class T>
batch_evidence<T> binomial_count_evidence(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                          const std::vector<std::int64_t>& offsets,
                                          const std::vector<std::int64_t>& observed,
                                          const std::vector<double>& rhos, std::int64_t n_max) {
  const char* f = "marg::binomial_count_evidence";
  const int B = x.batch();
  MARG_EXPECTS(B >= 1, std::string(f) + ": x is an empty batch");
  MARG_EXPECTS(y.batch() == B || y.batch() == 1,
               detail::bad_argument(f, "y.batch()", y.batch(),
                                    ("x.batch() = " + std::to_string(B) + " or 1").c_str()));
  check_per_row(f, "offsets", offsets, B);
  check_per_row(f, "observed", observed, B);
  check_per_row(f, "rhos", rhos, B);
  MARG_EXPECTS(n_max >= 0, detail::bad_argument(f, "n_max", n_max, ">= 0"));
  for (std::size_t b = 0; b < observed.size(); ++b)
    MARG_EXPECTS(observed[b] >= 0,
                 detail::bad_argument(f, ("observed[" + std::to_string(b) + "]").c_str(),
                                      observed[b], ">= 0"));
  for (std::size_t b = 0; b < rhos.size(); ++b) detail::check_probability_at(f, "rhos", b, rhos[b]);
  const int len = detail::sum_length(f, x, y);
  // N at index 0 of each row; the row's last N must not overflow either
  std::vector<std::int64_t> base(static_cast<std::size_t>(B));
  for (int b = 0; b < B; ++b) {
    const std::int64_t yl = y.lowers()[y.batch() == 1 ? 0 : b];
    const std::int64_t s = detail::add_checked(f, "lower(x) + lower(y)", x.lowers()[b], yl);
    base[b] = detail::add_checked(f, "offsets[b] + lower(x) + lower(y)", row_value(offsets, b), s);
    detail::add_checked(f, "the largest N of a row", base[b], len - 1);
  }
  batch_evidence<T> e;
  e.batch = B;
  e.length = len;
#if MARG_WITH_CUDA
  if (detail::gpu::active()) {
    std::vector<std::int64_t> obs(static_cast<std::size_t>(B));
    std::vector<double> rho(static_cast<std::size_t>(B));
    for (int b = 0; b < B; ++b) obs[b] = row_value(observed, b), rho[b] = row_value(rhos, b);
    e.values = detail::gpu::count_evidence_on_device<T>(B, len, base.data(), obs.data(), rho.data(),
                                                        n_max, e.log_scale);
    return e;
  }
#endif
  e.values = array<T>(static_cast<std::size_t>(B) * len);
  e.log_scale.resize(static_cast<std::size_t>(B));
  T* d = e.values.data();
  detail::parallel_rows(
      B, detail::rows_per_chunk(len), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
        for (std::int64_t b = b0; b < b1; ++b) {
          T* L = d + b * len;
          std::fill(L, L + len, T(0));
          e.log_scale[b] = detail::count_evidence_row(base[b], len, row_value(observed, b),
                                                      row_value(rhos, b), n_max, L, lgamma_host);
        }
      });
  return e;
}

template batch_evidence<float> binomial_count_evidence<float>(
    const pmf_batch<float>&, const pmf_batch<float>&, const std::vector<std::int64_t>&,
    const std::vector<std::int64_t>&, const std::vector<double>&, std::int64_t);
template batch_evidence<double> binomial_count_evidence<double>(
    const pmf_batch<double>&, const pmf_batch<double>&, const std::vector<std::int64_t>&,
    const std::vector<std::int64_t>&, const std::vector<double>&, std::int64_t);

template pmf_batch<float> binomial_batch<float>(const std::vector<std::int64_t>&,
                                                const std::vector<double>&, double);
template pmf_batch<double> binomial_batch<double>(const std::vector<std::int64_t>&,
                                                  const std::vector<double>&, double);

}  // namespace marg
