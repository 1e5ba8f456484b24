// pmf_batch<T>: batched algebra and conditioning, one numeric call per
// operation; the per-row host work on marg::cpu_threads() threads over fixed
// chunks of rows (batch_rows.hpp for the row kernels).
#include <marg/distributions/algebra.hpp>
#include <marg/distributions/batch.hpp>
#include <marg/distributions/conditioning.hpp>
#include <marg/distributions/gradients.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/log_convolve.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "batch_rows.hpp"
#include "detail.hpp"
#include "parallel.hpp"
#if MARG_WITH_CUDA
#include "cuda/batch_device.hpp"
#endif

namespace marg {
namespace {

using detail::anti_diagonal_of;
using detail::parallel_rows;
using detail::product_row;
using detail::rows_per_chunk;

// checks v[0..n) finite in parallel; throws naming the first bad entry
template <class T>
void check_finite(const char* f, const char* name, const T* v, std::int64_t n) {
  parallel_rows(n, 1 << 16, [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
    bool ok = true;
    for (std::int64_t i = i0; i < i1; ++i) ok &= std::fabs(v[i]) <= std::numeric_limits<T>::max();
    if (!ok)
      for (std::int64_t i = i0; i < i1; ++i)
        MARG_EXPECTS(std::isfinite(v[i]),
                     detail::bad_real_argument(
                         f, (std::string(name) + "[" + std::to_string(i) + "]").c_str(),
                         static_cast<double>(v[i]), "finite"));
  });
}

// the row sum in double, left to right (the order sample_index scans in)
template <class T>
double row_total(const T* r, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<double>(r[i]);
  return s;
}

// inversion of a row with total `total` at u; zero entries are never drawn
template <class T>
std::int64_t invert(const T* r, int n, double total, double u) {
  const double target = u * total;
  double c = 0;
  int last = 0;
  for (int i = 0; i < n; ++i) {
    if (r[i] == T(0)) continue;
    c += static_cast<double>(r[i]);
    last = i;
    if (c > target) return i;
  }
  return last;
}

// first and last nonzero index of a row (first > last when all zero)
template <class T>
std::pair<std::int64_t, std::int64_t> nonzero_extent(const T* r, int n) {
  std::int64_t a = 0, b = n - 1;
  while (a < n && r[a] == T(0)) ++a;
  while (b > a && r[b] == T(0)) --b;
  return {a, a < n ? b : -1};
}

void check_uniform(const char* f, std::size_t i, double u) {
  MARG_EXPECTS(u >= 0 && u < 1, detail::bad_real_argument(
                                    f, ("u[" + std::to_string(i) + "]").c_str(), u, "in [0, 1)"));
}

// the shape of a flat batch: batch, length >= 1 and `size` = batch * length
std::int64_t check_shape(int batch, int length, std::size_t size) {
  const char* f = "marg::pmf_batch";
  MARG_EXPECTS(batch >= 1, detail::bad_argument(f, "batch", batch, ">= 1"));
  MARG_EXPECTS(length >= 1, detail::bad_argument(f, "length", length, ">= 1"));
  const std::int64_t n = std::int64_t{batch} * length;
  MARG_EXPECTS(size == static_cast<std::size_t>(n),
               detail::bad_argument(f, "values.size()", static_cast<std::int64_t>(size),
                                    ("batch * length = " + std::to_string(n)).c_str()));
  return n;
}

// the log of the smallest non-zero probability of a row: from its
// log-probabilities when given (l non-null), else from its probabilities
// (+inf for a row without one)
template <class T>
double row_min_log(const T* p, const T* l, int n) {
  if (l != nullptr) {
    double lo = INFINITY;
    for (int i = 0; i < n; ++i)
      if (l[i] != -std::numeric_limits<T>::infinity()) lo = std::min(lo, static_cast<double>(l[i]));
    return lo;
  }
  return detail::log_min_positive(p, n);
}

std::string no_mass(int b) {
  return "row " + std::to_string(b) +
         " has no mass (the posterior of an impossible observation); it cannot be sampled";
}

}  // namespace

// ---------------------------------------------------------------- pmf_batch

template <class T>
pmf_batch<T>::pmf_batch(detail::trusted_t, array<T>&& probs, int batch, int length,
                        std::vector<std::int64_t> lowers, std::vector<T> truncated,
                        double log_floor)
    : batch_(batch),
      length_(length),
      lowers_(std::move(lowers)),
      truncated_(std::move(truncated)),
      floor_(log_floor) {
  detail::wait_for_stream(probs.stream());
  auto s = std::make_shared<const detail::batch_storage<T>>(std::move(probs));
  data_ = s->probs.data();
  storage_ = std::move(s);
  if (std::all_of(truncated_.begin(), truncated_.end(), [](T t) { return t == T(0); }))
    truncated_.clear();
}

template <class T>
pmf_batch<T>::pmf_batch(detail::trusted_t, array<T>&& probs, array<T>&& log_probs, int batch,
                        int length, std::vector<std::int64_t> lowers, std::vector<T> truncated)
    : batch_(batch), length_(length), lowers_(std::move(lowers)), truncated_(std::move(truncated)) {
  detail::wait_for_stream(probs.stream());
  detail::wait_for_stream(log_probs.stream());
  if (std::all_of(truncated_.begin(), truncated_.end(), [](T t) { return t == T(0); }))
    truncated_.clear();
  // the rows that keep log-probabilities, and the exact floor, in one pass
  // over the log-probabilities (without them the floor is found on first use)
  std::vector<unsigned char> rows(static_cast<std::size_t>(batch), 0);
  if (!log_probs.empty()) {
    std::vector<double> lows(static_cast<std::size_t>(batch), INFINITY);
    const T* l = log_probs.data();
    parallel_rows(batch, rows_per_chunk(length),
                  [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
                    for (std::int64_t b = b0; b < b1; ++b) {
                      lows[b] = row_min_log<T>(nullptr, l + b * length, length);
                      rows[b] = lows[b] < detail::log_min_normal<T>;
                    }
                  });
    floor_ = *std::min_element(lows.begin(), lows.end());
  }
  std::shared_ptr<const detail::batch_storage<T>> s;
  if (std::any_of(rows.begin(), rows.end(), [](unsigned char r) { return r != 0; }))
    s = std::make_shared<const detail::batch_storage<T>>(std::move(probs), std::move(log_probs),
                                                         std::move(rows));
  else
    s = std::make_shared<const detail::batch_storage<T>>(std::move(probs));
  data_ = s->probs.data();
  logs_ = s->logs.empty() ? nullptr : s->logs.data();
  storage_ = std::move(s);
}

template <class T>
pmf_batch<T>::pmf_batch(const std::vector<pmf<T>>& rows) {
  const char* f = "marg::pmf_batch";
  MARG_EXPECTS(!rows.empty(), std::string(f) + ": rows is empty");
  MARG_EXPECTS(
      rows.size() <= INT_MAX,
      detail::bad_argument(f, "rows.size()", static_cast<std::int64_t>(rows.size()), "<= INT_MAX"));
  const auto B = static_cast<std::int64_t>(rows.size());
  std::int64_t len = 0;
  for (std::int64_t b = 0; b < B; ++b) {
    if (rows[b].empty())  // the name is formatted only for the error
      detail::check_nonempty(f, ("rows[" + std::to_string(b) + "]").c_str(), rows[b]);
    len = std::max(len, rows[b].size());
  }
  len = detail::length_checked(f, "the longest row", len);
  std::vector<std::int64_t> lowers(B);
  std::vector<T> truncated(B);
  for (std::int64_t b = 0; b < B; ++b) {
    // the padded support must not overflow either
    detail::add_checked(f, "lower + length - 1", rows[b].lower(), len - 1);
    lowers[b] = rows[b].lower();
    truncated[b] = rows[b].truncated_mass();
  }
  array<T> a(static_cast<std::size_t>(B * len));
  T* d = a.data();
  // rows below T's range keep their log-probabilities: so does the batch
  const bool logs =
      std::any_of(rows.begin(), rows.end(), [](const pmf<T>& x) { return x.has_log_probs(); });
  array<T> l(logs ? static_cast<std::size_t>(B * len) : 0);
  T* dl = l.data();
  parallel_rows(B, rows_per_chunk(len), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t n = rows[b].size();
      std::copy(rows[b].data(), rows[b].data() + n, d + b * len);
      std::fill(d + b * len + n, d + (b + 1) * len, T(0));
      if (!logs) continue;
      const std::vector<T> lb = rows[b].log_probs();
      std::copy(lb.begin(), lb.end(), dl + b * len);
      std::fill(dl + b * len + n, dl + (b + 1) * len, -std::numeric_limits<T>::infinity());
    }
  });
  *this = pmf_batch(detail::trusted, std::move(a), std::move(l), static_cast<int>(B),
                    static_cast<int>(len), std::move(lowers), std::move(truncated));
}

