// The private device memory pools behind device_scratch (see scratch.hpp).
#include "scratch.hpp"

#include <cstdint>
#include <limits>
#include <mutex>
#include <string>

#include <marg/numeric/error.hpp>

#include "cuda_check.hpp"
#include "stream.hpp"

namespace marg::detail::cuda {

cudaMemPool_t scratch_pool(int device) {
  static std::mutex mutex;
  static cudaMemPool_t pools[max_devices] = {};
  if (device < 0 || device >= max_devices) MARG_CUDA_TRY(cudaErrorInvalidDevice);
  const std::lock_guard<std::mutex> lock(mutex);
  if (pools[device] == nullptr) {
    // the first call may come inside a stream capture: creating a pool is
    // not stream work, so it runs in relaxed mode, which lets it through
    // without ending the capture
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    MARG_CUDA_TRY(cudaThreadExchangeStreamCaptureMode(&mode));
    struct restore {
      cudaStreamCaptureMode& m;
      ~restore() { (void)cudaThreadExchangeStreamCaptureMode(&m); }
    } const restore_mode{mode};
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    MARG_CUDA_TRY(cudaMemPoolCreate(&pool, &props));
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    MARG_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    pools[device] = pool;
  }
  return pools[device];
}

device_scratch::device_scratch(std::size_t bytes, int device, cudaStream_t stream)
    : stream_(stream) {
  if (bytes == 0) return;
  const cudaError_t status = cudaMallocFromPoolAsync(&ptr_, bytes, scratch_pool(device), stream);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it for the next call
    throw out_of_memory("marg: the device has no " + std::to_string(bytes) +
                        " bytes left for a call's temporaries (device " + std::to_string(device) +
                        ")");
  }
  MARG_CUDA_TRY(status);
}

device_scratch::~device_scratch() {
  if (ptr_ != nullptr) (void)cudaFreeAsync(ptr_, stream_);
}

}  // namespace marg::detail::cuda
