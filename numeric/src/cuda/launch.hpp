// Kernel dispatch of the CUDA backend: picks the kernel variant by operation,
// size and batch and launches it. Not installed.
#pragma once

#include <cuda_runtime.h>

#include "../detail/banded.hpp"

namespace marg::detail::cuda {

/// Launches the banded product on `stream`. Every pointer in `x` must be
/// readable (inputs) or writable (output) by kernels: device or managed memory.
/// No synchronization.
template <class T>
void launch_banded(const banded_args<T>& x, cudaStream_t stream);

}  // namespace marg::detail::cuda
