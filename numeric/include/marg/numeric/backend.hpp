/// @file backend.hpp
/// @brief Choice of the compute backend (CPU or CUDA) and of the CPU thread count.
#pragma once

namespace marg {

/// Where the numeric entry points run.
enum class backend {
  automatic,  ///< CUDA when the library was built with it and a GPU is usable, else CPU
  cpu,        ///< register tiles and Eigen block-Toeplitz products on host threads
  cuda        ///< the CUDA kernels
};

/// Selects the backend for all later calls (process-wide).
/// @param b the backend; backend::cuda throws marg::invalid_argument when the
///          library was built without CUDA or no GPU is usable
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

/// Sets the number of host threads the CPU backend may use.
/// @param threads 1 or more; the default is the hardware concurrency, or the
///        environment variable MARG_NUM_THREADS when set
void set_cpu_threads(int threads);

/// @return the number of host threads the CPU backend may use
int cpu_threads() noexcept;

}  // namespace marg
