// Tensor-core variant of the batched correlation for float: 3xTF32 on
// mma.sync (kernels/mma_tf32.cuh), three block shapes chosen by outputs per
// problem.
#include <cstdint>

#include "../cuda_check.hpp"
#include "../launch.hpp"
#include "mma_tf32.cuh"

namespace marg::detail::cuda {
namespace {

/// Block shapes, the fastest candidates per size class (the scratch tuner's,
/// docs/kernel-notes.md): 1024 outputs per block with 256-tap
/// stages, X split once per stage and the second tap record of a k-step kept
/// from an earlier one for large problems and for batches that fit one tile;
/// 512 outputs with one tile per warp for mid-size; 512 with two tiles per
/// warp for small.
using mma_tf32_large = mma_tf32_tuning<2, 4, 256, 5, true, false, 16, true>;
/// Gradients (equal work per tile) from big_out outputs: four interleaved
/// tiles per warp, 3 blocks per SM (one X record load serves all four tiles;
/// faster than the large shape there).
using mma_tf32_grad = mma_tf32_tuning<4, 4, 256, 3, true, true, 16, true>;
using mma_tf32_mid = mma_tf32_tuning<1, 4, 128, 4>;
using mma_tf32_small = mma_tf32_tuning<2, 2, 128, 6>;

/// Thresholds of the shape choice, the split and the preference.
struct mma_tf32_dispatch {
  static constexpr std::int64_t large_from_out = 16384;
  static constexpr std::int64_t mid_from_out = 768;
  static constexpr std::int64_t one_tile_out = 1024;  ///< mid sizes up to here: one large tile
  static constexpr int blocks_per_sm = 8;
  /// batched convolutions aim at twice as many: their tiles' work is unequal
  /// (the band's triangles) and smaller parts even it out over the SMs
  /// (docs/kernel-notes.md)
  static constexpr int conv_batch_blocks_per_sm = 16;
  /// tap split of large tiles of equal work (gradients): 7, not 8, since 8
  /// clusters of 8 per GPC do not spread evenly over the multiprocessors at
  /// 5 blocks each
  static constexpr int equal_work_split = 7;
  /// preferred (faster than every other variant at these sizes): from this
  /// many outputs and taps ...
  static constexpr std::int64_t big_out = 65536;
  static constexpr std::int64_t big_taps = 16384;
  /// ... and batches of at least batch_min problems with outputs in
  /// [conv_out_lo, one_tile_out] and conv_taps taps (convolutions) or in
  /// [grad_out_lo, grad_out_hi] and batch_taps taps (gradients)
  static constexpr int batch_min = 1024;
  static constexpr std::int64_t batch_taps = 384;
  /// convolutions from conv_taps taps, where pairs does not fit its shared
  /// memory and the mid tile would take them otherwise: the tensor cores
  /// beat it there (docs/kernel-notes.md)
  static constexpr std::int64_t conv_taps = 256;
  static constexpr std::int64_t conv_out_lo = 768;
  static constexpr std::int64_t grad_out_lo = 384, grad_out_hi = 512;
  /// single problems of few_taps_lo-few_taps_hi taps from few_taps_min_out outputs
  static constexpr int few_taps_lo = 24, few_taps_hi = 192;
  static constexpr std::int64_t few_taps_min_out = 500'000;
};

enum class shape { small, mid, large, grad };

shape shape_of(const correlation_view<float>& c) {
  using d = mma_tf32_dispatch;
  if (c.lead == 0 && c.lout >= d::big_out) return shape::grad;
  if (c.lout >= d::large_from_out) return shape::large;
  if (c.lout >= d::mid_from_out) return c.lout <= d::one_tile_out ? shape::large : shape::mid;
  return shape::small;
}

}  // namespace

// every float correlation: strides of any sign, broadcast operands and any
// lengths are handled while staging
bool mma_supports(const correlation_view<float>&, const device_features& dev) {
  // TF32 mma.sync and cp.async are sm_80's
  return dev.ampere;
}

// Large problems, where 3xTF32 on tensor cores outruns the FMA tiles
// (docs/kernel-notes.md); not at 2048 outputs, where the FMA tiles are
// faster, nor for batches of small
// problems. Single problems of 24-192 taps from 500000 outputs: there the
// tensor cores beat the large tile (below 24
// taps, at 256 and at 262144 outputs the large tile wins or ties;
// docs/kernel-notes.md).
bool mma_preferred(const correlation_view<float>& c, const device_features&) {
  using d = mma_tf32_dispatch;
  if (c.batch == 1 && c.la >= d::few_taps_lo && c.la <= d::few_taps_hi &&
      c.lout >= d::few_taps_min_out)
    return true;
  if (c.lout >= d::big_out && c.la >= d::big_taps) return true;
  if (c.batch < d::batch_min) return false;
  if (c.la < (c.lead > 0 ? d::conv_taps : d::batch_taps)) return false;
  return c.lead > 0 ? c.lout >= d::conv_out_lo && c.lout <= d::one_tile_out
                    : c.lout >= d::grad_out_lo && c.lout <= d::grad_out_hi;
}

int mma_split(const correlation_view<float>& c, const device_features& dev) {
  using d = mma_tf32_dispatch;
  const int sms = dev.multiprocessors;
  const int per = c.batch > 1 && c.lead > 0 ? d::conv_batch_blocks_per_sm : d::blocks_per_sm;
  switch (shape_of(c)) {
    case shape::grad:
      return std::min(mma_tf32_split<mma_tf32_grad>(c, sms, per), d::equal_work_split);
    case shape::large: {
      const int split = mma_tf32_split<mma_tf32_large>(c, sms, per);
      return c.lead == 0 ? std::min(split, d::equal_work_split) : split;
    }
    case shape::mid:
      return mma_tf32_split<mma_tf32_mid>(c, sms, per);
    case shape::small:
      break;
  }
  return mma_tf32_split<mma_tf32_small>(c, sms, per);
}

tile_shape mma_tile(const correlation_view<float>& c) {
  switch (shape_of(c)) {
    case shape::grad:
      return tile_shape_of<mma_tf32_grad>();
    case shape::large:
      return tile_shape_of<mma_tf32_large>();
    case shape::mid:
      return tile_shape_of<mma_tf32_mid>();
    case shape::small:
      break;
  }
  return tile_shape_of<mma_tf32_small>();
}

void launch_mma(const correlation_view<float>& c, int split, cudaStream_t stream) {
  switch (shape_of(c)) {
    case shape::grad:
      return launch_mma_tf32<mma_tf32_grad>(c, split, stream);
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
