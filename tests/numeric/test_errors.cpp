// Bad input to the banded products: the right exception type
// (marg::invalid_argument, a std::invalid_argument), a message naming the
// argument and its value, and nothing written.
#include <catch2/catch.hpp>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "numeric_fixture.hpp"

using namespace marg::test;
using Catch::Contains;

namespace {

// argument names as the public signatures spell them
struct arg_names {
  const char *a, *inca, *stridea, *b, *incb, *strideb, *out, *incout, *strideout;
};

arg_names names_for(op o) {
  switch (o) {
    case op::convolve:
      return {"p", "incp", "stridep", "q", "incq", "strideq", "r", "incr", "strider"};
    case op::grad_p:
      return {"g", "incg", "strideg", "q", "incq", "strideq", "gp", "incgp", "stridegp"};
    case op::grad_q:
      return {"g", "incg", "strideg", "p", "incp", "stridep", "gq", "incgq", "stridegq"};
  }
  return {};
}

// One call's arguments, valid by default: m = 5, n = 4, batch 3, tight
// strides, separate buffers.
template <class T>
struct args {
  op o;
  bool batched;
  int m = 5, n = 4;
  const T* a;
  int inca = 1;
  std::int64_t stridea;
  const T* b;
  int incb = 1;
  std::int64_t strideb;
  T* out;
  int incout = 1;
  std::int64_t strideout;
  int batch = 3;

  void run() const {
    if (batched)
      call_batched<T>(o, m, n, a, inca, stridea, b, incb, strideb, out, incout, strideout, batch);
    else
      call<T>(o, m, n, a, inca, b, incb, out, incout);
  }
  std::string function() const {
    return std::string("marg::") + name_of(o) + (batched ? "_batched" : "");
  }
};

// buffers big enough for every valid variant used below
template <class T>
struct buffers {
  std::vector<T> a = std::vector<T>(200, T(0.5)), b = std::vector<T>(200, T(0.25));
  std::vector<T> out = std::vector<T>(200, strided<T>::poison());

  args<T> valid(op o, bool batched) {
    const lengths len = lengths_of(o, 5, 4);
    return {o, batched, 5, 4, a.data(), 1, len.a, b.data(), 1, len.b, out.data(), 1, len.out, 3};
  }
  bool untouched() const {
    for (T x : out)
      if (!std::isnan(x)) return false;
    return true;
  }
};

// " name ": the argument as a word of the message
std::string sp(const char* name) {
  return std::string(" ") + name + " ";
}

// x must throw marg::invalid_argument (a std::invalid_argument) whose message
// holds every needle, and must leave the output poisoned
template <class T>
void expect_invalid(buffers<T>& buf, const args<T>& x, const std::vector<std::string>& needles) {
  INFO(x.function() << " m = " << x.m << " n = " << x.n << " batch = " << x.batch);
  CHECK_THROWS_AS(x.run(), marg::invalid_argument);
  CHECK_THROWS_AS(x.run(), std::invalid_argument);
  for (const auto& needle : needles) CHECK_THROWS_WITH(x.run(), Contains(needle));
  CHECK(buf.untouched());
}

}  // namespace

TEMPLATE_TEST_CASE("errors: every bad argument throws invalid_argument naming it", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  buffers<T> buf;
  for (const op o : all_ops) {
    for (const bool batched : {false, true}) {
      const arg_names nm = names_for(o);
      const args<T> ok = buf.valid(o, batched);
      const std::string f = ok.function();
      CAPTURE(f);
      ok.run();  // the valid call runs; its output is re-poisoned
      for (auto& x : buf.out) x = strided<T>::poison();

      // sizes
      for (const int bad : {0, -1, INT_MIN}) {
        args<T> x = ok;
        x.m = bad;
        expect_invalid(buf, x, {f, "m = " + std::to_string(bad)});
        x = ok;
        x.n = bad;
        expect_invalid(buf, x, {f, "n = " + std::to_string(bad)});
      }
      // m + n - 1 does not fit in int (checked before any pointer is touched)
      {
        args<T> x = ok;
        x.m = x.n = INT_MAX / 2 + 2;
        expect_invalid(buf, x, {f, "m + n - 1", std::to_string(INT_MAX / 2 + 2)});
        x = ok;
        x.m = INT_MAX;
        x.n = 2;
        expect_invalid(buf, x, {f, "m + n - 1", std::to_string(INT_MAX)});
      }
      // element strides
      for (const int bad : {0, -2}) {
        args<T> x = ok;
        x.inca = bad;
        expect_invalid(buf, x, {f, std::string(nm.inca) + " = " + std::to_string(bad)});
        x = ok;
        x.incb = bad;
        expect_invalid(buf, x, {f, std::string(nm.incb) + " = " + std::to_string(bad)});
        x = ok;
        x.incout = bad;
        expect_invalid(buf, x, {f, std::string(nm.incout) + " = " + std::to_string(bad)});
      }
      // null pointers (batch >= 1)
      {
        args<T> x = ok;
        x.a = nullptr;
        expect_invalid(buf, x, {f, std::string(nm.a) + " ", "null"});
        x = ok;
        x.b = nullptr;
        expect_invalid(buf, x, {f, std::string(nm.b) + " ", "null"});
        x = ok;
        x.out = nullptr;
        expect_invalid(buf, x, {f, std::string(nm.out) + " ", "null"});
        x.batch = 1;
        if (batched) expect_invalid(buf, x, {f, std::string(nm.out) + " ", "null"});
      }
      // output overlapping an input: the same buffer, and a partial overlap
      {
        args<T> x = ok;
        x.out = const_cast<T*>(x.a);
        expect_invalid(buf, x, {f, "overlaps", sp(nm.out), sp(nm.a)});
        x = ok;
        x.out = buf.b.data() + 2;
        std::vector<T> saved_b = buf.b;
        expect_invalid(buf, x, {f, "overlaps", sp(nm.out), sp(nm.b)});
        CHECK(buf.b == saved_b);  // nothing written into the input either
      }
      if (!batched) continue;
      // batch count and batch strides
      {
        args<T> x = ok;
        x.batch = -1;
        expect_invalid(buf, x, {f, "batch = -1"});
        x = ok;
        x.stridea = -1;
        expect_invalid(buf, x, {f, std::string(nm.stridea) + " = -1"});
        x = ok;
        x.strideb = -7;
        expect_invalid(buf, x, {f, std::string(nm.strideb) + " = -7"});
        x = ok;
        x.strideout = -1;
        expect_invalid(buf, x, {f, std::string(nm.strideout) + " = -1"});
        // outputs of consecutive problems overlapping (also stride 0)
        for (const std::int64_t bad : {std::int64_t{0}, ok.strideout - 1}) {
          x = ok;
          x.strideout = bad;
          expect_invalid(buf, x, {f, std::string(nm.strideout) + " = " + std::to_string(bad)});
        }
        // with strides, the output extent is (length - 1) * inc + 1
        x = ok;
        x.incout = 2;
        x.strideout = 2 * (ok.strideout - 1);
        expect_invalid(buf, x,
                       {f, std::string(nm.strideout) + " = " + std::to_string(x.strideout)});
        // problem 0's output is problem 1's input
        x = ok;
        x.out = buf.a.data() + ok.stridea;
        expect_invalid(buf, x, {f, "overlaps", sp(nm.out), sp(nm.a)});
      }
    }
  }
}

