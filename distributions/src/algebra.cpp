// Algebra of independent pmfs on the numeric layer's convolution.
#include <marg/distributions/algebra.hpp>
#include <marg/distributions/factories.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/pool.hpp>
#include <marg/numeric/stream.hpp>

#include <algorithm>
#include <string>

#include "detail.hpp"

namespace marg {
namespace {

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

// one term of a level of sum(): len probabilities at data inside slabs[slab];
// lower and truncated mass are host bookkeeping, the probabilities are only
// read by the convolutions (on the device with CUDA)
template <class T>
struct term {
  const T* data;
  int len;
  int slab;
  std::int64_t lower;
  T truncated;
};

// The terms of sum(): slab 0 holds the inputs gathered in one pass, slab k the
// outputs of level k (all pool blocks on the calling thread's stream); a slab is freed once no term
// of the current level is in it.
template <class T>
class sum_tree {
 public:
  explicit sum_tree(const std::vector<pmf<T>>& xs) { gather(xs); }

  // pairs neighbours until one term is left; returns it
  const term<T>& reduce() {
    while (level_.size() > 1) next_level();
    return level_[0];
  }
  // the slab holding a term
  array<T>& slab_of(const term<T>& t) { return slabs_[t.slab]; }

 private:
  // Copies the inputs, stably sorted by length, into slab 0, a pool block:
  // migrated to the host first (with CUDA) so that these writes do not fault
  // its pages back one by one, then moved to the device once by the first
  // level's convolutions (its operands read it in place).
  void gather(const std::vector<pmf<T>>& xs) {
    const auto count = static_cast<std::int64_t>(xs.size());
    std::vector<std::int64_t> order(xs.size());
    for (std::int64_t i = 0; i < count; ++i) order[i] = i;
    const auto shorter = [&](std::int64_t u, std::int64_t v) {
      return xs[u].size() < xs[v].size();
    };
    if (!std::is_sorted(order.begin(), order.end(), shorter))
      std::stable_sort(order.begin(), order.end(), shorter);
    std::vector<std::int64_t> offset(xs.size() + 1, 0);
    for (std::int64_t k = 0; k < count; ++k) offset[k + 1] = offset[k] + xs[order[k]].size();
    // every intermediate term is at most as long as the result: checked
    // before the slab is allocated, so a too long sum is bad input, not out of memory
    detail::length_checked("marg::sum", "size of the sum (sum of sizes - count + 1)",
                           offset.back() - (count - 1));
    const auto total = static_cast<std::size_t>(offset.back());
    array<T> inputs(total);
    prefetch(inputs.data(), total * sizeof(T), memory_location::host, inputs.stream());
    synchronize(inputs.stream());
    T* d = inputs.data();
    level_.resize(xs.size());
    detail::parallel_rows(count, 4096, [&](std::int64_t, std::int64_t k0, std::int64_t k1) {
      for (std::int64_t k = k0; k < k1; ++k) {
        const pmf<T>& x = xs[order[k]];
        std::copy(x.data(), x.data() + x.size(), d + offset[k]);
        level_[k] = {d + offset[k], static_cast<int>(x.size()), 0, x.lower(), x.truncated_mass()};
      }
    });
    slabs_.push_back(std::move(inputs));
  }

