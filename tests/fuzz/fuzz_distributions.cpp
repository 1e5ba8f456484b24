// libFuzzer target: the distributions API. Random factory parameters (NaN,
// +-inf, negatives, 0, 1, huge, ordinary) build up to four pmfs; then a
// random chain of +, -, negation, shifts, sum, conditioning, log_prob_sum and
// accessors runs on them, results joining the pool of operands.
//
// Property: every call either throws a std::invalid_argument or returns a
// result that matches an independent long double loop over the probabilities
// of its operands (as stored, so that errors do not compound over the chain):
// relative 1e-5 (float) / 1e-12 (double) per element, with `terms` times the
// smallest normal T of absolute slack where products fall below the range
// of T. Every pmf returned is non-empty (or an impossible posterior),
// finite, non-negative and sums to 1 within 16 epsilon. Unlike the numeric
// layer, the distributions layer must reject every NaN or infinity.
#include <marg/marg.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fuzz_common.hpp"

namespace {

using namespace marg::fuzz;

// longest operand built (keeps one execution fast)
constexpr std::int64_t max_len = 400;

template <class T>
real pick_real(FuzzedDataProvider& d) {
  switch (d.ConsumeIntegralInRange<int>(0, 11)) {
    case 0:
      return std::numeric_limits<T>::quiet_NaN();
    case 1:
      return std::numeric_limits<T>::infinity();
    case 2:
      return -std::numeric_limits<T>::infinity();
    case 3:
      return -d.ConsumeProbability<double>();
    case 4:
      return 0;
    case 5:
      return 1;
    case 6:
      return static_cast<T>(1e30);
    case 7:
      return std::numeric_limits<T>::denorm_min();
    default:
      return static_cast<T>(d.ConsumeProbability<double>());
  }
}

std::int64_t pick_int(FuzzedDataProvider& d, std::int64_t lo, std::int64_t hi) {
  switch (d.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
      return INT64_MIN + d.ConsumeIntegralInRange<int>(0, 3);
    case 1:
      return INT64_MAX - d.ConsumeIntegralInRange<int>(0, 3);
    case 2:
      return d.ConsumeIntegral<std::int64_t>();
    default:
      return d.ConsumeIntegralInRange<std::int64_t>(lo, hi);
  }
}

// checks a returned pmf's invariants and its probabilities against want
template <class T>
void check_pmf(const marg::pmf<T>& x, const std::vector<real>& want, std::int64_t lower, int terms,
               const char* what) {
  if (x.empty()) finding(what);
  if (x.lower() != lower || x.size() != static_cast<std::int64_t>(want.size()))
    finding("support differs from the reference", x.size(), want.size());
  real s = 0, ws = 0;
  for (real w : want) ws += w;
  const std::vector<T> p = x.probs();
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!std::isfinite(p[i]) || p[i] < 0) finding("a non-finite or negative probability", p[i]);
    s += p[i];
    if (!within_bound<T>(p[i], want[i] / ws, want[i] / ws, terms))
      finding(what, p[i], want[i] / ws);
  }
  if (std::fabs(s - 1) >
      16 * std::numeric_limits<T>::epsilon() + terms * std::numeric_limits<T>::min())
    finding("total mass off 1", s, 1);
}

