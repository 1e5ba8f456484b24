// The C API of the distributions layer: opaque handles around marg::pmf,
// marg::pmf_batch and marg::batch_evidence. Each function checks its
// arguments, computes every result, and only then writes its outputs, so a
// failing call leaves them untouched.
#include <marg/marg.h>

#include <marg/marg.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "c_guard.hpp"

struct marg_pmf {
  std::variant<marg::pmf<float>, marg::pmf<double>> v;
};
struct marg_pmf_batch {
  std::variant<marg::pmf_batch<float>, marg::pmf_batch<double>> v;
};
struct marg_batch_evidence {
  std::variant<marg::batch_evidence<float>, marg::batch_evidence<double>> v;
};

namespace {

using marg::detail::c_api::guarded;

template <class T>
constexpr const char* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

void need(const void* p, const char* function, const char* name) {
  MARG_EXPECTS(p != nullptr, std::string(function) + ": " + name + " is null");
}

// the pmf<T> behind a handle; invalid_argument for NULL or the other type
template <class T, class H>
const auto& typed(const H* h, const char* function, const char* name) {
  need(h, function, name);
  using want = std::remove_cvref_t<decltype(std::get<0>(h->v))>;
  using value = std::conditional_t<std::is_same_v<T, float>, want,
                                   std::variant_alternative_t<1, decltype(h->v)>>;
  const value* p = std::get_if<value>(&h->v);
  MARG_EXPECTS(p != nullptr, std::string(function) + ": " + name + " holds " +
                                 (std::is_same_v<T, float> ? "double" : "float") +
                                 " values, the call takes " + type_name<T>());
  return *p;
}

// calls f(x) with the pmf (or batch) behind a handle of either type
template <class H, class F>
decltype(auto) visit1(const H* h, const char* function, const char* name, F&& f) {
  need(h, function, name);
  return std::visit(std::forward<F>(f), h->v);
}

// calls f(x, y) with two handles of the same type
template <class H1, class H2, class F>
decltype(auto) visit2(const H1* x, const H2* y, const char* function, F&& f) {
  need(x, function, "x");
  need(y, function, "y");
  MARG_EXPECTS(x->v.index() == y->v.index(),
               std::string(function) + ": x and y hold different element types");
  if (x->v.index() == 0) return f(std::get<0>(x->v), std::get<0>(y->v));
  return f(std::get<1>(x->v), std::get<1>(y->v));
}

template <class T>
std::unique_ptr<marg_pmf> wrap(marg::pmf<T> p) {
  if (p.empty()) return nullptr;
  auto h = std::make_unique<marg_pmf>();
  h->v = std::move(p);
  return h;
}

template <class T>
std::unique_ptr<marg_pmf_batch> wrap(marg::pmf_batch<T> p) {
  auto h = std::make_unique<marg_pmf_batch>();
  h->v = std::move(p);
  return h;
}

// a host vector of `count` values from a C array
template <class T>
std::vector<T> input(const T* p, std::int64_t count, const char* function, const char* name) {
  need(p, function, name);
  MARG_EXPECTS(count >= 1, marg::detail::bad_argument(
                               function, (std::string("count of ") + name).c_str(), count, ">= 1"));
  return std::vector<T>(p, p + count);
}

// writes v into out (capacity count) after checking both
template <class T>
void output(const std::vector<T>& v, T* out, std::int64_t count, const char* function,
            const char* name) {
  need(out, function, name);
  MARG_EXPECTS(count >= static_cast<std::int64_t>(v.size()),
               marg::detail::bad_argument(function, (std::string("count of ") + name).c_str(),
                                          count, (">= " + std::to_string(v.size())).c_str()));
  std::copy(v.begin(), v.end(), out);
}

template <class T>
T tail_or_default(T tail) {
  return tail == T(0) ? marg::default_tail<T>() : tail;
}

// runs fn (which returns the new handle) and stores its result in *out
template <class Make>
marg_status make(const char* function, marg_pmf** out, Make&& fn) {
  return guarded([&] {
    need(out, function, "out");
    std::unique_ptr<marg_pmf> h = fn();
    *out = h.release();
  });
}

template <class Make>
marg_status make_batch(const char* function, marg_pmf_batch** out, Make&& fn) {
  return guarded([&] {
    need(out, function, "out");
    std::unique_ptr<marg_pmf_batch> h = fn();
    *out = h.release();
  });
}

// the outputs of a posterior: every pointer may be NULL (not wanted)
template <class T>
void post_out(const marg::sum_posterior<T>& p, double* ll, marg_pmf** first, marg_pmf** second) {
  auto a = first ? wrap(p.first) : nullptr;
  auto b = second ? wrap(p.second) : nullptr;
  if (ll) *ll = static_cast<double>(p.log_likelihood);
  if (first) *first = a.release();
  if (second) *second = b.release();
}

template <class T>
void batch_post_out(const marg::batch_sum_posterior<T>& p, double* ll, marg_pmf_batch** first,
                    marg_pmf_batch** second) {
  auto a = first ? wrap(p.first) : nullptr;
  auto b = second ? wrap(p.second) : nullptr;
  if (ll) std::copy(p.log_likelihood.begin(), p.log_likelihood.end(), ll);
  if (first) *first = a.release();
  if (second) *second = b.release();
}

template <class T>
void draws_out(const marg::batch_joint_draws<T>& d, double* ll, int64_t* xv, int64_t* yv) {
  if (ll) std::copy(d.log_likelihood.begin(), d.log_likelihood.end(), ll);
  if (xv) std::copy(d.first.begin(), d.first.end(), xv);
  if (yv) std::copy(d.second.begin(), d.second.end(), yv);
}

// ---- the typed calls, one template each; the C functions below instantiate them

template <class T>
marg_status probs(const char* f, const marg_pmf* x, T* out, std::int64_t count, bool logs) {
  return guarded([&] {
    const auto& p = typed<T>(x, f, "x");
    output(logs ? p.log_probs() : p.probs(), out, count, f, "out");
  });
}

// one scalar of a pmf: value(p) computed before *out is written
template <class T, class G>
marg_status scalar(const char* f, const marg_pmf* x, T* out, G&& value) {
  return guarded([&] {
    const auto& p = typed<T>(x, f, "x");
    need(out, f, "out");
    const T v = value(p);
    *out = v;
  });
}

template <class T>
marg_status soft(const char* f, const marg_pmf* x, const marg_pmf* y, const T* values,
                 std::int64_t count, bool logs, double* ll, marg_pmf** first, marg_pmf** second) {
  return guarded([&] {
    const auto& a = typed<T>(x, f, "x");
    const auto& b = typed<T>(y, f, "y");
    const std::vector<T> l = input(values, count, f, "likelihood");
    post_out(logs ? marg::condition_on_sum_log(a, b, l) : marg::condition_on_sum(a, b, l), ll,
             first, second);
  });
}

template <class T>
marg_status given_evidence(const char* f, const marg_pmf* x, const marg_pmf* y, const T* likelihood,
                           std::int64_t count, marg_pmf** out) {
  return make(f, out, [&] {
    return wrap(marg::sum_given_evidence(typed<T>(x, f, "x"), typed<T>(y, f, "y"),
                                         input(likelihood, count, f, "likelihood")));
  });
}

void check_uniform(const char* f, const char* name, double u) {
  MARG_EXPECTS(u >= 0 && u < 1, marg::detail::bad_real_argument(f, name, u, "in [0, 1)"));
}

// (x, y) given x + y = k, x drawn from the posterior by the uniform u
template <class T>
std::pair<std::int64_t, std::int64_t> draw_given_sum(const char* f, const marg::pmf<T>& x,
                                                     const marg::pmf<T>& y, std::int64_t k,
                                                     double u) {
  const auto post = marg::condition_on_sum(x, y, k);
  MARG_EXPECTS(!post.first.empty(), std::string(f) + ": the observation x + y = " +
                                        std::to_string(k) + " is impossible");
  const std::int64_t j = post.first.lower() + post.first.sample_index(u);
  return {j, k - j};
}

template <class T>
marg_status sample_evidence(const char* f, const marg_pmf* x, const marg_pmf* y,
                            const T* likelihood, std::int64_t count, double u_sum, double u_x,
                            int64_t* xv, int64_t* yv) {
  return guarded([&] {
    const auto& a = typed<T>(x, f, "x");
    const auto& b = typed<T>(y, f, "y");
    check_uniform(f, "u_sum", u_sum);
    check_uniform(f, "u_x", u_x);
    need(xv, f, "x_value");
    need(yv, f, "y_value");
    const auto z = marg::sum_given_evidence(a, b, input(likelihood, count, f, "likelihood"));
    MARG_EXPECTS(!z.empty(), std::string(f) + ": the evidence is impossible");
    const auto d = draw_given_sum(f, a, b, z.lower() + z.sample_index(u_sum), u_x);
    *xv = d.first;
    *yv = d.second;
  });
}

template <class T>
void grads_out(const char* f, const marg::sum_gradient<T>& g, T* gx, std::int64_t nx, T* gy,
               std::int64_t ny) {
  need(gx, f, "gx");
  need(gy, f, "gy");
  MARG_EXPECTS(nx >= static_cast<std::int64_t>(g.first.size()),
               marg::detail::bad_argument(f, "count_x", nx, "the size of x or more"));
  MARG_EXPECTS(ny >= static_cast<std::int64_t>(g.second.size()),
               marg::detail::bad_argument(f, "count_y", ny, "the size of y or more"));
  std::copy(g.first.begin(), g.first.end(), gx);
  std::copy(g.second.begin(), g.second.end(), gy);
}

template <class T>
marg_status batch_create(const char* f, int batch, int length, const int64_t* lowers,
                         const T* values, int normalize, marg_pmf_batch** out) {
  return make_batch(f, out, [&] {
    MARG_EXPECTS(batch >= 1, marg::detail::bad_argument(f, "batch", batch, ">= 1"));
    MARG_EXPECTS(length >= 1, marg::detail::bad_argument(f, "length", length, ">= 1"));
    need(lowers, f, "lowers");
    need(values, f, "values");
    return wrap(marg::pmf_batch<T>(
        batch, length, std::vector<std::int64_t>(lowers, lowers + batch),
        std::vector<T>(values, values + static_cast<std::int64_t>(batch) * length),
        normalize != 0));
  });
}

template <class T>
marg_status batch_binomial(const char* f, int batch, const int64_t* ns, const double* ps,
                           double tail, marg_pmf_batch** out) {
  return make_batch(f, out, [&] {
    MARG_EXPECTS(batch >= 1, marg::detail::bad_argument(f, "batch", batch, ">= 1"));
    need(ns, f, "ns");
    need(ps, f, "ps");
    return wrap(marg::binomial_batch<T>(std::vector<std::int64_t>(ns, ns + batch),
                                        std::vector<double>(ps, ps + batch), tail));
  });
}

// the row-major probabilities, or with `logs` the log-probabilities (kept
// ones where the batch has them, else the log of the probabilities)
template <class T>
marg_status batch_values(const char* f, const marg_pmf_batch* x, T* out, std::int64_t count,
                         bool logs) {
  return guarded([&] {
    const auto& b = typed<T>(x, f, "x");
    const std::int64_t n = static_cast<std::int64_t>(b.batch()) * b.length();
    need(out, f, "out");
    MARG_EXPECTS(count >= n, marg::detail::bad_argument(
                                 f, "count", count,
                                 ("batch * length = " + std::to_string(n) + " or more").c_str()));
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
    const T* kept = logs ? b.log_data() : nullptr;
    if (kept != nullptr) {
      marg::detail::prepare_host_access(kept, bytes, marg::stream_view{});
      std::copy(kept, kept + n, out);
      return;
    }
    marg::detail::prepare_host_access(b.data(), bytes, marg::stream_view{});
    if (logs)
      std::transform(b.data(), b.data() + n, out, [](T v) { return std::log(v); });
    else
      std::copy(b.data(), b.data() + n, out);
  });
}

template <class T>
marg_status batch_soft(const char* f, const marg_pmf_batch* x, const marg_pmf_batch* y,
                       const T* likelihood, std::int64_t count, double* ll, marg_pmf_batch** first,
                       marg_pmf_batch** second) {
  return guarded([&] {
    const auto& a = typed<T>(x, f, "x");
    const auto& b = typed<T>(y, f, "y");
    batch_post_out(marg::condition_on_sum(a, b, input(likelihood, count, f, "likelihood")), ll,
                   first, second);
  });
}

template <class T>
marg_status batch_grad(const char* f, const marg_pmf_batch* x, const marg_pmf_batch* y, const T* g,
                       std::int64_t count, T* gx, std::int64_t count_x, T* gy,
                       std::int64_t count_y) {
  return guarded([&] {
    const auto r =
        marg::sum_grad(typed<T>(x, f, "x"), typed<T>(y, f, "y"), input(g, count, f, "g"));
    need(gx, f, "gx");
    need(gy, f, "gy");
    MARG_EXPECTS(count_x >= static_cast<std::int64_t>(r.first.size()),
                 marg::detail::bad_argument(f, "count_x", count_x, "batch * length(x) or more"));
    MARG_EXPECTS(count_y >= static_cast<std::int64_t>(r.second.size()),
                 marg::detail::bad_argument(f, "count_y", count_y, "batch * length(y) or more"));
    std::copy(r.first.begin(), r.first.end(), gx);
    std::copy(r.second.begin(), r.second.end(), gy);
  });
}

// 2 * batch uniforms, each in [0, 1)
std::vector<double> uniforms(const char* f, const double* u, std::int64_t count, int batch) {
  const std::vector<double> us = input(u, count, f, "u");
  MARG_EXPECTS(count == 2 * static_cast<std::int64_t>(batch),
               marg::detail::bad_argument(f, "count of u", count, "2 * batch"));
  for (double v : us) check_uniform(f, "u[i]", v);
  return us;
}

template <class T>
marg_status batch_sample_soft(const char* f, const marg_pmf_batch* x, const marg_pmf_batch* y,
                              const T* likelihood, std::int64_t count, const double* u,
                              std::int64_t count_u, double* ll, int64_t* xv, int64_t* yv) {
  return guarded([&] {
    const auto& a = typed<T>(x, f, "x");
    const auto& b = typed<T>(y, f, "y");
    const std::vector<double> us = uniforms(f, u, count_u, a.batch());
    draws_out(marg::detail::sample_given_evidence_with(
                  a, b, input(likelihood, count, f, "likelihood"), us),
              ll, xv, yv);
  });
}

// the values of a per-row argument given as `count` values, `batch` or 1
template <class V>
std::vector<V> per_row(const char* f, const char* name, const V* v, int count, int batch) {
  need(v, f, name);
  MARG_EXPECTS(
      count == batch || count == 1,
      marg::detail::bad_argument(f, (std::string("count of ") + name).c_str(), count,
                                 ("1 or the batch size " + std::to_string(batch)).c_str()));
  return std::vector<V>(v, v + count);
}

// the batch_evidence<T> behind a handle, of the element type of batch x
template <class B>
const auto& evidence_of(const B& x, const marg_batch_evidence* e, const char* f) {
  using T = typename std::remove_cvref_t<decltype(x.truncated_masses())>::value_type;
  const auto* v = std::get_if<marg::batch_evidence<T>>(&e->v);
  MARG_EXPECTS(v != nullptr, std::string(f) + ": evidence holds another element type than x");
  return *v;
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------- pmf handles

void marg_pmf_destroy(marg_pmf* x) {
  delete x;
}

marg_status marg_pmf_copy(const marg_pmf* x, marg_pmf** out) {
  return make("marg_pmf_copy", out, [&] {
    need(x, "marg_pmf_copy", "x");
    return std::make_unique<marg_pmf>(*x);
  });
}

marg_status marg_pmf_dtype(const marg_pmf* x, marg_dtype* dtype) {
  return guarded([&] {
    need(x, "marg_pmf_dtype", "x");
    need(dtype, "marg_pmf_dtype", "dtype");
    *dtype = x->v.index() == 0 ? MARG_DTYPE_F32 : MARG_DTYPE_F64;
  });
}

marg_status marg_pmf_support(const marg_pmf* x, int64_t* lower, int64_t* upper) {
  return guarded([&] {
    const auto [lo, hi] = visit1(x, "marg_pmf_support", "x", [](const auto& p) {
      return std::pair<std::int64_t, std::int64_t>(p.lower(), p.upper());
    });
    if (lower) *lower = lo;
    if (upper) *upper = hi;
  });
}

marg_status marg_pmf_size(const marg_pmf* x, int64_t* size) {
  return guarded([&] {
    const std::int64_t n = visit1(x, "marg_pmf_size", "x", [](const auto& p) { return p.size(); });
    need(size, "marg_pmf_size", "size");
    *size = n;
  });
}

#define MARG_C_PMF_TYPED(sfx, T)                                                                   \
  marg_status marg_pmf_probs_##sfx(const marg_pmf* x, T* out, int64_t count) {                     \
    return probs<T>("marg_pmf_probs_" #sfx, x, out, count, false);                                 \
  }                                                                                                \
  marg_status marg_pmf_log_probs_##sfx(const marg_pmf* x, T* out, int64_t count) {                 \
    return probs<T>("marg_pmf_log_probs_" #sfx, x, out, count, true);                              \
  }                                                                                                \
  marg_status marg_pmf_prob_##sfx(const marg_pmf* x, int64_t k, T* out) {                          \
    return scalar<T>("marg_pmf_prob_" #sfx, x, out, [&](const auto& p) { return p.prob(k); });     \
  }                                                                                                \
  marg_status marg_pmf_log_prob_##sfx(const marg_pmf* x, int64_t k, T* out) {                      \
    return scalar<T>("marg_pmf_log_prob_" #sfx, x, out,                                            \
                     [&](const auto& p) { return p.log_prob(k); });                                \
  }                                                                                                \
  marg_status marg_pmf_cdf_##sfx(const marg_pmf* x, int64_t k, T* out) {                           \
    return scalar<T>("marg_pmf_cdf_" #sfx, x, out, [&](const auto& p) { return p.cdf(k); });       \
  }                                                                                                \
  marg_status marg_pmf_mean_##sfx(const marg_pmf* x, T* out) {                                     \
    return scalar<T>("marg_pmf_mean_" #sfx, x, out, [](const auto& p) { return p.mean(); });       \
  }                                                                                                \
  marg_status marg_pmf_variance_##sfx(const marg_pmf* x, T* out) {                                 \
    return scalar<T>("marg_pmf_variance_" #sfx, x, out,                                            \
                     [](const auto& p) { return p.variance(); });                                  \
  }                                                                                                \
  marg_status marg_pmf_truncated_mass_##sfx(const marg_pmf* x, T* out) {                           \
    return scalar<T>("marg_pmf_truncated_mass_" #sfx, x, out,                                      \
                     [](const auto& p) { return p.truncated_mass(); });                            \
  }                                                                                                \
  marg_status marg_pmf_categorical_##sfx(const T* weights, int64_t count, int64_t lower,           \
                                         marg_pmf** out) {                                         \
    const char* f = "marg_pmf_categorical_" #sfx;                                                  \
    return make(f, out, [&] {                                                                      \
      return wrap(marg::categorical<T>(input(weights, count, f, "weights"), lower));               \
    });                                                                                            \
  }                                                                                                \
  marg_status marg_pmf_categorical_log_##sfx(const T* log_weights, int64_t count, int64_t lower,   \
                                             marg_pmf** out) {                                     \
    const char* f = "marg_pmf_categorical_log_" #sfx;                                              \
    return make(f, out, [&] {                                                                      \
      return wrap(marg::categorical_log<T>(input(log_weights, count, f, "log_weights"), lower));   \
    });                                                                                            \
  }                                                                                                \
  marg_status marg_pmf_bernoulli_##sfx(T p, marg_pmf** out) {                                      \
    return make("marg_pmf_bernoulli_" #sfx, out, [&] { return wrap(marg::bernoulli<T>(p)); });     \
  }                                                                                                \
  marg_status marg_pmf_binomial_##sfx(int64_t n, T p, marg_pmf** out) {                            \
    return make("marg_pmf_binomial_" #sfx, out, [&] { return wrap(marg::binomial<T>(n, p)); });    \
  }                                                                                                \
  marg_status marg_pmf_uniform_int_##sfx(int64_t a, int64_t b, marg_pmf** out) {                   \
    return make("marg_pmf_uniform_int_" #sfx, out,                                                 \
                [&] { return wrap(marg::uniform_int<T>(a, b)); });                                 \
  }                                                                                                \
  marg_status marg_pmf_beta_binomial_##sfx(int64_t n, T a, T b, marg_pmf** out) {                  \
    return make("marg_pmf_beta_binomial_" #sfx, out,                                               \
                [&] { return wrap(marg::beta_binomial<T>(n, a, b)); });                            \
  }                                                                                                \
  marg_status marg_pmf_poisson_##sfx(T lambda, T tail, marg_pmf** out) {                           \
    return make("marg_pmf_poisson_" #sfx, out,                                                     \
                [&] { return wrap(marg::poisson<T>(lambda, tail_or_default(tail))); });            \
  }                                                                                                \
  marg_status marg_pmf_geometric_##sfx(T p, T tail, marg_pmf** out) {                              \
    return make("marg_pmf_geometric_" #sfx, out,                                                   \
                [&] { return wrap(marg::geometric<T>(p, tail_or_default(tail))); });               \
  }                                                                                                \
  marg_status marg_pmf_negative_binomial_##sfx(T r, T p, T tail, marg_pmf** out) {                 \
    return make("marg_pmf_negative_binomial_" #sfx, out,                                           \
                [&] { return wrap(marg::negative_binomial<T>(r, p, tail_or_default(tail))); });    \
  }                                                                                                \
  marg_status marg_pmf_delta_##sfx(int64_t k, marg_pmf** out) {                                    \
    return make("marg_pmf_delta_" #sfx, out, [&] { return wrap(marg::delta<T>(k)); });             \
  }                                                                                                \
  marg_status marg_pmf_condition_on_sum_soft_##sfx(                                                \
      const marg_pmf* x, const marg_pmf* y, const T* likelihood, int64_t count,                    \
      double* log_likelihood, marg_pmf** first, marg_pmf** second) {                               \
    return soft<T>("marg_pmf_condition_on_sum_soft_" #sfx, x, y, likelihood, count, false,         \
                   log_likelihood, first, second);                                                 \
  }                                                                                                \
  marg_status marg_pmf_condition_on_sum_log_##sfx(                                                 \
      const marg_pmf* x, const marg_pmf* y, const T* log_likelihood_values, int64_t count,         \
      double* log_likelihood, marg_pmf** first, marg_pmf** second) {                               \
    return soft<T>("marg_pmf_condition_on_sum_log_" #sfx, x, y, log_likelihood_values, count,      \
                   true, log_likelihood, first, second);                                           \
  }                                                                                                \
  marg_status marg_pmf_sum_given_evidence_##sfx(                                                   \
      const marg_pmf* x, const marg_pmf* y, const T* likelihood, int64_t count, marg_pmf** out) {  \
    return given_evidence<T>("marg_pmf_sum_given_evidence_" #sfx, x, y, likelihood, count, out);   \
  }                                                                                                \
  marg_status marg_pmf_sample_given_evidence_##sfx(                                                \
      const marg_pmf* x, const marg_pmf* y, const T* likelihood, int64_t count, double u_sum,      \
      double u_x, int64_t* x_value, int64_t* y_value) {                                            \
    return sample_evidence<T>("marg_pmf_sample_given_evidence_" #sfx, x, y, likelihood, count,     \
                              u_sum, u_x, x_value, y_value);                                       \
  }                                                                                                \
  marg_status marg_pmf_sum_grad_##sfx(const marg_pmf* x, const marg_pmf* y, const T* g,            \
                                      int64_t count, T* gx, int64_t count_x, T* gy,                \
                                      int64_t count_y) {                                           \
    const char* f = "marg_pmf_sum_grad_" #sfx;                                                     \
    return guarded([&] {                                                                           \
      grads_out(f,                                                                                 \
                marg::sum_grad(typed<T>(x, f, "x"), typed<T>(y, f, "y"), input(g, count, f, "g")), \
                gx, count_x, gy, count_y);                                                         \
    });                                                                                            \
  }                                                                                                \
  marg_status marg_pmf_log_prob_sum_grad_##sfx(const marg_pmf* x, const marg_pmf* y, int64_t k,    \
                                               T* gx, int64_t count_x, T* gy, int64_t count_y) {   \
    const char* f = "marg_pmf_log_prob_sum_grad_" #sfx;                                            \
    return guarded([&] {                                                                           \
      grads_out(f, marg::log_prob_sum_grad(typed<T>(x, f, "x"), typed<T>(y, f, "y"), k), gx,       \
                count_x, gy, count_y);                                                             \
    });                                                                                            \
  }                                                                                                \
  marg_status marg_pmf_batch_create_##sfx(int batch, int length, const int64_t* lowers,            \
                                          const T* values, int normalize, marg_pmf_batch** out) {  \
    return batch_create<T>("marg_pmf_batch_create_" #sfx, batch, length, lowers, values,           \
                           normalize, out);                                                        \
  }                                                                                                \
  marg_status marg_pmf_batch_binomial_##sfx(int batch, const int64_t* ns, const double* ps,        \
                                            double tail, marg_pmf_batch** out) {                   \
    return batch_binomial<T>("marg_pmf_batch_binomial_" #sfx, batch, ns, ps, tail, out);           \
  }                                                                                                \
  marg_status marg_pmf_batch_probs_##sfx(const marg_pmf_batch* x, T* out, int64_t count) {         \
    return batch_values<T>("marg_pmf_batch_probs_" #sfx, x, out, count, false);                    \
  }                                                                                                \
  marg_status marg_pmf_batch_log_probs_##sfx(const marg_pmf_batch* x, T* out, int64_t count) {     \
    return batch_values<T>("marg_pmf_batch_log_probs_" #sfx, x, out, count, true);                 \
  }                                                                                                \
  marg_status marg_pmf_batch_sum_grad_##sfx(const marg_pmf_batch* x, const marg_pmf_batch* y,      \
                                            const T* g, int64_t count, T* gx, int64_t count_x,     \
                                            T* gy, int64_t count_y) {                              \
    return batch_grad<T>("marg_pmf_batch_sum_grad_" #sfx, x, y, g, count, gx, count_x, gy,         \
                         count_y);                                                                 \
  }                                                                                                \
  marg_status marg_pmf_batch_sample_given_evidence_soft_##sfx(                                     \
      const marg_pmf_batch* x, const marg_pmf_batch* y, const T* likelihood, int64_t count,        \
      const double* u, int64_t count_u, double* log_likelihood, int64_t* x_values,                 \
      int64_t* y_values) {                                                                         \
    return batch_sample_soft<T>("marg_pmf_batch_sample_given_evidence_soft_" #sfx, x, y,           \
                                likelihood, count, u, count_u, log_likelihood, x_values,           \
                                y_values);                                                         \
  }                                                                                                \
  marg_status marg_pmf_batch_condition_on_sum_soft_##sfx(                                          \
      const marg_pmf_batch* x, const marg_pmf_batch* y, const T* likelihood, int64_t count,        \
      double* log_likelihood, marg_pmf_batch** first, marg_pmf_batch** second) {                   \
    return batch_soft<T>("marg_pmf_batch_condition_on_sum_soft_" #sfx, x, y, likelihood, count,    \
                         log_likelihood, first, second);                                           \
  }

