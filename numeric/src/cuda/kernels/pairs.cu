// Paired-block warp-per-problem variant of the batched correlation
// (kernels/pairs.cuh): launch, support and dispatch rules.
#include <algorithm>
#include <cstdint>

#include "../cuda_check.hpp"
#include "../launch.hpp"
#include "../stream.hpp"
#include "pairs.cuh"

namespace marg::detail::cuda {
namespace {

/// Shared memory a block may use without the opt-in.
constexpr std::int64_t pairs_max_smem = 48 * 1024;

/// Thresholds of the preference (float only): batches from batch_min
/// problems; full convolutions from conv_min_taps taps and conv_out_lo
/// outputs (at most 1024: supports), gradients from grad_out_lo outputs and
/// taps up to grad_max. There it beats the mma kernel and the large tile
/// (docs/kernel-notes.md has the measurements).
struct pairs_dispatch {
  /// from 512 problems (with fewer, the large tile wins; docs/kernel-notes.md)
  static constexpr int batch_min = 512;
  /// full convolutions from conv_min_taps taps and conv_out_lo outputs
  /// (below 160 taps at about 2 la outputs warp or the tiles win; lane
  /// takes the large batches first)
  static constexpr int conv_min_taps = 160;
  static constexpr int conv_out_lo = 319;
  // (convolutions of 32-256 taps and 319-1023 outputs are decided before
  // this by launch_banded.cu's cost model, conv_model)
  /// gradients of grad_out_lo..grad_max outputs and grad_min_taps..grad_max
  /// taps, where it beats the mid tile (docs/kernel-notes.md)
  static constexpr int grad_out_lo = 320;
  static constexpr int grad_min_taps = 256;
  static constexpr int grad_max = 512;
};

template <class T>
void launch_pairs_t(const correlation_view<T>& c, cudaStream_t stream) {
  if (!pairs_fits(c, pairs_max_smem))
    throw marg::invalid_argument("pairs kernel: the problem does not fit its shared memory");
  // the largest shared-memory carveout (the layout runs fastest with it); the
  // shared memory per block that keeps a (resident + 1)-th block off an SM
  static thread_local int carved_device = -1;
  static thread_local std::int64_t one_less = 0;
  // no driver call with one visible device: the dispatch asks on every launch
  const int dev = current_device_id();
  if (dev != carved_device) {
    MARG_CUDA_TRY(cudaFuncSetAttribute(kernel_banded_pairs<T>,
                                       cudaFuncAttributePreferredSharedMemoryCarveout,
                                       cudaSharedmemCarveoutMaxShared));
    int per_sm = 0, reserved = 0;
    MARG_CUDA_TRY(
        cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    MARG_CUDA_TRY(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
    one_less = per_sm / (pairs_tuning::resident + 1) - reserved + 16;
    carved_device = dev;
  }
  const pairs_layout y = pairs_layout_host(c);
  // rounds of problems per warp, then as few blocks as give every warp that
  // many (at most `resident` blocks on each SM), where the batch fills the
  // rounds (pairs_tuning::full_pct); else a block per W problems
  const std::int64_t need = (std::int64_t{c.batch} + pairs_tuning::W - 1) / pairs_tuning::W;
  const std::int64_t slots = std::int64_t{pairs_tuning::resident} * multiprocessors();
  const std::int64_t rounds = std::max<std::int64_t>(1, (need + slots - 1) / slots);
  const bool full = 100 * need >= pairs_tuning::full_pct * rounds * slots;
  const std::int64_t blocks = full ? (need + rounds - 1) / rounds : need;
  std::int64_t bytes = y.template bytes<T>();
  if (bytes < one_less && one_less <= pairs_max_smem) bytes = one_less;
  // early start: the kernel waits for the previous one before it touches
  // global memory
  launch_with({.grid = dim3(static_cast<unsigned>(blocks)),
               .threads = pairs_tuning::threads,
               .smem = static_cast<std::size_t>(bytes),
               .early_start = true},
              stream, kernel_banded_pairs<T>, c, y);
}

}  // namespace

// the paired blocks stage through cp.async (sm_80)
bool pairs_supports(const correlation_view<float>& c, const device_features& d) {
  return d.ampere && pairs_fits(c, pairs_max_smem);
}
bool pairs_supports(const correlation_view<double>& c, const device_features& d) {
  return d.ampere && pairs_fits(c, pairs_max_smem);
}
bool pairs_preferred(const correlation_view<float>& c, const device_features& dev) {
  using d = pairs_dispatch;
  if (c.batch < d::batch_min) return false;
  // the shape range first; the fit (the layout's shared memory) last:
  // every dispatch asks
  const bool shape = c.lead > 0 ? c.lout >= d::conv_out_lo && c.la >= d::conv_min_taps
                                : c.lout >= d::grad_out_lo && c.lout <= d::grad_max &&
                                      c.la >= d::grad_min_taps && c.la <= d::grad_max;
  return shape && pairs_supports(c, dev);
}
bool pairs_preferred(const correlation_view<double>&, const device_features&) {
  return false;
}
void launch_pairs(const correlation_view<float>& c, cudaStream_t stream) {
  launch_pairs_t(c, stream);
}
void launch_pairs(const correlation_view<double>& c, cudaStream_t stream) {
  launch_pairs_t(c, stream);
}

}  // namespace marg::detail::cuda
