// MARG_CUDA_TRY and launch checks for the CUDA backend. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

#include <marg/numeric/error.hpp>

namespace marg::detail::cuda {

/// Throws marg::cuda_error with `file:line: cudaErrorName: message`.
[[noreturn]] void throw_cuda_error(const char* file, int line, cudaError_t status);

/// @return true when MARG_DEBUG_SYNC is set: synchronize after each launch
bool debug_sync() noexcept;

}  // namespace marg::detail::cuda

/// Evaluates a CUDA runtime call; throws marg::cuda_error when it fails.
#define MARG_CUDA_TRY(call)                                                     \
  do {                                                                          \
    const cudaError_t marg_status_ = (call);                                    \
    if (marg_status_ != cudaSuccess) [[unlikely]]                               \
      ::marg::detail::cuda::throw_cuda_error(__FILE__, __LINE__, marg_status_); \
  } while (0)

/// After a kernel launch: check the launch and, with MARG_DEBUG_SYNC, run it
/// to completion on `stream` so that a fault is reported here.
#define MARG_CHECK_LAUNCH(stream)                                                         \
  do {                                                                                    \
    MARG_CUDA_TRY(cudaPeekAtLastError());                                                 \
    if (::marg::detail::cuda::debug_sync()) MARG_CUDA_TRY(cudaStreamSynchronize(stream)); \
  } while (0)