MARG_C_PMF_TYPED(f32, float)
MARG_C_PMF_TYPED(f64, double)

marg_status marg_pmf_sample(const marg_pmf* x, double u, int64_t* out) {
  return guarded([&] {
    const char* f = "marg_pmf_sample";
    const std::int64_t v =
        visit1(x, f, "x", [&](const auto& p) { return p.lower() + p.sample_index(u); });
    check_uniform(f, "u", u);
    need(out, f, "out");
    *out = v;
  });
}

// -------------------------------------------------------------------- algebra

marg_status marg_pmf_add(const marg_pmf* x, const marg_pmf* y, marg_pmf** out) {
  return make("marg_pmf_add", out, [&] {
    return visit2(x, y, "marg_pmf_add", [](const auto& a, const auto& b) { return wrap(a + b); });
  });
}

marg_status marg_pmf_sub(const marg_pmf* x, const marg_pmf* y, marg_pmf** out) {
  return make("marg_pmf_sub", out, [&] {
    return visit2(x, y, "marg_pmf_sub", [](const auto& a, const auto& b) { return wrap(a - b); });
  });
}

marg_status marg_pmf_neg(const marg_pmf* x, marg_pmf** out) {
  return make("marg_pmf_neg", out, [&] {
    return visit1(x, "marg_pmf_neg", "x", [](const auto& a) { return wrap(-a); });
  });
}