// long double references of the factories: ratio recurrences in logs (not lgamma)
template <class T>
void factory(FuzzedDataProvider& d, std::vector<marg::pmf<T>>& pool) {
  const int kind = d.ConsumeIntegralInRange<int>(0, 8);
  try {
    switch (kind) {
      case 0: {  // categorical
        const auto len = d.ConsumeIntegralInRange<int>(0, 64);
        std::vector<T> w(len);
        for (auto& v : w) v = static_cast<T>(pick_real<T>(d));
        const std::int64_t lower = pick_int(d, -1000, 1000);
        const auto x = marg::categorical<T>(w, lower);
        std::vector<real> want(w.begin(), w.end());
        check_pmf(x, want, lower, 1, "categorical");
        pool.push_back(x);
        return;
      }
      case 1: {  // bernoulli
        const T p = static_cast<T>(pick_real<T>(d));
        const auto x = marg::bernoulli<T>(p);
        check_pmf(x, {1 - static_cast<real>(p), p}, 0, 1, "bernoulli");
        pool.push_back(x);
        return;
      }
      case 2: {  // binomial
        const std::int64_t n = pick_int(d, -2, max_len);
        const T p = static_cast<T>(pick_real<T>(d));
        const auto x = marg::binomial<T>(n, p);
        if (n > max_len) return;
        std::vector<real> want(n + 1, 0);
        if (p == 0 || p == 1) {
          want[p == 0 ? 0 : n] = 1;
        } else {
          // from the mode outwards in logs, so that nothing underflows early
          std::vector<real> lw(n + 1);
          real lp = 0;
          for (std::int64_t k = 0; k <= n; ++k) {
            lw[k] = lp;
            if (k < n)
              lp += std::log(static_cast<real>(n - k) / (k + 1) * p / (1 - static_cast<real>(p)));
          }
          const real mx = *std::max_element(lw.begin(), lw.end());
          for (std::int64_t k = 0; k <= n; ++k) want[k] = std::exp(lw[k] - mx);
        }
        check_pmf(x, want, 0, 4, "binomial");
        pool.push_back(x);
        return;
      }
      case 3: {  // uniform_int
        const std::int64_t a = pick_int(d, -1000, 1000);
        std::int64_t b = pick_int(d, -1000, 1000);
        if (d.ConsumeBool() &&
            __builtin_add_overflow(a, d.ConsumeIntegralInRange<int>(-2, max_len), &b))
          b = a;
        const auto x = marg::uniform_int<T>(a, b);
        if (static_cast<__int128>(b) - a + 1 > max_len) return;
        check_pmf(x, std::vector<real>(b - a + 1, 1), a, 1, "uniform_int");
        pool.push_back(x);
        return;
      }
      case 4: {  // beta_binomial: ratio (n-k)/(k+1) (k+a)/(n-k-1+b)
        const std::int64_t n = pick_int(d, -2, max_len);
        const real a = pick_real<T>(d) * 20, b = pick_real<T>(d) * 20;
        const auto x = marg::beta_binomial<T>(n, static_cast<T>(a), static_cast<T>(b));
        if (n > max_len) return;
        const real ta = static_cast<T>(a), tb = static_cast<T>(b);
        // known finding (docs/reliability.md, F3): lgamma differences lose
        // everything for shapes ~1e30; only the invariants are checked there
        if (ta > 1e6L || tb > 1e6L) {
          const std::vector<T> got = x.probs();
          check_pmf(x, std::vector<real>(got.begin(), got.end()), 0, 4, "beta_binomial (huge)");
          pool.push_back(x);
          return;
        }
        std::vector<real> lw(n + 1, 0);
        for (std::int64_t k = 1; k <= n; ++k)
          lw[k] =
              lw[k - 1] + std::log(static_cast<real>(n - k + 1) / k * (k - 1 + ta) / (n - k + tb));
        const real mx = *std::max_element(lw.begin(), lw.end());
        std::vector<real> want(n + 1);
        for (std::int64_t k = 0; k <= n; ++k) want[k] = std::exp(lw[k] - mx);
        check_pmf(x, want, 0, 4, "beta_binomial");
        pool.push_back(x);
        return;
      }
      case 5:    // poisson
      case 6:    // geometric
      case 7: {  // negative binomial
        real par = pick_real<T>(d) * (kind == 5 ? 50 : 1);
        // a valid but tiny p would ask for ~ log(tail) / p values: keep runs short
        if (kind != 5 && par > 0 && par < 1e-4L) par = 1e-4L;
        const real r = pick_real<T>(d) * 10;
        const T tail = d.ConsumeBool() ? static_cast<T>(pick_real<T>(d)) : marg::default_tail<T>();
        const T tp = static_cast<T>(par), tr = static_cast<T>(r);
        const auto x = kind == 5   ? marg::poisson<T>(tp, tail)
                       : kind == 6 ? marg::geometric<T>(tp, tail)
                                   : marg::negative_binomial<T>(tr, tp, tail);
        if (x.size() > 100000) return;
        if (!(x.truncated_mass() >= 0 && x.truncated_mass() <= tail))  // F4: == tail after rounding
          finding("truncated mass outside [0, tail]", x.truncated_mass(), tail);
        std::vector<real> lw(x.size(), 0);
        for (std::int64_t k = 1; k < x.size(); ++k) {
          const real ratio =
              kind == 5   ? static_cast<real>(tp) / k
              : kind == 6 ? 1 - static_cast<real>(tp)
                          : (k - 1 + static_cast<real>(tr)) / k * (1 - static_cast<real>(tp));
          lw[k] = lw[k - 1] + std::log(ratio);
        }
        const real mx = *std::max_element(lw.begin(), lw.end());
        std::vector<real> want(x.size());
        for (std::int64_t k = 0; k < x.size(); ++k) want[k] = std::exp(lw[k] - mx);
        check_pmf(x, want, 0, 4, "poisson/geometric/negative_binomial");
        if (x.size() <= max_len) pool.push_back(x);
        return;
      }
      default: {
        const std::int64_t k = pick_int(d, -1000, 1000);
        const auto x = marg::delta<T>(k);
        check_pmf(x, {1}, k, 1, "delta");
        pool.push_back(x);
        return;
      }
    }
  } catch (const std::invalid_argument&) {
  }
}