  // One level: pairs neighbours of the length-sorted terms; consecutive pairs
  // with equal (m, n) that lie evenly strided in their slabs run as one
  // convolve_batched call writing into the level's new slab. The outputs are
  // not touched on the host (see the note on renormalization in sum()).
  void next_level() {
    const char* f = "marg::sum";
    // stable: keeps a previous level's slab order, so that its outputs are
    // read in place, and pairs equal lengths into one batch
    const auto shorter = [](const term<T>& u, const term<T>& v) { return u.len < v.len; };
    if (!std::is_sorted(level_.begin(), level_.end(), shorter))
      std::stable_sort(level_.begin(), level_.end(), shorter);
    const std::size_t pairs = level_.size() / 2;
    const int id = static_cast<int>(slabs_.size());
    std::vector<term<T>> next(pairs + level_.size() % 2);
    std::vector<std::int64_t> offset(pairs + 1, 0);
    for (std::size_t j = 0; j < pairs; ++j) {
      const term<T>&a = level_[2 * j], &c = level_[2 * j + 1];
      const auto s = support_of_sum(f, a.lower, a.len, c.lower, c.len);
      next[j] = {nullptr, s.len, id, s.lower, detail::combine_truncated(a.truncated, c.truncated)};
      offset[j + 1] = offset[j] + s.len;
    }
    array<T> out(static_cast<std::size_t>(offset[pairs]));
    for (std::size_t j = 0; j < pairs; ++j) next[j].data = out.data() + offset[j];
    std::size_t j = 0;
    while (j < pairs) {
      const std::size_t run = run_length(j, pairs);
      const term<T>&a = level_[2 * j], &c = level_[2 * j + 1];
      T* r = out.data() + offset[j];
      if (run == 1) {
        convolve<T>(a.len, c.len, a.data, 1, c.data, 1, r, 1);
      } else {
        const term<T>&a1 = level_[2 * j + 2], &c1 = level_[2 * j + 3];
        convolve_batched<T>(a.len, c.len, a.data, 1, a1.data - a.data, c.data, 1, c1.data - c.data,
                            r, 1, next[j].len, static_cast<int>(run));
      }
      j += run;
    }
    if (level_.size() % 2) next.back() = level_.back();  // odd term: carried up a level
    slabs_.push_back(std::move(out));
    level_ = std::move(next);
    // free the slabs no term refers to any more (stream-ordered: pending reads stay valid)
    for (int k = 0; k < id; ++k) {
      if (level_.back().slab == k) continue;
      slabs_[k] = array<T>();
    }
  }

  // the number of pairs from j on that one batched call can take: equal
  // (m, n), operands of each side in one slab at a constant stride >= 0
  std::size_t run_length(std::size_t j, std::size_t pairs) const {
    const term<T>&a = level_[2 * j], &c = level_[2 * j + 1];
    std::ptrdiff_t sa = 0, sc = 0;
    std::size_t k = j + 1;
    for (; k < pairs; ++k) {
      const term<T>&u = level_[2 * k], &v = level_[2 * k + 1];
      if (u.len != a.len || v.len != c.len || u.slab != a.slab || v.slab != c.slab) break;
      const std::ptrdiff_t du = u.data - a.data, dv = v.data - c.data;
      if (k == j + 1) {
        if (du < 0 || dv < 0) break;
        sa = du;
        sc = dv;
      } else if (du != static_cast<std::ptrdiff_t>(k - j) * sa ||
                 dv != static_cast<std::ptrdiff_t>(k - j) * sc) {
        break;
      }
    }
    return k - j;
  }

  std::vector<array<T>> slabs_;
  std::vector<term<T>> level_;
};

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
    if (xs[i].empty()) detail::check_nonempty(f, ("xs[" + std::to_string(i) + "]").c_str(), xs[i]);
  if (xs.size() == 1) return xs[0];
  sum_tree<T> tree(xs);
  const term<T> t = tree.reduce();
  array<T>& s = tree.slab_of(t);
  // Renormalization once, of the result: scaling commutes with convolution, so
  // dividing the intermediate rows by their totals (as operator+ would) gives
  // the same result up to rounding, at the price of reading every row on the
  // host between levels.
  detail::prepare_host_access(t.data, static_cast<std::size_t>(t.len) * sizeof(T), s.stream());
  array<T> r;
  if (t.data == s.data() && static_cast<std::size_t>(t.len) == s.size()) {
    r = std::move(s);
  } else {
    r = array<T>(static_cast<std::size_t>(t.len));
    std::copy(t.data, t.data + t.len, r.data());
  }
  detail::renormalize_if_drifted(r.data(), t.len);
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