marg_status marg_pmf_shift(const marg_pmf* x, int64_t k, marg_pmf** out) {
  return make("marg_pmf_shift", out, [&] {
    return visit1(x, "marg_pmf_shift", "x", [&](const auto& a) { return wrap(a.shifted(k)); });
  });
}

marg_status marg_pmf_sum(const marg_pmf* const* xs, int64_t count, marg_pmf** out) {
  const char* f = "marg_pmf_sum";
  return make(f, out, [&] {
    need(xs, f, "xs");
    MARG_EXPECTS(count >= 1, marg::detail::bad_argument(f, "count", count, ">= 1"));
    for (std::int64_t i = 0; i < count; ++i)
      MARG_EXPECTS(xs[i] != nullptr && xs[i]->v.index() == xs[0]->v.index(),
                   std::string(f) + ": xs[" + std::to_string(i) + "] is " +
                       (xs[i] ? "of another element type than xs[0]" : "null"));
    return visit1(xs[0], f, "xs[0]", [&](const auto& first) {
      using P = std::remove_cvref_t<decltype(first)>;
      std::vector<P> terms;
      terms.reserve(static_cast<std::size_t>(count));
      for (std::int64_t i = 0; i < count; ++i) terms.push_back(std::get<P>(xs[i]->v));
      return wrap(marg::sum(terms));
    });
  });
}