template <class T>
std::vector<real> ref_conv(const marg::pmf<T>& x, const marg::pmf<T>& y) {
  std::vector<real> r(x.size() + y.size() - 1, 0);
  const auto p = x.probs(), q = y.probs();
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = 0; j < q.size(); ++j) r[i + j] += static_cast<real>(p[i]) * q[j];
  return r;
}

template <class T>
void step(FuzzedDataProvider& d, std::vector<marg::pmf<T>>& pool) {
  if (pool.empty()) return;
  const auto& x = pool[d.ConsumeIntegralInRange<std::size_t>(0, pool.size() - 1)];
  const auto& y = pool[d.ConsumeIntegralInRange<std::size_t>(0, pool.size() - 1)];
  const int terms = static_cast<int>(std::min(x.size(), y.size()));
  const bool fits = x.size() + y.size() - 1 <= max_len;
  const auto add_checked = [](std::int64_t a, std::int64_t b, std::int64_t& r) {
    return !__builtin_add_overflow(a, b, &r);
  };
  std::int64_t lo = 0, hi = 0;
  const bool support_ok =
      add_checked(x.lower(), y.lower(), lo) && add_checked(x.upper(), y.upper(), hi);
  try {
    switch (d.ConsumeIntegralInRange<int>(0, 6)) {
      case 0: {  // x + y
        if (!fits) return;
        const auto z = x + y;
        if (!support_ok) finding("x + y accepted a support past int64");
        check_pmf(z, ref_conv(x, y), lo, terms, "x + y");
        pool.push_back(z);
        return;
      }
      case 1: {  // x - y and -y
        if (!fits) return;
        const __int128 want_lower = static_cast<__int128>(x.lower()) - y.upper();
        const __int128 want_upper = static_cast<__int128>(x.upper()) - y.lower();
        const auto z = x - y;
        if (want_lower < INT64_MIN || want_upper > INT64_MAX || y.lower() == INT64_MIN)
          finding("x - y accepted a support past int64");
        const auto ny = -y;
        auto q = y.probs();
        std::reverse(q.begin(), q.end());
        check_pmf(ny, std::vector<real>(q.begin(), q.end()), -y.upper(), 1, "-y");
        check_pmf(z, ref_conv(x, ny), static_cast<std::int64_t>(want_lower), terms, "x - y");
        pool.push_back(z);
        return;
      }
      case 2: {  // shifts
        const std::int64_t k = pick_int(d, -1000, 1000);
        const bool plus = d.ConsumeBool();
        const auto z = plus ? x + k : x - k;
        const __int128 lower =
            plus ? static_cast<__int128>(x.lower()) + k : static_cast<__int128>(x.lower()) - k;
        const __int128 upper = lower + x.size() - 1;
        if (lower < INT64_MIN || upper > INT64_MAX) finding("a shift past int64 was accepted");
        if (z.lower() != lower || z.size() != x.size() || z.probs() != x.probs())
          finding("a shift changed the probabilities or the support");
        pool.push_back(z);
        return;
      }
      case 3: {  // sum of 0..4 pool members
        std::vector<marg::pmf<T>> xs;
        std::int64_t total = 1;
        const int count = d.ConsumeIntegralInRange<int>(0, 4);
        for (int i = 0; i < count; ++i) {
          xs.push_back(pool[d.ConsumeIntegralInRange<std::size_t>(0, pool.size() - 1)]);
          total += xs.back().size() - 1;
        }
        if (total > max_len) return;
        const auto z = marg::sum(xs);
        std::vector<real> want{1};
        // 128 bits: sum() pairs terms as a tree, so a sequential partial sum
        // of the lower bounds may leave int64 where the total does not
        __int128 lower = 0;
        int depth_terms = 1;
        for (const auto& t : xs) {
          std::vector<real> r(want.size() + t.size() - 1, 0);
          const auto p = t.probs();
          for (std::size_t i = 0; i < want.size(); ++i)
            for (std::size_t j = 0; j < p.size(); ++j) r[i + j] += want[i] * p[j];
          want = r;
          lower += t.lower();
          depth_terms += static_cast<int>(t.size());
        }
        if (lower < INT64_MIN || lower + static_cast<__int128>(want.size()) - 1 > INT64_MAX)
          finding("sum accepted a support outside int64");
        check_pmf(z, want, static_cast<std::int64_t>(lower), depth_terms, "sum");
        pool.push_back(z);
        return;
      }
      case 4: {  // hard conditioning and log_prob_sum
        const std::int64_t k = support_ok && d.ConsumeBool()
                                   ? d.ConsumeIntegralInRange<std::int64_t>(lo, hi)
                                   : pick_int(d, -1000, 1000);
        const auto post = marg::condition_on_sum(x, y, k);
        const T ll = marg::log_prob_sum(x, y, k);
        if (x.has_log_probs() || y.has_log_probs()) {
          // log space: the terms may lie below long double's range too, so
          // the brute force is a log-sum-exp over the anti-diagonal
          real top = -std::numeric_limits<real>::infinity();
          std::vector<real> lw;
          for (std::int64_t i = 0; i < x.size(); ++i) {
            const __int128 j = static_cast<__int128>(k) - (x.lower() + i);
            if (j < y.lower() || j > y.upper()) continue;
            lw.push_back(static_cast<real>(x.log_prob(x.lower() + i)) +
                         y.log_prob(static_cast<std::int64_t>(j)));
            top = std::max(top, lw.back());
          }
          if (top == -std::numeric_limits<real>::infinity()) {
            if (ll != -std::numeric_limits<T>::infinity() || !post.first.empty() ||
                !post.second.empty())
              finding("an impossible observation was not reported as such (log space)", ll);
            return;
          }
          real sum = 0;
          for (const real v : lw) sum += std::exp(v - top);
          const real want_ll = top + std::log(sum);
          if (std::fabs(ll - want_ll) > tolerance<T>() * (1 + std::fabs(want_ll)) ||
              std::fabs(post.log_likelihood - want_ll) >
                  tolerance<T>() * (1 + std::fabs(want_ll)) ||
              post.first.empty() || post.second.empty())
            finding("log likelihood (log space)", ll, want_ll);
          pool.push_back(post.first);
          return;
        }
        // brute force over the anti-diagonal
        std::vector<real> w(x.size(), 0);
        real total = 0;
        for (std::int64_t i = 0; i < x.size(); ++i) {
          const __int128 j = static_cast<__int128>(k) - (x.lower() + i);
          if (j < y.lower() || j > y.upper()) continue;
          w[i] = static_cast<real>(x.prob(x.lower() + i)) * y.prob(static_cast<std::int64_t>(j));
          total += w[i];
        }
        if (total == 0) {
          if (ll != -std::numeric_limits<T>::infinity() || !post.first.empty() ||
              !post.second.empty())
            finding("an impossible observation was not reported as such", ll);
          return;
        }
        const real want_ll = std::log(total);
        if (std::fabs(ll - want_ll) > tolerance<T>() * (1 + std::fabs(want_ll)) ||
            std::fabs(post.log_likelihood - want_ll) > tolerance<T>() * (1 + std::fabs(want_ll)))
          finding("log likelihood", ll, want_ll);
        for (std::int64_t i = 0; i < x.size(); ++i) {
          const real want = w[i] / total;
          if (!within_bound<T>(post.first.prob(x.lower() + i), want, want, 2))
            finding("posterior of x", post.first.prob(x.lower() + i), want);
        }
        pool.push_back(post.first);
        return;
      }
      case 5: {  // accessors at random values
        for (int i = 0; i < 4; ++i) {
          const std::int64_t k = pick_int(d, std::max<__int128>(INT64_MIN, x.lower() - __int128{2}),
                                          std::min<__int128>(INT64_MAX, x.upper() + __int128{2}));
          const T p = x.prob(k), lp = x.log_prob(k), c = x.cdf(k);
          const bool inside = k >= x.lower() && k <= x.upper();
          if (!inside &&
              (p != 0 || lp != -std::numeric_limits<T>::infinity() || c != (k < x.lower() ? 0 : 1)))
            finding("accessor outside the support", p);
          if (inside && (p != x.probs()[k - x.lower()] || !(c >= 0 && c <= 1)))
            finding("accessor inside the support", p);
        }
        const T mean = x.mean(), var = x.variance();
        if (!std::isfinite(mean) || !(var >= 0)) finding("moments", mean, var);
        return;
      }
      default: {  // soft evidence with arbitrary (possibly bad) values
        if (!fits) return;
        std::vector<T> l(x.size() + y.size() - 1 + (d.ConsumeIntegralInRange<int>(0, 9) == 0));
        for (auto& v : l)
          v = static_cast<T>(d.ConsumeBool() ? d.ConsumeProbability<double>() : pick_real<T>(d));
        const auto post = marg::condition_on_sum(x, y, l);
        if (l.size() != static_cast<std::size_t>(x.size() + y.size() - 1))
          finding("likelihood size accepted");
        for (T v : l)
          if (!(std::isfinite(v) && v >= 0)) finding("a bad likelihood value was accepted", v);
        if (!post.first.empty())
          for (T v : post.first.probs())
            if (!std::isfinite(v) || v < 0) finding("soft posterior not finite", v);
        return;
      }
    }
  } catch (const std::invalid_argument&) {
  }
}

