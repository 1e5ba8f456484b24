// pmf_batch<T>: batched algebra and soft conditioning, one numeric call per operation.
#include <marg/distributions/batch.hpp>
#include <marg/numeric/convolve.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "detail.hpp"

namespace marg {

template <class T>
pmf_batch<T>::pmf_batch(detail::trusted_t, array<T>&& probs, int batch, int length,
                        std::vector<std::int64_t> lowers)
    : batch_(batch), length_(length), lowers_(std::move(lowers)) {
  detail::wait_for_stream(probs.stream());
  auto s = std::make_shared<const array<T>>(std::move(probs));
  data_ = s->data();
  storage_ = std::move(s);
}

template <class T>
pmf_batch<T>::pmf_batch(const std::vector<pmf<T>>& rows) {
  const char* f = "marg::pmf_batch";
  MARG_EXPECTS(!rows.empty(), std::string(f) + ": rows is empty");
  MARG_EXPECTS(
      rows.size() <= INT_MAX,
      detail::bad_argument(f, "rows.size()", static_cast<std::int64_t>(rows.size()), "<= INT_MAX"));
  std::int64_t len = 0;
  for (std::size_t b = 0; b < rows.size(); ++b) {
    detail::check_nonempty(f, ("rows[" + std::to_string(b) + "]").c_str(), rows[b]);
    len = std::max(len, rows[b].size());
    // the padded support must not overflow either
    detail::add_checked(f, "lower + length - 1", rows[b].lower(), len - 1);
  }
  array<T> a(rows.size() * static_cast<std::size_t>(len), T(0));
  std::vector<std::int64_t> lowers(rows.size());
  for (std::size_t b = 0; b < rows.size(); ++b) {
    detail::add_checked(f, "lower + length - 1", rows[b].lower(), len - 1);
    std::copy(rows[b].data(), rows[b].data() + rows[b].size(), a.data() + b * len);
    lowers[b] = rows[b].lower();
  }
  *this = pmf_batch(detail::trusted, std::move(a), static_cast<int>(rows.size()),
                    static_cast<int>(len), std::move(lowers));
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
pmf<T> pmf_batch<T>::row(int b) const {
  MARG_EXPECTS(b >= 0 && b < batch_,
               detail::bad_argument("marg::pmf_batch::row", "b", b, "in 0..batch()-1"));
  const T* r = data_ + std::int64_t{b} * length_;
  if (std::all_of(r, r + length_, [](T v) { return v == T(0); })) return pmf<T>();
  array<T> a(static_cast<std::size_t>(length_));
  std::copy(r, r + length_, a.data());
  return pmf<T>(detail::trusted, std::move(a), lowers_[b]);
}

template <class T>
std::int64_t pmf_batch<T>::sample_index(int b, double u) const {
  const char* f = "marg::pmf_batch::sample";
  MARG_EXPECTS(b >= 0 && b < batch_, detail::bad_argument(f, "b", b, "in 0..batch()-1"));
  const T* r = data_ + std::int64_t{b} * length_;
  long double total = 0;
  for (int i = 0; i < length_; ++i) total += r[i];
  MARG_EXPECTS(total > 0, detail::bad_argument(f, "row", b,
                                               "a row with mass (this one is the posterior of "
                                               "an impossible observation)"));
  const long double target = u * total;
  long double c = 0;
  int last = 0;
  for (int i = 0; i < length_; ++i) {
    if (r[i] == T(0)) continue;
    c += r[i];
    last = i;
    if (c > target) return i;
  }
  return last;
}

namespace {

// checks and returns the batch stride of y: length for B rows, 0 for one row
template <class T>
std::int64_t stride_of_second(const char* f, const pmf_batch<T>& x, const pmf_batch<T>& y) {
  MARG_EXPECTS(x.batch() >= 1, std::string(f) + ": x is an empty batch");
  MARG_EXPECTS(
      y.batch() == x.batch() || y.batch() == 1,
      detail::bad_argument(f, "y.batch()", y.batch(),
                           ("x.batch() = " + std::to_string(x.batch()) + " or 1").c_str()));
  return y.batch() == 1 ? 0 : y.length();
}

template <class T>
pmf_batch<T> add(const char* f, const pmf_batch<T>& x, const T* q, int n, std::int64_t strideq,
                 const std::vector<std::int64_t>& ylowers) {
  const int B = x.batch(), m = x.length();
  const int len = detail::length_checked(f, "length(x) + length(y) - 1", std::int64_t{m} + n - 1);
  std::vector<std::int64_t> lowers(B);
  for (int b = 0; b < B; ++b) {
    const std::int64_t yl = ylowers[ylowers.size() == 1 ? 0 : b];
    lowers[b] = detail::add_checked(f, "lower(x) + lower(y)", x.lowers()[b], yl);
    detail::add_checked(f, "upper(x) + upper(y)", x.lowers()[b] + (m - 1), yl + (n - 1));
  }
  array<T> r(static_cast<std::size_t>(B) * len);
  convolve_batched<T>(m, n, x.data(), 1, m, q, 1, strideq, r.data(), 1, len, B);
  return pmf_batch<T>(detail::trusted, std::move(r), B, len, std::move(lowers));
}

}  // namespace

template <class T>
pmf_batch<T> operator+(const pmf_batch<T>& x, const pmf_batch<T>& y) {
  const char* f = "marg::operator+ (pmf_batch)";
  const std::int64_t sq = stride_of_second(f, x, y);
  return add(f, x, y.data(), y.length(), sq, y.lowers());
}

template <class T>
pmf_batch<T> operator+(const pmf_batch<T>& x, const pmf<T>& y) {
  const char* f = "marg::operator+ (pmf_batch, pmf)";
  MARG_EXPECTS(x.batch() >= 1, std::string(f) + ": x is an empty batch");
  detail::check_nonempty(f, "y", y);
  return add(f, x, y.data(), static_cast<int>(y.size()), 0, {y.lower()});
}

template <class T>
pmf_batch<T> operator-(const pmf_batch<T>& x) {
  const char* f = "marg::operator- (pmf_batch)";
  const int B = x.batch(), L = x.length();
  array<T> r(static_cast<std::size_t>(B) * L);
  std::vector<std::int64_t> lowers(B);
  for (int b = 0; b < B; ++b) {
    const T* s = x.data() + std::int64_t{b} * L;
    std::reverse_copy(s, s + L, r.data() + std::int64_t{b} * L);
    const std::int64_t up = detail::add_checked(f, "upper(x)", x.lowers()[b], L - 1);
    lowers[b] = detail::sub_checked(f, "-upper(x)", 0, up);
    detail::sub_checked(f, "-lower(x)", 0, x.lowers()[b]);
  }
  return pmf_batch<T>(detail::trusted, std::move(r), B, L, std::move(lowers));
}

template <class T>
pmf_batch<T> operator-(const pmf_batch<T>& x, const pmf_batch<T>& y) {
  return x + (-y);
}

template <class T>
std::vector<T> log_prob_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                            const std::vector<std::int64_t>& k) {
  const char* f = "marg::log_prob_sum (pmf_batch)";
  MARG_EXPECTS(y.batch() == x.batch(),
               detail::bad_argument(f, "y.batch()", y.batch(), "equal to x.batch()"));
  MARG_EXPECTS(k.size() == static_cast<std::size_t>(x.batch()),
               detail::bad_argument(f, "k.size()", static_cast<std::int64_t>(k.size()),
                                    "equal to x.batch()"));
  std::vector<T> r(x.batch());
  for (int b = 0; b < x.batch(); ++b) {
    const __int128 lo = std::max<__int128>(
        x.lowers()[b], static_cast<__int128>(k[b]) - y.lowers()[b] - (y.length() - 1));
    const __int128 hi = std::min<__int128>(x.lowers()[b] + (x.length() - 1),
                                           static_cast<__int128>(k[b]) - y.lowers()[b]);
    long double s = 0;
    for (__int128 j = lo; j <= hi; ++j)
      s += static_cast<long double>(x.prob(b, static_cast<std::int64_t>(j))) *
           y.prob(b, static_cast<std::int64_t>(k[b] - j));
    r[b] = static_cast<T>(std::log(s));
  }
  return r;
}

template <class T>
batch_sum_posterior<T> condition_on_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                        const std::vector<T>& likelihood) {
  const char* f = "marg::condition_on_sum (pmf_batch)";
  const std::int64_t sq = stride_of_second(f, x, y);
  const int B = x.batch(), m = x.length(), n = y.length();
  const int len = detail::length_checked(f, "length(x) + length(y) - 1", std::int64_t{m} + n - 1);
  MARG_EXPECTS(
      likelihood.size() == static_cast<std::size_t>(B) * len,
      detail::bad_argument(
          f, "likelihood.size()", static_cast<std::int64_t>(likelihood.size()),
          ("batch * (length(x) + length(y) - 1) = " + std::to_string(std::int64_t{B} * len))
              .c_str()));
  for (std::size_t i = 0; i < likelihood.size(); ++i)
    detail::check_weight(f, "likelihood", i, likelihood[i]);
  array<T> gp(static_cast<std::size_t>(B) * m), gq(static_cast<std::size_t>(B) * n);
  convolve_grad_p_batched<T>(m, n, likelihood.data(), 1, len, y.data(), 1, sq, gp.data(), 1, m, B);
  convolve_grad_q_batched<T>(m, n, likelihood.data(), 1, len, x.data(), 1, m, gq.data(), 1, n, B);
  detail::wait_for_stream(gp.stream());
  detail::wait_for_stream(gq.stream());
  std::vector<T> ll(B);
  // posterior rows: p ⊙ gp and q ⊙ gq, each normalized; zero rows where impossible
  for (int b = 0; b < B; ++b) {
    T* px = gp.data() + std::int64_t{b} * m;
    T* py = gq.data() + std::int64_t{b} * n;
    const T* p = x.data() + std::int64_t{b} * m;
    const T* q = y.data() + b * sq;
    long double sx = 0, sy = 0;
    for (int j = 0; j < m; ++j) sx += static_cast<long double>(p[j]) * px[j];
    for (int j = 0; j < n; ++j) sy += static_cast<long double>(q[j]) * py[j];
    const bool possible = sx > 0 && sy > 0;
    ll[b] = possible ? static_cast<T>(std::log(sx)) : -std::numeric_limits<T>::infinity();
    // the product in long double: in float it can underflow to zero while the
    // normalized posterior is not small
    for (int j = 0; j < m; ++j)
      px[j] = possible ? static_cast<T>(static_cast<long double>(p[j]) * px[j] / sx) : T(0);
    for (int j = 0; j < n; ++j)
      py[j] = possible ? static_cast<T>(static_cast<long double>(q[j]) * py[j] / sy) : T(0);
  }
  std::vector<std::int64_t> ylowers(B);
  for (int b = 0; b < B; ++b) ylowers[b] = y.lowers()[y.batch() == 1 ? 0 : b];
  return {std::move(ll), pmf_batch<T>(detail::trusted, std::move(gp), B, m, x.lowers()),
          pmf_batch<T>(detail::trusted, std::move(gq), B, n, std::move(ylowers))};
}

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
                                                      const std::vector<T>&);
MARG_INSTANTIATE_BATCH(float)
MARG_INSTANTIATE_BATCH(double)

}  // namespace marg
