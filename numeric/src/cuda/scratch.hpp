// Stream-ordered device scratch for the CUDA backend's temporaries. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace marg::detail::cuda {

/// The calling process's private device memory pool of `device`, created on
/// first use with no release threshold (freed blocks stay with the pool, so
/// a call's temporaries cost no driver mapping after the first). Separate
/// from CUDA's default pool so that libmarg never changes what other users
/// of that pool see.
/// @param device a device index
/// @return the pool
/// @throws marg::cuda_error
cudaMemPool_t scratch_pool(int device);

/// Device memory for one call's temporaries, allocated from scratch_pool and
/// freed in stream order: the kernels queued on the stream before the
/// destructor runs may still use it. Not managed memory: no prefetch, no
/// page migration, and not counted by the libmarg pool (set_pool_limit).
class device_scratch {
 public:
  /// @param bytes size in bytes (0 allocates nothing)
  /// @param device the device the stream belongs to
  /// @param stream the stream that orders the allocation and the free
  /// @throws marg::cuda_error; marg::out_of_memory when the device is full
  device_scratch(std::size_t bytes, int device, cudaStream_t stream);
  /// Frees in stream order (errors ignored).
  ~device_scratch();
  device_scratch(const device_scratch&) = delete;
  device_scratch& operator=(const device_scratch&) = delete;
  /// @return the first byte, aligned for any type
  void* data() const noexcept { return ptr_; }

 private:
  void* ptr_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace marg::detail::cuda
