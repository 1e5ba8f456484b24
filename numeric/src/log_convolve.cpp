// Log-space convolution and its vector-Jacobian products (log_convolve.hpp).
//
// Each operand is cut into runs: consecutive elements whose finite values lie
// within `window<T>` of the run's maximum `top` (-inf elements join any run).
// Scaled by exp(x - top), a run's values lie in [exp(-window), 1] or are 0,
// and a product of two such values stays above exp(-2 window), far from
// underflow in T (float: e^-40, double: e^-600), so the linear product of two
// scaled runs has the linear kernels' relative accuracy in every element.
// Pairs of runs are summed per output with a running log-sum-exp in double.
// One run per operand (the common case) is a single linear product on the
// current backend, batched across problems; on the CUDA backend with device
// or managed operands the scaling passes run on the device too
// (src/cuda/log_space.cu).
#include <marg/numeric/array.hpp>
#include <marg/numeric/backend.hpp>
#include <marg/numeric/cancel.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/error.hpp>
#include <marg/numeric/log_convolve.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "detail/banded.hpp"
#include "memory/device_memory.hpp"
#ifdef MARG_WITH_CUDA
#include "cuda/log_space.hpp"
#endif

namespace marg {
namespace {

using detail::bad_argument;
using detail::banded_args;
using detail::banded_op;

// width of a run in natural-log units: twice it must stay well inside T's
// normal range (float: 2 * 20 = 40 < 87; double: 2 * 300 = 600 < 708)
template <class T>
constexpr double window = sizeof(T) == 4 ? 20.0 : 300.0;

constexpr double neg_inf = -std::numeric_limits<double>::infinity();

// copies `count` operands of `len` elements (element stride inc, operand
// stride stride) from any memory into dst, contiguous
template <class T>
void gather_batch(std::vector<T>& dst, const T* src, std::int64_t len, int inc, std::int64_t stride,
                  std::int64_t count) {
  dst.resize(static_cast<std::size_t>(len * count));
  if (detail::device::gpu_usable() && inc == 1) {
    detail::device::copy_strided(dst.data(), sizeof(T) * len, src, sizeof(T) * stride,
                                 sizeof(T) * len, static_cast<std::size_t>(count));
  } else if (detail::device::gpu_usable()) {
    for (std::int64_t i = 0; i < count; ++i)
      detail::device::copy_strided(dst.data() + i * len, sizeof(T), src + i * stride,
                                   sizeof(T) * inc, sizeof(T), static_cast<std::size_t>(len));
  } else {
    for (std::int64_t i = 0; i < count; ++i)
      for (std::int64_t j = 0; j < len; ++j) dst[i * len + j] = src[i * stride + j * inc];
  }
}

// the inverse of gather_batch for the outputs
template <class T>
void scatter_batch(T* dst, int inc, std::int64_t stride, const std::vector<T>& src,
                   std::int64_t len, std::int64_t count) {
  if (detail::device::gpu_usable() && inc == 1) {
    detail::device::copy_strided(dst, sizeof(T) * stride, src.data(), sizeof(T) * len,
                                 sizeof(T) * len, static_cast<std::size_t>(count));
  } else if (detail::device::gpu_usable()) {
    for (std::int64_t i = 0; i < count; ++i)
      detail::device::copy_strided(dst + i * stride, sizeof(T) * inc, src.data() + i * len,
                                   sizeof(T), sizeof(T), static_cast<std::size_t>(len));
  } else {
    for (std::int64_t i = 0; i < count; ++i)
      for (std::int64_t j = 0; j < len; ++j) dst[i * stride + j * inc] = src[i * len + j];
  }
}

// what an operand's finite values span
struct extent {
  enum kind_t { one, several, none, bad } kind;
  double top;
};

template <class T>
extent classify(const T* x, std::int64_t len, double width) {
  double hi = neg_inf, lo = std::numeric_limits<double>::infinity();
  for (std::int64_t j = 0; j < len; ++j) {
    const double v = x[j];
    if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) return {extent::bad, 0};
    if (v == neg_inf) continue;
    hi = std::max(hi, v);
    lo = std::min(lo, v);
  }
  if (hi == neg_inf) return {extent::none, 0};
  return {hi - lo <= width ? extent::one : extent::several, hi};
}

// exp(x - top) into out; the difference is formed in double (top may be
// far from 0), the exponential taken in T (expf for float: T's accuracy is
// all the linear product keeps, and it costs half of exp)
template <class T>
void scale_into(const T* x, std::int64_t len, double top, T* out) {
  for (std::int64_t j = 0; j < len; ++j)
    out[j] = std::exp(static_cast<T>(static_cast<double>(x[j]) - top));
}

// scale + log(v) in T, -inf for 0 (logf for float, as in scale_into)
template <class T>
T log_scaled(double scale, T v) {
  return v > 0 ? static_cast<T>(scale + static_cast<double>(std::log(v)))
               : -std::numeric_limits<T>::infinity();
}

struct run {
  std::int64_t begin, end;
  double top;
};

// An operand cut into runs, with its scaled values exp(x - top of its run).
template <class T>
struct cut {
  std::vector<run> runs;
  std::vector<T> scaled;
  bool bad = false;  // a NaN or +inf element: the problem's outputs are NaN
};

template <class T, class U>
cut<T> cut_runs(const std::vector<U>& x) {
  cut<T> c;
  const auto len = static_cast<std::int64_t>(x.size());
  std::int64_t begin = 0;
  double hi = neg_inf, lo = 0;
  for (std::int64_t j = 0; j < len; ++j) {
    const double v = x[j];
    if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) {
      c.bad = true;
      return c;
    }
    if (v == neg_inf) continue;
    if (hi == neg_inf) {
      hi = lo = v;
    } else if (std::max(hi, v) - std::min(lo, v) > window<T>) {
      c.runs.push_back({begin, j, hi});
      begin = j;
      hi = lo = v;
    } else {
      hi = std::max(hi, v);
      lo = std::min(lo, v);
    }
  }
  if (hi == neg_inf) return c;  // every element -inf: no runs
  c.runs.push_back({begin, len, hi});
  c.scaled.resize(x.size());
  for (const run& r : c.runs)
    for (std::int64_t j = r.begin; j < r.end; ++j)
      c.scaled[j] = static_cast<T>(std::exp(static_cast<double>(x[j]) - r.top));
  return c;
}