template <class T>
void run(FuzzedDataProvider& d) {
  std::vector<marg::pmf<T>> pool;
  const int n_factories = d.ConsumeIntegralInRange<int>(1, 4);
  for (int i = 0; i < n_factories; ++i) factory<T>(d, pool);
  for (int i = 0; i < 8 && d.remaining_bytes() > 0; ++i) step<T>(d, pool);
}

}  // namespace

// The pool's default cap is half the machine's memory and it keeps freed
// extents cached; libFuzzer stops at 4 GiB of RSS (run.sh). A cap of 1 GiB
// keeps the process well below that: larger valid inputs take the documented
// out_of_memory path, which the property accepts.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  marg::set_pool_limit(std::size_t{1} << 30);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider d(data, size);
  try {
    if (d.ConsumeBool())
      run<double>(d);
    else
      run<float>(d);
  } catch (const std::invalid_argument&) {
  } catch (const marg::out_of_memory&) {
    // valid input whose result does not fit under the pool's cap (a support
    // of 2e9 values, say): documented; the pool must stay usable
    void* p = marg::allocate(4096);
    if (p == nullptr) finding("the pool is unusable after out_of_memory");
    marg::deallocate(p, 4096);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    finding("an exception not derived from std::invalid_argument");
  }
  return 0;
}