template <class T>
pmf_batch<T>::pmf_batch(int batch, int length, std::vector<std::int64_t> lowers,
                        const std::vector<T>& values, bool normalize) {
  const std::int64_t n = check_shape(batch, length, values.size());
  array<T> a(static_cast<std::size_t>(n));
  T* d = a.data();
  parallel_rows(n, 1 << 16, [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
    std::copy(values.data() + i0, values.data() + i1, d + i0);
  });
  *this = pmf_batch(batch, length, std::move(lowers), std::move(a), normalize);
}

template <class T>
pmf_batch<T>::pmf_batch(int batch, int length, std::vector<std::int64_t> lowers, array<T>&& values,
                        bool normalize) {
  const char* f = "marg::pmf_batch";
  const std::int64_t n = check_shape(batch, length, values.size());
  MARG_EXPECTS(lowers.size() == static_cast<std::size_t>(batch),
               detail::bad_argument(f, "lowers.size()", static_cast<std::int64_t>(lowers.size()),
                                    ("batch = " + std::to_string(batch)).c_str()));
  for (int b = 0; b < batch; ++b)
    detail::add_checked(f, "lowers[b] + length - 1", lowers[b], length - 1);
  detail::wait_for_stream(values.stream());
  detail::check_weights(f, "values", values.data(), n);
  T* d = values.data();
  parallel_rows(batch, rows_per_chunk(length), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      T* r = d + b * length;
      double s = row_total(r, length);
      MARG_EXPECTS(s > 0, std::string(f) + ": row " + std::to_string(b) + " of values is all zero");
      if (normalize && std::isfinite(s)) {
        for (int i = 0; i < length; ++i) r[i] = static_cast<T>(r[i] / s);
      } else if (normalize) {  // the double sum overflowed
        long double sl = 0;
        for (int i = 0; i < length; ++i) sl += r[i];
        for (int i = 0; i < length; ++i) r[i] = static_cast<T>(r[i] / sl);
      }
    }
  });
  *this = pmf_batch(detail::trusted, std::move(values), batch, length, std::move(lowers));
}

template <class T>
T pmf_batch<T>::truncated_mass(int b) const {
  MARG_EXPECTS(b >= 0 && b < batch_,
               detail::bad_argument("marg::pmf_batch::truncated_mass", "b", b, "in 0..batch()-1"));
  return truncated_.empty() ? T(0) : truncated_[b];
}

template <class T>
T pmf_batch<T>::prob(int b, std::int64_t k) const {
  MARG_EXPECTS(b >= 0 && b < batch_,
               detail::bad_argument("marg::pmf_batch::prob", "b", b, "in 0..batch()-1"));
  const std::int64_t lo = lowers_[b];
  if (k < lo || k > lo + (length_ - 1)) return T(0);
  return data_[std::int64_t{b} * length_ + (k - lo)];
}

template <class T>
T pmf_batch<T>::log_prob(int b, std::int64_t k) const {
  MARG_EXPECTS(b >= 0 && b < batch_,
               detail::bad_argument("marg::pmf_batch::log_prob", "b", b, "in 0..batch()-1"));
  const std::int64_t lo = lowers_[b];
  if (k < lo || k > lo + (length_ - 1)) return -std::numeric_limits<T>::infinity();
  const std::int64_t i = std::int64_t{b} * length_ + (k - lo);
  return logs_ ? logs_[i] : std::log(data_[i]);
}

template <class T>
double pmf_batch<T>::log_floor() const {
  if (!std::isnan(floor_) || !storage_) return floor_;
  const auto& s = *storage_;
  std::call_once(s.floor_once, [&] {
    std::vector<double> lows(static_cast<std::size_t>(batch_));
    detail::prepare_host_access(data_, static_cast<std::size_t>(batch_) * length_ * sizeof(T),
                                s.probs.stream());
    parallel_rows(
        batch_, rows_per_chunk(length_), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
          for (std::int64_t b = b0; b < b1; ++b)
            lows[b] = row_min_log(data_ + b * length_,
                                  logs_ != nullptr ? logs_ + b * length_ : nullptr, length_);
        });
    s.floor = *std::min_element(lows.begin(), lows.end());
  });
  return s.floor;
}

template <class T>
bool pmf_batch<T>::row_has_log_probs(int b) const {
  MARG_EXPECTS(b >= 0 && b < batch_, detail::bad_argument("marg::pmf_batch::row_has_log_probs", "b",
                                                          b, "in 0..batch()-1"));
  return logs_ != nullptr && storage_->log_rows[b] != 0;
}

template <class T>
pmf<T> pmf_batch<T>::row(int b) const {
  MARG_EXPECTS(b >= 0 && b < batch_,
               detail::bad_argument("marg::pmf_batch::row", "b", b, "in 0..batch()-1"));
  const T* r = data_ + std::int64_t{b} * length_;
  const bool logs = row_has_log_probs(b);
  if (!logs && std::all_of(r, r + length_, [](T v) { return v == T(0); })) return pmf<T>();
  array<T> a(static_cast<std::size_t>(length_));
  std::copy(r, r + length_, a.data());
  if (!logs) return pmf<T>(detail::trusted, std::move(a), lowers_[b], truncated_mass(b));
  array<T> l(static_cast<std::size_t>(length_));
  std::copy(logs_ + std::int64_t{b} * length_, logs_ + std::int64_t{b + 1} * length_, l.data());
  return pmf<T>(detail::trusted, std::move(a), std::move(l), lowers_[b], truncated_mass(b));
}

template <class T>
const std::vector<double>& pmf_batch<T>::totals() const {
  const auto& s = *storage_;
  std::call_once(s.once, [&] {
    s.totals.resize(static_cast<std::size_t>(batch_));
    parallel_rows(batch_, rows_per_chunk(length_),
                  [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
                    for (std::int64_t b = b0; b < b1; ++b)
                      s.totals[b] = row_total(data_ + b * length_, length_);
                  });
  });
  return s.totals;
}

template <class T>
int pmf_batch<T>::device() const {
  return storage_ ? storage_->probs.device() : -1;
}

template <class T>
std::int64_t pmf_batch<T>::sample_index(int b, double u) const {
  const char* f = "marg::pmf_batch::sample";
  MARG_EXPECTS(b >= 0 && b < batch_, detail::bad_argument(f, "b", b, "in 0..batch()-1"));
  check_uniform(f, 0, u);
  const double total = totals()[b];
  MARG_EXPECTS(total > 0, std::string(f) + ": " + no_mass(b));
  return invert(data_ + std::int64_t{b} * length_, length_, total, u);
}