// Running log-sum-exp per output: the sum is acc * exp(scale), acc signed
// (the gradients' weights are), its magnitude kept near the largest term.
struct lse_accumulator {
  std::vector<double> scale, acc;
  explicit lse_accumulator(std::size_t n) : scale(n, neg_inf), acc(n, 0.0) {}
  void add(std::size_t i, double s, double v) {
    if (v == 0) return;
    if (scale[i] == neg_inf) {
      scale[i] = s;
      acc[i] = v;
    } else if (s <= scale[i]) {
      acc[i] += v * std::exp(s - scale[i]);
    } else {
      acc[i] = acc[i] * std::exp(scale[i] - s) + v;
      scale[i] = s;
    }
  }
  double value(std::size_t i) const { return acc[i] > 0 ? scale[i] + std::log(acc[i]) : neg_inf; }
};

// one linear product on host vectors, on host threads
template <class T>
void host_product(banded_op op, std::int64_t m, std::int64_t n, const T* a, const T* b, T* out) {
  const cancel_scope* const scope = cancel_scope::current();
  if (scope != nullptr) scope->check_work(m * n, "marg::log_convolve");
  detail::cpu::run<T>(
      {op, static_cast<int>(m), static_cast<int>(n), a, 1, 0, b, 1, 0, out, 1, 0, 1});
  if (scope != nullptr) scope->throw_if_stopped();
}

