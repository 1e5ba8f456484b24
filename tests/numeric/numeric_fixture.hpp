/// @file numeric_fixture.hpp
/// @brief Shared pieces of the numeric test suite: the {float, double} x
/// {cpu, cuda} configurations, backend and thread guards, poisoned strided
/// operands in host or pool memory, and one generic caller for the three
/// banded products.
#pragma once

#include <catch2/catch.hpp>

#include <marg/numeric/array.hpp>
#include <marg/numeric/backend.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../common/reference.hpp"

namespace marg::test {

/// Test configurations: element type x backend.
struct cpu_f {
  using T = float;
  static constexpr backend b = backend::cpu;
};
struct cpu_d {
  using T = double;
  static constexpr backend b = backend::cpu;
};
struct cuda_f {
  using T = float;
  static constexpr backend b = backend::cuda;
};
struct cuda_d {
  using T = double;
  static constexpr backend b = backend::cuda;
};

/// Selects a backend for one test case and restores the previous request.
class backend_guard {
 public:
  /// @param b the backend for the guard's lifetime
  explicit backend_guard(backend b) : previous_(requested_backend()) { set_backend(b); }
  backend_guard(const backend_guard&) = delete;
  backend_guard& operator=(const backend_guard&) = delete;
  ~backend_guard() {
    try {
      set_backend(previous_);
    } catch (...) {  // destructors never throw; automatic and cpu cannot fail
    }
  }

 private:
  backend previous_;
};

/// Sets the CPU thread count for one scope and restores the previous one.
class threads_guard {
 public:
  /// @param threads thread count (>= 1)
  explicit threads_guard(int threads) : previous_(cpu_threads()) { set_cpu_threads(threads); }
  threads_guard(const threads_guard&) = delete;
  threads_guard& operator=(const threads_guard&) = delete;
  ~threads_guard() {
    try {
      set_cpu_threads(previous_);
    } catch (...) {
    }
  }

 private:
  int previous_;
};

}  // namespace marg::test

/// Ends a test case that needs a CUDA device (`needs_gpu` true) on a machine
/// where the CUDA backend cannot run (no device, or one this build has no
/// code for), printing the token that ctest reports as "Skipped"
/// (tests/CMakeLists.txt, SKIP_REGULAR_EXPRESSION) and the reason.
#define MARG_SKIP_IF_NO_GPU(needs_gpu)                            \
  if ((needs_gpu) && *::marg::cuda_unusable_reason() != '\0') {   \
    WARN("MARG_SKIP_NO_GPU: " << ::marg::cuda_unusable_reason()); \
    return;                                                       \
  }

/// Starts a test case of configuration `C`: skips it (ctest: "Skipped") when
/// its backend cannot run here, else selects the backend until the case ends.
#define MARG_USE_BACKEND_OR_SKIP(C)                  \
  MARG_SKIP_IF_NO_GPU(C::b == ::marg::backend::cuda) \
  ::marg::test::backend_guard marg_backend_guard_ {  \
    C::b                                             \
  }

/// Starts a randomized test case of configuration `C`: backend (or skip),
/// then a random engine `g` whose seed is printed with every failure.
#define MARG_RANDOM_CASE(C)    \
  MARG_USE_BACKEND_OR_SKIP(C); \
  MARG_SEEDED_RNG(g)

/// The four configurations, for TEMPLATE_TEST_CASE.
#define MARG_ALL_CONFIGS \
  marg::test::cpu_f, marg::test::cpu_d, marg::test::cuda_f, marg::test::cuda_d

namespace marg::test {

/// Where a test operand lives.
enum class memory {
  host,  ///< std::vector (staged by the CUDA backend)
  pool   ///< marg::array: pool memory, CUDA managed memory when a GPU is present
};

/// @return "host" or "pool"
inline const char* name_of(memory m) {
  return m == memory::host ? "host" : "pool";
}

/// A batched strided operand inside a NaN-poisoned buffer with guard elements
/// on both sides. Element i of problem b sits at data()[b*stride + i*inc].
template <class T>
class strided {
 public:
  /// @param mem host or pool memory
  /// @param len elements per problem (>= 1)
  /// @param inc element stride (>= 1)
  /// @param stride problem stride (>= 0)
  /// @param batch number of problems (>= 0)
  strided(memory mem, std::int64_t len, int inc, std::int64_t stride, int batch)
      : mem_(mem), len_(len), inc_(inc), stride_(stride), batch_(batch) {
    const std::int64_t extent = batch > 0 ? (batch - 1) * stride + (len - 1) * inc + 1 : 1;
    size_ = extent + 2 * pad;
    if (mem == memory::host) {
      host_.assign(static_cast<std::size_t>(size_), poison());
      base_ = host_.data();
    } else {
      pool_ = marg::array<T>(static_cast<std::size_t>(size_));
      base_ = pool_.data();
      std::fill(base_, base_ + size_, poison());
    }
    used_.assign(static_cast<std::size_t>(size_), 0);
    for (int b = 0; b < batch; ++b)
      for (std::int64_t i = 0; i < len; ++i) used_[pad + offset(b, i)] = 1;
  }