template <class T>
std::vector<std::int64_t> pmf_batch<T>::sample_with(const std::vector<double>& u,
                                                    int per_row) const {
  const char* f = "marg::pmf_batch::sample";
  MARG_EXPECTS(per_row >= 1, detail::bad_argument(f, "per_row", per_row, ">= 1"));
  const std::int64_t n = std::int64_t{batch_} * per_row;
  MARG_EXPECTS(u.size() == static_cast<std::size_t>(n),
               detail::bad_argument(f, "u.size()", static_cast<std::int64_t>(u.size()),
                                    ("batch() * per_row = " + std::to_string(n)).c_str()));
  std::vector<std::int64_t> r(static_cast<std::size_t>(n));
  if (batch_ == 0) return r;
  const auto& tot = totals();
  parallel_rows(batch_, rows_per_chunk(length_ + per_row),
                [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
                  std::vector<int> order(per_row > 1 ? per_row : 0);  // one per chunk
                  for (std::int64_t b = b0; b < b1; ++b) {
                    const double* ub = u.data() + b * per_row;
                    for (int j = 0; j < per_row; ++j) check_uniform(f, b * per_row + j, ub[j]);
                    MARG_EXPECTS(tot[b] > 0, std::string(f) + ": " + no_mass(static_cast<int>(b)));
                    const T* row = data_ + b * length_;
                    std::int64_t* out = r.data() + b * per_row;
                    if (per_row == 1) {
                      out[0] = lowers_[b] + invert(row, length_, tot[b], ub[0]);
                      continue;
                    }
                    // the uniforms in increasing order, answered in one pass over the row
                    std::iota(order.begin(), order.end(), 0);
                    std::sort(order.begin(), order.end(), [&](int x, int y) {
                      return ub[x] < ub[y] || (ub[x] == ub[y] && x < y);
                    });
                    double c = 0;
                    int i = 0, last = 0;
                    for (int j : order) {
                      const double target = ub[j] * tot[b];
                      while (i < length_ && c <= target) {
                        if (row[i] != T(0)) c += static_cast<double>(row[i]), last = i;
                        ++i;
                      }
                      // c > target: `last` is the entry whose cumulative sum first exceeded it
                      out[j] = lowers_[b] + last;
                    }
                  }
                });
  return r;
}

// ---------------------------------------------------------------- algebra

namespace {

// checks and returns the batch stride of y: length for B rows, 0 for one row
template <class T>
std::int64_t stride_of_second(const char* f, const pmf_batch<T>& x, const pmf_batch<T>& y) {
  MARG_EXPECTS(x.batch() >= 1, std::string(f) + ": x is an empty batch");
  MARG_EXPECTS(
      y.batch() == x.batch() || y.batch() == 1,
      detail::bad_argument(f, "y.batch()", y.batch(),
                           ("x.batch() = " + std::to_string(x.batch()) + " or 1").c_str()));
  // checked only: the operation then runs on the current device (pool memory is managed)
  const detail::operands_device same(f, "x", x.device(), "y", y.device());
  return y.batch() == 1 ? 0 : y.length();
}

// the lower bound of y's row b (y of x.batch() rows or of 1)
template <class T>
std::int64_t lower_of(const pmf_batch<T>& y, std::int64_t b) {
  return y.lowers()[y.batch() == 1 ? 0 : b];
}

template <class T>
T truncated_of(const std::vector<T>& t, std::int64_t b) {
  return t.empty() ? T(0) : t[t.size() == 1 ? 0 : b];
}

template <class T>
std::vector<T> combine_truncated(int B, const std::vector<T>& a, const std::vector<T>& b) {
  if (a.empty() && b.empty()) return {};
  std::vector<T> r(B);
  for (int i = 0; i < B; ++i)
    r[i] = detail::combine_truncated(truncated_of(a, i), truncated_of(b, i));
  return r;
}

// The second term of a batched sum: the rows of a batch, or one pmf read by
// every row (stride 0).
template <class T>
struct term_rows {
  const T* probs;
  const T* logs;  // row-major log-probabilities, or nullptr when no row keeps them
  int len;
  std::int64_t stride;               // between rows; 0: one row shared by all
  std::vector<unsigned char> flags;  // per row (one when shared): keeps log-probabilities
  double floor;                      // bound on every non-zero log-probability (NaN: unknown)
  const std::vector<std::int64_t>& lowers;
  const std::vector<T>& truncated;

  std::int64_t at(std::int64_t b) const { return stride == 0 ? 0 : b; }
  bool keeps_logs(std::int64_t b) const { return logs != nullptr && flags[at(b)] != 0; }
  const T* p(std::int64_t b) const { return probs + at(b) * len; }
  // the log-probabilities of row b into out (from the logs where kept)
  void logs_into(std::int64_t b, T* out) const {
    if (logs != nullptr) {
      std::copy(logs + at(b) * len, logs + (at(b) + 1) * len, out);
    } else {
      const T* q = p(b);
      for (int i = 0; i < len; ++i) out[i] = std::log(q[i]);
    }
  }
  double row_min(std::int64_t b) const {
    return row_min_log(p(b), logs != nullptr ? logs + at(b) * len : nullptr, len);
  }
};

template <class T>
term_rows<T> rows_of(const pmf_batch<T>& y, std::int64_t stride) {
  std::vector<unsigned char> flags(static_cast<std::size_t>(y.batch()));
  for (int b = 0; b < y.batch(); ++b) flags[b] = y.row_has_log_probs(b);
  return {y.data(), y.log_data(),  y.length(), stride,
          flags,    y.log_floor(), y.lowers(), y.truncated_masses()};
}

// x_b + y_b for every row. The linear product of all rows is one
// convolve_batched call, as it always was; a row whose terms keep
// log-probabilities, or whose smallest products fall below T's normal range,
// also gets a log_convolve_batched row (one call for all such rows), which
// gives its elements below the linear product's accuracy floor exactly (the
// floor and the mixing as in x + y of two pmfs). The batches' log floors
// decide without reading the rows when no product can leave T's range.
template <class T>
pmf_batch<T> add(const char* f, const pmf_batch<T>& x, const term_rows<T>& y) {
  const int B = x.batch(), m = x.length(), n = y.len;
  const int len = detail::length_checked(f, "length(x) + length(y) - 1", std::int64_t{m} + n - 1);
  std::vector<std::int64_t> lowers(B);
  for (int b = 0; b < B; ++b) {
    const std::int64_t yl = y.lowers[y.lowers.size() == 1 ? 0 : b];
    lowers[b] = detail::add_checked(f, "lower(x) + lower(y)", x.lowers()[b], yl);
    detail::add_checked(f, "upper(x) + upper(y)", x.lowers()[b] + (m - 1), yl + (n - 1));
  }
  std::vector<T> truncated = combine_truncated(B, x.truncated_masses(), y.truncated);
  array<T> r(static_cast<std::size_t>(B) * len);
  convolve_batched<T>(m, n, x.data(), 1, m, y.probs, 1, y.stride, r.data(), 1, len, B);
  const double normal = detail::log_min_normal<T>;
  if (!x.has_log_probs() && y.logs == nullptr && x.log_floor() + y.floor >= normal)
    return pmf_batch<T>(detail::trusted, std::move(r), B, len, std::move(lowers),
                        std::move(truncated), x.log_floor() + y.floor);
  // the rows that need log space
  std::vector<unsigned char> slow(static_cast<std::size_t>(B), 0);
  std::vector<double> lows(static_cast<std::size_t>(B));
  const double shared_min = y.stride == 0 ? y.row_min(0) : 0;
  parallel_rows(B, rows_per_chunk(m + n), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const double lx =
          row_min_log(x.data() + b * m, x.has_log_probs() ? x.log_data() + b * m : nullptr, m);
      lows[b] = lx + (y.stride == 0 ? shared_min : y.row_min(b));
      slow[b] = x.row_has_log_probs(static_cast<int>(b)) || y.keeps_logs(b) || lows[b] < normal;
    }
  });
  std::vector<std::int64_t> rows;
  for (int b = 0; b < B; ++b)
    if (slow[b]) rows.push_back(b);
  if (rows.empty())
    return pmf_batch<T>(detail::trusted, std::move(r), B, len, std::move(lowers),
                        std::move(truncated), *std::min_element(lows.begin(), lows.end()));
  const auto k = static_cast<std::int64_t>(rows.size());
  const bool shared = y.stride == 0;
  array<T> la(static_cast<std::size_t>(k * m)), lb(static_cast<std::size_t>(shared ? n : k * n));
  array<T> lr(static_cast<std::size_t>(k * len));
  parallel_rows(k, rows_per_chunk(m + n), [&](std::int64_t, std::int64_t j0, std::int64_t j1) {
    for (std::int64_t j = j0; j < j1; ++j) {
      const std::int64_t b = rows[j];
      if (x.has_log_probs()) {
        std::copy(x.log_data() + b * m, x.log_data() + (b + 1) * m, la.data() + j * m);
      } else {
        const T* p = x.data() + b * m;
        for (int i = 0; i < m; ++i) la.data()[j * m + i] = std::log(p[i]);
      }
      if (!shared) y.logs_into(b, lb.data() + j * n);
    }
  });
  if (shared) y.logs_into(0, lb.data());
  log_convolve_batched<T>(m, n, la.data(), 1, m, lb.data(), 1, shared ? 0 : n, lr.data(), 1, len,
                          static_cast<int>(k), lr.stream());
  detail::wait_for_stream(r.stream());
  detail::wait_for_stream(lr.stream());
  // each log row: the linear value at or above the floor, the log-space one below it
  const T keep_floor = detail::underflow_floor<T>(static_cast<long double>(std::min(m, n)));
  std::vector<unsigned char> tiny(static_cast<std::size_t>(k), 0);
  parallel_rows(k, rows_per_chunk(len), [&](std::int64_t, std::int64_t j0, std::int64_t j1) {
    for (std::int64_t j = j0; j < j1; ++j) {
      const std::int64_t b = rows[j];
      T* p = r.data() + b * len;
      T* l = lr.data() + j * len;
      // inputs that keep log-probabilities lost values under denorm_min in
      // their probabilities: the linear product holds above the underflow floor
      const T floor = x.row_has_log_probs(static_cast<int>(b)) || y.keeps_logs(b)
                          ? keep_floor
                          : std::numeric_limits<T>::min();
      for (int i = 0; i < len; ++i) {
        if (p[i] >= floor) {
          l[i] = std::log(p[i]);
        } else {
          p[i] = std::exp(l[i]);
          tiny[j] |= l[i] != -std::numeric_limits<T>::infinity() && l[i] < normal;
        }
      }
    }
  });
  if (std::none_of(tiny.begin(), tiny.end(), [](unsigned char t) { return t != 0; }))
    return pmf_batch<T>(detail::trusted, std::move(r), array<T>(), B, len, std::move(lowers),
                        std::move(truncated));
  // the batch keeps log-probabilities: the log rows' own, the logs of the others
  array<T> logs(static_cast<std::size_t>(B) * len);
  std::vector<std::int64_t> index(static_cast<std::size_t>(B), -1);
  for (std::int64_t j = 0; j < k; ++j) index[rows[j]] = j;
  parallel_rows(B, rows_per_chunk(len), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      T* o = logs.data() + b * len;
      if (index[b] >= 0) {
        std::copy(lr.data() + index[b] * len, lr.data() + (index[b] + 1) * len, o);
      } else {
        const T* p = r.data() + b * len;
        for (int i = 0; i < len; ++i) o[i] = std::log(p[i]);
      }
    }
  });
  return pmf_batch<T>(detail::trusted, std::move(r), std::move(logs), B, len, std::move(lowers),
                      std::move(truncated));
}

}  // namespace

