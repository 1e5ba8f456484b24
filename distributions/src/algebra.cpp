// Algebra of independent pmfs on the numeric layer's convolution.
#include <marg/distributions/algebra.hpp>
#include <marg/distributions/factories.hpp>
#include <marg/numeric/cancel.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/log_convolve.hpp>
#include <marg/numeric/pool.hpp>
#include <marg/numeric/stream.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// A run of `count` terms of sum() of `len` probabilities each, term i at
// data + i * stride inside slabs[slab]. A level of the tree is a list of
// runs sorted by len; the probabilities are only read by the convolutions
// (on the device with CUDA). Per-term bookkeeping (100,000 Bernoulli terms)
// cost the host more than the whole tree's kernels, so terms are not
// represented one by one: supports and truncated masses are summed over the
// inputs once (see sum_inputs).
template <class T>
struct run {
  const T* data;
  std::int64_t stride;
  std::int64_t count;
  int len;
  int slab;
};

// what sum() needs of its inputs besides their probabilities
struct input_totals {
  __int128 lower = 0;                // sum of the lower bounds
  __int128 abs_lower = 0;            // sums of |lower| and |upper|: when both fit in
  __int128 abs_upper = 0;            // int64, no partial sum of the tree overflows
  long double truncated = 0;         // 1 - prod (1 - truncated mass), combined as a + b - ab
                                     // (tiny masses survive, unlike in 1 - prod)
  std::int64_t size = 0;             // sum of the sizes
  bool sorted = true;                // sizes non-decreasing
  std::int64_t first = 0, last = 0;  // sizes of the first and last input
  std::vector<std::pair<int, std::int64_t>> runs;  // (size, inputs) of equal sizes, in order
};

// totals of xs[order[k]] for k in [k0, k1) (order empty: the identity)
template <class T>
input_totals sum_inputs(const std::vector<pmf<T>>& xs, const std::vector<std::int64_t>& order,
                        std::int64_t k0, std::int64_t k1) {
  input_totals t;
  std::int64_t prev = 0;
  for (std::int64_t k = k0; k < k1; ++k) {
    const pmf<T>& x = xs[order.empty() ? k : order[k]];
    const std::int64_t lo = x.lower(), n = x.size(), up = lo + (n - 1);
    t.lower += lo;
    t.abs_lower += lo < 0 ? -static_cast<__int128>(lo) : lo;
    t.abs_upper += up < 0 ? -static_cast<__int128>(up) : up;
    if (const long double m = x.truncated_mass(); m != 0) t.truncated += m - t.truncated * m;
    t.size += n;
    t.sorted = t.sorted && n >= prev;
    if (n == prev)
      ++t.runs.back().second;
    else
      t.runs.emplace_back(static_cast<int>(n), 1);
    prev = n;
  }
  t.first = xs[order.empty() ? k0 : order[k0]].size();
  t.last = prev;
  return t;
}

// The support checks of the pairwise tree (lower and upper bounds of every
// partial sum within int64), run on the bounds alone in the tree's pairing
// order; only needed when the inputs' bounds are near the int64 limits.
template <class T>
void check_tree_supports(const std::vector<pmf<T>>& xs) {
  struct bounds {
    std::int64_t lower, len;
  };
  std::vector<bounds> level(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) level[i] = {xs[i].lower(), xs[i].size()};
  const auto shorter = [](const bounds& u, const bounds& v) { return u.len < v.len; };
  while (level.size() > 1) {
    std::stable_sort(level.begin(), level.end(), shorter);
    std::vector<bounds> next;
    for (std::size_t j = 0; j + 1 < level.size(); j += 2) {
      const auto s = support_of_sum("marg::sum", level[j].lower, level[j].len, level[j + 1].lower,
                                    level[j + 1].len);
      next.push_back({s.lower, s.len});
    }
    if (level.size() % 2) next.push_back(level.back());
    level = std::move(next);
  }
}

