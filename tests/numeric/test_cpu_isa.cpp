// The run-time choice of the CPU kernels' instruction set (numeric/src/cpu/
// isa.hpp): the dispatcher picks a variant this CPU runs (checked against
// CPUID read here), MARG_CPU_ISA forces one, and every variant computes the
// three banded products within the numeric contract of the long double loop
// and of each other. ctest also runs the numeric suite with
// MARG_CPU_ISA=baseline (tests/numeric/CMakeLists.txt).
#include <catch2/catch.hpp>

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

// a problem's reference and sum of |terms|, by the plain long double loops
void reference(op o, const rvec& a, const rvec& b, rvec& want, rvec& scale) {
  if (o == op::convolve) {
    want = ref_convolve(a, b);
    rvec aa(a), bb(b);
    for (auto& v : aa) v = std::fabs(v);
    for (auto& v : bb) v = std::fabs(v);
    scale = ref_convolve(aa, bb);
  } else {
    // a = g, b = the taps (q for grad_p, p for grad_q)
    const std::size_t out = a.size() - b.size() + 1;
    want = ref_correlate(a, b, out);
    scale = ref_correlate_abs(a, b, out);
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
      std::vector<rvec> want(batch), scale(batch);
      for (int i = 0; i < batch; ++i)
        reference(o, rvec(a.begin() + i * sa, a.begin() + i * sa + len.a),
                  rvec(b.begin() + i * sb, b.begin() + i * sb + len.b), want[i], scale[i]);
      const auto problem = [&](const std::vector<T>& out, int i) {
        return std::vector<T>(out.begin() + i * so, out.begin() + i * so + len.out);
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