template <class T>
pmf_batch<T> operator+(const pmf_batch<T>& x, const pmf_batch<T>& y) {
  const char* f = "marg::operator+ (pmf_batch)";
  const std::int64_t sq = stride_of_second(f, x, y);
  const detail::operands_device on(f, "x", x.device(), "y", y.device());
  return add(f, x, rows_of(y, sq));
}

template <class T>
pmf_batch<T> operator+(const pmf_batch<T>& x, const pmf<T>& y) {
  const char* f = "marg::operator+ (pmf_batch, pmf)";
  MARG_EXPECTS(x.batch() >= 1, std::string(f) + ": x is an empty batch");
  detail::check_nonempty(f, "y", y);
  const detail::operands_device on(f, "x", x.device(), "y", y.device());
  const std::vector<T> yt =
      y.truncated_mass() == T(0) ? std::vector<T>{} : std::vector<T>{y.truncated_mass()};
  const std::vector<std::int64_t> yl{y.lower()};
  const int n = static_cast<int>(y.size());
  const double floor = row_min_log(y.data(), y.log_data(), n);
  return add(f, x,
             term_rows<T>{y.data(), y.log_data(), n, 0,
                          std::vector<unsigned char>{static_cast<unsigned char>(y.has_log_probs())},
                          floor, yl, yt});
}

template <class T>
pmf_batch<T> operator-(const pmf_batch<T>& x) {
  const char* f = "marg::operator- (pmf_batch)";
  const int B = x.batch(), L = x.length();
  std::vector<std::int64_t> lowers(B);
  for (int b = 0; b < B; ++b) {
    const std::int64_t up = detail::add_checked(f, "upper(x)", x.lowers()[b], L - 1);
    lowers[b] = detail::sub_checked(f, "-upper(x)", 0, up);
    detail::sub_checked(f, "-lower(x)", 0, x.lowers()[b]);
  }
#if MARG_WITH_CUDA
  const detail::device_guard on(x.device());        // x's rows are reversed on x's device
  if (detail::gpu::active() && !x.has_log_probs())  // rows stay on the device
    return pmf_batch<T>(detail::trusted, detail::gpu::reverse_rows_on_device(x.data(), B, L), B, L,
                        std::move(lowers), x.truncated_masses(), detail::known_log_floor(x));
#endif
  array<T> r(static_cast<std::size_t>(B) * L);
  array<T> l(x.has_log_probs() ? static_cast<std::size_t>(B) * L : 0);
  T* d = r.data();
  parallel_rows(B, rows_per_chunk(L), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const T* s = x.data() + b * L;
      std::reverse_copy(s, s + L, d + b * L);
      if (x.has_log_probs())
        std::reverse_copy(x.log_data() + b * L, x.log_data() + (b + 1) * L, l.data() + b * L);
    }
  });
  if (x.has_log_probs())
    return pmf_batch<T>(detail::trusted, std::move(r), std::move(l), B, L, std::move(lowers),
                        x.truncated_masses());
  return pmf_batch<T>(detail::trusted, std::move(r), B, L, std::move(lowers), x.truncated_masses(),
                      detail::known_log_floor(x));
}

template <class T>
pmf_batch<T> operator-(const pmf_batch<T>& x, const pmf_batch<T>& y) {
  const detail::operands_device on("marg::operator- (pmf_batch)", "x", x.device(), "y", y.device());
  return x + (-y);
}

// ---------------------------------------------------------------- observation

