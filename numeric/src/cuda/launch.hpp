// Kernel dispatch of the CUDA backend: picks the kernel variant by operation,
// size and batch and launches it. Not installed.
#pragma once

#include <cuda_runtime.h>

#include "../detail/banded.hpp"
#include "kernels/correlation.cuh"

namespace marg::detail::cuda {

/// Launches the banded product on `stream`. Every pointer in `x` must be
/// readable (inputs) or writable (output) by kernels: device or managed memory.
/// No synchronization.
/// @param x the checked product
/// @param stream the stream every launch goes to
template <class T>
void launch_banded(const banded_args<T>& x, cudaStream_t stream);

/// Variants of the tiled direct kernel (tile sizes: kernels/tiled.cuh).
enum class tiled_variant { small, mid, large };

/// Launches one variant of the tiled kernel (explicitly instantiated in kernels/tiled.cu).
/// @param v the variant
/// @param c the correlation
/// @param split blocks that share the taps of one output tile (1..8, a cluster)
/// @param stream the stream
template <class T>
void launch_tiled_variant(tiled_variant v, const correlation_view<T>& c, int split,
                          cudaStream_t stream);

}  // namespace marg::detail::cuda
