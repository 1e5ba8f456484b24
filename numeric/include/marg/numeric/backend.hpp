/// @file backend.hpp
/// @brief Choice of the compute backend (CPU or CUDA) and of the CPU thread count.
#pragma once

namespace marg {

/// Where the numeric entry points run.
enum class backend {
  automatic,  ///< CUDA when the library was built with it and a GPU is usable
              ///< (cuda_unusable_reason() is empty), else CPU
  cpu,        ///< register tiles and Eigen block-Toeplitz products on host threads
  cuda        ///< the CUDA kernels
};

/// Selects the backend for all later calls (process-wide).
/// @param b the backend; backend::cuda throws marg::invalid_argument when the
///          library was built without CUDA or no GPU is usable (the message
///          gives cuda_unusable_reason())
void set_backend(backend b);

/// @return the backend that the next call runs on: backend::cpu or backend::cuda
///         (backend::automatic resolved)
backend current_backend();

/// @return the backend requested by set_backend (backend::automatic by default)
backend requested_backend();

/// @return the number of usable CUDA devices; 0 without CUDA, driver or GPU
int device_count();

/// @return true when this build of libmarg contains the CUDA backend
bool cuda_compiled() noexcept;

/// Why the CUDA backend cannot run here, if it cannot: the build has no CUDA
/// backend, no CUDA driver or device is visible, a visible device is older
/// than compute capability 7.5, or this build has no kernel code for a
/// visible device's architecture (the sentence names the device and the
/// architectures built). The devices are probed on the first call. When the
/// reason is not empty the automatic backend is the CPU (said once on
/// stderr when a device is present) and set_backend(backend::cuda) throws.
/// @return "" when the CUDA backend is usable, else the reason (static
///         storage, one sentence)
const char* cuda_unusable_reason() noexcept;

/// Sets the number of host threads the CPU backend may use.
/// @param threads 1 or more; the default is the hardware concurrency, or the
///        environment variable MARG_NUM_THREADS when set
void set_cpu_threads(int threads);

/// @return the number of host threads the CPU backend may use
int cpu_threads() noexcept;

}  // namespace marg
