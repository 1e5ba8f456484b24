// Tensor-core variant of the batched correlation for float: 3xTF32 on
// mma.sync (kernels/mma_tf32.cuh), three block shapes chosen by outputs per
// problem.
#include <cstdint>

#include "../cuda_check.hpp"
#include "../launch.hpp"
#include "mma_tf32.cuh"

namespace marg::detail::cuda {
namespace {

/// Block shapes, the fastest of 12 candidates per size class (bench/notes/mma_tf32.md,
/// round 2, H200): 1024 outputs per block with 256-tap stages for large
/// problems (conv 65536: 216 us), 512 outputs with one tile per warp for
/// mid-size (conv 2048: 6.8 us), 512 with two tiles per warp for small
/// (grad_p 4096x512: 78.8 us).
using mma_tf32_large = mma_tf32_tuning<2, 4, 256, 4>;
using mma_tf32_mid = mma_tf32_tuning<1, 4, 128, 4>;
using mma_tf32_small = mma_tf32_tuning<2, 2, 128, 6>;

/// Thresholds of the shape choice and the split.
struct mma_tf32_dispatch {
  static constexpr std::int64_t large_from_out = 16384;
  static constexpr std::int64_t mid_from_out = 768;
  static constexpr int blocks_per_sm = 8;
  /// preferred (measured faster than every other variant, H200): full
  /// convolutions from this many outputs and taps
  static constexpr std::int64_t preferred_conv_out = 65536;
  static constexpr std::int64_t preferred_conv_taps = 16384;
};

enum class shape { small, mid, large };

shape shape_of(const correlation_view<float>& c) {
  if (c.lout >= mma_tf32_dispatch::large_from_out) return shape::large;
  if (c.lout >= mma_tf32_dispatch::mid_from_out) return shape::mid;
  return shape::small;
}

}  // namespace

// every float correlation: strides of any sign, broadcast operands and any
// lengths are handled while staging
bool mma_supports(const correlation_view<float>&) {
  return true;
}

// conv 65536: 223 us against 243 (large FMA tile). Not preferred elsewhere:
// grad_p 65536 284 against 261; conv 4096x512 153 against 128; conv 2048 6.8
// against 4.8; grad_p 4096x512 82.2 against 83.3 (mid FMA tile), a tie
// within run-to-run noise.
bool mma_preferred(const correlation_view<float>& c) {
  using d = mma_tf32_dispatch;
  return c.lead > 0 && c.lout >= d::preferred_conv_out && c.la >= d::preferred_conv_taps;
}

int mma_split(const correlation_view<float>& c) {
  const int sms = multiprocessors(), per = mma_tf32_dispatch::blocks_per_sm;
  switch (shape_of(c)) {
    case shape::large:
      return mma_tf32_split<mma_tf32_large>(c, sms, per);
    case shape::mid:
      return mma_tf32_split<mma_tf32_mid>(c, sms, per);
    case shape::small:
      break;
  }
  return mma_tf32_split<mma_tf32_small>(c, sms, per);
}

void launch_mma(const correlation_view<float>& c, int split, cudaStream_t stream) {
  switch (shape_of(c)) {
    case shape::large:
      return launch_mma_tf32<mma_tf32_large>(c, split, stream);
    case shape::mid:
      return launch_mma_tf32<mma_tf32_mid>(c, split, stream);
    case shape::small:
      break;
  }
  launch_mma_tf32<mma_tf32_small>(c, split, stream);
}

}  // namespace marg::detail::cuda