// The terms of sum(): slab 0 holds the inputs gathered in one pass, slab k the
// outputs of level k (all pool blocks on the calling thread's stream); a slab
// is freed once no run of the current level is in it. In log space the slabs
// hold log-probabilities and the levels are log_convolve calls.
template <class T>
class sum_tree {
 public:
  explicit sum_tree(const std::vector<pmf<T>>& xs, bool log_space = false) : log_(log_space) {
    gather(xs);
  }

  // pairs neighbours until one term is left; returns its probabilities
  const T* reduce() {
    // a cancel_scope stops the tree between levels too
    while (level_.size() > 1 || level_[0].count > 1) {
      throw_if_cancelled();
      next_level();
    }
    return level_[0].data;
  }
  // the slab holding the result
  array<T>& result_slab() { return slabs_[level_[0].slab]; }
  int result_len() const { return level_[0].len; }
  std::int64_t lower() const { return static_cast<std::int64_t>(totals_.lower); }
  T truncated() const { return static_cast<T>(totals_.truncated); }

 private:
  // Copies the inputs, stably sorted by length, into slab 0, a pool block:
  // migrated to the host first (with CUDA) so that these writes do not fault
  // its pages back one by one, then moved to the device once by the first
  // level's convolutions (its operands read it in place). Two parallel passes
  // over the inputs: totals per chunk, then the copies.
  void gather(const std::vector<pmf<T>>& xs) {
    const auto count = static_cast<std::int64_t>(xs.size());
    constexpr std::int64_t grain = 4096;
    const std::int64_t chunks = (count + grain - 1) / grain;
    std::vector<std::int64_t> order;  // empty: the inputs are sorted by length
    std::vector<input_totals> part(static_cast<std::size_t>(chunks));
    const auto totals = [&] {
      detail::parallel_rows(count, grain, [&](std::int64_t c, std::int64_t k0, std::int64_t k1) {
        part[c] = sum_inputs(xs, order, k0, k1);
      });
      input_totals t;
      for (std::int64_t c = 0; c < chunks; ++c) {
        const input_totals& p = part[c];
        t.sorted = t.sorted && p.sorted && (c == 0 || p.first >= part[c - 1].last);
        t.lower += p.lower;
        t.abs_lower += p.abs_lower;
        t.abs_upper += p.abs_upper;
        t.truncated += p.truncated - t.truncated * p.truncated;
        t.size += p.size;
      }
      return t;
    };
    totals_ = totals();
    if (!totals_.sorted) {
      order.resize(xs.size());
      for (std::int64_t i = 0; i < count; ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](std::int64_t u, std::int64_t v) { return xs[u].size() < xs[v].size(); });
      totals_ = totals();
    }
    // every intermediate term is at most as long as the result: checked
    // before the slab is allocated, so a too long sum is bad input, not out of memory
    detail::length_checked("marg::sum", "size of the sum (sum of sizes - count + 1)",
                           totals_.size - (count - 1));
    constexpr __int128 max64 = INT64_MAX;
    if (totals_.abs_lower > max64 || totals_.abs_upper > max64) check_tree_supports(xs);
    array<T> inputs(static_cast<std::size_t>(totals_.size));
    prefetch(inputs.data(), inputs.size() * sizeof(T), memory_location::host, inputs.stream());
    synchronize(inputs.stream());
    T* d = inputs.data();
    std::vector<std::int64_t> start(static_cast<std::size_t>(chunks) + 1, 0);
    for (std::int64_t c = 0; c < chunks; ++c) start[c + 1] = start[c] + part[c].size;
    detail::parallel_rows(count, grain, [&](std::int64_t c, std::int64_t k0, std::int64_t k1) {
      T* out = d + start[c];
      for (std::int64_t k = k0; k < k1; ++k) {
        const pmf<T>& x = xs[order.empty() ? k : order[k]];
        if (!log_)
          out = std::copy(x.data(), x.data() + x.size(), out);
        else if (x.has_log_probs())
          out = std::copy(x.log_data(), x.log_data() + x.size(), out);
        else
          out = std::transform(x.data(), x.data() + x.size(), out, [](T v) { return std::log(v); });
      }
    });
    std::int64_t at = 0;
    for (const input_totals& p : part) {
      for (const auto& [len, n] : p.runs) {
        if (!level_.empty() && level_.back().len == len)
          level_.back().count += n;
        else
          level_.push_back({d + at, len, n, len, 0});
        at += len * n;
      }
    }
    slabs_.push_back(std::move(inputs));
  }

  // One level: pairs neighbours of the length-sorted terms. The pairs inside
  // a run are one convolve_batched call (stride twice the run's), a pair
  // across two runs one convolve call, an odd last term is carried up a level
  // in its slab. The outputs, in pair order, go to the level's new slab; they
  // are not touched on the host (see the note on renormalization in sum()).
  void next_level() {
    // stable: keeps the pair order, so that equal lengths pair into batches
    std::stable_sort(level_.begin(), level_.end(),
                     [](const run<T>& u, const run<T>& v) { return u.len < v.len; });
    merge_runs();
    // the level's calls: (a, c, pairs) with a and c the first pair's terms
    struct call {
      const run<T>* ra;
      std::int64_t ia;
      const run<T>* rc;
      std::int64_t ic;
      std::int64_t pairs;
    };
    std::vector<call> calls;
    std::vector<run<T>> next;  // next[k]: the outputs of calls[k]
    std::optional<run<T>> carried;
    std::int64_t total = 0;
    std::size_t g = 0;
    std::int64_t i = 0;  // the next unpaired term: level_[g], index i
    while (g < level_.size()) {
      const run<T>& r = level_[g];
      const std::int64_t left = r.count - i;
      if (left >= 2) {
        const std::int64_t pairs = left / 2;
        calls.push_back({&r, i, &r, i + 1, pairs});
        const int len = 2 * r.len - 1;
        next.push_back({nullptr, len, pairs, len, 0});
        total += pairs * len;
        i += 2 * pairs;
      } else if (left == 1 && g + 1 < level_.size()) {
        const run<T>& s = level_[g + 1];
        calls.push_back({&r, i, &s, 0, 1});
        const int len = r.len + s.len - 1;
        next.push_back({nullptr, len, 1, len, 0});
        total += len;
        ++g;
        i = 1;
        continue;
      } else if (left == 1) {  // odd term (only the last run's): carried up a level
        carried = run<T>{r.data + i * r.stride, r.stride, 1, r.len, r.slab};
        i = r.count;
      }
      if (i >= r.count) {
        ++g;
        i = 0;
      }
    }
    const int id = static_cast<int>(slabs_.size());
    array<T> out(static_cast<std::size_t>(total));
    T* w = out.data();
    for (std::size_t k = 0; k < calls.size(); ++k) {
      const call& c = calls[k];
      const T* a = c.ra->data + c.ia * c.ra->stride;
      const T* b = c.rc->data + c.ic * c.rc->stride;
      const int len = c.ra->len + c.rc->len - 1;
      const int pairs = static_cast<int>(c.pairs);
      const std::int64_t sa = 2 * c.ra->stride, sb = 2 * c.rc->stride;
      if (log_ && pairs == 1)
        log_convolve<T>(c.ra->len, c.rc->len, a, 1, b, 1, w, 1);
      else if (log_)
        log_convolve_batched<T>(c.ra->len, c.rc->len, a, 1, sa, b, 1, sb, w, 1, len, pairs);
      else if (pairs == 1)
        convolve<T>(c.ra->len, c.rc->len, a, 1, b, 1, w, 1);
      else
        convolve_batched<T>(c.ra->len, c.rc->len, a, 1, sa, b, 1, sb, w, 1, len, pairs);
      next[k].data = w;
      next[k].slab = id;
      w += c.pairs * len;
    }
    if (carried) next.push_back(*carried);
    slabs_.push_back(std::move(out));
    level_ = std::move(next);
    // free the slabs no run refers to any more (stream-ordered: pending reads stay valid)
    for (int k = 0; k < id; ++k) {
      if (std::none_of(level_.begin(), level_.end(), [k](const run<T>& r) { return r.slab == k; }))
        slabs_[k] = array<T>();
    }
  }

  // joins neighbouring runs of one length that continue each other in one slab
  // at one stride, so that their pairs make one batched call
  void merge_runs() {
    std::size_t w = 0;
    for (std::size_t k = 1; k < level_.size(); ++k) {
      run<T>& a = level_[w];
      const run<T>& b = level_[k];
      const std::int64_t s = a.count > 1 ? a.stride : b.count > 1 ? b.stride : b.data - a.data;
      if (b.len == a.len && b.slab == a.slab && s > 0 && (b.count == 1 || b.stride == s) &&
          b.data == a.data + a.count * s) {
        a.stride = s;
        a.count += b.count;
      } else {
        level_[++w] = b;
      }
    }
    level_.resize(w + 1);
  }

  bool log_;
  std::vector<array<T>> slabs_;
  std::vector<run<T>> level_;
  input_totals totals_;
};