// ---------------------------------------------------------------- observation

marg_status marg_pmf_log_prob_sum(const marg_pmf* x, const marg_pmf* y, int64_t k, double* out) {
  return guarded([&] {
    const double v = visit2(x, y, "marg_pmf_log_prob_sum", [&](const auto& a, const auto& b) {
      return static_cast<double>(marg::log_prob_sum(a, b, k));
    });
    need(out, "marg_pmf_log_prob_sum", "out");
    *out = v;
  });
}

marg_status marg_pmf_condition_on_sum(const marg_pmf* x, const marg_pmf* y, int64_t k,
                                      double* log_likelihood, marg_pmf** first, marg_pmf** second) {
  return guarded([&] {
    visit2(x, y, "marg_pmf_condition_on_sum", [&](const auto& a, const auto& b) {
      post_out(marg::condition_on_sum(a, b, k), log_likelihood, first, second);
    });
  });
}

marg_status marg_pmf_sample_given_sum(const marg_pmf* x, const marg_pmf* y, int64_t k, double u,
                                      int64_t* x_value, int64_t* y_value) {
  const char* f = "marg_pmf_sample_given_sum";
  return guarded([&] {
    check_uniform(f, "u", u);
    const auto d = visit2(
        x, y, f, [&](const auto& a, const auto& b) { return draw_given_sum(f, a, b, k, u); });
    need(x_value, f, "x_value");
    need(y_value, f, "y_value");
    *x_value = d.first;
    *y_value = d.second;
  });
}

