// CPU backend: gathers strided operands into contiguous scratch, maps each
// banded product onto a correlation, spreads batches over host threads.
#include <marg/numeric/backend.hpp>

#include <algorithm>
#include <vector>

#include "../detail/banded.hpp"
#include "correlate.hpp"
#include "parallel.hpp"

namespace marg::detail::cpu {
namespace {

// per-thread scratch, grown on demand and reused across calls
template <class T>
struct scratch {
  std::vector<T> a, x, out;
};

template <class T>
scratch<T>& thread_scratch() {
  thread_local scratch<T> s;
  return s;
}

template <class T>
void gather(std::vector<T>& dst, const T* src, std::int64_t len, int inc, bool reverse) {
  dst.resize(static_cast<std::size_t>(len));
  if (reverse) {
    for (std::int64_t i = 0; i < len; ++i) dst[i] = src[(len - 1 - i) * inc];
  } else if (inc == 1) {
    std::copy(src, src + len, dst.begin());
  } else {
    for (std::int64_t i = 0; i < len; ++i) dst[i] = src[i * inc];
  }
}

// one problem of the batch
template <class T>
void run_one(const banded_args<T>& x, const T* a, const T* b, T* out, int threads) {
  scratch<T>& s = thread_scratch<T>();
  const std::int64_t m = x.m, n = x.n;
  correlation<T> c{};
  if (x.op == banded_op::convolve) {
    // convolution is symmetric: correlate the reversed shorter operand with the longer one
    const bool swap = m > n;
    const T* sh = swap ? b : a;
    const T* lg = swap ? a : b;
    const std::int64_t ls = swap ? n : m, ll = swap ? m : n;
    gather(s.a, sh, ls, swap ? x.inc_b : x.inc_a, true);
    gather(s.x, lg, ll, swap ? x.inc_a : x.inc_b, false);
    c = {s.a.data(), ls, s.x.data(), ll, ls - 1, nullptr, m + n - 1};
  } else {
    const std::int64_t la = x.op == banded_op::grad_p ? n : m;
    gather(s.a, b, la, x.inc_b, false);
    gather(s.x, a, m + n - 1, x.inc_a, false);
    c = {s.a.data(), la, s.x.data(), m + n - 1, 0, nullptr, x.op == banded_op::grad_p ? m : n};
  }
  if (x.inc_out == 1) {
    c.out = out;
    correlate(c, threads);
  } else {
    s.out.resize(static_cast<std::size_t>(c.lout));
    c.out = s.out.data();
    correlate(c, threads);
    for (std::int64_t i = 0; i < c.lout; ++i) out[i * x.inc_out] = s.out[i];
  }
}

}  // namespace

template <class T>
void run(const banded_args<T>& x) {
  const int threads = cpu_threads();
  const auto len = lengths_of(x.op, x.m, x.n);
  const std::int64_t work = std::min(len.a, len.b) * len.out;
  auto one = [&](std::int64_t i, int t) {
    run_one(x, x.a + i * x.stride_a, x.b + i * x.stride_b, x.out + i * x.stride_out, t);
  };
  if (x.batch > 1 && work < tuning::parallel_min_work &&
      work * x.batch >= tuning::parallel_min_work) {
    // many small problems: one thread per range of problems
    parallel_for(x.batch, threads, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) one(i, 1);
    });
  } else {
    for (std::int64_t i = 0; i < x.batch; ++i) one(i, threads);
  }
}

template void run<float>(const banded_args<float>&);
template void run<double>(const banded_args<double>&);

}  // namespace marg::detail::cpu