namespace {

template <class T>
void check_sums(const char* f, const pmf_batch<T>& x, const std::vector<std::int64_t>& k) {
  MARG_EXPECTS(k.size() == static_cast<std::size_t>(x.batch()),
               detail::bad_argument(f, "k.size()", static_cast<std::int64_t>(k.size()),
                                    ("x.batch() = " + std::to_string(x.batch())).c_str()));
}

// checks a row-major B x (m + n - 1) vector over the sums; returns m + n - 1
template <class T>
int check_over_sums(const char* f, const char* name, const pmf_batch<T>& x, const pmf_batch<T>& y,
                    const std::vector<T>& v) {
  const int B = x.batch();
  const int len = detail::sum_length(f, x, y);
  MARG_EXPECTS(
      v.size() == static_cast<std::size_t>(B) * len,
      detail::bad_argument(
          f, (std::string(name) + ".size()").c_str(), static_cast<std::int64_t>(v.size()),
          ("batch * (length(x) + length(y) - 1) = " + std::to_string(std::int64_t{B} * len))
              .c_str()));
  return len;
}

// band(q_b, m)^T g_b and band(p_b, n)^T g_b for every row: the two batched
// gradient calls, complete on return
template <class T>
std::pair<array<T>, array<T>> gradient_rows(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                            std::int64_t sq, const T* g, int len) {
  const int B = x.batch(), m = x.length(), n = y.length();
  array<T> gp(static_cast<std::size_t>(B) * m), gq(static_cast<std::size_t>(B) * n);
  convolve_grad_p_batched<T>(m, n, g, 1, len, y.data(), 1, sq, gp.data(), 1, m, B);
  convolve_grad_q_batched<T>(m, n, g, 1, len, x.data(), 1, m, gq.data(), 1, n, B);
  detail::wait_for_stream(gp.stream());
  detail::wait_for_stream(gq.stream());
  return {std::move(gp), std::move(gq)};
}

template <class T>
std::vector<std::int64_t> lowers_of_second(const pmf_batch<T>& x, const pmf_batch<T>& y) {
  std::vector<std::int64_t> r(x.batch());
  for (int b = 0; b < x.batch(); ++b) r[b] = lower_of(y, b);
  return r;
}

// whether the normalized products `out` of r lost a non-zero value below T's
// normal range
template <class T>
bool lost_below_range(const product_row<T>& r, const T* out) {
  for (std::int64_t i = 0; i < r.n; ++i)
    if (out[i] < std::numeric_limits<T>::min() && r.a[i] != T(0) && r.b[i * r.sb] != T(0))
      return true;
  return false;
}

// whether row b of x + y runs in log space: a term keeps log-probabilities
template <class T>
bool log_row(const pmf_batch<T>& x, const pmf_batch<T>& y, std::int64_t b) {
  return x.row_has_log_probs(static_cast<int>(b)) ||
         y.row_has_log_probs(y.batch() == 1 ? 0 : static_cast<int>(b));
}

// the rows of x + y that run in log space, in order (none when neither batch
// keeps log-probabilities: nothing is read)
template <class T>
std::vector<std::int64_t> log_rows_of(const pmf_batch<T>& x, const pmf_batch<T>& y) {
  std::vector<std::int64_t> r;
  if (!x.has_log_probs() && !y.has_log_probs()) return r;
  for (int b = 0; b < x.batch(); ++b)
    if (log_row(x, y, b)) r.push_back(b);
  return r;
}

// log of entry i of row b of x (its log-probability where kept)
template <class T>
long double log_entry(const pmf_batch<T>& x, std::int64_t b, std::int64_t i) {
  const std::int64_t at = b * x.length() + i;
  return x.has_log_probs() ? static_cast<long double>(x.log_data()[at])
                           : std::log(static_cast<long double>(x.data()[at]));
}

// the log-sum-exp of w (-inf when every term is)
inline long double log_sum(const std::vector<long double>& w) {
  long double top = -INFINITY;
  for (const long double v : w) top = std::max(top, v);
  if (top == -INFINITY) return top;
  long double s = 0;
  for (const long double v : w) s += std::exp(v - top);
  return top + std::log(s);
}

// inversion on log weights w with log-sum-exp total: the first index whose
// running sum of exp(w - total) exceeds u, never a -inf weight
inline std::int64_t pick_log(const std::vector<long double>& w, long double total, double u) {
  long double c = 0;
  std::int64_t last = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] == -INFINITY) continue;
    c += std::exp(w[i] - total);
    last = static_cast<std::int64_t>(i);
    if (c > u) return last;
  }
  return last;
}

// Posterior rows written from pmfs (the log-space rows of a batched
// conditioning) into a padded batch; the batch keeps log-probabilities when
// some written row does.
template <class T>
class posterior_rows {
 public:
  posterior_rows(array<T>& probs, int batch, int length)
      : probs_(probs), length_(length), own_(static_cast<std::size_t>(batch), 0) {}
  // row b := post (empty: all zero) on the padded support from `lower`
  void put(std::int64_t b, const pmf<T>& post, std::int64_t lower) {
    T* p = probs_.data() + b * length_;
    std::fill(p, p + length_, T(0));
    if (post.empty()) return;
    const std::int64_t at = post.lower() - lower;
    std::copy(post.data(), post.data() + post.size(), p + at);
    if (!post.has_log_probs()) return;
    if (logs_.empty()) logs_ = array<T>(own_.size() * static_cast<std::size_t>(length_));
    T* l = logs_.data() + b * length_;
    std::fill(l, l + length_, -std::numeric_limits<T>::infinity());
    std::copy(post.log_data(), post.log_data() + post.size(), l + at);
    own_[b] = 1;
  }
  // the log-probabilities of the batch (empty when no row kept them)
  array<T> finish() {
    if (logs_.empty()) return {};
    const auto B = static_cast<std::int64_t>(own_.size());
    parallel_rows(B, rows_per_chunk(length_), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
      for (std::int64_t b = b0; b < b1; ++b) {
        if (own_[b]) continue;
        const T* p = probs_.data() + b * length_;
        T* l = logs_.data() + b * length_;
        for (int i = 0; i < length_; ++i) l[i] = std::log(p[i]);
      }
    });
    return std::move(logs_);
  }

 private:
  array<T>& probs_;
  int length_;
  std::vector<unsigned char> own_;
  array<T> logs_;
};

}  // namespace

template <class T>
std::vector<T> log_prob_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                            const std::vector<std::int64_t>& k) {
  const char* f = "marg::log_prob_sum (pmf_batch)";
  const std::int64_t sq = stride_of_second(f, x, y);
  check_sums(f, x, k);
  const int m = x.length(), n = y.length();
  std::vector<T> r(x.batch());
  parallel_rows(x.batch(), rows_per_chunk(std::min(m, n)),
                [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
                  for (std::int64_t b = b0; b < b1; ++b) {
                    if (log_row(x, y, b)) continue;  // below, in log space
                    const auto d = anti_diagonal_of(x.lowers()[b], m, lower_of(y, b), n, k[b]);
                    long double s = 0;
                    if (!d.empty()) {
                      const auto pr =
                          detail::diagonal_products(x.data() + b * m, y.data() + b * sq, d);
                      bool safe;
                      s = detail::sum_double(pr, safe);
                      if (!safe) s = detail::sum_long(pr);
                    }
                    r[b] = static_cast<T>(std::log(s));
                  }
                });
  // rows whose terms keep log-probabilities: the log-space diagonal of log_prob_sum
  for (const std::int64_t b : log_rows_of(x, y)) {
    const pmf<T> xb = x.row(static_cast<int>(b)),
                 yb = y.row(y.batch() == 1 ? 0 : static_cast<int>(b));
    r[b] = xb.empty() || yb.empty() ? -std::numeric_limits<T>::infinity()
                                    : marg::log_prob_sum(xb, yb, k[b]);
  }
  return r;
}

