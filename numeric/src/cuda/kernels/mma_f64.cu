// Tensor-core variant of the batched correlation for double: FP64 tensor
// cores (DMMA: mma.sync m16n8k16 .f64 on sm_90, its steps as m8n8k4 on
// sm_80 and on Hopper GPUs run without their Hopper features) on the
// Toeplitz x Hankel form of kernels/mma_f64.cuh. Handles every correlation (strides, reversed and
// broadcast operands, any sizes and batches); the dispatch takes it where it
// is faster than the tiled and warp kernels (docs/kernel-notes.md).
#include "../cuda_check.hpp"
#include "../launch.hpp"
#include "mma_f64.cuh"

namespace marg::detail::cuda {
namespace {

/// Thresholds and tiles of the FP64 tensor-core variant, in one place.
struct mma_f64_dispatch {
  /// large problems: 1 x 4 warps, 4 tiles of 128 outputs per warp (TJ = 512),
  /// 512 values of s per stage, 4 blocks/SM (faster than the 2 x 4-warp
  /// TJ 1024 tile in the scratch tuner's runs, docs/kernel-notes.md)
  using big = mma_f64_tuning<16, 4, 1, 4, 512, 4>;
  /// problems of up to two 512-output tiles (batches of short problems):
  /// 2 x 2 warps, 2 tiles per warp (a TJ 1024 tile of 2 x 4 warps is half
  /// empty on rows of 512; docs/kernel-notes.md)
  using batched = mma_f64_tuning<16, 2, 2, 2, 256, 4>;
  static constexpr std::int64_t batched_max_out = 2 * batched::TJ;
  /// blocks per resident block slot the split aims for, the split rounded
  /// down to a power of two (clusters of 8 tile the GPCs worse than 4 and
  /// sum twice the partial tiles)
  static constexpr int waves = 2;
  /// the split of the big tile, single problems and batches: the cluster sum
  /// costs 64 taps, two blocks fill an SM, at most one wave of min_blocks
  /// blocks per SM, splits 3 and 6 too (a power of two is not needed: at
  /// 1010-1521 taps split 3 gives each block one stage, split 2 two). This model
  /// picks within a few percent of the best forced split, where the fill
  /// rule's powers of two miss often (docs/kernel-notes.md has the
  /// measurements).
  static constexpr tap_split_costs big_split{.sum_taps = 64,
                                             .resident_halves = 4,
                                             .max_blocks_per_sm = big::min_blocks,
                                             .powers_of_two = false};
  /// preferred from these outputs and taps per problem and this much work in
  /// all (below, the tiles win, and batches of short rows go to the warp
  /// kernel)
  static constexpr std::int64_t min_out = 512;
  static constexpr std::int64_t min_taps = 512;
  static constexpr std::int64_t min_work = std::int64_t{1} << 26;
  /// fewer than batch_wide_min problems of more than batched_max_out outputs
  /// and min_taps taps: preferred from few_min_macs multiply-adds on the band
  /// (band_macs) over all problems, at the split of big_split, where DMMA's
  /// throughput beats the tiles; below it the tiles and the wide kernel win.
  /// This takes in single problems of >= 2048 taps and 26-30 M multiply-adds
  /// too (docs/kernel-notes.md has the measurements).
  static constexpr std::int64_t few_min_macs = 24'000'000;
  /// single problems beyond long_from_out outputs, where DMMA outruns the
  /// large and mid tiles (below 16 taps or 262144 outputs the tiles win or
  /// tie): from long_min_taps
  /// taps, long_min_out outputs and long_min_work taps x outputs, or from
  /// long_mid_taps taps, long_mid_min_out outputs and long_mid_work, or from
  /// long_few_taps taps and long_few_min_out outputs
  static constexpr std::int64_t long_from_out = 32768;
  static constexpr std::int64_t long_min_taps = 256, long_min_out = 65536;
  static constexpr std::int64_t long_min_work = std::int64_t{1} << 25;
  static constexpr std::int64_t long_mid_taps = 192, long_mid_min_out = 100000;
  static constexpr std::int64_t long_mid_work = 19'000'000;
  static constexpr std::int64_t long_few_taps = 16, long_few_min_out = 262144;
  /// batches (at the split of mma_f64_split): from batch_min_taps taps with
  /// batch_min_work taps x outputs x problems in batches of batch_min, or
  /// batch_wide_work in batches of batch_wide_min; below that work the mid
  /// tile is faster. Not for gradients of at most batch_warp_taps taps from
  /// batch_warp_from problems, where warp or lane win, nor for gradients of
  /// fewer than batch_grad_min_out outputs, where warp wins.
  static constexpr std::int64_t batch_min_taps = 160;
  static constexpr std::int64_t batch_min = 128, batch_min_work = 6'000'000;
  static constexpr std::int64_t batch_wide_min = 64, batch_wide_work = 12'000'000;
  static constexpr std::int64_t batch_warp_taps = 256, batch_warp_from = 1024;
  static constexpr std::int64_t batch_grad_min_out = 128;
};

bool use_batched(const correlation_view<double>& c) {
  return c.lout <= mma_f64_dispatch::batched_max_out;
}

}  // namespace

bool mma_supports(const correlation_view<double>&, const device_features& dev) {
  // FP64 mma.sync: m8n8k4 from sm_80, m16n8k16 with the Hopper features
  return dev.hopper || dev.ampere;
}

bool mma_preferred(const correlation_view<double>& c, const device_features&) {
  using d = mma_f64_dispatch;
  if (c.batch == 1 && c.lout > d::long_from_out) {
    const std::int64_t la = c.la, lout = c.lout;
    if ((la >= d::long_min_taps && lout >= d::long_min_out && la * lout >= d::long_min_work) ||
        (la >= d::long_mid_taps && lout >= d::long_mid_min_out && la * lout >= d::long_mid_work) ||
        (la >= d::long_few_taps && lout >= d::long_few_min_out))
      return true;
  }
  const std::int64_t work = std::int64_t{c.lout} * c.la * c.batch;
  if (c.batch > 1 && c.la >= d::batch_min_taps &&
      ((c.batch >= d::batch_min && work >= d::batch_min_work) ||
       (c.batch >= d::batch_wide_min && work >= d::batch_wide_work)) &&
      !(c.lead == 0 && ((c.la <= d::batch_warp_taps && c.batch >= d::batch_warp_from) ||
                        c.lout < d::batch_grad_min_out)))
    return true;
  if (c.batch < d::batch_wide_min && c.lout > d::batched_max_out && c.la >= d::min_taps &&
      band_macs(c) * c.batch >= d::few_min_macs)
    return true;
  return c.lout >= d::min_out && c.la >= d::min_taps && work >= d::min_work;
}

int mma_split(const correlation_view<double>& c, const device_features& dev) {
  using d = mma_f64_dispatch;
  return use_batched(c) ? mma_f64_split<d::batched>(c, dev.multiprocessors, d::waves)
                        : mma_f64_split<d::big>(c, dev.multiprocessors, d::waves, &d::big_split);
}

tile_shape mma_tile(const correlation_view<double>& c) {
  return use_batched(c) ? tile_shape_of<mma_f64_dispatch::batched>()
                        : tile_shape_of<mma_f64_dispatch::big>();
}

void launch_mma(const correlation_view<double>& c, int split, cudaStream_t stream) {
  using d = mma_f64_dispatch;
  // sm_90's m16n8k16 where the Hopper features are used (the binary's sm_90
  // code runs there), else m8n8k4 steps
  const bool sm90 = current_device_features().hopper;
  if (use_batched(c))
    sm90 ? launch_mma_f64<d::batched>(c, split, stream)
         : launch_mma_f64<mma_f64_m8n8k4<d::batched>>(c, split, stream);
  else
    sm90 ? launch_mma_f64<d::big>(c, split, stream)
         : launch_mma_f64<mma_f64_m8n8k4<d::big>>(c, split, stream);
}

}  // namespace marg::detail::cuda
