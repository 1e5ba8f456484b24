// CPU backend: maps each banded product onto a correlation (problem_shape);
// sums problems of few taps and outputs on the stack straight from their
// operands (run_tiny), gathers the others' strided operands into contiguous
// scratch for correlate; spreads batches over host threads. Compiled once per
// instruction set (cmake/marg_cpu_variants.cmake); isa.cpp picks one.
#include <marg/numeric/backend.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../detail/banded.hpp"
#include "correlate.hpp"
#include "isa.hpp"
#include "parallel.hpp"

namespace marg::detail::cpu::MARG_CPU_ISA_NS {
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

// A problem as the correlation out[j] = sum_k tap(k) X[j + k - lead], X of
// length lx, the form both paths compute: a convolution (symmetric) correlates
// its shorter operand, reversed, with the longer one; a gradient its b with g
struct problem_shape {
  std::int64_t taps, lx, lout, lead;
  /// whether the taps come from b (a gradient's, or a convolution's shorter
  /// operand; a convolution's taps run backwards, whichever operand they are)
  bool taps_from_b;
};

template <class T>
problem_shape shape_of(const banded_args<T>& x) {
  const std::int64_t m = x.m, n = x.n;
  if (x.op == banded_op::convolve) {
    const bool swap = m > n;  // taps: the shorter operand
    return {swap ? n : m, swap ? m : n, m + n - 1, (swap ? n : m) - 1, swap};
  }
  const bool gp = x.op == banded_op::grad_p;
  return {gp ? n : m, m + n - 1, gp ? m : n, 0, true};
}

// @return whether problems of shape `s` fit run_tiny: fewer taps than the
// register tiles take (tuning::simd_min_taps) and at most tuning::tiny_max_out
// outputs
template <class T>
bool fits_tiny(const problem_shape& s) {
  return s.taps < tuning::simd_min_taps<T> && s.lout <= tuning::tiny_max_out;
}

// The operands of problem i of a batch: its taps, its X and its output
template <class T>
struct problem_operands {
  const T *taps, *x;  // problem 0's
  int tinc, xinc;     // element strides
  std::int64_t tstride, xstride;
  bool reversed;  // a convolution's taps run backwards
  T* out;
  int inc_out;
  std::int64_t stride_out;