  /// @return pointer to element 0 of problem 0 (what the library gets)
  T* data() { return base_ + pad; }
  /// @return the element stride
  int inc() const { return inc_; }
  /// @return the problem stride
  std::int64_t stride() const { return stride_; }

  /// Writes the elements of problem b (with stride 0 every problem shares them).
  void set(int b, const std::vector<T>& v) {
    for (std::int64_t i = 0; i < len_; ++i) base_[pad + offset(b, i)] = v[i];
  }
  /// @return the elements of problem b, after pending GPU work finished
  std::vector<T> get(int b) {
    sync();
    std::vector<T> v(static_cast<std::size_t>(len_));
    for (std::int64_t i = 0; i < len_; ++i) v[i] = base_[pad + offset(b, i)];
    return v;
  }
  /// @return positions outside every problem that no longer hold the poison
  ///         (stray writes), after pending GPU work finished
  std::int64_t stray_writes() {
    sync();
    std::int64_t count = 0;
    for (std::int64_t k = 0; k < size_; ++k)
      if (!used_[k] && !std::isnan(base_[k])) ++count;
    return count;
  }
  /// @return a bitwise copy of the whole buffer, guard elements included
  std::vector<unsigned char> snapshot() {
    sync();
    std::vector<unsigned char> s(static_cast<std::size_t>(size_) * sizeof(T));
    std::memcpy(s.data(), base_, s.size());
    return s;
  }

  /// @return the value gaps and outputs are filled with before a call
  static T poison() { return std::numeric_limits<T>::quiet_NaN(); }

 private:
  static constexpr std::int64_t pad = 3;
  std::int64_t offset(int b, std::int64_t i) const { return b * stride_ + i * inc_; }
  void sync() {
    if (mem_ == memory::pool) (void)pool_.begin();  // waits for the array's stream
  }
  memory mem_;
  std::int64_t len_;
  int inc_;
  std::int64_t stride_;
  int batch_;
  std::int64_t size_ = 0;
  std::vector<T> host_;
  marg::array<T> pool_;
  T* base_ = nullptr;
  std::vector<char> used_;
};

/// All products, for loops.
inline constexpr op all_ops[] = {op::convolve, op::grad_p, op::grad_q};

/// @return the public function name of o
inline const char* name_of(op o) {
  switch (o) {
    case op::convolve:
      return "convolve";
    case op::grad_p:
      return "convolve_grad_p";
    case op::grad_q:
      return "convolve_grad_q";
  }
  return "?";
}

/// Calls the single-problem product o (with stream_view{} when with_stream).
template <class T>
void call(op o, int m, int n, const T* a, int inca, const T* b, int incb, T* out, int incout,
          bool with_stream = false) {
  switch (o) {
    case op::convolve:
      if (with_stream)
        convolve<T>(m, n, a, inca, b, incb, out, incout, stream_view{});
      else
        convolve<T>(m, n, a, inca, b, incb, out, incout);
      return;
    case op::grad_p:
      if (with_stream)
        convolve_grad_p<T>(m, n, a, inca, b, incb, out, incout, stream_view{});
      else
        convolve_grad_p<T>(m, n, a, inca, b, incb, out, incout);
      return;
    case op::grad_q:
      if (with_stream)
        convolve_grad_q<T>(m, n, a, inca, b, incb, out, incout, stream_view{});
      else
        convolve_grad_q<T>(m, n, a, inca, b, incb, out, incout);
      return;
  }
}

/// Calls the batched product o.
template <class T>
void call_batched(op o, int m, int n, const T* a, int inca, std::int64_t stridea, const T* b,
                  int incb, std::int64_t strideb, T* out, int incout, std::int64_t strideout,
                  int batch) {
  switch (o) {
    case op::convolve:
      convolve_batched<T>(m, n, a, inca, stridea, b, incb, strideb, out, incout, strideout, batch);
      return;
    case op::grad_p:
      convolve_grad_p_batched<T>(m, n, a, inca, stridea, b, incb, strideb, out, incout, strideout,
                                 batch);
      return;
    case op::grad_q:
      convolve_grad_q_batched<T>(m, n, a, inca, stridea, b, incb, strideb, out, incout, strideout,
                                 batch);
      return;
  }
}

/// @return the long double reference of product o on one problem
inline rvec reference(op o, int m, int n, const rvec& a, const rvec& b) {
  switch (o) {
    case op::convolve:
      return ref_convolve(a, b);
    case op::grad_p:
      return ref_correlate(a, b, static_cast<std::size_t>(m));
    case op::grad_q:
      return ref_correlate(a, b, static_cast<std::size_t>(n));
  }
  return {};
}

/// @return element i of the long double reference of product o
inline real reference_at(op o, const rvec& a, const rvec& b, std::int64_t i) {
  return o == op::convolve ? ref_convolve_at(a, b, i) : ref_correlate_at(a, b, i);
}

/// Indices to check of an output too long for the full reference loop.
/// @param g the test's generator
/// @param len output length
/// @param edge the first and last `edge` indices (the band's triangles) ...
/// @param random ... and this many uniform ones
/// @return the indices (repeats possible)
inline std::vector<std::int64_t> sample_indices(rng& g, std::int64_t len, int edge, int random) {
  std::vector<std::int64_t> sample;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(edge, len); ++i) {
    sample.push_back(i);
    sample.push_back(len - 1 - i);
  }
  for (int k = 0; k < random; ++k) sample.push_back(uniform_int(g, 0, len - 1));
  return sample;
}

