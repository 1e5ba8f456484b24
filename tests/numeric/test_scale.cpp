// GPU-scale cases: sizes up to 5000, m = n = 65536 (sampled against the long
// double loop: the full reference would be 4.3e9 terms), batches of up to
// 10000 small problems, odd strides, all three products. The CPU backend runs
// smaller counts of the same cases to keep CI fast.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include "numeric_fixture.hpp"

using namespace marg::test;

namespace {

template <class C>
constexpr bool on_gpu() {
  return C::b == marg::backend::cuda;
}

}  // namespace

TEMPLATE_TEST_CASE("scale: random sizes 1..5000", "[numeric][scale]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int per_op = on_gpu<TestType>() ? 5 : 1;
  for (const op o : all_ops)
    for (int k = 0; k < per_op; ++k) {
      problem pr{o, random_size(g, 5000), random_size(g, 5000)};
      randomize_incs(g, pr);
      pr.mem = k % 2 ? memory::pool : memory::host;
      pr.sa = all_shapes[uniform_int(g, 0, 3)];
      pr.sb = all_shapes[uniform_int(g, 0, 3)];
      check_problem<T>(g, pr);
    }
}

namespace {

// One single product of m x n with unit strides unless `strided_ops`
// (the fast single-problem variants need unit steps), checked at its first
// and last 100 elements and 2000 random ones against the long double loop;
// every element must be written, positive and finite.
template <class T>
void check_sampled(rng& g, op o, int m, int n, bool strided_ops) {
  const lengths len = lengths_of(o, m, n);
  problem pr{o, m, n};
  if (strided_ops) randomize_incs(g, pr);
  pr.mem = o == op::grad_p ? memory::host : memory::pool;
  INFO(pr.describe());
  strided<T> a(pr.mem, len.a, pr.inca, 0, 1), b(pr.mem, len.b, pr.incb, 0, 1);
  strided<T> out(pr.mem, len.out, pr.incout, 0, 1);
  const std::vector<T> va =
      random_positive<T>(g, len.a, o == op::convolve ? shape::bell : shape::uniform);
  const std::vector<T> vb = random_positive<T>(g, len.b, shape::scattered);
  a.set(0, va);
  b.set(0, vb);
  call<T>(o, m, n, a.data(), a.inc(), b.data(), b.inc(), out.data(), out.inc());
  const std::vector<T> got = out.get(0);
  const rvec ra = widen(va), rb = widen(vb);
  error_report rep;
  for (const std::int64_t i : sample_indices(g, len.out, 100, 2000))
    rep.add(i, got[i], reference_at(o, ra, rb, i),
            relative_error(got[i], reference_at(o, ra, rb, i)), tolerance<T>());
  INFO("sampled: " << rep.describe());
  CHECK(rep.failures == 0);
  const auto bad = std::count_if(got.begin(), got.end(), [](T x) { return !(x > 0); });
  CHECK(bad == 0);
  CHECK(out.stray_writes() == 0);
}

/// One product of check_sampled's: convolve has taps min(m, n) and m + n - 1
/// outputs; grad_p m outputs and n taps; grad_q n outputs and m taps.
struct shape_case {
  op o;
  int m, n;
};

/// check_sampled with unit strides for every case.
template <class T>
void check_sampled_cases(rng& g, const std::vector<shape_case>& cases) {
  for (const shape_case& sc : cases) check_sampled<T>(g, sc.o, sc.m, sc.n, false);
}

}  // namespace

TEMPLATE_TEST_CASE("scale: m = n = 65536 sampled against the long double loop", "[numeric][scale]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  // odd strides where they are cheap
  for (const op o : all_ops) check_sampled<T>(g, o, 65536, 65536, on_gpu<TestType>());
}