// r of one problem whose operands need more than one run each, on the host.
// The pairs of runs go largest bound first (a pair adds at most min(ls, lt)
// terms each under exp(top_s + top_t) to an output); a pair whose bound lies
// more than `cutoff` below every output it reaches is skipped. Every output
// then misses at most (pairs) e^-cutoff of its sum: under a quarter of T's
// rounding with cutoff = log(pairs) + 40 in double (e^-40 < 2^-55) and
// log(pairs) + 20 in float (e^-20 < 2^-26). Far tails make most pairs
// skippable: of thousands of runs per operand only those near each output's
// largest terms count.
template <class T>
void forward_runs(const cut<T>& a, const cut<T>& b, std::vector<T>& r) {
  lse_accumulator sum(r.size());
  std::vector<double> now(r.size(), neg_inf);  // log of each output's sum so far
  struct pair {
    double bound;
    std::size_t s, t;
  };
  std::vector<pair> pairs;
  pairs.reserve(a.runs.size() * b.runs.size());
  for (std::size_t i = 0; i < a.runs.size(); ++i)
    for (std::size_t j = 0; j < b.runs.size(); ++j) {
      const run &s = a.runs[i], &t = b.runs[j];
      const auto shorter = static_cast<double>(std::min(s.end - s.begin, t.end - t.begin));
      pairs.push_back({s.top + t.top + std::log(shorter), i, j});
    }
  std::sort(pairs.begin(), pairs.end(),
            [](const pair& u, const pair& v) { return u.bound > v.bound; });
  const double cutoff =
      std::log(static_cast<double>(pairs.size())) + (sizeof(T) == 4 ? 20.0 : 40.0);
  std::vector<T> part;
  for (const pair& p : pairs) {
    const run &s = a.runs[p.s], &t = b.runs[p.t];
    const std::int64_t ls = s.end - s.begin, lt = t.end - t.begin;
    const std::int64_t first = s.begin + t.begin, count = ls + lt - 1;
    const double* reach = now.data() + first;
    if (std::all_of(reach, reach + count, [&](double v) { return v - cutoff > p.bound; })) continue;
    part.resize(static_cast<std::size_t>(count));
    host_product<T>(banded_op::convolve, ls, lt, a.scaled.data() + s.begin,
                    b.scaled.data() + t.begin, part.data());
    const double scale = s.top + t.top;
    for (std::int64_t k = 0; k < count; ++k) {
      sum.add(static_cast<std::size_t>(first + k), scale, part[k]);
      now[first + k] = sum.value(static_cast<std::size_t>(first + k));
    }
  }
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<T>(sum.value(i));
}

// Checks sizes, strides, batch, pointers and that outputs do not alias inputs.
void check_sizes(const char* f, int m, int n, int batch) {
  MARG_EXPECTS(m >= 1, bad_argument(f, "m", m, ">= 1"));
  MARG_EXPECTS(n >= 1, bad_argument(f, "n", n, ">= 1"));
  MARG_EXPECTS(std::int64_t{m} + n - 1 <= INT_MAX,
               std::string(f) + ": m + n - 1 = " + std::to_string(std::int64_t{m} + n - 1) +
                   " overflows int (m = " + std::to_string(m) + ", n = " + std::to_string(n) + ")");
  MARG_EXPECTS(batch >= 0, bad_argument(f, "batch", batch, ">= 0"));
}

struct operand {
  const void* ptr;
  std::size_t elem;
  std::int64_t len;
  int inc;
  std::int64_t stride;
  const char *name, *inc_name, *stride_name;
};