namespace {

// checks a batch_evidence against the batches it is applied to; returns its row length
template <class T>
int check_evidence(const char* f, const pmf_batch<T>& x, const pmf_batch<T>& y,
                   const batch_evidence<T>& evidence) {
  const int len = detail::sum_length(f, x, y);
  MARG_EXPECTS(evidence.batch == x.batch(),
               detail::bad_argument(f, "evidence.batch", evidence.batch,
                                    ("x.batch() = " + std::to_string(x.batch())).c_str()));
  MARG_EXPECTS(
      evidence.length == len,
      detail::bad_argument(f, "evidence.length", evidence.length,
                           ("length(x) + length(y) - 1 = " + std::to_string(len)).c_str()));
  MARG_EXPECTS(evidence.values.size() == static_cast<std::size_t>(x.batch()) * len,
               detail::bad_argument(f, "evidence.values.size()",
                                    static_cast<std::int64_t>(evidence.values.size()),
                                    "evidence.batch * evidence.length"));
  MARG_EXPECTS(evidence.log_scale.empty() ||
                   evidence.log_scale.size() == static_cast<std::size_t>(x.batch()),
               detail::bad_argument(f, "evidence.log_scale.size()",
                                    static_cast<std::int64_t>(evidence.log_scale.size()),
                                    "0 or evidence.batch"));
  for (std::size_t b = 0; b < evidence.log_scale.size(); ++b)
    MARG_EXPECTS(
        !std::isnan(evidence.log_scale[b]) && evidence.log_scale[b] < INFINITY,
        detail::bad_real_argument(f, ("evidence.log_scale[" + std::to_string(b) + "]").c_str(),
                                  evidence.log_scale[b], "not NaN and < +inf"));
  return len;
}

// the posteriors given the likelihood rows at `like` (checked; host or pool
// memory), per-row log scales added to the log likelihoods when given (a row
// whose scale is -inf is impossible)
template <class T>
batch_sum_posterior<T> posterior_given_evidence(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                                std::int64_t sq, const T* like, int len,
                                                const std::vector<double>& log_scale) {
  const int B = x.batch(), m = x.length(), n = y.length();
  // named references, not a structured binding: the lambda below captures
  // them, which clang before 16 rejects for bindings
  auto rows = gradient_rows(x, y, sq, like, len);
  array<T>& gp = rows.first;
  array<T>& gq = rows.second;
  std::vector<T> ll(B);
  // rows for log space: terms that keep log-probabilities, posteriors below
  // T's range, or products that leave it (where none can, a row the linear
  // products find impossible is impossible)
  std::vector<unsigned char> redo(static_cast<std::size_t>(B), 0);
  // every product of a likelihood and a probability in T's range: no row
  // needs the check of its own (the batches' floors, one pass over the likelihood)
  const bool in_range = detail::log_min_positive(like, std::int64_t{B} * len) +
                            std::min(x.log_floor(), y.log_floor()) >=
                        detail::log_min_normal<T>;
  // posterior rows: p ⊙ gp and q ⊙ gq, normalized in place (the products in a
  // wider type: in T they can underflow while the posterior is not small)
  parallel_rows(B, rows_per_chunk(m + n), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      T* px = gp.data() + b * m;
      T* py = gq.data() + b * n;
      const product_row<T> rx{x.data() + b * m, px, 1, m}, ry{y.data() + b * sq, py, 1, n};
      bool tx = false, ty = false;
      const long double sx = detail::normalize_into(rx, px, 1, &tx);
      const long double sy = detail::normalize_into(ry, py, 1, &ty);
      const double scale = log_scale.empty() ? 0 : log_scale[b];
      // a posterior value below T's range is kept in log space too, and
      // products of likelihoods and probabilities that leave T's range (the
      // linear correlations lose them) are formed in log space
      redo[b] = scale > -INFINITY &&
                (log_row(x, y, b) || tx || ty ||
                 (!in_range && detail::soft_products_underflow(
                                   x.data() + b * m, m, y.data() + b * sq, n, like + b * len)));
      if (sx > 0 && sy > 0 && scale > -INFINITY) {
        // as sample_given_evidence: the row's log in T, its scale added in double
        ll[b] = log_scale.empty()
                    ? static_cast<T>(std::log(sx))
                    : static_cast<T>(static_cast<double>(static_cast<T>(std::log(sx))) + scale);
      } else {
        ll[b] = -std::numeric_limits<T>::infinity();
        std::fill(px, px + m, T(0));
        std::fill(py, py + n, T(0));
      }
    }
  });
  // the log-space rows: condition_on_sum of the rows as pmfs (log_convolve
  // correlations where the terms or the products are below T's range)
  posterior_rows<T> ox(gp, B, m), oy(gq, B, n);
  for (std::int64_t b = 0; b < B; ++b) {
    if (!redo[b]) continue;
    const pmf<T> xb = x.row(static_cast<int>(b)), yb = y.row(sq == 0 ? 0 : static_cast<int>(b));
    sum_posterior<T> post{-std::numeric_limits<T>::infinity(), {}, {}};
    if (!xb.empty() && !yb.empty())
      post = marg::condition_on_sum(xb, yb, std::vector<T>(like + b * len, like + (b + 1) * len));
    const double scale = log_scale.empty() ? 0 : log_scale[b];
    ll[b] = post.log_likelihood == -std::numeric_limits<T>::infinity() || log_scale.empty()
                ? post.log_likelihood
                : static_cast<T>(static_cast<double>(post.log_likelihood) + scale);
    const bool possible = post.log_likelihood > -std::numeric_limits<T>::infinity();
    ox.put(b, possible ? post.first : pmf<T>(), x.lowers()[b]);
    oy.put(b, possible ? post.second : pmf<T>(), lower_of(y, b));
  }
  array<T> lx = ox.finish(), ly = oy.finish();
  return {
      std::move(ll), pmf_batch<T>(detail::trusted, std::move(gp), std::move(lx), B, m, x.lowers()),
      pmf_batch<T>(detail::trusted, std::move(gq), std::move(ly), B, n, lowers_of_second(x, y))};
}

}  // namespace

template <class T>
batch_sum_posterior<T> condition_on_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                        const std::vector<T>& likelihood) {
  const char* f = "marg::condition_on_sum (pmf_batch)";
  const std::int64_t sq = stride_of_second(f, x, y);
  const int len = check_over_sums(f, "likelihood", x, y, likelihood);
  detail::check_weights(f, "likelihood", likelihood.data(),
                        static_cast<std::int64_t>(likelihood.size()));
  return posterior_given_evidence(x, y, sq, likelihood.data(), len, {});
}

template <class T>
batch_sum_posterior<T> condition_on_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                        const batch_evidence<T>& evidence) {
  const char* f = "marg::condition_on_sum (pmf_batch, batch_evidence)";
  const std::int64_t sq = stride_of_second(f, x, y);
  const int len = check_evidence(f, x, y, evidence);
  // the rows are checked on the host (with the CUDA backend their pages come
  // over once, and go back for the two batched products)
  const T* like = evidence.values.data();
  detail::prepare_host_access(like, evidence.values.size() * sizeof(T), evidence.values.stream());
  detail::check_weights(f, "evidence.values", like,
                        static_cast<std::int64_t>(evidence.values.size()));
  return posterior_given_evidence(x, y, sq, like, len, evidence.log_scale);
}

template <class T>
batch_sum_posterior<T> condition_on_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                        const std::vector<std::int64_t>& k) {
  const char* f = "marg::condition_on_sum (pmf_batch, hard evidence)";
  const std::int64_t sq = stride_of_second(f, x, y);
  check_sums(f, x, k);
  const int B = x.batch(), m = x.length(), n = y.length();
  array<T> px(static_cast<std::size_t>(B) * m), py(static_cast<std::size_t>(B) * n);
  std::vector<T> ll(B);
  // rows for log space: terms that keep log-probabilities, or posteriors with
  // values below T's range
  std::vector<unsigned char> redo(static_cast<std::size_t>(B), 0);
  parallel_rows(B, rows_per_chunk(m + n), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      T* ox = px.data() + b * m;
      T* oy = py.data() + b * n;
      std::fill(ox, ox + m, T(0));
      std::fill(oy, oy + n, T(0));
      redo[b] = log_row(x, y, b);
      if (redo[b]) continue;  // below, in log space
      const auto d = anti_diagonal_of(x.lowers()[b], m, lower_of(y, b), n, k[b]);
      long double s = 0;
      if (!d.empty()) {
        const auto pr = detail::diagonal_products(x.data() + b * m, y.data() + b * sq, d);
        s = detail::normalize_into(pr, ox + d.lo, 1);
        // y = kk - j runs down as j runs up: the same values, written backwards
        if (s > 0) {
          std::copy(ox + d.lo, ox + d.hi + 1, std::make_reverse_iterator(oy + d.kk - d.lo + 1));
          redo[b] = lost_below_range(pr, ox + d.lo);
        }
      }
      ll[b] = s > 0 ? static_cast<T>(std::log(s)) : -std::numeric_limits<T>::infinity();
    }
  });
  // those rows as pmfs through condition_on_sum (the log-space diagonal, or
  // long double weights whose posterior keeps its log-probabilities)
  posterior_rows<T> ox(px, B, m), oy(py, B, n);
  for (std::int64_t b = 0; b < B; ++b) {
    if (!redo[b]) continue;
    const pmf<T> xb = x.row(static_cast<int>(b)), yb = y.row(sq == 0 ? 0 : static_cast<int>(b));
    sum_posterior<T> post{-std::numeric_limits<T>::infinity(), {}, {}};
    if (!xb.empty() && !yb.empty()) post = marg::condition_on_sum(xb, yb, k[b]);
    ll[b] = post.log_likelihood;
    ox.put(b, post.first, x.lowers()[b]);
    oy.put(b, post.second, lower_of(y, b));
  }
  array<T> lx = ox.finish(), ly = oy.finish();
  return {
      std::move(ll), pmf_batch<T>(detail::trusted, std::move(px), std::move(lx), B, m, x.lowers()),
      pmf_batch<T>(detail::trusted, std::move(py), std::move(ly), B, n, lowers_of_second(x, y))};
}