// Single problems of more than 2048 taps, one per rule of the dispatch
// on the CUDA backend (docs/kernel-notes.md): wgmma from 1.15e8 band
// multiply-adds (1.6e8 for square gradients), the wide tile at 2049-4096
// float taps, DMMA from 2.6e7 / 3e7 in double, and the tiles of
// long_taps_tile. The CPU backend runs the same products.
TEMPLATE_TEST_CASE("scale: single problems of 2049-13312 taps sampled against the long double loop",
                   "[numeric][scale]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const std::vector<shape_case> cases =
      std::is_same_v<T, float>
          ? std::vector<shape_case>{{op::convolve, 12288, 12288},  // wgmma
                                    {op::grad_p, 13312, 13312},    // wgmma, square gradient
                                    {op::convolve, 3072, 3072},    // wide
                                    {op::grad_p, 4096, 3072},      // wide
                                    {op::convolve, 23393, 4608},   // mid
                                    {op::convolve, 6144, 6144},    // small
                                    {op::grad_q, 8192, 8192},      // large
                                    {op::convolve, 3072, 29697}}   // large
          : std::vector<shape_case>{{op::grad_p, 5376, 5376},      // DMMA
                                    {op::convolve, 5632, 5632},    // DMMA
                                    {op::grad_q, 3328, 8000},      // DMMA
                                    {op::convolve, 3072, 5121},    // mid
                                    {op::grad_p, 4000, 4608}};     // mid
  check_sampled_cases<T>(g, cases);
}

TEMPLATE_TEST_CASE("scale: batches of 1..10000 small problems", "[numeric][scale]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int largest = on_gpu<TestType>() ? 10000 : 2000;
  const layout inputs[] = {layout::broadcast, layout::tight, layout::gapped, layout::interleaved};
  int k = 0;
  for (const op o : all_ops) {
    for (const int batch : {1, largest, static_cast<int>(uniform_int(g, 2, largest))}) {
      batch_problem pr{o, random_size(g, 64), random_size(g, 64), batch};
      randomize_incs(g, pr);
      pr.la = inputs[k % 4];
      pr.lb = inputs[(k + 1 + k / 4) % 4];
      pr.lout = k % 2 ? layout::gapped : layout::tight;
      pr.mem = k % 3 == 0 ? memory::host : memory::pool;
      check_batch<T>(g, pr);
      ++k;
    }
  }
  // a few hundred mid-sized problems (the "pairs of 512" regime)
  for (const op o : all_ops) {
    batch_problem pr{o, 512, 512, on_gpu<TestType>() ? 300 : 30};
    pr.inca = 3;
    pr.lb = layout::broadcast;
    pr.mem = memory::pool;
    check_batch<T>(g, pr);
  }
  // batched full convolutions whose band cuts DMMA's 128-output tiles (on
  // the GPU in double: the warps' step ranges, docs/kernel-notes.md):
  // equal odd lengths, and taps shorter than x with a gapped, broadcast and
  // strided layout
  for (const auto& [m, n, batch, la, lb] :
       {std::tuple{257, 257, 150, layout::tight, layout::tight},
        std::tuple{450, 300, 200, layout::gapped, layout::broadcast}}) {
    batch_problem pr{op::convolve, m, n, on_gpu<TestType>() ? batch : 12};
    pr.incb = 2;
    pr.la = la;
    pr.lb = lb;
    pr.lout = layout::gapped;
    pr.mem = memory::pool;
    check_batch<T>(g, pr);
  }
}

// Single problems of at most 2048 taps and more than 32768 outputs, one per
// rule of the dispatch on the CUDA backend (docs/kernel-notes.md):
// the tiles of long_out_tile, the wide tile beyond 32768 outputs, mma_tf32
// and DMMA at few taps, wgmma from 1024 taps. The CPU backend runs the same
// products.
TEMPLATE_TEST_CASE(
    "scale: single problems of 33000-1048576 outputs sampled against the long "
    "double loop",
    "[numeric][scale]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const std::vector<shape_case> cases =
      std::is_same_v<T, float> ? std::vector<shape_case>{{op::convolve, 262129, 16},   // large
                                                         {op::grad_p, 40000, 1024},    // wide
                                                         {op::convolve, 499905, 96},   // mma_tf32
                                                         {op::grad_p, 1048576, 1024},  // wgmma
                                                         {op::grad_q, 64, 65536}}      // small
                               : std::vector<shape_case>{{op::convolve, 65409, 128},   // mid
                                                         {op::grad_p, 131072, 256},    // DMMA
                                                         {op::grad_p, 40000, 512},     // wide
                                                         {op::convolve, 262113, 32},   // DMMA
                                                         {op::convolve, 199809, 192},  // DMMA
                                                         {op::grad_q, 8, 1048576}};    // large
  check_sampled_cases<T>(g, cases);
}
