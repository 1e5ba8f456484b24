// Device discovery and CUDA error reporting.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "../detail/banded.hpp"
#include "cuda_check.hpp"
#include "features.hpp"
#include "kernels/wgmma_tf32.cuh"
#include "stream.hpp"

#ifndef MARG_CUDA_ARCHITECTURES_BUILT
#define MARG_CUDA_ARCHITECTURES_BUILT "?"
#endif

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

// compiled for the same architectures as every kernel variant but the sm_90a
// objects: whether the runtime finds code of it for a device, and for which
// PTX architecture, holds for all of them
__global__ void kernel_probe() {}

std::string describe(int device, const cudaDeviceProp& p) {
  std::ostringstream s;
  s << "CUDA device " << device << " (" << p.name << ", compute capability " << p.major << '.'
    << p.minor << ')';
  return s.str();
}

std::string probe_devices() {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no usable CUDA device (") + cudaGetErrorName(e) + ": " +
           cudaGetErrorString(e) +
           (e == cudaErrorInsufficientDriver
                ? "; no NVIDIA driver, or one older than this build's CUDA runtime)"
                : ")");
  }
  if (count == 0) return "no CUDA device is visible";
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) current = 0;
  // one kernel-image probe per compute capability: the probe makes a
  // context on the device it asks, so devices of a capability already
  // probed are not touched
  std::vector<int> probed;
  std::string reason;
  for (int d = 0; d < count && reason.empty(); ++d) {
    cudaDeviceProp p{};
    if (const cudaError_t e = cudaGetDeviceProperties(&p, d); e != cudaSuccess) {
      reason = "CUDA device " + std::to_string(d) + ": " + cudaGetErrorString(e);
      break;
    }
    const int cc = p.major * 10 + p.minor;
    if (cc < min_capability) {
      reason = describe(d, p) +
               " is older than the CUDA backend supports (compute capability 7.5 or later)";
      break;
    }
    bool seen = false;
    for (const int q : probed) seen = seen || q == cc;
    if (seen) continue;
    probed.push_back(cc);
    cudaFuncAttributes a{};
    cudaError_t e = cudaSetDevice(d);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, kernel_probe);
    if (e != cudaSuccess)
      reason = describe(d, p) +
               ": this build of libmarg has no kernel code for it (built for CUDA "
               "architectures " MARG_CUDA_ARCHITECTURES_BUILT
               "; rebuild with "
               "-DCMAKE_CUDA_ARCHITECTURES=" +
               std::to_string(cc) + "): " + cudaGetErrorName(e);
  }
  (void)cudaGetLastError();
  (void)cudaSetDevice(current);
  return reason;
}
}  // namespace

bool generic_forced() noexcept {
  static const bool on = [] {
    const char* v = std::getenv("MARG_CUDA_GENERIC");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }();
  return on;
}

const char* unusable_reason() noexcept {
  static const std::string reason = [] {
    try {
      return probe_devices();
    } catch (...) {
      return std::string("probing the CUDA devices failed");
    }
  }();
  return reason.c_str();
}

const device_features& current_device_features() {
  static thread_local int cached_device = -1;
  static thread_local device_features f;
  // no driver call with one visible device: the dispatch asks on every launch
  const int dev = current_device_id();
  if (dev != cached_device) {
    int major = 0, minor = 0;
    MARG_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    MARG_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    // the PTX architecture the kernels run from: a build for sm_80 runs on
    // an sm_90 device from its compute_80 PTX, without the Hopper code
    cudaFuncAttributes a{};
    MARG_CUDA_TRY(cudaFuncGetAttributes(&a, kernel_probe));
    f.capability = major * 10 + minor;
    f.hopper = f.capability >= 90 && a.ptxVersion >= 90 && !generic_forced();
    f.ampere = f.capability >= 80 && a.ptxVersion >= 80;
    f.wgmma = f.hopper && wgmma_tf32_available(dev);
    MARG_CUDA_TRY(cudaDeviceGetAttribute(&f.multiprocessors, cudaDevAttrMultiProcessorCount, dev));
    MARG_CUDA_TRY(
        cudaDeviceGetAttribute(&f.max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    // clocks in kHz; the memory moves two words per clock over its bus
    int clock_khz = 0, memory_khz = 0, bus_bits = 0;
    MARG_CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    MARG_CUDA_TRY(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, dev));
    MARG_CUDA_TRY(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
    f.clock_mhz = clock_khz / 1000;
    f.bandwidth_gbs = static_cast<int>(2.0 * memory_khz * 1e3 * (bus_bits / 8) / 1e9);
    cached_device = dev;
  }
  return f;
}

void launch_invalid_for_testing() {
  // a zero-sized grid: cudaErrorInvalidConfiguration, which is not sticky
  kernel_nothing<<<0, 1>>>();
  MARG_CHECK_LAUNCH(nullptr);
}
}  // namespace marg::detail::cuda
