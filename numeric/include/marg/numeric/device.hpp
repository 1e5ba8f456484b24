/// @file device.hpp
/// @brief Which CUDA device a libmarg call runs on.
///
/// libmarg follows CUDA's convention (torch's too): a call runs on the
/// calling thread's current device (`cudaGetDevice`, set by `cudaSetDevice`,
/// `torch.cuda.set_device` or marg::set_device), unless an explicit stream
/// says otherwise: a call on a stream runs on the stream's device. Device
/// memory operands must live on that device (marg::invalid_argument names the
/// operand and both devices otherwise); managed memory, pool memory included,
/// is migrated to it. Each thread has one default libmarg stream per device,
/// and each device has its own pool (marg::pool_stats(int)).
#pragma once

namespace marg {

/// Makes `device` the calling thread's current CUDA device (`cudaSetDevice`):
/// later calls of this thread with the default stream run there.
/// @param device a device index in [0, marg::device_count())
/// @throws marg::invalid_argument when `device` is out of range (also when no
///         GPU is usable)
/// @throws marg::cuda_error when CUDA refuses
void set_device(int device);

/// @return the device that the calling thread's next call with the default
///         stream runs on (CUDA's current device), or -1 when no GPU is usable
///         (calls then run on the host)
/// @throws marg::cuda_error when CUDA cannot tell
int current_device();

namespace detail {
/// Makes `device` current for the calling thread for its lifetime and
/// restores the previous device afterwards; a no-op for a negative `device`,
/// without a usable GPU, or when `device` is current already.
class device_guard {
 public:
  /// @param device the device to make current, or -1 for none
  /// @throws marg::cuda_error when CUDA refuses
  explicit device_guard(int device);
  /// Restores the device current before (errors are ignored).
  ~device_guard();
  /// @cond
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;
  /// @endcond

 private:
  int previous_ = -1;
};
}  // namespace detail

}  // namespace marg
