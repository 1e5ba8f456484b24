// Standalone correctness sweep of the CUDA backend through the public API:
// every op, float and double, random sizes (1, primes, m < n, m > n, up to
// 70000), strides 1..3, batches with broadcast (stride 0) operands, device and
// host pointers. Each output is compared per element with a long double loop;
// outputs are poisoned (NaN) first. Exit status 1 on any failure.
// `variants` runs the same sizes once more through every kernel variant
// forced (launch_variant), so that a variant the dispatch takes only for some
// shapes is checked on all of them.
// `variants=NAME` forces only that variant (no dispatch run): racecheck on
// one kernel family at a time.
// Usage: check_cuda [quick] [variants | variants=NAME]   (quick: a reduced set for
// compute-sanitizer)
#include <marg/marg.hpp>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "cuda/kernels/cluster.cuh"
#include "cuda/launch.hpp"

namespace {

using marg::detail::banded_op;
using marg::detail::cuda::kernel_variant;
using marg::detail::cuda::variant_name;

int failures = 0;
std::int64_t checked[2] = {0, 0};  // cases compared with the reference: float, double
bool forced_variants = false;      // `variants`: also every variant forced
int only_variant = -1;             // `variants=NAME`: only that one forced (and no dispatch run)
// forced cases that ran, by variant
std::int64_t forced_cases[std::size(marg::detail::cuda::all_variants)] = {};

// one case; `forced` >= 0: that kernel_variant launched directly (device
// pointers only; returns without counting when the variant does not support
// it) with tap split `split` (0: tap_split_of's)
template <class T>
void one_as(banded_op op, int m, int n, int inc_a, int inc_b, int inc_out, int batch, bool bcast_b,
            bool device, std::uint64_t seed, int forced, int align, int split = 0) {
  const auto len = marg::detail::lengths_of(op, m, n);
  // batch strides: gaps of 1, 2, 3 elements, or (align > 0) rounded up to a
  // multiple of align elements (1: back to back)
  const auto stride = [&](std::int64_t e, int gap) {
    return align > 0 ? (e + align - 1) / align * align : e + gap;
  };
  const std::int64_t sa = stride(len.a * inc_a, 1), sb = bcast_b ? 0 : stride(len.b * inc_b, 2),
                     so = stride(len.out * inc_out, 3);
  const std::int64_t ea = sa * batch, eb = bcast_b ? len.b * inc_b : sb * batch, eo = so * batch;
  auto ha = marg::bench::random_positive<T>(ea, seed),
       hb = marg::bench::random_positive<T>(eb, seed + 1);
  std::vector<T> ho(static_cast<std::size_t>(eo));
  std::memset(ho.data(), 0xff, ho.size() * sizeof(T));
  T *a = ha.data(), *b = hb.data(), *o = ho.data();
  if (device) {
    cudaMalloc(&a, ea * sizeof(T));
    cudaMalloc(&b, eb * sizeof(T));
    cudaMalloc(&o, eo * sizeof(T));
    cudaMemcpy(a, ha.data(), ea * sizeof(T), cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), eb * sizeof(T), cudaMemcpyHostToDevice);
    cudaMemcpy(o, ho.data(), eo * sizeof(T), cudaMemcpyHostToDevice);
  }
  const std::int64_t stb = bcast_b ? 0 : sb;
  if (forced >= 0) {
    const auto v = static_cast<kernel_variant>(forced);
    const marg::detail::banded_args<T> args{op,    m,   n, a,       inc_a, sa,   b,
                                            inc_b, stb, o, inc_out, so,    batch};
    const auto c = marg::detail::cuda::correlation_of(args);
    if (!marg::detail::cuda::variant_supports(v, c)) {
      cudaFree(a), cudaFree(b), cudaFree(o);
      return;
    }
    if (split == 0) split = marg::detail::cuda::tap_split_of(v, c);
    marg::detail::cuda::launch_variant(v, c, split, nullptr);
  } else if (op == banded_op::convolve)
    marg::convolve_batched(m, n, a, inc_a, sa, b, inc_b, stb, o, inc_out, so, batch);
  else if (op == banded_op::grad_p)
    marg::convolve_grad_p_batched(m, n, a, inc_a, sa, b, inc_b, stb, o, inc_out, so, batch);
  else
    marg::convolve_grad_q_batched(m, n, a, inc_a, sa, b, inc_b, stb, o, inc_out, so, batch);
  if (device) {
    cudaDeviceSynchronize();
    cudaMemcpy(ho.data(), o, eo * sizeof(T), cudaMemcpyDeviceToHost);
    cudaFree(a), cudaFree(b), cudaFree(o);
  }
  double worst = 0;
  std::int64_t negatives = 0;
  for (int i = 0; i < batch; ++i) {
    std::vector<T> ca(len.a), cb(len.b);
    for (std::int64_t k = 0; k < len.a; ++k) ca[k] = ha[i * sa + k * inc_a];
    for (std::int64_t k = 0; k < len.b; ++k) cb[k] = hb[i * stb + k * inc_b];
    const auto ref = len.out * std::min(len.a, len.b) > (1 << 24)
                         ? marg::bench::reference_parallel(op, m, n, ca.data(), cb.data())
                         : marg::bench::reference_one(op, m, n, ca.data(), cb.data());
    worst = std::max(worst, marg::bench::max_rel_error(ho.data() + i * so, ref.data(), len.out,
                                                       inc_out, &negatives));
  }
  // elements between strides must be untouched (still the NaN poison)
  std::int64_t clobbered = 0;
  for (int i = 0; i < batch; ++i)
    for (std::int64_t k = 0; k < so; ++k)
      if ((k % inc_out != 0 || k >= len.out * inc_out) && ho[i * so + k] == ho[i * so + k])
        ++clobbered;
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  const bool ok = worst <= tol && negatives == 0 && clobbered == 0;
  if (!ok) ++failures;
  ++checked[sizeof(T) == 8];
  if (forced >= 0) ++forced_cases[forced];
  if (!ok || m * std::int64_t{n} * batch > (1 << 26))
    std::printf(
        "%s %s %s/%d op=%d m=%d n=%d inc=%d,%d,%d batch=%d bcast=%d dev=%d seed=%llu: "
        "max_rel_err=%.3g neg=%lld clobbered=%lld\n",
        ok ? "ok  " : "FAIL", sizeof(T) == 4 ? "float " : "double",
        forced < 0 ? "dispatch" : variant_name(static_cast<kernel_variant>(forced)), split,
        static_cast<int>(op), m, n, inc_a, inc_b, inc_out, batch, bcast_b, device,
        (unsigned long long)seed, worst, (long long)negatives, (long long)clobbered);
}

