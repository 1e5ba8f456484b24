// The run-time choice of the CPU kernels' instruction set (numeric/src/cpu/
// isa.hpp): the dispatcher picks a variant this CPU runs (checked against
// CPUID read here), MARG_CPU_ISA forces one, and every variant computes the
// three banded products within the numeric contract of the long double loop
// and of each other. ctest also runs the numeric suite with
// MARG_CPU_ISA=baseline (tests/numeric/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "../../numeric/src/cpu/isa.hpp"
#include "../common/reference.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace marg::test;
namespace cpu = marg::detail::cpu;

namespace {

#if defined(__x86_64__)
// AVX, AVX2, FMA, BMI1, BMI2 and the OS saving the YMM registers, decoded
// from CPUID and XGETBV here rather than through the compiler's runtime
bool cpu_runs_x86_64_v3() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28);
  if (!(fma && osxsave && avx)) return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 6u) != 6u) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 5)) && (b & (1u << 3)) && (b & (1u << 8));
}
#endif

template <class T>
void run_variant(const cpu::kernel_table& k, const marg::detail::banded_args<T>& x) {
  if constexpr (sizeof(T) == sizeof(float))
    k.run_float(x);
  else
    k.run_double(x);
}

marg::detail::banded_op to_banded(op o) {
  switch (o) {
    case op::convolve:
      return marg::detail::banded_op::convolve;
    case op::grad_p:
      return marg::detail::banded_op::grad_p;
    case op::grad_q:
      return marg::detail::banded_op::grad_q;
  }
  return marg::detail::banded_op::convolve;
}

// a problem's reference and sum of |terms| at outputs idx, by plain long
// double loops: out_j = sum_k t_k X_{j+k-lead}, the taps t and X as the
// kernels see them (a convolution: b reversed over a, lead len(b) - 1;
// a gradient: taps b over g = a, lead 0)
void reference(op o, const rvec& a, const rvec& b, const std::vector<std::int64_t>& idx, rvec& want,
               rvec& scale) {
  const auto la = static_cast<std::int64_t>(a.size()), lb = static_cast<std::int64_t>(b.size());
  const bool conv = o == op::convolve;
  want.assign(idx.size(), 0.0L);
  scale.assign(idx.size(), 0.0L);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const std::int64_t j = idx[i];
    for (std::int64_t k = 0; k < lb; ++k) {
      const std::int64_t t = conv ? j - k : j + k;  // index into a
      if (t < 0 || t >= la) continue;
      const real term = a[static_cast<std::size_t>(t)] * b[static_cast<std::size_t>(k)];
      want[i] += term;
      scale[i] += std::fabs(term);
    }
  }
}

}  // namespace

TEST_CASE("cpu isa: the dispatcher picks a variant this CPU runs", "[numeric][cpu_isa]") {
  const auto runnable = cpu::runnable_kernels();
  REQUIRE(!runnable.empty());
  const cpu::kernel_table& chosen = cpu::selected_kernels();
  CAPTURE(chosen.name);
  REQUIRE(cpu::find_kernels(chosen.name) == &chosen);
  REQUIRE(cpu::find_kernels("no-such-isa") == nullptr);
  // the last is the one every CPU of the architecture runs
  const std::string_view last = runnable.back()->name;
  CHECK((last == "baseline" || last == "native"));
  const char* env = std::getenv("MARG_CPU_ISA");
  if (env != nullptr && cpu::find_kernels(env) != nullptr)
    CHECK(std::string_view(chosen.name) == env);
  else
    CHECK(&chosen == runnable.front());
#if defined(__x86_64__)
  if (last == "baseline") {
    // a default x86-64 build holds the x86-64-v3 variant: runnable exactly
    // where CPUID says so
    CHECK((cpu::find_kernels("x86_64_v3") != nullptr) == cpu_runs_x86_64_v3());
    if (cpu_runs_x86_64_v3() && env == nullptr) CHECK(std::string_view(chosen.name) == "x86_64_v3");
  }
#endif
}

TEMPLATE_TEST_CASE("cpu isa: every variant within the contract of the loop and of the others",
                   "[numeric][cpu_isa]", float, double) {
  using T = TestType;
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  rng g(seed);
  const double tol = tolerance<T>();
  // shapes through every path of the kernels (numeric/src/cpu/correlate.hpp
  // tuning): the stack path, the direct loop, the register tiles and the
  // block-Toeplitz products, in batches of 3 with padded strides
  const std::pair<int, int> shapes[] = {{5, 7},      {12, 100},   {20, 1000},  {60, 300},
                                        {300, 2000}, {2000, 300}, {2900, 2900}};
  for (const op o : {op::convolve, op::grad_p, op::grad_q}) {
    for (const auto& [m, n] : shapes) {
      CAPTURE(static_cast<int>(o), m, n);
      const lengths len = lengths_of(o, m, n);
      const int batch = 3;
      const std::int64_t sa = len.a + 3, sb = len.b + 1, so = len.out + 2;
      const std::vector<T> a = random_signed<T>(g, sa * batch), b = random_signed<T>(g, sb * batch);
      // every output, or about 300 spread over the long ones (the references
      // are long double loops, slow where long double is emulated: aarch64)
      std::vector<std::int64_t> idx;
      const std::int64_t step = std::max<std::int64_t>(1, len.out / 300);
      for (std::int64_t j = 0; j < len.out; j += step) idx.push_back(j);
      idx.push_back(len.out - 1);
      std::vector<rvec> want(batch), scale(batch);
      for (int i = 0; i < batch; ++i)
        reference(o, rvec(a.begin() + i * sa, a.begin() + i * sa + len.a),
                  rvec(b.begin() + i * sb, b.begin() + i * sb + len.b), idx, want[i], scale[i]);
      const auto problem = [&](const std::vector<T>& out, int i) {
        std::vector<T> v;
        for (const std::int64_t j : idx) v.push_back(out[static_cast<std::size_t>(i * so + j)]);
        return v;
      };
      std::vector<std::vector<T>> outs;
      for (const cpu::kernel_table* k : cpu::runnable_kernels()) {
        CAPTURE(k->name);
        std::vector<T> out(static_cast<std::size_t>(so * batch), T(-7));
        const marg::detail::banded_args<T> x{to_banded(o), m, n,  a.data(), 1, sa, b.data(), 1, sb,
                                             out.data(),   1, so, batch};
        run_variant(*k, x);
        for (int i = 0; i < batch; ++i) {
          const error_report rep = compare_scaled(problem(out, i), want[i], scale[i], tol);
          INFO(rep.describe());
          CHECK(rep.failures == 0);
          // the padding between problems is left alone
          CHECK(out[static_cast<std::size_t>(i * so + len.out)] == T(-7));
        }
        outs.push_back(std::move(out));
      }
      // every variant agrees with the first (the one a plain run picks)
      // within twice the contract
      for (std::size_t v = 1; v < outs.size(); ++v) {
        CAPTURE(cpu::runnable_kernels()[v]->name);
        for (int i = 0; i < batch; ++i) {
          const std::vector<T> first = problem(outs[0], i);
          const error_report rep = compare_scaled(
              problem(outs[v], i), rvec(first.begin(), first.end()), scale[i], 2 * tol);
          INFO(rep.describe());
          CHECK(rep.failures == 0);
        }
      }
    }
  }
}