template <class T>
batch_sum_gradient<T> sum_grad(const pmf_batch<T>& x, const pmf_batch<T>& y,
                               const std::vector<T>& g) {
  const char* f = "marg::sum_grad (pmf_batch)";
  const std::int64_t sq = stride_of_second(f, x, y);
  const int len = check_over_sums(f, "g", x, y, g);
  check_finite(f, "g", g.data(), static_cast<std::int64_t>(g.size()));
  const auto [gp, gq] = gradient_rows(x, y, sq, g.data(), len);
  batch_sum_gradient<T> r{gp.to_vector(), gq.to_vector()};
  // rows whose terms keep log-probabilities: sum_grad of the rows as pmfs, in log space
  const int m = x.length(), n = y.length();
  for (const std::int64_t b : log_rows_of(x, y)) {
    const pmf<T> xb = x.row(static_cast<int>(b)), yb = y.row(sq == 0 ? 0 : static_cast<int>(b));
    if (xb.empty() || yb.empty()) continue;  // an all-zero row: the linear rows are exact
    const sum_gradient<T> gb =
        marg::sum_grad(xb, yb, std::vector<T>(g.begin() + b * len, g.begin() + (b + 1) * len));
    std::copy(gb.first.begin(), gb.first.end(), r.first.begin() + b * m);
    std::copy(gb.second.begin(), gb.second.end(), r.second.begin() + b * n);
  }
  return r;
}

namespace detail {

template <class T>
batch_joint_draws<T> sample_given_sum_with(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                           const std::vector<std::int64_t>& k,
                                           const std::vector<double>& u) {
  const char* f = "marg::sample_given_sum (pmf_batch)";
  const std::int64_t sq = stride_of_second(f, x, y);
  check_sums(f, x, k);
  const int B = x.batch(), m = x.length(), n = y.length();
  MARG_EXPECTS(u.size() == 2 * static_cast<std::size_t>(B),
               bad_argument(f, "u.size()", static_cast<std::int64_t>(u.size()), "2 * x.batch()"));
  batch_joint_draws<T> r{std::vector<T>(B), std::vector<std::int64_t>(B, 0),
                         std::vector<std::int64_t>(B, 0)};
  parallel_rows(B, rows_per_chunk(std::min(m, n)),
                [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
                  std::vector<long double> w;
                  for (std::int64_t b = b0; b < b1; ++b) {
                    check_uniform(f, 2 * b, u[2 * b]);
                    const auto d = anti_diagonal_of(x.lowers()[b], m, lower_of(y, b), n, k[b]);
                    if (log_row(x, y, b)) {  // the diagonal in log space
                      r.log_likelihood[b] = -std::numeric_limits<T>::infinity();
                      if (d.empty()) continue;
                      w.resize(static_cast<std::size_t>(d.hi - d.lo + 1));
                      for (std::int64_t j = d.lo; j <= d.hi; ++j)
                        w[j - d.lo] = log_entry(x, b, j) + log_entry(y, sq == 0 ? 0 : b, d.kk - j);
                      const long double total = log_sum(w);
                      if (total == -INFINITY) continue;
                      const std::int64_t i = pick_log(w, total, u[2 * b]);
                      r.log_likelihood[b] = static_cast<T>(total);
                      r.first[b] = x.lowers()[b] + d.lo + i;
                      r.second[b] = k[b] - r.first[b];
                      continue;
                    }
                    long double s = 0;
                    std::int64_t i = 0;
                    if (!d.empty())
                      s = sum_and_pick(diagonal_products(x.data() + b * m, y.data() + b * sq, d),
                                       u[2 * b], i);
                    if (!(s > 0)) {
                      r.log_likelihood[b] = -std::numeric_limits<T>::infinity();
                      continue;
                    }
                    r.log_likelihood[b] = static_cast<T>(std::log(s));
                    r.first[b] = x.lowers()[b] + d.lo + i;
                    r.second[b] = k[b] - r.first[b];
                  }
                });
  return r;
}

// Whether the linear law of row b's sum, in T, lost what its log likelihood
// needs: the law's elements below T's range are lost (each under min(m, n)
// denorm_min), so the sum of law times L holds to a quarter of T's rounding
// above underflow_floor(len min(m, n)) max L. A row found impossible is
// redone where the products of its terms can leave T's range.
template <class T>
bool linear_draw_lost(const pmf_batch<T>& x, const pmf_batch<T>& y, std::int64_t sq, const T* like,
                      bool like_on_host, const std::vector<double>& log_scale,
                      const batch_joint_draws<T>& r, std::int64_t b) {
  const int m = x.length(), n = y.length(), len = m + n - 1;
  const double scale = log_scale.empty() ? 0 : log_scale[b];
  if (scale == -INFINITY) return false;
  const double ll = static_cast<double>(r.log_likelihood[b]) - scale;
  if (ll == -INFINITY)
    return detail::log_min_positive(x.data() + b * m, m) +
               detail::log_min_positive(y.data() + (sq == 0 ? 0 : b) * n, n) <
           detail::log_min_normal<T>;
  const double floor = std::log(static_cast<double>(
      detail::underflow_floor<T>(static_cast<long double>(len) * std::min(m, n))));
  if (ll >= floor + std::log(static_cast<double>(std::numeric_limits<T>::max()))) return false;
  const T* lb = like + b * len;
  if (!like_on_host) prepare_host_access(lb, len * sizeof(T), stream_view{});
  return ll < floor + std::log(static_cast<double>(*std::max_element(lb, lb + len)));
}

// The rows of sample_given_evidence that need log space, drawn again there:
// the law of the row's sum from the rows as pmfs (x + y in log space), the sum
// z drawn from log P(x + y = z) + log L(z), then (x, y) given z on the
// anti-diagonal.
template <class T>
void redraw_log_rows(const pmf_batch<T>& x, const pmf_batch<T>& y, std::int64_t sq, const T* like,
                     bool like_on_host, const std::vector<double>& log_scale,
                     const std::vector<double>& u, batch_joint_draws<T>& r) {
  const int m = x.length(), n = y.length(), len = m + n - 1;
  std::vector<long double> w;
  for (std::int64_t b = 0; b < x.batch(); ++b) {
    // rows whose terms keep log-probabilities, and rows the linear law of the
    // sum found impossible where its products could leave T's range
    if (!log_row(x, y, b) && !linear_draw_lost(x, y, sq, like, like_on_host, log_scale, r, b))
      continue;
    r.log_likelihood[b] = -std::numeric_limits<T>::infinity();
    r.first[b] = r.second[b] = 0;
    const pmf<T> xb = x.row(static_cast<int>(b)), yb = y.row(sq == 0 ? 0 : static_cast<int>(b));
    const double scale = log_scale.empty() ? 0 : log_scale[b];
    if (xb.empty() || yb.empty() || scale == -INFINITY) continue;
    const T* lb = like + b * len;
    if (!like_on_host) prepare_host_access(lb, len * sizeof(T), stream_view{});
    const std::vector<T> lz = (xb + yb).log_probs();
    w.resize(static_cast<std::size_t>(len));
    for (int i = 0; i < len; ++i) w[i] = static_cast<long double>(lz[i]) + std::log(lb[i]);
    const long double total = log_sum(w);
    if (total == -INFINITY) continue;
    const std::int64_t iz = pick_log(w, total, u[2 * b]);
    anti_diagonal d = anti_diagonal_of(0, m, 0, n, iz);
    w.resize(static_cast<std::size_t>(d.hi - d.lo + 1));
    for (std::int64_t j = d.lo; j <= d.hi; ++j)
      w[j - d.lo] = log_entry(x, b, j) + log_entry(y, sq == 0 ? 0 : b, iz - j);
    const std::int64_t i = pick_log(w, log_sum(w), u[2 * b + 1]);
    r.log_likelihood[b] = log_scale.empty()
                              ? static_cast<T>(total)
                              : static_cast<T>(static_cast<double>(static_cast<T>(total)) + scale);
    r.first[b] = x.lowers()[b] + d.lo + i;
    r.second[b] = lower_of(y, b) + (iz - d.lo - i);
  }
}

// sample_given_evidence's rows: the likelihood at `like` (host memory when
// like_on_host, else pool memory), per-row log scales added when given
template <class T>
batch_joint_draws<T> draws_given_evidence(const char* f, const pmf_batch<T>& x,
                                          const pmf_batch<T>& y, const T* like, bool like_on_host,
                                          const std::vector<double>& log_scale,
                                          const std::vector<double>& u) {
  const std::int64_t sq = stride_of_second(f, x, y);
  const int B = x.batch(), m = x.length(), n = y.length();
  const int len = m + n - 1;
  MARG_EXPECTS(u.size() == 2 * static_cast<std::size_t>(B),
               bad_argument(f, "u.size()", static_cast<std::int64_t>(u.size()), "2 * x.batch()"));
  // the log likelihood of row b, the row's scale added in double
  const auto log_of = [&](std::int64_t b, long double s) {
    return log_scale.empty()
               ? static_cast<T>(std::log(s))
               : static_cast<T>(static_cast<double>(static_cast<T>(std::log(s))) + log_scale[b]);
  };
  // the law of every row's sum in one batched call
  array<T> z(static_cast<std::size_t>(B) * len);
  convolve_batched<T>(m, n, x.data(), 1, m, y.data(), 1, sq, z.data(), 1, len, B);
  batch_joint_draws<T> r{std::vector<T>(B), std::vector<std::int64_t>(B, 0),
                         std::vector<std::int64_t>(B, 0)};
#if MARG_WITH_CUDA
  if (gpu::active()) {
    for (std::size_t i = 0; i < u.size(); ++i) check_uniform(f, i, u[i]);
    const auto rows = gpu::draws_on_device(B, m, n, x.data(), y.data(), sq, z.data(), like,
                                           like_on_host, u.data());
    for (int b = 0; b < B; ++b)
      if (rows[b].status == 2) {  // name the first bad entry of the first bad row
        const T* lb = like + std::int64_t{b} * len;
        if (!like_on_host) prepare_host_access(lb, len * sizeof(T), stream_view{});
        for (int i = 0; i < len; ++i)
          check_weight(f, "likelihood", static_cast<std::size_t>(std::int64_t{b} * len + i), lb[i]);
      }
    parallel_rows(B, 4096, [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
      for (std::int64_t b = b0; b < b1; ++b) {
        const gpu::draw_row& d = rows[b];
        if (d.status != 1) {
          r.log_likelihood[b] = -std::numeric_limits<T>::infinity();
          continue;
        }
        // as on the host: log of the double sum in long double (scaled rows:
        // the power of two added back)
        long double ls = std::log(static_cast<long double>(d.sum));
        if (d.exponent != 0) ls += d.exponent * 0.693147180559945309417232121458176568L;
        r.log_likelihood[b] =
            log_scale.empty()
                ? static_cast<T>(ls)
                : static_cast<T>(static_cast<double>(static_cast<T>(ls)) + log_scale[b]);
        r.first[b] = x.lowers()[b] + d.first;
        r.second[b] = lower_of(y, b) + d.second;
      }
    });
    redraw_log_rows(x, y, sq, like, like_on_host, log_scale, u, r);
    return r;
  }
#endif
  (void)like_on_host;
  wait_for_stream(z.stream());
  parallel_rows(B, rows_per_chunk(len), [&](std::int64_t, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const T* lb = like + b * len;
      bool ok = true;
      for (int i = 0; i < len; ++i)
        ok &= (lb[i] >= T(0)) & (lb[i] <= std::numeric_limits<T>::max());  // NaN fails both
      if (!ok)
        for (int i = 0; i < len; ++i)
          check_weight(f, "likelihood", static_cast<std::size_t>(b * len + i), lb[i]);
      check_uniform(f, 2 * b, u[2 * b]);
      check_uniform(f, 2 * b + 1, u[2 * b + 1]);
      r.log_likelihood[b] = -std::numeric_limits<T>::infinity();
      // only the sums the nonzero parts of the rows reach (padding is skipped;
      // the zero products it would add change nothing)
      const T* p = x.data() + b * m;
      const T* q = y.data() + b * sq;
      const auto [fx, lx] = nonzero_extent(p, m);
      const auto [fy, ly] = nonzero_extent(q, n);
      if (fx > lx || fy > ly) continue;
      // the sum: P(x + y = z) L(z)
      const std::int64_t z0 = fx + fy;
      const product_row<T> zr{z.data() + b * len + z0, like + b * len + z0, 1, lx + ly - z0 + 1};
      std::int64_t iz = 0;
      const long double s = sum_and_pick(zr, u[2 * b], iz);
      if (!(s > 0)) continue;
      iz += z0;
      // (x, y) given the sum, on the anti-diagonal within the nonzero parts
      const std::int64_t xl = x.lowers()[b], yl = lower_of(y, b);
      anti_diagonal d = anti_diagonal_of(0, m, 0, n, iz);
      d.lo = std::max({d.lo, fx, iz - ly});
      d.hi = std::min({d.hi, lx, iz - fy});
      std::int64_t i = 0;
      const long double sd =
          d.empty() ? 0 : sum_and_pick(diagonal_products(p, q, d), u[2 * b + 1], i);
      if (!(sd > 0)) continue;  // unreachable: z > 0 there means a positive product
      r.log_likelihood[b] = log_of(b, s);
      r.first[b] = xl + d.lo + i;
      r.second[b] = yl + (iz - d.lo - i);
    }
  });
  redraw_log_rows(x, y, sq, like, like_on_host, log_scale, u, r);
  return r;
}