void check_operand(const char* f, const operand& x, int batch) {
  MARG_EXPECTS(x.inc >= 1, bad_argument(f, x.inc_name, x.inc, ">= 1"));
  MARG_EXPECTS(x.stride >= 0, bad_argument(f, x.stride_name, x.stride, ">= 0"));
  if (batch == 0) return;
  MARG_EXPECTS(x.ptr != nullptr, std::string(f) + ": " + x.name + " is null");
  std::int64_t across, within, last;
  const bool overflow = __builtin_mul_overflow(std::int64_t{batch} - 1, x.stride, &across) ||
                        __builtin_mul_overflow(x.len - 1, std::int64_t{x.inc}, &within) ||
                        __builtin_add_overflow(across, within, &last) ||
                        last >= PTRDIFF_MAX / static_cast<std::int64_t>(x.elem);
  MARG_EXPECTS(!overflow,
               bad_argument(f, x.stride_name, x.stride,
                            "such that (batch - 1) * stride + (length - 1) * inc fits the "
                            "address space"));
}

std::uintptr_t lo_of(const operand& x) {
  return reinterpret_cast<std::uintptr_t>(x.ptr);
}
std::uintptr_t hi_of(const operand& x, int batch) {
  const std::int64_t last = (batch - 1) * x.stride + (x.len - 1) * x.inc;
  return lo_of(x) + static_cast<std::uintptr_t>(last + 1) * x.elem;
}

void check_layout(const char* f, const operand& out, const std::vector<operand>& in, int batch) {
  check_operand(f, out, batch);
  for (const operand& x : in) check_operand(f, x, batch);
  if (batch == 0) return;
  if (batch > 1) {
    const std::int64_t extent = (out.len - 1) * out.inc + 1;
    MARG_EXPECTS(out.stride >= extent,
                 bad_argument(f, out.stride_name, out.stride,
                              (">= (length - 1) * " + std::string(out.inc_name) + " + 1 = " +
                               std::to_string(extent) + " so that outputs do not overlap")
                                  .c_str()));
  }
  for (const operand& x : in)
    MARG_EXPECTS(hi_of(out, batch) <= lo_of(x) || hi_of(x, batch) <= lo_of(out),
                 std::string(f) + ": output " + out.name + " overlaps input " + x.name +
                     " (outputs must not alias inputs)");
}

template <class T>
void forward_host(int m, int n, const T* a, int inca, std::int64_t stridea, const T* b, int incb,
                  std::int64_t strideb, T* r, int incr, std::int64_t strider, int batch,
                  stream_view stream);

template <class T>
void forward(int m, int n, const T* a, int inca, std::int64_t stridea, const T* b, int incb,
             std::int64_t strideb, T* r, int incr, std::int64_t strider, int batch,
             stream_view stream, const char* f) {
  check_sizes(f, m, n, batch);
  const std::int64_t lr = std::int64_t{m} + n - 1;
  check_layout(f, {r, sizeof(T), lr, incr, strider, "r", "incr", "strider"},
               {{a, sizeof(T), m, inca, stridea, "a", "inca", "stridea"},
                {b, sizeof(T), n, incb, strideb, "b", "incb", "strideb"}},
               batch);
  if (batch == 0) return;
#ifdef MARG_WITH_CUDA
  if (current_backend() == backend::cuda &&
      detail::cuda::log_convolve_on_device<T>(
          {m, n, a, inca, stridea, b, incb, strideb, r, incr, strider, batch}, stream))
    return;
#endif
  forward_host<T>(m, n, a, inca, stridea, b, incb, strideb, r, incr, strider, batch, stream);
}