// ---------------------------------------------------------------- batches

void marg_pmf_batch_destroy(marg_pmf_batch* x) {
  delete x;
}

void marg_batch_evidence_destroy(marg_batch_evidence* e) {
  delete e;
}

marg_status marg_pmf_batch_copy(const marg_pmf_batch* x, marg_pmf_batch** out) {
  return make_batch("marg_pmf_batch_copy", out, [&] {
    need(x, "marg_pmf_batch_copy", "x");
    return std::make_unique<marg_pmf_batch>(*x);
  });
}

marg_status marg_pmf_batch_from_rows(const marg_pmf* const* rows, int count, marg_pmf_batch** out) {
  const char* f = "marg_pmf_batch_from_rows";
  return make_batch(f, out, [&] {
    need(rows, f, "rows");
    MARG_EXPECTS(count >= 1, marg::detail::bad_argument(f, "count", count, ">= 1"));
    for (int i = 0; i < count; ++i)
      MARG_EXPECTS(rows[i] != nullptr && rows[i]->v.index() == rows[0]->v.index(),
                   std::string(f) + ": rows[" + std::to_string(i) + "] is " +
                       (rows[i] ? "of another element type than rows[0]" : "null"));
    return visit1(rows[0], f, "rows[0]", [&](const auto& first) {
      using P = std::remove_cvref_t<decltype(first)>;
      std::vector<P> terms;
      for (int i = 0; i < count; ++i) terms.push_back(std::get<P>(rows[i]->v));
      return wrap(marg::pmf_batch<typename decltype(first.probs())::value_type>(terms));
    });
  });
}

