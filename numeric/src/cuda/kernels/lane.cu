// Lane-per-problem variant of the batched correlation (kernels/lane.cuh):
// launch, shared-memory opt-in and the dispatch rule.
#include <algorithm>
#include <cstdint>

#include "../cuda_check.hpp"
#include "../launch.hpp"
#include "lane.cuh"

namespace marg::detail::cuda {
namespace {

/// Device facts the launch needs, cached per host thread and device.
struct lane_device {
  int device = -1;
  int max_smem = 0;  ///< opt-in shared memory per block, bytes
  bool opted_in[2] = {false, false};
};

lane_device& current_lane_device() {
  static thread_local lane_device d;
  int dev = 0;
  MARG_CUDA_TRY(cudaGetDevice(&dev));
  if (dev != d.device) {
    d = lane_device{};
    MARG_CUDA_TRY(
        cudaDeviceGetAttribute(&d.max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    d.device = dev;
  }
  return d;
}

/// Thresholds of the preference: batches from batch_min problems of at most
/// max_out outputs and max_taps taps.
struct lane_dispatch {
  static constexpr int batch_min = 2048;
  static constexpr int max_out = 256;
  static constexpr int max_taps = 128;
};

template <class T>
void launch_lane_t(const correlation_view<T>& c, cudaStream_t stream) {
  lane_device& d = current_lane_device();
  if (!lane_fits(c, d.max_smem))
    throw marg::invalid_argument("lane kernel: the problem does not fit its shared memory");
  bool& opted = d.opted_in[sizeof(T) == 8];
  if (!opted) {
    MARG_CUDA_TRY(cudaFuncSetAttribute(kernel_banded_lane<T>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, d.max_smem));
    opted = true;
  }
  const lane_shape s = lane_shape_of(c);
  const std::int64_t bytes = s.total() * static_cast<std::int64_t>(sizeof(T));
  // blocks resident per multiprocessor at this shared-memory size (cached
  // for the last size: batches repeat their shape)
  static thread_local std::int64_t last_bytes[2] = {-1, -1};
  static thread_local int last_device[2] = {-1, -1}, last_per_sm[2] = {0, 0};
  const int t = sizeof(T) == 8;
  if (last_bytes[t] != bytes || last_device[t] != d.device) {
    MARG_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &last_per_sm[t], kernel_banded_lane<T>, lane_tuning::threads,
        static_cast<std::size_t>(bytes)));
    last_bytes[t] = bytes;
    last_device[t] = d.device;
  }
  // as few groups per block as the resident blocks allow, spread evenly
  const std::int64_t slots =
      std::max<std::int64_t>(1, std::int64_t{multiprocessors()} * last_per_sm[t]);
  const std::int64_t per_block = (s.groups + slots - 1) / slots;
  const auto grid = static_cast<unsigned>((s.groups + per_block - 1) / per_block);
  launch_with(kernel_banded_lane<T>, dim3(grid), lane_tuning::threads, 1, true, c, stream,
              static_cast<std::size_t>(bytes));
}

template <class T>
bool lane_preferred_t(const correlation_view<T>& c) {
  using d = lane_dispatch;
  return c.batch >= d::batch_min && c.lout <= d::max_out && c.la <= d::max_taps &&
         lane_fits(c, current_lane_device().max_smem);
}

}  // namespace

bool lane_supports(const correlation_view<float>& c) {
  return lane_fits(c, current_lane_device().max_smem);
}
bool lane_supports(const correlation_view<double>& c) {
  return lane_fits(c, current_lane_device().max_smem);
}
bool lane_preferred(const correlation_view<float>& c) {
  return lane_preferred_t(c);
}
bool lane_preferred(const correlation_view<double>& c) {
  return lane_preferred_t(c);
}
void launch_lane(const correlation_view<float>& c, cudaStream_t stream) {
  launch_lane_t(c, stream);
}
void launch_lane(const correlation_view<double>& c, cudaStream_t stream) {
  launch_lane_t(c, stream);
}

}  // namespace marg::detail::cuda