/// @return a random size in [1, hi]
inline int random_size(rng& g, int hi) {
  return static_cast<int>(uniform_int(g, 1, hi));
}

/// Draws the three element strides of a (batch_)problem from 1..3.
template <class P>
void randomize_incs(rng& g, P& pr) {
  pr.inca = static_cast<int>(uniform_int(g, 1, 3));
  pr.incb = static_cast<int>(uniform_int(g, 1, 3));
  pr.incout = static_cast<int>(uniform_int(g, 1, 3));
}

/// One single-problem case.
struct problem {
  op o;
  int m, n;
  int inca = 1, incb = 1, incout = 1;
  memory mem = memory::host;
  shape sa = shape::uniform, sb = shape::uniform;
  bool with_stream = false;

  /// @return a one-line description for INFO
  std::string describe() const {
    return std::string(name_of(o)) + " m = " + std::to_string(m) + " n = " + std::to_string(n) +
           " inc = " + std::to_string(inca) + "/" + std::to_string(incb) + "/" +
           std::to_string(incout) + " memory " + name_of(mem) + " shapes " +
           std::to_string(static_cast<int>(sa)) + "/" + std::to_string(static_cast<int>(sb)) +
           (with_stream ? " (stream overload)" : "");
  }
};

/// Runs one problem on positive random inputs and checks every output element
/// against the long double loop (relative error <= tolerance<T>()), that
/// every output element was written, that nothing between or around the
/// strided output was, and that the inputs are unchanged.
/// @return the output (for bitwise comparisons between calls)
template <class T>
std::vector<T> check_problem(rng& g, const problem& pr) {
  INFO(pr.describe());
  const lengths len = lengths_of(pr.o, pr.m, pr.n);
  strided<T> a(pr.mem, len.a, pr.inca, 0, 1), b(pr.mem, len.b, pr.incb, 0, 1);
  strided<T> out(pr.mem, len.out, pr.incout, 0, 1);
  const std::vector<T> va = random_positive<T>(g, len.a, pr.sa);
  const std::vector<T> vb = random_positive<T>(g, len.b, pr.sb);
  a.set(0, va);
  b.set(0, vb);
  const auto a_before = a.snapshot(), b_before = b.snapshot();
  call<T>(pr.o, pr.m, pr.n, a.data(), a.inc(), b.data(), b.inc(), out.data(), out.inc(),
          pr.with_stream);
  const std::vector<T> got = out.get(0);
  const error_report rep =
      compare(got, reference(pr.o, pr.m, pr.n, widen(va), widen(vb)), tolerance<T>());
  INFO(rep.describe());
  CHECK(rep.failures == 0);
  CHECK(out.stray_writes() == 0);
  CHECK((a.snapshot() == a_before && b.snapshot() == b_before));
  return got;
}