// the host path of a checked forward batch
template <class T>
void forward_host(int m, int n, const T* a, int inca, std::int64_t stridea, const T* b, int incb,
                  std::int64_t strideb, T* r, int incr, std::int64_t strider, int batch,
                  stream_view stream) {
  const std::int64_t lr = std::int64_t{m} + n - 1;
  detail::wait_for_stream(stream);  // the inputs may be written by work on the stream
  // host copies of the distinct operands (a batch stride of 0 repeats one)
  const std::int64_t na = stridea == 0 ? 1 : batch, nb = strideb == 0 ? 1 : batch;
  std::vector<T> xa, xb, out(static_cast<std::size_t>(batch * lr));
  gather_batch(xa, a, m, inca, stridea, na);
  gather_batch(xb, b, n, incb, strideb, nb);
  std::vector<extent> wa(static_cast<std::size_t>(na)), wb(static_cast<std::size_t>(nb));
  for (std::int64_t i = 0; i < na; ++i) wa[i] = classify(xa.data() + i * m, m, window<T>);
  for (std::int64_t i = 0; i < nb; ++i) wb[i] = classify(xb.data() + i * n, n, window<T>);
  const auto win_a = [&](std::int64_t i) -> const extent& { return wa[stridea == 0 ? 0 : i]; };
  const auto win_b = [&](std::int64_t i) -> const extent& { return wb[strideb == 0 ? 0 : i]; };

  // problems whose operands fit one window each: one batched linear product
  std::vector<std::int64_t> simple;
  for (std::int64_t i = 0; i < batch; ++i)
    if (win_a(i).kind == extent::one && win_b(i).kind == extent::one) simple.push_back(i);
  if (!simple.empty()) {
    const auto k = static_cast<std::int64_t>(simple.size());
    const bool share_a = stridea == 0, share_b = strideb == 0;
    array<T> pa(share_a ? m : k * m, stream), pb(share_b ? n : k * n, stream), pr(k * lr, stream);
    T *pa_h = pa.data(), *pb_h = pb.data();  // fresh pool memory: nothing pending on it
    for (std::int64_t j = 0; j < (share_a ? 1 : k); ++j) {
      const std::int64_t i = share_a ? 0 : simple[j];
      scale_into(xa.data() + i * m, m, wa[i].top, pa_h + j * m);
    }
    for (std::int64_t j = 0; j < (share_b ? 1 : k); ++j) {
      const std::int64_t i = share_b ? 0 : simple[j];
      scale_into(xb.data() + i * n, n, wb[i].top, pb_h + j * n);
    }
    convolve_batched<T>(m, n, pa.data(), 1, share_a ? 0 : m, pb.data(), 1, share_b ? 0 : n,
                        pr.data(), 1, lr, static_cast<int>(k), pa.stream());
    const T* pr_h = &pr[0];  // waits for the product and migrates it to the host
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t p = simple[j];
      const double scale = win_a(p).top + win_b(p).top;
      T* o = out.data() + p * lr;
      for (std::int64_t i = 0; i < lr; ++i) o[i] = log_scaled(scale, pr_h[j * lr + i]);
    }
  }
  std::size_t next = 0;
  std::vector<T> part(static_cast<std::size_t>(lr));
  for (std::int64_t i = 0; i < batch; ++i) {
    if (next < simple.size() && simple[next] == i) {
      ++next;
      continue;
    }
    const extent &ea = win_a(i), &eb = win_b(i);
    T* o = out.data() + i * lr;
    if (ea.kind == extent::bad || eb.kind == extent::bad) {
      std::fill_n(o, lr, std::numeric_limits<T>::quiet_NaN());
    } else if (ea.kind == extent::none || eb.kind == extent::none) {
      std::fill_n(o, lr, -std::numeric_limits<T>::infinity());
    } else {
      const T* pa_i = xa.data() + (stridea == 0 ? 0 : i) * m;
      const T* pb_i = xb.data() + (strideb == 0 ? 0 : i) * n;
      forward_runs(cut_runs<T>(std::vector<T>(pa_i, pa_i + m)),
                   cut_runs<T>(std::vector<T>(pb_i, pb_i + n)), part);
      std::copy(part.begin(), part.end(), o);
    }
  }
  scatter_batch(r, incr, strider, out, lr, batch);
}