// x + y where some value is below T's range. The linear product gives every
// element at or above a floor, log_convolve every element below it (exact
// however small), and the log-probabilities are kept beside the
// probabilities when some element is below T's normal range. The floor is
// T's smallest normal number when both inputs hold their probabilities
// exactly (no log-probabilities): there the linear product is what it always
// was. When an input keeps log-probabilities, its stored probabilities lose
// values below T's range, each under 2^-1074 (double) or 2^-149 (float); with
// at most min(m, n) of them per element, the floor 4 min(m, n) 2^-1074 / eps
// bounds that loss by a quarter of T's rounding.
template <class T>
T linear_floor(const pmf<T>& x, const pmf<T>& y) {
  if (!x.has_log_probs() && !y.has_log_probs()) return std::numeric_limits<T>::min();
  return detail::underflow_floor<T>(static_cast<long double>(std::min(x.size(), y.size())));
}

template <class T>
pmf<T> add_in_log_space(const pmf<T>& x, const pmf<T>& y, const sum_support& s) {
  const int m = static_cast<int>(x.size()), n = static_cast<int>(y.size());
  array<T> r(static_cast<std::size_t>(s.len));
  convolve<T>(m, n, x.data(), 1, y.data(), 1, r.data(), 1, r.stream());
  const array<T> la = detail::log_probs_array(x), lb = detail::log_probs_array(y);
  array<T> lr(static_cast<std::size_t>(s.len));
  log_convolve<T>(m, n, la.data(), 1, lb.data(), 1, lr.data(), 1, lr.stream());
  detail::wait_for_stream(r.stream());
  detail::wait_for_stream(lr.stream());
  T* p = r.data();
  T* l = lr.data();
  const T floor = linear_floor(x, y);
  bool tiny = false;
  for (int i = 0; i < s.len; ++i) {
    if (p[i] >= floor) {
      l[i] = std::log(p[i]);
    } else {
      p[i] = std::exp(l[i]);
      tiny =
          tiny || (l[i] != -std::numeric_limits<T>::infinity() && l[i] < detail::log_min_normal<T>);
    }
  }
  detail::renormalize_if_drifted(p, s.len);
  const T truncated = detail::combine_truncated(x.truncated_mass(), y.truncated_mass());
  if (!tiny) return pmf<T>(detail::trusted, std::move(r), s.lower, truncated);
  return pmf<T>(detail::trusted, std::move(r), std::move(lr), s.lower, truncated);
}

}  // namespace

