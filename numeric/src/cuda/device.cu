// Device discovery and CUDA error reporting.
#include <cstdlib>
#include <sstream>

#include "../detail/banded.hpp"
#include "cuda_check.hpp"

namespace marg::detail::cuda {

void throw_cuda_error(const char* file, int line, cudaError_t status) {
  // clear a non-sticky error so that the next call starts clean
  (void)cudaGetLastError();
  std::ostringstream s;
  s << file << ':' << line << ": " << cudaGetErrorName(status) << ": "
    << cudaGetErrorString(status);
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
