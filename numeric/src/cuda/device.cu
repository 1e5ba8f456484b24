// Device discovery and CUDA error reporting.
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "../detail/banded.hpp"
#include "cuda_check.hpp"

namespace marg::detail::cuda {

void throw_cuda_error(const char* file, int line, cudaError_t status) {
  // clear a non-sticky error so that the next call starts clean
  (void)cudaGetLastError();
  std::ostringstream s;
  const char* slash = std::strrchr(file, '/');  // the file name, not the build's path
  s << (slash != nullptr ? slash + 1 : file) << ':' << line << ": " << cudaGetErrorName(status)
    << ": " << cudaGetErrorString(status);
  throw marg::cuda_error(s.str());
}

bool debug_sync() noexcept {
  static const bool on = [] {
    const char* v = std::getenv("MARG_DEBUG_SYNC");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  return on;
}

int device_count() noexcept {
  int count = 0;
  // no driver, no device or CUDA_VISIBLE_DEVICES= all read as zero devices
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace marg::detail::cuda

namespace marg::detail::cuda {
namespace {
__global__ void kernel_nothing() {}
}  // namespace

void launch_invalid_for_testing() {
  // a zero-sized grid: cudaErrorInvalidConfiguration, which is not sticky
  kernel_nothing<<<0, 1>>>();
  MARG_CHECK_LAUNCH(nullptr);
}
}  // namespace marg::detail::cuda