template <class T>
batch_joint_draws<T> sample_given_evidence_with(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                                const std::vector<T>& likelihood,
                                                const std::vector<double>& u) {
  const char* f = "marg::sample_given_evidence (pmf_batch)";
  stride_of_second(f, x, y);
  check_over_sums(f, "likelihood", x, y, likelihood);
  // the likelihood is checked row by row in the row loop (one pass over it
  // fewer; the lowest chunk's error wins, so the first bad entry is named)
  return draws_given_evidence(f, x, y, likelihood.data(), true, {}, u);
}

template <class T>
batch_joint_draws<T> sample_given_evidence_with(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                                const batch_evidence<T>& evidence,
                                                const std::vector<double>& u) {
  const char* f = "marg::sample_given_evidence (pmf_batch, batch_evidence)";
  stride_of_second(f, x, y);
  check_evidence(f, x, y, evidence);
  const T* like = evidence.values.data();
#if MARG_WITH_CUDA
  if (!gpu::active())
    prepare_host_access(like, evidence.values.size() * sizeof(T), evidence.values.stream());
#endif
  return draws_given_evidence(f, x, y, like, false, evidence.log_scale, u);
}

}  // namespace detail

template class pmf_batch<float>;
template class pmf_batch<double>;

#define MARG_INSTANTIATE_BATCH(T)                                                               \
  template pmf_batch<T> operator+<T>(const pmf_batch<T>&, const pmf_batch<T>&);                 \
  template pmf_batch<T> operator+<T>(const pmf_batch<T>&, const pmf<T>&);                       \
  template pmf_batch<T> operator-<T>(const pmf_batch<T>&);                                      \
  template pmf_batch<T> operator-<T>(const pmf_batch<T>&, const pmf_batch<T>&);                 \
  template std::vector<T> log_prob_sum<T>(const pmf_batch<T>&, const pmf_batch<T>&,             \
                                          const std::vector<std::int64_t>&);                    \
  template batch_sum_posterior<T> condition_on_sum<T>(const pmf_batch<T>&, const pmf_batch<T>&, \
                                                      const std::vector<T>&);                   \
  template batch_sum_posterior<T> condition_on_sum<T>(const pmf_batch<T>&, const pmf_batch<T>&, \
                                                      const std::vector<std::int64_t>&);        \
  template batch_sum_posterior<T> condition_on_sum<T>(const pmf_batch<T>&, const pmf_batch<T>&, \
                                                      const batch_evidence<T>&);                \
  template batch_sum_gradient<T> sum_grad<T>(const pmf_batch<T>&, const pmf_batch<T>&,          \
                                             const std::vector<T>&);                            \
  template batch_joint_draws<T> detail::sample_given_sum_with<T>(                               \
      const pmf_batch<T>&, const pmf_batch<T>&, const std::vector<std::int64_t>&,               \
      const std::vector<double>&);                                                              \
  template batch_joint_draws<T> detail::sample_given_evidence_with<T>(                          \
      const pmf_batch<T>&, const pmf_batch<T>&, const std::vector<T>&,                          \
      const std::vector<double>&);                                                              \
  template batch_joint_draws<T> detail::sample_given_evidence_with<T>(                          \
      const pmf_batch<T>&, const pmf_batch<T>&, const batch_evidence<T>&,                       \
      const std::vector<double>&);
MARG_INSTANTIATE_BATCH(float)
MARG_INSTANTIATE_BATCH(double)

}  // namespace marg