template <class T>
pmf<T> operator+(const pmf<T>& x, const pmf<T>& y) {
  const char* f = "marg::operator+";
  detail::check_nonempty(f, "x", x);
  detail::check_nonempty(f, "y", y);
  const detail::operands_device on(f, "x", x.device(), "y", y.device());
  const auto s = support_of_sum(f, x.lower(), x.size(), y.lower(), y.size());
  // values below T's range: log space; otherwise the linear product
  if (detail::needs_log_space(x, y)) return add_in_log_space(x, y, s);
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
  if (x.has_log_probs()) {
    array<T> l(static_cast<std::size_t>(x.size()));
    std::reverse_copy(x.log_data(), x.log_data() + x.size(), l.data());
    return pmf<T>(detail::trusted, std::move(r), std::move(l), lower, x.truncated_mass());
  }
  return pmf<T>(detail::trusted, std::move(r), lower, x.truncated_mass());
}

template <class T>
pmf<T> operator-(const pmf<T>& x, const pmf<T>& y) {
  detail::check_nonempty("marg::operator-", "x", x);
  detail::check_nonempty("marg::operator-", "y", y);
  const detail::operands_device on("marg::operator-", "x", x.device(), "y", y.device());
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
  for (std::size_t i = 1; i < xs.size(); ++i)
    const detail::operands_device check(f, "xs[0]", xs[0].device(),
                                        ("xs[" + std::to_string(i) + "]").c_str(), xs[i].device());
  const detail::operands_device on(f, "xs[0]", xs[0].device(), "xs[0]", xs[0].device());
  if (xs.size() == 1) return xs[0];
  // terms that keep log-probabilities: a balanced tree of pairwise sums, each
  // in log space where its values need it
  if (std::any_of(xs.begin(), xs.end(), [](const pmf<T>& x) { return x.has_log_probs(); })) {
    check_tree_supports(xs);
    std::vector<pmf<T>> level(xs);
    while (level.size() > 1) {
      std::stable_sort(level.begin(), level.end(),
                       [](const pmf<T>& u, const pmf<T>& v) { return u.size() < v.size(); });
      throw_if_cancelled();
      std::vector<pmf<T>> next;
      for (std::size_t j = 0; j + 1 < level.size(); j += 2) next.push_back(level[j] + level[j + 1]);
      if (level.size() % 2) next.push_back(level.back());
      level = std::move(next);
    }
    return level[0];
  }
  sum_tree<T> tree(xs);
  const T* t = tree.reduce();
  const int len = tree.result_len();
  array<T>& s = tree.result_slab();
  // Renormalization once, of the result: scaling commutes with convolution, so
  // dividing the intermediate rows by their totals (as operator+ would) gives
  // the same result up to rounding, at the price of reading every row on the
  // host between levels.
  detail::prepare_host_access(t, static_cast<std::size_t>(len) * sizeof(T), s.stream());
  array<T> r;
  if (t == s.data() && static_cast<std::size_t>(len) == s.size()) {
    r = std::move(s);
  } else {
    r = array<T>(static_cast<std::size_t>(len));
    std::copy(t, t + len, r.data());
  }
  detail::renormalize_if_drifted(r.data(), len);
  // Elements below the linear tree's floor lost mass to underflow somewhere in
  // the tree: a second tree in log space gives them exactly. Each level's
  // elements below T's normal range lose under half of denorm_min each, and
  // an element gathers at most `len` of them per level, so above
  // 4 * levels * len * denorm_min / eps the linear value is exact to a quarter
  // of T's rounding.
  const long double levels = std::ceil(std::log2(static_cast<long double>(xs.size()))) + 1;
  const T floor = detail::underflow_floor<T>(levels * len);
  T* p = r.data();
  if (std::all_of(p, p + len, [floor](T v) { return v >= floor; }))
    return pmf<T>(detail::trusted, std::move(r), tree.lower(), tree.truncated());
  sum_tree<T> logs(xs, true);
  const T* lt = logs.reduce();
  array<T>& ls = logs.result_slab();
  detail::prepare_host_access(lt, static_cast<std::size_t>(len) * sizeof(T), ls.stream());
  array<T> l(static_cast<std::size_t>(len));
  T* lp = l.data();
  bool tiny = false;
  for (int i = 0; i < len; ++i) {
    if (p[i] >= floor) {
      lp[i] = std::log(p[i]);
    } else {
      lp[i] = lt[i];
      p[i] = std::exp(lt[i]);
      tiny = tiny ||
             (lt[i] != -std::numeric_limits<T>::infinity() && lt[i] < detail::log_min_normal<T>);
    }
  }
  if (!tiny) return pmf<T>(detail::trusted, std::move(r), tree.lower(), tree.truncated());
  return pmf<T>(detail::trusted, std::move(r), std::move(l), tree.lower(), tree.truncated());
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