marg_status marg_pmf_batch_shape(const marg_pmf_batch* x, marg_dtype* dtype, int* batch,
                                 int* length) {
  return guarded([&] {
    need(x, "marg_pmf_batch_shape", "x");
    const auto [b, l] =
        std::visit([](const auto& v) { return std::pair<int, int>(v.batch(), v.length()); }, x->v);
    if (dtype) *dtype = x->v.index() == 0 ? MARG_DTYPE_F32 : MARG_DTYPE_F64;
    if (batch) *batch = b;
    if (length) *length = l;
  });
}

marg_status marg_pmf_batch_lowers(const marg_pmf_batch* x, int64_t* out, int64_t count) {
  const char* f = "marg_pmf_batch_lowers";
  return guarded([&] {
    const std::vector<std::int64_t> lowers =
        visit1(x, f, "x", [](const auto& v) { return v.lowers(); });
    output<std::int64_t>(lowers, out, count, f, "out");
  });
}

marg_status marg_pmf_batch_row(const marg_pmf_batch* x, int b, marg_pmf** out) {
  const char* f = "marg_pmf_batch_row";
  return make(f, out, [&] {
    return visit1(x, f, "x", [&](const auto& v) {
      MARG_EXPECTS(b >= 0 && b < v.batch(), marg::detail::bad_argument(f, "b", b, "in 0..batch-1"));
      return wrap(v.row(b));
    });
  });
}