// ga_j = sum_i g_i exp(a_j + b_{i-j} - r_i) for one problem (gb: a and b
// swapped). Written as ga_j = exp(a_j) sum_k exp(b_k) s_{j+k} exp(c_{j+k})
// with c_i = log|g_i| - r_i and s_i the sign of g_i, the sum is a log-space
// correlation of b with the signed c: both are cut into runs, each pair of
// runs is one linear correlation of scaled values, and the pairs are summed
// per output with a signed running log-sum-exp in double. So every element
// keeps its accuracy relative to sum_k |terms|, however small it is.
template <class T>
void vjp(int m, int n, const T* g, int incg, const T* a, int inca, const T* b, int incb, const T* r,
         int incr, T* ga, int incga, stream_view stream, const char* f, bool swapped) {
  // the public names of this call's operands (grad_b passes b as `a`)
  const char *an = swapped ? "b" : "a", *ain = swapped ? "incb" : "inca";
  const char *bn = swapped ? "a" : "b", *bin = swapped ? "inca" : "incb";
  const char *on = swapped ? "gb" : "ga", *oin = swapped ? "incgb" : "incga";
  check_sizes(f, m, n, 1);
  const std::int64_t lr = std::int64_t{m} + n - 1;
  check_layout(f, {ga, sizeof(T), m, incga, 0, on, oin, "-"},
               {{g, sizeof(T), lr, incg, 0, "g", "incg", "-"},
                {a, sizeof(T), m, inca, 0, an, ain, "-"},
                {b, sizeof(T), n, incb, 0, bn, bin, "-"},
                {r, sizeof(T), lr, incr, 0, "r", "incr", "-"}},
               1);
  detail::wait_for_stream(stream);
  std::vector<T> xg, xa, xb, xr;
  gather_batch(xg, g, lr, incg, 0, 1);
  gather_batch(xa, a, m, inca, 0, 1);
  gather_batch(xb, b, n, incb, 0, 1);
  gather_batch(xr, r, lr, incr, 0, 1);
  std::vector<double> c(static_cast<std::size_t>(lr));
  bool bad = false;
  for (std::int64_t i = 0; i < lr; ++i) {
    const double gi = xg[i], ri = xr[i];
    bad = bad || std::isnan(gi) || std::isnan(ri) || std::isinf(gi) || ri == -neg_inf;
    // r_i = -inf: no term reaches output i, so it adds nothing
    c[i] = gi == 0 || ri == neg_inf ? neg_inf : std::log(std::fabs(gi)) - ri;
  }
  cut<T> cc = bad ? cut<T>{{}, {}, true} : cut_runs<T>(c);
  const cut<T> cb = cut_runs<T>(xb);
  for (const T& v : xa) bad = bad || std::isnan(v) || v == std::numeric_limits<T>::infinity();
  std::vector<T> out(static_cast<std::size_t>(m), T(0));
  if (bad || cc.bad || cb.bad) {
    std::fill(out.begin(), out.end(), std::numeric_limits<T>::quiet_NaN());
    scatter_batch(ga, incga, 0, out, m, 1);
    return;
  }
  // (no runs: every c_i is -inf, the gradient is 0 and nothing is scaled)
  if (!cc.runs.empty())
    for (std::int64_t i = 0; i < lr; ++i)
      if (xg[i] < 0) cc.scaled[i] = -cc.scaled[i];
  lse_accumulator sum(static_cast<std::size_t>(m));
  if (cc.runs.size() == 1 && cb.runs.size() == 1) {
    // one linear correlation on the current backend
    array<T> pc(lr, stream), pb(n, stream), pg(m, stream);
    std::copy(cc.scaled.begin(), cc.scaled.end(), pc.data());
    std::copy(cb.scaled.begin(), cb.scaled.end(), pb.data());
    convolve_grad_p<T>(m, n, pc.data(), 1, pb.data(), 1, pg.data(), 1, pc.stream());
    const T* pg_h = &pg[0];
    const double scale = cc.runs[0].top + cb.runs[0].top;
    for (std::int64_t j = 0; j < m; ++j) sum.add(j, scale, pg_h[j]);
  } else if (!cc.runs.empty() && !cb.runs.empty()) {
    std::vector<T> padded, part;
    for (const run& u : cc.runs) {
      for (const run& t : cb.runs) {
        // outputs j with j + k in u for some k in t: j in [u.begin - t.end + 1, u.end - 1 -
        // t.begin]
        const std::int64_t lu = u.end - u.begin, lt = t.end - t.begin;
        const std::int64_t first = u.begin - t.end + 1, len = lu + lt - 1;
        if (first >= m || first + len <= 0) continue;
        padded.assign(static_cast<std::size_t>(lu + 2 * (lt - 1)), T(0));
        std::copy_n(cc.scaled.data() + u.begin, lu, padded.data() + (lt - 1));
        part.resize(static_cast<std::size_t>(len));
        host_product<T>(banded_op::grad_p, len, lt, padded.data(), cb.scaled.data() + t.begin,
                        part.data());
        const double scale = u.top + t.top;
        for (std::int64_t k = std::max<std::int64_t>(0, -first); k < len && first + k < m; ++k)
          sum.add(first + k, scale, part[k]);
      }
    }
  }
  for (std::int64_t j = 0; j < m; ++j) {
    const double v = sum.acc[j];
    out[j] =
        v == 0 || xa[j] == -std::numeric_limits<T>::infinity()
            ? T(0)
            : static_cast<T>(std::copysign(
                  std::exp(static_cast<double>(xa[j]) + sum.scale[j] + std::log(std::fabs(v))), v));
  }
  scatter_batch(ga, incga, 0, out, m, 1);
}

}  // namespace