TEMPLATE_TEST_CASE("errors: batch 0 never throws for null pointers or any strides", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  for (const op o : all_ops) {
    INFO(name_of(o));
    CHECK_NOTHROW(call_batched<T>(o, 5, 4, nullptr, 1, 8, nullptr, 1, 4, nullptr, 1, 8, 0));
    // output stride 0 cannot overlap anything when there is no problem
    CHECK_NOTHROW(call_batched<T>(o, 5, 4, nullptr, 3, 0, nullptr, 2, 0, nullptr, 1, 0, 0));
  }
}

TEST_CASE("errors: set_backend and set_cpu_threads reject bad values", "[numeric]") {
  const marg::backend before = marg::requested_backend();
  if (*marg::cuda_unusable_reason() != '\0') {
    INFO("no usable GPU: backend::cuda must be refused");
    CHECK_THROWS_AS(marg::set_backend(marg::backend::cuda), marg::invalid_argument);
    CHECK_THROWS_AS(marg::set_backend(marg::backend::cuda), std::invalid_argument);
    CHECK_THROWS_WITH(marg::set_backend(marg::backend::cuda),
                      Contains("marg::set_backend") && Contains("cuda"));
    CHECK(marg::requested_backend() == before);  // a refused request changes nothing
    CHECK(marg::current_backend() == marg::backend::cpu);
  } else {
    REQUIRE(marg::cuda_compiled());
    marg::set_backend(marg::backend::cuda);
    CHECK(marg::current_backend() == marg::backend::cuda);
    marg::set_backend(before);
  }
  CHECK_THROWS_AS(marg::set_backend(static_cast<marg::backend>(42)), marg::invalid_argument);
  CHECK_THROWS_WITH(marg::set_backend(static_cast<marg::backend>(42)), Contains("b = 42"));
  CHECK(marg::requested_backend() == before);
}

TEST_CASE("errors: cuda_unusable_reason says why the automatic backend is the CPU", "[numeric]") {
  const marg::backend before = marg::requested_backend();
  const std::string reason = marg::cuda_unusable_reason();
  INFO("cuda_unusable_reason: '" << reason << "'");
  CHECK(reason == marg::cuda_unusable_reason());  // probed once: the same answer
  if (!marg::cuda_compiled()) CHECK_THAT(reason, Contains("no CUDA backend"));
  if (marg::cuda_compiled() && marg::device_count() == 0) CHECK_THAT(reason, Contains("device"));
  marg::set_backend(marg::backend::automatic);
  if (reason.empty()) {
    // usable: a device runs this build's kernels, and the automatic backend takes it
    CHECK(marg::device_count() > 0);
    CHECK(marg::current_backend() == marg::backend::cuda);
    CHECK_NOTHROW(marg::set_backend(marg::backend::cuda));
  } else {
    CHECK(marg::current_backend() == marg::backend::cpu);
    // the explicit request names the reason
    CHECK_THROWS_WITH(marg::set_backend(marg::backend::cuda),
                      Contains("marg::set_backend") && Contains(reason));
  }
  marg::set_backend(before);

  const int threads = marg::cpu_threads();
  for (const int bad : {0, -1, INT_MIN}) {
    CHECK_THROWS_AS(marg::set_cpu_threads(bad), marg::invalid_argument);
    CHECK_THROWS_AS(marg::set_cpu_threads(bad), std::invalid_argument);
    CHECK_THROWS_WITH(marg::set_cpu_threads(bad), Contains("marg::set_cpu_threads") &&
                                                      Contains("threads = " + std::to_string(bad)));
  }
  CHECK(marg::cpu_threads() == threads);
}
