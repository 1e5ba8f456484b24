// Batched banded products: batch 0, 1 and more, every operand layout
// (broadcast stride 0, tight, gapped, interleaved), against the long double loop.
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "numeric_fixture.hpp"

using namespace marg::test;

TEMPLATE_TEST_CASE("batched: batch 0 writes nothing", "[numeric]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  for (const op o : all_ops) {
    for (const memory mem : {memory::host, memory::pool}) {
      rng g(1);
      check_batch<T>(g, {o, 5, 7, 0, 1, 1, 1, layout::tight, layout::tight, layout::tight, mem});
    }
  }
}

TEMPLATE_TEST_CASE("batched: batch 1", "[numeric]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (int k = 0; k < 24; ++k) {
    batch_problem pr{all_ops[k % 3], random_size(g, 300), random_size(g, 300), 1};
    randomize_incs(g, pr);
    pr.la = k % 2 ? layout::broadcast : layout::gapped;
    pr.lb = k % 4 < 2 ? layout::tight : layout::broadcast;
    pr.mem = k % 3 == 1 ? memory::pool : memory::host;
    check_batch<T>(g, pr);
  }
}

// every layout at random sizes and at few taps (below 16 float, 48 double)
// and at most 110 outputs: the CPU's stack path (banded_cpu.cpp run_tiny)
// reads every layout itself
TEMPLATE_TEST_CASE("batched: every layout of inputs and outputs", "[numeric]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const layout inputs[] = {layout::broadcast, layout::tight, layout::gapped, layout::interleaved};
  int k = 0;
  for (const op o : all_ops)
    for (const layout la : inputs)
      for (const layout lb : inputs)
        for (const layout lout : {layout::tight, layout::gapped}) {
          const int taps = static_cast<int>(uniform_int(g, 1, 15));
          const int other = static_cast<int>(uniform_int(g, 1, 110));
          // the taps: convolve's shorter operand, grad_p's n, grad_q's m
          const bool taps_first = o == op::grad_q || (o == op::convolve && k % 2 == 0);
          const std::pair<int, int> sizes[] = {
              {random_size(g, 90), random_size(g, 90)},
              {taps_first ? taps : other, taps_first ? other : taps}};
          for (const auto& [m, n] : sizes) {
            batch_problem pr{o, m, n, static_cast<int>(uniform_int(g, 2, 9))};
            randomize_incs(g, pr);
            pr.la = la;
            pr.lb = lb;
            pr.lout = lout;
            pr.mem = k++ % 2 ? memory::pool : memory::host;
            check_batch<T>(g, pr);
          }
        }
}

// batches of few-tap problems past the work bound that splits problems over
// threads (the stack path's parallel_for), one with strides and gaps
TEMPLATE_TEST_CASE("batched: thousands of few-tap problems", "[numeric]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const op o : all_ops) check_batch<T>(g, {o, 6, 6, 3000});
  check_batch<T>(g, {op::convolve, 7, 100, 3000, 2, 1, 3, layout::gapped, layout::interleaved,
                     layout::gapped, memory::pool});
}

TEMPLATE_TEST_CASE("batched: random sizes 1..300 with batches 2..40 and strides 1..3", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const layout inputs[] = {layout::broadcast, layout::tight, layout::gapped, layout::interleaved};
  for (int k = 0; k < 30; ++k) {
    batch_problem pr{all_ops[k % 3], random_size(g, 300), random_size(g, 300),
                     static_cast<int>(uniform_int(g, 2, 40))};
    randomize_incs(g, pr);
    pr.la = inputs[uniform_int(g, 0, 3)];
    pr.lb = inputs[uniform_int(g, 0, 3)];
    pr.lout = uniform_int(g, 0, 1) ? layout::gapped : layout::tight;
    pr.mem = uniform_int(g, 0, 1) ? memory::pool : memory::host;
    check_batch<T>(g, pr);
  }
}

// Batches that fill the GPU with rows too long for the group-slab lane kernels
// go to the long-row lane kernel (numeric/src/cuda/kernels/lane_long.cuh:
// staging in chunks from both row ends, each counted on its own barrier):
// full convolutions of 300 and 300 (tight rows: 16-byte copies; gapped: one
// element per copy), a last group of one problem, and gradients of 100
// outputs from 300 taps. Float only (double does not fit its shared memory).
TEMPLATE_TEST_CASE("batched: long rows in batches that fill the GPU", "[numeric]",
                   marg::test::cuda_f) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  check_batch<T>(g, {op::convolve, 300, 300, 4000});
  check_batch<T>(g, {op::convolve, 300, 300, 4001, 1, 1, 1, layout::gapped, layout::gapped,
                     layout::gapped, memory::pool});
  check_batch<T>(g, {op::grad_p, 100, 300, 4000});
}

// the dispatch rules (launch_banded.cu): on an H100 float gradients of
// ~800 outputs in hundreds of problems go to the 3xTF32 kernel, double batches
// of few taps and long outputs to the large tile
TEMPLATE_TEST_CASE("batched: gradients of ~800 outputs, and few taps with long outputs",
                   "[numeric]", marg::test::cuda_f, marg::test::cuda_d) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const layout gap = layout::gapped;
  if constexpr (sizeof(T) == 4) {
    check_batch<T>(g, {op::grad_p, 800, 300, 300});
    check_batch<T>(g, {op::grad_p, 1000, 700, 301, 1, 1, 1, gap, gap, gap, memory::pool});
  } else {
    check_batch<T>(g, {op::grad_p, 8192, 16, 24});
    check_batch<T>(g, {op::convolve, 7000, 8, 56, 1, 1, 1, gap, gap, gap, memory::pool});
  }
}

// the pairs_grad rule (launch_banded.cu, batch_audit::pairs_grad): float gradients
// of more than 256 taps and 257-512 outputs from 340 problems go to the
// paired-block kernel (pairs.cuh) where its layout fits; 513 outputs, just
// past the bound, keep the tiles
TEMPLATE_TEST_CASE("batched: gradients of long taps and a few hundred outputs", "[numeric]",
                   marg::test::cuda_f) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const layout gap = layout::gapped;
  check_batch<T>(g, {op::grad_p, 300, 600, 400});
  check_batch<T>(g, {op::grad_p, 512, 280, 340, 1, 1, 1, gap, gap, gap, memory::pool});
  check_batch<T>(g, {op::grad_p, 513, 280, 340, 1, 1, 1, gap, gap, gap, memory::pool});
  check_batch<T>(g, {op::grad_q, 450, 400, 520});
}

// the big_grad_batch rule (launch_banded.cu, batch_audit::big_grad_batch): float
// gradients of more than 256 taps and 513-767 outputs go to the paired-block
// kernel from 1500 problems and to lane per problem from 3000 where they fit;
// 1499 problems keep the tiles
TEMPLATE_TEST_CASE("batched: gradients of long taps and 513-767 outputs in many problems",
                   "[numeric]", marg::test::cuda_f) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const layout gap = layout::gapped;
  check_batch<T>(g, {op::grad_p, 520, 300, 1500});
  check_batch<T>(g, {op::grad_p, 520, 300, 1499, 1, 1, 1, gap, gap, gap, memory::pool});
  check_batch<T>(g, {op::grad_q, 270, 700, 3000});
  check_batch<T>(g, {op::grad_p, 767, 260, 3001, 1, 1, 1, gap, gap, gap, memory::pool});
}
