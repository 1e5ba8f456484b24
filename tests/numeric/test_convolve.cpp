// Single-problem banded products (convolve, convolve_grad_p, convolve_grad_q)
// against the long double loop, on both backends, float and double.
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "numeric_fixture.hpp"

using namespace marg::test;

namespace {

// sizes: 1, primes, the CPU path's switch from the direct loop to blocks
// (64) and its block sizes (32..256), powers of two and their neighbours,
// 4096; each pair in both orders
const std::pair<int, int> fixed_sizes[] = {
    {1, 1},     {1, 2},      {2, 1},      {1, 300},     {300, 1},   {2, 3},     {3, 2},
    {7, 13},    {13, 7},     {31, 37},    {37, 31},     {63, 64},   {64, 63},   {64, 64},
    {65, 65},   {97, 251},   {251, 97},   {127, 129},   {129, 127}, {255, 257}, {257, 255},
    {293, 293}, {1021, 509}, {509, 1021}, {4096, 4096}, {4096, 17}, {17, 4096}, {4093, 1000}};

}  // namespace

TEMPLATE_TEST_CASE("banded products: fixed sizes against the long double loop", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  int k = 0;
  for (const op o : all_ops) {
    for (const auto& [m, n] : fixed_sizes) {
      problem pr{o, m, n};
      randomize_incs(g, pr);
      pr.mem = k % 2 ? memory::pool : memory::host;
      pr.sa = all_shapes[k % 4];
      pr.sb = all_shapes[(k / 4) % 4];
      pr.with_stream = k % 3 == 0;
      check_problem<T>(g, pr);
      ++k;
    }
  }
}

// the CPU backend's paths (numeric/src/cpu/correlate.hpp, tuning): taps on both
// sides of the direct loop's bound (16 float, 48 double), outputs around the
// register tile (32 float, 16 double values) and its 64-tap chunks, work on
// both sides of the tiles' bounds (la x lout: 2^23 convolutions, 2^19
// gradients), a short output of many taps, and below the direct loop's bound
// both sides of the stack path's (banded_cpu.cpp run_tiny: blocks up to 32
// outputs, axpys up to 128). grad_p (m, n): m outputs of n taps; grad_q:
// n outputs of m taps; convolve: the shorter operand is the taps.
TEMPLATE_TEST_CASE("banded products: both sides of the CPU paths' bounds", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const std::pair<op, std::pair<int, int>> cases[] = {
      {op::convolve, {15, 200}}, {op::convolve, {16, 200}},    {op::convolve, {47, 300}},
      {op::convolve, {48, 300}}, {op::convolve, {16, 16}},     {op::convolve, {17, 16}},
      {op::convolve, {17, 17}},  {op::convolve, {2048, 2048}}, {op::convolve, {2049, 2049}},
      {op::grad_p, {200, 15}},   {op::grad_p, {200, 16}},      {op::grad_p, {300, 47}},
      {op::grad_p, {300, 48}},   {op::grad_p, {31, 100}},      {op::grad_p, {32, 100}},
      {op::grad_p, {33, 100}},   {op::grad_p, {17, 65}},       {op::grad_p, {65, 129}},
      {op::grad_p, {1024, 512}}, {op::grad_p, {1025, 512}},    {op::grad_q, {512, 1024}},
      {op::grad_q, {512, 1025}}, {op::grad_q, {60000, 40}},    {op::grad_p, {40, 60000}},
      {op::convolve, {15, 18}},  {op::convolve, {15, 19}},     {op::grad_p, {32, 15}},
      {op::grad_p, {33, 15}},    {op::convolve, {114, 15}},    {op::convolve, {15, 115}},
      {op::grad_p, {128, 9}},    {op::grad_q, {15, 129}},      {op::convolve, {47, 82}},
      {op::convolve, {83, 47}},  {op::grad_q, {47, 128}},      {op::grad_p, {129, 47}},
      {op::convolve, {1, 1}},    {op::grad_p, {1, 1}},         {op::grad_q, {3, 1}}};
  int k = 0;
  for (const auto& [o, mn] : cases) {
    problem pr{o, mn.first, mn.second};
    pr.sa = all_shapes[k % 4];
    pr.sb = all_shapes[(k / 4) % 4];
    check_problem<T>(g, pr);
    ++k;
  }
}

TEMPLATE_TEST_CASE("banded products: random sizes 1..300 and strides 1..3", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (int k = 0; k < 60; ++k) {
    problem pr{all_ops[k % 3], random_size(g, 300), random_size(g, 300)};
    randomize_incs(g, pr);
    pr.mem = uniform_int(g, 0, 1) ? memory::pool : memory::host;
    pr.sa = all_shapes[uniform_int(g, 0, 3)];
    pr.sb = all_shapes[uniform_int(g, 0, 3)];
    pr.with_stream = uniform_int(g, 0, 1) == 1;
    check_problem<T>(g, pr);
  }
}

TEMPLATE_TEST_CASE("banded products: every combination of strides 1..3", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const std::pair<int, int> sizes[] = {{1, 4}, {5, 3}, {70, 64}, {129, 300}};
  for (const op o : all_ops)
    for (const auto& [m, n] : sizes)
      for (int inca = 1; inca <= 3; ++inca)
        for (int incb = 1; incb <= 3; ++incb)
          for (int incout = 1; incout <= 3; ++incout) {
            problem pr{o, m, n, inca, incb, incout};
            pr.mem = (inca + incb + incout) % 2 ? memory::pool : memory::host;
            check_problem<T>(g, pr);
          }
}

TEMPLATE_TEST_CASE("banded products: the stream overload gives the same bits", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const std::pair<int, int> sizes[] = {{1, 1}, {3, 200}, {200, 3}, {300, 257}};
  for (const op o : all_ops)
    for (const auto& [m, n] : sizes)
      for (const memory mem : {memory::host, memory::pool}) {
        problem pr{o, m, n, 2, 1, 3, mem};
        rng replay = g;  // same inputs for both calls
        const std::vector<T> plain = check_problem<T>(g, pr);
        pr.with_stream = true;
        const std::vector<T> streamed = check_problem<T>(replay, pr);
        INFO(pr.describe());
        CHECK(plain == streamed);
      }
}

TEMPLATE_TEST_CASE("convolve: p and q may be the same buffer (x + x)", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const int m : {1, 2, 61, 300, 1000}) {
    for (const int inc : {1, 3}) {
      CAPTURE(m, inc);
      strided<T> p(memory::host, m, inc, 0, 1), r(memory::host, 2 * m - 1, inc, 0, 1);
      const std::vector<T> vp = random_positive<T>(g, m, shape::bell);
      p.set(0, vp);
      marg::convolve<T>(m, m, p.data(), inc, p.data(), inc, r.data(), inc);
      const error_report rep =
          compare(r.get(0), ref_convolve(widen(vp), widen(vp)), tolerance<T>());
      INFO(rep.describe());
      CHECK(rep.failures == 0);
      CHECK(r.stray_writes() == 0);
    }
  }
}