// through the dispatch, then (`variants`) through every variant forced
template <class T>
void one(banded_op op, int m, int n, int inc_a, int inc_b, int inc_out, int batch, bool bcast_b,
         bool device, std::uint64_t seed, int align = 0) {
  if (only_variant < 0)
    one_as<T>(op, m, n, inc_a, inc_b, inc_out, batch, bcast_b, device, seed, -1, align);
  if (!forced_variants) return;
  for (const kernel_variant v : marg::detail::cuda::all_variants) {
    // the largest problems only through the variants made for them (time)
    const bool huge = std::int64_t{m} * n * batch > 100000000;
    if (huge && v != kernel_variant::large && v != kernel_variant::mma) continue;
    if (only_variant >= 0 && static_cast<int>(v) != only_variant) continue;
    one_as<T>(op, m, n, inc_a, inc_b, inc_out, batch, bcast_b, true, seed, static_cast<int>(v),
              align);
    // the largest split too, whatever the planner's: the cluster sum on
    // Hopper, the sum through scratch elsewhere
    namespace cu = marg::detail::cuda;
    if (cu::entry_of<T>(v).splits_taps && !huge)
      one_as<T>(op, m, n, inc_a, inc_b, inc_out, batch, bcast_b, true, seed, static_cast<int>(v),
                align, cu::largest_split(cu::current_device_features()));
  }
}