  /// d[k] = tap(k) of problem i, k < n, as double
  void load_taps(std::int64_t i, std::int64_t n, double* d) const {
    const T* t = taps + i * tstride;
    for (std::int64_t k = 0; k < n; ++k) d[k] = t[(reversed ? n - 1 - k : k) * tinc];
  }
};

template <class T>
problem_operands<T> operands_of(const banded_args<T>& x, const problem_shape& s) {
  const bool from_b = s.taps_from_b;
  return {from_b ? x.b : x.a,
          from_b ? x.a : x.b,
          from_b ? x.inc_b : x.inc_a,
          from_b ? x.inc_a : x.inc_b,
          from_b ? x.stride_b : x.stride_a,
          from_b ? x.stride_a : x.stride_b,
          x.op == banded_op::convolve,
          x.out,
          x.inc_out,
          x.stride_out};
}

// Up to tuning::tiny_blocks_up_to outputs: blocks of tuning::tiny_block sums in
// registers over a zero-padded copy of X (whole windows, no range tests)
template <class T>
void tiny_blocks(const problem_operands<T>& o, const problem_shape& s, std::int64_t i0,
                 std::int64_t i1) {
  constexpr int B = tuning::tiny_block;
  const std::int64_t taps = s.taps, lx = s.lx, lout = s.lout, lead = s.lead;
  // X_t = X[t - lead] for lead <= t < lead + lx, zero elsewhere, t < span
  const std::int64_t span = (lout + B - 1) / B * B + taps - 1;
  T xs[tuning::tiny_blocks_up_to + tuning::tiny_block + tuning::simd_min_taps<double>];
  double ts[tuning::simd_min_taps<double>];
  std::fill_n(xs, lead, T(0));
  std::fill(xs + lead + lx, xs + span, T(0));
  for (std::int64_t i = i0; i < i1; ++i) {
    o.load_taps(i, taps, ts);
    const T* const xp = o.x + i * o.xstride;
    for (std::int64_t t = 0; t < lx; ++t) xs[lead + t] = xp[t * o.xinc];
    T* const out = o.out + i * o.stride_out;
    for (std::int64_t j0 = 0; j0 < lout; j0 += B) {
      // taps whose window [j0 + k, j0 + k + B) meets the non-zero X; per
      // output its taps in ascending order, plus exact zeros
      const std::int64_t k0 = std::max<std::int64_t>(0, lead - j0 - B + 1);
      const std::int64_t k1 = std::min<std::int64_t>(taps, lead + lx - j0);
      double acc[B] = {};
      for (std::int64_t k = k0; k < k1; ++k) {
        const double tk = ts[k];
        const T* const w = xs + j0 + k;
        for (int r = 0; r < B; ++r) acc[r] = mul_add(tk, static_cast<double>(w[r]), acc[r]);
      }
      const std::int64_t n = std::min<std::int64_t>(B, lout - j0);
      for (std::int64_t r = 0; r < n; ++r) out[(j0 + r) * o.inc_out] = static_cast<T>(acc[r]);
    }
  }
}

// Longer outputs: one vector axpy per tap over all of them, straight from X
// where it is contiguous
template <class T>
void tiny_axpys(const problem_operands<T>& o, const problem_shape& s, std::int64_t i0,
                std::int64_t i1) {
  const std::int64_t taps = s.taps, lx = s.lx, lout = s.lout, lead = s.lead;
  T xs[tuning::tiny_max_out + tuning::simd_min_taps<double>];
  double ts[tuning::simd_min_taps<double>];
  double sums[tuning::tiny_max_out];
  for (std::int64_t i = i0; i < i1; ++i) {
    o.load_taps(i, taps, ts);
    const T* xp = o.x + i * o.xstride;
    if (o.xinc != 1) {
      for (std::int64_t t = 0; t < lx; ++t) xs[t] = xp[t * o.xinc];
      xp = xs;
    }
    std::fill_n(sums, lout, 0.0);
    for (std::int64_t k = 0; k < taps; ++k) {
      const double ak = ts[k];
      const std::int64_t j0 = std::max<std::int64_t>(0, lead - k);
      const std::int64_t j1 = std::min<std::int64_t>(lout, lead - k + lx);
      const T* xk = xp + (j0 + k - lead);
      for (std::int64_t j = j0; j < j1; ++j)
        sums[j] = mul_add(ak, static_cast<double>(xk[j - j0]), sums[j]);
    }
    T* const out = o.out + i * o.stride_out;
    for (std::int64_t j = 0; j < lout; ++j) out[j * o.inc_out] = static_cast<T>(sums[j]);
  }
}

// Problems i0 <= i < i1 of few taps and outputs (fits_tiny), on the stack with
// the shape decoded once for the batch: double sums, one fused multiply-add per
// tap and output, taps in ascending order (correlate_direct's order, one
// rounding less per term)
template <class T>
void run_tiny(const problem_operands<T>& o, const problem_shape& s, std::int64_t i0,
              std::int64_t i1) {
  if (s.lout <= tuning::tiny_blocks_up_to)
    tiny_blocks(o, s, i0, i1);
  else
    tiny_axpys(o, s, i0, i1);
}

// problem i of the batch: gathered into per-thread scratch, then correlate
template <class T>
void run_one(const problem_operands<T>& o, const problem_shape& s, std::int64_t i, int threads) {
  scratch<T>& sc = thread_scratch<T>();
  gather(sc.a, o.taps + i * o.tstride, s.taps, o.tinc, o.reversed);
  gather(sc.x, o.x + i * o.xstride, s.lx, o.xinc, false);
  correlation<T> c{sc.a.data(), s.taps, sc.x.data(), s.lx, s.lead, nullptr, s.lout};
  T* const out = o.out + i * o.stride_out;
  if (o.inc_out == 1) {
    c.out = out;
    correlate(c, threads);
  } else {
    sc.out.resize(static_cast<std::size_t>(c.lout));
    c.out = sc.out.data();
    correlate(c, threads);
    for (std::int64_t j = 0; j < c.lout; ++j) out[j * o.inc_out] = sc.out[j];
  }
}

}  // namespace

template <class T>
void run(const banded_args<T>& x) {
  const int threads = cpu_threads();
  const problem_shape shape = shape_of(x);
  const problem_operands<T> o = operands_of(x, shape);
  const std::int64_t work = shape.taps * shape.lout;
  if (fits_tiny<T>(shape)) {
    // per problem a few thousand multiply-adds at most: threads over problems
    parallel_for(x.batch, work * x.batch >= tuning::parallel_min_work ? threads : 1,
                 [&](std::int64_t i0, std::int64_t i1) { run_tiny(o, shape, i0, i1); });
    return;
  }
  if (x.batch > 1 && work < tuning::parallel_min_work &&
      work * x.batch >= tuning::parallel_min_work) {
    // many small problems: one thread per range of problems
    parallel_for(x.batch, threads, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) run_one(o, shape, i, 1);
    });
  } else {
    for (std::int64_t i = 0; i < x.batch; ++i) run_one(o, shape, i, threads);
  }
}

}  // namespace marg::detail::cpu::MARG_CPU_ISA_NS

#define MARG_CPU_CAT2(a, b) a##b
#define MARG_CPU_CAT(a, b) MARG_CPU_CAT2(a, b)
#define MARG_CPU_STR2(a) #a
#define MARG_CPU_STR(a) MARG_CPU_STR2(a)

// the variant's one global symbol (the others are localized after a partial
// link): a C name, outside the marg_* names that libmarg.so exports
extern "C" const marg::detail::cpu::kernel_table MARG_CPU_CAT(libmarg_cpu_kernels_,
                                                              MARG_CPU_ISA_NS);
extern "C" const marg::detail::cpu::kernel_table MARG_CPU_CAT(libmarg_cpu_kernels_,
                                                              MARG_CPU_ISA_NS) = {
    MARG_CPU_STR(MARG_CPU_ISA_NS), &marg::detail::cpu::MARG_CPU_ISA_NS::run<float>,
    &marg::detail::cpu::MARG_CPU_ISA_NS::run<double>};