marg_status marg_pmf_batch_add(const marg_pmf_batch* x, const marg_pmf_batch* y,
                               marg_pmf_batch** out) {
  return make_batch("marg_pmf_batch_add", out, [&] {
    return visit2(x, y, "marg_pmf_batch_add",
                  [](const auto& a, const auto& b) { return wrap(a + b); });
  });
}

marg_status marg_pmf_batch_add_pmf(const marg_pmf_batch* x, const marg_pmf* y,
                                   marg_pmf_batch** out) {
  return make_batch("marg_pmf_batch_add_pmf", out, [&] {
    return visit2(x, y, "marg_pmf_batch_add_pmf",
                  [](const auto& a, const auto& b) { return wrap(a + b); });
  });
}

marg_status marg_pmf_batch_sub(const marg_pmf_batch* x, const marg_pmf_batch* y,
                               marg_pmf_batch** out) {
  return make_batch("marg_pmf_batch_sub", out, [&] {
    return visit2(x, y, "marg_pmf_batch_sub",
                  [](const auto& a, const auto& b) { return wrap(a - b); });
  });
}

marg_status marg_pmf_batch_neg(const marg_pmf_batch* x, marg_pmf_batch** out) {
  return make_batch("marg_pmf_batch_neg", out, [&] {
    return visit1(x, "marg_pmf_batch_neg", "x", [](const auto& a) { return wrap(-a); });
  });
}