template <class T>
void sweep(bool quick) {
  const banded_op ops[] = {banded_op::convolve, banded_op::grad_p, banded_op::grad_q};
  std::mt19937_64 rng(2024);
  const int fixed[][2] = {{1, 1},    {1, 7},    {7, 1},       {2, 3},      {31, 33},
                          {127, 64}, {64, 127}, {257, 1000},  {1000, 257}, {2048, 2048},
                          {4099, 1}, {1, 4099}, {5000, 4999}, {3, 70000},  {70000, 3}};
  for (const banded_op op : ops) {
    for (const auto& s : fixed) {
      if (quick && std::int64_t{s[0]} * s[1] > 1000000) continue;  // keeps sanitizer runs short
      one<T>(op, s[0], s[1], 1, 1, 1, 1, false, true, rng());
      one<T>(op, s[0], s[1], 2, 3, 2, 1, false, rng() % 2 == 0, rng());
    }
    const int random_cases = quick ? 10 : 60;
    for (int i = 0; i < random_cases; ++i) {
      const int cap = quick ? 1000 : 5000;
      const int m = 1 + static_cast<int>(rng() % cap), n = 1 + static_cast<int>(rng() % cap);
      one<T>(op, m, n, 1 + rng() % 3, 1 + rng() % 3, 1 + rng() % 3, 1, false, true, rng());
    }
    // batches: small problems, broadcast operand, odd strides
    one<T>(op, 64, 64, 1, 1, 1, quick ? 100 : 10000, false, true, rng());
    one<T>(op, 64, 64, 1, 1, 1, quick ? 100 : 10000, true, true, rng());
    one<T>(op, 13, 5, 2, 1, 3, 1000, true, false, rng());
    one<T>(op, 512, 300, 1, 2, 1, quick ? 10 : 300, false, true, rng());
    one<T>(op, 1, 1, 1, 1, 1, quick ? 700 : 70000, false, true, rng());
    // lane-per-problem sizes: a last group part full, strides, broadcast
    one<T>(op, 37, 100, 2, 3, 2, quick ? 70 : 2100, false, true, rng());
    one<T>(op, 200, 9, 1, 1, 1, quick ? 40 : 4099, rng() % 2 == 0, true, rng());
    one<T>(op, 64, 40, 1, 1, 1, quick ? 37 : 1001, false, true, rng());  // x of a group not V-runs
    // 16-byte batch strides (the tensor-copy staging): back to back (a
    // gradient's x as one run), rows rounded up to 4 elements (taps of 50: a
    // double convolution's taps box starts at column -2, a float one would
    // start inside a 16-byte unit and takes the bulk kernel), part-full
    // groups; the first with two groups in most blocks (group 1 staged after
    // group 0)
    one<T>(op, 64, 64, 1, 1, 1, sizeof(T) == 4 ? 8500 : 4300, false, true, rng(), 1);
    one<T>(op, 64, 40, 1, 1, 1, quick ? 37 : 1001, false, true, rng(), 1);
    one<T>(op, 64, 64, 1, 1, 1, quick ? 70 : 4099, false, true, rng(), 4);
    one<T>(op, 50, 61, 1, 1, 1, quick ? 45 : 2050, false, true, rng(), 4);
    // few output blocks on the run path (grad_q: 32, 40, 12 outputs; the
    // float tensor-copy kernel takes 2 and 3 blocks)
    one<T>(op, 128, 32, 1, 1, 1, quick ? 70 : 8200, false, true, rng(), 1);
    one<T>(op, 100, 40, 1, 1, 1, quick ? 45 : 1001, false, true, rng(), 1);
    one<T>(op, 64, 12, 1, 1, 1, quick ? 33 : 999, false, true, rng(), 1);
    // batches of 512-size problems (the pairs kernel's shapes; kept from the
    // batched-wgmma trial, docs/kernel-notes.md): 1024 outputs, 1000
    // taps, strides and a broadcast operand
    one<T>(op, 512, 512, 1, 1, 1, quick ? 9 : 300, false, true, rng());
    one<T>(op, 512, 513, 2, 3, 2, quick ? 5 : 40, true, true, rng());
    one<T>(op, 1000, 25, 1, 1, 1, quick ? 5 : 50, false, true, rng());
    // batched full convolutions whose band cuts DMMA's tiles at odd places
    // (its warps' step ranges): equal odd lengths, and shorter taps with
    // strides and a broadcast operand
    one<T>(op, 257, 257, 1, 1, 1, quick ? 7 : 200, false, true, rng());
    one<T>(op, 450, 300, 3, 1, 2, quick ? 5 : 60, true, true, rng());
    // inside the fitted model of float convolutions (launch_banded.cu,
    // conv_model): 3000 problems of 40 taps x 600 outputs go to warp, of 96
    // x 600 to lane, of 100 x 500 to pairs
    one<T>(op, 561, 40, 1, 1, 1, quick ? 30 : 3000, false, true, rng());
    one<T>(op, 505, 96, 1, 1, 1, quick ? 30 : 3000, false, true, rng());
    one<T>(op, 401, 100, 1, 1, 1, quick ? 30 : 3000, false, true, rng());
    // 1024 float convolutions of 264 taps x 1010 outputs (pairs does
    // not fit) go to mma at tap split 1
    one<T>(op, 747, 264, 1, 1, 1, quick ? 30 : 1024, false, true, rng());
    // the audited batches (launch_banded.cu, audited_batch): warp for
    // few taps and long outputs, pairs up to 1023 outputs, mma for long
    // outputs in fewer problems
    one<T>(op, 1998, 3, 1, 1, 1, quick ? 30 : 1000, false, true, rng());
    one<T>(op, 551, 50, 1, 1, 1, quick ? 30 : 500, false, true, rng());
    one<T>(op, 19971, 30, 1, 1, 1, quick ? 3 : 20, false, true, rng());
    one<T>(op, 4701, 300, 1, 1, 1, quick ? 3 : 20, false, true, rng());
    // gradients and double batches of few mid tiles and little
    // work take the small tile (launch_banded.cu, underfilled)
    one<T>(op, 1500, 100, 2, 1, 3, quick ? 4 : 9, false, true, rng());
    // few problems of many taps and outputs below half a wave of
    // large tiles go to mid (launch_banded.cu, large_wave)
    one<T>(op, 12000, 1100, 1, 1, 1, quick ? 2 : 3, false, true, rng());
    // the DMMA big tile's modelled split, 3 and 6 (clusters of
    // three and six blocks; kernels/mma_f64.cuh, mma_f64_split)
    one<T>(op, 12000, 1300, 1, 1, 1, quick ? 2 : 3, false, true, rng());
    one<T>(op, 4000, 2800, 1, 1, 1, 1, false, true, rng());
    if (!quick) one<T>(op, 65536, 65536, 1, 1, 1, 1, false, true, rng());
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "quick")
      quick = true;
    else if (arg == "variants")
      forced_variants = true;
    else if (arg.rfind("variants=", 0) == 0) {
      forced_variants = true;
      for (const kernel_variant v : marg::detail::cuda::all_variants)
        if (arg.substr(9) == variant_name(v)) only_variant = static_cast<int>(v);
      if (only_variant < 0) {
        std::fprintf(stderr, "check_cuda: unknown variant in '%s'\n", arg.c_str());
        return 2;
      }
    } else {
      std::fprintf(
          stderr,
          "usage: check_cuda [quick] [variants | variants=NAME (warp, small, mid, large, mma, "
          "lane, pairs, wgmma, wide)]\n");
      return 2;
    }
  }
  if (*marg::cuda_unusable_reason() != '\0') {
    std::printf("MARG_SKIP_NO_GPU: %s\n", marg::cuda_unusable_reason());
    return 0;
  }
  marg::set_backend(marg::backend::cuda);
  const auto& features = marg::detail::cuda::current_device_features();
  std::printf("check_cuda: compute capability %d.%d, %s\n", features.capability / 10,
              features.capability % 10,
              features.hopper ? "every variant (Hopper)"
              : marg::detail::cuda::generic_forced()
                  ? "generic path: the Hopper-only variants off (MARG_CUDA_GENERIC)"
                  : "generic path (no Hopper features)");
  sweep<float>(quick);
  sweep<double>(quick);
  // the count shows how many cases ran: a variant skips the cases it does
  // not support, and a sweep that ran none would otherwise pass silently
  std::printf("check_cuda: %d failure(s) in %lld float and %lld double cases\n", failures,
              static_cast<long long>(checked[0]), static_cast<long long>(checked[1]));
  if (forced_variants) {
    std::printf("check_cuda: forced cases by variant:");
    for (const kernel_variant v : marg::detail::cuda::all_variants)
      std::printf(" %s %lld", variant_name(v),
                  static_cast<long long>(forced_cases[static_cast<int>(v)]));
    std::printf("\n");
  }
  // without Hopper features the variants that need them must report every
  // shape unsupported (variant_supports), so none of them ran
  if (!features.hopper && forced_cases[static_cast<int>(kernel_variant::lane)] +
                                  forced_cases[static_cast<int>(kernel_variant::wgmma)] >
                              0) {
    std::printf("check_cuda: FAIL: a Hopper-only variant ran without Hopper features\n");
    return 1;
  }
  if (checked[0] + checked[1] == 0) {
    std::printf("check_cuda: no case ran\n");
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