template <class T>
void log_convolve(int m, int n, const T* a, int inca, const T* b, int incb, T* r, int incr,
                  stream_view stream) {
  forward<T>(m, n, a, inca, 0, b, incb, 0, r, incr, 0, 1, stream, "marg::log_convolve");
}

template <class T>
void log_convolve_batched(int m, int n, const T* a, int inca, std::int64_t stridea, const T* b,
                          int incb, std::int64_t strideb, T* r, int incr, std::int64_t strider,
                          int batch, stream_view stream) {
  forward<T>(m, n, a, inca, stridea, b, incb, strideb, r, incr, strider, batch, stream,
             "marg::log_convolve_batched");
}

template <class T>
void log_convolve_grad_a(int m, int n, const T* g, int incg, const T* a, int inca, const T* b,
                         int incb, const T* r, int incr, T* ga, int incga, stream_view stream) {
  vjp<T>(m, n, g, incg, a, inca, b, incb, r, incr, ga, incga, stream, "marg::log_convolve_grad_a",
         false);
}

template <class T>
void log_convolve_grad_b(int m, int n, const T* g, int incg, const T* a, int inca, const T* b,
                         int incb, const T* r, int incr, T* gb, int incgb, stream_view stream) {
  // r is symmetric in (a, b): the gradient with respect to b is the one with
  // respect to a with the operands swapped
  vjp<T>(n, m, g, incg, b, incb, a, inca, r, incr, gb, incgb, stream, "marg::log_convolve_grad_b",
         true);
}

#define MARG_INSTANTIATE(T)                                                                     \
  template void log_convolve<T>(int, int, const T*, int, const T*, int, T*, int, stream_view);  \
  template void log_convolve_batched<T>(int, int, const T*, int, std::int64_t, const T*, int,   \
                                        std::int64_t, T*, int, std::int64_t, int, stream_view); \
  template void log_convolve_grad_a<T>(int, int, const T*, int, const T*, int, const T*, int,   \
                                       const T*, int, T*, int, stream_view);                    \
  template void log_convolve_grad_b<T>(int, int, const T*, int, const T*, int, const T*, int,   \
                                       const T*, int, T*, int, stream_view);
MARG_INSTANTIATE(float)
MARG_INSTANTIATE(double)
#undef MARG_INSTANTIATE

}  // namespace marg