marg_status marg_pmf_batch_log_prob_sum(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                        const int64_t* k, int count, double* out) {
  const char* f = "marg_pmf_batch_log_prob_sum";
  return guarded([&] {
    const std::vector<std::int64_t> ks = input(k, count, f, "k");
    const std::vector<double> v = visit2(x, y, f, [&](const auto& a, const auto& b) {
      const auto r = marg::log_prob_sum(a, b, ks);
      return std::vector<double>(r.begin(), r.end());
    });
    output(v, out, count, f, "out");
  });
}

marg_status marg_pmf_batch_condition_on_sum(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                            const int64_t* k, int count, double* log_likelihood,
                                            marg_pmf_batch** first, marg_pmf_batch** second) {
  const char* f = "marg_pmf_batch_condition_on_sum";
  return guarded([&] {
    const std::vector<std::int64_t> ks = input(k, count, f, "k");
    visit2(x, y, f, [&](const auto& a, const auto& b) {
      batch_post_out(marg::condition_on_sum(a, b, ks), log_likelihood, first, second);
    });
  });
}

marg_status marg_batch_evidence_binomial_count(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                               const int64_t* offsets, int n_offsets,
                                               const int64_t* observed, int n_observed,
                                               const double* rhos, int n_rhos, int64_t n_max,
                                               marg_batch_evidence** out) {
  const char* f = "marg_batch_evidence_binomial_count";
  return guarded([&] {
    need(out, f, "out");
    auto e = visit2(x, y, f, [&](const auto& a, const auto& b) {
      auto h = std::make_unique<marg_batch_evidence>();
      h->v =
          marg::binomial_count_evidence(a, b, per_row(f, "offsets", offsets, n_offsets, a.batch()),
                                        per_row(f, "observed", observed, n_observed, a.batch()),
                                        per_row(f, "rhos", rhos, n_rhos, a.batch()), n_max);
      return h;
    });
    *out = e.release();
  });
}

marg_status marg_pmf_batch_condition_on_evidence(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                                 const marg_batch_evidence* evidence,
                                                 double* log_likelihood, marg_pmf_batch** first,
                                                 marg_pmf_batch** second) {
  const char* f = "marg_pmf_batch_condition_on_evidence";
  return guarded([&] {
    need(evidence, f, "evidence");
    visit2(x, y, f, [&](const auto& a, const auto& b) {
      batch_post_out(marg::condition_on_sum(a, b, evidence_of(a, evidence, f)), log_likelihood,
                     first, second);
    });
  });
}

marg_status marg_pmf_batch_sample_given_evidence(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                                 const marg_batch_evidence* evidence,
                                                 const double* u, int64_t count,
                                                 double* log_likelihood, int64_t* x_values,
                                                 int64_t* y_values) {
  const char* f = "marg_pmf_batch_sample_given_evidence";
  return guarded([&] {
    need(evidence, f, "evidence");
    const std::vector<double> us = input(u, count, f, "u");
    visit2(x, y, f, [&](const auto& a, const auto& b) {
      using T = typename std::remove_cvref_t<decltype(a.truncated_masses())>::value_type;
      const auto* e = std::get_if<marg::batch_evidence<T>>(&evidence->v);
      MARG_EXPECTS(e != nullptr, std::string(f) + ": evidence holds another element type than x");
      MARG_EXPECTS(count == 2 * static_cast<std::int64_t>(a.batch()),
                   marg::detail::bad_argument(f, "count", count, "2 * batch"));
      for (std::int64_t i = 0; i < count; ++i) check_uniform(f, "u[i]", us[i]);
      draws_out(marg::detail::sample_given_evidence_with(a, b, *e, us), log_likelihood, x_values,
                y_values);
    });
  });
}

marg_status marg_pmf_batch_sample_given_sum(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                            const int64_t* k, const double* u, int count,
                                            double* log_likelihood, int64_t* x_values,
                                            int64_t* y_values) {
  const char* f = "marg_pmf_batch_sample_given_sum";
  return guarded([&] {
    const std::vector<std::int64_t> ks = input(k, count, f, "k");
    const std::vector<double> us = input(u, 2 * static_cast<std::int64_t>(count), f, "u");
    for (double v : us) check_uniform(f, "u[i]", v);
    visit2(x, y, f, [&](const auto& a, const auto& b) {
      draws_out(marg::detail::sample_given_sum_with(a, b, ks, us), log_likelihood, x_values,
                y_values);
    });
  });
}

}  // extern "C"
