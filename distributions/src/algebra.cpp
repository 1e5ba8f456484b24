// Algebra of independent pmfs on the numeric layer's convolution.
#include <marg/distributions/algebra.hpp>
#include <marg/distributions/factories.hpp>
#include <marg/numeric/convolve.hpp>

#include <algorithm>
#include <string>

#include "detail.hpp"

namespace marg {
namespace {

// one term of a level of sum(): a view of probabilities kept alive by `keep`
template <class T>
struct term {
  const T* data;
  int len;
  std::int64_t lower;
  T truncated;
  std::shared_ptr<const void> keep;
};

template <class T>
term<T> term_of(const pmf<T>& x) {
  return {x.data(), static_cast<int>(x.size()), x.lower(), x.truncated_mass(),
          std::make_shared<pmf<T>>(x)};
}

// support of a + b with the overflow and length checks
struct sum_support {
  std::int64_t lower;
  int len;
};

sum_support support_of_sum(const char* f, std::int64_t la, std::int64_t ma, std::int64_t lb,
                           std::int64_t mb) {
  const std::int64_t lower = detail::add_checked(f, "lower(x) + lower(y)", la, lb);
  detail::add_checked(f, "upper(x) + upper(y)", la + (ma - 1), lb + (mb - 1));
  return {lower, detail::length_checked(f, "size(x) + size(y) - 1", ma + mb - 1)};
}

// true when the terms lie in one slab (one previous batched output, so a
// strided read stays inside it) at data[b] == data[0] + b * stride, stride >= 0
template <class T>
bool evenly_strided(const std::vector<term<T>>& ts, std::int64_t& stride) {
  stride = ts[1].data - ts[0].data;
  if (stride < 0) return false;
  for (std::size_t b = 1; b < ts.size(); ++b) {
    if (ts[b].keep != ts[0].keep) return false;
    if (ts[b].data - ts[0].data != static_cast<std::int64_t>(b) * stride) return false;
  }
  return true;
}

// copies the terms into one tight batch; sets base and stride to it
template <class T>
array<T> stage(const std::vector<term<T>>& ts, int len, const T*& base, std::int64_t& stride) {
  array<T> s(ts.size() * static_cast<std::size_t>(len));
  for (std::size_t b = 0; b < ts.size(); ++b)
    std::copy(ts[b].data, ts[b].data + len, s.data() + b * len);
  base = s.data();
  stride = len;
  return s;
}

// convolves pairs (a[b], c[b]) of equal lengths m, n in one batched call
template <class T>
std::vector<term<T>> convolve_group(const std::vector<term<T>>& a, const std::vector<term<T>>& c) {
  const char* f = "marg::sum";
  const int batch = static_cast<int>(a.size());
  const int m = a[0].len, n = c[0].len;
  const auto s0 = support_of_sum(f, a[0].lower, m, c[0].lower, n);
  const int len = s0.len;
  auto out = std::make_shared<array<T>>(static_cast<std::size_t>(batch) * len);
  if (batch == 1) {
    convolve<T>(m, n, a[0].data, 1, c[0].data, 1, out->data(), 1);
  } else {
    std::int64_t sa, sc;
    const T *ba = a[0].data, *bc = c[0].data;
    array<T> stage_a, stage_c;
    // read the previous level's slab in place when possible, else stage copies
    if (!evenly_strided(a, sa)) stage_a = stage(a, m, ba, sa);
    if (!evenly_strided(c, sc)) stage_c = stage(c, n, bc, sc);
    convolve_batched<T>(m, n, ba, 1, sa, bc, 1, sc, out->data(), 1, len, batch);
  }
  detail::wait_for_stream(out->stream());
  std::vector<term<T>> r(batch);
  for (int b = 0; b < batch; ++b) {
    const auto s = support_of_sum(f, a[b].lower, m, c[b].lower, n);
    T* d = out->data() + std::int64_t{b} * len;
    detail::renormalize_if_drifted(d, len);
    r[b] = {d, len, s.lower, detail::combine_truncated(a[b].truncated, c[b].truncated), out};
  }
  return r;
}

}  // namespace

template <class T>
pmf<T> operator+(const pmf<T>& x, const pmf<T>& y) {
  const char* f = "marg::operator+";
  detail::check_nonempty(f, "x", x);
  detail::check_nonempty(f, "y", y);
  const auto s = support_of_sum(f, x.lower(), x.size(), y.lower(), y.size());
  array<T> r(static_cast<std::size_t>(s.len));
  convolve<T>(static_cast<int>(x.size()), static_cast<int>(y.size()), x.data(), 1, y.data(), 1,
              r.data(), 1);
  detail::wait_for_stream(r.stream());
  detail::renormalize_if_drifted(r.data(), s.len);
  return pmf<T>(detail::trusted, std::move(r), s.lower,
                detail::combine_truncated(x.truncated_mass(), y.truncated_mass()));
}

template <class T>
pmf<T> operator-(const pmf<T>& x) {
  const char* f = "marg::operator- (negation)";
  detail::check_nonempty(f, "x", x);
  const std::int64_t lower = detail::sub_checked(f, "-upper(x)", 0, x.upper());
  detail::sub_checked(f, "-lower(x)", 0, x.lower());
  array<T> r(static_cast<std::size_t>(x.size()));
  std::reverse_copy(x.data(), x.data() + x.size(), r.data());
  return pmf<T>(detail::trusted, std::move(r), lower, x.truncated_mass());
}

template <class T>
pmf<T> operator-(const pmf<T>& x, const pmf<T>& y) {
  detail::check_nonempty("marg::operator-", "x", x);
  detail::check_nonempty("marg::operator-", "y", y);
  return x + (-y);
}

template <class T>
pmf<T> operator+(const pmf<T>& x, std::int64_t k) {
  detail::check_nonempty("marg::operator+", "x", x);
  return x.shifted(k);
}

template <class T>
pmf<T> operator+(std::int64_t k, const pmf<T>& x) {
  return x + k;
}

template <class T>
pmf<T> operator-(const pmf<T>& x, std::int64_t k) {
  const char* f = "marg::operator-";
  detail::check_nonempty(f, "x", x);
  detail::sub_checked(f, "lower(x) - k", x.lower(), k);
  detail::sub_checked(f, "upper(x) - k", x.upper(), k);
  // x.lower() - k fits, so the shift by -k can be done in two steps without overflow
  if (k == INT64_MIN) return x.shifted(INT64_MAX).shifted(1);
  return x.shifted(-k);
}

template <class T>
pmf<T> operator-(std::int64_t k, const pmf<T>& x) {
  return (-x) + k;
}

template <class T>
pmf<T> sum(const std::vector<pmf<T>>& xs) {
  const char* f = "marg::sum";
  if (xs.empty()) return delta<T>(0);
  for (std::size_t i = 0; i < xs.size(); ++i)
    detail::check_nonempty(f, ("xs[" + std::to_string(i) + "]").c_str(), xs[i]);
  if (xs.size() == 1) return xs[0];
  std::vector<term<T>> level;
  level.reserve(xs.size());
  for (const auto& x : xs) level.push_back(term_of(x));
  while (level.size() > 1) {
    // stable sort by length keeps a previous level's slab order, so that its
    // outputs are read in place, and pairs equal lengths into one batch
    std::stable_sort(level.begin(), level.end(),
                     [](const term<T>& u, const term<T>& v) { return u.len < v.len; });
    std::vector<term<T>> next;
    next.reserve(level.size() / 2 + 1);
    std::size_t i = 0;
    while (i + 1 < level.size()) {
      // a group: consecutive pairs with the same (m, n)
      std::vector<term<T>> a, c;
      const int m = level[i].len, n = level[i + 1].len;
      while (i + 1 < level.size() && level[i].len == m && level[i + 1].len == n) {
        a.push_back(level[i]);
        c.push_back(level[i + 1]);
        i += 2;
      }
      for (auto& t : convolve_group(a, c)) next.push_back(std::move(t));
    }
    if (i < level.size()) next.push_back(level[i]);  // odd term: carried up a level
    level = std::move(next);
  }
  const term<T>& t = level[0];
  array<T> r(static_cast<std::size_t>(t.len));
  std::copy(t.data, t.data + t.len, r.data());
  return pmf<T>(detail::trusted, std::move(r), t.lower, t.truncated);
}

#define MARG_INSTANTIATE_ALGEBRA(T)                           \
  template pmf<T> operator+<T>(const pmf<T>&, const pmf<T>&); \
  template pmf<T> operator-<T>(const pmf<T>&, const pmf<T>&); \
  template pmf<T> operator-<T>(const pmf<T>&);                \
  template pmf<T> operator+<T>(const pmf<T>&, std::int64_t);  \
  template pmf<T> operator+<T>(std::int64_t, const pmf<T>&);  \
  template pmf<T> operator-<T>(const pmf<T>&, std::int64_t);  \
  template pmf<T> operator-<T>(std::int64_t, const pmf<T>&);  \
  template pmf<T> sum<T>(const std::vector<pmf<T>>&);
MARG_INSTANTIATE_ALGEBRA(float)
MARG_INSTANTIATE_ALGEBRA(double)

}  // namespace marg
