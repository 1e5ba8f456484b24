// binomial_batch: per-row binomials trimmed to their high-mass windows, built
// outward from the mode by the ratio recurrence, in parallel over fixed chunks.
#include <marg/distributions/batch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "batch_rows.hpp"
#include "detail.hpp"
#include "parallel.hpp"
#if MARG_WITH_CUDA
#include "cuda/batch_device.hpp"
#endif

namespace marg {
namespace {

// relative accuracy of the dropped-mass estimate
constexpr double dropped_accuracy = 1e-3;

/// One side of a binomial walked from the mode: the ratio of consecutive
/// values, P(k+1)/P(k) going up, P(k-1)/P(k) going down (one division each).
struct side {
  double n, odds;  // odds: p/(1-p) going up, (1-p)/p going down
  bool up;
  double ratio(std::int64_t k) const {
    const double kk = static_cast<double>(k);
    return up ? (n - kk) / (kk + 1) * odds : kk / (n - kk + 1) * odds;
  }
  bool at_end(std::int64_t k) const { return up ? static_cast<double>(k) >= n : k <= 0; }
  std::int64_t next(std::int64_t k) const { return up ? k + 1 : k - 1; }
};

/// Walks one side from the mode, appending the kept values (relative to the
/// mode's 1) to out. Stops at the first k whose remaining mass beyond, bounded
/// geometrically (the ratios fall away from the mode), is below tail * kept.
/// Returns the number kept; adds the kept sum to `kept` and the (estimated)
/// dropped sum to `dropped`.
std::int64_t walk(const side& s, std::int64_t mode, double tail, std::vector<double>& out,
                  double& kept, double& dropped) {
  std::int64_t k = mode, count = 0;
  double v = 1, r = s.at_end(k) ? 0 : s.ratio(k);
  while (!s.at_end(k)) {
    const double vn = v * r;
    const std::int64_t kn = s.next(k);
    const double rn = s.at_end(kn) ? 0 : s.ratio(kn);
    if (vn == 0 || (rn < 1 && vn < tail * kept * (1 - rn))) {
      // the mass beyond k: the series until the geometric bound is 0.1% of it
      double d = 0, w = vn;
      for (std::int64_t j = kn;;) {
        d += w;
        if (s.at_end(j) || w == 0) break;
        const double rj = s.ratio(j);
        w *= rj;
        j = s.next(j);
        if (rj < 1 && w / (1 - rj) <= dropped_accuracy * d) {
          d += w / (1 - rj);
          break;
        }
      }
      dropped += d;
      return count;
    }
    out.push_back(vn);
    kept += vn;
    ++count;
    v = vn;
    k = kn;
    r = rn;
  }
  return count;
}

struct window {
  std::int64_t lo = 0, mode = 0;
  std::int64_t up = 0, down = 0;  // values kept above and below the mode
  std::int64_t offset = 0;        // of the row's values in its chunk's scratch
  double kept = 1, dropped = 0;
  std::int64_t size() const { return up + down + 1; }
};

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
    for (std::int64_t b = 0; b < B; ++b) {
      MARG_EXPECTS(ns[b] >= 0 && ns[b] < INT_MAX,
                   detail::bad_argument(f, ("ns[" + std::to_string(b) + "]").c_str(), ns[b],
                                        "in 0..INT_MAX-1"));
      if (!(ps[b] >= 0 && ps[b] <= 1))
        detail::check_real(f, ("ps[" + std::to_string(b) + "]").c_str(), ps[b], 0, 1, false, false,
                           "in [0, 1]");
    }
    auto r =
        detail::gpu::binomial_rows_on_device<T>(ns.data(), ps.data(), static_cast<int>(B), tail, f);
    return pmf_batch<T>(detail::trusted, std::move(r.values), static_cast<int>(B), r.length,
                        std::move(r.lowers), std::move(r.truncated));
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
      MARG_EXPECTS(ns[b] >= 0 && ns[b] < INT_MAX,
                   detail::bad_argument(f, ("ns[" + std::to_string(b) + "]").c_str(), ns[b],
                                        "in 0..INT_MAX-1"));
      if (!(ps[b] >= 0 && ps[b] <= 1))  // the name is formatted only for the error
        detail::check_real(f, ("ps[" + std::to_string(b) + "]").c_str(), ps[b], 0, 1, false, false,
                           "in [0, 1]");
      room += 16 + 20 * std::sqrt(static_cast<double>(ns[b]) * ps[b] * (1 - ps[b]));
    }
    out.reserve(static_cast<std::size_t>(std::min(room, 1e8)));
    for (std::int64_t b = b0; b < b1; ++b) {
      window& w = win[b];
      const std::int64_t n = ns[b];
      const double p = ps[b];
      w.offset = static_cast<std::int64_t>(out.size());
      if (n == 0 || p == 0 || p == 1) {  // a point mass
        w.mode = w.lo = p == 1 ? n : 0;
        continue;
      }
      const double odds = p / (1 - p), nd = static_cast<double>(n);
      w.mode = std::min<std::int64_t>(n, static_cast<std::int64_t>(std::floor((nd + 1) * p)));
      w.up = walk(side{nd, odds, true}, w.mode, tail, out, w.kept, w.dropped);
      w.down = walk(side{nd, (1 - p) / p, false}, w.mode, tail, out, w.kept, w.dropped);
      w.lo = w.mode - w.down;
    }
  });
  std::int64_t len = 1;
  for (const window& w : win) len = std::max(len, w.size());
  const int L = detail::length_checked(f, "the longest window", len);
  // pass 2: rows normalized into the padded batch
  array<T> a(static_cast<std::size_t>(B) * L);
  T* d = a.data();
  std::vector<std::int64_t> lowers(static_cast<std::size_t>(B));
  std::vector<T> truncated(static_cast<std::size_t>(B));
  detail::parallel_rows(B, grain, [&](std::int64_t c, std::int64_t b0, std::int64_t b1) {
    const double* in = scratch[c].data();
    for (std::int64_t b = b0; b < b1; ++b) {
      const window& w = win[b];
      T* r = d + b * L;
      const double* v = in + w.offset;  // up values, then down values
      for (std::int64_t j = 0; j < w.down; ++j)
        r[w.down - 1 - j] = static_cast<T>(v[w.up + j] / w.kept);
      r[w.down] = static_cast<T>(1 / w.kept);
      for (std::int64_t j = 0; j < w.up; ++j) r[w.down + 1 + j] = static_cast<T>(v[j] / w.kept);
      std::fill(r + w.size(), r + L, T(0));
      lowers[b] = w.lo;
      truncated[b] = static_cast<T>(w.dropped / (w.kept + w.dropped));
    }
  });
  return pmf_batch<T>(detail::trusted, std::move(a), static_cast<int>(B), L, std::move(lowers),
                      std::move(truncated));
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