/// How a batched operand is laid out.
enum class layout {
  broadcast,    ///< stride 0: one operand for every problem (inputs only)
  tight,        ///< stride = extent of one problem
  gapped,       ///< stride = extent + a few poisoned elements
  interleaved,  ///< stride 1, inc = batch: problems interleaved (inputs only)
};

/// @return the name of a layout
inline const char* name_of(layout l) {
  switch (l) {
    case layout::broadcast:
      return "broadcast";
    case layout::tight:
      return "tight";
    case layout::gapped:
      return "gapped";
    case layout::interleaved:
      return "interleaved";
  }
  return "?";
}

/// One batched case.
struct batch_problem {
  op o;
  int m, n, batch;
  int inca = 1, incb = 1, incout = 1;
  layout la = layout::tight, lb = layout::tight, lout = layout::tight;
  memory mem = memory::host;

  /// @return a one-line description for INFO
  std::string describe() const {
    return std::string(name_of(o)) + "_batched m = " + std::to_string(m) +
           " n = " + std::to_string(n) + " batch = " + std::to_string(batch) +
           " inc = " + std::to_string(inca) + "/" + std::to_string(incb) + "/" +
           std::to_string(incout) + " layouts " + name_of(la) + "/" + name_of(lb) + "/" +
           name_of(lout) + " memory " + name_of(mem);
  }
};

/// @return (inc, stride) of an operand of length len in layout l
inline std::pair<int, std::int64_t> inc_and_stride(layout l, std::int64_t len, int inc, int batch) {
  switch (l) {
    case layout::broadcast:
      return {inc, 0};
    case layout::tight:
      return {inc, (len - 1) * inc + 1};
    case layout::gapped:
      return {inc, (len - 1) * inc + 1 + 2};
    case layout::interleaved:
      return {std::max(batch, 1), 1};
  }
  return {inc, 0};
}

/// Runs one batched problem on positive random inputs and checks every output
/// element of every problem against the long double loop, every gap of the
/// output for stray writes and the inputs for changes.
template <class T>
void check_batch(rng& g, const batch_problem& pr) {
  INFO(pr.describe());
  const lengths len = lengths_of(pr.o, pr.m, pr.n);
  const auto [inca, stridea] = inc_and_stride(pr.la, len.a, pr.inca, pr.batch);
  const auto [incb, strideb] = inc_and_stride(pr.lb, len.b, pr.incb, pr.batch);
  const auto [incout, strideout] = inc_and_stride(pr.lout, len.out, pr.incout, pr.batch);
  strided<T> a(pr.mem, len.a, inca, stridea, pr.batch);
  strided<T> b(pr.mem, len.b, incb, strideb, pr.batch);
  strided<T> out(pr.mem, len.out, incout, strideout, pr.batch);
  std::vector<std::vector<T>> va, vb;
  for (int k = 0; k < pr.batch; ++k) {
    va.push_back(k > 0 && stridea == 0 ? va[0] : random_positive<T>(g, len.a, all_shapes[k % 4]));
    vb.push_back(k > 0 && strideb == 0 ? vb[0]
                                       : random_positive<T>(g, len.b, all_shapes[(k + 1) % 4]));
    a.set(k, va[k]);
    b.set(k, vb[k]);
  }
  const auto a_before = a.snapshot(), b_before = b.snapshot();
  call_batched<T>(pr.o, pr.m, pr.n, a.data(), inca, stridea, b.data(), incb, strideb, out.data(),
                  incout, strideout, pr.batch);
  error_report worst;
  int worst_problem = -1;
  std::int64_t failures = 0;
  for (int k = 0; k < pr.batch; ++k) {
    const error_report rep = compare(
        out.get(k), reference(pr.o, pr.m, pr.n, widen(va[k]), widen(vb[k])), tolerance<T>());
    failures += rep.failures;
    if (worst_problem < 0 || rep.worst > worst.worst) {
      worst = rep;
      worst_problem = k;
    }
  }
  INFO("worst problem " << worst_problem << ": " << worst.describe());
  CHECK(failures == 0);
  CHECK(out.stray_writes() == 0);
  CHECK((a.snapshot() == a_before && b.snapshot() == b_before));
}

}  // namespace marg::test
