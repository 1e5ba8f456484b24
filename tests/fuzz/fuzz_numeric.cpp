// libFuzzer target: the numeric entry points (convolve, convolve_grad_p,
// convolve_grad_q, single and batched, float and double) with random m, n,
// element strides, batch strides, batch counts and values (NaN, +-inf,
// negatives, subnormals, huge), and with one argument made bad.
//
// Property: a call with a bad argument throws a std::invalid_argument and
// writes nothing. A valid call does not throw, writes nothing outside its
// outputs, leaves its inputs alone, and every output element of a problem
// whose inputs are finite matches a long double loop within the contract
// (relative 1e-5 float / 1e-12 double of the sum of |terms|, see
// fuzz_common.hpp). Outputs of problems holding NaN or inf are not checked
// (garbage in, garbage out), but other problems of the batch are.
// Operands are exact-size std::vectors so that ASan sees any access beyond them.
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/error.hpp>

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "../common/reference.hpp"
#include "fuzz_common.hpp"

namespace {

using namespace marg::fuzz;

// the products and their operand lengths, shared with the Catch2 suites
using marg::test::lengths;
using marg::test::lengths_of;
using marg::test::op;
// element i of the product: value and sum of |terms|
template <class T>
void reference_at(op o, const std::vector<real>& a, const std::vector<real>& b, std::int64_t i,
                  real& value, real& scale, int& terms) {
  value = scale = 0;
  terms = 0;
  const auto la = static_cast<std::int64_t>(a.size()), lb = static_cast<std::int64_t>(b.size());
  if (o == op::convolve) {
    for (std::int64_t j = std::max<std::int64_t>(0, i - lb + 1); j <= std::min(i, la - 1); ++j) {
      value += a[j] * b[i - j];
      scale += std::fabs(a[j] * b[i - j]);
      ++terms;
    }
  } else {  // out_i = sum_k b_k a_{i+k}
    for (std::int64_t k = 0; k < lb && i + k < la; ++k) {
      value += b[k] * a[i + k];
      scale += std::fabs(b[k] * a[i + k]);
      ++terms;
    }
  }
}

template <class T>
void call(op o, int m, int n, const T* a, int inca, std::int64_t sa, const T* b, int incb,
          std::int64_t sb, T* out, int incout, std::int64_t sout, int batch, bool batched) {
  if (!batched) {
    switch (o) {
      case op::convolve:
        return marg::convolve<T>(m, n, a, inca, b, incb, out, incout);
      case op::grad_p:
        return marg::convolve_grad_p<T>(m, n, a, inca, b, incb, out, incout);
      case op::grad_q:
        return marg::convolve_grad_q<T>(m, n, a, inca, b, incb, out, incout);
    }
  }
  switch (o) {
    case op::convolve:
      return marg::convolve_batched<T>(m, n, a, inca, sa, b, incb, sb, out, incout, sout, batch);
    case op::grad_p:
      return marg::convolve_grad_p_batched<T>(m, n, a, inca, sa, b, incb, sb, out, incout, sout,
                                              batch);
    case op::grad_q:
      return marg::convolve_grad_q_batched<T>(m, n, a, inca, sa, b, incb, sb, out, incout, sout,
                                              batch);
  }
}

std::int64_t extent(std::int64_t len, int inc, std::int64_t stride, int batch) {
  return batch == 0 ? 1 : (batch - 1) * stride + (len - 1) * inc + 1;
}

template <class T>
T sentinel() {
  return T(-12345.0);
}

template <class T>
void run(FuzzedDataProvider& d) {
  const auto o = static_cast<op>(d.ConsumeIntegralInRange<int>(0, 2));
  const bool batched = d.ConsumeBool();
  // min(m, n) <= 150 keeps the worst-case float error of one element below 1e-5
  int m = d.ConsumeIntegralInRange<int>(1, 300), n = d.ConsumeIntegralInRange<int>(1, 150);
  if (d.ConsumeBool()) std::swap(m, n);
  int inca = d.ConsumeIntegralInRange<int>(1, 4), incb = d.ConsumeIntegralInRange<int>(1, 4),
      incout = d.ConsumeIntegralInRange<int>(1, 4);
  const int batch = batched ? d.ConsumeIntegralInRange<int>(0, 5) : 1;
  const lengths len = lengths_of(o, m, n);
  // batch strides: 0 (inputs: one operand for all), tight, or with a gap
  auto pick_stride = [&](std::int64_t l, int inc, bool input) -> std::int64_t {
    const int k = d.ConsumeIntegralInRange<int>(input ? 0 : 1, 2);
    const std::int64_t tight = (l - 1) * inc + 1;
    return k == 0 ? 0 : tight + (k == 2 ? d.ConsumeIntegralInRange<int>(1, 3) : 0);
  };
  std::int64_t sa = batched ? pick_stride(len.a, inca, true) : 0;
  std::int64_t sb = batched ? pick_stride(len.b, incb, true) : 0;
  std::int64_t sout = batched ? pick_stride(len.out, incout, false) : 0;
  const bool allow_bad_values = d.ConsumeBool();
  std::vector<T> a(extent(len.a, inca, sa, batch)), b(extent(len.b, incb, sb, batch));
  for (auto& v : a) v = draw_value<T>(d, allow_bad_values);
  for (auto& v : b) v = draw_value<T>(d, allow_bad_values);
  std::vector<T> out(extent(len.out, incout, sout, batch), sentinel<T>());
  const std::vector<T> a0 = a, b0 = b;

  // one bad argument (or none)
  const int bad = d.ConsumeIntegralInRange<int>(0, 12);
  int cm = m, cn = n, cbatch = batch;
  const T *pa = a.data(), *pb = b.data();
  T* pout = out.data();
  bool expect_throw = true;
  switch (bad) {
    case 1:
      cm = -d.ConsumeIntegralInRange<int>(0, INT_MAX);
      break;
    case 2:  // m + n - 1 overflows int: with the real buffers, any access would be out of bounds
      cm = INT_MAX - d.ConsumeIntegralInRange<int>(0, 100);
      cn = d.ConsumeIntegralInRange<int>(cm == INT_MAX ? 2 : 102, INT_MAX);
      break;
    case 3:
      inca = -d.ConsumeIntegralInRange<int>(0, 4);
      break;
    case 4:
      incout = -d.ConsumeIntegralInRange<int>(0, 4);
      break;
    case 5:
      pb = nullptr;
      expect_throw = batch > 0;  // batch 0 reads nothing: null is allowed
      break;
    case 6:
      expect_throw = batch > 0;
      pout = const_cast<T*>(pa) + d.ConsumeIntegralInRange<std::int64_t>(0, a.size() - 1);
      break;
    case 7:
      if (!batched || batch == 0) {
        expect_throw = false;
        break;
      }
      cbatch = -d.ConsumeIntegralInRange<int>(1, INT_MAX);
      break;
    case 8:  // a batch stride whose extent passes the address space
      if (!batched || batch < 2) {
        expect_throw = false;
        break;
      }
      sa = d.ConsumeIntegralInRange<std::int64_t>(INT64_MAX / 4, INT64_MAX);
      break;
    case 9:  // overlapping outputs
      if (!batched || batch < 2) {
        expect_throw = false;
        break;
      }
      sout = d.ConsumeIntegralInRange<std::int64_t>(0, (len.out - 1) * incout);
      break;
    case 10:
      if (!batched || batch == 0) {
        expect_throw = false;
        break;
      }
      sb = -d.ConsumeIntegralInRange<std::int64_t>(1, INT64_MAX);
      break;
    default:
      expect_throw = false;
  }
  if (expect_throw) {
    try {
      call<T>(o, cm, cn, pa, inca, sa, pb, incb, sb, pout, incout, sout, cbatch, batched);
    } catch (const std::invalid_argument&) {
      // bitwise: nothing written anywhere
      if (std::memcmp(a.data(), a0.data(), a.size() * sizeof(T)) != 0)
        finding("a rejected call wrote into an input");
      for (const T v : out)
        if (!(v == sentinel<T>())) finding("a rejected call wrote into its output");
      return;
    } catch (...) {
      finding("bad argument: an exception not derived from std::invalid_argument");
    }
    finding("a bad argument was accepted");
  }
  try {
    call<T>(o, m, n, pa, inca, sa, pb, incb, sb, pout, incout, sout, batch, batched);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    finding("a valid call threw");
  }
  if (std::memcmp(a.data(), a0.data(), a.size() * sizeof(T)) != 0 ||
      std::memcmp(b.data(), b0.data(), b.size() * sizeof(T)) != 0)
    finding("an input changed");
  std::vector<char> used(out.size(), 0);
  for (int k = 0; k < batch; ++k) {
    std::vector<real> va(len.a), vb(len.b);
    bool finite = true;
    for (std::int64_t i = 0; i < len.a; ++i) {
      va[i] = a[k * sa + i * inca];
      finite = finite && std::isfinite(va[i]);
    }
    for (std::int64_t i = 0; i < len.b; ++i) {
      vb[i] = b[k * sb + i * incb];
      finite = finite && std::isfinite(vb[i]);
    }
    for (std::int64_t i = 0; i < len.out; ++i) {
      const std::int64_t at = k * sout + i * incout;
      used[at] = 1;
      if (!finite) continue;
      real want, scale;
      int terms;
      reference_at<T>(o, va, vb, i, want, scale, terms);
      if (!within_bound<T>(out[at], want, scale, terms))
        finding("output outside the bound", out[at], want);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!used[i] && !(out[i] == sentinel<T>())) finding("write outside the outputs");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider d(data, size);
  if (d.ConsumeBool())
    run<double>(d);
  else
    run<float>(d);
  return 0;
}