/// Row b of binomial_count_evidence over N = base .. base + len - 1 (L zeroed
/// by the caller); returns the log of the value the row was divided by. The
/// device kernel (cuda/batch_device.cu) does the same arithmetic.
template <class T>
double count_evidence_row(std::int64_t base, int len, std::int64_t y, double rho,
                          std::int64_t n_max, T* L) {
  const double none = -std::numeric_limits<double>::infinity();
  const std::int64_t lo = std::max(base, y), hi = std::min(base + (len - 1), n_max);
  if (lo > hi) return none;
  if (rho == 0) {  // nothing is reported: L = 1 where y = 0
    if (y != 0) return none;
    std::fill(L + (lo - base), L + (hi - base) + 1, T(1));
    return 0;
  }
  const double q = 1 - rho;
  if (q <= 0) {  // every count is reported
    if (y < lo || y > hi) return none;
    L[y - base] = T(1);
    return 0;
  }
  // L increases while N + 1 < y / rho
  const double top = std::ceil(static_cast<double>(y) / rho - 1);
  const std::int64_t mode = top <= static_cast<double>(lo)   ? lo
                            : top >= static_cast<double>(hi) ? hi
                                                             : static_cast<std::int64_t>(top);
  L[mode - base] = T(1);
  double v = 1;
  for (std::int64_t i = mode; i < hi && v > 0; ++i) {
    v *= static_cast<double>(i + 1) / static_cast<double>(i + 1 - y) * q;
    L[i + 1 - base] = static_cast<T>(v);
  }
  v = 1;
  for (std::int64_t i = mode; i > lo && v > 0; --i) {
    v *= static_cast<double>(i - y) / static_cast<double>(i) / q;
    L[i - 1 - base] = static_cast<T>(v);
  }
  // lgamma_r: lgamma's sign global is shared between threads
  int sign = 0;
  const double md = static_cast<double>(mode), yd = static_cast<double>(y);
  return lgamma_r(md + 1, &sign) - lgamma_r(yd + 1, &sign) - lgamma_r(md - yd + 1, &sign) +
         yd * std::log(rho) + (md - yd) * std::log1p(-rho);
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
  for (std::size_t b = 0; b < rhos.size(); ++b)
    if (!(rhos[b] >= 0 && rhos[b] <= 1))
      detail::check_real(f, ("rhos[" + std::to_string(b) + "]").c_str(), rhos[b], 0, 1, false,
                         false, "in [0, 1]");
  const int len = detail::length_checked(f, "length(x) + length(y) - 1",
                                         std::int64_t{x.length()} + y.length() - 1);
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
  detail::parallel_rows(B, detail::rows_per_chunk(len),
                        [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
                          for (std::int64_t b = b0; b < b1; ++b) {
                            T* L = d + b * len;
                            std::fill(L, L + len, T(0));
                            e.log_scale[b] = count_evidence_row(
                                base[b], len, row_value(observed, b), row_value(rhos, b), n_max, L);
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
